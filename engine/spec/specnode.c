/* SPDX-License-Identifier: MIT */
/*
 * specnode.c - builds the positioned document tree of a spec (see specnode.h).
 *
 * libyaml's event parser drives a small explicit stack: a scalar, sequence
 * or mapping event makes a node and attaches it to the collection on top of
 * the stack (as a key when the mapping waits for one). libyaml's marks are
 * 0-based; every position stored here is 1-based.
 *
 * JSON goes through jansson first, only to check it and to report syntax
 * errors as JSON errors. Then the same text goes through libyaml, with two
 * same-length-or-shorter rewrites in a private copy so that libyaml accepts
 * every JSON text jansson does: tabs become spaces (YAML forbids tabs where
 * it expects indentation; JSON strings cannot hold a raw tab), and a UTF-16
 * surrogate pair escape ("\ud83d\ude00", which libyaml rejects) becomes the
 * 10-character "\U0001F600". The two columns that rewrite removes are added
 * back to the positions of whatever follows it on the same line.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "spec/specnode.h"

#define MAX_DEPTH 64

/* A surrogate-pair rewrite: on 0-based line `line`, columns at or past col moved left by 2. */
typedef struct fixup {
    size_t line, col;
} fixup;

typedef struct frame {
    specnode *node;
    int has_key;       /* MAP: a key is waiting for its value */
    char *key;
    long kline, kcol;
} frame;

typedef struct builder {
    const char *name;
    const char *text;  /* what libyaml reads */
    size_t len;
    size_t *lines;     /* byte offset of each line's start (lazily built) */
    size_t n_lines;
    fixup *fix;
    size_t n_fix;
    frame stack[MAX_DEPTH + 1];
    int depth;
    specnode *root;
    tb_error *err;
} builder;

/* ---- positions ---------------------------------------------------------- */

/* 1-based column of a 0-based libyaml mark, with surrogate rewrites undone. */
static long mark_col(const builder *b, yaml_mark_t m)
{
    size_t col = m.column;
    for (size_t i = 0; i < b->n_fix; i++)
        if (b->fix[i].line == m.line && b->fix[i].col <= m.column)
            col += 2;
    return (long)col + 1;
}

static long mark_line(yaml_mark_t m)
{
    return (long)m.line + 1;
}

/* Builds the table of line starts (\n, \r\n and \r end a line, as in libyaml). Returns 0 or -1 (no memory). */
static int build_lines(builder *b)
{
    if (b->lines)
        return 0;
    size_t cap = 64, n = 0;
    size_t *l = malloc(cap * sizeof *l);
    if (!l)
        return -1;
    l[n++] = 0;
    for (size_t i = 0; i < b->len; i++) {
        char c = b->text[i];
        if (c != '\n' && c != '\r')
            continue;
        if (c == '\r' && i + 1 < b->len && b->text[i + 1] == '\n')
            i++;
        if (n == cap) {
            size_t *nl = realloc(l, 2 * cap * sizeof *l);
            if (!nl) {
                free(l);
                return -1;
            }
            l = nl;
            cap *= 2;
        }
        l[n++] = i + 1;
    }
    b->lines = l;
    b->n_lines = n;
    return 0;
}

/* Byte offset in b->text of a 0-based libyaml mark (its column counts characters); b->lines must be built. */
static size_t mark_offset(const builder *b, yaml_mark_t m)
{
    if (m.line >= b->n_lines)
        return b->len;
    size_t p = b->lines[m.line];
    for (size_t k = 0; k < m.column && p < b->len; k++) {
        p++;
        while (p < b->len && ((unsigned char)b->text[p] & 0xC0) == 0x80)
            p++;
    }
    return p;
}

