/* SPDX-License-Identifier: MIT */
/*
 * csv.c - streaming RFC 4180 reader for profiler summary CSVs (see csv.h).
 *
 * The reader keeps a window of the (decompressed) input in one buffer and
 * decodes each record in place: a write cursor trails the read cursor inside
 * the record, so removing quotes and turning "" into " never needs a second
 * buffer, and the fields come out as adjacent spans of the record's own
 * bytes. The scanner is a small state machine whose state survives a refill,
 * so no byte is looked at twice; when the window runs out mid-record, the
 * record's bytes slide to the front of the buffer (the only copy), and the
 * buffer doubles only when one record fills all of it. Field ends are kept as
 * offsets from the record start, which sliding does not change.
 *
 * Quoting follows RFC 4180, leniently where profilers and Python's csv module
 * are lenient: a quote only opens a quoted field at the field's start (inside
 * an unquoted field it is an ordinary character), and text between a closing
 * quote and the next separator is kept (`"1.5"<TAB>` gives `1.5<TAB>`, which
 * csv_trim then strips). A record ends at an LF outside quotes; a CR just
 * before it is dropped, a CR anywhere else is data. Lines are counted as the
 * bytes are scanned, so every record knows its first line and an error names
 * its line without a second pass.
 */
#define _POSIX_C_SOURCE 200809L
#include "util/csv.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/jstream.h"
#include "util/bytesrc.h"

#define CSV_INITIAL_CAP (1u << 20)
#define CSV_LINE_CAP (1u << 12)

/* Scanner states. */
enum {
    S_START,    /* at the start of a field */
    S_UNQUOTED, /* inside an unquoted field */
    S_QUOTED,   /* inside quotes */
    S_QUOTE,    /* just after a quote inside quotes: a closing quote, or the first of "" */
    S_AFTER     /* after a closing quote: text up to the separator is kept as is */
};

/* Bytes that end a run of ordinary bytes, outside and inside quotes. */
static const unsigned char plain_stop[256] = {[','] = 1, ['\n'] = 1, ['\r'] = 1};
static const unsigned char quoted_stop[256] = {['"'] = 1, ['\n'] = 1};

struct csv_reader {
    bytesrc *src;         /* the file, plain or gzip; NULL for a reader of lines (csv_split) */
    char *path;
    bytesrc_win win;      /* the window: win.buf, win.len, win.eof, win.base (offset of win.buf[0]) */
    size_t rec;           /* start of the current record in buf (raw and decoded) */
    size_t pos;           /* next raw byte to scan */
    size_t w;             /* next decoded byte to write: rec <= w <= pos */
    int started;          /* the BOM check is done */
    int failed;           /* an error happened: error holds it */
    int state;            /* S_* */
    int cr;               /* the last decoded byte is a CR outside quotes */
    int syntax;           /* the record holds a separator or a quote (so it is not a blank line) */
    long line;            /* 1-based line of buf[pos] */
    int64_t line_start;   /* absolute offset of that line's first byte */
    long rec_line;        /* line where the current record starts */
    long q_line, q_col;   /* where the open quoted field started (for errors) */
    int64_t q_off;
    size_t *ends;         /* field ends, as offsets from rec in decoded bytes */
    size_t *starts;       /* field starts, as offsets from rec in raw bytes (cap_ends + 1 entries) */
    size_t n_ends, cap_ends;
    csv_field *fields;    /* the row handed out (cap_ends entries) */
    size_t cap_fields;
    int have_header, width;
    long header_line;
    csv_field *names;     /* trimmed header names, pointing into names_text */
    char *names_text;
    tb_error error;       /* the error that stopped the reader */
};

/* Marks the reader failed (r->error already filled) and copies the error out. */
static int stop(csv_reader *r, tb_error *err)
{
    r->failed = 1;
    if (err)
        *err = r->error;
    return -1;
}

static int nomem(csv_reader *r, tb_error *err)
{
    tb_error_at(&r->error, TB_ERR_NOMEM, r->path, 0, 0, -1, "out of memory");
    return stop(r, err);
}

/* A reader with its window (cap bytes to start with) and path, without a source. */
static csv_reader *create(const char *path, size_t cap, tb_error *err)
{
    csv_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path ? path : "")) || bytesrc_win_init(&r->win, cap, err)) {
        csv_close(r);
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    r->line = 1;
    r->rec_line = 1;
    return r;
}

csv_reader *csv_open(const char *path, tb_error *err)
{
    csv_reader *r = create(path, CSV_INITIAL_CAP, err);
    if (r && !(r->src = bytesrc_open(path, err))) {
        csv_close(r);
        return NULL;
    }
    return r;
}

