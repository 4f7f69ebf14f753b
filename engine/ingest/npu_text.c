/* SPDX-License-Identifier: MIT */
/*
 * npu_text.c - torch_npu / msprof text outputs (summary CSVs) into unified-DB
 * rows.
 *
 * Which CSV a file is comes from its name (formats.md §4); columns are found
 * by header name with the aliases old and new versions use, and absent
 * optional columns are NULL. Times are microsecond text converted to exact
 * nanoseconds (a trailing TAB, as torch_npu writes, is stripped); memory
 * sizes in MB/KB become bytes. Rows:
 *   kernel_details.csv, op_summary*.csv -> TASK (+ COMPUTE_TASK_INFO for
 *       compute task types, + MEMCPY_INFO for MEMCPY tasks); rows whose
 *       Accelerator Core / Task Type is HCCL or COMMUNICATION (the hcom_*
 *       ops) -> COMMUNICATION_OP
 *   step_trace_time.csv -> TB_STEP_TRACE_TIME (µs, as written)
 *   memory_record.csv -> MEMORY_RECORD;  operator_memory.csv -> OP_MEMORY
 *   npu_module_mem.csv -> TB_NPU_MODULE_MEM (the component by name: the text
 *       file gives no module id; Total Reserved in MB (torch_npu) or KB
 *       (msprof) as bytes)
 *   static_op_mem.csv -> TB_STATIC_OP_MEM (Device_id as written: 'host' or a
 *       number; Size(KB) as bytes)
 *   operator_details.csv -> TB_OPERATOR_DETAILS (durations as exact ns)
 *   cluster_step_trace_time*.csv (msprof-analyze) -> TB_CLUSTER_STEP_TRACE_TIME
 *   op_statistic / api_statistic / communication_statistic.csv ->
 *       TB_OP_STATISTIC / TB_API_STATISTIC / TB_COMM_STATISTIC (times in ns)
 *   step_trace_<timestamp>.csv (msprof, graph iterations) -> TB_ITERATION:
 *       start = Iteration End - Iteration Time, end = Iteration End, indexId =
 *       the execution count of the row's model, iterId = Iteration ID
 *       (µs, as written; Index is text: a rank, or a stage's rank tuple)
 *   task_time_<timestamp>.csv (msprof: every device task with its kernel
 *       name, task type, stream, task id, start, stop and duration) -> TASK
 *       (+ COMPUTE_TASK_INFO / MEMCPY_INFO as for kernels). It repeats what
 *       op_summary and kernel_details give, so it only matters when nothing
 *       better filled TASK: detect.c puts it after the rank's other CSVs and
 *       the precedence masks (skip_rows) then skip it. Its rows are all
 *       device tasks: an HCCL task type gives no COMMUNICATION_OP, and a row
 *       whose kernel_name is N/A (msprof's mark of a non-compute task) gets
 *       no COMPUTE_TASK_INFO.
 *   npu_mem_<timestamp>.csv (msprof) -> NPU_MEM, in msprof's DB units: ddr
 *       and hbm in bytes (the CSV's KB times 1024), the event spelled as the
 *       DB spells it (APP -> app, Device -> device), time in ns. A rank whose
 *       msprof DB filled NPU_MEM adds no second copy.
 * torch_npu's own summary CSVs (kernel_details.csv, step_trace_time.csv, ...
 * by their exact names, kept_name) are also kept as read, for export summary
 * to write back: TB_SOURCE_CSV gets the header line byte for byte and each
 * loaded row CSV-encoded as the file wrote it.
 * A step_trace_time.csv whose rank already has TB_STEP_TRACE_TIME rows from
 * analysis.db adds none (its rows count as filled by a better source).
 * A row whose field count differs from the header's is skipped with a
 * warning naming FILE:LINE (real files have such rows) and counted under
 * TB_DEST_BAD_ROWS (TB_SOURCE.rowsSkipped); --strict makes it an error.
 * Excel-saved files with exponent timestamps load with one warning that
 * precision was lost.
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest/npu_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tracebook/db.h"
#include "util/csv.h"
#include "util/str.h"

enum text_kind {
    T_KERNELS, T_STEP_TRACE, T_MEMORY_RECORD, T_OP_MEMORY, T_MODULE_MEM, T_STATIC_OP_MEM, T_OPERATOR_DETAILS,
    T_CLUSTER_STEP_TRACE, T_ITERATIONS, T_OP_STATISTIC, T_API_STATISTIC, T_COMM_STATISTIC, T_TASK_TIME,
    T_NPU_MEM, T_UNKNOWN
};

static int text_kind(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    static const struct {
        const char *prefix;
        int kind;
    } by_name[] = {
        {"kernel_details", T_KERNELS}, {"op_summary", T_KERNELS}, {"step_trace_time", T_STEP_TRACE},
        {"memory_record", T_MEMORY_RECORD}, {"operator_memory", T_OP_MEMORY}, {"npu_module_mem", T_MODULE_MEM},
        {"static_op_mem", T_STATIC_OP_MEM}, {"operator_details", T_OPERATOR_DETAILS},
        {"cluster_step_trace_time", T_CLUSTER_STEP_TRACE}, {"op_statistic", T_OP_STATISTIC},
        {"api_statistic", T_API_STATISTIC}, {"communication_statistic", T_COMM_STATISTIC},
        {"task_time", T_TASK_TIME}, {"npu_mem", T_NPU_MEM},
    };
    for (size_t i = 0; i < sizeof by_name / sizeof by_name[0]; i++)
        if (str_starts(base, by_name[i].prefix))
            return by_name[i].kind;
    /* msprof's graph iterations: step_trace_<timestamp>.csv (or a slice of it) */
    if (!strcmp(base, "step_trace.csv") ||
        (str_starts(base, "step_trace_") && (base[11] >= '0' && base[11] <= '9')) || str_starts(base, "step_trace_slice_"))
        return T_ITERATIONS;
    return T_UNKNOWN;
}

int npu_text_is_known(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && (!strcmp(path + n - 4, ".csv") || (n > 7 && !strcmp(path + n - 7, ".csv.gz"))) &&
           text_kind(path) != T_UNKNOWN;
}

int npu_text_order(const char *path)
{
    return text_kind(path) == T_TASK_TIME; /* a copy of op_summary's tasks: read last */
}

int npu_text_same_series(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    size_t da = sa ? (size_t)(sa - a) : 0, db = sb ? (size_t)(sb - b) : 0;
    if (da != db || memcmp(a, b, da) != 0)
        return 0;
    const char *ba = sa ? sa + 1 : a, *bb = sb ? sb + 1 : b;
    const char *la = strstr(ba, "_slice_"), *lb = strstr(bb, "_slice_");
    /* <name>_slice_<n>_<timestamp>.csv: the same <name>, a different n */
    return la && lb && la - ba == lb - bb && memcmp(ba, bb, (size_t)(la - ba)) == 0 &&
           text_kind(a) == text_kind(b) && text_kind(a) != T_UNKNOWN;
}

