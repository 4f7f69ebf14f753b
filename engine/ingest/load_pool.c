/* SPDX-License-Identifier: MIT */
/*
 * load_pool.c - loading several rank groups at once.
 *
 * A small pool of threads takes the groups in input order: the first group
 * writes into the DB directly, every later one into a recorder (db/dbw.c)
 * that keeps its rows in an unnamed temporary file, and the calling thread
 * replays the recordings into the DB in group order as they complete,
 * shifting the ids each group drew from its own counters. A group starts
 * only a few ahead of the replay, so recordings never pile up; the first
 * group that fails stops every later one.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ingest/load_int.h"

/* How many threads load groups: opt->jobs, else TRACEBOOK_JOBS, else the
 * online CPUs up to 4; never more than there are groups. 1 loads them one
 * after the other on the calling thread. */
size_t load_pool_jobs(const tb_load_options *opt, size_t nunits)
{
    long jobs = opt->jobs;
    const char *env = getenv("TRACEBOOK_JOBS");
    if (jobs <= 0 && env && *env) {
        char *end;
        errno = 0;
        long v = strtol(env, &end, 10);
        if (errno == 0 && *end == 0 && v > 0)
            jobs = v;
    }
    if (jobs <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus < 1 ? 1 : cpus > 4 ? 4 : cpus;
    }
    if (jobs > 64)
        jobs = 64;
    return (size_t)jobs < nunits ? (size_t)jobs : nunits;
}

typedef struct pool {
    load_ctx *L;
    dbw *w;                 /* the DB's writer: the first group writes into it directly */
    import_ids *ids;        /* the load's counters (the first group's) */
    warn_log *wl;           /* the load's warnings (the first group's, live) */
    char dir[PATH_MAX];     /* where recordings go: the output's directory */
    pthread_mutex_t mu;     /* guards the fields below and the groups' state */
    pthread_cond_t cv;
    size_t next;            /* the next group to start */
    size_t replayed;        /* groups done with: replayed into the DB */
    size_t window;          /* a group starts only this many ahead of the replay */
    size_t stop;            /* no group from here on starts: the first one that failed */
    atomic_size_t failed;   /* the same, read by the recorders' sinks */
    int nice_recorders;     /* nice value of a thread once it records (10: measured as fast as 19, and
                             * unlike 0, it lets the DB's current group finish first) */
} pool;

/* A recording's sink: the recorder's, refusing rows once a group before
 * this one has failed, so a doomed load stops early. */
typedef struct guard {
    const row_sink *inner;
    pool *p;
    size_t k;
    row_sink sink;
    tb_error cancel;        /* the error of a sink that refuses rows */
} guard;

static int cancelled(const guard *g)
{
    return atomic_load_explicit(&g->p->failed, memory_order_relaxed) < g->k;
}

static int64_t guard_intern(void *ctx, const char *s, size_t n)
{
    guard *g = ctx;
    return cancelled(g) ? -1 : g->inner->intern(g->inner->ctx, s, n);
}

static int guard_row(void *ctx, int table, const tb_val *v)
{
    guard *g = ctx;
    return cancelled(g) ? -1 : g->inner->row(g->inner->ctx, table, v);
}

static const tb_error *guard_error(void *ctx)
{
    guard *g = ctx;
    if (cancelled(g)) {
        tb_error_set(&g->cancel, TB_ERR_DB, "cancelled: an earlier rank failed");
        return &g->cancel;
    }
    return g->inner->error(g->inner->ctx);
}

/* Loads group k: the first into the DB, the others into their recording
 * (made when the group was taken, so the replay can follow it at once). */
static void run_unit(pool *p, size_t k)
{
    unit *g = &p->L->units[k];
    if (k == 0) {
        g->st = load_unit(p->L, g, p->w, 0, dbw_sink(p->w), p->ids, p->wl, &g->err);
        return;
    }
    if (!g->rec) {
        g->st = g->err.code;
        return;
    }
#ifdef __linux__
    /* Recording is work ahead of time: the group the DB is taking now (and
     * the writer) come first. Linux keeps the nice value per thread, so this
     * lowers this worker alone, until it exits at the end of the load. */
    if (p->nice_recorders)
        (void)setpriority(PRIO_PROCESS, 0, p->nice_recorders);
#endif
    g->used = (import_ids){.next_task = 1, .next_op = 1, .next_overlap = 1, .next_flow_seq = 1};
    guard gd = {.inner = dbw_sink(g->rec), .p = p, .k = k};
    gd.sink = (row_sink){.ctx = &gd, .intern = guard_intern, .row = guard_row, .error = guard_error};
    g->st = load_unit(p->L, g, g->rec, 1, &gd.sink, &g->used, &g->wl, &g->err);
    /* the replay may be waiting for the rest: end the recording in any case */
    if (dbw_record_end(g->rec) && g->st == TB_OK) {
        g->err = *dbw_error(g->rec);
        g->st = g->err.code;
    }
    if (g->st != TB_OK && cancelled(&gd))
        tb_error_set(&g->err, g->st, "cancelled: an earlier rank failed");
}

