/* SPDX-License-Identifier: MIT */
/*
 * tracebook.h - the one public header of the tracebook engine.
 *
 * The engine is a library: it reads parsed accelerator profile data, loads it
 * into the unified SQLite trace DB and (later stages) runs report specs over
 * it. It never prints and never exits; every call that can fail fills a
 * caller-owned tb_error. The `tracebook` command in engine/cli/ is a thin
 * shell over this header.
 */
#ifndef TRACEBOOK_H
#define TRACEBOOK_H

#include "tracebook/error.h"
#include "tracebook/ingest.h"
#include "tracebook/report.h"
#include "tracebook/output.h"

#define TB_VERSION "0.1.0"

/* Returns the library version string (static, never free). */
const char *tb_version(void);

/*
 * Temporary output files that an interrupted run must not leave behind.
 * tb_temp_register() copies path (returns 0, or -1 when the table is full);
 * tb_temp_cleanup() unlinks every registered file and is async-signal-safe,
 * for the command's SIGINT/SIGTERM handler.
 */
int tb_temp_register(const char *path);
void tb_temp_unregister(const char *path);
void tb_temp_cleanup(void);

#endif
