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
