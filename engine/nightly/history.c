/* SPDX-License-Identifier: MIT */
/*
 * history.c - the history DB of a nightly job: its schema, opening an
 * existing history and making a missing one, removing and listing nights
 * (tracebook/nightly.h: tb_history_remove, tb_history_list;
 * docs/nightly.md#the-history-db).
 *
 * A history is one SQLite file: history_info says what it is (format and
 * version), night holds one row per night with what it was run from,
 * night_meta its KEY=VALUE pairs, night_report each report it kept (or why
 * it was skipped), night_column that report's columns and night_cell every
 * cell that is not NULL. A file that is not a history is refused, never
 * changed. Adding a night (history_add.c) and the trend report
 * (history_report.c) open it through here; this file calls neither.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db/ask.h"
#include "db/open.h"
#include "nightly/history_int.h"
#include "output/output.h"
#include "tracebook/nightly.h"
#include "util/dirs.h"
#include "util/tempname.h"

#define HISTORY_FORMAT "tracebook history"
#define HISTORY_VERSION 1

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS history_info(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS night("
    " id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE, data_time TEXT, added TEXT NOT NULL,"
    " version TEXT NOT NULL, spec TEXT NOT NULL, inputs TEXT NOT NULL, window TEXT);"
    "CREATE TABLE IF NOT EXISTS night_meta("
    " night INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(night, key));"
    "CREATE TABLE IF NOT EXISTS night_report("
    " id INTEGER PRIMARY KEY, night INTEGER NOT NULL, report TEXT NOT NULL, title TEXT NOT NULL,"
    " rows INTEGER NOT NULL, skipped TEXT, UNIQUE(night, report));"
    "CREATE TABLE IF NOT EXISTS night_column("
    " report INTEGER NOT NULL, col INTEGER NOT NULL, header TEXT NOT NULL, name TEXT NOT NULL,"
    " type TEXT NOT NULL, PRIMARY KEY(report, col)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS night_cell("
    " report INTEGER NOT NULL, row INTEGER NOT NULL, col INTEGER NOT NULL, value,"
    " PRIMARY KEY(report, row, col)) WITHOUT ROWID;";

static const char *const type_names[] = {"plain", "dur_ns", "ts_ns", "ratio_%", "mem_b", "rank"};

const char *history_type_name(tb_col_type type)
{
    return type_names[type];
}

tb_col_type history_type_of(const char *s)
{
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
        if (s && !strcmp(s, history_type_name(i)))
            return (tb_col_type)i;
    return TB_COL_PLAIN;
}

tb_status history_dberr(sqlite3 *db, const char *path, tb_error *err)
{
    int code = sqlite3_errcode(db);
    return tb_error_at(err, code == SQLITE_NOTADB ? TB_ERR_PARSE : TB_ERR_DB, path, 0, 0, -1, "%s",
                       sqlite3_errmsg(db));
}

tb_status history_run_sql(sqlite3 *db, const char *path, const char *sql, tb_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        tb_status st = tb_error_at(err, sqlite3_errcode(db) == SQLITE_NOTADB ? TB_ERR_PARSE : TB_ERR_DB, path, 0, 0,
                                   -1, "%s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return st;
    }
    return TB_OK;
}

/*
 * A writer killed inside `history add` (or stopped by a full disk before
 * it could clean up) leaves a hot journal beside the history. A read-only
 * connection cannot roll it back and fails every read with "attempt to
 * write a readonly database"; a read-write one rolls it back on its first
 * read, under SQLite's locks, as the next writer would. That is done here
 * first, so that list and report read the history as it was before the
 * killed add. A journal that is no longer hot (its writer still runs, or
 * it was rolled back) is left to SQLite.
 */
static void roll_back_hot_journal(const char *path)
{
    char journal[PATH_MAX];
    struct stat sb;
    if (snprintf(journal, sizeof journal, "%s-journal", path) >= (int)sizeof journal || stat(journal, &sb) != 0 ||
        sb.st_size == 0 || access(path, W_OK) != 0)
        return;
    sqlite3 *db = NULL;
    if (db_open(path, SQLITE_OPEN_READWRITE, &db) == SQLITE_OK) {
        sqlite3_busy_timeout(db, BUSY_MS);
        sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
    }
    sqlite3_close(db);
}

