/* SPDX-License-Identifier: MIT */
/*
 * report.c - `tracebook report`, `query` and `reports`.
 *
 * report loads every spec first (a broken spec fails before any loading),
 * then the session of the inputs, then runs the reports through
 * tb_report_write(); query runs one statement through tb_query_write(), and
 * points at the place in the statement where SQLite found an error;
 * reports lists the built-in reports. Options a mode does not use are
 * refused here rather than ignored (`query -o FILE` with console output).
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void on_report_done(void *ctx, const tb_spec_report *rep, const char *skipped, uint64_t rows)
{
    cli_run *r = ctx;
    (void)skipped;
    (void)rows;
    cli_progress_report_done(r->progress, tb_report_id(rep));
}

/* --width N of report and query into *w (0 when not given): -1 when fine, else the exit code of the usage error. */
static int console_width(const cli_args *a, int console, int *w)
{
    int64_t v = 0;
    int rc;
    *w = 0;
    if (!a->n[OPT_WIDTH])
        return -1;
    if (!console)
        return cli_usage_error(a->cmd, "%s: only a console table is cut to a width (add --format console)",
                               a->as_written[OPT_WIDTH]);
    if ((rc = cli_count(a, OPT_WIDTH, &v)) >= 0)
        return rc;
    if (v < 5 || v > 100000)
        return cli_usage_error(a->cmd, "%s %lld: give 5 to 100000 characters", a->as_written[OPT_WIDTH], (long long)v);
    *w = (int)v;
    return -1;
}

/* --fail-on-finding SEVERITY: the severity (tb_severity), or -1 without the option. */
static int fail_severity(const cli_args *a)
{
    const char *v = cli_value(a, OPT_FAIL_ON_FINDING);
    return v ? tb_severity_parse(v) : -1;
}

/* The options of report that need no run: -1 when fine, else the exit code of the usage error. */
static int check_report(const cli_args *a, unsigned *out)
{
    const char *out_dir;
    if (a->n[OPT_DIR] && a->n[OPT_SPEC] == 0)
        return cli_usage_error(a->cmd, "no spec: give --spec FILE (built-in reports: tracebook reports)");
    if (a->n[OPT_DIR] == 0)
        return cli_usage_error(a->cmd, "no input: give -dir PATH");
    int rc = cli_parse_formats(a, ~0u, out);
    if (rc >= 0)
        return rc;
    if (a->n[OPT_FAIL_ON_FINDING] && fail_severity(a) < 0)
        return cli_usage_error(a->cmd, "%s '%s': expected info, warning or critical", a->as_written[OPT_FAIL_ON_FINDING],
                               cli_value(a, OPT_FAIL_ON_FINDING));
    if ((rc = cli_out_dir(a, &out_dir)) >= 0)
        return rc;
    if (a->n[OPT_OUTPUT] && *out == TB_OUT_CONSOLE)
        return cli_usage_error(a->cmd, "%s: --format console writes no files; drop -o or add csv or json",
                               a->as_written[OPT_OUTPUT]);
    if (a->n[OPT_KEEP_DB] && *out == TB_OUT_CONSOLE)
        return cli_usage_error(a->cmd, "--keep-db: --format console writes no folder to keep it in; add csv or json");
    return -1;
}

/* Console tables go to stdout: the progress line would garble a terminal's view of them. */
static int writes_console(const cli_run *run, unsigned formats)
{
    unsigned given = formats ? formats : tb_specs_outputs((const tb_spec *const *)run->specs, run->n_specs);
    return (given & TB_OUT_CONSOLE) != 0;
}

