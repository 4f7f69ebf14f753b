/* SPDX-License-Identifier: MIT */
/*
 * finish.c - the end both exports share: a window that no rank has is an
 * error rather than an empty success, an export of no rank says so, and
 * `--clear` removes the cached DB the export loaded.
 */
#include "export/finish.h"

#include "tracebook/query.h"

tb_status export_finish(tb_session *s, size_t ranks, int clear, void (*note)(void *ctx, const char *msg), void *ctx,
                        tb_error *err)
{
    const tb_window *w = tb_session_window(s);
    if (ranks == 0 && w->set)
        return tb_error_set(err, TB_ERR_USAGE, "no rank has the window (model %lld, iteration %lld): nothing "
                            "exported", (long long)w->model_id, (long long)w->iteration_id);
    if (ranks == 0 && note)
        note(ctx, "no rank to export");
    int removed = 0;
    return clear ? tb_session_clear_cache(s, &removed, err) : TB_OK;
}
