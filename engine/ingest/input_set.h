/* SPDX-License-Identifier: MIT */
/*
 * input_set.h - the inputs of a load, as detect.c finds them: files by kind,
 * grouped by rank, and the files seen but not read.
 */
#ifndef TB_INGEST_INPUT_SET_H
#define TB_INGEST_INPUT_SET_H

#include <stddef.h>
#include <stdint.h>

enum input_kind {
    IN_MSPROF_DB,   /* msprof_*.db, ascend_pytorch_profiler*.db, a tracebook DB */
    IN_ANALYSIS_DB, /* torch_npu analysis.db (StepTraceTime): before the CSVs, so it wins
                     * over step_trace_time.csv */
    IN_TRACE_JSON,  /* Chrome trace: Ascend timeline or Kineto */
    IN_NPU_CSV,     /* torch_npu / msprof summary CSV (kernel_details, step_trace_time, ...) */
    IN_NPU_JSON,    /* communication*.json, cluster_communication*.json, communication_group.json,
                     * profiler_metadata.json */
    IN_TOPSPROF,    /* topsprof statistics/trace listing or its CSV export */
    IN_IGNORED      /* not read: listed so `info` can say so */
};

typedef struct input_file {
    char *path;
    int kind;
    int named;            /* named as a -dir of its own (not found by scanning) */
    int own_db;           /* a DB that tracebook wrote: 1, 0 no, -1 not known */
    const char *note;     /* files not read: why (static), NULL = not a format tracebook reads */
} input_file;

typedef struct rank_group {
    char *root;           /* rank root directory, or the file itself */
    input_file *files;    /* ordered by precedence */
    size_t n, cap;
    int64_t rank_hint;    /* from profiler_info_N.json, -1 when none */
    int cluster;          /* cluster-level files (cluster_*, communication_group.json): no rank of their own */
} rank_group;

typedef struct input_set {
    rank_group *groups;
    size_t n, cap;
    long cluster_index;   /* the current -dir's cluster group in groups, -1 when none yet */
    input_file *ignored;  /* files seen but not read */
    size_t n_ignored, cap_ignored;
} input_set;

#endif
