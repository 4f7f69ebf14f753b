/* SPDX-License-Identifier: MIT */
/*
 * runner_int.h - what the pieces of the query runner share (private to
 * engine/query/). runner.c holds the core: the connection and its sandbox,
 * columns, parameters, statements, the pump from a statement to the sinks,
 * computed tables, and the run of a spec (tb_report_run, tb_query_run);
 * runner_ranks.c runs a report of `scope: rank` rank by rank on those
 * pieces; runner_replay.c writes reports from rows gathered from shards.
 * What the engine outside query/ sees of a run is in runner.h.
 */
#ifndef TB_QUERY_RUNNER_INT_H
#define TB_QUERY_RUNNER_INT_H

#include <math.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "metrics/metrics.h"
#include "query/runner.h"
#include "query/sandbox.h"
#include "query/window.h"
#include "spec/spec.h"
#include "tracebook/error.h"
#include "tracebook/query.h"

/* A run on one connection: its options, the sandbox and step budget, the
 * computed tables built, and the current report's pivot. */
typedef struct runner {
    const tb_run_options *opt;
    const run_part *pt;     /* a run over part of a load; runner_no_part otherwise */
    sqlite3 *db;
    sandbox sb;             /* what report SQL may do; trusted while the runner itself runs SQL */
    int64_t n_ranks;        /* ranks the DB holds (TB_RANK); :rank columns are written only when > 1 */
    const window_info *wi;  /* the window applied (its ranks) */
    int64_t steps;          /* VM steps of the current statement, in units of STEP_CHUNK */
    int64_t max_chunks;
    int budget_hit;
    double cpu_seconds;     /* the CPU limit of a report on this DB */
    int cpu_hit;            /* the progress handler stopped a statement for it */
    int sql_shift;          /* bytes of WRAP_HEAD before the report's SQL while preparing a wrapper */
    /* computed tables built on this connection, with the options they were built with
     * (borrowed from the specs, which outlive the run) and the report
     * parameters the build read: asked[2i] a name, asked[2i + 1] its value
     * or NULL (owned) */
    struct built {
        const metric_table *t;
        const metrics_options *options;
        metrics_phase phase;
        char **asked;
        size_t n_asked;
    } built[32];
    size_t n_built;
    metrics_phase phase;    /* how cluster tables build (metrics.h): whole, but over shards */
    /* the current report's pivot (columns named by the data), or pv NULL */
    sqlite3_stmt *pv;        /* pivot.values, :key bound per row */
    int pv_key;              /* the statement column holding the row's key */
    size_t pv_first, pv_n;   /* pivot columns are c[pv_first .. pv_first + pv_n) */
    sqlite3_value **pv_vals; /* this row's values, by pivot column (owned copies) */
    const char *pv_missing;
} runner;

/* The error of a statement of what that failed while it ran: the sandbox's
 * refusal or SQLite's message (TB_ERR_DB); SQLite's "integer overflow" over a
 * table whose durations sum beyond 64 bits names the table and column and is an
 * error of the input (TB_ERR_PARSE) (db/overflow.c). */
tb_status runner_step_error(runner *r, const char *what, tb_error *err);

/* VM steps between two calls of the progress handler (the budget's unit). */
#define STEP_CHUNK 1000

/* The part of no load: a run over a whole DB. */
extern const run_part runner_no_part;

/* A column of a report, read from its SQL alias. */
typedef struct column {
    char *alias;        /* as the SQL names it, e.g. "Total Time:dur_ns" */
    char *base;         /* without the type: "Total Time" */
    char *header;       /* what writers print */
    tb_col_type type;
    int hidden;
    const tb_spec_column *opt;
} column;

/* Names, each once (case-insensitive), at most 16: tables a report may read, part tables. */
typedef struct name_list {
    const char *v[16];
    size_t n;
} name_list;

static inline int64_t pow10i(int k)
{
    int64_t p = 1;
    while (k-- > 0)
        p *= 10;
    return p;
}

