/* SPDX-License-Identifier: MIT */
/*
 * bound.c - tracebook-bound, the SQLite bound of a load: how long SQLite
 * alone takes to insert the rows a load wrote, on the same machine, with the
 * same settings and statements the loader's writer uses, and nothing else.
 *
 * It reads a DB written by `tracebook export db` (SRC) and writes DST, a new
 * file: the same tables (their CREATE TABLE statements from SRC), created
 * with the writer's settings (64 KiB pages, journal and sync off, exclusive
 * lock, 8 MiB cache, a connection without its own mutex, secure_delete
 * off while the rows go in) in one transaction, and the indexes the
 * loader makes with its tables (schemas/indexes_live.sql, kept up row by
 * row); then, table by table, the
 * same rows inserted through one prepared INSERT of up to 32 rows (the
 * writer's batch), rows bound value by value (an integer, real or NULL
 * not bound again where the parameter already holds it, as the writer
 * does), naming the columns the
 * loader's INSERT names: the shortest of the writer's column lists for that
 * table (engine/db/rows.c) that holds every column with a value in SRC (all
 * stored columns when none does: the rows the loader writes by SQL); then SRC's
 * other indexes (its CREATE INDEX statements) and the commit. Reading SRC is not timed: rows are read
 * in blocks of 65536 into memory (copies of the values) and only the inserts
 * of each block run on the clock, so memory is bounded by one block.
 *
 * Prints one line: "rows N tables T insert_s S index_s S total_s S", total
 * being insert, index and commit. With --each, it first prints to standard
 * error one line per table that has rows ("table NAME rows N insert_s S")
 * and one per index built after the rows ("index NAME index_s S"): where
 * the bound's time goes. Exit status 0, or 1 with a message on
 * standard error naming the file and what failed. A development tool for
 * tests/bench/bench.sh; not installed.
 *
 * usage: tracebook-bound [--each] SRC.db DST.db   (DST must not exist)
 */
#define _POSIX_C_SOURCE 200809L
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "db/rows.h"

/* the loader's indexes made with its tables (tools/embed.py, engine/meson.build) */
extern const char tb_sql_indexes_live[];

#define BATCH 32
#define BLOCK 65536

static int each; /* --each: a line per table and index on standard error */

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int fail(sqlite3 *db, const char *path, const char *what)
{
    fprintf(stderr, "tracebook-bound: error: %s: %s: %s\n", path, what, db ? sqlite3_errmsg(db) : "");
    return 0;
}

/*
 * The stored columns of table (generated columns left out) as a quoted,
 * comma-separated list; sqlite3_free it. NULL on failure.
 */
static char *stored_columns(sqlite3 *db, const char *table)
{
    sqlite3_str *s = sqlite3_str_new(db);
    sqlite3_stmt *st = NULL;
    int n = 0;

    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1) WHERE hidden = 0 ORDER BY cid",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        while (sqlite3_step(st) == SQLITE_ROW)
            sqlite3_str_appendf(s, "%s\"%w\"", n++ ? "," : "", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    if (!n)
        sqlite3_str_appendall(s, "*");
    return sqlite3_str_finish(s);
}

/* 1 when every name of the comma-separated list have (quoted) is in list (plain). */
static int list_covers(const char *list, const char *have)
{
    const char *p = have;
    while (*p == '"') {
        const char *e = strchr(p + 1, '"');
        const char *l = list;
        int found = 0;
        size_t n;

        if (!e)
            return 0;
        n = (size_t)(e - p - 1);
        while (!found && *l) {
            const char *c = strchr(l, ',');
            size_t len = c ? (size_t)(c - l) : strlen(l);
            found = len == n && !memcmp(l, p + 1, n);
            l = c ? c + 1 : l + len;
        }
        if (!found)
            return 0;
        p = e + 1 + (e[1] == ',');
    }
    return 1;
}

/* The plain names of table's columns that hold a value in some row, quoted
 * and comma-separated ("" when none); sqlite3_free it. NULL on failure. */
