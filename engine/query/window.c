/* SPDX-License-Identifier: MIT */
/*
 * window.c - the iteration window: every table and view sees only the
 * selected iterations.
 *
 * The stored tables and views of a unified DB are window-free. For a run
 * with a window, this file computes each rank's time range and creates TEMP
 * views with the names of the stored tables and views: SQLite resolves an
 * unqualified name in the temp schema first, so report SQL (and the TEMP
 * copies of the stored views, which name the tables unqualified) reads the
 * filtered rows without knowing a window exists.
 *
 * The range of iterations [I, I+N-1] of a rank (formats: msprof's rule):
 * start = end of the latest iteration, of any model, that ended before
 * iteration I started (0 if none); end = end of iteration I+N-1.
 *   graph mode (model M): iterations are TB_ITERATION rows of model M, I
 *       counting the model's executions (indexId);
 *   step mode (M = 4294967295): iterations are STEP_TIME steps, with the
 *       device ranges of metrics/steps.h (the work each step's calls
 *       launched). Device tasks and communication ops are kept by
 *       membership: launched by a call in one of the window's steps, or,
 *       when no step holds their launching call (or they have none),
 *       starting inside the device range.
 * Filters, chosen by the columns a table has:
 *   device tables (TASK, COMMUNICATION_OP, OVERLAP_ANALYSIS): start inside
 *       [start, end);
 *   other tables with startNs/endNs (host calls, markers, events): the host
 *       rule, start inside [start, end] or starting before and spanning start;
 *   timestampNs/timestamp samples: inside [start, end];
 *   per-task tables (globalTaskId, no time): tasks that are in the window;
 *   STEP_TIME (step mode) and TB_ITERATION (graph mode): by id;
 *   TB_STEP_TRACE_TIME (step mode: a step trace as loaded): by its step.
 * A rank filter (tb_window.rank_set), alone or with the iterations, keeps
 * the rows of one rank in every table that has a rankId.
 * Tables without a rankId or a time (strings, enums, metadata, summaries
 * copied from the input) are not filtered.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/steps.h"
#include "spec/spec.h"
#include "query/window.h"
#include "util/sort.h"
#include "util/vec.h"

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static int buf_add(buf *b, const char *s)
{
    size_t len = strlen(s);
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len + 1);
    b->n += len;
    return 0;
}

static tb_status db_error(sqlite3 *db, tb_error *err, const char *what)
{
    return tb_error_set(err, TB_ERR_DB, "window: %s: %s", what, sqlite3_errmsg(db));
}

static tb_status exec(sqlite3 *db, const char *sql, tb_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        tb_error_set(err, TB_ERR_DB, "window: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return TB_ERR_DB;
    }
    return TB_OK;
}

/* Lists what a DB holds, for the error that names an unknown model or
 * iteration: "model 1 (iterations 1-10), steps 1-5". */
