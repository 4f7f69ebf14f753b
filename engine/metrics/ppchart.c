/* SPDX-License-Identifier: MIT */
/*
 * ppchart.c - the DualPipeV schedule of msprof-analyze's pp_chart recipe
 * (docs/metrics.md, "Pipeline-parallel chart data").
 *
 * The recipe names each forward and backward device task of a rank by its
 * micro-batch when the profile's metadata says the schedule is DualPipeV:
 *   - pp_schedule: one row when the first rank of the load (the smallest
 *     rankId holding TB_PROFILE_META rows) has a pp_info entry whose
 *     pp_type is "dualpipev" (any case): its micro-batch count and the
 *     tensor-, pipeline- and data-parallel sizes of its distributed_args
 *     (each 1 when absent; all NULL when the entry is not JSON, or a size
 *     is not a positive integer: the recipe then writes nothing);
 *   - pp_dualpipev: per rank, the device tasks of its mstx events whose
 *     message holds forward, backward or WeightGradStore_pop (the standard
 *     schedule's rows), by task start, less each task that starts before
 *     the end of the last one kept; grouped by the STEP_TIME step holding
 *     the event (every row step 0 when the rank has no steps; a row in no
 *     step is dropped), each step's rows are named by the rank's stage of
 *     the schedule below when the step has exactly as many as the stage
 *     expects, else name '' and type 0. A rank's stage is its rankId
 *     divided by tp x dp; a rank past pp x tp x dp has no rows.
 *
 * The schedule (the recipe's, stage by stage; mb micro-batches of each of
 * the two chunks, P = 2 x pp): warm-up forwards of chunk 0, interleaved
 * forwards of both chunks, 1b1w1f, overlapped F+B pairs, 1b1overlap,
 * interleaved backwards and the cool-down backwards; the type of a row is
 * its phase (0 to 6). A micro-batch count under 2 x pp gives no names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/ppchart.h"

#define WHAT "pp_dualpipev"

static tb_status db_fail(const metric_ctx *m, tb_error *err)
{
    return tb_error_set(err, TB_ERR_DB, WHAT ": %s", sqlite3_errmsg(m->db));
}

/* ---- the schedule ---------------------------------------------------------- */

typedef ppchart_slots slots;

static int put(slots *s, int type, const char *fmt, long long a, long long b)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        void *nn = realloc(s->name, cap * sizeof *s->name);
        if (!nn)
            return -1;
        s->name = nn;
        void *nt = realloc(s->type, cap * sizeof *s->type);
        if (!nt)
            return -1;
        s->type = nt;
        s->cap = cap;
    }
    snprintf(s->name[s->n], sizeof s->name[0], fmt, a, b);
    s->type[s->n++] = type;
    return 0;
}

#define PUT(type, fmt, a, b)                                                                                           \
    do {                                                                                                               \
        if (put(s, type, fmt, (long long)(a), (long long)(b)))                                                        \
            return -1;                                                                                                 \
    } while (0)

/* The last micro-batch of each chunk's forwards and backwards so far. */
typedef struct last {
    int64_t f0, f1, b0, b1;
    int back1_first; /* the interleaved backwards ended on chunk 1 */
} last;

/* Warm-up, interleaved forwards and 1b1w1f of stage i. */
static int sched_forward(slots *s, last *l, int64_t i, int64_t pp, int64_t mb)
{
    int64_t warm = 2 * pp - 2 - i * 2, inter = i + 1, bwf = pp - i - 1;
    for (int64_t x = 0; x < warm; x++)
        PUT(0, "%lld", x, 0);
    l->f0 = warm - 1;
    s->expect += warm;
    int64_t f0 = l->f0;
    for (int64_t j = 0; j < inter; j++) {
        PUT(1, "%lld", f0 + j + 1, 0);
        PUT(1, "%lld", mb + j, 0);
        l->f0++;
    }
    l->f1 = mb + inter - 1;
    s->expect += inter * 2;
    int64_t f1 = l->f1;
    for (int64_t j = 0; j < bwf; j++) {
        if (i == 0) {
            PUT(2, "logits", 0, 0);
            s->expect++;
        }
        PUT(2, "%lldb", mb + j, 0);
        PUT(2, "%lldw", mb + j, 0);
        PUT(2, "%lld", f1 + j + 1, 0);
        l->f1++;
    }
    l->b1 = mb + bwf - 1;
    s->expect += bwf * 3;
    return 0;
}

