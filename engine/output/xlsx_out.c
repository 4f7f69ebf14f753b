/* SPDX-License-Identifier: MIT */
/*
 * xlsx_out.c - a run's XLSX workbook: an About sheet, then a sheet per report.
 *
 * The workbook is written by libxlsxwriter in its constant-memory mode: each
 * sheet's rows go to a temporary file as they come (in the workbook's folder
 * unless told otherwise), so a report of a million rows costs a few MB of
 * memory, not one object per cell. Rows must then arrive in order, which a
 * sink's rows do. What is only known at the end (column widths from the
 * content, the autofilter's last row, a chart's ranges, the About sheet's
 * contents list and notes) is set when a sheet's sink finishes or at commit: libxlsxwriter
 * writes those parts when it assembles the file. A line chart with
 * series_by (chart_groups.c) draws an x-y series per value of its column over
 * that value's own rows, which must come together; a chart of ratios has
 * its value axis around 1 (svg_ratio_axis), crossed at 1 by the categories.
 *
 * Cells: numbers are stored as numbers with a format from the column's type:
 * integers and byte counts `#,##0`; a time converted to a unit (TB_CELL_INT
 * with scale s) `#,##0.` and s zeros, a real time `#,##0.000`; a ratio
 * (TB_COL_RATIO_PCT, 0..100) is stored divided by 100 with `0.00%`, so that
 * Excel shows and computes it as a percentage; a column's own number format
 * or width from the spec wins (a ratio under an own format without '%' is
 * stored as written, 0..100).
 * Excel keeps 15 significant digits, so nanosecond timestamps lose their
 * last digits here (CSV and JSON keep them). NaN and infinities are written
 * as the text the CSV writer uses. Text is made valid UTF-8 (U+FFFD for
 * invalid bytes, NUL and the control characters XML cannot hold) and cut at
 * Excel's 32,767 characters; the About sheet's notes count the cut cells.
 * A sheet holds 1,048,576 rows, header included; a longer report goes on in
 * "<name> (2)", "<name> (3)", ..., each with its header, and the notes say so.
 *
 * libxlsxwriter reports problems both by return code and by printing
 * warnings on stderr, which a library must not do to its caller. So every
 * input is checked here first (sheet names, ranges, string lengths) so that
 * it never needs to warn, every lxw_error is turned into a tb_error naming
 * the workbook and sheet, and around the calls that may still print
 * (workbook_new_opt, workbook_add_worksheet, the chart calls,
 * worksheet_conditional_format_range, workbook_close) descriptor 2 is
 * pointed at a temporary file (dup/dup2, restored after the call): any
 * text found there becomes the error message. The capture is not
 * thread-safe; the report runner is one thread.
 *
 * The file is written under a temporary name beside its final name (afile,
 * atomic.c) and renamed into place only by a successful commit; any failure
 * or a destroy without commit leaves nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xlsxwriter.h>

#include "output/output.h"
#include "output/svg.h"
#include "tracebook/error.h"
#include "tracebook/output.h"

#define MAX_WIDTH 60          /* automatic column widths stop here (characters) */
#define MAX_CHARS 32767       /* Excel's longest cell text */
#define ABOUT "About"
#define ABOUT_CHARS 110       /* characters a line of the About sheet's 100-wide value column holds
                                 (100 digits; text is narrower) */

struct xlsx_book {
    lxw_workbook *wb;
    afile af;
    char *path;               /* the final path (owned), for messages */
    lxw_worksheet *about;
    lxw_row_t about_row;
    lxw_format *bold, *wrap, *link, *f_int, *f_pct, *f_time, *f_real, *f_scaled[10];
    char **names;             /* sheet names in use, About included */
    size_t n_names;
    char **notes;
    size_t n_notes;
    struct reserved {
        char *key;
        lxw_worksheet *ws;
        const char *name;     /* in names */
        int used;
    } *reserved;
    size_t n_reserved;
    size_t rows_per_sheet;
    int contents;             /* list the sheets on About at commit */
    int open_sinks;           /* sinks made and not finished */
    int closed;               /* workbook_close was called (wb freed) */
    int committed;
};

typedef struct part {
    lxw_worksheet *ws;
    char *name;
    lxw_row_t rows;           /* rows written, header included */
} part;

typedef struct xsheet {
    out_sink head;
    xlsx_book *b;
    xlsx_sheet_options so;
    const tb_sink_column *cols;
    size_t nc;
    lxw_format **fmt;         /* per column, NULL = General */
    int *ratio;               /* per column: divide by 100 */
    int *timed;               /* per column: a time (reals get #,##0.000) */
    unsigned *width;          /* per column: the widest text so far (characters) */
    part *parts;
    size_t n_parts;
    uint64_t rows;            /* data rows */
    uint64_t clipped;
    char *buf;                /* cleaned text of one cell */
    size_t cap;
    long by_col;              /* the chart's series_by column, or -1 */
    chart_groups groups;      /* its values' rows in the first part */
    int cats_text;            /* a series_by chart: a category of the first part is not a number */
    double lo, hi;            /* a ratio chart: the range of the first part's finite values (lo > hi: none) */
    int begun, finished;
} xsheet;

/* ---- stderr capture ---------------------------------------------------------- */

typedef struct capture {
    FILE *tmp;
    int saved;
} capture;

/* Points descriptor 2 at a temporary file; on failure nothing is captured. */
static void cap_begin(capture *c)
{
    c->saved = -1;
    fflush(stderr);
    c->tmp = tmpfile();
    if (!c->tmp)
        return;
    c->saved = dup(STDERR_FILENO);
    if (c->saved < 0 || dup2(fileno(c->tmp), STDERR_FILENO) < 0) {
        if (c->saved >= 0)
            close(c->saved);
        c->saved = -1;
        fclose(c->tmp);
        c->tmp = NULL;
    }
}

/* Restores descriptor 2; copies what was printed (first line, trimmed) into msg. Returns its length. */
static size_t cap_end(capture *c, char *msg, size_t size)
{
    size_t n = 0;
    msg[0] = 0;
    if (!c->tmp)
        return 0;
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    rewind(c->tmp);
    n = fread(msg, 1, size - 1, c->tmp);
    msg[n] = 0;
    fclose(c->tmp);
    c->tmp = NULL;
    /* libxlsxwriter prints "[WARNING]: func(): text\n" */
    char *nl = strchr(msg, '\n');
    if (nl)
        *nl = 0;
    const char *p = msg;
    if (!strncmp(p, "[WARNING]: ", 11))
        p += 11;
    else if (!strncmp(p, "[ERROR]: ", 9))
        p += 9;
    else if (!strncmp(p, "[ERROR] ", 8))
        p += 8;
    n = strlen(p);
    memmove(msg, p, n + 1);
    return n;
}

/* ---- names ------------------------------------------------------------------- */

static int same_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z')
            x += 32;
        if (y >= 'A' && y <= 'Z')
            y += 32;
        if (x != y)
            return 0;
    }
    return *a == *b;
}

