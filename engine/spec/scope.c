/* SPDX-License-Identifier: MIT */
/*
 * scope.c - what the scopes of a run's reports allow (tracebook/spec.h): a
 * run whose every report is rank- or cluster-scope needs no DB of every
 * rank, so a session over shards or processes runs them where the ranks
 * are (docs/scale-out.md#report-scopes).
 */
#include <string.h>

#include "spec/spec.h"

int tb_specs_scoped(const tb_spec *const *specs, size_t n, const char *const *only, size_t n_only)
{
    size_t wanted = 0;
    for (size_t s = 0; s < n; s++)
        for (size_t k = 0; k < specs[s]->n_reports; k++) {
            const tb_spec_report *r = &specs[s]->reports[k];
            int want = !only;
            for (size_t i = 0; only && i < n_only && !want; i++)
                want = !strcmp(only[i], r->id);
            if (!want)
                continue;
            if (r->scope != TB_SCOPE_RANK && r->scope != TB_SCOPE_CLUSTER)
                return 0;
            wanted++;
        }
    return wanted > 0;
}
