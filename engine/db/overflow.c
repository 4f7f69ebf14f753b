/* SPDX-License-Identifier: MIT */
/*
 * overflow.c - what SQLite's "integer overflow" over a trace DB means.
 *
 * SQLite's sum() stops a query with a bare "integer overflow" when a sum of
 * integers leaves 64 bits. Over a trace DB that happens when its times are
 * out of range: the range rule keeps times within +-2^62 ns, so a row may
 * still span almost 2^63 ns, and two such durations overflow any sum of
 * them. db_overflow_explain() looks for the table that explains a failure:
 * among the DB's tables with startNs and endNs columns (TASK first), the
 * first whose durations (endNs - startNs) add up (in floating point, as
 * absolute values) to 2^63 ns or more: 292 years, which no real profile
 * holds. (Not the times themselves: five real timestamps of today, about
 * 1.8e18 ns since 1970, already add up beyond 2^63.) The error then
 * names the table, the column and the cause, and is an error of the input
 * (TB_ERR_PARSE, exit 3). When no table explains it (a query's own
 * arithmetic: abs() of INT64_MIN, a sum of its own numbers), it leaves the
 * failure to its caller (SQLite's message, exit 5). Used by the report
 * runner (query/runner.c) and the listings of `print` (export/listing.c).
 */
#include <stdio.h>
#include <string.h>

#include "db/overflow.h"

/* 2^63: no sum of int64 reaches it */
#define INT64_SPAN 9223372036854775808.0

/* "durations (endNs - startNs)" when those of table add up to 2^63 ns or
 * more, else NULL; *widest gets the longest. */
static const char *table_overflows(sqlite3 *db, const char *schema, const char *table, double *widest)
{
    /* a duration in REAL: endNs - startNs of two int64 is exact enough and
     * never overflows; abs(): a sum of positive and negative ones can leave
     * 64 bits on its way */
    char *sql = sqlite3_mprintf("SELECT total(abs(CAST(endNs AS REAL) - startNs)), "
                                "max(abs(CAST(endNs AS REAL) - startNs)) FROM \"%w\".\"%w\"",
                                schema, table);
    sqlite3_stmt *st = NULL;
    const char *col = NULL;
    if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        *widest = sqlite3_column_double(st, 1);
        if (sqlite3_column_double(st, 0) >= INT64_SPAN)
            col = "durations (endNs - startNs)";
    }
    sqlite3_finalize(st);
    sqlite3_free(sql);
    return col;
}

/* The first table of db with startNs and endNs whose sums overflow: its
 * schema and name into sch and tab, the column into *col; 0 when none. */
static int find_overflow(sqlite3 *db, char *sch, size_t nsch, char *tab, size_t ntab, const char **col,
                         double *widest)
{
    static const char list[] =
        "SELECT d.name, m.name FROM pragma_database_list d JOIN pragma_table_list m ON m.schema = d.name "
        "WHERE d.name <> 'temp' AND m.type = 'table' AND m.name NOT LIKE 'sqlite_%' "
        "AND EXISTS (SELECT 1 FROM pragma_table_xinfo(m.name, d.name) WHERE name = 'startNs') "
        "AND EXISTS (SELECT 1 FROM pragma_table_xinfo(m.name, d.name) WHERE name = 'endNs') "
        "ORDER BY d.seq, m.name = 'TASK' DESC, m.name";
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db, list, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return 0;
    }
    while (!found && sqlite3_step(st) == SQLITE_ROW) {
        const char *s = (const char *)sqlite3_column_text(st, 0);
        const char *t = (const char *)sqlite3_column_text(st, 1);
        if (s && t && (*col = table_overflows(db, s, t, widest))) {
            snprintf(sch, nsch, "%s", s);
            snprintf(tab, ntab, "%s", t);
            found = 1;
        }
    }
    sqlite3_finalize(st);
    return found;
}

tb_status db_overflow_explain(sqlite3 *db, const char *file, const char *what, tb_error *err)
{
    if (strcmp(sqlite3_errmsg(db), "integer overflow") != 0)
        return TB_OK;
    char sch[128], tab[256];
    const char *col = NULL;
    double widest = 0;
    if (!find_overflow(db, sch, sizeof sch, tab, sizeof tab, &col, &widest))
        return TB_OK;
    const char *in = strcmp(sch, "main") ? sch : "";
    return tb_error_at(err, TB_ERR_PARSE, file, 0, 0, -1,
                       "%s: the sum of %s%s%s %s overflows 64-bit ns (integer overflow): the DB holds out-of-range "
                       "times (its longest row spans %.4g ns, %.0f years)",
                       what, in, *in ? "." : "", tab, col, widest, widest / 1e9 / 86400 / 365.25);
}
