/* SPDX-License-Identifier: MIT */
/*
 * scoped.c - `report` over shards without merging them, when every report
 * it runs is rank-scope (docs/scale-out.md#report-scopes).
 *
 * The shards' bookkeeping is merged into a books DB (sources, ranks,
 * warnings, the processes: no rows of the ranks); each shard runs the
 * rank-scope reports on its own ranks into a partial DB (under mpirun each
 * process runs its own shard's, at once); the partials are gathered into
 * the books DB, and the report job writes every report from there. The
 * outputs are those of a run over the merged DB, without the merge.
 *
 * Files live in a private folder: the MPI run's folder under mpirun, else
 * scoped.tmp-<pid>@<host>-XXXXXX under the cache folder, removed when the
 * command ends (or, after a kill, by the next run of the host that makes a
 * temporary there).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"

static char folder[PATH_MAX]; /* the single-process run's own folder, "" when none */

/* Removes the files of dir and dir itself. */
void cli_remove_folder(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
            continue;
        char f[PATH_MAX * 2];
        snprintf(f, sizeof f, "%s/%s", dir, de->d_name);
        unlink(f);
        tb_temp_unregister(f);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    tb_temp_unregister(dir);
}

void cli_scoped_finish(void)
{
    if (folder[0])
        cli_remove_folder(folder);
    folder[0] = 0;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

int cli_inputs_are_shards(const cli_args *a)
{
    if (!a->n[OPT_DIR])
        return 0;
    for (size_t i = 0; i < a->n[OPT_DIR]; i++) {
        const char *in = a->v[OPT_DIR][i];
        struct stat sb;
        if (stat(in, &sb) != 0)
            return 0;
        if (S_ISDIR(sb.st_mode) ? !cli_is_shard_folder(in) : !(ends_with(in, ".db") && tb_db_is_shard(in)))
            return 0;
    }
    return 1;
}

tb_status cli_report_partial(const cli_args *a, tb_spec *const *specs, size_t n_specs, const char *shard,
                             const char *books, const char *out, cli_run *run, tb_error *err)
{
    cli_run_opts ro;
    if (cli_parse_window_opts(a, &ro) >= 0)
        return tb_error_set(err, TB_ERR_USAGE, "bad window options"); /* process 0 checked them */
    tb_spec **own = NULL;
    size_t loaded = 0;
    tb_status st = TB_OK;
    if (!specs) {
        n_specs = a->n[OPT_SPEC];
        own = calloc(n_specs ? n_specs : 1, sizeof *own);
        if (!own)
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        for (; st == TB_OK && loaded < n_specs; loaded++)
            st = cli_load_spec(a->v[OPT_SPEC][loaded], &own[loaded], run, err);
        specs = own;
    }
    if (st == TB_OK) {
        tb_partial_job job = {
            .run = {.db_path = shard, .specs = (const tb_spec *const *)specs, .n_specs = n_specs,
                    .window = ro.window, .unit = ro.unit, .params = a->v[OPT_PARAM], .n_params = a->n[OPT_PARAM],
                    .max_steps = ro.max_steps, .only = a->n[OPT_REPORT] ? a->v[OPT_REPORT] : NULL,
                    .n_only = a->n[OPT_REPORT], .note = cli_on_note, .ctx = run},
            .books_db = books,
            .out_path = out,
        };
        st = tb_report_partial(&job, err);
    }
    for (size_t i = 0; own && i < loaded; i++)
        tb_spec_free(own[i]);
    free(own);
    return st;
}

/* The books DB of the shards in dir_or_inputs (books_only load). */
static tb_status load_books(const cli_args *a, cli_run *run, const char *const *inputs, size_t n, const char *out,
                            tb_error *err)
{
    tb_load_options o = {.inputs = inputs, .n_inputs = n, .output = out, .warn = cli_on_warn, .note = cli_on_note,
                         .ctx = run, .keep_going = a->n[OPT_KEEP_GOING] > 0, .books_only = 1};
    tb_temp_register(out);
    return tb_load(&o, NULL, err);
}

/* The shard DBs the books DB lists as read, by shard index. */
static tb_status listed_shards(const char *books, char ***out, size_t *n, tb_error *err)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    if (sqlite3_open_v2(books, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT path FROM TB_SHARDS WHERE path IS NOT NULL ORDER BY shardIndex", -1, &q,
                           NULL) != SQLITE_OK) {
        tb_status st = tb_error_at(err, TB_ERR_DB, books, 0, 0, -1, "SQLite: %s", sqlite3_errmsg(db));
        sqlite3_close(db);
        return st;
    }
    tb_status st = TB_OK;
    while (st == TB_OK && sqlite3_step(q) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nv = realloc(*out, cap * sizeof *nv);
            if (!nv) {
                st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                break;
            }
            *out = nv;
        }
        if (!((*out)[*n] = strdup((const char *)sqlite3_column_text(q, 0))))
            st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        else
            (*n)++;
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    return st;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

tb_status cli_scoped_db(const cli_args *a, cli_run *run, tb_spec *const *specs, size_t n_specs, char *books,
                        size_t cap, tb_error *err)
{
    char dir[PATH_MAX];
    tb_status st = TB_OK;
    char **parts = NULL;
    size_t nparts = 0;
    if (cli_mpi_size() > 1) {
        /* the processes load their parts (the round of every MPI load) */
        if ((st = cli_mpi_shards(a, a->v[OPT_DIR], a->n[OPT_DIR], run, dir, sizeof dir, err)) != TB_OK)
            return st;
        snprintf(books, cap, "%s/books.db", dir);
        const char *in[1] = {dir};
        if ((st = load_books(a, run, in, 1, books, err)) != TB_OK)
            return st;
        /* every process runs its shard's reports; process 0 gets the partials' paths */
        if ((st = cli_mpi_partials(a, specs, n_specs, books, run, &parts, &nparts, err)) != TB_OK)
            return st;
    } else {
        char base[PATH_MAX - 64];
        if ((st = tb_cache_dir(base, sizeof base, err)) != TB_OK)
            return st;
        char at[PATH_MAX];
        snprintf(at, sizeof at, "%.3800s/scoped", base);
        if (tb_temp_folder(at, folder, sizeof folder) != 0) {
            st = tb_error_at(err, TB_ERR_IO, base, 0, 0, -1, "cannot make a folder for the partial rows: %s",
                             strerror(errno));
            folder[0] = 0;
            return st;
        }
        snprintf(books, cap, "%s/books.db", folder);
        if ((st = load_books(a, run, a->v[OPT_DIR], a->n[OPT_DIR], books, err)) != TB_OK)
            return st;
        char **shards = NULL;
        size_t ns = 0;
        if ((st = listed_shards(books, &shards, &ns, err)) != TB_OK)
            return st;
        if (!(parts = calloc(ns ? ns : 1, sizeof *parts)))
            st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        for (size_t i = 0; st == TB_OK && i < ns; i++) {
            char out[PATH_MAX + 32];
            snprintf(out, sizeof out, "%s/part_%zu.db", folder, i);
            if (!(parts[i] = strdup(out))) {
                st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                break;
            }
            nparts = i + 1;
            tb_temp_register(out);
            st = cli_report_partial(a, specs, n_specs, shards[i], books, out, run, err);
        }
        free_list(shards, ns);
    }
    if (st == TB_OK)
        st = tb_report_gather(books, (const char *const *)parts, nparts, err);
    free_list(parts, nparts);
    return st;
}
