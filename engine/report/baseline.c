/* SPDX-License-Identifier: MIT */
/*
 * baseline.c - `report --base`: each figure of a `baseline: true` report
 * beside the base run's value, the change and the ratio.
 *
 * baseline_collect() runs each such report twice into memory, with a
 * collecting sink: on the base run's session and on this run's DB. The
 * rows are keyed by the report's `key:` columns (a key column the runner
 * left out, the Rank of a one-rank DB, is no part of the key) and sorted by
 * key; then the two runs must match before any file is written: the same
 * columns, no key twice, every key of each run in the other. The report is
 * meant for a summary (one row per rank): both runs' rows stay in memory.
 *
 * baseline_wrap() puts a sink in front of each writer of the report. A
 * row of the report becomes a row per figure (each column that is no key):
 * the key columns, Figure (the column's header, with its unit), Value (this
 * run's), Base (the base run's), Change and Ratio; a text figure (the top
 * kernel's name) has no change nor ratio. Numbers go out as scaled integers,
 * which every writer writes exactly (no binary float noise) and the
 * workbook formats by their decimals: Value and Base with the more decimals
 * of the two (a scaled integer's own, or the fewest up to 9 that hold a
 * real), Change exact at those decimals (new - base as integers), Ratio new
 * / base rounded to 4 decimals, empty when the base is 0 or either value is
 * empty.
 *
 * tb_run_base() finds the base run: an earlier report folder of the same
 * spec (its kept DB, else its inputs, and its window), or inputs as -dir
 * takes them.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "output/output.h"
#include "report/baseline.h"
#include "report/manifest.h"
#include "session/session.h"
#include "tracebook/report.h"

#define KEY_SEP '\x1f'
#define MAX_ROWS 1000000
#define RATIO_DECIMALS 4
#define NO_BASELINE "--base: no report of the run has 'baseline: true' (the review's Summary has: --spec builtin:review)"

/* A row's key and index, for sorting. */
struct kref {
    const char *key;
    size_t row;
};

/* One run's rows of one report. */
typedef struct side {
    size_t n_cols;
    char **headers;        /* owned */
    char **names;          /* owned, NULL where the runner gave none */
    tb_sink_column *cols;  /* the columns as given, strings pointing into headers/names */
    int *is_key;
    tb_cell *cells;        /* n_rows * n_cols; TEXT cells' s owned */
    char **keys;           /* per row (owned, sqlite3_free) */
    size_t n_rows, cap;
    struct kref *sorted;   /* the rows by key */
    int ran;
} side;

typedef struct bl_report {
    const tb_spec_report *rep;
    side s[2];             /* 0: base, 1: this run */
    int *kind;             /* per column: 0 key, 1 figure, 2 text */
} bl_report;

struct baseline {
    bl_report *v;
    size_t n;
};

/* ---- collecting ---------------------------------------------------------- */

typedef struct collector {
    tb_sink vt;
    bl_report *r;
    side *sd;
} collector;

static tb_status nomem(tb_error *err)
{
    return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

static int named_key(const tb_spec_report *rep, const char *name)
{
    for (size_t k = 0; name && k < rep->n_key; k++)
        if (!strcmp(rep->key[k], name))
            return 1;
    return 0;
}

static tb_status col_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    collector *c = (collector *)s;
    side *sd = c->sd;
    if (sd->cols) /* a second sink of the same report (a run in parts): its rows follow the first's */
        return n == sd->n_cols ? TB_OK
                               : tb_error_set(err, TB_ERR_INTERNAL, "report '%s': %zu columns, then %zu", c->r->rep->id,
                                              sd->n_cols, n);
    sd->n_cols = n;
    sd->headers = calloc(n + 1, sizeof *sd->headers);
    sd->names = calloc(n + 1, sizeof *sd->names);
    sd->cols = calloc(n + 1, sizeof *sd->cols);
    sd->is_key = calloc(n + 1, sizeof *sd->is_key);
    if (!sd->headers || !sd->names || !sd->cols || !sd->is_key)
        return nomem(err);
    for (size_t i = 0; i < n; i++) {
        sd->cols[i] = cols[i];
        if (!(sd->headers[i] = strdup(cols[i].header ? cols[i].header : "")) ||
            (cols[i].name && !(sd->names[i] = strdup(cols[i].name))))
            return nomem(err);
        sd->cols[i].header = sd->headers[i];
        sd->cols[i].name = sd->names[i];
        sd->is_key[i] = named_key(c->r->rep, cols[i].name);
    }
    return TB_OK;
}

