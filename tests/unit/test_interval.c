/* SPDX-License-Identifier: MIT */
/*
 * test_interval.c - unit tests for the interval sets (engine/metrics/interval.c).
 *
 * Every operation is checked against a brute force on thousands of random
 * cases: coordinates lie in 0 .. 64 (relative to a base that is sometimes
 * 0, sometimes negative, sometimes near +-2^61, so the radix sort's sign
 * handling is exercised), so touching, nested, duplicate, empty and
 * negative-length intervals are frequent. The brute force marks unit cells
 * [c, c+1): a merged set is the maximal runs of marked cells, and the set
 * operations are cell-wise and/or/and-not. Half the cases hold 64 or more
 * intervals, so both the radix sort and the qsort path run. The sweep is
 * checked cell by cell too: each cell's exact class mask, part[] as a cell
 * count per mask, and the callback's segments tiling the span with maximal
 * (alternating) masks. Hand cases cover the documented edges, and a large
 * case compares iv_merge with a plain qsort-and-merge on 200000 intervals.
 * Runs with the exit-code protocol: main returns the number of failed tests.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "metrics/interval.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */

#define CELLS 64   /* brute-force coordinates 0 .. CELLS */
#define MAXN 200   /* intervals per random set */
#define ROUNDS 4000

static uint64_t rng = 0x9e3779b97f4a7c15u;

/* xorshift64*: a fixed sequence, so a failure reproduces. */
static uint64_t next(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1du;
}

/* Uniform in lo .. hi (inclusive). */
static int64_t rnd(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1));
}

/* A base offset for a case: 0, small negative, or near +-2^61. */
static int64_t rnd_base(void)
{
    switch (next() % 4) {
    case 0: return 0;
    case 1: return -rnd(1, 1000);
    case 2: return (INT64_C(1) << 61) + rnd(-100000, 100000);
    default: return -(INT64_C(1) << 61) + rnd(-100000, 100000);
    }
}

/* How many intervals: half the cases short, half enough for the radix sort. */
static size_t rnd_n(void)
{
    return next() % 2 ? (size_t)rnd(0, 12) : (size_t)rnd(64, MAXN);
}

/* n random intervals at base + 0 .. CELLS, some empty or negative. */
static void rnd_set(iv *v, size_t n, int64_t base)
{
    for (size_t i = 0; i < n; i++) {
        int64_t s = rnd(0, CELLS - 1), len = rnd(-3, next() % 3 ? 6 : 20);
        int64_t e = s + len > CELLS ? CELLS : s + len;
        v[i] = (iv){base + s, base + e};
    }
}

/* Marks the cells of v (relative to base); cells has CELLS entries. */
static void mark(unsigned char *cells, const iv *v, size_t n, int64_t base)
{
    memset(cells, 0, CELLS);
    for (size_t i = 0; i < n; i++)
        for (int64_t c = v[i].s - base; c < v[i].e - base; c++)
            cells[c] = 1;
}

/* The maximal runs of marked cells: the merged set. Returns their count. */
static size_t runs(const unsigned char *cells, int64_t base, iv *out)
{
    size_t k = 0;
    for (int c = 0; c < CELLS;) {
        if (!cells[c]) {
            c++;
            continue;
        }
        int d = c;
        while (d < CELLS && cells[d])
            d++;
        out[k++] = (iv){base + c, base + d};
        c = d;
    }
    return k;
}

static int64_t count(const unsigned char *cells)
{
    int64_t n = 0;
    for (int c = 0; c < CELLS; c++)
        n += cells[c];
    return n;
}

/* Fails unless got[0 .. ng-1] equals want[0 .. nw-1] interval by interval. */
static void assert_set(const iv *want, size_t nw, const iv *got, size_t ng)
{
    if (nw != ng) {
        print_error("expected %zu intervals, got %zu\n", nw, ng);
        fail();
    }
    for (size_t i = 0; i < nw; i++) {
        if (want[i].s != got[i].s || want[i].e != got[i].e) {
            print_error("interval %zu: expected [%" PRId64 ", %" PRId64 "), got [%" PRId64 ", %" PRId64 ")\n",
                        i, want[i].s, want[i].e, got[i].s, got[i].e);
            fail();
        }
    }
}

