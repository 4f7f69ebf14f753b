/* SPDX-License-Identifier: MIT */
/*
 * jstream.h - the streaming Chrome-trace tokenizer over a byte source (private to the
 * engine; the importers of ingest/ read trace JSON through it).
 *
 * A purpose-built tokenizer for trace JSON: it walks a top-level array of
 * events or a {"traceEvents": [...], ...} object, and hands out one event at a
 * time with its fields as spans into its own buffer. Memory stays bounded by
 * the largest single event, whatever the file size. It reads plain or gzip
 * input (through util/bytesrc), keeps ts/dur as exact nanoseconds from their
 * decimal text, tolerates raw control characters inside strings and a
 * trailing `{}` event, and reports a cut-short file as such (with the offset
 * of the incomplete event) instead of as a syntax error.
 */
#ifndef TB_UTIL_JSTREAM_H
#define TB_UTIL_JSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracebook/error.h"

enum { JS_NONE = 0, JS_STR, JS_NUM, JS_OBJ, JS_ARR, JS_TRUE, JS_FALSE, JS_NULL };

#define JS_F_ESC 1u  /* the string holds backslash escapes */
#define JS_F_CTRL 2u /* the string holds raw control characters */

/* A span of text inside the reader's buffer (borrowed: valid until the next js_next). */
typedef struct js_span {
    const char *p;  /* for JS_STR: the characters between the quotes */
    size_t n;
    int type;       /* JS_* of the value; JS_NONE when absent */
    unsigned flags; /* JS_F_* for strings and for containers holding such strings */
} js_span;

/* js_arg sees the first JS_MAX_MEMBERS members of args; later ones are ignored. */
#define JS_MAX_MEMBERS 64

typedef struct js_member {
    js_span key;
    js_span val;
} js_member;

/* A member added before argv must be cleared in jstream.c's event_clear. */
typedef struct trace_event {
    char ph;                      /* first character of "ph", 0 when absent */
    js_span name, cat, id, bp, scope, pid, tid, args;
    int has_ts, has_dur;
    int64_t ts_ns, dur_ns;
    int64_t offset;               /* byte offset of the event's '{' */
    int n_keys;                   /* members in the event object (0 = `{}`) */
    /* args, parsed on demand by js_args() */
    int args_state;               /* 0 not parsed, 1 parsed, -1 not an object */
    int n_args;
    js_member argv[JS_MAX_MEMBERS];
} trace_event;

typedef struct jstream jstream;

enum js_item { JS_ITEM_EVENT = 1, JS_ITEM_TOPKEY, JS_ITEM_END, JS_ITEM_TRUNCATED, JS_ITEM_ERROR };

/* Opens path (plain or gzip). Returns new (free with js_close) or NULL with err set. */
jstream *js_open(const char *path, tb_error *err);
void js_close(jstream *js);

/*
 * The longest single item (an event, or a top-level member) the reader
 * holds, in bytes: a longer one is an error naming where it starts, not
 * gigabytes of memory. 0 keeps the default, JS_MAX_ITEM.
 */
void js_set_max_item(jstream *js, size_t bytes);
#define JS_MAX_ITEM ((size_t)64 << 20)

/*
 * Reads the next item. JS_ITEM_EVENT fills *ev; JS_ITEM_TOPKEY fills *key and
 * *val with a top-level member other than traceEvents (raw value text);
 * JS_ITEM_TRUNCATED means the input stopped early (js_stop_offset tells where);
 * JS_ITEM_ERROR sets err with file, line, column and offset.
 */
int js_next(jstream *js, trace_event *ev, js_span *key, js_span *val, tb_error *err);

/* 1 when the input is a top-level object ({"traceEvents": ...}). */
int js_top_is_object(const jstream *js);

/* Offset of the incomplete item when the input was cut short. */
int64_t js_stop_offset(const jstream *js);
/* After JS_ITEM_END of a gzip trace: where bytes that are no gzip member
 * follow the last one in the file (bytesrc_trailing), -1 when none. */
int64_t js_trailing(const jstream *js);
/* Bytes consumed so far (decompressed) and the compressed/raw bytes read. */
int64_t js_bytes_done(const jstream *js);
int64_t js_raw_bytes_done(const jstream *js);

/*
 * Parses one complete event object at p (which must be '{') from memory.
 * Returns 1 and sets *next past it, or 0 when the bytes are not a whole
 * event. Spans in ev point into [p, end).
 */
int js_parse_event_at(const char *p, const char *end, trace_event *ev, const char **next);

/* Parses ev's args into argv (args_state 1, or -1 when args is no object);
 * js_arg calls it the first time. */
void js_parse_args(trace_event *ev);

/*
 * Returns the value of args member key (n bytes), or a JS_NONE span (parses
 * args first if needed). Inline, so that a literal key's length and bytes
 * are compared as constants.
 */
static inline js_span js_arg_n(trace_event *ev, const char *key, size_t n)
{
    if (ev->args_state == 0)
        js_parse_args(ev);
    for (int i = 0; i < ev->n_args; i++) {
        const js_span *k = &ev->argv[i].key;
        if (k->n == n && (n == 0 || k->p[0] == key[0]) && memcmp(k->p, key, n) == 0)
            return ev->argv[i].val;
    }
    return (js_span){0};
}

/* Returns the value of args member key, or a JS_NONE span (parses args first if needed). */
static inline js_span js_arg(trace_event *ev, const char *key)
{
    return js_arg_n(ev, key, strlen(key));
}

/*
 * Converts a JSON number (or the text of a numeric string) in microseconds to
 * integer nanoseconds without going through a double when it has at most three
 * decimals. Returns 0 on success, -1 when the text is not a number, 1 when
 * it is a number beyond the int64 range in ns (*out is then INT64_MAX or
 * -INT64_MAX, which every range check refuses).
 */
int js_us_to_ns(const char *p, size_t n, int64_t *out);

/* Parses an integer value (number, or numeric string). Returns 0 or -1. */
int js_span_int(js_span s, int64_t *out);
/* Parses a real value (number, or numeric string). Returns 0 or -1. */
int js_span_real(js_span s, double *out);

/*
 * Decodes a string span (escapes resolved, control characters kept) into buf;
 * returns buf, or the raw text when it needs no decoding. *len gets the length.
 * buf grows as needed (*cap); the returned pointer is borrowed.
 */
const char *js_str_decode(js_span s, char **buf, size_t *cap, size_t *len);

/*
 * Copies the raw text of a value into valid JSON: raw control characters
 * inside strings are escaped; a string value gets its quotes back. Returns a pointer to the text (borrowed: the
 * span itself when nothing needs escaping, else *buf).
 */
const char *js_raw_clean(js_span s, char **buf, size_t *cap, size_t *len);

#endif
