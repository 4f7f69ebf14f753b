/* SPDX-License-Identifier: MIT */
/*
 * spec_report.c - reads and checks the entries of a spec's `reports` list.
 *
 * Each entry is a mapping walked into a tb_spec_report: its id, SQL (inline
 * or sql_file), params, outputs and the options of its output (sort, limit,
 * columns, pivot, xlsx charts and conditional formats, compare's key,
 * normalize and regressions rules). `use: NAME` copies a built-in report
 * (loaded through spec_load_text) and applies the keys next to it. Every
 * problem is reported at its line and column with the helpers of spec.c;
 * spec_int.h is what the two files share.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "spec/spec_int.h"
#include "spec/specnode.h"
#include "tracebook/spec.h"
#include "util/str.h"

#define MAX_USE_DEPTH 4

static const char *const report_keys[] = {"id",     "title",   "description", "use",   "requires",
                                          "sql",    "sql_file", "params",     "outputs", "sort",
                                          "limit",  "header_units", "columns", "xlsx",  "key",
                                          "normalize", "regressions", "drop_empty", "pivot", "scope", "advice", "json_shape",
                                          "baseline", NULL};
static const char *const use_keys[] = {"use",    "id",   "title", "description",  "params",  "outputs",
                                       "sort",   "limit", "header_units", "columns", "xlsx", "requires",
                                       "key",    "normalize", "regressions", "drop_empty", "pivot", "scope", "advice", "json_shape",
                                       "baseline", NULL};
static const char *const rule_keys[] = {"column", "worse", "relative", "absolute", "min_count", "mad", "nights", NULL};
static const char *const normalize_names[] = {"strip_template_args", "strip_hashes", "strip_trailing_numbers",
                                              NULL}; /* TB_NORM_* bit order */
static const char *const column_keys[] = {"header", "format", "width", NULL};
static const char *const pivot_keys[] = {"key", "names", "values", "missing", NULL};
static const char *const xlsx_keys[] = {"sheet", "chart", "conditional", NULL};
static const char *const chart_keys[] = {"type", "categories", "values", "position", "series_by", NULL};
static const char *const chart_positions[] = {"right", "below", NULL};
static const char *const chart_types[] = {"bar", "stacked_bar", "column", "stacked_column", "line", "pie", NULL};
static const char *const cond_keys[] = {"column", "type", "op", "value", "top", NULL};
static const char *const cond_types[] = {"threshold", "top", "data_bar", "color_scale", NULL};
static const char *const cond_ops[] = {"gt", "ge", "lt", "le", "eq", "ne", NULL}; /* tb_cond_op order */

/* ---- report parts shared by plain and used reports --------------------------- */


static tb_status parse_requires(loader *L, const specnode *n, tb_spec_report *r)
{
    specnode *const *items = NULL;
    const specnode *one = NULL;
    size_t count = 0;
    char d[64];
    tb_status st = spec_str_or_list(L, n, "requires", &items, &count, &one);
    if (st)
        return st;
    for (size_t i = 0; i < r->n_requires; i++)
        free(r->requires[i]);
    free(r->requires);
    r->requires = NULL;
    r->n_requires = 0;
    if (count == 0)
        return TB_OK;
    if (!(r->requires = calloc(count, sizeof *r->requires)))
        return spec_nomem(L);
    for (size_t i = 0; i < count; i++) {
        if (!spec_is_text(items[i]) || !spec_is_ident(items[i]->text))
            return fail_node(L, items[i], "'requires' names tables or views, got %s", spec_describe(items[i], d, sizeof d));
        if (!(r->requires[i] = strdup(items[i]->text)))
            return spec_nomem(L);
        r->n_requires = i + 1;
    }
    return TB_OK;
}

static tb_status parse_sort(loader *L, const specnode *n, tb_spec_report *r)
{
    specnode *const *items = NULL;
    const specnode *one = NULL;
    size_t count = 0;
    char d[64];
    tb_status st = spec_str_or_list(L, n, "sort", &items, &count, &one);
    if (st)
        return st;
    for (size_t i = 0; i < r->n_sort; i++)
        free(r->sort[i].column);
    free(r->sort);
    r->sort = NULL;
    r->n_sort = 0;
    if (count == 0)
        return TB_OK;
    if (!(r->sort = calloc(count, sizeof *r->sort)))
        return spec_nomem(L);
    for (size_t i = 0; i < count; i++) {
        const specnode *it = items[i];
        if (!spec_is_text(it))
            return fail_node(L, it, "'sort' keys must be column names, got %s", spec_describe(it, d, sizeof d));
        int desc = it->text[0] == '-';
        const char *name = it->text + desc;
        if (!*name)
            return fail_node(L, it, "sort key '%s' names no column", it->text);
        if ((st = spec_check_base_name(L, it->line, it->column, name)))
            return st;
        if (!(r->sort[i].column = strdup(name)))
            return spec_nomem(L);
        r->sort[i].desc = desc;
        r->sort[i].pos = (tb_spec_pos){.file = L->file, .line = it->line, .column = it->column};
        r->n_sort = i + 1;
    }
    return TB_OK;
}

static int list_index(const char *const *list, const char *text);

/* Parses a list of column base names (`key:`, `drop_empty:`) into *v, replacing what it held. */
static tb_status parse_names(loader *L, const specnode *n, const char *what, char ***v, size_t *nv)
{
    specnode *const *items = NULL;
    const specnode *one = NULL;
    size_t count = 0;
    char d[64];
    tb_status st = spec_str_or_list(L, n, what, &items, &count, &one);
    if (st)
        return st;
    for (size_t i = 0; i < *nv; i++)
        free((*v)[i]);
    free(*v);
    *v = NULL;
    *nv = 0;
    if (count == 0)
        return fail_node(L, n, "'%s' names no column", what);
    if (!(*v = calloc(count, sizeof **v)))
        return spec_nomem(L);
    for (size_t i = 0; i < count; i++) {
        const specnode *it = items[i];
        if (!spec_is_text(it) || !it->text[0])
            return fail_node(L, it, "'%s' entries must be column names, got %s", what, spec_describe(it, d, sizeof d));
        if ((st = spec_check_base_name(L, it->line, it->column, it->text)))
            return st;
        if (!((*v)[i] = strdup(it->text)))
            return spec_nomem(L);
        *nv = i + 1;
    }
    return TB_OK;
}

