/* SPDX-License-Identifier: MIT */
/*
 * progress.c - the one progress line of `tracebook` on a terminal.
 *
 * The line sits on stderr and is redrawn in place (`\r`, erase to the end of
 * the line): while inputs load, the bytes read against the size of the
 * files being read, all ranks together (they load on several threads; the
 * engine never calls two callbacks at a time), then the phases after
 * reading (post-processing, indexing); while reports run, how many
 * are done. Any other message first erases it, and it is erased at the end,
 * so a finished run leaves nothing of it. It is drawn only when stderr is a
 * terminal and --quiet is not given.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Files tracked by name; more than this many at once are summed as one. */
#define MAX_FILES 64

struct cli_progress {
    int on, shown;
    struct {
        char *name;
        uint64_t done, total, bytes;  /* the file's own bytes read and in all; what they held */
    } files[MAX_FILES];
    size_t n_files;
    size_t expected, reports_done;
};

cli_progress *cli_progress_create(int on)
{
    cli_progress *p = calloc(1, sizeof *p);
    if (p)
        p->on = on;
    return p;
}

void cli_progress_destroy(cli_progress *p)
{
    if (!p)
        return;
    cli_progress_clear(p);
    for (size_t i = 0; i < p->n_files; i++)
        free(p->files[i].name);
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
    if (!p || !p->on || !file)
        return;
    size_t i = 0;
    while (i < p->n_files && strcmp(p->files[i].name, file))
        i++;
    if (i == p->n_files) {
        if (p->n_files < MAX_FILES && (p->files[i].name = strdup(file)))
            p->n_files++;
        else if (p->n_files)
            i = p->n_files - 1;   /* the last slot sums the rest */
        else
            return;
    }
    if (i >= MAX_FILES)
        return;
    p->files[i].done = done;
    p->files[i].total = total;
    p->files[i].bytes = bytes;
    /* the share comes from the files' own bytes (compressed for .gz); the
     * megabytes shown are what was read out of them */
    uint64_t all_done = 0, all_total = 0, all_bytes = 0;
    int sized = 1;
    for (size_t k = 0; k < p->n_files; k++) {
        all_done += p->files[k].done;
        all_total += p->files[k].total;
        all_bytes += p->files[k].bytes;
        sized &= p->files[k].total > 0;
    }
    char line[1200];
    if (p->n_files == 1 && sized)
        snprintf(line, sizeof line, "loading %s: %3d%% (%llu MB read)", file, (int)(done * 100 / total),
                 (unsigned long long)(bytes >> 20));
    else if (p->n_files == 1)
        snprintf(line, sizeof line, "loading %s: %llu MB read", file, (unsigned long long)(bytes >> 20));
    else if (sized)
        snprintf(line, sizeof line, "loading %zu files: %3d%% (%llu MB read)", p->n_files,
                 (int)(all_done * 100 / all_total), (unsigned long long)(all_bytes >> 20));
    else
        snprintf(line, sizeof line, "loading %zu files: %llu MB read", p->n_files,
                 (unsigned long long)(all_bytes >> 20));
    draw(p, line);
}

void cli_progress_phase(void *ctx, const char *what)
{
    cli_progress *p = ((cli_run *)ctx)->progress;
    if (!p || !p->on || !what)
        return;
    char line[300];
    if (p->n_files > 1)
        snprintf(line, sizeof line, "loading %zu files: %.200s", p->n_files, what);
    else
        snprintf(line, sizeof line, "loading: %.200s", what);
    draw(p, line);
}

static void draw_reports(cli_progress *p, const char *last)
{
    char line[300];
    if (p->expected && p->reports_done <= p->expected)
        snprintf(line, sizeof line, "running reports: %zu/%zu done%s%.200s%s", p->reports_done, p->expected,
                 last ? " (last: " : "", last ? last : "", last ? ")" : "");
    else
        snprintf(line, sizeof line, "running reports: %zu done%s%.200s%s", p->reports_done, last ? " (last: " : "",
                 last ? last : "", last ? ")" : "");
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
    if (!p || !p->on)
        return;
    p->expected = expected;
    p->reports_done = 0;
    draw_reports(p, NULL);
}

void cli_progress_report_done(cli_progress *p, const char *id)
{
    if (!p || !p->on)
        return;
    p->reports_done++;
    draw_reports(p, id);
}
