/* SPDX-License-Identifier: MIT */
/*
 * scoped.c - a session over shards without merging them, when every report
 * the run goes through is rank- or cluster-scope
 * (docs/scale-out.md#report-scopes).
 *
 * The shards' bookkeeping is merged into a books DB (sources, ranks,
 * warnings, the processes: no rows of the ranks); each shard runs the
 * reports on its own ranks into a partial DB (scale/partial.c; under a
 * distribution hook each process runs its own shard's, at once); the
 * partials are gathered into the books DB, which becomes the session's DB:
 * the report job writes every report from it. The outputs are those of a
 * run over the merged DB, without the merge.
 *
 * Files live in a private folder, scoped.tmp-<pid>@<host>-XXXXXX under the
 * cache folder, removed when the session closes (or, after a kill, by the
 * next run of the host that makes a temporary there). Over processes, the
 * same is done by dist.c with the round's folder, each process running its
 * own shard's reports at once.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/open.h"
#include "scale/scale.h"
#include "session/session.h"
#include "tracebook/error.h"
#include "tracebook/load.h"

tb_status scoped_partial(tb_session *s, const char *shard, const char *books, const char *out, tb_error *err)
{
    const tb_session_options *o = &s->opt;
    scale_partial_job job = {
        .run = {.specs = o->specs, .n_specs = o->n_specs, .window = s->window, .unit = o->unit,
                .params = o->params, .n_params = o->n_params, .max_steps = o->max_steps, .only = o->only,
                .n_only = o->n_only, .note = o->note, .ctx = o->ctx},
        .shard = shard,
        .books_db = books,
        .out_path = out,
    };
    if (!o->specs)
        return tb_error_set(err, TB_ERR_USAGE, "this process's command ended before it ran (see its messages)");
    return scale_partial(&job, err);
}

tb_status scoped_books(tb_session *s, const char *const *inputs, size_t n, const char *out, tb_error *err)
{
    tb_load_options o = session_load_options(s);
    o.inputs = inputs;
    o.n_inputs = n;
    o.output = out;
    o.books_only = 1;
    o.progress = NULL;
    o.phase = NULL;
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
    if (db_open(books, SQLITE_OPEN_READONLY, &db) != SQLITE_OK ||
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

/* One process: every shard's partial, one after the other, in the session's own folder. */
static tb_status local_partials(tb_session *s, char *books, size_t cap, char ***parts, size_t *nparts, tb_error *err)
{
    char base[PATH_MAX - 64];
    tb_status st = tb_cache_dir(base, sizeof base, err);
    if (st != TB_OK)
        return st;
    char at[PATH_MAX];
    snprintf(at, sizeof at, "%.3800s/scoped", base);
    if (tb_temp_folder(at, s->folder, sizeof s->folder) != 0) {
        st = tb_error_at(err, TB_ERR_IO, base, 0, 0, -1, "cannot make a folder for the partial rows: %s",
                         strerror(errno));
        s->folder[0] = 0;
        return st;
    }
    snprintf(books, cap, "%.4000s/books.db", s->folder);
    if ((st = scoped_books(s, s->opt.inputs, s->opt.n_inputs, books, err)) != TB_OK)
        return st;
    char **shards = NULL;
    size_t ns = 0;
    if ((st = listed_shards(books, &shards, &ns, err)) != TB_OK)
        return st;
    if (!(*parts = calloc(ns ? ns : 1, sizeof **parts)))
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == TB_OK && i < ns; i++) {
        char out[PATH_MAX + 32];
        snprintf(out, sizeof out, "%.4000s/part_%zu.db", s->folder, i);
        if (!((*parts)[i] = strdup(out))) {
            st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            break;
        }
        *nparts = i + 1;
        tb_temp_register(out);
        st = scoped_partial(s, shards[i], books, out, err);
    }
    session_free_list(shards, ns);
    return st;
}

tb_status scoped_db(tb_session *s, char *books, size_t cap, tb_error *err)
{
    char **parts = NULL;
    size_t nparts = 0;
    tb_status st = local_partials(s, books, cap, &parts, &nparts, err);
    if (st == TB_OK)
        st = scale_gather(books, (const char *const *)parts, nparts, err);
    session_free_list(parts, nparts);
    return st;
}
