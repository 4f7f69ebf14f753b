/* SPDX-License-Identifier: MIT */
/*
 * console.c - report rows as a plain-text table on a terminal.
 *
 *     Top kernels
 *     Name          Calls  Total Time(us)
 *     ------------  -----  --------------
 *     MatMul_v2        12        1234.567
 *     a ver...name     3             0.5
 *     (2 more rows)
 *
 * Column widths must be known before the first line is printed, but a report
 * may have millions of rows: the writer holds the first width_rows rows
 * (1000 by default), already rendered and cut to max_col_width (in the
 * middle: head...tail), takes the
 * widths from them and the headers, prints them and then prints every later
 * row as it comes, cut to those widths. Memory is bounded by
 * width_rows x columns x max_col_width whatever the row count. Widths count
 * code points, not bytes, so names in Chinese line up as well as a monospace
 * font allows. Control characters would break the lines and are printed as
 * spaces; invalid UTF-8 bytes are printed as '?' (a terminal may take them
 * as the start of an escape). Numbers are right-aligned, text left-aligned;
 * a header is right-aligned over a column of numbers. Reals are plain
 * decimals as in the CSV, except one too long for its column, which is
 * shown in exponent notation rather than cut.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "tracebook/error.h"
#include "tracebook/output.h"

#define CONSOLE_WIDTH 40
#define CONSOLE_HOLD 1000

/* A growable byte buffer. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static int sb_room(sbuf *b, size_t more)
{
    if (b->n + more <= b->cap)
        return 0;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap < b->n + more)
        ncap *= 2;
    char *np = realloc(b->p, ncap);
    if (!np)
        return -1;
    b->p = np;
    b->cap = ncap;
    return 0;
}

static int sb_add(sbuf *b, const char *s, size_t n)
{
    if (sb_room(b, n + 1))
        return -1;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
    return 0;
}

static int sb_fill(sbuf *b, char c, size_t n)
{
    if (sb_room(b, n + 1))
        return -1;
    memset(b->p + b->n, c, n);
    b->n += n;
    b->p[b->n] = 0;
    return 0;
}

/* One rendered cell of a held row: text at off in the row's block. */
typedef struct ccell {
    size_t off, len;  /* bytes */
    size_t w;         /* code points */
    int kind;         /* 0 NULL, 1 number, 2 text */
} ccell;

/* A held row: n ccells followed by their text. */
typedef struct crow {
    ccell *c;
    char *text;
} crow;

typedef struct console_sink {
    out_sink base;
    FILE *f;
    const char *title;
    size_t maxw, max_rows, hold;
    const tb_sink_column *cols;
    size_t ncols;
    size_t *width;      /* per column, fixed once printed */
    crow *held;         /* the rows held for the widths */
    size_t n_held;
    size_t seen;        /* rows received */
    size_t printed;     /* rows printed or held to be printed */
    int fixed;          /* the header is out, widths are final */
    int begun, done;
    sbuf cell, line, rowtext;
    ccell *rowcells;    /* scratch: one row being rendered, or the header */
    const char **text;  /* scratch: each cell's text in a line */
    int *right;         /* scratch: each cell right-aligned */
} console_sink;

/* The byte offset of code point k of p (n bytes, valid UTF-8); n when it has fewer. */
static size_t cp_offset(const char *p, size_t n, size_t k)
{
    size_t i = 0, seen = 0;
    while (i < n) {
        if (((unsigned char)p[i] & 0xC0) != 0x80) {
            if (seen == k)
                break;
            seen++;
        }
        i++;
    }
    return i;
}

/*
 * Appends p (n bytes, valid UTF-8, cps code points) cut to at most limit
 * code points to b; *w gets its width. A number keeps its head ("1...").
 * A text (mid) is cut in the middle, keeping its head and its tail: long
 * kernel names differ at their end as often as at their start. When the
 * column's long texts all share their first pivot code points (three
 * "sm90_xmma_gemm_bf16bf16_bf16f32_f32_" GEMMs), the part kept after the
 * head starts where they differ, so that they stay apart:
 * "sm90_xmma...2_nn_n_tilesize128x256x64...". pivot SIZE_MAX: none.
 */
