/* SPDX-License-Identifier: MIT */
/*
 * jstream.c - streaming Chrome-trace tokenizer.
 *
 * The reader keeps a window of the (decompressed) input in one buffer. Each
 * event object is parsed from that window by a small recursive-descent parser
 * that returns MORE when the object runs past the bytes read so far; the
 * reader then slides the window (keeping the object's start), reads more and
 * parses the object again. Restarts happen once per buffer refill, so their
 * cost is negligible, and the buffer only grows when a single event is larger
 * than it. Newlines in the bytes that slide out are counted so that an error
 * can name its line and column without a second pass.
 */
#define _POSIX_C_SOURCE 200809L
#include "util/jstream.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "util/bytesrc.h"

#define JS_INITIAL_CAP (1u << 20)
#define JS_MAX_DEPTH 256

enum { P_OK = 0, P_MORE, P_ERR };

enum { ST_START, ST_EVENTS, ST_TOPOBJ, ST_DONE };

struct jstream {
    bytesrc *src;            /* the file, plain or gzip */
    bytesrc_win win;         /* the window being parsed; win.base is the offset of win.buf[0] */
    size_t pos;              /* next byte to look at in win.buf */
    int state;
    int top_is_object;
    long base_line;          /* newlines before buf[0] */
    int64_t last_nl_abs;     /* absolute offset just after the last newline before buf[0] */
    int64_t stop_offset;
    int first_in_array;      /* no element read yet in the current array/object */
    size_t max_item;         /* the window never grows beyond this: one item's bytes at most */
};

/* Parser over a complete-or-partial window. */
typedef struct pstate {
    const char *p, *end;
    int status;
    const char *errp;
    const char *errmsg;
    int depth;
} pstate;

/* Byte classes for the string scanner: 1 = stop (quote, backslash, control).
 * Constant, so readers on several threads share it safely. */
static const unsigned char str_stop[256] = {
    [0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1, [0x07] = 1,
    [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1, [0x0e] = 1, [0x0f] = 1,
    [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1,
    [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1,
    ['"'] = 1, ['\\'] = 1,
};

static int fail(pstate *ps, const char *at, const char *msg)
{
    if (ps->status == P_OK) {
        ps->status = P_ERR;
        ps->errp = at;
        ps->errmsg = msg;
    }
    return -1;
}

static int more(pstate *ps)
{
    if (ps->status == P_OK)
        ps->status = P_MORE;
    return -1;
}

/* JSON's four blanks as bits of a 64-bit mask indexed by the byte. */
#define WS_BITS ((1ULL << ' ') | (1ULL << '\n') | (1ULL << '\r') | (1ULL << '\t'))
static inline int is_ws(char c)
{
    return (unsigned char)c <= ' ' && ((WS_BITS >> (unsigned char)c) & 1u);
}

/* Most calls stand on a byte that is no blank: one compare decides them. */
static inline void skip_ws(pstate *ps)
{
    const char *p = ps->p, *e = ps->end;
    while (p < e && is_ws(*p))
        p++;
    ps->p = p;
}

/* Returns the first quote, backslash or control character in [p, e), or e. */
static inline const char *scan_string(const char *p, const char *e)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1F);
    while (e - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                                 _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x)); /* x <= 0x1F */
        int mask = _mm_movemask_epi8(m);
        if (mask)
            return p + __builtin_ctz((unsigned)mask);
        p += 16;
    }
#endif
    while (p < e && !str_stop[(unsigned char)*p])
        p++;
    return p;
}

/* Parses a string starting at '"'; fills s (without quotes). */
static int parse_string(pstate *ps, js_span *s)
{
    const char *p = ps->p + 1, *e = ps->end;
    unsigned flags = 0;
    const char *start = p;
    for (;;) {
        p = scan_string(p, e);
        if (p >= e)
            return more(ps);
        char c = *p;
        if (c == '"')
            break;
        if (c == '\\') {
            flags |= JS_F_ESC;
            if (p + 1 >= e)
                return more(ps);
            char n = p[1];
            if (n == 'u') {
                if (p + 6 > e)
                    return more(ps);
                for (int i = 2; i < 6; i++) {
                    char h = p[i];
                    if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
                        return fail(ps, p, "bad \\u escape in string");
                }
                p += 6;
            } else if (n == '"' || n == '\\' || n == '/' || n == 'b' || n == 'f' || n == 'n' ||
                       n == 'r' || n == 't') {
                p += 2;
            } else {
                return fail(ps, p, "bad escape in string");
            }
            continue;
        }
        /* raw control character: tolerated (real traces have them) */
        flags |= JS_F_CTRL;
        p++;
    }
    s->p = start;
    s->n = (size_t)(p - start);
    s->type = JS_STR;
    s->flags = flags;
    ps->p = p + 1;
    return 0;
}

