/* SPDX-License-Identifier: MIT */
/*
 * hta_counters.c - the counters family of computed tables: Holistic Trace
 * Analysis' queue length of each stream, as a time series and summarised,
 * its kernel launch statistics, memory bandwidth, user annotations, ATen op
 * kernels and straggler metric, and the span of each rank's trace that HTA
 * divides by (reference: metrics.md, "HTA's counters").
 *
 * The tables read what the breakdown family reads (hta.h): each rank's
 * device tasks with their launching calls, in HTA's time domain and window
 * (hta.round_us, hta.drop_last_step, hta.linked_only), so that the same
 * trace gives HTA's numbers:
 *
 *   - queue_length: HTA's get_queue_length_time_series. A stream's queue
 *     grows by one when a runtime call that launches work (cudaLaunchKernel,
 *     cudaMemcpyAsync, hipLaunchKernel, ...: HTA's list) starts, and shrinks
 *     by one when the launched task starts on the stream; only tasks whose
 *     launching call is on that list count. One row per change, in time
 *     order. HTA sorts the changes with an unstable sort, so that at equal
 *     times its order is arbitrary; here a launch comes before a task start
 *     at the same time (a task cannot start before it is launched), then
 *     the trace's order;
 *   - queue_length_summary: pandas' describe() of each stream's series;
 *   - kernel_launch_stats: HTA's get_cuda_kernel_launch_stats, each launch's
 *     CPU time, GPU time and launch delay;
 *   - memory_bw, memory_bw_summary: HTA's memory bandwidth time series and
 *     its summary;
 *   - user_annotation: the annotation slices HTA's user annotation
 *     breakdown sums (the report does the sums);
 *   - aten_op_kernels: HTA's get_aten_op_kernels_and_delay before its
 *     grouping (one row per ATen op instance);
 *   - straggler_metric: the metric of HTA's get_potential_stragglers (the
 *     report picks the late ranks);
 *   - hta_trace_span: the first and last event start of the rank among the
 *     events HTA keeps (its get_trace_duration).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/hta.h"
#include "metrics/metrics.h"
#include "util/sort.h"
#include "util/vec.h"

/* HTA's runtime calls that enqueue work on a stream (its symbol table's
 * get_runtime_launch_events_mask). */
static const char *const launch_names[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync",
    "cudaMemsetAsync", "runFunction - job_prep_and_submit_for_execution", "hipLaunchKernel",
    "hipExtModuleLaunchKernel", "hipMemsetAsync", "hipMemcpyAsync", "hipMemcpyWithStream",
};
#define N_LAUNCH (sizeof launch_names / sizeof launch_names[0])

/* The calls whose launches get_cuda_kernel_launch_stats reads: kernel
 * launches, then (from MEMORY_FROM on) the memory operations it adds with
 * include_memory_events. */
static const char *const stats_names[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "runFunction - job_prep_and_submit_for_execution",
    "cudaMemsetAsync", "cudaMemcpyAsync",
};
#define N_STATS (sizeof stats_names / sizeof stats_names[0])
#define MEMORY_FROM 3

/* The STRING_IDS ids of the names of a list (id 0 for a name the DB does not hold). */
typedef struct launch_ids {
    int64_t id[N_LAUNCH];
    size_t n;
} launch_ids;

