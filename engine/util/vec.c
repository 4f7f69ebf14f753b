/* SPDX-License-Identifier: MIT */
/*
 * vec.c - growing arrays (see vec.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

int vec_reserve(void *arrayp, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 8;
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return -1;
        nc *= 2;
    }
    if (nc > SIZE_MAX / size)
        return -1;
    /* the pointer is read and written as bytes: arrayp may point at any
     * object pointer type, and all of them are represented alike here */
    void *old, *p;
    memcpy(&old, arrayp, sizeof old);
    if (!(p = realloc(old, nc * size)))
        return -1;
    memcpy(arrayp, &p, sizeof p);
    *cap = nc;
    return 0;
}