/* Copies the valid part of want into out, at most max UTF-16 units; returns the bytes. */
static size_t clean_name(const char *want, char *out, size_t max)
{
    size_t o = 0, units = 0, n = strlen(want);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)want[i];
        size_t len = 1;
        int ok = c >= 0x80 ? utf8_seq(want + i, n - i, &len) : 1;
        size_t u = ok && len == 4 ? 2 : 1;
        if (units + u > max)
            break;
        if (!ok || c < 0x20 || c == 0x7f || strchr("[]:*?/\\", c)) {
            out[o++] = '_';
        } else {
            memcpy(out + o, want + i, len);
            o += len;
        }
        units += u;
        i += len;
    }
    out[o] = 0;
    return o;
}

/* Drops leading and trailing apostrophes of s (in place). */
static void trim_apostrophes(char *s)
{
    size_t n = strlen(s), a = 0;
    while (a < n && s[a] == '\'')
        a++;
    while (n > a && s[n - 1] == '\'')
        n--;
    memmove(s, s + a, n - a);
    s[n - a] = 0;
}

static int name_used(const char *s, const char *const *used, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (same_ci(s, used[i]))
            return 1;
    return 0;
}

void xlsx_sheet_name(const char *want, const char *const *used, size_t n, char *out)
{
    char tmp[XLSX_SHEET_NAME_MAX];
    /* apostrophes dropped first, then the cut: a cut may end in one again */
    clean_name(want ? want : "", tmp, 64);
    trim_apostrophes(tmp);
    clean_name(tmp, out, LXW_SHEETNAME_MAX);
    trim_apostrophes(out);
    if (!*out)
        memcpy(out, "Sheet", 6);
    if (same_ci(out, "History"))
        memcpy(out, "History_", 9);
    if (!name_used(out, used, n))
        return;
    char base[XLSX_SHEET_NAME_MAX];
    memcpy(base, out, strlen(out) + 1);
    for (unsigned k = 2;; k++) {
        char suffix[16];
        int sl = snprintf(suffix, sizeof suffix, " (%u)", k);
        size_t b = clean_name(base, out, LXW_SHEETNAME_MAX - (size_t)sl);
        trim_apostrophes(out);
        b = strlen(out);
        memcpy(out + b, suffix, (size_t)sl + 1);
        if (!name_used(out, used, n))
            return;
    }
}

/* ---- the book ---------------------------------------------------------------- */

static tb_status nomem(xlsx_book *b, tb_error *err)
{
    return tb_error_at(err, TB_ERR_NOMEM, b->path, 0, 0, -1, "out of memory");
}

/* An lxw_error (or a captured warning) as a tb_error naming the workbook and sheet. */
static tb_status lxw_fail(xlsx_book *b, const char *sheet, lxw_error e, const char *printed, tb_error *err)
{
    const char *why = printed && *printed ? printed : lxw_strerror(e);
    /* files and zip: the disk; anything else is input this file should have checked */
    tb_status code = e == LXW_ERROR_MEMORY_MALLOC_FAILED ? TB_ERR_NOMEM
                     : e >= LXW_ERROR_CREATING_XLSX_FILE && e <= LXW_ERROR_ZIP_CLOSE ? TB_ERR_IO
                                                                                     : TB_ERR_INTERNAL;
    if (sheet)
        return tb_error_at(err, code, b->path, 0, 0, -1, "sheet '%s': %s", sheet, why);
    return tb_error_at(err, code, b->path, 0, 0, -1, "%s", why);
}

static int add_name(xlsx_book *b, const char *name)
{
    char **v = realloc(b->names, (b->n_names + 1) * sizeof *v);
    if (!v)
        return -1;
    b->names = v;
    if (!(v[b->n_names] = strdup(name)))
        return -1;
    b->n_names++;
    return 0;
}

/* Adds a worksheet named from want (made valid and unique); *name gets the name used (owned by b). */
static tb_status add_sheet(xlsx_book *b, const char *want, lxw_worksheet **ws, const char **name, tb_error *err)
{
    char nm[XLSX_SHEET_NAME_MAX], msg[512];
    xlsx_sheet_name(want, (const char *const *)b->names, b->n_names, nm);
    if (add_name(b, nm))
        return nomem(b, err);
    capture c;
    cap_begin(&c);
    *ws = workbook_add_worksheet(b->wb, nm);
    size_t printed = cap_end(&c, msg, sizeof msg);
    if (!*ws || printed)
        return lxw_fail(b, nm, LXW_ERROR_PARAMETER_VALIDATION, printed ? msg : "cannot add the sheet", err);
    *name = b->names[b->n_names - 1];
    /* printed in landscape, one page wide (as many pages down as it takes) */
    worksheet_set_landscape(*ws);
    worksheet_fit_to_pages(*ws, 1, 0);
    return TB_OK;
}

static lxw_format *num_format(xlsx_book *b, const char *fmt)
{
    lxw_format *f = workbook_add_format(b->wb);
    if (f)
        format_set_num_format(f, fmt);
    return f;
}

static tb_status about_row(xlsx_book *b, const char *key, const char *value, tb_error *err);

