/* SPDX-License-Identifier: MIT */
/*
 * critical_path_int.h - what the two files of the critical path share
 * (private to engine/metrics/). critical_path.c reads a rank's events,
 * annotations and sync events from the DB, chooses the windows and writes
 * the rows; critical_graph.c builds HTA's graph over a window's events and
 * walks its longest path. critical_path.c calls critical_graph.c, never
 * the other way.
 */
#ifndef TB_METRICS_CRITICAL_PATH_INT_H
#define TB_METRICS_CRITICAL_PATH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "metrics/hta.h"

/* No node, event or edge. */
#define NIL SIZE_MAX

/* The edges' types, in the order of the rows' names (critical_path.c). */
enum { E_OP, E_DEP, E_LAUNCH, E_KK, E_SYNC };

/* One event of a rank: host slices first, then device tasks. */
typedef struct cev {
    int64_t ts, te, pid, tid, name, conn, ord;
    size_t launch;          /* device: its launching host event, NIL */
    int64_t qrun, qdev;     /* device: queue length after launch, after start (-1: not counted) */
    int64_t stream;         /* device: its stream */
    int64_t dev;            /* a task: its device; a sync event: the trace's pid (HTA's gpu) */
    size_t sn, en;          /* nodes in the current graph, NIL */
    int64_t wait_stream, record; /* an event sync: the stream and the correlation of the record it waits on */
    size_t awaited, waiter;      /* an event sync: the task awaited, the task that waits (Stream Wait Event) */
    unsigned char device, comm, node, lock, blocking, fwd, bwd, streamed;
    unsigned char dl;   /* host: a data-load event (the parameter data_load_events): 1 a node, 2 data_loading */
    unsigned char sync; /* a cuda_sync event (S_*), 0 otherwise */
    unsigned char multi; /* a task whose counted launch has other tasks of its correlation */
} cev;

/* The cuda_sync events HTA draws edges from. */
enum { S_NONE, S_STREAM, S_CONTEXT, S_EVENT, S_WAIT };

/* A window's label: an instance of the annotation (a step), or the whole
 * trace's window (name -1). */
typedef struct annot {
    int64_t ts, te, name, ord;
    int64_t last; /* a window of instances: the last one's name; -1 */
} annot;

/* A node of the graph: the start or the end of event ev. */
typedef struct cpnode {
    int64_t ts, ord;
    size_t ev;
    unsigned char start;
} cpnode;

/* An edge u -> v of one of the types E_*; snext and pnext chain the
 * out edges of u and the in edges of v. */
typedef struct cpedge {
    size_t u, v, snext, pnext;
    int type;
    int64_t w;  /* the edge's weight */
    size_t ev;  /* the event it is attributed to, NIL */
} cpedge;

/* The graph of one window. */
typedef struct cpgraph {
    cpnode *n;
    size_t nn, capn;
    cpedge *e;
    size_t ne, cape;
    size_t *shead, *stail, *phead, *ptail; /* per node: out and in edges in insertion order */
} cpgraph;

/* An event that a window may keep, by the time that decides it: its own
 * start, a device event's its launching call's. */
typedef struct wkey {
    int64_t ts;
    size_t ev;
} wkey;

/* What critical_path.c reads of one rank, and the windows' index. */
typedef struct rankdata {
    cev *v;
    size_t n, cap, nhost;
    annot *a;
    size_t na, capa;
    /* the windows' index, made once per rank (index_windows): the events a
     * window may keep by time, the Stream Wait Events (every window keeps
     * them); the current window's kept events; the waits' scratch (one per
     * event, NIL but while a window's tasks are linked; NULL when the rank
     * has no Stream Wait Event) */
    wkey *by_ts;
    size_t nby_ts, *waits, nwaits, *kept, nkept, *ksync;
    hta_inst *hi;    /* HTA's instances (read_hta_instances), for instance N and N-M */
    size_t nhi, caphi;
} rankdata;

/* ---- the graph (critical_graph.c) -------------------------------------------- */

/* Frees g's arrays and zeroes it. */
void cp_graph_free(cpgraph *g);

/* A start and an end node for every kept event (kept[0..nkept), indexes
 * into v) that is a node, numbered in (time, trace order); sets the
 * events' sn and en. Returns -1 when out of memory. */
int cp_make_nodes(cev *v, const size_t *kept, size_t nkept, cpgraph *g);

/* The graph's edges, in the order HTA adds them: 1. the runtime lock's,
 * 2. the host threads' call stacks' (d's kept events), 3. the device
 * tasks' and sync events' (kk_gap: HTA's kernel-kernel threshold in the
 * domain's unit; d->ksync is NIL throughout again after). Each returns -1
 * when out of memory. */
int cp_lock_edges(cpgraph *g, const cev *v);
int cp_stack_edges(cpgraph *g, const rankdata *d);
int cp_kernel_edges(cpgraph *g, rankdata *rd, int64_t kk_gap);

/* networkx's dag_longest_path over the weights (negative ones as zero):
 * the path's edges in order into path (room for g->nn; *np of them).
 * Returns 1 when the graph has a cycle, -1 when out of memory. */
int cp_longest_path(const cpgraph *g, size_t *path, size_t *np);

/* 1 when a sync edge joins two device events of one stream (HTA's graph
 * check refuses it). */
int cp_same_stream_sync(const cpgraph *g, const cev *v);

#endif
