/* SPDX-License-Identifier: MIT */
/*
 * timesum.c - the cluster time summary, as msprof-analyze's
 * cluster_time_summary recipe computes it (docs/metrics.md, "Cluster time
 * summary").
 *
 * cluster_time_summary: one row per rank and step, in microseconds (REAL):
 *     stepTime (the STEP_TIME row's length; without one, Computing +
 *     Communication(Not Overlapped) + Free), the step trace (computation,
 *     communicationNotOverlapComputation, communicationOverlapComputation,
 *     communication, free: the rank's step_trace_time.csv or analysis.db
 *     rows, TB_STEP_TRACE_TIME, else the computed step_trace_time), the
 *     communication split into its wait and transmit stages (per op name,
 *     group and step over every rank: transmit = the shortest rank's time,
 *     wait = own time - transmit; summed per rank and step), and the memory
 *     copies (MEMCPY_ASYNC tasks: their summed time, and the part of it the
 *     recipe's sweep finds not overlapped by computing or communication,
 *     which is taken off free). A task or op belongs to the step whose
 *     STEP_TIME range holds its launching call's start, ends included (a
 *     memory copy: its own start); a rank without STEP_TIME rows has the one
 *     step -1. Rows are the union of the four parts' (rank, step) keys, as
 *     the recipe's outer merge; an absent figure is 0. The recipe gives no
 *     row at all when no rank has a step trace or no communication op falls
 *     in a step, and zero wait and transmit when only one rank has
 *     communication ops; so does this table.
 *
 * The sweep (mem_sweep) is the recipe's own walk, not the exact set
 * difference: it follows the interval reaching furthest, and counts the
 * time a memory copy leads before the next interval starts.
 */
#include <stdint.h>
#include <stdio.h>

#include "metrics/metrics.h"

#define WHAT "cluster_time_summary"

enum { T_COMPUTE = 0, T_COMM = 1, T_MEMORY = 4 };

static tb_status db_fail(const metric_ctx *m, const char *what, tb_error *err)
{
    return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
}

/* The ranks (tb_m_cts_rank: rankId, steps = 1 when it has STEP_TIME rows),
 * the steps' lengths (tb_m_cts_time) and the step trace (tb_m_cts_trace). */
static tb_status ts_steps(const metric_ctx *m, tb_error *err)
{
    return metrics_exec(
        m, WHAT,
        "DROP TABLE IF EXISTS temp.tb_m_cts_rank; DROP TABLE IF EXISTS temp.tb_m_cts_time;"
        "DROP TABLE IF EXISTS temp.tb_m_cts_trace;"
        "CREATE TEMP TABLE tb_m_cts_rank AS SELECT r.rankId, "
        "  EXISTS (SELECT 1 FROM STEP_TIME s WHERE s.rankId = r.rankId) AS steps FROM ("
        "  SELECT rankId FROM TB_RANK UNION SELECT rankId FROM STEP_TIME UNION SELECT rankId FROM TB_STEP_TRACE_TIME "
        "  UNION SELECT rankId FROM step_trace_time UNION SELECT rankId FROM COMMUNICATION_OP) r "
        "WHERE r.rankId IS NOT NULL;"
        "CREATE TEMP TABLE tb_m_cts_time AS "
        "SELECT s.rankId, s.id AS step, (s.endNs - s.startNs) / 1000.0 AS stepTime FROM STEP_TIME s "
        "  JOIN temp.tb_m_cts_rank r ON r.rankId = s.rankId "
        "UNION ALL SELECT rankId, -1, NULL FROM temp.tb_m_cts_rank WHERE NOT steps;"
        /* a rank's own step trace when it has one, else the computed one */
        "CREATE TEMP TABLE tb_m_cts_trace AS "
        "SELECT rankId, CASE WHEN step IS NULL OR step = '' THEN -1 ELSE step END AS step, computing, "
        "  communicationNotOverlapped AS cno, overlapped, communication, free FROM TB_STEP_TRACE_TIME "
        "  WHERE rankId IN (SELECT rankId FROM temp.tb_m_cts_rank) "
        "UNION ALL SELECT rankId, ifnull(step, -1), computing / 1000.0, communicationNotOverlapped / 1000.0, "
        "  overlapped / 1000.0, communication / 1000.0, free / 1000.0 FROM step_trace_time "
        "  WHERE rankId IN (SELECT rankId FROM temp.tb_m_cts_rank) "
        "  AND rankId NOT IN (SELECT rankId FROM TB_STEP_TRACE_TIME WHERE rankId IS NOT NULL);",
        err);
}

