/* SPDX-License-Identifier: MIT */
/*
 * partial.c - rank-scope reports where the ranks are: on each shard, and the
 * rows gathered (docs/scale-out.md#report-scopes).
 *
 * A report of `scope: rank` runs on each rank alone, so it needs no DB of
 * every rank: tb_report_partial() runs a spec's rank-scope reports on one
 * shard DB (each rank under its id in the whole load, read from the books
 * DB: the shards' bookkeeping merged without their rows) and writes what
 * each report would have handed its writers into a small partial DB:
 *
 *   TB_PART         (shardIndex, label, windowMiss, ranks, bytes,
 *                    windowBroken)                                 one row
 *   TB_PART_HELD    (shardIndex, rank, first, last)                per rank: its
 *                    iterations of the window's mode (with a window)
 *   TB_PART_NOTE    (shardIndex, seq, msg)                         the notes of
 *                    the shard's run (written once, at the end, by process 0)
 *   TB_PART_REPORT  (shardIndex, k, id, ran, rows, unmet)          per report
 *   TB_PART_COLUMN  (shardIndex, k, i, header, name, type)         per column
 *   TB_PART_ROWS_<k>(rank, seq, c0, c1, ...)                      the cells
 *   TB_PART_CLUSTER_<s>_<part> (shard, seq, ...)  the part tables of the
 *                    cluster tables of spec s's cluster-scope reports (their
 *                    first phase)
 *
 * k numbers the reports of all the specs in order. tb_report_gather() adds
 * the partials to the books DB (rows grow with the reports' rows, not with
 * the events), and a run with tb_run_options.replay set (runner.c) writes
 * every report from there: rows in rank order, each rank's in its own
 * order, the same cells a run over all the ranks in one DB hands the
 * writers, so the outputs are the same files.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/ask.h"
#include "db/open.h"
#include "output/table_sink.h"
#include "query/runner.h"
#include "scale/scale.h"
#include "spec/spec.h"
#include "tracebook/error.h"
#include "util/vec.h"

static const char part_schema[] =
    "CREATE TABLE IF NOT EXISTS TB_PART (shardIndex INTEGER, label TEXT, windowMiss TEXT, ranks INTEGER,"
    " bytes INTEGER, windowBroken INTEGER);"
    "CREATE TABLE IF NOT EXISTS TB_PART_HELD (shardIndex INTEGER, rank INTEGER, first INTEGER, last INTEGER);"
    "CREATE TABLE IF NOT EXISTS TB_PART_NOTE (shardIndex INTEGER, seq INTEGER, msg TEXT);"
    "CREATE TABLE IF NOT EXISTS TB_PART_REPORT (shardIndex INTEGER, k INTEGER, id TEXT, ran INTEGER,"
    " rows INTEGER, unmet TEXT);"
    "CREATE TABLE IF NOT EXISTS TB_PART_COLUMN (shardIndex INTEGER, k INTEGER, i INTEGER, header TEXT, name TEXT,"
    " type INTEGER);";

static tb_status db_fail(sqlite3 *db, const char *path, tb_error *err)
{
    return tb_error_at(err, TB_ERR_DB, path, 0, 0, -1, "SQLite: %s", db ? sqlite3_errmsg(db) : "out of memory");
}

/* ---- the partial of one shard ------------------------------------------------- */

typedef struct part_writer {
    sqlite3 *db;
    const char *path;
    int64_t shard;
    const tb_run_options *run;
    /* the report being captured: its number and rank, its rows' table */
    int64_t k, rank, seq;
    char table[48];
    const tb_spec_report *rep; /* the report whose requirements unmet holds */
    char unmet[256];
    int64_t notes;           /* notes kept */
    tb_status failed;        /* a callback's error, raised when the run returns */
    tb_error err;
} part_writer;

/* The number of report rep among all the specs' reports, or -1. */
static int64_t report_number(const tb_run_options *o, const tb_spec_report *rep)
{
    int64_t k = 0;
    for (size_t s = 0; s < o->n_specs; s++)
        for (size_t i = 0; i < o->specs[s]->n_reports; i++, k++)
            if (&o->specs[s]->reports[i] == rep)
                return k;
    return -1;
}

static tb_status cap_fail(void *ctx, tb_error *err)
{
    part_writer *pw = ctx;
    return db_fail(pw->db, pw->path, err);
}

