#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# html_test.py - tracebook's HTML pages opened in a real browser.
#
# usage: html_test.py TRACEBOOK SAMPLES_DIR BROWSER_DIR WORK_DIR [CASE...]
#
# Each case runs `tracebook report` with -o into its own folder under
# WORK_DIR and opens the page in Debian's chromium, driven by playwright-core
# (BROWSER_DIR/check.js, its node_modules installed by `npm ci` in
# BROWSER_DIR: scripts/setup does it). What a reader sees is checked: no
# console error, no request leaves the page (every one is refused and
# counted), no dialog opens, every declared chart is an SVG with its marks,
# every table has the rows of its CSV twin cell for cell (or the first 1,000
# and the count), numbers are right-aligned, a click on a numeric header
# sorts the rows up then down, the filter box keeps the matching rows.
# Kernel names built to break out of the page (<script>, "onload=) show as
# text; a 100,000-row report stays under 512 KiB and loads within 5 s; the
# same inputs give the same bytes. compare.html puts the Summary first
# (regressions, then improvements, a bar per ratio); trend.html the verdicts
# first, then a line chart per charted key with a marker on the night a
# verdict fired; review.html (builtin:review) the Summary first, then the
# workbook's sheets. Screenshots of the pages are kept in WORK_DIR/shots
# (docs/html.md shows them).
#
# Exits 77 (skipped) only when node, chromium or playwright-core is absent.
import csv
import json
import os
import random
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

words = tbtest.args("TRACEBOOK SAMPLES_DIR BROWSER_DIR WORK_DIR [CASE...]", 4)
EXE, SAMPLES, BROWSER, WORK = (os.path.abspath(w) for w in words[:4])
NODE = shutil.which("node")
CHROMIUM = shutil.which("chromium")
if not NODE or not CHROMIUM:
    tbtest.skip("node or chromium is not installed (scripts/setup installs them)")
if not os.path.isdir(os.path.join(BROWSER, "node_modules", "playwright-core")):
    tbtest.skip("playwright-core is not installed: run `npm ci` in %s (scripts/setup does)" % BROWSER)

MAX_ROWS = 1000          # a table's cut (HTML_MAX_ROWS, docs/html.md)
SHOTS = os.path.join(WORK, "shots")
suite = tbtest.Suite(tbtest.Program(EXE), work=os.path.join(WORK, "cases"), clean=True)


def report(t, args, cwd=None):
    r = t.run("report", *args, "-o", t.out, cwd=cwd or SAMPLES)
    t.eq(r.rc, 0, "tracebook report %s: exit code\n%s" % (" ".join(args), r.err))
    return r


def browse(t, pages):
    """Opens each page ({"html": ..., "shot"/"top"/"sections": ...}) in chromium; returns check.js' findings."""
    lst = t.path("pages.json")
    with open(lst, "w") as f:
        json.dump(pages, f)
    # chromium's socket path must stay short: its temporary files go under /tmp, removed after
    tmp = tempfile.mkdtemp(prefix="tb-html-", dir="/tmp")
    try:
        r = tbtest.run([NODE, os.path.join(BROWSER, "check.js"), CHROMIUM, lst], cwd=t.cwd,
                       env=dict(t.env(), TMPDIR=tmp), timeout=300)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if r.rc != 0:
        raise AssertionError("check.js failed (%d): %s" % (r.rc, r.err))
    return json.loads(r.out)


def csv_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def number(s):
    return float(s) if s not in ("", "NaN") else None


def clean_page(t, page):
    """What every page must show: nothing on the console, no request, no dialog, one script."""
    t.eq(page["console"], [], "console errors and warnings")
    t.eq(page["errors"], [], "page errors")
    t.eq(page["requests"], [], "requests leaving the page")
    t.eq(page["dialogs"], [], "dialogs opened")
    t.eq(page["scripts"], 1, "script elements (the page's own only)")


