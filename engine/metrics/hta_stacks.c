/* SPDX-License-Identifier: MIT */
/*
 * hta_stacks.c - the call stacks family of computed tables: Holistic Trace
 * Analysis' call graph of a rank (each host thread's slices nested into a
 * tree, each device task hung under the runtime call that launched it),
 * which its frequent kernel sequences read (reference: metrics.md,
 * "call_stack").
 *
 *   - call_stack: one row per event HTA's call graph holds, in HTA's time
 *     domain and window (hta.h): the host slices of every thread
 *     (PYTORCH_API, CANN_API, and the trace's other slices kept in
 *     TB_EVENT, such as python_function when loaded with
 *     --keep-python-functions) and the device tasks. A row gives the
 *     event's depth in its thread's tree (a thread's outermost slices are
 *     at 0; -1 for an event in no host tree: the slices of a device thread,
 *     a task whose launching call is not kept), the number and summed
 *     duration of the device tasks below it, and those tasks' names (their
 *     STRING_IDS ids as a JSON array) in start order.
 *
 * The tree is HTA's CallStackGraph: a thread's slice ends and starts in
 * time order (at equal times an end before a start, a longer slice's start
 * first, a shorter slice's end first, a zero-length slice inside the slice
 * that is open, the trace's order last), a start nests under the slice on
 * top of the stack, an end pops the top. A thread is a device thread when
 * its pid or tid is 0. A task of a stream above 0 hangs under the last
 * runtime call of its correlation id. When a rank has exactly two threads
 * marked main (one holds a ProfilerStep#) or backward (one holds an
 * autograd:: slice), the outermost slices of the first in that order
 * (backward before main) that lie within a "## backward ##" slice of the
 * other (else within a ProfilerStep#) move under it, as HTA links its
 * backward thread (link_backward says what HTA does after).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/hta.h"
#include "metrics/metrics.h"
#include "util/vec.h"

/* One event of the graph; host slices first, then device tasks. Narrow:
 * a rank's graph holds one per event of the rank (indexes are 32-bit:
 * stack_rank refuses a rank of more events). A host slice's place in the
 * trace's order is its index (read in that order). */
typedef struct cnode {
    int64_t ts, te;         /* HTA's domain */
    int64_t name;           /* STRING_IDS id */
    int64_t conn;           /* CANN_API's connectionId (0: none) */
    int64_t kdur;           /* summed duration of the device tasks below */
    union {
        struct {
            int64_t pid, tid;
        } th;               /* a host slice's thread */
        int64_t ord;        /* a device task's place in the trace's order */
    } at;
    int32_t parent;         /* index of the parent node, -1: a thread's root, -2: in no tree,
                               -3: its own parent (HTA's linking, below) */
    int32_t depth, kernels;
    int32_t d0;             /* depth in its own thread, before the backward thread's linking */
    unsigned device : 1;    /* a device task */
    unsigned streamed : 1;  /* a host call with a stream (HTA: not a host slice) */
    unsigned resolved : 1;  /* depth set */
    unsigned lost : 1;      /* cut off every root by HTA's linking (keeps d0, counts no task) */
    unsigned sync : 1;      /* a cuda_sync event HTA takes for device work (add_syncs) */
    unsigned dropped : 1;   /* a sync event HTA's window leaves out: no row */
} cnode;

/* The graph: its nodes, and the device tasks below each node (their
 * indexes, in start order) as runs of one array, node after node (node i's
 * run holds v[i].kernels entries). */
typedef struct cgraph {
    cnode *v;
    size_t n, cap, nhost;
    uint32_t *run;
} cgraph;

/* The most events a rank's graph holds (its indexes are int32_t). */
#define GRAPH_MAX ((size_t)INT32_MAX)

/* ---- reading ---------------------------------------------------------------- */

/* A read of a rank's host slices into its graph, with its step cut. */
typedef struct host_read {
    const hta_ctx *h;
    const step_cut *cut;
    cgraph *g;
} host_read;

