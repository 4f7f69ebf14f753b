/* SPDX-License-Identifier: MIT */
/*
 * baseline.h - `report --base`: the rows of the base run beside this run's
 * (private to report/).
 *
 * A report with `baseline: true` (and a `key:`) runs first on the base
 * run's session and on this run's, into memory (baseline_collect), and the
 * two are checked to match: the same columns, each key once, every key of
 * one run in the other. The job then wraps each sink it opens for the
 * report (baseline_wrap): a row of the report becomes a row per figure
 * (each column that is no key): its key, the figure's header, this run's
 * value and the base run's, the change (new - base, exact in the figure's
 * digits) and the ratio (new / base, to 4 decimals); a text figure has no
 * change nor ratio.
 */
#ifndef TB_REPORT_BASELINE_H
#define TB_REPORT_BASELINE_H

#include "query/runner.h"
#include "spec/spec.h"
#include "tracebook/error.h"
#include "tracebook/output.h"
#include "tracebook/query.h"
#include "tracebook/session.h"

typedef struct baseline baseline;

/* What a report set beside the base run holds (the page's section says it). */
#define BASE_TEXT                                                                                             \
    "Set beside the base run (report --base): a row per rank and figure, with this run's value, the base "      \
    "run's, the change (this run's minus the base's, in the figure's unit and digits) and the ratio (this "   \
    "run's over the base's, to 4 decimals; empty when the base is 0). A text figure has no change nor ratio."

/*
 * Runs each report of o (its specs, only, params, unit, window) that has
 * `baseline: true` on base (the base run's session; named base_name in
 * messages) and on o->db (this run, replaying a scoped session when
 * replay), and checks that their rows match. A run with no such report,
 * columns that differ, a key twice or a key one run lacks is TB_ERR_USAGE
 * naming the report, the key and base_name. *out: new (baseline_free).
 */
tb_status baseline_collect(tb_session *base, const char *base_name, const tb_run_options *o, int replay,
                           baseline **out, tb_error *err);
void baseline_free(baseline *b);

/*
 * Wraps inner, a sink of report rep, when rep has base rows in b (else *out
 * = inner). Takes ownership of inner; destroying *out destroys it.
 */
tb_status baseline_wrap(const baseline *b, const tb_spec_report *rep, tb_sink *inner, tb_sink **out, tb_error *err);

/* 1 when rep's rows are set beside the base run's (baseline_wrap wraps its sinks). */
int baseline_has(const baseline *b, const tb_spec_report *rep);

/* The sink baseline_wrap wrapped when s is such a wrapper, else s (borrowed). */
tb_sink *baseline_inner(tb_sink *s);

#endif
