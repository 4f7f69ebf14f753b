/* SPDX-License-Identifier: MIT */
/*
 * test_cluster.c - the cluster computed tables (engine/metrics/cluster.c):
 * cluster_step_trace_time (rank sources, stages from p2p groups and the
 * one-stage fallbacks, msprof-analyze's CSV layout, the rank_source option),
 * slow_rank_op / slow_rank (from communication JSON rows and from
 * COMMUNICATION_OP) and communication_matrix (from matrix rows and from
 * HCCL tasks).
 *
 * Each test builds a small DB from the engine's own schema; the expected
 * rows are worked out by hand in the comments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>

#define TU_WITH_DB_FIXTURE
#include "testutil.h"
#include "metrics/metrics.h"
#include "tracebook/tracebook.h"

#define STEP_COLS                                                                                     \
    "SELECT step, type, idx, computing, communicationNotOverlapped, overlapped, communication, free, " \
    "stage, bubble, communicationNotOverlappedExcludeReceive AS cnoer, preparing, source "             \
    "FROM cluster_step_trace_time "
#define STEP_HEAD                                                                                      \
    "step|type|idx|computing|communicationNotOverlapped|overlapped|communication|free|stage|bubble|" \
    "cnoer|preparing|source\n"

/*
 * Four ranks' step_trace_time.csv rows (TB_STEP_TRACE_TIME, µs) in steps 1-4:
 *   step 1, ranks 0-3 (fields computing, notOverlapped, overlapped, comm,
 *   free, stage, bubble, notOverlappedExcludeReceive):
 *     r0: 10 5 1   6    2 20 0 5
 *     r1: 12 4 2   6    3 18 1 3
 *     r2:  8 9 0.5 9.5  1 25 2 7
 *     r3:  9 7 3   10   4 22 0 7
 *   step 2: ranks 0, 1 (as step 1); step 3: ranks 0, 1, 4; step 4: rank 4.
 * p2p groups "0,1" and "2,3" of a communication_group.json that names no
 * group (msprof-analyze's earlier files, comm_group_parallel_info absent):
 * they are the stages, as msprof-analyze then took them; the collective
 * group and the "pp" row without a pg_name do not count.
 * Step 1: stages (0, 1) = max(r0, r1) = 12 5 2 6 3 20 1 5 and
 *         (2, 3) = max(r2, r3) = 9 9 3 10 4 25 2 7.
 * Step 2: ranks 0, 1 are all in group (0, 1): one stage (0, 1), group (2, 3)
 *         has no rank there (msprof-analyze's 8-rank file with 16-rank groups).
 * Step 3: (0, 1), and rank 4, in no group, alone in the stage "()" (ranks in
 *         no stage share the empty tuple, as msprof-analyze groups them).
 * Step 4: only rank 4: the stage "()".
 * Rank 5's row has an empty step: the step is NULL, its stage "()".
 */
static const char stage_rows[] =
    "INSERT INTO TB_STEP_TRACE_TIME (rankId, step, computing, communicationNotOverlapped, overlapped,"
    "  communication, free, stage, bubble, communicationNotOverlappedExcludeReceive) VALUES"
    "  (0, '1', 10, 5, 1, 6, 2, 20, 0, 5), (1, '1', 12, 4, 2, 6, 3, 18, 1, 3),"
    "  (2, '1', 8, 9, 0.5, 9.5, 1, 25, 2, 7), (3, '1', 9, 7, 3, 10, 4, 22, 0, 7),"
    "  (0, '2', 10, 5, 1, 6, 2, 20, 0, 5), (1, '2', 12, 4, 2, 6, 3, 18, 1, 3),"
    "  (0, '3', 10, 5, 1, 6, 2, 20, 0, 5), (1, '3', 12, 4, 2, 6, 3, 18, 1, 3),"
    "  (4, '3', 1, 50, 1, 51, 1, 60, 0, 50), (4, '4', 1, 50, 1, 51, 1, 60, 0, 50),"
    "  (5, '', 1, 2, 3, 4, 5, 6, 7, 8);"
    "INSERT INTO TB_COMM_GROUP (kind, groupIndex, ranks) VALUES ('collective', 0, '0,1,2,3'),"
    "  ('p2p', 0, '0,1'), ('p2p', 1, '3,2'), ('pp', 0, '0,2');";