/* The decimal text of a cell (text cells' bytes as they are) appended to b. */
static void cell_text(const tb_cell *c, sqlite3_str *b)
{
    char num[64];
    switch (c->kind) {
    case TB_CELL_NULL:
        sqlite3_str_appendall(b, "(empty)");
        break;
    case TB_CELL_INT:
        numfmt_scaled(c->i, c->scale, num);
        sqlite3_str_appendall(b, num);
        break;
    case TB_CELL_REAL:
        snprintf(num, sizeof num, "%.17g", c->d);
        sqlite3_str_appendall(b, num);
        break;
    case TB_CELL_TEXT:
        sqlite3_str_append(b, c->s, (int)c->n);
        break;
    }
}

static tb_status col_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    collector *c = (collector *)s;
    side *sd = c->sd;
    if (sd->n_rows == sd->cap) {
        if (sd->n_rows >= MAX_ROWS)
            return tb_error_set(err, TB_ERR_USAGE, "report '%s': more than %d rows to set beside the base run's "
                                "(baseline: true is meant for a summary)", c->r->rep->id, MAX_ROWS);
        size_t cap = sd->cap ? 2 * sd->cap : 16;
        tb_cell *nc = realloc(sd->cells, cap * (sd->n_cols ? sd->n_cols : 1) * sizeof *nc);
        if (nc)
            sd->cells = nc;
        char **nk = nc ? realloc(sd->keys, cap * sizeof *nk) : NULL;
        if (!nk)
            return nomem(err);
        sd->keys = nk;
        sd->cap = cap;
    }
    tb_cell *row = sd->cells + sd->n_rows * sd->n_cols;
    /* each key column as KEY_SEP, its name, a blank and its value ("" without one: never empty) */
    sqlite3_str *key = sqlite3_str_new(NULL);
    for (size_t i = 0; i < sd->n_cols; i++) {
        row[i] = cells[i];
        if (cells[i].kind == TB_CELL_TEXT && !(row[i].s = dup_n(cells[i].s, cells[i].n))) {
            for (size_t k = 0; k < i; k++)
                if (row[k].kind == TB_CELL_TEXT)
                    free((char *)row[k].s);
            sqlite3_free(sqlite3_str_finish(key));
            return nomem(err);
        }
        if (!sd->is_key[i])
            continue;
        sqlite3_str_appendchar(key, 1, KEY_SEP);
        sqlite3_str_appendf(key, "%s ", sd->names[i] ? sd->names[i] : sd->headers[i]);
        cell_text(&cells[i], key);
    }
    sqlite3_str_appendchar(key, 1, KEY_SEP);
    sd->keys[sd->n_rows] = sqlite3_str_finish(key);
    if (!sd->keys[sd->n_rows]) {
        for (size_t i = 0; i < sd->n_cols; i++)
            if (row[i].kind == TB_CELL_TEXT)
                free((char *)row[i].s);
        return nomem(err);
    }
    sd->n_rows++;
    return TB_OK;
}

static tb_status col_finish(tb_sink *s, tb_error *err)
{
    (void)s;
    (void)err;
    return TB_OK;
}

static void col_destroy(tb_sink *s)
{
    free(s);
}

static void side_free(side *sd)
{
    for (size_t r = 0; r < sd->n_rows; r++) {
        for (size_t i = 0; i < sd->n_cols; i++)
            if (sd->cells[r * sd->n_cols + i].kind == TB_CELL_TEXT)
                free((char *)sd->cells[r * sd->n_cols + i].s);
        sqlite3_free(sd->keys[r]);
    }
    for (size_t i = 0; sd->headers && i < sd->n_cols; i++) {
        free(sd->headers[i]);
        free(sd->names ? sd->names[i] : NULL);
    }
    free(sd->headers);
    free(sd->names);
    free(sd->cols);
    free(sd->is_key);
    free(sd->cells);
    free(sd->keys);
    free(sd->sorted);
}

