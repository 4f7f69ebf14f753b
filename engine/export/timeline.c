/* SPDX-License-Identifier: MIT */
/*
 * timeline.c - `export timeline`: the unified DB written back as a
 * Chrome-trace timeline in msprof's layout (docs/timeline.md).
 *
 * The export is the inverse of the trace routing of engine/ingest/
 * (docs/inputs.md): each table's rows become the X slices of the layer they
 * came from (PYTORCH_API -> Python, CANN_API -> CANN, TASK -> Ascend
 * Hardware or, for the small HCCL tasks, Communication, COMMUNICATION_OP ->
 * Communication, OVERLAP_ANALYSIS -> Overlap Analysis, MSTX_EVENTS ->
 * MsprofTx), TB_EVENT rows are written as they were read, TB_COUNTER rows
 * become C events again, TB_FLOW rows s/f pairs. A rank loaded from a
 * Kineto trace keeps Kineto's layout instead: a {"traceEvents": [...]}
 * object, numeric ts, the categories the rows came from (kernel,
 * cuda_runtime, cpu_op, ...) and the trace's own pids (devices for GPU work).
 *
 * Processes. A rank's TB_PROCESS and TB_THREAD rows (the input timeline's
 * metadata) give pids, names, labels and sort indices, so a timeline read
 * and exported again keeps its layout. Rows without such a process (a DB
 * input) go to a process made here with msprof's pid layout,
 * (realPid << 10) | (sortIndex << 5) | deviceId (31 for the host), and
 * msprof's sort indices (Python 0, MsprofTx 6, CANN 7, Ascend Hardware 14,
 * Communication 16, Overlap Analysis 31). Every slice starts with the
 * metadata of the processes known when it starts and ends with that of the
 * processes met while it was written, so every pid of every file is named.
 *
 * Layers are kept or dropped per process by the json_process key of its
 * name (msprof's table, formats.md); names without a key (Python, Python GC,
 * Kineto's processes) are always kept. Events are read in storage order
 * (no ORDER BY: a sort of millions of rows costs more than the export), one
 * row at a time, through the window's TEMP views when a window is given, so
 * memory does not grow with the number of events. Overlap Analysis lanes
 * come from OVERLAP_ANALYSIS, or, for a rank that has none, from the
 * computed overlap_lanes table (engine/metrics).
 *
 * This file holds the processes and threads, their metadata and the run
 * over ranks and files; the writers of each layer's events are in
 * timeline_events.c, and timeline_int.h is what the two share.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "metrics/metrics.h"
#include "output/timeline_out.h"
#include "spec/spec.h"
#include "query/window.h"
#include "session/session.h"
#include "tracebook/db.h"
#include "tracebook/export.h"
#include "db/ask.h"
#include "export/finish.h"
#include "export/timeline_int.h"
#include "util/dirs.h"

/* ---- layers ----------------------------------------------------------------- */

static tb_status load_procs(tl *t, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    tb_status st = TB_OK;
    if (sqlite3_prepare_v2(t->db, "SELECT pid, name, labels, sortIndex, deviceId FROM TB_PROCESS WHERE rankId IS ?1",
                           -1, &q, NULL) != SQLITE_OK)
        return TB_OK; /* a DB without TB_PROCESS: every process is made here */
    sqlite3_bind_int64(q, 1, t->rank);
    while (sqlite3_step(q) == SQLITE_ROW) {
        jv v;
        if (timeline_jv_col(q, 0, &v)) {
            st = timeline_nomem(err);
            break;
        }
        if (timeline_find_proc(t, &v) >= 0) {
            timeline_jv_free(&v);
            continue;
        }
        char *name = timeline_dup_col(q, 1), *labels = timeline_dup_col(q, 2);
        if (timeline_add_proc(t, v, name, labels, sqlite3_column_int64(q, 3), sqlite3_column_type(q, 3) != SQLITE_NULL,
                              sqlite3_column_type(q, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 4)) < 0) {
            st = timeline_nomem(err);
            break;
        }
    }
    sqlite3_finalize(q);
    if (st || sqlite3_prepare_v2(t->db, "SELECT pid, tid, name, sortIndex FROM TB_THREAD WHERE rankId IS ?1", -1, &q,
                                 NULL) != SQLITE_OK)
        return st;
    sqlite3_bind_int64(q, 1, t->rank);
    while (sqlite3_step(q) == SQLITE_ROW && !st) {
        if (t->nt == t->capt) {
            size_t cap = t->capt ? t->capt * 2 : 64;
            thr *p = realloc(t->thrs, cap * sizeof *p);
            if (!p) {
                st = timeline_nomem(err);
                break;
            }
            t->thrs = p;
            t->capt = cap;
        }
        thr *h = &t->thrs[t->nt];
        memset(h, 0, sizeof *h);
        if (timeline_jv_col(q, 0, &h->pid) || timeline_jv_col(q, 1, &h->tid)) {
            timeline_jv_free(&h->pid);
            st = timeline_nomem(err);
            break;
        }
        h->name = timeline_dup_col(q, 2);
        h->sort = sqlite3_column_int64(q, 3);
        h->has_sort = sqlite3_column_type(q, 3) != SQLITE_NULL;
        t->nt++;
    }
    sqlite3_finalize(q);
    return st;
}

