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

/* The query of table t that finds a time of its (a column named *Ns) outside +-2^62, or NULL (none, or no memory). */
static char *range_query(sqlite3 *db, const char *t)
{
    sqlite3_stmt *cols = NULL;
    sqlite3_str *q = sqlite3_str_new(NULL), *cond = sqlite3_str_new(NULL);
    int n = 0;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?) WHERE name GLOB '*Ns' AND name <> 'mtimeNs'", -1,
                           &cols, NULL) == SQLITE_OK) {
        sqlite3_bind_text(cols, 1, t, -1, SQLITE_TRANSIENT);
        while (sqlite3_step(cols) == SQLITE_ROW) {
            const char *c = (const char *)sqlite3_column_text(cols, 0);
            sqlite3_str_appendf(q, "%smin(\"%w\") AS a%d, max(\"%w\") AS b%d", n ? ", " : "", c, n, c, n);
            sqlite3_str_appendf(cond, "%sa%d < -4611686018427387904 OR b%d > 4611686018427387904", n ? " OR " : "", n,
                                n);
            n++;
        }
    }
    sqlite3_finalize(cols);
    char *select = sqlite3_str_finish(q), *where = sqlite3_str_finish(cond), *sql = NULL;
    if (n && select && where)
        sql = sqlite3_mprintf("SELECT 1 FROM (SELECT %s FROM main.\"%w\") WHERE %s", select, t, where);
    sqlite3_free(select);
    sqlite3_free(where);
    return sql;
}

int db_times_out_of_range(sqlite3 *db, char *name, size_t n)
{
    sqlite3 *mem = NULL;
    sqlite3_stmt *names = NULL;
    int found = 0;
    if (db_open(":memory:", SQLITE_OPEN_READWRITE, &mem) != SQLITE_OK ||
        sqlite3_exec(mem, tb_sql_unified, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(mem, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &names, NULL) != SQLITE_OK)
        goto done;
    while (!found && sqlite3_step(names) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(names, 0);
        char *sql = range_query(db, t);
        sqlite3_stmt *q = NULL;
        if (sql && sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) {
            snprintf(name, n, "%s", t);
            found = 1;
        }
        sqlite3_finalize(q);
        sqlite3_free(sql);
    }
done:
    sqlite3_finalize(names);
    sqlite3_close(mem);
    return found;
}
