# SPDX-License-Identifier: MIT
"""xlsx_peer.py - Python's XlsxWriter writing the table of xlsx_bench.sh's report.

The peer figure of tests/bench/xlsx_bench.sh: the same cells tracebook's
workbook holds for that report (and tracebook-xlsx-bound writes): "Row" (i,
#,##0), "Name" (kernel_<i mod 97>), "Time(us)" (i * 1.234, #,##0.000),
"Share(%)" ((i mod 10000) / 10000 under 0.00%), a bold header, and past
1,048,576 rows a sheet "Many rows (2)". MODE is "default" (XlsxWriter's
default: every cell in memory, shared strings) or "constant_memory" (rows
written as they come, inline strings, like tracebook's workbook).

usage: python3 xlsx_peer.py OUT.xlsx ROWS default|constant_memory
Needs XlsxWriter (Debian: python3-xlsxwriter). Not a test.
"""
import sys

import xlsxwriter

ROW_MAX = 1048576


def main():
    out, rows, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if mode not in ("default", "constant_memory"):
        sys.exit("xlsx_peer.py: MODE is default or constant_memory, got %r" % mode)
    wb = xlsxwriter.Workbook(out, {"constant_memory": mode == "constant_memory", "use_zip64": True})
    bold = wb.add_format({"bold": True})
    f_int = wb.add_format({"num_format": "#,##0"})
    f_us = wb.add_format({"num_format": "#,##0.000"})
    f_pct = wb.add_format({"num_format": "0.00%"})
    sheet, r, ws = 1, 1, None
    ws = wb.add_worksheet("Many rows")
    ws.write_row(0, 0, ["Row", "Name", "Time(us)", "Share(%)"], bold)
    for i in range(1, rows + 1):
        if r == ROW_MAX:
            sheet += 1
            ws = wb.add_worksheet("Many rows (%d)" % sheet)
            ws.write_row(0, 0, ["Row", "Name", "Time(us)", "Share(%)"], bold)
            r = 1
        ws.write_number(r, 0, i, f_int)
        ws.write_string(r, 1, "kernel_%d" % (i % 97))
        ws.write_number(r, 2, i * 1234 / 1e3, f_us)
        ws.write_number(r, 3, (i % 10000) / 1e4, f_pct)
        r += 1
    wb.close()


if __name__ == "__main__":
    main()
