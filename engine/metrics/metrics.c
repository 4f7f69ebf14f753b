/* SPDX-License-Identifier: MIT */
/*
 * metrics.c - the registry of computed tables and their shared helpers.
 *
 * The tables themselves live with their family: steptrace.c (step trace
 * time, overlap lanes), breakdown.c (HTA-style breakdowns, the exposed-time
 * partition), cluster.c (cluster step trace, slow rank, communication
 * matrix), vote.c (slow rank by vote), timesum.c (the cluster time
 * summary), commgroup.c (the communication groups), mstx.c (mstx marks and
 * ranges), ppchart.c (the DualPipeV pipeline chart), hta_counters.c (HTA's
 * queue length and trace span), hta_stacks.c
 * (HTA's call graph). This file lists them for the runner; their options
 * are options.c's. It also holds what the builders share: running SQL,
 * reading a statement's rows into memory (metrics_rows, metrics_each_row,
 * metrics_read_int64: one loop that steps, reports and finalizes), the
 * tree order of ranges, the ranks a table gives no row.
 */
#include <stdarg.h>
#include <stdio.h>

#include "metrics/metrics.h"
#include "util/str.h"
#include "util/vec.h"

typedef struct family {
    const metric_table *v;
    const size_t *n;
} family;

static const family families[] = {
    {metrics_steptrace, &metrics_steptrace_n},
    {metrics_breakdown, &metrics_breakdown_n},
    {metrics_cluster, &metrics_cluster_n},
    {metrics_vote, &metrics_vote_n},
    {metrics_timesum, &metrics_timesum_n},
    {metrics_commgroup, &metrics_commgroup_n},
    {metrics_mstx, &metrics_mstx_n},
    {metrics_modstat, &metrics_modstat_n},
    {metrics_freetime, &metrics_freetime_n},
    {metrics_ppchart, &metrics_ppchart_n},
    {metrics_hta_counters, &metrics_hta_counters_n},
    {metrics_hta_stacks, &metrics_hta_stacks_n},
    {metrics_critical_path, &metrics_critical_path_n},
};

const metric_table *metrics_find(const char *name)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (size_t i = 0; i < *families[f].n; i++)
            if (str_eq_ci(families[f].v[i].name, name))
                return &families[f].v[i];
    return NULL;
}

int metrics_two_phase(const metric_table *t)
{
    if (!t)
        return 0;
    if (t->parts[0])
        return 1;
    /* depends are never loops (the runner's build bounds the depth anyway) */
    for (size_t d = 0; d < 4 && t->depends[d]; d++)
        if (metrics_two_phase(metrics_find(t->depends[d])))
            return 1;
    return 0;
}

void metrics_each(void (*fn)(void *ctx, const metric_table *t), void *ctx)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (size_t i = 0; i < *families[f].n; i++)
            fn(ctx, &families[f].v[i]);
}

tb_status metrics_exec(const metric_ctx *m, const char *what, const char *sql, tb_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(m->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        tb_error_set(err, TB_ERR_DB, "%s: %s", what, msg ? msg : sqlite3_errmsg(m->db));
        sqlite3_free(msg);
        return TB_ERR_DB;
    }
    return TB_OK;
}

tb_status metrics_each_row(sqlite3 *db, sqlite3_stmt *st, const char *what, metrics_row_fn row, void *ctx,
                           tb_error *err)
{
    tb_status rc = TB_OK;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW)
        if (row(st, ctx)) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
            break;
        }
    if (!rc && s != SQLITE_DONE)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

tb_status metrics_rows(sqlite3 *db, const char *what, const char *sql, int64_t rank, metrics_row_fn row, void *ctx,
                       tb_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(db));
    if (sqlite3_bind_parameter_count(st) > 0)
        sqlite3_bind_int64(st, 1, rank);
    return metrics_each_row(db, st, what, row, ctx, err);
}

tb_status metrics_read_int64(sqlite3 *db, sqlite3_stmt *st, const char *what, int ncols, int64_t **v, size_t *nrows,
                             tb_error *err)
{
    size_t k = 0, cap = 0;
    *v = NULL;
    *nrows = 0;
    tb_status rc = TB_OK;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        if (k + (size_t)ncols > cap && vec_reserve(v, &cap, k + (size_t)ncols, sizeof **v)) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
            break;
        }
        for (int c = 0; c < ncols; c++)
            (*v)[k++] = sqlite3_column_int64(st, c);
    }
    if (!rc && s != SQLITE_DONE)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    *nrows = k / (size_t)ncols;
    return rc;
}

unsigned long long metrics_group_hash(const char *s)
{
    uint32_t a = 0, b = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        a = a * 29u + *p;
        b = b * 131u + *p;
    }
    return ((unsigned long long)a << 32) | b;
}

int metrics_cmp_span(const void *pa, const void *pb)
{
    const span_key *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

int64_t metrics_rank_shown(const metric_ctx *m, int64_t rank)
{
    for (size_t i = 0; i < m->n_rank_ids; i++)
        if (m->rank_ids[i] == rank)
            return m->rank_shown[i];
    return rank;
}

void metrics_note_rankless(const metric_ctx *m, const char *table, int (*has)(const void *cx, int64_t rank),
                           const void *cx)
{
    sqlite3_stmt *st = NULL;
    if (!m->note ||
        sqlite3_prepare_v2(m->db, "SELECT DISTINCT ifnull(rankId, 0) FROM TB_RANK ORDER BY 1", -1, &st, NULL) !=
            SQLITE_OK) {
        sqlite3_finalize(st);
        return;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(st, 0);
        if (has(cx, rank))
            continue;
        char msg[256];
        snprintf(msg, sizeof msg, "%s: rank %lld: no row: the rank has no device tasks or communication ops", table,
                 (long long)metrics_rank_shown(m, rank));
        m->note(m->ctx, msg);
    }
    sqlite3_finalize(st);
}

void metrics_notef(const metric_ctx *m, const char *fmt, ...)
{
    if (!m->note)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    m->note(m->ctx, msg);
}