/* A slice of read_host's SQL, kept when HTA's window keeps it. */
static int host_row(sqlite3_stmt *st, void *ctx)
{
    const host_read *r = ctx;
    cgraph *g = r->g;
    cnode c = {.at.th = {sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)},
               .name = sqlite3_column_int64(st, 4), .conn = sqlite3_column_int64(st, 5), .parent = -2, .depth = -1};
    /* a call with a stream is, to HTA, a device event: in no tree */
    c.streamed = sqlite3_column_type(st, 8) != SQLITE_NULL && sqlite3_column_int64(st, 8) >= 0;
    hta_time(r->h->o.round_us, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), &c.ts, &c.te);
    /* TB_EVENT's slices (source 2) are no CPU events to HTA */
    if (!hta_host_kept(r->h, r->cut, c.ts, c.te, sqlite3_column_int(st, 6) != 2))
        return 0;
    if (c.te < c.ts)
        c.te = c.ts;
    return VEC_PUSH(g->v, g->n, g->cap, c);
}

/* A TB_EVENT slice that HTA takes for device work with a launching call:
 * a cuda_sync event (Stream Sync, Stream Wait Event; Context Sync as older
 * Kineto writes it, on stream 4294967295) whose stream is above 0 and
 * whose correlation is set. The others (Event Sync, Context Sync on stream
 * -1) stay host-side slices of their thread, as every other TB_EVENT slice. */
#define SYNC_DEVICE                                                                                            \
    "(cat IN (SELECT id FROM STRING_IDS WHERE value = 'cuda_sync') "                                          \
    "AND CASE WHEN json_valid(args) THEN ifnull(json_extract(args, '$.stream') > 0 "                          \
    "  AND json_extract(args, '$.correlation') > 0, 0) ELSE 0 END)"

/* The rank's host slices in HTA's window, into g (slices HTA rounds to a
 * negative duration, which stop HTA's call graph, count as zero-length):
 * PYTORCH_API's, then CANN_API's, then TB_EVENT's, each table's in rowid
 * order. One statement per table: each is then read in its rowid order,
 * where a UNION ALL ordered by (table, rowid) sorted every row in memory
 * first (about 30 MB at 1M events). */
static tb_status read_host(const hta_ctx *h, int64_t rank, cgraph *g, tb_error *err)
{
    static const char *const sql[] = {
        "SELECT startNs, endNs, globalTid >> 32, globalTid & 4294967295, name, 0, 0, rowid, streamId "
        "FROM PYTORCH_API WHERE ifnull(rankId, 0) = ?1 AND startNs IS NOT NULL AND endNs IS NOT NULL "
        "  AND globalTid IS NOT NULL ORDER BY rowid",
        "SELECT startNs, endNs, globalTid >> 32, globalTid & 4294967295, name, ifnull(connectionId, 0), 1, "
        "  rowid, streamId FROM CANN_API WHERE ifnull(rankId, 0) = ?1 AND startNs IS NOT NULL AND endNs IS NOT NULL "
        "  AND globalTid IS NOT NULL ORDER BY rowid",
        "SELECT startNs, endNs, pid, tid, name, 0, 2, rowid, NULL FROM TB_EVENT "
        "WHERE ifnull(rankId, 0) = ?1 AND ph = 'X' AND startNs IS NOT NULL AND endNs IS NOT NULL "
        "  AND typeof(pid) = 'integer' AND typeof(tid) = 'integer' AND NOT " SYNC_DEVICE " ORDER BY rowid",
    };
    host_read r = {h, hta_cut(h, rank), g};
    tb_status rc = TB_OK;
    for (size_t i = 0; !rc && i < sizeof sql / sizeof sql[0]; i++)
        rc = metrics_rows(h->m->db, h->what, sql[i], rank, host_row, &r, err);
    g->nhost = g->n;
    return rc;
}

