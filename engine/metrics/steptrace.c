/* SPDX-License-Identifier: MIT */
/*
 * steptrace.c - the step trace family of computed tables (metrics.md, "Step
 * trace time" and "Overlap Analysis lanes"):
 *
 *   step_trace_time      one row per (rank, device, step): Computing,
 *                        Communication(Not Overlapped), Overlapped,
 *                        Communication, Free, Stage, Bubble, Not Overlapped
 *                        and Exclude Receive, Preparing, in ns, by the policy
 *                        of `metrics.step_trace.policy`;
 *   overlap_lanes        per (rank, device) the Computing, Communication,
 *                        Communication(Not Overlapped) and Free lanes as
 *                        interval rows;
 *   overlap_consistency  the input's Overlap Analysis lanes (OVERLAP_ANALYSIS)
 *                        against overlap_lanes, total length per lane.
 *
 * How it works. The tables are read once each, in storage order (every name
 * unqualified, so a window applies): COMPUTE_TASK_INFO and
 * COMMUNICATION_TASK_INFO into maps from globalTaskId (a dense array when the
 * ids are dense, else a sorted array), then TASK, COMMUNICATION_OP and, for
 * the lane policies, OVERLAP_ANALYSIS into per-device interval arrays
 * (compute, communication, receive, input lanes), which are then sorted by
 * start with the interval library's radix sort. (An ORDER BY startNs on TASK
 * walks the TASK_start index and fetches every row at random: 0.7 s per
 * million tasks, against 0.12 s for the plain scan and an O(n) sort.) Steps,
 * their launching calls and their device ranges follow the one rule of
 * steps.h: while TASK and COMMUNICATION_OP are scanned, each row widens the
 * span of the step that launched it on its device; START and END come from
 * that span (steps_range), FWK_START is the host start. An op then belongs to
 * a step by its start (binary search in the sorted arrays: each step's
 * members are a contiguous run), and the per-step unions and differences
 * come from the interval library. Everything is O(n log n) in the number of
 * rows; nothing is quadratic. A rank without steps gets one row per device
 * for the whole profile: Step and FWK_START NULL, [START, END] the first
 * start and last end over the device's tasks and ops, Preparing 0.
 *
 * Policies (metrics.md's table; busy = U(compute) ∪ U(comm), Bubble = the
 * summed durations of the member receive ops):
 *   torch_npu       ops by start in [START, END), not clipped; Free = the
 *                   gaps between the step's busy intervals (first busy start
 *                   to last busy end, less |busy|); Stage = that span -
 *                   Bubble; ExcludeReceive = max(CNO - Bubble, 0).
 *   torch_npu_text  lane slices (the input's OVERLAP_ANALYSIS for a device
 *                   that has them, else the computed lanes) by start in
 *                   [START, END): each field the sum of its lane's slices,
 *                   Overlapped = Communication - CNO; Stage = (last end -
 *                   first start over the counted slices) - Bubble, clamped
 *                   ExcludeReceive; Preparing from the first Computing or
 *                   Communication slice.
 *   msprof_analyze  one row per device for the whole profile (Step NULL),
 *                   sums of lane slices as above; Stage = Free + Computing +
 *                   CNO - Bubble; ExcludeReceive = CNO - Bubble, unclamped.
 *   mindspore       ops by start in [START, END]; Free = the device's Free
 *                   lane clipped to [START, END]; Stage = (end of the op that
 *                   starts last (ties: the longest) - first start) - Bubble,
 *                   sends among the receive ops by default; ExcludeReceive
 *                   unclamped.
 * Every policy: Computing = |U(compute)|, Communication = |U(comm)|, CNO =
 * |U(comm) \ U(compute)|, Overlapped = Communication - CNO, Preparing =
 * first compute/comm start of the step - FWK_START (0 without either).
 *
 * Classes (metrics.md, "Classes of device work"; the name patterns are
 * options, see classes.h for their syntax):
 *   compute        a TASK with a COMPUTE_TASK_INFO row, except tasks on a
 *                  communication-only stream and tasks whose name (the
 *                  compute record's, else the task's) matches
 *                  classes.compute_exclude (default *AicpuKernel, *AivKernel).
 *                  A stream is communication-only when, by
 *                  classes.comm_stream_rule: "all" (default), every task on
 *                  it has a COMMUNICATION_TASK_INFO row; "any", at least one
 *                  has; "none", never.
 *   communication  the COMMUNICATION_OP intervals.
 *   receive        the communication ops whose name matches classes.receive
 *                  (default hcom_receive*; for the mindspore policy also
 *                  hcom_*SendRecv__*, hcom_send__*, *Receive-op*, *Send-op*).
 *
 * Membership, when the same start falls into two overlapping step ranges:
 * the op counts once, in the first step by START (then id).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/classes.h"
#include "metrics/interval.h"
#include "metrics/metrics.h"
#include "metrics/steps.h"
#include "util/hash.h"
#include "util/idmap.h"
#include "util/sort.h"
#include "util/vec.h"


/* The lanes, numbered as ENUM_OVERLAP_ANALYSIS_TYPE numbers them. */
enum lane { L_COMPUTE, L_COMM, L_CNO, L_FREE, N_LANES };
static const char *const lane_names[N_LANES] = {"Computing", "Communication", "Communication(Not Overlapped)",
                                                "Free"};

static const char *const default_compute_exclude[] = {"*AicpuKernel", "*AivKernel", NULL};
static const char *const default_receive[] = {"hcom_receive*", NULL};
static const char *const default_receive_mindspore[] = {"hcom_receive*", "hcom_*SendRecv__*", "hcom_send__*",
                                                        "*Receive-op*", "*Send-op*", NULL};

/* ---- a small open-addressing hash map: (a, b, c) -> v >= 0 ------------------------ */

