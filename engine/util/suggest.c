/* SPDX-License-Identifier: MIT */
/*
 * suggest.c - "did you mean": the nearest of a list of names to a word.
 *
 * Used wherever a name is looked up in a known list: commands, options,
 * built-in report names and report ids on the command line; spec keys,
 * json_process layers and metric options in spec files. The distance is the
 * optimal string alignment distance (insertions, deletions, substitutions
 * and swaps of two adjacent characters), so "fromat" is one edit from
 * "format". A suggestion is made only for a likely typo: within one edit for
 * a short word, two from 6 characters, three from 12.
 */
#include <stddef.h>
#include <string.h>

#include "tracebook/error.h"

#define MAX_WORD 64

/* The distance of a and b, or (size_t)-1 when either is longer than MAX_WORD. */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > MAX_WORD || m > MAX_WORD)
        return (size_t)-1;
    size_t d[MAX_WORD + 1][MAX_WORD + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *tb_suggest(const char *word, const char *const *cands, size_t n)
{
    if (!word)
        return NULL;
    size_t len = strlen(word);
    size_t limit = len >= 12 ? 3 : len >= 6 ? 2 : 1;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i])
            continue;
        size_t d = distance(word, cands[i]);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    return best;
}
