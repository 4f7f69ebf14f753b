/* SPDX-License-Identifier: MIT */
/*
 * row_batch.c - rows held between a statement and its sinks (row_batch.h).
 *
 * A batch is an array of ROW_BATCH_ROWS rows of cells and a buffer of
 * ROW_BATCH_TEXT bytes for the text they point at. The next row is filled
 * in place; keeping it copies its text into the buffer, after handing on
 * the rows already held when the buffer has no room left for it. A row
 * whose text alone is longer than the buffer is handed on at once, its
 * text read where the statement holds it (no copy, no larger buffer: the
 * batch's memory stays the same whatever the text). A full batch is handed
 * on at once; the caller hands on the rest at the end.
 */
#include "query/row_batch.h"

#include <stdlib.h>
#include <string.h>

tb_status row_batch_init(row_batch *b, size_t nv, tb_sink **sinks, size_t ns, uint64_t *rows, tb_error *err)
{
    memset(b, 0, sizeof *b);
    b->sinks = sinks;
    b->ns = ns;
    b->nv = nv;
    b->rows = rows;
    b->cells = calloc(ROW_BATCH_ROWS * (nv ? nv : 1), sizeof *b->cells);
    b->text = malloc(ROW_BATCH_TEXT);
    b->size = ROW_BATCH_TEXT;
    if (!b->cells || !b->text) {
        row_batch_free(b);
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    return TB_OK;
}

tb_cell *row_batch_next(row_batch *b)
{
    return &b->cells[b->n * b->nv];
}

tb_status row_batch_flush(row_batch *b, tb_error *err)
{
    for (size_t r = 0; r < b->n; r++) {
        const tb_cell *row = &b->cells[r * b->nv];
        for (size_t j = 0; j < b->ns; j++) {
            tb_status rc = b->sinks[j]->row(b->sinks[j], row, err);
            if (rc)
                return rc;
        }
        (*b->rows)++;
    }
    b->n = 0;
    b->used = 0;
    return TB_OK;
}

tb_status row_batch_keep(row_batch *b, tb_error *err)
{
    tb_cell *row = row_batch_next(b);
    size_t need = 0;
    for (size_t k = 0; k < b->nv; k++)
        if (row[k].kind == TB_CELL_TEXT)
            need += row[k].n + 1;
    if (b->used + need > b->size) {
        /* the held rows go first, then this one moves to the front */
        size_t n = b->n;
        tb_status rc = row_batch_flush(b, err);
        if (rc)
            return rc;
        if (n) {
            memmove(b->cells, &b->cells[n * b->nv], b->nv * sizeof *b->cells);
            row = b->cells;
        }
        if (need > b->size) {
            /* longer than the buffer: handed on at once, its text still the statement's */
            b->n = 1;
            return row_batch_flush(b, err);
        }
    }
    for (size_t k = 0; k < b->nv; k++)
        if (row[k].kind == TB_CELL_TEXT) {
            char *t = b->text + b->used;
            if (row[k].n)
                memcpy(t, row[k].s, row[k].n);
            t[row[k].n] = 0;
            row[k].s = t;
            b->used += row[k].n + 1;
        }
    if (++b->n == ROW_BATCH_ROWS)
        return row_batch_flush(b, err);
    return TB_OK;
}

void row_batch_free(row_batch *b)
{
    free(b->cells);
    free(b->text);
    b->cells = NULL;
    b->text = NULL;
    b->n = b->used = b->size = 0;
}
