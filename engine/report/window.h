/* SPDX-License-Identifier: MIT */
/*
 * window.h - the iteration window (--model-id/--iteration-id/--iteration-count).
 */
#ifndef TB_REPORT_WINDOW_H
#define TB_REPORT_WINDOW_H

#include <sqlite3.h>
#include <stdint.h>

#include "tracebook/report.h"

#define WINDOW_STEP_MODEL 4294967295LL

/* One rank's window: [startNs, endNs] (device tasks: startNs <= start < endNs). */
typedef struct window_rank {
    int64_t rank;
    int64_t start_ns, end_ns;
} window_rank;

typedef struct window_info {
    char label[48];        /* "I" or "I_J"; "" without a window */
    window_rank *ranks;    /* new (free with window_info_finish) */
    size_t n_ranks;
} window_info;

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
 * Replaces the TEMP views of a connection window_apply prepared for the same
 * iterations, for w's rank filter: with w->rank_set, one rank's rows (shown
 * with rankId w->rank_as when w->rank_as_set); without, every rank's again.
 * The per-rank work of the window (its ranges and members) is kept, so a
 * report run on each rank in turn (scope: rank) pays for it once.
 */
tb_status window_for_rank(sqlite3 *db, const tb_window *w, tb_error *err);

/* Frees what window_apply put in info. */
void window_info_finish(window_info *info);

#endif