static void stages_from_p2p_groups(void **state)
{
    (void)state;
    tu_make_db("stages", stage_rows);
    tu_assert_rows(STEP_COLS "WHERE type = 'stage' ORDER BY seq",
                STEP_HEAD
                "NULL|'stage'|'()'|1|2|3|4|5|6|7|8|NULL|'TB_STEP_TRACE_TIME'\n"
                "'1'|'stage'|'(0, 1)'|12|5|2|6|3|20|1|5|NULL|'TB_STEP_TRACE_TIME'\n"
                "'1'|'stage'|'(2, 3)'|9|9|3|10|4|25|2|7|NULL|'TB_STEP_TRACE_TIME'\n"
                "'2'|'stage'|'(0, 1)'|12|5|2|6|3|20|1|5|NULL|'TB_STEP_TRACE_TIME'\n"
                "'3'|'stage'|'(0, 1)'|12|5|2|6|3|20|1|5|NULL|'TB_STEP_TRACE_TIME'\n"
                "'3'|'stage'|'()'|1|50|1|51|1|60|0|50|NULL|'TB_STEP_TRACE_TIME'\n"
                "'4'|'stage'|'()'|1|50|1|51|1|60|0|50|NULL|'TB_STEP_TRACE_TIME'\n");
    /* rank rows: as loaded, in msprof-analyze's order (rank, then step) */
    tu_assert_rows("SELECT idx, step, rankId, computing FROM cluster_step_trace_time WHERE type = 'rank' ORDER BY seq",
                "idx|step|rankId|computing\n"
                "'0'|'1'|0|10\n'0'|'2'|0|10\n'0'|'3'|0|10\n'1'|'1'|1|12\n'1'|'2'|1|12\n'1'|'3'|1|12\n"
                "'2'|'1'|2|8\n'3'|'1'|3|9\n'4'|'3'|4|1\n'4'|'4'|4|1\n'5'|NULL|5|1\n");
    assert_string_equal(tu_notes, "");
}

/*
 * msprof-analyze's stages from pipeline groups, ranks 0-3 in step 1
 * (computing 1 2 3 4, free 4 3 2 1). pp groups (p2p, pg_name pp): 0,2 and
 * 1,3. Collective groups: 0,1 (tp) and 2,3 (tp) hold one rank of each pp
 * group: stage pieces; 0,1,2,3 (dp) and the collective 0,2 named pp hold
 * two ranks of one: not stages. Stages (0, 1) = computing 2, free 4 and
 * (2, 3) = computing 4, free 2. The same from profiler_metadata.json's pp
 * groups and the ranks' communication.json collective ops (tp0: ranks 0, 1;
 * tp1: ranks 2, 3; world: all four). Without any pp group: no stage rows.
 */
static void stages_from_pipeline_groups(void **state)
{
    (void)state;
    static const char ranks[] = "INSERT INTO TB_STEP_TRACE_TIME (rankId, step, computing, free) VALUES"
                                "  (0, '1', 1, 4), (1, '1', 2, 3), (2, '1', 3, 2), (3, '1', 4, 1);";
    char sql[2048];
    snprintf(sql, sizeof sql, "%s"
             "INSERT INTO STRING_IDS VALUES (1, 'g_tp0'), (2, 'g_tp1'), (3, 'g_dp'), (4, 'g_pp0'), (5, 'g_pp1');"
             "INSERT INTO TB_COMM_GROUP (kind, groupIndex, ranks, groupName, pgName) VALUES"
             "  ('p2p', 0, '0,2', 4, 'pp'), ('p2p', 1, '1,3', 5, 'pp'), ('collective', 0, '0,1', 1, 'tp'),"
             "  ('collective', 1, '2,3', 2, 'tp'), ('collective', 2, '0,1,2,3', 3, 'dp'),"
             "  ('collective', 3, '0,2', 4, 'pp');", ranks);
    tu_make_db("pipeline", sql);
    static const char want[] = "idx|computing|free\n'(0, 1)'|2|4\n'(2, 3)'|4|2\n";
    tu_assert_rows("SELECT idx, computing, free FROM cluster_step_trace_time WHERE type = 'stage' ORDER BY seq", want);
    snprintf(sql, sizeof sql, "%s"
             "INSERT INTO STRING_IDS VALUES (1, 'tp0'), (2, 'tp1'), (3, 'world');"
             "INSERT INTO TB_COMM_GROUP (kind, groupIndex, ranks, groupId, pgName, rankId) VALUES"
             "  ('pp', 0, '0,2', '11', 'pp', 0), ('pp', 1, '1,3', '12', 'pp', 1);"
             "INSERT INTO TB_COMM_OP_STAT (rankId, step, opKind, opName, groupName) VALUES"
             "  (0, 'step1', 'collective', 1, 1), (1, 'step1', 'collective', 1, 1),"
             "  (2, 'step1', 'collective', 1, 2), (3, 'step1', 'collective', 1, 2),"
             "  (0, 'step1', 'collective', 2, 3), (1, 'step1', 'collective', 2, 3),"
             "  (2, 'step1', 'collective', 2, 3), (3, 'step1', 'collective', 2, 3);", ranks);
    tu_make_db("pipeline_meta", sql);
    tu_assert_rows("SELECT idx, computing, free FROM cluster_step_trace_time WHERE type = 'stage' ORDER BY seq", want);
    /* groups without pipeline names (msprof-analyze's comm_group_parallel_info, pg_name empty): no stage */
    snprintf(sql, sizeof sql, "%s"
             "INSERT INTO STRING_IDS VALUES (1, 'g');"
             "INSERT INTO TB_COMM_GROUP (kind, groupIndex, ranks, groupName) VALUES ('p2p', 0, '0,1', 1),"
             "  ('collective', 0, '0,1,2,3', 1);", ranks);
    tu_make_db("nopipeline", sql);
    tu_assert_rows("SELECT count(*) AS n FROM cluster_step_trace_time WHERE type = 'stage'", "n\n0\n");
    /* no groups at all: no stage either */
    tu_make_db("nogroups", ranks);
    tu_assert_rows("SELECT count(*) AS n FROM cluster_step_trace_time WHERE type = 'stage'", "n\n0\n");
    assert_string_equal(tu_notes, "");
}

