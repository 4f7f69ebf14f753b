/* SPDX-License-Identifier: MIT */
/*
 * vec.h - the one way the engine grows an array.
 *
 * An array is a pointer, a count and a capacity held by the caller;
 * vec_reserve makes room for `need` elements, doubling the capacity (from
 * a first allocation of at least 8) so that n appends cost O(n) in all.
 * VEC_PUSH appends one value through it:
 *
 *     int64_t *v = NULL; size_t n = 0, cap = 0;
 *     if (VEC_PUSH(v, n, cap, x)) goto oom;
 *     ...
 *     free(v);
 */
#ifndef TB_UTIL_VEC_H
#define TB_UTIL_VEC_H

#include <stddef.h>

/*
 * Makes the array at *arrayp (arrayp: the address of any object pointer,
 * e.g. an `int64_t **`; elements of size bytes, capacity *cap) hold at
 * least need elements, keeping its contents. Returns 0, or -1 when out of
 * memory or the size overflows (then the array and *cap are unchanged).
 */
int vec_reserve(void *arrayp, size_t *cap, size_t need, size_t size);

/* Appends x to the array v (count n, capacity cap: lvalues). 0, or -1 when out of memory. */
#define VEC_PUSH(v, n, cap, x)                                                                             \
    (((n) < (cap) || vec_reserve(&(v), &(cap), (n) + 1, sizeof *(v)) == 0) ? ((v)[(n)++] = (x), 0) : -1)

#endif
