/* SPDX-License-Identifier: MIT */
/*
 * window.h - the iteration window (--model-id/--iteration-id/--iteration-count).
 */
#ifndef TB_QUERY_WINDOW_H
#define TB_QUERY_WINDOW_H

#include <sqlite3.h>
#include <stdint.h>

#include "tracebook/db.h"
#include "tracebook/query.h"

#define WINDOW_STEP_MODEL TB_STEP_MODEL_ID

/* One rank's window: [startNs, endNs] (device tasks: startNs <= start < endNs). */
typedef struct window_rank {
    int64_t rank;
    int64_t start_ns, end_ns;
} window_rank;

/* One rank's first and last iteration of the window's mode (model, or steps). */
typedef struct window_held {
    int64_t rank, first, last;
} window_held;

typedef struct window_info {
    char label[48];        /* "I" or "I_J"; "" without a window */
    window_rank *ranks;    /* new (free with window_info_finish) */
    size_t n_ranks;
    int miss;              /* window_apply failed because no rank of the DB has iteration I (or the
                              model's iterations): another part of a load may have it */
    int broken;            /* window_apply failed because a rank has iteration I but not I+N-1 */
    window_held *held;     /* what each rank holds, in rank order (new); also after such a failure */
    size_t n_held;
} window_info;

/*
 * The usage error of a window that no rank has, or that a rank has only the
 * start of, worded from what the ranks hold (h, in rank order): "step mode
 * has rank 0: steps 8-9; rank 1: steps 3-4" ("steps 1-3" when all hold the
 * same). Returns TB_ERR_USAGE with err set.
 */
tb_status window_held_error(const tb_window *w, const window_held *h, size_t n, tb_error *err);

/*
 * Applies the window w to db (a read-only connection to a unified DB):
 * creates TEMP tables holding each rank's range and TEMP views, named like
 * every windowed table and view of main, that filter through them. SQL run
 * afterwards on db sees only the window. Without a window (w->set == 0)
 * nothing is created. Unknown models or iterations are TB_ERR_USAGE errors
 * that list what the DB holds. Fills *info (finish it with window_info_finish).
 */
tb_status window_apply(sqlite3 *db, const tb_window *w, window_info *info, tb_error *err);

/*
 * Rank by rank on a connection window_apply prepared (scope: rank). With
 * w->rank_set: the TEMP views show rank w->rank's rows only, with rankId
 * shown (its id in the whole load; renumber 1 when any rank of the run
 * shows another id than its own, the same for every rank of a run: the
 * views' rankId is then a column of their own); the views are made at the first rank
 * and read the rank from a TEMP table, so the next rank changes one row,
 * and each reads its rank's rows as their rowid range (found in one pass
 * over the tables). The window's per-rank work is kept. Without rank_set:
 * the views of every rank again.
 */
tb_status window_for_rank(sqlite3 *db, const tb_window *w, int64_t shown, int renumber, tb_error *err);

/* Frees what window_apply put in info. */
void window_info_finish(window_info *info);

/* The window in words: "model M, iterations I to J", "the whole run" without one. */
void window_text(const tb_window *w, char *out, size_t n);

/* The window's label in file names: "I" or "I_J" ("" without a window). */
void window_label(const tb_window *w, char *out, size_t n);

/* 1 when the rank has the window's first iteration (else it has no rows in
 * it); 1 without a window. */
int window_rank_has(sqlite3 *db, const tb_window *w, int64_t rank);

/* Drops every TEMP view and table of db: the window's, and whatever a run
 * built over it, so that the connection serves the next run as new. */
void window_reset(sqlite3 *db);

#endif