csv_reader *csv_open_lines(const char *path, tb_error *err)
{
    csv_reader *r = create(path, CSV_LINE_CAP, err); /* csv_split grows it for a longer line */
    if (r) {
        r->win.eof = 1; /* nothing to read: csv_split hands the bytes in */
        r->started = 1;
    }
    return r;
}

void csv_close(csv_reader *r)
{
    if (!r)
        return;
    bytesrc_close(r->src);
    bytesrc_win_finish(&r->win);
    free(r->path);
    free(r->ends);
    free(r->starts);
    free(r->fields);
    free(r->names);
    free(r->names_text);
    free(r);
}

/*
 * Slides the current record to the front of the buffer (the buffer doubles
 * when the record fills it) and reads more. Returns 0 (r->win.eof set when
 * nothing more came), or -1 with the reader stopped.
 */
static int refill(csv_reader *r, tb_error *err)
{
    size_t keep = r->rec;
    r->pos -= keep;
    r->w -= keep;
    r->rec = 0;
    if (bytesrc_fill(r->src, &r->win, keep, 0, &r->error) < 0)
        return stop(r, err);
    return 0;
}

/* Ends the current field at decoded offset r->w. Returns 0 or -1. */
static int push_end(csv_reader *r, tb_error *err)
{
    if (r->n_ends == r->cap_ends) {
        if (r->cap_ends >= (size_t)INT_MAX) {
            tb_error_at(&r->error, TB_ERR_PARSE, r->path, r->rec_line, 0, r->win.base + (int64_t)r->rec,
                        "too many fields in one record");
            return stop(r, err);
        }
        size_t ncap = r->cap_ends ? r->cap_ends * 2 : 64;
        size_t *ne = realloc(r->ends, ncap * sizeof *ne);
        if (!ne)
            return nomem(r, err);
        r->ends = ne;
        size_t *ns = realloc(r->starts, (ncap + 1) * sizeof *ns);
        if (!ns)
            return nomem(r, err);
        r->starts = ns;
        r->cap_ends = ncap;
    }
    r->ends[r->n_ends++] = r->w - r->rec;
    return 0;
}

/* Starts a new record at r->pos. */
static void reset_record(csv_reader *r)
{
    r->rec = r->w = r->pos;
    r->state = S_START;
    r->cr = 0;
    r->syntax = 0;
    r->n_ends = 0;
    r->rec_line = r->line;
}

/*
 * Finishes the current record (its line end, if any, already consumed).
 * Returns 1 with *row filled, 0 when it was a blank line (skipped), -1 on error.
 */
static int end_record(csv_reader *r, csv_row *row, tb_error *err)
{
    assert(r->state != S_QUOTED);
    if (r->cr)
        r->w--; /* the CR of a CRLF */
    if (!r->syntax && r->w == r->rec) {
        reset_record(r);
        return 0;
    }
    if (push_end(r, err))
        return -1;
    if (r->cap_fields < r->n_ends) {
        csv_field *nf = realloc(r->fields, r->cap_ends * sizeof *nf);
        if (!nf)
            return nomem(r, err);
        r->fields = nf;
        r->cap_fields = r->cap_ends;
    }
    const char *base = r->win.buf + r->rec;
    size_t start = 0;
    for (size_t i = 0; i < r->n_ends; i++) {
        r->fields[i].p = base + start;
        r->fields[i].n = r->ends[i] - start;
        start = r->ends[i];
    }
    r->starts[0] = 0;
    row->n = (int)r->n_ends;
    row->f = r->fields;
    row->start = r->starts;
    row->line = r->rec_line;
    row->offset = r->win.base + (int64_t)r->rec;
    /* the row's bytes stay put: the next record is written after them, and
     * the buffer only slides during the next call */
    reset_record(r);
    return 1;
}

/*
 * Scans the buffered bytes from r->pos. Returns 1 when a record is complete
 * (*row filled), 0 when the buffer ran out first, -1 on error.
 */
