/* SPDX-License-Identifier: MIT */
/*
 * timeline_out.c - the streaming Chrome-trace writer behind `export timeline`.
 *
 * Each event is built as JSON text in a small buffer and appended to the
 * current file when it is complete, so the writer's memory is one event
 * (plus stdio's buffer), whatever the number of events. Numbers are written
 * exactly from integers: a time in ns becomes "<µs>.<3 digits>" by integer
 * division, never through a double (a double holds only 15-16 digits, and a
 * Unix time in ns has 19). Strings are escaped per RFC 8259 and made valid
 * UTF-8 (invalid sequences become U+FFFD), as the JSON writer does.
 *
 * Slicing follows msprof's naming: the whole timeline is `<stem>_<suffix>.json`;
 * when it does not fit in one slice, the files are `<stem>_slice_<N>_<suffix>.json`.
 * The first file is opened under the unsliced name and renamed (before it is
 * ever visible) when a second slice starts. Finished slices are closed at
 * once (only one file is open at a time) and all of them are renamed into
 * place by tlw_finish.
 */
#define _POSIX_C_SOURCE 200809L
#include "output/timeline_out.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

#define MAX_DEPTH 8

typedef struct tbuf {
    char *p;
    size_t n, cap;
} tbuf;

struct tlw {
    tlw_options o;
    tbuf ev;                /* the unit being built */
    int first[MAX_DEPTH];   /* per open object: no member written yet */
    int depth;
    uint64_t unit_events;   /* events in the unit being built */
    int oom;
    afile *files;           /* one per slice; all but the last closed */
    char **paths;           /* final paths, parallel to files */
    size_t nfiles, capfiles;
    int64_t bytes;          /* written to the current file */
    uint64_t slice_units;   /* units (outside the callbacks) in the current file */
    uint64_t slice_events;  /* events in the current file */
    uint64_t events;
    int in_callback;
    int finished;
};

static void put(tlw *w, const char *s, size_t n)
{
    if (w->oom)
        return;
    if (w->ev.n + n + 1 > w->ev.cap) {
        size_t cap = w->ev.cap ? w->ev.cap : 512;
        while (cap < w->ev.n + n + 1)
            cap *= 2;
        char *p = realloc(w->ev.p, cap);
        if (!p) {
            w->oom = 1;
            return;
        }
        w->ev.p = p;
        w->ev.cap = cap;
    }
    memcpy(w->ev.p + w->ev.n, s, n);
    w->ev.n += n;
}

static void puts_(tlw *w, const char *s)
{
    put(w, s, strlen(s));
}

static void escaped(tlw *w, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    put(w, "\"", 1);
    size_t i = 0, run = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        const char *rep = NULL;
        char u[7];
        size_t len = 1;
        if (c == '"')
            rep = "\\\"";
        else if (c == '\\')
            rep = "\\\\";
        else if (c == '\n')
            rep = "\\n";
        else if (c == '\t')
            rep = "\\t";
        else if (c == '\r')
            rep = "\\r";
        else if (c < 0x20) {
            memcpy(u, "\\u00", 4);
            u[4] = hex[c >> 4];
            u[5] = hex[c & 15];
            u[6] = 0;
            rep = u;
        } else if (c >= 0x80 && !utf8_seq(s + i, n - i, &len)) {
            rep = "\\ufffd";
        }
        if (!rep) {
            i += len;
            run += len;
            continue;
        }
        put(w, s + i - run, run);
        run = 0;
        puts_(w, rep);
        i += len;
    }
    put(w, s + i - run, run);
    put(w, "\"", 1);
}

/* 1 when s needs no escape in a JSON string (the keys of the code are such) */
static int plain(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
            return 0;
    }
    return 1;
}

static void key(tlw *w, const char *k)
{
    if (!w->first[w->depth])
        put(w, ", ", 2);
    w->first[w->depth] = 0;
    size_t n = strlen(k);
    if (plain(k, n)) {
        put(w, "\"", 1);
        put(w, k, n);
        put(w, "\": ", 3);
    } else {
        escaped(w, k, n);
        put(w, ": ", 2);
    }
}

/* The decimal digits of v at the end of b[0..24); returns where they start.
 * (printf is a fifth of the export's time otherwise.) */