/* Parses `pivot:` (columns named by the data): key, names and values required, missing optional. */
static tb_status parse_pivot(loader *L, const specnode *n, tb_spec_report *r)
{
    tb_status st;
    if ((st = spec_need_map(L, n, "pivot")) || (st = spec_check_keys(L, n, "pivot", pivot_keys)))
        return st;
    static const char *const need[] = {"key", "names", "values"};
    char **dst[] = {&r->pivot_key, &r->pivot_names, &r->pivot_values};
    for (int i = 0; i < 3; i++) {
        const specnode_pair *p = specnode_get(n, need[i]);
        if (!p)
            return fail_node(L, n, "'pivot' needs '%s'", need[i]);
        if ((st = spec_get_nonempty(L, p->value, need[i], dst[i])))
            return st;
    }
    const specnode_pair *p = specnode_get(n, "missing");
    if (p && (st = spec_get_str(L, p->value, "missing", &r->pivot_missing)))
        return st;
    return TB_OK;
}

/* Parses `normalize:` into r->normalize. */
static tb_status parse_normalize(loader *L, const specnode *n, tb_spec_report *r)
{
    specnode *const *items = NULL;
    const specnode *one = NULL;
    size_t count = 0;
    char d[64], buf[256];
    tb_status st = spec_str_or_list(L, n, "normalize", &items, &count, &one);
    if (st)
        return st;
    r->normalize = 0;
    for (size_t i = 0; i < count; i++) {
        const specnode *it = items[i];
        int k = spec_is_text(it) ? list_index(normalize_names, it->text) : -1;
        if (k < 0)
            return fail_node(L, it, "unknown normalize step %s; expected one of: %s", spec_describe(it, d, sizeof d),
                             spec_join(normalize_names, buf, sizeof buf));
        r->normalize |= 1u << k;
    }
    return TB_OK;
}

/* A threshold "5%" (or a number: percent) into *frac. Returns 0, or -1 when malformed. */
static int percent_value(const specnode *v, double *frac)
{
    char *end = NULL;
    double x;
    if (v->kind != SPECNODE_SCALAR)
        return -1;
    if (v->type == SPECNODE_INT || v->type == SPECNODE_REAL) {
        x = v->type == SPECNODE_INT ? (double)v->i : v->d;
    } else if (v->type == SPECNODE_STR) {
        x = strtod(v->text, &end);
        if (end == v->text || strcmp(end, "%") != 0)
            return -1;
    } else {
        return -1;
    }
    if (!(x >= 0) || x > 1e9)
        return -1;
    *frac = x / 100.0;
    return 0;
}

/* An absolute threshold: a number (the column's written unit) or a time "10us" (into ns). */
static int absolute_value(const specnode *v, double *x, int *is_time)
{
    static const char *const units[] = {"ns", "us", "ms", "s", NULL};
    static const double scale[] = {1, 1e3, 1e6, 1e9};
    *is_time = 0;
    if (v->kind != SPECNODE_SCALAR)
        return -1;
    if (v->type == SPECNODE_INT || v->type == SPECNODE_REAL) {
        *x = v->type == SPECNODE_INT ? (double)v->i : v->d;
        return *x >= 0 ? 0 : -1;
    }
    if (v->type != SPECNODE_STR)
        return -1;
    char *end = NULL;
    double y = strtod(v->text, &end);
    if (end == v->text || !(y >= 0) || y > 1e15)
        return -1;
    int k = list_index(units, end);
    if (k < 0)
        return -1;
    *x = y * scale[k];
    *is_time = 1;
    return 0;
}

/* Parses `regressions:`: a list of rules, replacing r's (an empty list: no rules). */
static tb_status parse_rules(loader *L, const specnode *n, tb_spec_report *r)
{
    char d[64];
    tb_status st;
    if (n->kind != SPECNODE_SEQ)
        return fail_node(L, n, "'regressions' must be a list of rules, got %s", spec_describe(n, d, sizeof d));
    for (size_t i = 0; i < r->n_rules; i++)
        free(r->rules[i].column);
    free(r->rules);
    r->rules = NULL;
    r->n_rules = 0;
    r->has_rules = 1;
    if (n->n == 0)
        return TB_OK;
    if (!(r->rules = calloc(n->n, sizeof *r->rules)))
        return spec_nomem(L);
    for (size_t i = 0; i < n->n; i++) {
        const specnode *m = n->items[i];
        if ((st = spec_need_map(L, m, "a regressions rule")) || (st = spec_check_keys(L, m, "a regressions rule", rule_keys)))
            return st;
        tb_spec_rule *u = &r->rules[i];
        r->n_rules = i + 1;
        *u = (tb_spec_rule){.rel = 0.05, .mad = TB_RULE_MAD, .nights = TB_RULE_NIGHTS, .pos = {.file = L->file, .line = m->line, .column = m->column}};
        const specnode_pair *p = specnode_get(m, "column");
        if (!p)
            return fail_node(L, m, "a regressions rule needs 'column'");
        if ((st = spec_get_nonempty(L, p->value, "column", &u->column)) ||
            (st = spec_check_base_name(L, p->value->line, p->value->column, u->column)))
            return st;
        if ((p = specnode_get(m, "worse"))) {
            const specnode *v = p->value;
            if (!spec_is_text(v) || (strcmp(v->text, "higher") && strcmp(v->text, "lower")))
                return fail_node(L, v, "'worse' must be higher or lower, got %s", spec_describe(v, d, sizeof d));
            u->worse_lower = !strcmp(v->text, "lower");
        }
        if ((p = specnode_get(m, "relative")) && percent_value(p->value, &u->rel))
            return fail_node(L, p->value, "'relative' must be a percentage such as 5%%, got %s",
                             spec_describe(p->value, d, sizeof d));
        if ((p = specnode_get(m, "absolute")) && absolute_value(p->value, &u->abs, &u->abs_time))
            return fail_node(L, p->value, "'absolute' must be a number or a time such as 10us, got %s",
                             spec_describe(p->value, d, sizeof d));
        if ((p = specnode_get(m, "min_count"))) {
            const specnode *v = p->value;
            if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_INT || v->i < 0)
                return fail_node(L, v, "'min_count' must be a non-negative integer, got %s", spec_describe(v, d, sizeof d));
            u->min_count = v->i;
        }
        if ((p = specnode_get(m, "mad"))) {
            const specnode *v = p->value;
            double x = v->kind != SPECNODE_SCALAR ? -1 : v->type == SPECNODE_INT ? (double)v->i
                                                      : v->type == SPECNODE_REAL ? v->d : -1;
            if (!(x >= 0) || x > 1000)
                return fail_node(L, v, "'mad' must be a number from 0 to 1000 (how many scaled MADs), got %s",
                                 spec_describe(v, d, sizeof d));
            u->mad = x;
        }
        if ((p = specnode_get(m, "nights"))) {
            const specnode *v = p->value;
            if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_INT || v->i < 5 || v->i > 1000)
                return fail_node(L, v, "'nights' must be an integer from 5 to 1000, got %s", spec_describe(v, d, sizeof d));
            u->nights = v->i;
        }
    }
    return TB_OK;
}

