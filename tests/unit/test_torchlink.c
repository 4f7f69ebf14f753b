/* SPDX-License-Identifier: MIT */
/*
 * test_torchlink.c - a timeline rank's PyTorch calls linked to their device
 * tasks through its async_npu flows (engine/metrics/torchlink.c), as the
 * computed tables that read the links see them: module_stats lists each
 * linked call with its tasks' kernels, free_time gives the reasons of a
 * linked rank.
 *
 * The same links kept in the DB (db/torchlinks.c, what `export db` does):
 * CONNECTION_IDS rows and PYTORCH_API.connectionId, read as stored by the
 * computed tables.
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
#include "db/torchlinks.h"
#include "tracebook/tracebook.h"

/* The thread (pid 100, tid 7) of the PyTorch calls: 100 << 32 | 7. */
#define GTID "429496729607"

/*
 * Strings: 1 async_npu, 2 Module (the mstx domain), 3 M (a module over all
 * calls of each rank), 4 HostToDevice, calls 10-18, kernels 21-29 (kN).
 *
 * Rank 0, a timeline's rows (no CONNECTION_IDS): calls on GTID
 *   A [10,100]  B [20,40]  C [55,75]  D [50,70]  E [200,210]  F [300,310]
 *   G [5,8]
 * (C is read before D, both 20 long); tasks of process 300, each a kernel kN
 * of gid N: T1 [1000,1100] conn 11, T2 [1050,1200] conn 12, T3 [1300,1400]
 * conn 13, T4 [1500,1600] no conn, T5 [1700,1800] conn 14.
 * async_npu flows (start on pid 100 tid 7 unless said, finish on pid 300):
 *   25 -> 1060: B (shortest of A, B) -> T2 (latest start of T1, T2): 12
 *   60 -> 1350: C (first read of C, D; A is longer) -> T3: 13
 *   205 -> 5000: E -> no task: no link
 *   305 -> 1010 and 306 -> 1750: F -> T1 and T5: 11 and 14
 *   6 -> 1550: G -> T4, which has no connection id: no link
 *   25 on tid 8 -> 1350: no call on that thread: no link
 * and a HostToDevice flow 95 -> 1350 (A -> T3), which links nothing.
 * So B, C and F are linked (ids 0, 1, 2 by start): module M holds the ops
 * B (k2, 150 ns), C (k3, 100 ns) and F (k1, k5: 200 ns), by start.
 *
 * Rank 1, a DB's rows: CONNECTION_IDS (5, 99); calls P [20,40] with
 * connectionId 5 and Q [50,60] without; tasks T9 [2000,2100] conn 99, T8
 * [2200,2300] conn 98; an async_npu flow 55 -> 2250 (Q -> T8), which the
 * rank's own links leave unused: module M holds P (k9, 100 ns) only.
 */
static const char rows[] =
    "INSERT INTO STRING_IDS VALUES (1, 'async_npu'), (2, 'Module'), (3, 'M'), (4, 'HostToDevice'),"
    "  (10, 'A'), (11, 'B'), (12, 'C'), (13, 'D'), (14, 'E'), (15, 'F'), (16, 'G'), (17, 'P'), (18, 'Q'),"
    "  (21, 'k1'), (22, 'k2'), (23, 'k3'), (24, 'k4'), (25, 'k5'), (28, 'k8'), (29, 'k9');"
    "INSERT INTO PYTORCH_API (startNs, endNs, globalTid, connectionId, name, rankId) VALUES"
    "  (10, 100, " GTID ", NULL, 10, 0), (20, 40, " GTID ", NULL, 11, 0), (55, 75, " GTID ", NULL, 12, 0),"
    "  (50, 70, " GTID ", NULL, 13, 0), (200, 210, " GTID ", NULL, 14, 0), (300, 310, " GTID ", NULL, 15, 0),"
    "  (5, 8, " GTID ", NULL, 16, 0),"
    "  (20, 40, " GTID ", 5, 17, 1), (50, 60, " GTID ", NULL, 18, 1);"
    "INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, globalPid, rankId) VALUES"
    "  (1000, 1100, 0, 11, 1, 300, 0), (1050, 1200, 0, 12, 2, 300, 0), (1300, 1400, 0, 13, 3, 300, 0),"
    "  (1500, 1600, 0, NULL, 4, 300, 0), (1700, 1800, 0, 14, 5, 300, 0),"
    "  (2200, 2300, 0, 98, 8, 300, 1), (2000, 2100, 0, 99, 9, 300, 1);"
    "INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, rankId) VALUES"
    "  (21, 1, 0), (22, 2, 0), (23, 3, 0), (24, 4, 0), (25, 5, 0), (28, 8, 1), (29, 9, 1);"
    "INSERT INTO CONNECTION_IDS VALUES (5, 99, 1);"
    "INSERT INTO TB_FLOW (rankId, cat, flowId, fromPid, fromTid, fromNs, toPid, toTid, toNs) VALUES"
    "  (0, 1, '1', 100, 7, 25, 300, 2, 1060), (0, 1, '2', 100, 7, 60, 300, 2, 1350),"
    "  (0, 1, '3', 100, 7, 205, 300, 2, 5000), (0, 1, '4', 100, 7, 305, 300, 2, 1010),"
    "  (0, 1, '5', 100, 7, 306, 300, 2, 1750), (0, 1, '6', 100, 7, 6, 300, 2, 1550),"
    "  (0, 1, '7', 100, 8, 25, 300, 2, 1350), (0, 4, '8', 100, 7, 95, 300, 2, 1350),"
    "  (1, 1, '9', 100, 7, 55, 300, 2, 2250);"
    "INSERT INTO MSTX_EVENTS (startNs, endNs, eventType, message, domainId, rankId) VALUES"
    "  (0, 100000, 2, 3, 2, 0), (0, 100000, 2, 3, 2, 1);";

