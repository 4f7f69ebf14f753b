/* SPDX-License-Identifier: MIT */
/*
 * analysis_db.c - torch_npu's analysis.db into TB_STEP_TRACE_TIME.
 *
 * torch_npu writes analysis.db beside its ascend_pytorch_profiler_<rank>.db
 * (export type db); its StepTraceTime table (formats.md §3) holds what
 * step_trace_time.csv holds in the text export, in µs:
 *   StepTraceTime(deviceId, step, computing, communication_not_overlapped,
 *     overlapped, communication, free, stage, bubble,
 *     communication_not_overlapped_and_exclude_receive, preparing)
 * Each row becomes one TB_STEP_TRACE_TIME row of the file's rank, values as
 * stored (step as text). Columns are read by name, with the camelCase
 * spellings as aliases; a missing column is NULL, other tables are not read.
 * A DB without StepTraceTime loads nothing, with a warning.
 *
 * The input is never modified: it is opened through sqlite_input.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest/analysis_db.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/msprof_db.h"
#include "db/ask.h"
#include "db/sqlite_input.h"


/* ---- import ------------------------------------------------------------------ */

/* TB_STEP_TRACE_TIME's columns after rankId, each with the source names that fill it. */
static const char *const columns[11][3] = {
    {"deviceId", "device_id", NULL},
    {"step", NULL, NULL},
    {"computing", NULL, NULL},
    {"communication_not_overlapped", "communicationNotOverlapped", NULL},
    {"overlapped", NULL, NULL},
    {"communication", NULL, NULL},
    {"free", NULL, NULL},
    {"stage", NULL, NULL},
    {"bubble", NULL, NULL},
    {"communication_not_overlapped_and_exclude_receive", "communicationNotOverlappedExcludeReceive", NULL},
    {"preparing", NULL, NULL},
};


tb_status analysis_db_import(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                             import_result *res, tb_error *err)
{
    (void)ids;
    sqlite_input s;
    tb_status st = msprof_db_open_input(path, "torch_npu analysis db", res, &s, err);
    if (st != TB_OK)
        return st;
    sqlite3_stmt *q = NULL;
    if (db_has_table(s.db, "main", "StepTraceTime", 0) <= 0) {
        if (opt->warn) {
            char msg[1200];
            snprintf(msg, sizeof msg, "%s: no StepTraceTime table: nothing loaded", path);
            opt->warn(opt->ctx, msg);
        }
        goto done;
    }
    /* one select item per destination column, NULL where the source has none */
    char sql[2048];
    size_t o = (size_t)snprintf(sql, sizeof sql, "SELECT ");
    for (int i = 0; i < 11; i++) {
        const char *src = NULL;
        for (int a = 0; a < 3 && columns[i][a] && !src; a++)
            if (db_has_column(s.db, NULL, "StepTraceTime", columns[i][a]) > 0)
                src = columns[i][a];
        o += (size_t)snprintf(sql + o, sizeof sql - o, "%s%s%s%s", i ? ", " : "", src ? "\"" : "NULL",
                              src ? src : "", src ? "\"" : "");
    }
    snprintf(sql + o, sizeof sql - o, " FROM StepTraceTime");
    if (sqlite3_prepare_v2(s.db, sql, -1, &q, NULL) != SQLITE_OK) {
        st = tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "cannot read table StepTraceTime: %s",
                         sqlite3_errmsg(s.db));
        goto done;
    }
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        tb_val v[12];
        v[0] = VINT(opt->rank);
        for (int i = 0; i < 11; i++) {
            int t = sqlite3_column_type(q, i);
            if (t == SQLITE_NULL)
                v[1 + i] = VNULL;
            else if (i == 1 || t == SQLITE_TEXT || t == SQLITE_BLOB) { /* step is text, whatever its storage */
                const char *text = (const char *)sqlite3_column_text(q, i);
                v[1 + i] = text ? VTEXT(text, (size_t)sqlite3_column_bytes(q, i)) : VNULL;
            } else if (t == SQLITE_INTEGER)
                v[1 + i] = VINT(sqlite3_column_int64(q, i));
            else
                v[1 + i] = VREAL(sqlite3_column_double(q, i));
        }
        res->events++;
        if (row_set_has(&opt->skip_rows, R_STEP_TRACE_TIME)) {
            res->dest[TB_DEST_BETTER_SOURCE]++;
            continue;
        }
        res->dest[TB_DEST_OTHER_TABLES]++;
        if (sink->row(sink->ctx, R_STEP_TRACE_TIME, v)) {
            st = row_sink_fail(sink, path, err);
            goto done;
        }
    }
    if (rc != SQLITE_DONE)
        st = tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "cannot read table StepTraceTime: %s",
                         sqlite3_errmsg(s.db));
done:
    sqlite3_finalize(q);
    sqlite_input_close(&s);
    return st;
}