typedef struct ctx {
    const row_sink *sink;
    import_ids *ids;
    const import_opts *opt;
    import_result *res;
    tb_error *err;
    csv_reader *csv;
    const csv_row *row;
    int lost_precision;
    char *buf;
    size_t cap;
    int64_t keep_file;     /* the file's name as a string id when its rows are kept (TB_SOURCE_CSV), else -1 */
} ctx;

#define COLS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int row_out(ctx *c, int table, const tb_val *v)
{
    if (row_set_has(&c->opt->skip_rows, table))
        return 0;
    if (c->sink->row(c->sink->ctx, table, v) == 0)
        return 0;
    row_sink_fail(c->sink, NULL, c->err);
    return -1;
}

/* Interns s[0..n) through the sink; -1 with c->err set on failure. */
static int64_t intern_text(ctx *c, const char *s, size_t n)
{
    int64_t id = c->sink->intern(c->sink->ctx, s, n);
    if (id < 0)
        row_sink_fail(c->sink, NULL, c->err);
    return id;
}

static csv_field field(ctx *c, int col)
{
    csv_field none = {"", 0};
    if (col < 0 || col >= c->row->n)
        return none;
    return csv_trim(c->row->f[col]);
}

/* Text of a field with doubled-quote shapes unwrapped ("\"8192,2\"" -> 8192,2). */
static tb_val text_val(ctx *c, int col)
{
    csv_field f = field(c, col);
    if (csv_is_null(f))
        return VNULL;
    while (f.n >= 2 && f.p[0] == '"' && f.p[f.n - 1] == '"') {
        f.p++;
        f.n -= 2;
    }
    return VTEXT(f.p, f.n);
}

static int64_t intern_col(ctx *c, int col)
{
    tb_val v = text_val(c, col);
    if (v.type == V_NULL)
        return -2;
    return intern_text(c, v.s, v.n);
}

static tb_val idv(int64_t id)
{
    return id < 0 ? VNULL : VINT(id);
}

static tb_val int_val(ctx *c, int col)
{
    int64_t v;
    csv_field f = field(c, col);
    return !csv_is_null(f) && csv_int(f, &v) == 0 ? VINT(v) : VNULL;
}

static tb_val real_val(ctx *c, int col)
{
    double v;
    csv_field f = field(c, col);
    return !csv_is_null(f) && csv_real(f, &v) == 0 ? VREAL(v) : VNULL;
}

/* A number in `unit` bytes (MB, KB) as whole bytes (sizes_fit checked it fits). */
static tb_val bytes_val(ctx *c, int col, double unit)
{
    double v;
    csv_field f = field(c, col);
    return !csv_is_null(f) && csv_real(f, &v) == 0 ? VINT((int64_t)llround(v * unit)) : VNULL;
}

/* 0 when each size of columns cols[0..n) (numbers of `unit` bytes) holds
 * fewer bytes than int64 does; else -1 with err set at the row (llround's
 * result would be no number of bytes at all). */
static int sizes_fit(ctx *c, const int *cols, int n, double unit)
{
    for (int i = 0; i < n; i++) {
        double v;
        csv_field f = field(c, cols[i]);
        if (!csv_is_null(f) && csv_real(f, &v) == 0 && !(fabs(v * unit) < 0x1p63)) {
            tb_error_at(c->err, TB_ERR_PARSE, csv_path(c->csv), c->row->line, 0, c->row->offset,
                        "size '%.*s' in column '%.*s' is beyond 2^63 bytes", (int)(f.n > 40 ? 40 : f.n), f.p,
                        (int)csv_name(c->csv, cols[i]).n, csv_name(c->csv, cols[i]).p);
            return -1;
        }
    }
    return 0;
}

/* µs text -> ns; fails (TB_ERR_PARSE) on text that is not a time. A time
 * written in literal quotes ("1698131672794564.2", as msprof's manual shows
 * task_time's) is read without them. */
static int time_val(ctx *c, int col, tb_val *out)
{
    csv_field f = field(c, col);
    while (f.n >= 2 && f.p[0] == '"' && f.p[f.n - 1] == '"')
        f = csv_trim((csv_field){f.p + 1, f.n - 2});
    if (csv_is_null(f)) {
        *out = VNULL;
        return 0;
    }
    int64_t ns;
    if (csv_us_to_ns(f, &ns, &c->lost_precision) != 0) {
        tb_error_at(c->err, TB_ERR_PARSE, csv_path(c->csv), c->row->line, 0, c->row->offset,
                    "bad time '%.*s' in column '%.*s'", (int)(f.n > 40 ? 40 : f.n), f.p,
                    (int)csv_name(c->csv, col).n, csv_name(c->csv, col).p);
        return -1;
    }
    *out = VINT(ns);
    return 0;
}

/* Device of a row: Device_id, else "Device Type"/"Device" like NPU:3, else -1 (unknown). */
static int64_t device_known(ctx *c, int dev_col, int type_col)
{
    int64_t d;
    csv_field f = field(c, dev_col);
    if (dev_col >= 0 && csv_int(f, &d) == 0)
        return d;
    f = field(c, type_col);
    if (type_col >= 0 && f.n > 4 && memcmp(f.p, "NPU:", 4) == 0) {
        csv_field n = {f.p + 4, f.n - 4};
        if (csv_int(n, &d) == 0)
            return d;
    }
    return -1;
}

/* Device of a row, 0 when the file does not say. */
static int64_t device_of(ctx *c, int dev_col, int type_col)
{
    int64_t d = device_known(c, dev_col, type_col);
    return d < 0 ? 0 : d;
}

static void note_time(ctx *c, int64_t start, int64_t end)
{
    import_note_time(c->res, start, end);
}

static int non_compute(csv_field t)
{
    static const char *const pre[] = {"EVENT_", "NOTIFY_", "STREAM_WAIT", "MEMCPY", "PROFILING_", "HCCL",
                                      "COMMUNICATION", "RDMA", "SDMA", "WRITE_VALUE"};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (t.n >= strlen(pre[i]) && memcmp(t.p, pre[i], strlen(pre[i])) == 0)
            return 1;
    return 0;
}

typedef struct kcols {
    int name, type, core, start, dur, stop, stream, task, model, ctx, block, mix, shapes, dev, devtype;
    int tasks_only; /* task_time: every row is a device task (no HCCL ops), N/A names are not compute */
    /* the PMU metric columns (after Context ID) and their names' string ids */
    int pmu_col[64];
    int64_t pmu_name[64];
    int n_pmu;
} kcols;

/* A row with a time outside the stored range: skipped and counted (1), or
 * an error with --strict (-1, err set at the row). */
static int bad_time(ctx *c)
{
    if (c->opt->strict_rows) {
        tb_error_at(c->err, TB_ERR_PARSE, csv_path(c->csv), c->row->line, 0, c->row->offset,
                    "a time outside +-2^62 ns (about 146 years from 1970)");
        return -1;
    }
    c->res->dest[TB_DEST_BAD_TIME]++;
    return 1;
}

