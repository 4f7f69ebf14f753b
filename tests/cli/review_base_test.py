#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# review_base_test.py - the review's Summary beside a base run
# (`report --spec builtin:review --base PATH`, docs/review.md).
#
# tracebook-gen writes one torch_npu profiling directory (two ranks, seed 5)
# twice: the base, and a new night where the kernels of type MatMulV3 (the
# top kernel of both ranks) take 30% longer. The base is reported with
# --keep-db into its folder, the new night with --base that folder, and the
# Summary must hold, per rank and figure, this run's value, the base's, the
# change and the ratio, where the values are what each night's own review
# says (review_summary.csv without --base), the change is new - base to the
# digit (Decimal arithmetic, no float noise) and the ratio new / base to 4
# decimals (the top kernel's time: 1.3000). The workbook's Summary holds the
# same values with a number format each (openpyxl) and prints with no cell
# shown as ### (LibreOffice to PDF, when soffice is here). The base folder
# stands alone: with the raw base profile deleted, from another working
# directory, the run gives the same rows. Bad bases are usage errors (exit
# 2) that name the problem and write nothing: a run of another spec, a base
# with a rank this run lacks, this run's own output folder, a spec with no
# baseline report.
#
# usage: review_base_test.py TRACEBOOK TRACEBOOK_GEN OUTDIR [CASE ...]
# Prints one `ok`/`FAIL`/`skip` line per case and a final count line.
import csv
import json
import os
import shutil
import subprocess
import sys
from decimal import ROUND_HALF_EVEN, Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, GEN, OUT = tbtest.args("TRACEBOOK TRACEBOOK_GEN OUTDIR [CASE ...]", 3)[:3]
tbtest.rerun_with_system_python("import openpyxl")
WORK = tbtest.fresh_dir(os.path.abspath(OUT))
tb = tbtest.Program(TB, cwd=WORK, env={"XDG_CACHE_HOME": os.path.join(WORK, "cache")})
gen = tbtest.Program(GEN, cwd=WORK)
suite = tbtest.Suite(work=os.path.join(WORK, "cases"))
SLOW = "MatMulV3"
FIGURES = ["Steps", "Step Time(us)", "Computing(us)", "Exposed Communication(us)", "Free(us)", "Bubble(us)",
           "Top Kernel", "Top Kernel Time(us)", "Top Kernel Share(%)"]


