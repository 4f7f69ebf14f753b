/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h - what report SQL may do (sandbox.c).
 */
#ifndef TB_QUERY_SANDBOX_H
#define TB_QUERY_SANDBOX_H

#include <sqlite3.h>
#include <stddef.h>

#include "tracebook/error.h"

/* The state of one connection's sandbox (caller memory, zeroed). */
typedef struct sandbox {
    int trusted;          /* 1 while tracebook itself runs SQL: nothing is checked */
    char denied[320];     /* what was refused last ("" when nothing), for the error message */
    /* When n_reads > 0, the only tables (and views) report SQL may read
     * (case-insensitive), and what the refusal says first (a cluster-scope
     * report's tables: "report 'x' is of scope cluster"); SQLite's schema
     * tables and the table functions of the allow-list stay readable. */
    const char *const *reads;
    size_t n_reads;
    const char *reads_who;
} sandbox;

/*
 * Makes db read-only and safe for report SQL written by anyone: defensive
 * mode, no extension loading, untrusted schema, no fts3_tokenizer() pointer
 * form, no ATTACH, a bound on value sizes, and an authorizer that allows
 * SELECT over tables and views, the read-only PRAGMAs, the functions of the
 * allow-list (SQLite's own scalar, aggregate, window, date, math and JSON
 * functions and tracebook's); the virtual-table modules outside the allowed
 * ones are dropped from db. db_path names the DB in messages. On error err
 * is set.
 */
tb_status sandbox_install(sandbox *sb, sqlite3 *db, const char *db_path, tb_error *err);

/*
 * The message of the last failure on db: what the sandbox refused, else
 * SQLite's message, a module it dropped named as refused (then sb->denied
 * is set too). Borrowed: valid until the next statement.
 */
const char *sandbox_message(sandbox *sb, sqlite3 *db);

/* Resets sb (a zeroed sandbox again); db is closed by the caller. */
void sandbox_finish(sandbox *sb);

/* 1 when report SQL may call the function name (case-insensitive). */
int sandbox_function_allowed(const char *name);

#endif
