/* SPDX-License-Identifier: MIT */
/*
 * interval.h - sets of half-open time intervals [s, e) in int64 nanoseconds,
 * the ground every computed metric stands on (private to the engine).
 *
 * The metrics of the reference (metrics.md) are all lengths of unions,
 * differences and intersections of per-class interval sets: Computing =
 * |U(compute)|, Communication(Not Overlapped) = |U(comm) \ U(compute)|, the
 * Overlap Analysis lanes, HTA's idle/compute/overlap split, TraceLens'
 * exposed-time partition. This file gives the pieces:
 *
 *   - ivec, a growable array of intervals to collect a class into;
 *   - iv_merge, which turns any array into a "merged set": sorted by start,
 *     non-empty, pairwise disjoint and not touching (an interval that starts
 *     at or before the running end joins the group, so [0,5) and [5,9)
 *     become [0,9)). Every set operation below takes and returns merged sets;
 *   - linear-time union, intersection and difference of two merged sets, with
 *     length-only variants that need no output array;
 *   - clipping a merged set to a window in O(log n + k), so per-step metrics
 *     over many steps stay O(n log n) overall;
 *   - iv_sweep, the one-pass multi-class sweep: up to 8 classes, one bit per
 *     class, giving for every combination of classes the time during which
 *     exactly those classes are active, plus the maximal constant-mask
 *     segments for callers that build lanes.
 *
 * Everything is O(n log n) or better (the only sort is iv_sort, a radix sort
 * with a qsort fallback); nothing is quadratic. Coordinates are plain int64;
 * callers keep them such that e - s and the sum of the lengths fit in int64
 * (any real trace timestamps in ns do). Inputs are borrowed for the call
 * only and outputs go to caller memory: apart from ivec, which owns its
 * array, nothing here allocates beyond a call. Nothing prints, exits or keeps
 * global state; the functions are safe to call from several threads on
 * different data.
 */
#ifndef TB_METRICS_INTERVAL_H
#define TB_METRICS_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

/* One interval [s, e): empty when e <= s. */
typedef struct iv {
    int64_t s, e;
} iv;

/* A growable array of intervals (caller memory: ivec_init / ivec_free). */
typedef struct ivec {
    iv *v;      /* owned; v[0] .. v[n - 1] */
    size_t n;   /* intervals held */
    size_t cap; /* room in v */
} ivec;

#define IVEC_INIT {NULL, 0, 0}

/* Makes x empty without memory (same as IVEC_INIT). */
void ivec_init(ivec *x);

/* Makes room for at least cap intervals. Returns 0, or -1 when out of memory (x unchanged). */
int ivec_reserve(ivec *x, size_t cap);

/* Appends [s, e) (even an empty one: iv_merge drops those). Returns 0, or -1 when out of memory. */
int ivec_push(ivec *x, int64_t s, int64_t e);

/* Forgets the intervals, keeping the memory. */
void ivec_clear(ivec *x);

/* Frees the memory and makes x empty again; accepts NULL. */
void ivec_free(ivec *x);

/* Merges x->v in place (iv_merge) and sets x->n to the merged count. */
void ivec_merge(ivec *x);

/*
 * Sorts v by start, in place. The order among equal starts is unspecified.
 * O(n) radix sort on the starts (temporary memory n intervals); falls back to
 * qsort for short arrays or when that memory is not available.
 */
void iv_sort(iv *v, size_t n);

/*
 * Makes v[0 .. n-1] a merged set in place: drops empty and negative-length
 * intervals, sorts by start, joins overlapping and touching intervals.
 * Returns the new count (<= n). O(n) when v is already sorted, else O(n log n).
 */
size_t iv_merge(iv *v, size_t n);

/* 1 when v[0 .. n-1] is a merged set (sorted, non-empty, disjoint, not touching), else 0. */
int iv_is_merged(const iv *v, size_t n);