def check_table(t, sec, twin):
    """The section's table against its CSV twin: header, every kept row, the count, the cut."""
    tb = sec["table"]
    want = csv_rows(twin)
    title = sec["title"]
    t.eq(tb["header"], want[0], "%s: header" % title)
    t.eq(tb["data_rows"], len(want) - 1, "%s: data-rows" % title)
    t.eq(tb["rows"], want[1:MAX_ROWS + 1], "%s: rows" % title)
    t.eq(tb["data_file"], os.path.basename(twin), "%s: data-file" % title)
    if len(want) - 1 > MAX_ROWS:
        t.check(sec["cut"] and ("first %d of %d rows" % (MAX_ROWS, len(want) - 1)) in sec["cut"] and
                os.path.basename(twin) in sec["cut"], "%s: the cut names the count and the CSV" % title, sec["cut"])
    else:
        t.eq(sec["cut"], None, "%s: no cut" % title)
    for i, num in enumerate(tb["numeric"]):
        if num and tb["align"]:
            t.eq(tb["align"][i], "right", "%s: column %s right-aligned" % (title, tb["header"][i]))


def check_sort(t, page):
    for sec, s in zip([x for x in page["sections"] if x["table"]], page["sorts"]):
        if not s:
            continue
        up, down = s["clicks"]
        vals = [number(v) for v in sec["table"]["rows"] and [r[s["column"]] for r in sec["table"]["rows"]]]
        nums = sorted(v for v in vals if v is not None)
        blanks = [None] * (len(vals) - len(nums))
        t.eq(up["sort"], "ascending", "%s: first click sorts up" % sec["title"])
        t.eq([number(v) for v in up["values"]], nums + blanks, "%s: rows sorted up" % sec["title"])
        t.eq(down["sort"], "descending", "%s: second click sorts down" % sec["title"])
        t.eq([number(v) for v in down["values"]], nums[::-1] + blanks, "%s: rows sorted down" % sec["title"])
    for sec, f in zip([x for x in page["sections"] if x["table"]], page["filters"]):
        if not f:
            continue
        want = [r[0] for r in sec["table"]["rows"] if f["query"].lower() in "".join(r).lower()]
        t.eq(sorted(f["shown"]), sorted(want), "%s: the filter keeps the matching rows" % sec["title"])


# The sample spec: a section per report in spec order, each chart kind with
# its marks (categories x series; a pie's slices), every table its CSV's.
SAMPLE_SECTIONS = [
    ("Device time by kind", "device_time", 3),       # 1 device x 3 stacked series
    ("Top kernels by total time", "top_kernels", 10),
    ("Operator statistics", "op_statistic", None),   # a slice per row (OP Type and core type)
    ("Step time by part", "step_parts", 4),          # 2 steps x 2 series (the step cut short left out)
    ("Computing time per step", "step_computing", 2),
    ("Kernel launches", "task_list", 30),            # the first 30 of 212 launches
]


@suite.case()
def case_sample(t):
    report(t, ["-dir", "ascend_small", "--spec", "specs/html_report.yaml"])
    os.makedirs(os.path.join(SHOTS, "profile"), exist_ok=True)
    page, = browse(t, [{"html": os.path.join(t.out, "profile.html"), "top": os.path.join(SHOTS, "profile.png"),
                        "sections": os.path.join(SHOTS, "profile")}])
    clean_page(t, page)
    t.eq(page["title"], "Profile review", "the page's title (html.title)")
    t.check(page["load_ms"] < 5000, "loads within 5 s", page["load_ms"])
    t.eq([s["title"] for s in page["sections"]], [s[0] for s in SAMPLE_SECTIONS], "sections in spec order")
    for sec, (title, rid, marks) in zip(page["sections"], SAMPLE_SECTIONS):
        if marks is None:  # a pie keeps the first 30 rows and adds the rest as one slice (docs/html.md)
            rows = len(csv_rows(os.path.join(t.out, rid + ".csv"))) - 1
            marks = min(rows, 30) + (rows > 30)
        t.eq([c["marks"] for c in sec["charts"]], [marks], "%s: one chart with its marks" % title)
        t.check(all(c["titles"] and all(x for x in c["titles"]) for c in sec["charts"]), "%s: every mark has a "
                "tooltip" % title)
        check_table(t, sec, os.path.join(t.out, rid + ".csv"))
    # a tooltip names the full category and the exact value as the CSV writes it
    top = csv_rows(os.path.join(t.out, "top_kernels.csv"))
    name, total = top[1][top[0].index("Name")], top[1][top[0].index("Total Time(us)")]
    t.eq(page["sections"][1]["charts"][0]["titles"][0], "%s \u2014 Total Time(us): %s" % (name, total),
         "the first bar's tooltip")
    check_sort(t, page)
    with open(os.path.join(t.out, "tracebook_run.json")) as f:
        meta = json.load(f)
    t.eq(meta.get("page"), "profile.html", "tracebook_run.json names the page")
    t.check(all("profile.html" in r["files"] for r in meta["reports"]), "each report lists the page")