/* The 0-based mark of byte offset off; b->lines must be built. */
static yaml_mark_t offset_mark(const builder *b, size_t off)
{
    size_t lo = 0, hi = b->n_lines; /* the last line starting at or before off */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->lines[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    yaml_mark_t m = {.line = lo};
    for (size_t p = b->lines[lo]; p < off && p < b->len; p++)
        if (((unsigned char)b->text[p] & 0xC0) != 0x80)
            m.column++;
    return m;
}

/* Byte offset of the end of line li (its line break, or the end of the text); b->lines must be built. */
static size_t line_end(const builder *b, size_t li)
{
    size_t p = b->lines[li];
    while (p < b->len && b->text[p] != '\n' && b->text[p] != '\r')
        p++;
    return p;
}

/*
 * Byte offset where a scalar event's own text starts (its opening quote or
 * block indicator included). The event starts at its tag when it has one,
 * and the scalar may follow on a later line, past blanks and comments
 * (`sql: !!str` on one line, `|` on the next). Anchors never get here.
 */
static size_t scalar_offset(const builder *b, const yaml_event_t *e)
{
    size_t p = mark_offset(b, e->start_mark);
    if (!e->data.scalar.tag || p >= b->len || b->text[p] != '!')
        return p;
    while (p < b->len && b->text[p] != ' ' && b->text[p] != '\t' && b->text[p] != '\n' && b->text[p] != '\r')
        p++;
    for (;;) {
        while (p < b->len && (b->text[p] == ' ' || b->text[p] == '\t' || b->text[p] == '\n' || b->text[p] == '\r'))
            p++;
        if (p >= b->len || b->text[p] != '#')
            return p;
        while (p < b->len && b->text[p] != '\n' && b->text[p] != '\r')
            p++;
    }
}

/*
 * 1 when s (n bytes) holds a line break other than \n: \r, or NEL, LS, PS,
 * which libyaml counts as line breaks (so its line numbers do) but a byte
 * offset's line, counted in \n, does not.
 */
static int odd_break(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\r')
            return 1;
        if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0x85)
            return 1;
        if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
            ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9))
            return 1;
    }
    return 0;
}

/*
 * 1 when a literal block scalar's value n is the file's lines from line
 * index first on, each with the same number of leading spaces removed
 * (*indent): then an offset into the value maps onto the file line by line.
 * The indentation is measured, not guessed: libyaml takes it from the first
 * content line, or from an explicit indicator (`|2`: the parent's
 * indentation plus 2), which leaves any further spaces in the value. Empty
 * lines of the value need no match (an offset cannot point into them).
 */
static int literal_lines(const builder *b, size_t first, const specnode *n, size_t *indent)
{
    const char *v = n->text, *end = n->text + n->len;
    int found = 0;
    if (odd_break(v, n->len))
        return 0;
    for (size_t li = first;; li++) {
        const char *nl = memchr(v, '\n', (size_t)(end - v));
        size_t vl = (size_t)((nl ? nl : end) - v);
        if (vl > 0) {
            if (li >= b->n_lines)
                return 0;
            size_t s = b->lines[li], sl = line_end(b, li) - s;
            if (sl < vl)
                return 0;
            if (!found) {
                *indent = sl - vl;
                found = 1;
            }
            if (sl - vl != *indent || memcmp(b->text + s + *indent, v, vl) != 0)
                return 0;
            for (size_t k = 0; k < *indent; k++)
                if (b->text[s + k] != ' ')
                    return 0;
        }
        if (!nl)
            return found;
        v = nl + 1;
    }
}

/*
 * Sets where a scalar's text starts (text_line, text_column) and whether it
 * is verbatim (see specnode.h), from the scalar's own start, past a tag.
 * Returns 0 or -1 (no memory).
 */