static char *columns_with_values(sqlite3 *db, const char *table)
{
    sqlite3_str *s = sqlite3_str_new(db), *h = sqlite3_str_new(db);
    sqlite3_stmt *st = NULL;
    char *sql;
    int n = 0, ok = 0;

    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1) WHERE hidden = 0 ORDER BY cid",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *c = (const char *)sqlite3_column_text(st, 0);
            sqlite3_str_appendf(s, "%scount(\"%w\") AS \"%w\"", n++ ? "," : "SELECT ", c, c);
        }
        sqlite3_finalize(st);
        st = NULL;
    }
    sqlite3_str_appendf(s, " FROM \"%w\"", table);
    sql = sqlite3_str_finish(s);
    if (n && sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        ok = 1;
        n = 0;
        for (int c = 0; c < sqlite3_column_count(st); c++)
            if (sqlite3_column_int64(st, c) > 0)
                sqlite3_str_appendf(h, "%s\"%w\"", n++ ? "," : "", sqlite3_column_name(st, c));
    }
    sqlite3_finalize(st);
    sqlite3_free(sql);
    sqlite3_str_appendall(h, "");
    sql = sqlite3_str_finish(h);
    if (!ok) {
        sqlite3_free(sql);
        return NULL;
    }
    return sql;
}

/*
 * The columns the loader's INSERT into table names (see the top of the
 * file), quoted and comma-separated; sqlite3_free it. NULL on failure.
 */
static char *writer_columns(sqlite3 *db, const char *table)
{
    char *have = columns_with_values(db, table);
    int best = -1;

    for (int t = 0; have && t < R_TABLE_COUNT; t++)
        if (!strcmp(row_tables[t].table, table) && list_covers(row_tables[t].columns, have) &&
            (best < 0 || row_tables[t].ncols < row_tables[best].ncols))
            best = t;
    sqlite3_free(have);
    if (best < 0)
        return stored_columns(db, table);
    sqlite3_str *q = sqlite3_str_new(db);
    for (const char *p = row_tables[best].columns; *p;) {
        const char *e = strchr(p, ',');
        int len = e ? (int)(e - p) : (int)strlen(p);
        sqlite3_str_appendf(q, "%s\"%.*w\"", p == row_tables[best].columns ? "" : ",", len, p);
        p = e ? e + 1 : p + len;
    }
    return sqlite3_str_finish(q);
}

