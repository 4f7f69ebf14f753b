/* SPDX-License-Identifier: MIT */
/*
 * main.c - the `tracebook` command: argument parsing and printing only.
 *
 * Every real step is a call into the engine (tracebook.h); this file turns
 * the command line into options, engine errors into
 * `tracebook: error: FILE:LINE:COL: message` lines, and statuses into the
 * named exit codes listed by --help.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracebook/tracebook.h"

static const char usage_main[] =
    "usage: tracebook <command> [options]\n"
    "\n"
    "tracebook loads accelerator profile data (Ascend msprof/torch_npu timelines,\n"
    "PyTorch Kineto traces) into one msprof-compatible SQLite trace DB and runs\n"
    "report specs over it.\n"
    "\n"
    "commands:\n"
    "  export db    load the inputs and write the unified DB (msprof_<timestamp>.db)\n"
    "  report       run report specs over the inputs: csv, json, console tables\n"
    "  query        run one SQL statement over the inputs and print the result\n"
    "  reports      list the built-in reports\n"
    "  info         show what the inputs hold: sources, layers, devices, ranks,\n"
    "               steps, time span, rows per table, warnings\n"
    "  help CMD     show the options of a command\n"
    "\n"
    "options:\n"
    "  -h, --help      show this help\n"
    "  -V, --version   show the version\n"
    "\n"
    "exit codes:\n"
    "  0  success\n"
    "  1  internal error\n"
    "  2  usage error (bad command line)\n"
    "  3  malformed input, or an input cut short with --strict\n"
    "  4  a file could not be read or written\n"
    "  5  SQLite error\n"
    "  6  no usable input found\n";

static const char usage_export_db[] =
    "usage: tracebook export db -dir PATH [-dir PATH ...] [-o FILE|DIR] [options]\n"
    "\n"
    "Loads the inputs into the unified trace DB. PATH is a file (a timeline or\n"
    "Kineto trace .json[.gz], an msprof-compatible .db, a torch_npu summary CSV, a\n"
    "topsprof listing) or a directory searched for them. Files under one rank's\n"
    "directory (PROF_*, *_ascend_pt, ...) form one rank, other files one rank each;\n"
    "within a rank a DB wins over a timeline, a timeline over CSVs.\n"
    "\n"
    "options:\n"
    "  -dir, --dir PATH          an input (repeat for several ranks)\n"
    "  -o, --output FILE|DIR     the DB to write; a directory gets the default name.\n"
    "                            Default: msprof_<UTC YYYYMMDDhhmmss>.db beside the\n"
    "                            first input (the current directory when that cannot\n"
    "                            be written), the timestamp taken from the data\n"
    "  --strict                  an input cut short is an error (default: warning)\n"
    "  --keep-python-functions   keep Kineto python_function events (in TB_EVENT)\n"
    "  --timing                  print the time of each loading phase on stderr\n"
    "  -q, --quiet               no progress line, no warnings on stderr\n";

static const char usage_info[] =
    "usage: tracebook info -dir PATH [-dir PATH ...] [options]\n"
    "\n"
    "Loads the inputs (or reads PATH when it is a .db that tracebook wrote) and\n"
    "prints what was found: sources, ranks and devices, layers, time span,\n"
    "steps, events per destination table, rows per table and warnings.\n"
    "The DB is kept under $XDG_CACHE_HOME/tracebook/ (~/.cache/tracebook/) and\n"
    "reused while the inputs' files, sizes and modification times are unchanged;\n"
    "the first line of the output names it.\n"
    "\n"
    "options:\n"
    "  -dir, --dir PATH          an input (repeat for several ranks)\n"
    "  --rebuild                 load again even when the cached DB is current\n"
    "  --strict                  an input cut short is an error\n"
    "  --keep-python-functions   keep Kineto python_function events\n"
    "  --timing                  accepted; the load phases are shown by export db\n"
    "  -q, --quiet               no progress line\n";

static const char usage_report[] =
    "usage: tracebook report -dir PATH [-dir PATH ...] --spec FILE [--spec FILE ...] [options]\n"
    "\n"
    "Runs report specs (YAML or JSON; docs/spec.md) over the inputs' unified DB and\n"
    "writes each report's outputs: DIR/<report id>[_<iteration label>].csv / .json,\n"
    "console tables on stdout, and DIR/tracebook_run.json (inputs, window, unit,\n"
    "specs, files). An msprof reports_sample_config.json is a valid spec. PATH is\n"
    "what export db reads, or a DB that tracebook wrote; the DB is cached as for\n"
    "info. Built-in reports: `tracebook reports`; `--spec builtin:NAME` runs one.\n"
    "\n"
    "options:\n"
    "  -dir, --dir PATH          an input (repeat for several ranks)\n"
    "  --spec FILE               a spec to run (repeat; run in order)\n"
    "  -o, --output DIR          where files go (created; default: the current directory)\n"
    "  --format LIST             outputs for every report, replacing the specs':\n"
    "                            comma-separated csv, json, console\n"
    "  --timeunit ns|us|ms|s     unit of typed time columns (default us, as msprof)\n"
    "  --param NAME=VALUE        set a parameter (REPORT.NAME=VALUE for one report)\n"
    "  --report ID               run only this report (repeat)\n"
    "  --model-id M              window: model M (4294967295 = step mode)\n"
    "  --iteration-id I          window: from iteration (or step) I\n"
    "  --iteration-count N       window: N iterations (default 1)\n"
    "  --max-steps N             SQLite step budget per report (default 5000000000)\n"
    "  --rebuild                 load the inputs again even when the cached DB is current\n"
    "  --strict                  an input cut short is an error\n"
    "  -q, --quiet               no progress, notes or list of files written\n";

static const char usage_query[] =
    "usage: tracebook query -dir PATH [-dir PATH ...] [options] SQL\n"
    "\n"
    "Runs one SQL statement over the inputs' unified DB in the report sandbox\n"
    "(read-only, step budget) and prints the result as a table. Column aliases\n"
    "may carry a type (\"Total:dur_ns\") converted by --timeunit.\n"
    "\n"
    "options:\n"
    "  -dir, --dir PATH          an input (repeat for several ranks)\n"
    "  --format console|csv|json output format (default console)\n"
    "  -o, --output FILE         write to FILE instead of stdout (csv, json)\n"
    "  --timeunit ns|us|ms|s     unit of typed time columns (default us)\n"
    "  --param NAME=VALUE        bind :NAME (an integer or real when VALUE is one, else text)\n"
    "  --model-id M, --iteration-id I, --iteration-count N   a window, as for report\n"
    "  --max-steps N             SQLite step budget (default 5000000000)\n"
    "  --max-rows N              console: rows printed (default 100; 0 = all)\n"
    "  --rebuild, --strict, -q   as for report\n";

static const char usage_reports[] =
    "usage: tracebook reports [NAME]\n"
    "\n"
    "Lists the built-in reports (one line each), or shows one report's help:\n"
    "title, description, required tables, parameters and its spec file.\n";

typedef struct cli {
    const char **inputs;
    size_t n_inputs;
    const char *output;
    int strict, keep_python, quiet, timing, rebuild;
    int progress_shown;
} cli;

static void print_error(const tb_error *e)
{
    if (e->file[0] && e->line > 0 && e->column > 0)
        fprintf(stderr, "tracebook: error: %s:%ld:%ld: %s\n", e->file, e->line, e->column, e->message);
    else if (e->file[0] && e->line > 0)
        fprintf(stderr, "tracebook: error: %s:%ld: %s\n", e->file, e->line, e->message);
    else if (e->file[0] && e->offset >= 0)
        fprintf(stderr, "tracebook: error: %s: byte %lld: %s\n", e->file, (long long)e->offset, e->message);
    else if (e->file[0])
        fprintf(stderr, "tracebook: error: %s: %s\n", e->file, e->message);
    else
        fprintf(stderr, "tracebook: error: %s\n", e->message);
}

static int usage_error(const char *usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "tracebook: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n%s", usage);
    return TB_EXIT_USAGE;
}

static void on_warn(void *ctx, const char *msg)
{
    cli *c = ctx;
    if (c->progress_shown) {
        fputs("\r\033[K", stderr);
        c->progress_shown = 0;
    }
    if (!c->quiet)
        fprintf(stderr, "tracebook: warning: %s\n", msg);
}

static void on_progress(void *ctx, const char *file, uint64_t done, uint64_t total)
{
    cli *c = ctx;
    if (c->quiet)
        return;
    if (total)
        fprintf(stderr, "\r\033[Kloading %s: %3d%% (%llu MB)", file, (int)(done * 100 / total),
                (unsigned long long)(done >> 20));
    else
        fprintf(stderr, "\r\033[Kloading %s: %llu MB", file, (unsigned long long)(done >> 20));
    c->progress_shown = 1;
}

/* Parses the options shared by export db and info. Returns -1 when fine, else an exit code. */
static int parse_opts(cli *c, int argc, char **argv, const char *usage, int allow_output)
{
    c->inputs = calloc((size_t)argc + 1, sizeof *c->inputs);
    if (!c->inputs)
        return TB_EXIT_FAILURE;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return TB_EXIT_OK;
        } else if (!strcmp(a, "-dir") || !strcmp(a, "--dir")) {
            if (i + 1 >= argc)
                return usage_error(usage, "option '%s' needs a path", a);
            c->inputs[c->n_inputs++] = argv[++i];
        } else if (!strncmp(a, "--dir=", 6) || !strncmp(a, "-dir=", 5)) {
            c->inputs[c->n_inputs++] = strchr(a, '=') + 1;
        } else if (allow_output && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
            if (i + 1 >= argc)
                return usage_error(usage, "option '%s' needs a path", a);
            c->output = argv[++i];
        } else if (allow_output && !strncmp(a, "--output=", 9)) {
            c->output = a + 9;
        } else if (!strcmp(a, "--strict")) {
            c->strict = 1;
        } else if (!strcmp(a, "--keep-python-functions")) {
            c->keep_python = 1;
        } else if (!strcmp(a, "--timing")) {
            c->timing = 1;
        } else if (!allow_output && !strcmp(a, "--rebuild")) {
            c->rebuild = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            c->quiet = 1;
        } else {
            return usage_error(usage, "unknown option '%s'", a);
        }
    }
    if (c->n_inputs == 0)
        return usage_error(usage, "%s", "no input: give -dir PATH");
    if (!isatty(STDERR_FILENO))
        c->quiet = c->quiet ? 1 : 0;
    return -1;
}

