/* SPDX-License-Identifier: MIT */
/*
 * xlsx_bound.c - tracebook-xlsx-bound, the libxlsxwriter bound of an XLSX
 * report: how long libxlsxwriter alone takes to write the cells of the
 * table tests/bench/xlsx_bench.sh's report makes, on the same machine, with
 * the same workbook options (constant-memory mode, its temporary file in the
 * workbook's folder, zip64) and the same number formats, and nothing else:
 * no SQL, no rows through a sink, no text cleaning, no column widths.
 *
 * Rows 1..ROWS of the report: "Row" (i, format #,##0), "Name" (the text
 * kernel_<i mod 97>), "Time(us)" (i * 1234 ns as us: i * 1.234, format
 * #,##0.000) and "Share(%)" ((i mod 10000) / 100 percent, stored as the
 * fraction (i mod 10000) / 10000 under 0.00%): the very doubles tracebook
 * stores for them. A sheet holds 1,048,576 rows, header included; the rows
 * past it go on in "Many rows (2)", each sheet with its bold header, as in
 * tracebook's workbook.
 *
 * Prints one line: "rows N cells C write_s S close_s S total_s S" (write:
 * the cells; close: workbook_close, which zips the sheets). Exit status 0,
 * or 1 with a message on standard error. A development tool for
 * tests/bench/xlsx_bench.sh; not installed.
 *
 * usage: tracebook-xlsx-bound OUT.xlsx ROWS   (OUT must not exist)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <xlsxwriter.h>

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static lxw_worksheet *new_sheet(lxw_workbook *wb, int k, lxw_format *bold)
{
    static const char *const head[] = {"Row", "Name", "Time(us)", "Share(%)"};
    char name[32];
    if (k == 1)
        snprintf(name, sizeof name, "Many rows");
    else
        snprintf(name, sizeof name, "Many rows (%d)", k);
    lxw_worksheet *ws = workbook_add_worksheet(wb, name);
    for (int c = 0; ws && c < 4; c++)
        if (worksheet_write_string(ws, 0, (lxw_col_t)c, head[c], bold))
            return NULL;
    return ws;
}

int main(int argc, char **argv)
{
    struct stat st;
    char *end;
    if (argc != 3) {
        fprintf(stderr, "usage: tracebook-xlsx-bound OUT.xlsx ROWS\n");
        return 1;
    }
    long long rows = strtoll(argv[2], &end, 10);
    if (*end || rows < 0) {
        fprintf(stderr, "tracebook-xlsx-bound: ROWS must be a number, got '%s'\n", argv[2]);
        return 1;
    }
    if (stat(argv[1], &st) == 0) {
        fprintf(stderr, "tracebook-xlsx-bound: %s: exists (give a new file)\n", argv[1]);
        return 1;
    }
    char *dir = strdup(argv[1]), *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir] = 0;
    lxw_workbook_options o = {.constant_memory = 1, .tmpdir = slash ? dir : (char *)".", .use_zip64 = 1};
    double t0 = now();
    lxw_workbook *wb = workbook_new_opt(argv[1], &o);
    if (!wb) {
        fprintf(stderr, "tracebook-xlsx-bound: %s: cannot create the workbook\n", argv[1]);
        return 1;
    }
    lxw_format *bold = workbook_add_format(wb), *f_int = workbook_add_format(wb);
    lxw_format *f_us = workbook_add_format(wb), *f_pct = workbook_add_format(wb);
    format_set_bold(bold);
    format_set_num_format(f_int, "#,##0");
    format_set_num_format(f_us, "#,##0.000");
    format_set_num_format(f_pct, "0.00%");
    int sheet = 1;
    lxw_worksheet *ws = new_sheet(wb, sheet, bold);
    lxw_row_t r = 1;
    char name[32];
    lxw_error e = ws ? LXW_NO_ERROR : LXW_ERROR_MEMORY_MALLOC_FAILED;
    for (long long i = 1; i <= rows && !e; i++, r++) {
        if (r == LXW_ROW_MAX) {
            if (!(ws = new_sheet(wb, ++sheet, bold))) {
                e = LXW_ERROR_MEMORY_MALLOC_FAILED;
                break;
            }
            r = 1;
        }
        snprintf(name, sizeof name, "kernel_%lld", i % 97);
        if (!(e = worksheet_write_number(ws, r, 0, (double)i, f_int)) &&
            !(e = worksheet_write_string(ws, r, 1, name, NULL)) &&
            !(e = worksheet_write_number(ws, r, 2, (double)(i * 1234) / 1e3, f_us)))
            e = worksheet_write_number(ws, r, 3, (double)(i % 10000) / 1e4, f_pct);
    }
    double t1 = now();
    if (!e)
        e = workbook_close(wb);
    else
        lxw_workbook_free(wb);
    free(dir);
    if (e) {
        fprintf(stderr, "tracebook-xlsx-bound: %s: %s\n", argv[1], lxw_strerror(e));
        return 1;
    }
    double t2 = now();
    printf("rows %lld cells %lld write_s %.3f close_s %.3f total_s %.3f\n", rows, rows * 4, t1 - t0, t2 - t1, t2 - t0);
    return 0;
}
