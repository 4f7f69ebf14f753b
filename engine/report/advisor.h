/* SPDX-License-Identifier: MIT */
/*
 * advisor.h - the findings of a run's advisor rules (private to report/).
 *
 * A report with `advice:` (spec/spec_advice.c) is an advisor rule: the job
 * wraps the first sink it opens for it (advisor_wrap) so that the rows that
 * go to its files also reach the advisor, which keeps the columns, the row
 * count and the first rows. After the run, advisor_write() writes the
 * findings, one per rule that returned rows, as advisor.csv and
 * advisor.json, and advisor_manifest() says what tracebook_run.json records.
 */
#ifndef TB_REPORT_ADVISOR_H
#define TB_REPORT_ADVISOR_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "query/file_ids.h"
#include "spec/spec.h"
#include "tracebook/error.h"
#include "tracebook/output.h"
#include "tracebook/query.h"

/* Evidence rows kept per finding for advisor.json (the rule's own files hold all). */
#define ADVISOR_KEEP_ROWS 100

typedef struct advisor advisor;

/* A new advisor (free with advisor_free), or NULL when out of memory. */
advisor *advisor_new(void);
void advisor_free(advisor *a);

/*
 * Wraps inner, the first sink of rule rep (rep->advice set), so that its
 * rows are the evidence of rep's finding. Takes ownership of inner; returns
 * new in *out (destroying it destroys inner). At begin, a message naming a
 * column the rule's SQL does not give is an error at the message's place.
 */
tb_status advisor_wrap(advisor *a, const tb_spec_report *rep, tb_sink *inner, tb_sink **out, tb_error *err);

/* The sink advisor_wrap wrapped when s is such a wrapper, else s (borrowed). */
tb_sink *advisor_inner(tb_sink *s);

/* Records that rule rep ran (rows: how many) or was skipped (why). */
void advisor_ran(advisor *a, const tb_spec_report *rep, const char *skipped, uint64_t rows);

/* The number of rules that ran or were skipped so far. */
size_t advisor_n_rules(const advisor *a);

/* 1 when advisor_write wrote the files. */
int advisor_wrote(const advisor *a);

/*
 * Writes <dir>/advisor[_<label>].csv and .json: the findings, by severity
 * (critical first) then in run order. reports is the metadata's "reports"
 * array (the evidence files are taken from it); params the run's --param
 * values (the thresholds written are the ones the rules ran with). Each
 * path is checked against ids first. written (may be NULL) gets each file.
 * counts[severity] gets the number of findings of each severity. files 0
 * (a run that writes to the console only) writes nothing and counts only.
 */
tb_status advisor_write(advisor *a, int files, const char *dir, const char *label, json_t *reports,
                        const tb_run_options *o, const file_ids *ids, uint64_t counts[TB_N_SEVERITIES],
                        void (*written)(void *ctx, const char *path), void *ctx, tb_error *err);

/* The sheet name and the reservation key (no report id has a space) of the
 * workbook's findings sheet. */
#define ADVISOR_SHEET "Advisor"
#define ADVISOR_SHEET_KEY "advisor findings"

/* Writes the findings (after advisor_write counted them) as the rows of
 * sheet, a workbook's sheet sink (begun, fed and finished; not destroyed). */
tb_status advisor_write_sheet(advisor *a, tb_sink *sheet, json_t *reports, const tb_run_options *o, tb_error *err);

/* What tracebook_run.json records of the advisor (new): its files, the counts by severity, each rule. */
json_t *advisor_manifest(const advisor *a);

#endif
