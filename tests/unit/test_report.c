/* SPDX-License-Identifier: MIT */
/*
 * test_report.c - the report runner: iteration windows (graph and step
 * mode) on a hand-built DB with known boundaries, the SQL sandbox, typed
 * column aliases and --timeunit, parameters, the rank filter; the names
 * of a split CSV's parts checked against the inputs.
 *
 * The DB is made from the engine's own schema with a few rows whose window
 * membership is worked out by hand in the comments below; every window test
 * checks the exact set of rows a view returns.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <sys/stat.h>

#include "testutil.h"
#include "capture.h"
#include "query/file_ids.h"
#include "tracebook/tracebook.h"


static char dbpath[PATH_MAX + 16];

/*
 * Graph mode, rank 0: model 1 runs iterations (indexId) 1-3 over [100,200),
 * [200,300), [300,400); model 2 runs once over [400,450).
 * Tasks 1-7 start at 110, 190, 200, 260, 310, 399, 410.
 * Host calls (CANN_API, connection ids 101-104): [50,120), [150,210),
 * [195,205), [305,500).
 *
 * Step mode, rank 0: steps 1-3 over host [1000,2000], [2000,3000],
 * [3000,4000]. Tasks:
 *   10: launched at 1100 (conn 11), runs [1500,1600)
 *   11: launched at 1900 (conn 12), runs [2100,2300)
 *   12: launched at 2500 (conn 13), runs [2600,2700)
 *   13: no launching call, runs [2650,2660)
 *   14: launched at 3500 (conn 14), runs [3600,4100)
 * Device ranges: step 1 [1500, max(2300, 2000)] = [1500,2300], step 2
 * [2600, max(2700, 3000)] = [2600,3000], step 3 [3600, max(4100, 4000)] =
 * [3600,4100].
 */
static const char rows_sql[] =
    "INSERT INTO STRING_IDS VALUES (1, 'k'), (2, 'AI_CORE'), (3, 'MatMul');"
    "INSERT INTO TB_ITERATION (rankId, deviceId, modelId, indexId, iterId, startNs, endNs) VALUES"
    "  (0, 0, 1, 1, 1, 100, 200), (0, 0, 1, 2, 2, 200, 300),"
    "  (0, 0, 1, 3, 3, 300, 400), (0, 0, 2, 1, 4, 400, 450);"
    "INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, taskType, rankId) VALUES"
    "  (110, 115, 0, NULL, 1, 2, 0), (190, 195, 0, NULL, 2, 2, 0), (200, 205, 0, NULL, 3, 2, 0),"
    "  (260, 265, 0, NULL, 4, 2, 0), (310, 315, 0, NULL, 5, 2, 0), (399, 402, 0, NULL, 6, 2, 0),"
    "  (410, 415, 0, NULL, 7, 2, 0),"
    "  (1500, 1600, 0, 11, 10, 2, 0), (2100, 2300, 0, 12, 11, 2, 0), (2600, 2700, 0, 13, 12, 2, 0),"
    "  (2650, 2660, 0, NULL, 13, 2, 0), (3600, 4100, 0, 14, 14, 2, 0);"
    "INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, opId, deviceId, rankId) VALUES"
    "  (1, 2620, 2630, 12, 1, 0, 0);"
    "INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, opType, rankId)"
    "  SELECT 1, globalTaskId, 3, 0 FROM TASK;"
    "INSERT INTO CANN_API (startNs, endNs, type, globalTid, connectionId, name, rankId) VALUES"
    "  (50, 120, 5000, 1, 101, 1, 0), (150, 210, 5000, 1, 102, 1, 0), (195, 205, 5000, 1, 103, 1, 0),"
    "  (305, 500, 5000, 1, 104, 1, 0),"
    "  (1100, 1110, 5000, 1, 11, 1, 0), (1900, 1910, 5000, 1, 12, 1, 0), (2500, 2510, 5000, 1, 13, 1, 0),"
    "  (3500, 3510, 5000, 1, 14, 1, 0);"
    "INSERT INTO STEP_TIME VALUES (1, 1000, 2000, 0), (2, 2000, 3000, 0), (3, 3000, 4000, 0);";

static int setup(void **state)
{
    (void)state;
    if (tu_make_tmpdir("test_report") != 0)
        return -1;
    snprintf(dbpath, sizeof dbpath, "%s/w.db", tmpdir);
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
    c->int_tag = 1;
    c->quote_text = 1;
    cap_reset(c);
}

