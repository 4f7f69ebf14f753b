/* SPDX-License-Identifier: MIT */
/*
 * test_csv.c - unit tests for the streaming CSV reader (engine/ingest/csv.c).
 *
 * The value helpers (csv_trim, csv_is_null, csv_us_to_ns, csv_int, csv_real)
 * are checked on fields built by hand. The reader is checked on small files
 * written into a private mkdtemp() directory (removed by the group teardown):
 * quoting and doubled quotes, CRLF, a BOM, newlines inside quotes and the
 * line numbers of the rows after them, blank lines, trailing TABs, column
 * lookup with aliases, width and missing-column errors with their exact
 * messages, gzip input, files larger than the 1 MiB window (so the buffer
 * slides, and grows for one huge record), an unterminated quote and an empty
 * file. Every expected line and offset is worked out by hand next to its
 * input. Finally every CSV of the shared public samples is read, when
 * ../shared/data/public is there (those tests are skipped otherwise; set
 * TB_SHARED_DATA to point elsewhere).
 *
 * msprof's task_time and npu_mem summaries (engine/ingest/npu_text.c), which
 * the shared samples lack, are loaded end to end through tb_load() from small
 * files written here with msprof's quirks (BOM, CRLF, TAB-suffixed and
 * quoted times, N/A, a row of the wrong width): exact rows and ns values,
 * precedence (op_summary and a DB win over them, slices of one summary do
 * not skip each other), and the errors for missing columns. The shared
 * op_summary_1.csv row of the wrong width gives its FILE:LINE warning and
 * counts in TB_SOURCE.rowsSkipped. Runs with the exit-code protocol: main
 * returns the number of failed tests.
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
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>
#include <zlib.h>

#include "util/csv.h"
#include "tracebook/tracebook.h"
#define TU_WITH_SQLITE
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */




/* Fails unless field f holds exactly the literal lit. */
#define assert_field(f, lit)                                                              \
    do {                                                                                  \
        csv_field f_ = (f);                                                               \
        assert_bytes(f_.p, f_.n, lit);                                                    \
    } while (0)

/* A growable byte buffer for building inputs. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

/*
 * What a test holds when an assertion fails: cmocka longjmps out of the
 * test, so the per-test teardown releases these (sanitizer runs stay clean
 * and report only the failure).
 */
static sbuf text;           /* input under construction */
static csv_reader *held[4]; /* readers opened by open_ok */

static void sb_add(sbuf *b, const void *d, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t ncap = b->cap ? b->cap : 4096;
        while (ncap < b->n + n + 1)
            ncap *= 2;
        char *np = realloc(b->p, ncap);
        assert_non_null(np);
        b->p = np;
        b->cap = ncap;
    }
    if (n)
        memcpy(b->p + b->n, d, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void sb_fmt(sbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof tmp);
    sb_add(b, tmp, (size_t)n);
}

/* Returns the global input buffer, emptied. */
static sbuf *fresh_text(void)
{
    text.n = 0;
    return &text;
}

/* Writes n bytes to name inside the temporary directory; path gets the full path. */

/* Writes a string literal (sizeof - 1 bytes, so embedded NULs count) to name. */
#define write_lit(path, name, lit) write_file(path, sizeof path, name, lit, sizeof(lit) - 1)


/* Opens path or fails; the reader is held until close_r (or the teardown). */
static csv_reader *open_ok(const char *path)
{
    tb_error err;
    tb_error_clear(&err);
    csv_reader *r = csv_open(path, &err);
    if (!r) {
        print_error("csv_open(%s): %s\n", path, err.message);
        fail();
    }
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
        if (!held[i]) {
            held[i] = r;
            return r;
        }
    }
    csv_close(r);
    fail_msg("too many open readers");
    return NULL;
}

static void close_r(csv_reader *r)
{
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
        if (held[i] == r)
            held[i] = NULL;
    csv_close(r);
}

/* Opens path and reads its header, or fails. */
static csv_reader *open_with_header(const char *path)
{
    csv_reader *r = open_ok(path);
    tb_error err;
    tb_error_clear(&err);
    if (csv_header(r, &err) != 0) {
        print_error("csv_header(%s): %s:%ld: %s\n", path, err.file, err.line, err.message);
        fail();
    }
    return r;
}

/* Asserts that the next record exists, starts on line and has n fields. */
static void next_row(csv_reader *r, csv_row *row, long line, int n)
{
    tb_error err;
    tb_error_clear(&err);
    int k = csv_next(r, row, &err);
    if (k != 1) {
        print_error("expected a row, got %d (%s:%ld:%ld: %s)\n", k, err.file, err.line, err.column, err.message);
        fail();
    }
    if (row->line != line || row->n != n) {
        print_error("expected a row of %d fields on line %ld, got %d fields on line %ld\n", n, line, row->n,
                    row->line);
        fail();
    }
}

/* Asserts that the input has no more records (twice: the end is sticky). */
static void expect_end(csv_reader *r)
{
    csv_row row;
    tb_error err;
    for (int i = 0; i < 2; i++) {
        tb_error_clear(&err);
        int k = csv_next(r, &row, &err);
        if (k != 0) {
            print_error("expected the end, got %d (line %ld: %s)\n", k, k == 1 ? row.line : err.line, err.message);
            fail();
        }
    }
}

/* Asserts that csv_next fails; returns the error in *err. */
static void expect_error(csv_reader *r, tb_error *err)
{
    csv_row row;
    tb_error_clear(err);
    int k = csv_next(r, &row, err);
    if (k != -1) {
        print_error("expected an error, got %d (line %ld)\n", k, k == 1 ? row.line : 0L);
        fail();
    }
}

static csv_field fld(const char *s)
{
    return (csv_field){.p = s, .n = strlen(s)};
}

static int test_teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
        csv_close(held[i]);
        held[i] = NULL;
    }
    free(text.p);
    text = (sbuf){0};
    return 0;
}

/* ---- value helpers ------------------------------------------------------ */

static void test_trim_and_null(void **state)
{
    (void)state;
    assert_field(csv_trim(fld("1724670453385978.290\t")), "1724670453385978.290");
    assert_field(csv_trim(fld(" \t 12 \t\t")), "12");
    assert_field(csv_trim(fld("a\tb")), "a\tb"); /* inner tabs stay */
    assert_field(csv_trim(fld(" \t ")), "");
    assert_field(csv_trim(fld("")), "");
    assert_field(csv_trim(fld("x\r")), "x\r"); /* only spaces and tabs */
    /* the length bounds the text */
    assert_field(csv_trim((csv_field){.p = " ab  cd", .n = 4}), "ab");

    assert_true(csv_is_null(fld("")));
    assert_true(csv_is_null(fld(" \t")));
    assert_true(csv_is_null(fld("N/A")));
    assert_true(csv_is_null(fld("N/A\t")));
    assert_true(csv_is_null(fld(" N/A ")));
    assert_false(csv_is_null(fld("n/a")));
    assert_false(csv_is_null(fld("NA")));
    assert_false(csv_is_null(fld("N/A/B")));
    assert_false(csv_is_null(fld("0")));
    assert_false(csv_is_null(fld("\"\""))); /* raw quotes: a value, not empty */
}

static int64_t ns_of(const char *s, int *lost)
{
    int64_t v = INT64_MIN;
    if (csv_us_to_ns(fld(s), &v, lost) != 0) {
        print_error("csv_us_to_ns(\"%s\") failed\n", s);
        fail();
    }
    return v;
}

static void test_us_to_ns(void **state)
{
    (void)state;
    int lost = 0;
    /* msprof/torch_npu timestamps: exact, with or without the TAB */
    assert_i64(INT64_C(1724670453385978290), ns_of("1724670453385978.290\t", &lost));
    assert_i64(INT64_C(1706704429088523015), ns_of("1706704429088523.015\t", &lost));
    assert_i64(INT64_C(1736413971558972912), ns_of(" 1736413971558972.912 \t", &lost));
    assert_i64(INT64_C(1695115378713661000), ns_of("1695115378713661", &lost));
    assert_i64(INT64_C(1695115378653323500), ns_of("1695115378653323.5", &lost));
    assert_i64(496851, ns_of("496.8508", &lost)); /* the 4th decimal rounds */
    assert_i64(0, ns_of("0", &lost));
    assert_i64(-1500, ns_of("-1.5", &lost));
    assert_int_equal(lost, 0);

    /* exponent notation from Excel: accepted, flagged */
    assert_i64(INT64_C(1695120000000000000), ns_of("1.69512E+15", &lost));
    assert_int_equal(lost, 1);
    lost = 0;
    assert_i64(INT64_C(94509000000000000), ns_of("9.4509E+13\t", &lost));
    assert_int_equal(lost, 1);
    lost = 0;
    assert_i64(1500000, ns_of("1.5e3", &lost));
    assert_int_equal(lost, 1);
    /* the flag gathers: a plain number later does not clear it */
    assert_i64(2000, ns_of("2", &lost));
    assert_int_equal(lost, 1);
    /* the flag is optional */
    assert_i64(INT64_C(1695120000000000000), ns_of("1.69512E+15", NULL));

    /* not numbers: the value is left alone, the flag too */
    int64_t v = 77;
    lost = 0;
    const char *bad[] = {"", " \t", "N/A", "abc", "0x10", "nan", "inf", "1.2.3", "1e", "1 2", "12us", "--1", NULL};
    for (const char **b = bad; *b; b++) {
        if (csv_us_to_ns(fld(*b), &v, &lost) != -1) {
            print_error("csv_us_to_ns(\"%s\") accepted\n", *b);
            fail();
        }
    }
    assert_i64(77, v);
    assert_int_equal(lost, 0);
}

