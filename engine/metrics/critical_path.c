/* SPDX-License-Identifier: MIT */
/*
 * critical_path.c - the critical path family of computed tables: Holistic
 * Trace Analysis' critical path of one iteration, the chain of host ops,
 * kernel launches and device kernels that bounds it (reference:
 * metrics.md, "critical_path").
 *
 *   - critical_path: for each rank and each of its steps (a host slice
 *     whose name holds "ProfilerStep", HTA's annotation), one row per edge
 *     of the longest path of HTA's graph over the events of that step, in
 *     path order, with its type, the resource it is bound by and its
 *     duration. (HTA picks a step by its place among every event so
 *     named, of any category, in the order of its frame of the rank:
 *     hta_instances.c; here a step is named.)
 *
 * The reports' parameters (metrics_param) choose as HTA's arguments do:
 * annotation (the text a host slice's name holds; "" the whole trace: one
 * window over every event), instance ("all": a path per host instance, in
 * start order; "N" or "N-M": one path from the earliest start to the
 * latest end of instances N..M, numbered as HTA's instance_id: among every
 * event whose name holds the annotation, of any category, in HTA's order,
 * hta_instances.c) and data_load_events
 * (names, commas between: a host slice whose name holds one as text gets
 * nodes whatever its category; an edge attributed to a host slice in whose
 * name one, as a regular expression, is found is bound by data_loading).
 *
 * The graph is HTA's CPGraph, in HTA's time domain and window (hta.h):
 * the events kept are the host slices that start within the step and last
 * longer than zero, and the device tasks whose launching call is one of
 * them: one task per call, the last of its correlation in the trace's
 * order (HTA's index_correlation links a call to one task; the other
 * kernels of a CUDA graph launch are no nodes). The graph and its
 * longest path are critical_graph.c's (critical_path_int.h).
 *
 * A window's events are found through an index of the rank's events by
 * the start that decides whether a window keeps them, sorted once per
 * rank: a window costs its own events (and the rank's Stream Wait Events,
 * which every window keeps), not the rank's, so that a rank of many steps
 * takes about the time of one pass over its events.
 *
 * An edge is bound by: its type for delays, the device for a task's own
 * edge (communication when HTA's class says so), the host for the rest;
 * dependencies and sync edges by nothing.
 */
#include <limits.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/critical_path_int.h"
#include "metrics/hta.h"
#include "metrics/metrics.h"
#include "util/vec.h"

/* HTA's KERNEL_KERNEL_DELAY_THRESHOLD_US */
#define KK_THRESHOLD_US 1500

static const char *const edge_names[] = {"critical_path_operator", "critical_path_dependency",
                                         "critical_path_kernel_launch_delay", "critical_path_kernel_kernel_delay",
                                         "critical_path_sync_dependency"};

/* What the reports' parameters choose (metrics_param): the annotation that
 * bounds a path ("": the whole trace), its instances (every one, a path
 * each; or first..last, one path), the names of data-load events. */
typedef struct cp_choice {
    char *annotation;
    int all;
    int64_t first, last;
    char **dl;
    regex_t *dl_re; /* dl[i] as a regular expression (HTA's bound test) */
    size_t ndl;
} cp_choice;

/* ---- reading ---------------------------------------------------------------- */

static int has(const char *s, const char *word)
{
    return s && strstr(s, word) != NULL;
}

