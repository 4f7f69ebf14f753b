/* SPDX-License-Identifier: MIT */
/*
 * cligen.c - tracebook-cligen: tracebook(1) and the bash completion,
 * written from the command table (engine/cli/commands.c).
 *
 * `tracebook-cligen man` prints the man page in roff and `tracebook-cligen
 * completion` the bash completion script; the checked-in copies
 * (docs/man/tracebook.1, completion/tracebook.bash) are its output, and
 * tests/cli/table_test.py fails when they differ (`ninja -C build cli-docs`
 * rewrites both). It links the command's own table, so the pages say what
 * the command parses; it is a build tool and is not installed.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Writes text as roff: '\n' becomes a space, '-' and '\' are escaped, and a
 * line may not start with a control character ('.' or '\''). */
static void roff(FILE *f, const char *text)
{
    int bol = 1;
    for (const char *p = text; *p; p++) {
        if (bol && (*p == '.' || *p == '\''))
            fputs("\\&", f);
        bol = 0;
        if (*p == '-')
            fputs("\\-", f);
        else if (*p == '\\')
            fputs("\\e", f);
        else if (*p == '\n')
            fputc(' ', f);
        else
            fputc(*p, f);
    }
}

static void man_option(FILE *f, const cli_option *o)
{
    fputs(".TP\n", f);
    if (o->alias) {
        fputs("\\fB", f);
        roff(f, o->alias);
        fputs("\\fR, ", f);
    }
    fputs("\\fB\\-\\-", f);
    roff(f, o->name);
    fputs("\\fR", f);
    if (o->arg) {
        fputs(" \\fI", f);
        roff(f, o->arg);
        fputs("\\fR", f);
    }
    fputs("\n", f);
    roff(f, o->help);
    fputs("\n", f);
}

static void write_man(FILE *f)
{
    fprintf(f, ".\\\" SPDX-License-Identifier: MIT\n"
               ".\\\" Written by tools/cligen (`ninja -C build cli-docs`) from engine/cli/commands.c: edit that, not this.\n"
               ".TH TRACEBOOK 1 \"\" \"tracebook %s\" \"User Commands\"\n"
               ".SH NAME\n"
               "tracebook \\- load accelerator profile data into one SQLite DB and run reports over it\n"
               ".SH SYNOPSIS\n"
               ".nf\n",
            tb_version());
    for (size_t i = 0; i < cli_n_commands; i++) {
        const cli_command *c = &cli_commands[i];
        fputs("\\fBtracebook ", f);
        roff(f, c->name);
        fputs("\\fR ", f);
        roff(f, c->synopsis);
        fputs("\n", f);
    }
    fputs("\\fBtracebook \\-\\-help\\fR | \\fB\\-\\-version\\fR\n.fi\n.SH DESCRIPTION\n", f);
    roff(f, cli_about);
    fputs("\n.PP\n", f);
    roff(f, "Every option may be written --name VALUE, --name=VALUE, -name VALUE or -name=VALUE, and by its short "
            "alias where it has one (-o FILE). Options marked as repeatable (-dir, --spec, --param, --report) "
            "keep every value; any other option given twice is an error, and so is an option the chosen mode "
            "would not use (query -o FILE with console output). A usage error prints one line and the help "
            "command to try. Where one file is written, -o - means standard output.");
    fputs("\n.SH COMMANDS\n", f);
    for (size_t i = 0; i < cli_n_commands; i++) {
        const cli_command *c = &cli_commands[i];
        fputs(".SS \"", f);
        roff(f, c->name);
        fputs("\"\n\\fBtracebook ", f);
        roff(f, c->name);
        fputs("\\fR ", f);
        roff(f, c->synopsis);
        fputs("\n.PP\n", f);
        roff(f, c->text);
        fputs("\n", f);
        for (size_t k = 0; k < c->n_options; k++)
            man_option(f, &c->options[k]);
    }
    fputs(".SH EXIT STATUS\n", f);
    for (size_t i = 0; i < cli_n_exits; i++) {
        fprintf(f, ".TP\n.B %d\n", cli_exits[i].code);
        roff(f, cli_exits[i].meaning);
        fputs("\n", f);
    }
    fputs(".SH ENVIRONMENT\n", f);
    for (size_t i = 0; i < cli_n_envs; i++) {
        fputs(".TP\n.B ", f);
        roff(f, cli_envs[i].name);
        fputs("\n", f);
        roff(f, cli_envs[i].meaning);
        fputs("\n", f);
    }
    fputs(".SH SEE ALSO\n.BR tracebook\\-spec (5),\n.BR sqlite3 (1)\n", f);
}