tb_status xlsx_create(const char *path, const xlsx_options *opt, xlsx_book **out, tb_error *err)
{
    static const xlsx_options none = {0};
    char msg[512], *dir = NULL;
    tb_status st;
    if (!opt)
        opt = &none;
    *out = NULL;
    xlsx_book *b = calloc(1, sizeof *b);
    if (!b)
        return tb_error_at(err, TB_ERR_NOMEM, path, 0, 0, -1, "out of memory");
    if (!(b->path = strdup(path))) {
        st = nomem(b, err);
        goto fail;
    }
    b->rows_per_sheet = opt->rows_per_sheet ? opt->rows_per_sheet : LXW_ROW_MAX;
    b->contents = opt->contents;
    if (b->rows_per_sheet < 2 || b->rows_per_sheet > LXW_ROW_MAX)
        b->rows_per_sheet = LXW_ROW_MAX;
    /* the temporary name is made (with an output's permissions) and closed;
     * libxlsxwriter writes that file when the book closes */
    if ((st = afile_open(path, &b->af, err)))
        goto fail;
    if (b->af.direct) {
        st = tb_error_at(err, TB_ERR_USAGE, path, 0, 0, -1, "a workbook must be written to a file");
        goto fail;
    }
    if ((st = afile_close(&b->af, err)))
        goto fail;
    if (!opt->tmpdir) {
        const char *slash = strrchr(path, '/');
        dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
        if (!dir) {
            st = nomem(b, err);
            goto fail;
        }
    }
    lxw_workbook_options wo = {.constant_memory = 1, .tmpdir = (char *)(opt->tmpdir ? opt->tmpdir : dir),
                               .use_zip64 = 1};
    capture c;
    cap_begin(&c);
    b->wb = workbook_new_opt(b->af.tmp, &wo);
    size_t printed = cap_end(&c, msg, sizeof msg);
    free(dir);
    dir = NULL;
    if (!b->wb || printed) {
        st = lxw_fail(b, NULL, LXW_ERROR_CREATING_XLSX_FILE, printed ? msg : "cannot create the workbook", err);
        goto fail;
    }
    lxw_doc_properties props = {.title = (char *)"tracebook report", .created = (time_t)opt->created};
    lxw_error e = workbook_set_properties(b->wb, &props);
    if (e) {
        st = lxw_fail(b, NULL, e, NULL, err);
        goto fail;
    }
    b->bold = workbook_add_format(b->wb);
    b->wrap = workbook_add_format(b->wb);
    b->f_int = num_format(b, "#,##0");
    b->f_pct = num_format(b, "0.00%");
    b->f_time = num_format(b, "#,##0.000");
    b->f_real = num_format(b, "#,##0.0000"); /* a real of no type (a ratio new / base): every number has a format */
    if (!b->bold || !b->wrap || !b->f_int || !b->f_pct || !b->f_time || !b->f_real) {
        st = nomem(b, err);
        goto fail;
    }
    format_set_bold(b->bold);
    format_set_text_wrap(b->wrap);
    format_set_align(b->wrap, LXW_ALIGN_VERTICAL_TOP);
    const char *name;
    if ((st = add_sheet(b, ABOUT, &b->about, &name, err)))
        goto fail;
    if ((e = worksheet_set_column(b->about, 0, 0, 24, b->bold)) ||
        (e = worksheet_set_column(b->about, 1, 1, 100, b->wrap))) {
        st = lxw_fail(b, ABOUT, e, NULL, err);
        goto fail;
    }
    for (size_t i = 0; i < opt->n_about; i++)
        if ((st = about_row(b, opt->about[i].key, opt->about[i].value, err)))
            goto fail;
    *out = b;
    return TB_OK;
fail:
    free(dir);
    xlsx_destroy(b);
    return st;
}

size_t xlsx_sheet_count(const xlsx_book *b)
{
    return b->n_names;
}

tb_status xlsx_note(xlsx_book *b, const char *text, tb_error *err)
{
    char **v = realloc(b->notes, (b->n_notes + 1) * sizeof *v);
    if (!v)
        return nomem(b, err);
    b->notes = v;
    if (!(v[b->n_notes] = strdup(text)))
        return nomem(b, err);
    b->n_notes++;
    return TB_OK;
}

/* Makes text a cell's content in *buf: valid UTF-8 without NUL or control
 * characters XML cannot hold, at most MAX_CHARS characters. Returns the
 * characters kept; *cut is set when text was longer. Text of printable
 * ASCII alone (names, most of what reports hold) is copied as it is, one
 * byte a character, after one look at its bytes. */
static int clean_text(const char *s, size_t n, char **buf, size_t *cap, size_t *chars, int *cut)
{
    size_t plain = 0;
    if (n <= MAX_CHARS)
        while (plain < n && (unsigned char)s[plain] - 0x20u < 0x60u) /* 0x20..0x7F */
            plain++;
    if (plain == n) {
        if (*cap < n + 1) {
            char *p = realloc(*buf, n + 1);
            if (!p)
                return -1;
            *buf = p;
            *cap = n + 1;
        }
        memcpy(*buf, s, n);
        (*buf)[n] = 0;
        *chars = n;
        *cut = 0;
        return 0;
    }
    size_t need = n * 3 + 1; /* a bad byte becomes 3 bytes */
    if (need > (size_t)MAX_CHARS * 4 + 1)
        need = (size_t)MAX_CHARS * 4 + 1;
    if (*cap < need) {
        char *p = realloc(*buf, need);
        if (!p)
            return -1;
        *buf = p;
        *cap = need;
    }
    char *o = *buf;
    size_t k = 0, count = 0;
    *cut = 0;
    for (size_t i = 0; i < n;) {
        if (count == MAX_CHARS) {
            *cut = 1;
            break;
        }
        unsigned char c = (unsigned char)s[i];
        size_t len = 1;
        if (c < 0x80) {
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                memcpy(o + k, "\xEF\xBF\xBD", 3);
                k += 3;
            } else {
                o[k++] = (char)c;
            }
        } else if (utf8_seq(s + i, n - i, &len)) {
            memcpy(o + k, s + i, len);
            k += len;
        } else {
            memcpy(o + k, "\xEF\xBF\xBD", 3);
            k += 3;
        }
        i += len;
        count++;
    }
    o[k] = 0;
    *chars = count;
    return 0;
}

static tb_status about_row(xlsx_book *b, const char *key, const char *value, tb_error *err)
{
    if (b->about_row >= LXW_ROW_MAX)
        return TB_OK; /* notes past a sheet's rows are dropped; they would be millions */
    char *kbuf = NULL, *vbuf = NULL;
    size_t kcap = 0, vcap = 0, chars;
    int cut;
    lxw_error e = LXW_NO_ERROR;
    if (clean_text(key, strlen(key), &kbuf, &kcap, &chars, &cut) ||
        clean_text(value, strlen(value), &vbuf, &vcap, &chars, &cut)) {
        free(kbuf);
        free(vbuf);
        return nomem(b, err);
    }
    /* a value wider than its column wraps: the row is made as tall as its lines
     * (a reader that does not size rows would draw them over the next row) */
    if (chars > ABOUT_CHARS) {
        double lines = (double)((chars + ABOUT_CHARS - 1) / ABOUT_CHARS);
        e = worksheet_set_row(b->about, b->about_row, 15 * (lines > 20 ? 20 : lines), NULL);
    }
    if (!e && *kbuf)
        e = worksheet_write_string(b->about, b->about_row, 0, kbuf, NULL);
    if (!e && *vbuf)
        e = worksheet_write_string(b->about, b->about_row, 1, vbuf, NULL);
    free(kbuf);
    free(vbuf);
    if (e)
        return lxw_fail(b, ABOUT, e, NULL, err);
    b->about_row++;
    return TB_OK;
}

/* The contents list: a row per sheet after About, its name a link to its cell A1. */
static tb_status about_contents(xlsx_book *b, tb_error *err)
{
    if (!(b->link = workbook_add_format(b->wb))) /* made here: a book without the list keeps its bytes */
        return nomem(b, err);
    format_set_underline(b->link, LXW_UNDERLINE_SINGLE);
    format_set_font_color(b->link, LXW_COLOR_BLUE);
    for (size_t i = 1; i < b->n_names && b->about_row < LXW_ROW_MAX; i++) {
        /* 'name'!A1, an apostrophe of the name doubled; names hold no control characters */
        const char *nm = b->names[i];
        size_t n = strlen(nm), k = 0;
        char *url = malloc(2 * n + 32);
        if (!url)
            return nomem(b, err);
        k += (size_t)sprintf(url, "internal:'");
        for (size_t j = 0; j < n; j++) {
            if (nm[j] == '\'')
                url[k++] = '\'';
            url[k++] = nm[j];
        }
        memcpy(url + k, "'!A1", 5);
        lxw_error e = LXW_NO_ERROR;
        if (i == 1)
            e = worksheet_write_string(b->about, b->about_row, 0, "contents", NULL);
        if (!e)
            e = worksheet_write_url_opt(b->about, b->about_row, 1, url, b->link, nm, NULL);
        free(url);
        if (e)
            return lxw_fail(b, ABOUT, e, NULL, err);
        b->about_row++;
    }
    return TB_OK;
}

