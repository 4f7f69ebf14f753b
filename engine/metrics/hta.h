/* SPDX-License-Identifier: MIT */
/*
 * hta.h - what the tables that reproduce Holistic Trace Analysis share:
 * HTA's kernel classes, its time domain, its window (the last-step cut and
 * the launched-by-a-kept-call filter) and the per-rank driver that reads
 * each rank's device tasks with their launching calls.
 *
 * hta_window.c implements the time domain and the window, breakdown.c the
 * rest (the temporal, overlap and idle-time breakdowns use them first);
 * hta_counters.c builds HTA's counters on them
 * (queue length, memory bandwidth, kernel launch statistics), hta_stacks.c
 * its call graph; hta_read.c keeps the tasks they read for the next. A table's
 * build calls hta_build() with its CREATE and INSERT statements and a
 * per-rank function; the function calls hta_prepare() to put the rank's
 * events into HTA's domain and window, binds its rows on h->ins and ends
 * each with hta_insert_done().
 */
#ifndef TB_METRICS_HTA_H
#define TB_METRICS_HTA_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/classes.h"
#include "metrics/metrics.h"
#include "tracebook/error.h"

/* The kinds of device work (HTA's kernel types; K_SKIP: left out). */
enum { K_COMP, K_COMM, K_MEM, K_OTHER, K_SKIP };

/* Name rules that replace a family's built-in class test (NULL: the built-in). */
typedef struct class_over {
    class_rule *comm;      /* <section>.classes.communication */
    class_rule *mem;       /* <section>.classes.memory */
} class_over;

typedef struct hta_opts {
    int round_us;          /* hta.round_us: HTA's float µs and rounding */
    int drop_last;         /* hta.drop_last_step */
    int linked_only;       /* hta.linked_only */
    double kernel_wait_us; /* hta.kernel_wait_us */
    int stream_events;     /* hta.stream_events: HTA's stream rule (temporal, overlap) */
    class_over over;       /* hta.classes.* */
} hta_opts;

/* One device task; times in ns as read, then (hta_prepare) in HTA's domain. */
typedef struct dev_ev {
    int64_t s, e;
    int64_t launch;      /* start of the launching call (when linked) */
    int64_t launch_end;  /* its end */
    int64_t launch_name; /* its name (a STRING_IDS id; 0 when unknown) */
    int64_t conn;        /* the task's connection id (Kineto: correlation) */
    int64_t stream;
    int64_t ord;      /* globalTaskId: the trace's order */
    unsigned char kind;
    unsigned char linked;
    unsigned char op;     /* a communication op, not a task: no stream */
    unsigned char memname; /* a memory slice by its name (hta_memory_name) */
    unsigned char first;   /* the first element of its trace's traceEvents: HTA leaves
                            * its launch out of the queue length (hta_counters.c) */
} dev_ev;

typedef struct evvec {
    dev_ev *v;
    size_t n, cap;
    size_t read;      /* the rank's device tasks (and ops) before classes and filters */
    size_t skipped;   /* of them, left out by the classes (K_SKIP) */
    int hosted;       /* the rank has host calls (CANN_API rows) */
} evvec;

typedef int (*classify_fn)(const void *cx, const char *name, const char *task_type, const char *cls);
typedef tb_status (*rank_fn)(void *ctx, int64_t rank, evvec *ev, tb_error *err);

typedef struct step_cut {
    int64_t rank;
    int64_t last_start; /* latest ProfilerStep start, HTA domain */
    int64_t last_end;   /* latest ProfilerStep end, HTA domain */
    size_t nsteps;      /* distinct ProfilerStep#N names of the rank */
    int mtia;           /* HTA takes the rank for MTIA: its MTIA window */
    int64_t cpu_first, cpu_last_end; /* earliest start, latest end of its host ProfilerSteps */
    size_t span0, nspan; /* its ProfilerStep slices: hta_ctx.spans[span0 .. span0 + nspan) */
} step_cut;

/* A ProfilerStep slice [s, e] in HTA's domain. */
typedef struct hta_span {
    int64_t s, e;
} hta_span;

typedef struct hta_ctx {
    const metric_ctx *m;
    const char *what;
    hta_opts o;
    step_cut *cuts;
    size_t ncuts;
    hta_span *spans;     /* every cut's ProfilerStep slices */
    size_t nspans;
    sqlite3_stmt *ins;   /* the table's INSERT */
    void *extra;         /* the table's own state (hta_build's caller), or NULL */
} hta_ctx;

/* An event [s, e) in ns as HTA holds it: whole µs, ts rounded up and
 * ts + dur (in float64) rounded down; or exact ns without round_us. */
void hta_time(int round_us, int64_t s, int64_t e, int64_t *ts, int64_t *te);

/* HTA's class of a device task (K_*): its name rules for Kineto's GPU
 * events, tracebook's classes for other vendors' tasks. cx: a class_over. */
int hta_classify(const void *cx, const char *name, const char *task_type, const char *cls);

/* Reads the ProfilerStep#N slices HTA sees (host ops and annotations in
 * PYTORCH_API, complete slices in TB_EVENT such as the GPU copies of the
 * step annotations) into h's cuts, one per rank with steps, in HTA's time
 * domain, and marks the ranks HTA takes for MTIA. Free with hta_window_free. */
tb_status hta_steps(hta_ctx *h, tb_error *err);

/* Frees what hta_steps read into h (its cuts and spans). */
void hta_window_free(hta_ctx *h);

/* 1 when name is one of HTA's memory kernels (Memcpy, Memset, hipMemcpy,
 * hipMemset or dma at its start). */
int hta_memory_name(const char *name);

