/* SPDX-License-Identifier: MIT */
/*
 * load_int.h - what the three files of the load driver share.
 *
 * load_driver.c runs a load (tb_load): it finds the inputs, groups them into
 * ranks, has each group's files loaded (load_unit.c runs the importers) and
 * renames the finished DB into place; load_warn.c keeps its warnings. load_pool.c loads several groups at once on a
 * small thread pool and replays their recordings in group order.
 * load_books.c writes the bookkeeping tables once every file is in
 * (TB_SOURCE, TB_RANK, RANK_DEVICE_MAP, SESSION_TIME_INFO, META_DATA,
 * TB_WARNING) and runs the post-processing SQL that needs all rows
 * (HostToDevice binding, rank numbering, cluster-level rows).
 */
#ifndef TB_INGEST_LOAD_INT_H
#define TB_INGEST_LOAD_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "db/dbw.h"
#include "ingest/detect.h"
#include "ingest/importer.h"
#include "ingest/msprof_db.h"
#include "tracebook/load.h"

/* Provisional rankId of rows from cluster-level files; NULL once loaded. */
#define TB_CLUSTER_RANK (-1000000)

typedef struct src_info {
    char *path;
    int kind;        /* IN_* */
    size_t group;    /* rank group index */
    int cluster;     /* from the cluster group: belongs to no rank */
    int rank;        /* the load's rank of its rows (the first rank of a DB that holds several) */
    int multi;       /* a DB that holds several ranks: TB_SOURCE names none */
    int64_t hint;    /* rank named by profiler_info_<N>.json in its rank root, -1 none */
    int64_t bytes, mtime_ns;
    int64_t gid;     /* TB_SOURCE id: the file's place among all inputs, also in a shard */
    const shard_part *part; /* merging shard DBs: the rows of one unit of a shard DB (load_shards.c) */
    import_result r;
} src_info;

/* Warnings of a load: shown through the caller's callback as they come, and
 * kept for TB_WARNING (written with the other load_books_write rows). A group
 * loading in parallel keeps its own log, shown and kept in the load's log
 * when the group is replayed, so warnings come in input order. */
typedef struct warn_log {
    const tb_load_options *opt;
    tb_load_result *res;        /* counts the warnings; NULL in a group's own log */
    pthread_mutex_t *cb_mu;     /* held around the caller's callbacks when threads load, else NULL */
    int live;                   /* show each warning through opt->warn at once */
    int64_t source;             /* TB_SOURCE id of the file being read */
    int64_t *src_ids;
    char **msgs;
    size_t n, cap;
} warn_log;


/* The files of one rank group (or the cluster-level files), loaded one after
 * the other; groups are what loads in parallel. */
typedef struct unit {
    size_t first, n;      /* src[first .. first + n) */
    int rank;             /* the load's rank of its rows (its first, for a DB that holds several) */
    size_t nranks;        /* ranks it gives: 0 for cluster-level files, several for such a DB */
    int cluster;
    db_ranks dbr;         /* the ranks of its first file, a DB that holds several (else empty) */
    /* parallel loading (guarded by the pool's lock) */
    int state;            /* U_WAITING, U_RUNNING, U_DONE */
    tb_status st;
    tb_error err;
    dbw *rec;             /* its recording (every group but the first) */
    import_ids used;      /* the recording's counters, started at 1 */
    warn_log wl;          /* its warnings, until it is replayed */
    /* scale-out (load_shards.c) */
    size_t index;         /* its place among all the load's groups, also in a shard */
    int64_t bytes;        /* the size of its files */
    import_ids id_start, id_end; /* the load's counters before and after it */
    int64_t strings_end;  /* STRING_IDS ids below this were interned when it was in */
} unit;

enum { U_WAITING, U_RUNNING, U_DONE };


/* What the loading of the groups shares. */
typedef struct load_ctx {
    const tb_load_options *opt;
    src_info *src;
    unit *units;
    size_t nunits;
} load_ctx;

