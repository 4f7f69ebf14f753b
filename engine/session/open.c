/* SPDX-License-Identifier: MIT */
/*
 * open.c - one run: its inputs, the DB they make, the one connection and
 * the one window (tracebook/session.h).
 *
 * Where the DB comes from, in order: the rows of rank- and cluster-scope
 * reports run where the ranks are (scoped.c), when every report of the run
 * is of those scopes and the ranks are spread over shard DBs or processes;
 * the merge of the parts the processes loaded (dist.c); a DB that tracebook
 * wrote, named alone, read as it is; the cached load of the inputs
 * (ingest/cache.c). The DB is found or built once, at tb_session_ready or
 * the first verb, and read through one read-only connection that every
 * verb of the run shares; a verb leaves nothing of its own on it.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/open.h"
#include "query/runner.h"
#include "scale/scale.h"
#include "session/session.h"
#include "tracebook/db.h"
#include "tracebook/error.h"
#include "tracebook/load.h"
#include "util/dirs.h"

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

/* 1 when every input is a shard DB or a folder of them. */
static int inputs_are_shards(const tb_session *s)
{
    if (!s->opt.n_inputs)
        return 0;
    for (size_t i = 0; i < s->opt.n_inputs; i++) {
        const char *in = s->opt.inputs[i];
        struct stat sb;
        if (stat(in, &sb) != 0)
            return 0;
        if (S_ISDIR(sb.st_mode) ? !tb_db_shard_folder(in) : !(ends_with(in, ".db") && tb_db_is_shard(in)))
            return 0;
    }
    return 1;
}

/* Every report of the run rank- or cluster-scope over shards or processes:
 * each shard runs them on its own ranks, no merge. */
static int runs_scoped(const tb_session *s)
{
    return s->opt.specs && tb_specs_scoped(s->opt.specs, s->opt.n_specs, s->opt.only, s->opt.n_only) &&
           (s->dist_size > 1 || inputs_are_shards(s));
}

/* Under a distribution hook: the processes load their parts, process 0
 * merges them into a DB of the round's own, removed at the end (not cached). */
static tb_status merge_processes(tb_session *s, tb_error *err)
{
    char dir[PATH_MAX];
    tb_status st = dist_load(s, s->opt.inputs, s->opt.n_inputs, dir, sizeof dir, err);
    if (st != TB_OK)
        return st;
    const char *merge[1] = {dir};
    tb_load_options o = session_load_options(s);
    o.inputs = merge;
    o.n_inputs = 1;
    snprintf(s->path, sizeof s->path, "%.4000s/merged.db", dir);
    tb_temp_register(s->path);
    o.output = s->path;
    return tb_load(&o, NULL, err);
}

/*
 * A tracebook DB given as the input is read as it is only when its times
 * are within the range every load keeps: one that holds INT64_MIN or 1e300
 * (made by hand, or by another tool) is loaded like any other input DB
 * instead, so that the range rule applies (such rows skipped with a counted
 * warning; --strict: an error) and no computed table sees them.
 */
static int own_db_times_fit(const char *path)
{
    sqlite3 *db = NULL;
    char table[128];
    int fit = db_open(path, SQLITE_OPEN_READONLY, &db) == SQLITE_OK && !db_view_for_table(db, table, sizeof table) &&
              !db_times_out_of_range(db, table, sizeof table);
    /* a view is refused when the DB is opened (session_db): read as it is, to say so */
    if (db && !fit && db_view_for_table(db, table, sizeof table))
        fit = 1;
    sqlite3_close(db);
    return fit;
}

