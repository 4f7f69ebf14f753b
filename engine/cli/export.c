/* SPDX-License-Identifier: MIT */
/*
 * export.c - `tracebook export timeline` and `export summary`: msprof's
 * exports of the session's DB (tb_timeline_write, tb_summary_write; with
 * --clear the engine removes the cached DB afterwards).
 */
#include <stdint.h>
#include <string.h>

#include "cli.h"

static void print_written(void *ctx, const char *path)
{
    (void)ctx;
    printf("%s\n", path);
}

int cli_cmd_export_timeline(cli_args *a)
{
    int64_t slice_mb = -1;
    int rc;
    if (a->n[OPT_SLICE_MB] && (rc = cli_count(a, OPT_SLICE_MB, &slice_mb)) >= 0)
        return rc;
    if (a->n[OPT_SLICE_MB] && a->n[OPT_SLICE_CONFIG])
        return cli_usage_error(a->cmd, "--slice-mb and --slice-config: give one of them");
    if (slice_mb > INT64_MAX / (1024 * 1024))
        return cli_usage_error(a->cmd, "--slice-mb %lld: too large", (long long)slice_mb);
    cli_run run;
    if ((rc = cli_run_start(&run, a, RUN_SPECS)) >= 0)
        return rc;
    int64_t slice_bytes = slice_mb > 0 ? slice_mb * 1024 * 1024 : 0;
    const char *slice_config = cli_value(a, OPT_SLICE_CONFIG), *output = cli_value(a, OPT_OUTPUT);
    tb_status st = slice_config ? tb_timeline_slice_config(slice_config, &slice_bytes, &run.err) : TB_OK;
    if (st != TB_OK)
        return cli_run_end(&run, st, 0);
    if ((rc = cli_run_open(&run, RUN_SESSION)) >= 0)
        return rc;
    tb_timeline_options o = {.out_dir = output, .spec = run.n_specs ? run.specs[0] : NULL,
                             .slice_bytes = slice_bytes, .clear_cache = a->n[OPT_CLEAR] > 0, .note = cli_on_note,
                             .ctx = &run, .written = print_written};
    tb_timeline_result res;
    return cli_run_end(&run, tb_timeline_write(run.s, &o, &res, &run.err), TB_EXIT_OK);
}

int cli_cmd_export_summary(cli_args *a)
{
    unsigned formats;
    int rc = cli_parse_formats(a, TB_OUT_CSV | TB_OUT_JSON | TB_OUT_XLSX, &formats);
    if (rc >= 0)
        return rc;
    const char *output = cli_value(a, OPT_OUTPUT);
    if (a->n[OPT_MERGE] && !output)
        return cli_usage_error(a->cmd, "--merge needs -o DIR: the merged files go in one folder of their own");
    cli_run run;
    if ((rc = cli_run_start(&run, a, RUN_SPECS | RUN_SESSION)) >= 0)
        return rc;
    tb_summary_options o = {.out_dir = output, .spec = run.n_specs ? run.specs[0] : NULL, .formats = formats,
                            .no_clobber = a->n[OPT_NO_CLOBBER] > 0, .csv_safe = a->n[OPT_CSV_SAFE] > 0, .merge = a->n[OPT_MERGE] > 0, .clear_cache = a->n[OPT_CLEAR] > 0,
                            .written = print_written, .note = cli_on_note, .ctx = &run};
    tb_summary_result res;
    return cli_run_end(&run, tb_summary_write(run.s, &o, &res, &run.err), TB_EXIT_OK);
}