/* The cell of column col of st's row (borrowed text). A time column (timed)
 * in --timeunit: an integer gets the scale the writers apply exactly; a real
 * (an average of times) is rounded to the ns and written as such an integer
 * (times to the ns in their unit, no binary noise), or, when divide is 0
 * (gathered cells, converted before), kept. The column's value is fetched
 * once (sqlite3_column_value) and read with the sqlite3_value_* calls: one
 * call into the statement a cell instead of a type check and a read, each
 * taking the connection's mutex. The value is the statement's own, read on
 * the thread that steps it, before the next step, as sqlite3_column_* read
 * it; text (a blob too) gets its terminating NUL the same way. */
static inline void cell_of(sqlite3_stmt *st, int col, int timed, int scale, int divide, tb_cell *cell)
{
    sqlite3_value *v = sqlite3_column_value(st, col);
    memset(cell, 0, sizeof *cell);
    switch (sqlite3_value_type(v)) {
    case SQLITE_NULL: cell->kind = TB_CELL_NULL; break;
    case SQLITE_INTEGER:
        cell->kind = TB_CELL_INT;
        cell->i = sqlite3_value_int64(v);
        cell->scale = timed ? scale : 0;
        break;
    case SQLITE_FLOAT:
        cell->kind = TB_CELL_REAL;
        cell->d = sqlite3_value_double(v);
        if (timed && divide && cell->d > -9.2e18 && cell->d < 9.2e18) {
            cell->kind = TB_CELL_INT;
            cell->i = (int64_t)llround(cell->d);
            cell->scale = scale;
        } else if (timed && scale && divide) {
            cell->d /= (double)pow10i(scale);
        }
        break;
    default:
        cell->kind = TB_CELL_TEXT;
        cell->s = (const char *)sqlite3_value_text(v);
        cell->n = (size_t)sqlite3_value_bytes(v);
        if (!cell->s) {
            cell->s = "";
            cell->n = 0;
        }
        break;
    }
}

/* Opens the runner on opt->db: checks it is a unified DB, registers the SQL
 * functions, counts the ranks, and puts up the sandbox and step budget. */
tb_status runner_open_db(runner *r, tb_error *err);
/* A run's start on opt's connection: its checks, its sandbox, its window
 * (into wi, finished by runner_release). pt NULL: a run over a whole load. */
tb_status runner_start(runner *r, const tb_run_options *opt, const run_part *pt, window_info *wi, tb_error *err);
/* Every --param must name a parameter some report or spec declares. */
tb_status runner_check_overrides(const tb_run_options *o, tb_error *err);
/* A shard's part of a cluster-scope report: the first phase of its cluster
 * tables on the shard's ranks, the part tables handed to run_part.cluster_rows. */
tb_status runner_cluster_collect(runner *r, const tb_spec *spec, const tb_spec_report *rep, tb_error *err);

/* Frees n columns and the array c (NULL is fine). */
void runner_columns_free(column *c, size_t n);

/* The spec's options for column base of rep, or NULL (borrowed from rep). */
const tb_spec_column *runner_column_opt(const tb_spec_report *rep, const char *base);

/* Steps st to the end, each row converted to cells of the shown columns and
 * handed to every sink; *rows counts them. */
tb_status runner_pump(runner *r, sqlite3_stmt *st, const column *c, size_t nc, tb_sink **sinks, size_t ns,
                      const char *what, uint64_t *rows, tb_error *err);

/* Begins the sinks with the shown columns of c; *scp gets new memory the sinks
 * borrow until they finish (free it after). */
tb_status runner_begin_sinks(runner *r, const column *c, size_t nc, tb_sink **sinks, size_t ns,
                             tb_sink_column **scp, tb_error *err);

/* Counts a report that ran and tells its sinks' and the caller's callbacks. */
void runner_report_ran(const tb_run_options *o, const tb_spec_report *rep, tb_sink **sinks, size_t ns,
                       uint64_t rows, tb_run_result *res);

