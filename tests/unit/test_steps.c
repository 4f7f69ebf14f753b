/* SPDX-License-Identifier: MIT */
/*
 * test_steps.c - the one step rule (engine/metrics/steps.c): which host
 * step holds a time, which step launched a connection id, and a step's
 * device range, with answers worked out by hand.
 *
 * An in-memory DB with the four tables the rule reads. Host steps
 * (STEP_TIME, id = [start, end]):
 *   rank 0: 1 = [100, 200], 2 = [200, 300], 3 = [400, 500] (a gap before
 *           it), 4 = [600, 900] holding 5 = [650, 700] (nested), 6 = [1000,
 *           1100] and 7 = [1000, 1050] (starting together);
 *   rank 1: 1 = [100, 200].
 * Launching calls (CANN_API, connection id @ start), and their step:
 *   rank 0: 1@150 -> 1; 2@200 -> 2 (the boundary of 1 and 2: the later);
 *           3@350 -> none (the gap); 4@680 -> 5 (held by 4 and 5: the
 *           later start); 5@800 -> 4 (5 ended); 6@1020 -> 7 (6 and 7 start
 *           together: the greater id); 7@1070 -> 6 (7 ended); 8@450 and
 *           8@150 -> 1 (the earliest call); 9@50 -> none (before every
 *           step); 10^12@120 -> 1 (a sparse id: the map is sorted pairs);
 *   rank 1: 1@190 -> rank 1's step 1 (dense map).
 * Launched work (TASK and COMMUNICATION_OP, rank 0):
 *   conn 1 tasks [160, 170) and [180, 260); conn 2 task [210, 220) and
 *   op [205, 350); conn 3 task [360, 380) (no step); a task without a
 *   connection id [150, 990).
 * Device ranges: step 1 = [160, max(260, 200)] = [160, 260]; step 2 =
 *   [205, 350]; step 3 launched nothing = its host range [400, 500].
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdlib.h>

#include "metrics/steps.h"

static const char db_sql[] =
    "CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER, rankId INTEGER);"
    "CREATE TABLE CANN_API (startNs INTEGER, endNs INTEGER, connectionId INTEGER, rankId INTEGER);"
    "CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, connectionId INTEGER, rankId INTEGER);"
    "CREATE TABLE COMMUNICATION_OP (startNs INTEGER, endNs INTEGER, connectionId INTEGER, rankId INTEGER);"
    "INSERT INTO STEP_TIME VALUES (1, 100, 200, 0), (2, 200, 300, 0), (3, 400, 500, 0), (4, 600, 900, 0),"
    "  (5, 650, 700, 0), (7, 1000, 1050, 0), (6, 1000, 1100, 0), (1, 100, 200, 1), (9, NULL, 5, 0);"
    "INSERT INTO CANN_API VALUES (150, 151, 1, 0), (200, 201, 2, 0), (350, 351, 3, 0), (680, 681, 4, 0),"
    "  (800, 801, 5, 0), (1020, 1021, 6, 0), (1070, 1071, 7, 0), (450, 451, 8, 0), (150, 151, 8, 0),"
    "  (50, 51, 9, 0), (120, 121, 1000000000000, 0), (190, 191, 1, 1), (10, 11, NULL, 0);"
    "INSERT INTO TASK VALUES (160, 170, 1, 0), (180, 260, 1, 0), (210, 220, 2, 0), (360, 380, 3, 0),"
    "  (150, 990, NULL, 0);"
    "INSERT INTO COMMUNICATION_OP VALUES (205, 350, 2, 0);";

static sqlite3 *db;
static steps S;

static int setup(void **state)
{
    (void)state;
    tb_error err = {0};
    if (sqlite3_open(":memory:", &db) != SQLITE_OK || sqlite3_exec(db, db_sql, NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    return steps_load(db, 1, "test", &S, &err) == TB_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    steps_finish(&S);
    sqlite3_close(db);
    return 0;
}

/* The id of step index k on rank (k checked to be one of the rank's steps), or -1 for none. */
static int64_t id_of(int64_t rank, int64_t k)
{
    if (k < 0)
        return -1;
    assert_true((size_t)k < S.n);
    assert_int_equal(rank, S.v[k].rank);
    return S.v[k].id;
}