static int one_of(const char *s, const char *const *list)
{
    for (; s && *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

/* HTA's two tests of a data-load event: it gets nodes when its name holds
 * one of the names as literal text (1), and its edges are bound by
 * data_loading when one of them, read as a regular expression, is found in
 * the name (2). */
static int data_load(const cp_choice *ch, const char *name)
{
    int r = 0;
    for (size_t i = 0; name && i < ch->ndl; i++) {
        if (strstr(name, ch->dl[i]))
            r |= 1;
        if (regexec(&ch->dl_re[i], name, 0, NULL, 0) == 0)
            r |= 2;
    }
    return r;
}

static void host_flags(cev *c, const char *name, int table, int64_t type, const cp_choice *ch)
{
    static const char *const lock[] = {"cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync", NULL};
    static const char *const blocking[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery",
                                           "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpyAsync", NULL};
    /* HTA's operator or runtime mask: cpu_op, cuda_runtime, cuda_driver */
    c->node = table == 0 ? type == 50001 : (type == 60001 || type == 60002);
    /* HTA gives data-load events nodes whatever their category */
    c->dl = (unsigned char)data_load(ch, name);
    c->node |= c->dl & 1;
    c->lock = one_of(name, lock);
    c->blocking = one_of(name, blocking);
    /* HTA's forward and backward threads: cpu_op and user_annotation slices */
    c->fwd = table == 0 && has(name, "forward");
    c->bwd = table == 0 && has(name, "autograd");
}

/* A read of a rank's rows into its rankdata, with its step cut. */
typedef struct rank_read {
    const hta_ctx *h;
    const step_cut *cut;
    rankdata *d;
} rank_read;

/* A host slice of read_host's SQL, kept when HTA's window keeps it. */
static int host_row(sqlite3_stmt *st, void *ctx)
{
    const rank_read *r = ctx;
    const hta_ctx *h = r->h;
    int table = sqlite3_column_int(st, 6);
    cev c = {.pid = sqlite3_column_int64(st, 2), .tid = sqlite3_column_int64(st, 3),
             .name = sqlite3_column_int64(st, 4), .conn = sqlite3_column_int64(st, 5),
             .ord = ((int64_t)table << 40) + sqlite3_column_int64(st, 10), .launch = NIL, .sn = NIL, .en = NIL};
    /* a call with a stream is, to HTA, a device event: not a host slice */
    c.streamed = sqlite3_column_type(st, 8) != SQLITE_NULL && sqlite3_column_int64(st, 8) != -1;
    host_flags(&c, (const char *)sqlite3_column_text(st, 9), table, sqlite3_column_int64(st, 7), h->extra);
    hta_time(h->o.round_us, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), &c.ts, &c.te);
    if (!hta_host_kept(h, r->cut, c.ts, c.te, 1))
        return 0;
    return VEC_PUSH(r->d->v, r->d->n, r->d->cap, c);
}

/* The rank's host slices (PYTORCH_API, CANN_API) that HTA's window keeps. */
static tb_status read_host(const hta_ctx *h, int64_t rank, rankdata *d, tb_error *err)
{
    static const char sql[] =
        "SELECT p.startNs, p.endNs, p.globalTid >> 32, p.globalTid & 4294967295, p.name, 0, 0, p.type, "
        "  p.streamId, s.value, p.rowid FROM PYTORCH_API p LEFT JOIN STRING_IDS s ON s.id = p.name "
        "WHERE ifnull(p.rankId, 0) = ?1 AND p.startNs IS NOT NULL AND p.endNs IS NOT NULL AND p.globalTid IS NOT NULL "
        "UNION ALL SELECT c.startNs, c.endNs, c.globalTid >> 32, c.globalTid & 4294967295, c.name, "
        "  ifnull(c.connectionId, 0), 1, c.type, c.streamId, s.value, c.rowid "
        "FROM CANN_API c LEFT JOIN STRING_IDS s ON s.id = c.name "
        "WHERE ifnull(c.rankId, 0) = ?1 AND c.startNs IS NOT NULL AND c.endNs IS NOT NULL AND c.globalTid IS NOT NULL "
        "ORDER BY 7, 11";
    rank_read r = {h, hta_cut(h, rank), d};
    tb_status rc = metrics_rows(h->m->db, h->what, sql, rank, host_row, &r, err);
    d->nhost = d->n;
    return rc;
}

static int cmp_annot(const void *a, const void *b)
{
    const annot *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* Reads the annotation slices of SQL (?1 the rank, ?2 the annotation;
 * columns start, end, name, order) that HTA's window keeps into *V. */
typedef struct annot_read {
    rank_read r;
    annot **v;
    size_t *n, *cap;
} annot_read;

static int annot_row(sqlite3_stmt *st, void *ctx)
{
    const annot_read *ar = ctx;
    annot a = {.name = sqlite3_column_int64(st, 2), .ord = sqlite3_column_int64(st, 3), .last = -1};
    hta_time(ar->r.h->o.round_us, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), &a.ts, &a.te);
    if (!hta_host_kept(ar->r.h, ar->r.cut, a.ts, a.te, 1))
        return 0;
    return VEC_PUSH(*ar->v, *ar->n, *ar->cap, a);
}

static tb_status read_annots(const hta_ctx *h, int64_t rank, const char *sql, annot_read *ar, tb_error *err)
{
    const cp_choice *ch = h->extra;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h->m->db, sql, -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    sqlite3_bind_int64(st, 1, rank);
    sqlite3_bind_text(st, 2, ch->annotation, -1, SQLITE_STATIC);
    ar->r = (rank_read){h, hta_cut(h, rank), NULL};
    return metrics_each_row(h->m->db, st, h->what, annot_row, ar, err);
}

/* The rank's instances of the annotation: its host slices whose name
 * holds it (ProfilerStep: the steps; a slice recorded twice, as an op and
 * as an annotation, once), in start order. */
static tb_status read_steps(const hta_ctx *h, int64_t rank, rankdata *d, tb_error *err)
{
    static const char sql[] =
        "WITH n AS (SELECT id FROM STRING_IDS WHERE instr(value, ?2) > 0) "
        "SELECT startNs, endNs, name, min(rowid) FROM PYTORCH_API WHERE ifnull(rankId, 0) = ?1 AND name IN n "
        "  AND startNs IS NOT NULL AND endNs IS NOT NULL GROUP BY startNs, endNs, name";
    annot_read ar = {.v = &d->a, .n = &d->na, .cap = &d->capa};
    tb_status rc = read_annots(h, rank, sql, &ar, err);
    if (!rc && d->na)
        qsort(d->a, d->na, sizeof *d->a, cmp_annot);
    return rc;
}

/* The rank's instances of the annotation as HTA numbers them for its
 * instance_id (hta_instances.c). */
static tb_status read_hta_instances(const hta_ctx *h, int64_t rank, rankdata *d, tb_error *err)
{
    const cp_choice *ch = h->extra;
    return hta_instances(h, rank, ch->annotation, &d->hi, &d->nhi, &d->caphi, err);
}

/* Host calls by (connection, start), to find a task's launching call. */
typedef struct hkey {
    int64_t conn, ts;
    size_t ev;
} hkey;

static int cmp_hkey(const void *a, const void *b)
{
    const hkey *x = a, *y = b;
    if (x->conn != y->conn)
        return x->conn < y->conn ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->ev > y->ev) - (x->ev < y->ev);
}

