/* SPDX-License-Identifier: MIT */
/*
 * test_breakdown.c - the breakdown computed tables (engine/metrics/
 * breakdown.c): HTA's temporal_breakdown, comm_comp_overlap and
 * idle_time_breakdown under each window option, TraceLens' exposed_time,
 * HTA's counters (hta_counters.c: queue length, trace span, kernel
 * launches, memory bandwidth, user annotations, ATen op kernels),
 * option errors, and the built-in reports' headers.
 *
 * The DB is made from the engine's own schema with Kineto-like rows
 * (taskType = the Kineto category); every answer is worked out by hand
 * below. HTA's domain is whole µs: ts rounded up, ts + dur rounded down.
 *
 * Rank 0. ProfilerStep#1 [800, 1000] and #2 [1044, 1100] µs (PYTORCH_API),
 * and a GPU copy of #2 [1046, 1099] (TB_EVENT, ph X): HTA's last step start
 * is the latest of both, 1046. Tasks (ns; HTA µs; launch call µs):
 *   T1 gemm    stream 7  [1000300, 1010000) -> [1001, 1010)  launch 900
 *   T2 nccl    stream 20 [1005000, 1020000) -> [1005, 1020)  launch 950
 *   T3 gemm    stream 7  [1012000, 1015500) -> [1012, 1015)  launch 1011
 *   T4 memcpy  stream 7  [1025000, 1030000) -> [1025, 1030)  launch 960
 *   T5 memset  stream 7  [1050000, 1052000) -> [1050, 1052)  launch 1045
 *   T6 gemm    stream 7  [1060400, 1060900) -> [1061, 1060)  launch 1047
 *   T7 gemm    stream 7  [1070000, 1071000) -> [1070, 1071)  no launch call
 * HTA kinds: gemm compute, nccl communication, Memcpy/Memset memory.
 * Default window (launch < 1046, linked only): T1-T5 (T5 only because the
 * GPU copy of step 2 moves the cut past 1045).
 *   groups [1001,1020) [1025,1030) [1050,1052) = 26; kernel 1052 - 1001 =
 *   51; idle 25; compute 9 + 3 = 12; non-compute 51 - 12 - 25 = 14;
 *   49.02 / 23.53 / 27.45 %.
 *   overlap: comm [1005,1020) = 15, with compute [1005,1010) [1012,1015) =
 *   8: 53.33 %.
 *   idle, stream 7: T3 gap 2, launched at 1011 > 1010: host_wait; T4 gap
 *   10 < 30: kernel_wait; T5 gap 20, launched at 1045 > 1030: host_wait.
 *   host 22 (0.69), kernel 10 (0.31), other 0 (T1, first). Stream 20:
 *   other 0, ratio NULL (no idle time at all).
 * drop_last_step false (launch <= 1100): T6 joins, negative after rounding:
 *   its own group [1061,1060): groups 26 - 1 = 25, kernel 1060 - 1001 = 59,
 *   idle 34, compute 11, non-compute 14; 57.63 / 18.64 / 23.73 %. Idle:
 *   T6 gap 1061 - 1052 = 9: kernel_wait; host 22 (0.54), kernel 19 (0.46).
 * linked_only false: T6 still out (its launch call is cut), T7 in: groups
 *   27, kernel 70, idle 43, compute 13, non-compute 14; 61.43/18.57/20 %.
 * round_us false (exact ns, µs = ns / 1000): T1-T5; union 26700, kernel
 *   51700, idle 25000, compute 13200, non-compute 13500; 48.36/25.53/26.11.
 *
 * Rank 1 has no step slices: not filtered. U1 gemm [0, 10) µs launched
 * (conn 100), U2 gemm [20, 30) unlinked. kernel 30, idle 10, compute 20,
 * non-compute 0; 33.33 / 66.67 / 0. Idle: U2 gap 10 < 30, not linked:
 * kernel_wait 10 (ratio 1).
 *
 * Rank 2 (no steps, unlinked: its one host call launched nothing), equal
 * starts after rounding:
 *   A [10200,10900) -> [11,10), B [10300,10800) -> [11,10), C [11000,
 *   15000) -> [11,15): one group [11,15) (the longest of a start first);
 *   D [20200,20900) -> [21,20), E [20400,20600) -> [21,20): no group to
 *   join, each a group of -1. Sum 4 - 2 = 2, kernel 20 - 11 = 9, idle 7,
 *   compute 2, non-compute 0; 77.78 / 22.22 / 0. Idle (start order A B C
 *   D E): gaps 1, 1, 6, 1: kernel_wait 9.
 *
 * exposed_time (exact ns, linked only, no step window): rank 0 T1-T6 (T5
 * memset is computation for TraceLens): total 1060900 - 1000300 = 60600;
 * comp [1000300,1010000) [1012000,1015500) [1050000,1052000)
 * [1060400,1060900) = 15700; exposed comm [1010000,1012000)
 * [1015500,1020000) = 6500; exposed memcpy 5000; busy 19700 + 5000 + 2000
 * + 500 = 27200; idle 33400. Rank 1: U1 only, 10000 all computation.
 * Rank 2: nothing linked, no row. Unlinked too: rank 0 + T7: total 70700,
 * comp 16700, busy 28200, idle 42500; rank 1 total 30000, comp 20000, idle
 * 10000; rank 2 total 10700, union 700 + 4000 + 700 = 5400, idle 5300.
 *
 * HTA's counters (hta_counters.c), default window. Rank 0, every launch a
 * cudaLaunchKernel. Stream 7 (T1, T3, T4, T5), changes at 900 +1, 960 +1,
 * 1001 -1, 1011 +1, 1012 -1, 1025 -1, 1045 +1, 1050 -1: queue 1 2 1 2 1 0
 * 1 0, durations 60 41 10 1 13 20 5 and NULL. Summary: 8 values, mean 1,
 * std sqrt((12 - 8) / 7) = 0.7559..., quartiles at positions 1.75, 3.5,
 * 5.25 of 0 0 1 1 1 1 2 2: 0.75, 1, 1.25. Stream 20 (T2): 950 +1, 1005 -1:
 * 1 0, mean 0.5, std sqrt(0.5) = 0.7071..., 0.25, 0.5, 0.75. Rank 1: U1
 * launched and started at 0 µs (a launch first at equal times: 1 then 0);
 * U2 unlinked, not counted. Rank 2: nothing launched: no row.
 * hta_trace_span: rank 0, starts kept before the cut 1046: host 800 (step
 * #1) to 1045, GPU to 1050 (the GPU copy of step #2 at 1046 and the call
 * at 1047 are cut): 800 to 1050, 250. Rank 1 (not cut): 0 to 20. Rank 2:
 * 0 (its host call) to 21 (D and E).
 * kernel_launch_stats (cpu = floor(call end) - ceil(call start), delay =
 * task start - call end, 0 when negative): T1 1, 9, 100; T2 1, 15, 54; T3
 * [1011, 1011.5] -> 0, 3, 1; T4 1, 5, 64; T5 0, 2, 5; rank 1 U1 1, 10, 0
 * (it starts before its call ends).
 * memory_bw: T4 (Memcpy HtoD, 64 bytes in 5000 ns: 0.0128 GB/s) from 1025
 * to 1030, T5 (Memset, 64 bytes in 2000 ns: 0.032) from 1050 to 1052; the
 * summary has one positive point of each kind (std NULL).
 * user_annotation: the host's ProfilerStep#1 (800, 200 µs) and #2 (1044,
 * 56) start before the cut 1046; the GPU copy of #2 (1046) does not. * aten_op_kernels: aten::linear [850, 1000] and aten::mm [899.5, 901.5] ->
 * [900, 901]. T1's call [900, 901] is wrapped by both: the deepest (latest
 * start) is aten::mm: delays 900 - 900 = 0 and 1001 - 900 = 101. T2's
 * [950, 951] and T4's [960, 961] calls only by aten::linear: its kernels
 * nccl, then the memcpy, delays 950 - 850 = 100 and 1005 - 950 = 55. T3's
 * and T5's calls (1011, 1045) have no ATen op around them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "testutil.h"
#include "capture.h"
#include "tracebook/tracebook.h"


static char dbpath[PATH_MAX + 16];

static const char rows_sql[] =
    "INSERT INTO STRING_IDS VALUES (1, 'kernel'), (2, 'gpu_memcpy'), (3, 'gpu_memset'), (4, 'gemm_kernel'),"
    "  (5, 'ncclDevKernel_AllReduce_Sum_f32'), (6, 'Memcpy HtoD (Pageable -> Device)'), (7, 'Memset (Device)'),"
    "  (8, 'ProfilerStep#1'), (9, 'ProfilerStep#2'), (10, 'cudaLaunchKernel'), (11, 'gpu_user_annotation'),"
    "  (12, 'aten::linear'), (13, 'aten::mm');"
    "INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, streamId, taskType, rankId, name) VALUES"
    "  (1000300, 1010000, 0, 1, 1, 7, 1, 0, 4),"   /* T1 */
    "  (1005000, 1020000, 0, 2, 2, 20, 1, 0, 5),"  /* T2 */
    "  (1012000, 1015500, 0, 3, 3, 7, 1, 0, 4),"   /* T3 */
    "  (1025000, 1030000, 0, 4, 4, 7, 2, 0, 6),"   /* T4 */
    "  (1050000, 1052000, 0, 5, 5, 7, 3, 0, 7),"   /* T5 */
    "  (1060400, 1060900, 0, 6, 6, 7, 1, 0, 4),"   /* T6 */
    "  (1070000, 1071000, 0, NULL, 7, 7, 1, 0, 4),"/* T7 */
    "  (0, 10000, 0, 100, 10, 1, 1, 1, 4),"        /* U1 */
    "  (20000, 30000, 0, NULL, 11, 1, 1, 1, 4),"   /* U2 */
    "  (10200, 10900, 0, NULL, 20, 1, 1, 2, 4), (10300, 10800, 0, NULL, 21, 1, 1, 2, 4),"
    "  (11000, 15000, 0, NULL, 22, 1, 1, 2, 4), (20200, 20900, 0, NULL, 23, 1, 1, 2, 4),"
    "  (20400, 20600, 0, NULL, 24, 1, 1, 2, 4);"
    "INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, rankId) VALUES (4, 1, 0), (4, 3, 0), (4, 6, 0), (4, 7, 0),"
    "  (4, 10, 1), (4, 11, 1), (4, 20, 2), (4, 21, 2), (4, 22, 2), (4, 23, 2), (4, 24, 2);"
    "INSERT INTO COMMUNICATION_TASK_INFO (name, globalTaskId, opId, rankId) VALUES (5, 2, 1, 0);"
    "INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, opId, deviceId, rankId) VALUES"
    "  (5, 1005000, 1020000, 2, 1, 0, 0);"
    "INSERT INTO MEMCPY_INFO VALUES (4, 64, 1, 0), (5, 64, 65535, 0);"
    "INSERT INTO CANN_API (startNs, endNs, type, globalTid, connectionId, name, rankId) VALUES"
    "  (900000, 901000, 60001, 1, 1, 10, 0), (950000, 951000, 60001, 1, 2, 10, 0),"
    "  (1011000, 1011500, 60001, 1, 3, 10, 0), (960000, 961000, 60001, 1, 4, 10, 0),"
    "  (1045000, 1045500, 60001, 1, 5, 10, 0), (1047000, 1047500, 60001, 1, 6, 10, 0),"
    "  (0, 1000, 60001, 1, 100, 10, 1), (0, 1000, 60001, 1, 999, 10, 2);"
    "INSERT INTO PYTORCH_API (startNs, endNs, globalTid, name, type, rankId) VALUES"
    "  (800000, 1000000, 1, 8, 60003, 0), (1044000, 1100000, 1, 9, 60003, 0),"
    "  (850000, 1000000, 1, 12, 50001, 0), (899500, 901500, 1, 13, 50001, 0);"
    "INSERT INTO STEP_TIME VALUES (1, 800000, 1000000, 0), (2, 1044000, 1100000, 0);"
    "INSERT INTO TB_EVENT VALUES (0, 1, 7, 'X', 11, 9, 1046000, 1099000, NULL, NULL, NULL);";

