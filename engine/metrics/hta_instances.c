/* SPDX-License-Identifier: MIT */
/*
 * hta_instances.c - the instances of an annotation as Holistic Trace
 * Analysis numbers them for its instance_id (critical_path_analysis): the
 * events of the rank whose name holds the annotation, of every category,
 * taken in the order of HTA's frame of the rank (docs/metrics.md,
 * "Choosing the window and the data-load events").
 *
 * HTA's frame is the trace file's events in file order, until its window
 * (hta_window.c) cuts a rank of 2 or more steps: then the frame is the
 * device events it keeps (HTA's GPU kernels: a stream and a correlation of
 * 0 or more, or an Event Sync or Context Sync event), each once per kept
 * host event of its correlation, followed by the host events it keeps, in
 * file order. HTA's join (pandas 1.5's inner merge) puts the device events
 * of one correlation together, at the place of the first of them. So an
 * instance here is
 *
 *   - a host op or annotation (PYTORCH_API), a runtime call (CANN_API), a
 *     device task (TASK: kernels, memcpy, memset) or another complete
 *     slice (TB_EVENT: the device's gpu_user_annotation copies, cuda_sync
 *     events), its category not Trace;
 *   - kept as HTA's window keeps it; under the cut a device event once per
 *     kept host call of its correlation (CANN_API), none when it has none;
 *   - in the order of its fileOffset (the rows of a Kineto trace), under the
 *     cut the device events first, by the first fileOffset of their
 *     correlation among the rank's device tasks; rows without an offset
 *     (from a DB, an Ascend timeline) after them, in start order.
 */
#include <stdint.h>
#include <stdlib.h>

#include "db/ask.h"
#include "metrics/hta.h"
#include "metrics/metrics.h"
#include "util/sort.h"
#include "util/vec.h"

/* One row of the candidates' SQL, before the window. */
typedef struct cand {
    int64_t ts, te, name, ord, conn;
    unsigned char gpu, cpu, has_conn;
} cand;

typedef struct cand_read {
    const hta_ctx *h;
    cand *v;
    size_t n, cap;
} cand_read;

static int cand_row(sqlite3_stmt *st, void *ctx)
{
    cand_read *r = ctx;
    cand c = {.name = sqlite3_column_int64(st, 2), .ord = sqlite3_column_int64(st, 3),
              .gpu = (unsigned char)sqlite3_column_int(st, 4), .conn = sqlite3_column_int64(st, 5),
              .has_conn = sqlite3_column_type(st, 5) != SQLITE_NULL, .cpu = sqlite3_column_int(st, 6) < 2};
    hta_time(r->h->o.round_us, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), &c.ts, &c.te);
    return VEC_PUSH(r->v, r->n, r->cap, c);
}

/* "fileOffset" when table has that column, else "NULL": a DB written
 * before the column (TASK's and CANN_API's came later than the others')
 * has its rows numbered as rows without an offset. */
static const char *offset_of(sqlite3 *db, const char *table)
{
    return db_has_column(db, "main", table, "fileOffset") > 0 ? "fileOffset" : "NULL";
}

/* The rank's events whose name holds the annotation (?2), in HTA's order
 * (?3: the window cuts the rank, device events first). Columns: start,
 * end, name, rowid, device event, correlation, table. */
static tb_status read_cands(const hta_ctx *h, int64_t rank, const char *annotation, int cut, cand_read *r,
                            tb_error *err)
{
    static const char sql[] =
        "WITH n AS (SELECT id FROM STRING_IDS WHERE instr(value, ?2) > 0), "
        "sy AS (SELECT id FROM STRING_IDS WHERE value IN ('Event Sync', 'Context Sync')), "
        "tr AS (SELECT id FROM STRING_IDS WHERE value = 'Trace'), "
        "c(s, e, name, tbl, r, o, gpu, conn) AS ("
        " SELECT startNs, endNs, name, 0, rowid, %s, 0, NULL FROM PYTORCH_API "
        "  WHERE ifnull(rankId, 0) = ?1 AND name IN n "
        " UNION ALL SELECT startNs, endNs, name, 1, rowid, %s, "
        "  ifnull(streamId, -1) >= 0 AND ifnull(connectionId, -1) >= 0, connectionId FROM CANN_API "
        "  WHERE ifnull(rankId, 0) = ?1 AND name IN n "
        " UNION ALL SELECT startNs, endNs, name, 2, rowid, %s, name IN sy OR CASE WHEN json_valid(args) "
        "  THEN ifnull(json_type(args, '$.stream') IN ('integer', 'real') AND json_extract(args, '$.stream') >= 0 "
        "  AND json_type(args, '$.correlation') IN ('integer', 'real') "
        "  AND json_extract(args, '$.correlation') >= 0, 0) "
        "  ELSE 0 END, "
        "  CASE WHEN json_valid(args) AND json_type(args, '$.correlation') = 'integer' "
        "   THEN json_extract(args, '$.correlation') END FROM TB_EVENT "
        "  WHERE ifnull(rankId, 0) = ?1 AND name IN n AND ph = 'X' AND cat IS NOT NULL AND cat NOT IN tr "
        " UNION ALL SELECT startNs, endNs, name, 3, rowid, %s, "
        "  ifnull(streamId, -1) >= 0 AND ifnull(connectionId, -1) >= 0, connectionId FROM TASK "
        "  WHERE ifnull(rankId, 0) = ?1 AND name IN n), "
        "g AS (SELECT connectionId gc, min(%s) go FROM TASK WHERE ?3 AND ifnull(rankId, 0) = ?1 "
        "  AND streamId >= 0 AND connectionId IN (SELECT conn FROM c WHERE gpu) GROUP BY connectionId) "
        "SELECT s, e, name, r, gpu, conn, tbl FROM c LEFT JOIN g ON c.gpu AND g.gc = c.conn "
        "WHERE s IS NOT NULL AND e IS NOT NULL "
        "ORDER BY (?3 AND gpu) DESC, o IS NULL, CASE WHEN go < o THEN go ELSE o END, o, s, tbl, r";
    sqlite3 *db = h->m->db;
    const char *task = offset_of(db, "TASK");
    char *q = sqlite3_mprintf(sql, offset_of(db, "PYTORCH_API"), offset_of(db, "CANN_API"), offset_of(db, "TB_EVENT"),
                              task, task);
    sqlite3_stmt *st = NULL;
    if (!q)
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    int ok = sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK;
    sqlite3_free(q);
    if (!ok)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, rank);
    sqlite3_bind_text(st, 2, annotation, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, cut);
    return metrics_each_row(db, st, h->what, cand_row, r, err);
}

