/* SPDX-License-Identifier: MIT */
/*
 * dbw.c - bulk writer of the unified DB.
 *
 * Loading speed is bound by SQLite inserts, so the writer keeps every
 * statement prepared, binds values without copies, keeps one transaction
 * with the journal off, interns strings in an in-memory hash table (one
 * STRING_IDS row per distinct string) and builds indexes only at the end.
 */
#define _POSIX_C_SOURCE 200809L
#include "dbw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct istr {
    uint64_t hash;
    int64_t id;    /* 0 = empty slot */
    size_t off;
    size_t len;
} istr;

struct dbw {
    sqlite3 *db;
    sqlite3_stmt *ins[R_TABLE_COUNT];
    sqlite3_stmt *ins_string;
    row_sink sink;
    tb_error err;
    int in_txn;
    int finished;
    /* intern table */
    istr *tab;
    size_t tab_cap, tab_n;
    char *arena;
    size_t arena_len, arena_cap;
    int64_t next_string_id;
};

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xff51afd7ed558ccdULL);
    while (n >= 8) {
        uint64_t k;
        memcpy(&k, p, 8);
        h = (h ^ (k * 0x87c37b91114253d5ULL)) * 0x4cf5ad432745937fULL;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t k = 0;
    memcpy(&k, p, n);
    h = (h ^ (k * 0x87c37b91114253d5ULL)) * 0x4cf5ad432745937fULL;
    h ^= h >> 32;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return h;
}

static int db_fail(dbw *w, tb_error *err, const char *what)
{
    tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(w->db));
    return -1;
}

static int64_t intern(void *ctx, const char *s, size_t n)
{
    dbw *w = ctx;
    uint64_t h = hash_bytes(s, n);
    size_t mask = w->tab_cap - 1, i = h & mask;
    while (w->tab[i].id) {
        if (w->tab[i].hash == h && w->tab[i].len == n && memcmp(w->arena + w->tab[i].off, s, n) == 0)
            return w->tab[i].id;
        i = (i + 1) & mask;
    }
    /* new string: store, insert, maybe grow */
    if (w->arena_len + n > w->arena_cap) {
        size_t ncap = w->arena_cap * 2;
        while (ncap < w->arena_len + n)
            ncap *= 2;
        char *na = realloc(w->arena, ncap);
        if (!na) {
            tb_error_set(&w->err, TB_ERR_NOMEM, "out of memory");
            return -1;
        }
        w->arena = na;
        w->arena_cap = ncap;
    }
    memcpy(w->arena + w->arena_len, s, n);
    int64_t id = w->next_string_id++;
    w->tab[i] = (istr){.hash = h, .id = id, .off = w->arena_len, .len = n};
    w->arena_len += n;
    w->tab_n++;
    sqlite3_stmt *st = w->ins_string;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, s, (int)n, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
        db_fail(w, &w->err, "cannot insert into STRING_IDS");
        sqlite3_reset(st);
        return -1;
    }
    sqlite3_reset(st);
    if (w->tab_n * 2 > w->tab_cap) {
        size_t ncap = w->tab_cap * 2;
        istr *nt = calloc(ncap, sizeof *nt);
        if (!nt) {
            tb_error_set(&w->err, TB_ERR_NOMEM, "out of memory");
            return -1;
        }
        for (size_t j = 0; j < w->tab_cap; j++) {
            if (!w->tab[j].id)
                continue;
            size_t k = w->tab[j].hash & (ncap - 1);
            while (nt[k].id)
                k = (k + 1) & (ncap - 1);
            nt[k] = w->tab[j];
        }
        free(w->tab);
        w->tab = nt;
        w->tab_cap = ncap;
    }
    return id;
}

static int put_row(void *ctx, int table, const tb_val *v)
{
    dbw *w = ctx;
    sqlite3_stmt *st = w->ins[table];
    int n = row_tables[table].ncols;
    for (int i = 0; i < n; i++) {
        switch (v[i].type) {
        case V_INT: sqlite3_bind_int64(st, i + 1, v[i].i); break;
        case V_REAL: sqlite3_bind_double(st, i + 1, v[i].d); break;
        case V_TEXT: sqlite3_bind_text(st, i + 1, v[i].s, (int)v[i].n, SQLITE_STATIC); break;
        default: sqlite3_bind_null(st, i + 1); break;
        }
    }
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        char what[96];
        snprintf(what, sizeof what, "cannot insert into %s", row_tables[table].table);
        return db_fail(w, &w->err, what);
    }
    return 0;
}

tb_status dbw_exec(dbw *w, const char *sql, tb_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        tb_error_set(err, TB_ERR_DB, "SQLite: %s", msg ? msg : sqlite3_errmsg(w->db));
        sqlite3_free(msg);
        return TB_ERR_DB;
    }
    return TB_OK;
}

