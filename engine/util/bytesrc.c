/* SPDX-License-Identifier: MIT */
/*
 * bytesrc.c - plain-or-gzip byte source (see bytesrc.h).
 *
 * A plain file is read with read(2) into whatever memory the caller names,
 * so the bytes land where the parser reads them and nothing is copied. A
 * gzip file (magic bytes 1f 8b) goes through zlib with a 256 KiB input
 * buffer. zlib reports a stream that ends early only through gzerror()
 * (Z_BUF_ERROR after a read that returned 0), so every read that returns 0
 * asks, and a cut-short stream becomes TB_ERR_TRUNCATED instead of a quiet
 * end of file. Bytes shown by bytesrc_peek() wait in a small buffer of
 * their own and are handed out first by the next reads; only the sniffers
 * peek, so the readers' path never touches that buffer.
 */
#define _POSIX_C_SOURCE 200809L
#include "util/bytesrc.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define GZ_BUFFER (1u << 18)
#define GZ_MAX_READ (1u << 30) /* gzread() takes an unsigned and returns an int */

struct bytesrc {
    char *path;
    int fd;            /* plain input, or -1 */
    gzFile gz;         /* gzip input, or NULL */
    int64_t off;       /* decompressed bytes consumed */
    int64_t raw;       /* plain bytes read from the file */
    int64_t raw_size;  /* the file's size at open, -1 unknown */
    int at_end;        /* the file gave its last byte */
    int64_t gz_out;    /* gzip: decompressed bytes zlib gave */
    int64_t trailing;  /* gzip: where bytes that are no gzip member start after the last one, -1 none */
    char *peek;        /* peeked bytes: peek[peek_pos .. peek_len), NUL after them */
    size_t peek_cap, peek_len, peek_pos;
    int failed;        /* error holds what stopped the source */
    tb_error error;
};