/* The first words of the commands ("export", "report", ...), space-separated. */
static void command_words(FILE *f)
{
    for (size_t i = 0; i < cli_n_commands; i++) {
        const char *name = cli_commands[i].name;
        size_t k = strcspn(name, " ");
        int dup = 0;
        for (size_t j = 0; j < i; j++)
            dup |= strncmp(cli_commands[j].name, name, k) == 0 && strcspn(cli_commands[j].name, " ") == k;
        if (!dup)
            fprintf(f, "%s%.*s", i ? " " : "", (int)k, name);
    }
}

/* Writes the lines that complete a value of the kind how (nothing for COMPLETE_NONE). */
static void complete_value(FILE *f, cli_complete how, const char *values, const char *indent)
{
    switch (how) {
    case COMPLETE_FILE:
        fprintf(f, "%scompopt -o filenames 2>/dev/null\n%sCOMPREPLY=($(compgen -f -- \"$cur\"))\n", indent, indent);
        break;
    case COMPLETE_DIR:
        fprintf(f, "%scompopt -o filenames 2>/dev/null\n%sCOMPREPLY=($(compgen -d -- \"$cur\"))\n", indent, indent);
        break;
    case COMPLETE_WORDS:
        fprintf(f, "%sCOMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))\n", indent, values);
        break;
    case COMPLETE_SPEC:
        fprintf(f, "%scompopt -o filenames 2>/dev/null\n"
                   "%sCOMPREPLY=($(compgen -f -- \"$cur\") $(compgen -W \"$(_tracebook_builtins \"$tb\" builtin:)\" "
                   "-- \"$cur\"))\n", indent, indent);
        break;
    case COMPLETE_REPORT:
        fprintf(f, "%sCOMPREPLY=($(compgen -W \"$(_tracebook_builtins \"$tb\")\" -- \"$cur\"))\n", indent);
        break;
    default:
        break;
    }
}

/* The script's start: the builtins helper, the words bash splits, the
 * first word (the commands). */
static void completion_head(FILE *f)
{
    fputs("# bash completion for tracebook                                -*- shell-script -*-\n"
          "# SPDX-License-Identifier: MIT\n"
          "# Written by tools/cligen (`ninja -C build cli-docs`) from engine/cli/commands.c: edit that, not this.\n"
          "# Install as $(pkg-config --variable=completionsdir bash-completion)/tracebook,\n"
          "# or source it from ~/.bashrc.\n"
          "\n"
          "# The built-in report names (from `tracebook reports`), each prefixed by $2.\n"
          "_tracebook_builtins()\n"
          "{\n"
          "    local id rest\n"
          "    \"$1\" reports 2>/dev/null | while read -r id rest; do printf '%s%s\\n' \"$2\" \"$id\"; done\n"
          "}\n"
          "\n"
          "_tracebook()\n"
          "{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} tb=${COMP_WORDS[0]}\n"
          "    local cmd opts\n"
          "    COMPREPLY=()\n"
          "    # \"--name=VALUE\": bash splits the word at '='\n"
          "    if [[ $cur == = ]]; then\n"
          "        cur=\n"
          "    elif [[ $prev == = ]]; then\n"
          "        prev=${COMP_WORDS[COMP_CWORD-2]}\n"
          "    fi\n"
          "    # \"builtin:NAME\": bash splits the word at ':'\n"
          "    if [[ $cur == : && $prev == builtin ]]; then\n"
          "        COMPREPLY=($(_tracebook_builtins \"$tb\"))\n"
          "        return\n"
          "    fi\n"
          "    if [[ $prev == : && ${COMP_WORDS[COMP_CWORD-2]} == builtin ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$(_tracebook_builtins \"$tb\")\" -- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    if ((COMP_CWORD == 1)); then\n"
          "        COMPREPLY=($(compgen -W \"",
          f);
    command_words(f);
    fputs(" -h --help -V --version\" -- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    cmd=${COMP_WORDS[1]}\n",
          f);
}

