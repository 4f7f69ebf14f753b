/* SPDX-License-Identifier: MIT */
/*
 * finish.h - the end both exports share (private to engine/export/;
 * finish.c, called by timeline.c and summary.c).
 */
#ifndef TB_EXPORT_FINISH_H
#define TB_EXPORT_FINISH_H

#include <stddef.h>

#include "tracebook/error.h"
#include "tracebook/session.h"

/*
 * After an export that exported `ranks` ranks: a window that no rank has is
 * TB_ERR_USAGE (nothing exported), no rank at all a note; clear: the cached
 * DB the session loaded for it is removed (a DB given as the input stays).
 */
tb_status export_finish(tb_session *s, size_t ranks, int clear, void (*note)(void *ctx, const char *msg), void *ctx,
                        tb_error *err);

#endif
