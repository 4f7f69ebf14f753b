/* SPDX-License-Identifier: MIT */
/*
 * session.h - one run: its inputs, the DB they make, its one connection and
 * its one window.
 *
 * A session is what `sqlite3 *` is to SQLite: every verb takes one. It is
 * opened from the inputs and the load options and finds or builds the
 * unified DB they make: a DB that tracebook wrote, read as it is; the cached
 * load of profile data (reused while the inputs are unchanged); the merge of
 * a folder of shard DBs; or, through a distribution hook (MPI in the
 * command), the merge of the parts every process loaded. When every report
 * a run goes through is rank- or cluster-scope and the ranks are spread
 * over shards or processes, the session instead runs those reports where
 * the ranks are and keeps only the gathered rows (docs/scale-out.md).
 *
 * The session holds the run's window (parsed once by the caller, checked
 * against the data, described once) and one read-only connection to the
 * DB, opened when the first verb needs it. The verbs: tb_report_write,
 * tb_query_write (report.h), tb_timeline_write, tb_summary_write,
 * tb_print_summary, tb_print_trace (export.h), tb_info_write (report.h),
 * tb_compare_write (two sessions), tb_history_add (nightly.h).
 */
#ifndef TRACEBOOK_SESSION_H
#define TRACEBOOK_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"
#include "tracebook/load.h"
#include "tracebook/query.h"
#include "tracebook/spec.h"

typedef struct tb_session tb_session;

/*
 * The distribution hook: how the processes of a run talk. The engine knows
 * nothing of MPI; the command hands it these calls (engine/cli/mpi.c). size
 * 1 (or no hook) is a run of one process. Every process runs the same
 * command line; process 0 decides, the others only load what it tells them
 * and run the rank-scope reports on what they loaded.
 */
typedef struct tb_dist {
    int size;   /* processes */
    int rank;   /* this process, 0 to size - 1 */
    /* Process 0's n bytes at buf reach every process's buf. */
    void (*bcast)(void *ctx, void *buf, size_t n);
    /* Every process's n bytes at mine reach process 0's all (size * n bytes, in process order; NULL elsewhere). */
    void (*gather)(void *ctx, const void *mine, void *all, size_t n);
    /* Ends every process at once with code (nothing left to gather into). */
    void (*abort)(void *ctx, int code);
    /* Optional: called on each process when its part of a round is done:
     * "loaded" (its shard is written) or "partial" (its reports' rows are);
     * where a test stops a process to see the run fail whole. */
    void (*checkpoint)(void *ctx, const char *what);
    void *ctx;
} tb_dist;

typedef struct tb_session_options {
    const char *const *inputs;  /* -dir values: trace files, folders, DBs, shard folders (borrowed) */
    size_t n_inputs;
    int rebuild;                /* reload the inputs even when a cached DB of them matches */
    int strict;                 /* as tb_load_options */
    int keep_python_functions;
    int keep_going;             /* a missing shard or a failed process's part is a warning */
    int torch_links;            /* as tb_load_options, for tb_session_load_to (export db --pytorch-links) */
    int jobs;                   /* as tb_load_options.jobs */
    size_t max_event_bytes;     /* as tb_load_options.max_event_bytes */
    tb_window window;           /* the run's iterations (set = 0: all) */
    /* The reports the run goes through, and how: a run whose reports are
     * all rank- or cluster-scope runs them where the ranks are (shards,
     * processes) instead of merging every rank into one DB. specs NULL: the
     * run needs the whole DB (info, exports). */
    const tb_spec *const *specs;
    size_t n_specs;
    const char *const *only;    /* --report ids (NULL: every report) */
    size_t n_only;
    const char *const *params;  /* --param overrides */
    size_t n_params;
    tb_time_unit unit;
    int64_t max_steps;
    /* Messages (each may be NULL), with ctx: warnings, notes, the load's
     * progress and phases (as tb_load_options). */
    void (*warn)(void *ctx, const char *msg);
    void (*note)(void *ctx, const char *msg);
    void (*progress)(void *ctx, const char *file, uint64_t done, uint64_t total, uint64_t bytes);
    void (*phase)(void *ctx, const char *what);
    void *ctx;
    const tb_dist *dist;        /* NULL or size 1: one process */
} tb_session_options;