/*
 * Opens an existing history read-only (the caller may ATTACH it to write).
 * A file that is not a tracebook history is refused, never changed (but
 * for the roll-back of a hot journal beside it, which any SQLite writer
 * would do).
 */
tb_status history_open(const char *path, sqlite3 **out, tb_error *err)
{
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return tb_error_at(err, errno == ENOENT ? TB_ERR_NOTFOUND : TB_ERR_IO, path, 0, 0, -1,
                           "cannot open the history: %s%s", strerror(errno),
                           errno == ENOENT ? " (history add creates it)" : "");
    if (!S_ISREG(sb.st_mode))
        return tb_error_at(err, TB_ERR_USAGE, path, 0, 0, -1, "the history must be a file");
    roll_back_hot_journal(path);
    sqlite3 *db = NULL;
    if (db_open(path, SQLITE_OPEN_READONLY, &db) != SQLITE_OK) {
        tb_status st = tb_error_at(err, TB_ERR_DB, path, 0, 0, -1, "cannot open the history: %s",
                                   db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return st;
    }
    sqlite3_busy_timeout(db, BUSY_MS);
    sqlite3_stmt *q = NULL;
    tb_status st = TB_OK;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &q, NULL) != SQLITE_OK ||
        sqlite3_step(q) != SQLITE_ROW)
        st = history_dberr(db, path, err);
    sqlite3_finalize(q);
    q = NULL;
    const char *fmt = NULL;
    if (!st && db_has_table(db, "main", "history_info", 0) > 0 &&
        sqlite3_prepare_v2(db, "SELECT value FROM history_info WHERE key = 'format'", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        fmt = (const char *)sqlite3_column_text(q, 0);
    if (!st && (!fmt || strcmp(fmt, HISTORY_FORMAT)))
        st = tb_error_at(err, TB_ERR_USAGE, path, 0, 0, -1,
                         "not a tracebook history (no history_info format row): left untouched");
    sqlite3_finalize(q);
    q = NULL;
    if (!st && (sqlite3_prepare_v2(db, "SELECT value FROM history_info WHERE key = 'version'", -1, &q, NULL) !=
                    SQLITE_OK ||
                sqlite3_step(q) != SQLITE_ROW || sqlite3_column_int(q, 0) > HISTORY_VERSION))
        st = tb_error_at(err, TB_ERR_USAGE, path, 0, 0, -1,
                         "a history of a newer format than this tracebook reads (%d)", HISTORY_VERSION);
    sqlite3_finalize(q);
    if (st) {
        sqlite3_close(db);
        return st;
    }
    *out = db;
    return TB_OK;
}

/* Deletes night id with everything it holds. */
static tb_status delete_night(sqlite3 *db, const char *path, int64_t id, tb_error *err)
{
    char *sql = sqlite3_mprintf(
        "DELETE FROM night_cell WHERE report IN (SELECT id FROM night_report WHERE night = %lld);"
        "DELETE FROM night_column WHERE report IN (SELECT id FROM night_report WHERE night = %lld);"
        "DELETE FROM night_report WHERE night = %lld; DELETE FROM night_meta WHERE night = %lld;"
        "DELETE FROM night WHERE id = %lld;",
        (long long)id, (long long)id, (long long)id, (long long)id, (long long)id);
    tb_status st = sql ? history_run_sql(db, path, sql, err) : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    sqlite3_free(sql);
    return st;
}

/* Keeps the newest keep nights (inside the caller's transaction). */
tb_status history_retain(sqlite3 *db, const char *path, int64_t keep, size_t *removed, tb_error *err)
{
    if (keep <= 0)
        return TB_OK;
    sqlite3_stmt *q = NULL;
    tb_status st = TB_OK;
    if (sqlite3_prepare_v2(db, "SELECT id FROM night " NIGHT_ORDER " DESC LIMIT -1 OFFSET ?", -1, &q, NULL) !=
        SQLITE_OK)
        return history_dberr(db, path, err);
    sqlite3_bind_int64(q, 1, keep);
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            int64_t *more = realloc(ids, cap * sizeof *ids);
            if (!more) {
                st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                break;
            }
            ids = more;
        }
        ids[n++] = sqlite3_column_int64(q, 0);
    }
    sqlite3_finalize(q);
    for (size_t i = 0; i < n && !st; i++)
        st = delete_night(db, path, ids[i], err);
    if (!st)
        *removed += n;
    free(ids);
    return st;
}

