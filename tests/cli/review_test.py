#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# review_test.py - the built-in review (`--spec builtin:review`) on the
# public two-rank torch_npu data, opened as its readers open it.
#
# usage: review_test.py openpyxl|libreoffice TRACEBOOK PUBLIC_DATA_DIR WORK_DIR
#
# tracebook writes the review once as it comes (review.xlsx, review.html and
# the CSVs) and once with --format csv (every report's twin).
#
# openpyxl: the checks every sample workbook gets (xlsx_clients_test.py:
# sheet order, each cell against its CSV twin, number formats, frozen
# header, autofilter, the charts' count); then the review's own: About ends
# with a contents list whose links lead to every sheet's A1; the Summary's
# figures per rank equal what the built-in reports step_trace_time and
# top_kernels say of the same data (mean per step, the rank's top kernel
# and its share); every report sheet prints landscape, one page wide, its
# header repeated; the charts are under their tables (Steps: a line per
# rank over its own rows, an x-y chart), bars with the full
# kernel names as categories, largest first, one series per value column,
# the value axis in #,##0; the top-3 rule marks three cells.
#
# libreoffice: every sheet to CSV (equal to its twin) and the workbook to
# PDF, as a reader sees it: one page per report sheet, its header on it, no
# cell shown as ####, each chart's labels drawn (every kernel name twice on
# the Top kernels page: the table and the bar's label; the series names in
# the legends).
#
# Skips (77) when the public data or the client is missing.
import csv
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import tbtest  # noqa: E402
import xlsx_clients_test as xc  # noqa: E402

T = xc.T
SHEETS = ["Summary", "Top kernels", "Device time", "Steps", "Operator statistics", "Communication"]
CHARTS = {"Summary": 1, "Top kernels": 1, "Device time": 1, "Steps": 1}