/* Overlapped pairs, 1b1overlap and interleaved backwards of stage i. */
static int sched_middle(slots *s, last *l, int64_t i, int64_t pp, int64_t mb)
{
    int64_t over = mb * 2 - pp * 4 + i * 2 + 2, bov = (pp - i - 1) * 2, inter = i + 1;
    last a = *l;
    for (int64_t j = 0; j < over / 2; j++) {
        if (i == 0) {
            PUT(3, "logits", 0, 0);
            s->expect++;
        }
        if (i == pp - 1 && j == 0) {
            PUT(3, "%lldF", a.f0 + j + 1, 0);
            PUT(3, "%lldB", a.b1 + j + 1, 0);
            s->expect++;
        } else {
            PUT(3, "%lldF+%lldB", a.f0 + j + 1, a.b1 + j + 1);
        }
        PUT(3, "%lldF+%lldB", a.f1 + j + 1, a.b0 + j + 1);
        l->f0++, l->f1++, l->b0++, l->b1++;
    }
    s->expect += over;
    a = *l;
    for (int64_t j = 0; j < bov / 2; j++) {
        if (i == 0) {
            PUT(4, "logits", 0, 0);
            s->expect++;
        }
        PUT(4, "%lldB", a.b1 + j + 1, 0);
        PUT(4, "%lldF+%lldB", a.f1 + j + 1, a.b0 + j + 1);
        l->f1++, l->b0++, l->b1++;
    }
    s->expect += bov;
    a = *l;
    for (int64_t j = 0; j < inter; j++) {
        if (j % 2 == 0) {
            if (i == 0) {
                PUT(5, "logits", 0, 0);
                s->expect++;
            }
            PUT(5, "%lldB", a.b1 + j / 2 + 1, 0);
            l->b1++;
        } else {
            PUT(5, "%lldB", a.b0 + j / 2 + 1, 0);
            l->b0++;
        }
        l->back1_first = j % 2 == 0;
    }
    s->expect += inter;
    return 0;
}

/* The cool-down backwards of stage i: what is left of both chunks, the
 * chunk the interleaved backwards did not end on first. */
static int sched_cooldown(slots *s, last *l, int64_t pp, int64_t mb)
{
    s->expect += pp;
    int64_t b0 = l->b0, b1 = l->b1;
    while (b0 < mb - 1 || b1 < mb * 2 - 1) {
        for (int k = 0; k < 2; k++) {
            int chunk0 = (k == 0) == (l->back1_first != 0);
            if (chunk0 && b0 < mb - 1)
                PUT(6, "%lldB", ++b0, 0);
            else if (!chunk0 && b1 < mb * 2 - 1)
                PUT(6, "%lldB", ++b1, 0);
        }
    }
    return 0;
}

#undef PUT

int ppchart_stage(ppchart_slots *s, int64_t pp, int64_t mb, int has_mb, int64_t stage)
{
    if (!has_mb || mb < pp * 2)
        return 0;
    last l = {-1, -1, -1, -1, 0};
    return sched_forward(s, &l, stage, pp, mb) || sched_middle(s, &l, stage, pp, mb) ||
                   sched_cooldown(s, &l, pp, mb)
               ? -1
               : 0;
}

void ppchart_slots_free(ppchart_slots *s)
{
    if (!s)
        return;
    free(s->name);
    free(s->type);
    memset(s, 0, sizeof *s);
}

/* ---- pp_schedule --------------------------------------------------------------- */

