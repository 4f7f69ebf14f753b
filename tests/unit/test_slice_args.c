/* SPDX-License-Identifier: MIT */
/*
 * test_slice_args.c - unit tests for a slice's args as a shape and values
 * (engine/db/slice_args.c).
 *
 * Each case parses one event from memory (js_parse_event_at), turns its
 * args into a shape and values with the members a row would hold, checks
 * both texts worked out by hand, and expands them back with a lookup of
 * those members, which must give the args object minified, member for
 * member. Edge cases: numbers not written as the writer writes them, a
 * column holding another value, short numbers, escaped keys, no args, args
 * that are no object, raw control characters, more members than the reader
 * lists, values missing at expansion. Runs with the exit-code protocol.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "db/slice_args.h"
#include "util/jstream.h"

typedef struct lookup {
    const slice_arg *cols;
    int n;
} lookup;

/* slice_arg_fn over the members a row holds, as the writer's columns would. */
static int col_value(void *ctx, const char *key, size_t n, slice_buf *out)
{
    const lookup *l = ctx;
    for (int i = 0; i < l->n; i++) {
        const slice_arg *c = &l->cols[i];
        if (c->n != n || memcmp(c->key, key, n) != 0)
            continue;
        if (c->v.type == V_INT)
            return slice_buf_int(out, c->v.i) ? -1 : 0;
        if (c->v.type == V_TEXT)
            return slice_buf_jstr(out, c->v.s, c->v.n) ? -1 : 0;
        return 1;
    }
    return 1;
}

/*
 * The shape and values of event's args with cols, checked against shape and
 * vals; then expanded, checked against back (NULL: no args written).
 */
static void check(const char *event, const slice_arg *cols, int n, const char *shape, const char *vals,
                  const char *back)
{
    trace_event ev;
    memset(&ev, 0, sizeof ev);
    const char *next;
    assert_int_equal(js_parse_event_at(event, event + strlen(event), &ev, &next), 1);
    slice_buf s = {0}, v = {0}, out = {0};
    assert_int_equal(slice_args_shape(&ev, cols, n, &s, &v), 0);
    assert_string_equal(s.p, shape);
    assert_string_equal(v.n ? v.p : "", vals);
    lookup l = {cols, n};
    int r = slice_args_expand(s.p, s.n, v.n ? v.p : "", v.n, col_value, &l, &out);
    if (back) {
        assert_int_equal(r, 1);
        assert_string_equal(out.p, back);
    } else {
        assert_int_equal(r, 0);
    }
    slice_buf_free(&s);
    slice_buf_free(&v);
    slice_buf_free(&out);
}

static void test_device_task(void **state)
{
    (void)state;
    const char *ev = "{\"ph\":\"X\",\"name\":\"k\",\"args\":{\"Model Id\": 4294967295, \"Task Type\": \"AI_CORE\", "
                     "\"Stream Id\": 3, \"Task Id\": 12345, \"Batch Id\": 0, \"connection_id\": 7001}}";
    const slice_arg cols[] = {SLICE_ARG("Model Id", VINT(4294967295LL)), SLICE_ARG("Task Type", VTEXT("AI_CORE", 7)),
                              SLICE_ARG("Stream Id", VINT(3)), SLICE_ARG("Task Id", VINT(12345)),
                              SLICE_ARG("connection_id", VINT(7001))};
    check(ev, cols, 5,
          "{\"Model Id\":$,\"Task Type\":$,\"Stream Id\":$,\"Task Id\":$,\"Batch Id\":0,\"connection_id\":$}", "",
          "{\"Model Id\":4294967295,\"Task Type\":\"AI_CORE\",\"Stream Id\":3,\"Task Id\":12345,\"Batch Id\":0,"
          "\"connection_id\":7001}");
}

/* A member whose column holds another value, or the same number written
 * otherwise than the writer writes it, keeps its own text. */
