/* SPDX-License-Identifier: MIT */
/*
 * extension.c - tracebook.so, the loadable SQLite extension: report SQL on
 * any SQLite connection (the sqlite3 shell, Python's sqlite3 module, pandas).
 *
 * sqlite3_tracebook_init() registers on the connection it is loaded into:
 *   - the SQL functions of report specs (query/sqlfuncs.c: median,
 *     percentile, lower_quartile, upper_quartile, variance, stdev, var_pop,
 *     stdev_pop, union_ns, union_count, intersect_ns, pyset_array,
 *     dualpipev_slot), and
 *     tracebook_version();
 *   - one eponymous virtual table per computed table of the metrics registry
 *     (metrics/metrics.c: step_trace_time, overlap_lanes,
 *     temporal_breakdown, ...), under the table's own name, so that
 *     `SELECT * FROM step_trace_time` is the SQL of a spec.
 *
 * A computed table is made by the same build function the report runner
 * calls, with the default options (a spec without `metrics:`), on the same
 * kind of connection: the extension opens its own read-only connection to
 * the connection's main DB file (the "helper"; the runner's settings,
 * the SQL functions registered), and the builder creates the table in the
 * helper's temp schema, dependencies first, as in a report run. The virtual
 * table declares the built table's columns and scans it in rowid order, so
 * it gives the rows a report reads, in the same order. Building on a
 * connection of our own, not the caller's, keeps the caller's schema as it
 * is (no temp tables appear, no prepared statement expires) and lets a
 * builder drop its helper tables, which SQLite refuses on a connection with
 * a statement running (the caller's SELECT). For the same reason a table is
 * never built on a helper that is still scanning one (a statement of the
 * caller that is not finished): the extension opens another helper for the
 * build, and each virtual table reads from the helper it was built on.
 *
 * A table is built once per connection, when a statement first names it
 * (while it is prepared: that is when SQLite connects an eponymous virtual
 * table and needs its columns); it shows the DB as it was then. The main DB
 * must be a file: an in-memory DB cannot be opened a second time.
 *
 * SQLite calls go through the sqlite3_api table the host hands in (see
 * sqlite-ext/api.h), here and in the engine files linked into the module,
 * so the extension runs in whatever SQLite library loaded it.
 *
 * Lifetimes: one ext_state per connection, shared by the modules' client
 * data (ext_table) and freed with the last of them, when the connection
 * closes; it owns the helpers. SQLite disconnects the eponymous tables
 * before it destroys their module's client data, so a table never outlives
 * the helper it reads.
 */
#include "sqlite-ext/api.h"
SQLITE_EXTENSION_INIT1

#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "query/sqlfuncs.h"
#include "tracebook/error.h"

typedef struct ext_state {
    int refs;
    sqlite3 *user;      /* the connection the extension was loaded into (borrowed) */
    sqlite3 **helpers;  /* owned: read-only connections to user's main DB file, opened when
                         * needed; new tables are built on the last one */
    size_t n_helpers;
} ext_state;

/* A module's client data: one per computed table. */
typedef struct ext_table {
    ext_state *st;            /* counted reference */
    const metric_table *t;    /* static */
} ext_table;

typedef struct ext_vtab {
    sqlite3_vtab base;
    sqlite3 *helper;          /* borrowed (owned by the state, which outlives the table): holds the table */
    const metric_table *t;
} ext_vtab;

typedef struct ext_cursor {
    sqlite3_vtab_cursor base;
    sqlite3_stmt *scan;       /* owned; on the table's helper: rowid, then the table's columns */
    int eof;
} ext_cursor;

static void state_unref(ext_state *st)
{
    if (st && --st->refs == 0) {
        for (size_t i = 0; i < st->n_helpers; i++)
            sqlite3_close(st->helpers[i]);
        free(st->helpers);
        free(st);
    }
}

static void table_free(void *p)
{
    ext_table *et = p;
    if (et)
        state_unref(et->st);
    free(et);
}

/* Opens another helper, as the runner opens a report's DB (runner.c
 * open_db), and makes it the last of st->helpers. */