static void free_procs(tl *t)
{
    for (size_t i = 0; i < t->np; i++) {
        timeline_jv_free(&t->procs[i].pid);
        free(t->procs[i].name);
        free(t->procs[i].labels);
    }
    for (size_t i = 0; i < t->nt; i++) {
        timeline_jv_free(&t->thrs[i].pid);
        timeline_jv_free(&t->thrs[i].tid);
        free(t->thrs[i].name);
    }
    free(t->procs);
    free(t->thrs);
    t->procs = NULL;
    t->thrs = NULL;
    t->np = t->capp = t->nt = t->capt = 0;
    t->last = 0;
}

/* ---- metadata events ------------------------------------------------------------ */

static tb_status meta(tl *t, const jv *pid, const jv *tid, const char *what, const char *key, const char *s,
                      int64_t i, tb_error *err)
{
    tlw *w = t->w;
    tlw_begin(w);
    tlw_cstr(w, "name", what);
    timeline_put_jv(w, "pid", pid);
    if (tid)
        timeline_put_jv(w, "tid", tid);
    else
        tlw_int(w, "tid", 0);
    tlw_cstr(w, "ph", "M");
    tlw_obj(w, "args");
    if (s)
        tlw_cstr(w, key, s);
    else
        tlw_int(w, key, i);
    tlw_obj_end(w);
    return tlw_end(w, err);
}

/*
 * The first event of every file is a metadata event of tracebook's own,
 * `tracebook_export`, on the pid of the file's first process (no
 * process_name: it names and adds no process; a Kineto trace's pid 0, its
 * GPU, keeps its one name), that says what made the file and from which
 * inputs
 * (base name, size, modification time of each file the DB was loaded
 * from). A later scan of the folder reads it to pass the file over when
 * those inputs load in the same run (ingest/own_outputs.c): the timeline
 * would count their events twice. Loading the file alone keeps it.
 */
