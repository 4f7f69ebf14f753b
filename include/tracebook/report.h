/* SPDX-License-Identifier: MIT */
/*
 * report.h - report specs and the runner that executes them over a unified DB.
 *
 * A spec (YAML or JSON, one language; docs/spec.md) names reports: SQL over
 * the unified DB's tables and views plus typed parameters and output choices.
 * tb_spec_load() parses and validates a spec file into a tb_spec; every
 * problem is reported with the spec's file, line and column. tb_report_run()
 * opens the DB read-only, applies the iteration window, runs each report in
 * a sandbox and hands the rows to the writers (tracebook/output.h).
 * tb_report_write() is the whole report job: specs run with the engine's
 * writers behind them and the run's metadata file beside the outputs.
 */
#ifndef TRACEBOOK_REPORT_H
#define TRACEBOOK_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebook/error.h"
#include "tracebook/output.h"

struct sqlite3;

/* --timeunit: the unit typed time columns are written in. */
typedef enum tb_time_unit { TB_UNIT_NS = 0, TB_UNIT_US = 3, TB_UNIT_MS = 6, TB_UNIT_S = 9 } tb_time_unit;

/* The name of a time unit ("ns", "us", "ms", "s"); static. */
const char *tb_unit_name(tb_time_unit unit);

typedef enum tb_param_type { TB_PARAM_INT, TB_PARAM_REAL, TB_PARAM_TEXT, TB_PARAM_BOOL } tb_param_type;

/* A place in a spec file: file is borrowed from the owning tb_spec (its path). */
typedef struct tb_spec_pos {
    const char *file;
    long line;   /* 1-based, 0 when unknown */
    long column; /* 1-based, 0 when unknown */
} tb_spec_pos;

/* A typed parameter with its current value (the default, or an override). */
typedef struct tb_param {
    char *name;
    tb_param_type type;
    int has_value;   /* 0: no default and not given (an error when a report needs it) */
    int64_t i;       /* INT and BOOL (0/1) */
    double d;        /* REAL */
    char *s;         /* TEXT */
    char *help;      /* may be NULL */
    tb_spec_pos pos;
} tb_param;

/*
 * A loaded spec and its reports are opaque: the runner and the report job
 * read them; a caller lists them through the accessors below.
 */
typedef struct tb_spec tb_spec;
typedef struct tb_spec_report tb_spec_report;

/* The spec file as given (borrowed from spec). */
const char *tb_spec_path(const tb_spec *spec);
/* 1 when spec is an msprof reports_sample_config.json (it runs msprof's summaries). */
int tb_spec_is_msprof_reports(const tb_spec *spec);
/* The spec's default formats (`outputs:`; a tb_out_format mask, 0 = csv). */
unsigned tb_spec_outputs(const tb_spec *spec);
/* The number of reports of spec, and report i (0-based, borrowed; NULL past the end). */
size_t tb_spec_n_reports(const tb_spec *spec);
const tb_spec_report *tb_spec_report_at(const tb_spec *spec, size_t i);

/* A report's id, title (its id when it has none) and description (NULL when none); borrowed. */
const char *tb_report_id(const tb_spec_report *rep);
const char *tb_report_title(const tb_spec_report *rep);
const char *tb_report_description(const tb_spec_report *rep);
/* The tables that must hold rows for the report to run: count, and name i (borrowed). */
size_t tb_report_n_requires(const tb_spec_report *rep);
const char *tb_report_require(const tb_spec_report *rep, size_t i);
/* The report's own parameters: count, and parameter i (borrowed). */
size_t tb_report_n_params(const tb_spec_report *rep);
const tb_param *tb_report_param(const tb_spec_report *rep, size_t i);
/* The formats the report asks for itself (tb_out_format mask; 0: the spec's default outputs). */
unsigned tb_report_outputs(const tb_spec_report *rep);

