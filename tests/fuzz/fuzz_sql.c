/* SPDX-License-Identifier: MIT */
/*
 * fuzz_sql.c - libFuzzer harness for report SQL in the sandbox.
 *
 * A small fixed DB is loaded once from samples/torch_npu_2rank/rank0 (the
 * unified schema: its tables, views and columns are read from the DB). Each
 * input is a list of choices for a generator of statements over that schema:
 * SELECTs with joins, subqueries, CTEs, CASE, CAST, window and aggregate
 * calls of the functions of the allow-list and of functions that are not on
 * it (load_extension, fts3_tokenizer, readfile, ...), and statements that
 * are no SELECT (writes, ATTACH, PRAGMA changes). Every statement goes to
 * tb_query_run with a small step budget. Checked: nothing crashes; a
 * statement calling a function off the list, or writing, is refused (a
 * PRAGMA off the list: refused or never run); the DB file never changes.
 * The run's limits are smaller than a command's (setup()): 5 s of CPU time,
 * 1 GiB of SQLite heap, 64 MiB of temporary files. An input whose first
 * byte is below 16 is run as raw
 * SQL instead (the rest of its bytes), for what the grammar does not reach.
 */
#include <sqlite3.h>
#include <sys/stat.h>

#include "fuzz_util.h"
#include "query/sandbox.h"
#include "query/sqlfuncs.h"

#ifndef TB_FUZZ_SAMPLES
#error "TB_FUZZ_SAMPLES: the samples/ folder of the source tree"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Functions the generator calls: the allow-list's and some that are not on it. */
static const char *const funcs[] = {
    "abs", "avg", "coalesce", "count", "date", "datetime", "format", "group_concat", "hex", "iif", "instr",
    "intersect_ns", "json", "json_array", "json_extract", "json_group_array", "json_object", "json_type",
    "julianday", "length", "like", "lower", "ltrim", "max", "median", "min", "nullif", "percentile", "printf",
    "quote", "random", "randomblob", "replace", "round", "sign", "sqrt", "stdev", "strftime", "substr", "sum",
    "total", "trim", "typeof", "unicode", "union_count", "union_ns", "upper", "lower_quartile", "zeroblob",
    "power", "log", "mod", "trunc", "char", "glob", "unixepoch", "variance", "upper_quartile", "pyset_array",
    "dualpipev_slot",
    /* not on the list */
    "load_extension", "fts3_tokenizer", "readfile", "writefile", "edit", "sqlite_compileoption_get",
    "sqlite_offset", "sqlite_source_id", "unhex", "snippet", "highlight", "matchinfo", "offsets", "fts5",
    "sqlite_dbpage", "sqlite_rename_table", "soundex", "load_extension", "fts3_tokenizer",
};
#define N_FUNCS (sizeof funcs / sizeof *funcs)

static const char *const windows[] = {"row_number()", "rank()", "dense_rank()", "ntile(3)", "lag(%s)",
                                      "lead(%s, 2)", "first_value(%s)", "last_value(%s)", "percent_rank()",
                                      "cume_dist()", "nth_value(%s, 2)", "sum(%s)", "avg(%s)"};

static const char *const literals[] = {"0", "1", "-1", "NULL", "'x'", "''", "9223372036854775807",
                                       "-9223372036854775808", "1e308", "-0.0", "X'00ff'", "'%'", "4611686018427387904",
                                       "'2024-01-01'", "'{\"a\":[1,2]}'", "3.5", "1000000"};

static const char *const ops[] = {"+", "-", "*", "/", "%", "||", "=", "<>", "<", ">=", "AND", "OR", "&", "|",
                                  "<<", ">>", "LIKE", "GLOB", "IS", "IS NOT", "->", "->>"};

/* Whole statements that must be refused. */
static const char *const refused[] = {
    "INSERT INTO %s DEFAULT VALUES", "DELETE FROM %s", "UPDATE %s SET rowid = rowid", "DROP TABLE %s",
    "CREATE TABLE x AS SELECT * FROM %s", "ATTACH 'x.db' AS x", "DETACH main", "PRAGMA writable_schema = 1",
    "PRAGMA journal_mode = WAL", "VACUUM", "REINDEX %s", "ANALYZE %s", "CREATE VIEW v AS SELECT * FROM %s",
    "CREATE TEMP TRIGGER t AFTER INSERT ON %s BEGIN SELECT 1; END", "ALTER TABLE %s RENAME TO y",
    "SELECT load_extension('/lib/x.so') FROM %s", "SELECT fts3_tokenizer('simple', X'00') FROM %s",
    "CREATE VIRTUAL TABLE temp.f USING fts3(a)", "SELECT * FROM pragma_database_list, %s",
    "SELECT * FROM pragma_module_list, %s",
    "WITH d AS (DELETE FROM %s RETURNING 1) SELECT 1", "BEGIN", "SAVEPOINT s",
};

