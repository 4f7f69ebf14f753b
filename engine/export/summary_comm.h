/* SPDX-License-Identifier: MIT */
/*
 * summary_comm.h - the text of a torch_npu rank's communication.json and
 * communication_matrix.json (private to engine/export/; summary_comm.c,
 * called by summary.c).
 */
#ifndef TB_EXPORT_SUMMARY_COMM_H
#define TB_EXPORT_SUMMARY_COMM_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"
#include "tracebook/query.h"

/* rank's communication.json (matrix 0) or communication_matrix.json
 * (matrix 1) as a new NUL-terminated text in *text (free it; it may be set
 * also on failure), the steps of window w only; *ops counts its ops (0: the
 * rank has no rows for it, and nothing is to be written). */
tb_status summary_comm_text(sqlite3 *db, int64_t rank, const tb_window *w, int matrix, char **text, size_t *ops,
                            tb_error *err);

#endif
