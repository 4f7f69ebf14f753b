/* SPDX-License-Identifier: MIT */
/*
 * freetime.c - the free time of each rank's device and its reason, as
 * msprof-analyze's free_analysis recipe finds them (docs/metrics.md, "Free
 * time analysis").
 *
 * free_time: one row per free interval of a rank's device, pos 1 the
 * longest. Per rank:
 *   - busy: the compute tasks (COMPUTE_TASK_INFO with their TASK times) and
 *     the communication ops, merged where they overlap or touch; free: the
 *     time between one merged interval and the next;
 *   - the links: every TASK row with its task type's name, its CANN call
 *     (CANN_API by connection id) and its PyTorch call (PYTORCH_API through
 *     CONNECTION_IDS; a timeline's from its async_npu flows, torchlink.c),
 *     missing times 0;
 *   - the reason: tasks strictly inside the interval ("Device task running",
 *     their count per type and the longest part of the interval they leave
 *     free); else the last task ending at or before the start and the first
 *     starting at or after the end: none ("no prev or next task"), either
 *     without a PyTorch call ("no pytorch dispatch time"), else the PyTorch
 *     and CANN idle times (the calls' ends' differences) and, when the next
 *     task waited 50 us or more longer than the previous between its PyTorch
 *     call's end and its CANN call's start, the longer of the two CANN calls
 *     and the gap between them ("Abnormal CANN layer"), else "Idle Pytorch
 *     layer".
 * Times in the reasons are in us as the recipe prints them (ns / 1000,
 * three decimals at most, at least one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/torchlink.h"
#include "util/vec.h"

#define WHAT "free_time"
#define DIFF_WAIT_NS 50000

static tb_status db_fail(const metric_ctx *m, tb_error *err)
{
    return tb_error_set(err, TB_ERR_DB, WHAT ": %s", sqlite3_errmsg(m->db));
}

static tb_status nomem(tb_error *err)
{
    return tb_error_set(err, TB_ERR_NOMEM, WHAT ": out of memory");
}

/* A device task with its calls. */
typedef struct link {
    int64_t ts, end, cann_ts, cann_end, pt_end;
    int has_pt;            /* a PyTorch call */
    int type;              /* index into the rank's type names, -1 none */
} link;

typedef struct rank_data {
    link *l;
    size_t n, cap;
    struct by_end {
        int64_t end;
        size_t idx;
    } *by_end;             /* the tasks by end, then seq */
    char **types;          /* task type names */
    size_t ntypes, tcap;
} rank_data;

static void rank_clear(rank_data *r)
{
    for (size_t i = 0; i < r->ntypes; i++)
        free(r->types[i]);
    free(r->by_end);
    r->by_end = NULL;
    r->n = r->ntypes = 0;
}

/* The us figure as the recipe prints it: round(ns * 0.001, 3) through Python's repr. */
static void us_text(char *buf, size_t len, int64_t ns)
{
    int64_t a = ns < 0 ? -ns : ns;
    int frac = (int)(a % 1000);
    char f[8];
    snprintf(f, sizeof f, "%03d", frac);
    size_t k = 3;
    while (k > 1 && f[k - 1] == '0')
        k--;
    f[k] = 0;
    snprintf(buf, len, "%s%lld.%s", ns < 0 ? "-" : "", (long long)(a / 1000), f);
}

static int type_index(rank_data *r, const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < r->ntypes; i++)
        if (strcmp(r->types[i], name) == 0)
            return (int)i;
    char *copy = strdup(name);
    if (!copy || VEC_PUSH(r->types, r->ntypes, r->tcap, copy)) {
        free(copy);
        return -2;
    }
    return (int)r->ntypes - 1;
}

/* A task of read_links' SQL with its calls. */
static int link_row(sqlite3_stmt *q, void *ctx)
{
    rank_data *r = ctx;
    link l = {.type = type_index(r, (const char *)sqlite3_column_text(q, 0))};
    if (l.type == -2)
        return -1;
    l.ts = sqlite3_column_int64(q, 1);
    l.end = sqlite3_column_int64(q, 2);
    l.cann_ts = sqlite3_column_int64(q, 3);
    l.cann_end = sqlite3_column_int64(q, 4);
    l.has_pt = sqlite3_column_type(q, 5) != SQLITE_NULL && sqlite3_column_int64(q, 5) != 0;
    l.pt_end = sqlite3_column_int64(q, 6);
    return VEC_PUSH(r->l, r->n, r->cap, l);
}

