/* SPDX-License-Identifier: MIT */
/*
 * parse.c - the one option parser of every `tracebook` command.
 *
 * A command's options come from its row of the command table. Every option
 * is accepted as `--name VALUE`, `--name=VALUE`, `-name VALUE` and
 * `-name=VALUE` (msprof's tools spell their options with one dash), and by
 * its short alias when it has one (`-o FILE`). An option given twice keeps
 * both values only when it is a repeatable one (-dir, --spec, --param,
 * --report); any other given twice is an error, never "the last one wins".
 * An unknown option or command gets the nearest known spelling ("did you
 * mean"), measured by edit distance.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The option of cmd that arg (without any "=VALUE") names, or NULL. */
static const cli_option *find_option(const cli_command *cmd, const char *arg, size_t len)
{
    for (size_t i = 0; i < cmd->n_options; i++) {
        const cli_option *o = &cmd->options[i];
        if (o->alias && strlen(o->alias) == len && !strncmp(arg, o->alias, len))
            return o;
        const char *name = arg + (arg[1] == '-' ? 2 : 1);
        size_t nlen = len - (size_t)(name - arg);
        /* "-o" and "-q" are aliases only: "--o" is no spelling of them */
        if (strlen(o->name) == nlen && !strncmp(name, o->name, nlen) && nlen > 1)
            return o;
    }
    return NULL;
}

/* "did you mean" for an unknown option: the option of cmd whose name is
 * nearest to arg's, dashes aside ("-strct" and "--stirct" both find
 * "strict"), or NULL. */
static const cli_option *near_option(const cli_command *cmd, const char *arg, size_t len)
{
    while (len && *arg == '-') {
        arg++;
        len--;
    }
    char word[64];
    snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word - 1 ? len : sizeof word - 1), arg);
    const char *names[OPT_COUNT];
    size_t n = 0;
    for (size_t i = 0; i < cmd->n_options && n < OPT_COUNT; i++)
        names[n++] = cmd->options[i].name;
    const char *near = tb_suggest(word, names, n);
    for (size_t i = 0; near && i < cmd->n_options; i++)
        if (cmd->options[i].name == near)
            return &cmd->options[i];
    return NULL;
}

/* The noun of a missing value in the message: paths for paths. */
static const char *value_noun(const cli_option *o)
{
    return o->complete == COMPLETE_FILE || o->complete == COMPLETE_DIR || o->complete == COMPLETE_SPEC ? "a path"
                                                                                                       : "a value";
}

int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    size_t cap = (size_t)argc + 1;
    a->store = calloc(cap * (OPT_COUNT + 1), sizeof *a->store);
    if (!a->store) {
        fprintf(stderr, "tracebook: error: out of memory\n");
        return TB_EXIT_FAILURE;
    }
    for (size_t i = 0; i < OPT_COUNT; i++)
        a->v[i] = a->store + i * cap;
    a->pos = a->store + OPT_COUNT * cap;
    int options_done = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (options_done || arg[0] != '-' || arg[1] == 0) {
            if ((int)a->n_pos >= cmd->max_pos) {
                if (cmd->max_pos == 0)
                    return cli_usage_error(cmd, "unexpected argument '%s'", arg);
                return cli_usage_error(cmd, "unexpected argument '%s' (%s takes one %s)", arg, cmd->name,
                                       cmd->pos_name);
            }
            a->pos[a->n_pos++] = arg;
            continue;
        }
        if (!strcmp(arg, "--")) {
            options_done = 1;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const cli_option *o = find_option(cmd, arg, len);
        if (!o) {
            const cli_option *near = near_option(cmd, arg, len);
            if (near)
                return cli_usage_error(cmd, "unknown option '%.*s' (did you mean '--%s'?)", (int)len, arg,
                                       near->name);
            return cli_usage_error(cmd, "unknown option '%.*s'", (int)len, arg);
        }
        if (o->id == OPT_HELP) {
            cli_help(cmd, stdout);
            return TB_EXIT_OK;
        }
        const char *value = NULL;
        if (o->arg) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return cli_usage_error(cmd, "option '%s' needs %s", arg, value_noun(o));
        } else if (eq) {
            return cli_usage_error(cmd, "option '%.*s' takes no value", (int)len, arg);
        }
        if (o->arg && !o->repeat && a->n[o->id])
            return cli_usage_error(cmd, "option '%.*s' given twice ('%s', then '%s'): it takes one value", (int)len,
                                   arg, a->v[o->id][0], value);
        a->v[o->id][a->n[o->id]++] = value;
        a->as_written[o->id] = arg;
    }
    if ((int)a->n_pos < cmd->min_pos)
        return cli_usage_error(cmd, "no %s given", cmd->pos_name);
    return -1;
}

