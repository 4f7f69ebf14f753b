/* SPDX-License-Identifier: MIT */
/*
 * run.c - the entry of a run (tb_report_run, runner_run): every report of
 * every spec, each down the path its scope and the run ask for: written
 * from rows gathered from shards (runner_replay.c), its cluster tables'
 * part rows collected on a shard, rank by rank (runner_ranks.c), or over
 * the whole DB (runner.c). The pieces never call back here.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics/metrics.h"
#include "query/sandbox.h"
#include "spec/spec.h"
#include "query/runner_int.h"
#include "query/sqlfuncs.h"
#include "query/window.h"
#include "util/vec.h"
#include "tracebook/error.h"
#include "tracebook/query.h"
#include "tracebook/db.h"

tb_status tb_report_run(const tb_run_options *opt, tb_run_result *res, tb_error *err)
{
    return runner_run(opt, NULL, res, err);
}

tb_status runner_run(const tb_run_options *opt, const run_part *pt, tb_run_result *res, tb_error *err)
{
    runner r;
    if (!pt)
        pt = &runner_no_part;
    window_info wi = {0};
    memset(res, 0, sizeof *res);
    tb_status rc = runner_check_overrides(opt, err);
    if (rc)
        return rc;
    if ((rc = tb_specs_check_only(opt->specs, opt->n_specs, opt->only, opt->n_only, err)))
        return rc;
    if (pt->replay)
        return runner_replay_run(opt, res, err);
    rc = runner_start(&r, opt, pt, &wi, err);
    if (rc && r.db)
        rc = runner_limits_check(&r, "the run's window", rc, err);
    if (pt->window_held && opt->window.set)
        for (size_t i = 0; i < wi.n_held; i++)
            pt->window_held(opt->sink_ctx, runner_shown_id(pt, wi.held[i].rank), wi.held[i].first, wi.held[i].last);
    if (rc) {
        if (rc == TB_ERR_USAGE && pt->window_miss_ok && opt->window.set && (wi.miss || wi.broken)) {
            /* a shard none of whose ranks has the window: no rows of it; a
             * rank that has only its start: the gathered run fails */
            snprintf(res->window_label, sizeof res->window_label, "%s", wi.label);
            res->window_missed = wi.broken ? 2 : 1;
            rc = TB_OK;
        }
        goto done;
    }
    snprintf(res->window_label, sizeof res->window_label, "%s", wi.label);
    for (size_t s = 0; s < opt->n_specs && !rc; s++)
        for (size_t k = 0; k < opt->specs[s]->n_reports && !rc; k++) {
            const tb_spec_report *rep = &opt->specs[s]->reports[k];
            if (!runner_wanted(opt, rep->id))
                continue;
            char what[300];
            snprintf(what, sizeof what, "report '%s'", rep->id);
            if ((rc = runner_arm(&r, err)))
                break;
            if (rep->scope == TB_SCOPE_CLUSTER && pt->cluster_rows)
                rc = runner_cluster_collect(&r, opt->specs[s], rep, err);
            else
                /* a run of one rank already (rank_set) runs a rank-scope report as it is */
                rc = (rep->scope == TB_SCOPE_RANK && !opt->window.rank_set ? runner_run_report_ranks
                                                                            : runner_run_report)(
                    &r, opt->specs[s], rep, wi.label, res, err);
            rc = runner_limits_check(&r, what, rc, err);
        }
done:
    runner_release(&r, &wi);
    return rc;
}
