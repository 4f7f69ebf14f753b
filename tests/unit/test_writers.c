/* SPDX-License-Identifier: MIT */
/*
 * test_writers.c - unit tests for the report writers (engine/output/):
 * atomic files, number text, and the CSV, JSON and console sinks.
 *
 * numfmt is checked value by value (scaled integers at every edge down to
 * INT64_MIN, doubles that need 15, 16 and 17 digits) and by round-tripping
 * a few thousand pseudo-random doubles. Each writer is fed the same small
 * table (an int, a scaled int, a real, a NULL, text that needs quoting or
 * escaping, UTF-8 text) and its output is compared byte for byte; the JSON
 * is also parsed back with jansson to check types and values. Invalid UTF-8
 * and NUL bytes become U+FFFD in both the CSV and the JSON (each output is
 * checked to be valid UTF-8), and repeated headers become unique JSON keys
 * while the CSV keeps them. The file
 * behaviour is checked in a fresh directory per test under a private
 * mkdtemp() directory (removed by the group teardown): CSV slices and their
 * names, destroy() without finish() leaving nothing, a signal's clean-up
 * removing the temporaries, replacing an existing file, a missing or
 * unwritable directory and a full disk (/dev/full) failing with TB_ERR_IO
 * and the path. Runs with the exit-code protocol: main returns the number
 * of failed tests.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>
#include <jansson.h>

#include "output/output.h"
#include "testutil.h"
#include "tracebook/tracebook.h"

/* ---- helpers ------------------------------------------------------------ */

/*
 * What a test holds when an assertion fails: cmocka longjmps out of the
 * test, so the per-test teardown releases these (sanitizer runs stay clean
 * and report only the failure).
 */
static tb_sink *held[4];   /* sinks made by make_* */
static char *content;      /* the last file read by slurp */
static char *mem;          /* open_memstream buffer of the console tests */
static FILE *memf;
static size_t memlen;      /* open_memstream keeps writing it: not on a stack */
static json_t *parsed;

static int test_teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
        sink_destroy(held[i]);
        held[i] = NULL;
    }
    free(content);
    content = NULL;
    if (memf)
        fclose(memf);
    memf = NULL;
    free(mem);
    mem = NULL;
    json_decref(parsed);
    parsed = NULL;
    return 0;
}

static tb_sink *hold(tb_sink *s)
{
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
        if (!held[i]) {
            held[i] = s;
            return s;
        }
    }
    sink_destroy(s);
    fail_msg("too many sinks");
    return NULL;
}

static void drop(tb_sink *s)
{
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
        if (held[i] == s)
            held[i] = NULL;
    sink_destroy(s);
}

/* Makes a fresh directory tmpdir/name; dir (PATH_MAX) gets its path. */
static void fresh_dir(char *dir, const char *name)
{
    int w = snprintf(dir, PATH_MAX, "%s/%s", tmpdir, name);
    assert_true(w > 0 && w < PATH_MAX);
    assert_int_equal(mkdir(dir, 0755), 0);
}

/* path = dir/name */
static void join(char *path, const char *dir, const char *name)
{
    int w = snprintf(path, PATH_MAX, "%s/%s", dir, name);
    assert_true(w > 0 && w < PATH_MAX);
}

/* The names in dir, sorted, joined by ',' (static buffer). */
static const char *list_dir(const char *dir)
{
    static char out[4096];
    char names[64][256];
    size_t n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        assert_true(n < 64);
        snprintf(names[n++], sizeof names[0], "%s", de->d_name);
    }
    closedir(d);
    for (size_t i = 1; i < n; i++) /* insertion sort: a handful of names */
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char t[256];
            memcpy(t, names[j], sizeof t);
            memcpy(names[j], names[j - 1], sizeof t);
            memcpy(names[j - 1], t, sizeof t);
        }
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? "," : "", names[i]);
    return out;
}