static tb_status run_load(cli *c, const char *out, tb_error *err)
{
    tb_load_options o = {.inputs = c->inputs, .n_inputs = c->n_inputs, .output = out, .strict = c->strict,
                         .keep_python_functions = c->keep_python, .warn = on_warn,
                         .progress = isatty(STDERR_FILENO) ? on_progress : NULL, .ctx = c};
    tb_load_result r;
    tb_status st = tb_load(&o, &r, err);
    if (c->progress_shown) {
        fputs("\r\033[K", stderr);
        c->progress_shown = 0;
    }
    if (st == TB_OK && c->timing)
        fprintf(stderr, "tracebook: timing: %llu events: read %.3f s, post-process %.3f s, indexes %.3f s\n",
                (unsigned long long)r.events, r.seconds_read, r.seconds_post, r.seconds_index);
    return st;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The default output directory: the first input's directory, else the current one. */
static void default_dir(const char *input, char *out, size_t n)
{
    if (is_dir(input)) {
        snprintf(out, n, "%s", input);
    } else {
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s", input);
        snprintf(out, n, "%s", dirname(tmp));
    }
    if (access(out, W_OK | X_OK) != 0)
        snprintf(out, n, ".");
}

static int cmd_export_db(int argc, char **argv)
{
    cli c = {0};
    int rc = parse_opts(&c, argc, argv, usage_export_db, 1);
    if (rc >= 0) {
        free(c.inputs);
        return rc;
    }
    tb_error err;
    tb_error_clear(&err);
    char dir[PATH_MAX], final[PATH_MAX + 128], pending[PATH_MAX + 64];
    int named = c.output && !is_dir(c.output);
    if (named) {
        snprintf(final, sizeof final, "%s", c.output);
        rc = tb_exit_code(run_load(&c, final, &err));
    } else {
        if (c.output) {
            snprintf(dir, sizeof dir, "%s", c.output);
            size_t n = strlen(dir);
            while (n > 1 && dir[n - 1] == '/')
                dir[--n] = 0;
        } else {
            default_dir(c.inputs[0], dir, sizeof dir);
        }
        snprintf(pending, sizeof pending, "%s/.tracebook-pending-%ld.db", dir, (long)getpid());
        tb_temp_register(pending);
        tb_status st = run_load(&c, pending, &err);
        if (st == TB_OK) {
            char name[96];
            st = tb_db_default_name(pending, name, sizeof name, &err);
            snprintf(final, sizeof final, "%s/%s", dir, name);
            if (st == TB_OK && rename(pending, final) != 0)
                st = tb_error_at(&err, TB_ERR_IO, final, 0, 0, -1, "cannot write: %s", strerror(errno));
            if (st != TB_OK)
                unlink(pending);
        }
        tb_temp_unregister(pending);
        /* a failure to create the pending file is the directory's */
        if (st != TB_OK && strncmp(err.file, pending, strlen(pending)) == 0) {
            size_t n = strlen(dir) < sizeof err.file - 1 ? strlen(dir) : sizeof err.file - 1;
            memcpy(err.file, dir, n);
            err.file[n] = 0;
        }
        rc = tb_exit_code(st);
    }
    if (rc != TB_EXIT_OK)
        print_error(&err);
    else
        printf("%s\n", final);
    free(c.inputs);
    return rc;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int cmd_info(int argc, char **argv)
{
    cli c = {0};
    int rc = parse_opts(&c, argc, argv, usage_info, 0);
    if (rc >= 0) {
        free(c.inputs);
        return rc;
    }
    tb_error err;
    tb_error_clear(&err);
    tb_status st;
    if (c.n_inputs == 1 && ends_with(c.inputs[0], ".db") && tb_db_is_own(c.inputs[0])) {
        st = tb_info_write(c.inputs[0], c.inputs[0], stdout, &err);
    } else {
        /* the DB is kept in the cache and reused while the inputs are unchanged */
        char path[PATH_MAX];
        int reused = 0;
        tb_load_options o = {.inputs = c.inputs, .n_inputs = c.n_inputs, .strict = c.strict,
                             .keep_python_functions = c.keep_python, .warn = on_warn,
                             .progress = isatty(STDERR_FILENO) ? on_progress : NULL, .ctx = &c};
        st = tb_cache_load(&o, c.rebuild, path, sizeof path, &reused, &err);
        if (c.progress_shown) {
            fputs("\r\033[K", stderr);
            c.progress_shown = 0;
        }
        if (st == TB_OK) {
            char title[2 * PATH_MAX];
            size_t n = 0;
            title[0] = 0;
            for (size_t i = 0; i < c.n_inputs && n < sizeof title; i++)
                n += (size_t)snprintf(title + n, sizeof title - n, "%s%s", i ? " " : "", c.inputs[i]);
            if (n < sizeof title)
                snprintf(title + n, sizeof title - n, " (DB %s, %s)", path,
                         reused ? "reused: inputs unchanged" : "loaded now");
            st = tb_info_write(path, title, stdout, &err);
        }
    }
    if (st != TB_OK)
        print_error(&err);
    free(c.inputs);
    return tb_exit_code(st);
}

/* --- report, query, reports ------------------------------------------------ */

typedef struct rcli {
    cli c;
    const char **specs;
    size_t n_specs;
    const char **params;
    size_t n_params;
    const char **only;
    size_t n_only;
    const char *format;
    tb_time_unit unit;
    tb_window window;
    int has_model, has_iter, has_count;
    int64_t max_steps;
    int64_t max_rows;
    const char *sql;
} rcli;

static int parse_int64(const char *s, int64_t *v)
{
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *v = x;
    return 0;
}

/* Parses report/query options. Returns -1 when fine, else an exit code. */
static int parse_report_opts(rcli *r, int argc, char **argv, const char *usage, int is_query)
{
    size_t cap = (size_t)argc + 1;
    r->c.inputs = calloc(cap, sizeof *r->c.inputs);
    r->specs = calloc(cap, sizeof *r->specs);
    r->params = calloc(cap, sizeof *r->params);
    r->only = calloc(cap, sizeof *r->only);
    r->unit = TB_UNIT_US;
    r->max_rows = 100;
    if (!r->c.inputs || !r->specs || !r->params || !r->only)
        return TB_EXIT_FAILURE;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDS_VALUE                                                          \
    do {                                                                     \
        if (!v)                                                              \
            return usage_error(usage, "option '%s' needs a value", a);       \
        i++;                                                                 \
    } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return TB_EXIT_OK;
        } else if (!strcmp(a, "-dir") || !strcmp(a, "--dir")) {
            NEEDS_VALUE;
            r->c.inputs[r->c.n_inputs++] = v;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            NEEDS_VALUE;
            r->c.output = v;
        } else if (!is_query && !strcmp(a, "--spec")) {
            NEEDS_VALUE;
            r->specs[r->n_specs++] = v;
        } else if (!is_query && !strcmp(a, "--report")) {
            NEEDS_VALUE;
            r->only[r->n_only++] = v;
        } else if (!strcmp(a, "--param")) {
            NEEDS_VALUE;
            r->params[r->n_params++] = v;
        } else if (!strcmp(a, "--format")) {
            NEEDS_VALUE;
            r->format = v;
        } else if (!strcmp(a, "--timeunit")) {
            NEEDS_VALUE;
            if (!strcmp(v, "ns")) r->unit = TB_UNIT_NS;
            else if (!strcmp(v, "us")) r->unit = TB_UNIT_US;
            else if (!strcmp(v, "ms")) r->unit = TB_UNIT_MS;
            else if (!strcmp(v, "s")) r->unit = TB_UNIT_S;
            else return usage_error(usage, "--timeunit '%s': expected ns, us, ms or s", v);
        } else if (!strcmp(a, "--model-id") || !strcmp(a, "--iteration-id") || !strcmp(a, "--iteration-count") ||
                   !strcmp(a, "--max-steps") || (is_query && !strcmp(a, "--max-rows"))) {
            NEEDS_VALUE;
            int64_t x;
            if (parse_int64(v, &x) != 0 || x < 0) {
                fprintf(stderr, "tracebook: error: %s '%s': expected a non-negative integer\n\n%s", a, v, usage);
                return TB_EXIT_USAGE;
            }
            if (!strcmp(a, "--model-id")) { r->window.model_id = x; r->has_model = 1; }
            else if (!strcmp(a, "--iteration-id")) { r->window.iteration_id = x; r->has_iter = 1; }
            else if (!strcmp(a, "--iteration-count")) { r->window.iteration_count = x; r->has_count = 1; }
            else if (!strcmp(a, "--max-steps")) r->max_steps = x;
            else r->max_rows = x;
        } else if (!strcmp(a, "--rebuild")) {
            r->c.rebuild = 1;
        } else if (!strcmp(a, "--strict")) {
            r->c.strict = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            r->c.quiet = 1;
        } else if (is_query && a[0] != '-' && !r->sql) {
            r->sql = a;
        } else {
            return usage_error(usage, "unknown option '%s'", a);
        }
#undef NEEDS_VALUE
    }
    if (r->c.n_inputs == 0)
        return usage_error(usage, "%s", "no input: give -dir PATH");
    if (!is_query && r->n_specs == 0)
        return usage_error(usage, "%s", "no spec: give --spec FILE (built-in reports: tracebook reports)");
    if (is_query && !r->sql)
        return usage_error(usage, "%s", "no SQL statement given");
    if (r->has_iter && !r->has_model)
        return usage_error(usage, "%s", "--iteration-id needs --model-id (4294967295 for step mode)");
    if (r->has_model && !r->has_iter)
        return usage_error(usage, "%s", "--model-id needs --iteration-id");
    if (r->has_count && !r->has_iter)
        return usage_error(usage, "%s", "--iteration-count needs --model-id and --iteration-id");
    if (r->has_count && r->window.iteration_count < 1)
        return usage_error(usage, "%s", "--iteration-count must be at least 1");
    r->window.set = r->has_model;
    if (!r->has_count)
        r->window.iteration_count = 1;
    return -1;
}

