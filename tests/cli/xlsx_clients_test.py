#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# xlsx_clients_test.py - the sample workbooks opened by real spreadsheet readers.
#
# usage: xlsx_clients_test.py openpyxl|libreoffice TRACEBOOK SAMPLES_DIR WORK_DIR
#
# Each case runs `tracebook report` from SAMPLES_DIR twice with -o into
# WORK_DIR: once to a workbook (--format xlsx) and once to CSV (--format csv),
# the workbook's twin. tracebook_run.json says which sheets hold which report.
#
# openpyxl: the sheets are About plus one per report, in order (the spec's
# workbook.sheets first); each sheet's
# header equals its CSV's, numbers are stored as numbers and text as text,
# each value equals the CSV's (a ratio stored as a fraction, shown as a
# percentage), number formats follow the column type (times #,##0.000,
# ratios 0.00% unless the spec says otherwise, counts #,##0), the header
# is frozen, the autofilter covers the table, and the declared charts and
# conditional formats are there.
#
# libreoffice: every workbook is converted in one headless soffice call,
# every sheet to its own CSV (filter option 12 = -1, LibreOffice 7.2+), and
# each sheet's CSV equals its twin, numbers compared as numbers (LibreOffice
# writes 15 significant digits and a ratio with its % sign).
#
# Exits 77 (skipped) only when the client is not installed: scripts/setup
# installs python3-openpyxl and libreoffice-calc-nogui, so CI runs both.
import csv
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

CASES = [
    ("review_workbook", ["-dir", "ascend_small", "--spec", "specs/review_workbook.yaml"],
     {"Device time": 1, "Top kernels": 1, "Step trace time": 1}),
    ("nightly", ["-dir", "ascend_small", "--spec", "specs/nightly.yaml"], {}),
]

T = tbtest.Checks(report=False)  # a problem a cell: the first 50 are printed at the end


def run(exe, samples, out, args, fmt):
    shutil.rmtree(out, ignore_errors=True)
    p = tbtest.run([exe, "report"] + args + ["--format", fmt, "-o", out], cwd=samples)
    if p.returncode != 0:
        sys.exit("tracebook failed (%d): %s" % (p.returncode, p.stderr))
    with open(os.path.join(out, "tracebook_run.json")) as f:
        return json.load(f)


