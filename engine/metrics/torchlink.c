/* SPDX-License-Identifier: MIT */
/*
 * torchlink.c - a torch_npu timeline's PyTorch calls linked to their device
 * tasks, made when a computed table reads them (see torchlink.h).
 *
 * torch_npu's DB links each PyTorch call to the tasks it launched:
 * PYTORCH_API.connectionId is an id of CONNECTION_IDS, whose rows give the
 * connection ids of those tasks. A timeline (trace_view.json) has the same
 * links as its async_npu flows (torch_to_npu), which the load keeps in
 * TB_FLOW as they are: turning them into rows at load time would cost every
 * load of a timeline a pass over its biggest tables, for the few tables
 * that read them. They are made here instead, once per run, for every rank
 * that has async_npu flows and no CONNECTION_IDS rows, reading the stored
 * (window-free) tables, so that the ids are those of the whole rank:
 *   - a flow's start gives the PyTorch call: the shortest PYTORCH_API slice
 *     of the flow's thread that encloses it (ends included; the first read
 *     among equally short ones); its finish gives the task: the
 *     latest-starting TASK of the flow's process that encloses it (the first
 *     read among those starting together);
 *   - every call without a connectionId that reaches one or more tasks with
 *     a connection id gets an id, numbered per rank from 0 in the order of
 *     the calls' starts (then as read), with one row (id, connectionId,
 *     rankId) per distinct connection id of its tasks: temp.tb_m_tl_ids;
 *   - temp.tb_m_tl_call holds, for each build (the window it runs in), the
 *     linked calls in the window as PYTORCH_API rows with their ids. A call
 *     with a connectionId of its own links nothing: its rank has no
 *     CONNECTION_IDS rows.
 * Ranks with CONNECTION_IDS rows (a DB's) are read as stored.
 */
#include <stdlib.h>

#include "metrics/torchlink.h"

static tb_status db_fail(const metric_ctx *m, const char *what, tb_error *err)
{
    return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
}

/* One integer from sql: 1 with *v set, 0 without a row, -1 on failure. */
static int one_int(const metric_ctx *m, const char *sql, int64_t *v)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(m->db, sql, -1, &q, NULL) != SQLITE_OK)
        return -1;
    int s = sqlite3_step(q), got = s == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL;
    if (got)
        *v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return s == SQLITE_ROW || s == SQLITE_DONE ? got : -1;
}

/* The links of every rank that needs them, from the flows of category cat
 * (the async_npu string id): temp.tb_m_tl_link (a call per id) and
 * temp.tb_m_tl_ids (the CONNECTION_IDS rows). The flows are probed from the
 * big tables through small indexes on the flows. */