#define MODSTAT_SQL \
    "SELECT rankId, parentModule, module, opName, kernelList, totalKernelDuration, opCount FROM module_stats " \
    "ORDER BY rankId, pos"
#define MODSTAT_HEAD "rankId|parentModule|module|opName|kernelList|totalKernelDuration|opCount\n"

static void module_stats_linked(void **state)
{
    (void)state;
    tu_make_db("linked", rows);
    tu_assert_rows(MODSTAT_SQL, MODSTAT_HEAD "0|''|'M'|'B'|'k2'|150|1\n"
                                             "0|''|'M'|'C'|'k3'|100|1\n"
                                             "0|''|'M'|'F'|'k1, k5'|200|1\n"
                                             "1|''|'M'|'P'|'k9'|100|1\n");
}

/* Without the async_npu flows, rank 0 links nothing: no op, no row. */
static void module_stats_no_flows(void **state)
{
    (void)state;
    char sql[sizeof rows + 64];
    snprintf(sql, sizeof sql, "%sDELETE FROM TB_FLOW WHERE cat = 1 AND rankId = 0;", rows);
    tu_make_db("no_flows", sql);
    tu_assert_rows(MODSTAT_SQL, MODSTAT_HEAD "1|''|'M'|'P'|'k9'|100|1\n");
}

/*
 * free_time of rank 0: busy T1-T2 [1000,1200], T3 [1300,1400], T4
 * [1500,1600], T5 [1700,1800]; free [1200,1300], [1400,1500], [1600,1700].
 * [1200,1300]: previous T2 (B, ends 40), next T3 (C, ends 75): PyTorch idle
 * 35, CANN idle 0 (no CANN calls: times 0), the next task's wait (0 - 75)
 * is not 50 us longer than the previous one's: Idle Pytorch layer.
 * [1400,1500] and [1600,1700]: T4 has no PyTorch call: no dispatch time.
 */
static void free_time_linked(void **state)
{
    (void)state;
    tu_make_db("free", rows);
    tu_assert_rows("SELECT startNs, endNs, pytorchIdleNs, reason FROM free_time WHERE rankId = 0 ORDER BY startNs",
                   "startNs|endNs|pytorchIdleNs|reason\n"
                   "1200|1300|35|'Idle Pytorch layer: no task dispatched in 0.035 us'\n"
                   "1400|1500|NULL|'Skip free analysis due to no pytorch dispatch time.'\n"
                   "1600|1700|NULL|'Skip free analysis due to no pytorch dispatch time.'\n");
}

/*
 * The links kept in the DB: rank 0's calls B, C, F get the ids 0, 1, 2 (by
 * start) as their connectionId, with the link rows (0, 12), (1, 13), (2,
 * 11), (2, 14); rank 1's own row (5, 99) and call P stay as they are. The
 * computed tables then read them as stored: with rank 0's async_npu flows
 * deleted, module_stats still holds B, C and F.
 */
static void links_stored(void **state)
{
    (void)state;
    tu_make_db("stored", rows);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(tu_dbpath, &db), SQLITE_OK);
    db_torch_links l;
    assert_int_equal(db_torch_links_make(db, &l), 0);
    assert_int_equal(l.ncalls, 3);
    assert_int_equal(l.nids, 4);
    assert_int_equal(db_torch_links_store(db, &l), 0);
    db_torch_links_free(&l);
    assert_int_equal(sqlite3_exec(db, "DELETE FROM TB_FLOW WHERE cat = 1 AND rankId = 0", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    tu_assert_rows("SELECT id, connectionId, rankId FROM CONNECTION_IDS ORDER BY rankId, id, connectionId",
                   "id|connectionId|rankId\n0|12|0\n1|13|0\n2|11|0\n2|14|0\n5|99|1\n");
    tu_assert_rows("SELECT rankId, startNs, connectionId FROM PYTORCH_API ORDER BY rankId, startNs",
                   "rankId|startNs|connectionId\n0|5|NULL\n0|10|NULL\n0|20|0\n0|50|NULL\n0|55|1\n0|200|NULL\n"
                   "0|300|2\n1|20|5\n1|50|NULL\n");
    tu_assert_rows(MODSTAT_SQL, MODSTAT_HEAD "0|''|'M'|'B'|'k2'|150|1\n"
                                             "0|''|'M'|'C'|'k3'|100|1\n"
                                             "0|''|'M'|'F'|'k1, k5'|200|1\n"
                                             "1|''|'M'|'P'|'k9'|100|1\n");
}

/* Ranks with no async_npu flow (none in the DB): no link, nothing stored. */
static void links_none(void **state)
{
    (void)state;
    tu_make_db("none", "INSERT INTO STRING_IDS VALUES (1, 'HostToDevice');");
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(tu_dbpath, &db), SQLITE_OK);
    db_torch_links l;
    assert_int_equal(db_torch_links_make(db, &l), 0);
    assert_int_equal(l.ncalls + l.nids, 0);
    db_torch_links_free(&l);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(module_stats_linked),
        cmocka_unit_test(module_stats_no_flows),
        cmocka_unit_test(free_time_linked),
        cmocka_unit_test(links_stored),
        cmocka_unit_test(links_none),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
