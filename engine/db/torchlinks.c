/* SPDX-License-Identifier: MIT */
/*
 * torchlinks.c - a torch_npu timeline rank's PyTorch calls linked to their
 * device tasks through its async_npu flows (see torchlinks.h), and the
 * links kept in a DB as torch_npu's DB holds them.
 *
 * torch_npu's DB links each PyTorch call to the tasks it launched:
 * PYTORCH_API.connectionId is an id of CONNECTION_IDS, whose rows give the
 * connection ids of those tasks. A timeline (trace_view.json) has the same
 * links as its async_npu flows (torch_to_npu), written after the calls they
 * start from. The links are made from the stored (window-free) rows, for
 * every rank that has async_npu flows and no CONNECTION_IDS rows:
 *   - a flow's start gives the PyTorch call: the shortest PYTORCH_API slice
 *     of the flow's thread that encloses it (ends included; the first read
 *     among equally short ones); its finish gives the task: the
 *     latest-starting TASK of the flow's process that encloses it (the first
 *     read among those starting together);
 *   - every call without a connectionId that reaches one or more tasks with
 *     a connection id gets an id, numbered per rank from 0 in the order of
 *     the calls' starts (then as read), with one link row (id, connectionId,
 *     rankId) per distinct connection id of its tasks.
 *
 * The matching reads the flows, then once each, the calls of the flows'
 * threads and the tasks of their processes (their rank, key, times and
 * rowid only), and sweeps each thread or process in time order: the spans
 * begun by a flow end's time sit in a heap whose top is the best one (for
 * a call the shortest, for a task the latest start, then the first read);
 * those that ended before it are dropped as they reach the top.
 */
#include <stdlib.h>

#include "db/ask.h"
#include "db/torchlinks.h"
#include "util/vec.h"

/* A flow's ends and what they reach: the call (index into the calls,
 * NONE: none) and the task's connection id. */
typedef struct tl_flow {
    int64_t rank, thread, from, proc, to;
    size_t call, task;
} tl_flow;

/* A slice a flow end may fall in: a call of a flow's thread (key: its
 * globalTid, name) or a task of a flow's process (key: its globalPid). */
typedef struct tl_span {
    int64_t rank, key, start, end, row, conn, name;
    int has_conn;
} tl_span;

#define NONE ((size_t)-1)

typedef struct tl_arr {
    tl_span *v;
    size_t n, cap;
} tl_arr;

/* A (rank, key) pair, for the threads and processes the flows name. */
typedef struct tl_key {
    int64_t rank, key;
} tl_key;

