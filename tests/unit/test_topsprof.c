/* SPDX-License-Identifier: MIT */
/*
 * test_topsprof.c - unit tests for the topsprof listing reader
 * (engine/ingest/topsprof.c).
 *
 * tops_time_ns is checked on strings. The reader is checked through a
 * recorder callback that copies every row, total and empty class it is
 * handed, on: the two example listings of the topsprof manual (in
 * ../shared/data/public/topsprof; those tests skip when it is absent), the
 * checked-in samples/topsprof listings, and small synthetic files written into
 * a private mkdtemp() directory under $TMPDIR (removed by the group teardown):
 * no prefix, every unit, per-device splits, a class without data, trace Node
 * Names, the CSV export, gzip input, noise lines, callbacks that stop, and
 * malformed input with the exact message, line and column worked out next to
 * each input. Runs with the exit-code protocol: main returns the number of
 * failed tests.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>
#include <zlib.h>

#include "ingest/topsprof.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */



/* One item handed to a callback, with its strings copied. */
typedef struct item {
    char kind;           /* 'S' stat, 'T' trace, 'O' total, 'N' no data */
    char *klass, *name;  /* name: the Name, or the "what" of 'N' */
    char *node;          /* 'T' only */
    int device, from_trace;
    long pid, line;
    double pct;
    int64_t v[6];        /* S: time calls avg min max; T: start dur; O: accumulate calls total */
} item;

typedef struct recorder {
    item *v;
    size_t n, cap;
    size_t stop_after;   /* a callback returns 1 once this many items are held (0: never) */
    tb_error *fill;      /* when stopping, the callback fills this first (NULL: not) */
} recorder;

/* Freed by the per-test teardown (cmocka longjmps out of a failing test). */
static recorder rec;

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int record(item it)
{
    if (rec.n == rec.cap) {
        size_t ncap = rec.cap ? rec.cap * 2 : 64;
        item *nv = realloc(rec.v, ncap * sizeof *nv);
        assert_non_null(nv);
        rec.v = nv;
        rec.cap = ncap;
    }
    rec.v[rec.n++] = it;
    if (rec.stop_after && rec.n >= rec.stop_after) {
        if (rec.fill)
            tb_error_set(rec.fill, TB_ERR_DB, "UNIQUE constraint failed");
        return 1;
    }
    return 0;
}

static int on_stat(void *ctx, const tops_stat *r)
{
    assert_ptr_equal(ctx, &rec);
    return record((item){.kind = 'S', .klass = dup_or_null(r->klass), .name = dup_or_null(r->name),
                         .device = r->device, .pid = r->pid, .line = r->line, .pct = r->time_pct,
                         .v = {r->time_ns, r->calls, r->avg_ns, r->min_ns, r->max_ns}});
}

static int on_trace(void *ctx, const tops_trace *r)
{
    assert_ptr_equal(ctx, &rec);
    return record((item){.kind = 'T', .klass = dup_or_null(r->klass), .name = dup_or_null(r->name),
                         .node = dup_or_null(r->node_name), .device = r->device, .pid = r->pid,
                         .line = r->line, .v = {r->start_ns, r->dur_ns}});
}

static int on_total(void *ctx, const tops_total *r)
{
    assert_ptr_equal(ctx, &rec);
    return record((item){.kind = 'O', .klass = dup_or_null(r->klass), .device = r->device, .pid = r->pid,
                         .from_trace = r->from_trace, .line = r->line,
                         .v = {r->accumulate_ns, r->total_calls, r->total_ns}});
}

static int on_nodata(void *ctx, const tops_nodata *r)
{
    assert_ptr_equal(ctx, &rec);
    return record((item){.kind = 'N', .klass = dup_or_null(r->klass), .name = dup_or_null(r->what),
                         .device = r->device, .pid = r->pid, .line = r->line});
}

static const tops_callbacks all_cb = {
    .ctx = &rec, .stat = on_stat, .trace = on_trace, .total = on_total, .nodata = on_nodata};

static void rec_clear(void)
{
    for (size_t i = 0; i < rec.n; i++) {
        free(rec.v[i].klass);
        free(rec.v[i].name);
        free(rec.v[i].node);
    }
    free(rec.v);
    rec = (recorder){0};
}

/* Parses path into rec (emptied first). */
static tb_status parse_path(const char *path, tb_error *err)
{
    size_t stop = rec.stop_after;
    tb_error *fill = rec.fill;
    rec_clear();
    rec.stop_after = stop;
    rec.fill = fill;
    return tops_parse(path, &all_cb, err);
}

/* The full path of name inside the temporary directory. */
static void tmp_path(char *path, size_t cap, const char *name)
{
    int w = snprintf(path, cap, "%s/%s", tmpdir, name);
    assert_true(w > 0 && (size_t)w < cap);
}

