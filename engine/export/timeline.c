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

#define INVALID_ID 4294967295LL
#define HOST_DEVICE 31

/* A pid or tid as the input had it: a number, or text (Kineto's "Spans"). */
typedef struct jv {
    int text;
    int64_t i;
    char *s; /* owned when text */
} jv;

typedef struct proc {
    jv pid;
    char *name, *labels;
    int64_t sort;
    int has_sort;
    int64_t device;     /* -1: none */
    int keep;
    int written;        /* metadata written in the current slice */
    int made;           /* made here (the input had no such process) */
} proc;

typedef struct thr {
    jv pid, tid;
    char *name;
    int64_t sort;
    int has_sort;
    int written;
} thr;

typedef struct tl {
    sqlite3 *db;              /* the session's connection */
    const char *db_path;
    const tb_window *window;  /* the session's */
    char out_dir[4096];       /* the folder written */
    const tb_timeline_options *opt;
    tb_timeline_result *res;
    const tb_json_process *jp;
    int64_t rank;
    int kineto;
    int64_t base_pid;
    proc *procs;
    size_t np, capp;
    thr *thrs;
    size_t nt, capt;
    size_t last;        /* the last proc found: events come in runs */
    tlw *w;
    int lanes_built;
    struct fid { dev_t dev; ino_t ino; } *inputs; /* files an output must not replace */
    size_t n_inputs;
} tl;

/* ---- layers ----------------------------------------------------------------- */

