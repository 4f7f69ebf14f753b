/* SPDX-License-Identifier: MIT */
/*
 * spec.c - loads and validates report specs (tb_spec_load, see tracebook/spec.h).
 *
 * A spec file is parsed into a positioned tree (specnode.c) and then walked
 * here into a tb_spec, checking every value on the way so that each problem
 * is reported once, at its line and column, saying what was expected. The
 * schema of the language is schemas/report-spec.schema.json.
 *
 * One file format, two kinds of files:
 *
 * - a tracebook spec: a mapping with `tracebook: 1`, optional json_process,
 *   params, metrics, outputs, workbook and a list of reports. Everything is
 *   strict: unknown keys, wrong types and duplicate keys are errors.
 * - an msprof reports file (reports_sample_config.json): a mapping with
 *   neither `tracebook` nor any tracebook section. Only json_process is read,
 *   with msprof's exact rules: a whitelist of known layers, and all layers
 *   instead when json_process is missing, not an object, empty, has an
 *   unknown key or a non-boolean value, or when the file is not JSON at all.
 *   (A file that does not parse and does not mention "tracebook" is taken
 *   for such a file; one that mentions it gets the syntax error.) msprof
 *   falls back silently; tracebook says why through the warn callback and
 *   json_process.fallback. Duplicate keys keep the last value, as Python's
 *   json module (which msprof reads the file with) does.
 *
 * `use: NAME` copies report NAME from the built-in files (the YAML files of
 * reports/, tb_builtins()), which are loaded here like any other spec; the
 * keys next to `use` override the built-in's. A used report's params are
 * the built-in's (its file-wide ones merged under the report's own), with
 * values replaced by this spec's params of the same name and then by the
 * entry's own `params`, so that a wrong type is found at load time, not
 * when the report runs.
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
#include "spec/specnode.h"
#include "tracebook/spec.h"
#include "util/str.h"

#define MAX_SPEC_BYTES (64u << 20)
#define MAX_USE_DEPTH 4
#define AS_MSPROF ": exporting all layers, as msprof does"

/* msprof's json_process layer names: the sample file's 30, then dpu and fusion_task. */
static const char *const layer_names[] = {
    "ascend",   "acc_pmu", "cann",          "ddr",      "stars_chip_trans", "hbm",          "communication",
    "hccs",     "os_runtime_api",           "network_usage", "disk_usage",  "memory_usage", "cpu_usage",
    "msproftx", "npu_mem", "overlap_analyse", "pcie",   "sio",              "stars_soc",    "step_trace",
    "freq",     "llc",     "nic",           "roce",     "qos",              "device_tx",    "ccu",
    "biu_perf", "ub",      "block_detail",  "dpu",      "fusion_task",      NULL};

static const char *const top_keys[] = {"tracebook", "json_process", "params", "metrics",
                                       "outputs",   "reports",      "workbook", NULL};
static const char *const report_keys[] = {"id",     "title",   "description", "use",   "requires",
                                          "sql",    "sql_file", "params",     "outputs", "sort",
                                          "limit",  "header_units", "columns", "xlsx",  "key",
                                          "normalize", "regressions", "drop_empty", "pivot", "scope", NULL};
static const char *const use_keys[] = {"use",    "id",   "title", "description",  "params",  "outputs",
                                       "sort",   "limit", "header_units", "columns", "xlsx", "requires",
                                       "key",    "normalize", "regressions", "drop_empty", "pivot", "scope", NULL};
static const char *const rule_keys[] = {"column", "worse", "relative", "absolute", "min_count", "mad", "nights", NULL};
static const char *const normalize_names[] = {"strip_template_args", "strip_hashes", "strip_trailing_numbers",
                                              NULL}; /* TB_NORM_* bit order */
static const char *const param_keys[] = {"type", "default", "help", NULL};
static const char *const column_keys[] = {"header", "format", "width", NULL};
static const char *const pivot_keys[] = {"key", "names", "values", "missing", NULL};
static const char *const xlsx_keys[] = {"sheet", "chart", "conditional", NULL};
static const char *const chart_keys[] = {"type", "categories", "values", NULL};
static const char *const chart_types[] = {"bar", "stacked_bar", "column", "stacked_column", "line", "pie", NULL};
static const char *const cond_keys[] = {"column", "type", "op", "value", "top", NULL};
static const char *const cond_types[] = {"threshold", "top", "data_bar", "color_scale", NULL};
static const char *const cond_ops[] = {"gt", "ge", "lt", "le", "eq", "ne", NULL}; /* tb_cond_op order */
static const char *const workbook_keys[] = {"file", "sheets", NULL};
static const char *const output_names[] = {"csv", "json", "xlsx", "console", NULL};
static const char *const param_types[] = {"int", "real", "text", "bool", NULL};
/* Column type suffixes (report.h tb_col_type): options and sort keys name the base column. */
static const char *const type_suffixes[] = {":dur_ns", ":ts_ns", ":ratio_%", ":mem_B", ":rank", NULL};

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
} loader;

static tb_status load_text(const char *name, const char *text, size_t len, int depth,
                           void (*warn)(void *ctx, const char *msg), void *ctx, tb_spec **out, tb_error *err);

/* ---- small helpers -------------------------------------------------------- */

static tb_status nomem(loader *L)
{
    return tb_error_set(L->err, TB_ERR_NOMEM, "out of memory");
}

/* Fills err with a parse error at line:col of the spec. Returns TB_ERR_PARSE. */
__attribute__((format(printf, 4, 5))) static tb_status fail_pos(loader *L, long line, long col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tb_error_at(L->err, TB_ERR_PARSE, L->file, line, col, -1, "%s", msg);
}

#define fail_node(L, n, ...) fail_pos((L), (n)->line, (n)->column, __VA_ARGS__)
#define fail_key(L, p, ...) fail_pos((L), (p)->line, (p)->column, __VA_ARGS__)

/* "a, b, c" from a NULL-terminated list, into buf. */
static const char *join(const char *const *names, char *buf, size_t cap)
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

static int in_list(const char *s, const char *const *names)
{
    for (size_t i = 0; names[i]; i++)
        if (strcmp(s, names[i]) == 0)
            return 1;
    return 0;
}

/* " (did you mean 'k'?)" for the allowed name nearest to key when it is a
 * likely typo (one edit for short keys, two from 6 characters, three from
 * 12), else "". Written into buf. */
static const char *did_you_mean(const char *key, const char *const *allowed, char *buf, size_t cap)
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

static const char *describe(const specnode *n, char *buf, size_t cap)
{
    return specnode_describe(n, buf, cap);
}

/* Fails on the first key of map not in allowed: "unknown key 'k' in WHERE; expected one of: ...". */
static tb_status check_keys(loader *L, const specnode *map, const char *where, const char *const *allowed)
{
    for (size_t i = 0; i < map->n; i++) {
        if (!in_list(map->pairs[i].key, allowed)) {
            char list[400], near[96];
            return fail_key(L, &map->pairs[i], "unknown key '%.60s' in %s%s; expected one of: %s", map->pairs[i].key,
                            where, did_you_mean(map->pairs[i].key, allowed, near, sizeof near),
                            join(allowed, list, sizeof list));
        }
    }
    return TB_OK;
}

static tb_status need_map(loader *L, const specnode *n, const char *what)
{
    char d[64];
    if (n->kind != SPECNODE_MAP)
        return fail_node(L, n, "'%s' must be a mapping, got %s", what, describe(n, d, sizeof d));
    return TB_OK;
}

