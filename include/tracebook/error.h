/* SPDX-License-Identifier: MIT */
/*
 * error.h - what every stage of the engine shares: the error record, result
 * codes and exit codes, the version, and the temporary-file registry.
 *
 * Every engine call that can fail returns a tb_status and fills a
 * caller-owned tb_error with the code, a message and, when the problem is in
 * an input file, the file, line, column and byte offset. The CLI turns the
 * record into `tracebook: error: FILE:LINE:COL: message` and the code into a
 * named exit code.
 */
#ifndef TRACEBOOK_ERROR_H
#define TRACEBOOK_ERROR_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/version.h"

typedef enum tb_status {
    TB_OK = 0,
    TB_ERR_USAGE,    /* bad arguments or options */
    TB_ERR_IO,       /* a file could not be read or written */
    TB_ERR_PARSE,    /* an input is malformed */
    TB_ERR_TRUNCATED,/* an input stops early (only an error with --strict) */
    TB_ERR_DB,       /* SQLite failed */
    TB_ERR_NOMEM,    /* out of memory */
    TB_ERR_NOTFOUND, /* nothing to read where the user pointed */
    TB_ERR_INTERNAL  /* a broken invariant: a bug in tracebook */
} tb_status;

typedef struct tb_error {
    tb_status code;
    char message[512];
    char file[1024];      /* input file the problem is in, or "" */
    long line;            /* 1-based, 0 when unknown */
    long column;          /* 1-based, 0 when unknown */
    int64_t offset;       /* byte offset in the (decompressed) input, -1 when unknown */
} tb_error;

/* Resets err to "no error". */
void tb_error_clear(tb_error *err);

/* Fills err (code, printf-style message; no file position). Returns code. */
tb_status tb_error_set(tb_error *err, tb_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fills err with a position in an input file. Returns code. */
tb_status tb_error_at(tb_error *err, tb_status code, const char *file, long line,
                      long column, int64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Returns a static description of a status code. */
const char *tb_strerror(tb_status code);

/* Returns the library's version string, TB_VERSION of the library as built
 * (tracebook/version.h; static, never free). */
const char *tb_version(void);

/*
 * Temporary output files that an interrupted run must not leave behind.
 * tb_temp_register() copies path (returns 0, or -1 when the table is full);
 * tb_temp_cleanup() unlinks every registered file and is async-signal-safe,
 * for the command's SIGINT/SIGTERM handler.
 */
int tb_temp_register(const char *path);
void tb_temp_unregister(const char *path);
void tb_temp_cleanup(void);

/*
 * Makes a private temporary folder named after path,
 * `PATH.tmp-<pid>@<host>-XXXXXX`, and registers it (as tb_temp_register);
 * first, what killed runs of this host left beside path under such names is
 * removed. out receives the folder's name. Returns 0, or -1 with errno set.
 */
int tb_temp_folder(const char *path, char *out, size_t n);

/*
 * Where byte offset off of text is, for a message: the line of text holding
 * it and a caret under it, "  LINE\n  ^ line L, column C\n" (columns count
 * characters, not bytes), into buf. Writes "" when off is not in text.
 */
void tb_text_place(const char *text, int64_t off, char *buf, size_t n);

/*
 * The name of cands[0..n) nearest to word when word is a likely typo of it
 * (within one edit for a short word, two from 6 characters, three from 12;
 * NULL entries are skipped), else NULL. Borrowed from cands. For "did you
 * mean" in messages.
 */
const char *tb_suggest(const char *word, const char *const *cands, size_t n);

#endif
