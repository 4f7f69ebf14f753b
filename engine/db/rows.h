/* SPDX-License-Identifier: MIT */
/*
 * rows.h - how importers hand rows to the DB stage (private to the engine).
 *
 * Importers know formats, not SQLite: they push rows of typed values into a
 * row_sink, table by table, in the column order given by row_tables[]. The
 * DB stage (engine/db) implements the sink with prepared INSERTs and interns
 * strings through STRING_IDS.
 */
#ifndef TB_DB_ROWS_H
#define TB_DB_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"

enum row_table {
    R_TASK, R_COMPUTE_TASK_INFO, R_COMMUNICATION_OP, R_COMMUNICATION_TASK_INFO,
    R_MEMCPY_INFO, R_CANN_API, R_PYTORCH_API, R_STEP_TIME, R_OVERLAP_ANALYSIS,
    R_MSTX_EVENTS, R_FLOW, R_FLOW_END, R_COUNTER, R_EVENT, R_PROCESS, R_THREAD,
    R_CONNECTION_IDS, R_RANK_DEVICE_MAP, R_NPU_INFO, R_GC_RECORD,
    /* every column of msprof tables, for importing msprof-compatible DBs */
    R_FULL_COMPUTE_TASK_INFO, R_FULL_COMMUNICATION_OP, R_FULL_COMMUNICATION_TASK_INFO,
    R_FULL_PYTORCH_API, R_FULL_MSTX_EVENTS, R_COMMUNICATION_SCHEDULE_TASK_INFO, R_NPU_MEM,
    R_NPU_MODULE_MEM, R_NPU_OP_MEM, R_MEMORY_RECORD, R_OP_MEMORY, R_PYTORCH_CALLCHAINS,
    R_TASK_PMU_INFO, R_HOST_INFO,
    R_TOPS_SUMMARY, R_TOPS_TOTAL, R_STEP_TRACE_TIME,
    /* torch_npu / msprof-analyze communication analysis and summary CSVs */
    R_COMM_OP_STAT, R_COMM_BANDWIDTH, R_COMM_SIZE_DIST, R_COMM_MATRIX, R_COMM_GROUP, R_CLUSTER_STEP_TRACE_TIME,
    R_TB_NPU_MODULE_MEM, R_STATIC_OP_MEM, R_OPERATOR_DETAILS,
    R_ITERATION, R_ITERATION_REDUCE, R_KERNEL_PMU, R_OP_STATISTIC, R_API_STATISTIC, R_COMM_STATISTIC,
    /* the rows of a DB input's ENUM_* tables, as written */
    R_SOURCE_ENUM,
    /* a torch_npu summary CSV of a rank, header and rows as the file held them */
    R_SOURCE_CSV,
    /* msprof's device and host sample tables, columns as msprof names them */
    R_QOS, R_AICORE_FREQ, R_ACC_PMU, R_SOC_BANDWIDTH_LEVEL, R_NIC, R_ROCE, R_LLC,
    R_SAMPLE_PMU_TIMELINE, R_SAMPLE_PMU_SUMMARY, R_HBM, R_DDR, R_HCCS, R_UB, R_SIO, R_CCU,
    R_DPU_TASK, R_PCIE, R_CPU_USAGE, R_HOST_MEM_USAGE, R_HOST_DISK_USAGE, R_HOST_NETWORK_USAGE,
    R_OSRT_API, R_NETDEV_STATS,
    /* a Kineto trace's record_param_comms calls: what each collective moved */
    R_COLLECTIVE,
    /* a Kineto trace's bandwidth of each memory copy and set */
    R_MEMCPY_BW,
    /* a summary CSV's kernel types whose tasks a timeline gave */
    R_KERNEL_TYPE,
    /* the rows of a profile DB's own META_DATA (name, value) */
    R_PROFILE_META,
    R_TABLE_COUNT
};

/* A set of row tables (the precedence of sources within a rank). */
typedef struct row_set {
    uint64_t w[2];
} row_set;
_Static_assert(R_TABLE_COUNT <= 128, "row sets hold 128 tables");

static inline int row_set_has(const row_set *s, int t)
{
    return (int)((s->w[t / 64] >> (t % 64)) & 1);
}

static inline void row_set_add(row_set *s, int t)
{
    s->w[t / 64] |= (uint64_t)1 << (t % 64);
}

static inline void row_set_del(row_set *s, int t)
{
    s->w[t / 64] &= ~((uint64_t)1 << (t % 64));
}

static inline void row_set_or(row_set *s, const row_set *o)
{
    s->w[0] |= o->w[0];
    s->w[1] |= o->w[1];
}

typedef struct row_table_def {
    const char *table;   /* SQL table name */
    const char *columns; /* comma-separated column list, in value order */
    int ncols;
    const char *strings; /* the columns that hold STRING_IDS ids (comma-separated) */
} row_table_def;

extern const row_table_def row_tables[R_TABLE_COUNT];
_Static_assert(R_TABLE_COUNT < 254, "a row's table is one byte of the writer's chunks");

#define ROW_MAX_COLS 32

/*
 * What a column holds, for code that moves rows from one load into another
 * (the parallel load replays a rank's rows into the DB, and a DB input maps
 * its string ids): an id into STRING_IDS, or an id drawn from one of the
 * counters of import_ids (trace_import.h), which run on across the inputs.
 */
enum row_role {
    COL_PLAIN,
    COL_STRING,     /* a STRING_IDS id */
    COL_TASK_ID,    /* globalTaskId: import_ids.next_task */
    COL_OP_ID,      /* opId: import_ids.next_op */
    COL_OVERLAP_ID, /* OVERLAP_ANALYSIS.id: import_ids.next_overlap (a DB input keeps its own) */
    COL_FLOW_SEQ,   /* TB_FLOW_END.seq: import_ids.next_flow_seq */
};

/* Fills roles[0 .. row_tables[table].ncols) with the row_role of each column. */
void row_roles(int table, unsigned char *roles);

/* 1 when column name of the row table holds STRING_IDS ids. */
int row_is_string(int table, const char *name);

/* V_BLOB: bytes stored as a BLOB (s, n), serialized as V_TEXT is */
enum { V_NULL = 0, V_INT, V_REAL, V_TEXT, V_BLOB };

typedef struct tb_val {
    int type;
    int64_t i;
    double d;
    const char *s; /* borrowed for the duration of the row call */
    size_t n;
} tb_val;

#define VNULL ((tb_val){.type = V_NULL})
#define VINT(x) ((tb_val){.type = V_INT, .i = (int64_t)(x)})
#define VREAL(x) ((tb_val){.type = V_REAL, .d = (x)})
#define VTEXT(p, len) ((tb_val){.type = V_TEXT, .s = (p), .n = (len)})
#define VBLOB(p, len) ((tb_val){.type = V_BLOB, .s = (p), .n = (len)})

typedef struct row_sink {
    void *ctx;
    /* Returns the STRING_IDS id of s (interned once), or -1 on failure. */
    int64_t (*intern)(void *ctx, const char *s, size_t n);
    /* Inserts one row; returns 0, or -1 on failure (the sink keeps the error). */
    int (*row)(void *ctx, int table, const tb_val *vals);
    /* The error behind the last failure (borrowed; code TB_OK when none). */
    const tb_error *(*error)(void *ctx);
} row_sink;

/*
 * After intern or row failed: copies the sink's error into err, naming path
 * when the error names no file, and returns its code (TB_ERR_DB when the
 * sink kept none). Importers report every sink failure through this.
 */
tb_status row_sink_fail(const row_sink *s, const char *path, tb_error *err);

#endif
