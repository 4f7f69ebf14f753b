/* SPDX-License-Identifier: MIT */
/*
 * columns.h - the words the spec language and the writers share: the types a
 * column can carry and the output formats. A spec declares them
 * (tracebook/spec.h), the writers act on them (tracebook/output.h); neither
 * knows the other.
 */
#ifndef TRACEBOOK_COLUMNS_H
#define TRACEBOOK_COLUMNS_H

#include <stddef.h>

/* Column types carried by an alias suffix ("Total Time:dur_ns"). */
typedef enum tb_col_type {
    TB_COL_PLAIN = 0,
    TB_COL_DUR_NS,    /* a duration in ns: converted by --timeunit, "(us)" in the header */
    TB_COL_TS_NS,     /* a timestamp in ns: converted by --timeunit */
    TB_COL_RATIO_PCT, /* a percentage 0..100: header gets "(%)" */
    TB_COL_MEM_B,     /* a size in bytes: header gets "(B)" */
    TB_COL_RANK       /* a rank id: written only when the DB holds more than one rank */
} tb_col_type;

/* Output formats (a bit mask). */
enum tb_out_format {
    TB_OUT_CSV = 1u << 0,
    TB_OUT_JSON = 1u << 1,
    TB_OUT_XLSX = 1u << 2,
    TB_OUT_CONSOLE = 1u << 3,
    TB_OUT_HTML = 1u << 4      /* one page per run (report.html), a section per report */
};

/* The format named by the len bytes at name ("csv", "json", "xlsx",
 * "console", "html"), or 0. */
unsigned tb_out_format_named(const char *name, size_t len);
/* The name of one format (a single bit), or NULL. */
const char *tb_out_format_name(unsigned format);
/* The formats of a comma-separated list ("csv,json"): a mask, or 0 when the
 * list is empty, names an unknown format or has an empty item. */
unsigned tb_out_formats(const char *list);

#endif