@suite.case()
def case_same_bytes(t):
    """The same inputs give the same page (two runs, two folders)."""
    report(t, ["-dir", "ascend_small", "--spec", "specs/html_report.yaml"])
    other = t.mkdir("again")
    r = t.run("report", "-dir", "ascend_small", "--spec", "specs/html_report.yaml", "-o", other, cwd=SAMPLES)
    t.eq(r.rc, 0, "second run")
    with open(os.path.join(t.out, "profile.html"), "rb") as a, open(os.path.join(other, "profile.html"), "rb") as b:
        t.check(a.read() == b.read(), "the two pages are byte for byte the same")


HOSTILE = ["<script>alert(1)</script>", "\"onload=alert(2) x=\"", "<img src=x onerror=alert(3)>",
           "a & b <c> 'd'"]


def hostile_trace(path):
    """A Kineto trace whose kernels carry the hostile names: kernel i runs (i + 1) * 10 us, twice."""
    ev = []
    ts = 1000.0
    for rep in range(2):
        for i, name in enumerate(HOSTILE):
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts,
                       "dur": (i + 1) * 10.0, "args": {"device": 0, "stream": 7, "correlation": len(ev) + 1}})
            ts += 100
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev, "baseTimeNanoseconds": 1700000000000000000}, f)


@suite.case()
def case_hostile_names(t):
    d = t.mkdir("trace")
    hostile_trace(os.path.join(d, "trace.json"))
    spec = t.path("hostile.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nhtml: {title: '<script>alert(4)</script> \"onload='}\noutputs: [csv, html]\n"
                "reports:\n  - use: top_kernels\n    title: '<b onmouseover=alert(5)>kernels</b>'\n"
                "    description: '</p><script>alert(6)</script>'\n"
                "    xlsx: {chart: {type: bar, categories: Name, values: Total Time}}\n"
                "  - use: top_kernels\n    id: kernels_pie\n    xlsx: {chart: {type: pie, categories: Name, "
                "values: Total Time}}\n")
    report(t, ["-dir", d, "--spec", spec], cwd=t.cwd)
    page, = browse(t, [{"html": os.path.join(t.out, "report.html"), "top": os.path.join(SHOTS, "hostile.png")}])
    clean_page(t, page)
    t.eq(page["title"], "<script>alert(4)</script> \"onload=", "the title as text")
    t.eq(page["sections"][0]["title"], "<b onmouseover=alert(5)>kernels</b>", "the report's title as text")
    names = [r[0] for r in page["sections"][0]["table"]["rows"]]
    t.eq(sorted(names), sorted(HOSTILE), "the kernel names as text in the table")
    for sec in page["sections"]:
        titles = sec["charts"][0]["titles"]
        t.eq(sorted(x.split(" \u2014 ")[0] for x in titles), sorted(HOSTILE), "%s: names in the tooltips"
             % sec["title"])
        check_table(t, sec, os.path.join(t.out, ("top_kernels" if sec is page["sections"][0] else "kernels_pie")
                                         + ".csv"))


LARGE_SPEC = """tracebook: 1
outputs: [csv, html]
reports:
  - id: rows_100k
    title: One hundred thousand rows
    sql: |
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
      SELECT i AS "Row", 'kernel_' || (i % 977) AS "Name", (i * 7919) % 100003 AS "Duration:dur_ns",
             (i % 101) * 0.5 AS "Share:ratio_%"
      FROM n
    xlsx:
      chart: {type: column, categories: Name, values: [Duration]}
"""


