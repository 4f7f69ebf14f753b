/* SPDX-License-Identifier: MIT */
/*
 * main.c - the `tracebook` command: dispatch.
 *
 * Every real step is a call into the engine (tracebook.h). This file picks
 * the command from the command table (commands.c, cli_select in help.c),
 * has its options parsed (parse.c) and runs its handler (load.c, report.c),
 * which returns the named exit codes that --help lists; help and messages
 * are written by help.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Removes temporary outputs, then dies of the same signal. */
static void on_signal(int sig)
{
    /* errno belongs to the code the signal interrupted (it dies here anyway,
     * but a sanitizer rightly flags a handler that changes it) */
    int saved = errno;
    tb_temp_cleanup();
    errno = saved;
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    if (argc < 2) {
        cli_help(NULL, stderr);
        return TB_EXIT_USAGE;
    }
    const char *first = argv[1];
    if (!strcmp(first, "-h") || !strcmp(first, "--help")) {
        cli_help(NULL, stdout);
        return TB_EXIT_OK;
    }
    if (!strcmp(first, "-V") || !strcmp(first, "--version")) {
        printf("tracebook %s\n", tb_version());
        return TB_EXIT_OK;
    }
    if (first[0] == '-') {
        static const char *const globals[] = {"--help", "--version"};
        const char *near = tb_suggest(first, globals, 2);
        if (near)
            return cli_usage_error(NULL, "unknown option '%s' (did you mean '%s'?)", first, near);
        return cli_usage_error(NULL, "unknown option '%s': a command comes first", first);
    }
    int used = 0, rc = TB_EXIT_USAGE;
    const cli_command *cmd = cli_select(argc - 1, argv + 1, 0, &used, &rc);
    if (!cmd)
        return rc;
    cli_args a;
    rc = cli_parse(cmd, argc - 1 - used, argv + 1 + used, &a);
    if (rc < 0)
        rc = cli_apply_limits(&a);
    if (rc < 0) {
        /* under mpirun, every process runs this; the loads are spread (mpi.c) */
        cli_mpi_start(cmd);
        rc = cmd->run(&a);
        rc = cli_mpi_finish(rc);
    }
    cli_args_free(&a);
    return rc;
}