dbw *dbw_create(const char *path, tb_error *err)
{
    dbw *w = calloc(1, sizeof *w);
    if (!w) {
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    tb_error_clear(&w->err);
    w->tab_cap = 1 << 14;
    w->tab = calloc(w->tab_cap, sizeof *w->tab);
    w->arena_cap = 1 << 20;
    w->arena = malloc(w->arena_cap);
    w->next_string_id = 1;
    if (!w->tab || !w->arena) {
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot create the DB: %s",
                    w->db ? sqlite3_errmsg(w->db) : "out of memory");
        goto fail;
    }
    if (dbw_exec(w, "PRAGMA page_size=16384; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                    "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-32768; PRAGMA temp_store=FILE;",
                 err) ||
        dbw_exec(w, "BEGIN", err))
        goto fail;
    w->in_txn = 1;
    if (dbw_exec(w, tb_sql_unified, err) ||
        dbw_exec(w, "CREATE TABLE TB_FLOW_END (rankId INTEGER, ph TEXT, cat INTEGER, name INTEGER, flowId TEXT,"
                    " pid, tid, ts INTEGER, seq INTEGER)",
                 err))
        goto fail;
    for (int t = 0; t < R_TABLE_COUNT; t++) {
        char sql[1024];
        int n = snprintf(sql, sizeof sql, "INSERT INTO %s(%s) VALUES(", row_tables[t].table, row_tables[t].columns);
        for (int i = 0; i < row_tables[t].ncols; i++)
            n += snprintf(sql + n, sizeof sql - (size_t)n, i ? ",?" : "?");
        snprintf(sql + n, sizeof sql - (size_t)n, ")");
        if (sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &w->ins[t], NULL) != SQLITE_OK) {
            db_fail(w, err, "cannot prepare an insert");
            goto fail;
        }
    }
    if (sqlite3_prepare_v3(w->db, "INSERT INTO STRING_IDS(id, value) VALUES(?, ?)", -1, SQLITE_PREPARE_PERSISTENT,
                           &w->ins_string, NULL) != SQLITE_OK) {
        db_fail(w, err, "cannot prepare an insert");
        goto fail;
    }
    w->sink = (row_sink){.ctx = w, .intern = intern, .row = put_row};
    return w;
fail:
    dbw_destroy(w);
    return NULL;
}

const row_sink *dbw_sink(dbw *w)
{
    return &w->sink;
}

sqlite3 *dbw_db(dbw *w)
{
    return w->db;
}

const tb_error *dbw_error(const dbw *w)
{
    return &w->err;
}

/* Pairs flow ends (the n-th start of (rank, cat, id) with its n-th finish). */
static const char pair_flows_sql[] =
    "CREATE TEMP TABLE fs AS SELECT rankId, cat, name, flowId, pid, tid, ts,"
    " row_number() OVER (PARTITION BY rankId, cat, flowId ORDER BY seq) AS k"
    " FROM TB_FLOW_END WHERE ph = 's';"
    "CREATE TEMP TABLE ff AS SELECT rankId, cat, name, flowId, pid, tid, ts,"
    " row_number() OVER (PARTITION BY rankId, cat, flowId ORDER BY seq) AS k"
    " FROM TB_FLOW_END WHERE ph <> 's';"
    "INSERT INTO TB_FLOW(rankId, cat, name, flowId, fromPid, fromTid, fromNs, toPid, toTid, toNs, connectionId)"
    " SELECT coalesce(s.rankId, f.rankId), coalesce(s.cat, f.cat), coalesce(s.name, f.name),"
    "  coalesce(s.flowId, f.flowId), s.pid, s.tid, s.ts, f.pid, f.tid, f.ts,"
    "  CASE WHEN c.value IN ('HostToDevice', 'ac2g') AND coalesce(s.flowId, f.flowId) GLOB '[0-9]*'"
    "   THEN CAST(coalesce(s.flowId, f.flowId) AS INTEGER) END"
    " FROM fs s FULL JOIN ff f ON f.rankId = s.rankId AND f.cat IS s.cat AND f.flowId IS s.flowId AND f.k = s.k"
    " LEFT JOIN STRING_IDS c ON c.id = coalesce(s.cat, f.cat)"
    " ORDER BY coalesce(s.ts, f.ts);"
    "DROP TABLE fs; DROP TABLE ff; DROP TABLE TB_FLOW_END;";

tb_status dbw_finish(dbw *w, tb_error *err)
{
    for (int t = 0; t < R_TABLE_COUNT; t++) {
        sqlite3_finalize(w->ins[t]);
        w->ins[t] = NULL;
    }
    sqlite3_finalize(w->ins_string);
    w->ins_string = NULL;
    if (dbw_exec(w, pair_flows_sql, err) || dbw_exec(w, tb_sql_indexes, err) || dbw_exec(w, tb_sql_views, err) ||
        dbw_exec(w, "COMMIT", err))
        return TB_ERR_DB;
    w->in_txn = 0;
    if (sqlite3_close(w->db) != SQLITE_OK) {
        tb_error_set(err, TB_ERR_DB, "cannot close the DB: %s", sqlite3_errmsg(w->db));
        return TB_ERR_DB;
    }
    w->db = NULL;
    w->finished = 1;
    return TB_OK;
}

void dbw_destroy(dbw *w)
{
    if (!w)
        return;
    for (int t = 0; t < R_TABLE_COUNT; t++)
        sqlite3_finalize(w->ins[t]);
    sqlite3_finalize(w->ins_string);
    if (w->db) {
        if (w->in_txn)
            sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(w->db);
    }
    free(w->tab);
    free(w->arena);
    free(w);
}