/* The first host call of connection conn in k[0..nk) (sorted), or NIL. */
static size_t call_of(const hkey *k, size_t nk, int64_t conn)
{
    size_t lo = 0, hi = nk;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k[mid].conn < conn)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nk && k[lo].conn == conn ? k[lo].ev : NIL;
}

/* The host calls with a connection, sorted by (connection, start), into *out. */
static tb_status call_keys(const hta_ctx *h, const rankdata *d, hkey **out, size_t *nk, tb_error *err)
{
    hkey *k = calloc(d->nhost + 1, sizeof *k);
    *out = k;
    *nk = 0;
    if (!k)
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    for (size_t i = 0; i < d->nhost; i++)
        if (d->v[i].conn && !d->v[i].streamed)
            k[(*nk)++] = (hkey){d->v[i].conn, d->v[i].ts, i};
    if (*nk)
        qsort(k, *nk, sizeof *k, cmp_hkey);
    return TB_OK;
}

/* Leaves one task per launching call in d->v[from..), as HTA's graph
 * does: HTA links a call to one task of its correlation (index_correlation,
 * the last of them in the trace's order) and its window keeps only the
 * tasks a kept call links to, so the other kernels of a CUDA graph launch
 * are no nodes. A kept task whose launch HTA's queue counts (qrun >= 0)
 * and that had others is marked multi (step_path). kept[j], for the call
 * of key j, is its task so far (NIL); many[j] whether it had several. */
