/* SPDX-License-Identifier: MIT */
/*
 * hta_window.c - HTA's time domain and its window (Trace.
 * _filter_irrelevant_gpu_kernels): which events of a rank the tables that
 * reproduce Holistic Trace Analysis count (docs/metrics.md, "HTA's window").
 *
 * The window applies to a rank with 2 or more ProfilerStep#N names (counted
 * per rank: a load may join ranks of other runs, and a rank's numbers must
 * not depend on what is loaded with it). It has two forms, by the rank's
 * device type as HTA infers it from the trace's names:
 *
 *   - a GPU trace: a host event stays when it starts before the last step's
 *     start (hta.drop_last_step; else at or before that step's end), a
 *     device task when the call that launched it stays; a task without a
 *     launching call stays only without hta.linked_only;
 *   - an MTIA trace (its distributedInfo.backend names mtia:hccl, or its
 *     runtime calls hold "runFunction - job_prep_and_submit_for_execution"
 *     and none is cudaLaunchKernel or hipLaunchKernel): HTA's own MTIA cut,
 *     the last step included. A host
 *     event stays when it is a CPU event to HTA (an operator, a user
 *     annotation, a runtime call) lying wholly inside [first start, last
 *     end] of the rank's host ProfilerSteps; a device task when its
 *     launching call stays, or when it is a memory slice (a name starting
 *     with Memcpy, Memset, hipMemcpy, hipMemset or dma) starting inside one
 *     of the rank's ProfilerStep slices, ends included. Other host events
 *     (GPU annotations, Python functions, ...) do not stay.
 *
 * Times are HTA's: ts and dur read as float64 µs, end = ts + dur in float64,
 * ts rounded up and end down to whole µs (hta.round_us), or exact ns.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/hta.h"
#include "metrics/metrics.h"
#include "util/sort.h"
#include "util/vec.h"

/* ---- HTA's float microseconds --------------------------------------------- */

/*
 * The double nearest to ns / 1000, i.e. what Python's float() makes of the
 * trace's decimal µs value. Up to 2^53 ns, (double)ns is exact and one IEEE
 * division rounds once. Above (absolute timestamps), q + r / 1000 with q the
 * whole µs (exact: q < 2^53) rounds like the exact sum: q >= 2^43, so the
 * rounding points near the sum are multiples of 2^-10; r / 1000 is either
 * such a multiple itself (r a multiple of 125: computed exactly) or at least
 * 8e-6 away from every one, far more than its own rounding error.
 */
static double us_double(int64_t ns)
{
    const int64_t exact = (int64_t)1 << 53;
    if (ns >= -exact && ns <= exact)
        return (double)ns / 1000.0;
    int64_t q = ns / 1000, r = ns % 1000;
    if (r < 0) {
        q--;
        r += 1000;
    }
    return (double)q + (double)r / 1000.0;
}

void hta_time(int round_us, int64_t s, int64_t e, int64_t *ts, int64_t *te)
{
    if (!round_us) {
        *ts = s;
        *te = e;
        return;
    }
    double t = us_double(s);
    double end = t + us_double(e - s);
    *ts = (int64_t)ceil(t);
    *te = (int64_t)floor(end);
}

/* ---- the steps of each rank ------------------------------------------------- */

int hta_memory_name(const char *name)
{
    if (!name)
        return 0;
    if (!strncmp(name, "dma", 3))
        return 1;
    if (!strncmp(name, "hip", 3))
        name += 3;
    return !strncmp(name, "Memcpy", 6) || !strncmp(name, "Memset", 6);
}

/*
 * Marks the ranks HTA takes for MTIA (its infer_gpu_type): a trace whose
 * distributedInfo.backend is text holding "mtia:hccl" (the TB_PROFILE_META
 * row the Kineto importer keeps), else one whose runtime calls include
 * "runFunction - job_prep_and_submit_for_execution" and neither
 * cudaLaunchKernel (NVIDIA) nor hipLaunchKernel (AMD), which HTA tests
 * first. HTA applies its first rank's type to every rank; tracebook decides
 * per rank.
 */
