/* SPDX-License-Identifier: MIT */
/*
 * test_xlsx.c - unit tests for the XLSX workbook writer (engine/output/xlsx_out.c).
 *
 * Sheet names are checked rule by rule (forbidden characters, 31 UTF-16
 * units cut on a character boundary, apostrophes, "History", case-blind
 * uniqueness with " (2)" suffixes that keep the whole within 31 units).
 * Workbooks are written into a private mkdtemp() directory and read back
 * by a small zip reader below (central directory, raw inflate through
 * zlib): the sheet XML is searched for the cells, number formats, frozen
 * pane, autofilter, column widths, chart and conditional formats the rows
 * should give; a small rows_per_sheet splits a report over "<name> (2)",
 * "<name> (3)" with the About sheet saying so; text past 32,767 characters
 * is cut with a note; a chart naming a missing column fails naming the
 * sheet, and a failed or uncommitted workbook leaves no file; the same rows
 * give the same bytes. Runs with the exit-code protocol.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <setjmp.h>
#include <cmocka.h>

#include "output/output.h"
#include "testutil.h"
#include "tracebook/tracebook.h"

static char dir[256];
static xlsx_book *book;   /* released by the teardown when a test fails */
static tb_sink *sink;
static char *part;        /* the last part read (read_part replaces it) */

static int group_setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_xlsx-XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[600];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    rmdir(dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sink_destroy(sink);
    sink = NULL;
    xlsx_destroy(book);
    book = NULL;
    free(part);
    part = NULL;
    return 0;
}

/* ---- a small zip reader ------------------------------------------------------ */

static uint32_t u16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t u32(const unsigned char *p) { return u16(p) | u16(p + 2) << 16; }

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    unsigned char *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* The part name of the zip at path, inflated and NUL-terminated (new, free), or NULL when absent. */
static char *zip_part(const char *path, const char *name)
{
    size_t n;
    unsigned char *z = slurp(path, &n);
    char *out = NULL;
    if (!z || n < 22)
        goto done;
    size_t eocd = n - 22;
    while (eocd > 0 && u32(z + eocd) != 0x06054b50)
        eocd--;
    size_t count = u16(z + eocd + 10), at = u32(z + eocd + 16);
    for (size_t i = 0; i < count && at + 46 <= n; i++) {
        unsigned char *c = z + at;
        size_t method = u16(c + 10), csize = u32(c + 20), usize = u32(c + 24), nl = u16(c + 28),
               xl = u16(c + 30), cl = u16(c + 32), local = u32(c + 42);
        if (nl == strlen(name) && !memcmp(c + 46, name, nl)) {
            unsigned char *l = z + local;
            unsigned char *data = l + 30 + u16(l + 26) + u16(l + 28);
            out = malloc(usize + 1);
            if (!out)
                goto done;
            if (method == 0) {
                memcpy(out, data, usize);
            } else {
                z_stream s = {0};
                inflateInit2(&s, -15);
                s.next_in = data;
                s.avail_in = (uInt)csize;
                s.next_out = (unsigned char *)out;
                s.avail_out = (uInt)usize;
                inflate(&s, Z_FINISH);
                inflateEnd(&s);
            }
            out[usize] = 0;
            goto done;
        }
        at += 46 + nl + xl + cl;
    }
done:
    free(z);
    return out;
}

/* Reads part name of the workbook at path into `part` (kept for the teardown). */
static const char *read_part(const char *path, const char *name)
{
    free(part);
    part = zip_part(path, name);
    if (!part)
        fail_msg("%s: no part %s", path, name);
    return part;
}

static void has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("missing: %s\nin: %.3000s", want, text);
}

static void lacks(const char *text, const char *what)
{
    if (strstr(text, what))
        fail_msg("unexpected: %s", what);
}

/* ---- helpers ----------------------------------------------------------------- */

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static void open_book(const char *path, size_t rows_per_sheet)
{
    tb_error err;
    tb_error_clear(&err);
    static const xlsx_pair about[] = {{"tracebook", "test"}, {"window", "the whole run"}};
    if (xlsx_create(path, &(xlsx_options){.about = about, .n_about = 2, .created = 1700000000,
                                         .rows_per_sheet = rows_per_sheet},
                    &book, &err))
        fail_msg("xlsx_create: %s", err.message);
}

