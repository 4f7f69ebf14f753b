/* SPDX-License-Identifier: MIT */
/*
 * load_types.c - a summary CSV's kernel types onto the timeline's tasks.
 *
 * A torch_npu rank folder gives its tasks from the timeline (trace_view.json)
 * and their types from kernel_details.csv or op_summary, staged in
 * TB_KERNEL_TYPE by rank, device, start and name. Once every file is in, the
 * load makes each staged type the opType of the COMPUTE_TASK_INFO row of the
 * task it describes: same rank, same device (any, when the CSV named none),
 * same start ns, same name; of several staged rows that fit, the first
 * staged. The rows used are deleted; what matched no task stays.
 *
 * The matching is one pass in C over each table (the staged rows sorted by
 * rank, start and name; TASK in its order, each task a binary search; the
 * matched tasks sorted by id; COMPUTE_TASK_INFO in its order), then an
 * UPDATE by rowid of the rows whose type changes: the type a timeline's
 * name gave is mostly the CSV's already, and such a row is not rewritten. A join in SQL did the same with
 * an index built on the staged rows, a temporary table and a B-tree per
 * GROUP BY: most of a device-heavy rank folder's post-processing
 * (docs/performance.md). Keys SQLite would compare by value but C cannot
 * by integer (a REAL or TEXT rank, start, device or name) send the rows to
 * that join, which gives the same result.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/load_int.h"
#include "tracebook/error.h"
#include "util/sort.h"

/* A staged type: where it applies, the type, its row. */
typedef struct {
    int64_t rank, start, name, dev, type, row;
    int has_dev, has_type;
} staged_type;

/* A task a staged type fits: the first staged row (lowest rowid) of those that fit. */
typedef struct {
    int64_t rank, gid, row, type;
    int has_type;
} task_type;

typedef struct {
    staged_type *k;
    size_t nk;
    task_type *m;
    size_t nm, capm;
    int64_t *used; /* the staged rows a COMPUTE_TASK_INFO row took */
    size_t nused;
    int64_t (*per_rank)[2]; /* (rankId, rows typed) */
    size_t nranks;
} type_run;

/* 1 when the join compares what the sweep would not: a key that is neither NULL nor an integer. */
#define ODD(q, i) (sqlite3_column_type((q), (i)) != SQLITE_INTEGER && sqlite3_column_type((q), (i)) != SQLITE_NULL)

static int cmp_staged(const void *a, const void *b)
{
    const staged_type *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_task(const void *a, const void *b)
{
    const task_type *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->gid != y->gid)
        return x->gid < y->gid ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static tb_status db_fail(dbw *w, sqlite3_stmt *q, tb_error *err)
{
    tb_status st = tb_error_set(err, TB_ERR_DB, "kernel types: %s", sqlite3_errmsg(dbw_db(w)));
    sqlite3_finalize(q);
    return st;
}

/* The staged rows (NULL rank, start or name match nothing and are left out),
 * sorted. 1 when a key is odd (the join decides), 0, or an error. */
static int read_staged(dbw *w, type_run *R, tb_error *err)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(dbw_db(w), "SELECT rankId, startNs, name, deviceId, opType, rowid FROM TB_KERNEL_TYPE", -1,
                           &q, NULL) != SQLITE_OK)
        return -(int)db_fail(w, NULL, err);
    size_t cap = 0;
    int rc, odd = 0;
    while (!odd && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        odd = ODD(q, 0) || ODD(q, 1) || ODD(q, 2) || ODD(q, 3);
        if (odd || sqlite3_column_type(q, 0) == SQLITE_NULL || sqlite3_column_type(q, 1) == SQLITE_NULL ||
            sqlite3_column_type(q, 2) == SQLITE_NULL)
            continue;
        if (R->nk == cap) {
            staged_type *nv = realloc(R->k, (cap = cap ? cap * 2 : 4096) * sizeof *nv);
            if (!nv) {
                sqlite3_finalize(q);
                return -(int)tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            }
            R->k = nv;
        }
        staged_type *s = &R->k[R->nk++];
        *s = (staged_type){sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2),
                           sqlite3_column_int64(q, 3), sqlite3_column_int64(q, 4), sqlite3_column_int64(q, 5),
                           sqlite3_column_type(q, 3) != SQLITE_NULL, sqlite3_column_type(q, 4) != SQLITE_NULL};
    }
    if (!odd && rc != SQLITE_DONE)
        return -(int)db_fail(w, q, err);
    sqlite3_finalize(q);
    if (!odd && R->nk)
        qsort(R->k, R->nk, sizeof *R->k, cmp_staged);
    return odd;
}

