/* SPDX-License-Identifier: MIT */
/*
 * test_advice.c - unit tests for the spec language's advisor rules
 * (engine/spec/spec_advice.c): the `advice:` key of a report.
 *
 * Specs are written into a private mkdtemp() directory and loaded with
 * tb_spec_load, as the command does. Checked: a plain rule's fields and the
 * param `threshold` it makes (its type the number's), a `use:` entry that
 * replaces some keys of a built-in rule and its threshold through params,
 * the public accessors, and each load error with its exact line, column and
 * message (worked out by hand from the text beside it). The message's
 * placeholders are checked against the columns when the rule runs
 * (tests/cli/advisor_test.py). Runs with the exit-code protocol.
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "spec/spec.h"
#include "tracebook/tracebook.h"
#include "testutil.h"

static tb_spec *held;
static char path[PATH_MAX];

static int teardown(void **state)
{
    (void)state;
    tb_spec_free(held);
    held = NULL;
    return 0;
}

static tb_spec *load_ok(const char *name, const char *text)
{
    write_text(name, text, path, sizeof path);
    tb_error err;
    tb_error_clear(&err);
    if (tb_spec_load(path, &held, NULL, NULL, &err) != TB_OK) {
        print_error("%s:%ld:%ld: %s\n", err.file, err.line, err.column, err.message);
        fail();
    }
    return held;
}

static void expect_error(const char *text, long line, long col, const char *msg)
{
    write_text("bad.yaml", text, path, sizeof path);
    tb_error err;
    tb_error_clear(&err);
    tb_spec *s = NULL;
    tb_status st = tb_spec_load(path, &s, NULL, NULL, &err);
    held = s;
    if (st != TB_ERR_PARSE || err.line != line || err.column != col || strcmp(err.message, msg) != 0) {
        print_error("expected %ld:%ld: %s\ngot      %d %ld:%ld: %s\n", line, col, msg, st, err.line, err.column,
                    err.message);
        fail();
    }
    assert_null(s);
}

static const tb_param *param(const tb_spec_report *r, const char *name)
{
    for (size_t i = 0; i < r->n_params; i++)
        if (!strcmp(r->params[i].name, name))
            return &r->params[i];
    return NULL;
}

static void test_plain_rule(void **state)
{
    (void)state;
    tb_spec *s = load_ok("rule.yaml",
                         "tracebook: 1\n"
                         "reports:\n"
                         "  - id: slow\n"
                         "    sql: SELECT 1 AS x WHERE 2 > :threshold -- a comment :threshold_not\n"
                         "    advice:\n"
                         "      severity: critical\n"
                         "      threshold: 1.5\n"
                         "      reason: why\n"
                         "      message: \"{x} and {#}, {{braces}}\"\n"
                         "      suggestion: what\n"
                         "  - id: plain\n"
                         "    sql: SELECT 1 AS x\n");
    const tb_spec_report *r = tb_spec_report_at(s, 0);
    tb_severity sev = TB_SEVERITY_INFO;
    assert_int_equal(tb_report_advice(r, &sev), 1);
    assert_int_equal(sev, TB_SEVERITY_CRITICAL);
    assert_string_equal(r->advice->reason, "why");
    assert_string_equal(r->advice->message, "{x} and {#}, {{braces}}");
    assert_string_equal(r->advice->suggestion, "what");
    assert_null(r->advice->source);
    assert_int_equal(r->advice->message_pos.line, 9);
    assert_int_equal(r->advice->message_pos.column, 16);
    const tb_param *t = param(r, "threshold");
    assert_non_null(t);
    assert_int_equal(t->type, TB_PARAM_REAL);
    assert_true(t->d == 1.5);
    assert_int_equal(tb_report_advice(tb_spec_report_at(s, 1), NULL), 0);
    assert_string_equal(tb_severity_name(TB_SEVERITY_WARNING), "warning");
    assert_int_equal(tb_severity_parse("info"), TB_SEVERITY_INFO);
    assert_int_equal(tb_severity_parse("Info"), -1);
}

static void test_use_rule(void **state)
{
    (void)state;
    tb_spec *s = load_ok("use.yaml",
                         "tracebook: 1\n"
                         "reports:\n"
                         "  - use: advisor_host_gaps\n"
                         "    advice: {severity: info, source: ours}\n"
                         "    params: {threshold: 2000}\n"
                         "  - use: advisor_exposed_comm\n"
                         "    id: exposed\n"
                         "    advice: {threshold: 35}\n");
    const tb_spec_report *r = tb_spec_report_at(s, 0);
    assert_int_equal(r->advice->severity, TB_SEVERITY_INFO);
    assert_string_equal(r->advice->source, "ours");
    assert_non_null(r->advice->reason); /* the built-in's */
    const tb_param *t = param(r, "threshold");
    assert_int_equal(t->type, TB_PARAM_INT);
    assert_int_equal(t->i, 2000);
    r = tb_spec_report_at(s, 1);
    assert_string_equal(r->id, "exposed");
    assert_int_equal(r->advice->severity, TB_SEVERITY_WARNING);
    assert_int_equal(param(r, "threshold")->i, 35);
}

static void test_errors(void **state)
{
    (void)state;
    static const char head[] = "tracebook: 1\nreports:\n  - id: r\n    sql: SELECT 1 AS x WHERE 1 > :threshold\n";
    char text[1024];
    snprintf(text, sizeof text, "%s    advice: [1]\n", head);
    expect_error(text, 5, 13, "'advice' must be a mapping, got a list");
    snprintf(text, sizeof text, "%s    advice: {severity: bad, threshold: 1, reason: r, message: m, suggestion: s}\n",
             head);
    expect_error(text, 5, 24, "'severity' must be info, warning or critical, got 'bad'");
    snprintf(text, sizeof text, "%s    advice: {severity: info, threshold: true, reason: r, message: m, suggestion: s}\n",
             head);
    expect_error(text, 5, 41, "'threshold' must be a number, got 'true'");
    snprintf(text, sizeof text, "%s    advice: {severity: info, threshold: 1, reason: r, message: 'a}', suggestion: s}\n",
             head);
    expect_error(text, 5, 64, "'message': a '}' without its '{' at character 2 (write '}}' for a brace)");
    snprintf(text, sizeof text, "%s    advice: {severity: info, threshold: 1, reason: r, message: 'a{}', suggestion: s}\n",
             head);
    expect_error(text, 5, 64, "'message': an empty '{}' at character 2; name a column, or {#} for the row count");
    snprintf(text, sizeof text, "%s    advice: {severity: info, threshold: 1, reason: '', message: m, suggestion: s}\n",
             head);
    expect_error(text, 5, 52, "'reason' must not be empty");
    expect_error("tracebook: 1\nreports:\n  - id: r\n    sql: SELECT ':threshold' AS x\n"
                 "    advice: {severity: info, threshold: 1, reason: r, message: m, suggestion: s}\n",
                 5, 5, "report 'r': its SQL never reads :threshold, the rule's threshold; compare against it");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_plain_rule, teardown),
        cmocka_unit_test_teardown(test_use_rule, teardown),
        cmocka_unit_test_teardown(test_errors, teardown),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