static void list_available(sqlite3 *db, char *out, size_t n)
{
    size_t used = 0;
    out[0] = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
            "SELECT modelId, min(indexId), max(indexId) FROM main.TB_ITERATION "
            "GROUP BY modelId ORDER BY modelId", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW && used < n) {
            int k = snprintf(out + used, n - used, "%smodel %" PRId64 " (iterations %" PRId64 "-%" PRId64 ")",
                             used ? ", " : "", (int64_t)sqlite3_column_int64(st, 0),
                             (int64_t)sqlite3_column_int64(st, 1), (int64_t)sqlite3_column_int64(st, 2));
            if (k > 0)
                used += (size_t)k;
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    if (used < n && sqlite3_prepare_v2(db, "SELECT min(id), max(id) FROM main.STEP_TIME", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        int k = snprintf(out + used, n - used, "%sstep mode, model %lld (steps %" PRId64 "-%" PRId64 ")",
                         used ? ", " : "", (long long)TB_STEP_MODEL_ID, (int64_t)sqlite3_column_int64(st, 0),
                         (int64_t)sqlite3_column_int64(st, 1));
        if (k > 0)
            used += (size_t)k;
    }
    sqlite3_finalize(st);
    if (!out[0])
        snprintf(out, n, "no iterations or steps");
}

/*
 * The per-rank iteration table both modes reduce to: TEMP tb_iter(rankId,
 * id, startNs, endNs, hostStartNs, hostEndNs), one row per iteration (graph
 * mode: the model's executions, every device of the rank folded together;
 * step mode: steps with their device ranges), plus tb_iter_any(rankId,
 * endNs) holding the ends of every iteration of any model, for the start
 * rule. Step mode fills s with the steps and their launching calls.
 */
static tb_status build_iterations(sqlite3 *db, const tb_window *w, steps *s, tb_error *err)
{
    tb_status st = exec(db,
        "CREATE TEMP TABLE tb_iter(rankId INTEGER, id INTEGER, startNs INTEGER, endNs INTEGER, "
        "  hostStartNs INTEGER, hostEndNs INTEGER);"
        "CREATE TEMP TABLE tb_iter_any(rankId INTEGER, endNs INTEGER);", err);
    if (st)
        return st;
    char sql[1024];
    if (w->model_id != WINDOW_STEP_MODEL) {
        snprintf(sql, sizeof sql,
            "INSERT INTO temp.tb_iter SELECT rankId, indexId, min(startNs), max(endNs), min(startNs), max(endNs) "
            "FROM main.TB_ITERATION WHERE modelId = %" PRId64 " GROUP BY rankId, indexId;"
            "INSERT INTO temp.tb_iter_any SELECT rankId, endNs FROM main.TB_ITERATION;",
            w->model_id);
        return exec(db, sql, err);
    }
    /* Step mode: each step with its device range (metrics/steps.h) */
    tb_status rc = steps_load(db, 1, "window", s, err);
    steps_span *span = s->n ? malloc(s->n * sizeof *span) : NULL;
    sqlite3_stmt *ins = NULL;
    if (!rc && s->n && !span)
        rc = tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
    if (!rc && s->n)
        rc = steps_rank_spans(s, db, "window", span, err);
    if (!rc && sqlite3_prepare_v2(db, "INSERT INTO temp.tb_iter VALUES (?, ?, ?, ?, ?, ?)", -1, &ins, NULL) != SQLITE_OK)
        rc = db_error(db, err, "listing the steps");
    for (size_t i = 0; i < s->n && !rc; i++) {
        const steps_step *h = &s->v[i];
        int64_t start, end;
        steps_range(h, &span[i], &start, &end);
        const int64_t v[6] = {h->rank, h->id, start, end, h->start, h->end};
        sqlite3_reset(ins);
        for (int c = 0; c < 6; c++)
            sqlite3_bind_int64(ins, c + 1, v[c]);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = db_error(db, err, "listing the steps");
    }
    sqlite3_finalize(ins);
    free(span);
    /* a rank with no steps of its own but a step trace as loaded (an
     * analysis.db alone): its steps, without a time range, so that the
     * window holds the rank and its step trace rows only */
    if (!rc)
        rc = exec(db,
                  "INSERT INTO temp.tb_iter(rankId, id) SELECT DISTINCT t.rankId, CAST(t.step AS INTEGER) "
                  "FROM main.TB_STEP_TRACE_TIME t WHERE CAST(CAST(t.step AS INTEGER) AS TEXT) = CAST(t.step AS TEXT) "
                  "AND NOT EXISTS (SELECT 1 FROM temp.tb_iter i WHERE i.rankId IS t.rankId);",
                  err);
    return rc ? rc : exec(db, "INSERT INTO temp.tb_iter_any SELECT rankId, endNs FROM temp.tb_iter;", err);
}

/* Each rank's first and last iteration of the mode (temp.tb_iter), in rank order. */
static tb_status held_ranges(sqlite3 *db, window_info *info, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    if (sqlite3_prepare_v2(db, "SELECT rankId, min(id), max(id) FROM temp.tb_iter GROUP BY rankId ORDER BY rankId",
                           -1, &st, NULL) != SQLITE_OK)
        return db_error(db, err, "checking the window");
    while (sqlite3_step(st) == SQLITE_ROW) {
        window_held h = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2)};
        if (VEC_PUSH(info->held, info->n_held, cap, h)) {
            sqlite3_finalize(st);
            return tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
        }
    }
    sqlite3_finalize(st);
    return TB_OK;
}

tb_status window_held_error(const tb_window *w, const window_held *h, size_t n, tb_error *err)
{
    /* "steps 1-3" when every rank holds the same, else "rank 0: steps 8-9; rank 1: steps 3-4" */
    int step_mode = w->model_id == WINDOW_STEP_MODEL;
    const char *what = step_mode ? "steps" : "iterations";
    char avail[512];
    size_t used = 0;
    int same = 1;
    avail[0] = 0;
    for (size_t i = 0; i < n; i++) {
        same &= h[i].first == h[0].first && h[i].last == h[0].last;
        if (used < sizeof avail) {
            int k = snprintf(avail + used, sizeof avail - used, "%srank %" PRId64 ": %s %" PRId64 "-%" PRId64,
                             i ? "; " : "", h[i].rank, what, h[i].first, h[i].last);
            if (k > 0)
                used += (size_t)k;
        }
    }
    if (n && same)
        snprintf(avail, sizeof avail, "%s %" PRId64 "-%" PRId64, what, h[0].first, h[0].last);
    if (step_mode)
        return tb_error_set(err, TB_ERR_USAGE, "--iteration-id %" PRId64 " --iteration-count %" PRId64
                            ": step mode has %s", w->iteration_id, w->iteration_count, avail);
    return tb_error_set(err, TB_ERR_USAGE, "--iteration-id %" PRId64 " --iteration-count %" PRId64
                        ": model %" PRId64 " has %s", w->iteration_id, w->iteration_count, w->model_id, avail);
}

/*
 * Checks the window against the DB: the model exists, and the ranks that
 * have iteration I also have I+N-1 (a rank without iteration I is left out
 * of the window; at least one rank must have it).
 */
