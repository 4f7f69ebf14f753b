/* SPDX-License-Identifier: MIT */
/*
 * compare.c - `tracebook compare`: every report of a spec run on two DBs
 * (a base run and a new one), rows matched by key, numbers set side by side.
 *
 * Each report runs twice through tb_report_run() with a sink that puts the
 * rows into a private scratch SQLite database (an unnamed on-disk DB, so
 * memory stays bounded whatever the row count): table s0 for the base run,
 * s1 for the new one, each row with its key text (the key columns after the
 * report's `normalize:` steps, joined) and its place in the report's order.
 * A join on the key then streams the matched rows, the rows only in the
 * base run (removed) and those only in the new one (added) to the CSV/JSON
 * writers: per numeric column base, new, delta (new - base) and ratio
 * (new / base). The report's `regressions:` rules (or the default: time
 * columns are worse when higher, by 5% and at least 1 us) mark regressions
 * and improvements; they are kept in the scratch DB too and listed in
 * tracebook_run.json, regressions all, the largest first.
 *
 * compare.xlsx has a Summary sheet first (the largest regressions, then the
 * largest improvements, with a bar chart of their ratios) and a sheet per
 * report; compare.html is the same as one page (output/html_out.c), its
 * Summary section first, the reports' sections after it.
 *
 * Keys: the spec's `key:` columns; by default every column whose first
 * value is text, the rank column, and integer columns that name a step,
 * an iteration or an id ("Step", "Iteration ID", "Device_id"). A step
 * column in the key aligns per-step reports: step k of the base run meets
 * step k of the new one; the steps each run had are listed. Rows whose
 * keys are equal (after normalisation) are matched by their order of
 * appearance: the second "foo" of the base with the second of the new.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "db/open.h"
#include "tracebook/nightly.h"
#include "metrics/interval.h"
#include "output/output.h"
#include "query/file_ids.h"
#include "spec/msprof_reports.h"
#include "nightly/outdir.h"
#include "nightly/rowkey.h"
#include "output/table_sink.h"
#include "report/manifest.h"
#include "session/session.h"
#include "spec/spec.h"

/* The two runs: base (0) and new (1), from their sessions. */
typedef struct sides {
    sqlite3 *db[2];
    const char *path[2];
    const char *const *in[2];
    size_t n_in[2];
    const tb_window *w[2];
} sides;

typedef struct cmp {
    sqlite3 *db;
    const tb_compare_job *job;
    const sides *sd;
    const tb_spec_report *rep;
    rk_table t;          /* the report's columns, key and rules */
    int side;            /* the run now feeding rows: 0 base, 1 new */
    int64_t shift;       /* added to the new run's step numbers in keys (windows) */
    char table[8];       /* the side's rows: s0, s1 */
    sqlite3_stmt *dup;
    int64_t ord;
    uint64_t rows[2];
    int ran[2];          /* the report ran (was not skipped) on this side */
    char *skipped;       /* the reason of the first skip, or NULL */
    tb_error *err;
    xlsx_book *book;     /* the compare workbook, or NULL */
    html_page *page;     /* the compare page, or NULL */
    double *floor;       /* default rules: per column, the change that is noise (written unit; 0: none) */
} cmp;

/* The default rules judge a change against the run's own noise: a change of
 * a time under SHARE_OF_STEP of the step time it is part of, or, in a
 * per-step report, under STEP_SPREAD standard deviations of the column over
 * the base run's steps, is noise (docs/nightly.md). */
#define SHARE_OF_STEP 0.01
#define STEP_SPREAD 3.0
#define MIN_SPREAD_STEPS 3

static tb_status sqlerr(cmp *c, const char *what)
{
    return tb_error_set(c->err, TB_ERR_DB, "compare: %s: %s", what, sqlite3_errmsg(c->db));
}

static tb_status exec(cmp *c, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(c->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        tb_status st = tb_error_set(c->err, TB_ERR_DB, "compare: %s", msg ? msg : "SQLite error");
        sqlite3_free(msg);
        return st;
    }
    return TB_OK;
}

/* ---- the collecting sink -------------------------------------------------- */

/* The side's columns: the base's are the report's; the new run's must match them. */
static tb_status side_begin(void *ctx, const tb_sink_column *cols, size_t n, tb_error *err)
{
    cmp *c = ctx;
    c->err = err;
    if (c->t.cols) {
        if (n != c->t.n_cols)
            return tb_error_set(err, TB_ERR_INTERNAL, "report '%s' has %zu columns in one run and %zu in the other",
                                c->rep->id, c->t.n_cols, n);
    } else {
        tb_status st = rk_columns(&c->t, cols, n, err);
        if (st)
            return st;
    }
    c->ord = 0;
    return TB_OK;
}

/* The side's table is made: its key indexes, and the count of a key seen before. */
static tb_status side_made(void *ctx, tb_error *err)
{
    cmp *c = ctx;
    char sql[200];
    c->err = err;
    sqlite3_finalize(c->dup);
    c->dup = NULL;
    snprintf(sql, sizeof sql, "CREATE INDEX s%d_k ON s%d(k); CREATE INDEX s%d_k0 ON s%d(k0)", c->side, c->side,
             c->side, c->side);
    tb_status st = exec(c, sql);
    if (st)
        return st;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM s%d WHERE k0 = ?", c->side);
    if (sqlite3_prepare_v2(c->db, sql, -1, &c->dup, NULL) != SQLITE_OK)
        return sqlerr(c, "prepare");
    return TB_OK;
}

/* A row's key (k0, and k: k0 made unique by its count), and its place. */
static tb_status side_key(void *ctx, sqlite3_stmt *ins, const tb_cell *cells, tb_error *err)
{
    cmp *c = ctx;
    tb_status st;
    c->err = err;
    if (!c->t.decided && (st = rk_decide(&c->t, cells, err)))
        return st;
    /* a step of the new run is moved onto the base's when the windows differ */
    if ((st = rk_key(&c->t, cells, c->side == 1 ? c->shift : 0, err)))
        return st;
    const char *k0 = c->t.keybuf;
    sqlite3_bind_text(c->dup, 1, k0, -1, SQLITE_TRANSIENT);
    int64_t seen = 0;
    if (sqlite3_step(c->dup) == SQLITE_ROW)
        seen = sqlite3_column_int64(c->dup, 0);
    sqlite3_reset(c->dup);
    sqlite3_bind_text(ins, 1, k0, -1, SQLITE_TRANSIENT);
    if (seen) {
        char *k = sqlite3_mprintf("%s\x1f#%lld", k0, (long long)seen + 1);
        if (!k)
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        sqlite3_bind_text(ins, 2, k, -1, sqlite3_free);
    } else {
        sqlite3_bind_text(ins, 2, k0, -1, SQLITE_TRANSIENT);
    }
    sqlite3_bind_int64(ins, 3, c->ord++);
    return TB_OK;
}

static void side_row(void *ctx)
{
    cmp *c = ctx;
    c->rows[c->side]++;
}

static tb_status side_fail(void *ctx, tb_error *err)
{
    cmp *c = ctx;
    c->err = err;
    return sqlerr(c, "insert");
}

/* The sink of the current side's rows: table s0 (base) or s1 (new). */
static tb_status side_sink(cmp *c, tb_sink **out, tb_error *err)
{
    snprintf(c->table, sizeof c->table, "s%d", c->side);
    table_sink_options o = {.db = c->db, .table = c->table, .lead = "k0 TEXT, k TEXT, ord INTEGER", .n_lead = 3,
                            .begin = side_begin, .made = side_made, .bind_lead = side_key, .inserted = side_row,
                            .fail = side_fail, .scaled_real = 1, .ctx = c};
    return table_sink_create(&o, out, err);
}

