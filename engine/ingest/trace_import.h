/* SPDX-License-Identifier: MIT */
/*
 * trace_import.h - routes the events of one Chrome-trace file (Ascend
 * timeline or Kineto trace) into unified-DB rows.
 */
#ifndef TB_INGEST_TRACE_IMPORT_H
#define TB_INGEST_TRACE_IMPORT_H

#include <stdint.h>

#include "rows.h"
#include "tracebook/error.h"
#include "tracebook/ingest.h"

/* Ids that run on across files of one load, so they stay unique in the DB. */
typedef struct import_ids {
    int64_t next_task;     /* globalTaskId */
    int64_t next_op;       /* COMMUNICATION_OP.opId */
    int64_t next_overlap;  /* OVERLAP_ANALYSIS.id */
    int64_t next_flow_seq; /* order of flow ends */
} import_ids;

typedef struct trace_import_opts {
    int rank;
    int keep_python_functions;
    void (*warn)(void *ctx, const char *msg);
    void (*progress)(void *ctx, const char *file, uint64_t done, uint64_t total);
    void *ctx;
    uint64_t total_bytes;  /* file size, for progress */
    uint64_t skip_rows;    /* ROWBIT()s of row tables not to fill (a better source did) */
    int strict_rows;       /* a CSV row of the wrong width is an error, not a skipped row */
} trace_import_opts;

typedef struct trace_import_result {
    uint64_t events;
    uint64_t dest[TB_DEST_COUNT];
    int truncated;
    int64_t stop_offset;
    int has_base_time;
    int64_t base_time_ns;  /* Kineto baseTimeNanoseconds */
    int64_t trace_rank;    /* distributedInfo.rank, -1 when absent */
    int64_t min_ns, max_ns;
    int has_times;
    uint64_t devices_seen; /* bit set of device ids 0..63 */
    uint64_t rows_filled;  /* ROWBIT()s of tables this source put rows in (beyond the TB_DEST counts) */
    char kind[32];         /* "ascend timeline" or "kineto" */
} trace_import_result;

/* Options and results are shared by every importer of the engine. */

/* Widens the result's time span to [start, end]. */
static inline void result_note_time(trace_import_result *r, int64_t start, int64_t end)
{
    if (!r->has_times || start < r->min_ns)
        r->min_ns = start;
    if (!r->has_times || end > r->max_ns)
        r->max_ns = end;
    r->has_times = 1;
}

/* Imports path into sink. On failure err says where; rows already pushed stay. */
tb_status trace_import(const char *path, const row_sink *sink, import_ids *ids,
                       const trace_import_opts *opt, trace_import_result *res, tb_error *err);

#endif
