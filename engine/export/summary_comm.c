/* SPDX-License-Identifier: MIT */
/*
 * summary_comm.c - the text of a torch_npu rank's communication.json and
 * communication_matrix.json, made back from the tables its own files of
 * them were read into (TB_COMM_OP_STAT, _BANDWIDTH, _SIZE_DIST,
 * TB_COMM_MATRIX), in torch_npu's layout: steps, then op kinds, then ops
 * (or links), with torch_npu's Total Op Info sums. summary.c writes it.
 */
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/summary_comm.h"
#include "output/output.h"
#include "tracebook/db.h"

typedef struct jbuf {
    char *p;
    size_t n, cap;
    int failed;
} jbuf;

static void jb_put(jbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *m = realloc(b->p, cap);
        if (!m) {
            b->failed = 1;
            return;
        }
        b->p = m;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void jb_str(jbuf *b, const char *s)
{
    jb_put(b, s, strlen(s));
}

static void jb_put_cb(void *ctx, const char *p, size_t n)
{
    jb_put(ctx, p, n);
}

/* A JSON string (s may be NULL: ""). */
static void jb_quoted(jbuf *b, const char *s)
{
    json_string_out(s ? s : "", s ? strlen(s) : 0, jb_put_cb, b);
}

static void jb_indent(jbuf *b, int level)
{
    jb_put(b, "\n", 1);
    for (int i = 0; i < level; i++)
        jb_put(b, "    ", 4);
}

/* `"key": ` at level, after a comma unless first. */
static void jb_key(jbuf *b, int level, int *first, const char *key)
{
    if (!*first)
        jb_put(b, ",", 1);
    *first = 0;
    jb_indent(b, level);
    jb_quoted(b, key);
    jb_put(b, ": ", 2);
}

/* Column col of q as a JSON number: ns at scale (ms: 6, us: 3) written exactly, else the stored value. */
static void jb_num(jbuf *b, sqlite3_stmt *q, int col, int scale)
{
    char num[NUMFMT_MAX];
    size_t n;
    switch (sqlite3_column_type(q, col)) {
    case SQLITE_INTEGER: n = numfmt_scaled(sqlite3_column_int64(q, col), scale, num); break;
    case SQLITE_FLOAT:
        n = numfmt_double(scale ? sqlite3_column_double(q, col) / (scale == 3 ? 1e3 : 1e6)
                                : sqlite3_column_double(q, col), num);
        break;
    case SQLITE_TEXT: jb_quoted(b, (const char *)sqlite3_column_text(q, col)); return;
    default: jb_str(b, "null"); return;
    }
    if (!n)
        jb_str(b, "null");
    else
        jb_put(b, num, n);
}

/* One member of an entry: its key, q's column, jb_num's scale, or a quoted text. */
typedef struct jfield {
    const char *key;
    int col, scale, quoted;
} jfield;

/* The members f[0..n) of q's row at level, each after a comma unless *first. */
static void jb_fields(jbuf *b, int level, int *first, sqlite3_stmt *q, const jfield *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        jb_key(b, level, first, f[i].key);
        if (f[i].quoted)
            jb_quoted(b, (const char *)sqlite3_column_text(q, f[i].col));
        else
            jb_num(b, q, f[i].col, f[i].scale);
    }
}

#define N_FIELDS(a) (sizeof(a) / sizeof(a)[0])

/* Opens/closes the step, kind and op levels as the ordered rows go by. */
typedef struct nest {
    char step[256], kind[32];
    int open, first_step, first_kind, first_op;
} nest;

static void nest_enter(jbuf *b, nest *t, const char *step, const char *kind, const char *op_key)
{
    if (!t->open || strcmp(t->step, step)) {
        if (t->open)
            jb_str(b, "\n        }\n    }");
        jb_key(b, 1, &t->first_step, step);
        jb_str(b, "{");
        snprintf(t->step, sizeof t->step, "%s", step);
        t->kind[0] = 0;
        t->first_kind = 1;
        t->open = 1;
    }
    if (strcmp(t->kind, kind)) {
        if (t->kind[0])
            jb_str(b, "\n        }");
        jb_key(b, 2, &t->first_kind, kind);
        jb_str(b, "{");
        snprintf(t->kind, sizeof t->kind, "%s", kind);
        t->first_op = 1;
    }
    jb_key(b, 3, &t->first_op, op_key);
}