/* The report's columns, before its rows' table TB_PART_ROWS_<k> is made. */
static tb_status cap_columns(void *ctx, const tb_sink_column *cols, size_t n, tb_error *err)
{
    part_writer *pw = ctx;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(pw->db, "INSERT INTO TB_PART_COLUMN VALUES(?,?,?,?,?,?)", -1, &q, NULL) != SQLITE_OK)
        return db_fail(pw->db, pw->path, err);
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(q, 1, pw->shard);
        sqlite3_bind_int64(q, 2, pw->k);
        sqlite3_bind_int64(q, 3, (int64_t)i);
        sqlite3_bind_text(q, 4, cols[i].header, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 5, cols[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_int(q, 6, (int)cols[i].type);
        if (sqlite3_step(q) != SQLITE_DONE) {
            sqlite3_finalize(q);
            return db_fail(pw->db, pw->path, err);
        }
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    pw->seq = 0;
    return TB_OK;
}

/* A row's rank (its id in the load) and its place among the report's rows. */
static tb_status cap_lead(void *ctx, sqlite3_stmt *ins, const tb_cell *cells, tb_error *err)
{
    (void)cells;
    (void)err;
    part_writer *pw = ctx;
    sqlite3_bind_int64(ins, 1, pw->rank);
    sqlite3_bind_int64(ins, 2, pw->seq++);
    return TB_OK;
}

static tb_status cap_open(void *ctx, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                          const char *label, tb_sink **out, tb_error *err)
{
    (void)spec;
    (void)format;
    (void)label;
    part_writer *pw = ctx;
    pw->k = report_number(pw->run, rep);
    snprintf(pw->table, sizeof pw->table, "\"TB_PART_ROWS_%lld\"", (long long)pw->k);
    /* the cells as the run handed them (times already in the run's unit): the replay writes them as they are */
    table_sink_options o = {.db = pw->db, .table = pw->table, .lead = "rank INTEGER, seq INTEGER", .n_lead = 2,
                            .begin = cap_columns, .bind_lead = cap_lead, .fail = cap_fail, .ctx = pw};
    return table_sink_create(&o, out, err);
}

static void cap_rank(void *ctx, const tb_spec_report *rep, int64_t rank)
{
    (void)rep;
    ((part_writer *)ctx)->rank = rank;
}

static void cap_requires(void *ctx, const tb_spec_report *rep, const char *unmet)
{
    part_writer *pw = ctx;
    pw->rep = rep;
    snprintf(pw->unmet, sizeof pw->unmet, "%s", unmet);
}

/* An insert of one row into the partial DB for a callback (which cannot
 * fail): NULL when an earlier one failed or this one cannot be prepared
 * (the failure kept in pw, raised when the run returns). */
static sqlite3_stmt *part_insert(part_writer *pw, const char *sql)
{
    sqlite3_stmt *q = NULL;
    if (pw->failed)
        return NULL;
    if (sqlite3_prepare_v2(pw->db, sql, -1, &q, NULL) != SQLITE_OK) {
        pw->failed = db_fail(pw->db, pw->path, &pw->err);
        return NULL;
    }
    return q;
}

/* Runs and finalizes part_insert's statement, keeping a failure. */
static void part_put(part_writer *pw, sqlite3_stmt *q)
{
    if (sqlite3_step(q) != SQLITE_DONE)
        pw->failed = db_fail(pw->db, pw->path, &pw->err);
    sqlite3_finalize(q);
}

static void cap_done(void *ctx, const tb_spec_report *rep, const char *skipped, uint64_t rows)
{
    part_writer *pw = ctx;
    sqlite3_stmt *q = part_insert(pw, "INSERT INTO TB_PART_REPORT VALUES(?,?,?,?,?,?)");
    if (!q)
        return;
    sqlite3_bind_int64(q, 1, pw->shard);
    sqlite3_bind_int64(q, 2, report_number(pw->run, rep));
    sqlite3_bind_text(q, 3, rep->id, -1, SQLITE_STATIC);
    sqlite3_bind_int(q, 4, !skipped);
    sqlite3_bind_int64(q, 5, skipped ? 0 : (int64_t)rows);
    /* a shard whose window has none of its ranks meets nothing */
    if (pw->rep == rep)
        sqlite3_bind_text(q, 6, pw->unmet, -1, SQLITE_STATIC);
    part_put(pw, q);
    pw->rep = NULL;
}

/* The number of the spec that holds rep, or -1. */
static int64_t spec_number(const tb_run_options *o, const tb_spec_report *rep)
{
    for (size_t s = 0; s < o->n_specs; s++)
        if (rep >= o->specs[s]->reports && rep < o->specs[s]->reports + o->specs[s]->n_reports)
            return (int64_t)s;
    return -1;
}

/*
 * A cluster-scope report's part tables (the first phase of its cluster
 * tables, on this shard's ranks) into TB_PART_CLUSTER_<s>_<part> (shard,
 * seq, then the part's columns; s: the report's spec, whose options every
 * report of it builds with, so its reports share the rows), a rankId
 * column mapped from the shard's numbers to the load's (the books DB's
 * TB_SHARDS_RANK, attached as books). A part already written for the spec
 * is the same rows and is not written again, but for the facts, which grow
 * with each table's first phase.
 */
static tb_status cap_cluster(void *ctx, const tb_spec_report *rep, sqlite3 *db, const char *const *parts, size_t n,
                             tb_error *err)
{
    part_writer *pw = ctx;
    int64_t k = spec_number(pw->run, rep);
    tb_status rc = TB_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        char name[128];
        snprintf(name, sizeof name, "TB_PART_CLUSTER_%lld_%s", (long long)k, parts[i]);
        int there = db_has_table(pw->db, "main", name, 0);
        if (there < 0)
            return db_fail(pw->db, pw->path, err);
        if (there && strcmp(parts[i], "tb_cp_facts") != 0)
            continue;
        if (there) {
            char *drop = sqlite3_mprintf("DROP TABLE \"%w\"", name);
            int e = drop ? sqlite3_exec(pw->db, drop, NULL, NULL, NULL) : SQLITE_NOMEM;
            sqlite3_free(drop);
            if (e != SQLITE_OK)
                return db_fail(pw->db, pw->path, err);
        }
        sqlite3_stmt *q = NULL, *ins = NULL;
        char *sel = sqlite3_mprintf("SELECT * FROM temp.\"%w\" ORDER BY rowid", parts[i]);
        if (!sel)
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        int prc = sqlite3_prepare_v2(db, sel, -1, &q, NULL);
        sqlite3_free(sel);
        if (prc != SQLITE_OK)
            return tb_error_set(err, TB_ERR_INTERNAL, "report '%s': part table %s: %s", rep->id, parts[i],
                                sqlite3_errmsg(db));
        int nc = sqlite3_column_count(q), ranked = 0;
        sqlite3_str *ddl = sqlite3_str_new(pw->db), *iq = sqlite3_str_new(pw->db);
        sqlite3_str_appendf(ddl, "CREATE TABLE \"%w\" (shard INTEGER, seq INTEGER", name);
        sqlite3_str_appendf(iq, "INSERT INTO \"%w\" VALUES(?,?", name);
        for (int c = 0; c < nc; c++) {
            sqlite3_str_appendf(ddl, ", \"%w\"", sqlite3_column_name(q, c));
            sqlite3_str_appendall(iq, ",?");
            ranked |= !strcmp(sqlite3_column_name(q, c), "rankId");
        }
        sqlite3_str_appendall(ddl, ")");
        sqlite3_str_appendall(iq, ")");
        char *d = sqlite3_str_finish(ddl), *is = sqlite3_str_finish(iq);
        /* the table, its rows, then the mapping of their ranks */
        char *upd = ranked ? sqlite3_mprintf("UPDATE \"%w\" AS t SET rankId = (SELECT m.rankId FROM"
                                             " books.TB_SHARDS_RANK m WHERE m.inputRank = t.rankId) WHERE rankId IN"
                                             " (SELECT inputRank FROM books.TB_SHARDS_RANK)",
                                             name)
                           : NULL;
        if (!d || !is || (ranked && !upd))
            rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        else if (sqlite3_exec(pw->db, d, NULL, NULL, NULL) != SQLITE_OK ||
                 sqlite3_prepare_v2(pw->db, is, -1, &ins, NULL) != SQLITE_OK)
            rc = db_fail(pw->db, pw->path, err);
        int64_t seq = 0;
        int step = SQLITE_DONE;
        while (!rc && (step = sqlite3_step(q)) == SQLITE_ROW) {
            sqlite3_bind_int64(ins, 1, pw->shard);
            sqlite3_bind_int64(ins, 2, seq++);
            for (int c = 0; c < nc; c++)
                sqlite3_bind_value(ins, c + 3, sqlite3_column_value(q, c));
            if (sqlite3_step(ins) != SQLITE_DONE)
                rc = db_fail(pw->db, pw->path, err);
            sqlite3_reset(ins);
        }
        if (!rc && step != SQLITE_DONE)
            rc = tb_error_set(err, TB_ERR_DB, "report '%s': part table %s: %s", rep->id, parts[i], sqlite3_errmsg(db));
        if (!rc && upd && sqlite3_exec(pw->db, upd, NULL, NULL, NULL) != SQLITE_OK)
            rc = db_fail(pw->db, pw->path, err);
        sqlite3_free(upd);
        sqlite3_free(d);
        sqlite3_free(is);
        sqlite3_finalize(ins);
        sqlite3_finalize(q);
    }
    return rc;
}

