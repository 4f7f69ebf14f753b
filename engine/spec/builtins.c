/* SPDX-License-Identifier: MIT */
/*
 * builtins.c - the built-in report specs.
 *
 * The YAML files of reports/ are embedded into the binary at build time (tools/embed.py
 * writes tb_builtin_table, sorted by file name), so `use: NAME` and
 * `tracebook reports` work with no installed data files. A built-in is a
 * spec like any other: no report is hard-coded in C.
 */
#include <string.h>

#include "tracebook/spec.h"

extern const tb_builtin tb_builtin_table[];
extern const size_t tb_builtin_count;

const tb_builtin *tb_builtins(size_t *n)
{
    *n = tb_builtin_count;
    return tb_builtin_table;
}

const tb_builtin *tb_builtin_find(const char *name)
{
    for (size_t i = 0; i < tb_builtin_count; i++)
        if (strcmp(tb_builtin_table[i].name, name) == 0)
            return &tb_builtin_table[i];
    return NULL;
}
