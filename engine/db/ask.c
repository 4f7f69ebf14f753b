/* SPDX-License-Identifier: MIT */
/*
 * ask.c - small questions asked of an open connection (see ask.h).
 */
#include <stddef.h>

#include "db/ask.h"

/* See ask.h. */
int db_one_int(sqlite3 *db, const char *sql, int64_t *v)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return -1;
    int s = sqlite3_step(q), got = s == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL;
    if (got)
        *v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return s == SQLITE_ROW || s == SQLITE_DONE ? got : -1;
}

/* Steps q (its parameters bound) once: 1 on a row, 0 on none, -1 on an error;
 * finalizes it. */
static int any_row(sqlite3_stmt *q)
{
    int s = sqlite3_step(q);
    sqlite3_finalize(q);
    return s == SQLITE_ROW ? 1 : s == SQLITE_DONE ? 0 : -1;
}

/* See ask.h. */
int db_has_table(sqlite3 *db, const char *schema, const char *name, int views)
{
    static const char *const sql[2][3] = {
        {"SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE",
         "SELECT 1 FROM temp.sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE",
         "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE UNION ALL "
         "SELECT 1 FROM temp.sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE"},
        {"SELECT 1 FROM main.sqlite_master WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE",
         "SELECT 1 FROM temp.sqlite_master WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE",
         "SELECT 1 FROM main.sqlite_master WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE UNION ALL "
         "SELECT 1 FROM temp.sqlite_master WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE"},
    };
    int where = !schema ? 2 : sqlite3_stricmp(schema, "temp") == 0 ? 1 : 0;
    if (schema && where == 0 && sqlite3_stricmp(schema, "main") != 0)
        return -1; /* only main and temp are asked about */
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql[views != 0][where], -1, &q, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    return any_row(q);
}

/* See ask.h. */
int db_has_column(sqlite3 *db, const char *schema, const char *table, const char *column)
{
    sqlite3_stmt *q = NULL;
    const char *sql = schema ? "SELECT 1 FROM pragma_table_info(?1, ?3) WHERE name = ?2 COLLATE NOCASE"
                             : "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2 COLLATE NOCASE";
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, column, -1, SQLITE_STATIC);
    if (schema)
        sqlite3_bind_text(q, 3, schema, -1, SQLITE_STATIC);
    return any_row(q);
}