/* Writes text to name inside the temporary directory; path gets the full path. */
static void write_str(char *path, size_t cap, const char *name, const char *text)
{
    tmp_path(path, cap, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    size_t n = strlen(text);
    if (n)
        assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Writes text to name and parses it into rec; returns the status. */
static tb_status parse_text(const char *name, const char *text, tb_error *err)
{
    char path[PATH_MAX];
    write_str(path, sizeof path, name, text);
    return parse_path(path, err);
}

/* Parses text and fails unless it succeeds. */
static void parse_ok(const char *name, const char *text)
{
    tb_error err;
    tb_status s = parse_text(name, text, &err);
    if (s != TB_OK) {
        print_error("%s: %s:%ld:%ld: %s\n", name, err.file, err.line, err.column, err.message);
        fail();
    }
}

/* Parses text and fails unless it fails with code, message, line and column. */
static void parse_fails(const char *name, const char *text, tb_status code, long line, long column,
                        const char *message)
{
    tb_error err;
    tb_status s = parse_text(name, text, &err);
    if (s != code || err.code != code || err.line != line || err.column != column ||
        strcmp(err.message, message) != 0) {
        print_error("%s: expected %d %ld:%ld '%s', got %d %ld:%ld '%s'\n", name, (int)code, line, column,
                    message, (int)s, err.line, err.column, err.message);
        fail();
    }
    assert_non_null(strstr(err.file, name));
}

/* How many items of kind (and class, when not NULL) were recorded. */
static size_t count(char kind, const char *klass)
{
    size_t n = 0;
    for (size_t i = 0; i < rec.n; i++)
        if (rec.v[i].kind == kind && (!klass || strcmp(rec.v[i].klass, klass) == 0))
            n++;
    return n;
}

/* The i-th item of kind and class (i < 0 counts from the end); fails when there is none. */
static const item *nth(char kind, const char *klass, long i)
{
    long n = (long)count(kind, klass);
    if (i < 0)
        i += n;
    for (size_t k = 0; k < rec.n; k++) {
        const item *it = &rec.v[k];
        if (it->kind == kind && (!klass || strcmp(it->klass, klass) == 0) && i-- == 0)
            return it;
    }
    fail_msg("no item %c %s #%ld (%ld of them)", kind, klass ? klass : "*", i, n);
    return NULL;
}

static void check_stat(const item *it, const char *klass, int device, long line, double pct, int64_t time_ns,
                       int64_t calls, int64_t avg_ns, int64_t min_ns, int64_t max_ns, const char *name)
{
    assert_int_equal(it->kind, 'S');
    assert_string_equal(it->klass, klass);
    assert_int_equal(it->device, device);
    assert_int_equal(it->line, line);
    assert_true(it->pct > pct - 1e-9 && it->pct < pct + 1e-9);
    assert_i64(time_ns, it->v[0]);
    assert_i64(calls, it->v[1]);
    assert_i64(avg_ns, it->v[2]);
    assert_i64(min_ns, it->v[3]);
    assert_i64(max_ns, it->v[4]);
    assert_string_equal(it->name, name);
}

static void check_trace(const item *it, long line, int64_t start_ns, int64_t dur_ns, const char *node,
                        const char *name)
{
    assert_int_equal(it->kind, 'T');
    assert_int_equal(it->line, line);
    assert_i64(start_ns, it->v[0]);
    assert_i64(dur_ns, it->v[1]);
    assert_string_equal(it->node, node);
    assert_string_equal(it->name, name);
}

static void check_total(const item *it, const char *klass, int device, long line, int64_t acc, int64_t calls,
                        int64_t total)
{
    assert_int_equal(it->kind, 'O');
    assert_string_equal(it->klass, klass);
    assert_int_equal(it->device, device);
    assert_int_equal(it->line, line);
    assert_i64(acc, it->v[0]);
    assert_i64(calls, it->v[1]);
    assert_i64(total, it->v[2]);
}

/* Sum of Calls over the statistics rows of a class (and device, unless -2). */
static int64_t sum_calls(const char *klass, int device)
{
    int64_t s = 0;
    for (size_t i = 0; i < rec.n; i++)
        if (rec.v[i].kind == 'S' && strcmp(rec.v[i].klass, klass) == 0 && (device == -2 || rec.v[i].device == device))
            s += rec.v[i].v[1];
    return s;
}

/*
 * Path of a file relative to the source tree's parent (rel "shared/...") or
 * root (rel "samples/..."), found from this file's own path: meson compiles
 * from the build directory and runs the tests there, so a relative __FILE__
 * stays valid. Returns 1 when the file is readable.
 */
static int source_file(char *out, size_t cap, const char *rel, int beside_root)
{
    static const char me[] = "tests/unit/test_topsprof.c";
    const char *f = __FILE__;
    size_t n = strlen(f), m = sizeof me - 1;
    if (n < m || strcmp(f + n - m, me) != 0)
        return 0;
    int w = snprintf(out, cap, "%.*s%s%s", (int)(n - m), f, beside_root ? "../" : "", rel);
    return w > 0 && (size_t)w < cap && access(out, R_OK) == 0;
}

/* The manual's example named file, or a skip when ../shared is absent. */
#define SHARED_OR_SKIP(path, file)                                                          \
    do {                                                                                    \
        if (!source_file(path, sizeof path, "shared/data/public/topsprof/" file, 1)) {      \
            print_message("skipped: no shared/data/public/topsprof/%s\n", file);            \
            skip();                                                                         \
        }                                                                                   \
    } while (0)

static int test_teardown(void **state)
{
    (void)state;
    rec_clear();
    return 0;
}

/* ---- tops_time_ns --------------------------------------------------------- */

static int64_t ns(const char *text)
{
    int64_t v = INT64_MIN;
    int rc = tops_time_ns(text, strlen(text), &v);
    if (rc != TOPS_TIME_OK) {
        print_error("tops_time_ns(\"%s\") = %d\n", text, rc);
        fail();
    }
    return v;
}

static int time_rc(const char *text)
{
    int64_t v = 12345;
    int rc = tops_time_ns(text, strlen(text), &v);
    if (rc != TOPS_TIME_OK)
        assert_i64(12345, v); /* untouched on failure */
    return rc;
}

static void test_time_units(void **state)
{
    (void)state;
    /* the manual's own values, one per unit */
    assert_i64(56610000, ns("56.61ms"));
    assert_i64(13440, ns("13.44us"));
    assert_i64(461, ns("461.00ns"));
    assert_i64(1200000000, ns("1.20s"));
    assert_i64(0, ns("0.00ns"));
    assert_i64(636730000, ns("636.73ms"));
    assert_i64(171850000, ns("171.85ms"));
    /* values a double would not hold exactly at two decimals */
    assert_i64(290000, ns("0.29ms"));
    assert_i64(1010000, ns("1.01ms"));
    assert_i64(4350000000, ns("4.35s"));
    /* no decimals, more decimals, trailing zeros below 1 ns */
    assert_i64(5000000000, ns("5s"));
    assert_i64(7, ns("7ns"));
    assert_i64(1234567891, ns("1.234567891s"));
    assert_i64(1500, ns("1.5us"));
    assert_i64(461, ns("461.000000ns"));
    assert_i64(1, ns("0.000001ms"));
    assert_i64(42000, ns("0042.00us"));
    /* the int64 edge */
    assert_i64(INT64_MAX, ns("9223372036.854775807s"));
    assert_i64(INT64_MAX, ns("9223372036854775807ns"));
}

static void test_time_invalid(void **state)
{
    (void)state;
    static const char *const syntax[] = {"",     "ms",     "12.3xs", "12.3",  "12",   ".5ms", "1.ms",
                                         "-1ms", "+1ms",   "1e3ms",  "1,5ms", " 1ms", "1ms ", "1 ms",
                                         "1MS",  "1.0sec", "1.0m",   "1.0 s", "1..0s", "nan s", "0x10ns"};
    for (size_t i = 0; i < sizeof syntax / sizeof syntax[0]; i++) {
        if (time_rc(syntax[i]) != TOPS_TIME_SYNTAX) {
            print_error("'%s' not rejected as a syntax error\n", syntax[i]);
            fail();
        }
    }
    assert_int_equal(time_rc("0.5ns"), TOPS_TIME_FINE);
    assert_int_equal(time_rc("1.0001us"), TOPS_TIME_FINE);
    assert_int_equal(time_rc("1.2345678901s"), TOPS_TIME_FINE);
    assert_int_equal(time_rc("9223372036.854775808s"), TOPS_TIME_RANGE);
    assert_int_equal(time_rc("9223372037s"), TOPS_TIME_RANGE);
    assert_int_equal(time_rc("99999999999999999999ns"), TOPS_TIME_RANGE);
}

/* ---- the manual's examples ---------------------------------------------------- */

static void test_shared_summary(void **state)
{
    (void)state;
    char path[PATH_MAX];
    SHARED_OR_SKIP(path, "summary_example.txt");
    assert_int_equal(tops_is_listing(path), 1);
    tb_error err;
    assert_int_equal(parse_path(path, &err), TB_OK);

    /* GCU: 3 rows, then Accumulate Time and Total Time */
    assert_int_equal(count('S', "GCU"), 3);
    check_stat(nth('S', "GCU", 0), "GCU", -1, 13, 86.86, 56610000, 1, 56610000, 56610000, 56610000,
               "scalar_add(float*, float*, float*, unsigned long)");
    check_stat(nth('S', "GCU", 1), "GCU", -1, 14, 13.12, 8550000, 1, 8550000, 8550000, 8550000,
               "vector_add(float*, float*, float*, unsigned long)");
    check_stat(nth('S', "GCU", -1), "GCU", -1, 15, 0.02, 13440, 1, 13440, 13440, 13440, "warm_up()");
    assert_int_equal(nth('S', "GCU", 0)->pid, 499);

    /* CPU: no data */
    assert_int_equal(count('S', "CPU"), 0);
    assert_int_equal(count('N', NULL), 1);
    const item *nd = nth('N', NULL, 0);
    assert_string_equal(nd->klass, "CPU");
    assert_string_equal(nd->name, "cpu kernel");
    assert_int_equal(nd->line, 21);
    assert_int_equal(nd->device, -1);
    assert_int_equal(nd->pid, 499);

    /* RUNTIME: 27 rows, an Accumulate Time line and no Total Time */
    assert_int_equal(count('S', "RUNTIME"), 27);
    check_stat(nth('S', "RUNTIME", 0), "RUNTIME", -1, 24, 36.19, 171850000, 5, 34370000, 11530000, 122740000,
               "Stream_Synchronize");
    check_stat(nth('S', "RUNTIME", 14), "RUNTIME", -1, 38, 0.04, 200260, 12, 16690, 461, 41310,
               "TSStream_AutoReleaseResource");
    check_stat(nth('S', "RUNTIME", -1), "RUNTIME", -1, 50, 0.00, 3690, 3, 1230, 952, 1500,
               "Stream_UpdateImplicitParameter");
    assert_int_equal(count('S', NULL), 30);

    /* totals, and the footers agree with the rows */
    assert_int_equal(count('O', NULL), 2);
    check_total(nth('O', NULL, 0), "GCU", -1, 16, 65170000, 3, 636730000);
    check_total(nth('O', NULL, 1), "RUNTIME", -1, 51, 474790000, 509, -1);
    assert_int_equal(nth('O', NULL, 0)->from_trace, 0);
    assert_i64(3, sum_calls("GCU", -1));
    assert_i64(509, sum_calls("RUNTIME", -1));

    /* file order: GCU rows, GCU total, CPU no data, RUNTIME rows, RUNTIME total */
    assert_int_equal(rec.v[3].kind, 'O');
    assert_int_equal(rec.v[4].kind, 'N');
    assert_int_equal(rec.v[5].kind, 'S');
    assert_int_equal(rec.v[rec.n - 1].kind, 'O');
    assert_int_equal(rec.n, 3 + 1 + 1 + 27 + 1);
}

static void test_shared_trace(void **state)
{
    (void)state;
    char path[PATH_MAX];
    SHARED_OR_SKIP(path, "trace_example.txt");
    assert_int_equal(tops_is_listing(path), 1);
    tb_error err;
    assert_int_equal(parse_path(path, &err), TB_OK);
    assert_int_equal(count('T', "GCU"), 3);
    assert_int_equal(count('S', NULL), 0);
    check_trace(nth('T', NULL, 0), 13, 0, 13320, "", "warm_up()");
    check_trace(nth('T', NULL, 1), 14, 424480000, 56610000, "", "scalar_add(float*, float*, float*, unsigned long)");
    check_trace(nth('T', NULL, -1), 15, 629170000, 8540000, "", "vector_add(float*, float*, float*, unsigned long)");
    assert_int_equal(nth('T', NULL, 0)->pid, 880);
    assert_int_equal(nth('T', NULL, 0)->device, -1);
    assert_int_equal(count('O', NULL), 1);
    check_total(nth('O', NULL, 0), "GCU", -1, 16, 65160000, 3, 637720000);
    assert_int_equal(nth('O', NULL, 0)->from_trace, 1);
    assert_int_equal(rec.n, 4);
}

/* ---- the checked-in samples --------------------------------------------------- */

static void test_sample_summary_per_gcu(void **state)
{
    (void)state;
    char path[PATH_MAX];
    if (!source_file(path, sizeof path, "samples/topsprof/summary_per_gcu.txt", 0)) {
        print_message("skipped: samples/topsprof not found from %s\n", __FILE__);
        skip();
    }
    assert_int_equal(tops_is_listing(path), 1);
    tb_error err;
    assert_int_equal(parse_path(path, &err), TB_OK);
    assert_int_equal(rec.n, 12);
    /* device 0 */
    check_stat(&rec.v[0], "GCU", 0, 15, 75.0, 1200000000, 4, 300000000, 250000000, 350000000,
               "fused_matmul_gelu(half*, half*, int)");
    check_stat(&rec.v[1], "GCU", 0, 16, 25.0, 400000000, 8, 50000000, 1000000, 99000000, "layer_norm");
    check_total(&rec.v[2], "GCU", 0, 17, 1600000000, 12, 2000000000);
    assert_int_equal(rec.v[3].kind, 'N');
    assert_string_equal(rec.v[3].klass, "CPU");
    assert_int_equal(rec.v[3].device, 0);
    check_stat(&rec.v[4], "RUNTIME", 0, 25, 99.99, 10000000, 2, 5000000, 4000000, 6000000, "Stream_Synchronize");
    check_stat(&rec.v[5], "RUNTIME", 0, 26, 0.01, 1500, 3, 500, 100, 1300, "Stream_LaunchKernelAsync");
    check_total(&rec.v[6], "RUNTIME", 0, 27, 10000000, 5, -1);
    /* device 1 (the unprefixed agent line on line 29 is skipped) */
    check_stat(&rec.v[7], "GCU", 1, 33, 100.0, 1100000000, 4, 275000000, 270000000, 280000000,
               "fused_matmul_gelu(half*, half*, int)");
    check_total(&rec.v[8], "GCU", 1, 34, 1100000000, 4, 1900000000);
    assert_int_equal(rec.v[9].kind, 'N');
    assert_int_equal(rec.v[9].device, 1);
    check_stat(&rec.v[10], "RUNTIME", 1, 42, 100.0, 9200000, 2, 4600000, 4100000, 5100000, "Stream_Synchronize");
    check_total(&rec.v[11], "RUNTIME", 1, 43, 9200000, 2, -1);
    for (size_t i = 0; i < rec.n; i++)
        assert_int_equal(rec.v[i].pid, 4242);
    /* the footers agree with the rows */
    assert_i64(12, sum_calls("GCU", 0));
    assert_i64(5, sum_calls("RUNTIME", 0));
    assert_i64(4, sum_calls("GCU", 1));
    assert_i64(2, sum_calls("RUNTIME", 1));
}

static void test_sample_trace_nodes(void **state)
{
    (void)state;
    char path[PATH_MAX];
    if (!source_file(path, sizeof path, "samples/topsprof/trace_nodes.txt", 0)) {
        print_message("skipped: samples/topsprof not found from %s\n", __FILE__);
        skip();
    }
    assert_int_equal(tops_is_listing(path), 1);
    tb_error err;
    assert_int_equal(parse_path(path, &err), TB_OK);
    assert_int_equal(rec.n, 6);
    check_trace(&rec.v[0], 9, 0, 13320, "", "warm_up()");
    check_trace(&rec.v[1], 10, 1500, 461, "embedding/gather", "gather_kernel(int*, half*, long)");
    check_trace(&rec.v[2], 11, 2250000, 1200000000, "decoder/layer_0/attn/qkv_matmul",
                "fused_matmul_gelu(half*, half*, int)");
    check_trace(&rec.v[3], 12, 1210000000, 400000000, "decoder/layer_0/mlp/down_proj/matmul_1",
                "matmul_kernel(half*, half*, half*)");
    check_trace(&rec.v[4], 13, 1620000000, 50000, "", "layer_norm");
    check_total(&rec.v[5], "GCU", -1, 14, 1600000000, 5, 1620000000);
    for (size_t i = 0; i < rec.n; i++) {
        assert_int_equal(rec.v[i].pid, -1);
        assert_string_equal(rec.v[i].klass, "GCU");
    }
}

/* ---- synthetic listings ----------------------------------------------------- */

static void test_no_prefix_every_unit(void **state)
{
    (void)state;
    /* no prefix, CRLF line ends, a tab, trailing blanks, a name with spaces,
       every unit, and a RUNTIME footer without Total Time at the end of the file */
    parse_ok("noprefix.txt",
             "     Time(%)     Time  Calls      Avg      Min      Max  Name\r\n"
             "GCU activities:\r\n"
             "      60.00%    1.20s      3 400.00ms 300.00ms 500.00ms matmul (fused, bf16)  \r\n"
             "      40.00% 800.00ms     16  50.00ms  10.00us 461.00ns copy\tkernel\r\n"
             "    Accumulate Time 2.00s, Total Calls 19\r\n"
             "    Total Time 2.50s\r\n"
             "\r\n"
             "RUNTIME activities:\r\n"
             "     100.00%  13.44us      2   6.72us   1.00us  12.44us Stream_Synchronize\r\n"
             "    Accumulate Time 13.44us, Total Calls 2");
    assert_int_equal(rec.n, 5);
    check_stat(&rec.v[0], "GCU", -1, 3, 60.0, 1200000000, 3, 400000000, 300000000, 500000000,
               "matmul (fused, bf16)");
    check_stat(&rec.v[1], "GCU", -1, 4, 40.0, 800000000, 16, 50000000, 10000, 461, "copy\tkernel");
    check_total(&rec.v[2], "GCU", -1, 5, 2000000000, 19, 2500000000);
    check_stat(&rec.v[3], "RUNTIME", -1, 9, 100.0, 13440, 2, 6720, 1000, 12440, "Stream_Synchronize");
    check_total(&rec.v[4], "RUNTIME", -1, 10, 13440, 2, -1);
    for (size_t i = 0; i < rec.n; i++)
        assert_int_equal(rec.v[i].pid, -1);

    /* a section without a header line, and a blank line before the footer */
    parse_ok("noheader.txt",
             "GCU activities:\n"
             "  1.00%  1.00ms  1  1.00ms  1.00ms  1.00ms a\n"
             "\n"
             "  Accumulate Time 1.00ms, Total Calls 1\n");
    assert_int_equal(rec.n, 2);
    check_stat(&rec.v[0], "GCU", -1, 2, 1.0, 1000000, 1, 1000000, 1000000, 1000000, "a");
    check_total(&rec.v[1], "GCU", -1, 4, 1000000, 1, -1);

    /* a UTF-8 byte order mark and a prefix on the header only decides the prefix */
    parse_ok("bom.txt",
             "\xEF\xBB\xBF==7== GCU activities:\n"
             "==7==  1.00%  2.00ns  1  2.00ns  2.00ns  2.00ns a\n");
    assert_int_equal(rec.n, 1);
    check_stat(&rec.v[0], "GCU", -1, 2, 1.0, 2, 1, 2, 2, 2, "a");
    assert_int_equal(rec.v[0].pid, 7);
}

static void test_per_device_split(void **state)
{
    (void)state;
    /* nvprof's device line, then the plain "GCU <n>:" form and "GCU[<n>]" */
    parse_ok("perdev.txt",
             "==12== Device \"Enflame T20 (0)\"\n"
             "==12==      Time(%)     Time  Calls      Avg      Min      Max  Name\n"
             "==12== GCU activities:\n"
             "==12==      100.00%   1.00ms      1   1.00ms   1.00ms   1.00ms k0\n"
             "==12==     Accumulate Time 1.00ms, Total Calls 1\n"
             "==12==     Total Time 2.00ms\n"
             "==12== RUNTIME activities:\n"
             "==12==      100.00%   3.00us      1   3.00us   3.00us   3.00us Stream_Synchronize\n"
             "==12==     Accumulate Time 3.00us, Total Calls 1\n"
             "==12==\n"
             "==12== GCU 3:\n"
             "==12== GCU activities:\n"
             "==12==      100.00%   4.00ms      2   2.00ms   1.00ms   3.00ms k1\n"
             "==12==     Accumulate Time 4.00ms, Total Calls 2\n"
             "==12== GCU[7]\n"
             "==12== GCU activities:\n"
             "==12==      100.00%   5.00ms      1   5.00ms   5.00ms   5.00ms k2\n");
    assert_int_equal(rec.n, 7);
    check_stat(&rec.v[0], "GCU", 0, 4, 100.0, 1000000, 1, 1000000, 1000000, 1000000, "k0");
    check_total(&rec.v[1], "GCU", 0, 5, 1000000, 1, 2000000);
    check_stat(&rec.v[2], "RUNTIME", 0, 8, 100.0, 3000, 1, 3000, 3000, 3000, "Stream_Synchronize");
    /* the RUNTIME total waits for a possible Total Time: the device line flushes it */
    check_total(&rec.v[3], "RUNTIME", 0, 9, 3000, 1, -1);
    check_stat(&rec.v[4], "GCU", 3, 13, 100.0, 4000000, 2, 2000000, 1000000, 3000000, "k1");
    check_total(&rec.v[5], "GCU", 3, 14, 4000000, 2, -1);
    /* the device line flushed device 3's total; device 7's section has no footer: no total */
    check_stat(&rec.v[6], "GCU", 7, 17, 100.0, 5000000, 1, 5000000, 5000000, 5000000, "k2");

    /* nvprof's inline class ("GPU activities:" on the first row) */
    parse_ok("inline.txt",
             "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
             " GCU activities:   90.00%  9.00ms         1  9.00ms  9.00ms  9.00ms first one\n"
             "                   10.00%  1.00ms         1  1.00ms  1.00ms  1.00ms second\n");
    assert_int_equal(rec.n, 2);
    check_stat(&rec.v[0], "GCU", -1, 2, 90.0, 9000000, 1, 9000000, 9000000, 9000000, "first one");
    check_stat(&rec.v[1], "GCU", -1, 3, 10.0, 1000000, 1, 1000000, 1000000, 1000000, "second");
}

static void test_class_without_data(void **state)
{
    (void)state;
    parse_ok("nodata.txt",
             "==5== does not contain gcu kernel data.\n" /* outside any section: progress output */
             "==5== GCU activities:\n"
             "==5==     does not contain gcu kernel data.\n"
             "==5==\n"
             "==5== CPU activities:\n"
             "==5==     does not contain cpu kernel data.\n"
             "==5== RUNTIME activities:\n"
             "==5==     does not contain runtime api data\n");
    assert_int_equal(rec.n, 3);
    const char *klass[3] = {"GCU", "CPU", "RUNTIME"};
    const char *what[3] = {"gcu kernel", "cpu kernel", "runtime api"};
    long line[3] = {3, 6, 8};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rec.v[i].kind, 'N');
        assert_string_equal(rec.v[i].klass, klass[i]);
        assert_string_equal(rec.v[i].name, what[i]);
        assert_int_equal(rec.v[i].line, line[i]);
        assert_int_equal(rec.v[i].pid, 5);
    }
    assert_int_equal(count('S', NULL), 0);
    assert_int_equal(count('O', NULL), 0);

    /* NULL callbacks: everything is skipped, nothing fails */
    char path[PATH_MAX];
    write_str(path, sizeof path, "nocb.txt", "GCU activities:\n 1.00% 1ns 1 1ns 1ns 1ns a\n");
    tb_error err;
    assert_int_equal(tops_parse(path, &(tops_callbacks){0}, &err), TB_OK);
    assert_int_equal(tops_parse(path, NULL, NULL), TB_OK);
}