def rows_of(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def check_summary(exe, data, work, cdir):
    """The Summary against the built-in reports over the same data."""
    ref = os.path.join(work, "reference")
    shutil.rmtree(ref, ignore_errors=True)
    p = tbtest.run([exe, "report", "-dir", data[0], "-dir", data[1], "--spec", "builtin:step_trace_time",
                    "--spec", "builtin:top_kernels", "-o", ref, "-q"])
    if not T.check(p.returncode == 0, "reference run: %s" % p.stderr):
        return
    steps = rows_of(os.path.join(ref, "step_trace_time.csv"))
    tops = rows_of(os.path.join(ref, "top_kernels.csv"))
    summary = rows_of(os.path.join(cdir, "review_summary.csv"))
    h = summary[0]
    T.check(h == ["Rank", "Steps", "Step Time(us)", "Computing(us)", "Exposed Communication(us)", "Free(us)",
                  "Bubble(us)", "Top Kernel", "Top Kernel Time(us)", "Top Kernel Share(%)"], "Summary header %r" % h)
    T.check([r[0] for r in summary[1:]] == ["0", "1"], "Summary: one row per rank, %r" % summary[1:])
    sh = steps[0]
    for row in summary[1:]:
        rank = row[0]
        mine = [r for r in steps[1:] if r[0] == rank]
        # the public data has no ProfilerStep: 0 steps, no step time, one step trace row per device
        T.check(row[1] == "0" and row[2] == "", "rank %s: steps %r, step time %r" % (rank, row[1], row[2]))
        for col, src in (("Computing(us)", "Computing"), ("Exposed Communication(us)", "Communication(Not Overlapped)"),
                         ("Free(us)", "Free"), ("Bubble(us)", "Bubble")):
            want = sum(float(r[sh.index(src)]) for r in mine) / len(mine)
            got = float(row[h.index(col)])
            T.check(abs(got - want) <= 0.0005, "rank %s %s: %r, step_trace_time %r" % (rank, col, got, want))
        top = [r for r in tops[1:] if r[0] == rank][0]
        th = tops[0]
        T.check(row[h.index("Top Kernel")] == top[th.index("Name")], "rank %s top kernel %r, top_kernels %r"
                % (rank, row[h.index("Top Kernel")], top[th.index("Name")]))
        T.check(row[h.index("Top Kernel Time(us)")] == top[th.index("Total Time(us)")],
                "rank %s top kernel time %r" % (rank, row[h.index("Top Kernel Time(us)")]))
    # known figures of this data (torch_npu's own step_trace_time.csv of rank 0 says Computing 27130.59)
    T.check(summary[1][3] == "27130.587" and summary[1][7] == "FlashAttentionScore",
            "rank 0: computing %r, top kernel %r" % (summary[1][3], summary[1][7]))


def check_book(path):
    import openpyxl
    wb = openpyxl.load_workbook(path)
    T.check(wb.sheetnames == ["About"] + SHEETS, "sheets %r" % wb.sheetnames)
    about = wb["About"]
    keys = [c.value for c in about["A"]]
    if T.check("contents" in keys, "About has a contents list: %r" % keys):
        first = keys.index("contents") + 1
        links = [(about.cell(row=r, column=2).value, about.cell(row=r, column=2).hyperlink)
                 for r in range(first, first + len(SHEETS))]
        T.check([t for t, _ in links] == SHEETS, "contents %r" % [t for t, _ in links])
        for text, link in links:
            T.check(link is not None and link.location == "'%s'!A1" % text,
                    "contents: %r links to %r" % (text, link and link.location))
    for name in SHEETS:
        ws = wb[name]
        T.check(ws.page_setup.orientation == "landscape", "%s: orientation %r" % (name, ws.page_setup.orientation))
        T.check(ws.sheet_properties.pageSetUpPr.fitToPage and ws.page_setup.fitToWidth in (None, 1)
                and ws.page_setup.fitToHeight == 0, "%s: one page wide (%r x %r)"
                % (name, ws.page_setup.fitToWidth, ws.page_setup.fitToHeight))
        T.check(ws.print_title_rows in ("1:1", "$1:$1"), "%s: header repeated on printed pages, %r" % (name, ws.print_title_rows))
    # the charts: under their tables, as wide as a page
    for name, kind, n_series in (("Summary", "stacked", 3), ("Top kernels", "clustered", 1),
                                 ("Device time", "stacked", 3)):
        ws = wb[name]
        if not T.check(len(ws._charts) == 1, "%s: %d charts" % (name, len(ws._charts))):
            continue
        ch = ws._charts[0]
        T.check(ch.tagname == "barChart" and ch.type == "bar" and ch.grouping == kind,
                "%s: %s %s %s" % (name, ch.tagname, ch.type, ch.grouping))
        T.check(len(ch.series) == n_series, "%s: %d series" % (name, len(ch.series)))
        T.check(ch.anchor._from.row == ws.max_row + 1 and ch.anchor._from.col == 0,
                "%s: chart at row %d col %d, table ends at row %d" % (name, ch.anchor._from.row + 1,
                                                                      ch.anchor._from.col + 1, ws.max_row))
        # libxlsxwriter: x_axis the categories (drawn first at the top), y_axis the values
        T.check(ch.x_axis.scaling.orientation == "maxMin", "%s: categories %r" % (name, ch.x_axis.scaling.orientation))
        T.check(ch.y_axis.number_format is not None and ch.y_axis.number_format.formatCode == "#,##0",
                "%s: value axis format %r" % (name, ch.y_axis.number_format))
        last = ws.max_row
        ref = "'%s'" % name if " " in name else name
        for s in ch.series:
            cats = (s.cat.strRef or s.cat.numRef).f
            T.check(cats == "%s!$A$2:$A$%d" % (ref, last), "%s: categories %r" % (name, cats))
            vals = s.val.numRef.f
            T.check(re.fullmatch(r"%s!\$[A-Z]+\$2:\$[A-Z]+\$%d" % (re.escape(ref), last), vals or ""),
                    "%s: values %r" % (name, vals))
    # Steps: a line per rank (series_by: Rank), each over its own rows: x Step (C), y Computing (D)
    ws = wb["Steps"]
    spans = {}
    for i, row in enumerate(ws.iter_rows(min_row=2, values_only=True), start=2):
        spans.setdefault(row[0], [i, i])[1] = i
    # an x-y chart when every Step is a number; without ProfilerSteps (Step empty) a line chart, a point per rank
    numeric = all(isinstance(r[2], (int, float)) for r in ws.iter_rows(min_row=2, values_only=True))
    kind = "scatterChart" if numeric else "lineChart"
    ch = ws._charts[0] if len(ws._charts) == 1 else None
    if T.check(ch is not None and ch.tagname == kind, "Steps: one %s, %r" % (kind, [c.tagname for c in ws._charts])):
        T.check(ch.anchor._from.row == ws.max_row + 1 and ch.anchor._from.col == 0, "Steps: the chart under the table")
        got = [(s.tx.v, ((s.xVal or s.cat).numRef or (s.xVal or s.cat).strRef).f, (s.yVal or s.val).numRef.f)
               for s in ch.series]
        def cells(col, a, b):  # one cell is written without its range
            return "Steps!$%s$%d" % (col, a) if a == b else "Steps!$%s$%d:$%s$%d" % (col, a, col, b)
        want = [("Rank %s" % k, cells("C", a, b), cells("D", a, b)) for k, (a, b) in sorted(spans.items())]
        T.check(got == want, "Steps: a series per rank over its rows", "%r != %r" % (got, want))
        T.check(ch.legend is not None and ch.legend.position == "b", "Steps: the legend names the ranks, below")
    top = wb["Top kernels"]
    series = top._charts[0].series if top._charts else []
    if series:
        T.check(series[0].val.numRef.f == "'Top kernels'!$C$2:$C$16", "Top kernels: Total Time, %r"
                % series[0].val.numRef.f)
        T.check(top._charts[0].y_axis.title is not None, "Top kernels: the value axis has a title")
    # `type: top, top: 3` on Avg Time (D): three cells, not ten
    exprs = [r.formula[0] for rs in top.conditional_formatting._cf_rules.values() for r in rs if r.type == "expression"]
    T.check(exprs and "MIN(3," in exprs[0] and "$D$2:$D$16" in exprs[0], "top 3 rule %r" % exprs)


def check_pdf(path, work, cdir):
    """The workbook as LibreOffice prints it."""
    if not shutil.which("pdftotext"):
        return T.check(False, "pdftotext (poppler-utils) is not installed: scripts/setup installs it")
    out = os.path.join(work, "pdf")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    p = subprocess.run(["soffice", "-env:UserInstallation=file://" + os.path.join(work, "lo-profile"), "--headless",
                        "--convert-to", "pdf", "--outdir", out, path], capture_output=True, text=True, timeout=600)
    pdf = os.path.join(out, "review.pdf")
    if not T.check(p.returncode == 0 and os.path.exists(pdf), "soffice to PDF failed: %s" % p.stderr):
        return
    text = subprocess.run(["pdftotext", "-layout", pdf, "-"], capture_output=True, text=True).stdout
    pages = text.split("\f")
    if pages and not pages[-1].strip():
        pages.pop()
    T.check(all(pg.strip() for pg in pages), "an empty page among %d" % len(pages))
    T.check("###" not in text, "a cell shown as ### in the PDF")
    ids = ["review_summary", "review_top_kernels", "review_device_time", "review_steps", "review_op_statistic",
           "review_communication"]
    # About takes the first pages; then one page per report sheet, in order, its header on it
    report_pages = pages[-len(ids):]
    T.check(len(pages) >= len(ids) + 1, "%d pages for %d report sheets and About" % (len(pages), len(ids)))
    for rid, pg in zip(ids, report_pages):
        header = rows_of(os.path.join(cdir, rid + ".csv"))[0]
        words = " ".join(pg.split())
        T.check(all(h in words for h in header), "%s: its page lacks part of its header %r" % (rid, header))
    T.check("contents" in "".join(pages[:-len(ids)]), "About's pages list the contents")
    tk = report_pages[1]
    for row in rows_of(os.path.join(cdir, "review_top_kernels.csv"))[1:]:
        T.check(tk.count(row[0]) >= 2, "Top kernels page: %r %d times (table and bar label)" % (row[0], tk.count(row[0])))
    T.check("Total Time(us)" in " ".join(tk.split()[-12:]) or tk.count("Total Time(us)") >= 2,
            "Top kernels page: the value axis title")
    for k in (0, 2):
        pg = report_pages[k]
        for s in ("Computing(us)", "Exposed Communication(us)", "Free(us)"):
            T.check(pg.count(s) >= 2, "%s page: %r in the table and the legend" % (ids[k], s))
    # Steps: a line per rank, the legend naming the ranks, the value axis titled
    pg = report_pages[3]
    ranks = sorted({r[0] for r in rows_of(os.path.join(cdir, "review_steps.csv"))[1:]})
    T.check(all("Rank " + r in pg for r in ranks), "review_steps page: the legend names the ranks %r" % ranks)
    T.check(pg.count("Computing(us)") >= 2, "review_steps page: Computing(us) in the table and on the axis")


def main():
    usage = "openpyxl|libreoffice TRACEBOOK PUBLIC_DATA_DIR WORK_DIR"
    mode, exe, public, work = tbtest.args(usage, 4, 4)
    exe, public, work = (os.path.abspath(a) for a in (exe, public, work))
    data = [os.path.join(public, "ascend", "torch_npu_rank%d" % r) for r in (0, 1)]
    if not all(os.path.isdir(d) for d in data):
        tbtest.skip("the public data (%s) is not here" % public)
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
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    args = ["-dir", data[0], "-dir", data[1], "--spec", "builtin:review"]
    rdir, cdir = os.path.join(work, "review"), os.path.join(work, "csv")
    p = tbtest.run([exe, "report"] + args + ["-o", rdir])
    if p.returncode != 0:
        sys.exit("tracebook failed (%d): %s" % (p.returncode, p.stderr))
    written = sorted(os.listdir(rdir))
    T.check(written == sorted(["review.xlsx", "review.html", "tracebook_run.json"] +
                              [r + ".csv" for r in ("review_summary", "review_top_kernels", "review_device_time",
                                                    "review_steps", "review_op_statistic", "review_communication")]),
            "files %r" % written)
    xc.run(exe, os.getcwd(), cdir, args, "csv")
    book = os.path.join(rdir, "review.xlsx")
    with open(os.path.join(rdir, "tracebook_run.json")) as f:
        meta = json.load(f)
    if mode == "openpyxl":
        xc.check_openpyxl("review", book, meta, cdir, CHARTS)
        check_book(book)
        check_summary(exe, data, work, cdir)
    else:
        xc.check_libreoffice([("review", book, meta, cdir)], work)
        check_pdf(book, work, cdir)
    for p in T.problems[:50]:
        print("FAIL", p)
    print("%s: review.xlsx, %d problems" % (mode, len(T.problems)))
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
