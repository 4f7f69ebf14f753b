/* SPDX-License-Identifier: MIT */
/*
 * report.c - `tracebook report`, `query` and `reports`.
 *
 * report loads every spec first (a broken spec fails before any loading),
 * then the inputs' cached DB, then runs the reports through
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

int cli_parse_run_opts(const cli_args *a, cli_run_opts *r)
{
    memset(r, 0, sizeof *r);
    if (a->n[OPT_DIR] == 0)
        return cli_usage_error(a->cmd, "no input: give -dir PATH");
    return cli_parse_window_opts(a, r);
}

int cli_parse_window_opts(const cli_args *a, cli_run_opts *r)
{
    memset(r, 0, sizeof *r);
    r->unit = TB_UNIT_US;
    int rc;
    if (a->n[OPT_MAX_STEPS] && (rc = cli_count(a, OPT_MAX_STEPS, &r->max_steps)) >= 0)
        return rc;
    const char *u = cli_value(a, OPT_TIMEUNIT);
    if (u) {
        if (!strcmp(u, "ns")) r->unit = TB_UNIT_NS;
        else if (!strcmp(u, "us")) r->unit = TB_UNIT_US;
        else if (!strcmp(u, "ms")) r->unit = TB_UNIT_MS;
        else if (!strcmp(u, "s")) r->unit = TB_UNIT_S;
        else return cli_usage_error(a->cmd, "--timeunit '%s': expected ns, us, ms or s", u);
    }
    int has_model = a->n[OPT_MODEL_ID] > 0, has_iter = a->n[OPT_ITERATION_ID] > 0;
    int has_count = a->n[OPT_ITERATION_COUNT] > 0;
    if (has_model && (rc = cli_count(a, OPT_MODEL_ID, &r->window.model_id)) >= 0)
        return rc;
    if (has_iter && (rc = cli_count(a, OPT_ITERATION_ID, &r->window.iteration_id)) >= 0)
        return rc;
    if (has_count && (rc = cli_count(a, OPT_ITERATION_COUNT, &r->window.iteration_count)) >= 0)
        return rc;
    if (has_iter && !has_model)
        return cli_usage_error(a->cmd, "--iteration-id needs --model-id (4294967295 for step mode)");
    if (has_model && !has_iter)
        return cli_usage_error(a->cmd, "--model-id needs --iteration-id");
    if (has_count && !has_iter)
        return cli_usage_error(a->cmd, "--iteration-count needs --model-id and --iteration-id");
    if (has_count && r->window.iteration_count < 1)
        return cli_usage_error(a->cmd, "--iteration-count must be at least 1");
    r->window.set = has_model;
    if (!has_count)
        r->window.iteration_count = 1;
    return -1;
}

/* Parses --format for report: a mask, 0 when not given, ~0u when bad. */
static unsigned parse_formats(const char *list)
{
    if (!list)
        return 0;
    unsigned m = 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n == 3 && !strncmp(p, "csv", 3)) m |= TB_OUT_CSV;
        else if (n == 4 && !strncmp(p, "json", 4)) m |= TB_OUT_JSON;
        else if (n == 4 && !strncmp(p, "xlsx", 4)) m |= TB_OUT_XLSX;
        else if (n == 7 && !strncmp(p, "console", 7)) m |= TB_OUT_CONSOLE;
        else return ~0u;
        p += n;
        if (*p == ',')
            p++;
    }
    return m ? m : ~0u;
}

/* The ids of every built-in report, in file order: a new array of strings
 * borrowed from *specs (free both with free_builtin_ids). NULL with err set
 * when a built-in does not load (a bug). */