static tb_status build_pp_schedule(const metric_ctx *m, tb_error *err)
{
    /* a size: 1 when absent, NULL unless a positive integer */
    static const char sql[] =
        "DROP TABLE IF EXISTS temp.pp_schedule;"
        "CREATE TEMP TABLE pp_schedule (rankId INTEGER, ppType TEXT, microbatchNum INTEGER, tpSize INTEGER, "
        "  ppSize INTEGER, dpSize INTEGER);"
        "WITH first AS (SELECT min(rankId) AS r FROM TB_PROFILE_META),"
        " info AS (SELECT p.value AS v FROM TB_PROFILE_META p, first WHERE p.rankId = first.r AND p.name = 'pp_info'"
        "          AND json_valid(p.value) AND json_type(p.value) = 'object' ORDER BY p.rowid LIMIT 1),"
        " args AS (SELECT (SELECT a.value FROM TB_PROFILE_META a, first WHERE a.rankId = first.r"
        "                  AND a.name = 'distributed_args' ORDER BY a.rowid LIMIT 1) AS v),"
        " sz AS (SELECT CASE WHEN v IS NULL THEN 1 WHEN NOT json_valid(v) OR json_type(v) <> 'object' THEN NULL"
        "               ELSE 0 END AS ok, v FROM args)"
        "INSERT INTO pp_schedule "
        "SELECT first.r, json_extract(info.v, '$.pp_type'),"
        "       CASE WHEN json_type(info.v, '$.microbatch_num') = 'integer'"
        "            THEN json_extract(info.v, '$.microbatch_num') END,"
        "       t, p, d "
        "FROM first, info, sz,"
        " (SELECT CASE WHEN ok = 1 THEN 1 WHEN ok IS NULL THEN NULL"
        "              WHEN json_type(v, '$.tensor_model_parallel_size') IS NULL THEN 1"
        "              WHEN json_type(v, '$.tensor_model_parallel_size') = 'integer'"
        "               AND json_extract(v, '$.tensor_model_parallel_size') > 0"
        "              THEN json_extract(v, '$.tensor_model_parallel_size') END AS t,"
        "         CASE WHEN ok = 1 THEN 1 WHEN ok IS NULL THEN NULL"
        "              WHEN json_type(v, '$.pipeline_model_parallel_size') IS NULL THEN 1"
        "              WHEN json_type(v, '$.pipeline_model_parallel_size') = 'integer'"
        "               AND json_extract(v, '$.pipeline_model_parallel_size') > 0"
        "              THEN json_extract(v, '$.pipeline_model_parallel_size') END AS p,"
        "         CASE WHEN ok = 1 THEN 1 WHEN ok IS NULL THEN NULL"
        "              WHEN json_type(v, '$.data_parallel_size') IS NULL THEN 1"
        "              WHEN json_type(v, '$.data_parallel_size') = 'integer'"
        "               AND json_extract(v, '$.data_parallel_size') > 0"
        "              THEN json_extract(v, '$.data_parallel_size') END AS d FROM sz) "
        "WHERE json_type(info.v, '$.pp_type') = 'text' AND lower(json_extract(info.v, '$.pp_type')) = 'dualpipev';"
        /* one size wrong: the recipe drops them all */
        "UPDATE pp_schedule SET tpSize = NULL, ppSize = NULL, dpSize = NULL "
        "WHERE tpSize IS NULL OR ppSize IS NULL OR dpSize IS NULL;";
    return metrics_exec(m, "pp_schedule", sql, err);
}

/* ---- pp_dualpipev_tasks and pp_dualpipev -------------------------------------- */