static void commit(void)
{
    tb_error err;
    tb_error_clear(&err);
    if (xlsx_commit(book, &err))
        fail_msg("xlsx_commit: %s", err.message);
    xlsx_destroy(book);
    book = NULL;
}

static tb_cell num(int64_t v, int scale) { return (tb_cell){.kind = TB_CELL_INT, .i = v, .scale = scale}; }
static tb_cell real(double d) { return (tb_cell){.kind = TB_CELL_REAL, .d = d}; }
static tb_cell text(const char *s) { return (tb_cell){.kind = TB_CELL_TEXT, .s = s, .n = strlen(s)}; }

static size_t files_in_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

/* ---- sheet names --------------------------------------------------------------- */

static void name_is(const char *want, const char *const *used, size_t n, const char *expect)
{
    char out[XLSX_SHEET_NAME_MAX];
    xlsx_sheet_name(want, used, n, out);
    assert_string_equal(expect, out);
}

static void test_sheet_names(void **state)
{
    (void)state;
    name_is("Top kernels", NULL, 0, "Top kernels");
    name_is("a[b]c:d*e?f/g\\h", NULL, 0, "a_b_c_d_e_f_g_h");
    name_is("'quoted'", NULL, 0, "quoted");
    name_is("''", NULL, 0, "Sheet");
    name_is("", NULL, 0, "Sheet");
    name_is("history", NULL, 0, "History_");
    name_is("tab\there", NULL, 0, "tab_here");
    name_is("bad \xff byte", NULL, 0, "bad _ byte");
    /* 31 units: ASCII cut, a 2-byte character kept whole, an astral one (2 units) not split */
    name_is("abcdefghijklmnopqrstuvwxyz0123456789", NULL, 0, "abcdefghijklmnopqrstuvwxyz01234");
    name_is("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
            "\xc3\xa9\xc3\xa9",
            NULL, 0,
            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    name_is("abcdefghijklmnopqrstuvwxyz0123\xf0\x9f\x98\x80", NULL, 0, "abcdefghijklmnopqrstuvwxyz0123");
    /* a cut that ends in an apostrophe drops it */
    name_is("abcdefghijklmnopqrstuvwxyz0123'x", NULL, 0, "abcdefghijklmnopqrstuvwxyz0123");
    /* unique, case-blind, suffix within 31 units */
    const char *used[] = {"About", "top", "Top (2)"};
    name_is("about", used, 3, "about (2)");
    name_is("TOP", used, 3, "TOP (3)");
    const char *long_used[] = {"abcdefghijklmnopqrstuvwxyz01234"};
    name_is("abcdefghijklmnopqrstuvwxyz0123456789", long_used, 1, "abcdefghijklmnopqrstuvwxyz0 (2)");
}

/* ---- cells and formats ----------------------------------------------------------- */

static void test_cells_and_formats(void **state)
{
    (void)state;
    char path[600];
    path_of(path, sizeof path, "cells.xlsx");
    open_book(path, 0);
    tb_error err;
    tb_error_clear(&err);
    static const tb_sink_column cols[] = {
        {.header = "Name", .name = "Name"},
        {.header = "Count", .name = "Count"},
        {.header = "Total(us)", .name = "Total", .type = TB_COL_DUR_NS},
        {.header = "Busy(%)", .name = "Busy", .type = TB_COL_RATIO_PCT},
        {.header = "Mean", .name = "Mean"},
        {.header = "Own", .name = "Own", .number_format = "0.0", .width = 17},
    };
    const char *values[] = {"Total"};
    xlsx_cond conds[] = {{.column = "Busy", .kind = XLSX_COND_THRESHOLD, .op = XLSX_OP_GE, .value = 50},
                         {.column = "Count", .kind = XLSX_COND_TOP, .top = 1},
                         {.column = "Mean", .kind = XLSX_COND_DATA_BAR}};
    assert_int_equal(TB_OK, xlsx_sheet_sink(book,
                                            &(xlsx_sheet_options){.name = "Top: kernels",
                                                                  .chart = {.kind = XLSX_CHART_STACKED_BAR,
                                                                            .categories = "Name",
                                                                            .values = values, .n_values = 1},
                                                                  .conds = conds, .n_conds = 3},
                                            &sink, &err));
    assert_int_equal(TB_OK, sink->begin(sink, cols, 6, &err));
    tb_cell r1[] = {text("matmul"), num(1234567, 0), num(1234, 3), real(12.5), real(NAN), num(7, 0)};
    tb_cell r2[] = {text("a\x01" "b"), num(-5, 0), num(-5, 3), num(100, 0), real(0.25), {.kind = TB_CELL_NULL}};
    assert_int_equal(TB_OK, sink->row(sink, r1, &err));
    assert_int_equal(TB_OK, sink->row(sink, r2, &err));
    assert_int_equal(TB_OK, sink->finish(sink, &err));
    assert_string_equal("Top_ kernels", xlsx_sink_sheet(sink, 0));
    assert_null(xlsx_sink_sheet(sink, 1));
    sink_destroy(sink);
    sink = NULL;
    assert_int_equal(2, xlsx_sheet_count(book));
    assert_false(tu_exists(path)); /* only the commit puts it in place */
    commit();
    assert_true(tu_exists(path));
    assert_int_equal(1, files_in_dir()); /* no temporaries left */

    const char *wb = read_part(path, "xl/workbook.xml");
    has(wb, "<sheet name=\"About\" sheetId=\"1\"");
    has(wb, "<sheet name=\"Top_ kernels\" sheetId=\"2\"");
    const char *st = read_part(path, "xl/styles.xml");
    has(st, "formatCode=\"#,##0\"");
    has(st, "formatCode=\"0.00%\"");
    has(st, "formatCode=\"#,##0.000\"");
    has(st, "formatCode=\"0.0\"");
    has(st, "formatCode=\"#,##0.0000\"");
    has(st, "<cellXfs count=\"8\">");
    const char *core = read_part(path, "docProps/core.xml");
    has(core, "2023-11-14T22:13:20Z");
    const char *s = read_part(path, "xl/worksheets/sheet2.xml");
    has(s, "<pane ySplit=\"1\" topLeftCell=\"A2\" activePane=\"bottomLeft\" state=\"frozen\"/>");
    has(s, "<autoFilter ref=\"A1:F3\"/>");
    has(s, "<c r=\"B2\" s=\"3\"><v>1234567</v></c>");   /* an integer, #,##0 */
    /* style 3 is #,##0, 4 #,##0.000, 5 0.00%, 6 the spec's 0.0 (styles.xml, in order of use) */
    has(s, "<c r=\"C2\" s=\"4\"><v>1.234</v></c>");     /* a scaled time, #,##0.000 */
    has(s, "<c r=\"C3\" s=\"4\"><v>-0.005</v></c>");
    has(s, "<c r=\"D2\" s=\"5\"><v>0.125</v></c>");     /* a ratio over 100, 0.00% */
    has(s, "<c r=\"D3\" s=\"5\"><v>1</v></c>");
    has(s, "<c r=\"E3\" s=\"7\"><v>0.25</v></c>");      /* a plain real: #,##0.0000, never General */
    /* printed in landscape, one page wide, the header row on every page */
    has(s, "<pageSetup fitToHeight=\"0\" orientation=\"landscape\"/>");
    has(s, "<sheetPr><pageSetUpPr fitToPage=\"1\"/></sheetPr>");
    has(s, "<c r=\"E2\" t=\"inlineStr\"><is><t>NaN</t></is></c>");
    has(s, "<c r=\"F2\" s=\"6\"><v>7</v></c>");         /* the spec's own format */
    has(s, "<c r=\"A3\" t=\"inlineStr\"><is><t>a\xef\xbf\xbd" "b</t></is></c>");
    lacks(s, "r=\"F3\"");                               /* NULL: no cell */
    has(s, "<col min=\"6\" max=\"6\" width=\"17.7109375\" customWidth=\"1\"/>"); /* the spec's width */
    has(s, "<col min=\"2\" max=\"2\" width=\"10.7109375\" customWidth=\"1\"/>"); /* "1,234,567" + 1 */
    has(s, "<conditionalFormatting sqref=\"D2:D3\"><cfRule type=\"cellIs\"");
    has(s, "operator=\"greaterThanOrEqual\"><formula>0.5</formula>");
    /* top 1: an expression rule (libxlsxwriter 1.1.4's top10 rule writes rank 10 whatever is asked) */
    has(s, "<conditionalFormatting sqref=\"B2:B3\"><cfRule type=\"expression\"");
    has(s, "<formula>AND(ISNUMBER(B2),B2&gt;=LARGE($B$2:$B$3,MIN(1,COUNT($B$2:$B$3))))</formula>");
    has(s, "<conditionalFormatting sqref=\"E2:E3\"><cfRule type=\"dataBar\"");
    has(s, "<drawing r:id=\"rId1\"/>");
    /* (read_part reuses its buffer: s is done with) */
    const char *names = read_part(path, "xl/workbook.xml");
    has(names, "<definedName name=\"_xlnm.Print_Titles\" localSheetId=\"1\">'Top_ kernels'!$1:$1</definedName>");
    const char *ch = read_part(path, "xl/charts/chart1.xml");
    has(ch, "<c:barChart><c:barDir val=\"bar\"/><c:grouping val=\"stacked\"/>");
    has(ch, "<c:f>'Top_ kernels'!$A$2:$A$3</c:f>");
    has(ch, "<c:f>'Top_ kernels'!$C$2:$C$3</c:f>");
    const char *about = read_part(path, "xl/worksheets/sheet1.xml");
    has(about, "<t>window</t>");
    has(about, "<t>the whole run</t>");
}

/* ---- splitting at the row limit, long text ------------------------------------------ */

static void test_split_and_clip(void **state)
{
    (void)state;
    char path[600];
    path_of(path, sizeof path, "split.xlsx");
    open_book(path, 3); /* header + 2 rows a sheet */
    tb_error err;
    tb_error_clear(&err);
    static const tb_sink_column cols[] = {{.header = "n"}, {.header = "t"}};
    assert_int_equal(TB_OK, xlsx_sheet_sink(book, &(xlsx_sheet_options){.name = "Rows"}, &sink, &err));
    assert_int_equal(TB_OK, sink->begin(sink, cols, 2, &err));
    size_t big = 40000;
    char *longtext = malloc(big + 1);
    assert_non_null(longtext);
    memset(longtext, 'x', big);
    longtext[big] = 0;
    for (int i = 1; i <= 5; i++) {
        tb_cell row[] = {num(i, 0), i == 3 ? (tb_cell){.kind = TB_CELL_TEXT, .s = longtext, .n = big} : text("y")};
        tb_status rc = sink->row(sink, row, &err);
        if (rc) {
            free(longtext);
            fail_msg("row %d: %s", i, err.message);
        }
    }
    free(longtext);
    assert_int_equal(TB_OK, sink->finish(sink, &err));
    assert_string_equal("Rows", xlsx_sink_sheet(sink, 0));
    assert_string_equal("Rows (2)", xlsx_sink_sheet(sink, 1));
    assert_string_equal("Rows (3)", xlsx_sink_sheet(sink, 2));
    sink_destroy(sink);
    sink = NULL;
    commit();
    const char *wb = read_part(path, "xl/workbook.xml");
    has(wb, "<sheet name=\"Rows (3)\" sheetId=\"4\"");
    const char *s3 = read_part(path, "xl/worksheets/sheet4.xml");
    has(s3, "<c r=\"A1\" s=\"1\" t=\"inlineStr\"><is><t>n</t></is></c>"); /* each part has the header */
    has(s3, "<c r=\"A2\" s=\"3\"><v>5</v></c>");
    has(s3, "<autoFilter ref=\"A1:B2\"/>");
    const char *s2 = read_part(path, "xl/worksheets/sheet3.xml");
    char *t = strstr(s2, "<c r=\"B2\" t=\"inlineStr\"><is><t>");
    assert_non_null(t);
    t += strlen("<c r=\"B2\" t=\"inlineStr\"><is><t>");
    assert_int_equal(32767, strspn(t, "x"));
    const char *about = read_part(path, "xl/worksheets/sheet1.xml");
    has(about, "sheet 'Rows' continues on sheet 'Rows (2)' (3 rows a sheet, header included)");
    has(about, "sheet 'Rows' continues on sheet 'Rows (3)'");
    has(about, "sheet 'Rows (2)': text longer than 32767 characters is cut there (first in row 2, column 2)");
}

/* ---- failures leave nothing; same rows, same bytes ------------------------------------- */

static void test_failure_and_repeat(void **state)
{
    (void)state;
    char path[600];
    path_of(path, sizeof path, "fail.xlsx");
    size_t before = files_in_dir();
    open_book(path, 0);
    tb_error err;
    tb_error_clear(&err);
    static const tb_sink_column cols[] = {{.header = "a", .name = "a"}};
    const char *values[] = {"missing"};
    assert_int_equal(TB_OK, xlsx_sheet_sink(book,
                                            &(xlsx_sheet_options){.name = "S",
                                                                  .chart = {.kind = XLSX_CHART_PIE,
                                                                            .values = values, .n_values = 1}},
                                            &sink, &err));
    assert_int_equal(TB_ERR_USAGE, sink->begin(sink, cols, 1, &err));
    assert_string_equal(err.message, "sheet 'S': chart values column 'missing' is not a column of the report");
    assert_string_equal(err.file, path);
    sink_destroy(sink);
    sink = NULL;
    /* a sheet that never finished: the commit refuses, and nothing is left */
    assert_int_equal(TB_ERR_INTERNAL, xlsx_commit(book, &err));
    xlsx_destroy(book);
    book = NULL;
    assert_false(tu_exists(path));
    assert_int_equal(before, files_in_dir());

    /* twice the same rows: the same bytes */
    unsigned char *bytes[2];
    size_t len[2];
    for (int k = 0; k < 2; k++) {
        path_of(path, sizeof path, k ? "b.xlsx" : "a.xlsx");
        open_book(path, 0);
        assert_int_equal(TB_OK, xlsx_sheet_sink(book, &(xlsx_sheet_options){.name = "S"}, &sink, &err));
        assert_int_equal(TB_OK, sink->begin(sink, cols, 1, &err));
        tb_cell row[] = {num(42, 0)};
        assert_int_equal(TB_OK, sink->row(sink, row, &err));
        assert_int_equal(TB_OK, sink->finish(sink, &err));
        sink_destroy(sink);
        sink = NULL;
        commit();
        bytes[k] = slurp(path, &len[k]);
    }
    int same = bytes[0] && bytes[1] && len[0] == len[1] && !memcmp(bytes[0], bytes[1], len[0]);
    free(bytes[0]);
    free(bytes[1]);
    assert_true(same);

    /* a folder that does not exist: an error naming the path, nothing made */
    char bad[700];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.xlsx", dir);
    assert_int_equal(TB_ERR_IO, xlsx_create(bad, NULL, &book, &err));
    assert_null(book);
    assert_string_equal(err.file, bad);
}

/* A ratio under a format of the spec's: a fraction when the format has '%', else 0..100 as written. */
static void test_ratio_own_format(void **state)
{
    (void)state;
    char path[600];
    path_of(path, sizeof path, "ratio.xlsx");
    open_book(path, 0);
    tb_error err;
    tb_error_clear(&err);
    static const tb_sink_column cols[] = {
        {.header = "A(%)", .name = "A", .type = TB_COL_RATIO_PCT, .number_format = "0.00"},
        {.header = "B(%)", .name = "B", .type = TB_COL_RATIO_PCT, .number_format = "0.0%"},
    };
    xlsx_cond conds[] = {{.column = "A", .kind = XLSX_COND_THRESHOLD, .op = XLSX_OP_LT, .value = 10}};
    assert_int_equal(TB_OK, xlsx_sheet_sink(book, &(xlsx_sheet_options){.name = "R", .conds = conds, .n_conds = 1},
                                            &sink, &err));
    assert_int_equal(TB_OK, sink->begin(sink, cols, 2, &err));
    tb_cell row[] = {real(12.5), real(12.5)};
    assert_int_equal(TB_OK, sink->row(sink, row, &err));
    assert_int_equal(TB_OK, sink->finish(sink, &err));
    sink_destroy(sink);
    sink = NULL;
    commit();
    const char *s = read_part(path, "xl/worksheets/sheet2.xml");
    has(s, "<c r=\"A2\" s=\"3\"><v>12.5</v></c>");
    has(s, "<c r=\"B2\" s=\"4\"><v>0.125</v></c>");
    /* the threshold as written, too; below it on numbers only (a blank reads as 0 in a cellIs rule) */
    has(s, "<cfRule type=\"expression\" dxfId=\"0\" priority=\"1\"><formula>AND(ISNUMBER(A2),A2&lt;10)</formula>");
}

/* The width attribute of column c's <col> in sheet xml ("" when none). */
static void col_width(const char *xml, int c, char *out, size_t n)
{
    char key[32];
    snprintf(key, sizeof key, "<col min=\"%d\" max=\"%d\" width=\"", c, c);
    const char *p = strstr(xml, key);
    out[0] = 0;
    if (p) {
        p += strlen(key);
        size_t k = strcspn(p, "\"");
        snprintf(out, n, "%.*s", (int)(k < n ? k : n - 1), p);
    }
}

/* A column of reals is as wide as the widest of its values as written
 * (numfmt_double), whichever row holds it, though a value that cannot
 * widen the column is not measured: the width of column A (reals of a
 * family of magnitudes, random) equals that of column B (a text of the
 * expected width less one, in the first row). */
static void test_real_widths(void **state)
{
    (void)state;
    char path[600];
    path_of(path, sizeof path, "widths.xlsx");
    open_book(path, 0);
    tb_error err;
    tb_error_clear(&err);
    static const tb_sink_column cols[] = {{.header = "A", .name = "A"}, {.header = "B", .name = "B"}};
    enum { FAMILIES = 7, ROWS = 20000 };
    double *v = malloc(ROWS * sizeof *v);
    assert_non_null(v);
    for (int f = 0; f < FAMILIES; f++) {
        unsigned want = 4; /* the header and its filter button */
        char buf[NUMFMT_MAX];
        for (int r = 0; r < ROWS; r++) {
            uint64_t x = tu_rnd();
            double d;
            switch (f) {
            case 0: d = (double)(x % 10000000) / (double)(tu_rnd() % 9999 + 1); break;       /* ratios, long digits */
            case 1: d = 1.0 / (double)(x % 100000000 + 1) / pow(10, (double)(tu_rnd() % 25)); break; /* below 1 */
            case 2: d = -(double)(x % 100000) / 7.0 / pow(10, (double)(tu_rnd() % 8)); break; /* negatives */
            case 3: d = (double)(int64_t)(x % 2000000) / 1000.0 - 1000.0; break;           /* short decimals */
            case 4: /* longer and longer: 100 and 0 to 13 decimals, then their negatives */
            case 5: {
                int k = r * 14 / ROWS;
                d = 100 + (double)(x % (uint64_t)pow(10, k)) / pow(10, k);
                d = f == 5 ? -d / 1e5 : d;
                break;
            }
            default: memcpy(&d, &x, sizeof d); /* any finite double */
            }
            if (!isfinite(d))
                d = 0.5;
            v[r] = d;
            unsigned w = (unsigned)numfmt_double(d, buf) + 1;
            if (w > want)
                want = w;
        }
        if (want > 60)
            want = 60;
        char name[16], *t = malloc(want);
        assert_non_null(t);
        memset(t, 'x', want - 1);
        t[want - 1] = 0;
        snprintf(name, sizeof name, "F%d", f);
        assert_int_equal(TB_OK, xlsx_sheet_sink(book, &(xlsx_sheet_options){.name = name}, &sink, &err));
        assert_int_equal(TB_OK, sink->begin(sink, cols, 2, &err));
        for (int r = 0; r < ROWS; r++) {
            tb_cell row[] = {real(v[r]), r ? (tb_cell){.kind = TB_CELL_NULL} : text(t)};
            assert_int_equal(TB_OK, sink->row(sink, row, &err));
        }
        assert_int_equal(TB_OK, sink->finish(sink, &err));
        sink_destroy(sink);
        sink = NULL;
        free(t);
    }
    free(v);
    commit();
    for (int f = 0; f < FAMILIES; f++) {
        char part_name[64], a[32], b[32];
        snprintf(part_name, sizeof part_name, "xl/worksheets/sheet%d.xml", f + 2);
        const char *xml = read_part(path, part_name);
        col_width(xml, 1, a, sizeof a);
        col_width(xml, 2, b, sizeof b);
        if (!*a || strcmp(a, b))
            fail_msg("family %d: column A width '%s', want '%s'", f, a, b);
    }
}

/* Reserved sheets come first, in reservation order; a reserved sheet no sink fills stays empty. */
static void test_reserved_order(void **state)
{
    (void)state;
    char path[600];
    path_of(path, sizeof path, "order.xlsx");
    open_book(path, 0);
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(TB_OK, xlsx_sheet_reserve(book, "second", "Second", &err));
    assert_int_equal(TB_OK, xlsx_sheet_reserve(book, "never", "Never", &err));
    static const tb_sink_column cols[] = {{.header = "n"}};
    const char *keys[] = {"first", "second"};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(TB_OK, xlsx_sheet_sink(book, &(xlsx_sheet_options){.name = keys[k], .key = keys[k]},
                                                &sink, &err));
        assert_int_equal(TB_OK, sink->begin(sink, cols, 1, &err));
        tb_cell row[] = {num(k + 1, 0)};
        assert_int_equal(TB_OK, sink->row(sink, row, &err));
        assert_int_equal(TB_OK, sink->finish(sink, &err));
        assert_string_equal(k ? "Second" : "first", xlsx_sink_sheet(sink, 0));
        sink_destroy(sink);
        sink = NULL;
    }
    commit();
    const char *wb = read_part(path, "xl/workbook.xml");
    has(wb, "<sheets><sheet name=\"About\" sheetId=\"1\" r:id=\"rId1\"/><sheet name=\"Second\" sheetId=\"2\" "
            "r:id=\"rId2\"/><sheet name=\"Never\" sheetId=\"3\" r:id=\"rId3\"/><sheet name=\"first\" sheetId=\"4\"");
    const char *s2 = read_part(path, "xl/worksheets/sheet2.xml");
    has(s2, "<c r=\"A2\" s=\"3\"><v>2</v></c>");
}

