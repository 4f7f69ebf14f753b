/* SPDX-License-Identifier: MIT */
/*
 * dist.c - a run spread over processes (`mpirun -n P tracebook ...`,
 * docs/scale-out.md), through the distribution hook the command hands the
 * session (tb_dist: broadcast and gather of bytes).
 *
 * The same command line runs on every process. Where the run needs its DB,
 * process 0 makes a private folder and tells every process its name and
 * the inputs (a round); process p loads part p of P of the ranks (the same
 * assignment as `export db --shard p/P`) into FOLDER/shard_p_of_P.db; every
 * process's outcome (a tb_error) is gathered at process 0, which decides
 * for all: a failed part fails the run with its process and file named,
 * before any output is written, unless keep_going leaves it out. Process 0
 * then merges the shards, or, when every report of the run is rank- or
 * cluster-scope, starts a second round in which every process runs them on
 * its own shard into a partial (scoped.c). The other processes only ever
 * serve rounds, until process 0 ends the run with its code.
 *
 * The folder must be seen under the same path by every process: the shard
 * files are not sent through the hook. It is TRACEBOOK_MPI_DIR when set,
 * else the cache folder ($XDG_CACHE_HOME/tracebook, usually in a home
 * directory shared by the nodes). Process 0 checks that it sees every shard.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scale/scale.h"
#include "session/session.h"
#include "tracebook/error.h"
#include "tracebook/load.h"

/* What process 0 sends at the start of each round. */
typedef struct round_msg {
    int stop;            /* 1: no more rounds; end with code */
    int partials;        /* 1: run the reports on this round's shards (books: the books DB) */
    int code;
    int keep_going;
    char dir[PATH_MAX];  /* the folder of this round's shards */
    char books[PATH_MAX];
    int inputs_len;      /* then this many bytes: the inputs, each ended by '\0' */
} round_msg;

static void bcast(tb_session *s, void *buf, size_t n)
{
    const tb_dist *d = s->opt.dist;
    d->bcast(d->ctx, buf, n);
}

static void checkpoint(tb_session *s, const char *what)
{
    const tb_dist *d = s->opt.dist;
    if (d->checkpoint)
        d->checkpoint(d->ctx, what);
}

/* Every process's outcome of the round, at process 0 (others: NULL). */
static tb_error *gather(tb_session *s, const tb_error *mine)
{
    const tb_dist *d = s->opt.dist;
    tb_error *all = s->dist_rank == 0 ? calloc(s->dist_size > 0 ? (size_t)s->dist_size : 1, sizeof *all) : NULL;
    if (s->dist_rank == 0 && !all)
        d->abort(d->ctx, 1); /* nothing to gather into: the run fails, as out of memory does */
    d->gather(d->ctx, mine, all, sizeof *mine);
    return all;
}

static void shard_path(const tb_session *s, const char *dir, int k, char *out, size_t n)
{
    snprintf(out, n, "%.4000s/shard_%d_of_%d.db", dir, k, s->dist_size);
}

static void part_path(const tb_session *s, const char *dir, int k, char *out, size_t n)
{
    snprintf(out, n, "%.4000s/part_%d_of_%d.db", dir, k, s->dist_size);
}

/* Removes a round's folder: its shards, the merged or books DB, the partials. */
static void drop_folder(tb_session *s, char *folder)
{
    if (!folder[0])
        return;
    for (int k = 0; k < s->dist_size; k++) {
        char p[PATH_MAX * 2];
        shard_path(s, folder, k, p, sizeof p);
        tb_temp_unregister(p);
    }
    session_remove_folder(folder);
    folder[0] = 0;
}

/* Loads this process's part of the inputs into dir. */
static tb_status load_part(tb_session *s, const char *const *inputs, size_t n, const char *dir, tb_error *err)
{
    char out[PATH_MAX * 2];
    shard_path(s, dir, s->dist_rank, out, sizeof out);
    if (s->failed_early)
        return tb_error_set(err, TB_ERR_USAGE, "this process's command ended before it loaded (see its messages)");
    tb_load_options o = session_load_options(s);
    o.inputs = inputs;
    o.n_inputs = n;
    o.output = out;
    o.shard_index = (unsigned)s->dist_rank;
    o.shard_count = (unsigned)s->dist_size;
    o.progress = NULL;
    o.phase = NULL;
    if (s->dist_rank != 0)
        o.note = NULL; /* process 0 says what every process would */
    tb_status st = tb_load(&o, NULL, err);
    /* until process 0 has it: a run stopped by a signal (mpirun ends every
     * process when one dies) removes it */
    if (st == TB_OK)
        tb_temp_register(out);
    checkpoint(s, "loaded");
    return st;
}

/* This process's partial of a round: the reports on its shard, when it has
 * one (a part left out by keep_going has none). */
static tb_status run_partial(tb_session *s, const char *dir, const char *books, tb_error *err)
{
    char shard[PATH_MAX * 2], out[PATH_MAX * 2];
    shard_path(s, dir, s->dist_rank, shard, sizeof shard);
    part_path(s, dir, s->dist_rank, out, sizeof out);
    if (access(shard, R_OK) != 0)
        return TB_OK;
    tb_temp_register(out);
    tb_status st = scoped_partial(s, shard, books, out, err);
    if (st == TB_OK)
        checkpoint(s, "partial");
    return st;
}