static tb_status find_db(tb_session *s, tb_error *err)
{
    const char *const *in = s->opt.inputs;
    if (runs_scoped(s)) {
        s->source = TB_SOURCE_SCOPED;
        s->scoped = 1;
        return (s->dist_size > 1 ? dist_scoped_db : scoped_db)(s, s->path, sizeof s->path, err);
    }
    if (s->dist_size > 1) {
        s->source = TB_SOURCE_PROCESSES;
        return merge_processes(s, err);
    }
    /* a shard DB alone is a part of a load: merged (with its ranks' own ids) like a folder of them */
    if (s->opt.n_inputs == 1 && ends_with(in[0], ".db") && tb_db_is_own(in[0]) && !tb_db_is_shard(in[0]) &&
        own_db_times_fit(in[0])) {
        snprintf(s->path, sizeof s->path, "%s", in[0]);
        s->source = TB_SOURCE_OWN_DB;
        struct stat sb;
        if (stat(in[0], &sb) != 0)
            return tb_error_at(err, errno == ENOENT ? TB_ERR_NOTFOUND : TB_ERR_IO, in[0], 0, 0, -1,
                               "cannot read: %s", strerror(errno));
        return TB_OK;
    }
    tb_load_options o = session_load_options(s);
    int reused = 0;
    tb_status st = tb_cache_load(&o, s->opt.rebuild, s->path, sizeof s->path, &reused, err);
    s->source = reused ? TB_SOURCE_CACHED : TB_SOURCE_LOADED;
    return st;
}

/* A cached load said its warnings when it ran: a run that reuses it says them
 * again (TB_WARNING, in load order), so that a job reading only tonight's
 * stderr sees them whether the cache was warm or not. */
static void repeat_warnings(tb_session *s)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    if (!s->opt.warn || db_open(s->path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, &db) != SQLITE_OK) {
        sqlite3_close(db);
        return;
    }
    if (sqlite3_prepare_v2(db, "SELECT message FROM TB_WARNING ORDER BY rowid", -1, &q, NULL) == SQLITE_OK)
        while (sqlite3_step(q) == SQLITE_ROW) {
            const char *msg = (const char *)sqlite3_column_text(q, 0);
            if (msg)
                s->opt.warn(s->opt.ctx, msg);
        }
    sqlite3_finalize(q);
    sqlite3_close(db);
}

tb_status tb_session_ready(tb_session *s, tb_error *err)
{
    if (s->have_db)
        return TB_OK;
    if (!s->opt.n_inputs)
        return tb_error_set(err, TB_ERR_USAGE, "no input: give -dir PATH");
    tb_status st = find_db(s, err);
    if (st == TB_OK)
        s->have_db = 1;
    if (st == TB_OK && s->source == TB_SOURCE_CACHED)
        repeat_warnings(s);
    return st;
}

sqlite3 *session_db(tb_session *s, tb_error *err)
{
    if (s->db)
        return s->db;
    if (tb_session_ready(s, err) != TB_OK)
        return NULL;
    if (db_open(s->path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, &s->db) != SQLITE_OK) {
        tb_error_at(err, TB_ERR_DB, s->path, 0, 0, -1, "cannot open the DB: %s",
                    s->db ? sqlite3_errmsg(s->db) : "out of memory");
        sqlite3_close(s->db);
        s->db = NULL;
        return NULL;
    }
    sqlite3_extended_result_codes(s->db, 1);
    char table[128];
    if (s->source == TB_SOURCE_OWN_DB && db_view_for_table(s->db, table, sizeof table)) {
        tb_error_at(err, TB_ERR_PARSE, s->path, 0, 0, -1,
                    "'%s' is a view, where a tracebook DB has a table: refusing to read it", table);
        sqlite3_close(s->db);
        s->db = NULL;
        return NULL;
    }
    return s->db;
}

int session_replay(const tb_session *s)
{
    return s->scoped;
}

tb_status tb_session_open(const tb_session_options *opt, tb_session **out, tb_error *err)
{
    *out = NULL;
    tb_session *s = calloc(1, sizeof *s);
    if (!s)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    s->opt = *opt;
    s->window = opt->window;
    s->opt.dist = opt->dist && opt->dist->size > 1 ? opt->dist : NULL;
    s->dist_size = s->opt.dist ? s->opt.dist->size : 1;
    s->dist_rank = s->opt.dist ? s->opt.dist->rank : 0;
    *out = s;
    return TB_OK;
}

