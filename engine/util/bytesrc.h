/* SPDX-License-Identifier: MIT */
/*
 * bytesrc.h - one plain-or-gzip byte source for every reader (private to the engine).
 *
 * Every streaming reader (the trace tokenizer, the CSV reader, the topsprof
 * line reader) and every sniffer needs the same things from a file: open it,
 * decompress it when it is gzip (told by its magic bytes, never by its name),
 * read it in large chunks, know how far it got in the decompressed text (for
 * error offsets) and in the file itself (for progress against the file's
 * size), and report a read error, corrupt compressed data or a gzip stream
 * that stops early as such, naming the file. This is that code, once.
 *
 * Plain files are read with read(2) straight into the caller's memory, so the
 * hot path (the tokenizer) copies nothing; gzip files go through zlib.
 *
 * Two ways to read:
 *   - bytesrc_read() fills caller memory, as read(2) does;
 *   - bytesrc_fill() keeps a sliding window (bytesrc_win, caller-owned) that
 *     readers parse in place: it slides the bytes still needed to the front,
 *     doubles the buffer only when they fill all of it, and reads more.
 * bytesrc_peek() shows the first bytes without consuming them (for sniffing);
 * later reads return them first.
 *
 * Typical use:
 *
 *     bytesrc *src = bytesrc_open(path, err);
 *     bytesrc_win w;
 *     if (!src || bytesrc_win_init(&w, 1u << 20, err)) ...
 *     while ((rc = bytesrc_fill(src, &w, consumed, 0, err)) == 1)
 *         ... parse w.buf[0 .. w.len) ...
 *     bytesrc_win_finish(&w);
 *     bytesrc_close(src);
 */
#ifndef TB_UTIL_BYTESRC_H
#define TB_UTIL_BYTESRC_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"

typedef struct bytesrc bytesrc;

/*
 * Opens path for reading: gzip when its first two bytes are gzip's magic
 * (1f 8b), else plain. Returns new (free with bytesrc_close), or NULL with
 * err set (`cannot open: <reason>`, naming the file; err may be NULL) and
 * errno kept from the failed call.
 */
bytesrc *bytesrc_open(const char *path, tb_error *err);

/* Closes the file and frees the source; accepts NULL. */
void bytesrc_close(bytesrc *src);

/* The path the source was opened with (borrowed: valid until bytesrc_close). */
const char *bytesrc_path(const bytesrc *src);

/* 1 when the file is gzip. */
int bytesrc_is_gzip(const bytesrc *src);

/*
 * Reads up to n (> 0) decompressed bytes into buf. Returns 1 with *got > 0, 0 at
 * the end of the input (*got 0), or -1 with err set (file and the
 * decompressed offset where it stopped): TB_ERR_IO `read failed: <reason>`,
 * TB_ERR_PARSE `corrupt compressed data: <reason>`, TB_ERR_TRUNCATED
 * `compressed input cut short (the gzip stream ends early)`, TB_ERR_NOMEM.
 * Once it failed, every later call returns -1 with the same error.
 */
int bytesrc_read(bytesrc *src, void *buf, size_t n, size_t *got, tb_error *err);

/*
 * Makes the first n bytes of what is not read yet visible without consuming
 * them: *head (borrowed: valid until the next call on src) gets them, *len
 * how many there are (fewer at the end of the input, more when an earlier
 * peek asked for more), and a NUL byte follows
 * them, so a sniffer may search them as a string. The next reads return the
 * same bytes first. Returns 0, or -1 with err set as bytesrc_read; *head and
 * *len then still show the bytes that came before the error (the head of a
 * gzip stream cut short, say), and reads return them before the error.
 */
int bytesrc_peek(bytesrc *src, size_t n, const char **head, size_t *len, tb_error *err);

/* Decompressed bytes consumed so far (peeked bytes not counted). */
int64_t bytesrc_offset(const bytesrc *src);

/* Bytes of the file itself read so far (compressed for gzip). */
int64_t bytesrc_raw_offset(const bytesrc *src);

/*
 * A gzip file read to its end: the byte offset in the file where bytes that
 * are no gzip member follow the last member (zlib skips them quietly),
 * -1 when none (or not known: not gzip, not read to the end).
 */
int64_t bytesrc_trailing(const bytesrc *src);

/* Size of the file itself (compressed for gzip) when it was opened, -1 when unknown. */
int64_t bytesrc_raw_size(const bytesrc *src);

/*
 * A sliding window over a source, in caller memory. Its fields are read
 * directly by the reader's parser (the hot path calls no function here).
 */
typedef struct bytesrc_win {
    char *buf;     /* owned by the window (free with bytesrc_win_finish) */
    size_t cap;    /* size of buf; cap > len always, so buf[len] may take a NUL */
    size_t len;    /* bytes in buf */
    int64_t base;  /* decompressed offset of buf[0] */
    int eof;       /* the source has no more bytes */
} bytesrc_win;

/* Sets up an empty window of cap bytes (at least 2). Returns 0, or -1 with err set (out of memory). */
int bytesrc_win_init(bytesrc_win *w, size_t cap, tb_error *err);

/* Frees the window's buffer; the struct itself is the caller's. */
void bytesrc_win_finish(bytesrc_win *w);

/*
 * Drops w->buf[0 .. keep) (the bytes before keep slide out: w->base grows by
 * keep, every index into buf moves down by keep), doubles the buffer when
 * what remains fills it, and reads more from src. Returns 1 when bytes were
 * added, 0 at the end of the input (w->eof set), -1 with err set as
 * bytesrc_read (or out of memory), or BYTESRC_FULL when what remains fills
 * the buffer and the buffer may not grow beyond max bytes (max 0: no limit;
 * err untouched, the caller names what was too long). Requires keep <= w->len.
 */
int bytesrc_fill(bytesrc *src, bytesrc_win *w, size_t keep, size_t max, tb_error *err);

enum { BYTESRC_FULL = -2 };

#endif