/* A round's inputs as process 0 sent them: pointers into buf. */
static const char **split_inputs(char *buf, int len, size_t *n)
{
    *n = 0;
    for (int i = 0; i < len; i += (int)strlen(buf + i) + 1)
        (*n)++;
    const char **in = calloc(*n ? *n : 1, sizeof *in);
    size_t k = 0;
    for (int i = 0; in && i < len; i += (int)strlen(buf + i) + 1)
        in[k++] = buf + i;
    return in;
}

/* A process other than 0: one load round, its inputs sent after m. */
static void serve_load(tb_session *s, const round_msg *m)
{
    const tb_dist *d = s->opt.dist;
    char *buf = malloc((size_t)m->inputs_len + 1);
    if (!buf) /* the broadcast needs room on every process */
        d->abort(d->ctx, 1);
    bcast(s, buf, (size_t)m->inputs_len);
    tb_error err;
    tb_error_clear(&err);
    size_t n = 0;
    const char **in = split_inputs(buf, m->inputs_len, &n);
    if (!in)
        tb_error_set(&err, TB_ERR_NOMEM, "out of memory");
    else
        load_part(s, in, n, m->dir, &err);
    free(gather(s, &err));
    /* the round's folder is process 0's from here */
    char out[PATH_MAX * 2];
    shard_path(s, m->dir, s->dist_rank, out, sizeof out);
    tb_temp_unregister(out);
    free(in);
    free(buf);
}

int dist_serve(tb_session *s)
{
    for (;;) {
        round_msg m;
        bcast(s, &m, sizeof m);
        if (m.stop)
            return m.code;
        if (!m.partials) {
            serve_load(s, &m);
            continue;
        }
        tb_error err;
        tb_error_clear(&err);
        run_partial(s, m.dir, m.books, &err);
        free(gather(s, &err));
        char out[PATH_MAX * 2];
        part_path(s, m.dir, s->dist_rank, out, sizeof out);
        tb_temp_unregister(out);
    }
}

/* A new private folder for a round, where every process sees it. */
static tb_status round_folder(char *dir, size_t cap, tb_error *err)
{
    char base[PATH_MAX - 64];
    const char *env = getenv("TRACEBOOK_MPI_DIR");
    tb_status st = TB_OK;
    if (env && *env)
        snprintf(base, sizeof base, "%s", env);
    else
        st = tb_cache_dir(base, sizeof base, err);
    if (st != TB_OK)
        return st;
    char at[PATH_MAX];
    snprintf(at, sizeof at, "%.3800s/mpi", base);
    if (tb_temp_folder(at, dir, cap) != 0)
        return tb_error_at(err, TB_ERR_IO, base, 0, 0, -1, "cannot make the processes' folder: %s", strerror(errno));
    return TB_OK;
}

/* Process 0: the outcomes of a load round. The first part that failed fails
 * the run (every process ends with its code); with keep_going, each failed
 * part is left out with a warning. */
static tb_status judge_load(tb_session *s, tb_error *all, const char *dir, tb_error *err)
{
    int failed = -1;
    for (int k = 0; k < s->dist_size; k++) {
        char shard[PATH_MAX * 2];
        shard_path(s, dir, k, shard, sizeof shard);
        if (all[k].code == TB_OK && access(shard, R_OK) != 0)
            tb_error_at(&all[k], TB_ERR_IO, shard, 0, 0, -1,
                        "the shard of process %d is not visible to process 0: TRACEBOOK_MPI_DIR must be a folder"
                        " that every process sees under the same path",
                        k);
        if (all[k].code == TB_OK)
            continue;
        char msg[sizeof all[k].message];
        snprintf(msg, sizeof msg, "process %d of %d: %.470s", k, s->dist_size, all[k].message);
        if (s->opt.keep_going) {
            /* as the error would have named it: FILE:LINE:COL */
            char where[sizeof all[k].file + 48] = "";
            if (all[k].file[0] && all[k].line > 0)
                snprintf(where, sizeof where, "%s:%ld:%ld: ", all[k].file, all[k].line,
                         all[k].column > 0 ? all[k].column : 1L);
            else if (all[k].file[0])
                snprintf(where, sizeof where, "%s: ", all[k].file);
            char w[sizeof where + sizeof msg + 64];
            snprintf(w, sizeof w, "%s%s: its part is left out (--keep-going)", where, msg);
            if (s->opt.warn)
                s->opt.warn(s->opt.ctx, w);
        } else if (failed < 0) {
            failed = k;
            *err = all[k];
            snprintf(err->message, sizeof err->message, "%s", msg);
        }
    }
    return failed >= 0 ? err->code : TB_OK;
}

