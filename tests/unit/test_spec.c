/* SPDX-License-Identifier: MIT */
/*
 * test_spec.c - unit tests for the report spec loader (engine/report/spec.c,
 * engine/report/specnode.c).
 *
 * Specs are written into a private mkdtemp() directory (removed by the group
 * teardown) and loaded with tb_spec_load, the way the command does. The full
 * example of the language is loaded as YAML and as JSON and must give the
 * same tb_spec; every field is checked. msprof reports files are checked
 * with all 30 sample keys, a partial whitelist and each fallback to all
 * layers, with the exact reason and warning. Broken specs check the exact
 * message, line and column of their error, each worked out by hand from the
 * input next to it. `use:` is checked against the built-in top_kernels
 * report (reports/kernels.yaml) without depending on its text beyond its
 * id and its `top` param. sql_verbatim is checked for each way of writing
 * SQL, and where it is 1, every character of the SQL is looked up in the
 * file by the runner's rule (line + newlines, column + characters). Runs
 * with the exit-code protocol: main returns the number of failed tests.
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "spec/spec.h"
#include "metrics/options.h"
#include "tracebook/tracebook.h"
#include "testutil.h"

/* ---- helpers -------------------------------------------------------------------- */

/* What a test holds when an assertion fails: the per-test teardown frees it. */
static tb_spec *held[3];
static char warned[4][1400]; /* warnings received, in order */
static int n_warned;
static char path[PATH_MAX];  /* the spec file last written */

static void on_warn(void *ctx, const char *msg)
{
    (void)ctx;
    if (n_warned < 4)
        snprintf(warned[n_warned], sizeof warned[0], "%s", msg);
    n_warned++;
}

static int test_teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
        tb_spec_free(held[i]);
        held[i] = NULL;
    }
    n_warned = 0;
    return 0;
}

static tb_spec *hold(tb_spec *s)
{
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
        if (!held[i]) {
            held[i] = s;
            return s;
        }
    }
    tb_spec_free(s);
    fail_msg("too many specs held");
    return NULL;
}

/* Writes text to tmpdir/name (path gets the full name) and loads it, or fails. */
static tb_spec *load_ok(const char *name, const char *text)
{
    write_text(name, text, path, sizeof path);
    tb_spec *s = NULL;
    tb_error err;
    tb_error_clear(&err);
    if (tb_spec_load(path, &s, on_warn, NULL, &err) != TB_OK) {
        print_error("tb_spec_load(%s): %s:%ld:%ld: %s\n", name, err.file, err.line, err.column, err.message);
        fail();
    }
    assert_non_null(s);
    return hold(s);
}

/* Writes text to tmpdir/name and checks that loading it fails with exactly code, line:col and msg. */
static void expect_error(const char *name, const char *text, tb_status code, long line, long col, const char *msg)
{
    write_text(name, text, path, sizeof path);
    tb_spec *s = NULL;
    tb_error err;
    tb_error_clear(&err);
    tb_status st = tb_spec_load(path, &s, on_warn, NULL, &err);
    if (st == TB_OK) {
        hold(s);
        fail_msg("%s: loaded, expected the error '%s'", name, msg);
    }
    assert_null(s);
    if (st != code || err.code != code || strcmp(err.file, path) != 0 || err.line != line || err.column != col ||
        strcmp(err.message, msg) != 0) {
        print_error("%s:\n  expected %d %s:%ld:%ld: %s\n  got      %d %s:%ld:%ld: %s\n", name, code, path, line, col,
                    msg, st, err.file, err.line, err.column, err.message);
        fail();
    }
    assert_int_equal(n_warned, 0);
}

/* Fails unless s is exactly the literal (or both NULL). */
static void assert_str(const char *want, const char *got)
{
    if (!want || !got) {
        if (want != got)
            fail_msg("expected %s, got %s", want ? want : "NULL", got ? got : "NULL");
        return;
    }
    assert_string_equal(got, want);
}

static void assert_pos(tb_spec_pos p, const char *file, long line, long col)
{
    assert_non_null(p.file);
    assert_string_equal(p.file, file);
    assert_int_equal(p.line, line);
    assert_int_equal(p.column, col);
}

static const tb_param *find_param(const tb_param *ps, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ps[i].name, name) == 0)
            return &ps[i];
    fail_msg("no param '%s'", name);
    return NULL;
}

/* Expects a msprof reports file that fell back to all layers with reason why (without the common tail). */
static void expect_fallback(const char *name, const char *text, const char *why)
{
    char reason[512], warning[PATH_MAX + 600];
    snprintf(reason, sizeof reason, "%s: exporting all layers, as msprof does", why);
    tb_spec *s = load_ok(name, text);
    snprintf(warning, sizeof warning, "%s: %s", path, reason);
    assert_int_equal(s->msprof_reports, 1);
    assert_int_equal(s->version, 0);
    assert_int_equal(s->n_reports, 0);
    assert_int_equal(s->json_process.all, 1);
    assert_int_equal(s->json_process.n_layers, 0);
    assert_string_equal(s->json_process.fallback, reason);
    assert_int_equal(n_warned, 1);
    assert_string_equal(warned[0], warning);
}

/* ---- the full example, as YAML and as JSON ------------------------------------------- */

static const char full_yaml[] =
    "tracebook: 1\n"                                                                     /* 1 */
    "json_process: {ascend: true, communication: true}\n"                                /* 2 */
    "params:\n"                                                                          /* 3 */
    "  top: 20\n"                                                                        /* 4 */
    "  ratio: {type: real, default: 0.5, help: smallest share shown}\n"                  /* 5 */
    "  device: {type: int}\n"                                                            /* 6 */
    "metrics:\n"                                                                         /* 7 */
    "  step_trace: {policy: torch_npu}\n"                                                /* 8 */
    "outputs: [csv, json]\n"                                                             /* 9 */
    "reports:\n"                                                                         /* 10 */
    "  - use: top_kernels\n"                                                             /* 11 */
    "    params: {top: 5}\n"                                                             /* 12 */
    "  - id: my_report\n"                                                                /* 13 */
    "    title: Text\n"                                                                  /* 14 */
    "    description: More text\n"                                                       /* 15 */
    "    requires: [TASK, COMPUTE_TASK_INFO]\n"                                          /* 16 */
    "    sql: |\n"                                                                       /* 17 */
    "      SELECT name AS \"Name\", sum(dur) AS \"Total Time:dur_ns\"\n"                 /* 18 */
    "      FROM kernel GROUP BY name LIMIT :top\n"                                       /* 19 */
    "    params: {top: 3, label: kernels, exact: false}\n"                               /* 20 */
    "    outputs: [csv, xlsx]\n"                                                         /* 21 */
    "    sort: [\"-Total Time\", Name]\n"                                                /* 22 */
    "    limit: 20\n"                                                                    /* 23 */
    "    header_units: false\n"                                                          /* 24 */
    "    columns: {\"Total Time\": {header: Total, format: \"#,##0.00\", width: 14}}\n"  /* 25 */
    "    xlsx: {sheet: Top kernels, chart: {type: bar, categories: Name, values: Total Time}}\n" /* 26 */
    "  - id: from_file\n"                                                                /* 27 */
    "    sql_file: q.sql\n"                                                              /* 28 */
    "workbook: {file: perf_review.xlsx}\n";                                              /* 29 */

static const char full_json[] =
    "{\n"
    "  \"tracebook\": 1,\n"
    "  \"json_process\": {\"ascend\": true, \"communication\": true},\n"
    "  \"params\": {\n"
    "    \"top\": 20,\n"
    "    \"ratio\": {\"type\": \"real\", \"default\": 0.5, \"help\": \"smallest share shown\"},\n"
    "    \"device\": {\"type\": \"int\"}\n"
    "  },\n"
    "  \"metrics\": {\"step_trace\": {\"policy\": \"torch_npu\"}},\n"
    "  \"outputs\": [\"csv\", \"json\"],\n"
    "  \"reports\": [\n"
    "    {\"use\": \"top_kernels\", \"params\": {\"top\": 5}},\n"
    "    {\n"
    "      \"id\": \"my_report\",\n"
    "      \"title\": \"Text\",\n"
    "      \"description\": \"More text\",\n"
    "      \"requires\": [\"TASK\", \"COMPUTE_TASK_INFO\"],\n"
    "      \"sql\": \"SELECT name AS \\\"Name\\\", sum(dur) AS \\\"Total Time:dur_ns\\\"\\n"
    "FROM kernel GROUP BY name LIMIT :top\\n\",\n"
    "      \"params\": {\"top\": 3, \"label\": \"kernels\", \"exact\": false},\n"
    "      \"outputs\": [\"csv\", \"xlsx\"],\n"
    "      \"sort\": [\"-Total Time\", \"Name\"],\n"
    "      \"limit\": 20,\n"
    "      \"header_units\": false,\n"
    "      \"columns\": {\"Total Time\": {\"header\": \"Total\", \"format\": \"#,##0.00\", \"width\": 14}},\n"
    "      \"xlsx\": {\"sheet\": \"Top kernels\",\n"
    "               \"chart\": {\"type\": \"bar\", \"categories\": \"Name\", \"values\": \"Total Time\"}}\n"
    "    },\n"
    "    {\"id\": \"from_file\", \"sql_file\": \"q.sql\"}\n"
    "  ],\n"
    "  \"workbook\": {\"file\": \"perf_review.xlsx\"}\n"
    "}\n";

static const char q_sql[] = "SELECT count(*) AS \"Kernels\"\nFROM kernel\n";