typedef struct table {
    char *name;
    char **cols;
    size_t n_cols;
} table;

static char db_path[1100];
/* One read-only connection for every statement, as a session holds one: a
 * statement leaves nothing on it that the next one sees. */
static sqlite3 *conn;
static struct stat db_stat;
static table *tables;
static size_t n_tables;

/* The choices of one input. */
typedef struct gen {
    const uint8_t *p, *end;
    char *sql;
    size_t n, cap;
    int forbidden;   /* a function off the list is called */
    int depth;
} gen;

static unsigned pick(gen *g, unsigned n)
{
    return g->p < g->end ? (unsigned)(*g->p++) % n : 0;
}

static void put(gen *g, const char *s)
{
    size_t len = strlen(s);
    if (g->n + len + 1 > g->cap) {
        size_t cap = (g->n + len + 1) * 2;
        char *ns = realloc(g->sql, cap);
        if (!ns)
            abort();
        g->sql = ns;
        g->cap = cap;
    }
    memcpy(g->sql + g->n, s, len + 1);
    g->n += len;
}

static void column_ref(gen *g, const table *t)
{
    if (!t->n_cols || pick(g, 8) == 0) {
        put(g, "rowid");
        return;
    }
    put(g, "\"");
    put(g, t->cols[pick(g, (unsigned)t->n_cols)]);
    put(g, "\"");
}

static void expr(gen *g, const table *t);

static void call(gen *g, const table *t)
{
    const char *f = funcs[pick(g, N_FUNCS)];
    if (!sandbox_function_allowed(f))
        g->forbidden = 1;
    put(g, f);
    put(g, "(");
    unsigned n = pick(g, 4);
    for (unsigned i = 0; i < n; i++) {
        if (i)
            put(g, ", ");
        expr(g, t);
    }
    put(g, ")");
}

static void expr(gen *g, const table *t)
{
    if (g->depth > 6 || g->n > 4000) {
        put(g, literals[pick(g, sizeof literals / sizeof *literals)]);
        return;
    }
    g->depth++;
    switch (pick(g, 12)) {
    case 0: case 1: case 2:
        column_ref(g, t);
        break;
    case 3:
        put(g, literals[pick(g, sizeof literals / sizeof *literals)]);
        break;
    case 4: case 5:
        call(g, t);
        break;
    case 6:
        put(g, "(");
        expr(g, t);
        put(g, " ");
        put(g, ops[pick(g, sizeof ops / sizeof *ops)]);
        put(g, " ");
        expr(g, t);
        put(g, ")");
        break;
    case 7:
        put(g, "CASE WHEN ");
        expr(g, t);
        put(g, " THEN ");
        expr(g, t);
        put(g, " ELSE ");
        expr(g, t);
        put(g, " END");
        break;
    case 8: {
        static const char *const types[] = {"INTEGER", "REAL", "TEXT", "BLOB", "NUMERIC"};
        put(g, "CAST(");
        expr(g, t);
        put(g, " AS ");
        put(g, types[pick(g, 5)]);
        put(g, ")");
        break;
    }
    case 9: {
        const table *u = &tables[pick(g, (unsigned)n_tables)];
        put(g, "(SELECT ");
        expr(g, u);
        put(g, " FROM \"");
        put(g, u->name);
        put(g, "\" LIMIT 1)");
        break;
    }
    case 10: {
        char buf[160], col[96];
        const char *w = windows[pick(g, sizeof windows / sizeof *windows)];
        snprintf(col, sizeof col, "\"%s\"", t->n_cols ? t->cols[pick(g, (unsigned)t->n_cols)] : "rowid");
        snprintf(buf, sizeof buf, w, col, col);
        put(g, buf);
        put(g, " OVER (ORDER BY ");
        column_ref(g, t);
        put(g, ")");
        break;
    }
    default:
        expr(g, t);
        put(g, pick(g, 2) ? " IS NULL" : " IN (1, 2, 'a')");
        break;
    }
    g->depth--;
}

