/* SPDX-License-Identifier: MIT */
/*
 * load.c - tb_load(): inputs -> one unified DB, atomically.
 *
 * The files found under the -dir inputs are grouped into ranks (detect.c);
 * each group is a unit of work whose files load one after the other. Rows
 * stream through the importers into a DB written under a temporary name
 * beside the destination; the session tables (SESSION_TIME_INFO,
 * RANK_DEVICE_MAP, META_DATA, TB_SOURCE, ...) are written once all files
 * are in, and only a complete DB is renamed into place. Any failure removes
 * the temporary file, so a reader never sees half a DB and an older DB of
 * the same name survives.
 *
 * Several groups load in parallel on a small pool of threads: the first
 * group writes into the DB directly, every later one into a recorder (dbw.c)
 * that keeps its rows in an unnamed temporary file, and this thread replays
 * the recordings into the DB in group order as they complete, shifting the
 * ids each group drew from its own counters. Every row, string id and
 * counter id therefore comes out exactly as in a load of one group after
 * the other, whatever the threads' timing; and the first failing group in
 * input order decides the error.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
    int rank;        /* the load's rank of its rows (the first rank of a DB that holds several) */
    int multi;       /* a DB that holds several ranks: TB_SOURCE names none */
    int64_t hint;    /* rank named by profiler_info_<N>.json in its rank root, -1 none */
    int64_t bytes, mtime_ns;
    trace_import_result r;
} src_info;

/* Warnings of a load: shown through the caller's callback as they come, and
 * kept for TB_WARNING (written with the other bookkeeping rows). A group
 * loading in parallel keeps its own log, shown and kept in the load's log
 * when the group is replayed, so warnings come in input order. */
typedef struct warn_log {
    const tb_load_options *opt;
    tb_load_result *res;        /* counts the warnings; NULL in a group's own log */
    pthread_mutex_t *cb_mu;     /* held around the caller's callbacks when threads load, else NULL */
    int live;                   /* show each warning through opt->warn at once */
    int64_t source;             /* TB_SOURCE id of the file being read */
    int64_t *src_ids;
    char **msgs;
    size_t n, cap;
} warn_log;

/* Keeps msg as a warning of source src. */
static void warn_keep(warn_log *wl, const char *msg, int64_t src)
{
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
        wl->src_ids[wl->n++] = src;
}

/* Shows msg (when the log is live) and keeps it as a warning of source src. */
static void warn_src(warn_log *wl, const char *msg, int64_t src)
{
    if (wl->live && wl->opt->warn) {
        if (wl->cb_mu)
            pthread_mutex_lock(wl->cb_mu);
        wl->opt->warn(wl->opt->ctx, msg);
        if (wl->cb_mu)
            pthread_mutex_unlock(wl->cb_mu);
    }
    if (wl->res)
        wl->res->warnings++;
    warn_keep(wl, msg, src);
}

static void warn_add(warn_log *wl, const char *msg)
{
    warn_src(wl, msg, wl->source);
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
    if (!wl->opt->progress)
        return;
    if (wl->cb_mu)
        pthread_mutex_lock(wl->cb_mu);
    wl->opt->progress(wl->opt->ctx, file, done, total);
    if (wl->cb_mu)
        pthread_mutex_unlock(wl->cb_mu);
}

static void warn_log_free(warn_log *wl)
{
    for (size_t i = 0; i < wl->n; i++)
        free(wl->msgs[i]);
    free(wl->msgs);
    free(wl->src_ids);
    wl->msgs = NULL;
    wl->src_ids = NULL;
    wl->n = wl->cap = 0;
}

/* The files of one rank group (or the cluster-level files), loaded one after
 * the other; groups are what loads in parallel. */
typedef struct unit {
    size_t first, n;      /* src[first .. first + n) */
    int rank;             /* the load's rank of its rows (its first, for a DB that holds several) */
    size_t nranks;        /* ranks it gives: 0 for cluster-level files, several for such a DB */
    int cluster;
    db_ranks dbr;         /* the ranks of its first file, a DB that holds several (else empty) */
    /* parallel loading (guarded by the pool's lock) */
    int state;            /* U_WAITING, U_RUNNING, U_DONE */
    tb_status st;
    tb_error err;
    dbw *rec;             /* its recording (every group but the first) */
    import_ids used;      /* the recording's counters, started at 1 */
    warn_log wl;          /* its warnings, until it is replayed */
} unit;

