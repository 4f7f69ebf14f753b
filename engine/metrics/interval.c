/* SPDX-License-Identifier: MIT */
/*
 * interval.c - interval sets of int64 ns: merging, set operations, clipping
 * and the multi-class sweep (see interval.h for the contracts).
 *
 * The only super-linear step is sorting. iv_sort is an LSD radix sort on the
 * start (sign bit flipped so negative starts come first) that skips every
 * byte on which all keys agree: real timestamps of one trace share their high
 * bytes, so a sort usually takes 4 or 5 passes over the data instead of
 * O(log n) comparisons per element. Short arrays, or a failed allocation of
 * the scratch array, go to qsort, so iv_merge cannot fail.
 *
 * The set operations walk two merged sets with two cursors; because inputs
 * are merged (disjoint and not touching), so are their outputs, without a
 * final merge pass. The sweep turns each record into two events encoded as
 * iv values (s = time, e = class << 1 | is_start) so that it reuses the same
 * sort, then keeps one counter per class; a class's bit is set while its
 * counter is positive. All events at one timestamp are applied before the
 * mask is looked at, so touching intervals leave no zero-length segment.
 */
#include "metrics/interval.h"
#include "util/vec.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Below this many intervals qsort beats setting up the radix passes. */
#define RADIX_MIN 64

/* ---- ivec --------------------------------------------------------------- */

void ivec_init(ivec *x)
{
    x->v = NULL;
    x->n = 0;
    x->cap = 0;
}

int ivec_reserve(ivec *x, size_t cap)
{
    if (cap <= x->cap)
        return 0;
    if (cap > SIZE_MAX / sizeof(iv))
        return -1;
    iv *v = realloc(x->v, cap * sizeof(iv));
    if (!v)
        return -1;
    x->v = v;
    x->cap = cap;
    return 0;
}

int ivec_push(ivec *x, int64_t s, int64_t e)
{
    return VEC_PUSH(x->v, x->n, x->cap, ((iv){s, e}));
}

void ivec_clear(ivec *x)
{
    x->n = 0;
}

void ivec_free(ivec *x)
{
    if (!x)
        return;
    free(x->v);
    ivec_init(x);
}

void ivec_merge(ivec *x)
{
    x->n = iv_merge(x->v, x->n);
}

/* ---- sorting ------------------------------------------------------------ */

static int cmp_start(const void *pa, const void *pb)
{
    const iv *a = pa, *b = pb;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    return (a->e > b->e) - (a->e < b->e);
}

/* The start as an unsigned key whose order is the signed order of s. */
static inline uint64_t key(const iv *x)
{
    return (uint64_t)x->s ^ UINT64_C(0x8000000000000000);
}

/* LSD radix sort of v by start, one byte per pass; tmp has room for n. */
static void radix_sort(iv *v, iv *tmp, size_t n)
{
    size_t cnt[8][256];
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key(&v[i]);
        for (int b = 0; b < 8; b++)
            cnt[b][(k >> (8 * b)) & 0xff]++;
    }
    iv *src = v, *dst = tmp;
    for (int b = 0; b < 8; b++) {
        /* Every key has the same byte here: the pass would not move anything. */
        if (cnt[b][(key(&v[0]) >> (8 * b)) & 0xff] == n)
            continue;
        size_t off[256], sum = 0;
        for (int d = 0; d < 256; d++) {
            off[d] = sum;
            sum += cnt[b][d];
        }
        for (size_t i = 0; i < n; i++)
            dst[off[(key(&src[i]) >> (8 * b)) & 0xff]++] = src[i];
        iv *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof(iv));
}

void iv_sort(iv *v, size_t n)
{
    if (n < 2)
        return;
    iv *tmp = n >= RADIX_MIN ? malloc(n * sizeof(iv)) : NULL;
    if (tmp) {
        radix_sort(v, tmp, n);
        free(tmp);
    } else {
        qsort(v, n, sizeof(iv), cmp_start);
    }
}

/* ---- merged sets -------------------------------------------------------- */

