/* SPDX-License-Identifier: MIT */
/*
 * scale.c - what a scaled-out run records about its processes.
 *
 * A shard DB (`export db --shard I/N`) holds its own figures in TB_SHARD;
 * scale_record_shard() adds them to the tracebook_run.json beside it, where the
 * N shards of a load, written by N jobs at any time, each keep their entry
 * (under the folder's lock, replaced atomically). A DB merged from shards
 * holds every shard's figures in TB_SHARDS, and scale_processes() gives them
 * to the metadata file of the run over it (report, export summary, compare).
 * The shard DBs are listed under "db", never under "files": files a
 * tracebook_run.json lists are outputs, which a scan passes over, and the
 * shards are the inputs of the run that follows.
 */
#define _POSIX_C_SOURCE 200809L
#include "db/open.h"
#include "scale/scale.h"

#include <jansson.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"
#include "query/file_ids.h"
#include "tracebook/error.h"
#include "tracebook/query.h"
#include "tracebook/version.h"

/* The ranks column ("[0,5,9]") as a JSON array; an empty one when unreadable. */
static json_t *ranks_of(const char *text)
{
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_is_array(v)) {
        json_decref(v);
        v = json_array();
    }
    return v;
}

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

json_t *scale_processes(sqlite3 *db)
{
    sqlite3_stmt *q;
    json_t *list = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT shardIndex, shardCount, path, status, ranks, inputBytes, wallSeconds, peakRssBytes,"
                           " host FROM TB_SHARDS ORDER BY shardIndex",
                           -1, &q, NULL) == SQLITE_OK) {
        list = json_array();
        while (sqlite3_step(q) == SQLITE_ROW) {
            json_t *p = json_object();
            json_object_set_new(p, "shard", json_integer(sqlite3_column_int64(q, 0)));
            json_object_set_new(p, "of", json_integer(sqlite3_column_int64(q, 1)));
            const char *path = (const char *)sqlite3_column_text(q, 2);
            json_object_set_new(p, "db", path ? json_string(path) : json_null());
            json_object_set_new(p, "status", json_string((const char *)sqlite3_column_text(q, 3)));
            if (sqlite3_column_type(q, 4) != SQLITE_NULL) {
                json_object_set_new(p, "ranks", ranks_of((const char *)sqlite3_column_text(q, 4)));
                json_object_set_new(p, "input_bytes", json_integer(sqlite3_column_int64(q, 5)));
                json_object_set_new(p, "wall_seconds", json_real(sqlite3_column_double(q, 6)));
                json_object_set_new(p, "peak_rss_bytes", json_integer(sqlite3_column_int64(q, 7)));
                const char *host = (const char *)sqlite3_column_text(q, 8);
                json_object_set_new(p, "host", json_string(host ? host : ""));
            }
            json_array_append_new(list, p);
        }
        sqlite3_finalize(q);
    }
    /* a run of rank-scope reports over the shards: the rows each one gave (partial.c) */
    if (list && sqlite3_prepare_v2(db, "SELECT shardIndex, bytes FROM TB_PART", -1, &q, NULL) == SQLITE_OK) {
        while (sqlite3_step(q) == SQLITE_ROW) {
            size_t i;
            json_t *p;
            json_array_foreach(list, i, p)
                if (json_integer_value(json_object_get(p, "shard")) == sqlite3_column_int64(q, 0))
                    json_object_set_new(p, "partial_bytes", json_integer(sqlite3_column_int64(q, 1)));
        }
        sqlite3_finalize(q);
    }
    return list;
}

char *scale_inputs(sqlite3 *db)
{
    sqlite3_stmt *q;
    char *in = NULL;
    if (sqlite3_prepare_v2(db, "SELECT inputs FROM TB_SHARDS WHERE inputs IS NOT NULL LIMIT 1", -1, &q, NULL) ==
        SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW)
            in = strdup((const char *)sqlite3_column_text(q, 0));
        sqlite3_finalize(q);
    }
    return in;
}

/* The shard's TB_SHARD row as a "processes" entry, and its count and inputs. */
tb_status scale_shard_entry(const char *path, json_t **entry, int64_t *count, char **inputs, tb_error *err)
{
    sqlite3 *db;
    if (db_open(path, SQLITE_OPEN_READONLY, &db) != SQLITE_OK) {
        sqlite3_close(db);
        return tb_error_at(err, TB_ERR_DB, path, 0, 0, -1, "cannot open the DB");
    }
    sqlite3_stmt *q;
    tb_status st = TB_OK;
    if (sqlite3_prepare_v2(db,
                           "SELECT shardIndex, shardCount, ranks, inputBytes, wallSeconds, peakRssBytes, host, inputs"
                           " FROM TB_SHARD",
                           -1, &q, NULL) != SQLITE_OK || sqlite3_step(q) != SQLITE_ROW) {
        st = tb_error_at(err, TB_ERR_DB, path, 0, 0, -1, "not a shard DB (no TB_SHARD row)");
    } else {
        json_t *p = json_object();
        json_object_set_new(p, "shard", json_integer(sqlite3_column_int64(q, 0)));
        json_object_set_new(p, "of", json_integer(sqlite3_column_int64(q, 1)));
        json_object_set_new(p, "db", json_string(base_of(path)));
        json_object_set_new(p, "ranks", ranks_of((const char *)sqlite3_column_text(q, 2)));
        json_object_set_new(p, "input_bytes", json_integer(sqlite3_column_int64(q, 3)));
        json_object_set_new(p, "wall_seconds", json_real(sqlite3_column_double(q, 4)));
        json_object_set_new(p, "peak_rss_bytes", json_integer(sqlite3_column_int64(q, 5)));
        const char *host = (const char *)sqlite3_column_text(q, 6);
        json_object_set_new(p, "host", json_string(host ? host : ""));
        const char *in = (const char *)sqlite3_column_text(q, 7);
        *count = sqlite3_column_int64(q, 1);
        *inputs = strdup(in ? in : "");
        *entry = p;
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    return st;
}

