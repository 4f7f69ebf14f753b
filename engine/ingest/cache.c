/* SPDX-License-Identifier: MIT */
/*
 * cache.c - reuse of a DB already loaded from the same inputs.
 *
 * Commands that only need a DB to read (info, and the report commands) keep
 * the DB they load under $XDG_CACHE_HOME/tracebook/ (~/.cache/tracebook/),
 * named by a hash of the tool's version, the schema's text and the inputs' paths.
 * Such a DB is reused only when its TB_SOURCE still lists exactly the files
 * the inputs hold now, with the same sizes and modification times: a stale
 * DB (a profile re-collected in place, a file added) is rebuilt, never
 * silently used. --rebuild forces the reload.
 *
 * The cache must be private: its folder is made 0700 and refused when it
 * belongs to another user or others may write it (a forged DB there would
 * be reused as "inputs unchanged"), and a cached DB is reused only when it
 * is this user's regular file that no one else may write.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/open.h"
#include "db/dbw.h"
#include "tracebook/error.h"
#include "tracebook/load.h"
#include "util/dirs.h"
#include "util/hash.h"
#include "util/sort.h"

/* Refuses a cache entry (folder or DB) that another user could have planted
 * or can change: it must be ours, not a symbolic link, and writable by
 * nobody else. */
static tb_status check_private(const char *path, int want_dir, tb_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot read: %s", strerror(errno));
    const char *why = NULL;
    if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
        why = want_dir ? "not a directory" : "not a regular file";
    else if (st.st_uid != geteuid())
        why = "owned by another user";
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        why = "writable by other users";
    if (why)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1,
                           "the cache %s is %s: refusing to use it (set XDG_CACHE_HOME to a folder of your own)",
                           want_dir ? "directory" : "DB", why);
    return TB_OK;
}

/* Writes the cache directory's path into out (nothing is created). */
static tb_status cache_path(char *out, size_t n, tb_error *err)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int w;
    if (xdg && *xdg)
        w = snprintf(out, n, "%s/tracebook", xdg);
    else if (home && *home)
        w = snprintf(out, n, "%s/.cache/tracebook", home);
    else /* no home: a folder of this user's own in /tmp */
        w = snprintf(out, n, "/tmp/tracebook-cache-%lu", (unsigned long)geteuid());
    if (w < 0 || (size_t)w >= n)
        return tb_error_set(err, TB_ERR_USAGE, "cache directory path too long");
    return TB_OK;
}

/* 1 when path is (or would be) inside directory dir; both made absolute as far as they exist. */
static int inside(const char *path, const char *dir)
{
    char rdir[PATH_MAX], buf[PATH_MAX];
    if (!realpath(dir, rdir))
        return 0;
    /* the deepest existing ancestor of path, resolved, plus the rest as written */
    snprintf(buf, sizeof buf, "%s", path);
    char rest[PATH_MAX] = "", rp[PATH_MAX];
    for (;;) {
        if (realpath(buf, rp))
            break;
        char *slash = strrchr(buf, '/');
        if (!slash || slash == buf)
            return 0;
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s%s", slash, rest);
        snprintf(rest, sizeof rest, "%s", tmp);
        *slash = 0;
    }
    char full[2 * PATH_MAX];
    snprintf(full, sizeof full, "%s%s", rp, rest);
    size_t k = strlen(rdir);
    return !strcmp(rdir, "/") || (!strncmp(full, rdir, k) && (full[k] == '/' || full[k] == 0));
}

tb_status tb_cache_dir(char *out, size_t n, tb_error *err)
{
    tb_status st = cache_path(out, n, err);
    if (st != TB_OK)
        return st;
    /* the parents as any cache home; the cache itself private */
    char *slash = strrchr(out, '/');
    if (slash && slash != out) {
        *slash = 0;
        int rc = dirs_make(out, 1, 0755);
        *slash = '/';
        if (rc != 0)
            return tb_error_at(err, TB_ERR_IO, out, 0, 0, -1, "cannot write: %s", strerror(errno));
    }
    if (mkdir(out, 0700) != 0 && errno != EEXIST)
        return tb_error_at(err, TB_ERR_IO, out, 0, 0, -1, "cannot write: %s", strerror(errno));
    return check_private(out, 1, err);
}

/* 1 when db's TB_SOURCE lists exactly the files in paths with their sizes
 * and mtimes. A DB merged from shards lists the raw files its shards read:
 * its inputs are the shards, in TB_SHARDS; one that left a missing shard out
 * (--keep-going) is reused only with keep_going again. */