/* The step cut of a rank (NULL when it has no ProfilerStep). */
const step_cut *hta_cut(const hta_ctx *h, int64_t rank);

/* 1 when HTA's window keeps a host event [ts, te] of the rank of cut (NULL:
 * no steps; HTA's domain); cpu: an operator, user annotation or runtime
 * call (HTA's CPU events). Always with fewer than 2 steps; on an MTIA rank
 * when a CPU event lies within its host steps' span; else when it starts
 * before the last step's start (hta.drop_last_step), or at or before that
 * step's end. */
int hta_host_kept(const hta_ctx *h, const step_cut *cut, int64_t ts, int64_t te, int cpu);

/* One instance of an annotation as HTA numbers them (hta_instances): its
 * window [ts, te] in HTA's domain, its name (a STRING_IDS id), its row. */
typedef struct hta_inst {
    int64_t ts, te, name, ord;
} hta_inst;

/* Appends to *out (count *n, capacity *cap; the caller frees it) the
 * rank's instances of annotation in the order of HTA's instance_id
 * (hta_instances.c): every event whose name holds it, of any category, in
 * HTA's frame of the rank, as its window keeps them. */
tb_status hta_instances(const hta_ctx *h, int64_t rank, const char *annotation, hta_inst **out, size_t *n,
                        size_t *cap, tb_error *err);

/* What hta_filter left out of a rank, for the note of a rank without rows. */
typedef struct hta_cut_info {
    const step_cut *cut;
    size_t unlinked, late;
} hta_cut_info;

/* The times and window of hta_prepare, without its note: compacts ev,
 * fills *ci, returns the count of events that remain. */
size_t hta_filter(const hta_ctx *h, int64_t rank, evvec *ev, hta_cut_info *ci);

/* Notes why the rank gets no row of h's table (metrics.md, "When a rank has
 * no rows"): ci from hta_filter. */
void hta_no_row(const hta_ctx *h, int64_t rank, const evvec *ev, const hta_cut_info *ci);

/*
 * Puts a rank's events into HTA's domain (times and launching calls) and
 * applies HTA's window; compacts ev. Returns 1 when events remain, else
 * notes why the rank gets no row and returns 0.
 */
int hta_prepare(const hta_ctx *h, int64_t rank, evvec *ev);

/* Binds a time of HTA's domain to column col of h->ins: whole µs, or exact
 * ns as µs (a double) without hta.round_us. */
void hta_bind_us(const hta_ctx *h, int col, int64_t v);

/* Steps h->ins (its values bound), then resets it. */
tb_status hta_insert_done(const hta_ctx *h, tb_error *err);

/* The names (STRING_IDS ids) of the rank's tasks as (globalTaskId, name)
 * pairs sorted by globalTaskId, a new array in *pairs (free it), *n pairs. */
tb_status hta_task_names(const hta_ctx *h, int64_t rank, int64_t **pairs, size_t *n, tb_error *err);
/* The devices of the rank's tasks as (globalTaskId, deviceId, 0 when
 * NULL) pairs, as hta_task_names. */
tb_status hta_task_devices(const hta_ctx *h, int64_t rank, int64_t **pairs, size_t *n, tb_error *err);
/* The name of task in pairs (hta_task_names), 0 when it has none; also the
 * device of a task in hta_task_devices' pairs. */
int64_t hta_task_name(const int64_t *pairs, size_t n, int64_t task);

/* HTA's queue length of each task's stream (queue_length's rule) right
 * after its launch (qrun[i]) and right after its start (qdev[i]), for the
 * tasks of ev (prepared); -1 for a task that does not count. */
tb_status hta_queue_at(const hta_ctx *h, const evvec *ev, int64_t *qrun, int64_t *qdev, tb_error *err);

/*
 * One read of the ProfilerSteps and of the ranks' tasks for the HTA tables
 * of a run (hta_read.c). hta_read_begin with the read's key (NULL: not
 * kept): r->replay is set when a complete read made under that key is
 * kept; hta_read_steps then fills h's steps from it (else reads them,
 * hta_steps) and hta_read_replay gives fn each rank's call again; else
 * each call of the read goes through hta_read_give (kept, then given to
 * fn; a zeroed hta_read only gives it) and hta_read_end keeps the read
 * when rc is TB_OK (returns rc, or its own failure). hta_read_end also
 * frees what r holds: call it after hta_read_begin in every case.
 */
typedef struct hta_read {
    sqlite3 *db;
    const char *what;
    char *key;            /* recording under it (with the DB's data_version), or NULL */
    char *kept;           /* replaying the read kept under it, or NULL */
    sqlite3_stmt *ins;
    const hta_ctx *steps; /* whose steps are recorded with the read */
    int replay;
} hta_read;

tb_status hta_read_begin(const metric_ctx *m, const char *what, const char *key, hta_read *r, tb_error *err);
tb_status hta_read_steps(hta_read *r, hta_ctx *h, tb_error *err);
tb_status hta_read_give(hta_read *r, int64_t rank, evvec *ev, rank_fn fn, void *ctx, tb_error *err);
tb_status hta_read_end(hta_read *r, tb_status rc, tb_error *err);
tb_status hta_read_replay(hta_read *r, rank_fn fn, void *ctx, tb_error *err);

/*
 * Builds a table the HTA way: reads the options and the steps, runs create
 * (several statements), prepares insert into h->ins and calls fn once per
 * rank with its device tasks (hta_classify; NPU communication ops
 * included). extra becomes h->extra.
 */
tb_status hta_build(const metric_ctx *m, const char *what, const char *create, const char *insert, rank_fn fn,
                    void *extra, tb_error *err);

#endif