static int locate_text(builder *b, const yaml_event_t *e, specnode *n)
{
    if (build_lines(b) != 0)
        return -1;
    size_t at = scalar_offset(b, e);
    yaml_mark_t m = e->data.scalar.tag ? offset_mark(b, at) : e->start_mark;
    n->text_line = mark_line(m);
    n->text_column = mark_col(b, m);
    switch (n->style) {
    case SPECNODE_PLAIN:
        /* one line exactly when the file holds the value as it is (folding turns a break into a space) */
        n->verbatim = n->len > 0 && n->len <= b->len - at && memcmp(b->text + at, n->text, n->len) == 0 &&
                      !memchr(n->text, '\n', n->len) && !odd_break(n->text, n->len);
        return 0;
    case SPECNODE_SINGLE_QUOTED:
    case SPECNODE_DOUBLE_QUOTED:
        n->text_column++;
        return 0;
    case SPECNODE_LITERAL:
    case SPECNODE_FOLDED:
        break;
    }
    /* a block's text starts on the line after its header (`|-2  # comment`) */
    n->text_line = (long)m.line + 2;
    n->text_column = 1;
    size_t indent;
    if (n->style == SPECNODE_LITERAL && literal_lines(b, m.line + 1, n, &indent)) {
        n->verbatim = 1;
        n->text_column = (long)indent + 1;
        return 0;
    }
    /* else the indentation of the first non-blank line */
    for (size_t li = m.line + 1; li < b->n_lines; li++) {
        size_t p = b->lines[li];
        while (p < b->len && b->text[p] == ' ')
            p++;
        if (p < b->len && b->text[p] != '\n' && b->text[p] != '\r') {
            n->text_column = (long)(p - b->lines[li]) + 1;
            return 0;
        }
    }
    return 0;
}

/* Line and column (1-based, in characters) of byte offset off. */
static void offset_pos(const char *text, size_t len, size_t off, long *line, long *col)
{
    long l = 1, c = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\n' || (ch == '\r' && !(i + 1 < len && text[i + 1] == '\n'))) {
            l++;
            c = 1;
        } else if ((ch & 0xC0) != 0x80 && ch != '\r') {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* ---- scalars ------------------------------------------------------------- */

static int all_digits(const char *s, const char *digits)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!strchr(digits, *s))
            return 0;
    return 1;
}

/* 1 when s matches [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int is_float(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    int mant = 0;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9') {
            s++;
            mant = 1;
        }
    } else {
        while (*s >= '0' && *s <= '9') {
            s++;
            mant = 1;
        }
        if (mant && *s == '.') {
            s++;
            while (*s >= '0' && *s <= '9')
                s++;
        }
    }
    if (!mant)
        return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == 0;
}

/* Types a plain scalar by the YAML 1.2 core schema. */
static void resolve(specnode *n)
{
    const char *s = n->text;
    n->type = SPECNODE_STR;
    if (strlen(s) != n->len)
        return; /* an escaped NUL: only quoted scalars have those, but be safe */
    if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL")) {
        n->type = SPECNODE_NULL;
        return;
    }
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
        n->type = SPECNODE_BOOL;
        n->i = 1;
        return;
    }
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
        n->type = SPECNODE_BOOL;
        n->i = 0;
        return;
    }
    const char *digits = s + (*s == '-' || *s == '+');
    int base = 0;
    if (all_digits(digits, "0123456789"))
        base = 10;
    else if (s[0] == '0' && s[1] == 'o' && all_digits(s + 2, "01234567"))
        base = 8;
    else if (s[0] == '0' && s[1] == 'x' && all_digits(s + 2, "0123456789abcdefABCDEF"))
        base = 16;
    if (base) {
        char *end;
        errno = 0;
        long long v = strtoll(base == 10 ? s : s + 2, &end, base);
        if (errno == 0 && *end == 0) {
            n->type = SPECNODE_INT;
            n->i = v;
            return;
        }
        if (base != 10)
            return; /* an out-of-range 0x/0o literal stays a string */
        /* a decimal integer past int64: a real, as YAML's float would hold it */
    }
    if (base == 10 || is_float(s)) {
        char *end;
        double d = strtod(s, &end);
        if (*end == 0) {
            n->type = SPECNODE_REAL;
            n->d = d;
        }
        return;
    }
    const char *t = s + (*s == '-' || *s == '+');
    if (!strcmp(t, ".inf") || !strcmp(t, ".Inf") || !strcmp(t, ".INF")) {
        n->type = SPECNODE_REAL;
        n->d = *s == '-' ? -HUGE_VAL : HUGE_VAL;
    } else if (t == s && (!strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN"))) {
        n->type = SPECNODE_REAL;
        n->d = NAN;
    }
}

/* ---- the tree ------------------------------------------------------------- */

void specnode_free(specnode *n)
{
    if (!n)
        return;
    free(n->text);
    for (size_t i = 0; n->kind == SPECNODE_SEQ && i < n->n; i++)
        specnode_free(n->items[i]);
    for (size_t i = 0; n->kind == SPECNODE_MAP && i < n->n; i++) {
        free(n->pairs[i].key);
        specnode_free(n->pairs[i].value);
    }
    free(n->items);
    free(n->pairs);
    free(n);
}