/* The first staged row (in rowid order) that fits a task, or NULL. */
static const staged_type *fit(const type_run *R, int64_t rank, int64_t start, int64_t name, int has_dev, int64_t dev)
{
    size_t lo = 0, hi = R->nk;
    staged_type key = {.rank = rank, .start = start, .name = name, .row = INT64_MIN};
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_staged(&R->k[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < R->nk && R->k[i].rank == rank && R->k[i].start == start && R->k[i].name == name; i++)
        if (!R->k[i].has_dev || (has_dev && R->k[i].dev == dev))
            return &R->k[i];
    return NULL;
}

/* The tasks a staged type fits, sorted by (rank, id), one entry per (rank,
 * id) with the lowest staged row. 1 when a key is odd, 0, or an error. */
static int match_tasks(dbw *w, type_run *R, tb_error *err)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(dbw_db(w), "SELECT rankId, startNs, name, deviceId, globalTaskId FROM TASK", -1, &q,
                           NULL) != SQLITE_OK)
        return -(int)db_fail(w, NULL, err);
    int rc, odd = 0;
    while (!odd && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        odd = ODD(q, 0) || ODD(q, 1) || ODD(q, 2) || ODD(q, 3) || ODD(q, 4);
        if (odd || sqlite3_column_type(q, 0) == SQLITE_NULL || sqlite3_column_type(q, 1) == SQLITE_NULL ||
            sqlite3_column_type(q, 2) == SQLITE_NULL || sqlite3_column_type(q, 4) == SQLITE_NULL)
            continue;
        const staged_type *s = fit(R, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
                                   sqlite3_column_int64(q, 2), sqlite3_column_type(q, 3) != SQLITE_NULL,
                                   sqlite3_column_int64(q, 3));
        if (!s)
            continue;
        if (R->nm == R->capm) {
            task_type *nv = realloc(R->m, (R->capm = R->capm ? R->capm * 2 : 4096) * sizeof *nv);
            if (!nv) {
                sqlite3_finalize(q);
                return -(int)tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            }
            R->m = nv;
        }
        R->m[R->nm++] = (task_type){s->rank, sqlite3_column_int64(q, 4), s->row, s->type, s->has_type};
    }
    if (!odd && rc != SQLITE_DONE)
        return -(int)db_fail(w, q, err);
    sqlite3_finalize(q);
    if (odd)
        return 1;
    if (R->nm)
        qsort(R->m, R->nm, sizeof *R->m, cmp_task);
    size_t n = 0; /* tasks of the same rank and id: the lowest staged row, first after the sort */
    for (size_t i = 0; i < R->nm; i++)
        if (n == 0 || R->m[n - 1].rank != R->m[i].rank || R->m[n - 1].gid != R->m[i].gid)
            R->m[n++] = R->m[i];
    R->nm = n;
    return 0;
}

