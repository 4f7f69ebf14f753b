/* SPDX-License-Identifier: MIT */
/*
 * topsprof.c - reader for Enflame topsprof listings (see topsprof.h).
 *
 * The file is read line by line (plain or gzip, through util/bytesrc) into
 * one buffer that only grows for a longer line, so memory is bounded by the
 * longest line (capped at 1 MiB). Each line goes through a small state
 * machine:
 *
 *   - An optional "==<pid>==" prefix (and the one space after it) is cut off;
 *     column positions are measured after it. Once the first table line (a
 *     header, class or device line) carries a prefix, lines without one are
 *     another program's output interleaved on the terminal (the agent's
 *     "[03-15-30] LOCAL: ..." lines in the manual's examples) and are skipped.
 *   - Before the first table, and after a section's footer, lines that are not
 *     table lines are topsprof's progress output and are skipped. Inside a
 *     section every line must be a row: a malformed one is an error naming
 *     FILE:LINE:COL and what was expected, never silently dropped.
 *   - "<CLASS> activities:" opens a statistics section and "<CLASS> trace:" a
 *     trace section. A table header line opens one too (its rows belong to the
 *     class line that follows, or to no class when none follows).
 *   - "Accumulate Time <t>, Total Calls <n>" and "Total Time <t>" close the
 *     section; the total is handed out at "Total Time" or when the next
 *     section (or the end of the file) shows that no "Total Time" follows.
 *
 * CSV lines (the --export-csv form) are split by csv.c (csv_split), so an
 * export is quoted exactly as the summary CSVs are; a quoted field does not
 * span lines here, since the listing is read line by line.
 *
 * Statistics rows are split on blanks: six columns, then the Name, which is
 * the rest of the line (it holds spaces: "scalar_add(float*, float*, ...)").
 * Trace rows have two fields and then two text columns, Node Name and Name,
 * that both may hold spaces, so there the header's column positions decide.
 *
 * Inferred, not documented publicly (the manual shows neither):
 *   - The trace layout is fixed width (the manual's rows line up as
 *     "%10s %10s %32s %s"): the Name starts where the header's "Name" starts,
 *     shifted by as much as the row's Duration ends later than the header's;
 *     a Node Name wider than its column pushes the Name right, and is then
 *     taken to be one word.
 *   - --print-summary-per-gcu: nvprof, whose layout topsprof follows, prints
 *     a `Device "<name> (<n>)"` line before each device's tables. That line
 *     and the plainer forms "GCU <n>:", "GCU[<n>]:" and "Device <n>:" set the
 *     device of the sections that follow.
 *   - The --export-csv columns: the header row is read and the listing's
 *     column names are mapped (Time(%), Time, Calls, Avg, Min, Max, Name;
 *     Start, Duration, Node Name, Name; also a class column Type/Class/
 *     Activity, Device/GCU and Pid). Times carry their unit ("56.61ms"), or
 *     the header ("Time(ms)") or an nvprof-style units row right after the
 *     header (",%,ms,,ms,ms,ms,") gives it. Other columns are ignored.
 *     Statistics exports seen in public files fit this map: a header
 *     "Type,Time(%),Time,Calls,Avg,Min,Max,Name" with rows
 *     "GCU activities,100.00%,276.51us,2,...,<name>", or the units in the
 *     header ("Time(us)", "Avg(us)", ...) and bare numbers in the rows. The
 *     trace export's columns have not been seen.
 *   - The counter tool's export (tcu --export-csv) continues after its
 *     "GCU activities" rows with tables of hardware counters; with a class
 *     column, a row whose class cell names no activity class ends the table
 *     (csv_table_ends) and the lines up to the next table header are skipped.
 *   - A trace header may name the unit of bare times ("Start(us)
 *     Duration(us) Name"), as newer versions are reported to print it.
 *   - nvprof's inline class ("GPU activities:  86.86% ... name") is read as a
 *     class line followed by a row.
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest/topsprof.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/csv.h"
#include "util/bytesrc.h"

#define TP_CHUNK ((size_t)64 * 1024)  /* the line buffer to start with */
#define TP_MAX_LINE ((size_t)1 << 20)  /* parse: a longer line is an error */
#define TP_SNIFF_BYTES ((size_t)64 * 1024)
#define TP_SNIFF_LINES 64
#define TP_MAX_FIELDS 64
#define TP_CLASS_MAX 48

enum { ST_OUT, ST_ROWS, ST_FOOTER, ST_CLOSED };
enum { K_NONE, K_STAT, K_TRACE };

/* CSV columns the reader knows (index into csvmap.idx). */
enum { C_PCT, C_TIME, C_CALLS, C_AVG, C_MIN, C_MAX, C_NAME, C_START, C_DUR, C_NODE, C_CLASS, C_DEVICE, C_PID,
       C_COUNT };

static const char *const col_title[C_COUNT] = {"Time(%)", "Time",     "Calls",     "Avg",  "Min",
                                               "Max",     "Name",     "Start",     "Duration", "Node Name",
                                               "Type",    "Device",   "Pid"};

/* ---- times ---------------------------------------------------------------- */

static const int64_t pow10_tab[10] = {1,      10,      100,      1000,      10000,
                                      100000, 1000000, 10000000, 100000000, 1000000000};

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t';
}

/* Scale of a unit in powers of ten of a nanosecond, or -1. */
static int unit_scale(const char *p, size_t n)
{
    if (n == 2 && p[1] == 's') {
        if (p[0] == 'n')
            return 0;
        if (p[0] == 'u')
            return 3;
        if (p[0] == 'm')
            return 6;
    }
    if (n == 1 && p[0] == 's')
        return 9;
    return -1;
}

/*
 * The time parser behind tops_time_ns; def_scale is the unit of a bare
 * number (a CSV column whose header names the unit), -1 when a unit is required.
 */