void cli_args_free(cli_args *a)
{
    free(a->store);
    a->store = NULL;
}

int cli_out_dir(const cli_args *a, const char **dir)
{
    const char *v = cli_value(a, OPT_OUTPUT);
    *dir = v ? v : ".";
    if (v && !strcmp(v, "-"))
        return cli_usage_error(a->cmd, "-o -: %s writes a directory of files; give a directory", a->cmd->name);
    return -1;
}

const char *cli_value(const cli_args *a, cli_opt_id id)
{
    return a->n[id] ? a->v[id][0] : NULL;
}

int cli_count(const cli_args *a, cli_opt_id id, int64_t *out)
{
    const char *s = cli_value(a, id);
    if (!s)
        return -1;
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x < 0) {
        const char *w = a->as_written[id];
        size_t n = strcspn(w, "=");
        return cli_usage_error(a->cmd, "%.*s '%s': expected a non-negative integer", (int)n, w, s);
    }
    *out = x;
    return -1;
}

int cli_parse_window_opts(const cli_args *a, cli_run_opts *r)
{
    memset(r, 0, sizeof *r);
    r->unit = TB_UNIT_US;
    int rc;
    if (a->n[OPT_MAX_STEPS] && (rc = cli_count(a, OPT_MAX_STEPS, &r->max_steps)) >= 0)
        return rc;
    const char *u = cli_value(a, OPT_TIMEUNIT);
    if (u && tb_unit_parse(u, &r->unit))
        return cli_usage_error(a->cmd, "--timeunit '%s': expected ns, us, ms or s", u);
    tb_error err;
    tb_error_clear(&err);
    if (tb_window_parse(cli_value(a, OPT_MODEL_ID), cli_value(a, OPT_ITERATION_ID), cli_value(a, OPT_ITERATION_COUNT),
                        &r->window, &err))
        return cli_usage_error(a->cmd, "%s", err.message);
    return -1;
}

int cli_parse_shard(const cli_args *a, unsigned *index, unsigned *count)
{
    const char *s = cli_value(a, OPT_SHARD);
    tb_error err;
    tb_error_clear(&err);
    *index = *count = 0;
    if (s && tb_shard_parse(s, index, count, &err))
        return cli_usage_error(a->cmd, "--shard %s", err.message);
    return -1;
}

int cli_parse_formats(const cli_args *a, unsigned allowed, unsigned *out)
{
    const char *list = cli_value(a, OPT_FORMAT);
    *out = list ? tb_out_formats(list) : 0;
    if (list && (!*out || (*out & ~allowed))) {
        char names[128] = "";
        for (unsigned f = 1; tb_out_format_name(f); f <<= 1)
            if (allowed & f)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? ", " : "",
                         tb_out_format_name(f));
        return cli_usage_error(a->cmd, "--format '%s': expected a comma-separated list of %s", list, names);
    }
    if (a->n[OPT_CSV_SAFE] && *out && !(*out & TB_OUT_CSV))
        return cli_usage_error(a->cmd, "--csv-safe: --format '%s' writes no CSV", list);
    return -1;
}

int cli_parse_format(const cli_args *a, unsigned allowed, unsigned *out)
{
    int rc = a->n[OPT_CSV_SAFE] && !a->n[OPT_FORMAT]
                 ? cli_usage_error(a->cmd, "--csv-safe: only CSV output has cells to guard (give --format csv)")
                 : cli_parse_formats(a, allowed, out);
    if (rc < 0 && (*out & (*out - 1)))
        return cli_usage_error(a->cmd, "--format '%s': give one format", cli_value(a, OPT_FORMAT));
    if (rc < 0 && !*out)
        *out = TB_OUT_CONSOLE;
    return rc;
}
