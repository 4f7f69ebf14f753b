/* SPDX-License-Identifier: MIT */
/*
 * hta_read.c - one read of the ProfilerSteps and of the ranks' device
 * tasks for every HTA table built the same way in a run (hta.h:
 * hta_read_*).
 *
 * The HTA counters (queue length, launch statistics, memory bandwidth,
 * ATen ops, ...), the call graph, the straggler metric and the critical
 * path (every table built by hta_build) each read the
 * ProfilerSteps (hta_steps: HTA's window) and every rank's device tasks
 * with their launching calls (breakdown.c's each_rank: the launch map, the
 * join of the tasks with it and the class of each task), about 0.6 s of
 * CPU at 1M events, the same for every table. The first such build of a
 * run records the steps and what each rank's call got (its tasks as read,
 * before the table's own function changes them) in temp.tb_m_read, one
 * row per call in call order; a later build under the same key (reuse.h's:
 * the options, the part of the load and the run's window) takes the steps
 * and replays those calls instead of reading again. The key also holds the
 * main DB's data_version, so that a connection that lives on (the SQLite
 * extension's helper) never replays a read of a DB that another connection
 * changed since. The key and the steps (temp.tb_m_read_key) are written
 * only once a read completed, so that a read that failed or stopped is
 * never replayed; the run's end drops both tables with every other TEMP
 * object.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/hta.h"

static const char make_tables[] =
    "DROP TABLE IF EXISTS temp.tb_m_read_key;"
    "DROP TABLE IF EXISTS temp.tb_m_read;"
    "CREATE TEMP TABLE tb_m_read_key (key TEXT, cuts BLOB, spans BLOB);"
    "CREATE TEMP TABLE tb_m_read (rank INTEGER, nread INTEGER, skipped INTEGER, hosted INTEGER, n INTEGER, "
    "  ev BLOB);";

/* 1 when temp.tb_m_read holds a complete read made under key. */
static int kept(sqlite3 *db, const char *key)
{
    sqlite3_stmt *st = NULL;
    int found = sqlite3_prepare_v2(db, "SELECT 1 FROM temp.tb_m_read_key WHERE key = ?", -1, &st, NULL) ==
                SQLITE_OK;
    if (found) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

/* key and the main DB's data_version, new (sqlite3_free), or NULL. */
static char *full_key(sqlite3 *db, const char *key)
{
    sqlite3_stmt *st = NULL;
    char *out = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA main.data_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        out = sqlite3_mprintf("%s|data_version %lld", key, (long long)sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
    return out;
}

tb_status hta_read_begin(const metric_ctx *m, const char *what, const char *key, hta_read *r, tb_error *err)
{
    *r = (hta_read){.db = m->db, .what = what};
    char *k = key ? full_key(m->db, key) : NULL;
    if (!k)
        return TB_OK;
    if (kept(m->db, k)) {
        r->kept = k;
        r->replay = 1;
        return TB_OK;
    }
    r->key = k;
    if (sqlite3_exec(m->db, make_tables, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(m->db, "INSERT INTO temp.tb_m_read VALUES (?, ?, ?, ?, ?, ?)", -1, &r->ins, NULL) !=
            SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
    return TB_OK;
}

/* Stops recording r: what it holds is never replayed. */
static void stop(hta_read *r)
{
    sqlite3_finalize(r->ins);
    r->ins = NULL;
    sqlite3_free(r->key);
    sqlite3_free(r->kept);
    r->key = r->kept = NULL;
}

tb_status hta_read_give(hta_read *r, int64_t rank, evvec *ev, rank_fn fn, void *ctx, tb_error *err)
{
    size_t bytes = ev->n * sizeof *ev->v;
    if (r->ins && (ev->n > (size_t)INT32_MAX / sizeof *ev->v ||
                   bytes > (size_t)sqlite3_limit(r->db, SQLITE_LIMIT_LENGTH, -1)))
        stop(r); /* too large for one value: each build reads for itself */
    if (r->ins) {
        sqlite3_bind_int64(r->ins, 1, rank);
        sqlite3_bind_int64(r->ins, 2, (sqlite3_int64)ev->read);
        sqlite3_bind_int64(r->ins, 3, (sqlite3_int64)ev->skipped);
        sqlite3_bind_int(r->ins, 4, ev->hosted);
        sqlite3_bind_int64(r->ins, 5, (sqlite3_int64)ev->n);
        sqlite3_bind_blob(r->ins, 6, ev->n ? (const void *)ev->v : "", (int)bytes, SQLITE_STATIC);
        int s = sqlite3_step(r->ins);
        sqlite3_reset(r->ins);
        sqlite3_clear_bindings(r->ins);
        if (s != SQLITE_DONE)
            return tb_error_set(err, TB_ERR_DB, "%s: %s", r->what, sqlite3_errmsg(r->db));
    }
    return fn(ctx, rank, ev, err);
}

/* Binds n elements of size bytes at v to column col of st (an empty BLOB when n is 0). */
static void bind_array(sqlite3_stmt *st, int col, const void *v, size_t n, size_t size)
{
    sqlite3_bind_blob(st, col, n ? v : "", (int)(n * size), SQLITE_STATIC);
}

tb_status hta_read_end(hta_read *r, tb_status rc, tb_error *err)
{
    const hta_ctx *h = r->steps;
    if (r->key && !rc && h && h->ncuts <= (size_t)INT32_MAX / sizeof *h->cuts &&
        h->nspans <= (size_t)INT32_MAX / sizeof *h->spans) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(r->db, "INSERT INTO temp.tb_m_read_key VALUES (?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
            rc = tb_error_set(err, TB_ERR_DB, "%s: %s", r->what, sqlite3_errmsg(r->db));
        else {
            sqlite3_bind_text(st, 1, r->key, -1, SQLITE_STATIC);
            bind_array(st, 2, h->cuts, h->ncuts, sizeof *h->cuts);
            bind_array(st, 3, h->spans, h->nspans, sizeof *h->spans);
            if (sqlite3_step(st) != SQLITE_DONE)
                rc = tb_error_set(err, TB_ERR_DB, "%s: %s", r->what, sqlite3_errmsg(r->db));
        }
        sqlite3_finalize(st);
    }
    stop(r);
    return rc;
}

/* A copy of column col of st (a BLOB of elements of size bytes) into *v,
 * *n elements; -1 when its size is no whole count or out of memory. */
static int column_array(sqlite3_stmt *st, int col, size_t size, void **v, size_t *n)
{
    size_t bytes = (size_t)sqlite3_column_bytes(st, col);
    *v = NULL;
    *n = 0;
    if (bytes % size)
        return -1;
    if (!bytes)
        return 0;
    if (!(*v = malloc(bytes)))
        return -1;
    memcpy(*v, sqlite3_column_blob(st, col), bytes);
    *n = bytes / size;
    return 0;
}

tb_status hta_read_steps(hta_read *r, hta_ctx *h, tb_error *err)
{
    if (!r->replay) {
        r->steps = h;
        return hta_steps(h, err);
    }
    sqlite3_stmt *st = NULL;
    tb_status rc = TB_OK;
    void *cuts = NULL, *spans = NULL;
    if (sqlite3_prepare_v2(r->db, "SELECT cuts, spans FROM temp.tb_m_read_key WHERE key = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", r->what, sqlite3_errmsg(r->db));
    sqlite3_bind_text(st, 1, r->kept, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", r->what, sqlite3_errmsg(r->db));
    else if (column_array(st, 0, sizeof *h->cuts, &cuts, &h->ncuts) ||
             column_array(st, 1, sizeof *h->spans, &spans, &h->nspans))
        rc = tb_error_set(err, TB_ERR_INTERNAL, "%s: the steps kept with the read do not fit", r->what);
    h->cuts = cuts;
    h->spans = spans;
    sqlite3_finalize(st);
    return rc;
}

/* Call number `row` (a rowid of temp.tb_m_read) given to fn again, its
 * tasks read straight into a new array (no copy of them held by SQLite). */
static tb_status replay_one(hta_read *r, sqlite3_stmt *get, int64_t row, rank_fn fn, void *ctx, tb_error *err)
{
    sqlite3_bind_int64(get, 1, row);
    if (sqlite3_step(get) != SQLITE_ROW) {
        sqlite3_reset(get);
        return tb_error_set(err, TB_ERR_DB, "%s: %s", r->what, sqlite3_errmsg(r->db));
    }
    evvec ev = {.read = (size_t)sqlite3_column_int64(get, 1), .skipped = (size_t)sqlite3_column_int64(get, 2),
                .hosted = sqlite3_column_int(get, 3)};
    int64_t rank = sqlite3_column_int64(get, 0), n = sqlite3_column_int64(get, 4);
    sqlite3_reset(get);
    tb_status rc = TB_OK;
    sqlite3_blob *b = NULL;
    if (n > 0) {
        size_t bytes = (size_t)n * sizeof *ev.v;
        if (sqlite3_blob_open(r->db, "temp", "tb_m_read", "ev", row, 0, &b) != SQLITE_OK)
            rc = tb_error_set(err, TB_ERR_DB, "%s: %s", r->what, sqlite3_errmsg(r->db));
        else if ((size_t)sqlite3_blob_bytes(b) != bytes)
            rc = tb_error_set(err, TB_ERR_INTERNAL, "%s: the read kept for rank %lld holds %lld bytes, not %lld tasks",
                              r->what, (long long)rank, (long long)sqlite3_blob_bytes(b), (long long)n);
        else if (!(ev.v = malloc(bytes)))
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", r->what);
        else if (sqlite3_blob_read(b, ev.v, (int)bytes, 0) != SQLITE_OK)
            rc = tb_error_set(err, TB_ERR_DB, "%s: %s", r->what, sqlite3_errmsg(r->db));
        sqlite3_blob_close(b);
        ev.n = ev.cap = (size_t)n;
    }
    if (!rc)
        rc = fn(ctx, rank, &ev, err);
    free(ev.v);
    return rc;
}

tb_status hta_read_replay(hta_read *r, rank_fn fn, void *ctx, tb_error *err)
{
    int64_t *rows = NULL;
    size_t n = 0;
    sqlite3_stmt *st = NULL, *get = NULL;
    if (sqlite3_prepare_v2(r->db, "SELECT rowid FROM temp.tb_m_read ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", r->what, sqlite3_errmsg(r->db));
    tb_status rc = metrics_read_int64(r->db, st, r->what, 1, &rows, &n, err);
    if (!rc && sqlite3_prepare_v2(r->db, "SELECT rank, nread, skipped, hosted, n FROM temp.tb_m_read WHERE rowid = ?",
                                  -1, &get, NULL) != SQLITE_OK)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", r->what, sqlite3_errmsg(r->db));
    for (size_t i = 0; !rc && i < n; i++)
        rc = replay_one(r, get, rows[i], fn, ctx, err);
    sqlite3_finalize(get);
    free(rows);
    return rc;
}
