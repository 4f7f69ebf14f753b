/* SPDX-License-Identifier: MIT */
/*
 * timeline_events.c - the events of `export timeline`: each table of a rank
 * written as the slices, counters and flows of its layer (docs/timeline.md).
 *
 * One writer a table, called in msprof's order by timeline_write_layers:
 * PYTORCH_API -> Python, CANN_API -> CANN, MSTX_EVENTS -> MsprofTx, TASK ->
 * Ascend Hardware or Communication, COMMUNICATION_OP -> Communication,
 * OVERLAP_ANALYSIS (or the computed overlap lanes) -> Overlap Analysis,
 * TB_EVENT as read, TB_COUNTER and NPU_MEM as C events, TB_FLOW rows (and
 * HostToDevice flows made for a DB input, which has none) as s/f pairs. Rows are read one at a time in storage
 * order; the process and thread of each come from timeline.c
 * (timeline_int.h), which writes their metadata as slices begin and end.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/ask.h"
#include "export/timeline_int.h"
#include "metrics/metrics.h"
#include "query/window.h"
#include "tracebook/db.h"

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

/*
 * prep() of sql (SELECT ... FROM <alias's table> ... WHERE ...) with two
 * columns added last: the args shape (text) and values of alias's rows, or
 * NULL, NULL in a DB of an earlier version, which keeps no args.
 */
static tb_status prep_shaped(tl *t, const char *sql, const char *alias, sqlite3_stmt **q, tb_error *err)
{
    const char *from = strstr(sql, " FROM "), *where = strstr(sql, " WHERE ");
    char *full = !from || !where ? NULL
               : t->shaped ? sqlite3_mprintf("%.*s, sh.value, %s.argsValues%.*s "
                                             "LEFT JOIN STRING_IDS sh ON sh.id = %s.argsShape%s",
                                             (int)(from - sql), sql, alias, (int)(where - from), from, alias, where)
                           : sqlite3_mprintf("%.*s, NULL, NULL%s", (int)(from - sql), sql, from);
    if (!full)
        return timeline_nomem(err);
    tb_status st = prep(t, full, q, err);
    sqlite3_free(full);
    return st;
}

/* A member of a slice's args and the column of the writer's query that holds it. */
typedef struct arg_col {
    const char *key;
    int col;
} arg_col;

typedef struct shape_ctx {
    sqlite3_stmt *q;
    const arg_col *map;
    int n;
} shape_ctx;

/* slice_arg_fn: the column's value of a `$` member. */
static int shape_value(void *ctx, const char *key, size_t n, slice_buf *out)
{
    const shape_ctx *c = ctx;
    for (int i = 0; i < c->n; i++) {
        if (strlen(c->map[i].key) != n || memcmp(c->map[i].key, key, n) != 0)
            continue;
        int col = c->map[i].col;
        switch (sqlite3_column_type(c->q, col)) {
        case SQLITE_INTEGER:
            return slice_buf_int(out, sqlite3_column_int64(c->q, col)) ? -1 : 0;
        case SQLITE_TEXT:
            return slice_buf_jstr(out, timeline_col_text(c->q, col), (size_t)sqlite3_column_bytes(c->q, col)) ? -1
                                                                                                                 : 0;
        default:
            return 1;
        }
    }
    return 1;
}

/*
 * The args of a row loaded from a timeline, as the input had them (its
 * shape and values are the last two columns of q; map says which column
 * holds each `$` member). 1 when written (or the input had none), 0 when
 * the row keeps no args (the caller writes them from the columns), -1 out
 * of memory.
 */