/* Reads the whole file into content; returns its length. */
static size_t slurp(const char *path)
{
    free(content);
    content = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    content = malloc(cap);
    assert_non_null(content);
    size_t k;
    while ((k = fread(content + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *p = realloc(content, cap *= 2);
            assert_non_null(p);
            content = p;
        }
    }
    fclose(f);
    content[n] = 0;
    return n;
}

/* Fails unless the file at path holds exactly lit. */
#define assert_file(path, lit)                                                            \
    do {                                                                                  \
        size_t n__ = slurp(path);                                                         \
        assert_bytes(content, n__, lit);                                                  \
    } while (0)

static void ok(tb_status st, const tb_error *err)
{
    if (st != TB_OK)
        fail_msg("expected success, got %d: %s: %s", (int)st, err->file, err->message);
}

/* ---- the table every writer gets ------------------------------------------ */

static const tb_sink_column cols[] = {
    {.header = "id", .type = TB_COL_PLAIN},
    {.header = "Time(us)", .type = TB_COL_DUR_NS},
    {.header = "ratio", .type = TB_COL_PLAIN},
    {.header = "note", .type = TB_COL_PLAIN},
    {.header = "Name, full", .type = TB_COL_PLAIN},
    {.header = "名前", .type = TB_COL_PLAIN},
};
#define NCOLS (sizeof cols / sizeof cols[0])

#define I(v) {.kind = TB_CELL_INT, .i = (v)}
#define S(v, sc) {.kind = TB_CELL_INT, .i = (v), .scale = (sc)}
#define R(v) {.kind = TB_CELL_REAL, .d = (v)}
#define N {.kind = TB_CELL_NULL}
#define T(lit) {.kind = TB_CELL_TEXT, .s = (lit), .n = sizeof(lit) - 1}

static tb_cell table[][NCOLS] = {
    {I(1), S(1234, 3), R(0), N, T("say \"hi\", ok"), T("核函数")},
    {I(-2), S(-5, 3), R(NAN), N, T(" lead"), T("line\nbreak")},
    {I(INT64_MIN), S(1000, 3), R(INFINITY), N, T("plain"), T("a\0b")},
    {I(0), S(0, 0), R(-INFINITY), N, T("trail "), T("\r")},
    {I(INT64_MAX), S(1200, 3), R(1e21), T(""), T("tab\there"), T("x\x01y")},
};
#define NROWS (sizeof table / sizeof table[0])

/* 0.1 + 0.2 cannot be a static initializer everywhere: set it here. */
static void fill_table(void)
{
    volatile double a = 0.1, b = 0.2;
    table[0][2].d = a + b;
}

/* Feeds the table (first nrows rows) to s and finishes it. */
static void feed(tb_sink *s, size_t nrows)
{
    tb_error err;
    tb_error_clear(&err);
    fill_table();
    ok(s->begin(s, cols, NCOLS, &err), &err);
    for (size_t r = 0; r < nrows; r++)
        ok(s->row(s, table[r], &err), &err);
    ok(s->finish(s, &err), &err);
}

static tb_sink *make_csv(const char *path, const csv_sink_options *opt)
{
    tb_error err;
    tb_error_clear(&err);
    tb_sink *s = NULL;
    ok(csv_sink_create(path, opt, &s, &err), &err);
    return hold(s);
}

static tb_sink *make_json(const char *path)
{
    tb_error err;
    tb_error_clear(&err);
    tb_sink *s = NULL;
    ok(json_sink_create(path, NULL, &s, &err), &err);
    return hold(s);
}

/* A console sink printing into mem (read it after finish). */
static tb_sink *make_console(const console_options *opt)
{
    memf = open_memstream(&mem, &memlen);
    assert_non_null(memf);
    tb_error err;
    tb_error_clear(&err);
    tb_sink *s = NULL;
    ok(console_sink_create(memf, opt, &s, &err), &err);
    return hold(s);
}

/* Fails unless the console printed exactly lit. */
#define assert_console(lit)                                                               \
    do {                                                                                  \
        fflush(memf);                                                                     \
        assert_bytes(mem, strlen(mem), lit);                                              \
    } while (0)

/* One single-column integer row at a time. */
static void int_row(tb_sink *s, int64_t v)
{
    tb_error err;
    tb_error_clear(&err);
    tb_cell c = {.kind = TB_CELL_INT, .i = v};
    ok(s->row(s, &c, &err), &err);
}

static const tb_sink_column one_col[] = {{.header = "n"}};

/* ---- numfmt ------------------------------------------------------------- */

#define scaled_is(v, scale, lit)                                                          \
    do {                                                                                  \
        char sb_[NUMFMT_MAX];                                                             \
        size_t sn_ = numfmt_scaled((v), (scale), sb_);                                    \
        assert_int_equal(sn_, strlen(sb_));                                               \
        assert_bytes(sb_, sn_, lit);                                                      \
    } while (0)

/* numfmt_double_exact: the fewest digits that read back */
#define double_is(v, lit)                                                                 \
    do {                                                                                  \
        char db_[NUMFMT_MAX];                                                             \
        size_t dn_ = numfmt_double_exact((v), db_);                                       \
        assert_int_equal(dn_, strlen(db_));                                               \
        assert_bytes(db_, dn_, lit);                                                      \
    } while (0)

/* numfmt_double: 15 significant digits */
#define double15_is(v, lit)                                                               \
    do {                                                                                  \
        char db_[NUMFMT_MAX];                                                             \
        size_t dn_ = numfmt_double((v), db_);                                             \
        assert_int_equal(dn_, strlen(db_));                                               \
        assert_bytes(db_, dn_, lit);                                                      \
    } while (0)

static void test_scaled(void **state)
{
    (void)state;
    scaled_is(1234, 3, "1.234");
    scaled_is(1000, 3, "1");
    scaled_is(1200, 3, "1.2");
    scaled_is(1010, 3, "1.01");
    scaled_is(-5, 3, "-0.005");
    scaled_is(-1000, 3, "-1");
    scaled_is(-1, 1, "-0.1");
    scaled_is(0, 3, "0");
    scaled_is(0, 0, "0");
    scaled_is(7, 0, "7");
    scaled_is(-7, 0, "-7");
    scaled_is(10, 0, "10"); /* zeros before the point stay */
    scaled_is(100, 1, "10");
    scaled_is(15, 1, "1.5");
    scaled_is(1, 9, "0.000000001");
    scaled_is(1000000000, 9, "1");
    scaled_is(123456789, 6, "123.456789");
    scaled_is(1724670453385978290, 3, "1724670453385978.29");
    scaled_is(INT64_MAX, 0, "9223372036854775807");
    scaled_is(INT64_MIN, 0, "-9223372036854775808");
    scaled_is(INT64_MIN, 9, "-9223372036.854775808");
    scaled_is(INT64_MAX, 9, "9223372036.854775807");
    scaled_is(INT64_MIN, 18, "-9.223372036854775808");
    scaled_is(-INT64_MAX, 18, "-9.223372036854775807");
    scaled_is(INT64_MIN + 8, 1, "-922337203685477580");
}

/* Writes sign, digits (d[0] in the 10^exp place) as a plain decimal: the text numfmt_double must give. */
static void plain_text(const char *sign, const char *dg, int exp, char *out)
{
    size_t n = 0, nd = strlen(dg);
    n += (size_t)snprintf(out, 8, "%s", sign);
    if (exp < 0) {
        out[n++] = '0';
        out[n++] = '.';
        for (int i = 0; i < -exp - 1; i++)
            out[n++] = '0';
        memcpy(out + n, dg, nd);
        n += nd;
    } else {
        for (int i = 0; i <= exp; i++)
            out[n++] = (size_t)i < nd ? dg[i] : '0';
        if (nd > (size_t)exp + 1) {
            out[n++] = '.';
            memcpy(out + n, dg + exp + 1, nd - (size_t)exp - 1);
            n += nd - (size_t)exp - 1;
        }
    }
    out[n] = 0;
}

#define plain_is(v, sign, dg, exp)                                                        \
    do {                                                                                  \
        char pw_[NUMFMT_MAX];                                                             \
        char pg_[NUMFMT_MAX];                                                             \
        plain_text((sign), (dg), (exp), pw_);                                             \
        assert_int_equal(numfmt_double_exact((v), pg_), strlen(pw_));                     \
        assert_string_equal(pg_, pw_);                                                    \
    } while (0)

/* What the writers print: 15 significant digits, no binary noise. */
static void test_double15(void **state)
{
    (void)state;
    volatile double a = 0.1, b = 0.2, one = 1, three = 3, x = 13693.2, k = 1000;
    double15_is(a + b, "0.3");
    double15_is(0.1 * 3, "0.3");
    double15_is(x / k, "13.6932");                 /* an average of times in us */
    double15_is(1.0064528000000001, "1.0064528");
    double15_is(4512.432000000001, "4512.432");
    double15_is(one / three, "0.333333333333333");
    double15_is(2.5000000000000047e-07, "0.00000025");
    double15_is(123.456, "123.456");
    double15_is(9007199254740992.0, "9007199254740992"); /* integral within 2^53: every digit */
    double15_is(9007199254740994.0, "9007199254740990"); /* past 2^53: 15 digits */
    double15_is(-123456789012345678901234.0, "-123456789012346000000000");
    double15_is(0.0, "0");
    char buf[NUMFMT_MAX];
    assert_int_equal(numfmt_double(NAN, buf), 0);
    /* what the workbook keeps: the double of that decimal */
    assert_true(numfmt_round(a + b) == 0.3);
    assert_true(numfmt_round(86.76300000000001) == 86.763);
    assert_true(numfmt_round(2.5) == 2.5);
}

/* numfmt_round as first written: print to 15 digits, read back. */
static double round_ref(double d)
{
    if (isnan(d) || isinf(d) || d == trunc(d))
        return d;
    char t[48];
    snprintf(t, sizeof t, "%.*e", NUMFMT_DIGITS - 1, d);
    return strtod(t, NULL);
}

/* numfmt_round and numfmt_round_pct, which mostly do not print, give the
 * very double the printing does: short decimals (scaled integers, ratios
 * read from SQL), computed noise, 16- and 17-digit values, any bit pattern. */
static void test_round_fast(void **state)
{
    (void)state;
    static const double fixed[] = {1.234, 0.0003, 99.99, 0.1, 0.3, 86.76300000000001, 13.693200000000001,
                                   999999999999999.0, 999999999999999.5, 1e15 + 2, 123456789012345.6,
                                   12345678901234.56, 1e-22, 3e-23, 1e22, 1e300, 5e-324, -0.0005, 2.5e-7,
                                   0.30000000000000004, 4512.432000000001, 1.0 / 3, 2.0 / 3, 100, 7};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        for (int sign = 0; sign < 2; sign++) {
            double d = sign ? -fixed[i] : fixed[i];
            assert_true(numfmt_round(d) == round_ref(d));
            assert_true(numfmt_round_pct(d) == round_ref(d / 100));
        }
    }
    char buf[64];
    for (int n = 0; n < 300000; n++) {
        uint64_t r = tu_rnd();
        double d;
        switch (n % 4) {
        case 0: /* m / 10^k, m of up to 17 digits: what a scaled time or a SQL ratio gives */
            d = (double)(int64_t)(r % 100000000000000000ull) / pow(10, (double)(tu_rnd() % 23));
            break;
        case 1: /* a computed value: a ratio of two integers */
            d = (double)(r % 10000000) / (double)(tu_rnd() % 9999 + 1);
            break;
        case 2: /* a short decimal with binary noise in its last bit */
            snprintf(buf, sizeof buf, "%llu.%03llu", (unsigned long long)(r % 100000),
                     (unsigned long long)(tu_rnd() % 1000));
            d = nextafter(strtod(buf, NULL), r & 1 ? INFINITY : -INFINITY);
            break;
        default: /* any finite double */
            memcpy(&d, &r, sizeof d);
            if (!isfinite(d))
                continue;
        }
        if (numfmt_round(d) != round_ref(d) || numfmt_round_pct(d) != round_ref(d / 100))
            fail_msg("%.17g: round %.17g (printed %.17g), pct %.17g (printed %.17g)", d, numfmt_round(d),
                     round_ref(d), numfmt_round_pct(d), round_ref(d / 100));
    }
    /* a short decimal (at most 15 digits, 1 to 22 decimals) is written as itself, both ways */
    char want[64], got[NUMFMT_MAX];
    for (int n = 0; n < 200000; n++) {
        int k = (int)(tu_rnd() % 22) + 1, sig = (int)(tu_rnd() % 15) + 1;
        uint64_t m = 0;
        for (int i = 0; i < sig; i++)
            m = m * 10 + (i ? tu_rnd() % 10 : tu_rnd() % 9 + 1);
        if (m % 10 == 0)
            m++; /* no trailing zero after the point */
        char digits[24];
        int nd = snprintf(digits, sizeof digits, "%llu", (unsigned long long)m), w = 0;
        if (tu_rnd() & 1)
            want[w++] = '-';
        if (nd <= k) {
            w += snprintf(want + w, sizeof want - (size_t)w, "0.%0*d%s", k - nd, 0, digits);
            if (k == nd) /* "%0*d" with width 0 still writes a 0 */
                snprintf(want + (want[0] == '-'), sizeof want - 1, "0.%s", digits);
        } else {
            snprintf(want + w, sizeof want - (size_t)w, "%.*s.%s", nd - k, digits, digits + nd - k);
        }
        double d = strtod(want, NULL);
        numfmt_double(d, got);
        if (strcmp(got, want))
            fail_msg("numfmt_double(%.17g): '%s', want '%s'", d, got, want);
        numfmt_double_exact(d, got);
        if (strcmp(got, want))
            fail_msg("numfmt_double_exact(%.17g): '%s', want '%s'", d, got, want);
    }
}