static void *worker(void *arg)
{
    pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->next < p->L->nunits && p->next < p->stop && p->next >= p->replayed + p->window)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->next >= p->L->nunits || p->next >= p->stop)
            break;
        size_t k = p->next++;
        unit *g = &p->L->units[k];
        tb_error_clear(&g->err);
        if (k > 0)
            g->rec = dbw_record_create(p->dir, &g->err);
        g->state = U_RUNNING;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        run_unit(p, k);
        pthread_mutex_lock(&p->mu);
        p->L->units[k].state = U_DONE;
        if (p->L->units[k].st != TB_OK && k < p->stop) {
            p->stop = k;
            atomic_store(&p->failed, k);
        }
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Stops the groups from k on (k itself failed, or its replay did). */
static void pool_stop(pool *p, size_t k)
{
    pthread_mutex_lock(&p->mu);
    if (k < p->stop) {
        p->stop = k;
        atomic_store(&p->failed, k);
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/*
 * Loads every group on jobs threads; this thread replays the recordings
 * into w in group order, each as soon as the groups before it are in: it
 * follows a recording still going on and, once caught up, leaves the rest
 * of the group to its thread, which then writes into w itself. The first
 * group that fails in input order gives the error (a later one may have
 * failed sooner: it does not count, as in a load of one group after the
 * other).
 */
tb_status load_pool_run(load_ctx *L, dbw *w, import_ids *ids, warn_log *wl, size_t jobs, const char *out_tmp,
                        tb_load_result *res, tb_error *err)
{
    pool p = {.L = L, .w = w, .ids = ids, .wl = wl, .window = 2 * jobs, .stop = L->nunits, .nice_recorders = 10};
    atomic_init(&p.failed, L->nunits);
    const char *slash = strrchr(out_tmp, '/');
    if (!slash)
        snprintf(p.dir, sizeof p.dir, ".");
    else if (slash == out_tmp)
        snprintf(p.dir, sizeof p.dir, "/");
    else
        snprintf(p.dir, sizeof p.dir, "%.*s", (int)(slash - out_tmp), out_tmp);
    pthread_mutex_t cb_mu;
    pthread_mutex_init(&cb_mu, NULL);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    wl->cb_mu = &cb_mu;
    for (size_t u = 0; u < L->nunits; u++)
        L->units[u].wl = (warn_log){.opt = L->opt, .cb_mu = &cb_mu, .live = 0};
    /* the first group draws from ids on its thread as soon as it starts */
    if (L->nunits)
        L->units[0].id_start = *ids;
    pthread_t *threads = calloc(jobs, sizeof *threads);
    size_t started = 0;
    tb_status st = TB_OK;
    if (!threads)
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (; st == TB_OK && started < jobs; started++)
        if (pthread_create(&threads[started], NULL, worker, &p) != 0)
            break;
    if (st == TB_OK && started == 0)
        st = tb_error_set(err, TB_ERR_INTERNAL, "cannot start a loading thread");
    for (size_t k = 0; k < L->nunits && st == TB_OK; k++) {
        unit *g = &L->units[k];
        if (k > 0)
            g->id_start = *ids; /* the first group's thread is done with them */
        tb_status rst = TB_OK;
        tb_error rerr;
        tb_error_clear(&rerr);
        if (k > 0) {
            /* its rows, as if it had loaded right after the group before */
            pthread_mutex_lock(&p.mu);
            while (g->state == U_WAITING)
                pthread_cond_wait(&p.cv, &p.mu);
            int failed = g->state == U_DONE && g->st != TB_OK;
            pthread_mutex_unlock(&p.mu);
            if (g->rec && !failed) {
                dbw_shift sh = {ids->next_task - 1, ids->next_op - 1, ids->next_overlap - 1,
                                ids->next_flow_seq - 1};
                int handed;
                if ((rst = dbw_replay(w, g->rec, &sh, &handed, &rerr)) != TB_OK)
                    pool_stop(&p, 0); /* the group stops too: its rows have nowhere to go */
            }
        }
        pthread_mutex_lock(&p.mu);
        while (g->state != U_DONE)
            pthread_cond_wait(&p.cv, &p.mu);
        pthread_mutex_unlock(&p.mu);
        if (g->st != TB_OK || rst != TB_OK) {
            *err = g->st != TB_OK ? g->err : rerr;
            st = g->st != TB_OK ? g->st : rst;
            break;
        }
        if (k > 0) {
            /* its warnings, in their place after those of the groups before */
            for (size_t i = 0; i < g->wl.n; i++)
                load_warn_src(wl, g->wl.msgs[i], g->wl.src_ids[i]);
            load_warn_log_free(&g->wl);
            dbw_destroy(g->rec);
            g->rec = NULL;
            ids->next_task += g->used.next_task - 1;
            ids->next_op += g->used.next_op - 1;
            ids->next_overlap += g->used.next_overlap - 1;
            ids->next_flow_seq += g->used.next_flow_seq - 1;
        }
        g->id_end = *ids;
        g->strings_end = dbw_strings_end(w);
        load_count_unit(L, g, res);
        pthread_mutex_lock(&p.mu);
        p.replayed = k + 1;
        pthread_cond_broadcast(&p.cv);
        pthread_mutex_unlock(&p.mu);
    }
    if (st != TB_OK)
        pool_stop(&p, 0);
    for (size_t t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    free(threads);
    for (size_t u = 0; u < L->nunits; u++) {
        dbw_destroy(L->units[u].rec);
        L->units[u].rec = NULL;
        load_warn_log_free(&L->units[u].wl);
    }
    wl->cb_mu = NULL;
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    pthread_mutex_destroy(&cb_mu);
    return st;
}
