/* SPDX-License-Identifier: MIT */
/*
 * load.h - finding inputs and loading them into the unified trace DB.
 *
 * tb_load() streams every input into a new SQLite file, several ranks at once,
 * written under a temporary name and renamed into place only when the whole
 * load succeeded, so a reader never sees half a DB and an existing DB of the
 * same name survives a failed load untouched.
 */
#ifndef TRACEBOOK_LOAD_H
#define TRACEBOOK_LOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebook/error.h"

/* Destinations an imported event can land in; counted per load. */
enum tb_dest {
    TB_DEST_TASK, TB_DEST_COMPUTE_TASK_INFO, TB_DEST_COMMUNICATION_OP,
    TB_DEST_COMMUNICATION_TASK_INFO, TB_DEST_MEMCPY_INFO, TB_DEST_CANN_API,
    TB_DEST_PYTORCH_API, TB_DEST_STEP_TIME, TB_DEST_OVERLAP_ANALYSIS,
    TB_DEST_MSTX_EVENTS, TB_DEST_TB_FLOW, TB_DEST_TB_COUNTER, TB_DEST_TB_EVENT,
    TB_DEST_METADATA, TB_DEST_SKIPPED_PYTHON, TB_DEST_EMPTY, TB_DEST_UNKNOWN_PHASE,
    TB_DEST_OTHER_TABLES, /* rows of other tables (DB and text inputs) */
    TB_DEST_BETTER_SOURCE, /* not loaded: an earlier source of the rank filled that table */
    TB_DEST_BAD_ROWS,      /* CSV rows skipped: wrong number of fields */
    TB_DEST_BAD_TIME,      /* events or rows skipped: a time outside +-2^62 ns (TB_TIME_LIMIT_NS) */
    TB_DEST_DERIVED_TYPE,  /* kernels whose COMPUTE_TASK_INFO.opType was taken from the name */
    TB_DEST_COUNT
};

/*
 * The times tracebook stores: every start, end and duration lies within
 * +-TB_TIME_LIMIT_NS (2^62 ns, about 146 years either side of the Unix
 * epoch), so that the difference or sum of any two fits in 64 bits. An
 * event or row with a time outside is skipped with a warning that counts
 * them (an error with --strict).
 */
#define TB_TIME_LIMIT_NS ((int64_t)1 << 62)

/* Returns the table (or pseudo-destination) name of a destination (static). */
const char *tb_dest_name(int dest);

typedef struct tb_load_options {
    const char *const *inputs;  /* -dir values: trace files or directories (borrowed) */
    size_t n_inputs;
    const char *output;         /* path of the DB to write (borrowed) */
    int strict;                 /* a cut-short input is an error, not a warning */
    int keep_python_functions;  /* keep Kineto python_function events (TB_EVENT) */
    /* Called with each warning (may be NULL). */
    void (*warn)(void *ctx, const char *msg);
    /* Called with notes that are no problem, such as a file passed over
     * because tracebook wrote it (may be NULL). */
    void (*note)(void *ctx, const char *msg);
    /* Called now and then while a file loads (may be NULL): done and total
     * are bytes of the file itself (compressed for .gz: the share read),
     * bytes the bytes it held so far (decompressed: what was read). With
     * several ranks loading at once, the callbacks come from the loading
     * threads, never two at a time. */
    void (*progress)(void *ctx, const char *file, uint64_t done, uint64_t total, uint64_t bytes);
    /* Called when the load enters a phase after reading (may be NULL):
     * "post-processing" (flow pairing, HostToDevice binding, rank numbering,
     * bookkeeping tables), then "indexing" (indexes and views). */
    void (*phase)(void *ctx, const char *what);
    void *ctx;
    /* Threads loading ranks at once: 0 = the environment variable
     * TRACEBOOK_JOBS, else the online CPUs up to 4; 1 = one rank after the
     * other. The DB is the same whatever the number. */
    int jobs;
    /* The longest single event (or top-level value) of a trace, in bytes: a
     * longer one is an error naming where it starts. 0 = the environment
     * variable TRACEBOOK_MAX_EVENT_MB, else 64 MiB. */
    size_t max_event_bytes;
    /* Scale-out (docs/scale-out.md). shard_count > 0: load only part
     * shard_index (0-based) of shard_count parts of the ranks, into a shard
     * DB that keeps the ranks' global numbers, ids and the facts a merge
     * needs (TB_SHARD, TB_SHARD_RANK). Ranks are assigned to parts by input
     * size: largest first, each to the least loaded part (ties: the earlier
     * rank, the lower part). shard_count 0 loads everything. */
    unsigned shard_index, shard_count;
    /* Merging shard DBs (inputs that are all shard DBs): a missing shard is
     * a warning and recorded in TB_SHARDS, not an error. */
    int keep_going;
    /* Merging shard DBs: 1 = the bookkeeping tables only (sources, ranks,
     * warnings, TB_SHARDS), no rows of the ranks: what a run of rank-scope
     * reports on the shards themselves needs (docs/scale-out.md). */
    int books_only;
    /* 1 = the PyTorch calls of a torch_npu timeline rank (async_npu flows,
     * no CONNECTION_IDS rows) linked to their device tasks in the DB, as
     * torch_npu's DB holds them: CONNECTION_IDS rows and
     * PYTORCH_API.connectionId (docs/schema.md, "PyTorch calls and their
     * tasks"): `export db --pytorch-links`. A report's load does not (its
     * computed tables make the links they read). */
    int torch_links;
} tb_load_options;

typedef struct tb_load_result {
    uint64_t events;                 /* trace events read, all inputs */
    uint64_t dest[TB_DEST_COUNT];    /* events per destination */
    uint64_t warnings;
    size_t n_files;                  /* trace files loaded */
    /* wall seconds of the phases: streaming the inputs into rows, pairing
     * flows and other post-processing SQL, building indexes and views */
    double seconds_read, seconds_post, seconds_index;
} tb_load_result;

/*
 * Loads opt->inputs into a new DB at opt->output. On error nothing is left at
 * opt->output that was not there before. res may be NULL.
 */
tb_status tb_load(const tb_load_options *opt, tb_load_result *res, tb_error *err);

/*
 * Loads the inputs into a cached DB under tb_cache_dir(), or reuses the one
 * already there when its TB_SOURCE still matches the inputs' files, sizes and
 * modification times (rebuild forces a reload). opt->output is ignored; the
 * DB's path is written to db_out; *reused tells which happened.
 */
tb_status tb_cache_load(const tb_load_options *opt, int rebuild, char *db_out, size_t n, int *reused, tb_error *err);

/*
 * Removes a DB that tb_cache_load() wrote, and its lock file, under the
 * entry's lock. Any other path (a DB outside the cache, an input) is
 * refused and kept.
 */
tb_status tb_cache_remove(const char *db_path, tb_error *err);

/* Writes the cache directory ($XDG_CACHE_HOME/tracebook or ~/.cache/tracebook), creating it. */
tb_status tb_cache_dir(char *out, size_t n, tb_error *err);

/*
 * Finds the trace files under path (a file, or a directory searched a few
 * levels deep). Returns a new NULL-terminated array of new strings, sorted
 * (free with tb_paths_free), or NULL with err set (TB_ERR_NOTFOUND when
 * nothing usable is there).
 */
char **tb_find_traces(const char *path, tb_error *err);
void tb_paths_free(char **paths);

#endif
