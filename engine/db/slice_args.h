/* SPDX-License-Identifier: MIT */
/*
 * slice_args.h - the args of a timeline slice kept beside its row: a shape
 * shared by slices alike and the numbers of the one slice
 * (docs/schema.md "The args of a slice").
 *
 * The loader turns a slice's args object into its shape (the object as
 * written, minified, each value that the row's columns hold replaced by
 * `$` and each other number by `#`) and its values (the raw text of the
 * `#` numbers, comma-separated; a number of at most SLICE_SHORT_NUM
 * characters stays in the shape). The shape is interned as a string, so the
 * thousands of tasks whose args differ only in ids and numbers share one.
 * `export timeline` expands the two back into the args object, asking the
 * writer for the value of each `$` member by its key.
 */
#ifndef TB_DB_SLICE_ARGS_H
#define TB_DB_SLICE_ARGS_H

#include <stddef.h>

#include "db/rows.h"
#include "util/jstream.h"

/* A member the row's columns hold: its key (n bytes) and the value stored. */
typedef struct slice_arg {
    const char *key;
    size_t n;
    tb_val v;
} slice_arg;

/* A slice_arg of a string literal key. */
#define SLICE_ARG(k, val) ((slice_arg){(k), sizeof(k) - 1, (val)})


/* A growable text buffer. */
typedef struct slice_buf {
    char *p;
    size_t n, cap;
} slice_buf;

/* A number this short (0 to 999, -99 to -1) stays in the shape: few values
 * of a member are that short, so the shapes stay few and the values short. */
#define SLICE_SHORT_NUM 3

/* Shape of a slice without args: it is written back without them. */
#define SLICE_NO_ARGS "-"

/*
 * The shape and values of ev's args (absent: SLICE_NO_ARGS, no values),
 * into shape and vals (reset first; vals->n 0 when there are none); cols
 * are the members the row holds. 0, or -1 out of memory.
 */
int slice_args_shape(trace_event *ev, const slice_arg *cols, int ncols, slice_buf *shape, slice_buf *vals);

/*
 * Writes the value of member key (n bytes) as JSON into out: the column
 * that holds it. 0, 1 when no column holds it (the expansion writes
 * null), -1 out of memory.
 */
typedef int (*slice_arg_fn)(void *ctx, const char *key, size_t n, slice_buf *out);

/*
 * The args object of a shape and its values into out (reset first):
 * 1 when the slice has args, 0 when its shape is SLICE_NO_ARGS, -1 out of
 * memory. Values missing from vals are written as null.
 */
int slice_args_expand(const char *shape, size_t sn, const char *vals, size_t vn, slice_arg_fn fn, void *ctx,
                      slice_buf *out);

/*
 * The values of a slice (text, as slice_args_shape writes them) packed into
 * out (reset first), as the DB stores them: per number a varint h, then
 * h & 3 == 0: an integer (zigzag(v) == h >> 2);
 *         1: a decimal without exponent, mantissa zigzag(m) == h >> 2, then
 *            one byte, the count of digits after the point (1 to 18);
 *         2: any other number, h >> 2 bytes of its text.
 * Each number comes back exactly as written. 0, or -1 out of memory.
 */
int slice_vals_pack(const char *vals, size_t vn, slice_buf *out);

/*
 * Packed values (slice_vals_pack) back into their text, comma-separated,
 * into out (reset first). Values after a malformed one are left out (the
 * expansion writes them as null). 0, or -1 out of memory.
 */
int slice_vals_unpack(const unsigned char *p, size_t n, slice_buf *out);

/* Appends n bytes to b. 0, or -1 out of memory. */
int slice_buf_add(slice_buf *b, const char *s, size_t n);
/* Appends s as a JSON string (quoted, escaped). 0, or -1 out of memory. */
int slice_buf_jstr(slice_buf *b, const char *s, size_t n);
/* Appends v as a JSON number. 0, or -1 out of memory. */
int slice_buf_int(slice_buf *b, long long v);
void slice_buf_free(slice_buf *b);

#endif