/* A random merged set (checked against the brute force) and its cells. */
static size_t rnd_merged(iv *v, int64_t base, unsigned char *cells)
{
    iv want[CELLS];
    size_t n = rnd_n();
    rnd_set(v, n, base);
    mark(cells, v, n, base);
    size_t m = iv_merge(v, n);
    assert_true(iv_is_merged(v, m));
    assert_set(want, runs(cells, base, want), v, m);
    return m;
}

/* ---- ivec --------------------------------------------------------------- */

/* Lengths and sums saturate at the ends of int64: intervals from report SQL
 * or a hand-made DB can span more than an int64 difference holds. */
static void test_overflow(void **state)
{
    (void)state;
    assert_true(iv_span(INT64_MIN, INT64_MAX) == INT64_MAX);
    assert_true(iv_span(-5, 5) == 10);
    assert_true(iv_span(5, -5) == 0);
    assert_true(iv_add(INT64_MAX - 1, 5) == INT64_MAX);
    assert_true(iv_add(INT64_MIN + 1, -5) == INT64_MIN);
    iv a[] = {{INT64_MIN + 1, 0}, {1, INT64_MAX}};
    iv b[] = {{INT64_MIN, INT64_MAX}};
    assert_true(iv_intersect_len(a, 2, b, 1) == INT64_MAX);
    assert_true(iv_clip_len(a, 2, INT64_MIN, INT64_MAX) == INT64_MAX);
    iv_rec r[] = {{INT64_MIN + 1, INT64_MAX - 1, 0}, {-10, 10, 1}};
    int64_t part[IV_MASKS];
    assert_int_equal(iv_sweep(r, 2, part, NULL, NULL), 0);
    assert_true(part[1] == INT64_MAX); /* class 0 alone: more than an int64 holds */
    assert_true(part[3] == 20);
}

static void test_ivec(void **state)
{
    (void)state;
    ivec x = IVEC_INIT;
    for (int i = 0; i < 1000; i++)
        assert_int_equal(ivec_push(&x, 1000 - i, 1000 - i + 2), 0);
    assert_int_equal(x.n, 1000);
    assert_true(x.cap >= 1000);
    assert_i64(1000, x.v[0].s);
    ivec_merge(&x);
    assert_int_equal(x.n, 1);
    assert_i64(1, x.v[0].s);
    assert_i64(1002, x.v[0].e);
    ivec_clear(&x);
    assert_int_equal(x.n, 0);
    assert_int_equal(ivec_reserve(&x, 5000), 0);
    assert_true(x.cap >= 5000);
    assert_int_equal(ivec_reserve(&x, SIZE_MAX), -1);
    assert_true(x.cap >= 5000);
    ivec_free(&x);
    assert_null(x.v);
    assert_int_equal(x.n, 0);
    assert_int_equal(x.cap, 0);
    ivec_free(NULL);
    ivec_init(&x);
    ivec_merge(&x); /* empty */
    assert_int_equal(x.n, 0);
    ivec_free(&x);
}

/* ---- hand cases --------------------------------------------------------- */