/* Records an error at the current offset, copies it out and returns -1. */
__attribute__((format(printf, 4, 5))) static int fail(bytesrc *src, tb_error *err, tb_status code,
                                                      const char *fmt, ...)
{
    char msg[sizeof src->error.message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tb_error_at(&src->error, code, src->path, 0, 0, src->off + (int64_t)(src->peek_len - src->peek_pos), "%s",
                msg);
    src->failed = 1;
    if (err)
        *err = src->error;
    return -1;
}

bytesrc *bytesrc_open(const char *path, tb_error *err)
{
    bytesrc *src = calloc(1, sizeof *src);
    if (!src || !(src->path = strdup(path))) {
        free(src);
        tb_error_at(err, TB_ERR_NOMEM, path, 0, 0, -1, "cannot open: out of memory");
        errno = ENOMEM;
        return NULL;
    }
    src->raw_size = -1;
    src->trailing = -1;
    src->fd = open(path, O_RDONLY);
    if (src->fd < 0) {
        int e = errno;
        tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot open: %s", strerror(e));
        bytesrc_close(src);
        errno = e;
        return NULL;
    }
    struct stat st;
    if (fstat(src->fd, &st) == 0 && S_ISREG(st.st_mode))
        src->raw_size = (int64_t)st.st_size;
    unsigned char magic[2];
    ssize_t got = pread(src->fd, magic, 2, 0);
    if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        src->gz = gzdopen(src->fd, "rb");
        if (!src->gz) {
            tb_error_at(err, TB_ERR_NOMEM, path, 0, 0, -1, "cannot open: out of memory");
            bytesrc_close(src);
            errno = ENOMEM;
            return NULL;
        }
        src->fd = -1; /* zlib owns it now */
        gzbuffer(src->gz, GZ_BUFFER);
    } else {
        posix_fadvise(src->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    return src;
}

void bytesrc_close(bytesrc *src)
{
    if (!src)
        return;
    if (src->gz)
        gzclose(src->gz);
    if (src->fd >= 0)
        close(src->fd);
    free(src->peek);
    free(src->path);
    free(src);
}

const char *bytesrc_path(const bytesrc *src)
{
    return src->path;
}

int bytesrc_is_gzip(const bytesrc *src)
{
    return src->gz != NULL;
}

/*
 * zlib ends a gzip file quietly where bytes that are no gzip member follow
 * the last member (a file with something appended, or two files
 * concatenated badly): those bytes are never read. Where do they start?
 * The last 4 bytes of a file that ends with a member are the size of that
 * member's data (mod 2^32): when they match all the data read, there is
 * nothing more to look for (a file of several members whose last one
 * matches too can only hide garbage that looks like a member's end).
 * Otherwise the members are walked once more, inflated into a scratch
 * buffer, to find the end of the last one. Returns that end's byte offset
 * when bytes follow it, else -1.
 */
static int64_t gz_trailing(const bytesrc *src)
{
    if (src->raw_size < 20)
        return -1;
    int fd = open(src->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    unsigned char t[4];
    int64_t found = -1;
    if (pread(fd, t, 4, src->raw_size - 4) == 4 &&
        ((uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24) == (uint32_t)src->gz_out) {
        close(fd);
        return -1;
    }
    enum { CHUNK = 1 << 16 };
    unsigned char *in = malloc(CHUNK), *out = malloc(CHUNK);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (!in || !out || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        free(in);
        free(out);
        close(fd);
        return -1;
    }
    int64_t at = 0; /* file offset of in[0] */
    for (;;) {
        if (z.avail_in == 0) {
            at += z.next_in ? (int64_t)(z.next_in - in) : 0;
            ssize_t n = read(fd, in, CHUNK);
            if (n <= 0)
                break;
            z.next_in = in;
            z.avail_in = (uInt)n;
        }
        z.next_out = out;
        z.avail_out = CHUNK;
        int rc = inflate(&z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            int64_t end = at + (int64_t)(z.next_in - in);
            unsigned char m[2];
            if (end >= src->raw_size)
                break;
            if (pread(fd, m, 2, end) == 2 && m[0] == 0x1f && m[1] == 0x8b) {
                inflateReset(&z); /* another member */
                continue;
            }
            found = end;
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            break; /* corrupt data: the reader has said so */
    }
    inflateEnd(&z);
    free(in);
    free(out);
    close(fd);
    return found;
}

int64_t bytesrc_trailing(const bytesrc *src)
{
    return src->trailing;
}

/* Reads from the file itself (not the peeked bytes). Same contract as bytesrc_read. */
static int pull(bytesrc *src, char *buf, size_t n, size_t *got, tb_error *err)
{
    *got = 0;
    if (src->at_end)
        return 0;
    if (!src->gz) {
        ssize_t r;
        do
            r = read(src->fd, buf, n);
        while (r < 0 && errno == EINTR);
        if (r < 0)
            return fail(src, err, TB_ERR_IO, "read failed: %s", strerror(errno));
        src->raw += r;
        src->at_end = r == 0;
        *got = (size_t)r;
        return r > 0;
    }
    int r = gzread(src->gz, buf, n > GZ_MAX_READ ? GZ_MAX_READ : (unsigned)n);
    int zerr = Z_OK;
    const char *msg = r <= 0 ? gzerror(src->gz, &zerr) : NULL;
    if (r > 0) {
        src->gz_out += r;
        *got = (size_t)r;
        return 1;
    }
    if (r == 0 && zerr == Z_OK) {
        src->at_end = 1;
        src->trailing = gz_trailing(src);
        return 0;
    }
    if (zerr == Z_BUF_ERROR)
        return fail(src, err, TB_ERR_TRUNCATED, "compressed input cut short (the gzip stream ends early)");
    if (zerr == Z_MEM_ERROR)
        return fail(src, err, TB_ERR_NOMEM, "out of memory");
    if (zerr == Z_ERRNO)
        return fail(src, err, TB_ERR_IO, "read failed: %s", strerror(errno));
    /* zlib puts the file before its message ("<fd:3>: "): keep only the reason */
    const char *colon = msg ? strstr(msg, ": ") : NULL;
    if (colon)
        msg = colon + 2;
    if (zerr == Z_DATA_ERROR)
        return fail(src, err, TB_ERR_PARSE, "corrupt compressed data: %s", msg ? msg : "");
    return fail(src, err, TB_ERR_IO, "read failed: %s", msg ? msg : "");
}

int bytesrc_read(bytesrc *src, void *buf, size_t n, size_t *got, tb_error *err)
{
    assert(n > 0);
    *got = 0;
    size_t have = src->peek_len - src->peek_pos;
    if (have > 0) {
        size_t k = have < n ? have : n;
        memcpy(buf, src->peek + src->peek_pos, k);
        src->peek_pos += k;
        src->off += (int64_t)k;
        *got = k;
        return 1;
    }
    if (src->failed) {
        if (err)
            *err = src->error;
        return -1;
    }
    int rc = pull(src, buf, n, got, err);
    src->off += (int64_t)*got;
    return rc;
}

int bytesrc_peek(bytesrc *src, size_t n, const char **head, size_t *len, tb_error *err)
{
    *head = "";
    *len = 0;
    if (src->peek_pos > 0) {
        memmove(src->peek, src->peek + src->peek_pos, src->peek_len - src->peek_pos);
        src->peek_len -= src->peek_pos;
        src->peek_pos = 0;
    }
    if (src->peek_cap < n + 1) {
        char *p = n < SIZE_MAX / 2 ? realloc(src->peek, n + 1) : NULL;
        if (!p)
            return fail(src, err, TB_ERR_NOMEM, "out of memory");
        src->peek = p;
        src->peek_cap = n + 1;
    }
    int rc = 0;
    while (rc == 0 && src->peek_len < n) {
        size_t got;
        if (src->failed) {
            if (err)
                *err = src->error;
            rc = -1;
        } else if ((rc = pull(src, src->peek + src->peek_len, n - src->peek_len, &got, err)) == 1) {
            src->peek_len += got;
            rc = 0;
        } else if (rc == 0) {
            break; /* the end */
        }
    }
    src->peek[src->peek_len] = 0;
    *head = src->peek;
    *len = src->peek_len;
    return rc;
}

int64_t bytesrc_offset(const bytesrc *src)
{
    return src->off;
}

int64_t bytesrc_raw_offset(const bytesrc *src)
{
    return src->gz ? (int64_t)gzoffset(src->gz) : src->raw;
}

int64_t bytesrc_raw_size(const bytesrc *src)
{
    return src->raw_size;
}

int bytesrc_win_init(bytesrc_win *w, size_t cap, tb_error *err)
{
    memset(w, 0, sizeof *w);
    w->cap = cap < 2 ? 2 : cap;
    if (!(w->buf = malloc(w->cap))) {
        w->cap = 0;
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        return -1;
    }
    return 0;
}

void bytesrc_win_finish(bytesrc_win *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}

int bytesrc_fill(bytesrc *src, bytesrc_win *w, size_t keep, size_t max, tb_error *err)
{
    assert(keep <= w->len);
    if (keep > 0) {
        memmove(w->buf, w->buf + keep, w->len - keep);
        w->len -= keep;
        w->base += (int64_t)keep;
    }
    if (w->eof)
        return 0;
    if (w->len + 1 >= w->cap) {
        if (max && w->cap >= max)
            return BYTESRC_FULL;
        size_t ncap = w->cap <= SIZE_MAX / 2 ? w->cap * 2 : SIZE_MAX;
        if (max && ncap > max)
            ncap = max;
        char *nb = ncap > w->cap ? realloc(w->buf, ncap) : NULL;
        if (!nb)
            return fail(src, err, TB_ERR_NOMEM, "out of memory (%zu bytes in one piece)", w->len);
        w->buf = nb;
        w->cap = ncap;
    }
    size_t got;
    int rc = bytesrc_read(src, w->buf + w->len, w->cap - 1 - w->len, &got, err);
    if (rc < 0)
        return -1;
    w->len += got;
    if (rc == 0)
        w->eof = 1;
    return rc;
}