/* The times of columns cols[0..n) into out (time_val), each checked against
 * the stored range: 0; 1 when one lies outside (the row is skipped and
 * counted, bad_time); -1 with err set (text that is no time, or --strict). */
static int row_times(ctx *c, const int *cols, int n, tb_val *out)
{
    for (int i = 0; i < n; i++)
        if (time_val(c, cols[i], &out[i]))
            return -1;
    for (int i = 0; i < n; i++)
        if (out[i].type == V_INT && !import_time_ok(out[i].i, 0))
            return bad_time(c);
    return 0;
}

static int kernel_row(ctx *c, const kcols *k)
{
    tb_val start, dur, stop;
    if (time_val(c, k->start, &start) || time_val(c, k->dur, &dur) || time_val(c, k->stop, &stop))
        return -1;
    if (start.type == V_NULL)
        return 1; /* no start: nothing to place on a timeline */
    int64_t span = stop.type == V_INT && stop.i >= start.i && import_time_ok(start.i, 0) ? 0
                   : dur.type == V_INT ? dur.i : 0;
    if (!import_time_ok(start.i, span) || (stop.type == V_INT && !import_time_ok(stop.i, 0)))
        return bad_time(c);
    int64_t end = stop.type == V_INT && stop.i >= start.i ? stop.i : start.i + span;
    int64_t known = device_known(c, k->dev, k->devtype), dev = known < 0 ? 0 : known;
    csv_field core = field(c, k->core);
    int64_t name = intern_col(c, k->name), type = intern_col(c, k->type), coreid = intern_col(c, k->core);
    if (name == -1 || type == -1 || coreid == -1)
        return -1;
    int comm = !k->tasks_only && ((core.n == 4 && !memcmp(core.p, "HCCL", 4)) ||
                                  (core.n == 13 && !memcmp(core.p, "COMMUNICATION", 13)));
    /* a row a better source already gave says nothing about the rank's span or devices */
    if (!(row_set_has(&c->opt->skip_rows, comm ? R_COMMUNICATION_OP : R_TASK))) {
        note_time(c, start.i, end);
        if (known >= 0 && known < 64)
            c->res->devices_seen |= (uint64_t)1 << known;
    }
    c->res->events++;
    if (comm) {
        tb_val v[14] = {idv(name), start, VINT(end), VNULL, VNULL, VINT(c->ids->next_op++), VNULL, VNULL, VNULL,
                        idv(type), VINT(dev), VINT(c->opt->rank)};
        c->res->dest[TB_DEST_COMMUNICATION_OP]++;
        return row_out(c, R_COMMUNICATION_OP, v);
    }
    int64_t gid = c->ids->next_task++;
    /* PMU metrics: onto this row's task; when a better source gives the
     * rank's tasks, staged by start and name for the load to find theirs */
    int staged = row_set_has(&c->opt->skip_rows, R_TASK);
    for (int j = 0; j < k->n_pmu && name >= 0; j++) {
        tb_val v = int_val(c, k->pmu_col[j]);
        if (v.type == V_NULL)
            v = real_val(c, k->pmu_col[j]);
        if (v.type == V_NULL)
            continue;
        tb_val at[6] = {VINT(c->opt->rank), known < 0 ? VNULL : VINT(dev), start, VINT(name),
                        VINT(k->pmu_name[j]), v};
        tb_val own[4] = {VINT(gid), VINT(k->pmu_name[j]), v, VINT(c->opt->rank)};
        if (staged ? row_out(c, R_KERNEL_PMU, at) : row_out(c, R_TASK_PMU_INFO, own))
            return -1;
    }
    /* the CSV's Type, staged the same way: it wins over a type the timeline's name gave.
     * A CSV without Device_id stages no device: the task's own is taken */
    if (staged && type >= 0 && name >= 0 && !k->tasks_only && !non_compute(core)) {
        tb_val kt[5] = {VINT(c->opt->rank), known < 0 ? VNULL : VINT(dev), start, VINT(name), VINT(type)};
        if (row_out(c, R_KERNEL_TYPE, kt))
            return -1;
    }
    tb_val model = int_val(c, k->model);
    tb_val task[17] = {start, VINT(end), VINT(dev), VNULL, VINT(gid), VNULL, idv(coreid), int_val(c, k->ctx),
                       int_val(c, k->stream), int_val(c, k->task), model.type == V_NULL ? VINT(TB_STEP_MODEL_ID) : model,
                       VINT(c->opt->rank), idv(name)};
    if (row_out(c, R_TASK, task))
        return -1;
    c->res->dest[TB_DEST_TASK]++;
    if (core.n >= 6 && !memcmp(core.p, "MEMCPY", 6)) {
        tb_val m[4] = {VINT(gid), VNULL, VINT(65535), VINT(c->opt->rank)};
        c->res->dest[TB_DEST_MEMCPY_INFO]++;
        return row_out(c, R_MEMCPY_INFO, m);
    }
    if (non_compute(core) || (k->tasks_only && name < 0))
        return 0;
    int64_t shapes = intern_col(c, k->shapes);
    if (shapes == -1)
        return -1;
    tb_val info[8] = {idv(name), VINT(gid), idv(coreid), idv(type), int_val(c, k->block), int_val(c, k->mix),
                      idv(shapes), VINT(c->opt->rank)};
    c->res->dest[TB_DEST_COMPUTE_TASK_INFO]++;
    return row_out(c, R_COMPUTE_TASK_INFO, info);
}

/* col: event, ddr(KB), hbm(KB), timestamp(us), Device_id. NPU_MEM as msprof's
 * DB holds it: the event as a string id spelled as the DB spells it, sizes in
 * bytes, the time in ns. */
static int npu_mem_row(ctx *c, const int *col)
{
    tb_val ts;
    int r = row_times(c, &col[3], 1, &ts);
    if (r)
        return r;
    c->res->events++;
    if (row_set_has(&c->opt->skip_rows, R_NPU_MEM)) {
        c->res->dest[TB_DEST_BETTER_SOURCE]++; /* the rank's msprof DB gave them */
        return 0;
    }
    if (sizes_fit(c, &col[1], 2, 1024.0))
        return -1;
    tb_val ev = text_val(c, col[0]);
    int64_t type = -2;
    if (ev.type == V_TEXT) {
        if (ev.n == 3 && !strncasecmp(ev.s, "app", 3))
            type = intern_text(c, "app", 3);
        else if (ev.n == 6 && !strncasecmp(ev.s, "device", 6))
            type = intern_text(c, "device", 6);
        else
            type = intern_text(c, ev.s, ev.n);
        if (type == -1)
            return -1;
    }
    int64_t known = device_known(c, col[4], -1);
    if (ts.type == V_INT)
        note_time(c, ts.i, ts.i);
    if (known >= 0 && known < 64)
        c->res->devices_seen |= (uint64_t)1 << known;
    tb_val v[6] = {idv(type), bytes_val(c, col[1], 1024.0), bytes_val(c, col[2], 1024.0), ts,
                   VINT(known < 0 ? 0 : known), VINT(c->opt->rank)};
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    return row_out(c, R_NPU_MEM, v);
}

