/* SPDX-License-Identifier: MIT */
/*
 * errors.c - the engine's error record (see include/tracebook/error.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tracebook/error.h"

void tb_error_clear(tb_error *err)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->offset = -1;
}

tb_status tb_error_set(tb_error *err, tb_status code, const char *fmt, ...)
{
    if (!err)
        return code;
    tb_error_clear(err);
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

tb_status tb_error_at(tb_error *err, tb_status code, const char *file, long line, long column, int64_t offset,
                      const char *fmt, ...)
{
    if (!err)
        return code;
    tb_error_clear(err);
    err->code = code;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = line;
    err->column = column;
    err->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

void tb_text_place(const char *text, int64_t off, char *buf, size_t n)
{
    size_t len = strlen(text);
    if (n)
        buf[0] = 0;
    if (off < 0 || (size_t)off > len)
        return;
    size_t start = (size_t)off, end = (size_t)off;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    while (end < len && text[end] != '\n')
        end++;
    long line = 1;
    for (size_t i = 0; i < start; i++)
        line += text[i] == '\n';
    size_t col = 0;
    for (size_t i = start; i < (size_t)off; i++)
        col += ((unsigned char)text[i] & 0xC0) != 0x80;
    snprintf(buf, n, "  %.*s\n  %*s^ line %ld, column %zu\n", (int)(end - start), text + start, (int)col, "", line,
             col + 1);
}

const char *tb_strerror(tb_status code)
{
    switch (code) {
    case TB_OK: return "no error";
    case TB_ERR_USAGE: return "usage error";
    case TB_ERR_IO: return "I/O error";
    case TB_ERR_PARSE: return "malformed input";
    case TB_ERR_TRUNCATED: return "input cut short";
    case TB_ERR_DB: return "database error";
    case TB_ERR_NOMEM: return "out of memory";
    case TB_ERR_NOTFOUND: return "no input found";
    case TB_ERR_INTERNAL: return "internal error";
    }
    return "unknown error";
}

const char *tb_version(void)
{
    return TB_VERSION;
}