static void test_merge_hand(void **state)
{
    (void)state;
    /* Touching intervals merge. */
    iv t[] = {{5, 9}, {0, 5}};
    assert_int_equal(iv_merge(t, 2), 1);
    assert_i64(0, t[0].s);
    assert_i64(9, t[0].e);
    assert_i64(9, iv_length(t, 1));

    /* Nested and duplicate. */
    iv nest[] = {{0, 100}, {10, 20}, {10, 20}, {99, 100}, {0, 1}};
    assert_int_equal(iv_merge(nest, 5), 1);
    assert_i64(100, iv_length(nest, 1));

    /* Empty input, zero-length and negative-length only. */
    assert_int_equal(iv_merge(NULL, 0), 0);
    assert_i64(0, iv_length(NULL, 0));
    iv z[] = {{3, 3}, {7, 2}, {-1, -1}};
    assert_int_equal(iv_merge(z, 3), 0);

    /* A zero-length interval inside a gap does not bridge it. */
    iv g[] = {{0, 2}, {3, 3}, {4, 6}};
    assert_int_equal(iv_merge(g, 3), 2);
    assert_i64(4, iv_length(g, 2));

    /* A gap of one ns is kept. */
    iv one[] = {{0, 5}, {6, 9}};
    assert_int_equal(iv_merge(one, 2), 2);
    assert_true(iv_is_merged(one, 2));
    iv touch[] = {{0, 5}, {5, 9}};
    assert_false(iv_is_merged(touch, 2)); /* touching is not merged form */

    /* Negative coordinates. */
    iv neg[] = {{-5, -1}, {-10, -5}, {INT64_C(-4611686018427387904), INT64_C(-4611686018427387900)}};
    assert_int_equal(iv_merge(neg, 3), 2);
    assert_i64(INT64_C(-4611686018427387904), neg[0].s);
    assert_i64(-10, neg[1].s);
    assert_i64(-1, neg[1].e);
}

static void test_setops_hand(void **state)
{
    (void)state;
    iv a[] = {{0, 10}, {20, 30}};
    iv b[] = {{5, 20}, {25, 26}, {40, 50}};
    iv out[5];
    /* union: [0,20) touches [20,30) -> [0,30); [40,50) */
    size_t n = iv_union(a, 2, b, 3, out);
    assert_set((iv[]){{0, 30}, {40, 50}}, 2, out, n);
    n = iv_intersect(a, 2, b, 3, out);
    assert_set((iv[]){{5, 10}, {25, 26}}, 2, out, n);
    assert_i64(6, iv_intersect_len(a, 2, b, 3));
    n = iv_subtract(a, 2, b, 3, out);
    assert_set((iv[]){{0, 5}, {20, 25}, {26, 30}}, 3, out, n);
    assert_i64(14, iv_subtract_len(a, 2, b, 3));
    n = iv_subtract(b, 3, a, 2, out);
    assert_set((iv[]){{10, 20}, {40, 50}}, 2, out, n);
    /* Empty operands. */
    assert_int_equal(iv_union(NULL, 0, NULL, 0, out), 0);
    assert_int_equal(iv_intersect(a, 2, NULL, 0, out), 0);
    n = iv_subtract(a, 2, NULL, 0, out);
    assert_set(a, 2, out, n);
    assert_int_equal(iv_subtract(NULL, 0, a, 2, out), 0);
    assert_i64(20, iv_subtract_len(a, 2, NULL, 0));
    /* One b interval spanning several a intervals. */
    iv big[] = {{-5, 100}};
    assert_int_equal(iv_subtract(a, 2, big, 1, out), 0);
    assert_i64(20, iv_intersect_len(a, 2, big, 1));
    /* The bound: every b strictly inside an a splits it. */
    iv wide[] = {{0, 100}, {200, 300}};
    iv holes[] = {{10, 11}, {20, 21}, {210, 211}};
    n = iv_subtract(wide, 2, holes, 3, out);
    assert_int_equal(n, 5);
}

