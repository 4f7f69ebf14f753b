/* SPDX-License-Identifier: MIT */
/*
 * row_batch.h - rows held between a statement and its sinks (private to
 * engine/query/).
 *
 * The pump hands a report's rows to its sinks a batch at a time, not as
 * each step of the statement makes one: stepping SQLite for a few hundred
 * rows and then writing them keeps each side's code and data in the CPU's
 * caches, where a step and a row written in turn evict each other (a
 * million-row workbook took 7% more CPU that way). The sinks get the same
 * rows, in the same order; a row's text is copied out of the statement,
 * whose own text lasts only until its next step.
 */
#ifndef TB_QUERY_ROW_BATCH_H
#define TB_QUERY_ROW_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"
#include "tracebook/output.h"

/* The rows a batch holds at most, and the bytes of text it holds before
 * handing them on (a row with more text alone is handed on at once). */
#define ROW_BATCH_ROWS 256
#define ROW_BATCH_TEXT 65536

typedef struct row_batch {
    tb_sink **sinks;      /* borrowed */
    size_t ns;
    size_t nv;            /* cells a row */
    tb_cell *cells;       /* ROW_BATCH_ROWS rows of nv cells */
    size_t n;             /* rows held */
    char *text;           /* copies of the held rows' text, NUL after each */
    size_t used, size;
    uint64_t *rows;       /* counts the rows every sink took */
} row_batch;

/* A batch of rows of nv cells for sinks (borrowed; *rows counts the rows
 * handed on). Finish it with row_batch_free. */
tb_status row_batch_init(row_batch *b, size_t nv, tb_sink **sinks, size_t ns, uint64_t *rows, tb_error *err);
/* The cells of the next row, for the caller to fill (text may be borrowed
 * until row_batch_keep). */
tb_cell *row_batch_next(row_batch *b);
/* Keeps the row filled in row_batch_next (its text copied); hands the held
 * rows on when the batch is full. A sink's failure is returned. */
tb_status row_batch_keep(row_batch *b, tb_error *err);
/* Hands every held row on to the sinks, in order. */
tb_status row_batch_flush(row_batch *b, tb_error *err);
/* Frees what the batch holds (rows not handed on are dropped). */
void row_batch_free(row_batch *b);

#endif
