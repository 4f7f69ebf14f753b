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
    "PyTorch Kineto traces) into one msprof-compatible SQLite trace DB.\n"
    "\n"
    "commands:\n"
    "  export db    load the inputs and write the unified DB (msprof_<timestamp>.db)\n"
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

/* Removes temporary outputs, then dies of the same signal. */
static void on_signal(int sig)
{
    tb_temp_cleanup();
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
        return usage_error(usage_main, "unknown command '%s'", argv[2]);
    }
    if (!strcmp(cmd, "export")) {
        if (argc < 3 || !strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")) {
            fputs(usage_export_db, argc < 3 ? stderr : stdout);
            return argc < 3 ? TB_EXIT_USAGE : TB_EXIT_OK;
        }
        if (!strcmp(argv[2], "db"))
            return cmd_export_db(argc - 3, argv + 3);
        return usage_error(usage_export_db, "unknown export type '%s' (this version exports: db)", argv[2]);
    }
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 2, argv + 2);
    return usage_error(usage_main, "unknown command '%s'", cmd);
}
