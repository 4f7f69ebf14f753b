/* SPDX-License-Identifier: MIT */
/*
 * hash.h - the engine's two hash functions, written once.
 *
 * hash_mix64 is the 64-bit finalizer of MurmurHash3 (every input bit
 * reaches every output bit): open-addressing tables keyed by integers
 * (ids, (rank, device, stream) triples) take their slot from it.
 * hash_fnv1a is 64-bit FNV-1a over bytes, for keys that are text (cache
 * keys, names); chain calls to hash several pieces. Neither is meant to
 * resist an adversary; both are stable across runs and platforms, so a
 * value may be stored.
 */
#ifndef TB_UTIL_HASH_H
#define TB_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The starting value of an FNV-1a chain. */
#define HASH_FNV_OFFSET 14695981039346656037u

static inline uint64_t hash_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* h folded with the n bytes at p (start a chain with HASH_FNV_OFFSET). */
static inline uint64_t hash_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211u;
    }
    return h;
}

#endif
