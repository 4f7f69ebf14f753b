/* SPDX-License-Identifier: MIT */
/*
 * sandbox.c - what report SQL may do.
 *
 * Report SQL comes from specs that many teams write, and inputs come from
 * many tools: neither is trusted. The connection that runs it is opened
 * read-only, and this file narrows it further:
 *
 * - connection settings: defensive mode (no writes to the schema table
 *   through PRAGMA writable_schema, no corruption through shadow tables),
 *   extension loading off, an untrusted schema (functions and virtual tables
 *   used inside the DB's own views must be innocuous), the two-argument
 *   fts3_tokenizer() off (it would install any pointer as a tokenizer),
 *   no ATTACH, and a bound on the size of any value;
 * - an authorizer that works by allow-list, not deny-list: SELECT and reads
 *   of tables and views; the read-only PRAGMAs that describe a schema; the
 *   functions named below, which are SQLite's own scalar, aggregate, window,
 *   date and time, math and JSON functions plus tracebook's (sqlfuncs.c);
 * - for a cluster-scope report, reads of its tables only (sandbox.reads);
 * - virtual tables only of the modules of the allow-list (SQLite's
 *   json_each/json_tree, and the PRAGMA functions, which are no module): the other
 *   modules are dropped from the connection, so a virtual table of the DB
 *   that uses one cannot even be opened (opening an FTS3 table runs its
 *   tokenizer's code before any authorizer call). A function
 *   that is not on the list (load_extension, fts3_tokenizer, readfile, an
 *   FTS auxiliary function, anything a later SQLite adds) is refused, and
 *   so is a read of a virtual table of any other module (an FTS3 table in
 *   an input DB calls into its tokenizer).
 *
 * The runner itself builds the computed tables and the window's views with
 * trusted set: tracebook's own SQL is not checked.
 */
#define _POSIX_C_SOURCE 200809L
#include "query/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebook/query.h"

/* Functions report SQL may call, sorted (case-insensitive compare); tb_rank_row
 * is the rank views' own (query/window.c), read-only like the rest. */
static const char *const allowed_functions[] = {
    "->", "->>", "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "avg", "ceil", "ceiling",
    "char", "coalesce", "cos", "cosh", "count", "cume_dist", "current_date", "current_time", "current_timestamp",
    "date", "datetime", "degrees", "dense_rank", "dualpipev_slot", "exp", "first_value", "floor", "format", "glob",
    "group_concat", "hex", "ifnull", "iif", "instr", "intersect_ns", "json", "json_array", "json_array_length",
    "json_extract", "json_group_array", "json_group_object", "json_insert", "json_object", "json_patch",
    "json_quote", "json_remove", "json_replace", "json_set", "json_type", "json_valid", "julianday", "lag",
    "last_value", "lead", "length", "like", "likelihood", "likely", "ln", "log", "log10", "log2", "lower",
    "lower_quartile", "ltrim", "max", "median", "min", "mod", "nth_value", "ntile", "nullif", "percent_rank",
    "percentile", "pi", "pow", "power", "printf", "pyset_array", "quote", "radians", "random", "randomblob", "rank",
    "replace", "round", "row_number", "rtrim", "sign", "sin", "sinh", "sqlite_version", "sqrt", "stdev",
    "stdev_pop", "strftime", "substr", "substring", "sum", "tan", "tanh", "tb_rank_row", "time", "total", "trim",
    "trunc", "typeof", "unicode", "union_count", "union_ns", "unixepoch", "unlikely", "upper", "upper_quartile",
    "var_pop", "variance", "zeroblob",
};

/* Virtual-table modules whose tables report SQL may read (NULL-terminated,
 * for sqlite3_drop_modules); the PRAGMA table functions are no module. */
static const char *allowed_modules[] = {"json_each", "json_tree", NULL};

static int cmp_name(const void *key, const void *elem)
{
    return sqlite3_stricmp(key, *(const char *const *)elem);
}

int sandbox_function_allowed(const char *name)
{
    return name && bsearch(name, allowed_functions, sizeof allowed_functions / sizeof allowed_functions[0],
                           sizeof allowed_functions[0], cmp_name) != NULL;
}

static const char *action_name(int code)
{
    switch (code) {
    case SQLITE_INSERT: return "INSERT";
    case SQLITE_UPDATE: return "UPDATE";
    case SQLITE_DELETE: return "DELETE";
    case SQLITE_ATTACH: return "ATTACH";
    case SQLITE_DETACH: return "DETACH";
    case SQLITE_PRAGMA: return "PRAGMA";
    case SQLITE_TRANSACTION: return "a transaction statement";
    case SQLITE_SAVEPOINT: return "SAVEPOINT";
    case SQLITE_ALTER_TABLE: return "ALTER TABLE";
    case SQLITE_REINDEX: return "REINDEX";
    case SQLITE_ANALYZE: return "ANALYZE";
    case SQLITE_CREATE_VTABLE: return "CREATE VIRTUAL TABLE";
    case SQLITE_DROP_VTABLE: return "DROP VIRTUAL TABLE";
    case SQLITE_CREATE_INDEX: case SQLITE_CREATE_TEMP_INDEX: return "CREATE INDEX";
    case SQLITE_CREATE_TABLE: case SQLITE_CREATE_TEMP_TABLE: return "CREATE TABLE";
    case SQLITE_CREATE_TRIGGER: case SQLITE_CREATE_TEMP_TRIGGER: return "CREATE TRIGGER";
    case SQLITE_CREATE_VIEW: case SQLITE_CREATE_TEMP_VIEW: return "CREATE VIEW";
    case SQLITE_DROP_INDEX: case SQLITE_DROP_TEMP_INDEX: return "DROP INDEX";
    case SQLITE_DROP_TABLE: case SQLITE_DROP_TEMP_TABLE: return "DROP TABLE";
    case SQLITE_DROP_TRIGGER: case SQLITE_DROP_TEMP_TRIGGER: return "DROP TRIGGER";
    case SQLITE_DROP_VIEW: case SQLITE_DROP_TEMP_VIEW: return "DROP VIEW";
    default: return "this statement";
    }
}