/* The rank's device tasks (HTA's window, prepared), appended to g. */
static tb_status add_device(const hta_ctx *h, int64_t rank, const evvec *ev, cgraph *g, tb_error *err)
{
    int64_t *names = NULL;
    size_t nn = 0;
    tb_status rc = hta_task_names(h, rank, &names, &nn, err);
    for (size_t i = 0; !rc && i < ev->n; i++) {
        const dev_ev *e = &ev->v[i];
        if (e->op)
            continue;
        /* HTA links only the tasks of streams above 0 to their calls */
        cnode c = {.ts = e->s, .te = e->e, .conn = e->linked && e->stream > 0 ? e->conn : 0, .at.ord = e->ord,
                   .parent = -2, .depth = -1, .device = 1, .name = hta_task_name(names, nn, e->ord)};
        if (VEC_PUSH(g->v, g->n, g->cap, c))
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    free(names);
    return rc;
}

/* A sync event of add_syncs' SQL, a device node hung by its correlation. */
static int sync_row(sqlite3_stmt *st, void *ctx)
{
    const hta_ctx *h = ((const void **)ctx)[0];
    cgraph *g = ((void **)ctx)[1];
    cnode c = {.name = sqlite3_column_int64(st, 2), .conn = sqlite3_column_int64(st, 3),
               .at.ord = ((int64_t)1 << 48) + sqlite3_column_int64(st, 4), .parent = -2, .depth = -1, .device = 1,
               .sync = 1};
    hta_time(h->o.round_us, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), &c.ts, &c.te);
    return VEC_PUSH(g->v, g->n, g->cap, c);
}

/* The rank's cuda_sync events HTA takes for device work (SYNC_DEVICE),
 * appended to g as device nodes; HTA lists them among the tasks below
 * their launching call. Its window keeps those whose call it keeps
 * (drop_syncs, after hang_tasks). */
static tb_status add_syncs(const hta_ctx *h, int64_t rank, cgraph *g, tb_error *err)
{
    static const char sql[] =
        "SELECT startNs, endNs, name, json_extract(args, '$.correlation'), rowid FROM TB_EVENT "
        "WHERE ifnull(rankId, 0) = ?1 AND ph = 'X' AND startNs IS NOT NULL AND endNs IS NOT NULL AND " SYNC_DEVICE
        " ORDER BY rowid";
    const void *ctx[2] = {h, g};
    return metrics_rows(h->m->db, h->what, sql, rank, sync_row, (void *)ctx, err);
}

/* ---- HTA's nesting ---------------------------------------------------------- */

/* One end of a slice: HTA's (index, dur, kind, time); a host slice's
 * node index is its place in the trace's order. */
typedef struct send {
    int64_t time, dur;
    uint32_t node;
    int32_t open;
} send;

/* HTA's _less_than: x comes before y. */
static int end_before(const send *x, const send *y)
{
    if (x->time != y->time)
        return x->time < y->time;
    if (x->node == y->node)
        return x->open;
    if (x->dur == 0 || y->dur == 0) {
        if (x->dur == 0 && y->dur > 0)
            return !y->open;
        if (x->dur > 0 && y->dur == 0)
            return x->open;
        if (x->open && y->open)
            return x->node < y->node;
        if (!x->open && !y->open)
            return x->node > y->node;
        return x->open;
    }
    if (!x->open && y->open)
        return 1;
    if (x->open && !y->open)
        return 0;
    if (x->dur != y->dur)
        return x->open ? x->dur > y->dur : x->dur < y->dur;
    return x->open ? x->node < y->node : x->node > y->node;
}

static int cmp_end(const void *a, const void *b)
{
    const send *x = a, *y = b;
    return end_before(x, y) ? -1 : end_before(y, x) ? 1 : 0;
}