static void test_malformed_time(void **state)
{
    (void)state;
    /* line 3, the Time column starts at byte 16 (12 + 3 blanks + 1) */
    parse_fails("badtime.txt",
                "GCU activities:\n"
                "      86.86%  56.61ms      1  56.61ms  56.61ms  56.61ms ok_row\n"
                "      13.12%   12.3xs      1   8.55ms   8.55ms   8.55ms bad_row\n",
                TB_ERR_PARSE, 3, 16, "bad time '12.3xs'");
    /* the row before it was delivered */
    assert_int_equal(rec.n, 1);
    assert_string_equal(rec.v[0].name, "ok_row");

    /* with the prefix, columns count from the line's start: 8 + 30 + 1 */
    tb_error err;
    char path[PATH_MAX];
    write_str(path, sizeof path, "badtime2.txt",
              "==499== RUNTIME activities:\n"
              "==499==       36.19% 171.85ms      5  34.37ms  11.53mz 122.74ms Stream_Synchronize\n");
    assert_int_equal(parse_path(path, &err), TB_ERR_PARSE);
    assert_string_equal(err.message, "bad time '11.53mz'");
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 48);
    assert_i64(28 + 47, err.offset);
    assert_string_equal(err.file, path);

    parse_fails("fine.txt", "GCU trace:\n  0.5ns  1.00us  k\n", TB_ERR_PARSE, 2, 3, "time finer than 1 ns '0.5ns'");
    /* a trace row's time beyond int64 ns: INT64_MAX, which the importer skips as
       outside the stored range; a statistics row's is an error */
    parse_ok("range.txt", "GCU trace:\n  1.00ns  9999999999.00s  k\n");
    assert_int_equal(rec.n, 1);
    check_trace(&rec.v[0], 2, 1, INT64_MAX, "", "k");
    parse_fails("range2.txt", "GCU activities:\n  1.00%  9999999999.00s  1  1ns  1ns  1ns k\n", TB_ERR_PARSE, 2, 10,
                "time out of range '9999999999.00s'");
    parse_fails("badacc.txt", "GCU activities:\n  Accumulate Time 65.1.7ms, Total Calls 3\n", TB_ERR_PARSE, 2, 19,
                "bad time '65.1.7ms'");
    parse_fails("badtotal.txt", "GCU activities:\n  Accumulate Time 1ms, Total Calls 3\n  Total Time 636,73ms\n",
                TB_ERR_PARSE, 3, 14, "bad time '636,73ms'");
}

