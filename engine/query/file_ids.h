/* SPDX-License-Identifier: MIT */
/*
 * file_ids.h - the files a run must never replace, and the output folder's lock.
 *
 * A run that writes files (report, query -o, compare) first collects the
 * identity (device + inode) of every file it reads: the files the load read
 * (as TB_SOURCE lists them, and found under the inputs by those names), the
 * DB, the specs and their sql_files. Before an output is put in place,
 * file_ids_check() refuses a path that is one of them.
 */
#ifndef TB_QUERY_FILE_IDS_H
#define TB_QUERY_FILE_IDS_H

#include <sqlite3.h>
#include <stddef.h>
#include <sys/types.h>

#include "spec/spec.h"
#include "tracebook/error.h"

typedef struct file_ids {
    struct fid { dev_t dev; ino_t ino; } *v;
    size_t n, cap;
    char **names;   /* base names of the files the load read, sorted */
    size_t n_names;
} file_ids;

/* Adds path, and when it is a directory every file below it that the load
 * read (links not followed, depth bounded). 0, or -1 when out of memory. */
int file_ids_walk(file_ids *f, const char *path, int depth);

/* The inputs (walked) and the DB at db with the files its TB_SOURCE names
 * (read through conn, a connection to it). */
tb_status file_ids_collect(file_ids *f, const char *const *inputs, size_t n, const char *db, sqlite3 *conn,
                           tb_error *err);

/* A spec's file and the sql_files its reports read. */
tb_status file_ids_spec(file_ids *f, const tb_spec *spec, tb_error *err);

/* Fails (TB_ERR_USAGE, naming path) when path exists and is one of them. */
tb_status file_ids_check(const file_ids *f, const char *path, tb_error *err);

/* The same for DIR/<name><suffix>: a suffix with a leading '_' is appended
 * as is ("_compare.csv"), any other is an extension ("csv" -> ".csv"). */
tb_status file_ids_check_out(const file_ids *f, const char *dir, const char *name, const char *suffix, tb_error *err);

/* The same for every file in dir that a split CSV of DIR/<base>.csv may
 * write (csv_out.c): <base>_<k>.csv, or with at > 0 msprof's
 * <base[0..at)>slice_<k>_<base[at..]>.csv, at bytes into base. */
tb_status file_ids_check_parts(const file_ids *f, const char *dir, const char *base, size_t at, tb_error *err);

void file_ids_free(file_ids *f);

/* Creates the output folder dir when missing (one level) and checks that it
 * is a folder, and that a tracebook_run.json there is a regular file; the
 * error names the place. */
tb_status out_dir_make(const char *dir, tb_error *err);

/* Takes the lock of an output folder (a lock on the folder itself, so that
 * nothing is left in it): two runs into one folder take turns, and their
 * files never mix. Waits, with a note, while another run holds it. Returns
 * the descriptor to close when done (-1 when the folder cannot be opened:
 * the writes that follow say why). */
int out_dir_lock(const char *dir, void (*note)(void *ctx, const char *msg), void *ctx);

#endif