/*
 * A report's scope (`scope:`, docs/spec.md#scope). TB_SCOPE_ALL: its SQL
 * sees every rank at once. TB_SCOPE_RANK: it runs on each rank alone (the
 * rank's rows only, its own computed tables, `sort` and `limit` per rank)
 * and the ranks' rows follow each other in rank order; so it can also run
 * where the ranks are: on each shard, or each MPI process (docs/scale-out.md).
 * TB_SCOPE_CLUSTER: its SQL reads only the cluster tables (cluster_step_
 * trace_time, slow_rank, ...), which are made from per-rank rows: over
 * shards, each shard makes its ranks' rows and the tables are made from
 * those gathered, never from every event at once.
 */
typedef enum tb_scope { TB_SCOPE_ALL = 0, TB_SCOPE_RANK = 1, TB_SCOPE_CLUSTER = 2 } tb_scope;
tb_scope tb_report_scope(const tb_spec_report *rep);

/*
 * An iteration window: iterations [iteration_id, iteration_id + count - 1]
 * of model model_id; model 4294967295 is step mode (STEP_TIME). set = 0: the
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
 * Loads and validates a spec (YAML, or JSON when the file starts with '{' or
 * '[' after blanks). `use:` entries are expanded from the built-in reports.
 * Returns new (free with tb_spec_free) in *out. Errors carry the spec's
 * file, line and column and say what was expected. warn (may be NULL) gets
 * notes such as an msprof fallback reason.
 */
tb_status tb_spec_load(const char *path, tb_spec **out,
                       void (*warn)(void *ctx, const char *msg), void *ctx, tb_error *err);

/* Same from memory; name is used in messages and to resolve sql_file (its directory). */
tb_status tb_spec_load_mem(const char *name, const char *text, size_t len, tb_spec **out,
                           void (*warn)(void *ctx, const char *msg), void *ctx, tb_error *err);

/* Frees a spec (NULL is fine). */
void tb_spec_free(tb_spec *spec);

/* Built-in reports (the YAML files of reports/, embedded in the binary). */
typedef struct tb_builtin {
    const char *name;   /* file stem, e.g. "top_kernels" */
    const char *text;   /* the YAML text (static) */
} tb_builtin;

/* Returns the built-in report files (static array), *n set to their count. */
const tb_builtin *tb_builtins(size_t *n);

/* Returns the built-in report file named name, or NULL. */
const tb_builtin *tb_builtin_find(const char *name);

/*
 * Opens the sink for one output of one report. format is one tb_out_format
 * bit; label is the window's iteration label ("" without a window). Returns
 * the new sink in *out (the runner destroys it), or *out = NULL to skip the
 * format (a format this build does not write: say why through note).
 */
typedef tb_status (*tb_sink_open_fn)(void *ctx, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                                     const char *label, tb_sink **out, tb_error *err);

typedef struct tb_run_options {
    const char *db_path;             /* a unified DB (opened read-only) */
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
    /* Rank-scope reports run on part of a load (a shard; docs/scale-out.md):
     * the DB's rankIds rank_ids[i] show as rank_shown[i], their ids in the
     * whole load (n_rank_ids 0: every rank shows its own), and ranks_total
     * is the load's rank count when greater than the DB's (:rank columns). */
    const int64_t *rank_ids, *rank_shown;
    size_t n_rank_ids;
    int64_t ranks_total;
    /* Optional, called with sink_ctx for a rank-scope report: with which of
     * its `requires` no row of the DB meets ("01": the second), then before
     * the rows of each rank (rank: its shown id). */
    void (*requires_seen)(void *ctx, const tb_spec_report *rep, const char *unmet);
    void (*rank_start)(void *ctx, const tb_spec_report *rep, int64_t rank);
    /* 1 (a shard's run): a window none of the DB's ranks has, or that a
     * rank has the first iteration of but not the last, is no error here:
     * no report runs, res->window_missed is set and err holds the message;
     * the run over the gathered rows decides, from what every rank holds
     * (window_held, called with sink_ctx for each rank of the DB that has
     * iterations of the window's mode, by its shown id, in rank order,
     * whenever a window is set). */
    int window_miss_ok;
    void (*window_held)(void *ctx, int64_t rank, int64_t first, int64_t last);
    /* Optional (a shard's run): a cluster-scope report does not run; the
     * first phase of its cluster tables runs on this DB's ranks and their
     * part tables (TEMP tables parts[0..n) of the connection db, read with
     * sqlite3) are handed here, called with sink_ctx. */
    tb_status (*cluster_rows)(void *ctx, const tb_spec_report *rep, struct sqlite3 *db, const char *const *parts,
                              size_t n, tb_error *err);
    /* Not NULL: a DB of rows gathered from shards (tb_report_gather): every
     * report is written from it instead of run (all must be rank- or
     * cluster-scope); db_path is then read for nothing. */
    const char *replay;
} tb_run_options;