static int shaped_args(tl *t, sqlite3_stmt *q, const arg_col *map, int n)
{
    int sc = sqlite3_column_count(q) - 2;
    if (sqlite3_column_type(q, sc) != SQLITE_TEXT)
        return 0;
    const char *shape = timeline_col_text(q, sc), *vals = "";
    size_t sn = (size_t)sqlite3_column_bytes(q, sc), vn = 0;
    int vt = sqlite3_column_type(q, sc + 1);
    if (vt == SQLITE_BLOB) { /* packed (db/slice_args.h) */
        const void *b = sqlite3_column_blob(q, sc + 1);
        if (!b) /* an empty BLOB comes as NULL */
            b = "";
        if (slice_vals_unpack(b, (size_t)sqlite3_column_bytes(q, sc + 1), &t->vbuf))
            return -1;
        vals = t->vbuf.n ? t->vbuf.p : "";
        vn = t->vbuf.n;
    } else if (vt == SQLITE_TEXT) { /* comma-separated, as DBs of earlier builds hold them */
        const char *tv = timeline_col_text(q, sc + 1);
        vals = tv ? tv : "";
        vn = tv ? (size_t)sqlite3_column_bytes(q, sc + 1) : 0;
    }
    shape_ctx c = {q, map, n};
    int r = slice_args_expand(shape, sn, vals, vn, shape_value, &c, &t->abuf);
    if (r < 0)
        return -1;
    if (r > 0)
        tlw_raw(t->w, "args", t->abuf.p, t->abuf.n);
    return 1;
}


const char *timeline_col_text(sqlite3_stmt *q, int c)
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
    timeline_put_jv(w, "pid", pid);
    timeline_put_jv(w, "tid", tid);
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
        tlw_str(w, k, timeline_col_text(q, c), (size_t)sqlite3_column_bytes(q, c));
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

/* pid and tid of a globalTid (pid << 32 | tid): the tid is the 32-bit
 * number the trace wrote, negative ones included (Kineto writes thread ids
 * that overflowed an int32 as negative numbers). */
static void split_gtid(int64_t g, jv *pid, jv *tid)
{
    *pid = (jv){.i = (int64_t)((uint64_t)g >> 32)};
    *tid = (jv){.i = (int64_t)(int32_t)(uint32_t)((uint64_t)g & 0xffffffffu)};
}

/*
 * The process of a host row: the pid of its globalTid when the rank's
 * timeline named it, else the layer's process. -1 on OOM.
 */
static long host_proc(tl *t, jv *pid, const char *layer, int sort)
{
    long k = timeline_find_proc(t, pid);
    if (k >= 0 && (t->kineto || t->procs[k].name))
        return k;
    if (t->kineto)
        return timeline_add_proc(t, *pid, NULL, NULL, 0, 0, -1);
    return timeline_layer_proc(t, layer, -1, sort);
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
        timeline_nomem(err);
        return -1;
    }
    if (!t->procs[k].keep)
        return 0;
    slice_head(t, name, &t->procs[k].pid, &tid, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1));
    return 1;
}

/* A record_param_comms call's collective (TB_COLLECTIVE) back into its args. */
static void collective_args(tlw *w, sqlite3_stmt *q, int c)
{
    arg_str_col(w, "Collective name", q, c);
    arg_str_col(w, "dtype", q, c + 1);
    arg_int_col(w, "In msg nelems", q, c + 2);
    arg_int_col(w, "Out msg nelems", q, c + 3);
    arg_int_col(w, "Group size", q, c + 4);
    arg_str_col(w, "Process Group Name", q, c + 5);
}