static void test_malformed_rows(void **state)
{
    (void)state;
    static const char head[] = "GCU activities:\n";
    char text[512];
#define ROW(r) (snprintf(text, sizeof text, "%s%s\n", head, r), text)
    parse_fails("pct.txt", ROW("  86.86  1ms 1 1ms 1ms 1ms k"), TB_ERR_PARSE, 2, 3, "bad percentage '86.86'");
    parse_fails("pct2.txt", ROW("  x%  1ms 1 1ms 1ms 1ms k"), TB_ERR_PARSE, 2, 3, "bad percentage 'x%'");
    parse_fails("calls.txt", ROW("  1.00%  1ms 1.5 1ms 1ms 1ms k"), TB_ERR_PARSE, 2, 14, "bad call count '1.5'");
    parse_fails("calls2.txt", ROW("  1.00%  1ms -1 1ms 1ms 1ms k"), TB_ERR_PARSE, 2, 14, "bad call count '-1'");
    parse_fails("noname.txt", ROW("  1.00%  1ms 1 1ms 1ms 1ms   "), TB_ERR_PARSE, 2, 27,
                "missing column 'Name', expected Time(%) Time Calls Avg Min Max Name");
    parse_fails("short.txt", ROW("  1.00%  1ms 1 1ms"), TB_ERR_PARSE, 2, 19,
                "missing column 'Min', expected Time(%) Time Calls Avg Min Max Name");
    parse_fails("noise.txt", ROW("[03-15-30] LOCAL: success connect to server"), TB_ERR_PARSE, 2, 1,
                "bad percentage '[03-15-30]'");
    /* trace rows */
    parse_fails("tshort.txt", "GCU trace:\n  1.00ns\n", TB_ERR_PARSE, 2, 9,
                "missing column 'Duration', expected Start Duration Node Name Name");
    parse_fails("tnoname.txt", "GCU trace:\n  1.00ns 2.00ns \n", TB_ERR_PARSE, 2, 16,
                "missing column 'Name', expected Start Duration Node Name Name");
    /* footers */
    parse_fails("acc1.txt", "==1== Accumulate Time 1ms, Total Calls 3\n", TB_ERR_PARSE, 1, 7,
                "'Accumulate Time' outside an activities or trace section");
    parse_fails("acc2.txt", ROW("  Accumulate Time 1ms Total Calls 3"), TB_ERR_PARSE, 2, 23,
                "expected 'Accumulate Time <t>, Total Calls <n>'");
    parse_fails("acc3.txt", ROW("  Accumulate Time 1ms, Total Calls 3x"), TB_ERR_PARSE, 2, 36,
                "bad call count '3x'");
    parse_fails("acc4.txt", ROW("  Accumulate Time 1ms, Total Calls 3 more"), TB_ERR_PARSE, 2, 38,
                "unexpected text after the total calls 'more'");
    parse_fails("acc5.txt", ROW("  Accumulate Time"), TB_ERR_PARSE, 2, 18,
                "expected 'Accumulate Time <t>, Total Calls <n>'");
    parse_fails("tot1.txt", ROW("  Accumulate Time 1ms, Total Calls 3\n  Total Time 2ms\n  Total Time 2ms"),
                TB_ERR_PARSE, 4, 3, "'Total Time' outside an activities or trace section");
    parse_fails("tot2.txt", ROW("  Total Time 2ms 3ms"), TB_ERR_PARSE, 2, 18,
                "unexpected text after the total time '3ms'");
#undef ROW
    /* no table at all, an empty file, a missing file */
    parse_fails("none.txt", "$ topsprof ./app\n==1== TOPSPROF is profiling process 1\n", TB_ERR_PARSE, 0, 0,
                "no topsprof table found, expected a 'GCU activities:' or 'GCU trace:' section or its CSV header");
    parse_fails("empty.txt", "", TB_ERR_PARSE, 0, 0,
                "no topsprof table found, expected a 'GCU activities:' or 'GCU trace:' section or its CSV header");
    char path[PATH_MAX];
    tmp_path(path, sizeof path, "does-not-exist.txt");
    tb_error err;
    assert_int_equal(parse_path(path, &err), TB_ERR_IO);
    assert_string_equal(err.message, "cannot open: No such file or directory");
    assert_string_equal(err.file, path);
}

