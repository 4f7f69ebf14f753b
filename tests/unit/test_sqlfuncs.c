/* SPDX-License-Identifier: MIT */
/*
 * test_sqlfuncs.c - unit tests for the report SQL functions (engine/report/sqlfuncs.c).
 *
 * Each test opens an in-memory SQLite DB, registers the functions and checks
 * results against answers worked out by hand (or by numpy for the
 * percentiles: np.percentile(range(1, 11), 90) = 9.1): exact doubles where the
 * arithmetic is exact, exact integers for the interval functions, NULL
 * handling, GROUP BY, DISTINCT, and the exact error messages for a bad or
 * changing p. The union aggregates are also checked on 100000 random rows,
 * in order and shuffled, against iv_merge, so their on-the-fly merging and
 * compaction paths agree with the interval module. pyset_array is checked
 * against the orders python3 gives for the same adds. Runs with the exit-code
 * protocol: main returns the number of failed tests.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "metrics/interval.h"
#include "query/sqlfuncs.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */

static int setup(void **state)
{
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        return -1;
    if (sqlfuncs_register(db) != SQLITE_OK) {
        sqlite3_close(db);
        return -1;
    }
    *state = db;
    return 0;
}

static int teardown(void **state)
{
    return sqlite3_close(*state) == SQLITE_OK ? 0 : -1;
}

static void exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        print_error("%s: %s\n", sql, msg ? msg : "?");
        sqlite3_free(msg);
        fail();
    }
}

/* Prepares sql, steps to its one row; the caller reads column 0 and finalizes. */
static sqlite3_stmt *row(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("bad SQL %s: %s", sql, sqlite3_errmsg(db));
    if (sqlite3_step(st) != SQLITE_ROW)
        fail_msg("no row from %s: %s", sql, sqlite3_errmsg(db));
    return st;
}

/* Fails unless sql gives exactly the double want (compared bit for bit). */
#define assert_qd(db, sql, want)                                                          \
    do {                                                                                  \
        sqlite3_stmt *st_ = row(db, sql);                                                 \
        if (sqlite3_column_type(st_, 0) != SQLITE_FLOAT)                                  \
            fail_msg("%s: expected a REAL, got type %d", sql, sqlite3_column_type(st_, 0)); \
        double g_ = sqlite3_column_double(st_, 0), w_ = (want);                           \
        sqlite3_finalize(st_);                                                            \
        if (g_ != w_)                                                                     \
            fail_msg("%s: expected %.17g, got %.17g", sql, w_, g_);                       \
    } while (0)

/* Fails unless sql gives exactly the integer want (an INTEGER value). */
#define assert_qi(db, sql, want)                                                          \
    do {                                                                                  \
        sqlite3_stmt *st_ = row(db, sql);                                                 \
        if (sqlite3_column_type(st_, 0) != SQLITE_INTEGER)                                \
            fail_msg("%s: expected an INTEGER, got type %d", sql, sqlite3_column_type(st_, 0)); \
        int64_t g_ = sqlite3_column_int64(st_, 0), w_ = (want);                           \
        sqlite3_finalize(st_);                                                            \
        if (g_ != w_)                                                                     \
            fail_msg("%s: expected %" PRId64 ", got %" PRId64, sql, w_, g_);              \
    } while (0)

/* Fails unless sql gives NULL. */
static void assert_qnull(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = row(db, sql);
    int t = sqlite3_column_type(st, 0);
    sqlite3_finalize(st);
    if (t != SQLITE_NULL)
        fail_msg("%s: expected NULL, got type %d", sql, t);
}

/* Fails unless running sql fails with exactly the message want. */
static void assert_qerr(sqlite3 *db, const char *sql, const char *want)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("bad SQL %s: %s", sql, sqlite3_errmsg(db));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        ;
    if (rc != SQLITE_ERROR)
        fail_msg("%s: expected an error, got %d", sql, rc);
    if (strcmp(sqlite3_errmsg(db), want) != 0)
        fail_msg("%s: expected \"%s\", got \"%s\"", sql, want, sqlite3_errmsg(db));
    sqlite3_finalize(st);
}

/* A table t(g, x) of the values given as SQL literal rows, e.g. "(1,2),(1,NULL)". */
static void table(sqlite3 *db, const char *rows)
{
    char sql[4096];
    exec(db, "DROP TABLE IF EXISTS t; CREATE TABLE t(g, x)");
    int w = snprintf(sql, sizeof sql, "INSERT INTO t VALUES %s", rows);
    assert_true(w > 0 && (size_t)w < sizeof sql);
    exec(db, sql);
}