/* process name -> json_process key (formats.md); NULL: no key, always kept */
static const char *layer_key(const char *name)
{
    static const char *const map[][2] = {
        {"Ascend Hardware", "ascend"}, {"Task Scheduler", "ascend"}, {"CANN", "cann"},
        {"Communication", "communication"}, {"Overlap Analysis", "overlap_analyse"}, {"NPU MEM", "npu_mem"},
        {"Step Trace", "step_trace"}, {"MsprofTx", "msproftx"}, {"OS Runtime API", "os_runtime_api"},
        {"CPU Usage", "cpu_usage"}, {"Memory Usage", "memory_usage"}, {"Disk Usage", "disk_usage"},
        {"Network Usage", "network_usage"}, {"AI Core Freq", "freq"}, {"Low Power", "freq"}, {"HBM", "hbm"},
        {"DDR", "ddr"}, {"LLC", "llc"}, {"PCIe", "pcie"}, {"HCCS", "hccs"}, {"NIC", "nic"}, {"RoCE", "roce"},
        {"SIO", "sio"}, {"QoS", "qos"}, {"Acc PMU", "acc_pmu"}, {"Stars Soc Info", "stars_soc"},
        {"Stars Chip Trans", "stars_chip_trans"}, {"CCU", "ccu"}, {"Biu Perf", "biu_perf"}, {"Ub", "ub"},
        {"Block Detail", "block_detail"}, {"DPU", "dpu"}, {"Fusion Task", "fusion_task"},
    };
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(name, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

static int layer_kept(const tl *t, const char *name)
{
    const char *k = layer_key(name);
    if (!k || !t->jp || t->jp->all)
        return 1;
    for (size_t i = 0; i < t->jp->n_layers; i++)
        if (strcmp(t->jp->layers[i], k) == 0)
            return 1;
    return 0;
}

/* ---- processes and threads ---------------------------------------------------- */

static tb_status nomem(tb_error *err)
{
    return tb_error_set(err, TB_ERR_NOMEM, "timeline: out of memory");
}

static char *dup_col(sqlite3_stmt *q, int c)
{
    const unsigned char *s = sqlite3_column_text(q, c);
    return s ? strdup((const char *)s) : NULL;
}

/* Reads a pid/tid column into *v (text copied). Returns -1 on OOM. */
static int jv_col(sqlite3_stmt *q, int c, jv *v)
{
    memset(v, 0, sizeof *v);
    int ty = sqlite3_column_type(q, c);
    if (ty == SQLITE_TEXT) {
        v->text = 1;
        return (v->s = dup_col(q, c)) ? 0 : -1;
    }
    v->i = ty == SQLITE_FLOAT ? (int64_t)sqlite3_column_double(q, c) : sqlite3_column_int64(q, c);
    return 0;
}

static int jv_eq(const jv *a, const jv *b)
{
    return a->text == b->text && (a->text ? strcmp(a->s, b->s) == 0 : a->i == b->i);
}

static void jv_free(jv *v)
{
    if (v->text)
        free(v->s);
    v->s = NULL;
}

static void put_jv(tlw *w, const char *k, const jv *v)
{
    if (v->text)
        tlw_cstr(w, k, v->s);
    else
        tlw_int(w, k, v->i);
}

static long find_proc(tl *t, const jv *pid)
{
    if (t->last < t->np && jv_eq(&t->procs[t->last].pid, pid))
        return (long)t->last;
    for (size_t i = 0; i < t->np; i++)
        if (jv_eq(&t->procs[i].pid, pid)) {
            t->last = i;
            return (long)i;
        }
    return -1;
}

static long find_int_proc(tl *t, int64_t pid)
{
    jv v = {.i = pid};
    return find_proc(t, &v);
}

/* Adds a process (takes ownership of pid's text, name and labels). Returns its index or -1. */
static long add_proc(tl *t, jv pid, char *name, char *labels, int64_t sort, int has_sort, int64_t device)
{
    if (t->np == t->capp) {
        size_t cap = t->capp ? t->capp * 2 : 16;
        proc *p = realloc(t->procs, cap * sizeof *p);
        if (!p) {
            jv_free(&pid);
            free(name);
            free(labels);
            return -1;
        }
        t->procs = p;
        t->capp = cap;
    }
    proc *p = &t->procs[t->np];
    *p = (proc){.pid = pid, .name = name, .labels = labels, .sort = sort, .has_sort = has_sort,
                .device = device, .keep = layer_kept(t, name)};
    return (long)t->np++;
}

static int add_thread(tl *t, const jv *pid, int64_t tid, const char *name, int64_t sort)
{
    if (t->nt == t->capt) {
        size_t cap = t->capt ? t->capt * 2 : 64;
        thr *p = realloc(t->thrs, cap * sizeof *p);
        if (!p)
            return -1;
        t->thrs = p;
        t->capt = cap;
    }
    thr *h = &t->thrs[t->nt];
    memset(h, 0, sizeof *h);
    h->pid = *pid;
    if (pid->text && !(h->pid.s = strdup(pid->s)))
        return -1;
    h->tid.i = tid;
    if (!(h->name = strdup(name))) {
        jv_free(&h->pid);
        return -1;
    }
    h->sort = sort;
    h->has_sort = 1;
    t->nt++;
    return 0;
}

/*
 * The process of a layer (on a device, or the host when device < 0): the
 * input's own when the rank has one of that name and device, else one made
 * with msprof's pid layout. Returns its index, or -1 on OOM.
 */
static long layer_proc(tl *t, const char *name, int64_t device, int sort)
{
    for (size_t i = 0; i < t->np; i++) {
        proc *p = &t->procs[i];
        if (p->name && strcmp(p->name, name) == 0 && (device < 0 || p->device < 0 || p->device == device))
            return (long)i;
    }
    int64_t dev = device < 0 ? HOST_DEVICE : (device & 31);
    int64_t pid = (t->base_pid << 10) | ((int64_t)sort << 5) | dev;
    while (find_int_proc(t, pid) >= 0)
        pid += (int64_t)1 << 10;
    char labels[32];
    if (device < 0)
        snprintf(labels, sizeof labels, "CPU");
    else
        snprintf(labels, sizeof labels, "NPU %" PRId64, device);
    char *n = strdup(name), *l = strdup(labels);
    if (!n || !l) {
        free(n);
        free(l);
        return -1;
    }
    long k = add_proc(t, (jv){.i = pid}, n, l, sort, 1, device);
    if (k >= 0)
        t->procs[k].made = 1;
    if (k >= 0 && strcmp(name, "Overlap Analysis") == 0) {
        static const char *const lanes[] = {"Computing", "Communication", "Communication(Not Overlapped)", "Free"};
        for (int i = 0; i < 4; i++)
            if (add_thread(t, &t->procs[k].pid, i, lanes[i], i))
                return -1;
    }
    return k;
}

/* The process of a pid met in a row: known, or added unnamed. -1 on OOM. */
static long row_proc(tl *t, sqlite3_stmt *q, int col)
{
    jv v;
    if (jv_col(q, col, &v))
        return -1;
    long k = find_proc(t, &v);
    if (k >= 0) {
        jv_free(&v);
        return k;
    }
    return add_proc(t, v, NULL, NULL, 0, 0, -1);
}

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
        if (jv_col(q, 0, &v)) {
            st = nomem(err);
            break;
        }
        if (find_proc(t, &v) >= 0) {
            jv_free(&v);
            continue;
        }
        char *name = dup_col(q, 1), *labels = dup_col(q, 2);
        if (add_proc(t, v, name, labels, sqlite3_column_int64(q, 3), sqlite3_column_type(q, 3) != SQLITE_NULL,
                     sqlite3_column_type(q, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 4)) < 0) {
            st = nomem(err);
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
                st = nomem(err);
                break;
            }
            t->thrs = p;
            t->capt = cap;
        }
        thr *h = &t->thrs[t->nt];
        memset(h, 0, sizeof *h);
        if (jv_col(q, 0, &h->pid) || jv_col(q, 1, &h->tid)) {
            jv_free(&h->pid);
            st = nomem(err);
            break;
        }
        h->name = dup_col(q, 2);
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
        jv_free(&t->procs[i].pid);
        free(t->procs[i].name);
        free(t->procs[i].labels);
    }
    for (size_t i = 0; i < t->nt; i++) {
        jv_free(&t->thrs[i].pid);
        jv_free(&t->thrs[i].tid);
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
    put_jv(w, "pid", pid);
    if (tid)
        put_jv(w, "tid", tid);
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
 * The first event of every file names a process 0 after tracebook (a
 * process without events, which viewers do not draw) and says what made
 * the file and from which inputs
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
        tlw_cstr(w, "name", "process_name");
        tlw_int(w, "pid", 0);
        tlw_int(w, "tid", 0);
        tlw_cstr(w, "ph", "M");
        tlw_obj(w, "args");
        tlw_cstr(w, "name", "tracebook export");
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
    long k = find_proc(t, &h->pid);
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

/* ---- events ------------------------------------------------------------------------ */

static tb_status prep(tl *t, const char *sql, sqlite3_stmt **q, tb_error *err)
{
    if (sqlite3_prepare_v2(t->db, sql, -1, q, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "timeline: %s", sqlite3_errmsg(t->db));
    sqlite3_bind_int64(*q, 1, t->rank);
    return TB_OK;
}

static tb_status step_done(tl *t, sqlite3_stmt *q, int rc, tb_status st, tb_error *err)
{
    if (!st && rc != SQLITE_DONE)
        st = tb_error_set(err, TB_ERR_DB, "timeline: %s", sqlite3_errmsg(t->db));
    sqlite3_finalize(q);
    return st;
}

static int has_table(tl *t, const char *name)
{
    sqlite3_stmt *q = NULL;
    int ok = 0;
    if (sqlite3_prepare_v2(t->db, "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?1 "
                                  "UNION ALL SELECT 1 FROM sqlite_temp_master WHERE name = ?1",
                           -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
        ok = sqlite3_step(q) == SQLITE_ROW;
    }
    sqlite3_finalize(q);
    return ok;
}

static const char *col_text(sqlite3_stmt *q, int c)
{
    return (const char *)sqlite3_column_text(q, c);
}

static int is_null(sqlite3_stmt *q, int c)
{
    return sqlite3_column_type(q, c) == SQLITE_NULL;
}

/* name, pid, tid, ts, dur, ph of an X slice */
static void slice_head(tl *t, const char *name, const jv *pid, const jv *tid, int64_t start, int64_t end)
{
    tlw *w = t->w;
    tlw_begin(w);
    tlw_cstr(w, "name", name ? name : "");
    put_jv(w, "pid", pid);
    put_jv(w, "tid", tid);
    tlw_us(w, "ts", start, !t->kineto);
    tlw_dur(w, "dur", end >= start ? end - start : 0);
    tlw_cstr(w, "ph", "X");
}

static void arg_int_col(tlw *w, const char *k, sqlite3_stmt *q, int c)
{
    if (!is_null(q, c))
        tlw_int(w, k, sqlite3_column_int64(q, c));
}

static void arg_num_col(tlw *w, const char *k, sqlite3_stmt *q, int c)
{
    if (sqlite3_column_type(q, c) == SQLITE_INTEGER)
        tlw_int(w, k, sqlite3_column_int64(q, c));
    else if (sqlite3_column_type(q, c) == SQLITE_FLOAT)
        tlw_real(w, k, sqlite3_column_double(q, c));
}

static void arg_str_col(tlw *w, const char *k, sqlite3_stmt *q, int c)
{
    if (!is_null(q, c))
        tlw_str(w, k, col_text(q, c), (size_t)sqlite3_column_bytes(q, c));
}

static const char *hccl_data_type(sqlite3_stmt *q, int c)
{
    static const char *const names[] = {"INT8", "INT16", "INT32", "FP16", "FP32", "INT64", "UINT64",
                                        "UINT8", "UINT16", "UINT32", "FP64", "BFP16", "INT128", NULL,
                                        "HIF8", "FP8E4M3", "FP8E5M2", "FP8E8M0"};
    if (is_null(q, c))
        return NULL;
    int64_t v = sqlite3_column_int64(q, c);
    return v >= 0 && v < (int64_t)(sizeof names / sizeof names[0]) ? names[v] : NULL;
}

/* pid and tid of a globalTid (pid << 32 | tid) */
static void split_gtid(int64_t g, jv *pid, jv *tid)
{
    *pid = (jv){.i = (int64_t)((uint64_t)g >> 32)};
    *tid = (jv){.i = (int64_t)((uint64_t)g & 0xffffffffu)};
}

/*
 * The process of a host row: the pid of its globalTid when the rank's
 * timeline named it, else the layer's process. -1 on OOM.
 */
static long host_proc(tl *t, jv *pid, const char *layer, int sort)
{
    long k = find_proc(t, pid);
    if (k >= 0 && (t->kineto || t->procs[k].name))
        return k;
    if (t->kineto)
        return add_proc(t, *pid, NULL, NULL, 0, 0, -1);
    return layer_proc(t, layer, -1, sort);
}

/*
 * Starts the slice of a host call: columns 0 and 1 of q hold its start and
 * end, column 2 its globalTid, whose process is found or made in layer
 * (sort: its sort index). Returns 1 when the slice is started (its layer
 * kept: the caller adds its fields and ends it), 0 when the layer is left
 * out, -1 out of memory (err set).
 */
static int host_slice(tl *t, sqlite3_stmt *q, const char *layer, int sort, const char *name, tb_error *err)
{
    jv pid, tid;
    split_gtid(sqlite3_column_int64(q, 2), &pid, &tid);
    long k = host_proc(t, &pid, layer, sort);
    if (k < 0) {
        nomem(err);
        return -1;
    }
    if (!t->procs[k].keep)
        return 0;
    slice_head(t, name, &t->procs[k].pid, &tid, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1));
    return 1;
}

static tb_status write_pytorch(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep(t,
        "SELECT p.startNs, p.endNs, p.globalTid, n.value, p.type, p.sequenceNumber, p.fwdThreadId, d.value, s.value "
        "FROM PYTORCH_API p LEFT JOIN STRING_IDS n ON n.id = p.name LEFT JOIN STRING_IDS d ON d.id = p.inputDtypes "
        "LEFT JOIN STRING_IDS s ON s.id = p.inputShapes WHERE p.rankId IS ?1", &q, err);
    if (st)
        return st;
    int rc;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *name = col_text(q, 3);
        int64_t type = sqlite3_column_int64(q, 4);
        const char *cat = type == 60003 ? "user_annotation"
                          : type == 50002 ? (name && strncmp(name, "Enqueue", 7) == 0 ? "enqueue" : "dequeue")
                                          : "cpu_op";
        int on = host_slice(t, q, "Python", 0, name, err);
        if (on < 0) {
            st = err->code;
            break;
        }
        if (!on)
            continue;
        tlw_cstr(t->w, "cat", cat);
        tlw_obj(t->w, "args");
        arg_int_col(t->w, "Sequence number", q, 5);
        arg_int_col(t->w, "Fwd thread id", q, 6);
        arg_str_col(t->w, "Input type", q, 7);
        arg_str_col(t->w, "Input Dims", q, 8);
        tlw_obj_end(t->w);
        st = tlw_end(t->w, err);
    }
    return step_done(t, q, rc, st, err);
}

static tb_status write_cann(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep(t,
        "SELECT a.startNs, a.endNs, a.globalTid, n.value, e.name, a.connectionId, a.type "
        "FROM CANN_API a LEFT JOIN STRING_IDS n ON n.id = a.name LEFT JOIN ENUM_API_TYPE e ON e.id = a.type "
        "WHERE a.rankId IS ?1", &q, err);
    if (st)
        return st;
    int rc;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        int on = host_slice(t, q, "CANN", 7, col_text(q, 3), err);
        if (on < 0) {
            st = err->code;
            break;
        }
        if (!on)
            continue;
        if (t->kineto) {
            tlw_cstr(t->w, "cat", sqlite3_column_int64(q, 6) == 60002 ? "cuda_driver" : "cuda_runtime");
            tlw_obj(t->w, "args");
            arg_int_col(t->w, "correlation", q, 5);
        } else {
            tlw_obj(t->w, "args");
            arg_str_col(t->w, "level", q, 4);
            arg_int_col(t->w, "connection_id", q, 5);
        }
        tlw_obj_end(t->w);
        st = tlw_end(t->w, err);
    }
    return step_done(t, q, rc, st, err);
}

