/* SPDX-License-Identifier: MIT */
/*
 * load_books.c - the load's bookkeeping and its post-processing SQL.
 *
 * Once every file of a load is in, the driver (load_driver.c) calls these in turn:
 * the HostToDevice binding of CANN_API rows to their tasks, the numbering of
 * the ranks from what the inputs name, the cluster-level rows that belong to
 * no rank, and the tables that describe the load itself (TB_SOURCE with
 * counts per destination, TB_RANK, RANK_DEVICE_MAP, SESSION_TIME_INFO,
 * META_DATA, TB_WARNING); with torch_links (export db --pytorch-links), a
 * torch_npu timeline's PyTorch calls linked to their tasks
 * (db/torchlinks.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/torchlinks.h"
#include "ingest/load_int.h"
#include "tracebook/error.h"
#include "tracebook/load.h"

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
    [TB_DEST_BAD_TIME] = "skipped: times outside +-2^62 ns",
    [TB_DEST_DERIVED_TYPE] = "COMPUTE_TASK_INFO.opType from the name",
};

const char *tb_dest_name(int dest)
{
    return dest >= 0 && dest < TB_DEST_COUNT ? dest_names[dest] : "?";
}

tb_status load_books_warnings(dbw *w, const warn_log *wl, tb_error *err)
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


/* Facts of one rank for the load_books_write tables. */
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