const specnode_pair *specnode_get(const specnode *map, const char *key)
{
    if (!map || map->kind != SPECNODE_MAP)
        return NULL;
    for (size_t i = map->n; i-- > 0;)
        if (strcmp(map->pairs[i].key, key) == 0)
            return &map->pairs[i];
    return NULL;
}

/* qsort order of pair pointers: by key, then by place (so the first of
 * equal keys comes first). */
static int by_key(const void *a, const void *b)
{
    const specnode_pair *x = *(const specnode_pair *const *)a, *y = *(const specnode_pair *const *)b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x < y ? -1 : x > y);
}

/*
 * For each pair of map n, the earlier pair with the same key, or NULL:
 * sorted once (n log n), where comparing every pair with those before it
 * made a spec of 100,000 params take a minute. Returns a new array (free
 * it), or NULL when out of memory.
 */
static const specnode_pair **earlier_same_key(const specnode *n)
{
    const specnode_pair **order = malloc(n->n * sizeof *order), **firsts = calloc(n->n, sizeof *firsts);
    if (!order || !firsts) {
        free(order);
        free(firsts);
        return NULL;
    }
    for (size_t i = 0; i < n->n; i++)
        order[i] = &n->pairs[i];
    qsort(order, n->n, sizeof *order, by_key);
    for (size_t i = 1; i < n->n; i++) {
        const specnode_pair *head = firsts[order[i - 1] - n->pairs] ? firsts[order[i - 1] - n->pairs] : order[i - 1];
        if (strcmp(order[i]->key, order[i - 1]->key) == 0)
            firsts[order[i] - n->pairs] = head;
    }
    free(order);
    return firsts;
}

int specnode_find_dup(const specnode *n, const specnode_pair **dup, const specnode_pair **first)
{
    if (!n)
        return 0;
    if (n->kind == SPECNODE_SEQ) {
        for (size_t i = 0; i < n->n; i++)
            if (specnode_find_dup(n->items[i], dup, first))
                return 1;
    } else if (n->kind == SPECNODE_MAP && n->n > 0) {
        const specnode_pair **firsts = earlier_same_key(n);
        for (size_t i = 0; i < n->n; i++) {
            /* out of memory: every pair with every one before it, as slow as it is sure */
            for (size_t j = 0; !firsts && j < i; j++)
                if (strcmp(n->pairs[i].key, n->pairs[j].key) == 0) {
                    *dup = &n->pairs[i];
                    *first = &n->pairs[j];
                    return 1;
                }
            if (firsts && firsts[i]) {
                *dup = &n->pairs[i];
                *first = firsts[i];
                free(firsts);
                return 1;
            }
            if (specnode_find_dup(n->pairs[i].value, dup, first)) {
                free(firsts);
                return 1;
            }
        }
        free(firsts);
    }
    return 0;
}

const char *specnode_describe(const specnode *n, char *buf, size_t cap)
{
    if (!n || (n->kind == SPECNODE_SCALAR && n->len == 0 && n->style == SPECNODE_PLAIN))
        snprintf(buf, cap, "an empty value");
    else if (n->kind == SPECNODE_MAP)
        snprintf(buf, cap, "a mapping");
    else if (n->kind == SPECNODE_SEQ)
        snprintf(buf, cap, "a list");
    else if (n->len > 40)
        snprintf(buf, cap, "'%.37s...'", n->text);
    else
        snprintf(buf, cap, "'%s'", n->text);
    return buf;
}

/* Appends node to the collection on top of the stack (or makes it the root). Returns 0 or -1 (no memory). */
/* v (an array of n items of size bytes) with room for item n, or NULL when
 * out of memory (v is then kept). It doubles from 4 (the capacity is a
 * power of two from the count alone), so that a mapping of many keys costs
 * no quadratic copying in any allocator. */
static void *room(void *v, size_t n, size_t size)
{
    if (n != 0 && (n < 4 || (n & (n - 1)) != 0))
        return v;
    return realloc(v, (n < 4 ? 4 : 2 * n) * size);
}