static const task_type *matched(const type_run *R, int64_t rank, int64_t gid)
{
    size_t lo = 0, hi = R->nm;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const task_type *t = &R->m[mid];
        if (t->rank < rank || (t->rank == rank && t->gid < gid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < R->nm && R->m[lo].rank == rank && R->m[lo].gid == gid ? &R->m[lo] : NULL;
}

/* Counts a typed row of rank. 0, or -1 out of memory. */
static int count_rank(type_run *R, int64_t rank)
{
    for (size_t i = 0; i < R->nranks; i++)
        if (R->per_rank[i][0] == rank) {
            R->per_rank[i][1]++;
            return 0;
        }
    int64_t(*nv)[2] = realloc(R->per_rank, (R->nranks + 1) * sizeof *nv);
    if (!nv)
        return -1;
    R->per_rank = nv;
    R->per_rank[R->nranks][0] = rank;
    R->per_rank[R->nranks++][1] = 1;
    return 0;
}

/* Appends a row id to a growing array. 0, or -1 out of memory. */
static int push_row(int64_t **v, size_t *n, size_t *cap, int64_t row)
{
    if (*n == *cap) {
        int64_t *nv = realloc(*v, (*cap = *cap ? *cap * 2 : 4096) * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
    }
    (*v)[(*n)++] = row;
    return 0;
}

/* The COMPUTE_TASK_INFO rows of the matched tasks: their rowids and types
 * into upd (row, type, has_type), the staged rows they took into used, the
 * count per rank. 1 when a key is odd, 0, or an error. */
static int match_infos(dbw *w, type_run *R, int64_t (**upd)[3], size_t *nupd, tb_error *err)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(dbw_db(w), "SELECT rankId, globalTaskId, rowid, opType FROM COMPUTE_TASK_INFO", -1, &q, NULL) !=
        SQLITE_OK)
        return -(int)db_fail(w, NULL, err);
    size_t capu = 0, capk = 0;
    int rc, odd = 0;
    while (!odd && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        odd = ODD(q, 0) || ODD(q, 1);
        if (odd || sqlite3_column_type(q, 0) == SQLITE_NULL || sqlite3_column_type(q, 1) == SQLITE_NULL)
            continue;
        const task_type *t = matched(R, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1));
        if (!t)
            continue;
        if (push_row(&R->used, &R->nused, &capk, t->row) || count_rank(R, t->rank))
            goto oom;
        int ct = sqlite3_column_type(q, 3); /* the type the name gave is mostly the CSV's: kept as it is */
        if (t->has_type ? ct == SQLITE_INTEGER && sqlite3_column_int64(q, 3) == t->type : ct == SQLITE_NULL)
            continue;
        if (*nupd == capu) {
            int64_t(*nv)[3] = realloc(*upd, (capu = capu ? capu * 2 : 4096) * sizeof *nv);
            if (!nv)
                goto oom;
            *upd = nv;
        }
        int64_t *u = (*upd)[(*nupd)++];
        u[0] = sqlite3_column_int64(q, 2);
        u[1] = t->type;
        u[2] = t->has_type;
    }
    if (!odd && rc != SQLITE_DONE)
        return -(int)db_fail(w, q, err);
    sqlite3_finalize(q);
    return odd;
oom:
    sqlite3_finalize(q);
    return -(int)tb_error_set(err, TB_ERR_NOMEM, "out of memory");
}

/* Runs sql over each value of v (bound as ?1 and, with two columns, ?2). */
static tb_status each_row(dbw *w, const char *sql, const int64_t *v, size_t n, int width, tb_error *err)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(dbw_db(w), sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(w, NULL, err);
    for (size_t i = 0; i < n; i++) {
        const int64_t *r = v + i * (size_t)width;
        if (width == 3 && !r[2])
            sqlite3_bind_null(q, 1);
        else
            sqlite3_bind_int64(q, 1, width == 3 ? r[1] : r[0]);
        if (width == 3)
            sqlite3_bind_int64(q, 2, r[0]);
        if (sqlite3_step(q) != SQLITE_DONE)
            return db_fail(w, q, err);
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return TB_OK;
}

/* The types written, the staged rows used deleted (the whole table when
 * every row was used, as usual). */
static tb_status write_types(dbw *w, type_run *R, const int64_t (*upd)[3], size_t nupd, tb_error *err)
{
    tb_status st =
        each_row(w, "UPDATE COMPUTE_TASK_INFO SET opType = ?1 WHERE rowid = ?2", nupd ? upd[0] : NULL, nupd, 3, err);
    if (st != TB_OK || R->nused == 0)
        return st;
    qsort(R->used, R->nused, sizeof *R->used, sort_cmp_i64);
    size_t n = 0;
    for (size_t i = 0; i < R->nused; i++)
        if (n == 0 || R->used[n - 1] != R->used[i])
            R->used[n++] = R->used[i];
    R->nused = n;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(dbw_db(w), "SELECT count(*) FROM TB_KERNEL_TYPE", -1, &q, NULL) != SQLITE_OK)
        return db_fail(w, NULL, err);
    int all = sqlite3_step(q) == SQLITE_ROW && (uint64_t)sqlite3_column_int64(q, 0) == (uint64_t)n;
    sqlite3_finalize(q);
    return all ? dbw_exec(w, "DELETE FROM TB_KERNEL_TYPE", err)
               : each_row(w, "DELETE FROM TB_KERNEL_TYPE WHERE rowid = ?1", R->used, n, 1, err);
}