/* The process of a device row: the pid it was read from when that is the
 * rank's process of the layer, else the layer's process on its device. */
static long device_proc(tl *t, int64_t pid, const char *layer, int64_t device, int sort)
{
    long k = find_int_proc(t, pid);
    const char *have = k >= 0 ? layer_key(t->procs[k].name) : NULL, *want = layer_key(layer);
    if (have && want && strcmp(have, want) == 0)
        return k;
    return layer_proc(t, layer, device, sort);
}

/* A "Stream <id>" thread for a stream of a process made here. */
static int stream_thread(tl *t, long k, int64_t stream)
{
    const proc *p = &t->procs[k];
    for (size_t i = 0; i < t->nt; i++)
        if (jv_eq(&t->thrs[i].pid, &p->pid) && !t->thrs[i].tid.text && t->thrs[i].tid.i == stream)
            return 0;
    char name[40];
    snprintf(name, sizeof name, "Stream %" PRId64, stream);
    return add_thread(t, &t->procs[k].pid, stream, name, stream);
}

static tb_status write_tasks(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep(t,
        "SELECT t.startNs, t.endNs, t.deviceId, t.connectionId, t.globalPid, coalesce(cty.value, tt.value), "
        "  t.contextId, t.streamId, "
        "  t.taskId, t.modelId, coalesce(n.value, cn.value), c.globalTaskId IS NOT NULL, c.blockNum, c.mixBlockNum, "
        "  m.globalTaskId IS NOT NULL, m.size, ct.globalTaskId IS NOT NULL, ct.planeId, ct.notifyId, ct.srcRank, "
        "  ct.dstRank, ct.size, ct.dataType, ct.bandwidth, ctt.value "
        "FROM TASK t "
        "LEFT JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
        "LEFT JOIN STRING_IDS cn ON cn.id = c.name "
        /* a compute task's type is its accelerator core (an msprof DB's TASK.taskType may name its API) */
        "LEFT JOIN STRING_IDS cty ON cty.id = c.taskType "
        "LEFT JOIN MEMCPY_INFO m ON m.globalTaskId = t.globalTaskId "
        "LEFT JOIN COMMUNICATION_TASK_INFO ct ON ct.globalTaskId = t.globalTaskId "
        "LEFT JOIN STRING_IDS ctt ON ctt.id = ct.taskType "
        "LEFT JOIN STRING_IDS n ON n.id = t.name "
        "LEFT JOIN STRING_IDS tt ON tt.id = t.taskType "
        "WHERE t.rankId IS ?1", &q, err);
    if (st)
        return st;
    int rc;
    tlw *w = t->w;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t dev = is_null(q, 2) ? 0 : sqlite3_column_int64(q, 2);
        int64_t gpid = sqlite3_column_int64(q, 4);
        int64_t stream = is_null(q, 7) ? 0 : sqlite3_column_int64(q, 7);
        const char *name = col_text(q, 10);
        int64_t start = sqlite3_column_int64(q, 0), end = sqlite3_column_int64(q, 1);
        long k;
        jv tid = {.i = stream};
        if (t->kineto) {
            jv pid = {.i = gpid};
            if ((k = host_proc(t, &pid, NULL, 0)) < 0) {
                st = nomem(err);
                break;
            }
            if (!t->procs[k].keep)
                continue;
            slice_head(t, name, &t->procs[k].pid, &tid, start, end);
            arg_str_col(w, "cat", q, 5);
            tlw_obj(w, "args");
            tlw_int(w, "device", dev);
            tlw_int(w, "stream", stream);
            arg_int_col(w, "correlation", q, 3);
            if (sqlite3_column_int(q, 14))
                arg_int_col(w, "bytes", q, 15);
        } else if (sqlite3_column_int(q, 16)) {
            /* a small HCCL task: the Communication layer, thread = plane */
            if ((k = device_proc(t, gpid, "Communication", dev, 16)) < 0) {
                st = nomem(err);
                break;
            }
            if (!t->procs[k].keep)
                continue;
            tid.i = is_null(q, 17) ? 0 : sqlite3_column_int64(q, 17);
            slice_head(t, name, &t->procs[k].pid, &tid, start, end);
            tlw_obj(w, "args");
            arg_int_col(w, "notify id", q, 18);
            if (!is_null(q, 24))
                arg_str_col(w, "task type", q, 24);
            else
                arg_str_col(w, "task type", q, 5);
            arg_int_col(w, "stream id", q, 7);
            arg_int_col(w, "task id", q, 8);
            arg_int_col(w, "context id", q, 6);
            arg_int_col(w, "src rank", q, 19);
            arg_int_col(w, "dst rank", q, 20);
            arg_int_col(w, "size(Byte)", q, 21);
            const char *dt = hccl_data_type(q, 22);
            if (dt)
                tlw_cstr(w, "data type", dt);
            arg_num_col(w, "bandwidth(GB/s)", q, 23);
        } else {
            if ((k = device_proc(t, gpid, "Ascend Hardware", dev, 14)) < 0) {
                st = nomem(err);
                break;
            }
            if (!t->procs[k].keep)
                continue;
            if (t->procs[k].made && stream_thread(t, k, stream)) {
                st = nomem(err);
                break;
            }
            slice_head(t, name, &t->procs[k].pid, &tid, start, end);
            tlw_obj(w, "args");
            tlw_int(w, "Model Id", is_null(q, 9) ? INVALID_ID : sqlite3_column_int64(q, 9));
            arg_str_col(w, "Task Type", q, 5);
            tlw_int(w, "Physic Stream Id", stream);
            arg_int_col(w, "Task Id", q, 8);
            arg_int_col(w, "Subtask Id", q, 6); /* none: no contextId, as the loader reads it back */
            arg_int_col(w, "connection_id", q, 3);
            if (sqlite3_column_int(q, 14))
                arg_int_col(w, "size", q, 15);
            if (sqlite3_column_int(q, 11)) {
                arg_int_col(w, "Block Num", q, 12);
                arg_int_col(w, "Mix Block Num", q, 13);
            }
        }
        tlw_obj_end(w);
        st = tlw_end(w, err);
    }
    return step_done(t, q, rc, st, err);
}