static tb_status check_window(sqlite3 *db, const tb_window *w, window_info *info, tb_error *err)
{
    char avail[512];
    sqlite3_stmt *st = NULL;
    int64_t have = 0, first = 0, both = 0;
    int64_t last = w->iteration_id + w->iteration_count - 1;
    if (sqlite3_prepare_v2(db,
            "SELECT (SELECT count(*) FROM temp.tb_iter), "
            "  (SELECT count(DISTINCT rankId) FROM temp.tb_iter WHERE id = ?1), "
            "  (SELECT count(DISTINCT f.rankId) FROM temp.tb_iter f JOIN temp.tb_iter l "
            "     ON l.rankId IS f.rankId AND l.id = ?2 WHERE f.id = ?1)", -1, &st, NULL) != SQLITE_OK)
        return db_error(db, err, "checking the window");
    sqlite3_bind_int64(st, 1, w->iteration_id);
    sqlite3_bind_int64(st, 2, last);
    if (sqlite3_step(st) == SQLITE_ROW) {
        have = sqlite3_column_int64(st, 0);
        first = sqlite3_column_int64(st, 1);
        both = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    int step_mode = w->model_id == WINDOW_STEP_MODEL;
    /* no rank here has iteration I (or none has the model's iterations): a
     * part of a load may lack what another part has; a rank that has I but
     * not I+N-1 is an error wherever it is */
    info->miss = have == 0 || first == 0;
    info->broken = first != 0 && both != first;
    tb_status rc = held_ranges(db, info, err);
    if (rc)
        return rc;
    if (have == 0) {
        list_available(db, avail, sizeof avail);
        if (step_mode)
            return tb_error_set(err, TB_ERR_USAGE, "--model-id %lld (step mode): the data has no steps; it has: %s",
                                (long long)TB_STEP_MODEL_ID, avail);
        return tb_error_set(err, TB_ERR_USAGE, "--model-id %" PRId64 ": no such model; the data has: %s",
                            w->model_id, avail);
    }
    if (first == 0 || both != first)
        return window_held_error(w, info->held, info->n_held, err);
    return TB_OK;
}

/* The column names of a main table, as a bit set of the ones the filters use. */
enum { C_RANK = 1, C_START = 2, C_END = 4, C_TS = 8, C_TIMESTAMP = 16, C_GTID = 32, C_FROM = 64, C_TO = 128 };

static int table_columns(sqlite3 *db, const char *table)
{
    static const struct { const char *name; int bit; } known[] = {
        {"rankId", C_RANK}, {"startNs", C_START}, {"endNs", C_END}, {"timestampNs", C_TS},
        {"timestamp", C_TIMESTAMP}, {"globalTaskId", C_GTID}, {"fromNs", C_FROM}, {"toNs", C_TO},
    };
    int bits = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1, 'main')", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(st, 0);
        for (size_t i = 0; c && i < sizeof known / sizeof known[0]; i++)
            if (strcmp(c, known[i].name) == 0)
                bits |= known[i].bit;
    }
    sqlite3_finalize(st);
    return bits;
}

static int is_device_table(const char *t)
{
    return strcmp(t, "TASK") == 0 || strcmp(t, "COMMUNICATION_OP") == 0 || strcmp(t, "OVERLAP_ANALYSIS") == 0;
}

/* The WHERE clause filtering main.<table> (alias x) through temp.tb_window,
 * or NULL when the table is not windowed. Static text or out. */
static const char *iteration_filter(const char *t, int cols, const tb_window *w, char *out, size_t n)
{
#define IN_RANK "EXISTS (SELECT 1 FROM temp.tb_window w WHERE w.rankId IS x.rankId AND "
    if (!(cols & C_RANK))
        return NULL;
    int step_mode = w->model_id == WINDOW_STEP_MODEL;
    if (strcmp(t, "STEP_TIME") == 0 && step_mode) {
        snprintf(out, n, "x.id >= %" PRId64 " AND x.id <= %" PRId64, w->iteration_id,
                 w->iteration_id + w->iteration_count - 1);
        return out;
    }
    if (strcmp(t, "TB_STEP_TRACE_TIME") == 0 && step_mode) {
        /* a step trace as loaded (step_trace_time.csv, an analysis.db): its rows of the window's steps */
        snprintf(out, n, "CAST(CAST(x.step AS INTEGER) AS TEXT) = CAST(x.step AS TEXT) AND "
                 "CAST(x.step AS INTEGER) >= %" PRId64 " AND CAST(x.step AS INTEGER) <= %" PRId64, w->iteration_id,
                 w->iteration_id + w->iteration_count - 1);
        return out;
    }
    if (strcmp(t, "TB_ITERATION") == 0 && !step_mode) {
        snprintf(out, n, "x.modelId = %" PRId64 " AND x.indexId >= %" PRId64 " AND x.indexId <= %" PRId64,
                 w->model_id, w->iteration_id, w->iteration_id + w->iteration_count - 1);
        return out;
    }
    if ((strcmp(t, "TASK") == 0 || strcmp(t, "COMMUNICATION_OP") == 0) && step_mode) {
        snprintf(out, n, "x.rowid IN (SELECT r FROM temp.tb_window_%s)", t[0] == 'T' ? "task" : "op");
        return out;
    }
    if (strcmp(t, "TASK") == 0) {
        /* graph mode: a task of another model is out, whatever its time */
        snprintf(out, n, IN_RANK "x.startNs >= w.startNs AND x.startNs < w.endNs) AND "
                 "(x.modelId IS NULL OR x.modelId = %lld OR x.modelId = %" PRId64 ")", (long long)TB_STEP_MODEL_ID,
                 w->model_id);
        return out;
    }
    if ((cols & C_START) && is_device_table(t))
        return IN_RANK "x.startNs >= w.startNs AND x.startNs < w.endNs)";
    if ((cols & C_START) && (cols & C_END))
        return IN_RANK "((x.startNs >= w.hostStartNs AND x.startNs <= w.hostEndNs) OR "
                       "(x.startNs <= w.hostStartNs AND x.endNs >= w.hostStartNs)))";
    if (cols & C_TS)
        return IN_RANK "x.timestampNs >= w.startNs AND x.timestampNs <= w.endNs)";
    if (cols & C_TIMESTAMP)
        return IN_RANK "x.timestamp >= w.startNs AND x.timestamp <= w.endNs)";
    if ((cols & C_FROM) && (cols & C_TO))
        return IN_RANK "((x.fromNs >= w.hostStartNs AND x.fromNs <= w.hostEndNs) OR "
                       "(x.toNs >= w.startNs AND x.toNs <= w.endNs)))";
    if (cols & C_GTID)
        return "x.globalTaskId IN (SELECT globalTaskId FROM TASK)";
    return NULL;
#undef IN_RANK
}

