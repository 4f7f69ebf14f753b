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
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* One side's inputs as report would take them (an earlier run's folder
 * replaced by its inputs) in *inputs (new array of new strings). */
static tb_status side_inputs(const char *const *given, size_t n, char ***inputs, size_t *n_inputs, tb_error *err)
{
    if (n == 1 && cli_is_run_folder(given[0]))
        return tb_run_inputs(given[0], inputs, n_inputs, err);
    *inputs = calloc(n, sizeof **inputs);
    *n_inputs = 0;
    if (!*inputs)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (; *n_inputs < n; (*n_inputs)++)
        if (!((*inputs)[*n_inputs] = strdup(given[*n_inputs])))
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    return TB_OK;
}

static void free_inputs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The DB of one side: the cached load of its inputs (as report's -dir). */
static tb_status side_db(const cli_args *a, char **inputs, size_t n, cli_run *run, char *db, size_t cap,
                         tb_error *err)
{
    cli_args d = *a;
    d.v[OPT_DIR] = (const char **)inputs;
    d.n[OPT_DIR] = n;
    int reused = 0;
    return cli_obtain_db(&d, run, db, cap, &reused, err);
}

int cli_cmd_compare(cli_args *a)
{
    if (a->n[OPT_BASE] == 0 || a->n[OPT_NEW] == 0)
        return cli_usage_error(a->cmd, "compare needs both runs: give -base PATH and -new PATH");
    if (a->n[OPT_SPEC] == 0)
        return cli_usage_error(a->cmd, "no spec: give --spec FILE (built-in reports: tracebook reports)");
    /* the unit, the step budget and the window as report takes them; a
     * side's own --base/--new-iteration-id stands for --iteration-id */
    cli_args ra = *a;
    int has_side[2] = {a->n[OPT_BASE_ITERATION_ID] > 0, a->n[OPT_NEW_ITERATION_ID] > 0};
    if ((has_side[0] || has_side[1]) && !a->n[OPT_MODEL_ID])
        return cli_usage_error(a->cmd, "--%s-iteration-id needs --model-id (4294967295 for step mode)",
                               has_side[0] ? "base" : "new");
    if (!a->n[OPT_ITERATION_ID] && (has_side[0] || has_side[1])) {
        if (!(has_side[0] && has_side[1]))
            return cli_usage_error(a->cmd, "--%s-iteration-id alone: give --iteration-id for the %s run too (or "
                                   "--%s-iteration-id)", has_side[0] ? "base" : "new", has_side[0] ? "new" : "base",
                                   has_side[0] ? "new" : "base");
        ra.v[OPT_ITERATION_ID] = a->v[OPT_BASE_ITERATION_ID];
        ra.n[OPT_ITERATION_ID] = a->n[OPT_BASE_ITERATION_ID];
    }
    cli_run_opts ro;
    int rc = cli_parse_window_opts(&ra, &ro);
    if (rc >= 0)
        return rc;
    tb_window win[2] = {ro.window, ro.window};
    static const cli_opt_id side_opt[2] = {OPT_BASE_ITERATION_ID, OPT_NEW_ITERATION_ID};
    for (int k = 0; k < 2; k++)
        if (has_side[k] && (rc = cli_count(a, side_opt[k], &win[k].iteration_id)) >= 0)
            return rc;
    unsigned formats = 0;
    const char *fmt = cli_value(a, OPT_FORMAT);
    if (fmt) {
        formats = cli_parse_file_formats(fmt);
        if (!formats)
            return cli_usage_error(a->cmd, "--format '%s': expected a comma-separated list of csv, json, xlsx", fmt);
    }
    const char *out_dir = cli_value(a, OPT_OUTPUT);
    if (out_dir && !strcmp(out_dir, "-"))
        return cli_usage_error(a->cmd, "-o -: compare writes a directory of files; give a directory");
    cli_run run = cli_run_for(a);
    tb_error err;
    tb_error_clear(&err);
    tb_spec *spec = NULL;
    char **base = NULL, **nw = NULL;
    size_t n_base = 0, n_new = 0;
    char base_db[PATH_MAX], new_db[PATH_MAX];
    tb_compare_result res = {0};
    /* an earlier run's folder keeps its tracebook_run.json: never the output */
    char out_real[PATH_MAX], side_real[PATH_MAX];
    if (realpath(out_dir ? out_dir : ".", out_real)) {
        const char *const *sides[2] = {a->v[OPT_BASE], a->v[OPT_NEW]};
        size_t ns[2] = {a->n[OPT_BASE], a->n[OPT_NEW]};
        for (int k = 0; k < 2; k++)
            if (ns[k] == 1 && cli_is_run_folder(sides[k][0]) && realpath(sides[k][0], side_real) &&
                !strcmp(out_real, side_real)) {
                cli_progress_destroy(run.progress);
                return cli_usage_error(a->cmd, "-o %s would replace the tracebook_run.json of the %s run: write the "
                                       "comparison elsewhere", out_dir ? out_dir : ".", k ? "new" : "base");
            }
    }
    tb_status st = cli_load_spec(cli_value(a, OPT_SPEC), &spec, &run, &err);
    if (!st)
        st = side_inputs(a->v[OPT_BASE], a->n[OPT_BASE], &base, &n_base, &err);
    if (!st)
        st = side_inputs(a->v[OPT_NEW], a->n[OPT_NEW], &nw, &n_new, &err);
    if (!st)
        st = side_db(a, base, n_base, &run, base_db, sizeof base_db, &err);
    if (!st)
        st = side_db(a, nw, n_new, &run, new_db, sizeof new_db, &err);
    if (!st) {
        if (out_dir)
            cli_make_parents(out_dir);
        tb_compare_job job = {.base_db = base_db,
                              .new_db = new_db,
                              .base_inputs = (const char *const *)base,
                              .n_base_inputs = n_base,
                              .new_inputs = (const char *const *)nw,
                              .n_new_inputs = n_new,
                              .spec = spec,
                              .unit = ro.unit,
                              .max_steps = ro.max_steps,
                              .formats = formats,
                              .base_window = win[0],
                              .new_window = win[1],
                              .out_dir = out_dir ? out_dir : ".",
                              .written = cli_on_written,
                              .note = cli_on_note,
                              .ctx = &run};
        st = tb_compare_write(&job, &res, &err);
        cli_progress_clear(run.progress);
    }
    rc = tb_exit_code(st);
    if (st != TB_OK) {
        cli_print_error(&err);
    } else {
        if (!run.quiet)
            fprintf(stderr,
                    "tracebook: compared %zu report%s: %llu rows matched, %llu added, %llu removed; "
                    "%llu regression%s, %llu improvement%s\n",
                    res.reports, res.reports == 1 ? "" : "s", (unsigned long long)res.matched,
                    (unsigned long long)res.added, (unsigned long long)res.removed,
                    (unsigned long long)res.regressions, res.regressions == 1 ? "" : "s",
                    (unsigned long long)res.improvements, res.improvements == 1 ? "" : "s");
        if (res.regressions && a->n[OPT_FAIL_ON_REGRESSION])
            rc = TB_EXIT_REGRESSION;
    }
    free_inputs(base, n_base);
    free_inputs(nw, n_new);
    tb_spec_free(spec);
    cli_progress_destroy(run.progress);
    return rc;
}
