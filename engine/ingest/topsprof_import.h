/* SPDX-License-Identifier: MIT */
/*
 * topsprof_import.h - topsprof listings into unified-DB rows (private).
 */
#ifndef TB_INGEST_TOPSPROF_IMPORT_H
#define TB_INGEST_TOPSPROF_IMPORT_H

#include "ingest/trace_import.h"

/* Imports a topsprof statistics or trace listing (or its CSV export). */
tb_status topsprof_import(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                          import_result *res, tb_error *err);

#endif