static int cache_matches(const char *db_path, char **paths, int keep_going)
{
    sqlite3 *db;
    if (db_open(db_path, SQLITE_OPEN_READONLY, &db) != SQLITE_OK) {
        sqlite3_close(db);
        return 0;
    }
    sqlite3_stmt *q;
    int ok = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM TB_SHARDS WHERE status = 'missing'", -1, &q, NULL) ==
        SQLITE_OK) {
        int missing = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) > 0;
        sqlite3_finalize(q);
        if ((missing && !keep_going) ||
            sqlite3_prepare_v2(db,
                               "SELECT path, dbBytes, dbMtimeNs FROM TB_SHARDS WHERE status = 'merged' ORDER BY path",
                               -1, &q, NULL) != SQLITE_OK)
            goto done;
    } else if (sqlite3_prepare_v2(db,
                                  "SELECT path, bytes, mtimeNs FROM TB_SOURCE WHERE kind NOT IN ('ignored', 'skipped')"
                                  " ORDER BY path",
                                  -1, &q, NULL) != SQLITE_OK) {
        goto done;
    }
    size_t n = 0;
    for (char **p = paths; *p; p++)
        n++;
    size_t seen = 0;
    ok = 1;
    while (ok && sqlite3_step(q) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(q, 0);
        struct stat st;
        int found = 0;
        for (char **p = paths; *p && !found; p++)
            found = path && !strcmp(*p, path);
        if (!found || stat(path, &st) != 0 || (int64_t)st.st_size != sqlite3_column_int64(q, 1) ||
            (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec != sqlite3_column_int64(q, 2))
            ok = 0;
        seen++;
    }
    if (seen != n)
        ok = 0;
    sqlite3_finalize(q);
done:
    sqlite3_close(db);
    return ok;
}

/* Every input file, in a stable order and each once (a file reached twice,
 * the same -dir given twice, is one source), for the key and the staleness
 * check. *allp: returns new, NULL-terminated (free with tb_paths_free()). */
static tb_status all_inputs(const tb_load_options *opt, char ***allp, tb_error *err)
{
    char **all = NULL;
    size_t nall = 0;
    for (size_t i = 0; i < opt->n_inputs; i++) {
        char **files = tb_find_traces(opt->inputs[i], err);
        if (!files) {
            tb_paths_free(all);
            return err->code;
        }
        for (char **f = files; *f; f++) {
            char **na = realloc(all, (nall + 2) * sizeof *na);
            if (!na) {
                tb_paths_free(files);
                tb_paths_free(all);
                return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            }
            all = na;
            all[nall++] = *f;
            *f = NULL;
            all[nall] = NULL;
        }
        free(files);
    }
    if (!all)
        return tb_error_set(err, TB_ERR_NOTFOUND, "no input found");
    qsort(all, nall, sizeof *all, sort_cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < nall; i++) {
        if (u > 0 && !strcmp(all[u - 1], all[i]))
            free(all[i]);
        else
            all[u++] = all[i];
    }
    all[u] = NULL;
    *allp = all;
    return TB_OK;
}

/* The cache key: the tool's version, the schema's own text (a DB cached by a
 * build with other tables or views is never reused), the options that
 * change what loads, and the inputs as real paths. */
static uint64_t cache_key(const tb_load_options *opt)
{
    uint64_t h = HASH_FNV_OFFSET;
    h = hash_fnv1a(h, TB_VERSION, strlen(TB_VERSION));
    h = hash_fnv1a(h, tb_sql_unified, strlen(tb_sql_unified));
    h = hash_fnv1a(h, tb_sql_indexes, strlen(tb_sql_indexes));
    h = hash_fnv1a(h, tb_sql_indexes_live, strlen(tb_sql_indexes_live));
    h = hash_fnv1a(h, tb_sql_views, strlen(tb_sql_views));
    h = hash_fnv1a(h, opt->keep_python_functions ? "py1" : "py0", 3);
    h = hash_fnv1a(h, opt->strict ? "st1" : "st0", 3);
    for (size_t i = 0; i < opt->n_inputs; i++) {
        char real[PATH_MAX];
        const char *p = realpath(opt->inputs[i], real) ? real : opt->inputs[i];
        h = hash_fnv1a(h, p, strlen(p) + 1);
    }
    return h;
}

/* The path of the entry of key h, DIR/<key>.db, its directory made. The
 * cache is never inside an input folder: its DBs would be found there, and
 * making it would write into the user's data. */