typedef struct hent {
    int64_t a, b, c;
    int64_t v; /* -1: empty slot */
} hent;

typedef struct hmap {
    hent *e;
    size_t cap, n; /* cap is 0 or a power of two */
} hmap;

static size_t hslot(const hmap *h, int64_t a, int64_t b, int64_t c)
{
    uint64_t x = hash_mix64((uint64_t)a ^ hash_mix64((uint64_t)b + 0x9e3779b97f4a7c15ULL * ((uint64_t)c + 1)));
    return (size_t)(x & (h->cap - 1));
}

/* The value for the key, or -1. */
static int64_t hmap_get(const hmap *h, int64_t a, int64_t b, int64_t c)
{
    if (!h->n)
        return -1;
    for (size_t i = hslot(h, a, b, c);; i = (i + 1) & (h->cap - 1)) {
        const hent *e = &h->e[i];
        if (e->v < 0)
            return -1;
        if (e->a == a && e->b == b && e->c == c)
            return e->v;
    }
}

static int hmap_grow(hmap *h)
{
    size_t cap = h->cap ? h->cap * 2 : 64;
    hent *e = malloc(cap * sizeof *e);
    if (!e)
        return -1;
    for (size_t i = 0; i < cap; i++)
        e[i].v = -1;
    hmap old = *h;
    h->e = e;
    h->cap = cap;
    for (size_t i = 0; i < old.cap; i++) {
        if (old.e[i].v < 0)
            continue;
        size_t j = hslot(h, old.e[i].a, old.e[i].b, old.e[i].c);
        while (e[j].v >= 0)
            j = (j + 1) & (cap - 1);
        e[j] = old.e[i];
    }
    free(old.e);
    return 0;
}

/* Inserts key -> v unless the key is there. Returns the value now stored, or -1 when out of memory. */
static int64_t hmap_put(hmap *h, int64_t a, int64_t b, int64_t c, int64_t v)
{
    if ((h->n + 1) * 4 > h->cap * 3 && hmap_grow(h))
        return -1;
    size_t i = hslot(h, a, b, c);
    for (; h->e[i].v >= 0; i = (i + 1) & (h->cap - 1))
        if (h->e[i].a == a && h->e[i].b == b && h->e[i].c == c)
            return h->e[i].v;
    h->e[i] = (hent){a, b, c, v};
    h->n++;
    return v;
}

static void hmap_free(hmap *h)
{
    free(h->e);
    memset(h, 0, sizeof *h);
}

/* ---- globalTaskId -> value maps ---------------------------------------------------- */

/*
 * The scans read a NULL id as NO_ID (ifnull(x, ?1) with ?1 bound to it):
 * one sqlite3_column_int64 per value instead of a type check and a read,
 * which is a tenth of the time of a million-row scan.
 */
#define NO_ID INT64_MIN

/*
 * Fills m from sql's rows (id, value; a NULL value is stored as -1) and
 * *nulls with the number of NULL values. Returns 0, -1 out of memory, 1 SQLite error.
 */
static int idmap_load(sqlite3 *db, const char *sql, idmap *m, int *nulls)
{
    *nulls = 0;
    memset(m, 0, sizeof *m);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int null = sqlite3_column_type(st, 1) == SQLITE_NULL;
        int64_t v = null ? -1 : sqlite3_column_int64(st, 1);
        *nulls += null;
        if (idmap_add(m, sqlite3_column_int64(st, 0), v)) {
            sqlite3_finalize(st);
            return -1;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return 1;
    idmap_build(m);
    return 0;
}

/* ---- what the scans collect --------------------------------------------------- */

typedef struct dev {
    int64_t rank, device;
    ivec comp;             /* compute tasks (sorted by start once loaded) */
    uint32_t *cstream;     /* while loading: the stream (index into load.sc) of each comp interval */
    size_t cstream_cap;
    ivec comm;             /* COMMUNICATION_OP intervals */
    ivec recv;             /* the receive ops among them */
    ivec lane[N_LANES];    /* the input's Overlap Analysis slices */
    int has_lanes;
    int64_t begin, end;    /* first start, last end over tasks and communication ops */
    int has_span;
    size_t step0, nsteps;  /* the rank's steps: load.st.v[step0 .. step0 + nsteps) */
    steps_span *span;      /* per step: the work it launched on this device */
    const idmap *launch;   /* the rank's launching calls (borrowed from load.st), or NULL */
} dev;

typedef struct stream_count {
    uint32_t total, comm;
} stream_count;

typedef struct load {
    const metric_ctx *m;
    int policy;
    int stream_rule;
    int want_steps, want_lanes;
    dev *d;
    size_t nd, capd;
    hmap devs;             /* (rank, device, 0) -> index into d */
    size_t last_dev;       /* the device of the previous row (rows come in runs) */
    hmap streams;          /* (rank, device, stream) -> index into sc */
    stream_count *sc;
    size_t nsc, capsc;
    steps st;              /* the host steps and their launching calls */
    idmap compute;         /* globalTaskId -> COMPUTE_TASK_INFO.name (-1: NULL) */
    int compute_unnamed;   /* some compute record has no name (then TASK.name is read) */
    idmap commtask;        /* globalTaskId -> 1 for COMMUNICATION_TASK_INFO rows */
    class_ids excl, recv;  /* string ids of excluded compute names and of receive ops */
} load;

static void dev_free(dev *d)
{
    ivec_free(&d->comp);
    free(d->cstream);
    ivec_free(&d->comm);
    ivec_free(&d->recv);
    for (int i = 0; i < N_LANES; i++)
        ivec_free(&d->lane[i]);
    free(d->span);
}

static void load_free(load *L)
{
    for (size_t i = 0; i < L->nd; i++)
        dev_free(&L->d[i]);
    free(L->d);
    hmap_free(&L->devs);
    hmap_free(&L->streams);
    free(L->sc);
    steps_finish(&L->st);
    idmap_free(&L->compute);
    idmap_free(&L->commtask);
    class_ids_finish(&L->excl);
    class_ids_finish(&L->recv);
}

static tb_status nomem(tb_error *err, const char *what)
{
    return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
}

static tb_status db_fail(const load *L, tb_error *err, const char *what)
{
    return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(L->m->db));
}