static tb_status open_collect(void *ctx, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                              const char *label, tb_sink **out, tb_error *err)
{
    (void)spec;
    (void)rep;
    (void)format;
    (void)label;
    cmp *c = ctx;
    c->ran[c->side] = 1;
    return side_sink(c, out, err);
}

/* A side the report gave no rows on: its table, empty, for the comparison's joins. */
static tb_status empty_side(cmp *c)
{
    tb_sink *s = NULL;
    /* the report's columns are known from the other side: only their number matters here */
    tb_sink_column *blank = calloc(c->t.n_cols ? c->t.n_cols : 1, sizeof *blank);
    if (!blank)
        return tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
    tb_status st = side_sink(c, &s, c->err);
    if (!st)
        st = s->begin(s, blank, c->t.n_cols, c->err);
    if (s)
        s->destroy(s);
    free(blank);
    return st;
}

static void on_done(void *ctx, const tb_spec_report *rep, const char *skipped, uint64_t rows)
{
    (void)rep;
    (void)rows;
    cmp *c = ctx;
    if (skipped && !c->skipped)
        c->skipped = strdup(skipped);
}

/* ---- comparing ------------------------------------------------------------ */

typedef struct outcol {
    tb_sink_column col;
    char *owned;
} outcol;

/* A new string a + b (free with free). */
static char *cat(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *s = malloc(na + nb + 1);
    if (s) {
        memcpy(s, a, na);
        memcpy(s + na, b, nb + 1);
    }
    return s;
}

static void bind_value(sqlite3_stmt *st, int p, sqlite3_stmt *from, int col)
{
    if (sqlite3_column_type(from, col) == SQLITE_NULL)
        sqlite3_bind_null(st, p);
    else
        sqlite3_bind_double(st, p, sqlite3_column_double(from, col));
}

/* The key of the current result row as the user reads it: the key columns joined by " | ". */
static char *shown_key(const cmp *c, sqlite3_stmt *q, int added)
{
    size_t cap = 256, n = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    s[0] = 0;
    size_t nc = c->t.n_cols;
    for (size_t i = 0; i < nc; i++) {
        if (!c->t.cols[i].key)
            continue;
        int col = 2 + (int)(added ? nc + i : i);
        const char *t = (const char *)sqlite3_column_text(q, col);
        if (!t || !*t)
            continue; /* an empty part (a kernel without a type) says nothing */
        size_t need = n + strlen(t) + 4;
        if (need > cap) {
            cap = need * 2;
            char *more = realloc(s, cap);
            if (!more) {
                free(s);
                return NULL;
            }
            s = more;
        }
        n += (size_t)snprintf(s + n, cap - n, "%s%s", n ? " | " : "", t);
    }
    return s;
}

/* One report's comparison being written: its sinks, columns and counts. */
typedef struct wrep {
    cmp *c;
    tb_sink **sinks;
    size_t n_sinks;
    outcol *oc;              /* the output columns */
    size_t n_out;
    tb_cell *cells;
    char **keep;             /* each sink's copy of the columns */
    size_t n_keep;
    sqlite3_stmt *q, *reg;   /* the compared rows; INSERT INTO regs */
    char *regtxt, *imptxt;   /* the row's Regressions and Improvements */
    uint64_t matched, added, removed, n_reg, n_imp, count_changes;
} wrep;

/* Adds output column h (taken; NULL: out of memory). */
static tb_status add_out(wrep *W, char *h)
{
    if (!h)
        return tb_error_set(W->c->err, TB_ERR_NOMEM, "out of memory");
    W->oc[W->n_out].owned = h;
    W->oc[W->n_out].col = (tb_sink_column){.header = h, .type = TB_COL_PLAIN};
    W->n_out++;
    return TB_OK;
}

/* The output columns: the key, Status, per numeric column base, new, delta
 * and ratio (others as they are), Regressions and Improvements. */
static tb_status out_columns(wrep *W)
{
    const rk_table *t = &W->c->t;
    tb_status st = TB_OK;
    for (size_t i = 0; i < t->n_cols && !st; i++)
        if (t->cols[i].key)
            st = add_out(W, strdup(t->cols[i].header));
    if (!st)
        st = add_out(W, strdup("Status"));
    for (size_t i = 0; i < t->n_cols && !st; i++) {
        const char *h = t->cols[i].header;
        if (t->cols[i].key)
            continue;
        if (!t->cols[i].numeric) {
            st = add_out(W, strdup(h));
            continue;
        }
        static const char *const parts[] = {" Base", " New", " Delta", " Ratio"};
        for (int k = 0; k < 4 && !st; k++)
            st = add_out(W, cat(h, parts[k]));
    }
    if (!st)
        st = add_out(W, strdup("Regressions"));
    if (!st)
        st = add_out(W, strdup("Improvements"));
    return st;
}

/* Each sink begun with its own copy of the columns. */
static tb_status begin_sinks(wrep *W)
{
    for (size_t k = 0; k < W->n_sinks; k++) {
        tb_sink_column *cols = calloc(W->n_out, sizeof *cols);
        if (!cols)
            return tb_error_set(W->c->err, TB_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < W->n_out; i++)
            cols[i] = W->oc[i].col;
        W->keep[W->n_keep++] = (char *)cols;
        tb_status st = W->sinks[k]->begin(W->sinks[k], cols, W->n_out, W->c->err);
        if (st)
            return st;
    }
    return TB_OK;
}

/* The rows compared: matched and removed in the base order, then added in
 * the new order (new: free with free). */
static char *compare_sql(size_t nc)
{
    size_t cap = 512 + nc * 32, n;
    char *sql = malloc(cap);
    if (!sql)
        return NULL;
    n = (size_t)snprintf(sql, cap, "SELECT 0, b.k IS NULL");
    for (size_t i = 0; i < nc; i++)
        n += (size_t)snprintf(sql + n, cap - n, ", a.c%zu", i);
    for (size_t i = 0; i < nc; i++)
        n += (size_t)snprintf(sql + n, cap - n, ", b.c%zu", i);
    n += (size_t)snprintf(sql + n, cap - n, ", a.ord FROM s0 a LEFT JOIN s1 b ON a.k = b.k UNION ALL SELECT 1, 0");
    for (size_t i = 0; i < nc; i++)
        n += (size_t)snprintf(sql + n, cap - n, ", NULL");
    for (size_t i = 0; i < nc; i++)
        n += (size_t)snprintf(sql + n, cap - n, ", b.c%zu", i);
    snprintf(sql + n, cap - n, ", b.ord FROM s1 b WHERE NOT EXISTS (SELECT 1 FROM s0 a WHERE a.k = b.k) ORDER BY 1, %zu",
             3 + 2 * nc);
    return sql;
}

/* new - base of column i: a time to the ns in its unit (no binary noise:
 * 242.896, not 242.89600000000064). */
static double delta_of(const cmp *c, size_t i, double b, double nv)
{
    tb_col_type ty = c->t.cols[i].type;
    if (ty != TB_COL_DUR_NS && ty != TB_COL_TS_NS)
        return nv - b;
    double p = rk_pow10((int)c->job->unit);
    return round((nv - b) * p) / p;
}

/* A rule's firing on column i (base b, new nv) of the current row: named in
 * the row's Regressions or Improvements and kept in regs; *key is the
 * row's shown key, made on the first firing. */