static tb_status read_launch_ids(const metric_ctx *m, const char *what, const char *const *names, size_t n,
                                 launch_ids *l, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    l->n = 0;
    if (sqlite3_prepare_v2(m->db, "SELECT id FROM STRING_IDS WHERE value = ?", -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
    for (size_t i = 0; i < n && i < N_LAUNCH; i++) {
        sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC);
        int s = sqlite3_step(st);
        l->id[l->n++] = s == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        if (s != SQLITE_ROW && s != SQLITE_DONE) {
            sqlite3_finalize(st);
            return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return TB_OK;
}

/* The index of name in l plus 1, or 0 when it is not there. */
static size_t launch_index(const launch_ids *l, int64_t name)
{
    for (size_t i = 0; name && i < l->n; i++)
        if (l->id[i] == name)
            return i + 1;
    return 0;
}

/* ---- change series (queue length, memory bandwidth) ----------------------------- */

/*
 * HTA's two series of a rank are built alike: each event adds delta to its
 * key's series at one time and takes it back at a later one (a queue: +1 at
 * the launch, -1 at the task's start; a memory kind: +bw at the start, -bw
 * at the end); sorted by key and time, the series is the running sum (in
 * float64, in that order), one row per change.
 */
typedef struct change {
    int64_t key, ts, ord; /* ord: the event's place in the trace */
    int back;             /* 0: the event's +delta, 1: its -delta (later at equal times) */
    double delta;
    size_t task;          /* the event's index in the rank's evvec */
} change;

typedef struct changes {
    change *v;
    size_t n, cap;
} changes;

static int cmp_change(const void *a, const void *b)
{
    const change *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->back != y->back)
        return x->back - y->back; /* a launch before a start, a start before an end */
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* Adds an event's two changes: +delta at ts, -delta at back_ts. */
static int push_changes(changes *c, int64_t key, int64_t ts, int64_t back_ts, int64_t ord, double delta, size_t task)
{
    return VEC_PUSH(c->v, c->n, c->cap, ((change){key, ts, ord, 0, delta, task})) ||
           VEC_PUSH(c->v, c->n, c->cap, ((change){key, back_ts, ord, 1, -delta, task}));
}

/* One row of a series: change c->v[i], the running sum of its key. */
typedef tb_status (*change_row)(hta_ctx *h, int64_t rank, const changes *c, size_t i, double sum, const void *cx,
                                tb_error *err);

/* Sorts c and calls row for each change in order with its key's running sum. */
static tb_status change_series(hta_ctx *h, int64_t rank, changes *c, change_row row, const void *cx, tb_error *err)
{
    if (c->n) /* qsort of NULL, even of 0 items, is undefined */
        qsort(c->v, c->n, sizeof *c->v, cmp_change);
    double sum = 0;
    tb_status rc = TB_OK;
    for (size_t i = 0; !rc && i < c->n; i++) {
        if (i == 0 || c->v[i].key != c->v[i - 1].key)
            sum = 0;
        sum += c->v[i].delta;
        rc = row(h, rank, c, i, sum, cx, err);
    }
    return rc;
}

/* ---- queue_length ----------------------------------------------------------- */

/*
 * The changes of a rank's queues, keyed by stream, into *c (owned by the
 * caller). Tasks that are communication ops (no stream) or whose launching
 * call is not one of launch_names do not count, nor does a task that is the
 * first element of its trace's traceEvents: HTA links a launch to its task
 * by the task's place in that array and counts a launch only when that
 * place is above 0 (its get_runtime_launch_events_mask).
 */
static tb_status queue_changes(const hta_ctx *h, const launch_ids *l, const evvec *ev, changes *c, tb_error *err)
{
    for (size_t i = 0; i < ev->n; i++) {
        const dev_ev *e = &ev->v[i];
        if (e->op || !e->linked || e->first || !launch_index(l, e->launch_name))
            continue;
        if (push_changes(c, e->stream, e->launch, e->s, e->ord, 1, i))
            return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    return TB_OK;
}

/* A row of the queue length series: dur is the time to the stream's next change. */
static tb_status queue_row(hta_ctx *h, int64_t rank, const changes *c, size_t i, double sum, const void *cx,
                           tb_error *err)
{
    (void)cx;
    const change *x = &c->v[i];
    if (sum < 0)
        return tb_error_set(err, TB_ERR_INTERNAL, "%s: rank %lld: stream %lld: queue length %lld at %lld", h->what,
                            (long long)metrics_rank_shown(h->m, rank), (long long)x->key, (long long)sum,
                            (long long)x->ts);
    sqlite3_bind_int64(h->ins, 1, rank);
    sqlite3_bind_int64(h->ins, 2, x->key);
    hta_bind_us(h, 3, x->ts);
    sqlite3_bind_int64(h->ins, 4, (int64_t)sum);
    if (i + 1 < c->n && c->v[i + 1].key == x->key)
        hta_bind_us(h, 5, c->v[i + 1].ts - x->ts);
    return hta_insert_done(h, err);
}

/*
 * HTA's queue length series of one rank: per stream, the running sum of
 * the changes, one row per change; dur is the time to the stream's next
 * change (NULL for its last). A running sum below zero would mean a task
 * started before its own launch in this order: an internal error.
 */
static tb_status queue_rank(void *ctx, int64_t rank, evvec *ev, tb_error *err)
{
    hta_ctx *h = ctx;
    if (!hta_prepare(h, rank, ev))
        return TB_OK;
    changes c = {0};
    tb_status rc = queue_changes(h, h->extra, ev, &c, err);
    if (!rc && !c.n && h->m->note) {
        char msg[300];
        snprintf(msg, sizeof msg,
                 "%s: rank %lld: no row: none of its %zu device tasks was launched by a call HTA counts "
                 "(cudaLaunchKernel, cudaMemcpyAsync, hipLaunchKernel, ...)",
                 h->what, (long long)metrics_rank_shown(h->m, rank), ev->n);
        h->m->note(h->m->ctx, msg);
    }
    if (!rc)
        rc = change_series(h, rank, &c, queue_row, NULL, err);
    free(c.v);
    return rc;
}

/* Where hta_queue_at keeps a change's queue length: the task's launch or start slot. */
typedef struct queue_slots {
    int64_t *qrun, *qdev;
} queue_slots;

static tb_status queue_slot_row(hta_ctx *h, int64_t rank, const changes *c, size_t i, double sum, const void *cx,
                                tb_error *err)
{
    (void)h, (void)rank, (void)err;
    const queue_slots *qs = cx;
    const change *x = &c->v[i];
    *(x->back ? &qs->qdev[x->task] : &qs->qrun[x->task]) = (int64_t)sum;
    return TB_OK;
}

tb_status hta_queue_at(const hta_ctx *h, const evvec *ev, int64_t *qrun, int64_t *qdev, tb_error *err)
{
    launch_ids l;
    changes c = {0};
    tb_status rc = read_launch_ids(h->m, h->what, launch_names, N_LAUNCH, &l, err);
    if (!rc)
        rc = queue_changes(h, &l, ev, &c, err);
    for (size_t i = 0; !rc && i < ev->n; i++)
        qrun[i] = qdev[i] = -1;
    if (!rc) /* the series' row function only writes the slots: h is not changed */
        rc = change_series((hta_ctx *)h, 0, &c, queue_slot_row, &(queue_slots){qrun, qdev}, err);
    free(c.v);
    return rc;
}

static tb_status build_queue(const metric_ctx *m, tb_error *err)
{
    static const char what[] = "queue_length";
    launch_ids l;
    tb_status rc = read_launch_ids(m, what, launch_names, N_LAUNCH, &l, err);
    if (rc)
        return rc;
    return hta_build(m, what,
                     "DROP TABLE IF EXISTS temp.queue_length;"
                     "CREATE TEMP TABLE queue_length (rank INTEGER, stream INTEGER, ts NUMERIC, "
                     "queue_length INTEGER, dur NUMERIC)",
                     "INSERT INTO temp.queue_length VALUES (?, ?, ?, ?, ?)", queue_rank, &l, err);
}

/* ---- queue_length_summary ------------------------------------------------------ */

/* numpy's percentile with linear interpolation over sorted v[0..n). */
static double quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double t = pos - (double)lo;
    double a = v[lo], b = v[hi];
    /* numpy's lerp: from the nearer end */
    return t >= 0.5 ? b - (b - a) * (1.0 - t) : a + (b - a) * t;
}

/* One group's describe() as pandas computes it: count, mean, std (n - 1,
 * two passes; NULL below 2 values), min, 25 %, 50 %, 75 %, max of sorted
 * values, bound from column 3 on. */
static void bind_describe(sqlite3_stmt *ins, const double *v, size_t n)
{
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        sq += (v[i] - mean) * (v[i] - mean);
    sqlite3_bind_int64(ins, 3, (int64_t)n);
    sqlite3_bind_double(ins, 4, mean);
    if (n > 1)
        sqlite3_bind_double(ins, 5, sqrt(sq / (double)(n - 1)));
    sqlite3_bind_double(ins, 6, v[0]);
    sqlite3_bind_double(ins, 7, quantile(v, n, 0.25));
    sqlite3_bind_double(ins, 8, quantile(v, n, 0.5));
    sqlite3_bind_double(ins, 9, quantile(v, n, 0.75));
    sqlite3_bind_double(ins, 10, v[n - 1]);
}

/* Inserts the describe() of one group (its rank and key from sel's row that began it). */
static tb_status describe_group(const metric_ctx *m, const char *what, sqlite3_stmt *ins, int64_t rank,
                                const char *key, int64_t ikey, const double *v, size_t n, tb_error *err)
{
    sqlite3_bind_int64(ins, 1, rank);
    if (key)
        sqlite3_bind_text(ins, 2, key, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_int64(ins, 2, ikey);
    bind_describe(ins, v, n);
    int d = sqlite3_step(ins);
    sqlite3_reset(ins);
    sqlite3_clear_bindings(ins);
    return d == SQLITE_DONE ? TB_OK : tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
}

/*
 * Groups sel's rows (rank, key, value; key an integer, or text when
 * text_key; ordered by rank, key, value) and inserts each group's
 * describe() through ins.
 */
static tb_status summary_rows(const metric_ctx *m, const char *what, sqlite3_stmt *sel, sqlite3_stmt *ins,
                              int text_key, tb_error *err)
{
    double *v = NULL;
    int64_t rank = 0, ikey = 0;
    char *key = NULL;
    size_t n = 0, cap = 0;
    tb_status rc = TB_OK;
    int s;
    for (;;) {
        s = sqlite3_step(sel);
        int row = s == SQLITE_ROW;
        const char *k = row && text_key ? (const char *)sqlite3_column_text(sel, 1) : NULL;
        int same = row && sqlite3_column_int64(sel, 0) == rank &&
                   (text_key ? k && key && !strcmp(k, key) : sqlite3_column_int64(sel, 1) == ikey);
        if (n && !same) {
            if ((rc = describe_group(m, what, ins, rank, key, ikey, v, n, err)))
                break;
            n = 0;
        }
        if (!row)
            break;
        if (!n) {
            rank = sqlite3_column_int64(sel, 0);
            ikey = sqlite3_column_int64(sel, 1);
            free(key);
            key = text_key ? strdup(k ? k : "") : NULL;
            if (text_key && !key) {
                rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
                break;
            }
        }
        if (VEC_PUSH(v, n, cap, sqlite3_column_double(sel, 2))) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
            break;
        }
    }
    if (!rc && s != SQLITE_DONE)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
    free(v);
    free(key);
    return rc;
}

/* A summary table: create, then the describe() of each group of select. */
static tb_status build_summary(const metric_ctx *m, const char *what, const char *create, const char *select,
                               const char *insert, int text_key, tb_error *err)
{
    tb_status rc = metrics_exec(m, what, create, err);
    if (rc)
        return rc;
    sqlite3_stmt *sel = NULL, *ins = NULL;
    if (sqlite3_prepare_v2(m->db, select, -1, &sel, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(m->db, insert, -1, &ins, NULL) != SQLITE_OK)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
    else
        rc = summary_rows(m, what, sel, ins, text_key, err);
    sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    return rc;
}

/* HTA's get_queue_length_summary: describe() of each rank's and stream's series. */
static tb_status build_queue_summary(const metric_ctx *m, tb_error *err)
{
    return build_summary(m, "queue_length_summary",
                         "DROP TABLE IF EXISTS temp.queue_length_summary;"
                         "CREATE TEMP TABLE queue_length_summary (rank INTEGER, stream INTEGER, count INTEGER, "
                         "mean REAL, std REAL, min REAL, p25 REAL, p50 REAL, p75 REAL, max REAL)",
                         "SELECT rank, stream, queue_length FROM temp.queue_length ORDER BY rank, stream, queue_length",
                         "INSERT INTO temp.queue_length_summary VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", 0, err);
}

/* HTA's get_memory_bw_summary: describe() of each rank's and kind's
 * positive points of the bandwidth series. */
static tb_status build_membw_summary(const metric_ctx *m, tb_error *err)
{
    return build_summary(m, "memory_bw_summary",
                         "DROP TABLE IF EXISTS temp.memory_bw_summary;"
                         "CREATE TEMP TABLE memory_bw_summary (rank INTEGER, name TEXT, count INTEGER, "
                         "mean REAL, std REAL, min REAL, p25 REAL, p50 REAL, p75 REAL, max REAL)",
                         "SELECT rank, name, memory_bw_gbps FROM temp.memory_bw WHERE memory_bw_gbps > 0 "
                         "ORDER BY rank, name, memory_bw_gbps",
                         "INSERT INTO temp.memory_bw_summary VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", 1, err);
}

/* ---- hta_trace_span ----------------------------------------------------------- */

/*
 * HTA's get_trace_duration for one rank: the last minus the first start
 * among the events HTA keeps: its kept device tasks, and its host events
 * (runtime and driver calls, operators, annotations, other complete slices
 * with a category, except the profiler's own `Trace` slice) that start
 * before the last step's start when the window cuts (2 or more steps and
 * hta.drop_last_step; at or before its end without it). A rank without
 * device work gets the span of its host events, as in HTA; one without
 * any such event no row (a note).
 */
static tb_status span_rank(void *ctx, int64_t rank, evvec *ev, tb_error *err)
{
    static const char sql[] = "SELECT startNs, ifnull(endNs, startNs), 1 FROM CANN_API WHERE ifnull(rankId, 0) = ?1 "
                              "AND startNs IS NOT NULL "
                              "UNION ALL SELECT startNs, ifnull(endNs, startNs), 1 FROM PYTORCH_API "
                              "WHERE ifnull(rankId, 0) = ?1 AND startNs IS NOT NULL "
                              "UNION ALL SELECT startNs, endNs, 0 FROM TB_EVENT WHERE ifnull(rankId, 0) = ?1 AND ph = 'X' "
                              "AND startNs IS NOT NULL AND endNs IS NOT NULL AND cat IS NOT NULL "
                              "AND cat NOT IN (SELECT id FROM STRING_IDS WHERE value = 'Trace')";
    hta_ctx *h = ctx;
    hta_cut_info ci;
    /* a rank without (kept) device tasks: the span of its host events, as HTA's */
    hta_filter(h, rank, ev, &ci);
    const step_cut *cut = hta_cut(h, rank);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < ev->n; i++) {
        lo = ev->v[i].s < lo ? ev->v[i].s : lo;
        hi = ev->v[i].s > hi ? ev->v[i].s : hi;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h->m->db, sql, -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    sqlite3_bind_int64(st, 1, rank);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t ts, te;
        hta_time(h->o.round_us, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), &ts, &te);
        if (!hta_host_kept(h, cut, ts, te, sqlite3_column_int(st, 2)))
            continue;
        lo = ts < lo ? ts : lo;
        hi = ts > hi ? ts : hi;
    }
    sqlite3_finalize(st);
    if (s != SQLITE_DONE)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    if (lo > hi) { /* no event HTA keeps: no row, and why */
        if (ev->read)
            hta_no_row(h, rank, ev, &ci);
        else
            metrics_notef(h->m, "%s: rank %lld: no row: the rank has no device task, host call or slice", h->what,
                          (long long)metrics_rank_shown(h->m, rank));
        return TB_OK;
    }
    sqlite3_bind_int64(h->ins, 1, rank);
    hta_bind_us(h, 2, lo);
    hta_bind_us(h, 3, hi);
    hta_bind_us(h, 4, hi - lo);
    return hta_insert_done(h, err);
}

static tb_status build_span(const metric_ctx *m, tb_error *err)
{
    return hta_build(m, "hta_trace_span",
                     "DROP TABLE IF EXISTS temp.hta_trace_span;"
                     "CREATE TEMP TABLE hta_trace_span (rank INTEGER, first_ts NUMERIC, last_ts NUMERIC, "
                     "duration NUMERIC)",
                     "INSERT INTO temp.hta_trace_span VALUES (?, ?, ?, ?)", span_rank, NULL, err);
}

/* ---- kernel_launch_stats -------------------------------------------------------- */

/*
 * HTA's get_cuda_kernel_launch_stats for one rank: one row per device task
 * launched by one of stats_names, with the launching call's duration, the
 * task's duration and the launch delay (task start - call end, 0 when
 * negative), all in HTA's domain; memory is 1 for the memory operations'
 * calls (cudaMemsetAsync, cudaMemcpyAsync). In the task's order.
 */
static tb_status launch_stats_rank(void *ctx, int64_t rank, evvec *ev, tb_error *err)
{
    hta_ctx *h = ctx;
    const launch_ids *l = h->extra;
    if (!hta_prepare(h, rank, ev))
        return TB_OK;
    for (size_t i = 0; i < ev->n; i++) {
        const dev_ev *e = &ev->v[i];
        size_t k = e->op || !e->linked ? 0 : launch_index(l, e->launch_name);
        if (!k)
            continue;
        int64_t delay = e->s - e->launch_end;
        sqlite3_bind_int64(h->ins, 1, rank);
        sqlite3_bind_int64(h->ins, 2, e->conn);
        sqlite3_bind_text(h->ins, 3, stats_names[k - 1], -1, SQLITE_STATIC);
        sqlite3_bind_int(h->ins, 4, k - 1 >= MEMORY_FROM);
        hta_bind_us(h, 5, e->launch_end - e->launch);
        hta_bind_us(h, 6, e->e - e->s);
        hta_bind_us(h, 7, delay > 0 ? delay : 0);
        tb_status rc = hta_insert_done(h, err);
        if (rc)
            return rc;
    }
    return TB_OK;
}

static tb_status build_launch_stats(const metric_ctx *m, tb_error *err)
{
    static const char what[] = "kernel_launch_stats";
    launch_ids l;
    tb_status rc = read_launch_ids(m, what, stats_names, N_STATS, &l, err);
    if (rc)
        return rc;
    return hta_build(m, what,
                     "DROP TABLE IF EXISTS temp.kernel_launch_stats;"
                     "CREATE TEMP TABLE kernel_launch_stats (rank INTEGER, correlation INTEGER, launch TEXT, "
                     "memory INTEGER, cpu_duration NUMERIC, gpu_duration NUMERIC, launch_delay NUMERIC)",
                     "INSERT INTO temp.kernel_launch_stats VALUES (?, ?, ?, ?, ?, ?, ?)", launch_stats_rank, &l,
                     err);
}

/* ---- memory_bw ------------------------------------------------------------------ */

/* A memory operation's bytes and exact duration, by globalTaskId. */
typedef struct mem_info {
    int64_t task, bytes, dur_ns;
    double bw;     /* the trace's bandwidth (GB/s), when given */
    int has_bw;
    char kind[16]; /* HTA's memory kernel type */
} mem_info;

/* HTA's get_memory_kernel_type: "Memset", the first 11 bytes of a Memcpy
 * name ("Memcpy HtoD"), else "Memcpy Unknown". */
static void memory_kind(const char *name, char out[16])
{
    if (!strncmp(name, "Memset", 6))
        snprintf(out, 16, "Memset");
    else if (strncmp(name, "Memcpy", 6))
        snprintf(out, 16, "Memcpy Unknown");
    else
        snprintf(out, 16, "%.11s", name);
}

static int cmp_task(const void *a, const void *b)
{
    const mem_info *x = a, *y = b;
    return (x->task > y->task) - (x->task < y->task);
}

/* A read of memory operations into a growing array. */
typedef struct mem_read {
    mem_info **v;
    size_t *n, cap;
} mem_read;

/* A memory operation of read_mem_info's SQL. */
static int mem_row(sqlite3_stmt *st, void *ctx)
{
    mem_read *r = ctx;
    mem_info mi = {.task = sqlite3_column_int64(st, 0),
                   .bytes = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1),
                   .dur_ns = sqlite3_column_int64(st, 2), .has_bw = sqlite3_column_type(st, 4) != SQLITE_NULL,
                   .bw = sqlite3_column_double(st, 4)};
    const char *name = (const char *)sqlite3_column_text(st, 3);
    memory_kind(name ? name : "", mi.kind);
    return VEC_PUSH(*r->v, *r->n, r->cap, mi);
}

/* The rank's memory operations (MEMCPY_INFO with their tasks and the
 * trace's bandwidths, TB_MEMCPY_BW, absent from DBs of earlier versions),
 * sorted by task. */
static tb_status read_mem_info(const hta_ctx *h, int64_t rank, mem_info **out, size_t *n, tb_error *err)
{
    static const char with_bw[] = "SELECT d.globalTaskId, m.size, d.endNs - d.startNs, d.name, "
                                  "(SELECT b.bandwidth FROM TB_MEMCPY_BW b WHERE b.globalTaskId = d.globalTaskId "
                                  "  AND b.rankId IS d.rankId LIMIT 1) FROM device_task d "
                                  "JOIN MEMCPY_INFO m ON m.globalTaskId = d.globalTaskId "
                                  "WHERE ifnull(d.rankId, 0) = ? AND d.startNs IS NOT NULL AND d.endNs IS NOT NULL";
    static const char without[] = "SELECT d.globalTaskId, m.size, d.endNs - d.startNs, d.name, NULL "
                                  "FROM device_task d JOIN MEMCPY_INFO m ON m.globalTaskId = d.globalTaskId "
                                  "WHERE ifnull(d.rankId, 0) = ? AND d.startNs IS NOT NULL AND d.endNs IS NOT NULL";
    sqlite3_stmt *st = NULL;
    *out = NULL;
    *n = 0;
    int has = 0;
    if (sqlite3_prepare_v2(h->m->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'TB_MEMCPY_BW'", -1,
                           &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    has = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    mem_read r = {out, n, 0};
    tb_status rc = metrics_rows(h->m->db, h->what, has ? with_bw : without, rank, mem_row, &r, err);
    if (!rc && *n)
        qsort(*out, *n, sizeof **out, cmp_task);
    return rc;
}

/* Kinds seen in a rank, in order of first sight, at most 8 (HTA has 5). */
typedef struct kinds {
    char name[8][16];
    int n;
} kinds;

static int kind_index(kinds *k, const char *name)
{
    for (int i = 0; i < k->n; i++)
        if (!strcmp(k->name[i], name))
            return i;
    if (k->n == 8)
        return -1;
    snprintf(k->name[k->n], 16, "%s", name);
    return k->n++;
}

/*
 * The rank's bandwidth changes, keyed by kind (an index into k): each
 * memory operation of HTA's classes (K_MEM) gives +bw at its start and -bw
 * at its end (start + duration, a duration of 0 counted as 1), bw = the
 * trace's "memory bandwidth (GB/s)" when it gives one (HTA's value), else
 * bytes / exact ns = GB/s (0 without a byte count, as HTA's default); at
 * equal times starts first, then the trace's order.
 */
static tb_status bw_changes(const hta_ctx *h, int64_t rank, const evvec *ev, changes *c, kinds *k, tb_error *err)
{
    mem_info *mi;
    size_t nmi;
    tb_status rc = read_mem_info(h, rank, &mi, &nmi, err);
    for (size_t i = 0; !rc && i < ev->n; i++) {
        const dev_ev *e = &ev->v[i];
        if (e->op || e->kind != K_MEM)
            continue;
        mem_info key = {.task = e->ord};
        const mem_info *f = nmi ? bsearch(&key, mi, nmi, sizeof *mi, cmp_task) : NULL;
        double bw = f && f->has_bw ? f->bw
                    : f && f->bytes >= 0 && f->dur_ns > 0 ? (double)f->bytes / (double)f->dur_ns : 0.0;
        int kd = kind_index(k, f ? f->kind : "Memcpy Unknown");
        if (kd < 0) {
            rc = tb_error_set(err, TB_ERR_INTERNAL, "%s: more than 8 memory kinds", h->what);
            break;
        }
        int64_t dur = e->e - e->s;
        if (dur == 0)
            dur = h->o.round_us ? 1 : 1000;
        if (push_changes(c, kd, e->s, e->s + dur, (int64_t)i, bw, i))
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    free(mi);
    return rc;
}

/* A row of the bandwidth series: the kind's name, the time, the running sum. */
static tb_status membw_row(hta_ctx *h, int64_t rank, const changes *c, size_t i, double sum, const void *cx,
                           tb_error *err)
{
    const kinds *k = cx;
    sqlite3_bind_int64(h->ins, 1, rank);
    sqlite3_bind_text(h->ins, 2, k->name[c->v[i].key], -1, SQLITE_TRANSIENT);
    hta_bind_us(h, 3, c->v[i].ts);
    sqlite3_bind_double(h->ins, 4, sum);
    return hta_insert_done(h, err);
}

/*
 * HTA's get_memory_bw_time_series for one rank: per memory kind, the
 * running sum (in float64, in the changes' order) of the bandwidths, one
 * row per change.
 */
static tb_status membw_rank(void *ctx, int64_t rank, evvec *ev, tb_error *err)
{
    hta_ctx *h = ctx;
    if (!hta_prepare(h, rank, ev))
        return TB_OK;
    changes c = {0};
    kinds k = {.n = 0};
    tb_status rc = bw_changes(h, rank, ev, &c, &k, err);
    if (!rc)
        rc = change_series(h, rank, &c, membw_row, &k, err);
    free(c.v);
    return rc;
}

static tb_status build_membw(const metric_ctx *m, tb_error *err)
{
    return hta_build(m, "memory_bw",
                     "DROP TABLE IF EXISTS temp.memory_bw;"
                     "CREATE TEMP TABLE memory_bw (rank INTEGER, name TEXT, ts NUMERIC, memory_bw_gbps REAL)",
                     "INSERT INTO temp.memory_bw VALUES (?, ?, ?, ?)", membw_rank, NULL, err);
}

/* ---- user_annotation ------------------------------------------------------------- */

/*
 * The user annotations HTA's get_gpu_user_annotation_breakdown reads, for
 * one rank: the GPU's (Kineto's gpu_user_annotation slices, in TB_EVENT)
 * and the host's (user_annotation, PYTORCH_API), each with its name and its
 * start and duration in HTA's domain, kept by HTA's window as host events
 * are (they start before the last step's start when it cuts).
 */
static tb_status annotation_rank(void *ctx, int64_t rank, evvec *ev, tb_error *err)
{
    static const char sql[] =
        "SELECT 'gpu', n.value, e.startNs, e.endNs FROM TB_EVENT e JOIN STRING_IDS n ON n.id = e.name "
        "WHERE ifnull(e.rankId, 0) = ?1 AND e.ph = 'X' AND e.startNs IS NOT NULL AND e.endNs IS NOT NULL "
        "  AND e.cat = (SELECT id FROM STRING_IDS WHERE value = 'gpu_user_annotation') "
        "UNION ALL "
        "SELECT 'cpu', n.value, p.startNs, p.endNs FROM PYTORCH_API p JOIN STRING_IDS n ON n.id = p.name "
        "WHERE ifnull(p.rankId, 0) = ?1 AND p.type = 60003 AND p.startNs IS NOT NULL AND p.endNs IS NOT NULL";
    hta_ctx *h = ctx;
    (void)ev;
    const step_cut *cut = hta_cut(h, rank);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h->m->db, sql, -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    sqlite3_bind_int64(st, 1, rank);
    int s;
    tb_status rc = TB_OK;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t ts, te;
        hta_time(h->o.round_us, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3), &ts, &te);
        /* the GPU's annotations are no CPU events to HTA */
        if (!hta_host_kept(h, cut, ts, te, !strcmp((const char *)sqlite3_column_text(st, 0), "cpu")))
            continue;
        sqlite3_bind_int64(h->ins, 1, rank);
        sqlite3_bind_text(h->ins, 2, (const char *)sqlite3_column_text(st, 0), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(h->ins, 3, (const char *)sqlite3_column_text(st, 1), -1, SQLITE_TRANSIENT);
        hta_bind_us(h, 4, ts);
        hta_bind_us(h, 5, te - ts);
        rc = hta_insert_done(h, err);
    }
    if (!rc && s != SQLITE_DONE)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    sqlite3_finalize(st);
    return rc;
}

static tb_status build_annotation(const metric_ctx *m, tb_error *err)
{
    return hta_build(m, "user_annotation",
                     "DROP TABLE IF EXISTS temp.user_annotation;"
                     "CREATE TEMP TABLE user_annotation (rank INTEGER, source TEXT, name TEXT, ts NUMERIC, "
                     "dur NUMERIC)",
                     "INSERT INTO temp.user_annotation VALUES (?, ?, ?, ?, ?)", annotation_rank, NULL, err);
}

/* ---- aten_op_kernels ------------------------------------------------------------- */

/* An ATen operator (a host op named aten::...), in HTA's domain. */
typedef struct aten_op {
    int64_t ts, end, tid, name, row;
} aten_op;

/* One kernel launch attributed to the ATen op that wraps its call. */
typedef struct aten_launch {
    const aten_op *op;
    int64_t row;                  /* the call's place in the trace (INT64_MAX: unknown) */
    int64_t rs, ds, corr, kernel; /* call start, kernel start, correlation, kernel name id */
} aten_launch;

static int cmp_op_ts(const void *a, const void *b)
{
    const aten_op *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* A read of a rank's ATen ops into a growing array, with its step cut. */
typedef struct op_read {
    const hta_ctx *h;
    const step_cut *cut;
    aten_op **v;
    size_t *n, cap;
} op_read;

/* An op of read_aten_ops' SQL, kept when HTA's window keeps it. */
static int op_row(sqlite3_stmt *st, void *ctx)
{
    op_read *r = ctx;
    aten_op o = {.tid = sqlite3_column_int64(st, 2), .name = sqlite3_column_int64(st, 3),
                 .row = sqlite3_column_int64(st, 4)};
    hta_time(r->h->o.round_us, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), &o.ts, &o.end);
    if (!hta_host_kept(r->h, r->cut, o.ts, o.end, 1))
        return 0;
    return VEC_PUSH(*r->v, *r->n, r->cap, o);
}

/* The rank's ATen ops that HTA keeps (its window), sorted by start then trace order. */
static tb_status read_aten_ops(const hta_ctx *h, int64_t rank, aten_op **out, size_t *n, tb_error *err)
{
    static const char sql[] = "SELECT startNs, endNs, globalTid, name, rowid FROM PYTORCH_API "
                              "WHERE ifnull(rankId, 0) = ? AND startNs IS NOT NULL AND endNs IS NOT NULL "
                              "AND name IN (SELECT id FROM STRING_IDS WHERE value GLOB 'aten::*')";
    *out = NULL;
    *n = 0;
    op_read r = {h, hta_cut(h, rank), out, n, 0};
    tb_status rc = metrics_rows(h->m->db, h->what, sql, rank, op_row, &r, err);
    if (!rc && *n)
        qsort(*out, *n, sizeof **out, cmp_op_ts);
    return rc;
}

/*
 * HTA's deepest ATen op of a call [rs, re]: of the ops (of any thread) that
 * start at or before rs and end at or after re, the latest to start; among
 * equal starts the first in the trace. ops is sorted by start; maxdur is
 * the longest op, which bounds the search back.
 */
static const aten_op *deepest_op(const aten_op *ops, size_t n, int64_t maxdur, int64_t rs, int64_t re)
{
    size_t hi = n; /* first op starting after rs */
    size_t lo = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ops[mid].ts <= rs)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0;) {
        if (ops[i].ts + maxdur < re)
            break;
        if (ops[i].end < re)
            continue;
        /* the first of its start in trace order that also wraps the call */
        size_t j = i;
        while (j > 0 && ops[j - 1].ts == ops[i].ts)
            j--;
        for (; j <= i; j++)
            if (ops[j].end >= re)
                return &ops[j];
    }
    return NULL;
}

/* An op's launches in HTA's order: the order of the calls in the trace (HTA
 * walks its rows, which keep the file's order), by start where unknown. */
static int cmp_launch(const void *a, const void *b)
{
    const aten_launch *x = a, *y = b;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    if (x->rs != y->rs)
        return x->rs < y->rs ? -1 : 1;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

/* HTA's get_kernel_launch_ids: names matching (cuda.*LaunchKernel)|
 * (cuLaunchKernel)|(^runFunction) from their start. */
#define KERNEL_LAUNCH_NAMES \
    "SELECT id FROM STRING_IDS WHERE value GLOB 'cuda*LaunchKernel*' OR value GLOB 'cuLaunchKernel*' " \
    "OR value GLOB 'runFunction*'"

/* The STRING_IDS ids of the kernel launch calls, sorted. */
static tb_status kernel_launch_names(const hta_ctx *h, int64_t **ids, size_t *n, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    *ids = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(h->m->db, KERNEL_LAUNCH_NAMES " ORDER BY id", -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    return metrics_read_int64(h->m->db, st, h->what, 1, ids, n, err);
}

/*
 * The place in the trace of the rank's kernel launch calls, as
 * (connectionId, CANN_API rowid) pairs by connectionId into *pairs (free
 * it): a load stores a trace's calls in the trace's order. Under a window
 * (or a run per rank) CANN_API is a view, whose rows have no rowid: the
 * places are then those of the same calls in the DB's own table.
 */
static tb_status launch_places(const hta_ctx *h, int64_t rank, int64_t **pairs, size_t *n, tb_error *err)
{
    static const char plain[] = "SELECT connectionId, min(rowid) FROM CANN_API WHERE ifnull(rankId, 0) = ? "
                                "AND connectionId IS NOT NULL AND name IN (" KERNEL_LAUNCH_NAMES ") "
                                "GROUP BY connectionId ORDER BY connectionId";
    static const char viewed[] =
        "SELECT v.connectionId, min(t.rowid) FROM CANN_API v JOIN main.CANN_API t "
        "  ON t.connectionId = v.connectionId AND t.startNs IS v.startNs AND t.name = v.name "
        "  AND t.globalTid IS v.globalTid "
        "WHERE ifnull(v.rankId, 0) = ? AND v.connectionId IS NOT NULL AND v.name IN (" KERNEL_LAUNCH_NAMES ") "
        "GROUP BY v.connectionId ORDER BY v.connectionId";
    sqlite3_stmt *st = NULL;
    *pairs = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(h->m->db, "SELECT 1 FROM temp.sqlite_master WHERE type = 'view' AND name = 'CANN_API'",
                           -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    int view = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(h->m->db, view ? viewed : plain, -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    sqlite3_bind_int64(st, 1, rank);
    return metrics_read_int64(h->m->db, st, h->what, 2, pairs, n, err);
}

static int has_id(const int64_t *ids, size_t n, int64_t id)
{
    return n && bsearch(&id, ids, n, sizeof *ids, sort_cmp_i64) != NULL;
}

/* The name of a STRING_IDS id (name_of: its SELECT), appended to buf. */
static void append_name(sqlite3_stmt *name_of, sqlite3_str *buf, int64_t id)
{
    sqlite3_bind_int64(name_of, 1, id);
    if (sqlite3_step(name_of) == SQLITE_ROW)
        sqlite3_str_appendall(buf, (const char *)sqlite3_column_text(name_of, 0));
    sqlite3_reset(name_of);
}

/* Inserts one ATen op instance: its launches l[0..n) in launch order. */
static tb_status aten_insert(hta_ctx *h, int64_t rank, const aten_launch *l, size_t n, sqlite3_stmt *name_of,
                             tb_error *err)
{
    sqlite3_str *seq = sqlite3_str_new(h->m->db), *corr = sqlite3_str_new(h->m->db);
    for (size_t i = 0; i < n; i++) {
        if (i) {
            sqlite3_str_appendall(seq, " -> ");
            sqlite3_str_appendall(corr, ", ");
        }
        append_name(name_of, seq, l[i].kernel);
        sqlite3_str_appendf(corr, "%lld", (long long)l[i].corr);
    }
    char *s1 = sqlite3_str_finish(seq), *s2 = sqlite3_str_finish(corr);
    if (!s1 || !s2) {
        sqlite3_free(s1);
        sqlite3_free(s2);
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    sqlite3_bind_int64(h->ins, 1, rank);
    sqlite3_bind_int64(h->ins, 2, l[0].op->tid);
    sqlite3_str *op = sqlite3_str_new(h->m->db);
    append_name(name_of, op, l[0].op->name);
    char *s3 = sqlite3_str_finish(op);
    sqlite3_bind_text(h->ins, 3, s3 ? s3 : "", -1, SQLITE_TRANSIENT);
    hta_bind_us(h, 4, l[0].op->ts);
    sqlite3_bind_text(h->ins, 5, s1, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(h->ins, 6, s2, -1, SQLITE_TRANSIENT);
    hta_bind_us(h, 7, l[0].rs - l[0].op->ts);
    hta_bind_us(h, 8, l[0].ds - l[0].rs);
    sqlite3_bind_int64(h->ins, 9, (int64_t)n);
    sqlite3_free(s1);
    sqlite3_free(s2);
    sqlite3_free(s3);
    return hta_insert_done(h, err);
}

/* The rank's launches with their deepest ATen op, sorted by op and launch order, into *out. */
static tb_status aten_launches(hta_ctx *h, int64_t rank, const evvec *ev, const aten_op *ops, size_t nops,
                               aten_launch **out, size_t *n, tb_error *err)
{
    int64_t *ids = NULL, *names = NULL, *places = NULL, maxdur = 0;
    size_t nids = 0, nnames = 0, nplaces = 0, cap = 0;
    *out = NULL;
    *n = 0;
    tb_status rc = kernel_launch_names(h, &ids, &nids, err);
    if (!rc)
        rc = hta_task_names(h, rank, &names, &nnames, err);
    if (!rc)
        rc = launch_places(h, rank, &places, &nplaces, err);
    for (size_t i = 0; i < nops; i++)
        maxdur = ops[i].end - ops[i].ts > maxdur ? ops[i].end - ops[i].ts : maxdur;
    for (size_t i = 0; !rc && i < ev->n; i++) {
        const dev_ev *e = &ev->v[i];
        if (e->op || !e->linked || !has_id(ids, nids, e->launch_name))
            continue;
        const aten_op *op = deepest_op(ops, nops, maxdur, e->launch, e->launch_end);
        int64_t row = hta_task_name(places, nplaces, e->conn); /* rowids start at 1: 0 is none */
        if (op && VEC_PUSH(*out, *n, cap, ((aten_launch){op, row ? row : INT64_MAX, e->launch, e->s, e->conn,
                                                          hta_task_name(names, nnames, e->ord)})))
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    free(ids);
    free(names);
    free(places);
    if (!rc && *n)
        qsort(*out, *n, sizeof **out, cmp_launch);
    return rc;
}

/*
 * HTA's get_aten_op_kernels_and_delay for one rank, before its grouping:
 * each kernel launch call (get_kernel_launch_ids) is attributed to the
 * deepest ATen op that wraps it (deepest_op); one row per op instance
 * (thread, op, start) with its kernels in the order of their launch calls
 * in the trace (cmp_launch), the delay from the op's start to the first of
 * those calls and from that call to its kernel.
 */
static tb_status aten_rank(void *ctx, int64_t rank, evvec *ev, tb_error *err)
{
    hta_ctx *h = ctx;
    if (!hta_prepare(h, rank, ev))
        return TB_OK;
    aten_op *ops = NULL;
    aten_launch *l = NULL;
    size_t nops = 0, nl = 0;
    sqlite3_stmt *name_of = NULL;
    tb_status rc = read_aten_ops(h, rank, &ops, &nops, err);
    if (!rc)
        rc = aten_launches(h, rank, ev, ops, nops, &l, &nl, err);
    if (!rc && sqlite3_prepare_v2(h->m->db, "SELECT value FROM STRING_IDS WHERE id = ?", -1, &name_of, NULL) !=
                   SQLITE_OK)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    for (size_t i = 0; !rc && i < nl;) {
        size_t j = i + 1;
        while (j < nl && l[j].op == l[i].op)
            j++;
        rc = aten_insert(h, rank, l + i, j - i, name_of, err);
        i = j;
    }
    sqlite3_finalize(name_of);
    free(ops);
    free(l);
    return rc;
}

static tb_status build_aten(const metric_ctx *m, tb_error *err)
{
    return hta_build(m, "aten_op_kernels",
                     "DROP TABLE IF EXISTS temp.aten_op_kernels;"
                     "CREATE TEMP TABLE aten_op_kernels (rank INTEGER, thread INTEGER, aten_op TEXT, "
                     "aten_op_start NUMERIC, kernel_sequence TEXT, correlation_ids TEXT, first_launch_delay NUMERIC, "
                     "first_runtime_delay NUMERIC, kernels INTEGER)",
                     "INSERT INTO temp.aten_op_kernels VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", aten_rank, NULL, err);
}

/* ---- straggler_metric -------------------------------------------------------------- */

/* A ProfilerStep of a rank, HTA's domain, with its number. */
typedef struct pstep {
    int64_t ts, end, iter;
} pstep;

/* A communication kernel that may be a straggler's mark. */
typedef struct comm_k {
    int64_t rank, stream, iter, name, ts, dur, ord;
} comm_k;

/* What the straggler metric gathers over the ranks. */
typedef struct strag {
    int64_t t_min, t_max;  /* first start, last end of the events in the steps */
    int have;
    int64_t *iters;        /* step numbers seen (sorted unique at the end) */
    size_t niters, capiters;
    comm_k *k;             /* the ncclKernel kernels of the steps after the first */
    size_t nk, capk;
} strag;

/* A step in the order step_of searches: by start, equal starts in the
 * order read (pos), with the latest end of it and the steps before it. */
typedef struct tstep {
    int64_t ts, end, iter, pos, maxend;
} tstep;

static int cmp_tstep(const void *a, const void *b)
{
    const tstep *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The steps st[0..n) sorted for step_of, or NULL when out of memory. */
static tstep *steps_sorted(const pstep *st, size_t n)
{
    tstep *t = malloc((n + 1) * sizeof *t);
    if (!t)
        return NULL;
    for (size_t i = 0; i < n; i++)
        t[i] = (tstep){st[i].ts, st[i].end, st[i].iter, (int64_t)i, 0};
    if (n)
        qsort(t, n, sizeof *t, cmp_tstep);
    for (size_t i = 0; i < n; i++)
        t[i].maxend = i && t[i - 1].maxend > t[i].end ? t[i - 1].maxend : t[i].end;
    return t;
}

/* HTA's iteration of a time: the step whose [ts, end) holds it (the latest
 * to start when several do; of those, the last read), else -1. From the
 * last step that starts at or before t back to the first whose end or an
 * earlier step's passes t: one step when the steps do not overlap. */
static int64_t step_of(const tstep *st, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st[mid].ts <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0 && st[i].maxend > t;)
        if (st[i].end > t)
            return st[i].iter;
    return -1;
}

static void strag_see(strag *g, int64_t ts, int64_t end)
{
    if (!g->have || ts < g->t_min)
        g->t_min = ts;
    if (!g->have || end > g->t_max)
        g->t_max = end;
    g->have = 1;
}

/*
 * Reads the rank's host events kept by HTA's window (ProfilerSteps, runtime
 * calls, ops, annotations, other complete slices but the profiler's own):
 * the steps into *st, and each event in a step into g's span.
 */
static tb_status strag_host(hta_ctx *h, int64_t rank, strag *g, tstep **sorted, size_t *nst, tb_error *err)
{
    static const char sql[] =
        "SELECT startNs, endNs, n.value, 1 FROM PYTORCH_API p LEFT JOIN STRING_IDS n ON n.id = p.name "
        " WHERE ifnull(p.rankId, 0) = ?1 AND startNs IS NOT NULL AND endNs IS NOT NULL "
        "UNION ALL SELECT startNs, endNs, NULL, 1 FROM CANN_API WHERE ifnull(rankId, 0) = ?1 "
        " AND startNs IS NOT NULL AND endNs IS NOT NULL "
        "UNION ALL SELECT startNs, endNs, n.value, 0 FROM TB_EVENT e LEFT JOIN STRING_IDS n ON n.id = e.name "
        " WHERE ifnull(e.rankId, 0) = ?1 AND e.ph = 'X' AND startNs IS NOT NULL AND endNs IS NOT NULL "
        " AND e.cat IS NOT NULL AND e.cat NOT IN (SELECT id FROM STRING_IDS WHERE value = 'Trace')";
    const step_cut *cut = hta_cut(h, rank);
    pstep *ev = NULL, *st = NULL; /* the other events (iter unused), the steps */
    size_t nev = 0, capev = 0, capst = 0;
    sqlite3_stmt *q = NULL;
    tb_status rc = TB_OK;
    *sorted = NULL;
    *nst = 0;
    if (sqlite3_prepare_v2(h->m->db, sql, -1, &q, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    sqlite3_bind_int64(q, 1, rank);
    int s;
    while (!rc && (s = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t ts, te;
        hta_time(h->o.round_us, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), &ts, &te);
        if (!hta_host_kept(h, cut, ts, te, sqlite3_column_int(q, 3)))
            continue;
        const char *name = (const char *)sqlite3_column_text(q, 2);
        long long num;
        if (name && sscanf(name, "ProfilerStep#%lld", &num) == 1 &&
            VEC_PUSH(st, *nst, capst, ((pstep){ts, te, (int64_t)num})))
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
        else if (VEC_PUSH(ev, nev, capev, ((pstep){ts, te, 0})))
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    if (!rc && s != SQLITE_DONE)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    sqlite3_finalize(q);
    for (size_t i = 0; !rc && i < *nst; i++) {
        strag_see(g, st[i].ts, st[i].end);
        if (VEC_PUSH(g->iters, g->niters, g->capiters, st[i].iter))
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    if (!rc && !(*sorted = steps_sorted(st, *nst)))
        rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    for (size_t i = 0; !rc && i < nev; i++)
        if (step_of(*sorted, *nst, ev[i].ts) >= 0)
            strag_see(g, ev[i].ts, ev[i].end);
    free(ev);
    free(st);
    return rc;
}

/*
 * One rank of HTA's straggler metric: its steps and the span of its events
 * in them (host events by their start, GPU events on a stream above 0 by
 * their launching call's start), and its ncclKernel kernels of steps after
 * the first.
 */
static tb_status strag_rank(void *ctx, int64_t rank, evvec *ev, tb_error *err)
{
    hta_ctx *h = ctx;
    strag *g = h->extra;
    if (!hta_prepare(h, rank, ev))
        return TB_OK;
    tstep *st = NULL;
    int64_t *names = NULL;
    size_t nst = 0, nnames = 0;
    sqlite3_stmt *nccl = NULL;
    tb_status rc = strag_host(h, rank, g, &st, &nst, err);
    if (!rc)
        rc = hta_task_names(h, rank, &names, &nnames, err);
    if (!rc && sqlite3_prepare_v2(h->m->db, "SELECT value GLOB 'ncclKernel*' FROM STRING_IDS WHERE id = ?", -1,
                                  &nccl, NULL) != SQLITE_OK)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    for (size_t i = 0; !rc && i < ev->n; i++) {
        const dev_ev *e = &ev->v[i];
        int64_t it = e->op || !e->linked || e->stream <= 0 ? -1 : step_of(st, nst, e->launch);
        if (it < 0)
            continue;
        strag_see(g, e->s, e->e);
        int64_t name = hta_task_name(names, nnames, e->ord);
        sqlite3_bind_int64(nccl, 1, name);
        int is_nccl = sqlite3_step(nccl) == SQLITE_ROW && sqlite3_column_int(nccl, 0);
        sqlite3_reset(nccl);
        if (is_nccl && it > 0 &&
            VEC_PUSH(g->k, g->nk, g->capk, ((comm_k){rank, e->stream, it, name, e->s, e->e - e->s, e->ord})))
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    sqlite3_finalize(nccl);
    free(st);
    free(names);
    return rc;
}

static int cmp_comm(const void *a, const void *b)
{
    const comm_k *x = a, *y = b;
    int64_t u[4] = {x->stream, x->name, x->iter, x->rank}, v[4] = {y->stream, y->name, y->iter, y->rank};
    for (int i = 0; i < 4; i++)
        if (u[i] != v[i])
            return u[i] < v[i] ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* Keeps the last kernel (in trace order) of each stream, name, step and
 * rank among the long ones (dur >= min_dur); k sorted by cmp_comm. */
static size_t last_long(comm_k *k, size_t n, double min_dur)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if ((double)k[i].dur < min_dur)
            continue;
        if (m && k[m - 1].stream == k[i].stream && k[m - 1].name == k[i].name && k[m - 1].iter == k[i].iter &&
            k[m - 1].rank == k[i].rank)
            k[m - 1] = k[i];
        else
            k[m++] = k[i];
    }
    return m;
}

/*
 * The (stream, kernel) whose duration varies most across ranks: per stream,
 * name and step the sample std over the ranks of the durations (over
 * mean_iter), its mean over the steps where it is defined, the largest
 * mean (the first on ties). Returns its first index in k, or n when none.
 */
static size_t pick_kernel(const comm_k *k, size_t n, double mean_iter)
{
    size_t best = n;
    double best_mean = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double sum_std = 0;
        size_t nstd = 0;
        while (j < n && k[j].stream == k[i].stream && k[j].name == k[i].name) {
            size_t a = j;
            double sum = 0, sq = 0;
            while (j < n && k[j].stream == k[a].stream && k[j].name == k[a].name && k[j].iter == k[a].iter)
                sum += (double)k[j++].dur / mean_iter;
            size_t c = j - a;
            double mean = sum / (double)c;
            for (size_t t = a; t < j; t++)
                sq += ((double)k[t].dur / mean_iter - mean) * ((double)k[t].dur / mean_iter - mean);
            if (c > 1) {
                sum_std += sqrt(sq / (double)(c - 1));
                nstd++;
            }
        }
        if (nstd && (best == n || sum_std / (double)nstd > best_mean)) {
            best = i;
            best_mean = sum_std / (double)nstd;
        }
        i = j;
    }
    return best;
}

static tb_status build_straggler(const metric_ctx *m, tb_error *err)
{
    static const char what[] = "straggler_metric";
    strag g = {0};
    tb_status rc = hta_build(m, what,
                             "DROP TABLE IF EXISTS temp.straggler_metric;"
                             "CREATE TEMP TABLE straggler_metric (rank INTEGER, iteration INTEGER, stream INTEGER, "
                             "kernel TEXT, ts NUMERIC, dur NUMERIC, normalized_start_time REAL, duration REAL)",
                             "SELECT 1", strag_rank, &g, err);
    size_t niters = sort_unique_i64(g.iters, g.niters);
    sqlite3_stmt *ins = NULL;
    if (!rc && g.nk && niters && sqlite3_prepare_v2(m->db,
                                                    "INSERT INTO temp.straggler_metric VALUES (?, ?, ?, "
                                                    "(SELECT value FROM STRING_IDS WHERE id = ?), ?, ?, ?, ?)",
                                                    -1, &ins, NULL) != SQLITE_OK)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
    if (!rc && ins) {
        double mean_iter = (double)(g.t_max - g.t_min) / (double)niters;
        if (g.nk)
            qsort(g.k, g.nk, sizeof *g.k, cmp_comm);
        size_t n = last_long(g.k, g.nk, mean_iter * 0.01);
        size_t b = pick_kernel(g.k, n, mean_iter);
        for (size_t i = b; !rc && i < n && g.k[i].stream == g.k[b].stream && g.k[i].name == g.k[b].name; i++) {
            const comm_k *c = &g.k[i];
            double us = metrics_opts(m)->hta.round_us ? 1.0 : 1000.0;
            sqlite3_bind_int64(ins, 1, c->rank);
            sqlite3_bind_int64(ins, 2, c->iter);
            sqlite3_bind_int64(ins, 3, c->stream);
            sqlite3_bind_int64(ins, 4, c->name);
            sqlite3_bind_double(ins, 5, (double)c->ts / us);
            sqlite3_bind_double(ins, 6, (double)c->dur / us);
            sqlite3_bind_double(ins, 7, (double)(c->ts - g.t_min) / mean_iter);
            sqlite3_bind_double(ins, 8, (double)c->dur / mean_iter);
            int d = sqlite3_step(ins);
            sqlite3_reset(ins);
            if (d != SQLITE_DONE)
                rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
        }
    }
    sqlite3_finalize(ins);
    free(g.iters);
    free(g.k);
    return rc;
}

/* ---- the family --------------------------------------------------------------- */

const metric_table metrics_hta_counters[] = {
    {"queue_length", {NULL}, build_queue,
     "HTA's queue length time series per rank and stream: outstanding launched operations at each change (options hta.*)",
     "rank", {NULL}},
    {"queue_length_summary", {"queue_length", NULL}, build_queue_summary,
     "HTA's queue length summary per rank and stream: count, mean, std, min, quartiles, max", "rank", {NULL}},
    {"kernel_launch_stats", {NULL}, build_launch_stats,
     "HTA's kernel launch statistics per rank: each launch's CPU and GPU duration and launch delay (options hta.*)",
     "rank", {NULL}},
    {"memory_bw", {NULL}, build_membw,
     "HTA's memory bandwidth time series per rank and memory kind: GB/s of the copies and sets running (options hta.*)",
     "rank", {NULL}},
    {"memory_bw_summary", {"memory_bw", NULL}, build_membw_summary,
     "HTA's memory bandwidth summary per rank and memory kind: count, mean, std, min, quartiles, max of GB/s", "rank",
     {NULL}},
    {"user_annotation", {NULL}, build_annotation,
     "HTA's user annotations per rank: GPU and host annotation slices in HTA's time domain and window", "rank",
     {NULL}},
    {"aten_op_kernels", {NULL}, build_aten,
     "HTA's ATen op kernels per rank: each ATen op instance's kernel sequence and launch delays (options hta.*)",
     "rank", {NULL}},
    {"straggler_metric", {NULL}, build_straggler,
     "HTA's straggler metric: per rank and step, the normalized start of the communication kernel that varies most",
     NULL, {NULL}},
    {"hta_trace_span", {NULL}, build_span,
     "HTA's trace duration per rank: first and last event start among the events HTA keeps", "rank", {NULL}},
};
const size_t metrics_hta_counters_n = sizeof metrics_hta_counters / sizeof metrics_hta_counters[0];