tb_status xlsx_commit(xlsx_book *b, tb_error *err)
{
    char msg[512];
    tb_status st;
    if (b->closed || b->committed)
        return tb_error_at(err, TB_ERR_INTERNAL, b->path, 0, 0, -1, "workbook committed twice");
    if (b->open_sinks)
        return tb_error_at(err, TB_ERR_INTERNAL, b->path, 0, 0, -1, "a sheet was not finished");
    if (b->contents && (st = about_contents(b, err)))
        return st;
    for (size_t i = 0; i < b->n_notes; i++)
        if ((st = about_row(b, i ? "" : "notes", b->notes[i], err)))
            return st;
    capture c;
    cap_begin(&c);
    lxw_error e = workbook_close(b->wb);
    size_t printed = cap_end(&c, msg, sizeof msg);
    b->closed = 1;
    b->wb = NULL;
    if (e || printed)
        return lxw_fail(b, NULL, e ? e : LXW_ERROR_ZIP_FILE_OPERATION, printed ? msg : NULL, err);
    if ((st = afile_commit(&b->af, err)))
        return st;
    b->committed = 1;
    return TB_OK;
}

void xlsx_destroy(xlsx_book *b)
{
    if (!b)
        return;
    if (b->wb && !b->closed)
        lxw_workbook_free(b->wb); /* writes nothing */
    if (!b->committed)
        afile_abort(&b->af);
    for (size_t i = 0; i < b->n_names; i++)
        free(b->names[i]);
    free(b->names);
    for (size_t i = 0; i < b->n_notes; i++)
        free(b->notes[i]);
    free(b->notes);
    for (size_t i = 0; i < b->n_reserved; i++)
        free(b->reserved[i].key);
    free(b->reserved);
    free(b->path);
    free(b);
}

/* ---- a sheet ----------------------------------------------------------------- */

static const char *sheet_name(const xsheet *x)
{
    return x->n_parts ? x->parts[0].name : x->so.name ? x->so.name : "";
}

/* The column a chart or conditional format names, or -1. */
static long find_col(const xsheet *x, const char *name)
{
    for (size_t i = 0; i < x->nc; i++)
        if (x->cols[i].name && !strcmp(x->cols[i].name, name))
            return (long)i;
    for (size_t i = 0; i < x->nc; i++)
        if (x->cols[i].header && !strcmp(x->cols[i].header, name))
            return (long)i;
    return -1;
}

static tb_status need_col(const xsheet *x, const char *name, const char *what, long *col, tb_error *err)
{
    *col = find_col(x, name);
    if (*col >= 0)
        return TB_OK;
    return tb_error_at(err, TB_ERR_USAGE, x->b->path, 0, 0, -1, "sheet '%s': %s column '%s' is not a column of the report",
                       sheet_name(x), what, name);
}

/* 10^k, k = 0..19: every power of ten a uint64_t holds. */
static const uint64_t p10u[20] = {1ull,
                                  10ull,
                                  100ull,
                                  1000ull,
                                  10000ull,
                                  100000ull,
                                  1000000ull,
                                  10000000ull,
                                  100000000ull,
                                  1000000000ull,
                                  10000000000ull,
                                  100000000000ull,
                                  1000000000000ull,
                                  10000000000000ull,
                                  100000000000000ull,
                                  1000000000000000ull,
                                  10000000000000000ull,
                                  100000000000000000ull,
                                  1000000000000000000ull,
                                  10000000000000000000ull};

/* Width of an integer part as #,##0 shows it, plus decimals (and their
 * point): its digits counted by comparisons, not divisions. */
static unsigned int_width(int64_t v, int decimals)
{
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    unsigned d = 1;
    while (d < 20 && u >= p10u[d])
        d++;
    return d + (d - 1) / 3 + (v < 0) + (decimals ? (unsigned)decimals + 1 : 0);
}

/*
 * The most characters numfmt_double can write for d (finite): at most 15
 * significant digits, written plain. For 1 <= |d| < 2^49 (below 10^15)
 * that is 15 digits and a point; for |d| < 1, "0.", the zeros before the
 * first digit and 15 digits, the zeros bounded from d's binary exponent
 * (2^(e2-1) <= |d|, so log10 |d| >= (e2 - 1) log10 2; 0.30103 rounds log10
 * 2 up, which for e2 - 1 < 0 only lowers the bound of log10 |d|: no fewer
 * zeros are ever assumed than there are); and a sign. 0 when no bound is
 * worked out (|d| >= 2^49): d is measured.
 */
static unsigned real_chars_max(double d)
{
    if (d == 0)
        return 1;
    int e2;
    frexp(d, &e2);
    unsigned neg = d < 0;
    if (e2 >= 1)
        return e2 <= 49 ? 16 + neg : 0;
    int lo = (int)floor((e2 - 1) * 0.30103); /* <= floor(log10 |d|), which is <= -1 */
    return neg + 2 + (unsigned)(-lo - 1) + 15;
}

static void grow(xsheet *x, size_t col, unsigned w)
{
    if (w > MAX_WIDTH)
        w = MAX_WIDTH;
    if (w > x->width[col])
        x->width[col] = w;
}

/* Could text of at most most characters (0: not known) widen column col?
 * A column already that wide (or at MAX_WIDTH) is not measured again. */
static int wider(const xsheet *x, size_t col, unsigned most)
{
    unsigned w = most && most + 1 < MAX_WIDTH ? most + 1 : MAX_WIDTH;
    return !most || x->width[col] < w;
}

