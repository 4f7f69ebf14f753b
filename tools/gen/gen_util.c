/* SPDX-License-Identifier: MIT */
/*
 * gen_util.c - tracebook-gen's shared helpers: the output buffer behind
 * every file it writes, integer formatting (no floating point, so the bytes
 * are the same with every libc), ev(), which writes or only counts one trace
 * event, and the growable arrays a step fills (device intervals, forward ops,
 * kernel_details rows). Used by every --kind; see gen.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* ------------------------------------------------------------------------ */
/* Output: a private buffer flushed with fwrite.                           */

static void out_flush(struct out *o)
{
    if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len)
        o->err = 1;
    o->len = 0;
}

void out_put(struct out *o, const char *s, size_t n)
{
    if (n > OBUF_CAP - o->len) {
        out_flush(o);
        if (n > OBUF_CAP) {
            if (fwrite(s, 1, n, o->f) != n)
                o->err = 1;
            return;
        }
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

void out_str(struct out *o, const char *s) { out_put(o, s, strlen(s)); }

/* Opens path for writing ('-': standard output) behind o's buffer. */
int out_open(struct out *o, const char *path)
{
    o->f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
    if (!o->f) {
        fprintf(stderr, "tracebook-gen: error: cannot open '%s': %s\n", path, strerror(errno));
        return 0;
    }
    if (!o->buf) {
        o->buf = malloc(OBUF_CAP);
        if (!o->buf)
            die_oom();
    }
    o->len = 0;
    o->err = 0;
    return 1;
}

/* Flushes and closes o; EXIT_OK, or EXIT_IO with a message. */
int out_close(struct out *o, const char *path)
{
    int bad;

    out_flush(o);
    bad = o->err || ferror(o->f);
    if (o->f != stdout)
        bad |= fclose(o->f) != 0;
    else
        bad |= fflush(o->f) != 0;
    o->f = NULL;
    if (bad) {
        fprintf(stderr, "tracebook-gen: error: cannot write '%s': %s\n", path, strerror(errno));
        return EXIT_IO;
    }
    return EXIT_OK;
}

size_t fmt_u(char *p, uint64_t v)
{
    char t[24];
    size_t n = 0, i;

    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (i = 0; i < n; i++)
        p[i] = t[n - 1 - i];
    return n;
}

/* v / 10^dec with dec decimals; trim drops trailing zeros but keeps one. */
size_t fmt_fixed(char *p, uint64_t v, unsigned dec, int trim)
{
    uint64_t div = 1;
    size_t n;
    unsigned i;

    for (i = 0; i < dec; i++)
        div *= 10;
    n = fmt_u(p, v / div);
    p[n++] = '.';
    v %= div;
    for (i = dec; i-- > 0;) {
        p[n + i] = (char)('0' + v % 10);
        v /= 10;
    }
    n += dec;
    if (trim)
        while (dec-- > 1 && p[n - 1] == '0')
            n--;
    return n;
}

/* ------------------------------------------------------------------------ */
/* Growable arrays.                                                        */

_Noreturn void die_oom(void)
{
    fputs("tracebook-gen: error: out of memory\n", stderr);
    exit(EXIT_IO);
}

void iv_push(struct ivec *v, uint64_t a, uint64_t b)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        struct ival *p = realloc(v->v, cap * sizeof *p);
        if (!p)
            die_oom();
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n].a = a;
    v->v[v->n].b = b;
    v->n++;
}

void fw_push(struct gen *g, uint64_t ts, uint64_t seq)
{
    if (g->nfw == g->capfw) {
        size_t cap = g->capfw ? g->capfw * 2 : 64;
        struct fwrec *p = realloc(g->fw, cap * sizeof *p);
        if (!p)
            die_oom();
        g->fw = p;
        g->capfw = cap;
    }
    g->fw[g->nfw].ts = ts;
    g->fw[g->nfw].seq = seq;
    g->nfw++;
}

/* A kernel_details row for a task or an HCCL op just written (torch_npu_dir). */
struct krow *krow_push(struct gen *g)
{
    struct krow *r;

    if (g->nrows == g->caprows) {
        size_t cap = g->caprows ? g->caprows * 2 : 256;
        struct krow *p = realloc(g->rows, cap * sizeof *p);
        if (!p)
            die_oom();
        g->rows = p;
        g->caprows = cap;
    }
    r = &g->rows[g->nrows];
    memset(r, 0, sizeof *r);
    r->ord = g->nrows++;
    return r;
}

/* ------------------------------------------------------------------------ */
/* Trace events.                                                           */

/*
 * Writes one trace event (or only counts it in a dry run). fmt is literal
 * JSON with conversions taking a uint64_t (%u; %d as int64_t; %t ns as µs
 * with exactly 3 decimals; %T ns as µs, trailing zeros trimmed; %M millionths
 * trimmed) or a const char * (%s, written unescaped); %% is a percent sign.
 * Returns 1 when the event was written, 0 when only counted or dropped.
 */
int ev(struct gen *g, const char *fmt, ...)
{
    va_list ap;
    const char *p, *q;
    char num[48];
    uint64_t v;

    if (g->dry) {
        g->n++;
        return 0;
    }
    if (g->n >= g->events)
        return 0;           /* only the metadata tail can run past --events */
    if (g->n++)
        out_put(&g->o, ",\n", 2);
    va_start(ap, fmt);
    for (p = fmt; *p; p = q + 2) {
        q = strchr(p, '%');
        if (!q) {
            out_str(&g->o, p);
            break;
        }
        out_put(&g->o, p, (size_t)(q - p));
        switch (q[1]) {
        case 's':
            out_str(&g->o, va_arg(ap, const char *));
            break;
        case 'u':
            out_put(&g->o, num, fmt_u(num, va_arg(ap, uint64_t)));
            break;
        case 'd':
            v = va_arg(ap, uint64_t);
            if ((int64_t)v < 0) {
                out_put(&g->o, "-", 1);
                v = (uint64_t)0 - v;
            }
            out_put(&g->o, num, fmt_u(num, v));
            break;
        case 't':
            out_put(&g->o, num, fmt_fixed(num, va_arg(ap, uint64_t), 3, 0));
            break;
        case 'T':
            out_put(&g->o, num, fmt_fixed(num, va_arg(ap, uint64_t), 3, 1));
            break;
        case 'M':
            out_put(&g->o, num, fmt_fixed(num, va_arg(ap, uint64_t), 6, 1));
            break;
        case '%':
            out_put(&g->o, "%", 1);
            break;
        default:
            assert(0 && "bad conversion");
        }
    }
    va_end(ap);
    return 1;
}
