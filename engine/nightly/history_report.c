/* SPDX-License-Identifier: MIT */
/*
 * history_report.c - `history report`: the trends of the nights of a
 * history (tracebook/nightly.h: tb_history_report; docs/nightly.md).
 *
 * The rows are read back from the history (opened by history.c) per
 * report, keyed as compare does (nightly/rowkey.c: the spec's key:,
 * normalize: and rules), and for each key and numeric column the nights are
 * set side by side. Each night is judged against the nights before it: the
 * median and the MAD (median absolute deviation) of up to `nights` earlier
 * values (8 by default, 3 at least). A change is a regression when, in the
 * worse direction, it passes the rule's relative and absolute thresholds
 * and `mad` (3) times the scaled MAD (1.4826 MAD, the standard deviation of
 * normal noise): a kernel that always jitters by 3% stays quiet under a 5%
 * rule, one that jitters by 20% needs a large step, and a steady 6% step is
 * found. Each verdict names the nights it used.
 *
 * Outputs: <report>_trend.csv (key, column, one column per night, the
 * newest night's baseline and verdict), <report>_trend_chart.csv (nights
 * down, the charted series across), history_verdicts.csv (every verdict
 * that fired), the workbook trend.xlsx (Summary = the verdicts, then per
 * report its trend sheet and its chart sheet with a line chart), the page
 * trend.html (the verdicts first, then per report a line chart per charted
 * key over the nights, a marker on each night a verdict fired, and the
 * charted values), and tracebook_run.json. A sheet and a page's table hold
 * exactly their CSV twin's rows.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "db/open.h"
#include "nightly/history_int.h"
#include "nightly/outdir.h"
#include "nightly/rowkey.h"
#include "output/output.h"
#include "output/table_sink.h"
#include "query/file_ids.h"
#include "report/manifest.h"
#include "spec/msprof_reports.h"
#include "spec/spec.h"
#include "tracebook/nightly.h"

#define MIN_NIGHTS 5     /* a verdict needs this many earlier nights */
#define CHART_SERIES 8   /* series of a trend chart */
#define MAD_SCALE 1.4826 /* MAD to the standard deviation of normal noise */

typedef struct night_t {
    int64_t id;
    char *label;
} night_t;

/* One report's trend: its rows keyed in a scratch DB, table kv(k0, k, night, ord, c0..cn). */
typedef struct trend {
    sqlite3 *hdb;           /* the history */
    sqlite3 *sdb;           /* scratch */
    const tb_history_report_job *job;
    const tb_spec_report *rep;
    night_t *nights;        /* all, oldest first */
    size_t n_nights;
    size_t first_shown;     /* nights[first_shown..] are shown */
    rk_table t;
    tb_error *err;
} trend;

static tb_status serr(trend *T, const char *what)
{
    return tb_error_set(T->err, TB_ERR_DB, "history report: %s: %s", what, sqlite3_errmsg(T->sdb));
}

/* The stored report of night k (its night_report id), or 0. */
static int64_t night_report(trend *T, size_t k)
{
    sqlite3_stmt *q = NULL;
    int64_t id = 0;
    if (sqlite3_prepare_v2(T->hdb, "SELECT id FROM night_report WHERE night = ? AND report = ? AND skipped IS NULL",
                           -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, T->nights[k].id);
        sqlite3_bind_text(q, 2, T->rep->id, -1, SQLITE_STATIC);
        if (sqlite3_step(q) == SQLITE_ROW)
            id = sqlite3_column_int64(q, 0);
    }
    sqlite3_finalize(q);
    return id;
}

/* The columns of the newest night that has the report, as the key's reference. */
static tb_status ref_columns(trend *T, int64_t rid)
{
    sqlite3_stmt *q = NULL;
    tb_sink_column *cols = NULL;
    char **strs = NULL;
    size_t n = 0, cap = 0;
    tb_status st = TB_OK;
    if (sqlite3_prepare_v2(T->hdb, "SELECT header, name, type FROM night_column WHERE report = ? ORDER BY col", -1, &q,
                           NULL) != SQLITE_OK)
        return tb_error_set(T->err, TB_ERR_DB, "history: %s", sqlite3_errmsg(T->hdb));
    sqlite3_bind_int64(q, 1, rid);
    while (!st && sqlite3_step(q) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            tb_sink_column *mc = realloc(cols, cap * sizeof *cols);
            if (mc)
                cols = mc;
            char **ms = mc ? realloc(strs, 2 * cap * sizeof *strs) : NULL;
            if (!ms) {
                st = tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
                break;
            }
            strs = ms;
        }
        strs[2 * n] = strdup((const char *)sqlite3_column_text(q, 0));
        strs[2 * n + 1] = strdup((const char *)sqlite3_column_text(q, 1));
        cols[n] = (tb_sink_column){.header = strs[2 * n], .name = strs[2 * n + 1],
                                   .type = history_type_of((const char *)sqlite3_column_text(q, 2))};
        n++;
        if (!strs[2 * n - 2] || !strs[2 * n - 1])
            st = tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
    }
    sqlite3_finalize(q);
    if (!st)
        st = rk_columns(&T->t, cols, n, T->err);
    for (size_t i = 0; i < 2 * n; i++)
        free(strs[i]);
    free(strs);
    free(cols);
    return st;
}

/* map[i]: the night's column (of its stored report rid) whose base name is
 * the reference's column i, or -1 (a column the night lacks is NULL). */
static tb_status night_map(trend *T, int64_t rid, int *map)
{
    size_t nc = T->t.n_cols;
    sqlite3_stmt *cq = NULL;
    for (size_t i = 0; i < nc; i++)
        map[i] = -1;
    if (sqlite3_prepare_v2(T->hdb, "SELECT col, name FROM night_column WHERE report = ?", -1, &cq, NULL) != SQLITE_OK) {
        sqlite3_finalize(cq);
        return tb_error_set(T->err, TB_ERR_DB, "history: %s", sqlite3_errmsg(T->hdb));
    }
    sqlite3_bind_int64(cq, 1, rid);
    while (sqlite3_step(cq) == SQLITE_ROW)
        for (size_t i = 0; i < nc; i++)
            if (map[i] < 0 && !strcmp(T->t.cols[i].name, (const char *)sqlite3_column_text(cq, 1)))
                map[i] = sqlite3_column_int(cq, 0);
    sqlite3_finalize(cq);
    return TB_OK;
}

/* One stored row into cells (by map): the cells of q from the current one
 * while their row lasts; *rc gets the step that ended it. Text cells point
 * into the statement, so they are copied into texts until the row is done. */
static void read_row(sqlite3_stmt *q, int *rc, const int *map, size_t nc, tb_cell *cells, char **texts)
{
    int64_t row = sqlite3_column_int64(q, 0);
    for (size_t i = 0; i < nc; i++)
        cells[i] = (tb_cell){.kind = TB_CELL_NULL};
    while (*rc == SQLITE_ROW && sqlite3_column_int64(q, 0) == row) {
        int col = sqlite3_column_int(q, 1);
        for (size_t i = 0; i < nc; i++)
            if (map[i] == col) {
                cells[i] = cell_from_column(q, 2);
                if (cells[i].kind == TB_CELL_TEXT) {
                    texts[i] = malloc(cells[i].n + 1);
                    if (texts[i]) {
                        memcpy(texts[i], cells[i].s, cells[i].n);
                        texts[i][cells[i].n] = 0;
                    }
                    cells[i].s = texts[i] ? texts[i] : "";
                    cells[i].n = texts[i] ? cells[i].n : 0;
                }
            }
        *rc = sqlite3_step(q);
    }
}

/* A row of night k into kv with its key (the first row decides the key when
 * not yet decided); ord is its place in the night. */