/*
 * The rows of each rank, as rowid ranges: SQL function tb_rank_row(TABLE,
 * RANK, 0 or 1) gives the first or last rowid of RANK's rows in TABLE (NULL
 * when it has none). A table is read once, the first time a statement asks
 * about it (one pass over its rowids and rankIds; runs of one rank that are
 * apart are joined). A load writes the ranks one after the other, so a
 * rank's rows are one range and the rank views read them only, where
 * `rankId IS R` alone would read every rank's rows for each rank.
 */
typedef struct rank_run {
    int64_t rank, lo, hi;
} rank_run;

typedef struct rank_table {
    char *name;
    rank_run *v; /* by rank */
    size_t n;
} rank_table;

typedef struct rank_rows {
    sqlite3 *db;
    rank_table *t;
    size_t n;
} rank_rows;

static void rank_rows_free(void *p)
{
    rank_rows *rr = p;
    for (size_t i = 0; rr && i < rr->n; i++) {
        free(rr->t[i].name);
        free(rr->t[i].v);
    }
    if (rr)
        free(rr->t);
    free(rr);
}

static int by_run_rank(const void *a, const void *b)
{
    const rank_run *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Reads table's ranges into t (name set). Returns SQLITE_OK or an error code. */
static int rank_table_read(sqlite3 *db, rank_table *t)
{
    char *q = sqlite3_mprintf("SELECT rowid, rankId FROM main.\"%w\" WHERE rankId IS NOT NULL", t->name);
    sqlite3_stmt *st = NULL;
    int rc = q ? sqlite3_prepare_v2(db, q, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(q);
    size_t cap = 0;
    while (rc == SQLITE_OK) {
        int s = sqlite3_step(st);
        if (s == SQLITE_DONE)
            break;
        if (s != SQLITE_ROW) {
            rc = s;
            break;
        }
        int64_t id = sqlite3_column_int64(st, 0), rk = sqlite3_column_int64(st, 1);
        if (t->n && t->v[t->n - 1].rank == rk) {
            t->v[t->n - 1].hi = id;
            continue;
        }
        if (t->n == cap) {
            cap = cap ? cap * 2 : 16;
            rank_run *nv = realloc(t->v, cap * sizeof *nv);
            if (!nv) {
                rc = SQLITE_NOMEM;
                break;
            }
            t->v = nv;
        }
        t->v[t->n++] = (rank_run){rk, id, id};
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK || t->n < 2)
        return rc;
    /* by rank, runs of one rank joined */
    qsort(t->v, t->n, sizeof *t->v, by_run_rank);
    size_t k = 0;
    for (size_t i = 1; i < t->n; i++) {
        if (t->v[i].rank == t->v[k].rank) {
            if (t->v[i].lo < t->v[k].lo)
                t->v[k].lo = t->v[i].lo;
            if (t->v[i].hi > t->v[k].hi)
                t->v[k].hi = t->v[i].hi;
        } else {
            t->v[++k] = t->v[i];
        }
    }
    t->n = k + 1;
    return SQLITE_OK;
}

static void rank_row_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    rank_rows *rr = sqlite3_user_data(ctx);
    const char *name = (const char *)sqlite3_value_text(argv[0]);
    if (!name || sqlite3_value_type(argv[1]) == SQLITE_NULL)
        return;
    int64_t rank = sqlite3_value_int64(argv[1]);
    int hi = sqlite3_value_int(argv[2]);
    rank_table *t = NULL;
    for (size_t i = 0; i < rr->n && !t; i++)
        if (!strcmp(rr->t[i].name, name))
            t = &rr->t[i];
    if (!t) {
        rank_table *nt = realloc(rr->t, (rr->n + 1) * sizeof *nt);
        if (!nt) {
            sqlite3_result_error_nomem(ctx);
            return;
        }
        rr->t = nt;
        t = &rr->t[rr->n];
        *t = (rank_table){.name = strdup(name)};
        int rc = t->name ? rank_table_read(rr->db, t) : SQLITE_NOMEM;
        if (rc != SQLITE_OK) {
            free(t->name);
            free(t->v);
            sqlite3_result_error_code(ctx, rc);
            return;
        }
        rr->n++;
    }
    size_t lo = 0, n = t->n;
    while (lo < n) {
        size_t mid = lo + (n - lo) / 2;
        if (t->v[mid].rank < rank)
            lo = mid + 1;
        else
            n = mid;
    }
    if (lo < t->n && t->v[lo].rank == rank)
        sqlite3_result_int64(ctx, hi ? t->v[lo].hi : t->v[lo].lo);
}

/* Registers tb_rank_row on db, once (its ranges then serve every report of the run). */
static tb_status rank_rows_register(sqlite3 *db, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    int have = sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_function_list WHERE name = 'tb_rank_row'", -1, &st,
                                  NULL) == SQLITE_OK &&
               sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    if (have)
        return TB_OK;
    rank_rows *rr = calloc(1, sizeof *rr);
    if (!rr)
        return tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
    rr->db = db;
    if (sqlite3_create_function_v2(db, "tb_rank_row", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, rr, rank_row_fn, NULL,
                                   NULL, rank_rows_free) != SQLITE_OK)
        return db_error(db, err, "registering tb_rank_row");
    return TB_OK;
}