static tb_status one_task_per_call(const hta_ctx *h, rankdata *d, size_t from, const hkey *k, size_t nk,
                                   tb_error *err)
{
    size_t *kept = malloc((nk + 1) * sizeof *kept), *of = malloc((d->n - from + 1) * sizeof *of), n = from;
    unsigned char *many = calloc(nk + 1, 1);
    if (!kept || !of || !many) {
        free(kept);
        free(of);
        free(many);
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    for (size_t j = 0; j < nk; j++)
        kept[j] = NIL;
    for (size_t i = from; i < d->n; i++) { /* the key of each task's call */
        const cev *c = &d->v[d->v[i].launch];
        hkey key = {c->conn, c->ts, d->v[i].launch};
        size_t lo = 0, hi = nk;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_hkey(&k[mid], &key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        of[i - from] = lo;
        many[lo] |= kept[lo] != NIL;
        if (kept[lo] == NIL || d->v[kept[lo]].ord < d->v[i].ord)
            kept[lo] = i;
    }
    for (size_t i = from; i < d->n; i++)
        if (kept[of[i - from]] == i) {
            d->v[n] = d->v[i];
            d->v[n++].multi = many[of[i - from]] && d->v[i].qrun >= 0;
        }
    d->n = n;
    free(kept);
    free(of);
    free(many);
    return TB_OK;
}

/* Appends the rank's device tasks (prepared) with their launching calls,
 * devices and HTA's queue lengths: one task per call (one_task_per_call). */
static tb_status add_device(const hta_ctx *h, int64_t rank, const evvec *ev, rankdata *d, tb_error *err)
{
    int64_t *names = NULL, *devs = NULL, *q = calloc(2 * ev->n + 1, sizeof *q);
    size_t nn = 0, nd = 0, nk = 0, from = d->n;
    hkey *k = NULL;
    if (!q)
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    tb_status rc = call_keys(h, d, &k, &nk, err);
    if (!rc)
        rc = hta_task_names(h, rank, &names, &nn, err);
    if (!rc)
        rc = hta_task_devices(h, rank, &devs, &nd, err);
    if (!rc)
        rc = hta_queue_at(h, ev, q, q + ev->n, err);
    for (size_t i = 0; !rc && i < ev->n; i++) {
        const dev_ev *e = &ev->v[i];
        if (e->op || !e->linked)
            continue;
        size_t lo = 0, hi = nk; /* the first call of the task's connection and launch time */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (k[mid].conn < e->conn || (k[mid].conn == e->conn && k[mid].ts < e->launch))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == nk || k[lo].conn != e->conn || k[lo].ts != e->launch)
            continue;
        const hkey *f = &k[lo];
        cev c = {.ts = e->s, .te = e->e, .name = hta_task_name(names, nn, e->ord), .ord = ((int64_t)1 << 41) + e->ord,
                 .launch = f->ev, .qrun = q[i], .qdev = q[ev->n + i], .stream = e->stream, .sn = NIL, .en = NIL,
                 .dev = hta_task_name(devs, nd, e->ord), .device = 1, .comm = e->kind == K_COMM, .node = 1};
        if (VEC_PUSH(d->v, d->n, d->cap, c))
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    if (!rc && d->n > from)
        rc = one_task_per_call(h, d, from, k, nk, err);
    free(names);
    free(devs);
    free(q);
    free(k);
    return rc;
}

/* A read of a rank's cuda_sync events, with its host calls by connection. */
typedef struct sync_read {
    const hta_ctx *h;
    const hkey *k;
    size_t nk;
    rankdata *d;
} sync_read;

/* A cuda_sync event of read_syncs' SQL, kept when it is one of the four
 * kinds and has its runtime call. */
static int sync_row(sqlite3_stmt *st, void *ctx)
{
    const sync_read *r = ctx;
    const char *name = (const char *)sqlite3_column_text(st, 2);
    int kind = !name ? S_NONE : !strcmp(name, "Stream Sync") ? S_STREAM : !strcmp(name, "Context Sync") ? S_CONTEXT
               : !strcmp(name, "Event Sync") ? S_EVENT : !strcmp(name, "Stream Wait Event") ? S_WAIT : S_NONE;
    size_t call = call_of(r->k, r->nk, sqlite3_column_int64(st, 5));
    if (kind == S_NONE || call == NIL || sqlite3_column_type(st, 5) == SQLITE_NULL)
        return 0;
    cev c = {.name = sqlite3_column_int64(st, 3), .ord = ((int64_t)3 << 40) + sqlite3_column_int64(st, 8),
             .launch = call, .stream = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4),
             .sn = NIL, .en = NIL, .qrun = -1, .qdev = -1, .sync = (unsigned char)kind, .awaited = NIL, .waiter = NIL,
             .dev = sqlite3_column_int64(st, 9),
             .wait_stream = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 6),
             .record = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 7)};
    c.device = c.node = c.stream != -1; /* HTA: an event of a stream is a device event */
    hta_time(r->h->o.round_us, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), &c.ts, &c.te);
    /* the awaited record's call, for the launch before it */
    size_t rec = (kind == S_EVENT || kind == S_WAIT) && c.record != -1 ? call_of(r->k, r->nk, c.record) : NIL;
    c.record = rec == NIL ? -1 : (int64_t)rec;
    return VEC_PUSH(r->d->v, r->d->n, r->d->cap, c);
}

/* Appends the rank's cuda_sync events (TB_EVENT) that have their runtime
 * call: Stream Sync and Stream Wait Event (device events of their stream,
 * nodes), Context Sync and Event Sync (host-side events to HTA, no nodes). */
static tb_status read_syncs(const hta_ctx *h, int64_t rank, rankdata *d, tb_error *err)
{
    static const char sql[] =
        "SELECT e.startNs, e.endNs, n.value, e.name, json_extract(e.args, '$.stream'), "
        "  json_extract(e.args, '$.correlation'), json_extract(e.args, '$.wait_on_stream'), "
        "  json_extract(e.args, '$.wait_on_cuda_event_record_corr_id'), e.rowid, ifnull(e.pid, 0) "
        "FROM TB_EVENT e JOIN STRING_IDS c ON c.id = e.cat JOIN STRING_IDS n ON n.id = e.name "
        "WHERE ifnull(e.rankId, 0) = ?1 AND c.value = 'cuda_sync' AND e.ph = 'X' AND e.startNs IS NOT NULL "
        "  AND e.endNs IS NOT NULL AND json_valid(e.args) ORDER BY e.rowid";
    hkey *k;
    size_t nk;
    tb_status rc = call_keys(h, d, &k, &nk, err);
    sync_read r = {h, k, nk, d};
    if (!rc)
        rc = metrics_rows(h->m->db, h->what, sql, rank, sync_row, &r, err);
    free(k);
    return rc;
}

/* A launch HTA counts (a task whose call is on its launch list), keyed for
 * the searches of pair_syncs. */
typedef struct lkey {
    int64_t dev, stream, pid, tid, ts, ord;
    size_t task;
} lkey;