static int setup(void **state)
{
    (void)state;
    if (tu_make_tmpdir("test_breakdown") != 0)
        return -1;
    snprintf(dbpath, sizeof dbpath, "%s/bd.db", tmpdir);
    return tu_unified_db(dbpath, rows_sql);
}

static int teardown(void **state)
{
    (void)state;
    return tu_remove_tmpdir();
}

/* The captured style of this file's expected strings (capture.h). */
static void cap_init(capture *c)
{
    c->int_tag = 0;
    c->quote_text = 0;
    cap_reset(c);
}

/* Runs a spec (YAML text) into c in this file's style (capture.h). */
static tb_status run_spec(capture *c, const char *yaml, tb_error *err)
{
    cap_init(c);
    return cap_run_spec(c, dbpath, yaml, err);
}

/* A spec with a metrics section (may be "") and one report gives want. */
static void assert_spec(const char *metrics, const char *sql, const char *want)
{
    capture c;
    cap_init(&c);
    cap_assert_spec(&c, dbpath, metrics, sql, want);
}

#define TEMPORAL "SELECT * FROM temporal_breakdown ORDER BY rank"
#define TEMPORAL_HEADER                                                                                       \
    "rank|idle_time_us|compute_time_us|non_compute_time_us|kernel_time_us|idle_time_pctg|compute_time_pctg|" \
    "non_compute_time_pctg\n"
