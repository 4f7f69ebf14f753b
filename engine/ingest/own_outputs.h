/* SPDX-License-Identifier: MIT */
/*
 * own_outputs.h - telling tracebook's own outputs from inputs (own_outputs.c).
 */
#ifndef TB_INGEST_OWN_OUTPUTS_H
#define TB_INGEST_OWN_OUTPUTS_H

#include <stddef.h>

#include "ingest/input_set.h"
#include "tracebook/error.h"

/* Why a file was passed over (the TB_SOURCE note of a skipped file). */
#define OWN_NOTE_RUN_FILE "an output of tracebook, listed in tracebook_run.json beside it"
#define OWN_NOTE_RUN_META "tracebook's run metadata (tracebook_run.json)"
#define OWN_NOTE_DERIVED "a tracebook DB loaded from inputs of this same run"
#define OWN_NOTE_TIMELINE "a timeline tracebook exported from inputs of this same run"
#define OWN_NOTE_HISTORY "a history of nights that tracebook keeps (history add), not profile data"

/* The files a tracebook_run.json lists as outputs of its run: base names in its folder. */
typedef struct own_list {
    char **names;   /* sorted, new strings */
    size_t n;
} own_list;

/*
 * Reads DIR/tracebook_run.json when there is one and fills out with every
 * file name it lists under a "files" key (at any depth, so later output
 * kinds are covered too). A missing or unreadable file gives an empty list:
 * the folder then holds no outputs of tracebook that it knows of. Returns 0,
 * or -1 when out of memory.
 */
int own_list_load(const char *dir, own_list *out);

/* 1 when name is in the list. */
int own_list_has(const own_list *l, const char *name);

void own_list_free(own_list *l);

/*
 * Passes over the tracebook DBs and exported timelines that scanning found
 * (not the ones named as a -dir of their own) when one of the files they
 * were made from is an input of this same run: they would count every
 * event twice. A folder of tracebook DBs alone (shards, merged nights)
 * keeps them. A history DB (`history add`) is never profile data, found or
 * named. Marks each such file with its reason (input_file.note:
 * OWN_NOTE_DERIVED, OWN_NOTE_TIMELINE or OWN_NOTE_HISTORY); the caller
 * moves the marked files to the files not read.
 */
tb_status own_mark_derived(input_set *set, tb_error *err);

#endif
