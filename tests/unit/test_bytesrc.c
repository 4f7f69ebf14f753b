/* SPDX-License-Identifier: MIT */
/*
 * test_bytesrc.c - unit tests for the plain-or-gzip byte source
 * (engine/util/bytesrc.c).
 *
 * Files are written into a private mkdtemp() directory (removed by the group
 * teardown). Checked: a plain file and a gzip file read whole, both through
 * bytesrc_read and through a small sliding window (bytes, decompressed and
 * raw offsets, the file size), gzip told by its magic bytes whatever the
 * name, a gzip stream cut short (TB_ERR_TRUNCATED with the file and the
 * offset of the first missing byte, and the same error again on the next
 * call; a peek past the cut still shows the bytes before it), corrupt compressed data, an empty file, a missing file (errno kept),
 * a directory, peeking before reading (peeked bytes come first and are not
 * counted as consumed; the head is NUL-terminated), and the window's growth
 * limit (BYTESRC_FULL). Runs with the exit-code protocol: main returns the
 * number of failed tests.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>
#include <zlib.h>

#include "testutil.h"
#include "tracebook/tracebook.h"
#include "util/bytesrc.h"

/* n bytes of text that compresses, but not to nothing: numbered lines. */
static char *sample_text(size_t n)
{
    char *t = malloc(n + 1);
    assert_non_null(t);
    size_t k = 0;
    for (unsigned i = 0; k < n; i++) {
        char line[64];
        int w = snprintf(line, sizeof line, "line %u value %u\n", i, (i * 2654435761u) >> 7);
        for (int j = 0; j < w && k < n; j++)
            t[k++] = line[j];
    }
    t[n] = 0;
    return t;
}

static off_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

/* Reads src to its end in chunks of at most chunk bytes; returns the bytes (new: free). */
static char *read_all(bytesrc *src, size_t chunk, size_t *n)
{
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    tb_error err;
    for (;;) {
        if (cap - len < chunk) {
            cap = cap * 2 + chunk;
            b = realloc(b, cap);
            assert_non_null(b);
        }
        size_t got = 99;
        int rc = bytesrc_read(src, b + len, chunk, &got, &err);
        if (rc < 0)
            fail_msg("read failed: %s", err.message);
        if (rc == 0) {
            assert_int_equal(got, 0);
            break;
        }
        assert_int_equal(rc, 1);
        assert_true(got > 0 && got <= chunk);
        len += got;
        assert_i64((int64_t)len, bytesrc_offset(src));
    }
    *n = len;
    return b;
}

/* Reads src through a window of cap bytes, consuming all of it each time; returns the bytes. */
static char *read_window(bytesrc *src, size_t cap, size_t *n)
{
    bytesrc_win w;
    tb_error err;
    assert_int_equal(bytesrc_win_init(&w, cap, &err), 0);
    size_t total = 0, out_cap = 1 << 16;
    char *out = malloc(out_cap);
    assert_non_null(out);
    int rc;
    size_t keep = 0;
    while ((rc = bytesrc_fill(src, &w, keep, 0, &err)) == 1) {
        assert_i64((int64_t)total, w.base);
        assert_true(w.len < w.cap);
        if (out_cap < total + w.len) {
            out_cap = (total + w.len) * 2;
            out = realloc(out, out_cap);
            assert_non_null(out);
        }
        memcpy(out + total, w.buf, w.len);
        total += w.len;
        keep = w.len;
    }
    if (rc < 0)
        fail_msg("fill failed: %s", err.message);
    assert_int_equal(rc, 0);
    assert_true(w.eof);
    assert_int_equal(w.len, 0);
    assert_i64((int64_t)total, w.base);
    /* at the end, a fill adds nothing */
    assert_int_equal(bytesrc_fill(src, &w, 0, 0, &err), 0);
    assert_int_equal(w.cap, cap); /* consumed each time: never grew */
    bytesrc_win_finish(&w);
    *n = total;
    return out;
}