/* The ordering of a rank's rows of table by step, kind (their first appearance), then as read. */
#define COMM_ORDER(T)                                                                                        \
    " ORDER BY (SELECT min(x.rowid) FROM " T " x WHERE x.rankId = o.rankId AND x.cluster = 0 AND x.step = o.step)," \
    " (SELECT min(x.rowid) FROM " T " x WHERE x.rankId = o.rankId AND x.cluster = 0 AND x.step = o.step"     \
    "  AND x.opKind = o.opKind), o.rowid"

/* 1 when step (as written, "step<N>") is in the window's steps (step mode), or there is no window. */
static int step_wanted(const tb_window *w, const char *step)
{
    if (!w->set)
        return 1;
    long long k;
    char tail;
    if (!step || sscanf(step, "step%lld%c", &k, &tail) != 1)
        return 0;
    int64_t n = w->iteration_count > 0 ? w->iteration_count : 1;
    return k >= w->iteration_id && k < w->iteration_id + n;
}

/* The rows of q (size key, packets, transit ms: prepared and bound) as the
 * members of a Size Distribution object, then the object and its
 * transport's closed. */
static void size_dist(jbuf *b, sqlite3_stmt *q)
{
    int m = 1;
    while (sqlite3_step(q) == SQLITE_ROW) {
        jb_key(b, 7, &m, (const char *)sqlite3_column_text(q, 0));
        jb_str(b, "[");
        jb_num(b, q, 1, 0);
        jb_str(b, ", ");
        jb_num(b, q, 2, 0);
        jb_str(b, "]");
    }
    if (!m)
        jb_indent(b, 6);
    jb_str(b, "}");
    jb_indent(b, 5);
    jb_str(b, "}");
}

/* round(x, 4), as torch_npu rounds its ratios and bandwidths */
static double round4(double x)
{
    return floor(x * 10000 + 0.5) / 10000;
}

static void jb_double(jbuf *b, double d)
{
    char num[NUMFMT_MAX];
    size_t n = numfmt_double(d, num);
    if (n)
        jb_put(b, num, n);
    else
        jb_str(b, "null");
}

/* Binds a rank, step and op kind to parameters 1, 2 and 3 of q. */
static void bind_step(sqlite3_stmt *q, int64_t rank, const char *step, const char *kind)
{
    sqlite3_bind_int64(q, 1, rank);
    sqlite3_bind_text(q, 2, step, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q, 3, kind, -1, SQLITE_TRANSIENT);
}

/* The matrix's totals of a step and kind: one entry a link; *g: no entry yet. */
static void total_links(jbuf *b, sqlite3 *db, int64_t rank, const char *step, const char *kind, int *g)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT srcRank || '-' || dstRank, min(transportType), sum(transitTimeMs),"
                           " sum(transitSizeMB) FROM TB_COMM_MATRIX WHERE rankId = ?1 AND cluster = 0 AND step = ?2"
                           " AND opKind = ?3 AND srcRank IS NOT NULL GROUP BY srcRank, dstRank ORDER BY min(rowid)",
                           -1, &q, NULL) == SQLITE_OK) {
        bind_step(q, rank, step, kind);
        while (sqlite3_step(q) == SQLITE_ROW) {
            static const jfield sums[] = {
                {"Transport Type", 1, 0, 1}, {"Transit Time(ms)", 2, 0, 0}, {"Transit Size(MB)", 3, 0, 0}};
            jb_key(b, 4, g, (const char *)sqlite3_column_text(q, 0));
            jb_str(b, "{");
            int h = 1;
            jb_fields(b, 5, &h, q, sums, N_FIELDS(sums));
            jb_key(b, 5, &h, "Bandwidth(GB/s)");
            double t = sqlite3_column_double(q, 2);
            jb_double(b, t > 0 ? round4(sqlite3_column_double(q, 3) / t) : 0);
            jb_indent(b, 4);
            jb_str(b, "}");
        }
    }
    sqlite3_finalize(q);
}

