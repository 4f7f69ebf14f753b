/* SPDX-License-Identifier: MIT */
/*
 * json_out.c - the JSON writer of report rows, and whole small JSON files.
 *
 * A report becomes an array of objects, one per row, keys the column headers
 * in column order. It is streamed: one object per line as rows arrive
 * (`[\n{...},\n{...}\n]\n`), so a million-row report needs no more memory
 * than one row; the keys are escaped once, at begin(). Values keep their
 * type: integers and scaled integers as exact JSON numbers, reals through
 * numfmt_double (plain decimals, never an exponent; an integral real past
 * int64 ends in ".0" so that it stays a real), NULL and the NaN and
 * infinities JSON cannot spell as null,
 * text as strings. Strings are escaped per RFC 8259 (control characters as
 * \u00XX) and made valid UTF-8: profilers copy kernel names and call stacks
 * byte for byte, and one stray Latin-1 byte would make the whole file
 * unreadable to a strict parser, so each invalid sequence becomes U+FFFD.
 *
 * Keys are unique. SQL allows `SELECT 1 AS x, 2 AS x`, and a parser keeps
 * one value of a repeated key (Python's json.load the last, silently), so a
 * header that repeats an earlier one gets " (2)", " (3)", ... appended: the
 * first suffix that no header and no key made so far has (x, x, "x (2)" ->
 * x, "x (3)", "x (2)"). Headers are compared as a parser reads them, after
 * the U+FFFD replacement ("a\xFF" and "a\xFE" repeat each other). The CSV
 * writer keeps repeated headers: they are legal there.
 *
 * utf8_seq() (text.c) is the decoder behind the U+FFFD replacement.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "tracebook/error.h"
#include "tracebook/output.h"
#include "util/hash.h"

static void file_put(void *ctx, const char *p, size_t n)
{
    fwrite(p, 1, n, ctx);
}

/* Writes s (n bytes) as a JSON string. */
static void put_string(FILE *f, const char *s, size_t n)
{
    json_string_out(s, n, file_put, f);
}

typedef struct json_sink {
    out_sink base;
    afile af;
    char *keys;     /* `"header":` for every column, back to back (owned) */
    size_t *key_at; /* ncols + 1 offsets into keys (owned) */
    size_t ncols;
    size_t rows;
    int begun, done;
} json_sink;

static tb_status write_error(json_sink *js, tb_error *err)
{
    return tb_error_at(err, TB_ERR_IO, js->af.path, 0, 0, -1, "cannot write: %s", strerror(errno ? errno : EIO));
}

/*
 * A set of byte strings (borrowed), open addressing with linear probing:
 * one row's keys, so that picking unique keys stays linear in the columns
 * (a SELECT may have thousands).
 */
typedef struct keyset {
    struct keyslot {
        const char *s; /* NULL: empty */
        size_t n;
        size_t first;  /* the first column with this key */
    } *slot;
    size_t mask;
} keyset;

/* The slot holding s, or the empty one where it goes. */
static struct keyslot *key_slot(const keyset *ks, const char *s, size_t n)
{
    size_t i = (size_t)hash_fnv1a(HASH_FNV_OFFSET, s, n) & ks->mask;
    while (ks->slot[i].s && !(ks->slot[i].n == n && memcmp(ks->slot[i].s, s, n) == 0))
        i = (i + 1) & ks->mask;
    return &ks->slot[i];
}

/* The scratch memory of json_begin. */
static void free_keys(char *quoted, size_t *q_at, size_t *next, char **made, size_t n, struct keyslot *slot)
{
    free(quoted);
    free(q_at);
    free(next);
    if (made)
        for (size_t i = 0; i < n; i++)
            free(made[i]);
    free(made);
    free(slot);
}

/* Every header as its JSON string, back to back (what a parser compares):
 * *quoted and *q_at, its n + 1 offsets (both new, and the caller's to free
 * even on failure). Returns 0, or -1 when out of memory. */