/* How the session came by its DB. */
typedef enum tb_session_source {
    TB_SOURCE_OWN_DB = 0,  /* a DB that tracebook wrote, given as the input: read as it is */
    TB_SOURCE_LOADED,      /* the inputs loaded now into the cache */
    TB_SOURCE_CACHED,      /* the cached DB of unchanged inputs, reused */
    TB_SOURCE_PROCESSES,   /* the parts the processes loaded, merged for this run only */
    TB_SOURCE_SCOPED       /* the rows of rank- and cluster-scope reports, gathered from shards or processes */
} tb_session_source;

/*
 * Opens a session: checks the options, then finds or builds the DB (a
 * load, a merge, a round of the processes' loads). Returns new in *out (free
 * with tb_session_close). On a process other than 0 of a distributed run
 * the session only serves process 0: call tb_session_serve.
 */
tb_status tb_session_open(const tb_session_options *opt, tb_session **out, tb_error *err);

/*
 * Finds or builds the session's DB now (each verb does when it needs to);
 * the load's progress and warnings are over when this returns.
 */
tb_status tb_session_ready(tb_session *s, tb_error *err);

/* Closes the session (NULL is fine): its connection, its private files. */
void tb_session_close(tb_session *s);

/*
 * Ends a distributed run: process 0 tells the others to end with code (what
 * the command ends with), once, after its sessions are closed. A process
 * other than 0 that served (tb_session_serve) has ended already; one whose
 * command failed before it opened a session answers process 0's rounds
 * with that failure until process 0 ends. Returns the code to end with
 * (code itself with no hook or one process).
 */
int tb_dist_end(const tb_dist *dist, int code);

/* 1 on a process other than 0 of a distributed run. */
int tb_session_serves(const tb_session *s);

/*
 * A process other than 0: loads its part of every round process 0 starts
 * and runs its part's reports, until process 0 ends the run (tb_dist_end).
 * Returns the code process 0 ended with.
 */
int tb_session_serve(tb_session *s);

/* The DB's path (for messages: the cached DB, the input DB, the run's own). Borrowed. */
const char *tb_session_db_path(const tb_session *s);
tb_session_source tb_session_source_of(const tb_session *s);
/* The inputs as given (borrowed), for run metadata. */
const char *const *tb_session_inputs(const tb_session *s, size_t *n);
/* The run's window (borrowed). */
const tb_window *tb_session_window(const tb_session *s);

/*
 * The query runtime over the session (tracebook/query.h): tb_report_run and
 * tb_query_run on its connection and window, with the caller's sinks
 * (opt's db, db_name and window are the session's).
 */
tb_status tb_session_run(tb_session *s, const tb_run_options *opt, tb_run_result *res, tb_error *err);
tb_status tb_session_query(tb_session *s, const tb_run_options *opt, const char *sql, tb_sink *sink, uint64_t *rows,
                           tb_error *err);

/*
 * Removes the session's DB when it is a cache entry (export --clear). A DB
 * given as the input is the user's and stays (*removed 0, a note says so).
 * A verb of the session after a removal loads the inputs again.
 */
tb_status tb_session_clear_cache(tb_session *s, int *removed, tb_error *err);

/*
 * Loads the session's inputs into a new DB at path (export db): the load of
 * the inputs, or, under a distribution hook, the merge of the processes'
 * parts. shard_count > 0: only part shard_index of the ranks. On error
 * nothing is left at path.
 */
tb_status tb_session_load_to(tb_session *s, const char *path, unsigned shard_index, unsigned shard_count,
                             tb_load_result *res, tb_error *err);

#endif
