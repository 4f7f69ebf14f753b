/* SPDX-License-Identifier: MIT */
/*
 * critical_graph.c - HTA's critical path graph (its CPGraph) over the
 * events of one window of a rank, and its longest path: the part of the
 * critical_path computed table (critical_path.c reads the events, chooses
 * the windows and writes the rows; reference: metrics.md,
 * "critical_path").
 *
 * Each host op (PYTORCH_API op), runtime or driver call (CANN_API
 * cuda_runtime, cuda_driver) and kept device task is two nodes, its start
 * and end, numbered in (time, trace order). Edges, in the order HTA adds
 * them (a second edge between the same nodes replaces the first, keeping
 * its place):
 *
 *   1. the runtime lock: calls that take CUDA's runtime lock
 *      (cudaHostAlloc, cudaLaunchKernel, cudaMemcpyAsync) in node order;
 *      each end closes its own start (an operator edge) and the starts
 *      still open (dependencies), and follows the previous end;
 *   2. each host thread's call stack (HTA's CallStackGraph; a backward
 *      thread, the one thread holding "autograd" ops, merged into the
 *      forward one, the one thread holding "forward" ops): consecutive
 *      nodes of a depth-first walk, an operator edge inside an op and a
 *      dependency between top-level ops, none between two lock calls that
 *      are not an end and a start; the edge into a blocking call's end
 *      (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventQuery,
 *      cudaEventSynchronize, cudaMemcpy, cudaMemcpyAsync) weighs zero;
 *   3. the device tasks in start order, with the cuda_sync events (kept
 *      in TB_EVENT) at their ends: a task gets its operator edge, then a
 *      launch delay edge from its call's start when the stream's queue
 *      was 1 after the launch and 0 after the start and the stream's last
 *      task ended before the launch, else a kernel-kernel delay edge from
 *      the stream's last task when the gap is under 1500 µs; a sync event
 *      gets sync edges into the end of its runtime call: from the last
 *      task of its stream (Stream Sync), of every stream (Context Sync),
 *      or of the task whose launch last preceded the awaited
 *      cudaEventRecord on the awaited stream (Event Sync); a Stream Wait
 *      Event (every one, whatever the step) makes the next task launched
 *      from its cudaStreamWaitEvent's thread onto its stream wait for that
 *      task: a sync edge into the waiting task's start, which then gets a
 *      delay edge only when the awaited task ended before the launch (or
 *      before the stream's last task ended). A sync edge between two
 *      tasks of one stream makes HTA refuse the graph: no row, a note; so
 *      does a kept task whose counted launch has other tasks of its
 *      correlation (critical_path.c's multi_task_launch).
 *
 * A weight is the time between the two nodes (dependencies: zero); a
 * negative weight counts as zero for the path (HTA's rule), and as itself
 * in the row. The path is networkx's dag_longest_path over HTA's graph
 * (topological order by generations, the first best predecessor, the
 * first farthest node), so that equal paths resolve as HTA resolves them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/critical_path_int.h"
#include "util/vec.h"

void cp_graph_free(cpgraph *g)
{
    free(g->n);
    free(g->e);
    free(g->shead);
    free(g->stail);
    free(g->phead);
    free(g->ptail);
    memset(g, 0, sizeof *g);
}

static int cmp_node(const void *a, const void *b)
{
    const cpnode *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->ord != y->ord)
        return x->ord < y->ord ? -1 : 1;
    return (int)y->start - (int)x->start;
}

/* A start and an end node for every kept event that is a node, numbered
 * in (time, trace order). */
int cp_make_nodes(cev *v, const size_t *kept, size_t nkept, cpgraph *g)
{
    for (size_t k = 0; k < nkept; k++) {
        size_t i = kept[k];
        if (!v[i].node)
            continue;
        if (VEC_PUSH(g->n, g->nn, g->capn, ((cpnode){v[i].ts, v[i].ord, i, 1})) ||
            VEC_PUSH(g->n, g->nn, g->capn, ((cpnode){v[i].te, v[i].ord, i, 0})))
            return -1;
    }
    if (g->nn)
        qsort(g->n, g->nn, sizeof *g->n, cmp_node);
    size_t m = g->nn + 1;
    g->shead = malloc(m * sizeof *g->shead);
    g->stail = malloc(m * sizeof *g->stail);
    g->phead = malloc(m * sizeof *g->phead);
    g->ptail = malloc(m * sizeof *g->ptail);
    if (!g->shead || !g->stail || !g->phead || !g->ptail)
        return -1;
    for (size_t i = 0; i < g->nn; i++) {
        g->shead[i] = g->stail[i] = g->phead[i] = g->ptail[i] = NIL;
        *(g->n[i].start ? &v[g->n[i].ev].sn : &v[g->n[i].ev].en) = i;
    }
    return 0;
}

