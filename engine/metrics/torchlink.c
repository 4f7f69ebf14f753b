/* SPDX-License-Identifier: MIT */
/*
 * torchlink.c - a torch_npu timeline's PyTorch calls linked to their device
 * tasks, made when a computed table reads them (see torchlink.h).
 *
 * torch_npu's DB links each PyTorch call to the tasks it launched:
 * PYTORCH_API.connectionId is an id of CONNECTION_IDS, whose rows give the
 * connection ids of those tasks. A timeline (trace_view.json) has the same
 * links as its async_npu flows (torch_to_npu), which a load keeps in
 * TB_FLOW; only the DB `export db` writes holds them as rows (torch_npu
 * writes the flows after every PyTorch slice, so linking costs a pass over
 * the stored rows, which the load behind a report does not pay). Here they
 * are made once per run, for every rank that has async_npu flows and no
 * CONNECTION_IDS rows, from the stored (window-free) tables, so that the
 * ids are those of the whole rank and the same as an exported DB's
 * (db/torchlinks.c has the rules):
 *   - temp.tb_m_tl_ids holds the link rows (id, connectionId, rankId) and
 *     temp.tb_m_tl_link the linked calls with their ids;
 *   - temp.tb_m_tl_call holds, for each build (the window it runs in), the
 *     linked calls in the window as PYTORCH_API rows with their ids. A call
 *     with a connectionId of its own links nothing: its rank has no
 *     CONNECTION_IDS rows.
 * Ranks with CONNECTION_IDS rows (a DB's, an exported timeline's) are read
 * as stored.
 */
#include <stdlib.h>

#include "db/ask.h"
#include "db/torchlinks.h"
#include "metrics/torchlink.h"

static tb_status db_fail(const metric_ctx *m, const char *what, tb_error *err)
{
    return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
}

/* The linked calls as PYTORCH_API rows with their ids: all of them without
 * a window; in one, those the window's view of PYTORCH_API keeps (it is
 * scanned once, each row probing the links; the view filters by rank and
 * times only, so a call's twins share its fate). */
static const char calls_sql[] =
    "DROP TABLE IF EXISTS temp.tb_m_tl_call;"
    "CREATE TEMP TABLE tb_m_tl_call (rankId INTEGER, connectionId INTEGER, startNs INTEGER, endNs INTEGER,"
    "  name INTEGER, globalTid INTEGER);"
    "INSERT INTO tb_m_tl_call %s;"
    "CREATE INDEX temp.tb_m_tl_call_id ON tb_m_tl_call(rankId, connectionId);";
static const char calls_all[] = "SELECT rankId, id, startNs, endNs, name, gtid FROM temp.tb_m_tl_link";
static const char calls_window[] =
    "SELECT DISTINCT p.rankId, l.id, p.startNs, p.endNs, p.name, p.globalTid"
    "  FROM PYTORCH_API p CROSS JOIN temp.tb_m_tl_link l ON l.gtid = p.globalTid AND l.startNs = p.startNs"
    "   AND l.endNs = p.endNs AND l.rankId IS p.rankId AND l.name IS p.name"
    "  WHERE p.connectionId IS NULL";

/* The window's calls (see calls_sql). */
static tb_status make_calls(const metric_ctx *m, const char *what, tb_error *err)
{
    int windowed = db_has_table(m->db, "temp", "PYTORCH_API", 1); /* the window's view */
    if (windowed < 0)
        return db_fail(m, what, err);
    char *sql = sqlite3_mprintf(calls_sql, windowed ? calls_window : calls_all);
    if (!sql)
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
    tb_status rc = metrics_exec(m, what, sql, err);
    sqlite3_free(sql);
    return rc;
}

/* Inserts the links into temp.tb_m_tl_link (the calls) and
 * temp.tb_m_tl_ids (the link rows). 0 or -1 (SQLite's error). */
