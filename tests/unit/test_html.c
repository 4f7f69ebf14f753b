/* SPDX-License-Identifier: MIT */
/*
 * test_html.c - the HTML page writer (output/html_out.c) and its SVG charts
 * (output/svg.c): escaping of every string, the ticks of a value axis, a
 * page's sections with their tables and marks, the cut of a long table, a
 * pie's "other" slice, the same bytes twice, and the failures (a chart
 * column the rows lack, a section that never finished, a page abandoned)
 * leaving nothing on disk. tests/cli/html_test.py opens real pages in a
 * browser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <float.h>
#include <math.h>

#include "output/output.h"
#include "output/svg.h"
#include "testutil.h"

static char *mem;
static size_t memlen;

static int setup(void **state)
{
    (void)state;
    return tu_make_tmpdir("tb-html");
}

static int teardown(void **state)
{
    (void)state;
    free(mem);
    mem = NULL;
    return tu_remove_tmpdir();
}

static void ok(tb_status st, const tb_error *err)
{
    if (st != TB_OK)
        fail_msg("expected success, got %d: %s: %s", (int)st, err->file, err->message);
}

/* The bytes svg_text writes for s (n bytes), cut at max code points. */
static const char *escaped(const char *s, size_t n, size_t max)
{
    free(mem);
    mem = NULL;
    FILE *f = open_memstream(&mem, &memlen);
    svg_text(f, s, n, max);
    fclose(f);
    return mem;
}

static void test_escaping(void **state)
{
    (void)state;
    assert_string_equal(escaped("<script>alert(1)</script>", 25, 0), "&lt;script&gt;alert(1)&lt;/script&gt;");
    assert_string_equal(escaped("\"onload=x' & y", 14, 0), "&quot;onload=x&#39; &amp; y");
    /* control characters but tab and newline become spaces; NUL too */
    assert_string_equal(escaped("a\x01" "b\tc\nd\0e\x7f", 10, 0), "a b\tc\nd e ");
    /* invalid UTF-8 becomes U+FFFD, valid passes */
    assert_string_equal(escaped("\xff核\xe6\x9d", 6, 0), "\xEF\xBF\xBD核\xEF\xBF\xBD");
    /* a cut counts code points and ends in an ellipsis */
    assert_string_equal(escaped("核函数abc", 12, 4), "核函数a\xE2\x80\xA6");
    assert_string_equal(escaped("abc", 3, 3), "abc");
}

static void ticks(double lo, double hi, double step, long k0, long k1, int dec)
{
    double s;
    long a, b;
    int d;
    svg_ticks(lo, hi, &s, &a, &b, &d);
    if (fabs(s - step) > step * 1e-9 || a != k0 || b != k1 || d != dec)
        fail_msg("ticks(%g, %g): step %g k %ld..%ld decimals %d; expected %g %ld..%ld %d", lo, hi, s, a, b, d, step,
                 k0, k1, dec);
}

static void test_ticks(void **state)
{
    (void)state;
    ticks(0, 18116.642, 5000, 0, 4, 0);   /* 0 5000 10000 15000 20000 */
    ticks(0, 100, 20, 0, 5, 0);
    ticks(0, 0.37, 0.1, 0, 4, 1);
    ticks(-3, 7, 2, -2, 4, 0);
    ticks(0, 0, 0.2, 0, 5, 1);            /* nothing to span: 0..1 */
    ticks(0, 1, 0.2, 0, 5, 1);
    ticks(0, 3, 1, 0, 3, 0);
    /* the largest doubles, both signs: a finite step, a few ticks */
    double step;
    long k0, k1;
    int dec;
    svg_ticks(-DBL_MAX, DBL_MAX, &step, &k0, &k1, &dec);
    assert_true(isfinite(step) && step > 0 && k0 >= -2 && k1 <= 2 && k0 < 0 && k1 > 0 && dec == 0);
}