/* Starts a new part (the first sheet, or "<name> (k)") with the header row. */
static tb_status new_part(xsheet *x, tb_error *err)
{
    xlsx_book *b = x->b;
    part *v = realloc(x->parts, (x->n_parts + 1) * sizeof *v);
    if (!v)
        return nomem(b, err);
    x->parts = v;
    part *p = &v[x->n_parts];
    memset(p, 0, sizeof *p);
    char want[XLSX_SHEET_NAME_MAX + 16];
    if (x->n_parts)
        snprintf(want, sizeof want, "%s (%zu)", x->parts[0].name, x->n_parts + 1);
    else
        snprintf(want, sizeof want, "%s", x->so.name ? x->so.name : "Sheet");
    const char *name = NULL;
    tb_status st = TB_OK;
    for (size_t i = 0; !x->n_parts && x->so.key && i < b->n_reserved && !name; i++)
        if (!b->reserved[i].used && !strcmp(b->reserved[i].key, x->so.key)) {
            b->reserved[i].used = 1;
            p->ws = b->reserved[i].ws;
            name = b->reserved[i].name;
        }
    if (!name && (st = add_sheet(b, want, &p->ws, &name, err)))
        return st;
    p->name = (char *)name;
    x->n_parts++;
    char *buf = NULL;
    size_t cap = 0, chars;
    int cut;
    for (size_t i = 0; i < x->nc; i++) {
        const char *h = x->cols[i].header ? x->cols[i].header : "";
        if (clean_text(h, strlen(h), &buf, &cap, &chars, &cut)) {
            free(buf);
            return nomem(b, err);
        }
        lxw_error e = *buf ? worksheet_write_string(p->ws, 0, (lxw_col_t)i, buf, b->bold) : LXW_NO_ERROR;
        if (e) {
            free(buf);
            return lxw_fail(b, p->name, e, NULL, err);
        }
        grow(x, i, (unsigned)chars + 3); /* room for the filter button */
    }
    free(buf);
    worksheet_freeze_panes(p->ws, 1, 0);
    worksheet_repeat_rows(p->ws, 0, 0); /* the header row on every printed page */
    p->rows = 1;
    if (x->n_parts > 1) {
        char note[256];
        snprintf(note, sizeof note, "sheet '%s' continues on sheet '%s' (%zu rows a sheet, header included)",
                 x->parts[0].name, p->name, b->rows_per_sheet);
        if ((st = xlsx_note(b, note, err)))
            return st;
    }
    return TB_OK;
}

static tb_status x_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    xsheet *x = (xsheet *)s;
    xlsx_book *b = x->b;
    x->cols = cols;
    x->nc = n;
    if (n > LXW_COL_MAX)
        return tb_error_at(err, TB_ERR_USAGE, b->path, 0, 0, -1, "sheet '%s': %zu columns, Excel's limit is %d",
                           sheet_name(x), n, LXW_COL_MAX);
    x->fmt = calloc(n ? n : 1, sizeof *x->fmt);
    x->ratio = calloc(n ? n : 1, sizeof *x->ratio);
    x->timed = calloc(n ? n : 1, sizeof *x->timed);
    x->width = calloc(n ? n : 1, sizeof *x->width);
    if (!x->fmt || !x->ratio || !x->timed || !x->width)
        return nomem(b, err);
    for (size_t i = 0; i < n; i++) {
        const char *own = cols[i].number_format && *cols[i].number_format ? cols[i].number_format : NULL;
        /* a ratio is a fraction under a percent format (Excel multiplies by 100 to show
         * it); a format of the spec's without '%' shows the 0..100 as written */
        x->ratio[i] = cols[i].type == TB_COL_RATIO_PCT && (!own || strchr(own, '%'));
        x->timed[i] = cols[i].type == TB_COL_DUR_NS || cols[i].type == TB_COL_TS_NS;
        if (own) {
            if (!(x->fmt[i] = num_format(b, own)))
                return nomem(b, err);
        } else if (x->ratio[i]) {
            x->fmt[i] = b->f_pct;
        }
    }
    /* charts and conditional formats: every column they name must exist */
    long col;
    tb_status st;
    const xlsx_chart *ch = &x->so.chart;
    if (ch->kind != XLSX_CHART_NONE) {
        if (ch->categories && (st = need_col(x, ch->categories, "chart categories", &col, err)))
            return st;
        for (size_t i = 0; i < ch->n_values; i++)
            if ((st = need_col(x, ch->values[i], "chart values", &col, err)))
                return st;
        if (!ch->n_values)
            return tb_error_at(err, TB_ERR_USAGE, b->path, 0, 0, -1, "sheet '%s': a chart needs a value column",
                               sheet_name(x));
        if (ch->kind == XLSX_CHART_PIE && ch->n_values > 1)
            return tb_error_at(err, TB_ERR_USAGE, b->path, 0, 0, -1, "sheet '%s': a pie chart takes one value column",
                               sheet_name(x));
        if (ch->series_by && (ch->kind != XLSX_CHART_LINE || !ch->categories))
            return tb_error_at(err, TB_ERR_USAGE, b->path, 0, 0, -1,
                               "sheet '%s': a chart's series_by needs a line chart with categories", sheet_name(x));
        if (ch->series_by && (x->by_col = find_col(x, ch->series_by)) < 0 && ch->series_by_rank)
            x->so.chart.series_by = NULL; /* a :rank column, left out with one rank: one line */
        else if (ch->series_by && x->by_col < 0)
            return tb_error_at(err, TB_ERR_USAGE, b->path, 0, 0, -1,
                               "sheet '%s': chart series_by column '%s' is not a column of the report", sheet_name(x),
                               ch->series_by);
    }
    for (size_t i = 0; i < x->so.n_conds; i++)
        if ((st = need_col(x, x->so.conds[i].column, "conditional format", &col, err)))
            return st;
    x->begun = 1;
    return new_part(x, err);
}

/* The format of an integer cell in column i at the given scale. */
static lxw_format *int_format(xsheet *x, size_t i, int scale)
{
    if (x->fmt[i])
        return x->fmt[i];
    xlsx_book *b = x->b;
    if (scale <= 0 || scale > 9)
        return b->f_int;
    if (!b->f_scaled[scale]) {
        char f[24] = "#,##0.";
        memset(f + 6, '0', (size_t)scale);
        f[6 + scale] = 0;
        b->f_scaled[scale] = num_format(b, f);
    }
    return b->f_scaled[scale] ? b->f_scaled[scale] : b->f_int;
}

/* What the chart needs of a row of the first part: its series_by group, a ratio chart's range. */
static tb_status chart_track(xsheet *x, const tb_cell *cells, tb_error *err)
{
    const xlsx_chart *ch = &x->so.chart;
    if (ch->kind == XLSX_CHART_NONE)
        return TB_OK;
    if (x->by_col >= 0) {
        char what[XLSX_SHEET_NAME_MAX + 16];
        snprintf(what, sizeof what, "sheet '%s'", sheet_name(x));
        size_t idx;
        tb_status st = chart_group_row(&x->groups, &cells[x->by_col], x->rows,
                                       &(chart_group_where){.path = x->b->path, .what = what, .column = ch->series_by},
                                       &idx, err);
        if (st)
            return st;
        double c = numfmt_cell_value(&cells[find_col(x, ch->categories)]);
        x->cats_text |= !isfinite(c);
    }
    for (size_t i = 0; ch->ratio && i < ch->n_values; i++) {
        double v = numfmt_cell_value(&cells[find_col(x, ch->values[i])]);
        if (isfinite(v) && v < x->lo)
            x->lo = v;
        if (isfinite(v) && v > x->hi)
            x->hi = v;
    }
    return TB_OK;
}