static int add_cut(sbuf *b, const char *p, size_t n, size_t cps, size_t limit, int mid, size_t pivot, size_t *w)
{
    if (cps <= limit) {
        *w = cps;
        return sb_add(b, p, n);
    }
    *w = limit;
    if (limit < 4) /* no room for text and dots: the dots alone say it does not fit */
        return sb_fill(b, '.', limit);
    size_t keep = limit - 3, head = mid && limit >= 5 ? (keep + 1) / 2 : keep, tail = keep - head;
    if (mid && limit >= 10 && pivot != SIZE_MAX && pivot >= head) {
        /* the head, then from just before the pivot as far as fits */
        size_t h = keep / 4, rest = keep - h, from = pivot > h + 2 ? pivot - 2 : h;
        if (from + rest >= cps) { /* the difference is near the end: head...tail */
            head = h;
            tail = rest;
        } else {
            size_t a = cp_offset(p, n, h), f = cp_offset(p, n, from), e = cp_offset(p, n, from + rest - 3);
            return sb_add(b, p, a) || sb_add(b, "...", 3) || sb_add(b, p + f, e - f) || sb_add(b, "...", 3) ? -1 : 0;
        }
    }
    size_t h = cp_offset(p, n, head), t = cp_offset(p, n, cps - tail);
    if (sb_add(b, p, h) || sb_add(b, "...", 3))
        return -1;
    return sb_add(b, p + t, n - t);
}

/*
 * Renders cell c, cut to limit code points (a text to text_limit, by
 * add_cut with pivot), onto the end of b. Fills the ccell's len, w and kind
 * (off is the caller's). Returns 0 or -1 (memory).
 */
static int render(console_sink *cs, const tb_cell *c, size_t limit, size_t text_limit, size_t pivot, sbuf *b,
                  ccell *out)
{
    char num[NUMFMT_MAX];
    size_t n = 0, start = b->n;
    const char *p = num;
    out->kind = 1;
    switch (c->kind) {
    case TB_CELL_NULL:
        out->kind = 0;
        out->len = out->w = 0;
        return sb_room(b, 1);
    case TB_CELL_INT:
        n = numfmt_scaled(c->i, c->scale, num);
        break;
    case TB_CELL_REAL:
        n = numfmt_double(c->d, num);
        if (!n) {
            p = isnan(c->d) ? "NaN" : c->d > 0 ? "inf" : "-inf";
            n = strlen(p);
        } else if (n > limit) {
            /* a plain decimal too long for the column (1e-300) would be cut into
             * something that reads as 0: on a terminal, exponent notation instead,
             * the fewest digits that read back */
            for (int prec = 15; prec <= 17; prec++) {
                n = (size_t)snprintf(num, sizeof num, "%.*g", prec, c->d);
                if (strtod(num, NULL) == c->d)
                    break;
            }
        }
        break;
    case TB_CELL_TEXT: {
        out->kind = 2;
        /* clean into the cell scratch first: its code points decide the cut */
        sbuf *t = &cs->cell;
        t->n = 0;
        size_t cps = 0;
        for (size_t i = 0; i < c->n;) {
            size_t len = 0;
            while (i + len < c->n && (unsigned char)c->s[i + len] >= 0x20 && (unsigned char)c->s[i + len] < 0x7F)
                len++;
            if (len) { /* printable ASCII, the usual case: one copy */
                if (sb_add(t, c->s + i, len))
                    return -1;
                cps += len;
                i += len;
                continue;
            }
            unsigned char ch = (unsigned char)c->s[i];
            int ok = utf8_seq(c->s + i, c->n - i, &len);
            int rc;
            if (!ok)
                rc = sb_add(t, "?", 1);
            else if (ch < 0x20 || ch == 0x7F || (ch == 0xC2 && (unsigned char)c->s[i + 1] < 0xA0))
                rc = sb_add(t, " ", 1); /* C0, DEL and C1 controls */
            else
                rc = sb_add(t, c->s + i, len);
            if (rc)
                return -1;
            cps++;
            i += len;
        }
        if (add_cut(b, t->p ? t->p : "", t->n, cps, text_limit, 1, pivot, &out->w))
            return -1;
        out->len = b->n - start;
        return 0;
    }
    }
    if (add_cut(b, p, n, n, limit, 0, SIZE_MAX, &out->w))
        return -1;
    out->len = b->n - start;
    return 0;
}