/* ---- statistics --------------------------------------------------------- */

static void test_median(void **state)
{
    sqlite3 *db = *state;
    table(db, "(1,1),(1,2),(1,3),(1,4),(2,5),(2,NULL),(2,1),(2,9),(3,NULL)");
    assert_qd(db, "SELECT median(x) FROM t WHERE g = 1", 2.5);
    assert_qd(db, "SELECT median(x) FROM t WHERE g = 2", 5.0);
    assert_qnull(db, "SELECT median(x) FROM t WHERE g = 3");  /* only NULL */
    assert_qnull(db, "SELECT median(x) FROM t WHERE g = 99"); /* no row */
    assert_qd(db, "SELECT median(x) FROM t WHERE g IN (1, 2)", 3.0); /* 1 1 2 3 4 5 9 */
    assert_qd(db, "SELECT median(column1) FROM (VALUES (7))", 7.0);
    assert_qd(db, "SELECT median(column1) FROM (VALUES (-1.5), (1e300), (2))", 2.0);
    /* DISTINCT, numeric text read as avg() reads it. */
    assert_qd(db, "SELECT median(DISTINCT column1) FROM (VALUES (1),(1),(1),(4))", 2.5);
    assert_qd(db, "SELECT median(column1) FROM (VALUES ('3'),('5'))", 4.0);
    assert_qd(db, "SELECT median(column1) FROM (VALUES ('abc'),(4))", 2.0);
    /* GROUP BY gives one result per group. */
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT g, median(x) FROM t GROUP BY g ORDER BY g", -1, &st, NULL),
                     SQLITE_OK);
    double want[] = {2.5, 5.0};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(st, 0), i + 1);
        if (i < 2)
            assert_true(sqlite3_column_double(st, 1) == want[i]);
        else
            assert_int_equal(sqlite3_column_type(st, 1), SQLITE_NULL);
    }
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
}

static void test_percentile(void **state)
{
    sqlite3 *db = *state;
    exec(db, "DROP TABLE IF EXISTS ten; CREATE TABLE ten(x);"
             "INSERT INTO ten VALUES (10),(3),(1),(2),(4),(5),(7),(6),(9),(8),(NULL)");
    /* numpy: np.percentile(range(1, 11), q) */
    assert_qd(db, "SELECT percentile(x, 90) FROM ten", 9.1);
    assert_qd(db, "SELECT percentile(x, 0) FROM ten", 1.0);
    assert_qd(db, "SELECT percentile(x, 100) FROM ten", 10.0);
    assert_qd(db, "SELECT percentile(x, 50) FROM ten", 5.5);
    assert_qd(db, "SELECT percentile(x, 25) FROM ten", 3.25);
    assert_qd(db, "SELECT percentile(x, 75) FROM ten", 7.75);
    assert_qd(db, "SELECT percentile(x, 12.5) FROM ten", 2.125);
    assert_qd(db, "SELECT percentile(x, '90') FROM ten", 9.1); /* numeric text */
    assert_qd(db, "SELECT percentile(x, 90.0) FROM ten", 9.1);
    assert_qd(db, "SELECT lower_quartile(x) FROM ten", 3.25);
    assert_qd(db, "SELECT upper_quartile(x) FROM ten", 7.75);
    assert_qd(db, "SELECT median(x) FROM ten", 5.5);
    assert_qd(db, "SELECT percentile(column1, 30) FROM (VALUES (5))", 5.0);
    assert_qnull(db, "SELECT percentile(x, 30) FROM ten WHERE x IS NULL");
    assert_qnull(db, "SELECT lower_quartile(x) FROM ten WHERE 0");
    assert_qnull(db, "SELECT upper_quartile(x) FROM ten WHERE 0");
    /* p from a column, the same in every row of the group. */
    assert_qd(db, "SELECT percentile(x, 90) FROM (SELECT x, 90 AS p FROM ten)", 9.1);
}

