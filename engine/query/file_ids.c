/* SPDX-License-Identifier: MIT */
/*
 * file_ids.c - the files a run must never replace (file_ids.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query/file_ids.h"
#include "util/dirs.h"
#include "util/sort.h"

static int ids_add(file_ids *f, const struct stat *sb)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        struct fid *v = realloc(f->v, cap * sizeof *v);
        if (!v)
            return -1;
        f->v = v;
        f->cap = cap;
    }
    f->v[f->n].dev = sb->st_dev;
    f->v[f->n].ino = sb->st_ino;
    f->n++;
    return 0;
}

/* The base names of the files the DB's load read (TB_SOURCE, not 'ignored'). */
static int ids_names(file_ids *f, sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (!db || sqlite3_prepare_v2(db, "SELECT DISTINCT path FROM TB_SOURCE WHERE kind IS NOT 'ignored'", -1, &st, NULL) !=
            SQLITE_OK)
        goto done;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *p = (const char *)sqlite3_column_text(st, 0);
        if (!p)
            continue;
        /* the path as the load gave it (a DB loaded from another folder may
         * name it relative to there: the walk of the inputs finds it then) */
        struct stat sb;
        if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && ids_add(f, &sb)) {
            rc = -1;
            break;
        }
        const char *b = strrchr(p, '/');
        char **v = realloc(f->names, (f->n_names + 1) * sizeof *v);
        if (!v || !(v[f->n_names] = strdup(b ? b + 1 : p))) {
            if (v)
                f->names = v;
            rc = -1;
            break;
        }
        f->names = v;
        f->n_names++;
    }
    if (f->n_names)
        qsort(f->names, f->n_names, sizeof *f->names, sort_cmp_str);
done:
    sqlite3_finalize(st);
    return rc;
}

static int was_read(const file_ids *f, const char *name)
{
    return f->n_names && bsearch(&name, f->names, f->n_names, sizeof *f->names, sort_cmp_str) != NULL;
}

void file_ids_free(file_ids *f)
{
    for (size_t i = 0; i < f->n_names; i++)
        free(f->names[i]);
    free(f->names);
    free(f->v);
}


/* Unreadable parts are skipped: the load already said what it could not
 * read. At depth 0 a file is added whatever its name (an input, a spec). */
int file_ids_walk(file_ids *f, const char *path, int depth)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return 0;
    if (S_ISREG(sb.st_mode)) {
        const char *b = strrchr(path, '/');
        return depth == 0 || was_read(f, b ? b + 1 : path) ? ids_add(f, &sb) : 0;
    }
    if (!S_ISDIR(sb.st_mode) || depth > 32)
        return 0;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        size_t n = strlen(path) + strlen(e->d_name) + 2;
        char *child = malloc(n);
        if (!child) {
            rc = -1;
            break;
        }
        snprintf(child, n, "%s/%s", path, e->d_name);
        rc = file_ids_walk(f, child, depth + 1);
        free(child);
    }
    closedir(d);
    return rc;
}

tb_status file_ids_check(const file_ids *f, const char *path, tb_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return TB_OK;
    for (size_t i = 0; i < f->n; i++)
        if (f->v[i].dev == sb.st_dev && f->v[i].ino == sb.st_ino)
            return tb_error_at(err, TB_ERR_USAGE, path, 0, 0, -1,
                               "refusing to replace an input file: write the output elsewhere (-o)");
    return TB_OK;
}

tb_status file_ids_collect(file_ids *f, const char *const *inputs, size_t n, const char *db, sqlite3 *conn,
                           tb_error *err)
{
    if (db && ids_names(f, conn))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (file_ids_walk(f, inputs[i], 0))
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    if (db && file_ids_walk(f, db, 0))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    return TB_OK;
}

tb_status file_ids_spec(file_ids *f, const tb_spec *spec, tb_error *err)
{
    if (spec->path && file_ids_walk(f, spec->path, 0))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < spec->n_reports; k++)
        if (spec->reports[k].sql_file && file_ids_walk(f, spec->reports[k].sql_file, 0))
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    return TB_OK;
}

tb_status out_dir_make(const char *dir, tb_error *err)
{
    struct stat sb;
    if (dirs_make(dir, 1, 0777) != 0)
        return tb_error_at(err, TB_ERR_IO, dir, 0, 0, -1, "cannot create the output directory: %s", strerror(errno));
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tb_error_at(err, TB_ERR_IO, dir, 0, 0, -1, "the output must be a directory");
    /* the run's metadata is written last: what sits at its name is known
     * now, before any output is (a FIFO there would hang the run) */
    char meta[PATH_MAX];
    if (snprintf(meta, sizeof meta, "%s/tracebook_run.json", dir) < (int)sizeof meta && lstat(meta, &sb) == 0 &&
        !S_ISREG(sb.st_mode) && !(S_ISLNK(sb.st_mode) && stat(meta, &sb) == 0 && S_ISREG(sb.st_mode)))
        return tb_error_at(err, TB_ERR_IO, meta, 0, 0, -1,
                           "cannot write: not a regular file (refusing to write the run's metadata over it)");
    return TB_OK;
}

int out_dir_lock(const char *dir, void (*note)(void *ctx, const char *msg), void *ctx)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (note)
            note(ctx, "waiting for another tracebook run that writes into the same folder");
        (void)flock(fd, LOCK_EX);
    }
    return fd;
}

tb_status file_ids_check_out(const file_ids *f, const char *dir, const char *name, const char *suffix, tb_error *err)
{
    size_t n = strlen(dir) + strlen(name) + strlen(suffix) + 3;
    char *path = malloc(n);
    if (!path)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    snprintf(path, n, "%s/%s%s%s", dir, name, suffix[0] == '_' ? "" : ".", suffix);
    tb_status st = file_ids_check(f, path, err);
    free(path);
    return st;
}

/* Is name a part of the split CSV <base>.csv: <base>_<k>.csv, or with at >
 * 0, msprof's <base[0..at)>slice_<k>_<base[at..]>.csv? */
static int is_part(const char *name, const char *base, size_t at)
{
    size_t n = strlen(base);
    if (at > n)
        at = n;
    size_t head = at ? at : n;
    if (strncmp(name, base, head) != 0)
        return 0;
    const char *p = name + head;
    if (at ? strncmp(p, "slice_", 6) != 0 : *p != '_')
        return 0;
    p += at ? 6 : 1;
    if (!isdigit((unsigned char)*p))
        return 0;
    while (isdigit((unsigned char)*p))
        p++;
    if (at) {
        if (*p != '_' || strncmp(p + 1, base + at, n - at) != 0)
            return 0;
        p += 1 + (n - at);
    }
    return !strcmp(p, ".csv");
}

tb_status file_ids_check_parts(const file_ids *f, const char *dir, const char *base, size_t at, tb_error *err)
{
    if (!f->n)
        return TB_OK;
    DIR *d = opendir(dir);
    if (!d)
        return TB_OK; /* a folder not there yet holds no input */
    struct dirent *e;
    tb_status st = TB_OK;
    while (!st && (e = readdir(d)) != NULL) {
        if (!is_part(e->d_name, base, at))
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(n);
        if (!path) {
            st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            break;
        }
        snprintf(path, n, "%s/%s", dir, e->d_name);
        st = file_ids_check(f, path, err);
        free(path);
    }
    closedir(d);
    return st;
}