int tb_session_serves(const tb_session *s)
{
    return s && s->dist_rank != 0;
}

int tb_session_serve(tb_session *s)
{
    return dist_serve(s);
}

void tb_session_close(tb_session *s)
{
    if (!s)
        return;
    sqlite3_close(s->db);
    if (s->dist_size > 1 && s->dist_rank == 0)
        dist_drop(s);
    if (s->folder[0])
        session_remove_folder(s->folder);
    free(s);
}

int tb_dist_end(const tb_dist *dist, int code)
{
    if (!dist || dist->size <= 1)
        return code;
    /* a session that failed before anything: it answers process 0's rounds
     * with that failure (no reports of its own) until process 0 ends */
    tb_session s = {.dist_size = dist->size, .dist_rank = dist->rank};
    s.opt.dist = dist;
    s.failed_early = 1;
    if (dist->rank == 0) {
        dist_stop(&s, code);
        return code;
    }
    return dist_serve(&s);
}

const char *tb_session_db_path(const tb_session *s)
{
    return s->path;
}

tb_session_source tb_session_source_of(const tb_session *s)
{
    return s->source;
}

const char *const *tb_session_inputs(const tb_session *s, size_t *n)
{
    *n = s->opt.n_inputs;
    return s->opt.inputs;
}

const tb_window *tb_session_window(const tb_session *s)
{
    return &s->window;
}

tb_status tb_session_clear_cache(tb_session *s, int *removed, tb_error *err)
{
    *removed = 0;
    if (!s->have_db || s->source == TB_SOURCE_PROCESSES || s->source == TB_SOURCE_SCOPED)
        return TB_OK; /* the run's own DB, removed when it closes */
    if (s->source == TB_SOURCE_OWN_DB) {
        if (s->opt.note)
            s->opt.note(s->opt.ctx, "--clear: the input DB is kept (it is not a cache entry)");
        return TB_OK;
    }
    sqlite3_close(s->db);
    s->db = NULL;
    tb_status st = tb_cache_remove(s->path, err);
    if (st == TB_OK) {
        *removed = 1;
        s->have_db = 0; /* a verb after this loads the inputs again */
        if (s->opt.note) {
            char msg[PATH_MAX + 32];
            snprintf(msg, sizeof msg, "--clear: removed %s", s->path);
            s->opt.note(s->opt.ctx, msg);
        }
    }
    return st;
}

tb_status tb_session_run(tb_session *s, const tb_run_options *opt, tb_run_result *res, tb_error *err)
{
    tb_run_options o = *opt;
    if (!(o.db = session_db(s, err)))
        return err->code;
    o.db_name = s->path;
    o.window = s->window;
    return runner_run(&o, &(run_part){.replay = s->scoped}, res, err);
}

tb_status tb_session_query(tb_session *s, const tb_run_options *opt, const char *sql, tb_sink *sink, uint64_t *rows,
                           tb_error *err)
{
    tb_run_options o = *opt;
    if (!(o.db = session_db(s, err)))
        return err->code;
    o.db_name = s->path;
    o.window = s->window;
    return tb_query_run(&o, sql, sink, rows, err);
}

tb_status tb_session_load_to(tb_session *s, const char *path, unsigned shard_index, unsigned shard_count,
                             tb_load_result *res, tb_error *err)
{
    tb_load_options o = session_load_options(s);
    char dir[PATH_MAX];
    const char *merge[1] = {dir};
    if (s->dist_size > 1) {
        /* each process loads its part; process 0 merges them into the output */
        tb_status st = dist_load(s, s->opt.inputs, s->opt.n_inputs, dir, sizeof dir, err);
        if (st != TB_OK)
            return st;
        o.inputs = merge;
        o.n_inputs = 1;
    }
    (void)dirs_make(path, 0, 0777); /* a failure is the DB's, said by the load */
    o.output = path;
    o.torch_links = s->opt.torch_links;
    o.shard_index = shard_index;
    o.shard_count = shard_count;
    return tb_load(&o, res, err);
}