static void test_percentile_errors(void **state)
{
    sqlite3 *db = *state;
    const char *range = "percentile: p must be between 0 and 100";
    assert_qerr(db, "SELECT percentile(column1, 101) FROM (VALUES (1),(2))", range);
    assert_qerr(db, "SELECT percentile(column1, -1) FROM (VALUES (1),(2))", range);
    assert_qerr(db, "SELECT percentile(column1, 100.0000001) FROM (VALUES (1))", range);
    assert_qerr(db, "SELECT percentile(column1, 'abc') FROM (VALUES (1),(2))", range);
    assert_qerr(db, "SELECT percentile(column1, NULL) FROM (VALUES (1),(2))", range);
    assert_qerr(db, "SELECT percentile(column1, x'00') FROM (VALUES (1),(2))", range);
    /* Checked on rows whose x is NULL too. */
    assert_qerr(db, "SELECT percentile(column1, 200) FROM (VALUES (NULL))", range);
    /* p changing within a group, after values were collected (freed in xFinal). */
    assert_qerr(db, "SELECT percentile(column1, column2) FROM (VALUES (1, 10), (2, 10), (3, 20))",
                "percentile: p must be the same for every row of a group");
    /* The connection still works. */
    assert_qd(db, "SELECT percentile(column1, 50) FROM (VALUES (1),(2))", 1.5);
}

static void test_variance(void **state)
{
    sqlite3 *db = *state;
    table(db, "(1,2),(1,4),(1,4),(1,4),(1,5),(1,5),(1,7),(1,9),(1,NULL),"
              "(2,3),(2,NULL),(3,NULL)");
    assert_qd(db, "SELECT stdev(x) FROM t WHERE g = 1", 2.138089935299395);
    /* squares past DBL_MAX: the standard deviation still fits a double */
    assert_qd(db, "SELECT stdev(x) / 1e160 FROM (SELECT 1e160 AS x UNION ALL SELECT 1e160 UNION ALL SELECT 3e160)",
              1.1547005383792515);
    assert_qd(db, "SELECT stdev_pop(x) / 1e160 FROM (SELECT 1e160 AS x UNION ALL SELECT 1e160 UNION ALL SELECT 3e160)",
              0.9428090415820634);
    assert_qi(db, "SELECT variance(x) > 1e308 FROM (SELECT 1e160 AS x UNION ALL SELECT 3e160)", 1);
    assert_qd(db, "SELECT variance(x) FROM t WHERE g = 1", 4.571428571428571);
    assert_qd(db, "SELECT var_pop(x) FROM t WHERE g = 1", 4.0);
    assert_qd(db, "SELECT stdev_pop(x) FROM t WHERE g = 1", 2.0);
    /* One value: sample statistics are NULL, population ones 0. */
    assert_qnull(db, "SELECT stdev(x) FROM t WHERE g = 2");
    assert_qnull(db, "SELECT variance(x) FROM t WHERE g = 2");
    assert_qd(db, "SELECT var_pop(x) FROM t WHERE g = 2", 0.0);
    assert_qd(db, "SELECT stdev_pop(x) FROM t WHERE g = 2", 0.0);
    /* No value. */
    assert_qnull(db, "SELECT stdev(x) FROM t WHERE g = 3");
    assert_qnull(db, "SELECT variance(x) FROM t WHERE g = 3");
    assert_qnull(db, "SELECT var_pop(x) FROM t WHERE g = 3");
    assert_qnull(db, "SELECT stdev_pop(x) FROM t WHERE g = 3");
    assert_qnull(db, "SELECT var_pop(x) FROM t WHERE 0");
    /* Two equal values. */
    assert_qd(db, "SELECT variance(column1) FROM (VALUES (3),(3))", 0.0);
    /* GROUP BY */
    assert_qi(db, "SELECT count(*) FROM (SELECT g, variance(x) v FROM t GROUP BY g) WHERE v IS NULL", 2);
    /* A large offset: the naive sum-of-squares formula loses everything here. */
    sqlite3_stmt *st = row(db, "SELECT variance(column1) FROM (VALUES (1e9 + 4), (1e9 + 7), (1e9 + 13), (1e9 + 16))");
    double v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    assert_true(fabs(v - 30.0) < 1e-6);
    st = row(db, "SELECT var_pop(column1) FROM (VALUES (1e15 + 1), (1e15 + 2), (1e15 + 3))");
    v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    assert_true(fabs(v - 2.0 / 3.0) < 1e-9);
}

/* ---- intervals ---------------------------------------------------------- */