static tb_status write_comm_ops(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep(t,
        "SELECT o.startNs, o.endNs, o.deviceId, o.connectionId, n.value, g.value, o.dataType, a.value, o.count "
        "FROM COMMUNICATION_OP o LEFT JOIN STRING_IDS n ON n.id = o.opName "
        "LEFT JOIN STRING_IDS g ON g.id = o.groupName LEFT JOIN STRING_IDS a ON a.id = o.algType "
        "WHERE o.rankId IS ?1", &q, err);
    if (st)
        return st;
    int rc;
    tlw *w = t->w;
    jv tid = {0};
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        long k = layer_proc(t, "Communication", is_null(q, 2) ? 0 : sqlite3_column_int64(q, 2), 16);
        if (k < 0) {
            st = nomem(err);
            break;
        }
        if (!t->procs[k].keep)
            continue;
        slice_head(t, col_text(q, 4), &t->procs[k].pid, &tid, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1));
        tlw_obj(w, "args");
        arg_int_col(w, "connection_id", q, 3);
        tlw_int(w, "model id", INVALID_ID);
        const char *dt = hccl_data_type(q, 6);
        if (dt)
            tlw_cstr(w, "data_type", dt);
        arg_str_col(w, "alg_type", q, 7);
        arg_num_col(w, "count", q, 8);
        arg_str_col(w, "group_name", q, 5);
        tlw_obj_end(w);
        st = tlw_end(w, err);
    }
    return step_done(t, q, rc, st, err);
}