typedef struct tb_run_result {
    size_t reports_run;
    size_t reports_skipped;          /* `requires` not met */
    uint64_t rows;                   /* rows written, all reports */
    char window_label[48];           /* "" without a window */
    uint64_t warnings;               /* tb_report_write: the load's (TB_WARNING) and the run's warnings */
    int window_missed;               /* tb_run_options.window_miss_ok: 1 no rank of the DB has the window,
                                        2 a rank has its first iteration but not its last */
} tb_run_result;

/* The default VM step budget of one report (about two minutes of SQLite work). */
#define TB_DEFAULT_MAX_STEPS 5000000000LL

/* The largest string or blob report SQL may make (bytes). */
#define TB_MAX_VALUE_BYTES (256 * 1024 * 1024)

/*
 * Runs every report of every spec, in order, over opt->db_path. Report SQL
 * runs on a read-only connection under an authorizer (SELECT only: no
 * writes, ATTACH, PRAGMA changes or extension loading) and a step budget.
 * Stops at the first failing report; outputs of earlier reports stay.
 */
tb_status tb_report_run(const tb_run_options *opt, tb_run_result *res, tb_error *err);

/*
 * Runs one ad-hoc SQL statement in the same sandbox, window and unit rules
 * as a report, writing to sink (borrowed; finish is called, destroy is not).
 */
tb_status tb_query_run(const tb_run_options *opt, const char *sql, tb_sink *sink, uint64_t *rows, tb_error *err);

/*
 * The report job: runs specs (tb_report_run) with the engine's writers
 * behind it: for each report and format, `<dir>/<report id>[_<label>].csv`
 * or `.json` (label: the window's iteration label), console tables on the
 * given stream, and a run metadata file `<dir>/tracebook_run.json` (inputs,
 * window, unit, policy, version, the files of each report). Every file is
 * written under a temporary name and renamed when complete.
 */
typedef struct tb_report_job {
    tb_run_options run;             /* open_sink and sink_done are set by tb_report_write; report_done,
                                       when set, is called after each report with run.ctx */
    const char *out_dir;            /* created when missing (one level) */
    FILE *console;                  /* console tables go here (stdout) */
    const char *const *inputs;      /* what -dir named, for the metadata (borrowed) */
    size_t n_inputs;
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
} tb_report_job;

/* Runs job->run's specs and writes their outputs. */
tb_status tb_report_write(tb_report_job *job, tb_run_result *res, tb_error *err);

/*
 * Adds the figures of the shard DB at shard_db (`export db --shard`: its
 * ranks, input bytes, wall time, peak RSS) to the "processes" list of the
 * tracebook_run.json beside it, keeping the entries of the other shards of
 * the same load; the folder is locked meanwhile and the file replaced
 * atomically (docs/scale-out.md).
 */
tb_status tb_shard_record(const char *shard_db, tb_error *err);

