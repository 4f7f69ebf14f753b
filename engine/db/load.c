/* SPDX-License-Identifier: MIT */
/*
 * load.c - tb_load(): inputs -> one unified DB, atomically.
 *
 * Each trace file found under the -dir inputs is one rank. Files are
 * streamed through the trace importer into a DB written under a temporary
 * name beside the destination; the session tables (SESSION_TIME_INFO,
 * RANK_DEVICE_MAP, META_DATA, TB_SOURCE, ...) are written once all files are
 * in, and only a complete DB is renamed into place. Any failure removes the
 * temporary file, so a reader never sees half a DB and an older DB of the
 * same name survives.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../ingest/analysis_db.h"
#include "../ingest/detect.h"
#include "../ingest/msprof_db.h"
#include "../ingest/npu_json.h"
#include "../ingest/npu_text.h"
#include "../ingest/topsprof_import.h"
#include "../ingest/trace_import.h"
#include "dbw.h"
#include "tracebook/tracebook.h"

static const char *const dest_names[TB_DEST_COUNT] = {
    [TB_DEST_TASK] = "TASK", [TB_DEST_COMPUTE_TASK_INFO] = "COMPUTE_TASK_INFO",
    [TB_DEST_COMMUNICATION_OP] = "COMMUNICATION_OP", [TB_DEST_COMMUNICATION_TASK_INFO] = "COMMUNICATION_TASK_INFO",
    [TB_DEST_MEMCPY_INFO] = "MEMCPY_INFO", [TB_DEST_CANN_API] = "CANN_API", [TB_DEST_PYTORCH_API] = "PYTORCH_API",
    [TB_DEST_STEP_TIME] = "STEP_TIME", [TB_DEST_OVERLAP_ANALYSIS] = "OVERLAP_ANALYSIS",
    [TB_DEST_MSTX_EVENTS] = "MSTX_EVENTS", [TB_DEST_TB_FLOW] = "TB_FLOW (flow ends)",
    [TB_DEST_TB_COUNTER] = "TB_COUNTER", [TB_DEST_TB_EVENT] = "TB_EVENT", [TB_DEST_METADATA] = "metadata",
    [TB_DEST_SKIPPED_PYTHON] = "skipped python_function", [TB_DEST_EMPTY] = "empty {} events",
    [TB_DEST_UNKNOWN_PHASE] = "unknown phase (TB_EVENT)", [TB_DEST_OTHER_TABLES] = "other tables",
    [TB_DEST_BETTER_SOURCE] = "skipped: table filled by a better source",
    [TB_DEST_BAD_ROWS] = "skipped: rows with a wrong field count",
};

const char *tb_dest_name(int dest)
{
    return dest >= 0 && dest < TB_DEST_COUNT ? dest_names[dest] : "?";
}

/* ---- finding inputs ---------------------------------------------------------- */

void tb_paths_free(char **paths)
{
    if (!paths)
        return;
    for (char **p = paths; *p; p++)
        free(*p);
    free(paths);
}

