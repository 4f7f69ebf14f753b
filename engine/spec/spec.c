/* SPDX-License-Identifier: MIT */
/*
 * spec.c - loads and validates report specs (tb_spec_load_mem; tb_spec_load
 * reads the file in spec_file.c; see tracebook/spec.h).
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
 *
 * This file holds the top level of a spec (json_process, params, metrics,
 * outputs, workbook), the checking helpers every part uses, the entry
 * points and the accessors; the entries of `reports` (their keys, SQL and
 * `use`) are read in spec_report.c. spec_int.h is what the two share.
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

#define AS_MSPROF ": exporting all layers, as msprof does"

/* msprof's json_process layer names: the sample file's 30, then dpu and fusion_task. */
static const char *const layer_names[] = {
    "ascend",   "acc_pmu", "cann",          "ddr",      "stars_chip_trans", "hbm",          "communication",
    "hccs",     "os_runtime_api",           "network_usage", "disk_usage",  "memory_usage", "cpu_usage",
    "msproftx", "npu_mem", "overlap_analyse", "pcie",   "sio",              "stars_soc",    "step_trace",
    "freq",     "llc",     "nic",           "roce",     "qos",              "device_tx",    "ccu",
    "biu_perf", "ub",      "block_detail",  "dpu",      "fusion_task",      NULL};

static const char *const top_keys[] = {"tracebook", "json_process", "params", "metrics",
                                       "outputs",   "reports",      "workbook", "html", NULL};
