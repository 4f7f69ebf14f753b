/* SPDX-License-Identifier: MIT */
/*
 * progress.h - the text of a run's progress line, for a program that shows
 * one (the `tracebook` command draws it on a terminal's stderr).
 *
 * A tb_progress follows what the engine's callbacks report: the bytes read
 * of each file a load reads (tb_load_options.progress, summed over the files
 * loaded at once, on however many threads), the phase the load entered after
 * reading (tb_load_options.phase), and the reports of a run as they finish.
 * Each call returns the line to show now; the caller only draws it.
 */
#ifndef TRACEBOOK_PROGRESS_H
#define TRACEBOOK_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

typedef struct tb_progress tb_progress;

/* A new progress (NULL when out of memory); free with tb_progress_free. */
tb_progress *tb_progress_new(void);
void tb_progress_free(tb_progress *p);

/* file has read done of its total bytes (total 0: unknown), bytes of data out
 * of them: "loading FILE: 42% (120 MB read)", or "loading 3 files: ..." once
 * several were reported. The line goes to buf; returns 0, or -1 when there is
 * nothing to show (no file). */
int tb_progress_load(tb_progress *p, const char *file, uint64_t done, uint64_t total, uint64_t bytes, char *buf,
                     size_t n);
/* The load entered a phase after reading ("indexing"): "loading: indexing". */
int tb_progress_phase(tb_progress *p, const char *what, char *buf, size_t n);
/* Reports start; expected of them will run (0: unknown): "running reports: 0/7 done". */
void tb_progress_reports(tb_progress *p, size_t expected, char *buf, size_t n);
/* Report id finished (or was skipped): "running reports: 3/7 done (last: top_kernels)". */
void tb_progress_report_done(tb_progress *p, const char *id, char *buf, size_t n);

#endif
