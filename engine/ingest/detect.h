/* SPDX-License-Identifier: MIT */
/*
 * detect.h - what the -dir inputs hold: files by kind, grouped by rank
 * (private to the engine).
 *
 * Every -dir is searched a few levels deep. Files under one rank root (a
 * PROF_* or *_ascend_pt directory, or a directory holding
 * ASCEND_PROFILER_OUTPUT, mindstudio_profiler_output or profiler_info_N.json)
 * form one rank; elsewhere each trace file or DB is a rank of its own.
 * Within a rank, files are ordered by precedence: DB, then timeline JSON, then
 * text outputs; a later file only fills tables that nothing before it filled.
 */
#ifndef TB_INGEST_DETECT_H
#define TB_INGEST_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/input_set.h"
#include "tracebook/error.h"

/*
 * Finds the inputs under paths. Fills out (free with input_set_free).
 * tracebook's own outputs are not inputs (own_outputs.c): files listed by a
 * tracebook_run.json, and tracebook DBs loaded from inputs of this run, go
 * to out->ignored with the reason.
 */
tb_status detect_inputs(const char *const *paths, size_t n, input_set *out, tb_error *err);
void input_set_free(input_set *set);

/* Adds path to set->ignored with note (static, may be NULL). Returns 0, or -1 when out of memory. */
int detect_add_ignored(input_set *set, const char *path, const char *note);

#endif