/* numfmt_scaled_round, which mostly divides, gives what numfmt_round gives
 * of the scaled integer: at every scale, up to 15 digits and past them. */
static void test_scaled_round(void **state)
{
    (void)state;
    static const int64_t fixed[] = {0, 1, -1, 1234, 999999999999999, -999999999999999, 1000000000000000,
                                    1234567890123456789, INT64_MAX, INT64_MIN + 1, 9007199254740993};
    for (int sc = 0; sc <= 9; sc++) {
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
            double want = numfmt_round(sc ? (double)fixed[i] / pow(10, sc) : (double)fixed[i]);
            if (numfmt_scaled_round(fixed[i], sc) != want)
                fail_msg("numfmt_scaled_round(%lld, %d): %.17g, want %.17g", (long long)fixed[i], sc,
                         numfmt_scaled_round(fixed[i], sc), want);
        }
    }
    for (int n = 0; n < 300000; n++) {
        uint64_t r = tu_rnd();
        int sc = (int)(tu_rnd() % 10);
        /* up to 19 digits, most under 10^15 (a time in ns), some past it */
        int64_t v = (int64_t)(r % (n % 3 ? 1000000000000000ull : 9000000000000000000ull));
        if (tu_rnd() & 1)
            v = -v;
        double want = numfmt_round(sc ? (double)v / pow(10, sc) : (double)v);
        if (numfmt_scaled_round(v, sc) != want)
            fail_msg("numfmt_scaled_round(%lld, %d): %.17g, want %.17g", (long long)v, sc,
                     numfmt_scaled_round(v, sc), want);
    }
}

static void test_double(void **state)
{
    (void)state;
    volatile double a = 0.1, b = 0.2, one = 1, three = 3, two = 2;
    double_is(a + b, "0.30000000000000004");
    double_is(0.1, "0.1");
    double_is(0.3, "0.3");
    double_is(1e21, "1000000000000000000000");
    double_is(3.0, "3");
    double_is(-3.0, "-3");
    double_is(100.0, "100");
    double_is(1e15, "1000000000000000");
    double_is(9007199254740992.0, "9007199254740992"); /* 2^53 */
    double_is(-9007199254740992.0, "-9007199254740992");
    double_is(9007199254740994.0, "9007199254740994"); /* past 2^53: needs 16 digits */
    double_is(1e16, "10000000000000000");
    double_is(0.0, "0");
    double_is(-0.0, "0");
    double_is(1.5, "1.5");
    double_is(-2.5, "-2.5");
    double_is(123.456, "123.456");
    double_is(0.000123, "0.000123");
    double_is(1e-7, "0.0000001");
    double_is(-1e-7, "-0.0000001");
    double_is(2.5000000000000047e-07, "0.00000025000000000000047"); /* a Variance msprof-style */
    double_is(-123456789012345678901234.0, "-123456789012345690000000"); /* 17 digits, then zeros */
    double_is(1.5e-10, "0.00000000015");
    double_is(one / three, "0.3333333333333333"); /* 16 digits */
    double_is(two / three, "0.6666666666666666");
    plain_is(1e100, "", "1", 100);
    plain_is(-1e300, "-", "1", 300);
    plain_is(DBL_MAX, "", "17976931348623157", 308); /* 17 digits, 309 places */
    plain_is(DBL_MIN, "", "22250738585072014", -308);
    plain_is(5e-324, "", "494065645841247", -324);
    plain_is(-5e-324, "-", "494065645841247", -324); /* the longest text */
    double_is(1234.567, "1234.567");
    double_is(0.1 * 3, "0.30000000000000004");

    char buf[NUMFMT_MAX] = "junk";
    assert_int_equal(numfmt_double(NAN, buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(numfmt_double(INFINITY, buf), 0);
    assert_int_equal(numfmt_double(-INFINITY, buf), 0);
}

#define unit_time_is(ns, unit, lit)                                                       \
    do {                                                                                  \
        char ub_[NUMFMT_MAX];                                                             \
        size_t un_ = numfmt_unit_time((ns), (unit), ub_);                                 \
        assert_int_equal(un_, strlen(ub_));                                               \
        assert_string_equal(ub_, lit);                                                    \
    } while (0)

/* Times as topsprof prints them: two decimals, the unit that keeps the value below 1000. */
static void test_unit_time(void **state)
{
    (void)state;
    unit_time_is(56610000, -1, "56.61ms");
    unit_time_is(13440, -1, "13.44us");
    unit_time_is(461, -1, "461.00ns");
    unit_time_is(0, -1, "0.00ns");
    unit_time_is(1200000000, -1, "1.20s");
    unit_time_is(999, -1, "999.00ns");
    unit_time_is(1000, -1, "1.00us");
    unit_time_is(13445, -1, "13.45us"); /* half up */
    unit_time_is(13444, -1, "13.44us");
    unit_time_is(999995, -1, "1.00ms"); /* would be 1000.00us: the next unit */
    unit_time_is(999994, -1, "999.99us");
    unit_time_is(999995000000, -1, "1000.00s"); /* seconds take any value */
    unit_time_is(3600000000000, -1, "3600.00s");
    unit_time_is(-1500, -1, "-1.50us");
    unit_time_is(INT64_MAX, -1, "9223372036.85s");
    unit_time_is(INT64_MIN, -1, "-9223372036.85s");
    unit_time_is(56610000, 0, "56610000.00ns"); /* a fixed unit */
    unit_time_is(56610000, 3, "0.06s");
    unit_time_is(5, 2, "0.00ms");
    unit_time_is(INT64_MAX, 0, "9223372036854775807.00ns");
}

/*
 * The definition numfmt_double computes faster: the digits of the first of
 * %.15g, %.16g, %.17g that reads back, as a plain decimal.
 */
static void reference_double(double d, char *buf)
{
    if (d == trunc(d) && fabs(d) <= 9007199254740992.0) {
        snprintf(buf, NUMFMT_MAX, "%.0f", d == 0 ? 0.0 : d);
        return;
    }
    char e[48];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d || prec == 17)
            break;
    }
    /* "-d.ddde+XX" -> sign, digits without trailing zeros, exponent */
    char dg[24];
    size_t nd = 0;
    const char *p = e + (e[0] == '-');
    for (; *p != 'e'; p++)
        if (*p != '.')
            dg[nd++] = *p;
    while (nd > 1 && dg[nd - 1] == '0')
        nd--;
    dg[nd] = 0;
    plain_text(e[0] == '-' ? "-" : "", dg, (int)strtol(p + 1, NULL, 10), buf);
}

/* Fails unless numfmt_double_exact(d) reads back as d and equals the reference text. */
static void check_double(double d)
{
    char buf[NUMFMT_MAX], want[NUMFMT_MAX];
    size_t n = numfmt_double_exact(d, buf);
    assert_true(n > 0 && n < NUMFMT_MAX && n == strlen(buf));
    char *end;
    double back = strtod(buf, &end);
    assert_ptr_equal(end, buf + n);
    if (memcmp(&back, &d, sizeof d) != 0 && !(d == 0 && back == 0))
        fail_msg("%.17g printed as %s", d, buf);
    reference_double(d, want);
    if (strcmp(buf, want) != 0)
        fail_msg("%.17g printed as %s, expected %s", d, buf, want);
}