#define IDLE                                                                                                  \
    "SELECT * FROM idle_time_breakdown ORDER BY rank, stream, "                                              \
    "CASE idle_category WHEN 'host_wait' THEN 0 WHEN 'kernel_wait' THEN 1 ELSE 2 END"
#define IDLE_HEADER "rank|stream|idle_category|idle_time|idle_time_ratio\n"
#define EXPOSED "SELECT * FROM exposed_time ORDER BY rank"
#define EXPOSED_HEADER                                                                                        \
    "rank|total_ns|computation_ns|exposed_comm_ns|exposed_memcpy_ns|idle_ns|busy_ns|total_comm_ns|"          \
    "total_memcpy_ns\n"

static void temporal_default(void **state)
{
    (void)state;
    assert_spec("", TEMPORAL,
                TEMPORAL_HEADER
                "0|25|12|14|51|49.02|23.53|27.45\n"
                "1|10|20|0|30|33.33|66.67|0\n"
                "2|7|2|0|9|77.78|22.22|0\n");
}

static void temporal_options(void **state)
{
    (void)state;
    /* the last step kept: T6 comes in, negative after rounding */
    assert_spec("{hta: {drop_last_step: false}}", TEMPORAL,
                TEMPORAL_HEADER
                "0|34|11|14|59|57.63|18.64|23.73\n"
                "1|10|20|0|30|33.33|66.67|0\n"
                "2|7|2|0|9|77.78|22.22|0\n");
    /* unlinked T7 in, T6 still cut with its launch call */
    assert_spec("{hta: {linked_only: false}}", "SELECT * FROM temporal_breakdown WHERE rank = 0",
                TEMPORAL_HEADER "0|43|13|14|70|61.43|18.57|20\n");
    /* exact ns; µs columns are ns / 1000 */
    assert_spec("{hta: {round_us: false}}", TEMPORAL,
                TEMPORAL_HEADER
                "0|25|13.2|13.5|51.7|48.36|25.53|26.11\n"
                "1|10|20|0|30|33.33|66.67|0\n"
                "2|5.3|5.4|0|10.7|49.53|50.47|0\n");
}

static void overlap_default(void **state)
{
    (void)state;
    assert_spec("", "SELECT * FROM comm_comp_overlap ORDER BY rank",
                "rank|comp_comm_overlap_pctg\n0|53.33\n1|NULL\n2|NULL\n");
    /* exact ns: comm 15000, with compute [1005000,1010000) [1012000,1015500) = 8500 */
    assert_spec("{hta: {round_us: false}}", "SELECT * FROM comm_comp_overlap WHERE rank = 0",
                "rank|comp_comm_overlap_pctg\n0|56.67\n");
}

static void idle_default(void **state)
{
    (void)state;
    assert_spec("", IDLE,
                IDLE_HEADER
                "0|7|host_wait|22|0.69\n"
                "0|7|kernel_wait|10|0.31\n"
                "0|7|other|0|0\n"
                "0|20|other|0|NULL\n"
                "1|1|kernel_wait|10|1\n"
                "1|1|other|0|0\n"
                "2|1|kernel_wait|9|1\n"
                "2|1|other|0|0\n");
}

static void idle_options(void **state)
{
    (void)state;
    /* a 5 µs threshold: T4's gap of 10 is other */
    assert_spec("{hta: {kernel_wait_us: 5}}", IDLE " LIMIT 3",
                IDLE_HEADER
                "0|7|host_wait|22|0.69\n"
                "0|7|other|10|0.31\n"
                "0|20|other|0|NULL\n");
    assert_spec("{hta: {drop_last_step: false}}", IDLE " LIMIT 3",
                IDLE_HEADER
                "0|7|host_wait|22|0.54\n"
                "0|7|kernel_wait|19|0.46\n"
                "0|7|other|0|0\n");
}

static void queue_length_series(void **state)
{
    (void)state;
    assert_spec("", "SELECT * FROM queue_length ORDER BY rank, stream, rowid",
                "rank|stream|ts|queue_length|dur\n"
                "0|7|900|1|60\n0|7|960|2|41\n0|7|1001|1|10\n0|7|1011|2|1\n"
                "0|7|1012|1|13\n0|7|1025|0|20\n0|7|1045|1|5\n0|7|1050|0|NULL\n"
                "0|20|950|1|55\n0|20|1005|0|NULL\n"
                "1|1|0|1|0\n1|1|0|0|NULL\n");
    assert_spec("", "SELECT * FROM queue_length_summary ORDER BY rank, stream",
                "rank|stream|count|mean|std|min|p25|p50|p75|max\n"
                "0|7|8|1|0.755928946018454|0|0.75|1|1.25|2\n"
                "0|20|2|0.5|0.707106781186548|0|0.25|0.5|0.75|1\n"
                "1|1|2|0.5|0.707106781186548|0|0.25|0.5|0.75|1\n");
    assert_spec("", "SELECT * FROM hta_trace_span ORDER BY rank",
                "rank|first_ts|last_ts|duration\n0|800|1050|250\n1|0|20|20\n2|0|21|21\n");
    assert_spec("", "SELECT rank, correlation, launch, memory, cpu_duration, gpu_duration, launch_delay "
                "FROM kernel_launch_stats ORDER BY rank, correlation",
                "rank|correlation|launch|memory|cpu_duration|gpu_duration|launch_delay\n"
                "0|1|cudaLaunchKernel|0|1|9|100\n0|2|cudaLaunchKernel|0|1|15|54\n"
                "0|3|cudaLaunchKernel|0|0|3|1\n0|4|cudaLaunchKernel|0|1|5|64\n"
                "0|5|cudaLaunchKernel|0|0|2|5\n1|100|cudaLaunchKernel|0|1|10|0\n");
    assert_spec("", "SELECT * FROM memory_bw ORDER BY rank, name, rowid",
                "rank|name|ts|memory_bw_gbps\n0|Memcpy HtoD|1025|0.0128\n0|Memcpy HtoD|1030|0\n"
                "0|Memset|1050|0.032\n0|Memset|1052|0\n");
    assert_spec("", "SELECT * FROM memory_bw_summary ORDER BY rank, name",
                "rank|name|count|mean|std|min|p25|p50|p75|max\n"
                "0|Memcpy HtoD|1|0.0128|NULL|0.0128|0.0128|0.0128|0.0128|0.0128\n"
                "0|Memset|1|0.032|NULL|0.032|0.032|0.032|0.032|0.032\n");
    assert_spec("", "SELECT * FROM user_annotation ORDER BY rank, ts",
                "rank|source|name|ts|dur\n0|cpu|ProfilerStep#1|800|200\n0|cpu|ProfilerStep#2|1044|56\n");
    /* the last step kept: the GPU copy comes in */
    assert_spec("{hta: {drop_last_step: false}}", "SELECT * FROM user_annotation WHERE source = 'gpu'",
                "rank|source|name|ts|dur\n0|gpu|ProfilerStep#2|1046|53\n");
    assert_spec("", "SELECT * FROM aten_op_kernels ORDER BY rank, aten_op_start",
                "rank|thread|aten_op|aten_op_start|kernel_sequence|correlation_ids|first_launch_delay|"
                "first_runtime_delay|kernels\n"
                "0|1|aten::linear|850|ncclDevKernel_AllReduce_Sum_f32 -> Memcpy HtoD (Pageable -> Device)|2, 4|"
                "100|55|2\n"
                "0|1|aten::mm|900|gemm_kernel|1|0|101|1\n");
    /* exact ns: T1's launch at 900 µs, its start at 1000.3 */
    assert_spec("{hta: {round_us: false}}", "SELECT ts, queue_length FROM queue_length WHERE rank = 0 LIMIT 3",
                "ts|queue_length\n900|1\n960|2\n1000.3|1\n");
}

