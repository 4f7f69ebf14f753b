/* SPDX-License-Identifier: MIT */
/*
 * slice_args.c - a timeline slice's args as a shape and values, and back
 * (slice_args.h; the format is in docs/schema.md "The args of a slice").
 *
 * The shape is the args object minified, member for member in the input's
 * order: keys and strings, arrays and objects as written, a value the
 * row's columns hold as `$`, any other number as `#` with its raw text in
 * the values (but short ones, kept as written). Neither character can stand outside a string in JSON, so the
 * expansion finds them with a scan that only tracks strings. An object too
 * big for the reader's member list, one holding raw control characters or
 * args that are no object are kept whole, without holes.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/slice_args.h"

static int reserve(slice_buf *b, size_t n);

int slice_buf_add(slice_buf *b, const char *s, size_t n)
{
    if (reserve(b, n))
        return -1;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
    return 0;
}

int slice_buf_int(slice_buf *b, long long v)
{
    char t[24];
    int n = snprintf(t, sizeof t, "%lld", v);
    return slice_buf_add(b, t, (size_t)n);
}

int slice_buf_jstr(slice_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (slice_buf_add(b, "\"", 1))
        return -1;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (slice_buf_add(b, s + run, i - run))
            return -1;
        char e[6] = {'\\', (char)c, 0, 0, 0, 0};
        size_t en = 2;
        if (c < 0x20) {
            memcpy(e, "\\u00", 4);
            e[4] = hex[c >> 4];
            e[5] = hex[c & 15];
            en = 6;
        }
        if (slice_buf_add(b, e, en))
            return -1;
        run = i + 1;
    }
    return slice_buf_add(b, s + run, n - run) || slice_buf_add(b, "\"", 1);
}

void slice_buf_free(slice_buf *b)
{
    free(b->p);
    *b = (slice_buf){0};
}

/* The raw text of a value span (a string's span lacks its quotes). */
static void raw_of(js_span s, const char **p, size_t *n)
{
    *p = s.type == JS_STR ? s.p - 1 : s.p;
    *n = s.type == JS_STR ? s.n + 2 : s.n;
}

/* 1 when the number's text is an integer as the writer writes one (an
 * optional minus, then 0 or up to 18 digits without a leading zero) and
 * its value is v. */
static int plain_int(const char *p, size_t n, int64_t v)
{
    size_t i = n && p[0] == '-';
    if (i == n || n - i > 18 || (p[i] == '0' && n - i > 1) || (i && p[i] == '0'))
        return 0;
    int64_t x = 0;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return 0;
        x = x * 10 + (p[i] - '0');
    }
    return (p[0] == '-' ? -x : x) == v;
}

/* 1 when the member's value is the one the row holds under its key. */
static int held(const js_member *m, const slice_arg *cols, int ncols)
{
    if (m->key.flags & JS_F_ESC)
        return 0;
    for (int i = 0; i < ncols; i++) {
        const slice_arg *c = &cols[i];
        if (c->n != m->key.n || c->key[0] != m->key.p[0] || memcmp(c->key, m->key.p, m->key.n) != 0)
            continue;
        /* only a number written as the writer would write it */
        if (m->val.type == JS_NUM && c->v.type == V_INT) {
            if (plain_int(m->val.p, m->val.n, c->v.i))
                return 1;
        } else if (m->val.type == JS_STR && !(m->val.flags & JS_F_ESC) && c->v.type == V_TEXT) {
            if (c->v.n == m->val.n && memcmp(c->v.s, m->val.p, m->val.n) == 0)
                return 1;
        }
    }
    return 0;
}