/*
 * Rank-scope reports over shards without merging them (docs/scale-out.md):
 * tb_report_partial() runs the rank-scope reports of run.specs on the shard
 * DB run.db_path, each rank under its id in the whole load (from books_db:
 * the load of every shard with books_only set), and writes the rows each
 * report hands its writers to out_path (atomically). tb_report_gather() adds
 * partials to books_db; a run (tb_report_write) with run.replay = books_db
 * then writes every report as a run over all the ranks at once would.
 */
typedef struct tb_partial_job {
    tb_run_options run;              /* db_path: the shard; specs, window, unit, params, max_steps, only, note */
    const char *books_db;
    const char *out_path;
} tb_partial_job;

tb_status tb_report_partial(const tb_partial_job *job, tb_error *err);
tb_status tb_report_gather(const char *books_db, const char *const *partials, size_t n, tb_error *err);

/* 1 when every report of the specs that runs (all, or those named in only) is
 * rank- or cluster-scope: such a run needs no DB of every rank. */
int tb_specs_scoped(const tb_spec *const *specs, size_t n, const char *const *only, size_t n_only);

typedef struct tb_query_job {
    tb_run_options run;             /* db_path, window, unit, params, max_steps */
    const char *sql;
    unsigned format;                /* one of TB_OUT_CONSOLE, TB_OUT_CSV, TB_OUT_JSON */
    const char *out_path;           /* csv/json: write this file (atomically); NULL = to out */
    FILE *out;                      /* console, and csv/json without out_path */
    size_t max_rows;                /* console: rows printed, 0 = all */
    int csv_safe;                   /* as tb_report_job.csv_safe */
} tb_query_job;

/* Runs job->sql (tb_query_run) and writes the result. *rows gets the row count. */
tb_status tb_query_write(const tb_query_job *job, uint64_t *rows, tb_error *err);

/*
 * `compare`: every report of spec run on two DBs, a base run and a new one;
 * rows matched by the report's key (`key:`, after `normalize:`), numbers
 * set side by side (base, new, delta, ratio), rows found in one run only
 * listed as added or removed, and the `regressions:` rules (default: time
 * columns worse when higher by 5% and 1 us) marking regressions and
 * improvements (docs/spec.md, docs/nightly.md). Writes
 * `<out_dir>/<report id>_compare.csv` (and .json, as the report's outputs
 * ask) and `<out_dir>/tracebook_run.json` listing every regression.
 */
typedef struct tb_compare_job {
    const char *base_db;             /* unified DBs (opened read-only) */
    const char *new_db;
    const char *const *base_inputs;  /* what each side named, for the metadata (borrowed) */
    size_t n_base_inputs;
    const char *const *new_inputs;
    size_t n_new_inputs;
    const tb_spec *spec;             /* borrowed */
    tb_time_unit unit;               /* typed time columns are compared in this unit */
    int64_t max_steps;               /* as tb_run_options.max_steps */
    unsigned formats;                /* TB_OUT_CSV and/or TB_OUT_JSON; 0 = the spec's (csv when none) */
    /* the window each side's reports run over (set = 0: the whole run).
     * When both are set, step k of the base meets step
     * k + new_window.iteration_id - base_window.iteration_id of the new run */
    tb_window base_window, new_window;
    const char *out_dir;             /* created when missing (one level) */
    void (*written)(void *ctx, const char *path); /* each file put in place (may be NULL) */
    void (*note)(void *ctx, const char *msg);     /* e.g. waiting for another run's folder lock (may be NULL) */
    void *ctx;
} tb_compare_job;

typedef struct tb_compare_result {
    size_t reports;                  /* reports compared */
    size_t skipped;                  /* reports that ran on neither side (`requires` not met) */
    uint64_t matched, added, removed;/* rows, all reports */
    uint64_t regressions;            /* rule firings where the new run is worse */
    uint64_t improvements;           /* rule firings where it is better */
} tb_compare_result;