/* Checks every value of the full example (positions only where YAML and JSON agree). */
static void check_full(const tb_spec *s, const char *spec_path)
{
    char sql_path[PATH_MAX + 64];
    snprintf(sql_path, sizeof sql_path, "%s/q.sql", tmpdir);
    assert_string_equal(s->path, spec_path);
    assert_int_equal(s->version, 1);
    assert_int_equal(s->msprof_reports, 0);
    assert_int_equal(s->json_process.all, 0);
    assert_int_equal(s->json_process.n_layers, 2);
    assert_string_equal(s->json_process.layers[0], "ascend");
    assert_string_equal(s->json_process.layers[1], "communication");
    assert_string_equal(s->json_process.fallback, "");

    assert_int_equal(s->n_params, 3);
    assert_string_equal(s->params[0].name, "top");
    assert_int_equal(s->params[0].type, TB_PARAM_INT);
    assert_int_equal(s->params[0].has_value, 1);
    assert_i64(20, s->params[0].i);
    assert_null(s->params[0].help);
    assert_string_equal(s->params[1].name, "ratio");
    assert_int_equal(s->params[1].type, TB_PARAM_REAL);
    assert_true(s->params[1].d == 0.5);
    assert_str("smallest share shown", s->params[1].help);
    assert_string_equal(s->params[2].name, "device");
    assert_int_equal(s->params[2].type, TB_PARAM_INT);
    assert_int_equal(s->params[2].has_value, 0);

    assert_str("torch_npu", s->step_trace_policy);
    assert_non_null(s->metrics);
    assert_int_equal(METRICS_TORCH_NPU, s->metrics->policy);
    assert_str("{\"step_trace\":{\"policy\":\"torch_npu\"}}", s->metrics_json);
    assert_int_equal(s->outputs, TB_OUT_CSV | TB_OUT_JSON);
    assert_str("perf_review.xlsx", s->workbook_file);
    assert_int_equal(s->n_reports, 3);

    /* use: top_kernels, its `top` param set by the entry (over the spec's 20) */
    const tb_spec_report *r = &s->reports[0];
    assert_str("top_kernels", r->id);
    assert_str("top_kernels", r->use);
    assert_non_null(r->origin);
    assert_int_equal(strncmp(r->origin, "builtin:", 8), 0);
    assert_non_null(r->title);
    assert_non_null(r->sql);
    assert_null(r->sql_file);
    assert_ptr_equal(r->sql_pos.file, r->origin);
    assert_true(r->sql_pos.line > 0 && r->sql_pos.column > 0);
    const tb_param *top = find_param(r->params, r->n_params, "top");
    assert_int_equal(top->type, TB_PARAM_INT);
    assert_int_equal(top->has_value, 1);
    assert_i64(5, top->i);
    assert_ptr_equal(top->pos.file, s->path);
    assert_int_equal(r->outputs, 0);

    r = &s->reports[1];
    assert_str("my_report", r->id);
    assert_str("Text", r->title);
    assert_str("More text", r->description);
    assert_null(r->use);
    assert_null(r->origin);
    assert_int_equal(r->n_requires, 2);
    assert_string_equal(r->requires[0], "TASK");
    assert_string_equal(r->requires[1], "COMPUTE_TASK_INFO");
    assert_str("SELECT name AS \"Name\", sum(dur) AS \"Total Time:dur_ns\"\nFROM kernel GROUP BY name LIMIT :top\n",
               r->sql);
    assert_null(r->sql_file);
    assert_ptr_equal(r->sql_pos.file, s->path);
    assert_int_equal(r->n_params, 3);
    assert_string_equal(r->params[0].name, "top");
    assert_int_equal(r->params[0].type, TB_PARAM_INT);
    assert_i64(3, r->params[0].i);
    assert_string_equal(r->params[1].name, "label");
    assert_int_equal(r->params[1].type, TB_PARAM_TEXT);
    assert_str("kernels", r->params[1].s);
    assert_string_equal(r->params[2].name, "exact");
    assert_int_equal(r->params[2].type, TB_PARAM_BOOL);
    assert_int_equal(r->params[2].has_value, 1);
    assert_i64(0, r->params[2].i);
    assert_int_equal(r->outputs, TB_OUT_CSV | TB_OUT_XLSX);
    assert_int_equal(r->n_sort, 2);
    assert_string_equal(r->sort[0].column, "Total Time");
    assert_int_equal(r->sort[0].desc, 1);
    assert_string_equal(r->sort[1].column, "Name");
    assert_int_equal(r->sort[1].desc, 0);
    assert_i64(20, r->limit);
    assert_int_equal(r->header_units, 0);
    assert_int_equal(r->n_columns, 1);
    assert_string_equal(r->columns[0].name, "Total Time");
    assert_str("Total", r->columns[0].header);
    assert_str("#,##0.00", r->columns[0].format);
    assert_int_equal(r->columns[0].width, 14);
    assert_str("Top kernels", r->xlsx_sheet);
    assert_str("bar", r->chart_type);
    assert_str("Name", r->chart_categories);
    assert_int_equal(r->n_chart_values, 1);
    assert_str("Total Time", r->chart_values[0]);

    r = &s->reports[2];
    assert_str("from_file", r->id);
    assert_str("from_file", r->title);
    assert_null(r->description);
    assert_str(q_sql, r->sql);
    assert_str(sql_path, r->sql_file);
    assert_pos(r->sql_pos, sql_path, 1, 1);
    assert_ptr_equal(r->sql_pos.file, r->sql_file);
    assert_i64(-1, r->limit);
    assert_int_equal(r->header_units, 1);
    assert_int_equal(r->outputs, 0);
    assert_int_equal(r->n_params, 0);
    assert_null(r->xlsx_sheet);
    assert_null(r->chart_type);
}

static void test_full_yaml(void **state)
{
    (void)state;
    char p[PATH_MAX];
    write_text("q.sql", q_sql, p, sizeof p);
    tb_spec *s = load_ok("full.yaml", full_yaml);
    check_full(s, path);
    assert_int_equal(n_warned, 0);
    /* positions in the YAML text (line numbers in the comments of full_yaml) */
    assert_pos(s->params[0].pos, path, 4, 3);
    assert_pos(s->params[2].pos, path, 6, 3);
    assert_pos(s->reports[0].pos, path, 11, 5);
    assert_pos(find_param(s->reports[0].params, s->reports[0].n_params, "top")->pos, path, 12, 14);
    assert_pos(s->reports[1].pos, path, 13, 5);
    assert_pos(s->reports[1].sql_pos, path, 18, 7);
    assert_pos(s->reports[1].params[2].pos, path, 20, 38);
    assert_pos(s->reports[1].sort[0].pos, path, 22, 12);
    assert_pos(s->reports[1].sort[1].pos, path, 22, 27);
    assert_pos(s->reports[1].columns[0].pos, path, 25, 15);
}

static void test_full_json(void **state)
{
    (void)state;
    char p[PATH_MAX];
    write_text("q.sql", q_sql, p, sizeof p);
    tb_spec *s = load_ok("full.json", full_json);
    check_full(s, path);
    assert_int_equal(n_warned, 0);
    assert_pos(s->params[0].pos, path, 5, 5);
    assert_pos(s->reports[0].pos, path, 12, 5);
    assert_pos(s->reports[1].pos, path, 13, 5);
    assert_pos(s->reports[1].sql_pos, path, 18, 15); /* after the opening quote */
    assert_pos(s->reports[1].sort[1].pos, path, 21, 31);
}

/* ---- more fields and their positions --------------------------------------------------- */

/* Scalars are typed by the YAML 1.2 core schema; quoted ones are strings. */
static void test_scalar_types(void **state)
{
    (void)state;
    tb_spec *s = load_ok("types.yaml",
                         "tracebook: 1\n"
                         "params:\n"
                         "  a: 1\n"
                         "  b: -1.5\n"
                         "  c: true\n"
                         "  d: True\n"
                         "  e: FALSE\n"
                         "  f: yes\n"
                         "  g: \"5\"\n"
                         "  h: 0x1F\n"
                         "  i: 0o17\n"
                         "  j: .inf\n"
                         "  k: 1e3\n"
                         "  l: '01'\n"
                         "  m: 012\n"
                         "  n: +7\n"
                         "  o: !!str 8\n"
                         "  p: .5\n"
                         "  q: off\n");
    struct {
        const char *name;
        tb_param_type type;
        int64_t i;
        double d;
        const char *s;
    } want[] = {
        {"a", TB_PARAM_INT, 1, 0, NULL},      {"b", TB_PARAM_REAL, 0, -1.5, NULL},   {"c", TB_PARAM_BOOL, 1, 0, NULL},
        {"d", TB_PARAM_BOOL, 1, 0, NULL},     {"e", TB_PARAM_BOOL, 0, 0, NULL},      {"f", TB_PARAM_TEXT, 0, 0, "yes"},
        {"g", TB_PARAM_TEXT, 0, 0, "5"},      {"h", TB_PARAM_INT, 31, 0, NULL},      {"i", TB_PARAM_INT, 15, 0, NULL},
        {"j", TB_PARAM_REAL, 0, HUGE_VAL, NULL}, {"k", TB_PARAM_REAL, 0, 1000, NULL}, {"l", TB_PARAM_TEXT, 0, 0, "01"},
        {"m", TB_PARAM_INT, 12, 0, NULL},     {"n", TB_PARAM_INT, 7, 0, NULL},       {"o", TB_PARAM_TEXT, 0, 0, "8"},
        {"p", TB_PARAM_REAL, 0, 0.5, NULL},   {"q", TB_PARAM_TEXT, 0, 0, "off"},
    };
    assert_int_equal(s->n_params, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < s->n_params; i++) {
        const tb_param *p = &s->params[i];
        assert_string_equal(p->name, want[i].name);
        if (p->type != want[i].type)
            fail_msg("param %s: type %d, expected %d", p->name, p->type, want[i].type);
        assert_int_equal(p->has_value, 1);
        if (p->type == TB_PARAM_INT || p->type == TB_PARAM_BOOL)
            assert_i64(want[i].i, p->i);
        else if (p->type == TB_PARAM_REAL)
            assert_true(p->d == want[i].d);
        else
            assert_str(want[i].s, p->s);
        assert_pos(p->pos, path, (long)i + 3, 3);
    }
}

/* Where inline SQL starts: a plain scalar, after a quote, a block's first content line. */
static void test_sql_positions(void **state)
{
    (void)state;
    tb_spec *s = load_ok("pos.yaml",
                         "tracebook: 1\n"
                         "reports:\n"
                         "  - id: plain\n"
                         "    sql: SELECT 1\n"           /* 4: S at column 10 */
                         "  - id: quoted\n"
                         "    sql: 'SELECT 2'\n"         /* 6: S at column 11 */
                         "  - {id: flow, sql: \"SELECT 3\"}\n" /* 7: S at column 22 */
                         "  - id: block\n"
                         "    sql: |-   # a comment\n"
                         "\n"
                         "        SELECT 4\n"           /* 11: indented by 8 */
                         "          FROM t\n"
                         "  - id: folded\n"
                         "    sql: >\n"
                         "     SELECT 5\n"              /* 15: indented by 5 */
                         "     FROM t\n");
    assert_int_equal(s->n_reports, 5);
    assert_str("SELECT 1", s->reports[0].sql);
    assert_pos(s->reports[0].sql_pos, path, 4, 10);
    assert_str("SELECT 2", s->reports[1].sql);
    assert_pos(s->reports[1].sql_pos, path, 6, 11);
    assert_str("SELECT 3", s->reports[2].sql);
    assert_pos(s->reports[2].sql_pos, path, 7, 22);
    assert_str("\nSELECT 4\n  FROM t", s->reports[3].sql);
    assert_pos(s->reports[3].sql_pos, path, 10, 9); /* line 1 of the SQL is the blank line 10 */
    assert_str("SELECT 5 FROM t\n", s->reports[4].sql);
    assert_pos(s->reports[4].sql_pos, path, 15, 6);
}

