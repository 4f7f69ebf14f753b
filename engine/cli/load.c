/* SPDX-License-Identifier: MIT */
/*
 * load.c - `tracebook export db`, `merge` and `info`: the handlers that load
 * the inputs and say what the DB holds.
 *
 * export db writes the unified DB where -o says (a file, a folder that gets
 * the default name, or `-` for stdout) or beside the first input
 * (tb_export_db); merge loads DBs that tracebook wrote into one; info
 * summarises the session's DB (tb_info_write).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_cmd_export_db(cli_args *a)
{
    if (a->n[OPT_DIR] == 0)
        return cli_usage_error(a->cmd, "no input: give -dir PATH");
    const char *output = cli_value(a, OPT_OUTPUT);
    int to_stdout = output && !strcmp(output, "-");
    if (to_stdout && isatty(STDOUT_FILENO))
        return cli_usage_error(a->cmd, "-o -: refusing to write a DB to a terminal; redirect stdout");
    tb_db_export_options o = {.output = to_stdout ? NULL : output, .stream = to_stdout ? stdout : NULL};
    int rc = cli_parse_shard(a, &o.shard_index, &o.shard_count);
    if (rc != -1)
        return rc;
    if (o.shard_count && cli_mpi_dist())
        return cli_usage_error(a->cmd, "--shard under mpirun: the processes are the parts already");
    cli_run run;
    if ((rc = cli_run_start(&run, a, RUN_SESSION | RUN_LAZY)) >= 0)
        return rc;
    char final[8192];
    tb_load_result res;
    tb_status st = tb_export_db(run.s, &o, final, sizeof final, &res, &run.err);
    cli_progress_clear(run.progress);
    if (st == TB_OK && a->n[OPT_TIMING])
        fprintf(stderr, "tracebook: timing: %llu events: read %.3f s, post-process %.3f s, indexes %.3f s\n",
                (unsigned long long)res.events, res.seconds_read, res.seconds_post, res.seconds_index);
    if (st == TB_OK && final[0])
        printf("%s\n", final);
    rc = cli_fail_on_warning(a, run.warnings, "the load", cli_exit_code(st));
    return cli_run_end(&run, st, rc);
}

int cli_cmd_info(cli_args *a)
{
    cli_run run;
    int rc = cli_run_start(&run, a, RUN_SESSION);
    if (rc >= 0)
        return rc;
    return cli_run_end(&run, tb_info_write(run.s, stdout, &run.err), TB_EXIT_OK);
}

int cli_cmd_merge(cli_args *a)
{
    const char *output = cli_value(a, OPT_OUTPUT);
    if (!output)
        return cli_usage_error(a->cmd, "no output: give -o FILE.db");
    for (size_t i = 0; i < a->n_pos; i++)
        if (!tb_db_is_own_file(a->pos[i]))
            return cli_usage_error(a->cmd, "'%s' is not a DB that tracebook wrote (merge reads such DBs; export db "
                                   "reads profile data)", a->pos[i]);
    /* each DB named on its own: loaded whole, with its ranks (derived DBs are
     * passed over only when found by scanning) */
    cli_run run;
    tb_session *s = NULL;
    int rc = cli_run_start(&run, a, 0);
    if (rc >= 0 || (rc = cli_run_session(&run, a->pos, a->n_pos, &run.ro.window, 1, &s)) >= 0)
        return rc;
    tb_status st = tb_session_load_to(s, output, 0, 0, NULL, &run.err);
    if (st == TB_OK)
        printf("%s\n", output);
    return cli_run_end(&run, st, TB_EXIT_OK);
}
