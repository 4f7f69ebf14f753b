/* SPDX-License-Identifier: MIT */
/*
 * history_int.h - what the files of the history share (private to
 * nightly/): history.c owns the DB (schema, open, create, retention);
 * history_add.c and history_report.c call it, never each other, and it
 * calls neither of them.
 */
#ifndef TB_NIGHTLY_HISTORY_INT_H
#define TB_NIGHTLY_HISTORY_INT_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "tracebook/error.h"
#include "tracebook/output.h"

#define BUSY_MS 600000   /* an appender waits up to 10 minutes for another */

/* The order of nights: by the data's time, then as added. */
#define NIGHT_ORDER "ORDER BY coalesce(data_time, ''), id"

/* The name a column type is stored under in night_column ("dur_ns", ...): static. */
const char *history_type_name(tb_col_type type);

/* The column type stored under name s; plain when s is NULL or unknown. */
tb_col_type history_type_of(const char *s);

/* Fills err with db's last error at path; returns its code. */
tb_status history_dberr(sqlite3 *db, const char *path, tb_error *err);

/* Runs sql (one or more statements) on db; on failure fills err at path. */
tb_status history_run_sql(sqlite3 *db, const char *path, const char *sql, tb_error *err);

/*
 * Opens the existing history at path read-only into *out (new: close with
 * sqlite3_close); a file that is not a tracebook history is refused,
 * never changed.
 */
tb_status history_open(const char *path, sqlite3 **out, tb_error *err);

/* Makes the history at path when it is missing, whole or not at all. */
tb_status history_create(const char *path, tb_error *err);

/* Keeps the newest keep nights (keep <= 0: all) inside the caller's
 * transaction; adds the nights removed to *removed. */
tb_status history_retain(sqlite3 *db, const char *path, int64_t keep, size_t *removed, tb_error *err);

#endif
