/* SPDX-License-Identifier: MIT */
/*
 * open.c - opening SQLite files, and the check that a DB read as it is
 * has tables where tracebook's schema has tables (open.h).
 */
#include <stddef.h>
#include <stdio.h>

#include "db/open.h"
#include "db/limits.h"
#include "db/dbw.h"

int db_open(const char *path, int flags, sqlite3 **db)
{
    limits_ensure(); /* the heap and temporary-file limits are in place before any DB */
    return sqlite3_open_v2(path, db, flags, NULL);
}

int db_view_for_table(sqlite3 *db, char *name, size_t n)
{
    /* the schema's table names, from the schema itself on a scratch connection */
    sqlite3 *mem = NULL;
    sqlite3_stmt *names = NULL, *kind = NULL;
    int found = 0;
    if (db_open(":memory:", SQLITE_OPEN_READWRITE, &mem) != SQLITE_OK ||
        sqlite3_exec(mem, tb_sql_unified, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(mem, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &names, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT 1 FROM main.sqlite_master WHERE type <> 'table' AND name = ? COLLATE NOCASE",
                           -1, &kind, NULL) != SQLITE_OK)
        goto done;
    while (!found && sqlite3_step(names) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(names, 0);
        sqlite3_bind_text(kind, 1, t, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(kind) == SQLITE_ROW) {
            snprintf(name, n, "%s", t);
            found = 1;
        }
        sqlite3_reset(kind);
    }
done:
    sqlite3_finalize(names);
    sqlite3_finalize(kind);
    sqlite3_close(mem);
    return found;
}