/* A step of a rank's step trace that is no integer is refused: the recipe
 * reads it as one. */
static tb_status ts_check_steps(const metric_ctx *m, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(m->db,
                           "SELECT rankId, step FROM temp.tb_m_cts_trace "
                           "WHERE typeof(step) <> 'integer' AND NOT (typeof(step) = 'text' "
                           "  AND CAST(step AS INTEGER) || '' = trim(step)) LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(m, WHAT ": steps", err);
    tb_status rc = TB_OK;
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW)
        rc = tb_error_set(err, TB_ERR_PARSE,
                          WHAT ": rank %lld: step '%s' of its step trace (step_trace_time.csv or analysis.db) is "
                               "not an integer step number",
                          (long long)metrics_rank_shown(m, sqlite3_column_int64(st, 0)),
                          (const char *)sqlite3_column_text(st, 1));
    else if (s != SQLITE_DONE)
        rc = db_fail(m, WHAT ": steps", err);
    sqlite3_finalize(st);
    if (rc)
        return rc;
    return metrics_exec(m, WHAT, "UPDATE temp.tb_m_cts_trace SET step = CAST(step AS INTEGER);", err);
}

/* The communication ops with their step (tb_m_cts_comm; step NULL when the
 * launching call is in no step) and the wait and transmit stages per rank
 * and step (tb_m_cts_tw). */
static tb_status ts_comm(const metric_ctx *m, tb_error *err)
{
    return metrics_exec(
        m, WHAT,
        "DROP TABLE IF EXISTS temp.tb_m_cts_comm; DROP TABLE IF EXISTS temp.tb_m_cts_tw;"
        "CREATE TEMP TABLE tb_m_cts_comm AS "
        "SELECT o.rankId, o.groupName AS g, o.opName AS op, (o.endNs - o.startNs) / 1000.0 AS t, "
        "  CASE WHEN r.steps THEN s.id ELSE -1 END AS step "
        "FROM COMMUNICATION_OP o JOIN temp.tb_m_cts_rank r ON r.rankId = o.rankId "
        "JOIN CANN_API a ON a.rankId = o.rankId AND a.connectionId = o.connectionId "
        "LEFT JOIN STEP_TIME s ON r.steps AND s.rankId = o.rankId AND a.startNs >= s.startNs "
        "  AND a.startNs <= s.endNs "
        "WHERE o.groupName IS NOT NULL AND o.opName IS NOT NULL;"
        "CREATE TEMP TABLE tb_m_cts_tw AS "
        "WITH c AS (SELECT rankId, step, t, min(t) OVER (PARTITION BY g, op, step) AS tr "
        "  FROM temp.tb_m_cts_comm WHERE step IS NOT NULL) "
        "SELECT rankId, step, sum(t - tr) AS wait, sum(tr) AS transmit FROM c GROUP BY rankId, step;",
        err);
}

/* One (rank, step) group of the sweep. */
typedef struct sweep {
    int64_t rank, step;
    int have;
    int64_t start, end, total;  /* the current block and the memory time counted */
    int type;
} sweep;

static tb_status sweep_flush(const metric_ctx *m, sqlite3_stmt *ins, sweep *w, tb_error *err)
{
    if (!w->have)
        return TB_OK;
    if (w->type == T_MEMORY)
        w->total += w->end - w->start;
    sqlite3_bind_int64(ins, 1, w->rank);
    sqlite3_bind_int64(ins, 2, w->step);
    sqlite3_bind_double(ins, 3, (double)w->total / 1000.0);
    if (sqlite3_step(ins) != SQLITE_DONE)
        return db_fail(m, WHAT ": memory", err);
    sqlite3_reset(ins);
    w->have = 0;
    return TB_OK;
}

