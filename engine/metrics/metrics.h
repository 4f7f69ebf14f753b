/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - computed tables: metrics made on demand inside a report run.
 *
 * A report's SQL may read tables that are not in the DB but computed from
 * it: step_trace_time, overlap_lanes, temporal_breakdown, ... Each one is a
 * metric_table with a build function that creates `temp.<name>` on the
 * run's connection, reading the (window-filtered) tables and views, so
 * every metric honours the window. The runner builds a table the first time
 * a report names it (in its SQL or its `requires`), with the options of the
 * report's spec (its `metrics:` section, parsed and checked when the spec
 * loaded: options.h), and builds it again when a later spec's options differ.
 *
 * Build functions run trusted (the sandbox's authorizer lets the runner's
 * own SQL through), may create helper TEMP tables of their own (named
 * `tb_m_<something>`, dropped or replaced on rebuild), and report a broken
 * invariant as TB_ERR_INTERNAL: a metric never silently gives a wrong number.
 */
#ifndef TB_METRICS_H
#define TB_METRICS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/options.h"
#include "tracebook/error.h"

/* What a build of a cluster table (metric_table.parts) does: both phases
 * (one DB of every rank), only the first (a shard: the per-rank rows of
 * its ranks, in the part tables), or only the second (the part tables hold
 * the rows gathered from every shard: the table from them). Other tables
 * build whole in every phase. */
typedef enum metrics_phase { METRICS_WHOLE = 0, METRICS_COLLECT = 1, METRICS_COMBINE = 2 } metrics_phase;

typedef struct metric_ctx {
    sqlite3 *db;               /* the run's connection (borrowed) */
    const metrics_options *opt; /* the spec's options (borrowed), or NULL for the defaults: read through metrics_opts */
    void (*note)(void *ctx, const char *msg); /* may be NULL */
    void *ctx;
    metrics_phase phase;
    /* A part of a load (a shard): the DB's rankIds rank_ids[i] are
     * rank_shown[i] in the whole load, as notes name them (n_rank_ids 0:
     * every rank is its own). */
    const int64_t *rank_ids, *rank_shown;
    size_t n_rank_ids;
    /* The report's parameter name as text (its declared default, or the
     * --param that sets it; valid until the next call), or NULL when the
     * report has none so named: a table reading one is built again when a
     * later report gives it another value. param NULL: no report. */
    const char *(*param)(void *pctx, const char *name);
    void *pctx;
} metric_ctx;

typedef struct metric_table {
    const char *name;          /* the table's name in report SQL (lowercase) */
    const char *depends[4];    /* metric tables built first, NULL-terminated */
    /* Creates TEMP TABLE <name> (after dropping an older one). */
    tb_status (*build)(const metric_ctx *m, tb_error *err);
    const char *summary;       /* one line for docs and `tracebook reports` */
    /* The column holding each row's rank when the table is rank by rank:
     * its rows of a rank are those a build over that rank alone makes (a
     * rank-scope report then builds it once over every rank and reads each
     * rank's rows); NULL when rows mix ranks (the cluster tables). */
    const char *rank_col;
    /* A cluster table is made in two phases (metrics_phase): per-rank rows
     * first, into these TEMP part tables (NULL-terminated; columns named
     * rankId hold the DB's rankIds), then the table from them. Empty for
     * a table that only reads other cluster tables (its depends). */
    const char *parts[4];
} metric_table;

/* Per-file tables (each file owns its array). */
extern const metric_table metrics_steptrace[];
extern const size_t metrics_steptrace_n;
extern const metric_table metrics_breakdown[];
extern const size_t metrics_breakdown_n;
extern const metric_table metrics_cluster[];
extern const size_t metrics_cluster_n;
extern const metric_table metrics_vote[];
extern const size_t metrics_vote_n;
extern const metric_table metrics_timesum[];
extern const size_t metrics_timesum_n;
extern const metric_table metrics_commgroup[];
extern const size_t metrics_commgroup_n;
extern const metric_table metrics_mstx[];
extern const size_t metrics_mstx_n;
extern const metric_table metrics_modstat[];
extern const size_t metrics_modstat_n;
extern const metric_table metrics_freetime[];
extern const size_t metrics_freetime_n;
extern const metric_table metrics_ppchart[];
extern const size_t metrics_ppchart_n;
extern const metric_table metrics_hta_counters[];
extern const size_t metrics_hta_counters_n;
extern const metric_table metrics_hta_stacks[];
extern const size_t metrics_hta_stacks_n;
extern const metric_table metrics_critical_path[];
extern const size_t metrics_critical_path_n;