/*
 * Overflow-checked interval arithmetic. Stored times stay within
 * +-2^62 ns (the loader's range), but report SQL and hand-made DBs can pass
 * any int64: the length of [lo, hi] may not fit, nor a sum of lengths. Both
 * saturate at INT64_MAX (and INT64_MIN) instead of wrapping.
 */
static inline int64_t iv_span(int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return 0;
    uint64_t d = (uint64_t)hi - (uint64_t)lo;
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

static inline int64_t iv_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* Total length of the merged set v (or of any set of disjoint intervals). */
int64_t iv_length(const iv *v, size_t n);

/*
 * Set operations on merged sets a and b, in O(na + nb). Each writes a merged
 * set to out and returns its count. out must have room for na + nb intervals
 * (the bound for all three; the intersection needs at most na + nb - 1, the
 * union na + nb, the difference na + nb) and must not overlap a or b.
 */
size_t iv_union(const iv *a, size_t na, const iv *b, size_t nb, iv *out);     /* A ∪ B */
size_t iv_intersect(const iv *a, size_t na, const iv *b, size_t nb, iv *out); /* A ∩ B */
size_t iv_subtract(const iv *a, size_t na, const iv *b, size_t nb, iv *out);  /* A \ B */

/* |A ∩ B| and |A \ B| of merged sets, in O(na + nb) without an output array. */
int64_t iv_intersect_len(const iv *a, size_t na, const iv *b, size_t nb);
int64_t iv_subtract_len(const iv *a, size_t na, const iv *b, size_t nb);

/*
 * Clips the merged set v to the window [lo, hi): writes the non-empty pieces
 * (a merged set) to out and returns their count (<= n; 0 when hi <= lo). out
 * needs room for n intervals, or for the returned count; out may be v itself
 * (in place). O(log n + count): the first piece is found by binary search.
 */
size_t iv_clip(const iv *v, size_t n, int64_t lo, int64_t hi, iv *out);

/* |v ∩ [lo, hi)| of the merged set v, in O(log n + pieces). */
int64_t iv_clip_len(const iv *v, size_t n, int64_t lo, int64_t hi);

/* ---- the multi-class sweep ---------------------------------------------- */

#define IV_CLASSES 8   /* classes 0 .. 7, bit 1 << cls of a mask */
#define IV_MASKS 256   /* every mask of IV_CLASSES bits */

/* One input interval of the sweep and its class (0 .. IV_CLASSES - 1). */
typedef struct iv_rec {
    int64_t s, e;
    int cls;
} iv_rec;

/*
 * Called by iv_sweep for every maximal segment [s, e) (s < e) over which the
 * set of active classes is constant: mask has bit 1 << c set while at least
 * one interval of class c covers the segment. Segments come in time order,
 * adjacent segments have different masks, and they tile [first start, last
 * end) exactly, gaps included (mask 0). Returns 0 to go on; any other value
 * stops the sweep, and iv_sweep returns it.
 */
typedef int (*iv_segment_fn)(void *ctx, int64_t s, int64_t e, unsigned mask);

/*
 * Sweeps the records r[0 .. n-1] (any order; nested, duplicate, overlapping
 * and touching intervals of one class are fine: classes are counted, not
 * flagged; empty and negative-length records are ignored). When part is not
 * NULL, sets part[mask] to the total time during which exactly the classes
 * in mask are active; part[0] is the gaps between the first start and the
 * last end, so the IV_MASKS entries add up to that span (all 0 for no
 * non-empty record). Calls cb(ctx, ...) for each segment when cb is not NULL.
 * Returns 0; -1 when out of memory or a record's class is outside
 * 0 .. IV_CLASSES - 1 (then cb was not called); or the callback's nonzero
 * value. part is all 0 whenever the result is not 0. O(n log n) time, 2n
 * intervals of temporary memory.
 */
int iv_sweep(const iv_rec *r, size_t n, int64_t *part, iv_segment_fn cb, void *ctx);

#endif
