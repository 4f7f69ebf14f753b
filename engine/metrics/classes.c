/* SPDX-License-Identifier: MIT */
/*
 * classes.c - name rules for the classes of device work: globs and POSIX
 * regular expressions from a spec option (see classes.h for the
 * pattern syntax), matched against names or, once, against every string of
 * a DB's STRING_IDS.
 */
#include <fnmatch.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/classes.h"
#include "util/sort.h"
#include "util/str.h"
#include "util/vec.h"

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

/* Compiles text without its prefix into re. 0, or the regcomp error with its reason in why. */
static int compile(regex_t *re, const char *text, char *why, size_t cap)
{
    int rc = regcomp(re, text, REG_EXTENDED | REG_NOSUB);
    if (rc != 0)
        regerror(rc, re, why, cap);
    return rc;
}

int class_pattern_check(const char *text, char *why, size_t cap)
{
    if (!str_starts(text, RE_PREFIX))
        return 0;
    regex_t re;
    if (compile(&re, text + strlen(RE_PREFIX), why, cap) != 0)
        return -1;
    regfree(&re);
    return 0;
}

/* Appends one pattern; the option path names it in errors. */
static tb_status add(class_rule *r, const char *path, const char *text, tb_error *err)
{
    pattern *p = &r->v[r->n];
    memset(p, 0, sizeof *p);
    p->is_re = str_starts(text, RE_PREFIX);
    p->text = strdup(p->is_re ? text + strlen(RE_PREFIX) : text);
    if (!p->text)
        return tb_error_set(err, TB_ERR_NOMEM, "metrics.%s: out of memory", path);
    char why[128];
    if (p->is_re && compile(&p->re, p->text, why, sizeof why) != 0) {
        free(p->text);
        return tb_error_set(err, TB_ERR_USAGE, "metrics.%s: bad regular expression '%s': %s", path, text, why);
    }
    r->n++;
    return TB_OK;
}

tb_status class_rule_create(const metrics_patterns *p, const char *path, const char *const *defaults,
                            class_rule **out, tb_error *err)
{
    *out = NULL;
    tb_status rc = TB_OK;
    class_rule *r = calloc(1, sizeof *r);
    if (!r)
        return tb_error_set(err, TB_ERR_NOMEM, "metrics.%s: out of memory", path);
    const char *const *list = p && p->set ? (const char *const *)p->v : defaults;
    size_t n = 0;
    if (p && p->set)
        n = p->n;
    else
        while (defaults && defaults[n])
            n++;
    if (n && !(r->v = calloc(n, sizeof *r->v))) {
        class_rule_destroy(r);
        return tb_error_set(err, TB_ERR_NOMEM, "metrics.%s: out of memory", path);
    }
    for (size_t i = 0; i < n && !rc; i++)
        rc = add(r, path, list[i], err);
    if (rc) {
        class_rule_destroy(r);
        return rc;
    }
    *out = r;
    return TB_OK;
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
        if (VEC_PUSH(out->v, out->n, cap, sqlite3_column_int64(st, 0))) {
            sqlite3_finalize(st);
            class_ids_finish(out);
            return tb_error_set(err, TB_ERR_NOMEM, "matching names: out of memory");
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        class_ids_finish(out);
        return tb_error_set(err, TB_ERR_DB, "reading STRING_IDS: %s", sqlite3_errmsg(db));
    }
    out->n = sort_unique_i64(out->v, out->n);
    return TB_OK;
}

int class_ids_has(const class_ids *s, int64_t id)
{
    size_t i = sort_bound_i64(s->v, s->n, sizeof *s->v, 0, id, 0);
    return i < s->n && s->v[i] == id;
}

void class_ids_finish(class_ids *s)
{
    if (!s)
        return;
    free(s->v);
    s->v = NULL;
    s->n = 0;
}
