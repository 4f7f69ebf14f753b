/* SPDX-License-Identifier: MIT */
/*
 * export.c - `tracebook export timeline` and `export summary`: msprof's
 * exports of the session's DB (tb_timeline_write, tb_summary_write), with
 * --clear removing the cached DB afterwards.
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"

static void print_written(void *ctx, const char *path)
{
    (void)ctx;
    printf("%s\n", path);
}

/* After an export: a window no rank has is an error, no rank at all a note;
 * --clear removes the cached DB it loaded (a DB given as the input stays). */
static tb_status after_export(cli_run *run, tb_status st, size_t done)
{
    const tb_window *w = &run->ro.window;
    if (st == TB_OK && done == 0 && w->set)
        return tb_error_set(&run->err, TB_ERR_USAGE, "no rank has the window (model %lld, iteration %lld): nothing "
                            "exported", (long long)w->model_id, (long long)w->iteration_id);
    if (st == TB_OK && done == 0)
        cli_on_note(run, "no rank to export");
    int removed = 0;
    if (st == TB_OK && run->a->n[OPT_CLEAR])
        st = tb_session_clear_cache(run->s, &removed, &run->err);
    return st;
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
                             .slice_bytes = slice_bytes, .note = cli_on_note, .ctx = &run, .written = print_written};
    tb_timeline_result res;
    st = tb_timeline_write(run.s, &o, &res, &run.err);
    if (st == TB_OK && res.flows_unpaired) {
        char msg[96];
        snprintf(msg, sizeof msg, "%" PRIu64 " flows have one end only, as in the input: written so",
                 res.flows_unpaired);
        cli_on_note(&run, msg);
    }
    return cli_run_end(&run, after_export(&run, st, res.files), TB_EXIT_OK);
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
                            .no_clobber = a->n[OPT_NO_CLOBBER] > 0, .csv_safe = a->n[OPT_CSV_SAFE] > 0, .merge = a->n[OPT_MERGE] > 0,
                            .written = print_written, .note = cli_on_note, .ctx = &run};
    tb_summary_result res;
    tb_status st = tb_summary_write(run.s, &o, &res, &run.err);
    return cli_run_end(&run, after_export(&run, st, res.ranks), TB_EXIT_OK);
}