static const char *const lane_names[] = {"Computing", "Communication", "Communication(Not Overlapped)", "Free"};

static tb_status write_overlap(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    const char *sql = "SELECT startNs, endNs, deviceId, type FROM OVERLAP_ANALYSIS WHERE rankId IS ?1";
    tb_status st = prep(t, "SELECT EXISTS (SELECT 1 FROM OVERLAP_ANALYSIS WHERE rankId IS ?1)", &q, err);
    if (st)
        return st;
    int given = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    if (!given) {
        /* no lanes in the input: the computed ones (metrics.md, overlap_lanes) */
        if (t->opt->note) {
            char msg[160];
            snprintf(msg, sizeof msg, "rank %" PRId64 ": no Overlap Analysis lanes in the input: "
                     "writing the lanes computed from its tasks", t->rank);
            t->opt->note(t->opt->ctx, msg);
        }
        if (!t->lanes_built) {
            const metric_table *m = metrics_find("overlap_lanes");
            metric_ctx mc = {.db = t->db, .note = t->opt->note, .ctx = t->opt->ctx};
            if (!m)
                return tb_error_set(err, TB_ERR_INTERNAL, "timeline: no overlap_lanes table");
            if ((st = m->build(&mc, err)))
                return st;
            t->lanes_built = 1;
        }
        sql = "SELECT startNs, endNs, deviceId, CASE type WHEN 'Computing' THEN 0 WHEN 'Communication' THEN 1 "
              "WHEN 'Communication(Not Overlapped)' THEN 2 ELSE 3 END FROM temp.overlap_lanes WHERE rankId IS ?1";
    }
    if ((st = prep(t, sql, &q, err)))
        return st;
    int rc;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t type = sqlite3_column_int64(q, 3);
        if (type < 0 || type > 3)
            continue;
        long k = layer_proc(t, "Overlap Analysis", is_null(q, 2) ? 0 : sqlite3_column_int64(q, 2), 31);
        if (k < 0) {
            st = nomem(err);
            break;
        }
        if (!t->procs[k].keep)
            continue;
        jv tid = {.i = type};
        slice_head(t, lane_names[type], &t->procs[k].pid, &tid, sqlite3_column_int64(q, 0),
                   sqlite3_column_int64(q, 1));
        st = tlw_end(t->w, err);
    }
    return step_done(t, q, rc, st, err);
}

static tb_status write_mstx(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep(t,
        "SELECT x.startNs, x.endNs, x.globalTid, m.value, x.connectionId FROM MSTX_EVENTS x "
        "LEFT JOIN STRING_IDS m ON m.id = x.message WHERE x.rankId IS ?1", &q, err);
    if (st)
        return st;
    int rc;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        int on = host_slice(t, q, "MsprofTx", 6, col_text(q, 3), err);
        if (on < 0) {
            st = err->code;
            break;
        }
        if (!on)
            continue;
        tlw_obj(t->w, "args");
        arg_int_col(t->w, "connection_id", q, 4);
        tlw_obj_end(t->w);
        st = tlw_end(t->w, err);
    }
    return step_done(t, q, rc, st, err);
}

/* TB_EVENT rows: as they were read (phase, category, args). */
static tb_status write_events(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep(t,
        "SELECT e.pid, e.tid, e.ph, c.value, n.value, e.startNs, e.endNs, e.args FROM TB_EVENT e "
        "LEFT JOIN STRING_IDS c ON c.id = e.cat LEFT JOIN STRING_IDS n ON n.id = e.name WHERE e.rankId IS ?1",
        &q, err);
    if (st)
        return st;
    int rc;
    tlw *w = t->w;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        long k = row_proc(t, q, 0);
        jv tid;
        if (k < 0 || jv_col(q, 1, &tid)) {
            st = nomem(err);
            break;
        }
        if (!t->procs[k].keep) {
            jv_free(&tid);
            continue;
        }
        const char *ph = col_text(q, 2);
        tlw_begin(w);
        arg_str_col(w, "name", q, 4);
        put_jv(w, "pid", &t->procs[k].pid);
        if (!is_null(q, 1))
            put_jv(w, "tid", &tid);
        jv_free(&tid);
        if (!is_null(q, 5)) {
            int64_t s = sqlite3_column_int64(q, 5);
            tlw_us(w, "ts", s, !t->kineto);
            if (ph && strcmp(ph, "X") == 0 && !is_null(q, 6))
                tlw_dur(w, "dur", sqlite3_column_int64(q, 6) - s);
        }
        tlw_cstr(w, "ph", ph ? ph : "X");
        arg_str_col(w, "cat", q, 3);
        const char *args = col_text(q, 7);
        if (args && args[0] == '{')
            tlw_raw(w, "args", args, (size_t)sqlite3_column_bytes(q, 7));
        st = tlw_end(w, err);
    }
    return step_done(t, q, rc, st, err);
}