/* INSERT INTO "t" (cols) VALUES (?,..),(?,..) with rows rows of ncol columns; NULL on failure. */
static sqlite3_stmt *prepare_insert(sqlite3 *db, const char *table, const char *cols, int ncol, int rows)
{
    sqlite3_str *s = sqlite3_str_new(db);
    sqlite3_stmt *st = NULL;
    char *sql;
    int r, c;

    sqlite3_str_appendf(s, "INSERT INTO \"%w\" (%s) VALUES ", table, cols);
    for (r = 0; r < rows; r++) {
        sqlite3_str_appendall(s, r ? ",(" : "(");
        for (c = 0; c < ncol; c++)
            sqlite3_str_appendall(s, c ? ",?" : "?");
        sqlite3_str_appendall(s, ")");
    }
    sql = sqlite3_str_finish(s);
    if (sql && sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        st = NULL;
    sqlite3_free(sql);
    return st;
}

/* What a parameter holds since it was last bound, as the writer keeps it
 * (engine/db/dbw.c): an integer, real or NULL bound again as it is is not
 * bound again. A new statement's parameters are NULL (type 0). */
typedef struct held {
    sqlite3_int64 v;
    int type; /* 0 NULL, SQLITE_INTEGER, SQLITE_FLOAT; -1: rebind whatever comes */
} held;

static void bind_held(sqlite3_stmt *st, int k, sqlite3_value *v, held *h)
{
    int type = sqlite3_value_type(v);
    sqlite3_int64 x = 0;
    double d;

    if (type == SQLITE_NULL)
        type = 0;
    if (type == SQLITE_INTEGER) {
        x = sqlite3_value_int64(v);
    } else if (type == SQLITE_FLOAT) {
        d = sqlite3_value_double(v);
        memcpy(&x, &d, sizeof x);
    }
    if (type == SQLITE_TEXT || type == SQLITE_BLOB)
        type = -1;
    else if (type == h->type && x == h->v)
        return;
    sqlite3_bind_value(st, k, v);
    h->type = type;
    h->v = x;
}

/* Inserts n rows of ncol values (v, row-major) as full batches, then single
 * rows, h holding the parameters of many (BATCH * ncol) then of one (ncol); 1 or 0. */
static int insert_block(sqlite3_stmt *many, sqlite3_stmt *one, sqlite3_value **v, long n, int ncol, held *h)
{
    long r = 0;
    int c, k;

    for (; many && r + BATCH <= n; r += BATCH) {
        for (k = 0; k < BATCH * ncol; k++)
            bind_held(many, k + 1, v[r * ncol + k], &h[k]);
        if (sqlite3_step(many) != SQLITE_DONE || sqlite3_reset(many) != SQLITE_OK)
            return 0;
    }
    for (; r < n; r++) {
        for (c = 0; c < ncol; c++)
            bind_held(one, c + 1, v[r * ncol + c], &h[BATCH * ncol + c]);
        if (sqlite3_step(one) != SQLITE_DONE || sqlite3_reset(one) != SQLITE_OK)
            return 0;
    }
    return 1;
}

static void free_values(sqlite3_value **v, long n)
{
    long i;

    for (i = 0; i < n; i++)
        sqlite3_value_free(v[i]);
}

/* Copies table's rows from src to dst block by block, timing only the inserts; 1 or 0. */
static int copy_table(sqlite3 *src, sqlite3 *dst, const char *table, const char *const path[2],
                      long long *rows, double *secs)
{
    int bad = 0; /* which side failed: 0 src, 1 dst */
    sqlite3_stmt *sel = NULL, *one = NULL, *many = NULL;
    sqlite3_value **v = NULL;
    held *h = NULL;
    char *cols = writer_columns(src, table);
    char *sql = cols ? sqlite3_mprintf("SELECT %s FROM \"%w\"", cols, table) : NULL;
    int ncol, c, rc = SQLITE_ROW, ok = 0;
    long n;
    long long n0 = *rows;
    double t, s0 = *secs;

    if (!sql || sqlite3_prepare_v2(src, sql, -1, &sel, NULL) != SQLITE_OK)
        goto out;
    ncol = sqlite3_column_count(sel);
    bad = 1;
    one = prepare_insert(dst, table, cols, ncol, 1);
    many = ncol * BATCH <= 32766 ? prepare_insert(dst, table, cols, ncol, BATCH) : NULL;
    v = malloc(sizeof *v * (size_t)ncol * BLOCK);
    h = calloc((size_t)(BATCH + 1) * (size_t)ncol, sizeof *h);
    if (!one || !v || !h)
        goto out;
    while (rc == SQLITE_ROW) {
        bad = 0;
        for (n = 0; n < BLOCK && (rc = sqlite3_step(sel)) == SQLITE_ROW; n++)
            for (c = 0; c < ncol; c++)
                if (!(v[n * ncol + c] = sqlite3_value_dup(sqlite3_column_value(sel, c)))) {
                    free_values(v, n * ncol + c);
                    goto out;
                }
        bad = 1;
        t = now();
        ok = insert_block(many, one, v, n, ncol, h);
        *secs += now() - t;
        *rows += n;
        free_values(v, n * (long)ncol);
        if (!ok)
            goto out;
    }
    bad = 0;
    ok = rc == SQLITE_DONE;
    if (ok && each && *rows > n0)
        fprintf(stderr, "table %s rows %lld insert_s %.3f\n", table, *rows - n0, *secs - s0);
out:
    if (!ok)
        fail(bad ? dst : src, path[bad], table);
    free(v);
    free(h);
    sqlite3_finalize(sel);
    sqlite3_finalize(one);
    sqlite3_finalize(many);
    sqlite3_free(sql);
    sqlite3_free(cols);
    return ok;
}

/* 1 when dst's schema has an entry of that name, else 0. */
static int has_entry(sqlite3 *dst, const char *name)
{
    sqlite3_stmt *st = NULL;
    int found = 0;

    if (sqlite3_prepare_v2(dst, "SELECT 1 FROM sqlite_master WHERE name = ?1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

/* Runs every statement of src's schema of the given type ("table" or
 * "index") in dst, but for the entries dst has already. */
static int copy_schema(sqlite3 *src, sqlite3 *dst, const char *type, const char *src_path,
                       const char *dst_path, int *count)
{
    sqlite3_stmt *st = NULL;
    int rc, ok = 1;
    double t;

    if (sqlite3_prepare_v2(src, "SELECT sql, name FROM sqlite_master WHERE type = ?1 AND sql IS NOT NULL "
                           "AND name NOT LIKE 'sqlite_%' ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
        return fail(src, src_path, "reading the schema");
    sqlite3_bind_text(st, 1, type, -1, SQLITE_STATIC);
    while (ok && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (has_entry(dst, (const char *)sqlite3_column_text(st, 1)))
            continue;
        t = now();
        if (sqlite3_exec(dst, (const char *)sqlite3_column_text(st, 0), NULL, NULL, NULL) != SQLITE_OK)
            ok = fail(dst, dst_path, (const char *)sqlite3_column_text(st, 0));
        else if (each && !strcmp(type, "index"))
            fprintf(stderr, "index %s index_s %.3f\n", (const char *)sqlite3_column_text(st, 1), now() - t);
        (*count)++;
    }
    if (ok && rc != SQLITE_DONE)
        ok = fail(src, src_path, "reading the schema");
    sqlite3_finalize(st);
    return ok;
}

/* Copies every table's rows, in schema order; 1 or 0. */
static int copy_rows(sqlite3 *src, sqlite3 *dst, const char *const path[2], long long *rows, double *secs)
{
    sqlite3_stmt *st = NULL;
    int ok = 1;

    if (sqlite3_prepare_v2(src, "SELECT name FROM sqlite_master WHERE type = 'table' "
                           "AND name NOT LIKE 'sqlite_%' ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
        return fail(src, path[0], "listing the tables");
    while (ok && sqlite3_step(st) == SQLITE_ROW)
        ok = copy_table(src, dst, (const char *)sqlite3_column_text(st, 0), path, rows, secs);
    sqlite3_finalize(st);
    return ok;
}

/* sqlite3_exec's callback of PRAGMA secure_delete: *ctx = its value. */
static int secure_on(void *ctx, int n, char **vals, char **names)
{
    (void)names;
    *(int *)ctx = n == 1 && vals[0] && vals[0][0] == '1';
    return 0;
}

int main(int argc, char **argv)
{
    sqlite3 *src = NULL, *dst = NULL;
    struct stat sb;
    long long rows = 0;
    double ins = 0, t, idx;
    int tables = 0, indexes = 0, ok, secure = 1;

    if (argc > 1 && !strcmp(argv[1], "--each")) {
        each = 1;
        argv++;
        argc--;
    }
    if (argc != 3) {
        fputs("usage: tracebook-bound [--each] SRC.db DST.db   (DST must not exist)\n", stderr);
        return 2;
    }
    if (stat(argv[2], &sb) == 0) {
        fprintf(stderr, "tracebook-bound: error: %s: exists (give a new file)\n", argv[2]);
        return 2;
    }
    if (sqlite3_open_v2(argv[1], &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        ok = fail(src, argv[1], "open");
    else if (sqlite3_open_v2(argv[2], &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 NULL) != SQLITE_OK)
        ok = fail(dst, argv[2], "open");
    else if (sqlite3_exec(dst, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                          "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-8192; PRAGMA temp_store=FILE;"
                          "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        ok = fail(dst, argv[2], "settings");
    else if ((ok = copy_schema(src, dst, "table", argv[1], argv[2], &tables)) &&
             sqlite3_exec(dst, tb_sql_indexes_live, NULL, NULL, NULL) != SQLITE_OK)
        ok = fail(dst, argv[2], "the indexes kept up row by row (schemas/indexes_live.sql)");
    /* the writer's inserts run with secure_delete off, its indexes after the
     * rows with the connection's own setting (engine/db/dbw.c) */
    if (ok && sqlite3_exec(dst, "PRAGMA secure_delete", secure_on, &secure, NULL) != SQLITE_OK)
        ok = fail(dst, argv[2], "secure_delete");
    if (ok && sqlite3_exec(dst, "PRAGMA secure_delete=0", NULL, NULL, NULL) != SQLITE_OK)
        ok = fail(dst, argv[2], "secure_delete");
    if (ok)
        ok = copy_rows(src, dst, (const char *const[2]){argv[1], argv[2]}, &rows, &ins);
    if (ok && secure && sqlite3_exec(dst, "PRAGMA secure_delete=1", NULL, NULL, NULL) != SQLITE_OK)
        ok = fail(dst, argv[2], "secure_delete");
    t = now();
    if (ok)
        ok = copy_schema(src, dst, "index", argv[1], argv[2], &indexes);
    idx = now() - t;
    if (ok && sqlite3_exec(dst, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        ok = fail(dst, argv[2], "commit");
    t = now() - t;
    sqlite3_close(src);
    sqlite3_close(dst);
    if (!ok)
        return 1;
    printf("rows %lld tables %d insert_s %.3f index_s %.3f total_s %.3f\n", rows, tables, ins, idx, ins + t);
    return 0;
}