/* Any double comes back from its text with the same bits, in at most 17 digits. */
static void test_double_roundtrip(void **state)
{
    (void)state;
    /* n/7 and n/3: many decimal ties one digit past the cut */
    for (int i = 0; i < 100000; i++) {
        check_double(i / 7.0);
        check_double(-i / 3.0);
        check_double(i * 1e-9);
        check_double(i * 1e12 + 0.5);
    }
    uint64_t x = 88172645463325252u;
    char buf[NUMFMT_MAX];
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13; /* xorshift64 */
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        if (i % 2) {
            memcpy(&d, &x, sizeof d); /* any bit pattern */
        } else {
            d = (double)(x % 100000000) / 1000.0; /* times in ms, the usual values */
        }
        if (isnan(d) || isinf(d))
            continue;
        check_double(d);
        numfmt_double(d, buf);
        if (d == trunc(d) && fabs(d) <= 9007199254740992.0)
            assert_null(strpbrk(buf, ".e"));
        assert_null(strpbrk(buf, "eE")); /* never exponent notation */
    }
}

/* ---- CSV ---------------------------------------------------------------- */

static void test_csv_bytes(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX];
    fresh_dir(dir, "csv_bytes");
    join(path, dir, "t.csv");
    tb_sink *s = make_csv(path, NULL);
    feed(s, NROWS);
    assert_file(path, "id,Time(us),ratio,note,\"Name, full\",名前\n"
                      "1,1.234,0.3,,\"say \"\"hi\"\", ok\",核函数\n"
                      "-2,-0.005,NaN,,\" lead\",\"line\nbreak\"\n"
                      "-9223372036854775808,1,inf,,plain,a\xEF\xBF\xBD" "b\n" /* NUL: U+FFFD */
                      "0,0,-inf,,\"trail \",\"\r\"\n"
                      "9223372036854775807,1.2,1000000000000000000000,,tab\there,x\x01y\n");
    const char *const *paths;
    assert_int_equal(sink_written(s, &paths), 1);
    assert_string_equal(paths[0], path);
    drop(s);
    assert_string_equal(list_dir(dir), "t.csv");

    /* a BOM, and a result with no rows: the header alone */
    join(path, dir, "bom.csv");
    s = make_csv(path, &(csv_sink_options){.bom = 1});
    feed(s, 0);
    assert_file(path, "\xEF\xBB\xBFid,Time(us),ratio,note,\"Name, full\",名前\n");
    drop(s);

    /* no columns at all: an empty line per row, still well formed */
    join(path, dir, "none.csv");
    s = make_csv(path, NULL);
    tb_error err;
    tb_error_clear(&err);
    ok(s->begin(s, cols, 0, &err), &err);
    ok(s->row(s, table[0], &err), &err);
    ok(s->finish(s, &err), &err);
    assert_file(path, "\n\n");
    /* a finished sink takes no more calls */
    assert_int_equal(s->finish(s, &err), TB_ERR_INTERNAL);
    assert_int_equal(s->row(s, table[0], &err), TB_ERR_INTERNAL);
}

/* Fails unless s (n bytes) is valid UTF-8 without NUL bytes: what a strict reader takes. */
static void assert_strict_utf8(const char *s, size_t n)
{
    size_t len;
    for (size_t i = 0; i < n; i += len) {
        if (s[i] == 0 || !utf8_seq(s + i, n - i, &len))
            fail_msg("byte %zu of \"%s\" is not strict UTF-8", i, s);
    }
}

/* Writes one text cell with the header h through a CSV sink; returns the file's text. */
static const char *csv_one(const char *dir, const char *h, const char *text, size_t n)
{
    char path[PATH_MAX];
    join(path, dir, "one.csv");
    tb_sink *s = make_csv(path, NULL);
    tb_error err;
    tb_error_clear(&err);
    tb_sink_column c = {.header = h};
    tb_cell cell = {.kind = TB_CELL_TEXT, .s = text, .n = n};
    ok(s->begin(s, &c, 1, &err), &err);
    ok(s->row(s, &cell, &err), &err);
    ok(s->finish(s, &err), &err);
    drop(s);
    size_t len = slurp(path);
    assert_strict_utf8(content, len); /* whatever went in */
    assert_int_equal(strlen(content), len);
    return content;
}

#define csv_text_is(text, lit) assert_string_equal(csv_one(dir, "k", text, sizeof(text) - 1), "k\n" lit "\n")

#define FFFD "\xEF\xBF\xBD"

static void test_csv_utf8(void **state)
{
    (void)state;
    char dir[PATH_MAX];
    fresh_dir(dir, "csv_utf8");
    csv_text_is("plain", "plain");
    /* valid UTF-8 passes as is: 2, 3 and 4 bytes, U+FFFD itself, U+FFFF, U+10FFFF */
    csv_text_is("é中😀" FFFD "\xEF\xBF\xBF\xF4\x8F\xBF\xBF", "é中😀" FFFD "\xEF\xBF\xBF\xF4\x8F\xBF\xBF");
    /* control characters other than NUL stay */
    csv_text_is("\x01\t\x1f\x7f", "\x01\t\x1f\x7f");
    /* NUL bytes: one U+FFFD each */
    csv_text_is("\0", FFFD);
    csv_text_is("a\0\0b", "a" FFFD FFFD "b");
    csv_text_is("\xC2\x80\0", "\xC2\x80" FFFD);
    /* invalid bytes: one U+FFFD per maximal invalid subpart */
    csv_text_is("a\xFF" "b", "a" FFFD "b");
    csv_text_is("\xC3", FFFD);                                /* cut short at the end */
    csv_text_is("\xE4\xB8" "x", FFFD "x");                    /* a 3-byte lead, 2 bytes */
    csv_text_is("\xE4\xB8\xE4\xB8\xAD", FFFD "中");           /* a cut sequence, then a whole one */
    csv_text_is("\xC0\xAF", FFFD FFFD);                       /* overlong '/' */
    csv_text_is("\xED\xA0\x80", FFFD FFFD FFFD);              /* a surrogate */
    csv_text_is("\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD);     /* > U+10FFFF */
    csv_text_is("\x80\xBF", FFFD FFFD);                       /* lone continuations */
    csv_text_is("\xF0\x9F\x98", FFFD);                        /* a 4-byte lead, 3 bytes */
    csv_text_is("\xF0\x9F\x98" "\0", FFFD FFFD);              /* ... cut by a NUL */
    csv_text_is("Latin-1 caf\xE9!", "Latin-1 caf" FFFD "!");
    /* quoting looks at the raw bytes; quotes are doubled around replacements */
    csv_text_is("\xFF,\0", "\"" FFFD "," FFFD "\"");
    csv_text_is("\"\xFF\"", "\"\"\"" FFFD "\"\"\"");
    csv_text_is(" \xE9", "\" " FFFD "\"");
    csv_text_is("\xE9\n\"", "\"" FFFD "\n\"\"\"");
    /* headers are written the same way */
    assert_string_equal(csv_one(dir, "caf\xE9,\xFF", "v", 1), "\"caf" FFFD "," FFFD "\"\nv\n");
    assert_string_equal(csv_one(dir, "\xC3", NULL, 0), FFFD "\n\n");
}

/* Writes n one-column rows (values 1..n) to path with k rows per file. */
static tb_sink *csv_n(const char *path, size_t k, int n)
{
    tb_error err;
    tb_error_clear(&err);
    tb_sink *s = make_csv(path, &(csv_sink_options){.rows_per_file = k});
    ok(s->begin(s, one_col, 1, &err), &err);
    for (int i = 1; i <= n; i++)
        int_row(s, i);
    return s;
}

/* msprof's slice names: slice_<k>_ after the given prefix, k from 0 */
static void test_csv_split_msprof_names(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX], p[PATH_MAX];
    tb_error err;
    tb_error_clear(&err);
    fresh_dir(dir, "csv_split_msprof");
    join(path, dir, "op_summary_20240102021227.csv");
    tb_sink *s = make_csv(path, &(csv_sink_options){.rows_per_file = 2, .slice_insert = 11});
    ok(s->begin(s, one_col, 1, &err), &err);
    for (int i = 1; i <= 3; i++)
        int_row(s, i);
    ok(s->finish(s, &err), &err);
    assert_string_equal(list_dir(dir), "op_summary_slice_0_20240102021227.csv,op_summary_slice_1_20240102021227.csv");
    join(p, dir, "op_summary_slice_1_20240102021227.csv");
    assert_file(p, "n\n3\n");
    drop(s);
    /* one file: the plain name */
    join(path, dir, "task_time_20240102021227.csv");
    s = make_csv(path, &(csv_sink_options){.rows_per_file = 2, .slice_insert = 10});
    ok(s->begin(s, one_col, 1, &err), &err);
    int_row(s, 1);
    ok(s->finish(s, &err), &err);
    assert_true(tu_exists(path));
    drop(s);
}