static int scan(csv_reader *r, csv_row *row, tb_error *err)
{
    char *b = r->win.buf;
    size_t i = r->pos, w = r->w, n = r->win.len;
    int st = r->state, cr = r->cr;
    while (i < n) {
        /* fast paths: runs of ordinary bytes inside a field */
        if (st == S_UNQUOTED || st == S_AFTER) {
            size_t i0 = i;
            while (i < n && !plain_stop[(unsigned char)b[i]])
                b[w++] = b[i++];
            if (i > i0)
                cr = 0;
            if (i == n)
                break;
        } else if (st == S_QUOTED) {
            while (i < n && !quoted_stop[(unsigned char)b[i]])
                b[w++] = b[i++];
            if (i == n)
                break;
        }
        char c = b[i++];
        switch (st) {
        case S_QUOTED:
            if (c == '"') {
                st = S_QUOTE;
                break;
            }
            if (c == '\n') {
                r->line++;
                r->line_start = r->win.base + (int64_t)i;
            }
            b[w++] = c;
            break;
        case S_QUOTE:
            if (c == '"') { /* "" inside quotes */
                b[w++] = '"';
                st = S_QUOTED;
                break;
            }
            st = S_AFTER;
            goto plain;
        case S_START:
            if (c == '"') {
                st = S_QUOTED;
                r->syntax = 1;
                r->q_off = r->win.base + (int64_t)(i - 1);
                r->q_line = r->line;
                r->q_col = (long)(r->q_off - r->line_start) + 1;
                break;
            }
            st = S_UNQUOTED;
            /* fall through */
        default: /* S_UNQUOTED, S_AFTER */
        plain:
            if (c == ',') {
                r->w = w;
                if (push_end(r, err))
                    return -1;
                r->starts[r->n_ends] = i - r->rec; /* the next field's first raw byte */
                r->syntax = 1;
                st = S_START;
                cr = 0;
                break;
            }
            if (c == '\n') {
                r->line++;
                r->line_start = r->win.base + (int64_t)i;
                r->pos = i;
                r->w = w;
                r->state = st;
                r->cr = cr;
                int k = end_record(r, row, err);
                if (k)
                    return k;
                w = r->w; /* a blank line: go on with the next record */
                st = S_START;
                cr = 0;
                break;
            }
            b[w++] = c;
            cr = c == '\r';
            break;
        }
    }
    r->pos = i;
    r->w = w;
    r->state = st;
    r->cr = cr;
    return 0;
}

int csv_next(csv_reader *r, csv_row *row, tb_error *err)
{
    if (r->failed)
        return stop(r, err);
    if (!r->started) {
        while (r->win.len < 3 && !r->win.eof)
            if (refill(r, err))
                return -1;
        if (r->win.len >= 3 && memcmp(r->win.buf, "\xEF\xBB\xBF", 3) == 0) {
            r->pos = 3;
            r->line_start = 3; /* columns count from after the BOM */
            reset_record(r);
        }
        r->started = 1;
    }
    for (;;) {
        if (r->pos == r->win.len) {
            if (!r->win.eof) {
                if (refill(r, err))
                    return -1;
                continue;
            }
            if (r->state == S_QUOTED) {
                tb_error_at(&r->error, TB_ERR_PARSE, r->path, r->q_line, r->q_col, r->q_off,
                            "unterminated quoted field");
                return stop(r, err);
            }
            if (r->pos == r->rec)
                return 0;
            int k = end_record(r, row, err); /* the last record has no line end */
            if (k)
                return k;
            continue; /* it was blank (a lone CR): the input ends here */
        }
        int k = scan(r, row, err);
        if (k)
            return k;
    }
}

int csv_split(csv_reader *r, const char *p, size_t n, long line, int64_t offset, csv_row *row, tb_error *err)
{
    assert(!r->src);
    if (r->win.cap < n + 1) {
        char *nb = realloc(r->win.buf, n + 1);
        if (!nb) {
            tb_error_at(err, TB_ERR_NOMEM, r->path, line, 0, offset, "out of memory");
            return -1;
        }
        r->win.buf = nb;
        r->win.cap = n + 1;
    }
    if (n)
        memcpy(r->win.buf, p, n);
    r->win.len = n;
    r->win.base = offset;
    r->failed = 0;
    r->pos = 0;
    r->line = line;
    r->line_start = offset;
    reset_record(r);
    return csv_next(r, row, err);
}

int csv_header(csv_reader *r, tb_error *err)
{
    assert(!r->have_header);
    csv_row row;
    int k = csv_next(r, &row, err);
    if (k < 0)
        return -1;
    if (k == 0) {
        tb_error_at(&r->error, TB_ERR_PARSE, r->path, 0, 0, -1, "empty CSV, expected a header row");
        return stop(r, err);
    }
    size_t total = 0;
    for (int i = 0; i < row.n; i++)
        total += csv_trim(row.f[i]).n + 1;
    free(r->names); /* only after a misuse (a second call) */
    free(r->names_text);
    r->names = malloc((size_t)row.n * sizeof *r->names);
    r->names_text = malloc(total);
    if (!r->names || !r->names_text)
        return nomem(r, err);
    char *o = r->names_text;
    for (int i = 0; i < row.n; i++) {
        csv_field t = csv_trim(row.f[i]);
        if (t.n)
            memcpy(o, t.p, t.n);
        o[t.n] = 0;
        r->names[i] = (csv_field){.p = o, .n = t.n};
        o += t.n + 1;
    }
    r->width = row.n;
    r->header_line = row.line;
    r->have_header = 1;
    return 0;
}