static const char *const workbook_keys[] = {"file", "sheets", "contents", NULL};
static const char *const html_keys[] = {"file", "title", NULL};


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
                             spec_describe(m, d, sizeof d));
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
        return spec_nomem(L);
    for (size_t i = 0; i < m->n; i++) {
        const specnode_pair *p = &m->pairs[i];
        int seen = 0; /* a repeated key keeps its first place and its last value (Python's dict) */
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(m->pairs[j].key, p->key) == 0;
        if (seen)
            continue;
        const specnode *v = specnode_get(m, p->key)->value;
        if (!spec_in_list(p->key, layer_names)) {
            char near[96];
            if (strict)
                return fail_key(L, p, "unknown key '%.60s' in json_process%s; expected one of: %s", p->key,
                                spec_did_you_mean(p->key, layer_names, near, sizeof near),
                                spec_join(layer_names, list, sizeof list));
            fall_back(L, "unknown key '%.40s' at %ld:%ld in json_process" AS_MSPROF, p->key, p->line, p->column);
            return TB_OK;
        }
        if (v->kind != SPECNODE_SCALAR || v->type != SPECNODE_BOOL) {
            if (strict)
                return fail_node(L, v, "'%s' in json_process must be true or false, got %s", p->key,
                                 spec_describe(v, d, sizeof d));
            fall_back(L, "non-boolean value %s for '%s' at %ld:%ld in json_process" AS_MSPROF,
                      spec_describe(v, d, sizeof d), p->key, v->line, v->column);
            return TB_OK;
        }
        if (v->i) {
            if (!(jp->layers[jp->n_layers] = strdup(p->key)))
                return spec_nomem(L);
            jp->n_layers++;
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
    tb_status st = spec_str_or_list(L, v, path, &items, &count, &one);
    if (st)
        return st;
    if (!(p->v = calloc(count ? count : 1, sizeof *p->v)))
        return spec_nomem(L);
    p->set = 1;
    for (size_t i = 0; i < count; i++) {
        const specnode *it = items[i];
        /* a number as written is no pattern (is_text would take it) */
        if (!spec_is_text(it) || it->type != SPECNODE_STR)
            return fail_node(L, it, "'%s' item %zu must be a string pattern, got %s", path, i + 1,
                             spec_describe(it, d, sizeof d));
        if (class_pattern_check(it->text, why, sizeof why) != 0)
            return fail_node(L, it, "'%s' has a bad regular expression '%.60s': %s", path, it->text, why);
        if (!(p->v[p->n] = strdup(it->text)))
            return spec_nomem(L);
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
    if ((st = spec_need_map(L, n, path)))
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
                            spec_did_you_mean(pair->key, names, near, sizeof near), spec_join(names, list, sizeof list));
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
            return fail_node(L, v, "'%s' must be true or false, got %s", path, spec_describe(v, d, sizeof d));
        *(int *)at = (int)v->i;
        return TB_OK;
    case METRICS_OPT_NUMBER: {
        int num = v->kind == SPECNODE_SCALAR && (v->type == SPECNODE_INT || v->type == SPECNODE_REAL);
        double x = !num ? 0 : v->type == SPECNODE_INT ? (double)v->i : v->d;
        if (!num || !isfinite(x) || x < 0)
            return fail_node(L, v, "'%s' must be a number >= 0, got %s", path, spec_describe(v, d, sizeof d));
        *(double *)at = x;
        return TB_OK;
    }
    case METRICS_OPT_CHOICE:
        for (int i = 0; spec_is_text(v) && def->values[i]; i++)
            if (strcmp(v->text, def->values[i]) == 0) {
                *(int *)at = i;
                return TB_OK;
            }
        return fail_node(L, v, "'%s' must be one of: %s; got %s", path, spec_join(def->values, list, sizeof list),
                         spec_describe(v, d, sizeof d));
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
            fail_node(L, n, "'metrics' values must be finite numbers, got %s", spec_describe(n, d, sizeof d));
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
    spec_nomem(L);
    return NULL;
}

/* The `metrics` section: every option checked and parsed into spec->metrics. */
static tb_status parse_metrics(loader *L, const specnode *n)
{
    if (!(L->spec->metrics = malloc(sizeof *L->spec->metrics)))
        return spec_nomem(L);
    metrics_options_init(L->spec->metrics);
    tb_status st = parse_option_map(L, n, "metrics", metrics_option_table);
    if (st)
        return st;
    /* the policy by name, for the run's metadata (written only when given) */
    const specnode_pair *step = specnode_get(n, "step_trace");
    const specnode_pair *pol = step ? specnode_get(step->value, "policy") : NULL;
    if (pol && spec_is_text(pol->value) &&
        !(L->spec->step_trace_policy = strdup(metrics_policy_names[L->spec->metrics->policy])))
        return spec_nomem(L);
    /* the section as written, for the run's metadata */
    json_t *j = to_json(L, n);
    if (!j)
        return L->err->code;
    L->spec->metrics_json = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return L->spec->metrics_json ? TB_OK : spec_nomem(L);
}

static tb_status parse_workbook(loader *L, const specnode *n)
{
    tb_status st;
    if ((st = spec_need_map(L, n, "workbook")) || (st = spec_check_keys(L, n, "workbook", workbook_keys)))
        return st;
    const specnode_pair *f = specnode_get(n, "file");
    if (f && (st = spec_get_nonempty(L, f->value, "file", &L->spec->workbook_file)))
        return st;
    const char *w = L->spec->workbook_file;
    if (w && (strchr(w, '/') || !strcmp(w, ".") || !strcmp(w, "..")))
        return fail_node(L, f->value, "workbook 'file' must be a file name, got '%.60s': it is written in the "
                         "output folder", w);
    char d[64];
    const specnode_pair *c = specnode_get(n, "contents");
    if (c && (c->value->kind != SPECNODE_SCALAR || c->value->type != SPECNODE_BOOL))
        return fail_node(L, c->value, "workbook 'contents' must be true or false, got %s",
                         spec_describe(c->value, d, sizeof d));
    if (c)
        L->spec->workbook_contents = (int)c->value->i;
    const specnode_pair *sh = specnode_get(n, "sheets");
    if (!sh)
        return TB_OK;
    if (sh->value->kind != SPECNODE_SEQ)
        return fail_node(L, sh->value, "workbook 'sheets' must be a list of report ids, got %s",
                         spec_describe(sh->value, d, sizeof d));
    L->wb_sheets = sh->value;
    if (sh->value->n && !(L->spec->workbook_sheets = calloc(sh->value->n, sizeof *L->spec->workbook_sheets)))
        return spec_nomem(L);
    for (size_t i = 0; i < sh->value->n; i++) {
        L->spec->n_workbook_sheets = i + 1;
        if ((st = spec_get_nonempty(L, sh->value->items[i], "sheets", &L->spec->workbook_sheets[i])))
            return st;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(L->spec->workbook_sheets[k], L->spec->workbook_sheets[i]))
                return fail_node(L, sh->value->items[i], "workbook 'sheets' names report '%.60s' twice",
                                 L->spec->workbook_sheets[i]);
    }
    return TB_OK;
}

