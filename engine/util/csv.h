/* SPDX-License-Identifier: MIT */
/*
 * csv.h - the streaming CSV reader for profiler summaries (private to the engine).
 *
 * Profilers write their summaries (torch_npu kernel_details.csv,
 * operator_memory.csv, msprof op_summary_*.csv, msprof-analyze
 * cluster_step_trace_time.csv, ...) as RFC 4180 CSV with a few habits of
 * their own: a trailing TAB after timestamps, quoted or not, so that Excel
 * keeps every digit; shapes in doubled quotes (`"""232138240"""`); call
 * stacks with newlines inside quotes; CRLF line ends and a UTF-8 BOM in some
 * files; `N/A` for missing values; and, in files that went through Excel,
 * exponent notation that lost digits (`1.69512E+15`).
 *
 * The reader hands out one record at a time as spans into its own buffer,
 * with quotes already decoded and the record's starting line. It reads plain
 * or gzip input in 1 MiB chunks; the buffer grows only while one record is
 * larger than it. It does not trim or interpret fields: csv_trim, csv_is_null
 * and the number parsers below do that on request, because some fields (call
 * stacks, shapes) legitimately hold tabs and spaces. Columns are found by
 * name with aliases (csv_col, csv_require), never by position, since real
 * files differ from the documented headers.
 *
 * Typical use:
 *
 *     csv_reader *r = csv_open(path, err);
 *     if (!r || csv_header(r, err)) ...
 *     int ts = csv_require(r, (const char *const[]){"Start Time(us)",
 *                                                   "Task Start Time(us)", NULL}, err);
 *     csv_row row;
 *     while ((rc = csv_next(r, &row, err)) == 1) {
 *         if (csv_check_width(r, &row, err)) ...
 *         csv_us_to_ns(row.f[ts], &ns, &lost);
 *     }
 *     csv_close(r);
 */
#ifndef TB_UTIL_CSV_H
#define TB_UTIL_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"

/* One field: its decoded text (quotes removed, "" turned into "), not NUL-terminated. */
typedef struct csv_field {
    const char *p;
    size_t n;
} csv_field;

/* One record (borrowed: f and the text it points to are valid until the next csv_next). */
typedef struct csv_row {
    int n;              /* number of fields, at least 1 */
    const csv_field *f; /* f[0] .. f[n - 1] */
    long line;          /* 1-based line where the record starts */
    int64_t offset;     /* byte offset of the record's first byte (decompressed input) */
    const size_t *start; /* start[i]: offset of field i's first byte in the record as read (quotes
                          * included), from the record's first byte; for error columns */
} csv_row;

typedef struct csv_reader csv_reader;

/* Opens path, plain or gzip (told by its magic bytes). Returns new (free with csv_close) or NULL with err set. */
csv_reader *csv_open(const char *path, tb_error *err);

/* Closes the file and frees the reader; accepts NULL. */
void csv_close(csv_reader *r);

/*
 * Returns a reader of lines the caller already holds (new: free with
 * csv_close), or NULL with err set (out of memory): for inputs that mix CSV
 * lines with other text, as topsprof listings do. Each line goes through
 * csv_split; csv_next and csv_header are not for such a reader. path names
 * the input in errors (copied; may be NULL).
 */
csv_reader *csv_open_lines(const char *path, tb_error *err);

/*
 * Splits the n bytes at p, one record without its line end, by the same
 * rules as csv_next, into *row (borrowed as for csv_next: valid until the
 * next call; p is neither changed nor kept). line and offset say where p[0]
 * is in the input; columns in errors count from p[0]. Returns 1 with *row
 * filled, 0 when the text is empty, -1 with err set (an unterminated quoted
 * field, at its quote; out of memory). r comes from csv_open_lines.
 */
int csv_split(csv_reader *r, const char *p, size_t n, long line, int64_t offset, csv_row *row, tb_error *err);

/*
 * Reads the next record into *row. Returns 1 for a record, 0 at the end of
 * the input, -1 on error (err set with file, line, column and offset: an
 * unterminated quoted field names where its quote opened). A UTF-8 BOM at the
 * start is skipped; lines that are completely empty are skipped (still
 * counted). After an error every further call returns -1 with the same error.
 */
int csv_next(csv_reader *r, csv_row *row, tb_error *err);

/*
 * Reads the first record as the header and keeps a trimmed copy of its
 * names. Returns 0, or -1 with err set (an input without any record is
 * `empty CSV, expected a header row`). Call once, before csv_next.
 */
int csv_header(csv_reader *r, tb_error *err);

/* Number of header fields (0 before csv_header). */
int csv_width(const csv_reader *r);

/* Header name i, trimmed (borrowed: valid until csv_close). Requires 0 <= i < csv_width. */
csv_field csv_name(const csv_reader *r, int i);

/* The path the reader was opened with (borrowed: valid until csv_close). */
const char *csv_path(const csv_reader *r);

/* Bytes of the file itself read so far (compressed for gzip); 0 for a reader of lines. */
int64_t csv_raw_offset(const csv_reader *r);

/*
 * Returns the index of the header column named by names, a NULL-terminated
 * list of aliases tried in order (the first alias that matches wins; among
 * equal names the leftmost column), or -1. Names are compared
 * case-sensitively after trimming spaces and tabs on both sides.
 */
int csv_col(const csv_reader *r, const char *const *names);

/*
 * As csv_col, but a missing column is an error: returns -1 with err set to
 * `missing column 'FIRST ALIAS'` at the header's line, column 0.
 */
int csv_require(const csv_reader *r, const char *const *names, tb_error *err);

/*
 * Returns 0 when row has as many fields as the header (read by csv_header
 * first), else -1 with err set to `row has M fields, the header has N` at the
 * row's line, column 0, and the row's offset.
 */
int csv_check_width(const csv_reader *r, const csv_row *row, tb_error *err);

/* Returns f without leading and trailing spaces and tabs (borrowed from f). */
csv_field csv_trim(csv_field f);

/* 1 when f, trimmed, is empty or `N/A`. */
int csv_is_null(csv_field f);

/*
 * Converts a time in microseconds (decimal text, trimmed first) to integer
 * nanoseconds, exactly for up to three decimals (a fourth rounds), without a
 * double. Exponent notation (`1.69512E+15`, from Excel) is accepted and sets
 * *lost_precision to 1 (when lost_precision is not NULL); otherwise
 * *lost_precision is left as it was, so one flag can gather a whole file.
 * Returns 0, or -1 when the text is not a number (empty and `N/A` included).
 */
int csv_us_to_ns(csv_field f, int64_t *ns, int *lost_precision);

/* Parses a decimal integer (optional sign, digits only, in int64 range; trimmed first). Returns 0 or -1. */
int csv_int(csv_field f, int64_t *out);

/*
 * Parses a finite decimal real (optional sign, digits with an optional point
 * and exponent; no hex, inf or nan; trimmed first). Returns 0 or -1.
 */
int csv_real(csv_field f, double *out);

#endif