static void cap_note(void *ctx, const char *msg)
{
    part_writer *pw = ctx;
    sqlite3_stmt *q = part_insert(pw, "INSERT INTO TB_PART_NOTE VALUES(?,?,?)");
    if (!q)
        return;
    sqlite3_bind_int64(q, 1, pw->shard);
    sqlite3_bind_int64(q, 2, pw->notes++);
    sqlite3_bind_text(q, 3, msg, -1, SQLITE_STATIC);
    part_put(pw, q);
}

static void cap_held(void *ctx, int64_t rank, int64_t first, int64_t last)
{
    part_writer *pw = ctx;
    sqlite3_stmt *q = part_insert(pw, "INSERT INTO TB_PART_HELD VALUES(?,?,?,?)");
    if (!q)
        return;
    const int64_t v[4] = {pw->shard, rank, first, last};
    for (int i = 0; i < 4; i++)
        sqlite3_bind_int64(q, i + 1, v[i]);
    part_put(pw, q);
}

/*
 * The shard's index and its ranks: rank_ids as the shard numbers them
 * (TB_SHARD.ranks), rank_shown as the load of all the shards does (the
 * books DB's TB_SHARDS_RANK; their list must be the books' record of the
 * shard, TB_SHARDS.ranks), and the load's rank count.
 */
