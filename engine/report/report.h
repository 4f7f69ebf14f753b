/* SPDX-License-Identifier: MIT */
/*
 * report.h - the report job inside the engine (private): the exports run it
 * over a window of their own (export summary: one rank at a time).
 */
#ifndef TB_REPORT_REPORT_H
#define TB_REPORT_REPORT_H

#include "tracebook/report.h"
#include "tracebook/session.h"

/* tb_report_write over the window w instead of the session's. */
tb_status report_job_write(tb_session *s, tb_report_job *job, const tb_window *w, tb_run_result *res, tb_error *err);

#endif
