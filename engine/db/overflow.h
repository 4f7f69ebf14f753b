/* SPDX-License-Identifier: MIT */
/*
 * overflow.h - what SQLite's "integer overflow" over a trace DB means
 * (overflow.c).
 */
#ifndef TB_DB_OVERFLOW_H
#define TB_DB_OVERFLOW_H

#include <sqlite3.h>

#include "tracebook/error.h"

/*
 * When the last failure on db was SQLite's "integer overflow" and a table
 * of db with startNs and endNs explains it (its durations add up to 2^63
 * ns or more), sets err to "[FILE: ]WHAT: the sum of TABLE COLUMN
 * overflows 64-bit ns (integer overflow): the DB holds out-of-range times
 * (...)" and returns TB_ERR_PARSE; else returns TB_OK and leaves err. Runs
 * its own SELECTs on db: the caller lifts any authorizer and step budget
 * first. file may be NULL.
 */
tb_status db_overflow_explain(sqlite3 *db, const char *file, const char *what, tb_error *err);

#endif
