/* SPDX-License-Identifier: MIT */
/*
 * query.h - the query runtime: an iteration window, and the runner that
 * executes the reports of specs (or one ad-hoc statement) in a sandbox over
 * a unified DB, handing the rows to sinks (tracebook/output.h).
 */
#ifndef TRACEBOOK_QUERY_H
#define TRACEBOOK_QUERY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebook/error.h"
#include "tracebook/output.h"
#include "tracebook/spec.h"

struct sqlite3;

/*
 * An iteration window: iterations [iteration_id, iteration_id + count - 1]
 * of model model_id; model TB_STEP_MODEL_ID (4294967295, tracebook/db.h) is step
 * mode (STEP_TIME). set = 0: the
 * whole run.
 */
typedef struct tb_window {
    int set;
    int64_t model_id;
    int64_t iteration_id;
    int64_t iteration_count;   /* >= 1 */
    /* rank_set = 1: only rank's rows, as if the DB held that rank alone (no
     * Rank ID column is written); alone or with the iterations above */
    int rank_set;
    int64_t rank;
} tb_window;

/*
 * Reads a window as a user writes it: the model, first iteration and count
 * as decimal texts, each NULL when not given (none given: the whole run,
 * set 0; count not given: 1). An iteration needs a model and a model an
 * iteration; a count needs both. TB_ERR_USAGE naming the option
 * (--model-id, --iteration-id, --iteration-count) otherwise.
 */
tb_status tb_window_parse(const char *model, const char *iteration, const char *count, tb_window *w,
                          tb_error *err);

/*
 * Opens the sink for one output of one report. format is one tb_out_format
 * bit; label is the window's iteration label ("" without a window). Returns
 * the new sink in *out (the runner destroys it), or *out = NULL to skip the
 * format (a format this build does not write: say why through note).
 */
typedef tb_status (*tb_sink_open_fn)(void *ctx, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                                     const char *label, tb_sink **out, tb_error *err);

typedef struct tb_run_options {
    struct sqlite3 *db;              /* the run's connection to a unified DB (borrowed; the run reads
                                        only, and leaves no TEMP object, authorizer or handler on it) */
    const char *db_name;             /* what messages call the DB (its path) */
    const tb_spec *const *specs;     /* borrowed */
    size_t n_specs;
    tb_window window;
    tb_time_unit unit;               /* typed time columns; TB_UNIT_US is msprof's */
    const char *const *params;       /* --param overrides: "name=value" or "report.name=value" */
    size_t n_params;
    unsigned formats;                /* --format: replaces every report's outputs; 0 = the spec's */
    int64_t max_steps;               /* SQLite VM step budget per report; 0 = default */
    const char *const *only;         /* run only the reports with these ids (NULL = all) */
    size_t n_only;
    tb_sink_open_fn open_sink;
    void *sink_ctx;
    void (*note)(void *ctx, const char *msg); /* skipped reports, fallbacks (may be NULL) */
    void *ctx;
    /* Optional, called with sink_ctx: after a sink finished (before it is
     * destroyed), and after each report, run or skipped (skipped: the
     * reason, else NULL). */
    void (*sink_done)(void *ctx, const tb_spec_report *rep, tb_sink *sink);
    void (*report_done)(void *ctx, const tb_spec_report *rep, const char *skipped, uint64_t rows);
} tb_run_options;

typedef struct tb_run_result {
    size_t reports_run;
    size_t reports_skipped;          /* `requires` not met */
    uint64_t rows;                   /* rows written, all reports */
    char window_label[48];           /* "" without a window */
    uint64_t warnings;               /* tb_report_write: the load's (TB_WARNING) and the run's warnings */
    int window_missed;               /* tb_run_options.window_miss_ok: 1 no rank of the DB has the window,
                                        2 a rank has its first iteration but not its last */
    uint64_t findings[TB_N_SEVERITIES]; /* tb_report_write: the advisor rules' findings by severity
                                           (tracebook/spec.h; docs/advisor.md) */
} tb_run_result;

/* The default VM step budget of one report (about two minutes of SQLite work). */
#define TB_DEFAULT_MAX_STEPS 5000000000LL

/* The largest string or blob report SQL may make (bytes). */
#define TB_MAX_VALUE_BYTES (256 * 1024 * 1024)

/*
 * Runs every report of every spec, in order, over opt->db. Report SQL
 * runs read-only under an authorizer (SELECT only: no
 * writes, ATTACH, PRAGMA changes or extension loading) and a step budget.
 * Stops at the first failing report; outputs of earlier reports stay.
 */
tb_status tb_report_run(const tb_run_options *opt, tb_run_result *res, tb_error *err);

/*
 * Runs one ad-hoc SQL statement in the same sandbox, window and unit rules
 * as a report, writing to sink (borrowed; finish is called, destroy is not).
 */
tb_status tb_query_run(const tb_run_options *opt, const char *sql, tb_sink *sink, uint64_t *rows, tb_error *err);

#endif