/* Prints one line of cells (text[i], w[i]), padded to the widths; trailing blanks trimmed. */
static int put_line(console_sink *cs, const ccell *c)
{
    const char *const *text = cs->text;
    const int *right = cs->right;
    sbuf *l = &cs->line;
    l->n = 0;
    for (size_t i = 0; i < cs->ncols; i++) {
        size_t pad = cs->width[i] > c[i].w ? cs->width[i] - c[i].w : 0;
        if ((i && sb_add(l, "  ", 2)) || (right[i] && sb_fill(l, ' ', pad)) || sb_add(l, text[i], c[i].len) ||
            (!right[i] && sb_fill(l, ' ', pad)))
            return -1;
    }
    while (l->n && l->p[l->n - 1] == ' ')
        l->n--;
    if (l->n)
        fwrite(l->p, 1, l->n, cs->f);
    putc('\n', cs->f);
    return 0;
}

static int put_row(console_sink *cs, const char *base, const ccell *c)
{
    for (size_t i = 0; i < cs->ncols; i++) {
        cs->text[i] = base + c[i].off;
        cs->right[i] = c[i].kind == 1;
    }
    return put_line(cs, c);
}

/* A held text longer than its column, for finding where it differs from the others. */
typedef struct longtext {
    const char *p;
    size_t len, row;
} longtext;