def twin_rows(csv_dir, report_id):
    with open(os.path.join(csv_dir, report_id + ".csv"), newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def same_number(a, b):
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def sheets_of(meta):
    """(sheet name, report id) for every report sheet, in order."""
    out = []
    for r in meta["reports"]:
        for k, name in enumerate(r.get("sheets", [])):
            out.append((name, r["id"] if k == 0 else None))
    return out


def col_letter(i):
    s = ""
    i += 1
    while i:
        i, rem = divmod(i - 1, 26)
        s = chr(65 + rem) + s
    return s


def check_openpyxl(name, book_path, meta, csv_dir, charts):
    import openpyxl
    wb = openpyxl.load_workbook(book_path)
    sheets = sheets_of(meta)
    # run order, except that workbook.sheets moves reports to the front
    want = [s for s, _ in sheets]
    if name == "review_workbook":
        want.remove("Top kernels")
        want.insert(0, "Top kernels")
    T.check(wb.sheetnames == ["About"] + want, "%s: sheets %r" % (name, wb.sheetnames))
    about = wb["About"]
    T.check(about["A1"].value == "tracebook", "%s: About starts with the version" % name)
    T.check(any(c.value == "session start" for c in about["A"]), "%s: About has the session start" % name)
    for sheet, rid in sheets:
        ws = wb[sheet]
        rows = twin_rows(csv_dir, rid)
        header = rows[0]
        where = "%s: sheet '%s'" % (name, sheet)
        got_header = [c.value for c in ws[1]]
        T.check(got_header == header, "%s: header %r, CSV %r" % (where, got_header, header))
        T.check(ws.freeze_panes == "A2", "%s: freeze panes %r" % (where, ws.freeze_panes))
        want_ref = "A1:%s%d" % (col_letter(len(header) - 1), len(rows))
        T.check(ws.auto_filter.ref == want_ref, "%s: autofilter %r, want %r" % (where, ws.auto_filter.ref, want_ref))
        T.check(ws.max_row == len(rows), "%s: %d rows, CSV %d" % (where, ws.max_row, len(rows)))
        for r, row in enumerate(rows[1:], start=2):
            for c, text in enumerate(row):
                cell = ws.cell(row=r, column=c + 1)
                h = header[c]
                at = "%s %s%d" % (where, col_letter(c), r)
                if text == "":
                    T.check(cell.value is None, "%s: %r, CSV empty" % (at, cell.value))
                    continue
                v = number(text)
                # text, or a text column's value that looks like a number (an operator named "0")
                if v is None or text in ("NaN", "inf", "-inf") or (cell.data_type == "s" and cell.value == text):
                    T.check(cell.data_type == "s" and cell.value == text, "%s: %r, CSV %r" % (at, cell.value, text))
                    continue
                if not T.check(cell.data_type == "n", "%s: type %r for %r" % (at, cell.data_type, text)):
                    continue
                got = cell.value * 100 if h.endswith("(%)") else cell.value
                T.check(same_number(float(got), v), "%s: %r, CSV %r" % (at, cell.value, text))
                fmt = cell.number_format
                if h.endswith("(%)"):
                    T.check(fmt.endswith("%"), "%s: ratio format %r" % (at, fmt))
                elif h.endswith("(us)"):
                    T.check(fmt == "#,##0.000", "%s: time format %r" % (at, fmt))
                elif h == "Count":
                    T.check(fmt == "#,##0", "%s: count format %r" % (at, fmt))
                else:
                    # an integer, a time without its unit in the header (msprof's names), a real
                    # (a real of no type: #,##0.0000; every number has a format)
                    T.check(fmt in ("#,##0", "#,##0.000", "#,##0.0000"), "%s: format %r" % (at, fmt))
        want_charts = charts.get(sheet, 0)
        T.check(len(ws._charts) == want_charts, "%s: %d charts, want %d" % (where, len(ws._charts), want_charts))
    if name == "review_workbook":
        ws = wb["Device time"]
        chart = ws._charts[0]
        T.check(chart.tagname == "barChart" and chart.grouping == "stacked" and chart.type == "bar",
                "stacked bar chart: %s %s %s" % (chart.tagname, chart.grouping, chart.type))
        T.check(len(chart.series) == 3, "three series, got %d" % len(chart.series))
        refs = [str(s.val.numRef.f) for s in chart.series]
        T.check(refs == ["'Device time'!$B$2", "'Device time'!$C$2", "'Device time'!$D$2"],
                "series %r" % refs)
        rules = [(str(rng.sqref), [r.type for r in rs]) for rng, rs in ws.conditional_formatting._cf_rules.items()]
        T.check(rules == [("E2", ["cellIs"])], "Device time conditional formats %r" % rules)
        top = wb["Top kernels"]
        T.check(top["H2"].number_format == "0.0%", "Top kernels: the spec's Ratio format, got %r"
                % top["H2"].number_format)
        T.check(top.column_dimensions["A"].width == 40.7109375 or top.column_dimensions["A"].width == 40,
                "Top kernels: the spec's Name width, got %r" % top.column_dimensions["A"].width)
        kinds = sorted(r.type for rs in top.conditional_formatting._cf_rules.values() for r in rs)
        T.check(kinds == ["dataBar", "expression"], "Top kernels conditional formats %r" % kinds)
        # `type: top, top: 3`: the three largest Avg Time cells, not ten (a top10 rule
        # of libxlsxwriter 1.1.4 wrote rank 10 whatever was asked)
        import re
        exprs = [(str(rng.sqref), r.formula[0]) for rng, rs in top.conditional_formatting._cf_rules.items()
                 for r in rs if r.type == "expression"]
        m = re.fullmatch(r"AND\(ISNUMBER\(E2\),E2>=LARGE\(\$E\$2:\$E\$(\d+),MIN\((\d+),COUNT\(\$E\$2:\$E\$(\d+)\)\)\)\)",
                         exprs[0][1] if exprs else "")
        T.check(m and m.group(2) == "3" and m.group(1) == m.group(3) == str(top.max_row), "top 3 rule %r" % exprs)
        if m:
            vals = [top.cell(row=r, column=5).value for r in range(2, top.max_row + 1)]
            nth = sorted(vals, reverse=True)[min(3, len(vals)) - 1]
            T.check(sum(v >= nth for v in vals) == 3, "the rule marks 3 cells of %d" % len(vals))


def check_libreoffice(workbooks, work):
    """workbooks: (case name, workbook path, meta, csv dir)."""
    conv = os.path.join(work, "lo")
    shutil.rmtree(conv, ignore_errors=True)
    os.makedirs(conv)
    # one call for every workbook: LibreOffice starts slowly
    filt = "csv:Text - txt - csv (StarCalc):44,34,UTF8,1,,0,false,true,false,false,false,-1"
    p = subprocess.run(["soffice", "-env:UserInstallation=file://" + os.path.join(work, "lo-profile"),
                        "--headless", "--convert-to", filt, "--outdir", conv] + [w[1] for w in workbooks],
                       capture_output=True, text=True, timeout=600)
    T.check(p.returncode == 0, "soffice failed: %s" % p.stderr)
    for name, path, meta, csv_dir in workbooks:
        stem = os.path.splitext(os.path.basename(path))[0]
        for sheet, rid in sheets_of(meta):
            where = "%s: sheet '%s'" % (name, sheet)
            lo_path = os.path.join(conv, "%s-%s.csv" % (stem, sheet))
            if not T.check(os.path.exists(lo_path), "%s: LibreOffice wrote no %s" % (where, lo_path)):
                continue
            with open(lo_path, newline="", encoding="utf-8") as f:
                got = list(csv.reader(f))
            want = twin_rows(csv_dir, rid)
            if not T.check(len(got) == len(want), "%s: %d rows, CSV %d" % (where, len(got), len(want))):
                continue
            T.check(got[0] == want[0], "%s: header %r, CSV %r" % (where, got[0], want[0]))
            for r, (g, w) in enumerate(zip(got[1:], want[1:]), start=2):
                if not T.check(len(g) == len(w), "%s row %d: %d fields, CSV %d" % (where, r, len(g), len(w))):
                    continue
                for c, (a, b) in enumerate(zip(g, w)):
                    x, y = number(a.rstrip("%")), number(b)
                    ok = a == b or (x is not None and y is not None and same_number(x, y))
                    T.check(ok, "%s %s%d: LibreOffice %r, CSV %r" % (where, col_letter(c), r, a, b))


def main():
    usage = "openpyxl|libreoffice TRACEBOOK SAMPLES_DIR WORK_DIR"
    mode, exe, samples, work = tbtest.args(usage, 4, 4)
    exe, samples, work = (os.path.abspath(a) for a in (exe, samples, work))
    if mode == "openpyxl":
        try:
            import openpyxl  # noqa: F401
        except ImportError:
            tbtest.rerun_with_system_python("import openpyxl")
            tbtest.skip("python3-openpyxl is not installed")
    elif mode == "libreoffice":
        if not shutil.which("soffice"):
            tbtest.skip("LibreOffice (soffice) is not installed")
    else:
        tbtest.usage(usage)
    work = os.path.join(work, mode)
    os.makedirs(work, exist_ok=True)
    books = []
    for name, args, charts in CASES:
        xdir, cdir = os.path.join(work, name + "-xlsx"), os.path.join(work, name + "-csv")
        meta = run(exe, samples, xdir, args, "xlsx")
        run(exe, samples, cdir, args, "csv")
        path = os.path.join(xdir, meta["workbook"])
        if mode == "openpyxl":
            check_openpyxl(name, path, meta, cdir, charts)
        books.append((name, path, meta, cdir))
    if mode == "libreoffice":
        check_libreoffice(books, work)
    for p in T.problems[:50]:
        print("FAIL", p)
    print("%s: %d workbooks, %d problems" % (mode, len(books), len(T.problems)))
    sys.exit(T.finish())


if __name__ == "__main__":  # tests/cli/review_test.py imports the checks
    main()
