/* SPDX-License-Identifier: MIT */
/*
 * formats.c - the names of the output formats (tracebook/columns.h): the
 * one list the spec's `outputs:` and the command's --format read.
 */
#include <string.h>

#include "tracebook/columns.h"

static const struct {
    const char *name;
    unsigned format;
} formats[] = {
    {"csv", TB_OUT_CSV},
    {"json", TB_OUT_JSON},
    {"xlsx", TB_OUT_XLSX},
    {"console", TB_OUT_CONSOLE},
    {"html", TB_OUT_HTML},
};

unsigned tb_out_format_named(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strlen(formats[i].name) == len && !strncmp(formats[i].name, name, len))
            return formats[i].format;
    return 0;
}

const char *tb_out_format_name(unsigned format)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].format == format)
            return formats[i].name;
    return NULL;
}

unsigned tb_out_formats(const char *list)
{
    unsigned mask = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        unsigned f = tb_out_format_named(p, n);
        if (!f)
            return 0;
        mask |= f;
        p += n;
        if (*p == ',' && *++p == 0)
            return 0; /* a stray comma at the end */
    }
    return mask;
}