/*
 * With no per-rank step trace, the rank rows of a cluster_step_trace_time.csv
 * are the source, and its stage rows come with them, as the file has them
 * (not recomputed: here they are no max of the rank rows).
 * Preparing was in the file: it is a column of the msprof-analyze layout.
 */
static void cluster_csv_rank_rows(void **state)
{
    (void)state;
    tu_make_db("clustercsv",
            "INSERT INTO TB_CLUSTER_STEP_TRACE_TIME VALUES"
            "  ('2', 'rank', '0', 10, 5, 1, 6, 2, 20, 0, 5, 0.5),"
            "  ('2', 'rank', '1', 12, 4, 2, 6, 3, 18, 1, 3, 0.25),"
            "  ('2', 'stage', '(0, 1)', 99, 99, 99, 99, 99, 99, 99, 99, 99);");
    tu_assert_rows(STEP_COLS "ORDER BY seq",
                STEP_HEAD "'2'|'rank'|'0'|10|5|1|6|2|20|0|5|0.5|'TB_CLUSTER_STEP_TRACE_TIME'\n"
                          "'2'|'rank'|'1'|12|4|2|6|3|18|1|3|0.25|'TB_CLUSTER_STEP_TRACE_TIME'\n"
                          "'2'|'stage'|'(0, 1)'|99|99|99|99|99|99|99|99|99|'TB_CLUSTER_STEP_TRACE_TIME'\n");
    tu_assert_rows("SELECT * FROM cluster_step_trace_time_csv ORDER BY rowid",
                "Step|Type|Index|Computing|Communication(Not Overlapped)|Overlapped|Communication|Free|Stage|"
                "Bubble|Communication(Not Overlapped and Exclude Receive)|Preparing\n"
                "'2'|'rank'|'0'|10|5|1|6|2|20|0|5|0.5\n"
                "'2'|'rank'|'1'|12|4|2|6|3|18|1|3|0.25\n"
                "'2'|'stage'|'(0, 1)'|99|99|99|99|99|99|99|99|99\n");
}

/* TB_STEP_TRACE_TIME wins over the cluster CSV; without Preparing the layout has none. */
static void step_csv_wins_and_no_preparing(void **state)
{
    (void)state;
    tu_make_db("both", "INSERT INTO TB_CLUSTER_STEP_TRACE_TIME (step, type, indexText, computing) VALUES"
                    "  ('2', 'rank', '0', 1000);"
                    "INSERT INTO TB_STEP_TRACE_TIME (rankId, step, computing, bubble) VALUES (0, '2', 7.5, 0);");
    tu_assert_rows("SELECT * FROM cluster_step_trace_time_csv ORDER BY rowid",
                "Step|Type|Index|Computing|Communication(Not Overlapped)|Overlapped|Communication|Free|Stage|"
                "Bubble|Communication(Not Overlapped and Exclude Receive)\n"
                "'2'|'rank'|'0'|7.5|NULL|NULL|NULL|NULL|NULL|0|NULL\n");
}

/* With device tasks and no step trace CSV, the rank rows are the computed
 * step_trace_time (ns -> µs); a step_trace_time.csv of the ranks wins over it,
 * as msprof-analyze reads that file. */