/* Nests the slices idx[0..n) of one host thread (HTA's stack walk). */
static tb_status nest_thread(const hta_ctx *h, cgraph *g, const uint32_t *idx, size_t n, tb_error *err)
{
    send *e = malloc(2 * n * sizeof *e);
    uint32_t *stack = malloc(n * sizeof *stack);
    if (!e || !stack) {
        free(e);
        free(stack);
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    for (size_t i = 0; i < n; i++) {
        const cnode *c = &g->v[idx[i]];
        e[2 * i] = (send){c->ts, c->te - c->ts, idx[i], 1};
        e[2 * i + 1] = (send){c->te, c->te - c->ts, idx[i], 0};
    }
    qsort(e, 2 * n, sizeof *e, cmp_end);
    size_t top = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        if (e[i].open) {
            g->v[e[i].node].parent = top ? (int32_t)stack[top - 1] : -1;
            stack[top++] = e[i].node;
        } else if (top) {
            top--;
        }
    }
    free(e);
    free(stack);
    return TB_OK;
}

/* Sets the depth of node i and of its ancestors: HTA's (outermost slices 0,
 * no tree -1; a node cut off every root keeps its first depth, d0). */
static void depth_of(cgraph *g, size_t i)
{
    int64_t j = (int64_t)i;
    size_t up = 0;
    while (!g->v[j].resolved && g->v[j].parent >= 0) {
        j = g->v[j].parent;
        up++;
    }
    if (!g->v[j].resolved) {
        g->v[j].lost = g->v[j].parent == -3;
        g->v[j].depth = g->v[j].lost ? g->v[j].d0 : g->v[j].parent == -2 ? -1 : 0;
        g->v[j].resolved = 1;
    }
    int64_t base = g->v[j].depth, a = (int64_t)i;
    for (size_t c = up; c > 0; c--) {
        g->v[a].lost = g->v[j].lost;
        g->v[a].depth = g->v[a].lost ? g->v[a].d0 : (int32_t)(base + (int64_t)c);
        g->v[a].resolved = 1;
        a = g->v[a].parent;
    }
}

/* ---- the threads -------------------------------------------------------------- */

/* A host slice in its thread's order (its node index is its place in the trace). */
typedef struct tkey {
    int64_t pid, tid;
    uint32_t node;
} tkey;

static int cmp_tkey(const void *a, const void *b)
{
    const tkey *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

/* The STRING_IDS ids whose value matches a GLOB pattern, sorted. */
typedef struct idset {
    int64_t *id;
    size_t n;
} idset;

static tb_status read_ids(const hta_ctx *h, const char *glob, idset *s, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h->m->db, "SELECT id FROM STRING_IDS WHERE value GLOB ?1 ORDER BY id", -1, &st, NULL) !=
        SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    sqlite3_bind_text(st, 1, glob, -1, SQLITE_STATIC);
    return metrics_read_int64(h->m->db, st, h->what, 1, &s->id, &s->n, err);
}

static int in_set(const idset *s, int64_t id)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->id[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->id[lo] == id;
}

/* The names that mark threads and the backward thread's new parents. */
typedef struct marks {
    idset step, autograd, bwd;
} marks;

/* One host thread of the rank: its slices k[first .. first + n). */
typedef struct thr {
    size_t first, n;
    int label; /* 0 none, 1 backward, 2 main */
} thr;

/* The outermost slices (no parent yet) of one thread, by start, for
 * move_under: a slice ending before it starts is kept apart and looked at
 * every time (the search by start cannot bound it). */
typedef struct roots {
    struct rootkey {
        int64_t ts;
        size_t node;
    } *v, *odd;
    size_t n, nodd;
    size_t left; /* how many of them still have no parent */
} roots;