static tb_status cache_entry(const tb_load_options *opt, uint64_t h, char *db_out, size_t n, tb_error *err)
{
    char dir[PATH_MAX];
    tb_status st = cache_path(dir, sizeof dir, err);
    if (st != TB_OK)
        return st;
    for (size_t i = 0; i < opt->n_inputs; i++) {
        struct stat is;
        if (stat(opt->inputs[i], &is) == 0 && S_ISDIR(is.st_mode) && inside(dir, opt->inputs[i]))
            return tb_error_at(err, TB_ERR_USAGE, dir, 0, 0, -1,
                               "the cache directory is inside the input '%s': set XDG_CACHE_HOME elsewhere",
                               opt->inputs[i]);
    }
    if ((st = tb_cache_dir(dir, sizeof dir, err)) != TB_OK)
        return st;
    if ((size_t)snprintf(db_out, n, "%s/%016llx.db", dir, (unsigned long long)h) >= n)
        return tb_error_set(err, TB_ERR_USAGE, "cache path too long");
    return TB_OK;
}

tb_status tb_cache_load(const tb_load_options *opt, int rebuild, char *db_out, size_t n, int *reused, tb_error *err)
{
    *reused = 0;
    char **all = NULL;
    tb_status st = all_inputs(opt, &all, err);
    if (st == TB_OK)
        st = cache_entry(opt, cache_key(opt), db_out, n, err);
    if (st != TB_OK) {
        tb_paths_free(all);
        return st;
    }
    /* one run at a time per entry: a second run on the same inputs waits
     * for the first one's load and then reuses it instead of loading again */
    char lock_path[PATH_MAX + 8];
    snprintf(lock_path, sizeof lock_path, "%s.lock", db_out);
    int lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd >= 0 && flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        if (opt->note)
            opt->note(opt->ctx, "waiting for another tracebook run that loads the same inputs");
        (void)flock(lock_fd, LOCK_EX);
    }
    struct stat sb;
    tb_error why;
    /* a DB that someone else could have put or changed there is never
     * trusted: it is loaded again, and the new one renamed over it */
    if (!rebuild && lstat(db_out, &sb) == 0 && check_private(db_out, 0, &why) == TB_OK &&
        cache_matches(db_out, all, opt->keep_going)) {
        *reused = 1;
    } else {
        tb_load_options o = *opt;
        o.output = db_out;
        st = tb_load(&o, NULL, err);
    }
    if (lock_fd >= 0)
        close(lock_fd); /* releases the lock */
    tb_paths_free(all);
    return st;
}

tb_status tb_cache_remove(const char *db_path, tb_error *err)
{
    char dir[PATH_MAX], rdir[PATH_MAX], rdb[PATH_MAX];
    tb_status st = cache_path(dir, sizeof dir, err);
    if (st != TB_OK)
        return st;
    /* only an entry of this user's cache: DIR/<16 hex digits>.db, a regular file */
    const char *base = strrchr(db_path, '/');
    base = base ? base + 1 : db_path;
    int named = strlen(base) == 19 && !strcmp(base + 16, ".db");
    for (int i = 0; named && i < 16; i++)
        named = (base[i] >= '0' && base[i] <= '9') || (base[i] >= 'a' && base[i] <= 'f');
    char *slash = realpath(db_path, rdb) ? strrchr(rdb, '/') : NULL;
    if (!named || !slash || !realpath(dir, rdir) || (size_t)(slash - rdb) != strlen(rdir) ||
        strncmp(rdb, rdir, strlen(rdir)))
        return tb_error_at(err, TB_ERR_USAGE, db_path, 0, 0, -1, "not a DB of the cache %s: kept", dir);
    if ((st = check_private(rdb, 0, err)) != TB_OK)
        return st;
    /* under the entry's lock, so that no run is loading it meanwhile */
    char lock_path[PATH_MAX + 8];
    snprintf(lock_path, sizeof lock_path, "%s.lock", rdb);
    int lock_fd = open(lock_path, O_RDWR | O_CLOEXEC);
    if (lock_fd >= 0)
        (void)flock(lock_fd, LOCK_EX);
    if (unlink(rdb) != 0 && errno != ENOENT)
        st = tb_error_at(err, TB_ERR_IO, rdb, 0, 0, -1, "cannot remove: %s", strerror(errno));
    else if (lock_fd >= 0)
        (void)unlink(lock_path);
    if (lock_fd >= 0)
        close(lock_fd);
    return st;
}