/* One interval [s, e) of type ty, in start then end order within its group. */
static void sweep_add(sweep *w, int64_t s, int64_t e, int ty)
{
    if (w->type == T_MEMORY) {
        int64_t to = s > w->end ? w->end : s;
        if (w->start < to)
            w->total += to - w->start;
    }
    if (s > w->end) {
        w->start = s;
        w->end = e;
        w->type = ty;
    } else if (e > w->end) {
        w->type = ty;
        w->start = w->end;
        w->end = e;
    } else {
        w->start = e;
    }
}

static const char mem_rows[] =
    "WITH ov AS ("
    "  SELECT t.rankId, t.startNs AS s, t.endNs AS e, a.startNs AS api, 0 AS ty FROM COMPUTE_TASK_INFO c "
    "  JOIN TASK t ON t.globalTaskId = c.globalTaskId AND t.rankId = c.rankId AND t.startNs <> t.endNs "
    "  JOIN CANN_API a ON a.rankId = t.rankId AND a.connectionId = t.connectionId "
    "  UNION ALL SELECT o.rankId, o.startNs, o.endNs, a.startNs, 1 FROM COMMUNICATION_OP o "
    "  JOIN CANN_API a ON a.rankId = o.rankId AND a.connectionId = o.connectionId "
    "  UNION ALL SELECT rankId, startNs, endNs, startNs, 4 FROM TASK "
    "  WHERE taskType IN (SELECT id FROM STRING_IDS WHERE value = 'MEMCPY_ASYNC')) "
    "SELECT ov.rankId, CASE WHEN r.steps THEN st.id ELSE -1 END AS step, ov.s, ov.e, ov.ty "
    "FROM ov JOIN temp.tb_m_cts_rank r ON r.rankId = ov.rankId "
    "LEFT JOIN STEP_TIME st ON r.steps AND st.rankId = ov.rankId AND ov.api >= st.startNs AND ov.api <= st.endNs "
    "WHERE ov.s IS NOT NULL AND ov.e IS NOT NULL AND (NOT r.steps OR st.id IS NOT NULL) "
    "ORDER BY 1, 2, 3, 4, 5";

/* tb_m_cts_mem(rankId, step, memory, memNo): per rank and step with a
 * memory copy, the copies' summed time and the sweep's not-overlapped part. */
