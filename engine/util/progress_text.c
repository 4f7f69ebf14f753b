/* SPDX-License-Identifier: MIT */
/*
 * progress_text.c - the text of a run's progress line (tracebook/progress.h):
 * while inputs load, the bytes read against the size of the files being
 * read, all files together (each file's last report is kept by name; past
 * MAX_FILES the last slot sums the rest), then the phases after reading;
 * while reports run, how many are done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebook/progress.h"

/* Files tracked by name; more than this many at once are summed as one. */
#define MAX_FILES 64

struct tb_progress {
    struct {
        char *name;
        uint64_t done, total, bytes;  /* the file's own bytes read and in all; what they held */
    } files[MAX_FILES];
    size_t n_files;
    size_t expected, reports_done;
};

tb_progress *tb_progress_new(void)
{
    return calloc(1, sizeof(tb_progress));
}

void tb_progress_free(tb_progress *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_files; i++)
        free(p->files[i].name);
    free(p);
}

/* The slot of file (a new one while there is room, else the last), or -1. */
static long slot_of(tb_progress *p, const char *file)
{
    size_t i = 0;
    while (i < p->n_files && strcmp(p->files[i].name, file))
        i++;
    if (i < p->n_files)
        return (long)i;
    if (p->n_files < MAX_FILES && (p->files[i].name = strdup(file)))
        return (long)p->n_files++;
    return p->n_files ? (long)p->n_files - 1 : -1;
}

int tb_progress_load(tb_progress *p, const char *file, uint64_t done, uint64_t total, uint64_t bytes, char *buf,
                     size_t n)
{
    long i = file ? slot_of(p, file) : -1;
    if (i < 0)
        return -1;
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
    if (p->n_files == 1 && sized)
        snprintf(buf, n, "loading %s: %3d%% (%llu MB read)", file, (int)(done * 100 / total),
                 (unsigned long long)(bytes >> 20));
    else if (p->n_files == 1)
        snprintf(buf, n, "loading %s: %llu MB read", file, (unsigned long long)(bytes >> 20));
    else if (sized)
        snprintf(buf, n, "loading %zu files: %3d%% (%llu MB read)", p->n_files, (int)(all_done * 100 / all_total),
                 (unsigned long long)(all_bytes >> 20));
    else
        snprintf(buf, n, "loading %zu files: %llu MB read", p->n_files, (unsigned long long)(all_bytes >> 20));
    return 0;
}

int tb_progress_phase(tb_progress *p, const char *what, char *buf, size_t n)
{
    if (!what)
        return -1;
    if (p->n_files > 1)
        snprintf(buf, n, "loading %zu files: %.200s", p->n_files, what);
    else
        snprintf(buf, n, "loading: %.200s", what);
    return 0;
}

static void reports_line(const tb_progress *p, const char *last, char *buf, size_t n)
{
    const char *open = last ? " (last: " : "", *close = last ? ")" : "";
    if (p->expected && p->reports_done <= p->expected)
        snprintf(buf, n, "running reports: %zu/%zu done%s%.200s%s", p->reports_done, p->expected, open,
                 last ? last : "", close);
    else
        snprintf(buf, n, "running reports: %zu done%s%.200s%s", p->reports_done, open, last ? last : "", close);
}

void tb_progress_reports(tb_progress *p, size_t expected, char *buf, size_t n)
{
    p->expected = expected;
    p->reports_done = 0;
    reports_line(p, NULL, buf, n);
}

void tb_progress_report_done(tb_progress *p, const char *id, char *buf, size_t n)
{
    p->reports_done++;
    reports_line(p, id, buf, n);
}