static tb_status hta_mtia_ranks(hta_ctx *h, tb_error *err)
{
    static const char sql[] =
        "SELECT r, max(meta), max(run), max(gpu) FROM ("
        " SELECT ifnull(c.rankId, 0) AS r, 0 AS meta,"
        "        n.value = 'runFunction - job_prep_and_submit_for_execution' AS run,"
        "        n.value IN ('cudaLaunchKernel', 'hipLaunchKernel') AS gpu "
        " FROM CANN_API c JOIN STRING_IDS n ON n.id = c.name "
        " WHERE n.value IN ('runFunction - job_prep_and_submit_for_execution', 'cudaLaunchKernel', "
        "                   'hipLaunchKernel') "
        " UNION ALL SELECT ifnull(rankId, 0), 1, 0, 0 FROM TB_PROFILE_META "
        " WHERE name = 'distributedInfo' AND json_valid(value) AND json_type(value, '$.backend') = 'text' "
        "   AND instr(json_extract(value, '$.backend'), 'mtia:hccl') > 0) "
        "GROUP BY 1";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h->m->db, sql, -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        if (!sqlite3_column_int(st, 1) && (!sqlite3_column_int(st, 2) || sqlite3_column_int(st, 3)))
            continue;
        for (size_t i = 0; i < h->ncuts; i++)
            if (h->cuts[i].rank == sqlite3_column_int64(st, 0))
                h->cuts[i].mtia = 1;
    }
    sqlite3_finalize(st);
    if (s != SQLITE_DONE)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    return TB_OK;
}

/* Ends the cut of the rank being read: its distinct step names. */
static void close_cut(hta_ctx *h, int64_t *names, size_t *nnames)
{
    if (h->ncuts) {
        h->cuts[h->ncuts - 1].nsteps = sort_unique_i64(names, *nnames);
        h->cuts[h->ncuts - 1].nspan = h->nspans - h->cuts[h->ncuts - 1].span0;
    }
    *nnames = 0;
}

/* Adds one ProfilerStep slice [ts, te] of rank to h's cuts; cpu: a host one. */
static int add_step(hta_ctx *h, size_t *capcuts, size_t *capspans, int64_t rank, int64_t ts, int64_t te, int cpu)
{
    if (!h->ncuts || h->cuts[h->ncuts - 1].rank != rank) {
        step_cut c = {.rank = rank, .last_start = ts, .last_end = te, .cpu_first = INT64_MAX,
                      .cpu_last_end = INT64_MIN, .span0 = h->nspans};
        if (VEC_PUSH(h->cuts, h->ncuts, *capcuts, c))
            return -1;
    }
    step_cut *c = &h->cuts[h->ncuts - 1];
    c->last_start = ts > c->last_start ? ts : c->last_start;
    c->last_end = te > c->last_end ? te : c->last_end;
    if (cpu) {
        c->cpu_first = ts < c->cpu_first ? ts : c->cpu_first;
        c->cpu_last_end = te > c->cpu_last_end ? te : c->cpu_last_end;
    }
    return VEC_PUSH(h->spans, h->nspans, *capspans, ((hta_span){ts, te}));
}

tb_status hta_steps(hta_ctx *h, tb_error *err)
{
    static const char sql[] =
        "WITH ps(id) AS (SELECT id FROM STRING_IDS WHERE value GLOB 'ProfilerStep#[0-9]*') "
        "SELECT rankId, startNs, endNs, name, 1 FROM PYTORCH_API "
        " WHERE name IN (SELECT id FROM ps) AND startNs IS NOT NULL AND endNs IS NOT NULL "
        "UNION ALL "
        "SELECT rankId, startNs, endNs, name, 0 FROM TB_EVENT "
        " WHERE ph = 'X' AND name IN (SELECT id FROM ps) AND startNs IS NOT NULL AND endNs IS NOT NULL "
        "ORDER BY 1";
    sqlite3_stmt *st = NULL;
    int64_t *names = NULL;
    size_t nnames = 0, capnames = 0, capcuts = 0, capspans = 0;
    tb_status rc = TB_OK;
    if (sqlite3_prepare_v2(h->m->db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
        goto done;
    }
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(st, 0), ts, te;
        hta_time(h->o.round_us, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2), &ts, &te);
        if (h->ncuts && h->cuts[h->ncuts - 1].rank != rank)
            close_cut(h, names, &nnames);
        if (add_step(h, &capcuts, &capspans, rank, ts, te, sqlite3_column_int(st, 4)) ||
            VEC_PUSH(names, nnames, capnames, sqlite3_column_int64(st, 3))) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
            goto done;
        }
    }
    if (s != SQLITE_DONE) {
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
        goto done;
    }
    close_cut(h, names, &nnames);
    rc = hta_mtia_ranks(h, err);