/* ---- load_shards.c: shard DBs (docs/scale-out.md) ---- */

/* The shard of a load that loads part of the ranks: what load_shards_write
 * records, and the counters the driver fills in. */
typedef struct shard_run {
    size_t nunits_all, nranks_all, nsrc_all; /* of the whole load, before selection */
    int64_t bytes;                           /* input bytes of this shard's groups */
    double t_start;                          /* dbw_now() when the load started */
} shard_run;

/*
 * Keeps the groups of part opt->shard_index of opt->shard_count: groups are
 * assigned largest first (by the size of their files), each to the least
 * loaded part; ties go to the earlier group and the lower part. Cluster-level
 * groups go to part 0. src and units are compacted in place (the sources of
 * other parts freed); every group keeps its rank numbers and every source
 * its TB_SOURCE id. Fills sr.
 */
tb_status load_shards_select(const tb_load_options *opt, src_info *src, size_t *nsrc, unit *units, size_t *nunits,
                             size_t nranks, shard_run *sr, tb_error *err);
/* Writes TB_SHARD and TB_SHARD_RANK of a shard DB (claim[p]: what rank p names, -1 nothing),
 * and the rankId indexes the merge reads each group through. */
tb_status load_shards_write(dbw *w, const tb_load_options *opt, const src_info *src, const unit *units, size_t nunits,
                            const int64_t *claim, const shard_run *sr, tb_error *err);

/* A merge of shard DBs: the groups of all shards in their global order. */
typedef struct shard_plan {
    shard_part *parts;     /* one per group loaded */
    size_t nparts;
    int64_t *claim;        /* per rank loaded: its rankId in the merged DB */
    size_t nranks;
    char **shards;         /* the shard DBs, by shard index (NULL: missing) */
    unsigned count;
    char *missing;         /* "1, 3" when --keep-going passed over missing shards, else NULL */
    char *inputs;          /* the -dir values of the sharded load, one a line */
} shard_plan;

/* 1 when every source is a shard DB (a folder of them, or them named). */
int load_shards_all(const src_info *src, size_t nsrc);
/*
 * Plans the merge of the shard DBs in src: checks they are the parts of one
 * sharded load (a missing or doubled shard is an error naming it, unless
 * opt->keep_going), then replaces src and units by one source and one group
 * per group of every shard, in the order of the load they came from. Frees
 * the old src (the caller's pointers are updated).
 */
tb_status load_shards_plan(const tb_load_options *opt, src_info **src, size_t *nsrc, unit **units, size_t *nunits,
                           size_t *nranks, shard_plan *plan, warn_log *wl, tb_error *err);
/* The bookkeeping tables of the merged DB, from the shards' (instead of load_books_write). */
tb_status load_shards_books(dbw *w, const shard_plan *plan, const int64_t *final, const import_ids *ids,
                            int books_only, tb_error *err);
void load_shards_plan_free(shard_plan *plan);

/* ---- load_warn.c: warnings and the importers' callbacks ---- */

