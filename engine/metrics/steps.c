/* SPDX-License-Identifier: MIT */
/*
 * steps.c - host steps, their launching calls and their device ranges (the
 * rule is stated in steps.h).
 *
 * STEP_TIME is read once, sorted by rank, start and id, with each step's
 * reach (the greatest end of the rank's steps up to it). The step holding a
 * time t is found by a binary search for the last step starting at or
 * before t, then a walk back while the reach still covers t: with steps that
 * do not overlap the walk stops at once, so the lookup is O(log n). The
 * launching calls are one CANN_API scan into a per-rank map from
 * connectionId to the call's start (the earliest call of an id wins), then
 * each start is replaced by its step: a lookup per launched row is one
 * array read (util/idmap.h). Nothing here is quadratic.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/steps.h"
#include "util/sort.h"
#include "util/vec.h"

static tb_status db_fail(sqlite3 *db, const char *what, const char *table, tb_error *err)
{
    return tb_error_set(err, TB_ERR_DB, "%s: reading %s: %s", what, table, sqlite3_errmsg(db));
}

static tb_status nomem(const char *what, tb_error *err)
{
    return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
}

void steps_finish(steps *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nranks; i++)
        idmap_free(&s->ranks[i].launch);
    free(s->ranks);
    free(s->v);
    free(s->reach);
    memset(s, 0, sizeof *s);
}

void steps_of_rank(const steps *s, int64_t rank, size_t *off, size_t *n)
{
    const size_t at = offsetof(steps_step, rank);
    *off = sort_bound_i64(s->v, s->n, sizeof *s->v, at, rank, 0);
    *n = sort_bound_i64(s->v, s->n, sizeof *s->v, at, rank, 1) - *off;
}

/* The last of the n steps at off that started at or before t, as an index past it (0: none). */
static size_t last_started(const steps *s, size_t off, size_t n, int64_t t)
{
    return sort_bound_i64(s->v + off, n, sizeof *s->v, offsetof(steps_step, start), t, 1);
}

long steps_started(const steps *s, int64_t rank, int64_t t)
{
    size_t off, n;
    steps_of_rank(s, rank, &off, &n);
    size_t k = last_started(s, off, n, t);
    return k ? (long)(off + k - 1) : -1;
}

/* steps_at among the n steps at off (one rank's). */
static long at(const steps *s, size_t off, size_t n, int64_t t)
{
    for (size_t k = last_started(s, off, n, t); k > 0 && s->reach[off + k - 1] >= t; k--)
        if (s->v[off + k - 1].end >= t)
            return (long)(off + k - 1);
    return -1;
}

long steps_at(const steps *s, int64_t rank, int64_t t)
{
    size_t off, n;
    steps_of_rank(s, rank, &off, &n);
    return at(s, off, n, t);
}

/* The rank's entry of s->ranks, or NULL. */
static steps_rank *rank_entry(const steps *s, int64_t rank)
{
    size_t i = sort_bound_i64(s->ranks, s->nranks, sizeof *s->ranks, offsetof(steps_rank, rank), rank, 0);
    return i < s->nranks && s->ranks[i].rank == rank ? &s->ranks[i] : NULL;
}

const idmap *steps_launches(const steps *s, int64_t rank)
{
    const steps_rank *r = rank_entry(s, rank);
    return r ? &r->launch : NULL;
}

void steps_range(const steps_step *h, const steps_span *sp, int64_t *start, int64_t *end)
{
    *start = sp->lo != INT64_MAX ? sp->lo : h->start;
    *end = sp->hi > h->end ? sp->hi : h->end;
}