/* Runs sql with a window; returns the status, the text in c. */
static tb_status query(capture *c, const char *sql, int64_t model, int64_t iter, int64_t count, tb_error *err)
{
    tb_run_options o = {.db = cap_db(dbpath), .db_name = dbpath, .unit = TB_UNIT_NS};
    if (model >= 0)
        o.window = (tb_window){.set = 1, .model_id = model, .iteration_id = iter, .iteration_count = count};
    cap_init(c);
    uint64_t rows = 0;
    tb_error_clear(err);
    return tb_query_run(&o, sql, &c->vt, &rows, err);
}

#define TASKS "SELECT globalTaskId AS id FROM kernel ORDER BY id"

static void assert_rows(const char *sql, int64_t model, int64_t iter, int64_t count, const char *want)
{
    capture c;
    tb_error err;
    tb_status st = query(&c, sql, model, iter, count, &err);
    if (st != TB_OK)
        print_error("query failed: %s\n", err.message);
    assert_int_equal(st, TB_OK);
    assert_string_equal(c.text, want);
}

static void no_window_sees_everything(void **state)
{
    (void)state;
    assert_rows("SELECT count(*) AS n FROM kernel", -1, 0, 0, "n\n12e-0\n");
    assert_rows("SELECT count(*) AS n FROM CANN_API", -1, 0, 0, "n\n8e-0\n");
}

static void graph_mode_one_iteration(void **state)
{
    (void)state;
    /* iteration 2 of model 1: [end of iteration 1 = 200, 300) */
    assert_rows(TASKS, 1, 2, 1, "id\n3e-0\n4e-0\n");
    /* the raw table honours the window as the view does */
    assert_rows("SELECT globalTaskId AS id FROM TASK ORDER BY 1", 1, 2, 1, "id\n3e-0\n4e-0\n");
    /* host rule: [150,210) spans the start, [195,205) starts inside */
    assert_rows("SELECT connectionId AS c FROM CANN_API ORDER BY 1", 1, 2, 1, "c\n102e-0\n103e-0\n");
    /* per-task tables follow TASK */
    assert_rows("SELECT count(*) AS n FROM COMPUTE_TASK_INFO", 1, 2, 1, "n\n2e-0\n");
    assert_rows("SELECT indexId AS i FROM TB_ITERATION", 1, 2, 1, "i\n2e-0\n");
}

static void graph_mode_first_and_several(void **state)
{
    (void)state;
    /* no iteration ended before iteration 1: the window starts at 0 */
    assert_rows(TASKS, 1, 1, 1, "id\n1e-0\n2e-0\n");
    assert_rows("SELECT connectionId AS c FROM CANN_API ORDER BY 1", 1, 1, 1, "c\n101e-0\n102e-0\n103e-0\n");
    /* iterations 2-3: [200, 400) */
    assert_rows(TASKS, 1, 2, 2, "id\n3e-0\n4e-0\n5e-0\n6e-0\n");
    /* model 2's only run: [end of model 1's iteration 3 = 400, 450) */
    assert_rows(TASKS, 2, 1, 1, "id\n7e-0\n");
}

static void step_mode_membership(void **state)
{
    (void)state;
    /* step 2: the device range is [2600, 3000): task 12 launched inside
     * host [2000,3000], and the unlinked task 13 starting inside the range */
    assert_rows(TASKS, 4294967295LL, 2, 1, "id\n12e-0\n13e-0\n");
    assert_rows("SELECT id FROM step", 4294967295LL, 2, 1, "id\n2e-0\n");
    /* task 11 starts after step 1's host end but was launched inside it;
     * the unlinked graph-mode tasks 1-7 start before step 1's START (1500) */
    assert_rows(TASKS, 4294967295LL, 1, 1, "id\n10e-0\n11e-0\n");
    assert_rows(TASKS, 4294967295LL, 2, 2, "id\n12e-0\n13e-0\n14e-0\n");
    /* the communication op launched in step 1 (call at 1900) runs inside
     * step 2's device range: it is step 1's */
    assert_rows("SELECT opId FROM COMMUNICATION_OP", 4294967295LL, 1, 1, "opId\n1e-0\n");
    assert_rows("SELECT count(*) AS n FROM comm_op", 4294967295LL, 2, 1, "n\n0e-0\n");
    /* host rows: the host range of the steps, [2000, 3000] for step 2 */
    assert_rows("SELECT connectionId AS c FROM CANN_API ORDER BY 1", 4294967295LL, 2, 1, "c\n13e-0\n");
}