enum { U_WAITING, U_RUNNING, U_DONE };

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


/* Facts of one rank for the bookkeeping tables. */
typedef struct rank_facts {
    uint64_t devices;
    int64_t t0, t1, base;
    int have_t, have_base;
} rank_facts;

/* Adds what an input says about its rank's devices, time span and base time. */
static void facts_add(rank_facts *f, uint64_t devices, int has_t, int64_t t0, int64_t t1, int has_base, int64_t base)
{
    f->devices |= devices;
    if (has_t) {
        if (!f->have_t || t0 < f->t0)
            f->t0 = t0;
        if (!f->have_t || t1 > f->t1)
            f->t1 = t1;
        f->have_t = 1;
    }
    if (has_base && !f->have_base) {
        f->base = base;
        f->have_base = 1;
    }
}

/* RANK_DEVICE_MAP, TB_RANK and SESSION_TIME_INFO rows of one rank. */
static int rank_rows(sqlite3_stmt *s_rdm, sqlite3_stmt *s_rank, sqlite3_stmt *s_sess, int rank, const rank_facts *f,
                     const char *host, const char *source)
{
    for (int dev = 0; dev < 64; dev++) {
        if (!(f->devices & ((uint64_t)1 << dev)))
            continue;
        sqlite3_bind_int(s_rdm, 1, rank);
        sqlite3_bind_int(s_rdm, 2, dev);
        if (sqlite3_step(s_rdm) != SQLITE_DONE)
            return -1;
        sqlite3_reset(s_rdm);
    }
    sqlite3_bind_int(s_rank, 1, rank);
    if (host)
        sqlite3_bind_text(s_rank, 2, host, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s_rank, 2);
    sqlite3_bind_text(s_rank, 3, source, -1, SQLITE_STATIC);
    if (sqlite3_step(s_rank) != SQLITE_DONE)
        return -1;
    sqlite3_reset(s_rank);
    if (f->have_t) {
        /* one row per rank: ranks may run on different clocks */
        sqlite3_bind_int64(s_sess, 1, f->t0);
        sqlite3_bind_int64(s_sess, 2, f->t1);
        if (f->have_base)
            sqlite3_bind_int64(s_sess, 3, f->base);
        else
            sqlite3_bind_null(s_sess, 3);
        sqlite3_bind_int(s_sess, 4, rank);
        if (sqlite3_step(s_sess) != SQLITE_DONE)
            return -1;
        sqlite3_reset(s_sess);
    }
    return 0;
}

