/* SPDX-License-Identifier: MIT */
/*
 * msprof_db.h - importing msprof-compatible SQLite DBs (private to the engine).
 */
#ifndef TB_INGEST_MSPROF_DB_H
#define TB_INGEST_MSPROF_DB_H

#include "db/sqlite_input.h"
#include "ingest/trace_import.h"

/* 1 when path starts with the SQLite file header. */
int msprof_db_is_db(const char *path);

/* The start of an SQLite input's import: res cleared and named kind, the
 * file checked for the SQLite header and opened read-only into *s (close
 * with sqlite_input_close). */
tb_status msprof_db_open_input(const char *path, const char *kind, import_result *res, sqlite_input *s,
                               tb_error *err);

/* One rank of a DB that holds several. */
typedef struct db_rank {
    int64_t id;            /* the DB's rankId */
    uint64_t devices;      /* its devices 0..63 (RANK_DEVICE_MAP) */
    int has_times;
    int64_t min_ns, max_ns;
    int has_base_time;
    int64_t base_time_ns;
    char *host, *source;   /* TB_RANK's hostName and source (HOST_INFO's hostName in an msprof DB), or NULL */
} db_rank;

typedef struct db_ranks {
    db_rank *v;            /* in the DB's order: TB_RANK's, else by rankId */
    size_t n;
    int by_device;         /* an msprof DB: rows find their rank through their deviceId */
} db_ranks;

/*
 * Reads the ranks of the DB at path when it holds several: a DB tracebook
 * wrote lists them in TB_RANK, an msprof DB in RANK_DEVICE_MAP. out->n stays
 * 0 for a DB of one rank, or one that cannot be read (its import says why).
 * Fills caller memory (free with db_ranks_free). Fails only when out of memory.
 */
tb_status msprof_db_ranks(const char *path, db_ranks *out, tb_error *err);
void db_ranks_free(db_ranks *r);

/*
 * Imports the known tables of the DB at path into sink; the input is never
 * modified. ranks (borrowed, may be NULL) are the DB's ranks when it holds
 * several (msprof_db_ranks): its i-th rank's rows then take rank opt->rank + i.
 */
tb_status msprof_db_import(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                           const db_ranks *ranks, import_result *res, tb_error *err);

#endif