static tb_status origin_meta(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    const char *sql = "SELECT json_group_array(json_array(substr(path, length(rtrim(path, replace(path, '/', ''))) + 1),"
                      " bytes, mtimeNs)) FROM TB_SOURCE WHERE kind NOT IN ('ignored', 'skipped') AND path IS NOT NULL";
    if (sqlite3_prepare_v2(t->db, sql, -1, &q, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", t->db_path, sqlite3_errmsg(t->db));
    tb_status st = TB_OK;
    if (sqlite3_step(q) == SQLITE_ROW) {
        tlw *w = t->w;
        tlw_begin(w);
        tlw_cstr(w, "name", "tracebook_export");
        const jv *pid = NULL;
        for (size_t i = 0; i < t->np && !pid; i++)
            if (t->procs[i].keep)
                pid = &t->procs[i].pid;
        if (pid)
            timeline_put_jv(w, "pid", pid);
        else
            tlw_int(w, "pid", 0); /* no process: the file holds no event of one */
        tlw_int(w, "tid", 0);
        tlw_cstr(w, "ph", "M");
        tlw_obj(w, "args");
        tlw_cstr(w, "version", tb_version());
        tlw_raw(w, "sources", (const char *)sqlite3_column_text(q, 0), (size_t)sqlite3_column_bytes(q, 0));
        tlw_obj_end(w);
        st = tlw_end(w, err);
    }
    sqlite3_finalize(q);
    return st;
}

static tb_status proc_meta(tl *t, proc *p, tb_error *err)
{
    char num[32];
    const char *name = p->name;
    if (!name) {
        if (p->pid.text)
            name = p->pid.s;
        else {
            snprintf(num, sizeof num, "%" PRId64, p->pid.i);
            name = num;
        }
    }
    tb_status st = meta(t, &p->pid, NULL, "process_name", "name", name, 0, err);
    if (!st && p->labels)
        st = meta(t, &p->pid, NULL, "process_labels", "labels", p->labels, 0, err);
    if (!st && p->has_sort)
        st = meta(t, &p->pid, NULL, "process_sort_index", "sort_index", NULL, p->sort, err);
    p->written = 1;
    return st;
}

static tb_status thread_meta(tl *t, thr *h, tb_error *err)
{
    tb_status st = TB_OK;
    h->written = 1;
    if (h->name)
        st = meta(t, &h->pid, &h->tid, "thread_name", "name", h->name, 0, err);
    if (!st && h->has_sort)
        st = meta(t, &h->pid, &h->tid, "thread_sort_index", "sort_index", NULL, h->sort, err);
    return st;
}

static int thread_kept(tl *t, const thr *h)
{
    long k = timeline_find_proc(t, &h->pid);
    return k < 0 || t->procs[k].keep;
}

/* Every slice starts with the metadata of every process and thread known. */
static tb_status begin_slice(void *ctx, tlw *w, tb_error *err)
{
    tl *t = ctx;
    t->w = w; /* also during tlw_create, before it returns w */
    tb_status st = origin_meta(t, err);
    for (size_t i = 0; i < t->np && !st; i++) {
        t->procs[i].written = 0;
        if (t->procs[i].keep)
            st = proc_meta(t, &t->procs[i], err);
        else
            t->procs[i].written = 1;
    }
    for (size_t i = 0; i < t->nt && !st; i++) {
        t->thrs[i].written = 0;
        if (thread_kept(t, &t->thrs[i]))
            st = thread_meta(t, &t->thrs[i], err);
        else
            t->thrs[i].written = 1;
    }
    return st;
}

/* ... and ends with the metadata of those met while it was written. */
static tb_status end_slice(void *ctx, tlw *w, tb_error *err)
{
    tl *t = ctx;
    t->w = w; /* also during tlw_create, before it returns w */
    tb_status st = TB_OK;
    for (size_t i = 0; i < t->np && !st; i++)
        if (!t->procs[i].written && t->procs[i].keep)
            st = proc_meta(t, &t->procs[i], err);
    for (size_t i = 0; i < t->nt && !st; i++)
        if (!t->thrs[i].written && thread_kept(t, &t->thrs[i]))
            st = thread_meta(t, &t->thrs[i], err);
    return st;
}

/* The files the DB was loaded from (TB_SOURCE) and the DB itself: an
 * output never replaces one of them (compared by identity, not by name). */
static tb_status collect_inputs(tl *t, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    struct stat sb;
    if (stat(t->db_path, &sb) == 0) {
        if (!(t->inputs = malloc(sizeof *t->inputs)))
            return timeline_nomem(err);
        t->inputs[t->n_inputs++] = (struct fid){sb.st_dev, sb.st_ino};
    }
    if (sqlite3_prepare_v2(t->db, "SELECT DISTINCT path FROM TB_SOURCE WHERE kind IS NOT 'ignored'", -1, &q, NULL) !=
        SQLITE_OK)
        return TB_OK; /* not a DB tracebook wrote: no sources listed */
    tb_status st = TB_OK;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *p = timeline_col_text(q, 0);
        if (!p || stat(p, &sb) != 0)
            continue;
        struct fid *v = realloc(t->inputs, (t->n_inputs + 1) * sizeof *v);
        if (!v) {
            st = timeline_nomem(err);
            break;
        }
        t->inputs = v;
        v[t->n_inputs++] = (struct fid){sb.st_dev, sb.st_ino};
    }
    sqlite3_finalize(q);
    return st;
}

static tb_status check_path(void *ctx, const char *path, tb_error *err)
{
    const tl *t = ctx;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return TB_OK;
    for (size_t i = 0; i < t->n_inputs; i++)
        if (t->inputs[i].dev == sb.st_dev && t->inputs[i].ino == sb.st_ino)
            return tb_error_at(err, TB_ERR_USAGE, path, 0, 0, -1,
                               "refusing to replace an input file: write the output elsewhere (-o)");
    return TB_OK;
}

/* ---- ranks and files --------------------------------------------------------------------- */

static int64_t query_int(sqlite3 *db, const char *sql, int64_t rank, int64_t dflt, int *found)
{
    sqlite3_stmt *q = NULL;
    int64_t v = dflt;
    if (found)
        *found = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, rank);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
            v = sqlite3_column_int64(q, 0);
            if (found)
                *found = 1;
        }
    }
    sqlite3_finalize(q);
    return v;
}

