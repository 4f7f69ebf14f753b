/* SPDX-License-Identifier: MIT */
/*
 * help.c - what the command says: help from the command table, usage
 * errors and engine errors.
 *
 * Help (`tracebook help CMD`, CMD --help) is printed from the command table
 * (commands.c), so it lists exactly the options the parser takes. A usage
 * error is one line and `try 'tracebook help CMD'`; an engine error becomes
 * `tracebook: error: FILE:LINE:COL: message` with as much of the place as
 * the error record holds. `help CMD` itself, and picking the command a
 * command line names (with the nearest name when none matches), are here
 * too.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Help lines: the left column (options, command names) is this wide. */
#define HELP_COL 26

/* Writes text, each of its lines ('\n'-separated) prefixed by indent, the
 * first one after whatever is already on the line. */
static void put_lines(FILE *f, const char *text, int indent)
{
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        fprintf(f, "%.*s\n", (int)n, p);
        p += n;
        if (*p == '\n' && *++p)
            fprintf(f, "%*s", indent, "");
    }
}

/* The left column of an option: "-o, --output FILE". */
static void option_label(const cli_option *o, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s--%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name, o->arg ? " " : "",
             o->arg ? o->arg : "");
}

void cli_help(const cli_command *cmd, FILE *f)
{
    if (!cmd) {
        fprintf(f, "usage: tracebook <command> [options]\n\n%s\n\ncommands:\n", cli_about);
        for (size_t i = 0; i < cli_n_commands; i++) {
            const cli_command *c = &cli_commands[i];
            fprintf(f, "  %-15s ", c->label ? c->label : c->name);
            put_lines(f, c->summary, 18);
        }
        fprintf(f, "\noptions:\n"
                   "  -h, --help      show this help\n"
                   "  -V, --version   show the version\n"
                   "\nexit codes:\n");
        for (size_t i = 0; i < cli_n_exits; i++)
            fprintf(f, "  %d  %s\n", cli_exits[i].code, cli_exits[i].meaning);
        return;
    }
    fprintf(f, "usage: tracebook %s %s\n\n", cmd->name, cmd->synopsis);
    put_lines(f, cmd->text, 0);
    fprintf(f, "\noptions:\n");
    for (size_t i = 0; i < cmd->n_options; i++) {
        char label[96];
        option_label(&cmd->options[i], label, sizeof label);
        if (strlen(label) + 2 > HELP_COL)
            fprintf(f, "  %s\n%*s", label, HELP_COL + 2, "");
        else
            fprintf(f, "  %-*s", HELP_COL, label);
        put_lines(f, cmd->options[i].help, HELP_COL + 2);
    }
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("tracebook: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    /* the help topic of "export db" is "export" */
    const char *name = cmd ? cmd->name : NULL;
    size_t n = name ? strcspn(name, " ") : 0;
    if (name)
        fprintf(stderr, "\ntry 'tracebook help %.*s'\n", (int)n, name);
    else
        fprintf(stderr, "\ntry 'tracebook help'\n");
    return TB_EXIT_USAGE;
}

void cli_print_error(const tb_error *e)
{
    if (e->file[0] && e->line > 0 && e->column > 0)
        fprintf(stderr, "tracebook: error: %s:%ld:%ld: %s\n", e->file, e->line, e->column, e->message);
    else if (e->file[0] && e->line > 0)
        fprintf(stderr, "tracebook: error: %s:%ld: %s\n", e->file, e->line, e->message);
    else if (e->file[0] && e->offset >= 0)
        fprintf(stderr, "tracebook: error: %s: byte %lld: %s\n", e->file, (long long)e->offset, e->message);
    else if (e->file[0])
        fprintf(stderr, "tracebook: error: %s: %s\n", e->file, e->message);
    else
        fprintf(stderr, "tracebook: error: %s\n", e->message);
}

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

const cli_command *cli_select(int argc, char **argv, int for_help, int *used, int *rc)
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
    const cli_command *c = cli_select((int)a->n_pos, words, 1, &used, &rc);
    if (!c)
        return rc;
    if ((size_t)used < a->n_pos)
        return cli_usage_error(a->cmd, "unexpected argument '%s'", a->pos[used]);
    cli_help(c, stdout);
    return TB_EXIT_OK;
}
