/* SPDX-License-Identifier: MIT */
/*
 * db.h - the unified trace DB: its names and its identity.
 *
 * A DB that tracebook wrote holds the msprof tables plus its own TB_ tables
 * (TB_SOURCE: the files it was loaded from). These calls answer questions
 * about such a DB without loading anything.
 */
#ifndef TRACEBOOK_DB_H
#define TRACEBOOK_DB_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"

/*
 * msprof's model id of step mode: iterations are a script's steps
 * (STEP_TIME), not a graph model's (TB_ITERATION). A window of this model
 * selects steps; rows of step mode carry it as their modelId.
 */
#define TB_STEP_MODEL_ID 4294967295LL

/*
 * The session start of an already loaded DB, in Unix seconds: Kineto's
 * baseTime + start, else the earliest event when it is Unix time, else the
 * newest modification time of the files it was loaded from (0 when none).
 */
tb_status tb_db_start_time(const char *db_path, int64_t *unix_s, tb_error *err);

/*
 * Computes the default DB name `msprof_<UTC YYYYMMDDhhmmss>.db` for an
 * already loaded DB: the session start taken from the data. Writes into out.
 */
tb_status tb_db_default_name(const char *db_path, char *out, size_t outlen, tb_error *err);

/* 1 when db_path is a DB that tracebook wrote (has TB_SOURCE), or does not exist. */
int tb_db_is_own(const char *db_path);

/* 1 when db_path is a regular file and a DB that tracebook wrote (what
 * `merge` reads); 0 otherwise, a missing file included. */
int tb_db_is_own_file(const char *db_path);

/* 1 when db_path is a shard DB that `export db --shard` wrote (has TB_SHARD):
 * loaded with the other shards of its load, it gives the DB of all the inputs. */
int tb_db_is_shard(const char *db_path);

/* 1 when path is a folder holding shard DBs (`export db --shard ... -o DIR`). */
int tb_db_shard_folder(const char *path);

/*
 * Fails (TB_ERR_USAGE, naming the file) when target exists and is one of
 * the files the DB at db_path was loaded from (its TB_SOURCE), by device and
 * inode: writing target would replace an input. TB_OK otherwise.
 */
tb_status tb_db_check_target(const char *db_path, const char *target, tb_error *err);

/*
 * The limits of what a run may take of the machine (docs/reliability.md).
 * They are process-wide, as SQLite's own heap limit is: set them once,
 * before the first DB is opened. 0 in a field means its default.
 */
typedef struct tb_limits {
    double cpu_seconds;   /* CPU time of one report (its computed tables and requires checks
                             included); default TB_DEFAULT_CPU_SECONDS plus 1 s per 4 MiB of the DB */
    int64_t memory_bytes; /* SQLite's heap (every DB, sort and aggregate); default half the RAM */
    int64_t temp_bytes;   /* SQLite's temporary files at any one time; default half the free
                             space of the temporary folder when the limits are set */
} tb_limits;

/* The fixed part of the default CPU time of a report, in seconds. */
#define TB_DEFAULT_CPU_SECONDS 20.0

/*
 * Sets the limits (NULL: every default): the SQLite heap limit, and a VFS
 * that counts the bytes of SQLite's temporary files, made the default VFS.
 * Fails with TB_ERR_USAGE for a negative or non-finite value.
 */
tb_status tb_limits_set(const tb_limits *l, tb_error *err);

/* Which limit tb_limits_read sets. */
typedef enum tb_limit_kind { TB_LIMIT_CPU_SECONDS, TB_LIMIT_MEMORY, TB_LIMIT_TEMP } tb_limit_kind;

/*
 * Sets one limit of l from its text as a user writes it: a positive number
 * of seconds for the CPU time; for the sizes digits (a fraction allowed)
 * then K, M, G or T (powers of 1024), or nothing for bytes ("512M", "2G").
 * Returns 0, or -1 (l unchanged) when the text is not such a value.
 */
int tb_limits_read(tb_limits *l, tb_limit_kind which, const char *text);

/* The limits in force, defaults resolved (cpu_seconds: the fixed part of
 * its default when not set: see tb_limits). Sets the defaults first when
 * tb_limits_set was never called. */
void tb_limits_get(tb_limits *out);

#endif
