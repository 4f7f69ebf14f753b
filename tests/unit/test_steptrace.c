/* SPDX-License-Identifier: MIT */
/*
 * test_steptrace.c - the step trace computed tables (engine/metrics/
 * steptrace.c): step_trace_time under each policy, overlap_lanes,
 * overlap_consistency, the class options, and a step-mode window.
 *
 * The DB is made from the engine's own schema with rows whose every answer
 * is worked out by hand below; each test checks every field exactly.
 *
 * Rank 0, device 0. Host steps (STEP_TIME): 1 = [1000, 2000], 2 = [2000,
 * 3000]. Launching calls (CANN_API, connection id @ start):
 *   1@1100 2@1150 3@1160 4@1170 5@1180 6@1190 7@1195 8@1196 9@1197  (step 1)
 *   11@2100 12@2150 13@2200 14@2300 15@2400                        (step 2)
 * Tasks (stream 1 unless noted; C = has a compute record):
 *   H   [500, 600)    C, launched by nothing (before step 1)
 *   A   [1200, 1300)  C conn 1
 *   B   [1250, 1400)  C conn 2      (overlaps A)
 *   C   [1400, 1450)  C conn 3      (touches B)
 *   D   [1500, 1550)  C conn 5      (inside the allReduce)
 *   E   [1850, 2100)  C conn 7      (ends after the host step)
 *   Aiv [1620, 1680)  C conn 8; its compute record has no name, the task is
 *                     named Foo_AivKernel: not compute
 *   I   [1900, 1950)  C conn 9      (nested in E; starts last in step 1)
 *   S9a [1605, 1695)  stream 9, a communication task
 *   S9b [1610, 1690)  stream 9, a communication task with a compute record:
 *                     stream 9 is communication-only, so not compute
 *   EW  [2200, 2250)  conn 12, EVENT_WAIT (no compute record): step 2's
 *                     first work, before its first compute (a gap)
 *   F   [2300, 2400)  C conn 11
 *   G   [2950, 3050)  C conn 14     (ends after the host step)
 * Communication ops: allReduce [1420, 1600) conn 4; receive1 [1700, 1800)
 * conn 6; receive2 [2350, 2900) conn 13; send [2600, 2700) conn 15.
 *
 * Device ranges: step 1 START = first launched start = 1200 (A), END =
 * max(last launched end 2100 (E), host end 2000) = 2100; step 2 START = 2200
 * (EW), END = max(3050 (G), 3000) = 3050. FWK_START = host starts 1000, 2000.
 *
 * Step 1, members by start in [1200, 2100): compute A B C D E I, comm
 * allReduce, receive1.
 *   U(compute) = [1200,1450) [1500,1550) [1850,2100)          = 250+50+250 = 550
 *   U(comm)    = [1420,1600) [1700,1800)                      = 180+100    = 280
 *   CNO = U(comm) \ U(compute) = [1450,1500) [1550,1600) [1700,1800)       = 200
 *   Overlapped = 280 - 200 = 80; busy = 550 + 200 = 750; span 1200..2100 = 900
 *   torch_npu: Free = 900 - 750 = 150 (gaps [1600,1700) [1800,1850)),
 *     Bubble = 100 (receive1), Stage = 900 - 100 = 800,
 *     ExcludeReceive = max(200 - 100, 0) = 100, Preparing = 1200 - 1000 = 200
 * Step 2, members in [2200, 3050): compute F G, comm receive2, send.
 *   U(compute) = [2300,2400) [2950,3050) = 200; U(comm) = [2350,2900) = 550
 *   CNO = [2400,2900) = 500; Overlapped = 50; busy 700; span 2300..3050 = 750
 *   torch_npu: Free = 50, Bubble = 550, Stage = 200, ExcludeReceive =
 *     max(500 - 550, 0) = 0, Preparing = 2300 - 2000 = 300 (EW is not
 *     compute or communication: the gap 2200..2300 is preparing, not free)
 *
 * Rank 1, device 1, no steps (one row for the whole profile, Step NULL):
 *   memcpy [0, 50) (no compute record), compute [100,200) [120,180) (nested)
 *   [150,250) [450,500), comm op [240,400). Span 0..500 (over all tasks).
 *   U(compute) = [100,250) [450,500) = 200; U(comm) = 160; CNO = [250,400)
 *   = 150; Overlapped 10; busy = [100,400) [450,500) = 350; torch_npu Free =
 *   (500 - 100) - 350 = 50, Stage = 400, ExcludeReceive 150, Preparing 0.
 *
 * Lanes (Free = [first task start, last end] \ busy):
 *   rank 0: Computing [500,600) [1200,1450) [1500,1550) [1850,2100)
 *           [2300,2400) [2950,3050) = 850; Communication [1420,1600)
 *           [1700,1800) [2350,2900) = 830; CNO [1450,1500) [1550,1600)
 *           [1700,1800) [2400,2900) = 700; Free [600,1200) [1600,1700)
 *           [1800,1850) [2100,2300) [2900,2950) = 1000
 *   rank 1: Computing [100,250) [450,500); Communication [240,400);
 *           CNO [250,400); Free [0,100) [400,450) = 150
 * The input's lanes (OVERLAP_ANALYSIS) exist for rank 0 only: the computed
 * ones except that Computing has [1200,1440) for [1200,1450): 840 given.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "testutil.h"
#include "capture.h"
#include "metrics/metrics.h"
#include "tracebook/tracebook.h"


static char dbpath[PATH_MAX + 16];

static const char rows_sql[] =
    "INSERT INTO STRING_IDS VALUES (1, 'MatMul'), (2, 'hcom_allReduce__1_0_1'), (3, 'hcom_receive__1_0_1'),"
    "  (4, 'hcom_send__1_0_1'), (5, 'Foo_AivKernel'), (6, 'AI_CORE'), (7, 'EVENT_WAIT'), (8, 'Notify_Wait');"
    "INSERT INTO STEP_TIME VALUES (1, 1000, 2000, 0), (2, 2000, 3000, 0);"
    "INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, streamId, taskType, rankId, name) VALUES"
    "  (500, 600, 0, NULL, 1, 1, 6, 0, 1),"     /* H */
    "  (1200, 1300, 0, 1, 2, 1, 6, 0, 1),"      /* A */
    "  (1250, 1400, 0, 2, 3, 1, 6, 0, 1),"      /* B */
    "  (1400, 1450, 0, 3, 4, 1, 6, 0, 1),"      /* C */
    "  (1500, 1550, 0, 5, 5, 1, 6, 0, 1),"      /* D */
    "  (1850, 2100, 0, 7, 6, 1, 6, 0, 1),"      /* E */
    "  (1620, 1680, 0, 8, 7, 1, 6, 0, 5),"      /* Aiv */
    "  (1900, 1950, 0, 9, 8, 1, 6, 0, 1),"      /* I */
    "  (1605, 1695, 0, NULL, 9, 9, 8, 0, 8),"   /* S9a */
    "  (1610, 1690, 0, NULL, 10, 9, 6, 0, 8),"  /* S9b */
    "  (2200, 2250, 0, 12, 11, 1, 7, 0, 7),"    /* EW */
    "  (2300, 2400, 0, 11, 12, 1, 6, 0, 1),"    /* F */
    "  (2950, 3050, 0, 14, 13, 1, 6, 0, 1),"    /* G */
    "  (0, 50, 1, NULL, 20, 1, 6, 1, NULL),"    /* rank 1: memcpy */
    "  (100, 200, 1, NULL, 21, 1, 6, 1, 1), (120, 180, 1, NULL, 22, 1, 6, 1, 1),"
    "  (150, 250, 1, NULL, 23, 1, 6, 1, 1), (450, 500, 1, NULL, 24, 1, 6, 1, 1);"
    "INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, taskType, rankId) VALUES"
    "  (1, 1, 6, 0), (1, 2, 6, 0), (1, 3, 6, 0), (1, 4, 6, 0), (1, 5, 6, 0), (1, 6, 6, 0), (NULL, 7, 6, 0),"
    "  (1, 8, 6, 0), (1, 10, 6, 0), (1, 12, 6, 0), (1, 13, 6, 0),"
    "  (1, 21, 6, 1), (1, 22, 6, 1), (1, 23, 6, 1), (1, 24, 6, 1);"
    "INSERT INTO MEMCPY_INFO VALUES (20, 64, 65535, 1);"
    "INSERT INTO COMMUNICATION_TASK_INFO (name, globalTaskId, rankId) VALUES (8, 9, 0), (8, 10, 0);"
    "INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, opId, deviceId, rankId) VALUES"
    "  (2, 1420, 1600, 4, 1, 0, 0), (3, 1700, 1800, 6, 2, 0, 0), (3, 2350, 2900, 13, 3, 0, 0),"
    "  (4, 2600, 2700, 15, 4, 0, 0), (2, 240, 400, NULL, 5, 1, 1);"
    "INSERT INTO CANN_API (startNs, endNs, type, globalTid, connectionId, name, rankId) VALUES"
    "  (1100, 1101, 20000, 1, 1, 1, 0), (1150, 1151, 20000, 1, 2, 1, 0), (1160, 1161, 20000, 1, 3, 1, 0),"
    "  (1170, 1171, 20000, 1, 4, 1, 0), (1180, 1181, 20000, 1, 5, 1, 0), (1190, 1191, 20000, 1, 6, 1, 0),"
    "  (1195, 1196, 20000, 1, 7, 1, 0), (1196, 1197, 20000, 1, 8, 1, 0), (1197, 1198, 20000, 1, 9, 1, 0),"
    "  (2100, 2101, 20000, 1, 11, 1, 0), (2150, 2151, 20000, 1, 12, 1, 0), (2200, 2201, 20000, 1, 13, 1, 0),"
    "  (2300, 2301, 20000, 1, 14, 1, 0), (2400, 2401, 20000, 1, 15, 1, 0);"
    /* the input's lanes, rank 0: types 0 Computing, 1 Communication, 2 CNO, 3 Free */
    "INSERT INTO OVERLAP_ANALYSIS (id, deviceId, startNs, endNs, type, rankId) VALUES"
    "  (1, 0, 500, 600, 0, 0), (2, 0, 1200, 1440, 0, 0), (3, 0, 1500, 1550, 0, 0), (4, 0, 1850, 2100, 0, 0),"
    "  (5, 0, 2300, 2400, 0, 0), (6, 0, 2950, 3050, 0, 0),"
    "  (7, 0, 1420, 1600, 1, 0), (8, 0, 1700, 1800, 1, 0), (9, 0, 2350, 2900, 1, 0),"
    "  (10, 0, 1450, 1500, 2, 0), (11, 0, 1550, 1600, 2, 0), (12, 0, 1700, 1800, 2, 0), (13, 0, 2400, 2900, 2, 0),"
    "  (14, 0, 600, 1200, 3, 0), (15, 0, 1600, 1700, 3, 0), (16, 0, 1800, 1850, 3, 0), (17, 0, 2100, 2300, 3, 0),"
    "  (18, 0, 2900, 2950, 3, 0);";

