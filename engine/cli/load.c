/* SPDX-License-Identifier: MIT */
/*
 * load.c - `tracebook export db` and `tracebook info`: loading the inputs.
 *
 * export db writes the unified DB where -o says (a file, a directory that
 * gets the default name, or `-` for stdout) or beside the first input;
 * info summarises the cached DB of the inputs. Both report warnings and the
 * progress line through the engine's callbacks (tb_load_options), and
 * cli_obtain_db() is the cached load that report and query share.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

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

void cli_run_finish(cli_run *r)
{
    for (size_t i = 0; i < r->n_kept; i++)
        free(r->kept[i]);
    free(r->kept);
    r->kept = NULL;
    r->n_kept = 0;
}

int cli_fail_on_warning(const cli_args *a, uint64_t warnings, const char *what, int rc)
{
    if (rc != TB_EXIT_OK || !a->n[OPT_FAIL_ON_WARNING] || warnings == 0)
        return rc;
    fprintf(stderr, "tracebook: error: %s gave %llu warning%s (--fail-on-warning): the outputs are written but"
                    " degraded\n", what, (unsigned long long)warnings, warnings == 1 ? "" : "s");
    return TB_EXIT_WARNING;
}

void cli_on_note(void *ctx, const char *msg)
{
    cli_run *r = ctx;
    cli_progress_clear(r->progress);
    if (!r->quiet)
        fprintf(stderr, "tracebook: note: %s\n", msg);
}

/* Creates the directories of path up to (not including) its last component,
 * or all of it when whole. Failures are left for the write that follows to
 * report, with the path the user gave. */
static void make_dirs(const char *path, int whole)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && !(whole && buf[i] == 0))
            continue;
        if (buf[i - 1] == '/')
            continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return;
        buf[i] = c;
    }
}

void cli_make_parents(const char *path)
{
    make_dirs(path, 0);
}

void cli_make_dirs(const char *path)
{
    make_dirs(path, 1);
}

cli_run cli_run_for(const cli_args *a)
{
    int quiet = a->n[OPT_QUIET] > 0;
    return (cli_run){.quiet = quiet, .progress = cli_progress_for(quiet)};
}