/* The members of a step and kind's total "Communication Time Info". */
static void total_times(jbuf *b, sqlite3 *db, int64_t rank, const char *step, const char *kind)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT sum(elapseNs), sum(transitNs), sum(waitNs), sum(synchronizationNs), sum(idleNs)"
                           " FROM TB_COMM_OP_STAT WHERE rankId = ?1 AND cluster = 0 AND step = ?2 AND opKind = ?3",
                           -1, &q, NULL) == SQLITE_OK) {
        bind_step(q, rank, step, kind);
        if (sqlite3_step(q) == SQLITE_ROW) {
            static const jfield sums[] = {{"Elapse Time(ms)", 0, 6, 0}, {"Transit Time(ms)", 1, 6, 0},
                                          {"Wait Time(ms)", 2, 6, 0}, {"Synchronization Time(ms)", 3, 6, 0},
                                          {"Idle Time(ms)", 4, 6, 0}};
            int h = 1;
            jb_fields(b, 5, &h, q, sums, N_FIELDS(sums));
            double tr = sqlite3_column_double(q, 1), w = sqlite3_column_double(q, 2), sy = sqlite3_column_double(q, 3);
            jb_key(b, 5, &h, "Wait Time Ratio");
            jb_double(b, w + tr > 0 ? round4(w / (w + tr)) : 0);
            jb_key(b, 5, &h, "Synchronization Time Ratio");
            jb_double(b, sy + tr > 0 ? round4(sy / (sy + tr)) : 0);
        }
    }
    sqlite3_finalize(q);
}

/* A step and kind's total "Communication Bandwidth Info": by transport, with sizes. */
static void total_bandwidth(jbuf *b, sqlite3 *db, int64_t rank, const char *step, const char *kind)
{
    sqlite3_stmt *q = NULL, *d = NULL;
    jb_str(b, "{");
    int h = 1;
    if (sqlite3_prepare_v2(db,
                           "SELECT transport, sum(transitTimeMs), sum(transitSizeMB) FROM TB_COMM_BANDWIDTH"
                           " WHERE rankId = ?1 AND cluster = 0 AND step = ?2 AND opKind = ?3"
                           " GROUP BY transport ORDER BY min(rowid)",
                           -1, &q, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db,
                           "SELECT sizeMB, sum(count), sum(timeMs) FROM TB_COMM_SIZE_DIST WHERE rankId = ?1"
                           " AND cluster = 0 AND step = ?2 AND opKind = ?3 AND transport = ?4"
                           " GROUP BY sizeMB ORDER BY min(rowid)",
                           -1, &d, NULL) == SQLITE_OK) {
        bind_step(q, rank, step, kind);
        while (sqlite3_step(q) == SQLITE_ROW) {
            const char *tr = (const char *)sqlite3_column_text(q, 0);
            jb_key(b, 5, &h, tr ? tr : "");
            jb_str(b, "{");
            static const jfield sums[] = {{"Transit Time(ms)", 1, 0, 0}, {"Transit Size(MB)", 2, 0, 0}};
            int k = 1;
            jb_fields(b, 6, &k, q, sums, N_FIELDS(sums));
            jb_key(b, 6, &k, "Size Distribution");
            jb_str(b, "{");
            sqlite3_reset(d);
            bind_step(d, rank, step, kind);
            sqlite3_bind_text(d, 4, tr ? tr : "", -1, SQLITE_TRANSIENT);
            size_dist(b, d);
        }
    }
    sqlite3_finalize(q);
    sqlite3_finalize(d);
    if (!h)
        jb_indent(b, 4);
    jb_str(b, "}");
}

/* The "Total Op Info" entry of one step and kind, as torch_npu sums it: the
 * ops' times, the ratios of the sums (4 decimals), per transport the transit
 * time and size and the merged size distribution (communication.json); per
 * link the sums and their bandwidth (communication_matrix.json). */
static void comm_total(jbuf *b, sqlite3 *db, int64_t rank, const char *step, const char *kind, int matrix)
{
    int f = 0;
    jb_key(b, 3, &f, "Total Op Info");
    jb_str(b, "{");
    int g = 1;
    if (matrix) {
        total_links(b, db, rank, step, kind, &g);
        if (!g)
            jb_indent(b, 3);
        jb_str(b, "}");
        return;
    }
    jb_key(b, 4, &g, "Communication Time Info");
    jb_str(b, "{");
    total_times(b, db, rank, step, kind);
    jb_indent(b, 4);
    jb_str(b, "}");
    jb_key(b, 4, &g, "Communication Bandwidth Info");
    total_bandwidth(b, db, rank, step, kind);
    jb_indent(b, 3);
    jb_str(b, "}");
}

/* The statements of comm_text: the ops or links of a rank (q), and for an
 * op its bandwidths (bw) and their size distributions (dist). */
typedef struct comm_stmts {
    sqlite3_stmt *q, *bw, *dist;
    int64_t rank;
} comm_stmts;

/* One link of the matrix (q's row), its op entered at the op's first link;
 * last_op keys the op of the link before. */