/* --fail-on-finding with no advisor rule in the run would never fail: a usage error. Returns -1 when fine. */
static int check_fail_on_finding(const cli_args *a, const tb_spec *const *specs, size_t n_specs,
                                 const char *const *only)
{
    if (!a->n[OPT_FAIL_ON_FINDING] || tb_specs_rules(specs, n_specs, only, a->n[OPT_REPORT]))
        return -1;
    return cli_usage_error(a->cmd, "%s: no report of the run is an advisor rule (give --spec builtin:advisor, or "
                           "a spec whose reports have 'advice')", a->as_written[OPT_FAIL_ON_FINDING]);
}

/* With --fail-on-finding S and findings of severity S or worse: says so and returns TB_EXIT_FINDING; else rc. */
static int fail_on_finding(const cli_args *a, const tb_run_result *res, int rc)
{
    int sev = fail_severity(a);
    if (rc != TB_EXIT_OK || sev < 0)
        return rc;
    uint64_t n = 0;
    for (int s = sev; s < TB_N_SEVERITIES; s++)
        n += res->findings[s];
    if (!n)
        return rc;
    fprintf(stderr, "tracebook: error: the advisor found %llu finding%s of severity %s or worse (--fail-on-finding): "
            "the outputs are written\n", (unsigned long long)n, n == 1 ? "" : "s", tb_severity_name((tb_severity)sev));
    return TB_EXIT_FINDING;
}

/* --base: the base run's session (tb_run_base) in *base. Returns -1 when fine, else the exit code. */
static int open_base(cli_run *run, const char *out_dir, tb_session **base)
{
    char **in = NULL;
    size_t n = 0;
    tb_window w = run->ro.window;
    const char *const *given = run->a->v[OPT_BASE];
    tb_status st = *given ? tb_run_base(given, run->a->n[OPT_BASE], (const tb_spec *const *)run->specs, run->n_specs,
                                        out_dir ? out_dir : ".", &in, &n, &w, &run->err) : TB_OK;
    int rc = st ? cli_run_end(run, st, 0) : in ? cli_run_session(run, (const char *const *)in, n, &w, 0, base) : -1;
    tb_paths_free(in);
    return rc;
}

int cli_cmd_report(cli_args *a)
{
    unsigned formats;
    int rc = check_report(a, &formats);
    if (rc >= 0)
        return rc;
    const char *out_dir = cli_value(a, OPT_OUTPUT);
    int width;
    /* with the specs' formats a console table may come: the width is checked there */
    if ((rc = console_width(a, !formats || (formats & TB_OUT_CONSOLE), &width)) >= 0)
        return rc;
    cli_run run;
    if ((rc = cli_run_start(&run, a, RUN_SPECS)) >= 0)
        return rc;
    const char *const *only = a->n[OPT_REPORT] ? a->v[OPT_REPORT] : NULL;
    const tb_spec *const *specs = (const tb_spec *const *)run.specs;
    if (tb_specs_check_only(specs, run.n_specs, only, a->n[OPT_REPORT], &run.err) != TB_OK)
        return cli_run_end(&run, TB_OK, cli_usage_error(a->cmd, "%s", run.err.message));
    if ((rc = check_fail_on_finding(a, specs, run.n_specs, only)) >= 0)
        return cli_run_end(&run, TB_OK, rc);
    tb_session *base = NULL;
    if ((rc = cli_run_open(&run, RUN_SESSION | RUN_SCOPED)) >= 0 || (rc = open_base(&run, out_dir, &base)) >= 0)
        return rc;
    tb_report_job job = {
        .run = {.specs = specs, .n_specs = run.n_specs, .unit = run.ro.unit,
                .params = a->v[OPT_PARAM], .n_params = a->n[OPT_PARAM], .formats = formats,
                .max_steps = run.ro.max_steps, .only = only,
                .n_only = a->n[OPT_REPORT], .note = cli_on_note, .ctx = &run, .report_done = on_report_done},
        .out_dir = out_dir ? out_dir : ".",
        .console = stdout,
        .console_width = width,
        .written = cli_on_written,
        .csv_safe = a->n[OPT_CSV_SAFE] > 0,
        .keep_db = a->n[OPT_KEEP_DB] > 0,
        .warnings = (const char *const *)run.kept,
        .n_warnings = run.n_kept,
        /* earlier runs' files in the folder stay listed: never read back as inputs */
        .keep_listings = 1,
        .base = base, .base_name = a->v[OPT_BASE][0], /* --base PATH, or NULL */
    };
    if (writes_console(&run, formats) && isatty(STDOUT_FILENO))
        cli_progress_stop(run.progress);
    else
        cli_progress_reports(run.progress, tb_specs_count(specs, run.n_specs, only, a->n[OPT_REPORT]));
    tb_run_result res = {0};
    tb_status st = tb_report_write(run.s, &job, &res, &run.err);
    cli_progress_clear(run.progress);
    rc = cli_fail_on_warning(a, res.warnings, "the load and the run", cli_exit_code(st));
    rc = fail_on_finding(a, &res, rc);
    return cli_run_end(&run, st, rc);
}

