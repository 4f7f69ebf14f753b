/* SPDX-License-Identifier: MIT */
/*
 * table_sink.c - rows into a SQLite table (table_sink.h): the one sink that
 * keeps rows in SQLite for compare, history and the shards' partials, and
 * the conversions between cells and SQLite values they share.
 */
#include <stdlib.h>
#include <string.h>

#include "output/table_sink.h"

typedef struct table_sink {
    tb_sink vt;
    table_sink_options o;
    sqlite3_stmt *ins;
    size_t n;
} table_sink;

void cell_bind(sqlite3_stmt *st, int p, const tb_cell *c, int scaled_real)
{
    switch (c->kind) {
    case TB_CELL_INT:
        if (c->scale && scaled_real) {
            double d = 1;
            for (int k = 0; k < c->scale; k++)
                d *= 10;
            sqlite3_bind_double(st, p, (double)c->i / d);
        } else {
            sqlite3_bind_int64(st, p, c->i);
        }
        break;
    case TB_CELL_REAL: sqlite3_bind_double(st, p, c->d); break;
    case TB_CELL_TEXT: sqlite3_bind_text64(st, p, c->s, (sqlite3_uint64)c->n, SQLITE_TRANSIENT, SQLITE_UTF8); break;
    default: sqlite3_bind_null(st, p); break;
    }
}

tb_cell cell_from_column(sqlite3_stmt *st, int col)
{
    switch (sqlite3_column_type(st, col)) {
    case SQLITE_INTEGER: return (tb_cell){.kind = TB_CELL_INT, .i = sqlite3_column_int64(st, col)};
    case SQLITE_FLOAT: return (tb_cell){.kind = TB_CELL_REAL, .d = sqlite3_column_double(st, col)};
    case SQLITE_TEXT:
        return (tb_cell){.kind = TB_CELL_TEXT, .s = (const char *)sqlite3_column_text(st, col),
                         .n = (size_t)sqlite3_column_bytes(st, col)};
    default: return (tb_cell){.kind = TB_CELL_NULL};
    }
}

static tb_status failed(table_sink *t, tb_error *err)
{
    if (t->o.fail)
        return t->o.fail(t->o.ctx, err);
    return tb_error_set(err, TB_ERR_DB, "%s: %s", t->o.table, sqlite3_errmsg(t->o.db));
}

static tb_status ts_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    table_sink *t = (table_sink *)s;
    tb_status st = t->o.begin ? t->o.begin(t->o.ctx, cols, n, err) : TB_OK;
    if (st)
        return st;
    sqlite3_str *ddl = sqlite3_str_new(t->o.db), *ins = sqlite3_str_new(t->o.db);
    sqlite3_str_appendf(ddl, "CREATE TABLE %s (%s", t->o.table, t->o.lead ? t->o.lead : "");
    sqlite3_str_appendf(ins, "INSERT INTO %s VALUES(", t->o.table);
    for (int i = 0; i < t->o.n_lead; i++)
        sqlite3_str_appendall(ins, i ? ", ?" : "?");
    for (size_t i = 0; i < n; i++) {
        sqlite3_str_appendf(ddl, "%sc%d", t->o.lead || i ? ", " : "", (int)i);
        sqlite3_str_appendall(ins, t->o.n_lead || i ? ", ?" : "?");
    }
    sqlite3_str_appendall(ddl, ")");
    sqlite3_str_appendall(ins, ")");
    char *d = sqlite3_str_finish(ddl), *q = sqlite3_str_finish(ins);
    if (!d || !q)
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    else if (sqlite3_exec(t->o.db, d, NULL, NULL, NULL) != SQLITE_OK ||
             sqlite3_prepare_v2(t->o.db, q, -1, &t->ins, NULL) != SQLITE_OK)
        st = failed(t, err);
    sqlite3_free(d);
    sqlite3_free(q);
    t->n = n;
    if (!st && t->o.made)
        st = t->o.made(t->o.ctx, err);
    return st;
}

static tb_status ts_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    table_sink *t = (table_sink *)s;
    if (t->o.bind_lead) {
        tb_status st = t->o.bind_lead(t->o.ctx, t->ins, cells, err);
        if (st)
            return st;
    }
    for (size_t i = 0; i < t->n; i++)
        cell_bind(t->ins, t->o.n_lead + (int)i + 1, &cells[i], t->o.scaled_real);
    int rc = sqlite3_step(t->ins);
    sqlite3_reset(t->ins);
    sqlite3_clear_bindings(t->ins);
    if (rc != SQLITE_DONE)
        return failed(t, err);
    if (t->o.inserted)
        t->o.inserted(t->o.ctx);
    return TB_OK;
}

static tb_status ts_finish(tb_sink *s, tb_error *err)
{
    (void)s;
    (void)err;
    return TB_OK;
}

static void ts_destroy(tb_sink *s)
{
    table_sink *t = (table_sink *)s;
    if (t)
        sqlite3_finalize(t->ins);
    free(t);
}

tb_status table_sink_create(const table_sink_options *o, tb_sink **out, tb_error *err)
{
    table_sink *t = calloc(1, sizeof *t);
    if (!t)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    t->vt = (tb_sink){.begin = ts_begin, .row = ts_row, .finish = ts_finish, .destroy = ts_destroy};
    t->o = *o;
    *out = &t->vt;
    return TB_OK;
}