static tb_status write_pytorch(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    /* a DB of an earlier version has no TB_COLLECTIVE and no streamId */
    int coll = db_has_table(t->db, NULL, "TB_COLLECTIVE", 1) > 0;
    tb_status st = prep_shaped(t, coll ?
        "SELECT p.startNs, p.endNs, p.globalTid, n.value, p.type, p.sequenceNumber, p.fwdThreadId, d.value, s.value, "
        "       p.streamId, cn.value, cd.value, c.inNelems, c.outNelems, c.groupSize, cg.value "
        "FROM PYTORCH_API p LEFT JOIN STRING_IDS n ON n.id = p.name LEFT JOIN STRING_IDS d ON d.id = p.inputDtypes "
        "LEFT JOIN STRING_IDS s ON s.id = p.inputShapes "
        "LEFT JOIN TB_COLLECTIVE c ON n.value = 'record_param_comms' AND c.rankId IS p.rankId "
        "  AND c.globalTid = p.globalTid AND c.startNs = p.startNs "
        "LEFT JOIN STRING_IDS cn ON cn.id = c.collective LEFT JOIN STRING_IDS cd ON cd.id = c.dtype "
        "LEFT JOIN STRING_IDS cg ON cg.id = c.groupName WHERE p.rankId IS ?1"
        :
        "SELECT p.startNs, p.endNs, p.globalTid, n.value, p.type, p.sequenceNumber, p.fwdThreadId, d.value, s.value "
        "FROM PYTORCH_API p LEFT JOIN STRING_IDS n ON n.id = p.name LEFT JOIN STRING_IDS d ON d.id = p.inputDtypes "
        "LEFT JOIN STRING_IDS s ON s.id = p.inputShapes WHERE p.rankId IS ?1", "p", &q, err);
    static const arg_col map[] = {{"Sequence number", 5}, {"Fwd thread id", 6}, {"Input type", 7},
                                  {"Input Dims", 8}, {"stream", 9}};
    if (st)
        return st;
    int rc;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *name = timeline_col_text(q, 3);
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
        int shaped = shaped_args(t, q, map, coll ? 5 : 4);
        if (shaped) {
            st = shaped < 0 ? timeline_nomem(err) : tlw_end(t->w, err);
            continue;
        }
        tlw_obj(t->w, "args");
        arg_int_col(t->w, "Sequence number", q, 5);
        arg_int_col(t->w, "Fwd thread id", q, 6);
        arg_str_col(t->w, "Input type", q, 7);
        arg_str_col(t->w, "Input Dims", q, 8);
        if (coll) {
            arg_int_col(t->w, "stream", q, 9);
            collective_args(t->w, q, 10);
        }
        tlw_obj_end(t->w);
        st = tlw_end(t->w, err);
    }
    return step_done(t, q, rc, st, err);
}

/* The Kineto category of a CANN_API row of type: its rank's own name of
 * runtime calls when it had the older one (Runtime). */
static const char *kineto_api_cat(const tl *t, int64_t type)
{
    if (type == 60002)
        return "cuda_driver";
    if (type == 60006)
        return "mtia_runtime";
    return type == 60001 && t->runtime_cat[0] ? t->runtime_cat : "cuda_runtime";
}