static void test_union(void **state)
{
    sqlite3 *db = *state;
    exec(db, "DROP TABLE IF EXISTS iv; CREATE TABLE iv(g, s, e);"
             "INSERT INTO iv VALUES (1, 20, 30), (1, 0, 5), (1, 25, 27), (1, 5, 9),"
             " (1, NULL, 3), (1, 3, NULL), (1, 40, 40), (1, 50, 45),"
             " (2, 100, 200), (2, 150, 160),"
             " (3, NULL, NULL),"
             " (4, 4611686018427387905, 4611686018427387909), (4, 4611686018427387909, 4611686018427387910),"
             " (5, -10, -5), (5, -5, 0), (5, 1, 2)");
    /* [0,5)+[5,9) touch -> 9; [20,30) holds [25,27) -> 10; NULL, empty, negative rows add nothing. */
    assert_qi(db, "SELECT union_ns(s, e) FROM iv WHERE g = 1", 19);
    assert_qi(db, "SELECT union_count(s, e) FROM iv WHERE g = 1", 2);
    assert_qi(db, "SELECT union_ns(s, e) FROM iv WHERE g = 2", 100);
    assert_qi(db, "SELECT union_count(s, e) FROM iv WHERE g = 2", 1);
    /* Only NULLs, or no row: an empty union. */
    assert_qi(db, "SELECT union_ns(s, e) FROM iv WHERE g = 3", 0);
    assert_qi(db, "SELECT union_count(s, e) FROM iv WHERE g = 3", 0);
    assert_qi(db, "SELECT union_ns(s, e) FROM iv WHERE 0", 0);
    assert_qi(db, "SELECT union_count(s, e) FROM iv WHERE 0", 0);
    /* Exact near 2^62, where a double step is 1024. */
    assert_qi(db, "SELECT union_ns(s, e) FROM iv WHERE g = 4", 5);
    assert_qi(db, "SELECT union_count(s, e) FROM iv WHERE g = 4", 1);
    assert_qi(db, "SELECT union_ns(s, e) FROM iv WHERE g = 5", 11);
    assert_qi(db, "SELECT union_count(s, e) FROM iv WHERE g = 5", 2);
    /* In start order as well. */
    assert_qi(db, "SELECT union_ns(s, e) FROM (SELECT * FROM iv WHERE g = 1 ORDER BY s)", 19);
    assert_qi(db, "SELECT union_ns(s, e) FROM (SELECT * FROM iv WHERE g = 1 ORDER BY s DESC)", 19);
    /* GROUP BY: one result per group. */
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT g, union_ns(s, e), union_count(s, e) FROM iv GROUP BY g ORDER BY g",
                                        -1, &st, NULL),
                     SQLITE_OK);
    int64_t want[][2] = {{19, 2}, {100, 1}, {0, 0}, {5, 1}, {11, 2}};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(st, 0), i + 1);
        assert_i64(want[i][0], sqlite3_column_int64(st, 1));
        assert_i64(want[i][1], sqlite3_column_int64(st, 2));
    }
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
}

static void test_intersect(void **state)
{
    sqlite3 *db = *state;
    assert_qi(db, "SELECT intersect_ns(0, 10, 5, 20)", 5);
    assert_qi(db, "SELECT intersect_ns(5, 20, 0, 10)", 5);
    assert_qi(db, "SELECT intersect_ns(0, 5, 5, 9)", 0);  /* touching */
    assert_qi(db, "SELECT intersect_ns(0, 10, 20, 30)", 0);
    assert_qi(db, "SELECT intersect_ns(0, 100, 20, 30)", 10); /* nested */
    /* any int64 may come in: the length saturates instead of wrapping */
    assert_qi(db, "SELECT intersect_ns(-9000000000000000000, 9000000000000000000, "
                  "-9000000000000000000, 9000000000000000000)", INT64_MAX);
    assert_qi(db, "SELECT intersect_ns(9223372036854775807, -9223372036854775808, 0, 1)", 0);
    assert_qi(db, "SELECT intersect_ns(10, 0, 0, 10)", 0);   /* negative length */
    assert_qi(db, "SELECT intersect_ns(4611686018427387905, 4611686018427387910, 0, 4611686018427387907)", 2);
    assert_qnull(db, "SELECT intersect_ns(NULL, 10, 0, 10)");
    assert_qnull(db, "SELECT intersect_ns(0, 10, 0, NULL)");
}

