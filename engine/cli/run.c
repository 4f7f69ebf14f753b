/* SPDX-License-Identifier: MIT */
/*
 * run.c - the one set-up and tear-down every handler shares: the progress
 * line, the window options, the specs, the session of -dir (under mpirun
 * with the processes' hook), the engine's callbacks, and at the end the
 * error printed and everything closed. A handler parses its own options,
 * starts a run, calls one verb of the engine and ends the run.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_exit_code(tb_status st)
{
    switch (st) {
    case TB_OK: return TB_EXIT_OK;
    case TB_ERR_USAGE: return TB_EXIT_USAGE;
    case TB_ERR_PARSE:
    case TB_ERR_TRUNCATED: return TB_EXIT_INPUT;
    case TB_ERR_IO: return TB_EXIT_IO;
    case TB_ERR_DB: return TB_EXIT_DB;
    case TB_ERR_NOTFOUND: return TB_EXIT_NOTFOUND;
    default: return TB_EXIT_FAILURE;
    }
}

void cli_on_warn(void *ctx, const char *msg)
{
    cli_run *r = ctx;
    r->warnings++;
    if (r->record) {
        char **nv = realloc(r->kept, (r->n_kept + 1) * sizeof *nv);
        char *copy = strdup(msg);
        if (nv)
            r->kept = nv;
        if (nv && copy)
            r->kept[r->n_kept++] = copy;
        else
            free(copy);
    }
    cli_progress_clear(r->progress);
    if (!r->quiet)
        fprintf(stderr, "tracebook: warning: %s\n", msg);
}

void cli_on_note(void *ctx, const char *msg)
{
    cli_run *r = ctx;
    cli_progress_clear(r->progress);
    if (!r->quiet)
        fprintf(stderr, "tracebook: note: %s\n", msg);
}

void cli_on_written(void *ctx, const char *path)
{
    cli_run *r = ctx;
    cli_progress_clear(r->progress);
    if (!r->quiet)
        fprintf(stderr, "tracebook: wrote %s\n", path);
}

int cli_fail_on_warning(const cli_args *a, uint64_t warnings, const char *what, int rc)
{
    if (rc != TB_EXIT_OK || !a->n[OPT_FAIL_ON_WARNING] || warnings == 0)
        return rc;
    fprintf(stderr, "tracebook: error: %s gave %llu warning%s (--fail-on-warning): the outputs are written but"
                    " degraded\n", what, (unsigned long long)warnings, warnings == 1 ? "" : "s");
    return TB_EXIT_WARNING;
}

/* The session options of r's command line, for inputs over window w. */
static tb_session_options session_options(cli_run *r, const char *const *inputs, size_t n, const tb_window *w,
                                          int scoped)
{
    const cli_args *a = r->a;
    return (tb_session_options){
        .inputs = inputs, .n_inputs = n, .rebuild = a->n[OPT_REBUILD] > 0, .strict = a->n[OPT_STRICT] > 0,
        .keep_python_functions = a->n[OPT_KEEP_PYTHON] > 0, .keep_going = a->n[OPT_KEEP_GOING] > 0,
        .window = *w, .torch_links = a->n[OPT_PYTORCH_LINKS] > 0,
        .specs = scoped ? (const tb_spec *const *)r->specs : NULL, .n_specs = scoped ? r->n_specs : 0,
        .only = a->n[OPT_REPORT] ? a->v[OPT_REPORT] : NULL, .n_only = a->n[OPT_REPORT],
        .params = a->v[OPT_PARAM], .n_params = a->n[OPT_PARAM], .unit = r->ro.unit, .max_steps = r->ro.max_steps,
        .warn = cli_on_warn, .note = cli_on_note, .progress = cli_progress_load, .phase = cli_progress_phase,
        .ctx = r, .dist = cli_mpi_dist()};
}

/* Opens a session and finds or builds its DB (lazy: open only). On an MPI
 * process other than 0, serves process 0 instead: *served gets its code. */
static tb_status open_session(cli_run *r, tb_session_options *o, int lazy, tb_session **out, int *served)
{
    tb_status st = tb_session_open(o, out, &r->err);
    if (st == TB_OK && tb_session_serves(*out)) {
        *served = tb_session_serve(*out);
        cli_mpi_served();
        return TB_OK;
    }
    if (st == TB_OK && !lazy)
        st = tb_session_ready(*out, &r->err);
    cli_progress_clear(r->progress);
    return st;
}

