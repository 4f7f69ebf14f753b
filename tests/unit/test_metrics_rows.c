/* SPDX-License-Identifier: MIT */
/*
 * test_metrics_rows.c - the readers of a statement's rows the computed
 * tables share (engine/metrics/metrics.h): metrics_rows, metrics_each_row
 * and metrics_read_int64, over an in-memory SQLite DB with known rows.
 *
 * Each case checks the rows read (values, order, the rank bound to ?1),
 * the status and the exact message of a failed prepare, a failed step and a
 * row function that runs out of memory, and that no statement is left
 * unfinalized on the connection afterwards, whatever the outcome.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "testutil.h"
#include "metrics/metrics.h"
#include "util/vec.h"

/* rank, value: ranks 0 and 1, rank 1's values 10, 20, 30 */
static const char rows_sql[] = "CREATE TABLE t (rank INTEGER, x INTEGER, y INTEGER);"
                               "INSERT INTO t VALUES (1, 20, 200), (0, 5, 50), (1, 10, 100), (1, 30, 300);";

static sqlite3 *open_db(void)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, rows_sql, NULL, NULL, NULL), SQLITE_OK);
    return db;
}

/* The DB has no statement left (every one finalized), then closes it. */
static void close_db(sqlite3 *db)
{
    assert_null(sqlite3_next_stmt(db, NULL));
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

typedef struct pairs {
    int64_t *v;
    size_t n, cap;
    size_t calls, fail_at; /* fail_at: the call (1-based) that fails, 0: none */
} pairs;

static int pair_row(sqlite3_stmt *st, void *ctx)
{
    pairs *p = ctx;
    if (++p->calls == p->fail_at)
        return -1;
    return VEC_PUSH(p->v, p->n, p->cap, sqlite3_column_int64(st, 0)) ||
           VEC_PUSH(p->v, p->n, p->cap, sqlite3_column_int64(st, 1));
}

static void rows_of_rank(void **state)
{
    (void)state;
    sqlite3 *db = open_db();
    pairs p = {0};
    tb_error err = {0};
    assert_int_equal(metrics_rows(db, "t_read", "SELECT x, y FROM t WHERE rank = ?1 ORDER BY x", 1, pair_row, &p, &err),
                     TB_OK);
    assert_int_equal(p.n, 6);
    int64_t want[] = {10, 100, 20, 200, 30, 300};
    for (size_t i = 0; i < 6; i++)
        assert_i64(want[i], p.v[i]);
    free(p.v);
    /* rank 0: its one row; a rank without rows: none, and no call */
    p = (pairs){0};
    assert_int_equal(metrics_rows(db, "t_read", "SELECT x, y FROM t WHERE rank = ?1", 0, pair_row, &p, &err), TB_OK);
    assert_int_equal(p.n, 2);
    assert_i64(5, p.v[0]);
    assert_i64(50, p.v[1]);
    free(p.v);
    p = (pairs){0};
    assert_int_equal(metrics_rows(db, "t_read", "SELECT x, y FROM t WHERE rank = ?1", 7, pair_row, &p, &err), TB_OK);
    assert_int_equal(p.calls, 0);
    /* SQL without a parameter: the rank is not bound, every row read */
    assert_int_equal(metrics_rows(db, "t_read", "SELECT x, y FROM t", 7, pair_row, &p, &err), TB_OK);
    assert_int_equal(p.calls, 4);
    free(p.v);
    close_db(db);
}

static void row_out_of_memory(void **state)
{
    (void)state;
    sqlite3 *db = open_db();
    pairs p = {.fail_at = 2};
    tb_error err = {0};
    assert_int_equal(metrics_rows(db, "t_read", "SELECT x, y FROM t ORDER BY x", 0, pair_row, &p, &err),
                     TB_ERR_NOMEM);
    assert_int_equal(err.code, TB_ERR_NOMEM);
    assert_string_equal(err.message, "t_read: out of memory");
    assert_int_equal(p.calls, 2); /* the read stops at the failing row */
    assert_int_equal(p.n, 2);
    free(p.v);
    close_db(db);
}

static void failed_prepare_and_step(void **state)
{
    (void)state;
    sqlite3 *db = open_db();
    pairs p = {0};
    tb_error err = {0};
    assert_int_equal(metrics_rows(db, "t_read", "SELECT x FROM nope", 0, pair_row, &p, &err), TB_ERR_DB);
    assert_string_equal(err.message, "t_read: no such table: nope");
    /* a step that fails after rows (in rowid order, unsorted: x 20, 5, 10, 30): the rows before it were read */
    err = (tb_error){0};
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT x, CASE WHEN x = 30 "
                                        "  THEN abs(x - 30 - 9223372036854775807 - 1) ELSE y END FROM t",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(metrics_each_row(db, st, "t_read", pair_row, &p, &err), TB_ERR_DB);
    assert_string_equal(err.message, "t_read: integer overflow");
    assert_int_equal(p.calls, 3);
    free(p.v);
    close_db(db);
}

static void int64_columns(void **state)
{
    (void)state;
    sqlite3 *db = open_db();
    tb_error err = {0};
    int64_t *v = NULL;
    size_t n = 99;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT rank, x, y FROM t ORDER BY x", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(metrics_read_int64(db, st, "t_read", 3, &v, &n, &err), TB_OK);
    assert_int_equal(n, 4);
    int64_t want[] = {0, 5, 50, 1, 10, 100, 1, 20, 200, 1, 30, 300};
    for (size_t i = 0; i < 12; i++)
        assert_i64(want[i], v[i]);
    free(v);
    /* one column, no row: no array */
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT x FROM t WHERE rank = 9", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(metrics_read_int64(db, st, "t_read", 1, &v, &n, &err), TB_OK);
    assert_int_equal(n, 0);
    assert_null(v);
    /* a failed step (at x 10, the third row): TB_ERR_DB naming what, the rows before it kept */
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT x, CASE WHEN x = 10 "
                                        "  THEN abs(x - 10 - 9223372036854775807 - 1) ELSE y END FROM t",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(metrics_read_int64(db, st, "pairs", 2, &v, &n, &err), TB_ERR_DB);
    assert_string_equal(err.message, "pairs: integer overflow");
    assert_int_equal(n, 2);
    assert_i64(20, v[0]);
    assert_i64(50, v[3]);
    free(v);
    close_db(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_of_rank),
        cmocka_unit_test(row_out_of_memory),
        cmocka_unit_test(failed_prepare_and_step),
        cmocka_unit_test(int64_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