static int setup(void **state)
{
    (void)state;
    if (tu_make_tmpdir("test_steptrace") != 0)
        return -1;
    snprintf(dbpath, sizeof dbpath, "%s/st.db", tmpdir);
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

/* tb_query_run (no spec: default options), with a step-mode window on step `step` when step > 0. */
static tb_status query(capture *c, const char *sql, int64_t step, tb_error *err)
{
    tb_run_options o = {.db = cap_db(dbpath), .db_name = dbpath, .unit = TB_UNIT_NS};
    if (step > 0)
        o.window = (tb_window){.set = 1, .model_id = 4294967295LL, .iteration_id = step, .iteration_count = 1};
    cap_init(c);
    uint64_t rows = 0;
    tb_error_clear(err);
    return tb_query_run(&o, sql, &c->vt, &rows, err);
}

static void assert_query(const char *sql, int64_t step, const char *want)
{
    capture c;
    tb_error err;
    tb_status st = query(&c, sql, step, &err);
    if (st != TB_OK)
        print_error("query failed: %s\n", err.message);
    assert_int_equal(st, TB_OK);
    if (strcmp(c.text, want) != 0)
        print_error("got:\n%s\nwant:\n%s\n", c.text, want);
    assert_string_equal(c.text, want);
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

#define ALL "SELECT * FROM step_trace_time ORDER BY rankId, deviceId, step"
#define HEADER                                                                                                  \
    "rankId|deviceId|step|startNs|endNs|fwkStartNs|computing|communicationNotOverlapped|overlapped|"           \
    "communication|free|stage|bubble|communicationNotOverlappedExcludeReceive|preparing|policy\n"

/* The default policy, torch_npu, through tb_query_run: the rows worked out at the top. */
static void torch_npu_default(void **state)
{
    (void)state;
    assert_query(ALL, 0,
                 HEADER
                 "0|0|1|1200|2100|1000|550|200|80|280|150|800|100|100|200|torch_npu\n"
                 "0|0|2|2200|3050|2000|200|500|50|550|50|200|550|0|300|torch_npu\n"
                 "1|1|NULL|0|500|NULL|200|150|10|160|50|400|0|150|0|torch_npu\n");
    /* the same when named explicitly in a spec */
    assert_spec("{step_trace: {policy: torch_npu}}", ALL,
                HEADER
                "0|0|1|1200|2100|1000|550|200|80|280|150|800|100|100|200|torch_npu\n"
                "0|0|2|2200|3050|2000|200|500|50|550|50|200|550|0|300|torch_npu\n"
                "1|1|NULL|0|500|NULL|200|150|10|160|50|400|0|150|0|torch_npu\n");
}

/*
 * mindspore: members by start in [START, END] (same members here); Free is
 * the device's Free lane clipped to the step; Stage is last.ts - first.ts +
 * last.dur, last being the op that starts last; sends count in Bubble; no
 * clamp.
 *   step 1: Free = Free lane ∩ [1200, 2100] = [1600,1700) [1800,1850) = 150;
 *     the op starting last is I [1900, 1950): Stage = 1950 - 1200 - 100 = 650;
 *     ExcludeReceive = 200 - 100 = 100.
 *   step 2: Free = [2200,2300) [2900,2950) = 150; Bubble = receive2 550 + send
 *     100 = 650; Stage = 3050 - 2300 - 650 = 100; ExcludeReceive = 500 - 650 = -150.
 *   rank 1: Free = Free lane [0,100) [400,450) = 150; last op [450,500):
 *     Stage = 500 - 100 = 400.
 */
static void mindspore_policy(void **state)
{
    (void)state;
    assert_spec("{step_trace: {policy: mindspore}}", ALL,
                HEADER
                "0|0|1|1200|2100|1000|550|200|80|280|150|650|100|100|200|mindspore\n"
                "0|0|2|2200|3050|2000|200|500|50|550|150|100|650|-150|300|mindspore\n"
                "1|1|NULL|0|500|NULL|200|150|10|160|150|400|0|150|0|mindspore\n");
}

/*
 * msprof_analyze: the whole profile is one step; sums of lane slices (the
 * input's for rank 0, computed for rank 1); Stage = Free + Computing + CNO -
 * Bubble; no clamp.
 *   rank 0: Computing 840 (given), Communication 830, CNO 700, Overlapped 130,
 *     Free 1000, Bubble 100 + 550 = 650, Stage = 1000 + 840 + 700 - 650 = 1890,
 *     ExcludeReceive = 700 - 650 = 50; range = first task start .. last end.
 *   rank 1: 200, 160, 150, 10, Free 150, Stage = 150 + 200 + 150 = 500.
 */
static void msprof_analyze_policy(void **state)
{
    (void)state;
    assert_spec("{step_trace: {policy: msprof_analyze}}", ALL,
                HEADER
                "0|0|NULL|500|3050|NULL|840|700|130|830|1000|1890|650|50|0|msprof_analyze\n"
                "1|1|NULL|0|500|NULL|200|150|10|160|150|500|0|150|0|msprof_analyze\n");
}

/*
 * torch_npu_text: lane slices by start in [START, END), the input's for
 * rank 0: step 1 Computing = [1200,1440) [1500,1550) [1850,2100) = 540 (the
 * rest as torch_npu: the slices are the same unions); step 2 Free = [2900,
 * 2950) = 50 ([2100,2300) starts before 2200). Stage = span of the counted
 * slices - Bubble, clamped ExcludeReceive. Rank 1 (computed lanes, whole
 * profile): Free 150, Stage = 500 - 0 - 0 = 500.
 */
static void torch_npu_text_policy(void **state)
{
    (void)state;
    assert_spec("{step_trace: {policy: torch_npu_text}}", ALL,
                HEADER
                "0|0|1|1200|2100|1000|540|200|80|280|150|800|100|100|200|torch_npu_text\n"
                "0|0|2|2200|3050|2000|200|500|50|550|50|200|550|0|300|torch_npu_text\n"
                "1|1|NULL|0|500|NULL|200|150|10|160|150|500|0|150|0|torch_npu_text\n");
}

#define SHORT "SELECT rankId, step, computing, communicationNotOverlapped, free, stage, bubble, " \
              "communicationNotOverlappedExcludeReceive FROM step_trace_time ORDER BY rankId, step"

/*
 * Class options. receive as a regular expression on sends only: step 1 has
 * no Bubble (Stage 900, ExcludeReceive 200), step 2's Bubble is the send's
 * 100 (Stage 750 - 100 = 650, ExcludeReceive 500 - 100 = 400).
 * compute_exclude empty: the AivKernel task [1620,1680) is compute: step 1
 * Computing 610, Free 900 - (610 + 200) = 90.
 * comm_stream_rule none: S9b [1610,1690) is compute too (covering Aiv, still
 * excluded by name): Computing 630, Free 70.
 */
static void class_options(void **state)
{
    (void)state;
    assert_spec("{classes: {receive: [\"re:^hcom_send\"]}}", SHORT,
                "rankId|step|computing|communicationNotOverlapped|free|stage|bubble|"
                "communicationNotOverlappedExcludeReceive\n"
                "0|1|550|200|150|900|0|200\n"
                "0|2|200|500|50|650|100|400\n"
                "1|NULL|200|150|50|400|0|150\n");
    assert_spec("{classes: {compute_exclude: []}}", SHORT,
                "rankId|step|computing|communicationNotOverlapped|free|stage|bubble|"
                "communicationNotOverlappedExcludeReceive\n"
                "0|1|610|200|90|800|100|100\n"
                "0|2|200|500|50|200|550|0\n"
                "1|NULL|200|150|50|400|0|150\n");
    assert_spec("{classes: {comm_stream_rule: none}}", SHORT,
                "rankId|step|computing|communicationNotOverlapped|free|stage|bubble|"
                "communicationNotOverlappedExcludeReceive\n"
                "0|1|630|200|70|800|100|100\n"
                "0|2|200|500|50|200|550|0\n"
                "1|NULL|200|150|50|400|0|150\n");
    /* a glob with a single string works as a one-item list */
    assert_spec("{classes: {receive: \"hcom_send__*\"}}", SHORT,
                "rankId|step|computing|communicationNotOverlapped|free|stage|bubble|"
                "communicationNotOverlappedExcludeReceive\n"
                "0|1|550|200|150|900|0|200\n"
                "0|2|200|500|50|650|100|400\n"
                "1|NULL|200|150|50|400|0|150\n");
}

/* Bad class options stop the spec when it loads (test_spec.c has the positions). */
static void class_option_errors(void **state)
{
    (void)state;
    capture c;
    tb_error err;
    tb_status st = run_spec(&c, "tracebook: 1\nmetrics: {classes: {receive: [\"re:(\"]}}\n"
                                "reports:\n  - id: r\n    sql: SELECT * FROM step_trace_time\n", &err);
    assert_int_equal(st, TB_ERR_PARSE);
    assert_non_null(strstr(err.message, "'metrics.classes.receive' has a bad regular expression 're:('"));
    st = run_spec(&c, "tracebook: 1\nmetrics: {classes: {comm_stream_rule: some}}\n"
                      "reports:\n  - id: r\n    sql: SELECT * FROM step_trace_time\n", &err);
    assert_int_equal(st, TB_ERR_PARSE);
    assert_string_equal(err.message, "'metrics.classes.comm_stream_rule' must be one of: all, any, none; got 'some'");
    st = run_spec(&c, "tracebook: 1\nmetrics: {classes: {compute_exclude: [1]}}\n"
                      "reports:\n  - id: r\n    sql: SELECT * FROM overlap_lanes\n", &err);
    assert_int_equal(st, TB_ERR_PARSE);
    assert_string_equal(err.message, "'metrics.classes.compute_exclude' item 1 must be a string pattern, got '1'");
}

/* The lanes, as worked out at the top. */
static void overlap_lanes_exact(void **state)
{
    (void)state;
    assert_query("SELECT rankId, deviceId, type, startNs, endNs FROM overlap_lanes "
                 "ORDER BY rankId, deviceId, type, startNs", 0,
                 "rankId|deviceId|type|startNs|endNs\n"
                 "0|0|Communication|1420|1600\n"
                 "0|0|Communication|1700|1800\n"
                 "0|0|Communication|2350|2900\n"
                 "0|0|Communication(Not Overlapped)|1450|1500\n"
                 "0|0|Communication(Not Overlapped)|1550|1600\n"
                 "0|0|Communication(Not Overlapped)|1700|1800\n"
                 "0|0|Communication(Not Overlapped)|2400|2900\n"
                 "0|0|Computing|500|600\n"
                 "0|0|Computing|1200|1450\n"
                 "0|0|Computing|1500|1550\n"
                 "0|0|Computing|1850|2100\n"
                 "0|0|Computing|2300|2400\n"
                 "0|0|Computing|2950|3050\n"
                 "0|0|Free|600|1200\n"
                 "0|0|Free|1600|1700\n"
                 "0|0|Free|1800|1850\n"
                 "0|0|Free|2100|2300\n"
                 "0|0|Free|2900|2950\n"
                 "1|1|Communication|240|400\n"
                 "1|1|Communication(Not Overlapped)|250|400\n"
                 "1|1|Computing|100|250\n"
                 "1|1|Computing|450|500\n"
                 "1|1|Free|0|100\n"
                 "1|1|Free|400|450\n");
}

/*
 * Only rank 0 has input lanes: its Computing lane is 840 given, 850
 * computed (+10, 10 / 840 = 1.19047619047619 %); the other lanes agree.
 */
static void overlap_consistency_exact(void **state)
{
    (void)state;
    assert_query("SELECT * FROM overlap_consistency", 0,
                 "rankId|deviceId|type|givenNs|computedNs|diffNs|diffPct\n"
                 "0|0|Computing|840|850|10|1.19047619047619\n"
                 "0|0|Communication|830|830|0|0\n"
                 "0|0|Communication(Not Overlapped)|700|700|0|0\n"
                 "0|0|Free|1000|1000|0|0\n");
}

/*
 * A step-mode window on step 2: the window keeps STEP_TIME step 2, the tasks
 * its host range launched (EW, F, G), the communication ops starting in
 * [end of step 1 = 2100, 3050) (receive2, send) and the launching calls;
 * rank 1 has no steps and so no rows. Step 2 comes out as without a window.
 */
/* A build given no options (metric_ctx.opt NULL) uses the defaults: the torch_npu policy. */
static void build_without_options(void **state)
{
    (void)state;
    sqlite3 *db = NULL;
    assert_int_equal(SQLITE_OK, sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL));
    const metric_table *t = metrics_find("STEP_TRACE_TIME");
    assert_non_null(t);
    metric_ctx m = {.db = db};
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(TB_OK, t->build(&m, &err));
    sqlite3_stmt *st = NULL;
    assert_int_equal(SQLITE_OK, sqlite3_prepare_v2(db, "SELECT count(*), min(policy), max(policy), sum(free) "
                                                       "FROM temp.step_trace_time", -1, &st, NULL));
    assert_int_equal(SQLITE_ROW, sqlite3_step(st));
    assert_int_equal(3, sqlite3_column_int(st, 0));
    assert_string_equal("torch_npu", (const char *)sqlite3_column_text(st, 1));
    assert_string_equal("torch_npu", (const char *)sqlite3_column_text(st, 2));
    assert_int_equal(150 + 50 + 50, sqlite3_column_int(st, 3)); /* the Free of the header's worked rows */
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void step_window(void **state)
{
    (void)state;
    assert_query(ALL, 2,
                 HEADER
                 "0|0|2|2200|3050|2000|200|500|50|550|50|200|550|0|300|torch_npu\n");
    assert_query(ALL, 1,
                 HEADER
                 "0|0|1|1200|2100|1000|550|200|80|280|150|800|100|100|200|torch_npu\n");
}

/*
 * Two specs in one run with different policies: the runner rebuilds the
 * table for the second. Stage sums: torch_npu 800 + 200 + 400 = 1400,
 * mindspore 650 + 100 + 400 = 1150.
 */
static void rebuild_on_other_options(void **state)
{
    (void)state;
    const char *y1 = "tracebook: 1\n"
                     "reports:\n"
                     "  - id: a\n"
                     "    sql: SELECT policy, sum(stage) AS s FROM step_trace_time GROUP BY policy\n";
    const char *y2 = "tracebook: 1\n"
                     "metrics: {step_trace: {policy: mindspore}}\n"
                     "reports:\n"
                     "  - id: b\n"
                     "    sql: SELECT policy, sum(stage) AS s FROM step_trace_time GROUP BY policy\n";
    tb_spec *s1 = NULL, *s2 = NULL;
    tb_error err;
    capture c;
    cap_init(&c);
    assert_int_equal(tb_spec_load_mem("a.yaml", y1, strlen(y1), &s1, NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_spec_load_mem("b.yaml", y2, strlen(y2), &s2, NULL, NULL, &err), TB_OK);
    const tb_spec *specs[] = {s1, s2};
    tb_run_options o = {.db = cap_db(dbpath), .db_name = dbpath, .unit = TB_UNIT_NS, .specs = specs, .n_specs = 2,
                        .formats = TB_OUT_CSV, .open_sink = cap_open, .sink_ctx = &c};
    tb_run_result res;
    tb_status st = tb_report_run(&o, &res, &err);
    tb_spec_free(s1);
    tb_spec_free(s2);
    assert_int_equal(st, TB_OK);
    assert_string_equal(c.text, "policy|s\ntorch_npu|1400\npolicy|s\nmindspore|1150\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(torch_npu_default),
        cmocka_unit_test(mindspore_policy),
        cmocka_unit_test(msprof_analyze_policy),
        cmocka_unit_test(torch_npu_text_policy),
        cmocka_unit_test(class_options),
        cmocka_unit_test(class_option_errors),
        cmocka_unit_test(overlap_lanes_exact),
        cmocka_unit_test(overlap_consistency_exact),
        cmocka_unit_test(build_without_options),
        cmocka_unit_test(step_window),
        cmocka_unit_test(rebuild_on_other_options),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
