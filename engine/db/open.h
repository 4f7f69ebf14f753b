/* SPDX-License-Identifier: MIT */
/*
 * open.h - the one place the engine opens SQLite files, and what it reads of a
 * DB's start on an open connection (private to the
 * engine). A run's DB is opened once, by its session; the others are the
 * engine's own: a DB being written (db/dbw.c), an input DB (db/
 * sqlite_input.c), the facts of a DB on disk (db/names.c, ingest/cache.c),
 * a history, a shard, a partial, a scratch DB.
 */
#ifndef TB_DB_OPEN_H
#define TB_DB_OPEN_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Opens the SQLite file at path ("" for a private scratch DB on disk,
 * removed when closed) with flags (SQLITE_OPEN_*). Returns SQLITE_OK or
 * SQLite's code; *db is set either way (NULL only when out of memory) and
 * is closed with sqlite3_close, whether or not the open succeeded.
 */
int db_open(const char *path, int flags, sqlite3 **db);

/* tb_db_start_time on a connection the caller holds (names.c): the session
 * start in Unix seconds, 0 when the data gives none. */
int64_t db_start_time(sqlite3 *db);

/*
 * A DB read as it is (a tracebook DB given as an input) must have a table
 * wherever tracebook's schema has one: a view there could run any query
 * (an endless one) whenever the table is read. Returns 1 and writes the
 * first such name into name when db's main schema has something other
 * than a table under a table's name, else 0.
 */
int db_view_for_table(sqlite3 *db, char *name, size_t n);

/*
 * A DB read as it is must hold times as every load does: within +-2^62 ns.
 * Returns 1 and writes the first table's name into name when a time column
 * of one of the schema's tables (a column named *Ns) holds a value outside
 * that range (INT64_MIN, 1e300, text), else 0. One scan of each table.
 */
int db_times_out_of_range(sqlite3 *db, char *name, size_t n);

#endif