static void exposed_default(void **state)
{
    (void)state;
    assert_spec("", EXPOSED,
                EXPOSED_HEADER
                "0|60600|15700|6500|5000|33400|27200|15000|5000\n"
                "1|10000|10000|0|0|0|10000|0|0\n");
    assert_spec("{exposed: {linked_only: false}}", EXPOSED,
                EXPOSED_HEADER
                "0|70700|16700|6500|5000|42500|28200|15000|5000\n"
                "1|30000|20000|0|0|10000|20000|0|0\n"
                "2|10700|5400|0|0|5300|5400|0|0\n");
}

/*
 * Class rules replacing the built-in ones. hta.classes.communication
 * "gemm*": T1 and T3 are communication, T2 (nccl) falls to HTA's
 * non-compute list: rank 0 has no compute, so non-compute is 51 - 0 - 25 =
 * 26 (49.02 / 0 / 50.98 %); hta.classes.memory "re:^gemm" gives the same.
 * exposed.classes.communication "*gemm*": T1, T3, T6 communication, T2 and
 * the memset T5 computation: comp [1005000,1020000) + [1050000,1052000) =
 * 17000; exposed comm [1000300,1005000) + T6 500 = 5200 (T3 lies inside
 * T2); memcpy 5000; busy 27200, idle 33400 (17000 + 5200 + 5000 + 33400 =
 * 60600); total comm 9700 + 3500 + 500 = 13700.
 */
static void class_overrides(void **state)
{
    (void)state;
    assert_spec("{hta: {classes: {communication: 'gemm*'}}}", "SELECT * FROM temporal_breakdown WHERE rank = 0",
                TEMPORAL_HEADER "0|25|0|26|51|49.02|0|50.98\n");
    assert_spec("{hta: {classes: {memory: 're:^gemm'}}}", "SELECT * FROM temporal_breakdown WHERE rank = 0",
                TEMPORAL_HEADER "0|25|0|26|51|49.02|0|50.98\n");
    assert_spec("{exposed: {classes: {communication: ['*gemm*']}}}", "SELECT * FROM exposed_time WHERE rank = 0",
                EXPOSED_HEADER "0|60600|17000|5200|5000|33400|27200|13700|5000\n");
}

/*
 * An NPU-style rank: its HCCL op is a COMMUNICATION_OP row with no task
 * (unlike a GPU's NCCL kernel, which is both). exposed_time counts it as
 * communication: compute [0,100), comm op [50,200), both launched. A
 * GPU-style NCCL kernel that is both a task and an op, [300,400), counts
 * once, by its task: total 400, computation 100, exposed comm [100,200) +
 * [300,400) = 200, idle 400 - 300 = 100, busy 300, total comm 150 + 100 =
 * 250.
 */
static void exposed_npu_comm_ops(void **state)
{
    (void)state;
    char saved[sizeof dbpath];
    memcpy(saved, dbpath, sizeof dbpath);
    snprintf(dbpath, sizeof dbpath, "%s/npu.db", tmpdir);
    assert_int_equal(tu_unified_db(dbpath,
        "INSERT INTO STRING_IDS VALUES (1, 'kernel'), (2, 'gemm_kernel'), (3, 'hcom_allReduce__1'),"
        "  (4, 'ncclDevKernel_AllReduce');"
        "INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, globalPid, taskType, streamId, "
        "  rankId, name) VALUES (0, 100, 0, 301, 1, 1, 1, 7, 0, 2), (300, 400, 0, 302, 2, 1, 1, 8, 0, 4);"
        "INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, rankId) VALUES (2, 1, 0);"
        "INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, opId, deviceId, rankId) VALUES"
        "  (3, 50, 200, 300, 1, 0, 0), (4, 300, 400, 302, 2, 0, 0);"
        "INSERT INTO CANN_API (startNs, endNs, type, globalTid, connectionId, name, rankId) VALUES"
        "  (-10, -5, 5000, 1, 300, 3, 0), (-20, -15, 5000, 1, 301, 2, 0), (-30, -25, 5000, 1, 302, 4, 0);"), 0);
    assert_spec("", EXPOSED, EXPOSED_HEADER "0|400|100|200|0|100|300|250|0\n");
    memcpy(dbpath, saved, sizeof dbpath);
}

/* Collects the run's notes, one a line. */
typedef struct notes {
    char text[4096];
    size_t n;
} notes;

static void on_note(void *ctx, const char *msg)
{
    notes *nt = ctx;
    int k = snprintf(nt->text + nt->n, sizeof nt->text - nt->n, "%s\n", msg);
    if (k > 0 && (size_t)k < sizeof nt->text - nt->n)
        nt->n += (size_t)k;
}

