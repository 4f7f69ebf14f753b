/* SPDX-License-Identifier: MIT */
/*
 * idmap.c - integer id -> value maps, dense or sorted (see idmap.h).
 */
#include <stdlib.h>
#include <string.h>

#include "util/idmap.h"

static int cmp_pair(const void *a, const void *b)
{
    const idmap_pair *x = a, *y = b;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

void idmap_build(idmap *m)
{
    if (!m->n)
        return;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < m->n; i++) {
        lo = m->p[i].k < lo ? m->p[i].k : lo;
        hi = m->p[i].k > hi ? m->p[i].k : hi;
    }
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    if (span < 4 * (uint64_t)m->n + 1024 && (m->dense = malloc(((size_t)span + 1) * sizeof *m->dense))) {
        m->ndense = (size_t)span + 1;
        m->base = lo;
        for (size_t i = 0; i < m->ndense; i++)
            m->dense[i] = IDMAP_ABSENT;
        for (size_t i = 0; i < m->n; i++) {
            int64_t *slot = &m->dense[m->p[i].k - lo];
            if (*slot == IDMAP_ABSENT || m->p[i].v < *slot)
                *slot = m->p[i].v;
        }
        free(m->p);
        m->p = NULL;
        m->n = m->cap = 0;
        return;
    }
    /* by id, then value: the first pair of each id holds its least value */
    qsort(m->p, m->n, sizeof *m->p, cmp_pair);
    size_t k = 1;
    for (size_t i = 1; i < m->n; i++)
        if (m->p[i].k != m->p[k - 1].k)
            m->p[k++] = m->p[i];
    m->n = k;
}

int idmap_each(const idmap *m, int (*fn)(void *ctx, int64_t k, int64_t v), void *ctx)
{
    int rc = 0;
    if (m->dense) {
        for (size_t i = 0; i < m->ndense && !rc; i++)
            if (m->dense[i] != IDMAP_ABSENT)
                rc = fn(ctx, m->base + (int64_t)i, m->dense[i]);
        return rc;
    }
    for (size_t i = 0; i < m->n && !rc; i++)
        rc = fn(ctx, m->p[i].k, m->p[i].v);
    return rc;
}

void idmap_map(idmap *m, int64_t (*fn)(void *ctx, int64_t k, int64_t v), void *ctx)
{
    if (m->dense) {
        for (size_t i = 0; i < m->ndense; i++)
            if (m->dense[i] != IDMAP_ABSENT)
                m->dense[i] = fn(ctx, m->base + (int64_t)i, m->dense[i]);
        return;
    }
    for (size_t i = 0; i < m->n; i++)
        m->p[i].v = fn(ctx, m->p[i].k, m->p[i].v);
}

void idmap_free(idmap *m)
{
    if (!m)
        return;
    free(m->dense);
    free(m->p);
    memset(m, 0, sizeof *m);
}
