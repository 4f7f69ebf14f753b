/* SPDX-License-Identifier: MIT */
/*
 * dirs.h - creating the missing directories of a path (dirs.c).
 */
#ifndef TB_UTIL_DIRS_H
#define TB_UTIL_DIRS_H

#include <sys/types.h>

/*
 * Creates the missing directories of path, each with mode (less the
 * umask): all of it when whole, else those above its last component (the
 * folder a file is about to be written in). Returns 0, or -1 with errno
 * set when one could not be created or the path is too long; callers that
 * write next leave the error to that write, which names the path.
 */
int dirs_make(const char *path, int whole, mode_t mode);

#endif