static int quote_headers(const tb_sink_column *cols, size_t n, char **quoted, size_t **q_at)
{
    size_t qlen = 0;
    *q_at = malloc((n + 1) * sizeof **q_at);
    FILE *m = open_memstream(quoted, &qlen);
    if (!*q_at || !m) {
        if (m)
            fclose(m);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        (*q_at)[i] = (size_t)ftell(m);
        const char *h = cols[i].header ? cols[i].header : "";
        put_string(m, h, strlen(h));
    }
    (*q_at)[n] = (size_t)ftell(m);
    if (ferror(m) || fclose(m) != 0)
        return -1;
    return 0;
}

/*
 * The key of a repeated header: the quoted header q with the first " (k)"
 * not in the set, k from 2. The suffixes of one header are taken in
 * increasing order and a taken one stays taken, so the search resumes where
 * the last repeat of this header stopped (*next). Returns new (the set
 * borrows it once put in *slot), or NULL when out of memory; *cn: its length.
 */
static char *suffixed_key(keyset *ks, const char *q, size_t qn, size_t *next, size_t *cn, struct keyslot **slot)
{
    char *cand = malloc(qn + 24);
    if (!cand)
        return NULL;
    memcpy(cand, q, qn - 1); /* without the closing quote */
    size_t k = *next ? *next : 2;
    for (;; k++) {
        *cn = qn - 1 + (size_t)snprintf(cand + qn - 1, 25, " (%zu)\"", k);
        *slot = key_slot(ks, cand, *cn);
        if (!(*slot)->s)
            break;
    }
    *next = k + 1;
    return cand;
}

/*
 * Escapes the headers once and makes them unique keys: js->keys gets
 * `"key":` for every column, back to back, js->key_at the offsets.
 */
static tb_status json_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    json_sink *js = (json_sink *)s;
    char *quoted = NULL, *buf = NULL;
    size_t len = 0;
    size_t *q_at = NULL, *next = NULL;
    char **made = NULL; /* the keys with a suffix, by column (owned) */
    keyset ks = {0};
    FILE *m = NULL;
    if (js->begun || js->done)
        return tb_error_at(err, TB_ERR_INTERNAL, js->af.path ? js->af.path : "", 0, 0, -1, "begin called twice");
    if (n > SIZE_MAX / 8 / sizeof *ks.slot || quote_headers(cols, n, &quoted, &q_at))
        goto nomem;

    /* every header in the set (at most n more keys join it: load <= 1/2) */
    size_t cap = 8;
    while (cap < 4 * n)
        cap *= 2;
    ks.slot = calloc(cap, sizeof *ks.slot);
    ks.mask = cap - 1;
    next = calloc(n + 1, sizeof *next); /* by first column: the suffix to try next */
    made = calloc(n + 1, sizeof *made);
    js->key_at = malloc((n + 1) * sizeof *js->key_at);
    m = open_memstream(&buf, &len);
    if (!ks.slot || !next || !made || !js->key_at || !m)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        struct keyslot *k = key_slot(&ks, quoted + q_at[i], q_at[i + 1] - q_at[i]);
        if (!k->s)
            *k = (struct keyslot){quoted + q_at[i], q_at[i + 1] - q_at[i], i};
    }

    for (size_t i = 0; i < n; i++) {
        const char *q = quoted + q_at[i];
        size_t qn = q_at[i + 1] - q_at[i];
        js->key_at[i] = (size_t)ftell(m);
        size_t first = key_slot(&ks, q, qn)->first;
        if (first == i) {
            fwrite(q, 1, qn, m);
        } else {
            size_t cn;
            struct keyslot *slot;
            if (!(made[i] = suffixed_key(&ks, q, qn, &next[first], &cn, &slot)))
                goto nomem;
            fwrite(made[i], 1, cn, m);
            *slot = (struct keyslot){made[i], cn, i};
        }
        putc(':', m);
    }
    js->key_at[n] = (size_t)ftell(m);
    if (ferror(m) || fclose(m) != 0) {
        m = NULL;
        goto nomem;
    }
    js->keys = buf;
    js->ncols = n;
    js->begun = 1;
    free_keys(quoted, q_at, next, made, n, ks.slot);
    return TB_OK;