/* The device's entry, made on first sight; NULL when out of memory. */
static dev *get_dev(load *L, int64_t rank, int64_t device)
{
    if (L->last_dev < L->nd && L->d[L->last_dev].rank == rank && L->d[L->last_dev].device == device)
        return &L->d[L->last_dev];
    int64_t k = hmap_get(&L->devs, rank, device, 0);
    if (k >= 0) {
        L->last_dev = (size_t)k;
        return &L->d[k];
    }
    if (vec_reserve(&L->d, &L->capd, L->nd + 1, sizeof *L->d))
        return NULL;
    dev *d = &L->d[L->nd];
    memset(d, 0, sizeof *d);
    d->rank = rank;
    d->device = device;
    if (L->want_steps) {
        steps_of_rank(&L->st, rank, &d->step0, &d->nsteps);
        if (d->nsteps) {
            if (!(d->span = malloc(d->nsteps * sizeof *d->span))) {
                dev_free(d);
                return NULL;
            }
            for (size_t i = 0; i < d->nsteps; i++)
                d->span[i] = (steps_span)STEPS_SPAN_EMPTY;
            d->launch = steps_launches(&L->st, rank);
        }
    }
    if (hmap_put(&L->devs, rank, device, 0, (int64_t)L->nd) < 0) {
        dev_free(d);
        return NULL;
    }
    L->last_dev = L->nd;
    L->nd++;
    return d;
}

static void widen(dev *d, int64_t s, int64_t e)
{
    if (!d->has_span) {
        d->begin = s;
        d->end = e;
        d->has_span = 1;
        return;
    }
    if (s < d->begin)
        d->begin = s;
    if (e > d->end)
        d->end = e;
}

/* Work [s, e) with connection id conn: widens the span of the step that launched it. */
static void launched(dev *d, int64_t conn, int64_t s, int64_t e)
{
    int64_t k = steps_launched(d->launch, conn);
    if (k >= 0 && (size_t)k >= d->step0 && (size_t)k < d->step0 + d->nsteps)
        steps_span_add(&d->span[(size_t)k - d->step0], s, e);
}

/* The per-task maps: compute records, and communication records when the stream rule needs them. */
static tb_status load_task_info(load *L, tb_error *err)
{
    int rc = idmap_load(L->m->db,
                        "SELECT globalTaskId, name FROM COMPUTE_TASK_INFO WHERE globalTaskId IS NOT NULL",
                        &L->compute, &L->compute_unnamed);
    int unused;
    if (!rc && L->stream_rule != METRICS_STREAM_NONE)
        rc = idmap_load(L->m->db,
                        "SELECT globalTaskId, 1 FROM COMMUNICATION_TASK_INFO WHERE globalTaskId IS NOT NULL",
                        &L->commtask, &unused);
    if (rc < 0)
        return nomem(err, "step trace");
    return rc ? db_fail(L, err, "step trace: reading the task records") : TB_OK;
}

/*
 * TASK: the device spans, the launched ranges, the compute intervals and,
 * when some task has a communication record, the per-stream counts of the
 * communication-only rule.
 */
static tb_status load_tasks(load *L, tb_error *err)
{
    int track = !idmap_empty(&L->commtask);
    /* only the columns needed: a column read is a good part of the cost of a row */
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT rankId, deviceId, startNs, endNs, ifnull(connectionId, ?1), ifnull(globalTaskId, ?1), %s, %s "
             "FROM TASK WHERE startNs IS NOT NULL AND endNs IS NOT NULL",
             track ? "ifnull(streamId, ?1)" : "0", L->compute_unnamed ? "ifnull(name, ?1)" : "?1");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(L->m->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(L, err, "step trace: reading TASK");
    sqlite3_bind_int64(st, 1, NO_ID);
    int rc;
    tb_status ret = TB_OK;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(st, 0), device = sqlite3_column_int64(st, 1);
        int64_t s = sqlite3_column_int64(st, 2), e = sqlite3_column_int64(st, 3);
        int64_t gtid = sqlite3_column_int64(st, 5);
        int has_gtid = gtid != NO_ID;
        dev *d = get_dev(L, rank, device);
        if (!d)
            goto oom;
        widen(d, s, e);
        uint32_t si = 0;
        if (track) {
            int64_t stream = sqlite3_column_int64(st, 6);
            int64_t k = hmap_get(&L->streams, rank, device, stream);
            if (k < 0) {
                if (vec_reserve(&L->sc, &L->capsc, L->nsc + 1, sizeof *L->sc) ||
                    (k = hmap_put(&L->streams, rank, device, stream, (int64_t)L->nsc)) < 0)
                    goto oom;
                L->sc[L->nsc++] = (stream_count){0, 0};
            }
            si = (uint32_t)k;
            L->sc[si].total++;
            L->sc[si].comm += has_gtid && idmap_get(&L->commtask, gtid) != IDMAP_ABSENT;
        }
        int64_t name = has_gtid ? idmap_get(&L->compute, gtid) : IDMAP_ABSENT;
        if (name != IDMAP_ABSENT) {
            /* the compute record's name, else the task's */
            if (name < 0 && sqlite3_column_int64(st, 7) != NO_ID)
                name = sqlite3_column_int64(st, 7);
            if (name < 0 || !class_ids_has(&L->excl, name)) {
                if (ivec_push(&d->comp, s, e))
                    goto oom;
                if (track) {
                    if (d->comp.n > d->cstream_cap) {
                        size_t cap = d->comp.cap;
                        uint32_t *v = realloc(d->cstream, cap * sizeof *v);
                        if (!v)
                            goto oom;
                        d->cstream = v;
                        d->cstream_cap = cap;
                    }
                    d->cstream[d->comp.n - 1] = si;
                }
            }
        }
        int64_t conn = sqlite3_column_int64(st, 4);
        if (d->nsteps && conn != NO_ID)
            launched(d, conn, s, e);
    }
    if (rc != SQLITE_DONE)
        ret = db_fail(L, err, "step trace: reading TASK");
    sqlite3_finalize(st);
    if (ret || !track)
        return ret;
    /* drop compute on communication-only streams */
    for (size_t i = 0; i < L->nd; i++) {
        dev *d = &L->d[i];
        size_t k = 0;
        for (size_t j = 0; j < d->comp.n; j++) {
            const stream_count *c = &L->sc[d->cstream[j]];
            int comm_only = L->stream_rule == METRICS_STREAM_ALL ? c->comm == c->total : c->comm > 0;
            if (!comm_only)
                d->comp.v[k++] = d->comp.v[j];
        }
        d->comp.n = k;
        free(d->cstream);
        d->cstream = NULL;
        d->cstream_cap = 0;
    }
    return TB_OK;
