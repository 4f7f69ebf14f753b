/* SPDX-License-Identifier: MIT */
/*
 * spec_check.c - what the spec loader's readers share (spec_int.h): the
 * checks of a node's kind and value with their messages, typed params and
 * their values, the `outputs` list, reading a file whole, and freeing a
 * spec. spec.c reads a spec's top level and spec_report.c its reports;
 * both use these, and these use neither.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "metrics/classes.h"
#include "metrics/options.h"
#include "spec/spec.h"
#include "spec/spec_int.h"
#include "spec/specnode.h"
#include "tracebook/spec.h"
#include "util/str.h"

static const char *const param_keys[] = {"type", "default", "help", NULL};
static const char *const param_types[] = {"int", "real", "text", "bool", NULL};
/* Column type suffixes (columns.h tb_col_type): options and sort keys name the base column. */
static const char *const type_suffixes[] = {":dur_ns", ":ts_ns", ":ratio_%", ":mem_B", ":rank", NULL};

/* ---- small helpers -------------------------------------------------------- */

tb_status spec_nomem(loader *L)
{
    return tb_error_set(L->err, TB_ERR_NOMEM, "out of memory");
}

/* Fills err with a parse error at line:col of the spec. Returns TB_ERR_PARSE. */
tb_status spec_fail_pos(loader *L, long line, long col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tb_error_at(L->err, TB_ERR_PARSE, L->file, line, col, -1, "%s", msg);
}