/* Shows msg (when the log is live) and keeps it as a warning of source src. */
void load_warn_src(warn_log *wl, const char *msg, int64_t src);
/* The same for the file being read (wl->source). */
void load_warn_add(warn_log *wl, const char *msg);
void load_warnf(warn_log *wl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees the kept messages; the log can be used again. */
void load_warn_log_free(warn_log *wl);
/* Importer callbacks; ctx is a warn_log. */
void load_import_warn(void *ctx, const char *msg);
void load_import_progress(void *ctx, const char *file, uint64_t done, uint64_t total, uint64_t bytes);

/* ---- load_unit.c ---- */

/*
 * Loads the files of one group into sink, one after the other, drawing ids
 * from ids. w is the writer or recorder behind the sink (its error explains
 * a failed row; a recorder also gets a mark before each file). Warnings go
 * to wl. Returns TB_OK or the first error, with err set and naming the file.
 */
tb_status load_unit(const load_ctx *L, unit *g, dbw *w, int recording, const row_sink *sink, import_ids *ids,
                    warn_log *wl, tb_error *err);
/* Adds a loaded group's counts to the result. */
void load_count_unit(const load_ctx *L, const unit *g, tb_load_result *res);

/* ---- load_pool.c ---- */

/* How many threads load groups: opt->jobs, else TRACEBOOK_JOBS, else the
 * online CPUs up to 4; never more than there are groups. */
size_t load_pool_jobs(const tb_load_options *opt, size_t nunits);
/*
 * Loads every group of L with jobs threads (>= 2) into w: the first group
 * directly, the others into recordings (beside out_tmp) replayed in group
 * order. Counts go to res, warnings to wl in input order.
 */
tb_status load_pool_run(load_ctx *L, dbw *w, import_ids *ids, warn_log *wl, size_t jobs, const char *out_tmp,
                        tb_load_result *res, tb_error *err);

/* ---- load_books.c ---- */

/* TB_WARNING rows of the load's warnings. */
tb_status load_books_warnings(dbw *w, const warn_log *wl, tb_error *err);
/* TB_SOURCE, TB_SOURCE_COUNT, RANK_DEVICE_MAP, TB_RANK, SESSION_TIME_INFO and
 * META_DATA rows; final[p] is the rankId of provisional rank p. nsrc_all:
 * the sources of the whole load (a shard loads some): the files not read
 * are numbered after them. */
tb_status load_books_write(dbw *w, src_info *src, size_t nsrc, size_t nsrc_all, const unit *units, size_t nunits,
                           const int64_t *final, const input_file *ignored, size_t n_ignored,
                           const tb_load_options *opt, const import_ids *ids, tb_error *err);
/* META_DATA: the schema's version and the ids the load drew. */
tb_status load_books_meta(dbw *w, const import_ids *ids, tb_error *err);
/* Binds CANN_API rows to their tasks through HostToDevice flows. */
tb_status load_books_bind_h2d(dbw *w, tb_error *err);
/* The PMU metrics of summary CSVs' kernels onto their tasks (TASK_PMU_INFO). */
tb_status load_books_bind_pmu(dbw *w, tb_error *err);
/* The kernel types of summary CSVs onto the tasks a timeline gave
 * (COMPUTE_TASK_INFO.opType), load_types.c; the derived-type counts of src
 * drop by the tasks whose type the CSV gave. */
tb_status load_types_bind(dbw *w, src_info *src, size_t nsrc, tb_error *err);
/* Names a Kineto trace's collective kernels from the record_param_comms call
 * that launched them (TB_COLLECTIVE): COMMUNICATION_OP opType, count,
 * dataType and groupName, COMMUNICATION_TASK_INFO size (bytes) and dataType
 * (docs/inputs.md "Communication kernels"). */
tb_status load_books_bind_collectives(dbw *w, tb_error *err);
/* RANK_DEVICE_MAP rows of ranks no file named a device of, and the
 * COMMUNICATION_OP.groupName of ops loaded without one (see load_books.c).
 * as_written: TASK holds the rows the writer inserted, with their rankId and
 * deviceId unchanged (no rank renumbered, no row deleted), so the pairs the
 * writer saw stand for a scan of TASK. */
tb_status load_books_fill_recipe_tables(dbw *w, int as_written, tb_error *err);
/* The PyTorch calls of every rank with async_npu flows and no
 * CONNECTION_IDS rows linked to their tasks, kept as CONNECTION_IDS rows
 * and PYTORCH_API.connectionId (db/torchlinks.h). */
tb_status load_books_store_torch_links(dbw *w, tb_error *err);
/* Numbers the ranks (see load_books.c); final[p] receives rank p's rankId. */
tb_status load_books_apply_ranks(dbw *w, const int64_t *claim, const size_t *who, const src_info *src, size_t nranks,
                                 int64_t *final, warn_log *wl, tb_error *err);
/* Rows of cluster-level files belong to no rank unless they name one. */
tb_status load_books_clear_cluster(dbw *w, tb_error *err);

#endif