/* The category a Kineto rank's runtime calls had (docs/inputs.md, Kineto
 * categories) into t->runtime_cat; "" when today's (cuda_runtime). A DB
 * without TB_PROFILE_META (an earlier version's) has none. */
static void runtime_category(tl *t)
{
    sqlite3_stmt *q = NULL;
    t->runtime_cat[0] = 0;
    if (sqlite3_prepare_v2(t->db, "SELECT value FROM TB_PROFILE_META WHERE rankId IS ?1 AND name = 'runtimeCategory' "
                                  "AND typeof(value) = 'text' LIMIT 1", -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, t->rank);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_bytes(q, 0) > 0 &&
            (size_t)sqlite3_column_bytes(q, 0) < sizeof t->runtime_cat)
            memcpy(t->runtime_cat, sqlite3_column_text(q, 0), (size_t)sqlite3_column_bytes(q, 0) + 1);
    }
    sqlite3_finalize(q);
}

/*
 * The members a Kineto rank's file gets after traceEvents, into *out (new,
 * free it): the trace's own top-level members as the load kept them
 * (TB_PROFILE_META rows but tracebook's own, each name once; none named
 * traceEvents, which the file holds already: a key written with escapes,
 * "trace\u0045vents", reads as a member of that name), its
 * distributedInfo with the rank's id as "rank" (so that the file loads back
 * as the same rank; {"rank": R} when the trace had none), and the base time
 * when the trace had one.
 */
static tb_status kineto_tail(tl *t, char **out, tb_error *err)
{
    sqlite3_str *s = sqlite3_str_new(t->db);
    sqlite3_stmt *q = NULL;
    char **seen = NULL;
    size_t nseen = 0;
    int dist = 0, found, oom = 0, step = SQLITE_DONE;
    /* a DB of an earlier version may lack the table: then it had no members to give back */
    if (sqlite3_prepare_v2(t->db, "SELECT name, json_quote(name), CASE WHEN name = 'distributedInfo' AND "
                                  "json_type(value) = 'object' THEN json_set(value, '$.rank', ?1) ELSE value END "
                                  "FROM TB_PROFILE_META WHERE rankId IS ?1 AND typeof(name) = 'text' AND name NOT IN "
                                  "('traceEvents', 'traceEvents[0].correlation', 'runtimeCategory', "
                                  "'baseTimeNanoseconds') AND json_valid(value)", -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, t->rank);
        while ((step = sqlite3_step(q)) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(q, 0);
            const char *key = (const char *)sqlite3_column_text(q, 1), *val = (const char *)sqlite3_column_text(q, 2);
            if (!name || !key || !val) {
                oom = 1;
                break;
            }
            size_t i = 0;
            while (i < nseen && strcmp(seen[i], name) != 0)
                i++;
            if (i < nseen)
                continue;
            char **ns = realloc(seen, (nseen + 1) * sizeof *ns);
            if (ns)
                seen = ns;
            if (!ns || !(seen[nseen] = strdup(name))) {
                oom = 1;
                break;
            }
            nseen++;
            dist |= strcmp(name, "distributedInfo") == 0;
            sqlite3_str_appendf(s, "%s%s: %s", sqlite3_str_length(s) ? ",\n" : "", key, val);
        }
    }
    /* a read that failed part way gives no file with part of the members */
    tb_status rc = oom || step == SQLITE_DONE ? TB_OK
                                              : tb_error_set(err, TB_ERR_DB, "%s: TB_PROFILE_META: %s", t->db_path,
                                                             sqlite3_errmsg(t->db));
    sqlite3_finalize(q);
    for (size_t i = 0; i < nseen; i++)
        free(seen[i]);
    free(seen);
    if (!dist)
        sqlite3_str_appendf(s, "%s\"distributedInfo\": {\"rank\": %lld}", sqlite3_str_length(s) ? ",\n" : "",
                            (long long)t->rank);
    int64_t base = query_int(t->db, "SELECT baseTimeNs FROM SESSION_TIME_INFO WHERE rankId IS ?1", t->rank, 0, &found);
    if (found)
        sqlite3_str_appendf(s, ",\n\"baseTimeNanoseconds\": %lld", (long long)base);
    int bad = oom || sqlite3_str_errcode(s);
    *out = sqlite3_str_finish(s);
    if (rc || bad || !*out) {
        sqlite3_free(*out);
        *out = NULL;
        return rc ? rc : timeline_nomem(err);
    }
    return TB_OK;
}