/* Executions counted per (device, model), for TB_ITERATION.indexId. */
typedef struct model_count {
    int64_t device, model, n;
} model_count;

/* msprof step_trace rows: one graph iteration each. The iteration starts
 * Iteration Time before its end (FP Start when that is missing); indexId
 * counts the executions of its model in file order, which is end order. */
/* The Reduce Start / Reduce Duration column pairs of a step_trace CSV, in order. */
typedef struct reduce_cols {
    int start[32], dur[32];
    int n;
} reduce_cols;

static int iteration_row(ctx *c, const int *col, const reduce_cols *rc, model_count *mc, size_t *nmc)
{
    tb_val t[6];
    int r = row_times(c, (const int[]){col[2], col[3], col[4], col[6], col[7], col[8]}, 6, t);
    for (int i = 0; i < rc->n && !r; i++) {
        tb_val rt[2];
        r = row_times(c, (const int[]){rc->start[i], rc->dur[i]}, 2, rt);
    }
    if (r)
        return r;
    tb_val fp = t[0], end = t[1], dur = t[2], bp = t[3], refresh = t[4], aug = t[5];
    if (end.type != V_INT)
        return 0;
    /* both within +-2^62 ns: the difference fits, and is checked in its turn */
    int64_t start = dur.type == V_INT ? end.i - dur.i : fp.type == V_INT ? fp.i : end.i;
    if (!import_time_ok(start, 0))
        return bad_time(c);
    int64_t known = device_known(c, col[0], -1), dev = known < 0 ? 0 : known, model = TB_STEP_MODEL_ID, iter = -1;
    tb_val m = int_val(c, col[5]);
    if (m.type == V_INT)
        model = m.i;
    tb_val it = int_val(c, col[1]);
    if (it.type == V_INT)
        iter = it.i;
    size_t k = 0;
    while (k < *nmc && !(mc[k].device == dev && mc[k].model == model))
        k++;
    if (k == *nmc) {
        if (*nmc == 64)
            k = 63; /* more models than anyone runs: the last slot counts the rest */
        else
            mc[(*nmc)++] = (model_count){dev, model, 0};
    }
    mc[k].n++;
    import_note_time(c->res, start, end.i);
    if (known >= 0 && known < 64)
        c->res->devices_seen |= (uint64_t)1 << known;
    /* N/A (msprof's mark of a value it has not) is NULL */
    tb_val v[11] = {VINT(c->opt->rank), VINT(dev), VINT(model), VINT(mc[k].n), iter < 0 ? VNULL : VINT(iter),
                    VINT(start), end, fp.type == V_INT ? fp : VNULL, bp.type == V_INT ? bp : VNULL,
                    refresh.type == V_INT ? refresh : VNULL, aug.type == V_INT ? aug : VNULL};
    c->res->events++;
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    if (row_out(c, R_ITERATION, v))
        return -1;
    for (int i = 0; i < rc->n; i++) {
        tb_val rs, rd;
        if (time_val(c, rc->start[i], &rs) || time_val(c, rc->dur[i], &rd))
            return -1;
        if (rs.type != V_INT && rd.type != V_INT)
            continue; /* this iteration has fewer reduces than the widest */
        tb_val r[7] = {VINT(c->opt->rank), VINT(dev), VINT(model), iter < 0 ? VNULL : VINT(iter), VINT(i),
                       rs.type == V_INT ? rs : VNULL, rd.type == V_INT ? rd : VNULL};
        if (row_out(c, R_ITERATION_REDUCE, r))
            return -1;
    }
    return 0;
}

static int step_trace_row(ctx *c, const int *col, int dev_col)
{
    tb_val v[12];
    v[0] = VINT(c->opt->rank);
    v[1] = dev_col >= 0 ? int_val(c, dev_col) : VNULL;
    v[2] = text_val(c, col[0]);
    for (int i = 1; i < 10; i++)
        v[2 + i] = real_val(c, col[i]);
    c->res->events++;
    if (row_set_has(&c->opt->skip_rows, R_STEP_TRACE_TIME)) {
        c->res->dest[TB_DEST_BETTER_SOURCE]++; /* the rank's analysis.db gave them */
        return 0;
    }
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    return row_out(c, R_STEP_TRACE_TIME, v);
}

/* col: Component, Timestamp(us), Total Reserved, Device_id, Device; unit: bytes per reserved unit */
static int module_mem_row(ctx *c, const int *col, double unit)
{
    tb_val ts;
    int r = row_times(c, &col[1], 1, &ts);
    if (r || sizes_fit(c, &col[2], 1, unit))
        return r ? r : -1;
    int64_t comp = intern_col(c, col[0]);
    if (comp == -1)
        return -1;
    if (ts.type == V_INT)
        note_time(c, ts.i, ts.i);
    tb_val v[5] = {VINT(c->opt->rank), idv(comp), ts, bytes_val(c, col[2], unit), VINT(device_of(c, col[3], col[4]))};
    c->res->events++;
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    return row_out(c, R_TB_NPU_MODULE_MEM, v);
}

/* col: Device_id, Op Name, Model Name, Graph ID, Node Index Start, Node Index End, Size(KB) */
static int static_op_mem_row(ctx *c, const int *col)
{
    if (sizes_fit(c, &col[6], 1, 1024.0))
        return -1;
    int64_t op = intern_col(c, col[1]), model = intern_col(c, col[2]);
    if (op == -1 || model == -1)
        return -1;
    tb_val v[8] = {VINT(c->opt->rank), text_val(c, col[0]), idv(op), idv(model), int_val(c, col[3]),
                   int_val(c, col[4]), int_val(c, col[5]), bytes_val(c, col[6], 1024.0)};
    c->res->events++;
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    return row_out(c, R_STATIC_OP_MEM, v);
}

/* Statistics CSVs. col: the columns in row-table order after rankId and
 * deviceId (-1 absent); kinds: 's' string id, 'i' integer, 't' µs -> ns,
 * 'r' real; dev: Device_id column. */
static int statistic_row(ctx *c, int table, const int *col, const char *kinds, int dev)
{
    tb_val v[16];
    int n = (int)strlen(kinds);
    v[0] = VINT(c->opt->rank);
    int64_t d = device_known(c, dev, -1);
    v[1] = d < 0 ? VNULL : VINT(d);
    for (int i = 0; i < n; i++) { /* the times first: a row skipped for one interns nothing */
        int r = kinds[i] == 't' ? row_times(c, &col[i], 1, &v[2 + i]) : 0;
        if (r)
            return r;
    }
    for (int i = 0; i < n; i++) {
        switch (kinds[i]) {
        case 's': {
            int64_t id = intern_col(c, col[i]);
            if (id == -1)
                return -1;
            v[2 + i] = idv(id);
            break;
        }
        case 't': break; /* read above */
        case 'i': v[2 + i] = int_val(c, col[i]); break;
        default: v[2 + i] = real_val(c, col[i]); break;
        }
    }
    if (d >= 0 && d < 64)
        c->res->devices_seen |= (uint64_t)1 << d;
    c->res->events++;
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    return row_out(c, table, v);
}

