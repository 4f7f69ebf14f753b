#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# chart_series_test.py - a line per rank (chart series_by) and ratio charts around 1.
#
# usage: chart_series_test.py TRACEBOOK TRACEBOOK_GEN WORK_DIR [CASE...]
#
# A generated three-rank torch_npu profile whose ranks ran different steps
# (tracebook-gen cuts each rank's trace at its own step) is reported with a
# spec whose per-step line chart has `series_by: Rank`. The workbook's chart
# (openpyxl) is an x-y chart with one series per rank, named "Rank r", each
# over exactly that rank's rows of the sheet (its Step cells as x, its
# Computing cells as y); with two value columns, one series per rank and
# column. The page's chart (html, read as text) has one polyline per rank
# with a point per row of the rank, and a legend naming the ranks. Rows not
# grouped by the column fail the run, naming the column, the value and the
# row, and leave no output; series_by on a chart other than a line is a spec
# error. On step_trace_time's Rank ID (a :rank column) it draws a line per
# rank; with one rank loaded (no Rank ID in the rows) the chart and the page
# are those of the same spec without series_by. compare of two nights of the generated profile, one kernel type
# 30% slower: compare.xlsx's Summary chart has its value axis around 1
# (from below the smallest ratio, not 0, to above the largest), crossing the
# categories at 1, titled "x base"; compare.html's bars start at 1 on an
# axis of the same span. LibreOffice (when installed) prints both workbooks
# to PDF with the ranks' names and "x base" on the pages.
import csv
import os
import re
import shutil
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

try:
    import openpyxl  # noqa: E402
except ImportError:
    tbtest.rerun_with_system_python("import openpyxl")
    tbtest.skip("python3-openpyxl is not installed")

words = tbtest.args("TRACEBOOK TRACEBOOK_GEN WORK_DIR [CASE...]", 3)
EXE, GEN, WORK = (os.path.abspath(w) for w in words[:3])
suite = tbtest.Suite(tbtest.Program(EXE), work=WORK, clean=True)
gen = tbtest.Program(GEN, code=0)

SPEC = """tracebook: 1
outputs: [xlsx, html, csv]
reports:
  - id: steps
    sql: |
      SELECT rankId AS "Rank", step AS "Step", computing AS "Computing:dur_ns", free AS "Free:dur_ns"
      FROM step_trace_time ORDER BY %s
    xlsx:
      chart: {type: line, categories: Step, values: %s, series_by: Rank, position: below}
"""


def profile(t, name="prof", *night):
    path = t.path(name)
    if not os.path.isdir(path):
        gen("--kind", "torch_npu_dir", "--events", "20000", "--ranks", "3", *night, "-o", path)
    return path


def csv_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def rank_rows(rows):
    """{rank: (first sheet row, last sheet row)} of the CSV's data rows (the sheet has the header in row 1)."""
    spans = {}
    for i, r in enumerate(rows[1:], start=2):
        a, _ = spans.get(r[0], (i, i))
        spans[r[0]] = (a, i)
    return spans


def pdf_text(t, book):
    """The workbook printed by LibreOffice, as text; None when LibreOffice is absent."""
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if not soffice or not shutil.which("pdftotext"):
        return None
    pdf_dir = t.mkdir("pdf")
    r = tbtest.run([soffice, "--headless", "-env:UserInstallation=file://" + t.path("lo-profile"),
                    "--convert-to", "pdf", "--outdir", pdf_dir, book], env=t.env(), timeout=300)
    pdf = os.path.join(pdf_dir, os.path.splitext(os.path.basename(book))[0] + ".pdf")
    t.check(r.rc == 0 and os.path.exists(pdf), "LibreOffice prints %s" % os.path.basename(book), r.err)
    if not os.path.exists(pdf):
        return None
    return tbtest.run(["pdftotext", "-layout", pdf, "-"], timeout=120).out


def run_spec(t, order, values):
    spec = t.path("spec.yaml")
    with open(spec, "w") as f:
        f.write(SPEC % (order, values))
    return t.run("report", "-dir", profile(t), "--spec", spec, "-o", t.out)