/* 1 when n is a scalar usable as text: a string, or a number as written (`title: 2024`). */
static int is_text(const specnode *n)
{
    return n->kind == SPECNODE_SCALAR &&
           (n->type == SPECNODE_STR || n->type == SPECNODE_INT || n->type == SPECNODE_REAL) &&
           strlen(n->text) == n->len;
}

/* Sets *out to a new copy of n's text (freeing the old value); n must be a string. */
static tb_status get_str(loader *L, const specnode *n, const char *what, char **out)
{
    char d[64];
    if (!is_text(n))
        return fail_node(L, n, "'%s' must be a string, got %s", what, describe(n, d, sizeof d));
    char *s = strdup(n->text);
    if (!s)
        return nomem(L);
    free(*out);
    *out = s;
    return TB_OK;
}

/* Like get_str, but the string must not be empty. */
static tb_status get_nonempty(loader *L, const specnode *n, const char *what, char **out)
{
    if (is_text(n) && n->len == 0)
        return fail_node(L, n, "'%s' must not be empty", what);
    return get_str(L, n, what, out);
}

/* Items of a "string or list" value: n itself, or the list's items. */
static tb_status str_or_list(loader *L, const specnode *n, const char *what, specnode *const **items, size_t *count,
                             const specnode **one)
{
    char d[64];
    if (n->kind == SPECNODE_SEQ) {
        *items = n->items;
        *count = n->n;
        return TB_OK;
    }
    if (!is_text(n))
        return fail_node(L, n, "'%s' must be a string or a list of strings, got %s", what, describe(n, d, sizeof d));
    *one = n;
    *items = (specnode *const *)one;
    *count = 1;
    return TB_OK;
}

/* 1 when s is a SQL identifier (param names, table names). */
static int is_ident(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

/* 1 when s is a file-name-safe report id: [A-Za-z0-9_.-]+ and not only dots. */
static int is_report_id(const char *s)
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
static tb_status check_base_name(loader *L, long line, long col, const char *name)
{
    const char *suf = type_suffix(name);
    if (!suf)
        return TB_OK;
    int base = (int)(strlen(name) - strlen(suf));
    return fail_pos(L, line, col, "column '%.60s' must be named without its type suffix: '%.*s'", name,
                    base > 60 ? 60 : base, name);
}

/* ---- freeing ---------------------------------------------------------------- */

static void param_free(tb_param *p)
{
    free(p->name);
    free(p->s);
    free(p->help);
}

static void report_free(tb_spec_report *r)
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
        report_free(&spec->reports[i]);
    free(spec->reports);
    free(spec->workbook_file);
    for (size_t i = 0; i < spec->n_workbook_sheets; i++)
        free(spec->workbook_sheets[i]);
    free(spec->workbook_sheets);
    free(spec);
}

/* ---- json_process -------------------------------------------------------- */

/* Falls back to all layers: records why, and tells the caller through warn. */
__attribute__((format(printf, 2, 3))) static void fall_back(loader *L, const char *fmt, ...)
{
    tb_json_process *jp = &L->spec->json_process;
    for (size_t i = 0; i < jp->n_layers; i++)
        free(jp->layers[i]);
    free(jp->layers);
    jp->layers = NULL;
    jp->n_layers = 0;
    jp->all = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(jp->fallback, sizeof jp->fallback, fmt, ap);
    va_end(ap);
    if (L->warn) {
        char msg[1400];
        snprintf(msg, sizeof msg, "%s: %s", L->file, jp->fallback);
        L->warn(L->ctx, msg);
    }
}

/*
 * Reads json_process (pair may be NULL). msprof files (strict 0) fall back
 * to all layers on anything msprof would; tracebook specs (strict 1) make
 * unknown keys and non-boolean values errors, and keep only the empty-object
 * fallback (msprof's meaning of `{}`).
 */
static tb_status parse_json_process(loader *L, const specnode_pair *pair, int strict)
{
    tb_json_process *jp = &L->spec->json_process;
    char d[64], list[400];
    jp->all = 1;
    if (!pair) {
        if (!strict)
            fall_back(L, "no 'json_process' key" AS_MSPROF);
        return TB_OK;
    }
    const specnode *m = pair->value;
    if (m->kind != SPECNODE_MAP) {
        if (strict)
            return fail_node(L, m, "'json_process' must be a mapping of layer names to true or false, got %s",
                             describe(m, d, sizeof d));
        fall_back(L, "'json_process' at %ld:%ld is not an object" AS_MSPROF, m->line, m->column);
        return TB_OK;
    }
    if (m->n == 0) {
        fall_back(L, "'json_process' at %ld:%ld is empty" AS_MSPROF, m->line, m->column);
        return TB_OK;
    }
    jp->all = 0;
    jp->layers = calloc(m->n, sizeof *jp->layers);
    if (!jp->layers)
        return nomem(L);
    for (size_t i = 0; i < m->n; i++) {
        const specnode_pair *p = &m->pairs[i];
        int seen = 0; /* a repeated key keeps its first place and its last value (Python's dict) */
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(m->pairs[j].key, p->key) == 0;
        if (seen)
            continue;
        const specnode *v = specnode_get(m, p->key)->value;
        if (!in_list(p->key, layer_names)) {
            char near[96];
            if (strict)
                return fail_key(L, p, "unknown key '%.60s' in json_process%s; expected one of: %s", p->key,
                                did_you_mean(p->key, layer_names, near, sizeof near),
                                join(layer_names, list, sizeof list));
            fall_back(L, "unknown key '%.40s' at %ld:%ld in json_process" AS_MSPROF, p->key, p->line, p->column);
            return TB_OK;
        }
        if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_BOOL) {
            if (strict)
                return fail_node(L, v, "'%s' in json_process must be true or false, got %s", p->key,
                                 describe(v, d, sizeof d));
            fall_back(L, "non-boolean value %s for '%s' at %ld:%ld in json_process" AS_MSPROF,
                      describe(v, d, sizeof d), p->key, v->line, v->column);
            return TB_OK;
        }
        if (v->i) {
            if (!(jp->layers[jp->n_layers] = strdup(p->key)))
                return nomem(L);
            jp->n_layers++;
        }
    }
    return TB_OK;
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
static tb_status set_value(loader *L, tb_param *p, const specnode *v, const char *why)
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
            ok = is_text(v);
            if (ok) {
                char *s = strdup(v->text);
                if (!s)
                    return nomem(L);
                free(p->s);
                p->s = s;
            }
            break;
        }
    }
    if (!ok)
        return fail_node(L, v, "param '%s' must be %s%s, got %s", p->name, type_name(p->type), why,
                         describe(v, d, sizeof d));
    p->has_value = 1;
    return TB_OK;
}