static const char **builtin_ids(tb_spec ***specs, size_t *n_specs, size_t *n, tb_error *err)
{
    size_t nb = 0;
    const tb_builtin *b = tb_builtins(&nb);
    *specs = calloc(nb ? nb : 1, sizeof **specs);
    *n_specs = 0;
    *n = 0;
    const char **ids = NULL;
    size_t cap = 0;
    if (!*specs) {
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < nb; i++) {
        char name[128];
        snprintf(name, sizeof name, "builtin:%s.yaml", b[i].name);
        tb_spec *sp = NULL;
        if (tb_spec_load_mem(name, b[i].text, strlen(b[i].text), &sp, NULL, NULL, err) != TB_OK)
            goto fail;
        (*specs)[(*n_specs)++] = sp;
        for (size_t k = 0; k < tb_spec_n_reports(sp); k++) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 32;
                const char **more = realloc(ids, cap * sizeof *ids);
                if (!more) {
                    tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                    goto fail;
                }
                ids = more;
            }
            ids[(*n)++] = tb_report_id(tb_spec_report_at(sp, k));
        }
    }
    if (!ids)
        ids = calloc(1, sizeof *ids);
    return ids;
fail:
    free(ids);
    return NULL;
}

static void free_specs(tb_spec **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        tb_spec_free(v[i]);
    free(v);
}

/* Reports an unknown built-in report name with the nearest one. Returns TB_EXIT_USAGE. */
static int unknown_builtin(const char *what, const char *name)
{
    tb_error err;
    tb_error_clear(&err);
    tb_spec **specs = NULL;
    size_t n_specs = 0, n = 0;
    const char **ids = builtin_ids(&specs, &n_specs, &n, &err);
    const char *near = ids ? tb_suggest(name, ids, n) : NULL;
    if (near)
        fprintf(stderr, "tracebook: error: %sno built-in report '%s' (did you mean '%s'?); tracebook reports "
                        "lists them\n", what, name, near);
    else
        fprintf(stderr, "tracebook: error: %sno built-in report '%s' (tracebook reports lists them)\n", what, name);
    free(ids);
    free_specs(specs, n_specs);
    return TB_EXIT_USAGE;
}

static int is_builtin(const char *name)
{
    tb_error err;
    tb_error_clear(&err);
    tb_spec **specs = NULL;
    size_t n_specs = 0, n = 0;
    const char **ids = builtin_ids(&specs, &n_specs, &n, &err);
    int found = 0;
    for (size_t i = 0; ids && i < n && !found; i++)
        found = !strcmp(ids[i], name);
    free(ids);
    free_specs(specs, n_specs);
    return found;
}

static void on_report_done(void *ctx, const tb_spec_report *rep, const char *skipped, uint64_t rows)
{
    cli_run *r = ctx;
    (void)skipped;
    (void)rows;
    cli_progress_report_done(r->progress, tb_report_id(rep));
}

/* --report IDs that no spec has: a usage error naming the nearest id. Returns -1 when all are there. */
static int check_only(const cli_args *a, tb_spec *const *specs, size_t n_specs)
{
    for (size_t i = 0; i < a->n[OPT_REPORT]; i++) {
        const char *want = a->v[OPT_REPORT][i];
        const char *cands[256];
        size_t n = 0;
        int found = 0;
        for (size_t s = 0; s < n_specs; s++)
            for (size_t k = 0; k < tb_spec_n_reports(specs[s]); k++) {
                found |= !strcmp(tb_report_id(tb_spec_report_at(specs[s], k)), want);
                if (n < 256)
                    cands[n++] = tb_report_id(tb_spec_report_at(specs[s], k));
            }
        /* an msprof reports file runs summaries its spec does not list: the engine checks those */
        for (size_t s = 0; s < n_specs; s++)
            found |= tb_spec_is_msprof_reports(specs[s]);
        if (found)
            continue;
        const char *near = tb_suggest(want, cands, n);
        if (near)
            return cli_usage_error(a->cmd, "--report '%s': no spec has a report with this id (did you mean '%s'?)",
                                   want, near);
        return cli_usage_error(a->cmd, "--report '%s': no spec has a report with this id", want);
    }
    return -1;
}

