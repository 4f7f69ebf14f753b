/* SPDX-License-Identifier: MIT */
/*
 * text.c - what every writer shares about the text it writes and the sinks
 * it makes.
 *
 * utf8_seq() tells a valid UTF-8 sequence from an invalid one, so that the
 * CSV, JSON, console and XLSX writers all replace the same bytes with
 * U+FFFD; sink_written() and sink_destroy() serve the out_sink head that
 * every sink of this folder starts with.
 */
#include <stddef.h>

#include "output/output.h"

int utf8_seq(const char *p, size_t n, size_t *len)
{
    const unsigned char *s = (const unsigned char *)p;
    unsigned b = s[0];
    if (b < 0x80) {
        *len = 1;
        return 1;
    }
    size_t need;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range (Unicode table 3-7) */
    if (b >= 0xC2 && b <= 0xDF)
        need = 2;
    else if (b >= 0xE0 && b <= 0xEF) {
        need = 3;
        if (b == 0xE0)
            lo = 0xA0;
        else if (b == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 4;
        if (b == 0xF0)
            lo = 0x90;
        else if (b == 0xF4)
            hi = 0x8F; /* nothing past U+10FFFF */
    } else {
        *len = 1;
        return 0;
    }
    for (size_t k = 1; k < need; k++) {
        unsigned c = k < n ? s[k] : 0;
        if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) {
            *len = k; /* the maximal invalid subpart: one U+FFFD for all of it */
            return 0;
        }
    }
    *len = need;
    return 1;
}

size_t sink_written(const tb_sink *s, const char *const **paths)
{
    const out_sink *o = (const out_sink *)s;
    *paths = (const char *const *)o->written;
    return o->n_written;
}

void sink_destroy(tb_sink *s)
{
    if (s)
        s->destroy(s);
}

void json_string_out(const char *s, size_t n, void (*put)(void *ctx, const char *p, size_t n), void *ctx)
{
    static const char hex[] = "0123456789abcdef";
    if (n == 0) {
        put(ctx, "\"\"", 2); /* s may be NULL */
        return;
    }
    put(ctx, "\"", 1);
    size_t from = 0, i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        size_t len = 1;
        if (c >= 0x80 && utf8_seq(s + i, n - i, &len)) {
            i += len;
            continue;
        }
        put(ctx, s + from, i - from);
        switch (c) {
        case '"': put(ctx, "\\\"", 2); break;
        case '\\': put(ctx, "\\\\", 2); break;
        case '\n': put(ctx, "\\n", 2); break;
        case '\r': put(ctx, "\\r", 2); break;
        case '\t': put(ctx, "\\t", 2); break;
        case '\b': put(ctx, "\\b", 2); break;
        case '\f': put(ctx, "\\f", 2); break;
        default:
            if (c < 0x20) {
                char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                put(ctx, u, 6);
            } else {
                put(ctx, "\xEF\xBF\xBD", 3); /* U+FFFD */
            }
        }
        i += len;
        from = i;
    }
    put(ctx, s + from, n - from);
    put(ctx, "\"", 1);
}
