/* SPDX-License-Identifier: MIT */
/*
 * msprof_db.h - importing msprof-compatible SQLite DBs (private to the engine).
 */
#ifndef TB_INGEST_MSPROF_DB_H
#define TB_INGEST_MSPROF_DB_H

#include "trace_import.h"

/* 1 when path starts with the SQLite file header. */
int msprof_db_is_db(const char *path);

/* Imports the known tables of the DB at path into sink; the input is never modified. */
tb_status msprof_db_import(const char *path, const row_sink *sink, import_ids *ids, const trace_import_opts *opt,
                           trace_import_result *res, tb_error *err);

#endif