static tb_status write_cann(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    /* streamId came with TB_COLLECTIVE: a DB of an earlier version has neither */
    int stream = db_has_table(t->db, NULL, "TB_COLLECTIVE", 1) > 0;
    tb_status st = prep_shaped(t, stream ?
        "SELECT a.startNs, a.endNs, a.globalTid, n.value, e.name, a.connectionId, a.type, a.streamId, "
        "  CASE WHEN (a.globalTid & 4294967295) >= 2147483648 THEN (a.globalTid & 4294967295) - 4294967296 "
        "    ELSE a.globalTid & 4294967295 END " /* the tid, signed as written */
        "FROM CANN_API a LEFT JOIN STRING_IDS n ON n.id = a.name LEFT JOIN ENUM_API_TYPE e ON e.id = a.type "
        "WHERE a.rankId IS ?1"
        :
        "SELECT a.startNs, a.endNs, a.globalTid, n.value, e.name, a.connectionId, a.type "
        "FROM CANN_API a LEFT JOIN STRING_IDS n ON n.id = a.name LEFT JOIN ENUM_API_TYPE e ON e.id = a.type "
        "WHERE a.rankId IS ?1", "a", &q, err);
    if (st)
        return st;
    static const arg_col map[] = {{"connection_id", 5}, {"correlation", 5}, {"stream", 7}, {"Thread Id", 8}};
    int rc;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        int on = host_slice(t, q, "CANN", 7, timeline_col_text(q, 3), err);
        if (on < 0) {
            st = err->code;
            break;
        }
        if (!on)
            continue;
        if (t->kineto)
            tlw_cstr(t->w, "cat", kineto_api_cat(t, sqlite3_column_int64(q, 6)));
        int shaped = shaped_args(t, q, map, stream ? 4 : 2);
        if (shaped) {
            st = shaped < 0 ? timeline_nomem(err) : tlw_end(t->w, err);
            continue;
        }
        if (t->kineto) {
            tlw_obj(t->w, "args");
            arg_int_col(t->w, "correlation", q, 5);
            if (stream)
                arg_int_col(t->w, "stream", q, 7);
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
    long k = timeline_find_int_proc(t, pid);
    const char *have = k >= 0 ? timeline_layer_key(t->procs[k].name) : NULL, *want = timeline_layer_key(layer);
    if (have && want && strcmp(have, want) == 0)
        return k;
    return timeline_layer_proc(t, layer, device, sort);
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
    return timeline_add_thread(t, &t->procs[k].pid, stream, name, stream);
}

/* What every task slice reads of its row of write_tasks' query. */
typedef struct task_cols {
    int64_t dev, gpid, stream, start, end;
    const char *name;
} task_cols;

/* The helpers below write a task's slice up to its open args: 1 when
 * written, 2 when written with the args its input had (closed), 0 when its
 * process is dropped, -1 when out of memory. */

/* Where write_tasks' query holds the members of each kind of task. */
static const arg_col kineto_map[] = {{"device", 2}, {"stream", 7}, {"correlation", 3}, {"bytes", 15}};
static const arg_col hccl_map[] = {{"notify id", 18}, {"task type", 24}, {"stream id", 7}, {"task id", 8},
                                   {"context id", 6}, {"src rank", 19}, {"dst rank", 20}, {"size(Byte)", 21}};
static const arg_col device_map[] = {{"Model Id", 9}, {"Task Type", 5}, {"Physic Stream Id", 7}, {"Stream Id", 7},
                                     {"Task Id", 8}, {"Subtask Id", 6}, {"connection_id", 3}, {"size", 15},
                                     {"size(B)", 15}, {"Block Num", 12}, {"Mix Block Num", 13}};
#define MAP(m) m, (int)(sizeof m / sizeof m[0])

/* shaped_args as a task helper's result: 2 written, -1 out of memory, 0 not kept. */
static int task_shaped(tl *t, sqlite3_stmt *q, const arg_col *map, int n)
{
    int r = shaped_args(t, q, map, n);
    return r > 0 ? 2 : r;
}

/* A task of a Kineto trace: its process is the trace's pid, its thread its
 * stream unless the slice had another tid (column 25, TASK.tid). */
static int task_kineto(tl *t, sqlite3_stmt *q, const task_cols *c)
{
    tlw *w = t->w;
    jv pid = {.i = c->gpid}, tid = {.i = c->stream};
    long k = host_proc(t, &pid, NULL, 0);
    if (k < 0)
        return -1;
    if (!t->procs[k].keep)
        return 0;
    if (!is_null(q, 25) && timeline_jv_col(q, 25, &tid))
        return -1;
    slice_head(t, c->name, &t->procs[k].pid, &tid, c->start, c->end);
    timeline_jv_free(&tid);
    arg_str_col(w, "cat", q, 5);
    int shaped = task_shaped(t, q, MAP(kineto_map));
    if (shaped)
        return shaped;
    tlw_obj(w, "args");
    tlw_int(w, "device", c->dev);
    tlw_int(w, "stream", c->stream);
    arg_int_col(w, "correlation", q, 3);
    if (sqlite3_column_int(q, 14))
        arg_int_col(w, "bytes", q, 15);
    return 1;
}

/* A small HCCL task: the Communication layer, thread = plane. */
static int task_hccl(tl *t, sqlite3_stmt *q, const task_cols *c)
{
    tlw *w = t->w;
    long k = device_proc(t, c->gpid, "Communication", c->dev, 16);
    if (k < 0)
        return -1;
    if (!t->procs[k].keep)
        return 0;
    jv tid = {.i = is_null(q, 17) ? 0 : sqlite3_column_int64(q, 17)};
    slice_head(t, c->name, &t->procs[k].pid, &tid, c->start, c->end);
    int shaped = task_shaped(t, q, MAP(hccl_map));
    if (shaped)
        return shaped;
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
    return 1;
}

/* Any other task: the Ascend Hardware layer, thread = stream. */
static int task_device(tl *t, sqlite3_stmt *q, const task_cols *c)
{
    tlw *w = t->w;
    jv tid = {.i = c->stream};
    long k = device_proc(t, c->gpid, "Ascend Hardware", c->dev, 14);
    if (k < 0)
        return -1;
    if (!t->procs[k].keep)
        return 0;
    if (t->procs[k].made && stream_thread(t, k, c->stream))
        return -1;
    slice_head(t, c->name, &t->procs[k].pid, &tid, c->start, c->end);
    int shaped = task_shaped(t, q, MAP(device_map));
    if (shaped)
        return shaped;
    tlw_obj(w, "args");
    tlw_int(w, "Model Id", is_null(q, 9) ? INVALID_ID : sqlite3_column_int64(q, 9));
    arg_str_col(w, "Task Type", q, 5);
    tlw_int(w, "Physic Stream Id", c->stream);
    arg_int_col(w, "Task Id", q, 8);
    arg_int_col(w, "Subtask Id", q, 6); /* none: no contextId, as the loader reads it back */
    arg_int_col(w, "connection_id", q, 3);
    if (sqlite3_column_int(q, 14))
        arg_int_col(w, "size", q, 15);
    if (sqlite3_column_int(q, 11)) {
        arg_int_col(w, "Block Num", q, 12);
        arg_int_col(w, "Mix Block Num", q, 13);
    }
    return 1;
}

/* What write_tasks reads of each TASK row (column 25, the slice's own tid,
 * follows) and the tables it joins. */
#define TASK_COLS \
    "SELECT t.startNs, t.endNs, t.deviceId, t.connectionId, t.globalPid, coalesce(cty.value, tt.value), " \
    "  t.contextId, t.streamId, " \
    "  t.taskId, t.modelId, coalesce(n.value, cn.value), c.globalTaskId IS NOT NULL, c.blockNum, c.mixBlockNum, " \
    "  m.globalTaskId IS NOT NULL, m.size, ct.globalTaskId IS NOT NULL, ct.planeId, ct.notifyId, ct.srcRank, " \
    "  ct.dstRank, ct.size, ct.dataType, ct.bandwidth, ctt.value, "
#define TASK_JOINS \
    "LEFT JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId " \
    "LEFT JOIN STRING_IDS cn ON cn.id = c.name " \
    /* a compute task's type is its accelerator core (an msprof DB's TASK.taskType may name its API) */ \
    "LEFT JOIN STRING_IDS cty ON cty.id = c.taskType " \
    "LEFT JOIN MEMCPY_INFO m ON m.globalTaskId = t.globalTaskId " \
    "LEFT JOIN COMMUNICATION_TASK_INFO ct ON ct.globalTaskId = t.globalTaskId " \
    "LEFT JOIN STRING_IDS ctt ON ctt.id = ct.taskType " \
    "LEFT JOIN STRING_IDS n ON n.id = t.name " \
    "LEFT JOIN STRING_IDS tt ON tt.id = t.taskType " \
    "WHERE t.rankId IS ?1"

/* Every TASK row of the rank: an X slice of the layer it belongs to. */
static tb_status write_tasks(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    /* TASK.tid came after TASK.fileOffset: a DB of an earlier version lacks it */
    int has_tid = db_has_column(t->db, NULL, "TASK", "tid") > 0;
    tb_status st = prep_shaped(t, has_tid ? TASK_COLS "t.tid FROM TASK t " TASK_JOINS
                                          : TASK_COLS "NULL FROM TASK t " TASK_JOINS, "t", &q, err);
    if (st)
        return st;
    int rc;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        task_cols c = {.dev = is_null(q, 2) ? 0 : sqlite3_column_int64(q, 2), .gpid = sqlite3_column_int64(q, 4),
                       .stream = is_null(q, 7) ? 0 : sqlite3_column_int64(q, 7), .name = timeline_col_text(q, 10),
                       .start = sqlite3_column_int64(q, 0), .end = sqlite3_column_int64(q, 1)};
        int wrote = t->kineto ? task_kineto(t, q, &c) : sqlite3_column_int(q, 16) ? task_hccl(t, q, &c)
                                                                                  : task_device(t, q, &c);
        if (wrote < 0) {
            st = timeline_nomem(err);
            break;
        }
        if (!wrote)
            continue;
        if (wrote == 1)
            tlw_obj_end(t->w);
        st = tlw_end(t->w, err);
    }
    return step_done(t, q, rc, st, err);
}

