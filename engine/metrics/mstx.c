/* SPDX-License-Identifier: MIT */
/*
 * mstx.c - the mstx marks and ranges of each rank, as msprof-analyze's
 * mstx_sum recipe lists them before its statistics (docs/metrics.md, "mstx
 * sum").
 *
 * mstx_marks: one row per mark pair or range of a rank, in the recipe's
 * order (pos: the pairs in the order their stop marks come, then the
 * ranges, each by start):
 *   - a pair is a mark (MSTX_EVENTS eventType 3) whose message ends in
 *     "_start" and the next "_stop" mark of the same message on the same
 *     thread (the latest open start when several are); its name is the
 *     message without the suffix, its times the stop's less the start's:
 *     the marks' own times (cannNs), their device tasks' starts (TASK by
 *     connection id; NULL without one) and their PyTorch calls' starts
 *     (PYTORCH_API through CONNECTION_IDS, a timeline's from its async_npu
 *     flows, torchlink.c; 0 when either has none);
 *   - a range (eventType 2, connection id not 4294967295) is named by its
 *     message, prefixed with the messages of the ranges that hold it
 *     ("outer::inner", the recipe's tree of ranges by start, then longest
 *     first); frameworkNs 0, cannNs its length, deviceNs its device task's;
 *   - stepId: the first STEP_TIME step of the rank (by start) whose range
 *     holds the pair's or range's start, ends included; 0 when none does;
 *   - a name met more than once in a step becomes name_0, name_1, ... in
 *     that order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/torchlink.h"

#define WHAT "mstx_marks"

static tb_status db_fail(const metric_ctx *m, tb_error *err)
{
    return tb_error_set(err, TB_ERR_DB, WHAT ": %s", sqlite3_errmsg(m->db));
}

/* One mark or range of the rank being built. */
typedef struct item {
    char *name;
    int64_t start, end;                /* the mstx event's (a mark: end unused) */
    int64_t dev, dev_end, fwk;         /* device task start/end, PyTorch start */
    int has_dev, has_dev_end, has_fwk;
    int64_t tid;
    int open;                          /* a start mark not yet paired */
} item;

typedef struct out_row {
    char *name;
    int64_t fwk, cann, dev, start, step;
    int has_dev;
} out_row;

typedef struct vecs {
    item *it;
    size_t n, cap;
    out_row *o;
    size_t on, ocap;
} vecs;

static int grow(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *q = realloc(*p, c * sz);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static void vecs_clear(vecs *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->it[i].name);
    for (size_t i = 0; i < v->on; i++)
        free(v->o[i].name);
    v->n = v->on = 0;
}

static tb_status nomem(tb_error *err)
{
    return tb_error_set(err, TB_ERR_NOMEM, WHAT ": out of memory");
}

static int push_out(vecs *v, const char *name, size_t len, int64_t fwk, int64_t cann, int64_t dev, int has_dev,
                    int64_t start)
{
    if (grow((void **)&v->o, &v->ocap, v->on, sizeof *v->o))
        return -1;
    out_row *r = &v->o[v->on];
    r->name = strndup(name, len);
    if (!r->name)
        return -1;
    r->fwk = fwk, r->cann = cann, r->dev = dev, r->has_dev = has_dev, r->start = start, r->step = 0;
    v->on++;
    return 0;
}

/* A mark or range of read_items' SQL. */
static int item_row(sqlite3_stmt *q, void *ctx)
{
    vecs *v = ctx;
    if (grow((void **)&v->it, &v->cap, v->n, sizeof *v->it))
        return -1;
    item *it = &v->it[v->n];
    const char *name = (const char *)sqlite3_column_text(q, 0);
    it->name = name ? strdup(name) : NULL;
    if (name && !it->name)
        return -1;
    it->start = sqlite3_column_int64(q, 1);
    it->end = sqlite3_column_int64(q, 2);
    it->has_dev = sqlite3_column_type(q, 3) != SQLITE_NULL;
    it->dev = sqlite3_column_int64(q, 3);
    it->has_dev_end = sqlite3_column_type(q, 4) != SQLITE_NULL;
    it->dev_end = sqlite3_column_int64(q, 4);
    it->fwk = sqlite3_column_int64(q, 5);
    it->has_fwk = sqlite3_column_type(q, 5) != SQLITE_NULL;
    it->tid = sqlite3_column_int64(q, 6);
    it->open = 0;
    v->n++;
    return 0;
}

