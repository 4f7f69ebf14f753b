/* SPDX-License-Identifier: MIT */
/*
 * builtin_list.c - what `tracebook reports` lists (tb_builtins_write) and
 * the check of a `builtin:NAME` (tb_builtin_report_check): every built-in
 * file of builtins.c loaded as a spec, and its reports described.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "tracebook/spec.h"
#include "util/vec.h"

/* Every built-in file parsed (specs[i] is file i), and their report ids in file order (borrowed from specs). */
typedef struct builtin_ids {
    tb_spec **specs;
    size_t n_specs;
    const char **ids;
    size_t n;
} builtin_ids;

static void ids_free(builtin_ids *x)
{
    for (size_t i = 0; x->specs && i < x->n_specs; i++)
        tb_spec_free(x->specs[i]);
    free(x->specs);
    free(x->ids);
    memset(x, 0, sizeof *x);
}

static tb_status ids_load(builtin_ids *x, tb_error *err)
{
    memset(x, 0, sizeof *x);
    size_t n_table = 0;
    const tb_builtin *table = tb_builtins(&n_table);
    size_t cap = 0;
    if (!(x->specs = calloc(n_table ? n_table : 1, sizeof *x->specs)))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n_table; i++) {
        char name[128];
        snprintf(name, sizeof name, "builtin:%s.yaml", table[i].name);
        const char *text = table[i].text;
        if (tb_spec_load_mem(name, text, strlen(text), &x->specs[i], NULL, NULL, err) != TB_OK) {
            ids_free(x);
            return TB_ERR_INTERNAL; /* a built-in that does not load is a bug: err names it */
        }
        x->n_specs = i + 1;
        for (size_t k = 0; k < tb_spec_n_reports(x->specs[i]); k++)
            if (VEC_PUSH(x->ids, x->n, cap, tb_report_id(tb_spec_report_at(x->specs[i], k)))) {
                ids_free(x);
                return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            }
    }
    return TB_OK;
}

tb_status tb_builtin_report_check(const char *id, tb_error *err)
{
    builtin_ids x;
    tb_status st = ids_load(&x, err);
    if (st)
        return st;
    int found = 0;
    for (size_t i = 0; i < x.n && !found; i++)
        found = !strcmp(x.ids[i], id);
    const char *near = found ? NULL : tb_suggest(id, x.ids, x.n);
    if (near)
        st = tb_error_set(err, TB_ERR_USAGE, "no built-in report '%s' (did you mean '%s'?); tracebook reports "
                          "lists them", id, near);
    else if (!found)
        st = tb_error_set(err, TB_ERR_USAGE, "no built-in report '%s' (tracebook reports lists them)", id);
    ids_free(&x);
    return st;
}

static void param_write(FILE *f, const tb_param *p)
{
    fprintf(f, "    %s (%s", p->name, p->type == TB_PARAM_INT ? "int" : p->type == TB_PARAM_REAL ? "real"
                                       : p->type == TB_PARAM_BOOL ? "bool" : "text");
    if (p->has_value) {
        if (p->type == TB_PARAM_INT)
            fprintf(f, ", default %lld", (long long)p->i);
        else if (p->type == TB_PARAM_BOOL)
            fprintf(f, ", default %s", p->i ? "true" : "false");
        else if (p->type == TB_PARAM_REAL)
            fprintf(f, ", default %g", p->d);
        else
            fprintf(f, ", default '%s'", p->s ? p->s : "");
    }
    fprintf(f, ")%s%s\n", p->help ? ": " : "", p->help ? p->help : "");
}

/* One built-in report in full: what it is, where, its scope, needs and params. */
static void report_write(FILE *f, const tb_spec_report *rep, const char *file)
{
    fprintf(f, "%s: %s\n", tb_report_id(rep), tb_report_title(rep));
    if (tb_report_description(rep))
        fprintf(f, "\n  %s\n", tb_report_description(rep));
    fprintf(f, "\n  spec file: reports/%s.yaml\n", file);
    fprintf(f, "  scope: %s\n", tb_report_scope(rep) == TB_SCOPE_RANK      ? "rank (each rank alone)"
                                : tb_report_scope(rep) == TB_SCOPE_CLUSTER ? "cluster (the cluster tables, made "
                                                                             "from per-rank rows)"
                                                                           : "all (every rank at once)");
    if (tb_report_n_requires(rep)) {
        fprintf(f, "  requires:");
        for (size_t q = 0; q < tb_report_n_requires(rep); q++)
            fprintf(f, " %s", tb_report_require(rep, q));
        fprintf(f, "\n");
    }
    if (tb_report_n_params(rep)) {
        fprintf(f, "  params:\n");
        for (size_t q = 0; q < tb_report_n_params(rep); q++)
            param_write(f, tb_report_param(rep, q));
    }
    const tb_spec_advice *adv = rep->advice;
    if (adv) {
        fprintf(f, "  advisor rule (docs/advisor.md): severity %s; its threshold is the param threshold\n",
                tb_severity_name(adv->severity));
        fprintf(f, "  reason: %s\n  suggestion: %s\n", adv->reason, adv->suggestion);
        if (adv->source)
            fprintf(f, "  source: %s\n", adv->source);
    }
    fprintf(f, "\n  run it: tracebook report -dir PATH --spec builtin:%s\n", tb_report_id(rep));
    if (adv)
        fprintf(f, "  every rule: tracebook report -dir PATH --spec builtin:%s\n", file);
}

tb_status tb_builtins_write(FILE *f, const char *id, tb_error *err)
{
    size_t n_table = 0;
    const tb_builtin *table = tb_builtins(&n_table);
    builtin_ids x;
    tb_status st = ids_load(&x, err);
    if (st)
        return st;
    int found = 0;
    for (size_t i = 0; i < x.n_specs; i++)
        for (size_t k = 0; k < tb_spec_n_reports(x.specs[i]); k++) {
            const tb_spec_report *rep = tb_spec_report_at(x.specs[i], k);
            if (id && strcmp(id, tb_report_id(rep)))
                continue;
            found = 1;
            if (id)
                report_write(f, rep, table[i].name);
            else
                fprintf(f, "%-26s %s\n", tb_report_id(rep), tb_report_title(rep));
        }
    ids_free(&x);
    return id && !found ? tb_builtin_report_check(id, err) : TB_OK;
}