static void computed_step_trace_first(void **state)
{
    (void)state;
    if (!metrics_find("step_trace_time"))
        skip(); /* steptrace.c does not provide it in this build */
    tu_make_db("computed",
            "INSERT INTO STRING_IDS VALUES (1, 'k'), (2, 'AI_CORE');"
            "INSERT INTO TASK (startNs, endNs, deviceId, globalTaskId, taskType, rankId, name) VALUES"
            "  (1000, 3000, 0, 1, 2, 0, 1), (1500, 4000, 0, 2, 2, 1, 1);"
            "INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, taskType, opType, rankId) VALUES"
            "  (1, 1, 2, 1, 0), (1, 2, 2, 1, 1);");
    tu_assert_rows("SELECT count(*) AS n, min(source) AS s FROM cluster_step_trace_time WHERE type = 'rank'",
                "n|s\n2|'step_trace_time'\n");
    /* every field of a rank row is the computed one, in µs */
    tu_assert_rows("SELECT count(*) AS differ FROM cluster_step_trace_time c JOIN step_trace_time s "
                "  ON c.rankId = s.rankId AND c.step IS NULLIF(CAST(s.step AS TEXT), '') "
                "WHERE c.type = 'rank' AND (c.computing IS NOT s.computing / 1000.0 "
                "  OR c.free IS NOT s.free / 1000.0 OR c.preparing IS NOT s.preparing / 1000.0)",
                "differ\n0\n");
    /* the same tasks with the ranks' step_trace_time.csv rows: those are the rank rows */
    tu_make_db("computed_csv",
            "INSERT INTO STRING_IDS VALUES (1, 'k'), (2, 'AI_CORE');"
            "INSERT INTO TASK (startNs, endNs, deviceId, globalTaskId, taskType, rankId, name) VALUES"
            "  (1000, 3000, 0, 1, 2, 0, 1), (1500, 4000, 0, 2, 2, 1, 1);"
            "INSERT INTO TB_STEP_TRACE_TIME (rankId, step, computing) VALUES (0, '2', 7.5), (1, '2', 8.5);");
    tu_assert_rows("SELECT step, idx, computing, source FROM cluster_step_trace_time WHERE type = 'rank' ORDER BY seq",
                "step|idx|computing|source\n'2'|'0'|7.5|'TB_STEP_TRACE_TIME'\n'2'|'1'|8.5|'TB_STEP_TRACE_TIME'\n");
}

/* Runs a spec (YAML text) into c in this file's style (capture.h). */
static tb_status run_spec(capture *c, const char *yaml, tb_error *err)
{
    tu_cap_init(c);
    return cap_run_spec(c, tu_dbpath, yaml, err);
}

/* metrics.cluster.rank_source picks a source; an unknown one stops the spec when it loads. */
static void rank_source_option(void **state)
{
    (void)state;
    tu_make_db("option", "INSERT INTO TB_CLUSTER_STEP_TRACE_TIME (step, type, indexText, computing) VALUES"
                      "  ('2', 'rank', '0', 1000);"
                      "INSERT INTO TB_STEP_TRACE_TIME (rankId, step, computing) VALUES (0, '2', 7.5);");
    capture c;
    tb_error err;
    assert_int_equal(run_spec(&c,
                              "tracebook: 1\n"
                              "metrics: {cluster: {rank_source: TB_CLUSTER_STEP_TRACE_TIME}}\n"
                              "reports:\n"
                              "  - id: r\n"
                              "    sql: SELECT type, computing, source FROM cluster_step_trace_time ORDER BY seq\n",
                              &err),
                     TB_OK);
    assert_string_equal(c.text, "type|computing|source\n'rank'|1000|'TB_CLUSTER_STEP_TRACE_TIME'\n");
    assert_int_equal(run_spec(&c,
                              "tracebook: 1\n"
                              "metrics: {cluster: {rank_source: timeline}}\n"
                              "reports:\n"
                              "  - id: r\n"
                              "    sql: SELECT * FROM cluster_step_trace_time\n",
                              &err),
                     TB_ERR_PARSE);
    assert_string_equal(err.message, "'metrics.cluster.rank_source' must be one of: auto, step_trace_time, "
                                     "TB_STEP_TRACE_TIME, TB_CLUSTER_STEP_TRACE_TIME; got 'timeline'");
}

/* The built-in report writes msprof-analyze's header. */
static void builtin_report_header(void **state)
{
    (void)state;
    tu_make_db("builtin", stage_rows);
    capture c;
    tb_error err;
    tb_status st = run_spec(&c, "tracebook: 1\nreports:\n  - use: cluster_step_trace_time\n", &err);
    if (st)
        print_error("%s\n", err.message);
    assert_int_equal(st, TB_OK);
    const char *nl = strchr(c.text, '\n');
    assert_non_null(nl);
    assert_true(!strncmp(c.text,
                         "Step|Type|Index|Computing|Communication(Not Overlapped)|Overlapped|Communication|"
                         "Free|Stage|Bubble|Communication(Not Overlapped and Exclude Receive)\n",
                         (size_t)(nl - c.text) + 1));
    assert_non_null(strstr(c.text, "'1'|'stage'|'(2, 3)'|9|9|3|10|4|25|2|7\n"));
}

