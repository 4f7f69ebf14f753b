/* SPDX-License-Identifier: MIT */
/*
 * history.c - `tracebook history add|report|list|remove`: the nights of a
 * nightly job in one history DB (docs/nightly.md).
 *
 * `add` takes a night as report does (-dir inputs and --spec), or as the
 * output folder of an earlier report run (its tracebook_run.json names the
 * inputs, the spec and the window); a session of the night's inputs, then
 * tb_history_add() appends the night. `report` writes the trends and
 * verdicts; with --fail-on-regression the newest night's regressions end
 * the run with TB_EXIT_REGRESSION (8) once every file is written.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* --keep N (N >= 1) into *keep (0 when not given). -1 when fine, else the exit code of the usage error. */
static int parse_keep(const cli_args *a, int64_t *keep)
{
    int rc;
    if (a->n[OPT_KEEP] && (rc = cli_count(a, OPT_KEEP, keep)) >= 0)
        return rc;
    if (a->n[OPT_KEEP] && *keep < 1)
        return cli_usage_error(a->cmd, "--keep %lld: keep at least 1 night", (long long)*keep);
    return -1;
}

/* The night: -dir's inputs, or a report folder's inputs, spec and window
 * (its window unless one is given here). New strings in *inputs, *spec_path. */
static tb_status night_of(const cli_args *a, const char *run_dir, char ***inputs, size_t *n, char **spec_path,
                          tb_window *win, tb_error *err)
{
    if (!run_dir)
        return tb_run_inputs(a->v[OPT_DIR], a->n[OPT_DIR], inputs, n, err);
    tb_window rw;
    tb_status st = tb_run_inputs(&run_dir, 1, inputs, n, err);
    if (!st)
        st = tb_run_spec_window(run_dir, spec_path, &rw, err);
    if (!st && !win->set)
        *win = rw;
    return st;
}

int cli_cmd_history_add(cli_args *a)
{
    const char *history = cli_value(a, OPT_HISTORY);
    if (!history)
        return cli_usage_error(a->cmd, "no history: give --history FILE.db (created when missing)");
    const char *run_dir = a->n_pos ? a->pos[0] : NULL;
    if (run_dir && a->n[OPT_DIR])
        return cli_usage_error(a->cmd, "give the night as -dir PATH or as a report folder (%s), not both", run_dir);
    if (!run_dir && !a->n[OPT_DIR])
        return cli_usage_error(a->cmd, "no night: give -dir PATH --spec FILE, or the output folder of a report run");
    if (run_dir && !tb_run_folder(run_dir))
        return cli_usage_error(a->cmd, "'%s' holds no tracebook_run.json: not the output folder of a report run",
                               run_dir);
    if (!run_dir && !a->n[OPT_SPEC])
        return cli_usage_error(a->cmd, "no spec: give --spec FILE (built-in reports: tracebook reports)");
    int64_t keep = 0;
    int rc;
    cli_run run;
    if ((rc = parse_keep(a, &keep)) >= 0 || (rc = cli_run_start(&run, a, 0)) >= 0)
        return rc;
    char **inputs = NULL, *spec_path = NULL;
    size_t n_inputs = 0;
    tb_window win = run.ro.window;
    tb_status st = night_of(a, run_dir, &inputs, &n_inputs, &spec_path, &win, &run.err);
    tb_spec *spec = NULL;
    if (!st)
        st = tb_spec_load(a->n[OPT_SPEC] ? cli_value(a, OPT_SPEC) : spec_path, &spec, cli_on_warn, &run, &run.err);
    tb_session *night = NULL;
    rc = st ? -1 : cli_run_session(&run, (const char *const *)inputs, n_inputs, &win, 0, &night);
    if (rc < 0) {
        tb_history_added res;
        tb_history_add_job job = {.history = history, .spec = spec, .params = a->v[OPT_PARAM],
                                  .n_params = a->n[OPT_PARAM], .max_steps = run.ro.max_steps,
                                  .label = cli_value(a, OPT_LABEL), .meta = a->v[OPT_META], .n_meta = a->n[OPT_META],
                                  .keep = keep, .note = cli_on_note, .ctx = &run};
        if (!st)
            st = tb_history_add(night, &job, &res, &run.err);
        if (!st && !run.quiet)
            fprintf(stderr, "tracebook: %s: added night '%s': %zu report%s, %llu rows; %zu night%s in the history\n",
                    history, res.label, res.reports, res.reports == 1 ? "" : "s", (unsigned long long)res.rows,
                    res.nights, res.nights == 1 ? "" : "s");
        if (!st)
            printf("%s\n", res.label);
        rc = cli_run_end(&run, st, TB_EXIT_OK);
    }
    tb_paths_free(inputs);
    free(spec_path);
    tb_spec_free(spec);
    return rc;
}