static void rcli_free(rcli *r)
{
    free(r->c.inputs);
    free(r->specs);
    free(r->params);
    free(r->only);
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

/* The DB for the inputs: a DB tracebook wrote as it is, else the cached load. */
static tb_status obtain_db(cli *c, char *path, size_t n, tb_error *err)
{
    if (c->n_inputs == 1 && ends_with(c->inputs[0], ".db") && tb_db_is_own(c->inputs[0])) {
        snprintf(path, n, "%s", c->inputs[0]);
        return TB_OK;
    }
    int reused = 0;
    tb_load_options o = {.inputs = c->inputs, .n_inputs = c->n_inputs, .strict = c->strict, .warn = on_warn,
                         .progress = isatty(STDERR_FILENO) ? on_progress : NULL, .ctx = c};
    tb_status st = tb_cache_load(&o, c->rebuild, path, n, &reused, err);
    if (c->progress_shown) {
        fputs("\r\033[K", stderr);
        c->progress_shown = 0;
    }
    return st;
}

static void on_note(void *ctx, const char *msg)
{
    cli *c = ctx;
    if (!c->quiet)
        fprintf(stderr, "tracebook: note: %s\n", msg);
}

static void on_written(void *ctx, const char *path)
{
    cli *c = ctx;
    if (!c->quiet)
        fprintf(stderr, "tracebook: wrote %s\n", path);
}

static void free_specs(tb_spec **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tb_spec_free(v[i]);
    free(v);
}

static tb_status load_spec(const char *arg, tb_spec **out, cli *c, tb_error *err)
{
    if (!strncmp(arg, "builtin:", 8)) {
        char text[512];
        int k = snprintf(text, sizeof text, "tracebook: 1\nreports:\n  - use: \"%s\"\n", arg + 8);
        if (k < 0 || (size_t)k >= sizeof text || strchr(arg + 8, '"') || strchr(arg + 8, '\\'))
            return tb_error_set(err, TB_ERR_USAGE, "--spec '%s': not a built-in report name", arg);
        return tb_spec_load_mem(arg, text, (size_t)k, out, on_warn, c, err);
    }
    return tb_spec_load(arg, out, on_warn, c, err);
}

static int cmd_report(int argc, char **argv)
{
    rcli r = {0};
    int rc = parse_report_opts(&r, argc, argv, usage_report, 0);
    if (rc >= 0) {
        rcli_free(&r);
        return rc;
    }
    unsigned formats = parse_formats(r.format);
    if (formats == ~0u) {
        rc = usage_error(usage_report, "--format '%s': expected a comma-separated list of csv, json, console", r.format);
        rcli_free(&r);
        return rc;
    }
    tb_error err;
    tb_error_clear(&err);
    tb_spec **specs = calloc(r.n_specs, sizeof *specs);
    tb_status st = specs ? TB_OK : tb_error_set(&err, TB_ERR_NOMEM, "out of memory");
    size_t loaded = 0;
    /* specs first: a broken spec fails before any loading */
    for (; st == TB_OK && loaded < r.n_specs; loaded++)
        st = load_spec(r.specs[loaded], &specs[loaded], &r.c, &err);
    char db[PATH_MAX];
    if (st == TB_OK)
        st = obtain_db(&r.c, db, sizeof db, &err);
    if (st == TB_OK) {
        tb_report_job job = {
            .run = {.db_path = db, .specs = (const tb_spec *const *)specs, .n_specs = r.n_specs,
                    .window = r.window, .unit = r.unit, .params = r.params, .n_params = r.n_params,
                    .formats = formats, .max_steps = r.max_steps, .only = r.n_only ? r.only : NULL,
                    .n_only = r.n_only, .note = on_note, .ctx = &r.c},
            .out_dir = r.c.output ? r.c.output : ".",
            .console = stdout,
            .inputs = r.c.inputs,
            .n_inputs = r.c.n_inputs,
            .written = on_written,
        };
        tb_run_result res;
        st = tb_report_write(&job, &res, &err);
    }
    if (st != TB_OK)
        print_error(&err);
    free_specs(specs, loaded);
    rcli_free(&r);
    return tb_exit_code(st);
}

static int cmd_query(int argc, char **argv)
{
    rcli r = {0};
    int rc = parse_report_opts(&r, argc, argv, usage_query, 1);
    if (rc >= 0) {
        rcli_free(&r);
        return rc;
    }
    const char *fmt = r.format ? r.format : "console";
    if (strcmp(fmt, "console") && strcmp(fmt, "csv") && strcmp(fmt, "json")) {
        rc = usage_error(usage_query, "--format '%s': expected console, csv or json", fmt);
        rcli_free(&r);
        return rc;
    }
    tb_error err;
    tb_error_clear(&err);
    char db[PATH_MAX];
    tb_status st = obtain_db(&r.c, db, sizeof db, &err);
    if (st == TB_OK) {
        tb_query_job q = {
            .run = {.db_path = db, .window = r.window, .unit = r.unit, .params = r.params,
                    .n_params = r.n_params, .max_steps = r.max_steps, .note = on_note, .ctx = &r.c},
            .sql = r.sql,
            .format = !strcmp(fmt, "csv") ? TB_OUT_CSV : !strcmp(fmt, "json") ? TB_OUT_JSON : TB_OUT_CONSOLE,
            .out_path = r.c.output,
            .out = stdout,
            .max_rows = (size_t)r.max_rows,
        };
        uint64_t rows = 0;
        st = tb_query_write(&q, &rows, &err);
    }
    if (st != TB_OK)
        print_error(&err);
    rcli_free(&r);
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

/* ---- export timeline ---------------------------------------------------------
 * Kept in one function of its own so that it moves into the command table
 * as it is: parse the options, load the spec and the inputs' DB, call
 * tb_timeline_write(). */

static const char usage_export_timeline[] =
    "usage: tracebook export timeline -dir PATH [-dir PATH ...] [-o DIR] [options]\n"
    "\n"
    "Writes the inputs as a Chrome-trace timeline in msprof's layout (open it in\n"
    "Perfetto or chrome://tracing): DIR/msprof_<timestamp>.json, one file per rank\n"
    "(msprof_<timestamp>_rank<R>.json) when there are several.\n"
    "\n"
    "options:\n"
    "  -dir, --dir PATH          an input (repeat for several ranks)\n"
    "  -o, --output DIR          where files go (created; default: beside the first\n"
    "                            input, else the current directory)\n"
    "  --spec FILE, -reports FILE  a spec or an msprof reports_sample_config.json:\n"
    "                            its json_process picks the layers (default: all)\n"
    "  --model-id M, --iteration-id I, --iteration-count N   a window, as for report\n"
    "  --slice-mb N              cut the timeline into slices of at most N MB\n"
    "  --slice-config FILE       slicing as an msprof_slice.json says\n"
    "  --rebuild, --strict, -q   as for report\n";

/* Each file written, one a line on stdout (as export db prints its DB). */
static void print_path(void *ctx, const char *path)
{
    (void)ctx;
    printf("%s\n", path);
}

static int cmd_export_timeline(int argc, char **argv)
{
    cli c = {0};
    const char *spec_path = NULL, *slice_config = NULL;
    tb_window window = {.iteration_count = 1};
    int has_model = 0, has_iter = 0;
    int64_t slice_mb = -1;
    c.inputs = calloc((size_t)argc + 1, sizeof *c.inputs);
    if (!c.inputs)
        return TB_EXIT_FAILURE;
    int rc = -1;
    for (int i = 0; i < argc && rc < 0; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t x = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_export_timeline, stdout);
            rc = TB_EXIT_OK;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            c.quiet = 1;
        } else if (!strcmp(a, "--rebuild")) {
            c.rebuild = 1;
        } else if (!strcmp(a, "--strict")) {
            c.strict = 1;
        } else if (!v) {
            rc = usage_error(usage_export_timeline, "unknown option or missing value '%s'", a);
        } else if (!strcmp(a, "-dir") || !strcmp(a, "--dir")) {
            c.inputs[c.n_inputs++] = argv[++i];
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            c.output = argv[++i];
        } else if (!strcmp(a, "--spec") || !strcmp(a, "-reports") || !strcmp(a, "--reports")) {
            spec_path = argv[++i];
        } else if (!strcmp(a, "--slice-config")) {
            slice_config = argv[++i];
        } else if (!strcmp(a, "--model-id") || !strcmp(a, "--iteration-id") || !strcmp(a, "--iteration-count") ||
                   !strcmp(a, "--slice-mb")) {
            i++;
            if (parse_int64(v, &x) != 0 || x < 0) {
                fprintf(stderr, "tracebook: error: %s '%s': expected a non-negative integer\n\n%s", a, v,
                        usage_export_timeline);
                rc = TB_EXIT_USAGE;
            } else if (!strcmp(a, "--model-id")) {
                window.model_id = x;
                has_model = 1;
            } else if (!strcmp(a, "--iteration-id")) {
                window.iteration_id = x;
                has_iter = 1;
            } else if (!strcmp(a, "--iteration-count")) {
                window.iteration_count = x;
            } else {
                slice_mb = x;
            }
        } else {
            rc = usage_error(usage_export_timeline, "unknown option '%s'", a);
        }
    }
    if (rc < 0 && c.n_inputs == 0)
        rc = usage_error(usage_export_timeline, "%s", "no input: give -dir PATH");
    if (rc < 0 && has_model != has_iter)
        rc = usage_error(usage_export_timeline, "%s", "--model-id and --iteration-id go together");
    if (rc >= 0) {
        free(c.inputs);
        return rc;
    }
    window.set = has_model;
    tb_error err;
    tb_error_clear(&err);
    tb_spec *spec = NULL;
    tb_status st = TB_OK;
    int64_t slice_bytes = slice_mb > 0 ? slice_mb * 1024 * 1024 : 0;
    if (spec_path)
        st = tb_spec_load(spec_path, &spec, on_warn, &c, &err);
    if (st == TB_OK && slice_config && slice_mb < 0)
        st = tb_timeline_slice_config(slice_config, &slice_bytes, &err);
    char db[PATH_MAX];
    if (st == TB_OK)
        st = obtain_db(&c, db, sizeof db, &err);
    if (st == TB_OK) {
        char dir[PATH_MAX];
        /* as export db: beside the first input, else the current directory */
        if (c.output)
            snprintf(dir, sizeof dir, "%s", c.output);
        else
            default_dir(c.inputs[0], dir, sizeof dir);
        tb_timeline_options o = {.db_path = db, .out_dir = dir, .spec = spec,
                                 .window = window, .slice_bytes = slice_bytes, .note = on_note, .ctx = &c,
                                 .written = print_path};
        tb_timeline_result res;
        st = tb_timeline_write(&o, &res, &err);
        if (st == TB_OK && res.files == 0 && !c.quiet)
            fprintf(stderr, "tracebook: note: no rank to export\n");
        if (st == TB_OK && res.flows_unpaired && !c.quiet)
            fprintf(stderr, "tracebook: note: %llu flows without both ends were not written\n",
                    (unsigned long long)res.flows_unpaired);
    }
    if (st != TB_OK)
        print_error(&err);
    tb_spec_free(spec);
    free(c.inputs);
    return tb_exit_code(st);
}