size_t iv_merge(iv *v, size_t n)
{
    size_t m = 0;
    int sorted = 1;
    for (size_t i = 0; i < n; i++) {
        if (v[i].s >= v[i].e)
            continue;
        if (m && v[i].s < v[m - 1].s)
            sorted = 0;
        v[m++] = v[i];
    }
    if (m == 0)
        return 0;
    if (!sorted)
        iv_sort(v, m);
    size_t k = 0;
    for (size_t i = 1; i < m; i++) {
        if (v[i].s <= v[k].e) {
            if (v[i].e > v[k].e)
                v[k].e = v[i].e;
        } else {
            v[++k] = v[i];
        }
    }
    assert(iv_is_merged(v, k + 1));
    return k + 1;
}

int iv_is_merged(const iv *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].s >= v[i].e)
            return 0;
        if (i && v[i].s <= v[i - 1].e)
            return 0;
    }
    return 1;
}

int64_t iv_length(const iv *v, size_t n)
{
    /* in unsigned arithmetic, saturated: intervals spanning most of the
     * int64 range (report SQL can pass anything) must not overflow */
    uint64_t len = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t d = (uint64_t)v[i].e - (uint64_t)v[i].s;
        if (d > (uint64_t)INT64_MAX - len)
            return INT64_MAX;
        len += d;
    }
    return (int64_t)len;
}

size_t iv_union(const iv *a, size_t na, const iv *b, size_t nb, iv *out)
{
    assert(iv_is_merged(a, na) && iv_is_merged(b, nb));
    size_t i = 0, j = 0, k = 0;
    while (i < na || j < nb) {
        iv x = (j >= nb || (i < na && a[i].s <= b[j].s)) ? a[i++] : b[j++];
        if (k && x.s <= out[k - 1].e) {
            if (x.e > out[k - 1].e)
                out[k - 1].e = x.e;
        } else {
            out[k++] = x;
        }
    }
    assert(k <= na + nb);
    return k;
}

size_t iv_intersect(const iv *a, size_t na, const iv *b, size_t nb, iv *out)
{
    assert(iv_is_merged(a, na) && iv_is_merged(b, nb));
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) {
        int64_t lo = a[i].s > b[j].s ? a[i].s : b[j].s;
        int64_t hi = a[i].e < b[j].e ? a[i].e : b[j].e;
        if (lo < hi)
            out[k++] = (iv){lo, hi};
        if (a[i].e < b[j].e)
            i++;
        else
            j++;
    }
    return k;
}

int64_t iv_intersect_len(const iv *a, size_t na, const iv *b, size_t nb)
{
    assert(iv_is_merged(a, na) && iv_is_merged(b, nb));
    size_t i = 0, j = 0;
    int64_t len = 0;
    while (i < na && j < nb) {
        int64_t lo = a[i].s > b[j].s ? a[i].s : b[j].s;
        int64_t hi = a[i].e < b[j].e ? a[i].e : b[j].e;
        if (lo < hi)
            len = iv_add(len, iv_span(lo, hi));
        if (a[i].e < b[j].e)
            i++;
        else
            j++;
    }
    return len;
}

/*
 * For each a[i], j first skips the b intervals that end at or before it
 * starts; b[j] may reach into a[i + 1], so it is not consumed. A b interval is
 * looked at again only by the a intervals it overlaps, so the walk is
 * O(na + nb) and each a[i] yields at most 1 + (b intervals inside it) pieces.
 */
size_t iv_subtract(const iv *a, size_t na, const iv *b, size_t nb, iv *out)
{
    assert(iv_is_merged(a, na) && iv_is_merged(b, nb));
    size_t j = 0, k = 0;
    for (size_t i = 0; i < na; i++) {
        int64_t cur = a[i].s, end = a[i].e;
        while (j < nb && b[j].e <= cur)
            j++;
        for (size_t t = j; t < nb && b[t].s < end && cur < end; t++) {
            if (b[t].s > cur)
                out[k++] = (iv){cur, b[t].s};
            /* b[j] ends after cur (skipped above), later ones after b[t - 1] ends. */
            assert(b[t].e > cur);
            cur = b[t].e;
        }
        if (cur < end)
            out[k++] = (iv){cur, end};
    }
    assert(k <= na + nb);
    return k;
}