int cli_run_session(cli_run *r, const char *const *inputs, size_t n, const tb_window *w, int lazy, tb_session **out)
{
    tb_session_options o = session_options(r, inputs, n, w, 0);
    int served = -1;
    tb_session **slot = !r->extra[0] ? &r->extra[0] : &r->extra[1];
    tb_status st = open_session(r, &o, lazy, slot, &served);
    *out = *slot;
    if (served >= 0)
        return cli_run_end(r, TB_OK, served);
    return st == TB_OK ? -1 : cli_run_end(r, st, 0);
}

int cli_run_start(cli_run *r, const cli_args *a, unsigned what)
{
    memset(r, 0, sizeof *r);
    r->a = a;
    int rc = cli_parse_window_opts(a, &r->ro);
    if (rc >= 0)
        return rc;
    r->quiet = a->n[OPT_QUIET] > 0;
    r->progress = cli_progress_create(!r->quiet && isatty(STDERR_FILENO));
    tb_error_clear(&r->err);
    tb_status st = TB_OK;
    if (what & RUN_SPECS) {
        r->specs = calloc(a->n[OPT_SPEC] ? a->n[OPT_SPEC] : 1, sizeof *r->specs);
        if (!r->specs)
            st = tb_error_set(&r->err, TB_ERR_NOMEM, "out of memory");
        /* specs first: a broken spec fails before any loading; their
         * warnings are the run's own (the load's are in the DB) */
        r->record = 1;
        for (; st == TB_OK && r->n_specs < a->n[OPT_SPEC]; r->n_specs++)
            st = tb_spec_load(a->v[OPT_SPEC][r->n_specs], &r->specs[r->n_specs], cli_on_warn, r, &r->err);
        if (st != TB_OK && r->n_specs)
            r->n_specs--; /* the one that failed was not made */
        r->record = 0;
    }
    if (st != TB_OK)
        return cli_run_end(r, st, 0);
    return what & RUN_SESSION ? cli_run_open(r, what) : -1;
}

int cli_run_open(cli_run *r, unsigned what)
{
    const cli_args *a = r->a;
    if (a->n[OPT_DIR] == 0)
        return cli_run_end(r, TB_OK, cli_usage_error(a->cmd, "no input: give -dir PATH"));
    tb_session_options o = session_options(r, a->v[OPT_DIR], a->n[OPT_DIR], &r->ro.window, (what & RUN_SCOPED) != 0);
    int served = -1;
    tb_status st = open_session(r, &o, (what & RUN_LAZY) != 0, &r->s, &served);
    if (served >= 0)
        return cli_run_end(r, TB_OK, served);
    return st == TB_OK ? -1 : cli_run_end(r, st, 0);
}

int cli_run_end(cli_run *r, tb_status st, int rc)
{
    cli_progress_clear(r->progress);
    if (st != TB_OK) {
        cli_print_error(&r->err);
        rc = cli_exit_code(st);
    }
    fflush(stdout);
    tb_session_close(r->s);
    for (int k = 0; k < 2; k++)
        tb_session_close(r->extra[k]);
    r->s = r->extra[0] = r->extra[1] = NULL;
    for (size_t i = 0; i < r->n_specs; i++)
        tb_spec_free(r->specs[i]);
    free(r->specs);
    r->specs = NULL;
    r->n_specs = 0;
    for (size_t i = 0; i < r->n_kept; i++)
        free(r->kept[i]);
    free(r->kept);
    r->kept = NULL;
    r->n_kept = 0;
    cli_progress_destroy(r->progress);
    r->progress = NULL;
    return rc;
}

int cli_apply_limits(const cli_args *a)
{
    static const struct { cli_opt_id id; tb_limit_kind kind; const char *expected; } opts[] = {
        {OPT_MAX_CPU_TIME, TB_LIMIT_CPU_SECONDS, "a positive number of seconds"},
        {OPT_MAX_MEMORY, TB_LIMIT_MEMORY, "a size such as 512M or 2G"},
        {OPT_MAX_TEMP, TB_LIMIT_TEMP, "a size such as 512M or 2G"}};
    tb_limits l = {0};
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        const char *v = cli_value(a, opts[k].id);
        if (v && tb_limits_read(&l, opts[k].kind, v))
            return cli_usage_error(a->cmd, "%.*s '%s': expected %s", (int)strcspn(a->as_written[opts[k].id], "="),
                                   a->as_written[opts[k].id], v, opts[k].expected);
    }
    tb_error err;
    tb_error_clear(&err);
    if (tb_limits_set(&l, &err)) {
        cli_print_error(&err);
        return cli_exit_code(err.code);
    }
    return -1;
}
