/* SPDX-License-Identifier: MIT */
/*
 * timeline_out.h - a streaming Chrome-trace (trace_view) JSON writer.
 *
 * The timeline export (engine/report/timeline.c) reads events from the DB
 * one row at a time and hands each one to this writer, which appends it to
 * the current file: memory does not grow with the number of events. The
 * writer knows events and files, never a spec or a DB. An event is built
 * in a small buffer (tlw_begin, the member calls, tlw_end); a unit of
 * several events that must stay in one file (a flow's two ends) is built
 * with tlw_next between them before one tlw_end.
 *
 * Files: one file `<dir>/<stem>_<suffix>.json`, or, when slicing is on and
 * the events need more than one file, slices `<dir>/<stem>_slice_<N>_<suffix>.json`
 * (N from 0), each a complete JSON document. A new slice starts before a
 * unit that would take the current slice past slice_bytes (a slice holds at
 * least one unit). The begin_slice callback writes what every slice starts
 * with (process and thread metadata), end_slice what it ends with. Every
 * file is written under a temporary name and renamed into place by
 * tlw_finish, so a reader never sees half a file.
 */
#ifndef TB_OUTPUT_TIMELINE_OUT_H
#define TB_OUTPUT_TIMELINE_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"

typedef struct tlw tlw;

typedef struct tlw_options {
    const char *dir;         /* existing directory (borrowed) */
    const char *stem;        /* "msprof" (borrowed) */
    const char *suffix;      /* "<timestamp>[_rank<R>][_<label>]" (borrowed) */
    int top_object;          /* 1: {"traceEvents": [...]<tail>} (Kineto); 0: a top-level array (msprof) */
    const char *tail;        /* top_object: members written after the array, e.g. "\"baseTimeNanoseconds\": 5", or NULL */
    int64_t slice_bytes;     /* 0: one file whatever its size */
    /* Called at the start and at the end of every slice (may be NULL);
     * they write events with the tlw_ calls like any other. */
    tb_status (*begin_slice)(void *ctx, tlw *w, tb_error *err);
    tb_status (*end_slice)(void *ctx, tlw *w, tb_error *err);
    /* Called with each final path before a file of that name is started
     * (may be NULL): an error stops the writer before it writes there. */
    tb_status (*check_path)(void *ctx, const char *path, tb_error *err);
    void *ctx;
} tlw_options;

/* Creates the writer and its first file. Returns new in *out (free with tlw_destroy). */
tb_status tlw_create(const tlw_options *opt, tlw **out, tb_error *err);

/* Starts an event: "{". */
void tlw_begin(tlw *w);
/* Ends the event being built and starts another one of the same unit. */
void tlw_next(tlw *w);
/* Members of the event being built (or of the object opened by tlw_obj). */
void tlw_str(tlw *w, const char *key, const char *s, size_t n);   /* s may hold any bytes: escaped, invalid UTF-8 replaced */
void tlw_cstr(tlw *w, const char *key, const char *s);            /* NUL-terminated; NULL writes null */
void tlw_int(tlw *w, const char *key, int64_t v);
void tlw_real(tlw *w, const char *key, double v);                 /* NaN and infinities: null */
/* A time in µs from integer ns, exact, always 3 decimals: "1704161547420306.491"
 * as a string (as_string) or as a number. */
void tlw_us(tlw *w, const char *key, int64_t ns, int as_string);
/* A duration in µs from integer ns, exact, trailing zeros dropped: 8.34 */
void tlw_dur(tlw *w, const char *key, int64_t ns);
/* A member whose value is JSON text written as it is (the caller vouches for it). */
void tlw_raw(tlw *w, const char *key, const char *json, size_t n);
/* Opens an object member (tlw_obj_end closes it). */
void tlw_obj(tlw *w, const char *key);
void tlw_obj_end(tlw *w);
/* 1 when the open object has no member yet. */
int tlw_obj_empty(const tlw *w);
/* Drops the event being built (nothing is written). */
void tlw_cancel(tlw *w);
/* Ends the unit and writes it, first starting a new slice when this unit
 * would take the current one past slice_bytes. */
tb_status tlw_end(tlw *w, tb_error *err);

/* Events written so far (units count each of their events), metadata included. */
uint64_t tlw_events(const tlw *w);

/* Closes every slice and renames the files into place. */
tb_status tlw_finish(tlw *w, tb_error *err);

/* The final paths of the files put in place (borrowed, valid until tlw_destroy); their count. */
size_t tlw_files(const tlw *w, const char *const **paths);

/* Frees the writer; unless finished, removes its temporaries. NULL is fine. */
void tlw_destroy(tlw *w);

#endif