static void test_int(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(csv_int(fld("42"), &v), 0);
    assert_i64(42, v);
    assert_int_equal(csv_int(fld(" -7\t"), &v), 0);
    assert_i64(-7, v);
    assert_int_equal(csv_int(fld("+5"), &v), 0);
    assert_i64(5, v);
    assert_int_equal(csv_int(fld("4294967295"), &v), 0);
    assert_i64(INT64_C(4294967295), v);
    assert_int_equal(csv_int(fld("94509039890976"), &v), 0);
    assert_i64(INT64_C(94509039890976), v);
    assert_int_equal(csv_int(fld("9223372036854775807"), &v), 0);
    assert_i64(INT64_MAX, v);
    assert_int_equal(csv_int(fld("-9223372036854775808"), &v), 0);
    assert_i64(INT64_MIN, v);
    assert_int_equal(csv_int(fld("007"), &v), 0);
    assert_i64(7, v);
    assert_int_equal(csv_int(fld("-000000000000000000000000000000009223372036854775808"), &v), 0);
    assert_i64(INT64_MIN, v);

    v = 99;
    const char *bad[] = {"",      " ",    "N/A", "+",    "-",   "1.0",  "1e3",  "0x10",  "12a",
                         "- 1",   "1 2",  "nan", "inf",  "1,5", "9223372036854775808",
                         "-9223372036854775809", "18446744073709551615", "99999999999999999999999", NULL};
    for (const char **b = bad; *b; b++) {
        if (csv_int(fld(*b), &v) != -1) {
            print_error("csv_int(\"%s\") accepted\n", *b);
            fail();
        }
    }
    assert_i64(99, v);
}

static void test_real(void **state)
{
    (void)state;
    double d = 0;
    assert_int_equal(csv_real(fld("75174.57464453117"), &d), 0);
    assert_true(d == 75174.57464453117);
    assert_int_equal(csv_real(fld("1.69512E+15"), &d), 0);
    assert_true(d == 1.69512e15);
    assert_int_equal(csv_real(fld(" 0.0\t"), &d), 0);
    assert_true(d == 0.0);
    assert_int_equal(csv_real(fld("-1.5e-3"), &d), 0);
    assert_true(d == -1.5e-3);
    assert_int_equal(csv_real(fld(".5"), &d), 0);
    assert_true(d == 0.5);
    assert_int_equal(csv_real(fld("5."), &d), 0);
    assert_true(d == 5.0);
    assert_int_equal(csv_real(fld("+12"), &d), 0);
    assert_true(d == 12.0);
    assert_int_equal(csv_real(fld("1e-400"), &d), 0); /* underflow: a tiny value, not an error */
    assert_true(d >= 0.0 && d < 1e-300);

    d = 99;
    const char *bad[] = {"",    " ",    "N/A",   "nan",  "NaN",  "inf",    "-inf", "infinity", "0x10", "0x1p3",
                         "1e",  "1e+",  "e5",    ".",    "-.",   "1.2.3",  "abc",  "1,5",      "1 2",  "1e400",
                         "--1", "1.5x", "1d",    NULL};
    for (const char **b = bad; *b; b++) {
        if (csv_real(fld(*b), &d) != -1) {
            print_error("csv_real(\"%s\") accepted\n", *b);
            fail();
        }
    }
    assert_true(d == 99);
}

/* ---- the reader ----------------------------------------------------------- */

static void test_quoting(void **state)
{
    (void)state;
    char path[PATH_MAX];
    write_lit(path, "quoting.csv",
              "a,b,c\n"                                  /* line 1 */
              "1,\"x,y\",\"he said \"\"hi\"\"\"\n"       /* line 2 */
              "\"\"\"232138240\"\"\",,\"\"\n"            /* line 3: shapes in doubled quotes */
              "plain\"quote,\"ab\"cd,\"\"\"\"\n"         /* line 4: lenient forms */
              "\"\",\" spaced \", x \n");                /* line 5 */
    csv_reader *r = open_ok(path);
    csv_row row;
    next_row(r, &row, 1, 3);
    assert_field(row.f[0], "a");
    assert_field(row.f[1], "b");
    assert_field(row.f[2], "c");
    assert_i64(0, row.offset);
    next_row(r, &row, 2, 3);
    assert_field(row.f[0], "1");
    assert_field(row.f[1], "x,y");
    assert_field(row.f[2], "he said \"hi\"");
    assert_i64(6, row.offset);
    next_row(r, &row, 3, 3);
    assert_field(row.f[0], "\"232138240\"");
    assert_field(row.f[1], "");
    assert_field(row.f[2], "");
    next_row(r, &row, 4, 3);
    assert_field(row.f[0], "plain\"quote"); /* a quote inside an unquoted field is a character */
    assert_field(row.f[1], "abcd");         /* text after a closing quote is kept */
    assert_field(row.f[2], "\"");
    next_row(r, &row, 5, 3);
    assert_field(row.f[0], "");
    assert_field(row.f[1], " spaced "); /* the raw reader trims nothing */
    assert_field(row.f[2], " x ");
    expect_end(r);
    close_r(r);
}

static void test_crlf(void **state)
{
    (void)state;
    char path[PATH_MAX];
    write_lit(path, "crlf.csv",
              "h1,h2\r\n"        /* line 1 */
              "1,2\r\n"          /* line 2 */
              "\"q\r\nz\",3\r\n" /* lines 3-4: CRLF inside quotes is data */
              "\"c\r\",4\r\n"    /* line 5: a quoted CR before the line end stays */
              "x\ry,5\r\n"       /* line 6: a bare CR is data */
              "last,6\r");       /* line 7: CR at the end of the input, no LF */
    csv_reader *r = open_with_header(path);
    assert_int_equal(csv_width(r), 2);
    assert_field(csv_name(r, 1), "h2");
    csv_row row;
    tb_error err;
    next_row(r, &row, 2, 2);
    assert_field(row.f[1], "2");
    next_row(r, &row, 3, 2);
    assert_field(row.f[0], "q\r\nz");
    assert_field(row.f[1], "3");
    next_row(r, &row, 5, 2);
    assert_field(row.f[0], "c\r");
    assert_field(row.f[1], "4");
    next_row(r, &row, 6, 2);
    assert_field(row.f[0], "x\ry");
    assert_field(row.f[1], "5");
    next_row(r, &row, 7, 2);
    assert_field(row.f[0], "last");
    assert_field(row.f[1], "6");
    assert_int_equal(csv_check_width(r, &row, &err), 0);
    expect_end(r);
    close_r(r);
}

static void test_bom(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    csv_row row;
    write_lit(path, "bom.csv",
              "\xEF\xBB\xBF" "Component,Timestamp(us)\n"
              "APP,\xEF\xBB\xBF" "1.5\n"); /* a BOM elsewhere is data */
    csv_reader *r = open_with_header(path);
    assert_int_equal(csv_col(r, (const char *const[]){"Component", NULL}), 0);
    assert_field(csv_name(r, 0), "Component");
    next_row(r, &row, 2, 2);
    assert_i64(27, row.offset); /* 3 (BOM) + 24 */
    assert_field(row.f[1], "\xEF\xBB\xBF" "1.5");
    expect_end(r);
    close_r(r);

    /* a BOM before a quoted field; columns count from after the BOM */
    write_lit(path, "bom-quote.csv", "\xEF\xBB\xBF\"x\"\"y\",z\n\"open");
    r = open_ok(path);
    next_row(r, &row, 1, 2);
    assert_field(row.f[0], "x\"y");
    assert_i64(3, row.offset);
    expect_error(r, &err);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 1);
    assert_i64(12, err.offset); /* 3 (BOM) + 9 */
    close_r(r);

    /* an error on the BOM's own line: its column counts from after the BOM */
    write_lit(path, "bom-line1.csv", "\xEF\xBB\xBF" "a,\"b");
    r = open_ok(path);
    expect_error(r, &err);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 3);
    assert_i64(5, err.offset);
    close_r(r);

    /* only a BOM: no header */
    write_lit(path, "bom-only.csv", "\xEF\xBB\xBF");
    r = open_ok(path);
    tb_error_clear(&err);
    assert_int_equal(csv_header(r, &err), -1);
    assert_string_equal(err.message, "empty CSV, expected a header row");
    close_r(r);

    /* two bytes of a BOM are data */
    write_lit(path, "half-bom.csv", "\xEF\xBB");
    r = open_ok(path);
    next_row(r, &row, 1, 1);
    assert_field(row.f[0], "\xEF\xBB");
    expect_end(r);
    close_r(r);
}