/* Returns the table named name (case-insensitive), or NULL. */
const metric_table *metrics_find(const char *name);

/* 1 when t is a cluster table: it has parts, or depends on a table that does. */
int metrics_two_phase(const metric_table *t);

/* Calls fn for every computed table, in a fixed order. */
void metrics_each(void (*fn)(void *ctx, const metric_table *t), void *ctx);

/* The options a build uses: m's, or the defaults when it has none (borrowed). */
static inline const metrics_options *metrics_opts(const metric_ctx *m)
{
    return m->opt ? m->opt : metrics_options_default();
}

/* The report's parameter name as text (metric_ctx.param), or NULL. */
static inline const char *metrics_param(const metric_ctx *m, const char *name)
{
    return m->param ? m->param(m->pctx, name) : NULL;
}

/* The id a note gives the DB's rank: its id in the whole load. */
int64_t metrics_rank_shown(const metric_ctx *m, int64_t rank);

/* A range's place in a tree order (mstx ranges, modules and ops): by start,
 * then the longer first, then as read (idx). metrics_cmp_span is its qsort
 * comparator. */
typedef struct span_key {
    int64_t start, end;
    size_t idx;
} span_key;

int metrics_cmp_span(const void *a, const void *b);

/* msprof-analyze's hash of a process group's key in profiler_metadata.json:
 * the group name its communication files use ("6960437680420871035"). */
unsigned long long metrics_group_hash(const char *s);

/* Runs sql (several statements) on m->db; SQLite errors become TB_ERR_DB naming what. */
tb_status metrics_exec(const metric_ctx *m, const char *what, const char *sql, tb_error *err);

/*
 * Reading a statement's rows. A row function copies what it keeps of the
 * current row of st into ctx (pushing it onto a growing array, say) and
 * returns 0, or nonzero when out of memory: the read stops there.
 */
typedef int (*metrics_row_fn)(sqlite3_stmt *st, void *ctx);

/* Steps st (prepared, its values bound) to its end, calling row for each
 * row, then finalizes it (also on failure). TB_ERR_NOMEM "<what>: out of
 * memory" when row fails, TB_ERR_DB "<what>: <SQLite's message>" when a
 * step does. */
tb_status metrics_each_row(sqlite3 *db, sqlite3_stmt *st, const char *what, metrics_row_fn row, void *ctx,
                           tb_error *err);

/* Prepares sql on db, binds rank to its ?1 when it has parameters, and
 * reads its rows as metrics_each_row; a failed prepare is TB_ERR_DB
 * "<what>: <SQLite's message>". */
tb_status metrics_rows(sqlite3 *db, const char *what, const char *sql, int64_t rank, metrics_row_fn row, void *ctx,
                       tb_error *err);

/* Reads the first ncols (at least 1) columns of every row of st, as int64 and
 * row after row, into a new array *v (free it; NULL when no row), *nrows
 * rows; st is stepped and finalized as by metrics_each_row. */
tb_status metrics_read_int64(sqlite3 *db, sqlite3_stmt *st, const char *what, int ncols, int64_t **v, size_t *nrows,
                             tb_error *err);

/*
 * Notes, through m->note, every rank of the load (TB_RANK) for which
 * has(cx, rank) is 0 (the table has no row for it), with why: the rank has
 * no device tasks nor communication ops (in the window). For tables that
 * give rows to every rank with device work; quiet when the DB has no
 * TB_RANK table (an input DB that is not tracebook's).
 */
/* Calls m->note with a message formatted as printf's (at most 511 bytes),
 * when there is a note callback. */
void metrics_notef(const metric_ctx *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void metrics_note_rankless(const metric_ctx *m, const char *table, int (*has)(const void *cx, int64_t rank),
                           const void *cx);

#endif
