/* SPDX-License-Identifier: MIT */
/*
 * sort.h - qsort(3) comparators for the element types the engine sorts,
 * sort-then-deduplicate for id lists, and the binary search of arrays
 * sorted by an int64_t key.
 */
#ifndef TB_UTIL_SORT_H
#define TB_UTIL_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Orders int64_t elements ascending. */
int sort_cmp_i64(const void *a, const void *b);

/* Orders `char *` elements (pointers to strings) by strcmp. */
int sort_cmp_str(const void *a, const void *b);

/* Orders double elements ascending (NaN compares equal to everything). */
int sort_cmp_double(const void *a, const void *b);

/* Sorts v ascending and removes repeated values; returns the new count. */
size_t sort_unique_i64(int64_t *v, size_t n);

/*
 * Binary search of the n elements at base (size bytes each) sorted by the
 * int64_t key at byte offset off: the number of elements whose key is below
 * key, or, with upper, at most key. [bound(key, 0), bound(key, 1)) is the
 * run of elements with that key. O(log n); inline, so that the compiler
 * turns the constant size and offset into plain loads on hot paths.
 */
static inline size_t sort_bound_i64(const void *base, size_t n, size_t size, size_t off, int64_t key, int upper)
{
    const char *b = base;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t k;
        memcpy(&k, b + mid * size + off, sizeof k);
        if (upper ? k <= key : k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif
