/* SPDX-License-Identifier: MIT */
/*
 * spec_file.c - tb_spec_load (tracebook/spec.h): a spec from its file, or
 * from `builtin:NAME` (as --spec takes it and tracebook_run.json records
 * it) the spec of one built-in report, else of a whole built-in file
 * (builtin:advisor); an unknown name is a usage error naming the nearest
 * report (builtin_list.c). The text is parsed by spec.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec_int.h"
#include "tracebook/spec.h"

tb_status tb_spec_load(const char *path, tb_spec **out, void (*warn)(void *ctx, const char *msg), void *ctx,
                       tb_error *err)
{
    *out = NULL;
    if (!strncmp(path, "builtin:", 8)) {
        /* one built-in report, as a spec that uses it */
        char use[512];
        int k = snprintf(use, sizeof use, "tracebook: 1\nreports:\n  - use: \"%s\"\n", path + 8);
        if (k < 0 || (size_t)k >= sizeof use || strchr(path + 8, '"') || strchr(path + 8, '\\'))
            return tb_error_set(err, TB_ERR_USAGE, "--spec '%s': not a built-in report name", path);
        tb_status st = tb_builtin_report_check(path + 8, err);
        const tb_builtin *file = st == TB_ERR_USAGE ? tb_builtin_find(path + 8) : NULL;
        if (file) /* no report has the name, a built-in file has it: all its reports (builtin:advisor) */
            return spec_load_text(path, file->text, strlen(file->text), 0, warn, ctx, out, err);
        if (st) {
            char why[sizeof err->message];
            snprintf(why, sizeof why, "%s", err->message);
            return tb_error_set(err, st, "--spec '%.200s': %s", path, why);
        }
        return tb_spec_load_mem(path, use, (size_t)k, out, warn, ctx, err);
    }
    char *text;
    size_t len;
    int e = spec_read_all(path, &text, &len);
    if (e == ENOMEM)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    if (e == EFBIG)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "spec file '%s' is larger than %u MiB", path,
                           MAX_SPEC_BYTES >> 20);
    if (e)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot read spec file '%s': %s", path, strerror(e));
    tb_status st = spec_load_text(path, text, len, 0, warn, ctx, out, err);
    free(text);
    return st;
}
