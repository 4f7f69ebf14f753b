/* SPDX-License-Identifier: MIT */
/*
 * capture.h - for the tests of the report runner and the computed tables:
 * a unified DB made from the engine's own schema plus hand-written rows,
 * and a tb_sink that keeps a result as text ("h1|h2\nv1|v2\n") to compare
 * with an expected string, and runners of a spec into it. Include after
 * cmocka.h and testutil.h.
 */
#ifndef TB_CAPTURE_H
#define TB_CAPTURE_H

#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebook/tracebook.h"

extern const char tb_sql_unified[];
extern const char tb_sql_views[];

/* The read-only connections cap_db opened, closed when the test program ends. */
static sqlite3 *cap_dbs[256];
static size_t cap_n_dbs;

static inline void cap_close_dbs(void)
{
    while (cap_n_dbs)
        sqlite3_close(cap_dbs[--cap_n_dbs]);
}

/* A new read-only connection to the DB at path, as a session holds one, for
 * tb_report_run and tb_query_run (tb_run_options.db); closed at exit. */
static inline sqlite3 *cap_db(const char *path)
{
    sqlite3 *db = NULL;
    if (cap_n_dbs == sizeof cap_dbs / sizeof cap_dbs[0])
        return NULL;
    if (!cap_n_dbs)
        atexit(cap_close_dbs);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    return cap_dbs[cap_n_dbs++] = db;
}

/* Creates the DB at path: the unified schema, its views, then rows_sql. Returns 0 or -1. */
static inline int tu_unified_db(const char *path, const char *rows_sql)
{
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK) {
        sqlite3_close(db);
        return -1;
    }
    char *msg = NULL;
    /* one transaction, no syncs: a test DB need not survive a crash */
    int rc = sqlite3_exec(db, "PRAGMA synchronous = OFF; BEGIN", NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, tb_sql_unified, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, tb_sql_views, NULL, NULL, &msg);
    if (rc == SQLITE_OK && rows_sql)
        rc = sqlite3_exec(db, rows_sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "test DB: %s\n", msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/*
 * The captured text. Cells: NULL as "NULL", reals as %.15g, integers plain
 * ("1234"; a scaled one "1234e-3"), text as it is. With int_tag every
 * integer shows its scale ("7e-0"), with quote_text text is quoted ('x'):
 * a test picks what makes its expected strings clearest.
 */
typedef struct capture {
    tb_sink vt;
    int int_tag, quote_text;
    char text[16384];
    size_t n, ncols;
    tb_col_type types[32];
} capture;

static inline void cap_add(capture *c, const char *s, size_t n)
{
    if (c->n + n < sizeof c->text) {
        memcpy(c->text + c->n, s, n);
        c->n += n;
        c->text[c->n] = 0;
    }
}

static inline tb_status cap_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    (void)err;
    capture *c = (capture *)s;
    c->ncols = n;
    for (size_t i = 0; i < n; i++) {
        if (i)
            cap_add(c, "|", 1);
        cap_add(c, cols[i].header, strlen(cols[i].header));
        if (i < sizeof c->types / sizeof c->types[0])
            c->types[i] = cols[i].type;
    }
    cap_add(c, "\n", 1);
    return TB_OK;
}

static inline tb_status cap_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    (void)err;
    capture *c = (capture *)s;
    char buf[96];
    for (size_t i = 0; i < c->ncols; i++) {
        if (i)
            cap_add(c, "|", 1);
        const tb_cell *x = &cells[i];
        int k = 0;
        switch (x->kind) {
        case TB_CELL_NULL: k = snprintf(buf, sizeof buf, "NULL"); break;
        case TB_CELL_INT:
            k = x->scale || c->int_tag ? snprintf(buf, sizeof buf, "%" PRId64 "e-%d", x->i, x->scale)
                                       : snprintf(buf, sizeof buf, "%" PRId64, x->i);
            break;
        case TB_CELL_REAL: k = snprintf(buf, sizeof buf, "%.15g", x->d); break;
        case TB_CELL_TEXT:
            k = snprintf(buf, sizeof buf, c->quote_text ? "'%.*s'" : "%.*s", (int)x->n, x->s);
            break;
        }
        cap_add(c, buf, (size_t)(k < (int)sizeof buf ? k : (int)sizeof buf - 1));
    }
    cap_add(c, "\n", 1);
    return TB_OK;
}

static inline tb_status cap_finish(tb_sink *s, tb_error *err)
{
    (void)s;
    (void)err;
    return TB_OK;
}

static inline void cap_destroy(tb_sink *s)
{
    (void)s;
}

/* Empties c, keeping its style flags. */
static inline void cap_reset(capture *c)
{
    int tag = c->int_tag, quote = c->quote_text;
    memset(c, 0, sizeof *c);
    c->vt = (tb_sink){cap_begin, cap_row, cap_finish, cap_destroy};
    c->int_tag = tag;
    c->quote_text = quote;
}

/* A tb_sink_open_fn handing out the one capture sink (ctx) for every report. */
static inline tb_status cap_open(void *ctx, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                                 const char *label, tb_sink **out, tb_error *err)
{
    (void)spec;
    (void)rep;
    (void)format;
    (void)label;
    (void)err;
    *out = &((capture *)ctx)->vt;
    return TB_OK;
}

/* Runs a spec given as YAML text over db with tb_report_run into c (its
 * style flags kept, its text emptied), CSV only, times in ns. Returns the
 * status; the error is in err. */
static inline tb_status cap_run_spec(capture *c, const char *db, const char *yaml, tb_error *err)
{
    tb_spec *spec = NULL;
    cap_reset(c);
    tb_error_clear(err);
    tb_status st = tb_spec_load_mem("t.yaml", yaml, strlen(yaml), &spec, NULL, NULL, err);
    if (st)
        return st;
    const tb_spec *specs[] = {spec};
    tb_run_options o = {.db = cap_db(db), .db_name = db, .unit = TB_UNIT_NS, .specs = specs, .n_specs = 1, .formats = TB_OUT_CSV,
                        .open_sink = cap_open, .sink_ctx = c};
    tb_run_result res;
    st = tb_report_run(&o, &res, err);
    tb_spec_free(spec);
    return st;
}

/* Fails unless a spec with the metrics section (a YAML flow map, may be "")
 * and the one report sql gives exactly want, in c's style. */
static inline void cap_assert_spec(capture *c, const char *db, const char *metrics, const char *sql,
                                   const char *want)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml, "tracebook: 1\n%s%s%sreports:\n  - id: r\n    sql: \"%s\"\n",
             *metrics ? "metrics: " : "", metrics, *metrics ? "\n" : "", sql);
    tb_error err;
    tb_status st = cap_run_spec(c, db, yaml, &err);
    if (st != TB_OK)
        print_error("run failed: %s\n", err.message);
    assert_int_equal(st, TB_OK);
    if (strcmp(c->text, want) != 0)
        print_error("got:\n%s\nwant:\n%s\n", c->text, want);
    assert_string_equal(c->text, want);
}

#endif