/* TB_COUNTER rows: one row per series, the series of one event stored one
 * after the other: consecutive rows of the same (pid, name, time) are one C event. */
static tb_status write_counters(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep(t,
        "SELECT c.pid, n.value, s.value, c.timestampNs, c.value FROM TB_COUNTER c "
        "LEFT JOIN STRING_IDS n ON n.id = c.name LEFT JOIN STRING_IDS s ON s.id = c.series WHERE c.rankId IS ?1",
        &q, err);
    if (st)
        return st;
    int rc, open = 0;
    long cur = -1;
    int64_t cur_ts = 0;
    char *cur_name = NULL;
    tlw *w = t->w;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        long k = row_proc(t, q, 0);
        if (k < 0) {
            st = nomem(err);
            break;
        }
        if (!t->procs[k].keep)
            continue;
        const char *name = col_text(q, 1);
        int64_t ts = sqlite3_column_int64(q, 3);
        if (open && !(k == cur && ts == cur_ts && name && cur_name && strcmp(name, cur_name) == 0)) {
            tlw_obj_end(w);
            if ((st = tlw_end(w, err)))
                break;
            open = 0;
        }
        if (!open) {
            free(cur_name);
            cur_name = name ? strdup(name) : NULL;
            if (name && !cur_name) {
                st = nomem(err);
                break;
            }
            cur = k;
            cur_ts = ts;
            tlw_begin(w);
            tlw_cstr(w, "name", name ? name : "");
            put_jv(w, "pid", &t->procs[k].pid);
            tlw_int(w, "tid", 0);
            tlw_us(w, "ts", ts, !t->kineto);
            tlw_cstr(w, "ph", "C");
            tlw_obj(w, "args");
            open = 1;
        }
        const char *series = col_text(q, 2);
        if (sqlite3_column_type(q, 4) == SQLITE_INTEGER)
            tlw_int(w, series ? series : "", sqlite3_column_int64(q, 4));
        else
            tlw_real(w, series ? series : "", sqlite3_column_double(q, 4));
    }
    if (!st && open) {
        tlw_obj_end(w);
        st = tlw_end(w, err);
    }
    free(cur_name);
    return step_done(t, q, rc, st, err);
}

/*
 * NPU_MEM rows (an msprof DB's, or npu_mem CSVs') as the NPU MEM layer's
 * counters, for a rank that has no counters of its own (a timeline's NPU
 * MEM counters are in TB_COUNTER already): per row, msprof's three series
 * of its event, APP or Device: <event>/DDR, <event>/HBM and <event>/Memory
 * (their sum), in KB (the DB holds bytes).
 */
static tb_status write_npu_mem(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep(t, "SELECT EXISTS (SELECT 1 FROM TB_COUNTER WHERE rankId IS ?1)", &q, err);
    if (st)
        return st;
    int have = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    if (have || !has_table(t, "NPU_MEM"))
        return TB_OK;
    if ((st = prep(t, "SELECT m.deviceId, e.value, m.timestampNs, m.ddr, m.hbm FROM NPU_MEM m "
                      "LEFT JOIN STRING_IDS e ON e.id = m.type WHERE m.rankId IS ?1", &q, err)))
        return st;
    int rc;
    tlw *w = t->w;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        long k = layer_proc(t, "NPU MEM", is_null(q, 0) ? 0 : sqlite3_column_int64(q, 0), 17);
        if (k < 0) {
            st = nomem(err);
            break;
        }
        if (!t->procs[k].keep || is_null(q, 2))
            continue;
        const char *ev = col_text(q, 1);
        const char *who = ev && (ev[0] == 'd' || ev[0] == 'D') ? "Device" : "APP";
        double ddr = sqlite3_column_double(q, 3), hbm = sqlite3_column_double(q, 4);
        static const char *const what[] = {"DDR", "HBM", "Memory"};
        double kb[] = {ddr / 1024, hbm / 1024, (ddr + hbm) / 1024};
        for (int i = 0; i < 3 && !st; i++) {
            char name[32];
            snprintf(name, sizeof name, "%s/%s", who, what[i]);
            tlw_begin(w);
            tlw_cstr(w, "name", name);
            put_jv(w, "pid", &t->procs[k].pid);
            tlw_int(w, "tid", 0);
            tlw_us(w, "ts", sqlite3_column_int64(q, 2), 1);
            tlw_cstr(w, "ph", "C");
            tlw_obj(w, "args");
            tlw_real(w, "KB", kb[i]);
            tlw_obj_end(w);
            st = tlw_end(w, err);
        }
    }
    return step_done(t, q, rc, st, err);
}

/* 1 when s is a decimal number JSON can carry as it is (Kineto's numeric ids) */
static int plain_digits(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (s[n] < '0' || s[n] > '9')
            return 0;
    return n > 0 && n < 16 && (s[0] != '0' || n == 1);
}

static void flow_half(tl *t, sqlite3_stmt *q, const char *ph, const char *name, const jv *pid, int tidc, int tsc)
{
    tlw *w = t->w;
    tlw_cstr(w, "name", name);
    tlw_cstr(w, "ph", ph);
    arg_str_col(w, "cat", q, 0);
    const char *id = col_text(q, 2);
    if (!id)
        id = "";
    if (t->kineto && plain_digits(id))
        tlw_raw(w, "id", id, strlen(id));
    else
        tlw_cstr(w, "id", id);
    put_jv(w, "pid", pid);
    jv tid;
    if (jv_col(q, tidc, &tid) == 0) {
        if (!is_null(q, tidc))
            put_jv(w, "tid", &tid);
        jv_free(&tid);
    }
    tlw_us(w, "ts", sqlite3_column_int64(q, tsc), !t->kineto);
    if (ph[0] == 'f')
        tlw_cstr(w, "bp", "e");
}