/* col: Name, Input Shapes, Call Stack, then the six durations */
static int operator_details_row(ctx *c, const int *col)
{
    tb_val v[10];
    int r = row_times(c, &col[3], 6, &v[4]);
    if (r)
        return r;
    int64_t name = intern_col(c, col[0]), shapes = intern_col(c, col[1]);
    if (name == -1 || shapes == -1)
        return -1;
    v[0] = VINT(c->opt->rank);
    v[1] = idv(name);
    v[2] = idv(shapes);
    v[3] = text_val(c, col[2]);
    c->res->events++;
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    return row_out(c, R_OPERATOR_DETAILS, v);
}

/* col: Step, Type, Index, then the nine step trace fields */
static int cluster_step_trace_row(ctx *c, const int *col)
{
    tb_val v[12];
    for (int i = 0; i < 3; i++)
        v[i] = text_val(c, col[i]);
    for (int i = 3; i < 12; i++)
        v[i] = real_val(c, col[i]);
    c->res->events++;
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    return row_out(c, R_CLUSTER_STEP_TRACE_TIME, v);
}

static int memory_record_row(ctx *c, const int *col)
{
    tb_val ts;
    int r = row_times(c, &col[1], 1, &ts);
    if (r || sizes_fit(c, &col[2], 3, 1048576.0))
        return r ? r : -1;
    int64_t comp = intern_col(c, col[0]);
    if (comp == -1)
        return -1;
    if (ts.type == V_INT)
        note_time(c, ts.i, ts.i);
    tb_val v[8] = {idv(comp), ts, bytes_val(c, col[2], 1048576.0), bytes_val(c, col[3], 1048576.0),
                   bytes_val(c, col[4], 1048576.0), text_val(c, col[5]), VINT(device_of(c, -1, col[6])),
                   VINT(c->opt->rank)};
    c->res->events++;
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    return row_out(c, R_MEMORY_RECORD, v);
}

static int op_memory_row(ctx *c, const int *col)
{
    tb_val t[5];
    int r = row_times(c, &col[2], 5, t);
    if (r || sizes_fit(c, &col[1], 1, 1024.0) || sizes_fit(c, &col[7], 6, 1048576.0))
        return r ? r : -1;
    tb_val alloc = t[0], rel = t[1], arel = t[2], dur = t[3], adur = t[4];
    int64_t name = intern_col(c, col[0]);
    if (name == -1)
        return -1;
    if (alloc.type == V_INT)
        note_time(c, alloc.i, rel.type == V_INT ? rel.i : alloc.i);
    tb_val v[16] = {idv(name), bytes_val(c, col[1], 1024.0), alloc, rel, arel, dur, adur,
                    bytes_val(c, col[7], 1048576.0), bytes_val(c, col[8], 1048576.0), bytes_val(c, col[9], 1048576.0),
                    bytes_val(c, col[10], 1048576.0), bytes_val(c, col[11], 1048576.0),
                    bytes_val(c, col[12], 1048576.0), text_val(c, col[13]), VINT(device_of(c, -1, col[14])),
                    VINT(c->opt->rank)};
    c->res->events++;
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    return row_out(c, R_OP_MEMORY, v);
}

/* Where the columns a file's kind reads are; filled once from the header. */
typedef struct layout {
    int kind;
    kcols k;               /* kernels and task_time */
    int col[16];           /* every other kind, in the order its row reader takes them */
    reduce_cols reduces;   /* step_trace iterations */
    int dev_col;           /* Device_id of step_trace_time and the statistics */
    double unit;           /* bytes per Total Reserved unit of npu_module_mem */
} layout;

/* kernel_details / op_summary: the kernel columns by their aliases, then the
 * PMU metrics. 0, or -1 with err set. */
static int kernel_cols(ctx *c, kcols *k)
{
    k->name = csv_require(c->csv, COLS("Name", "Op Name"), c->err);
    k->start = csv_require(c->csv, COLS("Start Time(us)", "Task Start Time(us)"), c->err);
    if (k->name < 0 || k->start < 0)
        return -1;
    k->type = csv_col(c->csv, COLS("Type", "OP Type"));
    k->core = csv_col(c->csv, COLS("Accelerator Core", "Task Type"));
    k->dur = csv_col(c->csv, COLS("Duration(us)", "Task Duration(us)"));
    k->stream = csv_col(c->csv, COLS("Stream ID"));
    k->task = csv_col(c->csv, COLS("Task ID"));
    k->model = csv_col(c->csv, COLS("Model ID"));
    k->ctx = csv_col(c->csv, COLS("Context ID"));
    k->block = csv_col(c->csv, COLS("Block Num", "Block Dim"));
    k->mix = csv_col(c->csv, COLS("Mix Block Num", "Mix Block Dim"));
    k->shapes = csv_col(c->csv, COLS("Input Shapes"));
    k->dev = csv_col(c->csv, COLS("Device_id"));
    k->devtype = csv_col(c->csv, COLS("Device Type"));
    /* msprof and torch_npu write the PMU metrics after Context ID */
    for (int i = k->ctx < 0 ? csv_width(c->csv) : k->ctx + 1; i < csv_width(c->csv) && k->n_pmu < 64; i++) {
        csv_field h = csv_trim(csv_name(c->csv, i));
        if (!h.n)
            continue;
        k->pmu_col[k->n_pmu] = i;
        if ((k->pmu_name[k->n_pmu++] = intern_text(c, h.p, h.n)) < 0)
            return -1;
    }
    return 0;
}

/* task_time: the device task columns. 0; 1 when the file holds task
 * scheduler totals instead (nothing to read); -1 with err set. */
static int task_time_cols(ctx *c, kcols *k, const char *path)
{
    *k = (kcols){.name = -1, .type = -1, .core = -1, .start = -1, .dur = -1, .stop = -1, .stream = -1,
                 .task = -1, .model = -1, .ctx = -1, .block = -1, .mix = -1, .shapes = -1, .dev = -1,
                 .devtype = -1, .tasks_only = 1};
    if (csv_col(c->csv, COLS("task_start(us)")) < 0 && csv_col(c->csv, COLS("Running(us)")) >= 0 &&
        csv_col(c->csv, COLS("Waiting(us)")) >= 0) {
        /* msprof's older chips write task scheduler totals per task type
         * under this name (Time(%), Time(us), Count, ..., Waiting(us),
         * Running(us), Pending(us), ...): no tasks to place */
        if (c->opt->warn) {
            char msg[1200];
            snprintf(msg, sizeof msg, "%s: task scheduler totals (no task_start(us) column): not read", path);
            c->opt->warn(c->opt->ctx, msg);
        }
        return 1;
    }
    k->name = csv_require(c->csv, COLS("kernel_name"), c->err);
    k->start = k->name < 0 ? -1 : csv_require(c->csv, COLS("task_start(us)"), c->err);
    if (k->name < 0 || k->start < 0)
        return -1;
    k->core = csv_col(c->csv, COLS("kernel_type"));
    k->stream = csv_col(c->csv, COLS("stream_id"));
    k->task = csv_col(c->csv, COLS("task_id"));
    k->dur = csv_col(c->csv, COLS("task_time(us)"));
    k->stop = csv_col(c->csv, COLS("task_stop(us)"));
    k->dev = csv_col(c->csv, COLS("Device_id"));
    return 0;
}