static tb_status helper_open(ext_state *st, tb_error *err)
{
    sqlite3 **grown = realloc(st->helpers, (st->n_helpers + 1) * sizeof *grown);
    if (!grown)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    st->helpers = grown;
    const char *path = sqlite3_db_filename(st->user, "main");
    if (!path || !*path)
        return tb_error_set(err, TB_ERR_USAGE,
                            "the computed tables are made from a DB file: this connection's main DB is in memory");
    sqlite3 *h = NULL;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        tb_error_set(err, TB_ERR_DB, "%s: cannot open the DB: %s", path, h ? sqlite3_errmsg(h) : "out of memory");
        sqlite3_close(h);
        return TB_ERR_DB;
    }
    sqlite3_extended_result_codes(h, 1);
    sqlite3_db_config(h, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
    sqlite3_db_config(h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(h, "SELECT count(*) FROM main.sqlite_master WHERE name = 'STRING_IDS'", -1, &q, NULL);
    int own = rc == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 1;
    sqlite3_finalize(q);
    tb_status status = TB_OK;
    if (rc != SQLITE_OK)
        status = tb_error_set(err, TB_ERR_DB, "%s: cannot read the DB: %s", path, sqlite3_errmsg(h));
    else if (!own)
        status = tb_error_set(err, TB_ERR_PARSE, "%s: not a unified trace DB (no STRING_IDS table)", path);
    else if (sqlfuncs_register(h) != SQLITE_OK)
        status = tb_error_set(err, TB_ERR_DB, "registering SQL functions: %s", sqlite3_errmsg(h));
    if (status) {
        sqlite3_close(h);
        return status;
    }
    st->helpers[st->n_helpers++] = h;
    return TB_OK;
}

/* Is a statement of h running (stepped, not finished or reset)? */
static int busy(sqlite3 *h)
{
    for (sqlite3_stmt *q = sqlite3_next_stmt(h, NULL); q; q = sqlite3_next_stmt(h, q))
        if (sqlite3_stmt_busy(q))
            return 1;
    return 0;
}

/* Is temp.<name> on the helper already built? */
static int built(sqlite3 *h, const char *name)
{
    sqlite3_stmt *q = NULL;
    int yes = sqlite3_prepare_v2(h, "SELECT 1 FROM sqlite_temp_master WHERE type = 'table' AND name = ?1", -1, &q,
                                 NULL) == SQLITE_OK &&
              sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW;
    sqlite3_finalize(q);
    return yes;
}

/* Builds t on helper h (what it depends on first), unless it is there. */
static tb_status build(sqlite3 *h, const metric_table *t, int depth, tb_error *err)
{
    if (depth > 8)
        return tb_error_set(err, TB_ERR_INTERNAL, "computed table '%s': dependency loop", t->name);
    if (built(h, t->name))
        return TB_OK;
    for (size_t d = 0; d < sizeof t->depends / sizeof t->depends[0] && t->depends[d]; d++) {
        const metric_table *dep = metrics_find(t->depends[d]);
        if (!dep)
            return tb_error_set(err, TB_ERR_INTERNAL, "computed table '%s' needs unknown '%s'", t->name, t->depends[d]);
        tb_status rc = build(h, dep, depth + 1, err);
        if (rc)
            return rc;
    }
    metric_ctx m = {.db = h};
    return t->build(&m, err);
}

/* The helper that holds t: the last one when t is built there or it is idle
 * (t is built then), else a new one. *out is borrowed from st. */
static tb_status helper_with(ext_state *st, const metric_table *t, sqlite3 **out, tb_error *err)
{
    sqlite3 *h = st->n_helpers ? st->helpers[st->n_helpers - 1] : NULL;
    if (!h || (!built(h, t->name) && busy(h))) {
        tb_status rc = helper_open(st, err);
        if (rc)
            return rc;
        h = st->helpers[st->n_helpers - 1];
    }
    *out = h;
    return build(h, t, 0, err);
}

/* The CREATE TABLE that declares temp.<name>'s columns. Returns new (sqlite3_free), or NULL. */
static char *declaration(sqlite3 *h, const char *name, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(h, "SELECT name, type FROM pragma_table_info(?1, 'temp') ORDER BY cid", -1, &q, NULL) !=
            SQLITE_OK ||
        sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC) != SQLITE_OK) {
        tb_error_set(err, TB_ERR_DB, "%s: reading its columns: %s", name, sqlite3_errmsg(h));
        sqlite3_finalize(q);
        return NULL;
    }
    sqlite3_str *s = sqlite3_str_new(NULL);
    sqlite3_str_appendall(s, "CREATE TABLE x(");
    int n = 0, rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *col = (const char *)sqlite3_column_text(q, 0);
        const char *type = (const char *)sqlite3_column_text(q, 1);
        sqlite3_str_appendf(s, "%s\"%w\"%s%s", n++ ? ", " : "", col ? col : "", type && *type ? " " : "",
                            type ? type : "");
    }
    sqlite3_str_appendall(s, ")");
    sqlite3_finalize(q);
    char *sql = sqlite3_str_finish(s);
    if (rc != SQLITE_DONE || n == 0 || !sql) {
        tb_error_set(err, rc != SQLITE_DONE ? TB_ERR_DB : TB_ERR_INTERNAL, "%s: %s", name,
                     rc != SQLITE_DONE ? sqlite3_errmsg(h) : "the built table has no columns");
        sqlite3_free(sql);
        return NULL;
    }
    return sql;
}