static int attach(builder *b, specnode *node)
{
    if (b->depth == 0) {
        b->root = node;
        return 0;
    }
    frame *f = &b->stack[b->depth - 1];
    specnode *p = f->node;
    if (p->kind == SPECNODE_SEQ) {
        specnode **ni = room(p->items, p->n, sizeof *ni);
        if (!ni)
            return -1;
        p->items = ni;
        p->items[p->n++] = node;
        return 0;
    }
    specnode_pair *np = room(p->pairs, p->n, sizeof *np);
    if (!np)
        return -1;
    p->pairs = np;
    p->pairs[p->n++] = (specnode_pair){.key = f->key, .line = f->kline, .column = f->kcol, .value = node};
    f->key = NULL;
    f->has_key = 0;
    return 0;
}

/* 1 when the top of the stack is a mapping waiting for a key. */
static int wants_key(const builder *b)
{
    return b->depth > 0 && b->stack[b->depth - 1].node->kind == SPECNODE_MAP && !b->stack[b->depth - 1].has_key;
}

/* Checks an event's anchor and tag. Returns 0, or TB_ERR_PARSE with err set. */
static tb_status check_props(builder *b, const yaml_event_t *e, const yaml_char_t *anchor, const yaml_char_t *tag,
                             const char *allowed_tag, int *force_str)
{
    long line = mark_line(e->start_mark), col = mark_col(b, e->start_mark);
    if (anchor)
        return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1,
                           "anchors are not supported ('&%s'); reuse reports with 'use:' instead", (const char *)anchor);
    if (!tag)
        return TB_OK;
    const char *t = (const char *)tag;
    if (strcmp(t, allowed_tag) == 0 || (force_str && strcmp(t, "!") == 0)) {
        if (force_str)
            *force_str = 1;
        return TB_OK;
    }
    return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1, "tags are not supported ('%s')", t);
}

/* A scalar event: the key a mapping waits for, or a scalar node (its style,
 * position and type) attached to the collection on top. */
static tb_status on_scalar(builder *b, const yaml_event_t *e, long line, long col)
{
    int force_str = 0;
    tb_status st = check_props(b, e, e->data.scalar.anchor, e->data.scalar.tag, "tag:yaml.org,2002:str", &force_str);
    if (st)
        return st;
    size_t n = e->data.scalar.length;
    char *text = malloc(n + 1);
    if (!text)
        return tb_error_set(b->err, TB_ERR_NOMEM, "out of memory");
    memcpy(text, e->data.scalar.value, n);
    text[n] = 0;
    if (wants_key(b)) {
        frame *f = &b->stack[b->depth - 1];
        f->key = text;
        f->kline = line;
        f->kcol = col;
        f->has_key = 1;
        return TB_OK;
    }
    specnode *node = calloc(1, sizeof *node);
    if (!node) {
        free(text);
        return tb_error_set(b->err, TB_ERR_NOMEM, "out of memory");
    }
    node->kind = SPECNODE_SCALAR;
    node->line = node->text_line = line;
    node->column = node->text_column = col;
    node->text = text;
    node->len = n;
    switch (e->data.scalar.style) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE: node->style = SPECNODE_SINGLE_QUOTED; break;
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE: node->style = SPECNODE_DOUBLE_QUOTED; break;
    case YAML_LITERAL_SCALAR_STYLE: node->style = SPECNODE_LITERAL; break;
    case YAML_FOLDED_SCALAR_STYLE: node->style = SPECNODE_FOLDED; break;
    default: node->style = SPECNODE_PLAIN; break;
    }
    if (locate_text(b, e, node) != 0) {
        specnode_free(node);
        return tb_error_set(b->err, TB_ERR_NOMEM, "out of memory");
    }
    if (node->style != SPECNODE_PLAIN || force_str)
        node->type = SPECNODE_STR;
    else
        resolve(node);
    if (attach(b, node) != 0) {
        specnode_free(node);
        return tb_error_set(b->err, TB_ERR_NOMEM, "out of memory");
    }
    return TB_OK;
}