static int cmp_rootkey(const void *a, const void *b)
{
    const struct rootkey *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

/* r: the outermost slices of thread t; -1 when out of memory. */
static int roots_of(const cgraph *g, const tkey *k, const thr *t, roots *r)
{
    *r = (roots){0};
    r->v = malloc((t->n ? t->n : 1) * sizeof *r->v);
    r->odd = malloc((t->n ? t->n : 1) * sizeof *r->odd);
    if (!r->v || !r->odd)
        return -1;
    for (size_t j = 0; j < t->n; j++) {
        size_t i = k[t->first + j].node;
        if (g->v[i].parent != -1)
            continue;
        if (g->v[i].te < g->v[i].ts)
            r->odd[r->nodd++] = (struct rootkey){g->v[i].ts, i};
        else
            r->v[r->n++] = (struct rootkey){g->v[i].ts, i};
    }
    if (r->n)
        qsort(r->v, r->n, sizeof *r->v, cmp_rootkey);
    r->left = r->n + r->nodd;
    return 0;
}

static void roots_free(roots *r)
{
    free(r->v);
    free(r->odd);
}

/* Moves slice i, an outermost one, under p when it lies within p. */
static void move_one(cgraph *g, roots *r, size_t i, size_t p, size_t *moved)
{
    cnode *c = &g->v[i];
    if (c->parent != -1 || c->ts < g->v[p].ts || c->te > g->v[p].te)
        return;
    c->parent = i == p ? -3 : (int32_t)p;
    (*moved)++;
    r->left--;
}

/* Moves the outermost slices of a thread (r) that lie within node p under
 * p; returns how many of them are left outside. p itself, when among them,
 * becomes its own parent (-3). Only the slices starting within p can lie
 * within it: found by start, not by a pass over the thread. */
static size_t move_under(cgraph *g, roots *r, size_t p, size_t *moved)
{
    int64_t ts = g->v[p].ts, te = g->v[p].te;
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->v[mid].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t j = lo; j < r->n && r->v[j].ts <= te; j++)
        move_one(g, r, r->v[j].node, p, moved);
    for (size_t j = 0; j < r->nodd; j++)
        move_one(g, r, r->odd[j].node, p, moved);
    return r->left;
}

/*
 * HTA's linking of the backward thread b to the main thread m: for each
 * parent of m in trace order ("## backward ##" slices, else ProfilerStep#),
 * b's outermost slices within it move under it. Once b has none left (HTA
 * then deletes b's root and takes m's root for it), the parents that follow
 * take m's own outermost slices within them, themselves included: such a
 * parent becomes its own parent, cut off every root with what is below it
 * (HTA then counts no task below them and keeps their first depth).
 * -1 when out of memory.
 */
static int link_backward(cgraph *g, const tkey *k, const thr *b, const thr *m, const marks *mk)
{
    const idset *par = &mk->bwd;
    int any = 0, switched = 0, rc = 0;
    for (size_t i = 0; i < m->n && !any; i++)
        any = in_set(par, g->v[k[m->first + i].node].name);
    if (!any)
        par = &mk->step;
    roots rb, rm = {0};
    if (roots_of(g, k, b, &rb) < 0) {
        roots_free(&rb);
        return -1;
    }
    for (size_t i = 0; i < m->n; i++) {
        size_t p = k[m->first + i].node, moved = 0;
        if (!in_set(par, g->v[p].name) || g->v[p].parent == -3)
            continue;
        if (switched) {
            move_under(g, &rm, p, &moved);
        } else if (move_under(g, &rb, p, &moved) == 0 && moved) {
            switched = 1;
            if (roots_of(g, k, m, &rm) < 0) {
                rc = -1;
                break;
            }
        }
    }
    roots_free(&rb);
    roots_free(&rm);
    return rc;
}