static tb_status keep_firing(wrep *W, size_t i, int j, double b, double nv, char **key)
{
    cmp *c = W->c;
    sqlite3_stmt *q = W->q, *reg = W->reg;
    int cb = 2 + (int)i, cn = 2 + (int)(c->t.n_cols + i);
    char **txt = j > 0 ? &W->regtxt : &W->imptxt;
    char *more = sqlite3_mprintf("%s%s%s", *txt, **txt ? ", " : "", c->t.cols[i].name);
    sqlite3_free(*txt);
    *txt = more;
    if (!*key && !(*key = shown_key(c, q, 0)))
        return tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
    W->n_reg += j > 0;
    W->n_imp += j < 0;
    sqlite3_bind_text(reg, 1, c->rep->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(reg, 2, *key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(reg, 3, c->t.cols[i].header, -1, SQLITE_STATIC);
    sqlite3_bind_int(reg, 4, j);
    bind_value(reg, 5, q, cb);
    bind_value(reg, 6, q, cn);
    sqlite3_bind_double(reg, 7, delta_of(c, i, b, nv));
    if (b != 0)
        sqlite3_bind_double(reg, 8, nv / b);
    else
        sqlite3_bind_null(reg, 8);
    /* how far past the threshold, for the ranking: the ratio's distance from 1 */
    sqlite3_bind_double(reg, 9, b != 0 ? fabs(nv / b - 1) : INFINITY);
    /* the digits a time keeps in its unit (ns), for the command's list; -1: as the double reads */
    tb_col_type ty = c->t.cols[i].type;
    sqlite3_bind_int(reg, 10, ty == TB_COL_DUR_NS || ty == TB_COL_TS_NS ? (int)c->job->unit : -1);
    tb_status st = sqlite3_step(reg) != SQLITE_DONE ? sqlerr(c, "insert") : TB_OK;
    sqlite3_reset(reg);
    return st;
}

/* A column of one call's time (Avg, Min, Max, Mean, Median ...): its change
 * weighs as much as the change times the row's count. */
static int per_call(const char *name)
{
    static const char *const p[] = {"Avg", "Min", "Max", "Mean", "Median", "Average", NULL};
    for (int k = 0; p[k]; k++)
        if (!strncmp(name, p[k], strlen(p[k])))
            return 1;
    return 0;
}

/* The cells of the current row's non-key column i from W->cells[*o]: the
 * value, or base, new, delta and ratio judged by the column's rule. */
static tb_status value_cells(wrep *W, size_t i, int is_added, int counted, size_t *o, char **key)
{
    cmp *c = W->c;
    sqlite3_stmt *q = W->q;
    tb_cell *cells = W->cells;
    int cb = 2 + (int)i, cn = 2 + (int)(c->t.n_cols + i);
    if (!c->t.cols[i].numeric) {
        int from = is_added ? cn : sqlite3_column_type(q, cn) != SQLITE_NULL ? cn : cb;
        const unsigned char *t = sqlite3_column_text(q, from);
        cells[(*o)++] = t ? (tb_cell){.kind = TB_CELL_TEXT, .s = (const char *)t, .n = (size_t)sqlite3_column_bytes(q, from)}
                          : (tb_cell){.kind = TB_CELL_NULL};
        return TB_OK;
    }
    int hb = sqlite3_column_type(q, cb) != SQLITE_NULL, hn = sqlite3_column_type(q, cn) != SQLITE_NULL;
    double b = sqlite3_column_double(q, cb), nv = sqlite3_column_double(q, cn);
    cells[(*o)++] = hb ? (tb_cell){.kind = TB_CELL_REAL, .d = b} : (tb_cell){.kind = TB_CELL_NULL};
    cells[(*o)++] = hn ? (tb_cell){.kind = TB_CELL_REAL, .d = nv} : (tb_cell){.kind = TB_CELL_NULL};
    cells[(*o)++] = hb && hn ? (tb_cell){.kind = TB_CELL_REAL, .d = delta_of(c, i, b, nv)} : (tb_cell){.kind = TB_CELL_NULL};
    cells[(*o)++] = hb && hn && b != 0 ? (tb_cell){.kind = TB_CELL_REAL, .d = nv / b} : (tb_cell){.kind = TB_CELL_NULL};
    if (!hb || !hn || !c->t.cols[i].rule)
        return TB_OK;
    const tb_spec_rule *r = &c->t.rules[c->t.cols[i].rule - 1];
    if (c->t.count_col >= 0 && r->min_count > counted)
        return TB_OK;
    /* a per-call time weighs by the calls (the smaller count of the two runs) */
    double weight = c->t.count_col >= 0 && per_call(c->t.cols[i].name) ? counted : 1;
    if (c->floor && fabs(nv - b) * weight < c->floor[i])
        return TB_OK;
    int j = rk_judge(r, c->t.cols[i].type, c->job->unit, b, nv);
    return j ? keep_firing(W, i, j, b, nv, key) : TB_OK;
}

/* The smaller Count of a matched row's two sides (a rule's min_count reads
 * it; a change of count is noted, never a regression); 1 otherwise. */
static int row_count(wrep *W, int is_added, int is_removed)
{
    cmp *c = W->c;
    if (c->t.count_col < 0 || is_added || is_removed)
        return 1;
    int64_t cb = sqlite3_column_int64(W->q, 2 + c->t.count_col);
    int64_t cn = sqlite3_column_int64(W->q, 2 + (int)c->t.n_cols + c->t.count_col);
    W->count_changes += cb != cn;
    return cb < cn ? (int)(cb > INT32_MAX ? INT32_MAX : cb) : (int)(cn > INT32_MAX ? INT32_MAX : cn);
}

/* The current compared row, judged and written to every sink. */
static tb_status compare_row(wrep *W)
{
    cmp *c = W->c;
    sqlite3_stmt *q = W->q;
    size_t nc = c->t.n_cols, o = 0;
    int is_added = sqlite3_column_int(q, 0), is_removed = sqlite3_column_int(q, 1);
    const char *status = is_added ? "added" : is_removed ? "removed" : "matched";
    W->matched += !is_added && !is_removed;
    W->added += is_added;
    W->removed += is_removed;
    for (size_t i = 0; i < nc; i++) {
        if (!c->t.cols[i].key)
            continue;
        int col = 2 + (int)(is_added ? nc + i : i);
        const unsigned char *t = sqlite3_column_text(q, col);
        W->cells[o++] = t ? (tb_cell){.kind = TB_CELL_TEXT, .s = (const char *)t, .n = (size_t)sqlite3_column_bytes(q, col)}
                          : (tb_cell){.kind = TB_CELL_NULL};
    }
    W->cells[o++] = (tb_cell){.kind = TB_CELL_TEXT, .s = status, .n = strlen(status)};
    sqlite3_free(W->regtxt);
    sqlite3_free(W->imptxt);
    W->regtxt = sqlite3_mprintf("");
    W->imptxt = sqlite3_mprintf("");
    char *key = NULL;
    int counted = row_count(W, is_added, is_removed);
    tb_status st = TB_OK;
    for (size_t i = 0; i < nc && !st; i++)
        if (!c->t.cols[i].key)
            st = value_cells(W, i, is_added, counted, &o, &key);
    free(key);
    if (st)
        return st;
    if (!W->regtxt || !W->imptxt)
        return tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
    W->cells[o++] = (tb_cell){.kind = TB_CELL_TEXT, .s = W->regtxt, .n = strlen(W->regtxt)};
    W->cells[o++] = (tb_cell){.kind = TB_CELL_TEXT, .s = W->imptxt, .n = strlen(W->imptxt)};
    for (size_t k = 0; k < W->n_sinks && !st; k++)
        st = W->sinks[k]->row(W->sinks[k], W->cells, c->err);
    return st;
}

/* Every compared row written; the sinks finished. */
static tb_status compare_rows(wrep *W)
{
    cmp *c = W->c;
    char *sql = compare_sql(c->t.n_cols);
    if (!sql)
        return tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
    tb_status st = TB_OK;
    if (sqlite3_prepare_v2(c->db, sql, -1, &W->q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, "INSERT INTO regs VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &W->reg, NULL) != SQLITE_OK)
        st = sqlerr(c, "prepare");
    free(sql);
    int rc = SQLITE_DONE;
    while (st == TB_OK && (rc = sqlite3_step(W->q)) == SQLITE_ROW)
        st = compare_row(W);
    if (!st && rc != SQLITE_DONE)
        st = sqlerr(c, "compare");
    for (size_t k = 0; k < W->n_sinks && !st; k++)
        st = W->sinks[k]->finish(W->sinks[k], c->err);
    return st;
}

/* Writes the compare rows of one report to its sinks; fills *entry. */
static tb_status write_report(cmp *c, tb_sink **sinks, size_t n_sinks, json_t *entry)
{
    size_t nc = c->t.n_cols;
    wrep W = {.c = c, .sinks = sinks, .n_sinks = n_sinks, .oc = calloc(nc * 4 + 4, sizeof *W.oc),
              .cells = calloc(nc * 4 + 4, sizeof *W.cells), .keep = calloc(nc * 4 + 4, sizeof *W.keep)};
    tb_status st = TB_OK;
    if (!W.oc || !W.cells || !W.keep)
        st = tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
    else if (!(st = out_columns(&W)) && !(st = begin_sinks(&W)) && !(st = compare_rows(&W))) {
        json_object_set_new(entry, "matched", json_integer((json_int_t)W.matched));
        json_object_set_new(entry, "added", json_integer((json_int_t)W.added));
        json_object_set_new(entry, "removed", json_integer((json_int_t)W.removed));
        json_object_set_new(entry, "regressions", json_integer((json_int_t)W.n_reg));
        json_object_set_new(entry, "improvements", json_integer((json_int_t)W.n_imp));
        if (c->t.count_col >= 0)
            json_object_set_new(entry, "count_changes", json_integer((json_int_t)W.count_changes));
    }
    sqlite3_free(W.regtxt);
    sqlite3_free(W.imptxt);
    sqlite3_finalize(W.q);
    sqlite3_finalize(W.reg);
    for (size_t i = 0; i < W.n_out; i++)
        free(W.oc[i].owned);
    for (size_t i = 0; i < W.n_keep; i++)
        free(W.keep[i]);
    free(W.keep);
    free(W.oc);
    free(W.cells);
    return st;
}

/* Lists the steps each run had when a key column holds steps (per-step reports). */
static void steps_used(cmp *c, json_t *entry)
{
    for (size_t i = 0; i < c->t.n_cols; i++) {
        if (!c->t.cols[i].key || !rk_step_col(c->t.cols[i].name))
            continue;
        json_t *s = json_object();
        json_object_set_new(s, "column", json_string(c->t.cols[i].header));
        static const char *const what[] = {"base", "new", "compared"};
        for (int k = 0; k < 3; k++) {
            /* (SQLite's printf reads %z as a string to free: no %zu here) */
            long long ci = (long long)i;
            char *sql = k < 2 ? sqlite3_mprintf("SELECT DISTINCT c%lld FROM s%d ORDER BY 1", ci, k)
                              : sqlite3_mprintf("SELECT DISTINCT c%lld FROM s0 WHERE c%lld IN (SELECT c%lld + %lld "
                                                "FROM s1) ORDER BY 1", ci, ci, ci, (long long)c->shift);
            sqlite3_stmt *q = NULL;
            json_t *a = json_array();
            if (sql && sqlite3_prepare_v2(c->db, sql, -1, &q, NULL) == SQLITE_OK)
                while (sqlite3_step(q) == SQLITE_ROW)
                    json_array_append_new(a, sqlite3_column_type(q, 0) == SQLITE_INTEGER
                                                 ? json_integer(sqlite3_column_int64(q, 0))
                                                 : json_string((const char *)sqlite3_column_text(q, 0)));
            sqlite3_finalize(q);
            sqlite3_free(sql);
            json_object_set_new(s, what[k], a);
        }
        if (c->shift)  /* new step = base step - offset */
            json_object_set_new(s, "new_offset", json_integer((json_int_t)-c->shift));
        json_object_set_new(entry, "steps", s);
        return;
    }
}

/* The formats a report's comparison is written in: --format, else csv, the
 * workbook and the page, and json when the report's (or the spec's) outputs
 * name it. */
static unsigned formats_of(const tb_compare_job *job, const tb_spec_report *rep)
{
    if (job->formats)
        return job->formats & (TB_OUT_CSV | TB_OUT_JSON | TB_OUT_XLSX | TB_OUT_HTML);
    unsigned asked = rep->outputs ? rep->outputs : job->spec->outputs;
    return TB_OUT_CSV | TB_OUT_XLSX | TB_OUT_HTML | (asked & TB_OUT_JSON);
}

/* Runs the report on both sides into s0 and s1 (params: overrides, as --param);
 * made[side]: the side's table exists. */
static tb_status run_sides(cmp *c, const tb_spec_report *rep, const char *const *params, size_t n_params,
                           int made[2])
{
    const tb_compare_job *job = c->job;
    const char *only[1] = {rep->id};
    tb_status st = TB_OK;
    for (int side = 0; side < 2 && !st; side++) {
        c->side = side;
        tb_run_options o = {.db = c->sd->db[side],
                            .db_name = c->sd->path[side],
                            .window = *c->sd->w[side],
                            .specs = (const tb_spec *const *)&job->spec,
                            .n_specs = 1,
                            .unit = job->unit,
                            .max_steps = job->max_steps,
                            .params = params,
                            .n_params = n_params,
                            .formats = TB_OUT_CSV,
                            .only = only,
                            .n_only = 1,
                            .open_sink = open_collect,
                            .sink_ctx = c,
                            .report_done = on_done,
                            .note = NULL,
                            .ctx = NULL};
        tb_run_result rr;
        st = tb_report_run(&o, &rr, c->err);
        made[side] = c->ran[side] && c->t.cols;
    }
    return st;
}

/* The base run's whole steps (the step view): the mean step and the total
 * step time of the rank where they are least, in ns (the floor of the
 * fastest rank serves all); 0 and 0 without steps. */
static void step_times(sqlite3 *db, double *mean, double *per_rank)
{
    sqlite3_stmt *q = NULL;
    *mean = *per_rank = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT min(m), min(t) FROM (SELECT avg(dur) AS m, sum(dur) * 1.0 AS t FROM step "
                           "WHERE dur > 0 GROUP BY rankId)",
                           -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW) {
        *mean = sqlite3_column_double(q, 0);
        *per_rank = sqlite3_column_double(q, 1);
    }
    sqlite3_finalize(q);
}

/* The spread (standard deviation) of column i over the base run's steps
 * (s0): per series of steps (the key's other columns: a rank, a device), the
 * variances pooled; 0 when no series has MIN_SPREAD_STEPS steps. */
static double spread(cmp *c, size_t i)
{
    sqlite3_str *q = sqlite3_str_new(c->db);
    sqlite3_str_appendf(q, "SELECT avg(v) FROM (SELECT count(c%d) AS n, avg(c%d * c%d) - avg(c%d) * avg(c%d) AS v "
                           "FROM s0", (int)i, (int)i, (int)i, (int)i, (int)i);
    const char *sep = " GROUP BY ";
    for (size_t k = 0; k < c->t.n_cols; k++)
        if (c->t.cols[k].key && !rk_step_col(c->t.cols[k].name)) {
            sqlite3_str_appendf(q, "%sc%d", sep, (int)k);
            sep = ", ";
        }
    sqlite3_str_appendf(q, ") WHERE n >= %d", MIN_SPREAD_STEPS);
    char *sql = sqlite3_str_finish(q);
    sqlite3_stmt *st = NULL;
    double sd = 0;
    if (sql && sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        double v = sqlite3_column_double(st, 0);
        sd = v > 0 ? sqrt(v) : 0;
    }
    sqlite3_finalize(st);
    sqlite3_free(sql);
    return sd;
}


/*
 * The noise floor of the default rules (a report without `regressions:`),
 * per time column: SHARE_OF_STEP of the base run's mean step (a per-step
 * report, whose key holds a step) or of its step time per rank (any other),
 * and in a per-step report at least STEP_SPREAD standard deviations of the
 * column over the base's steps. A per-call column (per_call) is held to it
 * by its change times the row's calls. Listed in the report's entry
 * (noise_floor).
 */
static tb_status noise_floor(cmp *c, int base_made, json_t *entry)
{
    if (c->rep->has_rules)
        return TB_OK;
    if (!(c->floor = calloc(c->t.n_cols ? c->t.n_cols : 1, sizeof *c->floor)))
        return tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
    int per_step = 0;
    for (size_t i = 0; i < c->t.n_cols; i++)
        per_step |= c->t.cols[i].key && rk_step_col(c->t.cols[i].name);
    double mean, per_rank;
    step_times(c->sd->db[0], &mean, &per_rank);
    double ns = rk_pow10((int)c->job->unit), share = SHARE_OF_STEP * (per_step ? mean : per_rank) / ns;
    json_t *floors = json_object();
    for (size_t i = 0; i < c->t.n_cols; i++) {
        if (!c->t.cols[i].rule || c->t.cols[i].type != TB_COL_DUR_NS)
            continue;
        double f = share, sd = per_step && base_made ? STEP_SPREAD * spread(c, i) : 0;
        c->floor[i] = f > sd ? f : sd;
        if (c->floor[i] > 0)
            json_object_set_new(floors, c->t.cols[i].header, json_real(round(c->floor[i] * ns) / ns));
    }
    json_object_set_new(entry, "noise_floor", floors);
    return TB_OK;
}

/* A top-N report: it declares an integer parameter `top` (top_kernels). */
static int is_top_n(const tb_spec_report *rep)
{
    for (size_t i = 0; i < rep->n_params; i++)
        if (!strcmp(rep->params[i].name, "top") && rep->params[i].type == TB_PARAM_INT)
            return 1;
    return 0;
}

/*
 * A top-N report is compared over the union of both runs' top N: a kernel
 * that moves into tonight's top N is compared with its value of last night,
 * not listed as added. The keys of both sides' top N (as run, in s0 and s1)
 * are kept, the report runs again on both sides without the limit (`top`
 * at its largest), and each side keeps the rows of those keys only.
 */
static tb_status widen_top(cmp *c, const tb_spec_report *rep, int made[2])
{
    char sql[160];
    tb_status st = exec(c, "DROP TABLE IF EXISTS topk; CREATE TABLE topk(k0 TEXT PRIMARY KEY)");
    sqlite3_finalize(c->dup);
    c->dup = NULL;
    for (int side = 0; side < 2 && !st; side++) {
        if (!made[side])
            continue;
        snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO topk SELECT k0 FROM s%d; DROP TABLE s%d", side, side);
        st = exec(c, sql);
    }
    char *all = sqlite3_mprintf("%s.top=%lld", rep->id, (long long)INT64_MAX);
    if (!st && !all)
        st = tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
    const char *params[1] = {all};
    c->rows[0] = c->rows[1] = 0;
    if (!st)
        st = run_sides(c, rep, params, 1, made);
    sqlite3_free(all);
    for (int side = 0; side < 2 && !st; side++) {
        if (!made[side])
            continue;
        snprintf(sql, sizeof sql, "DELETE FROM s%d WHERE k0 NOT IN (SELECT k0 FROM topk)", side);
        if (!(st = exec(c, sql)))
            c->rows[side] -= (uint64_t)sqlite3_changes(c->db);
    }
    return st ? st : exec(c, "DROP TABLE topk");
}

/* The report's <id>_compare.csv and .json sinks, as formats f ask. */
static tb_status open_files(cmp *c, const tb_spec_report *rep, unsigned f, tb_sink **sinks, size_t *n_sinks)
{
    static const unsigned fmts[] = {TB_OUT_CSV, TB_OUT_JSON};
    static const char *const ext[] = {"csv", "json"};
    tb_status st = TB_OK;
    for (int k = 0; k < 2 && !st; k++) {
        if (!(f & fmts[k]))
            continue;
        char *path = sqlite3_mprintf("%s/%s_compare.%s", c->job->out_dir, rep->id, ext[k]);
        if (!path)
            return tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
        st = k == 0 ? csv_sink_create(path, &(csv_sink_options){.formula_safe = c->job->csv_safe}, &sinks[*n_sinks],
                                      c->err)
                    : json_sink_create(path, NULL, &sinks[*n_sinks], c->err);
        sqlite3_free(path);
        if (!st)
            (*n_sinks)++;
    }
    return st;
}

/* The report's sheet: Ratio cells red past a rule's relative threshold in
 * the worse direction, green past it in the better one. *names and *conds
 * (new: free names[i] for every column, then both) must outlive the sheet's rows. */
static tb_status open_sheet(cmp *c, const tb_spec_report *rep, tb_sink **sink, char ***names, xlsx_cond **conds)
{
    size_t n_conds = 0;
    *names = calloc(c->t.n_cols + 1, sizeof **names);
    *conds = calloc(2 * c->t.n_cols + 1, sizeof **conds);
    if (!*names || !*conds)
        return tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < c->t.n_cols; i++) {
        if (!c->t.cols[i].rule || c->t.cols[i].key)
            continue;
        const tb_spec_rule *r = &c->t.rules[c->t.cols[i].rule - 1];
        if (!((*names)[i] = cat(c->t.cols[i].header, " Ratio")))
            return tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
        double up = 1 + r->rel, down = 1 - r->rel;
        (*conds)[n_conds++] = (xlsx_cond){.column = (*names)[i], .kind = XLSX_COND_THRESHOLD, .op = XLSX_OP_GT,
                                          .value = up, .good = r->worse_lower};
        (*conds)[n_conds++] = (xlsx_cond){.column = (*names)[i], .kind = XLSX_COND_THRESHOLD, .op = XLSX_OP_LT,
                                          .value = down, .good = !r->worse_lower};
    }
    return xlsx_sheet_sink(c->book,
                           &(xlsx_sheet_options){.name = rep->xlsx_sheet ? rep->xlsx_sheet : rep->title,
                                                 .conds = *conds, .n_conds = n_conds},
                           sink, c->err);
}

/* The report's entry after it was written: its files (each told to
 * job->written), key and steps; the result's totals. */
static void finish_entry(cmp *c, tb_sink **sinks, size_t n_sinks, json_t *entry, tb_compare_result *res)
{
    const tb_compare_job *job = c->job;
    json_t *files = json_array();
    for (size_t k = 0; k < n_sinks; k++) {
        const char *const *paths;
        size_t n = sink_written(sinks[k], &paths);
        for (size_t i = 0; i < n; i++) {
            const char *b = strrchr(paths[i], '/');
            json_array_append_new(files, json_string(b ? b + 1 : paths[i]));
            if (job->written)
                job->written(job->ctx, paths[i]);
        }
    }
    json_object_set_new(entry, "files", files);
    json_t *key = json_array();
    for (size_t i = 0; i < c->t.n_cols; i++)
        if (c->t.cols[i].key)
            json_array_append_new(key, json_string(c->t.cols[i].header));
    json_object_set_new(entry, "key", key);
    steps_used(c, entry);
    res->reports++;
    res->matched += (uint64_t)json_integer_value(json_object_get(entry, "matched"));
    res->added += (uint64_t)json_integer_value(json_object_get(entry, "added"));
    res->removed += (uint64_t)json_integer_value(json_object_get(entry, "removed"));
}

/* One report: run on both DBs, then compared and written. */
static tb_status compare_report(cmp *c, const tb_spec_report *rep, json_t *entry, tb_compare_result *res)
{
    tb_sink *sinks[4] = {NULL, NULL, NULL, NULL}; /* csv, json, the sheet, the page's section */
    size_t n_sinks = 0;
    int made[2] = {0, 0};
    tb_status st = run_sides(c, rep, NULL, 0, made);
    if (!st && is_top_n(rep) && (made[0] || made[1]))
        st = widen_top(c, rep, made);
    if (st)
        goto done;
    if (!c->ran[0] && !c->ran[1]) {
        json_object_set_new(entry, "skipped", json_string(c->skipped ? c->skipped : "not run"));
        res->skipped++;
        goto done;
    }
    if (!c->t.decided && (st = rk_decide(&c->t, NULL, c->err)))
        goto done;
    if ((st = noise_floor(c, made[0], entry)))
        goto done;
    /* a report that ran on one side only compares against no rows */
    for (int side = 0; side < 2 && !st; side++)
        if (!made[side]) {
            c->side = side;
            st = empty_side(c);
        }
    if (st)
        goto done;
    unsigned f = formats_of(c->job, rep);
    st = open_files(c, rep, f, sinks, &n_sinks);
    char **names = NULL;
    xlsx_cond *conds = NULL;
    int has_sheet = 0;
    if (!st && c->book && (f & TB_OUT_XLSX) && !(st = open_sheet(c, rep, &sinks[n_sinks], &names, &conds))) {
        has_sheet = (int)++n_sinks; /* the sheet's place, plus one */
    }
    char full[300];
    snprintf(full, sizeof full, "%.250s_compare.csv", rep->id);
    if (!st && c->page && (f & TB_OUT_HTML) &&
        !(st = html_section_sink(c->page,
                                 &(html_section_options){.title = rep->title ? rep->title : rep->id,
                                                         .description = rep->description,
                                                         .full_file = (f & TB_OUT_CSV) ? full : NULL,
                                                         .name = rep->id},
                                 &sinks[n_sinks], c->err)))
        n_sinks++;
    if (!st)
        st = write_report(c, sinks, n_sinks, entry);
    if (!st && has_sheet) {
        const char *name = xlsx_sink_sheet(sinks[has_sheet - 1], 0);
        if (name)
            json_object_set_new(entry, "sheet", json_string(name));
    }
    for (size_t i = 0; names && i < c->t.n_cols; i++)
        free(names[i]);
    free(names);
    free(conds);
    if (!st)
        finish_entry(c, sinks, n_sinks, entry, res);
done:
    for (size_t k = 0; k < n_sinks; k++)
        sink_destroy(sinks[k]);
    return st;
}

/* The rows of regs with direction dir, largest change first, at most limit (0: all). */
static json_t *listed(sqlite3 *db, int dir, int limit)
{
    json_t *a = json_array();
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT report, key, col, base, new, delta, ratio FROM regs WHERE dir = ? "
                           "ORDER BY score DESC, report, key, col LIMIT ?",
                           -1, &q, NULL) != SQLITE_OK)
        return a;
    sqlite3_bind_int(q, 1, dir);
    sqlite3_bind_int(q, 2, limit ? limit : -1);
    while (sqlite3_step(q) == SQLITE_ROW) {
        json_t *o = json_object();
        json_object_set_new(o, "report", json_string((const char *)sqlite3_column_text(q, 0)));
        json_object_set_new(o, "key", json_string((const char *)sqlite3_column_text(q, 1)));
        json_object_set_new(o, "column", json_string((const char *)sqlite3_column_text(q, 2)));
        static const char *const names[] = {"base", "new", "delta", "ratio"};
        for (int k = 0; k < 4; k++)
            json_object_set_new(o, names[k],
                                sqlite3_column_type(q, 3 + k) == SQLITE_NULL ? json_null()
                                                                             : json_real(sqlite3_column_double(q, 3 + k)));
        json_array_append_new(a, o);
    }
    sqlite3_finalize(q);
    return a;
}

/* The Summary sheet, the page's Summary section and their twin
 * compare_summary.csv (any may be absent): the largest regressions, then
 * the largest improvements, of every report. */
static tb_status write_summary(sqlite3 *db, xlsx_book *book, html_page *page, const char *csv_path, int csv_safe,
                            tb_error *err)
{
    static const char *const heads[] = {"Kind", "Report", "Key", "Column", "Base", "New", "Delta", "Ratio"};
    tb_sink_column cols[8];
    for (size_t i = 0; i < 8; i++)
        cols[i] = (tb_sink_column){.header = heads[i]};
    tb_sink *s[3] = {NULL, NULL, NULL};
    size_t n = 0;
    sqlite3_stmt *q = NULL;
    tb_status st = TB_OK;
    /* a bar per regression and improvement: its ratio, new / base */
    static const char *const ratio[] = {"Ratio"};
    static const char *const also[] = {"Column", "Report"};
    if (book && !(st = xlsx_sheet_sink(book,
                                       &(xlsx_sheet_options){.name = "Summary", .key = "compare:summary",
                                                             .chart = {.kind = XLSX_CHART_BAR, .categories = "Key",
                                                                       .values = ratio, .n_values = 1,
                                                                       .ratio = 1}},
                                       &s[n], err)))
        n++;
    if (!st && page &&
        !(st = html_section_sink(page,
                                 &(html_section_options){
                                     .title = "Summary", .name = "summary", .lead = 1,
                                     .description = "The largest regressions (at most 50, red), then the largest "
                                                    "improvements (at most 50, green), of every report; Ratio is new "
                                                    "/ base.",
                                     .chart = {.kind = XLSX_CHART_BAR, .categories = "Key", .values = ratio,
                                               .n_values = 1, .ratio = 1},
                                     .cat_also = also, .n_cat_also = 2,
                                     .class_col = "Kind",
                                     .full_file = csv_path ? "compare_summary.csv" : NULL},
                                 &s[n], err)))
        n++;
    if (!st && csv_path &&
        !(st = csv_sink_create(csv_path, &(csv_sink_options){.formula_safe = csv_safe}, &s[n], err)))
        n++;
    for (size_t k = 0; k < n && !st; k++)
        st = s[k]->begin(s[k], cols, 8, err);
    if (st)
        goto done;
    if (sqlite3_prepare_v2(db,
                           "SELECT * FROM (SELECT 'regression', report, key, col, base, new, delta, ratio, 0 AS o, score "
                           "FROM regs WHERE dir = 1 ORDER BY score DESC LIMIT 50) UNION ALL "
                           "SELECT * FROM (SELECT 'improvement', report, key, col, base, new, delta, ratio, 1, score "
                           "FROM regs WHERE dir = -1 ORDER BY score DESC LIMIT 50) ORDER BY 9, 10 DESC",
                           -1, &q, NULL) != SQLITE_OK) {
        st = tb_error_set(err, TB_ERR_DB, "compare: %s", sqlite3_errmsg(db));
        goto done;
    }
    while (!st && sqlite3_step(q) == SQLITE_ROW) {
        tb_cell cells[8];
        for (int i = 0; i < 8; i++) {
            if (sqlite3_column_type(q, i) == SQLITE_NULL)
                cells[i] = (tb_cell){.kind = TB_CELL_NULL};
            else if (i < 4)
                cells[i] = (tb_cell){.kind = TB_CELL_TEXT, .s = (const char *)sqlite3_column_text(q, i),
                                     .n = (size_t)sqlite3_column_bytes(q, i)};
            else
                cells[i] = (tb_cell){.kind = TB_CELL_REAL, .d = sqlite3_column_double(q, i)};
        }
        for (size_t k = 0; k < n && !st; k++)
            st = s[k]->row(s[k], cells, err);
    }
    for (size_t k = 0; k < n && !st; k++)
        st = s[k]->finish(s[k], err);
done:
    sqlite3_finalize(q);
    for (size_t k = 0; k < n; k++)
        sink_destroy(s[k]);
    return st;
}

/* Does any report of the run write in format f (TB_OUT_XLSX: to the workbook)? */
static int wants(const tb_compare_job *job, unsigned f)
{
    for (size_t i = 0; i < job->spec->n_reports; i++)
        if (formats_of(job, &job->spec->reports[i]) & f)
            return 1;
    return 0;
}
#define wants_book(job) wants(job, TB_OUT_XLSX)

static json_t *side_obj(const char *db, const char *const *inputs, size_t n, const tb_window *w)
{
    json_t *o = json_object(), *in = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(in, json_string(inputs[i]));
    json_object_set_new(o, "inputs", in);
    json_object_set_new(o, "db", json_string(db));
    if (w->set)
        json_object_set_new(o, "window", manifest_window(w, NULL));
    return o;
}

/* The two runs as their sessions give them. */
static tb_status read_sides(tb_session *base, tb_session *new, sides *sd, tb_error *err)
{
    tb_session *ss[2] = {base, new};
    for (int k = 0; k < 2; k++) {
        if (!(sd->db[k] = session_db(ss[k], err)))
            return err->code;
        sd->path[k] = tb_session_db_path(ss[k]);
        sd->in[k] = tb_session_inputs(ss[k], &sd->n_in[k]);
        sd->w[k] = tb_session_window(ss[k]);
    }
    return TB_OK;
}

/* The output folder: created when missing and locked (one compare at a
 * time into it, *dir_fd); nothing the run would write there may be a file
 * it reads (an input of either side, a DB, the spec or its SQL). */
static tb_status open_out_dir(const tb_compare_job *job, const tb_spec *given, const sides *sd, file_ids *ids,
                              int *dir_fd, tb_error *err)
{
    tb_status st = nightly_out_dir(job->out_dir, job->note, job->ctx, dir_fd, err);
    if (st || (st = file_ids_collect(ids, sd->in[0], sd->n_in[0], sd->path[0], sd->db[0], err)) ||
        (st = file_ids_collect(ids, sd->in[1], sd->n_in[1], sd->path[1], sd->db[1], err)) ||
        (st = file_ids_spec(ids, given, err)))
        return st;
    st = file_ids_check_out(ids, job->out_dir, "tracebook_run", "json", err);
    if (!st && wants_book(job))
        st = file_ids_check_out(ids, job->out_dir, "compare", "xlsx", err);
    if (!st && wants(job, TB_OUT_HTML))
        st = file_ids_check_out(ids, job->out_dir, "compare", "html", err);
    if (!st && wants(job, TB_OUT_CSV))
        st = file_ids_check_out(ids, job->out_dir, "compare_summary", "csv", err);
    for (size_t i = 0; i < job->spec->n_reports && !st; i++) {
        const tb_spec_report *rep = &job->spec->reports[i];
        unsigned f = formats_of(job, rep);
        if (f & TB_OUT_CSV) {
            st = file_ids_check_out(ids, job->out_dir, rep->id, "_compare.csv", err);
            /* the parts of a split CSV: <id>_compare_<k>.csv */
            char *stem = st ? NULL : sqlite3_mprintf("%s_compare", rep->id);
            if (!st && !stem)
                return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            if (stem)
                st = file_ids_check_parts(ids, job->out_dir, stem, 0, err);
            sqlite3_free(stem);
        }
        if (!st && (f & TB_OUT_JSON))
            st = file_ids_check_out(ids, job->out_dir, rep->id, "_compare.json", err);
    }
    return st;
}

/* The workbook compare.xlsx, its about page and its Summary sheet reserved first. */
static tb_status open_book(const tb_compare_job *job, const tb_spec *given, const sides *sd, xlsx_book **book,
                           char **book_path, tb_error *err)
{
    *book_path = sqlite3_mprintf("%s/compare.xlsx", job->out_dir);
    if (!*book_path)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    const char *specname = given->path;
    xlsx_pair about[] = {{"Base", sd->path[0]}, {"New", sd->path[1]}, {"Spec", specname},
                         {"Time unit", tb_unit_name(job->unit)}};
    tb_status st = xlsx_create(*book_path,
                               &(xlsx_options){.about = about, .n_about = 4, .created = (int64_t)time(NULL)}, book,
                               err);
    return st ? st : xlsx_sheet_reserve(*book, "compare:summary", "Summary", err);
}

/* The page compare.html, headed by the two runs. */
static tb_status open_page(const tb_compare_job *job, const tb_spec *given, const sides *sd, html_page **page,
                           char **page_path, tb_error *err)
{
    *page_path = sqlite3_mprintf("%s/compare.html", job->out_dir);
    if (!*page_path)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    size_t n = 4 + sd->n_in[0] + sd->n_in[1], k = 4;
    xlsx_pair *facts = calloc(n, sizeof *facts);
    if (!facts)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    facts[0] = (xlsx_pair){"base", sd->path[0]};
    facts[1] = (xlsx_pair){"new", sd->path[1]};
    facts[2] = (xlsx_pair){"spec", given->path};
    facts[3] = (xlsx_pair){"time unit", tb_unit_name(job->unit)};
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < sd->n_in[side]; i++)
            facts[k++] = (xlsx_pair){side ? "new input" : "base input", sd->in[side][i]};
    tb_status st = html_create(*page_path, &(html_options){.title = "tracebook compare", .facts = facts,
                                                           .n_facts = k}, page, err);
    free(facts);
    return st;
}