static int cmd_reports(int argc, char **argv)
{
    if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        fputs(usage_reports, stdout);
        return TB_EXIT_OK;
    }
    if (argc > 1)
        return usage_error(usage_reports, "unexpected argument '%s'", argv[1]);
    const char *want = argc ? argv[0] : NULL;
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
            print_error(&err);
            return TB_EXIT_FAILURE;
        }
        for (size_t k = 0; k < sp->n_reports; k++) {
            const tb_spec_report *rep = &sp->reports[k];
            if (want && strcmp(want, rep->id))
                continue;
            found = 1;
            if (!want) {
                printf("%-26s %s\n", rep->id, rep->title ? rep->title : "");
                continue;
            }
            printf("%s: %s\n", rep->id, rep->title ? rep->title : "");
            if (rep->description)
                printf("\n  %s\n", rep->description);
            printf("\n  spec file: reports/%s.yaml\n", b[i].name);
            if (rep->n_requires) {
                printf("  requires:");
                for (size_t q = 0; q < rep->n_requires; q++)
                    printf(" %s", rep->requires[q]);
                printf("\n");
            }
            if (rep->n_params) {
                printf("  params:\n");
                for (size_t q = 0; q < rep->n_params; q++)
                    print_param(&rep->params[q]);
            }
            printf("\n  run it: tracebook report -dir PATH --spec builtin:%s\n", rep->id);
        }
        tb_spec_free(sp);
    }
    if (want && !found) {
        fprintf(stderr, "tracebook: error: no built-in report '%s' (tracebook reports lists them)\n", want);
        return TB_EXIT_USAGE;
    }
    return TB_EXIT_OK;
}