/* Reads path whole twice, through bytesrc_read and through a small window, and checks every byte and count. */
static void check_whole(const char *path, const char *text, size_t n, int gzip)
{
    int64_t size = (int64_t)file_size(path);
    tb_error err;
    bytesrc *src = bytesrc_open(path, &err);
    assert_non_null(src);
    assert_string_equal(bytesrc_path(src), path);
    assert_int_equal(bytesrc_is_gzip(src), gzip);
    assert_i64(size, bytesrc_raw_size(src));
    assert_i64(0, bytesrc_offset(src));
    size_t got_n;
    char *got = read_all(src, 65536, &got_n);
    assert_int_equal(got_n, n);
    assert_memory_equal(got, text, n);
    assert_i64((int64_t)n, bytesrc_offset(src));
    assert_i64(size, bytesrc_raw_offset(src));
    free(got);
    bytesrc_close(src);

    src = bytesrc_open(path, &err);
    assert_non_null(src);
    got = read_window(src, 1000, &got_n);
    assert_int_equal(got_n, n);
    assert_memory_equal(got, text, n);
    free(got);
    bytesrc_close(src);
}

static void test_plain(void **state)
{
    (void)state;
    enum { N = 3 * 1000 * 1000 + 7 };
    char *text = sample_text(N);
    char path[PATH_MAX];
    write_file(path, sizeof path, "plain.json.gz", text, N); /* the name says gzip; the bytes do not */
    check_whole(path, text, N, 0);
    free(text);
}

static void test_gzip(void **state)
{
    (void)state;
    enum { N = 3 * 1000 * 1000 + 7 };
    char *text = sample_text(N);
    char path[PATH_MAX];
    write_gz(path, sizeof path, "packed.csv", text, N); /* no .gz: told by the magic bytes */
    assert_true(file_size(path) < N / 2);
    check_whole(path, text, N, 1);
    free(text);
}

static void test_truncated_gzip(void **state)
{
    (void)state;
    enum { N = 2 * 1000 * 1000 };
    char *text = sample_text(N);
    char path[PATH_MAX];
    write_gz(path, sizeof path, "whole.gz", text, N);
    size_t gzn;
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = (size_t)file_size(path);
    char *gz = malloc(cap);
    assert_non_null(gz);
    gzn = fread(gz, 1, cap, f);
    fclose(f);
    assert_int_equal(gzn, cap);
    write_file(path, sizeof path, "cut.gz", gz, gzn / 2);
    free(gz);

    tb_error err;
    bytesrc *src = bytesrc_open(path, &err);
    assert_non_null(src);
    char *buf = malloc(N);
    assert_non_null(buf);
    size_t len = 0, got;
    int rc;
    while ((rc = bytesrc_read(src, buf + len, 8192, &got, &err)) == 1)
        len += got;
    assert_int_equal(rc, -1);
    /* what came is the start of the text, and not all of it */
    assert_true(len > 0 && len < N);
    assert_memory_equal(buf, text, len);
    assert_int_equal(err.code, TB_ERR_TRUNCATED);
    assert_string_equal(err.message, "compressed input cut short (the gzip stream ends early)");
    assert_string_equal(err.file, path);
    assert_i64((int64_t)len, err.offset);
    assert_i64((int64_t)len, bytesrc_offset(src));

    /* the same error again, not a quiet end */
    tb_error again;
    assert_int_equal(bytesrc_read(src, buf, 10, &got, &again), -1);
    assert_int_equal(got, 0);
    assert_int_equal(again.code, TB_ERR_TRUNCATED);
    assert_i64(err.offset, again.offset);
    bytesrc_close(src);

    /* through a window: the bytes before the cut are in it, then the error */
    src = bytesrc_open(path, &err);
    assert_non_null(src);
    bytesrc_win w;
    assert_int_equal(bytesrc_win_init(&w, 1 << 16, &err), 0);
    while ((rc = bytesrc_fill(src, &w, w.len, 0, &err)) == 1)
        ;
    assert_int_equal(rc, -1);
    assert_int_equal(err.code, TB_ERR_TRUNCATED);
    assert_i64((int64_t)len, w.base + (int64_t)w.len);
    assert_i64((int64_t)len, err.offset);
    bytesrc_win_finish(&w);
    bytesrc_close(src);

    /* a peek past the cut shows the bytes before it (a sniffer still sees the head) */
    src = bytesrc_open(path, &err);
    assert_non_null(src);
    const char *head;
    size_t hn;
    assert_int_equal(bytesrc_peek(src, (size_t)N * 2, &head, &hn, &err), -1);
    assert_int_equal(err.code, TB_ERR_TRUNCATED);
    assert_int_equal(hn, len);
    assert_memory_equal(head, text, hn);
    assert_int_equal(head[hn], 0);
    /* reads hand those bytes out first, then the error again */
    size_t total = 0;
    while ((rc = bytesrc_read(src, buf + total, 100000, &got, &err)) == 1)
        total += got;
    assert_int_equal(rc, -1);
    assert_int_equal(err.code, TB_ERR_TRUNCATED);
    assert_int_equal(total, len);
    assert_memory_equal(buf, text, total);
    bytesrc_close(src);
    free(buf);
    free(text);
}