/* Parses `columns:`, merging by name into r->columns (an entry replaces the same-named one). */
static tb_status parse_columns(loader *L, const specnode *n, tb_spec_report *r)
{
    tb_status st;
    char d[64];
    if ((st = spec_need_map(L, n, "columns")))
        return st;
    for (size_t i = 0; i < n->n; i++) {
        const specnode_pair *p = &n->pairs[i];
        const specnode *v = p->value;
        if ((st = spec_check_base_name(L, p->line, p->column, p->key)))
            return st;
        if (!(v->kind == SPECNODE_MAP || (v->kind == SPECNODE_SCALAR && v->type == SPECNODE_NULL)))
            return fail_node(L, v, "column '%.60s' must be a mapping with header, format and width, got %s", p->key,
                             spec_describe(v, d, sizeof d));
        char where[96];
        snprintf(where, sizeof where, "column '%.60s'", p->key);
        if (v->kind == SPECNODE_MAP && (st = spec_check_keys(L, v, where, column_keys)))
            return st;
        tb_spec_column c = {.pos = {.file = L->file, .line = p->line, .column = p->column}};
        const specnode_pair *h = specnode_get(v, "header"), *f = specnode_get(v, "format"), *w = specnode_get(v, "width");
        if (w) {
            const specnode *wv = w->value;
            if (wv->kind != SPECNODE_SCALAR || wv->type != SPECNODE_INT || wv->i < 0 || wv->i > 255)
                return fail_node(L, wv, "'width' must be an integer from 0 to 255, got %s", spec_describe(wv, d, sizeof d));
            c.width = (int)wv->i;
        }
        if ((h && (st = spec_get_str(L, h->value, "header", &c.header))) ||
            (f && (st = spec_get_nonempty(L, f->value, "format", &c.format))) || !(c.name = strdup(p->key))) {
            free(c.header);
            free(c.format);
            return st ? st : spec_nomem(L);
        }
        size_t k = 0;
        while (k < r->n_columns && strcmp(r->columns[k].name, c.name) != 0)
            k++;
        if (k == r->n_columns) {
            tb_spec_column *nc = realloc(r->columns, (r->n_columns + 1) * sizeof *nc);
            if (!nc) {
                free(c.name);
                free(c.header);
                free(c.format);
                return spec_nomem(L);
            }
            r->columns = nc;
            r->n_columns++;
        } else {
            free(r->columns[k].name);
            free(r->columns[k].header);
            free(r->columns[k].format);
        }
        r->columns[k] = c;
    }
    return TB_OK;
}

/* Checks Excel's sheet name rules; n is the name's node. */
static tb_status check_sheet(loader *L, const specnode *n)
{
    const char *s = n->text;
    if (!*s)
        return fail_node(L, n, "sheet name must not be empty");
    size_t units = 0; /* Excel counts UTF-16 code units */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p & 0xC0) != 0x80)
            units += (*p >= 0xF0) ? 2 : 1;
        if (strchr("[]:*?/\\", *p))
            return fail_node(L, n, "sheet name '%.60s' contains '%c'; Excel does not allow any of []:*?/\\", s, *p);
    }
    if (units > 31)
        return fail_node(L, n, "sheet name '%.60s' is longer than Excel's 31 characters", s);
    if (s[0] == '\'' || s[strlen(s) - 1] == '\'')
        return fail_node(L, n, "sheet name '%.60s' must not start or end with an apostrophe", s);
    if (str_eq_ci(s, "History"))
        return fail_node(L, n, "sheet name '%s' is reserved by Excel", s);
    return TB_OK;
}

/* The column named by a chart key: a string, without a type suffix. */
static tb_status chart_column(loader *L, const specnode *v, const char *what, char **out)
{
    tb_status st = spec_get_nonempty(L, v, what, out);
    return st ? st : spec_check_base_name(L, v->line, v->column, *out);
}

/* The index of text in list, or -1. */
static int list_index(const char *const *list, const char *text)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], text))
            return i;
    return -1;
}