static void test_clip_hand(void **state)
{
    (void)state;
    iv v[] = {{0, 10}, {20, 30}, {40, 50}};
    iv out[3];
    size_t n = iv_clip(v, 3, 5, 45, out);
    assert_set((iv[]){{5, 10}, {20, 30}, {40, 45}}, 3, out, n);
    assert_i64(20, iv_clip_len(v, 3, 5, 45));
    assert_int_equal(iv_clip(v, 3, 10, 20, out), 0); /* the window is a gap */
    assert_i64(0, iv_clip_len(v, 3, 10, 20));
    assert_int_equal(iv_clip(v, 3, 45, 5, out), 0); /* hi < lo */
    assert_int_equal(iv_clip(v, 3, 7, 7, out), 0);  /* empty window */
    assert_int_equal(iv_clip(NULL, 0, 0, 100, out), 0);
    /* In place. */
    n = iv_clip(v, 3, 25, 100, v);
    assert_set((iv[]){{25, 30}, {40, 50}}, 2, v, n);
}

/* Collects sweep segments. */
typedef struct segs {
    iv v[4 * MAXN + 8];
    unsigned mask[4 * MAXN + 8];
    size_t n;
    size_t stop_at; /* return 7 at this segment (0: never) */
} segs;

static int collect(void *ctx, int64_t s, int64_t e, unsigned mask)
{
    segs *g = ctx;
    assert_true(g->n < sizeof g->v / sizeof g->v[0]);
    g->v[g->n] = (iv){s, e};
    g->mask[g->n++] = mask;
    return g->stop_at && g->n == g->stop_at ? 7 : 0;
}

static void test_sweep_hand(void **state)
{
    (void)state;
    int64_t part[IV_MASKS];
    static segs g;

    /* Touching intervals of one class: one segment. */
    iv_rec t[] = {{5, 9, 0}, {0, 5, 0}};
    g.n = 0;
    assert_int_equal(iv_sweep(t, 2, part, collect, &g), 0);
    assert_int_equal(g.n, 1);
    assert_i64(0, g.v[0].s);
    assert_i64(9, g.v[0].e);
    assert_int_equal(g.mask[0], 1);
    assert_i64(9, part[1]);
    assert_i64(0, part[0]);

    /* Nested and duplicate intervals of one class are counted, not flagged. */
    iv_rec nest[] = {{0, 10, 2}, {2, 5, 2}, {2, 5, 2}, {5, 10, 2}, {4, 4, 2}};
    g.n = 0;
    assert_int_equal(iv_sweep(nest, 5, part, collect, &g), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.mask[0], 4);
    assert_i64(10, part[4]);

    /* compute [0,10), comm [5,15), memory [20,30): a gap of 5. */
    iv_rec m[] = {{20, 30, 2}, {5, 15, 1}, {0, 10, 0}};
    g.n = 0;
    assert_int_equal(iv_sweep(m, 3, part, collect, &g), 0);
    assert_i64(5, part[1]);
    assert_i64(5, part[3]);
    assert_i64(5, part[2]);
    assert_i64(5, part[0]);
    assert_i64(10, part[4]);
    int64_t sum = 0;
    for (int i = 0; i < IV_MASKS; i++)
        sum += part[i];
    assert_i64(30, sum);
    assert_int_equal(g.n, 5);
    unsigned want_mask[] = {1, 3, 2, 0, 4};
    iv want[] = {{0, 5}, {5, 10}, {10, 15}, {15, 20}, {20, 30}};
    assert_set(want, 5, g.v, g.n);
    for (int i = 0; i < 5; i++)
        assert_int_equal(g.mask[i], want_mask[i]);

    /* A class ending exactly where another starts: no zero-length segment. */
    iv_rec hand[] = {{0, 5, 0}, {5, 9, 1}};
    g.n = 0;
    assert_int_equal(iv_sweep(hand, 2, NULL, collect, &g), 0);
    assert_int_equal(g.n, 2);

    /* All eight classes at once. */
    iv_rec all[IV_CLASSES];
    for (int c = 0; c < IV_CLASSES; c++)
        all[c] = (iv_rec){c, 100 - c, c};
    assert_int_equal(iv_sweep(all, IV_CLASSES, part, NULL, NULL), 0);
    assert_i64(100 - 2 * 7, part[255]);

    /* Empty input, only empty records: no segment, part all 0. */
    g.n = 0;
    part[3] = 42;
    assert_int_equal(iv_sweep(NULL, 0, part, collect, &g), 0);
    assert_i64(0, part[3]);
    iv_rec z[] = {{3, 3, 0}, {5, 1, 1}};
    assert_int_equal(iv_sweep(z, 2, part, collect, &g), 0);
    assert_int_equal(g.n, 0);
    for (int i = 0; i < IV_MASKS; i++)
        assert_i64(0, part[i]);

    /* A class out of range. */
    iv_rec bad[] = {{0, 5, 0}, {1, 2, IV_CLASSES}};
    assert_int_equal(iv_sweep(bad, 2, part, collect, &g), -1);
    bad[1].cls = -1;
    assert_int_equal(iv_sweep(bad, 2, part, collect, &g), -1);
    assert_int_equal(g.n, 0);

    /* The callback stops the sweep: its value comes back, part is cleared. */
    g.n = 0;
    g.stop_at = 2;
    assert_int_equal(iv_sweep(m, 3, part, collect, &g), 7);
    assert_int_equal(g.n, 2);
    for (int i = 0; i < IV_MASKS; i++)
        assert_i64(0, part[i]);
    g.stop_at = 0;
}

