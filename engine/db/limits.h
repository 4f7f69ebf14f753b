/* SPDX-License-Identifier: MIT */
/*
 * limits.h - the limits of a run as the engine's stages read them (private
 * to the engine; the public side is tb_limits in tracebook/db.h): whether
 * SQLite's temporary files or heap reached their limit, and the message
 * that names the limit.
 */
#ifndef TB_DB_LIMITS_H
#define TB_DB_LIMITS_H

#include <stddef.h>
#include <stdint.h>

/* Sets the default limits unless tb_limits_set ran (db_open calls it). */
void limits_ensure(void);

/* The CPU time of one report over a DB of db_bytes bytes, in seconds. */
double limits_cpu_seconds(int64_t db_bytes);

/* Forgets that a limit was reached (at the start of a report). */
void limits_clear_hits(void);

/*
 * When SQLite's failure with code rc (its primary code: SQLITE_FULL,
 * SQLITE_NOMEM) came from a limit the user set (--max-temp) or the heap
 * limit, writes the message naming it into buf and returns LIMIT_HIT; when
 * it came from the temporary folder's room (the default limit, half its
 * free space, or the disk refusing a write), the message names the folder
 * and it returns LIMIT_DISK_FULL; else 0.
 */
enum { LIMIT_HIT = 1, LIMIT_DISK_FULL = 2 };
int limits_explain(int rc, char *buf, size_t n);

#endif