/*
 * iteration_filter's clause, restricted to one rank when w->rank_set (the
 * tables without a rankId are shared by every rank: not filtered). By rank:
 * the rank of the one row of temp.tb_rank_now (window_for_rank), its rows
 * read as their rowid range (tb_rank_row); else rank w->rank, literally.
 */
static const char *table_filter(const char *t, int cols, const tb_window *w, int by_rank, char *out, size_t n)
{
    char inner[512];
    const char *f = w->set ? iteration_filter(t, cols, w, inner, sizeof inner) : NULL;
    if (!w->rank_set || !(cols & C_RANK)) {
        if (f && f != out)
            snprintf(out, n, "%s", f);
        return f ? out : NULL;
    }
    /* scalar subqueries of no correlation: evaluated once per statement */
    char *rank = by_rank ? sqlite3_mprintf("x.rowid BETWEEN (SELECT tb_rank_row(%Q, rank, 0) FROM temp.tb_rank_now)"
                                           " AND (SELECT tb_rank_row(%Q, rank, 1) FROM temp.tb_rank_now)"
                                           " AND +x.rankId IS (SELECT rank FROM temp.tb_rank_now)",
                                           t, t)
                         : sqlite3_mprintf("x.rankId IS %lld", (long long)w->rank);
    if (!rank)
        return NULL;
    if (f)
        snprintf(out, n, "%s AND (%s)", rank, f);
    else
        snprintf(out, n, "%s", rank);
    sqlite3_free(rank);
    return out;
}

/* The select list of a table's view: x.*, or, by rank, every column in
 * order with rankId an expression: the rank's own (+x.rankId), or the id it
 * shows (tb_rank_now.shown) when ranks show other ids (by_rank 2). All of a
 * view's rows have one rankId, and an index on it (a shard's) would make
 * the planner read every row of the rank for each row of a join on it. A
 * new sqlite3 string, NULL when out of memory. */
static char *select_list(sqlite3 *db, const char *table, int by_rank)
{
    if (!by_rank || !(table_columns(db, table) & C_RANK))
        return sqlite3_mprintf("x.*");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1, 'main') ORDER BY cid", -1, &st, NULL) !=
        SQLITE_OK)
        return NULL;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    char *list = sqlite3_mprintf("%s", "");
    while (list && sqlite3_step(st) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(st, 0);
        char *next = !c ? NULL
                     : strcmp(c, "rankId") == 0
                         ? sqlite3_mprintf(by_rank == 2 ? "%s%s(SELECT shown FROM temp.tb_rank_now) AS rankId"
                                                        : "%s%s+x.rankId AS rankId",
                                           list, *list ? ", " : "")
                         : sqlite3_mprintf("%s%sx.\"%w\"", list, *list ? ", " : "", c);
        sqlite3_free(list);
        list = next;
    }
    sqlite3_finalize(st);
    return list;
}

/* Graph mode: the window's steps are its graph iterations (TB_ITERATION
 * rows of the model, I to I+N-1), shown as STEP_TIME's columns, their
 * device ranges [start, end]; temp.tb_window_graph (window_apply) tells
 * steps.c that they are device ranges. A new sqlite3 string, NULL when out
 * of memory. */
static char *graph_steps_view(sqlite3 *db, const tb_window *w, int by_rank)
{
    char tmp[1024];
    const char *where = table_filter("TB_ITERATION", table_columns(db, "TB_ITERATION"), w, by_rank, tmp, sizeof tmp);
    const char *rank = by_rank == 2 ? "(SELECT shown FROM temp.tb_rank_now)" : by_rank ? "+x.rankId" : "x.rankId";
    return sqlite3_mprintf("CREATE TEMP VIEW \"STEP_TIME\" AS SELECT x.indexId AS id, x.startNs AS startNs, "
                           "x.endNs AS endNs, %s AS rankId FROM main.TB_ITERATION x WHERE %s;\n",
                           rank, where ? where : "1");
}

/* Creates the TEMP views: first the filtered tables (in an order where
 * TASK exists before the per-task tables that refer to it), then TEMP copies
 * of the stored views. */