/* How many reports the run will go through (for the progress line). */
static size_t expected_reports(const cli_args *a, tb_spec *const *specs, size_t n_specs)
{
    size_t n = 0;
    for (size_t s = 0; s < n_specs; s++)
        for (size_t k = 0; k < tb_spec_n_reports(specs[s]); k++) {
            int want = a->n[OPT_REPORT] == 0;
            for (size_t i = 0; i < a->n[OPT_REPORT] && !want; i++)
                want = !strcmp(a->v[OPT_REPORT][i], tb_report_id(tb_spec_report_at(specs[s], k)));
            n += want;
        }
    return n;
}

int cli_cmd_report(cli_args *a)
{
    if (a->n[OPT_DIR] && a->n[OPT_SPEC] == 0)
        return cli_usage_error(a->cmd, "no spec: give --spec FILE (built-in reports: tracebook reports)");
    cli_run_opts ro;
    int rc = cli_parse_run_opts(a, &ro);
    if (rc >= 0)
        return rc;
    const char *format = cli_value(a, OPT_FORMAT);
    unsigned formats = parse_formats(format);
    if (a->n[OPT_CSV_SAFE] && formats && formats != ~0u && !(formats & TB_OUT_CSV))
        return cli_usage_error(a->cmd, "--csv-safe: --format '%s' writes no CSV", format);
    if (formats == ~0u)
        return cli_usage_error(a->cmd, "--format '%s': expected a comma-separated list of csv, json, xlsx, console",
                               format);
    const char *out_dir = cli_value(a, OPT_OUTPUT);
    if (out_dir && !strcmp(out_dir, "-"))
        return cli_usage_error(a->cmd, "-o -: report writes a directory of files; give a directory");
    if (out_dir && formats == TB_OUT_CONSOLE)
        return cli_usage_error(a->cmd, "%s: --format console writes no files; drop -o or add csv or json",
                               a->as_written[OPT_OUTPUT]);
    for (size_t i = 0; i < a->n[OPT_SPEC]; i++) {
        const char *s = a->v[OPT_SPEC][i];
        if (!strncmp(s, "builtin:", 8) && !is_builtin(s + 8)) {
            char what[300];
            snprintf(what, sizeof what, "--spec '%.200s': ", s);
            return unknown_builtin(what, s + 8);
        }
    }
    cli_run run = cli_run_for(a);
    tb_error err;
    tb_error_clear(&err);
    size_t n_specs = a->n[OPT_SPEC];
    tb_spec **specs = calloc(n_specs, sizeof *specs);
    tb_status st = specs ? TB_OK : tb_error_set(&err, TB_ERR_NOMEM, "out of memory");
    size_t loaded = 0;
    /* specs first: a broken spec fails before any loading; their warnings
     * are the run's own (the load's are in the DB) */
    run.record = 1;
    for (; st == TB_OK && loaded < n_specs; loaded++)
        st = cli_load_spec(a->v[OPT_SPEC][loaded], &specs[loaded], &run, &err);
    run.record = 0;
    if (st == TB_OK && (rc = check_only(a, specs, loaded)) >= 0)
        goto done;
    char db[PATH_MAX];
    int reused = 0;
    uint64_t warnings = 0;
    /* every report rank- or cluster-scope over shards, or under mpirun: each
     * shard runs them on its own ranks, no merge (docs/scale-out.md#report-scopes) */
    int scoped = st == TB_OK &&
                 tb_specs_scoped((const tb_spec *const *)specs, n_specs,
                                 a->n[OPT_REPORT] ? a->v[OPT_REPORT] : NULL, a->n[OPT_REPORT]) &&
                 (cli_mpi_size() > 1 || cli_inputs_are_shards(a));
    if (st == TB_OK && scoped)
        st = cli_scoped_db(a, &run, specs, n_specs, db, sizeof db, &err);
    else if (st == TB_OK)
        st = cli_obtain_db(a, &run, db, sizeof db, &reused, &err);
    if (st == TB_OK) {
        tb_report_job job = {
            .run = {.db_path = db, .specs = (const tb_spec *const *)specs, .n_specs = n_specs,
                    .window = ro.window, .unit = ro.unit, .params = a->v[OPT_PARAM], .n_params = a->n[OPT_PARAM],
                    .formats = formats, .max_steps = ro.max_steps, .only = a->n[OPT_REPORT] ? a->v[OPT_REPORT] : NULL,
                    .n_only = a->n[OPT_REPORT], .note = cli_on_note, .ctx = &run, .report_done = on_report_done,
                    .replay = scoped ? db : NULL},
            .out_dir = out_dir ? out_dir : ".",
            .console = stdout,
            .inputs = a->v[OPT_DIR],
            .n_inputs = a->n[OPT_DIR],
            .written = cli_on_written,
            .csv_safe = a->n[OPT_CSV_SAFE] > 0,
            .warnings = (const char *const *)run.kept,
            .n_warnings = run.n_kept,
        };
        /* console tables go to stdout: the progress line would garble a terminal's view of them */
        int console = formats ? (formats & TB_OUT_CONSOLE) != 0 : 0;
        for (size_t s = 0; s < n_specs && !formats && !console; s++) {
            console |= (tb_spec_outputs(specs[s]) & TB_OUT_CONSOLE) != 0;
            for (size_t k = 0; k < tb_spec_n_reports(specs[s]); k++)
                console |= (tb_report_outputs(tb_spec_report_at(specs[s], k)) & TB_OUT_CONSOLE) != 0;
        }
        if (console && isatty(STDOUT_FILENO))
            cli_progress_stop(run.progress);
        else
            cli_progress_reports(run.progress, expected_reports(a, specs, n_specs));
        if (out_dir)
            cli_make_parents(out_dir);
        tb_run_result res;
        st = tb_report_write(&job, &res, &err);
        cli_progress_clear(run.progress);
        warnings = res.warnings;
    }
    rc = tb_exit_code(st);
    if (st != TB_OK)
        cli_print_error(&err);
    fflush(stdout);
    rc = cli_fail_on_warning(a, warnings, "the load and the run", rc);
done:
    cli_scoped_finish();
    free_specs(specs, loaded);
    cli_run_finish(&run);
    cli_progress_destroy(run.progress);
    return rc;
}

