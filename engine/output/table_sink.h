/* SPDX-License-Identifier: MIT */
/*
 * table_sink.h - rows into a SQLite table, and cells to and from SQLite
 * values (private to the engine).
 *
 * Where a run's rows are kept rather than written: compare's two sides, a
 * history night's rows before they join the history, a shard's rows of its
 * rank-scope reports. The sink makes the table at begin (its lead columns,
 * then one column c0, c1, ... per column of the rows) and inserts each row
 * through one prepared statement.
 */
#ifndef TB_OUTPUT_TABLE_SINK_H
#define TB_OUTPUT_TABLE_SINK_H

#include <sqlite3.h>
#include <stddef.h>

#include "tracebook/output.h"

typedef struct table_sink_options {
    sqlite3 *db;
    const char *table;   /* its name (quoted as given: a plain name, or "schema"."name" already quoted) */
    const char *lead;    /* the lead columns' definitions ("rank INTEGER, seq INTEGER"), or NULL */
    int n_lead;          /* how many they are */
    /* Called at begin, before the table is made (may refuse the columns), and
     * after it (indexes, statements of the caller's own); each may be NULL. */
    tb_status (*begin)(void *ctx, const tb_sink_column *cols, size_t n, tb_error *err);
    tb_status (*made)(void *ctx, tb_error *err);
    /* Binds the lead columns (parameters 1 to n_lead) for a row; NULL when n_lead is 0. */
    tb_status (*bind_lead)(void *ctx, sqlite3_stmt *ins, const tb_cell *cells, tb_error *err);
    /* After each row is in (may be NULL). */
    void (*inserted)(void *ctx);
    /* Words SQLite's failure on db (the caller's message, naming its file). */
    tb_status (*fail)(void *ctx, tb_error *err);
    int scaled_real;     /* 1: an INT cell with a scale is kept as the REAL i / 10^scale; 0: as its integer */
    void *ctx;
} table_sink_options;

/* A new sink (its destroy frees it; the table stays). o is copied. */
tb_status table_sink_create(const table_sink_options *o, tb_sink **out, tb_error *err);

/* Binds cell c to parameter p of st (text copied); see scaled_real. */
void cell_bind(sqlite3_stmt *st, int p, const tb_cell *c, int scaled_real);

/* Column col of st's row as a cell (text borrowed from st: valid until its next step). */
tb_cell cell_from_column(sqlite3_stmt *st, int col);

#endif
