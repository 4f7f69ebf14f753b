/* SPDX-License-Identifier: MIT */
/*
 * dbw.h - the bulk writer of the unified DB (private to the engine).
 *
 * A dbw owns one new SQLite file: it creates the schema, takes rows from
 * importers through a row_sink (prepared INSERTs in one transaction, journal
 * off, strings interned through STRING_IDS), pairs staged flow ends on
 * request, and on finish builds indexes and views and commits.
 *
 * A recorder is a dbw without a DB: it takes the same rows and keeps them,
 * in order, in an unnamed temporary file, to be replayed into a writer later
 * (ranks loading in parallel, each recorded, replayed in rank order).
 */
#ifndef TB_DB_DBW_H
#define TB_DB_DBW_H

#include <sqlite3.h>
#include <stdint.h>

#include "db/rows.h"
#include "tracebook/error.h"

typedef struct dbw dbw;

/* Creates the DB at path (a new or empty file). Returns new (free with dbw_destroy). */
dbw *dbw_create(const char *path, tb_error *err);

/* The row sink that fills this DB (borrowed: valid until dbw_destroy). */
const row_sink *dbw_sink(dbw *w);

/* The connection (borrowed), for the loader's own bookkeeping rows. */
sqlite3 *dbw_db(dbw *w);

/* Runs SQL (no results). Returns TB_OK or TB_ERR_DB with err set. */
tb_status dbw_exec(dbw *w, const char *sql, tb_error *err);

/* The error the sink met, if a row call failed. */
const tb_error *dbw_error(const dbw *w);

/* Pairs the flow ends that were staged (partners in different flushes). */
tb_status dbw_pair_staged_flows(dbw *w, tb_error *err);

/* Finishes the load: indexes, views, commit, close. */
tb_status dbw_finish(dbw *w, double *seconds_index, tb_error *err);

/* The id the next new string will take (STRING_IDS ids below it are taken). */
int64_t dbw_strings_end(const dbw *w);
/* Monotonic wall time in seconds. */
double dbw_now(void);

/*
 * Creates a recorder whose temporary file lives in dir (it is unlinked at
 * once, so an interrupted run leaves nothing behind). Its sink interns
 * strings into ids of its own. One thread records; one other may replay.
 * Returns new (free with dbw_destroy, after the replay), or NULL with err set.
 */
dbw *dbw_record_create(const char *dir, tb_error *err);

/* Flags of a recorder's mark. */
#define DBW_MARK_KEEP_OVERLAP_IDS 1 /* the rows that follow (a DB input's) keep their OVERLAP_ANALYSIS ids */

/* Records a mark before the rows of the next input. Returns 0, or -1 (see dbw_error). */
int dbw_record_mark(dbw *rec, int64_t flags);

/* Ends a recording (the recording thread calls it, even after a failure):
 * the last rows are written out. Returns 0, or -1 (see dbw_error). */
int dbw_record_end(dbw *rec);

/* What to add to the ids a recording drew from its own counters (which all
 * started at 1): the values the load's counters had, minus one. */
typedef struct dbw_shift {
    int64_t task, op, overlap, flow_seq;
} dbw_shift;

/*
 * Replays what rec records into w, in order: strings re-interned into w,
 * string-id columns translated, counter ids shifted (rows.h row_roles). The
 * rows then are exactly those the importer would have given w directly. It
 * follows a recording still going on; when it catches up before the end, it
 * hands w over (*handed = 1): the recording thread then passes every further
 * chunk into w itself, and the caller must not use w again before that
 * thread has called dbw_record_end. The caller owns w until then.
 * Returns TB_OK or the error, with err set.
 */
tb_status dbw_replay(dbw *w, dbw *rec, const dbw_shift *shift, int *handed, tb_error *err);

/* Closes (rolling back when not finished). Accepts NULL. */
void dbw_destroy(dbw *w);

/*
 * What the rows the writer inserted held, so that the post-processing can
 * skip a scan of a whole table whose answer is known (each waits for the
 * writer first). Only rows inserted through the writer count: they are
 * every row of these tables but those SQL makes from staged flow ends,
 * which dbw_seen_flow_unbound counts in.
 * dbw_seen_flow_unbound: 1 when a TB_FLOW row may have a toNs and a
 *   connectionId NULL or >= 2^32 (or flow ends were staged), 0 when none.
 * dbw_seen_cann_no_conn: 1 when a CANN_API row may lack its connectionId.
 * dbw_seen_task_devices: the distinct (rankId, deviceId) of the TASK rows
 *   that have both, in the order met (*pairs, *n; valid until the next row);
 *   -1 when unknown (more than 64 pairs, a value that is no integer, a failed
 *   writer).
 */
int dbw_seen_flow_unbound(dbw *w);
int dbw_seen_cann_no_conn(dbw *w);
int dbw_seen_task_devices(dbw *w, const int64_t (**pairs)[2], size_t *n);

/* The embedded schema texts (tools/embed.py). */
extern const char tb_sql_unified[];
extern const char tb_sql_indexes[];      /* built after the rows */
extern const char tb_sql_indexes_live[]; /* made with the tables, kept up row by row */
extern const char tb_sql_views[];

#endif
