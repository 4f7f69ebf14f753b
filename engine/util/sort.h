/* SPDX-License-Identifier: MIT */
/*
 * sort.h - qsort(3) comparators for the element types the engine sorts, and
 * sort-then-deduplicate for id lists.
 */
#ifndef TB_UTIL_SORT_H
#define TB_UTIL_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Orders int64_t elements ascending. */
int sort_cmp_i64(const void *a, const void *b);

/* Orders `char *` elements (pointers to strings) by strcmp. */
int sort_cmp_str(const void *a, const void *b);

/* Orders double elements ascending (NaN compares equal to everything). */
int sort_cmp_double(const void *a, const void *b);

/* Sorts v ascending and removes repeated values; returns the new count. */
size_t sort_unique_i64(int64_t *v, size_t n);

#endif