static tb_status ts_memory(const metric_ctx *m, tb_error *err)
{
    tb_status rc = metrics_exec(m, WHAT,
                                "DROP TABLE IF EXISTS temp.tb_m_cts_sweep; DROP TABLE IF EXISTS temp.tb_m_cts_mem;"
                                "CREATE TEMP TABLE tb_m_cts_sweep(rankId INTEGER, step INTEGER, memNo REAL);",
                                err);
    if (rc)
        return rc;
    sqlite3_stmt *q = NULL, *ins = NULL;
    if (sqlite3_prepare_v2(m->db, mem_rows, -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(m->db, "INSERT INTO temp.tb_m_cts_sweep VALUES (?, ?, ?)", -1, &ins, NULL) !=
            SQLITE_OK) {
        rc = db_fail(m, WHAT ": memory", err);
        goto out;
    }
    sweep w = {0};
    int s;
    while (!rc && (s = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(q, 0), step = sqlite3_column_int64(q, 1);
        int64_t a = sqlite3_column_int64(q, 2), b = sqlite3_column_int64(q, 3);
        if (!w.have || rank != w.rank || step != w.step) {
            if ((rc = sweep_flush(m, ins, &w, err)))
                break;
            w = (sweep){.rank = rank, .step = step, .have = 1, .start = a, .end = a, .type = -1};
        }
        sweep_add(&w, a, b, sqlite3_column_int(q, 4));
    }
    if (!rc && s != SQLITE_DONE)
        rc = db_fail(m, WHAT ": memory", err);
    if (!rc)
        rc = sweep_flush(m, ins, &w, err);
out:
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    if (rc)
        return rc;
    return metrics_exec(
        m, WHAT,
        "CREATE TEMP TABLE tb_m_cts_mem AS "
        "SELECT t.rankId, t.step, t.memory, w.memNo FROM ("
        "  SELECT o.rankId, CASE WHEN r.steps THEN st.id ELSE -1 END AS step, sum(o.endNs - o.startNs) / 1000.0 "
        "    AS memory FROM TASK o JOIN temp.tb_m_cts_rank r ON r.rankId = o.rankId "
        "  LEFT JOIN STEP_TIME st ON r.steps AND st.rankId = o.rankId AND o.startNs >= st.startNs "
        "    AND o.startNs <= st.endNs "
        "  WHERE o.taskType IN (SELECT id FROM STRING_IDS WHERE value = 'MEMCPY_ASYNC') "
        "    AND (NOT r.steps OR st.id IS NOT NULL) GROUP BY 1, 2) t "
        "JOIN temp.tb_m_cts_sweep w ON w.rankId = t.rankId AND w.step = t.step;",
        err);
}

static tb_status build_time_summary(const metric_ctx *m, tb_error *err)
{
    tb_status rc;
    if ((rc = ts_steps(m, err)) || (rc = ts_check_steps(m, err)) || (rc = ts_comm(m, err)) ||
        (rc = ts_memory(m, err)))
        return rc;
    return metrics_exec(
        m, WHAT,
        "DROP TABLE IF EXISTS temp.cluster_time_summary;"
        "CREATE TEMP TABLE cluster_time_summary AS "
        "WITH k AS (SELECT rankId, step FROM temp.tb_m_cts_time UNION SELECT rankId, step FROM temp.tb_m_cts_trace "
        "  UNION SELECT rankId, step FROM temp.tb_m_cts_tw UNION SELECT rankId, step FROM temp.tb_m_cts_mem), "
        "one AS (SELECT count(DISTINCT rankId) <= 1 AS v FROM temp.tb_m_cts_comm), "
        "go AS (SELECT EXISTS (SELECT 1 FROM temp.tb_m_cts_trace) AND EXISTS (SELECT 1 FROM temp.tb_m_cts_tw) AS v) "
        "SELECT k.rankId, k.step, "
        "  coalesce(s.stepTime, tr.computing + tr.cno + tr.free, 0.0) AS stepTime, "
        "  coalesce(tr.computing, 0.0) AS computation, coalesce(tr.cno, 0.0) AS communicationNotOverlapComputation, "
        "  coalesce(tr.overlapped, 0.0) AS communicationOverlapComputation, "
        "  coalesce(tr.communication, 0.0) AS communication, "
        "  coalesce(tr.free, 0.0) - coalesce(mm.memNo, 0.0) AS free, "
        "  CASE WHEN one.v THEN 0.0 ELSE coalesce(tw.wait, 0.0) END AS communicationWaitStageTime, "
        "  CASE WHEN one.v THEN 0.0 ELSE coalesce(tw.transmit, 0.0) END AS communicationTransmitStageTime, "
        "  coalesce(mm.memory, 0.0) AS memory, coalesce(mm.memNo, 0.0) AS memoryNotOverlapComputationCommunication "
        "FROM k CROSS JOIN one CROSS JOIN go "
        "LEFT JOIN temp.tb_m_cts_time s ON s.rankId = k.rankId AND s.step = k.step "
        "LEFT JOIN temp.tb_m_cts_trace tr ON tr.rankId = k.rankId AND tr.step = k.step "
        "LEFT JOIN temp.tb_m_cts_tw tw ON tw.rankId = k.rankId AND tw.step = k.step "
        "LEFT JOIN temp.tb_m_cts_mem mm ON mm.rankId = k.rankId AND mm.step = k.step "
        "WHERE go.v ORDER BY k.rankId, k.step;"
        "DROP TABLE temp.tb_m_cts_rank; DROP TABLE temp.tb_m_cts_time; DROP TABLE temp.tb_m_cts_trace;"
        "DROP TABLE temp.tb_m_cts_comm; DROP TABLE temp.tb_m_cts_tw; DROP TABLE temp.tb_m_cts_sweep;"
        "DROP TABLE temp.tb_m_cts_mem;",
        err);
}

const metric_table metrics_timesum[] = {
    {"cluster_time_summary", {"step_trace_time", NULL}, build_time_summary,
     "per rank and step: step time, computation, communication (overlapped or not, wait and transmit stages), "
     "free and memory copies (us), as msprof-analyze's cluster_time_summary recipe",
     NULL, {NULL}},
};
const size_t metrics_timesum_n = sizeof metrics_timesum / sizeof metrics_timesum[0];