/* ---- random cases against the brute force ------------------------------- */

static void test_merge_random(void **state)
{
    (void)state;
    static iv v[MAXN], copy[MAXN], want[CELLS];
    unsigned char cells[CELLS];
    for (int r = 0; r < ROUNDS; r++) {
        int64_t base = rnd_base();
        size_t n = rnd_n();
        rnd_set(v, n, base);
        memcpy(copy, v, n * sizeof *v);
        mark(cells, v, n, base);
        size_t nw = runs(cells, base, want);
        size_t m = iv_merge(v, n);
        assert_true(iv_is_merged(v, m));
        assert_set(want, nw, v, m);
        assert_i64(count(cells), iv_length(v, m));
        /* Merging again changes nothing. */
        assert_int_equal(iv_merge(v, m), m);
        assert_set(want, nw, v, m);
        /* iv_sort keeps the multiset and sorts by start. */
        iv_sort(copy, n);
        for (size_t i = 1; i < n; i++)
            assert_true(copy[i - 1].s <= copy[i].s);
        unsigned char c2[CELLS];
        mark(c2, copy, n, base);
        assert_memory_equal(cells, c2, CELLS);
    }
}

static void test_setops_random(void **state)
{
    (void)state;
    static iv a[MAXN], b[MAXN], out[2 * MAXN], want[CELLS];
    unsigned char ca[CELLS], cb[CELLS], cw[CELLS];
    for (int r = 0; r < ROUNDS; r++) {
        int64_t base = rnd_base();
        size_t na = rnd_merged(a, base, ca);
        size_t nb = rnd_merged(b, base, cb);

        for (int c = 0; c < CELLS; c++)
            cw[c] = ca[c] | cb[c];
        size_t n = iv_union(a, na, b, nb, out);
        assert_true(n <= na + nb);
        assert_set(want, runs(cw, base, want), out, n);

        for (int c = 0; c < CELLS; c++)
            cw[c] = ca[c] & cb[c];
        n = iv_intersect(a, na, b, nb, out);
        assert_true(n <= na + nb);
        assert_set(want, runs(cw, base, want), out, n);
        assert_i64(count(cw), iv_intersect_len(a, na, b, nb));
        assert_i64(count(cw), iv_intersect_len(b, nb, a, na));

        for (int c = 0; c < CELLS; c++)
            cw[c] = ca[c] & !cb[c];
        n = iv_subtract(a, na, b, nb, out);
        assert_true(n <= na + nb);
        assert_set(want, runs(cw, base, want), out, n);
        assert_i64(count(cw), iv_subtract_len(a, na, b, nb));

        for (int c = 0; c < CELLS; c++)
            cw[c] = cb[c] & !ca[c];
        n = iv_subtract(b, nb, a, na, out);
        assert_set(want, runs(cw, base, want), out, n);
        assert_i64(count(cw), iv_subtract_len(b, nb, a, na));
    }
}