static int time_scaled(const char *p, size_t n, int def_scale, int64_t *out)
{
    const char *e = p + n, *q = p;
    const char *ib = q;
    while (q < e && is_digit(*q))
        q++;
    const char *ie = q, *fb = q, *fe = q;
    if (ie == ib)
        return TOPS_TIME_SYNTAX;
    if (q < e && *q == '.') {
        fb = ++q;
        while (q < e && is_digit(*q))
            q++;
        fe = q;
        if (fe == fb)
            return TOPS_TIME_SYNTAX;
    }
    int scale = unit_scale(q, (size_t)(e - q));
    if (scale < 0) {
        if (q != e || def_scale < 0)
            return TOPS_TIME_SYNTAX;
        scale = def_scale;
    }
    int64_t v = 0;
    for (const char *s = ib; s < ie; s++) {
        int d = *s - '0';
        if (v > (INT64_MAX - d) / 10)
            return TOPS_TIME_RANGE;
        v = v * 10 + d;
    }
    if (v > INT64_MAX / pow10_tab[scale])
        return TOPS_TIME_RANGE;
    v *= pow10_tab[scale];
    int64_t f = 0;
    int k = 0;
    for (const char *s = fb; s < fe; s++) {
        int d = *s - '0';
        if (k < scale) {
            f = f * 10 + d;
            k++;
        } else if (d != 0) {
            return TOPS_TIME_FINE;
        }
    }
    f *= pow10_tab[scale - k];
    if (v > INT64_MAX - f)
        return TOPS_TIME_RANGE;
    *out = v + f;
    return TOPS_TIME_OK;
}

int tops_time_ns(const char *p, size_t n, int64_t *out)
{
    return time_scaled(p, n, -1, out);
}

/* A count: digits only (no sign, no blanks), in int64. Returns 0 or -1. */
static int parse_count(const char *p, const char *e, int64_t *out)
{
    if (p >= e || !is_digit(*p))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (errno == ERANGE || end != e)
        return -1;
    *out = v;
    return 0;
}

/* A percentage "86.86%" (the '%' optional when need_sign is 0). Returns 0 or -1. */
static int parse_pct(const char *p, const char *e, int need_sign, double *out)
{
    if (p >= e || !is_digit(*p))
        return -1; /* also keeps strtod away from "inf", "nan" and hex */
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (errno == ERANGE)
        return -1;
    if (end < e && *end == '%')
        end++;
    else if (need_sign)
        return -1;
    if (end != e)
        return -1;
    *out = v;
    return 0;
}

