/* SPDX-License-Identifier: MIT */
/*
 * str.h - string predicates the engine tests again and again ("did you
 * mean" is tb_suggest(), util/suggest.c).
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

#endif
