/* SPDX-License-Identifier: MIT */
/*
 * open.c - opening SQLite files (open.h).
 */
#include <stddef.h>

#include "db/open.h"

int db_open(const char *path, int flags, sqlite3 **db)
{
    return sqlite3_open_v2(path, db, flags, NULL);
}
