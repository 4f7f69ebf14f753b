/* SPDX-License-Identifier: MIT */
/*
 * msprof_reports.h - what an msprof reports file runs (msprof_reports.c).
 */
#ifndef TB_REPORT_MSPROF_REPORTS_H
#define TB_REPORT_MSPROF_REPORTS_H

#include <stddef.h>

#include "tracebook/spec.h"

/*
 * When one of specs is an msprof reports file that names no reports, loads
 * msprof's summaries as one more spec: *summaries gets it (new, free with
 * tb_spec_free) and *out a new array of n + 1 borrowed specs, the given ones
 * then the summaries (free with free()). note (may be NULL) is told why.
 * Otherwise both stay NULL.
 */
tb_status msprof_reports_expand(const tb_spec *const *specs, size_t n, const tb_spec ***out, tb_spec **summaries,
                                void (*note)(void *ctx, const char *msg), void *ctx, tb_error *err);

#endif