/* Runs one report over db into c, the notes into nt. */
static void run_noted(capture *c, notes *nt, const char *db, const char *sql)
{
    char yaml[512];
    snprintf(yaml, sizeof yaml, "tracebook: 1\nreports:\n  - id: r\n    sql: \"%s\"\n", sql);
    tb_spec *spec = NULL;
    tb_error err;
    cap_init(c);
    memset(nt, 0, sizeof *nt);
    assert_int_equal(tb_spec_load_mem("t.yaml", yaml, strlen(yaml), &spec, NULL, NULL, &err), TB_OK);
    const tb_spec *specs[] = {spec};
    tb_run_options o = {.db = cap_db(db), .db_name = db, .unit = TB_UNIT_NS, .specs = specs, .n_specs = 1, .formats = TB_OUT_CSV,
                        .open_sink = cap_open, .sink_ctx = c, .note = on_note, .ctx = nt};
    tb_run_result res;
    tb_status st = tb_report_run(&o, &res, &err);
    if (st != TB_OK)
        print_error("run failed: %s\n", err.message);
    assert_int_equal(st, TB_OK);
    tb_spec_free(spec);
}

/* The rows of mixed_ranks' DB (its comment below says what they are). */
static const char MIXED_RANKS[] =
        "INSERT INTO STRING_IDS VALUES (1, 'kernel'), (2, 'gemm_kernel'), (3, 'aclnnAdd'), (4, 'ProfilerStep#1'),"
        "  (5, 'ProfilerStep#2'), (6, 'HostToDevice'), (7, 'Other'), (8, 'gcu_kernel'), (9, 'AscendCL@aclnnAdd'),"
        "  (10, 'hcom_allReduce__1_0_1'), (11, 'Notify_Wait'), (12, 'NOTIFY_WAIT');"
        "INSERT INTO TB_RANK VALUES (0, NULL, 'k.json'), (1, NULL, 'a.json'), (2, NULL, 't.txt'),"
        "  (3, NULL, 's.txt'), (4, NULL, 'x.json');"
        "INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, globalPid, streamId, taskType,"
        "  rankId, name) VALUES (50000, 60000, 0, 1, 1, 1, 7, 1, 0, 2),"
        "  (100000, 110000, 0, 10, 2, 800, 3, 7, 1, 3), (120000, 125000, 0, 12, 3, 800, 3, 7, 1, 3),"
        "  (126000, 127000, 0, NULL, 6, 800, 3, 12, 1, 11),"
        "  (0, 5000, 0, NULL, 4, 9, 1, 7, 2, 8), (0, 1000, 0, 40, 5, 1, 1, 7, 4, 3);"
        "INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, opId, deviceId, rankId) VALUES"
        "  (10, 105000, 115000, 11, 1, 0, 1);"
        "INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, rankId) VALUES (2, 1, 0), (3, 2, 1), (3, 3, 1),"
        "  (8, 4, 2), (3, 5, 4);"
        "INSERT INTO CANN_API (startNs, endNs, type, globalTid, connectionId, name, rankId) VALUES"
        "  (10000, 11000, 60001, 1, 1, 9, 0),"
        "  (80000, 130000, 5000, 21474836486, 11, 9, 1), (90000, 95000, 5000, 21474836486, 13, 9, 1),"
        "  (115000, 118000, 5000, 21474836486, 15, 9, 1), (0, 500, 5000, 1, 41, 9, 4);"
        "INSERT INTO TB_FLOW (rankId, cat, flowId, fromPid, fromTid, fromNs, toPid, toTid, toNs, connectionId)"
        "  VALUES (1, 6, '42949672959', 5, 6, 98000, 800, 3, 100000, 10),"
        "         (1, 6, '51539607551', 5, 6, 116000, 800, 3, 120000, 12);"
        "INSERT INTO PYTORCH_API (startNs, endNs, globalTid, name, type, rankId) VALUES"
        "  (0, 100000, 1, 4, 60003, 0), (200000, 300000, 1, 5, 60003, 0), (0, 1000000, 2, 4, 60003, 1);"
        "INSERT INTO STEP_TIME VALUES (1, 0, 100000, 0), (2, 200000, 300000, 0), (1, 0, 1000000, 1);";

/*
 * Ranks of several vendors in one DB; each gets the rows it gets alone, or a
 * note saying why it gets none (times in µs below, the DB holds ns).
 *   rank 0 (Kineto-like): ProfilerStep#1 [0, 100], #2 [200, 300]; kernel
 *     K [50, 60) launched at 10 (a call with the kernel's connection id).
 *   rank 1 (an older torch_npu timeline): one ProfilerStep#1 [0, 1000];
 *     tasks A [100, 110) and B [120, 125) on stream 3, connection ids 10 and
 *     12, which no call has: calls C1 [80, 130) (id 11), C2 [90, 95) and C3
 *     [115, 118) nested in C1, on thread (5, 6). HostToDevice flows from
 *     (5, 6) at 98 to A and at 116 to B: A was launched by C1 (C2, the
 *     latest call to start before 98, had ended), B by C3. With one step of
 *     its own rank 1 is not cut by HTA's last-step rule, though rank 0 has
 *     two steps. Besides: an HCCL op [105, 115) launched by C1 (its id
 *     11), which is no task, and a Notify_Wait task N [126, 127) on stream
 *     3 without a compute record: not compute, whatever HTA's name test
 *     says. temporal: union [100, 115) [120, 125) [126, 127) = 21, kernel
 *     27, idle 6, compute 15, non-compute 6 (22.22 / 55.56 / 22.22 %);
 *     overlap: comm 10, with compute [105, 110): 50 %; idle, stream 3 (the
 *     op has no stream): B's gap 10 and its call started at 115 > 110:
 *     host_wait; N's gap 1, unlinked: kernel_wait (0.91 / 0.09); exposed
 *     (N is neither class): total 25, computation 15, exposed comm [110,
 *     115) = 5, busy 20, idle 5, total comm 10.
 *   rank 2 (a topsprof listing): task G [0, 5), no host call at all:
 *     exposed_time counts it (linked_only cannot apply) and says so.
 *   rank 3: in TB_RANK only, no device task: a note per table, no row.
 *   rank 4: task [0, 1) id 40 and a call with id 41: nothing linked,
 *     exposed_time has no row and says why; the HTA tables (no steps) keep it.
 */
