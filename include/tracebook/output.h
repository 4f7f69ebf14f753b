/* SPDX-License-Identifier: MIT */
/*
 * output.h - what the writers take: rows of typed cells, through a sink.
 *
 * The output stage is last in the engine's data flow (load -> db -> query
 * -> output). A writer knows columns (a header, a type, a number format and
 * width) and cells; it never sees a spec. Every file a writer makes is
 * written under a temporary name and renamed into place by finish, so a
 * reader never sees half a file.
 */
#ifndef TRACEBOOK_OUTPUT_H
#define TRACEBOOK_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/columns.h"
#include "tracebook/error.h"

/*
 * Rows reach a writer through a sink; the writers of the output stage are
 * sinks, and the query runner (tracebook/query.h) feeds them. A cell is one
 * value of a row. Typed time columns converted by
 * --timeunit arrive as TB_CELL_INT with scale > 0: the value is i / 10^scale
 * and must be written exactly ("1234" ns at scale 3 is 1.234); every other
 * number has scale 0.
 */
typedef enum tb_cell_kind { TB_CELL_NULL, TB_CELL_INT, TB_CELL_REAL, TB_CELL_TEXT } tb_cell_kind;

typedef struct tb_cell {
    tb_cell_kind kind;
    int scale;        /* TB_CELL_INT only: decimal places, 0..9 */
    int64_t i;
    double d;
    const char *s;    /* TB_CELL_TEXT: borrowed, valid during the row call; not NUL-safe, use n */
    size_t n;
} tb_cell;

typedef struct tb_sink_column {
    const char *header;           /* the header to write (unit already applied) */
    const char *name;             /* the column's name without its type suffix, for references
                                     (xlsx charts, conditional formats), or NULL */
    tb_col_type type;
    const char *number_format;    /* spreadsheet number format, or NULL (borrowed) */
    int width;                    /* spreadsheet column width in characters, 0 = automatic */
} tb_sink_column;

typedef struct tb_sink tb_sink;
struct tb_sink {
    /* Called once before any row; cols are borrowed for the sink's life. */
    tb_status (*begin)(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err);
    /* One row of n cells (n as given to begin). */
    tb_status (*row)(tb_sink *s, const tb_cell *cells, tb_error *err);
    /* Completes the output: files are renamed into place only here. */
    tb_status (*finish)(tb_sink *s, tb_error *err);
    /* Frees the sink; when finish did not succeed, removes every temporary file. */
    void (*destroy)(tb_sink *s);
};

#endif
