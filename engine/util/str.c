/* SPDX-License-Identifier: MIT */
/*
 * str.c - string predicates and the edit distance (see str.h).
 */
#include <string.h>

#include "util/str.h"

int str_starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int str_ends(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

int str_eq_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (lower((unsigned char)*a) != lower((unsigned char)*b))
            return 0;
    return *a == *b;
}

size_t str_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 255 || m > 255)
        return (size_t)-1;
    /* one row of the dynamic-programming table, updated in place */
    size_t row[256];
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[m];
}

const char *str_closest(const char *word, const char *const *names)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; names[i]; i++) {
        size_t d = str_distance(word, names[i]);
        size_t longer = strlen(word) > strlen(names[i]) ? strlen(word) : strlen(names[i]);
        size_t allowed = longer / 3 ? longer / 3 : 1;
        if (d <= allowed && d < best_d) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}
