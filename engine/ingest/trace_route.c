/* SPDX-License-Identifier: MIT */
/*
 * trace_route.c - turns one Chrome-trace event into unified-DB rows.
 *
 * It keeps what the metadata says of each process and thread (names,
 * labels, sort order; string pids get keys of their own), classifies a
 * process into its Ascend layer by process_name, and writes each event to
 * the rows of its layer, or for a Kineto trace of its category, with the
 * routing rules listed in trace_import.c. Reading the file, waiting for
 * late metadata and the import driver are in trace_import.c; trace_int.h is
 * what the two share.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/flows.h"
#include "util/jstream.h"
#include "ingest/kernel_type.h"
#include "ingest/trace_int.h"
#include "util/hash.h"

/* ---- small hash maps ------------------------------------------------------ */

proc *trace_proc_get(imp *im, int64_t key, int create)
{
    if (im->nproc_cap == 0) {
        if (!create)
            return NULL;
        im->nproc_cap = 64;
        im->procs = calloc(im->nproc_cap, sizeof *im->procs);
        if (!im->procs)
            return NULL;
    }
    size_t mask = im->nproc_cap - 1, i = hash_mix64((uint64_t)key) & mask;
    while (im->procs[i].used) {
        if (im->procs[i].key == key)
            return &im->procs[i];
        i = (i + 1) & mask;
    }
    if (!create)
        return NULL;
    if ((im->nproc + 1) * 2 > im->nproc_cap) {
        size_t ncap = im->nproc_cap * 2;
        proc *np = calloc(ncap, sizeof *np);
        if (!np)
            return NULL;
        for (size_t j = 0; j < im->nproc_cap; j++) {
            if (!im->procs[j].used)
                continue;
            size_t k = hash_mix64((uint64_t)im->procs[j].key) & (ncap - 1);
            while (np[k].used)
                k = (k + 1) & (ncap - 1);
            np[k] = im->procs[j];
        }
        free(im->procs);
        im->procs = np;
        im->nproc_cap = ncap;
        return trace_proc_get(im, key, 1);
    }
    proc *p = &im->procs[i];
    memset(p, 0, sizeof *p);
    p->used = 1;
    p->key = key;
    p->device_label = -1;
    im->nproc++;
    return p;
}

static thread *thread_get(imp *im, int64_t pkey, int64_t tid)
{
    if (im->nthr_cap == 0) {
        im->nthr_cap = 64;
        im->threads = calloc(im->nthr_cap, sizeof *im->threads);
        if (!im->threads)
            return NULL;
    }
    size_t mask = im->nthr_cap - 1;
    size_t i = hash_mix64((uint64_t)pkey * 1000003u ^ (uint64_t)tid) & mask;
    while (im->threads[i].used) {
        if (im->threads[i].pkey == pkey && im->threads[i].tid == tid)
            return &im->threads[i];
        i = (i + 1) & mask;
    }
    if ((im->nthr + 1) * 2 > im->nthr_cap) {
        size_t ncap = im->nthr_cap * 2;
        thread *nt = calloc(ncap, sizeof *nt);
        if (!nt)
            return NULL;
        for (size_t j = 0; j < im->nthr_cap; j++) {
            if (!im->threads[j].used)
                continue;
            size_t k = hash_mix64((uint64_t)im->threads[j].pkey * 1000003u ^ (uint64_t)im->threads[j].tid) & (ncap - 1);
            while (nt[k].used)
                k = (k + 1) & (ncap - 1);
            nt[k] = im->threads[j];
        }
        free(im->threads);
        im->threads = nt;
        im->nthr_cap = ncap;
        return thread_get(im, pkey, tid);
    }
    thread *t = &im->threads[i];
    memset(t, 0, sizeof *t);
    t->used = 1;
    t->pkey = pkey;
    t->tid = tid;
    im->nthr++;
    return t;
}

/* ---- helpers -------------------------------------------------------------- */

int trace_oom(imp *im)
{
    tb_error_set(im->err, TB_ERR_NOMEM, "out of memory");
    return -1;
}

static char *span_dup(imp *im, js_span s)
{
    size_t n;
    const char *p = s.type == JS_STR ? js_str_decode(s, &im->dbuf, &im->dcap, &n) : s.p;
    if (s.type != JS_STR)
        n = s.n;
    if (!p)
        return NULL;
    char *r = malloc(n + 1);
    if (!r)
        return NULL;
    memcpy(r, p, n);
    r[n] = 0;
    return r;
}

/* Key of a pid value: the number itself, or a slot for string pids. */
int trace_pid_key(imp *im, js_span pid, int64_t *key)
{
    if (pid.type == JS_NUM) {
        if (js_span_int(pid, key) == 0)
            return 0;
    }
    if (pid.type == JS_NONE || pid.type == JS_NULL) {
        *key = INT64_MIN;
        return 0;
    }
    /* string pid: numeric strings count as numbers */
    if (pid.type == JS_STR && js_span_int(pid, key) == 0)
        return 0;
    for (size_t i = 0; i < im->n_str_pids; i++) {
        if (strlen(im->str_pids[i]) == pid.n && memcmp(im->str_pids[i], pid.p, pid.n) == 0) {
            *key = INT64_MIN + 1 + (int64_t)i;
            return 0;
        }
    }
    char **np = realloc(im->str_pids, (im->n_str_pids + 1) * sizeof *np);
    if (!np)
        return trace_oom(im);
    im->str_pids = np;
    if (!(np[im->n_str_pids] = span_dup(im, pid)))
        return trace_oom(im);
    *key = INT64_MIN + 1 + (int64_t)im->n_str_pids++;
    return 0;
}

tb_val trace_pid_val(imp *im, int64_t key)
{
    if (key == INT64_MIN)
        return VNULL;
    if (key < INT64_MIN + 1 + (int64_t)im->n_str_pids) {
        const char *s = im->str_pids[key - INT64_MIN - 1];
        return VTEXT(s, strlen(s));
    }
    return VINT(key);
}

static tb_val span_val(imp *im, js_span s)
{
    if (s.type == JS_NUM) {
        int64_t v;
        if (js_span_int(s, &v) == 0)
            return VINT(v);
        double d;
        if (js_span_real(s, &d) == 0)
            return VREAL(d);
    }
    if (s.type == JS_STR) {
        size_t n;
        const char *p = js_str_decode(s, &im->dbuf, &im->dcap, &n);
        return p ? VTEXT(p, n) : VNULL;
    }
    if (s.type == JS_NONE || s.type == JS_NULL)
        return VNULL;
    return VTEXT(s.p, s.n);
}

/* The sink's id of text p (n bytes), through im->names; -1 on a sink failure. */
static int64_t intern_text(imp *im, const char *p, size_t n)
{
    name_memo *m = NULL;
    if (n <= NAME_MEMO_MAX) {
        uint64_t a = 0, b = 0;
        if (n >= 8) {
            memcpy(&a, p, 8);
            memcpy(&b, p + n - 8, 8);
        } else {
            for (size_t i = 0; i < n; i++)
                a = a << 8 | (unsigned char)p[i];
        }
        m = &im->names[hash_mix64(a ^ (b * 0x9E3779B97F4A7C15ULL) ^ n) & (NAME_MEMO - 1)];
        if (m->n1 == n + 1 && memcmp(m->s, p, n) == 0)
            return m->id;
    }
    int64_t id = im->sink->intern(im->sink->ctx, p, n);
    if (id < 0)
        return -1;
    if (m) {
        m->id = id;
        m->n1 = (uint32_t)n + 1;
        if (n)
            memcpy(m->s, p, n);
    }
    return id;
}