static tb_status write_flows(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep(t,
        "SELECT c.value, coalesce(n.value, c.value || f.flowId), f.flowId, f.fromPid, f.fromTid, f.fromNs, "
        "  f.toPid, f.toTid, f.toNs FROM TB_FLOW f LEFT JOIN STRING_IDS c ON c.id = f.cat "
        "LEFT JOIN STRING_IDS n ON n.id = f.name WHERE f.rankId IS ?1", &q, err);
    if (st)
        return st;
    int rc;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (is_null(q, 5) || is_null(q, 8) || is_null(q, 3) || is_null(q, 6)) {
            t->res->flows_unpaired++;
            continue;
        }
        long a = row_proc(t, q, 3), b = a < 0 ? -1 : row_proc(t, q, 6);
        if (a < 0 || b < 0) {
            st = nomem(err);
            break;
        }
        if (!t->procs[a].keep || !t->procs[b].keep)
            continue;
        const char *name = col_text(q, 1);
        char *nm = strdup(name ? name : "");
        if (!nm) {
            st = nomem(err);
            break;
        }
        /* both ends in one unit: a slice never splits a flow */
        tlw_begin(t->w);
        flow_half(t, q, "s", nm, &t->procs[a].pid, 4, 5);
        tlw_next(t->w);
        flow_half(t, q, "f", nm, &t->procs[b].pid, 7, 8);
        free(nm);
        st = tlw_end(t->w, err);
    }
    return step_done(t, q, rc, st, err);
}

/*
 * HostToDevice flows of a rank whose DB has none (a DB input: msprof and
 * torch_npu DBs keep the link only as connection ids): from the innermost
 * CANN call of each connection id (the latest to start) to each Ascend
 * Hardware task of that id, as msprof draws them. Through the window's
 * views like everything else.
 */
static tb_status write_h2d(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep(t, "SELECT EXISTS (SELECT 1 FROM TB_FLOW f JOIN STRING_IDS c ON c.id = f.cat "
                           "WHERE f.rankId IS ?1 AND c.value = 'HostToDevice')", &q, err);
    if (st)
        return st;
    int have = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    if (have)
        return TB_OK;
    /* the rank is a number: it goes into the text of these three statements */
    char *msg = NULL;
    char sql[320];
    snprintf(sql, sizeof sql,
             "DROP TABLE IF EXISTS temp.tl_launch;"
             "CREATE TEMP TABLE tl_launch AS SELECT connectionId, globalTid, max(startNs) AS startNs "
             "FROM CANN_API WHERE rankId IS %" PRId64 " AND connectionId IS NOT NULL GROUP BY connectionId;"
             "CREATE INDEX temp.tl_launch_conn ON tl_launch(connectionId);", t->rank);
    if (sqlite3_exec(t->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        st = tb_error_set(err, TB_ERR_DB, "timeline: %s", msg ? msg : sqlite3_errmsg(t->db));
        sqlite3_free(msg);
        return st;
    }
    if ((st = prep(t,
            "SELECT a.globalTid, a.startNs, t.globalPid, t.deviceId, t.streamId, t.startNs, t.connectionId "
            "FROM TASK t JOIN temp.tl_launch a ON a.connectionId = t.connectionId "
            "WHERE t.rankId IS ?1 AND NOT EXISTS "
            "(SELECT 1 FROM COMMUNICATION_TASK_INFO c WHERE c.globalTaskId = t.globalTaskId)", &q, err)))
        return st;
    int rc;
    tlw *w = t->w;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        jv pid, tid;
        split_gtid(sqlite3_column_int64(q, 0), &pid, &tid);
        long a = host_proc(t, &pid, "CANN", 7);
        int64_t dev = is_null(q, 3) ? 0 : sqlite3_column_int64(q, 3);
        long b = a < 0 ? -1 : device_proc(t, sqlite3_column_int64(q, 2), "Ascend Hardware", dev, 14);
        if (a < 0 || b < 0) {
            st = nomem(err);
            break;
        }
        if (!t->procs[a].keep || !t->procs[b].keep)
            continue;
        int64_t stream = is_null(q, 4) ? 0 : sqlite3_column_int64(q, 4);
        if (t->procs[b].made && stream_thread(t, b, stream)) {
            st = nomem(err);
            break;
        }
        char id[32], name[48];
        snprintf(id, sizeof id, "%" PRId64, (int64_t)sqlite3_column_int64(q, 6));
        snprintf(name, sizeof name, "HostToDevice%s", id);
        jv stid = {.i = stream};
        for (int end = 0; end < 2; end++) {
            if (end == 0)
                tlw_begin(w);
            else
                tlw_next(w);
            tlw_cstr(w, "name", name);
            tlw_cstr(w, "ph", end ? "f" : "s");
            tlw_cstr(w, "cat", "HostToDevice");
            tlw_cstr(w, "id", id);
            put_jv(w, "pid", &t->procs[end ? b : a].pid);
            put_jv(w, "tid", end ? &stid : &tid);
            tlw_us(w, "ts", sqlite3_column_int64(q, end ? 5 : 1), 1);
            if (end)
                tlw_cstr(w, "bp", "e");
        }
        st = tlw_end(w, err);
    }
    st = step_done(t, q, rc, st, err);
    sqlite3_exec(t->db, "DROP TABLE IF EXISTS temp.tl_launch", NULL, NULL, NULL);
    return st;
}

/*
 * A rank without process metadata (a DB input): its layers' processes made
 * before any event, so that the metadata comes first, as in msprof's files
 * (a reader then never waits for a process's name). Devices and streams
 * are those of the rows about to be written.
 */
