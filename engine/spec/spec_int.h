/* SPDX-License-Identifier: MIT */
/*
 * spec_int.h - what the spec loader's two files share (private to spec/).
 *
 * spec.c reads a spec's top level and owns the checking helpers; spec_report.c
 * reads the entries of `reports`. Both walk the positioned tree of
 * specnode.h through one loader and report every problem at its line and
 * column with these helpers.
 */
#ifndef TB_SPEC_INT_H
#define TB_SPEC_INT_H

#include <stddef.h>

#include "spec/spec.h"
#include "spec/specnode.h"
#include "tracebook/error.h"
#include "tracebook/spec.h"

/* The largest spec or SQL file read. */
#define MAX_SPEC_BYTES (64u << 20)

/* Where a report's id and explicit sheet name were written (for duplicate messages). */
typedef struct report_aux {
    long id_line, id_col;
    long sheet_line, sheet_col; /* 0 when the sheet came from a built-in or is the default */
    long scope_line, scope_col; /* 0 when the scope came from a built-in or is the default */
} report_aux;

typedef struct loader {
    const char *file;          /* spec->path: the file every position here is in */
    tb_spec *spec;
    tb_error *err;
    void (*warn)(void *ctx, const char *msg);
    void *ctx;
    int depth;                 /* 0: the user's spec; +1 per built-in file loaded for use: */
    const specnode *params;    /* the spec-wide params node, or NULL */
    tb_spec **builtins;        /* parsed built-in files by tb_builtins() index (lazily), or NULL */
    size_t n_builtins;
    report_aux *aux;
    const specnode *wb_sheets; /* workbook.sheets, checked once the reports are known */
    /* Loads a built-in file for `use:` (spec_load_text: the reports reader
     * calls back into the loader that called it). */
    tb_status (*load)(const char *name, const char *text, size_t len, int depth,
                      void (*warn)(void *ctx, const char *msg), void *ctx, tb_spec **out, tb_error *err);
} loader;

/* ---- spec_check.c: checking helpers ---- */

/* Fills L->err with "out of memory". Returns TB_ERR_NOMEM. */
tb_status spec_nomem(loader *L);
/* Fills L->err with a parse error at line:col of the spec. Returns TB_ERR_PARSE. */
__attribute__((format(printf, 4, 5))) tb_status spec_fail_pos(loader *L, long line, long col, const char *fmt, ...);
/* spec_fail_pos at a node's, or a mapping key's, position. */
#define fail_node(L, n, ...) spec_fail_pos((L), (n)->line, (n)->column, __VA_ARGS__)
#define fail_key(L, p, ...) spec_fail_pos((L), (p)->line, (p)->column, __VA_ARGS__)
/* "a, b, c" from a NULL-terminated list, into buf (returned). */
const char *spec_join(const char *const *names, char *buf, size_t cap);
/* 1 when s is one of the NULL-terminated names. */
int spec_in_list(const char *s, const char *const *names);
/* What n is, for messages ("a list", "the number 3"), into buf (returned). */
const char *spec_describe(const specnode *n, char *buf, size_t cap);
/* " (did you mean 'x'?)" for the allowed name nearest key, "" when none is near (in buf). */
const char *spec_did_you_mean(const char *key, const char *const *allowed, char *buf, size_t cap);
/* Fails on the first key of map not in allowed, naming the likely one. */
tb_status spec_check_keys(loader *L, const specnode *map, const char *where, const char *const *allowed);
/* Fails unless n is a mapping. */
tb_status spec_need_map(loader *L, const specnode *n, const char *what);
/* 1 when n is a scalar usable as text: a string, or a number as written. */
int spec_is_text(const specnode *n);
/* Sets *out to a new copy of n's text (freeing the old value); n must be a string. */
tb_status spec_get_str(loader *L, const specnode *n, const char *what, char **out);
/* Like spec_get_str, but the string must not be empty. */
tb_status spec_get_nonempty(loader *L, const specnode *n, const char *what, char **out);
/* Items of a "string or list" value: n itself (through *one), or the list's items (borrowed). */
tb_status spec_str_or_list(loader *L, const specnode *n, const char *what, specnode *const **items,
                          size_t *count, const specnode **one);
/* 1 when s is a SQL identifier (param names, table names). */
int spec_is_ident(const char *s);
/* 1 when s is a file-name-safe report id: [A-Za-z0-9_.-]+ and not only dots. */
int spec_is_report_id(const char *s);
/* Fails when a column reference (columns key, sort key, chart column) carries a type suffix. */
tb_status spec_check_base_name(loader *L, long line, long col, const char *name);
/* Frees what r holds (not r itself). */
void spec_report_free(tb_spec_report *r);
/* Frees an advice (NULL is fine). */
void spec_advice_free(tb_spec_advice *a);

/* ---- spec.c: params and loading ---- */

/* Sets p's value from scalar v, converted to p's type; why is appended to the error message. */
tb_status spec_set_value(loader *L, tb_param *p, const specnode *v, const char *why);
/* Parses a params mapping into a new array (freed with the report or spec). */
tb_status spec_parse_params(loader *L, const specnode *n, tb_param **out, size_t *count);
/* Loads a spec from text (name: its file, for positions; depth: how many
 * `use` levels deep). *out: returns new (free with tb_spec_free). */
tb_status spec_load_text(const char *name, const char *text, size_t len, int depth,
                         void (*warn)(void *ctx, const char *msg), void *ctx, tb_spec **out, tb_error *err);

/* ---- spec_report.c: reports ---- */

/* An `outputs` value (a format or a list of them) as a mask of TB_OUT_* bits. */
tb_status spec_parse_outputs(loader *L, const specnode *n, unsigned *mask);
/* Reads a whole file into a new NUL-terminated buffer (free with free()).
 * Returns 0, or an errno value. */
int spec_read_all(const char *path, char **out, size_t *len);
/* ---- spec_advice.c: advisor rules ---- */

/* The `advice:` pair of a report into r->advice (a `use:` entry's replaces the keys it names). */
tb_status spec_parse_advice(loader *L, const specnode_pair *pair, tb_spec_report *r);
/* Copies src's advice into dst (positions in dst->origin). Returns 0 or -1 (no memory). */
int spec_advice_copy(tb_spec_report *dst, const tb_spec_report *src);

/* The `reports` list into L->spec->reports. */
tb_status spec_parse_reports(loader *L, const specnode *n);

#endif