/* An object member's key and the ':' after it; ps->p is at the key. */
static inline int parse_key(pstate *ps, js_span *k)
{
    if (*ps->p != '"')
        return fail(ps, ps->p, "expected a string key");
    if (parse_string(ps, k))
        return -1;
    skip_ws(ps);
    if (ps->p >= ps->end)
        return more(ps);
    if (*ps->p != ':')
        return fail(ps, ps->p, "expected ':'");
    ps->p++;
    return 0;
}

/*
 * A key as profilers write it: no escape or control character, shorter than
 * PLAIN_KEY_MAX bytes, the ':' right after the closing quote, and at least
 * PLAIN_KEY_MAX + 2 bytes after the opening quote in the window. Read without
 * the general string scan; returns 0 for anything else (nothing consumed),
 * which parse_key then reads as before, errors included.
 */
#define PLAIN_KEY_MAX 24
static inline int plain_key(pstate *ps, js_span *k)
{
    const char *p = ps->p + 1, *e = ps->end;
    if (ps->p[0] != '"' || e - p < PLAIN_KEY_MAX + 2)
        return 0;
    e = p + PLAIN_KEY_MAX;
    const char *q = scan_string(p, e); /* one 16-byte compare for the usual short key */
    if (q == e || *q != '"' || q[1] != ':')
        return 0;
    k->p = p;
    k->n = (size_t)(q - p);
    k->type = JS_STR;
    k->flags = 0;
    ps->p = q + 2;
    return 1;
}

/*
 * How many of the eight bytes at p are ASCII digits before the first that
 * is none (8 when all are). Per byte, the high nibble must be 3 and the low
 * one at most 9 (adding 6 keeps it below 16); a carry out of a byte that is
 * no digit only reaches the bytes after it. Little-endian machines; 0
 * elsewhere (the caller then reads digit by digit).
 */