/* Every report compared (its entry into reports), its side tables dropped after. */
static tb_status compare_all(sqlite3 *db, const tb_compare_job *job, const sides *sd, xlsx_book *book,
                             html_page *page, json_t *reports, tb_compare_result *res, tb_error *err)
{
    tb_status st = TB_OK;
    for (size_t i = 0; i < job->spec->n_reports && !st; i++) {
        const tb_spec_report *rep = &job->spec->reports[i];
        cmp c = {.db = db, .job = job, .sd = sd, .rep = rep, .t = {.rep = rep, .count_col = -1}, .err = err,
                 .book = book, .page = page};
        if (sd->w[0]->set && sd->w[1]->set)
            c.shift = iv_add(sd->w[0]->iteration_id, -sd->w[1]->iteration_id);
        json_t *entry = json_object();
        json_object_set_new(entry, "id", json_string(rep->id));
        st = compare_report(&c, rep, entry, res);
        json_array_append_new(reports, entry);
        sqlite3_finalize(c.dup);
        rk_free(&c.t);
        free(c.skipped);
        free(c.floor);
        if (!st)
            st = exec(&c, "DROP TABLE IF EXISTS s0; DROP TABLE IF EXISTS s1");
    }
    return st;
}

/* s into a field of n bytes, cut to end in "..." when longer. */
static void put_field(char *dst, size_t n, const unsigned char *s)
{
    const char *t = s ? (const char *)s : "";
    size_t len = strlen(t);
    if (len < n) {
        memcpy(dst, t, len + 1);
        return;
    }
    memcpy(dst, t, n - 4);
    memcpy(dst + n - 4, "...", 4);
}