/* A ratio axis: 1 and the values with a tenth of their span on each side, rounded out to ticks. */
static void test_ratio_axis(void **state)
{
    (void)state;
    double lo, hi;
    svg_ratio_axis(1.02, 1.05, &lo, &hi); /* 1..1.05 and 0.005 each side */
    assert_true(fabs(lo - 0.995) < 1e-12 && fabs(hi - 1.055) < 1e-12);
    ticks(lo, hi, 0.02, 49, 53, 2);       /* 0.98 .. 1.06: not from 0 */
    svg_ratio_axis(0.8, 0.9, &lo, &hi);   /* below 1: up to 1 */
    assert_true(fabs(lo - 0.78) < 1e-12 && fabs(hi - 1.02) < 1e-12);
    svg_ratio_axis(1, 1, &lo, &hi);       /* nothing moved: 0.95..1.05 */
    assert_true(fabs(lo - 0.95) < 1e-12 && fabs(hi - 1.05) < 1e-12);
    svg_ratio_axis(0.05, 3, &lo, &hi);    /* never below 0 when no value is */
    assert_true(lo == 0 && fabs(hi - 3.295) < 1e-12);
    svg_ratio_axis(NAN, NAN, &lo, &hi);   /* no value: around 1 */
    assert_true(fabs(lo - 0.95) < 1e-12 && fabs(hi - 1.05) < 1e-12);
}

/* Chart groups: a value per run of rows; a value that comes back is refused, naming it and the row. */
static void test_chart_groups(void **state)
{
    (void)state;
    chart_groups gs = {0};
    chart_group_where w = {.path = "out.xlsx", .what = "sheet 'Steps'", .column = "Rank"};
    tb_error err = {0};
    tb_cell c0 = {.kind = TB_CELL_INT, .i = 0}, c1 = {.kind = TB_CELL_INT, .i = 1}, cn = {.kind = TB_CELL_NULL};
    size_t idx = 99;
    ok(chart_group_row(&gs, &c0, 0, &w, &idx, &err), &err);
    assert_int_equal(idx, 0);
    ok(chart_group_row(&gs, &c0, 1, &w, &idx, &err), &err);
    ok(chart_group_row(&gs, &c1, 2, &w, &idx, &err), &err);
    assert_int_equal(idx, 1);
    ok(chart_group_row(&gs, &cn, 3, &w, &idx, &err), &err);
    assert_int_equal(idx, 2);
    assert_int_equal(gs.n, 3);
    assert_string_equal(gs.g[0].key, "0");
    assert_true(gs.g[0].first == 0 && gs.g[0].last == 1 && gs.g[1].first == 2 && gs.g[1].last == 2);
    assert_string_equal(gs.g[2].key, "");
    assert_int_equal(chart_group_row(&gs, &c1, 4, &w, &idx, &err), TB_ERR_USAGE);
    assert_string_equal(err.file, "out.xlsx");
    assert_non_null(strstr(err.message, "sheet 'Steps': chart series_by column 'Rank': the rows are not grouped by "
                                        "it ('1' comes back in data row 5"));
    assert_int_equal(gs.n, 3);
    chart_groups_free(&gs);
    assert_true(gs.n == 0 && !gs.g);
}

static const tb_sink_column cols[] = {
    {.header = "Name", .name = "Name", .type = TB_COL_PLAIN},
    {.header = "Total Time(us)", .name = "Total Time", .type = TB_COL_DUR_NS},
    {.header = "Ratio(%)", .name = "Ratio", .type = TB_COL_RATIO_PCT},
};

#define T(lit) {.kind = TB_CELL_TEXT, .s = (lit), .n = sizeof(lit) - 1}
#define S(v, sc) {.kind = TB_CELL_INT, .i = (v), .scale = (sc)}
#define R(v) {.kind = TB_CELL_REAL, .d = (v)}

static const tb_cell rows[][3] = {
    {T("<script>alert(1)</script>"), S(18116642, 3), R(40.5)},
    {T("\"onload=alert(2)"), S(4308016, 3), R(30)},
    {T("a & b"), S(1000, 3), {.kind = TB_CELL_NULL}},
};