static char *digits(uint64_t v, char *end)
{
    char *p = end;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

void tlw_begin(tlw *w)
{
    w->ev.n = 0;
    w->depth = 0;
    w->first[0] = 1;
    w->unit_events = 1;
    put(w, "{", 1);
}

void tlw_next(tlw *w)
{
    put(w, "},\n{", 4);
    w->depth = 0;
    w->first[0] = 1;
    w->unit_events++;
}

void tlw_cancel(tlw *w)
{
    w->ev.n = 0;
    w->depth = 0;
    w->unit_events = 0;
}

void tlw_str(tlw *w, const char *k, const char *s, size_t n)
{
    key(w, k);
    escaped(w, s, n);
}

void tlw_cstr(tlw *w, const char *k, const char *s)
{
    if (!s) {
        key(w, k);
        puts_(w, "null");
        return;
    }
    tlw_str(w, k, s, strlen(s));
}

void tlw_int(tlw *w, const char *k, int64_t v)
{
    char b[24], *e = b + sizeof b;
    char *p = digits(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, e);
    if (v < 0)
        *--p = '-';
    key(w, k);
    put(w, p, (size_t)(e - p));
}

void tlw_real(tlw *w, const char *k, double v)
{
    char b[NUMFMT_MAX];
    size_t n = numfmt_double_exact(v, b);
    key(w, k);
    if (n == 0)
        puts_(w, "null");
    else
        put(w, b, n);
    /* as in json_out.c: an integral real past int64 stays a real for 64-bit-integer readers */
    if (n && fabs(v) >= 9223372036854775808.0)
        puts_(w, ".0");
}

void tlw_us(tlw *w, const char *k, int64_t ns, int as_string)
{
    char b[32], *e = b + sizeof b;
    uint64_t m = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(m % 1000);
    if (as_string)
        *--e = '"';
    *--e = (char)('0' + frac % 10);
    *--e = (char)('0' + frac / 10 % 10);
    *--e = (char)('0' + frac / 100);
    *--e = '.';
    char *p = digits(m / 1000, e);
    if (ns < 0)
        *--p = '-';
    if (as_string)
        *--p = '"';
    key(w, k);
    put(w, p, (size_t)(b + sizeof b - p));
}

void tlw_dur(tlw *w, const char *k, int64_t ns)
{
    char b[NUMFMT_MAX];
    size_t n = numfmt_scaled(ns, 3, b);
    key(w, k);
    put(w, b, n);
}

void tlw_raw(tlw *w, const char *k, const char *json, size_t n)
{
    key(w, k);
    put(w, json, n);
}

void tlw_obj(tlw *w, const char *k)
{
    key(w, k);
    put(w, "{", 1);
    if (w->depth + 1 < MAX_DEPTH)
        w->first[++w->depth] = 1;
}

void tlw_obj_end(tlw *w)
{
    put(w, "}", 1);
    if (w->depth > 0)
        w->depth--;
}

int tlw_obj_empty(const tlw *w)
{
    return w->first[w->depth];
}

uint64_t tlw_events(const tlw *w)
{
    return w->events;
}

/* The final path of slice n (n < 0: the unsliced name). Returns new, or NULL. */
static char *slice_path(const tlw *w, long n)
{
    size_t len = strlen(w->o.dir) + strlen(w->o.stem) + strlen(w->o.suffix) + 48;
    char *p = malloc(len);
    if (!p)
        return NULL;
    if (n < 0)
        snprintf(p, len, "%s/%s_%s.json", w->o.dir, w->o.stem, w->o.suffix);
    else
        snprintf(p, len, "%s/%s_slice_%ld_%s.json", w->o.dir, w->o.stem, n, w->o.suffix);
    return p;
}

static tb_status write_raw(tlw *w, const char *s, size_t n, tb_error *err)
{
    afile *af = &w->files[w->nfiles - 1];
    if (n && fwrite(s, 1, n, af->f) != n)
        return tb_error_at(err, TB_ERR_IO, af->path, 0, 0, -1, "cannot write");
    w->bytes += (int64_t)n;
    return TB_OK;
}

static tb_status open_slice(tlw *w, tb_error *err)
{
    if (w->nfiles == w->capfiles) {
        size_t cap = w->capfiles ? w->capfiles * 2 : 4;
        afile *f = realloc(w->files, cap * sizeof *f);
        if (!f)
            return tb_error_set(err, TB_ERR_NOMEM, "timeline: out of memory");
        w->files = f;
        char **p = realloc(w->paths, cap * sizeof *p);
        if (!p)
            return tb_error_set(err, TB_ERR_NOMEM, "timeline: out of memory");
        w->paths = p;
        w->capfiles = cap;
    }
    long n = (long)w->nfiles;
    char *path = slice_path(w, n == 0 ? -1 : n);
    if (!path)
        return tb_error_set(err, TB_ERR_NOMEM, "timeline: out of memory");
    tb_status st;
    if (w->o.check_path && (st = w->o.check_path(w->o.ctx, path, err))) {
        free(path);
        return st;
    }
    if (n == 1) {
        /* the first file becomes slice 0 */
        char *first = slice_path(w, 0);
        if (first && w->o.check_path && (st = w->o.check_path(w->o.ctx, first, err))) {
            free(first);
            free(path);
            return st;
        }
        if (!first || afile_retarget(&w->files[0], first, err) != TB_OK) {
            free(first);
            free(path);
            return err->code ? err->code : tb_error_set(err, TB_ERR_NOMEM, "timeline: out of memory");
        }
        free(w->paths[0]);
        w->paths[0] = first;
    }
    st = afile_open(path, &w->files[w->nfiles], err);
    if (st) {
        free(path);
        return st;
    }
    w->paths[w->nfiles++] = path;
    w->bytes = 0;
    w->slice_units = 0;
    w->slice_events = 0;
    const char *head = w->o.top_object ? "{\"traceEvents\": [\n" : "[\n";
    if ((st = write_raw(w, head, strlen(head), err)))
        return st;
    if (w->o.begin_slice) {
        w->in_callback = 1;
        st = w->o.begin_slice(w->o.ctx, w, err);
        w->in_callback = 0;
    }
    return st;
}

static tb_status close_slice(tlw *w, tb_error *err)
{
    tb_status st = TB_OK;
    if (w->o.end_slice) {
        w->in_callback = 1;
        st = w->o.end_slice(w->o.ctx, w, err);
        w->in_callback = 0;
        if (st)
            return st;
    }
    if ((st = write_raw(w, "\n]", 2, err)))
        return st;
    if (w->o.top_object) {
        if (w->o.tail && *w->o.tail) {
            if ((st = write_raw(w, ",\n", 2, err)) || (st = write_raw(w, w->o.tail, strlen(w->o.tail), err)))
                return st;
        }
        if ((st = write_raw(w, "}", 1, err)))
            return st;
    }
    if ((st = write_raw(w, "\n", 1, err)))
        return st;
    return afile_close(&w->files[w->nfiles - 1], err);
}

tb_status tlw_end(tlw *w, tb_error *err)
{
    put(w, "}", 1);
    if (w->oom)
        return tb_error_set(err, TB_ERR_NOMEM, "timeline: out of memory");
    tb_status st;
    if (w->o.slice_bytes > 0 && !w->in_callback && w->slice_units > 0 &&
        w->bytes + (int64_t)w->ev.n + 16 > w->o.slice_bytes) {
        /* the callbacks build their own events: keep this unit aside */
        tbuf held = w->ev;
        uint64_t held_events = w->unit_events;
        w->ev = (tbuf){0};
        st = close_slice(w, err);
        if (!st)
            st = open_slice(w, err);
        free(w->ev.p);
        w->ev = held;
        w->unit_events = held_events;
        if (st)
            return st;
    }
    if (w->slice_events && (st = write_raw(w, ",\n", 2, err)))
        return st;
    if ((st = write_raw(w, w->ev.p, w->ev.n, err)))
        return st;
    w->slice_events += w->unit_events;
    w->events += w->unit_events;
    if (!w->in_callback)
        w->slice_units++;
    w->ev.n = 0;
    w->unit_events = 0;
    return TB_OK;
}

tb_status tlw_create(const tlw_options *opt, tlw **out, tb_error *err)
{
    *out = NULL;
    tlw *w = calloc(1, sizeof *w);
    if (!w)
        return tb_error_set(err, TB_ERR_NOMEM, "timeline: out of memory");
    w->o = *opt;
    tb_status st = open_slice(w, err);
    if (st) {
        tlw_destroy(w);
        return st;
    }
    *out = w;
    return TB_OK;
}

tb_status tlw_finish(tlw *w, tb_error *err)
{
    tb_status st = close_slice(w, err);
    for (size_t i = 0; i < w->nfiles && !st; i++)
        st = afile_commit(&w->files[i], err);
    if (!st)
        w->finished = 1;
    return st;
}

size_t tlw_files(const tlw *w, const char *const **paths)
{
    *paths = (const char *const *)w->paths;
    return w->finished ? w->nfiles : 0;
}

void tlw_destroy(tlw *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->nfiles; i++) {
        if (!w->finished)
            afile_abort(&w->files[i]);
        free(w->paths[i]);
    }
    free(w->files);
    free(w->paths);
    free(w->ev.p);
    free(w);
}
