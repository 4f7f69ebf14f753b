/* SPDX-License-Identifier: MIT */
/*
 * sqlite_input.h - opening an input SQLite DB without ever writing it
 * (private to the engine).
 *
 * A DB with a write-ahead log beside it is copied with its log to a private
 * temporary directory and opened there (opening it in place would write its
 * -shm file or checkpoint the log into it); any other DB is opened immutable,
 * which takes no locks and creates no files.
 */
#ifndef TB_DB_SQLITE_INPUT_H
#define TB_DB_SQLITE_INPUT_H

#include <limits.h>
#include <sqlite3.h>
#include <stddef.h>

#include "tracebook/error.h"

typedef struct sqlite_input {
    sqlite3 *db;                   /* the connection (owned) */
    char tmpdir[PATH_MAX];         /* private copy's directory, "" when none */
    char copy[PATH_MAX + 32], copy_wal[PATH_MAX + 32];
} sqlite_input;

/* Opens path for reading into in (caller memory; close with sqlite_input_close). */
tb_status sqlite_input_open(sqlite_input *in, const char *path, tb_error *err);

/* Closes and removes the private copy, if any. Accepts a never-opened (zeroed) in. */
void sqlite_input_close(sqlite_input *in);

/* Writes "file:<path, percent-encoded>?immutable=1" into out. */
void sqlite_input_uri(const char *path, char *out, size_t n);

#endif
