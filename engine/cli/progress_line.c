/* SPDX-License-Identifier: MIT */
/*
 * progress_line.c - the one progress line of `tracebook` on a terminal.
 *
 * The line sits on stderr and is redrawn in place (`\r`, erase to the end of
 * the line) with the text the engine makes of the run's progress
 * (tracebook/progress.h): while inputs load, the bytes read of all files
 * (they load on several threads; the engine never calls two callbacks at a
 * time), then the phases after reading; while reports run, how many are
 * done. Any other message first erases it, and it is erased at the end, so a
 * finished run leaves nothing of it. It is drawn only when stderr is a
 * terminal and --quiet is not given.
 */
#include <stdlib.h>

#include "cli.h"

struct cli_progress {
    int on, shown;
    tb_progress *text;
};

cli_progress *cli_progress_create(int on)
{
    cli_progress *p = calloc(1, sizeof *p);
    if (p && !(p->text = tb_progress_new())) {
        free(p);
        return NULL;
    }
    if (p)
        p->on = on;
    return p;
}

void cli_progress_destroy(cli_progress *p)
{
    if (!p)
        return;
    cli_progress_clear(p);
    tb_progress_free(p->text);
    free(p);
}

void cli_progress_clear(cli_progress *p)
{
    if (p && p->shown) {
        fputs("\r\033[K", stderr);
        p->shown = 0;
    }
}

static void draw(cli_progress *p, const char *line)
{
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    p->shown = 1;
}

void cli_progress_load(void *ctx, const char *file, uint64_t done, uint64_t total, uint64_t bytes)
{
    cli_progress *p = ((cli_run *)ctx)->progress;
    char line[1200];
    if (p && p->on && !tb_progress_load(p->text, file, done, total, bytes, line, sizeof line))
        draw(p, line);
}

void cli_progress_phase(void *ctx, const char *what)
{
    cli_progress *p = ((cli_run *)ctx)->progress;
    char line[300];
    if (p && p->on && !tb_progress_phase(p->text, what, line, sizeof line))
        draw(p, line);
}

void cli_progress_stop(cli_progress *p)
{
    cli_progress_clear(p);
    if (p)
        p->on = 0;
}

void cli_progress_reports(cli_progress *p, size_t expected)
{
    char line[300];
    if (p && p->on) {
        tb_progress_reports(p->text, expected, line, sizeof line);
        draw(p, line);
    }
}

void cli_progress_report_done(cli_progress *p, const char *id)
{
    char line[300];
    if (p && p->on) {
        tb_progress_report_done(p->text, id, line, sizeof line);
        draw(p, line);
    }
}