void baseline_free(baseline *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++) {
        side_free(&b->v[i].s[0]);
        side_free(&b->v[i].s[1]);
        free(b->v[i].kind);
    }
    free(b->v);
    free(b);
}

/* ---- running the reports ---------------------------------------------------- */

typedef struct collect_ctx {
    baseline *b;
    int side;
} collect_ctx;

static bl_report *find_report(const baseline *b, const tb_spec_report *rep)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->v[i].rep == rep || !strcmp(b->v[i].rep->id, rep->id))
            return &b->v[i];
    return NULL;
}

static tb_status open_collect(void *ctx, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                              const char *label, tb_sink **out, tb_error *err)
{
    (void)spec;
    (void)format;
    (void)label;
    collect_ctx *cc = ctx;
    bl_report *r = find_report(cc->b, rep);
    collector *c = calloc(1, sizeof *c);
    if (!r || !c) {
        free(c);
        return r ? nomem(err) : tb_error_set(err, TB_ERR_INTERNAL, "report '%s' not collected", rep->id);
    }
    c->vt = (tb_sink){.begin = col_begin, .row = col_row, .finish = col_finish, .destroy = col_destroy};
    c->r = r;
    c->sd = &r->s[cc->side];
    c->sd->ran = 1;
    *out = &c->vt;
    return TB_OK;
}

/* Is report id among o's only (or is there no only)? */
static int wanted(const tb_run_options *o, const char *id)
{
    if (!o->only)
        return 1;
    for (size_t i = 0; i < o->n_only; i++)
        if (!strcmp(o->only[i], id))
            return 1;
    return 0;
}

/* b's reports: those of o with baseline set (and wanted); their ids in *ids (new). */
static tb_status pick_reports(baseline *b, const tb_run_options *o, const char ***ids, tb_error *err)
{
    size_t cap = 0;
    for (size_t s = 0; s < o->n_specs; s++)
        cap += o->specs[s]->n_reports;
    if (!(b->v = calloc(cap + 1, sizeof *b->v)) || !(*ids = calloc(cap + 1, sizeof **ids)))
        return nomem(err);
    for (size_t s = 0; s < o->n_specs; s++)
        for (size_t i = 0; i < o->specs[s]->n_reports; i++) {
            const tb_spec_report *rep = &o->specs[s]->reports[i];
            if (!rep->baseline || !wanted(o, rep->id))
                continue;
            (*ids)[b->n] = rep->id;
            b->v[b->n++].rep = rep;
        }
    if (!b->n && o->only)
        return tb_error_set(err, TB_ERR_USAGE, "--base: no report chosen by --report has 'baseline: true'");
    if (!b->n)
        return tb_error_set(err, TB_ERR_USAGE, NO_BASELINE);
    return TB_OK;
}

