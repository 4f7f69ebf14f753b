/* SPDX-License-Identifier: MIT */
/*
 * summary_kept.c - a torch_npu rank's own summary CSVs, as read, in each of
 * `export summary`'s formats.
 *
 * The load keeps the text of torch_npu's summary CSVs in TB_SOURCE_CSV: per
 * rank and file, the header line (line 0, its line end included) and each
 * loaded row as the file wrote it. kept_each() walks the rows one selection
 * wants (one rank, or several merged, each row led by its Rank ID; in a
 * window the rows of its steps, or, for the memory files, which carry no
 * step, those whose time meets the rank's span of the window, the rule the
 * window's views apply to samples) and hands them to one of three writers: the CSV
 * writer puts the bytes back as they were; the JSON writer keys each row's
 * fields by the header's and writes a field that is a number as the number
 * written (no digit lost or added); kept_table() fills a TEMP table that a
 * generated report reads, so the workbook gets the rows as a sheet of its
 * own through the report job (summary.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "export/summary_kept.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "util/csv.h"

/* One row handed to a writer: a header (its line end still on) or a record. */
typedef struct kept_row {
    int64_t rank;
    const char *rec;
    size_t n;
    int header;
} kept_row;

typedef tb_status (*kept_fn)(void *ctx, const kept_row *r, tb_error *err);

/* The span of field col of the CSV record rec[0..n) (quotes kept); 0 when it has fewer fields. */
static int record_field(const char *rec, size_t n, int col, const char **f, size_t *len)
{
    size_t i = 0;
    for (int c = 0;; c++) {
        size_t b = i;
        int quoted = 0;
        while (i < n && (quoted || rec[i] != ',')) {
            quoted ^= rec[i] == '"';
            i++;
        }
        if (c == col) {
            *f = rec + b;
            *len = i - b;
            return 1;
        }
        if (i++ >= n)
            return 0;
    }
}

/* The header's text without a BOM and its line end. */
static void header_text(const char **head, size_t *n)
{
    if (*n >= 3 && !memcmp(*head, "\xef\xbb\xbf", 3))
        *head += 3, *n -= 3;
    while (*n && ((*head)[*n - 1] == '\r' || (*head)[*n - 1] == '\n'))
        (*n)--;
}

/* The column of the header named name (its text as written, unquoted), -1 when none. */
static int header_column(const char *head, size_t n, const char *name)
{
    header_text(&head, &n);
    const char *f;
    size_t len, k = strlen(name);
    for (int c = 0; record_field(head, n, c, &f, &len); c++)
        if (len == k && !memcmp(f, name, k))
            return c;
    return -1;
}

int kept_step_column(const char *head, size_t n)
{
    int c = header_column(head, n, "Step Id");
    return c >= 0 ? c : header_column(head, n, "Step");
}

int kept_time_columns(const char *head, size_t n, int tcol[2])
{
    tcol[0] = header_column(head, n, "Timestamp(us)");
    tcol[1] = -1;
    if (tcol[0] < 0 && (tcol[0] = header_column(head, n, "Allocation Time(us)")) >= 0)
        tcol[1] = header_column(head, n, "Release Time(us)");
    return tcol[0] >= 0;
}

/* Field col's text less quotes, blanks and TABs, into num (cap bytes); 0 when there is none or it does not fit. */
static size_t bare_field(const char *rec, size_t n, int col, char *num, size_t cap)
{
    const char *f;
    size_t len, k = 0;
    if (!record_field(rec, n, col, &f, &len))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (f[i] != '"' && f[i] != ' ' && f[i] != '\t') {
            if (k + 1 >= cap)
                return 0;
            num[k++] = f[i];
        }
    num[k] = 0;
    return k;
}

/* 1 when field col of the record is a step from first to last. */
static int record_in_steps(const char *rec, size_t n, int col, int64_t first, int64_t last)
{
    char num[24], *end;
    if (!bare_field(rec, n, col, num, sizeof num))
        return 0;
    errno = 0;
    long long v = strtoll(num, &end, 10);
    return !*end && !errno && v >= first && v <= last;
}

/* Field col of the record, a time in us, as integer ns into *ns: 1, or 0 when it is empty or no time. */
static int record_ns(const char *rec, size_t n, int col, int64_t *ns)
{
    char num[64];
    size_t len = bare_field(rec, n, col, num, sizeof num);
    return len && csv_us_to_ns((csv_field){num, len}, ns, NULL) == 0;
}

