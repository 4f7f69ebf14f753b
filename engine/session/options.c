/* SPDX-License-Identifier: MIT */
/*
 * options.c - what the pieces of a session share (open.c, dist.c,
 * scoped.c): the load options of its inputs, the removal of a private
 * folder of the run, and the freeing of a list of paths.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "session/session.h"
#include "tracebook/error.h"
#include "tracebook/load.h"

void session_remove_folder(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
            continue;
        char f[PATH_MAX * 2];
        snprintf(f, sizeof f, "%s/%s", dir, de->d_name);
        unlink(f);
        tb_temp_unregister(f);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    tb_temp_unregister(dir);
}

tb_load_options session_load_options(const tb_session *s)
{
    const tb_session_options *o = &s->opt;
    return (tb_load_options){.inputs = o->inputs, .n_inputs = o->n_inputs, .strict = o->strict,
                             .keep_python_functions = o->keep_python_functions, .warn = o->warn, .note = o->note,
                             .progress = o->progress, .phase = o->phase, .ctx = o->ctx, .jobs = o->jobs,
                             .max_event_bytes = o->max_event_bytes,
                             .keep_going = o->keep_going};
}

void session_free_list(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}
