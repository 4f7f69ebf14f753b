/* SPDX-License-Identifier: MIT */
/*
 * scale.h - scale-out (docs/scale-out.md), private to the engine: a shard's
 * figures, reports run on a shard into a partial DB, the partials gathered
 * on process 0, and the processes of a scaled-out run for the run metadata
 * files.
 */
#ifndef TB_SCALE_SCALE_H
#define TB_SCALE_SCALE_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>

#include "tracebook/error.h"
#include "tracebook/query.h"

/*
 * The "processes" list of tracebook_run.json: one object per shard (or MPI
 * process) that loaded a part of the ranks of the DB of db, from its
 * TB_SHARDS table (shard, status "merged" or "missing", ranks, input_bytes,
 * wall_seconds, peak_rss_bytes, host). Returns new (json_decref), or NULL
 * when the DB was not made from shards.
 */
json_t *scale_processes(sqlite3 *db);

/*
 * The inputs the shards of a merged DB were loaded from (their -dir values,
 * one a line), so a run over the shards names what a run over those inputs
 * names. Returns new (free), or NULL when the DB was not made from shards.
 */
char *scale_inputs(sqlite3 *db);

/*
 * The figures of the shard DB at path (`export db --shard`) as its entry of
 * the "processes" list of tracebook_run.json (shard, of, db, ranks,
 * input_bytes, wall_seconds, peak_rss_bytes, host: new in *entry), the
 * load's shard count and its inputs (one a line, new in *inputs).
 */
tb_status scale_shard_entry(const char *path, json_t **entry, int64_t *count, char **inputs, tb_error *err);

/*
 * Rank- and cluster-scope reports over shards without merging them:
 * scale_partial() runs the reports of run.specs on the shard DB at shard,
 * each rank under its id in the whole load (from books_db: the load of
 * every shard with books_only set), and writes the rows each report hands
 * its writers to out_path (atomically). scale_gather() adds partials to
 * books_db; a run over books_db (run_part.replay) then writes every report
 * as a run over all the ranks at once would.
 */
typedef struct scale_partial_job {
    tb_run_options run;              /* specs, window, unit, params, max_steps, only, note (db: unused) */
    const char *shard;
    const char *books_db;
    const char *out_path;
} scale_partial_job;

tb_status scale_partial(const scale_partial_job *job, tb_error *err);
tb_status scale_gather(const char *books_db, const char *const *partials, size_t n, tb_error *err);

#endif
