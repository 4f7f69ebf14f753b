/* SPDX-License-Identifier: MIT */
/*
 * report.h - the report job: specs run with the engine's writers behind
 * them and the run's metadata file (tracebook_run.json) beside the outputs;
 * an ad-hoc query written to a file; what an earlier run recorded; `info`.
 */
#ifndef TRACEBOOK_REPORT_H
#define TRACEBOOK_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebook/error.h"
#include "tracebook/query.h"
#include "tracebook/session.h"

/*
 * The report job: runs specs (tb_report_run) over the session's DB and
 * window with the engine's writers behind it: for each report and format, `<dir>/<report id>[_<label>].csv`
 * or `.json` (label: the window's iteration label), console tables on the
 * given stream, and a run metadata file `<dir>/tracebook_run.json` (inputs,
 * window, unit, policy, version, the files of each report; the inputs are
 * the session's). Every file is
 * written under a temporary name and renamed when complete.
 */
typedef struct tb_report_job {
    tb_run_options run;             /* specs, unit, params, formats, max_steps, only, note, report_done
                                       (called after each report with run.ctx); the connection and the
                                       window are the session's, open_sink and sink_done the job's */
    const char *out_dir;            /* created when missing (one level) */
    FILE *console;                  /* console tables go here (stdout) */
    int console_width;              /* console: texts longer than this many characters are cut in the
                                       middle (head...tail); 0 = 40 */
    void (*written)(void *ctx, const char *path); /* each file put in place (may be NULL) */
    int csv_safe;                   /* CSV text that a spreadsheet would take for a formula gets a leading ' */
    const char *const *warnings;    /* the run's own warnings (its specs'), for the metadata (borrowed) */
    size_t n_warnings;
    /* Optional, for outputs named as another tool names them (export summary): */
    const char *file_tag;           /* not NULL: files are `<report id>_<tag>[_<label>].<ext>` */
    int no_clobber;                 /* 1: an output that exists already is an error (TB_ERR_USAGE) */
    int msprof_slices;              /* 1: a split CSV is `<id>_slice_<k>_<tag>[_<label>].csv`, k from 0,
                                       as msprof names its summary slices */
    int keep_listings;              /* 1: an existing tracebook_run.json's listing is kept in the new
                                       one, under "earlier_runs" (its files stay tracebook's outputs
                                       for the scanner); runs whose files this run replaced all are dropped */
    int keep_db;                    /* 1: a copy of the session's DB goes beside the reports
                                       (TB_TRACE_DB_NAME), named in tracebook_run.json's trace_db: compare
                                       and history read the folder from it (tb_run_inputs), without the
                                       raw profiles */
    tb_session *base;               /* not NULL (borrowed): the base run (`report --base`); each report
                                       with `baseline: true` gets, per figure, the base run's value, the
                                       change and the ratio (docs/review.md); the runs' rows must match */
    const char *base_name;          /* what messages and tracebook_run.json call the base run */
} tb_report_job;

/* The file name of the DB copy a report run keeps (tb_report_job.keep_db). */
#define TB_TRACE_DB_NAME "tracebook_trace.db"

/* Runs job->run's specs over the session's DB and window and writes their outputs. */
tb_status tb_report_write(tb_session *s, tb_report_job *job, tb_run_result *res, tb_error *err);

typedef struct tb_query_job {
    tb_run_options run;             /* unit, params, max_steps (the DB and window: the session's) */
    const char *sql;
    unsigned format;                /* one of TB_OUT_CONSOLE, TB_OUT_CSV, TB_OUT_JSON */
    const char *out_path;           /* csv/json: write this file (atomically); NULL = to out */
    FILE *out;                      /* console, and csv/json without out_path */
    size_t max_rows;                /* console: rows printed, 0 = all */
    int console_width;              /* console: as tb_report_job.console_width */
    int csv_safe;                   /* as tb_report_job.csv_safe */
} tb_query_job;

/* Runs job->sql (tb_query_run) and writes the result. *rows gets the row count. */
tb_status tb_query_write(tb_session *s, const tb_query_job *job, uint64_t *rows, tb_error *err);

/* 1 when path is the output folder of an earlier run: a folder holding a
 * tracebook_run.json that is not a folder of shard DBs (those are read as
 * one run's DB). */
int tb_run_folder(const char *path);

/* 1 when path is an earlier run's output folder (tb_run_folder) and the folder dir is (both resolved). */
int tb_run_folder_is(const char *path, const char *dir);

/*
 * The spec (the first of its `specs`) and window of an earlier report run,
 * from dir/tracebook_run.json: *spec a new string, w->set 0 without a window.
 */
tb_status tb_run_spec_window(const char *dir, char **spec, tb_window *w, tb_error *err);

/*
 * The inputs a run stands for: given as they are, or, when given is one
 * earlier report run's output folder (tb_run_folder), the inputs it
 * recorded: the DB it kept (`trace_db` of tracebook_run.json,
 * dir/tracebook_trace.db) when it is there, else its `inputs`. A relative
 * input is taken as written (the earlier run's working directory) when it
 * exists, else relative to the folder. A new NULL-terminated array of new
 * strings in *out (free with tb_paths_free), *n_out their count.
 */
tb_status tb_run_inputs(const char *const *given, size_t n, char ***out, size_t *n_out, tb_error *err);

/*
 * The base run of `report --base` (report/baseline.c): given, n paths as
 * -dir takes them, or one earlier report run's output folder. A folder must
 * be a run that wrote every report of specs with `baseline: true` (else
 * TB_ERR_USAGE: a run of another spec) and must not be out_dir (this run
 * would replace its files); its inputs are what tb_run_inputs gives (its
 * kept DB first) and *w becomes its window. Other paths are the inputs as
 * they are, *w left as given (the run's window). *inputs: as tb_run_inputs.
 */
tb_status tb_run_base(const char *const *given, size_t n, const tb_spec *const *specs, size_t n_specs,
                      const char *out_dir, char ***inputs, size_t *n_inputs, tb_window *w, tb_error *err);

/*
 * Writes the `info` summary of the session's DB to f, titled by what the
 * user gave (the inputs, the DB, and whether it was loaded now or reused).
 * A file that is not a DB tracebook wrote is TB_ERR_PARSE.
 */
tb_status tb_info_write(tb_session *s, FILE *f, tb_error *err);

/*
 * Adds the figures of the shard DB at shard_db (`export db --shard`: its
 * ranks, input bytes, wall time, peak RSS) to the "processes" list of the
 * tracebook_run.json beside it, keeping the entries of the other shards of
 * the same load; the folder is locked meanwhile and the file replaced
 * atomically (docs/scale-out.md).
 */
tb_status tb_shard_record(const char *shard_db, tb_error *err);

#endif