/* Read-only PRAGMAs a report may query (also as pragma_xxx() functions);
 * for these the value is an argument (a table name), never a setting. */
static int pragma_allowed(const char *name)
{
    static const char *const ok[] = {"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo",
                                     "foreign_key_list", "function_list", "collation_list", "table_list"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (name && sqlite3_stricmp(name, ok[i]) == 0)
            return 1;
    return 0;
}

static int authorize(void *ctx, int code, const char *a, const char *b, const char *dbname, const char *trigger)
{
    sandbox *sb = ctx;
    (void)dbname;
    (void)trigger;
    if (sb->trusted)
        return SQLITE_OK;
    switch (code) {
    case SQLITE_SELECT:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_READ:
        if (!sb->n_reads || !a || !sqlite3_strnicmp(a, "sqlite_", 7) || !sqlite3_strnicmp(a, "pragma_", 7) ||
            !sqlite3_stricmp(a, "json_each") || !sqlite3_stricmp(a, "json_tree"))
            return SQLITE_OK;
        for (size_t i = 0; i < sb->n_reads; i++)
            if (!sqlite3_stricmp(a, sb->reads[i]))
                return SQLITE_OK;
        if (!sb->denied[0]) {
            size_t k = (size_t)snprintf(sb->denied, sizeof sb->denied, "%s reads only ",
                                        sb->reads_who ? sb->reads_who : "report SQL");
            for (size_t i = 0; i < sb->n_reads && k < sizeof sb->denied; i++)
                k += (size_t)snprintf(sb->denied + k, sizeof sb->denied - k, "%s%s", i ? ", " : "", sb->reads[i]);
            if (k < sizeof sb->denied)
                snprintf(sb->denied + k, sizeof sb->denied - k, ", not %s", a);
        }
        return SQLITE_DENY;
    case SQLITE_FUNCTION:
        if (sandbox_function_allowed(b))
            return SQLITE_OK;
        if (!sb->denied[0])
            snprintf(sb->denied, sizeof sb->denied, "the function %s() is not allowed in report SQL", b ? b : "");
        return SQLITE_DENY;
    case SQLITE_PRAGMA:
        if (pragma_allowed(a))
            return SQLITE_OK;
        if (!sb->denied[0])
            snprintf(sb->denied, sizeof sb->denied, "PRAGMA %s%s%s is not allowed: report SQL is read-only",
                     a ? a : "", b ? " = " : "", b ? b : "");
        return SQLITE_DENY;
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
        /* CREATE and DROP first ask to change their schema row, then to
         * create or drop: refuse that second request, so that the message
         * names the statement (defensive mode and the refused PRAGMA
         * writable_schema keep the schema table itself unwritable) */
        if (a && (!sqlite3_stricmp(a, "sqlite_master") || !sqlite3_stricmp(a, "sqlite_temp_master")))
            return SQLITE_OK;
        /* fall through */
    default:
        /* the first refusal names the statement (DROP TABLE, then its DELETE) */
        if (!sb->denied[0])
            snprintf(sb->denied, sizeof sb->denied, "%s is not allowed: report SQL is read-only",
                     action_name(code));
        return SQLITE_DENY;
    }
}

tb_status sandbox_install(sandbox *sb, sqlite3 *db, const char *db_path, tb_error *err)
{
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, NULL);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    /* a value larger than this (randomblob(9e8), a string built in a
     * recursive CTE) is an error, not gigabytes of memory */
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, TB_MAX_VALUE_BYTES);
    if (sqlite3_drop_modules(db, allowed_modules) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", db_path, sqlite3_errmsg(db));
    sqlite3_set_authorizer(db, authorize, sb);
    return TB_OK;
}

const char *sandbox_message(sandbox *sb, sqlite3 *db)
{
    if (sb->denied[0])
        return sb->denied;
    const char *m = sqlite3_errmsg(db);
    static const char nomod[] = "no such module: ";
    /* an untrusted schema: a function of a view that is not innocuous */
    static const char unsafe[] = "unsafe use of ";
    if (m && !strncmp(m, nomod, sizeof nomod - 1)) {
        snprintf(sb->denied, sizeof sb->denied, "the virtual table module %s is not allowed in report SQL",
                 m + sizeof nomod - 1);
        return sb->denied;
    }
    if (m && !strncmp(m, unsafe, sizeof unsafe - 1)) {
        snprintf(sb->denied, sizeof sb->denied, "the function %s is not allowed in report SQL",
                 m + sizeof unsafe - 1);
        return sb->denied;
    }
    return m;
}

void sandbox_finish(sandbox *sb)
{
    sb->trusted = 0;
    sb->denied[0] = 0;
    sb->reads = NULL;
    sb->n_reads = 0;
    sb->reads_who = NULL;
}