/* Parses one `name: value` or `name: {type, default, help}` into p (zeroed by the caller). */
static tb_status parse_param(loader *L, const specnode_pair *pair, tb_param *p)
{
    char d[64], list[128];
    const specnode *v = pair->value;
    tb_status st;
    if (!is_ident(pair->key))
        return fail_key(L, pair, "param name '%.60s' must be letters, digits and '_', not starting with a digit",
                        pair->key);
    if (!(p->name = strdup(pair->key)))
        return nomem(L);
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
        return set_value(L, p, v, "");
    }
    if (v->kind != SPECNODE_MAP)
        return fail_node(L, v, "param '%s' must be a value or a mapping with type, default and help, got %s", p->name,
                         describe(v, d, sizeof d));
    char where[96];
    snprintf(where, sizeof where, "param '%.60s'", p->name);
    if ((st = check_keys(L, v, where, param_keys)))
        return st;
    const specnode_pair *t = specnode_get(v, "type"), *def = specnode_get(v, "default"),
                        *help = specnode_get(v, "help");
    if (def && def->value->kind == SPECNODE_SCALAR && def->value->type == SPECNODE_NULL)
        def = NULL; /* `default: null`: no default */
    if (t) {
        const specnode *tv = t->value;
        size_t k = 0;
        while (param_types[k] && !(is_text(tv) && strcmp(tv->text, param_types[k]) == 0))
            k++;
        if (!param_types[k])
            return fail_node(L, tv, "unknown param type %s; expected one of: %s", describe(tv, d, sizeof d),
                             join(param_types, list, sizeof list));
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
    if (help && (st = get_str(L, help->value, "help", &p->help)))
        return st;
    if (def && (st = set_value(L, p, def->value, "")))
        return st;
    return TB_OK;
}

/* Parses a params mapping into a new array. */
static tb_status parse_params(loader *L, const specnode *n, tb_param **out, size_t *count)
{
    tb_status st;
    if ((st = need_map(L, n, "params")))
        return st;
    if (n->n == 0)
        return TB_OK;
    *out = calloc(n->n, sizeof **out);
    if (!*out)
        return nomem(L);
    for (size_t i = 0; i < n->n; i++) {
        *count = i + 1;
        if ((st = parse_param(L, &n->pairs[i], &(*out)[i])))
            return st;
    }
    return TB_OK;
}

/* ---- report parts shared by plain and used reports --------------------------- */

static tb_status parse_outputs(loader *L, const specnode *n, unsigned *mask)
{
    specnode *const *items = NULL;
    const specnode *one = NULL;
    size_t count = 0;
    char d[64], list[64];
    tb_status st = str_or_list(L, n, "outputs", &items, &count, &one);
    if (st)
        return st;
    if (count == 0)
        return fail_node(L, n, "'outputs' must name at least one format; expected some of: %s",
                         join(output_names, list, sizeof list));
    unsigned m = 0;
    for (size_t i = 0; i < count; i++) {
        const specnode *it = items[i];
        size_t k = 0;
        while (output_names[k] && !(is_text(it) && strcmp(it->text, output_names[k]) == 0))
            k++;
        if (!output_names[k])
            return fail_node(L, it, "unknown output format %s; expected one of: %s", describe(it, d, sizeof d),
                             join(output_names, list, sizeof list));
        m |= (unsigned[]){TB_OUT_CSV, TB_OUT_JSON, TB_OUT_XLSX, TB_OUT_CONSOLE}[k];
    }
    *mask = m;
    return TB_OK;
}

