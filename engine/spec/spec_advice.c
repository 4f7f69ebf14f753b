/* SPDX-License-Identifier: MIT */
/*
 * spec_advice.c - the `advice:` key of a report: the report is an advisor
 * rule (docs/advisor.md).
 *
 * A rule is a report like any other (SQL, params, requires, scope, outputs)
 * whose rows are the evidence of one finding: when its SQL returns rows, the
 * report job (report/advisor.c) records a finding with the rule's severity,
 * its message filled from the evidence, the reason and the suggestion. The
 * threshold the SQL compares against is declared here and becomes the
 * report's param `threshold`, so `--param RULE.threshold=V` and a `use:`
 * entry's `params:` change it as they change any param. A `use:` entry may
 * give `advice:` too: the keys it names replace the built-in rule's.
 *
 * Checked here, at load: every key, the severity's name, the threshold's
 * type, that the SQL reads :threshold, and that the message's placeholders
 * are well formed; which columns they name is known when the rule runs.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "spec/spec_int.h"
#include "spec/specnode.h"
#include "tracebook/spec.h"

static const char *const advice_keys[] = {"severity", "threshold", "reason", "message", "suggestion", "source", NULL};
static const char *const severity_names[] = {"info", "warning", "critical", NULL}; /* tb_severity order */

const char *tb_severity_name(tb_severity s)
{
    return (unsigned)s < TB_N_SEVERITIES ? severity_names[s] : "?";
}

int tb_severity_parse(const char *text)
{
    for (int i = 0; severity_names[i]; i++)
        if (!strcmp(text, severity_names[i]))
            return i;
    return -1;
}

int tb_report_advice(const tb_spec_report *rep, tb_severity *sev)
{
    if (rep->advice && sev)
        *sev = rep->advice->severity;
    return rep->advice != NULL;
}

int spec_advice_copy(tb_spec_report *dst, const tb_spec_report *src)
{
    if (!src->advice)
        return 0;
    const tb_spec_advice *s = src->advice;
    tb_spec_advice *d = calloc(1, sizeof *d);
    if (!d)
        return -1;
    dst->advice = d;
    d->severity = s->severity;
    d->pos = (tb_spec_pos){.file = dst->origin, .line = s->pos.line, .column = s->pos.column};
    d->message_pos = (tb_spec_pos){.file = dst->origin, .line = s->message_pos.line, .column = s->message_pos.column};
#define DUP(f) (s->f && !(d->f = strdup(s->f)))
    if (DUP(reason) || DUP(message) || DUP(suggestion) || DUP(source))
        return -1;
#undef DUP
    return 0;
}

/* 1 when sql names the parameter :threshold (or @threshold, $threshold) outside quotes and comments. */
static int reads_threshold(const char *sql)
{
    static const char name[] = "threshold";
    const size_t n = sizeof name - 1;
    for (const char *p = sql; *p; p++) {
        if (*p == '\'' || *p == '"' || *p == '`') {
            char q = *p;
            while (p[1] && p[1] != q)
                p++;
            if (!p[1])
                return 0;
            p++;
        } else if (p[0] == '-' && p[1] == '-') {
            while (p[1] && p[1] != '\n')
                p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            if (!e)
                return 0;
            p = e + 1;
        } else if ((*p == ':' || *p == '@' || *p == '$') && !strncmp(p + 1, name, n)) {
            char c = p[1 + n];
            if (!(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
                return 1;
        }
    }
    return 0;
}

/* Checks the message's placeholders: `{name}` closed, not empty, no '{' inside; `{{` and `}}` are braces. */
static tb_status check_message(loader *L, const specnode *v)
{
    const char *s = v->text;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '{' && s[i + 1] == '{') {
            i++;
            continue;
        }
        if (s[i] == '}') {
            if (s[i + 1] == '}') {
                i++;
                continue;
            }
            return fail_node(L, v, "'message': a '}' without its '{' at character %zu (write '}}' for a brace)", i + 1);
        }
        if (s[i] != '{')
            continue;
        size_t k = i + 1;
        while (s[k] && s[k] != '}' && s[k] != '{')
            k++;
        if (s[k] != '}')
            return fail_node(L, v, "'message': the '{' at character %zu is not closed by '}' (write '{{' for a brace)",
                             i + 1);
        if (k == i + 1)
            return fail_node(L, v, "'message': an empty '{}' at character %zu; name a column, or {#} for the row count",
                             i + 1);
        i = k;
    }
    return TB_OK;
}