/* html: the page's file name (in the output folder) and heading. */
static tb_status parse_html(loader *L, const specnode *n)
{
    tb_status st;
    if ((st = spec_need_map(L, n, "html")) || (st = spec_check_keys(L, n, "html", html_keys)))
        return st;
    const specnode_pair *f = specnode_get(n, "file"), *t = specnode_get(n, "title");
    if (f && (st = spec_get_nonempty(L, f->value, "file", &L->spec->html_file)))
        return st;
    const char *h = L->spec->html_file;
    if (h && (strchr(h, '/') || !strcmp(h, ".") || !strcmp(h, "..")))
        return fail_node(L, f->value, "html 'file' must be a file name, got '%.60s': it is written in the "
                         "output folder", h);
    if (t && (st = spec_get_nonempty(L, t->value, "title", &L->spec->html_title)))
        return st;
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
        return fail_node(L, v, "'tracebook' must be 1, got %s", spec_describe(v, d, sizeof d));
    L->spec->version = 1;
    if ((st = spec_check_keys(L, root, "the spec", top_keys)))
        return st;
    if ((st = parse_json_process(L, specnode_get(root, "json_process"), 1)))
        return st;
    if ((p = specnode_get(root, "params"))) {
        L->params = p->value;
        if ((st = spec_parse_params(L, p->value, &L->spec->params, &L->spec->n_params)))
            return st;
    }
    if ((p = specnode_get(root, "metrics")) && (st = parse_metrics(L, p->value)))
        return st;
    if ((p = specnode_get(root, "outputs")) && (st = spec_parse_outputs(L, p->value, &L->spec->outputs)))
        return st;
    if ((p = specnode_get(root, "workbook")) && (st = parse_workbook(L, p->value)))
        return st;
    if ((p = specnode_get(root, "html")) && (st = parse_html(L, p->value)))
        return st;
    if ((p = specnode_get(root, "reports")) && (st = spec_parse_reports(L, p->value)))
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

tb_status spec_load_text(const char *name, const char *text, size_t len, int depth,
                           void (*warn)(void *ctx, const char *msg), void *ctx, tb_spec **out, tb_error *err)
{
    *out = NULL;
    specnode *root = NULL;
    loader L = {.err = err, .warn = warn, .ctx = ctx, .depth = depth, .load = spec_load_text};
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
                                      spec_describe(root, d, sizeof d))
                          : spec_fail_pos(&L, 1, 1, "a spec must be a mapping (tracebook: 1, reports: ...), got nothing");
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
        static const char *const sections[] = {"reports", "params", "metrics", "outputs", "workbook", "html", NULL};
        for (size_t i = 0; sections[i]; i++) {
            const specnode_pair *p = specnode_get(root, sections[i]);
            if (p) {
                st = spec_fail_pos(&L, root->line, root->column, "missing 'tracebook: 1' (a spec with '%s' needs it)",
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
    return spec_load_text(name ? name : "<spec>", text, len, 0, warn, ctx, out, err);
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