/* Removes temporary outputs, then dies of the same signal. */
static void on_signal(int sig)
{
    /* errno belongs to the code the signal interrupted (it dies here anyway,
     * but a sanitizer rightly flags a handler that changes it) */
    int saved = errno;
    tb_temp_cleanup();
    errno = saved;
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    if (argc < 2) {
        fputs(usage_main, stderr);
        return TB_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        fputs(usage_main, stdout);
        return TB_EXIT_OK;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("tracebook %s\n", tb_version());
        return TB_EXIT_OK;
    }
    if (!strcmp(cmd, "help")) {
        if (argc < 3) {
            fputs(usage_main, stdout);
            return TB_EXIT_OK;
        }
        if (!strcmp(argv[2], "info")) {
            fputs(usage_info, stdout);
            return TB_EXIT_OK;
        }
        if (!strcmp(argv[2], "export")) {
            fputs(usage_export_db, stdout);
            return TB_EXIT_OK;
        }
        if (!strcmp(argv[2], "report")) {
            fputs(usage_report, stdout);
            return TB_EXIT_OK;
        }
        if (!strcmp(argv[2], "query")) {
            fputs(usage_query, stdout);
            return TB_EXIT_OK;
        }
        if (!strcmp(argv[2], "reports")) {
            fputs(usage_reports, stdout);
            return TB_EXIT_OK;
        }
        return usage_error(usage_main, "unknown command '%s'", argv[2]);
    }
    if (!strcmp(cmd, "export")) {
        if (argc < 3 || !strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")) {
            fputs(usage_export_db, argc < 3 ? stderr : stdout);
            return argc < 3 ? TB_EXIT_USAGE : TB_EXIT_OK;
        }
        if (!strcmp(argv[2], "db"))
            return cmd_export_db(argc - 3, argv + 3);
        if (!strcmp(argv[2], "timeline"))
            return cmd_export_timeline(argc - 3, argv + 3);
        return usage_error(usage_export_db, "unknown export type '%s' (this version exports: db, timeline)", argv[2]);
    }
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 2, argv + 2);
    if (!strcmp(cmd, "query"))
        return cmd_query(argc - 2, argv + 2);
    if (!strcmp(cmd, "reports"))
        return cmd_reports(argc - 2, argv + 2);
    return usage_error(usage_main, "unknown command '%s'", cmd);
}