static void test_embedded_newlines(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    csv_row row;
    /* shaped like torch_npu operator_details.csv: call stacks span lines */
    write_lit(path, "stacks.csv",
              "Name,Stack,Dur\n"             /* line 1 */
              "aten::empty,\";\n"            /* line 2 */
              ";\n"                          /* line 3 */
              ";\",66.25\n"                  /* line 4 */
              "aten::zero_,\"/a.py(1): f\n"  /* line 5 */
              "\n"                           /* line 6: empty, but inside quotes */
              "/b.py(2): g\n"                /* line 7 */
              "\",221.16\n"                  /* line 8 */
              "tail,x,1\n"                   /* line 9 */
              "bad,row\n");                  /* line 10 */
    csv_reader *r = open_with_header(path);
    next_row(r, &row, 2, 3);
    assert_field(row.f[0], "aten::empty");
    assert_field(row.f[1], ";\n;\n;");
    assert_field(row.f[2], "66.25");
    assert_int_equal(csv_check_width(r, &row, &err), 0);
    next_row(r, &row, 5, 3);
    assert_field(row.f[1], "/a.py(1): f\n\n/b.py(2): g\n");
    assert_field(row.f[2], "221.16");
    next_row(r, &row, 9, 3);
    assert_field(row.f[0], "tail");
    next_row(r, &row, 10, 2);
    tb_error_clear(&err);
    assert_int_equal(csv_check_width(r, &row, &err), -1);
    assert_int_equal(err.line, 10);
    assert_string_equal(err.message, "row has 2 fields, the header has 3");
    expect_end(r);
    close_r(r);
}

static void test_blank_lines(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    csv_row row;
    write_lit(path, "blank.csv",
              "\n"      /* line 1 */
              "\r\n"    /* line 2 */
              "a,b\n"   /* line 3: the header */
              "\n"      /* line 4 */
              "1,2\n"   /* line 5 */
              "\r\n"    /* line 6 */
              "\n"      /* line 7 */
              "3,4\n"   /* line 8 */
              "\n"      /* line 9 */
              "\r");    /* line 10 */
    csv_reader *r = open_with_header(path);
    next_row(r, &row, 5, 2);
    assert_field(row.f[0], "1");
    next_row(r, &row, 8, 2);
    assert_field(row.f[1], "4");
    expect_end(r);
    /* a missing column is reported on the header's line */
    tb_error_clear(&err);
    assert_int_equal(csv_require(r, (const char *const[]){"c", NULL}, &err), -1);
    assert_int_equal(err.line, 3);
    close_r(r);

    /* lines that only look empty are records */
    write_lit(path, "not-blank.csv", "x\n\"\"\n,\n \n");
    r = open_ok(path);
    next_row(r, &row, 1, 1);
    next_row(r, &row, 2, 1);
    assert_field(row.f[0], "");
    next_row(r, &row, 3, 2);
    assert_field(row.f[0], "");
    assert_field(row.f[1], "");
    next_row(r, &row, 4, 1);
    assert_field(row.f[0], " ");
    expect_end(r);
    close_r(r);
}

static void test_no_final_newline(void **state)
{
    (void)state;
    char path[PATH_MAX];
    csv_row row;
    write_lit(path, "nofinal.csv", "a,b\n1,");
    csv_reader *r = open_ok(path);
    next_row(r, &row, 1, 2);
    next_row(r, &row, 2, 2);
    assert_field(row.f[0], "1");
    assert_field(row.f[1], "");
    expect_end(r);
    close_r(r);

    write_lit(path, "nofinal-quoted.csv", "a,\"b\"\"\"");
    r = open_ok(path);
    next_row(r, &row, 1, 2);
    assert_field(row.f[1], "b\"");
    expect_end(r);
    close_r(r);
}

static void test_trailing_tabs(void **state)
{
    (void)state;
    char path[PATH_MAX];
    csv_row row;
    int64_t ns = 0;
    int lost = 0;
    write_lit(path, "tabs.csv",
              "Component,Timestamp(us),Total Reserved(MB),Device\r\n"
              "SLOG,1724670453385978.290\t,0.0,NPU:0\r\n"            /* unquoted TAB (npu_module_mem.csv) */
              "aten::empty,\"1706704429088523.015\t\",75776.0,NPU:1\r\n" /* quoted TAB (kernel_details.csv) */
              "x,\"123.5\"\t ,N/A,\"a\tb\"\r\n");                    /* TAB after the closing quote */
    csv_reader *r = open_with_header(path);
    assert_field(csv_name(r, 3), "Device"); /* the CR of the CRLF is not part of the name */
    int ts = csv_require(r, (const char *const[]){"Timestamp(us)", NULL}, NULL);
    assert_int_equal(ts, 1);

    next_row(r, &row, 2, 4);
    assert_field(row.f[ts], "1724670453385978.290\t"); /* the reader keeps it */
    assert_field(csv_trim(row.f[ts]), "1724670453385978.290");
    assert_int_equal(csv_us_to_ns(row.f[ts], &ns, &lost), 0);
    assert_i64(INT64_C(1724670453385978290), ns);
    assert_field(row.f[3], "NPU:0");

    next_row(r, &row, 3, 4);
    assert_field(row.f[ts], "1706704429088523.015\t");
    assert_int_equal(csv_us_to_ns(row.f[ts], &ns, &lost), 0);
    assert_i64(INT64_C(1706704429088523015), ns);
    double d = 0;
    assert_int_equal(csv_real(row.f[2], &d), 0);
    assert_true(d == 75776.0);

    next_row(r, &row, 4, 4);
    assert_field(row.f[ts], "123.5\t ");
    assert_int_equal(csv_us_to_ns(row.f[ts], &ns, &lost), 0);
    assert_i64(123500, ns);
    assert_true(csv_is_null(row.f[2]));
    assert_field(csv_trim(row.f[3]), "a\tb"); /* a TAB inside a value stays */
    assert_int_equal(lost, 0);
    expect_end(r);
    close_r(r);
}

static void test_columns(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    write_lit(path, "columns.csv", "Step Id, Name ,Start Time(us)\t,Name,\n1,2,3,4,5\n");
    csv_reader *r = open_with_header(path);
    assert_int_equal(csv_width(r), 5);
    assert_field(csv_name(r, 1), "Name");
    assert_field(csv_name(r, 2), "Start Time(us)");
    assert_field(csv_name(r, 4), "");
    assert_string_equal(csv_path(r), path);
    assert_int_equal(csv_col(r, (const char *const[]){"Name", NULL}), 1); /* trimmed; leftmost */
    assert_int_equal(csv_col(r, (const char *const[]){"Start Time(us)", NULL}), 2);
    assert_int_equal(csv_col(r, (const char *const[]){" Start Time(us) ", NULL}), 2);
    assert_int_equal(csv_col(r, (const char *const[]){"name", NULL}), -1); /* case matters */
    assert_int_equal(csv_col(r, (const char *const[]){"Step", NULL}), -1);  /* whole names only */
    /* aliases are tried in order: the first alias present wins */
    assert_int_equal(csv_col(r, (const char *const[]){"Task Start Time(us)", "Start Time(us)", NULL}), 2);
    assert_int_equal(csv_col(r, (const char *const[]){"Start Time(us)", "Name", NULL}), 2);
    assert_int_equal(csv_col(r, (const char *const[]){NULL}), -1);

    tb_error_clear(&err);
    assert_int_equal(csv_require(r, (const char *const[]){"Op Name", "Name", NULL}, &err), 1);
    assert_int_equal(err.code, TB_OK);
    assert_int_equal(csv_require(r, (const char *const[]){"Device_id", "Device", NULL}, &err), -1);
    assert_int_equal(err.code, TB_ERR_PARSE);
    assert_string_equal(err.file, path);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 0);
    assert_string_equal(err.message, "missing column 'Device_id'");
    close_r(r);

    /* the message the brief of this reader names */
    write_lit(path, "no-start.csv", "Name,Duration(us)\nx,1\n");
    r = open_with_header(path);
    tb_error_clear(&err);
    assert_int_equal(csv_require(r, (const char *const[]){"Start Time(us)", "Task Start Time(us)", NULL}, &err), -1);
    assert_string_equal(err.message, "missing column 'Start Time(us)'");
    assert_int_equal(err.line, 1);
    close_r(r);
}