static void select_stmt(gen *g)
{
    const table *t = &tables[pick(g, (unsigned)n_tables)];
    if (pick(g, 6) == 1) {
        put(g, "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ");
        put(g, literals[pick(g, sizeof literals / sizeof *literals)]);
        put(g, ") ");
    }
    put(g, pick(g, 4) ? "SELECT " : "SELECT DISTINCT ");
    unsigned n = 1 + pick(g, 4);
    for (unsigned i = 0; i < n; i++) {
        if (i)
            put(g, ", ");
        expr(g, t);
    }
    put(g, " FROM \"");
    put(g, t->name);
    put(g, "\"");
    if (pick(g, 4) == 0) {
        const table *u = &tables[pick(g, (unsigned)n_tables)];
        put(g, pick(g, 2) ? " JOIN \"" : " LEFT JOIN \"");
        put(g, u->name);
        put(g, "\" u ON ");
        expr(g, t);
    }
    if (pick(g, 2)) {
        put(g, " WHERE ");
        expr(g, t);
    }
    if (pick(g, 3) == 0) {
        put(g, " GROUP BY ");
        column_ref(g, t);
        if (pick(g, 2)) {
            put(g, " HAVING ");
            expr(g, t);
        }
    }
    if (pick(g, 2)) {
        put(g, " ORDER BY 1");
        put(g, pick(g, 2) ? " DESC" : "");
    }
    /* (past the input's end pick() answers 0: the generator then stops) */
    if (pick(g, 3) == 1 && g->depth < 4) {
        g->depth++;
        put(g, pick(g, 2) ? " UNION ALL " : " EXCEPT ");
        select_stmt(g);
        g->depth--;
        return;
    }
    put(g, " LIMIT ");
    put(g, pick(g, 2) ? "50" : literals[pick(g, sizeof literals / sizeof *literals)]);
}

static tb_status sink_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    (void)s;
    (void)err;
    for (size_t i = 0; i < n; i++)
        if (!cols[i].header)
            abort();
    return TB_OK;
}

static tb_status sink_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    (void)s;
    (void)err;
    if (cells[0].kind == TB_CELL_TEXT && cells[0].n && !cells[0].s)
        abort();
    if (cells[0].kind == TB_CELL_INT && (cells[0].scale < 0 || cells[0].scale > 9))
        abort();
    return TB_OK;
}

static tb_status sink_finish(tb_sink *s, tb_error *err)
{
    (void)s;
    (void)err;
    return TB_OK;
}

static void sink_destroy(tb_sink *s)
{
    (void)s;
}

static void cleanup(void)
{
    sqlite3_close(conn);
    unlink(db_path);
}

/* Loads the fixed DB and reads its tables and columns (once). */
static void setup(void)
{
    if (n_tables)
        return;
    /* a statement's cost bounded as a run's is, by smaller limits, so that
     * one input cannot spend the campaign's time: seven rows of
     * randomblob(131072000) under DISTINCT and ORDER BY spilled 270 MB of
     * sorter files and ran past libFuzzer's 30 s on a loaded machine */
    tb_error err;
    tb_error_clear(&err);
    if (tb_limits_set(&(tb_limits){.cpu_seconds = 5, .memory_bytes = 1024 << 20, .temp_bytes = 64 << 20}, &err)) {
        fprintf(stderr, "fuzz_sql: %s\n", err.message);
        abort();
    }
    snprintf(db_path, sizeof db_path, "%s/fixed.db", fuzz_dir());
    const char *inputs[] = {TB_FUZZ_SAMPLES "/torch_npu_2rank/rank0_ascend_pt"};
    if (tb_load(&(tb_load_options){.inputs = inputs, .n_inputs = 1, .output = db_path, .jobs = 1}, NULL, &err)) {
        fprintf(stderr, "fuzz_sql: %s\n", err.message);
        abort();
    }
    atexit(cleanup);
    if (sqlite3_open_v2(db_path, &conn, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "fuzz_sql: %s: cannot open\n", db_path);
        abort();
    }
    sqlite3 *db;
    sqlite3_stmt *q, *c;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                           "AND name NOT LIKE 'sqlite_%' ORDER BY name", -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?)", -1, &c, NULL) != SQLITE_OK)
        abort();
    while (sqlite3_step(q) == SQLITE_ROW) {
        table *nt = realloc(tables, (n_tables + 1) * sizeof *tables);
        if (!nt)
            abort();
        tables = nt;
        table *t = &tables[n_tables++];
        memset(t, 0, sizeof *t);
        t->name = strdup((const char *)sqlite3_column_text(q, 0));
        sqlite3_bind_text(c, 1, t->name, -1, SQLITE_STATIC);
        while (sqlite3_step(c) == SQLITE_ROW) {
            char **ncols = realloc(t->cols, (t->n_cols + 1) * sizeof *t->cols);
            if (!ncols)
                abort();
            t->cols = ncols;
            t->cols[t->n_cols++] = strdup((const char *)sqlite3_column_text(c, 0));
        }
        sqlite3_reset(c);
    }
    sqlite3_finalize(q);
    sqlite3_finalize(c);
    sqlite3_close(db);
    if (!n_tables || stat(db_path, &db_stat) != 0)
        abort();
    /* the generator's forbidden functions are forbidden indeed */
    if (sandbox_function_allowed("load_extension") || sandbox_function_allowed("fts3_tokenizer") ||
        !sandbox_function_allowed("sum"))
        abort();
}