oom:
    sqlite3_finalize(st);
    return nomem(err, "step trace");
}

/* COMMUNICATION_OP: communication and receive intervals. */
static tb_status load_comm(load *L, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(L->m->db,
            "SELECT rankId, deviceId, startNs, endNs, ifnull(opName, ?1), ifnull(connectionId, ?1) "
            "FROM COMMUNICATION_OP WHERE startNs IS NOT NULL AND endNs IS NOT NULL", -1, &st, NULL) != SQLITE_OK)
        return db_fail(L, err, "step trace: reading COMMUNICATION_OP");
    sqlite3_bind_int64(st, 1, NO_ID);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(st, 0);
        int64_t s = sqlite3_column_int64(st, 2), e = sqlite3_column_int64(st, 3);
        dev *d = get_dev(L, rank, sqlite3_column_int64(st, 1));
        if (!d || ivec_push(&d->comm, s, e))
            goto oom;
        widen(d, s, e);
        int64_t name = sqlite3_column_int64(st, 4), conn = sqlite3_column_int64(st, 5);
        if (name != NO_ID && class_ids_has(&L->recv, name) && ivec_push(&d->recv, s, e))
            goto oom;
        if (d->nsteps && conn != NO_ID)
            launched(d, conn, s, e);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? TB_OK : db_fail(L, err, "step trace: reading COMMUNICATION_OP");
oom:
    sqlite3_finalize(st);
    return nomem(err, "step trace");
}

/* OVERLAP_ANALYSIS: the input's lane slices. */
static tb_status load_lanes(load *L, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(L->m->db,
            "SELECT rankId, deviceId, type, startNs, endNs FROM OVERLAP_ANALYSIS "
            "WHERE startNs IS NOT NULL AND endNs IS NOT NULL AND type BETWEEN 0 AND 3", -1, &st,
            NULL) != SQLITE_OK)
        return db_fail(L, err, "step trace: reading OVERLAP_ANALYSIS");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        dev *d = get_dev(L, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
        int type = sqlite3_column_int(st, 2);
        if (!d || ivec_push(&d->lane[type], sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4))) {
            sqlite3_finalize(st);
            return nomem(err, "step trace");
        }
        d->has_lanes = 1;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? TB_OK : db_fail(L, err, "step trace: reading OVERLAP_ANALYSIS");
}

/* Sorts by start unless sorted already (O(n) either way: iv_sort is a radix sort). */
static void ensure_sorted(ivec *x)
{
    for (size_t i = 1; i < x->n; i++)
        if (x->v[i].s < x->v[i - 1].s) {
            iv_sort(x->v, x->n);
            return;
        }
}

static int cmp_dev(const void *a, const void *b)
{
    const dev *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->device > y->device) - (x->device < y->device);
}

/* Reads the options and every table the build needs. */
static tb_status load_all(load *L, const metric_ctx *m, int policy, int want_steps, int want_lanes, tb_error *err)
{
    memset(L, 0, sizeof *L);
    L->m = m;
    L->policy = policy;
    L->want_steps = want_steps;
    L->want_lanes = want_lanes;
    tb_status rc = TB_OK;
    class_rule *excl = NULL, *recv = NULL;
    const metrics_options *opt = metrics_opts(m);
    L->stream_rule = opt->comm_stream_rule;
    if ((rc = class_rule_create(&opt->compute_exclude, "classes.compute_exclude", default_compute_exclude, &excl,
                                err)) ||
        (rc = class_rule_create(&opt->receive, "classes.receive",
                                policy == METRICS_MINDSPORE ? default_receive_mindspore : default_receive, &recv,
                                err)) ||
        (rc = class_rule_ids(excl, m->db, &L->excl, err)) || (rc = class_rule_ids(recv, m->db, &L->recv, err)))
        goto done;
    if (want_steps && (rc = steps_load(m->db, 1 | STEPS_COMPLETE, "step_trace_time", &L->st, err)))
        goto done;
    if ((rc = load_task_info(L, err)) || (rc = load_tasks(L, err)))
        goto done;
    idmap_free(&L->compute);
    idmap_free(&L->commtask);
    if ((rc = load_comm(L, err)))
        goto done;
    if (want_lanes && (rc = load_lanes(L, err)))
        goto done;
    for (size_t i = 0; i < L->nd; i++) {
        dev *d = &L->d[i];
        ensure_sorted(&d->comp);
        ensure_sorted(&d->comm);
        ensure_sorted(&d->recv);
        for (int k = 0; k < N_LANES; k++)
            ensure_sorted(&d->lane[k]);
    }
    /* the output order; the devs map is stale from here on */
    if (L->nd > 1)
        qsort(L->d, L->nd, sizeof *L->d, cmp_dev);
    hmap_free(&L->devs);
done:
    class_rule_destroy(excl);
    class_rule_destroy(recv);
    return rc;
}