tb_status dist_load(tb_session *s, const char *const *inputs, size_t n, char *dir, size_t cap, tb_error *err)
{
    if (s->n_rounds == SESSION_MAX_ROUNDS)
        return tb_error_set(err, TB_ERR_INTERNAL, "more than %d loads in one run of several processes",
                            SESSION_MAX_ROUNDS);
    round_msg m;
    memset(&m, 0, sizeof m);
    m.keep_going = s->opt.keep_going;
    tb_status st = round_folder(m.dir, sizeof m.dir, err);
    if (st != TB_OK)
        return st; /* the others wait for the stop tb_dist_end sends */
    char *folder = s->rounds[s->n_rounds++];
    snprintf(folder, PATH_MAX, "%s", m.dir);
    /* every shard of the round goes with it when a signal stops the run (as
     * many as the table of temporary files holds; the folder names the run) */
    for (int k = 1; k < s->dist_size && k <= 128; k++) {
        char shard[PATH_MAX * 2];
        shard_path(s, folder, k, shard, sizeof shard);
        tb_temp_register(shard);
    }
    for (size_t i = 0; i < n; i++)
        m.inputs_len += (int)strlen(inputs[i]) + 1;
    char *buf = malloc((size_t)m.inputs_len + 1);
    if (!buf)
        s->opt.dist->abort(s->opt.dist->ctx, 1);
    for (size_t i = 0, o = 0; i < n; i++) {
        memcpy(buf + o, inputs[i], strlen(inputs[i]) + 1);
        o += strlen(inputs[i]) + 1;
    }
    bcast(s, &m, sizeof m);
    bcast(s, buf, (size_t)m.inputs_len);
    free(buf);
    tb_error mine;
    tb_error_clear(&mine);
    load_part(s, inputs, n, m.dir, &mine);
    tb_error *all = gather(s, &mine);
    st = judge_load(s, all, m.dir, err);
    free(all);
    if (st != TB_OK) {
        drop_folder(s, folder);
        return st;
    }
    snprintf(dir, cap, "%s", m.dir);
    return TB_OK;
}

tb_status dist_partials(tb_session *s, const char *books, char ***parts, size_t *n, tb_error *err)
{
    *parts = NULL;
    *n = 0;
    if (!s->n_rounds)
        return tb_error_set(err, TB_ERR_INTERNAL, "rank-scope reports before any load of the processes");
    const char *dir = s->rounds[s->n_rounds - 1];
    round_msg m;
    memset(&m, 0, sizeof m);
    m.partials = 1;
    snprintf(m.dir, sizeof m.dir, "%s", dir);
    snprintf(m.books, sizeof m.books, "%s", books);
    bcast(s, &m, sizeof m);
    tb_error mine;
    tb_error_clear(&mine);
    run_partial(s, dir, books, &mine);
    tb_error *all = gather(s, &mine);
    for (int k = 0; k < s->dist_size; k++) {
        if (all[k].code == TB_OK)
            continue;
        /* a process that failed fails the run: its shard loaded, its reports did not run */
        *err = all[k];
        snprintf(err->message, sizeof err->message, "process %d of %d: %.470s", k, s->dist_size, all[k].message);
        free(all);
        return err->code;
    }
    free(all);
    char **v = calloc(s->dist_size > 0 ? (size_t)s->dist_size : 1, sizeof *v);
    if (!v)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (int k = 0; k < s->dist_size; k++) {
        char shard[PATH_MAX * 2], out[PATH_MAX * 2];
        shard_path(s, dir, k, shard, sizeof shard);
        part_path(s, dir, k, out, sizeof out);
        if (access(shard, R_OK) != 0)
            continue; /* left out by keep_going */
        if (access(out, R_OK) != 0) {
            session_free_list(v, *n);
            *n = 0;
            return tb_error_at(err, TB_ERR_IO, out, 0, 0, -1,
                               "the partial rows of process %d are not visible to process 0: TRACEBOOK_MPI_DIR must"
                               " be a folder that every process sees under the same path", k);
        }
        if (!(v[(*n)++] = strdup(out))) {
            session_free_list(v, *n);
            *n = 0;
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
    }
    *parts = v;
    return TB_OK;
}

void dist_drop(tb_session *s)
{
    for (int r = 0; r < s->n_rounds; r++)
        drop_folder(s, s->rounds[r]);
    s->n_rounds = 0;
}

void dist_stop(tb_session *s, int code)
{
    round_msg m;
    memset(&m, 0, sizeof m);
    m.stop = 1;
    m.code = code;
    bcast(s, &m, sizeof m);
}

tb_status dist_scoped_db(tb_session *s, char *books, size_t cap, tb_error *err)
{
    char dir[PATH_MAX];
    char **parts = NULL;
    size_t nparts = 0;
    /* the processes load their parts (the round of every distributed load) */
    tb_status st = dist_load(s, s->opt.inputs, s->opt.n_inputs, dir, sizeof dir, err);
    if (st != TB_OK)
        return st;
    snprintf(books, cap, "%.4000s/books.db", dir);
    const char *in[1] = {dir};
    /* every process runs its shard's reports; process 0 gets the partials' paths */
    if ((st = scoped_books(s, in, 1, books, err)) == TB_OK && (st = dist_partials(s, books, &parts, &nparts, err)) == TB_OK)
        st = scale_gather(books, (const char *const *)parts, nparts, err);
    session_free_list(parts, nparts);
    return st;
}