static tb_status write_comm_ops(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep_shaped(t,
        "SELECT o.startNs, o.endNs, o.deviceId, o.connectionId, n.value, g.value, o.dataType, a.value, o.count "
        "FROM COMMUNICATION_OP o LEFT JOIN STRING_IDS n ON n.id = o.opName "
        "LEFT JOIN STRING_IDS g ON g.id = o.groupName LEFT JOIN STRING_IDS a ON a.id = o.algType "
        "WHERE o.rankId IS ?1", "o", &q, err);
    if (st)
        return st;
    static const arg_col map[] = {{"connection_id", 3}, {"group_name", 5}, {"alg_type", 7}};
    int rc;
    tlw *w = t->w;
    jv tid = {0};
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        long k = timeline_layer_proc(t, "Communication", is_null(q, 2) ? 0 : sqlite3_column_int64(q, 2), 16);
        if (k < 0) {
            st = timeline_nomem(err);
            break;
        }
        if (!t->procs[k].keep)
            continue;
        slice_head(t, timeline_col_text(q, 4), &t->procs[k].pid, &tid, sqlite3_column_int64(q, 0),
                   sqlite3_column_int64(q, 1));
        int shaped = shaped_args(t, q, map, 3);
        if (shaped) {
            st = shaped < 0 ? timeline_nomem(err) : tlw_end(w, err);
            continue;
        }
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
    /* a rank read from a timeline is written with the processes it had: no lanes added */
    if (!given && (st = prep(t, "SELECT EXISTS (SELECT 1 FROM TB_PROCESS WHERE rankId IS ?1)", &q, err)))
        return st;
    if (!given) {
        int own = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
        if (own)
            return TB_OK;
    }
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
        long k = timeline_layer_proc(t, "Overlap Analysis", is_null(q, 2) ? 0 : sqlite3_column_int64(q, 2), 31);
        if (k < 0) {
            st = timeline_nomem(err);
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
    tb_status st = prep_shaped(t,
        "SELECT x.startNs, x.endNs, x.globalTid, m.value, x.connectionId FROM MSTX_EVENTS x "
        "LEFT JOIN STRING_IDS m ON m.id = x.message WHERE x.rankId IS ?1", "x", &q, err);
    if (st)
        return st;
    static const arg_col map[] = {{"connection_id", 4}};
    int rc;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        int on = host_slice(t, q, "MsprofTx", 6, timeline_col_text(q, 3), err);
        if (on < 0) {
            st = err->code;
            break;
        }
        if (!on)
            continue;
        int shaped = shaped_args(t, q, map, 1);
        if (shaped) {
            st = shaped < 0 ? timeline_nomem(err) : tlw_end(t->w, err);
            continue;
        }
        tlw_obj(t->w, "args");
        arg_int_col(t->w, "connection_id", q, 4);
        tlw_obj_end(t->w);
        st = tlw_end(t->w, err);
    }
    return step_done(t, q, rc, st, err);
}

