/* SPDX-License-Identifier: MIT */
/*
 * api.h - routes the engine's SQLite calls through the host's sqlite3_api
 * table, for the objects linked into the loadable extension.
 *
 * engine/sqlite-ext/meson.build compiles the engine files the extension
 * needs (metrics/, query/sqlfuncs.c, util/errors.c) a second time with this
 * header forced in first (-include). sqlite3ext.h turns every sqlite3_*
 * call in them into a call through the pointer `sqlite3_api`, which
 * sqlite3_tracebook_init() sets from what the host passes. So the SQL
 * functions and the computed tables run in the SQLite library that opened
 * the connection, whichever it is (Debian's libsqlite3.so.0 behind the
 * sqlite3 shell and Python, a statically linked shell, another Python's),
 * and the extension links no SQLite of its own. The library and the command
 * compile the same files without this header and call SQLite directly.
 */
#ifndef TB_SQLITE_EXT_API_H
#define TB_SQLITE_EXT_API_H

#include <sqlite3ext.h>

/* The pointer itself is defined once, in extension.c (SQLITE_EXTENSION_INIT1). */
SQLITE_EXTENSION_INIT3

#endif