static void test_width_errors(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    csv_row row;
    write_lit(path, "width.csv",
              "a,b,c\n"    /* line 1, offset 0 */
              "1,2,3\n"    /* line 2, offset 6 */
              "1,2\n"      /* line 3, offset 12 */
              "1,2,3,\n"   /* line 4, offset 16: a trailing comma is one more field */
              "\"x\n"      /* line 5, offset 23 */
              "y\",2,3\n"  /* line 6 */
              "only\n");   /* line 7, offset 33 */
    csv_reader *r = open_with_header(path);
    next_row(r, &row, 2, 3);
    tb_error_clear(&err);
    assert_int_equal(csv_check_width(r, &row, &err), 0);
    assert_int_equal(err.code, TB_OK);

    next_row(r, &row, 3, 2);
    assert_int_equal(csv_check_width(r, &row, &err), -1);
    assert_int_equal(err.code, TB_ERR_PARSE);
    assert_string_equal(err.file, path);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 0);
    assert_i64(12, err.offset);
    assert_string_equal(err.message, "row has 2 fields, the header has 3");

    next_row(r, &row, 4, 4);
    tb_error_clear(&err);
    assert_int_equal(csv_check_width(r, &row, &err), -1);
    assert_int_equal(err.line, 4);
    assert_i64(16, err.offset);
    assert_string_equal(err.message, "row has 4 fields, the header has 3");

    next_row(r, &row, 5, 3);
    assert_int_equal(csv_check_width(r, &row, &err), 0);

    next_row(r, &row, 7, 1);
    tb_error_clear(&err);
    assert_int_equal(csv_check_width(r, &row, &err), -1);
    assert_int_equal(err.line, 7);
    assert_i64(33, err.offset);
    assert_string_equal(err.message, "row has 1 field, the header has 3");
    expect_end(r);
    close_r(r);
}

static void test_gzip(void **state)
{
    (void)state;
    char path[PATH_MAX], gzpath[PATH_MAX];
    static const char data[] = "Name,Input Shapes,Start Time(us)\r\n"
                               "ZerosLike,\"\"\"232138240\"\"\",\"1695115378713661.5\t\"\r\n"
                               "aten::empty,\";\n;\",1.69512E+15\r\n";
    write_lit(path, "plain.csv", data);
    write_gz(gzpath, sizeof gzpath, "packed.csv", data, sizeof data - 1); /* no .gz: told by magic */
    for (int pass = 0; pass < 2; pass++) {
        csv_reader *r = open_with_header(pass ? gzpath : path);
        csv_row row;
        int64_t ns = 0;
        int lost = 0;
        next_row(r, &row, 2, 3);
        assert_i64(34, row.offset);
        assert_field(row.f[1], "\"232138240\"");
        assert_int_equal(csv_us_to_ns(row.f[2], &ns, &lost), 0);
        assert_i64(INT64_C(1695115378713661500), ns);
        next_row(r, &row, 3, 3);
        assert_field(row.f[1], ";\n;");
        assert_int_equal(csv_us_to_ns(row.f[2], &ns, &lost), 0);
        assert_i64(INT64_C(1695120000000000000), ns);
        assert_int_equal(lost, 1);
        expect_end(r);
        close_r(r);
    }

    /* an empty gzip member: no header */
    write_gz(gzpath, sizeof gzpath, "empty.csv.gz", "", 0);
    csv_reader *r = open_ok(gzpath);
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(csv_header(r, &err), -1);
    assert_string_equal(err.message, "empty CSV, expected a header row");
    close_r(r);

    /* a gzip header followed by a deflate block of the reserved type 3 */
    static const unsigned char corrupt[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff};
    write_file(gzpath, sizeof gzpath, "corrupt.csv.gz", corrupt, sizeof corrupt);
    r = open_ok(gzpath);
    expect_error(r, &err);
    assert_int_equal(err.code, TB_ERR_PARSE);
    assert_string_equal(err.file, gzpath);
    assert_string_equal(err.message, "corrupt compressed data: invalid block type");
    close_r(r);
}

/*
 * A file several times the 1 MiB window: 60,000 rows (some spanning two
 * lines, so records straddle refills at varied points) and, in the middle,
 * one record of about 3 MiB, made of doubled quotes and newlines, that makes
 * the buffer grow. Every row's line, offset and values are checked, plain
 * and through gzip.
 */
enum { BIG_N = 60000, BIG_AT = 30000, BLOB_REPS = 600000 };
static long big_line[BIG_N + 1];
static int64_t big_off[BIG_N + 1];

static void build_big(sbuf *b)
{
    long line = 1;
    sb_str(b, "id,name,stack,ts\n");
    line++;
    for (int i = 0; i <= BIG_N; i++) {
        big_line[i] = line;
        big_off[i] = (int64_t)b->n;
        if (i == BIG_AT) {
            /* "ab""\n" five bytes each, decoded to `ab"\n` */
            sb_str(b, "big,\"");
            for (int k = 0; k < BLOB_REPS; k++)
                sb_add(b, "ab\"\"\n", 5);
            sb_str(b, "\",-,0\n");
            line += BLOB_REPS + 1;
            continue;
        }
        sb_fmt(b, "%d,\"name \"\"%d\"\"\",", i, i);
        if (i % 7 == 0) {
            sb_fmt(b, "\"stack\n%d\",", i);
            line++;
        } else {
            sb_fmt(b, "s%d,", i);
        }
        sb_fmt(b, "%" PRId64 ".%03d\t\n", INT64_C(1695115378000000) + i, i % 1000);
        line++;
    }
}

static void check_big(csv_reader *r)
{
    char want[64];
    csv_row row;
    tb_error err;
    for (int i = 0; i <= BIG_N; i++) {
        next_row(r, &row, big_line[i], 4);
        assert_i64(big_off[i], row.offset);
        if (i == BIG_AT) {
            assert_field(row.f[0], "big");
            assert_int_equal(row.f[1].n, (size_t)BLOB_REPS * 4);
            for (size_t k = 0; k < row.f[1].n; k += 4)
                if (memcmp(row.f[1].p + k, "ab\"\n", 4) != 0)
                    fail_msg("blob differs at byte %zu", k);
            assert_field(row.f[2], "-");
            continue;
        }
        tb_error_clear(&err);
        assert_int_equal(csv_check_width(r, &row, &err), 0);
        int64_t id = -1, ns = 0;
        assert_int_equal(csv_int(row.f[0], &id), 0);
        assert_i64(i, id);
        int n = snprintf(want, sizeof want, "name \"%d\"", i);
        assert_true(row.f[1].n == (size_t)n && memcmp(row.f[1].p, want, (size_t)n) == 0);
        n = snprintf(want, sizeof want, i % 7 == 0 ? "stack\n%d" : "s%d", i);
        assert_true(row.f[2].n == (size_t)n && memcmp(row.f[2].p, want, (size_t)n) == 0);
        assert_int_equal(csv_us_to_ns(row.f[3], &ns, NULL), 0);
        assert_i64((INT64_C(1695115378000000) + i) * 1000 + i % 1000, ns);
    }
    expect_end(r);
}

static void test_large_file(void **state)
{
    (void)state;
    char path[PATH_MAX];
    sbuf *b = fresh_text();
    build_big(b);
    assert_true(b->n > 5 * (1u << 20)); /* the window slides several times */
    write_file(path, sizeof path, "large.csv", b->p, b->n);
    csv_reader *r = open_with_header(path);
    check_big(r);
    close_r(r);

    write_gz(path, sizeof path, "large.csv.gz", b->p, b->n);
    r = open_with_header(path);
    check_big(r);
    close_r(r);
}

static void test_unterminated_quote(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    csv_row row;
    write_lit(path, "unterminated.csv",
              "a,b\n"          /* line 1 */
              "1,\"abc\n"      /* line 2: the quote opens at column 3, offset 6 */
              "def\n");
    csv_reader *r = open_ok(path);
    next_row(r, &row, 1, 2);
    expect_error(r, &err);
    assert_int_equal(err.code, TB_ERR_PARSE);
    assert_string_equal(err.file, path);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 3);
    assert_i64(6, err.offset);
    assert_string_equal(err.message, "unterminated quoted field");
    /* the reader stays failed, with the same error */
    expect_error(r, &err);
    assert_int_equal(err.line, 2);
    assert_string_equal(err.message, "unterminated quoted field");
    close_r(r);

    /* in the header */
    write_lit(path, "unterminated-header.csv", "x,\"a\"\"b");
    r = open_ok(path);
    tb_error_clear(&err);
    assert_int_equal(csv_header(r, &err), -1);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 3);
    assert_string_equal(err.message, "unterminated quoted field");
    close_r(r);

    /* far past the first window: the position is still exact */
    sbuf *b = fresh_text();
    sb_str(b, "k,v\n");
    for (int i = 0; i < 100000; i++)
        sb_fmt(b, "%d,value %d\n", i, i);
    sb_str(b, "tail, \"never closed\n\n\n");
    write_file(path, sizeof path, "unterminated-large.csv", b->p, b->n);
    r = open_with_header(path);
    for (int i = 0; i < 100000; i++)
        next_row(r, &row, i + 2, 2);
    next_row(r, &row, 100002, 2); /* a quote after a space does not open a quoted field */
    assert_field(row.f[1], " \"never closed");
    expect_end(r);
    close_r(r);

    b = fresh_text();
    sb_str(b, "k,v\n");
    for (int i = 0; i < 100000; i++)
        sb_fmt(b, "%d,value %d\n", i, i);
    size_t quote_off = b->n + 5;
    sb_str(b, "tail,\"never closed\n\n\n");
    write_file(path, sizeof path, "unterminated-large2.csv", b->p, b->n);
    r = open_with_header(path);
    for (int i = 0; i < 100000; i++)
        next_row(r, &row, i + 2, 2);
    expect_error(r, &err);
    assert_int_equal(err.line, 100002);
    assert_int_equal(err.column, 6);
    assert_i64((int64_t)quote_off, err.offset);
    close_r(r);
}

