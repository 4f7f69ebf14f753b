/* SPDX-License-Identifier: MIT */
/*
 * compare.c - `tracebook compare`: the spec run on a base and a new run.
 *
 * Each side (-base, -new) is what `report -dir` takes (inputs, or a DB
 * tracebook wrote, loaded through the same cache), or the output folder of
 * an earlier report run, whose tracebook_run.json names its inputs
 * (tb_run_inputs). The spec is loaded first, so a broken spec fails before
 * any loading; then both DBs are obtained and tb_compare_write() does the
 * rest. With --fail-on-regression a run that found a regression ends with
 * TB_EXIT_REGRESSION (8) once every file is written.
 */
#include "cli.h"

/* An earlier run's folder keeps its tracebook_run.json: never the output.
 * Returns -1 when fine, else the exit code of the usage error. */
static int refuses_output(const cli_args *a, const char *out_dir)
{
    const char *const *sides[2] = {a->v[OPT_BASE], a->v[OPT_NEW]};
    size_t ns[2] = {a->n[OPT_BASE], a->n[OPT_NEW]};
    for (int k = 0; k < 2; k++)
        if (ns[k] == 1 && tb_run_folder_is(sides[k][0], out_dir))
            return cli_usage_error(a->cmd, "-o %s would replace the tracebook_run.json of the %s run: write the "
                                   "comparison elsewhere", out_dir, k ? "new" : "base");
    return -1;
}

/* The window options as report takes them, where a side's own
 * --base/--new-iteration-id stands for --iteration-id (into ra, a copy of
 * a). Returns -1 when fine, else the exit code of the usage error. */
static int side_window_args(const cli_args *a, cli_args *ra)
{
    *ra = *a;
    int has_side[2] = {a->n[OPT_BASE_ITERATION_ID] > 0, a->n[OPT_NEW_ITERATION_ID] > 0};
    if ((has_side[0] || has_side[1]) && !a->n[OPT_MODEL_ID])
        return cli_usage_error(a->cmd, "--%s-iteration-id needs --model-id (%lld for step mode)",
                               has_side[0] ? "base" : "new", (long long)TB_STEP_MODEL_ID);
    if (!a->n[OPT_ITERATION_ID] && (has_side[0] || has_side[1])) {
        if (!(has_side[0] && has_side[1]))
            return cli_usage_error(a->cmd, "--%s-iteration-id alone: give --iteration-id for the %s run too (or "
                                   "--%s-iteration-id)", has_side[0] ? "base" : "new", has_side[0] ? "new" : "base",
                                   has_side[0] ? "new" : "base");
        ra->v[OPT_ITERATION_ID] = a->v[OPT_BASE_ITERATION_ID];
        ra->n[OPT_ITERATION_ID] = a->n[OPT_BASE_ITERATION_ID];
    }
    return -1;
}

/* The largest regressions, one a line: report, key, column, base -> new, ratio. */
static void list_regressions(const tb_compare_result *res)
{
    for (size_t i = 0; i < res->n_top; i++) {
        char line[1024];
        tb_compare_change_text(&res->top[i], line, sizeof line);
        fprintf(stderr, "tracebook: regression: %s\n", line);
    }
    if (res->regressions > res->n_top)
        fprintf(stderr, "tracebook: ... and %llu more regressions (tracebook_run.json lists them all)\n",
                (unsigned long long)(res->regressions - res->n_top));
}

/* Says what the comparison found; --fail-on-regression ends with TB_EXIT_REGRESSION when it found one.
 * The largest regressions are listed unless -q, and with -q too when they fail the run. */
static int said(const cli_run *run, const tb_compare_result *res)
{
    int fail = res->regressions && run->a->n[OPT_FAIL_ON_REGRESSION];
    if (!run->quiet)
        fprintf(stderr,
                "tracebook: compared %zu report%s: %llu rows matched, %llu added, %llu removed; "
                "%llu regression%s, %llu improvement%s\n",
                res->reports, res->reports == 1 ? "" : "s", (unsigned long long)res->matched,
                (unsigned long long)res->added, (unsigned long long)res->removed,
                (unsigned long long)res->regressions, res->regressions == 1 ? "" : "s",
                (unsigned long long)res->improvements, res->improvements == 1 ? "" : "s");
    if (!run->quiet || fail)
        list_regressions(res);
    return fail ? TB_EXIT_REGRESSION : TB_EXIT_OK;
}

int cli_cmd_compare(cli_args *a)
{
    if (a->n[OPT_BASE] == 0 || a->n[OPT_NEW] == 0)
        return cli_usage_error(a->cmd, "compare needs both runs: give -base PATH and -new PATH");
    if (a->n[OPT_SPEC] == 0)
        return cli_usage_error(a->cmd, "no spec: give --spec FILE (built-in reports: tracebook reports)");
    const char *out_dir;
    unsigned formats;
    int rc = cli_parse_formats(a, TB_OUT_CSV | TB_OUT_JSON | TB_OUT_XLSX | TB_OUT_HTML, &formats);
    if (rc >= 0 || (rc = cli_out_dir(a, &out_dir)) >= 0)
        return rc;
    cli_args ra;
    cli_run run;
    if ((rc = side_window_args(a, &ra)) >= 0 || (rc = refuses_output(a, out_dir)) >= 0 ||
        (rc = cli_run_start(&run, &ra, RUN_SPECS)) >= 0)
        return rc;
    static const cli_opt_id given[2] = {OPT_BASE, OPT_NEW}, side_id[2] = {OPT_BASE_ITERATION_ID, OPT_NEW_ITERATION_ID};
    tb_window win[2] = {run.ro.window, run.ro.window};
    for (int k = 0; k < 2 && rc < 0; k++)
        if (a->n[side_id[k]] && (rc = cli_count(a, side_id[k], &win[k].iteration_id)) >= 0)
            return cli_run_end(&run, TB_OK, rc);
    char **side[2] = {NULL, NULL};
    size_t n_side[2] = {0, 0};
    tb_session *ss[2] = {NULL, NULL};
    tb_status st = TB_OK;
    for (int k = 0; k < 2 && st == TB_OK && rc < 0; k++)
        if ((st = tb_run_inputs(a->v[given[k]], a->n[given[k]], &side[k], &n_side[k], &run.err)) == TB_OK)
            rc = cli_run_session(&run, (const char *const *)side[k], n_side[k], &win[k], 0, &ss[k]);
    if (rc < 0) {
        tb_compare_job job = {.spec = run.specs[0], .unit = run.ro.unit, .max_steps = run.ro.max_steps,
                              .formats = formats, .csv_safe = a->n[OPT_CSV_SAFE] > 0, .out_dir = out_dir, .written = cli_on_written,
                              .note = cli_on_note, .ctx = &run};
        tb_compare_result res = {0};
        if (st == TB_OK)
            st = tb_compare_write(ss[0], ss[1], &job, &res, &run.err);
        rc = cli_run_end(&run, st, st == TB_OK ? said(&run, &res) : 0);
    }
    for (int k = 0; k < 2; k++)
        tb_paths_free(side[k]);
    return rc;
}