static tb_status export_rank(tl *t, const char *suffix, tb_error *err)
{
    sqlite3 *db = t->db;
    t->kineto = query_int(db, "SELECT EXISTS (SELECT 1 FROM TB_SOURCE WHERE rankId IS ?1 AND kind = 'kineto') "
                              "AND NOT EXISTS (SELECT 1 FROM TB_SOURCE WHERE rankId IS ?1 AND kind = 'ascend timeline')",
                          t->rank, 0, NULL) != 0;
    if (t->kineto)
        runtime_category(t);
    int found;
    t->base_pid = query_int(db, "SELECT globalTid >> 32 FROM PYTORCH_API WHERE rankId IS ?1 LIMIT 1", t->rank, 0, &found);
    if (!found)
        t->base_pid = query_int(db, "SELECT globalTid >> 32 FROM CANN_API WHERE rankId IS ?1 LIMIT 1", t->rank, 0, NULL);
    t->base_pid &= 0x1fffff; /* keep the made pids below 2^31 */
    tb_status st = load_procs(t, err);
    if (!st && t->np == 0 && !t->kineto)
        st = timeline_make_layers(t, err);
    char *tail = NULL;
    if (!st && t->kineto)
        st = kineto_tail(t, &tail, err);
    if (!st) {
        tlw_options wo = {.dir = t->out_dir, .stem = "msprof", .suffix = suffix, .top_object = t->kineto,
                          .tail = tail, .slice_bytes = t->opt->slice_bytes, .begin_slice = begin_slice,
                          .end_slice = end_slice, .check_path = check_path, .ctx = t};
        st = tlw_create(&wo, &t->w, err);
    }
    if (!st)
        st = timeline_write_layers(t, err);
    if (!st)
        st = tlw_finish(t->w, err);
    if (!st) {
        const char *const *paths;
        size_t n = tlw_files(t->w, &paths);
        t->res->files += n;
        t->res->events += tlw_events(t->w);
        for (size_t i = 0; i < n; i++)
            if (t->opt->written)
                t->opt->written(t->opt->ctx, paths[i]);
    }
    tlw_destroy(t->w);
    t->w = NULL;
    sqlite3_free(tail);
    free_procs(t);
    return st;
}

/* The ranks of the DB, in order (TB_RANK, else the ranks of the rows). Returns new in *out. */
static tb_status list_ranks(sqlite3 *db, int64_t **out, size_t *n, tb_error *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT DISTINCT rankId FROM TB_RANK WHERE rankId IS NOT NULL ORDER BY rankId", -1, &q,
                           NULL) != SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT DISTINCT rankId FROM SESSION_TIME_INFO ORDER BY rankId", -1, &q, NULL) !=
            SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "timeline: %s", sqlite3_errmsg(db));
    tb_status st = TB_OK;
    while (sqlite3_step(q) == SQLITE_ROW) {
        int64_t *r = realloc(*out, (*n + 1) * sizeof *r);
        if (!r) {
            st = timeline_nomem(err);
            break;
        }
        *out = r;
        r[(*n)++] = sqlite3_column_int64(q, 0);
    }
    sqlite3_finalize(q);
    if (!st && *n == 0) {
        /* a DB without rank bookkeeping: one rank, 0 */
        if (!(*out = malloc(sizeof **out)))
            return timeline_nomem(err);
        (*out)[0] = 0;
        *n = 1;
    }
    return st;
}