/* Prints the line of sql holding byte offset off, with a caret under it. */
static void show_sql_place(const char *sql, int64_t off)
{
    size_t len = strlen(sql);
    if (off < 0 || (size_t)off > len)
        return;
    size_t start = (size_t)off, end = (size_t)off;
    while (start > 0 && sql[start - 1] != '\n')
        start--;
    while (end < len && sql[end] != '\n')
        end++;
    long line = 1;
    for (size_t i = 0; i < start; i++)
        line += sql[i] == '\n';
    size_t col = 0;
    for (size_t i = start; i < (size_t)off; i++)
        col += ((unsigned char)sql[i] & 0xC0) != 0x80;
    fprintf(stderr, "  %.*s\n  %*s^ line %ld, column %zu\n", (int)(end - start), sql + start, (int)col, "", line,
            col + 1);
}

int cli_cmd_query(cli_args *a)
{
    cli_run_opts ro;
    int rc = cli_parse_run_opts(a, &ro);
    if (rc >= 0)
        return rc;
    const char *fmt = cli_value(a, OPT_FORMAT) ? cli_value(a, OPT_FORMAT) : "console";
    if (strcmp(fmt, "console") && strcmp(fmt, "csv") && strcmp(fmt, "json"))
        return cli_usage_error(a->cmd, "--format '%s': expected console, csv or json", fmt);
    int console = !strcmp(fmt, "console");
    const char *out = cli_value(a, OPT_OUTPUT);
    if (out && console)
        return cli_usage_error(a->cmd, "%s: the console table goes to stdout; give --format csv or json to write "
                               "a file", a->as_written[OPT_OUTPUT]);
    if (a->n[OPT_CSV_SAFE] && strcmp(fmt, "csv"))
        return cli_usage_error(a->cmd, "--csv-safe: only CSV output has cells to guard (give --format csv)");
    int64_t max_rows = 100;
    if (a->n[OPT_MAX_ROWS] && !console)
        return cli_usage_error(a->cmd, "%s: only the console table has a row limit (--format %s writes every row)",
                               a->as_written[OPT_MAX_ROWS], fmt);
    if (a->n[OPT_MAX_ROWS] && (rc = cli_count(a, OPT_MAX_ROWS, &max_rows)) >= 0)
        return rc;
    if (out && !strcmp(out, "-"))
        out = NULL;
    cli_run run = cli_run_for(a);
    tb_error err;
    tb_error_clear(&err);
    char db[PATH_MAX];
    int reused = 0;
    tb_status st = cli_obtain_db(a, &run, db, sizeof db, &reused, &err);
    if (st == TB_OK) {
        tb_query_job q = {
            .run = {.db_path = db, .window = ro.window, .unit = ro.unit, .params = a->v[OPT_PARAM],
                    .n_params = a->n[OPT_PARAM], .max_steps = ro.max_steps, .note = cli_on_note, .ctx = &run},
            .sql = a->pos[0],
            .format = !strcmp(fmt, "csv") ? TB_OUT_CSV : !strcmp(fmt, "json") ? TB_OUT_JSON : TB_OUT_CONSOLE,
            .out_path = out,
            .out = stdout,
            .max_rows = (size_t)max_rows,
            .csv_safe = a->n[OPT_CSV_SAFE] > 0,
        };
        if (out)
            cli_make_parents(out);
        uint64_t rows = 0;
        st = tb_query_write(&q, &rows, &err);
    }
    if (st != TB_OK) {
        cli_print_error(&err);
        /* an error SQLite places in the statement: show where */
        if (!err.file[0] && err.offset >= 0)
            show_sql_place(a->pos[0], err.offset);
    }
    cli_progress_destroy(run.progress);
    return tb_exit_code(st);
}