/* The report's `threshold` param, made (plain report) or found (use). */
static tb_status threshold_param(loader *L, const specnode_pair *key, tb_spec_report *r, int made_here,
                                 tb_param **out)
{
    *out = NULL;
    for (size_t i = 0; i < r->n_params; i++)
        if (!strcmp(r->params[i].name, "threshold")) {
            if (made_here)
                return fail_key(L, key, "report '%s': the param 'threshold' is declared by 'advice.threshold'; "
                                "remove it from 'params'", r->id ? r->id : "?");
            *out = &r->params[i];
            return TB_OK;
        }
    tb_param *np = realloc(r->params, (r->n_params + 1) * sizeof *np);
    if (!np)
        return spec_nomem(L);
    r->params = np;
    tb_param *p = &r->params[r->n_params++];
    memset(p, 0, sizeof *p);
    if (!(p->name = strdup("threshold")) || !(p->help = strdup("the advisor rule's threshold")))
        return spec_nomem(L);
    *out = p;
    return TB_OK;
}

/* `threshold:` v into the report's param: a number; a plain report's type is the number's. */
static tb_status set_threshold(loader *L, const specnode_pair *pair, tb_spec_report *r, int plain)
{
    char d[64];
    const specnode *v = pair->value;
    if (v->kind != SPECNODE_SCALAR || (v->type != SPECNODE_INT && v->type != SPECNODE_REAL))
        return fail_node(L, v, "'threshold' must be a number, got %s", spec_describe(v, d, sizeof d));
    tb_param *p;
    tb_status st = threshold_param(L, pair, r, plain, &p);
    if (st)
        return st;
    if (plain)
        p->type = v->type == SPECNODE_INT ? TB_PARAM_INT : TB_PARAM_REAL;
    p->pos = (tb_spec_pos){.file = L->file, .line = v->line, .column = v->column};
    return spec_set_value(L, p, v, " (the rule's threshold)");
}

/* One text key of advice into *dst (replacing it). */
static tb_status text_key(loader *L, const specnode *m, const char *key, char **dst)
{
    const specnode_pair *p = specnode_get(m, key);
    return p ? spec_get_nonempty(L, p->value, key, dst) : TB_OK;
}

tb_status spec_parse_advice(loader *L, const specnode_pair *pair, tb_spec_report *r)
{
    const specnode *m = pair->value;
    char d[64];
    tb_status st;
    if ((st = spec_need_map(L, m, "advice")) || (st = spec_check_keys(L, m, "advice", advice_keys)))
        return st;
    int plain = r->advice == NULL;
    if (plain && !(r->advice = calloc(1, sizeof *r->advice)))
        return spec_nomem(L);
    tb_spec_advice *a = r->advice;
    a->pos = (tb_spec_pos){.file = L->file, .line = pair->line, .column = pair->column};
    if (plain)
        for (size_t i = 0; advice_keys[i]; i++)
            if (strcmp(advice_keys[i], "source") && !specnode_get(m, advice_keys[i]))
                return fail_node(L, m, "report '%s': 'advice' has no '%s'; an advisor rule needs severity, threshold, "
                                 "reason, message and suggestion", r->id ? r->id : "?", advice_keys[i]);
    const specnode_pair *p;
    if ((p = specnode_get(m, "severity"))) {
        int s = spec_is_text(p->value) ? tb_severity_parse(p->value->text) : -1;
        if (s < 0)
            return fail_node(L, p->value, "'severity' must be info, warning or critical, got %s",
                             spec_describe(p->value, d, sizeof d));
        a->severity = (tb_severity)s;
    }
    if ((p = specnode_get(m, "threshold")) && (st = set_threshold(L, p, r, plain)))
        return st;
    if ((p = specnode_get(m, "message"))) {
        if ((st = spec_get_nonempty(L, p->value, "message", &a->message)) || (st = check_message(L, p->value)))
            return st;
        a->message_pos = (tb_spec_pos){.file = L->file, .line = p->value->line, .column = p->value->column};
    }
    if ((st = text_key(L, m, "reason", &a->reason)) || (st = text_key(L, m, "suggestion", &a->suggestion)) ||
        (st = text_key(L, m, "source", &a->source)))
        return st;
    if (plain && r->sql && !reads_threshold(r->sql))
        return fail_key(L, pair, "report '%s': its SQL never reads :threshold, the rule's threshold; compare "
                        "against it", r->id ? r->id : "?");
    return TB_OK;
}