/*
 * Slow rank from communication JSON rows (TB_COMM_OP_STAT), step "step1":
 *   opA@g1: r0 10, r1 30, r2 25 -> transmit 10, waits 0, 20, 15
 *   opB@g1: r0 40, r1 5,  r2 5  -> transmit 5,  waits 35, 0, 0
 * Rank 1's per-rank file repeats opA with 99: the cluster file's row wins.
 * A p2p op is not collective: left out.
 * Totals: r0 ops 2, time 50, wait 35, max 35, last arrivals 1 (opA);
 *         r1 2, 35, 20, 20, 1 (opB); r2 2, 30, 15, 15, 1 (opB).
 * Positions by total wait: r2 (15), r1 (20), r0 (35).
 */
static void slow_rank_from_op_stats(void **state)
{
    (void)state;
    tu_make_db("slowstat",
            "INSERT INTO STRING_IDS VALUES (1, 'opA'), (2, 'opB'), (3, 'g1'), (4, 'hcom_send__1');"
            "INSERT INTO TB_COMM_OP_STAT (rankId, step, opKind, opName, groupName, elapseNs, cluster) VALUES"
            "  (0, 'step1', 'collective', 1, 3, 10, 1), (1, 'step1', 'collective', 1, 3, 30, 1),"
            "  (2, 'step1', 'collective', 1, 3, 25, 1), (1, 'step1', 'collective', 1, 3, 99, 0),"
            "  (0, 'step1', 'collective', 2, 3, 40, 1), (1, 'step1', 'collective', 2, 3, 5, 1),"
            "  (2, 'step1', 'collective', 2, 3, 5, 1), (0, 'step1', 'p2p', 4, 3, 1000, 1);");
    tu_assert_rows("SELECT step, opName, groupName, rankId, ranks, timeNs, transmitNs, waitNs, source "
                "FROM slow_rank_op ORDER BY rowid",
                "step|opName|groupName|rankId|ranks|timeNs|transmitNs|waitNs|source\n"
                "'1'|'opA'|'g1'|0|3|10|10|0|'TB_COMM_OP_STAT'\n"
                "'1'|'opA'|'g1'|1|3|30|10|20|'TB_COMM_OP_STAT'\n"
                "'1'|'opA'|'g1'|2|3|25|10|15|'TB_COMM_OP_STAT'\n"
                "'1'|'opB'|'g1'|0|3|40|5|35|'TB_COMM_OP_STAT'\n"
                "'1'|'opB'|'g1'|1|3|5|5|0|'TB_COMM_OP_STAT'\n"
                "'1'|'opB'|'g1'|2|3|5|5|0|'TB_COMM_OP_STAT'\n");
    tu_assert_rows("SELECT * FROM slow_rank ORDER BY position",
                "position|rankId|ops|totalTimeNs|totalWaitNs|maxWaitNs|waitRatio|lastArrivals|source\n"
                "1|2|2|30|15|15|0.5|1|'TB_COMM_OP_STAT'\n"
                "2|1|2|35|20|20|0.571428571428571|1|'TB_COMM_OP_STAT'\n"
                "3|0|2|50|35|35|0.7|1|'TB_COMM_OP_STAT'\n");
    /* each op's Communication Time Info on a rank, as its row gives it (the cluster file's row wins) */
    tu_make_db("slowinfo",
            "INSERT INTO STRING_IDS VALUES (1, 'opA'), (3, 'g1');"
            "INSERT INTO TB_COMM_OP_STAT (rankId, step, opKind, opName, groupName, elapseNs, transitNs, waitNs,"
            "  synchronizationNs, idleNs, waitRatio, synchronizationRatio, cluster) VALUES"
            "  (0, 'step1', 'collective', 1, 3, 10, 4, 5, 3, 1, 0.5556, 0.4286, 1),"
            "  (1, 'step1', 'collective', 1, 3, 30, 20, 0, 0, 10, 0, 0, 1),"
            "  (1, 'step1', 'collective', 1, 3, 99, 9, 9, 9, 9, 0.9, 0.9, 0);");
    tu_assert_rows("SELECT rankId, timeNs, transitNs, opWaitNs, synchronizationNs, idleNs, waitRatio, "
                "synchronizationRatio FROM slow_rank_op ORDER BY rowid",
                "rankId|timeNs|transitNs|opWaitNs|synchronizationNs|idleNs|waitRatio|synchronizationRatio\n"
                "0|10|4|5|3|1|0.5556|0.4286\n1|30|20|0|0|10|0|0\n");
}