/* 1 when text names the identifier id as a whole word (case-insensitive). */
int runner_names_word(const char *text, const char *id);

/* Builds the computed tables that sql or rep's requires name, with spec's
 * options (spec NULL: the defaults) and rep's parameters. */
tb_status runner_build_needed(runner *r, const char *sql, const tb_spec *spec, const tb_spec_report *rep,
                              tb_error *err);

/* Forgets the computed tables built so far (the next report builds again). */
void runner_free_built(runner *r);

/* Puts the connection back as the run found it; finishes wi unless NULL. */
void runner_release(runner *r, window_info *wi);

/* 1 when table has a row; with keep, its statement is prepared once and kept in *keep. */
int runner_has_rows(runner *r, const char *table, sqlite3_stmt **keep);

/* A note to the run's note callback, formatted as printf does. */
void runner_notef(const tb_run_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 1 when the run's --report list takes report id (or there is none). */
int runner_wanted(const tb_run_options *o, const char *id);

/* Prepares rep's statement, bound, and its columns (new: finalize *stp, free *cp
 * with runner_columns_free); on error nothing is left to free. */
tb_status runner_prepare_report(runner *r, const tb_spec *spec, const tb_spec_report *rep, const char *what,
                                sqlite3_stmt **stp, column **cp, size_t *ncp, tb_error *err);

/* A report's sinks: one per format (csv, json, xlsx, html, console). */
#define RUNNER_MAX_SINKS 5

/* Opens rep's sinks into sinks[0..*ns) (at most RUNNER_MAX_SINKS; new: destroy each). */
tb_status runner_open_sinks(const tb_run_options *o, const tb_spec *spec, const tb_spec_report *rep,
                            const char *label, tb_sink **sinks, size_t *ns, tb_error *err);

/* NULL when rep's requires are met, else why not (written into why, n bytes). */
const char *runner_unmet(runner *r, const tb_spec_report *rep, sqlite3_stmt **keep, char *why, size_t n);

/* Counts rep as skipped for why, noted unless the run is a shard's. */
void runner_skipped(runner *r, const tb_spec_report *rep, const char *why, tb_run_result *res);

/* Adds name to l unless there (borrowed: name must outlive l). */
void runner_add_name(name_list *l, const char *name);

/* Fills l with the part tables of the cluster tables rep names. */
void runner_report_parts(const tb_spec_report *rep, name_list *l);

/* Runs rep over the DB as its views show it now, into its sinks. */
tb_status runner_run_report(runner *r, const tb_spec *spec, const tb_spec_report *rep, const char *label,
                            tb_run_result *res, tb_error *err);

/* runner_ranks.c: the id the DB's rank shows (its id in the whole load). */
int64_t runner_shown_id(const run_part *o, int64_t rank);

/* runner_ranks.c: why a rank-scope report is skipped, from the mask of its
 * unmet requires ('1' each; NULL: none), into out (n bytes). */
void runner_scope_skip_reason(const tb_spec_report *rep, int window, const char *mask, char *out, size_t n);

/* runner_ranks.c: runs a rank-scope report on each rank alone, in rank order. */
tb_status runner_run_report_ranks(runner *r, const tb_spec *spec, const tb_spec_report *rep, const char *label,
                                  tb_run_result *res, tb_error *err);

/* runner_replay.c: every report of the run, written from the gathered rows of opt->db. */
tb_status runner_replay_run(const tb_run_options *opt, tb_run_result *res, tb_error *err);

/* Starts the CPU limit of the next report (and forgets limits reached). */
tb_status runner_arm(runner *r, tb_error *err);
/* After work named what ended with rc: when a limit (CPU time, SQLite's
 * heap or temporary files) stopped it, err says which and the status is
 * TB_ERR_USAGE, also when rc is TB_OK (a `requires:` check cut short);
 * else rc. */
tb_status runner_limits_check(runner *r, const char *what, tb_status rc, tb_error *err);

#endif
