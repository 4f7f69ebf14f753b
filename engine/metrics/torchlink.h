/* SPDX-License-Identifier: MIT */
/*
 * torchlink.h - the PyTorch calls of a rank linked to their device tasks,
 * for the computed tables that read CONNECTION_IDS and
 * PYTORCH_API.connectionId (free_time, module_stats, mstx_marks): a DB's
 * links as stored, a timeline's made from its async_npu flows
 * (torchlink.c; docs/schema.md "PyTorch calls and their tasks").
 */
#ifndef TB_METRICS_TORCHLINK_H
#define TB_METRICS_TORCHLINK_H

#include <stddef.h>
#include <stdint.h>

#include "metrics/metrics.h"

typedef struct torch_links {
    int64_t *ranks; /* the ranks whose links come from their flows, ascending (owned) */
    size_t n;
} torch_links;

/*
 * Makes the links of every rank that has async_npu flows and no
 * CONNECTION_IDS rows (once per run), and the window's view of their
 * calls (every time: a build sees the window it runs in). what names the
 * build in errors; with rows_of (a table with a rankId the build reads its
 * ranks from), nothing is made when that table has no row of a rank. Free
 * tl with torch_links_finish(), also on failure.
 */
tb_status torch_links_open(const metric_ctx *m, const char *what, const char *rows_of, torch_links *tl,
                           tb_error *err);

/*
 * The tables a build reads rank's links from (static strings): *ids with
 * the columns of CONNECTION_IDS (id, connectionId, rankId) and *calls with
 * those of PYTORCH_API a build reads (rankId, connectionId, startNs, endNs,
 * name, globalTid); CONNECTION_IDS and PYTORCH_API themselves for a rank
 * whose links are stored.
 */
void torch_links_names(const torch_links *tl, int64_t rank, const char **ids, const char **calls);

void torch_links_finish(torch_links *tl);

/* One rank of a build over torch links (torch_links_each_rank). */
typedef tb_status (*torch_rank_fn)(const metric_ctx *m, const torch_links *tl, int64_t rank, void *ctx,
                                   tb_error *err);

/*
 * Opens the links as torch_links_open (what, rows_of), calls fn for each
 * rank ranks_sql gives (its first column, in its order) until one fails,
 * and finishes the links.
 */
tb_status torch_links_each_rank(const metric_ctx *m, const char *what, const char *rows_of, const char *ranks_sql,
                                torch_rank_fn fn, void *ctx, tb_error *err);

#endif
