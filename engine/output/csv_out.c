/* SPDX-License-Identifier: MIT */
/*
 * csv_out.c - the CSV writer of report rows.
 *
 * RFC 4180 as msprof and torch_npu write it: "\n" line ends, a field quoted
 * only when it must be (a comma, quote, CR or LF inside, or a space at
 * either end that a reader would trim), quotes doubled inside. Numbers are
 * written exactly (numfmt.c); NULL is an empty field; NaN and infinities are
 * spelled "NaN", "inf" and "-inf", as Python and pandas read them.
 *
 * Text (headers too) is made valid UTF-8 on the way out, as the JSON writer
 * does: profilers copy kernel names byte for byte and SQL blobs carry NUL
 * bytes, and one stray byte makes a strict reader (Python's csv module over
 * a file opened with encoding="utf-8") fail on the whole file. Each maximal
 * invalid subpart (utf8_seq) and each NUL becomes U+FFFD; every other byte,
 * control characters included, is written as it is. Duplicate headers stay:
 * they are legal CSV.
 *
 * Big results are split like msprof's summaries: after rows_per_file data
 * rows the writer continues in a new file, each with the header row. Until
 * the end it cannot know whether one file will do, so every slice is written
 * under a temporary name; finish() picks the names (top.csv alone, else
 * top_1.csv .. top_k.csv) and renames them. Only the slice being written is
 * open, so memory stays at one stdio buffer whatever the row count.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"
#include "tracebook/error.h"
#include "tracebook/output.h"

#define CSV_DEFAULT_ROWS 1000000u

typedef struct csv_sink {
    out_sink base;
    char *path;                 /* as given (owned) */
    size_t rows_per_file;
    int bom;
    int formula_safe;           /* text that reads as a formula gets a leading ' (csv_sink_options) */
    size_t slice_insert;        /* csv_sink_options.slice_insert */
    const tb_sink_column *cols; /* borrowed from begin() */
    size_t ncols;
    afile *slices;              /* every slice so far; only the last may be open */
    size_t n_slices, cap;
    size_t rows;                /* data rows in the last slice */
    int begun, done;            /* done: 1 after a successful finish, -1 after a failed one */
} csv_sink;

/*
 * msprof's slice names: "slice_<k-1>_" inserted after the first at bytes of
 * the last component ("out/op_summary_2024.csv", at 11, 1 ->
 * "out/op_summary_slice_0_2024.csv"). Returns new (free) or NULL.
 */
static char *slice_name_at(const char *path, size_t at, size_t k)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (at > strlen(base))
        at = strlen(base);
    char num[40];
    int w = snprintf(num, sizeof num, "slice_%zu_", k - 1);
    size_t head = (size_t)(base - path) + at, tail = strlen(path) - head;
    char *s = malloc(head + (size_t)w + tail + 1);
    if (!s)
        return NULL;
    memcpy(s, path, head);
    memcpy(s + head, num, (size_t)w);
    memcpy(s + head + (size_t)w, path + head, tail + 1);
    return s;
}

/*
 * path with _k inserted before the extension of its last component
 * ("out/top.csv", 2 -> "out/top_2.csv"; "out/top" -> "out/top_2"). A leading
 * dot of the name is not an extension. Returns new (free) or NULL.
 */
static char *slice_name(const char *path, size_t k)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)
        dot = path + strlen(path);
    char num[24];
    int w = snprintf(num, sizeof num, "_%zu", k);
    size_t head = (size_t)(dot - path), tail = strlen(dot);
    char *s = malloc(head + (size_t)w + tail + 1);
    if (!s)
        return NULL;
    memcpy(s, path, head);
    memcpy(s + head, num, (size_t)w);
    memcpy(s + head + (size_t)w, dot, tail + 1);
    return s;
}

/*
 * Writes s (n bytes) with each NUL and each maximal invalid UTF-8 subpart
 * as U+FFFD and, inside quotes, each '"' doubled.
 */
static void put_text(FILE *f, const char *s, size_t n, int quoted)
{
    size_t from = 0, i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c != 0 && c < 0x80 && !(quoted && c == '"')) {
            i++;
            continue;
        }
        size_t len = 1;
        if (c >= 0x80 && utf8_seq(s + i, n - i, &len)) {
            i += len;
            continue;
        }
        fwrite(s + from, 1, i - from, f);
        fputs(c == '"' ? "\"\"" : "\xEF\xBF\xBD", f); /* a doubled quote, or U+FFFD */
        i += len;
        from = i;
    }
    fwrite(s + from, 1, n - from, f);
}