static tb_status x_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    xsheet *x = (xsheet *)s;
    xlsx_book *b = x->b;
    tb_status st;
    part *p = &x->parts[x->n_parts - 1];
    if (p->rows >= b->rows_per_sheet) {
        if ((st = new_part(x, err)))
            return st;
        p = &x->parts[x->n_parts - 1];
    }
    lxw_row_t r = p->rows;
    for (size_t i = 0; i < x->nc; i++) {
        const tb_cell *c = &cells[i];
        lxw_error e = LXW_NO_ERROR;
        lxw_col_t col = (lxw_col_t)i;
        char tmp[NUMFMT_MAX];
        switch (c->kind) {
        case TB_CELL_NULL: break;
        case TB_CELL_INT: {
            int sc = c->scale > 0 && c->scale <= 18 ? c->scale : 0; /* 0..9 by tb_cell */
            if (x->ratio[i]) {
                double v = sc ? (double)c->i / (double)p10u[sc] : (double)c->i;
                e = worksheet_write_number(p->ws, r, col, numfmt_round_pct(v), x->fmt[i]);
                grow(x, i, int_width(c->i, 0) + 4);
            } else {
                e = worksheet_write_number(p->ws, r, col, numfmt_scaled_round(c->i, sc), int_format(x, i, sc));
                int64_t ip = sc ? c->i / (int64_t)p10u[sc] : c->i;
                grow(x, i, int_width(ip, sc) + (c->i < 0 && ip == 0) + 1);
            }
            break;
        }
        case TB_CELL_REAL:
            if (!isfinite(c->d)) {
                const char *t = isnan(c->d) ? "NaN" : c->d > 0 ? "inf" : "-inf";
                e = worksheet_write_string(p->ws, r, col, t, NULL);
                grow(x, i, 5);
            } else if (x->ratio[i]) {
                e = worksheet_write_number(p->ws, r, col, numfmt_round_pct(c->d), x->fmt[i]);
                grow(x, i, int_width((int64_t)fmin(fabs(c->d), 1e15), 0) + 5);
            } else {
                lxw_format *f = x->fmt[i] ? x->fmt[i] : x->timed[i] ? b->f_time : b->f_real;
                e = worksheet_write_number(p->ws, r, col, numfmt_round(c->d), f);
                if (f == b->f_time)
                    grow(x, i, int_width((int64_t)fmin(fabs(c->d), 1e15), 3) + (c->d < 0) + 1);
                else if (wider(x, i, real_chars_max(c->d)))
                    grow(x, i, (unsigned)numfmt_double(c->d, tmp) + 1);
            }
            break;
        case TB_CELL_TEXT: {
            size_t chars;
            int cut;
            if (clean_text(c->s, c->n, &x->buf, &x->cap, &chars, &cut))
                return nomem(b, err);
            if (cut && x->clipped++ == 0) {
                char note[300];
                snprintf(note, sizeof note, "sheet '%s': text longer than %d characters is cut there (first in row %lu, column %zu)",
                         p->name, MAX_CHARS, (unsigned long)r + 1, i + 1);
                if ((st = xlsx_note(b, note, err)))
                    return st;
            }
            if (*x->buf)
                e = worksheet_write_string(p->ws, r, col, x->buf, NULL);
            grow(x, i, (unsigned)(chars > MAX_WIDTH ? MAX_WIDTH : chars) + 1);
            break;
        }
        }
        if (e)
            return lxw_fail(b, p->name, e, NULL, err);
    }
    if (x->n_parts == 1 && (st = chart_track(x, cells, err)))
        return st;
    p->rows++;
    x->rows++;
    return TB_OK;
}

static uint8_t chart_type(const xsheet *x)
{
    const xlsx_chart *ch = &x->so.chart;
    switch (ch->kind) {
    case XLSX_CHART_BAR: return LXW_CHART_BAR;
    case XLSX_CHART_STACKED_BAR: return LXW_CHART_BAR_STACKED;
    case XLSX_CHART_COLUMN: return LXW_CHART_COLUMN;
    case XLSX_CHART_STACKED_COLUMN: return LXW_CHART_COLUMN_STACKED;
    /* a line per group over its own x values: an x-y chart when they are numbers */
    case XLSX_CHART_LINE:
        return ch->series_by && !x->cats_text ? LXW_CHART_SCATTER_STRAIGHT_WITH_MARKERS : LXW_CHART_LINE;
    case XLSX_CHART_PIE: return LXW_CHART_PIE;
    default: return LXW_CHART_NONE;
    }
}

/* A chart under the first part's table (chart.position below): a page wide;
 * bars first at the top, 20 px a category (at most 60 tall), value axis #,##0. */
static lxw_error chart_below(xsheet *x, lxw_chart *chart, lxw_row_t last)
{
    const xlsx_chart *ch = &x->so.chart;
    int bars = ch->kind == XLSX_CHART_BAR || ch->kind == XLSX_CHART_STACKED_BAR;
    double height = 288;
    /* libxlsxwriter's x_axis is a bar chart's values, its y_axis the categories */
    lxw_chart_axis *values = bars ? chart->x_axis : chart->y_axis;
    if (bars) {
        double cats = last > 60 ? 60 : (double)last;
        if (cats * 20 + 100 > height)
            height = cats * 20 + 100;
        chart_axis_set_reverse(chart->y_axis);
        chart_axis_set_crossing_max(chart->y_axis);
    }
    if (ch->kind != XLSX_CHART_PIE && !ch->ratio) {
        chart_axis_set_num_format(values, "#,##0");
        if (ch->n_values == 1) {
            long v = find_col(x, ch->values[0]);
            if (v >= 0 && x->cols[v].header)
                chart_axis_set_name(values, x->cols[v].header);
        }
    }
    chart_legend_set_position(chart, ch->n_values > 1 || ch->series_by || ch->kind == XLSX_CHART_PIE
                                         ? LXW_CHART_LEGEND_BOTTOM
                                         : LXW_CHART_LEGEND_NONE);
    lxw_chart_options o = {.x_scale = 960.0 / 480, .y_scale = height / 288, .object_position = LXW_OBJECT_MOVE_DONT_SIZE};
    return worksheet_insert_chart_opt(x->parts[0].ws, last + 2, 0, chart, &o);
}

/* A chart's series: one per value column over the rows 1..last, or per
 * series_by group and value column over the group's own rows (at most
 * Excel's 255; the About sheet's notes say when some are left out). */