int cli_cmd_history_report(cli_args *a)
{
    const char *history = cli_value(a, OPT_HISTORY);
    if (!history)
        return cli_usage_error(a->cmd, "no history: give --history FILE.db");
    if (!a->n[OPT_SPEC])
        return cli_usage_error(a->cmd, "no spec: give --spec FILE (its reports' keys and rules are used)");
    int64_t last = 0;
    int rc;
    if (a->n[OPT_LAST] && (rc = cli_count(a, OPT_LAST, &last)) >= 0)
        return rc;
    if (a->n[OPT_LAST] && last < 1)
        return cli_usage_error(a->cmd, "--last %lld: show at least 1 night", (long long)last);
    unsigned formats;
    if ((rc = cli_parse_formats(a, TB_OUT_CSV | TB_OUT_JSON | TB_OUT_XLSX | TB_OUT_HTML, &formats)) >= 0)
        return rc;
    const char *out_dir;
    if ((rc = cli_out_dir(a, &out_dir)) >= 0)
        return rc;
    cli_run run;
    if ((rc = cli_run_start(&run, a, RUN_SPECS)) >= 0)
        return rc;
    tb_history_report_job job = {.history = history, .spec = run.specs[0], .last = last, .unit = run.ro.unit,
                                 .formats = formats, .csv_safe = a->n[OPT_CSV_SAFE] > 0, .out_dir = out_dir, .written = cli_on_written,
                                 .note = cli_on_note, .ctx = &run};
    tb_history_result res;
    tb_status st = tb_history_report(&job, &res, &run.err);
    rc = TB_EXIT_OK;
    if (!st && !run.quiet)
        fprintf(stderr,
                "tracebook: %zu report%s over %zu night%s; the newest, '%s': %llu regression%s, %llu "
                "improvement%s (%llu regression%s over the nights shown)\n",
                res.reports, res.reports == 1 ? "" : "s", res.nights, res.nights == 1 ? "" : "s", res.latest,
                (unsigned long long)res.regressions, res.regressions == 1 ? "" : "s",
                (unsigned long long)res.improvements, res.improvements == 1 ? "" : "s",
                (unsigned long long)res.flagged, res.flagged == 1 ? "" : "s");
    if (!st && res.regressions && a->n[OPT_FAIL_ON_REGRESSION])
        rc = TB_EXIT_REGRESSION;
    return cli_run_end(&run, st, rc);
}

int cli_cmd_history_list(cli_args *a)
{
    const char *history = cli_value(a, OPT_HISTORY);
    if (!history)
        return cli_usage_error(a->cmd, "no history: give --history FILE.db");
    unsigned f;
    int rc = cli_parse_format(a, TB_OUT_CONSOLE | TB_OUT_CSV | TB_OUT_JSON, &f);
    if (rc >= 0)
        return rc;
    cli_run run;
    if ((rc = cli_run_start(&run, a, 0)) >= 0)
        return rc;
    return cli_run_end(&run, tb_history_list(history, f, stdout, &run.err), TB_EXIT_OK);
}

int cli_cmd_history_remove(cli_args *a)
{
    const char *history = cli_value(a, OPT_HISTORY);
    if (!history)
        return cli_usage_error(a->cmd, "no history: give --history FILE.db");
    if (!a->n[OPT_LABEL] && !a->n[OPT_KEEP])
        return cli_usage_error(a->cmd, "nothing to remove: give --label L (repeatable) or --keep N");
    int64_t keep = 0;
    int rc;
    if ((rc = parse_keep(a, &keep)) >= 0)
        return rc;
    tb_error err;
    tb_error_clear(&err);
    size_t removed = 0;
    tb_status st = tb_history_remove(history, a->v[OPT_LABEL], a->n[OPT_LABEL], keep, &removed, &err);
    if (st)
        cli_print_error(&err);
    else if (!a->n[OPT_QUIET])
        fprintf(stderr, "tracebook: %s: removed %zu night%s\n", history, removed, removed == 1 ? "" : "s");
    return cli_exit_code(st);
}
