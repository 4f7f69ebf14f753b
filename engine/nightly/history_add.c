/* SPDX-License-Identifier: MIT */
/*
 * history_add.c - `history add`: one night's report rows appended to the
 * history (tracebook/nightly.h: tb_history_add; docs/nightly.md).
 *
 * Every report of the spec runs on the night's DB (times in ns, so that a
 * later report may pick any unit) into a sink that keeps what it wrote: its
 * columns (header, base name, type) and every cell of every row. The rows
 * are first gathered in tables of a private scratch DB, which takes no lock
 * on the history and leaves no trace there when a report fails; then the
 * history (made by history.c when missing) is attached and one BEGIN
 * IMMEDIATE transaction adds the night, its metadata and its rows and
 * applies the retention. An appender that finds the history locked waits
 * (busy timeout), so two jobs appending at once both land, one after the
 * other. The DB itself is history.c's; this file only calls into it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <limits.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "db/open.h"
#include "nightly/history_int.h"
#include "output/table_sink.h"
#include "query/file_ids.h"
#include "report/manifest.h"
#include "session/session.h"
#include "tracebook/db.h"
#include "tracebook/nightly.h"
#include "tracebook/report.h"

static void utc_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

typedef struct hadd {
    sqlite3 *db;
    const char *path;
    sqlite3_stmt *col, *rep;
    tb_error *err;
    uint64_t rows;
    size_t reports;
    /* the report being kept: its rows go to t_rows, then cell by cell to t_cell */
    const tb_spec_report *now;
    size_t n_cols;
    int64_t row;
    int made;                /* t_rows holds the report's rows */
    tb_status failed;        /* a failure after a report, raised when the run returns */
} hadd;

static tb_status h_fail(void *ctx, tb_error *err)
{
    hadd *h = ctx;
    return history_dberr(h->db, h->path, err);
}