static tb_status add_series(xsheet *x, lxw_chart *chart, lxw_row_t last, tb_error *err)
{
    part *p = &x->parts[0];
    const xlsx_chart *ch = &x->so.chart;
    long cat = ch->categories ? find_col(x, ch->categories) : -1;
    size_t n_groups = ch->series_by ? x->groups.n : 1, n = 0;
    for (size_t g = 0; g < n_groups; g++)
        for (size_t i = 0; i < ch->n_values; i++, n++) {
            long v = find_col(x, ch->values[i]);
            lxw_row_t r0 = ch->series_by ? (lxw_row_t)x->groups.g[g].first + 1 : 1;
            lxw_row_t r1 = ch->series_by ? (lxw_row_t)x->groups.g[g].last + 1 : last;
            lxw_chart_series *se = n < 255 ? chart_add_series(chart, NULL, NULL) : NULL;
            if (n >= 255)
                continue;
            if (!se)
                return lxw_fail(x->b, p->name, LXW_ERROR_MEMORY_MALLOC_FAILED, NULL, err);
            if (cat >= 0)
                chart_series_set_categories(se, p->name, r0, (lxw_col_t)cat, r1, (lxw_col_t)cat);
            chart_series_set_values(se, p->name, r0, (lxw_col_t)v, r1, (lxw_col_t)v);
            if (!ch->series_by) {
                chart_series_set_name_range(se, p->name, 0, (lxw_col_t)v);
                continue;
            }
            if (x->cats_text) /* lines by row order: a group of one row is a marker */
                chart_series_set_marker_type(se, LXW_CHART_MARKER_AUTOMATIC);
            /* "Rank 3", or "Rank 3 · Computing(us)" for several value columns */
            const char *by = x->cols[x->by_col].header ? x->cols[x->by_col].header : ch->series_by;
            const char *key = x->groups.g[g].key, *vh = x->cols[v].header ? x->cols[v].header : ch->values[i];
            char name[512];
            size_t chars;
            int cut;
            snprintf(name, sizeof name, "%s %.200s%s%s", by, *key ? key : "(empty)",
                     ch->n_values > 1 ? " \xC2\xB7 " : "", ch->n_values > 1 ? vh : "");
            if (clean_text(name, strlen(name), &x->buf, &x->cap, &chars, &cut))
                return nomem(x->b, err);
            chart_series_set_name(se, x->buf);
        }
    if (n > 255) {
        char note[300];
        snprintf(note, sizeof note, "sheet '%s': the chart draws the first 255 of its %zu series (Excel's limit)",
                 p->name, n);
        return xlsx_note(x->b, note, err);
    }
    return TB_OK;
}

/* A ratio chart's value axis: around 1 with a margin (svg_ratio_axis), crossed at 1, titled "x base". */
static void ratio_axis(xsheet *x, lxw_chart *chart)
{
    const xlsx_chart *ch = &x->so.chart;
    int bars = ch->kind == XLSX_CHART_BAR || ch->kind == XLSX_CHART_STACKED_BAR;
    lxw_chart_axis *values = bars ? chart->x_axis : chart->y_axis, *cats = bars ? chart->y_axis : chart->x_axis;
    double lo, hi, step;
    long k0, k1;
    int dec;
    svg_ratio_axis(x->lo <= x->hi ? x->lo : 1, x->lo <= x->hi ? x->hi : 1, &lo, &hi);
    svg_ticks(lo, hi, &step, &k0, &k1, &dec);
    chart_axis_set_min(values, (double)k0 * step);
    chart_axis_set_max(values, (double)k1 * step);
    chart_axis_set_major_unit(values, step);
    chart_axis_set_crossing(values, 1.0); /* the categories' axis, where the bars start */
    chart_axis_set_num_format(values, dec <= 2 ? "0.00" : dec == 3 ? "0.000" : "0.0000");
    chart_axis_set_name(values, "x base");
    chart_axis_set_label_position(cats, LXW_CHART_AXIS_LABEL_POSITION_LOW); /* names at the edge, not at 1 */
}

/* The chart of the first part, beside its columns (or below them); data rows 1..last. */
static tb_status add_chart(xsheet *x, tb_error *err)
{
    xlsx_book *b = x->b;
    part *p = &x->parts[0];
    const xlsx_chart *ch = &x->so.chart;
    char msg[512];
    lxw_row_t last = p->rows - 1;
    capture c;
    cap_begin(&c);
    lxw_chart *chart = workbook_add_chart(b->wb, chart_type(x));
    lxw_error e = LXW_NO_ERROR;
    tb_status st = chart ? add_series(x, chart, last, err) : TB_OK;
    if (chart && !st) {
        if (ch->ratio)
            ratio_axis(x, chart);
        if (ch->series_by) {
            long cat = find_col(x, ch->categories);
            chart_axis_set_name(chart->x_axis, x->cols[cat].header ? x->cols[cat].header : ch->categories);
        }
        chart_title_set_name(chart, p->name);
        if (ch->below)
            e = chart_below(x, chart, last);
        else
            e = worksheet_insert_chart(p->ws, 1, (lxw_col_t)(x->nc + 1), chart);
    }
    size_t printed = cap_end(&c, msg, sizeof msg);
    if (st)
        return st;
    if (!chart || e || printed)
        return lxw_fail(b, p->name, e ? e : LXW_ERROR_PARAMETER_VALIDATION,
                        printed ? msg : chart ? NULL : "cannot add the chart", err);
    return TB_OK;
}

static uint8_t criteria(xlsx_cond_op op)
{
    switch (op) {
    case XLSX_OP_GT: return LXW_CONDITIONAL_CRITERIA_GREATER_THAN;
    case XLSX_OP_GE: return LXW_CONDITIONAL_CRITERIA_GREATER_THAN_OR_EQUAL_TO;
    case XLSX_OP_LT: return LXW_CONDITIONAL_CRITERIA_LESS_THAN;
    case XLSX_OP_LE: return LXW_CONDITIONAL_CRITERIA_LESS_THAN_OR_EQUAL_TO;
    case XLSX_OP_EQ: return LXW_CONDITIONAL_CRITERIA_EQUAL_TO;
    default: return LXW_CONDITIONAL_CRITERIA_NOT_EQUAL_TO;
    }
}

/* Does a cell holding 0 meet op v? Then an empty cell would too (Excel and
 * LibreOffice read a blank as 0 in a cellIs rule), and the rule is written
 * as an expression that asks for a number first. */
static int zero_meets(xlsx_cond_op op, double v)
{
    switch (op) {
    case XLSX_OP_GT: return 0 > v;
    case XLSX_OP_GE: return 0 >= v;
    case XLSX_OP_LT: return 0 < v;
    case XLSX_OP_LE: return 0 <= v;
    case XLSX_OP_EQ: return v == 0;
    default: return v != 0;
    }
}

/* The expression of a rule written as one (cf.type FORMULA) on rows 2..rows of
 * column name: the top N (ties in), or a threshold on numbers only. */
static void cond_expr(const xlsx_cond *cd, const char *name, unsigned rows, double v, char *buf, size_t n)
{
    static const char *const ops[] = {">", ">=", "<", "<=", "=", "<>"};
    if (cd->kind == XLSX_COND_TOP)
        snprintf(buf, n, "=AND(ISNUMBER(%s2),%s2>=LARGE($%s$2:$%s$%u,MIN(%d,COUNT($%s$2:$%s$%u))))", name, name, name,
                 name, rows, cd->top, name, name, rows);
    else
        snprintf(buf, n, "=AND(ISNUMBER(%s2),%s2%s%.15g)", name, name, ops[cd->op], v);
}