static void test_clip_random(void **state)
{
    (void)state;
    static iv a[MAXN], out[MAXN], want[CELLS];
    unsigned char ca[CELLS], cw[CELLS];
    for (int r = 0; r < ROUNDS; r++) {
        int64_t base = rnd_base();
        size_t na = rnd_merged(a, base, ca);
        int64_t lo = rnd(-5, CELLS + 5), hi = rnd(-5, CELLS + 5);
        for (int c = 0; c < CELLS; c++)
            cw[c] = ca[c] && c >= lo && c < hi;
        size_t nw = runs(cw, base, want);
        size_t n = iv_clip(a, na, base + lo, base + hi, out);
        assert_true(n <= na);
        assert_set(want, nw, out, n);
        assert_i64(count(cw), iv_clip_len(a, na, base + lo, base + hi));
        /* In place gives the same. */
        n = iv_clip(a, na, base + lo, base + hi, a);
        assert_set(want, nw, a, n);
    }
}

static void test_sweep_random(void **state)
{
    (void)state;
    static iv_rec r[MAXN];
    static segs g;
    int64_t part[IV_MASKS], want[IV_MASKS];
    unsigned char cnt[CELLS][IV_CLASSES];
    for (int round = 0; round < ROUNDS; round++) {
        int64_t base = rnd_base();
        size_t n = rnd_n();
        int classes = (int)rnd(1, IV_CLASSES);
        iv tmp[MAXN];
        rnd_set(tmp, n, base);
        memset(cnt, 0, sizeof cnt);
        int64_t first = INT64_MAX, last = INT64_MIN;
        for (size_t i = 0; i < n; i++) {
            r[i] = (iv_rec){tmp[i].s, tmp[i].e, (int)rnd(0, classes - 1)};
            for (int64_t c = tmp[i].s - base; c < tmp[i].e - base; c++)
                cnt[c][r[i].cls] = 1;
            if (tmp[i].s < tmp[i].e) {
                first = tmp[i].s < first ? tmp[i].s : first;
                last = tmp[i].e > last ? tmp[i].e : last;
            }
        }
        /* Each cell's exact mask, counted per mask over [first, last). */
        unsigned cellmask[CELLS];
        memset(want, 0, sizeof want);
        for (int c = 0; c < CELLS; c++) {
            cellmask[c] = 0;
            for (int k = 0; k < IV_CLASSES; k++)
                if (cnt[c][k])
                    cellmask[c] |= 1u << k;
            if (first < last && base + c >= first && base + c < last)
                want[cellmask[c]]++;
        }
        g.n = 0;
        assert_int_equal(iv_sweep(r, n, part, collect, &g), 0);
        for (int m = 0; m < IV_MASKS; m++)
            assert_i64(want[m], part[m]);
        if (first >= last) {
            assert_int_equal(g.n, 0);
            continue;
        }
        /* Segments tile [first, last) with alternating masks matching every cell. */
        assert_true(g.n > 0);
        assert_i64(first, g.v[0].s);
        assert_i64(last, g.v[g.n - 1].e);
        for (size_t i = 0; i < g.n; i++) {
            assert_true(g.v[i].s < g.v[i].e);
            if (i) {
                assert_i64(g.v[i - 1].e, g.v[i].s);
                assert_true(g.mask[i - 1] != g.mask[i]);
            }
            for (int64_t c = g.v[i].s - base; c < g.v[i].e - base; c++)
                assert_int_equal(cellmask[c], g.mask[i]);
        }
        /* Without a callback, and without part. */
        assert_int_equal(iv_sweep(r, n, part, NULL, NULL), 0);
        for (int m = 0; m < IV_MASKS; m++)
            assert_i64(want[m], part[m]);
        size_t segs_before = g.n;
        g.n = 0;
        assert_int_equal(iv_sweep(r, n, NULL, collect, &g), 0);
        assert_int_equal(g.n, segs_before);
    }
}