static void test_trace_node_names(void **state)
{
    (void)state;
    /* columns as the manual prints them: "%10s %10s %32s %s"; node names of
       31, 32 (fills the column) and 33 characters (one too wide), a start
       wider than its column (the row shifts right by one), a name that
       starts one column late (misaligned: the rest is the Name), and a row
       cut short before the Name column */
    parse_ok("nodes.txt",
             "==9==      Start   Duration                        Node Name Name\n"
             "==9== GCU trace:\n"
             "==9==     1.00us     2.00us  aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa f(int, int)\n"
             "==9==     2.00us     2.00us bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb g (x)\n"
             "==9==     3.00us     2.00us ccccccccccccccccccccccccccccccccc h y\n"
             "==9== 12345.678ms     2.00us                 node with spaces k(a, b)\n"
             "==9==     5.00us     2.00us                                   late name\n"
             "==9==     6.00us     2.00us\tnode\tname\n");
    assert_int_equal(rec.n, 6);
    check_trace(&rec.v[0], 3, 1000, 2000, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "f(int, int)");
    check_trace(&rec.v[1], 4, 2000, 2000, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "g (x)");
    check_trace(&rec.v[2], 5, 3000, 2000, "ccccccccccccccccccccccccccccccccc", "h y");
    check_trace(&rec.v[3], 6, 12345678000, 2000, "node with spaces", "k(a, b)");
    check_trace(&rec.v[4], 7, 5000, 2000, "", "late name");
    check_trace(&rec.v[5], 8, 6000, 2000, "", "node\tname");

    /* no header: no Node Name column, the rest is the Name */
    parse_ok("nohdr.txt", "GCU trace:\n  1.00us  2.00us   some node  f(x)\n");
    assert_int_equal(rec.n, 1);
    check_trace(&rec.v[0], 2, 1000, 2000, "", "some node  f(x)");
    /* a header without Node Name */
    parse_ok("nonode.txt", "  Start  Duration Name\nGCU trace:\n  1.00us  2.00us   a b\n");
    check_trace(&rec.v[0], 3, 1000, 2000, "", "a b");
    /* rows right after the header, before any class line: GCU */
    parse_ok("hdronly.txt", "     Start   Duration                        Node Name Name\n"
                            "    1.00ns     1.00ns                                  k\n");
    check_trace(&rec.v[0], 2, 1, 1, "", "k");
    assert_string_equal(rec.v[0].klass, "GCU");
}