/* Nests every host thread of g (device threads stay out of the trees), then links the backward thread. */
static tb_status nest_all(const hta_ctx *h, cgraph *g, const marks *mk, tb_error *err)
{
    tkey *k = malloc((g->nhost ? g->nhost : 1) * sizeof *k);
    uint32_t *idx = malloc((g->nhost ? g->nhost : 1) * sizeof *idx);
    thr *t = NULL;
    size_t nk = 0, nt = 0, capt = 0;
    tb_status rc = TB_OK;
    if (!k || !idx)
        rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    for (size_t i = 0; !rc && i < g->nhost; i++)
        if (!g->v[i].streamed && g->v[i].at.th.pid != 0 && g->v[i].at.th.tid != 0)
            k[nk++] = (tkey){g->v[i].at.th.pid, g->v[i].at.th.tid, (uint32_t)i};
    if (!rc && nk)
        qsort(k, nk, sizeof *k, cmp_tkey);
    for (size_t i = 0; !rc && i < nk;) {
        size_t j = i;
        thr th = {i, 0, 0};
        for (; j < nk && k[j].pid == k[i].pid && k[j].tid == k[i].tid; j++) {
            idx[j - i] = k[j].node;
            if (in_set(&mk->step, g->v[k[j].node].name))
                th.label = 2;
            else if (th.label == 0 && in_set(&mk->autograd, g->v[k[j].node].name))
                th.label = 1;
        }
        th.n = j - i;
        rc = nest_thread(h, g, idx, th.n, err);
        if (!rc && VEC_PUSH(t, nt, capt, th))
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
        i = j;
    }
    /* exactly two marked threads: the first by label (backward, then main) moves under the other */
    const thr *two[2] = {NULL, NULL};
    size_t nmarked = 0;
    for (size_t i = 0; !rc && i < nt; i++)
        if (t[i].label && nmarked++ < 2)
            two[nmarked - 1] = &t[i];
    for (size_t i = 0; !rc && i < g->nhost; i++)
        depth_of(g, i);
    for (size_t i = 0; !rc && i < g->nhost; i++) {
        g->v[i].d0 = g->v[i].depth;
        g->v[i].depth = -1;
        g->v[i].resolved = 0;
    }
    if (!rc && nmarked == 2) {
        if (two[1]->label < two[0]->label) {
            const thr *x = two[0];
            two[0] = two[1];
            two[1] = x;
        }
        if (link_backward(g, k, two[0], two[1], mk) < 0)
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    free(k);
    free(idx);
    free(t);
    return rc;
}

/* ---- the device tasks ------------------------------------------------------- */

/* A launching call: its connection id and node (its place in the trace). */
typedef struct lcall {
    int64_t conn;
    uint32_t node;
} lcall;

static int cmp_lcall(const void *a, const void *b)
{
    const lcall *x = a, *y = b;
    if (x->conn != y->conn)
        return x->conn < y->conn ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

/* The last call (trace order) of connection conn, as HTA's merge keeps it, or -1. */
static int32_t find_call(const lcall *l, size_t n, int64_t conn)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l[mid].conn <= conn)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && l[lo - 1].conn == conn ? (int32_t)l[lo - 1].node : -1;
}

static int cmp_task(const void *a, const void *b)
{
    const cnode *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->at.ord > y->at.ord) - (x->at.ord < y->at.ord);
}

/* Hangs each device task under its launching call (a slice in a host tree). */
static tb_status hang_tasks(const hta_ctx *h, int64_t rank, cgraph *g, tb_error *err)
{
    lcall *l = malloc((g->nhost ? g->nhost : 1) * sizeof *l);
    size_t nl = 0;
    if (!l)
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    if (g->n > g->nhost)
        qsort(g->v + g->nhost, g->n - g->nhost, sizeof *g->v, cmp_task);
    for (size_t i = 0; i < g->nhost; i++)
        if (g->v[i].conn && g->v[i].parent != -2)
            l[nl++] = (lcall){g->v[i].conn, (uint32_t)i};
    if (nl)
        qsort(l, nl, sizeof *l, cmp_lcall);
    for (size_t i = g->nhost; i < g->n; i++)
        if (g->v[i].conn) {
            g->v[i].parent = find_call(l, nl, g->v[i].conn);
            if (g->v[i].parent >= 0)
                g->v[i].d0 = g->v[g->v[i].parent].d0 + 1;
        }
    /* HTA's window (two steps or more) keeps the device events whose call it keeps */
    const step_cut *cut = hta_cut(h, rank);
    for (size_t i = g->nhost; i < g->n; i++) {
        if (g->v[i].parent == -1)
            g->v[i].parent = -2;
        g->v[i].dropped = g->v[i].sync && g->v[i].parent < 0 && cut && cut->nsteps >= 2;
    }
    free(l);
    return TB_OK;
}