/* The memory CSVs (npu_mem, memory_record, operator_memory, npu_module_mem,
 * static_op_mem): col in the order their row readers take. 0, or -1 with err set. */
static int memory_cols(ctx *c, int kind, int *col, double *unit)
{
    csv_reader *csv = c->csv;
    tb_error *err = c->err;
    switch (kind) {
    case T_NPU_MEM:
        col[0] = csv_require(csv, COLS("event"), err);
        col[3] = col[0] < 0 ? -1 : csv_require(csv, COLS("timestamp(us)"), err);
        if (col[0] < 0 || col[3] < 0)
            return -1;
        col[1] = csv_col(csv, COLS("ddr(KB)"));
        col[2] = csv_col(csv, COLS("hbm(KB)"));
        col[4] = csv_col(csv, COLS("Device_id"));
        return 0;
    case T_MEMORY_RECORD:
        col[0] = csv_require(csv, COLS("Component"), err);
        col[1] = csv_require(csv, COLS("Timestamp(us)"), err);
        if (col[0] < 0 || col[1] < 0)
            return -1;
        col[2] = csv_col(csv, COLS("Total Allocated(MB)"));
        col[3] = csv_col(csv, COLS("Total Reserved(MB)"));
        col[4] = csv_col(csv, COLS("Total Active(MB)"));
        col[5] = csv_col(csv, COLS("Stream Ptr"));
        col[6] = csv_col(csv, COLS("Device Type", "Device"));
        return 0;
    case T_OP_MEMORY: {
        static const char *const names[15] = {
            "Name", "Size(KB)", "Allocation Time(us)", "Release Time(us)", "Active Release Time(us)",
            "Duration(us)", "Active Duration(us)", "Allocation Total Allocated(MB)", "Allocation Total Reserved(MB)",
            "Allocation Total Active(MB)", "Release Total Allocated(MB)", "Release Total Reserved(MB)",
            "Release Total Active(MB)", "Stream Ptr", "Device Type"};
        for (int i = 0; i < 15; i++) {
            const char *one[2] = {names[i], NULL};
            col[i] = i == 0 ? csv_require(csv, one, err) : csv_col(csv, one);
        }
        return col[0] < 0 ? -1 : 0;
    }
    case T_MODULE_MEM:
        col[0] = csv_require(csv, COLS("Component"), err);
        col[1] = col[0] < 0 ? -1 : csv_require(csv, COLS("Timestamp(us)"), err);
        if (col[0] < 0 || col[1] < 0)
            return -1;
        col[2] = csv_col(csv, COLS("Total Reserved(MB)"));
        if (col[2] < 0 && (col[2] = csv_col(csv, COLS("Total Reserved(KB)"))) >= 0)
            *unit = 1024.0; /* msprof's npu_module_mem says KB */
        col[3] = csv_col(csv, COLS("Device_id", "Device Id"));
        col[4] = csv_col(csv, COLS("Device", "Device Type"));
        return 0;
    default: { /* T_STATIC_OP_MEM */
        static const char *const names[7][3] = {
            {"Device_id", "Device Id", NULL}, {"Op Name", "Name", NULL}, {"Model Name", NULL, NULL},
            {"Graph ID", "Graph Id", NULL}, {"Node Index Start", NULL, NULL}, {"Node Index End", NULL, NULL},
            {"Size(KB)", NULL, NULL}};
        for (int i = 0; i < 7; i++)
            col[i] = i == 1 ? csv_require(csv, names[i], err) : csv_col(csv, names[i]);
        return col[1] < 0 ? -1 : 0;
    }
    }
}

/* The CSVs of one name per column (step_trace_time, operator_details,
 * cluster_step_trace_time): the required ones first in the file's
 * terms. 0, or -1 with err set. */
static int named_cols(ctx *c, int kind, int *col, int *dev_col)
{
    csv_reader *csv = c->csv;
    tb_error *err = c->err;
    if (kind == T_STEP_TRACE) {
        static const char *const names[10] = {"Step", "Computing", "Communication(Not Overlapped)", "Overlapped",
                                              "Communication", "Free", "Stage", "Bubble",
                                              "Communication(Not Overlapped and Exclude Receive)", "Preparing"};
        for (int i = 0; i < 10; i++) {
            const char *one[2] = {names[i], NULL};
            col[i] = i < 2 ? csv_require(csv, one, err) : csv_col(csv, one);
            if (i < 2 && col[i] < 0)
                return -1;
        }
        *dev_col = csv_col(csv, COLS("Device_id"));
        return 0;
    }
    if (kind == T_OPERATOR_DETAILS) {
        static const char *const names[9] = {
            "Name", "Input Shapes", "Call Stack", "Host Self Duration(us)", "Host Total Duration(us)",
            "Device Self Duration(us)", "Device Total Duration(us)", "Device Self Duration With AICore(us)",
            "Device Total Duration With AICore(us)"};
        for (int i = 0; i < 9; i++) {
            const char *one[2] = {names[i], NULL};
            col[i] = i == 0 ? csv_require(csv, one, err) : csv_col(csv, one);
        }
        return col[0] < 0 ? -1 : 0;
    }
    static const char *const names[12] = {
        "Step", "Type", "Index", "Computing", "Communication(Not Overlapped)", "Overlapped", "Communication",
        "Free", "Stage", "Bubble", "Communication(Not Overlapped and Exclude Receive)", "Preparing"};
    for (int i = 0; i < 12; i++) {
        const char *one[2] = {names[i], NULL};
        /* Type and Index tell what a row is; the rest may be absent */
        col[i] = (i == 1 || i == 2) ? csv_require(csv, one, err) : csv_col(csv, one);
        if ((i == 1 || i == 2) && col[i] < 0)
            return -1;
    }
    return 0;
}

/* op_statistic / api_statistic / communication_statistic: the columns in
 * row-table order, the first two (one for communication) required. 0, or
 * -1 with err set. */