/* Adds edge u -> v (networkx: a second edge between the same nodes
 * replaces the first's data, in the first's place); returns its index or
 * NIL when out of memory. Dependencies weigh zero, as does zero_w. */
static size_t add_edge(cpgraph *g, size_t u, size_t v, int type, int zero_w)
{
    int64_t w = type == E_DEP || type == E_SYNC || zero_w ? 0 : g->n[v].ts - g->n[u].ts;
    for (size_t i = g->shead[u]; i != NIL; i = g->e[i].snext)
        if (g->e[i].v == v) {
            g->e[i].type = type;
            g->e[i].w = w;
            return i;
        }
    cpedge e = {.u = u, .v = v, .snext = NIL, .pnext = NIL, .type = type, .w = w, .ev = NIL};
    if (VEC_PUSH(g->e, g->ne, g->cape, e))
        return NIL;
    size_t i = g->ne - 1;
    if (g->stail[u] == NIL)
        g->shead[u] = i;
    else
        g->e[g->stail[u]].snext = i;
    g->stail[u] = i;
    if (g->ptail[v] == NIL)
        g->phead[v] = i;
    else
        g->e[g->ptail[v]].pnext = i;
    g->ptail[v] = i;
    return i;
}

/* HTA's attribution of an operator edge: to the start's event when it
 * leaves a start, to the end's when it reaches an end, else to the parent. */
static void attribute(cpgraph *g, size_t e, size_t parent)
{
    const cpnode *s = &g->n[g->e[e].u], *d = &g->n[g->e[e].v];
    if (g->e[e].type == E_KK || s->start)
        g->e[e].ev = s->ev;
    else if (!d->start)
        g->e[e].ev = d->ev;
    else
        g->e[e].ev = parent;
}

/* 1: the runtime lock's edges (see the top of the file). */
int cp_lock_edges(cpgraph *g, const cev *v)
{
    size_t *open = malloc((g->nn + 1) * sizeof *open), nopen = 0, last = NIL;
    if (!open)
        return -1;
    for (size_t i = 0; i < g->nn; i++) {
        const cpnode *nd = &g->n[i];
        if (!v[nd->ev].lock)
            continue;
        if (nd->start) {
            open[nopen++] = i;
        } else {
            while (nopen) {
                size_t p = open[--nopen];
                int own = g->n[p].ev == nd->ev;
                size_t e = add_edge(g, p, i, own ? E_OP : E_DEP, 0);
                if (e == NIL)
                    return free(open), -1;
                if (own)
                    attribute(g, e, nd->ev);
            }
            if (last != NIL && !g->n[last].start && add_edge(g, last, i, E_DEP, 0) == NIL)
                return free(open), -1;
        }
        last = i;
    }
    free(open);
    return 0;
}

/* One end of a host slice in its thread's call stack. */
typedef struct send {
    int64_t pid, tid, time, dur, ord;
    size_t ev, loc; /* the event, its place in the window's kept events */
    int start;
} send;

/* HTA's order of a thread's slice ends (its compare_events, for slices
 * longer than zero): time; at equal times an end before a start, the
 * longer slice's start first, the shorter slice's end first, then the
 * trace's order (ends: reversed). */
static int cmp_send(const void *a, const void *b)
{
    const send *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ev == y->ev)
        return y->start - x->start;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->start != y->start)
        return x->start ? 1 : -1;
    if (x->dur != y->dur)
        return (x->dur < y->dur) == !x->start ? -1 : 1;
    if (x->ord == y->ord)
        return 0;
    return (x->ord < y->ord) == x->start ? -1 : 1;
}