static void test_noise_interleaved(void **state)
{
    (void)state;
    /* progress lines before the table (prefixed or not), agent lines without
       the prefix inside it, and topsprof's own lines after a footer */
    parse_ok("noise.txt",
             "$ topsprof --enable-activities operator ./app\n"
             "==3== TOPSPROF is profiling process 3, session: 1, command: ./app\n"
             "[03-15-30] LOCAL: success connect to server\n"
             "process profile data[=====] 100% 0.015s\n"
             "==3==      Time(%)     Time  Calls      Avg      Min      Max  Name\n"
             "==3== GCU activities:\n"
             "[03-15-31] LOCAL: profile agent config done: 11000\n"
             "==3==       50.00%   1.00ms      1   1.00ms   1.00ms   1.00ms a, b\n"
             "ok echo\n"
             "==3==       50.00%   1.00ms      1   1.00ms   1.00ms   1.00ms c\n"
             "==3==     Accumulate Time 2.00ms, Total Calls 2\n"
             "==3== Generated result file: /tmp/x.csv\n"
             "==3== does not contain anything data.\n");
    assert_int_equal(rec.n, 3);
    check_stat(&rec.v[0], "GCU", -1, 8, 50.0, 1000000, 1, 1000000, 1000000, 1000000, "a, b");
    check_stat(&rec.v[1], "GCU", -1, 10, 50.0, 1000000, 1, 1000000, 1000000, 1000000, "c");
    /* the total is handed out when the next line shows no Total Time follows */
    check_total(&rec.v[2], "GCU", -1, 11, 2000000, 2, -1);
}

static void test_csv_export(void **state)
{
    (void)state;
    /* statistics: units in the values, quoted names holding commas and quotes,
       a class column, extra columns ignored, CRLF */
    parse_ok("stats.csv",
             "Type,Time(%),Time,Calls,Avg,Min,Max,Name,Extra\r\n"
             "GCU activities,86.86%,56.61ms,1,56.61ms,56.61ms,56.61ms,\"scalar_add(float*, float*)\",x\r\n"
             "GCU activities,13.14,8.55ms,2,4.27ms,1.20s,461.00ns,\"say \"\"hi\"\"\",\r\n"
             "RUNTIME activities,100.00%,13.44us,3,4.48us,1.00us,10.00us,Stream_Synchronize,\r\n");
    assert_int_equal(rec.n, 3);
    check_stat(&rec.v[0], "GCU", -1, 2, 86.86, 56610000, 1, 56610000, 56610000, 56610000,
               "scalar_add(float*, float*)");
    check_stat(&rec.v[1], "GCU", -1, 3, 13.14, 8550000, 2, 4270000, 1200000000, 461, "say \"hi\"");
    check_stat(&rec.v[2], "RUNTIME", -1, 4, 100.0, 13440, 3, 4480, 1000, 10000, "Stream_Synchronize");

    /* nvprof-style: units in a row after the header, class from class lines */
    parse_ok("units.csv",
             "GCU activities:\n"
             "\"Time(%)\",\"Time\",\"Calls\",\"Avg\",\"Min\",\"Max\",\"Name\"\n"
             "%,ms,,ms,us,ms,\n"
             "86.86,56.61,1,56.61,56610.00,56.61,\"scalar_add(float*, float*)\"\n"
             "  Accumulate Time 56.61ms, Total Calls 1\n"
             "RUNTIME activities:\n"
             "100.00,0.5,2,0.25,250,0.25,Stream_Synchronize\n");
    assert_int_equal(rec.n, 3);
    check_stat(&rec.v[0], "GCU", -1, 4, 86.86, 56610000, 1, 56610000, 56610000, 56610000,
               "scalar_add(float*, float*)");
    check_total(&rec.v[1], "GCU", -1, 5, 56610000, 1, -1);
    check_stat(&rec.v[2], "RUNTIME", -1, 7, 100.0, 500000, 2, 250000, 250000, 250000, "Stream_Synchronize");

    /* units in the header, device and pid columns, columns in another order */
    parse_ok("hdrunits.csv",
             "Name,Device,Pid,Calls,Time (us),Min(ns),Max(s)\n"
             "k,2,77,4,1.5,3,0.000000004\n");
    assert_int_equal(rec.n, 1);
    check_stat(&rec.v[0], "", 2, 2, -1, 1500, 4, -1, 3, 4, "k");
    assert_int_equal(rec.v[0].pid, 77);

    /* trace export with a Node Name column; no class anywhere: GCU */
    parse_ok("trace.csv",
             "Start,Duration,Node Name,Name\n"
             "0.00ns,13.32us,,warm_up()\n"
             "424.48ms,56.61ms,layer_0/add,\"scalar_add(float*, float*, float*, unsigned long)\"\n");
    assert_int_equal(rec.n, 2);
    check_trace(&rec.v[0], 2, 0, 13320, "", "warm_up()");
    check_trace(&rec.v[1], 3, 424480000, 56610000, "layer_0/add", "scalar_add(float*, float*, float*, unsigned long)");
    assert_string_equal(rec.v[1].klass, "GCU");
    /* a trace Start beyond int64 ns: INT64_MAX (the importer skips it); a
       statistics Time beyond it: an error */
    parse_ok("trace_range.csv", "Start,Duration,Name\n99999999999999999999ns,1ns,far\n");
    assert_int_equal(rec.n, 1);
    check_trace(&rec.v[0], 2, INT64_MAX, 1, "", "far");
    parse_fails("stat_range.csv", "Time,Calls,Name\n99999999999999999999ns,1,far\n", TB_ERR_PARSE, 2, 1,
                "time out of range '99999999999999999999ns' in column 'Time'");

    /* lines split by csv.c's rules: "" inside quotes, text after a closing quote kept */
    parse_ok("csvquotes.csv", "Time,Calls,Name\n1ms,1,\"a, \"\"b\"\"\"c\n");
    assert_int_equal(rec.n, 1);
    check_stat(&rec.v[0], "", -1, 2, -1, 1000000, 1, -1, -1, -1, "a, \"b\"c");

    /* errors name the line, the column where the field starts, and the column */
    parse_fails("csvbad.csv", "Time(%),Time,Calls,Avg,Min,Max,Name\n1.00%,1ms,1,1ms,12.3xs,1ms,k\n", TB_ERR_PARSE,
                2, 17, "bad time '12.3xs' in column 'Min'");
    parse_fails("csvnounit.csv", "Time(%),Time,Calls,Avg,Min,Max,Name\n1.00%,1ms,1,1ms,12,1ms,k\n", TB_ERR_PARSE, 2,
                17, "bad time '12' in column 'Min' (no unit in the value or header)");
    parse_fails("csvcols.csv", "Time(%),Time,Calls,Avg,Min,Max,Name\n1.00%,1ms,1\n", TB_ERR_PARSE, 2, 1,
                "expected 7 columns as in the header, got 3");
    parse_fails("csvquote.csv", "Time,Calls,Name\n1ms,1,\"unterminated, name\n", TB_ERR_PARSE, 2, 7,
                "unterminated quoted field");
    parse_fails("csvcalls.csv", "Time,Calls,Name\n1ms,x,k\n", TB_ERR_PARSE, 2, 5, "bad call count 'x'");
    parse_fails("csvname.csv", "Time,Calls,Name\n1ms,1, \n", TB_ERR_PARSE, 2, 7, "missing value in column 'Name'");
    parse_fails("csvone.csv", "Time,Calls,Name\nlonely\n", TB_ERR_PARSE, 2, 1,
                "expected 3 columns as in the header, got 1");
}

