/* SPDX-License-Identifier: MIT */
/*
 * trace_import.h - routes the events of one Chrome-trace file (Ascend
 * timeline or Kineto trace) into unified-DB rows.
 */
#ifndef TB_INGEST_TRACE_IMPORT_H
#define TB_INGEST_TRACE_IMPORT_H

#include "ingest/importer.h"

/* Imports path into sink. On failure err says where; rows already pushed stay. */
tb_status trace_import(const char *path, const row_sink *sink, import_ids *ids,
                       const import_opts *opt, import_result *res, tb_error *err);

#endif
