/* SPDX-License-Identifier: MIT */
/*
 * scale.h - the processes of a scaled-out run, for the run metadata files
 * (private to the report stage; docs/scale-out.md).
 */
#ifndef TB_REPORT_SCALE_H
#define TB_REPORT_SCALE_H

#include <jansson.h>

/*
 * The "processes" list of tracebook_run.json: one object per shard (or MPI
 * process) that loaded a part of the ranks of the DB at db_path, from its
 * TB_SHARDS table (shard, status "merged" or "missing", ranks, input_bytes,
 * wall_seconds, peak_rss_bytes, host). Returns new (json_decref), or NULL
 * when the DB was not made from shards.
 */
json_t *scale_processes(const char *db_path);

/*
 * The inputs the shards of a merged DB were loaded from (their -dir values,
 * one a line), so a run over the shards names what a run over those inputs
 * names. Returns new (free), or NULL when the DB was not made from shards.
 */
char *scale_inputs(const char *db_path);

#endif
