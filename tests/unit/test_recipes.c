/* SPDX-License-Identifier: MIT */
/*
 * test_recipes.c - the computed tables of msprof-analyze's recipes:
 * cluster_time_summary (engine/metrics/timesum.c: steps with shared
 * boundaries, ranks without steps, the wait and transmit stages, the
 * recipe's memory sweep, a step that is no number) and
 * communication_group_map (engine/metrics/commgroup.c: types, ranks, the
 * process groups of profiler_metadata.json).
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
#include "tracebook/tracebook.h"

/*
 * Rank 0: steps 1 [1000, 5000] and 2 [5000, 9000] ns. Its computing task
 * T1 [2200, 3800] (launched at 1500: step 1), memory copies M1 [1800, 2800]
 * and M2 [2000, 2400] (step 1 by their own starts), and the all-reduce O1
 * [5500, 6500] launched at 5000, the boundary: in both steps, as the
 * recipe's inclusive join puts it.
 * The sweep of step 1 (start order M1, M2, T1, then O1):
 *   M1 opens the block [1800, 2800] (memory); M2 starts at 2000: 200 ns of
 *   M1 counted, the block's start moves to M2's end 2400; T1 starts at 2200,
 *   before 2400: nothing; T1 reaches furthest: the block is T1's [2800, 3800];
 *   O1 starts a new block. Not overlapped: 0.2 us (the exact uncovered time,
 *   [1800, 2200], would be 0.4). Memory: 1.0 + 0.4 = 1.4 us.
 * Rank 1: step 1 [0, 4000]; its O1 [100, 2100] launched at 50: step 1.
 * Transmit/wait per (group, op, step): step 1 has rank 0 (1.0 us) and rank 1
 * (2.0 us): transmit 1.0 each, rank 1 waits 1.0; step 2 has rank 0 alone.
 * Rank 2: no steps, a step trace row with an empty step: step -1, its step
 * time computing + not overlapped + free = 4 + 1 + 2 = 7.
 * Step traces (µs): r0 s1 10 2 1 3 5; r0 s2 20 4 2 6 7; r1 s1 8 1 1 2 3;
 * r2 '' 4 1 0 1 2. Free less the sweep: r0 s1 5 - 0.2 = 4.8.
 */
static const char summary_rows[] =
    "INSERT INTO STRING_IDS VALUES (1, 'MEMCPY_ASYNC'), (2, 'KERNEL_AICORE'), (3, 'hcom_allReduce__9_0_1'),"
    "  (4, '123456789');"
    "INSERT INTO STEP_TIME (id, startNs, endNs, rankId) VALUES (1, 1000, 5000, 0), (2, 5000, 9000, 0),"
    "  (1, 0, 4000, 1);"
    "INSERT INTO CANN_API (startNs, endNs, connectionId, rankId) VALUES (1500, 1600, 11, 0), (5000, 5100, 12, 0),"
    "  (50, 60, 21, 1);"
    "INSERT INTO TASK (startNs, endNs, connectionId, globalTaskId, taskType, rankId) VALUES"
    "  (2200, 3800, 11, 1, 2, 0), (1800, 2800, 13, 2, 1, 0), (2000, 2400, 14, 3, 1, 0);"
    "INSERT INTO COMPUTE_TASK_INFO (globalTaskId, rankId) VALUES (1, 0);"
    "INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, groupName, rankId) VALUES"
    "  (3, 5500, 6500, 12, 4, 0), (3, 100, 2100, 21, 4, 1);"
    "INSERT INTO TB_STEP_TRACE_TIME (rankId, step, computing, communicationNotOverlapped, overlapped,"
    "  communication, free) VALUES (0, '1', 10, 2, 1, 3, 5), (0, '2', 20, 4, 2, 6, 7), (1, '1', 8, 1, 1, 2, 3),"
    "  (2, '', 4, 1, 0, 1, 2);";