/* Reads the rank's marks (kind 3) or ranges (kind 2) into v->it. */
static tb_status read_items(const metric_ctx *m, const torch_links *tl, vecs *v, int64_t rank, int kind,
                            tb_error *err)
{
    const char *ids, *calls;
    torch_links_names(tl, rank, &ids, &calls);
    char *sql = sqlite3_mprintf(
        "SELECT s.value, e.startNs, e.endNs, t.startNs, t.endNs, "
        "  CASE WHEN ?3 = 3 THEN f.startNs END, e.globalTid "
        "FROM MSTX_EVENTS e LEFT JOIN TASK t ON t.rankId = e.rankId AND t.connectionId = e.connectionId "
        "LEFT JOIN (SELECT p.startNs, c.connectionId FROM %s p "
        "  JOIN %s c ON c.id = p.connectionId AND c.rankId = p.rankId WHERE p.rankId = ?1 AND ?3 = 3) f "
        "  ON f.connectionId = e.connectionId "
        "LEFT JOIN STRING_IDS s ON s.id = e.message "
        "WHERE e.rankId = ?1 AND e.eventType = ?2 AND (?2 = 3 OR e.connectionId <> 4294967295) "
        "ORDER BY e.startNs",
        calls, ids);
    if (!sql)
        return tb_error_set(err, TB_ERR_NOMEM, WHAT ": out of memory");
    sqlite3_stmt *q = NULL;
    int prc = sqlite3_prepare_v2(m->db, sql, -1, &q, NULL);
    sqlite3_free(sql);
    if (prc != SQLITE_OK)
        return db_fail(m, err);
    sqlite3_bind_int64(q, 1, rank);
    sqlite3_bind_int(q, 2, kind);
    sqlite3_bind_int(q, 3, kind);
    return metrics_each_row(m->db, q, WHAT, item_row, v, err);
}

static int ends_with(const char *s, const char *suf, size_t *stem)
{
    size_t n = strlen(s), k = strlen(suf);
    if (n < k || strcmp(s + n - k, suf) != 0)
        return 0;
    *stem = n - k;
    return 1;
}

/* The mark pairs of v->it into v->o, in the order of their stops. */
static tb_status pair_marks(vecs *v, tb_error *err)
{
    for (size_t i = 0; i < v->n; i++) {
        item *it = &v->it[i];
        size_t stem;
        if (!it->name)
            continue;
        if (ends_with(it->name, "_start", &stem)) {
            it->open = 1;
            continue;
        }
        if (!ends_with(it->name, "_stop", &stem))
            continue;
        for (size_t j = i; j-- > 0;) {
            item *a = &v->it[j];
            size_t as;
            if (!a->open || a->tid != it->tid || !ends_with(a->name, "_start", &as) || as != stem ||
                strncmp(a->name, it->name, stem) != 0)
                continue;
            a->open = 0;
            int64_t fwk = it->has_fwk && a->has_fwk ? it->fwk - a->fwk : 0;
            if (push_out(v, it->name, stem, fwk, it->start - a->start, it->dev - a->dev, it->has_dev && a->has_dev,
                         a->start))
                return nomem(err);
            break;
        }
    }
    return TB_OK;
}

/* full[i]: range i's message prefixed by those of the ranges holding it, as
 * the recipe's stack over the tree order builds them. */
static int full_names(const vecs *v, const span_key *ord, size_t *stack, char **full)
{
    size_t top = 0; /* stack[0..top): the open ranges; the root (every range) is below them */
    for (size_t k = 0; k < v->n; k++) {
        const item *it = &v->it[ord[k].idx];
        while (top && (v->it[stack[top - 1]].start > it->start || v->it[stack[top - 1]].end < it->end))
            top--;
        const char *path = top ? full[stack[top - 1]] : NULL;
        char **f = &full[ord[k].idx];
        if (it->name && *it->name && path && *path) {
            size_t len = strlen(path) + strlen(it->name) + 3;
            if ((*f = malloc(len)) != NULL)
                snprintf(*f, len, "%s::%s", path, it->name);
        } else {
            *f = strdup(it->name ? it->name : "");
        }
        if (!*f)
            return -1;
        stack[top++] = ord[k].idx;
    }
    return 0;
}