/* Interns a string span; -2 when absent (NULL), -1 on failure. */
static int64_t intern_span(imp *im, js_span s)
{
    if (s.type == JS_NONE || s.type == JS_NULL)
        return -2;
    size_t n;
    const char *p;
    if (s.type == JS_STR) {
        p = js_str_decode(s, &im->dbuf, &im->dcap, &n);
        if (!p)
            return trace_oom(im);
    } else {
        p = s.p;
        n = s.n;
    }
    int64_t id = intern_text(im, p, n);
    if (id < 0)
        row_sink_fail(im->sink, im->path, im->err);
    return id;
}

static tb_val idval(int64_t id)
{
    return id < 0 ? VNULL : VINT(id);
}

/* The kernel's type from its name (kernel_type.h: gpu or Ascend rule),
 * interned and counted as derived. The id, -2 when the name gives none, -1
 * on a sink failure. */
static int64_t derived_type(imp *im, js_span name, int gpu)
{
    if (name.type != JS_STR)
        return -2;
    size_t n, len;
    const char *p = js_str_decode(name, &im->dbuf, &im->dcap, &n);
    if (!p)
        return trace_oom(im);
    const char *t = gpu ? kernel_type_gpu(p, n, &len) : kernel_type_ascend(p, n, &len);
    if (len == 0)
        return -2;
    int64_t id = intern_text(im, t, len);
    if (id < 0) {
        row_sink_fail(im->sink, im->path, im->err);
        return -1;
    }
    im->res->dest[TB_DEST_DERIVED_TYPE]++;
    return id;
}

int trace_row(imp *im, int table, const tb_val *v)
{
    if (row_set_has(&im->opt->skip_rows, table))
        return 0; /* a better source of this rank filled the table */
    if (im->sink->row(im->sink->ctx, table, v) == 0)
        return 0;
    row_sink_fail(im->sink, im->path, im->err);
    return -1;
}

/* The args shape (interned) and values of a routed slice of kind (SHAPE_*)
 * into out[0] and out[1] (db/slice_args.h); cols are the members its rows
 * hold. 0, or -1 with err set. */
static int slice_args(imp *im, int kind, trace_event *ev, const slice_arg *cols, int ncols, tb_val *out)
{
    if (slice_args_shape(ev, cols, ncols, &im->ashape, &im->avals))
        return trace_oom(im);
    /* slices of a kind share a few shapes: the ids of the last ones met are
     * kept, by a hash of the shape's length and a few of its bytes */
    const char *p = im->ashape.p;
    size_t n = im->ashape.n;
    uint64_t h = n, w;
    if (n >= 8) {
        const size_t at[4] = {n / 3, n / 2, 2 * n / 3, n - 8};
        for (int i = 0; i < 4; i++) {
            size_t o = at[i] + 8 <= n ? at[i] : n - 8;
            memcpy(&w, p + o, 8);
            h = hash_mix64(h ^ w);
        }
    }
    shape_memo *m = &im->shapes[kind][hash_mix64(h) & (SHAPE_MEMO - 1)];
    if (!m->buf.p || m->buf.n != im->ashape.n || memcmp(m->buf.p, im->ashape.p, im->ashape.n) != 0) {
        m->buf.n = 0;
        if (slice_buf_add(&m->buf, im->ashape.p, im->ashape.n))
            return trace_oom(im);
        m->id = im->sink->intern(im->sink->ctx, im->ashape.p, im->ashape.n);
    }
    if (m->id < 0) {
        m->buf.n = 0;
        row_sink_fail(im->sink, im->path, im->err);
        return -1;
    }
    out[0] = VINT(m->id);
    if (im->avals.n && slice_vals_pack(im->avals.p, im->avals.n, &im->apack))
        return trace_oom(im);
    out[1] = im->avals.n ? VBLOB(im->apack.p, im->apack.n) : VNULL;
    return 0;
}

/* A key of put_task's: its value filled there. */
#define KEY(k) {(k), sizeof(k) - 1, {0}}

/* A string member as the row holds it (its own text), NULL when it is no string. */
#define TEXT_ARG(key, s) SLICE_ARG(key, (s).type == JS_STR ? VTEXT((s).p, (s).n) : VNULL)

static inline int64_t arg_int(trace_event *ev, const char *key, int64_t dflt)
{
    int64_t v;
    return js_span_int(js_arg(ev, key), &v) == 0 ? v : dflt;
}

static inline tb_val arg_intval(trace_event *ev, const char *key)
{
    int64_t v;
    return js_span_int(js_arg(ev, key), &v) == 0 ? VINT(v) : VNULL;
}

static int span_eq(js_span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.type == JS_STR && s.n == n && memcmp(s.p, lit, n) == 0;
}

static int span_prefix(js_span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.type == JS_STR && s.n >= n && memcmp(s.p, lit, n) == 0;
}

static int span_iprefix(js_span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.type == JS_STR && s.n >= n && strncasecmp(s.p, lit, n) == 0;
}

static int64_t end_ns(const trace_event *ev)
{
    return ev->ts_ns + (ev->has_dur && ev->dur_ns > 0 ? ev->dur_ns : 0);
}

void trace_note_time(imp *im, const trace_event *ev)
{
    import_result *r = im->res;
    int64_t e = end_ns(ev);
    if (!r->has_times) {
        r->min_ns = ev->ts_ns;
        r->max_ns = e;
        r->has_times = 1;
        return;
    }
    if (ev->ts_ns < r->min_ns)
        r->min_ns = ev->ts_ns;
    if (e > r->max_ns)
        r->max_ns = e;
}

static int64_t global_tid(int64_t pid, js_span tid)
{
    int64_t t = 0;
    js_span_int(tid, &t);
    return (int64_t)(((uint64_t)pid << 32) | ((uint64_t)t & 0xffffffffu));
}

/* ---- layers and devices --------------------------------------------------- */