static void mixed_ranks(void **state)
{
    (void)state;
    char db[sizeof dbpath];
    snprintf(db, sizeof db, "%s/mixed.db", tmpdir);
    assert_int_equal(tu_unified_db(db, MIXED_RANKS), 0);
    capture c;
    notes nt;
    run_noted(&c, &nt, db, TEMPORAL);
    assert_string_equal(c.text, TEMPORAL_HEADER
                                "0|0|10|0|10|0|100|0\n"
                                "1|6|15|6|27|22.22|55.56|22.22\n"
                                "2|0|5|0|5|0|100|0\n"
                                "4|0|1|0|1|0|100|0\n");
    assert_non_null(strstr(nt.text, "temporal_breakdown: rank 3: no row: the rank has no device tasks or communication "
                                    "ops\n"));
    run_noted(&c, &nt, db, "SELECT * FROM comm_comp_overlap ORDER BY rank");
    assert_string_equal(c.text, "rank|comp_comm_overlap_pctg\n0|NULL\n1|50\n2|NULL\n4|NULL\n");
    run_noted(&c, &nt, db, IDLE);
    assert_string_equal(c.text, IDLE_HEADER
                                "0|7|other|0|NULL\n"
                                "1|3|host_wait|10|0.91\n"
                                "1|3|kernel_wait|1|0.09\n"
                                "1|3|other|0|0\n"
                                "2|1|other|0|NULL\n"
                                "4|1|other|0|NULL\n");
    assert_non_null(strstr(nt.text, "idle_time_breakdown: rank 3: no row: the rank has no device tasks or "
                                    "communication ops\n"));
    run_noted(&c, &nt, db, EXPOSED);
    assert_string_equal(c.text, EXPOSED_HEADER
                                "0|10000|10000|0|0|0|10000|0|0\n"
                                "1|25000|15000|5000|0|5000|20000|10000|0\n"
                                "2|5000|5000|0|0|0|5000|0|0\n");
    if (strcmp(nt.text,
               "exposed_time: rank 2 has no host calls to link its device tasks to: its 1 tasks count without a "
               "launching call (metrics.exposed.linked_only does not apply)\n"
               "exposed_time: rank 3: no row: the rank has no device tasks or communication ops\n"
               "exposed_time: rank 4: no row: none of its 1 device tasks is linked to a launching host call "
               "(metrics.exposed.linked_only: false counts them)\n"))
        print_error("notes:\n%s", nt.text);
    assert_string_equal(nt.text,
                        "exposed_time: rank 2 has no host calls to link its device tasks to: its 1 tasks count "
                        "without a launching call (metrics.exposed.linked_only does not apply)\n"
                        "exposed_time: rank 3: no row: the rank has no device tasks or communication ops\n"
                        "exposed_time: rank 4: no row: none of its 1 device tasks is linked to a launching host "
                        "call (metrics.exposed.linked_only: false counts them)\n");
}

/* The rows of host_only_span's DB (its comment says what they are). */
static const char HOST_ONLY[] =
        "INSERT INTO STRING_IDS VALUES (1, 'ProfilerStep#1'), (2, 'ProfilerStep#2'), (3, 'aten::mm'),"
        "  (4, 'aten::add'), (5, 'python_function'), (6, 'step_fn'), (7, 'gemm_kernel'), (8, 'cudaLaunchKernel');"
        "INSERT INTO TB_RANK VALUES (0, NULL, 'h.json'), (1, NULL, 'e.json'), (2, NULL, 'g.json');"
        "INSERT INTO PYTORCH_API (startNs, endNs, globalTid, name, type, rankId) VALUES"
        "  (1000000, 2000000, 1, 1, 60003, 0), (3000000, 4000000, 1, 2, 60003, 0),"
        "  (1500000, 1600000, 1, 3, 50001, 0), (3500000, 3600000, 1, 4, 50001, 0);"
        "INSERT INTO TB_EVENT VALUES (0, 1, 1, 'X', 5, 6, 2500000, 2600000, NULL, NULL, NULL);"
        "INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, streamId, taskType, rankId, name)"
        "  VALUES (20000, 30000, 0, 1, 1, 7, 1, 2, 7);"
        "INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, rankId) VALUES (7, 1, 2);"
        "INSERT INTO CANN_API (startNs, endNs, type, globalTid, connectionId, name, rankId) VALUES"
        "  (10000, 12000, 60001, 1, 1, 8, 2);";

/*
 * hta_trace_span of a rank without device work: HTA's get_trace_duration,
 * the span of its host events (µs below, the DB holds ns). Rank 0:
 * ProfilerStep#1 [1000, 2000], #2 [3000, 4000], aten::mm at 1500, aten::add
 * at 3500, a python_function slice at 2500. HTA's window (two steps) keeps
 * the starts before the last step's, 3000: 1000 to 2500, 1500; with
 * drop_last_step false those at or before its end, 4000: 1000 to 3500,
 * 2500. Rank 1: in TB_RANK only, no event: no row, a note. Rank 2: a
 * kernel [20, 30] launched at 10: 10 to 20, 10. queue_full_time's join
 * (queue_length) has rank 2's stream only: no row for rank 0.
 */
static void host_only_span(void **state)
{
    (void)state;
    char db[sizeof dbpath];
    snprintf(db, sizeof db, "%s/host_only.db", tmpdir);
    assert_int_equal(tu_unified_db(db, HOST_ONLY), 0);
    capture c;
    notes nt;
    run_noted(&c, &nt, db, "SELECT * FROM hta_trace_span ORDER BY rank");
    assert_string_equal(c.text, "rank|first_ts|last_ts|duration\n0|1000|2500|1500\n2|10|20|10\n");
    assert_non_null(strstr(nt.text, "hta_trace_span: rank 1: no row: the rank has no device task, host call or "
                                    "slice\n"));
    assert_null(strstr(nt.text, "hta_trace_span: rank 0"));
    cap_init(&c);
    cap_assert_spec(&c, db, "{hta: {drop_last_step: false}}", "SELECT * FROM hta_trace_span WHERE rank = 0",
                    "rank|first_ts|last_ts|duration\n0|1000|3500|2500\n");
    run_noted(&c, &nt, db, "SELECT DISTINCT rank FROM queue_length ORDER BY rank");
    assert_string_equal(c.text, "rank\n2\n");
}

/* Runs one spec per YAML text (NULL-terminated list) over db in one run, into c and nt;
 * on the connection con (NULL: a new one). */