static void window_errors(void **state)
{
    (void)state;
    capture c;
    tb_error err;
    assert_int_equal(query(&c, TASKS, 9, 1, 1, &err), TB_ERR_USAGE);
    assert_string_equal(err.message,
                        "--model-id 9: no such model; the data has: model 1 (iterations 1-3), model 2 (iterations 1-1), "
                        "step mode, model 4294967295 (steps 1-3)");
    assert_int_equal(query(&c, TASKS, 1, 3, 2, &err), TB_ERR_USAGE);
    assert_string_equal(err.message, "--iteration-id 3 --iteration-count 2: model 1 has iterations 1-3");
    assert_int_equal(query(&c, TASKS, 4294967295LL, 0, 1, &err), TB_ERR_USAGE);
    assert_string_equal(err.message, "--iteration-id 0 --iteration-count 1: step mode has steps 1-3");
    assert_int_equal(query(&c, TASKS, 1, 1, 0, &err), TB_ERR_USAGE);
    assert_string_equal(err.message, "--iteration-count must be at least 1, got 0");
}

/* The DB file's bytes, to show that nothing changed it. */
static char *file_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *p = malloc(1 << 20);
    *n = p ? fread(p, 1, 1 << 20, f) : 0;
    fclose(f);
    return p;
}

static void sandbox_refuses_writes(void **state)
{
    (void)state;
    static const struct { const char *sql, *msg; } cases[] = {
        {"INSERT INTO STRING_IDS VALUES (99, 'x')", "query: INSERT is not allowed: report SQL is read-only"},
        {"DELETE FROM TASK", "query: DELETE is not allowed: report SQL is read-only"},
        {"DROP TABLE TASK", "query: DROP TABLE is not allowed: report SQL is read-only"},
        {"CREATE TEMP TABLE t(a)", "query: CREATE TABLE is not allowed: report SQL is read-only"},
        {"ATTACH DATABASE 'x.db' AS x", "query: ATTACH is not allowed: report SQL is read-only"},
        {"PRAGMA writable_schema = 1", "query: PRAGMA writable_schema = 1 is not allowed: report SQL is read-only"},
        {"PRAGMA journal_mode", "query: PRAGMA journal_mode is not allowed: report SQL is read-only"},
        {"SELECT load_extension('x')", "query: the function load_extension() is not allowed in report SQL"},
        /* the allow-list: a leak of a library address and a pointer install */
        {"SELECT hex(fts3_tokenizer('simple'))", "query: the function fts3_tokenizer() is not allowed in report SQL"},
        {"SELECT fts3_tokenizer('simple', x'0000000000000000')",
         "query: the function fts3_tokenizer() is not allowed in report SQL"},
        {"SELECT sqlite_compileoption_used('ENABLE_FTS3')",
         "query: the function sqlite_compileoption_used() is not allowed in report SQL"},
        {"SELECT count(*) FROM TASK WHERE name = fts5_source_id()",
         "query: the function fts5_source_id() is not allowed in report SQL"},
        {"SELECT 1; DROP TABLE TASK", "query: the SQL holds more than one statement"},
    };
    size_t n0 = 0, n1 = 0;
    char *before = file_bytes(dbpath, &n0);
    assert_non_null(before);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        capture c;
        tb_error err;
        tb_status st = query(&c, cases[i].sql, -1, 0, 0, &err);
        assert_int_not_equal(st, TB_OK);
        assert_string_equal(err.message, cases[i].msg);
    }
    /* SQLite's own functions and tracebook's are on the list */
    assert_rows("SELECT abs(-2) AS a, json_extract('{\"x\": 3}', '$.x') AS j, '{\"y\": 4}' ->> '$.y' AS k,"
                " printf('%d', 5) AS p, median(v) AS m, round(sqrt(16)) AS s, row_number() OVER () AS r"
                " FROM (SELECT 6 AS v)",
                -1, 0, 0, "a|j|k|p|m|s|r\n2e-0|3e-0|4e-0|'5'|6|4|1e-0\n");
    /* a read-only PRAGMA is fine */
    assert_rows("SELECT count(*) > 5 AS ok FROM pragma_table_info('TASK')", -1, 0, 0, "ok\n1e-0\n");
    char *after = file_bytes(dbpath, &n1);
    assert_non_null(after);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
}

static void step_budget_stops_endless_query(void **state)
{
    (void)state;
    tb_run_options o = {.db = cap_db(dbpath), .db_name = dbpath, .max_steps = 2000000};
    capture c;
    cap_init(&c);
    tb_error err;
    tb_error_clear(&err);
    uint64_t rows = 0;
    tb_status st = tb_query_run(&o,
                                "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
                                "SELECT count(*) AS c FROM n",
                                &c.vt, &rows, &err);
    assert_int_equal(st, TB_ERR_USAGE);
    assert_string_equal(err.message, "query: stopped after 2000000 SQLite steps (the step budget); "
                                     "a query that never ends? raise the budget with --max-steps");
}