static void print_param(const tb_param *p)
{
    printf("    %s (%s", p->name, p->type == TB_PARAM_INT ? "int" : p->type == TB_PARAM_REAL ? "real"
                                 : p->type == TB_PARAM_BOOL ? "bool" : "text");
    if (p->has_value) {
        if (p->type == TB_PARAM_INT)
            printf(", default %lld", (long long)p->i);
        else if (p->type == TB_PARAM_BOOL)
            printf(", default %s", p->i ? "true" : "false");
        else if (p->type == TB_PARAM_REAL)
            printf(", default %g", p->d);
        else
            printf(", default '%s'", p->s ? p->s : "");
    }
    printf(")%s%s\n", p->help ? ": " : "", p->help ? p->help : "");
}

int cli_cmd_reports(cli_args *a)
{
    const char *want = a->n_pos ? a->pos[0] : NULL;
    size_t n = 0;
    const tb_builtin *b = tb_builtins(&n);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        tb_error err;
        tb_error_clear(&err);
        tb_spec *sp = NULL;
        char name[128];
        snprintf(name, sizeof name, "builtin:%s.yaml", b[i].name);
        if (tb_spec_load_mem(name, b[i].text, strlen(b[i].text), &sp, NULL, NULL, &err) != TB_OK) {
            cli_print_error(&err);
            return TB_EXIT_FAILURE;
        }
        for (size_t k = 0; k < tb_spec_n_reports(sp); k++) {
            const tb_spec_report *rep = tb_spec_report_at(sp, k);
            if (want && strcmp(want, tb_report_id(rep)))
                continue;
            found = 1;
            if (!want) {
                printf("%-26s %s\n", tb_report_id(rep), tb_report_title(rep));
                continue;
            }
            printf("%s: %s\n", tb_report_id(rep), tb_report_title(rep));
            if (tb_report_description(rep))
                printf("\n  %s\n", tb_report_description(rep));
            printf("\n  spec file: reports/%s.yaml\n", b[i].name);
            printf("  scope: %s\n", tb_report_scope(rep) == TB_SCOPE_RANK      ? "rank (each rank alone)"
                                     : tb_report_scope(rep) == TB_SCOPE_CLUSTER ? "cluster (the cluster tables, made "
                                                                                  "from per-rank rows)"
                                                                                : "all (every rank at once)");
            if (tb_report_n_requires(rep)) {
                printf("  requires:");
                for (size_t q = 0; q < tb_report_n_requires(rep); q++)
                    printf(" %s", tb_report_require(rep, q));
                printf("\n");
            }
            if (tb_report_n_params(rep)) {
                printf("  params:\n");
                for (size_t q = 0; q < tb_report_n_params(rep); q++)
                    print_param(tb_report_param(rep, q));
            }
            printf("\n  run it: tracebook report -dir PATH --spec builtin:%s\n", tb_report_id(rep));
        }
        tb_spec_free(sp);
    }
    if (want && !found)
        return unknown_builtin("", want);
    return TB_EXIT_OK;
}