/* The index of conn in the sorted k[0..n), or n. */
static size_t find_conn(const int64_t *k, size_t n, int64_t conn)
{
    size_t i = sort_bound_i64(k, n, sizeof *k, 0, conn, 0);
    return i < n && k[i] == conn ? i : n;
}

/* Counts, for each correlation of k (sorted, distinct), the rank's host
 * calls of it that the window keeps: HTA's join of a device event with the
 * host events of its correlation. */
typedef struct call_count {
    const hta_ctx *h;
    const step_cut *cut;
    const int64_t *k;
    size_t nk;
    size_t *count;
} call_count;

static int count_row(sqlite3_stmt *st, void *ctx)
{
    call_count *c = ctx;
    size_t i = find_conn(c->k, c->nk, sqlite3_column_int64(st, 0));
    int64_t ts, te;
    hta_time(c->h->o.round_us, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2), &ts, &te);
    if (i < c->nk && hta_host_kept(c->h, c->cut, ts, te, 1))
        c->count[i]++;
    return 0;
}

static tb_status count_calls(const hta_ctx *h, int64_t rank, call_count *c, tb_error *err)
{
    /* the host calls: a call with a stream and a correlation is a device event to HTA */
    static const char sql[] = "SELECT connectionId, startNs, endNs FROM CANN_API WHERE ifnull(rankId, 0) = ?1 "
                              "AND connectionId IS NOT NULL AND startNs IS NOT NULL AND endNs IS NOT NULL "
                              "AND NOT (ifnull(streamId, -1) >= 0 AND connectionId >= 0)";
    return metrics_rows(h->m->db, h->what, sql, rank, count_row, c, err);
}

/* The distinct correlations of the device candidates, sorted, into *out. */
static int device_conns(const cand_read *r, int64_t **out, size_t *nk)
{
    int64_t *k = malloc((r->n + 1) * sizeof *k);
    size_t n = 0;
    if (!k)
        return -1;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].gpu && r->v[i].has_conn)
            k[n++] = r->v[i].conn;
    size_t m = sort_unique_i64(k, n);
    *out = k;
    *nk = m;
    return 0;
}

/* How many times HTA's frame holds candidate c: under the cut a device
 * event once per kept call of its correlation (on an MTIA rank once when
 * it has one), a host event once when the window keeps it. */
static size_t copies(const call_count *cc, const cand *c, int cut)
{
    if (!c->gpu)
        return (size_t)hta_host_kept(cc->h, cc->cut, c->ts, c->te, c->cpu);
    if (!cc->cut || cc->cut->nsteps < 2)
        return 1;
    size_t i = c->has_conn ? find_conn(cc->k, cc->nk, c->conn) : cc->nk;
    size_t n = i < cc->nk ? cc->count[i] : 0;
    return cut ? n : n > 0;
}

tb_status hta_instances(const hta_ctx *h, int64_t rank, const char *annotation, hta_inst **out, size_t *nout,
                        size_t *cap, tb_error *err)
{
    const step_cut *cut = hta_cut(h, rank);
    int grouped = cut && cut->nsteps >= 2 && !cut->mtia;
    cand_read r = {.h = h};
    call_count cc = {.h = h, .cut = cut};
    int64_t *k = NULL;
    tb_status rc = read_cands(h, rank, annotation, grouped, &r, err);
    if (!rc && cut && cut->nsteps >= 2) {
        if (device_conns(&r, &k, &cc.nk) || !(cc.count = calloc(cc.nk + 1, sizeof *cc.count)))
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
        cc.k = k;
        if (!rc && cc.nk)
            rc = count_calls(h, rank, &cc, err);
    }
    for (size_t i = 0; !rc && i < r.n; i++) {
        const cand *c = &r.v[i];
        hta_inst in = {c->ts, c->te, c->name, c->ord};
        for (size_t j = copies(&cc, c, grouped); !rc && j > 0; j--)
            if (VEC_PUSH(*out, *nout, *cap, in))
                rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    }
    free(r.v);
    free(k);
    free(cc.count);
    return rc;
}