/* Parses `chart:` into r, replacing its chart. */
static tb_status parse_chart(loader *L, const specnode *c, tb_spec_report *r)
{
    tb_status st;
    char d[64], list[128];
    if ((st = spec_need_map(L, c, "chart")) || (st = spec_check_keys(L, c, "chart", chart_keys)))
        return st;
    const specnode_pair *type = specnode_get(c, "type"), *cat = specnode_get(c, "categories"),
                        *val = specnode_get(c, "values");
    if (!type)
        return fail_node(L, c, "chart needs 'type' (one of: %s)", spec_join(chart_types, list, sizeof list));
    if (!val)
        return fail_node(L, c, "chart needs 'values' (the column to plot, or a list of columns)");
    if (!spec_is_text(type->value) || !spec_in_list(type->value->text, chart_types))
        return fail_node(L, type->value, "unknown chart type %s; expected one of: %s",
                         spec_describe(type->value, d, sizeof d), spec_join(chart_types, list, sizeof list));
    specnode *const *items = NULL;
    size_t n = 0;
    const specnode *one = NULL;
    if ((st = spec_str_or_list(L, val->value, "values", &items, &n, &one)))
        return st;
    if (n == 0)
        return fail_node(L, val->value, "chart 'values' must name at least one column");
    if (n > 1 && !strcmp(type->value->text, "pie"))
        return fail_node(L, val->value, "a pie chart takes one 'values' column, got %zu", n);
    const specnode_pair *pos = specnode_get(c, "position");
    if (pos && (!spec_is_text(pos->value) || !spec_in_list(pos->value->text, chart_positions)))
        return fail_node(L, pos->value, "unknown chart position %s; expected one of: %s",
                         spec_describe(pos->value, d, sizeof d), spec_join(chart_positions, list, sizeof list));
    const specnode_pair *by = specnode_get(c, "series_by");
    if (by && strcmp(type->value->text, "line"))
        return fail_node(L, by->value, "'series_by' draws a line per value of a column: it needs chart type line, "
                                       "not %s", type->value->text);
    if (by && !cat)
        return fail_node(L, by->value, "'series_by' needs 'categories' (the x column each line runs over)");
    r->chart_below = pos && !strcmp(pos->value->text, "below");
    free(r->chart_type);
    free(r->chart_categories);
    free(r->chart_series_by);
    r->chart_type = r->chart_categories = r->chart_series_by = NULL;
    for (size_t i = 0; i < r->n_chart_values; i++)
        free(r->chart_values[i]);
    free(r->chart_values);
    r->n_chart_values = 0;
    if (!(r->chart_values = calloc(n, sizeof *r->chart_values)))
        return spec_nomem(L);
    for (size_t i = 0; i < n; i++) {
        r->n_chart_values = i + 1; /* counted first: report_free frees a value that failed its check */
        if ((st = chart_column(L, items[i], "values", &r->chart_values[i])))
            return st;
    }
    if ((st = spec_get_str(L, type->value, "type", &r->chart_type)) ||
        (cat && (st = chart_column(L, cat->value, "categories", &r->chart_categories))) ||
        (by && (st = chart_column(L, by->value, "series_by", &r->chart_series_by))))
        return st;
    return TB_OK;
}

/* Parses one entry of `conditional:` into c. */
static tb_status parse_cond(loader *L, const specnode *n, tb_spec_cond *c)
{
    tb_status st;
    char d[64], list[128];
    if ((st = spec_need_map(L, n, "conditional entry")) || (st = spec_check_keys(L, n, "conditional entry", cond_keys)))
        return st;
    c->pos = (tb_spec_pos){.file = L->file, .line = n->line, .column = n->column};
    const specnode_pair *col = specnode_get(n, "column"), *type = specnode_get(n, "type"),
                        *op = specnode_get(n, "op"), *val = specnode_get(n, "value"), *top = specnode_get(n, "top");
    if (!col)
        return fail_node(L, n, "conditional format needs 'column'");
    if (!type)
        return fail_node(L, n, "conditional format needs 'type' (one of: %s)", spec_join(cond_types, list, sizeof list));
    if ((st = chart_column(L, col->value, "column", &c->column)))
        return st;
    int t = spec_is_text(type->value) ? list_index(cond_types, type->value->text) : -1;
    if (t < 0)
        return fail_node(L, type->value, "unknown conditional format type %s; expected one of: %s",
                         spec_describe(type->value, d, sizeof d), spec_join(cond_types, list, sizeof list));
    c->type = (tb_cond_type)t;
    if (c->type == TB_COND_THRESHOLD) {
        if (!op)
            return fail_node(L, n, "a threshold needs 'op' (one of: %s)", spec_join(cond_ops, list, sizeof list));
        if (!val)
            return fail_node(L, n, "a threshold needs 'value' (a number)");
        int o = spec_is_text(op->value) ? list_index(cond_ops, op->value->text) : -1;
        if (o < 0)
            return fail_node(L, op->value, "unknown threshold op %s; expected one of: %s",
                             spec_describe(op->value, d, sizeof d), spec_join(cond_ops, list, sizeof list));
        c->op = (tb_cond_op)o;
        const specnode *v = val->value;
        if (v->kind != SPECNODE_SCALAR || (v->type != SPECNODE_INT && v->type != SPECNODE_REAL) ||
            (v->type == SPECNODE_REAL && !isfinite(v->d)))
            return fail_node(L, v, "'value' must be a finite number, got %s", spec_describe(v, d, sizeof d));
        c->value = v->type == SPECNODE_INT ? (double)v->i : v->d;
    } else if (op || val) {
        const specnode_pair *extra = op ? op : val;
        return fail_key(L, extra, "'%s' belongs to a threshold, not to a %s", extra->key, cond_types[t]);
    }
    if (c->type == TB_COND_TOP) {
        if (!top)
            return fail_node(L, n, "a top format needs 'top' (how many cells, 1 to 1000)");
        const specnode *v = top->value;
        if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_INT || v->i < 1 || v->i > 1000)
            return fail_node(L, v, "'top' must be an integer from 1 to 1000, got %s", spec_describe(v, d, sizeof d));
        c->top = (int)v->i;
    } else if (top) {
        return fail_key(L, top, "'top' belongs to a top format, not to a %s", cond_types[t]);
    }
    return TB_OK;
}

/* Parses `conditional:` (a list), replacing r's. */
static tb_status parse_conds(loader *L, const specnode *n, tb_spec_report *r)
{
    char d[64];
    tb_status st;
    if (n->kind != SPECNODE_SEQ)
        return fail_node(L, n, "'conditional' must be a list of formats, got %s", spec_describe(n, d, sizeof d));
    for (size_t i = 0; i < r->n_conds; i++)
        free(r->conds[i].column);
    free(r->conds);
    r->conds = NULL;
    r->n_conds = 0;
    if (n->n == 0)
        return TB_OK;
    if (!(r->conds = calloc(n->n, sizeof *r->conds)))
        return spec_nomem(L);
    for (size_t i = 0; i < n->n; i++) {
        r->n_conds = i + 1;
        if ((st = parse_cond(L, n->items[i], &r->conds[i])))
            return st;
    }
    return TB_OK;
}