/*
 * Slow rank from COMMUNICATION_OP when no communication JSON was loaded.
 * Steps (STEP_TIME, both ranks): 1 = [0, 1000], 2 = [1000, 2000].
 *   hcom_allReduce__1: r0 [100,150) 50, r1 [120,150) 30 -> step 1, waits 20, 0
 *   hcom_allGather__3: r0 [1010,1040) 30, launched at 900 (CANN_API, connection
 *       77) -> step 1; r1 [950,1040) 90, no launch -> step 1; waits 0, 60
 *   hcom_allReduce__2: r0 [1100,1120) 20, r1 [1050,1120) 70 -> step 2; waits 0, 50
 *   hcom_send__4 on r0 is point-to-point: left out.
 */
static const char op_rows[] =
    "INSERT INTO STRING_IDS VALUES (1, 'hcom_allReduce__1'), (2, 'hcom_allGather__3'),"
    "  (3, 'hcom_allReduce__2'), (4, 'hcom_send__4'), (5, 'grp'), (6, 'hcom_allReduce_'), (7, 'hcom_send_'),"
    "  (8, 'MEMCPY');"
    "INSERT INTO STEP_TIME VALUES (1, 0, 1000, 0), (2, 1000, 2000, 0), (1, 0, 1000, 1), (2, 1000, 2000, 1);"
    "INSERT INTO CANN_API (startNs, endNs, type, globalTid, connectionId, name, rankId) VALUES"
    "  (900, 910, 5500, 1, 77, 2, 0);"
    "INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, groupName, opId, opType, deviceId, rankId)"
    "  VALUES (1, 100, 150, NULL, 5, 1, 6, 0, 0), (1, 120, 150, NULL, 5, 1, 6, 0, 1),"
    "  (2, 1010, 1040, 77, 5, 2, 6, 0, 0), (2, 950, 1040, NULL, 5, 2, 6, 0, 1),"
    "  (3, 1100, 1120, NULL, 5, 3, 6, 0, 0), (3, 1050, 1120, NULL, 5, 3, 6, 0, 1),"
    "  (4, 1200, 1300, NULL, 5, 4, 7, 0, 0);";

static void slow_rank_from_comm_ops(void **state)
{
    (void)state;
    tu_make_db("slowop", op_rows);
    tu_assert_rows("SELECT step, opName, rankId, timeNs, transmitNs, waitNs, source FROM slow_rank_op ORDER BY rowid",
                "step|opName|rankId|timeNs|transmitNs|waitNs|source\n"
                "'1'|'hcom_allGather__3'|0|30|30|0|'COMMUNICATION_OP'\n"
                "'1'|'hcom_allGather__3'|1|90|30|60|'COMMUNICATION_OP'\n"
                "'1'|'hcom_allReduce__1'|0|50|30|20|'COMMUNICATION_OP'\n"
                "'1'|'hcom_allReduce__1'|1|30|30|0|'COMMUNICATION_OP'\n"
                "'2'|'hcom_allReduce__2'|0|20|20|0|'COMMUNICATION_OP'\n"
                "'2'|'hcom_allReduce__2'|1|70|20|50|'COMMUNICATION_OP'\n");
    /* r0: wait 20, last arrivals 2; r1: wait 110, last arrivals 1 */
    tu_assert_rows("SELECT position, rankId, ops, totalTimeNs, totalWaitNs, maxWaitNs, lastArrivals FROM slow_rank",
                "position|rankId|ops|totalTimeNs|totalWaitNs|maxWaitNs|lastArrivals\n"
                "1|0|3|100|20|20|2\n2|1|3|190|110|60|1\n");
}

/*
 * Communication matrix from matrix rows (TB_COMM_MATRIX): 20.97152 MB is
 * 20971520 bytes, 0.86381540625 ms is 863815 ns (rounded), bandwidth as
 * written. The cluster file's link 0-8 (global ranks already) is kept as
 * written. The ranks' own files name ranks by their place in the group:
 * group '9350' is ranks 4 and 7 (rank 4's file has its own link 0-0, rank
 * 7's 1-1), so rank 4's 0-1 is 4 -> 7 and rank 7's 1-0 is 7 -> 4; rank 4's
 * link 1-0 repeats rank 7's (the source rank's row wins, bandwidth 0.0247).
 * In group '1333', local rank 3 is no rank's own: rank 4's 0-3 is left out,
 * and a note says so.
 */