static int by_key(const void *a, const void *b)
{
    const struct kref *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

/* Looks key up in sd (sorted): its row, or -1. */
static long find_key(const side *sd, const char *key)
{
    size_t lo = 0, hi = sd->n_rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(sd->sorted[mid].key, key);
        if (!c)
            return (long)sd->sorted[mid].row;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* A key as messages show it ("Rank 3, Device 0"; "the one row" without a key column), into buf. */
static const char *shown(const char *key, char *buf, size_t n)
{
    size_t o = 0;
    for (const char *p = key + 1; *p && o + 3 < n; p++) {
        if (*p == KEY_SEP) {
            if (p[1])
                buf[o++] = ',', buf[o++] = ' ';
        } else
            buf[o++] = *p;
    }
    buf[o] = 0;
    if (!o)
        snprintf(buf, n, "the one row (no key column)");
    return buf;
}

/* The headers of sd, joined with ", ", into buf. */
static const char *header_list(const side *sd, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sd->n_cols && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%s", i ? ", " : "", sd->headers[i]);
    return buf;
}

/* Sorts sd's rows by key; a key twice is an error. */
static tb_status sort_side(const bl_report *r, side *sd, const char *run, tb_error *err)
{
    if (!(sd->sorted = calloc(sd->n_rows + 1, sizeof *sd->sorted)))
        return nomem(err);
    for (size_t i = 0; i < sd->n_rows; i++)
        sd->sorted[i] = (struct kref){.key = sd->keys[i], .row = i};
    qsort(sd->sorted, sd->n_rows, sizeof *sd->sorted, by_key);
    char k[512];
    for (size_t i = 1; i < sd->n_rows; i++)
        if (!strcmp(sd->sorted[i].key, sd->sorted[i - 1].key))
            return tb_error_set(err, TB_ERR_USAGE, "report '%s': %s has two rows of key %s: its rows cannot be "
                                "set beside the other run's", r->rep->id, run, shown(sd->sorted[i].key, k, sizeof k));
    return TB_OK;
}

static int typed_number(tb_col_type t)
{
    return t == TB_COL_DUR_NS || t == TB_COL_TS_NS || t == TB_COL_RATIO_PCT || t == TB_COL_MEM_B;
}

/* Column i of r: 0 a key, 1 a figure (numbers, or typed), 2 text. */
static int column_kind(const bl_report *r, size_t i)
{
    if (r->s[1].is_key[i])
        return 0;
    if (typed_number(r->s[1].cols[i].type))
        return 1;
    int numbers = 0;
    for (int k = 0; k < 2; k++)
        for (size_t row = 0; row < r->s[k].n_rows; row++) {
            tb_cell_kind c = r->s[k].cells[row * r->s[k].n_cols + i].kind;
            if (c == TB_CELL_TEXT)
                return 2;
            numbers |= c != TB_CELL_NULL;
        }
    return numbers ? 1 : 2;
}

/* The two runs' rows of r match: the same columns, each key once, every key in both. */
static tb_status check_report(bl_report *r, const char *base_name, tb_error *err)
{
    side *b = &r->s[0], *n = &r->s[1];
    char run[600], k[512];
    snprintf(run, sizeof run, "the base run %s", base_name);
    if (!n->ran)
        return TB_OK; /* skipped here: nothing is written */
    if (!b->ran)
        return tb_error_set(err, TB_ERR_USAGE, "report '%s' was skipped on %s (its data lacks what the report "
                            "requires): nothing to set this run's rows beside", r->rep->id, run);
    int same = b->n_cols == n->n_cols;
    for (size_t i = 0; same && i < n->n_cols; i++)
        same = !strcmp(b->headers[i], n->headers[i]);
    if (!same) {
        char hb[1024], hn[1024];
        return tb_error_set(err, TB_ERR_USAGE, "report '%s' has other columns on %s (%s) than on this run (%s): "
                            "a run of another spec or unit, or with a single rank where the other has several",
                            r->rep->id, run, header_list(b, hb, sizeof hb), header_list(n, hn, sizeof hn));
    }
    tb_status st;
    if ((st = sort_side(r, b, run, err)) || (st = sort_side(r, n, "this run", err)))
        return st;
    for (size_t i = 0; i < n->n_rows; i++)
        if (find_key(b, n->keys[i]) < 0)
            return tb_error_set(err, TB_ERR_USAGE, "report '%s': %s of this run is not in %s", r->rep->id,
                                shown(n->keys[i], k, sizeof k), run);
    for (size_t i = 0; i < b->n_rows; i++)
        if (find_key(n, b->keys[i]) < 0)
            return tb_error_set(err, TB_ERR_USAGE, "report '%s': %s of %s is not in this run", r->rep->id,
                                shown(b->keys[i], k, sizeof k), run);
    if (!(r->kind = calloc(n->n_cols + 1, sizeof *r->kind)))
        return nomem(err);
    for (size_t i = 0; i < n->n_cols; i++)
        r->kind[i] = column_kind(r, i);
    return TB_OK;
}

/* Runs b's reports on one run (base: its session; else o's DB) into side k. */
static tb_status run_side(baseline *b, int k, tb_session *base, const tb_run_options *o, int replay,
                          const char **ids, tb_error *err)
{
    collect_ctx cc = {.b = b, .side = k};
    tb_run_options r = *o;
    r.only = ids;
    r.n_only = b->n;
    r.formats = TB_OUT_CSV;
    r.open_sink = open_collect;
    r.sink_ctx = &cc;
    r.sink_done = NULL;
    r.report_done = NULL;
    r.note = NULL;
    r.ctx = NULL;
    tb_run_result rr;
    if (base)
        return tb_session_run(base, &r, &rr, err);
    return runner_run(&r, &(run_part){.replay = replay}, &rr, err);
}

tb_status baseline_collect(tb_session *base, const char *base_name, const tb_run_options *o, int replay,
                           baseline **out, tb_error *err)
{
    *out = NULL;
    baseline *b = calloc(1, sizeof *b);
    const char **ids = NULL;
    if (!b)
        return nomem(err);
    tb_status st = pick_reports(b, o, &ids, err);
    if (!st)
        st = run_side(b, 0, base, o, replay, ids, err);
    if (!st)
        st = run_side(b, 1, NULL, o, replay, ids, err);
    for (size_t i = 0; i < b->n && !st; i++)
        st = check_report(&b->v[i], base_name, err);
    free(ids);
    if (st)
        baseline_free(b);
    else
        *out = b;
    return st;
}

/* ---- the rows beside the base run's ------------------------------------------- */

typedef struct wrapper {
    tb_sink vt;
    tb_sink *inner;
    const bl_report *r;
    tb_sink_column *cols;
    size_t n_out;
    tb_cell *out;
} wrapper;

/* c as an integer of *scale decimals: 0 when it is a number, -1 else. */
static int scaled_of(const tb_cell *c, int64_t *v, int *scale)
{
    if (c->kind == TB_CELL_INT) {
        *v = c->i;
        *scale = c->scale;
        return 0;
    }
    if (c->kind != TB_CELL_REAL || !isfinite(c->d))
        return -1;
    /* the fewest decimals (up to 9, within a double's 15 digits) that hold the value */
    double p = 1;
    for (int d = 0; d <= 9; d++, p *= 10) {
        double y = c->d * p;
        if (fabs(y) > 9e14)
            return d ? (*v = llround(c->d * p / 10), *scale = d - 1, 0) : -1;
        if (fabs(y - nearbyint(y)) <= 1e-6 || d == 9) {
            *v = llround(y);
            *scale = d;
            return 0;
        }
    }
    return -1;
}

static double value_of(const tb_cell *c)
{
    if (c->kind == TB_CELL_REAL)
        return c->d;
    double p = 1;
    for (int k = 0; k < c->scale; k++)
        p *= 10;
    return (double)c->i / p;
}

/* new - base, exact: both at the larger of their decimals. */
static tb_cell change_of(const tb_cell *nv, const tb_cell *bv)
{
    int64_t a, b;
    int sa, sb;
    tb_cell out = {.kind = TB_CELL_NULL};
    if (scaled_of(nv, &a, &sa) || scaled_of(bv, &b, &sb))
        return out;
    for (; sa < sb; sa++)
        if (__builtin_mul_overflow(a, 10, &a))
            return out;
    for (; sb < sa; sb++)
        if (__builtin_mul_overflow(b, 10, &b))
            return out;
    if (__builtin_sub_overflow(a, b, &out.i))
        return out;
    out.kind = TB_CELL_INT;
    out.scale = sa;
    return out;
}

/* new / base to RATIO_DECIMALS decimals; empty when base is 0 or either is empty. */
static tb_cell ratio_of(const tb_cell *nv, const tb_cell *bv)
{
    tb_cell out = {.kind = TB_CELL_NULL};
    if ((nv->kind != TB_CELL_INT && nv->kind != TB_CELL_REAL) || (bv->kind != TB_CELL_INT && bv->kind != TB_CELL_REAL))
        return out;
    double b = value_of(bv), r = value_of(nv) / b, p = 1;
    for (int k = 0; k < RATIO_DECIMALS; k++)
        p *= 10;
    if (b == 0 || !isfinite(r) || fabs(r * p) > 9e15)
        return out;
    out.kind = TB_CELL_INT;
    out.scale = RATIO_DECIMALS;
    out.i = llround(r * p);
    return out;
}

static const char *const FIGURE_COLS[] = {"Figure", "Value", "Base", "Change", "Ratio"};
#define N_FIGURE_COLS 5

static tb_status wrap_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    wrapper *w = (wrapper *)s;
    const bl_report *r = w->r;
    if (n != r->s[1].n_cols)
        return tb_error_set(err, TB_ERR_INTERNAL, "report '%s': %zu columns, %zu when collected", r->rep->id, n,
                            r->s[1].n_cols);
    if (!(w->cols = calloc(n + N_FIGURE_COLS, sizeof *w->cols)) || !(w->out = calloc(n + N_FIGURE_COLS, sizeof *w->out)))
        return nomem(err);
    /* the key columns as they are, then a figure a row: its header (with its unit), this run's value and the
     * base's, the change and the ratio; numbers as scaled integers, each in the format of its decimals */
    for (size_t i = 0; i < n; i++)
        if (r->kind[i] == 0)
            w->cols[w->n_out++] = cols[i];
    for (size_t k = 0; k < N_FIGURE_COLS; k++)
        w->cols[w->n_out++] = (tb_sink_column){.header = FIGURE_COLS[k], .name = FIGURE_COLS[k], .type = TB_COL_PLAIN};
    return w->inner->begin(w->inner, w->cols, w->n_out, err);
}

/* c as a scaled integer of at least min_scale decimals (exact digits), text as it is, empty as empty. */
static tb_cell exact(const tb_cell *c, int min_scale)
{
    tb_cell out = *c;
    int64_t v;
    int scale;
    if (scaled_of(c, &v, &scale))
        return out;
    for (; scale < min_scale; scale++)
        if (__builtin_mul_overflow(v, 10, &v))
            return out;
    return (tb_cell){.kind = TB_CELL_INT, .i = v, .scale = scale};
}

/* The decimals a figure's value and base are shown with: the more of the two. */
static int figure_scale(const tb_cell *a, const tb_cell *b)
{
    int64_t v;
    int sa = 0, sb = 0;
    if (scaled_of(a, &v, &sa))
        sa = 0;
    if (scaled_of(b, &v, &sb))
        sb = 0;
    return sa > sb ? sa : sb;
}

/* This run's row cells beside the base's row base: a row per figure. */
static tb_status figure_rows(wrapper *w, const tb_cell *cells, const tb_cell *base, tb_error *err)
{
    const bl_report *r = w->r;
    size_t nk = 0;
    for (size_t i = 0; i < r->s[1].n_cols; i++)
        if (r->kind[i] == 0)
            w->out[nk++] = cells[i];
    for (size_t i = 0; i < r->s[1].n_cols; i++) {
        if (r->kind[i] == 0)
            continue;
        const char *h = r->s[1].headers[i];
        tb_cell *o = w->out + nk;
        o[0] = (tb_cell){.kind = TB_CELL_TEXT, .s = h, .n = strlen(h)};
        int sc = figure_scale(&cells[i], &base[i]);
        o[1] = exact(&cells[i], sc);
        o[2] = exact(&base[i], sc);
        o[3] = o[4] = (tb_cell){.kind = TB_CELL_NULL};
        if (r->kind[i] == 1) {
            o[3] = change_of(&cells[i], &base[i]);
            o[4] = ratio_of(&cells[i], &base[i]);
        }
        tb_status st = w->inner->row(w->inner, w->out, err);
        if (st)
            return st;
    }
    return TB_OK;
}

static tb_status wrap_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    wrapper *w = (wrapper *)s;
    const bl_report *r = w->r;
    const side *b = &r->s[0], *n = &r->s[1];
    sqlite3_str *key = sqlite3_str_new(NULL);
    for (size_t i = 0; i < n->n_cols; i++)
        if (n->is_key[i]) {
            sqlite3_str_appendchar(key, 1, KEY_SEP);
            sqlite3_str_appendf(key, "%s ", n->names[i] ? n->names[i] : n->headers[i]);
            cell_text(&cells[i], key);
        }
    sqlite3_str_appendchar(key, 1, KEY_SEP);
    char *k = sqlite3_str_finish(key);
    if (!k)
        return nomem(err);
    long at = find_key(b, k);
    if (at < 0) {
        char buf[512];
        tb_status st = tb_error_set(err, TB_ERR_INTERNAL, "report '%s': %s was not in its first run", r->rep->id,
                                    shown(k, buf, sizeof buf));
        sqlite3_free(k);
        return st;
    }
    sqlite3_free(k);
    return figure_rows(w, cells, b->cells + (size_t)at * b->n_cols, err);
}