static void typed_columns_and_units(void **state)
{
    (void)state;
    static const char sql[] = "SELECT 1234 AS \"D:dur_ns\", 1500.5 AS \"R:ts_ns\", 12.5 AS \"P:ratio_%\", "
                              "7 AS \"_hidden\", 2048 AS \"M:mem_B\", 'a:b' AS \"Plain:x\"";
    tb_run_options o = {.db = cap_db(dbpath), .db_name = dbpath, .unit = TB_UNIT_US};
    capture c;
    cap_init(&c);
    tb_error err;
    uint64_t rows = 0;
    assert_int_equal(tb_query_run(&o, sql, &c.vt, &rows, &err), TB_OK);
    /* a real time is rounded to the ns: 1500.5 ns is 1501 ns, 1.501 us, written exactly */
    assert_string_equal(c.text, "D(us)|R(us)|P(%)|M(B)|Plain:x\n1234e-3|1501e-3|12.5|2048e-0|'a:b'\n");
    assert_int_equal(c.types[0], TB_COL_DUR_NS);
    assert_int_equal(c.types[1], TB_COL_TS_NS);
    assert_int_equal(c.types[4], TB_COL_PLAIN);
    o.unit = TB_UNIT_S;
    cap_init(&c);
    assert_int_equal(tb_query_run(&o, sql, &c.vt, &rows, &err), TB_OK);
    assert_string_equal(c.text, "D(s)|R(s)|P(%)|M(B)|Plain:x\n1234e-9|1501e-9|12.5|2048e-0|'a:b'\n");
}

static void params_are_bound(void **state)
{
    (void)state;
    const char *kv[] = {"who=Robert'); DROP TABLE TASK;--"};
    tb_run_options o = {.db = cap_db(dbpath), .db_name = dbpath, .params = kv, .n_params = 1};
    capture c;
    cap_init(&c);
    tb_error err;
    uint64_t rows = 0;
    assert_int_equal(tb_query_run(&o, "SELECT :who AS w", &c.vt, &rows, &err), TB_OK);
    assert_string_equal(c.text, "w\n'Robert'); DROP TABLE TASK;--'\n");
    cap_init(&c);
    o.n_params = 0;
    assert_int_equal(tb_query_run(&o, "SELECT :who AS w", &c.vt, &rows, &err), TB_ERR_USAGE);
    assert_string_equal(err.message, "query: SQL parameter ':who' is not declared under params");
    assert_int_equal(tb_query_run(&o, "SELECT ? AS w", &c.vt, &rows, &err), TB_ERR_USAGE);
    assert_string_equal(err.message, "query: positional parameter '?' in SQL; use a named one (:name)");
}

/* Rank filter (tb_window.rank_set): the same DB with a second rank, a copy
 * of rank 0's graph-mode rows (task ids + 100, iterations shifted by 1000). */
static const char rank1_sql[] =
    "INSERT INTO TB_ITERATION (rankId, deviceId, modelId, indexId, iterId, startNs, endNs)"
    "  SELECT 1, deviceId, modelId, indexId, iterId, startNs + 1000, endNs + 1000"
    "  FROM TB_ITERATION WHERE rankId = 0 AND startNs < 1000;"
    "INSERT INTO TASK (startNs, endNs, deviceId, globalTaskId, taskType, rankId)"
    "  SELECT startNs + 1000, endNs + 1000, deviceId, globalTaskId + 100, taskType, 1 FROM TASK"
    "  WHERE rankId = 0 AND globalTaskId < 10;"
    "INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, opType, rankId)"
    "  SELECT 1, globalTaskId, 3, 1 FROM TASK WHERE rankId = 1;";

static void rank_rows(const char *path, const char *sql, int rank, int64_t model, int64_t iter, const char *want)
{
    tb_run_options o = {.db = cap_db(path), .db_name = path, .unit = TB_UNIT_NS};
    o.window = (tb_window){.set = model >= 0, .model_id = model, .iteration_id = iter, .iteration_count = 1,
                           .rank_set = rank >= 0, .rank = rank};
    capture c;
    tb_error err;
    cap_init(&c);
    uint64_t rows = 0;
    tb_error_clear(&err);
    tb_status st = tb_query_run(&o, sql, &c.vt, &rows, &err);
    if (st != TB_OK)
        print_error("query failed: %s\n", err.message);
    assert_int_equal(st, TB_OK);
    assert_string_equal(c.text, want);
}