/* TB_EVENT rows: as they were read (phase, scope, category, args). */
static tb_status write_events(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    /* the scope came with TB_EVENT.scope: a DB of an earlier version has none */
    int scoped = db_has_column(t->db, NULL, "TB_EVENT", "scope") > 0;
    tb_status st = prep(t, scoped ?
        "SELECT e.pid, e.tid, e.ph, c.value, n.value, e.startNs, e.endNs, e.args, e.scope FROM TB_EVENT e "
        "LEFT JOIN STRING_IDS c ON c.id = e.cat LEFT JOIN STRING_IDS n ON n.id = e.name WHERE e.rankId IS ?1" :
        "SELECT e.pid, e.tid, e.ph, c.value, n.value, e.startNs, e.endNs, e.args, NULL FROM TB_EVENT e "
        "LEFT JOIN STRING_IDS c ON c.id = e.cat LEFT JOIN STRING_IDS n ON n.id = e.name WHERE e.rankId IS ?1",
        &q, err);
    if (st)
        return st;
    int rc;
    tlw *w = t->w;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        long k = timeline_row_proc(t, q, 0);
        jv tid;
        if (k < 0 || timeline_jv_col(q, 1, &tid)) {
            st = timeline_nomem(err);
            break;
        }
        if (!t->procs[k].keep) {
            timeline_jv_free(&tid);
            continue;
        }
        const char *ph = timeline_col_text(q, 2);
        tlw_begin(w);
        arg_str_col(w, "name", q, 4);
        timeline_put_jv(w, "pid", &t->procs[k].pid);
        if (!is_null(q, 1))
            timeline_put_jv(w, "tid", &tid);
        timeline_jv_free(&tid);
        if (!is_null(q, 5)) {
            int64_t s = sqlite3_column_int64(q, 5);
            tlw_us(w, "ts", s, !t->kineto);
            if (ph && strcmp(ph, "X") == 0 && !is_null(q, 6))
                tlw_dur(w, "dur", sqlite3_column_int64(q, 6) - s);
        }
        tlw_cstr(w, "ph", ph ? ph : "X");
        arg_str_col(w, "s", q, 8);
        arg_str_col(w, "cat", q, 3);
        const char *args = timeline_col_text(q, 7);
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
        long k = timeline_row_proc(t, q, 0);
        if (k < 0) {
            st = timeline_nomem(err);
            break;
        }
        if (!t->procs[k].keep)
            continue;
        const char *name = timeline_col_text(q, 1);
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
                st = timeline_nomem(err);
                break;
            }
            cur = k;
            cur_ts = ts;
            tlw_begin(w);
            tlw_cstr(w, "name", name ? name : "");
            timeline_put_jv(w, "pid", &t->procs[k].pid);
            tlw_int(w, "tid", 0);
            tlw_us(w, "ts", ts, !t->kineto);
            tlw_cstr(w, "ph", "C");
            tlw_obj(w, "args");
            open = 1;
        }
        const char *series = timeline_col_text(q, 2);
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
    if (have || db_has_table(t->db, NULL, "NPU_MEM", 1) <= 0)
        return TB_OK;
    if ((st = prep(t, "SELECT m.deviceId, e.value, m.timestampNs, m.ddr, m.hbm FROM NPU_MEM m "
                      "LEFT JOIN STRING_IDS e ON e.id = m.type WHERE m.rankId IS ?1", &q, err)))
        return st;
    int rc;
    tlw *w = t->w;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        long k = timeline_layer_proc(t, "NPU MEM", is_null(q, 0) ? 0 : sqlite3_column_int64(q, 0), 17);
        if (k < 0) {
            st = timeline_nomem(err);
            break;
        }
        if (!t->procs[k].keep || is_null(q, 2))
            continue;
        const char *ev = timeline_col_text(q, 1);
        const char *who = ev && (ev[0] == 'd' || ev[0] == 'D') ? "Device" : "APP";
        double ddr = sqlite3_column_double(q, 3), hbm = sqlite3_column_double(q, 4);
        static const char *const what[] = {"DDR", "HBM", "Memory"};
        double kb[] = {ddr / 1024, hbm / 1024, (ddr + hbm) / 1024};
        for (int i = 0; i < 3 && !st; i++) {
            char name[32];
            snprintf(name, sizeof name, "%s/%s", who, what[i]);
            tlw_begin(w);
            tlw_cstr(w, "name", name);
            timeline_put_jv(w, "pid", &t->procs[k].pid);
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
/* 1 when s can be written as it is where a JSON number goes (a flow id
 * that the trace wrote as a number, any length: the reader keeps it exact). */
static int plain_number(const char *s)
{
    if (!(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
        return 0;
    for (size_t n = 1; s[n]; n++)
        if (!strchr("0123456789.eE+-", s[n]))
            return 0;
    return 1;
}

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
    const char *id = timeline_col_text(q, 2);
    if (!id)
        id = "";
    /* as the trace wrote it (TB_FLOW.written); else a Kineto id as a number, an Ascend one as a string */
    int written = is_null(q, 9) ? -1 : sqlite3_column_int(q, 9);
    if (written >= 0 ? (written & 1) && plain_number(id) : t->kineto && plain_digits(id))
        tlw_raw(w, "id", id, strlen(id));
    else
        tlw_cstr(w, "id", id);
    timeline_put_jv(w, "pid", pid);
    jv tid;
    if (timeline_jv_col(q, tidc, &tid) == 0) {
        if (!is_null(q, tidc))
            timeline_put_jv(w, "tid", &tid);
        timeline_jv_free(&tid);
    }
    tlw_us(w, "ts", sqlite3_column_int64(q, tsc), !t->kineto);
    if (written >= 0 ? (written & (ph[0] == 's' ? 2 : 4)) != 0 : ph[0] == 'f')
        tlw_cstr(w, "bp", "e");
}

/* A flow the input had with one end only: that end alone (from: its start). */
static tb_status flow_one_end(tl *t, sqlite3_stmt *q, int from, tb_error *err)
{
    long k = timeline_row_proc(t, q, from ? 3 : 6);
    if (k < 0)
        return timeline_nomem(err);
    if (!t->procs[k].keep)
        return TB_OK;
    const char *name = timeline_col_text(q, 1);
    char *nm = strdup(name ? name : "");
    if (!nm)
        return timeline_nomem(err);
    tlw_begin(t->w);
    flow_half(t, q, from ? "s" : "f", nm, &t->procs[k].pid, from ? 4 : 7, from ? 5 : 8);
    free(nm);
    return tlw_end(t->w, err);
}

static tb_status write_flows(tl *t, tb_error *err)
{
    sqlite3_stmt *q;
    tb_status st = prep(t, t->flow_written ?
        "SELECT c.value, coalesce(n.value, c.value || f.flowId), f.flowId, f.fromPid, f.fromTid, f.fromNs, "
        "  f.toPid, f.toTid, f.toNs, f.written FROM TB_FLOW f LEFT JOIN STRING_IDS c ON c.id = f.cat "
        "LEFT JOIN STRING_IDS n ON n.id = f.name WHERE f.rankId IS ?1"
        :
        "SELECT c.value, coalesce(n.value, c.value || f.flowId), f.flowId, f.fromPid, f.fromTid, f.fromNs, "
        "  f.toPid, f.toTid, f.toNs, NULL FROM TB_FLOW f LEFT JOIN STRING_IDS c ON c.id = f.cat "
        "LEFT JOIN STRING_IDS n ON n.id = f.name WHERE f.rankId IS ?1", &q, err);
    if (st)
        return st;
    int rc;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        int from = !is_null(q, 5) && !is_null(q, 3), to = !is_null(q, 8) && !is_null(q, 6);
        if (!from || !to) {
            if (from || to)
                t->res->flows_unpaired++;
            st = from || to ? flow_one_end(t, q, from, err) : TB_OK;
            continue;
        }
        long a = timeline_row_proc(t, q, 3), b = a < 0 ? -1 : timeline_row_proc(t, q, 6);
        if (a < 0 || b < 0) {
            st = timeline_nomem(err);
            break;
        }
        if (!t->procs[a].keep || !t->procs[b].keep)
            continue;
        const char *name = timeline_col_text(q, 1);
        char *nm = strdup(name ? name : "");
        if (!nm) {
            st = timeline_nomem(err);
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
            st = timeline_nomem(err);
            break;
        }
        if (!t->procs[a].keep || !t->procs[b].keep)
            continue;
        int64_t stream = is_null(q, 4) ? 0 : sqlite3_column_int64(q, 4);
        if (t->procs[b].made && stream_thread(t, b, stream)) {
            st = timeline_nomem(err);
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
            timeline_put_jv(w, "pid", &t->procs[end ? b : a].pid);
            timeline_put_jv(w, "tid", end ? &stid : &tid);
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
tb_status timeline_make_layers(tl *t, tb_error *err)
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
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) &&
            timeline_layer_proc(t, host[i].layer, -1, host[i].sort) < 0)
            st = timeline_nomem(err);
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
        long k = timeline_layer_proc(t, layer[kind], is_null(q, 1) ? 0 : sqlite3_column_int64(q, 1), sort[kind]);
        if (k < 0 || (kind == 0 && t->procs[k].made && stream_thread(t, k, is_null(q, 2) ? 0 : sqlite3_column_int64(q, 2)))) {
            st = timeline_nomem(err);
            break;
        }
    }
    return step_done(t, q, rc, st, err);
}

/* Every layer's events of the rank, in msprof's order (a Kineto trace's layers only). */
tb_status timeline_write_layers(tl *t, tb_error *err)
{
    t->shaped = db_has_column(t->db, NULL, "TASK", "argsShape") > 0;
    t->flow_written = db_has_column(t->db, NULL, "TB_FLOW", "written") > 0;
    tb_status st = write_pytorch(t, err);
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
    return st;
}