static void time_summary(void **state)
{
    (void)state;
    tu_make_db("summary", summary_rows);
    tu_assert_rows("SELECT rankId, step, stepTime, computation, communicationNotOverlapComputation AS cno, "
                "communicationOverlapComputation AS ov, communication, round(free, 6) AS free, "
                "communicationWaitStageTime AS wait, communicationTransmitStageTime AS transmit, memory, "
                "memoryNotOverlapComputationCommunication AS memNo FROM cluster_time_summary",
                "rankId|step|stepTime|computation|cno|ov|communication|free|wait|transmit|memory|memNo\n"
                "0|1|4|10|2|1|3|4.8|0|1|1.4|0.2\n"
                "0|2|4|20|4|2|6|7|0|1|0|0\n"
                "1|1|4|8|1|1|2|3|1|1|0|0\n"
                "2|-1|7|4|1|0|1|2|0|0|0|0\n");
}

/* Only rank 0 has communication ops: no wait or transmit stage anywhere. No
 * communication op at all: no row, as the recipe. */
static void time_summary_one_rank_or_none(void **state)
{
    (void)state;
    char sql[4096];
    snprintf(sql, sizeof sql, "%s DELETE FROM COMMUNICATION_OP WHERE rankId = 1;", summary_rows);
    tu_make_db("summary_one", sql);
    tu_assert_rows("SELECT rankId, step, communicationWaitStageTime AS w, communicationTransmitStageTime AS t "
                "FROM cluster_time_summary",
                "rankId|step|w|t\n0|1|0|0\n0|2|0|0\n1|1|0|0\n2|-1|0|0\n");
    snprintf(sql, sizeof sql, "%s DELETE FROM COMMUNICATION_OP;", summary_rows);
    tu_make_db("summary_none", sql);
    tu_assert_rows("SELECT count(*) AS n FROM cluster_time_summary", "n\n0\n");
}

/* A step trace whose step is no number is refused, naming the rank and the step. */
static void time_summary_bad_step(void **state)
{
    (void)state;
    char sql[4096];
    snprintf(sql, sizeof sql, "%s UPDATE TB_STEP_TRACE_TIME SET step = 'step2' WHERE rankId = 0 AND step = '2';",
             summary_rows);
    tu_make_db("summary_bad", sql);
    capture c;
    tb_error err;
    assert_int_equal(tu_run_sql("SELECT * FROM cluster_time_summary", &c, &err), TB_ERR_PARSE);
    assert_non_null(strstr(err.message, "cluster_time_summary: rank 0: step 'step2'"));
}

/*
 * Groups: 'a' of collectives on ranks 0, 1 (COMMUNICATION_OP) and 2 (its
 * communication.json row, TB_COMM_OP_STAT); 'b' of sends and receives on
 * ranks 1 and 3; 'c' of an all-gather on rank 2, which rank 2's
 * profiler_metadata.json names: key 'k' (hash 107 << 32 | 107), pp, global
 * ranks 6,2,4 (sorted: they replace the ops' ranks). Row order: type, then
 * group name as text ("107..." < "a").
 */
static void group_map(void **state)
{
    (void)state;
    tu_make_db("groups",
            "INSERT INTO STRING_IDS VALUES (1, 'hcom_allReduce__1_0_1'), (2, 'hcom_send__2_0_1'),"
            "  (3, 'hcom_Receive__2_0_1'), (4, 'a'), (5, 'b'), (6, '459561500779'), (7, 'hcom_allGather__3_0_1');"
            "INSERT INTO COMMUNICATION_OP (opName, groupName, rankId) VALUES (1, 4, 1), (1, 4, 0), (2, 5, 1),"
            "  (3, 5, 3), (7, 6, 2);"
            "INSERT INTO TB_COMM_OP_STAT (rankId, opName, groupName, cluster) VALUES (2, 1, 4, 0), (5, 1, 4, 1);"
            "INSERT INTO TB_COMM_GROUP (kind, ranks, groupId, pgName, rankId) VALUES ('pp', '6,2,4', 'k', 'pp', 2),"
            "  ('collective', '0,1', 'x', NULL, NULL);");
    tu_assert_rows("SELECT * FROM communication_group_map",
                "type|rankSet|groupName|groupId|pgName\n"
                "'collective'|'(2,4,6)'|'459561500779'|'k'|'pp'\n"
                "'collective'|'(0,1,2)'|'a'|''|''\n"
                "'p2p'|'(1,3)'|'b'|''|''\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(time_summary),
        cmocka_unit_test(time_summary_one_rank_or_none),
        cmocka_unit_test(time_summary_bad_step),
        cmocka_unit_test(group_map),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