/* ---- sql_verbatim: offsets into the SQL that map onto the file -------------------------- */

/*
 * 1 when every character of r's SQL stands where the runner's rule puts it
 * in text (the file's contents, ASCII): line sql_pos.line plus the newlines
 * before it, column sql_pos.column plus the characters since the last one.
 */
static int maps(const char *text, const tb_spec_report *r)
{
    long line = 0, col = 0;
    for (const char *q = r->sql; *q; q++) {
        if (*q == '\n') {
            line++;
            col = 0;
            continue;
        }
        const char *p = text;
        for (long l = 1; p && l < r->sql_pos.line + line; l++)
            if ((p = strchr(p, '\n')))
                p++;
        long at = r->sql_pos.column + col;
        if (!p || at < 1 || (long)strcspn(p, "\n") < at || p[at - 1] != *q)
            return 0;
        col++;
    }
    return 1;
}

static const char styles_yaml[] =
    "tracebook: 1\n"
    "reports:\n"
    "  - id: literal\n"
    "    sql: |\n"
    "      SELECT a,\n"                  /* 5 */
    "        b FROM t\n"
    "  - id: strip\n"
    "    sql: |-\n"
    "      SELECT 1\n"                   /* 9 */
    "  - id: keep\n"
    "    sql: |+\n"
    "      SELECT 2\n"                   /* 12 */
    "\n"
    "  - id: indicator\n"
    "    sql: |2\n"                      /* the mapping's indentation (4) + 2 */
    "        SELECT 3\n"                 /* 16: the text starts at column 7, with 2 spaces */
    "          FROM t\n"
    "  - id: tagged\n"
    "    sql: !!str\n"
    "      |\n"                          /* 20: the header, after its tag */
    "      SELECT 4\n"
    "  - id: folded\n"
    "    sql: >\n"
    "      SELECT 5\n"                   /* 24 */
    "      FROM t\n"
    "  - id: single\n"
    "    sql: 'SELECT 6'\n"              /* 27 */
    "  - id: double\n"
    "    sql: \"SELECT 7\"\n"            /* 29 */
    "  - id: plain\n"
    "    sql: SELECT 8 FROM t\n"         /* 31 */
    "  - id: plain_tagged\n"
    "    sql: !!str SELECT 9\n"          /* 33: S at column 16 */
    "  - id: plain_lines\n"
    "    sql: SELECT 10\n"               /* 35 */
    "      FROM t\n"
    "  - {id: flow, sql: SELECT 11}\n"; /* 37: S at column 21 */

/* Each way of writing inline YAML SQL: literal blocks and one-line plain scalars map, the rest not. */
static void test_sql_verbatim_yaml(void **state)
{
    (void)state;
    tb_spec *s = load_ok("styles.yaml", styles_yaml);
    struct {
        const char *id, *sql;
        long line, col;
        int verbatim;
    } want[] = {
        {"literal", "SELECT a,\n  b FROM t\n", 5, 7, 1},
        {"strip", "SELECT 1", 9, 7, 1},
        {"keep", "SELECT 2\n\n", 12, 7, 1},
        {"indicator", "  SELECT 3\n    FROM t\n", 16, 7, 1},
        {"tagged", "SELECT 4\n", 21, 7, 1},
        {"folded", "SELECT 5 FROM t\n", 24, 7, 0},
        {"single", "SELECT 6", 27, 11, 0},
        {"double", "SELECT 7", 29, 11, 0},
        {"plain", "SELECT 8 FROM t", 31, 10, 1},
        {"plain_tagged", "SELECT 9", 33, 16, 1},
        {"plain_lines", "SELECT 10 FROM t", 35, 10, 0},
        {"flow", "SELECT 11", 37, 21, 1},
    };
    assert_int_equal(s->n_reports, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < s->n_reports; i++) {
        const tb_spec_report *r = &s->reports[i];
        assert_string_equal(r->id, want[i].id);
        assert_str(want[i].sql, r->sql);
        assert_pos(r->sql_pos, path, want[i].line, want[i].col);
        if (r->sql_verbatim != want[i].verbatim)
            fail_msg("report %s: sql_verbatim %d, expected %d", r->id, r->sql_verbatim, want[i].verbatim);
        /* the flag holds its promise; where the text was folded, offsets indeed do not map */
        if (r->sql_verbatim)
            assert_true(maps(styles_yaml, r));
        else if (strcmp(r->id, "folded") == 0 || strcmp(r->id, "plain_lines") == 0)
            assert_false(maps(styles_yaml, r));
    }
}

/* CRLF line ends keep a literal block verbatim. */
static void test_sql_verbatim_crlf(void **state)
{
    (void)state;
    static const char text[] = "tracebook: 1\r\nreports:\r\n  - id: a\r\n    sql: |\r\n     SELECT 1\r\n       FROM t\r\n";
    tb_spec *s = load_ok("crlf.yaml", text);
    const tb_spec_report *r = &s->reports[0];
    assert_str("SELECT 1\n  FROM t\n", r->sql);
    assert_pos(r->sql_pos, path, 5, 6);
    assert_int_equal(r->sql_verbatim, 1);
    assert_true(maps(text, r));
}

/* JSON strings never map (escapes); sql_file always does; use: keeps the built-in's flag. */
static void test_sql_verbatim_other(void **state)
{
    (void)state;
    static const char json[] = "{\"tracebook\": 1, \"reports\": [\n"
                               "  {\"id\": \"a\", \"sql\": \"SELECT 1\"},\n"
                               "  {\"id\": \"b\", \"sql\": \"SELECT\\n  x FROM t\"}\n"
                               "]}\n";
    tb_spec *s = load_ok("styles.json", json);
    assert_int_equal(s->n_reports, 2);
    assert_pos(s->reports[0].sql_pos, path, 2, 23);
    assert_int_equal(s->reports[0].sql_verbatim, 0);
    assert_str("SELECT\n  x FROM t", s->reports[1].sql);
    assert_pos(s->reports[1].sql_pos, path, 3, 23);
    assert_int_equal(s->reports[1].sql_verbatim, 0);
    assert_false(maps(json, &s->reports[1]));
    test_teardown(NULL);

    char p[PATH_MAX];
    write_text("v.sql", "SELECT 1\n  FROM t\n", p, sizeof p);
    s = load_ok("file.yaml", "tracebook: 1\nreports:\n  - id: f\n    sql_file: v.sql\n");
    assert_pos(s->reports[0].sql_pos, p, 1, 1);
    assert_int_equal(s->reports[0].sql_verbatim, 1);
    test_teardown(NULL);

    /* the built-in file loaded on its own gives the flag the used copy must keep */
    const tb_builtin *b = tb_builtin_find("kernels");
    assert_non_null(b);
    tb_spec *k = NULL;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_spec_load_mem("builtin:kernels.yaml", b->text, strlen(b->text), &k, NULL, NULL, &err), TB_OK);
    hold(k);
    const tb_spec_report *src = NULL;
    for (size_t i = 0; i < k->n_reports; i++)
        if (strcmp(k->reports[i].id, "top_kernels") == 0)
            src = &k->reports[i];
    assert_non_null(src);
    assert_int_equal(src->sql_verbatim, 1); /* the built-ins write their SQL as literal blocks */
    s = load_ok("use_v.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    title: T\n");
    const tb_spec_report *r = &s->reports[0];
    assert_str(src->sql, r->sql);
    assert_string_equal(r->sql_pos.file, "builtin:kernels.yaml");
    assert_int_equal(r->sql_pos.line, src->sql_pos.line);
    assert_int_equal(r->sql_pos.column, src->sql_pos.column);
    assert_int_equal(r->sql_verbatim, src->sql_verbatim);
    assert_true(maps(b->text, r));
}

/* Strings where lists are allowed, the default title, the spec's single output, a column without options. */
static void test_short_forms(void **state)
{
    (void)state;
    tb_spec *s = load_ok("short.yaml",
                         "tracebook: 1\n"
                         "outputs: console\n"
                         "reports:\n"
                         "  - id: r.1-x\n"
                         "    requires: TASK\n"
                         "    sort: -Count\n"
                         "    outputs: json\n"
                         "    limit: 0\n"
                         "    columns: {Count: , Name: {width: 0}}\n"
                         "    xlsx: {chart: {type: pie, values: Count}}\n"
                         "    sql: SELECT 1\n");
    assert_int_equal(s->outputs, TB_OUT_CONSOLE);
    assert_null(s->metrics);
    assert_null(s->metrics_json);
    assert_null(s->step_trace_policy);
    assert_null(s->workbook_file);
    assert_int_equal(s->json_process.all, 1);
    assert_string_equal(s->json_process.fallback, "");
    const tb_spec_report *r = &s->reports[0];
    assert_str("r.1-x", r->title);
    assert_int_equal(r->n_requires, 1);
    assert_string_equal(r->requires[0], "TASK");
    assert_int_equal(r->n_sort, 1);
    assert_string_equal(r->sort[0].column, "Count");
    assert_int_equal(r->sort[0].desc, 1);
    assert_int_equal(r->outputs, TB_OUT_JSON);
    assert_i64(0, r->limit);
    assert_int_equal(r->n_columns, 2);
    assert_string_equal(r->columns[0].name, "Count");
    assert_null(r->columns[0].header);
    assert_string_equal(r->columns[1].name, "Name");
    assert_null(r->xlsx_sheet);
    assert_str("pie", r->chart_type);
    assert_null(r->chart_categories);
    assert_int_equal(r->n_chart_values, 1);
    assert_str("Count", r->chart_values[0]);
}