/* ---- per-device interval sets ---------------------------------------------------- */

/* The device's merged sets: U(compute), U(comm), U(comm) \ U(compute), Free. */
typedef struct lanes {
    ivec v[N_LANES];
} lanes;

static void lanes_free(lanes *l)
{
    for (int i = 0; i < N_LANES; i++)
        ivec_free(&l->v[i]);
}

static int copy_merged(ivec *out, const ivec *in)
{
    ivec_clear(out);
    if (ivec_reserve(out, in->n + 1))
        return -1;
    if (in->n)
        memcpy(out->v, in->v, in->n * sizeof *in->v);
    out->n = in->n;
    ivec_merge(out);
    return 0;
}

/*
 * Computes the lanes of d (metrics.md, "Overlap Analysis lanes"): Free is
 * [begin, end] \ (U(compute) ∪ U(comm)), begin and end being the first start
 * and last end over the device's tasks and communication ops.
 */
static int make_lanes(const dev *d, lanes *l)
{
    ivec busy = IVEC_INIT;
    int rc = -1;
    if (copy_merged(&l->v[L_COMPUTE], &d->comp) || copy_merged(&l->v[L_COMM], &d->comm))
        goto done;
    const ivec *c = &l->v[L_COMPUTE], *m = &l->v[L_COMM];
    ivec_clear(&l->v[L_CNO]);
    if (ivec_reserve(&l->v[L_CNO], c->n + m->n + 1) || ivec_reserve(&busy, c->n + m->n + 1))
        goto done;
    l->v[L_CNO].n = iv_subtract(m->v, m->n, c->v, c->n, l->v[L_CNO].v);
    busy.n = iv_union(c->v, c->n, m->v, m->n, busy.v);
    ivec_clear(&l->v[L_FREE]);
    if (d->has_span && d->end > d->begin) {
        iv whole = {d->begin, d->end};
        if (ivec_reserve(&l->v[L_FREE], busy.n + 2))
            goto done;
        l->v[L_FREE].n = iv_subtract(&whole, 1, busy.v, busy.n, l->v[L_FREE].v);
    }
    rc = 0;
done:
    ivec_free(&busy);
    return rc;
}

/* ---- step_trace_time -------------------------------------------------------------- */

/* One output row. */
typedef struct strow {
    int64_t step;
    int has_step, has_fwk;
    int64_t start, end, fwk;
    int64_t computing, cno, overlapped, communication, free, stage, bubble, cno_excl, preparing;
} strow;

/* A step's device range. */
typedef struct srange {
    int64_t id, start, end, fwk;
} srange;

/* Index of the first interval of v (sorted by start) with start >= t (> t when after). */
static size_t first_from(const ivec *v, int64_t t, int after)
{
    return sort_bound_i64(v->v, v->n, sizeof *v->v, offsetof(iv, s), t, after);
}

/* A run [lo, hi) of a sorted array. */
typedef struct run {
    size_t lo, hi;
} run;

/*
 * The members of each step in v: the intervals whose start lies in [START,
 * END) ([START, END] when closed), each counted in the first step by START
 * (order lists the steps by START, then id). O(steps log n).
 */
static void claim(const ivec *v, const srange *r, const size_t *order, size_t ns, int closed, run *out)
{
    size_t taken = 0;
    for (size_t j = 0; j < ns; j++) {
        size_t k = order[j];
        size_t lo = first_from(v, r[k].start, 0), hi = first_from(v, r[k].end, closed);
        if (lo < taken)
            lo = taken;
        if (hi < lo)
            hi = lo;
        out[k] = (run){lo, hi};
        if (hi > taken)
            taken = hi;
    }
}

/* Copies v[r] into out and merges it (sorted already: O(k)). */
static int merged_run(ivec *out, const ivec *v, run r)
{
    ivec_clear(out);
    size_t n = r.hi - r.lo;
    if (ivec_reserve(out, n + 1))
        return -1;
    if (n)
        memcpy(out->v, v->v + r.lo, n * sizeof *v->v);
    out->n = n;
    ivec_merge(out);
    return 0;
}

static int64_t dur_sum(const ivec *v, run r)
{
    int64_t sum = 0;
    for (size_t i = r.lo; i < r.hi; i++)
        if (v->v[i].e > v->v[i].s)
            sum += v->v[i].e - v->v[i].s;
    return sum;
}

typedef struct scratch {
    ivec c, m;
} scratch;

