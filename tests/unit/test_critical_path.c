/* SPDX-License-Identifier: MIT */
/*
 * test_critical_path.c - the critical_path computed table (engine/metrics/
 * critical_path.c): HTA's graph of one step, its longest path, the bound
 * of each edge, and the built-in summary, on hand-written rows whose
 * answer is worked out below.
 *
 * Rank 0, one step ProfilerStep#1 [0, 1000] µs (one step: HTA's window
 * keeps everything), host thread 1, device stream 7 (µs):
 *   A aten::add [10, 60]   with L1 cudaLaunchKernel [12, 16] -> K1 add_kernel [30, 130]
 *   B aten::mul [140, 160] with L2 cudaLaunchKernel [142, 146] -> K2 mul_kernel [150, 400]
 *   S cudaStreamSynchronize [170, 410], its Stream Sync on stream 7 [171, 409]
 *   C aten::sub [420, 430]
 * Rank 1: the same ops, but no step slice: no row (a note).
 *
 * Edges: the lock L1.s -> L1.e (4), L2.s -> L2.e (4), L1.e -> L2.e (dep);
 * the stack A.s -> L1.s (2), L1.e -> A.e (44), A.e -> B.s (dep), B.s ->
 * L2.s (2), L2.e -> B.e (14), B.e -> S.s (dep), S.s -> S.e (blocking: 0),
 * S.e -> C.s (dep), C.s -> C.e (10); the device: K1 (100) and L1.s -> K1.s
 * (launch delay 18: queue 1 after L1, 0 after K1's start, nothing before
 * on the stream), K2 (250) and L2.s -> K2.s (launch delay 8: K1 ended at
 * 130 before L2 at 142, queue 1 then 0), the Stream Sync: K2.e -> S.e.
 * Longest path: A.s 2 L1.s 4 L1.e 44 A.e 0 B.s 2 L2.s 8 K2.s 250 K2.e 0
 * S.e 0 C.s 10 C.e = 320 (through K1 only 120, a dead end). Bounds: cpu
 * 2 + 4 + 44 + 2 + 10 = 62, gpu_compute 250, launch 8: 19.38, 78.13, 2.5 %.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testutil.h"
#include "capture.h"
#include "tracebook/tracebook.h"

static char dbpath[PATH_MAX + 16];

#define RANK_ROWS(r, conn)                                                                                     \
    "INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, streamId, taskType, rankId, name) " \
    "VALUES (30000, 130000, 0, " #conn "1, " #r "1, 7, 1, " #r ", 5), (150000, 400000, 0, " #conn "2, " #r "2, 7, " \
    "1, " #r ", 8);"                                                                                           \
    "INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, rankId) VALUES (5, " #r "1, " #r "), (8, " #r "2, " #r ");" \
    "INSERT INTO CANN_API (startNs, endNs, type, globalTid, connectionId, name, rankId) VALUES"                \
    "  (12000, 16000, 60001, 1, " #conn "1, 4, " #r "), (142000, 146000, 60001, 1, " #conn "2, 4, " #r "),"    \
    "  (170000, 410000, 60001, 1, " #conn "3, 11, " #r ");"                                                    \
    "INSERT INTO PYTORCH_API (startNs, endNs, globalTid, name, type, rankId) VALUES"                          \
    "  (10000, 60000, 1, 3, 50001, " #r "), (140000, 160000, 1, 7, 50001, " #r "),"                           \
    "  (420000, 430000, 1, 12, 50001, " #r ");"                                                               \
    "INSERT INTO TB_EVENT VALUES (" #r ", 0, 7, 'X', 9, 10, 171000, 409000,"                                  \
    "  '{\"stream\": 7, \"correlation\": " #conn "3}', NULL, NULL);"

static const char rows_sql[] =
    "INSERT INTO STRING_IDS VALUES (1, 'kernel'), (2, 'ProfilerStep#1'), (3, 'aten::add'), (4, 'cudaLaunchKernel'),"
    "  (5, 'add_kernel'), (7, 'aten::mul'), (8, 'mul_kernel'), (9, 'cuda_sync'), (10, 'Stream Sync'),"
    "  (11, 'cudaStreamSynchronize'), (12, 'aten::sub');"
    "INSERT INTO PYTORCH_API (startNs, endNs, globalTid, name, type, rankId) VALUES (0, 1000000, 1, 2, 60003, 0);"
    RANK_ROWS(0, 1) RANK_ROWS(1, 2);

static int setup(void **state)
{
    (void)state;
    if (tu_make_tmpdir("test_critical_path") != 0)
        return -1;
    snprintf(dbpath, sizeof dbpath, "%s/cp.db", tmpdir);
    return tu_unified_db(dbpath, rows_sql);
}

static int teardown(void **state)
{
    (void)state;
    return tu_remove_tmpdir();
}

static void assert_spec(const char *metrics, const char *sql, const char *want)
{
    capture c;
    c.int_tag = 0;
    c.quote_text = 0;
    cap_reset(&c);
    cap_assert_spec(&c, dbpath, metrics, sql, want);
}

static void path_of_a_step(void **state)
{
    (void)state;
    assert_spec("", "SELECT rank, step, step_ts, seq, type, bound_by, dur, ts, end_ts, event, side "
                "FROM critical_path ORDER BY rank, seq",
                "rank|step|step_ts|seq|type|bound_by|dur|ts|end_ts|event|side\n"
                "0|ProfilerStep#1|0|0|critical_path_operator|cpu_bound|2|10|12|aten::add|host\n"
                "0|ProfilerStep#1|0|1|critical_path_operator|cpu_bound|4|12|16|cudaLaunchKernel|host\n"
                "0|ProfilerStep#1|0|2|critical_path_operator|cpu_bound|44|16|60|aten::add|host\n"
                "0|ProfilerStep#1|0|3|critical_path_dependency|NULL|0|60|140|NULL|NULL\n"
                "0|ProfilerStep#1|0|4|critical_path_operator|cpu_bound|2|140|142|aten::mul|host\n"
                "0|ProfilerStep#1|0|5|critical_path_kernel_launch_delay|gpu_kernel_launch_overhead|8|142|150|NULL|"
                "NULL\n"
                "0|ProfilerStep#1|0|6|critical_path_operator|gpu_compute_bound|250|150|400|mul_kernel|device\n"
                "0|ProfilerStep#1|0|7|critical_path_sync_dependency|NULL|0|400|410|NULL|NULL\n"
                "0|ProfilerStep#1|0|8|critical_path_dependency|NULL|0|410|420|NULL|NULL\n"
                "0|ProfilerStep#1|0|9|critical_path_operator|cpu_bound|10|420|430|aten::sub|host\n");
}

static void summary_report(void **state)
{
    (void)state;
    capture c;
    c.int_tag = 0;
    c.quote_text = 0;
    cap_reset(&c);
    tb_error err;
    tb_status st = cap_run_spec(&c, dbpath, "tracebook: 1\nreports:\n  - use: critical_path_summary\n", &err);
    if (st != TB_OK)
        print_error("run failed: %s\n", err.message);
    assert_int_equal(st, TB_OK);
    const char *want = "rank|step|path_edges|path_length|bound_by|duration|share_pct\n"
                       "0|ProfilerStep#1|10|320|cpu_bound|62|19.38\n"
                       "0|ProfilerStep#1|10|320|gpu_compute_bound|250|78.13\n"
                       "0|ProfilerStep#1|10|320|gpu_kernel_launch_overhead|8|2.5\n";
    if (strcmp(c.text, want) != 0)
        print_error("got:\n%s\nwant:\n%s\n", c.text, want);
    assert_string_equal(c.text, want);
}

/* exact ns: the same path, its times in µs with their fractions */
static void exact_ns(void **state)
{
    (void)state;
    assert_spec("{hta: {round_us: false}}", "SELECT sum(dur), count(*) FROM critical_path",
                "sum(dur)|count(*)\n320|10\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(path_of_a_step),
        cmocka_unit_test(summary_report),
        cmocka_unit_test(exact_ns),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
