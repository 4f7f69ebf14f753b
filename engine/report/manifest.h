/* SPDX-License-Identifier: MIT */
/*
 * manifest.h - tracebook_run.json, the run metadata file beside every run's
 * outputs (docs/cli.md#the-run-metadata-file): its one writer, and the
 * pieces every command puts in it (private to the engine).
 */
#ifndef TB_REPORT_MANIFEST_H
#define TB_REPORT_MANIFEST_H

#include <jansson.h>
#include <stddef.h>

#include "query/file_ids.h"
#include "tracebook/error.h"
#include "tracebook/query.h"

/* A new metadata object with its head: {"tool": "tracebook", "version": ...}. */
json_t *manifest_new(void);

/*
 * Writes m as dir/tracebook_run.json (two-space indent, keys in the order
 * they were set, a final newline), atomically; refused when that path is
 * one of ids (may be NULL). The path written goes to path (may be NULL).
 */
tb_status manifest_write(const char *dir, json_t *m, const file_ids *ids, char *path, size_t n, tb_error *err);

/* The metadata of the run whose outputs are in dir (new), or NULL when it
 * has none or it does not parse (je, may be NULL, says where). */
json_t *manifest_load(const char *dir, json_error_t *je);

/* A window as the metadata names it: {model_id, iteration_id,
 * iteration_count[, label]} (label NULL: none); JSON null without one. */
json_t *manifest_window(const tb_window *w, const char *label);

/* Adds every file a metadata object (or any part of one) lists, at any
 * depth under a "files" key, to set (an object used as a set). */
void manifest_files(json_t *v, json_t *set);

/* The runs of the array runs (borrowed) that list a file not in now: the
 * others were written over whole by this run and protect nothing. New. */
json_t *manifest_still_listed(json_t *runs, json_t *now);

/* m gets "earlier_runs": the runs an existing dir/tracebook_run.json
 * describes (itself and its own earlier runs), less those whose files m's
 * reports wrote all again. A missing or unreadable file keeps nothing. */
void manifest_keep_earlier(json_t *m, const char *dir);

#endif