static tb_status create_views(sqlite3 *db, const tb_window *w, int by_rank, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    buf b = {0};
    tb_status rc = TB_OK;
    if (sqlite3_prepare_v2(db,
            "SELECT name, type, sql FROM main.sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY type = 'view', name <> 'TASK', name", -1, &st, NULL) != SQLITE_OK)
        return db_error(db, err, "reading the schema");
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *type = (const char *)sqlite3_column_text(st, 1);
        const char *sql = (const char *)sqlite3_column_text(st, 2);
        if (!name || !type || !sql)
            continue;
        if (strcmp(type, "table") == 0 && w->set && w->model_id != WINDOW_STEP_MODEL && !strcmp(name, "STEP_TIME")) {
            char *q = graph_steps_view(db, w, by_rank);
            if (!q || buf_add(&b, q)) {
                sqlite3_free(q);
                rc = tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
                goto done;
            }
            sqlite3_free(q);
        } else if (strcmp(type, "table") == 0) {
            char tmp[1024];
            const char *where = table_filter(name, table_columns(db, name), w, by_rank, tmp, sizeof tmp);
            if (!where)
                continue;
            char *cols = select_list(db, name, by_rank);
            char *q = cols ? sqlite3_mprintf("CREATE TEMP VIEW \"%w\" AS SELECT %s FROM main.\"%w\" x WHERE %s;\n",
                                             name, cols, name, where)
                           : NULL;
            sqlite3_free(cols);
            if (!q || buf_add(&b, q)) {
                sqlite3_free(q);
                rc = tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
                goto done;
            }
            sqlite3_free(q);
        } else {
            /* "CREATE VIEW name AS ..." -> "CREATE TEMP VIEW name AS ..." */
            const char *p = sql;
            if (sqlite3_strnicmp(p, "CREATE VIEW", 11) != 0)
                continue;
            if (buf_add(&b, "CREATE TEMP VIEW") || buf_add(&b, p + 11) || buf_add(&b, ";\n")) {
                rc = tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
                goto done;
            }
        }
    }
    if (b.p)
        rc = exec(db, b.p, err);
done:
    sqlite3_finalize(st);
    free(b.p);
    return rc;
}

/* info->ranks from temp.tb_window, ordered by rank. */
static tb_status read_ranks(sqlite3 *db, window_info *info, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    if (sqlite3_prepare_v2(db, "SELECT rankId, startNs, endNs FROM temp.tb_window ORDER BY rankId", -1, &st, NULL) !=
        SQLITE_OK)
        return db_error(db, err, "reading the window");
    while (sqlite3_step(st) == SQLITE_ROW) {
        window_rank r = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2)};
        if (VEC_PUSH(info->ranks, info->n_ranks, cap, r)) {
            sqlite3_finalize(st);
            return tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
        }
    }
    sqlite3_finalize(st);
    return TB_OK;
}

/* The window of rank (info->ranks is ordered by rank), or NULL when the rank is not in it. */
static const window_rank *rank_window(const window_info *info, int64_t rank)
{
    size_t i = sort_bound_i64(info->ranks, info->n_ranks, sizeof *info->ranks, offsetof(window_rank, rank), rank, 0);
    return i < info->n_ranks && info->ranks[i].rank == rank ? &info->ranks[i] : NULL;
}

/*
 * Step mode: TEMP tb_window_<name>(r) holds the rowids of main.<table>'s
 * rows in the window: launched by a call in one of the window's steps
 * (metrics/steps.h), else, when no step holds their launching call or they
 * have none, starting inside the rank's device range.
 */
static tb_status members(sqlite3 *db, const tb_window *w, const steps *s, const window_info *info, const char *name,
                         const char *table, tb_error *err)
{
    int64_t first = w->iteration_id, last = w->iteration_id + w->iteration_count - 1;
    char *sql = sqlite3_mprintf("CREATE TEMP TABLE tb_window_%s(r INTEGER PRIMARY KEY);", name);
    tb_status rc = sql ? exec(db, sql, err) : tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
    sqlite3_free(sql);
    if (rc)
        return rc;
    sqlite3_stmt *st = NULL, *ins = NULL;
    sql = sqlite3_mprintf("INSERT INTO temp.tb_window_%s VALUES (?)", name);
    if (!sql || sqlite3_prepare_v2(db, sql, -1, &ins, NULL) != SQLITE_OK) {
        rc = sql ? db_error(db, err, "selecting the window's rows") : tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
        goto done;
    }
    sqlite3_free(sql);
    sql = sqlite3_mprintf("SELECT rowid, ifnull(rankId, 0), connectionId, startNs FROM main.\"%w\" "
                          "WHERE startNs IS NOT NULL", table);
    if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = sql ? db_error(db, err, "selecting the window's rows") : tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
        goto done;
    }
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(st, 1);
        const window_rank *wr = rank_window(info, rank);
        if (!wr)
            continue;
        int64_t k = sqlite3_column_type(st, 2) == SQLITE_NULL
                        ? IDMAP_ABSENT
                        : steps_launched(steps_launches(s, rank), sqlite3_column_int64(st, 2));
        int64_t t = sqlite3_column_int64(st, 3);
        int in = k >= 0 ? s->v[k].id >= first && s->v[k].id <= last : t >= wr->start_ns && t < wr->end_ns;
        if (!in)
            continue;
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, sqlite3_column_int64(st, 0));
        if (sqlite3_step(ins) != SQLITE_DONE) {
            rc = db_error(db, err, "selecting the window's rows");
            goto done;
        }
    }
    if (step != SQLITE_DONE)
        rc = db_error(db, err, "selecting the window's rows");