/* The rank's tasks with their calls, by task start (the recipe's query). */
static tb_status read_links(const metric_ctx *m, const torch_links *tl, rank_data *r, int64_t rank, tb_error *err)
{
    const char *ids, *calls;
    torch_links_names(tl, rank, &ids, &calls);
    char *sql = sqlite3_mprintf(
        "SELECT s.value, IFNULL(t.startNs, 0), IFNULL(t.endNs, 0), IFNULL(c.startNs, 0), IFNULL(c.endNs, 0), "
        "  p.startNs, IFNULL(p.endNs, 0) "
        "FROM TASK t LEFT JOIN CANN_API c ON c.rankId = ?1 AND c.connectionId = t.connectionId "
        "LEFT JOIN STRING_IDS s ON s.id = t.taskType "
        "LEFT JOIN %s ci ON ci.rankId = ?1 AND ci.connectionId = t.connectionId "
        "LEFT JOIN %s p ON p.rankId = ?1 AND p.connectionId = ci.id "
        "WHERE t.rankId = ?1 ORDER BY t.startNs",
        ids, calls);
    if (!sql)
        return nomem(err);
    sqlite3_stmt *q = NULL;
    int prc = sqlite3_prepare_v2(m->db, sql, -1, &q, NULL);
    sqlite3_free(sql);
    if (prc != SQLITE_OK)
        return db_fail(m, err);
    sqlite3_bind_int64(q, 1, rank);
    return metrics_each_row(m->db, q, WHAT, link_row, r, err);
}

