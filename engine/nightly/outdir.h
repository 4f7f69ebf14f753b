/* SPDX-License-Identifier: MIT */
/*
 * outdir.h - the output folder of a nightly run and its manifest
 * (outdir.c; private to nightly/).
 */
#ifndef TB_NIGHTLY_OUTDIR_H
#define TB_NIGHTLY_OUTDIR_H

#include <jansson.h>

#include "tracebook/error.h"

/*
 * Creates dir when missing (one level), checks that it is a folder and
 * locks it (out_dir_lock: one run at a time writes into it; note tells of
 * a wait, may be NULL). *dir_fd gets the lock's descriptor (close it when
 * done; -1 when none), and is left alone on failure.
 */
tb_status nightly_out_dir(const char *dir, void (*note)(void *ctx, const char *msg), void *ctx, int *dir_fd,
                          tb_error *err);

/* Writes the run's tracebook_run.json into dir from meta (takes ownership)
 * and tells written (may be NULL) its path. */
tb_status nightly_manifest(const char *dir, json_t *meta, void (*written)(void *ctx, const char *path), void *ctx,
                           tb_error *err);

#endif