@suite.case()
def case_large(t):
    spec = t.path("large.yaml")
    with open(spec, "w") as f:
        f.write(LARGE_SPEC)
    report(t, ["-dir", "ascend_small", "--spec", spec])
    html = os.path.join(t.out, "report.html")
    size = os.path.getsize(html)
    t.check(size < 512 * 1024, "a 100,000-row report's page stays under 512 KiB", size)
    page, = browse(t, [{"html": html}])
    clean_page(t, page)
    t.check(page["load_ms"] < 5000, "loads within 5 s", page["load_ms"])
    sec, = page["sections"]
    t.eq(len(sec["table"]["rows"]), MAX_ROWS, "the table keeps the first 1,000 rows")
    check_table(t, sec, os.path.join(t.out, "rows_100k.csv"))
    t.eq([c["marks"] for c in sec["charts"]], [30], "the chart draws the first 30 rows")
    check_sort(t, page)


@suite.case()
def case_format_flag(t):
    """--format html sends a spec's reports to report.html only: no CSV to name, the rows all there."""
    report(t, ["-dir", "ascend_small", "--spec", "builtin:top_kernels", "--spec", "builtin:op_statistic",
               "--format", "html"])
    t.eq(sorted(os.listdir(t.out)), ["report.html", "tracebook_run.json"], "the files written")
    page, = browse(t, [{"html": os.path.join(t.out, "report.html")}])
    clean_page(t, page)
    t.eq(page["title"], "tracebook report", "the default title")
    with open(os.path.join(t.out, "tracebook_run.json")) as f:
        meta = json.load(f)
    t.eq([s["title"] for s in page["sections"]], [r["title"] for r in meta["reports"]], "a section per report, in order")
    for sec, r in zip(page["sections"], meta["reports"]):
        t.eq((len(sec["table"]["rows"]), sec["table"]["data_rows"], sec["table"]["data_file"]), (r["rows"], r["rows"],
             None), "%s: every row, no CSV named" % sec["title"])
        t.eq(sec["charts"], [], "%s: no chart declared, none drawn" % sec["title"])
    check_sort(t, page)


EXTREME_SPEC = """tracebook: 1
outputs: [csv, html]
reports:
  - id: extreme
    sql: SELECT 'a' AS n, 1e308 AS v UNION ALL SELECT 'b', -1e308 UNION ALL SELECT 'c', 9e999
         UNION ALL SELECT 'd', NULL UNION ALL SELECT 'e', 0.0 / 0
    xlsx: {chart: {type: bar, categories: n, values: [v]}}
  - id: extreme_pie
    sql: SELECT 'a' AS n, 1e308 AS v UNION ALL SELECT 'b', 1e308
    xlsx: {chart: {type: pie, categories: n, values: [v]}}
  - id: extreme_stack
    sql: SELECT 'a' AS n, 1e308 AS v, 1e308 AS w UNION ALL SELECT 'b', -1e308, -1e308
    xlsx: {chart: {type: stacked_column, categories: n, values: [v, w]}}
  - id: tiny
    sql: SELECT 'a' AS n, 1e-300 AS v UNION ALL SELECT 'b', 3e-300
    xlsx: {chart: {type: line, categories: n, values: [v]}}
"""


@suite.case()
def case_extreme_values(t):
    """The largest doubles, infinities, NaN, NULL and the tiniest values: charts drawn with finite coordinates."""
    spec = t.path("extreme.yaml")
    with open(spec, "w") as f:
        f.write(EXTREME_SPEC)
    report(t, ["-dir", "ascend_small", "--spec", spec])
    page, = browse(t, [{"html": os.path.join(t.out, "report.html")}])
    clean_page(t, page)  # an "inf" or "nan" coordinate is a console error
    t.eq([[c["marks"] for c in s["charts"]] for s in page["sections"]], [[2], [2], [4], [2]],
         "a mark per finite value (none for inf, NaN, NULL)")
    for sec, rid in zip(page["sections"], ["extreme", "extreme_pie", "extreme_stack", "tiny"]):
        check_table(t, sec, os.path.join(t.out, rid + ".csv"))
    with open(os.path.join(t.out, "report.html"), encoding="utf-8") as f:
        html = f.read()
    t.check(not re.search(r'="[^"]*(nan|inf)[^"]*"', html), "no attribute holds inf or nan")