done:
    sqlite3_finalize(st);
    free(names);
    return rc;
}

void hta_window_free(hta_ctx *h)
{
    free(h->cuts);
    free(h->spans);
    h->cuts = NULL;
    h->spans = NULL;
    h->ncuts = h->nspans = 0;
}

/* ---- the window --------------------------------------------------------------- */

const step_cut *hta_cut(const hta_ctx *h, int64_t rank)
{
    for (size_t i = 0; i < h->ncuts; i++)
        if (h->cuts[i].rank == rank)
            return &h->cuts[i];
    return NULL;
}

int hta_host_kept(const hta_ctx *h, const step_cut *cut, int64_t ts, int64_t te, int cpu)
{
    if (!cut || cut->nsteps < 2)
        return 1;
    if (cut->mtia)
        return cpu && ts >= cut->cpu_first && te <= cut->cpu_last_end;
    return h->o.drop_last ? ts < cut->last_start : ts <= cut->last_end;
}

/* 1 when ts lies in one of the cut's ProfilerStep slices, ends included. */
static int in_step(const hta_ctx *h, const step_cut *cut, int64_t ts)
{
    for (size_t i = cut->span0; i < cut->span0 + cut->nspan; i++)
        if (ts >= h->spans[i].s && ts <= h->spans[i].e)
            return 1;
    return 0;
}

/* Whether the window keeps device task e (in HTA's domain, launch ls..le). */
static int dev_kept(const hta_ctx *h, const step_cut *cut, const dev_ev *e, int64_t ls, int64_t le)
{
    int kept_launch = e->linked && hta_host_kept(h, cut, ls, le, 1);
    if (cut->mtia && e->memname && in_step(h, cut, e->s))
        return 1;
    return h->o.linked_only ? kept_launch : (!e->linked || kept_launch);
}

size_t hta_filter(const hta_ctx *h, int64_t rank, evvec *ev, hta_cut_info *ci)
{
    const step_cut *cut = hta_cut(h, rank);
    int filter = cut && cut->nsteps >= 2;
    size_t k = 0;
    *ci = (hta_cut_info){.cut = cut};
    for (size_t i = 0; i < ev->n; i++) {
        dev_ev e = ev->v[i];
        int64_t ls = 0, le = 0;
        if (e.linked)
            hta_time(h->o.round_us, e.launch, e.launch_end, &ls, &le);
        hta_time(h->o.round_us, e.s, e.e, &e.s, &e.e);
        e.launch = ls;
        e.launch_end = le;
        if (filter && !dev_kept(h, cut, &e, ls, le)) {
            ci->unlinked += !e.linked;
            ci->late += e.linked;
            continue;
        }
        ev->v[k++] = e;
    }
    ev->n = k;
    return k;
}

void hta_no_row(const hta_ctx *h, int64_t rank, const evvec *ev, const hta_cut_info *ci)
{
    if (!ev->read)
        metrics_notef(h->m, "%s: rank %lld: no row: the rank has no device tasks or communication ops", h->what,
              (long long)metrics_rank_shown(h->m, rank));
    else if (ci->cut && ci->cut->mtia)
        metrics_notef(h->m,
              "%s: rank %lld: no row: of its %zu device tasks and its %zu steps, %zu have no launching call "
              "(metrics.hta.linked_only) and %zu were launched outside its steps (HTA's MTIA window)",
              h->what, (long long)metrics_rank_shown(h->m, rank), ev->read, ci->cut->nsteps, ci->unlinked,
              ci->late);
    else
        metrics_notef(h->m,
              "%s: rank %lld: no row: of its %zu device tasks and its %zu steps, %zu have no launching call "
              "(metrics.hta.linked_only) and %zu were launched after its last step began "
              "(metrics.hta.drop_last_step)",
              h->what, (long long)metrics_rank_shown(h->m, rank), ev->read, ci->cut ? ci->cut->nsteps : (size_t)0,
              ci->unlinked, ci->late);
}

int hta_prepare(const hta_ctx *h, int64_t rank, evvec *ev)
{
    hta_cut_info ci;
    if (hta_filter(h, rank, ev, &ci))
        return 1;
    hta_no_row(h, rank, ev, &ci);
    return 0;
}