static void print_written(void *ctx, const char *path)
{
    (void)ctx;
    printf("%s\n", path);
}

/* --clear: after a successful export, the cached DB it loaded goes (a DB
 * that tracebook wrote, given as the input, is the user's and stays). */
static tb_status clear_cache(const cli_args *a, cli_run *run, const char *db, int reused, tb_error *err)
{
    if (!a->n[OPT_CLEAR])
        return TB_OK;
    if (reused == 2) {
        cli_on_note(run, "--clear: the input DB is kept (it is not a cache entry)");
        return TB_OK;
    }
    if (reused == 3)
        return TB_OK; /* under mpirun: the merged DB is the run's own, removed at its end */
    tb_status st = tb_cache_remove(db, err);
    if (st == TB_OK) {
        char msg[PATH_MAX + 32];
        snprintf(msg, sizeof msg, "--clear: removed %s", db);
        cli_on_note(run, msg);
    }
    return st;
}

int cli_cmd_export_timeline(cli_args *a)
{
    cli_run_opts ro;
    int rc = cli_parse_run_opts(a, &ro);
    if (rc >= 0)
        return rc;
    int64_t slice_mb = -1;
    if (a->n[OPT_SLICE_MB] && (rc = cli_count(a, OPT_SLICE_MB, &slice_mb)) >= 0)
        return rc;
    if (a->n[OPT_SLICE_MB] && a->n[OPT_SLICE_CONFIG])
        return cli_usage_error(a->cmd, "--slice-mb and --slice-config: give one of them");
    if (slice_mb > INT64_MAX / (1024 * 1024))
        return cli_usage_error(a->cmd, "--slice-mb %lld: too large", (long long)slice_mb);
    cli_run run = cli_run_for(a);
    tb_error err;
    tb_error_clear(&err);
    tb_spec *spec = NULL;
    tb_status st = TB_OK;
    int64_t slice_bytes = slice_mb > 0 ? slice_mb * 1024 * 1024 : 0;
    const char *spec_arg = cli_value(a, OPT_SPEC);
    if (spec_arg)
        st = cli_load_spec(spec_arg, &spec, &run, &err);
    const char *slice_config = cli_value(a, OPT_SLICE_CONFIG);
    if (st == TB_OK && slice_config)
        st = tb_timeline_slice_config(slice_config, &slice_bytes, &err);
    char db[PATH_MAX];
    int reused = 0;
    if (st == TB_OK)
        st = cli_obtain_db(a, &run, db, sizeof db, &reused, &err);
    if (st == TB_OK) {
        char dir[PATH_MAX];
        const char *output = cli_value(a, OPT_OUTPUT);
        if (output) {
            cli_make_dirs(output);
            snprintf(dir, sizeof dir, "%s", output);
        } else {
            /* as export db: beside the first input, else the current directory */
            cli_default_dir(a->v[OPT_DIR][0], dir, sizeof dir);
        }
        tb_timeline_options o = {.db_path = db, .out_dir = dir, .spec = spec, .window = ro.window,
                                 .slice_bytes = slice_bytes, .note = cli_on_note, .ctx = &run,
                                 .written = print_written};
        tb_timeline_result res;
        st = tb_timeline_write(&o, &res, &err);
        if (st == TB_OK && res.files == 0 && ro.window.set)
            st = tb_error_set(&err, TB_ERR_USAGE,
                              "no rank has the window (model %lld, iteration %lld): nothing exported",
                              (long long)ro.window.model_id, (long long)ro.window.iteration_id);
        else if (st == TB_OK && res.files == 0)
            cli_on_note(&run, "no rank to export");
        if (st == TB_OK && res.flows_unpaired) {
            char msg[96];
            snprintf(msg, sizeof msg, "%llu flows without both ends were not written",
                     (unsigned long long)res.flows_unpaired);
            cli_on_note(&run, msg);
        }
        if (st == TB_OK)
            st = clear_cache(a, &run, db, reused, &err);
    }
    if (st != TB_OK)
        cli_print_error(&err);
    tb_spec_free(spec);
    cli_progress_destroy(run.progress);
    return tb_exit_code(st);
}