/* torch_npu and mindspore: a step's fields from its ops. free_lane: the device's Free lane (mindspore). */
static int step_from_ops(int policy, const dev *d, run rc, run rm, run rr, const ivec *free_lane, scratch *x,
                         strow *o)
{
    if (merged_run(&x->c, &d->comp, rc) || merged_run(&x->m, &d->comm, rm))
        return -1;
    o->computing = iv_length(x->c.v, x->c.n);
    o->communication = iv_length(x->m.v, x->m.n);
    o->cno = iv_subtract_len(x->m.v, x->m.n, x->c.v, x->c.n);
    o->overlapped = o->communication - o->cno;
    o->bubble = dur_sum(&d->recv, rr);
    /* first start, last end, and the op that starts last (ties: the one ending last) */
    int have = rc.hi > rc.lo || rm.hi > rm.lo;
    int64_t first = INT64_MAX, last_end = INT64_MIN, last_s = INT64_MIN, last_e = INT64_MIN;
    const ivec *arr[2] = {&d->comp, &d->comm};
    const run runs[2] = {rc, rm};
    for (int a = 0; a < 2; a++) {
        const ivec *v = arr[a];
        run r = runs[a];
        if (r.hi == r.lo)
            continue;
        if (v->v[r.lo].s < first)
            first = v->v[r.lo].s;
        for (size_t i = r.lo; i < r.hi; i++)
            if (v->v[i].e > last_end)
                last_end = v->v[i].e;
        /* sorted by start: the last start is at the end of the run */
        for (size_t i = r.hi; i > r.lo && v->v[i - 1].s == v->v[r.hi - 1].s; i--) {
            const iv *p = &v->v[i - 1];
            if (p->s > last_s || (p->s == last_s && p->e > last_e)) {
                last_s = p->s;
                last_e = p->e;
            }
        }
    }
    o->preparing = have && o->has_fwk ? first - o->fwk : 0;
    if (policy == METRICS_MINDSPORE) {
        o->free = free_lane ? iv_clip_len(free_lane->v, free_lane->n, o->start, o->end) : 0;
        o->stage = (have ? last_e - first : 0) - o->bubble;
        o->cno_excl = o->cno - o->bubble;
    } else {
        int64_t span = have ? last_end - first : 0;
        o->free = have ? span - (o->computing + o->cno) : 0;
        o->stage = span - o->bubble;
        o->cno_excl = o->cno > o->bubble ? o->cno - o->bubble : 0;
    }
    return 0;
}

/* torch_npu_text and msprof_analyze: a step's fields from lane slices (runs into lv[k]). */
static void step_from_lanes(int policy, const dev *d, const ivec *lv, const run *lr, run rr, strow *o)
{
    int64_t sum[N_LANES];
    int64_t first = INT64_MAX, last = INT64_MIN, first_busy = INT64_MAX;
    for (int k = 0; k < N_LANES; k++) {
        sum[k] = dur_sum(&lv[k], lr[k]);
        for (size_t i = lr[k].lo; i < lr[k].hi; i++) {
            const iv *p = &lv[k].v[i];
            if (p->s < first)
                first = p->s;
            if (p->e > last)
                last = p->e;
            if ((k == L_COMPUTE || k == L_COMM) && p->s < first_busy)
                first_busy = p->s;
        }
    }
    o->computing = sum[L_COMPUTE];
    o->communication = sum[L_COMM];
    o->cno = sum[L_CNO];
    o->overlapped = o->communication - o->cno;
    o->free = sum[L_FREE];
    o->bubble = dur_sum(&d->recv, rr);
    o->preparing = first_busy != INT64_MAX && o->has_fwk ? first_busy - o->fwk : 0;
    if (policy == METRICS_MSPROF_ANALYZE) {
        o->stage = o->free + o->computing + o->cno - o->bubble;
        o->cno_excl = o->cno - o->bubble;
    } else {
        o->stage = (first != INT64_MAX ? last - first : 0) - o->bubble;
        o->cno_excl = o->cno > o->bubble ? o->cno - o->bubble : 0;
    }
}

static tb_status insert_row(sqlite3_stmt *ins, const dev *d, const strow *o, int policy, const metric_ctx *m,
                            tb_error *err)
{
    int i = 1;
    sqlite3_reset(ins);
    sqlite3_bind_int64(ins, i++, d->rank);
    sqlite3_bind_int64(ins, i++, d->device);
    if (o->has_step)
        sqlite3_bind_int64(ins, i++, o->step);
    else
        sqlite3_bind_null(ins, i++);
    sqlite3_bind_int64(ins, i++, o->start);
    sqlite3_bind_int64(ins, i++, o->end);
    if (o->has_fwk)
        sqlite3_bind_int64(ins, i++, o->fwk);
    else
        sqlite3_bind_null(ins, i++);
    const int64_t v[] = {o->computing, o->cno,   o->overlapped, o->communication, o->free,
                         o->stage,     o->bubble, o->cno_excl,  o->preparing};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
        sqlite3_bind_int64(ins, i++, v[k]);
    sqlite3_bind_text(ins, i++, metrics_policy_names[policy], -1, SQLITE_STATIC);
    if (sqlite3_step(ins) != SQLITE_DONE)
        return tb_error_set(err, TB_ERR_DB, "step_trace_time: inserting: %s", sqlite3_errmsg(m->db));
    return TB_OK;
}