static inline int digit_run8(const char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    uint64_t bad = ((v & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL) |
                   (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL);
    return bad ? __builtin_ctzll(bad) >> 3 : 8;
#else
    (void)p;
    return 0;
#endif
}

static int parse_number(pstate *ps, js_span *s)
{
    const char *p = ps->p, *e = ps->end, *start = p;
    if (p < e && *p == '-')
        p++;
    if (p >= e)
        return more(ps);
    if (*p < '0' || *p > '9')
        return fail(ps, start, "bad number");
    for (int k = 8; k == 8 && e - p >= 8;) {
        k = digit_run8(p);
        p += k;
    }
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    if (p < e && *p == '.') {
        p++;
        const char *d = p;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
        if (p < e && p == d)
            return fail(ps, start, "bad number");
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        const char *d = p;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
        if (p < e && p == d)
            return fail(ps, start, "bad number");
    }
    if (p >= e)
        return more(ps); /* a number may continue in the next bytes */
    s->p = start;
    s->n = (size_t)(p - start);
    s->type = JS_NUM;
    s->flags = 0;
    ps->p = p;
    return 0;
}

static int parse_literal(pstate *ps, const char *word, int type, js_span *s)
{
    size_t n = strlen(word);
    const char *p = ps->p;
    size_t avail = (size_t)(ps->end - p);
    if (memcmp(p, word, avail < n ? avail : n) != 0)
        return fail(ps, p, "unexpected character");
    if (avail < n)
        return more(ps);
    s->p = p;
    s->n = n;
    s->type = type;
    s->flags = 0;
    ps->p = p + n;
    return 0;
}

static inline int parse_value(pstate *ps, js_span *s);

/*
 * The step after a member or an element: blanks, then either a ',' and the
 * blanks after it (1: another item follows) or the closer, consumed (0).
 * -1 when the bytes end first (more) or anything else stands there (msg).
 */
static inline int after_item(pstate *ps, char close, const char *msg)
{
    const char *p = ps->p;
    if (ps->end - p >= 3 && p[0] == ',') {
        /* the usual "," or ", " before the next item: no blank scan */
        const char *q = p + 1 + (p[1] == ' ');
        if ((unsigned char)*q > ' ') {
            ps->p = q;
            return 1;
        }
    }
    skip_ws(ps);
    if (ps->p >= ps->end)
        return more(ps);
    if (*ps->p == ',') {
        ps->p++;
        skip_ws(ps);
        return ps->p < ps->end ? 1 : more(ps);
    }
    if (*ps->p == close) {
        ps->p++;
        return 0;
    }
    return fail(ps, ps->p, msg);
}

/* Parses an object or array starting at '{' or '['; s spans the raw text. */
static int parse_container(pstate *ps, js_span *s)
{
    const char *start = ps->p;
    char open = *start, close = open == '{' ? '}' : ']';
    unsigned flags = 0;
    if (++ps->depth > JS_MAX_DEPTH)
        return fail(ps, start, "nesting too deep");
    ps->p++;
    skip_ws(ps);
    if (ps->p >= ps->end)
        return more(ps);
    if (*ps->p == close) {
        ps->p++;
    } else {
        for (;;) {
            js_span v;
            if (open == '{') {
                if (parse_key(ps, &v))
                    return -1;
                flags |= v.flags;
                skip_ws(ps);
            }
            if (parse_value(ps, &v))
                return -1;
            flags |= v.flags;
            int r = after_item(ps, close, open == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
            if (r < 0)
                return -1;
            if (r == 0)
                break;
        }
    }
    ps->depth--;
    s->p = start;
    s->n = (size_t)(ps->p - start);
    s->type = open == '{' ? JS_OBJ : JS_ARR;
    s->flags = flags;
    return 0;
}

/* A value other than a string or a number: a container, a literal or an error. */
static int parse_value_other(pstate *ps, js_span *s)
{
    switch (*ps->p) {
    case '{':
    case '[':
        return parse_container(ps, s);
    case 't':
        return parse_literal(ps, "true", JS_TRUE, s);
    case 'f':
        return parse_literal(ps, "false", JS_FALSE, s);
    case 'n':
        return parse_literal(ps, "null", JS_NULL, s);
    default:
        return fail(ps, ps->p, "unexpected character");
    }
}

/*
 * Inline for the values nearly every member has: a string closed within the
 * window with no escape or control character is read by one scan (anything
 * else goes through parse_string, errors included), a number by
 * parse_number; the rest out of line. Blanks before it are skipped already.
 */
static inline int parse_value_at(pstate *ps, js_span *s)
{
    if (ps->p >= ps->end)
        return more(ps);
    char c = *ps->p;
    if (c == '"') {
        const char *p = ps->p + 1, *q = scan_string(p, ps->end);
        if (q < ps->end && *q == '"') {
            s->p = p;
            s->n = (size_t)(q - p);
            s->type = JS_STR;
            s->flags = 0;
            ps->p = q + 1;
            return 0;
        }
        return parse_string(ps, s);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return parse_number(ps, s);
    return parse_value_other(ps, s);
}

/* A value after blanks. */
static inline int parse_value(pstate *ps, js_span *s)
{
    skip_ws(ps);
    return parse_value_at(ps, s);
}

/* Parses the args object of an event, keeping its members for js_arg. */
static int parse_args_inline(pstate *ps, trace_event *ev, js_span *s)
{
    const char *start = ps->p;
    unsigned flags = 0;
    ev->n_args = 0;
    if (++ps->depth > JS_MAX_DEPTH)
        return fail(ps, start, "nesting too deep");
    ps->p++;
    skip_ws(ps);
    if (ps->p >= ps->end)
        return more(ps);
    if (*ps->p == '}') {
        ps->p++;
    } else {
        for (;;) {
            js_span k, v;
            if (!plain_key(ps, &k) && parse_key(ps, &k))
                return -1;
            if (parse_value(ps, &v))
                return -1;
            flags |= k.flags | v.flags;
            if (ev->n_args < JS_MAX_MEMBERS) {
                ev->argv[ev->n_args].key = k;
                ev->argv[ev->n_args].val = v;
                ev->n_args++;
            }
            int r = after_item(ps, '}', "expected ',' or '}'");
            if (r < 0)
                return -1;
            if (r == 0)
                break;
        }
    }
    ps->depth--;
    s->p = start;
    s->n = (size_t)(ps->p - start);
    s->type = JS_OBJ;
    s->flags = flags;
    ev->args_state = 1;
    return 0;
}

static int key_is(const js_span *k, const char *lit, size_t n)
{
    return k->n == n && memcmp(k->p, lit, n) == 0;
}
#define KEY_IS(k, lit) key_is((k), lit, sizeof(lit) - 1)

static int span_time(const js_span *v, int64_t *out)
{
    if (v->type == JS_NUM || v->type == JS_STR) {
        const char *p = v->p;
        size_t n = v->n;
        /* msprof appends TABs or spaces to string times: ignore them */
        while (n && (p[n - 1] == '\t' || p[n - 1] == ' '))
            n--;
        while (n && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        return js_us_to_ns(p, n, out);
    }
    return -1;
}

/*
 * Clears an event's members before argv, field by field: a memset of the
 * whole ~240 bytes compiles to `rep stos`, whose start-up cost showed in the
 * profile of every event. Padding stays as it was; nothing reads it.
 */
_Static_assert(offsetof(trace_event, argv) - (1 + 8 * sizeof(js_span) + 5 * sizeof(int) + 3 * sizeof(int64_t)) <
                   2 * _Alignof(js_member),
               "event_clear must clear every member of trace_event before argv");
static inline void event_clear(trace_event *ev)
{
    const js_span none = {0};
    ev->ph = 0;
    ev->name = ev->cat = ev->id = ev->bp = none;
    ev->scope = ev->pid = ev->tid = ev->args = none;
    ev->has_ts = ev->has_dur = 0;
    ev->ts_ns = ev->dur_ns = ev->offset = 0;
    ev->n_keys = ev->args_state = ev->n_args = 0;
}

/* Parses one event object at ps->p ('{'). */
static int parse_event(pstate *ps, trace_event *ev)
{
    event_clear(ev);
    ps->p++;
    skip_ws(ps);
    if (ps->p >= ps->end)
        return more(ps);
    if (*ps->p == '}') {
        ps->p++;
        return 0;
    }
    for (;;) {
        js_span k, v;
        if (!plain_key(ps, &k) && parse_key(ps, &k))
            return -1;
        const char *vstart;
        skip_ws(ps);
        vstart = ps->p;
        if (k.n == 4 && vstart < ps->end && *vstart == '{' && memcmp(k.p, "args", 4) == 0) {
            if (parse_args_inline(ps, ev, &v))
                return -1;
        } else if (parse_value_at(ps, &v)) {
            return -1;
        }
        ev->n_keys++;
        switch (k.n) {
        case 2:
            if (KEY_IS(&k, "ph")) {
                if (v.type == JS_STR && v.n > 0)
                    ev->ph = v.p[0];
            } else if (KEY_IS(&k, "ts")) {
                /* a number beyond int64 ns saturates: the importer skips it with the
                 * other times outside +-2^62 ns (docs/inputs.md) */
                if (span_time(&v, &ev->ts_ns) < 0)
                    return fail(ps, vstart, "'ts' is not a number");
                ev->has_ts = 1;
            } else if (KEY_IS(&k, "id")) {
                ev->id = v;
            } else if (KEY_IS(&k, "bp")) {
                ev->bp = v;
            }
            break;
        case 3:
            if (KEY_IS(&k, "pid"))
                ev->pid = v;
            else if (KEY_IS(&k, "tid"))
                ev->tid = v;
            else if (KEY_IS(&k, "cat"))
                ev->cat = v;
            else if (KEY_IS(&k, "dur")) {
                if (v.type != JS_NULL) {
                    if (span_time(&v, &ev->dur_ns) < 0)
                        return fail(ps, vstart, "'dur' is not a number");
                    ev->has_dur = 1;
                }
            }
            break;
        case 4:
            if (KEY_IS(&k, "name"))
                ev->name = v;
            else if (KEY_IS(&k, "args"))
                ev->args = v;
            break;
        case 1:
            if (KEY_IS(&k, "s"))
                ev->scope = v;
            break;
        default:
            break;
        }
        int r = after_item(ps, '}', "expected ',' or '}'");
        if (r < 0)
            return -1;
        if (r == 0)
            break;
    }
    return 0;
}

int js_parse_event_at(const char *p, const char *end, trace_event *ev, const char **next)
{
    pstate ps = {.p = p, .end = end};
    if (p >= end || *p != '{')
        return 0;
    parse_event(&ps, ev);
    if (ps.status != P_OK)
        return 0;
    *next = ps.p;
    return 1;
}

jstream *js_open(const char *path, tb_error *err)
{
    jstream *js = calloc(1, sizeof *js);
    if (!js) {
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (bytesrc_win_init(&js->win, JS_INITIAL_CAP, err) || !(js->src = bytesrc_open(path, err))) {
        js_close(js);
        return NULL;
    }
    js->stop_offset = -1;
    js->max_item = JS_MAX_ITEM;
    return js;
}

void js_set_max_item(jstream *js, size_t bytes)
{
    js->max_item = bytes ? bytes : JS_MAX_ITEM;
}

void js_close(jstream *js)
{
    if (!js)
        return;
    bytesrc_close(js->src);
    bytesrc_win_finish(&js->win);
    free(js);
}

static void position_of(const jstream *js, const char *at, long *line, long *col, int64_t *off);

/*
 * Slides consumed bytes out (keeping buf[keep..]) and reads more. A gzip
 * stream that ends early is the end of the input here: the parser then
 * reports the incomplete item where it starts. Returns 0, or -1 on error.
 */
static int refill(jstream *js, size_t keep, tb_error *err)
{
    if (keep > 0) {
        /* count newlines in what slides out, for line numbers */
        const char *p = js->win.buf, *e = js->win.buf + keep;
        while ((p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
            js->base_line++;
            p++;
            js->last_nl_abs = js->win.base + (p - js->win.buf);
        }
        js->pos -= keep;
    }
    tb_error e;
    int rc = bytesrc_fill(js->src, &js->win, keep, js->max_item, &e);
    if (rc >= 0)
        return 0;
    if (rc == BYTESRC_FULL) {
        /* what the window holds (from buf[0], where the item starts) is one item */
        long line, col;
        int64_t off;
        position_of(js, js->win.buf, &line, &col, &off);
        if (err)
            tb_error_at(err, TB_ERR_PARSE, bytesrc_path(js->src), line, col, off,
                        "an event or value longer than %zu MiB (TRACEBOOK_MAX_EVENT_MB raises the limit)",
                        js->max_item >> 20);
        js->state = ST_DONE;
        return -1;
    }
    if (e.code == TB_ERR_TRUNCATED) {
        js->win.eof = 1;
        return 0;
    }
    if (err)
        *err = e;
    js->state = ST_DONE;
    return -1;
}

static void position_of(const jstream *js, const char *at, long *line, long *col, int64_t *off)
{
    long l = js->base_line + 1;
    int64_t ls = js->last_nl_abs;
    for (const char *p = js->win.buf; p < at; p++) {
        if (*p == '\n') {
            l++;
            ls = js->win.base + (p + 1 - js->win.buf);
        }
    }
    *off = js->win.base + (at - js->win.buf);
    *line = l;
    *col = (long)(*off - ls) + 1;
}

static int syntax_error(jstream *js, const char *at, const char *msg, tb_error *err)
{
    long line, col;
    int64_t off;
    position_of(js, at, &line, &col, &off);
    tb_error_at(err, TB_ERR_PARSE, bytesrc_path(js->src), line, col, off, "malformed JSON: %s", msg);
    js->state = ST_DONE;
    return JS_ITEM_ERROR;
}

/* Skips whitespace in the buffer, refilling as needed. Returns 0, 1 at EOF, -1 on error. */
static int next_char(jstream *js, tb_error *err)
{
    for (;;) {
        while (js->pos < js->win.len) {
            char c = js->win.buf[js->pos];
            if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
                js->pos++;
            else
                return 0;
        }
        if (js->win.eof)
            return 1;
        if (refill(js, js->pos, err))
            return -1;
    }
}

/* The input stopped early at window position at: nothing more is read. */
static inline int truncated(jstream *js, size_t at)
{
    js->stop_offset = js->win.base + (int64_t)at;
    js->state = ST_DONE;
    return JS_ITEM_TRUNCATED;
}

/* To the next character that is not whitespace: 0, or the item to return
 * (an error, or the input ends early there). */
static inline int to_next(jstream *js, tb_error *err)
{
    int r = next_char(js, err);
    if (r < 0)
        return JS_ITEM_ERROR;
    if (r == 1)
        return truncated(js, js->pos);
    return 0;
}

/* Past the ',' that must stand between two items (msg: the error when it
 * does not) and the whitespace after it: 0, or the item to return. */
static inline int past_comma(jstream *js, const char *msg, tb_error *err)
{
    if (js->win.buf[js->pos] != ',')
        return syntax_error(js, js->win.buf + js->pos, msg, err);
    js->pos++;
    return to_next(js, err);
}

/* After the trace's closing bracket only whitespace may follow. */
static int after_trace(jstream *js, tb_error *err)
{
    int r = next_char(js, err);
    if (r < 0)
        return JS_ITEM_ERROR;
    js->state = ST_DONE;
    if (r == 0)
        return syntax_error(js, js->win.buf + js->pos, "unexpected data after the end of the trace", err);
    return JS_ITEM_END;
}

/* The start of the input: a UTF-8 BOM passed over, then '[' (the events)
 * or '{' (a top-level object). 0 to go on in the new state, or the item. */
static inline int on_start(jstream *js, tb_error *err)
{
    int r = next_char(js, err);
    if (r < 0)
        return JS_ITEM_ERROR;
    if (r == 1) {
        tb_error_at(err, TB_ERR_PARSE, bytesrc_path(js->src), 1, 1, 0, "empty input, expected a JSON trace");
        return JS_ITEM_ERROR;
    }
    if (js->win.base == 0 && js->pos == 0 && js->win.len >= 3 && memcmp(js->win.buf, "\xEF\xBB\xBF", 3) == 0) {
        js->pos = 3;
        return 0;
    }
    if (js->win.buf[js->pos] == '[') {
        js->pos++;
        js->state = ST_EVENTS;
        js->first_in_array = 1;
    } else if (js->win.buf[js->pos] == '{') {
        js->pos++;
        js->state = ST_TOPOBJ;
        js->top_is_object = 1;
        js->first_in_array = 1;
    } else {
        return syntax_error(js, js->win.buf + js->pos, "expected '[' or '{' at the start of a trace", err);
    }
    return 0;
}

/* One event object at js->pos, the window refilled until it is whole. */
static inline int read_event(jstream *js, trace_event *ev, tb_error *err)
{
    for (;;) {
        pstate ps = {.p = js->win.buf + js->pos, .end = js->win.buf + js->win.len};
        parse_event(&ps, ev);
        if (ps.status == P_OK) {
            ev->offset = js->win.base + (int64_t)js->pos;
            js->pos = (size_t)(ps.p - js->win.buf);
            js->first_in_array = 0;
            return JS_ITEM_EVENT;
        }
        if (ps.status == P_ERR)
            return syntax_error(js, ps.errp, ps.errmsg, err);
        if (js->win.eof)
            return truncated(js, js->pos);
        if (refill(js, js->pos, err))
            return JS_ITEM_ERROR;
    }
}

/* In the events array: the separator, then the next event or the array's
 * end. 0 to go on in the new state, or the item. */
static inline int on_events(jstream *js, trace_event *ev, tb_error *err)
{
    int r = to_next(js, err);
    if (r != 0)
        return r;
    char c = js->win.buf[js->pos];
    if (c == ']') {
        js->pos++;
        if (js->top_is_object) {
            js->state = ST_TOPOBJ;
            js->first_in_array = 0;
            return 0;
        }
        return after_trace(js, err);
    }
    if (!js->first_in_array) {
        if ((r = past_comma(js, "expected ',' or ']' between events", err)) != 0)
            return r;
        c = js->win.buf[js->pos];
        if (c == ']') /* tolerate a trailing comma */
            return 0;
    }
    if (c != '{')
        return syntax_error(js, js->win.buf + js->pos, "expected an event object", err);
    return read_event(js, ev, err);
}

/* One member of the top-level object at js->pos, the window refilled until
 * it is whole: its key and value, or 0 having entered traceEvents. */
static inline int read_member(jstream *js, js_span *key, js_span *val, tb_error *err)
{
    for (;;) {
        pstate ps = {.p = js->win.buf + js->pos, .end = js->win.buf + js->win.len};
        js_span k, v;
        size_t kstart = js->pos;
        if (*ps.p != '"')
            return syntax_error(js, ps.p, "expected a string key", err);
        if (parse_string(&ps, &k) == 0) {
            skip_ws(&ps);
            if (ps.p >= ps.end)
                more(&ps);
            else if (*ps.p != ':')
                fail(&ps, ps.p, "expected ':'");
            else {
                ps.p++;
                skip_ws(&ps);
                if (ps.p >= ps.end)
                    more(&ps);
                else if (KEY_IS(&k, "traceEvents") && *ps.p == '[') {
                    js->pos = (size_t)(ps.p + 1 - js->win.buf);
                    js->state = ST_EVENTS;
                    js->first_in_array = 1;
                    return 0;
                } else if (parse_value(&ps, &v) == 0) {
                    js->pos = (size_t)(ps.p - js->win.buf);
                    js->first_in_array = 0;
                    *key = k;
                    *val = v;
                    return JS_ITEM_TOPKEY;
                }
            }
        }
        if (ps.status == P_ERR)
            return syntax_error(js, ps.errp, ps.errmsg, err);
        if (js->win.eof)
            return truncated(js, kstart);
        if (refill(js, js->pos, err))
            return JS_ITEM_ERROR;
    }
}

/* In the top-level object: the separator, then the next member or the
 * object's end. 0 to go on in the new state, or the item. */
static inline int on_topobj(jstream *js, js_span *key, js_span *val, tb_error *err)
{
    int r = to_next(js, err);
    if (r != 0)
        return r;
    char c = js->win.buf[js->pos];
    if (c == '}') {
        js->pos++;
        return after_trace(js, err);
    }
    if (!js->first_in_array && (r = past_comma(js, "expected ',' or '}' in the top-level object", err)) != 0)
        return r;
    return read_member(js, key, val, err);
}

int js_next(jstream *js, trace_event *ev, js_span *key, js_span *val, tb_error *err)
{
    for (;;) {
        int r;
        switch (js->state) {
        case ST_DONE: return JS_ITEM_END;
        case ST_START: r = on_start(js, err); break;
        case ST_EVENTS: r = on_events(js, ev, err); break;
        default: r = on_topobj(js, key, val, err); break; /* ST_TOPOBJ */
        }
        if (r != 0)
            return r;
    }
}

int js_top_is_object(const jstream *js)
{
    return js->top_is_object;
}

int64_t js_stop_offset(const jstream *js)
{
    return js->stop_offset;
}

int64_t js_trailing(const jstream *js)
{
    return bytesrc_trailing(js->src);
}

int64_t js_bytes_done(const jstream *js)
{
    return js->win.base + (int64_t)js->pos;
}

int64_t js_raw_bytes_done(const jstream *js)
{
    return bytesrc_raw_offset(js->src);
}

/* ---- args and values ---------------------------------------------------- */

void js_parse_args(trace_event *ev)
{
    ev->args_state = -1;
    ev->n_args = 0;
    if (ev->args.type != JS_OBJ)
        return;
    /* the window includes the closing brace, so a number just before it ends */
    pstate ps = {.p = ev->args.p + 1, .end = ev->args.p + ev->args.n};
    skip_ws(&ps);
    while (ps.p < ps.end && *ps.p != '}' && ev->n_args < JS_MAX_MEMBERS) {
        js_member *m = &ev->argv[ev->n_args];
        if (*ps.p != '"' || parse_string(&ps, &m->key))
            break;
        skip_ws(&ps);
        if (ps.p >= ps.end || *ps.p != ':')
            break;
        ps.p++;
        if (parse_value(&ps, &m->val))
            break;
        ev->n_args++;
        skip_ws(&ps);
        if (ps.p < ps.end && *ps.p == ',') {
            ps.p++;
            skip_ws(&ps);
        }
    }
    ev->args_state = 1;
}

/*
 * Eight ASCII digits at p as their value, or -1 when one of the bytes is no
 * digit: all eight at once in a 64-bit word (little-endian machines; elsewhere
 * always -1, and the caller reads digit by digit). Each byte's high nibble
 * must be 3 and its low nibble at most 9 (adding 6 keeps it below 16); then
 * neighbouring digits are combined pairwise into 2-, 4- and 8-digit values.
 */
static inline int64_t digits8(const char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    if (((v & 0xF0F0F0F0F0F0F0F0ULL) | (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) !=
        0x3333333333333333ULL)
        return -1;
    v -= 0x3030303030303030ULL;
    v = v * 10 + (v >> 8); /* bytes 0, 2, 4, 6: two-digit values */
    uint64_t lo = v & 0x000000FF000000FFULL, hi = (v >> 16) & 0x000000FF000000FFULL;
    return (int64_t)((lo * (100 + (1000000ULL << 32)) + hi * (1 + (10000ULL << 32))) >> 32);
#else
    (void)p;
    return -1;
#endif
}

int js_us_to_ns(const char *p, size_t n, int64_t *out)
{
    const char *e = p + n;
    int neg = 0;
    if (p < e && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    if (p >= e)
        return -1;
    uint64_t ip = 0;
    const char *d0 = p;
    int big = 0; /* more integer digits than 64 bits hold: out of range, if well formed */
    /* a trace's times have 16 integer digits: eight at a time while ip * 10^8
     * cannot overflow, the rest one by one */
    for (int64_t d8; e - p >= 8 && ip < UINT64_MAX / 100000000 - 1 && (d8 = digits8(p)) >= 0; p += 8)
        ip = ip * 100000000 + (uint64_t)d8;
    while (p < e && *p >= '0' && *p <= '9') {
        if (ip > (UINT64_MAX - 9) / 10)
            big = 1;
        else
            ip = ip * 10 + (uint64_t)(*p - '0');
        p++;
    }
    int have_digits = p > d0;
    uint64_t frac = 0;
    int fdig = 0, round_up = 0;
    if (p < e && *p == '.') {
        p++;
        if (e - p == 3 && p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9' && p[2] >= '0' &&
            p[2] <= '9') {
            /* the usual three decimals of a microsecond time, ending the text */
            frac = (uint64_t)((p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0'));
            fdig = 3;
            have_digits = 1;
            p = e;
        }
        while (p < e && *p >= '0' && *p <= '9') {
            if (fdig < 3) {
                frac = frac * 10 + (uint64_t)(*p - '0');
            } else if (fdig == 3) {
                round_up = *p >= '5';
            }
            fdig++;
            have_digits = 1;
            p++;
        }
    }
    if (!have_digits)
        return -1;
    if (p < e && (*p == 'e' || *p == 'E')) {
        /* exponent notation (Excel-saved files): fall back to long double */
        char tmp[64];
        size_t len = (size_t)(e - (neg ? d0 - 1 : d0));
        const char *s0 = neg ? d0 - 1 : d0;
        if (len >= sizeof tmp)
            return -1;
        memcpy(tmp, s0, len);
        tmp[len] = 0;
        char *end;
        errno = 0;
        long double v = strtold(tmp, &end);
        if (end != tmp + len || isnan(v))
            return -1;
        if (isinf(v) || fabsl(v) > 9.2e15L) {
            *out = neg ? -INT64_MAX : INT64_MAX;
            return 1;
        }
        if (errno)
            return -1;
        *out = (int64_t)llroundl(v * 1000.0L);
        return 0;
    }
    if (p != e)
        return -1;
    while (fdig < 3) {
        frac *= 10;
        fdig++;
    }
    if (big || ip > (uint64_t)INT64_MAX / 1000 - 1) {
        *out = neg ? -INT64_MAX : INT64_MAX;
        return 1;
    }
    uint64_t ns = ip * 1000 + frac + (uint64_t)round_up;
    *out = neg ? -(int64_t)ns : (int64_t)ns;
    return 0;
}

/* 1 when p[0..n) is a plain JSON-style decimal number (no hex, spaces, nan, inf). */
static int plain_number(const char *p, size_t n)
{
    size_t i = 0;
    if (i < n && (p[i] == '-' || p[i] == '+'))
        i++;
    if (i >= n || !((p[i] >= '0' && p[i] <= '9') || p[i] == '.'))
        return 0;
    for (; i < n; i++) {
        char c = p[i];
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
            return 0;
    }
    return 1;
}

int js_span_int(js_span s, int64_t *out)
{
    if (s.type != JS_NUM && s.type != JS_STR)
        return -1;
    /* fast path: up to 18 plain digits, optionally negative */
    if (s.n > 0 && s.n <= 18) {
        const char *p = s.p, *e = s.p + s.n;
        int neg = *p == '-';
        p += neg;
        if (p < e) {
            int64_t v = 0, d8;
            if (e - p >= 8 && (d8 = digits8(p)) >= 0) { /* a pid's or an id's first eight digits */
                v = d8;
                p += 8;
            }
            while (p < e && *p >= '0' && *p <= '9')
                v = v * 10 + (*p++ - '0');
            if (p == e) {
                *out = neg ? -v : v;
                return 0;
            }
        }
    }
    if (s.n == 0 || s.n > 40 || !plain_number(s.p, s.n))
        return -1;
    char tmp[48];
    memcpy(tmp, s.p, s.n);
    tmp[s.n] = 0;
    char *end;
    errno = 0;
    long long v = strtoll(tmp, &end, 10);
    if (errno == 0 && *end == 0) {
        *out = v;
        return 0;
    }
    if (errno == ERANGE && tmp[0] != '-') {
        /* ids above INT64_MAX (unsigned 64-bit) keep their bits */
        errno = 0;
        unsigned long long u = strtoull(tmp, &end, 10);
        if (errno == 0 && *end == 0) {
            *out = (int64_t)u;
            return 0;
        }
        return -1;
    }
    errno = 0;
    double d = strtod(tmp, &end);
    if (errno == 0 && *end == 0 && isfinite(d) && d == floor(d) && fabs(d) < 9.2e18) {
        *out = (int64_t)d;
        return 0;
    }
    return -1;
}

int js_span_real(js_span s, double *out)
{
    if (s.type != JS_NUM && s.type != JS_STR)
        return -1;
    if (s.n == 0 || s.n > 60 || !plain_number(s.p, s.n))
        return -1;
    char tmp[64];
    memcpy(tmp, s.p, s.n);
    tmp[s.n] = 0;
    char *end;
    errno = 0;
    double d = strtod(tmp, &end);
    if (errno || *end != 0)
        return -1;
    *out = d;
    return 0;
}

static int grow(char **buf, size_t *cap, size_t need)
{
    if (*cap >= need)
        return 0;
    size_t ncap = *cap ? *cap : 256;
    while (ncap < need)
        ncap *= 2;
    char *nb = realloc(*buf, ncap);
    if (!nb)
        return -1;
    *buf = nb;
    *cap = ncap;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return c - 'A' + 10;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

const char *js_str_decode(js_span s, char **buf, size_t *cap, size_t *len)
{
    if (s.type != JS_STR || !(s.flags & JS_F_ESC)) {
        *len = s.n;
        return s.p;
    }
    if (grow(buf, cap, s.n + 1))
        return NULL;
    char *o = *buf;
    const char *p = s.p, *e = s.p + s.n;
    while (p < e) {
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        char c = p[1];
        p += 2;
        switch (c) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp = (unsigned)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 | hexval(p[3]));
            p += 4;
            int paired = 0;
            if (cp >= 0xD800 && cp < 0xDC00 && p + 6 <= e && p[0] == '\\' && p[1] == 'u') {
                unsigned lo = (unsigned)(hexval(p[2]) << 12 | hexval(p[3]) << 8 | hexval(p[4]) << 4 | hexval(p[5]));
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                    paired = 1;
                }
            }
            /* NUL would cut C strings, a lone surrogate is not UTF-8: both become U+FFFD */
            if (cp == 0 || (!paired && cp >= 0xD800 && cp < 0xE000))
                cp = 0xFFFD;
            o += put_utf8(o, cp);
            break;
        }
        default: *o++ = c; break;
        }
    }
    *o = 0;
    *len = (size_t)(o - *buf);
    return *buf;
}

const char *js_raw_clean(js_span s, char **buf, size_t *cap, size_t *len)
{
    if (s.type == JS_STR) {
        /* a string span lacks its quotes: the raw text starts one byte earlier */
        s.p--;
        s.n += 2;
    }
    if (!(s.flags & JS_F_CTRL)) {
        *len = s.n;
        return s.p;
    }
    /* escape raw control characters; outside strings they cannot occur
     * (the parser treats them as errors there, except whitespace) */
    if (grow(buf, cap, s.n * 6 + 1))
        return NULL;
    char *o = *buf;
    int in_str = 0;
    static const char hex[] = "0123456789abcdef";
    for (const char *p = s.p, *e = s.p + s.n; p < e; p++) {
        unsigned char c = (unsigned char)*p;
        if (in_str) {
            if (c == '\\' && p + 1 < e) {
                *o++ = *p++;
                *o++ = *p;
                continue;
            }
            if (c == '"')
                in_str = 0;
            else if (c < 0x20) {
                *o++ = '\\';
                *o++ = 'u';
                *o++ = '0';
                *o++ = '0';
                *o++ = hex[c >> 4];
                *o++ = hex[c & 15];
                continue;
            }
        } else if (c == '"') {
            in_str = 1;
        }
        *o++ = (char)c;
    }
    *o = 0;
    *len = (size_t)(o - *buf);
    return *buf;
}