static void rank_filter(void **state)
{
    (void)state;
    char path[PATH_MAX + 16], sql[sizeof rows_sql + sizeof rank1_sql];
    snprintf(path, sizeof path, "%s/ranks.db", tmpdir);
    snprintf(sql, sizeof sql, "%s%s", rows_sql, rank1_sql);
    assert_int_equal(tu_unified_db(path, sql), 0);
    /* no filter: both ranks */
    rank_rows(path, "SELECT count(*) AS n FROM kernel", -1, -1, 0, "n\n19e-0\n");
    /* one rank: its rows only, in tables and views; shared tables whole */
    rank_rows(path, "SELECT count(*) AS n FROM kernel", 1, -1, 0, "n\n7e-0\n");
    rank_rows(path, "SELECT min(globalTaskId) AS lo FROM TASK", 1, -1, 0, "lo\n101e-0\n");
    rank_rows(path, "SELECT count(*) AS n FROM COMPUTE_TASK_INFO", 0, -1, 0, "n\n12e-0\n");
    rank_rows(path, "SELECT count(*) AS n FROM TB_ITERATION", 1, -1, 0, "n\n4e-0\n");
    rank_rows(path, "SELECT count(*) AS n FROM STRING_IDS", 1, -1, 0, "n\n3e-0\n");
    /* with a window: the window's rows of that rank (iteration 2 of model 1) */
    rank_rows(path, TASKS, 0, 1, 2, "id\n3e-0\n4e-0\n");
    rank_rows(path, TASKS, 1, 1, 2, "id\n103e-0\n104e-0\n");
    rank_rows(path, TASKS, -1, 1, 2, "id\n3e-0\n4e-0\n103e-0\n104e-0\n");
}

/* The names a split CSV may take, checked against the inputs (file_ids_check_parts). */
static void split_parts_of_inputs(void **state)
{
    (void)state;
    static const char *const names[] = {
        "top_2.csv", "top_x.csv", "top_2.json", "top_.csv", "top_12.csv.gz", "op_summary_slice_3_20240101.csv",
        "op_summary_slice_3_20240102.csv", "op_summary_slice__20240101.csv",
    };
    char dir[PATH_MAX], path[PATH_MAX];
    make_dirs("parts", dir, sizeof dir);
    file_ids ids = {0};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "parts/%s", names[i]);
        write_file(path, sizeof path, rel, "x\n", 2);
        assert_int_equal(file_ids_walk(&ids, path, 0), 0);
    }
    tb_error err;
    /* <base>_<k>.csv: top_2.csv only, of the files above */
    tb_error_clear(&err);
    assert_int_equal(file_ids_check_parts(&ids, dir, "top", 0, &err), TB_ERR_USAGE);
    assert_non_null(strstr(err.file, "/parts/top_2.csv"));
    assert_string_equal(err.message, "refusing to replace an input file: write the output elsewhere (-o)");
    /* msprof's slice_<k>_ after "op_summary_" (11 bytes): the same timestamp only */
    tb_error_clear(&err);
    assert_int_equal(file_ids_check_parts(&ids, dir, "op_summary_20240101", 11, &err), TB_ERR_USAGE);
    assert_non_null(strstr(err.file, "/parts/op_summary_slice_3_20240101.csv"));
    /* nothing else is a part: another base, another timestamp, no number */
    assert_int_equal(file_ids_check_parts(&ids, dir, "to", 0, &err), TB_OK);
    assert_int_equal(file_ids_check_parts(&ids, dir, "top_2", 0, &err), TB_OK);
    assert_int_equal(file_ids_check_parts(&ids, dir, "op_summary_20240103", 11, &err), TB_OK);
    /* a part name that is no input: the files are there, not in ids */
    file_ids none = {0};
    assert_int_equal(file_ids_walk(&none, names[1], 0), 0);
    assert_int_equal(file_ids_check_parts(&none, dir, "top", 0, &err), TB_OK);
    file_ids_free(&none);
    file_ids_free(&ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_window_sees_everything),
        cmocka_unit_test(graph_mode_one_iteration),
        cmocka_unit_test(graph_mode_first_and_several),
        cmocka_unit_test(step_mode_membership),
        cmocka_unit_test(window_errors),
        cmocka_unit_test(sandbox_refuses_writes),
        cmocka_unit_test(step_budget_stops_endless_query),
        cmocka_unit_test(typed_columns_and_units),
        cmocka_unit_test(params_are_bound),
        cmocka_unit_test(rank_filter),
        cmocka_unit_test(split_parts_of_inputs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