/* A thread's tree (HTA's CallStackGraph) and the walk's state. */
typedef struct walk {
    cpgraph *g;
    const cev *v;
    const size_t *ev_of;                /* the window's kept events */
    size_t *parent, *head, *tail, *sib; /* per kept event, by its place */
    size_t last, last_parent;
    int depth;
    int oom;
} walk;

static void walk_step(walk *w, size_t loc, size_t node, int enter)
{
    size_t ev = w->ev_of[loc];
    const cev *c = &w->v[ev];
    if (c->sn == NIL || c->en == NIL)
        return;
    size_t last = w->last;
    const cpnode *ln = last == NIL ? NULL : &w->g->n[last];
    /* two lock calls share the lock unless an end is followed by a start */
    int shared = ln && w->v[ln->ev].lock && c->lock && (ln->start || !enter);
    if (ln && !shared) {
        int type = enter && w->depth == 0 ? E_DEP : E_OP;
        size_t e = add_edge(w->g, last, node, type, !enter && c->blocking);
        if (e == NIL)
            w->oom = 1;
        else if (type == E_OP)
            attribute(w->g, e, w->last_parent);
    }
    w->last = node;
    w->last_parent = w->parent[loc] == NIL ? NIL : w->ev_of[w->parent[loc]];
    w->depth += enter ? 1 : -1;
}

static void walk_tree(walk *w, size_t loc)
{
    walk_step(w, loc, w->v[w->ev_of[loc]].sn, 1);
    for (size_t k = w->head[loc]; k != NIL; k = w->sib[k])
        walk_tree(w, k);
    walk_step(w, loc, w->v[w->ev_of[loc]].en, 0);
}

/* One thread's ends s[0..n): the tree by HTA's stack rule, then the walk. */
static void thread_edges(walk *w, const send *s, size_t n)
{
    size_t top = 0, root_head = NIL, root_tail = NIL;
    size_t *stk = malloc((n + 1) * sizeof *stk);
    if (!stk) {
        w->oom = 1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        size_t loc = s[i].loc;
        if (!s[i].start) {
            if (top)
                top--;
            continue;
        }
        size_t p = top ? stk[top - 1] : NIL;
        w->parent[loc] = p;
        w->head[loc] = w->tail[loc] = w->sib[loc] = NIL;
        size_t *h = p == NIL ? &root_head : &w->head[p], *t = p == NIL ? &root_tail : &w->tail[p];
        if (*t == NIL)
            *h = loc;
        else
            w->sib[*t] = loc;
        *t = loc;
        stk[top++] = loc;
    }
    free(stk);
    w->last = w->last_parent = NIL;
    w->depth = 0;
    for (size_t k = root_head; k != NIL; k = w->sib[k])
        walk_tree(w, k);
}

/* The one thread (tid) whose kept ops carry flag (fwd or bwd), or -1. */
static int64_t flag_tid(const rankdata *d, int bwd)
{
    const cev *v = d->v;
    int64_t tid = -1;
    for (size_t k = 0; k < d->nkept; k++) {
        size_t i = d->kept[k];
        if (i < d->nhost && !v[i].device && (bwd ? v[i].bwd : v[i].fwd)) {
            if (tid != -1 && tid != v[i].tid)
                return -1;
            tid = v[i].tid;
        }
    }
    return tid;
}

/* 2: the call stacks' edges, thread by thread. */
int cp_stack_edges(cpgraph *g, const rankdata *d)
{
    const cev *v = d->v;
    size_t nhost = d->nhost, n = 0, m = d->nkept, *buf = malloc((4 * m + 1) * sizeof *buf);
    int64_t fwd = flag_tid(d, 0), bwd = flag_tid(d, 1);
    send *s = malloc((2 * m + 1) * sizeof *s);
    if (!s || !buf) {
        free(s);
        free(buf);
        return -1;
    }
    for (size_t k = 0; k < d->nkept; k++) {
        size_t i = d->kept[k];
        if (i >= nhost)
            continue;
        int64_t tid = fwd != -1 && bwd != -1 && v[i].tid == bwd ? fwd : v[i].tid;
        int64_t dur = v[i].te - v[i].ts;
        s[n++] = (send){v[i].pid, tid, v[i].ts, dur, v[i].ord, i, k, 1};
        s[n++] = (send){v[i].pid, tid, v[i].te, dur, v[i].ord, i, k, 0};
    }
    if (n)
        qsort(s, n, sizeof *s, cmp_send);
    walk w = {.g = g, .v = v, .ev_of = d->kept, .parent = buf, .head = buf + m, .tail = buf + 2 * m,
              .sib = buf + 3 * m};
    for (size_t i = 0, j; i < n && !w.oom; i = j) {
        for (j = i + 1; j < n && s[j].pid == s[i].pid && s[j].tid == s[i].tid; j++)
            ;
        thread_edges(&w, s + i, j - i);
    }
    free(s);
    free(buf);
    return w.oom ? -1 : 0;
}