/*
 * Makes the history at path when it is missing: the schema is written to a
 * temporary beside it, which is then linked to path, so that no reader ever
 * sees half a history; when another job made it first, theirs is kept.
 */
tb_status history_create(const char *path, tb_error *err)
{
    struct stat sb;
    if (stat(path, &sb) == 0)
        return TB_OK;
    (void)dirs_make(path, 0, 0777); /* a failure is the history's, said below */
    char tmp[PATH_MAX];
    if (tempname_template(tmp, sizeof tmp, path) != 0)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "path too long");
    int fd = tempname_make(tmp, 0, NULL);
    if (fd < 0)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot create the history: %s", strerror(errno));
    close(fd);
    sqlite3 *db = NULL;
    tb_status st = TB_OK;
    if (db_open(tmp, SQLITE_OPEN_READWRITE, &db) != SQLITE_OK) {
        st = tb_error_at(err, TB_ERR_DB, path, 0, 0, -1, "cannot create the history: %s",
                         db ? sqlite3_errmsg(db) : "out of memory");
    } else {
        char *sql = sqlite3_mprintf("BEGIN; %s INSERT INTO history_info VALUES('format', '%q'), ('version', '%d'),"
                                    " ('created_by', 'tracebook %q'); COMMIT",
                                    schema, HISTORY_FORMAT, HISTORY_VERSION, tb_version());
        st = sql ? history_run_sql(db, path, sql, err) : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        sqlite3_free(sql);
    }
    if (sqlite3_close(db) != SQLITE_OK && !st)
        st = tb_error_at(err, TB_ERR_DB, path, 0, 0, -1, "cannot create the history");
    /* the history's permissions are those of a new file (mkstemp's are 0600) */
    mode_t um = umask(0);
    umask(um);
    if (!st && chmod(tmp, 0666 & ~um) != 0)
        st = tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot create the history: %s", strerror(errno));
    if (!st && link(tmp, path) != 0 && errno != EEXIST) {
        /* a file system without hard links: renamed, unless made meanwhile */
        if ((errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP) || (stat(path, &sb) != 0 && rename(tmp, path) != 0))
            st = tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot create the history: %s", strerror(errno));
    }
    unlink(tmp);
    tb_temp_unregister(tmp);
    /* made by another job meanwhile: it must be a history too */
    if (!st) {
        sqlite3 *check = NULL;
        st = history_open(path, &check, err);
        sqlite3_close(check);
    }
    return st;
}

/* ---- remove and list ------------------------------------------------------ */

tb_status tb_history_remove(const char *history, const char *const *labels, size_t n, int64_t keep, size_t *removed,
                            tb_error *err)
{
    *removed = 0;
    sqlite3 *db = NULL;
    tb_status st = history_open(history, &db, err);
    if (st)
        return st;
    sqlite3_close(db);
    /* read-write now that it is known to be a history */
    if (db_open(history, SQLITE_OPEN_READWRITE, &db) != SQLITE_OK) {
        st = tb_error_at(err, TB_ERR_DB, history, 0, 0, -1, "cannot open the history: %s", sqlite3_errmsg(db));
        sqlite3_close(db);
        return st;
    }
    sqlite3_busy_timeout(db, BUSY_MS);
    st = history_run_sql(db, history, "BEGIN IMMEDIATE", err);
    int in_tx = !st;
    sqlite3_stmt *q = NULL;
    if (!st && sqlite3_prepare_v2(db, "SELECT id FROM night WHERE label = ?", -1, &q, NULL) != SQLITE_OK)
        st = history_dberr(db, history, err);
    for (size_t i = 0; i < n && !st; i++) {
        sqlite3_bind_text(q, 1, labels[i], -1, SQLITE_STATIC);
        int64_t id = -1;
        if (sqlite3_step(q) == SQLITE_ROW)
            id = sqlite3_column_int64(q, 0);
        sqlite3_reset(q);
        if (id < 0)
            st = tb_error_at(err, TB_ERR_USAGE, history, 0, 0, -1,
                             "no night labelled '%s' (history list shows the labels); nothing removed", labels[i]);
        else if (!(st = delete_night(db, history, id, err)))
            (*removed)++;
    }
    sqlite3_finalize(q);
    if (!st)
        st = history_retain(db, history, keep, removed, err);
    if (!st)
        st = history_run_sql(db, history, "COMMIT", err);
    if (st && in_tx) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        *removed = 0;
    }
    sqlite3_close(db);
    return st;
}

