/* SPDX-License-Identifier: MIT */
/*
 * printf_guard.h - printf() and format() of report SQL within the limit of
 * a value (private to the engine; printf_guard.c says why).
 */
#ifndef TB_QUERY_PRINTF_GUARD_H
#define TB_QUERY_PRINTF_GUARD_H

#include <sqlite3.h>

/* Puts the guarded printf and format on db in place of SQLite's. Returns SQLITE_OK or SQLite's code. */
int printf_guard_register(sqlite3 *db);

#endif