/* Layouts of public files and reports: statistics exports with the class in
 * a Type column, followed by a counter tool's tables; units in the header;
 * a trace header naming the unit of bare times. */
static void test_export_variants(void **state)
{
    (void)state;
    /* rows "GCU activities,..." with units in the values; the counter tables after them are not ours */
    parse_ok("tcu.csv",
             "Type,Time(%),Time,Calls,Avg,Min,Max,Name\n"
             "GCU activities,75.00%,300.00us,3,100.00us,90.00us,110.00us,add_kernel\n"
             "GCU activities,25.00%,100.00us,1,100.00us,100.00us,100.00us,mul_kernel\n"
             ",Kernel Name,Invocations\n"
             ",\"add_kernel <<<8,1,1>>> <<<2,1,1>>> <<<1,1,1>>>\",3\n"
             ",SIP/BUSY,CYCLE,1200.5\n"
             "Type,Die,SIP,Minimum,Maximum,Average,Invocations\n"
             "GCU Metric,0,0,1000,1400,1200,3\n"
             "GCU Metric,1,0,1100,1300,1200,3\n");
    assert_int_equal(rec.n, 2);
    check_stat(&rec.v[0], "GCU", -1, 2, 75.0, 300000, 3, 100000, 90000, 110000, "add_kernel");
    check_stat(&rec.v[1], "GCU", -1, 3, 25.0, 100000, 1, 100000, 100000, 100000, "mul_kernel");
    /* a later statistics header opens a table again */
    parse_ok("tcu2.csv",
             "Type,Time(%),Time,Calls,Avg,Min,Max,Name\n"
             "GCU activities,100.00%,1.00ms,1,1.00ms,1.00ms,1.00ms,a\n"
             "GCU Metric,0,0,1,1,1,1\n"
             "Type,Time(%),Time,Calls,Avg,Min,Max,Name\n"
             "RUNTIME activities,100.00%,2.00us,2,1.00us,1.00us,1.00us,b\n");
    assert_int_equal(rec.n, 2);
    check_stat(&rec.v[1], "RUNTIME", -1, 5, 100.0, 2000, 2, 1000, 1000, 1000, "b");
    /* a short row whose class names an activity class is still an error */
    parse_fails("tcu3.csv", "Type,Time(%),Time,Calls,Avg,Min,Max,Name\nGCU activities,1.00%,1ms\n", TB_ERR_PARSE,
                2, 1, "expected 8 columns as in the header, got 3");

    /* units in the header, bare numbers in the rows */
    parse_ok("vpd.csv",
             "Type,Time(%),Time(us),Calls,Avg(us),Min(us),Max(us),Name\n"
             "GCU activities,86.86,56610.5,2,28305.25,28000.001,28610.499,scalar_add\n");
    assert_int_equal(rec.n, 1);
    check_stat(&rec.v[0], "GCU", -1, 2, 86.86, 56610500, 2, 28305250, 28000001, 28610499, "scalar_add");

    /* a trace header naming the unit (after the class line); a unit in a value still wins */
    parse_ok("trunits.txt",
             "==5== GCU trace:\n"
             "==5==    Start(us)  Duration(us)  Name\n"
             "==5==        0.000        13.320  warm_up()\n"
             "==5==   424480.000     56.61ms  scalar_add(float*, float*)\n"
             "==5==     Accumulate Time 56.62ms, Total Calls 2\n");
    assert_int_equal(rec.n, 3);
    check_trace(&rec.v[0], 3, 0, 13320, "", "warm_up()");
    check_trace(&rec.v[1], 4, 424480000, 56610000, "", "scalar_add(float*, float*)");
    assert_string_equal(rec.v[1].klass, "GCU");
    assert_int_equal(rec.v[1].pid, 5);
    check_total(&rec.v[2], "GCU", -1, 5, 56620000, 2, -1);
    /* without a unit in the header, a bare number is an error */
    parse_fails("trbare.txt", "GCU trace:\n   Start   Duration  Name\n   0.000   13.32us  k\n", TB_ERR_PARSE, 3, 4,
                "bad time '0.000'");
}