/* The ranges of v->it into v->o, in read order. A range takes the name of
 * the last range in tree order with its start and end (the recipe writes
 * the names back by start and end). */
static tb_status name_ranges(vecs *v, tb_error *err)
{
    size_t n = v->n, *stack = malloc((n + 1) * sizeof *stack);
    span_key *ord = malloc((n ? n : 1) * sizeof *ord);
    char **full = calloc(n ? n : 1, sizeof *full);
    const char **name = calloc(n ? n : 1, sizeof *name);
    tb_status rc = TB_OK;
    if (!ord || !stack || !full || !name) {
        rc = nomem(err);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        ord[i] = (span_key){v->it[i].start, v->it[i].end, i};
    qsort(ord, n, sizeof *ord, metrics_cmp_span);
    if (full_names(v, ord, stack, full)) {
        rc = nomem(err);
        goto out;
    }
    for (size_t k = 0; k < n;) {
        size_t e = k;
        const char *last = NULL;
        while (e < n && ord[e].start == ord[k].start && ord[e].end == ord[k].end) {
            if (*full[ord[e].idx])
                last = full[ord[e].idx];
            e++;
        }
        for (size_t j = k; j < e; j++)
            name[ord[j].idx] = last ? last : full[ord[j].idx];
        k = e;
    }
    for (size_t i = 0; i < n && !rc; i++) {
        const item *it = &v->it[i];
        if (push_out(v, name[i], strlen(name[i]), 0, it->end - it->start, it->dev_end - it->dev,
                     it->has_dev && it->has_dev_end, it->start))
            rc = nomem(err);
    }
out:
    for (size_t i = 0; full && i < n; i++)
        free(full[i]);
    free(full);
    free(name);
    free(ord);
    free(stack);
    return rc;
}

/* Each row's step: the first of the rank's steps (by start) holding its start, else 0. */
static tb_status set_steps(const metric_ctx *m, vecs *v, int64_t rank, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(m->db,
                           "SELECT id FROM STEP_TIME WHERE rankId = ?1 AND startNs <= ?2 AND endNs >= ?2 "
                           "ORDER BY startNs LIMIT 1",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(m, err);
    tb_status rc = TB_OK;
    for (size_t i = 0; i < v->on && !rc; i++) {
        sqlite3_bind_int64(q, 1, rank);
        sqlite3_bind_int64(q, 2, v->o[i].start);
        int s = sqlite3_step(q);
        if (s == SQLITE_ROW)
            v->o[i].step = sqlite3_column_int64(q, 0);
        else if (s != SQLITE_DONE)
            rc = db_fail(m, err);
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return rc;
}

/* A row's place among the rows of its step and name. */
typedef struct nkey {
    int64_t step;
    const char *name;
    size_t idx;
} nkey;

static int cmp_name(const void *pa, const void *pb)
{
    const nkey *a = pa, *b = pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    int c = strcmp(a->name, b->name);
    if (c)
        return c;
    return a->idx < b->idx ? -1 : 1;
}

/* seen[i], total[i]: row i's place among the rows of its step and name, and their number. */
static int name_counts(const vecs *v, size_t *seen, size_t *total)
{
    nkey *k = malloc((v->on ? v->on : 1) * sizeof *k);
    if (!k)
        return -1;
    for (size_t i = 0; i < v->on; i++)
        k[i] = (nkey){v->o[i].step, v->o[i].name, i};
    qsort(k, v->on, sizeof *k, cmp_name);
    for (size_t a = 0; a < v->on;) {
        size_t b = a;
        while (b < v->on && k[b].step == k[a].step && strcmp(k[b].name, k[a].name) == 0)
            b++;
        for (size_t j = a; j < b; j++) {
            seen[k[j].idx] = j - a;
            total[k[j].idx] = b - a;
        }
        a = b;
    }
    free(k);
    return 0;
}

static int bind_row(sqlite3_stmt *ins, int64_t rank, size_t i, const out_row *r, const char *name)
{
    sqlite3_bind_int64(ins, 1, rank);
    sqlite3_bind_int64(ins, 2, (int64_t)i + 1);
    sqlite3_bind_text(ins, 3, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(ins, 4, r->fwk);
    sqlite3_bind_int64(ins, 5, r->cann);
    if (r->has_dev)
        sqlite3_bind_int64(ins, 6, r->dev);
    else
        sqlite3_bind_null(ins, 6);
    sqlite3_bind_int64(ins, 7, r->step);
    int s = sqlite3_step(ins);
    sqlite3_reset(ins);
    return s == SQLITE_DONE ? 0 : -1;
}

/* Writes the rank's rows, a name met more than once in a step numbered _0, _1, ... */
static tb_status write_rows(const metric_ctx *m, vecs *v, int64_t rank, tb_error *err)
{
    size_t n = v->on ? v->on : 1, *seen = malloc(n * sizeof *seen), *total = malloc(n * sizeof *total);
    sqlite3_stmt *ins = NULL;
    tb_status rc = TB_OK;
    if (!seen || !total || name_counts(v, seen, total)) {
        rc = nomem(err);
        goto out;
    }
    if (sqlite3_prepare_v2(m->db, "INSERT INTO temp.mstx_marks VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &ins, NULL) !=
        SQLITE_OK) {
        rc = db_fail(m, err);
        goto out;
    }
    for (size_t i = 0; i < v->on && !rc; i++) {
        const out_row *r = &v->o[i];
        char *name = r->name;
        if (total[i] > 1) {
            size_t len = strlen(r->name) + 24;
            if (!(name = malloc(len))) {
                rc = nomem(err);
                break;
            }
            snprintf(name, len, "%s_%zu", r->name, seen[i]);
        }
        if (bind_row(ins, rank, i, r, name))
            rc = db_fail(m, err);
        if (name != r->name)
            free(name);
    }
out:
    sqlite3_finalize(ins);
    free(seen);
    free(total);
    return rc;
}

static tb_status build_rank(const metric_ctx *m, const torch_links *tl, int64_t rank, void *ctx, tb_error *err)
{
    vecs *v = ctx;
    tb_status rc;
    vecs_clear(v);
    if ((rc = read_items(m, tl, v, rank, 3, err)) || (rc = pair_marks(v, err)))
        return rc;
    for (size_t i = 0; i < v->n; i++)
        free(v->it[i].name);
    v->n = 0;
    if ((rc = read_items(m, tl, v, rank, 2, err)) || (rc = name_ranges(v, err)) || (rc = set_steps(m, v, rank, err)))
        return rc;
    return write_rows(m, v, rank, err);
}

static tb_status build_mstx_marks(const metric_ctx *m, tb_error *err)
{
    tb_status rc = metrics_exec(m, WHAT,
                                "DROP TABLE IF EXISTS temp.mstx_marks;"
                                "CREATE TEMP TABLE mstx_marks (rankId INTEGER, pos INTEGER, name TEXT, "
                                "  frameworkNs INTEGER, cannNs INTEGER, deviceNs INTEGER, stepId INTEGER);",
                                err);
    if (rc)
        return rc;
    vecs v = {0};
    rc = torch_links_each_rank(m, WHAT, "MSTX_EVENTS",
                               "SELECT DISTINCT rankId FROM MSTX_EVENTS WHERE rankId IS NOT NULL ORDER BY 1",
                               build_rank, &v, err);
    vecs_clear(&v);
    free(v.it);
    free(v.o);
    return rc;
}

const metric_table metrics_mstx[] = {
    {"mstx_marks", {NULL}, build_mstx_marks,
     "per rank, each mstx mark pair and range: name, framework, CANN and device time (ns) and step, as "
     "msprof-analyze's mstx_sum recipe lists them",
     "rankId", {NULL}},
};
const size_t metrics_mstx_n = sizeof metrics_mstx / sizeof metrics_mstx[0];