@suite.case()
def case_refused(t):
    """A chart column the rows lack, two pages asked for, a page named as an input: exit 2, no page left."""
    bad = t.path("bad.yaml")
    with open(bad, "w") as f:
        f.write("tracebook: 1\noutputs: html\nreports:\n  - id: bad_chart\n    sql: SELECT 'a' AS name, 1 AS x\n"
                "    xlsx: {chart: {type: column, categories: name, values: [y]}}\n")
    r = t.run("report", "-dir", "ascend_small", "--spec", bad, "-o", t.out, cwd=SAMPLES)
    t.eq((r.rc, r.err), (2, "tracebook: error: %s/report.html: report 'bad_chart': chart values column 'y' is not "
                            "in its rows\n" % t.out), "a chart column the rows lack")
    t.eq(os.listdir(t.out), [], "nothing left in the output folder")
    specs = []
    for name in ("a", "b"):
        specs.append(t.path(name + ".yaml"))
        with open(specs[-1], "w") as f:
            f.write("tracebook: 1\nhtml: {file: %s.html}\noutputs: html\nreports:\n  - id: r_%s\n"
                    "    sql: SELECT 1 AS x\n" % (name, name))
    r = t.run("report", "-dir", "ascend_small", "--spec", specs[0], "--spec", specs[1], "-o", t.out, cwd=SAMPLES)
    t.eq((r.rc, r.err), (2, "tracebook: error: specs %s and %s name different pages ('a.html', 'b.html'): a run "
                            "writes one\n" % tuple(specs)), "two specs, two pages")
    t.eq(os.listdir(t.out), [], "nothing left in the output folder")
    # a spec whose page would be written over the spec itself
    own = os.path.join(t.out, "self.html")
    with open(own, "w") as f:
        f.write("tracebook: 1\nhtml: {file: self.html}\noutputs: html\nreports:\n  - {id: r, sql: SELECT 1 AS x}\n")
    r = t.run("report", "-dir", "ascend_small", "--spec", own, "-o", t.out, cwd=SAMPLES)
    t.eq(r.rc, 2, "a page named as the spec: exit code")
    t.check("refusing to replace an input file" in r.err and own in r.err, "a page named as the spec", r.err)
    t.eq(os.listdir(t.out), ["self.html"], "the spec is left as it was")


def slowed_run(path, slow, fast):
    """The Ascend sample with kernel slow 1.5 times slower and those starting with fast 0.8 times as long."""
    with open(os.path.join(SAMPLES, "ascend_small", "trace_view.json")) as f:
        events = json.load(f)
    for e in events:
        if e.get("ph") == "X" and "Task Type" in e.get("args", {}):
            if e["name"] == slow:
                e["dur"] = round(float(e["dur"]) * 1.5, 3)
            elif e["name"].startswith(fast):
                e["dur"] = round(float(e["dur"]) * 0.8, 3)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "trace_view.json"), "w") as f:
        json.dump(events, f)