static void run_specs_noted(capture *c, notes *nt, const char *db, sqlite3 *con, const char *const *yaml)
{
    tb_spec *spec[4] = {NULL};
    const tb_spec *specs[4];
    size_t n = 0;
    tb_error err;
    cap_init(c);
    memset(nt, 0, sizeof *nt);
    for (; yaml[n]; n++) {
        assert_int_equal(tb_spec_load_mem("t.yaml", yaml[n], strlen(yaml[n]), &spec[n], NULL, NULL, &err), TB_OK);
        specs[n] = spec[n];
    }
    tb_run_options o = {.db = con ? con : cap_db(db), .db_name = db, .unit = TB_UNIT_NS, .specs = specs, .n_specs = n,
                        .formats = TB_OUT_CSV, .open_sink = cap_open, .sink_ctx = c, .note = on_note, .ctx = nt};
    tb_run_result res;
    tb_status st = tb_report_run(&o, &res, &err);
    if (st != TB_OK)
        print_error("run failed: %s\n", err.message);
    assert_int_equal(st, TB_OK);
    for (size_t i = 0; i < n; i++)
        tb_spec_free(spec[i]);
}

/* A spec of one report per SQL (up to three, NULL ends) under a metrics section (may be ""),
 * of scope rank when rank is set. */
static void spec_of_scope(char *out, size_t n, const char *metrics, const char *const *sql, int rank)
{
    int k = snprintf(out, n, "tracebook: 1\n%s%s%sreports:\n", *metrics ? "metrics: " : "", metrics,
                     *metrics ? "\n" : "");
    for (int i = 0; sql[i] && k > 0 && (size_t)k < n; i++)
        k += snprintf(out + k, n - (size_t)k, "  - id: r%d\n%s    sql: \"%s\"\n", i,
                      rank ? "    scope: rank\n" : "", sql[i]);
}

static void spec_of(char *out, size_t n, const char *metrics, const char *const *sql)
{
    spec_of_scope(out, n, metrics, sql, 0);
}

/* Counts the statements that read the device tasks (metrics' each_rank). */
static int count_task_reads(unsigned type, void *ctx, void *p, void *x)
{
    (void)type;
    (void)x;
    const char *sql = sqlite3_sql(p);
    if (sql && strstr(sql, "FROM device_task d LEFT JOIN temp.tb_m_launch"))
        ++*(int *)ctx;
    return 0;
}

/*
 * HTA's three tables are built from one read of the tasks: the first one a
 * run names stages the other two, which a later report of the same run
 * takes when its options and window are the same. Each report must give
 * the rows and notes it gives alone, in the same order; with other options
 * the staged table must not be taken.
 */
static void three_from_one_read(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        /* metrics of the first spec, of the second (NULL: one spec of three reports) */
        {"", NULL},
        {"", "{hta: {kernel_wait_us: 0.5}}"},
        {"{hta: {round_us: false}}", ""},
        {"{hta: {classes: {communication: ['hcom_*']}}}", "{hta: {classes: {communication: ['x*']}}}"},
    };
    static const char *const sql[] = {TEMPORAL, "SELECT * FROM comm_comp_overlap ORDER BY rank", IDLE, NULL};
    char db[sizeof dbpath];
    snprintf(db, sizeof db, "%s/three.db", tmpdir);
    assert_int_equal(tu_unified_db(db, MIXED_RANKS), 0);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        /* each report alone, in a run of its own */
        char want[16384] = "", want_notes[4096] = "", yaml[3][1024];
        for (int i = 0; i < 3; i++) {
            const char *one[] = {sql[i], NULL};
            const char *metrics = cases[k][1] && i > 0 ? cases[k][1] : cases[k][0];
            capture c;
            notes nt;
            spec_of(yaml[0], sizeof yaml[0], metrics, one);
            const char *specs[] = {yaml[0], NULL};
            run_specs_noted(&c, &nt, db, NULL, specs);
            strncat(want, c.text, sizeof want - strlen(want) - 1);
            strncat(want_notes, nt.text, sizeof want_notes - strlen(want_notes) - 1);
        }
        /* all three in one run: one spec, or the first report's spec and then the other two's */
        capture c;
        notes nt;
        const char *first[] = {sql[0], NULL};
        spec_of(yaml[1], sizeof yaml[1], cases[k][0], cases[k][1] ? first : sql);
        spec_of(yaml[2], sizeof yaml[2], cases[k][1] ? cases[k][1] : "", sql + 1);
        const char *specs[] = {yaml[1], cases[k][1] ? yaml[2] : NULL, NULL};
        int reads = 0;
        sqlite3 *con = cap_db(db);
        sqlite3_trace_v2(con, SQLITE_TRACE_STMT, count_task_reads, &reads);
        run_specs_noted(&c, &nt, db, con, specs);
        sqlite3_trace_v2(con, 0, NULL, NULL);
        /* one read when the options are the same, else one per set of options */
        assert_int_equal(reads, cases[k][1] && strcmp(cases[k][0], cases[k][1]) ? 2 : 1);
        if (strcmp(c.text, want) || strcmp(nt.text, want_notes))
            print_error("case %zu:\n%s\nwant:\n%s\nnotes:\n%s\nwant notes:\n%s\n", k, c.text, want, nt.text,
                        want_notes);
        assert_string_equal(c.text, want);
        assert_string_equal(nt.text, want_notes);
        assert_non_null(strstr(nt.text, "comm_comp_overlap: rank 3: no row"));
    }
    /* rank-scope reports that also read a cluster table: their tables are
     * built for each rank in turn (the rank's window, temp.tb_rank_now), so
     * what one rank staged must not serve the next */
    static const char *const by_rank[] = {
        "SELECT t.*, (SELECT count(*) FROM slow_rank) AS n FROM temporal_breakdown t",
        "SELECT o.*, (SELECT count(*) FROM slow_rank) AS n FROM comm_comp_overlap o",
        "SELECT i.*, (SELECT count(*) FROM slow_rank) AS n FROM idle_time_breakdown i", NULL};
    char want[16384] = "", yaml[1024];
    for (int i = 0; i < 3; i++) {
        const char *one[] = {by_rank[i], NULL};
        const char *specs[] = {yaml, NULL};
        capture c;
        notes nt;
        spec_of_scope(yaml, sizeof yaml, "", one, 1);
        run_specs_noted(&c, &nt, db, NULL, specs);
        strncat(want, c.text, sizeof want - strlen(want) - 1);
    }
    capture c;
    notes nt;
    const char *specs[] = {yaml, NULL};
    spec_of_scope(yaml, sizeof yaml, "", by_rank, 1);
    run_specs_noted(&c, &nt, db, NULL, specs);
    if (strcmp(c.text, want))
        print_error("rank scope:\n%s\nwant:\n%s\n", c.text, want);
    assert_string_equal(c.text, want);
    assert_non_null(strstr(want, "\n1|50|"));
}