static int statistic_cols(ctx *c, int kind, int *col, int *dev_col)
{
    static const char *const op[8][3] = {{"OP Type", "Op Type", NULL}, {"Core Type", NULL, NULL},
                                         {"Count", NULL, NULL}, {"Total Time(us)", NULL, NULL},
                                         {"Min Time(us)", NULL, NULL}, {"Avg Time(us)", NULL, NULL},
                                         {"Max Time(us)", NULL, NULL}, {"Ratio(%)", NULL, NULL}};
    static const char *const api[8][3] = {{"Level", NULL, NULL}, {"API Name", NULL, NULL},
                                          {"Time(us)", NULL, NULL}, {"Count", NULL, NULL},
                                          {"Avg(us)", NULL, NULL}, {"Min(us)", NULL, NULL},
                                          {"Max(us)", NULL, NULL}, {"Variance", NULL, NULL}};
    static const char *const comm[7][3] = {{"OP Type", "Op Type", NULL}, {"Count", NULL, NULL},
                                           {"Total Time(us)", NULL, NULL}, {"Min Time(us)", NULL, NULL},
                                           {"Avg Time(us)", NULL, NULL}, {"Max Time(us)", NULL, NULL},
                                           {"Ratio(%)", NULL, NULL}};
    const char *const(*names)[3] = kind == T_OP_STATISTIC ? op : kind == T_API_STATISTIC ? api : comm;
    int n = kind == T_COMM_STATISTIC ? 7 : 8;
    for (int i = 0; i < n; i++)
        col[i] = i < 2 && kind != T_COMM_STATISTIC ? csv_require(c->csv, names[i], c->err)
                 : i == 0                          ? csv_require(c->csv, names[i], c->err)
                                                   : csv_col(c->csv, names[i]);
    if (col[0] < 0 || (kind != T_COMM_STATISTIC && col[1] < 0))
        return -1;
    *dev_col = csv_col(c->csv, COLS("Device_id"));
    return 0;
}

/* msprof step_trace: the iteration columns (Iteration End required) and
 * every Reduce Start(us) with the Reduce Duration(us) after it. 0, or -1
 * with err set. */
static int iteration_cols(ctx *c, int *col, reduce_cols *reduces)
{
    csv_reader *csv = c->csv;
    col[0] = csv_col(csv, COLS("Device_id"));
    col[1] = csv_col(csv, COLS("Iteration ID"));
    col[2] = csv_col(csv, COLS("FP Start(us)"));
    col[3] = csv_require(csv, COLS("Iteration End(us)"), c->err);
    col[4] = csv_col(csv, COLS("Iteration Time(us)"));
    col[5] = csv_col(csv, COLS("Model ID"));
    col[6] = csv_col(csv, COLS("BP End(us)"));
    col[7] = csv_col(csv, COLS("Iteration Refresh(us)"));
    col[8] = csv_col(csv, COLS("Data Aug Bound(us)"));
    if (col[3] < 0)
        return -1;
    for (int i = 0; i + 1 < csv_width(csv) && reduces->n < 32; i++) {
        csv_field a = csv_trim(csv_name(csv, i)), b = csv_trim(csv_name(csv, i + 1));
        if (a.n == 16 && !memcmp(a.p, "Reduce Start(us)", 16) && b.n == 19 && !memcmp(b.p, "Reduce Duration(us)", 19)) {
            reduces->start[reduces->n] = i;
            reduces->dur[reduces->n++] = i + 1;
        }
    }
    return 0;
}

/* Where the columns of the file's kind are, from its header. 0; 1 when the
 * file holds nothing to read; -1 with err set. */
static int find_cols(ctx *c, layout *L, const char *path)
{
    switch (L->kind) {
    case T_KERNELS: return kernel_cols(c, &L->k);
    case T_TASK_TIME: return task_time_cols(c, &L->k, path);
    case T_NPU_MEM:
    case T_MEMORY_RECORD:
    case T_OP_MEMORY:
    case T_MODULE_MEM:
    case T_STATIC_OP_MEM: return memory_cols(c, L->kind, L->col, &L->unit);
    case T_STEP_TRACE:
    case T_OPERATOR_DETAILS:
    case T_CLUSTER_STEP_TRACE: return named_cols(c, L->kind, L->col, &L->dev_col);
    case T_OP_STATISTIC:
    case T_API_STATISTIC:
    case T_COMM_STATISTIC: return statistic_cols(c, L->kind, L->col, &L->dev_col);
    case T_ITERATIONS: return iteration_cols(c, L->col, &L->reduces);
    default: tb_error_at(c->err, TB_ERR_PARSE, path, 0, 0, -1, "not a CSV tracebook reads"); return -1;
    }
}

/* One data row into its kind's tables, as the row readers return (-1 with
 * err set). */
static int read_row(ctx *c, const layout *L, model_count *models, size_t *nmodels)
{
    const int *col = L->col;
    switch (L->kind) {
    case T_KERNELS:
    case T_TASK_TIME: return kernel_row(c, &L->k);
    case T_NPU_MEM: return npu_mem_row(c, col);
    case T_STEP_TRACE: return step_trace_row(c, col, L->dev_col);
    case T_MEMORY_RECORD: return memory_record_row(c, col);
    case T_OP_MEMORY: return op_memory_row(c, col);
    case T_MODULE_MEM: return module_mem_row(c, col, L->unit);
    case T_STATIC_OP_MEM: return static_op_mem_row(c, col);
    case T_OPERATOR_DETAILS: return operator_details_row(c, col);
    case T_ITERATIONS: return iteration_row(c, col, &L->reduces, models, nmodels);
    case T_OP_STATISTIC: return statistic_row(c, R_OP_STATISTIC, col, "ssittttr", L->dev_col);
    case T_API_STATISTIC: return statistic_row(c, R_API_STATISTIC, col, "sstitttr", L->dev_col);
    case T_COMM_STATISTIC: return statistic_row(c, R_COMM_STATISTIC, col, "sittttr", L->dev_col);
    default: return cluster_step_trace_row(c, col);
    }
}

/* torch_npu's summary CSVs, by their exact names: a rank's own file of one
 * of them is kept as read (TB_SOURCE_CSV) for `export summary` to write back. */
static int kept_name(const char *path)
{
    static const char *const names[] = {
        "kernel_details.csv", "operator_details.csv", "step_trace_time.csv", "memory_record.csv",
        "operator_memory.csv", "npu_module_mem.csv", "static_op_mem.csv", "op_statistic.csv", "api_statistic.csv",
    };
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(base, names[i]))
            return 1;
    return 0;
}

/* Grows c->buf to hold need bytes; -1 with err set when out of memory. */
static int buf_room(ctx *c, size_t need)
{
    if (need <= c->cap)
        return 0;
    size_t cap = c->cap ? c->cap : 4096;
    while (cap < need)
        cap *= 2;
    char *b = realloc(c->buf, cap);
    if (!b) {
        tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
        return -1;
    }
    c->buf = b;
    c->cap = cap;
    return 0;
}

/* Row f[0..n) CSV-encoded into c->buf: a field in quotes (quotes doubled)
 * when it holds a comma, a quote or a line end, or when the file had it in
 * quotes (start: where each field began in the record as read, so a field
 * longer as read than as decoded was quoted; NULL when unknown; the last
 * field's length as read is not known). Returns its length, or -1 with err set. */