static void loads_sorted_steps(void **state)
{
    (void)state;
    /* the row with a NULL start is left out; rank 0's seven, then rank 1's one */
    assert_int_equal(8, S.n);
    const int64_t want[8][2] = {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}, {1, 1}};
    for (size_t i = 0; i < 8; i++) {
        assert_int_equal(want[i][0], S.v[i].rank);
        assert_int_equal(want[i][1], S.v[i].id);
    }
    size_t off, n;
    steps_of_rank(&S, 1, &off, &n);
    assert_int_equal(7, off);
    assert_int_equal(1, n);
    steps_of_rank(&S, 2, &off, &n);
    assert_int_equal(0, n);
}

static void step_at_time(void **state)
{
    (void)state;
    assert_int_equal(1, id_of(0, steps_at(&S, 0, 100)));
    assert_int_equal(2, id_of(0, steps_at(&S, 0, 200)));   /* boundary: the later step */
    assert_int_equal(-1, id_of(0, steps_at(&S, 0, 350)));  /* gap */
    assert_int_equal(5, id_of(0, steps_at(&S, 0, 680)));   /* nested: the later start */
    assert_int_equal(4, id_of(0, steps_at(&S, 0, 800)));   /* walks back past 5 */
    assert_int_equal(7, id_of(0, steps_at(&S, 0, 1020)));  /* same start: the greater id */
    assert_int_equal(6, id_of(0, steps_at(&S, 0, 1070)));
    assert_int_equal(-1, id_of(0, steps_at(&S, 0, 1101)));
    assert_int_equal(-1, id_of(0, steps_at(&S, 0, 99)));
    assert_int_equal(1, id_of(1, steps_at(&S, 1, 150)));
    assert_int_equal(-1, steps_at(&S, 3, 150));            /* a rank without steps */
}

static void step_started_before(void **state)
{
    (void)state;
    assert_int_equal(2, id_of(0, steps_started(&S, 0, 350)));
    assert_int_equal(7, id_of(0, steps_started(&S, 0, 5000)));
    assert_int_equal(-1, steps_started(&S, 0, 99));
}

static void step_of_connection(void **state)
{
    (void)state;
    const idmap *r0 = steps_launches(&S, 0), *r1 = steps_launches(&S, 1);
    assert_non_null(r0);
    assert_non_null(r1);
    assert_null(steps_launches(&S, 2));
    const int64_t want[][2] = {{1, 1}, {2, 2}, {3, -1}, {4, 5}, {5, 4}, {6, 7}, {7, 6}, {8, 1}, {9, -1},
                               {1000000000000, 1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(want[i][1], id_of(0, steps_launched(r0, want[i][0])));
    assert_int_equal(1, id_of(1, steps_launched(r1, 1)));
    /* no call with the id, or no launches at all */
    assert_true(steps_launched(r0, 11) == IDMAP_ABSENT);
    assert_true(steps_launched(r1, 2) == IDMAP_ABSENT);
    assert_true(steps_launched(NULL, 1) == IDMAP_ABSENT);
}

static void device_ranges(void **state)
{
    (void)state;
    steps_span *span = calloc(S.n, sizeof *span);
    assert_non_null(span);
    tb_error err = {0};
    assert_int_equal(TB_OK, steps_rank_spans(&S, db, "test", span, &err));
    const int64_t want[3][2] = {{160, 260}, {205, 350}, {400, 500}};
    for (size_t k = 0; k < 3; k++) {
        int64_t start, end;
        steps_range(&S.v[k], &span[k], &start, &end);
        assert_int_equal(want[k][0], start);
        assert_int_equal(want[k][1], end);
    }
    /* a span that ends before the host step: END is the host end */
    steps_span sp = STEPS_SPAN_EMPTY;
    steps_span_add(&sp, 120, 150);
    int64_t start, end;
    steps_range(&S.v[0], &sp, &start, &end);
    assert_int_equal(120, start);
    assert_int_equal(200, end);
    free(span);
}

static void missing_table_is_db_error(void **state)
{
    (void)state;
    sqlite3 *empty = NULL;
    steps s;
    tb_error err = {0};
    assert_int_equal(SQLITE_OK, sqlite3_open(":memory:", &empty));
    assert_int_equal(TB_ERR_DB, steps_load(empty, 1, "step_trace_time", &s, &err));
    assert_string_equal("step_trace_time: reading STEP_TIME: no such table: STEP_TIME", err.message);
    assert_int_equal(0, s.n);
    sqlite3_close(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loads_sorted_steps),
        cmocka_unit_test(step_at_time),
        cmocka_unit_test(step_started_before),
        cmocka_unit_test(step_of_connection),
        cmocka_unit_test(device_ranges),
        cmocka_unit_test(missing_table_is_db_error),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
