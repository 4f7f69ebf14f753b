/* SPDX-License-Identifier: MIT */
/*
 * print.c - `tracebook print summary` and `print trace`.
 *
 * Both load the inputs' cached DB as report and query do (cli_obtain_db),
 * then hand it to the engine's listing (tb_print_summary, tb_print_trace),
 * which writes to stdout or, with --log-file, to the file under a temporary
 * name. Only the option checks live here.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"

static int print_cmd(cli_args *a, int trace)
{
    cli_run_opts ro;
    int rc = cli_parse_run_opts(a, &ro);
    if (rc >= 0)
        return rc;
    int64_t width = 0;
    if (a->n[OPT_WIDTH] && (rc = cli_count(a, OPT_WIDTH, &width)) >= 0)
        return rc;
    if (width > 100000)
        return cli_usage_error(a->cmd, "%s %" PRId64 ": at most 100000", a->as_written[OPT_WIDTH], width);
    const char *log = cli_value(a, OPT_LOG_FILE);
    if (log && !strcmp(log, "-"))
        log = NULL;
    cli_run run = cli_run_for(a);
    tb_error err;
    tb_error_clear(&err);
    char db[PATH_MAX];
    int reused = 0;
    tb_status st = cli_obtain_db(a, &run, db, sizeof db, &reused, &err);
    if (st == TB_OK) {
        tb_print_options po = {
            .db_path = db,
            .window = ro.window,
            .per_device = a->n[OPT_PER_DEVICE] > 0,
            .width = (int)width,
            .fixed_unit = a->n[OPT_TIMEUNIT] > 0,
            .unit = ro.unit,
            .out = stdout,
            .out_path = log,
        };
        if (log)
            cli_make_parents(log);
        cli_progress_stop(run.progress);
        st = trace ? tb_print_trace(&po, &err) : tb_print_summary(&po, &err);
    }
    if (st != TB_OK)
        cli_print_error(&err);
    cli_progress_destroy(run.progress);
    return tb_exit_code(st);
}

int cli_cmd_print_summary(cli_args *a)
{
    return print_cmd(a, 0);
}

int cli_cmd_print_trace(cli_args *a)
{
    return print_cmd(a, 1);
}
