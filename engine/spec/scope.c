/* SPDX-License-Identifier: MIT */
/*
 * scope.c - which reports of a run's specs run (all, or the ids of
 * --report), whether the ids name reports at all, and what the scopes of
 * those reports allow (tracebook/spec.h): a run whose every report is
 * rank- or cluster-scope needs no DB of every rank, so a session over
 * shards or processes runs them where the ranks are
 * (docs/scale-out.md#report-scopes). And the names of the time units a
 * run's typed columns are given in (tb_unit_name, tb_unit_parse).
 */
#include <string.h>

#include "spec/spec.h"

/* 1 when the report with this id runs: only is NULL, or names it. */
static int runs(const char *id, const char *const *only, size_t n_only)
{
    int want = !only;
    for (size_t i = 0; only && i < n_only && !want; i++)
        want = !strcmp(only[i], id);
    return want;
}

int tb_specs_scoped(const tb_spec *const *specs, size_t n, const char *const *only, size_t n_only)
{
    size_t wanted = 0;
    for (size_t s = 0; s < n; s++)
        for (size_t k = 0; k < specs[s]->n_reports; k++) {
            const tb_spec_report *r = &specs[s]->reports[k];
            if (!runs(r->id, only, n_only))
                continue;
            if (r->scope != TB_SCOPE_RANK && r->scope != TB_SCOPE_CLUSTER)
                return 0;
            wanted++;
        }
    return wanted > 0;
}

tb_status tb_specs_check_only(const tb_spec *const *specs, size_t n, const char *const *only, size_t n_only,
                              tb_error *err)
{
    for (size_t s = 0; s < n; s++)
        if (specs[s]->msprof_reports)
            return TB_OK;
    for (size_t i = 0; i < n_only; i++) {
        const char *cands[256];
        size_t n_cands = 0;
        int found = 0;
        for (size_t s = 0; s < n; s++)
            for (size_t k = 0; k < specs[s]->n_reports; k++) {
                found |= !strcmp(specs[s]->reports[k].id, only[i]);
                if (n_cands < 256)
                    cands[n_cands++] = specs[s]->reports[k].id;
            }
        if (found)
            continue;
        const char *near = tb_suggest(only[i], cands, n_cands);
        if (near)
            return tb_error_set(err, TB_ERR_USAGE, "--report '%s': no spec has a report with this id (did you mean "
                                "'%s'?)", only[i], near);
        return tb_error_set(err, TB_ERR_USAGE, "--report '%s': no spec has a report with this id", only[i]);
    }
    return TB_OK;
}

size_t tb_specs_count(const tb_spec *const *specs, size_t n, const char *const *only, size_t n_only)
{
    size_t count = 0;
    for (size_t s = 0; s < n; s++)
        for (size_t k = 0; k < specs[s]->n_reports; k++)
            count += (size_t)runs(specs[s]->reports[k].id, only, n_only);
    return count;
}

size_t tb_specs_rules(const tb_spec *const *specs, size_t n, const char *const *only, size_t n_only)
{
    size_t count = 0;
    for (size_t s = 0; s < n; s++)
        for (size_t k = 0; k < specs[s]->n_reports; k++)
            count += (size_t)(runs(specs[s]->reports[k].id, only, n_only) &&
                              tb_report_advice(&specs[s]->reports[k], NULL));
    return count;
}

unsigned tb_specs_outputs(const tb_spec *const *specs, size_t n)
{
    unsigned out = 0;
    for (size_t s = 0; s < n; s++) {
        out |= specs[s]->outputs;
        for (size_t k = 0; k < specs[s]->n_reports; k++)
            out |= specs[s]->reports[k].outputs;
    }
    return out;
}

const char *tb_unit_name(tb_time_unit u)
{
    switch (u) {
    case TB_UNIT_NS: return "ns";
    case TB_UNIT_US: return "us";
    case TB_UNIT_MS: return "ms";
    default: return "s";
    }
}

int tb_unit_parse(const char *name, tb_time_unit *out)
{
    static const tb_time_unit units[] = {TB_UNIT_NS, TB_UNIT_US, TB_UNIT_MS, TB_UNIT_S};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(name, tb_unit_name(units[i]))) {
            *out = units[i];
            return 0;
        }
    return -1;
}