int64_t iv_subtract_len(const iv *a, size_t na, const iv *b, size_t nb)
{
    return iv_length(a, na) - iv_intersect_len(a, na, b, nb);
}

/* Index of the first interval of the merged set v that ends after lo (n when none). */
static size_t first_after(const iv *v, size_t n, int64_t lo)
{
    size_t l = 0, h = n;
    while (l < h) {
        size_t m = l + (h - l) / 2;
        if (v[m].e <= lo)
            l = m + 1;
        else
            h = m;
    }
    return l;
}

size_t iv_clip(const iv *v, size_t n, int64_t lo, int64_t hi, iv *out)
{
    assert(iv_is_merged(v, n));
    size_t k = 0;
    if (hi <= lo)
        return 0;
    for (size_t i = first_after(v, n, lo); i < n && v[i].s < hi; i++) {
        /* k <= i - first: writing out[k] never clobbers an unread v[i] when out == v. */
        out[k++] = (iv){v[i].s > lo ? v[i].s : lo, v[i].e < hi ? v[i].e : hi};
    }
    return k;
}

int64_t iv_clip_len(const iv *v, size_t n, int64_t lo, int64_t hi)
{
    assert(iv_is_merged(v, n));
    int64_t len = 0;
    if (hi <= lo)
        return 0;
    for (size_t i = first_after(v, n, lo); i < n && v[i].s < hi; i++)
        len = iv_add(len, iv_span(v[i].s > lo ? v[i].s : lo, v[i].e < hi ? v[i].e : hi));
    return len;
}

/* ---- the multi-class sweep ---------------------------------------------- */

int iv_sweep(const iv_rec *r, size_t n, int64_t *part, iv_segment_fn cb, void *ctx)
{
    if (part)
        memset(part, 0, IV_MASKS * sizeof *part);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].cls < 0 || r[i].cls >= IV_CLASSES)
            return -1;
        if (r[i].s < r[i].e)
            m++;
    }
    if (m == 0)
        return 0;
    if (m > SIZE_MAX / (2 * sizeof(iv)))
        return -1;
    /* Events: s = time, e = cls << 1 | 1 for a start, cls << 1 for an end. */
    iv *ev = malloc(2 * m * sizeof(iv));
    if (!ev)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].s >= r[i].e)
            continue;
        ev[k++] = (iv){r[i].s, (int64_t)r[i].cls << 1 | 1};
        ev[k++] = (iv){r[i].e, (int64_t)r[i].cls << 1};
    }
    assert(k == 2 * m);
    iv_sort(ev, k);

    size_t active[IV_CLASSES] = {0};
    unsigned mask = 0;
    int64_t prev = ev[0].s, seg = ev[0].s;
    int rc = 0;
    for (size_t i = 0; i < k;) {
        int64_t t = ev[i].s;
        if (part)
            part[mask] = iv_add(part[mask], iv_span(prev, t));
        /* Apply every event at t before looking at the mask. */
        for (; i < k && ev[i].s == t; i++) {
            int c = (int)(ev[i].e >> 1);
            if (ev[i].e & 1) {
                active[c]++;
            } else {
                /* The matching start came earlier: records are non-empty. */
                assert(active[c] > 0);
                active[c]--;
            }
        }
        unsigned now = 0;
        for (int c = 0; c < IV_CLASSES; c++)
            if (active[c])
                now |= 1u << c;
        if (now != mask) {
            if (cb && t > seg && (rc = cb(ctx, seg, t, mask)) != 0)
                goto done;
            seg = t;
            mask = now;
        }
        prev = t;
    }
    assert(mask == 0);
done:
    free(ev);
    if (rc && part)
        memset(part, 0, IV_MASKS * sizeof *part);
    return rc;
}