/*
 * Writes one field, quoted when it must be. The replacements of put_text
 * never need quotes, so the raw bytes decide.
 */
static void put_field(FILE *f, const char *s, size_t n, int tick)
{
    if (n == 0)
        return;
    int quote = s[0] == ' ' || s[n - 1] == ' ';
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    if (quote)
        putc('"', f);
    if (tick)
        putc('\'', f);
    put_text(f, s, n, quote);
    if (quote)
        putc('"', f);
}

/*
 * 1 when a spreadsheet opening the file would take text s for a formula:
 * it starts with =, +, -, @, a tab or a carriage return and is not a number
 * ("-5" and "+1.5e3" stay as they are).
 */
static int formula_like(const char *s, size_t n)
{
    if (n == 0 || !strchr("=+-@\t\r", s[0]))
        return 0;
    char buf[64];
    if (n < sizeof buf) {
        memcpy(buf, s, n);
        buf[n] = 0;
        char *end;
        (void)strtod(buf, &end);
        if (end == buf + n && end != buf)
            return 0;
    }
    return 1;
}

static void put_cell(FILE *f, const tb_cell *c, int formula_safe)
{
    char num[NUMFMT_MAX];
    size_t n;
    switch (c->kind) {
    case TB_CELL_NULL:
        break;
    case TB_CELL_INT:
        n = numfmt_scaled(c->i, c->scale, num);
        fwrite(num, 1, n, f);
        break;
    case TB_CELL_REAL:
        n = numfmt_double(c->d, num);
        if (n)
            fwrite(num, 1, n, f);
        else
            fputs(isnan(c->d) ? "NaN" : c->d > 0 ? "inf" : "-inf", f);
        break;
    case TB_CELL_TEXT:
        put_field(f, c->s, c->n, formula_safe && formula_like(c->s, c->n));
        break;
    }
}

/* The error of a failed write, naming the final file. */
static tb_status write_error(csv_sink *cs, tb_error *err)
{
    afile *af = &cs->slices[cs->n_slices - 1];
    return tb_error_at(err, TB_ERR_IO, af->path, 0, 0, -1, "cannot write: %s", strerror(errno ? errno : EIO));
}

static void put_header(csv_sink *cs)
{
    FILE *f = cs->slices[cs->n_slices - 1].f;
    if (cs->bom)
        fputs("\xEF\xBB\xBF", f);
    for (size_t i = 0; i < cs->ncols; i++) {
        if (i)
            putc(',', f);
        const char *h = cs->cols[i].header ? cs->cols[i].header : "";
        /* a header may come from the data (a pivot column, a PMU counter's name) */
        put_field(f, h, strlen(h), cs->formula_safe && formula_like(h, strlen(h)));
    }
    putc('\n', f);
}

/* Starts slice number n_slices + 1 (closing the one before). */
static tb_status new_slice(csv_sink *cs, tb_error *err)
{
    if (cs->n_slices == cs->cap) {
        size_t ncap = cs->cap ? cs->cap * 2 : 4;
        afile *p = realloc(cs->slices, ncap * sizeof *p);
        if (!p)
            return tb_error_at(err, TB_ERR_NOMEM, cs->path, 0, 0, -1, "out of memory");
        cs->slices = p;
        cs->cap = ncap;
    }
    if (cs->n_slices > 0 && afile_close(&cs->slices[cs->n_slices - 1], err) != TB_OK)
        return err ? err->code : TB_ERR_IO;
    /* the final name is chosen in finish(); the temporary sits beside path either way */
    if (afile_open(cs->path, &cs->slices[cs->n_slices], err) != TB_OK)
        return err ? err->code : TB_ERR_IO;
    cs->n_slices++;
    cs->rows = 0;
    if (cs->begun)
        put_header(cs);
    return TB_OK;
}

static tb_status csv_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    csv_sink *cs = (csv_sink *)s;
    if (cs->begun || cs->done)
        return tb_error_at(err, TB_ERR_INTERNAL, cs->path, 0, 0, -1, "begin called twice");
    cs->cols = cols;
    cs->ncols = n;
    cs->begun = 1;
    errno = 0;
    put_header(cs);
    if (ferror(cs->slices[cs->n_slices - 1].f))
        return write_error(cs, err);
    return TB_OK;
}