static void test_empty_file(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    write_lit(path, "empty.csv", "");
    csv_reader *r = open_ok(path);
    tb_error_clear(&err);
    assert_int_equal(csv_header(r, &err), -1);
    assert_int_equal(err.code, TB_ERR_PARSE);
    assert_string_equal(err.file, path);
    assert_int_equal(err.line, 0);
    assert_string_equal(err.message, "empty CSV, expected a header row");
    assert_int_equal(csv_width(r), 0);
    expect_error(r, &err); /* the reader stays failed */
    assert_string_equal(err.message, "empty CSV, expected a header row");
    close_r(r);

    /* only blank lines */
    write_lit(path, "blank-only.csv", "\n\r\n\n");
    r = open_ok(path);
    tb_error_clear(&err);
    assert_int_equal(csv_header(r, &err), -1);
    assert_string_equal(err.message, "empty CSV, expected a header row");
    close_r(r);

    /* without csv_header an empty input simply ends */
    write_lit(path, "empty2.csv", "");
    r = open_ok(path);
    expect_end(r);
    close_r(r);
}

static void test_open_errors(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    int w = snprintf(path, sizeof path, "%s/no-such-file.csv", tmpdir);
    assert_true(w > 0 && (size_t)w < sizeof path);
    tb_error_clear(&err);
    assert_null(csv_open(path, &err));
    assert_int_equal(err.code, TB_ERR_IO);
    assert_string_equal(err.file, path);
    assert_string_equal(err.message, "cannot open: No such file or directory");

    /* a directory opens but cannot be read */
    csv_reader *r = open_ok(tmpdir);
    expect_error(r, &err);
    assert_int_equal(err.code, TB_ERR_IO);
    assert_string_equal(err.message, "read failed: Is a directory");
    close_r(r);
    csv_close(NULL); /* accepts NULL */
}

/* A gzip CSV cut in half: the rows before the cut, then TB_ERR_TRUNCATED (not a quiet end). */
static void test_gzip_cut_short(void **state)
{
    (void)state;
    sbuf *b = fresh_text();
    sb_str(b, "id,name\n");
    for (int i = 0; i < 200000; i++)
        sb_fmt(b, "%d,name %d\n", i, i * 7);
    char path[PATH_MAX];
    write_gz(path, sizeof path, "whole.csv.gz", b->p, b->n);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char gz[1 << 21];
    size_t gzn = fread(gz, 1, sizeof gz, f);
    fclose(f);
    assert_true(gzn > 1000 && gzn < sizeof gz);
    write_file(path, sizeof path, "cut.csv.gz", gz, gzn / 2);

    csv_reader *r = open_with_header(path);
    csv_row row;
    tb_error err;
    tb_error_clear(&err);
    int k, rows = 0;
    int64_t last = -1;
    while ((k = csv_next(r, &row, &err)) == 1) {
        int64_t id;
        assert_int_equal(csv_int(row.f[0], &id), 0);
        assert_i64(rows, id);
        last = row.offset;
        rows++;
    }
    assert_int_equal(k, -1);
    assert_true(rows > 0 && rows < 200000);
    assert_int_equal(err.code, TB_ERR_TRUNCATED);
    assert_string_equal(err.file, path);
    assert_string_equal(err.message, "compressed input cut short (the gzip stream ends early)");
    assert_true(err.offset > last);
    close_r(r);
}

/* csv_split: one line the caller holds, by csv_next's rules; where each field starts. */
static void test_split(void **state)
{
    (void)state;
    tb_error err;
    csv_reader *r = csv_open_lines("lines.csv", &err);
    assert_non_null(r);
    csv_row row;
    /* a quote opens a quoted field only as its first byte; text after a closing quote is kept */
    static const char line[] = "a,\"b,c\",,\"d\"\"e\"x,  \"f\"";
    char copy[sizeof line];
    memcpy(copy, line, sizeof line);
    assert_int_equal(csv_split(r, copy, sizeof line - 1, 5, 100, &row, &err), 1);
    assert_memory_equal(copy, line, sizeof line); /* the caller's text is left as it was */
    assert_int_equal(row.n, 5);
    assert_int_equal(row.line, 5);
    assert_i64(100, row.offset);
    assert_field(row.f[0], "a");
    assert_field(row.f[1], "b,c");
    assert_field(row.f[2], "");
    assert_field(row.f[3], "d\"ex");
    assert_field(row.f[4], "  \"f\"");
    static const size_t starts[] = {0, 2, 8, 9, 17};
    for (int i = 0; i < 5; i++)
        assert_int_equal(row.start[i], starts[i]);

    /* an unterminated quote: line and offset as given, the column from the text's start */
    static const char bad[] = "1ms,1,\"unterminated, name";
    tb_error_clear(&err);
    assert_int_equal(csv_split(r, bad, sizeof bad - 1, 2, 50, &row, &err), -1);
    assert_int_equal(err.code, TB_ERR_PARSE);
    assert_string_equal(err.file, "lines.csv");
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 7);
    assert_i64(56, err.offset);
    assert_string_equal(err.message, "unterminated quoted field");

    /* the error does not stick; a CR at the end is dropped; empty text is no record */
    assert_int_equal(csv_split(r, "x,y\r", 4, 3, 0, &row, &err), 1);
    assert_int_equal(row.n, 2);
    assert_field(row.f[0], "x");
    assert_field(row.f[1], "y");
    assert_int_equal(row.start[1], 2);
    assert_int_equal(csv_split(r, "", 0, 4, 0, &row, &err), 0);

    /* longer than the reader's window */
    size_t n = (size_t)3 << 20;
    char *big = malloc(n);
    assert_non_null(big);
    memset(big, 'z', n);
    big[10] = ',';
    assert_int_equal(csv_split(r, big, n, 1, 0, &row, &err), 1);
    assert_int_equal(row.n, 2);
    assert_int_equal(row.f[1].n, n - 11);
    assert_int_equal(row.start[1], 11);
    free(big);
    csv_close(r);

    /* rows read from a file carry their field starts too (quotes counted) */
    char path[PATH_MAX];
    write_lit(path, "starts.csv", "h1,h2,h3\n\"a,b\",c,\"\"\"d\"\n");
    r = open_with_header(path);
    next_row(r, &row, 2, 3);
    assert_int_equal(row.start[0], 0);
    assert_int_equal(row.start[1], 6);
    assert_int_equal(row.start[2], 8);
    assert_field(row.f[2], "\"d");
    close_r(r);
}

/* ---- the shared public samples ------------------------------------------ */

/* 1 when dir/ascend/torch_npu_rank0 exists. */

/*
 * Every CSV of the shared samples, with its header width and record count.
 * The counts were taken independently with Python's csv module:
 *   rows = list(csv.reader(open(f, newline='', encoding='utf-8-sig')))
 *   width = len(rows[0]); count = sum(1 for r in rows[1:] if r)
 * and the short row with the line reader.line_num gave before it, plus one.
 * kernel_details.csv of rank 0 and its copy misc/op_summary_1.csv really do
 * hold one row of 31 fields (line 17: a FlashAttentionScore kernel whose
 * Duration or Wait Time is missing), which csv_check_width must report.
 */