static int cmp_end(const void *pa, const void *pb)
{
    const struct by_end *a = pa, *b = pb;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* One free interval of the rank. */
typedef struct gap {
    int64_t start, end;
} gap;

static int cmp_gap(const void *pa, const void *pb)
{
    const gap *a = pa, *b = pb;
    int64_t da = a->end - a->start, db = b->end - b->start;
    if (da != db)
        return da > db ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

/* The free intervals found so far, and the end of the intervals read. */
typedef struct gap_read {
    gap *g;
    size_t k, cap;
    int64_t hi;
    int any;
} gap_read;

/* An interval of read_gaps' SQL (by start): a gap before it when it starts after all before it end. */
static int gap_row(sqlite3_stmt *q, void *ctx)
{
    gap_read *r = ctx;
    int64_t a = sqlite3_column_int64(q, 0), b = sqlite3_column_int64(q, 1);
    if (r->any && a > r->hi && VEC_PUSH(r->g, r->k, r->cap, ((gap){r->hi, a})))
        return -1;
    r->hi = !r->any || b > r->hi ? b : r->hi;
    r->any = 1;
    return 0;
}

/* The rank's free intervals: between the merged compute and communication intervals. */
static tb_status read_gaps(const metric_ctx *m, int64_t rank, gap **out, size_t *n, tb_error *err)
{
    static const char sql[] =
        "SELECT t.startNs, t.endNs FROM COMPUTE_TASK_INFO c "
        "JOIN TASK t ON t.rankId = ?1 AND t.globalTaskId = c.globalTaskId "
        "WHERE c.rankId = ?1 AND t.startNs IS NOT NULL AND t.endNs IS NOT NULL "
        "UNION ALL SELECT startNs, endNs FROM COMMUNICATION_OP "
        "WHERE rankId = ?1 AND startNs IS NOT NULL AND endNs IS NOT NULL ORDER BY 1";
    gap_read r = {0};
    tb_status rc = metrics_rows(m->db, WHAT, sql, rank, gap_row, &r, err);
    if (rc) {
        free(r.g);
        return rc;
    }
    if (r.k)
        qsort(r.g, r.k, sizeof *r.g, cmp_gap);
    *out = r.g;
    *n = r.k;
    return TB_OK;
}

/* First index of l (by start) whose start is >= t (strict: > t). */
static size_t first_from(const rank_data *r, int64_t t, int strict)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strict ? r->l[mid].ts > t : r->l[mid].ts >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* "Device task running: ..." when tasks run strictly inside the interval;
 * 0 when none does, -1 out of memory. */
static int running_reason(const rank_data *r, const gap *g, char *buf, size_t len)
{
    size_t from = first_from(r, g->start, 1), *count = calloc(r->ntypes + 1, sizeof *count),
           *order = malloc((r->ntypes + 1) * sizeof *order), nord = 0, tasks = 0;
    int64_t cur = g->start, best = -1;
    if (!count || !order) {
        free(count);
        free(order);
        return -1;
    }
    for (size_t i = from; i < r->n && r->l[i].ts < g->end; i++) {
        const link *l = &r->l[i];
        if (l->end >= g->end)
            continue;
        tasks++;
        if (l->type >= 0 && count[l->type]++ == 0)
            order[nord++] = (size_t)l->type;
        if (cur < l->ts && l->ts - cur > best)
            best = l->ts - cur;
        cur = l->end > cur ? l->end : cur;
    }
    if (tasks && g->end - cur > best && cur < g->end)
        best = g->end - cur;
    /* by count, most first; ties in order of appearance */
    for (size_t i = 1; i < nord; i++)
        for (size_t j = i; j > 0 && count[order[j]] > count[order[j - 1]]; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t k = (size_t)snprintf(buf, len, "Device task running: ");
    for (size_t i = 0; i < nord && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%zu %s tasks", i ? ", " : "", count[order[i]],
                              r->types[order[i]]);
    if (k < len) {
        char us[32];
        us_text(us, sizeof us, best);
        if (best > 0)
            snprintf(buf + k, len - k, ", max remaining free %s us", us);
        else
            snprintf(buf + k, len - k, ".");
    }
    free(count);
    free(order);
    return tasks ? 1 : 0;
}

/* The reason of an interval without tasks inside, from the tasks around it;
 * sets *pt and *cann (the idle times) when it has them. */
static void call_reason(const rank_data *r, const gap *g, char *buf, size_t len, int64_t *pt, int64_t *cann, int *idle)
{
    size_t lo = 0, hi = r->n; /* the last by end with end <= start */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->by_end[mid].end <= g->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t next = first_from(r, g->end, 0);
    *idle = 0;
    if (lo == 0 || next == r->n) {
        snprintf(buf, len, "Skip free analysis due to no prev or next task.");
        return;
    }
    const link *p = &r->l[r->by_end[lo - 1].idx], *n = &r->l[next];
    if (!p->has_pt || !n->has_pt) {
        snprintf(buf, len, "Skip free analysis due to no pytorch dispatch time.");
        return;
    }
    *idle = 1;
    *pt = n->pt_end - p->pt_end;
    *cann = n->cann_end - p->cann_end;
    char us[32];
    if ((n->cann_ts - n->pt_end) - (p->cann_ts - p->pt_end) < DIFF_WAIT_NS) {
        us_text(us, sizeof us, *pt);
        snprintf(buf, len, "Idle Pytorch layer: no task dispatched in %s us", us);
        return;
    }
    int64_t pl = p->cann_end - p->cann_ts, nl = n->cann_end - n->cann_ts, gapn = n->cann_ts - p->cann_end;
    int64_t launch = pl > nl ? pl : nl;
    if (gapn >= launch) {
        us_text(us, sizeof us, gapn);
        snprintf(buf, len, "Abnormal CANN layer: long time between two node@launch %s us", us);
    } else {
        us_text(us, sizeof us, launch);
        snprintf(buf, len, "Abnormal CANN layer: long node@launch %s us", us);
    }
}

static tb_status write_gaps(const metric_ctx *m, const rank_data *r, int64_t rank, const gap *g, size_t n,
                            tb_error *err)
{
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(m->db, "INSERT INTO temp.free_time VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &ins, NULL) !=
        SQLITE_OK)
        return db_fail(m, err);
    char *buf = malloc(4096);
    tb_status rc = buf ? TB_OK : nomem(err);
    /* one transaction for the rank's rows: with big TEMP tables beside them
     * (a timeline's links) the temp DB is a file, journaled per commit */
    int sp = !rc && sqlite3_exec(m->db, "SAVEPOINT tb_m_free_time", NULL, NULL, NULL) == SQLITE_OK;
    if (!rc && !sp)
        rc = db_fail(m, err);
    for (size_t i = 0; i < n && !rc; i++) {
        int64_t pt = 0, cann = 0;
        int idle = 0, run = running_reason(r, &g[i], buf, 4096);
        if (run < 0) {
            rc = nomem(err);
            break;
        }
        if (!run)
            call_reason(r, &g[i], buf, 4096, &pt, &cann, &idle);
        sqlite3_bind_int64(ins, 1, rank);
        sqlite3_bind_int64(ins, 2, (int64_t)i + 1);
        sqlite3_bind_int64(ins, 3, g[i].start);
        sqlite3_bind_int64(ins, 4, g[i].end);
        if (idle) {
            sqlite3_bind_int64(ins, 5, pt);
            sqlite3_bind_int64(ins, 6, cann);
        } else {
            sqlite3_bind_null(ins, 5);
            sqlite3_bind_null(ins, 6);
        }
        sqlite3_bind_text(ins, 7, buf, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = db_fail(m, err);
        sqlite3_reset(ins);
    }
    free(buf);
    sqlite3_finalize(ins);
    if (sp && rc)
        sqlite3_exec(m->db, "ROLLBACK TO tb_m_free_time", NULL, NULL, NULL);
    if (sp && sqlite3_exec(m->db, "RELEASE tb_m_free_time", NULL, NULL, NULL) != SQLITE_OK && !rc)
        rc = db_fail(m, err);
    return rc;
}

static tb_status build_rank(const metric_ctx *m, const torch_links *tl, int64_t rank, void *ctx, tb_error *err)
{
    rank_data *r = ctx;
    gap *g = NULL;
    size_t n = 0;
    rank_clear(r);
    tb_status rc = read_gaps(m, rank, &g, &n, err);
    if (!rc && n)
        rc = read_links(m, tl, r, rank, err);
    if (!rc && n && r->n) {
        /* a rank without tasks has no reason to give: no row, as the recipe */
        if (!(r->by_end = malloc(r->n * sizeof *r->by_end)))
            rc = nomem(err);
        for (size_t i = 0; !rc && i < r->n; i++)
            r->by_end[i] = (struct by_end){r->l[i].end, i};
        if (!rc) {
            qsort(r->by_end, r->n, sizeof *r->by_end, cmp_end);
            rc = write_gaps(m, r, rank, g, n, err);
        }
    }
    free(g);
    return rc;
}

static tb_status build_free_time(const metric_ctx *m, tb_error *err)
{
    tb_status rc = metrics_exec(m, WHAT,
                                "DROP TABLE IF EXISTS temp.free_time;"
                                "CREATE TEMP TABLE free_time (rankId INTEGER, pos INTEGER, startNs INTEGER, "
                                "  endNs INTEGER, pytorchIdleNs INTEGER, cannIdleNs INTEGER, reason TEXT);",
                                err);
    if (rc)
        return rc;
    rank_data r = {0};
    rc = torch_links_each_rank(m, WHAT, NULL,
                               "SELECT rankId FROM TASK WHERE rankId IS NOT NULL UNION "
                               "SELECT rankId FROM COMMUNICATION_OP WHERE rankId IS NOT NULL ORDER BY 1",
                               build_rank, &r, err);
    rank_clear(&r);
    free(r.l);
    free(r.types);
    return rc;
}

const metric_table metrics_freetime[] = {
    {"free_time", {NULL}, build_free_time,
     "per rank, each free interval of the device (longest first) with the PyTorch and CANN idle time (ns) and "
     "its reason, as msprof-analyze's free_analysis recipe finds them",
     "rankId", {NULL}},
};
const size_t metrics_freetime_n = sizeof metrics_freetime / sizeof metrics_freetime[0];