/* A typed task's type is no longer derived: the derived count of the trace
 * of its rank (src[i].r, before TB_LOAD_COUNT is written) drops by one per
 * typed row. */
static void uncount_derived(const type_run *R, src_info *src, size_t nsrc)
{
    for (size_t r = 0; r < R->nranks; r++) {
        int64_t rank = R->per_rank[r][0];
        uint64_t n = (uint64_t)R->per_rank[r][1];
        for (size_t i = 0; i < nsrc && n > 0; i++) {
            uint64_t *d = &src[i].r.dest[TB_DEST_DERIVED_TYPE];
            if (src[i].cluster || src[i].multi || src[i].rank != rank || *d == 0)
                continue;
            uint64_t k = n < *d ? n : *d;
            *d -= k;
            n -= k;
        }
    }
}

/* The same matching as one join, for keys that are not all integers: the
 * typed rows per rank counted as the sweep counts them. */
static tb_status bind_by_join(dbw *w, type_run *R, tb_error *err)
{
    tb_status st = dbw_exec(w,
                            "CREATE INDEX tb_kernel_type_at ON TB_KERNEL_TYPE(rankId, startNs);"
                            "CREATE TEMP TABLE type_match AS"
                            " SELECT min(k.rowid) AS kr, c.rowid AS cr, k.opType AS opType, t.rankId AS rankId"
                            " FROM COMPUTE_TASK_INFO c"
                            " CROSS JOIN TASK t ON t.globalTaskId = c.globalTaskId AND t.rankId IS c.rankId"
                            " CROSS JOIN TB_KERNEL_TYPE k ON k.rankId = t.rankId AND k.startNs = t.startNs"
                            "  AND (k.deviceId IS NULL OR k.deviceId = t.deviceId) AND k.name = t.name"
                            " GROUP BY c.rowid;"
                            "UPDATE COMPUTE_TASK_INFO SET opType = m.opType FROM type_match m"
                            " WHERE COMPUTE_TASK_INFO.rowid = m.cr;"
                            "DELETE FROM TB_KERNEL_TYPE WHERE rowid IN (SELECT kr FROM type_match);"
                            "DROP INDEX tb_kernel_type_at;",
                            err);
    sqlite3_stmt *q;
    if (st == TB_OK && sqlite3_prepare_v2(dbw_db(w), "SELECT rankId, count(*) FROM type_match GROUP BY rankId", -1,
                                          &q, NULL) != SQLITE_OK)
        return db_fail(w, NULL, err);
    while (st == TB_OK && sqlite3_step(q) == SQLITE_ROW) {
        int64_t(*nv)[2] = realloc(R->per_rank, (R->nranks + 1) * sizeof *nv);
        if (!nv) {
            sqlite3_finalize(q);
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
        R->per_rank = nv;
        R->per_rank[R->nranks][0] = sqlite3_column_int64(q, 0);
        R->per_rank[R->nranks++][1] = sqlite3_column_int64(q, 1);
    }
    if (st == TB_OK)
        sqlite3_finalize(q);
    return st != TB_OK ? st : dbw_exec(w, "DROP TABLE type_match", err);
}

tb_status load_types_bind(dbw *w, src_info *src, size_t nsrc, tb_error *err)
{
    type_run R = {0};
    int64_t(*upd)[3] = NULL;
    size_t nupd = 0;
    int r = read_staged(w, &R, err);
    if (r == 0 && R.nk == 0) /* nothing staged, or nothing that can match */
        goto done;
    if (r == 0)
        r = match_tasks(w, &R, err);
    free(R.k); /* the staged rows are in R.m now: not held beside the rows to update */
    R.k = NULL;
    if (r == 0)
        r = match_infos(w, &R, &upd, &nupd, err);
    if (r == 0 && write_types(w, &R, (const int64_t(*)[3])upd, nupd, err) != TB_OK)
        r = -1;
    if (r == 1) {
        R.nranks = 0;
        r = bind_by_join(w, &R, err) != TB_OK ? -1 : 0;
    }
    if (r == 0)
        uncount_derived(&R, src, nsrc);
done:
    free(R.k);
    free(R.m);
    free(R.used);
    free(R.per_rank);
    free(upd);
    return r < 0 ? (err->code != TB_OK ? err->code : TB_ERR_INTERNAL) : TB_OK;
}