/* 1 when the record's time meets its rank's span [start, end] (the window's
 * rule for samples): a sample inside it, or an allocation .. release span
 * (no release: held to the end) that overlaps it. */
static int record_in_time(const char *rec, size_t n, int64_t rank, const kept_sel *k)
{
    const window_rank *w = NULL;
    for (size_t i = 0; i < k->n_spans && !w; i++)
        if (k->spans[i].rank == rank)
            w = &k->spans[i];
    int64_t a, b;
    if (!w || !record_ns(rec, n, k->tcol[0], &a))
        return 0;
    if (k->tcol[1] < 0)
        return a >= w->start_ns && a <= w->end_ns;
    if (!record_ns(rec, n, k->tcol[1], &b))
        b = w->end_ns;
    return a <= w->end_ns && b >= w->start_ns;
}

/* Hands fn the header of the selected file (the first rank's) and its selected rows, in rank then line order. */
static tb_status kept_each(sqlite3 *db, const kept_sel *k, kept_fn fn, void *ctx, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT line, record, rankId FROM TB_SOURCE_CSV WHERE file = ?2 AND "
                               "CASE WHEN ?1 >= 0 THEN rankId = ?1 ELSE rankId IN (SELECT value FROM json_each(?3)) END "
                               "ORDER BY rankId, line", -1, &q, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "reading TB_SOURCE_CSV: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(q, 1, k->rank);
    sqlite3_bind_int64(q, 2, k->file);
    sqlite3_bind_text(q, 3, k->ranks ? k->ranks : "[]", -1, SQLITE_STATIC);
    int r, headed = 0;
    tb_status st = TB_OK;
    while (!st && (r = sqlite3_step(q)) == SQLITE_ROW) {
        kept_row row = {.rank = sqlite3_column_int64(q, 2), .rec = (const char *)sqlite3_column_text(q, 1),
                        .n = (size_t)sqlite3_column_bytes(q, 1), .header = sqlite3_column_int64(q, 0) == 0};
        row.rec = row.rec ? row.rec : "";
        if (row.header && headed++)
            continue;
        if (!row.header && k->col >= 0 && !record_in_steps(row.rec, row.n, k->col, k->first, k->last))
            continue;
        if (!row.header && k->col < 0 && k->tcol[0] >= 0 && !record_in_time(row.rec, row.n, row.rank, k))
            continue;
        st = fn(ctx, &row, err);
    }
    if (!st && r != SQLITE_DONE)
        st = tb_error_set(err, TB_ERR_DB, "reading TB_SOURCE_CSV: %s", sqlite3_errmsg(db));
    sqlite3_finalize(q);
    return st;
}

/* ---- CSV: the bytes as read ---------------------------------------------- */

typedef struct kept_csv_ctx {
    FILE *f;
    int merged;
    const char *eol;
} kept_csv_ctx;

static tb_status kept_csv_row(void *ctx, const kept_row *r, tb_error *err)
{
    (void)err;
    kept_csv_ctx *c = ctx;
    if (r->header) { /* with its own line end */
        c->eol = r->n >= 2 && !memcmp(r->rec + r->n - 2, "\r\n", 2) ? "\r\n" : "\n";
        size_t bom = r->n >= 3 && !memcmp(r->rec, "\xef\xbb\xbf", 3) ? 3 : 0;
        fwrite(r->rec, 1, bom, c->f);
        if (c->merged)
            fputs("Rank ID,", c->f);
        fwrite(r->rec + bom, 1, r->n - bom, c->f);
        return TB_OK;
    }
    if (c->merged)
        fprintf(c->f, "%lld,", (long long)r->rank);
    fwrite(r->rec, 1, r->n, c->f);
    fputs(c->eol, c->f);
    return TB_OK;
}

tb_status kept_write_csv(sqlite3 *db, const kept_sel *k, const char *path, tb_error *err)
{
    afile af;
    tb_status st = afile_open(path, &af, err);
    if (st)
        return st;
    kept_csv_ctx c = {.f = af.f, .merged = k->rank < 0, .eol = "\n"};
    if ((st = kept_each(db, k, kept_csv_row, &c, err))) {
        afile_abort(&af);
        return st;
    }
    return afile_commit(&af, err);
}

