/* SPDX-License-Identifier: MIT */
/*
 * runner.h - what a run over part of a load needs besides tb_run_options
 * (private to the engine: scale/partial.c runs a shard's part, the report
 * job writes the rows gathered from shards; docs/scale-out.md).
 */
#ifndef TB_QUERY_RUNNER_H
#define TB_QUERY_RUNNER_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebook/query.h"

typedef struct run_part {
    /* Rank-scope reports run on part of a load (a shard): the DB's rankIds
     * rank_ids[i] show as rank_shown[i], their ids in the whole load
     * (n_rank_ids 0: every rank shows its own), and ranks_total is the
     * load's rank count when greater than the DB's (:rank columns). */
    const int64_t *rank_ids, *rank_shown;
    size_t n_rank_ids;
    int64_t ranks_total;
    /* Optional, called with the run's sink_ctx for a rank-scope report: with
     * which of its `requires` no row of the DB meets ("01": the second), then
     * before the rows of each rank (rank: its shown id). */
    void (*requires_seen)(void *ctx, const tb_spec_report *rep, const char *unmet);
    void (*rank_start)(void *ctx, const tb_spec_report *rep, int64_t rank);
    /* 1 (a shard's run): a window none of the DB's ranks has, or that a
     * rank has the first iteration of but not the last, is no error here:
     * no report runs, res->window_missed is set and err holds the message;
     * the run over the gathered rows decides, from what every rank holds
     * (window_held, called with sink_ctx for each rank of the DB that has
     * iterations of the window's mode, by its shown id, in rank order,
     * whenever a window is set). */
    int window_miss_ok;
    void (*window_held)(void *ctx, int64_t rank, int64_t first, int64_t last);
    /* Optional (a shard's run): a cluster-scope report does not run; the
     * first phase of its cluster tables runs on this DB's ranks and their
     * part tables (TEMP tables parts[0..n) of the connection db) are handed
     * here, called with sink_ctx. */
    tb_status (*cluster_rows)(void *ctx, const tb_spec_report *rep, sqlite3 *db, const char *const *parts, size_t n,
                              tb_error *err);
    /* 1: the run's DB holds rows gathered from shards (scale_gather): every
     * report is written from them instead of run (all must be rank- or
     * cluster-scope). */
    int replay;
} run_part;

/* tb_report_run with part (NULL: a run over a whole load). */
tb_status runner_run(const tb_run_options *opt, const run_part *part, tb_run_result *res, tb_error *err);

#endif
