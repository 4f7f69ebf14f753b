/* SPDX-License-Identifier: MIT */
/*
 * tempname.h - names of temporary files that a later run can clean up
 * (tempname.c).
 */
#ifndef TB_UTIL_TEMPNAME_H
#define TB_UTIL_TEMPNAME_H

#include <stddef.h>

/*
 * Writes the mkstemp()/mkdtemp() template for a temporary beside (or named
 * after) path: `PATH.tmp-<pid>@<host>-XXXXXX`. Returns 0, or -1 when it
 * does not fit in n.
 */
int tempname_template(char *out, size_t n, const char *path);

/*
 * Makes the temporary of template tmpl (tempname_template's): a file
 * (mkstemp; returns its open descriptor) or, with dir, a directory
 * (mkdtemp; returns 0), and registers it (tb_temp_register) with the
 * signals a run cleans up on (SIGINT, SIGTERM, SIGHUP) held meanwhile, so
 * that one arriving between the two does not leave it behind. Returns -1
 * with errno set when it cannot be made. *registered (may be NULL) tells
 * whether the table of temporaries took it.
 */
int tempname_make(char *tmpl, int dir, int *registered);

/*
 * Removes from dir the temporaries that a killed run of tracebook on this
 * host left: names made by tempname_template() whose process is gone
 * (files, and directories with what they hold). Running processes, other
 * hosts' files (a shared folder) and every other name are left alone. Each
 * folder is swept once per process. Never fails: what cannot be removed
 * stays.
 */
void tempname_sweep(const char *dir);

/* The same for the folder of path. */
void tempname_sweep_beside(const char *path);

#endif