/* The conditional formats, on every part's data rows of their column. */
static tb_status add_conds(xsheet *x, tb_error *err)
{
    xlsx_book *b = x->b;
    lxw_format *hi = NULL, *ok = NULL;
    for (size_t i = 0; i < x->so.n_conds; i++) {
        const xlsx_cond *cd = &x->so.conds[i];
        long col = find_col(x, cd->column);
        lxw_conditional_format cf = {0};
        switch (cd->kind) {
        case XLSX_COND_THRESHOLD:
        case XLSX_COND_TOP:
            if (!hi) {
                if (!(hi = workbook_add_format(b->wb)))
                    return nomem(b, err);
                format_set_bg_color(hi, 0xFFC7CE);
                format_set_font_color(hi, 0x9C0006);
            }
            cf.format = hi;
            if (cd->good) {
                if (!ok) {
                    if (!(ok = workbook_add_format(b->wb)))
                        return nomem(b, err);
                    format_set_bg_color(ok, 0xC6EFCE);
                    format_set_font_color(ok, 0x006100);
                }
                cf.format = ok;
            }
            if (cd->kind == XLSX_COND_TOP && cd->top >= 1 && cd->top <= 1000) {
                /* a formula rule, set per part below: libxlsxwriter 1.1.4's top10 rule writes
                 * rank 10 whatever the value it is given */
                cf.type = LXW_CONDITIONAL_TYPE_FORMULA;
            } else if (cd->kind == XLSX_COND_TOP) {
                /* out of Excel's range (the spec allows 1..1000): libxlsxwriter's check says so */
                cf.type = LXW_CONDITIONAL_TYPE_TOP;
                cf.value = cd->top;
            } else {
                cf.type = LXW_CONDITIONAL_TYPE_CELL;
                cf.criteria = criteria(cd->op);
                cf.value = x->ratio[col] ? cd->value / 100 : cd->value;
                if (zero_meets(cd->op, cf.value))
                    cf.type = LXW_CONDITIONAL_TYPE_FORMULA, cf.criteria = 0;
            }
            break;
        case XLSX_COND_DATA_BAR: cf.type = LXW_CONDITIONAL_DATA_BAR; break;
        case XLSX_COND_COLOR_SCALE: cf.type = LXW_CONDITIONAL_3_COLOR_SCALE; break;
        }
        for (size_t k = 0; k < x->n_parts; k++) {
            part *p = &x->parts[k];
            char msg[512];
            if (p->rows < 2)
                continue;
            char expr[200], name[8];
            if (cf.type == LXW_CONDITIONAL_TYPE_FORMULA) {
                lxw_col_to_name(name, (lxw_col_t)col, 0);
                cond_expr(cd, name, (unsigned)p->rows, cf.value, expr, sizeof expr);
                cf.value_string = expr;
            }
            capture c;
            cap_begin(&c);
            lxw_error e =
                worksheet_conditional_format_range(p->ws, 1, (lxw_col_t)col, p->rows - 1, (lxw_col_t)col, &cf);
            size_t printed = cap_end(&c, msg, sizeof msg);
            if (e || printed)
                return lxw_fail(b, p->name, e ? e : LXW_ERROR_PARAMETER_VALIDATION, printed ? msg : NULL, err);
        }
    }
    return TB_OK;
}

static tb_status x_finish(tb_sink *s, tb_error *err)
{
    xsheet *x = (xsheet *)s;
    xlsx_book *b = x->b;
    tb_status st;
    if (!x->begun || x->finished)
        return tb_error_at(err, TB_ERR_INTERNAL, b->path, 0, 0, -1, "sheet '%s': finish out of order", sheet_name(x));
    for (size_t k = 0; k < x->n_parts; k++) {
        part *p = &x->parts[k];
        lxw_error e = LXW_NO_ERROR;
        for (size_t i = 0; i < x->nc && !e; i++) {
            double w = x->cols[i].width > 0 ? (double)(x->cols[i].width > 255 ? 255 : x->cols[i].width)
                                            : x->width[i] < 6 ? 6.0 : (double)x->width[i];
            e = worksheet_set_column(p->ws, (lxw_col_t)i, (lxw_col_t)i, w, NULL);
        }
        if (!e && x->nc)
            e = worksheet_autofilter(p->ws, 0, 0, p->rows - 1, (lxw_col_t)(x->nc - 1));
        if (e)
            return lxw_fail(b, p->name, e, NULL, err);
    }
    if (x->so.chart.kind != XLSX_CHART_NONE && x->parts[0].rows > 1 && (st = add_chart(x, err)))
        return st;
    if ((st = add_conds(x, err)))
        return st;
    if (x->clipped > 1) {
        char note[256];
        snprintf(note, sizeof note, "sheet '%s': %llu text values cut at %d characters", x->parts[0].name,
                 (unsigned long long)x->clipped, MAX_CHARS);
        if ((st = xlsx_note(b, note, err)))
            return st;
    }
    x->finished = 1;
    b->open_sinks--;
    return TB_OK;
}

static void x_destroy(tb_sink *s)
{
    xsheet *x = (xsheet *)s;
    if (!x)
        return;
    /* a sheet that did not finish leaves the book uncommittable: open_sinks stays */
    free(x->fmt);
    free(x->ratio);
    free(x->timed);
    free(x->width);
    free(x->parts);
    free(x->buf);
    chart_groups_free(&x->groups);
    free(x);
}

tb_status xlsx_sheet_reserve(xlsx_book *b, const char *key, const char *name, tb_error *err)
{
    if (b->closed)
        return tb_error_at(err, TB_ERR_INTERNAL, b->path, 0, 0, -1, "workbook already closed");
    struct reserved *v = realloc(b->reserved, (b->n_reserved + 1) * sizeof *v);
    if (!v)
        return nomem(b, err);
    b->reserved = v;
    struct reserved *r = &v[b->n_reserved];
    memset(r, 0, sizeof *r);
    if (!(r->key = strdup(key)))
        return nomem(b, err);
    b->n_reserved++;
    tb_status st = add_sheet(b, name, &r->ws, &r->name, err);
    r->used = st != TB_OK; /* never handed out */
    return st;
}

const char *xlsx_sink_sheet(const tb_sink *s, size_t k)
{
    const xsheet *x = (const xsheet *)s;
    return k < x->n_parts ? x->parts[k].name : NULL;
}

tb_status xlsx_sheet_sink(xlsx_book *b, const xlsx_sheet_options *so, tb_sink **out, tb_error *err)
{
    *out = NULL;
    if (b->closed)
        return tb_error_at(err, TB_ERR_INTERNAL, b->path, 0, 0, -1, "workbook already closed");
    xsheet *x = calloc(1, sizeof *x);
    if (!x)
        return nomem(b, err);
    x->head.vt = (tb_sink){.begin = x_begin, .row = x_row, .finish = x_finish, .destroy = x_destroy};
    x->b = b;
    x->by_col = -1;
    x->lo = INFINITY;
    x->hi = -INFINITY;
    if (so)
        x->so = *so;
    b->open_sinks++;
    *out = &x->head.vt;
    return TB_OK;
}
