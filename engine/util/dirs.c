/* SPDX-License-Identifier: MIT */
/*
 * dirs.c - creating the missing directories of a path (`mkdir -p`): the
 * output folders and the parents of output files (engine/output/atomic.c,
 * the report, export, compare and history folders, DBs written by a
 * session) and the cache's home (engine/ingest/cache.c).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "util/dirs.h"

int dirs_make(const char *path, int whole, mode_t mode)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    if (!whole) {
        /* the folder above the last component */
        while (n > 0 && buf[n - 1] == '/')
            n--;
        while (n > 0 && buf[n - 1] != '/')
            n--;
        buf[n] = 0;
    }
    for (size_t i = 1; i <= n; i++) {
        if ((buf[i] != '/' && buf[i] != 0) || buf[i - 1] == '/')
            continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, mode) != 0 && errno != EEXIST)
            return -1;
        buf[i] = c;
    }
    return 0;
}