/* The largest regressions into res->top, as regressions: in the manifest lists them. */
static void top_regressions(sqlite3 *db, tb_compare_result *res)
{
    sqlite3_stmt *q = NULL;
    res->n_top = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT report, key, col, base, new, ratio, dec FROM regs WHERE dir = 1 "
                           "ORDER BY score DESC, report, key, col LIMIT ?",
                           -1, &q, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int(q, 1, TB_COMPARE_TOP);
    while (res->n_top < TB_COMPARE_TOP && sqlite3_step(q) == SQLITE_ROW) {
        tb_compare_change *t = &res->top[res->n_top++];
        put_field(t->report, sizeof t->report, sqlite3_column_text(q, 0));
        put_field(t->key, sizeof t->key, sqlite3_column_text(q, 1));
        put_field(t->column, sizeof t->column, sqlite3_column_text(q, 2));
        t->base = sqlite3_column_double(q, 3);
        t->value = sqlite3_column_double(q, 4);
        t->ratio = sqlite3_column_type(q, 5) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 5);
        t->decimals = sqlite3_column_int(q, 6);
    }
    sqlite3_finalize(q);
}

/* tracebook_run.json: both sides, the files, the reports, every regression and the top improvements. */
static tb_status write_manifest(sqlite3 *db, const tb_compare_job *job, const tb_spec *given, const sides *sd,
                                int book, int page, int summary, json_t *reports, tb_compare_result *res,
                                tb_error *err)
{
    json_t *regs = listed(db, 1, 0), *imps = listed(db, -1, 20);
    res->regressions = json_array_size(regs);
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM regs WHERE dir = -1", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        res->improvements = (uint64_t)sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    top_regressions(db, res);
    json_t *meta = manifest_new();
    json_object_set_new(meta, "command", json_string("compare"));
    json_object_set_new(meta, "base", side_obj(sd->path[0], sd->in[0], sd->n_in[0], sd->w[0]));
    json_object_set_new(meta, "new", side_obj(sd->path[1], sd->in[1], sd->n_in[1], sd->w[1]));
    json_object_set_new(meta, "spec", json_string(given->path));
    json_object_set_new(meta, "timeunit", json_string(tb_unit_name(job->unit)));
    if (book)
        json_object_set_new(meta, "workbook", json_string("compare.xlsx"));
    if (page)
        json_object_set_new(meta, "page", json_string("compare.html"));
    if (summary)
        json_object_set_new(meta, "summary", json_string("compare_summary.csv"));
    /* the files outside the reports' entries, under a "files" key as tracebook's scanner looks for them */
    json_t *outs = json_array();
    if (summary)
        json_array_append_new(outs, json_string("compare_summary.csv"));
    if (book)
        json_array_append_new(outs, json_string("compare.xlsx"));
    if (page)
        json_array_append_new(outs, json_string("compare.html"));
    json_object_set_new(meta, "outputs", json_pack("{s:o}", "files", outs));
    json_object_set_new(meta, "reports", json_incref(reports));
    json_object_set_new(meta, "regression_count", json_integer((json_int_t)res->regressions));
    json_object_set_new(meta, "improvement_count", json_integer((json_int_t)res->improvements));
    json_object_set_new(meta, "regressions", regs);
    json_object_set_new(meta, "top_improvements", imps);
    return nightly_manifest(job->out_dir, meta, job->written, job->ctx, err);
}