int csv_width(const csv_reader *r)
{
    return r->width;
}

csv_field csv_name(const csv_reader *r, int i)
{
    assert(i >= 0 && i < r->width);
    return r->names[i];
}

int64_t csv_raw_offset(const csv_reader *r)
{
    return r->src ? bytesrc_raw_offset(r->src) : 0;
}

const char *csv_path(const csv_reader *r)
{
    return r->path;
}

int csv_col(const csv_reader *r, const char *const *names)
{
    for (const char *const *a = names; *a; a++) {
        csv_field want = csv_trim((csv_field){.p = *a, .n = strlen(*a)});
        for (int i = 0; i < r->width; i++)
            if (r->names[i].n == want.n && memcmp(r->names[i].p, want.p, want.n) == 0)
                return i;
    }
    return -1;
}

int csv_require(const csv_reader *r, const char *const *names, tb_error *err)
{
    assert(names[0]);
    int i = csv_col(r, names);
    if (i < 0)
        tb_error_at(err, TB_ERR_PARSE, r->path, r->have_header ? r->header_line : 1, 0, -1,
                    "missing column '%s'", names[0] ? names[0] : "");
    return i;
}

int csv_check_width(const csv_reader *r, const csv_row *row, tb_error *err)
{
    if (row->n == r->width)
        return 0;
    tb_error_at(err, TB_ERR_PARSE, r->path, row->line, 0, row->offset,
                "row has %d field%s, the header has %d", row->n, row->n == 1 ? "" : "s", r->width);
    return -1;
}

/* ---- values ------------------------------------------------------------- */

static int blank(char c)
{
    return c == ' ' || c == '\t';
}

static int digit(char c)
{
    return c >= '0' && c <= '9';
}

csv_field csv_trim(csv_field f)
{
    while (f.n > 0 && blank(f.p[0])) {
        f.p++;
        f.n--;
    }
    while (f.n > 0 && blank(f.p[f.n - 1]))
        f.n--;
    return f;
}

int csv_is_null(csv_field f)
{
    f = csv_trim(f);
    return f.n == 0 || (f.n == 3 && memcmp(f.p, "N/A", 3) == 0);
}

int csv_us_to_ns(csv_field f, int64_t *ns, int *lost_precision)
{
    f = csv_trim(f);
    if (f.n == 0 || js_us_to_ns(f.p, f.n, ns) != 0)
        return -1;
    if (lost_precision && (memchr(f.p, 'e', f.n) || memchr(f.p, 'E', f.n)))
        *lost_precision = 1;
    return 0;
}

int csv_int(csv_field f, int64_t *out)
{
    f = csv_trim(f);
    size_t i = 0;
    int neg = 0;
    if (i < f.n && (f.p[i] == '-' || f.p[i] == '+'))
        neg = f.p[i++] == '-';
    if (i == f.n)
        return -1;
    /* accumulate in uint64 with an overflow check: any length of leading zeros is fine */
    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t u = 0;
    for (; i < f.n; i++) {
        if (!digit(f.p[i]))
            return -1;
        unsigned d = (unsigned)(f.p[i] - '0');
        if (u > (limit - d) / 10)
            return -1;
        u = u * 10 + d;
    }
    *out = neg && u ? -(int64_t)(u - 1) - 1 : (int64_t)u;
    return 0;
}

/* 1 when p[0..n) is [+-] digits [. digits] [(e|E) [+-] digits], with a digit before the exponent. */
static int real_syntax(const char *p, size_t n)
{
    size_t i = 0, digits = 0;
    if (i < n && (p[i] == '-' || p[i] == '+'))
        i++;
    for (; i < n && digit(p[i]); i++)
        digits++;
    if (i < n && p[i] == '.')
        for (i++; i < n && digit(p[i]); i++)
            digits++;
    if (digits == 0)
        return 0;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '-' || p[i] == '+'))
            i++;
        size_t e = i;
        while (i < n && digit(p[i]))
            i++;
        if (i == e)
            return 0;
    }
    return i == n;
}

int csv_real(csv_field f, double *out)
{
    f = csv_trim(f);
    char tmp[128];
    if (f.n >= sizeof tmp || !real_syntax(f.p, f.n))
        return -1;
    memcpy(tmp, f.p, f.n);
    tmp[f.n] = 0;
    char *end;
    errno = 0;
    double d = strtod(tmp, &end);
    /* ERANGE on underflow still gives a usable (tiny or zero) value; overflow gives inf */
    if (*end || !isfinite(d))
        return -1;
    *out = d;
    return 0;
}