def rows_of(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def night(name, *extra):
    gen("--kind", "torch_npu_dir", "--events", "6000", "--ranks", "2", "--seed", "5", *extra, "-o", name, code=0)


def setup():
    if os.path.isdir(os.path.join(WORK, "reports", "base")):
        return
    night("base")
    night("new", "--slow", "%s=30" % SLOW)
    for n in ("base", "new"):
        # each night's own review: the values the Summary beside the base must repeat
        tb("report", "-q", "-dir", n, "--spec", "builtin:review", "-o", "reports/" + n, "--keep-db", code=0)


def own_summary(n):
    """{(rank, figure): text} of a night's own review_summary.csv."""
    rows = rows_of(os.path.join(WORK, "reports", n, "review_summary.csv"))
    h = rows[0]
    return {(r[0], f): r[h.index(f)] for r in rows[1:] for f in FIGURES}


def check_rows(t, rows, what):
    t.eq(rows[0], ["Rank", "Figure", "Value", "Base", "Change", "Ratio"], what + ": header")
    base, new = own_summary("base"), own_summary("new")
    want_keys = [(r, f) for r in ("0", "1") for f in FIGURES]
    t.eq([(r[0], r[1]) for r in rows[1:]], want_keys, what + ": a row per rank and figure, in order")
    for r in rows[1:]:
        key = (r[0], r[1])
        if key not in base:
            continue
        t.eq((r[2], r[3]), (new[key], base[key]), "%s %s: value and base are each night's own" % (what, key))
        if r[1] == "Top Kernel":
            t.eq((r[4], r[5]), ("", ""), "%s %s: a text has no change nor ratio" % (what, key))
            continue
        nv, bv = Decimal(new[key]), Decimal(base[key])
        t.eq(Decimal(r[4]), nv - bv, "%s %s: change = new - base, exactly" % (what, key))
        t.check(len(r[4].split(".")[-1]) <= 3 or "." not in r[4], "%s %s: change %r to the ns" % (what, key, r[4]))
        want = (nv / bv).quantize(Decimal("0.0001"), ROUND_HALF_EVEN) if bv else None
        t.eq(Decimal(r[5]) if r[5] else None, want, "%s %s: ratio to 4 decimals" % (what, key))
    for rank in ("0", "1"):
        top = [r for r in rows[1:] if r[0] == rank and r[1] == "Top Kernel"]
        time = [r for r in rows[1:] if r[0] == rank and r[1] == "Top Kernel Time(us)"]
        t.check(top and top[0][2].endswith(SLOW) and top[0][3].endswith(SLOW),
                "rank %s: the top kernel is the slowed one" % rank, top)
        # each kernel 30% slower, rounded to the ns: 1.3 within a few ns per kernel
        t.check(time and abs(Decimal(time[0][5]) - Decimal("1.3")) <= Decimal("0.0002"),
                "rank %s: its time is 1.3 x the base's" % rank, time)


@suite.case()
def case_summary_csv(t):
    setup()
    tb("report", "-q", "-dir", "new", "--spec", "builtin:review", "--base", "reports/base", "-o", "reports/vs",
       code=0)
    check_rows(t, rows_of(os.path.join(WORK, "reports", "vs", "review_summary.csv")), "csv")
    # the other reports are as without --base
    for rid in ("review_top_kernels", "review_steps", "review_device_time"):
        a = rows_of(os.path.join(WORK, "reports", "vs", rid + ".csv"))
        b = rows_of(os.path.join(WORK, "reports", "new", rid + ".csv"))
        t.eq(a, b, rid + ": unchanged by --base")
    with open(os.path.join(WORK, "reports", "vs", "review.html"), encoding="utf-8") as f:
        page = f.read()
    t.check("Set beside the base run" in page and ">Ratio<" in page, "the page's Summary says what it holds")
    t.check("base run" in page and "reports/base" in page, "the page's headline names the base run")
    with open(os.path.join(WORK, "reports", "vs", "tracebook_run.json")) as f:
        t.eq(json.load(f).get("base"), "reports/base", "tracebook_run.json names the base")


@suite.case()
def case_json(t):
    setup()
    tb("report", "-q", "-dir", "new", "--spec", "builtin:review", "--base", "reports/base", "-o", "reports/json",
       "--format", "json", "--report", "review_summary", code=0)
    with open(os.path.join(WORK, "reports", "json", "review_summary.json"), encoding="utf-8") as f:
        text = f.read()
    rows = json.loads(text)
    t.eq(len(rows), 18, "json: a row per rank and figure")
    st = [r for r in rows if r["Rank"] == 0 and r["Figure"] == "Top Kernel Time(us)"][0]
    t.eq(st["Ratio"], 1.3, "json: the ratio")
    t.check("00000000" not in text and "99999999" not in text, "json: no binary float noise")


@suite.case()
def case_workbook(t):
    setup()
    try:
        import openpyxl
    except ImportError:
        raise tbtest.Skip("python3-openpyxl is not installed")
    tb("report", "-q", "-dir", "new", "--spec", "builtin:review", "--base", "reports/base", "-o", "reports/book",
       code=0)
    wb = openpyxl.load_workbook(os.path.join(WORK, "reports", "book", "review.xlsx"))
    t.eq(wb.sheetnames[:2], ["About", "Summary"], "Summary first after About")
    about = {r[0].value: r[1].value for r in wb["About"].iter_rows() if r[0].value}
    t.eq(about.get("base run"), "reports/base", "About names the base run")
    ws = wb["Summary"]
    rows = [[c.value for c in r] for r in ws.iter_rows()]
    twin = rows_of(os.path.join(WORK, "reports", "book", "review_summary.csv"))
    t.eq(rows[0], twin[0], "sheet header")
    for got, want in zip(rows[1:], twin[1:]):
        for k, (g, w) in enumerate(zip(got, want)):
            if isinstance(g, (int, float)):
                t.check(abs(Decimal(repr(g)) - Decimal(w)) <= Decimal("0.0000005"), "cell %r vs csv %r" % (g, w))
            else:
                t.eq(g if g is not None else "", w, "text cell")
    fmts = {}
    for r in ws.iter_rows(min_row=2):
        fig = r[1].value
        for c in r[2:]:
            if isinstance(c.value, (int, float)):
                t.check(c.number_format and c.number_format != "General", "%s: %s has a number format" % (fig, c.coordinate))
                fmts.setdefault((fig, c.column_letter), c.number_format)
    t.eq(fmts.get(("Step Time(us)", "C")), "#,##0.000", "a time to the ns in us")
    t.eq(fmts.get(("Steps", "C")), "#,##0", "a count")
    t.eq(fmts.get(("Step Time(us)", "F")), "#,##0.0000", "a ratio to 4 decimals")
    t.eq(len(ws._charts), 0, "no stacked chart of a table it does not hold")
    t.check(ws.page_setup.orientation == "landscape" and ws.print_title_rows in ("1:1", "$1:$1"),
            "prints landscape with its header repeated")
    if not shutil.which("soffice") or not shutil.which("pdftotext"):
        raise tbtest.Skip("LibreOffice (soffice) or pdftotext is not installed: the PDF is not checked")
    pdf_dir = os.path.join(WORK, "pdf")
    os.makedirs(pdf_dir, exist_ok=True)
    p = subprocess.run(["soffice", "-env:UserInstallation=file://" + os.path.join(WORK, "lo-profile"), "--headless",
                        "--convert-to", "pdf", "--outdir", pdf_dir, os.path.join(WORK, "reports", "book", "review.xlsx")],
                       capture_output=True, text=True, timeout=600)
    pdf = os.path.join(pdf_dir, "review.pdf")
    if not t.check(p.returncode == 0 and os.path.exists(pdf), "soffice to PDF", p.stderr):
        return
    text = subprocess.run(["pdftotext", "-layout", pdf, "-"], capture_output=True, text=True).stdout
    t.check("###" not in text, "no cell shown as ### in the PDF")
    words = " ".join(text.split())
    ratio = [r[5] for r in twin[1:] if r[1] == "Top Kernel Time(us)"][0]
    t.check("Figure Value Base Change Ratio" in words and "Top Kernel Time(us)" in words
            and "%.4f" % float(ratio) in words, "the Summary's page shows its header, figures and ratios (%s)" % ratio)


@suite.case()
def case_base_stands_alone(t):
    setup()
    # the base's raw profile gone, the run made from another working directory
    shutil.copytree(os.path.join(WORK, "base"), os.path.join(WORK, "gone"))
    tb("report", "-q", "-dir", "gone", "--spec", "builtin:review", "-o", "reports/gone", "--keep-db", code=0)
    shutil.rmtree(os.path.join(WORK, "gone"))
    other = os.path.join(WORK, "elsewhere")
    os.makedirs(other, exist_ok=True)
    tb("report", "-q", "-dir", os.path.join(WORK, "new"), "--spec", "builtin:review", "--base",
       os.path.join(WORK, "reports", "gone"), "-o", "vs", cwd=other, code=0)
    check_rows(t, rows_of(os.path.join(other, "vs", "review_summary.csv")), "alone")
    # a base given as a profile loads it, as -dir does
    tb("report", "-q", "-dir", "new", "--spec", "builtin:review", "--base", "base", "-o", "reports/vsprof", code=0)
    t.eq(rows_of(os.path.join(WORK, "reports", "vsprof", "review_summary.csv")),
         rows_of(os.path.join(other, "vs", "review_summary.csv")), "a profile as the base: the same rows")


@suite.case()
def case_bad_bases(t):
    setup()
    tb("report", "-q", "-dir", "base", "--spec", "builtin:top_kernels", "-o", "reports/tk", code=0)
    night("one", "--ranks", "1")
    tb("report", "-q", "-dir", "one", "--spec", "builtin:review", "-o", "reports/one", "--keep-db", code=0)
    cases = [
        (["--base", "reports/tk"], "not a run of builtin:review", "another spec's run"),
        (["-dir", "base/rank0_ascend_pt", "--base", "reports/base"], "Rank 1 of the base run reports/base is not in this run",
         "a rank this run lacks"),
        (["--base", "reports/one"], "Rank 1 of this run is not in the base run reports/one", "a rank the base lacks"),
        (["--base", "reports/base", "--report", "review_steps"], "no report chosen by --report has 'baseline: true'",
         "--report without the Summary"),
    ]
    for k, (args, msg, what) in enumerate(cases):
        argv = ["report", "-q", "--spec", "builtin:review", "-o", "bad/%d" % k] + args
        if "-dir" not in args:
            argv += ["-dir", "new"]
        r = tb(*argv)
        t.eq(r.rc, 2, what + ": exit 2")
        t.check(msg in r.err, what + ": the message", r.err)
        t.check(not os.path.exists(os.path.join(WORK, "bad", str(k))), what + ": nothing written")
    before = sorted(os.listdir(os.path.join(WORK, "reports", "base")))
    r = tb("report", "-q", "-dir", "new", "--spec", "builtin:review", "--base", "reports/base", "-o", "reports/base")
    t.check(r.rc == 2 and "this run's output folder" in r.err, "-o the base folder", r.err)
    t.eq(sorted(os.listdir(os.path.join(WORK, "reports", "base"))), before, "the base folder is untouched")
    r = tb("report", "-q", "-dir", "new", "--spec", "builtin:top_kernels", "--base", "reports/base", "-o", "bad/x")
    t.check(r.rc == 2 and "no report of the run has 'baseline: true'" in r.err, "a spec with no baseline report",
            r.err)
    spec = os.path.join(WORK, "nokey.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nreports:\n  - id: x\n    sql: SELECT 1 AS a\n    baseline: true\n")
    r = tb("report", "-q", "-dir", "new", "--spec", spec, "-o", "bad/y")
    t.check(r.rc == 3 and "nokey.yaml:5:15: 'baseline: true' needs 'key:'" in r.err, "baseline without key", r.err)


suite.main(sys.argv[4:])