char **tb_find_traces(const char *path, tb_error *err)
{
    input_set set;
    const char *in[] = {path};
    if (detect_inputs(in, 1, &set, err) != TB_OK)
        return NULL;
    size_t n = 0;
    for (size_t g = 0; g < set.n; g++)
        n += set.groups[g].n;
    char **v = calloc(n + 1, sizeof *v);
    if (!v) {
        input_set_free(&set);
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    size_t k = 0;
    for (size_t g = 0; g < set.n; g++)
        for (size_t i = 0; i < set.groups[g].n; i++) {
            v[k++] = set.groups[g].files[i].path;
            set.groups[g].files[i].path = NULL;
        }
    input_set_free(&set);
    return v;
}

/* ---- loading ---------------------------------------------------------------- */

typedef struct src_info {
    char *path;
    int kind;        /* IN_* */
    size_t group;    /* rank group index */
    int cluster;     /* from the cluster group: belongs to no rank */
    int rank;
    int64_t bytes, mtime_ns;
    trace_import_result r;
} src_info;

/* Warnings of a load: shown through the caller's callback as they come, and
 * kept for TB_WARNING (written with the other bookkeeping rows). */
typedef struct warn_log {
    const tb_load_options *opt;
    tb_load_result *res;
    int64_t source;   /* TB_SOURCE id of the file being read */
    int64_t *src_ids;
    char **msgs;
    size_t n, cap;
} warn_log;

static void warn_add(warn_log *wl, const char *msg)
{
    if (wl->opt->warn)
        wl->opt->warn(wl->opt->ctx, msg);
    wl->res->warnings++;
    if (wl->n == wl->cap) {
        size_t nc = wl->cap ? wl->cap * 2 : 16;
        char **nm = realloc(wl->msgs, nc * sizeof *nm);
        int64_t *ns = nm ? realloc(wl->src_ids, nc * sizeof *ns) : NULL;
        if (nm)
            wl->msgs = nm;
        if (!nm || !ns)
            return; /* shown, not kept: out of memory */
        wl->src_ids = ns;
        wl->cap = nc;
    }
    if ((wl->msgs[wl->n] = strdup(msg)) != NULL)
        wl->src_ids[wl->n++] = wl->source;
}

static void warnf(warn_log *wl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warnf(warn_log *wl, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    warn_add(wl, msg);
}

/* The importers' callbacks: warnings into the log, progress to the caller. */
static void import_warn(void *ctx, const char *msg)
{
    warn_add(ctx, msg);
}

static void import_progress(void *ctx, const char *file, uint64_t done, uint64_t total)
{
    warn_log *wl = ctx;
    if (wl->opt->progress)
        wl->opt->progress(wl->opt->ctx, file, done, total);
}

static void warn_log_free(warn_log *wl)
{
    for (size_t i = 0; i < wl->n; i++)
        free(wl->msgs[i]);
    free(wl->msgs);
    free(wl->src_ids);
}

static tb_status write_warnings(dbw *w, const warn_log *wl, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT INTO TB_WARNING(sourceId, message) VALUES(?, ?)", -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
    for (size_t i = 0; i < wl->n; i++) {
        sqlite3_bind_int64(st, 1, wl->src_ids[i]);
        sqlite3_bind_text(st, 2, wl->msgs[i], -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) {
            sqlite3_finalize(st);
            return tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return TB_OK;
}

/* Binds TB_SOURCE's input and relPath: the -dir the file was found under and
 * the file's path relative to it (its name when the -dir is the file). */
static void bind_relative(sqlite3_stmt *st, const tb_load_options *opt, const char *path)
{
    for (size_t k = 0; k < opt->n_inputs; k++) {
        const char *in = opt->inputs[k];
        size_t n = strlen(in);
        while (n > 1 && in[n - 1] == '/')
            n--;
        if (strncmp(path, in, n) == 0 && (path[n] == '/' || path[n] == 0)) {
            const char *rel = path[n] == '/' ? path + n + 1 : strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
            sqlite3_bind_text(st, 10, in, (int)n, SQLITE_STATIC);
            sqlite3_bind_text(st, 11, rel, -1, SQLITE_STATIC);
            return;
        }
    }
    sqlite3_bind_null(st, 10);
    sqlite3_bind_text(st, 11, path, -1, SQLITE_STATIC);
}

static tb_status bookkeeping(dbw *w, src_info *src, size_t nsrc, const input_file *ignored, size_t n_ignored,
                             const tb_load_options *opt, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *s_src = NULL, *s_cnt = NULL, *s_rdm = NULL, *s_rank = NULL, *s_meta = NULL, *s_sess = NULL;
    tb_status st = TB_ERR_DB;
    if (sqlite3_prepare_v2(db, "INSERT INTO TB_SOURCE VALUES(?,?,?,?,?,?,?,?,?,?,?)", -1, &s_src, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO TB_LOAD_COUNT VALUES(?,?,?)", -1, &s_cnt, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO RANK_DEVICE_MAP VALUES(?,?)", -1, &s_rdm, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO TB_RANK VALUES(?,NULL,?)", -1, &s_rank, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO META_DATA VALUES(?,?)", -1, &s_meta, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO SESSION_TIME_INFO VALUES(?,?,?,?)", -1, &s_sess, NULL)) {
        tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
        goto done;
    }
    for (size_t i = 0; i < nsrc; i++) {
        src_info *s = &src[i];
        uint64_t skipped = s->r.dest[TB_DEST_SKIPPED_PYTHON] + s->r.dest[TB_DEST_EMPTY];
        char note[160];
        if (s->r.truncated)
            snprintf(note, sizeof note, "cut short at byte %lld", (long long)s->r.stop_offset);
        else
            note[0] = 0;
        sqlite3_bind_int64(s_src, 1, (int64_t)i + 1);
        if (s->cluster)
            sqlite3_bind_null(s_src, 2);
        else
            sqlite3_bind_int(s_src, 2, s->rank);
        sqlite3_bind_text(s_src, 3, s->path, -1, SQLITE_STATIC);
        sqlite3_bind_text(s_src, 4, s->r.kind, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s_src, 5, s->bytes);
        sqlite3_bind_int64(s_src, 6, s->mtime_ns);
        sqlite3_bind_int64(s_src, 7, (int64_t)s->r.events);
        sqlite3_bind_int64(s_src, 8, (int64_t)skipped);
        if (note[0])
            sqlite3_bind_text(s_src, 9, note, -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(s_src, 9);
        bind_relative(s_src, opt, s->path);
        if (sqlite3_step(s_src) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(s_src);
        for (int d = 0; d < TB_DEST_COUNT; d++) {
            if (!s->r.dest[d])
                continue;
            sqlite3_bind_int64(s_cnt, 1, (int64_t)i + 1);
            sqlite3_bind_text(s_cnt, 2, tb_dest_name(d), -1, SQLITE_STATIC);
            sqlite3_bind_int64(s_cnt, 3, (int64_t)s->r.dest[d]);
            if (sqlite3_step(s_cnt) != SQLITE_DONE)
                goto dberr;
            sqlite3_reset(s_cnt);
        }
        /* per rank (the group's last file closes it): devices, rank row, time span */
        if ((i + 1 < nsrc && src[i + 1].group == s->group) || s->cluster)
            continue;
        uint64_t devices = 0;
        int64_t t0 = 0, t1 = 0, base = 0;
        int have_t = 0, have_base = 0;
        size_t first = i;
        while (first > 0 && src[first - 1].group == s->group)
            first--;
        for (size_t k = first; k <= i; k++) {
            const trace_import_result *r = &src[k].r;
            devices |= r->devices_seen;
            if (r->has_times) {
                if (!have_t || r->min_ns < t0)
                    t0 = r->min_ns;
                if (!have_t || r->max_ns > t1)
                    t1 = r->max_ns;
                have_t = 1;
            }
            if (r->has_base_time && !have_base) {
                base = r->base_time_ns;
                have_base = 1;
            }
        }
        for (int dev = 0; dev < 64; dev++) {
            if (!(devices & ((uint64_t)1 << dev)))
                continue;
            sqlite3_bind_int(s_rdm, 1, s->rank);
            sqlite3_bind_int(s_rdm, 2, dev);
            if (sqlite3_step(s_rdm) != SQLITE_DONE)
                goto dberr;
            sqlite3_reset(s_rdm);
        }
        sqlite3_bind_int(s_rank, 1, s->rank);
        sqlite3_bind_text(s_rank, 2, s->path, -1, SQLITE_STATIC);
        if (sqlite3_step(s_rank) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(s_rank);
        if (have_t) {
            /* one row per rank: ranks may run on different clocks */
            sqlite3_bind_int64(s_sess, 1, t0);
            sqlite3_bind_int64(s_sess, 2, t1);
            if (have_base)
                sqlite3_bind_int64(s_sess, 3, base);
            else
                sqlite3_bind_null(s_sess, 3);
            sqlite3_bind_int(s_sess, 4, s->rank);
            if (sqlite3_step(s_sess) != SQLITE_DONE)
                goto dberr;
            sqlite3_reset(s_sess);
        }
    }
    /* files seen but not read: listed, so `info` can say what was left out */
    for (size_t i = 0; i < n_ignored; i++) {
        struct stat sb;
        int64_t bytes = 0, mtime = 0;
        if (stat(ignored[i].path, &sb) == 0) {
            bytes = (int64_t)sb.st_size;
            mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
        }
        sqlite3_bind_int64(s_src, 1, (int64_t)(nsrc + i) + 1);
        sqlite3_bind_null(s_src, 2);
        sqlite3_bind_text(s_src, 3, ignored[i].path, -1, SQLITE_STATIC);
        sqlite3_bind_text(s_src, 4, "ignored", -1, SQLITE_STATIC);
        sqlite3_bind_int64(s_src, 5, bytes);
        sqlite3_bind_int64(s_src, 6, mtime);
        sqlite3_bind_int64(s_src, 7, 0);
        sqlite3_bind_int64(s_src, 8, 0);
        sqlite3_bind_text(s_src, 9, "not a format tracebook reads", -1, SQLITE_STATIC);
        bind_relative(s_src, opt, ignored[i].path);
        if (sqlite3_step(s_src) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(s_src);
    }
    static const char *const meta[][2] = {
        {"SCHEMA_VERSION", "1.2.0"}, {"SCHEMA_VERSION_MAJOR", "1"}, {"SCHEMA_VERSION_MINOR", "2"},
        {"SCHEMA_VERSION_MICRO", "0"}, {"TRACEBOOK_VERSION", TB_VERSION}, {"TRACEBOOK_SCHEMA", "1"},
    };
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++) {
        sqlite3_bind_text(s_meta, 1, meta[i][0], -1, SQLITE_STATIC);
        sqlite3_bind_text(s_meta, 2, meta[i][1], -1, SQLITE_STATIC);
        if (sqlite3_step(s_meta) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(s_meta);
    }
    st = TB_OK;
    goto done;
dberr:
    tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
done:
    sqlite3_finalize(s_src);
    sqlite3_finalize(s_cnt);
    sqlite3_finalize(s_rdm);
    sqlite3_finalize(s_rank);
    sqlite3_finalize(s_meta);
    sqlite3_finalize(s_sess);
    return st;
}

/*
 * Binds HostToDevice flows to the slices at their ends: the finish encloses a
 * device task, whose connectionId becomes the flow's (older torch_npu flow ids
 * encode it as (id << 32) | 0xFFFFFFFF, so the id itself is not used), and the
 * start encloses a CANN API slice, which takes that connectionId when its own
 * args carried none. Temporary indexes keep each lookup logarithmic, and
 * each half runs only when some row needs it.
 */
static const char bind_h2d_flows_sql[] =
    "CREATE INDEX tb_tmp_task_pid ON TASK(globalPid, startNs);"
    "CREATE TEMP TABLE h2d AS"
    " SELECT f.rowid AS frow, f.rankId AS rankId, ((f.fromPid << 32) | (f.fromTid & 4294967295)) AS gtid,"
    "  f.fromNs AS fromNs,"
    "  (SELECT t.connectionId FROM TASK t WHERE t.startNs <= f.toNs AND t.endNs >= f.toNs"
    "    AND t.globalPid = f.toPid AND t.rankId = f.rankId ORDER BY t.startNs DESC LIMIT 1) AS conn"
    " FROM TB_FLOW f WHERE f.cat = (SELECT id FROM STRING_IDS WHERE value = 'HostToDevice')"
    "  AND f.fromNs IS NOT NULL AND f.toNs IS NOT NULL"
    "  AND (f.connectionId IS NULL OR f.connectionId >= 4294967296);"
    "UPDATE TB_FLOW SET connectionId = h.conn FROM h2d h WHERE TB_FLOW.rowid = h.frow AND h.conn IS NOT NULL;"
    "DROP INDEX tb_tmp_task_pid;";

static const char bind_h2d_api_sql[] =
    "CREATE INDEX tb_tmp_cann_tid ON CANN_API(globalTid, startNs);"
    "CREATE TEMP TABLE h2d_api AS"
    " SELECT (SELECT c.rowid FROM CANN_API c WHERE c.globalTid = ((f.fromPid << 32) | (f.fromTid & 4294967295))"
    "   AND c.startNs <= f.fromNs AND c.endNs >= f.fromNs AND c.rankId = f.rankId"
    "   ORDER BY c.startNs DESC LIMIT 1) AS crow, f.connectionId AS conn"
    " FROM TB_FLOW f WHERE f.cat = (SELECT id FROM STRING_IDS WHERE value = 'HostToDevice')"
    "  AND f.fromNs IS NOT NULL AND f.connectionId IS NOT NULL;"
    "UPDATE CANN_API SET connectionId = b.conn FROM h2d_api b"
    " WHERE CANN_API.rowid = b.crow AND CANN_API.connectionId IS NULL;"
    "DROP INDEX tb_tmp_cann_tid; DROP TABLE h2d_api;";

/* 1 when the query's single value is non-zero. */
static int sql_true(dbw *w, const char *sql)
{
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *q;
    int r = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
        r = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
    }
    return r;
}

/* Runs the binding only where it has work: flow ids that are not connection
 * ids themselves, API slices without a connection id. */
static tb_status bind_h2d(dbw *w, tb_error *err)
{
    static const char h2d[] = "(SELECT id FROM STRING_IDS WHERE value = 'HostToDevice')";
    char q[512];
    snprintf(q, sizeof q,
             "SELECT EXISTS (SELECT 1 FROM TB_FLOW WHERE cat = %s AND toNs IS NOT NULL"
             " AND (connectionId IS NULL OR connectionId >= 4294967296))",
             h2d);
    tb_status st = TB_OK;
    if (sql_true(w, q))
        st = dbw_exec(w, bind_h2d_flows_sql, err);
    if (st == TB_OK && sql_true(w, "SELECT EXISTS (SELECT 1 FROM CANN_API WHERE connectionId IS NULL)")) {
        snprintf(q, sizeof q, "SELECT EXISTS (SELECT 1 FROM TB_FLOW WHERE cat = %s)", h2d);
        if (sql_true(w, q))
            st = dbw_exec(w, bind_h2d_api_sql, err);
    }
    return st;
}

/*
 * The rank of each group: profiler_info_N.json, else what a file of the group
 * says (distributedInfo.rank, RANK_DEVICE_MAP), else the group's order. Ranks
 * named by the inputs win only when every group names one and no two agree;
 * rows are then renumbered through negative ids so no two groups ever share a
 * rank mid-way.
 */
static tb_status apply_ranks(dbw *w, src_info *src, size_t nsrc, const int64_t *hint, size_t ngroups,
                             tb_error *err)
{
    if (ngroups == 0)
        return TB_OK;
    int64_t *claim = malloc(ngroups * sizeof *claim);
    if (!claim)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (size_t g = 0; g < ngroups; g++)
        claim[g] = hint[g];
    for (size_t i = 0; i < nsrc; i++)
        if (!src[i].cluster && claim[src[i].rank] < 0 && src[i].r.trace_rank >= 0 && src[i].r.trace_rank <= INT_MAX)
            claim[src[i].rank] = src[i].r.trace_rank;
    int usable = 1, changed = 0;
    for (size_t g = 0; g < ngroups && usable; g++) {
        if (claim[g] < 0)
            usable = 0;
        for (size_t h = 0; h < g && usable; h++)
            if (claim[h] == claim[g])
                usable = 0;
        changed |= claim[g] != (int64_t)g;
    }
    tb_status st = TB_OK;
    if (usable && changed) {
        sqlite3 *db = dbw_db(w);
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(db,
                               "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c"
                               " WHERE m.type = 'table' AND c.name = 'rankId'",
                               -1, &q, NULL) != SQLITE_OK) {
            free(claim);
            return tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
        }
        char **tables = NULL;
        size_t nt = 0;
        while (sqlite3_step(q) == SQLITE_ROW) {
            char **nv = realloc(tables, (nt + 1) * sizeof *nv);
            if (!nv)
                break;
            tables = nv;
            tables[nt] = strdup((const char *)sqlite3_column_text(q, 0));
            if (tables[nt])
                nt++;
        }
        sqlite3_finalize(q);
        for (size_t t = 0; t < nt && st == TB_OK; t++) {
            for (int pass = 0; pass < 2 && st == TB_OK; pass++) {
                for (size_t g = 0; g < ngroups && st == TB_OK; g++) {
                    char sql[256];
                    long long from = pass == 0 ? (long long)g : -1LL - (long long)g;
                    long long to = pass == 0 ? -1LL - (long long)g : (long long)claim[g];
                    snprintf(sql, sizeof sql, "UPDATE \"%s\" SET rankId = %lld WHERE rankId = %lld", tables[t], to,
                             from);
                    st = dbw_exec(w, sql, err);
                }
            }
        }
        for (size_t t = 0; t < nt; t++)
            free(tables[t]);
        free(tables);
        if (st == TB_OK)
            for (size_t i = 0; i < nsrc; i++)
                if (!src[i].cluster)
                    src[i].rank = (int)claim[src[i].rank];
    }
    free(claim);
    return st;
}

/* Provisional rankId of rows from cluster-level files; NULL once loaded. */
#define TB_CLUSTER_RANK (-1000000)

/* Rows of cluster-level files belong to no rank unless they name one. */
static tb_status clear_cluster_rank(dbw *w, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db,
                           "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c"
                           " WHERE m.type = 'table' AND c.name = 'rankId'",
                           -1, &q, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
    char sql[64][160];
    int n = 0;
    while (n < 64 && sqlite3_step(q) == SQLITE_ROW)
        snprintf(sql[n++], sizeof sql[0], "UPDATE \"%.100s\" SET rankId = NULL WHERE rankId = %d",
                 (const char *)sqlite3_column_text(q, 0), TB_CLUSTER_RANK);
    sqlite3_finalize(q);
    tb_status st = TB_OK;
    for (int i = 0; i < n && st == TB_OK; i++)
        st = dbw_exec(w, sql[i], err);
    return st;
}

/* Which destination counts go with which row tables (for precedence). */
static const struct {
    int dest;
    uint64_t rows;
} dest_rows[] = {
    {TB_DEST_TASK, ROWBIT(R_TASK)},
    {TB_DEST_COMPUTE_TASK_INFO, ROWBIT(R_COMPUTE_TASK_INFO) | ROWBIT(R_FULL_COMPUTE_TASK_INFO)},
    {TB_DEST_MEMCPY_INFO, ROWBIT(R_MEMCPY_INFO)},
    {TB_DEST_COMMUNICATION_TASK_INFO, ROWBIT(R_COMMUNICATION_TASK_INFO) | ROWBIT(R_FULL_COMMUNICATION_TASK_INFO)},
    {TB_DEST_COMMUNICATION_OP, ROWBIT(R_COMMUNICATION_OP) | ROWBIT(R_FULL_COMMUNICATION_OP)},
    {TB_DEST_CANN_API, ROWBIT(R_CANN_API)},
    {TB_DEST_PYTORCH_API, ROWBIT(R_PYTORCH_API) | ROWBIT(R_FULL_PYTORCH_API)},
    {TB_DEST_STEP_TIME, ROWBIT(R_STEP_TIME)},
    {TB_DEST_OVERLAP_ANALYSIS, ROWBIT(R_OVERLAP_ANALYSIS)},
    {TB_DEST_MSTX_EVENTS, ROWBIT(R_MSTX_EVENTS) | ROWBIT(R_FULL_MSTX_EVENTS)},
};

/* Row tables a source filled, which later sources of the same rank skip.
 * Device tasks go together with the tables that describe them. */
static uint64_t filled_mask(const trace_import_result *r)
{
    uint64_t m = 0;
    for (size_t i = 0; i < sizeof dest_rows / sizeof dest_rows[0]; i++)
        if (r->dest[dest_rows[i].dest])
            m |= dest_rows[i].rows;
    m |= r->rows_filled & ~(ROWBIT(R_FLOW) | ROWBIT(R_FLOW_END) | ROWBIT(R_EVENT) | ROWBIT(R_COUNTER) |
                            ROWBIT(R_PROCESS) | ROWBIT(R_THREAD));
    if (m & ROWBIT(R_TASK))
        m |= ROWBIT(R_COMPUTE_TASK_INFO) | ROWBIT(R_FULL_COMPUTE_TASK_INFO) | ROWBIT(R_MEMCPY_INFO) |
             ROWBIT(R_COMMUNICATION_TASK_INFO) | ROWBIT(R_FULL_COMMUNICATION_TASK_INFO);
    return m;
}

/* Counts of events whose table was skipped move to the "better source" counter. */
static void move_skipped(trace_import_result *r, uint64_t skipped)
{
    for (size_t i = 0; i < sizeof dest_rows / sizeof dest_rows[0]; i++) {
        int d = dest_rows[i].dest;
        if (!(dest_rows[i].rows & skipped) || !r->dest[d])
            continue;
        /* an event counts once: the tables that only describe a task or an API
         * call (its info rows, its step) are not events of their own */
        int secondary = d == TB_DEST_COMPUTE_TASK_INFO || d == TB_DEST_MEMCPY_INFO ||
                        d == TB_DEST_COMMUNICATION_TASK_INFO || d == TB_DEST_STEP_TIME;
        if (!secondary)
            r->dest[TB_DEST_BETTER_SOURCE] += r->dest[d];
        r->dest[d] = 0;
    }
}

static void free_ignored(input_file *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
}

tb_status tb_load(const tb_load_options *opt, tb_load_result *res, tb_error *err)
{
    tb_load_result local;
    if (!res)
        res = &local;
    memset(res, 0, sizeof *res);
    tb_error_clear(err);
    if (!opt->output || !*opt->output)
        return tb_error_set(err, TB_ERR_USAGE, "no output DB given");
    if (opt->n_inputs == 0)
        return tb_error_set(err, TB_ERR_USAGE, "no input given (-dir PATH)");

    src_info *src = NULL;
    size_t nsrc = 0, srccap = 0, ngroups = 0, n_ignored = 0;
    int64_t *rank_hint = NULL;
    input_file *ignored = NULL;
    warn_log wl = {0};
    char *tmp = NULL;
    dbw *w = NULL;
    tb_status st = TB_OK;

    wl.opt = opt;
    wl.res = res;
    input_set set;
    if ((st = detect_inputs(opt->inputs, opt->n_inputs, &set, err)) != TB_OK)
        return st;
    ngroups = set.n;
    size_t nranks = 0;
    for (size_t g = 0; g < set.n; nranks += !set.groups[g].cluster, g++) {
        for (size_t i = 0; i < set.groups[g].n; i++) {
            if (nsrc == srccap) {
                srccap = srccap ? srccap * 2 : 8;
                src_info *ns = realloc(src, srccap * sizeof *ns);
                if (!ns) {
                    input_set_free(&set);
                    st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                    goto fail;
                }
                src = ns;
            }
            memset(&src[nsrc], 0, sizeof src[nsrc]);
            src[nsrc].path = set.groups[g].files[i].path;
            set.groups[g].files[i].path = NULL;
            src[nsrc].kind = set.groups[g].files[i].kind;
            src[nsrc].group = g;
            src[nsrc].cluster = set.groups[g].cluster;
            src[nsrc].rank = set.groups[g].cluster ? TB_CLUSTER_RANK : (int)nranks;
            nsrc++;
        }
    }
    if (!(rank_hint = calloc(set.n ? set.n : 1, sizeof *rank_hint))) {
        input_set_free(&set);
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t g = 0, r = 0; g < set.n; g++)
        if (!set.groups[g].cluster)
            rank_hint[r++] = set.groups[g].rank_hint;
    ngroups = nranks;
    /* files seen but not read are listed (kind "ignored") */
    ignored = set.ignored;
    n_ignored = set.n_ignored;
    set.ignored = NULL;
    set.n_ignored = 0;
    input_set_free(&set);

    /* the output never replaces an input; an input given twice loads once */
    struct stat ost;
    int out_exists = stat(opt->output, &ost) == 0;
    for (size_t i = 0; i < nsrc; i++) {
        struct stat ist;
        if (stat(src[i].path, &ist) != 0)
            continue;
        if (out_exists && ist.st_dev == ost.st_dev && ist.st_ino == ost.st_ino) {
            st = tb_error_at(err, TB_ERR_USAGE, opt->output, 0, 0, -1, "the output would replace the input '%s'",
                             src[i].path);
            goto fail;
        }
        for (size_t j = 0; j < i; j++) {
            struct stat jst;
            if (src[j].path && stat(src[j].path, &jst) == 0 && jst.st_dev == ist.st_dev && jst.st_ino == ist.st_ino) {
                warnf(&wl, "%s: the same file as %s: loaded once", src[i].path, src[j].path);
                free(src[i].path);
                memmove(&src[i], &src[i + 1], (nsrc - i - 1) * sizeof *src);
                nsrc--;
                i--;
                break;
            }
        }
    }

    /* temporary file beside the destination, renamed into place at the end */
    size_t tl = strlen(opt->output) + 32;
    tmp = malloc(tl);
    if (!tmp) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    snprintf(tmp, tl, "%s.tmp-XXXXXX", opt->output);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        st = tb_error_at(err, TB_ERR_IO, opt->output, 0, 0, -1, "cannot write: %s", strerror(errno));
        free(tmp);
        tmp = NULL;
        goto fail;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        st = tb_error_at(err, TB_ERR_IO, opt->output, 0, 0, -1, "cannot write: %s", strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        tmp = NULL;
        goto fail;
    }
    close(fd);
    tb_temp_register(tmp);
    if (!(w = dbw_create(tmp, err))) {
        st = err->code;
        goto fail;
    }

    double t_read = dbw_now();
    import_ids ids = {.next_task = 1, .next_op = 1, .next_overlap = 1, .next_flow_seq = 1};
    uint64_t filled = 0;
    for (size_t i = 0; i < nsrc; i++) {
        struct stat sb;
        if (stat(src[i].path, &sb) == 0) {
            src[i].bytes = (int64_t)sb.st_size;
            src[i].mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
        }
        /* a new rank starts with nothing filled; within a rank, later (lesser)
         * sources skip the tables an earlier one filled */
        if (i == 0 || src[i].group != src[i - 1].group)
            filled = 0;
        wl.source = (int64_t)i + 1;
        trace_import_opts io = {.rank = src[i].rank, .keep_python_functions = opt->keep_python_functions,
                                .warn = import_warn, .progress = import_progress, .ctx = &wl,
                                .total_bytes = (uint64_t)src[i].bytes, .skip_rows = filled,
                                .strict_rows = opt->strict};
        switch (src[i].kind) {
        case IN_MSPROF_DB:
            st = msprof_db_import(src[i].path, dbw_sink(w), &ids, &io, &src[i].r, err);
            break;
        case IN_TOPSPROF:
            st = topsprof_import(src[i].path, dbw_sink(w), &ids, &io, &src[i].r, err);
            break;
        case IN_NPU_CSV:
            st = npu_text_import(src[i].path, dbw_sink(w), &ids, &io, &src[i].r, err);
            break;
        case IN_ANALYSIS_DB:
            st = analysis_db_import(src[i].path, dbw_sink(w), &ids, &io, &src[i].r, err);
            /* the rank's step_trace_time.csv (sorted after it) then adds no second copy */
            if (st == TB_OK && src[i].r.dest[TB_DEST_OTHER_TABLES])
                filled |= ROWBIT(R_STEP_TRACE_TIME);
            break;
        case IN_NPU_JSON:
            st = npu_json_import(src[i].path, dbw_sink(w), &ids, &io, &src[i].r, err);
            break;
        default:
            st = trace_import(src[i].path, dbw_sink(w), &ids, &io, &src[i].r, err);
            break;
        }
        if (st != TB_OK) {
            const tb_error *we = dbw_error(w);
            if (we->code != TB_OK && err->message[0] == 0)
                *err = *we;
            if (err->file[0] == 0)
                snprintf(err->file, sizeof err->file, "%s", src[i].path);
            goto fail;
        }
        move_skipped(&src[i].r, filled);
        filled |= filled_mask(&src[i].r);
        res->events += src[i].r.events;
        for (int d = 0; d < TB_DEST_COUNT; d++)
            res->dest[d] += src[i].r.dest[d];
        res->n_files++;
        if (src[i].r.truncated) {
            if (opt->strict) {
                st = tb_error_at(err, TB_ERR_TRUNCATED, src[i].path, 0, 0, src[i].r.stop_offset,
                                 "input cut short at byte %lld after %llu complete events (--strict)",
                                 (long long)src[i].r.stop_offset, (unsigned long long)src[i].r.events);
                goto fail;
            }
            warnf(&wl, "%s: input cut short at byte %lld: kept %llu complete events, the rest is lost", src[i].path,
                  (long long)src[i].r.stop_offset, (unsigned long long)src[i].r.events);
        }
        if (src[i].r.dest[TB_DEST_UNKNOWN_PHASE])
            warnf(&wl, "%s: %llu events with an unknown phase kept in TB_EVENT",
                  src[i].path, (unsigned long long)src[i].r.dest[TB_DEST_UNKNOWN_PHASE]);
    }
    double t_post = dbw_now();
    res->seconds_read = t_post - t_read;
    int any_cluster = 0;
    for (size_t i = 0; i < nsrc; i++)
        any_cluster |= src[i].cluster;
    if (any_cluster && (st = clear_cluster_rank(w, err)) != TB_OK)
        goto fail;
    if ((st = dbw_pair_staged_flows(w, err)) != TB_OK || (st = bind_h2d(w, err)) != TB_OK ||
        (st = apply_ranks(w, src, nsrc, rank_hint, ngroups, err)) != TB_OK ||
        (st = bookkeeping(w, src, nsrc, ignored, n_ignored, opt, err)) != TB_OK || (st = write_warnings(w, &wl, err)) != TB_OK)
        goto fail;
    res->seconds_post = dbw_now() - t_post;
    if ((st = dbw_finish(w, &res->seconds_index, err)) != TB_OK)
        goto fail;
    dbw_destroy(w);
    w = NULL;
    if (rename(tmp, opt->output) != 0) {
        st = tb_error_at(err, TB_ERR_IO, opt->output, 0, 0, -1, "cannot write: %s", strerror(errno));
        goto fail;
    }
    tb_temp_unregister(tmp);
    free(tmp);
    for (size_t i = 0; i < nsrc; i++)
        free(src[i].path);
    free(src);
    free_ignored(ignored, n_ignored);
    free(rank_hint);
    warn_log_free(&wl);
    return TB_OK;

fail:
    dbw_destroy(w);
    if (tmp) {
        unlink(tmp);
        tb_temp_unregister(tmp);
        free(tmp);
    }
    for (size_t i = 0; i < nsrc; i++)
        free(src[i].path);
    free(src);
    free_ignored(ignored, n_ignored);
    free(rank_hint);
    warn_log_free(&wl);
    if (st == TB_OK)
        st = TB_ERR_INTERNAL;
    if (err->code == TB_OK)
        err->code = st;
    return st;
}

/* ---- default names ------------------------------------------------------------ */

tb_status tb_db_default_name(const char *db_path, char *out, size_t outlen, tb_error *err)
{
    sqlite3 *db;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return tb_error_at(err, TB_ERR_DB, db_path, 0, 0, -1, "cannot open the DB");
    }
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
    sqlite3_close(db);
    time_t t = (time_t)(ns / 1000000000LL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm);
    if ((size_t)snprintf(out, outlen, "msprof_%s.db", stamp) >= outlen)
        return tb_error_set(err, TB_ERR_USAGE, "output path too long");
    return TB_OK;
}