@suite.case()
def case_line_per_rank(t):
    """series_by: Rank: a series per rank over its own rows, in the workbook and the page."""
    r = run_spec(t, "rankId, step", "Computing")
    t.eq(r.rc, 0, "report: exit code\n%s" % r.err)
    rows = csv_rows(os.path.join(t.out, "steps.csv"))
    spans = rank_rows(rows)
    t.eq(sorted(spans), ["0", "1", "2"], "three ranks")
    t.check(len({tuple(r[1] for r in rows[1:] if r[0] == k) for k in spans}) > 1,
            "the ranks ran different steps (the chart must follow each rank's own)")
    wb = openpyxl.load_workbook(os.path.join(t.out, "tracebook.xlsx"))
    ws = wb["steps"]
    t.eq(len(ws._charts), 1, "one chart")
    ch = ws._charts[0]
    t.eq(ch.tagname, "scatterChart", "an x-y chart: each rank's points at their own steps")
    t.eq(len(ch.series), 3, "a series per rank")
    for s, (k, (a, b)) in zip(ch.series, sorted(spans.items())):
        t.eq(s.tx.v, "Rank " + k, "series named by the rank")
        t.eq(s.xVal.numRef.f, "steps!$B$%d:$B$%d" % (a, b), "rank %s: its Step cells" % k)
        t.eq(s.yVal.numRef.f, "steps!$C$%d:$C$%d" % (a, b), "rank %s: its Computing cells" % k)
    t.eq(ch.legend.position, "b", "the legend under the plot")
    page = open(os.path.join(t.out, "report.html"), encoding="utf-8").read()
    lines = re.findall(r'<polyline[^>]* points="([^"]*)"', page)
    t.eq([len(p.split()) for p in lines], [b - a + 1 for _, (a, b) in sorted(spans.items())],
         "a polyline per rank, a point per row of the rank")
    legend = re.search(r'<g class="legend">(.*?)</g>', page)
    t.eq(re.findall(r"<text[^>]*>([^<]*)", legend.group(1)) if legend else None, ["Rank 0", "Rank 1", "Rank 2"],
         "the legend names the ranks")
    text = pdf_text(t, os.path.join(t.out, "tracebook.xlsx"))
    if text is not None:
        t.check(all("Rank %d" % k in text for k in range(3)), "the printed chart's legend names the ranks")


@suite.case()
def case_two_values(t):
    """series_by with two value columns: a series per rank and column."""
    r = run_spec(t, "rankId, step", "[Computing, Free]")
    t.eq(r.rc, 0, "report: exit code\n%s" % r.err)
    spans = rank_rows(csv_rows(os.path.join(t.out, "steps.csv")))
    ch = openpyxl.load_workbook(os.path.join(t.out, "tracebook.xlsx"))["steps"]._charts[0]
    want = [("Rank %s \u00b7 %s" % (k, h), col, a, b) for k, (a, b) in sorted(spans.items())
            for h, col in (("Computing(us)", "C"), ("Free(us)", "D"))]
    got = [(s.tx.v, re.sub(r"steps!\$([A-Z])\$(\d+):.*", r"\1", s.yVal.numRef.f),
            int(re.search(r"\$(\d+):", s.yVal.numRef.f).group(1)), int(s.yVal.numRef.f.rsplit("$", 1)[1]))
           for s in ch.series]
    t.eq(got, want, "a series per rank and value column, over the rank's rows")
    page = open(os.path.join(t.out, "report.html"), encoding="utf-8").read()
    t.eq(len(re.findall(r"<polyline", page)), 6, "six lines on the page")


@suite.case()
def case_not_grouped(t):
    """Rows not grouped by the series_by column fail the run, naming the column, and leave nothing."""
    r = run_spec(t, "step, rankId", "Computing")
    t.check(r.rc != 0, "a failed run", r.rc)
    t.check("chart series_by column 'Rank': the rows are not grouped by it" in r.err and "order the rows by 'Rank'"
            in r.err, "the message names the column and the fix", r.err)
    t.eq(sorted(os.listdir(t.out)), [], "no output left")


@suite.case()
def case_spec_errors(t):
    """series_by on a bar chart, or without categories, is refused when the spec is read."""
    for chart, msg in (("{type: bar, categories: Step, values: Computing, series_by: Rank}",
                        "'series_by' draws a line per value of a column: it needs chart type line, not bar"),
                       ("{type: line, values: Computing, series_by: Rank}",
                        "'series_by' needs 'categories'")):
        spec = t.path("bad.yaml")
        with open(spec, "w") as f:
            f.write("tracebook: 1\nreports:\n  - id: s\n    sql: SELECT 1 AS Step, 2 AS Computing, 3 AS Rank\n"
                    "    xlsx:\n      chart: %s\n" % chart)
        r = t.run("report", "-dir", profile(t), "--spec", spec, "-o", t.out)
        t.eq(r.rc, 3, "a spec error: exit 3\n%s" % r.err)
        t.check("bad.yaml:6:" in r.err and msg in r.err, "file, line and problem", r.err)


