/* SPDX-License-Identifier: MIT */
/*
 * dbfile.c - `export db`: the session's inputs loaded into a DB file where
 * msprof puts one, and the default place of every export.
 *
 * The DB goes where -o says (a file; a folder, which gets the default name
 * msprof_<timestamp>.db; stdout) or beside the first input, else into the
 * current folder when that one cannot be written. In a folder it is loaded
 * under a pending name and renamed once its name is known (the name comes
 * from the data), never onto one of the files it was loaded from. A shard
 * (`--shard I/N`) is shard_I_of_N.db and its figures join the
 * tracebook_run.json beside it.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/output.h"
#include "session/session.h"
#include "tracebook/db.h"
#include "tracebook/export.h"
#include "tracebook/report.h"

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

void tb_export_default_dir(tb_session *s, char *out, size_t n)
{
    size_t n_in = 0;
    const char *const *in = tb_session_inputs(s, &n_in);
    const char *input = n_in ? in[0] : ".";
    if (is_dir(input)) {
        snprintf(out, n, "%s", input);
    } else {
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s", input);
        snprintf(out, n, "%s", dirname(tmp));
    }
    if (access(out, W_OK | X_OK) != 0)
        snprintf(out, n, ".");
}

/* Copies the file at path to f. */
static tb_status copy_to(const char *path, FILE *f, tb_error *err)
{
    int rc = file_copy_to(path, f);
    if (rc == FILE_COPY_WRITE)
        return tb_error_at(err, TB_ERR_IO, "-", 0, 0, -1, "cannot write to stdout: %s", strerror(errno));
    if (rc)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot read: %s", strerror(errno));
    return TB_OK;
}

/* To a stream: the DB is loaded into a temporary file, then copied. */
static tb_status to_stream(tb_session *s, const tb_db_export_options *o, tb_load_result *res, tb_error *err)
{
    const char *tmpdir = getenv("TMPDIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tracebook-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot create a temporary file: %s", strerror(errno));
    close(fd);
    tb_temp_register(path);
    tb_status st = tb_session_load_to(s, path, 0, 0, res, err);
    if (st == TB_OK)
        st = copy_to(path, o->stream, err);
    unlink(path);
    tb_temp_unregister(path);
    return st;
}

/* Into a folder: under a pending name, renamed to the default (or the shard's) name. */
static tb_status into_folder(tb_session *s, const tb_db_export_options *o, char *final, size_t n,
                             tb_load_result *res, tb_error *err)
{
    char dir[PATH_MAX], pending[PATH_MAX + 64];
    if (o->output) {
        snprintf(dir, sizeof dir, "%s", o->output);
        size_t k = strlen(dir);
        while (k > 1 && dir[k - 1] == '/')
            dir[--k] = 0;
    } else {
        tb_export_default_dir(s, dir, sizeof dir);
    }
    snprintf(pending, sizeof pending, "%s/.tracebook-pending-%ld.db", dir, (long)getpid());
    tb_temp_register(pending);
    tb_status st = tb_session_load_to(s, pending, o->shard_index, o->shard_count, res, err);
    if (st == TB_OK) {
        char name[96];
        /* a shard's name says which part it is, so the N parts sit side by side */
        if (o->shard_count)
            snprintf(name, sizeof name, "shard_%u_of_%u.db", o->shard_index, o->shard_count);
        else
            st = tb_db_default_name(pending, name, sizeof name, err);
        snprintf(final, n, "%s/%s", dir, name);
        /* the default name may be that of an input (a DB exported there before, named alone) */
        if (st == TB_OK)
            st = tb_db_check_target(pending, final, err);
        if (st == TB_OK && rename(pending, final) != 0)
            st = tb_error_at(err, TB_ERR_IO, final, 0, 0, -1, "cannot write: %s", strerror(errno));
        if (st != TB_OK)
            unlink(pending);
    }
    tb_temp_unregister(pending);
    /* a failure to create the pending file is the directory's */
    if (st != TB_OK && strncmp(err->file, pending, strlen(pending)) == 0) {
        size_t k = strlen(dir) < sizeof err->file - 1 ? strlen(dir) : sizeof err->file - 1;
        memcpy(err->file, dir, k);
        err->file[k] = 0;
    }
    return st;
}

tb_status tb_shard_parse(const char *s, unsigned *index, unsigned *count, tb_error *err)
{
    char *end = NULL;
    errno = 0;
    unsigned long i = strtoul(s, &end, 10), n = 0;
    int ok = errno == 0 && end != s && *end == '/' && s[0] >= '0' && s[0] <= '9';
    if (ok) {
        const char *p = end + 1;
        errno = 0;
        n = strtoul(p, &end, 10);
        ok = errno == 0 && end != p && *end == 0 && p[0] >= '0' && p[0] <= '9';
    }
    if (!ok)
        return tb_error_set(err, TB_ERR_USAGE, "'%s': expected I/N, part I (0 to N-1) of N", s);
    if (n < 1 || n > 1000000)
        return tb_error_set(err, TB_ERR_USAGE, "'%s': N must be 1 to 1000000", s);
    if (i >= n)
        return tb_error_set(err, TB_ERR_USAGE, "'%s': I must be below N (parts are numbered 0 to %lu)", s, n - 1);
    *index = (unsigned)i;
    *count = (unsigned)n;
    return TB_OK;
}

tb_status tb_export_db(tb_session *s, const tb_db_export_options *o, char *final, size_t n, tb_load_result *res,
                       tb_error *err)
{
    final[0] = 0;
    tb_status st;
    if (o->stream)
        return to_stream(s, o, res, err);
    const char *out = o->output;
    /* a shard's -o is a folder unless it names a .db: the N parts go side by side */
    if (out && !is_dir(out) && !ends_with(out, "/") && !(o->shard_count && !ends_with(out, ".db"))) {
        snprintf(final, n, "%s", out);
        st = tb_session_load_to(s, final, o->shard_index, o->shard_count, res, err);
    } else {
        st = into_folder(s, o, final, n, res, err);
    }
    /* a shard's figures go to the tracebook_run.json beside it, with the other shards' */
    if (st == TB_OK && o->shard_count)
        st = tb_shard_record(final, err);
    if (st != TB_OK)
        final[0] = 0;
    return st;
}