static void test_corrupt_gzip(void **state)
{
    (void)state;
    /* a gzip header, then a deflate block of the reserved type 3 */
    static const unsigned char bad[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x07, 0x00, 0x00, 0x00, 0x00};
    char path[PATH_MAX];
    write_file(path, sizeof path, "bad.gz", bad, sizeof bad);
    tb_error err;
    bytesrc *src = bytesrc_open(path, &err);
    assert_non_null(src);
    char buf[64];
    size_t got;
    assert_int_equal(bytesrc_read(src, buf, sizeof buf, &got, &err), -1);
    assert_int_equal(err.code, TB_ERR_PARSE);
    assert_string_equal(err.message, "corrupt compressed data: invalid block type");
    assert_string_equal(err.file, path);
    assert_i64(0, err.offset);
    bytesrc_close(src);
}

static void test_empty(void **state)
{
    (void)state;
    char path[PATH_MAX];
    write_file(path, sizeof path, "empty.json", "", 0);
    tb_error err;
    bytesrc *src = bytesrc_open(path, &err);
    assert_non_null(src);
    assert_int_equal(bytesrc_is_gzip(src), 0);
    assert_i64(0, bytesrc_raw_size(src));
    const char *head = NULL;
    size_t len = 99;
    assert_int_equal(bytesrc_peek(src, 16, &head, &len, &err), 0);
    assert_int_equal(len, 0);
    assert_string_equal(head, "");
    char buf[8];
    size_t got = 99;
    assert_int_equal(bytesrc_read(src, buf, sizeof buf, &got, &err), 0);
    assert_int_equal(got, 0);
    assert_int_equal(bytesrc_read(src, buf, sizeof buf, &got, &err), 0);
    bytesrc_close(src);

    src = bytesrc_open(path, &err);
    assert_non_null(src);
    bytesrc_win w;
    assert_int_equal(bytesrc_win_init(&w, 64, &err), 0);
    assert_int_equal(bytesrc_fill(src, &w, 0, 0, &err), 0);
    assert_true(w.eof);
    assert_int_equal(w.len, 0);
    bytesrc_win_finish(&w);
    bytesrc_close(src);

    /* one byte of gzip's magic is not gzip */
    write_file(path, sizeof path, "one.gz", "\x1f", 1);
    src = bytesrc_open(path, &err);
    assert_non_null(src);
    assert_int_equal(bytesrc_is_gzip(src), 0);
    assert_int_equal(bytesrc_read(src, buf, sizeof buf, &got, &err), 1);
    assert_bytes(buf, got, "\x1f");
    bytesrc_close(src);
}

static void test_missing(void **state)
{
    (void)state;
    char path[PATH_MAX];
    int k = snprintf(path, sizeof path, "%s/no/such.json", tmpdir);
    assert_true(k > 0 && (size_t)k < sizeof path);
    tb_error err;
    errno = 0;
    assert_null(bytesrc_open(path, &err));
    assert_int_equal(errno, ENOENT);
    assert_int_equal(err.code, TB_ERR_IO);
    assert_string_equal(err.message, "cannot open: No such file or directory");
    assert_string_equal(err.file, path);
    assert_null(bytesrc_open(path, NULL)); /* err may be NULL */

    /* a directory opens, and its read fails */
    bytesrc *src = bytesrc_open(tmpdir, &err);
    assert_non_null(src);
    char buf[8];
    size_t got;
    assert_int_equal(bytesrc_read(src, buf, sizeof buf, &got, &err), -1);
    assert_int_equal(err.code, TB_ERR_IO);
    assert_string_equal(err.message, "read failed: Is a directory");
    assert_string_equal(err.file, tmpdir);
    bytesrc_close(src);
    bytesrc_close(NULL);
}