/* The report's columns into t_column, before its rows' table is made. */
static tb_status h_columns(void *ctx, const tb_sink_column *cols, size_t n, tb_error *err)
{
    hadd *h = ctx;
    h->n_cols = n;
    h->row = 0;
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_text(h->col, 1, h->now->id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(h->col, 2, (int64_t)i);
        sqlite3_bind_text(h->col, 3, cols[i].header, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(h->col, 4, cols[i].name ? cols[i].name : cols[i].header, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(h->col, 5, history_type_name(cols[i].type), -1, SQLITE_STATIC);
        int rc = sqlite3_step(h->col);
        sqlite3_reset(h->col);
        if (rc != SQLITE_DONE)
            return history_dberr(h->db, h->path, err);
    }
    h->made = 1;
    return TB_OK;
}

static tb_status h_row(void *ctx, sqlite3_stmt *ins, const tb_cell *cells, tb_error *err)
{
    (void)cells;
    (void)err;
    hadd *h = ctx;
    sqlite3_bind_int64(ins, 1, h->row++);
    return TB_OK;
}

static void h_counted(void *ctx)
{
    ((hadd *)ctx)->rows++;
}

static tb_status h_open(void *ctx, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                        const char *label, tb_sink **out, tb_error *err)
{
    (void)spec;
    (void)format;
    (void)label;
    hadd *h = ctx;
    h->now = rep;
    table_sink_options o = {.db = h->db, .table = "t_rows", .lead = "row INTEGER", .n_lead = 1, .begin = h_columns,
                            .bind_lead = h_row, .inserted = h_counted, .fail = h_fail, .scaled_real = 1, .ctx = h};
    return table_sink_create(&o, out, err);
}

/* The report's rows, kept in t_rows, into t_cell: one row per cell that is
 * not NULL, row by row, then t_rows goes. */
static tb_status h_cells(hadd *h, tb_error *err)
{
    sqlite3_str *q = sqlite3_str_new(h->db);
    sqlite3_str_appendall(q, "INSERT INTO t_cell SELECT ?1, row, col, value FROM (");
    for (size_t i = 0; i < h->n_cols; i++)
        sqlite3_str_appendf(q, "%sSELECT row, %d AS col, c%d AS value FROM t_rows", i ? " UNION ALL " : "", (int)i, (int)i);
    if (!h->n_cols)
        sqlite3_str_appendall(q, "SELECT 0 AS row, 0 AS col, NULL AS value");
    sqlite3_str_appendall(q, ") WHERE value IS NOT NULL ORDER BY row, col");
    char *sql = sqlite3_str_finish(q);
    sqlite3_stmt *st = NULL;
    tb_status rc = TB_OK;
    if (!sql)
        rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    else if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK ||
             sqlite3_bind_text(st, 1, h->now->id, -1, SQLITE_STATIC) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE ||
             sqlite3_exec(h->db, "DROP TABLE t_rows", NULL, NULL, NULL) != SQLITE_OK)
        rc = history_dberr(h->db, h->path, err);
    sqlite3_finalize(st);
    sqlite3_free(sql);
    h->made = 0;
    return rc;
}

static void h_done(void *ctx, const tb_spec_report *rep, const char *skipped, uint64_t rows)
{
    hadd *h = ctx;
    if (h->made && !h->failed)
        h->failed = h_cells(h, h->err);
    sqlite3_bind_text(h->rep, 1, rep->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(h->rep, 2, rep->title ? rep->title : rep->id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(h->rep, 3, skipped ? 0 : (int64_t)rows);
    if (skipped)
        sqlite3_bind_text(h->rep, 4, skipped, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(h->rep, 4);
    sqlite3_step(h->rep);
    sqlite3_reset(h->rep);
    sqlite3_clear_bindings(h->rep);
    h->reports += !skipped;
}

/* The data's start as UTC YYYY-MM-DDThh:mm:ssZ. */
static void data_time(sqlite3 *db, char *out, size_t n)
{
    time_t t = (time_t)db_start_time(db);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int64_t count_nights(sqlite3 *db)
{
    sqlite3_stmt *q = NULL;
    int64_t n = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM night", -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return n;
}

static tb_status check_meta(const tb_history_add_job *job, tb_error *err)
{
    for (size_t i = 0; i < job->n_meta; i++) {
        const char *eq = strchr(job->meta[i], '=');
        if (!eq || eq == job->meta[i])
            return tb_error_set(err, TB_ERR_USAGE, "--meta '%s': expected KEY=VALUE", job->meta[i]);
        for (size_t j = 0; j < i; j++) {
            size_t k = (size_t)(eq - job->meta[i]);
            if (!strncmp(job->meta[j], job->meta[i], k) && job->meta[j][k] == '=')
                return tb_error_set(err, TB_ERR_USAGE, "--meta '%.*s' given twice", (int)k, job->meta[i]);
        }
    }
    return TB_OK;
}

/* The night as its session gives it: its DB, inputs and window (all borrowed). */
typedef struct night_src {
    sqlite3 *db;
    const char *path;
    const char *const *in;
    size_t n_in;
    const tb_window *win;
} night_src;

/* Checks the job's --meta and --label before any work. */
static tb_status check_job(const tb_history_add_job *job, const tb_history_added *res, tb_error *err)
{
    tb_status st = check_meta(job, err);
    if (st)
        return st;
    if (job->label && (!job->label[0] || strlen(job->label) >= sizeof res->label))
        return tb_error_set(err, TB_ERR_USAGE, "--label: give 1 to %zu bytes", sizeof res->label - 1);
    return TB_OK;
}

/* The history is written: it must be none of the files the night reads. */
static tb_status check_not_read(const night_src *n, const tb_history_add_job *job, tb_error *err)
{
    file_ids ids = {0};
    tb_status st;
    if (!(st = file_ids_collect(&ids, n->in, n->n_in, n->path, n->db, err)) &&
        !(st = file_ids_spec(&ids, job->spec, err)))
        st = file_ids_check(&ids, job->history, err);
    file_ids_free(&ids);
    return st;
}

/* An existing history must be one, before any work. */
static tb_status check_existing(const char *history, tb_error *err)
{
    struct stat sb;
    if (stat(history, &sb) != 0)
        return TB_OK;
    sqlite3 *db = NULL;
    tb_status st = history_open(history, &db, err);
    sqlite3_close(db);
    return st;
}

/* Runs the spec's reports on the night into the scratch DB's t_report,
 * t_column and t_cell, in one transaction of the scratch DB. */
static tb_status collect_rows(hadd *h, const night_src *n, const tb_history_add_job *job, tb_error *err)
{
    sqlite3 *db = h->db;
    tb_status st = history_run_sql(db, job->history,
                                   "CREATE TABLE t_report(report TEXT, title TEXT, rows INTEGER, skipped TEXT);"
                                   "CREATE TABLE t_column(report TEXT, col INTEGER, header TEXT, name TEXT, type TEXT);"
                                   "CREATE TABLE t_cell(report TEXT, row INTEGER, col INTEGER, value);"
                                   "BEGIN",
                                   err);
    if (!st && (sqlite3_prepare_v2(db, "INSERT INTO t_column VALUES(?, ?, ?, ?, ?)", -1, &h->col, NULL) != SQLITE_OK ||
                sqlite3_prepare_v2(db, "INSERT INTO t_report VALUES(?, ?, ?, ?)", -1, &h->rep, NULL) != SQLITE_OK))
        st = history_dberr(db, job->history, err);
    if (!st) {
        tb_run_options o = {.db = n->db,
                            .db_name = n->path,
                            .specs = (const tb_spec *const *)&job->spec,
                            .n_specs = 1,
                            .window = *n->win,
                            .unit = TB_UNIT_NS,
                            .params = job->params,
                            .n_params = job->n_params,
                            .formats = TB_OUT_CSV,
                            .max_steps = job->max_steps,
                            .open_sink = h_open,
                            .sink_ctx = h,
                            .report_done = h_done,
                            .note = job->note,
                            .ctx = job->ctx};
        tb_run_result rr;
        st = tb_report_run(&o, &rr, err);
        if (!st && h->failed)
            st = h->failed;
    }
    sqlite3_finalize(h->col);
    sqlite3_finalize(h->rep);
    h->col = h->rep = NULL;
    if (!st)
        st = history_run_sql(db, job->history, "COMMIT", err);
    return st;
}

/* A history this add made and then failed to add to: removed, with its
 * journal, when it holds no night (another job may have added one since),
 * so that a failed run leaves nothing. */
static void remove_if_empty(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    int empty = 0;
    if (db_open(path, SQLITE_OPEN_READWRITE, &db) == SQLITE_OK) {
        sqlite3_busy_timeout(db, BUSY_MS);
        /* held while the files go: no other add can begin meanwhile */
        if (sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK &&
            sqlite3_prepare_v2(db, "SELECT count(*) FROM night", -1, &q, NULL) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW)
            empty = sqlite3_column_int64(q, 0) == 0;
        sqlite3_finalize(q);
    }
    if (empty) {
        char journal[PATH_MAX];
        unlink(path);
        if (snprintf(journal, sizeof journal, "%s-journal", path) < (int)sizeof journal)
            unlink(journal);
    }
    sqlite3_close(db);
}

/* The history (made whole under a temporary name when missing) attached as
 * h to the scratch DB, and its write transaction begun. */
static tb_status attach_history(sqlite3 *db, const char *history, tb_error *err)
{
    tb_status st = history_create(history, err);
    if (!st) {
        char *sql = sqlite3_mprintf("ATTACH %Q AS h", history);
        st = sql ? history_run_sql(db, history, sql, err) : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        sqlite3_free(sql);
    }
    if (!st)
        st = history_run_sql(db, history, "BEGIN IMMEDIATE", err);
    return st;
}

/* Refuses a label the history holds already. */
static tb_status check_label_free(sqlite3 *db, const char *history, const char *label, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    tb_status st = TB_OK;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM night WHERE label = ?", -1, &q, NULL) != SQLITE_OK) {
        st = history_dberr(db, history, err);
    } else {
        sqlite3_bind_text(q, 1, label, -1, SQLITE_STATIC);
        if (sqlite3_step(q) == SQLITE_ROW)
            st = tb_error_at(err, TB_ERR_USAGE, history, 0, 0, -1,
                             "a night labelled '%s' is in the history already (give another --label, or "
                             "history remove --label first)", label);
    }
    sqlite3_finalize(q);
    return st;
}

/* The night's row (label, times, version, spec, inputs and window as JSON); *night gets its id. */
static tb_status insert_night(sqlite3 *db, const night_src *n, const tb_history_add_job *job, const char *label,
                              const char *when, const char *added, int64_t *night, tb_error *err)
{
    json_t *in = json_array(), *win = json_null();
    for (size_t i = 0; i < n->n_in; i++)
        json_array_append_new(in, json_string(n->in[i]));
    if (n->win->set) {
        json_decref(win);
        win = manifest_window(n->win, NULL);
    }
    char *ins = json_dumps(in, JSON_COMPACT), *wins = n->win->set ? json_dumps(win, JSON_COMPACT) : NULL;
    json_decref(in);
    json_decref(win);
    sqlite3_stmt *q = NULL;
    tb_status st = check_label_free(db, job->history, label, err);
    if (!st && sqlite3_prepare_v2(db, "INSERT INTO night(label, data_time, added, version, spec, inputs, window) "
                                      "VALUES(?, ?, ?, ?, ?, ?, ?)",
                                  -1, &q, NULL) != SQLITE_OK)
        st = history_dberr(db, job->history, err);
    if (!st) {
        sqlite3_bind_text(q, 1, label, -1, SQLITE_STATIC);
        if (when[0])
            sqlite3_bind_text(q, 2, when, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 3, added, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 4, tb_version(), -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 5, job->spec->path, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 6, ins ? ins : "[]", -1, SQLITE_STATIC);
        if (wins)
            sqlite3_bind_text(q, 7, wins, -1, SQLITE_STATIC);
        if (sqlite3_step(q) != SQLITE_DONE)
            st = history_dberr(db, job->history, err);
        *night = sqlite3_last_insert_rowid(db);
    }
    sqlite3_finalize(q);
    free(ins);
    free(wins);
    return st;
}

/* The night's --meta KEY=VALUE pairs into night_meta. */
static tb_status insert_meta(sqlite3 *db, const tb_history_add_job *job, int64_t night, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    tb_status st = TB_OK;
    if (sqlite3_prepare_v2(db, "INSERT INTO night_meta VALUES(?, ?, ?)", -1, &q, NULL) != SQLITE_OK)
        st = history_dberr(db, job->history, err);
    for (size_t i = 0; i < job->n_meta && !st; i++) {
        const char *eq = strchr(job->meta[i], '=');
        sqlite3_bind_int64(q, 1, night);
        sqlite3_bind_text(q, 2, job->meta[i], (int)(eq - job->meta[i]), SQLITE_STATIC);
        sqlite3_bind_text(q, 3, eq + 1, -1, SQLITE_STATIC);
        if (sqlite3_step(q) != SQLITE_DONE)
            st = history_dberr(db, job->history, err);
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return st;
}

/* The scratch tables' reports, columns and cells into the history, under night. */
static tb_status copy_rows(sqlite3 *db, const char *history, int64_t night, tb_error *err)
{
    char *sql = sqlite3_mprintf(
        "INSERT INTO night_report(night, report, title, rows, skipped)"
        " SELECT %lld, report, title, rows, skipped FROM t_report;"
        "INSERT INTO night_column SELECT r.id, c.col, c.header, c.name, c.type"
        " FROM t_column c JOIN night_report r ON r.night = %lld AND r.report = c.report;"
        "INSERT INTO night_cell SELECT r.id, c.row, c.col, c.value"
        " FROM t_cell c JOIN night_report r ON r.night = %lld AND r.report = c.report;",
        (long long)night, (long long)night, (long long)night);
    tb_status st = sql ? history_run_sql(db, history, sql, err) : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    sqlite3_free(sql);
    return st;
}

/* Appends the night to the attached history in one transaction: the night,
 * its metadata and rows, then the retention; rolled back on failure. */
static tb_status append_night(sqlite3 *db, const night_src *n, const tb_history_add_job *job, const char *when,
                              const char *added, tb_history_added *res, tb_error *err)
{
    tb_status st = attach_history(db, job->history, err);
    int in_tx = !st;
    int64_t night = 0;
    if (!st)
        st = insert_night(db, n, job, res->label, when, added, &night, err);
    if (!st)
        st = insert_meta(db, job, night, err);
    if (!st)
        st = copy_rows(db, job->history, night, err);
    if (!st)
        st = history_retain(db, job->history, job->keep, &res->removed, err);
    if (!st)
        st = history_run_sql(db, job->history, "COMMIT", err);
    if (st && in_tx)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return st;
}

/* What was added into *res; the retention's removals told through job->note. */
static void tell_added(sqlite3 *db, const hadd *h, const tb_history_add_job *job, tb_history_added *res)
{
    res->reports = h->reports;
    res->rows = h->rows;
    res->nights = (size_t)count_nights(db);
    if (res->removed && job->note) {
        char msg[128];
        snprintf(msg, sizeof msg, "history: the retention removed %zu older night%s", res->removed,
                 res->removed == 1 ? "" : "s");
        job->note(job->ctx, msg);
    }
}

tb_status tb_history_add(tb_session *s, const tb_history_add_job *job, tb_history_added *res, tb_error *err)
{
    memset(res, 0, sizeof *res);
    night_src n = {.db = session_db(s, err)};
    if (!n.db)
        return err->code;
    n.path = tb_session_db_path(s);
    n.in = tb_session_inputs(s, &n.n_in);
    n.win = tb_session_window(s);
    tb_status st = check_job(job, res, err);
    if (st || (st = check_not_read(&n, job, err)))
        return st;
    char when[64] = "", added[64];
    data_time(n.db, when, sizeof when);
    utc_now(added, sizeof added);
    snprintf(res->label, sizeof res->label, "%s", job->label ? job->label : when[0] ? when : added);
    if ((st = check_existing(job->history, err)))
        return st;
    /* the rows go to a private scratch DB first: running the reports takes no
     * lock on the history, and a failing report leaves no trace in it */
    sqlite3 *db = NULL;
    if (db_open("", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db) != SQLITE_OK) {
        sqlite3_close(db);
        return tb_error_set(err, TB_ERR_DB, "history add: cannot open a scratch database");
    }
    sqlite3_busy_timeout(db, BUSY_MS);
    hadd h = {.db = db, .path = job->history, .err = err};
    struct stat sb;
    int existed = stat(job->history, &sb) == 0;
    st = collect_rows(&h, &n, job, err);
    if (!st)
        st = append_night(db, &n, job, when, added, res, err);
    if (!st)
        tell_added(db, &h, job, res);
    if (sqlite3_close(db) != SQLITE_OK && !st)
        st = tb_error_at(err, TB_ERR_DB, job->history, 0, 0, -1, "cannot close the history");
    if (st && !existed)
        remove_if_empty(job->history);
    return st;
}