/* Reads the whole file into mem; returns its length. */
static size_t slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    free(mem);
    mem = malloc(1 << 20);
    size_t n = fread(mem, 1, (1 << 20) - 1, f);
    mem[n] = 0;
    fclose(f);
    return n;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* A page at name with one section of the rows (the first nrows, repeated to total), a chart of kind. */
static tb_status page(const char *name, xlsx_chart_kind kind, const char *value_col, size_t total, size_t max_rows,
                      char *path, tb_error *err)
{
    assert_true((size_t)snprintf(path, PATH_MAX, "%.3000s/%s", tmpdir, name) < PATH_MAX);
    html_page *p;
    tb_sink *s;
    const char *values[] = {value_col};
    ok(html_create(path, &(html_options){.title = "<i>run</i>", .max_rows = max_rows,
                                         .facts = (xlsx_pair[]){{"input", "a&b"}}, .n_facts = 1,
                                         .warnings = (const char *[]){"<w>"}, .n_warnings = 1},
                   &p, err), err);
    ok(html_section_sink(p, &(html_section_options){.title = "Top <kernels>", .description = "d & e",
                                                    .chart = {.kind = kind, .categories = "Name", .values = values,
                                                              .n_values = 1},
                                                    .full_file = "top.csv", .name = "top"},
                         &s, err), err);
    tb_status st = s->begin(s, cols, 3, err);
    for (size_t i = 0; i < total && !st; i++)
        st = s->row(s, rows[i % 3], err);
    if (!st)
        st = s->finish(s, err);
    sink_destroy(s);
    if (!st)
        st = html_commit(p, err);
    html_destroy(p);
    return st;
}

static void test_page(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    tb_error_clear(&err);
    ok(page("a.html", XLSX_CHART_BAR, "Total Time", 3, 0, path, &err), &err);
    size_t n = slurp(path);
    assert_true(n > 0);
    /* the data as text, never as markup */
    assert_non_null(strstr(mem, "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>"));
    assert_non_null(strstr(mem, "<td>&quot;onload=alert(2)</td>"));
    assert_null(strstr(mem, "<script>alert"));
    assert_int_equal(count(mem, "<script"), 1);
    assert_non_null(strstr(mem, "<title>&lt;i&gt;run&lt;/i&gt;</title>"));
    assert_non_null(strstr(mem, "<h2>Top &lt;kernels&gt;</h2>"));
    assert_non_null(strstr(mem, "<li>&lt;w&gt;</li>"));
    assert_non_null(strstr(mem, "<td>a&amp;b</td>"));
    assert_non_null(strstr(mem, "content=\"default-src 'none';"));
    /* numbers as the CSV writes them, right-aligned; a NULL cell empty */
    assert_non_null(strstr(mem, "<td class=\"n\">18116.642</td><td class=\"n\">40.5</td>"));
    assert_non_null(strstr(mem, "<td class=\"n\">1</td><td class=\"n\"></td>"));
    assert_non_null(strstr(mem, "<th class=\"n\" aria-sort=\"none\">Total Time(us)</th>"));
    /* one bar a row, each with its full name and exact value */
    assert_int_equal(count(mem, "class=\"mark\""), 3);
    assert_non_null(strstr(mem, "<title>&lt;script&gt;alert(1)&lt;/script&gt; \xE2\x80\x94 Total Time(us): "
                                "18116.642</title>"));
    assert_int_equal(count(mem, "<tr><td"), 3);
    assert_null(strstr(mem, "class=\"cut\""));
    /* the same rows, the same bytes */
    char *first = strdup(mem);
    char other[PATH_MAX];
    ok(page("b.html", XLSX_CHART_BAR, "Total Time", 3, 0, other, &err), &err);
    slurp(other);
    assert_string_equal(first, mem);
    free(first);
}

static void test_cut(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    tb_error_clear(&err);
    ok(page("cut.html", XLSX_CHART_COLUMN, "Total Time", 5, 2, path, &err), &err);
    slurp(path);
    assert_int_equal(count(mem, "<tr><td"), 2);
    assert_non_null(strstr(mem, "data-rows=\"5\""));
    assert_non_null(strstr(mem, "The table shows the first 2 of 5 rows; all of them are in <code>top.csv</code>."));
    /* the chart has its own cut: all 5 rows fit */
    assert_int_equal(count(mem, "class=\"mark\""), 5);
}