static void matrix_from_files(void **state)
{
    (void)state;
    tu_make_db("matrix",
            "INSERT INTO STRING_IDS VALUES (1, 'hcom_send__822_0'), (2, '1333'), (3, 'hcom_broadcast__483_0'),"
            "  (4, '9350');"
            "INSERT INTO TB_COMM_MATRIX (rankId, step, opKind, opName, groupName, srcRank, dstRank,"
            "  transportType, transitSizeMB, transitTimeMs, bandwidthGBs, groupRanks, cluster) VALUES"
            "  (NULL, 'step2', 'p2p', 1, 2, 0, 8, 'RDMA', 20.97152, 0.86381540625, 24.2778, NULL, 1),"
            "  (4, 'step2', 'p2p', 1, 2, 0, 0, 'LOCAL', 1, 1, 1, NULL, 0),"
            "  (4, 'step2', 'p2p', 1, 2, 0, 3, 'RDMA', 20.97152, 0.9, 1.5, NULL, 0),"
            "  (4, 'step2', 'collective', 3, 4, 0, 0, 'LOCAL', 4e-05, 0.001, 0.04, NULL, 0),"
            "  (4, 'step2', 'collective', 3, 4, 0, 1, 'HCCS', 4e-05, 0.002, 0.02, NULL, 0),"
            "  (4, 'step2', 'collective', 3, 4, 1, 0, 'HCCS', 4e-05, 0.00162, 0.5, NULL, 0),"
            "  (7, 'step2', 'collective', 3, 4, 1, 1, 'LOCAL', 4e-05, 0.001, 0.04, NULL, 0),"
            "  (7, 'step2', 'collective', 3, 4, 1, 0, 'HCCS', 4e-05, 0.00162, 0.0247, NULL, 0);");
    tu_assert_rows("SELECT step, opName, srcRank, dstRank, transport, bytes, timeNs, bandwidthGBs FROM communication_matrix",
                "step|opName|srcRank|dstRank|transport|bytes|timeNs|bandwidthGBs\n"
                "'2'|'hcom_broadcast__483_0'|4|4|'LOCAL'|40|1000|0.04\n"
                "'2'|'hcom_broadcast__483_0'|4|7|'HCCS'|40|2000|0.02\n"
                "'2'|'hcom_broadcast__483_0'|7|4|'HCCS'|40|1620|0.0247\n"
                "'2'|'hcom_broadcast__483_0'|7|7|'LOCAL'|40|1000|0.04\n"
                "'2'|'hcom_send__822_0'|0|8|'RDMA'|20971520|863815|24.2778\n"
                "'2'|'hcom_send__822_0'|4|4|'LOCAL'|1000000|1000000|1\n");
    assert_string_equal(tu_notes, "communication_matrix: 1 links of 1 ops left out: a group-local rank no rank of the "
                               "load maps to a global rank (by its own link in the group): group 1333 local rank 3\n");
}

/*
 * Group-local ranks mapped by profiler_metadata.json: its group keyed
 * 'group_a' with global ranks 5, 3 is named by msprof-analyze's hash of the
 * key, 15277154233472997225 (computed independently); local rank 0 is 3, 1
 * is 5 (the ranks in order). Rank 3's file has no link of its own there,
 * yet 0-1 is 3 -> 5 and rank 5's 1-0 is 5 -> 3.
 */
static void matrix_ranks_from_metadata(void **state)
{
    (void)state;
    tu_make_db("matrix_meta",
            "INSERT INTO STRING_IDS VALUES (1, 'hcom_allReduce__225_0'), (2, '15277154233472997225');"
            "INSERT INTO TB_COMM_GROUP (kind, groupIndex, ranks, groupId, pgName, rankId) VALUES"
            "  ('dp', 0, '5,3', 'group_a', 'dp', 3), ('dp', 0, '5,3', 'group_a', 'dp', 5);"
            "INSERT INTO TB_COMM_MATRIX (rankId, step, opKind, opName, groupName, srcRank, dstRank,"
            "  transportType, transitSizeMB, transitTimeMs, bandwidthGBs, groupRanks, cluster) VALUES"
            "  (3, 'step1', 'collective', 1, 2, 0, 1, 'HCCS', 1, 1, 1, NULL, 0),"
            "  (5, 'step1', 'collective', 1, 2, 1, 0, 'HCCS', 2, 1, 2, NULL, 0);");
    tu_assert_rows("SELECT srcRank, dstRank, bytes FROM communication_matrix",
                "srcRank|dstRank|bytes\n3|5|1000000\n5|3|2000000\n");
    assert_string_equal(tu_notes, "");
}

/*
 * comm_op_bandwidth: rank 0's HCCS row of opA is in its own file (bandwidth
 * 1.5) and in the cluster file (2.5): the cluster file's row wins, with its
 * size distribution (two sizes); rank 1's RDMA row has no distribution: {}.
 */