static void test_csv_split(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX], p[PATH_MAX];
    tb_error err;
    tb_error_clear(&err);
    fresh_dir(dir, "csv_split");
    join(path, dir, "top.csv");

    /* 7 rows at 3 a file: three files, each with the header */
    tb_sink *s = csv_n(path, 3, 7);
    /* until finish nothing has a final name */
    assert_int_equal(strncmp(list_dir(dir), "top.csv.tmp-", 12), 0);
    assert_null(strstr(list_dir(dir), "top_"));
    const char *const *paths;
    assert_int_equal(sink_written(s, &paths), 0);
    ok(s->finish(s, &err), &err);
    assert_false(tu_exists(path));
    assert_string_equal(list_dir(dir), "top_1.csv,top_2.csv,top_3.csv");
    join(p, dir, "top_1.csv");
    assert_file(p, "n\n1\n2\n3\n");
    join(p, dir, "top_2.csv");
    assert_file(p, "n\n4\n5\n6\n");
    join(p, dir, "top_3.csv");
    assert_file(p, "n\n7\n");
    assert_int_equal(sink_written(s, &paths), 3);
    join(p, dir, "top_1.csv");
    assert_string_equal(paths[0], p);
    join(p, dir, "top_3.csv");
    assert_string_equal(paths[2], p);
    drop(s);
    assert_string_equal(list_dir(dir), "top_1.csv,top_2.csv,top_3.csv");

    /* exactly 3 rows fit one file: the plain name */
    fresh_dir(dir, "csv_split3");
    join(path, dir, "top.csv");
    s = csv_n(path, 3, 3);
    ok(s->finish(s, &err), &err);
    assert_string_equal(list_dir(dir), "top.csv");
    assert_file(path, "n\n1\n2\n3\n");
    drop(s);

    /* 6 rows: two full files; an older top.csv goes, since it would pass for this output */
    fresh_dir(dir, "csv_split6");
    join(path, dir, "top.csv");
    write_file(p, sizeof p, "csv_split6/top.csv", "old\n", 4);
    s = csv_n(path, 3, 6);
    ok(s->finish(s, &err), &err);
    assert_string_equal(list_dir(dir), "top_1.csv,top_2.csv");
    join(p, dir, "top_2.csv");
    assert_file(p, "n\n4\n5\n6\n");
    drop(s);

    /* names without an extension, and a dot in a directory name */
    fresh_dir(dir, "csv.split");
    join(path, dir, "table");
    s = csv_n(path, 1, 2);
    ok(s->finish(s, &err), &err);
    assert_string_equal(list_dir(dir), "table_1,table_2");
    drop(s);
    join(path, dir, ".hidden");
    s = csv_n(path, 1, 2);
    ok(s->finish(s, &err), &err);
    assert_string_equal(list_dir(dir), ".hidden_1,.hidden_2,table_1,table_2");
    drop(s);
    join(path, dir, "a.b.csv");
    s = csv_n(path, 2, 3);
    ok(s->finish(s, &err), &err);
    assert_string_equal(list_dir(dir), ".hidden_1,.hidden_2,a.b_1.csv,a.b_2.csv,table_1,table_2");
    drop(s);

    /* the default is a million rows a file */
    fresh_dir(dir, "csv_default");
    join(path, dir, "big.csv");
    s = csv_n(path, 0, 2500);
    ok(s->finish(s, &err), &err);
    assert_string_equal(list_dir(dir), "big.csv");
    drop(s);
}

static void test_csv_abandon(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX];
    tb_error err;
    tb_error_clear(&err);

    /* destroy without finish: every slice's temporary goes */
    fresh_dir(dir, "abandon");
    join(path, dir, "top.csv");
    tb_sink *s = csv_n(path, 2, 7);
    assert_int_equal(strlen(list_dir(dir)) > 0, 1);
    drop(s);
    assert_string_equal(list_dir(dir), "");

    /* before begin, too */
    s = make_csv(path, NULL);
    drop(s);
    assert_string_equal(list_dir(dir), "");

    /* JSON likewise */
    join(path, dir, "top.json");
    s = make_json(path);
    ok(s->begin(s, cols, NCOLS, &err), &err);
    fill_table();
    ok(s->row(s, table[0], &err), &err);
    drop(s);
    assert_string_equal(list_dir(dir), "");

    /* a signal's clean-up removes the temporaries of a run in progress */
    join(path, dir, "top.csv");
    s = csv_n(path, 2, 5);
    tb_temp_cleanup();
    assert_string_equal(list_dir(dir), "");
    drop(s); /* and destroy copes with the files being gone */
    assert_string_equal(list_dir(dir), "");
}

static void test_replace(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX], p[PATH_MAX];
    tb_error err;
    tb_error_clear(&err);
    fresh_dir(dir, "replace");
    write_file(path, sizeof path, "replace/top.csv", "old contents\n", 13);
    assert_int_equal(chmod(path, 0600), 0);

    tb_sink *s = csv_n(path, 0, 2);
    assert_file(path, "old contents\n"); /* still the old file while writing */
    ok(s->finish(s, &err), &err);
    assert_file(path, "n\n1\n2\n");
    assert_string_equal(list_dir(dir), "top.csv");
    /* a new file's permissions, not mkstemp's 0600 */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    mode_t um = umask(022);
    umask(um);
    assert_int_equal(st.st_mode & 0777, 0666 & ~um);
    drop(s);

    /* json_write_file replaces too */
    join(p, dir, "run.json");
    write_file(p, sizeof p, "replace/run.json", "{}", 2);
    ok(json_write_file(p, "{\"tool\": \"tracebook\"}\n", &err), &err);
    assert_file(p, "{\"tool\": \"tracebook\"}\n");
    assert_string_equal(list_dir(dir), "run.json,top.csv");
}

/* Every constructor fails with TB_ERR_IO naming path, and leaves nothing behind. */
static void expect_io(const char *path, const char *why)
{
    tb_error err;
    tb_sink dummy, *s = &dummy;
    tb_error_clear(&err);
    assert_int_equal(csv_sink_create(path, NULL, &s, &err), TB_ERR_IO);
    assert_null(s);
    assert_string_equal(err.file, path);
    char want[256];
    snprintf(want, sizeof want, "cannot write: %s", why);
    assert_string_equal(err.message, want);

    tb_error_clear(&err);
    assert_int_equal(json_sink_create(path, NULL, &s, &err), TB_ERR_IO);
    assert_null(s);
    assert_string_equal(err.file, path);
    assert_string_equal(err.message, want);

    tb_error_clear(&err);
    assert_int_equal(json_write_file(path, "{}", &err), TB_ERR_IO);
    assert_string_equal(err.file, path);
    assert_string_equal(err.message, want);

    afile af;
    tb_error_clear(&err);
    assert_int_equal(afile_open(path, &af, &err), TB_ERR_IO);
    assert_string_equal(err.file, path);
    afile_abort(&af); /* a zeroed afile is fine */
}

static void test_unwritable(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX], p[PATH_MAX];
    fresh_dir(dir, "unwritable");

    expect_io(dir, strerror(EISDIR)); /* a directory, before any work */

    join(path, dir, "missing/top.csv");
    expect_io(path, strerror(ENOENT));

    write_file(p, sizeof p, "unwritable/file", "x", 1);
    join(path, dir, "file/top.csv");
    expect_io(path, strerror(ENOTDIR));
    assert_string_equal(list_dir(dir), "file");

    /* root (CI) writes anywhere: the permission case only means something otherwise */
    if (geteuid() != 0) {
        join(p, dir, "ro");
        assert_int_equal(mkdir(p, 0555), 0);
        join(path, p, "top.csv");
        expect_io(path, strerror(EACCES));
        chmod(p, 0755);
    }
}

/* A full disk shows at the flush: the commit fails, and nothing is left. */
static void test_disk_full(void **state)
{
    (void)state;
    FILE *full = fopen("/dev/full", "wb");
    if (!full) {
        print_message("no /dev/full: skipping\n");
        skip();
    }
    char dir[PATH_MAX], path[PATH_MAX];
    tb_error err;
    tb_error_clear(&err);
    fresh_dir(dir, "full");
    join(path, dir, "top.csv");
    afile af;
    ok(afile_open(path, &af, &err), &err);
    /* the temporary, but writing to /dev/full */
    fclose(af.f);
    af.f = full;
    for (int i = 0; i < 1000; i++)
        fputs("some row text that fills the buffer\n", af.f);
    assert_int_equal(afile_commit(&af, &err), TB_ERR_IO);
    assert_string_equal(err.file, path);
    char want[256];
    snprintf(want, sizeof want, "cannot write: %s", strerror(ENOSPC));
    assert_string_equal(err.message, want);
    assert_string_equal(list_dir(dir), "");
    assert_null(af.tmp);
    afile_abort(&af); /* a finished afile is fine */
}