@suite.case()
def case_compare(t):
    """compare.html: the Summary first (regressions, then improvements, bars of their ratios), a section per report."""
    new = t.mkdir("new")
    slowed_run(new, "aclnnMm_MatMulV3_MatMulV3", "aclnnForeachAdd")
    r = t.run("compare", "--base", os.path.join(SAMPLES, "ascend_small"), "--new", new, "--spec",
              os.path.join(SAMPLES, "specs", "nightly.yaml"), "-o", t.out)
    t.eq(r.rc, 0, "compare: exit code\n%s" % r.err)
    page, = browse(t, [{"html": os.path.join(t.out, "compare.html"), "top": os.path.join(SHOTS, "compare.png")}])
    clean_page(t, page)
    with open(os.path.join(t.out, "tracebook_run.json")) as f:
        meta = json.load(f)
    t.eq(meta.get("page"), "compare.html", "tracebook_run.json names the page")
    summary = page["sections"][0]
    t.eq(summary["title"], "Summary", "the Summary comes first")
    check_table(t, summary, os.path.join(t.out, "compare_summary.csv"))
    kinds = [row[0] for row in summary["table"]["rows"]]
    t.check(kinds and kinds[0] == "regression" and kinds == sorted(kinds, key=lambda k: k != "regression"),
            "regressions first, then improvements", kinds)
    t.eq(kinds.count("regression"), meta["regression_count"], "every regression in the Summary")
    t.eq([c["marks"] for c in summary["charts"]], [len(kinds)], "a bar per regression and improvement")
    want = ["%s \u00b7 %s \u00b7 %s \u2014 Ratio: %s" % (row[2], row[3], row[1], row[7])
            for row in summary["table"]["rows"][:30]]
    t.eq(summary["charts"][0]["titles"], want, "each bar names its key, column and report and its ratio")
    t.eq(summary["charts"][0]["classes"], ["mark " + k for k in kinds[:30]], "each bar's class is its kind")
    red, green = "rgb(225, 87, 89)", "rgb(89, 161, 79)"
    t.eq(summary["charts"][0]["fills"], [red if k == "regression" else green for k in kinds[:30]],
         "regressions red, improvements green")
    # the ratios on a scale of their own span around 1 (chart_series_test.py checks a narrow one):
    # ticks from below the smallest shown ratio (and 1) to above the largest, the axis titled "x base"
    shown = [float(row[7]) for row in summary["table"]["rows"][:30]] + [1.0]
    ticks = [float(x) for x in summary["charts"][0]["tick_labels"]]
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 0
    t.check(ticks and ticks[0] <= min(shown) and ticks[-1] >= max(shown)
            and ticks[-1] - ticks[0] <= 1.2 * (max(shown) - min(shown)) + 2 * step,
            "ratio axis spans the ratios and 1 with a margin", (ticks, min(shown), max(shown)))
    t.eq(summary["charts"][0]["axis_labels"][:1], ["x base"], "the ratio axis is titled x base")
    reports = [e for e in meta["reports"] if "skipped" not in e]
    t.eq(len(page["sections"]), len(reports) + 1, "the Summary and a section per compared report")
    for sec, e in zip(page["sections"][1:], reports):  # in spec order, each with its CSV's rows
        check_table(t, sec, os.path.join(t.out, e["id"] + "_compare.csv"))
    check_sort(t, page)


# builtin:review's page: the Summary first, as the workbook's Summary sheet
# (the same rows: review_test.py checks the sheet against the same CSV).
REVIEW_SECTIONS = [
    ("Summary", "review_summary", 6),                # 2 ranks x 3 stacked series
    ("Top kernels", "review_top_kernels", 15),       # a bar per kernel name
    ("Device time", "review_device_time", 6),        # 2 rank/devices x 3 stacked series
    ("Steps", "review_steps", 4),                    # 2 ranks x 2 complete steps: a line per rank
    ("Operator statistics", "review_op_statistic", None),
    ("Communication statistics", "review_communication", None),
]


@suite.case()
def case_review(t):
    """review.html beside review.xlsx: the Summary first, its charts with their marks, every table its CSV's."""
    report(t, ["-dir", "torch_npu_2rank", "--spec", "builtin:review"])
    t.check(os.path.exists(os.path.join(t.out, "review.xlsx")), "review.xlsx beside review.html")
    os.makedirs(os.path.join(SHOTS, "review"), exist_ok=True)
    page, = browse(t, [{"html": os.path.join(t.out, "review.html"), "top": os.path.join(SHOTS, "review.png"),
                        "sections": os.path.join(SHOTS, "review")}])
    clean_page(t, page)
    t.eq(page["title"], "Performance review", "the page's title")
    t.eq([s["title"] for s in page["sections"]], [s[0] for s in REVIEW_SECTIONS], "the Summary first, then the "
         "workbook's sheets in order")
    for sec, (title, rid, marks) in zip(page["sections"], REVIEW_SECTIONS):
        t.eq([c["marks"] for c in sec["charts"]], [marks] if marks else [], "%s: its chart's marks" % title)
        t.check(all(all(x for x in c["titles"]) for c in sec["charts"]), "%s: every mark has a tooltip" % title)
        check_table(t, sec, os.path.join(t.out, rid + ".csv"))
    summary = csv_rows(os.path.join(t.out, "review_summary.csv"))
    t.eq([r[0] for r in page["sections"][0]["table"]["rows"]], ["0", "1"], "the Summary: a row per rank")
    t.eq(summary[0][:3], ["Rank", "Steps", "Step Time(us)"], "the Summary's header")
    # the bars name each kernel in full with its exact total
    top = csv_rows(os.path.join(t.out, "review_top_kernels.csv"))
    t.eq(page["sections"][1]["charts"][0]["titles"], ["%s \u2014 Total Time(us): %s" % (r[0], r[2]) for r in top[1:]],
         "each bar's tooltip: the full name and the total")
    # the steps: a line per rank (series_by: Rank) over its own steps, the legend naming the ranks
    steps = csv_rows(os.path.join(t.out, "review_steps.csv"))
    per_rank = [sum(1 for r in steps[1:] if r[0] == k) for k in ("0", "1")]
    chart = page["sections"][3]["charts"][0]
    t.eq(chart["lines"], per_rank, "Steps: a line per rank, a point per complete step")
    t.eq(chart["legend_names"], ["Rank 0", "Rank 1"], "Steps: the legend names the ranks")
    check_sort(t, page)