done:
    sqlite3_free(sql);
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    return rc;
}

/* A non-negative decimal into *out, or TB_ERR_USAGE naming the option. */
static tb_status window_number(const char *opt, const char *s, int64_t *out, tb_error *err)
{
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x < 0)
        return tb_error_set(err, TB_ERR_USAGE, "%s '%s': expected a non-negative integer", opt, s);
    *out = x;
    return TB_OK;
}

tb_status tb_window_parse(const char *model, const char *iteration, const char *count, tb_window *w,
                          tb_error *err)
{
    memset(w, 0, sizeof *w);
    w->iteration_count = 1;
    tb_status st = TB_OK;
    if (model)
        st = window_number("--model-id", model, &w->model_id, err);
    if (!st && iteration)
        st = window_number("--iteration-id", iteration, &w->iteration_id, err);
    if (!st && count)
        st = window_number("--iteration-count", count, &w->iteration_count, err);
    if (st)
        return st;
    if (iteration && !model)
        return tb_error_set(err, TB_ERR_USAGE, "--iteration-id needs --model-id (%lld for step mode)",
                            (long long)TB_STEP_MODEL_ID);
    if (model && !iteration)
        return tb_error_set(err, TB_ERR_USAGE, "--model-id needs --iteration-id");
    if (count && !iteration)
        return tb_error_set(err, TB_ERR_USAGE, "--iteration-count needs --model-id and --iteration-id");
    if (w->iteration_count < 1)
        return tb_error_set(err, TB_ERR_USAGE, "--iteration-count must be at least 1");
    w->set = model != NULL;
    return TB_OK;
}

tb_status window_apply(sqlite3 *db, const tb_window *w, window_info *info, tb_error *err)
{
    memset(info, 0, sizeof *info);
    if (!w->set && !w->rank_set)
        return TB_OK;
    if (!w->set)
        return create_views(db, w, 0, err); /* one rank, all of its time */
    if (w->iteration_count < 1)
        return tb_error_set(err, TB_ERR_USAGE, "--iteration-count must be at least 1, got %" PRId64,
                            w->iteration_count);
    if (w->iteration_id < 0 || w->iteration_count > INT64_MAX - w->iteration_id)
        return tb_error_set(err, TB_ERR_USAGE, "--iteration-id %" PRId64 " --iteration-count %" PRId64
                            ": the last iteration is out of range", w->iteration_id, w->iteration_count);
    window_label(w, info->label, sizeof info->label);

    steps s = {0};
    tb_status rc = build_iterations(db, w, &s, err);
    if (rc || (rc = check_window(db, w, info, err)))
        goto done;

    /* Per rank. Graph mode, msprof's rule: start = the latest end (any
     * model) before iteration I started, end = the end of iteration I+N-1;
     * host rows use the same range. Step mode: the device range from step
     * I's START to step I+N-1's END (a GPU behind its host makes steps'
     * device ranges overlap, so the end of an earlier step is no bound), and
     * host rows the host range from step I's start to step I+N-1's end.
     * Ranks that lack iteration I get no window row and so no rows. */
    int64_t last = w->iteration_id + w->iteration_count - 1;
    int step_mode = w->model_id == WINDOW_STEP_MODEL;
    char sql[2048];
    snprintf(sql, sizeof sql,
        "CREATE TEMP TABLE tb_window(rankId INTEGER, startNs INTEGER, endNs INTEGER, "
        "  hostStartNs INTEGER, hostEndNs INTEGER);"
        "INSERT INTO temp.tb_window "
        "SELECT f.rankId, s, e, CASE WHEN %d THEN hs ELSE s END, CASE WHEN %d THEN he ELSE e END FROM ("
        "  SELECT f.rankId AS rankId, "
        "    CASE WHEN %d THEN f.startNs ELSE coalesce((SELECT max(a.endNs) FROM temp.tb_iter_any a "
        "      WHERE a.rankId IS f.rankId AND a.endNs <= f.startNs), 0) END AS s, "
        "    (SELECT max(l.endNs) FROM temp.tb_iter l WHERE l.rankId IS f.rankId "
        "       AND l.id >= %" PRId64 " AND l.id <= %" PRId64 ") AS e, "
        "    f.hostStartNs AS hs, "
        "    (SELECT max(l.hostEndNs) FROM temp.tb_iter l WHERE l.rankId IS f.rankId "
        "       AND l.id >= %" PRId64 " AND l.id <= %" PRId64 ") AS he "
        "  FROM temp.tb_iter f WHERE f.id = %" PRId64 ") f;",
        step_mode, step_mode, step_mode, w->iteration_id, last, w->iteration_id, last, w->iteration_id);
    if ((rc = exec(db, sql, err)) || (rc = read_ranks(db, info, err)))
        goto done;

    if (step_mode && ((rc = members(db, w, &s, info, "task", "TASK", err)) ||
                      (rc = members(db, w, &s, info, "op", "COMMUNICATION_OP", err))))
        goto done;
    /* graph mode: the steps seen through the window are its iterations (graph_steps_view) */
    if (!step_mode && (rc = exec(db, "CREATE TEMP TABLE tb_window_graph(x INTEGER)", err)))
        goto done;
    rc = create_views(db, w, 0, err);
done:
    steps_finish(&s);
    return rc;
}