/* An int: digits only, at most 9 of them. Returns 0 or -1. */
static int parse_small(const char *p, const char *e, int *out)
{
    int64_t v;
    if (e - p > 9 || parse_count(p, e, &v) != 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* ---- line reader ---------------------------------------------------------- */

typedef struct lreader {
    bytesrc *src;
    bytesrc_win win;      /* unread bytes: win.buf[pos, win.len) */
    size_t pos;
    size_t max_line;
} lreader;

static tb_status lr_open(lreader *r, const char *path, size_t max_line, tb_error *err)
{
    memset(r, 0, sizeof *r);
    r->max_line = max_line;
    if (bytesrc_win_init(&r->win, TP_CHUNK, err))
        return TB_ERR_NOMEM;
    if (!(r->src = bytesrc_open(path, err))) {
        bytesrc_win_finish(&r->win);
        return err ? err->code : TB_ERR_IO;
    }
    return TB_OK;
}

static void lr_close(lreader *r)
{
    bytesrc_close(r->src);
    bytesrc_win_finish(&r->win);
    memset(r, 0, sizeof *r);
}

/*
 * Reads the next line: 1 with *line (borrowed, NUL-terminated in place, the
 * '\n' and a '\r' before it cut off; valid until the next call), *n and *off;
 * 0 at the end; -1 with err set (a gzip stream cut short is TB_ERR_TRUNCATED).
 */
static int lr_next(lreader *r, const char *path, long lineno, char **line, size_t *n, int64_t *off,
                   tb_error *err)
{
    for (;;) {
        char *s = r->win.buf + r->pos;
        char *nl = memchr(s, '\n', r->win.len - r->pos);
        if (nl || (r->win.eof && r->win.len > r->pos)) {
            size_t k = nl ? (size_t)(nl - s) : r->win.len - r->pos;
            *off = r->win.base + (int64_t)r->pos;
            r->pos += k + (nl ? 1 : 0);
            if (k > 0 && s[k - 1] == '\r')
                k--;
            s[k] = 0; /* the '\n', or the spare byte the window keeps after its bytes */
            *line = s;
            *n = k;
            return 1;
        }
        if (r->win.eof)
            return 0;
        size_t keep = r->pos;
        r->pos = 0;
        /* room for the line, its '\n' and the spare byte */
        int rc = bytesrc_fill(r->src, &r->win, keep, r->max_line + 2, err);
        if (rc == BYTESRC_FULL) {
            tb_error_at(err, TB_ERR_PARSE, path, lineno, 0, r->win.base,
                        "line longer than %zu bytes, expected a topsprof listing", r->max_line);
            return -1;
        }
        if (rc < 0)
            return -1;
    }
}

/* ---- small text helpers ----------------------------------------------------- */

static char *skip_ws(char *p, const char *e)
{
    while (p < e && is_ws(*p))
        p++;
    return p;
}

static char *tok_end(char *p, const char *e)
{
    while (p < e && !is_ws(*p))
        p++;
    return p;
}

static char *rtrim(const char *b, char *e)
{
    while (e > b && is_ws(e[-1]))
        e--;
    return e;
}

/* Pointer just after word w at p (followed by a blank, the end, or anything when loose), or NULL. */
static char *after(char *p, const char *e, const char *w, int loose)
{
    size_t n = strlen(w);
    if ((size_t)(e - p) < n || memcmp(p, w, n) != 0)
        return NULL;
    if (!loose && p + n < e && !is_ws(p[n]))
        return NULL;
    return p + n;
}

static int span_is(const char *p, const char *e, const char *w)
{
    size_t n = strlen(w);
    return (size_t)(e - p) == n && memcmp(p, w, n) == 0;
}

static int span_is_ci(const char *p, const char *e, const char *w)
{
    size_t n = strlen(w);
    return (size_t)(e - p) == n && strncasecmp(p, w, n) == 0;
}

/* Length to quote a subject with: long names are cut in messages. */
static int qlen(const char *p, const char *e)
{
    return e - p > 120 ? 120 : (int)(e - p);
}

/* "==<pid>==" and one space (or the end of the line). Returns the content; *pid -1 when absent. */
static char *strip_prefix(char *p, const char *e, long *pid)
{
    *pid = -1;
    if (e - p < 5 || p[0] != '=' || p[1] != '=')
        return p;
    char *d = p + 2, *q = d;
    while (q < e && is_digit(*q))
        q++;
    if (q == d || q - d > 18 || e - q < 2 || q[0] != '=' || q[1] != '=')
        return p;
    char *end;
    errno = 0;
    long v = strtol(d, &end, 10);
    if (errno == ERANGE || end != q)
        return p;
    q += 2;
    if (q < e && *q != ' ')
        return p;
    if (q < e)
        q++;
    *pid = v;
    return q;
}

/*
 * "<CLASS> activities:" / "<CLASS> trace:" with CLASS one word. Returns
 * K_STAT or K_TRACE (0 otherwise), *ke the end of the class word, *rest what
 * follows the colon (an nvprof-style inline row; only for activities).
 */
static int class_line(char *b, char *e, char **ke, char **rest)
{
    char *q = b;
    while (q < e && (is_digit(*q) || (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || *q == '_' ||
                     *q == '-'))
        q++;
    if (q == b || q - b >= TP_CLASS_MAX || q >= e || *q != ' ')
        return 0;
    *ke = q;
    q = skip_ws(q, e);
    int kind = K_STAT;
    char *a = after(q, e, "activities:", 1);
    if (!a) {
        kind = K_TRACE;
        a = after(q, e, "trace:", 1);
    }
    if (!a || (a < e && !is_ws(*a)))
        return 0;
    *rest = skip_ws(a, e);
    if (kind == K_TRACE && *rest < e)
        return 0;
    return kind;
}

/* A device line of a --print-summary-per-gcu split (forms: see the file comment). */
static int device_line(char *b, char *e, int *dev)
{
    static const char nv[] = "Device \"";
    if ((size_t)(e - b) > sizeof nv - 1 && strncasecmp(b, nv, sizeof nv - 1) == 0) {
        char *a = b + sizeof nv - 1;
        if (e - a < 4 || e[-1] != '"' || e[-2] != ')')
            return 0;
        char *de = e - 2, *d = de;
        while (d > a && is_digit(d[-1]))
            d--;
        if (d == de || d == a || d[-1] != '(')
            return 0;
        return parse_small(d, de, dev) == 0;
    }
    char *a;
    if ((size_t)(e - b) >= 3 && strncasecmp(b, "GCU", 3) == 0)
        a = b + 3;
    else if ((size_t)(e - b) >= 6 && strncasecmp(b, "Device", 6) == 0)
        a = b + 6;
    else
        return 0;
    a = skip_ws(a, e);
    int br = a < e && *a == '[';
    if (br)
        a++;
    char *d = a;
    while (a < e && is_digit(*a))
        a++;
    char *de = a;
    if (de == d)
        return 0;
    if (br) {
        if (a >= e || *a != ']')
            return 0;
        a++;
    }
    a = skip_ws(a, e);
    if (a < e && *a == ':')
        a++;
    if (skip_ws(a, e) != e)
        return 0;
    return parse_small(d, de, dev) == 0;
}

/* Splits [b, e) on blanks into at most max tokens; returns the count (max + 1 when more). */
static int tokens(char *b, char *e, char **ts, char **te, int max)
{
    int n = 0;
    char *p = skip_ws(b, e);
    while (p < e) {
        if (n == max)
            return max + 1;
        ts[n] = p;
        p = tok_end(p, e);
        te[n++] = p;
        p = skip_ws(p, e);
    }
    return n;
}

/* The statistics header "[Type] Time(%) Time Calls Avg Min Max Name" (strict: no Type). */
static int stat_header(char *b, char *e, int strict)
{
    static const char *const want[] = {"Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"};
    char *ts[9], *te[9];
    int n = tokens(b, e, ts, te, 8);
    int skip = n == 8 && !strict && span_is(ts[0], te[0], "Type");
    if (n != 7 + skip)
        return 0;
    for (int i = 0; i < 7; i++)
        if (!span_is(ts[i + skip], te[i + skip], want[i]))
            return 0;
    return 1;
}

/* 1 when [p, e) is the word w, or w and a unit in parentheses ("Start(us)"): *scale gets the unit, else -1. */
static int head_word(const char *p, const char *e, const char *w, int *scale)
{
    size_t n = strlen(w);
    *scale = -1;
    if ((size_t)(e - p) < n || memcmp(p, w, n) != 0)
        return 0;
    p += n;
    if (p == e)
        return 1;
    if (e - p < 3 || *p != '(' || e[-1] != ')')
        return 0;
    *scale = unit_scale(p + 1, (size_t)(e - p - 2));
    return *scale >= 0;
}

/*
 * The trace header "Start Duration [Node Name] Name". Fills the Duration's
 * end and the Name's start as offsets from c, whether Node Name is there
 * (strict: it must be), and the unit of bare times in the Start and Duration
 * columns when the header names one ("Start(us) Duration(us) Name"), else -1.
 */
static int trace_header(char *c, char *b, char *e, int strict, size_t *dur_end, size_t *name_col, int *has_node,
                        int *start_scale, int *dur_scale)
{
    char *ts[6], *te[6];
    int n = tokens(b, e, ts, te, 5);
    if (n != 3 && n != 5)
        return 0;
    if (!head_word(ts[0], te[0], "Start", start_scale) || !head_word(ts[1], te[1], "Duration", dur_scale) ||
        !span_is(ts[n - 1], te[n - 1], "Name"))
        return 0;
    if (n == 5 && (!span_is(ts[2], te[2], "Node") || !span_is(ts[3], te[3], "Name")))
        return 0;
    if (strict && n != 5)
        return 0;
    *dur_end = (size_t)(te[1] - c);
    *name_col = (size_t)(ts[n - 1] - c);
    *has_node = n == 5;
    return 1;
}

/* ---- CSV -------------------------------------------------------------------- */

typedef struct csvmap {
    int on;
    int kind;
    int idx[C_COUNT];   /* field index, -1 when the column is absent */
    int scale[C_COUNT]; /* unit of bare numbers (from the header or a units row), -1 none */
    int ncols;          /* 1 + the largest mapped index */
    int units_next;     /* the next line may be an nvprof-style units row */
} csvmap;

typedef struct fields {
    csv_reader *csv;          /* splits the lines (csv.c's rules); made on first use */
    char *buf;
    size_t cap;
    int n;
    char *val[TP_MAX_FIELDS]; /* unquoted, NUL-terminated, in buf */
    char *src[TP_MAX_FIELDS]; /* where each field starts in the line (for error columns) */
    char *errp;               /* a split error: where and what */
    char errmsg[sizeof ((tb_error *)0)->message];
} fields;

static void fields_finish(fields *f)
{
    csv_close(f->csv);
    free(f->buf);
}

/* Splits [p, e) as a CSV record. Returns 0, -1 on a syntax error (f->errp, f->errmsg), -2 out of memory. */
static int split_line(fields *f, char *p, char *e)
{
    tb_error err;
    csv_row row;
    if (!f->csv && !(f->csv = csv_open_lines(NULL, &err)))
        return -2;
    int rc = csv_split(f->csv, p, (size_t)(e - p), 1, 0, &row, &err);
    if (rc < 0 && err.code == TB_ERR_NOMEM)
        return -2;
    if (rc < 0) {
        f->errp = p + (err.offset >= 0 ? err.offset : 0);
        snprintf(f->errmsg, sizeof f->errmsg, "%s", err.message);
        return -1;
    }
    f->n = 0;
    if (rc == 0)
        return 0;
    if (row.n > TP_MAX_FIELDS) {
        f->errp = p + row.start[TP_MAX_FIELDS];
        snprintf(f->errmsg, sizeof f->errmsg, "too many columns");
        return -1;
    }
    size_t need = 0;
    for (int i = 0; i < row.n; i++)
        need += row.f[i].n + 1;
    if (need > f->cap) {
        char *nb = realloc(f->buf, need);
        if (!nb)
            return -2;
        f->buf = nb;
        f->cap = need;
    }
    char *o = f->buf;
    for (int i = 0; i < row.n; i++) {
        memcpy(o, row.f[i].p, row.f[i].n);
        o[row.f[i].n] = 0;
        f->val[i] = o;
        f->src[i] = p + row.start[i];
        o += row.f[i].n + 1;
    }
    f->n = row.n;
    return 0;
}

/* Trims a NUL-terminated field in place; returns it. */
static char *ftrim(char *s)
{
    char *e = s + strlen(s);
    while (is_ws(*s))
        s++;
    e = rtrim(s, e);
    *e = 0;
    return s;
}

/*
 * Maps a header row. Returns K_STAT or K_TRACE with m filled, or 0 when the
 * row is not a topsprof CSV header. strict (sniffing) wants every column of
 * the listing's table; parsing wants the Name and the Time and Calls
 * (statistics) or the Start and Duration (trace).
 */
static int map_header(csvmap *m, fields *f, int strict)
{
    csvmap h;
    memset(&h, 0, sizeof h);
    for (int c = 0; c < C_COUNT; c++)
        h.idx[c] = h.scale[c] = -1;
    for (int i = 0; i < f->n; i++) {
        char *s = f->val[i];
        char *e = s + strlen(s);
        while (s < e && is_ws(*s))
            s++;
        e = rtrim(s, e);
        /* "Time(ms)", "Start (ns)", "Time(%)": the unit in parentheses */
        char *be = e, *us = NULL, *ue = NULL;
        if (e > s && e[-1] == ')') {
            char *lp = memchr(s, '(', (size_t)(e - s));
            if (lp) {
                be = rtrim(s, lp);
                us = skip_ws(lp + 1, e - 1);
                ue = rtrim(us, e - 1);
            }
        }
        int pct = us && span_is(us, ue, "%");
        int scale = us ? unit_scale(us, (size_t)(ue - us)) : -1;
        if (us && !pct && scale < 0)
            continue; /* a unit we do not know: not one of ours */
        int c = -1;
        if (span_is_ci(s, be, "Time"))
            c = pct ? C_PCT : C_TIME;
        else if (pct)
            c = -1;
        else if (span_is_ci(s, be, "Calls"))
            c = C_CALLS;
        else if (span_is_ci(s, be, "Avg") || span_is_ci(s, be, "Average"))
            c = C_AVG;
        else if (span_is_ci(s, be, "Min"))
            c = C_MIN;
        else if (span_is_ci(s, be, "Max"))
            c = C_MAX;
        else if (span_is_ci(s, be, "Name"))
            c = C_NAME;
        else if (span_is_ci(s, be, "Start"))
            c = C_START;
        else if (span_is_ci(s, be, "Duration"))
            c = C_DUR;
        else if (span_is_ci(s, be, "Node Name"))
            c = C_NODE;
        else if (span_is_ci(s, be, "Type") || span_is_ci(s, be, "Class") || span_is_ci(s, be, "Activity") ||
                 span_is_ci(s, be, "Activities"))
            c = C_CLASS;
        else if (span_is_ci(s, be, "Device") || span_is_ci(s, be, "GCU") || span_is_ci(s, be, "Device Id") ||
                 span_is_ci(s, be, "GCU Id"))
            c = C_DEVICE;
        else if (span_is_ci(s, be, "Pid"))
            c = C_PID;
        if (c < 0 || h.idx[c] >= 0)
            continue;
        if ((c == C_CALLS || c == C_NAME || c == C_NODE || c == C_CLASS || c == C_DEVICE || c == C_PID) && us)
            continue;
        h.idx[c] = i;
        h.scale[c] = scale;
        if (i + 1 > h.ncols)
            h.ncols = i + 1;
    }
#define HAS(c) (h.idx[c] >= 0)
    if (!HAS(C_NAME))
        return 0;
    if (strict) {
        if (HAS(C_PCT) && HAS(C_TIME) && HAS(C_CALLS) && HAS(C_AVG) && HAS(C_MIN) && HAS(C_MAX))
            h.kind = K_STAT;
        else if (HAS(C_START) && HAS(C_DUR) && HAS(C_NODE))
            h.kind = K_TRACE;
    } else if (HAS(C_TIME) && HAS(C_CALLS)) {
        h.kind = K_STAT;
    } else if (HAS(C_START) && HAS(C_DUR)) {
        h.kind = K_TRACE;
    }
#undef HAS
    if (!h.kind)
        return 0;
    h.on = 1;
    h.units_next = 1;
    *m = h;
    return h.kind;
}

/* ---- the parser ----------------------------------------------------------- */

typedef struct tp {
    const char *path;
    const tops_callbacks *cb;
    tb_error *err;
    long line;
    int64_t line_off;
    char *raw;           /* the current line */
    char *content;       /* after the prefix */
    long pid;            /* the current line's, -1 when unprefixed */
    int prefixed;        /* -1 until the first table line, then whether it had the prefix */
    int state, kind;
    int seen_table;
    char klass[TP_CLASS_MAX];
    int device;
    int thdr, has_node;  /* a trace header was seen: its columns */
    size_t dur_end, name_col;
    int start_scale, dur_scale; /* unit of bare Start and Duration times (from the header), -1 none */
    int pend_on;         /* a footer waits for a possible "Total Time" */
    tops_total pend;
    csvmap csv;
    fields f;
    char rowclass[TP_CLASS_MAX];
} tp;

__attribute__((format(printf, 3, 4))) static tb_status bad(tp *t, const char *at, const char *fmt, ...)
{
    char msg[sizeof t->err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    long col = at ? (long)(at - t->raw) + 1 : 0;
    int64_t off = at ? t->line_off + (at - t->raw) : t->line_off;
    return tb_error_at(t->err, TB_ERR_PARSE, t->path, t->line, col, off, "%s", msg);
}

static tb_status stopped(tp *t)
{
    if (t->err && t->err->code == TB_OK)
        tb_error_at(t->err, TB_ERR_DB, t->path, t->line, 0, t->line_off, "stopped by the caller");
    /* the caller that stopped the listing (a row it could not store) said why */
    return t->err ? t->err->code : TB_ERR_DB;
}

static tb_status time_field(tp *t, char *p, char *e, int def_scale, int64_t *out)
{
    int rc = time_scaled(p, (size_t)(e - p), def_scale, out);
    if (rc == TOPS_TIME_OK)
        return TB_OK;
    if (rc == TOPS_TIME_RANGE)
        return bad(t, p, "time out of range '%.*s'", qlen(p, e), p);
    if (rc == TOPS_TIME_FINE)
        return bad(t, p, "time finer than 1 ns '%.*s'", qlen(p, e), p);
    return bad(t, p, "bad time '%.*s'", qlen(p, e), p);
}

/* A trace row's Start or Duration: as time_field, but a time beyond int64 ns
 * is INT64_MAX, past the stored range (+-2^62 ns), which the importer skips
 * and counts as every input's such time is (an error with --strict). */
static tb_status trace_time(tp *t, char *p, char *e, int def_scale, int64_t *out)
{
    int rc = time_scaled(p, (size_t)(e - p), def_scale, out);
    if (rc == TOPS_TIME_OK)
        return TB_OK;
    if (rc == TOPS_TIME_RANGE) {
        *out = INT64_MAX;
        return TB_OK;
    }
    return time_field(t, p, e, def_scale, out); /* says what is wrong */
}

/* The first table line decides whether the file's lines carry the prefix. */
static void mark_table(tp *t)
{
    if (t->prefixed < 0)
        t->prefixed = t->pid >= 0;
}

/* Hands out a footer that waited for a "Total Time" line. */
static tb_status flush(tp *t)
{
    if (!t->pend_on)
        return TB_OK;
    t->pend_on = 0;
    if (t->cb->total && t->cb->total(t->cb->ctx, &t->pend))
        return stopped(t);
    return TB_OK;
}

static void set_class(tp *t, const char *b, const char *e)
{
    snprintf(t->klass, sizeof t->klass, "%.*s", (int)(e - b), b);
}

/* A statistics row: Time(%) Time Calls Avg Min Max, then the Name (the rest of the line). */
static tb_status stat_row(tp *t, char *b, char *e)
{
    static const char *const cols[6] = {"Time(%)", "Time", "Calls", "Avg", "Min", "Max"};
    tops_stat row = {.klass = t->klass, .device = t->device, .pid = t->pid, .line = t->line};
    int64_t *times[6] = {NULL, &row.time_ns, NULL, &row.avg_ns, &row.min_ns, &row.max_ns};
    char *p = b;
    tb_status s;
    /* column by column, so that the first bad one is reported */
    for (int i = 0; i < 6; i++) {
        p = skip_ws(p, e);
        if (p >= e)
            return bad(t, p, "missing column '%s', expected Time(%%) Time Calls Avg Min Max Name", cols[i]);
        char *q = tok_end(p, e);
        if (times[i]) {
            if ((s = time_field(t, p, q, -1, times[i])) != TB_OK)
                return s;
        } else if (i == 0) {
            if (parse_pct(p, q, 1, &row.time_pct) != 0)
                return bad(t, p, "bad percentage '%.*s'", qlen(p, q), p);
        } else if (parse_count(p, q, &row.calls) != 0) {
            return bad(t, p, "bad call count '%.*s'", qlen(p, q), p);
        }
        p = q;
    }
    char *name = skip_ws(p, e);
    if (name >= e)
        return bad(t, name, "missing column 'Name', expected Time(%%) Time Calls Avg Min Max Name");
    *e = 0; /* e is the trimmed end: a blank or the line's NUL */
    row.name = name;
    if (t->cb->stat && t->cb->stat(t->cb->ctx, &row))
        return stopped(t);
    return TB_OK;
}

/* A trace row: Start Duration, then Node Name and Name placed by the header's columns. */
static tb_status trace_row(tp *t, char *b, char *e)
{
    tops_trace row = {
        .klass = t->klass, .device = t->device, .pid = t->pid, .node_name = "", .line = t->line, .offset = t->line_off};
    tb_status s;
    char *p = b, *q = tok_end(p, e);
    if ((s = trace_time(t, p, q, t->start_scale, &row.start_ns)) != TB_OK)
        return s;
    p = skip_ws(q, e);
    if (p >= e)
        return bad(t, p, "missing column 'Duration', expected Start Duration Node Name Name");
    q = tok_end(p, e);
    if ((s = trace_time(t, p, q, t->dur_scale, &row.dur_ns)) != TB_OK)
        return s;
    char *d = q, *node = NULL, *node_e = NULL, *name;
    char *c = t->content;
    if (t->thdr && t->has_node) {
        /* where the Name starts in this row: the header's column, moved by
           as much as this row's Duration ends later (or earlier) */
        ptrdiff_t ncol = (ptrdiff_t)t->name_col + ((d - c) - (ptrdiff_t)t->dur_end);
        char *at = ncol > 0 ? c + ncol : NULL;
        if (at && at > d && at < e && is_ws(at[-1]) && !is_ws(*at)) {
            node = skip_ws(d, at);
            node_e = rtrim(node, at);
            name = at;
        } else if (at && at > d && at <= e && !is_ws(at[-1]) && skip_ws(d, e) < at) {
            /* a Node Name wider than its column pushed the Name right */
            node = skip_ws(d, e);
            node_e = tok_end(node, e);
            name = skip_ws(node_e, e);
        } else {
            name = skip_ws(d, e);
        }
    } else {
        name = skip_ws(d, e);
    }
    if (name >= e)
        return bad(t, name, "missing column 'Name', expected Start Duration Node Name Name");
    *e = 0;
    if (node && node_e > node) {
        *node_e = 0; /* a blank before the Name */
        row.node_name = node;
    }
    row.name = name;
    if (t->cb->trace && t->cb->trace(t->cb->ctx, &row))
        return stopped(t);
    return TB_OK;
}

/* "Accumulate Time <t>, Total Calls <n>" */
static tb_status footer_accumulate(tp *t, char *b, char *a, char *e)
{
    static const char expect[] = "expected 'Accumulate Time <t>, Total Calls <n>'";
    if (t->state != ST_ROWS && t->state != ST_FOOTER)
        return bad(t, b, "'Accumulate Time' outside an activities or trace section");
    tb_status s = flush(t);
    if (s != TB_OK)
        return s;
    tops_total tot = {.klass = t->klass, .device = t->device, .pid = t->pid, .from_trace = t->kind == K_TRACE,
                      .total_ns = -1, .line = t->line};
    char *p = skip_ws(a, e), *q = p;
    while (q < e && *q != ',' && !is_ws(*q))
        q++;
    if (p == q)
        return bad(t, p, "%s", expect);
    if ((s = time_field(t, p, q, -1, &tot.accumulate_ns)) != TB_OK)
        return s;
    p = skip_ws(q, e);
    if (p >= e || *p != ',')
        return bad(t, p, "%s", expect);
    p = skip_ws(p + 1, e);
    char *n = after(p, e, "Total Calls", 0);
    if (!n)
        return bad(t, p, "%s", expect);
    p = skip_ws(n, e);
    q = tok_end(p, e);
    if (p == q)
        return bad(t, p, "%s", expect);
    if (parse_count(p, q, &tot.total_calls) != 0)
        return bad(t, p, "bad call count '%.*s'", qlen(p, q), p);
    if (q < e)
        return bad(t, skip_ws(q, e), "unexpected text after the total calls '%.*s'", qlen(q, e), skip_ws(q, e));
    t->pend = tot;
    t->pend_on = 1;
    t->state = ST_FOOTER;
    return TB_OK;
}

/* "Total Time <t>" */
static tb_status footer_total(tp *t, char *b, char *a, char *e)
{
    if (t->state != ST_ROWS && t->state != ST_FOOTER)
        return bad(t, b, "'Total Time' outside an activities or trace section");
    if (!t->pend_on) {
        t->pend = (tops_total){.klass = t->klass, .device = t->device, .pid = t->pid,
                               .from_trace = t->kind == K_TRACE, .accumulate_ns = -1, .total_calls = -1,
                               .line = t->line};
    }
    char *p = skip_ws(a, e), *q = tok_end(p, e);
    if (p == q)
        return bad(t, p, "expected 'Total Time <t>'");
    tb_status s = time_field(t, p, q, -1, &t->pend.total_ns);
    if (s != TB_OK)
        return s;
    if (q < e)
        return bad(t, skip_ws(q, e), "unexpected text after the total time '%.*s'", qlen(q, e), skip_ws(q, e));
    t->pend_on = 1;
    t->state = ST_CLOSED;
    return flush(t);
}

/* "does not contain <what> data." */
static tb_status nodata_line(tp *t, char *a, char *e)
{
    if (t->state != ST_ROWS && t->state != ST_FOOTER)
        return TB_OK; /* not about a section: progress output */
    tb_status s = flush(t);
    if (s != TB_OK)
        return s;
    char *we = e;
    if (we > a && we[-1] == '.')
        we--;
    if (we - a >= 5 && memcmp(we - 5, " data", 5) == 0)
        we -= 5;
    we = rtrim(a, we);
    *we = 0;
    tops_nodata nd = {.klass = t->klass, .device = t->device, .pid = t->pid, .what = a, .line = t->line};
    t->state = ST_CLOSED;
    if (t->cb->nodata && t->cb->nodata(t->cb->ctx, &nd))
        return stopped(t);
    return TB_OK;
}

/* The value of CSV column c, trimmed (borrowed), or NULL when the CSV has no such column. */
static char *csv_val(tp *t, int c)
{
    int i = t->csv.idx[c];
    return i >= 0 && i < t->f.n ? ftrim(t->f.val[i]) : NULL;
}

static tb_status csv_time(tp *t, int c, int64_t *out)
{
    char *v = csv_val(t, c);
    if (!v) {
        *out = -1;
        return TB_OK;
    }
    int64_t ns;
    int rc = time_scaled(v, strlen(v), t->csv.scale[c], &ns);
    char *at = t->f.src[t->csv.idx[c]];
    at = skip_ws(at, at + strlen(at));
    if (rc == TOPS_TIME_RANGE && (c == C_START || c == C_DUR)) {
        *out = INT64_MAX; /* a trace row's time beyond int64 ns: see trace_time */
        return TB_OK;
    }
    if (rc == TOPS_TIME_RANGE)
        return bad(t, at, "time out of range '%s' in column '%s'", v, col_title[c]);
    if (rc == TOPS_TIME_FINE)
        return bad(t, at, "time finer than 1 ns '%s' in column '%s'", v, col_title[c]);
    if (rc != TOPS_TIME_OK)
        return bad(t, at, "bad time '%s' in column '%s'%s", v, col_title[c],
                   t->csv.scale[c] < 0 && *v && is_digit(v[strlen(v) - 1]) ? " (no unit in the value or header)"
                                                                           : "");
    *out = ns;
    return TB_OK;
}

/*
 * 1 when a CSV row ends the export's table: with a class column, a row whose
 * class cell names no activity class ("<CLASS> activities", "<CLASS> trace"
 * or one word), or is empty in a row narrower than the header. Enflame's
 * tcu --export-csv follows its "GCU activities" rows with tables of hardware
 * counters (",Kernel Name,Invocations", "Type,Die,SIP,...", "GCU Metric,...")
 * that are not topsprof tables.
 */
static int csv_table_ends(tp *t)
{
    int i = t->csv.idx[C_CLASS];
    if (i < 0)
        return 0;
    if (i >= t->f.n)
        return 1;
    char *v = ftrim(t->f.val[i]);
    size_t n = strlen(v);
    if (n == 0)
        return t->f.n < t->csv.ncols;
    if (v[n - 1] == ':')
        n--;
    if ((n > 11 && memcmp(v + n - 11, " activities", 11) == 0) || (n > 6 && memcmp(v + n - 6, " trace", 6) == 0))
        return 0;
    return memchr(v, ' ', n) != NULL;
}

/* A CSV data row, through the header's map. */
static tb_status export_row(tp *t)
{
    if (t->f.n < t->csv.ncols)
        return bad(t, t->content, "expected %d columns as in the header, got %d", t->csv.ncols, t->f.n);
    tb_status s;
    const char *klass = t->klass;
    char *v = csv_val(t, C_CLASS);
    if (v && *v) {
        char *e = v + strlen(v);
        if (e > v && e[-1] == ':')
            e--;
        if (e - v > 11 && memcmp(e - 11, " activities", 11) == 0)
            e -= 11;
        else if (e - v > 6 && memcmp(e - 6, " trace", 6) == 0)
            e -= 6;
        snprintf(t->rowclass, sizeof t->rowclass, "%.*s", (int)(e - v), v);
        klass = t->rowclass;
    } else if (!*klass && t->csv.kind == K_TRACE) {
        klass = "GCU"; /* the only trace topsprof prints */
    }
    int device = t->device;
    if ((v = csv_val(t, C_DEVICE)) && *v && parse_small(v, v + strlen(v), &device) != 0)
        return bad(t, t->f.src[t->csv.idx[C_DEVICE]], "bad device '%s'", v);
    long pid = t->pid;
    int64_t p64;
    if ((v = csv_val(t, C_PID)) && *v) {
        if (parse_count(v, v + strlen(v), &p64) != 0 || p64 > 0x7fffffff)
            return bad(t, t->f.src[t->csv.idx[C_PID]], "bad pid '%s'", v);
        pid = (long)p64;
    }
    char *name = csv_val(t, C_NAME);
    if (!*name)
        return bad(t, t->f.src[t->csv.idx[C_NAME]], "missing value in column 'Name'");
    t->state = ST_ROWS;
    if (t->csv.kind == K_TRACE) {
        tops_trace row = {.klass = klass, .device = device, .pid = pid, .node_name = "", .name = name,
                          .line = t->line, .offset = t->line_off};
        if ((s = csv_time(t, C_START, &row.start_ns)) != TB_OK || (s = csv_time(t, C_DUR, &row.dur_ns)) != TB_OK)
            return s;
        if ((v = csv_val(t, C_NODE)))
            row.node_name = v;
        if (t->cb->trace && t->cb->trace(t->cb->ctx, &row))
            return stopped(t);
        return TB_OK;
    }
    tops_stat row = {.klass = klass, .device = device, .pid = pid, .time_pct = -1, .calls = -1, .name = name,
                     .line = t->line};
    if ((v = csv_val(t, C_PCT)) && parse_pct(v, v + strlen(v), 0, &row.time_pct) != 0)
        return bad(t, t->f.src[t->csv.idx[C_PCT]], "bad percentage '%s'", v);
    if ((s = csv_time(t, C_TIME, &row.time_ns)) != TB_OK || (s = csv_time(t, C_AVG, &row.avg_ns)) != TB_OK ||
        (s = csv_time(t, C_MIN, &row.min_ns)) != TB_OK || (s = csv_time(t, C_MAX, &row.max_ns)) != TB_OK)
        return s;
    if ((v = csv_val(t, C_CALLS)) && parse_count(v, v + strlen(v), &row.calls) != 0)
        return bad(t, t->f.src[t->csv.idx[C_CALLS]], "bad call count '%s'", v);
    if (t->cb->stat && t->cb->stat(t->cb->ctx, &row))
        return stopped(t);
    return TB_OK;
}

/* An nvprof-style units row right after the header (",%,ms,,ms,ms,ms,"): applies it and returns 1. */
static int csv_units(tp *t)
{
    int any = 0;
    for (int i = 0; i < t->f.n; i++) {
        char *v = ftrim(t->f.val[i]);
        if (!*v)
            continue;
        if (strcmp(v, "%") != 0 && unit_scale(v, strlen(v)) < 0)
            return 0;
        any = 1;
    }
    if (!any)
        return 0;
    for (int c = 0; c < C_COUNT; c++) {
        int i = t->csv.idx[c];
        if (i >= 0 && i < t->f.n && c != C_PCT) {
            int sc = unit_scale(t->f.val[i], strlen(t->f.val[i]));
            if (sc >= 0)
                t->csv.scale[c] = sc;
        }
    }
    return 1;
}

static tb_status split_or_fail(tp *t, char *b, char *e, int *ok)
{
    int rc = split_line(&t->f, b, e);
    *ok = rc == 0;
    if (rc == -2)
        return tb_error_set(t->err, TB_ERR_NOMEM, "out of memory");
    if (rc == -1 && t->csv.on)
        return bad(t, t->f.errp, "%s", t->f.errmsg);
    return TB_OK;
}

/* A line that starts a table (or a device's section): the table before it
 * ends, marked and flushed. */
static tb_status end_table(tp *t)
{
    mark_table(t);
    return flush(t);
}

/* A listing's table header, which has no commas: statistics or trace
 * columns. 1 when the line is one (*s: how starting its table went). */
static int listing_header(tp *t, char *c, char *b, char *te, tb_status *s)
{
    size_t dur_end, name_col;
    int has_node, is_trace = 0, start_scale = -1, dur_scale = -1;
    if (!stat_header(b, te, 0) &&
        !(is_trace = trace_header(c, b, te, 0, &dur_end, &name_col, &has_node, &start_scale, &dur_scale)))
        return 0;
    if ((*s = end_table(t)) != TB_OK)
        return 1;
    t->csv.on = 0;
    t->kind = is_trace ? K_TRACE : K_STAT;
    /* until a class line says otherwise: trace mode only has "GCU trace:" */
    snprintf(t->klass, sizeof t->klass, "%s", is_trace ? "GCU" : "");
    if (is_trace) {
        t->thdr = 1;
        t->dur_end = dur_end;
        t->name_col = name_col;
        t->start_scale = start_scale;
        t->dur_scale = dur_scale;
        t->has_node = has_node;
    }
    t->state = ST_ROWS;
    t->seen_table = 1;
    return 1;
}

/* A line with commas that is no listing row: a CSV export's header starts
 * its table; inside one, the units line, the table's end or a row. 1 when
 * the line was taken (*s: its status); 0 to read it as a listing's line. */
static int csv_line(tp *t, char *b, char *te, tb_status *s)
{
    int ok;
    if ((*s = split_or_fail(t, b, te, &ok)) != TB_OK)
        return 1;
    csvmap m;
    if (ok && map_header(&m, &t->f, 0)) {
        if ((*s = end_table(t)) != TB_OK)
            return 1;
        t->csv = m;
        t->kind = m.kind;
        t->state = ST_ROWS;
        t->seen_table = 1;
        return 1;
    }
    if (!t->csv.on)
        return 0;
    int units = t->csv.units_next;
    t->csv.units_next = 0;
    if (units && csv_units(t))
        return 1;
    if ((*s = flush(t)) != TB_OK)
        return 1;
    if (csv_table_ends(t)) {
        /* what follows is not ours, up to the next table header */
        t->csv.on = 0;
        t->state = ST_OUT;
        return 1;
    }
    *s = export_row(t);
    return 1;
}

static tb_status do_line(tp *t, char *raw, size_t n)
{
    char *e = raw + n;
    long pid;
    char *c = strip_prefix(raw, e, &pid);
    t->raw = raw;
    t->content = c;
    t->pid = pid;
    if (pid < 0 && t->prefixed == 1)
        return TB_OK; /* another program's output between topsprof's lines */
    if (pid > 0x7fffffff) /* as a CSV's Pid column: no process has it, and globalTid could not hold it */
        return bad(t, raw + 2, "bad pid '%ld' in the line's '==<pid>==' prefix", pid);
    char *b = skip_ws(c, e), *te = rtrim(b, e);
    if (b == te)
        return TB_OK;
    tb_status s;
    char *ke, *rest, *a;
    int dev, kind;

    if (device_line(b, te, &dev)) {
        if ((s = end_table(t)) != TB_OK)
            return s;
        t->device = dev;
        t->state = ST_OUT;
        return TB_OK;
    }
    if ((kind = class_line(b, te, &ke, &rest)) != K_NONE) {
        if ((s = end_table(t)) != TB_OK)
            return s;
        set_class(t, b, ke);
        t->kind = kind;
        t->state = ST_ROWS;
        t->seen_table = 1;
        if (rest < te && !t->csv.on)
            return stat_row(t, rest, te); /* nvprof's inline class */
        return TB_OK;
    }
    if ((a = after(b, te, "does not contain", 0)))
        return nodata_line(t, skip_ws(a, te), te);
    if ((a = after(b, te, "Accumulate Time", 0)))
        return footer_accumulate(t, b, a, te);
    if ((a = after(b, te, "Total Time", 0)))
        return footer_total(t, b, a, te);

    int comma = memchr(b, ',', (size_t)(te - b)) != NULL;
    if (!comma && listing_header(t, c, b, te, &s))
        return s;
    /* a CSV header starts with a letter or a quote, a listing's row with a digit */
    if (comma && (t->csv.on || t->state != ST_ROWS || !is_digit(*b))) {
        if (csv_line(t, b, te, &s))
            return s;
    } else if (t->csv.on) {
        /* a CSV row of a single column cannot hold the Name and a time */
        return bad(t, b, "expected %d columns as in the header, got 1", t->csv.ncols);
    }
    switch (t->state) {
    case ST_ROWS:
        return t->kind == K_TRACE ? trace_row(t, b, te) : stat_row(t, b, te);
    case ST_FOOTER:
        t->state = ST_CLOSED; /* the section ended without a "Total Time" */
        return flush(t);
    default:
        return TB_OK; /* progress output */
    }
}

tb_status tops_parse(const char *path, const tops_callbacks *cb, tb_error *err)
{
    static const tops_callbacks none;
    tb_error_clear(err);
    tp t;
    memset(&t, 0, sizeof t);
    t.path = path;
    t.cb = cb ? cb : &none;
    t.err = err;
    t.prefixed = -1;
    t.device = -1;
    t.start_scale = t.dur_scale = -1;
    t.state = ST_OUT;
    for (int c = 0; c < C_COUNT; c++)
        t.csv.idx[c] = t.csv.scale[c] = -1;

    lreader r;
    tb_status s = lr_open(&r, path, TP_MAX_LINE, err);
    if (s != TB_OK)
        return s;
    for (;;) {
        char *line;
        size_t n;
        int64_t off;
        int rc = lr_next(&r, path, t.line + 1, &line, &n, &off, err);
        if (rc < 0) {
            s = err ? err->code : TB_ERR_IO;
            goto done;
        }
        if (rc == 0)
            break;
        t.line++;
        t.line_off = off;
        if (t.line == 1 && n >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
            line += 3;
            n -= 3;
            t.line_off += 3;
        }
        if ((s = do_line(&t, line, n)) != TB_OK)
            goto done;
    }
    if ((s = flush(&t)) != TB_OK)
        goto done;
    if (!t.seen_table)
        s = tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1,
                        "no topsprof table found, expected a 'GCU activities:' or 'GCU trace:' section or its CSV "
                        "header");
done:
    lr_close(&r);
    fields_finish(&t.f);
    return s;
}

/* ---- sniffing --------------------------------------------------------------- */

static int sniff_line(fields *f, char *raw, size_t n)
{
    char *e = raw + n;
    long pid;
    char *c = strip_prefix(raw, e, &pid);
    char *b = skip_ws(c, e), *te = rtrim(b, e);
    char *ke, *rest;
    size_t dur_end, name_col;
    int has_node, start_scale, dur_scale;
    if (b == te)
        return 0;
    if (pid >= 0 && after(b, te, "TOPSPROF", 0))
        return 1;
    if (class_line(b, te, &ke, &rest) && rest == te &&
        (span_is(b, ke, "GCU") || span_is(b, ke, "CPU") || span_is(b, ke, "RUNTIME")))
        return 1;
    if (stat_header(b, te, 1) || trace_header(c, b, te, 1, &dur_end, &name_col, &has_node, &start_scale, &dur_scale))
        return 1;
    if (memchr(b, ',', (size_t)(te - b)) && split_line(f, b, te) == 0) {
        csvmap m;
        return map_header(&m, f, 1) != 0;
    }
    return 0;
}

int tops_is_listing(const char *path)
{
    lreader r;
    if (lr_open(&r, path, TP_SNIFF_BYTES, NULL) != TB_OK)
        return 0;
    fields f;
    memset(&f, 0, sizeof f);
    int yes = 0;
    for (long i = 1; i <= TP_SNIFF_LINES && !yes; i++) {
        char *line;
        size_t n;
        int64_t off;
        if (lr_next(&r, path, i, &line, &n, &off, NULL) != 1 || off >= (int64_t)TP_SNIFF_BYTES)
            break;
        if (i == 1 && n >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
            line += 3;
            n -= 3;
        }
        yes = sniff_line(&f, line, n);
    }
    fields_finish(&f);
    lr_close(&r);
    return yes;
}