/* ---- fields --------------------------------------------------------------- */

/* Field f[0..len) without its CSV quoting ("a ""b""" -> a "b") into out (len + 1 bytes); its length. */
static size_t unquote(const char *f, size_t len, char *out)
{
    size_t k = 0;
    int quoted = 0;
    for (size_t i = 0; i < len; i++) {
        if (f[i] == '"') {
            if (quoted && i + 1 < len && f[i + 1] == '"')
                out[k++] = f[i++];
            else
                quoted = !quoted;
            continue;
        }
        out[k++] = f[i];
    }
    out[k] = 0;
    return k;
}

/* The span of s[0..n) without the blanks and TABs around it. */
static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* 1 when s[0..n) is a JSON number (RFC 8259): -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; *integral: no . or exponent. */
static int json_number(const char *s, size_t n, int *integral)
{
    size_t i = 0, d;
    *integral = 1;
    if (i < n && s[i] == '-')
        i++;
    if (i < n && s[i] == '0')
        i++;
    else if (i < n && s[i] >= '1' && s[i] <= '9')
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    else
        return 0;
    if (i < n && s[i] == '.') {
        for (d = ++i; i < n && s[i] >= '0' && s[i] <= '9';)
            i++;
        if (i == d)
            return 0;
        *integral = 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        if (++i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        for (d = i; i < n && s[i] >= '0' && s[i] <= '9';)
            i++;
        if (i == d)
            return 0;
        *integral = 0;
    }
    return i == n;
}

/* Splits the record into its unquoted fields: buf (n + 1 bytes) holds them
 * one after the other, NUL-ended; at[i] / len[i] the i-th (up to max). The count. */
static size_t split(const char *rec, size_t n, char *buf, size_t *at, size_t *len, size_t max)
{
    size_t k = 0, o = 0;
    const char *f;
    size_t fl;
    for (int c = 0; k < max && record_field(rec, n, c, &f, &fl); c++, k++) {
        at[k] = o;
        len[k] = unquote(f, fl, buf + o);
        o += len[k] + 1;
    }
    return k;
}

static void put_file(void *ctx, const char *p, size_t n)
{
    fwrite(p, 1, n, (FILE *)ctx);
}

/* Fields of a record, split once per row into reused buffers. */
typedef struct fields {
    char *buf;
    size_t cap, n, *at, *len, max;
} fields;

static tb_status fields_split(fields *fs, const char *rec, size_t n, tb_error *err)
{
    if (n + 1 > fs->cap) {
        char *b = realloc(fs->buf, n + 1);
        if (!b)
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        fs->buf = b;
        fs->cap = n + 1;
    }
    size_t want = 1;
    for (size_t i = 0; i < n; i++)
        want += rec[i] == ',';
    if (want > fs->max) {
        size_t *a = realloc(fs->at, want * sizeof *a), *l = a ? realloc(fs->len, want * sizeof *l) : NULL;
        if (a)
            fs->at = a;
        if (!a || !l)
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        fs->len = l;
        fs->max = want;
    }
    fs->n = split(rec, n, fs->buf, fs->at, fs->len, fs->max);
    return TB_OK;
}

static void fields_free(fields *fs)
{
    free(fs->buf);
    free(fs->at);
    free(fs->len);
}

/* What the JSON and table writers do first with a row: split the header
 * (its line end off) or the record into fs. */
static tb_status row_fields(fields *fs, const kept_row *r, tb_error *err)
{
    const char *rec = r->rec;
    size_t n = r->n;
    if (r->header)
        header_text(&rec, &n);
    return fields_split(fs, rec, n, err);
}

/* Field i of a record split into fs, as both writers read it: the value
 * as read (v, n; "" past the record's last field), the value trimmed
 * (t, tn), and whether that is a JSON number (num; integral: without
 * fraction or exponent). */
typedef struct field {
    const char *v, *t;
    size_t n, tn;
    int num, integral;
} field;

static field field_at(const fields *fs, size_t i)
{
    field f = {.v = i < fs->n ? fs->buf + fs->at[i] : "", .n = i < fs->n ? fs->len[i] : 0};
    f.t = f.v;
    f.tn = f.n;
    trim(&f.t, &f.tn);
    f.num = f.tn && json_number(f.t, f.tn, &f.integral);
    return f;
}

/* ---- JSON ------------------------------------------------------------------ */

typedef struct json_ctx {
    FILE *f;
    int merged;
    fields fs;
    char **keys;     /* the header's fields as JSON strings, made unique */
    size_t n_keys, rows;
} json_ctx;

/* key as a JSON string, with " (2)", " (3)", ... when an earlier key is the same. */
static char *json_key(json_ctx *c, const char *s, size_t n)
{
    for (int k = 1;; k++) {
        char suffix[16] = "";
        if (k > 1)
            snprintf(suffix, sizeof suffix, " (%d)", k);
        size_t sl = strlen(suffix), cap = (n + sl) * 6 + 3;
        char *out = malloc(cap);
        FILE *m = out ? fmemopen(out, cap, "w") : NULL;
        if (!m) {
            free(out);
            return NULL;
        }
        json_string_out(s, n, put_file, m);
        fclose(m);
        if (sl) { /* the suffix goes inside the closing quote */
            size_t ol = strlen(out);
            memcpy(out + ol - 1, suffix, sl);
            memcpy(out + ol - 1 + sl, "\"", 2);
        }
        int seen = 0;
        for (size_t i = 0; i < c->n_keys && !seen; i++)
            seen = !strcmp(c->keys[i], out);
        if (!seen)
            return out;
        free(out);
    }
}

/* The keys of the header's fields, split into c->fs. */
static tb_status json_header(json_ctx *c, tb_error *err)
{
    c->keys = calloc(c->fs.n + 1, sizeof *c->keys);
    if (!c->keys)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < c->fs.n + (size_t)c->merged; i++) {
        size_t f = i - (size_t)c->merged;
        char *key = c->merged && !i ? json_key(c, "Rank ID", 7) : json_key(c, c->fs.buf + c->fs.at[f], c->fs.len[f]);
        if (!key)
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        c->keys[c->n_keys++] = key;
    }
    return TB_OK;
}

