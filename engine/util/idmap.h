/* SPDX-License-Identifier: MIT */
/*
 * idmap.h - a map from integer ids to integer values, built once and then
 * read many times.
 *
 * Ids in a unified DB (globalTaskId, connectionId) are mostly dense: 1, 2,
 * 3, ... So the map is a plain array indexed by id - base when the ids span
 * at most about four slots per id, and sorted pairs searched in O(log n)
 * otherwise. Fill it with idmap_add, then call idmap_build once; idmap_get
 * is valid only after that.
 */
#ifndef TB_UTIL_IDMAP_H
#define TB_UTIL_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/sort.h"
#include "util/vec.h"

/* What idmap_get returns for an id that is not in the map (never a stored value). */
#define IDMAP_ABSENT INT64_MIN

typedef struct idmap_pair {
    int64_t k, v;
} idmap_pair;

/* Caller memory: zero it (or IDMAP_INIT) before the first idmap_add; idmap_free frees it. */
typedef struct idmap {
    int64_t base;
    int64_t *dense;   /* ndense values, IDMAP_ABSENT where no id */
    size_t ndense;
    idmap_pair *p;    /* n pairs (sorted by k once built, when not dense) */
    size_t n, cap;
} idmap;

#define IDMAP_INIT {0, NULL, 0, NULL, 0, 0}

/* Adds (k, v) before idmap_build; v must not be IDMAP_ABSENT. 0, or -1 when out of memory.
 * Inline: a map is filled from a million-row scan. */
static inline int idmap_add(idmap *m, int64_t k, int64_t v)
{
    return VEC_PUSH(m->p, m->n, m->cap, ((idmap_pair){k, v}));
}

/* Makes the pairs added a map; of the values added for one id the least is kept. */
void idmap_build(idmap *m);

/* The value of k, or IDMAP_ABSENT. */
static inline int64_t idmap_get(const idmap *m, int64_t k)
{
    if (m->dense) {
        if (k < m->base || (uint64_t)(k - m->base) >= m->ndense)
            return IDMAP_ABSENT;
        return m->dense[k - m->base];
    }
    size_t i = sort_bound_i64(m->p, m->n, sizeof *m->p, offsetof(idmap_pair, k), k, 0);
    return i < m->n && m->p[i].k == k ? m->p[i].v : IDMAP_ABSENT;
}

/* 1 when the map holds no id. */
static inline int idmap_empty(const idmap *m)
{
    return !m->dense && !m->n;
}

/*
 * Calls fn(ctx, k, v) for every id of a built map, in ascending id order;
 * stops at the first non-zero return and returns it.
 */
int idmap_each(const idmap *m, int (*fn)(void *ctx, int64_t k, int64_t v), void *ctx);

/* Replaces every value v of a built map with fn(ctx, k, v) (not IDMAP_ABSENT). */
void idmap_map(idmap *m, int64_t (*fn)(void *ctx, int64_t k, int64_t v), void *ctx);

/* Frees the map and makes it empty; accepts NULL. */
void idmap_free(idmap *m);

#endif