/* Parses `xlsx:`; present keys replace r's values (a chart replaces the whole chart). */
static tb_status parse_xlsx(loader *L, const specnode *n, tb_spec_report *r, report_aux *aux)
{
    tb_status st;
    if ((st = spec_need_map(L, n, "xlsx")) || (st = spec_check_keys(L, n, "xlsx", xlsx_keys)))
        return st;
    const specnode_pair *sheet = specnode_get(n, "sheet"), *chart = specnode_get(n, "chart"),
                        *cond = specnode_get(n, "conditional");
    if (sheet) {
        if ((st = spec_get_str(L, sheet->value, "sheet", &r->xlsx_sheet)) || (st = check_sheet(L, sheet->value)))
            return st;
        aux->sheet_line = sheet->value->line;
        aux->sheet_col = sheet->value->column;
    }
    if (chart && (st = parse_chart(L, chart->value, r)))
        return st;
    if (cond && (st = parse_conds(L, cond->value, r)))
        return st;
    return TB_OK;
}

/* The keys a plain report and a used one share: each one present replaces (or merges into) r's value. */
static tb_status parse_common(loader *L, const specnode *m, tb_spec_report *r, report_aux *aux)
{
    tb_status st;
    char d[64];
    const specnode_pair *p;
    if ((p = specnode_get(m, "title")) && (st = spec_get_nonempty(L, p->value, "title", &r->title)))
        return st;
    if ((p = specnode_get(m, "description")) && (st = spec_get_str(L, p->value, "description", &r->description)))
        return st;
    if ((p = specnode_get(m, "requires")) && (st = parse_requires(L, p->value, r)))
        return st;
    if ((p = specnode_get(m, "outputs")) && (st = spec_parse_outputs(L, p->value, &r->outputs)))
        return st;
    if ((p = specnode_get(m, "sort")) && (st = parse_sort(L, p->value, r)))
        return st;
    if ((p = specnode_get(m, "limit"))) {
        const specnode *v = p->value;
        if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_INT || v->i < 0)
            return fail_node(L, v, "'limit' must be a non-negative integer, got %s", spec_describe(v, d, sizeof d));
        r->limit = v->i;
    }
    if ((p = specnode_get(m, "header_units"))) {
        const specnode *v = p->value;
        if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_BOOL)
            return fail_node(L, v, "'header_units' must be true or false, got %s", spec_describe(v, d, sizeof d));
        r->header_units = (int)v->i;
    }
    if ((p = specnode_get(m, "json_shape"))) {
        const specnode *v = p->value;
        if (v->kind != SPECNODE_SCALAR || (strcmp(v->text, "rows") && strcmp(v->text, "document")))
            return fail_node(L, v, "'json_shape' must be rows or document, got %s", spec_describe(v, d, sizeof d));
        r->json_document = !strcmp(v->text, "document");
    }
    if ((p = specnode_get(m, "columns")) && (st = parse_columns(L, p->value, r)))
        return st;
    if ((p = specnode_get(m, "xlsx")) && (st = parse_xlsx(L, p->value, r, aux)))
        return st;
    if ((p = specnode_get(m, "pivot")) && (st = parse_pivot(L, p->value, r)))
        return st;
    if ((p = specnode_get(m, "drop_empty")) && (st = parse_names(L, p->value, "drop_empty", &r->drop_empty,
                                                                   &r->n_drop_empty)))
        return st;
    if ((p = specnode_get(m, "key")) && (st = parse_names(L, p->value, "key", &r->key, &r->n_key)))
        return st;
    if ((p = specnode_get(m, "baseline"))) {
        const specnode *v = p->value;
        if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_BOOL)
            return fail_node(L, v, "'baseline' must be true or false, got %s", spec_describe(v, d, sizeof d));
        if (v->i && !r->n_key)
            return fail_node(L, v, "'baseline: true' needs 'key:' (the columns that match a row with the base "
                             "run's row)");
        r->baseline = (int)v->i;
    }
    if ((p = specnode_get(m, "scope"))) {
        const specnode *v = p->value;
        if (spec_is_text(v) && !strcmp(v->text, "rank"))
            r->scope = TB_SCOPE_RANK;
        else if (spec_is_text(v) && !strcmp(v->text, "all"))
            r->scope = TB_SCOPE_ALL;
        else if (spec_is_text(v) && !strcmp(v->text, "cluster"))
            r->scope = TB_SCOPE_CLUSTER;
        else
            return fail_node(L, v, "'scope' must be rank (the report runs on each rank alone), cluster (it reads "
                             "only the cluster tables) or all (on every rank at once), got %s",
                             spec_describe(v, d, sizeof d));
        aux->scope_line = v->line;
        aux->scope_col = v->column;
    }
    if (r->scope == TB_SCOPE_RANK && (r->pivot_names || r->n_drop_empty)) {
        long line = aux->scope_line ? aux->scope_line : r->pos.line, col = aux->scope_line ? aux->scope_col : r->pos.column;
        return spec_fail_pos(L, line, col, "report '%s': 'scope: rank' cannot be combined with '%s' (it needs every rank's "
                        "rows at once); use scope: all", r->id ? r->id : "?", r->pivot_names ? "pivot" : "drop_empty");
    }
    if ((p = specnode_get(m, "normalize")) && (st = parse_normalize(L, p->value, r)))
        return st;
    if ((p = specnode_get(m, "regressions")) && (st = parse_rules(L, p->value, r)))
        return st;
    if ((p = specnode_get(m, "advice")) && (st = spec_parse_advice(L, p, r)))
        return st;
    return TB_OK;
}

/* Sets r->id from the `id` value v (checked) and records where it was written. */
static tb_status set_id(loader *L, const specnode *v, tb_spec_report *r, report_aux *aux)
{
    char d[64];
    if (!spec_is_text(v) || !spec_is_report_id(v->text))
        return fail_node(L, v, "'id' must be letters, digits, '_', '.' and '-' (it names output files), got %s",
                         spec_describe(v, d, sizeof d));
    aux->id_line = v->line;
    aux->id_col = v->column;
    return spec_get_str(L, v, "id", &r->id);
}

/* ---- SQL ---------------------------------------------------------------------- */

