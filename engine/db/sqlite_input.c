/* SPDX-License-Identifier: MIT */
/*
 * sqlite_input.c - read-only access to input DBs (see sqlite_input.h).
 *
 * The private copy and its log are registered as temporary files, so an
 * interrupted run removes them too.
 */
#define _POSIX_C_SOURCE 200809L
#include "db/open.h"
#include "db/sqlite_input.h"
#include "util/tempname.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracebook/error.h"
#include "tracebook/db.h"

static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY), out = -1, rc = -1;
    if (in < 0)
        return -1;
    out = open(to, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (out < 0)
        goto done;
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0) {
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0)
                goto done;
            off += w;
        }
    }
    rc = n < 0 ? -1 : 0;
done:
    if (out >= 0 && close(out) != 0)
        rc = -1;
    close(in);
    return rc;
}

void sqlite_input_uri(const char *path, char *out, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = (size_t)snprintf(out, n, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p && o + 16 < n; p++) {
        if (*p == '%' || *p == '?' || *p == '#' || *p < 0x20) {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        } else {
            out[o++] = (char)*p;
        }
    }
    snprintf(out + o, n - o, "?immutable=1");
}

void sqlite_input_close(sqlite_input *s)
{
    if (s->db)
        sqlite3_close(s->db);
    s->db = NULL;
    if (s->copy[0]) {
        unlink(s->copy_wal);
        char shm[PATH_MAX + 40];
        snprintf(shm, sizeof shm, "%s-shm", s->copy);
        unlink(shm);
        unlink(s->copy);
        tb_temp_unregister(s->copy);
        tb_temp_unregister(s->copy_wal);
        tb_temp_unregister(shm);
        rmdir(s->tmpdir);
        tb_temp_unregister(s->tmpdir);
        s->copy[0] = 0;
    }
}

tb_status sqlite_input_open(sqlite_input *s, const char *path, tb_error *err)
{
    memset(s, 0, sizeof *s);
    char wal[PATH_MAX + 8];
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct stat st;
    int has_wal = stat(wal, &st) == 0 && st.st_size > 0;
    int rc;
    if (has_wal) {
        const char *base = getenv("TMPDIR");
        char stem[PATH_MAX];
        snprintf(stem, sizeof stem, "%s/tracebook-db", base && *base ? base : "/tmp");
        tempname_sweep_beside(stem);
        if (tempname_template(s->tmpdir, sizeof s->tmpdir, stem) != 0 || tempname_make(s->tmpdir, 1, NULL) != 0)
            return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot make a temporary copy: %s", strerror(errno));
        snprintf(s->copy, sizeof s->copy, "%s/input.db", s->tmpdir);
        snprintf(s->copy_wal, sizeof s->copy_wal, "%s/input.db-wal", s->tmpdir);
        char shm[PATH_MAX + 40];
        snprintf(shm, sizeof shm, "%s-shm", s->copy);
        tb_temp_register(s->copy);
        tb_temp_register(s->copy_wal);
        tb_temp_register(shm);
        if (copy_file(path, s->copy) != 0 || copy_file(wal, s->copy_wal) != 0) {
            tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot make a temporary copy: %s", strerror(errno));
            sqlite_input_close(s);
            return err->code;
        }
        rc = db_open(s->copy, SQLITE_OPEN_READWRITE, &s->db);
    } else {
        char uri[PATH_MAX * 3 + 32];
        sqlite_input_uri(path, uri, sizeof uri);
        rc = db_open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, &s->db);
    }
    if (rc != SQLITE_OK) {
        tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot open the DB: %s",
                    s->db ? sqlite3_errmsg(s->db) : "out of memory");
        sqlite_input_close(s);
        return err->code;
    }
    return TB_OK;
}
