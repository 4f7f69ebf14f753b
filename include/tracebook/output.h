/* SPDX-License-Identifier: MIT */
/*
 * output.h - writing a report run's files.
 *
 * tb_report_write() runs specs (tb_report_run) with the engine's writers
 * behind it: for each report and format, `<dir>/<report id>[_<label>].csv`
 * or `.json` (label: the window's iteration label), console tables on the
 * given stream, and a run metadata file `<dir>/tracebook_run.json` (inputs,
 * window, unit, policy, version, the files of each report). Every file is
 * written under a temporary name and renamed when complete.
 */
#ifndef TRACEBOOK_OUTPUT_H
#define TRACEBOOK_OUTPUT_H

#include <stdio.h>

#include "tracebook/report.h"

typedef struct tb_report_job {
    tb_run_options run;             /* open_sink and sink_done are set by tb_report_write; report_done,
                                       when set, is called after each report with run.ctx */
    const char *out_dir;            /* created when missing (one level) */
    FILE *console;                  /* console tables go here (stdout) */
    const char *const *inputs;      /* what -dir named, for the metadata (borrowed) */
    size_t n_inputs;
    void (*written)(void *ctx, const char *path); /* each file put in place (may be NULL) */
} tb_report_job;

/* Runs job->run's specs and writes their outputs. */
tb_status tb_report_write(tb_report_job *job, tb_run_result *res, tb_error *err);

typedef struct tb_query_job {
    tb_run_options run;             /* db_path, window, unit, params, max_steps */
    const char *sql;
    unsigned format;                /* one of TB_OUT_CONSOLE, TB_OUT_CSV, TB_OUT_JSON */
    const char *out_path;           /* csv/json: write this file (atomically); NULL = to out */
    FILE *out;                      /* console, and csv/json without out_path */
    size_t max_rows;                /* console: rows printed, 0 = all */
} tb_query_job;

/* Runs job->sql (tb_query_run) and writes the result. *rows gets the row count. */
tb_status tb_query_write(const tb_query_job *job, uint64_t *rows, tb_error *err);

#endif
