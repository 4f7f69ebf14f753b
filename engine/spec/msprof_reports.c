/* SPDX-License-Identifier: MIT */
/*
 * msprof_reports.c - msprof's rule for what a reports file runs.
 *
 * An msprof reports_sample_config.json only selects timeline layers
 * (json_process, read by the spec loader with msprof's fallback rules);
 * msprof's `export summary` writes its summaries whatever the file says. So
 * a run given such a file runs those summaries as one more spec, the
 * built-in reports op_statistic, api_statistic and communication_statistic,
 * and says so.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "spec/msprof_reports.h"
#include "spec/spec.h"

static const char summaries_yaml[] =
    "tracebook: 1\n"
    "reports:\n"
    "  - use: op_statistic\n"
    "  - use: api_statistic\n"
    "  - use: communication_statistic\n";

tb_status msprof_reports_expand(const tb_spec *const *specs, size_t n, const tb_spec ***out, tb_spec **summaries,
                                void (*note)(void *ctx, const char *msg), void *ctx, tb_error *err)
{
    *out = NULL;
    *summaries = NULL;
    for (size_t i = 0; i < n; i++) {
        const tb_spec *sp = specs[i];
        if (!sp->msprof_reports || sp->n_reports)
            continue;
        tb_spec *sum = NULL;
        tb_status rc = tb_spec_load_mem("builtin:msprof-summaries", summaries_yaml, sizeof summaries_yaml - 1, &sum,
                                        NULL, NULL, err);
        if (rc)
            return rc;
        const tb_spec **v = calloc(n + 1, sizeof *v);
        if (!v) {
            tb_spec_free(sum);
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
        for (size_t k = 0; k < n; k++)
            v[k] = specs[k];
        v[n] = sum;
        if (note) {
            char msg[1200];
            snprintf(msg, sizeof msg,
                     "%s: an msprof reports file selects timeline layers only; "
                     "running msprof's summaries: op_statistic, api_statistic, communication_statistic",
                     sp->path);
            note(ctx, msg);
        }
        *out = v;
        *summaries = sum;
        return TB_OK;
    }
    return TB_OK;
}