static int cmp_start(const void *a, const void *b, const srange *r)
{
    const srange *x = &r[*(const size_t *)a], *y = &r[*(const size_t *)b];
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Insertion sort of step indices by (START, id): steps come nearly sorted (by host start). */
static void order_steps(size_t *order, size_t n, const srange *r)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = 1; i < n; i++) {
        size_t k = order[i], j = i;
        while (j > 0 && cmp_start(&order[j - 1], &k, r) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
}

/* The rows of one device. */
static tb_status device_rows(const load *L, const dev *d, sqlite3_stmt *ins, tb_error *err)
{
    const int policy = L->policy;
    tb_status rc = TB_OK;
    lanes own = {0};
    scratch x = {IVEC_INIT, IVEC_INIT};
    srange *r = NULL;
    size_t *order = NULL;
    run *runs = NULL;
    int by_lanes = policy == METRICS_TORCH_NPU_TEXT || policy == METRICS_MSPROF_ANALYZE;
    int need_lanes = by_lanes ? !d->has_lanes : policy == METRICS_MINDSPORE;
    if (need_lanes && make_lanes(d, &own))
        goto oom;
    const ivec *lv = by_lanes && d->has_lanes ? d->lane : own.v;
    int64_t begin = d->begin, end = d->end;
    if (!d->has_span && by_lanes) {
        /* a device known only by its input lanes */
        begin = INT64_MAX;
        end = INT64_MIN;
        for (int k = 0; k < N_LANES; k++)
            for (size_t i = 0; i < lv[k].n; i++) {
                begin = lv[k].v[i].s < begin ? lv[k].v[i].s : begin;
                end = lv[k].v[i].e > end ? lv[k].v[i].e : end;
            }
        if (begin > end)
            begin = end = 0;
    }
    size_t ns = policy == METRICS_MSPROF_ANALYZE ? 0 : d->nsteps;
    if (ns == 0) {
        /* the whole profile as one step */
        strow o = {.start = begin, .end = end};
        run all_c = {0, d->comp.n}, all_m = {0, d->comm.n}, all_r = {0, d->recv.n};
        if (by_lanes) {
            run lr[N_LANES];
            for (int k = 0; k < N_LANES; k++)
                lr[k] = (run){0, lv[k].n};
            step_from_lanes(policy, d, lv, lr, all_r, &o);
        } else if (step_from_ops(policy, d, all_c, all_m, all_r, &own.v[L_FREE], &x, &o)) {
            goto oom;
        }
        rc = insert_row(ins, d, &o, policy, L->m, err);
        goto done;
    }
    r = malloc(ns * sizeof *r);
    order = malloc(ns * sizeof *order);
    runs = malloc((N_LANES + 3) * ns * sizeof *runs);
    if (!r || !order || !runs)
        goto oom;
    for (size_t k = 0; k < ns; k++) {
        const steps_step *h = &L->st.v[d->step0 + k];
        r[k].id = h->id;
        r[k].fwk = h->start;
        steps_range(h, &d->span[k], &r[k].start, &r[k].end);
    }
    order_steps(order, ns, r);
    int closed = policy == METRICS_MINDSPORE;
    run *rc_ = runs, *rm = runs + ns, *rr = runs + 2 * ns, *rl = runs + 3 * ns;
    claim(&d->comp, r, order, ns, closed, rc_);
    claim(&d->comm, r, order, ns, closed, rm);
    claim(&d->recv, r, order, ns, closed, rr);
    if (by_lanes)
        for (int k = 0; k < N_LANES; k++)
            claim(&lv[k], r, order, ns, 0, rl + (size_t)k * ns);
    for (size_t k = 0; k < ns && !rc; k++) {
        strow o = {.step = r[k].id, .has_step = 1, .has_fwk = 1, .start = r[k].start, .end = r[k].end,
                   .fwk = r[k].fwk};
        if (by_lanes) {
            run lr[N_LANES];
            for (int j = 0; j < N_LANES; j++)
                lr[j] = rl[(size_t)j * ns + k];
            step_from_lanes(policy, d, lv, lr, rr[k], &o);
        } else if (step_from_ops(policy, d, rc_[k], rm[k], rr[k], &own.v[L_FREE], &x, &o)) {
            goto oom;
        }
        rc = insert_row(ins, d, &o, policy, L->m, err);
    }
    goto done;
oom:
    rc = nomem(err, "step_trace_time");
done:
    lanes_free(&own);
    ivec_free(&x.c);
    ivec_free(&x.m);
    free(r);
    free(order);
    free(runs);
    return rc;
}

/* Runs sql (several statements) trusted; the savepoint helpers below wrap the inserts. */
static tb_status begin_insert(const metric_ctx *m, const char *what, tb_error *err)
{
    return metrics_exec(m, what, "SAVEPOINT tb_m_steptrace", err);
}

static tb_status end_insert(const metric_ctx *m, const char *what, tb_status rc, tb_error *err)
{
    if (rc) {
        sqlite3_exec(m->db, "ROLLBACK TO tb_m_steptrace; RELEASE tb_m_steptrace", NULL, NULL, NULL);
        return rc;
    }
    return metrics_exec(m, what, "RELEASE tb_m_steptrace", err);
}

/* 1 when the load has a device of the rank (metrics_note_rankless). */
static int has_rank(const void *cx, int64_t rank)
{
    const load *L = cx;
    for (size_t i = 0; i < L->nd; i++)
        if (L->d[i].rank == rank)
            return 1;
    return 0;
}

static tb_status build_step_trace_time(const metric_ctx *m, tb_error *err)
{
    int policy = metrics_opts(m)->policy;
    tb_status rc = metrics_exec(m, "step_trace_time",
        "DROP TABLE IF EXISTS temp.step_trace_time;"
        "CREATE TEMP TABLE step_trace_time(rankId INTEGER, deviceId INTEGER, step INTEGER, "
        "  startNs INTEGER, endNs INTEGER, fwkStartNs INTEGER, computing INTEGER, "
        "  communicationNotOverlapped INTEGER, overlapped INTEGER, communication INTEGER, free INTEGER, "
        "  stage INTEGER, bubble INTEGER, communicationNotOverlappedExcludeReceive INTEGER, "
        "  preparing INTEGER, policy TEXT);", err);
    if (rc)
        return rc;
    load L;
    int by_lanes = policy == METRICS_TORCH_NPU_TEXT || policy == METRICS_MSPROF_ANALYZE;
    if ((rc = load_all(&L, m, policy, policy != METRICS_MSPROF_ANALYZE, by_lanes, err)))
        goto done;
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(m->db, "INSERT INTO temp.step_trace_time VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1,
                           &ins, NULL) != SQLITE_OK) {
        rc = tb_error_set(err, TB_ERR_DB, "step_trace_time: %s", sqlite3_errmsg(m->db));
        goto done;
    }
    if (!(rc = begin_insert(m, "step_trace_time", err))) {
        for (size_t i = 0; i < L.nd && !rc; i++)
            rc = device_rows(&L, &L.d[i], ins, err);
        rc = end_insert(m, "step_trace_time", rc, err);
    }
    sqlite3_finalize(ins);
    if (!rc)
        metrics_note_rankless(m, "step_trace_time", has_rank, &L);
done:
    load_free(&L);
    return rc;
}