static const char links_sql[] =
    "CREATE TEMP TABLE tb_m_tl_flow (rankId INTEGER, gtid INTEGER, fromNs INTEGER, toPid INTEGER, toNs INTEGER);"
    "INSERT INTO tb_m_tl_flow SELECT f.rankId, ((f.fromPid << 32) | (f.fromTid & 4294967295)), f.fromNs, f.toPid,"
    "  f.toNs FROM main.TB_FLOW f WHERE f.cat = %lld AND f.fromNs IS NOT NULL AND f.toNs IS NOT NULL"
    "  AND NOT EXISTS (SELECT 1 FROM main.CONNECTION_IDS c WHERE c.rankId IS f.rankId);"
    "CREATE INDEX temp.tb_m_tl_flow_from ON tb_m_tl_flow(gtid, rankId, fromNs);"
    "CREATE INDEX temp.tb_m_tl_flow_to ON tb_m_tl_flow(toPid, rankId, toNs);"
    "CREATE TEMP TABLE tb_m_tl_from AS SELECT frow, prow FROM ("
    "  SELECT f.rowid AS frow, p.rowid AS prow,"
    "   row_number() OVER (PARTITION BY f.rowid ORDER BY p.endNs - p.startNs, p.rowid) AS k"
    "  FROM main.PYTORCH_API p CROSS JOIN tb_m_tl_flow f ON f.gtid = p.globalTid AND f.rankId IS p.rankId"
    "   AND f.fromNs BETWEEN p.startNs AND p.endNs) WHERE k = 1;"
    "CREATE TEMP TABLE tb_m_tl_to AS SELECT frow, conn FROM ("
    "  SELECT f.rowid AS frow, t.connectionId AS conn,"
    "   row_number() OVER (PARTITION BY f.rowid ORDER BY t.startNs DESC, t.rowid) AS k"
    "  FROM main.TASK t CROSS JOIN tb_m_tl_flow f ON f.toPid = t.globalPid AND f.rankId IS t.rankId"
    "   AND f.toNs BETWEEN t.startNs AND t.endNs) WHERE k = 1;"
    "CREATE TEMP TABLE tb_m_tl_pair AS SELECT f.rankId AS rankId, a.prow AS prow, b.conn AS conn"
    "  FROM tb_m_tl_from a JOIN tb_m_tl_to b ON b.frow = a.frow JOIN tb_m_tl_flow f ON f.rowid = a.frow"
    "  WHERE b.conn IS NOT NULL;"
    "CREATE INDEX temp.tb_m_tl_pair_prow ON tb_m_tl_pair(prow);"
    "CREATE TEMP TABLE tb_m_tl_link AS SELECT o.rankId AS rankId, o.prow AS prow, p.globalTid AS gtid,"
    "  p.startNs AS startNs, p.endNs AS endNs, p.name AS name,"
    "  row_number() OVER (PARTITION BY o.rankId ORDER BY p.startNs, o.prow) - 1 AS id"
    "  FROM (SELECT DISTINCT rankId, prow FROM tb_m_tl_pair) o JOIN main.PYTORCH_API p ON p.rowid = o.prow"
    "  WHERE p.connectionId IS NULL;"
    "CREATE INDEX temp.tb_m_tl_link_call ON tb_m_tl_link(gtid, startNs, endNs);"
    "CREATE TEMP TABLE tb_m_tl_ids (id INTEGER, connectionId INTEGER, rankId INTEGER);"
    "INSERT INTO tb_m_tl_ids SELECT DISTINCT c.id, l.conn, c.rankId FROM tb_m_tl_link c"
    "  JOIN tb_m_tl_pair l ON l.prow = c.prow ORDER BY c.rankId, c.id, l.conn;"
    "CREATE INDEX temp.tb_m_tl_ids_conn ON tb_m_tl_ids(rankId, connectionId);"
    "DROP TABLE tb_m_tl_flow; DROP TABLE tb_m_tl_from; DROP TABLE tb_m_tl_to; DROP TABLE tb_m_tl_pair;";

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
    int64_t v = 0;
    int windowed = one_int(m, "SELECT 1 FROM temp.sqlite_master WHERE type = 'view' AND name = 'PYTORCH_API'", &v);
    if (windowed < 0)
        return db_fail(m, what, err);
    char *sql = sqlite3_mprintf(calls_sql, windowed ? calls_window : calls_all);
    if (!sql)
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
    tb_status rc = metrics_exec(m, what, sql, err);
    sqlite3_free(sql);
    return rc;
}

static tb_status make_links(const metric_ctx *m, const char *what, tb_error *err)
{
    int64_t v = 0;
    int made = one_int(m, "SELECT 1 FROM temp.sqlite_master WHERE type = 'table' AND name = 'tb_m_tl_ids'", &v);
    if (made)
        return made < 0 ? db_fail(m, what, err) : TB_OK;
    int64_t cat = 0;
    int has = one_int(m, "SELECT id FROM main.STRING_IDS WHERE value = 'async_npu'", &cat);
    if (has < 0)
        return db_fail(m, what, err);
    char *sql = has ? sqlite3_mprintf(links_sql, (long long)cat)
                    : sqlite3_mprintf("CREATE TEMP TABLE tb_m_tl_link (rankId INTEGER, prow INTEGER, gtid INTEGER,"
                                      "  startNs INTEGER, endNs INTEGER, name INTEGER, id INTEGER);"
                                      "CREATE TEMP TABLE tb_m_tl_ids (id INTEGER, connectionId INTEGER, "
                                      "  rankId INTEGER);");
    if (!sql)
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
    tb_status rc = metrics_exec(m, what, sql, err);
    sqlite3_free(sql);
    return rc;
}

static tb_status read_ranks(const metric_ctx *m, const char *what, torch_links *tl, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(m->db, "SELECT DISTINCT rankId FROM temp.tb_m_tl_ids WHERE rankId IS NOT NULL ORDER BY 1",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(m, what, err);
    tb_status rc = TB_OK;
    size_t cap = 0;
    int s;
    while ((s = sqlite3_step(q)) == SQLITE_ROW) {
        if (tl->n == cap) {
            size_t c = cap ? cap * 2 : 8;
            int64_t *p = realloc(tl->ranks, c * sizeof *p);
            if (!p) {
                rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
                break;
            }
            tl->ranks = p;
            cap = c;
        }
        tl->ranks[tl->n++] = sqlite3_column_int64(q, 0);
    }
    if (!rc && s != SQLITE_DONE)
        rc = db_fail(m, what, err);
    sqlite3_finalize(q);
    return rc;
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
        int any = one_int(m, q, &v);
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