static tb_status rank_map(const scale_partial_job *job, sqlite3 *sd, int64_t *shard, int64_t **ids, int64_t **shown, size_t *n,
                          int64_t *total, tb_error *err)
{
    sqlite3 *bd = NULL;
    sqlite3_stmt *q = NULL;
    tb_status rc = TB_OK;
    char *mine = NULL;
    size_t cap = 0;
    *ids = *shown = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(sd, "SELECT shardIndex, ranks FROM TB_SHARD", -1, &q, NULL) != SQLITE_OK ||
        sqlite3_step(q) != SQLITE_ROW) {
        rc = tb_error_at(err, TB_ERR_PARSE, job->shard, 0, 0, -1, "not a shard DB (TB_SHARD): %s",
                         sd ? sqlite3_errmsg(sd) : "out of memory");
        goto done;
    }
    *shard = sqlite3_column_int64(q, 0);
    mine = strdup(sqlite3_column_text(q, 1) ? (const char *)sqlite3_column_text(q, 1) : "[]");
    sqlite3_finalize(q);
    q = NULL;
    if (!mine) {
        rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* each of the shard's numbers with the load's id, in the shard's order */
#define SHARD_MAP "SELECT j.key AS k, j.value AS p, r.rankId AS f FROM json_each(?2) j" \
                  " LEFT JOIN TB_SHARDS_RANK r ON r.inputRank = j.value"
    if (db_open(job->books_db, SQLITE_OPEN_READONLY, &bd) != SQLITE_OK ||
        sqlite3_prepare_v2(bd,
                           "SELECT (SELECT count(DISTINCT rankId) FROM TB_RANK),"
                           " EXISTS (SELECT 1 FROM TB_SHARDS WHERE shardIndex = ?1),"
                           " (SELECT json(ranks) FROM TB_SHARDS WHERE shardIndex = ?1) IS"
                           " (SELECT json_group_array(f) FROM (" SHARD_MAP " ORDER BY j.key))",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = db_fail(bd, job->books_db, err);
        goto done;
    }
    sqlite3_bind_int64(q, 1, *shard);
    sqlite3_bind_text(q, 2, mine, -1, SQLITE_STATIC);
    if (sqlite3_step(q) != SQLITE_ROW) {
        rc = db_fail(bd, job->books_db, err);
        goto done;
    }
    *total = sqlite3_column_int64(q, 0);
    if (!sqlite3_column_int(q, 1)) {
        rc = tb_error_at(err, TB_ERR_USAGE, job->shard, 0, 0, -1, "shard %lld is not a part of the load of '%s'",
                         (long long)*shard, job->books_db);
        goto done;
    }
    /* the books' record of the shard is that list */
    if (!sqlite3_column_int(q, 2)) {
        rc = tb_error_at(err, TB_ERR_PARSE, job->shard, 0, 0, -1,
                         "the shard's ranks (%.100s) do not match the load's record of them", mine);
        goto done;
    }
    sqlite3_finalize(q);
    q = NULL;
    if (sqlite3_prepare_v2(bd, SHARD_MAP " ORDER BY j.key", -1, &q, NULL) != SQLITE_OK) {
        rc = db_fail(bd, job->books_db, err);
        goto done;
    }
#undef SHARD_MAP
    sqlite3_bind_text(q, 2, mine, -1, SQLITE_STATIC);
    int st;
    size_t n_shown = 0, cap_shown = 0;
    while ((st = sqlite3_step(q)) == SQLITE_ROW)
        if (VEC_PUSH(*ids, *n, cap, sqlite3_column_int64(q, 1)) ||
            VEC_PUSH(*shown, n_shown, cap_shown, sqlite3_column_int64(q, 2))) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            goto done;
        }
    if (st != SQLITE_DONE)
        rc = db_fail(bd, job->books_db, err);
done:
    sqlite3_finalize(q);
    sqlite3_close(bd);
    free(mine);
    if (rc) {
        free(*ids);
        free(*shown);
        *ids = *shown = NULL;
        *n = 0;
    }
    return rc;
}

