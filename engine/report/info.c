/* SPDX-License-Identifier: MIT */
/*
 * info.c - the `info` summary of a loaded DB: what was found (sources,
 * layers, devices, ranks, steps, time span), where every event went, row
 * counts per table and the warnings of the load. Reads the DB only.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "db/sqlite_input.h"
#include "session/session.h"
#include "tracebook/error.h"
#include "tracebook/report.h"
#include "tracebook/db.h"

/* The longest time span of a rank that info takes as one clock's (days). */
#define TB_INFO_MAX_SPAN_DAYS 30

static void section(FILE *f, const char *title)
{
    fprintf(f, "\n%s\n", title);
}

/* Prints every row of q as "  col1  col2 ...", with a header when asked. */
static int print_rows(sqlite3 *db, FILE *f, const char *sql, const char *empty)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return -1;
    int n = 0, cols = sqlite3_column_count(q);
    while (sqlite3_step(q) == SQLITE_ROW) {
        fputs(" ", f);
        for (int i = 0; i < cols; i++) {
            const char *v = (const char *)sqlite3_column_text(q, i);
            fprintf(f, " %s", v ? v : "-");
        }
        fputc('\n', f);
        n++;
    }
    sqlite3_finalize(q);
    if (n == 0 && empty)
        fprintf(f, "  %s\n", empty);
    return n;
}

/* What the user gave, and where the DB came from. */
static void title_of(tb_session *s, char *title, size_t cap)
{
    size_t n_in = 0, k = 0;
    const char *const *in = tb_session_inputs(s, &n_in);
    const char *path = tb_session_db_path(s);
    tb_session_source how = tb_session_source_of(s);
    if (how == TB_SOURCE_OWN_DB) {
        snprintf(title, cap, "%s", path); /* a DB that tracebook wrote, read as it is */
        return;
    }
    title[0] = 0;
    for (size_t i = 0; i < n_in && k < cap; i++)
        k += (size_t)snprintf(title + k, cap - k, "%s%s", i ? " " : "", in[i]);
    if (k < cap)
        snprintf(title + k, cap - k, " (DB %s, %s)", path,
                 how == TB_SOURCE_PROCESSES ? "loaded now by the MPI processes"
                 : how == TB_SOURCE_CACHED  ? "reused: inputs unchanged"
                                            : "loaded now");
}

tb_status tb_info_write(tb_session *s, FILE *f, tb_error *err)
{
    sqlite3 *db = session_db(s, err);
    if (!db)
        return err->code;
    const char *db_path = tb_session_db_path(s);
    char title[2 * 4096];
    title_of(s, title, sizeof title);
    sqlite3_stmt *probe;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM TB_SOURCE", -1, &probe, NULL);
    if (rc != SQLITE_OK) {
        if (rc == SQLITE_NOTADB)
            tb_error_at(err, TB_ERR_PARSE, db_path, 0, 0, -1, "not an SQLite DB");
        else
            tb_error_at(err, TB_ERR_PARSE, db_path, 0, 0, -1, "not a DB written by tracebook (no TB_SOURCE table)");
        return err->code;
    }
    sqlite3_finalize(probe);
    fprintf(f, "tracebook %s: %s\n", TB_VERSION, title);
    section(f, "Sources (id, rank, kind, bytes, events, skipped, path, note):");
    print_rows(db, f,
               "SELECT id, rankId, '[' || kind || ']', bytes, rowsRead, rowsSkipped, path, coalesce(note, '')"
               " FROM TB_SOURCE ORDER BY id",
               "none");
    section(f, "Ranks and devices (rank: devices):");
    print_rows(db, f,
               "SELECT r.rankId || ':', coalesce((SELECT group_concat(deviceId, ',') FROM RANK_DEVICE_MAP m"
               " WHERE m.rankId = r.rankId), '-') FROM TB_RANK r ORDER BY r.rankId",
               "none");
    section(f, "Devices (rank, id, name):");
    print_rows(db, f, "SELECT rankId, id, name FROM NPU_INFO ORDER BY rankId, id", "no device names in the input");
    section(f, "Layers (rank, pid, process name, layer, device):");
    print_rows(db, f,
               "SELECT rankId, pid, '\"' || coalesce(name, '') || '\"', coalesce(layer, '-'), coalesce(deviceId, '-')"
               " FROM TB_PROCESS ORDER BY rankId, coalesce(sortIndex, 1e18), pid",
               "none");
    section(f, "Time span (rank, start ns, end ns, duration ms, baseTime ns):");
    print_rows(db, f,
               "SELECT rankId, startTimeNs, endTimeNs, printf('%.3f', (endTimeNs - startTimeNs) / 1e6),"
               " coalesce(baseTimeNs, '-') FROM SESSION_TIME_INFO ORDER BY rankId",
               "no timed events");
    section(f, "Steps (rank, count, first, last):");
    print_rows(db, f, "SELECT rankId, count(*), min(id), max(id) FROM STEP_TIME GROUP BY rankId ORDER BY rankId",
               "no ProfilerStep#N steps");
    section(f, "Events per destination (source, destination, events):");
    print_rows(db, f, "SELECT sourceId, dest, events FROM TB_LOAD_COUNT ORDER BY sourceId, events DESC", "none");
    section(f, "Rows per table:");
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db,
                           "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                           " AND name NOT LIKE 'ENUM_%' AND name NOT LIKE 'TB_SHARD%' ORDER BY name",
                           -1, &q, NULL) == SQLITE_OK) {
        while (sqlite3_step(q) == SQLITE_ROW) {
            char sql[256];
            snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"", (const char *)sqlite3_column_text(q, 0));
            sqlite3_stmt *c;
            if (sqlite3_prepare_v2(db, sql, -1, &c, NULL) == SQLITE_OK && sqlite3_step(c) == SQLITE_ROW &&
                sqlite3_column_int64(c, 0) > 0)
                fprintf(f, "  %-26s %lld\n", (const char *)sqlite3_column_text(q, 0),
                        (long long)sqlite3_column_int64(c, 0));
            sqlite3_finalize(c);
        }
        sqlite3_finalize(q);
    }
    section(f, "Warnings:");
    int nw = print_rows(db, f, "SELECT message FROM TB_WARNING ORDER BY rowid", NULL);
    /* a rank whose rows span weeks mixes clocks (Unix time and time since
     * boot, or two machines' clocks): its overlaps and steps mean nothing */
    char sql[640];
    snprintf(sql, sizeof sql,
             "SELECT printf('rank %%d: time span of %%.1f days (%%lld to %%lld ns), more than %d: do its inputs mix"
             " clocks (Unix time and time since boot, or two machines)?', rankId,"
             " (endTimeNs - startTimeNs) / 86400e9, startTimeNs, endTimeNs)"
             " FROM SESSION_TIME_INFO WHERE endTimeNs - startTimeNs > %d * 86400000000000 ORDER BY rankId",
             TB_INFO_MAX_SPAN_DAYS, TB_INFO_MAX_SPAN_DAYS);
    int ns = print_rows(db, f, sql, NULL);
    if (nw <= 0 && ns <= 0)
        fprintf(f, "  none\n");
    return TB_OK;
}