/* What libxlsxwriter prints becomes the error; nothing reaches stderr. */
static void test_warnings_captured(void **state)
{
    (void)state;
    char path[600], errpath[600];
    path_of(path, sizeof path, "warn.xlsx");
    path_of(errpath, sizeof errpath, "stderr.txt");
    open_book(path, 0);
    tb_error err;
    tb_error_clear(&err);
    static const tb_sink_column cols[] = {{.header = "n", .name = "n"}};
    xlsx_cond conds[] = {{.column = "n", .kind = XLSX_COND_TOP, .top = 5000}}; /* the spec allows 1..1000 */
    assert_int_equal(TB_OK, xlsx_sheet_sink(book, &(xlsx_sheet_options){.name = "W", .conds = conds, .n_conds = 1},
                                            &sink, &err));
    assert_int_equal(TB_OK, sink->begin(sink, cols, 1, &err));
    tb_cell row[] = {num(1, 0)};
    assert_int_equal(TB_OK, sink->row(sink, row, &err));
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(errpath, "w+");
    assert_non_null(f);
    dup2(fileno(f), 2);
    tb_status rc = sink->finish(sink, &err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    long printed = (fseek(f, 0, SEEK_END), ftell(f));
    fclose(f);
    unlink(errpath);
    assert_int_equal(TB_ERR_INTERNAL, rc);
    assert_int_equal(0, printed);
    if (!strstr(err.message, "sheet 'W': ") || !strstr(err.message, "1-1000"))
        fail_msg("message: %s", err.message);
    assert_null(strstr(err.message, "[WARNING]"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sheet_names),
        cmocka_unit_test_teardown(test_cells_and_formats, teardown),
        cmocka_unit_test_teardown(test_split_and_clip, teardown),
        cmocka_unit_test_teardown(test_failure_and_repeat, teardown),
        cmocka_unit_test_teardown(test_ratio_own_format, teardown),
        cmocka_unit_test_teardown(test_real_widths, teardown),
        cmocka_unit_test_teardown(test_reserved_order, teardown),
        cmocka_unit_test_teardown(test_warnings_captured, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