static void peek_then_read(const char *path)
{
    tb_error err;
    bytesrc *src = bytesrc_open(path, &err);
    assert_non_null(src);
    const char *head;
    size_t len;
    assert_int_equal(bytesrc_peek(src, 5, &head, &len, &err), 0);
    assert_bytes(head, len, "hello");
    assert_int_equal(head[len], 0);
    assert_i64(0, bytesrc_offset(src));
    /* a larger peek shows more, up to the end */
    assert_int_equal(bytesrc_peek(src, 100, &head, &len, &err), 0);
    assert_bytes(head, len, "hello world\n");
    assert_int_equal(head[len], 0);
    assert_i64(0, bytesrc_offset(src));

    char buf[64];
    size_t got;
    assert_int_equal(bytesrc_read(src, buf, 3, &got, &err), 1);
    assert_bytes(buf, got, "hel");
    assert_i64(3, bytesrc_offset(src));
    /* peeking again shows what is not read yet */
    assert_int_equal(bytesrc_peek(src, 2, &head, &len, &err), 0);
    assert_true(len >= 2);
    assert_memory_equal(head, "lo", 2);
    assert_int_equal(bytesrc_read(src, buf, sizeof buf, &got, &err), 1);
    assert_bytes(buf, got, "lo world\n");
    assert_i64(12, bytesrc_offset(src));
    assert_int_equal(bytesrc_read(src, buf, sizeof buf, &got, &err), 0);
    bytesrc_close(src);

    /* peek, then a window: the window starts at the first byte */
    src = bytesrc_open(path, &err);
    assert_non_null(src);
    assert_int_equal(bytesrc_peek(src, 4, &head, &len, &err), 0);
    assert_bytes(head, len, "hell");
    bytesrc_win w;
    assert_int_equal(bytesrc_win_init(&w, 64, &err), 0);
    size_t total = 0;
    int rc;
    while ((rc = bytesrc_fill(src, &w, 0, 0, &err)) == 1)
        total = w.len;
    assert_int_equal(rc, 0);
    assert_bytes(w.buf, total, "hello world\n");
    bytesrc_win_finish(&w);
    bytesrc_close(src);
}

static void test_peek_then_read(void **state)
{
    (void)state;
    static const char text[] = "hello world\n";
    char path[PATH_MAX];
    write_file(path, sizeof path, "hello.txt", text, sizeof text - 1);
    peek_then_read(path);
    write_gz(path, sizeof path, "hello.txt.gz", text, sizeof text - 1);
    peek_then_read(path);
}

static void test_window_limit(void **state)
{
    (void)state;
    enum { N = 10000 };
    char *text = sample_text(N);
    char path[PATH_MAX];
    write_file(path, sizeof path, "limit.txt", text, N);
    tb_error err;
    bytesrc *src = bytesrc_open(path, &err);
    assert_non_null(src);
    bytesrc_win w;
    assert_int_equal(bytesrc_win_init(&w, 1024, &err), 0);
    /* keep everything: the buffer doubles while the kept bytes are under the limit */
    int rc;
    err.code = TB_OK;
    while ((rc = bytesrc_fill(src, &w, 0, 4096, &err)) == 1)
        assert_true(w.len < w.cap);
    assert_int_equal(rc, BYTESRC_FULL);
    assert_int_equal(err.code, TB_OK); /* the caller names what was too long */
    assert_int_equal(w.cap, 4096);
    assert_int_equal(w.len, 4095);
    assert_memory_equal(w.buf, text, w.len);
    /* dropping bytes makes room again; the offsets follow */
    assert_int_equal(bytesrc_fill(src, &w, 1000, 4096, &err), 1);
    assert_i64(1000, w.base);
    assert_memory_equal(w.buf, text + 1000, w.len);
    /* without a limit it grows */
    while ((rc = bytesrc_fill(src, &w, 0, 0, &err)) == 1)
        ;
    assert_int_equal(rc, 0);
    assert_int_equal(w.len, N - 1000);
    assert_memory_equal(w.buf, text + 1000, w.len);
    assert_true(w.cap > (size_t)N - 1000);
    bytesrc_win_finish(&w);
    bytesrc_close(src);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),         cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_truncated_gzip), cmocka_unit_test(test_corrupt_gzip),
        cmocka_unit_test(test_empty),         cmocka_unit_test(test_missing),
        cmocka_unit_test(test_peek_then_read), cmocka_unit_test(test_window_limit),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
