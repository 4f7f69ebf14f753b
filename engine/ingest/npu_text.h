/* SPDX-License-Identifier: MIT */
/*
 * npu_text.h - torch_npu / msprof summary CSVs into unified-DB rows (private).
 */
#ifndef TB_INGEST_NPU_TEXT_H
#define TB_INGEST_NPU_TEXT_H

#include "ingest/trace_import.h"

/* 1 when path names a CSV this importer reads (kernel_details, op_summary,
 * step_trace_time, memory_record, operator_memory, npu_module_mem,
 * static_op_mem, operator_details, cluster_step_trace_time, the statistics,
 * msprof's step_trace, task_time and npu_mem). */
int npu_text_is_known(const char *path);

/*
 * Where a CSV goes among the CSVs of one rank, before the path decides: 0 for
 * most, 1 for msprof's task_time, which repeats the tasks of op_summary and
 * kernel_details and so must come after them to be skipped by them.
 */
int npu_text_order(const char *path);

/*
 * 1 when a and b are two slices of one msprof summary: the same directory and
 * the same <name> in <name>_slice_<n>_<timestamp>.csv. msprof splits a
 * summary every 1,000,000 rows; the slices are one source for precedence (a
 * slice must not skip the tables its earlier slices filled).
 */
int npu_text_same_series(const char *a, const char *b);

/* Imports one such CSV. */
tb_status npu_text_import(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                          import_result *res, tb_error *err);

#endif
