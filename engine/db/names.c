/* SPDX-License-Identifier: MIT */
/*
 * names.c - a DB's default name and whether tracebook wrote it.
 *
 * Export commands name the DB as msprof does, `msprof_<timestamp>.db`, with
 * the timestamp taken from the data (the session start), so the same inputs
 * give the same name. tb_db_is_own() tells a DB that tracebook wrote (it
 * has TB_SOURCE) from any other SQLite file, looking without writing, and
 * tb_db_is_shard() a shard DB (`export db --shard`, docs/scale-out.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "db/open.h"
#include "db/sqlite_input.h"
#include "tracebook/db.h"

tb_status tb_db_start_time(const char *db_path, int64_t *unix_s, tb_error *err)
{
    sqlite3 *db;
    if (db_open(db_path, SQLITE_OPEN_READONLY, &db) != SQLITE_OK) {
        sqlite3_close(db);
        return tb_error_at(err, TB_ERR_DB, db_path, 0, 0, -1, "cannot open the DB");
    }
    *unix_s = db_start_time(db);
    sqlite3_close(db);
    return TB_OK;
}

int64_t db_start_time(sqlite3 *db)
{
    sqlite3_stmt *q;
    int64_t ns = 0;
    /* session start: baseTime + start (Kineto), else the earliest event when it is Unix time, else newest mtime */
    if (sqlite3_prepare_v2(db,
                           "SELECT min(CASE WHEN baseTimeNs IS NOT NULL AND startTimeNs < 946684800000000000"
                           " THEN baseTimeNs + startTimeNs"
                           " WHEN startTimeNs > 946684800000000000 THEN startTimeNs END) FROM SESSION_TIME_INFO",
                           -1, &q, NULL) == SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL)
            ns = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
    }
    if (ns == 0 && sqlite3_prepare_v2(db, "SELECT max(mtimeNs) FROM TB_SOURCE", -1, &q, NULL) == SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW)
            ns = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
    }
    return ns / 1000000000LL;
}

tb_status tb_db_default_name(const char *db_path, char *out, size_t outlen, tb_error *err)
{
    int64_t s;
    tb_status st = tb_db_start_time(db_path, &s, err);
    if (st)
        return st;
    time_t t = (time_t)s;
    struct tm tm;
    gmtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm);
    if ((size_t)snprintf(out, outlen, "msprof_%s.db", stamp) >= outlen)
        return tb_error_set(err, TB_ERR_USAGE, "output path too long");
    return TB_OK;
}

int tb_db_is_own(const char *db_path)
{
    struct stat st;
    if (stat(db_path, &st) != 0)
        return 1; /* let tb_info_write name the problem */
    /* immutable: looking must not create -shm/-wal files beside someone else's DB */
    char uri[8192];
    sqlite_input_uri(db_path, uri, sizeof uri);
    sqlite3 *db;
    int own = 0;
    if (db_open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, &db) == SQLITE_OK) {
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(db, "SELECT 1 FROM TB_SOURCE", -1, &q, NULL) == SQLITE_OK) {
            own = 1;
            sqlite3_finalize(q);
        }
    }
    sqlite3_close(db);
    return own;
}

int tb_db_is_own_file(const char *db_path)
{
    struct stat st;
    return stat(db_path, &st) == 0 && S_ISREG(st.st_mode) && tb_db_is_own(db_path);
}

int tb_db_is_shard(const char *db_path)
{
    struct stat st;
    if (stat(db_path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    char uri[8192];
    sqlite_input_uri(db_path, uri, sizeof uri);
    sqlite3 *db;
    int shard = 0;
    if (db_open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, &db) == SQLITE_OK) {
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(db, "SELECT 1 FROM TB_SHARD", -1, &q, NULL) == SQLITE_OK) {
            shard = 1;
            sqlite3_finalize(q);
        }
    }
    sqlite3_close(db);
    return shard;
}

int tb_db_shard_folder(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *de;
    int found = 0;
    while (!found && (de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (strncmp(de->d_name, "shard_", 6) != 0 || n < 4 || strcmp(de->d_name + n - 3, ".db") != 0)
            continue;
        char db[8192];
        snprintf(db, sizeof db, "%s/%s", path, de->d_name);
        found = tb_db_is_shard(db);
    }
    closedir(d);
    return found;
}

tb_status tb_db_check_target(const char *db_path, const char *target, tb_error *err)
{
    struct stat ts;
    if (stat(target, &ts) != 0)
        return TB_OK; /* nothing there to replace */
    char uri[8192];
    sqlite_input_uri(db_path, uri, sizeof uri);
    sqlite3 *db;
    tb_status st = TB_OK;
    if (db_open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, &db) == SQLITE_OK) {
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(db, "SELECT path FROM TB_SOURCE WHERE kind NOT IN ('ignored', 'skipped')", -1, &q,
                               NULL) == SQLITE_OK) {
            while (st == TB_OK && sqlite3_step(q) == SQLITE_ROW) {
                const char *p = (const char *)sqlite3_column_text(q, 0);
                struct stat is;
                if (p && stat(p, &is) == 0 && is.st_dev == ts.st_dev && is.st_ino == ts.st_ino)
                    st = tb_error_at(err, TB_ERR_USAGE, target, 0, 0, -1,
                                     "the output would replace the input '%s': write it elsewhere (-o)", p);
            }
            sqlite3_finalize(q);
        }
    }
    sqlite3_close(db);
    return st;
}
