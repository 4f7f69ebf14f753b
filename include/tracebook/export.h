/* SPDX-License-Identifier: MIT */
/*
 * export.h - the exports: the timeline (`export timeline`), msprof's and
 * torch_npu's summary files (`export summary`) and the topsprof-style text
 * listings (`print summary|trace`).
 */
#ifndef TRACEBOOK_EXPORT_H
#define TRACEBOOK_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebook/error.h"
#include "tracebook/query.h"
#include "tracebook/session.h"

/*
 * `export db`: the session's inputs loaded into a DB file. output: a file
 * (its folder must exist), a folder (created by the caller; the DB gets the
 * default name msprof_<timestamp>.db, or shard_I_of_N.db for a shard), or
 * NULL: the default folder (tb_export_default_dir). stream not NULL: the DB
 * is written to it instead (loaded into a temporary file first). A shard
 * (shard_count > 0) loads part shard_index of the ranks and adds its figures
 * to the tracebook_run.json beside it (tb_shard_record). The DB's path goes
 * to final ("" for a stream). Nothing is left where the DB would go when
 * the load fails.
 */
typedef struct tb_db_export_options {
    const char *output;
    FILE *stream;
    unsigned shard_index, shard_count;
} tb_db_export_options;

/* Reads a shard as a user writes it, "I/N": part I (0 to N-1, as MPI ranks and job array
 * indexes are numbered) of N (1 to 1000000). TB_ERR_USAGE naming the text otherwise. */
tb_status tb_shard_parse(const char *text, unsigned *index, unsigned *count, tb_error *err);

tb_status tb_export_db(tb_session *s, const tb_db_export_options *o, char *final, size_t n, tb_load_result *res,
                       tb_error *err);

/* Where an export writes by default, as msprof does: beside the session's
 * first input (the input itself when it is a folder) when that can be
 * written, else the current folder ("."). */
void tb_export_default_dir(tb_session *s, char *out, size_t n);

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
    int per_device;           /* 1: one block per device (and rank), opened by `Device "<name> (<n>)"` */
    int width;                /* Name and Node Name: longer texts are cut in the middle to this many
                                 characters ("head...tail"); 0: never cut (topsprof's way) */
    int fixed_unit;           /* 1: every time in unit; 0: each time in its own unit, as topsprof */
    tb_time_unit unit;
    FILE *out;                /* the listing goes here when out_path is NULL (borrowed, not closed) */
    const char *out_path;     /* or this file, written under a temporary name and renamed when complete */
} tb_print_options;

/* Prints the statistics listing. Errors name the DB (or out_path when it cannot be written). */
tb_status tb_print_summary(tb_session *s, const tb_print_options *opt, tb_error *err);

/* Prints the trace listing of the device tasks. Errors as for tb_print_summary. */
tb_status tb_print_trace(tb_session *s, const tb_print_options *opt, tb_error *err);

/*
 * The timeline export (`export timeline`): the DB as a Chrome-trace JSON
 * timeline in msprof's layout, one file per rank (docs/timeline.md).
 * Layers are chosen by the spec's json_process (msprof's keys; NULL spec:
 * every layer), events by the window (each rank's range), and big
 * timelines are cut into slices that are each a complete file.
 */
typedef struct tb_timeline_options {
    const char *out_dir;             /* created when missing (one level); NULL: tb_export_default_dir */
    const tb_spec *spec;             /* borrowed; its json_process picks the layers; NULL = all */
    int64_t slice_bytes;             /* 0: one file per rank; else slices of at most about this size */
    int clear_cache;                 /* 1: after a successful export, remove the cached DB the session
                                        loaded for it (a DB given as the input stays) */
    void (*written)(void *ctx, const char *path); /* each file put in place (may be NULL) */
    void (*note)(void *ctx, const char *msg);     /* things the user should know (may be NULL) */
    void *ctx;
} tb_timeline_options;

typedef struct tb_timeline_result {
    size_t files;                    /* files written, slices included */
    size_t ranks;                    /* ranks exported */
    uint64_t events;                 /* trace events written, metadata included, all files */
    uint64_t flows_unpaired;         /* TB_FLOW rows with one end only (as the input had them): that end written */
    char window_label[48];           /* "" without a window */
} tb_timeline_result;

/*
 * Writes `<out_dir>/msprof_<timestamp>.json` (the timestamp from the data,
 * as tb_db_default_name's); with several ranks `msprof_<timestamp>_rank<R>.json`
 * per rank; a window adds `_<label>`; slices are
 * `msprof_slice_<N>_<timestamp>[...].json`. Every file is written under a
 * temporary name and renamed when complete. A window that no rank has is
 * TB_ERR_USAGE (nothing exported); no rank at all, a note.
 */
tb_status tb_timeline_write(tb_session *s, const tb_timeline_options *opt, tb_timeline_result *res, tb_error *err);

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
    const char *out_dir;             /* NULL: each rank's own folder; else the same layout under it */
    const tb_spec *spec;             /* borrowed; reports to run instead of the built-in summaries (NULL,
                                        or an msprof reports file: the summaries of each rank's layout) */
    unsigned formats;                /* TB_OUT_CSV, TB_OUT_JSON, TB_OUT_XLSX; 0 = csv */
    int no_clobber;                  /* 1: refuse (TB_ERR_USAGE) when an output exists; nothing is written */
    int clear_cache;                 /* as tb_timeline_options.clear_cache */
    int csv_safe;                    /* as tb_report_job.csv_safe */
    int merge;                       /* 1: one set of files for every rank, in one folder under out_dir
                                        (required): msprof's layout when any rank has it, each report
                                        with its Rank ID column */
    void (*written)(void *ctx, const char *path); /* each file put in place (may be NULL) */
    void (*note)(void *ctx, const char *msg);     /* skipped reports and ranks (may be NULL) */
    void *ctx;
} tb_summary_options;

typedef struct tb_summary_result {
    size_t ranks;                    /* ranks written */
    size_t files;                    /* files written, README.txt and tracebook_run.json included */
    char window_label[48];           /* "" without a window */
} tb_summary_result;

/* Writes the summaries of every rank of the session's DB, over its window
 * (each rank alone). Stops at the first error. A window that no rank has is
 * TB_ERR_USAGE (nothing exported); no rank at all, a note. */
tb_status tb_summary_write(tb_session *s, const tb_summary_options *opt, tb_summary_result *res, tb_error *err);

/*
 * Reads an msprof slicing file (msprof_slice.json: slice_switch "on"/"off",
 * "slice_file_size(MB)", strategy) into *slice_bytes: 0 when slicing is off,
 * else the size limit in bytes (msprof's rule: a size of 200 MB or more is
 * the limit; slicing on without one takes 200 MB). A missing or malformed
 * file is an error naming it.
 */
tb_status tb_timeline_slice_config(const char *path, int64_t *slice_bytes, tb_error *err);

#endif
