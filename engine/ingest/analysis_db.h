/* SPDX-License-Identifier: MIT */
/*
 * analysis_db.h - torch_npu's analysis.db (its StepTraceTime table) into
 * TB_STEP_TRACE_TIME rows (private to the engine).
 */
#ifndef TB_INGEST_ANALYSIS_DB_H
#define TB_INGEST_ANALYSIS_DB_H

#include "ingest/trace_import.h"

/* Imports the DB at path; the input is never modified. */
tb_status analysis_db_import(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                             import_result *res, tb_error *err);

#endif
