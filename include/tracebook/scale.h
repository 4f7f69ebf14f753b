/* SPDX-License-Identifier: MIT */
/*
 * scale.h - scale-out (docs/scale-out.md): a shard's figures, reports run
 * on a shard into a partial DB, and the partials gathered on process 0.
 */
#ifndef TRACEBOOK_SCALE_H
#define TRACEBOOK_SCALE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebook/error.h"
#include "tracebook/query.h"

/*
 * Adds the figures of the shard DB at shard_db (`export db --shard`: its
 * ranks, input bytes, wall time, peak RSS) to the "processes" list of the
 * tracebook_run.json beside it, keeping the entries of the other shards of
 * the same load; the folder is locked meanwhile and the file replaced
 * atomically (docs/scale-out.md).
 */
tb_status tb_shard_record(const char *shard_db, tb_error *err);

/*
 * Rank-scope reports over shards without merging them (docs/scale-out.md):
 * tb_report_partial() runs the rank-scope reports of run.specs on the shard
 * DB run.db_path, each rank under its id in the whole load (from books_db:
 * the load of every shard with books_only set), and writes the rows each
 * report hands its writers to out_path (atomically). tb_report_gather() adds
 * partials to books_db; a run (tb_report_write) with run.replay = books_db
 * then writes every report as a run over all the ranks at once would.
 */
typedef struct tb_partial_job {
    tb_run_options run;              /* db_path: the shard; specs, window, unit, params, max_steps, only, note */
    const char *books_db;
    const char *out_path;
} tb_partial_job;

tb_status tb_report_partial(const tb_partial_job *job, tb_error *err);
tb_status tb_report_gather(const char *books_db, const char *const *partials, size_t n, tb_error *err);

#endif