cli_progress *cli_progress_for(int quiet)
{
    return cli_progress_create(!quiet && isatty(STDERR_FILENO));
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

void cli_default_dir(const char *input, char *out, size_t n)
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

/* The load options of the parsed -dir, --strict and --keep-python-functions. */
static tb_load_options load_options(const cli_args *a, cli_run *run)
{
    return (tb_load_options){.inputs = a->v[OPT_DIR], .n_inputs = a->n[OPT_DIR], .strict = a->n[OPT_STRICT] > 0,
                             .keep_python_functions = a->n[OPT_KEEP_PYTHON] > 0, .warn = cli_on_warn, .note = cli_on_note,
                             .progress = cli_progress_load, .phase = cli_progress_phase, .ctx = run,
                             .keep_going = a->n[OPT_KEEP_GOING] > 0};
}

/* --shard I/N: parts numbered 0 to N-1, as MPI ranks and job array indexes
 * (--array=0-<N-1>) are. Returns -1 when fine (or not given), else the exit
 * code of the usage error reported. */
int cli_parse_shard(const cli_args *a, unsigned *index, unsigned *count)
{
    const char *s = cli_value(a, OPT_SHARD);
    *index = *count = 0;
    if (!s)
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long i = strtoul(s, &end, 10), n = 0;
    int ok = errno == 0 && end != s && *end == '/' && s[0] >= '0' && s[0] <= '9';
    if (ok) {
        const char *p = end + 1;
        errno = 0;
        n = strtoul(p, &end, 10);
        ok = errno == 0 && end != p && *end == 0 && p[0] >= '0' && p[0] <= '9';
    }
    if (!ok)
        return cli_usage_error(a->cmd, "--shard '%s': expected I/N, part I (0 to N-1) of N", s);
    if (n < 1 || n > 1000000)
        return cli_usage_error(a->cmd, "--shard '%s': N must be 1 to 1000000", s);
    if (i >= n)
        return cli_usage_error(a->cmd, "--shard '%s': I must be below N (parts are numbered 0 to %lu)", s, n - 1);
    *index = (unsigned)i;
    *count = (unsigned)n;
    return -1;
}

/* Under mpirun: the folder of the shards the processes loaded, which process
 * 0 merges instead of reading the inputs (mpi.c). */
static char mpi_shards[PATH_MAX];

static tb_status run_load(const cli_args *a, cli_run *run, const char *out, tb_error *err)
{
    tb_load_options o = load_options(a, run);
    o.output = out;
    const char *merge[1] = {mpi_shards};
    if (mpi_shards[0]) {
        o.inputs = merge;
        o.n_inputs = 1;
    }
    if (cli_parse_shard(a, &o.shard_index, &o.shard_count) != -1)
        return tb_error_set(err, TB_ERR_USAGE, "bad --shard"); /* checked before */
    tb_load_result r;
    tb_status st = tb_load(&o, &r, err);
    cli_progress_clear(run->progress);
    if (st == TB_OK && a->n[OPT_TIMING])
        fprintf(stderr, "tracebook: timing: %llu events: read %.3f s, post-process %.3f s, indexes %.3f s\n",
                (unsigned long long)r.events, r.seconds_read, r.seconds_post, r.seconds_index);
    return st;
}

/* Copies the file at path to stdout. */
static tb_status copy_to_stdout(const char *path, tb_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot read: %s", strerror(errno));
    char buf[1 << 16];
    size_t n;
    tb_status st = TB_OK;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        if (fwrite(buf, 1, n, stdout) != n) {
            st = tb_error_at(err, TB_ERR_IO, "-", 0, 0, -1, "cannot write to stdout: %s", strerror(errno));
            break;
        }
    if (st == TB_OK && ferror(f))
        st = tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot read: %s", strerror(errno));
    fclose(f);
    if (st == TB_OK && fflush(stdout) != 0)
        st = tb_error_at(err, TB_ERR_IO, "-", 0, 0, -1, "cannot write to stdout: %s", strerror(errno));
    return st;
}

/* `-o -`: the DB is loaded into a temporary file, then copied to stdout. */
static tb_status export_to_stdout(const cli_args *a, cli_run *run, tb_error *err)
{
    const char *tmpdir = getenv("TMPDIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tracebook-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot create a temporary file: %s", strerror(errno));
    close(fd);
    tb_temp_register(path);
    tb_status st = run_load(a, run, path, err);
    if (st == TB_OK)
        st = copy_to_stdout(path, err);
    unlink(path);
    tb_temp_unregister(path);
    return st;
}

int cli_cmd_export_db(cli_args *a)
{
    if (a->n[OPT_DIR] == 0)
        return cli_usage_error(a->cmd, "no input: give -dir PATH");
    const char *output = cli_value(a, OPT_OUTPUT);
    if (output && !strcmp(output, "-") && isatty(STDOUT_FILENO))
        return cli_usage_error(a->cmd, "-o -: refusing to write a DB to a terminal; redirect stdout");
    unsigned shard_index, shard_count;
    int urc = cli_parse_shard(a, &shard_index, &shard_count);
    if (urc != -1)
        return urc;
    if (shard_count && cli_mpi_size() > 1)
        return cli_usage_error(a->cmd, "--shard under mpirun: the processes are the parts already");
    cli_run run = cli_run_for(a);
    tb_error err;
    tb_error_clear(&err);
    char dir[PATH_MAX], final[PATH_MAX + 128], pending[PATH_MAX + 64];
    int rc;
    final[0] = 0;
    if (cli_mpi_size() > 1) {
        /* each process loads its part; process 0 merges them into the output */
        tb_status st = cli_mpi_shards(a, a->v[OPT_DIR], a->n[OPT_DIR], &run, mpi_shards, sizeof mpi_shards, &err);
        if (st != TB_OK) {
            cli_print_error(&err);
            cli_progress_destroy(run.progress);
            return tb_exit_code(st);
        }
    }
    if (output && !strcmp(output, "-")) {
        rc = tb_exit_code(export_to_stdout(a, &run, &err));
    } else if (output && !is_dir(output) && !ends_with(output, "/") && !(shard_count && !ends_with(output, ".db"))) {
        /* (a shard's -o is a folder unless it names a .db: the N parts go side by side) */
        cli_make_parents(output);
        snprintf(final, sizeof final, "%s", output);
        rc = tb_exit_code(run_load(a, &run, final, &err));
    } else {
        if (output) {
            cli_make_dirs(output);
            snprintf(dir, sizeof dir, "%s", output);
            size_t n = strlen(dir);
            while (n > 1 && dir[n - 1] == '/')
                dir[--n] = 0;
        } else {
            cli_default_dir(a->v[OPT_DIR][0], dir, sizeof dir);
        }
        snprintf(pending, sizeof pending, "%s/.tracebook-pending-%ld.db", dir, (long)getpid());
        tb_temp_register(pending);
        tb_status st = run_load(a, &run, pending, &err);
        if (st == TB_OK) {
            char name[96];
            /* a shard's name says which part it is, so the N parts sit side by side */
            if (shard_count)
                snprintf(name, sizeof name, "shard_%u_of_%u.db", shard_index, shard_count);
            else
                st = tb_db_default_name(pending, name, sizeof name, &err);
            snprintf(final, sizeof final, "%s/%s", dir, name);
            /* the default name may be that of an input (a DB exported there before, named alone) */
            if (st == TB_OK)
                st = tb_db_check_target(pending, final, &err);
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
    /* a shard's figures go to the tracebook_run.json beside it, with the other shards' */
    if (rc == TB_EXIT_OK && shard_count && final[0]) {
        tb_status st = tb_shard_record(final, &err);
        if (st != TB_OK)
            rc = tb_exit_code(st);
    }
    if (rc != TB_EXIT_OK)
        cli_print_error(&err);
    else if (final[0])
        printf("%s\n", final);
    fflush(stdout);
    rc = cli_fail_on_warning(a, run.warnings, "the load", rc);
    cli_progress_destroy(run.progress);
    return rc;
}

tb_status cli_obtain_db(const cli_args *a, cli_run *run, char *path, size_t n, int *reused, tb_error *err)
{
    const char *const *in = a->v[OPT_DIR];
    *reused = 0;
    if (cli_mpi_size() > 1) {
        /* the processes load their parts; process 0 merges them into a DB of
         * the round's own, removed at the end (not cached) */
        char dir[PATH_MAX];
        tb_status st = cli_mpi_shards(a, in, a->n[OPT_DIR], run, dir, sizeof dir, err);
        if (st != TB_OK)
            return st;
        const char *merge[1] = {dir};
        tb_load_options o = load_options(a, run);
        o.inputs = merge;
        o.n_inputs = 1;
        cli_mpi_merged_path(path, n);
        o.output = path;
        st = tb_load(&o, NULL, err);
        cli_progress_clear(run->progress);
        *reused = 3;
        return st;
    }
    /* a shard DB alone is a part of a load: merged (with its ranks' own ids) like a folder of them */
    if (a->n[OPT_DIR] == 1 && ends_with(in[0], ".db") && tb_db_is_own(in[0]) && !tb_db_is_shard(in[0])) {
        snprintf(path, n, "%s", in[0]);
        *reused = 2;
        return TB_OK;
    }
    tb_load_options o = load_options(a, run);
    tb_status st = tb_cache_load(&o, a->n[OPT_REBUILD] > 0, path, n, reused, err);
    cli_progress_clear(run->progress);
    return st;
}

int cli_cmd_info(cli_args *a)
{
    if (a->n[OPT_DIR] == 0)
        return cli_usage_error(a->cmd, "no input: give -dir PATH");
    const char *const *in = a->v[OPT_DIR];
    cli_run run = cli_run_for(a);
    tb_error err;
    tb_error_clear(&err);
    char path[PATH_MAX];
    int reused = 0;
    tb_status st = cli_obtain_db(a, &run, path, sizeof path, &reused, &err);
    if (st == TB_OK && reused == 2) {
        /* a DB that tracebook wrote, read as it is */
        st = tb_info_write(path, path, stdout, &err);
    } else if (st == TB_OK) {
        char title[2 * PATH_MAX];
        size_t k = 0;
        title[0] = 0;
        for (size_t i = 0; i < a->n[OPT_DIR] && k < sizeof title; i++)
            k += (size_t)snprintf(title + k, sizeof title - k, "%s%s", i ? " " : "", in[i]);
        if (k < sizeof title)
            snprintf(title + k, sizeof title - k, " (DB %s, %s)", path,
                     reused == 3 ? "loaded now by the MPI processes"
                     : reused  ? "reused: inputs unchanged"
                               : "loaded now");
        st = tb_info_write(path, title, stdout, &err);
    }
    if (st != TB_OK)
        cli_print_error(&err);
    cli_progress_destroy(run.progress);
    return tb_exit_code(st);
}

int cli_cmd_merge(cli_args *a)
{
    const char *output = cli_value(a, OPT_OUTPUT);
    if (!output)
        return cli_usage_error(a->cmd, "no output: give -o FILE.db");
    for (size_t i = 0; i < a->n_pos; i++) {
        struct stat sb;
        if (stat(a->pos[i], &sb) != 0 || !S_ISREG(sb.st_mode) || !tb_db_is_own(a->pos[i]))
            return cli_usage_error(a->cmd,
                                   "'%s' is not a DB that tracebook wrote (merge reads such DBs; export db reads "
                                   "profile data)",
                                   a->pos[i]);
    }
    cli_run run = cli_run_for(a);
    /* each DB named on its own: loaded whole, with its ranks (derived DBs are
     * passed over only when found by scanning) */
    tb_load_options o = {.inputs = a->pos, .n_inputs = a->n_pos, .output = output, .warn = cli_on_warn,
                         .note = cli_on_note, .progress = cli_progress_load, .phase = cli_progress_phase,
                         .ctx = &run, .keep_going = a->n[OPT_KEEP_GOING] > 0};
    tb_error err;
    tb_error_clear(&err);
    cli_make_parents(output);
    tb_status st = tb_load(&o, NULL, &err);
    cli_progress_destroy(run.progress);
    if (st != TB_OK) {
        cli_print_error(&err);
        return tb_exit_code(st);
    }
    printf("%s\n", output);
    return TB_EXIT_OK;
}

/* --spec: a file, or builtin:NAME (one built-in report, as report takes it). */
tb_status cli_load_spec(const char *arg, tb_spec **out, cli_run *run, tb_error *err)
{
    if (!strncmp(arg, "builtin:", 8)) {
        char text[512];
        int k = snprintf(text, sizeof text, "tracebook: 1\nreports:\n  - use: \"%s\"\n", arg + 8);
        if (k < 0 || (size_t)k >= sizeof text || strchr(arg + 8, '"') || strchr(arg + 8, '\\'))
            return tb_error_set(err, TB_ERR_USAGE, "--spec '%s': not a built-in report name", arg);
        return tb_spec_load_mem(arg, text, (size_t)k, out, cli_on_warn, run, err);
    }
    return tb_spec_load(arg, out, cli_on_warn, run, err);
}

/* A folder of shard DBs (export db --shard): its tracebook_run.json records
 * the shards, and the shards themselves are the run to read. */
int cli_is_shard_folder(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *de;
    int found = 0;
    while (!found && (de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (strncmp(de->d_name, "shard_", 6) != 0 || n < 4 || strcmp(de->d_name + n - 3, ".db") != 0)
            continue;
        char db[PATH_MAX];
        snprintf(db, sizeof db, "%s/%s", path, de->d_name);
        found = tb_db_is_shard(db);
    }
    closedir(d);
    return found;
}

/* A folder holding tracebook_run.json: an earlier run's output (not a folder of shards). */
int cli_is_run_folder(const char *path)
{
    struct stat sb;
    char meta[PATH_MAX];
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return 0;
    snprintf(meta, sizeof meta, "%s/tracebook_run.json", path);
    return stat(meta, &sb) == 0 && S_ISREG(sb.st_mode) && !cli_is_shard_folder(path);
}

void cli_on_written(void *ctx, const char *path)
{
    cli_run *r = ctx;
    cli_progress_clear(r->progress);
    if (!r->quiet)
        fprintf(stderr, "tracebook: wrote %s\n", path);
}

unsigned cli_parse_file_formats(const char *list)
{
    unsigned m = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n == 3 && !strncmp(p, "csv", 3)) m |= TB_OUT_CSV;
        else if (n == 4 && !strncmp(p, "json", 4)) m |= TB_OUT_JSON;
        else if (n == 4 && !strncmp(p, "xlsx", 4)) m |= TB_OUT_XLSX;
        else return 0;
        p += n;
        if (*p == ',' && *++p == 0)
            return 0;
    }
    return m;
}
