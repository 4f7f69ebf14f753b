/* SPDX-License-Identifier: MIT */
/*
 * topsprof.h - reader for Enflame topsprof text listings (private to ingest/).
 *
 * topsprof prints its results as text tables: statistics mode (per activity
 * class "GCU activities:", "CPU activities:", "RUNTIME activities:", rows
 * `Time(%) Time Calls Avg Min Max Name`) and trace mode (`--print-gcu-trace`,
 * "GCU trace:", rows `Start Duration Node Name Name`), each section closed by
 * "Accumulate Time <t>, Total Calls <n>" and, for GCU, "Total Time <t>".
 * Lines usually carry a "==<pid>== " prefix; files without it are read too.
 * `--export-csv` writes the same tables as CSV, which is read through its
 * header row. The reader streams the file line by line (plain or gzip) and
 * hands every row to a callback, so the caller decides where rows go; memory
 * stays bounded by the longest line. Times are kept as exact integer
 * nanoseconds parsed from their decimal text ("56.61ms" -> 56610000).
 *
 * What the public manual does not show and this reader infers (see
 * topsprof.c for the details): the `--print-summary-per-gcu` layout (device
 * lines as nvprof prints them, `Device "<name> (<n>)"`, or `GCU <n>:`), the
 * position of the Node Name column, and the CSV export's column names.
 */
#ifndef TB_INGEST_TOPSPROF_H
#define TB_INGEST_TOPSPROF_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"

/*
 * One statistics row. Every pointer is borrowed: valid only during the
 * callback. Text listings always fill every field; a CSV export without a
 * column leaves its field at -1.
 */
typedef struct tops_stat {
    const char *klass;   /* activity class: "GCU", "CPU", "RUNTIME", ... ("" when a CSV does not say) */
    int device;          /* device of a --print-summary-per-gcu split, -1 when not split */
    long pid;            /* from the "==<pid>== " prefix (or a CSV Pid column), -1 when absent; at most 2^31 - 1 */
    double time_pct;     /* Time(%), e.g. 86.86 */
    int64_t time_ns, calls, avg_ns, min_ns, max_ns;
    const char *name;    /* the rest of the line: may hold spaces and commas */
    long line;           /* 1-based line of the row */
} tops_stat;

/* One trace row (trace mode). Pointers borrowed: valid only during the callback. */
typedef struct tops_trace {
    const char *klass;   /* "GCU" for "GCU trace:" */
    int device;          /* -1 when not split */
    long pid;            /* -1 when absent */
    int64_t start_ns, dur_ns;
    const char *node_name; /* "" when the row has none (the manual's example has none) */
    const char *name;
    long line;
    int64_t offset; /* of the line in the file */
} tops_trace;

/* A section's footer. klass is borrowed: valid only during the callback. */
typedef struct tops_total {
    const char *klass;
    int device;
    long pid;
    int from_trace;       /* 1 when it closes a "... trace:" section, 0 for "... activities:" */
    int64_t accumulate_ns; /* "Accumulate Time <t>", -1 when absent */
    int64_t total_calls;  /* ", Total Calls <n>", -1 when absent */
    int64_t total_ns;     /* "Total Time <t>" (GCU only in the manual), -1 when absent */
    long line;            /* line of the first footer line */
} tops_total;

/* A class that says "does not contain <what> data.". Pointers borrowed for the callback. */
typedef struct tops_nodata {
    const char *klass;
    int device;
    long pid;
    const char *what;     /* e.g. "cpu kernel" */
    long line;
} tops_nodata;

/*
 * Where rows go. Any callback may be NULL (those items are skipped). A
 * callback returns 0 to go on; non-zero stops parsing and tops_parse returns
 * TB_ERR_DB. The callback may fill the caller's tb_error itself (through ctx,
 * e.g. with SQLite's message); if it leaves it empty, tops_parse fills it with
 * the file and line where it stopped.
 */
typedef struct tops_callbacks {
    void *ctx;
    int (*stat)(void *ctx, const tops_stat *row);
    int (*trace)(void *ctx, const tops_trace *row);
    int (*total)(void *ctx, const tops_total *total);
    int (*nodata)(void *ctx, const tops_nodata *nodata);
} tops_callbacks;

/*
 * Sniffs path (plain or gzip): returns 1 when its first lines look like a
 * topsprof listing (a "TOPSPROF" progress line, a table header, an
 * "activities:"/"trace:" line of a known class) or its CSV export (a header
 * row with the listing's column names), else 0 (also when unreadable).
 */
int tops_is_listing(const char *path);

/*
 * Reads path (plain or gzip) and calls cb for every row, footer and empty
 * class, in file order. Returns TB_OK; TB_ERR_IO when the file cannot be
 * read; TB_ERR_PARSE with err naming FILE:LINE:COL and what was expected
 * (e.g. "bad time '12.3xs'"), also when no topsprof table is found at all;
 * TB_ERR_TRUNCATED when gzip input stops early (rows before that were
 * delivered); TB_ERR_NOMEM; TB_ERR_DB when a callback stopped it. err is
 * caller-owned (may be NULL); cb is borrowed for the call.
 */
tb_status tops_parse(const char *path, const tops_callbacks *cb, tb_error *err);

enum { TOPS_TIME_OK = 0, TOPS_TIME_SYNTAX = -1, TOPS_TIME_RANGE = -2, TOPS_TIME_FINE = -3 };

/*
 * Converts a topsprof time ("56.61ms", "13.44us", "461.00ns", "1.20s"; the
 * digits, an optional decimal part and a unit ns/us/ms/s, nothing else) of n
 * bytes at p to integer nanoseconds without going through a double. Returns
 * TOPS_TIME_OK, TOPS_TIME_SYNTAX (not a time), TOPS_TIME_RANGE (beyond
 * int64 ns) or TOPS_TIME_FINE (a non-zero digit below 1 ns, as in "0.5ns").
 */
int tops_time_ns(const char *p, size_t n, int64_t *out);

#endif