/* Every metrics option is parsed into the typed struct; what is not given keeps its default. */
static void test_metrics_options(void **state)
{
    (void)state;
    tb_spec *s = load_ok("metrics.yaml",
                         "tracebook: 1\n"
                         "metrics:\n"
                         "  step_trace:\n"
                         "    policy: msprof_analyze\n"
                         "  classes:\n"
                         "    receive: [\"hcom_receive*\", \"re:^recv\"]\n"
                         "    compute_exclude: []\n"
                         "    comm_stream_rule: none\n"
                         "  hta: {round_us: false, kernel_wait_us: 12.5, classes: {memory: dma*}}\n"
                         "  exposed: {linked_only: false, classes: {communication: ~}}\n"
                         "  cluster: {rank_source: TB_STEP_TRACE_TIME}\n");
    const metrics_options *o = s->metrics;
    assert_non_null(o);
    assert_int_equal(METRICS_MSPROF_ANALYZE, o->policy);
    assert_str("msprof_analyze", s->step_trace_policy);
    assert_int_equal(1, o->receive.set);
    assert_int_equal(2, o->receive.n);
    assert_str("hcom_receive*", o->receive.v[0]);
    assert_str("re:^recv", o->receive.v[1]);
    assert_int_equal(1, o->compute_exclude.set); /* [] matches nothing: given, empty */
    assert_int_equal(0, o->compute_exclude.n);
    assert_int_equal(METRICS_STREAM_NONE, o->comm_stream_rule);
    assert_int_equal(0, o->hta.round_us);
    assert_int_equal(1, o->hta.drop_last_step);
    assert_int_equal(1, o->hta.linked_only);
    assert_true(o->hta.kernel_wait_us == 12.5);
    assert_int_equal(0, o->hta.communication.set);
    assert_int_equal(1, o->hta.memory.set);
    assert_str("dma*", o->hta.memory.v[0]);
    assert_int_equal(0, o->exposed.linked_only);
    assert_int_equal(0, o->exposed.communication.set); /* null: the default */
    assert_int_equal(METRICS_SOURCE_STEP_CSV, o->rank_source);
    assert_int_equal(s->n_reports, 0);
    /* the section as written, typed as YAML 1.2 core types it, in file order */
    assert_str("{\"step_trace\":{\"policy\":\"msprof_analyze\"},"
               "\"classes\":{\"receive\":[\"hcom_receive*\",\"re:^recv\"],\"compute_exclude\":[],\"comm_stream_rule\":\"none\"},\"hta\":{\"round_us\":false,"
               "\"kernel_wait_us\":12.5,\"classes\":{\"memory\":\"dma*\"}},\"exposed\":{\"linked_only\":false,"
               "\"classes\":{\"communication\":null}},\"cluster\":{\"rank_source\":\"TB_STEP_TRACE_TIME\"}}",
               s->metrics_json);
    /* the same options compare equal; the defaults do not */
    tb_spec *t = load_ok("metrics2.yaml",
                         "tracebook: 1\n"
                         "metrics:\n"
                         "  cluster: {rank_source: TB_STEP_TRACE_TIME}\n"
                         "  exposed: {linked_only: false}\n"
                         "  hta: {kernel_wait_us: 12.5, round_us: false, classes: {memory: [dma*]}}\n"
                         "  classes: {comm_stream_rule: none, compute_exclude: [],\n"
                         "            receive: [\"hcom_receive*\", \"re:^recv\"]}\n"
                         "  step_trace: {policy: msprof_analyze}\n");
    assert_int_equal(1, metrics_options_equal(s->metrics, t->metrics));
    assert_int_equal(0, metrics_options_equal(s->metrics, NULL));
    assert_int_equal(1, metrics_options_equal(NULL, metrics_options_default()));
}

/* Every metrics option is checked when the spec loads, at its line and column. */
static void test_error_metrics_options(void **state)
{
    (void)state;
    static const struct {
        const char *name, *text;
        long line, col;
        const char *msg;
    } bad[] = {
        {"m1.yaml", "tracebook: 1\nmetrics:\n  hta:\n    rond_us: false\n", 4, 5,
         "unknown key 'rond_us' in metrics.hta (did you mean 'round_us'?); expected one of: round_us, "
         "drop_last_step, linked_only, kernel_wait_us, stream_events, classes"},
        {"m2.yaml", "tracebook: 1\nmetrics: {stepp_trace: {policy: torch_npu}}\n", 2, 11,
         "unknown key 'stepp_trace' in metrics (did you mean 'step_trace'?); expected one of: step_trace, "
         "classes, hta, exposed, cluster"},
        {"m3.yaml", "tracebook: 1\nmetrics: {x: .nan}\n", 2, 11,
         "unknown key 'x' in metrics; expected one of: step_trace, classes, hta, exposed, cluster"},
        {"m4.yaml", "tracebook: 1\nmetrics: {hta: {round_us: yes}}\n", 2, 27,
         "'metrics.hta.round_us' must be true or false, got 'yes'"},
        {"m5.yaml", "tracebook: 1\nmetrics:\n  hta: {kernel_wait_us: -1}\n", 3, 25,
         "'metrics.hta.kernel_wait_us' must be a number >= 0, got '-1'"},
        {"m6.yaml", "tracebook: 1\nmetrics: {hta: {kernel_wait_us: .inf}}\n", 2, 33,
         "'metrics.hta.kernel_wait_us' must be a number >= 0, got '.inf'"},
        {"m7.yaml", "tracebook: 1\nmetrics: {classes: {comm_stream_rule: some}}\n", 2, 39,
         "'metrics.classes.comm_stream_rule' must be one of: all, any, none; got 'some'"},
        {"m8.yaml", "tracebook: 1\nmetrics:\n  classes:\n    receive: [\"a*\", \"re:(\"]\n", 4, 21,
         "'metrics.classes.receive' has a bad regular expression 're:(': Unmatched ( or \\("},
        {"m9.yaml", "tracebook: 1\nmetrics: {classes: {compute_exclude: [\"a*\", {a: b}]}}\n", 2, 45,
         "'metrics.classes.compute_exclude' item 2 must be a string pattern, got a mapping"},
        {"m10.yaml", "tracebook: 1\nmetrics: {exposed: {classes: {memory: {a: 1}}}}\n", 2, 39,
         "'metrics.exposed.classes.memory' must be a string or a list of strings, got a mapping"},
        {"m11.yaml", "tracebook: 1\nmetrics: {hta: {classes: {compute: gemm}}}\n", 2, 27,
         "unknown key 'compute' in metrics.hta.classes; expected one of: communication, memory"},
        {"m12.yaml", "tracebook: 1\nmetrics: {cluster: {rank_source: timeline}}\n", 2, 34,
         "'metrics.cluster.rank_source' must be one of: auto, step_trace_time, TB_STEP_TRACE_TIME, "
         "TB_CLUSTER_STEP_TRACE_TIME; got 'timeline'"},
        {"m13.yaml", "tracebook: 1\nmetrics: [hta]\n", 2, 10,
         "'metrics' must be a mapping, got a list"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_error(bad[i].name, bad[i].text, TB_ERR_PARSE, bad[i].line, bad[i].col, bad[i].msg);
}

/* sql_file relative to the spec's directory, from tb_spec_load_mem's name too. */
static void test_sql_file(void **state)
{
    (void)state;
    char p[PATH_MAX], name[PATH_MAX + 64], want[PATH_MAX + 64];
    write_text("bom.sql", "\xEF\xBB\xBFSELECT 9\n", p, sizeof p);
    snprintf(name, sizeof name, "%s/mem.yaml", tmpdir);
    snprintf(want, sizeof want, "%s/bom.sql", tmpdir);
    static const char text[] = "tracebook: 1\nreports:\n  - {id: f, sql_file: bom.sql}\n";
    tb_spec *s = NULL;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_spec_load_mem(name, text, sizeof text - 1, &s, on_warn, NULL, &err), TB_OK);
    hold(s);
    assert_string_equal(s->path, name);
    assert_str("SELECT 9\n", s->reports[0].sql);
    assert_str(want, s->reports[0].sql_file);
    assert_pos(s->reports[0].sql_pos, want, 1, 1);
    assert_pos(s->reports[0].pos, name, 3, 5);
    tb_spec_free(NULL);
}

/* ---- use: --------------------------------------------------------------------------------- */

/* The spec's params reach a used report; the entry overrides id, title, limit, columns, xlsx. */
static void test_use_overrides(void **state)
{
    (void)state;
    tb_spec *s = load_ok("use.yaml",
                         "tracebook: 1\n"
                         "params: {top: 7, unrelated: x}\n"
                         "reports:\n"
                         "  - use: top_kernels\n"
                         "  - use: top_kernels\n"
                         "    id: top3\n"
                         "    title: Three\n"
                         "    params: {top: 3}\n"
                         "    limit: 3\n"
                         "    header_units: false\n"
                         "    outputs: xlsx\n"
                         "    sort: Name\n"
                         "    requires: [kernel]\n"
                         "    columns: {Name: {width: 40}}\n"
                         "    xlsx: {sheet: Top 3}\n");
    assert_int_equal(s->n_reports, 2);
    const tb_spec_report *a = &s->reports[0], *b = &s->reports[1];
    assert_str("top_kernels", a->id);
    assert_i64(7, find_param(a->params, a->n_params, "top")->i);
    assert_ptr_equal(find_param(a->params, a->n_params, "top")->pos.file, a->origin);
    assert_pos(a->pos, path, 4, 5);
    assert_str("top3", b->id);
    assert_str("top_kernels", b->use);
    assert_str("Three", b->title);
    assert_str(a->sql, b->sql);
    assert_str(a->description, b->description);
    assert_i64(3, find_param(b->params, b->n_params, "top")->i);
    assert_pos(find_param(b->params, b->n_params, "top")->pos, path, 8, 14);
    assert_i64(3, b->limit);
    assert_int_equal(b->header_units, 0);
    assert_int_equal(b->outputs, TB_OUT_XLSX);
    assert_int_equal(b->n_sort, 1);
    assert_string_equal(b->sort[0].column, "Name");
    assert_int_equal(b->n_requires, 1);
    assert_string_equal(b->requires[0], "kernel");
    const tb_spec_column *c = NULL;
    for (size_t i = 0; i < b->n_columns; i++)
        if (strcmp(b->columns[i].name, "Name") == 0)
            c = &b->columns[i];
    assert_non_null(c);
    assert_int_equal(c->width, 40);
    assert_pos(c->pos, path, 14, 15);
    assert_str("Top 3", b->xlsx_sheet);
    /* both copies own their origin */
    assert_string_equal(a->origin, b->origin);
    assert_ptr_not_equal(a->origin, b->origin);
}

static void test_use_errors(void **state)
{
    (void)state;
    expect_error("use1.yaml", "tracebook: 1\nreports:\n  - use: nope\n", TB_ERR_PARSE, 3, 10,
                 "unknown built-in report 'nope'");
    expect_error("use2.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    sql: SELECT 1\n", TB_ERR_PARSE, 4, 5,
                 "'sql' cannot be combined with 'use' (the built-in report has its SQL)");
    expect_error("use3.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    params: {top: five}\n", TB_ERR_PARSE,
                 4, 19, "param 'top' must be an int (built-in report 'top_kernels' declares it so), got 'five'");
    expect_error("use4.yaml", "tracebook: 1\nparams: {top: 2.5}\nreports:\n  - use: top_kernels\n", TB_ERR_PARSE, 2,
                 15, "param 'top' must be an int (built-in report 'top_kernels' declares it so), got '2.5'");
    expect_error("use5.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    titel: x\n", TB_ERR_PARSE, 4, 5,
                 "unknown key 'titel' in a report with 'use' (did you mean 'title'?); expected one of: use, id, title, description, params, "
                 "outputs, sort, limit, header_units, columns, xlsx, requires, key, normalize, regressions, drop_empty, pivot, scope, advice, json_shape, baseline");
    /* an unknown param name lists the report's params */
    write_text("use6.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    params: {tpo: 1}\n", path, sizeof path);
    tb_spec *s = NULL;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_spec_load(path, &s, on_warn, NULL, &err), TB_ERR_PARSE);
    assert_int_equal(err.line, 4);
    assert_int_equal(err.column, 14);
    static const char head[] = "built-in report 'top_kernels' has no param 'tpo'; its params: ";
    assert_int_equal(strncmp(err.message, head, sizeof head - 1), 0);
    assert_non_null(strstr(err.message + sizeof head - 1, "top"));
}