/* Authorizer of the oracle below: notes a function off the allow-list. */
static int note_forbidden(void *ctx, int action, const char *a, const char *b, const char *c, const char *d)
{
    (void)a;
    (void)c;
    (void)d;
    if (action == SQLITE_FUNCTION && b && !sandbox_function_allowed(b))
        *(int *)ctx = 1;
    return SQLITE_OK;
}

/* 1 when SQLite's parser keeps a call of a forbidden function in sql. The
 * parser folds constant-false conjunctions away before names are resolved
 * (`WHERE 0 AND load_extension('x')`, `JOIN t ON 0 WHERE f()`): such a
 * call is never compiled, so the authorizer never sees it and nothing
 * forbidden can run; the statement may then succeed. */
static int forbidden_compiled(const char *sql)
{
    sqlite3 *db = NULL;
    int seen = 0;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return 1;
    }
    /* tracebook's functions and computed tables, as the runner has them, so
     * that names resolve as they do there */
    if (sqlfuncs_register(db) != SQLITE_OK) {
        sqlite3_close(db);
        return 1;
    }
    sqlite3_set_authorizer(db, note_forbidden, &seen);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    sqlite3_finalize(st);
    sqlite3_close(db);
    /* the sandbox's run succeeded: here too, unless the authorizer saw
     * something; a failure for any other reason is not excused */
    return seen || rc != SQLITE_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    gen g = {.p = data, .end = data + size};
    int must_refuse = 0;
    if (size && data[0] < 16) {
        g.sql = malloc(size);
        if (!g.sql)
            abort();
        memcpy(g.sql, data + 1, size - 1);
        g.sql[size - 1] = '\0';
    } else if (size && data[0] < 40) {
        g.p++;
        char buf[512];
        const table *t = &tables[pick(&g, (unsigned)n_tables)];
        const char *form = refused[pick(&g, sizeof refused / sizeof *refused)];
        snprintf(buf, sizeof buf, form, t->name);
        put(&g, buf);
        /* a PRAGMA table function is checked when it runs (its own PRAGMA
         * statement): joined with an empty table it never does, and then the
         * statement may succeed, with no row */
        must_refuse = strstr(form, "pragma_") ? 2 : 1;
    } else {
        select_stmt(&g);
        must_refuse = g.forbidden;
    }
    tb_sink sink = {sink_begin, sink_row, sink_finish, sink_destroy};
    tb_run_options opt = {.db = conn, .db_name = db_path, .unit = TB_UNIT_US, .max_steps = 200000};
    tb_error err;
    tb_error_clear(&err);
    uint64_t rows = 0;
    if (getenv("TB_FUZZ_VERBOSE"))
        fprintf(stderr, "fuzz_sql: %s\n", g.sql ? g.sql : "");
    tb_status st = tb_query_run(&opt, g.sql ? g.sql : "", &sink, &rows, &err);
    if (st != TB_OK && (!err.message[0] || st == TB_ERR_INTERNAL)) {
        fprintf(stderr, "fuzz_sql: %s\n  %s\n", g.sql, err.message);
        abort();
    }
    if (must_refuse && st == TB_OK && (must_refuse == 1 || rows > 0) && forbidden_compiled(g.sql)) {
        fprintf(stderr, "fuzz_sql: not refused: %s\n", g.sql);
        abort();
    }
    struct stat now;
    if (stat(db_path, &now) != 0 || now.st_size != db_stat.st_size || now.st_mtim.tv_sec != db_stat.st_mtim.tv_sec ||
        now.st_mtim.tv_nsec != db_stat.st_mtim.tv_nsec) {
        fprintf(stderr, "fuzz_sql: the DB changed after: %s\n", g.sql);
        abort();
    }
    free(g.sql);
    return 0;
}
