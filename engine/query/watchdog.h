/* SPDX-License-Identifier: MIT */
/*
 * watchdog.h - the CPU time limit of a report (private to the engine).
 *
 * A timer on the process's CPU clock: when it expires the report's
 * connection is interrupted and the progress handler stops whatever still
 * runs on it (report SQL, a computed table's builder, a `requires:` check,
 * a sort), so even one long SQL function call ends the report.
 */
#ifndef TB_QUERY_WATCHDOG_H
#define TB_QUERY_WATCHDOG_H

#include <sqlite3.h>

#include "tracebook/error.h"

/* Starts (again) db's CPU limit: seconds of CPU time from now. One
 * connection at a time is watched; this replaces what was. */
tb_status watchdog_arm(sqlite3 *db, double seconds, tb_error *err);
/* Stops watching db (nothing when another connection is watched). */
void watchdog_disarm(sqlite3 *db);
/* 1 when db's limit expired since it was armed. */
int watchdog_fired(sqlite3 *db);
/* The limit last armed, in seconds. */
double watchdog_seconds(void);

#endif
