/* SPDX-License-Identifier: MIT */
/*
 * ppchart.h - the DualPipeV schedule of msprof-analyze's pp_chart recipe,
 * one pipeline stage at a time (private to the engine): the computed table
 * pp_dualpipev names its rows by it, and so does the SQL function
 * dualpipev_slot (query/sqlfuncs.c) for sizes a report is given.
 */
#ifndef TB_METRICS_PPCHART_H
#define TB_METRICS_PPCHART_H

#include <stddef.h>
#include <stdint.h>

/* One stage's names and phases (type 0..6), in order, and the count of
 * rows a step of the stage must have for them to apply. */
typedef struct ppchart_slots {
    char (*name)[48]; /* owned, n names */
    int *type;        /* owned, n types */
    size_t n, cap;
    int64_t expect;
} ppchart_slots;

/* Largest pp, tp x dp and micro-batch count the schedule takes. */
#define PPCHART_MAX_SIZE 100000

/*
 * Fills *s (zeroed by the caller, or freed with ppchart_slots_free) with
 * stage `stage` (0 <= stage < pp) of the schedule of pp stages with mb
 * micro-batches per chunk; without mb (has_mb 0) or with mb under 2 x pp
 * it stays empty (expect 0: no step is named). pp and mb at most
 * PPCHART_MAX_SIZE. Returns 0, or -1 out of memory.
 */
int ppchart_stage(ppchart_slots *s, int64_t pp, int64_t mb, int has_mb, int64_t stage);

/* Frees what s holds and zeroes it; accepts NULL. */
void ppchart_slots_free(ppchart_slots *s);

#endif