/* Streams and devices are written in place: never a temporary beside /dev/null. */
static void test_streams(void **state)
{
    (void)state;
    const char *const *paths;
    tb_sink *s = make_csv("/dev/null", &(csv_sink_options){.rows_per_file = 1});
    feed(s, NROWS);
    assert_int_equal(sink_written(s, &paths), 0);
    drop(s);
    s = make_json("/dev/null");
    feed(s, NROWS);
    assert_int_equal(sink_written(s, &paths), 0);
    drop(s);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));

    /* a FIFO in a directory: written in place too, and read whole */
    char dir[PATH_MAX], path[PATH_MAX];
    fresh_dir(dir, "fifo");
    join(path, dir, "pipe");
    assert_int_equal(mkfifo(path, 0600), 0);
    int fd = open(path, O_RDONLY | O_NONBLOCK); /* a reader first, so the writer's open does not block */
    assert_true(fd >= 0);
    s = make_csv(path, NULL);
    tb_error err;
    tb_error_clear(&err);
    ok(s->begin(s, one_col, 1, &err), &err);
    int_row(s, 7);
    ok(s->finish(s, &err), &err);
    drop(s);
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    assert_bytes(buf, (size_t)(n < 0 ? 0 : n), "n\n7\n");
    assert_string_equal(list_dir(dir), "pipe");
}

/* ---- JSON --------------------------------------------------------------- */

static void test_json_bytes(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX];
    fresh_dir(dir, "json_bytes");
    join(path, dir, "t.json");
    tb_sink *s = make_json(path);
    feed(s, NROWS);
    assert_file(path,
                "[\n"
                "{\"id\":1,\"Time(us)\":1.234,\"ratio\":0.3,\"note\":null,"
                "\"Name, full\":\"say \\\"hi\\\", ok\",\"名前\":\"核函数\"},\n"
                "{\"id\":-2,\"Time(us)\":-0.005,\"ratio\":null,\"note\":null,"
                "\"Name, full\":\" lead\",\"名前\":\"line\\nbreak\"},\n"
                "{\"id\":-9223372036854775808,\"Time(us)\":1,\"ratio\":null,\"note\":null,"
                "\"Name, full\":\"plain\",\"名前\":\"a\\u0000b\"},\n"
                "{\"id\":0,\"Time(us)\":0,\"ratio\":null,\"note\":null,"
                "\"Name, full\":\"trail \",\"名前\":\"\\r\"},\n"
                "{\"id\":9223372036854775807,\"Time(us)\":1.2,\"ratio\":1000000000000000000000.0,\"note\":\"\","
                "\"Name, full\":\"tab\\there\",\"名前\":\"x\\u0001y\"}\n"
                "]\n");
    const char *const *paths;
    assert_int_equal(sink_written(s, &paths), 1);
    assert_string_equal(paths[0], path);
    assert_string_equal(list_dir(dir), "t.json");

    /* parsed back: types and values */
    json_error_t je;
    parsed = json_load_file(path, JSON_ALLOW_NUL, &je);
    if (!parsed)
        fail_msg("%s:%d:%d: %s", path, je.line, je.column, je.text);
    assert_true(json_is_array(parsed));
    assert_int_equal(json_array_size(parsed), NROWS);
    json_t *o = json_array_get(parsed, 0);
    assert_int_equal(json_object_size(o), NCOLS);
    /* keys in column order */
    void *it = json_object_iter(o);
    for (size_t i = 0; i < NCOLS; i++, it = json_object_iter_next(o, it))
        assert_string_equal(json_object_iter_key(it), cols[i].header);
    assert_true(json_is_integer(json_object_get(o, "id")));
    assert_i64(1, json_integer_value(json_object_get(o, "id")));
    assert_true(json_is_real(json_object_get(o, "Time(us)")));
    assert_true(json_real_value(json_object_get(o, "Time(us)")) == 1.234);
    /* 0.1 + 0.2 is written to 15 digits: 0.3 */
    assert_true(json_real_value(json_object_get(o, "ratio")) == 0.3);
    assert_true(json_is_null(json_object_get(o, "note")));
    assert_string_equal(json_string_value(json_object_get(o, "Name, full")), "say \"hi\", ok");
    assert_string_equal(json_string_value(json_object_get(o, "名前")), "核函数");
    o = json_array_get(parsed, 2);
    assert_i64(INT64_MIN, json_integer_value(json_object_get(o, "id")));
    assert_true(json_is_integer(json_object_get(o, "Time(us)"))); /* 1.000 is written "1" */
    json_t *v = json_object_get(o, "名前");
    assert_int_equal(json_string_length(v), 3);
    assert_memory_equal(json_string_value(v), "a\0b", 3);
    o = json_array_get(parsed, 4);
    assert_i64(INT64_MAX, json_integer_value(json_object_get(o, "id")));
    assert_true(json_real_value(json_object_get(o, "ratio")) == 1e21);
    assert_string_equal(json_string_value(json_object_get(o, "note")), "");
    assert_string_equal(json_string_value(json_object_get(o, "名前")), "x\x01y");
    drop(s);

    /* no rows */
    join(path, dir, "empty.json");
    s = make_json(path);
    feed(s, 0);
    assert_file(path, "[]\n");
    drop(s);

    /* one row */
    join(path, dir, "one.json");
    s = make_json(path);
    tb_error err;
    tb_error_clear(&err);
    ok(s->begin(s, one_col, 1, &err), &err);
    int_row(s, 42);
    ok(s->finish(s, &err), &err);
    assert_file(path, "[\n{\"n\":42}\n]\n");
    drop(s);
}

/* Writes one text cell with the header h through a JSON sink; returns the file's text. */
static const char *json_one(const char *dir, const char *h, const char *text, size_t n)
{
    char path[PATH_MAX];
    join(path, dir, "one.json");
    tb_sink *s = make_json(path);
    tb_error err;
    tb_error_clear(&err);
    tb_sink_column c = {.header = h};
    tb_cell cell = {.kind = TB_CELL_TEXT, .s = text, .n = n};
    ok(s->begin(s, &c, 1, &err), &err);
    ok(s->row(s, &cell, &err), &err);
    ok(s->finish(s, &err), &err);
    drop(s);
    slurp(path);
    /* whatever went in, a strict parser reads it */
    json_error_t je;
    json_t *j = json_loads(content, JSON_ALLOW_NUL, &je);
    if (!j)
        fail_msg("%s: %d:%d: %s", content, je.line, je.column, je.text);
    json_decref(j);
    return content;
}

#define json_text_is(text, lit) \
    assert_string_equal(json_one(dir, "k", text, sizeof(text) - 1), "[\n{\"k\":\"" lit "\"}\n]\n")