/* Each task counts toward itself and every slice above it; the tasks are
 * in start order (then the trace's), so each run of tasks below is too.
 * A first pass counts them, a second writes the runs. */
static tb_status count_tasks(const hta_ctx *h, cgraph *g, tb_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < g->n; i++)
        depth_of(g, i);
    for (size_t i = g->nhost; i < g->n; i++) {
        if (g->v[i].parent == -2 || g->v[i].lost)
            continue;
        for (int64_t a = (int64_t)i; a >= 0; a = g->v[a].parent) {
            g->v[a].kernels++;
            g->v[a].kdur += g->v[i].te - g->v[i].ts;
            total++;
        }
    }
    size_t *at = malloc((g->n ? g->n : 1) * sizeof *at);
    g->run = malloc((total ? total : 1) * sizeof *g->run);
    if (!at || !g->run) {
        free(at);
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    for (size_t i = 0, sum = 0; i < g->n; i++) {
        at[i] = sum;
        sum += (size_t)g->v[i].kernels;
    }
    for (size_t i = g->nhost; i < g->n; i++) {
        if (g->v[i].parent == -2 || g->v[i].lost)
            continue;
        for (int64_t a = (int64_t)i; a >= 0; a = g->v[a].parent)
            g->run[at[a]++] = (uint32_t)i;
    }
    free(at);
    return TB_OK;
}

/* ---- the rows ----------------------------------------------------------------- */