static tb_status json_row(void *ctx, const kept_row *r, tb_error *err)
{
    json_ctx *c = ctx;
    tb_status st = row_fields(&c->fs, r, err);
    if (st || r->header)
        return st ? st : json_header(c, err);
    fputs(c->rows++ ? ",\n{" : "[\n{", c->f);
    size_t k = 0;
    if (c->merged)
        fprintf(c->f, "%s:%lld", c->keys[k++], (long long)r->rank);
    for (size_t i = 0; k < c->n_keys; i++, k++) {
        field f = field_at(&c->fs, i);
        fprintf(c->f, "%s%s:", k ? "," : "", c->keys[k]);
        if (f.num)
            fwrite(f.t, 1, f.tn, c->f);
        else
            json_string_out(f.v, f.n, put_file, c->f);
    }
    putc('}', c->f);
    return TB_OK;
}

tb_status kept_write_json(sqlite3 *db, const kept_sel *k, const char *path, tb_error *err)
{
    afile af;
    tb_status st = afile_open(path, &af, err);
    if (st)
        return st;
    json_ctx c = {.f = af.f, .merged = k->rank < 0};
    st = kept_each(db, k, json_row, &c, err);
    if (!st)
        fputs(c.rows ? "\n]\n" : "[]\n", af.f);
    for (size_t i = 0; i < c.n_keys; i++)
        free(c.keys[i]);
    free(c.keys);
    fields_free(&c.fs);
    if (st) {
        afile_abort(&af);
        return st;
    }
    return afile_commit(&af, err);
}

/* ---- a TEMP table for the workbook --------------------------------------- */

typedef struct table_ctx {
    sqlite3 *db;
    const char *table;
    int merged;
    fields fs;
    sqlite3_stmt *ins;
    size_t ncols;    /* the table's, Rank ID included */
    char *yaml;
    size_t cap, k;
} table_ctx;

/* Appends `      cN: {header: "TEXT"}` (TEXT as a YAML double-quoted scalar) to the YAML. */
static void yaml_header(table_ctx *c, size_t col, const char *s, size_t n)
{
    if (c->k < c->cap)
        c->k += (size_t)snprintf(c->yaml + c->k, c->cap - c->k, "      c%zu: {header: ", col);
    FILE *m = c->k < c->cap ? fmemopen(c->yaml + c->k, c->cap - c->k, "w") : NULL;
    if (m) { /* a JSON string is a YAML double-quoted scalar */
        json_string_out(s, n, put_file, m);
        long at = ftell(m);
        fclose(m);
        c->k += at > 0 ? (size_t)at : 0;
    }
    if (c->k < c->cap)
        c->k += (size_t)snprintf(c->yaml + c->k, c->cap - c->k, "}\n");
}