/* A sequence or mapping start: a new collection node attached to the one
 * on top, then pushed (never as a key, nor deeper than MAX_DEPTH). */
static tb_status on_collection(builder *b, const yaml_event_t *e, long line, long col)
{
    int is_map = e->type == YAML_MAPPING_START_EVENT;
    tb_status st = is_map ? check_props(b, e, e->data.mapping_start.anchor, e->data.mapping_start.tag,
                                        "tag:yaml.org,2002:map", NULL)
                          : check_props(b, e, e->data.sequence_start.anchor, e->data.sequence_start.tag,
                                        "tag:yaml.org,2002:seq", NULL);
    if (st)
        return st;
    if (wants_key(b))
        return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1, "a mapping key must be a scalar, got %s",
                           is_map ? "a mapping" : "a list");
    if (b->depth == MAX_DEPTH)
        return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1, "nesting deeper than %d levels", MAX_DEPTH);
    specnode *node = calloc(1, sizeof *node);
    if (!node)
        return tb_error_set(b->err, TB_ERR_NOMEM, "out of memory");
    node->kind = is_map ? SPECNODE_MAP : SPECNODE_SEQ;
    node->line = node->text_line = line;
    node->column = node->text_column = col;
    if (attach(b, node) != 0) {
        specnode_free(node);
        return tb_error_set(b->err, TB_ERR_NOMEM, "out of memory");
    }
    b->stack[b->depth++] = (frame){.node = node};
    return TB_OK;
}

/* Handles one libyaml event. Returns TB_OK, or an error (err set); *done = 1 at the stream's end. */
static tb_status on_event(builder *b, const yaml_event_t *e, int *done, int *n_docs)
{
    long line = mark_line(e->start_mark), col = mark_col(b, e->start_mark);
    switch (e->type) {
    case YAML_STREAM_END_EVENT:
        *done = 1;
        return TB_OK;
    case YAML_DOCUMENT_START_EVENT:
        if (++*n_docs > 1)
            return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1,
                               "a spec file holds one document; found a second");
        return TB_OK;
    case YAML_ALIAS_EVENT:
        return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1,
                           "aliases are not supported ('*%s'); reuse reports with 'use:' instead",
                           (const char *)e->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        return on_scalar(b, e, line, col);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        return on_collection(b, e, line, col);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth > 0)
            b->depth--;
        return TB_OK;
    default:
        return TB_OK;
    }
}

/* Fills err from a failed libyaml parser. */
static tb_status yaml_failure(builder *b, const yaml_parser_t *p, int json)
{
    if (p->error == YAML_MEMORY_ERROR)
        return tb_error_set(b->err, TB_ERR_NOMEM, "out of memory");
    const char *what = json ? "cannot read this JSON as YAML flow syntax" : "invalid YAML";
    const char *problem = p->problem ? p->problem : "unknown problem";
    long line, col;
    if (p->error == YAML_READER_ERROR) {
        offset_pos(b->text, b->len, p->problem_offset, &line, &col);
        if (p->problem_value != -1)
            return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1, "%s: %s (#%X)", what, problem,
                               (unsigned)p->problem_value);
        return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1, "%s: %s", what, problem);
    }
    line = mark_line(p->problem_mark);
    col = mark_col(b, p->problem_mark);
    if (strstr(problem, "cannot start any token") && build_lines(b) == 0 && p->problem_mark.line < b->n_lines) {
        /* the offending character: a tab is by far the most common one */
        size_t at = b->lines[p->problem_mark.line];
        size_t k = 0;
        while (k < p->problem_mark.column && at + 1 < b->len) {
            at++;
            if (((unsigned char)b->text[at] & 0xC0) != 0x80)
                k++;
        }
        if (at < b->len && b->text[at] == '\t')
            return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1,
                               "%s: a tab where YAML expects indentation or a value; indent with spaces", what);
    }
    if (p->context && (p->context_mark.line != p->problem_mark.line || p->context_mark.column != p->problem_mark.column))
        return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1, "%s: %s (%s started at %ld:%ld)", what,
                           problem, p->context, mark_line(p->context_mark), mark_col(b, p->context_mark));
    if (p->context)
        return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1, "%s: %s (%s)", what, problem, p->context);
    return tb_error_at(b->err, TB_ERR_PARSE, b->name, line, col, -1, "%s: %s", what, problem);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The value of the 4 hex digits at p, or -1. */