/* ---- msprof reports files ---------------------------------------------------------------- */

static const char *const sample_keys[] = {
    "ascend",   "acc_pmu", "cann",          "ddr",      "stars_chip_trans", "hbm",          "communication",
    "hccs",     "os_runtime_api",           "network_usage", "disk_usage",  "memory_usage", "cpu_usage",
    "msproftx", "npu_mem", "overlap_analyse", "pcie",   "sio",              "stars_soc",    "step_trace",
    "freq",     "llc",     "nic",           "roce",     "qos",              "device_tx",    "ccu",
    "biu_perf", "ub",      "block_detail"};

/* msprof's sample file: all 30 keys true (plus the 2 other known ones, in a second file). */
static void test_msprof_sample(void **state)
{
    (void)state;
    char text[4096];
    size_t at = (size_t)snprintf(text, sizeof text, "{\n  \"json_process\": {\n");
    for (size_t i = 0; i < 30; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "    \"%s\": true%s\n", sample_keys[i], i < 29 ? "," : "");
    snprintf(text + at, sizeof text - at, "  }\n}\n");
    tb_spec *s = load_ok("reports_sample_config.json", text);
    assert_int_equal(s->msprof_reports, 1);
    assert_int_equal(s->version, 0);
    assert_int_equal(s->n_reports, 0);
    assert_int_equal(s->json_process.all, 0);
    assert_string_equal(s->json_process.fallback, "");
    assert_int_equal(s->json_process.n_layers, 30);
    for (size_t i = 0; i < 30; i++)
        assert_string_equal(s->json_process.layers[i], sample_keys[i]);
    assert_int_equal(n_warned, 0);

    s = load_ok("more.json", "{\"json_process\": {\"dpu\": true, \"fusion_task\": true, \"ascend\": false}, "
                             "\"other\": [1]}");
    assert_int_equal(s->json_process.all, 0);
    assert_int_equal(s->json_process.n_layers, 2);
    assert_string_equal(s->json_process.layers[0], "dpu");
    assert_string_equal(s->json_process.layers[1], "fusion_task");
    assert_int_equal(n_warned, 0);
}

/* A whitelist: only keys present and true; all false selects nothing; a repeated key keeps its last value. */
static void test_msprof_whitelist(void **state)
{
    (void)state;
    tb_spec *s = load_ok("w1.json", "{\"json_process\": {\"ascend\": false, \"cann\": false}}");
    assert_int_equal(s->json_process.all, 0);
    assert_int_equal(s->json_process.n_layers, 0);
    tb_spec_free(s);
    held[0] = NULL;
    s = load_ok("w2.json", "{\"json_process\": {\"ascend\": false, \"cann\": true, \"ascend\": true}}");
    assert_int_equal(s->json_process.n_layers, 2);
    assert_string_equal(s->json_process.layers[0], "ascend");
    assert_string_equal(s->json_process.layers[1], "cann");
    tb_spec_free(s);
    held[0] = NULL;
    /* the same in YAML */
    s = load_ok("w3.yaml", "json_process:\n  npu_mem: true\n  freq: false\n");
    assert_int_equal(s->msprof_reports, 1);
    assert_int_equal(s->json_process.n_layers, 1);
    assert_string_equal(s->json_process.layers[0], "npu_mem");
    assert_int_equal(n_warned, 0);
}

static void test_msprof_fallback_missing(void **state)
{
    (void)state;
    expect_fallback("f1.json", "{\"reports_dir\": \"x\"}", "no 'json_process' key");
}

static void test_msprof_fallback_not_object(void **state)
{
    (void)state;
    expect_fallback("f2.json", "{\n  \"json_process\": [\"ascend\"]\n}", "'json_process' at 2:19 is not an object");
}

static void test_msprof_fallback_empty(void **state)
{
    (void)state;
    expect_fallback("f3.json", "{\"json_process\": {}}", "'json_process' at 1:18 is empty");
}

static void test_msprof_fallback_unknown_key(void **state)
{
    (void)state;
    expect_fallback("f4.json", "{\n  \"json_process\": {\n    \"ascend\": true,\n    \"foo\": true\n  }\n}",
                    "unknown key 'foo' at 4:5 in json_process");
}

static void test_msprof_fallback_non_boolean(void **state)
{
    (void)state;
    expect_fallback("f5.json", "{\"json_process\": {\"ascend\": true, \"cann\": 1}}",
                    "non-boolean value '1' for 'cann' at 1:43 in json_process");
    test_teardown(NULL);
    expect_fallback("f6.json", "{\"json_process\": {\"ascend\": \"true\"}}",
                    "non-boolean value 'true' for 'ascend' at 1:29 in json_process");
}

static void test_msprof_fallback_not_json(void **state)
{
    (void)state;
    expect_fallback("f7.json", "{\"json_process\": {\"ascend\": true,}}",
                    "not valid JSON (string or '}' expected near '}' at 1:34)");
    test_teardown(NULL);
    expect_fallback("f8.txt", "json_process = ascend\n", "not valid JSON (invalid token near 'json' at 1:4)");
    test_teardown(NULL);
    expect_fallback("f9.json", "[true]", "not a JSON object");
    test_teardown(NULL);
    expect_fallback("f10.json", " \n", "the file is empty");
}

/* A tracebook spec's json_process is strict; {} keeps msprof's meaning (all layers, with a note). */
static void test_json_process_strict(void **state)
{
    (void)state;
    expect_error("jp1.yaml", "tracebook: 1\njson_process: {ascend: true, foo: true}\n", TB_ERR_PARSE, 2, 30,
                 "unknown key 'foo' in json_process; expected one of: ascend, acc_pmu, cann, ddr, stars_chip_trans, "
                 "hbm, communication, hccs, os_runtime_api, network_usage, disk_usage, memory_usage, cpu_usage, "
                 "msproftx, npu_mem, overlap_analyse, pcie, sio, stars_soc, step_trace, freq, llc, nic, roce, qos, "
                 "device_tx, ccu, biu_perf, ub, block_detail, dpu, fusion_task");
    expect_error("jp1b.yaml", "tracebook: 1\njson_process: {ascnd: true}\n", TB_ERR_PARSE, 2, 16,
                 "unknown key 'ascnd' in json_process (did you mean 'ascend'?); expected one of: ascend, acc_pmu, "
                 "cann, ddr, stars_chip_trans, hbm, communication, hccs, os_runtime_api, network_usage, disk_usage, "
                 "memory_usage, cpu_usage, msproftx, npu_mem, overlap_analyse, pcie, sio, stars_soc, step_trace, freq, "
                 "llc, nic, roce, qos, device_tx, ccu, biu_perf, ub, block_detail, dpu, fusion_task");
    expect_error("jp2.yaml", "tracebook: 1\njson_process:\n  ascend: yes\n", TB_ERR_PARSE, 3, 11,
                 "'ascend' in json_process must be true or false, got 'yes'");
    expect_error("jp3.yaml", "tracebook: 1\njson_process: [ascend]\n", TB_ERR_PARSE, 2, 15,
                 "'json_process' must be a mapping of layer names to true or false, got a list");
    tb_spec *s = load_ok("jp4.yaml", "tracebook: 1\njson_process: {}\n");
    assert_int_equal(s->json_process.all, 1);
    assert_string_equal(s->json_process.fallback, "'json_process' at 2:15 is empty: exporting all layers, as msprof does");
    assert_int_equal(n_warned, 1);
}

/* ---- broken specs: exact message and position ---------------------------------------------- */

/* compare's keys: key, normalize and regressions, checked where they are written. */
static void test_compare_keys(void **state)
{
    (void)state;
    expect_error("k1.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    key: []\n", TB_ERR_PARSE, 4, 10,
                 "'key' names no column");
    expect_error("k2.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    normalize: [strip_hash]\n", TB_ERR_PARSE, 4,
                 17, "unknown normalize step 'strip_hash'; expected one of: strip_template_args, strip_hashes, "
                 "strip_trailing_numbers");
    expect_error("k3.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    regressions:\n      - {column: Total Time, "
                 "worse: slower}\n", TB_ERR_PARSE, 5, 37, "'worse' must be higher or lower, got 'slower'");
    expect_error("k4.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    regressions:\n      - {column: Total Time, "
                 "relative: -5%}\n", TB_ERR_PARSE, 5, 40, "'relative' must be a percentage such as 5%, got '-5%'");
    expect_error("k5.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    regressions:\n      - {column: Total Time, "
                 "absolute: 10 us}\n", TB_ERR_PARSE, 5, 40, "'absolute' must be a number or a time such as 10us, got '10 us'");
    expect_error("k6.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    regressions:\n      - {worse: lower}\n",
                 TB_ERR_PARSE, 5, 9, "a regressions rule needs 'column'");
    /* what loads: the values as the comparison reads them */
    const char *ok = "tracebook: 1\nreports:\n  - use: top_kernels\n    key: [Name]\n"
                     "    normalize: [strip_hashes, strip_trailing_numbers]\n    regressions:\n"
                     "      - {column: Total Time, worse: lower, relative: 12.5%, absolute: 3ms, min_count: 4}\n"
                     "      - {column: Count, absolute: 2}\n";
    write_text("k7.yaml", ok, path, sizeof path);
    tb_spec *sp = NULL;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_spec_load(path, &sp, on_warn, NULL, &err), TB_OK);
    const tb_spec_report *r = &sp->reports[0];
    assert_int_equal(r->n_key, 1);
    assert_string_equal(r->key[0], "Name");
    assert_int_equal(r->normalize, TB_NORM_HASHES | TB_NORM_TRAILING_NUMBERS);
    assert_int_equal(r->has_rules, 1);
    assert_int_equal(r->n_rules, 2);
    assert_string_equal(r->rules[0].column, "Total Time");
    assert_int_equal(r->rules[0].worse_lower, 1);
    assert_true(fabs(r->rules[0].rel - 0.125) < 1e-12);
    assert_true(r->rules[0].abs == 3e6 && r->rules[0].abs_time);
    assert_int_equal(r->rules[0].min_count, 4);
    assert_true(r->rules[1].abs == 2 && !r->rules[1].abs_time && fabs(r->rules[1].rel - 0.05) < 1e-12);
    tb_spec_free(sp);
}