/* The table of the header's columns (split into c->fs), its insert and their YAML headers. */
static tb_status table_header(table_ctx *c, tb_error *err)
{
    tb_status st = TB_OK;
    c->ncols = c->fs.n + (size_t)c->merged;
    sqlite3_str *ct = sqlite3_str_new(c->db), *in = sqlite3_str_new(c->db);
    sqlite3_str_appendf(ct, "CREATE TEMP TABLE \"%w\" (", c->table);
    sqlite3_str_appendf(in, "INSERT INTO temp.\"%w\" VALUES (", c->table);
    for (size_t i = 0; i < c->ncols; i++) {
        sqlite3_str_appendf(ct, "%sc%lld", i ? ", " : "", (long long)i);
        sqlite3_str_appendf(in, "%s?", i ? ", " : "");
    }
    sqlite3_str_appendall(ct, ")");
    sqlite3_str_appendall(in, ")");
    char *cs = sqlite3_str_finish(ct), *is = sqlite3_str_finish(in);
    if (!cs || !is || sqlite3_exec(c->db, cs, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, is, -1, &c->ins, NULL) != SQLITE_OK)
        st = tb_error_set(err, TB_ERR_DB, "making the table of a kept file: %s", sqlite3_errmsg(c->db));
    sqlite3_free(cs);
    sqlite3_free(is);
    if (c->merged)
        yaml_header(c, 0, "Rank ID", 7);
    for (size_t i = 0; !st && i < c->fs.n; i++)
        yaml_header(c, i + (size_t)c->merged, c->fs.buf + c->fs.at[i], c->fs.len[i]);
    if (!st && c->k >= c->cap)
        st = tb_error_set(err, TB_ERR_NOMEM, "the columns of a kept file do not fit");
    return st;
}

/* The significant digits of a JSON number s[0..n) (leading zeros, sign and exponent not counted). */
static size_t sheet_digits(const char *s, size_t n)
{
    size_t d = 0, lead = 1;
    for (size_t i = 0; i < n && s[i] != 'e' && s[i] != 'E'; i++) {
        if (s[i] < '0' || s[i] > '9')
            continue;
        lead &= s[i] == '0';
        d += !lead;
    }
    return d;
}

static tb_status table_row(void *ctx, const kept_row *r, tb_error *err)
{
    table_ctx *c = ctx;
    tb_status st = row_fields(&c->fs, r, err);
    if (st || r->header)
        return st ? st : table_header(c, err);
    sqlite3_reset(c->ins);
    size_t k = 0;
    if (c->merged)
        sqlite3_bind_int64(c->ins, (int)++k, r->rank);
    for (size_t i = 0; k < c->ncols; i++) {
        field f = field_at(&c->fs, i);
        char *end;
        ++k;
        errno = 0;
        if (f.num && sheet_digits(f.t, f.tn) <= 15) {
            long long iv = f.integral ? strtoll(f.t, &end, 10) : 0;
            if (f.integral && !errno)
                sqlite3_bind_int64(c->ins, (int)k, iv);
            else
                sqlite3_bind_double(c->ins, (int)k, strtod(f.t, &end));
        }
        else if (f.num) /* more digits than a cell keeps: the number as text */
            sqlite3_bind_text(c->ins, (int)k, f.t, (int)f.tn, SQLITE_TRANSIENT);
        else
            sqlite3_bind_text(c->ins, (int)k, f.v, (int)f.n, SQLITE_TRANSIENT);
    }
    if (sqlite3_step(c->ins) != SQLITE_DONE)
        return tb_error_set(err, TB_ERR_DB, "filling the table of a kept file: %s", sqlite3_errmsg(c->db));
    return TB_OK;
}

tb_status kept_table(sqlite3 *db, const kept_sel *k, const char *table, char *yaml, size_t cap, tb_error *err)
{
    table_ctx c = {.db = db, .table = table, .merged = k->rank < 0, .yaml = yaml, .cap = cap};
    yaml[0] = 0;
    tb_status st = kept_each(db, k, table_row, &c, err);
    sqlite3_finalize(c.ins);
    fields_free(&c.fs);
    return st;
}
