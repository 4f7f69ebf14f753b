/* SPDX-License-Identifier: MIT */
/*
 * ask.h - small questions asked of an open connection (private to the
 * engine): one integer, whether a table or a column is there. Every stage
 * that reads a DB written by another version (an input DB, a cached or
 * exported one, a history, a partial) asks them here, so each is asked the
 * same way: names compared as SQLite compares them, failures told apart
 * from "no".
 */
#ifndef TB_DB_ASK_H
#define TB_DB_ASK_H

#include <sqlite3.h>
#include <stdint.h>

/* One integer from sql: 1 with *v set, 0 without a row (or a NULL), -1 on
 * failure (see sqlite3_errmsg). */
int db_one_int(sqlite3 *db, const char *sql, int64_t *v);

/*
 * Whether schema ("main", "temp"; NULL: main or temp, as a query finds a
 * name) has a table named name, or also a view of that name when views is
 * non-zero. Returns 1 (there), 0 (not there) or -1 (the question failed:
 * see sqlite3_errmsg). Names are compared as SQLite compares them
 * (ignoring ASCII case).
 */
int db_has_table(sqlite3 *db, const char *schema, const char *name, int views);

/*
 * Whether table (in schema, as db_has_table; NULL: where a query finds it,
 * a temporary view before the main table) has a column named column
 * (ignoring ASCII case, as SQLite does). Returns 1, 0 (no such column, or
 * no such table) or -1 (the question failed: see sqlite3_errmsg).
 */
int db_has_column(sqlite3 *db, const char *schema, const char *table, const char *column);

#endif