static void test_pie_other(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    tb_error_clear(&err);
    ok(page("pie.html", XLSX_CHART_PIE, "Total Time", HTML_CHART_CATS + 5, 0, path, &err), &err);
    slurp(path);
    assert_int_equal(count(mem, "class=\"mark\""), HTML_CHART_CATS + 1);
    assert_non_null(strstr(mem, "<title>other \xE2\x80\x94 Total Time(us): "));
    assert_non_null(strstr(mem, "The chart shows the first 30 of 35 rows (the rest as one slice, other)."));
}

/* A lead section (a summary made last) comes before the sections finished earlier. */
static void test_lead(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    tb_error_clear(&err);
    assert_true((size_t)snprintf(path, sizeof path, "%.3000s/lead.html", tmpdir) < sizeof path);
    html_page *p;
    ok(html_create(path, &(html_options){.title = "t"}, &p, &err), &err);
    static const char *const titles[] = {"first", "second", "summary"};
    for (int i = 0; i < 3; i++) {
        tb_sink *s;
        ok(html_section_sink(p, &(html_section_options){.title = titles[i], .lead = i == 2}, &s, &err), &err);
        ok(s->begin(s, cols, 3, &err), &err);
        ok(s->row(s, rows[i], &err), &err);
        ok(s->finish(s, &err), &err);
        sink_destroy(s);
    }
    ok(html_commit(p, &err), &err);
    html_destroy(p);
    slurp(path);
    const char *a = strstr(mem, "<h2>summary</h2>"), *b = strstr(mem, "<h2>first</h2>"), *c = strstr(mem, "<h2>second</h2>");
    assert_true(a && b && c && a < b && b < c);
}

/* Does no file of the group's folder start with prefix (a page or its temporary)? */
static int none(const char *prefix)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    int clean = 1;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            clean = 0;
    closedir(d);
    return clean;
}

static void test_failures(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tb_error err;
    tb_error_clear(&err);
    /* a chart column the rows lack fails at begin; the page is never put in place */
    tb_error_clear(&err);
    assert_int_equal(page("bad.html", XLSX_CHART_LINE, "nope", 1, 0, path, &err), TB_ERR_USAGE);
    assert_string_equal(err.message, "report 'top': chart values column 'nope' is not in its rows");
    assert_string_equal(err.file, path);
    /* a page abandoned before its commit leaves nothing */
    html_page *p;
    tb_sink *s;
    snprintf(path, sizeof path, "%.3000s/gone.html", tmpdir);
    ok(html_create(path, &(html_options){.title = "x"}, &p, &err), &err);
    ok(html_section_sink(p, &(html_section_options){.title = "t", .name = "t"}, &s, &err), &err);
    /* one section at a time */
    tb_sink *s2 = NULL;
    assert_int_equal(html_section_sink(p, &(html_section_options){.title = "u"}, &s2, &err), TB_ERR_INTERNAL);
    assert_null(s2);
    sink_destroy(s); /* never finished: the page cannot be committed */
    assert_int_equal(html_commit(p, &err), TB_ERR_INTERNAL);
    html_destroy(p);
    assert_true(none("bad.html"));
    assert_true(none("gone.html"));
    /* a folder that is not there fails at create, naming the page */
    snprintf(path, sizeof path, "%.3000s/missing/x.html", tmpdir);
    assert_int_equal(html_create(path, &(html_options){.title = "x"}, &p, &err), TB_ERR_IO);
    assert_null(p);
    assert_string_equal(err.file, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escaping), cmocka_unit_test(test_ticks),    cmocka_unit_test(test_page),
        cmocka_unit_test(test_cut),      cmocka_unit_test(test_pie_other), cmocka_unit_test(test_failures),
        cmocka_unit_test(test_lead),     cmocka_unit_test(test_ratio_axis), cmocka_unit_test(test_chart_groups),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