static int cmp_lkey_prev(const void *a, const void *b)
{
    const lkey *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

static int cmp_lkey_next(const void *a, const void *b)
{
    const lkey *x = a, *y = b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* The number of keys of l[0..n) (sorted by cmp) that sort before or with
 * key (after: 1) or strictly before it (after: 0). */
static size_t bound(const lkey *l, size_t n, const lkey *key, int (*cmp)(const void *, const void *), int after)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp(&l[mid], key);
        if (c < 0 || (after && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* For each Event Sync and Stream Wait Event of the rank, over the whole
 * trace as HTA does: the task of the last counted launch onto the awaited
 * stream of the sync event's device (HTA's gpu: the event's pid, the
 * task's device) at or before the awaited cudaEventRecord (awaited) and, for a
 * Stream Wait Event, the task of the next launch onto its stream from its
 * cudaStreamWaitEvent's thread (waiter). */
static int pair_syncs(rankdata *d)
{
    size_t nl = 0;
    lkey *l = malloc((d->n - d->nhost + 1) * sizeof *l);
    if (!l)
        return -1;
    for (size_t i = d->nhost; i < d->n; i++) {
        const cev *c = &d->v[i];
        if (!c->sync && c->qrun >= 0)
            l[nl++] = (lkey){c->dev, c->stream, d->v[c->launch].pid, d->v[c->launch].tid, d->v[c->launch].ts,
                             d->v[c->launch].ord, i};
    }
    if (nl)
        qsort(l, nl, sizeof *l, cmp_lkey_prev);
    for (size_t i = d->nhost; i < d->n; i++) {
        cev *c = &d->v[i];
        if ((c->sync == S_EVENT || c->sync == S_WAIT) && c->record >= 0) {
            lkey key = {.dev = c->dev, .stream = c->wait_stream, .ts = d->v[c->record].ts, .ord = INT64_MAX};
            size_t k = bound(l, nl, &key, cmp_lkey_prev, 1);
            c->awaited = k && l[k - 1].dev == c->dev && l[k - 1].stream == c->wait_stream ? l[k - 1].task : NIL;
        }
    }
    if (nl)
        qsort(l, nl, sizeof *l, cmp_lkey_next);
    for (size_t i = d->nhost; i < d->n; i++) {
        cev *c = &d->v[i];
        if (c->sync != S_WAIT)
            continue;
        const cev *w = &d->v[c->launch];
        lkey key = {0, c->stream, w->pid, w->tid, w->ts, INT64_MAX, 0};
        size_t k = bound(l, nl, &key, cmp_lkey_next, 1);
        c->waiter = k < nl && l[k].stream == c->stream && l[k].pid == w->pid && l[k].tid == w->tid ? l[k].task : NIL;
    }
    free(l);
    return 0;
}

/* ---- the rows --------------------------------------------------------------- */

static const char *bound_by(const cpgraph *g, const cev *v, const cpedge *e)
{
    switch (e->type) {
    case E_KK:
        return "gpu_kernel_kernel_overhead";
    case E_LAUNCH:
        return "gpu_kernel_launch_overhead";
    case E_DEP:
    case E_SYNC:
        return NULL;
    default:
        break;
    }
    (void)g;
    if (e->ev != NIL && v[e->ev].device)
        return v[e->ev].comm ? "gpu_communication_bound" : "gpu_compute_bound";
    return e->ev != NIL && (v[e->ev].dl & 2) ? "data_loading" : "cpu_bound";
}

static tb_status insert_path(const hta_ctx *h, int64_t rank, const annot *a, const cpgraph *g, const cev *v,
                             const size_t *path, size_t np, tb_error *err)
{
    tb_status rc = TB_OK;
    for (size_t i = 0; !rc && i < np; i++) {
        const cpedge *e = &g->e[path[i]];
        const char *b = bound_by(g, v, e);
        sqlite3_bind_int64(h->ins, 1, rank);
        if (a->name >= 0)
            sqlite3_bind_int64(h->ins, 2, a->name);
        if (a->last >= 0)
            sqlite3_bind_int64(h->ins, 12, a->last);
        hta_bind_us(h, 3, a->ts);
        sqlite3_bind_int64(h->ins, 4, (int64_t)i);
        sqlite3_bind_text(h->ins, 5, edge_names[e->type], -1, SQLITE_STATIC);
        if (b)
            sqlite3_bind_text(h->ins, 6, b, -1, SQLITE_STATIC);
        hta_bind_us(h, 7, e->w);
        hta_bind_us(h, 8, g->n[e->u].ts);
        hta_bind_us(h, 9, g->n[e->v].ts);
        if (e->ev != NIL && e->type != E_DEP) {
            sqlite3_bind_int64(h->ins, 10, v[e->ev].name);
            sqlite3_bind_text(h->ins, 11, v[e->ev].device ? "device" : "host", -1, SQLITE_STATIC);
        }
        rc = hta_insert_done(h, err);
    }
    return rc;
}

/* 1 when the window keeps a task whose counted launch has other tasks of
 * its correlation (multi): HTA's queue length holds the call once per
 * task, so its graph walks the kept task once per row, and the second
 * time joins the task's end back to its own start (a kernel-kernel edge):
 * a negative weight or a cycle, and HTA refuses the graph. */
static int multi_task_launch(const rankdata *d)
{
    for (size_t k = 0; k < d->nkept; k++)
        if (d->v[d->kept[k]].multi)
            return 1;
    return 0;
}

static int cmp_wkey(const void *a, const void *b)
{
    const wkey *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->ev > y->ev) - (x->ev < y->ev);
}

/* The rank's index of the windows (rankdata): each event a window may keep
 * by the start that decides it (a host slice that lasts longer than zero
 * and is no call with a stream: its own; a device event, a task or a
 * Stream Sync: its launching call's; Context and Event Sync: their own),
 * sorted, so that a window's events are one run of it. Returns -1 when out
 * of memory. */
static int index_windows(rankdata *d)
{
    d->by_ts = malloc((d->n + 1) * sizeof *d->by_ts);
    d->waits = malloc((d->n + 1) * sizeof *d->waits);
    d->kept = malloc((d->n + 1) * sizeof *d->kept);
    if (!d->by_ts || !d->waits || !d->kept)
        return -1;
    for (size_t i = 0; i < d->n; i++) {
        const cev *c = &d->v[i], *h = c->device ? &d->v[c->launch] : c;
        if (c->sync == S_WAIT)
            d->waits[d->nwaits++] = i;
        else if (!h->streamed && h->te > h->ts)
            d->by_ts[d->nby_ts++] = (wkey){h->ts, i};
    }
    if (d->nby_ts)
        qsort(d->by_ts, d->nby_ts, sizeof *d->by_ts, cmp_wkey);
    if (d->nwaits) { /* the waits' scratch, only where a task may wait */
        if (!(d->ksync = malloc((d->n + 1) * sizeof *d->ksync)))
            return -1;
        for (size_t i = 0; i < d->n; i++)
            d->ksync[i] = NIL;
    }
    return 0;
}

/* The events of the window [ws, we] into d->kept: host slices that start
 * in it and last longer than zero, device events whose launching call is
 * one of them, and every Stream Wait Event (HTA keeps them all). */
static void keep(rankdata *d, int64_t ws, int64_t we)
{
    size_t lo = 0, hi = d->nby_ts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->by_ts[mid].ts < ws)
            lo = mid + 1;
        else
            hi = mid;
    }
    d->nkept = 0;
    for (size_t i = lo; i < d->nby_ts && d->by_ts[i].ts <= we; i++)
        d->kept[d->nkept++] = d->by_ts[i].ev;
    for (size_t i = 0; i < d->nwaits; i++)
        d->kept[d->nkept++] = d->waits[i];
}

/* After a window: its events' nodes are gone (NIL, as every other
 * event's). */
static void unkeep(rankdata *d)
{
    for (size_t k = 0; k < d->nkept; k++)
        d->v[d->kept[k]].sn = d->v[d->kept[k]].en = NIL;
    d->nkept = 0;
}

static void note_rank(const hta_ctx *h, int64_t rank, const annot *a, const char *why)
{
    if (!h->m->note)
        return;
    char msg[300];
    snprintf(msg, sizeof msg, "%s: rank %lld: the window starting at %lld: no row: %s", h->what,
             (long long)metrics_rank_shown(h->m, rank), (long long)a->ts, why);
    h->m->note(h->m->ctx, msg);
}

/* The path of one window of a rank: [ws, we] (a's label and start). */
static tb_status step_path(const hta_ctx *h, int64_t rank, rankdata *d, const annot *a, int64_t ws, int64_t we,
                           tb_error *err)
{
    cpgraph g;
    memset(&g, 0, sizeof g);
    keep(d, ws, we);
    int64_t kk_gap = h->o.round_us ? KK_THRESHOLD_US : (int64_t)KK_THRESHOLD_US * 1000;
    int bad = cp_make_nodes(d->v, d->kept, d->nkept, &g) || cp_lock_edges(&g, d->v) || cp_stack_edges(&g, d) ||
              cp_kernel_edges(&g, d, kk_gap);
    size_t *path = bad ? NULL : malloc((g.nn + 1) * sizeof *path), np = 0;
    tb_status rc = TB_OK;
    int lp = bad || !path ? -1 : cp_same_stream_sync(&g, d->v) ? 2 : multi_task_launch(d) ? 3
           : cp_longest_path(&g, path, &np);
    if (lp < 0)
        rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    else if (lp == 2)
        note_rank(h, rank, a, "a sync edge joins two tasks of one stream (HTA refuses the graph)");
    else if (lp == 3)
        note_rank(h, rank, a, "a kernel launch with several tasks of its correlation (HTA refuses the graph)");
    else if (lp > 0)
        note_rank(h, rank, a, "HTA's graph of the window has a cycle");
    else if (!np)
        note_rank(h, rank, a, "the window holds no host op, runtime call or device task");
    else
        rc = insert_path(h, rank, a, &g, d->v, path, np, err);
    free(path);
    cp_graph_free(&g);
    unkeep(d);
    return rc;
}

static void note_plain(const hta_ctx *h, int64_t rank, const char *why, const char *what)
{
    if (!h->m->note)
        return;
    char msg[400];
    snprintf(msg, sizeof msg, "%s: rank %lld: no row: %s '%s'", h->what, (long long)metrics_rank_shown(h->m, rank),
             why, what);
    h->m->note(h->m->ctx, msg);
}

/* The rank's paths as the choice asks: the whole trace, each instance of
 * the annotation, or one window of instances. */
static tb_status rank_paths(const hta_ctx *h, int64_t rank, rankdata *d, tb_error *err)
{
    const cp_choice *ch = h->extra;
    if (!*ch->annotation) {
        /* HTA's window of the whole trace holds every event */
        annot w = {.ts = INT64_MAX, .name = -1, .last = -1};
        for (size_t i = 0; i < d->n; i++)
            if (!d->v[i].sync && d->v[i].ts < w.ts)
                w.ts = d->v[i].ts;
        if (!d->n) {
            note_plain(h, rank, "it holds no host op, runtime call or device task", "");
            return TB_OK;
        }
        return step_path(h, rank, d, &w, INT64_MIN, INT64_MAX, err);
    }
    if (ch->all ? !d->na : !d->nhi) {
        note_plain(h, rank,
                   ch->all ? "no host slice's name holds the annotation" : "no slice's name holds the annotation",
                   ch->annotation);
        return TB_OK;
    }
    if (ch->all) {
        tb_status rc = TB_OK;
        for (size_t i = 0; !rc && i < d->na; i++)
            rc = step_path(h, rank, d, &d->a[i], d->a[i].ts, d->a[i].te, err);
        return rc;
    }
    if (ch->first >= (int64_t)d->nhi) {
        char why[160];
        snprintf(why, sizeof why, "instance %lld asked, it has %lld of", (long long)ch->first, (long long)d->nhi);
        note_plain(h, rank, why, ch->annotation);
        return TB_OK;
    }
    /* HTA's window of instances first..last (the last clipped to the rank's), numbered as HTA:
     * from the earliest start to the latest end among them (in file order, the first need not
     * start first) */
    size_t f = (size_t)ch->first, l = ch->last < (int64_t)d->nhi ? (size_t)ch->last : d->nhi - 1;
    annot w = {.ts = d->hi[f].ts, .te = d->hi[f].te, .name = d->hi[f].name, .ord = d->hi[f].ord};
    int64_t we = w.te;
    for (size_t i = f + 1; i <= l; i++) {
        we = d->hi[i].te > we ? d->hi[i].te : we;
        w.ts = d->hi[i].ts < w.ts ? d->hi[i].ts : w.ts;
    }
    w.last = l > f ? d->hi[l].name : -1;
    return step_path(h, rank, d, &w, w.ts, we, err);
}

static tb_status path_rank(void *ctx, int64_t rank, evvec *ev, tb_error *err)
{
    hta_ctx *h = ctx;
    const cp_choice *ch = h->extra;
    rankdata d;
    memset(&d, 0, sizeof d);
    if (!hta_prepare(h, rank, ev))
        return TB_OK;
    tb_status rc = read_host(h, rank, &d, err);
    if (!rc && *ch->annotation)
        rc = read_steps(h, rank, &d, err);
    if (!rc && *ch->annotation && !ch->all)
        rc = read_hta_instances(h, rank, &d, err);
    if (!rc)
        rc = add_device(h, rank, ev, &d, err);
    if (!rc)
        rc = read_syncs(h, rank, &d, err);
    if (!rc && (pair_syncs(&d) || index_windows(&d)))
        rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    if (!rc)
        rc = rank_paths(h, rank, &d, err);
    free(d.v);
    free(d.a);
    free(d.by_ts);
    free(d.waits);
    free(d.kept);
    free(d.ksync);
    free(d.hi);
    return rc;
}

static void choice_free(cp_choice *ch)
{
    free(ch->annotation);
    for (size_t i = 0; i < ch->ndl; i++) {
        free(ch->dl[i]);
        if (ch->dl_re)
            regfree(&ch->dl_re[i]);
    }
    free(ch->dl);
    free(ch->dl_re);
}

/* instance: "all", "N" or "N-M" (N <= M, from 0). Returns 0 or -1. */
static int parse_instance(const char *s, cp_choice *ch)
{
    if (!strcmp(s, "all")) {
        ch->all = 1;
        return 0;
    }
    char *end = NULL;
    if (*s < '0' || *s > '9')
        return -1;
    long long a = strtoll(s, &end, 10), b = a;
    if (*end == '-') {
        const char *t = end + 1;
        if (*t < '0' || *t > '9')
            return -1;
        b = strtoll(t, &end, 10);
    }
    if (*end || a < 0 || b < a || a == LLONG_MAX || b == LLONG_MAX)
        return -1;
    ch->first = a;
    ch->last = b;
    return 0;
}

/* data_load_events: names separated by commas, none empty. Returns 0, -1
 * when out of memory, 1 when a name is empty (the names parsed so far kept
 * in ch). */
static int parse_data_load(const char *s, cp_choice *ch)
{
    if (!*s)
        return 0;
    for (const char *p = s;;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (!n)
            return 1;
        char *name = strndup(p, n), **grown = name ? realloc(ch->dl, (ch->ndl + 1) * sizeof *grown) : NULL;
        if (!grown) {
            free(name);
            return -1;
        }
        ch->dl = grown;
        ch->dl[ch->ndl++] = name;
        if (!c)
            return 0;
        p = c + 1;
    }
}

/* The reports' parameters annotation, instance and data_load_events. */
static tb_status parse_choice(const metric_ctx *m, cp_choice *ch, tb_error *err)
{
    const char *ann = metrics_param(m, "annotation");
    ch->annotation = strdup(ann ? ann : "ProfilerStep");
    if (!ch->annotation)
        return tb_error_set(err, TB_ERR_NOMEM, "critical_path: out of memory");
    const char *inst = metrics_param(m, "instance");
    if (inst && parse_instance(inst, ch))
        return tb_error_set(err, TB_ERR_USAGE,
                            "critical_path: parameter instance: '%s' is not all, N or N-M (instances counted from 0)",
                            inst);
    if (!inst)
        ch->all = 1;
    if (!*ch->annotation && !ch->all)
        return tb_error_set(err, TB_ERR_USAGE,
                            "critical_path: parameter instance: '%s' asks an instance of no annotation (annotation "
                            "'' is the whole trace)", inst);
    const char *dl = metrics_param(m, "data_load_events");
    int bad = dl ? parse_data_load(dl, ch) : 0;
    if (bad < 0)
        return tb_error_set(err, TB_ERR_NOMEM, "critical_path: out of memory");
    if (bad)
        return tb_error_set(err, TB_ERR_USAGE, "critical_path: parameter data_load_events: '%s' holds an empty name "
                            "(names are separated by commas)", dl);
    ch->dl_re = calloc(ch->ndl + 1, sizeof *ch->dl_re);
    if (!ch->dl_re)
        return tb_error_set(err, TB_ERR_NOMEM, "critical_path: out of memory");
    for (size_t i = 0; i < ch->ndl; i++) {
        int e = regcomp(&ch->dl_re[i], ch->dl[i], REG_EXTENDED | REG_NOSUB);
        if (e) {
            char why[160];
            regerror(e, &ch->dl_re[i], why, sizeof why);
            for (size_t k = 0; k < i; k++)
                regfree(&ch->dl_re[k]);
            free(ch->dl_re);
            ch->dl_re = NULL;
            return tb_error_set(err, TB_ERR_USAGE, "critical_path: parameter data_load_events: '%s' is no regular "
                                "expression: %s", ch->dl[i], why);
        }
    }
    return TB_OK;
}

static tb_status build_critical_path(const metric_ctx *m, tb_error *err)
{
    cp_choice ch;
    memset(&ch, 0, sizeof ch);
    tb_status rc = parse_choice(m, &ch, err);
    if (!rc)
        rc = hta_build(m, "critical_path",
                       "DROP TABLE IF EXISTS temp.critical_path;"
                       "CREATE TEMP TABLE critical_path (rank INTEGER, step TEXT, step_ts NUMERIC, seq INTEGER, "
                       "type TEXT, bound_by TEXT, dur NUMERIC, ts NUMERIC, end_ts NUMERIC, event TEXT, side TEXT)",
                       "INSERT INTO temp.critical_path VALUES (?1, ifnull((SELECT value FROM STRING_IDS WHERE id = ?2) "
                       "|| ifnull(' .. ' || (SELECT value FROM STRING_IDS WHERE id = ?12), ''), ''), ?3, "
                       "?4, ?5, ?6, ?7, ?8, ?9, (SELECT value FROM STRING_IDS WHERE id = ?10), ?11)",
                       path_rank, &ch, err);
    choice_free(&ch);
    return rc;
}

/* ---- the family --------------------------------------------------------------- */

const metric_table metrics_critical_path[] = {
    {"critical_path", {NULL}, build_critical_path,
     "HTA's critical path of each ProfilerStep per rank (or of the annotation, instances or whole trace the report's "
     "params choose): the edges of its longest path with their bound (options hta.*)",
     "rank", {NULL}},
};
const size_t metrics_critical_path_n = sizeof metrics_critical_path / sizeof metrics_critical_path[0];