static int longtext_cmp(const void *a, const void *b)
{
    const longtext *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The code points of p's first k bytes, not counting a code point k cuts. */
static size_t prefix_cps(const char *p, size_t len, size_t k)
{
    size_t cps = 0;
    for (size_t i = 0; i < k; i++)
        cps += ((unsigned char)p[i] & 0xC0) != 0x80;
    if (k && k < len && ((unsigned char)p[k] & 0xC0) == 0x80)
        cps--;
    return cps;
}

static size_t lcp_bytes(const longtext *a, const longtext *b)
{
    size_t k = 0;
    while (k < a->len && k < b->len && a->p[k] == b->p[k])
        k++;
    return k;
}

/*
 * The pivot of add_cut for each held text of column i longer than its
 * width, into pv[row * ncols + i]: the code points it shares at its start
 * with the held text closest to it (its neighbours in sorted order), so
 * that the part kept after its head starts where they differ. Returns 0 or
 * -1 (memory).
 */
static int pivots_of(const console_sink *cs, size_t i, size_t *pv)
{
    longtext *v = malloc((cs->n_held ? cs->n_held : 1) * sizeof *v);
    size_t n = 0;
    if (!v)
        return -1;
    for (size_t r = 0; r < cs->n_held; r++) {
        const ccell *c = &cs->held[r].c[i];
        if (c->kind == 2 && c->w > cs->width[i])
            v[n++] = (longtext){cs->held[r].text + c->off, c->len, r};
    }
    qsort(v, n, sizeof *v, longtext_cmp);
    for (size_t k = 0; k < n && n > 1; k++) {
        size_t a = k ? lcp_bytes(&v[k], &v[k - 1]) : 0, b = k + 1 < n ? lcp_bytes(&v[k], &v[k + 1]) : 0;
        pv[v[k].row * cs->ncols + i] = prefix_cps(v[k].p, v[k].len, a > b ? a : b);
    }
    free(v);
    return 0;
}

/* Prints a held row, its texts cut to the widths now known (pv: each one's pivot). */
static int put_held(console_sink *cs, const crow *r, const size_t *pv)
{
    sbuf *b = &cs->cell;
    ccell *c = cs->rowcells;
    b->n = 0;
    for (size_t i = 0; i < cs->ncols; i++) {
        c[i] = r->c[i];
        c[i].off = b->n;
        if (r->c[i].kind == 2 ? add_cut(b, r->text + r->c[i].off, r->c[i].len, r->c[i].w, cs->width[i], 1, pv[i],
                                        &c[i].w)
                              : sb_add(b, r->text + r->c[i].off, r->c[i].len))
            return -1;
        c[i].len = b->n - c[i].off;
    }
    return put_row(cs, b->p ? b->p : "", c);
}

/* Fixes the widths from the held rows, prints the title, the header and the held rows. */
static int print_held(console_sink *cs)
{
    ccell *hc = cs->rowcells;
    int *right = cs->right;
    sbuf *h = &cs->rowtext;
    h->n = 0;
    for (size_t i = 0; i < cs->ncols; i++) {
        const char *s = cs->cols[i].header ? cs->cols[i].header : "";
        tb_cell c = {.kind = TB_CELL_TEXT, .s = s, .n = strlen(s)};
        hc[i].off = h->n;
        if (render(cs, &c, cs->maxw, cs->maxw, SIZE_MAX, h, &hc[i]))
            return -1;
        if (hc[i].w > cs->width[i])
            cs->width[i] = hc[i].w;
        /* a header goes right over numbers: a typed column, else the first value decides */
        right[i] = cs->cols[i].type != TB_COL_PLAIN;
        for (size_t r = 0; r < cs->n_held && !right[i]; r++) {
            if (cs->held[r].c[i].kind) {
                right[i] = cs->held[r].c[i].kind == 1;
                break;
            }
        }
    }
    for (size_t i = 0; i < cs->ncols; i++)
        cs->text[i] = h->p + hc[i].off;
    if (cs->title)
        fprintf(cs->f, "%s\n", cs->title);
    if (put_line(cs, hc))
        return -1;
    sbuf *l = &cs->line;
    l->n = 0;
    for (size_t i = 0; i < cs->ncols; i++)
        if ((i && sb_add(l, "  ", 2)) || sb_fill(l, '-', cs->width[i]))
            return -1;
    if (l->n)
        fwrite(l->p, 1, l->n, cs->f);
    putc('\n', cs->f);
    size_t *pv = malloc((cs->n_held ? cs->n_held : 1) * (cs->ncols ? cs->ncols : 1) * sizeof *pv);
    if (!pv)
        return -1;
    for (size_t k = 0; k < cs->n_held * cs->ncols; k++)
        pv[k] = SIZE_MAX;
    int rc = 0;
    for (size_t i = 0; i < cs->ncols && !rc; i++)
        rc = pivots_of(cs, i, pv);
    for (size_t r = 0; r < cs->n_held && !rc; r++) {
        rc = put_held(cs, &cs->held[r], pv + r * cs->ncols);
        free(cs->held[r].c);
        cs->held[r].c = NULL;
    }
    free(pv);
    if (rc)
        return -1;
    cs->n_held = 0;
    cs->fixed = 1;
    return 0;
}

static tb_status nomem(tb_error *err)
{
    return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
}

static tb_status console_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    console_sink *cs = (console_sink *)s;
    if (cs->begun || cs->done)
        return tb_error_set(err, TB_ERR_INTERNAL, "console table: begin called twice");
    cs->cols = cols;
    cs->ncols = n;
    cs->width = calloc(n ? n : 1, sizeof *cs->width);
    cs->rowcells = calloc(n ? n : 1, sizeof *cs->rowcells);
    cs->text = calloc(n ? n : 1, sizeof *cs->text);
    cs->right = calloc(n ? n : 1, sizeof *cs->right);
    cs->held = calloc(cs->hold, sizeof *cs->held);
    if (!cs->width || !cs->rowcells || !cs->text || !cs->right || !cs->held)
        return nomem(err);
    cs->begun = 1;
    return TB_OK;
}