int cli_cmd_export_summary(cli_args *a)
{
    cli_run_opts ro;
    int rc = cli_parse_run_opts(a, &ro);
    if (rc >= 0)
        return rc;
    unsigned formats = parse_formats(cli_value(a, OPT_FORMAT));
    if (formats == ~0u || (formats & TB_OUT_CONSOLE))
        return cli_usage_error(a->cmd, "--format '%s': expected csv, json or xlsx, comma-separated",
                               cli_value(a, OPT_FORMAT));
    if (a->n[OPT_MERGE] && !cli_value(a, OPT_OUTPUT))
        return cli_usage_error(a->cmd, "--merge needs -o DIR: the merged files go in one folder of their own");
    cli_run run = cli_run_for(a);
    tb_error err;
    tb_error_clear(&err);
    tb_spec *spec = NULL;
    tb_status st = TB_OK;
    const char *spec_arg = cli_value(a, OPT_SPEC);
    if (spec_arg)
        st = cli_load_spec(spec_arg, &spec, &run, &err);
    char db[PATH_MAX];
    int reused = 0;
    if (st == TB_OK)
        st = cli_obtain_db(a, &run, db, sizeof db, &reused, &err);
    if (st == TB_OK) {
        const char *output = cli_value(a, OPT_OUTPUT);
        if (output)
            cli_make_dirs(output);
        tb_summary_options o = {.db_path = db, .out_dir = output, .spec = spec, .window = ro.window,
                                .formats = formats, .no_clobber = a->n[OPT_NO_CLOBBER] > 0,
                                .merge = a->n[OPT_MERGE] > 0,
                                .inputs = a->v[OPT_DIR], .n_inputs = a->n[OPT_DIR],
                                .written = print_written, .note = cli_on_note, .ctx = &run};
        tb_summary_result res;
        st = tb_summary_write(&o, &res, &err);
        if (st == TB_OK && res.ranks == 0 && ro.window.set)
            st = tb_error_set(&err, TB_ERR_USAGE,
                              "no rank has the window (model %lld, iteration %lld): nothing exported",
                              (long long)ro.window.model_id, (long long)ro.window.iteration_id);
        else if (st == TB_OK && res.ranks == 0)
            cli_on_note(&run, "no rank to export");
        if (st == TB_OK)
            st = clear_cache(a, &run, db, reused, &err);
    }
    if (st != TB_OK)
        cli_print_error(&err);
    tb_spec_free(spec);
    cli_progress_destroy(run.progress);
    return tb_exit_code(st);
}