static int cmp_key(const void *a, const void *b)
{
    const tl_key *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_span(const void *a, const void *b)
{
    const tl_span *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* The flows' ends, sorted by (rank, key, time): the starts or the finishes. */
typedef struct tl_end {
    int64_t rank, key, t;
    size_t flow;
} tl_end;

static int cmp_end(const void *a, const void *b)
{
    const tl_end *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->flow < y->flow ? -1 : x->flow > y->flow;
}
/* The async_npu flows (category cat) with both ends on integer pids and
 * tids, of ranks without CONNECTION_IDS rows. 0, or -1 (SQLite's error). */
static int read_flows(sqlite3 *db, int64_t cat, tl_flow **out, size_t *n)
{
    static const char sql[] =
        "SELECT f.rankId, f.fromPid, f.fromTid, f.fromNs, f.toPid, f.toNs FROM main.TB_FLOW f "
        "WHERE f.cat = ?1 AND f.rankId IS NOT NULL AND f.fromNs IS NOT NULL AND f.toNs IS NOT NULL "
        "AND f.rankId NOT IN (SELECT rankId FROM main.CONNECTION_IDS WHERE rankId IS NOT NULL)";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(q, 1, cat);
    size_t cap = 0;
    int s, oom = 0;
    while (!oom && (s = sqlite3_step(q)) == SQLITE_ROW) {
        int ints = 1;
        for (int c = 0; c < 6; c++)
            ints &= sqlite3_column_type(q, c) == SQLITE_INTEGER;
        if (!ints)
            continue;
        uint64_t pid = (uint64_t)sqlite3_column_int64(q, 1), tid = (uint64_t)sqlite3_column_int64(q, 2);
        tl_flow f = {.rank = sqlite3_column_int64(q, 0), .thread = (int64_t)(pid << 32 | (tid & 0xffffffffu)),
                     .from = sqlite3_column_int64(q, 3), .proc = sqlite3_column_int64(q, 4),
                     .to = sqlite3_column_int64(q, 5), .call = NONE, .task = NONE};
        oom = VEC_PUSH(*out, *n, cap, f);
    }
    sqlite3_finalize(q);
    if (oom)
        return -2;
    return s == SQLITE_DONE || s == SQLITE_ROW ? 0 : -1;
}

/* The flows' ends (starts when calls, else finishes), sorted; and the
 * distinct (rank, key) pairs they name, sorted. NULL on out of memory. */
static tl_end *flow_ends(const tl_flow *f, size_t n, int calls, tl_key **keys, size_t *nkeys)
{
    tl_end *e = malloc((n ? n : 1) * sizeof *e);
    *keys = malloc((n ? n : 1) * sizeof **keys);
    if (!e || !*keys) {
        free(e);
        free(*keys);
        *keys = NULL;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        e[i] = calls ? (tl_end){f[i].rank, f[i].thread, f[i].from, i} : (tl_end){f[i].rank, f[i].proc, f[i].to, i};
    if (n)
        qsort(e, n, sizeof *e, cmp_end);
    *nkeys = 0;
    for (size_t i = 0; i < n; i++)
        if (!*nkeys || (*keys)[*nkeys - 1].rank != e[i].rank || (*keys)[*nkeys - 1].key != e[i].key)
            (*keys)[(*nkeys)++] = (tl_key){e[i].rank, e[i].key};
    return e;
}

/* The rows of sql (rankId, key, startNs, endNs, rowid, connectionId, name)
 * whose (rank, key) is one of keys, sorted by (rank, key, start, rowid).
 * 0, -1 (SQLite's error) or -2 (out of memory). */
static int read_spans(sqlite3 *db, const char *sql, const tl_key *keys, size_t nkeys, tl_arr *a)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return -1;
    int s, oom = 0;
    while (!oom && (s = sqlite3_step(q)) == SQLITE_ROW) {
        if (sqlite3_column_type(q, 1) != SQLITE_INTEGER)
            continue;
        tl_key k = {sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1)};
        if (!nkeys || !bsearch(&k, keys, nkeys, sizeof k, cmp_key))
            continue;
        tl_span x = {.rank = k.rank, .key = k.key, .start = sqlite3_column_int64(q, 2),
                     .end = sqlite3_column_int64(q, 3), .row = sqlite3_column_int64(q, 4),
                     .has_conn = sqlite3_column_type(q, 5) != SQLITE_NULL, .conn = sqlite3_column_int64(q, 5),
                     .name = sqlite3_column_int64(q, 6)};
        oom = VEC_PUSH(a->v, a->n, a->cap, x);
    }
    sqlite3_finalize(q);
    if (oom)
        return -2;
    if (s != SQLITE_DONE && s != SQLITE_ROW)
        return -1;
    if (a->n)
        qsort(a->v, a->n, sizeof *a->v, cmp_span);
    return 0;
}

/* Which of two spans holding a flow's end it falls in: for a call the
 * shorter (the innermost), for a task the later start; then the first read. */
static int better(const tl_span *x, const tl_span *y, int calls)
{
    if (calls) {
        int64_t dx = x->end - x->start, dy = y->end - y->start;
        if (dx != dy)
            return dx < dy;
    } else if (x->start != y->start) {
        return x->start > y->start;
    }
    return x->row < y->row;
}

static void heap_push(size_t *h, size_t *n, size_t v, const tl_span *sp, int calls)
{
    size_t i = (*n)++;
    h[i] = v;
    while (i && better(&sp[h[i]], &sp[h[(i - 1) / 2]], calls)) {
        size_t p = (i - 1) / 2, t = h[p];
        h[p] = h[i];
        h[i] = t;
        i = p;
    }
}

static void heap_pop(size_t *h, size_t *n, const tl_span *sp, int calls)
{
    h[0] = h[--*n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, b = i;
        if (l < *n && better(&sp[h[l]], &sp[h[b]], calls))
            b = l;
        if (r < *n && better(&sp[h[r]], &sp[h[b]], calls))
            b = r;
        if (b == i)
            break;
        size_t t = h[b];
        h[b] = h[i];
        h[i] = t;
        i = b;
    }
}

/* Each flow end (e, sorted) into the best span (sp, sorted) of its rank
 * and key that holds it, ends included: one sweep, the spans begun by then
 * in a heap whose top is the best, those ended before popped as they come
 * up. Sets the flows' call or task. -2 on out of memory. */
static int sweep(const tl_end *e, size_t ne, const tl_arr *sp, int calls, tl_flow *f)
{
    size_t *h = malloc((sp->n ? sp->n : 1) * sizeof *h), nh = 0, j = 0;
    if (!h)
        return -2;
    for (size_t i = 0; i < ne; i++) {
        if (i && (e[i].rank != e[i - 1].rank || e[i].key != e[i - 1].key))
            nh = 0;
        /* skip spans of earlier keys, then push those begun by e[i].t */
        while (j < sp->n && cmp_key(&(tl_key){sp->v[j].rank, sp->v[j].key}, &(tl_key){e[i].rank, e[i].key}) < 0)
            j++;
        for (; j < sp->n && sp->v[j].rank == e[i].rank && sp->v[j].key == e[i].key && sp->v[j].start <= e[i].t; j++)
            heap_push(h, &nh, j, sp->v, calls);
        while (nh && sp->v[h[0]].end < e[i].t)
            heap_pop(h, &nh, sp->v, calls);
        if (nh)
            *(calls ? &f[e[i].flow].call : &f[e[i].flow].task) = h[0];
    }
    free(h);
    return 0;
}

/* A linked call (index into the calls) or a link row, for the ids. */
typedef struct tl_link {
    int64_t rank, start, row, id, conn;
    size_t call;
} tl_link;

static int cmp_link_call(const void *a, const void *b)
{
    const tl_link *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    return x->conn < y->conn ? -1 : x->conn > y->conn;
}

/* The flows' ends matched to the calls or tasks of their threads or
 * processes (sql: read_spans). 0, -1 or -2 (read_spans). */
static int match(sqlite3 *db, tl_flow *f, size_t n, int calls, const char *sql, tl_arr *sp)
{
    tl_key *keys = NULL;
    size_t nkeys = 0;
    tl_end *e = flow_ends(f, n, calls, &keys, &nkeys);
    int rc = e ? read_spans(db, sql, keys, nkeys, sp) : -2;
    if (!rc)
        rc = sweep(e, n, sp, calls, f);
    free(e);
    free(keys);
    return rc;
}

/* The links, from l (a row per (call, task connection id), sorted by
 * call): the calls with their ids, per rank from 0, and the distinct link
 * rows. -2 on out of memory. */
static int number_links(const tl_link *l, size_t n, const tl_arr *calls, db_torch_links *out)
{
    size_t capc = 0, capi = 0;
    int64_t id = -1;
    for (size_t i = 0; i < n; i++) {
        const tl_span *c = &calls->v[l[i].call];
        int new_call = !i || l[i].call != l[i - 1].call;
        if (!i || l[i].rank != l[i - 1].rank)
            id = -1;
        if (new_call) {
            db_tl_call x = {c->rank, c->row, c->key, c->start, c->end, c->name, ++id};
            if (VEC_PUSH(out->calls, out->ncalls, capc, x))
                return -2;
        } else if (l[i].conn == l[i - 1].conn) {
            continue;
        }
        if (VEC_PUSH(out->ids, out->nids, capi, ((db_tl_id){id, l[i].conn, c->rank})))
            return -2;
    }
    return 0;
}

/* The links of the flows of category cat (see the top of the file). */
static int link_flows(sqlite3 *db, int64_t cat, db_torch_links *out)
{
    tl_flow *f = NULL;
    size_t n = 0, nl = 0, capl = 0;
    tl_arr calls = {0}, tasks = {0};
    tl_link *l = NULL;
    int rc = read_flows(db, cat, &f, &n);
    if (!rc && n)
        rc = match(db, f, n, 1,
                   "SELECT rankId, globalTid, startNs, endNs, rowid, connectionId, name FROM main.PYTORCH_API "
                   "WHERE rankId IS NOT NULL AND startNs IS NOT NULL AND endNs IS NOT NULL",
                   &calls);
    if (!rc && n)
        rc = match(db, f, n, 0,
                   "SELECT rankId, globalPid, startNs, endNs, rowid, connectionId, NULL FROM main.TASK "
                   "WHERE rankId IS NOT NULL AND startNs IS NOT NULL AND endNs IS NOT NULL",
                   &tasks);
    for (size_t i = 0; i < n && !rc; i++) {
        if (f[i].call == NONE || f[i].task == NONE)
            continue;
        const tl_span *c = &calls.v[f[i].call], *t = &tasks.v[f[i].task];
        if (c->has_conn || !t->has_conn)
            continue;
        tl_link x = {.rank = c->rank, .start = c->start, .row = c->row, .conn = t->conn, .call = f[i].call};
        rc = VEC_PUSH(l, nl, capl, x) ? -2 : 0;
    }
    if (!rc && nl) {
        qsort(l, nl, sizeof *l, cmp_link_call);
        rc = number_links(l, nl, &calls, out);
    }
    free(f);
    free(calls.v);
    free(tasks.v);
    free(l);
    return rc;
}

int db_torch_links_make(sqlite3 *db, db_torch_links *l)
{
    *l = (db_torch_links){0};
    int64_t cat = 0;
    int has = db_one_int(db, "SELECT id FROM main.STRING_IDS WHERE value = 'async_npu'", &cat);
    return has > 0 ? link_flows(db, cat, l) : has;
}

static int cmp_call_row(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Each linked call's id into its PYTORCH_API row, in rowid order. */
static int store_calls(sqlite3 *db, const db_torch_links *l)
{
    int64_t(*rows)[2] = malloc((l->ncalls ? l->ncalls : 1) * sizeof *rows);
    if (!rows)
        return -2;
    for (size_t i = 0; i < l->ncalls; i++) {
        rows[i][0] = l->calls[i].row;
        rows[i][1] = l->calls[i].id;
    }
    if (l->ncalls)
        qsort(rows, l->ncalls, sizeof *rows, cmp_call_row);
    sqlite3_stmt *u = NULL;
    int rc = sqlite3_prepare_v2(db, "UPDATE main.PYTORCH_API SET connectionId = ?1 WHERE rowid = ?2", -1, &u,
                                NULL) == SQLITE_OK ? 0 : -1;
    for (size_t i = 0; i < l->ncalls && !rc; i++) {
        sqlite3_bind_int64(u, 1, rows[i][1]);
        sqlite3_bind_int64(u, 2, rows[i][0]);
        rc = sqlite3_step(u) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(u);
    }
    sqlite3_finalize(u);
    free(rows);
    return rc;
}

int db_torch_links_store(sqlite3 *db, const db_torch_links *l)
{
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT INTO main.CONNECTION_IDS (id, connectionId, rankId) VALUES (?, ?, ?)",
                                -1, &q, NULL) == SQLITE_OK ? 0 : -1;
    for (size_t i = 0; i < l->nids && !rc; i++) {
        sqlite3_bind_int64(q, 1, l->ids[i].id);
        sqlite3_bind_int64(q, 2, l->ids[i].conn);
        sqlite3_bind_int64(q, 3, l->ids[i].rank);
        rc = sqlite3_step(q) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return rc ? rc : store_calls(db, l);
}

void db_torch_links_free(db_torch_links *l)
{
    free(l->calls);
    free(l->ids);
    *l = (db_torch_links){0};
}