static tb_status load_steps(sqlite3 *db, const char *what, int complete, steps *s, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    /* complete: the steps of the step view, which leaves out a step the profile cut short
     * (a DB of an older build has no step_all, and its step view has every step) */
    const char *sql = complete ? "SELECT ifnull(rankId, 0), id, startNs, endNs FROM step "
                                 "WHERE startNs IS NOT NULL AND endNs IS NOT NULL AND id IS NOT NULL "
                                 "ORDER BY 1, startNs, id"
                               : "SELECT ifnull(rankId, 0), id, startNs, endNs FROM STEP_TIME "
                                 "WHERE startNs IS NOT NULL AND endNs IS NOT NULL AND id IS NOT NULL "
                                 "ORDER BY 1, startNs, id";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, what, "STEP_TIME", err);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        steps_step h = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                        sqlite3_column_int64(st, 3)};
        if (VEC_PUSH(s->v, s->n, cap, h)) {
            sqlite3_finalize(st);
            return nomem(what, err);
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(db, what, "STEP_TIME", err);
    if (!s->n)
        return TB_OK;
    if (!(s->reach = malloc(s->n * sizeof *s->reach)))
        return nomem(what, err);
    size_t rcap = 0;
    for (size_t i = 0; i < s->n; i++) {
        int first = i == 0 || s->v[i].rank != s->v[i - 1].rank;
        s->reach[i] = first || s->v[i].end > s->reach[i - 1] ? s->v[i].end : s->reach[i - 1];
        if (first && VEC_PUSH(s->ranks, s->nranks, rcap, ((steps_rank){.rank = s->v[i].rank})))
            return nomem(what, err);
    }
    return TB_OK;
}

/* The steps of one rank, for idmap_map. */
typedef struct to_step {
    const steps *s;
    size_t off, n;
} to_step;

static int64_t call_step(void *ctx, int64_t conn, int64_t start)
{
    (void)conn;
    const to_step *t = ctx;
    return at(t->s, t->off, t->n, start);
}

static tb_status load_launches(sqlite3 *db, const char *what, steps *s, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
            "SELECT ifnull(rankId, 0), connectionId, startNs FROM CANN_API "
            "WHERE connectionId IS NOT NULL AND startNs IS NOT NULL", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, what, "CANN_API", err);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        /* a binary search over the ranks: a step or two for a few ranks */
        steps_rank *r = rank_entry(s, sqlite3_column_int64(st, 0));
        if (r && idmap_add(&r->launch, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2))) {
            sqlite3_finalize(st);
            return nomem(what, err);
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(db, what, "CANN_API", err);
    for (size_t i = 0; i < s->nranks; i++) {
        to_step t = {s, 0, 0};
        steps_of_rank(s, s->ranks[i].rank, &t.off, &t.n);
        idmap_build(&s->ranks[i].launch);
        idmap_map(&s->ranks[i].launch, call_step, &t);
    }
    return TB_OK;
}

tb_status steps_load(sqlite3 *db, int launches, const char *what, steps *s, tb_error *err)
{
    memset(s, 0, sizeof *s);
    tb_status rc = load_steps(db, what, (launches & STEPS_COMPLETE) != 0, s, err);
    launches &= ~STEPS_COMPLETE;
    /* a graph-mode window's steps are its iterations, device ranges: nothing is launched in them */
    sqlite3_stmt *g = NULL;
    if (launches && sqlite3_prepare_v2(db, "SELECT 1 FROM temp.sqlite_master WHERE name = 'tb_window_graph'", -1, &g,
                                       NULL) == SQLITE_OK && sqlite3_step(g) == SQLITE_ROW)
        launches = 0;
    sqlite3_finalize(g);
    if (!rc && launches && s->n)
        rc = load_launches(db, what, s, err);
    if (rc)
        steps_finish(s);
    return rc;
}

/* One table's launched rows into the spans. */
static tb_status spans_of(const steps *s, sqlite3 *db, const char *what, const char *table, steps_span *span,
                          tb_error *err)
{
    char *sql = sqlite3_mprintf("SELECT ifnull(rankId, 0), connectionId, startNs, endNs FROM \"%w\" "
                                "WHERE connectionId IS NOT NULL AND startNs IS NOT NULL AND endNs IS NOT NULL",
                                table);
    sqlite3_stmt *st = NULL;
    int ok = sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK;
    sqlite3_free(sql);
    if (!ok)
        return sql ? db_fail(db, what, table, err) : nomem(what, err);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t k = steps_launched(steps_launches(s, sqlite3_column_int64(st, 0)), sqlite3_column_int64(st, 1));
        if (k >= 0)
            steps_span_add(&span[k], sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? TB_OK : db_fail(db, what, table, err);
}

tb_status steps_rank_spans(const steps *s, sqlite3 *db, const char *what, steps_span *span, tb_error *err)
{
    for (size_t i = 0; i < s->n; i++)
        span[i] = (steps_span)STEPS_SPAN_EMPTY;
    tb_status rc = spans_of(s, db, what, "TASK", span, err);
    return rc ? rc : spans_of(s, db, what, "COMMUNICATION_OP", span, err);
}