/* 100000 random rows: union_ns / union_count equal iv_merge, shuffled and ordered. */
static void test_union_random(void **state)
{
    sqlite3 *db = *state;
    size_t n = 100000;
    iv *v = malloc(n * sizeof *v);
    assert_non_null(v);
    uint64_t x = 88172645463325252u;
    exec(db, "DROP TABLE IF EXISTS r; CREATE TABLE r(g, s, e); BEGIN");
    sqlite3_stmt *ins;
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO r VALUES (?, ?, ?)", -1, &ins, NULL), SQLITE_OK);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t s = INT64_C(1700000000000000000) + (int64_t)(x % 100000000u);
        int64_t e = s + (int64_t)((x >> 32) % 3000) - 10;
        v[i] = (iv){s, e};
        sqlite3_bind_int64(ins, 1, (int64_t)(i % 3));
        sqlite3_bind_int64(ins, 2, s);
        sqlite3_bind_int64(ins, 3, e);
        assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    exec(db, "COMMIT");
    size_t m = iv_merge(v, n);
    int64_t len = iv_length(v, m);
    assert_qi(db, "SELECT union_ns(s, e) FROM r", len);
    assert_qi(db, "SELECT union_count(s, e) FROM r", (int64_t)m);
    assert_qi(db, "SELECT union_ns(s, e) FROM (SELECT * FROM r ORDER BY s)", len);
    assert_qi(db, "SELECT union_count(s, e) FROM (SELECT * FROM r ORDER BY s)", (int64_t)m);
    assert_qi(db, "SELECT union_ns(s, e) FROM (SELECT * FROM r ORDER BY s DESC)", len);
    /* Mostly ordered with a few rows out of place. */
    assert_qi(db, "SELECT union_ns(s, e) FROM (SELECT * FROM r ORDER BY s / 1000000, g, e)", len);
    assert_qi(db, "SELECT union_count(s, e) FROM (SELECT * FROM r ORDER BY s / 1000000, g, e)", (int64_t)m);
    free(v);
}

/* ---- sets --------------------------------------------------------------- */

/* Fails unless sql gives exactly the text want. */
static void assert_qtext(sqlite3 *db, const char *sql, const char *want)
{
    sqlite3_stmt *st = row(db, sql);
    const char *got = (const char *)sqlite3_column_text(st, 0);
    if (sqlite3_column_type(st, 0) != SQLITE_TEXT || !got || strcmp(got, want) != 0)
        fail_msg("%s: expected %s, got %s", sql, want, got ? got : "(null)");
    sqlite3_finalize(st);
}

/*
 * pyset_array against what python3 3.11 gives for the same adds
 * (s = set(); s.add(v) for each v; list(s)): small tables where the slot
 * order is ascending, collisions ({8, 1}: 8 takes slot 0), growth from 8 to
 * 32 to 128 slots with keys re-inserted in slot order, linear probing past
 * taken slots and the perturbed jump, negative and large ints (hash(-1) is
 * -2; 2^61 - 1 hashes to 0), duplicates.
 */