static void comm_link(jbuf *b, const comm_stmts *s, nest *t, const char *step, const char *kind, const char *op,
                      char *last_op, size_t n, size_t *ops)
{
    sqlite3_stmt *q = s->q;
    /* one op's links in a row: the op is entered once */
    char key[1400];
    snprintf(key, sizeof key, "%s\x1f%s\x1f%s", step, kind, op);
    int first_link = strcmp(key, last_op) != 0;
    if (first_link) {
        if (last_op[0])
            jb_str(b, "\n            }");
        nest_enter(b, t, step, kind, op);
        jb_str(b, "{");
        snprintf(last_op, n, "%s", key);
        (*ops)++;
    }
    int f = first_link;
    jb_key(b, 4, &f, (const char *)sqlite3_column_text(q, 3));
    jb_str(b, "{");
    static const jfield link[] = {{"Transport Type", 4, 0, 1}, {"Transit Size(MB)", 5, 0, 0},
                                  {"Transit Time(ms)", 6, 0, 0}, {"Bandwidth(GB/s)", 7, 0, 0}};
    int g = 1;
    jb_fields(b, 5, &g, q, link, N_FIELDS(link));
    jb_indent(b, 4);
    jb_str(b, "}");
}

/* An op's "Communication Bandwidth Info": its bandwidth by transport, each
 * with its size distribution. */
static void op_bandwidth(jbuf *b, const comm_stmts *s, const char *step, const char *kind)
{
    sqlite3_stmt *q = s->q, *bw = s->bw, *dist = s->dist;
    jb_str(b, "{");
    sqlite3_reset(bw);
    bind_step(bw, s->rank, step, kind);
    sqlite3_bind_value(bw, 4, sqlite3_column_value(q, 11));
    sqlite3_bind_value(bw, 5, sqlite3_column_value(q, 12));
    int h = 1;
    while (sqlite3_step(bw) == SQLITE_ROW) {
        const char *tr = (const char *)sqlite3_column_text(bw, 0);
        jb_key(b, 5, &h, tr ? tr : "");
        jb_str(b, "{");
        static const jfield info[] = {{"Transit Size(MB)", 1, 0, 0}, {"Transit Time(ms)", 2, 0, 0},
                                      {"Bandwidth(GB/s)", 3, 0, 0}, {"Large Packet Ratio", 4, 0, 0}};
        int k = 1;
        jb_fields(b, 6, &k, bw, info, N_FIELDS(info));
        jb_key(b, 6, &k, "Size Distribution");
        jb_str(b, "{");
        sqlite3_reset(dist);
        sqlite3_clear_bindings(dist);
        bind_step(dist, s->rank, step, kind);
        sqlite3_bind_value(dist, 4, sqlite3_column_value(q, 11));
        sqlite3_bind_value(dist, 5, sqlite3_column_value(q, 12));
        sqlite3_bind_text(dist, 6, tr ? tr : "", -1, SQLITE_TRANSIENT);
        size_dist(b, dist);
    }
    if (!h)
        jb_indent(b, 4);
    jb_str(b, "}");
}

/* One op of communication.json (q's row): its times, then its bandwidths. */
static void comm_op(jbuf *b, const comm_stmts *s, nest *t, const char *step, const char *kind, const char *op,
                    size_t *ops)
{
    nest_enter(b, t, step, kind, op);
    (*ops)++;
    jb_str(b, "{");
    int f = 1;
    jb_key(b, 4, &f, "Communication Time Info");
    jb_str(b, "{");
    static const jfield times[] = {
        {"Start Timestamp(us)", 3, 3, 0}, {"Elapse Time(ms)", 4, 6, 0},      {"Transit Time(ms)", 5, 6, 0},
        {"Wait Time(ms)", 6, 6, 0},       {"Synchronization Time(ms)", 7, 6, 0}, {"Idle Time(ms)", 8, 6, 0},
        {"Wait Time Ratio", 9, 0, 0},     {"Synchronization Time Ratio", 10, 0, 0}};
    int g = 1;
    jb_fields(b, 5, &g, s->q, times, N_FIELDS(times));
    jb_indent(b, 4);
    jb_str(b, "}");
    jb_key(b, 4, &f, "Communication Bandwidth Info");
    op_bandwidth(b, s, step, kind);
    jb_indent(b, 3);
    jb_str(b, "}");
}

/* A rank's communication.json (matrix 0) or communication_matrix.json
 * (matrix 1) text into b, the steps of the window only; *ops counts its ops. */