static tb_status wrap_finish(tb_sink *s, tb_error *err)
{
    wrapper *w = (wrapper *)s;
    return w->inner->finish(w->inner, err);
}

static void wrap_destroy(tb_sink *s)
{
    wrapper *w = (wrapper *)s;
    sink_destroy(w->inner);
    free(w->cols);
    free(w->out);
    free(w);
}

tb_status baseline_wrap(const baseline *b, const tb_spec_report *rep, tb_sink *inner, tb_sink **out, tb_error *err)
{
    *out = inner;
    const bl_report *r = b ? find_report(b, rep) : NULL;
    if (!r || !r->s[1].ran)
        return TB_OK;
    wrapper *w = calloc(1, sizeof *w);
    if (!w) {
        sink_destroy(inner);
        *out = NULL;
        return nomem(err);
    }
    w->vt = (tb_sink){.begin = wrap_begin, .row = wrap_row, .finish = wrap_finish, .destroy = wrap_destroy};
    w->inner = inner;
    w->r = r;
    *out = &w->vt;
    return TB_OK;
}

int baseline_has(const baseline *b, const tb_spec_report *rep)
{
    const bl_report *r = b ? find_report(b, rep) : NULL;
    return r && r->s[1].ran;
}

tb_sink *baseline_inner(tb_sink *s)
{
    return s && s->begin == wrap_begin ? ((wrapper *)s)->inner : s;
}