static void test_numbers_as_written(void **state)
{
    (void)state;
    const char *ev = "{\"ph\":\"X\",\"args\":{\"Task Id\":12.0,\"Stream Id\":12345,\"a\":1e30,\"b\":-0,"
                     "\"c\":0012,\"d\":-4321,\"e\":\"12\",\"f\":[1, 2],\"g\":null,\"h\":true}}";
    const slice_arg cols[] = {SLICE_ARG("Task Id", VINT(12)), SLICE_ARG("Stream Id", VINT(12346)),
                              SLICE_ARG("d", VINT(-4321)), SLICE_ARG("e", VINT(12))};
    check(ev, cols, 4,
          "{\"Task Id\":#,\"Stream Id\":#,\"a\":#,\"b\":-0,\"c\":#,\"d\":$,\"e\":\"12\",\"f\":[1, 2],\"g\":null,"
          "\"h\":true}",
          "12.0,12345,1e30,0012",
          "{\"Task Id\":12.0,\"Stream Id\":12345,\"a\":1e30,\"b\":-0,\"c\":0012,\"d\":-4321,\"e\":\"12\","
          "\"f\":[1, 2],\"g\":null,\"h\":true}");
}

/* An escaped key or string is never taken for a column's. */
static void test_escapes(void **state)
{
    (void)state;
    const char *ev = "{\"ph\":\"X\",\"args\":{\"\\u0041\":123456,\"B\":\"x\\ty\"}}";
    const slice_arg cols[] = {SLICE_ARG("A", VINT(123456)), SLICE_ARG("B", VTEXT("x\ty", 3))};
    check(ev, cols, 2, "{\"\\u0041\":#,\"B\":\"x\\ty\"}", "123456", "{\"\\u0041\":123456,\"B\":\"x\\ty\"}");
}

static void test_no_args_and_no_object(void **state)
{
    (void)state;
    check("{\"ph\":\"X\",\"name\":\"n\"}", NULL, 0, SLICE_NO_ARGS, "", NULL);
    check("{\"ph\":\"X\",\"args\":{}}", NULL, 0, "{}", "", "{}");
    check("{\"ph\":\"X\",\"args\":[1, 22222]}", NULL, 0, "[1, 22222]", "", "[1, 22222]");
    check("{\"ph\":\"X\",\"args\":\"s\"}", NULL, 0, "\"s\"", "", "\"s\"");
}

/* Raw control characters: the object kept whole, escaped, without holes. */
static void test_control_characters(void **state)
{
    (void)state;
    const slice_arg cols[] = {SLICE_ARG("n", VINT(123456))};
    check("{\"ph\":\"X\",\"args\":{\"s\":\"a\tb\",\"n\":123456}}", cols, 1, "{\"s\":\"a\\u0009b\",\"n\":123456}", "",
          "{\"s\":\"a\\u0009b\",\"n\":123456}");
}

/* More members than the reader lists: kept whole. */
static void test_many_members(void **state)
{
    (void)state;
    char ev[4096], obj[4000];
    size_t k = 0;
    obj[k++] = '{';
    for (int i = 0; i < JS_MAX_MEMBERS + 1; i++)
        k += (size_t)snprintf(obj + k, sizeof obj - k, "%s\"m%d\":%d", i ? "," : "", i, 100000 + i);
    obj[k++] = '}';
    obj[k] = 0;
    snprintf(ev, sizeof ev, "{\"ph\":\"X\",\"args\":%s}", obj);
    check(ev, NULL, 0, obj, "", obj);
}

/* Values missing at expansion, and members no column holds: null. */
static void test_expand_missing(void **state)
{
    (void)state;
    slice_buf out = {0};
    lookup l = {NULL, 0};
    const char *shape = "{\"a\":#,\"b\":#,\"c\":$,\"d\":\"$#\"}";
    assert_int_equal(slice_args_expand(shape, strlen(shape), "17", 2, col_value, &l, &out), 1);
    assert_string_equal(out.p, "{\"a\":17,\"b\":null,\"c\":null,\"d\":\"$#\"}");
    slice_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_task),
        cmocka_unit_test(test_numbers_as_written),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_no_args_and_no_object),
        cmocka_unit_test(test_control_characters),
        cmocka_unit_test(test_many_members),
        cmocka_unit_test(test_expand_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