static tb_status parse_requires(loader *L, const specnode *n, tb_spec_report *r)
{
    specnode *const *items = NULL;
    const specnode *one = NULL;
    size_t count = 0;
    char d[64];
    tb_status st = str_or_list(L, n, "requires", &items, &count, &one);
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
        return nomem(L);
    for (size_t i = 0; i < count; i++) {
        if (!is_text(items[i]) || !is_ident(items[i]->text))
            return fail_node(L, items[i], "'requires' names tables or views, got %s", describe(items[i], d, sizeof d));
        if (!(r->requires[i] = strdup(items[i]->text)))
            return nomem(L);
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
    tb_status st = str_or_list(L, n, "sort", &items, &count, &one);
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
        return nomem(L);
    for (size_t i = 0; i < count; i++) {
        const specnode *it = items[i];
        if (!is_text(it))
            return fail_node(L, it, "'sort' keys must be column names, got %s", describe(it, d, sizeof d));
        int desc = it->text[0] == '-';
        const char *name = it->text + desc;
        if (!*name)
            return fail_node(L, it, "sort key '%s' names no column", it->text);
        if ((st = check_base_name(L, it->line, it->column, name)))
            return st;
        if (!(r->sort[i].column = strdup(name)))
            return nomem(L);
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
    tb_status st = str_or_list(L, n, what, &items, &count, &one);
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
        return nomem(L);
    for (size_t i = 0; i < count; i++) {
        const specnode *it = items[i];
        if (!is_text(it) || !it->text[0])
            return fail_node(L, it, "'%s' entries must be column names, got %s", what, describe(it, d, sizeof d));
        if ((st = check_base_name(L, it->line, it->column, it->text)))
            return st;
        if (!((*v)[i] = strdup(it->text)))
            return nomem(L);
        *nv = i + 1;
    }
    return TB_OK;
}

/* Parses `pivot:` (columns named by the data): key, names and values required, missing optional. */
static tb_status parse_pivot(loader *L, const specnode *n, tb_spec_report *r)
{
    tb_status st;
    if ((st = need_map(L, n, "pivot")) || (st = check_keys(L, n, "pivot", pivot_keys)))
        return st;
    static const char *const need[] = {"key", "names", "values"};
    char **dst[] = {&r->pivot_key, &r->pivot_names, &r->pivot_values};
    for (int i = 0; i < 3; i++) {
        const specnode_pair *p = specnode_get(n, need[i]);
        if (!p)
            return fail_node(L, n, "'pivot' needs '%s'", need[i]);
        if ((st = get_nonempty(L, p->value, need[i], dst[i])))
            return st;
    }
    const specnode_pair *p = specnode_get(n, "missing");
    if (p && (st = get_str(L, p->value, "missing", &r->pivot_missing)))
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
    tb_status st = str_or_list(L, n, "normalize", &items, &count, &one);
    if (st)
        return st;
    r->normalize = 0;
    for (size_t i = 0; i < count; i++) {
        const specnode *it = items[i];
        int k = is_text(it) ? list_index(normalize_names, it->text) : -1;
        if (k < 0)
            return fail_node(L, it, "unknown normalize step %s; expected one of: %s", describe(it, d, sizeof d),
                             join(normalize_names, buf, sizeof buf));
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
        return fail_node(L, n, "'regressions' must be a list of rules, got %s", describe(n, d, sizeof d));
    for (size_t i = 0; i < r->n_rules; i++)
        free(r->rules[i].column);
    free(r->rules);
    r->rules = NULL;
    r->n_rules = 0;
    r->has_rules = 1;
    if (n->n == 0)
        return TB_OK;
    if (!(r->rules = calloc(n->n, sizeof *r->rules)))
        return nomem(L);
    for (size_t i = 0; i < n->n; i++) {
        const specnode *m = n->items[i];
        if ((st = need_map(L, m, "a regressions rule")) || (st = check_keys(L, m, "a regressions rule", rule_keys)))
            return st;
        tb_spec_rule *u = &r->rules[i];
        r->n_rules = i + 1;
        *u = (tb_spec_rule){.rel = 0.05, .mad = TB_RULE_MAD, .nights = TB_RULE_NIGHTS, .pos = {.file = L->file, .line = m->line, .column = m->column}};
        const specnode_pair *p = specnode_get(m, "column");
        if (!p)
            return fail_node(L, m, "a regressions rule needs 'column'");
        if ((st = get_nonempty(L, p->value, "column", &u->column)) ||
            (st = check_base_name(L, p->value->line, p->value->column, u->column)))
            return st;
        if ((p = specnode_get(m, "worse"))) {
            const specnode *v = p->value;
            if (!is_text(v) || (strcmp(v->text, "higher") && strcmp(v->text, "lower")))
                return fail_node(L, v, "'worse' must be higher or lower, got %s", describe(v, d, sizeof d));
            u->worse_lower = !strcmp(v->text, "lower");
        }
        if ((p = specnode_get(m, "relative")) && percent_value(p->value, &u->rel))
            return fail_node(L, p->value, "'relative' must be a percentage such as 5%%, got %s",
                             describe(p->value, d, sizeof d));
        if ((p = specnode_get(m, "absolute")) && absolute_value(p->value, &u->abs, &u->abs_time))
            return fail_node(L, p->value, "'absolute' must be a number or a time such as 10us, got %s",
                             describe(p->value, d, sizeof d));
        if ((p = specnode_get(m, "min_count"))) {
            const specnode *v = p->value;
            if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_INT || v->i < 0)
                return fail_node(L, v, "'min_count' must be a non-negative integer, got %s", describe(v, d, sizeof d));
            u->min_count = v->i;
        }
        if ((p = specnode_get(m, "mad"))) {
            const specnode *v = p->value;
            double x = v->kind != SPECNODE_SCALAR ? -1 : v->type == SPECNODE_INT ? (double)v->i
                                                      : v->type == SPECNODE_REAL ? v->d : -1;
            if (!(x >= 0) || x > 1000)
                return fail_node(L, v, "'mad' must be a number from 0 to 1000 (how many scaled MADs), got %s",
                                 describe(v, d, sizeof d));
            u->mad = x;
        }
        if ((p = specnode_get(m, "nights"))) {
            const specnode *v = p->value;
            if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_INT || v->i < 5 || v->i > 1000)
                return fail_node(L, v, "'nights' must be an integer from 5 to 1000, got %s", describe(v, d, sizeof d));
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
    if ((st = need_map(L, n, "columns")))
        return st;
    for (size_t i = 0; i < n->n; i++) {
        const specnode_pair *p = &n->pairs[i];
        const specnode *v = p->value;
        if ((st = check_base_name(L, p->line, p->column, p->key)))
            return st;
        if (!(v->kind == SPECNODE_MAP || (v->kind == SPECNODE_SCALAR && v->type == SPECNODE_NULL)))
            return fail_node(L, v, "column '%.60s' must be a mapping with header, format and width, got %s", p->key,
                             describe(v, d, sizeof d));
        char where[96];
        snprintf(where, sizeof where, "column '%.60s'", p->key);
        if (v->kind == SPECNODE_MAP && (st = check_keys(L, v, where, column_keys)))
            return st;
        tb_spec_column c = {.pos = {.file = L->file, .line = p->line, .column = p->column}};
        const specnode_pair *h = specnode_get(v, "header"), *f = specnode_get(v, "format"), *w = specnode_get(v, "width");
        if (w) {
            const specnode *wv = w->value;
            if (wv->kind != SPECNODE_SCALAR || wv->type != SPECNODE_INT || wv->i < 0 || wv->i > 255)
                return fail_node(L, wv, "'width' must be an integer from 0 to 255, got %s", describe(wv, d, sizeof d));
            c.width = (int)wv->i;
        }
        if ((h && (st = get_str(L, h->value, "header", &c.header))) ||
            (f && (st = get_nonempty(L, f->value, "format", &c.format))) || !(c.name = strdup(p->key))) {
            free(c.header);
            free(c.format);
            return st ? st : nomem(L);
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
                return nomem(L);
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
    tb_status st = get_nonempty(L, v, what, out);
    return st ? st : check_base_name(L, v->line, v->column, *out);
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
    if ((st = need_map(L, c, "chart")) || (st = check_keys(L, c, "chart", chart_keys)))
        return st;
    const specnode_pair *type = specnode_get(c, "type"), *cat = specnode_get(c, "categories"),
                        *val = specnode_get(c, "values");
    if (!type)
        return fail_node(L, c, "chart needs 'type' (one of: %s)", join(chart_types, list, sizeof list));
    if (!val)
        return fail_node(L, c, "chart needs 'values' (the column to plot, or a list of columns)");
    if (!is_text(type->value) || !in_list(type->value->text, chart_types))
        return fail_node(L, type->value, "unknown chart type %s; expected one of: %s",
                         describe(type->value, d, sizeof d), join(chart_types, list, sizeof list));
    specnode *const *items = NULL;
    size_t n = 0;
    const specnode *one = NULL;
    if ((st = str_or_list(L, val->value, "values", &items, &n, &one)))
        return st;
    if (n == 0)
        return fail_node(L, val->value, "chart 'values' must name at least one column");
    if (n > 1 && !strcmp(type->value->text, "pie"))
        return fail_node(L, val->value, "a pie chart takes one 'values' column, got %zu", n);
    free(r->chart_type);
    free(r->chart_categories);
    r->chart_type = r->chart_categories = NULL;
    for (size_t i = 0; i < r->n_chart_values; i++)
        free(r->chart_values[i]);
    free(r->chart_values);
    r->n_chart_values = 0;
    if (!(r->chart_values = calloc(n, sizeof *r->chart_values)))
        return nomem(L);
    for (size_t i = 0; i < n; i++) {
        r->n_chart_values = i + 1; /* counted first: report_free frees a value that failed its check */
        if ((st = chart_column(L, items[i], "values", &r->chart_values[i])))
            return st;
    }
    if ((st = get_str(L, type->value, "type", &r->chart_type)) ||
        (cat && (st = chart_column(L, cat->value, "categories", &r->chart_categories))))
        return st;
    return TB_OK;
}

/* Parses one entry of `conditional:` into c. */
static tb_status parse_cond(loader *L, const specnode *n, tb_spec_cond *c)
{
    tb_status st;
    char d[64], list[128];
    if ((st = need_map(L, n, "conditional entry")) || (st = check_keys(L, n, "conditional entry", cond_keys)))
        return st;
    c->pos = (tb_spec_pos){.file = L->file, .line = n->line, .column = n->column};
    const specnode_pair *col = specnode_get(n, "column"), *type = specnode_get(n, "type"),
                        *op = specnode_get(n, "op"), *val = specnode_get(n, "value"), *top = specnode_get(n, "top");
    if (!col)
        return fail_node(L, n, "conditional format needs 'column'");
    if (!type)
        return fail_node(L, n, "conditional format needs 'type' (one of: %s)", join(cond_types, list, sizeof list));
    if ((st = chart_column(L, col->value, "column", &c->column)))
        return st;
    int t = is_text(type->value) ? list_index(cond_types, type->value->text) : -1;
    if (t < 0)
        return fail_node(L, type->value, "unknown conditional format type %s; expected one of: %s",
                         describe(type->value, d, sizeof d), join(cond_types, list, sizeof list));
    c->type = (tb_cond_type)t;
    if (c->type == TB_COND_THRESHOLD) {
        if (!op)
            return fail_node(L, n, "a threshold needs 'op' (one of: %s)", join(cond_ops, list, sizeof list));
        if (!val)
            return fail_node(L, n, "a threshold needs 'value' (a number)");
        int o = is_text(op->value) ? list_index(cond_ops, op->value->text) : -1;
        if (o < 0)
            return fail_node(L, op->value, "unknown threshold op %s; expected one of: %s",
                             describe(op->value, d, sizeof d), join(cond_ops, list, sizeof list));
        c->op = (tb_cond_op)o;
        const specnode *v = val->value;
        if (v->kind != SPECNODE_SCALAR || (v->type != SPECNODE_INT && v->type != SPECNODE_REAL) ||
            (v->type == SPECNODE_REAL && !isfinite(v->d)))
            return fail_node(L, v, "'value' must be a finite number, got %s", describe(v, d, sizeof d));
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
            return fail_node(L, v, "'top' must be an integer from 1 to 1000, got %s", describe(v, d, sizeof d));
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
        return fail_node(L, n, "'conditional' must be a list of formats, got %s", describe(n, d, sizeof d));
    for (size_t i = 0; i < r->n_conds; i++)
        free(r->conds[i].column);
    free(r->conds);
    r->conds = NULL;
    r->n_conds = 0;
    if (n->n == 0)
        return TB_OK;
    if (!(r->conds = calloc(n->n, sizeof *r->conds)))
        return nomem(L);
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
    if ((st = need_map(L, n, "xlsx")) || (st = check_keys(L, n, "xlsx", xlsx_keys)))
        return st;
    const specnode_pair *sheet = specnode_get(n, "sheet"), *chart = specnode_get(n, "chart"),
                        *cond = specnode_get(n, "conditional");
    if (sheet) {
        if ((st = get_str(L, sheet->value, "sheet", &r->xlsx_sheet)) || (st = check_sheet(L, sheet->value)))
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
    if ((p = specnode_get(m, "title")) && (st = get_nonempty(L, p->value, "title", &r->title)))
        return st;
    if ((p = specnode_get(m, "description")) && (st = get_str(L, p->value, "description", &r->description)))
        return st;
    if ((p = specnode_get(m, "requires")) && (st = parse_requires(L, p->value, r)))
        return st;
    if ((p = specnode_get(m, "outputs")) && (st = parse_outputs(L, p->value, &r->outputs)))
        return st;
    if ((p = specnode_get(m, "sort")) && (st = parse_sort(L, p->value, r)))
        return st;
    if ((p = specnode_get(m, "limit"))) {
        const specnode *v = p->value;
        if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_INT || v->i < 0)
            return fail_node(L, v, "'limit' must be a non-negative integer, got %s", describe(v, d, sizeof d));
        r->limit = v->i;
    }
    if ((p = specnode_get(m, "header_units"))) {
        const specnode *v = p->value;
        if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_BOOL)
            return fail_node(L, v, "'header_units' must be true or false, got %s", describe(v, d, sizeof d));
        r->header_units = (int)v->i;
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
    if ((p = specnode_get(m, "scope"))) {
        const specnode *v = p->value;
        if (is_text(v) && !strcmp(v->text, "rank"))
            r->scope = TB_SCOPE_RANK;
        else if (is_text(v) && !strcmp(v->text, "all"))
            r->scope = TB_SCOPE_ALL;
        else if (is_text(v) && !strcmp(v->text, "cluster"))
            r->scope = TB_SCOPE_CLUSTER;
        else
            return fail_node(L, v, "'scope' must be rank (the report runs on each rank alone), cluster (it reads "
                             "only the cluster tables) or all (on every rank at once), got %s",
                             describe(v, d, sizeof d));
        aux->scope_line = v->line;
        aux->scope_col = v->column;
    }
    if (r->scope == TB_SCOPE_RANK && (r->pivot_names || r->n_drop_empty)) {
        long line = aux->scope_line ? aux->scope_line : r->pos.line, col = aux->scope_line ? aux->scope_col : r->pos.column;
        return fail_pos(L, line, col, "report '%s': 'scope: rank' cannot be combined with '%s' (it needs every rank's "
                        "rows at once); use scope: all", r->id ? r->id : "?", r->pivot_names ? "pivot" : "drop_empty");
    }
    if ((p = specnode_get(m, "normalize")) && (st = parse_normalize(L, p->value, r)))
        return st;
    if ((p = specnode_get(m, "regressions")) && (st = parse_rules(L, p->value, r)))
        return st;
    return TB_OK;
}

/* Sets r->id from the `id` value v (checked) and records where it was written. */
static tb_status set_id(loader *L, const specnode *v, tb_spec_report *r, report_aux *aux)
{
    char d[64];
    if (!is_text(v) || !is_report_id(v->text))
        return fail_node(L, v, "'id' must be letters, digits, '_', '.' and '-' (it names output files), got %s",
                         describe(v, d, sizeof d));
    aux->id_line = v->line;
    aux->id_col = v->column;
    return get_str(L, v, "id", &r->id);
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

/* Reads a whole file into a new NUL-terminated buffer. Returns 0, or an errno value. */
static int read_all(const char *path, char **out, size_t *len)
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

/* Reads sql_file (v: its value) relative to the spec's directory into r. */
static tb_status read_sql_file(loader *L, const specnode *v, tb_spec_report *r)
{
    tb_status st;
    char *rel = NULL;
    if ((st = get_nonempty(L, v, "sql_file", &rel)))
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
        return nomem(L);
    }
    memcpy(path, L->file, dir);
    memcpy(path + dir, rel, strlen(rel) + 1);
    free(rel);
    free(r->sql_file);
    r->sql_file = path;
    char *text;
    size_t len;
    int e = read_all(path, &text, &len);
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

/* Duplicates src (strings, arrays) into dst, every position pointing at file. Returns 0 or -1 (no memory). */
static int copy_report(tb_spec_report *dst, const tb_spec_report *src, const char *file)
{
#define DUP(field)                                                                                                \
    do {                                                                                                          \
        if (src->field && !(dst->field = strdup(src->field)))                                                     \
            return -1;                                                                                            \
    } while (0)
    *dst = (tb_spec_report){
        .limit = src->limit, .header_units = src->header_units, .outputs = src->outputs, .scope = src->scope};
    DUP(id);
    DUP(title);
    DUP(description);
    DUP(sql);
    DUP(xlsx_sheet);
    DUP(chart_type);
    DUP(chart_categories);
    if (src->n_chart_values) {
        if (!(dst->chart_values = calloc(src->n_chart_values, sizeof *dst->chart_values)))
            return -1;
        for (; dst->n_chart_values < src->n_chart_values; dst->n_chart_values++)
            if (!(dst->chart_values[dst->n_chart_values] = strdup(src->chart_values[dst->n_chart_values])))
                return -1;
    }
    if (!(dst->origin = strdup(file)))
        return -1;
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
    dst->sql_pos = (tb_spec_pos){.file = dst->origin, .line = src->sql_pos.line, .column = src->sql_pos.column};
    dst->sql_verbatim = src->sql_verbatim;
    if (src->n_requires) {
        if (!(dst->requires = calloc(src->n_requires, sizeof *dst->requires)))
            return -1;
        for (; dst->n_requires < src->n_requires; dst->n_requires++)
            if (!(dst->requires[dst->n_requires] = strdup(src->requires[dst->n_requires])))
                return -1;
    }
    if (src->n_params) {
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
    }
    dst->normalize = src->normalize;
    dst->has_rules = src->has_rules;
    if (src->n_key) {
        if (!(dst->key = calloc(src->n_key, sizeof *dst->key)))
            return -1;
        for (; dst->n_key < src->n_key; dst->n_key++)
            if (!(dst->key[dst->n_key] = strdup(src->key[dst->n_key])))
                return -1;
    }
    if ((src->pivot_key && !(dst->pivot_key = strdup(src->pivot_key))) ||
        (src->pivot_names && !(dst->pivot_names = strdup(src->pivot_names))) ||
        (src->pivot_values && !(dst->pivot_values = strdup(src->pivot_values))) ||
        (src->pivot_missing && !(dst->pivot_missing = strdup(src->pivot_missing))))
        return -1;
    if (src->n_drop_empty) {
        if (!(dst->drop_empty = calloc(src->n_drop_empty, sizeof *dst->drop_empty)))
            return -1;
        for (; dst->n_drop_empty < src->n_drop_empty; dst->n_drop_empty++)
            if (!(dst->drop_empty[dst->n_drop_empty] = strdup(src->drop_empty[dst->n_drop_empty])))
                return -1;
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
#undef DUP
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
            return nomem(L);
        L->n_builtins = n;
    }
    for (size_t i = 0; i < n && i < L->n_builtins; i++) {
        if (!L->builtins[i]) {
            char name[256];
            snprintf(name, sizeof name, "builtin:%s.yaml", b[i].name);
            tb_status st = load_text(name, b[i].text, strlen(b[i].text), L->depth + 1, NULL, NULL, &L->builtins[i],
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
    if (!is_text(uv) || !uv->len)
        return fail_node(L, uv, "'use' must name a built-in report, got %s", describe(uv, d, sizeof d));
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
        return nomem(L);
    if (!(r->use = strdup(uv->text)))
        return nomem(L);
    for (size_t i = 0; i < bfile->n_params; i++)
        if (merge_param(r, &bfile->params[i]) != 0)
            return nomem(L);
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
            if (strcmp(r->params[k].name, p->key) == 0 && (st = set_value(L, &r->params[k], v, why)))
                return st;
    }
    const specnode_pair *pp = specnode_get(m, "params");
    if (pp) {
        if ((st = need_map(L, pp->value, "params")))
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
            if ((st = set_value(L, &r->params[k], p->value, why)))
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
        return fail_node(L, m, "report %zu must be a mapping, got %s", index, describe(m, d, sizeof d));
    r->limit = -1;
    r->header_units = 1;
    const specnode_pair *use = specnode_get(m, "use");
    if (use) {
        for (size_t i = 0; i < m->n; i++)
            if (!strcmp(m->pairs[i].key, "sql") || !strcmp(m->pairs[i].key, "sql_file"))
                return fail_key(L, &m->pairs[i], "'%s' cannot be combined with 'use' (the built-in report has its SQL)",
                                m->pairs[i].key);
        if ((st = check_keys(L, m, "a report with 'use'", use_keys)))
            return st;
        if ((st = parse_use(L, m, use, r, aux)))
            return st;
        r->pos = (tb_spec_pos){.file = L->file, .line = m->line, .column = m->column};
        return TB_OK;
    }
    if ((st = check_keys(L, m, "report", report_keys)))
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
            return fail_node(L, v, "'sql' must be a string, got %s", describe(v, d, sizeof d));
        if (!has_text(v->text))
            return fail_node(L, v, "'sql' is empty");
        if (!(r->sql = strdup(v->text)))
            return nomem(L);
        r->sql_pos = (tb_spec_pos){.file = L->file, .line = v->text_line, .column = v->text_column};
        /* literal blocks and one-line plain scalars only (specnode.h): quoting,
         * escapes and folding move the text against the file */
        r->sql_verbatim = v->verbatim;
    } else if ((st = read_sql_file(L, file->value, r))) {
        return st;
    }
    const specnode_pair *params = specnode_get(m, "params");
    if (params && (st = parse_params(L, params->value, &r->params, &r->n_params)))
        return st;
    if ((st = parse_common(L, m, r, aux)))
        return st;
    if (!r->title && !(r->title = strdup(r->id)))
        return nomem(L);
    return TB_OK;
}

static tb_status parse_reports(loader *L, const specnode *n)
{
    tb_spec *spec = L->spec;
    char d[64];
    tb_status st;
    if (n->kind == SPECNODE_SCALAR && n->type == SPECNODE_NULL)
        return TB_OK;
    if (n->kind != SPECNODE_SEQ)
        return fail_node(L, n, "'reports' must be a list of reports, got %s", describe(n, d, sizeof d));
    if (n->n == 0)
        return TB_OK;
    if (!(spec->reports = calloc(n->n, sizeof *spec->reports)) || !(L->aux = calloc(n->n, sizeof *L->aux)))
        return nomem(L);
    for (size_t i = 0; i < n->n; i++) {
        spec->n_reports = i + 1;
        if ((st = parse_report(L, n->items[i], i + 1, &spec->reports[i], &L->aux[i])))
            return st;
    }
    for (size_t i = 0; i < spec->n_reports; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(spec->reports[i].id, spec->reports[j].id) == 0)
                return fail_pos(L, L->aux[i].id_line, L->aux[i].id_col, "duplicate report id '%s' (first at line %ld)",
                                spec->reports[i].id, L->aux[j].id_line);
            const char *a = spec->reports[i].xlsx_sheet, *b = spec->reports[j].xlsx_sheet;
            if (a && b && str_eq_ci(a, b)) {
                long line = L->aux[i].sheet_line ? L->aux[i].sheet_line : spec->reports[i].pos.line;
                long col = L->aux[i].sheet_line ? L->aux[i].sheet_col : spec->reports[i].pos.column;
                long first = L->aux[j].sheet_line ? L->aux[j].sheet_line : spec->reports[j].pos.line;
                return fail_pos(L, line, col, "duplicate sheet name '%s' (first at line %ld)", a, first);
            }
        }
    }
    return TB_OK;
}

/* ---- the rest of a tracebook spec ---------------------------------------------------- */

/* A pattern option (metrics/classes.h): a string or a list of strings, each a valid pattern. */
static tb_status parse_patterns(loader *L, const specnode *v, const char *path, metrics_patterns *p)
{
    char d[64], why[128];
    specnode *const *items = NULL;
    size_t count = 0;
    const specnode *one;
    tb_status st = str_or_list(L, v, path, &items, &count, &one);
    if (st)
        return st;
    if (!(p->v = calloc(count ? count : 1, sizeof *p->v)))
        return nomem(L);
    p->set = 1;
    for (size_t i = 0; i < count; i++) {
        const specnode *it = items[i];
        /* a number as written is no pattern (is_text would take it) */
        if (!is_text(it) || it->type != SPECNODE_STR)
            return fail_node(L, it, "'%s' item %zu must be a string pattern, got %s", path, i + 1,
                             describe(it, d, sizeof d));
        if (class_pattern_check(it->text, why, sizeof why) != 0)
            return fail_node(L, it, "'%s' has a bad regular expression '%.60s': %s", path, it->text, why);
        if (!(p->v[p->n] = strdup(it->text)))
            return nomem(L);
        p->n++;
    }
    return TB_OK;
}

/* One option's value into the struct (def->kind says how; a null keeps the default). */
static tb_status parse_option(loader *L, const specnode *v, const char *path, const metrics_option_def *def);

/*
 * A mapping of metrics options checked against level (metrics/options.h):
 * an unknown key is an error that suggests the closest known one.
 */
static tb_status parse_option_map(loader *L, const specnode *n, const char *path, const metrics_option_def *level)
{
    tb_status st;
    if ((st = need_map(L, n, path)))
        return st;
    for (size_t i = 0; i < n->n; i++) {
        const specnode_pair *pair = &n->pairs[i];
        const metrics_option_def *def = level;
        while (def->key && strcmp(def->key, pair->key) != 0)
            def++;
        if (!def->key) {
            const char *names[16];
            char list[400], near[96];
            metrics_option_keys(level, names, sizeof names / sizeof names[0]);
            return fail_key(L, pair, "unknown key '%.60s' in %s%s; expected one of: %s", pair->key, path,
                            did_you_mean(pair->key, names, near, sizeof near), join(names, list, sizeof list));
        }
        char sub[160];
        snprintf(sub, sizeof sub, "%s.%s", path, def->key);
        if ((st = parse_option(L, pair->value, sub, def)))
            return st;
    }
    return TB_OK;
}

static tb_status parse_option(loader *L, const specnode *v, const char *path, const metrics_option_def *def)
{
    char d[64], list[200];
    if (def->kind == METRICS_OPT_SECTION)
        return parse_option_map(L, v, path, def->sub);
    if (v->kind == SPECNODE_SCALAR && v->type == SPECNODE_NULL)
        return TB_OK;
    void *at = (char *)L->spec->metrics + def->offset;
    switch (def->kind) {
    case METRICS_OPT_BOOL:
        if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_BOOL)
            return fail_node(L, v, "'%s' must be true or false, got %s", path, describe(v, d, sizeof d));
        *(int *)at = (int)v->i;
        return TB_OK;
    case METRICS_OPT_NUMBER: {
        int num = v->kind == SPECNODE_SCALAR && (v->type == SPECNODE_INT || v->type == SPECNODE_REAL);
        double x = !num ? 0 : v->type == SPECNODE_INT ? (double)v->i : v->d;
        if (!num || !isfinite(x) || x < 0)
            return fail_node(L, v, "'%s' must be a number >= 0, got %s", path, describe(v, d, sizeof d));
        *(double *)at = x;
        return TB_OK;
    }
    case METRICS_OPT_CHOICE:
        for (int i = 0; is_text(v) && def->values[i]; i++)
            if (strcmp(v->text, def->values[i]) == 0) {
                *(int *)at = i;
                return TB_OK;
            }
        return fail_node(L, v, "'%s' must be one of: %s; got %s", path, join(def->values, list, sizeof list),
                         describe(v, d, sizeof d));
    case METRICS_OPT_PATTERNS:
        return parse_patterns(L, v, path, at);
    case METRICS_OPT_SECTION:
        break;
    }
    return TB_OK;
}

/* Converts a metrics subtree to JSON (for display: tb_spec.metrics_json). Returns new, or NULL with err set. */
static json_t *to_json(loader *L, const specnode *n)
{
    json_t *j = NULL;
    char d[64];
    if (n->kind == SPECNODE_MAP) {
        if (!(j = json_object()))
            goto nomem;
        for (size_t i = 0; i < n->n; i++) {
            json_t *v = to_json(L, n->pairs[i].value);
            if (!v || json_object_set_new(j, n->pairs[i].key, v) != 0) {
                if (!v) {
                    json_decref(j);
                    return NULL;
                }
                goto nomem;
            }
        }
        return j;
    }
    if (n->kind == SPECNODE_SEQ) {
        if (!(j = json_array()))
            goto nomem;
        for (size_t i = 0; i < n->n; i++) {
            json_t *v = to_json(L, n->items[i]);
            if (!v) {
                json_decref(j);
                return NULL;
            }
            if (json_array_append_new(j, v) != 0)
                goto nomem;
        }
        return j;
    }
    switch (n->type) {
    case SPECNODE_NULL: j = json_null(); break;
    case SPECNODE_BOOL: j = json_boolean(n->i); break;
    case SPECNODE_INT: j = json_integer(n->i); break;
    case SPECNODE_REAL:
        if (!isfinite(n->d)) {
            fail_node(L, n, "'metrics' values must be finite numbers, got %s", describe(n, d, sizeof d));
            return NULL;
        }
        j = json_real(n->d);
        break;
    case SPECNODE_STR: j = json_stringn(n->text, n->len); break;
    }
    if (j)
        return j;
nomem:
    json_decref(j);
    nomem(L);
    return NULL;
}

/* The `metrics` section: every option checked and parsed into spec->metrics. */
static tb_status parse_metrics(loader *L, const specnode *n)
{
    if (!(L->spec->metrics = malloc(sizeof *L->spec->metrics)))
        return nomem(L);
    metrics_options_init(L->spec->metrics);
    tb_status st = parse_option_map(L, n, "metrics", metrics_option_table);
    if (st)
        return st;
    /* the policy by name, for the run's metadata (written only when given) */
    const specnode_pair *step = specnode_get(n, "step_trace");
    const specnode_pair *pol = step ? specnode_get(step->value, "policy") : NULL;
    if (pol && is_text(pol->value) &&
        !(L->spec->step_trace_policy = strdup(metrics_policy_names[L->spec->metrics->policy])))
        return nomem(L);
    /* the section as written, for the run's metadata */
    json_t *j = to_json(L, n);
    if (!j)
        return L->err->code;
    L->spec->metrics_json = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return L->spec->metrics_json ? TB_OK : nomem(L);
}

static tb_status parse_workbook(loader *L, const specnode *n)
{
    tb_status st;
    if ((st = need_map(L, n, "workbook")) || (st = check_keys(L, n, "workbook", workbook_keys)))
        return st;
    const specnode_pair *f = specnode_get(n, "file");
    if (f && (st = get_nonempty(L, f->value, "file", &L->spec->workbook_file)))
        return st;
    const char *w = L->spec->workbook_file;
    if (w && (strchr(w, '/') || !strcmp(w, ".") || !strcmp(w, "..")))
        return fail_node(L, f->value, "workbook 'file' must be a file name, got '%.60s': it is written in the "
                         "output folder", w);
    const specnode_pair *sh = specnode_get(n, "sheets");
    if (!sh)
        return TB_OK;
    char d[64];
    if (sh->value->kind != SPECNODE_SEQ)
        return fail_node(L, sh->value, "workbook 'sheets' must be a list of report ids, got %s",
                         describe(sh->value, d, sizeof d));
    L->wb_sheets = sh->value;
    if (sh->value->n && !(L->spec->workbook_sheets = calloc(sh->value->n, sizeof *L->spec->workbook_sheets)))
        return nomem(L);
    for (size_t i = 0; i < sh->value->n; i++) {
        L->spec->n_workbook_sheets = i + 1;
        if ((st = get_nonempty(L, sh->value->items[i], "sheets", &L->spec->workbook_sheets[i])))
            return st;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(L->spec->workbook_sheets[k], L->spec->workbook_sheets[i]))
                return fail_node(L, sh->value->items[i], "workbook 'sheets' names report '%.60s' twice",
                                 L->spec->workbook_sheets[i]);
    }
    return TB_OK;
}

/* Every id of workbook.sheets must name a report of this spec. */
static tb_status check_wb_sheets(loader *L)
{
    for (size_t i = 0; i < L->spec->n_workbook_sheets; i++) {
        int found = 0;
        for (size_t k = 0; k < L->spec->n_reports && !found; k++)
            found = !strcmp(L->spec->reports[k].id, L->spec->workbook_sheets[i]);
        if (!found)
            return fail_node(L, L->wb_sheets->items[i], "workbook 'sheets' names '%.60s', which is no report of "
                             "this spec", L->spec->workbook_sheets[i]);
    }
    return TB_OK;
}

static tb_status parse_tracebook(loader *L, const specnode *root)
{
    tb_status st;
    char d[64];
    const specnode_pair *dup, *first, *p;
    if (specnode_find_dup(root, &dup, &first))
        return fail_key(L, dup, "duplicate key '%.60s' (first at line %ld)", dup->key, first->line);
    const specnode *v = specnode_get(root, "tracebook")->value;
    if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_INT || v->i != 1)
        return fail_node(L, v, "'tracebook' must be 1, got %s", describe(v, d, sizeof d));
    L->spec->version = 1;
    if ((st = check_keys(L, root, "the spec", top_keys)))
        return st;
    if ((st = parse_json_process(L, specnode_get(root, "json_process"), 1)))
        return st;
    if ((p = specnode_get(root, "params"))) {
        L->params = p->value;
        if ((st = parse_params(L, p->value, &L->spec->params, &L->spec->n_params)))
            return st;
    }
    if ((p = specnode_get(root, "metrics")) && (st = parse_metrics(L, p->value)))
        return st;
    if ((p = specnode_get(root, "outputs")) && (st = parse_outputs(L, p->value, &L->spec->outputs)))
        return st;
    if ((p = specnode_get(root, "workbook")) && (st = parse_workbook(L, p->value)))
        return st;
    if ((p = specnode_get(root, "reports")) && (st = parse_reports(L, p->value)))
        return st;
    return check_wb_sheets(L);
}

/* ---- entry points ---------------------------------------------------------------------- */

/* 1 when the len bytes at text contain word. */
static int mentions(const char *text, size_t len, const char *word)
{
    size_t k = strlen(word);
    for (size_t i = 0; i + k <= len; i++)
        if (memcmp(text + i, word, k) == 0)
            return 1;
    return 0;
}

/* Why the text is not JSON, as jansson says it, into buf. */
static void json_problem(const char *text, size_t len, char *buf, size_t cap)
{
    json_error_t je;
    json_t *j = json_loadb(text, len, JSON_DECODE_ANY, &je);
    if (j) {
        json_decref(j);
        snprintf(buf, cap, "not a JSON object");
        return;
    }
    snprintf(buf, cap, "not valid JSON (%.120s at %d:%d)", je.text, je.line, je.column > 0 ? je.column : 1);
}

static tb_status load_text(const char *name, const char *text, size_t len, int depth,
                           void (*warn)(void *ctx, const char *msg), void *ctx, tb_spec **out, tb_error *err)
{
    *out = NULL;
    specnode *root = NULL;
    loader L = {.err = err, .warn = warn, .ctx = ctx, .depth = depth};
    tb_status st = TB_OK;
    tb_spec *spec = calloc(1, sizeof *spec);
    if (!spec || !(spec->path = strdup(name))) {
        free(spec);
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    L.spec = spec;
    L.file = spec->path;
    spec->json_process.all = 1;

    size_t at = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (at < len && strchr(" \t\r\n", text[at]) && text[at])
        at++;
    int json = at < len && (text[at] == '{' || text[at] == '[');
    int tracebook = mentions(text, len, "tracebook");

    st = specnode_parse(spec->path, text, len, json, &root, err);
    if (st == TB_ERR_NOMEM)
        goto fail;
    if (st || !root || root->kind != SPECNODE_MAP) {
        if (tracebook) {
            if (!st) {
                char d[64];
                st = root ? fail_node(&L, root, "a spec must be a mapping (tracebook: 1, reports: ...), got %s",
                                      describe(root, d, sizeof d))
                          : fail_pos(&L, 1, 1, "a spec must be a mapping (tracebook: 1, reports: ...), got nothing");
            }
            goto fail;
        }
        /* not a spec: an msprof reports file that msprof would not read as JSON */
        char why[200];
        size_t skip = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
        if (at >= len)
            snprintf(why, sizeof why, "the file is empty");
        else
            json_problem(text + skip, len - skip, why, sizeof why);
        tb_error_clear(err);
        st = TB_OK;
        spec->msprof_reports = 1;
        fall_back(&L, "%s" AS_MSPROF, why);
        goto done;
    }
    if (specnode_get(root, "tracebook")) {
        if ((st = parse_tracebook(&L, root)))
            goto fail;
    } else {
        static const char *const sections[] = {"reports", "params", "metrics", "outputs", "workbook", NULL};
        for (size_t i = 0; sections[i]; i++) {
            const specnode_pair *p = specnode_get(root, sections[i]);
            if (p) {
                st = fail_pos(&L, root->line, root->column, "missing 'tracebook: 1' (a spec with '%s' needs it)",
                              sections[i]);
                goto fail;
            }
        }
        spec->msprof_reports = 1;
        if ((st = parse_json_process(&L, specnode_get(root, "json_process"), 0)))
            goto fail;
    }
done:
    specnode_free(root);
    for (size_t i = 0; i < L.n_builtins; i++)
        tb_spec_free(L.builtins[i]);
    free(L.builtins);
    free(L.aux);
    *out = spec;
    return TB_OK;
fail:
    specnode_free(root);
    for (size_t i = 0; i < L.n_builtins; i++)
        tb_spec_free(L.builtins[i]);
    free(L.builtins);
    free(L.aux);
    tb_spec_free(spec);
    return st;
}

tb_status tb_spec_load_mem(const char *name, const char *text, size_t len, tb_spec **out,
                           void (*warn)(void *ctx, const char *msg), void *ctx, tb_error *err)
{
    return load_text(name ? name : "<spec>", text, len, 0, warn, ctx, out, err);
}

tb_status tb_spec_load(const char *path, tb_spec **out, void (*warn)(void *ctx, const char *msg), void *ctx,
                       tb_error *err)
{
    *out = NULL;
    char *text;
    size_t len;
    int e = read_all(path, &text, &len);
    if (e == ENOMEM)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    if (e == EFBIG)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "spec file '%s' is larger than %u MiB", path,
                           MAX_SPEC_BYTES >> 20);
    if (e)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot read spec file '%s': %s", path, strerror(e));
    tb_status st = load_text(path, text, len, 0, warn, ctx, out, err);
    free(text);
    return st;
}

/* ---- accessors (tracebook/spec.h) ------------------------------------------ */

const char *tb_spec_path(const tb_spec *spec)
{
    return spec->path;
}

int tb_spec_is_msprof_reports(const tb_spec *spec)
{
    return spec->msprof_reports;
}

unsigned tb_spec_outputs(const tb_spec *spec)
{
    return spec->outputs;
}

size_t tb_spec_n_reports(const tb_spec *spec)
{
    return spec->n_reports;
}

const tb_spec_report *tb_spec_report_at(const tb_spec *spec, size_t i)
{
    return i < spec->n_reports ? &spec->reports[i] : NULL;
}

const char *tb_report_id(const tb_spec_report *rep)
{
    return rep->id;
}

const char *tb_report_title(const tb_spec_report *rep)
{
    return rep->title ? rep->title : rep->id;
}

const char *tb_report_description(const tb_spec_report *rep)
{
    return rep->description;
}

size_t tb_report_n_requires(const tb_spec_report *rep)
{
    return rep->n_requires;
}

const char *tb_report_require(const tb_spec_report *rep, size_t i)
{
    return i < rep->n_requires ? rep->requires[i] : NULL;
}

size_t tb_report_n_params(const tb_spec_report *rep)
{
    return rep->n_params;
}

const tb_param *tb_report_param(const tb_spec_report *rep, size_t i)
{
    return i < rep->n_params ? &rep->params[i] : NULL;
}

unsigned tb_report_outputs(const tb_spec_report *rep)
{
    return rep->outputs;
}

tb_scope tb_report_scope(const tb_spec_report *rep)
{
    return rep->scope;
}