/* Two-word commands: the second word first, one block per first word
 * listing every second word of that family ("export": db timeline). */
static void completion_families(FILE *f)
{
    for (size_t i = 0; i < cli_n_commands; i++) {
        const char *name = cli_commands[i].name;
        size_t k = strcspn(name, " ");
        if (!name[k])
            continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strncmp(cli_commands[j].name, name, k + 1);
        if (seen)
            continue;
        fprintf(f, "    if [[ $cmd == %.*s ]]; then\n"
                   "        if ((COMP_CWORD == 2)); then\n"
                   "            COMPREPLY=($(compgen -W \"",
                (int)k, name);
        for (size_t j = i, first = 1; j < cli_n_commands; j++) {
            if (strncmp(cli_commands[j].name, name, k + 1))
                continue;
            fprintf(f, "%s%s", first ? "" : " ", cli_commands[j].name + k + 1);
            first = 0;
        }
        fputs("\" -- \"$cur\"))\n"
              "            return\n"
              "        fi\n"
              "        cmd=\"$cmd ${COMP_WORDS[2]}\"\n"
              "    fi\n",
              f);
    }
}

/* The case arm of command c: the values of its options, its options, its operands. */
static void completion_command(FILE *f, const cli_command *c)
{
    fprintf(f, "    \"%s\")\n", c->name);
    int any_value = 0;
    for (size_t k = 0; k < c->n_options; k++)
        any_value |= c->options[k].arg && c->options[k].complete != COMPLETE_NONE;
    if (any_value) {
        fputs("        case $prev in\n", f);
        for (size_t k = 0; k < c->n_options; k++) {
            const cli_option *o = &c->options[k];
            if (!o->arg)
                continue;
            fprintf(f, "        --%s|-%s", o->name, o->name);
            if (o->alias && strcmp(o->alias + 1, o->name))
                fprintf(f, "|%s", o->alias);
            fputs(")\n", f);
            complete_value(f, o->complete, o->values, "            ");
            fputs("            return\n            ;;\n", f);
        }
        fputs("        esac\n", f);
    }
    fputs("        opts=\"", f);
    for (size_t k = 0; k < c->n_options; k++) {
        const cli_option *o = &c->options[k];
        if (o->alias)
            fprintf(f, "%s ", o->alias);
        fprintf(f, "--%s%s", o->name, k + 1 < c->n_options ? " " : "");
    }
    fputs("\"\n", f);
    if (!strcmp(c->name, "help")) {
        fputs("        if ((COMP_CWORD == 2)) && [[ $cur != -* ]]; then\n"
              "            COMPREPLY=($(compgen -W \"",
              f);
        command_words(f);
        fputs("\" -- \"$cur\"))\n"
              "            return\n"
              "        fi\n",
              f);
    } else if (c->pos_complete != COMPLETE_NONE) {
        fputs("        if [[ $cur != -* ]]; then\n", f);
        complete_value(f, c->pos_complete, NULL, "            ");
        fputs("            return\n        fi\n", f);
    }
    fputs("        ;;\n", f);
}

static void write_completion(FILE *f)
{
    completion_head(f);
    completion_families(f);
    fputs("    case $cmd in\n", f);
    for (size_t i = 0; i < cli_n_commands; i++)
        completion_command(f, &cli_commands[i]);
    fputs("    *)\n"
          "        return\n"
          "        ;;\n"
          "    esac\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    fi\n"
          "}\n"
          "complete -F _tracebook tracebook\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "man"))
        write_man(stdout);
    else if (argc == 2 && !strcmp(argv[1], "completion"))
        write_completion(stdout);
    else {
        fputs("usage: tracebook-cligen man|completion\n", stderr);
        return 2;
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