/* ---- scale -------------------------------------------------------------- */

static int cmp_iv(const void *pa, const void *pb)
{
    const iv *a = pa, *b = pb;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    return (a->e > b->e) - (a->e < b->e);
}

/* 200000 intervals over a wide signed range: iv_merge (radix) equals qsort + merge. */
static void test_merge_large(void **state)
{
    (void)state;
    size_t n = 200000;
    iv *v = malloc(n * sizeof *v), *ref = malloc(n * sizeof *ref);
    assert_non_null(v);
    assert_non_null(ref);
    for (int round = 0; round < 3; round++) {
        int64_t span = round == 0 ? INT64_C(1) << 40 : round == 1 ? INT64_C(1) << 62 : 1000000;
        for (size_t i = 0; i < n; i++) {
            int64_t s = (int64_t)(next() % (uint64_t)span) - span / 2;
            v[i] = (iv){s, s + (int64_t)(next() % 200000) - 1000};
        }
        memcpy(ref, v, n * sizeof *v);
        qsort(ref, n, sizeof *ref, cmp_iv);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (ref[i].s >= ref[i].e)
                continue;
            if (k && ref[i].s <= ref[k - 1].e) {
                if (ref[i].e > ref[k - 1].e)
                    ref[k - 1].e = ref[i].e;
            } else {
                ref[k++] = ref[i];
            }
        }
        size_t m = iv_merge(v, n);
        assert_set(ref, k, v, m);
    }
    free(v);
    free(ref);
}

/* A million records in eight classes: part adds up to the span, in well under a second. */
static void test_sweep_large(void **state)
{
    (void)state;
    size_t n = 1000000;
    iv_rec *r = malloc(n * sizeof *r);
    assert_non_null(r);
    int64_t first = INT64_MAX, last = INT64_MIN, base = INT64_C(1700000000000000000);
    ivec cls[IV_CLASSES];
    for (int c = 0; c < IV_CLASSES; c++)
        ivec_init(&cls[c]);
    for (size_t i = 0; i < n; i++) {
        int64_t s = base + (int64_t)(next() % 10000000000u), e = s + (int64_t)(next() % 100000);
        r[i] = (iv_rec){s, e, (int)(next() % IV_CLASSES)};
        assert_int_equal(ivec_push(&cls[r[i].cls], s, e), 0);
        if (s < e) {
            first = s < first ? s : first;
            last = e > last ? e : last;
        }
    }
    int64_t part[IV_MASKS], sum = 0;
    assert_int_equal(iv_sweep(r, n, part, NULL, NULL), 0);
    for (int m = 0; m < IV_MASKS; m++)
        sum += part[m];
    assert_i64(last - first, sum);
    /* Each class's union equals the time its bit is set. */
    for (int c = 0; c < IV_CLASSES; c++) {
        ivec_merge(&cls[c]);
        int64_t on = 0;
        for (int m = 0; m < IV_MASKS; m++)
            if (m & (1 << c))
                on += part[m];
        assert_i64(iv_length(cls[c].v, cls[c].n), on);
        ivec_free(&cls[c]);
    }
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_ivec),
        cmocka_unit_test(test_merge_hand),
        cmocka_unit_test(test_setops_hand),
        cmocka_unit_test(test_clip_hand),
        cmocka_unit_test(test_sweep_hand),
        cmocka_unit_test(test_merge_random),
        cmocka_unit_test(test_setops_random),
        cmocka_unit_test(test_clip_random),
        cmocka_unit_test(test_sweep_random),
        cmocka_unit_test(test_merge_large),
        cmocka_unit_test(test_sweep_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
