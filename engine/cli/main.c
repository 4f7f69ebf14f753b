/* SPDX-License-Identifier: MIT */
/*
 * main.c - the `tracebook` command: dispatch.
 *
 * Every real step is a call into the engine (tracebook.h). This file picks
 * the command from the command table (commands.c), has its options parsed
 * (parse.c) and runs its handler (load.c, report.c), which returns the named
 * exit codes that --help lists; help and messages are written by help.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int unknown_command(const char *word)
{
    /* the words a command line starts with: "export", "report", ... */
    char first[16][32];
    const char *cands[16];
    size_t n = 0;
    for (size_t i = 0; i < cli_n_commands && n < 16; i++) {
        snprintf(first[n], sizeof first[n], "%.*s", (int)strcspn(cli_commands[i].name, " "), cli_commands[i].name);
        cands[n] = first[n];
        n++;
    }
    const char *near = tb_suggest(word, cands, n);
    if (near)
        return cli_usage_error(NULL, "unknown command '%s' (did you mean '%s'?)", word, near);
    return cli_usage_error(NULL, "unknown command '%s'", word);
}

/*
 * Finds the command that argv starts with. *used gets the number of words
 * its name took. Returns NULL when there is none, having reported why
 * (*rc gets the exit code). for_help: `help export` names export db (the
 * first command of that family).
 */
static const cli_command *select_command(int argc, char **argv, int for_help, int *used, int *rc)
{
    const cli_command *family = NULL;   /* the first command named "WORD something" */
    char types[200] = "";                /* the second words of that family: "db" */
    const char *cands[16];
    size_t n_types = 0;
    for (size_t i = 0; i < cli_n_commands; i++) {
        const char *name = cli_commands[i].name;
        size_t k = strcspn(name, " ");
        if (strlen(argv[0]) != k || strncmp(argv[0], name, k))
            continue;
        if (!name[k]) {
            *used = 1;
            return &cli_commands[i];
        }
        /* a two-word command: "export db" */
        if (argc > 1 && !strcmp(argv[1], name + k + 1)) {
            *used = 2;
            return &cli_commands[i];
        }
        if (!family)
            family = &cli_commands[i];
        size_t at = strlen(types);
        snprintf(types + at, sizeof types - at, "%s%s", at ? ", " : "", name + k + 1);
        if (n_types < 16)
            cands[n_types++] = name + k + 1;
    }
    if (!family) {
        *rc = unknown_command(argv[0]);
        return NULL;
    }
    if (for_help && argc < 2) {
        *used = 1;
        return family;
    }
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        cli_help(family, stdout);
        *rc = TB_EXIT_OK;
    } else if (argc < 2) {
        *rc = cli_usage_error(family, "%s needs a type: %s", argv[0], types);
    } else if (argv[1][0] == '-') {
        *rc = cli_usage_error(family, "%s needs a type first: %s", argv[0], types);
    } else {
        const char *near = tb_suggest(argv[1], cands, n_types);
        if (near)
            *rc = cli_usage_error(family, "unknown %s type '%s' (did you mean '%s'?)", argv[0], argv[1], near);
        else
            *rc = cli_usage_error(family, "unknown %s type '%s' (this version %ss: %s)", argv[0], argv[1], argv[0],
                                  types);
    }
    return NULL;
}

int cli_cmd_help(cli_args *a)
{
    if (a->n_pos == 0) {
        cli_help(NULL, stdout);
        return TB_EXIT_OK;
    }
    int used = 0, rc = TB_EXIT_USAGE;
    char *words[2] = {(char *)a->pos[0], a->n_pos > 1 ? (char *)a->pos[1] : NULL};
    const cli_command *c = select_command((int)a->n_pos, words, 1, &used, &rc);
    if (!c)
        return rc;
    if ((size_t)used < a->n_pos)
        return cli_usage_error(a->cmd, "unexpected argument '%s'", a->pos[used]);
    cli_help(c, stdout);
    return TB_EXIT_OK;
}

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
    /* hidden: the generated man page and completion (docs/man/, completion/) */
    if (!strcmp(first, "--help-man")) {
        cli_write_man(stdout);
        return TB_EXIT_OK;
    }
    if (!strcmp(first, "--help-completion")) {
        cli_write_completion(stdout);
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
    const cli_command *cmd = select_command(argc - 1, argv + 1, 0, &used, &rc);
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