SLOW_KERNEL = "aclnnMm_MatMulV3_MatMulV3"
SLOW_KEY = SLOW_KERNEL + " | MatMulV3"  # top_kernels' key: name | type


def jittered_night(path, seed, slow):
    """The Ascend sample with every kernel's time jittered by up to 3% (seeded) and SLOW_KERNEL slow times slower."""
    with open(os.path.join(SAMPLES, "ascend_small", "trace_view.json")) as f:
        events = json.load(f)
    rnd = random.Random(seed)
    per = {}
    for e in events:
        if e.get("ph") == "X" and "Task Type" in e.get("args", {}):
            n = e["name"]
            per.setdefault(n, 1 + rnd.uniform(-0.03, 0.03))
            e["dur"] = round(float(e["dur"]) * per[n] * (slow if n == SLOW_KERNEL else 1), 3)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "trace_view.json"), "w") as f:
        json.dump(events, f)


@suite.case()
def case_trend(t):
    """trend.html: the verdicts first, then a line chart per charted key with a marker on the night that regressed."""
    history = t.path("history.db")
    for k in range(1, 8):
        night = t.mkdir("n%d" % k)
        jittered_night(night, k, 1.5 if k == 7 else 1.0)
        r = t.run("history", "add", "--history", history, "-dir", night, "--spec", "builtin:top_kernels",
                  "--label", "night%d" % k, "-q")
        t.eq(r.rc, 0, "history add night%d\n%s" % (k, r.err))
    r = t.run("history", "report", "--history", history, "--spec", "builtin:top_kernels", "-o", t.out)
    t.eq(r.rc, 0, "history report: exit code\n%s" % r.err)
    page, = browse(t, [{"html": os.path.join(t.out, "trend.html"), "top": os.path.join(SHOTS, "trend.png"),
                        "sections": t.mkdir("trend-sections")}])
    shutil.copy(os.path.join(t.path("trend-sections"), "section-1.png"), os.path.join(SHOTS, "trend-charts.png"))
    clean_page(t, page)
    with open(os.path.join(t.out, "tracebook_run.json")) as f:
        meta = json.load(f)
    t.eq(meta.get("page"), "trend.html", "tracebook_run.json names the page")
    verdicts, trend = page["sections"]
    t.eq(verdicts["title"], "Verdicts", "the verdicts come first")
    check_table(t, verdicts, os.path.join(t.out, "history_verdicts.csv"))
    t.eq(sorted((r[0], r[2], r[9]) for r in verdicts["table"]["rows"]),
         [("night7", SLOW_KEY, "regression")] * 2, "the slowed kernel regressed on night7 (total and average)")
    check_table(t, trend, os.path.join(t.out, "top_kernels_trend_chart.csv"))
    keys = csv_rows(os.path.join(t.out, "top_kernels_trend_chart.csv"))[0][1:]
    t.eq(len(trend["charts"]), len(keys), "a line chart per charted key")
    t.eq([c["marks"] for c in trend["charts"]], [7] * len(keys), "a point per night in each chart")
    t.eq([c["verdicts"] for c in trend["charts"]],
         [["verdict regression: night7: regression"] if k == SLOW_KEY else [] for k in keys],
         "a marker on night7 of the slowed kernel's chart only")
    check_sort(t, page)


suite.main(words[4:])