static tb_status store_row(trend *T, size_t k, const tb_cell *cells, int64_t ord, sqlite3_stmt *ins,
                           sqlite3_stmt *dup)
{
    size_t nc = T->t.n_cols;
    tb_status st = TB_OK;
    if (!T->t.decided)
        st = rk_decide(&T->t, cells, T->err);
    if (!st)
        st = rk_key(&T->t, cells, 0, T->err);
    if (st)
        return st;
    const char *k0 = T->t.keybuf;
    sqlite3_bind_int64(dup, 1, (int64_t)k);
    sqlite3_bind_text(dup, 2, k0, -1, SQLITE_TRANSIENT);
    int64_t seen = sqlite3_step(dup) == SQLITE_ROW ? sqlite3_column_int64(dup, 0) : 0;
    sqlite3_reset(dup);
    sqlite3_bind_text(ins, 1, k0, -1, SQLITE_TRANSIENT);
    if (seen)
        sqlite3_bind_text(ins, 2, sqlite3_mprintf("%s\x1f#%lld", k0, (long long)seen + 1), -1, sqlite3_free);
    else
        sqlite3_bind_text(ins, 2, k0, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(ins, 3, (int64_t)k);
    sqlite3_bind_int64(ins, 4, ord);
    for (size_t i = 0; i < nc; i++) {
        const tb_cell *x = &cells[i];
        int p = (int)i + 5;
        if (x->kind == TB_CELL_INT)
            sqlite3_bind_int64(ins, p, x->i);
        else if (x->kind == TB_CELL_REAL)
            sqlite3_bind_double(ins, p, x->d);
        else if (x->kind == TB_CELL_TEXT)
            sqlite3_bind_text(ins, p, x->s, (int)x->n, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(ins, p);
    }
    if (sqlite3_step(ins) != SQLITE_DONE)
        st = serr(T, "insert");
    sqlite3_reset(ins);
    sqlite3_clear_bindings(ins);
    return st;
}

/* Reads night k's rows of the report into kv, keyed; the first row decides the key when not yet decided. */
static tb_status load_night(trend *T, size_t k, int64_t rid, sqlite3_stmt *ins, sqlite3_stmt *dup)
{
    size_t nc = T->t.n_cols;
    int *map = calloc(nc + 1, sizeof *map);
    tb_cell *cells = calloc(nc + 1, sizeof *cells);
    sqlite3_stmt *q = NULL;
    tb_status st = TB_OK;
    if (!map || !cells) {
        st = tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = night_map(T, rid, map)))
        goto done;
    if (sqlite3_prepare_v2(T->hdb, "SELECT row, col, value FROM night_cell WHERE report = ? ORDER BY row, col", -1,
                           &q, NULL) != SQLITE_OK) {
        st = tb_error_set(T->err, TB_ERR_DB, "history: %s", sqlite3_errmsg(T->hdb));
        goto done;
    }
    sqlite3_bind_int64(q, 1, rid);
    /* cells arrive by row; a row is complete when the next row starts */
    int rc = sqlite3_step(q);
    int64_t ord = 0;
    while (!st && rc == SQLITE_ROW) {
        char **texts = calloc(nc + 1, sizeof *texts);
        if (!texts) {
            st = tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
            break;
        }
        read_row(q, &rc, map, nc, cells, texts);
        st = store_row(T, k, cells, ord++, ins, dup);
        for (size_t i = 0; i < nc; i++)
            free(texts[i]);
        free(texts);
    }
done:
    sqlite3_finalize(q);
    free(map);
    free(cells);
    return st;
}

/* ---- verdicts ---- */

typedef struct verdict {
    int dir;            /* 1 regression, -1 improvement, 0 neither, 2 too few earlier nights, 3 no value */
    double value, median, mad, delta, ratio;
    size_t n_used;
    size_t *used;       /* night indexes (caller's array of n_nights) */
} verdict;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Night j of a series (vals over all nights in stored units, ns for time
 * columns, NAN = absent; counts: the row's Count per night or NULL) under
 * rule r, for a column of this type written in unit. scratch holds n doubles.
 */
static void judge_night(const tb_spec_rule *r, tb_col_type type, tb_time_unit unit, const double *vals,
                        const double *counts, size_t j, double *scratch, verdict *v)
{
    v->dir = 3;
    v->n_used = 0;
    v->value = vals[j];
    if (isnan(vals[j]))
        return;
    size_t n = 0;
    int64_t want = r->nights > 0 ? r->nights : TB_RULE_NIGHTS;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = j; i-- > 0 && (int64_t)n < want;)
        if (!isnan(vals[i])) {
            v->used[n] = i;
            lo = vals[i] < lo ? vals[i] : lo;
            hi = vals[i] > hi ? vals[i] : hi;
            scratch[n++] = vals[i];
        }
    v->n_used = n;
    if (n < MIN_NIGHTS) {
        v->dir = 2;
        return;
    }
    v->median = median_of(scratch, n);
    for (size_t i = 0; i < n; i++)
        scratch[i] = fabs(scratch[i] - v->median);
    v->mad = median_of(scratch, n);
    v->delta = vals[j] - v->median;
    v->ratio = v->median != 0 ? vals[j] / v->median : NAN;
    v->dir = 0;
    if (counts && r->min_count > 0 && !(counts[j] >= (double)r->min_count))
        return;
    /* compare's thresholds from the median instead of one base night; the
     * values are in ns where the rule's absolute may be in the written unit */
    tb_spec_rule rr = *r;
    if (!rr.abs_time && type == TB_COL_DUR_NS)
        rr.abs *= rk_pow10((int)unit);
    /* worse than every night judged against by the rule's thresholds, and
     * further from their median than mad scaled MADs: a kernel whose nights
     * jitter within a band is not flagged for landing at its edge */
    double worse_edge = r->worse_lower ? lo : hi, better_edge = r->worse_lower ? hi : lo;
    int d = rk_judge(&rr, type, TB_UNIT_NS, worse_edge, vals[j]) == 1       ? 1
            : rk_judge(&rr, type, TB_UNIT_NS, better_edge, vals[j]) == -1 ? -1
                                                                           : 0;
    if (d && fabs(v->delta) > r->mad * MAD_SCALE * v->mad)
        v->dir = d;
}

/* ---- writing ---- */

typedef struct outset {
    tb_sink *s[4];  /* csv, json, the sheet, the page's section */
    size_t n;
    size_t sheet;   /* the sheet's place plus one, or 0 */
} outset;

static tb_status out_begin(outset *o, const tb_sink_column *cols, size_t n, tb_error *err)
{
    tb_status st = TB_OK;
    for (size_t k = 0; k < o->n && !st; k++)
        st = o->s[k]->begin(o->s[k], cols, n, err);
    return st;
}

static tb_status out_row(outset *o, const tb_cell *cells, tb_error *err)
{
    tb_status st = TB_OK;
    for (size_t k = 0; k < o->n && !st; k++)
        st = o->s[k]->row(o->s[k], cells, err);
    return st;
}

/* Finishes the sinks, lists their files in files (a JSON array) and tells job->written. */
static tb_status out_finish(outset *o, const tb_history_report_job *job, json_t *files, json_t *sheets, tb_error *err)
{
    tb_status st = TB_OK;
    for (size_t k = 0; k < o->n && !st; k++)
        st = o->s[k]->finish(o->s[k], err);
    for (size_t k = 0; k < o->n && !st; k++) {
        const char *const *paths;
        size_t n = sink_written(o->s[k], &paths);
        for (size_t i = 0; i < n; i++) {
            const char *b = strrchr(paths[i], '/');
            json_array_append_new(files, json_string(b ? b + 1 : paths[i]));
            if (job->written)
                job->written(job->ctx, paths[i]);
        }
        const char *sheet = k + 1 == o->sheet ? xlsx_sink_sheet(o->s[k], 0) : NULL;
        if (sheet && sheets)
            json_array_append_new(sheets, json_string(sheet));
    }
    return st;
}

static void out_free(outset *o)
{
    for (size_t k = 0; k < o->n; k++)
        sink_destroy(o->s[k]);
    o->n = 0;
}

static unsigned formats_of(const tb_history_report_job *job, const tb_spec_report *rep)
{
    if (job->formats)
        return job->formats & (TB_OUT_CSV | TB_OUT_JSON | TB_OUT_XLSX | TB_OUT_HTML);
    unsigned asked = rep && rep->outputs ? rep->outputs : job->spec->outputs;
    return TB_OUT_CSV | TB_OUT_XLSX | TB_OUT_HTML | (asked & TB_OUT_JSON);
}

/* Opens the CSV/JSON files <dir>/<stem>.csv|json, the sheet named sheet and
 * the page's section ho (when given), as formats say. */
static tb_status out_open(outset *o, const tb_history_report_job *job, unsigned f, const char *stem, xlsx_book *book,
                          const xlsx_sheet_options *so, html_page *page, const html_section_options *ho,
                          tb_error *err)
{
    tb_status st = TB_OK;
    o->n = o->sheet = 0;
    static const unsigned fmts[] = {TB_OUT_CSV, TB_OUT_JSON};
    static const char *const ext[] = {"csv", "json"};
    for (int k = 0; k < 2 && !st; k++) {
        if (!(f & fmts[k]))
            continue;
        char *path = sqlite3_mprintf("%s/%s.%s", job->out_dir, stem, ext[k]);
        if (!path)
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        st = k == 0 ? csv_sink_create(path, &(csv_sink_options){.formula_safe = job->csv_safe}, &o->s[o->n], err)
                    : json_sink_create(path, NULL, &o->s[o->n], err);
        sqlite3_free(path);
        if (!st)
            o->n++;
    }
    if (!st && book && (f & TB_OUT_XLSX) && !(st = xlsx_sheet_sink(book, so, &o->s[o->n], err)))
        o->sheet = ++o->n;
    if (!st && page && ho && (f & TB_OUT_HTML) && !(st = html_section_sink(page, ho, &o->s[o->n], err)))
        o->n++;
    return st;
}

/*
 * A value of column col as written in the report's unit. Time columns are
 * kept in ns: a whole (or half) ns count is written exactly, scaled, so that
 * 18277556 ns is 18277.556 us and not the nearest double's 18277.555999...
 */
static tb_cell val_cell(const trend *T, size_t col, double v)
{
    tb_col_type ty = T->t.cols[col].type;
    if (isnan(v))
        return (tb_cell){.kind = TB_CELL_NULL};
    if (ty != TB_COL_DUR_NS && ty != TB_COL_TS_NS)
        return (tb_cell){.kind = TB_CELL_REAL, .d = v};
    int unit = (int)T->job->unit;
    if (fabs(v) < 4e15 && v == floor(v))
        return (tb_cell){.kind = TB_CELL_INT, .i = (int64_t)v, .scale = unit};
    if (fabs(v) < 4e14 && 2 * v == floor(2 * v) && unit < 9)
        return (tb_cell){.kind = TB_CELL_INT, .i = (int64_t)(v * 10), .scale = unit + 1};
    return (tb_cell){.kind = TB_CELL_REAL, .d = v / rk_pow10(unit)};
}

/* The same value as a double in the report's unit (for the JSON record). */
static double in_unit(const trend *T, size_t col, double v)
{
    tb_col_type ty = T->t.cols[col].type;
    /* to the ns (a median of two nights may fall between), then in the unit */
    return ty == TB_COL_DUR_NS || ty == TB_COL_TS_NS ? round(v) / rk_pow10((int)T->job->unit) : v;
}

/* The header of column i in the report's unit: "Total Time(ns)" becomes "Total Time(us)". */
static char *unit_header(const trend *T, size_t i)
{
    const rk_col *c = &T->t.cols[i];
    size_t n = strlen(c->header);
    if ((c->type == TB_COL_DUR_NS || c->type == TB_COL_TS_NS) && n >= 4 && !strcmp(c->header + n - 4, "(ns)"))
        return sqlite3_mprintf("%.*s(%s)", (int)(n - 4), c->header, tb_unit_name(T->job->unit));
    return sqlite3_mprintf("%s", c->header);
}

/* A number cell: NAN is empty. */
static tb_cell num_cell(double d)
{
    return isnan(d) ? (tb_cell){.kind = TB_CELL_NULL} : (tb_cell){.kind = TB_CELL_REAL, .d = d};
}

static const char *verdict_name(int dir)
{
    switch (dir) {
    case 1: return "regression";
    case -1: return "improvement";
    case 2: return "too few nights";
    default: return "";
    }
}

/* One chart candidate: a key's values of the chart column over the shown nights. */
typedef struct series {
    char *name;
    double *v;
    double latest;
} series;

static int cmp_series(const void *a, const void *b)
{
    const series *x = a, *y = b;
    double p = isnan(x->latest) ? -INFINITY : x->latest, q = isnan(y->latest) ? -INFINITY : y->latest;
    return p > q ? -1 : p < q;
}

/* The column charted across keys: the first rule's, else the first time column, else the first numeric one. */
static int chart_column(const trend *T)
{
    for (size_t j = 0; j < T->t.n_rules; j++)
        for (size_t i = 0; i < T->t.n_cols; i++)
            if (T->t.cols[i].rule == (int)j + 1)
                return (int)i;
    for (size_t i = 0; i < T->t.n_cols; i++)
        if (T->t.cols[i].numeric && T->t.cols[i].type == TB_COL_DUR_NS)
            return (int)i;
    for (size_t i = 0; i < T->t.n_cols; i++)
        if (T->t.cols[i].numeric && (int)i != T->t.count_col)
            return (int)i;
    return -1;
}

/* The key of a kv row as the user reads it: its key cells joined by " | " (cells from column 4 on). */
static char *shown_key(const trend *T, sqlite3_stmt *q, int first)
{
    char *s = sqlite3_mprintf("");
    for (size_t i = 0; s && i < T->t.n_cols; i++) {
        if (!T->t.cols[i].key)
            continue;
        const char *t = (const char *)sqlite3_column_text(q, first + (int)i);
        if (!t || !*t)
            continue;
        char *more = sqlite3_mprintf("%s%s%s", s, *s ? " | " : "", t);
        sqlite3_free(s);
        s = more;
    }
    return s;
}

/* The nights' labels of a verdict, space-separated, oldest first. */
static char *used_labels(const trend *T, const verdict *v)
{
    char *s = sqlite3_mprintf("");
    for (size_t i = v->n_used; s && i-- > 0;) {
        char *more = sqlite3_mprintf("%s%s%s", s, *s ? " " : "", T->nights[v->used[i]].label);
        sqlite3_free(s);
        s = more;
    }
    return s;
}

typedef struct repctx {
    xlsx_book *book;
    html_page *page;
    sqlite3_stmt *verd;   /* INSERT INTO verd */
    json_t *entry;
    tb_history_result *res;
} repctx;

/*
 * The verdicts' markers of the charted series over the shown nights, for the
 * page: (*marks)[i * shown + j] is "regression", "improvement" or NULL for
 * series i on shown night j (new: free). A series is a key's value of
 * column col, or (by_column) column sv[i].name of the one key key.
 */
static tb_status chart_marks(trend *T, repctx *R, const series *sv, size_t n_series, const char *col,
                             const char *key, const char ***marks)
{
    size_t shown = T->n_nights - T->first_shown;
    sqlite3_stmt *q = NULL;
    if (!(*marks = calloc(n_series * shown + 1, sizeof **marks)))
        return tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
    if (sqlite3_prepare_v2(sqlite3_db_handle(R->verd),
                           "SELECT night, dir FROM verd WHERE report = ?1 AND col = ?2 AND key = ?3", -1, &q,
                           NULL) != SQLITE_OK)
        return tb_error_set(T->err, TB_ERR_DB, "history report: %s", sqlite3_errmsg(sqlite3_db_handle(R->verd)));
    for (size_t i = 0; i < n_series; i++) {
        sqlite3_bind_text(q, 1, T->rep->id, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, key ? sv[i].name : col, -1, SQLITE_STATIC);
        /* a series of an empty key is named after its column */
        sqlite3_bind_text(q, 3, key ? key : !strcmp(sv[i].name, col) ? "" : sv[i].name, -1, SQLITE_STATIC);
        while (sqlite3_step(q) == SQLITE_ROW) {
            int64_t j = sqlite3_column_int64(q, 0) - (int64_t)T->first_shown;
            if (j >= 0 && (size_t)j < shown)
                (*marks)[i * shown + (size_t)j] = sqlite3_column_int(q, 1) == 1 ? "regression" : "improvement";
        }
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return TB_OK;
}

/* Writes the chart files of the report: nights down, up to CHART_SERIES series across.
 * key: the one key whose time columns are the series, or NULL (the series are keys of column col). */
static tb_status write_chart(trend *T, repctx *R, series *sv, size_t n_series, const char *what, const char *col,
                             const char *key, json_t *files, json_t *sheets)
{
    const tb_history_report_job *job = T->job;
    size_t shown = T->n_nights - T->first_shown;
    tb_status st = TB_OK;
    if (n_series > CHART_SERIES)
        n_series = CHART_SERIES;
    if (!n_series)
        return TB_OK;
    tb_sink_column *cols = calloc(n_series + 1, sizeof *cols);
    const char **names = calloc(n_series + 1, sizeof *names);
    tb_cell *cells = calloc(n_series + 1, sizeof *cells);
    char **uniq = calloc(n_series + 1, sizeof *uniq);
    outset o = {0};
    char *stem = sqlite3_mprintf("%s_trend_chart", T->rep->id);
    char *sheet = sqlite3_mprintf("%s chart", T->rep->xlsx_sheet ? T->rep->xlsx_sheet : T->rep->title);
    char *desc = key ? sqlite3_mprintf("Each time column of the report's one row over the nights; a marker on each "
                                       "night a verdict fired; every column: %s_trend.csv", T->rep->id)
                     : sqlite3_mprintf("%s over the nights, a chart per key (the %lld largest on the newest night); "
                                       "a marker on each night a verdict fired; every key and column: %s_trend.csv",
                                       what, (long long)n_series, T->rep->id);
    const char **marks = NULL;
    if (!cols || !names || !cells || !uniq || !stem || !sheet || !desc) {
        st = tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    cols[0] = (tb_sink_column){.header = "Night"};
    for (size_t i = 0; i < n_series && !st; i++) {
        /* series names are column names: made unique */
        int dupn = 1;
        for (size_t j = 0; j < i; j++)
            dupn += !strcmp(sv[i].name, sv[j].name);
        uniq[i] = dupn > 1 ? sqlite3_mprintf("%s (%d)", sv[i].name, dupn) : sqlite3_mprintf("%s", sv[i].name);
        if (!uniq[i]) {
            st = tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
            break;
        }
        cols[i + 1] = (tb_sink_column){.header = uniq[i], .name = uniq[i]};
        names[i] = uniq[i];
    }
    if (st)
        goto done;
    xlsx_sheet_options so = {.name = sheet,
                             .chart = {.kind = XLSX_CHART_LINE, .categories = "Night", .values = names,
                                       .n_values = n_series}};
    char full[300];
    snprintf(full, sizeof full, "%.250s_trend_chart.csv", T->rep->id);
    unsigned f = formats_of(job, T->rep);
    if (R->page && (f & TB_OUT_HTML) && (st = chart_marks(T, R, sv, n_series, col, key, &marks)))
        goto done;
    html_section_options ho = {.title = T->rep->title ? T->rep->title : T->rep->id, .description = desc,
                               .chart = so.chart, .chart_each = 1, .marks = marks, .mark_class = marks,
                               .n_mark_rows = shown, .full_file = (f & TB_OUT_CSV) ? full : NULL,
                               .value_label = key ? NULL : col,
                               .name = T->rep->id};
    if ((st = out_open(&o, job, f, stem, R->book, &so, R->page, &ho, T->err)) ||
        (st = out_begin(&o, cols, n_series + 1, T->err)))
        goto done;
    for (size_t j = 0; j < shown && !st; j++) {
        const char *lab = T->nights[T->first_shown + j].label;
        cells[0] = (tb_cell){.kind = TB_CELL_TEXT, .s = lab, .n = strlen(lab)};
        for (size_t i = 0; i < n_series; i++)
            cells[i + 1] = num_cell(sv[i].v[j]);
        st = out_row(&o, cells, T->err);
    }
    if (!st)
        st = out_finish(&o, job, files, sheets, T->err);
    if (!st) {
        json_t *c = json_object(), *a = json_array();
        for (size_t i = 0; i < n_series; i++)
            json_array_append_new(a, json_string(uniq[i]));
        json_object_set_new(c, "of", json_string(what));
        json_object_set_new(c, "series", a);
        json_object_set_new(R->entry, "chart", c);
    }
done:
    out_free(&o);
    for (size_t i = 0; uniq && i < n_series; i++)
        sqlite3_free(uniq[i]);
    free(uniq);
    free(cols);
    free(names);
    free(cells);
    sqlite3_free(stem);
    sqlite3_free(sheet);
    sqlite3_free(desc);
    free(marks);
    return st;
}

/* The working state of one report's trend, shared by trend_report's steps. */
typedef struct tstate {
    trend *T;
    repctx *R;
    int64_t *rids;           /* night k's stored report, or 0 */
    sqlite3_stmt *ins, *dup; /* into kv; a key's count in a night */
    sqlite3_stmt *keys, *ser;/* the keys, newest night first; a key's rows by night */
    outset o;                /* the trend table's sinks */
    xlsx_cond conds[2];      /* its sheet's (read until the sheet is finished) */
    tb_sink_column *cols;    /* the trend table's columns */
    char **heads;
    size_t n_heads, n_out;
    tb_cell *cells;
    double *vals, *counts, *scratch; /* a key's values per column and night, its counts, judge_night's room */
    size_t *used;
    series *sv;              /* chart candidates */
    size_t n_sv, cap_sv, n_keys;
    uint64_t rows;
    int cc;                  /* the chart column, or -1 */
    char *last_key;          /* the last key written, as shown */
    json_t *files, *sheets;
} tstate;

/* head, then ", " and each column c0..c<nc-1> (or ? with marks), then tail (new: sqlite3_free). */
static char *kv_sql(const char *head, size_t nc, int marks, const char *tail)
{
    sqlite3_str *q = sqlite3_str_new(NULL);
    sqlite3_str_appendall(q, head);
    for (size_t i = 0; i < nc; i++) {
        if (marks)
            sqlite3_str_appendall(q, ", ?");
        else
            sqlite3_str_appendf(q, ", c%lld", (long long)i);
    }
    sqlite3_str_appendall(q, tail);
    return sqlite3_str_finish(q);
}

/* Prepares sql (NULL: out of memory) on the scratch DB into *q; frees sql. */
static tb_status prepare_scratch(trend *T, char *sql, sqlite3_stmt **q)
{
    tb_status st = TB_OK;
    if (!sql || sqlite3_prepare_v2(T->sdb, sql, -1, q, NULL) != SQLITE_OK)
        st = sql ? serr(T, "prepare") : tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
    sqlite3_free(sql);
    return st;
}

/* S->rids: each night's stored report; *ref the newest one's. Returns the nights that have it. */
static size_t find_nights(tstate *S, int64_t *ref)
{
    size_t have = 0;
    for (size_t k = 0; k < S->T->n_nights; k++)
        if ((S->rids[k] = night_report(S->T, k))) {
            have++;
            *ref = S->rids[k];
        }
    return have;
}

/* kv: every night's rows with their key; its insert and its count of a key in a night. */
static tb_status make_kv(tstate *S)
{
    trend *T = S->T;
    size_t nc = T->t.n_cols;
    char *m = kv_sql("DROP TABLE IF EXISTS kv; CREATE TABLE kv(k0 TEXT, k TEXT, night INTEGER, ord INTEGER", nc, 0,
                     "); CREATE INDEX kv_n ON kv(night, k0); CREATE INDEX kv_k ON kv(k, night)");
    if (!m)
        return tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
    tb_status st = history_run_sql(T->sdb, "history report scratch", m, T->err);
    sqlite3_free(m);
    if (!st)
        st = prepare_scratch(T, kv_sql("INSERT INTO kv VALUES(?, ?, ?, ?", nc, 1, ")"), &S->ins);
    if (!st)
        st = prepare_scratch(T, sqlite3_mprintf("SELECT count(*) FROM kv WHERE night = ? AND k0 = ?"), &S->dup);
    return st;
}

/* Every night's rows of the report into kv, in one transaction; the key decided. */
static tb_status load_nights(tstate *S)
{
    trend *T = S->T;
    tb_status st = history_run_sql(T->sdb, "history report scratch", "BEGIN", T->err);
    for (size_t k = 0; k < T->n_nights && !st; k++)
        if (S->rids[k])
            st = load_night(T, k, S->rids[k], S->ins, S->dup);
    if (!st)
        st = history_run_sql(T->sdb, "history report scratch", "COMMIT", T->err);
    if (!st && !T->t.decided)
        st = rk_decide(&T->t, NULL, T->err);
    return st;
}

/* The table's columns: key columns, Column, one per shown night, the newest
 * night's baseline and verdict; and the room a key's values take. */
static tb_status trend_columns(tstate *S)
{
    trend *T = S->T;
    size_t nc = T->t.n_cols, N = T->n_nights, shown = N - T->first_shown;
    size_t n_key = 0;
    for (size_t i = 0; i < nc; i++)
        n_key += T->t.cols[i].key;
    S->n_out = n_key + 1 + shown + 5;
    S->cols = calloc(S->n_out, sizeof *S->cols);
    S->heads = calloc(S->n_out, sizeof *S->heads);
    S->cells = calloc(S->n_out, sizeof *S->cells);
    S->vals = calloc((nc + 1) * N + 1, sizeof *S->vals);
    S->counts = calloc(N + 1, sizeof *S->counts);
    S->scratch = calloc(N + 1, sizeof *S->scratch);
    S->used = calloc(N + 1, sizeof *S->used);
    if (!S->cols || !S->heads || !S->cells || !S->vals || !S->counts || !S->scratch || !S->used)
        return tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
    size_t c = 0;
    for (size_t i = 0; i < nc; i++)
        if (T->t.cols[i].key) {
            S->heads[S->n_heads++] = sqlite3_mprintf("%s", T->t.cols[i].header);
            S->cols[c++] = (tb_sink_column){.header = S->heads[S->n_heads - 1], .name = T->t.cols[i].name};
        }
    S->cols[c++] = (tb_sink_column){.header = "Column"};
    for (size_t j = 0; j < shown; j++)
        S->cols[c++] = (tb_sink_column){.header = T->nights[T->first_shown + j].label};
    static const char *const tail[] = {"Baseline Median", "Baseline MAD", "Ratio", "Verdict", "Baseline Nights"};
    for (size_t i = 0; i < 5; i++)
        S->cols[c++] = (tb_sink_column){.header = tail[i]};
    for (size_t i = 0; i < S->n_heads; i++)
        if (!S->heads[i])
            return tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
    return TB_OK;
}

/* The trend table's outputs, begun; its sheet's Ratio red past the first
 * rule's threshold in the worse direction, green in the better. */
static tb_status open_trend(tstate *S)
{
    trend *T = S->T;
    xlsx_cond *conds = S->conds;
    size_t n_conds = 0;
    if (T->t.n_rules) {
        const tb_spec_rule *r = &T->t.rules[0];
        conds[n_conds++] = (xlsx_cond){.column = "Ratio", .kind = XLSX_COND_THRESHOLD, .op = XLSX_OP_GT,
                                       .value = 1 + r->rel, .good = r->worse_lower};
        conds[n_conds++] = (xlsx_cond){.column = "Ratio", .kind = XLSX_COND_THRESHOLD, .op = XLSX_OP_LT,
                                       .value = 1 - r->rel, .good = !r->worse_lower};
    }
    char *stem = sqlite3_mprintf("%s_trend", T->rep->id);
    if (!stem)
        return tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
    /* the page shows the chart's series, not this table: its rows are every key's every column */
    tb_status st = out_open(&S->o, T->job, formats_of(T->job, T->rep), stem, S->R->book,
                            &(xlsx_sheet_options){.name = T->rep->xlsx_sheet ? T->rep->xlsx_sheet : T->rep->title,
                                                  .conds = conds, .n_conds = n_conds},
                            NULL, NULL, T->err);
    sqlite3_free(stem);
    return st ? st : out_begin(&S->o, S->cols, S->n_out, T->err);
}

/* The reads of kv: the keys (the newest night each appears in first, in
 * that night's order) and one key's rows by night. */
static tb_status prepare_reads(tstate *S)
{
    size_t nc = S->T->t.n_cols;
    tb_status st = prepare_scratch(S->T,
                                   kv_sql("SELECT k, night, ord", nc, 0,
                                          " FROM kv a WHERE night = (SELECT max(night) FROM kv b WHERE b.k = a.k) "
                                          "ORDER BY night DESC, ord"),
                                   &S->keys);
    if (!st)
        st = prepare_scratch(S->T, kv_sql("SELECT night", nc, 0, " FROM kv WHERE k = ? ORDER BY night"), &S->ser);
    return st;
}

/* S->vals and S->counts: key k's values per numeric column and night (NAN: none). */
static void read_series(tstate *S, const char *k)
{
    trend *T = S->T;
    size_t nc = T->t.n_cols, N = T->n_nights;
    for (size_t i = 0; i < (nc + 1) * N; i++)
        S->vals[i] = NAN;
    for (size_t j = 0; j < N; j++)
        S->counts[j] = NAN;
    sqlite3_bind_text(S->ser, 1, k, -1, SQLITE_TRANSIENT);
    while (sqlite3_step(S->ser) == SQLITE_ROW) {
        size_t night = (size_t)sqlite3_column_int64(S->ser, 0);
        for (size_t i = 0; i < nc; i++)
            if (T->t.cols[i].numeric && sqlite3_column_type(S->ser, 1 + (int)i) != SQLITE_NULL)
                S->vals[i * N + night] = sqlite3_column_double(S->ser, 1 + (int)i);
        if (T->t.count_col >= 0)
            S->counts[night] = S->vals[(size_t)T->t.count_col * N + night];
    }
    sqlite3_reset(S->ser);
}

/* A verdict that fired on night j (column i, header h, of key) into verd;
 * the newest night's counted in the result. */
static tb_status keep_verdict(tstate *S, size_t i, size_t j, const char *key, const char *h, const verdict *v)
{
    trend *T = S->T;
    tb_status st = TB_OK;
    char *labels = used_labels(T, v);
    sqlite3_stmt *q = S->R->verd;
    sqlite3_bind_int64(q, 1, (int64_t)j);
    sqlite3_bind_text(q, 2, T->nights[j].label, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, T->rep->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 4, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 5, h, -1, SQLITE_STATIC);
    sqlite3_bind_double(q, 6, in_unit(T, i, v->value));
    sqlite3_bind_double(q, 7, in_unit(T, i, v->median));
    sqlite3_bind_double(q, 8, in_unit(T, i, v->mad));
    sqlite3_bind_double(q, 9, in_unit(T, i, v->delta));
    if (isnan(v->ratio))
        sqlite3_bind_null(q, 10);
    else
        sqlite3_bind_double(q, 10, v->ratio);
    sqlite3_bind_int(q, 11, v->dir);
    sqlite3_bind_text(q, 12, labels ? labels : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(q, 13, isnan(v->ratio) ? INFINITY : fabs(v->ratio - 1));
    if (sqlite3_step(q) != SQLITE_DONE)
        st = serr(T, "insert");
    sqlite3_reset(q);
    sqlite3_free(labels);
    if (j == T->n_nights - 1) {
        S->R->res->regressions += v->dir == 1;
        S->R->res->improvements += v->dir == -1;
    }
    S->R->res->flagged += v->dir == 1;
    return st;
}

/* Series s: its name (taken; NULL: out of memory) and column i's values vi
 * (over all nights) over the shown nights, in the report's unit. */
static tb_status make_series(const trend *T, series *s, char *name, size_t i, const double *vi)
{
    size_t shown = T->n_nights - T->first_shown;
    s->name = name;
    s->v = malloc((shown + 1) * sizeof *s->v);
    if (!s->name || !s->v) {
        sqlite3_free(s->name);
        free(s->v);
        return tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
    }
    for (size_t j = 0; j < shown; j++)
        s->v[j] = in_unit(T, i, vi[T->first_shown + j]);
    s->latest = vi[T->n_nights - 1];
    return TB_OK;
}

/* Key's column i as a chart candidate: its values over the shown nights. */
static tb_status add_candidate(tstate *S, size_t i, const char *key, const char *h, const double *vi)
{
    trend *T = S->T;
    if (S->n_sv == S->cap_sv) {
        S->cap_sv = S->cap_sv ? S->cap_sv * 2 : 16;
        series *m = realloc(S->sv, S->cap_sv * sizeof *S->sv);
        if (!m)
            return tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
        S->sv = m;
    }
    tb_status st = make_series(T, &S->sv[S->n_sv], sqlite3_mprintf("%s", *key ? key : h), i, vi);
    if (st)
        return st;
    S->n_sv++;
    return TB_OK;
}

/* The trend row of the current key's numeric column i: its values, every
 * shown night judged (the newest's verdict in the row), and its chart candidate. */
static tb_status column_row(tstate *S, size_t i, const char *key)
{
    trend *T = S->T;
    size_t nc = T->t.n_cols, N = T->n_nights;
    const double *vi = S->vals + i * N;
    size_t o2 = 0;
    tb_status st = TB_OK;
    for (size_t j = 0; j < nc; j++)
        if (T->t.cols[j].key)
            S->cells[o2++] = cell_from_column(S->keys, 3 + (int)j);
    char *h = unit_header(T, i);
    if (!h)
        return tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
    S->cells[o2++] = (tb_cell){.kind = TB_CELL_TEXT, .s = h, .n = strlen(h)};
    for (size_t j = T->first_shown; j < N; j++)
        S->cells[o2++] = val_cell(T, i, vi[j]);
    const tb_spec_rule *r = T->t.cols[i].rule ? &T->t.rules[T->t.cols[i].rule - 1] : NULL;
    verdict v = {.used = S->used, .dir = 3};
    for (size_t j = T->first_shown; r && j < N && !st; j++) {
        judge_night(r, T->t.cols[i].type, T->job->unit, vi, T->t.count_col >= 0 ? S->counts : NULL, j, S->scratch,
                    &v);
        if (v.dir == 1 || v.dir == -1)
            st = keep_verdict(S, i, j, key, h, &v);
    }
    int has = r && v.dir != 3 && v.dir != 2;
    S->cells[o2++] = has ? val_cell(T, i, v.median) : (tb_cell){.kind = TB_CELL_NULL};
    S->cells[o2++] = has ? val_cell(T, i, v.mad) : (tb_cell){.kind = TB_CELL_NULL};
    S->cells[o2++] = has ? num_cell(v.ratio) : (tb_cell){.kind = TB_CELL_NULL};
    const char *vn = r ? verdict_name(v.dir) : "";
    S->cells[o2++] = (tb_cell){.kind = TB_CELL_TEXT, .s = vn, .n = strlen(vn)};
    S->cells[o2++] = r && v.dir != 3 ? (tb_cell){.kind = TB_CELL_INT, .i = (int64_t)v.n_used}
                                     : (tb_cell){.kind = TB_CELL_NULL};
    if (!st)
        st = out_row(&S->o, S->cells, T->err);
    S->rows++;
    /* chart candidates: the chart column of every key */
    if (!st && (int)i == S->cc)
        st = add_candidate(S, i, key, h, vi);
    sqlite3_free(h);
    return st;
}

/* The trend table: per key, a row per numeric column; then its outputs finished. */
static tb_status write_keys(tstate *S)
{
    trend *T = S->T;
    tb_status st = TB_OK;
    S->cc = chart_column(T);
    while (!st && sqlite3_step(S->keys) == SQLITE_ROW) {
        S->n_keys++;
        read_series(S, (const char *)sqlite3_column_text(S->keys, 0));
        char *key = shown_key(T, S->keys, 3);
        if (!key)
            return tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < T->t.n_cols && !st; i++)
            if (T->t.cols[i].numeric)
                st = column_row(S, i, key);
        sqlite3_free(S->last_key);
        S->last_key = key;
    }
    return st ? st : out_finish(&S->o, T->job, S->files, S->sheets, T->err);
}

/* A report of one row per night charts its time columns, not its one key:
 * the candidates replaced by those columns. */
static tb_status time_series(tstate *S, size_t n_time)
{
    trend *T = S->T;
    for (size_t i = 0; i < S->n_sv; i++) {
        sqlite3_free(S->sv[i].name);
        free(S->sv[i].v);
    }
    S->n_sv = 0;
    if (S->cap_sv < n_time) {
        series *m = realloc(S->sv, n_time * sizeof *S->sv);
        if (!m)
            return tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
        S->sv = m;
        S->cap_sv = n_time;
    }
    for (size_t i = 0; i < T->t.n_cols; i++) {
        if (!T->t.cols[i].numeric || (int)i == T->t.count_col || T->t.cols[i].type != TB_COL_DUR_NS)
            continue;
        tb_status st = make_series(T, &S->sv[S->n_sv], unit_header(T, i), i, S->vals + i * T->n_nights);
        if (st)
            return st;
        S->n_sv++;
    }
    return TB_OK;
}

/* The chart (a report of one row per night: its time columns; others their
 * top keys), then the report's entry: its key, keys and rows. */
static tb_status chart_and_entry(tstate *S)
{
    trend *T = S->T;
    size_t nc = T->t.n_cols;
    const char *what = S->cc >= 0 ? T->t.cols[S->cc].name : "";
    size_t n_time = 0;
    for (size_t i = 0; i < nc; i++)
        n_time += T->t.cols[i].numeric && (int)i != T->t.count_col && T->t.cols[i].type == TB_COL_DUR_NS;
    tb_status st;
    if (S->n_keys == 1 && n_time > 1) {
        if ((st = time_series(S, n_time)))
            return st;
        what = "the time columns of its one row";
    } else {
        qsort(S->sv, S->n_sv, sizeof *S->sv, cmp_series);
    }
    char *col = S->cc >= 0 ? unit_header(T, (size_t)S->cc) : sqlite3_mprintf("");
    if (!col)
        return tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
    st = write_chart(T, S->R, S->sv, S->n_sv, what, col, S->n_keys == 1 && n_time > 1 ? S->last_key : NULL,
                     S->files, S->sheets);
    sqlite3_free(col);
    json_t *key = json_array();
    for (size_t i = 0; i < nc; i++)
        if (T->t.cols[i].key)
            json_array_append_new(key, json_string(T->t.cols[i].header));
    json_object_set_new(S->R->entry, "key", key);
    json_object_set_new(S->R->entry, "keys", json_integer((json_int_t)S->n_keys));
    json_object_set_new(S->R->entry, "rows", json_integer((json_int_t)S->rows));
    S->R->res->reports++;
    return st;
}

/* Frees what the state holds; the files and sheets go to the report's entry. */
static void tstate_finish(tstate *S)
{
    json_object_set_new(S->R->entry, "files", S->files);
    if (json_array_size(S->sheets))
        json_object_set_new(S->R->entry, "sheets", S->sheets);
    else
        json_decref(S->sheets);
    out_free(&S->o);
    for (size_t i = 0; i < S->n_sv; i++) {
        sqlite3_free(S->sv[i].name);
        free(S->sv[i].v);
    }
    free(S->sv);
    sqlite3_free(S->last_key);
    sqlite3_finalize(S->ins);
    sqlite3_finalize(S->dup);
    sqlite3_finalize(S->keys);
    sqlite3_finalize(S->ser);
    for (size_t i = 0; i < S->n_heads; i++)
        sqlite3_free(S->heads[i]);
    free(S->heads);
    free(S->cols);
    free(S->cells);
    free(S->vals);
    free(S->counts);
    free(S->scratch);
    free(S->used);
    free(S->rids);
}

/* The trend of one report: keyed rows of every night, then the table, verdicts and chart. */
static tb_status trend_report(trend *T, repctx *R)
{
    tstate S = {.T = T, .R = R, .cc = -1, .files = json_array(), .sheets = json_array()};
    tb_status st = TB_OK;
    int64_t ref = 0;
    if (!(S.rids = calloc(T->n_nights + 1, sizeof *S.rids))) {
        st = tb_error_set(T->err, TB_ERR_NOMEM, "out of memory");
    } else {
        size_t have = find_nights(&S, &ref);
        json_object_set_new(R->entry, "nights_with_rows", json_integer((json_int_t)have));
        if (!have)
            json_object_set_new(R->entry, "skipped", json_string("no night of the history holds rows of it"));
        else if (!(st = ref_columns(T, ref)) && !(st = make_kv(&S)) && !(st = load_nights(&S)) &&
                 !(st = trend_columns(&S)) && !(st = open_trend(&S)) && !(st = prepare_reads(&S)) &&
                 !(st = write_keys(&S)))
            st = chart_and_entry(&S);
    }
    tstate_finish(&S);
    return st;
}

/* The Summary sheet and history_verdicts.csv: every verdict that fired,
 * newest night first; *newest gets the newest night's (index latest) as
 * JSON (the others stay in the files: their count is not bounded). */
static tb_status write_verdicts(sqlite3 *sdb, const tb_history_report_job *job, xlsx_book *book, html_page *page,
                                json_t *files, int64_t latest, json_t **newest, tb_error *err)
{
    static const char *const heads[] = {"Night", "Report", "Key", "Column", "Value", "Baseline Median",
                                        "Baseline MAD", "Delta", "Ratio", "Verdict", "Baseline Nights"};
    enum { NH = sizeof heads / sizeof *heads };
    tb_sink_column cols[NH];
    for (size_t i = 0; i < NH; i++)
        cols[i] = (tb_sink_column){.header = heads[i]};
    outset o = {0};
    sqlite3_stmt *q = NULL;
    *newest = json_array();
    unsigned f = formats_of(job, NULL);
    tb_status st = out_open(&o, job, f, "history_verdicts", book,
                            &(xlsx_sheet_options){.name = "Summary", .key = "history:summary"}, page,
                            &(html_section_options){
                                .title = "Verdicts", .name = "summary", .lead = 1,
                                .description = "Every verdict that fired, newest night first: a night's value against "
                                               "the median and MAD of the nights before it (Baseline Nights).",
                                .full_file = (f & TB_OUT_CSV) ? "history_verdicts.csv" : NULL},
                            err);
    if (!st)
        st = out_begin(&o, cols, NH, err);
    if (!st && sqlite3_prepare_v2(sdb,
                                  "SELECT label, report, key, col, value, median, mad, delta, ratio,"
                                  " CASE dir WHEN 1 THEN 'regression' ELSE 'improvement' END, nights, night"
                                  " FROM verd ORDER BY night DESC, dir DESC, score DESC, report, key, col",
                                  -1, &q, NULL) != SQLITE_OK)
        st = tb_error_set(err, TB_ERR_DB, "history report: %s", sqlite3_errmsg(sdb));
    while (!st && sqlite3_step(q) == SQLITE_ROW) {
        tb_cell c[NH];
        for (int i = 0; i < (int)NH; i++)
            c[i] = i >= 4 && i <= 8 ? (sqlite3_column_type(q, i) == SQLITE_NULL ? (tb_cell){.kind = TB_CELL_NULL}
                                                                                  : num_cell(sqlite3_column_double(q, i)))
                                    : cell_from_column(q, i);
        st = out_row(&o, c, err);
        if (sqlite3_column_int64(q, 11) != latest)
            continue;
        json_t *v = json_object();
        json_object_set_new(v, "night", json_string((const char *)sqlite3_column_text(q, 0)));
        json_object_set_new(v, "report", json_string((const char *)sqlite3_column_text(q, 1)));
        json_object_set_new(v, "key", json_string((const char *)sqlite3_column_text(q, 2)));
        json_object_set_new(v, "column", json_string((const char *)sqlite3_column_text(q, 3)));
        static const char *const nums[] = {"value", "median", "mad", "delta", "ratio"};
        for (int i = 0; i < 5; i++)
            json_object_set_new(v, nums[i],
                                sqlite3_column_type(q, 4 + i) == SQLITE_NULL ? json_null()
                                                                             : json_real(sqlite3_column_double(q, 4 + i)));
        json_object_set_new(v, "verdict", json_string((const char *)sqlite3_column_text(q, 9)));
        json_t *nights = json_array();
        const char *ns = (const char *)sqlite3_column_text(q, 10);
        while (ns && *ns) {
            size_t k = strcspn(ns, " ");
            json_array_append_new(nights, json_stringn(ns, k));
            ns += k + (ns[k] == ' ');
        }
        json_object_set_new(v, "nights", nights);
        json_array_append_new(*newest, v);
    }
    if (!st)
        st = out_finish(&o, job, files, NULL, err);
    sqlite3_finalize(q);
    out_free(&o);
    return st;
}

/* The nights of the history, oldest first, into *out (new: each label and the array freed by the caller). */
static tb_status read_nights(sqlite3 *hdb, const char *history, night_t **out, size_t *n_out, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    tb_status st = TB_OK;
    if (sqlite3_prepare_v2(hdb, "SELECT id, label FROM night " NIGHT_ORDER, -1, &q, NULL) != SQLITE_OK)
        return history_dberr(hdb, history, err);
    size_t cap = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (*n_out == cap) {
            cap = cap ? cap * 2 : 32;
            night_t *m = realloc(*out, cap * sizeof **out);
            if (!m) {
                st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                break;
            }
            *out = m;
        }
        (*out)[*n_out].id = sqlite3_column_int64(q, 0);
        if (!((*out)[*n_out].label = strdup((const char *)sqlite3_column_text(q, 1)))) {
            st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            break;
        }
        (*n_out)++;
    }
    sqlite3_finalize(q);
    if (!st && !*n_out)
        st = tb_error_at(err, TB_ERR_NOTFOUND, history, 0, 0, -1, "the history holds no night (history add)");
    return st;
}

/* None of the files the run writes may be one it reads (the history, the spec and its SQL). */
static tb_status check_outputs(const tb_history_report_job *job, const tb_spec *given, file_ids *ids, tb_error *err)
{
    tb_status st = TB_OK;
    if (file_ids_walk(ids, job->history, 0) || (st = file_ids_spec(ids, given, err)))
        return st ? st : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    st = file_ids_check_out(ids, job->out_dir, "tracebook_run", "json", err);
    if (!st)
        st = file_ids_check_out(ids, job->out_dir, "history_verdicts", "csv", err);
    if (!st)
        st = file_ids_check_out(ids, job->out_dir, "history_verdicts", "json", err);
    if (!st && (formats_of(job, NULL) & TB_OUT_XLSX))
        st = file_ids_check_out(ids, job->out_dir, "trend", "xlsx", err);
    if (!st && (formats_of(job, NULL) & TB_OUT_HTML))
        st = file_ids_check_out(ids, job->out_dir, "trend", "html", err);
    for (size_t i = 0; i < job->spec->n_reports && !st; i++) {
        static const char *const stems[] = {"%s_trend", "%s_trend_chart"};
        for (int k = 0; k < 2 && !st; k++) {
            char *stem = sqlite3_mprintf(stems[k], job->spec->reports[i].id);
            if (!stem)
                return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            st = file_ids_check_out(ids, job->out_dir, stem, "csv", err);
            if (!st) /* the parts of a split CSV */
                st = file_ids_check_parts(ids, job->out_dir, stem, 0, err);
            if (!st)
                st = file_ids_check_out(ids, job->out_dir, stem, "json", err);
            sqlite3_free(stem);
        }
    }
    return st;
}

/* The scratch DB of the verdicts (table verd) and its insert. */
static tb_status open_scratch(sqlite3 **sdb, sqlite3_stmt **ins, tb_error *err)
{
    if (db_open("", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, sdb) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "history report: cannot open a scratch database");
    tb_status st = history_run_sql(*sdb, "history report scratch",
                                   "CREATE TABLE verd(night, label, report, key, col, value, median, mad, delta, "
                                   "ratio, dir, nights, score)",
                                   err);
    if (!st && sqlite3_prepare_v2(*sdb, "INSERT INTO verd VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, ins,
                                  NULL) != SQLITE_OK)
        st = tb_error_set(err, TB_ERR_DB, "history report: %s", sqlite3_errmsg(*sdb));
    return st;
}

/* The workbook trend.xlsx, its about page and its Summary sheet reserved first. */
static tb_status open_book(const tb_history_report_job *job, const tb_spec *given, const night_t *nights,
                           size_t n_nights, size_t first, xlsx_book **book, char **book_path, tb_error *err)
{
    *book_path = sqlite3_mprintf("%s/trend.xlsx", job->out_dir);
    char shown[64];
    snprintf(shown, sizeof shown, "%zu of %zu", n_nights - first, n_nights);
    xlsx_pair about[] = {{"History", job->history}, {"Spec", given->path}, {"Nights", shown},
                         {"First night", nights[first].label}, {"Last night", nights[n_nights - 1].label},
                         {"Time unit", tb_unit_name(job->unit)}};
    if (!*book_path)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    tb_status st = xlsx_create(*book_path,
                               &(xlsx_options){.about = about, .n_about = 6, .created = (int64_t)time(NULL)}, book,
                               err);
    return st ? st : xlsx_sheet_reserve(*book, "history:summary", "Summary", err);
}

/* The page trend.html, headed by the history and its nights. */
static tb_status open_page(const tb_history_report_job *job, const tb_spec *given, const night_t *nights,
                           size_t n_nights, size_t first, html_page **page, char **page_path, tb_error *err)
{
    *page_path = sqlite3_mprintf("%s/trend.html", job->out_dir);
    if (!*page_path)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    char shown[64];
    snprintf(shown, sizeof shown, "%zu of %zu", n_nights - first, n_nights);
    xlsx_pair facts[] = {{"history", job->history}, {"spec", given->path}, {"nights", shown},
                         {"first night", nights[first].label}, {"last night", nights[n_nights - 1].label},
                         {"time unit", tb_unit_name(job->unit)}};
    return html_create(*page_path, &(html_options){.title = "tracebook trend", .facts = facts, .n_facts = 6}, page,
                       err);
}

/* What the whole run needs: the history, the nights, the scratch DB and the workbook. */
typedef struct hrun {
    const tb_history_report_job *job;
    const tb_spec *given;    /* the spec as given (an msprof reports file before its expansion) */
    sqlite3 *hdb, *sdb;
    night_t *nights;
    size_t n_nights, first;  /* nights[first..] are shown */
    xlsx_book *book;
    char *book_path;
    html_page *page;
    char *page_path;
    json_t *reports, *verdicts, *vfiles;
    tb_history_result *res;
} hrun;

/* Every report's trend (its entry into H->reports; *verd, the insert of
 * their verdicts, finalized after), then the verdicts and the workbook. */
static tb_status write_trends(hrun *H, sqlite3_stmt **verd, tb_error *err)
{
    const tb_history_report_job *job = H->job;
    tb_status st = TB_OK;
    for (size_t i = 0; i < job->spec->n_reports && !st; i++) {
        const tb_spec_report *rep = &job->spec->reports[i];
        trend T = {.hdb = H->hdb, .sdb = H->sdb, .job = job, .rep = rep, .nights = H->nights,
                   .n_nights = H->n_nights, .first_shown = H->first, .t = {.rep = rep, .count_col = -1}, .err = err};
        json_t *entry = json_object();
        json_object_set_new(entry, "id", json_string(rep->id));
        repctx R = {.book = H->book, .page = H->page, .verd = *verd, .entry = entry, .res = H->res};
        st = trend_report(&T, &R);
        json_array_append_new(H->reports, entry);
        rk_free(&T.t);
    }
    sqlite3_finalize(*verd);
    *verd = NULL;
    if (!st)
        st = write_verdicts(H->sdb, job, H->book, H->page, H->vfiles, (int64_t)H->n_nights - 1, &H->verdicts, err);
    if (!st && H->book) {
        if ((st = xlsx_commit(H->book, err)))
            return st;
        if (job->written)
            job->written(job->ctx, H->book_path);
    }
    if (!st && H->page) {
        if ((st = html_commit(H->page, err)))
            return st;
        if (job->written)
            job->written(job->ctx, H->page_path);
    }
    return st;
}

/* Every night's count of regressions and improvements; the verdicts themselves are in history_verdicts.csv. */
static json_t *verdict_counts(sqlite3 *sdb)
{
    json_t *counts = json_array();
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(sdb, "SELECT label, sum(dir = 1), sum(dir = -1) FROM verd GROUP BY night ORDER BY night",
                           -1, &q, NULL) == SQLITE_OK)
        while (sqlite3_step(q) == SQLITE_ROW)
            json_array_append_new(counts, json_pack("{s:s,s:I,s:I}", "night", (const char *)sqlite3_column_text(q, 0),
                                                    "regressions", (json_int_t)sqlite3_column_int64(q, 1),
                                                    "improvements", (json_int_t)sqlite3_column_int64(q, 2)));
    sqlite3_finalize(q);
    return counts;
}

/* tracebook_run.json: the run, its nights, files and reports, and the newest night's verdicts. */
static tb_status write_manifest(const hrun *H, tb_error *err)
{
    const tb_history_report_job *job = H->job;
    json_t *meta = manifest_new();
    json_object_set_new(meta, "command", json_string("history report"));
    json_object_set_new(meta, "history", json_string(job->history));
    json_object_set_new(meta, "spec", json_string(H->given->path));
    json_object_set_new(meta, "timeunit", json_string(tb_unit_name(job->unit)));
    json_t *nl = json_array();
    for (size_t i = H->first; i < H->n_nights; i++)
        json_array_append_new(nl, json_string(H->nights[i].label));
    json_object_set_new(meta, "nights", nl);
    json_object_set_new(meta, "latest", json_string(H->res->latest));
    if (H->book)
        json_object_set_new(meta, "workbook", json_string("trend.xlsx"));
    if (H->page)
        json_object_set_new(meta, "page", json_string("trend.html"));
    /* every file of the run under a "files" key, as tracebook's scanner looks for them */
    json_t *outs = json_deep_copy(H->vfiles);
    if (H->book)
        json_array_append_new(outs, json_string("trend.xlsx"));
    if (H->page)
        json_array_append_new(outs, json_string("trend.html"));
    json_object_set_new(meta, "outputs", json_pack("{s:o}", "files", outs));
    json_object_set_new(meta, "reports", json_incref(H->reports));
    json_t *regs = json_array(), *imps = json_array();
    size_t k;
    json_t *v;
    json_array_foreach(H->verdicts, k, v)
        json_array_append(strcmp(json_string_value(json_object_get(v, "verdict")), "regression") ? imps : regs, v);
    json_object_set_new(meta, "regression_count", json_integer((json_int_t)H->res->regressions));
    json_object_set_new(meta, "regressions", regs);
    json_object_set_new(meta, "improvements", imps);
    json_object_set_new(meta, "verdict_counts", verdict_counts(H->sdb));
    return nightly_manifest(job->out_dir, meta, job->written, job->ctx, err);
}

tb_status tb_history_report(const tb_history_report_job *job, tb_history_result *res, tb_error *err)
{
    memset(res, 0, sizeof *res);
    hrun H = {.job = job, .given = job->spec, .reports = json_array(), .vfiles = json_array(), .res = res};
    file_ids ids = {0};
    int dir_fd = -1;
    sqlite3_stmt *verd = NULL;
    const tb_spec **specs = NULL;
    tb_spec *summaries = NULL;
    tb_history_report_job expanded;
    tb_status st = history_open(job->history, &H.hdb, err);
    if (st)
        goto done;
    /* an msprof reports file means msprof's summaries, as report runs them */
    if ((st = msprof_reports_expand(&H.given, 1, &specs, &summaries, job->note, job->ctx, err)))
        goto done;
    if (summaries) {
        expanded = *job;
        expanded.spec = summaries;
        H.job = job = &expanded;
    }
    if ((st = read_nights(H.hdb, job->history, &H.nights, &H.n_nights, err)))
        goto done;
    H.first = job->last > 0 && (uint64_t)job->last < H.n_nights ? H.n_nights - (size_t)job->last : 0;
    res->nights = H.n_nights - H.first;
    snprintf(res->latest, sizeof res->latest, "%s", H.nights[H.n_nights - 1].label);
    /* the output folder: created, locked, and none of its files one the run reads */
    if ((st = nightly_out_dir(job->out_dir, job->note, job->ctx, &dir_fd, err)) || (st = check_outputs(job, H.given, &ids, err)) ||
        (st = open_scratch(&H.sdb, &verd, err)))
        goto done;
    if ((formats_of(job, NULL) & TB_OUT_XLSX) &&
        (st = open_book(job, H.given, H.nights, H.n_nights, H.first, &H.book, &H.book_path, err)))
        goto done;
    if ((formats_of(job, NULL) & TB_OUT_HTML) &&
        (st = open_page(job, H.given, H.nights, H.n_nights, H.first, &H.page, &H.page_path, err)))
        goto done;
    st = write_trends(&H, &verd, err);
    if (!st)
        st = write_manifest(&H, err);
done:
    sqlite3_finalize(verd);
    xlsx_destroy(H.book);
    sqlite3_free(H.book_path);
    html_destroy(H.page);
    sqlite3_free(H.page_path);
    json_decref(H.reports);
    json_decref(H.verdicts);
    json_decref(H.vfiles);
    for (size_t i = 0; i < H.n_nights; i++)
        free(H.nights[i].label);
    free(H.nights);
    sqlite3_close(H.sdb);
    sqlite3_close(H.hdb);
    file_ids_free(&ids);
    tb_spec_free(summaries);
    free(specs);
    if (dir_fd >= 0)
        close(dir_fd);
    return st;
}