/* Drops every TEMP view of the connection. */
static tb_status drop_views(sqlite3 *db, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    buf b = {0};
    tb_status rc = TB_OK;
    if (sqlite3_prepare_v2(db, "SELECT name FROM temp.sqlite_master WHERE type = 'view'", -1, &st, NULL) != SQLITE_OK)
        return db_error(db, err, "reading the views");
    while (sqlite3_step(st) == SQLITE_ROW && !rc) {
        char *q = sqlite3_mprintf("DROP VIEW temp.\"%w\";\n", (const char *)sqlite3_column_text(st, 0));
        if (!q || buf_add(&b, q))
            rc = tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
        sqlite3_free(q);
    }
    sqlite3_finalize(st);
    if (!rc && b.p)
        rc = exec(db, b.p, err);
    free(b.p);
    return rc;
}

static int has_temp(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    int yes = sqlite3_prepare_v2(db, "SELECT 1 FROM temp.sqlite_master WHERE name = ?1", -1, &st, NULL) == SQLITE_OK &&
              (sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC), sqlite3_step(st) == SQLITE_ROW);
    sqlite3_finalize(st);
    return yes;
}

tb_status window_for_rank(sqlite3 *db, const tb_window *w, int64_t shown, int renumber, tb_error *err)
{
    tb_status rc = TB_OK;
    if (!w->rank_set) {
        /* every rank again: the views of window_apply */
        if (!has_temp(db, "tb_rank_now"))
            return TB_OK;
        if ((rc = drop_views(db, err)) || (rc = exec(db, "DROP TABLE temp.tb_rank_now;", err)))
            return rc;
        return w->set ? create_views(db, w, 0, err) : TB_OK;
    }
    /* the first rank: views that read the rank from tb_rank_now, made once */
    if (!has_temp(db, "tb_rank_now")) {
        if ((rc = rank_rows_register(db, err)) || (rc = drop_views(db, err)) ||
            (rc = exec(db, "CREATE TEMP TABLE tb_rank_now (rank INTEGER, shown INTEGER);"
                           "INSERT INTO temp.tb_rank_now VALUES (NULL, NULL);", err)) ||
            (rc = create_views(db, w, renumber ? 2 : 1, err)))
            return rc;
    }
    char *q = sqlite3_mprintf("UPDATE temp.tb_rank_now SET rank = %lld, shown = %lld;", (long long)w->rank,
                              (long long)shown);
    rc = q ? exec(db, q, err) : tb_error_set(err, TB_ERR_NOMEM, "window: out of memory");
    sqlite3_free(q);
    return rc;
}

void window_text(const tb_window *w, char *out, size_t n)
{
    if (!w->set)
        snprintf(out, n, "the whole run");
    else
        snprintf(out, n, "model %" PRId64 ", iterations %" PRId64 " to %" PRId64, w->model_id, w->iteration_id,
                 w->iteration_id + w->iteration_count - 1);
}

void window_label(const tb_window *w, char *out, size_t n)
{
    if (!w->set)
        snprintf(out, n, "%s", "");
    else if (w->iteration_count == 1)
        snprintf(out, n, "%" PRId64, w->iteration_id);
    else
        snprintf(out, n, "%" PRId64 "_%" PRId64, w->iteration_id, w->iteration_id + w->iteration_count - 1);
}

int window_rank_has(sqlite3 *db, const tb_window *w, int64_t rank)
{
    if (!w->set)
        return 1;
    sqlite3_stmt *st = NULL;
    int in = 0;
    const char *sql = w->model_id == TB_STEP_MODEL_ID
                          ? "SELECT 1 FROM STEP_TIME WHERE rankId IS ?1 AND id = ?2 UNION ALL "
                            "SELECT 1 FROM TB_STEP_TRACE_TIME WHERE rankId IS ?1 AND CAST(step AS TEXT) = CAST(?2 AS TEXT)"
                          : "SELECT 1 FROM TB_ITERATION WHERE rankId IS ?1 AND indexId = ?2 AND modelId = ?3";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, rank);
        sqlite3_bind_int64(st, 2, w->iteration_id);
        if (w->model_id != TB_STEP_MODEL_ID)
            sqlite3_bind_int64(st, 3, w->model_id);
        in = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return in;
}

void window_reset(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    buf b = {0};
    if (sqlite3_prepare_v2(db, "SELECT type, name FROM temp.sqlite_master WHERE type IN ('view', 'table')"
                               " ORDER BY type = 'table'", -1, &st, NULL) != SQLITE_OK)
        return;
    int fail = 0;
    while (!fail && sqlite3_step(st) == SQLITE_ROW) {
        int view = !strcmp((const char *)sqlite3_column_text(st, 0), "view");
        char *q = sqlite3_mprintf("DROP %s temp.\"%w\";\n", view ? "VIEW" : "TABLE",
                                  (const char *)sqlite3_column_text(st, 1));
        fail = !q || buf_add(&b, q);
        sqlite3_free(q);
    }
    sqlite3_finalize(st);
    if (!fail && b.p)
        sqlite3_exec(db, b.p, NULL, NULL, NULL);
    free(b.p);
}

void window_info_finish(window_info *info)
{
    free(info->ranks);
    info->ranks = NULL;
    info->n_ranks = 0;
    free(info->held);
    info->held = NULL;
    info->n_held = 0;
}