/* Room for n more bytes (and a NUL) in b. 0, or -1 out of memory. */
static int reserve(slice_buf *b, size_t n)
{
    if (b->n + n + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static char *put(char *o, const char *s, size_t n)
{
    memcpy(o, s, n);
    return o + n;
}

/*
 * The shape of an args object the member list holds whole. Neither the
 * shape nor the values outgrow the object's text (a value becomes at most
 * as long, keys and separators stay), so both are written into room made
 * once.
 */
static int object_shape(const trace_event *ev, const slice_arg *cols, int ncols, slice_buf *shape,
                        slice_buf *vals)
{
    if (reserve(shape, ev->args.n + 2) || reserve(vals, ev->args.n + 2))
        return -1;
    char *o = shape->p, *v = vals->p;
    *o++ = '{';
    for (int i = 0; i < ev->n_args; i++) {
        const js_member *m = &ev->argv[i];
        const char *p;
        size_t n;
        if (i)
            *o++ = ',';
        raw_of(m->key, &p, &n);
        o = put(o, p, n);
        *o++ = ':';
        if (held(m, cols, ncols)) {
            *o++ = '$';
            continue;
        }
        raw_of(m->val, &p, &n);
        if (m->val.type == JS_NUM && n > SLICE_SHORT_NUM) {
            *o++ = '#';
            if (v > vals->p)
                *v++ = ',';
            v = put(v, p, n);
        } else {
            o = put(o, p, n);
        }
    }
    *o++ = '}';
    *o = 0;
    *v = 0;
    shape->n = (size_t)(o - shape->p);
    vals->n = (size_t)(v - vals->p);
    return 0;
}

int slice_args_shape(trace_event *ev, const slice_arg *cols, int ncols, slice_buf *shape, slice_buf *vals)
{
    shape->n = vals->n = 0;
    if (ev->args.type == JS_NONE)
        return slice_buf_add(shape, SLICE_NO_ARGS, 1);
    if (ev->args_state == 0)
        js_parse_args(ev); /* the members */
    if (ev->args.type == JS_OBJ && ev->args_state == 1 && ev->n_args < JS_MAX_MEMBERS &&
        !(ev->args.flags & JS_F_CTRL))
        return object_shape(ev, cols, ncols, shape, vals);
    /* kept whole; vals is the scratch of the cleaning */
    size_t n;
    const char *raw = js_raw_clean(ev->args, &vals->p, &vals->cap, &n);
    if (!raw || slice_buf_add(shape, raw, n))
        return -1;
    vals->n = 0;
    return 0;
}

/* Appends the next number of vals (from *at), or null when none is left. */
static int next_value(const char *vals, size_t vn, size_t *at, slice_buf *out)
{
    if (*at >= vn)
        return slice_buf_add(out, "null", 4);
    const char *s = vals + *at, *e = memchr(s, ',', vn - *at);
    size_t n = e ? (size_t)(e - s) : vn - *at;
    *at += n + 1;
    return slice_buf_add(out, s, n);
}

int slice_args_expand(const char *shape, size_t sn, const char *vals, size_t vn, slice_arg_fn fn, void *ctx,
                      slice_buf *out)
{
    out->n = 0;
    if (sn == 1 && shape[0] == SLICE_NO_ARGS[0])
        return 0;
    const char *key = "";
    size_t kn = 0, at = 0, run = 0, str = 0;
    int in_str = 0;
    for (size_t i = 0; i < sn; i++) {
        char c = shape[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"') {
                in_str = 0;
                key = shape + str;
                kn = i - str;
            }
            continue;
        }
        if (c == '"') {
            in_str = 1;
            str = i + 1;
            continue;
        }
        if (c != '$' && c != '#')
            continue;
        if (slice_buf_add(out, shape + run, i - run))
            return -1;
        run = i + 1;
        int rc = c == '#' ? next_value(vals, vn, &at, out) : fn(ctx, key, kn, out);
        if (rc < 0 || (rc > 0 && slice_buf_add(out, "null", 4)))
            return -1;
    }
    return slice_buf_add(out, shape + run, sn - run) ? -1 : 1;
}

/* ---- the values as stored: packed numbers ------------------------------------ */

static int put_varint(slice_buf *b, uint64_t x)
{
    char t[10];
    size_t n = 0;
    do {
        t[n++] = (char)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
        x >>= 7;
    } while (x);
    return slice_buf_add(b, t, n);
}

/* The varint at *p (before e) into *x; 0, or -1 when malformed. */
static int get_varint(const unsigned char **p, const unsigned char *e, uint64_t *x)
{
    uint64_t v = 0;
    for (int sh = 0; *p < e && sh < 64; sh += 7) {
        unsigned char c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << sh;
        if (!(c & 0x80)) {
            *x = v;
            return 0;
        }
    }
    return -1;
}

static uint64_t zigzag(int64_t v)
{
    return v < 0 ? ((uint64_t)(-(v + 1)) << 1) | 1 : (uint64_t)v << 1;
}

static int64_t unzigzag(uint64_t z)
{
    return z & 1 ? -(int64_t)(z >> 1) - 1 : (int64_t)(z >> 1);
}

/*
 * The number text p (n bytes) as a mantissa and count of digits after the
 * point, when it is -?(0|[1-9][0-9]*)(.[0-9]+)? with at most 18 digits and
 * not negative zero, so that both give back the same text. 1, or 0.
 */
static int decimal_of(const char *p, size_t n, int64_t *m, int *scale)
{
    size_t i = n && p[0] == '-', digits = 0;
    int64_t x = 0;
    int dot = -1;
    if (i == n || (p[i] == '0' && i + 1 < n && p[i + 1] != '.'))
        return 0;
    for (size_t k = i; k < n; k++) {
        if (p[k] == '.' && dot < 0 && k > i && k + 1 < n) {
            dot = (int)(n - k - 1);
            continue;
        }
        if (p[k] < '0' || p[k] > '9' || ++digits > 18)
            return 0;
        x = x * 10 + (p[k] - '0');
    }
    if (i && x == 0)
        return 0;
    *m = i ? -x : x;
    *scale = dot < 0 ? 0 : dot;
    return 1;
}

int slice_vals_pack(const char *vals, size_t vn, slice_buf *out)
{
    out->n = 0;
    for (size_t at = 0; at < vn;) {
        const char *s = vals + at, *e = memchr(s, ',', vn - at);
        size_t n = e ? (size_t)(e - s) : vn - at;
        at += n + 1;
        int64_t m;
        int scale;
        int rc;
        if (!decimal_of(s, n, &m, &scale))
            rc = put_varint(out, (uint64_t)n << 2 | 2) || slice_buf_add(out, s, n);
        else if (scale == 0)
            rc = put_varint(out, zigzag(m) << 2);
        else
            rc = put_varint(out, zigzag(m) << 2 | 1) || slice_buf_add(out, (const char[]){(char)scale}, 1);
        if (rc)
            return -1;
    }
    return 0;
}

/* Appends mantissa m with scale digits after the point. */
static int put_decimal(slice_buf *b, int64_t m, int scale)
{
    char t[24], o[48];
    uint64_t u = m < 0 ? (uint64_t)0 - (uint64_t)m : (uint64_t)m;
    int n = snprintf(t, sizeof t, "%llu", (unsigned long long)u), k = 0;
    if (m < 0)
        o[k++] = '-';
    if (n <= scale) /* below 1: the integer part is 0 */
        o[k++] = '0';
    int lead = n > scale ? n - scale : 0;
    memcpy(o + k, t, (size_t)lead);
    k += lead;
    if (scale) {
        o[k++] = '.';
        int pad = n < scale ? scale - n : 0;
        memset(o + k, '0', (size_t)pad);
        k += pad;
        memcpy(o + k, t + lead, (size_t)(n - lead));
        k += n - lead;
    }
    return slice_buf_add(b, o, (size_t)k);
}

int slice_vals_unpack(const unsigned char *p, size_t n, slice_buf *out)
{
    out->n = 0;
    const unsigned char *e = p + n;
    while (p < e) {
        uint64_t h;
        if (get_varint(&p, e, &h))
            break;
        if ((h & 3) == 2 && (h >> 2) > (uint64_t)(e - p))
            break;
        if ((h & 3) == 1 && (p == e || *p < 1 || *p > 18))
            break;
        if ((h & 3) == 3)
            break;
        if (out->n && slice_buf_add(out, ",", 1))
            return -1;
        int rc;
        if ((h & 3) == 2) {
            rc = slice_buf_add(out, (const char *)p, (size_t)(h >> 2));
            p += h >> 2;
        } else {
            rc = put_decimal(out, unzigzag(h >> 2), (h & 3) == 1 ? *p++ : 0);
        }
        if (rc)
            return -1;
    }
    return 0;
}
