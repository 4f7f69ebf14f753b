/* SPDX-License-Identifier: MIT */
/*
 * dbw.h - the bulk writer of the unified DB (private to the engine).
 *
 * A dbw owns one new SQLite file: it creates the schema, takes rows from
 * importers through a row_sink (prepared INSERTs in one transaction, journal
 * off, strings interned through STRING_IDS), pairs staged flow ends on
 * request, and on finish builds indexes and views and commits.
 */
#ifndef TB_DB_DBW_H
#define TB_DB_DBW_H

#include <sqlite3.h>
#include <stdint.h>

#include "../ingest/rows.h"
#include "tracebook/error.h"

typedef struct dbw dbw;

/* Creates the DB at path (a new or empty file). Returns new (free with dbw_destroy). */
dbw *dbw_create(const char *path, tb_error *err);

/* The row sink that fills this DB (borrowed: valid until dbw_destroy). */
const row_sink *dbw_sink(dbw *w);

/* The connection (borrowed), for the loader's own bookkeeping rows. */
sqlite3 *dbw_db(dbw *w);

/* Runs SQL (no results). Returns TB_OK or TB_ERR_DB with err set. */
tb_status dbw_exec(dbw *w, const char *sql, tb_error *err);

/* The error the sink met, if a row call failed. */
const tb_error *dbw_error(const dbw *w);

/* Pairs the flow ends that were staged (partners in different flushes). */
tb_status dbw_pair_staged_flows(dbw *w, tb_error *err);

/* Finishes the load: indexes, views, commit, close. */
tb_status dbw_finish(dbw *w, double *seconds_index, tb_error *err);

/* Monotonic wall time in seconds. */
double dbw_now(void);

/* Closes (rolling back when not finished). Accepts NULL. */
void dbw_destroy(dbw *w);

/* The embedded schema texts (tools/embed.py). */
extern const char tb_sql_unified[];
extern const char tb_sql_indexes[];
extern const char tb_sql_views[];

#endif