static void op_bandwidth_from_files(void **state)
{
    (void)state;
    tu_make_db("bandwidth",
            "INSERT INTO STRING_IDS VALUES (1, 'opA'), (2, 'g1');"
            "INSERT INTO TB_COMM_BANDWIDTH (rankId, step, opName, transport, transitSizeMB, transitTimeMs,"
            "  bandwidthGBs, largePacketRatio, opKind, groupName, cluster) VALUES"
            "  (0, 'step1', 1, 'HCCS', 3, 2, 1.5, 0, 'collective', 2, 0),"
            "  (0, 'step1', 1, 'HCCS', 4, 1.6, 2.5, 0.5, 'collective', 2, 1),"
            "  (1, 'step1', 1, 'RDMA', 0, 0, 0, 0, 'collective', 2, 0);"
            "INSERT INTO TB_COMM_SIZE_DIST (rankId, step, opKind, opName, groupName, transport, sizeMB, count,"
            "  timeMs, cluster) VALUES"
            "  (0, 'step1', 'collective', 1, 2, 'HCCS', '1.0', 9, 9, 0),"
            "  (0, 'step1', 'collective', 1, 2, 'HCCS', '2.5', 1, 0.6, 1),"
            "  (0, 'step1', 'collective', 1, 2, 'HCCS', '4e-05', 3, 1, 1);");
    tu_assert_rows("SELECT step, opName, groupName, rankId, transport, transitSizeMB, transitTimeMs, bandwidthGBs, "
                "largePacketRatio, sizeDistribution FROM comm_op_bandwidth",
                "step|opName|groupName|rankId|transport|transitSizeMB|transitTimeMs|bandwidthGBs|largePacketRatio|"
                "sizeDistribution\n"
                "'1'|'opA'|'g1'|0|'HCCS'|4|1.6|2.5|0.5|'{\"2.5\":[1,0.6],\"4e-05\":[3,1]}'\n"
                "'1'|'opA'|'g1'|1|'RDMA'|0|0|0|0|'{}'\n");
}

/*
 * Communication matrix from HCCL tasks when no matrix file was loaded:
 * hcom_allReduce__1 (rank 0, step 1) moves 1000 + 3000 bytes 0 -> 1 over
 * SDMA in 10 + 20 ns (133.33 GB/s) and 500 bytes 0 -> 0 LOCAL in 5 ns (100
 * GB/s); a notify task (size 0) moves nothing.
 */
static void matrix_from_tasks(void **state)
{
    (void)state;
    tu_make_db("tasks", "INSERT INTO STRING_IDS VALUES (1, 'hcom_allReduce__1'), (5, 'grp');"
                     "INSERT INTO STEP_TIME VALUES (1, 0, 1000, 0);"
                     "INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, groupName, opId, rankId)"
                     "  VALUES (1, 100, 200, 5, 1, 0);"
                     "INSERT INTO TASK (startNs, endNs, globalTaskId, rankId) VALUES"
                     "  (100, 110, 1, 0), (110, 130, 2, 0), (130, 131, 3, 0), (131, 136, 4, 0);"
                     "INSERT INTO COMMUNICATION_TASK_INFO (globalTaskId, groupName, srcRank, dstRank, transportType,"
                     "  size, opId, rankId) VALUES (1, 5, 0, 1, 0, 1000, 1, 0), (2, 5, 0, 1, 0, 3000, 1, 0),"
                     "  (3, 5, 0, 1, 0, 0, 1, 0), (4, 5, 0, 0, 2, 500, 1, 0);");
    tu_assert_rows("SELECT * FROM communication_matrix",
                "step|opKind|opName|groupName|groupRanks|srcRank|dstRank|transport|bytes|timeNs|bandwidthGBs|"
                "source\n"
                "'1'|'collective'|'hcom_allReduce__1'|'grp'|NULL|0|0|'LOCAL'|500|5|100|'COMMUNICATION_TASK_INFO'\n"
                "'1'|'collective'|'hcom_allReduce__1'|'grp'|NULL|0|1|'SDMA'|4000|30|133.333333333333|"
                "'COMMUNICATION_TASK_INFO'\n");
}

/* Without any source the tables exist and are empty. */
static void empty_db(void **state)
{
    (void)state;
    tu_make_db("empty", "SELECT 1;");
    tu_assert_rows("SELECT (SELECT count(*) FROM cluster_step_trace_time) + (SELECT count(*) FROM slow_rank) + "
                "(SELECT count(*) FROM communication_matrix) AS n",
                "n\n0\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stages_from_p2p_groups),
        cmocka_unit_test(stages_from_pipeline_groups),
        cmocka_unit_test(op_bandwidth_from_files),
        cmocka_unit_test(matrix_ranks_from_metadata),
        cmocka_unit_test(cluster_csv_rank_rows),
        cmocka_unit_test(step_csv_wins_and_no_preparing),
        cmocka_unit_test(computed_step_trace_first),
        cmocka_unit_test(rank_source_option),
        cmocka_unit_test(builtin_report_header),
        cmocka_unit_test(slow_rank_from_op_stats),
        cmocka_unit_test(slow_rank_from_comm_ops),
        cmocka_unit_test(matrix_from_files),
        cmocka_unit_test(matrix_from_tasks),
        cmocka_unit_test(empty_db),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
