/* SPDX-License-Identifier: MIT */
/*
 * json_doc.c - the JSON writer of a report whose one value is a whole JSON
 * document (`json_shape: document`, docs/spec.md).
 *
 * Some files another tool reads have a shape of their own, not an array of
 * rows: msprof-analyze's communication_group.json is an object of lists.
 * Such a report's SQL builds the document with SQLite's JSON functions and
 * gives it as one row of one column; this writer checks that shape, parses
 * the text (an error names the file and the line and column in the value)
 * and writes it on one line with the separators ", " and ": " and
 * non-ASCII characters escaped (\u00e9, small letters), as Python's
 * json.dump writes by default.
 * Keys keep their order; integers are written exactly, reals with 17
 * significant digits. Nothing is written unless the whole value is good.
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "tracebook/error.h"
#include "tracebook/output.h"

/* jansson spells \uXXXX escapes with capitals, Python's json.dumps in small letters: turns them small. */
static void small_hex(char *t)
{
    for (; *t; t++) {
        if (*t != '\\' || !t[1])
            continue;
        if (t[1] == 'u')
            for (int k = 2; k < 6 && t[k]; k++)
                if (t[k] >= 'A' && t[k] <= 'F')
                    t[k] = (char)(t[k] - 'A' + 'a');
        t++; /* past the escaped character: an escaped backslash before a u is no \u escape */
    }
}

typedef struct json_doc_sink {
    out_sink base;
    char *path;    /* the final path (owned) */
    json_t *value; /* the document, once its row came */
    size_t ncols;
    int begun, done;
} json_doc_sink;

static tb_status doc_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    json_doc_sink *d = (json_doc_sink *)s;
    (void)cols;
    if (d->begun || d->done)
        return tb_error_at(err, TB_ERR_INTERNAL, d->path, 0, 0, -1, "begin called twice");
    if (n != 1)
        return tb_error_at(err, TB_ERR_USAGE, d->path, 0, 0, -1,
                           "a json_shape: document report must give one column (the document), got %lld",
                           (long long)n);
    d->ncols = n;
    d->begun = 1;
    return TB_OK;
}

static tb_status doc_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    json_doc_sink *d = (json_doc_sink *)s;
    if (!d->begun || d->done)
        return tb_error_at(err, TB_ERR_INTERNAL, d->path, 0, 0, -1, "row outside begin and finish");
    if (d->value)
        return tb_error_at(err, TB_ERR_USAGE, d->path, 0, 0, -1,
                           "a json_shape: document report must give one row (the document), got more");
    if (cells[0].kind != TB_CELL_TEXT)
        return tb_error_at(err, TB_ERR_USAGE, d->path, 0, 0, -1,
                           "a json_shape: document report must give the document as text, got %s",
                           cells[0].kind == TB_CELL_NULL ? "NULL" : "a number");
    json_error_t je;
    d->value = json_loadb(cells[0].s, cells[0].n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!d->value)
        return tb_error_at(err, TB_ERR_USAGE, d->path, 0, 0, -1,
                           "the report's document is not valid JSON: %s at line %d, column %d of the value",
                           je.text, je.line, je.column);
    return TB_OK;
}

static tb_status doc_finish(tb_sink *s, tb_error *err)
{
    json_doc_sink *d = (json_doc_sink *)s;
    if (!d->begun || d->done)
        return tb_error_at(err, TB_ERR_INTERNAL, d->path, 0, 0, -1, "finish without begin, or twice");
    d->done = -1;
    if (!d->value)
        return tb_error_at(err, TB_ERR_USAGE, d->path, 0, 0, -1,
                           "a json_shape: document report must give one row (the document), got none");
    char *text = json_dumps(d->value, JSON_ENCODE_ANY | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(17));
    char *name = strdup(d->path);
    d->base.written = malloc(sizeof *d->base.written);
    if (!text || !name || !d->base.written) {
        free(text);
        free(name);
        free(d->base.written);
        d->base.written = NULL;
        return tb_error_at(err, TB_ERR_NOMEM, d->path, 0, 0, -1, "out of memory");
    }
    small_hex(text);
    afile af;
    tb_status rc = afile_open(d->path, &af, err);
    if (!rc) {
        fputs(text, af.f);
        int direct = af.direct;
        rc = afile_commit(&af, err);
        d->base.n_written = rc || direct ? 0 : 1; /* a stream is no file to list */
    }
    free(text);
    if (rc) {
        free(name);
        free(d->base.written);
        d->base.written = NULL;
        return rc;
    }
    d->base.written[0] = name;
    d->done = 1;
    return TB_OK;
}

static void doc_destroy(tb_sink *s)
{
    json_doc_sink *d = (json_doc_sink *)s;
    if (d->base.written) /* only a successful finish leaves it, with its one name */
        free(d->base.written[0]);
    free(d->base.written);
    json_decref(d->value);
    free(d->path);
    free(d);
}

tb_status json_doc_sink_create(const char *path, tb_sink **out, tb_error *err)
{
    *out = NULL;
    json_doc_sink *d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(path))) {
        free(d);
        return tb_error_at(err, TB_ERR_NOMEM, path, 0, 0, -1, "out of memory");
    }
    d->base.vt = (tb_sink){doc_begin, doc_row, doc_finish, doc_destroy};
    *out = &d->base.vt;
    return TB_OK;
}