static tb_status console_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    console_sink *cs = (console_sink *)s;
    if (!cs->begun || cs->done)
        return tb_error_set(err, TB_ERR_INTERNAL, "console table: row outside begin and finish");
    cs->seen++;
    if (cs->max_rows && cs->printed >= cs->max_rows)
        return TB_OK; /* counted in "(N more rows)" */
    cs->printed++;
    sbuf *t = &cs->rowtext;
    t->n = 0;
    for (size_t i = 0; i < cs->ncols; i++) {
        cs->rowcells[i].off = t->n;
        /* a held row's text is kept whole: it is cut when the column's pivot is known */
        size_t lim = cs->fixed ? cs->width[i] : cs->maxw;
        if (render(cs, &cells[i], lim, cs->fixed ? lim : SIZE_MAX, SIZE_MAX, t, &cs->rowcells[i]))
            return nomem(err);
    }
    if (cs->fixed) {
        if (put_row(cs, t->p ? t->p : "", cs->rowcells))
            return nomem(err);
        return ferror(cs->f) ? tb_error_set(err, TB_ERR_IO, "cannot print the table: %s", strerror(errno ? errno : EIO))
                             : TB_OK;
    }
    /* one block per held row: the cells, then their text */
    size_t cells_sz = cs->ncols * sizeof(ccell);
    char *block = malloc(cells_sz + t->n + 1);
    if (!block)
        return nomem(err);
    crow *r = &cs->held[cs->n_held++];
    r->c = (ccell *)(void *)block;
    r->text = block + cells_sz;
    if (cells_sz)
        memcpy(r->c, cs->rowcells, cells_sz);
    if (t->n)
        memcpy(r->text, t->p, t->n);
    r->text[t->n] = 0;
    for (size_t i = 0; i < cs->ncols; i++) {
        size_t w = r->c[i].w < cs->maxw ? r->c[i].w : cs->maxw;
        if (w > cs->width[i])
            cs->width[i] = w;
    }
    if (cs->n_held == cs->hold && print_held(cs))
        return nomem(err);
    return TB_OK;
}

static tb_status console_finish(tb_sink *s, tb_error *err)
{
    console_sink *cs = (console_sink *)s;
    if (!cs->begun || cs->done)
        return tb_error_set(err, TB_ERR_INTERNAL, "console table: finish without begin, or twice");
    cs->done = -1;
    if (!cs->fixed && print_held(cs))
        return nomem(err);
    size_t more = cs->seen - cs->printed;
    if (cs->seen == 0)
        fputs("(0 rows)\n", cs->f);
    else if (more)
        fprintf(cs->f, "(%zu more row%s)\n", more, more == 1 ? "" : "s");
    errno = 0;
    if (fflush(cs->f) != 0 || ferror(cs->f))
        return tb_error_set(err, TB_ERR_IO, "cannot print the table: %s", strerror(errno ? errno : EIO));
    cs->done = 1;
    return TB_OK;
}

static void console_destroy(tb_sink *s)
{
    console_sink *cs = (console_sink *)s;
    for (size_t r = 0; r < cs->n_held; r++)
        free(cs->held[r].c);
    free(cs->held);
    free(cs->width);
    free(cs->rowcells);
    free(cs->text);
    free(cs->right);
    free(cs->cell.p);
    free(cs->line.p);
    free(cs->rowtext.p);
    free(cs);
}

tb_status console_sink_create(FILE *f, const console_options *opt, tb_sink **out, tb_error *err)
{
    *out = NULL;
    console_sink *cs = calloc(1, sizeof *cs);
    if (!cs)
        return nomem(err);
    cs->base.vt = (tb_sink){console_begin, console_row, console_finish, console_destroy};
    cs->f = f;
    cs->title = opt ? opt->title : NULL;
    cs->maxw = opt && opt->max_col_width > 0 ? (size_t)opt->max_col_width : CONSOLE_WIDTH;
    cs->max_rows = opt ? opt->max_rows : 0;
    cs->hold = opt && opt->width_rows ? opt->width_rows : CONSOLE_HOLD;
    if (cs->max_rows && cs->max_rows < cs->hold)
        cs->hold = cs->max_rows;
    *out = &cs->base.vt;
    return TB_OK;
}
