/* SPDX-License-Identifier: MIT */
/*
 * outdir.c - the output folder that `compare` (compare.c) and `history
 * report` (history_report.c) write into: made when missing, checked to be
 * a folder, and locked so that two runs into one folder take turns; and
 * the tracebook_run.json each writes there last. Both call it first, before
 * they check that none of their outputs is a file they read; it calls
 * nothing else of nightly/.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "nightly/outdir.h"
#include "query/file_ids.h"
#include "report/manifest.h"

tb_status nightly_out_dir(const char *dir, void (*note)(void *ctx, const char *msg), void *ctx, int *dir_fd,
                          tb_error *err)
{
    tb_status st = out_dir_make(dir, err);
    if (st)
        return st;
    *dir_fd = out_dir_lock(dir, note, ctx);
    return TB_OK;
}

tb_status nightly_manifest(const char *dir, json_t *meta, void (*written)(void *ctx, const char *path), void *ctx,
                           tb_error *err)
{
    char meta_path[4200];
    tb_status st = manifest_write(dir, meta, NULL, meta_path, sizeof meta_path, err);
    if (!st && written)
        written(ctx, meta_path);
    json_decref(meta);
    return st;
}