/* HTA's order of the device loop: tasks by start, sync events by end. */
static int cmp_dev(const void *a, const void *b)
{
    const cev *x = *(const cev *const *)a, *y = *(const cev *const *)b;
    int64_t tx = x->sync ? x->te : x->ts, ty = y->sync ? y->te : y->ts;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* The stream's last task end (a node), kept per stream. */
typedef struct slast {
    int64_t stream;
    size_t node;
} slast;

static size_t find_last(const slast *l, size_t nl, int64_t stream)
{
    for (size_t i = 0; i < nl; i++)
        if (l[i].stream == stream)
            return l[i].node;
    return NIL;
}

/* HTA's edges of a sync event: from the last task of its stream (Stream
 * Sync), of every stream (Context Sync), or from the task the awaited
 * record follows (Event Sync) to the end of its runtime call. */
static int sync_edges(cpgraph *g, const cev *v, const cev *k, const slast *l, size_t nl)
{
    size_t to = v[k->launch].en, from[1];
    if (to == NIL)
        return 0;
    if (k->sync == S_CONTEXT) {
        for (size_t i = 0; i < nl; i++)
            if (l[i].node != NIL && add_edge(g, l[i].node, to, E_SYNC, 0) == NIL)
                return -1;
        return 0;
    }
    if (k->sync == S_STREAM) {
        from[0] = find_last(l, nl, k->stream);
    } else {
        from[0] = k->awaited == NIL ? NIL : v[k->awaited].en;
    }
    return from[0] != NIL && add_edge(g, from[0], to, E_SYNC, 0) == NIL ? -1 : 0;
}

static size_t *last_of(slast *l, size_t *nl, int64_t stream)
{
    for (size_t i = 0; i < *nl; i++)
        if (l[i].stream == stream)
            return &l[i].node;
    l[*nl] = (slast){stream, NIL};
    return &l[(*nl)++].node;
}

/* A task's edges (HTA's kernel loop): its own, the sync edge from the task
 * a Stream Wait Event made it wait for (ksync), then a launch delay or a
 * kernel-kernel delay edge. */
static int task_edges(cpgraph *g, const cev *v, size_t ki, size_t *ksync, slast *l, size_t *nl, int64_t kk_gap)
{
    const cev *k = &v[ki], *run = &v[k->launch];
    size_t e = add_edge(g, k->sn, k->en, E_OP, 0);
    if (e == NIL)
        return -1;
    attribute(g, e, NIL);
    size_t ks = ksync ? ksync[ki] : NIL, ks_end = ks == NIL ? NIL : v[ks].en;
    if (ksync)
        ksync[ki] = NIL;
    if (ks_end == NIL)
        ks = NIL;
    else if (add_edge(g, ks_end, k->sn, E_SYNC, 0) == NIL)
        return -1;
    size_t *last = last_of(l, nl, k->stream);
    if (k->qrun == 1 && k->qdev == 0 && (*last == NIL || g->n[*last].ts < run->ts) &&
        (ks == NIL || g->n[ks_end].ts < run->ts)) {
        if (run->sn != NIL && add_edge(g, run->sn, k->sn, E_LAUNCH, 0) == NIL)
            return -1;
    } else if (*last != NIL && k->ts - g->n[*last].ts < kk_gap && (ks == NIL || g->n[ks_end].ts < g->n[*last].ts)) {
        e = add_edge(g, *last, k->sn, E_KK, 0);
        if (e == NIL)
            return -1;
        attribute(g, e, NIL);
    }
    *last = k->en;
    return 0;
}

/* 3: the device tasks' edges. kk_gap: HTA's threshold in the domain's unit.
 * The waits' scratch (rd->ksync, NIL throughout; NULL when no task
 * waits) is NIL again after. */
int cp_kernel_edges(cpgraph *g, rankdata *rd, int64_t kk_gap)
{
    cev *v = rd->v;
    size_t nd = 0, nl = 0, m = rd->nkept + 1, *ksync = rd->ksync;
    const cev **d = malloc(m * sizeof *d);
    slast *l = malloc(m * sizeof *l);
    int rc = !d || !l ? -1 : 0;
    for (size_t k = 0; !rc && k < rd->nkept; k++)
        if (rd->kept[k] >= rd->nhost)
            d[nd++] = &v[rd->kept[k]];
    if (!rc && nd)
        qsort(d, nd, sizeof *d, cmp_dev);
    for (size_t i = 0; i < nd && !rc; i++) {
        const cev *k = d[i];
        if (k->sync == S_WAIT) {
            /* the next launch on the call's thread and stream waits for the
             * task the awaited record follows */
            if (k->waiter != NIL && k->awaited != NIL)
                ksync[k->waiter] = k->awaited;
        } else if (k->sync) {
            rc = sync_edges(g, v, k, l, nl);
        } else {
            rc = task_edges(g, v, (size_t)(k - v), ksync, l, &nl, kk_gap);
        }
    }
    for (size_t i = 0; i < nd; i++)
        if (d[i]->sync == S_WAIT && d[i]->waiter != NIL)
            ksync[d[i]->waiter] = NIL;
    free(d);
    free(l);
    return rc;
}

/* networkx's dag_longest_path over the weights (negative ones as zero):
 * the path's edges in order into path (*np of them). Returns 1 when the
 * graph has a cycle, -1 when out of memory. */
int cp_longest_path(const cpgraph *g, size_t *path, size_t *np)
{
    size_t n = g->nn, *indeg = calloc(n + 1, sizeof *indeg), *topo = malloc((n + 1) * sizeof *topo);
    int64_t *dist = malloc((n + 1) * sizeof *dist);
    size_t *from = malloc((n + 1) * sizeof *from), nt = 0;
    int rc = !indeg || !topo || !dist || !from ? -1 : 0;
    for (size_t i = 0; !rc && i < g->ne; i++)
        indeg[g->e[i].v]++;
    for (size_t i = 0; !rc && i < n; i++)
        if (!indeg[i])
            topo[nt++] = i;
    /* generation by generation: a generation's order is its parents' out edges' */
    for (size_t i = 0; !rc && i < nt; i++)
        for (size_t e = g->shead[topo[i]]; e != NIL; e = g->e[e].snext)
            if (--indeg[g->e[e].v] == 0)
                topo[nt++] = g->e[e].v;
    if (!rc && nt != n)
        rc = 1;
    size_t best = NIL;
    for (size_t i = 0; !rc && i < nt; i++) {
        size_t v = topo[i];
        dist[v] = 0;
        from[v] = NIL;
        int first = 1;
        for (size_t e = g->phead[v]; e != NIL; e = g->e[e].pnext) {
            int64_t d = dist[g->e[e].u] + (g->e[e].w < 0 ? 0 : g->e[e].w);
            if (first || d > dist[v]) {
                dist[v] = d;
                from[v] = e;
                first = 0;
            }
        }
        if (dist[v] < 0) {
            dist[v] = 0;
            from[v] = NIL;
        }
        if (best == NIL || dist[v] > dist[best])
            best = v;
    }
    *np = 0;
    for (size_t v = best; !rc && v != NIL && from[v] != NIL; v = g->e[from[v]].u)
        path[(*np)++] = from[v];
    for (size_t i = 0; !rc && i < *np / 2; i++) {
        size_t t = path[i];
        path[i] = path[*np - 1 - i];
        path[*np - 1 - i] = t;
    }
    free(indeg);
    free(topo);
    free(dist);
    free(from);
    return rc;
}

/* 1 when a sync edge joins two device events of one stream (HTA's graph
 * check refuses it). */
int cp_same_stream_sync(const cpgraph *g, const cev *v)
{
    for (size_t i = 0; i < g->ne; i++) {
        const cev *a = &v[g->n[g->e[i].u].ev], *b = &v[g->n[g->e[i].v].ev];
        if (g->e[i].type == E_SYNC && a->device && b->device && a->stream == b->stream)
            return 1;
    }
    return 0;
}