static void test_error_unknown_key(void **state)
{
    (void)state;
    expect_error("e1.yaml", "tracebook: 1\nreports:\n  - id: a\n    titel: A\n    sql: SELECT 1\n", TB_ERR_PARSE, 4, 5,
                 "unknown key 'titel' in report (did you mean 'title'?); expected one of: id, title, description, use, requires, sql, "
                 "sql_file, params, outputs, sort, limit, header_units, columns, xlsx, key, normalize, regressions, drop_empty, pivot, scope, advice, json_shape, baseline");
    /* baseline: a boolean, and only with a key to match rows by (report --base) */
    expect_error("e1c.yaml", "tracebook: 1\nreports:\n  - id: a\n    key: [x]\n    sql: SELECT 1 AS x\n    baseline: 3\n",
                 TB_ERR_PARSE, 6, 15, "'baseline' must be true or false, got '3'");
    expect_error("e1d.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: SELECT 1 AS x\n    baseline: true\n",
                 TB_ERR_PARSE, 5, 15, "'baseline: true' needs 'key:' (the columns that match a row with the base run's row)");
    expect_error("e1b.yaml", "tracebook: 1\nreport: []\n", TB_ERR_PARSE, 2, 1,
                 "unknown key 'report' in the spec (did you mean 'reports'?); expected one of: tracebook, json_process, params, metrics, "
                 "outputs, reports, workbook, html");
    expect_error("e1c.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    columns: {A: {wdth: 3}}\n",
                 TB_ERR_PARSE, 5, 19, "unknown key 'wdth' in column 'A' (did you mean 'width'?); expected one of: header, format, width");
}

static void test_error_wrong_types(void **state)
{
    (void)state;
    expect_error("e2.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: SELECT 1\n    limit: ten\n", TB_ERR_PARSE, 5,
                 12, "'limit' must be a non-negative integer, got 'ten'");
    expect_error("e2b.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: SELECT 1\n    limit: -1\n", TB_ERR_PARSE,
                 5, 12, "'limit' must be a non-negative integer, got '-1'");
    expect_error("e2c.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: SELECT 1\n    header_units: no\n",
                 TB_ERR_PARSE, 5, 19, "'header_units' must be true or false, got 'no'");
    expect_error("e2d.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: [SELECT 1]\n", TB_ERR_PARSE, 4, 10,
                 "'sql' must be a string, got a list");
    expect_error("e2e.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    columns: {A: {width: 300}}\n",
                 TB_ERR_PARSE, 5, 26, "'width' must be an integer from 0 to 255, got '300'");
    expect_error("e2f.yaml", "tracebook: 1\nreports: {id: a}\n", TB_ERR_PARSE, 2, 10,
                 "'reports' must be a list of reports, got a mapping");
    expect_error("e2g.yaml", "tracebook: 1\nreports:\n  - a\n", TB_ERR_PARSE, 3, 5,
                 "report 1 must be a mapping, got 'a'");
    expect_error("e2h.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    title:\n", TB_ERR_PARSE, 5, 11,
                 "'title' must be a string, got an empty value");
}

/* scope: rank, cluster or all; rank cannot go with what needs every rank's rows */
static void test_scope(void **state)
{
    (void)state;
    tb_spec *s = load_ok("sc.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: SELECT 1\n    scope: rank\n"
                                    "  - id: b\n    sql: SELECT 1\n    scope: all\n  - id: c\n    sql: SELECT 1\n"
                                    "  - use: top_kernels\n    scope: rank\n"
                                    "  - id: d\n    sql: SELECT * FROM slow_rank\n    scope: cluster\n"
                                    "    drop_empty: [x]\n");
    assert_int_equal(tb_report_scope(tb_spec_report_at(s, 0)), TB_SCOPE_RANK);
    assert_int_equal(tb_report_scope(tb_spec_report_at(s, 1)), TB_SCOPE_ALL);
    assert_int_equal(tb_report_scope(tb_spec_report_at(s, 2)), TB_SCOPE_ALL);
    assert_int_equal(tb_report_scope(tb_spec_report_at(s, 3)), TB_SCOPE_RANK);
    assert_int_equal(tb_report_scope(tb_spec_report_at(s, 4)), TB_SCOPE_CLUSTER);
    const tb_spec *const one[] = {s};
    assert_int_equal(tb_specs_scoped(one, 1, NULL, 0), 0);
    const char *const only[] = {"a", "top_kernels"};
    assert_int_equal(tb_specs_scoped(one, 1, only, 2), 1);
    assert_int_equal(tb_specs_scoped(one, 1, only, 1), 1);
    const char *const mixed[] = {"a", "b"}, *const with_cluster[] = {"a", "d"};
    assert_int_equal(tb_specs_scoped(one, 1, mixed, 2), 0);
    assert_int_equal(tb_specs_scoped(one, 1, with_cluster, 2), 1);
    expect_error("sc1.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: SELECT 1\n    scope: ranks\n",
                 TB_ERR_PARSE, 5, 12,
                 "'scope' must be rank (the report runs on each rank alone), cluster (it reads only the cluster "
                 "tables) or all (on every rank at once), got 'ranks'");
    expect_error("sc2.yaml",
                 "tracebook: 1\nreports:\n  - id: a\n    sql: SELECT 1\n    drop_empty: [x]\n    scope: rank\n",
                 TB_ERR_PARSE, 6, 12,
                 "report 'a': 'scope: rank' cannot be combined with 'drop_empty' (it needs every rank's rows at once); "
                 "use scope: all");
}

static void test_error_version(void **state)
{
    (void)state;
    expect_error("e3.yaml", "tracebook: 2\nreports: []\n", TB_ERR_PARSE, 1, 12, "'tracebook' must be 1, got '2'");
    expect_error("e3b.json", "{\"tracebook\": \"1\"}", TB_ERR_PARSE, 1, 15, "'tracebook' must be 1, got '1'");
    expect_error("e3c.yaml", "reports:\n  - id: a\n    sql: x\n", TB_ERR_PARSE, 1, 1,
                 "missing 'tracebook: 1' (a spec with 'reports' needs it)");
    expect_error("e3d.yaml", "- tracebook: 1\n", TB_ERR_PARSE, 1, 1,
                 "a spec must be a mapping (tracebook: 1, reports: ...), got a list");
}

static void test_error_sql(void **state)
{
    (void)state;
    expect_error("e4.yaml", "tracebook: 1\nreports:\n  - id: a\n    title: A\n", TB_ERR_PARSE, 3, 5,
                 "report 'a' has neither 'sql' nor 'sql_file'");
    expect_error("e4b.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: SELECT 1\n  - title: B\n    sql: x\n",
                 TB_ERR_PARSE, 5, 5, "report 2 has no 'id' (nor 'use')");
    expect_error("e5.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: SELECT 1\n    sql_file: a.sql\n",
                 TB_ERR_PARSE, 5, 5, "report 'a' has both 'sql' and 'sql_file'; expected one");
    expect_error("e5b.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: |\n\n  - id: b\n", TB_ERR_PARSE, 4, 10,
                 "'sql' is empty");
}

static void test_error_sql_file(void **state)
{
    (void)state;
    char msg[PATH_MAX + 100];
    snprintf(msg, sizeof msg, "cannot read sql_file '%s/missing.sql': No such file or directory", tmpdir);
    expect_error("e6.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql_file: missing.sql\n", TB_ERR_IO, 4, 15, msg);
}

static void test_error_duplicates(void **state)
{
    (void)state;
    expect_error("e7.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n  - id: a\n    sql: y\n", TB_ERR_PARSE, 5,
                 9, "duplicate report id 'a' (first at line 3)");
    expect_error("e8.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: SELECT 1\n    sql: SELECT 2\n", TB_ERR_PARSE,
                 5, 5, "duplicate key 'sql' (first at line 4)");
    expect_error("e8b.json", "{\"tracebook\": 1,\n \"params\": {\"a\": 1, \"a\": 2}}", TB_ERR_PARSE, 2, 21,
                 "duplicate key 'a' (first at line 2)");
    expect_error("e8c.yaml",
                 "tracebook: 1\nreports:\n  - {id: a, sql: x, xlsx: {sheet: Data}}\n"
                 "  - {id: b, sql: x, xlsx: {sheet: DATA}}\n",
                 TB_ERR_PARSE, 4, 35, "duplicate sheet name 'DATA' (first at line 3)");
}

static void test_error_sheet_names(void **state)
{
    (void)state;
    expect_error("e9.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    xlsx: {sheet: \"a/b\"}\n",
                 TB_ERR_PARSE, 5, 19, "sheet name 'a/b' contains '/'; Excel does not allow any of []:*?/\\");
    expect_error("e9b.yaml",
                 "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    xlsx: {sheet: abcdefghijklmnopqrstuvwxyz012345}\n",
                 TB_ERR_PARSE, 5, 19, "sheet name 'abcdefghijklmnopqrstuvwxyz012345' is longer than Excel's 31 characters");
    expect_error("e9c.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    xlsx: {sheet: \"'quoted'\"}\n",
                 TB_ERR_PARSE, 5, 19, "sheet name ''quoted'' must not start or end with an apostrophe");
    expect_error("e9d.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    xlsx: {sheet: history}\n",
                 TB_ERR_PARSE, 5, 19, "sheet name 'history' is reserved by Excel");
    /* 31 characters, some of them not ASCII, are fine */
    tb_spec *s = load_ok("ok9.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n"
                                     "    xlsx: {sheet: \"\xc3\xa9\xc3\xa9\xc3\xa9" "abcdefghijklmnopqrstuvwxyz01\"}\n");
    assert_str("\xc3\xa9\xc3\xa9\xc3\xa9" "abcdefghijklmnopqrstuvwxyz01", s->reports[0].xlsx_sheet);
}

static void test_error_policy(void **state)
{
    (void)state;
    expect_error("e10.yaml", "tracebook: 1\nmetrics: {step_trace: {policy: pytorch}}\n", TB_ERR_PARSE, 2, 32,
                 "'metrics.step_trace.policy' must be one of: torch_npu, torch_npu_text, msprof_analyze, "
                 "mindspore; got 'pytorch'");
    expect_error("e10b.yaml", "tracebook: 1\nmetrics: {step_trace: torch_npu}\n", TB_ERR_PARSE, 2, 23,
                 "'metrics.step_trace' must be a mapping, got 'torch_npu'");
}

