/* SPDX-License-Identifier: MIT */
/*
 * sort.c - qsort(3) comparators and sort-then-deduplicate (see sort.h).
 */
#include <stdlib.h>
#include <string.h>

#include "util/sort.h"

int sort_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int sort_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int sort_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

size_t sort_unique_i64(int64_t *v, size_t n)
{
    if (n < 2)
        return n;
    qsort(v, n, sizeof *v, sort_cmp_i64);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[k - 1])
            v[k++] = v[i];
    return k;
}
