/* SPDX-License-Identifier: MIT */
/*
 * str.h - string predicates the engine tests again and again, and the
 * edit distance behind "did you mean" suggestions.
 *
 * ASCII only: case folding is 'A'-'Z' to 'a'-'z', as SQL identifiers, spec
 * keys and file names need; no locale is consulted.
 */
#ifndef TB_UTIL_STR_H
#define TB_UTIL_STR_H

#include <stddef.h>

/* 1 when s begins with prefix, else 0. */
int str_starts(const char *s, const char *prefix);

/* 1 when s ends with suffix, else 0. */
int str_ends(const char *s, const char *suffix);

/* 1 when a and b are equal ignoring ASCII case, else 0. */
int str_eq_ci(const char *a, const char *b);

/*
 * The Levenshtein distance between a and b (insertions, deletions and
 * substitutions of one byte each cost 1), or (size_t)-1 when a string is
 * longer than 255 bytes (no suggestion is worth that).
 */
size_t str_distance(const char *a, const char *b);

/*
 * The entry of names (NULL-terminated) closest to word by str_distance,
 * when that distance is at most a third of the longer string (and at least
 * 1 allowed): a likely typo. NULL when nothing is that close. Borrowed
 * from names.
 */
const char *str_closest(const char *word, const char *const *names);

#endif