/* ---- overlap_lanes ------------------------------------------------------------------ */

static tb_status build_overlap_lanes(const metric_ctx *m, tb_error *err)
{
    tb_status rc = metrics_exec(m, "overlap_lanes",
        "DROP TABLE IF EXISTS temp.overlap_lanes;"
        "CREATE TEMP TABLE overlap_lanes(rankId INTEGER, deviceId INTEGER, type TEXT, "
        "  startNs INTEGER, endNs INTEGER);", err);
    if (rc)
        return rc;
    load L;
    sqlite3_stmt *ins = NULL;
    lanes l = {0};
    if ((rc = load_all(&L, m, METRICS_TORCH_NPU, 0, 0, err)))
        goto done;
    if (sqlite3_prepare_v2(m->db, "INSERT INTO temp.overlap_lanes VALUES (?,?,?,?,?)", -1, &ins, NULL) != SQLITE_OK) {
        rc = tb_error_set(err, TB_ERR_DB, "overlap_lanes: %s", sqlite3_errmsg(m->db));
        goto done;
    }
    if ((rc = begin_insert(m, "overlap_lanes", err)))
        goto done;
    for (size_t i = 0; i < L.nd && !rc; i++) {
        const dev *d = &L.d[i];
        if (make_lanes(d, &l)) {
            rc = nomem(err, "overlap_lanes");
            break;
        }
        for (int k = 0; k < N_LANES && !rc; k++)
            for (size_t j = 0; j < l.v[k].n && !rc; j++) {
                sqlite3_reset(ins);
                sqlite3_bind_int64(ins, 1, d->rank);
                sqlite3_bind_int64(ins, 2, d->device);
                sqlite3_bind_text(ins, 3, lane_names[k], -1, SQLITE_STATIC);
                sqlite3_bind_int64(ins, 4, l.v[k].v[j].s);
                sqlite3_bind_int64(ins, 5, l.v[k].v[j].e);
                if (sqlite3_step(ins) != SQLITE_DONE)
                    rc = tb_error_set(err, TB_ERR_DB, "overlap_lanes: inserting: %s", sqlite3_errmsg(m->db));
            }
    }
    rc = end_insert(m, "overlap_lanes", rc, err);
    if (!rc)
        metrics_note_rankless(m, "overlap_lanes", has_rank, &L);
done:
    sqlite3_finalize(ins);
    lanes_free(&l);
    load_free(&L);
    return rc;
}

/* ---- overlap_consistency ------------------------------------------------------------ */

/*
 * Per device that has input lanes, the four lanes' total lengths given and
 * computed: diffNs = computed - given, diffPct = 100 * diffNs / given (0.0
 * when both are 0, NULL when only the given one is). Reads the `overlap`
 * view and overlap_lanes unqualified, so a window applies to both.
 */
static tb_status build_overlap_consistency(const metric_ctx *m, tb_error *err)
{
    return metrics_exec(m, "overlap_consistency",
        "DROP TABLE IF EXISTS temp.overlap_consistency;"
        "CREATE TEMP TABLE overlap_consistency(rankId INTEGER, deviceId INTEGER, type TEXT, "
        "  givenNs INTEGER, computedNs INTEGER, diffNs INTEGER, diffPct REAL);"
        "INSERT INTO temp.overlap_consistency "
        "WITH t(ord, type, enum) AS (VALUES (0, 'Computing', 'COMPUTE'), (1, 'Communication', 'COMMUNICATION'), "
        "       (2, 'Communication(Not Overlapped)', 'COMM_NOT_OVERLAP_COMP'), (3, 'Free', 'FREE')), "
        "  d AS (SELECT DISTINCT rankId, deviceId FROM overlap), "
        "  g AS (SELECT rankId, deviceId, type, sum(endNs - startNs) AS ns FROM overlap GROUP BY 1, 2, 3), "
        "  c AS (SELECT rankId, deviceId, type, sum(endNs - startNs) AS ns FROM overlap_lanes GROUP BY 1, 2, 3), "
        "  r AS (SELECT d.rankId, d.deviceId, t.ord, t.type, coalesce(g.ns, 0) AS given, coalesce(c.ns, 0) AS computed "
        "        FROM d CROSS JOIN t "
        "        LEFT JOIN g ON g.rankId IS d.rankId AND g.deviceId IS d.deviceId AND g.type = t.enum "
        "        LEFT JOIN c ON c.rankId IS d.rankId AND c.deviceId IS d.deviceId AND c.type = t.type) "
        "SELECT rankId, deviceId, type, given, computed, computed - given, "
        "       CASE WHEN given <> 0 THEN 100.0 * (computed - given) / given "
        "            WHEN computed = 0 THEN 0.0 END "
        "FROM r ORDER BY rankId, deviceId, ord;", err);
}

const metric_table metrics_steptrace[] = {
    {"step_trace_time", {NULL}, build_step_trace_time,
     "per device and step: computing, communication (not overlapped), free, stage, bubble, preparing (ns)", "rankId", {NULL}},
    {"overlap_lanes", {NULL}, build_overlap_lanes,
     "per device: the Computing, Communication, Communication(Not Overlapped) and Free lanes as intervals", "rankId", {NULL}},
    {"overlap_consistency", {"overlap_lanes", NULL}, build_overlap_consistency,
     "the input's Overlap Analysis lanes against the computed ones: total length per lane", "rankId", {NULL}},
};
const size_t metrics_steptrace_n = sizeof metrics_steptrace / sizeof metrics_steptrace[0];