static tb_status make_layers(tl *t, tb_error *err)
{
    static const struct { const char *table, *layer; int sort; } host[] = {
        {"PYTORCH_API", "Python", 0}, {"MSTX_EVENTS", "MsprofTx", 6}, {"CANN_API", "CANN", 7}};
    tb_status st = TB_OK;
    sqlite3_stmt *q;
    for (size_t i = 0; i < sizeof host / sizeof host[0] && !st; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT EXISTS (SELECT 1 FROM %s WHERE rankId IS ?1)", host[i].table);
        if ((st = prep(t, sql, &q, err)))
            return st;
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) && layer_proc(t, host[i].layer, -1, host[i].sort) < 0)
            st = nomem(err);
        sqlite3_finalize(q);
    }
    if (st || (st = prep(t,
            "SELECT DISTINCT 0, deviceId, streamId FROM TASK t WHERE rankId IS ?1 AND NOT EXISTS "
            "  (SELECT 1 FROM COMMUNICATION_TASK_INFO c WHERE c.globalTaskId = t.globalTaskId) "
            "UNION SELECT DISTINCT 1, deviceId, NULL FROM TASK t WHERE rankId IS ?1 AND EXISTS "
            "  (SELECT 1 FROM COMMUNICATION_TASK_INFO c WHERE c.globalTaskId = t.globalTaskId) "
            "UNION SELECT DISTINCT 1, deviceId, NULL FROM COMMUNICATION_OP WHERE rankId IS ?1 "
            "UNION SELECT DISTINCT 2, deviceId, NULL FROM TASK WHERE rankId IS ?1 "
            "UNION SELECT DISTINCT 2, deviceId, NULL FROM COMMUNICATION_OP WHERE rankId IS ?1 "
            "UNION SELECT DISTINCT 3, deviceId, NULL FROM NPU_MEM WHERE rankId IS ?1 "
            "ORDER BY 1, 2, 3", &q, err)))
        return st;
    static const char *const layer[] = {"Ascend Hardware", "Communication", "Overlap Analysis", "NPU MEM"};
    static const int sort[] = {14, 16, 31, 17};
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int kind = sqlite3_column_int(q, 0);
        long k = layer_proc(t, layer[kind], is_null(q, 1) ? 0 : sqlite3_column_int64(q, 1), sort[kind]);
        if (k < 0 || (kind == 0 && t->procs[k].made && stream_thread(t, k, is_null(q, 2) ? 0 : sqlite3_column_int64(q, 2)))) {
            st = nomem(err);
            break;
        }
    }
    return step_done(t, q, rc, st, err);
}

/* The files the DB was loaded from (TB_SOURCE) and the DB itself: an
 * output never replaces one of them (compared by identity, not by name). */
static tb_status collect_inputs(tl *t, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    struct stat sb;
    if (stat(t->db_path, &sb) == 0) {
        if (!(t->inputs = malloc(sizeof *t->inputs)))
            return nomem(err);
        t->inputs[t->n_inputs++] = (struct fid){sb.st_dev, sb.st_ino};
    }
    if (sqlite3_prepare_v2(t->db, "SELECT DISTINCT path FROM TB_SOURCE WHERE kind IS NOT 'ignored'", -1, &q, NULL) !=
        SQLITE_OK)
        return TB_OK; /* not a DB tracebook wrote: no sources listed */
    tb_status st = TB_OK;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *p = col_text(q, 0);
        if (!p || stat(p, &sb) != 0)
            continue;
        struct fid *v = realloc(t->inputs, (t->n_inputs + 1) * sizeof *v);
        if (!v) {
            st = nomem(err);
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

static tb_status export_rank(tl *t, const char *suffix, tb_error *err)
{
    sqlite3 *db = t->db;
    t->kineto = query_int(db, "SELECT EXISTS (SELECT 1 FROM TB_SOURCE WHERE rankId IS ?1 AND kind = 'kineto') "
                              "AND NOT EXISTS (SELECT 1 FROM TB_SOURCE WHERE rankId IS ?1 AND kind = 'ascend timeline')",
                          t->rank, 0, NULL) != 0;
    int found;
    t->base_pid = query_int(db, "SELECT globalTid >> 32 FROM PYTORCH_API WHERE rankId IS ?1 LIMIT 1", t->rank, 0, &found);
    if (!found)
        t->base_pid = query_int(db, "SELECT globalTid >> 32 FROM CANN_API WHERE rankId IS ?1 LIMIT 1", t->rank, 0, NULL);
    t->base_pid &= 0x1fffff; /* keep the made pids below 2^31 */
    tb_status st = load_procs(t, err);
    if (!st && t->np == 0 && !t->kineto)
        st = make_layers(t, err);
    char tail[96] = "";
    if (!st && t->kineto) {
        int64_t base = query_int(db, "SELECT baseTimeNs FROM SESSION_TIME_INFO WHERE rankId IS ?1", t->rank, 0, &found);
        /* the rank's id, so that the trace loads back as the same rank */
        int k = snprintf(tail, sizeof tail, "\"distributedInfo\": {\"rank\": %" PRId64 "}", t->rank);
        if (found)
            snprintf(tail + k, sizeof tail - (size_t)k, ",\n\"baseTimeNanoseconds\": %" PRId64, base);
    }
    if (!st) {
        tlw_options wo = {.dir = t->out_dir, .stem = "msprof", .suffix = suffix, .top_object = t->kineto,
                          .tail = tail, .slice_bytes = t->opt->slice_bytes, .begin_slice = begin_slice,
                          .end_slice = end_slice, .check_path = check_path, .ctx = t};
        st = tlw_create(&wo, &t->w, err);
    }
    if (!st)
        st = write_pytorch(t, err);
    if (!st)
        st = write_cann(t, err);
    if (!st && !t->kineto)
        st = write_mstx(t, err);
    if (!st)
        st = write_tasks(t, err);
    if (!st && !t->kineto)
        st = write_comm_ops(t, err);
    if (!st && !t->kineto)
        st = write_overlap(t, err);
    if (!st)
        st = write_events(t, err);
    if (!st)
        st = write_counters(t, err);
    if (!st && !t->kineto)
        st = write_npu_mem(t, err);
    if (!st)
        st = write_flows(t, err);
    if (!st && !t->kineto)
        st = write_h2d(t, err);
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
            st = nomem(err);
            break;
        }
        *out = r;
        r[(*n)++] = sqlite3_column_int64(q, 0);
    }
    sqlite3_finalize(q);
    if (!st && *n == 0) {
        /* a DB without rank bookkeeping: one rank, 0 */
        if (!(*out = malloc(sizeof **out)))
            return nomem(err);
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
    if (mkdir(t.out_dir, 0777) != 0 && errno != EEXIST)
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
    if (!has_table(&t, "TASK")) {
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
done:
    free(ranks);
    free(t.inputs);
    window_info_finish(&wi);
    window_reset(t.db);
    return st;
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