static tb_status comm_text(sqlite3 *db, int64_t rank, const tb_window *w, int matrix, jbuf *b, size_t *ops,
                           tb_error *err)
{
    static const char ops_sql[] =
        "SELECT o.step, o.opKind, n.value || CASE WHEN g.value IS NULL THEN '' ELSE '@' || g.value END,"
        " o.startTimeNs, o.elapseNs, o.transitNs, o.waitNs, o.synchronizationNs, o.idleNs, o.waitRatio,"
        " o.synchronizationRatio, o.opName, o.groupName"
        " FROM TB_COMM_OP_STAT o LEFT JOIN STRING_IDS n ON n.id = o.opName LEFT JOIN STRING_IDS g ON g.id = o.groupName"
        " WHERE o.rankId = ?1 AND o.cluster = 0" COMM_ORDER("TB_COMM_OP_STAT");
    static const char links_sql[] =
        "SELECT o.step, o.opKind, n.value || CASE WHEN g.value IS NULL THEN '' ELSE '@' || g.value END,"
        " o.srcRank || '-' || o.dstRank, o.transportType, o.transitSizeMB, o.transitTimeMs, o.bandwidthGBs"
        " FROM TB_COMM_MATRIX o LEFT JOIN STRING_IDS n ON n.id = o.opName LEFT JOIN STRING_IDS g ON g.id = o.groupName"
        " WHERE o.rankId = ?1 AND o.cluster = 0 AND o.srcRank IS NOT NULL" COMM_ORDER("TB_COMM_MATRIX");
    static const char bw_sql[] =
        "SELECT transport, transitSizeMB, transitTimeMs, bandwidthGBs, largePacketRatio FROM TB_COMM_BANDWIDTH"
        " WHERE rankId = ?1 AND cluster = 0 AND step = ?2 AND opKind = ?3 AND opName = ?4 AND groupName IS ?5"
        " ORDER BY rowid";
    static const char dist_sql[] =
        "SELECT sizeMB, count, timeMs FROM TB_COMM_SIZE_DIST WHERE rankId = ?1 AND cluster = 0 AND step = ?2"
        " AND opKind = ?3 AND opName = ?4 AND groupName IS ?5 AND transport = ?6 ORDER BY rowid";
    comm_stmts s = {.rank = rank};
    tb_status st = TB_OK;
    if (sqlite3_prepare_v2(db, matrix ? links_sql : ops_sql, -1, &s.q, NULL) != SQLITE_OK ||
        (!matrix && (sqlite3_prepare_v2(db, bw_sql, -1, &s.bw, NULL) != SQLITE_OK ||
                     sqlite3_prepare_v2(db, dist_sql, -1, &s.dist, NULL) != SQLITE_OK))) {
        st = tb_error_set(err, TB_ERR_DB, "communication summary: %s", sqlite3_errmsg(db));
        goto done;
    }
    sqlite3_bind_int64(s.q, 1, rank);
    nest t = {.first_step = 1};
    char last_op[1400] = "";
    jb_str(b, "{");
    *ops = 0;
    while (sqlite3_step(s.q) == SQLITE_ROW) {
        const char *step = (const char *)sqlite3_column_text(s.q, 0);
        const char *kind = (const char *)sqlite3_column_text(s.q, 1);
        const char *op = (const char *)sqlite3_column_text(s.q, 2);
        if (!step || !kind || !op || !step_wanted(w, step))
            continue;
        /* a step or kind ends: its ops' totals close it */
        if (t.open && (strcmp(t.step, step) || strcmp(t.kind, kind))) {
            if (matrix && last_op[0])
                jb_str(b, "\n            }");
            last_op[0] = 0;
            comm_total(b, db, rank, t.step, t.kind, matrix);
        }
        if (matrix)
            comm_link(b, &s, &t, step, kind, op, last_op, sizeof last_op, ops);
        else
            comm_op(b, &s, &t, step, kind, op, ops);
    }
    if (matrix && last_op[0])
        jb_str(b, "\n            }");
    if (t.open) {
        comm_total(b, db, rank, t.step, t.kind, matrix);
        jb_str(b, "\n        }\n    }");
    }
    jb_str(b, "\n}\n");
    if (b->failed)
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
done:
    sqlite3_finalize(s.q);
    sqlite3_finalize(s.bw);
    sqlite3_finalize(s.dist);
    return st;
}

tb_status summary_comm_text(sqlite3 *db, int64_t rank, const tb_window *w, int matrix, char **text, size_t *ops,
                            tb_error *err)
{
    jbuf b = {0};
    tb_status st = comm_text(db, rank, w, matrix, &b, ops, err);
    *text = b.p;
    return st;
}