/* v with the digits of its column (decimals >= 0: fixed, trailing zeros dropped; else %g's 10). */
static void change_value(char *buf, size_t n, double v, int decimals)
{
    if (decimals < 0) {
        snprintf(buf, n, "%.10g", v);
        return;
    }
    snprintf(buf, n, "%.*f", decimals, v);
    char *dot = strchr(buf, '.');
    if (!dot)
        return;
    char *e = buf + strlen(buf);
    while (e > dot + 1 && e[-1] == '0')
        *--e = 0;
    if (e == dot + 1)
        *dot = 0;
}

void tb_compare_change_text(const tb_compare_change *c, char *buf, size_t n)
{
    char b[48], v[48], r[32] = "";
    change_value(b, sizeof b, c->base, c->decimals);
    change_value(v, sizeof v, c->value, c->decimals);
    if (c->ratio == c->ratio)
        snprintf(r, sizeof r, " (x%.4f)", c->ratio);
    snprintf(buf, n, "%s: %s: %s %s -> %s%s", c->report, c->key, c->column, b, v, r);
}

tb_status tb_compare_write(tb_session *base, tb_session *new, const tb_compare_job *job, tb_compare_result *res,
                           tb_error *err)
{
    sides sd;
    tb_status st = read_sides(base, new, &sd, err);
    if (st)
        return st;
    sqlite3 *db = NULL;
    json_t *reports = json_array();
    char *book_path = NULL, *summary_path = NULL, *page_path = NULL;
    xlsx_book *book = NULL;
    html_page *page = NULL;
    file_ids ids = {0};
    int dir_fd = -1;
    memset(res, 0, sizeof *res);
    if (!reports)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    /* an msprof reports file compares msprof's summaries, as report runs them */
    const tb_spec **specs = NULL;
    tb_spec *summaries = NULL;
    const tb_spec *given = job->spec;
    tb_compare_job expanded;
    if ((st = msprof_reports_expand(&given, 1, &specs, &summaries, job->note, job->ctx, err))) {
        json_decref(reports);
        return st;
    }
    if (summaries) {
        expanded = *job;
        expanded.spec = summaries;
        job = &expanded;
    }
    if ((st = open_out_dir(job, given, &sd, &ids, &dir_fd, err)))
        goto done;
    /* "": a private on-disk scratch DB, removed when closed; pages spill to disk */
    if (db_open("", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db) != SQLITE_OK) {
        st = tb_error_set(err, TB_ERR_DB, "compare: cannot open a scratch database");
        goto done;
    }
    cmp c0 = {.db = db, .job = job, .sd = &sd, .err = err};
    if ((st = exec(&c0, "CREATE TABLE regs(report, key, col, dir, base, new, delta, ratio, score, dec)")) ||
        (wants_book(job) && (st = open_book(job, given, &sd, &book, &book_path, err))) ||
        (wants(job, TB_OUT_HTML) && (st = open_page(job, given, &sd, &page, &page_path, err))) ||
        (st = compare_all(db, job, &sd, book, page, reports, res, err)))
        goto done;
    if (wants(job, TB_OUT_CSV) && !(summary_path = sqlite3_mprintf("%s/compare_summary.csv", job->out_dir))) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((book || page || summary_path) && (st = write_summary(db, book, page, summary_path, job->csv_safe, err)))
        goto done;
    if (summary_path && job->written)
        job->written(job->ctx, summary_path);
    if (book) {
        if ((st = xlsx_commit(book, err)))
            goto done;
        if (job->written)
            job->written(job->ctx, book_path);
    }
    if (page) {
        if ((st = html_commit(page, err)))
            goto done;
        if (job->written)
            job->written(job->ctx, page_path);
    }
    st = write_manifest(db, job, given, &sd, book != NULL, page != NULL, summary_path != NULL, reports, res, err);
done:
    xlsx_destroy(book);
    html_destroy(page);
    sqlite3_free(page_path);
    sqlite3_free(book_path);
    sqlite3_free(summary_path);
    json_decref(reports);
    sqlite3_close(db);
    file_ids_free(&ids);
    tb_spec_free(summaries);
    free(specs);
    if (dir_fd >= 0)
        close(dir_fd);
    return st;
}