/* 1 when s holds something other than blanks. */
static int has_text(const char *s)
{
    for (; *s; s++)
        if (!strchr(" \t\r\n", *s))
            return 1;
    return 0;
}


/* Reads sql_file (v: its value) relative to the spec's directory into r. */
static tb_status read_sql_file(loader *L, const specnode *v, tb_spec_report *r)
{
    tb_status st;
    char *rel = NULL;
    if ((st = spec_get_nonempty(L, v, "sql_file", &rel)))
        return st;
    if (str_starts(L->file, "builtin:")) {
        free(rel);
        return fail_node(L, v, "'sql_file' is not available in built-in reports");
    }
    const char *slash = strrchr(L->file, '/');
    size_t dir = (rel[0] != '/' && slash) ? (size_t)(slash - L->file) + 1 : 0;
    size_t need = dir + strlen(rel) + 1;
    char *path = malloc(need);
    if (!path) {
        free(rel);
        return spec_nomem(L);
    }
    memcpy(path, L->file, dir);
    memcpy(path + dir, rel, strlen(rel) + 1);
    free(rel);
    free(r->sql_file);
    r->sql_file = path;
    char *text;
    size_t len;
    int e = spec_read_all(path, &text, &len);
    if (e)
        return tb_error_at(L->err, e == ENOMEM ? TB_ERR_NOMEM : TB_ERR_IO, L->file, v->line, v->column, -1,
                           "cannot read sql_file '%s': %s", path, strerror(e));
    if (memchr(text, 0, len)) {
        free(text);
        return fail_node(L, v, "sql_file '%s' holds a NUL byte", path);
    }
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        memmove(text, text + 3, len - 2);
    if (!has_text(text)) {
        free(text);
        return fail_node(L, v, "sql_file '%s' is empty", path);
    }
    free(r->sql);
    r->sql = text;
    r->sql_pos = (tb_spec_pos){.file = r->sql_file, .line = 1, .column = 1};
    r->sql_verbatim = 1;
    return TB_OK;
}

/* ---- use: built-in reports ------------------------------------------------------------ */

/* Copies n strings into *dst, counted as they are made so that
 * spec_report_free frees a partial copy. Returns 0 or -1 (no memory). */
static int copy_strings(char ***dst, size_t *ndst, char *const *src, size_t n)
{
    if (!n)
        return 0;
    if (!(*dst = calloc(n, sizeof **dst)))
        return -1;
    for (; *ndst < n; (*ndst)++)
        if (!((*dst)[*ndst] = strdup(src[*ndst])))
            return -1;
    return 0;
}

/* Copies the report's single strings (id, title, SQL, sheet, chart, pivot). Returns 0 or -1. */
static int copy_texts(tb_spec_report *dst, const tb_spec_report *src)
{
#define DUP(field) (src->field && !(dst->field = strdup(src->field)))
    if (DUP(id) || DUP(title) || DUP(description) || DUP(sql) || DUP(xlsx_sheet) || DUP(chart_type) ||
        DUP(chart_categories) || DUP(chart_series_by) || DUP(pivot_key) || DUP(pivot_names) || DUP(pivot_values) || DUP(pivot_missing))
        return -1;
    return 0;
#undef DUP
}

/* Copies the params, each position pointing at dst->origin. Returns 0 or -1. */
static int copy_params(tb_spec_report *dst, const tb_spec_report *src)
{
    if (!src->n_params)
        return 0;
    if (!(dst->params = calloc(src->n_params, sizeof *dst->params)))
        return -1;
    for (size_t i = 0; i < src->n_params; i++) {
        const tb_param *s = &src->params[i];
        tb_param *d = &dst->params[i];
        *d = *s;
        d->name = d->s = d->help = NULL;
        d->pos.file = dst->origin;
        dst->n_params = i + 1; /* counted before its strings, so report_free frees a partial copy */
        if (!(d->name = strdup(s->name)) || (s->s && !(d->s = strdup(s->s))) ||
            (s->help && !(d->help = strdup(s->help))))
            return -1;
    }
    return 0;
}

/* Copies the conditional formats and the regressions rules, each position
 * pointing at dst->origin. Returns 0 or -1. */
static int copy_conds_rules(tb_spec_report *dst, const tb_spec_report *src)
{
    if (src->n_conds) {
        if (!(dst->conds = calloc(src->n_conds, sizeof *dst->conds)))
            return -1;
        for (size_t i = 0; i < src->n_conds; i++) {
            dst->conds[i] = src->conds[i];
            dst->conds[i].column = NULL;
            dst->conds[i].pos.file = dst->origin;
            dst->n_conds = i + 1;
            if (!(dst->conds[i].column = strdup(src->conds[i].column)))
                return -1;
        }
    }
    if (src->n_rules) {
        if (!(dst->rules = calloc(src->n_rules, sizeof *dst->rules)))
            return -1;
        for (size_t i = 0; i < src->n_rules; i++) {
            dst->rules[i] = src->rules[i];
            dst->rules[i].column = NULL;
            dst->rules[i].pos.file = dst->origin;
            dst->n_rules = i + 1;
            if (!(dst->rules[i].column = strdup(src->rules[i].column)))
                return -1;
        }
    }
    return 0;
}

/* Copies the sort keys and the column options, each position pointing at
 * dst->origin. Returns 0 or -1. */
static int copy_sort_columns(tb_spec_report *dst, const tb_spec_report *src)
{
    if (src->n_sort) {
        if (!(dst->sort = calloc(src->n_sort, sizeof *dst->sort)))
            return -1;
        for (size_t i = 0; i < src->n_sort; i++) {
            tb_spec_sort *d = &dst->sort[i];
            *d = src->sort[i];
            d->pos.file = dst->origin;
            dst->n_sort = i + 1;
            if (!(d->column = strdup(src->sort[i].column)))
                return -1;
        }
    }
    if (src->n_columns) {
        if (!(dst->columns = calloc(src->n_columns, sizeof *dst->columns)))
            return -1;
        for (size_t i = 0; i < src->n_columns; i++) {
            const tb_spec_column *s = &src->columns[i];
            tb_spec_column *d = &dst->columns[i];
            *d = *s;
            d->name = d->header = d->format = NULL;
            d->pos.file = dst->origin;
            dst->n_columns = i + 1;
            if (!(d->name = strdup(s->name)) || (s->header && !(d->header = strdup(s->header))) ||
                (s->format && !(d->format = strdup(s->format))))
                return -1;
        }
    }
    return 0;
}

