/* SPDX-License-Identifier: MIT */
/*
 * summary_db.h - what `export summary` says of an msprof DB's tables that
 * no file of msprof's layout is written from, and whether a rank's step
 * trace came from an analysis.db (private to engine/export/; summary_db.c,
 * called by summary.c).
 */
#ifndef TB_EXPORT_SUMMARY_DB_H
#define TB_EXPORT_SUMMARY_DB_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

/* Appends to not_written (a JSON array of strings, borrowed) one line per
 * table of rank's data that holds rows but gives no file of the msprof
 * layout ("nic_*.csv: ..."), and one per NPU_OP_MEM row type the DB does
 * not name, each with the reason. A table missing from db (an older DB
 * written by tracebook) is passed over. */
void summary_db_not_written(sqlite3 *db, int64_t rank, json_t *not_written);

/* The README's note on a file of msprof's layout written from an msprof
 * DB ("nic_20240101.csv"), NULL when it has none: the files whose times
 * are the DB's host-clock times where msprof's own CSV has the device
 * clock's. Returns a static string. */
const char *summary_db_file_note(const char *name);

/* 1 when rank's step trace (TB_STEP_TRACE_TIME) holds rows and the rank was
 * loaded from an analysis.db: its step_trace_time.csv is written from those
 * rows (built-in step_trace_time_as_loaded), not computed from its tasks. */
int summary_db_analysis_steps(sqlite3 *db, int64_t rank);

#endif
