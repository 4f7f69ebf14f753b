/* SPDX-License-Identifier: MIT */
/*
 * npu_text.h - torch_npu / msprof summary CSVs into unified-DB rows (private).
 */
#ifndef TB_INGEST_NPU_TEXT_H
#define TB_INGEST_NPU_TEXT_H

#include "trace_import.h"

/* 1 when path names a CSV this importer reads (kernel_details, op_summary,
 * step_trace_time, memory_record, operator_memory, npu_module_mem,
 * static_op_mem, operator_details, cluster_step_trace_time). */
int npu_text_is_known(const char *path);

/* Imports one such CSV. */
tb_status npu_text_import(const char *path, const row_sink *sink, import_ids *ids, const trace_import_opts *opt,
                          trace_import_result *res, tb_error *err);

#endif
