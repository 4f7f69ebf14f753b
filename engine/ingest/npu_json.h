/* SPDX-License-Identifier: MIT */
/*
 * npu_json.h - torch_npu and msprof-analyze communication analysis JSON
 * (communication.json, communication_matrix.json, their cluster_* forms,
 * communication_group.json) and profiler_metadata.json into TB_COMM_* rows
 * (private to the engine).
 */
#ifndef TB_INGEST_NPU_JSON_H
#define TB_INGEST_NPU_JSON_H

#include "ingest/trace_import.h"

/* 1 when the file name (a base name, or a path) is one this importer reads,
 * plain or .gz. */
int npu_json_is_known(const char *name);

/* Imports one such file. Malformed JSON is TB_ERR_PARSE at FILE:LINE:COL. */
tb_status npu_json_import(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                          import_result *res, tb_error *err);

#endif