/* "a, b, c" from a NULL-terminated list, into buf. */
const char *spec_join(const char *const *names, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; names[i] && at < cap; i++) {
        int w = snprintf(buf + at, cap - at, "%s%s", i ? ", " : "", names[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return buf;
}

int spec_in_list(const char *s, const char *const *names)
{
    for (size_t i = 0; names[i]; i++)
        if (strcmp(s, names[i]) == 0)
            return 1;
    return 0;
}

/* " (did you mean 'k'?)" for the allowed name nearest to key when it is a
 * likely typo (one edit for short keys, two from 6 characters, three from
 * 12), else "". Written into buf. */
const char *spec_did_you_mean(const char *key, const char *const *allowed, char *buf, size_t cap)
{
    size_t n = 0;
    while (allowed[n])
        n++;
    const char *best = tb_suggest(key, allowed, n);
    if (best)
        snprintf(buf, cap, " (did you mean '%s'?)", best);
    else
        buf[0] = 0;
    return buf;
}

const char *spec_describe(const specnode *n, char *buf, size_t cap)
{
    return specnode_describe(n, buf, cap);
}

/* Fails on the first key of map not in allowed: "unknown key 'k' in WHERE; expected one of: ...". */
tb_status spec_check_keys(loader *L, const specnode *map, const char *where, const char *const *allowed)
{
    for (size_t i = 0; i < map->n; i++) {
        if (!spec_in_list(map->pairs[i].key, allowed)) {
            char list[400], near[96];
            return fail_key(L, &map->pairs[i], "unknown key '%.60s' in %s%s; expected one of: %s", map->pairs[i].key,
                            where, spec_did_you_mean(map->pairs[i].key, allowed, near, sizeof near),
                            spec_join(allowed, list, sizeof list));
        }
    }
    return TB_OK;
}

tb_status spec_need_map(loader *L, const specnode *n, const char *what)
{
    char d[64];
    if (n->kind != SPECNODE_MAP)
        return fail_node(L, n, "'%s' must be a mapping, got %s", what, spec_describe(n, d, sizeof d));
    return TB_OK;
}

/* 1 when n is a scalar usable as text: a string, or a number as written (`title: 2024`). */
int spec_is_text(const specnode *n)
{
    return n->kind == SPECNODE_SCALAR &&
           (n->type == SPECNODE_STR || n->type == SPECNODE_INT || n->type == SPECNODE_REAL) &&
           strlen(n->text) == n->len;
}

/* Sets *out to a new copy of n's text (freeing the old value); n must be a string. */
tb_status spec_get_str(loader *L, const specnode *n, const char *what, char **out)
{
    char d[64];
    if (!spec_is_text(n))
        return fail_node(L, n, "'%s' must be a string, got %s", what, spec_describe(n, d, sizeof d));
    char *s = strdup(n->text);
    if (!s)
        return spec_nomem(L);
    free(*out);
    *out = s;
    return TB_OK;
}

/* Like get_str, but the string must not be empty. */
tb_status spec_get_nonempty(loader *L, const specnode *n, const char *what, char **out)
{
    if (spec_is_text(n) && n->len == 0)
        return fail_node(L, n, "'%s' must not be empty", what);
    return spec_get_str(L, n, what, out);
}

/* Items of a "string or list" value: n itself, or the list's items. */
tb_status spec_str_or_list(loader *L, const specnode *n, const char *what, specnode *const **items,
                          size_t *count, const specnode **one)
{
    char d[64];
    if (n->kind == SPECNODE_SEQ) {
        *items = n->items;
        *count = n->n;
        return TB_OK;
    }
    if (!spec_is_text(n))
        return fail_node(L, n, "'%s' must be a string or a list of strings, got %s", what, spec_describe(n, d, sizeof d));
    *one = n;
    *items = (specnode *const *)one;
    *count = 1;
    return TB_OK;
}

/* 1 when s is a SQL identifier (param names, table names). */
int spec_is_ident(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

/* 1 when s is a file-name-safe report id: [A-Za-z0-9_.-]+ and not only dots. */
int spec_is_report_id(const char *s)
{
    int non_dot = 0;
    if (!*s)
        return 0;
    for (; *s; s++) {
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '.' || *s == '-'))
            return 0;
        non_dot |= *s != '.';
    }
    return non_dot;
}

/* The type suffix that name ends with (":dur_ns", ...), or NULL. */
static const char *type_suffix(const char *name)
{
    for (size_t i = 0; type_suffixes[i]; i++)
        if (strlen(name) > strlen(type_suffixes[i]) && str_ends(name, type_suffixes[i]))
            return type_suffixes[i];
    return NULL;
}

/* Fails when a column reference (columns key, sort key, chart column) carries a type suffix. */
tb_status spec_check_base_name(loader *L, long line, long col, const char *name)
{
    const char *suf = type_suffix(name);
    if (!suf)
        return TB_OK;
    int base = (int)(strlen(name) - strlen(suf));
    return spec_fail_pos(L, line, col, "column '%.60s' must be named without its type suffix: '%.*s'", name,
                    base > 60 ? 60 : base, name);
}

/* ---- freeing ---------------------------------------------------------------- */

static void param_free(tb_param *p)
{
    free(p->name);
    free(p->s);
    free(p->help);
}

void spec_advice_free(tb_spec_advice *a)
{
    if (!a)
        return;
    free(a->reason);
    free(a->message);
    free(a->suggestion);
    free(a->source);
    free(a);
}

void spec_report_free(tb_spec_report *r)
{
    free(r->id);
    free(r->title);
    free(r->description);
    free(r->use);
    free(r->origin);
    for (size_t i = 0; i < r->n_requires; i++)
        free(r->requires[i]);
    free(r->requires);
    free(r->sql);
    free(r->sql_file);
    for (size_t i = 0; i < r->n_params; i++)
        param_free(&r->params[i]);
    free(r->params);
    for (size_t i = 0; i < r->n_sort; i++)
        free(r->sort[i].column);
    free(r->sort);
    for (size_t i = 0; i < r->n_columns; i++) {
        free(r->columns[i].name);
        free(r->columns[i].header);
        free(r->columns[i].format);
    }
    free(r->columns);
    free(r->xlsx_sheet);
    free(r->chart_type);
    free(r->chart_categories);
    free(r->chart_series_by);
    for (size_t i = 0; i < r->n_chart_values; i++)
        free(r->chart_values[i]);
    free(r->chart_values);
    for (size_t i = 0; i < r->n_conds; i++)
        free(r->conds[i].column);
    free(r->conds);
    for (size_t i = 0; i < r->n_key; i++)
        free(r->key[i]);
    free(r->key);
    for (size_t i = 0; i < r->n_drop_empty; i++)
        free(r->drop_empty[i]);
    free(r->drop_empty);
    free(r->pivot_key);
    free(r->pivot_names);
    free(r->pivot_values);
    free(r->pivot_missing);
    for (size_t i = 0; i < r->n_rules; i++)
        free(r->rules[i].column);
    free(r->rules);
    spec_advice_free(r->advice);
}

void tb_spec_free(tb_spec *spec)
{
    if (!spec)
        return;
    free(spec->path);
    for (size_t i = 0; i < spec->json_process.n_layers; i++)
        free(spec->json_process.layers[i]);
    free(spec->json_process.layers);
    for (size_t i = 0; i < spec->n_params; i++)
        param_free(&spec->params[i]);
    free(spec->params);
    free(spec->step_trace_policy);
    free(spec->metrics_json);
    metrics_options_finish(spec->metrics);
    free(spec->metrics);
    for (size_t i = 0; i < spec->n_reports; i++)
        spec_report_free(&spec->reports[i]);
    free(spec->reports);
    free(spec->workbook_file);
    free(spec->html_file);
    free(spec->html_title);
    for (size_t i = 0; i < spec->n_workbook_sheets; i++)
        free(spec->workbook_sheets[i]);
    free(spec->workbook_sheets);
    free(spec);
}

/* ---- params ------------------------------------------------------------------ */

static const char *type_name(tb_param_type t)
{
    switch (t) {
    case TB_PARAM_INT: return "an int";
    case TB_PARAM_REAL: return "a real";
    case TB_PARAM_TEXT: return "text";
    case TB_PARAM_BOOL: return "a bool";
    }
    return "?";
}

/* Sets p's value from scalar v, converted to p's type; why is appended to the error message. */
tb_status spec_set_value(loader *L, tb_param *p, const specnode *v, const char *why)
{
    char d[64];
    int ok = v->kind == SPECNODE_SCALAR;
    if (ok) {
        switch (p->type) {
        case TB_PARAM_INT:
            ok = v->type == SPECNODE_INT;
            p->i = v->i;
            break;
        case TB_PARAM_REAL:
            ok = v->type == SPECNODE_INT || v->type == SPECNODE_REAL;
            p->d = v->type == SPECNODE_INT ? (double)v->i : v->d;
            break;
        case TB_PARAM_BOOL:
            ok = v->type == SPECNODE_BOOL;
            p->i = v->i;
            break;
        case TB_PARAM_TEXT:
            ok = spec_is_text(v);
            if (ok) {
                char *s = strdup(v->text);
                if (!s)
                    return spec_nomem(L);
                free(p->s);
                p->s = s;
            }
            break;
        }
    }
    if (!ok)
        return fail_node(L, v, "param '%s' must be %s%s, got %s", p->name, type_name(p->type), why,
                         spec_describe(v, d, sizeof d));
    p->has_value = 1;
    return TB_OK;
}

/* Parses one `name: value` or `name: {type, default, help}` into p (zeroed by the caller). */
static tb_status parse_param(loader *L, const specnode_pair *pair, tb_param *p)
{
    char d[64], list[128];
    const specnode *v = pair->value;
    tb_status st;
    if (!spec_is_ident(pair->key))
        return fail_key(L, pair, "param name '%.60s' must be letters, digits and '_', not starting with a digit",
                        pair->key);
    if (!(p->name = strdup(pair->key)))
        return spec_nomem(L);
    p->pos = (tb_spec_pos){.file = L->file, .line = pair->line, .column = pair->column};
    if (v->kind == SPECNODE_SCALAR) {
        switch (v->type) {
        case SPECNODE_INT: p->type = TB_PARAM_INT; break;
        case SPECNODE_REAL: p->type = TB_PARAM_REAL; break;
        case SPECNODE_BOOL: p->type = TB_PARAM_BOOL; break;
        case SPECNODE_STR: p->type = TB_PARAM_TEXT; break;
        case SPECNODE_NULL:
            return fail_node(L, v, "param '%s' has no value; give one, or {type: int} for a param without a default",
                             p->name);
        }
        return spec_set_value(L, p, v, "");
    }
    if (v->kind != SPECNODE_MAP)
        return fail_node(L, v, "param '%s' must be a value or a mapping with type, default and help, got %s", p->name,
                         spec_describe(v, d, sizeof d));
    char where[96];
    snprintf(where, sizeof where, "param '%.60s'", p->name);
    if ((st = spec_check_keys(L, v, where, param_keys)))
        return st;
    const specnode_pair *t = specnode_get(v, "type"), *def = specnode_get(v, "default"),
                        *help = specnode_get(v, "help");
    if (def && def->value->kind == SPECNODE_SCALAR && def->value->type == SPECNODE_NULL)
        def = NULL; /* `default: null`: no default */
    if (t) {
        const specnode *tv = t->value;
        size_t k = 0;
        while (param_types[k] && !(spec_is_text(tv) && strcmp(tv->text, param_types[k]) == 0))
            k++;
        if (!param_types[k])
            return fail_node(L, tv, "unknown param type %s; expected one of: %s", spec_describe(tv, d, sizeof d),
                             spec_join(param_types, list, sizeof list));
        p->type = (tb_param_type[]){TB_PARAM_INT, TB_PARAM_REAL, TB_PARAM_TEXT, TB_PARAM_BOOL}[k];
    } else if (def && def->value->kind == SPECNODE_SCALAR) {
        switch (def->value->type) {
        case SPECNODE_INT: p->type = TB_PARAM_INT; break;
        case SPECNODE_REAL: p->type = TB_PARAM_REAL; break;
        case SPECNODE_BOOL: p->type = TB_PARAM_BOOL; break;
        default: p->type = TB_PARAM_TEXT; break;
        }
    } else if (!def) {
        return fail_node(L, v, "param '%s' needs 'type' or 'default'", p->name);
    }
    if (help && (st = spec_get_str(L, help->value, "help", &p->help)))
        return st;
    if (def && (st = spec_set_value(L, p, def->value, "")))
        return st;
    return TB_OK;
}

/* Parses a params mapping into a new array. */
tb_status spec_parse_params(loader *L, const specnode *n, tb_param **out, size_t *count)
{
    tb_status st;
    if ((st = spec_need_map(L, n, "params")))
        return st;
    if (n->n == 0)
        return TB_OK;
    *out = calloc(n->n, sizeof **out);
    if (!*out)
        return spec_nomem(L);
    for (size_t i = 0; i < n->n; i++) {
        *count = i + 1;
        if ((st = parse_param(L, &n->pairs[i], &(*out)[i])))
            return st;
    }
    return TB_OK;
}

/* ---- outputs and files ------------------------------------------------------ */

/* The names of the formats (tracebook/columns.h), NULL-terminated. */
static const char *const *output_names(void)
{
    static const char *names[9];
    for (unsigned i = 0; i < 8 && tb_out_format_name(1u << i); i++)
        names[i] = tb_out_format_name(1u << i);
    return names;
}

tb_status spec_parse_outputs(loader *L, const specnode *n, unsigned *mask)
{
    specnode *const *items = NULL;
    const specnode *one = NULL;
    size_t count = 0;
    char d[64], list[64];
    tb_status st = spec_str_or_list(L, n, "outputs", &items, &count, &one);
    if (st)
        return st;
    if (count == 0)
        return fail_node(L, n, "'outputs' must name at least one format; expected some of: %s",
                         spec_join(output_names(), list, sizeof list));
    unsigned m = 0;
    for (size_t i = 0; i < count; i++) {
        const specnode *it = items[i];
        unsigned f = spec_is_text(it) ? tb_out_format_named(it->text, it->len) : 0;
        if (!f)
            return fail_node(L, it, "unknown output format %s; expected one of: %s", spec_describe(it, d, sizeof d),
                             spec_join(output_names(), list, sizeof list));
        m |= f;
    }
    *mask = m;
    return TB_OK;
}

/* Reads a whole file into a new NUL-terminated buffer. Returns 0, or an errno value. */
int spec_read_all(const char *path, char **out, size_t *len)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int e = 0;
    if (!buf) {
        fclose(f);
        return ENOMEM;
    }
    for (;;) {
        if (cap - n < 2) {
            if (cap >= MAX_SPEC_BYTES) {
                e = EFBIG;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                e = ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                e = errno ? errno : EIO;
            break;
        }
    }
    fclose(f);
    if (e) {
        free(buf);
        return e;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 0;
}
