/* SPDX-License-Identifier: MIT */
/*
 * classes.c - name rules for the classes of device work: globs and POSIX
 * regular expressions read from a spec option (see classes.h for the
 * pattern syntax), matched against names or, once, against every string of
 * a DB's STRING_IDS.
 */
#include <fnmatch.h>
#include <jansson.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/classes.h"

typedef struct pattern {
    char *text;  /* the glob, or the regular expression without its "re:" */
    int is_re;
    regex_t re;  /* compiled when is_re */
} pattern;

struct class_rule {
    pattern *v;
    size_t n;
};

#define RE_PREFIX "re:"

void class_rule_destroy(class_rule *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].is_re)
            regfree(&r->v[i].re);
        free(r->v[i].text);
    }
    free(r->v);
    free(r);
}

/* Appends one pattern; the option path names it in errors. */
static tb_status add(class_rule *r, const char *path, const char *text, tb_error *err)
{
    pattern *p = &r->v[r->n];
    memset(p, 0, sizeof *p);
    p->is_re = strncmp(text, RE_PREFIX, strlen(RE_PREFIX)) == 0;
    p->text = strdup(p->is_re ? text + strlen(RE_PREFIX) : text);
    if (!p->text)
        return tb_error_set(err, TB_ERR_NOMEM, "metrics.%s: out of memory", path);
    if (p->is_re) {
        int rc = regcomp(&p->re, p->text, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char why[128];
            regerror(rc, &p->re, why, sizeof why);
            free(p->text);
            return tb_error_set(err, TB_ERR_USAGE, "metrics.%s: bad regular expression '%s': %s", path, text, why);
        }
    }
    r->n++;
    return TB_OK;
}

tb_status class_rule_create(const metric_ctx *m, const char *path, const char *const *defaults, class_rule **out,
                            tb_error *err)
{
    *out = NULL;
    tb_status rc = TB_OK;
    class_rule *r = calloc(1, sizeof *r);
    if (!r)
        return tb_error_set(err, TB_ERR_NOMEM, "metrics.%s: out of memory", path);
    json_t *v = metrics_option_node(m, path);
    if (v && !json_is_null(v)) {
        size_t n = json_is_array(v) ? json_array_size(v) : 1;
        if (!json_is_array(v) && !json_is_string(v)) {
            rc = tb_error_set(err, TB_ERR_USAGE, "metrics.%s: expected a pattern or a list of patterns", path);
            goto fail;
        }
        if (n && !(r->v = calloc(n, sizeof *r->v))) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "metrics.%s: out of memory", path);
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
            if (!json_is_string(item)) {
                rc = tb_error_set(err, TB_ERR_USAGE, "metrics.%s: item %zu is not a string pattern", path, i + 1);
                goto fail;
            }
            if ((rc = add(r, path, json_string_value(item), err)))
                goto fail;
        }
    } else if (defaults) {
        size_t n = 0;
        while (defaults[n])
            n++;
        if (n && !(r->v = calloc(n, sizeof *r->v))) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "metrics.%s: out of memory", path);
            goto fail;
        }
        for (size_t i = 0; i < n; i++)
            if ((rc = add(r, path, defaults[i], err)))
                goto fail;
    }
    json_decref(v);
    *out = r;
    return TB_OK;
fail:
    json_decref(v);
    class_rule_destroy(r);
    return rc;
}

int class_rule_match(const class_rule *r, const char *name)
{
    if (!r || !name)
        return 0;
    for (size_t i = 0; i < r->n; i++) {
        const pattern *p = &r->v[i];
        if (p->is_re ? regexec(&p->re, name, 0, NULL, 0) == 0 : fnmatch(p->text, name, 0) == 0)
            return 1;
    }
    return 0;
}

size_t class_rule_count(const class_rule *r)
{
    return r ? r->n : 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

tb_status class_rule_ids(const class_rule *r, sqlite3 *db, class_ids *out, tb_error *err)
{
    out->v = NULL;
    out->n = 0;
    if (!r || r->n == 0)
        return TB_OK;
    size_t cap = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT id, value FROM STRING_IDS", -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "reading STRING_IDS: %s", sqlite3_errmsg(db));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *s = (const char *)sqlite3_column_text(st, 1);
        if (sqlite3_column_type(st, 0) == SQLITE_NULL || !class_rule_match(r, s))
            continue;
        if (out->n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            int64_t *v = realloc(out->v, nc * sizeof *v);
            if (!v) {
                sqlite3_finalize(st);
                class_ids_finish(out);
                return tb_error_set(err, TB_ERR_NOMEM, "matching names: out of memory");
            }
            out->v = v;
            cap = nc;
        }
        out->v[out->n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        class_ids_finish(out);
        return tb_error_set(err, TB_ERR_DB, "reading STRING_IDS: %s", sqlite3_errmsg(db));
    }
    if (out->n > 1) {
        qsort(out->v, out->n, sizeof *out->v, cmp_i64);
        size_t k = 1;
        for (size_t i = 1; i < out->n; i++)
            if (out->v[i] != out->v[k - 1])
                out->v[k++] = out->v[i];
        out->n = k;
    }
    return TB_OK;
}

int class_ids_has(const class_ids *s, int64_t id)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->v[lo] == id;
}

void class_ids_finish(class_ids *s)
{
    if (!s)
        return;
    free(s->v);
    s->v = NULL;
    s->n = 0;
}