/* Duplicates src (strings, arrays) into dst, every position pointing at file. Returns 0 or -1 (no memory). */
static int copy_report(tb_spec_report *dst, const tb_spec_report *src, const char *file)
{
    *dst = (tb_spec_report){
        .limit = src->limit, .header_units = src->header_units, .json_document = src->json_document,
        .outputs = src->outputs, .scope = src->scope, .chart_below = src->chart_below, .baseline = src->baseline};
    if (copy_texts(dst, src) ||
        copy_strings(&dst->chart_values, &dst->n_chart_values, src->chart_values, src->n_chart_values) ||
        !(dst->origin = strdup(file)))
        return -1;
    dst->sql_pos = (tb_spec_pos){.file = dst->origin, .line = src->sql_pos.line, .column = src->sql_pos.column};
    dst->sql_verbatim = src->sql_verbatim;
    dst->normalize = src->normalize;
    dst->has_rules = src->has_rules;
    if (copy_strings(&dst->requires, &dst->n_requires, src->requires, src->n_requires) ||
        copy_strings(&dst->key, &dst->n_key, src->key, src->n_key) ||
        copy_strings(&dst->drop_empty, &dst->n_drop_empty, src->drop_empty, src->n_drop_empty) ||
        copy_params(dst, src) || copy_conds_rules(dst, src) || copy_sort_columns(dst, src) ||
        spec_advice_copy(dst, src))
        return -1;
    return 0;
}

/* Appends a copy of the built-in file's spec-wide param s unless r has one of that name. Returns 0 or -1. */
static int merge_param(tb_spec_report *r, const tb_param *s)
{
    for (size_t i = 0; i < r->n_params; i++)
        if (strcmp(r->params[i].name, s->name) == 0)
            return 0;
    tb_param *np = realloc(r->params, (r->n_params + 1) * sizeof *np);
    if (!np)
        return -1;
    r->params = np;
    tb_param *d = &r->params[r->n_params];
    *d = *s;
    d->name = d->s = d->help = NULL;
    d->pos.file = r->origin;
    r->n_params++;
    if (!(d->name = strdup(s->name)) || (s->s && !(d->s = strdup(s->s))) || (s->help && !(d->help = strdup(s->help))))
        return -1;
    return 0;
}

/* Finds built-in report id in the built-in files (loading them once). Sets *rep and *file, or NULL. */
static tb_status find_builtin(loader *L, const char *id, const tb_spec_report **rep, const tb_spec **file)
{
    size_t n;
    const tb_builtin *b = tb_builtins(&n);
    *rep = NULL;
    *file = NULL;
    if (n && !L->builtins) {
        if (!(L->builtins = calloc(n, sizeof *L->builtins)))
            return spec_nomem(L);
        L->n_builtins = n;
    }
    for (size_t i = 0; i < n && i < L->n_builtins; i++) {
        if (!L->builtins[i]) {
            char name[256];
            snprintf(name, sizeof name, "builtin:%s.yaml", b[i].name);
            tb_status st = L->load(name, b[i].text, strlen(b[i].text), L->depth + 1, NULL, NULL, &L->builtins[i],
                                   L->err);
            if (st)
                return st;
        }
        const tb_spec *s = L->builtins[i];
        for (size_t k = 0; k < s->n_reports; k++) {
            if (strcmp(s->reports[k].id, id) == 0) {
                *rep = &s->reports[k];
                *file = s;
                return TB_OK;
            }
        }
    }
    return TB_OK;
}

/* Builds report r from `use: NAME` entry m (the keys were checked). */
static tb_status parse_use(loader *L, const specnode *m, const specnode_pair *use, tb_spec_report *r,
                           report_aux *aux)
{
    tb_status st;
    char d[64];
    const specnode *uv = use->value;
    if (!spec_is_text(uv) || !uv->len)
        return fail_node(L, uv, "'use' must name a built-in report, got %s", spec_describe(uv, d, sizeof d));
    if (L->depth >= MAX_USE_DEPTH)
        return fail_node(L, uv, "'use' nested more than %d built-in files deep", MAX_USE_DEPTH);
    const tb_spec_report *src;
    const tb_spec *bfile;
    if ((st = find_builtin(L, uv->text, &src, &bfile)))
        return st;
    if (!src)
        return fail_node(L, uv, "unknown built-in report '%s'", uv->text);
    /* the built-in's own origin when it was itself used from another file */
    if (copy_report(r, src, src->origin ? src->origin : bfile->path) != 0)
        return spec_nomem(L);
    if (!(r->use = strdup(uv->text)))
        return spec_nomem(L);
    for (size_t i = 0; i < bfile->n_params; i++)
        if (merge_param(r, &bfile->params[i]) != 0)
            return spec_nomem(L);
    aux->id_line = uv->line;
    aux->id_col = uv->column;

    /* this spec's params of the same names, then the entry's own */
    char why[128];
    snprintf(why, sizeof why, " (built-in report '%.60s' declares it so)", uv->text);
    for (size_t i = 0; L->params && i < L->params->n; i++) {
        const specnode_pair *p = &L->params->pairs[i];
        const specnode *v = p->value;
        if (v->kind == SPECNODE_MAP) {
            const specnode_pair *def = specnode_get(v, "default");
            if (!def || (def->value->kind == SPECNODE_SCALAR && def->value->type == SPECNODE_NULL))
                continue;
            v = def->value;
        }
        for (size_t k = 0; k < r->n_params; k++)
            if (strcmp(r->params[k].name, p->key) == 0 && (st = spec_set_value(L, &r->params[k], v, why)))
                return st;
    }
    const specnode_pair *pp = specnode_get(m, "params");
    if (pp) {
        if ((st = spec_need_map(L, pp->value, "params")))
            return st;
        for (size_t i = 0; i < pp->value->n; i++) {
            const specnode_pair *p = &pp->value->pairs[i];
            size_t k = 0;
            while (k < r->n_params && strcmp(r->params[k].name, p->key) != 0)
                k++;
            if (k == r->n_params) {
                char names[300];
                size_t at = 0;
                names[0] = 0;
                for (size_t j = 0; j < r->n_params && at < sizeof names; j++) {
                    int w = snprintf(names + at, sizeof names - at, "%s%s", j ? ", " : "", r->params[j].name);
                    at += w > 0 ? (size_t)w : 0;
                }
                if (r->n_params)
                    return fail_key(L, p, "built-in report '%s' has no param '%.60s'; its params: %s", uv->text,
                                    p->key, names);
                return fail_key(L, p, "built-in report '%s' has no param '%.60s'; it takes none", uv->text, p->key);
            }
            if ((st = spec_set_value(L, &r->params[k], p->value, why)))
                return st;
            r->params[k].pos = (tb_spec_pos){.file = L->file, .line = p->line, .column = p->column};
        }
    }
    const specnode_pair *id = specnode_get(m, "id");
    if (id && (st = set_id(L, id->value, r, aux)))
        return st;
    return parse_common(L, m, r, aux);
}