static void test_error_yaml_syntax(void **state)
{
    (void)state;
    expect_error("e11.yaml", "tracebook: 1\nreports: [a, b\noutputs: csv\n", TB_ERR_PARSE, 3, 8,
                 "invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence started at 2:10)");
    expect_error("e11b.yaml", "tracebook: 1\nreports:\n\t- id: a\n", TB_ERR_PARSE, 3, 1,
                 "invalid YAML: a tab where YAML expects indentation or a value; indent with spaces");
    expect_error("e11c.yaml", "tracebook: 1\nparams:\n  a: \"x\n", TB_ERR_PARSE, 4, 1,
                 "invalid YAML: found unexpected end of stream (while scanning a quoted scalar started at 3:6)");
    expect_error("e11d.yaml", "tracebook: 1\nparams: &p {top: 1}\n", TB_ERR_PARSE, 2, 9,
                 "anchors are not supported ('&p'); reuse reports with 'use:' instead");
    expect_error("e11e.yaml", "tracebook: 1\nparams: {top: *p}\n", TB_ERR_PARSE, 2, 15,
                 "aliases are not supported ('*p'); reuse reports with 'use:' instead");
    expect_error("e11f.yaml", "tracebook: 1\n---\ntracebook: 1\n", TB_ERR_PARSE, 2, 1,
                 "a spec file holds one document; found a second");
    expect_error("e11g.yaml", "tracebook: 1\nparams:\n  top: !!int 5\n", TB_ERR_PARSE, 3, 8,
                 "tags are not supported ('tag:yaml.org,2002:int')");
    expect_error("e11h.yaml", "tracebook: 1\n? [a]\n: 1\n", TB_ERR_PARSE, 2, 3,
                 "a mapping key must be a scalar, got a list");
}

static void test_error_json_syntax(void **state)
{
    (void)state;
    expect_error("e12.json", "{\"tracebook\": 1,\n \"reports\": [}", TB_ERR_PARSE, 2, 14,
                 "invalid JSON: unexpected token near '}'");
    expect_error("e12b.json", "{\"tracebook\": 1, \"reports\": []", TB_ERR_PARSE, 1, 30,
                 "invalid JSON: '}' expected near end of file");
}

static void test_error_outputs(void **state)
{
    (void)state;
    expect_error("e13.yaml", "tracebook: 1\noutputs: [csv, pdf]\n", TB_ERR_PARSE, 2, 16,
                 "unknown output format 'pdf'; expected one of: csv, json, xlsx, console, html");
    expect_error("e13b.yaml", "tracebook: 1\noutputs: []\n", TB_ERR_PARSE, 2, 10,
                 "'outputs' must name at least one format; expected some of: csv, json, xlsx, console, html");
}

static void test_error_params(void **state)
{
    (void)state;
    expect_error("e14.yaml", "tracebook: 1\nparams:\n  top: {type: float, default: 1}\n", TB_ERR_PARSE, 3, 15,
                 "unknown param type 'float'; expected one of: int, real, text, bool");
    expect_error("e14b.yaml", "tracebook: 1\nparams:\n  top: {type: int, default: ten}\n", TB_ERR_PARSE, 3, 29,
                 "param 'top' must be an int, got 'ten'");
    expect_error("e14c.yaml", "tracebook: 1\nparams:\n  top:\n", TB_ERR_PARSE, 3, 7,
                 "param 'top' has no value; give one, or {type: int} for a param without a default");
    expect_error("e14d.yaml", "tracebook: 1\nparams:\n  top-n: 1\n", TB_ERR_PARSE, 3, 3,
                 "param name 'top-n' must be letters, digits and '_', not starting with a digit");
    expect_error("e14e.yaml", "tracebook: 1\nparams:\n  top: {help: how many}\n", TB_ERR_PARSE, 3, 8,
                 "param 'top' needs 'type' or 'default'");
}

static void test_error_report_fields(void **state)
{
    (void)state;
    expect_error("e15.yaml", "tracebook: 1\nreports:\n  - id: ..\n    sql: x\n", TB_ERR_PARSE, 3, 9,
                 "'id' must be letters, digits, '_', '.' and '-' (it names output files), got '..'");
    expect_error("e15b.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    columns: {\"Total:dur_ns\": {}}\n",
                 TB_ERR_PARSE, 5, 15, "column 'Total:dur_ns' must be named without its type suffix: 'Total'");
    expect_error("e15c.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    xlsx: {chart: {type: area, values: v}}\n",
                 TB_ERR_PARSE, 5, 26, "unknown chart type 'area'; expected one of: bar, stacked_bar, column, stacked_column, line, pie");
    expect_error("e15d.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    sort: [\"-\"]\n", TB_ERR_PARSE, 5, 12,
                 "sort key '-' names no column");
    expect_error("e15e.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    requires: [\"TASK; DROP\"]\n",
                 TB_ERR_PARSE, 5, 16, "'requires' names tables or views, got 'TASK; DROP'");
    expect_error("e15f.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n    xlsx: {chart: {type: bar}}\n",
                 TB_ERR_PARSE, 5, 19, "chart needs 'values' (the column to plot, or a list of columns)");
}

/* xlsx: stacked charts with several value columns, conditional formats, and their errors. */
static void test_xlsx_options(void **state)
{
    (void)state;
    tb_spec *s = load_ok("x1.yaml", "tracebook: 1\nworkbook: {file: review.xlsx, sheets: [a]}\nreports:\n  - id: a\n    sql: x\n"
                                    "    xlsx:\n      chart: {type: stacked_bar, categories: Rank,\n"
                                    "              values: [Compute, Exposed comm, Free]}\n"
                                    "      conditional:\n"
                                    "        - {column: Busy, type: threshold, op: ge, value: 90.5}\n"
                                    "        - {column: Total, type: top, top: 3}\n"
                                    "        - {column: Total, type: data_bar}\n"
                                    "        - {column: Free, type: color_scale}\n");
    assert_str("review.xlsx", s->workbook_file);
    assert_int_equal(s->n_workbook_sheets, 1);
    assert_str("a", s->workbook_sheets[0]);
    const tb_spec_report *r = &s->reports[0];
    assert_str("stacked_bar", r->chart_type);
    assert_str("Rank", r->chart_categories);
    assert_int_equal(r->n_chart_values, 3);
    assert_str("Compute", r->chart_values[0]);
    assert_str("Exposed comm", r->chart_values[1]);
    assert_str("Free", r->chart_values[2]);
    assert_int_equal(r->n_conds, 4);
    assert_str("Busy", r->conds[0].column);
    assert_int_equal(r->conds[0].type, TB_COND_THRESHOLD);
    assert_int_equal(r->conds[0].op, TB_COND_GE);
    assert_true(r->conds[0].value == 90.5);
    assert_pos(r->conds[0].pos, path, 10, 11);
    assert_int_equal(r->conds[1].type, TB_COND_TOP);
    assert_int_equal(r->conds[1].top, 3);
    assert_int_equal(r->conds[2].type, TB_COND_DATA_BAR);
    assert_int_equal(r->conds[3].type, TB_COND_COLOR_SCALE);

    const char *head = "tracebook: 1\nreports:\n  - id: a\n    sql: x\n";
    char text[512];
#define XERR(name, tail, line, col, msg)                                                                          \
    do {                                                                                                          \
        snprintf(text, sizeof text, "%s%s", head, tail);                                                       \
        expect_error(name, text, TB_ERR_PARSE, line, col, msg);                                                   \
    } while (0)
    XERR("x2.yaml", "    xlsx: {chart: {type: pie, values: [a, b]}}\n", 5, 39, "a pie chart takes one 'values' column, got 2");
    XERR("x3.yaml", "    xlsx: {chart: {type: bar, values: []}}\n", 5, 39, "chart 'values' must name at least one column");
    XERR("x4.yaml", "    xlsx: {chart: {type: bar, values: [\"T:dur_ns\"]}}\n", 5, 40,
         "column 'T:dur_ns' must be named without its type suffix: 'T'");
    XERR("x5.yaml", "    xlsx: {conditional: {column: a}}\n", 5, 25, "'conditional' must be a list of formats, got a mapping");
    XERR("x6.yaml", "    xlsx: {conditional: [{type: top, top: 3}]}\n", 5, 26, "conditional format needs 'column'");
    XERR("x7.yaml", "    xlsx: {conditional: [{column: a, type: hot}]}\n", 5, 44,
         "unknown conditional format type 'hot'; expected one of: threshold, top, data_bar, color_scale");
    XERR("x8.yaml", "    xlsx: {conditional: [{column: a, type: threshold, value: 1}]}\n", 5, 26,
         "a threshold needs 'op' (one of: gt, ge, lt, le, eq, ne)");
    XERR("x9.yaml", "    xlsx: {conditional: [{column: a, type: threshold, op: \">\", value: 1}]}\n", 5, 59,
         "unknown threshold op '>'; expected one of: gt, ge, lt, le, eq, ne");
    XERR("x10.yaml", "    xlsx: {conditional: [{column: a, type: threshold, op: gt, value: x}]}\n", 5, 70,
         "'value' must be a finite number, got 'x'");
    XERR("x11.yaml", "    xlsx: {conditional: [{column: a, type: top, top: 0}]}\n", 5, 54,
         "'top' must be an integer from 1 to 1000, got '0'");
    XERR("x12.yaml", "    xlsx: {conditional: [{column: a, type: data_bar, top: 2}]}\n", 5, 54,
         "'top' belongs to a top format, not to a data_bar");
    XERR("x13.yaml", "    xlsx: {conditional: [{column: a, type: top}]}\n", 5, 26,
         "a top format needs 'top' (how many cells, 1 to 1000)");
#undef XERR
    expect_error("x14.yaml", "tracebook: 1\nworkbook: {file: out/r.xlsx}\n", TB_ERR_PARSE, 2, 18,
                 "workbook 'file' must be a file name, got 'out/r.xlsx': it is written in the output folder");
    expect_error("x15.yaml", "tracebook: 1\nworkbook: {sheets: a}\n", TB_ERR_PARSE, 2, 20,
                 "workbook 'sheets' must be a list of report ids, got 'a'");
    expect_error("x16.yaml", "tracebook: 1\nworkbook: {sheets: [a, b]}\nreports:\n  - {id: a, sql: x}\n", TB_ERR_PARSE,
                 2, 24, "workbook 'sheets' names 'b', which is no report of this spec");
    expect_error("x17.yaml", "tracebook: 1\nworkbook: {sheets: [a, a]}\n", TB_ERR_PARSE, 2, 24,
                 "workbook 'sheets' names report 'a' twice");
    /* workbook.contents and chart.position (the built-in review's); both off by default */
    assert_int_equal(s->workbook_contents, 0);
    assert_int_equal(r->chart_below, 0);
    tb_spec *c = load_ok("x18.yaml", "tracebook: 1\nworkbook: {contents: true}\nreports:\n  - id: a\n    sql: x\n"
                                     "    xlsx: {chart: {type: bar, values: v, position: below}}\n");
    assert_int_equal(c->workbook_contents, 1);
    assert_int_equal(c->reports[0].chart_below, 1);
    expect_error("x19.yaml", "tracebook: 1\nworkbook: {contents: yes}\n", TB_ERR_PARSE, 2, 22,
                 "workbook 'contents' must be true or false, got 'yes'");
    expect_error("x20.yaml", "tracebook: 1\nreports:\n  - id: a\n    sql: x\n"
                 "    xlsx: {chart: {type: bar, values: v, position: left}}\n", TB_ERR_PARSE, 5, 52,
                 "unknown chart position 'left'; expected one of: right, below");
    /* html: the page's file name and title */
    tb_spec *h = load_ok("h1.yaml", "tracebook: 1\nhtml: {file: review.html, title: Nightly review}\noutputs: [csv, html]\n");
    assert_str("review.html", h->html_file);
    assert_str("Nightly review", h->html_title);
    assert_int_equal(h->outputs, TB_OUT_CSV | TB_OUT_HTML);
    expect_error("h2.yaml", "tracebook: 1\nhtml: {file: out/r.html}\n", TB_ERR_PARSE, 2, 14,
                 "html 'file' must be a file name, got 'out/r.html': it is written in the output folder");
    expect_error("h3.yaml", "tracebook: 1\nhtml: {titel: x}\n", TB_ERR_PARSE, 2, 8,
                 "unknown key 'titel' in html (did you mean 'title'?); expected one of: file, title");
    expect_error("h4.yaml", "tracebook: 1\nhtml: report.html\n", TB_ERR_PARSE, 2, 7,
                 "'html' must be a mapping, got 'report.html'");
}

