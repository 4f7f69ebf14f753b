/* SPDX-License-Identifier: MIT */
/*
 * summary_kept.h - a torch_npu rank's own summary CSVs as read (the text the
 * load kept in TB_SOURCE_CSV), written back by `export summary` in each
 * output format (private to engine/export/; summary_kept.c, called by
 * summary.c).
 */
#ifndef TB_EXPORT_SUMMARY_KEPT_H
#define TB_EXPORT_SUMMARY_KEPT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "query/window.h"
#include "tracebook/error.h"

/* Which rows of one kept file are written. */
typedef struct kept_sel {
    int64_t rank;           /* the rank whose rows, or -1: the ranks of ranks, each row led by its Rank ID */
    const char *ranks;      /* rank < 0: a JSON array of the rank ids, in order (borrowed) */
    int64_t file;           /* TB_SOURCE_CSV.file: the STRING_IDS id of the file's name */
    int col;                /* >= 0: only the rows whose field col is a step from first to last */
    int64_t first, last;
    int tcol[2];            /* >= 0 (col < 0): only the rows whose time in us, field tcol[0] (a sample),
                               or the span tcol[0]..tcol[1] when tcol[1] >= 0 (an allocation and its
                               release, none: held to the end), meets the row's rank's span of spans */
    const window_rank *spans;   /* borrowed; a rank without one has no row in the window */
    size_t n_spans;
} kept_sel;

/* The column of a kept file's header whose rows carry their step (torch_npu's
 * `Step Id` of kernel_details, `Step` of step_trace_time), -1 when none. */
int kept_step_column(const char *head, size_t n);

/* The columns of a kept file's header whose rows carry their time in us
 * (memory_record's and npu_module_mem's `Timestamp(us)`, operator_memory's
 * `Allocation Time(us)` and `Release Time(us)`) into tcol (-1 when none):
 * 1 when the file has one. */
int kept_time_columns(const char *head, size_t n, int tcol[2]);

/* Writes the selected rows of a kept file as CSV to path, atomically: the
 * header line byte for byte (after a BOM, `Rank ID,` when merged), then each
 * row as the file wrote it, with the header's line end. */
tb_status kept_write_csv(sqlite3 *db, const kept_sel *k, const char *path, tb_error *err);

/* Writes the selected rows as JSON to path, atomically: an array of objects,
 * one per row and one per line, keyed by the header's fields (a repeated one
 * gets " (2)", ...); a field that is a JSON number (blanks and a TAB around
 * it ignored) is that number as written, any other its text. */
tb_status kept_write_json(sqlite3 *db, const kept_sel *k, const char *path, tb_error *err);

/* Creates TEMP TABLE `table` (columns c0, c1, ...) holding the selected rows,
 * each field a number when it is one (as kept_write_json) of at most 15
 * significant digits (what a spreadsheet cell keeps), else its text,
 * and into yaml (cap bytes) the `columns:` lines of a report that reads it
 * (each column's header, the file's own). */
tb_status kept_table(sqlite3 *db, const kept_sel *k, const char *table, char *yaml, size_t cap, tb_error *err);

#endif