static const struct sample {
    const char *rel;
    int width, rows;
    long last_line;  /* line where the last record starts */
    long short_line; /* the line of the row with the wrong width, or 0 */
    int short_n;
} samples[] = {
    {"cluster_analysis_output/cluster_step_trace_time.csv", 11, 18, 19, 0, 0},
    {"cluster_analysis_output/cluster_step_trace_time_8ranks.csv", 11, 9, 10, 0, 0},
    {"misc/kernel_details_new_header.csv", 46, 29, 30, 0, 0},
    {"misc/op_summary_1.csv", 32, 21, 22, 17, 31},
    {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 32, 21, 22, 17, 31},
    {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/memory_record.csv", 5, 11, 12, 0, 0},
    {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv", 4, 78, 79, 0, 0},
    {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/operator_details.csv", 9, 2, 15, 0, 0},
    {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/operator_memory.csv", 10, 28, 29, 0, 0},
    {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", 9, 1, 2, 0, 0},
    {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 32, 22, 23, 0, 0},
    {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/memory_record.csv", 7, 30, 31, 0, 0},
    {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/operator_details.csv", 9, 3, 21, 0, 0},
    {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/operator_memory.csv", 15, 21, 22, 0, 0},
    {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/static_op_mem.csv", 7, 56, 57, 0, 0},
    {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", 9, 1, 2, 0, 0},
};

static void test_shared_counts(void **state)
{
    (void)state;
    char path[PATH_MAX];
    for (size_t s = 0; s < sizeof samples / sizeof samples[0]; s++) {
        const struct sample *sm = &samples[s];
        shared_path(path, sizeof path, sm->rel);
        csv_reader *r = open_with_header(path);
        if (csv_width(r) != sm->width)
            fail_msg("%s: header has %d fields, expected %d", sm->rel, csv_width(r), sm->width);
        csv_row row;
        tb_error err;
        int rows = 0, k;
        long last = 0;
        tb_error_clear(&err);
        while ((k = csv_next(r, &row, &err)) == 1) {
            rows++;
            last = row.line;
            tb_error werr;
            tb_error_clear(&werr);
            int bad = csv_check_width(r, &row, &werr);
            if (row.line == sm->short_line) {
                char msg[64];
                snprintf(msg, sizeof msg, "row has %d fields, the header has %d", sm->short_n, sm->width);
                if (!bad || strcmp(werr.message, msg) != 0 || werr.line != sm->short_line)
                    fail_msg("%s:%ld: expected \"%s\", got \"%s\"", sm->rel, row.line, msg, werr.message);
                assert_string_equal(werr.file, path);
            } else if (bad) {
                fail_msg("%s:%ld: %s", sm->rel, werr.line, werr.message);
            }
        }
        if (k != 0)
            fail_msg("%s: %s:%ld: %s", sm->rel, err.file, err.line, err.message);
        if (rows != sm->rows || last != sm->last_line)
            fail_msg("%s: %d rows ending on line %ld, expected %d ending on line %ld", sm->rel, rows, last,
                     sm->rows, sm->last_line);
        close_r(r);
    }
}

/* Opens a shared sample with its header and reads rows up to the one starting on line. */
static csv_reader *shared_row(const char *rel, long line, csv_row *row)
{
    char path[PATH_MAX];
    shared_path(path, sizeof path, rel);
    csv_reader *r = open_with_header(path);
    tb_error err;
    tb_error_clear(&err);
    while (csv_next(r, row, &err) == 1)
        if (row->line == line)
            return r;
    fail_msg("%s: no row on line %ld (%s)", rel, line, err.message);
    return NULL;
}

static int col(csv_reader *r, const char *name)
{
    tb_error err;
    tb_error_clear(&err);
    int i = csv_require(r, (const char *const[]){name, NULL}, &err);
    if (i < 0)
        fail_msg("%s", err.message);
    return i;
}

static void test_shared_values(void **state)
{
    (void)state;
    csv_row row;
    int64_t ns = 0, v = 0;
    int lost = 0;

    /* CRLF, unquoted TAB after the time, no Device_id */
    csv_reader *r = shared_row("torch_npu_rank0/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv", 2, &row);
    assert_int_equal(csv_col(r, (const char *const[]){"Device_id", NULL}), -1);
    assert_int_equal(col(r, "Device"), 3);
    assert_field(row.f[0], "SLOG");
    assert_field(row.f[1], "1724670453385978.290\t");
    assert_int_equal(csv_us_to_ns(row.f[col(r, "Timestamp(us)")], &ns, &lost), 0);
    assert_i64(INT64_C(1724670453385978290), ns);
    assert_field(row.f[3], "NPU:0");
    close_r(r);

    /* Excel-saved: exponent notation, precision lost */
    r = shared_row("torch_npu_rank1/ASCEND_PROFILER_OUTPUT/memory_record.csv", 2, &row);
    assert_int_equal(csv_us_to_ns(row.f[col(r, "Timestamp(us)")], &ns, &lost), 0);
    assert_i64(INT64_C(1695120000000000000), ns);
    assert_int_equal(lost, 1);
    assert_true(csv_is_null(row.f[col(r, "Total Allocated(MB)")]));
    close_r(r);

    /* 2024 operator_memory: TABs after several times */
    lost = 0;
    r = shared_row("torch_npu_rank1/ASCEND_PROFILER_OUTPUT/operator_memory.csv", 2, &row);
    assert_int_equal(csv_us_to_ns(row.f[col(r, "Allocation Time(us)")], &ns, &lost), 0);
    assert_i64(INT64_C(1706704429088523015), ns);
    assert_int_equal(csv_us_to_ns(row.f[col(r, "Duration(us)")], &ns, &lost), 0);
    assert_i64(174949, ns);
    assert_int_equal(csv_int(row.f[col(r, "Stream Ptr")], &v), 0);
    assert_i64(INT64_C(94509039890976), v);
    assert_int_equal(lost, 0);
    close_r(r);

    /* op_summary_1: `Start Time(us)`, shapes in doubled quotes, N/A */
    r = shared_row("misc/op_summary_1.csv", 2, &row);
    int start = csv_col(r, (const char *const[]){"Task Start Time(us)", "Start Time(us)", NULL});
    assert_int_equal(start, 7);
    assert_int_equal(csv_us_to_ns(row.f[start], &ns, &lost), 0);
    assert_i64(INT64_C(1695115378713661000), ns);
    assert_field(row.f[col(r, "Input Shapes")], "\"232138240\"");
    assert_true(csv_is_null(row.f[col(r, "Context ID")]));
    close_r(r);

    /* quoted TAB after the start time */
    r = shared_row("misc/kernel_details_new_header.csv", 2, &row);
    assert_field(row.f[col(r, "Start Time(us)")], "1736413971558972.912\t");
    assert_int_equal(csv_us_to_ns(row.f[col(r, "Start Time(us)")], &ns, &lost), 0);
    assert_i64(INT64_C(1736413971558972912), ns);
    assert_int_equal(lost, 0);
    close_r(r);

    /* call stacks over many lines */
    r = shared_row("torch_npu_rank0/ASCEND_PROFILER_OUTPUT/operator_details.csv", 2, &row);
    assert_field(row.f[0], "aten::empty");
    assert_field(row.f[1], ";\n;\n;\n;\n;\n");
    assert_int_equal(row.f[2].n, 784);
    close_r(r);
    r = shared_row("torch_npu_rank0/ASCEND_PROFILER_OUTPUT/operator_details.csv", 15, &row);
    assert_field(row.f[0], "aten::zero_");
    assert_int_equal(row.f[2].n, 556);
    assert_field(row.f[6], "496.8508203");
    close_r(r);

    /* cluster step trace: an empty Step, a stage tuple */
    r = shared_row("cluster_analysis_output/cluster_step_trace_time_8ranks.csv", 2, &row);
    assert_true(csv_is_null(row.f[col(r, "Step")]));
    assert_int_equal(csv_int(row.f[col(r, "Index")], &v), 0);
    assert_i64(0, v);
    close_r(r);
    r = shared_row("cluster_analysis_output/cluster_step_trace_time_8ranks.csv", 10, &row);
    assert_field(row.f[col(r, "Type")], "stage");
    assert_field(row.f[col(r, "Index")], "(0, 1, 2, 3, 4, 5, 6, 7)");
    assert_int_equal(csv_int(row.f[col(r, "Index")], &v), -1);
    close_r(r);
}

/* ---- msprof task_time and npu_mem, through tb_load ---------------------- */


/* Writes text to tmpdir/rel, making its directories; path gets the full name. */
static void put(const char *rel, const char *text, char *path, size_t n)
{
    char dir[PATH_MAX];
    int w = snprintf(dir, sizeof dir, "%s", rel);
    assert_true(w > 0 && (size_t)w < sizeof dir);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = 0;
        make_dirs(dir, path, n);
    }
    write_text(rel, text, path, n);
}

/* Warnings of the last load, one per line. */
static char warnings[8192];

static void on_warn(void *ctx, const char *msg)
{
    (void)ctx;
    size_t n = strlen(warnings);
    snprintf(warnings + n, sizeof warnings - n, "%s\n", msg);
}

/* Loads input (tmpdir/rel, or an absolute path) into tmpdir/name; db gets its path. */
static tb_status load_in(const char *name, const char *rel, int strict, tb_error *err, char *db, size_t dbn)
{
    char in[PATH_MAX];
    int w = rel[0] == '/' ? snprintf(in, sizeof in, "%s", rel) : snprintf(in, sizeof in, "%s/%s", tmpdir, rel);
    assert_true(w > 0 && (size_t)w < sizeof in);
    w = snprintf(db, dbn, "%s/%s", tmpdir, name);
    assert_true(w > 0 && (size_t)w < dbn);
    unlink(db);
    warnings[0] = 0;
    tb_error_clear(err);
    const char *inputs[] = {in};
    tb_load_options o = {.inputs = inputs, .n_inputs = 1, .output = db, .strict = strict, .warn = on_warn};
    return tb_load(&o, NULL, err);
}

/* As load_in, but the load must succeed. */
static void load_ok(const char *name, const char *rel, char *db, size_t dbn)
{
    tb_error err;
    if (load_in(name, rel, 0, &err, db, dbn) != TB_OK)
        fail_msg("%s: %s:%ld:%ld: %s", rel, err.file, err.line, err.column, err.message);
}

#define SID(col) "(SELECT value FROM STRING_IDS WHERE id = " col ")"

/* TASK rows with their strings, in start order. */
static const char task_sql[] =
    "SELECT deviceId, " SID("t.name") ", " SID("t.taskType") ", streamId, taskId, startNs, endNs,"
    " (SELECT count(*) FROM COMPUTE_TASK_INFO c WHERE c.globalTaskId = t.globalTaskId),"
    " (SELECT count(*) FROM MEMCPY_INFO m WHERE m.globalTaskId = t.globalTaskId)"
    " FROM TASK t ORDER BY startNs";

/* Events a source counted under dest (0 when none). */
static int64_t count_of(const char *db, const char *path_like, const char *dest)
{
    return q1(db,
              "SELECT coalesce(sum(events), 0) FROM TB_LOAD_COUNT c JOIN TB_SOURCE s ON s.id = c.sourceId"
              " WHERE s.path LIKE '%%%s' AND c.dest = '%s'",
              path_like, dest);
}

/* msprof's header; a BOM, CRLF ends, TAB-suffixed and quoted times, N/A, a short row. */
static const char task_time_csv[] =
    "\xEF\xBB\xBF"
    "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)\r\n"
    "0,trans_TransData_0,KERNEL_AICORE,2,3,9.02,1698131672794564.2\t,1698131672794573.22\t\r\n"
    "0,N/A,EVENT_RECORD,2,4,1.5,1698131672794600.000\t,1698131672794601.500\t\r\n"
    "0,MemcpyAsync,MEMCPY_ASYNC,3,5,2.001,\"\"\"1698131672794700.001\"\"\",\"1698131672794702.002\t\"\r\n"
    "1,conv1_relu,AI_CORE,5,6,13.53,1698131672805906.0\t,N/A\r\n"
    "1,hcom_allReduce__1_1,HCCL,7,8,4,1698131672900000\t,1698131672900004\t\r\n"
    "1,short,AI_CORE,5\r\n";

static void test_task_time(void **state)
{
    (void)state;
    char p[PATH_MAX], db[PATH_MAX];
    put("tt/PROF_000001_20240101000000_AAA/mindstudio_profiler_output/task_time_20240101000000.csv", task_time_csv,
        p, sizeof p);
    load_ok("tt.db", "tt", db, sizeof db);
    /* stop as written (else start + task_time); N/A name: a task, not compute;
       HCCL: a device task, no COMMUNICATION_OP */
    assert_string_equal(rows(db, task_sql),
                        "0|trans_TransData_0|KERNEL_AICORE|2|3|1698131672794564200|1698131672794573220|1|0\n"
                        "0||EVENT_RECORD|2|4|1698131672794600000|1698131672794601500|0|0\n"
                        "0|MemcpyAsync|MEMCPY_ASYNC|3|5|1698131672794700001|1698131672794702002|0|1\n"
                        "1|conv1_relu|AI_CORE|5|6|1698131672805906000|1698131672805919530|1|0\n"
                        "1|hcom_allReduce__1_1|HCCL|7|8|1698131672900000000|1698131672900004000|0|0\n");
    assert_int_equal(q1(db, "SELECT count(*) FROM COMMUNICATION_OP"), 0);
    assert_string_equal(rows(db, "SELECT name, taskType, dur FROM kernel ORDER BY startNs"),
                        "trans_TransData_0|KERNEL_AICORE|9020\nconv1_relu|AI_CORE|13530\n");
    assert_string_equal(rows(db, "SELECT rankId, deviceId FROM RANK_DEVICE_MAP ORDER BY deviceId"), "0|0\n0|1\n");
    assert_string_equal(rows(db, "SELECT startTimeNs, endTimeNs FROM SESSION_TIME_INFO"),
                        "1698131672794564200|1698131672900004000\n");
    /* the short row: warned at FILE:LINE, counted, in rowsSkipped */
    char want[PATH_MAX + 200];
    snprintf(want, sizeof want, "%s:7: row has 4 fields, the header has 8: row skipped (an error with --strict)\n",
             p);
    assert_string_equal(warnings, want);
    assert_int_equal(count_of(db, "task_time_20240101000000.csv", "skipped: rows with a wrong field count"), 1);
    assert_string_equal(rows(db, "SELECT kind, rowsRead, rowsSkipped FROM TB_SOURCE"), "torch_npu csv|5|1\n");
    assert_int_equal(count_of(db, "task_time_20240101000000.csv", "TASK"), 5);
    assert_int_equal(count_of(db, "task_time_20240101000000.csv", "COMPUTE_TASK_INFO"), 2);
    assert_int_equal(count_of(db, "task_time_20240101000000.csv", "MEMCPY_INFO"), 1);

    /* --strict: the short row is an error at its line */
    tb_error err;
    assert_int_equal(load_in("tt_strict.db", "tt", 1, &err, db, sizeof db), TB_ERR_PARSE);
    assert_string_equal(err.file, p);
    assert_int_equal(err.line, 7);
    assert_string_equal(err.message, "row has 4 fields, the header has 8");
}

static const char op_summary_csv[] =
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
    "Task Duration(us),Task Wait Time(us),Block Num\r\n"
    "0,4294967295,3,2,trans_TransData_0,TransData,static,AI_CORE,1698131672794564.2\t,9.02,0,8\r\n"
    "1,4294967295,6,5,conv1_relu,Conv2D,static,AI_CORE,1698131672805906.0\t,13.53,0,24\r\n";

static void test_task_time_precedence(void **state)
{
    (void)state;
    char p[PATH_MAX], db[PATH_MAX];
    /* beside op_summary: op_summary gives the tasks, task_time none */
    put("pr/PROF_000001_20240101000000_AAA/mindstudio_profiler_output/op_summary_20240101000000.csv",
        op_summary_csv, p, sizeof p);
    put("pr/PROF_000001_20240101000000_AAA/mindstudio_profiler_output/task_time_20240101000000.csv", task_time_csv,
        p, sizeof p);
    load_ok("pr.db", "pr", db, sizeof db);
    assert_string_equal(rows(db, "SELECT " SID("name") ", startNs, endNs FROM TASK ORDER BY startNs"),
                        "trans_TransData_0|1698131672794564200|1698131672794573220\n"
                        "conv1_relu|1698131672805906000|1698131672805919530\n");
    assert_int_equal(count_of(db, "task_time_20240101000000.csv", "skipped: table filled by a better source"), 5);
    assert_int_equal(count_of(db, "task_time_20240101000000.csv", "TASK"), 0);
    assert_int_equal(count_of(db, "op_summary_20240101000000.csv", "TASK"), 2);

    /* task_time comes after the rank's other CSVs even when its path sorts first */
    put("pr2/job_ascend_pt/a/task_time_20240101000000.csv", task_time_csv, p, sizeof p);
    put("pr2/job_ascend_pt/b/kernel_details.csv",
        "Name,Type,Accelerator Core,Start Time(us),Duration(us)\n"
        "k,MatMul,AI_CORE,1698131672794564.2\t,1\n",
        p, sizeof p);
    load_ok("pr2.db", "pr2", db, sizeof db);
    assert_string_equal(rows(db, "SELECT relPath FROM TB_SOURCE ORDER BY id"),
                        "job_ascend_pt/b/kernel_details.csv\njob_ascend_pt/a/task_time_20240101000000.csv\n");
    assert_int_equal(q1(db, "SELECT count(*) FROM TASK"), 1);
    assert_int_equal(count_of(db, "task_time_20240101000000.csv", "skipped: table filled by a better source"), 5);

    /* the slices of one summary are one source: the second does not skip what the first filled */
    static const char hdr[] =
        "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)\n";
    char text[512];
    snprintf(text, sizeof text, "%s0,a,AI_CORE,1,1,1,100,101\n0,b,AI_CORE,1,2,1,200,201\n", hdr);
    put("sl/PROF_000001_20240101000000_AAA/mindstudio_profiler_output/task_time_slice_0_20240101000000.csv", text,
        p, sizeof p);
    snprintf(text, sizeof text, "%s0,c,AI_CORE,1,3,1,300,301\n", hdr);
    put("sl/PROF_000001_20240101000000_AAA/mindstudio_profiler_output/task_time_slice_1_20240101000000.csv", text,
        p, sizeof p);
    load_ok("sl.db", "sl", db, sizeof db);
    assert_string_equal(rows(db, "SELECT " SID("name") ", startNs, endNs FROM TASK ORDER BY startNs"),
                        "a|100000|101000\nb|200000|201000\nc|300000|301000\n");
    /* ... and with op_summary slices, these load and the task_time slices are skipped */
    snprintf(text, sizeof text,
             "Device_id,Task ID,Stream ID,Op Name,Task Type,Task Start Time(us),Task Duration(us)\n"
             "0,1,1,a,AI_CORE,100,1\n");
    put("sl/PROF_000001_20240101000000_AAA/mindstudio_profiler_output/op_summary_slice_0_20240101000000.csv", text,
        p, sizeof p);
    snprintf(text, sizeof text,
             "Device_id,Task ID,Stream ID,Op Name,Task Type,Task Start Time(us),Task Duration(us)\n"
             "0,2,1,b,AI_CORE,200,1\n");
    put("sl/PROF_000001_20240101000000_AAA/mindstudio_profiler_output/op_summary_slice_1_20240101000000.csv", text,
        p, sizeof p);
    load_ok("sl2.db", "sl", db, sizeof db);
    assert_string_equal(rows(db, "SELECT " SID("name") ", startNs FROM TASK ORDER BY startNs"),
                        "a|100000\nb|200000\n");
    assert_int_equal(count_of(db, "op_summary_slice_1_20240101000000.csv", "TASK"), 1);
    assert_int_equal(count_of(db, "task_time_slice_0_20240101000000.csv", "skipped: table filled by a better source"),
                     2);
    assert_int_equal(count_of(db, "task_time_slice_1_20240101000000.csv", "skipped: table filled by a better source"),
                     1);
}

static const char npu_mem_csv[] =
    "Device_id,event,ddr(KB),hbm(KB),memory(KB),timestamp(us)\r\n"
    "0,APP,67336,24576,91912,1709539654242981.240\t\r\n"
    "0,Device,0,1048576,1048576,1709539654262967.240\t\r\n"
    "1,APP,1.5,N/A,1.5,1709539654282965.2405\t\r\n"
    "1,APP,2\r\n";

static void test_npu_mem(void **state)
{
    (void)state;
    char p[PATH_MAX], db[PATH_MAX];
    put("nm/PROF_000001_20240101000000_AAA/mindstudio_profiler_output/npu_mem_20240101000000.csv", npu_mem_csv, p,
        sizeof p);
    load_ok("nm.db", "nm", db, sizeof db);
    /* as msprof's DB holds it: app/device, bytes, ns (a 4th decimal rounds) */
    assert_string_equal(rows(db, "SELECT " SID("type") ", ddr, hbm, timestampNs, deviceId, rankId FROM NPU_MEM"
                                 " ORDER BY timestampNs"),
                        "app|68952064|25165824|1709539654242981240|0|0\n"
                        "device|0|1073741824|1709539654262967240|0|0\n"
                        "app|1536||1709539654282965241|1|0\n");
    assert_string_equal(rows(db, "SELECT deviceId FROM RANK_DEVICE_MAP ORDER BY 1"), "0\n1\n");
    assert_string_equal(rows(db, "SELECT rowsRead, rowsSkipped FROM TB_SOURCE"), "3|1\n");
    assert_int_equal(count_of(db, "npu_mem_20240101000000.csv", "other tables"), 3);
    char want[PATH_MAX + 200];
    snprintf(want, sizeof want, "%s:5: row has 3 fields, the header has 6: row skipped (an error with --strict)\n",
             p);
    assert_string_equal(warnings, want);

    /* a rank whose msprof DB filled NPU_MEM adds no second copy */
    char dbin[PATH_MAX];
    put("nmdb/PROF_000001_20240101000000_AAA/mindstudio_profiler_output/npu_mem_20240101000000.csv", npu_mem_csv,
        p, sizeof p);
    int w = snprintf(dbin, sizeof dbin, "%s/nmdb/PROF_000001_20240101000000_AAA/msprof_20240101000000.db", tmpdir);
    assert_true(w > 0 && (size_t)w < sizeof dbin);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(dbin, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h,
                                  "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
                                  "INSERT INTO STRING_IDS VALUES (7, 'app');"
                                  "CREATE TABLE NPU_MEM (type INTEGER, ddr NUMERIC, hbm NUMERIC, timestampNs INTEGER,"
                                  " deviceId INTEGER);"
                                  "INSERT INTO NPU_MEM VALUES (7, 68952064, 25165824, 1709539654242981240, 0);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    load_ok("nmdb.db", "nmdb", db, sizeof db);
    assert_string_equal(rows(db, "SELECT " SID("type") ", ddr, hbm, timestampNs, deviceId FROM NPU_MEM"),
                        "app|68952064|25165824|1709539654242981240|0\n");
    assert_int_equal(count_of(db, "npu_mem_20240101000000.csv", "skipped: table filled by a better source"), 3);
}

/* Fails unless loading rel fails with TB_ERR_PARSE at line 1 of file, with message. */
static void load_fails(const char *rel, const char *file, const char *message)
{
    char db[PATH_MAX];
    tb_error err;
    assert_int_equal(load_in("bad.db", rel, 0, &err, db, sizeof db), TB_ERR_PARSE);
    assert_string_equal(err.file, file);
    assert_int_equal(err.line, 1);
    assert_string_equal(err.message, message);
}

static void test_missing_columns(void **state)
{
    (void)state;
    char p[PATH_MAX], db[PATH_MAX];
    put("mc1/npu_mem_1.csv", "Device_id,event,ddr(KB),hbm(KB),memory(KB)\n0,APP,1,2,3\n", p, sizeof p);
    load_fails("mc1", p, "missing column 'timestamp(us)'");
    put("mc2/npu_mem_1.csv", "Device_id,ddr(KB),timestamp(us)\n0,1,2\n", p, sizeof p);
    load_fails("mc2", p, "missing column 'event'");
    put("mc3/task_time_1.csv", "Device_id,kernel_name,kernel_type,task_time(us),task_stop(us)\n0,a,AI_CORE,1,2\n",
        p, sizeof p);
    load_fails("mc3", p, "missing column 'task_start(us)'");
    put("mc4/task_time_1.csv", "Device_id,kernel_type,task_start(us)\n0,AI_CORE,1\n", p, sizeof p);
    load_fails("mc4", p, "missing column 'kernel_name'");
    /* the task scheduler totals older chips write under this name: not read, with a warning */
    put("mc5/task_time_1.csv",
        "Time(%),Time(us),Count,Avg(us),Min(us),Max(us),Waiting(us),Running(us),Pending(us),Type,API,Task ID,"
        "Op Name,Stream ID\n"
        "100,5,1,5,5,5,0,5,0,AI_CORE,N/A,1,a,2\n",
        p, sizeof p);
    load_ok("mc5.db", "mc5", db, sizeof db);
    char want[PATH_MAX + 100];
    snprintf(want, sizeof want, "%s: task scheduler totals (no task_start(us) column): not read\n", p);
    assert_string_equal(warnings, want);
    assert_int_equal(q1(db, "SELECT count(*) FROM TASK"), 0);
    assert_string_equal(rows(db, "SELECT rowsRead, rowsSkipped FROM TB_SOURCE"), "0|0\n");
}

/* The shared op_summary_1.csv: its row of 31 fields is skipped with a warning and counted. */
static void test_shared_short_row(void **state)
{
    (void)state;
    char p[PATH_MAX], db[PATH_MAX];
    shared_path(p, sizeof p, "misc/op_summary_1.csv");
    load_ok("short.db", p, db, sizeof db);
    char want[PATH_MAX + 200];
    snprintf(want, sizeof want, "%s:17: row has 31 fields, the header has 32: row skipped (an error with --strict)\n",
             p);
    assert_string_equal(warnings, want);
    assert_string_equal(rows(db, "SELECT rowsRead, rowsSkipped FROM TB_SOURCE"), "20|1\n");
    assert_int_equal(count_of(db, "op_summary_1.csv", "skipped: rows with a wrong field count"), 1);
    tb_error err;
    assert_int_equal(load_in("short_strict.db", p, 1, &err, db, sizeof db), TB_ERR_PARSE);
    assert_string_equal(err.file, p);
    assert_int_equal(err.line, 17);
    assert_string_equal(err.message, "row has 31 fields, the header has 32");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_trim_and_null, test_teardown),
        cmocka_unit_test_teardown(test_us_to_ns, test_teardown),
        cmocka_unit_test_teardown(test_int, test_teardown),
        cmocka_unit_test_teardown(test_real, test_teardown),
        cmocka_unit_test_teardown(test_quoting, test_teardown),
        cmocka_unit_test_teardown(test_crlf, test_teardown),
        cmocka_unit_test_teardown(test_bom, test_teardown),
        cmocka_unit_test_teardown(test_embedded_newlines, test_teardown),
        cmocka_unit_test_teardown(test_blank_lines, test_teardown),
        cmocka_unit_test_teardown(test_no_final_newline, test_teardown),
        cmocka_unit_test_teardown(test_trailing_tabs, test_teardown),
        cmocka_unit_test_teardown(test_columns, test_teardown),
        cmocka_unit_test_teardown(test_width_errors, test_teardown),
        cmocka_unit_test_teardown(test_gzip, test_teardown),
        cmocka_unit_test_teardown(test_large_file, test_teardown),
        cmocka_unit_test_teardown(test_unterminated_quote, test_teardown),
        cmocka_unit_test_teardown(test_empty_file, test_teardown),
        cmocka_unit_test_teardown(test_open_errors, test_teardown),
        cmocka_unit_test_teardown(test_gzip_cut_short, test_teardown),
        cmocka_unit_test_teardown(test_split, test_teardown),
        cmocka_unit_test_teardown(test_shared_counts, test_teardown),
        cmocka_unit_test_teardown(test_shared_values, test_teardown),
        cmocka_unit_test_teardown(test_task_time, test_teardown),
        cmocka_unit_test_teardown(test_task_time_precedence, test_teardown),
        cmocka_unit_test_teardown(test_npu_mem, test_teardown),
        cmocka_unit_test_teardown(test_missing_columns, test_teardown),
        cmocka_unit_test_teardown(test_shared_short_row, test_teardown),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