/* The nights as rows of s (begun, written and finished), oldest first. */
static tb_status list_rows(sqlite3 *db, const char *history, tb_sink *s, tb_error *err)
{
    static const char *const heads[] = {"Label", "Data Time", "Added", "Version", "Reports", "Rows", "Inputs", "Meta"};
    tb_sink_column cols[8];
    for (int i = 0; i < 8; i++)
        cols[i] = (tb_sink_column){.header = heads[i]};
    sqlite3_stmt *q = NULL;
    tb_status st = s->begin(s, cols, 8, err);
    if (!st && sqlite3_prepare_v2(db,
                                  "SELECT label, data_time, added, version,"
                                  " (SELECT count(*) FROM night_report r WHERE r.night = n.id AND r.skipped IS NULL),"
                                  " (SELECT total(rows) FROM night_report r WHERE r.night = n.id),"
                                  " (SELECT group_concat(value, ' ') FROM json_each(n.inputs)),"
                                  " (SELECT group_concat(key || '=' || value, ' ') FROM"
                                  "   (SELECT key, value FROM night_meta m WHERE m.night = n.id ORDER BY key))"
                                  " FROM night n " NIGHT_ORDER,
                                  -1, &q, NULL) != SQLITE_OK)
        st = history_dberr(db, history, err);
    while (!st && sqlite3_step(q) == SQLITE_ROW) {
        tb_cell c[8];
        for (int i = 0; i < 8; i++) {
            if (sqlite3_column_type(q, i) == SQLITE_NULL)
                c[i] = (tb_cell){.kind = TB_CELL_NULL};
            else if (i == 4 || i == 5)
                c[i] = (tb_cell){.kind = TB_CELL_INT, .i = sqlite3_column_int64(q, i)};
            else
                c[i] = (tb_cell){.kind = TB_CELL_TEXT, .s = (const char *)sqlite3_column_text(q, i),
                                 .n = (size_t)sqlite3_column_bytes(q, i)};
        }
        st = s->row(s, c, err);
    }
    if (!st)
        st = s->finish(s, err);
    sqlite3_finalize(q);
    return st;
}

/*
 * The console table is written on out as it goes. CSV and JSON sinks write
 * files: the listing goes to a private temporary file first and is then
 * copied to out, so that an error never leaves half a listing there.
 */
tb_status tb_history_list(const char *history, unsigned format, FILE *out, tb_error *err)
{
    sqlite3 *db = NULL;
    tb_status st = history_open(history, &db, err);
    if (st)
        return st;
    spool sp = {0};
    tb_sink *s = NULL;
    if (format == TB_OUT_CSV || format == TB_OUT_JSON) {
        st = spool_open(&sp, "tracebook-list", "list", err);
        if (!st && format == TB_OUT_CSV)
            st = csv_sink_create(sp.path, &(csv_sink_options){.rows_per_file = SIZE_MAX}, &s, err);
        else if (!st)
            st = json_sink_create(sp.path, NULL, &s, err);
    } else {
        st = console_sink_create(out, &(console_options){.max_col_width = 60}, &s, err);
    }
    if (!st)
        st = list_rows(db, history, s, err);
    sink_destroy(s);
    sqlite3_close(db);
    tb_status sent = spool_close(&sp, out, !st, "the history list", err);
    return st ? st : sent;
}