/* Runs the comparison and writes its outputs; *res tells what was found. */
tb_status tb_compare_write(const tb_compare_job *job, tb_compare_result *res, tb_error *err);

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
    const char *db_path;             /* the night's unified DB (opened read-only) */
    const char *const *inputs;       /* what the night was loaded from, for the record (borrowed) */
    size_t n_inputs;
    const tb_spec *spec;             /* borrowed */
    tb_window window;                /* the iterations the reports run over (set = 0: all) */
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

tb_status tb_history_add(const tb_history_add_job *job, tb_history_added *res, tb_error *err);

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
    unsigned formats;                /* TB_OUT_CSV, TB_OUT_JSON, TB_OUT_XLSX; 0: csv, xlsx and json when asked */
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

/*
 * The spec (the first of its `specs`) and window of an earlier report run,
 * from dir/tracebook_run.json: *spec a new string, w->set 0 without a window.
 */
tb_status tb_run_spec_window(const char *dir, char **spec, tb_window *w, tb_error *err);

/*
 * The inputs of an earlier report run: the `inputs` of dir/tracebook_run.json.
 * A relative input is taken as written (the earlier run's working directory)
 * when it exists, else relative to dir. Returns new strings in a new array
 * in *out (free each and the array with free), *n their count.
 */
tb_status tb_run_inputs(const char *dir, char ***out, size_t *n, tb_error *err);

/*
 * `print summary` and `print trace`: the DB as the text listings topsprof
 * prints (docs/cli.md), in the layout topsprof writes to --log-file, which
 * tracebook's topsprof reader loads back.
 *
 * Summary (statistics mode): per activity class, DEVICE (device tasks with a
 * name), HOST (host ops, PYTORCH_API) and RUNTIME (runtime and API calls,
 * CANN_API), rows `Time(%) Time Calls Avg Min Max Name` grouped by name and
 * sorted by total time, then "Accumulate Time <t>, Total Calls <n>" and, for
 * DEVICE, "Total Time <t>" (first start to last end). A class without rows
 * says "does not contain <what> data.". Trace: the device tasks by start
 * (relative to the first), `Start Duration Node Name Name`, and the same
 * footer. Times carry their unit: "56.61ms", "13.44us", "461.00ns".
 */
typedef struct tb_print_options {
    const char *db_path;      /* a unified DB (opened read-only) */
    tb_window window;         /* the iterations to print; set = 0: the whole run */
    int per_device;           /* 1: one block per device (and rank), opened by `Device "<name> (<n>)"` */
    int width;                /* Name and Node Name: longer texts are cut in the middle to this many
                                 characters ("head...tail"); 0: never cut (topsprof's way) */
    int fixed_unit;           /* 1: every time in unit; 0: each time in its own unit, as topsprof */
    tb_time_unit unit;
    FILE *out;                /* the listing goes here when out_path is NULL (borrowed, not closed) */
    const char *out_path;     /* or this file, written under a temporary name and renamed when complete */
} tb_print_options;

/* Prints the statistics listing. Errors name the DB (or out_path when it cannot be written). */
tb_status tb_print_summary(const tb_print_options *opt, tb_error *err);

/* Prints the trace listing of the device tasks. Errors as for tb_print_summary. */
tb_status tb_print_trace(const tb_print_options *opt, tb_error *err);

/*
 * Writes the `info` summary of a DB that tracebook wrote to f; title names
 * what the user gave (the inputs or the DB). A missing file is
 * TB_ERR_NOTFOUND; a file that is not such a DB is TB_ERR_PARSE.
 */
tb_status tb_info_write(const char *db_path, const char *title, FILE *f, tb_error *err);

/*
 * The timeline export (`export timeline`): the DB as a Chrome-trace JSON
 * timeline in msprof's layout, one file per rank (docs/timeline.md).
 * Layers are chosen by the spec's json_process (msprof's keys; NULL spec:
 * every layer), events by the window (each rank's range), and big
 * timelines are cut into slices that are each a complete file.
 */
