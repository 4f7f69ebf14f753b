/* SPDX-License-Identifier: MIT */
/*
 * steps.h - host steps and the device work they launched: the one rule
 * every step range of tracebook follows (metrics.md, "Step trace time";
 * cli.md, "Windows").
 *
 * A step's host range is its STEP_TIME row [start, end]. A device task or
 * communication op belongs to a step through the call that launched it:
 *   - the launching call of a connection id is the earliest CANN_API row of
 *     the rank with that connectionId (runtime calls, on a GPU too);
 *   - the step of a host time t is the step of the rank that holds it,
 *     start <= t <= end; of several (nested or overlapping steps), the one
 *     that started last, and of steps starting together the greater id. A
 *     call exactly on the boundary of two steps so belongs to the later one;
 *   - the step of a connection id is the step of its launching call's start.
 * A step's device range: START = the first start of the work it launched
 * (the host start when it launched nothing), END = the later of the last
 * end of that work and the host end.
 * In a graph-mode window the steps are the window's graph iterations
 * (query/window.c shows them as STEP_TIME): their ranges are device ranges
 * already, so no call launches anything in them and a step's device range
 * is its own [start, end].
 *
 * The step trace (per device), the iteration window (per rank) and the
 * cluster tables (per communication op) all ask these questions here, so
 * they cannot disagree. Everything is read through unqualified names, so a
 * window's TEMP views apply when there are any.
 */
#ifndef TB_METRICS_STEPS_H
#define TB_METRICS_STEPS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"
#include "util/idmap.h"

/* One host step (a STEP_TIME row; a NULL rankId reads as 0). */
typedef struct steps_step {
    int64_t rank, id, start, end;
} steps_step;

/* The launching calls of one rank: connectionId -> step index, or -1 when
 * no step holds the call. */
typedef struct steps_rank {
    int64_t rank;
    idmap launch;
} steps_rank;

/* Caller memory: fill with steps_load, free with steps_finish. */
typedef struct steps {
    steps_step *v;      /* sorted by rank, start, id */
    int64_t *reach;     /* reach[i]: the greatest end of v[i] and its rank's steps before it */
    size_t n;
    steps_rank *ranks;  /* sorted by rank (with steps_load(..., 1) only) */
    size_t nranks;
} steps;

/* steps_load's launches | STEPS_COMPLETE: only the steps of the `step` view,
 * without a step the profile cut short (schemas/views.sql, step_all.cut). */
#define STEPS_COMPLETE 2

/*
 * Reads STEP_TIME (rows with an id, a start and an end) and, when launches
 * is set and there are steps, the launching calls (CANN_API) of every rank
 * that has steps. SQLite errors are TB_ERR_DB naming what (a metric's
 * name); out of memory TB_ERR_NOMEM. On error s is empty.
 */
tb_status steps_load(sqlite3 *db, int launches, const char *what, steps *s, tb_error *err);

/* Frees what steps_load made; accepts NULL. */
void steps_finish(steps *s);

/* The steps of rank: s->v[*off .. *off + *n). */
void steps_of_rank(const steps *s, int64_t rank, size_t *off, size_t *n);

/* The step (index into s->v) of host time t on rank, by the rule above; -1 when none holds t. */
long steps_at(const steps *s, int64_t rank, int64_t t);

/* The last step of rank (by start, then id) that started at or before t, or -1. */
long steps_started(const steps *s, int64_t rank, int64_t t);

/* The launching calls of rank, or NULL when it has none (borrowed from s). */
const idmap *steps_launches(const steps *s, int64_t rank);

/*
 * The step (index into s->v) of the work with connection id conn on the
 * rank whose launches are l: -1 when its launching call is in no step,
 * IDMAP_ABSENT when no call has that id (l may be NULL).
 */
static inline int64_t steps_launched(const idmap *l, int64_t conn)
{
    return l ? idmap_get(l, conn) : IDMAP_ABSENT;
}

/* The extent of the work a step launched: lo/hi the first start and last end. */
typedef struct steps_span {
    int64_t lo, hi;
} steps_span;

#define STEPS_SPAN_EMPTY {INT64_MAX, INT64_MIN}

static inline void steps_span_add(steps_span *sp, int64_t s, int64_t e)
{
    if (s < sp->lo)
        sp->lo = s;
    if (e > sp->hi)
        sp->hi = e;
}

/* A step's device range [*start, *end] from its host step and its launched span (see above). */
void steps_range(const steps_step *h, const steps_span *sp, int64_t *start, int64_t *end);

/*
 * Fills span[i] (s->n of them, caller memory) with the work each step
 * launched on its rank, every device together: the TASK and
 * COMMUNICATION_OP rows, by connection id. s must hold launches.
 */
tb_status steps_rank_spans(const steps *s, sqlite3 *db, const char *what, steps_span *span, tb_error *err);

#endif