/* --- the virtual table ---------------------------------------------------- */

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **errmsg)
{
    (void)argc;
    (void)argv;
    ext_table *et = aux;
    tb_error err;
    tb_error_clear(&err);
    char *decl = NULL;
    sqlite3 *h = NULL;
    if (helper_with(et->st, et->t, &h, &err) || !(decl = declaration(h, et->t->name, &err))) {
        *errmsg = sqlite3_mprintf("%s: %s", et->t->name, err.message);
        return SQLITE_ERROR;
    }
    int rc = sqlite3_declare_vtab(db, decl);
    sqlite3_free(decl);
    if (rc != SQLITE_OK)
        return rc;
    ext_vtab *v = sqlite3_malloc(sizeof *v);
    if (!v)
        return SQLITE_NOMEM;
    memset(v, 0, sizeof *v);
    v->helper = h;
    v->t = et->t;
    *out = &v->base;
    return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *vt)
{
    sqlite3_free(vt);
    return SQLITE_OK;
}

/* A full scan: SQLite applies every constraint itself. */
static int vt_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
    (void)vt;
    info->estimatedCost = 100000.0;
    info->estimatedRows = 10000;
    return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
    (void)vt;
    ext_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->eof = 1;
    *out = &c->base;
    return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
    ext_cursor *c = (ext_cursor *)cur;
    sqlite3_finalize(c->scan);
    sqlite3_free(c);
    return SQLITE_OK;
}

/* Puts the helper's error into the table's message (SQLite reports it). */
static int scan_error(ext_cursor *c, int rc)
{
    ext_vtab *v = (ext_vtab *)c->base.pVtab;
    sqlite3_free(v->base.zErrMsg);
    v->base.zErrMsg = sqlite3_mprintf("%s: %s", v->t->name, sqlite3_errmsg(v->helper));
    return rc;
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
    ext_cursor *c = (ext_cursor *)cur;
    int rc = sqlite3_step(c->scan);
    c->eof = rc != SQLITE_ROW;
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : scan_error(c, rc);
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc, sqlite3_value **argv)
{
    (void)idx;
    (void)idx_str;
    (void)argc;
    (void)argv;
    ext_cursor *c = (ext_cursor *)cur;
    ext_vtab *v = (ext_vtab *)cur->pVtab;
    sqlite3_finalize(c->scan);
    c->scan = NULL;
    char *sql = sqlite3_mprintf("SELECT rowid, * FROM temp.\"%w\" ORDER BY rowid", v->t->name);
    if (!sql)
        return SQLITE_NOMEM;
    int rc = sqlite3_prepare_v2(v->helper, sql, -1, &c->scan, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK)
        return scan_error(c, rc);
    return vt_next(cur);
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
    return ((ext_cursor *)cur)->eof;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
    sqlite3_result_value(ctx, sqlite3_column_value(((ext_cursor *)cur)->scan, i + 1));
    return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite_int64 *rowid)
{
    *rowid = sqlite3_column_int64(((ext_cursor *)cur)->scan, 0);
    return SQLITE_OK;
}

/* No xCreate: the tables are eponymous only (CREATE VIRTUAL TABLE cannot make one). */
static sqlite3_module module = {
    .iVersion = 0,
    .xCreate = NULL,
    .xConnect = vt_connect,
    .xBestIndex = vt_best_index,
    .xDisconnect = vt_disconnect,
    .xDestroy = vt_disconnect,
    .xOpen = vt_open,
    .xClose = vt_close,
    .xFilter = vt_filter,
    .xNext = vt_next,
    .xEof = vt_eof,
    .xColumn = vt_column,
    .xRowid = vt_rowid,
};

/* --- registration ------------------------------------------------------------ */

static void version_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    sqlite3_result_text(ctx, tb_version(), -1, SQLITE_STATIC);
}

typedef struct reg {
    sqlite3 *db;
    ext_state *st;
    int rc;
} reg;

static void register_table(void *ctx, const metric_table *t)
{
    reg *r = ctx;
    if (r->rc != SQLITE_OK)
        return;
    ext_table *et = malloc(sizeof *et);
    if (!et) {
        r->rc = SQLITE_NOMEM;
        return;
    }
    et->st = r->st;
    et->t = t;
    r->st->refs++;
    /* on failure, SQLite calls table_free itself */
    r->rc = sqlite3_create_module_v2(r->db, t->name, &module, et, table_free);
}

__attribute__((visibility("default"))) int sqlite3_tracebook_init(sqlite3 *db, char **errmsg,
                                                                  const sqlite3_api_routines *api);

int sqlite3_tracebook_init(sqlite3 *db, char **errmsg, const sqlite3_api_routines *api)
{
    SQLITE_EXTENSION_INIT2(api);
    int rc = sqlfuncs_register(db);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "tracebook_version", 0, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                        version_fn, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        *errmsg = sqlite3_mprintf("tracebook: registering the SQL functions: %s", sqlite3_errmsg(db));
        return rc;
    }
    ext_state *st = calloc(1, sizeof *st);
    if (!st)
        return SQLITE_NOMEM;
    st->user = db;
    st->refs = 1; /* held while registering */
    reg r = {.db = db, .st = st, .rc = SQLITE_OK};
    metrics_each(register_table, &r);
    state_unref(st);
    if (r.rc != SQLITE_OK)
        *errmsg = sqlite3_mprintf("tracebook: registering the computed tables: %s", sqlite3_errstr(r.rc));
    return r.rc;
}