/* final[p]: the rankId of provisional rank p after apply_ranks. */
static tb_status bookkeeping(dbw *w, src_info *src, size_t nsrc, const unit *units, size_t nunits,
                             const int64_t *final, const input_file *ignored, size_t n_ignored,
                             const tb_load_options *opt, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *s_src = NULL, *s_cnt = NULL, *s_rdm = NULL, *s_rank = NULL, *s_meta = NULL, *s_sess = NULL;
    tb_status st = TB_ERR_DB;
    if (sqlite3_prepare_v2(db, "INSERT INTO TB_SOURCE VALUES(?,?,?,?,?,?,?,?,?,?,?)", -1, &s_src, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO TB_LOAD_COUNT VALUES(?,?,?)", -1, &s_cnt, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO RANK_DEVICE_MAP VALUES(?,?)", -1, &s_rdm, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO TB_RANK VALUES(?,?,?)", -1, &s_rank, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO META_DATA VALUES(?,?)", -1, &s_meta, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO SESSION_TIME_INFO VALUES(?,?,?,?)", -1, &s_sess, NULL)) {
        tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
        goto done;
    }
    for (size_t i = 0; i < nsrc; i++) {
        src_info *s = &src[i];
        uint64_t skipped =
            s->r.dest[TB_DEST_SKIPPED_PYTHON] + s->r.dest[TB_DEST_EMPTY] + s->r.dest[TB_DEST_BAD_ROWS];
        char note[160];
        if (s->r.truncated)
            snprintf(note, sizeof note, "cut short at byte %lld", (long long)s->r.stop_offset);
        else
            note[0] = 0;
        sqlite3_bind_int64(s_src, 1, (int64_t)i + 1);
        if (s->cluster || s->multi)
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
    }
    /* per rank: devices, rank row, time span. A group of files is one rank,
     * named after its last file; a DB that holds several ranks gives each of
     * them its own facts, and the group's other files add to its first. */
    for (size_t u = 0; u < nunits; u++) {
        const unit *g = &units[u];
        if (g->cluster || g->n == 0)
            continue;
        size_t from = g->dbr.n ? 1 : 0;
        rank_facts f = {0};
        if (g->dbr.n) {
            const db_rank *d = &g->dbr.v[0];
            facts_add(&f, d->devices, d->has_times, d->min_ns, d->max_ns, d->has_base_time, d->base_time_ns);
        }
        for (size_t k = g->first + from; k < g->first + g->n; k++) {
            const trace_import_result *r = &src[k].r;
            facts_add(&f, r->devices_seen, r->has_times, r->min_ns, r->max_ns, r->has_base_time, r->base_time_ns);
        }
        const char *last = src[g->first + g->n - 1].path;
        if (!g->dbr.n) {
            if (rank_rows(s_rdm, s_rank, s_sess, (int)final[g->rank], &f, NULL, last))
                goto dberr;
            continue;
        }
        for (size_t j = 0; j < g->dbr.n; j++) {
            const db_rank *d = &g->dbr.v[j];
            rank_facts dj = {0};
            if (j > 0)
                facts_add(&dj, d->devices, d->has_times, d->min_ns, d->max_ns, d->has_base_time, d->base_time_ns);
            if (rank_rows(s_rdm, s_rank, s_sess, (int)final[g->rank + (int)j], j ? &dj : &f, d->host,
                          d->source ? d->source : src[g->first].path))
                goto dberr;
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
 * The rankId of each rank of the load. Ranks are numbered 0, 1, ... in input
 * order while loading (a DB that holds several ranks takes several numbers
 * in a row); the ids the inputs name (profiler_info_N.json, else what a file
 * of the group says: distributedInfo.rank, a DB's RANK_DEVICE_MAP or, for a
 * DB that holds several ranks, its own rankIds) replace them only when every
 * rank names one and no two name the same. Otherwise, the numbering in input
 * order stays, which keeps the ranks of every input apart; two inputs that
 * name the same rank are warned about. who[p] is the first input of rank p
 * (an index into src); final[p] receives the rankId of rank p.
 */
static tb_status apply_ranks(dbw *w, const int64_t *claim, const size_t *who, const src_info *src, size_t nranks,
                             int64_t *final, warn_log *wl, tb_error *err)
{
    int usable = 1, changed = 0, clash = 0;
    for (size_t g = 0; g < nranks; g++) {
        final[g] = (int64_t)g;
        if (claim[g] < 0)
            usable = 0;
        for (size_t h = 0; h < g && !clash; h++) {
            if (claim[g] >= 0 && claim[h] == claim[g]) {
                char msg[2048];
                clash = 1;
                snprintf(msg, sizeof msg, "%s and %s both name rank %lld: ranks are numbered in input order",
                         src[who[h]].path, src[who[g]].path, (long long)claim[g]);
                warn_src(wl, msg, (int64_t)who[g] + 1);
            }
        }
        changed |= claim[g] != (int64_t)g;
    }
    if (!usable || clash || !changed)
        return TB_OK;
    /* one UPDATE per table, through a map of the numbers that change */
    tb_status st = dbw_exec(w, "CREATE TEMP TABLE tb_rank_map (p INTEGER PRIMARY KEY, f INTEGER)", err);
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *q = NULL;
    if (st == TB_OK && sqlite3_prepare_v2(db, "INSERT INTO tb_rank_map VALUES(?, ?)", -1, &q, NULL) != SQLITE_OK)
        st = tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
    for (size_t g = 0; g < nranks && st == TB_OK; g++) {
        if (claim[g] == (int64_t)g)
            continue;
        sqlite3_bind_int64(q, 1, (int64_t)g);
        sqlite3_bind_int64(q, 2, claim[g]);
        if (sqlite3_step(q) != SQLITE_DONE)
            st = tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    q = NULL;
    char **tables = NULL;
    size_t nt = 0;
    if (st == TB_OK && sqlite3_prepare_v2(db,
                                          "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c"
                                          " WHERE m.type = 'table' AND c.name = 'rankId'",
                                          -1, &q, NULL) != SQLITE_OK)
        st = tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
    while (st == TB_OK && sqlite3_step(q) == SQLITE_ROW) {
        char **nv = realloc(tables, (nt + 1) * sizeof *nv);
        if (!nv || !(nv[nt] = strdup((const char *)sqlite3_column_text(q, 0)))) {
            if (nv)
                tables = nv;
            st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            break;
        }
        tables = nv;
        nt++;
    }
    sqlite3_finalize(q);
    for (size_t t = 0; t < nt && st == TB_OK; t++) {
        char sql[512];
        snprintf(sql, sizeof sql,
                 "UPDATE \"%s\" SET rankId = (SELECT f FROM tb_rank_map WHERE p = rankId)"
                 " WHERE rankId IN (SELECT p FROM tb_rank_map)",
                 tables[t]);
        st = dbw_exec(w, sql, err);
    }
    for (size_t t = 0; t < nt; t++)
        free(tables[t]);
    free(tables);
    if (st == TB_OK)
        st = dbw_exec(w, "DROP TABLE tb_rank_map", err);
    if (st == TB_OK)
        for (size_t g = 0; g < nranks; g++)
            final[g] = claim[g];
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

/* What the loading of the groups shares. */
typedef struct load_ctx {
    const tb_load_options *opt;
    src_info *src;
    unit *units;
    size_t nunits;
} load_ctx;

/*
 * Loads the files of one group into sink, one after the other, drawing ids
 * from ids. w is the writer or recorder behind the sink (its error explains
 * a failed row; a recorder also gets a mark before each file). Warnings go
 * to wl. Returns TB_OK or the first error, with err set and naming the file.
 */
static tb_status load_unit(const load_ctx *L, unit *g, dbw *w, int recording, const row_sink *sink, import_ids *ids,
                           warn_log *wl, tb_error *err)
{
    const tb_load_options *opt = L->opt;
    uint64_t filled = 0, skip = 0;
    tb_status st = TB_OK;
    for (size_t i = g->first; i < g->first + g->n; i++) {
        src_info *s = &L->src[i];
        struct stat sb;
        if (stat(s->path, &sb) == 0) {
            s->bytes = (int64_t)sb.st_size;
            s->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
        }
        wl->source = (int64_t)i + 1;
        /* a DB input keeps its own OVERLAP_ANALYSIS ids; a replay must not shift them */
        if (recording && dbw_record_mark(w, s->kind == IN_MSPROF_DB ? DBW_MARK_KEEP_OVERLAP_IDS : 0)) {
            *err = *dbw_error(w);
            st = err->code;
            break;
        }
        /* within a group, later (lesser) sources skip the tables an earlier one filled; the
         * slices of one msprof summary (op_summary_slice_<n>_*.csv) are one source: a slice
         * skips what its first slice skipped, not the tables the slices before it filled */
        if (!(i > g->first && s->kind == IN_NPU_CSV && s[-1].kind == IN_NPU_CSV &&
              npu_text_same_series(s[-1].path, s->path)))
            skip = filled;
        trace_import_opts io = {.rank = s->rank, .keep_python_functions = opt->keep_python_functions,
                                .warn = import_warn, .progress = import_progress, .ctx = wl,
                                .total_bytes = (uint64_t)s->bytes, .skip_rows = skip,
                                .strict_rows = opt->strict};
        switch (s->kind) {
        case IN_MSPROF_DB:
            st = msprof_db_import(s->path, sink, ids, &io, i == g->first && g->dbr.n ? &g->dbr : NULL, &s->r, err);
            break;
        case IN_TOPSPROF:
            st = topsprof_import(s->path, sink, ids, &io, &s->r, err);
            break;
        case IN_NPU_CSV:
            st = npu_text_import(s->path, sink, ids, &io, &s->r, err);
            break;
        case IN_ANALYSIS_DB:
            st = analysis_db_import(s->path, sink, ids, &io, &s->r, err);
            /* the rank's step_trace_time.csv (sorted after it) then adds no second copy */
            if (st == TB_OK && s->r.dest[TB_DEST_OTHER_TABLES])
                filled |= ROWBIT(R_STEP_TRACE_TIME);
            break;
        case IN_NPU_JSON:
            st = npu_json_import(s->path, sink, ids, &io, &s->r, err);
            break;
        default:
            st = trace_import(s->path, sink, ids, &io, &s->r, err);
            break;
        }
        if (st != TB_OK) {
            const tb_error *we = dbw_error(w);
            if (we->code != TB_OK && err->message[0] == 0)
                *err = *we;
            if (err->file[0] == 0)
                snprintf(err->file, sizeof err->file, "%s", s->path);
            break;
        }
        move_skipped(&s->r, skip);
        filled |= filled_mask(&s->r);
        if (s->r.truncated) {
            if (opt->strict) {
                st = tb_error_at(err, TB_ERR_TRUNCATED, s->path, 0, 0, s->r.stop_offset,
                                 "input cut short at byte %lld after %llu complete events (--strict)",
                                 (long long)s->r.stop_offset, (unsigned long long)s->r.events);
                break;
            }
            warnf(wl, "%s: input cut short at byte %lld: kept %llu complete events, the rest is lost", s->path,
                  (long long)s->r.stop_offset, (unsigned long long)s->r.events);
        }
        if (s->r.dest[TB_DEST_UNKNOWN_PHASE])
            warnf(wl, "%s: %llu events with an unknown phase kept in TB_EVENT", s->path,
                  (unsigned long long)s->r.dest[TB_DEST_UNKNOWN_PHASE]);
    }
    return st;
}

/* Adds a loaded group's counts to the result. */
static void count_unit(const load_ctx *L, const unit *g, tb_load_result *res)
{
    for (size_t i = g->first; i < g->first + g->n; i++) {
        const src_info *s = &L->src[i];
        res->events += s->r.events;
        for (int d = 0; d < TB_DEST_COUNT; d++)
            res->dest[d] += s->r.dest[d];
        res->n_files++;
    }
}

/* ---- parallel loading ------------------------------------------------------ */

/* How many threads load groups: opt->jobs, else TRACEBOOK_JOBS, else the
 * online CPUs up to 4; never more than there are groups. 1 loads them one
 * after the other on the calling thread. */
static size_t pick_jobs(const tb_load_options *opt, size_t nunits)
{
    long jobs = opt->jobs;
    const char *env = getenv("TRACEBOOK_JOBS");
    if (jobs <= 0 && env && *env) {
        char *end;
        errno = 0;
        long v = strtol(env, &end, 10);
        if (errno == 0 && *end == 0 && v > 0)
            jobs = v;
    }
    if (jobs <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus < 1 ? 1 : cpus > 4 ? 4 : cpus;
    }
    if (jobs > 64)
        jobs = 64;
    return (size_t)jobs < nunits ? (size_t)jobs : nunits;
}

typedef struct pool {
    load_ctx *L;
    dbw *w;                 /* the DB's writer: the first group writes into it directly */
    import_ids *ids;        /* the load's counters (the first group's) */
    warn_log *wl;           /* the load's warnings (the first group's, live) */
    char dir[PATH_MAX];     /* where recordings go: the output's directory */
    pthread_mutex_t mu;     /* guards the fields below and the groups' state */
    pthread_cond_t cv;
    size_t next;            /* the next group to start */
    size_t replayed;        /* groups done with: replayed into the DB */
    size_t window;          /* a group starts only this many ahead of the replay */
    size_t stop;            /* no group from here on starts: the first one that failed */
    atomic_size_t failed;   /* the same, read by the recorders' sinks */
    int nice_recorders;     /* nice value of a thread once it records (10: measured as fast as 19, and
                             * unlike 0, it lets the DB's current group finish first) */
} pool;

/* A recording's sink: the recorder's, refusing rows once a group before
 * this one has failed, so a doomed load stops early. */
typedef struct guard {
    const row_sink *inner;
    pool *p;
    size_t k;
    row_sink sink;
} guard;

static int cancelled(const guard *g)
{
    return atomic_load_explicit(&g->p->failed, memory_order_relaxed) < g->k;
}

static int64_t guard_intern(void *ctx, const char *s, size_t n)
{
    guard *g = ctx;
    return cancelled(g) ? -1 : g->inner->intern(g->inner->ctx, s, n);
}

static int guard_row(void *ctx, int table, const tb_val *v)
{
    guard *g = ctx;
    return cancelled(g) ? -1 : g->inner->row(g->inner->ctx, table, v);
}

/* Loads group k: the first into the DB, the others into their recording
 * (made when the group was taken, so the replay can follow it at once). */
static void run_unit(pool *p, size_t k)
{
    unit *g = &p->L->units[k];
    if (k == 0) {
        g->st = load_unit(p->L, g, p->w, 0, dbw_sink(p->w), p->ids, p->wl, &g->err);
        return;
    }
    if (!g->rec) {
        g->st = g->err.code;
        return;
    }
#ifdef __linux__
    /* Recording is work ahead of time: the group the DB is taking now (and
     * the writer) come first. Linux keeps the nice value per thread, so this
     * lowers this worker alone, until it exits at the end of the load. */
    if (p->nice_recorders)
        (void)setpriority(PRIO_PROCESS, 0, p->nice_recorders);
#endif
    g->used = (import_ids){.next_task = 1, .next_op = 1, .next_overlap = 1, .next_flow_seq = 1};
    guard gd = {.inner = dbw_sink(g->rec), .p = p, .k = k};
    gd.sink = (row_sink){.ctx = &gd, .intern = guard_intern, .row = guard_row};
    g->st = load_unit(p->L, g, g->rec, 1, &gd.sink, &g->used, &g->wl, &g->err);
    /* the replay may be waiting for the rest: end the recording in any case */
    if (dbw_record_end(g->rec) && g->st == TB_OK) {
        g->err = *dbw_error(g->rec);
        g->st = g->err.code;
    }
    if (g->st != TB_OK && cancelled(&gd))
        tb_error_set(&g->err, g->st, "cancelled: an earlier rank failed");
}

static void *worker(void *arg)
{
    pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->next < p->L->nunits && p->next < p->stop && p->next >= p->replayed + p->window)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->next >= p->L->nunits || p->next >= p->stop)
            break;
        size_t k = p->next++;
        unit *g = &p->L->units[k];
        tb_error_clear(&g->err);
        if (k > 0)
            g->rec = dbw_record_create(p->dir, &g->err);
        g->state = U_RUNNING;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        run_unit(p, k);
        pthread_mutex_lock(&p->mu);
        p->L->units[k].state = U_DONE;
        if (p->L->units[k].st != TB_OK && k < p->stop) {
            p->stop = k;
            atomic_store(&p->failed, k);
        }
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Stops the groups from k on (k itself failed, or its replay did). */
static void pool_stop(pool *p, size_t k)
{
    pthread_mutex_lock(&p->mu);
    if (k < p->stop) {
        p->stop = k;
        atomic_store(&p->failed, k);
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/*
 * Loads every group on jobs threads; this thread replays the recordings
 * into w in group order, each as soon as the groups before it are in: it
 * follows a recording still going on and, once caught up, leaves the rest
 * of the group to its thread, which then writes into w itself. The first
 * group that fails in input order gives the error (a later one may have
 * failed sooner: it does not count, as in a load of one group after the
 * other).
 */
static tb_status load_parallel(load_ctx *L, dbw *w, import_ids *ids, warn_log *wl, size_t jobs, const char *out_tmp,
                               tb_load_result *res, tb_error *err)
{
    pool p = {.L = L, .w = w, .ids = ids, .wl = wl, .window = 2 * jobs, .stop = L->nunits, .nice_recorders = 10};
    atomic_init(&p.failed, L->nunits);
    const char *slash = strrchr(out_tmp, '/');
    if (!slash)
        snprintf(p.dir, sizeof p.dir, ".");
    else if (slash == out_tmp)
        snprintf(p.dir, sizeof p.dir, "/");
    else
        snprintf(p.dir, sizeof p.dir, "%.*s", (int)(slash - out_tmp), out_tmp);
    pthread_mutex_t cb_mu;
    pthread_mutex_init(&cb_mu, NULL);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    wl->cb_mu = &cb_mu;
    for (size_t u = 0; u < L->nunits; u++)
        L->units[u].wl = (warn_log){.opt = L->opt, .cb_mu = &cb_mu, .live = 0};
    pthread_t *threads = calloc(jobs, sizeof *threads);
    size_t started = 0;
    tb_status st = TB_OK;
    if (!threads)
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (; st == TB_OK && started < jobs; started++)
        if (pthread_create(&threads[started], NULL, worker, &p) != 0)
            break;
    if (st == TB_OK && started == 0)
        st = tb_error_set(err, TB_ERR_INTERNAL, "cannot start a loading thread");
    for (size_t k = 0; k < L->nunits && st == TB_OK; k++) {
        unit *g = &L->units[k];
        tb_status rst = TB_OK;
        tb_error rerr;
        tb_error_clear(&rerr);
        if (k > 0) {
            /* its rows, as if it had loaded right after the group before */
            pthread_mutex_lock(&p.mu);
            while (g->state == U_WAITING)
                pthread_cond_wait(&p.cv, &p.mu);
            int failed = g->state == U_DONE && g->st != TB_OK;
            pthread_mutex_unlock(&p.mu);
            if (g->rec && !failed) {
                dbw_shift sh = {ids->next_task - 1, ids->next_op - 1, ids->next_overlap - 1,
                                ids->next_flow_seq - 1};
                int handed;
                if ((rst = dbw_replay(w, g->rec, &sh, &handed, &rerr)) != TB_OK)
                    pool_stop(&p, 0); /* the group stops too: its rows have nowhere to go */
            }
        }
        pthread_mutex_lock(&p.mu);
        while (g->state != U_DONE)
            pthread_cond_wait(&p.cv, &p.mu);
        pthread_mutex_unlock(&p.mu);
        if (g->st != TB_OK || rst != TB_OK) {
            *err = g->st != TB_OK ? g->err : rerr;
            st = g->st != TB_OK ? g->st : rst;
            break;
        }
        if (k > 0) {
            /* its warnings, in their place after those of the groups before */
            for (size_t i = 0; i < g->wl.n; i++)
                warn_src(wl, g->wl.msgs[i], g->wl.src_ids[i]);
            warn_log_free(&g->wl);
            dbw_destroy(g->rec);
            g->rec = NULL;
            ids->next_task += g->used.next_task - 1;
            ids->next_op += g->used.next_op - 1;
            ids->next_overlap += g->used.next_overlap - 1;
            ids->next_flow_seq += g->used.next_flow_seq - 1;
        }
        count_unit(L, g, res);
        pthread_mutex_lock(&p.mu);
        p.replayed = k + 1;
        pthread_cond_broadcast(&p.cv);
        pthread_mutex_unlock(&p.mu);
    }
    if (st != TB_OK)
        pool_stop(&p, 0);
    for (size_t t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    free(threads);
    for (size_t u = 0; u < L->nunits; u++) {
        dbw_destroy(L->units[u].rec);
        L->units[u].rec = NULL;
        warn_log_free(&L->units[u].wl);
    }
    wl->cb_mu = NULL;
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    pthread_mutex_destroy(&cb_mu);
    return st;
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
    size_t nsrc = 0, srccap = 0, n_ignored = 0, nunits = 0, nranks = 0;
    unit *units = NULL;
    int64_t *claim = NULL, *final = NULL;
    size_t *who = NULL;
    input_file *ignored = NULL;
    warn_log wl = {0};
    char *tmp = NULL;
    dbw *w = NULL;
    tb_status st = TB_OK;

    wl.opt = opt;
    wl.res = res;
    wl.live = 1;
    input_set set;
    if ((st = detect_inputs(opt->inputs, opt->n_inputs, &set, err)) != TB_OK)
        return st;
    for (size_t g = 0; g < set.n; g++) {
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
            src[nsrc].hint = set.groups[g].cluster ? -1 : set.groups[g].rank_hint;
            nsrc++;
        }
    }
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

    /* the groups, and the ranks they give: one each, several for a DB that
     * holds several, none for the cluster-level files */
    if (!(units = calloc(nsrc ? nsrc : 1, sizeof *units))) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < nsrc; i++) {
        if (i == 0 || src[i].group != src[i - 1].group) {
            unit *g = &units[nunits++];
            g->first = i;
            g->cluster = src[i].cluster;
            g->nranks = g->cluster ? 0 : 1;
            if (!g->cluster && src[i].kind == IN_MSPROF_DB) {
                if ((st = msprof_db_ranks(src[i].path, &g->dbr, err)) != TB_OK)
                    goto fail;
                if (g->dbr.n)
                    g->nranks = g->dbr.n;
            }
            g->rank = g->cluster ? TB_CLUSTER_RANK : (int)nranks;
            nranks += g->nranks;
        }
        unit *g = &units[nunits - 1];
        g->n++;
        src[i].rank = g->rank;
        src[i].multi = g->dbr.n && i == g->first;
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
    load_ctx L = {.opt = opt, .src = src, .units = units, .nunits = nunits};
    size_t jobs = pick_jobs(opt, nunits);
    if (jobs >= 2) {
        if ((st = load_parallel(&L, w, &ids, &wl, jobs, tmp, res, err)) != TB_OK)
            goto fail;
    } else {
        for (size_t u = 0; u < nunits; u++) {
            if ((st = load_unit(&L, &units[u], w, 0, dbw_sink(w), &ids, &wl, err)) != TB_OK)
                goto fail;
            count_unit(&L, &units[u], res);
        }
    }
    double t_post = dbw_now();
    res->seconds_read = t_post - t_read;

    /* what each rank names itself: profiler_info_N.json, else the first file
     * that says (a DB that holds several ranks names each of them) */
    if (!(claim = malloc((nranks ? nranks : 1) * sizeof *claim)) ||
        !(final = malloc((nranks ? nranks : 1) * sizeof *final)) ||
        !(who = calloc(nranks ? nranks : 1, sizeof *who))) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t u = 0; u < nunits; u++) {
        const unit *g = &units[u];
        for (size_t j = 0; j < g->nranks; j++) {
            int64_t id = g->dbr.n ? g->dbr.v[j].id : src[g->first].hint;
            claim[g->rank + (int)j] = id >= 0 && id <= INT_MAX ? id : -1;
            who[g->rank + (int)j] = g->first;
        }
        for (size_t i = g->first; i < g->first + g->n && !g->dbr.n && !g->cluster; i++)
            if (claim[g->rank] < 0 && src[i].r.trace_rank >= 0 && src[i].r.trace_rank <= INT_MAX)
                claim[g->rank] = src[i].r.trace_rank;
    }
    int any_cluster = 0;
    for (size_t i = 0; i < nsrc; i++)
        any_cluster |= src[i].cluster;
    if (any_cluster && (st = clear_cluster_rank(w, err)) != TB_OK)
        goto fail;
    if ((st = dbw_pair_staged_flows(w, err)) != TB_OK || (st = bind_h2d(w, err)) != TB_OK ||
        (st = apply_ranks(w, claim, who, src, nranks, final, &wl, err)) != TB_OK)
        goto fail;
    for (size_t i = 0; i < nsrc; i++)
        if (!src[i].cluster)
            src[i].rank = (int)final[src[i].rank];
    if ((st = bookkeeping(w, src, nsrc, units, nunits, final, ignored, n_ignored, opt, err)) != TB_OK ||
        (st = write_warnings(w, &wl, err)) != TB_OK)
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
    tmp = NULL;
    goto done;

fail:
    dbw_destroy(w);
    if (tmp) {
        unlink(tmp);
        tb_temp_unregister(tmp);
        free(tmp);
    }
    if (st == TB_OK)
        st = TB_ERR_INTERNAL;
    if (err->code == TB_OK)
        err->code = st;
done:
    for (size_t i = 0; i < nsrc; i++)
        free(src[i].path);
    free(src);
    for (size_t u = 0; u < nunits; u++)
        db_ranks_free(&units[u].dbr);
    free(units);
    free(claim);
    free(final);
    free(who);
    free_ignored(ignored, n_ignored);
    warn_log_free(&wl);
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