/* The rows of one rank, kept, into pp_dualpipev_tasks: per step, by start, with their place and count. */
static tb_status build_rank(const metric_ctx *m, int64_t rank, sqlite3_stmt *ins, tb_error *err)
{
    static const char sql[] =
        "SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM STEP_TIME s WHERE s.rankId = ?1) THEN 0 ELSE"
        "         (SELECT s.id FROM STEP_TIME s WHERE s.rankId = ?1 AND e.startNs >= s.startNs AND e.endNs <= s.endNs"
        "          ORDER BY s.startNs LIMIT 1) END,"
        "       t.startNs, t.endNs "
        "FROM MSTX_EVENTS e JOIN TASK t ON t.rankId = e.rankId AND t.connectionId = e.connectionId "
        "JOIN STRING_IDS g ON g.id = e.message "
        "WHERE e.rankId = ?1 AND (g.value LIKE '%forward%' OR g.value LIKE '%backward%'"
        "      OR g.value LIKE '%WeightGradStore_pop%') "
        "ORDER BY t.startNs, t.rowid";
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(m->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(m, err);
    sqlite3_bind_int64(q, 1, rank);
    int64_t *step = NULL, *start = NULL, *end = NULL, last_end = -1;
    size_t n = 0, cap = 0;
    tb_status rc = TB_OK;
    int s;
    while ((s = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t a = sqlite3_column_int64(q, 1);
        if (a < last_end)
            continue; /* overlaps the last task kept */
        last_end = sqlite3_column_int64(q, 2);
        if (sqlite3_column_type(q, 0) == SQLITE_NULL)
            continue; /* kept, but in no step: no group takes it */
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            int64_t *ns = realloc(step, cap * sizeof *step), *na = ns ? realloc(start, cap * sizeof *start) : NULL,
                    *ne = na ? realloc(end, cap * sizeof *end) : NULL;
            step = ns ? ns : step;
            start = na ? na : start;
            end = ne ? ne : end;
            if (!ne) {
                rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                break;
            }
        }
        step[n] = sqlite3_column_int64(q, 0), start[n] = a, end[n++] = last_end;
    }
    if (!rc && s != SQLITE_DONE)
        rc = db_fail(m, err);
    sqlite3_finalize(q);
    /* each step's rows by start (a stable pass per step, steps ascending) */
    for (size_t done = 0; !rc && done < n;) {
        int64_t lo = INT64_MAX;
        for (size_t k = 0; k < n; k++)
            if (step[k] != INT64_MIN && step[k] < lo)
                lo = step[k];
        size_t cnt = 0, idx = 0;
        for (size_t k = 0; k < n; k++)
            cnt += step[k] == lo;
        for (size_t k = 0; !rc && k < n; k++) {
            if (step[k] != lo)
                continue;
            sqlite3_reset(ins);
            sqlite3_bind_int64(ins, 1, rank);
            sqlite3_bind_int64(ins, 2, lo);
            sqlite3_bind_int64(ins, 3, (int64_t)idx++);
            sqlite3_bind_int64(ins, 4, (int64_t)cnt);
            sqlite3_bind_int64(ins, 5, start[k]);
            sqlite3_bind_int64(ins, 6, end[k]);
            if (sqlite3_step(ins) != SQLITE_DONE)
                rc = db_fail(m, err);
            step[k] = INT64_MIN;
        }
        done += cnt;
    }
    free(step);
    free(start);
    free(end);
    return rc;
}

static tb_status build_pp_dualpipev_tasks(const metric_ctx *m, tb_error *err)
{
    tb_status rc = metrics_exec(m, "pp_dualpipev_tasks",
                                "DROP TABLE IF EXISTS temp.pp_dualpipev_tasks;"
                                "CREATE TEMP TABLE pp_dualpipev_tasks (rankId INTEGER, step INTEGER, pos INTEGER, "
                                "  stepTasks INTEGER, startNs INTEGER, endNs INTEGER);",
                                err);
    sqlite3_stmt *ranks = NULL, *ins = NULL;
    if (!rc && (sqlite3_prepare_v2(m->db, "SELECT DISTINCT rankId FROM MSTX_EVENTS WHERE rankId >= 0 "
                                          "AND EXISTS (SELECT 1 FROM pp_schedule) ORDER BY 1", -1, &ranks, NULL) !=
                    SQLITE_OK ||
                sqlite3_prepare_v2(m->db, "INSERT INTO pp_dualpipev_tasks VALUES (?, ?, ?, ?, ?, ?)", -1, &ins,
                                   NULL) != SQLITE_OK))
        rc = db_fail(m, err);
    int s = SQLITE_DONE;
    while (!rc && (s = sqlite3_step(ranks)) == SQLITE_ROW)
        rc = build_rank(m, sqlite3_column_int64(ranks, 0), ins, err);
    if (!rc && s != SQLITE_DONE)
        rc = db_fail(m, err);
    sqlite3_finalize(ranks);
    sqlite3_finalize(ins);
    return rc;
}

/* The schedule's sizes from pp_schedule; 0 when there is none to name by. */
static int read_schedule(const metric_ctx *m, int64_t *pp, int64_t *group, int64_t *mb, int *has_mb)
{
    sqlite3_stmt *q;
    int got = 0;
    if (sqlite3_prepare_v2(m->db, "SELECT microbatchNum, tpSize, ppSize, dpSize FROM pp_schedule "
                                  "WHERE ppSize IS NOT NULL", -1, &q, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(q) == SQLITE_ROW) {
        *has_mb = sqlite3_column_type(q, 0) != SQLITE_NULL;
        *mb = sqlite3_column_int64(q, 0);
        *group = sqlite3_column_int64(q, 1) * sqlite3_column_int64(q, 3);
        *pp = sqlite3_column_int64(q, 2);
        got = 1;
    }
    sqlite3_finalize(q);
    return got;
}

/* Names the rows of pp_dualpipev_tasks of the ranks below pp x group by their stage (rank / group), into
 * pp_dualpipev; the stages come in order, so one stage's names are held at a time. */
static tb_status name_tasks(const metric_ctx *m, int64_t pp, int64_t group, int64_t mb, int has_mb, tb_error *err)
{
    sqlite3_stmt *q = NULL, *ins = NULL;
    if (sqlite3_prepare_v2(m->db, "SELECT rankId, step, pos, stepTasks, startNs, endNs FROM pp_dualpipev_tasks "
                                  "WHERE rankId < ? ORDER BY rankId, step, pos", -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(m->db, "INSERT INTO pp_dualpipev VALUES (?, ?, ?, ?, ?, ?)", -1, &ins, NULL) !=
            SQLITE_OK) {
        sqlite3_finalize(q);
        return db_fail(m, err);
    }
    sqlite3_bind_int64(q, 1, pp * group);
    slots sl = {0};
    int64_t have = -1; /* the stage sl holds */
    tb_status rc = TB_OK;
    int s;
    while (!rc && (s = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t stage = sqlite3_column_int64(q, 0) / group;
        if (stage != have) {
            ppchart_slots_free(&sl);
            have = stage;
            if (ppchart_stage(&sl, pp, mb, has_mb, stage)) {
                rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                break;
            }
        }
        int64_t pos = sqlite3_column_int64(q, 2), cnt = sqlite3_column_int64(q, 3);
        int named = cnt == sl.expect && pos >= 0 && (uint64_t)pos < sl.n;
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, sqlite3_column_int64(q, 0));
        sqlite3_bind_int64(ins, 2, sqlite3_column_int64(q, 1));
        sqlite3_bind_text(ins, 3, named ? sl.name[pos] : "", -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(ins, 4, sqlite3_column_int64(q, 4));
        sqlite3_bind_int64(ins, 5, sqlite3_column_int64(q, 5));
        sqlite3_bind_int(ins, 6, named ? sl.type[pos] : 0);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = db_fail(m, err);
    }
    if (!rc && s != SQLITE_DONE)
        rc = db_fail(m, err);
    ppchart_slots_free(&sl);
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    return rc;
}

static tb_status build_pp_dualpipev(const metric_ctx *m, tb_error *err)
{
    tb_status rc = metrics_exec(m, WHAT,
                                "DROP TABLE IF EXISTS temp.pp_dualpipev;"
                                "CREATE TEMP TABLE pp_dualpipev (rankId INTEGER, step INTEGER, name TEXT, "
                                "  startNs INTEGER, endNs INTEGER, type INTEGER);",
                                err);
    int64_t pp = 0, group = 0, mb = 0;
    int has_mb = 0, got = rc ? 0 : read_schedule(m, &pp, &group, &mb, &has_mb);
    if (got < 0)
        return db_fail(m, err);
    if (rc || !got)
        return rc;
    if (pp > PPCHART_MAX_SIZE || group > PPCHART_MAX_SIZE || (has_mb && mb > PPCHART_MAX_SIZE))
        return tb_error_set(err, TB_ERR_PARSE, WHAT ": pp_info or distributed_args out of range "
                            "(pp %lld, tp x dp %lld, microbatch_num %lld; at most %d each)", (long long)pp,
                            (long long)group, (long long)mb, PPCHART_MAX_SIZE);
    return name_tasks(m, pp, group, mb, has_mb, err);
}

const metric_table metrics_ppchart[] = {
    {"pp_schedule", {NULL}, build_pp_schedule,
     "the DualPipeV schedule the first rank's pp_info names: micro-batches and parallel sizes, as msprof-analyze's "
     "pp_chart recipe reads them",
     NULL, {NULL}},
    {"pp_dualpipev_tasks", {"pp_schedule", NULL}, build_pp_dualpipev_tasks,
     "per rank and step, the forward and backward device tasks msprof-analyze's pp_chart recipe names when the "
     "schedule is DualPipeV, with each one's place in its step",
     NULL, {NULL}},
    {"pp_dualpipev", {"pp_schedule", "pp_dualpipev_tasks", NULL}, build_pp_dualpipev,
     "per rank and step, each forward and backward device task named by its DualPipeV micro-batch, as "
     "msprof-analyze's pp_chart recipe",
     NULL, {NULL}},
};
const size_t metrics_ppchart_n = sizeof metrics_ppchart / sizeof metrics_ppchart[0];