def chart_xml(book):
    with zipfile.ZipFile(book) as z:
        return z.read("xl/charts/chart1.xml").decode()


@suite.case()
def case_rank_column(t):
    """series_by on step_trace_time's Rank ID (a :rank column): a line per rank; one rank: one line, as without."""
    for name, by in (("by", ", series_by: Rank ID"), ("plain", "")):
        with open(t.path(name + ".yaml"), "w") as f:
            f.write("tracebook: 1\noutputs: [xlsx, html]\nreports:\n  - use: step_trace_time\n    xlsx:\n"
                    "      chart: {type: line, categories: Step, values: Computing%s}\n" % by)
    spec = t.path("by.yaml")
    r = t.run("report", "-dir", profile(t), "--spec", spec, "-o", t.path("three"))
    t.eq(r.rc, 0, "three ranks: exit code\n%s" % r.err)
    ws = openpyxl.load_workbook(os.path.join(t.path("three"), "tracebook.xlsx")).worksheets[1]
    t.eq([s.tx.v for s in ws._charts[0].series], ["Rank ID 0", "Rank ID 1", "Rank ID 2"], "a series per rank")
    one = profile(t, "one", "--ranks", "1")
    outs = {}
    for name in ("by", "plain"):
        r = t.run("report", "-dir", one, "--spec", t.path(name + ".yaml"), "-o", t.path("one-" + name))
        t.eq(r.rc, 0, "one rank, %s: exit code\n%s" % (name, r.err))
        outs[name] = (chart_xml(os.path.join(t.path("one-" + name), "tracebook.xlsx")),
                      open(os.path.join(t.path("one-" + name), "report.html"), encoding="utf-8").read()
                      .replace(t.path(name + ".yaml"), "SPEC"))  # the headline names the spec
    t.check(outs["by"] == outs["plain"], "one rank: the chart and the page as without series_by")
    t.eq(len(re.findall(r"<polyline", outs["by"][1])), 1, "one rank: one line")


@suite.case()
def case_ratio_axis(t):
    """compare: the Summary's ratio bars on an axis around 1, crossing at 1, titled x base."""
    base = profile(t, "base")
    new = profile(t, "new", "--noise-seed", "2", "--slow", "MatMulV3=30")
    spec = t.path("cmp.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nreports:\n  - use: top_kernels\n  - use: op_statistic\n")
    r = t.run("compare", "-base", base, "-new", new, "--spec", spec, "-o", t.out)
    t.check(r.rc in (0, 8), "compare ran\n%s" % r.err, r.rc)
    rows = csv_rows(os.path.join(t.out, "compare_summary.csv"))
    ratios = [float(x[7]) for x in rows[1:] if x[7] not in ("", "inf", "NaN")] + [1.0]
    lo, hi = min(ratios), max(ratios)
    t.check(lo > 0.5 and hi < 1.6, "the ratios are near 1 (the test needs a narrow span)", (lo, hi))
    ws = openpyxl.load_workbook(os.path.join(t.out, "compare.xlsx"))["Summary"]
    ch = ws._charts[0]
    val = ch.y_axis  # openpyxl: a bar chart's value axis
    t.check(val.scaling.min is not None and 0 < val.scaling.min <= lo, "axis from below the ratios, not 0",
            (val.scaling.min, lo))
    t.check(val.scaling.max is not None and hi <= val.scaling.max <= hi + (hi - val.scaling.min),
            "axis to above the ratios", (val.scaling.max, hi))
    t.eq(val.crossesAt, None, "the value axis itself crosses where the categories say")
    t.eq(ch.x_axis.crossesAt, 1.0, "the categories cross the values at 1: bars start at 1")
    title = "".join(r.t for p in val.title.tx.rich.p for r in (p.r or [])) if val.title else None
    t.eq(title, "x base", "the value axis titled x base")
    page = open(os.path.join(t.out, "compare.html"), encoding="utf-8").read()
    svg = re.search(r'<svg[^>]*class="chart".*?</svg>', page, re.S).group(0)
    ticks = [float(x) for x in re.findall(r'<text class="tick"[^>]*>([^<]*)<', svg)]
    t.check(ticks and 0 < ticks[0] <= lo and ticks[-1] >= hi, "the page's axis around 1 too", (ticks, lo, hi))
    t.check(">x base</text>" in svg, "the page's axis titled x base")
    text = pdf_text(t, os.path.join(t.out, "compare.xlsx"))
    if text is not None:
        t.check("x base" in text, "the printed Summary chart's axis title")


suite.main(words[3:])