/* Bad options stop the spec when it loads (tests/unit/test_spec.c has the positions). */
static void option_errors(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"{hta: {round_us: yes}}", "'metrics.hta.round_us' must be true or false, got 'yes'"},
        {"{hta: {kernel_wait_us: -1}}", "'metrics.hta.kernel_wait_us' must be a number >= 0, got '-1'"},
        {"{hta: {round_ns: false}}", "unknown key 'round_ns' in metrics.hta (did you mean 'round_us'?); expected one "
                                     "of: round_us, drop_last_step, linked_only, kernel_wait_us, stream_events, classes"},
        {"{exposed: {linked: false}}",
         "unknown key 'linked' in metrics.exposed; expected one of: linked_only, classes"},
        {"{exposed: {classes: {communication: 're:('}}}",
         "'metrics.exposed.classes.communication' has a bad regular expression 're:(': Unmatched ( or \\("},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char yaml[256];
        snprintf(yaml, sizeof yaml, "tracebook: 1\nmetrics: %s\nreports:\n  - id: r\n    sql: SELECT * FROM "
                 "exposed_time\n", bad[i][0]);
        capture c;
        tb_error err;
        assert_int_equal(run_spec(&c, yaml, &err), TB_ERR_PARSE);
        assert_string_equal(err.message, bad[i][1]);
        assert_string_equal(c.text, "");
    }
}

/* The built-in reports write HTA's and TraceLens' headers exactly, HTA's
 * times in the run's unit (ns here: HTA's µs times 1000). */
static void builtin_reports(void **state)
{
    (void)state;
    capture c;
    tb_error err;
    tb_status st = run_spec(&c, "tracebook: 1\nreports:\n  - use: temporal_breakdown\n", &err);
    assert_int_equal(st, TB_OK);
    assert_string_equal(c.text,
                        "rank|idle_time(ns)|compute_time(ns)|non_compute_time(ns)|kernel_time(ns)|idle_time_pctg|"
                        "compute_time_pctg|non_compute_time_pctg\n"
                        "0|25000|12000|14000|51000|49.02|23.53|27.45\n"
                        "1|10000|20000|0|30000|33.33|66.67|0\n"
                        "2|7000|2000|0|9000|77.78|22.22|0\n");
    st = run_spec(&c, "tracebook: 1\nreports:\n  - use: comm_comp_overlap\n", &err);
    assert_int_equal(st, TB_OK);
    assert_string_equal(c.text, "rank|comp_comm_overlap_pctg\n0|53.33\n1|NULL\n2|NULL\n");
    /* a rank-scope report: limit counts each rank's rows; scope: all, every rank's at once */
    st = run_spec(&c, "tracebook: 1\nreports:\n  - use: idle_time_breakdown\n    limit: 1\n", &err);
    assert_int_equal(st, TB_OK);
    assert_string_equal(c.text, "rank|stream|idle_category|idle_time|idle_time_ratio\n0|7|host_wait|22000|0.69\n"
                                "1|1|kernel_wait|10000|1\n2|1|kernel_wait|9000|1\n");
    st = run_spec(&c, "tracebook: 1\nreports:\n  - use: idle_time_breakdown\n    limit: 1\n    scope: all\n", &err);
    assert_int_equal(st, TB_OK);
    assert_string_equal(c.text, "rank|stream|idle_category|idle_time|idle_time_ratio\n0|7|host_wait|22000|0.69\n");
    st = run_spec(&c, "tracebook: 1\nreports:\n  - use: exposed_time\n", &err);
    if (st != TB_OK)
        print_error("run failed: %s\n", err.message);
    assert_int_equal(st, TB_OK);
    assert_string_equal(c.text,
                        "rank|type|time ms|percent\n"
                        "0|computation_time|0.0157|25.9075907590759\n"
                        "0|exposed_comm_time|0.0065|10.7260726072607\n"
                        "0|exposed_memcpy_time|0.005|8.25082508250825\n"
                        "0|busy_time|0.0272|44.8844884488449\n"
                        "0|idle_time|0.0334|55.1155115511551\n"
                        "0|total_time|0.0606|100\n"
                        "0|total_comm_time|0.015|24.7524752475248\n"
                        "0|total_memcpy_time|0.005|8.25082508250825\n"
                        "1|computation_time|0.01|100\n"
                        "1|exposed_comm_time|0|0\n"
                        "1|exposed_memcpy_time|0|0\n"
                        "1|busy_time|0.01|100\n"
                        "1|idle_time|0|0\n"
                        "1|total_time|0.01|100\n"
                        "1|total_comm_time|0|0\n"
                        "1|total_memcpy_time|0|0\n");
    /* per rank, as a run on that rank alone: rank 0 has compute T1 T3 T6 T7 =
     * 14700 ns, communication T2 15000, memory T4 5000 and T5 2000 (36700 in
     * all); rank 1 U1 U2 = 20000; rank 2 A-E = 6100; Std Time, a time, to the
     * ns (4225.616... and 1567.482...) */
    st = run_spec(&c, "tracebook: 1\nreports:\n  - use: kernel_breakdown\n    params: {top: 1}\n", &err);
    assert_int_equal(st, TB_OK);
    assert_string_equal(c.text,
                        "Rank ID|Class|Name|Count|Total Time(ns)|Avg Time(ns)|Min Time(ns)|Max Time(ns)|"
                        "Std Time(ns)|Class Ratio(%)|Ratio(%)\n"
                        "0|compute|gemm_kernel|4|14700|3675|500|9700|4226|100|40.0544959128065\n"
                        "0|communication|ncclDevKernel_AllReduce_Sum_f32|1|15000|15000|15000|15000|NULL|100|"
                        "40.8719346049046\n"
                        "0|memory|Memcpy HtoD (Pageable -> Device)|1|5000|5000|5000|5000|NULL|71.4285714285714|"
                        "13.6239782016349\n"
                        "1|compute|gemm_kernel|2|20000|10000|10000|10000|0|100|100\n"
                        "2|compute|gemm_kernel|5|6100|1220|200|4000|1567|100|100\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(temporal_default),
        cmocka_unit_test(temporal_options),
        cmocka_unit_test(overlap_default),
        cmocka_unit_test(idle_default),
        cmocka_unit_test(idle_options),
        cmocka_unit_test(class_overrides),
        cmocka_unit_test(exposed_npu_comm_ops),
        cmocka_unit_test(exposed_default),
        cmocka_unit_test(queue_length_series),
        cmocka_unit_test(mixed_ranks),
        cmocka_unit_test(host_only_span),
        cmocka_unit_test(three_from_one_read),
        cmocka_unit_test(option_errors),
        cmocka_unit_test(builtin_reports),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
