/* SPDX-License-Identifier: MIT */
/*
 * importer.h - what every importer of the engine shares.
 *
 * Each reader (trace_import.c for Chrome traces, npu_json.c, npu_text.c,
 * msprof_db.c, analysis_db.c, topsprof_import.c) turns one input file into
 * rows of the unified DB through a row_sink (db/rows.h). They take the same
 * options, draw ids from the same counters and fill the same result, so the
 * load driver (load_driver.c) treats them alike.
 */
#ifndef TB_INGEST_IMPORTER_H
#define TB_INGEST_IMPORTER_H

#include <stdint.h>

#include "db/rows.h"
#include "tracebook/error.h"
#include "tracebook/load.h"

/* Ids that run on across files of one load, so they stay unique in the DB. */
typedef struct import_ids {
    int64_t next_task;     /* globalTaskId */
    int64_t next_op;       /* COMMUNICATION_OP.opId */
    int64_t next_overlap;  /* OVERLAP_ANALYSIS.id */
    int64_t next_flow_seq; /* order of flow ends */
} import_ids;

/* One group of a shard DB, imported on its own by a merge of shards
 * (load_shards.c): its rows, its ranks' numbers, its ids as the shard's
 * load drew them (first, used) and the strings interned up to it. */
typedef struct shard_part {
    const char *path;      /* the shard DB */
    int cluster;           /* the cluster-level rows (rankId NULL) */
    int64_t rank_lo, rank_hi; /* its rankIds in the shard */
    int64_t task_first, task_used, op_first, op_used, overlap_first, overlap_used;
    int64_t strings_start, strings_end; /* the STRING_IDS ids its shard met first in it */
    const char *tables;    /* ",TASK,CANN_API,": the tables that hold rows of it */
    int64_t gid;           /* TB_SOURCE id of its first file */
    const char *first;     /* that file's path (for the merge's warnings), or NULL */
    size_t index;          /* its place among the groups of the sharded load */
} shard_part;

typedef struct import_opts {
    int rank;
    int keep_python_functions;
    void (*warn)(void *ctx, const char *msg);
    void (*progress)(void *ctx, const char *file, uint64_t done, uint64_t total, uint64_t bytes);
    void *ctx;
    uint64_t total_bytes;  /* file size, for progress */
    row_set skip_rows;     /* row tables not to fill (a better source did) */
    int strict_rows;       /* a CSV row of the wrong width is an error, not a skipped row */
    size_t max_event_bytes; /* the longest event or value of a trace (0: JS_MAX_ITEM, 64 MiB) */
    const shard_part *part; /* msprof_db_import: only this group of a shard DB, or NULL */
} import_opts;

typedef struct import_result {
    uint64_t events;
    uint64_t dest[TB_DEST_COUNT];
    int truncated;
    int64_t stop_offset;
    int64_t trailing;      /* a gzip file: where bytes after its last member start (0: none) */
    int has_base_time;
    int64_t base_time_ns;  /* Kineto baseTimeNanoseconds */
    int64_t trace_rank;    /* distributedInfo.rank, -1 when absent */
    int64_t min_ns, max_ns;
    int has_times;
    uint64_t devices_seen; /* bit set of device ids 0..63 */
    row_set rows_filled;   /* tables this source put rows in (beyond the TB_DEST counts) */
    char kind[32];         /* "ascend timeline" or "kineto" */
    char note[512];        /* for TB_SOURCE.note ("" none): a DB's columns not copied */
} import_result;

/* Widens the result's time span to [start, end]. */
/* 1 when [start, start + dur] lies within +-TB_TIME_LIMIT_NS (dur >= 0). */
static inline int import_time_ok(int64_t start, int64_t dur)
{
    return start > -TB_TIME_LIMIT_NS && start < TB_TIME_LIMIT_NS && dur >= 0 && dur < TB_TIME_LIMIT_NS &&
           start + dur < TB_TIME_LIMIT_NS;
}

static inline void import_note_time(import_result *r, int64_t start, int64_t end)
{
    if (!r->has_times || start < r->min_ns)
        r->min_ns = start;
    if (!r->has_times || end > r->max_ns)
        r->max_ns = end;
    r->has_times = 1;
}

#endif
