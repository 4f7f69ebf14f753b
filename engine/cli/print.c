/* SPDX-License-Identifier: MIT */
/*
 * print.c - `tracebook print summary` and `print trace`.
 *
 * Both hand the session's DB to the engine's listing (tb_print_summary,
 * tb_print_trace), which writes to stdout or, with --log-file, to the file
 * under a temporary name. Only the option checks live here.
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"

static int print_cmd(cli_args *a, int trace)
{
    int64_t width = 0;
    int rc;
    if (a->n[OPT_DIR] == 0)
        return cli_usage_error(a->cmd, "no input: give -dir PATH");
    if (a->n[OPT_WIDTH] && (rc = cli_count(a, OPT_WIDTH, &width)) >= 0)
        return rc;
    if (width > 100000)
        return cli_usage_error(a->cmd, "%s %" PRId64 ": at most 100000", a->as_written[OPT_WIDTH], width);
    const char *log = cli_value(a, OPT_LOG_FILE);
    if (log && !strcmp(log, "-"))
        log = NULL;
    cli_run run;
    if ((rc = cli_run_start(&run, a, RUN_SESSION)) >= 0)
        return rc;
    tb_print_options po = {
        .per_device = a->n[OPT_PER_DEVICE] > 0,
        .width = (int)width,
        .fixed_unit = a->n[OPT_TIMEUNIT] > 0,
        .unit = run.ro.unit,
        .out = stdout,
        .out_path = log,
    };
    cli_progress_stop(run.progress);
    tb_status st = trace ? tb_print_trace(run.s, &po, &run.err) : tb_print_summary(run.s, &po, &run.err);
    return cli_run_end(&run, st, TB_EXIT_OK);
}

int cli_cmd_print_summary(cli_args *a)
{
    return print_cmd(a, 0);
}

int cli_cmd_print_trace(cli_args *a)
{
    return print_cmd(a, 1);
}