/* Binds STRING_IDS' value of id to column col of h->ins (name_of: its SELECT). */
static void bind_name(const hta_ctx *h, sqlite3_stmt *name_of, int col, int64_t id)
{
    sqlite3_bind_int64(name_of, 1, id);
    if (sqlite3_step(name_of) == SQLITE_ROW)
        sqlite3_bind_text(h->ins, col, (const char *)sqlite3_column_text(name_of, 0), -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(h->ins, col);
    sqlite3_reset(name_of);
}

/* Inserts node c of g: its place in the trees and the tasks below it
 * (run: its run of them). */
static tb_status insert_node(const hta_ctx *h, int64_t rank, const cgraph *g, const cnode *c, const uint32_t *run,
                             sqlite3_stmt *name_of, tb_error *err)
{
    sqlite3_str *ids = sqlite3_str_new(h->m->db);
    sqlite3_str_appendchar(ids, 1, '[');
    for (int32_t i = 0; i < c->kernels; i++)
        sqlite3_str_appendf(ids, i ? ",%lld" : "%lld", (long long)g->v[run[i]].name);
    sqlite3_str_appendchar(ids, 1, ']');
    char *text = sqlite3_str_finish(ids);
    if (!text)
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    sqlite3_bind_int64(h->ins, 1, rank);
    if (c->device)
        sqlite3_bind_null(h->ins, 2);
    else
        sqlite3_bind_int64(h->ins, 2, (int64_t)((uint64_t)c->at.th.pid << 32 | (uint64_t)(c->at.th.tid & 0xffffffff)));
    sqlite3_bind_text(h->ins, 3, c->device ? "device" : "host", -1, SQLITE_STATIC);
    bind_name(h, name_of, 4, c->name);
    hta_bind_us(h, 5, c->ts);
    hta_bind_us(h, 6, c->te - c->ts);
    sqlite3_bind_int64(h->ins, 7, c->depth);
    sqlite3_bind_int64(h->ins, 8, c->kernels);
    hta_bind_us(h, 9, c->kdur);
    sqlite3_bind_text(h->ins, 10, text, -1, SQLITE_TRANSIENT);
    sqlite3_free(text);
    return hta_insert_done(h, err);
}

static void graph_free(cgraph *g)
{
    free(g->v);
    free(g->run);
}

/* HTA's call graph of one rank (the header's rules), one row per event. */
static tb_status stack_rank(void *ctx, int64_t rank, evvec *ev, tb_error *err)
{
    hta_ctx *h = ctx;
    const marks *mk = h->extra;
    if (!hta_prepare(h, rank, ev))
        return TB_OK;
    cgraph g = {0};
    sqlite3_stmt *name_of = NULL;
    tb_status rc = read_host(h, rank, &g, err);
    if (!rc)
        rc = add_device(h, rank, ev, &g, err);
    if (!rc)
        rc = add_syncs(h, rank, &g, err);
    if (!rc && g.n > GRAPH_MAX)
        rc = tb_error_set(err, TB_ERR_NOMEM, "%s: rank %lld has %lld events, more than the %lld a call graph holds",
                          h->what, (long long)rank, (long long)g.n, (long long)GRAPH_MAX);
    if (!rc)
        rc = nest_all(h, &g, mk, err);
    if (!rc)
        rc = hang_tasks(h, rank, &g, err);
    if (!rc)
        rc = count_tasks(h, &g, err);
    if (!rc && sqlite3_prepare_v2(h->m->db, "SELECT value FROM STRING_IDS WHERE id = ?", -1, &name_of, NULL) !=
                   SQLITE_OK)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    /* one transaction for the rank's rows: no lock taken and dropped per row */
    int sp = !rc && sqlite3_exec(h->m->db, "SAVEPOINT tb_call_stack", NULL, NULL, NULL) == SQLITE_OK;
    if (!rc && !sp)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    for (size_t i = 0, off = 0; !rc && i < g.n; off += (size_t)g.v[i++].kernels)
        if (!g.v[i].dropped)
            rc = insert_node(h, rank, &g, &g.v[i], g.run + off, name_of, err);
    sqlite3_finalize(name_of);
    if (sp && rc)
        sqlite3_exec(h->m->db, "ROLLBACK TO tb_call_stack", NULL, NULL, NULL);
    if (sp && sqlite3_exec(h->m->db, "RELEASE tb_call_stack", NULL, NULL, NULL) != SQLITE_OK && !rc)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    graph_free(&g);
    return rc;
}

static tb_status build_call_stack(const metric_ctx *m, tb_error *err)
{
    marks mk;
    memset(&mk, 0, sizeof mk);
    hta_ctx probe = {.m = m, .what = "call_stack"};
    tb_status rc = read_ids(&probe, "ProfilerStep#*", &mk.step, err);
    if (!rc)
        rc = read_ids(&probe, "*autograd::*", &mk.autograd, err);
    if (!rc)
        rc = read_ids(&probe, "## backward ##*", &mk.bwd, err);
    if (!rc)
        rc = hta_build(m, "call_stack",
                       "DROP TABLE IF EXISTS temp.call_stack;"
                       "CREATE TEMP TABLE call_stack (rank INTEGER, thread INTEGER, side TEXT, name TEXT, ts NUMERIC, "
                       "dur NUMERIC, depth INTEGER, kernels INTEGER, kernel_dur NUMERIC, kernel_names TEXT)",
                       "INSERT INTO temp.call_stack VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", stack_rank, &mk, err);
    free(mk.step.id);
    free(mk.autograd.id);
    free(mk.bwd.id);
    return rc;
}

/* ---- the family --------------------------------------------------------------- */

const metric_table metrics_hta_stacks[] = {
    {"call_stack", {NULL}, build_call_stack,
     "HTA's call graph per rank: each host slice and device task with its depth and the tasks below it (options hta.*)",
     "rank", {NULL}},
};
const size_t metrics_hta_stacks_n = sizeof metrics_hta_stacks / sizeof metrics_hta_stacks[0];