static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/*
 * Rewrites a copy of valid JSON for libyaml (see the top of the file): tabs
 * to spaces, surrogate pair escapes to \UXXXXXXXX, recording each rewrite in
 * b->fix. *len shrinks by 2 per rewrite. Returns 0 or -1 (no memory).
 */
static int json_for_yaml(builder *b, char *s, size_t *len)
{
    size_t n = *len, line = 0, col = 0;
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\t')
            s[i] = c = ' ';
        if (c == '\n' || c == '\r') {
            if (!(c == '\r' && i + 1 < n && s[i + 1] == '\n')) {
                line++;
                col = 0;
            }
            continue;
        }
        if (((unsigned char)c & 0xC0) != 0x80)
            col++;
        if (c == '"') {
            in_str = !in_str;
            continue;
        }
        if (!in_str || c != '\\')
            continue;
        if (i + 12 <= n && s[i + 1] == 'u' && s[i + 6] == '\\' && s[i + 7] == 'u') {
            long hi = hex4(s + i + 2), lo = hex4(s + i + 8);
            if (hi >= 0xD800 && hi <= 0xDBFF && lo >= 0xDC00 && lo <= 0xDFFF) {
                unsigned long cp = 0x10000 + (((unsigned long)hi - 0xD800) << 10) + ((unsigned long)lo - 0xDC00);
                char rep[11];
                snprintf(rep, sizeof rep, "\\U%08lX", cp);
                memcpy(s + i, rep, 10);
                memmove(s + i + 10, s + i + 12, n - (i + 12));
                n -= 2;
                fixup *nf = realloc(b->fix, (b->n_fix + 1) * sizeof *nf);
                if (!nf)
                    return -1;
                b->fix = nf;
                /* col counts the backslash; the escape spans columns col-1 .. col+8 (0-based) */
                b->fix[b->n_fix++] = (fixup){.line = line, .col = col - 1 + 10};
                i += 9;
                col += 9;
                continue;
            }
        }
        i++; /* skip the escaped character (an escaped quote must not end the string) */
        col++;
    }
    *len = n;
    return 0;
}

tb_status specnode_parse(const char *name, const char *text, size_t len, int json, specnode **out, tb_error *err)
{
    *out = NULL;
    builder b = {.name = name, .err = err};
    char *copy = NULL;
    yaml_parser_t parser;
    int parser_ok = 0;
    tb_status st = TB_OK;

    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    if (json) {
        json_error_t je;
        json_t *j = json_loadb(text, len, JSON_DECODE_ANY, &je);
        if (!j) {
            st = tb_error_at(err, TB_ERR_PARSE, name, je.line, je.column > 0 ? je.column : 1, -1, "invalid JSON: %s",
                             je.text);
            goto fail;
        }
        json_decref(j);
        copy = malloc(len + 1);
        if (!copy)
            goto nomem;
        memcpy(copy, text, len);
        copy[len] = 0;
        if (json_for_yaml(&b, copy, &len) != 0)
            goto nomem;
        text = copy;
    }
    b.text = text;
    b.len = len;

    if (!yaml_parser_initialize(&parser))
        goto nomem;
    parser_ok = 1;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    int done = 0, n_docs = 0;
    while (!done) {
        yaml_event_t e;
        if (!yaml_parser_parse(&parser, &e)) {
            st = yaml_failure(&b, &parser, json);
            goto fail;
        }
        st = on_event(&b, &e, &done, &n_docs);
        yaml_event_delete(&e);
        if (st)
            goto fail;
    }
    yaml_parser_delete(&parser);
    free(copy);
    free(b.lines);
    free(b.fix);
    *out = b.root;
    return TB_OK;

nomem:
    st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
fail:
    if (parser_ok)
        yaml_parser_delete(&parser);
    for (int i = 0; i < b.depth; i++)
        free(b.stack[i].key);
    specnode_free(b.root);
    free(copy);
    free(b.lines);
    free(b.fix);
    return st;
}