static int classify_layer(const char *name)
{
    static const struct { const char *name; int layer; } known[] = {
        {"Python", L_PYTHON}, {"Python GC", L_PYTHON_GC}, {"CANN", L_CANN},
        {"Ascend Hardware", L_HW}, {"Communication", L_COMM}, {"HCCL", L_COMM}, {"Overlap Analysis", L_OVERLAP},
        {"MsprofTx", L_MSTX}, {"Task Scheduler", L_HW},
        /* layers whose slices and counters stay generic (TB_EVENT / TB_COUNTER) */
        {"AI Core Freq", L_ASCEND_OTHER}, {"NPU MEM", L_ASCEND_OTHER}, {"Step Trace", L_ASCEND_OTHER},
        {"OS Runtime API", L_ASCEND_OTHER}, {"HBM", L_ASCEND_OTHER}, {"DDR", L_ASCEND_OTHER},
        {"LLC", L_ASCEND_OTHER}, {"PCIe", L_ASCEND_OTHER}, {"HCCS", L_ASCEND_OTHER}, {"NIC", L_ASCEND_OTHER},
        {"RoCE", L_ASCEND_OTHER}, {"SIO", L_ASCEND_OTHER}, {"QoS", L_ASCEND_OTHER}, {"Acc PMU", L_ASCEND_OTHER},
        {"Stars Soc Info", L_ASCEND_OTHER}, {"Stars Chip Trans", L_ASCEND_OTHER}, {"CCU", L_ASCEND_OTHER},
        {"Biu Perf", L_ASCEND_OTHER}, {"Ub", L_ASCEND_OTHER}, {"Block Detail", L_ASCEND_OTHER},
        {"DPU", L_ASCEND_OTHER}, {"Fusion Task", L_ASCEND_OTHER}, {"Low Power", L_ASCEND_OTHER},
        {"CPU Usage", L_ASCEND_OTHER}, {"Memory Usage", L_ASCEND_OTHER}, {"Disk Usage", L_ASCEND_OTHER},
        {"Network Usage", L_ASCEND_OTHER},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(name, known[i].name) == 0)
            return known[i].layer;
    return L_OTHER;
}

const char *trace_layer_label(int layer)
{
    switch (layer) {
    case L_PYTHON: return "Python";
    case L_PYTHON_GC: return "Python GC";
    case L_CANN: return "CANN";
    case L_HW: return "Ascend Hardware";
    case L_COMM: return "Communication";
    case L_OVERLAP: return "Overlap Analysis";
    case L_MSTX: return "MsprofTx";
    case L_ASCEND_OTHER: return "Ascend (other)";
    case L_OTHER: return "other";
    default: return "unnamed";
    }
}

/* Device id of an Ascend process (DESIGN.md: labels, else the pid's low bits). */
int trace_proc_device(const proc *p)
{
    if (!p)
        return 0;
    if (p->device_label >= 0)
        return p->device_label;
    /* current msprof pids: (realPid << 10) | (sortIndex << 5) | deviceId; a
     * host has at most 16 devices (31 is the host itself) */
    if (p->bare_npu && p->has_sort && p->key > 0 && ((p->key >> 5) & 31) == (p->sort_index & 31) &&
        (p->key & 31) < 16)
        return (int)(p->key & 31);
    return 0;
}

static void note_device(imp *im, int64_t dev)
{
    if (dev >= 0 && dev < 64)
        im->res->devices_seen |= (uint64_t)1 << dev;
}

/* ---- metadata ------------------------------------------------------------- */

int trace_on_metadata(imp *im, trace_event *ev, int64_t pkey)
{
    js_span n = ev->name;
    if (span_eq(n, "process_name") || span_eq(n, "process_labels") || span_eq(n, "process_sort_index")) {
        proc *p = trace_proc_get(im, pkey, 1);
        if (!p)
            return trace_oom(im);
        if (span_eq(n, "process_name")) {
            js_span v = js_arg(ev, "name");
            char *s = v.type == JS_STR ? span_dup(im, v) : strdup("");
            if (!s)
                return trace_oom(im);
            free(p->name);
            p->name = s;
            p->layer = classify_layer(s);
        } else if (span_eq(n, "process_labels")) {
            js_span v = js_arg(ev, "labels");
            char *s = v.type == JS_STR ? span_dup(im, v) : strdup("");
            if (!s)
                return trace_oom(im);
            free(p->labels);
            p->labels = s;
            if (strncmp(s, "NPU", 3) == 0) {
                char *end;
                errno = 0;
                long d = strtol(s + 3, &end, 10);
                if (end != s + 3 && errno == 0 && d >= 0 && d < 1024)
                    p->device_label = (int)d;
                else
                    p->bare_npu = 1;
            }
        } else {
            int64_t v;
            if (js_span_int(js_arg(ev, "sort_index"), &v) == 0) {
                p->sort_index = v;
                p->has_sort = 1;
            }
        }
        return 0;
    }
    if (span_eq(n, "thread_name") || span_eq(n, "thread_sort_index")) {
        int64_t tid = 0;
        if (js_span_int(ev->tid, &tid) != 0)
            tid = (int64_t)hash_mix64((uint64_t)ev->tid.n * 31 + (ev->tid.n ? (unsigned char)ev->tid.p[0] : 0));
        thread *t = thread_get(im, pkey, tid);
        if (!t)
            return trace_oom(im);
        if (ev->tid.type == JS_STR && !t->tid_str && !(t->tid_str = span_dup(im, ev->tid)))
            return trace_oom(im);
        if (span_eq(n, "thread_name")) {
            js_span v = js_arg(ev, "name");
            char *s = v.type == JS_STR ? span_dup(im, v) : strdup("");
            if (!s)
                return trace_oom(im);
            if (!im->prescanning) { /* every name is kept: Kineto names a thread twice */
                char **e = realloc(t->seen, (t->n_seen + 1) * sizeof *e);
                if (!e || !(e[t->n_seen] = strdup(s))) {
                    if (e)
                        t->seen = e;
                    free(s);
                    return trace_oom(im);
                }
                t->seen = e;
                t->n_seen++;
            }
            free(t->name);
            t->name = s;
        } else {
            int64_t v;
            if (js_span_int(js_arg(ev, "sort_index"), &v) == 0) {
                t->sort_index = v;
                t->has_sort = 1;
            }
        }
        return 0;
    }
    /* other metadata (e.g. Kineto's process labels): keep as a generic event */
    return 1;
}

/* ---- destinations --------------------------------------------------------- */

/* Counts an event of pid key that only the generic tables keep (TB_PROCESS.unrouted). */
static void note_unrouted(imp *im, int64_t pkey)
{
    proc *p = trace_proc_get(im, pkey, 0);
    if (p)
        p->unrouted++;
}

/* The event as written, to TB_EVENT. 0, or -1 with err set. */
static int put_event(imp *im, trace_event *ev, int64_t pkey)
{
    char ph[2] = {ev->ph ? ev->ph : '?', 0};
    int64_t cat = intern_span(im, ev->cat), name = intern_span(im, ev->name);
    if (cat == -1 || name == -1)
        return -1;
    tb_val args = VNULL;
    if (ev->args.type != JS_NONE) {
        size_t n;
        const char *a = js_raw_clean(ev->args, &im->abuf, &im->acap, &n);
        if (!a)
            return trace_oom(im);
        args = VTEXT(a, n);
    }
    tb_val tidv = ev->tid.type == JS_NONE ? VNULL : span_val(im, ev->tid);
    tb_val v[11] = {VINT(im->opt->rank), trace_pid_val(im, pkey), tidv, VTEXT(ph, 1), idval(cat), idval(name),
                    ev->has_ts ? VINT(ev->ts_ns) : VNULL, ev->has_ts ? VINT(end_ns(ev)) : VNULL, args,
                    VINT(ev->offset), VNULL};
    /* an instant event's scope, g (global), p (process) or t (thread): a
     * viewer draws each differently (decoded apart: the tid may hold dbuf) */
    char *sbuf = NULL;
    size_t scap = 0, sn;
    if (ev->scope.type == JS_STR) {
        const char *s = js_str_decode(ev->scope, &sbuf, &scap, &sn);
        if (!s)
            return trace_oom(im);
        v[10] = VTEXT(s, sn);
    }
    int rc = trace_row(im, R_EVENT, v);
    free(sbuf);
    return rc;
}