/* ---- the base run ---------------------------------------------------------------- */

/* Does the earlier run m hold report id, run (not skipped)? */
static int ran_report(json_t *m, const char *id)
{
    json_t *reps = json_object_get(m, "reports"), *r;
    size_t i;
    json_array_foreach(reps, i, r) {
        const char *rid = json_string_value(json_object_get(r, "id"));
        if (rid && !strcmp(rid, id) && !json_object_get(r, "skipped"))
            return 1;
    }
    return 0;
}

/* The folder dir is an earlier run of every baseline report of specs, and not out_dir. */
static tb_status check_folder(const char *dir, const tb_spec *const *specs, size_t n_specs, const char *out_dir,
                              tb_error *err)
{
    if (tb_run_folder_is(dir, out_dir))
        return tb_error_set(err, TB_ERR_USAGE, "--base %s is this run's output folder: its files would be "
                            "replaced; write this run elsewhere (-o)", dir);
    json_error_t je;
    json_t *m = manifest_load(dir, &je);
    if (!m)
        return tb_error_at(err, TB_ERR_PARSE, dir, je.line, je.column, -1, "tracebook_run.json: %s", je.text);
    tb_status st = TB_OK;
    for (size_t s = 0; s < n_specs && !st; s++)
        for (size_t i = 0; i < specs[s]->n_reports && !st; i++) {
            const tb_spec_report *rep = &specs[s]->reports[i];
            if (!rep->baseline || ran_report(m, rep->id))
                continue;
            const char *was = json_string_value(json_object_get(json_array_get(json_object_get(m, "specs"), 0),
                                                                "path"));
            st = tb_error_set(err, TB_ERR_USAGE, "--base %s: not a run of %s: the run (spec %s) wrote no report "
                              "'%s'; give an earlier run of the same spec", dir, specs[s]->path,
                              was ? was : "unknown", rep->id);
        }
    json_decref(m);
    return st;
}

tb_status tb_run_base(const char *const *given, size_t n, const tb_spec *const *specs, size_t n_specs,
                      const char *out_dir, char ***inputs, size_t *n_inputs, tb_window *w, tb_error *err)
{
    *inputs = NULL;
    *n_inputs = 0;
    int folder = n == 1 && tb_run_folder(given[0]), any = 0;
    for (size_t s = 0; s < n_specs; s++)
        for (size_t i = 0; i < specs[s]->n_reports; i++)
            any |= specs[s]->reports[i].baseline;
    if (!any)
        return tb_error_set(err, TB_ERR_USAGE, NO_BASELINE);
    tb_status st = TB_OK;
    if (folder) {
        char *spec = NULL;
        tb_window bw;
        if ((st = check_folder(given[0], specs, n_specs, out_dir, err)) ||
            (st = tb_run_spec_window(given[0], &spec, &bw, err)))
            return st;
        free(spec);
        /* the base as it ran: its window, or the whole run */
        if (bw.set && bw.iteration_count < 1)
            bw.iteration_count = 1;
        *w = bw;
    }
    return tb_run_inputs(given, n, inputs, n_inputs, err);
}