int cli_cmd_query(cli_args *a)
{
    if (a->n[OPT_DIR] == 0)
        return cli_usage_error(a->cmd, "no input: give -dir PATH");
    unsigned format;
    int rc = cli_parse_format(a, TB_OUT_CONSOLE | TB_OUT_CSV | TB_OUT_JSON, &format);
    if (rc >= 0)
        return rc;
    int console = format == TB_OUT_CONSOLE;
    const char *out = cli_value(a, OPT_OUTPUT), *fmt = tb_out_format_name(format);
    if (out && console)
        return cli_usage_error(a->cmd, "%s: the console table goes to stdout; give --format csv or json to write "
                               "a file", a->as_written[OPT_OUTPUT]);
    int64_t max_rows = 100;
    if (a->n[OPT_MAX_ROWS] && !console)
        return cli_usage_error(a->cmd, "%s: only the console table has a row limit (--format %s writes every row)",
                               a->as_written[OPT_MAX_ROWS], fmt);
    if (a->n[OPT_MAX_ROWS] && (rc = cli_count(a, OPT_MAX_ROWS, &max_rows)) >= 0)
        return rc;
    int width;
    if ((rc = console_width(a, console, &width)) >= 0)
        return rc;
    cli_run run;
    if ((rc = cli_run_start(&run, a, RUN_SESSION)) >= 0)
        return rc;
    if (out && !strcmp(out, "-"))
        out = NULL;
    tb_query_job q = {
        .run = {.unit = run.ro.unit, .params = a->v[OPT_PARAM], .n_params = a->n[OPT_PARAM],
                .max_steps = run.ro.max_steps, .note = cli_on_note, .ctx = &run},
        .sql = a->pos[0],
        .format = format,
        .out_path = out,
        .out = stdout,
        .max_rows = (size_t)max_rows,
        .console_width = width,
        .csv_safe = a->n[OPT_CSV_SAFE] > 0,
    };
    uint64_t rows = 0;
    tb_status st = tb_query_write(run.s, &q, &rows, &run.err);
    if (st != TB_OK && !run.err.file[0] && run.err.offset >= 0) {
        /* an error SQLite places in the statement: show where */
        cli_print_error(&run.err);
        size_t k = 2 * strlen(a->pos[0]) + 64; /* the line, as many blanks, the caret's words */
        char *place = malloc(k);
        if (place) {
            tb_text_place(a->pos[0], run.err.offset, place, k);
            fputs(place, stderr);
        }
        free(place);
        return cli_run_end(&run, TB_OK, cli_exit_code(st));
    }
    return cli_run_end(&run, st, TB_EXIT_OK);
}

int cli_cmd_reports(cli_args *a)
{
    tb_error err;
    tb_error_clear(&err);
    tb_status st = tb_builtins_write(stdout, a->n_pos ? a->pos[0] : NULL, &err);
    if (st != TB_OK)
        cli_print_error(&err);
    return cli_exit_code(st);
}