int trace_put_event(imp *im, trace_event *ev, int64_t pkey)
{
    note_unrouted(im, pkey);
    return put_event(im, ev, pkey);
}

/* A record_param_comms Collective name as the collective's type: PyTorch's
 * variants of one collective under one name, as TraceLens groups them
 * (docs/inputs.md "Communication kernels"); other names as written. */
static js_span collective_type(js_span name)
{
    static const struct { const char *from, *to; } map[] = {
        {"allreduce_coalesced", "allreduce"}, {"_reduce_scatter_base", "reducescatter"},
        {"reduce_scatter_tensor_coalesced", "reducescatter"}, {"reduce_scatter", "reducescatter"},
        {"all_gather", "allgather"}, {"_allgather_base", "allgather"},
        {"all_gather_into_tensor_coalesced", "allgather"}, {"allgather_into_tensor_coalesced", "allgather"},
        {"all_to_all", "alltoall"}, {"all_to_allv", "alltoallv"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (span_eq(name, map[i].from))
            return (js_span){.p = map[i].to, .n = strlen(map[i].to), .type = JS_STR};
    return name;
}

/* PyTorch's record_param_comms call: the collective it records (type,
 * dtype, element counts, group) for the kernel it launches (load_books.c
 * binds them). 0, or -1 with err set. */
static int put_collective(imp *im, trace_event *ev, int64_t pid)
{
    int64_t coll = intern_span(im, collective_type(js_arg(ev, "Collective name")));
    int64_t dtype = intern_span(im, js_arg(ev, "dtype"));
    int64_t group = intern_span(im, js_arg(ev, "Process Group Name"));
    if (coll == -1 || dtype == -1 || group == -1)
        return -1;
    tb_val v[10] = {VINT(im->opt->rank), VINT(global_tid(pid, ev->tid)), VINT(ev->ts_ns), VINT(end_ns(ev)),
                    idval(coll), idval(dtype), arg_intval(ev, "In msg nelems"), arg_intval(ev, "Out msg nelems"),
                    arg_intval(ev, "Group size"), idval(group)};
    return trace_row(im, R_COLLECTIVE, v);
}

static int step_number(js_span name, int64_t *n)
{
    static const char pre[] = "ProfilerStep#";
    if (!span_prefix(name, pre))
        return 0;
    js_span d = {.p = name.p + sizeof pre - 1, .n = name.n - (sizeof pre - 1), .type = JS_NUM};
    return js_span_int(d, n) == 0;
}

/* 1 when ProfilerStep#step was already stored for this file (old traces
 * record a step both as cpu_op and as user_annotation); else remembers it. */
static int step_seen(imp *im, int64_t step)
{
    for (size_t i = 0; i < im->nsteps; i++)
        if (im->steps[i] == step)
            return 1;
    if (im->nsteps % 64 == 0) {
        int64_t *n = realloc(im->steps, (im->nsteps + 64) * sizeof *n);
        if (!n)
            return 0;
        im->steps = n;
    }
    im->steps[im->nsteps++] = step;
    return 0;
}

static int put_pytorch(imp *im, trace_event *ev, int64_t pid, int type)
{
    int64_t name = intern_span(im, ev->name);
    if (name == -1)
        return -1;
    int64_t shapes = -2, dtypes = -2;
    js_span dims = js_arg(ev, "Input Dims");
    if (dims.type != JS_NONE && (shapes = intern_span(im, dims)) == -1)
        return -1;
    js_span types = js_arg(ev, "Input type");
    if (types.type != JS_NONE && (dtypes = intern_span(im, types)) == -1)
        return -1;
    tb_val v[15] = {VINT(ev->ts_ns), VINT(end_ns(ev)), VINT(global_tid(pid, ev->tid)), VNULL,
                    idval(name), arg_intval(ev, "Sequence number"), arg_intval(ev, "Fwd thread id"),
                    idval(dtypes), idval(shapes), VINT(type), VINT(im->opt->rank), arg_intval(ev, "stream"),
                    VNULL, VNULL, VINT(ev->offset)};
    slice_arg cols[] = {SLICE_ARG("Sequence number", v[5]), SLICE_ARG("Fwd thread id", v[6]),
                        TEXT_ARG("Input type", types), TEXT_ARG("Input Dims", dims), SLICE_ARG("stream", v[11])};
    if (slice_args(im, SHAPE_PYTORCH, ev, cols, 5, v + 12) || trace_row(im, R_PYTORCH_API, v))
        return -1;
    im->res->dest[TB_DEST_PYTORCH_API]++;
    if (span_eq(ev->name, "record_param_comms") && put_collective(im, ev, pid))
        return -1;
    int64_t step;
    if (step_number(ev->name, &step) && !step_seen(im, step)) {
        tb_val s[4] = {VINT(step), VINT(ev->ts_ns), VINT(end_ns(ev)), VINT(im->opt->rank)};
        if (trace_row(im, R_STEP_TIME, s))
            return -1;
        im->res->dest[TB_DEST_STEP_TIME]++;
    }
    return 0;
}

/* A CANN_API row; with_offset: a Kineto call, whose place in the file
 * (fileOffset) HTA's numbering of annotation instances follows. */
static int put_cann(imp *im, trace_event *ev, int64_t pid, int type, int with_offset)
{
    int64_t name = intern_span(im, ev->name);
    if (name == -1)
        return -1;
    tb_val conn = arg_intval(ev, "connection_id");
    if (conn.type == V_NULL)
        conn = arg_intval(ev, "correlation");
    tb_val v[11] = {VINT(ev->ts_ns), VINT(end_ns(ev)), VINT(type), VINT(global_tid(pid, ev->tid)), conn,
                    idval(name), VINT(im->opt->rank), arg_intval(ev, "stream"), VNULL, VNULL,
                    with_offset ? VINT(ev->offset) : VNULL};
    int64_t tid;
    tb_val tidv = js_span_int(ev->tid, &tid) == 0 ? VINT(tid) : VNULL;
    slice_arg cols[] = {SLICE_ARG("connection_id", conn), SLICE_ARG("correlation", conn), SLICE_ARG("stream", v[7]),
                        SLICE_ARG("Thread Id", tidv)};
    if (slice_args(im, SHAPE_CANN, ev, cols, 4, v + 8) || trace_row(im, R_CANN_API, v))
        return -1;
    im->res->dest[TB_DEST_CANN_API]++;
    return 0;
}

static int cann_level_type(trace_event *ev)
{
    js_span l = js_arg(ev, "level");
    if (span_eq(l, "acl")) return API_ACL;
    if (span_eq(l, "model")) return API_MODEL;
    if (span_eq(l, "node")) return API_NODE;
    if (span_eq(l, "communication") || span_eq(l, "hccl")) return API_HCCL;
    if (span_eq(l, "runtime")) return API_RUNTIME;
    /* older timelines: the level is the name's prefix (AscendCL@, Node@, ...) */
    if (span_prefix(ev->name, "AscendCL@")) return API_ACL;
    if (span_prefix(ev->name, "Model@")) return API_MODEL;
    if (span_prefix(ev->name, "Node@")) return API_NODE;
    if (span_prefix(ev->name, "HCCL@")) return API_HCCL;
    if (span_prefix(ev->name, "Runtime@")) return API_RUNTIME;
    return API_ACL;
}

/* The members a task's rows hold beyond its TASK row (sizes, block counts),
 * whether the row keeps its place in the file (offset: a Kineto task), and
 * the slice's own tid when it is not the one its stream gives (else VNULL). */
typedef struct task_more {
    slice_arg a[5];
    int n;
    int offset;
    tb_val tid;
} task_more;

/* One TASK row; returns its globalTaskId, or -1. keys names the args that
 * its device, stream, task id, connection id, model and context came from
 * (NULL: none), kind its SHAPE_*; more->offset, when set, its fileOffset. */
static int64_t put_task(imp *im, trace_event *ev, int64_t pid, int64_t device, int64_t stream,
                        int64_t task_id, tb_val conn, int64_t task_type, int64_t model, int64_t context,
                        int64_t name, int kind, const slice_arg keys[7], const task_more *more)
{
    int64_t gid = im->ids->next_task++;
    tb_val v[17] = {VINT(ev->ts_ns), VINT(end_ns(ev)), VINT(device), conn, VINT(gid), VINT(pid),
                    idval(task_type), context < 0 ? VNULL : VINT(context), stream < 0 ? VNULL : VINT(stream),
                    task_id < 0 ? VNULL : VINT(task_id), VINT(model), VINT(im->opt->rank), idval(name),
                    VNULL, VNULL, more && more->offset ? VINT(ev->offset) : VNULL, more ? more->tid : VNULL};
    slice_arg cols[12];
    int n = 0;
    const tb_val held[7] = {v[2], v[8], v[8], v[9], conn, v[10], v[7]};
    for (int i = 0; i < 7; i++)
        if (keys[i].key) {
            cols[n] = keys[i];
            cols[n++].v = held[i];
        }
    for (int i = 0; more && i < more->n; i++)
        cols[n++] = more->a[i];
    if (slice_args(im, kind, ev, cols, n, v + 13) || trace_row(im, R_TASK, v))
        return -1;
    im->res->dest[TB_DEST_TASK]++;
    note_device(im, device);
    return gid;
}

/* Task types that are not compute work (metrics.md "Classes"). */
static int non_compute_type(js_span t)
{
    static const char *const pre[] = {"EVENT_", "NOTIFY_", "STREAM_WAIT", "MEMCPY", "PROFILING_",
                                      "HCCL", "COMMUNICATION", "RDMA", "SDMA", "WRITE_VALUE",
                                      "Notify", "Memcpy", "Reduce", "Event"};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (span_prefix(t, pre[i]))
            return 1;
    return 0;
}

static int memcpy_op_from_name(js_span name)
{
    static const struct { const char *k; int op; } m[] = {
        {"HtoD", 1}, {"DtoH", 2}, {"DtoD", 3}, {"HtoH", 0}, {"PtoP", 3}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        size_t kn = strlen(m[i].k);
        for (size_t j = 0; j + kn <= name.n; j++)
            if (memcmp(name.p + j, m[i].k, kn) == 0)
                return m[i].op;
    }
    return 65535;
}

static int put_hw_task(imp *im, trace_event *ev, int64_t pid, proc *p)
{
    int64_t dev = trace_proc_device(p);
    js_span tt = js_arg(ev, "Task Type");
    int64_t stream = arg_int(ev, "Physic Stream Id", arg_int(ev, "Stream Id", -1));
    if (stream < 0 && js_span_int(ev->tid, &stream) != 0)
        stream = -1;
    int64_t type_id = intern_span(im, tt), name = intern_span(im, ev->name);
    if (type_id == -1 || name == -1)
        return -1;
    int memcpy_task = span_prefix(tt, "MEMCPY"), compute = !memcpy_task && !non_compute_type(tt);
    tb_val size = arg_intval(ev, "size");
    if (size.type == V_NULL)
        size = arg_intval(ev, "size(B)");
    task_more more = {.a = {TEXT_ARG("Task Type", tt)}, .n = 1};
    if (memcpy_task) {
        more.a[more.n++] = SLICE_ARG("size", size);
        more.a[more.n++] = SLICE_ARG("size(B)", size);
    } else if (compute) {
        more.a[more.n++] = SLICE_ARG("Block Num", arg_intval(ev, "Block Num"));
        more.a[more.n++] = SLICE_ARG("Mix Block Num", arg_intval(ev, "Mix Block Num"));
    }
    static const slice_arg keys[7] = {{0}, KEY("Physic Stream Id"), KEY("Stream Id"), KEY("Task Id"),
                                      KEY("connection_id"), KEY("Model Id"), KEY("Subtask Id")};
    int64_t gid = put_task(im, ev, pid, dev, stream, arg_int(ev, "Task Id", -1), arg_intval(ev, "connection_id"),
                           type_id, arg_int(ev, "Model Id", INVALID_ID), arg_int(ev, "Subtask Id", -1), name,
                           SHAPE_HW_TASK, keys, &more);
    if (gid < 0)
        return -1;
    if (memcpy_task) {
        tb_val v[4] = {VINT(gid), size, VINT(65535), VINT(im->opt->rank)};
        if (trace_row(im, R_MEMCPY_INFO, v))
            return -1;
        im->res->dest[TB_DEST_MEMCPY_INFO]++;
    } else if (compute) {
        int64_t op_type = derived_type(im, ev->name, 0);
        if (op_type == -1)
            return -1;
        tb_val v[8] = {idval(name), VINT(gid), idval(type_id), idval(op_type), arg_intval(ev, "Block Num"),
                       arg_intval(ev, "Mix Block Num"), VNULL, VINT(im->opt->rank)};
        if (trace_row(im, R_COMPUTE_TASK_INFO, v))
            return -1;
        im->res->dest[TB_DEST_COMPUTE_TASK_INFO]++;
    }
    return 0;
}

static int hccl_data_type(js_span s)
{
    static const char *const names[] = {"INT8", "INT16", "INT32", "FP16", "FP32", "INT64", "UINT64",
                                        "UINT8", "UINT16", "UINT32", "FP64", "BFP16", "INT128", NULL,
                                        "HIF8", "FP8E4M3", "FP8E5M2", "FP8E8M0"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (names[i] && span_eq(s, names[i]))
            return i;
    return -1;
}

static int span_contains(js_span s, const char *lit)
{
    size_t n = strlen(lit);
    for (size_t i = 0; i + n <= s.n; i++)
        if (memcmp(s.p + i, lit, n) == 0)
            return 1;
    return 0;
}

/* Communication kernels (metrics.md): ^nccl, ^rccl, ^hccl, ncclKernel, ncclDevKernel. */
static int is_comm_kernel(js_span name)
{
    js_span n = name;
    if (span_prefix(n, "void ")) {
        n.p += 5;
        n.n -= 5;
    }
    return span_iprefix(n, "nccl") || span_iprefix(n, "rccl") || span_iprefix(n, "hccl") ||
           span_contains(name, "ncclKernel") || span_contains(name, "ncclDevKernel");
}

/* The collective of an NCCL kernel: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...)" -> "AllReduce". */
static js_span collective_of(js_span name)
{
    const char *p = name.p, *e = name.p + name.n;
    for (const char *q = p; q + 5 <= e; q++) {
        if (strncasecmp(q, "ccl", 3) == 0 && q > p && (q[-1] == 'n' || q[-1] == 'r' || q[-1] == 'h' ||
                                                       q[-1] == 'N' || q[-1] == 'R' || q[-1] == 'H')) {
            const char *u = memchr(q, '_', (size_t)(e - q));
            if (!u)
                break;
            const char *t = u + 1, *te = t;
            while (te < e && *te != '_' && *te != '(' && *te != '<' && *te != ' ')
                te++;
            if (te > t)
                return (js_span){.p = t, .n = (size_t)(te - t), .type = JS_STR};
            break;
        }
    }
    const char *paren = memchr(p, '(', name.n);
    return (js_span){.p = p, .n = paren ? (size_t)(paren - p) : name.n, .type = JS_STR, .flags = name.flags};
}

/* op type of an hcom op name: "hcom_allReduce__123_0_1" -> "hcom_allReduce" */
static int64_t op_type_of(imp *im, js_span name)
{
    size_t n = 0;
    while (n + 1 < name.n && !(name.p[n] == '_' && name.p[n + 1] == '_'))
        n++;
    if (n + 1 >= name.n)
        n = name.n;
    js_span t = {.p = name.p, .n = n, .type = JS_STR, .flags = name.flags};
    return intern_span(im, t);
}

/* One COMMUNICATION_OP row. kernel: a Kineto kernel, whose args its TASK row keeps. */
static int put_comm_op(imp *im, trace_event *ev, int64_t device, tb_val conn, int64_t group, int kernel)
{
    int64_t name = intern_span(im, ev->name);
    int64_t optype = kernel ? intern_span(im, collective_of(ev->name)) : op_type_of(im, ev->name);
    if (name == -1 || optype == -1)
        return -1;
    int dt = hccl_data_type(js_arg(ev, "data_type"));
    int64_t alg = intern_span(im, js_arg(ev, "alg_type"));
    if (alg == -1)
        return -1;
    tb_val count = VNULL;
    double c;
    if (js_span_real(js_arg(ev, "count"), &c) == 0)
        count = VREAL(c);
    tb_val v[14] = {idval(name), VINT(ev->ts_ns), VINT(end_ns(ev)), conn, idval(group), VINT(im->ids->next_op++),
                    dt < 0 ? VNULL : VINT(dt), idval(alg), count, idval(optype), VINT(device),
                    VINT(im->opt->rank)};
    js_span gname = js_arg(ev, "group_name"), aname = js_arg(ev, "alg_type");
    slice_arg cols[] = {SLICE_ARG("connection_id", conn), TEXT_ARG("group_name", gname), TEXT_ARG("alg_type", aname)};
    if ((!kernel && slice_args(im, SHAPE_COMM_OP, ev, cols, 3, v + 12)) || trace_row(im, R_COMMUNICATION_OP, v))
        return -1;
    im->res->dest[TB_DEST_COMMUNICATION_OP]++;
    note_device(im, device);
    return 0;
}

static int put_comm_layer(imp *im, trace_event *ev, int64_t pid, proc *p)
{
    int64_t dev = trace_proc_device(p);
    if (span_prefix(ev->name, "hcom_")) {
        int64_t group = intern_span(im, js_arg(ev, "group_name"));
        if (group == -1)
            return -1;
        return put_comm_op(im, ev, dev, arg_intval(ev, "connection_id"), group, 0);
    }
    /* a small HCCL task: a device task with its communication details */
    int64_t name = intern_span(im, ev->name), tt = intern_span(im, js_arg(ev, "task type"));
    if (name == -1 || tt == -1)
        return -1;
    int64_t tid = 0;
    js_span_int(ev->tid, &tid);
    static const slice_arg keys[7] = {{0}, KEY("stream id"), {0}, KEY("task id"), {0}, {0}, KEY("context id")};
    js_span ttype = js_arg(ev, "task type");
    task_more more = {.a = {TEXT_ARG("task type", ttype), SLICE_ARG("notify id", arg_intval(ev, "notify id")),
                            SLICE_ARG("src rank", arg_intval(ev, "src rank")),
                            SLICE_ARG("dst rank", arg_intval(ev, "dst rank")),
                            SLICE_ARG("size(Byte)", arg_intval(ev, "size(Byte)"))},
                      .n = 5};
    int64_t gid = put_task(im, ev, pid, dev, arg_int(ev, "stream id", -1), arg_int(ev, "task id", -1),
                           VNULL, tt, INVALID_ID, arg_int(ev, "context id", -1), name, SHAPE_HCCL_TASK, keys,
                           &more);
    if (gid < 0)
        return -1;
    double bw;
    tb_val bwv = js_span_real(js_arg(ev, "bandwidth(GB/s)"), &bw) == 0 ? VREAL(bw) : VNULL;
    int dt = hccl_data_type(js_arg(ev, "data type"));
    tb_val v[14] = {idval(name), VINT(gid), idval(tt), VINT(tid), VNULL, arg_intval(ev, "notify id"),
                    arg_intval(ev, "src rank"), arg_intval(ev, "dst rank"), VNULL, arg_intval(ev, "size(Byte)"),
                    dt < 0 ? VNULL : VINT(dt), VNULL, bwv, VINT(im->opt->rank)};
    if (trace_row(im, R_COMMUNICATION_TASK_INFO, v))
        return -1;
    im->res->dest[TB_DEST_COMMUNICATION_TASK_INFO]++;
    return 0;
}

static int put_overlap(imp *im, trace_event *ev, proc *p)
{
    int type = -1;
    if (span_eq(ev->name, "Computing"))
        type = 0;
    else if (span_eq(ev->name, "Communication"))
        type = 1;
    else if (span_eq(ev->name, "Communication(Not Overlapped)"))
        type = 2;
    else if (span_eq(ev->name, "Free"))
        type = 3;
    else {
        int64_t t;
        if (js_span_int(ev->tid, &t) == 0 && t >= 0 && t <= 3)
            type = (int)t;
    }
    if (type < 0)
        return 1;
    int64_t dev = trace_proc_device(p);
    tb_val v[6] = {VINT(im->ids->next_overlap++), VINT(dev), VINT(ev->ts_ns), VINT(end_ns(ev)), VINT(type),
                   VINT(im->opt->rank)};
    if (trace_row(im, R_OVERLAP_ANALYSIS, v))
        return -1;
    im->res->dest[TB_DEST_OVERLAP_ANALYSIS]++;
    return 0;
}

/*
 * The correlation of a GPU slice that is the first element of a Kineto
 * trace's traceEvents, as a TB_PROFILE_META row: HTA links a launch to its
 * kernel by the kernel's place in that array and takes place 0 for "none",
 * so that such a kernel's launch is left out of its queue length
 * (metrics/hta_counters.c). 0, or -1 with err set.
 */
static int put_first_corr(imp *im, tb_val corr)
{
    if (corr.type != V_INT)
        return 0;
    char text[24];
    int n = snprintf(text, sizeof text, "%lld", (long long)corr.i);
    static const char key[] = "traceEvents[0].correlation";
    tb_val v[3] = {VINT(im->opt->rank), VTEXT(key, sizeof key - 1), VTEXT(text, (size_t)n)};
    return trace_row(im, R_PROFILE_META, v);
}

/* A device slice's own tid into *out when the timeline would not give it
 * back (the stream's number, 0 without one; MTIA's device slices have their
 * own threads), else VNULL; a text tid is decoded into *buf (the caller
 * frees it: im->dbuf is the args' while the row is made). -1 out of memory. */
static int own_tid(const trace_event *ev, int64_t stream, char **buf, tb_val *out)
{
    int64_t v;
    *out = VNULL;
    if (ev->tid.type == JS_NONE || ev->tid.type == JS_NULL)
        return 0;
    if (ev->tid.type == JS_NUM && js_span_int(ev->tid, &v) == 0) {
        if (v != (stream < 0 ? 0 : stream))
            *out = VINT(v);
        return 0;
    }
    double d;
    if (ev->tid.type == JS_NUM && js_span_real(ev->tid, &d) == 0) {
        *out = VREAL(d);
        return 0;
    }
    if (ev->tid.type != JS_STR)
        return 0;
    size_t cap = 0, n;
    const char *p = js_str_decode(ev->tid, buf, &cap, &n);
    if (!p)
        return -1;
    *out = VTEXT(p, n);
    return 0;
}

static int put_gpu(imp *im, trace_event *ev, int64_t pid, int is_kernel)
{
    int64_t dev = arg_int(ev, "device", 0);
    int64_t stream = arg_int(ev, "stream", -1);
    if (stream < 0 && js_span_int(ev->tid, &stream) != 0)
        stream = -1;
    tb_val corr = arg_intval(ev, "correlation");
    int64_t name = intern_span(im, ev->name), cat = intern_span(im, ev->cat);
    if (name == -1 || cat == -1)
        return -1;
    static const slice_arg keys[7] = {KEY("device"), KEY("stream"), {0}, {0}, KEY("correlation"), {0}, {0}};
    task_more more = {.a = {SLICE_ARG("bytes", arg_intval(ev, "bytes"))}, .n = !is_kernel, .offset = 1};
    char *tbuf = NULL;
    if (own_tid(ev, stream, &tbuf, &more.tid))
        return trace_oom(im);
    int64_t gid = put_task(im, ev, pid, dev, stream, -1, corr, cat, INVALID_ID, -1, name, SHAPE_GPU_TASK, keys, &more);
    free(tbuf);
    if (gid < 0 || (im->first && put_first_corr(im, corr)))
        return -1;
    if (!is_kernel) {
        int op = span_prefix(ev->cat, "gpu_memset") || span_eq(ev->cat, "Memset") ? 65535
                                                                                  : memcpy_op_from_name(ev->name);
        tb_val v[4] = {VINT(gid), arg_intval(ev, "bytes"), VINT(op), VINT(im->opt->rank)};
        if (trace_row(im, R_MEMCPY_INFO, v))
            return -1;
        im->res->dest[TB_DEST_MEMCPY_INFO]++;
        /* the trace's own bandwidth, which HTA reads (older traces compute it from another duration) */
        double bw;
        if (js_span_real(js_arg(ev, "memory bandwidth (GB/s)"), &bw) == 0) {
            tb_val b[3] = {VINT(gid), VREAL(bw), VINT(im->opt->rank)};
            if (trace_row(im, R_MEMCPY_BW, b))
                return -1;
        }
        return 0;
    }
    if (is_comm_kernel(ev->name)) {
        /* the kernel is both the op and its device task: COMMUNICATION_TASK_INFO links them */
        int64_t op = im->ids->next_op;
        if (put_comm_op(im, ev, dev, corr, -2, 1))
            return -1;
        tb_val ct[17] = {idval(name), VINT(gid), idval(cat), VNULL, VNULL, VNULL, VNULL, VNULL, VNULL, VNULL,
                         VNULL, VNULL, VNULL, VINT(op), VNULL, VNULL, VINT(im->opt->rank)};
        if (trace_row(im, R_FULL_COMMUNICATION_TASK_INFO, ct))
            return -1;
        im->res->dest[TB_DEST_COMMUNICATION_TASK_INFO]++;
        return 0;
    }
    int64_t op_type = derived_type(im, ev->name, 1);
    if (op_type == -1)
        return -1;
    tb_val v[8] = {idval(name), VINT(gid), idval(cat), idval(op_type), VNULL, VNULL, VNULL, VINT(im->opt->rank)};
    if (trace_row(im, R_COMPUTE_TASK_INFO, v))
        return -1;
    im->res->dest[TB_DEST_COMPUTE_TASK_INFO]++;
    return 0;
}

static int put_mstx(imp *im, trace_event *ev, int64_t pid)
{
    int64_t msg = intern_span(im, ev->name);
    if (msg == -1)
        return -1;
    tb_val v[9] = {VINT(ev->ts_ns), VINT(end_ns(ev)), VINT(2), idval(msg), VINT(global_tid(pid, ev->tid)),
                   arg_intval(ev, "connection_id"), VINT(im->opt->rank)};
    slice_arg cols[] = {SLICE_ARG("connection_id", v[5])};
    if (slice_args(im, SHAPE_MSTX, ev, cols, 1, v + 7) || trace_row(im, R_MSTX_EVENTS, v))
        return -1;
    im->res->dest[TB_DEST_MSTX_EVENTS]++;
    return 0;
}

/*
 * Both of Kineto's names of a runtime call give CANN_API type 60001, so that
 * every query of runtime calls finds them; a trace whose calls are all
 * `Runtime` (Kineto until 2022) says so in one TB_PROFILE_META row, which
 * `export timeline` reads to write them back as they were. A trace that
 * uses both names (no Kineto version did) is written back as cuda_runtime.
 */
int trace_put_categories(imp *im)
{
    if (im->runtime_cats != 2)
        return 0;
    static const char key[] = "runtimeCategory", val[] = "Runtime";
    tb_val v[3] = {VINT(im->opt->rank), VTEXT(key, sizeof key - 1), VTEXT(val, sizeof val - 1)};
    return trace_row(im, R_PROFILE_META, v);
}

/* Routes an X slice by Kineto category. Returns 0, 1 (not routed), -1. */
static int route_by_cat(imp *im, trace_event *ev, int64_t pid)
{
    js_span c = ev->cat;
    if (c.type != JS_STR)
        return 1;
    /* MTIA's device slices are device work as GPU kernels are (HTA's kernel
     * categories); Kernel, Memcpy, Memset and Runtime are Kineto's names of
     * 2022 and before for kernel, gpu_memcpy, gpu_memset and cuda_runtime */
    if (span_eq(c, "kernel") || span_eq(c, "Kernel") || span_eq(c, "mtia_ccp_events"))
        return put_gpu(im, ev, pid, 1);
    if (span_eq(c, "gpu_memcpy") || span_eq(c, "gpu_memset") || span_eq(c, "Memcpy") || span_eq(c, "Memset"))
        return put_gpu(im, ev, pid, 0);
    if (span_eq(c, "cuda_runtime") || span_eq(c, "Runtime")) {
        im->runtime_cats |= span_eq(c, "Runtime") ? 2 : 1;
        return put_cann(im, ev, pid, API_CUDA_RUNTIME, 1);
    }
    if (span_eq(c, "cuda_driver"))
        return put_cann(im, ev, pid, API_CUDA_DRIVER, 1);
    if (span_eq(c, "mtia_runtime"))
        return put_cann(im, ev, pid, API_MTIA_RUNTIME, 1);
    if (span_eq(c, "cpu_op"))
        return put_pytorch(im, ev, pid, API_OP);
    if (span_eq(c, "user_annotation"))
        return put_pytorch(im, ev, pid, API_USER_ANNOTATION);
    if (span_eq(c, "python_function")) {
        if (im->opt->keep_python_functions)
            return 1;
        im->res->dest[TB_DEST_SKIPPED_PYTHON]++;
        return 0;
    }
    return 1;
}

int trace_route_slice(imp *im, trace_event *ev, int64_t pkey, proc *p)
{
    int layer = p ? p->layer : L_UNKNOWN;
    int r;
    switch (layer) {
    case L_HW:
        return put_hw_task(im, ev, pkey, p);
    case L_CANN:
        return put_cann(im, ev, pkey, cann_level_type(ev), 0);
    case L_PYTHON:
        if (span_eq(ev->cat, "python_function") && !im->opt->keep_python_functions) {
            im->res->dest[TB_DEST_SKIPPED_PYTHON]++;
            return 0;
        }
        if (span_eq(ev->cat, "enqueue") || span_eq(ev->cat, "dequeue"))
            return put_pytorch(im, ev, pkey, API_QUEUE);
        if (span_eq(ev->cat, "python_function"))
            break;
        return put_pytorch(im, ev, pkey, API_OP);
    case L_COMM:
        return put_comm_layer(im, ev, pkey, p);
    case L_OVERLAP:
        r = put_overlap(im, ev, p);
        if (r <= 0)
            return r;
        break;
    case L_MSTX:
        return put_mstx(im, ev, pkey);
    case L_PYTHON_GC: {
        tb_val v[4] = {VINT(ev->ts_ns), VINT(end_ns(ev)), VINT(global_tid(pkey, ev->tid)), VINT(im->opt->rank)};
        if (trace_row(im, R_GC_RECORD, v))
            return -1;
        im->res->dest[TB_DEST_TB_EVENT]++; /* counted with generic events: GC_RECORD has no dest */
        return put_event(im, ev, pkey);
    }
    case L_OTHER:
    case L_UNKNOWN:
        r = route_by_cat(im, ev, pkey);
        if (r <= 0)
            return r;
        break;
    default:
        break;
    }
    im->res->dest[TB_DEST_TB_EVENT]++;
    return trace_put_event(im, ev, pkey);
}

/* 1 when a flow's name is its category followed by its id (HostToDevice<id>):
 * such names are unique per flow, so they are not interned (NULL in TB_FLOW). */
static int name_is_cat_id(const trace_event *ev)
{
    const js_span *n = &ev->name, *c = &ev->cat, *id = &ev->id;
    return n->type == JS_STR && c->type == JS_STR && (id->type == JS_STR || id->type == JS_NUM) &&
           n->n == c->n + id->n && memcmp(n->p, c->p, c->n) == 0 && memcmp(n->p + c->n, id->p, id->n) == 0;
}

int trace_put_flow_end(imp *im, trace_event *ev, int64_t pkey)
{
    int64_t cat = intern_span(im, ev->cat), name = name_is_cat_id(ev) ? -2 : intern_span(im, ev->name);
    if (cat == -1 || name == -1)
        return -1;
    flow_end e = {.ph = ev->ph, .cat = cat, .name = name, .pid = trace_pid_val(im, pkey), .has_ts = ev->has_ts,
                  .ts = ev->ts_ns, .conn = span_eq(ev->cat, "HostToDevice") || span_eq(ev->cat, "ac2g")};
    /* how the trace wrote it, so that export timeline writes it so again */
    e.written = (ev->id.type == JS_NUM ? FLOW_ID_NUMBER : 0) |
                (span_eq(ev->bp, "e") ? (ev->ph == 's' ? FLOW_START_BP : FLOW_FINISH_BP) : 0);
    /* the id decodes into its own buffer; tid is a number in practice, text otherwise */
    if (ev->id.type == JS_STR)
        e.id = js_str_decode(ev->id, &im->abuf, &im->acap, &e.idn);
    else if (ev->id.type == JS_NUM) {
        e.id = ev->id.p;
        e.idn = ev->id.n;
    } else {
        e.id = "";
        e.idn = 0;
    }
    e.tid = ev->tid.type == JS_NONE ? VNULL : span_val(im, ev->tid);
    if (!e.id)
        return trace_oom(im);
    int rc = fp_add(im->flows, &e);
    if (rc != 0)
        return rc == -2 ? trace_oom(im) : (row_sink_fail(im->sink, im->path, im->err), -1);
    im->res->dest[TB_DEST_TB_FLOW]++;
    return 0;
}

int trace_put_counter(imp *im, trace_event *ev, int64_t pkey)
{
    int64_t name = intern_span(im, ev->name);
    if (name == -1)
        return -1;
    js_arg(ev, ""); /* parse args */
    int n = 0;
    for (int i = 0; i < ev->n_args; i++) {
        double d;
        if (js_span_real(ev->argv[i].val, &d) != 0)
            continue;
        int64_t series = intern_span(im, ev->argv[i].key);
        if (n == 0)
            note_unrouted(im, pkey);
        if (series == -1)
            return -1;
        tb_val v[6] = {VINT(im->opt->rank), trace_pid_val(im, pkey), idval(name), VINT(series), VINT(ev->ts_ns),
                       VREAL(d)};
        int64_t iv;
        if (ev->argv[i].val.type == JS_NUM && js_span_int(ev->argv[i].val, &iv) == 0)
            v[5] = VINT(iv);
        if (trace_row(im, R_COUNTER, v))
            return -1;
        n++;
    }
    if (n == 0) {
        im->res->dest[TB_DEST_TB_EVENT]++;
        return trace_put_event(im, ev, pkey);
    }
    im->res->dest[TB_DEST_TB_COUNTER]++;
    return 0;
}