/* ---- reports ---------------------------------------------------------------------- */

/* Parses report number index (1-based) from node m into r (zeroed). */
static tb_status parse_report(loader *L, const specnode *m, size_t index, tb_spec_report *r, report_aux *aux)
{
    tb_status st;
    char d[64];
    if (m->kind != SPECNODE_MAP)
        return fail_node(L, m, "report %zu must be a mapping, got %s", index, spec_describe(m, d, sizeof d));
    r->limit = -1;
    r->header_units = 1;
    const specnode_pair *use = specnode_get(m, "use");
    if (use) {
        for (size_t i = 0; i < m->n; i++)
            if (!strcmp(m->pairs[i].key, "sql") || !strcmp(m->pairs[i].key, "sql_file"))
                return fail_key(L, &m->pairs[i], "'%s' cannot be combined with 'use' (the built-in report has its SQL)",
                                m->pairs[i].key);
        if ((st = spec_check_keys(L, m, "a report with 'use'", use_keys)))
            return st;
        if ((st = parse_use(L, m, use, r, aux)))
            return st;
        r->pos = (tb_spec_pos){.file = L->file, .line = m->line, .column = m->column};
        return TB_OK;
    }
    if ((st = spec_check_keys(L, m, "report", report_keys)))
        return st;
    r->pos = (tb_spec_pos){.file = L->file, .line = m->line, .column = m->column};
    const specnode_pair *id = specnode_get(m, "id");
    if (!id)
        return fail_node(L, m, "report %zu has no 'id' (nor 'use')", index);
    if ((st = set_id(L, id->value, r, aux)))
        return st;
    const specnode_pair *sql = specnode_get(m, "sql"), *file = specnode_get(m, "sql_file");
    if (sql && file) {
        const specnode_pair *second = (sql->line > file->line || (sql->line == file->line && sql->column > file->column))
                                          ? sql
                                          : file;
        return fail_key(L, second, "report '%s' has both 'sql' and 'sql_file'; expected one", r->id);
    }
    if (!sql && !file)
        return fail_node(L, m, "report '%s' has neither 'sql' nor 'sql_file'", r->id);
    if (sql) {
        const specnode *v = sql->value;
        if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_STR || strlen(v->text) != v->len)
            return fail_node(L, v, "'sql' must be a string, got %s", spec_describe(v, d, sizeof d));
        if (!has_text(v->text))
            return fail_node(L, v, "'sql' is empty");
        if (!(r->sql = strdup(v->text)))
            return spec_nomem(L);
        r->sql_pos = (tb_spec_pos){.file = L->file, .line = v->text_line, .column = v->text_column};
        /* literal blocks and one-line plain scalars only (specnode.h): quoting,
         * escapes and folding move the text against the file */
        r->sql_verbatim = v->verbatim;
    } else if ((st = read_sql_file(L, file->value, r))) {
        return st;
    }
    const specnode_pair *params = specnode_get(m, "params");
    if (params && (st = spec_parse_params(L, params->value, &r->params, &r->n_params)))
        return st;
    if ((st = parse_common(L, m, r, aux)))
        return st;
    if (!r->title && !(r->title = strdup(r->id)))
        return spec_nomem(L);
    return TB_OK;
}

tb_status spec_parse_reports(loader *L, const specnode *n)
{
    tb_spec *spec = L->spec;
    char d[64];
    tb_status st;
    if (n->kind == SPECNODE_SCALAR && n->type == SPECNODE_NULL)
        return TB_OK;
    if (n->kind != SPECNODE_SEQ)
        return fail_node(L, n, "'reports' must be a list of reports, got %s", spec_describe(n, d, sizeof d));
    if (n->n == 0)
        return TB_OK;
    if (!(spec->reports = calloc(n->n, sizeof *spec->reports)) || !(L->aux = calloc(n->n, sizeof *L->aux)))
        return spec_nomem(L);
    for (size_t i = 0; i < n->n; i++) {
        spec->n_reports = i + 1;
        if ((st = parse_report(L, n->items[i], i + 1, &spec->reports[i], &L->aux[i])))
            return st;
    }
    for (size_t i = 0; i < spec->n_reports; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(spec->reports[i].id, spec->reports[j].id) == 0)
                return spec_fail_pos(L, L->aux[i].id_line, L->aux[i].id_col, "duplicate report id '%s' (first at line %ld)",
                                spec->reports[i].id, L->aux[j].id_line);
            const char *a = spec->reports[i].xlsx_sheet, *b = spec->reports[j].xlsx_sheet;
            if (a && b && str_eq_ci(a, b)) {
                long line = L->aux[i].sheet_line ? L->aux[i].sheet_line : spec->reports[i].pos.line;
                long col = L->aux[i].sheet_line ? L->aux[i].sheet_col : spec->reports[i].pos.column;
                long first = L->aux[j].sheet_line ? L->aux[j].sheet_line : spec->reports[j].pos.line;
                return spec_fail_pos(L, line, col, "duplicate sheet name '%s' (first at line %ld)", a, first);
            }
        }
    }
    return TB_OK;
}

