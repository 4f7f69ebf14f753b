/* SPDX-License-Identifier: MIT */
/*
 * reuse.c - computed tables made beside the one asked for, kept until asked
 * (reuse.h says when and why). What is kept lives in the run's TEMP schema:
 * temp.tb_m_reuse_<name> (the rows), temp.tb_m_reuse_key (name, key) and
 * temp.tb_m_reuse_notes (name, msg, in rowid order); the run's end drops
 * them with every other TEMP object.
 */
#include <stdio.h>
#include <string.h>

#include "metrics/reuse.h"

static const char keep_tables[] =
    "CREATE TEMP TABLE IF NOT EXISTS tb_m_reuse_key (name TEXT PRIMARY KEY, key TEXT);"
    "CREATE TEMP TABLE IF NOT EXISTS tb_m_reuse_notes (name TEXT, msg TEXT);";

void reuse_staging(const char *name, char *out, size_t n)
{
    snprintf(out, n, "tb_m_reuse_%s", name);
}

/*
 * Appends the window's state to s: every TEMP view (name and SQL), and the
 * TEMP tables that hold the window's ranges and the current rank: those
 * named tb_rank_now (its rows: the current rank changes by UPDATE) and
 * tb_window* or tb_iter* (their row count: they are made once per run). 0,
 * or -1 when a read fails.
 */
static int window_state(sqlite3 *db, sqlite3_str *s)
{
    sqlite3_stmt *st = NULL;
    int rc;
    if (sqlite3_prepare_v2(db, "SELECT type, name, sql FROM temp.sqlite_master WHERE type = 'view' "
                               "OR (type = 'table' AND (name = 'tb_rank_now' OR name GLOB 'tb_window*' "
                               "OR name GLOB 'tb_iter*')) ORDER BY type, name", -1, &st, NULL) != SQLITE_OK)
        return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        sqlite3_str_appendf(s, "|%s %s %s", type, name, (const char *)sqlite3_column_text(st, 2));
        if (strcmp(type, "table"))
            continue;
        char *q = !strcmp(name, "tb_rank_now")
                      ? sqlite3_mprintf("SELECT group_concat(quote(rank) || ',' || quote(shown), ';') FROM temp.tb_rank_now")
                      : sqlite3_mprintf("SELECT count(*) FROM temp.\"%w\"", name);
        sqlite3_stmt *c = NULL;
        int ok = q && sqlite3_prepare_v2(db, q, -1, &c, NULL) == SQLITE_OK && sqlite3_step(c) == SQLITE_ROW;
        if (ok)
            sqlite3_str_appendf(s, " = %s", (const char *)sqlite3_column_text(c, 0));
        sqlite3_finalize(c);
        sqlite3_free(q);
        if (!ok) {
            sqlite3_finalize(st);
            return -1;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

char *reuse_key(const metric_ctx *m, const char *opts)
{
    sqlite3_str *s = sqlite3_str_new(m->db);
    sqlite3_str_appendf(s, "%s|phase %d|part", opts, (int)m->phase);
    for (size_t i = 0; i < m->n_rank_ids; i++)
        sqlite3_str_appendf(s, " %lld:%lld", (long long)m->rank_ids[i], (long long)m->rank_shown[i]);
    int bad = window_state(m->db, s);
    char *key = sqlite3_str_finish(s);
    if (bad) {
        sqlite3_free(key);
        return NULL;
    }
    return key;
}

/* The key name's staging was made under, or NULL. Returns new (sqlite3_free). */
static char *kept_key(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    char *key = NULL;
    if (sqlite3_prepare_v2(db, "SELECT key FROM temp.tb_m_reuse_key WHERE name = ?1", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        key = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return key;
}

/* Gives the notes kept for name to m->note, in order. */
static tb_status give_notes(const metric_ctx *m, const char *name, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc;
    if (sqlite3_prepare_v2(m->db, "SELECT msg FROM temp.tb_m_reuse_notes WHERE name = ?1 ORDER BY rowid", -1, &st,
                           NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", name, sqlite3_errmsg(m->db));
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (m->note)
            m->note(m->ctx, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? TB_OK : tb_error_set(err, TB_ERR_DB, "%s: %s", name, sqlite3_errmsg(m->db));
}

tb_status reuse_take(const metric_ctx *m, const char *name, const char *create, const char *key, int *taken,
                     tb_error *err)
{
    *taken = 0;
    if (!key)
        return TB_OK;
    tb_status rc = metrics_exec(m, name, keep_tables, err);
    if (rc)
        return rc;
    char *was = kept_key(m->db, name);
    int same = was && !strcmp(was, key);
    sqlite3_free(was);
    if (!same)
        return TB_OK;
    char staging[128];
    reuse_staging(name, staging, sizeof staging);
    char *move = sqlite3_mprintf("INSERT INTO temp.\"%w\" SELECT * FROM temp.\"%w\" ORDER BY rowid", name, staging);
    if (!move)
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", name);
    if (!(rc = metrics_exec(m, name, create, err)) && !(rc = metrics_exec(m, name, move, err)) &&
        !(rc = give_notes(m, name, err)))
        *taken = 1;
    sqlite3_free(move);
    tb_status rc2 = reuse_forget(m, name, err);
    return rc ? rc : rc2;
}

tb_status reuse_forget(const metric_ctx *m, const char *name, tb_error *err)
{
    char staging[128];
    reuse_staging(name, staging, sizeof staging);
    char *sql = sqlite3_mprintf("%sDROP TABLE IF EXISTS temp.\"%w\";"
                                "DELETE FROM temp.tb_m_reuse_key WHERE name = %Q;"
                                "DELETE FROM temp.tb_m_reuse_notes WHERE name = %Q;",
                                keep_tables, staging, name, name);
    if (!sql)
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", name);
    tb_status rc = metrics_exec(m, name, sql, err);
    sqlite3_free(sql);
    return rc;
}

tb_status reuse_keep(const metric_ctx *m, const char *name, const char *key, tb_error *err)
{
    char *sql = sqlite3_mprintf("INSERT OR REPLACE INTO temp.tb_m_reuse_key VALUES (%Q, %Q)", name, key);
    if (!sql)
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", name);
    tb_status rc = metrics_exec(m, name, sql, err);
    sqlite3_free(sql);
    return rc;
}

void reuse_note(void *ctx, const char *msg)
{
    reuse_notes *n = ctx;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(n->db, "INSERT INTO temp.tb_m_reuse_notes VALUES (?1, ?2)", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, n->name, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_text(st, 2, msg, -1, SQLITE_TRANSIENT) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE)
        n->failed = 1;
    sqlite3_finalize(st);
}