tb_status tb_timeline_write(tb_session *s, const tb_timeline_options *opt, tb_timeline_result *res, tb_error *err)
{
    memset(res, 0, sizeof *res);
    tl t = {.opt = opt, .res = res, .jp = opt->spec ? &opt->spec->json_process : NULL,
            .db = session_db(s, err), .db_path = tb_session_db_path(s), .window = tb_session_window(s)};
    if (!t.db)
        return err->code;
    if (!opt->out_dir)
        tb_export_default_dir(s, t.out_dir, sizeof t.out_dir);
    else
        snprintf(t.out_dir, sizeof t.out_dir, "%s", opt->out_dir);
    if (dirs_make(t.out_dir, 1, 0777) != 0)
        return tb_error_at(err, TB_ERR_IO, t.out_dir, 0, 0, -1, "cannot create the directory: %s",
                           strerror(errno));
    char name[256];
    tb_status st = tb_db_default_name(t.db_path, name, sizeof name, err);
    if (st)
        return st;
    /* "msprof_<stamp>.db" -> "<stamp>" */
    char stamp[64];
    snprintf(stamp, sizeof stamp, "%.*s", (int)(strlen(name) - 10), name + 7);

    /* the window's and the computed lanes' TEMP tables stay in memory only as
     * long as they are small: SQLite spills big ones to a temporary file */
    sqlite3_exec(t.db, "PRAGMA temp_store = FILE; PRAGMA cache_size = -16000", NULL, NULL, NULL);
    window_info wi = {0};
    int64_t *ranks = NULL;
    size_t nranks = 0;
    if (db_has_table(t.db, NULL, "TASK", 1) <= 0) {
        st = tb_error_at(err, TB_ERR_PARSE, t.db_path, 0, 0, -1, "not a unified DB: no TASK table");
        goto done;
    }
    if ((st = collect_inputs(&t, err)) || (st = window_apply(t.db, t.window, &wi, err)))
        goto done;
    snprintf(res->window_label, sizeof res->window_label, "%s", wi.label);
    if ((st = list_ranks(t.db, &ranks, &nranks, err)))
        goto done;
    for (size_t i = 0; i < nranks && !st; i++) {
        if (t.window->set) {
            size_t j = 0;
            while (j < wi.n_ranks && wi.ranks[j].rank != ranks[i])
                j++;
            if (j == wi.n_ranks)
                continue; /* the rank lacks the window's iterations */
        }
        char suffix[160];
        int k = snprintf(suffix, sizeof suffix, "%s", stamp);
        if (nranks > 1)
            k += snprintf(suffix + k, sizeof suffix - (size_t)k, "_rank%" PRId64, ranks[i]);
        if (wi.label[0])
            snprintf(suffix + k, sizeof suffix - (size_t)k, "_%s", wi.label);
        t.rank = ranks[i];
        st = export_rank(&t, suffix, err);
        if (!st)
            res->ranks++;
    }
    if (!st && res->flows_unpaired && opt->note) {
        char msg[96];
        snprintf(msg, sizeof msg, "%" PRIu64 " flows have one end only, as in the input: written so",
                 res->flows_unpaired);
        opt->note(opt->ctx, msg);
    }
done:
    free(ranks);
    free(t.inputs);
    slice_buf_free(&t.abuf);
    slice_buf_free(&t.vbuf);
    window_info_finish(&wi);
    window_reset(t.db);
    return st ? st : export_finish(s, res->ranks, opt->clear_cache, opt->note, opt->ctx, err);
}

tb_status tb_timeline_slice_config(const char *path, int64_t *slice_bytes, tb_error *err)
{
    *slice_bytes = 0;
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        FILE *f = fopen(path, "r");
        if (!f)
            return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot read the slicing file: %s", strerror(errno));
        fclose(f);
        return tb_error_at(err, TB_ERR_PARSE, path, je.line, je.column, je.position, "%s", je.text);
    }
    tb_status st = TB_OK;
    if (!json_is_object(root)) {
        st = tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "the slicing file is not a JSON object");
        goto done;
    }
    /* msprof: "on" turns slicing on, any other value leaves it off */
    json_t *sw = json_object_get(root, "slice_switch");
    if (!json_is_string(sw) || strcmp(json_string_value(sw), "on") != 0)
        goto done;
    json_t *mb = json_object_get(root, "slice_file_size(MB)");
    int64_t size = 200;
    if (json_is_integer(mb) && json_integer_value(mb) >= 200)
        size = json_integer_value(mb);
    *slice_bytes = size * 1024 * 1024;
done:
    json_decref(root);
    return st;
}