static int write_links(const metric_ctx *m, const db_torch_links *l)
{
    sqlite3_stmt *a = NULL, *b = NULL;
    int rc = sqlite3_exec(m->db, "SAVEPOINT tb_m_tl", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    if (!rc && (sqlite3_prepare_v2(m->db, "INSERT INTO temp.tb_m_tl_link VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &a,
                                   NULL) != SQLITE_OK ||
                sqlite3_prepare_v2(m->db, "INSERT INTO temp.tb_m_tl_ids VALUES (?, ?, ?)", -1, &b, NULL) != SQLITE_OK))
        rc = -1;
    for (size_t i = 0; i < l->ncalls && !rc; i++) {
        const db_tl_call *c = &l->calls[i];
        int64_t v[7] = {c->rank, c->row, c->gtid, c->start, c->end, c->name, c->id};
        for (int k = 0; k < 7; k++)
            sqlite3_bind_int64(a, k + 1, v[k]);
        rc = sqlite3_step(a) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(a);
    }
    for (size_t i = 0; i < l->nids && !rc; i++) {
        int64_t v[3] = {l->ids[i].id, l->ids[i].conn, l->ids[i].rank};
        for (int k = 0; k < 3; k++)
            sqlite3_bind_int64(b, k + 1, v[k]);
        rc = sqlite3_step(b) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(b);
    }
    sqlite3_finalize(a);
    sqlite3_finalize(b);
    if (rc)
        sqlite3_exec(m->db, "ROLLBACK TO tb_m_tl", NULL, NULL, NULL);
    if (sqlite3_exec(m->db, "RELEASE tb_m_tl", NULL, NULL, NULL) != SQLITE_OK)
        rc = -1;
    return rc;
}

static tb_status make_links(const metric_ctx *m, const char *what, tb_error *err)
{
    int made = db_has_table(m->db, "temp", "tb_m_tl_ids", 0);
    if (made)
        return made < 0 ? db_fail(m, what, err) : TB_OK;
    tb_status rc = metrics_exec(m, what,
                                "CREATE TEMP TABLE tb_m_tl_link (rankId INTEGER, prow INTEGER, gtid INTEGER, "
                                "  startNs INTEGER, endNs INTEGER, name INTEGER, id INTEGER);"
                                "CREATE TEMP TABLE tb_m_tl_ids (id INTEGER, connectionId INTEGER, rankId INTEGER);",
                                err);
    db_torch_links l;
    int lr = rc ? 0 : db_torch_links_make(m->db, &l);
    if (!rc && !lr)
        lr = write_links(m, &l);
    if (!rc)
        db_torch_links_free(&l);
    if (!rc && lr)
        rc = lr == -2 ? tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what) : db_fail(m, what, err);
    if (!rc)
        rc = metrics_exec(m, what,
                          "CREATE INDEX temp.tb_m_tl_link_call ON tb_m_tl_link(gtid, startNs, endNs);"
                          "CREATE INDEX temp.tb_m_tl_ids_conn ON tb_m_tl_ids(rankId, connectionId);",
                          err);
    return rc;
}

static tb_status read_ranks(const metric_ctx *m, const char *what, torch_links *tl, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(m->db, "SELECT DISTINCT rankId FROM temp.tb_m_tl_ids WHERE rankId IS NOT NULL ORDER BY 1",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(m, what, err);
    return metrics_read_int64(m->db, q, what, 1, &tl->ranks, &tl->n, err);
}

tb_status torch_links_open(const metric_ctx *m, const char *what, const char *rows_of, torch_links *tl,
                           tb_error *err)
{
    *tl = (torch_links){0};
    if (rows_of) {
        char *q = sqlite3_mprintf("SELECT 1 FROM \"%w\" WHERE rankId IS NOT NULL LIMIT 1", rows_of);
        if (!q)
            return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
        int64_t v = 0;
        int any = db_one_int(m->db, q, &v);
        sqlite3_free(q);
        if (any <= 0)
            return any < 0 ? db_fail(m, what, err) : TB_OK;
    }
    tb_status rc = make_links(m, what, err);
    if (!rc)
        rc = read_ranks(m, what, tl, err);
    if (!rc && tl->n)
        rc = make_calls(m, what, err);
    return rc;
}

void torch_links_names(const torch_links *tl, int64_t rank, const char **ids, const char **calls)
{
    size_t lo = 0, hi = tl->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tl->ranks[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    int linked = lo < tl->n && tl->ranks[lo] == rank;
    *ids = linked ? "temp.tb_m_tl_ids" : "CONNECTION_IDS";
    *calls = linked ? "temp.tb_m_tl_call" : "PYTORCH_API";
}

void torch_links_finish(torch_links *tl)
{
    free(tl->ranks);
    *tl = (torch_links){0};
}

tb_status torch_links_each_rank(const metric_ctx *m, const char *what, const char *rows_of, const char *ranks_sql,
                                torch_rank_fn fn, void *ctx, tb_error *err)
{
    torch_links tl;
    tb_status rc = torch_links_open(m, what, rows_of, &tl, err);
    sqlite3_stmt *q = NULL;
    if (!rc && sqlite3_prepare_v2(m->db, ranks_sql, -1, &q, NULL) != SQLITE_OK)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
    int s = SQLITE_DONE;
    while (!rc && (s = sqlite3_step(q)) == SQLITE_ROW)
        rc = fn(m, &tl, sqlite3_column_int64(q, 0), ctx, err);
    if (!rc && s != SQLITE_DONE)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
    sqlite3_finalize(q);
    torch_links_finish(&tl);
    return rc;
}