static void test_sniff(void **state)
{
    (void)state;
    char path[PATH_MAX];
    static const struct {
        const char *name, *text;
        int want;
    } cases[] = {
        {"s1.txt", "==1== TOPSPROF is profiling process 1, session: 2, command: ./a\n", 1},
        {"s2.txt", "     Time(%)     Time  Calls      Avg      Min      Max  Name\n", 1},
        {"s3.txt", "     Start   Duration                        Node Name Name\n", 1},
        {"s4.txt", "junk\n==4== RUNTIME activities:\n", 1},
        {"s5.csv", "\"Time(%)\",\"Time\",\"Calls\",\"Avg\",\"Min\",\"Max\",\"Name\"\n", 1},
        {"s6.csv", "Start,Duration,Node Name,Name\n", 1},
        /* not ours */
        {"n1.json", "{\"traceEvents\": [{\"name\": \"Time\", \"ph\": \"X\"}]}\n", 0},
        {"n2.csv", "Start (ns),Duration (ns),Name\n", 0},
        {"n3.csv", "Device_id,OP Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n", 0},
        {"n4.txt", "TOPSPROF is profiling process 1\n", 0}, /* no prefix: could be anything */
        {"n5.txt", "Foo activities:\n", 0},
        {"n6.txt", "", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_str(path, sizeof path, cases[i].name, cases[i].text);
        if (tops_is_listing(path) != cases[i].want) {
            print_error("tops_is_listing(%s) != %d\n", cases[i].name, cases[i].want);
            fail();
        }
    }
    /* a table header after 63 lines of progress output is still found; after 64 not */
    char text[4096];
    size_t n = 0;
    for (int i = 0; i < 64; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "progress\n");
    snprintf(text + n, sizeof text - n, "==1== GCU activities:\n");
    write_str(path, sizeof path, "later.txt", text); /* 64 lines, then the class line */
    assert_int_equal(tops_is_listing(path), 0);
    write_str(path, sizeof path, "late.txt", text + 9); /* 63 lines, then the class line */
    assert_int_equal(tops_is_listing(path), 1);

    tmp_path(path, sizeof path, "does-not-exist.txt");
    assert_int_equal(tops_is_listing(path), 0);
}

static void test_callback_stops(void **state)
{
    (void)state;
    static const char text[] = "GCU activities:\n"
                               "  1.00% 1ns 1 1ns 1ns 1ns a\n"
                               "  1.00% 1ns 1 1ns 1ns 1ns b\n"
                               "  1.00% 1ns 1 1ns 1ns 1ns c\n"
                               "  Accumulate Time 3ns, Total Calls 3\n"
                               "  Total Time 3ns\n";
    tb_error err;
    /* the callback leaves err alone: tops_parse says where it stopped */
    rec.stop_after = 2;
    assert_int_equal(parse_text("stop.txt", text, &err), TB_ERR_DB);
    assert_int_equal(rec.n, 2);
    assert_int_equal(err.code, TB_ERR_DB);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.message, "stopped by the caller");
    /* the callback fills err itself (SQLite's message): it is kept */
    rec.fill = &err;
    assert_int_equal(parse_text("stop.txt", text, &err), TB_ERR_DB);
    assert_string_equal(err.message, "UNIQUE constraint failed");
    assert_int_equal(err.line, 0);
    /* stopping at the total, handed out at "Total Time" */
    rec.fill = NULL;
    rec.stop_after = 4;
    assert_int_equal(parse_text("stop.txt", text, &err), TB_ERR_DB);
    assert_int_equal(rec.v[3].kind, 'O');
    assert_int_equal(err.line, 6);
    /* stopping at a total flushed at the end of the file */
    rec.stop_after = 2;
    assert_int_equal(parse_text("stop2.txt", "GCU activities:\n 1% 1ns 1 1ns 1ns 1ns a\n Accumulate Time 1ns, Total Calls 1\n",
                                &err),
                     TB_ERR_DB);
    assert_int_equal(rec.v[1].kind, 'O');
    assert_int_equal(err.line, 3);
    /* and at an empty class */
    rec.stop_after = 1;
    assert_int_equal(parse_text("stop3.txt", "CPU activities:\n does not contain cpu kernel data.\n", &err), TB_ERR_DB);
    assert_int_equal(rec.v[0].kind, 'N');
    rec.stop_after = 0;
}

static void test_gzip(void **state)
{
    (void)state;
    static const char text[] = "==8== GCU trace:\n"
                               "==8==     0.00ns    13.32us                                  warm_up()\n"
                               "==8==     Accumulate Time 13.32us, Total Calls 1\n";
    char path[PATH_MAX];
    tmp_path(path, sizeof path, "trace.txt.gz");
    gzFile g = gzopen(path, "wb");
    assert_non_null(g);
    assert_int_equal(gzwrite(g, text, sizeof text - 1), (int)(sizeof text - 1));
    assert_int_equal(gzclose(g), Z_OK);
    assert_int_equal(tops_is_listing(path), 1);
    tb_error err;
    assert_int_equal(parse_path(path, &err), TB_OK);
    assert_int_equal(rec.n, 2);
    check_trace(&rec.v[0], 2, 0, 13320, "", "warm_up()");
    check_total(&rec.v[1], "GCU", -1, 3, 13320, 1, -1);

    /* cut short: the rows before the cut are delivered, then TB_ERR_TRUNCATED */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 20);
    char cut[PATH_MAX];
    tmp_path(cut, sizeof cut, "cut.txt.gz");
    f = fopen(cut, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n - 12, f), n - 12); /* drops the trailer and a little data */
    fclose(f);
    assert_int_equal(parse_path(cut, &err), TB_ERR_TRUNCATED);
    assert_non_null(strstr(err.message, "compressed input cut short"));
}

static void test_long_line(void **state)
{
    (void)state;
    /* a name of 100,000 bytes goes through (the buffer grows); a line over the cap does not */
    size_t big = 100000;
    char *text = malloc(big + 128);
    assert_non_null(text);
    int h = snprintf(text, 128, "GCU activities:\n 1%% 1ns 1 1ns 1ns 1ns ");
    memset(text + h, 'x', big);
    memcpy(text + h + big, "\n", 2);
    tb_error err;
    tb_status s = parse_text("long.txt", text, &err);
    free(text);
    assert_int_equal(s, TB_OK);
    assert_int_equal(rec.n, 1);
    assert_int_equal(strlen(rec.v[0].name), big);

    size_t huge = (size_t)3 << 20;
    text = malloc(huge + 1);
    assert_non_null(text);
    memset(text, 'y', huge);
    text[huge] = 0;
    s = parse_text("huge.txt", text, &err);
    free(text);
    assert_int_equal(s, TB_ERR_PARSE);
    assert_int_equal(err.line, 1);
    assert_string_equal(err.message, "line longer than 1048576 bytes, expected a topsprof listing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_time_units, test_teardown),
        cmocka_unit_test_teardown(test_time_invalid, test_teardown),
        cmocka_unit_test_teardown(test_shared_summary, test_teardown),
        cmocka_unit_test_teardown(test_shared_trace, test_teardown),
        cmocka_unit_test_teardown(test_sample_summary_per_gcu, test_teardown),
        cmocka_unit_test_teardown(test_sample_trace_nodes, test_teardown),
        cmocka_unit_test_teardown(test_no_prefix_every_unit, test_teardown),
        cmocka_unit_test_teardown(test_per_device_split, test_teardown),
        cmocka_unit_test_teardown(test_class_without_data, test_teardown),
        cmocka_unit_test_teardown(test_malformed_time, test_teardown),
        cmocka_unit_test_teardown(test_malformed_rows, test_teardown),
        cmocka_unit_test_teardown(test_trace_node_names, test_teardown),
        cmocka_unit_test_teardown(test_noise_interleaved, test_teardown),
        cmocka_unit_test_teardown(test_csv_export, test_teardown),
        cmocka_unit_test_teardown(test_export_variants, test_teardown),
        cmocka_unit_test_teardown(test_sniff, test_teardown),
        cmocka_unit_test_teardown(test_callback_stops, test_teardown),
        cmocka_unit_test_teardown(test_gzip, test_teardown),
        cmocka_unit_test_teardown(test_long_line, test_teardown),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