typedef struct tb_timeline_options {
    const char *db_path;             /* a unified DB (opened read-only) */
    const char *out_dir;             /* created when missing (one level) */
    const tb_spec *spec;             /* borrowed; its json_process picks the layers; NULL = all */
    tb_window window;
    int64_t slice_bytes;             /* 0: one file per rank; else slices of at most about this size */
    void (*written)(void *ctx, const char *path); /* each file put in place (may be NULL) */
    void (*note)(void *ctx, const char *msg);     /* things the user should know (may be NULL) */
    void *ctx;
} tb_timeline_options;

typedef struct tb_timeline_result {
    size_t files;                    /* files written, slices included */
    size_t ranks;                    /* ranks exported */
    uint64_t events;                 /* trace events written, metadata included, all files */
    uint64_t flows_unpaired;         /* TB_FLOW rows without both ends: not written */
    char window_label[48];           /* "" without a window */
} tb_timeline_result;

/*
 * Writes `<out_dir>/msprof_<timestamp>.json` (the timestamp from the data,
 * as tb_db_default_name's); with several ranks `msprof_<timestamp>_rank<R>.json`
 * per rank; a window adds `_<label>`; slices are
 * `msprof_slice_<N>_<timestamp>[...].json`. Every file is written under a
 * temporary name and renamed when complete.
 */
tb_status tb_timeline_write(const tb_timeline_options *opt, tb_timeline_result *res, tb_error *err);

/*
 * The summary export (`export summary`): msprof's and torch_npu's summary
 * files, one set per rank in that rank's own layout (docs/cli.md): an
 * msprof rank gets `PROF_XXX/mindstudio_profiler_output/<name>_<timestamp>
 * [_<label>].csv`, a torch_npu rank `..._ascend_pt/ASCEND_PROFILER_OUTPUT/
 * <name>[_<label>].csv`, each folder a README.txt and a tracebook_run.json
 * listing its files. Each rank runs alone (tb_window.rank_set): its rows are
 * those of a run over that rank only.
 */
typedef struct tb_summary_options {
    const char *db_path;             /* a unified DB (opened read-only) */
    const char *out_dir;             /* NULL: each rank's own folder; else the same layout under it */
    const tb_spec *spec;             /* borrowed; reports to run instead of the built-in summaries (NULL,
                                        or an msprof reports file: the summaries of each rank's layout) */
    tb_window window;                /* rank_set is ignored: every rank runs on its own */
    unsigned formats;                /* TB_OUT_CSV, TB_OUT_JSON, TB_OUT_XLSX; 0 = csv */
    int no_clobber;                  /* 1: refuse (TB_ERR_USAGE) when an output exists; nothing is written */
    int merge;                       /* 1: one set of files for every rank, in one folder under out_dir
                                        (required): msprof's layout when any rank has it, each report
                                        with its Rank ID column */
    const char *const *inputs;       /* what -dir named, for the metadata (borrowed) */
    size_t n_inputs;
    void (*written)(void *ctx, const char *path); /* each file put in place (may be NULL) */
    void (*note)(void *ctx, const char *msg);     /* skipped reports and ranks (may be NULL) */
    void *ctx;
} tb_summary_options;

typedef struct tb_summary_result {
    size_t ranks;                    /* ranks written */
    size_t files;                    /* files written, README.txt and tracebook_run.json included */
    char window_label[48];           /* "" without a window */
} tb_summary_result;

/* Writes the summaries of every rank. Stops at the first error. */
tb_status tb_summary_write(const tb_summary_options *opt, tb_summary_result *res, tb_error *err);

/*
 * Reads an msprof slicing file (msprof_slice.json: slice_switch "on"/"off",
 * "slice_file_size(MB)", strategy) into *slice_bytes: 0 when slicing is off,
 * else the size limit in bytes (msprof's rule: a size of 200 MB or more is
 * the limit; slicing on without one takes 200 MB). A missing or malformed
 * file is an error naming it.
 */
tb_status tb_timeline_slice_config(const char *path, int64_t *slice_bytes, tb_error *err);

#endif