static tb_status csv_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    csv_sink *cs = (csv_sink *)s;
    if (!cs->begun || cs->done)
        return tb_error_at(err, TB_ERR_INTERNAL, cs->path, 0, 0, -1, "row outside begin and finish");
    if (cs->rows >= cs->rows_per_file && new_slice(cs, err) != TB_OK)
        return err ? err->code : TB_ERR_IO;
    FILE *f = cs->slices[cs->n_slices - 1].f;
    errno = 0;
    for (size_t i = 0; i < cs->ncols; i++) {
        if (i)
            putc(',', f);
        put_cell(f, &cells[i], cs->formula_safe);
    }
    putc('\n', f);
    cs->rows++;
    if (ferror(f))
        return write_error(cs, err);
    return TB_OK;
}

static tb_status csv_finish(tb_sink *s, tb_error *err)
{
    csv_sink *cs = (csv_sink *)s;
    if (!cs->begun || cs->done)
        return tb_error_at(err, TB_ERR_INTERNAL, cs->path, 0, 0, -1, "finish without begin, or twice");
    size_t k = cs->n_slices;
    if (cs->slices[0].direct) {
        cs->done = -1;
        if (afile_commit(&cs->slices[0], err) != TB_OK)
            return err ? err->code : TB_ERR_IO;
        cs->done = 1;
        return TB_OK;
    }
    cs->base.written = calloc(k, sizeof *cs->base.written);
    if (!cs->base.written) {
        tb_error_at(err, TB_ERR_NOMEM, cs->path, 0, 0, -1, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < k; i++) {
        if (k > 1) {
            char *name = cs->slice_insert ? slice_name_at(cs->path, cs->slice_insert, i + 1)
                                          : slice_name(cs->path, i + 1);
            tb_status st = name ? afile_retarget(&cs->slices[i], name, err)
                                : tb_error_at(err, TB_ERR_NOMEM, cs->path, 0, 0, -1, "out of memory");
            free(name);
            if (st != TB_OK)
                goto fail;
        }
        cs->base.written[i] = strdup(cs->slices[i].path);
        if (!cs->base.written[i]) {
            tb_error_at(err, TB_ERR_NOMEM, cs->path, 0, 0, -1, "out of memory");
            goto fail;
        }
    }
    for (size_t i = 0; i < k; i++) {
        if (afile_commit(&cs->slices[i], err) != TB_OK) {
            /* a partial set of slices would pass for the whole output */
            for (size_t j = 0; j < i; j++)
                unlink(cs->base.written[j]);
            goto fail;
        }
    }
    cs->base.n_written = k;
    /*
     * A split output has no file under the plain name: one left by an
     * earlier, smaller run would pass for this one. (Stale top_N.csv past
     * the last slice stay: that name may be another report's.)
     */
    if (k > 1)
        unlink(cs->path);
    cs->done = 1;
    return TB_OK;

fail:
    if (cs->base.written)
        for (size_t i = 0; i < k; i++)
            free(cs->base.written[i]);
    free(cs->base.written);
    cs->base.written = NULL;
    cs->done = -1;
    return err ? err->code : TB_ERR_IO;
}

static void csv_destroy(tb_sink *s)
{
    csv_sink *cs = (csv_sink *)s;
    for (size_t i = 0; i < cs->n_slices; i++)
        afile_abort(&cs->slices[i]); /* a no-op on committed slices */
    for (size_t i = 0; i < cs->base.n_written; i++)
        free(cs->base.written[i]);
    free(cs->base.written);
    free(cs->slices);
    free(cs->path);
    free(cs);
}

tb_status csv_sink_create(const char *path, const csv_sink_options *opt, tb_sink **out, tb_error *err)
{
    *out = NULL;
    csv_sink *cs = calloc(1, sizeof *cs);
    if (!cs || !(cs->path = strdup(path))) {
        free(cs);
        return tb_error_at(err, TB_ERR_NOMEM, path, 0, 0, -1, "out of memory");
    }
    cs->base.vt = (tb_sink){csv_begin, csv_row, csv_finish, csv_destroy};
    cs->rows_per_file = opt && opt->rows_per_file ? opt->rows_per_file : CSV_DEFAULT_ROWS;
    cs->slice_insert = opt ? opt->slice_insert : 0;
    cs->bom = opt ? opt->bom : 0;
    cs->formula_safe = opt ? opt->formula_safe : 0;
    if (new_slice(cs, err) != TB_OK) {
        csv_destroy(&cs->base.vt);
        return err ? err->code : TB_ERR_IO;
    }
    if (cs->slices[0].direct)
        cs->rows_per_file = SIZE_MAX; /* a stream has one name: never split it */
    *out = &cs->base.vt;
    return TB_OK;
}