/* JSON positions survive libyaml's limits: tabs, surrogate pair escapes, a BOM. */
static void test_json_positions(void **state)
{
    (void)state;
    expect_error("j1.json",
                 "\xEF\xBB\xBF\t{\"tracebook\": 1, \"reports\": [{\"id\": \"a\", \"title\": "
                 "\"\\ud83d\\ude00\\ud83d\\ude00\",\t\"sql\": 5}]}",
                 TB_ERR_PARSE, 1, 87, "'sql' must be a string, got '5'");
    tb_spec *s = load_ok("j2.json", "{\"tracebook\": 1, \"reports\": [{\"id\": \"a\", \"title\": \"\\ud83d\\ude00\", "
                                    "\"sql\": \"S\"}]}");
    assert_str("\xf0\x9f\x98\x80", s->reports[0].title);
    assert_pos(s->reports[0].sql_pos, path, 1, 75);
}

/* A missing spec file is an I/O error naming it. */
static void test_missing_file(void **state)
{
    (void)state;
    char p[PATH_MAX + 64], msg[PATH_MAX + 200];
    snprintf(p, sizeof p, "%s/nope.yaml", tmpdir);
    snprintf(msg, sizeof msg, "cannot read spec file '%s': No such file or directory", p);
    tb_spec *s = NULL;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_spec_load(p, &s, on_warn, NULL, &err), TB_ERR_IO);
    assert_null(s);
    assert_string_equal(err.file, p);
    assert_int_equal(err.line, 0);
    assert_string_equal(err.message, msg);
}

/* Every built-in file loads as a spec of its own. */
static void test_builtins_load(void **state)
{
    (void)state;
    size_t n;
    const tb_builtin *b = tb_builtins(&n);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        char name[256];
        snprintf(name, sizeof name, "builtin:%s.yaml", b[i].name);
        tb_spec *s = NULL;
        tb_error err;
        tb_error_clear(&err);
        if (tb_spec_load_mem(name, b[i].text, strlen(b[i].text), &s, on_warn, NULL, &err) != TB_OK)
            fail_msg("%s:%ld:%ld: %s", err.file, err.line, err.column, err.message);
        hold(s);
        assert_int_equal(s->version, 1);
        assert_true(s->n_reports > 0);
        test_teardown(NULL);
    }
    assert_int_equal(n_warned, 0);
}

/* ---- main ------------------------------------------------------------------------------------ */

/* Which reports of a run's specs run: --report ids checked with the nearest
 * id named, the count, and the outputs any spec or report declares. */
static void test_specs_selection(void **state)
{
    (void)state;
    const tb_spec *specs[2];
    specs[0] = load_ok("sel1.yaml", "tracebook: 1\n"
                                    "reports:\n"
                                    "  - id: kernel_time\n"
                                    "    sql: SELECT 1 AS n\n"
                                    "  - id: step_time\n"
                                    "    outputs: xlsx\n"
                                    "    sql: SELECT 2 AS n\n");
    specs[1] = load_ok("sel2.yaml", "tracebook: 1\n"
                                    "outputs: console\n"
                                    "reports:\n"
                                    "  - id: comm_time\n"
                                    "    sql: SELECT 3 AS n\n");
    const char *good[] = {"comm_time", "kernel_time"}, *bad[] = {"kernel_time", "step_tme"};
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_specs_check_only(specs, 2, good, 2, &err), TB_OK);
    assert_int_equal(tb_specs_check_only(specs, 2, bad, 2, &err), TB_ERR_USAGE);
    assert_string_equal(err.message, "--report 'step_tme': no spec has a report with this id (did you mean "
                                     "'step_time'?)");
    const char *far[] = {"zzzzzzzzzzzzzz"};
    assert_int_equal(tb_specs_check_only(specs, 2, far, 1, &err), TB_ERR_USAGE);
    assert_string_equal(err.message, "--report 'zzzzzzzzzzzzzz': no spec has a report with this id");
    assert_int_equal(tb_specs_count(specs, 2, NULL, 0), 3);
    assert_int_equal(tb_specs_count(specs, 2, good, 2), 2);
    assert_int_equal(tb_specs_count(specs, 1, good, 2), 1);
    assert_int_equal(tb_specs_outputs(specs, 1), TB_OUT_XLSX);
    assert_int_equal(tb_specs_outputs(specs, 2), TB_OUT_XLSX | TB_OUT_CONSOLE);
}

/* A path builtin:NAME is the spec of one built-in report. */
static void test_load_builtin_path(void **state)
{
    (void)state;
    tb_spec *s = NULL;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_spec_load("builtin:top_kernels", &s, on_warn, NULL, &err), TB_OK);
    hold(s);
    assert_int_equal(tb_spec_n_reports(s), 1);
    assert_string_equal(tb_report_id(tb_spec_report_at(s, 0)), "top_kernels");
    assert_string_equal(tb_spec_path(s), "builtin:top_kernels");
    assert_int_equal(tb_spec_load("builtin:a\"b", &s, on_warn, NULL, &err), TB_ERR_USAGE);
    assert_string_equal(err.message, "--spec 'builtin:a\"b': not a built-in report name");
    assert_int_equal(tb_spec_load("builtin:top_kernel", &s, on_warn, NULL, &err), TB_ERR_USAGE);
    assert_string_equal(err.message, "--spec 'builtin:top_kernel': no built-in report 'top_kernel' (did you mean "
                                     "'top_kernels'?); tracebook reports lists them");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_full_yaml, test_teardown),
        cmocka_unit_test_teardown(test_full_json, test_teardown),
        cmocka_unit_test_teardown(test_scalar_types, test_teardown),
        cmocka_unit_test_teardown(test_sql_positions, test_teardown),
        cmocka_unit_test_teardown(test_sql_verbatim_yaml, test_teardown),
        cmocka_unit_test_teardown(test_sql_verbatim_crlf, test_teardown),
        cmocka_unit_test_teardown(test_sql_verbatim_other, test_teardown),
        cmocka_unit_test_teardown(test_short_forms, test_teardown),
        cmocka_unit_test_teardown(test_metrics_options, test_teardown),
        cmocka_unit_test_teardown(test_error_metrics_options, test_teardown),
        cmocka_unit_test_teardown(test_sql_file, test_teardown),
        cmocka_unit_test_teardown(test_use_overrides, test_teardown),
        cmocka_unit_test_teardown(test_use_errors, test_teardown),
        cmocka_unit_test_teardown(test_msprof_sample, test_teardown),
        cmocka_unit_test_teardown(test_msprof_whitelist, test_teardown),
        cmocka_unit_test_teardown(test_msprof_fallback_missing, test_teardown),
        cmocka_unit_test_teardown(test_msprof_fallback_not_object, test_teardown),
        cmocka_unit_test_teardown(test_msprof_fallback_empty, test_teardown),
        cmocka_unit_test_teardown(test_msprof_fallback_unknown_key, test_teardown),
        cmocka_unit_test_teardown(test_msprof_fallback_non_boolean, test_teardown),
        cmocka_unit_test_teardown(test_msprof_fallback_not_json, test_teardown),
        cmocka_unit_test_teardown(test_json_process_strict, test_teardown),
        cmocka_unit_test_teardown(test_error_unknown_key, test_teardown),
        cmocka_unit_test_teardown(test_error_wrong_types, test_teardown),
        cmocka_unit_test_teardown(test_scope, test_teardown),
        cmocka_unit_test_teardown(test_error_version, test_teardown),
        cmocka_unit_test_teardown(test_error_sql, test_teardown),
        cmocka_unit_test_teardown(test_error_sql_file, test_teardown),
        cmocka_unit_test_teardown(test_error_duplicates, test_teardown),
        cmocka_unit_test_teardown(test_error_sheet_names, test_teardown),
        cmocka_unit_test_teardown(test_error_policy, test_teardown),
        cmocka_unit_test_teardown(test_error_yaml_syntax, test_teardown),
        cmocka_unit_test_teardown(test_error_json_syntax, test_teardown),
        cmocka_unit_test_teardown(test_error_outputs, test_teardown),
        cmocka_unit_test_teardown(test_error_params, test_teardown),
        cmocka_unit_test_teardown(test_error_report_fields, test_teardown),
        cmocka_unit_test_teardown(test_xlsx_options, test_teardown),
        cmocka_unit_test_teardown(test_json_positions, test_teardown),
        cmocka_unit_test_teardown(test_missing_file, test_teardown),
        cmocka_unit_test_teardown(test_builtins_load, test_teardown),
        cmocka_unit_test_teardown(test_compare_keys, test_teardown),
        cmocka_unit_test_teardown(test_specs_selection, test_teardown),
        cmocka_unit_test_teardown(test_load_builtin_path, test_teardown),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