static void test_json_escapes(void **state)
{
    (void)state;
    char dir[PATH_MAX];
    fresh_dir(dir, "json_escapes");
    json_text_is("plain", "plain");
    json_text_is("\"\\/", "\\\"\\\\/");
    json_text_is("\b\f\n\r\t", "\\b\\f\\n\\r\\t");
    json_text_is("\x01\x1f\x7f", "\\u0001\\u001f\x7f");
    json_text_is("\0", "\\u0000");
    /* valid UTF-8 passes as is: 2, 3 and 4 bytes, U+FFFF, U+10FFFF */
    json_text_is("é中😀\xEF\xBF\xBF\xF4\x8F\xBF\xBF", "é中😀\xEF\xBF\xBF\xF4\x8F\xBF\xBF");
    /* invalid bytes: one U+FFFD per maximal invalid subpart */
    json_text_is("a\xFF" "b", "a\xEF\xBF\xBD" "b");
    json_text_is("\xC3", "\xEF\xBF\xBD");                          /* cut short at the end */
    json_text_is("\xE4\xB8" "x", "\xEF\xBF\xBD" "x");              /* a 3-byte lead, 2 bytes */
    json_text_is("\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD");           /* overlong '/' */
    json_text_is("\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); /* a surrogate */
    json_text_is("\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); /* > U+10FFFF */
    json_text_is("\x80", "\xEF\xBF\xBD");                          /* a lone continuation */
    json_text_is("\xF0\x9F\x98", "\xEF\xBF\xBD");                  /* a 4-byte lead, 3 bytes */
    json_text_is("Latin-1 caf\xE9!", "Latin-1 caf\xEF\xBF\xBD!");
    assert_string_equal(json_one(dir, "k", NULL, 0), "[\n{\"k\":\"\"}\n]\n"); /* empty text, no pointer */
    /* keys are escaped the same way */
    assert_string_equal(json_one(dir, "a\"b\n\xFF", "v", 1), "[\n{\"a\\\"b\\n\xEF\xBF\xBD\":\"v\"}\n]\n");
}

/* Writes one row of integers 0..n-1 under the headers h through s. */
static void feed_headers(tb_sink *s, const tb_sink_column *h, size_t n)
{
    static tb_cell cells[3000];
    assert_true(n <= sizeof cells / sizeof cells[0]);
    for (size_t i = 0; i < n; i++)
        cells[i] = (tb_cell){.kind = TB_CELL_INT, .i = (int64_t)i};
    tb_error err;
    tb_error_clear(&err);
    ok(s->begin(s, h, n, &err), &err);
    ok(s->row(s, cells, &err), &err);
    ok(s->finish(s, &err), &err);
}

/* The JSON file at path parsed (into parsed): one object whose keys, in order, are want. */
static void assert_json_keys(const char *path, const char *const *want, size_t n)
{
    json_error_t je;
    json_decref(parsed);
    parsed = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!parsed)
        fail_msg("%s:%d:%d: %s", path, je.line, je.column, je.text);
    json_t *o = json_array_get(parsed, 0);
    assert_int_equal(json_object_size(o), n);
    void *it = json_object_iter(o);
    for (size_t i = 0; i < n; i++, it = json_object_iter_next(o, it)) {
        assert_string_equal(json_object_iter_key(it), want[i]);
        assert_i64((int64_t)i, json_integer_value(json_object_iter_value(it)));
    }
}

/* Repeated headers: unique JSON keys, the CSV header row as given. */
static void test_json_dup_keys(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX];
    fresh_dir(dir, "json_dup");

    static const tb_sink_column h[] = {
        {.header = "x"},     {.header = "x"},      {.header = "x (2)"}, {.header = "x"},
        {.header = "a\xFF"}, {.header = "a\xFE"},  {.header = NULL},    {.header = ""},
        {.header = "x (3)"}, {.header = "y"},      {.header = "y"},     {.header = "q\"\n"},
        {.header = "q\"\n"}, {.header = "y (2)"},
    };
    static const char *const keys[] = {
        "x", "x (4)", "x (2)", "x (5)", "a" FFFD, "a" FFFD " (2)", "", " (2)", "x (3)", "y", "y (3)",
        "q\"\n", "q\"\n (2)", "y (2)",
    };
    const size_t nh = sizeof h / sizeof h[0];
    join(path, dir, "dup.json");
    tb_sink *s = make_json(path);
    feed_headers(s, h, nh);
    drop(s);
    assert_file(path, "[\n{\"x\":0,\"x (4)\":1,\"x (2)\":2,\"x (5)\":3,\"a" FFFD "\":4,\"a" FFFD " (2)\":5,"
                      "\"\":6,\" (2)\":7,\"x (3)\":8,\"y\":9,\"y (3)\":10,\"q\\\"\\n\":11,\"q\\\"\\n (2)\":12,"
                      "\"y (2)\":13}\n]\n");
    assert_json_keys(path, keys, nh);

    /* the review's case, and a repeat of a key made earlier */
    static const tb_sink_column h2[] = {{.header = "x"}, {.header = "x"}};
    join(path, dir, "x.json");
    s = make_json(path);
    feed_headers(s, h2, 2);
    drop(s);
    assert_file(path, "[\n{\"x\":0,\"x (2)\":1}\n]\n");
    static const tb_sink_column h3[] = {{.header = "x"}, {.header = "x"}, {.header = "x (2)"}};
    s = make_json(path);
    feed_headers(s, h3, 3);
    drop(s);
    assert_file(path, "[\n{\"x\":0,\"x (3)\":1,\"x (2)\":2}\n]\n");
    static const tb_sink_column h4[] = {{.header = "x (2)"}, {.header = "x"}, {.header = "x"}};
    s = make_json(path);
    feed_headers(s, h4, 3);
    drop(s);
    assert_file(path, "[\n{\"x (2)\":0,\"x\":1,\"x (3)\":2}\n]\n");

    /* no rows: the keys are not written, and begin() still copes */
    s = make_json(path);
    tb_error err;
    tb_error_clear(&err);
    ok(s->begin(s, h, nh, &err), &err);
    ok(s->finish(s, &err), &err);
    drop(s);
    assert_file(path, "[]\n");

    /* the CSV keeps the headers as they are (invalid UTF-8 replaced) */
    join(path, dir, "dup.csv");
    s = make_csv(path, NULL);
    feed_headers(s, h, nh);
    drop(s);
    assert_file(path, "x,x,x (2),x,a" FFFD ",a" FFFD ",,,x (3),y,y,\"q\"\"\n\",\"q\"\"\n\",y (2)\n"
                      "0,1,2,3,4,5,6,7,8,9,10,11,12,13\n");
}

/* Thousands of repeats stay fast: c (2) .. c (1001), then "c" 2000 times. */
static void test_json_dup_many(void **state)
{
    (void)state;
    enum { TAKEN = 1000, NMANY = 3000 };
    static char names[NMANY][24];
    static tb_sink_column h[NMANY];
    static const char *keys[NMANY];
    for (size_t i = 0; i < NMANY; i++) {
        snprintf(names[i], sizeof names[i], "c (%zu)", i + 2);
        h[i].header = i < TAKEN ? names[i] : "c";
        keys[i] = i == TAKEN ? "c" : names[i > TAKEN ? i - 1 : i];
    }
    char dir[PATH_MAX], path[PATH_MAX];
    fresh_dir(dir, "json_dup_many");
    join(path, dir, "many.json");
    tb_sink *s = make_json(path);
    feed_headers(s, h, NMANY);
    drop(s);
    assert_json_keys(path, keys, NMANY);
}

static void test_utf8_seq(void **state)
{
    (void)state;
    size_t len;
    assert_int_equal(utf8_seq("a", 1, &len), 1);
    assert_int_equal(len, 1);
    assert_int_equal(utf8_seq("\xC3\xA9", 2, &len), 1);
    assert_int_equal(len, 2);
    assert_int_equal(utf8_seq("\xC3\xA9", 1, &len), 0); /* n bounds the read */
    assert_int_equal(len, 1);
    assert_int_equal(utf8_seq("\xE0\xA0\x80", 3, &len), 1); /* U+0800 */
    assert_int_equal(len, 3);
    assert_int_equal(utf8_seq("\xE0\x9F\xBF", 3, &len), 0); /* overlong */
    assert_int_equal(len, 1);
    assert_int_equal(utf8_seq("\xF0\x90\x80\x80", 4, &len), 1); /* U+10000 */
    assert_int_equal(len, 4);
    assert_int_equal(utf8_seq("\xF0\x90\x80" "a", 4, &len), 0);
    assert_int_equal(len, 3);
    assert_int_equal(utf8_seq("\xF8\x88\x80\x80\x80", 5, &len), 0);
    assert_int_equal(len, 1);
}

static void test_json_write_file(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX];
    tb_error err;
    tb_error_clear(&err);
    fresh_dir(dir, "json_file");
    join(path, dir, "run.json");
    ok(json_write_file(path, "{\"a\": 1}\n", &err), &err);
    assert_file(path, "{\"a\": 1}\n");
    ok(json_write_file(path, "", &err), &err);
    assert_file(path, "");
    assert_string_equal(list_dir(dir), "run.json");
}

/* ---- console ------------------------------------------------------------ */

static const tb_sink_column kcols[] = {
    {.header = "Name"},
    {.header = "Calls"},
    {.header = "Total Time(us)", .type = TB_COL_DUR_NS},
    {.header = "note"},
};

static tb_cell krows[][4] = {
    {T("MatMul_v2"), I(12), S(1234567, 3), N},
    {T("a very long kernel name"), I(3), S(500, 3), T("x")},
    {T("核函数"), I(100), S(0, 0), N},
    {T("extra"), I(1), S(1, 0), N},
    {T("extra2"), I(1), S(1, 0), N},
};

