/* SPDX-License-Identifier: MIT */
/*
 * printf_guard.c - printf() and format() of report SQL within the limit of
 * a value (printf_guard.h).
 *
 * SQLite's printf() does not fail when its result would pass
 * SQLITE_LIMIT_LENGTH: it returns NULL, and before that it keeps going
 * through the whole width or precision asked for (`printf('%.*c',
 * 2000000000, 'x')` spends 20 s making nothing). A report would then go on
 * with a NULL where the docs promise an error. So report SQL gets these two
 * functions in place of SQLite's: each reads the format's widths and
 * precisions first (the digits, or the argument a `*` takes) and fails at
 * once, naming the limit, when they alone ask for more than a value may
 * hold; otherwise SQLite's own printf, run on a private in-memory
 * connection that has the same limit, makes the result, and a NULL from it
 * for a format that is not NULL (the result grew past the limit) is the
 * same error. The result is SQLite's to the byte: nothing is re-implemented.
 */
#include "query/printf_guard.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "db/open.h"

#define MAX_CACHED 8  /* statements kept for 0 .. MAX_CACHED - 1 arguments after the format */

typedef struct guard {
    const char *name;   /* "printf" or "format" */
    sqlite3 *side;      /* the private connection, opened at the first call */
    sqlite3_stmt *st[MAX_CACHED];
} guard;

static void guard_free(void *p)
{
    guard *g = p;
    if (!g)
        return;
    for (int i = 0; i < MAX_CACHED; i++)
        sqlite3_finalize(g->st[i]);
    sqlite3_close(g->side);
    sqlite3_free(g);
}

/* A width or precision: digits (saturating at big), or '*' taking argv[*k] as SQLite does. */
static uint64_t field(const char **pp, int argc, sqlite3_value **argv, int *k, uint64_t big)
{
    const char *p = *pp;
    uint64_t v = 0;
    if (*p == '*') {
        int64_t x = *k < argc ? sqlite3_value_int64(argv[*k]) : 0;
        (*k)++;
        int w = (int)x; /* SQLite reads it as an int */
        v = w < 0 ? (uint64_t)(-(int64_t)w) : (uint64_t)w;
        p++;
    } else {
        while (isdigit((unsigned char)*p)) {
            v = v * 10 + (uint64_t)(*p - '0');
            if (v > big)
                v = big;
            p++;
        }
    }
    *pp = p;
    return v;
}

/*
 * The fewest bytes the format's conversions make: each is at least its
 * width, and a character or number at least its precision (a string's
 * precision only cuts). Saturates past big.
 */
static uint64_t least_bytes(const char *f, int argc, sqlite3_value **argv, uint64_t big)
{
    uint64_t total = 0;
    int k = 1;
    for (const char *p = f; *p && total <= big; p++) {
        if (*p != '%')
            continue;
        p++;
        if (*p == '%')
            continue;
        while (*p && strchr("-+ #!0,", *p))
            p++;
        uint64_t w = field(&p, argc, argv, &k, big), pr = 0;
        if (*p == '.') {
            p++;
            pr = field(&p, argc, argv, &k, big);
        }
        while (*p == 'l')
            p++;
        if (!*p)
            break;
        uint64_t least = w;
        if (strchr("cdiuxXofeEgG", *p) && pr > least)
            least = pr;
        total += least;
        k++;
    }
    return total;
}

static sqlite3_stmt *statement(guard *g, sqlite3 *db, int n_args)
{
    if (!g->side) {
        if (db_open(":memory:", SQLITE_OPEN_READWRITE, &g->side) != SQLITE_OK) {
            sqlite3_close(g->side);
            g->side = NULL;
            return NULL;
        }
        sqlite3_limit(g->side, SQLITE_LIMIT_LENGTH, sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1));
    }
    if (n_args < MAX_CACHED && g->st[n_args])
        return g->st[n_args];
    char sql[64 + 8 * 127];
    int at = snprintf(sql, sizeof sql, "SELECT %s(?1", g->name);
    for (int i = 0; i < n_args && at < (int)sizeof sql - 16; i++)
        at += snprintf(sql + at, sizeof sql - (size_t)at, ",?%d", i + 2);
    snprintf(sql + at, sizeof sql - (size_t)at, ")");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(g->side, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return NULL;
    }
    if (n_args < MAX_CACHED)
        g->st[n_args] = st;
    return st;
}

static void guarded(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    guard *g = sqlite3_user_data(ctx);
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    const char *f = argc > 0 ? (const char *)sqlite3_value_text(argv[0]) : NULL;
    if (!f)
        return; /* NULL, as SQLite's */
    int limit = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
    char msg[160];
    snprintf(msg, sizeof msg, "%s(): the result would be longer than %d bytes, the limit of a value", g->name,
             limit);
    if (least_bytes(f, argc, argv, (uint64_t)limit) > (uint64_t)limit) {
        sqlite3_result_error(ctx, msg, -1);
        sqlite3_result_error_code(ctx, SQLITE_TOOBIG);
        return;
    }
    if (argc > 127) {
        sqlite3_result_error(ctx, "too many arguments", -1);
        return;
    }
    sqlite3_stmt *st = statement(g, db, argc - 1);
    if (!st) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    for (int i = 0; i < argc; i++)
        sqlite3_bind_value(st, i + 1, argv[i]);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_result_error(ctx, sqlite3_errmsg(g->side), -1);
        sqlite3_result_error_code(ctx, rc);
    } else if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
        sqlite3_result_error(ctx, msg, -1);
        sqlite3_result_error_code(ctx, SQLITE_TOOBIG);
    } else {
        sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (argc - 1 >= MAX_CACHED)
        sqlite3_finalize(st);
}

int printf_guard_register(sqlite3 *db)
{
    static const char *const names[] = {"printf", "format"};
    for (int i = 0; i < 2; i++) {
        guard *g = sqlite3_malloc(sizeof *g);
        if (!g)
            return SQLITE_NOMEM;
        memset(g, 0, sizeof *g);
        g->name = names[i];
        int rc = sqlite3_create_function_v2(db, names[i], -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                            g, guarded, NULL, NULL, guard_free);
        if (rc != SQLITE_OK)
            return rc;
    }
    return SQLITE_OK;
}
