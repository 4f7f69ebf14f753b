/* SPDX-License-Identifier: MIT */
/*
 * torchlinks.h - a torch_npu timeline rank's PyTorch calls linked to their
 * device tasks through its async_npu flows (private to the engine): made
 * from the stored rows, then kept in the DB an export writes
 * (CONNECTION_IDS rows, PYTORCH_API.connectionId) or in a report run's
 * temporary tables (metrics/torchlink.c). docs/schema.md, "PyTorch calls
 * and their tasks", gives the rules.
 */
#ifndef TB_DB_TORCHLINKS_H
#define TB_DB_TORCHLINKS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* A linked call: its PYTORCH_API row (rank, rowid, globalTid, times,
 * name) and its id, numbered per rank from 0 in the order of the calls'
 * starts, then of their rowids. */
typedef struct db_tl_call {
    int64_t rank, row, gtid, start, end, name, id;
} db_tl_call;

/* A link row as CONNECTION_IDS holds it: a call's id and the connection id
 * of one of its tasks. */
typedef struct db_tl_id {
    int64_t id, conn, rank;
} db_tl_id;

typedef struct db_torch_links {
    db_tl_call *calls; /* by rank, then id */
    size_t ncalls;
    db_tl_id *ids; /* by rank, id, then connection id; one per distinct pair */
    size_t nids;
} db_torch_links;

/*
 * The links of every rank of db (its main schema) that has async_npu flows
 * and no CONNECTION_IDS rows. Returns 0, -1 (SQLite's error: see
 * sqlite3_errmsg) or -2 (out of memory); free *l with db_torch_links_free,
 * also on failure.
 */
int db_torch_links_make(sqlite3 *db, db_torch_links *l);

/*
 * Keeps the links in db as a DB of torch_npu holds them: a CONNECTION_IDS
 * row (id, connectionId, rankId) per link row, and each linked call's id
 * as its PYTORCH_API.connectionId (its row updated in place, by rowid).
 * Returns 0, -1 (SQLite's error) or -2 (out of memory). Runs in the
 * caller's transaction.
 */
int db_torch_links_store(sqlite3 *db, const db_torch_links *l);

void db_torch_links_free(db_torch_links *l);

#endif