static void test_pyset_array(void **state)
{
    sqlite3 *db = *state;
    assert_qtext(db, "SELECT pyset_array(value) FROM (SELECT value FROM json_each('[8,1]'))", "[8,1]");
    assert_qtext(db,
                 "SELECT pyset_array(value) FROM (SELECT value FROM json_each("
                 "'[15,14,13,12,11,10,9,8,7,6,5,4,3,2,1,0]'))",
                 "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]");
    assert_qtext(db,
                 "WITH RECURSIVE r(v) AS (SELECT 0 UNION ALL SELECT v + 8 FROM r WHERE v < 120) "
                 "SELECT pyset_array(v) FROM r",
                 "[0,32,64,96,8,40,72,104,16,48,80,112,24,56,88,120]");
    assert_qtext(db,
                 "WITH RECURSIVE r(v) AS (SELECT 0 UNION ALL SELECT v + 5 FROM r WHERE v < 75) "
                 "SELECT pyset_array(v) FROM r",
                 "[0,65,35,5,70,40,10,75,45,15,50,20,55,25,60,30]");
    assert_qtext(db,
                 "SELECT pyset_array(value) FROM (SELECT value FROM json_each("
                 "'[5,-1,-2,3,2305843009213693951,2305843009213693952,100,37,69]'))",
                 "[2305843009213693951,2305843009213693952,3,100,5,37,69,-2,-1]");
    assert_qtext(db,
                 "SELECT pyset_array(v) FROM (WITH RECURSIVE r(v) AS (SELECT 0 UNION ALL SELECT v + 32 FROM r "
                 "WHERE v < 608) SELECT v FROM r UNION ALL SELECT 3 UNION ALL SELECT 3 UNION ALL SELECT 0)",
                 "[0,128,256,384,512,3,32,160,288,416,544,64,192,320,448,576,96,224,352,480,608]");
    /* NULLs skipped; no values: an empty list; per group */
    assert_qtext(db, "SELECT pyset_array(column1) FROM (VALUES (NULL),(2),(NULL))", "[2]");
    assert_qtext(db, "SELECT pyset_array(column1) FROM (VALUES (NULL))", "[]");
    assert_qtext(db, "SELECT pyset_array(column1) FROM (VALUES (1)) WHERE 0", "[]");
    assert_qtext(db,
                 "SELECT group_concat(a, ';') FROM (SELECT pyset_array(column2) AS a FROM "
                 "(VALUES (1, 2),(2, 4),(1, 1),(2, 0)) GROUP BY column1 ORDER BY column1)",
                 "[1,2];[0,4]");
    assert_qtext(db, "SELECT pyset_array(column1) FROM (VALUES (9),(1))", "[9,1]");
    assert_qtext(db, "SELECT pyset_array(column1) FROM (VALUES (3),(11))", "[11,3]");
    assert_qtext(db, "SELECT pyset_array(column1) FROM (VALUES (11),(3))", "[3,11]");
    assert_qerr(db, "SELECT pyset_array(column1) FROM (VALUES (1),(2.5))", "pyset_array: the values must be integers");
    assert_qerr(db, "SELECT pyset_array(column1) FROM (VALUES ('7'))", "pyset_array: the values must be integers");
}

/*
 * dualpipev_slot(mb, tp, pp, dp, rank, pos, count) against rows of
 * msprof-analyze's own schedule (tests/conformance/reference/
 * msprof_analyze_pp_chart_dualpipev_pp4_mb8.csv: stage 0 expects 38 rows,
 * its 22nd is 7F+11B of phase 3; stage 3 expects 25, its 9th is 4F).
 */
static void test_dualpipev_slot(void **state)
{
    sqlite3 *db = *state;
    assert_qtext(db, "SELECT dualpipev_slot(8, 2, 4, 1, 1, 21, 38)", "[\"7F+11B\",3]");
    assert_qtext(db, "SELECT dualpipev_slot(8, 2, 4, 1, 7, 8, 25)", "[\"4F\",3]");
    assert_qtext(db, "SELECT dualpipev_slot(8, 2, 4, 1, 0, 21, 38)", "[\"7F+11B\",3]"); /* cached stage */
    assert_qtext(db, "SELECT dualpipev_slot(8, 1, 4, 2, 2, 0, 28)", "[\"0\",0]");      /* stage 1 */
    /* a step of another count, no micro-batch count, too few of them: unnamed */
    assert_qtext(db, "SELECT dualpipev_slot(8, 2, 4, 1, 1, 21, 37)", "[\"\",0]");
    assert_qtext(db, "SELECT dualpipev_slot(NULL, 2, 4, 1, 1, 0, 38)", "[\"\",0]");
    assert_qtext(db, "SELECT dualpipev_slot(7, 2, 4, 1, 1, 0, 38)", "[\"\",0]");
    /* a rank in no stage, sizes not known: no row */
    assert_qnull(db, "SELECT dualpipev_slot(8, 2, 4, 1, 8, 0, 38)");
    assert_qnull(db, "SELECT dualpipev_slot(8, NULL, 4, 1, 1, 0, 38)");
    assert_qerr(db, "SELECT dualpipev_slot(8, 2, 0, 1, 1, 0, 38)",
                "dualpipev_slot: tp, pp and dp must be 1 or more (tp 2, pp 0, dp 1)");
    assert_qerr(db, "SELECT dualpipev_slot(8, 2, 4, '1', 1, 0, 38)", "dualpipev_slot: the arguments must be integers");
    assert_qerr(db, "SELECT dualpipev_slot(8, 2, 400000, 1, 1, 0, 38)",
                "dualpipev_slot: a size or the micro-batch count is over 100000");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_median, setup, teardown),
        cmocka_unit_test_setup_teardown(test_percentile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_percentile_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_variance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_union, setup, teardown),
        cmocka_unit_test_setup_teardown(test_intersect, setup, teardown),
        cmocka_unit_test_setup_teardown(test_union_random, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pyset_array, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dualpipev_slot, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