tb_status scale_partial(const scale_partial_job *job, tb_error *err)
{
    part_writer pw = {.path = job->out_path, .run = NULL};
    tb_run_options o = job->run;
    run_part pt = {0};
    int64_t *ids = NULL, *shown = NULL, total = 0;
    size_t n = 0;
    sqlite3 *sd = NULL;
    if (db_open(job->shard, SQLITE_OPEN_READONLY, &sd) != SQLITE_OK) {
        tb_status st = tb_error_at(err, TB_ERR_PARSE, job->shard, 0, 0, -1, "not a shard DB (TB_SHARD): %s",
                                   sd ? sqlite3_errmsg(sd) : "out of memory");
        sqlite3_close(sd);
        return st;
    }
    o.db = sd;
    o.db_name = job->shard;
    tb_status rc = rank_map(job, sd, &pw.shard, &ids, &shown, &n, &total, err);
    if (rc) {
        sqlite3_close(sd);
        return rc;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", job->out_path);
    unlink(tmp);
    char *att = sqlite3_mprintf("ATTACH %Q AS books", job->books_db);
    if (!att) {
        rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (db_open(tmp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &pw.db) != SQLITE_OK ||
        sqlite3_exec(pw.db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(pw.db, att, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(pw.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(pw.db, part_schema, NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_free(att);
        rc = db_fail(pw.db, tmp, err);
        goto done;
    }
    sqlite3_free(att);
    pt.rank_ids = ids;
    pt.rank_shown = shown;
    pt.n_rank_ids = n;
    pt.ranks_total = total;
    o.formats = TB_OUT_CSV; /* one capture per report: the writers open at the replay */
    o.open_sink = cap_open;
    o.sink_done = NULL;
    o.report_done = cap_done;
    pt.rank_start = cap_rank;
    pt.requires_seen = cap_requires;
    pt.cluster_rows = cap_cluster;
    pt.window_held = cap_held;
    /* the notes (ranks by their ids in the load) are said once, by the run
     * over the gathered rows */
    o.note = cap_note;
    o.ctx = &pw;
    o.sink_ctx = &pw;
    pt.window_miss_ok = 1;
    pw.run = &o;
    tb_run_result res;
    rc = runner_run(&o, &pt, &res, err);
    if (!rc && pw.failed) {
        *err = pw.err;
        rc = pw.failed;
    }
    if (rc)
        goto done;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(pw.db, "INSERT INTO TB_PART VALUES(?,?,?,?,0,?)", -1, &q, NULL) != SQLITE_OK) {
        rc = db_fail(pw.db, tmp, err);
        goto done;
    }
    sqlite3_bind_int64(q, 1, pw.shard);
    sqlite3_bind_text(q, 2, res.window_label, -1, SQLITE_TRANSIENT);
    if (res.window_missed)
        sqlite3_bind_text(q, 3, err->message, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(q, 4, (int64_t)n);
    sqlite3_bind_int(q, 5, res.window_missed == 2);
    int ok = sqlite3_step(q) == SQLITE_DONE;
    sqlite3_finalize(q);
    if (!ok || sqlite3_exec(pw.db, "COMMIT; DETACH books", NULL, NULL, NULL) != SQLITE_OK) {
        rc = db_fail(pw.db, tmp, err);
        goto done;
    }
    tb_error_clear(err);
    sqlite3_close(pw.db);
    pw.db = NULL;
    if (rename(tmp, job->out_path) != 0)
        rc = tb_error_at(err, TB_ERR_IO, job->out_path, 0, 0, -1, "cannot put the partial rows in place");
done:
    sqlite3_close(pw.db);
    sqlite3_close(sd);
    if (rc)
        unlink(tmp);
    free(ids);
    free(shown);
    return rc;
}

/* ---- the gather ----------------------------------------------------------------- */

tb_status scale_gather(const char *books_db, const char *const *partials, size_t n, tb_error *err)
{
    sqlite3 *db = NULL;
    tb_status rc = TB_OK;
    if (db_open(books_db, SQLITE_OPEN_READWRITE, &db) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, part_schema, NULL, NULL, NULL) != SQLITE_OK)
        goto dberr;
    /* one transaction per partial: a database is detached outside of one */
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        int64_t bytes = stat(partials[i], &sb) == 0 ? (int64_t)sb.st_size : 0;
        char *att = sqlite3_mprintf("ATTACH %Q AS p", partials[i]);
        int a = att ? sqlite3_exec(db, att, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(att);
        if (a != SQLITE_OK) {
            rc = tb_error_at(err, TB_ERR_IO, partials[i], 0, 0, -1, "cannot read the partial rows: %s",
                             sqlite3_errmsg(db));
            goto done;
        }
        sqlite3_stmt *q = NULL;
        if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
            goto dberr;
        char *sql = sqlite3_mprintf("INSERT INTO main.TB_PART SELECT shardIndex, label, windowMiss, ranks, %lld,"
                                    " windowBroken FROM p.TB_PART;"
                                    "INSERT INTO main.TB_PART_HELD SELECT * FROM p.TB_PART_HELD;"
                                    "INSERT INTO main.TB_PART_NOTE SELECT * FROM p.TB_PART_NOTE;"
                                    "INSERT INTO main.TB_PART_REPORT SELECT * FROM p.TB_PART_REPORT;"
                                    "INSERT INTO main.TB_PART_COLUMN SELECT * FROM p.TB_PART_COLUMN;",
                                    (long long)bytes);
        int e = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
        if (e != SQLITE_OK ||
            sqlite3_prepare_v2(db, "SELECT name, sql FROM p.sqlite_master WHERE type = 'table'"
                                   " AND (name GLOB 'TB_PART_ROWS_*' OR name GLOB 'TB_PART_CLUSTER_*')",
                               -1, &q, NULL) != SQLITE_OK)
            goto dberr;
        while (sqlite3_step(q) == SQLITE_ROW) {
            const char *t = (const char *)sqlite3_column_text(q, 0), *ddl = (const char *)sqlite3_column_text(q, 1);
            /* CREATE TABLE "X" (...) -> CREATE TABLE IF NOT EXISTS main."X" (...) */
            char *c = sqlite3_mprintf("CREATE TABLE IF NOT EXISTS main.\"%w\"%s; INSERT INTO main.\"%w\" SELECT * FROM"
                                      " p.\"%w\";",
                                      t, strchr(ddl, '(') ? strchr(ddl, '(') - 1 : "", t, t);
            e = c ? sqlite3_exec(db, c, NULL, NULL, NULL) : SQLITE_NOMEM;
            sqlite3_free(c);
            if (e != SQLITE_OK) {
                sqlite3_finalize(q);
                goto dberr;
            }
        }
        sqlite3_finalize(q);
        if (sqlite3_exec(db, "COMMIT; DETACH p", NULL, NULL, NULL) != SQLITE_OK)
            goto dberr;
    }
    goto done;
dberr:
    rc = db_fail(db, books_db, err);
done:
    sqlite3_close(db);
    return rc;
}
