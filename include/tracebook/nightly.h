/* SPDX-License-Identifier: MIT */
/*
 * nightly.h - the nightly applications: `compare` of two runs and the
 * history DB of nights (docs/nightly.md).
 */
#ifndef TRACEBOOK_NIGHTLY_H
#define TRACEBOOK_NIGHTLY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebook/error.h"
#include "tracebook/query.h"
#include "tracebook/session.h"

/*
 * `compare`: every report of spec run on two sessions, a base run and a new
 * one (each over its own window; when both have one, step k of the base
 * meets step k + new iteration_id - base iteration_id of the new run);
 * rows matched by the report's key (`key:`, after `normalize:`), numbers
 * set side by side (base, new, delta, ratio), rows found in one run only
 * listed as added or removed, and the `regressions:` rules (default: time
 * columns worse when higher by 5% and 1 us, over 10 calls, past a noise
 * floor of the run's step time and steps' spread) marking regressions and
 * improvements (docs/spec.md, docs/nightly.md). Writes
 * `<out_dir>/<report id>_compare.csv` (and .json, as the report's outputs
 * ask), `compare.xlsx`, `compare.html` and `<out_dir>/tracebook_run.json`
 * listing every regression.
 */
typedef struct tb_compare_job {
    const tb_spec *spec;             /* borrowed */
    tb_time_unit unit;               /* typed time columns are compared in this unit */
    int64_t max_steps;               /* as tb_run_options.max_steps */
    unsigned formats;                /* TB_OUT_CSV, TB_OUT_JSON, TB_OUT_XLSX (compare.xlsx), TB_OUT_HTML
                                        (compare.html); 0: csv, xlsx, html and json when the spec asks */
    int csv_safe;                    /* as tb_report_job.csv_safe */
    const char *out_dir;             /* created when missing (one level) */
    void (*written)(void *ctx, const char *path); /* each file put in place (may be NULL) */
    void (*note)(void *ctx, const char *msg);     /* e.g. waiting for another run's folder lock (may be NULL) */
    void *ctx;
} tb_compare_job;

/* One regression as the command lists it: texts cut to fit (ending in "...") when longer. */
typedef struct tb_compare_change {
    char report[64];                 /* the report's id */
    char key[512];                   /* the row's key columns joined by " | " */
    char column[128];                /* the column's header */
    double base, value;              /* the base run's and the new run's values, in the column's unit */
    double ratio;                    /* value / base; NAN when base is 0 */
    int decimals;                    /* digits after the point that keep the column's precision (ns of a time) */
} tb_compare_change;

/* One change as a line of text: "REPORT: KEY: COLUMN BASE -> NEW (xRATIO)", the values to their
 * column's precision (trailing zeros dropped), the ratio to 4 decimals (left out when base is 0). */
void tb_compare_change_text(const tb_compare_change *c, char *buf, size_t n);

#define TB_COMPARE_TOP 10

typedef struct tb_compare_result {
    size_t reports;                  /* reports compared */
    size_t skipped;                  /* reports that ran on neither side (`requires` not met) */
    uint64_t matched, added, removed;/* rows, all reports */
    uint64_t regressions;            /* rule firings where the new run is worse */
    uint64_t improvements;           /* rule firings where it is better */
    tb_compare_change top[TB_COMPARE_TOP]; /* the largest regressions, largest relative change first */
    size_t n_top;
} tb_compare_result;

/* Runs the comparison and writes its outputs; *res tells what was found. */
tb_status tb_compare_write(tb_session *base, tb_session *new, const tb_compare_job *job, tb_compare_result *res,
                           tb_error *err);

/*
 * History: a SQLite DB of nights (docs/nightly.md#the-history-db). `history
 * add` runs a spec on one night's DB and appends its report rows with the
 * night's metadata in one transaction (two jobs appending at once both
 * land: the second waits for the first). `history report` sets the nights
 * side by side per key and column, and judges each night against the
 * median and MAD of the nights before it.
 */
typedef struct tb_history_add_job {
    const char *history;             /* the history DB: created when missing */
    const tb_spec *spec;             /* borrowed (the night's DB, inputs and window: the session's) */
    const char *const *params;       /* --param overrides, as tb_run_options */
    size_t n_params;
    int64_t max_steps;
    const char *label;               /* NULL: the data's start time, UTC YYYY-MM-DDThh:mm:ssZ */
    const char *const *meta;         /* KEY=VALUE, kept with the night */
    size_t n_meta;
    int64_t keep;                    /* > 0: then keep only the newest keep nights */
    void (*note)(void *ctx, const char *msg); /* skipped reports, nights removed (may be NULL) */
    void *ctx;
} tb_history_add_job;

typedef struct tb_history_added {
    char label[256];                 /* the night's label */
    size_t reports;                  /* reports stored (skipped ones are recorded, not counted) */
    uint64_t rows;                   /* rows stored */
    size_t nights;                   /* nights in the history now */
    size_t removed;                  /* nights the retention removed */
} tb_history_added;

tb_status tb_history_add(tb_session *s, const tb_history_add_job *job, tb_history_added *res, tb_error *err);

/* Removes the nights labelled labels[0..n) (all must exist) and then, with
 * keep > 0, all but the newest keep nights. *removed: the count. */
tb_status tb_history_remove(const char *history, const char *const *labels, size_t n, int64_t keep, size_t *removed,
                            tb_error *err);

/* Lists the nights, oldest first, as a console table on out (or csv/json
 * with format TB_OUT_CSV / TB_OUT_JSON). */
tb_status tb_history_list(const char *history, unsigned format, FILE *out, tb_error *err);

typedef struct tb_history_report_job {
    const char *history;             /* opened read-only */
    const tb_spec *spec;             /* its reports (by id) give keys, normalisation and rules */
    int64_t last;                    /* > 0: the newest last nights are shown (all are judged from) */
    tb_time_unit unit;
    unsigned formats;                /* TB_OUT_CSV, TB_OUT_JSON, TB_OUT_XLSX, TB_OUT_HTML (trend.html); 0: csv,
                                        xlsx, html and json when asked */
    int csv_safe;                    /* as tb_report_job.csv_safe */
    const char *out_dir;
    void (*written)(void *ctx, const char *path);
    void (*note)(void *ctx, const char *msg);
    void *ctx;
} tb_history_report_job;

typedef struct tb_history_result {
    size_t reports;                  /* reports with rows in the history */
    size_t nights;                   /* nights shown */
    char latest[256];                /* the newest night's label */
    uint64_t regressions;            /* the newest night's */
    uint64_t improvements;
    uint64_t flagged;                /* regressions of every night shown */
} tb_history_result;

tb_status tb_history_report(const tb_history_report_job *job, tb_history_result *res, tb_error *err);

#endif