tb_status load_books_meta(dbw *w, const import_ids *ids, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *s_meta = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO META_DATA VALUES(?,?)", -1, &s_meta, NULL) != SQLITE_OK)
        goto dberr;
    static const char *const meta[][2] = {
        {"SCHEMA_VERSION", "1.2.0"}, {"SCHEMA_VERSION_MAJOR", "1"}, {"SCHEMA_VERSION_MINOR", "2"},
        {"SCHEMA_VERSION_MICRO", "0"}, {"TRACEBOOK_VERSION", TB_VERSION}, {"TRACEBOOK_SCHEMA", "2"},
    };
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++) {
        sqlite3_bind_text(s_meta, 1, meta[i][0], -1, SQLITE_STATIC);
        sqlite3_bind_text(s_meta, 2, meta[i][1], -1, SQLITE_STATIC);
        if (sqlite3_step(s_meta) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(s_meta);
    }
    /* the ids the load drew (some for rows a better source replaced): a
     * merge continues the counters from here, so its ids equal those of a
     * load of all the raw inputs at once */
    char used[2][24];
    snprintf(used[0], sizeof used[0], "%lld", (long long)(ids->next_task - 1));
    snprintf(used[1], sizeof used[1], "%lld", (long long)(ids->next_op - 1));
    static const char *const id_keys[2] = {"TRACEBOOK_TASK_IDS_USED", "TRACEBOOK_OP_IDS_USED"};
    for (int i = 0; i < 2; i++) {
        sqlite3_bind_text(s_meta, 1, id_keys[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(s_meta, 2, used[i], -1, SQLITE_STATIC);
        if (sqlite3_step(s_meta) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(s_meta);
    }
    sqlite3_finalize(s_meta);
    return TB_OK;
dberr:
    tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
    sqlite3_finalize(s_meta);
    return TB_ERR_DB;
}

/* TB_SOURCE row of one source read, and its TB_LOAD_COUNT rows (the
 * events per destination). 0, or -1 on a SQLite error. */
static int source_rows(sqlite3_stmt *s_src, sqlite3_stmt *s_cnt, const src_info *s, const tb_load_options *opt)
{
    uint64_t skipped =
        s->r.dest[TB_DEST_SKIPPED_PYTHON] + s->r.dest[TB_DEST_EMPTY] + s->r.dest[TB_DEST_BAD_ROWS] +
            s->r.dest[TB_DEST_BAD_TIME];
    char note[sizeof s->r.note];
    if (s->r.truncated)
        snprintf(note, sizeof note, "cut short at byte %lld", (long long)s->r.stop_offset);
    else
        snprintf(note, sizeof note, "%s", s->r.note);
    sqlite3_bind_int64(s_src, 1, s->gid);
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
        return -1;
    sqlite3_reset(s_src);
    for (int d = 0; d < TB_DEST_COUNT; d++) {
        if (!s->r.dest[d])
            continue;
        sqlite3_bind_int64(s_cnt, 1, s->gid);
        sqlite3_bind_text(s_cnt, 2, tb_dest_name(d), -1, SQLITE_STATIC);
        sqlite3_bind_int64(s_cnt, 3, (int64_t)s->r.dest[d]);
        if (sqlite3_step(s_cnt) != SQLITE_DONE)
            return -1;
        sqlite3_reset(s_cnt);
    }
    return 0;
}

/* One group's ranks: devices, rank row, time span. A group of files is one
 * rank, named after its last file; a DB that holds several ranks gives each
 * of them its own facts, and the group's other files add to its first.
 * 0, or -1 on a SQLite error. */
static int unit_rank_rows(sqlite3_stmt *s_rdm, sqlite3_stmt *s_rank, sqlite3_stmt *s_sess, const unit *g,
                          const src_info *src, const int64_t *final)
{
    size_t from = g->dbr.n ? 1 : 0;
    rank_facts f = {0};
    if (g->dbr.n) {
        const db_rank *d = &g->dbr.v[0];
        facts_add(&f, d->devices, d->has_times, d->min_ns, d->max_ns, d->has_base_time, d->base_time_ns);
    }
    for (size_t k = g->first + from; k < g->first + g->n; k++) {
        const import_result *r = &src[k].r;
        facts_add(&f, r->devices_seen, r->has_times, r->min_ns, r->max_ns, r->has_base_time, r->base_time_ns);
    }
    const char *last = src[g->first + g->n - 1].path;
    if (!g->dbr.n)
        return rank_rows(s_rdm, s_rank, s_sess, (int)final[g->rank], &f, NULL, last);
    for (size_t j = 0; j < g->dbr.n; j++) {
        const db_rank *d = &g->dbr.v[j];
        rank_facts dj = {0};
        if (j > 0)
            facts_add(&dj, d->devices, d->has_times, d->min_ns, d->max_ns, d->has_base_time, d->base_time_ns);
        if (rank_rows(s_rdm, s_rank, s_sess, (int)final[g->rank + (int)j], j ? &dj : &f, d->host,
                      d->source ? d->source : src[g->first].path))
            return -1;
    }
    return 0;
}

/* TB_SOURCE row of a file seen but not read (id gid), so `info` can say
 * what was left out. 0, or -1 on a SQLite error. */
static int ignored_row(sqlite3_stmt *s_src, const input_file *f, int64_t gid, const tb_load_options *opt)
{
    struct stat sb;
    int64_t bytes = 0, mtime = 0;
    if (stat(f->path, &sb) == 0) {
        bytes = (int64_t)sb.st_size;
        mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
    }
    sqlite3_bind_int64(s_src, 1, gid);
    sqlite3_bind_null(s_src, 2);
    sqlite3_bind_text(s_src, 3, f->path, -1, SQLITE_STATIC);
    sqlite3_bind_text(s_src, 4, f->note ? "skipped" : "ignored", -1, SQLITE_STATIC);
    sqlite3_bind_int64(s_src, 5, bytes);
    sqlite3_bind_int64(s_src, 6, mtime);
    sqlite3_bind_int64(s_src, 7, 0);
    sqlite3_bind_int64(s_src, 8, 0);
    sqlite3_bind_text(s_src, 9, f->note ? f->note : "not a format tracebook reads", -1, SQLITE_STATIC);
    bind_relative(s_src, opt, f->path);
    if (sqlite3_step(s_src) != SQLITE_DONE)
        return -1;
    sqlite3_reset(s_src);
    return 0;
}

/* final[p]: the rankId of provisional rank p after load_books_apply_ranks. */
tb_status load_books_write(dbw *w, src_info *src, size_t nsrc, size_t nsrc_all, const unit *units, size_t nunits,
                           const int64_t *final, const input_file *ignored, size_t n_ignored,
                           const tb_load_options *opt, const import_ids *ids, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *s_src = NULL, *s_cnt = NULL, *s_rdm = NULL, *s_rank = NULL, *s_sess = NULL;
    tb_status st = TB_ERR_DB;
    if (sqlite3_prepare_v2(db, "INSERT INTO TB_SOURCE VALUES(?,?,?,?,?,?,?,?,?,?,?)", -1, &s_src, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO TB_LOAD_COUNT VALUES(?,?,?)", -1, &s_cnt, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO RANK_DEVICE_MAP VALUES(?,?)", -1, &s_rdm, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO TB_RANK VALUES(?,?,?)", -1, &s_rank, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO SESSION_TIME_INFO VALUES(?,?,?,?)", -1, &s_sess, NULL)) {
        tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
        goto done;
    }
    for (size_t i = 0; i < nsrc; i++)
        if (source_rows(s_src, s_cnt, &src[i], opt))
            goto dberr;
    for (size_t u = 0; u < nunits; u++)
        if (!units[u].cluster && units[u].n != 0 && unit_rank_rows(s_rdm, s_rank, s_sess, &units[u], src, final))
            goto dberr;
    for (size_t i = 0; i < n_ignored; i++)
        if (ignored_row(s_src, &ignored[i], (int64_t)(nsrc_all + i) + 1, opt))
            goto dberr;
    if (load_books_meta(w, ids, err) != TB_OK) {
        st = err->code;
        goto done;
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
 * ids themselves, API slices without a connection id. What the writer saw
 * of the rows answers first: when no row can need it, the tables are not
 * scanned. */
tb_status load_books_bind_h2d(dbw *w, tb_error *err)
{
    static const char h2d[] = "(SELECT id FROM STRING_IDS WHERE value = 'HostToDevice')";
    char q[512];
    snprintf(q, sizeof q,
             "SELECT EXISTS (SELECT 1 FROM TB_FLOW WHERE cat = %s AND toNs IS NOT NULL"
             " AND (connectionId IS NULL OR connectionId >= 4294967296))",
             h2d);
    tb_status st = TB_OK;
    if (dbw_seen_flow_unbound(w) && sql_true(w, q))
        st = dbw_exec(w, bind_h2d_flows_sql, err);
    if (st == TB_OK && dbw_seen_cann_no_conn(w) &&
        sql_true(w, "SELECT EXISTS (SELECT 1 FROM CANN_API WHERE connectionId IS NULL)")) {
        snprintf(q, sizeof q, "SELECT EXISTS (SELECT 1 FROM TB_FLOW WHERE cat = %s)", h2d);
        if (sql_true(w, q))
            st = dbw_exec(w, bind_h2d_api_sql, err);
    }
    return st;
}

/*
 * The PMU metrics a summary CSV staged (TB_KERNEL_PMU: its kernels' tasks
 * came from a better source, a timeline or a DB) onto the tasks they belong
 * to: the task of the same rank and device (any device when the CSV named
 * none) that starts at the same ns with the same name. One value per task and metric; a task that has PMU rows
 * already (an msprof DB's) keeps them. The rows moved are deleted; what
 * matched no task stays.
 */
tb_status load_books_bind_pmu(dbw *w, tb_error *err)
{
    if (!sql_true(w, "SELECT EXISTS (SELECT 1 FROM TB_KERNEL_PMU)"))
        return TB_OK;
    tb_status st = dbw_exec(w,
                            "CREATE INDEX tb_kernel_pmu_at ON TB_KERNEL_PMU(rankId, startNs);"
                            "CREATE TEMP TABLE pmu_match AS"
                            " SELECT p.rowid AS pr, t.globalTaskId AS gid, p.metric AS metric, p.value AS value,"
                            "  t.rankId AS rankId"
                            " FROM TASK t JOIN TB_KERNEL_PMU p ON p.rankId = t.rankId AND p.startNs = t.startNs"
                            "  AND (p.deviceId IS NULL OR p.deviceId = t.deviceId) AND p.name = t.name"
                            " WHERE t.globalTaskId NOT IN (SELECT globalTaskId FROM TASK_PMU_INFO);"
                            "INSERT INTO TASK_PMU_INFO (globalTaskId, name, value, rankId)"
                            " SELECT gid, metric, value, rankId FROM pmu_match GROUP BY gid, metric ORDER BY min(pr);"
                            "DROP INDEX tb_kernel_pmu_at;",
                            err);
    /* usually every staged value found its task: the table is emptied whole */
    if (!st)
        st = dbw_exec(w,
                      sql_true(w, "SELECT (SELECT count(*) FROM pmu_match) = (SELECT count(*) FROM TB_KERNEL_PMU)")
                          ? "DELETE FROM TB_KERNEL_PMU"
                          : "DELETE FROM TB_KERNEL_PMU WHERE rowid IN (SELECT pr FROM pmu_match)",
                      err);
    if (!st)
        st = dbw_exec(w, "DROP TABLE pmu_match", err);
    return st;
}

/*
 * A Kineto collective kernel (a COMMUNICATION_OP row with a connection id,
 * the correlation id) is launched by the runtime call of that id; the
 * record_param_comms call of the same thread that holds the launch's start
 * (the innermost one) says what the collective moved, as TraceLens reads
 * it. Its Collective name becomes the op's opType (NCCL and RCCL alike:
 * RCCL kernels are all named ncclDevKernel_Generic), In msg nelems its
 * count, its dtype the dataType (ENUM_HCCL_DATA_TYPE) and, through the
 * bytes per element, the size of the op's COMMUNICATION_TASK_INFO row; its
 * Process Group Name the groupName. Ops with no such call keep what the
 * kernel's name gave. The ops come first (CROSS JOIN: SQLite keeps the
 * order), each finding its launch through an automatic index on the
 * launches; the other way round the planner chose scanned every op for
 * every launch.
 */
static const char bind_collectives_sql[] =
    "CREATE INDEX tb_collective_at ON TB_COLLECTIVE(rankId, globalTid, startNs);"
    "CREATE TEMP TABLE coll_match AS"
    " SELECT m.orow AS orow, m.rankId AS rankId, m.opId AS opId, c.collective AS collective, c.inNelems AS n,"
    "  c.groupName AS groupName, s.value AS dtype,"
    "  CASE s.value WHEN 'Float' THEN 4 WHEN 'Int' THEN 2 WHEN 'Long' THEN 5 WHEN 'BFloat16' THEN 11"
    "   WHEN 'Byte' THEN 7 WHEN 'Double' THEN 10 WHEN 'Half' THEN 3 WHEN 'Short' THEN 1 WHEN 'Char' THEN 0 END AS dt,"
    "  CASE s.value WHEN 'Float' THEN 4 WHEN 'Int' THEN 4 WHEN 'Long' THEN 8 WHEN 'BFloat16' THEN 2"
    "   WHEN 'Bool' THEN 1 WHEN 'Byte' THEN 1 WHEN 'Double' THEN 8 WHEN 'Half' THEN 2 WHEN 'Short' THEN 2"
    "   WHEN 'Char' THEN 1 END AS width"
    " FROM (SELECT o.rowid AS orow, o.rankId AS rankId, o.opId AS opId,"
    "        (SELECT c.rowid FROM TB_COLLECTIVE c WHERE c.rankId IS a.rankId AND c.globalTid = a.globalTid"
    "          AND c.startNs <= a.startNs AND c.endNs >= a.startNs ORDER BY c.startNs DESC LIMIT 1) AS crow"
    "       FROM COMMUNICATION_OP o"
    "       CROSS JOIN (SELECT rankId, connectionId, globalTid, min(startNs) AS startNs FROM CANN_API"
    "             WHERE connectionId IN (SELECT connectionId FROM COMMUNICATION_OP) GROUP BY rankId, connectionId) a"
    "         ON a.rankId IS o.rankId AND a.connectionId = o.connectionId) m"
    " JOIN TB_COLLECTIVE c ON c.rowid = m.crow LEFT JOIN STRING_IDS s ON s.id = c.dtype"
    " WHERE c.collective IS NOT NULL;"
    "UPDATE COMMUNICATION_OP SET opType = m.collective, count = coalesce(m.n, COMMUNICATION_OP.count),"
    " dataType = coalesce(m.dt, COMMUNICATION_OP.dataType),"
    " groupName = coalesce(m.groupName, COMMUNICATION_OP.groupName)"
    " FROM coll_match m WHERE COMMUNICATION_OP.rowid = m.orow;"
    "UPDATE COMMUNICATION_TASK_INFO SET size = coalesce(m.n * m.width, COMMUNICATION_TASK_INFO.size),"
    " dataType = coalesce(m.dt, COMMUNICATION_TASK_INFO.dataType)"
    " FROM coll_match m WHERE COMMUNICATION_TASK_INFO.opId = m.opId AND COMMUNICATION_TASK_INFO.rankId IS m.rankId;"
    "DROP TABLE coll_match;"
    "DROP INDEX tb_collective_at;";

tb_status load_books_bind_collectives(dbw *w, tb_error *err)
{
    if (!sql_true(w, "SELECT EXISTS (SELECT 1 FROM TB_COLLECTIVE) AND EXISTS (SELECT 1 FROM COMMUNICATION_OP"
                     " WHERE connectionId IS NOT NULL)"))
        return TB_OK;
    return dbw_exec(w, bind_collectives_sql, err);
}

/*
 * What msprof's own DBs always hold and a rank loaded from summary CSVs
 * lacks, for the recipes that read them (msprof-analyze's hccl_sum,
 * slow_rank, cluster_time_summary):
 * - RANK_DEVICE_MAP: a rank no file named a device of (kernel_details.csv
 *   without Device_id) gets one row per device its tasks ran on;
 * - COMMUNICATION_OP.groupName: an op without one (kernel_details.csv names
 *   no group) takes the group its rank's communication.json gives the op of
 *   that name (TB_COMM_OP_STAT); else, for torch_npu's op names
 *   hcom_<kind>__<NNN>_<i>, whose NNN are the last three digits of the
 *   group's name, the one group name the load knows (TB_COMM_OP_STAT,
 *   TB_COMM_GROUP of any rank) that ends in them. An op that fits none or
 *   several keeps NULL.
 */
static const char fill_rank_device_sql[] =
    "INSERT INTO RANK_DEVICE_MAP (rankId, deviceId)"
    " SELECT DISTINCT rankId, deviceId FROM TASK t WHERE rankId IS NOT NULL AND deviceId IS NOT NULL"
    "  AND NOT EXISTS (SELECT 1 FROM RANK_DEVICE_MAP m WHERE m.rankId = t.rankId)"
    " ORDER BY rankId, deviceId";

static const char fill_group_sql[] =
    "CREATE TEMP TABLE tb_op_group AS"
    " SELECT rankId, opName, min(groupName) AS g FROM TB_COMM_OP_STAT WHERE groupName IS NOT NULL"
    " GROUP BY rankId, opName HAVING count(DISTINCT groupName) = 1;"
    "UPDATE COMMUNICATION_OP SET groupName = (SELECT g FROM tb_op_group o WHERE o.rankId IS COMMUNICATION_OP.rankId"
    "  AND o.opName = COMMUNICATION_OP.opName)"
    " WHERE groupName IS NULL AND EXISTS (SELECT 1 FROM tb_op_group o WHERE o.rankId IS COMMUNICATION_OP.rankId"
    "  AND o.opName = COMMUNICATION_OP.opName);"
    "DROP TABLE tb_op_group;"
    "CREATE TEMP TABLE tb_groups AS SELECT DISTINCT g.id AS id, g.value AS name FROM STRING_IDS g"
    " WHERE g.id IN (SELECT groupName FROM TB_COMM_OP_STAT UNION SELECT groupName FROM TB_COMM_GROUP);"
    "CREATE TEMP TABLE tb_op_tail AS"
    " SELECT s.id AS op, substr(t.tail, 1, instr(t.tail, '_') - 1) AS nnn"
    " FROM STRING_IDS s JOIN (SELECT id, substr(value, instr(value, '__') + 2) AS tail FROM STRING_IDS"
    "  WHERE value LIKE 'hcom\\_%\\_\\_%' ESCAPE '\\') t ON t.id = s.id"
    " WHERE s.id IN (SELECT opName FROM COMMUNICATION_OP WHERE groupName IS NULL) AND instr(t.tail, '_') = 4;"
    "UPDATE COMMUNICATION_OP SET groupName = (SELECT min(g.id) FROM tb_op_tail o JOIN tb_groups g"
    "  ON substr(g.name, -3) = o.nnn WHERE o.op = COMMUNICATION_OP.opName)"
    " WHERE groupName IS NULL AND (SELECT count(*) FROM tb_op_tail o JOIN tb_groups g"
    "  ON substr(g.name, -3) = o.nnn WHERE o.op = COMMUNICATION_OP.opName) = 1;"
    "DROP TABLE tb_op_tail; DROP TABLE tb_groups;";

/* fill_rank_device_sql over the (rankId, deviceId) pairs the writer saw in
 * TASK (n of them, at most 64) instead of a scan of TASK: the same rows. */
static tb_status fill_rank_device_seen(dbw *w, const int64_t (*pairs)[2], size_t n, tb_error *err)
{
    char sql[64 * 48 + 512];
    size_t at = (size_t)snprintf(sql, sizeof sql, "WITH t(rankId, deviceId) AS (VALUES ");
    if (n == 0)
        return TB_OK;
    for (size_t i = 0; i < n && at < sizeof sql; i++)
        at += (size_t)snprintf(sql + at, sizeof sql - at, "%s(%lld,%lld)", i ? "," : "", (long long)pairs[i][0],
                               (long long)pairs[i][1]);
    if (at < sizeof sql)
        at += (size_t)snprintf(sql + at, sizeof sql - at,
                               ") INSERT INTO RANK_DEVICE_MAP (rankId, deviceId) SELECT DISTINCT rankId, deviceId FROM t"
                               " WHERE NOT EXISTS (SELECT 1 FROM RANK_DEVICE_MAP m WHERE m.rankId = t.rankId)"
                               " ORDER BY rankId, deviceId");
    if (at >= sizeof sql)
        return tb_error_set(err, TB_ERR_INTERNAL, "RANK_DEVICE_MAP: %zu device pairs do not fit", n);
    return dbw_exec(w, sql, err);
}

tb_status load_books_fill_recipe_tables(dbw *w, int as_written, tb_error *err)
{
    const int64_t (*pairs)[2];
    size_t n;
    tb_status st = as_written && dbw_seen_task_devices(w, &pairs, &n) == 0 ? fill_rank_device_seen(w, pairs, n, err)
                                                                            : dbw_exec(w, fill_rank_device_sql, err);
    if (!st && sql_true(w, "SELECT EXISTS (SELECT 1 FROM COMMUNICATION_OP WHERE groupName IS NULL)"))
        st = dbw_exec(w, fill_group_sql, err);
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
tb_status load_books_apply_ranks(dbw *w, const int64_t *claim, const size_t *who, const src_info *src, size_t nranks,
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
                load_warn_src(wl, msg, src[who[g]].gid);
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

/* Rows of cluster-level files belong to no rank unless they name one. */
tb_status load_books_clear_cluster(dbw *w, tb_error *err)
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

tb_status load_books_store_torch_links(dbw *w, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    db_torch_links l;
    int rc = db_torch_links_make(db, &l);
    if (!rc && (l.ncalls || l.nids))
        rc = db_torch_links_store(db, &l);
    db_torch_links_free(&l);
    if (rc == -2)
        return tb_error_set(err, TB_ERR_NOMEM, "linking the PyTorch calls to their tasks: out of memory");
    return rc ? tb_error_set(err, TB_ERR_DB, "linking the PyTorch calls to their tasks: %s", sqlite3_errmsg(db))
              : TB_OK;
}