nomem:
    if (m)
        fclose(m);
    free_keys(quoted, q_at, next, made, n, ks.slot);
    free(buf);
    free(js->key_at);
    js->key_at = NULL;
    return tb_error_at(err, TB_ERR_NOMEM, js->af.path, 0, 0, -1, "out of memory");
}

static tb_status json_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    json_sink *js = (json_sink *)s;
    if (!js->begun || js->done)
        return tb_error_at(err, TB_ERR_INTERNAL, js->af.path ? js->af.path : "", 0, 0, -1,
                           "row outside begin and finish");
    FILE *f = js->af.f;
    errno = 0;
    fputs(js->rows ? ",\n{" : "[\n{", f);
    char num[NUMFMT_MAX];
    for (size_t i = 0; i < js->ncols; i++) {
        if (i)
            putc(',', f);
        fwrite(js->keys + js->key_at[i], 1, js->key_at[i + 1] - js->key_at[i], f);
        const tb_cell *c = &cells[i];
        size_t n;
        switch (c->kind) {
        case TB_CELL_NULL:
            fputs("null", f);
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
                fputs("null", f);
            /* an integral real past int64 gets ".0": readers with 64-bit integers (jansson) then read a
             * real instead of failing on a too big integer */
            if (n && fabs(c->d) >= 9223372036854775808.0)
                fputs(".0", f);
            break;
        case TB_CELL_TEXT:
            put_string(f, c->s, c->n);
            break;
        }
    }
    putc('}', f);
    js->rows++;
    if (ferror(f))
        return write_error(js, err);
    return TB_OK;
}

static tb_status json_finish(tb_sink *s, tb_error *err)
{
    json_sink *js = (json_sink *)s;
    if (!js->begun || js->done)
        return tb_error_at(err, TB_ERR_INTERNAL, js->af.path ? js->af.path : "", 0, 0, -1,
                           "finish without begin, or twice");
    js->done = -1;
    char *name = strdup(js->af.path);
    js->base.written = malloc(sizeof *js->base.written);
    if (!name || !js->base.written) {
        free(name);
        free(js->base.written);
        js->base.written = NULL;
        return tb_error_at(err, TB_ERR_NOMEM, js->af.path, 0, 0, -1, "out of memory");
    }
    fputs(js->rows ? "\n]\n" : "[]\n", js->af.f);
    int direct = js->af.direct;
    if (afile_commit(&js->af, err) != TB_OK) {
        free(name);
        free(js->base.written);
        js->base.written = NULL;
        return err ? err->code : TB_ERR_IO;
    }
    js->base.written[0] = name;
    js->base.n_written = direct ? 0 : 1; /* a stream is no file to list */
    js->done = 1;
    return TB_OK;
}

static void json_destroy(tb_sink *s)
{
    json_sink *js = (json_sink *)s;
    afile_abort(&js->af);
    if (js->base.written)
        free(js->base.written[0]);
    free(js->base.written);
    free(js->keys);
    free(js->key_at);
    free(js);
}

tb_status json_sink_create(const char *path, const json_sink_options *opt, tb_sink **out, tb_error *err)
{
    (void)opt;
    *out = NULL;
    json_sink *js = calloc(1, sizeof *js);
    if (!js)
        return tb_error_at(err, TB_ERR_NOMEM, path, 0, 0, -1, "out of memory");
    js->base.vt = (tb_sink){json_begin, json_row, json_finish, json_destroy};
    if (afile_open(path, &js->af, err) != TB_OK) {
        free(js);
        return err ? err->code : TB_ERR_IO;
    }
    *out = &js->base.vt;
    return TB_OK;
}

tb_status json_write_file(const char *path, const char *text, tb_error *err)
{
    afile af;
    if (afile_open(path, &af, err) != TB_OK)
        return err ? err->code : TB_ERR_IO;
    fputs(text, af.f);
    return afile_commit(&af, err);
}