static long encode_row(ctx *c, const csv_field *f, int n, const size_t *start)
{
    size_t need = 1;
    for (int i = 0; i < n; i++)
        need += 2 * f[i].n + 3;
    if (buf_room(c, need))
        return -1;
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        if (i)
            c->buf[k++] = ',';
        int q = f[i].n && (memchr(f[i].p, ',', f[i].n) || memchr(f[i].p, '"', f[i].n) ||
                           memchr(f[i].p, '\n', f[i].n) || memchr(f[i].p, '\r', f[i].n));
        if (start && i + 1 < n && start[i + 1] - start[i] - 1 > f[i].n)
            q = 1;
        if (q)
            c->buf[k++] = '"';
        for (size_t j = 0; j < f[i].n; j++) {
            if (f[i].p[j] == '"')
                c->buf[k++] = '"';
            c->buf[k++] = f[i].p[j];
        }
        if (q)
            c->buf[k++] = '"';
    }
    return (long)k;
}

/* The header line as the file holds it (a BOM and the line end included)
 * for a plain file whose header is one line; else the names CSV-encoded and
 * "\n". Into c->buf; returns its length, or -1 with err set. */
static long header_text(ctx *c, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) {
        if (buf_room(c, 1 << 16)) {
            fclose(f);
            return -1;
        }
        size_t n = fread(c->buf, 1, c->cap, f);
        fclose(f);
        const char *nl = n >= 2 && (unsigned char)c->buf[0] == 0x1f && (unsigned char)c->buf[1] == 0x8b
                             ? NULL
                             : memchr(c->buf, '\n', n);
        if (nl && !memchr(c->buf, '"', (size_t)(nl - c->buf)))
            return (long)(nl - c->buf) + 1;
    }
    int w = csv_width(c->csv);
    csv_field *names = malloc((size_t)(w > 0 ? w : 1) * sizeof *names);
    if (!names) {
        tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
        return -1;
    }
    for (int i = 0; i < w; i++)
        names[i] = csv_name(c->csv, i);
    long k = encode_row(c, names, w, NULL);
    free(names);
    if (k >= 0)
        c->buf[k++] = '\n';
    return k;
}

/* Starts keeping the rows of a torch_npu summary CSV: its header as line 0. 0, or -1 with err set. */
static int keep_header(ctx *c, const char *path)
{
    c->keep_file = -1;
    if (!kept_name(path))
        return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int64_t id = intern_text(c, base, strlen(base));
    long n = id < 0 ? -1 : header_text(c, path);
    if (n < 0)
        return -1;
    tb_val v[4] = {VINT(c->opt->rank), VINT(id), VINT(0), VTEXT(c->buf, (size_t)n)};
    if (row_out(c, R_SOURCE_CSV, v))
        return -1;
    c->keep_file = id; /* not in rows_filled: every kept file of a rank is kept, none is a better source */
    return 0;
}

/* Keeps one loaded row of a kept file, as read. 0, or -1 with err set. */
static int keep_row(ctx *c, const csv_row *row)
{
    if (c->keep_file < 0)
        return 0;
    long n = encode_row(c, row->f, row->n, row->start);
    if (n < 0)
        return -1;
    tb_val v[4] = {VINT(c->opt->rank), VINT(c->keep_file), VINT(row->line), VTEXT(c->buf, (size_t)n)};
    return row_out(c, R_SOURCE_CSV, v);
}

/* A row whose field count differs from the header's: 0 when it does not;
 * 1 skipped, counted and warned of; -1 the error with --strict (err set). */
static int check_width(ctx *c, const csv_row *row, const char *path)
{
    tb_error werr;
    if (csv_check_width(c->csv, row, &werr) == 0)
        return 0;
    if (c->opt->strict_rows) {
        *c->err = werr;
        return -1;
    }
    c->res->dest[TB_DEST_BAD_ROWS]++;
    if (c->opt->warn) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s:%ld: %s: row skipped (an error with --strict)", path, row->line, werr.message);
        c->opt->warn(c->opt->ctx, msg);
    }
    return 1;
}

/* Every data row of the file, with progress every 64 MiB read as for
 * traces; then the one warning for times a spreadsheet rounded. */
static tb_status read_rows(ctx *c, const layout *L, const char *path)
{
    const import_opts *opt = c->opt;
    tb_error *err = c->err;
    model_count models[64];
    size_t nmodels = 0;
    csv_row row;
    int r;
    int64_t next_progress = 64 << 20;
    while ((r = csv_next(c->csv, &row, err)) == 1) {
        c->row = &row;
        if (opt->progress && row.offset >= next_progress) {
            opt->progress(opt->ctx, path, (uint64_t)csv_raw_offset(c->csv), opt->total_bytes, (uint64_t)row.offset);
            next_progress = row.offset + (64 << 20);
        }
        if (row.n == 1 && row.f[0].n == 0)
            continue;
        int w = check_width(c, &row, path);
        if (w < 0)
            return err->code;
        if (w > 0)
            continue;
        if (read_row(c, L, models, &nmodels) < 0 || keep_row(c, &row) < 0) {
            /* every failing row sets err (its own problem, or the sink's) */
            tb_status st = err->code != TB_OK
                               ? err->code
                               : tb_error_at(err, TB_ERR_INTERNAL, path, 0, 0, -1, "a row failed without a reason");
            if (err->file[0] == 0)
                snprintf(err->file, sizeof err->file, "%s", path);
            return st;
        }
    }
    if (r < 0)
        return err->code;
    if (c->lost_precision && opt->warn) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s: times in exponent notation (saved by a spreadsheet?): precision lost", path);
        opt->warn(opt->ctx, msg);
    }
    return TB_OK;
}

tb_status npu_text_import(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                          import_result *res, tb_error *err)
{
    memset(res, 0, sizeof *res);
    res->trace_rank = -1;
    res->stop_offset = -1;
    int kind = text_kind(path);
    snprintf(res->kind, sizeof res->kind, "%s", kind == T_CLUSTER_STEP_TRACE ? "msprof-analyze csv" : "torch_npu csv");
    ctx c = {.sink = sink, .ids = ids, .opt = opt, .res = res, .err = err, .keep_file = -1};
    if (!(c.csv = csv_open(path, err)))
        return err->code;
    tb_status st = TB_OK;
    layout L = {.kind = kind, .k = {.stop = -1}, .dev_col = -1, .unit = 1048576.0};
    int found = csv_header(c.csv, err) != 0 ? -1 : find_cols(&c, &L, path);
    if (found < 0)
        st = err->code;
    else if (found == 0 && keep_header(&c, path) < 0) {
        st = err->code;
        if (err->file[0] == 0)
            snprintf(err->file, sizeof err->file, "%s", path);
    }
    else if (found == 0)
        st = read_rows(&c, &L, path);
    csv_close(c.csv);
    free(c.buf);
    return st;
}