static void feed_k(tb_sink *s, size_t nrows)
{
    tb_error err;
    tb_error_clear(&err);
    ok(s->begin(s, kcols, 4, &err), &err);
    for (size_t r = 0; r < nrows; r++)
        ok(s->row(s, krows[r], &err), &err);
    ok(s->finish(s, &err), &err);
}

static void test_console(void **state)
{
    (void)state;
    tb_sink *s = make_console(&(console_options){.title = "Top kernels", .max_col_width = 12, .max_rows = 3});
    feed_k(s, 5);
    assert_console("Top kernels\n"
                   "Name          Calls  Total...(us)  note\n"
                   "------------  -----  ------------  ----\n"
                   "MatMul_v2        12      1234.567\n"
                   "a ver...name      3           0.5  x\n"
                   "核函数             100             0\n"
                   "(2 more rows)\n");
    const char *const *paths;
    assert_int_equal(sink_written(s, &paths), 0);
    drop(s);
    fclose(memf);
    memf = NULL;
    free(mem);
    mem = NULL;

    /* defaults: no title, all rows, width 40 */
    s = make_console(NULL);
    feed_k(s, 4);
    assert_console("Name                     Calls  Total Time(us)  note\n"
                   "-----------------------  -----  --------------  ----\n"
                   "MatMul_v2                   12        1234.567\n"
                   "a very long kernel name      3             0.5  x\n"
                   "核函数                        100               0\n"
                   "extra                        1               1\n");
    drop(s);
    fclose(memf);
    memf = NULL;
    free(mem);
    mem = NULL;

    /* one row past max_rows */
    s = make_console(&(console_options){.max_rows = 4});
    feed_k(s, 5);
    fflush(memf);
    assert_non_null(strstr(mem, "\nextra  "));
    assert_null(strstr(mem, "extra2"));
    assert_non_null(strstr(mem, "\n(1 more row)\n"));
}

static void test_console_empty(void **state)
{
    (void)state;
    tb_sink *s = make_console(&(console_options){.title = "Nothing"});
    feed_k(s, 0);
    assert_console("Nothing\n"
                   "Name  Calls  Total Time(us)  note\n"
                   "----  -----  --------------  ----\n"
                   "(0 rows)\n");
}

/* Widths come from the first width_rows rows; later rows are cut to them. */
static void test_console_widths(void **state)
{
    (void)state;
    static const tb_sink_column c2[] = {{.header = "s"}, {.header = "n"}};
    tb_cell rows[][2] = {
        {T("ab"), I(1)},
        {T("abcdef"), I(2222)},
        {T("abcdefgh"), I(12345)},   /* cut to the widths of the first two */
        {T("a\tb\nc"), R(NAN)},     /* control characters print as spaces */
        {T("\xC3\xA9\xFF" "z"), R(-INFINITY)}, /* é, an invalid byte, z */
        {N, R(2.5)},
        {T("x\x7f\xC2\x85y"), I(-1)}, /* DEL and a C1 control (NEL) */
    };
    tb_sink *s = make_console(&(console_options){.width_rows = 2});
    tb_error err;
    tb_error_clear(&err);
    ok(s->begin(s, c2, 2, &err), &err);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        ok(s->row(s, rows[r], &err), &err);
    fflush(memf);
    /* the first two rows are out as soon as the widths are known */
    assert_bytes(mem, strlen(mem), "s          n\n"
                                   "------  ----\n"
                                   "ab         1\n"
                                   "abcdef  2222\n"
                                   "ab...h  1...\n"
                                   "a b c    NaN\n"
                                   "é?z     -inf\n"
                                   "         2.5\n"
                                   "x  y      -1\n");
    ok(s->finish(s, &err), &err);
}

/* Reals as plain decimals; one longer than the column in exponent notation, never cut. */
static void test_console_reals(void **state)
{
    (void)state;
    static const tb_sink_column c1[] = {{.header = "v"}};
    tb_cell rows[][1] = {{R(2.5000000000000047e-07)}, {R(1e-300)}, {R(-1e100)}, {R(1e21)}};
    tb_sink *s = make_console(NULL);
    tb_error err;
    tb_error_clear(&err);
    ok(s->begin(s, c1, 1, &err), &err);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        ok(s->row(s, rows[r], &err), &err);
    ok(s->finish(s, &err), &err);
    assert_console("                     v\n"
                   "----------------------\n"
                   "            0.00000025\n"
                   "                1e-300\n"
                   "               -1e+100\n"
                   "1000000000000000000000\n");
}

/* A long run: bounded hold, every row printed, the last cut to the widths of the first 1000. */
static void test_console_many(void **state)
{
    (void)state;
    tb_sink *s = make_console(NULL);
    tb_error err;
    tb_error_clear(&err);
    ok(s->begin(s, one_col, 1, &err), &err);
    for (int i = 0; i < 1000; i++)
        int_row(s, 1000 + i % 10);
    int_row(s, 123456);
    ok(s->finish(s, &err), &err);
    fflush(memf);
    size_t n = strlen(mem);
    assert_true(n > 11);
    assert_string_equal(mem + n - 11, "\n1009\n1...\n");
    assert_int_equal(strncmp(mem, "   n\n----\n1000\n", 15), 0);
}

/* The names of the output formats: one list for outputs: and --format. */
static void test_format_names(void **state)
{
    (void)state;
    assert_int_equal(tb_out_formats("csv"), TB_OUT_CSV);
    assert_int_equal(tb_out_formats("json,xlsx,console,csv"), TB_OUT_CSV | TB_OUT_JSON | TB_OUT_XLSX | TB_OUT_CONSOLE);
    assert_int_equal(tb_out_formats("csv,csv"), TB_OUT_CSV);
    assert_int_equal(tb_out_formats(""), 0);
    assert_int_equal(tb_out_formats("csv,"), 0);
    assert_int_equal(tb_out_formats("csv,,json"), 0);
    assert_int_equal(tb_out_formats(",csv"), 0);
    assert_int_equal(tb_out_formats("CSV"), 0);
    assert_int_equal(tb_out_formats("csvx"), 0);
    assert_int_equal(tb_out_format_named("jsonl", 4), TB_OUT_JSON);
    assert_int_equal(tb_out_format_named("json", 3), 0);
    for (unsigned i = 0; i < 4; i++) {
        const char *name = tb_out_format_name(1u << i);
        assert_non_null(name);
        assert_int_equal(tb_out_format_named(name, strlen(name)), 1u << i);
    }
    assert_null(tb_out_format_name(TB_OUT_CSV | TB_OUT_JSON));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_scaled, test_teardown),
        cmocka_unit_test_teardown(test_double15, test_teardown),
        cmocka_unit_test_teardown(test_round_fast, test_teardown),
        cmocka_unit_test_teardown(test_scaled_round, test_teardown),
        cmocka_unit_test_teardown(test_double, test_teardown),
        cmocka_unit_test_teardown(test_unit_time, test_teardown),
        cmocka_unit_test_teardown(test_double_roundtrip, test_teardown),
        cmocka_unit_test_teardown(test_csv_bytes, test_teardown),
        cmocka_unit_test_teardown(test_csv_utf8, test_teardown),
        cmocka_unit_test_teardown(test_csv_split, test_teardown),
        cmocka_unit_test_teardown(test_csv_split_msprof_names, test_teardown),
        cmocka_unit_test_teardown(test_csv_abandon, test_teardown),
        cmocka_unit_test_teardown(test_replace, test_teardown),
        cmocka_unit_test_teardown(test_unwritable, test_teardown),
        cmocka_unit_test_teardown(test_disk_full, test_teardown),
        cmocka_unit_test_teardown(test_streams, test_teardown),
        cmocka_unit_test_teardown(test_json_bytes, test_teardown),
        cmocka_unit_test_teardown(test_json_escapes, test_teardown),
        cmocka_unit_test_teardown(test_json_dup_keys, test_teardown),
        cmocka_unit_test_teardown(test_json_dup_many, test_teardown),
        cmocka_unit_test_teardown(test_utf8_seq, test_teardown),
        cmocka_unit_test_teardown(test_json_write_file, test_teardown),
        cmocka_unit_test_teardown(test_console, test_teardown),
        cmocka_unit_test_teardown(test_console_empty, test_teardown),
        cmocka_unit_test_teardown(test_console_widths, test_teardown),
        cmocka_unit_test_teardown(test_console_reals, test_teardown),
        cmocka_unit_test_teardown(test_console_many, test_teardown),
        cmocka_unit_test(test_format_names),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
