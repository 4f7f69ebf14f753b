#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# history_test.py - `tracebook history` over nine generated nights, and the
# compare and trend workbooks in the clients users open them with.
#
# The nights are made here from samples/ascend_small: every kernel's time
# jitters from night to night by up to 3% (and each task by 1%), one kernel
# (STEADY) barely jitters at all. On the ninth night SLOW is made 1.5 times
# slower and STEADY 6% slower. history report must flag exactly those two on
# the ninth night, no kernel on nights 1-8, with the right ratios and the
# nights each verdict used; a ninth night of plain jitter flags nothing.
# Also: list, remove, retention, labels, metadata, a report folder as the
# night, two appends at once, files that are not a history, and the
# workbooks (trend.xlsx, compare.xlsx) read by openpyxl and LibreOffice:
# charts and formats present, every sheet equal to its CSV twin.
#
# usage: history_test.py TRACEBOOK SAMPLES_DIR OUTDIR
# Prints one `ok`/`FAIL`/`skip` line per case and a final count line; exits
# 0 when none failed.
import csv
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, SAMPLES, OUT = (os.path.abspath(a) for a in tbtest.args("TRACEBOOK SAMPLES_DIR OUTDIR", 3, 3))
SLOW = "aclnnMm_MatMulV3_MatMulV3"
STEADY = "aclnnAdd_AddAiCore_Add"
# top_kernels' key: the name and its type (taken from the name, docs/inputs.md "Kernel types")
SLOW_KEY, STEADY_KEY = SLOW + " | MatMulV3", STEADY + " | Add"
NIGHTS = ["night%d" % k for k in range(1, 10)]
H = None  # the nine nights' history


def make_night(path, seed, slow=1.0, steady=1.0):
    with open(os.path.join(SAMPLES, "ascend_small", "trace_view.json")) as f:
        events = json.load(f)
    rnd = random.Random(seed)
    per_kernel = {}
    for e in events:
        if e.get("ph") == "X" and "Task Type" in e.get("args", {}):
            n = e["name"]
            if n not in per_kernel:
                per_kernel[n] = 1 + (rnd.uniform(-0.002, 0.002) if n == STEADY else rnd.uniform(-0.03, 0.03))
            j = per_kernel[n] * (1 if n == STEADY else 1 + rnd.uniform(-0.01, 0.01))
            j *= slow if n == SLOW else steady if n == STEADY else 1
            e["dur"] = round(float(e["dur"]) * j, 3)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "trace_view.json"), "w") as f:
        json.dump(events, f)


run = tbtest.Program(TB)


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def dicts(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def add(history, night_dir, label, *extra):
    r = run("history", "add", "--history", history, "-dir", night_dir, "--spec", "builtin:top_kernels",
            "--label", label, "-q", *extra)
    assert r.returncode == 0, (label, r.returncode, r.stderr)
    assert r.stdout.strip() == label, r.stdout
    return r


def labels(history):
    r = run("history", "list", "--history", history, "--format", "csv")
    assert r.returncode == 0, r.stderr
    return [x["Label"] for x in csv.DictReader(r.stdout.splitlines())]


def report(history, out, *extra):
    return run("history", "report", "--history", history, "--spec", "builtin:top_kernels", "-o", out, *extra)


def case_only_the_ninth_night():
    out = os.path.join(OUT, "r1")
    r = report(H, out, "--fail-on-regression")
    assert r.returncode == 8, (r.returncode, r.stderr)
    v = dicts(os.path.join(out, "history_verdicts.csv"))
    assert {x["Night"] for x in v} == {"night9"}, [(x["Night"], x["Key"]) for x in v]
    assert {x["Key"] for x in v if x["Verdict"] == "regression"} == {SLOW_KEY, STEADY_KEY}, v
    assert all(x["Verdict"] == "regression" for x in v), v
    assert {x["Column"] for x in v} == {"Total Time(us)", "Avg Time(us)"}, v
    for x in v:
        ratio = float(x["Ratio"])
        want = 1.5 if x["Key"] == SLOW_KEY else 1.06
        # the median of eight jittering nights against one slowed by a known factor
        assert abs(ratio - want) < (0.05 if x["Key"] == SLOW_KEY else 0.005), (x["Key"], ratio)
        assert x["Baseline Nights"].split() == NIGHTS[:8], x["Baseline Nights"]
    m = json.load(open(os.path.join(out, "tracebook_run.json")))
    assert m["command"] == "history report" and m["latest"] == "night9"
    assert m["nights"] == NIGHTS
    # every file of the run is listed under a "files" key (a later scan never reads them as inputs)
    listed = {f for r in m["reports"] for f in r["files"]} | set(m["outputs"]["files"])
    assert listed == set(os.listdir(out)) - {"tracebook_run.json"}, (listed, os.listdir(out))
    assert m["regression_count"] == 4 == len(m["regressions"]), m["regressions"]
    assert all(g["nights"] == NIGHTS[:8] for g in m["regressions"])
    # exit 0 without the flag, with the same files
    r = report(H, os.path.join(OUT, "r1b"))
    assert r.returncode == 0, r.stderr
    assert "the newest, 'night9': 4 regressions" in r.stderr, r.stderr


def case_trend_table():
    t = rows(os.path.join(OUT, "r1", "top_kernels_trend.csv"))
    head = t[0]
    assert head[:3] == ["Name", "Type", "Column"], head
    assert head[3:12] == NIGHTS, head
    assert head[12:] == ["Baseline Median", "Baseline MAD", "Ratio", "Verdict", "Baseline Nights"], head
    slow = [x for x in t[1:] if x[0] == SLOW and x[2] == "Total Time(us)"][0]
    vals = [float(x) for x in slow[3:12]]
    # the median of nights 1-8, written exactly (ns kept, shown in us)
    base = sorted(vals[:8])
    assert abs(float(slow[12]) - (base[3] + base[4]) / 2) < 1e-9, slow
    assert slow[15] == "regression" and slow[16] == "8", slow
    counts = [x for x in t[1:] if x[0] == SLOW and x[2] == "Count"][0]
    assert counts[3:12] == ["28"] * 9 and counts[15] == "", counts
    # every night's value equals a report run on that night alone
    out = os.path.join(OUT, "single")
    r = run("report", "-dir", os.path.join(OUT, "n3"), "--spec", "builtin:top_kernels", "-o", out, "-q")
    assert r.returncode == 0, r.stderr
    single = {x["Name"]: x for x in dicts(os.path.join(out, "top_kernels.csv"))}
    for x in t[1:]:
        if x[2] == "Total Time(us)":
            assert x[5] == single[x[0]]["Total Time(us)"], (x[0], x[5], single[x[0]]["Total Time(us)"])
    # the chart: nights down, the top kernels (by the newest night) across
    c = rows(os.path.join(OUT, "r1", "top_kernels_trend_chart.csv"))
    assert c[0][0] == "Night" and c[0][1] == SLOW_KEY and len(c[0]) == 9, c[0]
    assert [x[0] for x in c[1:]] == NIGHTS


def case_jitter_only():
    # the ninth night replaced by one of plain jitter: nothing flagged, exit 0
    h = os.path.join(OUT, "jitter.db")
    shutil.copy(H, h)
    r = run("history", "remove", "--history", h, "--label", "night9")
    assert r.returncode == 0 and "removed 1 night" in r.stderr, r.stderr
    add(h, os.path.join(OUT, "n9j"), "night9j")
    out = os.path.join(OUT, "r2")
    r = report(h, out, "--fail-on-regression")
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert dicts(os.path.join(out, "history_verdicts.csv")) == []


def case_last():
    out = os.path.join(OUT, "r3")
    r = report(H, out, "--last", "3", "--timeunit", "ms")
    assert r.returncode == 0, r.stderr
    t = rows(os.path.join(out, "top_kernels_trend.csv"))
    assert t[0][3:6] == NIGHTS[6:], t[0]
    slow = [x for x in t[1:] if x[0] == SLOW and x[2] == "Total Time(ms)"][0]
    assert slow[9] == "regression" and slow[10] == "8", slow  # judged from nights outside the window too


def case_list_and_meta():
    r = run("history", "list", "--history", H)
    assert r.returncode == 0, r.stderr
    assert "night1" in r.stdout and "commit=c1 team=perf" in r.stdout, r.stdout
    r = run("history", "list", "--history", H, "--format", "json")
    lst = json.loads(r.stdout)
    assert [x["Label"] for x in lst] == NIGHTS and lst[0]["Reports"] == 1 and lst[0]["Rows"] == 20, lst[0]
    con = sqlite3.connect(H)
    assert con.execute("SELECT value FROM history_info WHERE key = 'format'").fetchone()[0] == "tracebook history"
    assert con.execute("SELECT count(*) FROM night_meta").fetchone()[0] == 18
    con.close()


def case_duplicate_label():
    before = sha(H)
    r = run("history", "add", "--history", H, "-dir", os.path.join(OUT, "n1"), "--spec", "builtin:top_kernels",
            "--label", "night3")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "night3" in r.stderr and "already" in r.stderr, r.stderr
    assert sha(H) == before


def case_not_a_history():
    for name, content in [("text.db", b"hello\n"), ("empty.db", b""), ("other.db", None)]:
        p = os.path.join(OUT, name)
        if content is None:
            con = sqlite3.connect(p)
            con.execute("CREATE TABLE t(x)")
            con.commit()
            con.close()
        else:
            open(p, "wb").write(content)
        before = sha(p)
        r = run("history", "add", "--history", p, "-dir", os.path.join(OUT, "n1"), "--spec", "builtin:top_kernels")
        assert r.returncode != 0 and p in r.stderr, (name, r.returncode, r.stderr)
        assert sha(p) == before, name
        r = run("history", "report", "--history", p, "--spec", "builtin:top_kernels", "-o", os.path.join(OUT, "x"))
        assert r.returncode != 0 and p in r.stderr, (name, r.returncode, r.stderr)
    # a night whose report fails makes no history
    spec = os.path.join(OUT, "failing.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nreports:\n  - id: broken\n    sql: SELECT nosuchcolumn FROM TASK\n")
    r = run("history", "add", "--history", os.path.join(OUT, "missing.db"), "-dir", os.path.join(OUT, "n1"),
            "--spec", spec)
    assert r.returncode == 3 and "nosuchcolumn" in r.stderr, (r.returncode, r.stderr)
    assert not os.path.exists(os.path.join(OUT, "missing.db"))
    assert not [x for x in os.listdir(OUT) if x.startswith("missing.db")], os.listdir(OUT)
    r = run("history", "report", "--history", os.path.join(OUT, "missing.db"), "--spec", "builtin:top_kernels")
    assert r.returncode == 6 and "missing.db" in r.stderr, (r.returncode, r.stderr)
    assert not os.path.exists(os.path.join(OUT, "missing.db"))


def case_retention_and_remove():
    h = os.path.join(OUT, "keep.db")
    shutil.copy(H, h)
    r = run("history", "remove", "--history", h, "--label", "night2", "--label", "nope")
    assert r.returncode == 2 and "nope" in r.stderr, r.stderr
    assert labels(h) == NIGHTS  # nothing removed
    add(h, os.path.join(OUT, "n9j"), "night10", "--keep", "4")
    assert labels(h) == ["night7", "night8", "night9", "night10"], labels(h)
    con = sqlite3.connect(h)
    left = con.execute("SELECT count(DISTINCT report) FROM night_cell").fetchone()[0]
    assert left == 4 == con.execute("SELECT count(*) FROM night_report").fetchone()[0]
    con.close()
    r = run("history", "remove", "--history", h, "--keep", "1")
    assert r.returncode == 0 and labels(h) == ["night10"], (r.stderr, labels(h))


def case_run_folder():
    # the output folder of a report run is a night: its inputs and spec
    rep = os.path.join(OUT, "rep4")
    r = run("report", "-dir", os.path.join(OUT, "n4"), "--spec", "builtin:top_kernels", "-o", rep, "-q")
    assert r.returncode == 0, r.stderr
    h = os.path.join(OUT, "folder.db")
    r = run("history", "add", "--history", h, rep, "-q")
    assert r.returncode == 0, r.stderr
    label = r.stdout.strip()
    assert label == "2024-01-02T02:12:27Z", label  # the data's start, UTC
    con = sqlite3.connect(h)
    a = con.execute("SELECT col, value FROM night_cell ORDER BY row, col").fetchall()
    con.close()
    con = sqlite3.connect(H)
    b = con.execute("SELECT c.col, c.value FROM night_cell c JOIN night_report r ON r.id = c.report "
                    "JOIN night n ON n.id = r.night WHERE n.label = 'night4' ORDER BY c.row, c.col").fetchall()
    con.close()
    assert a == b and len(a) > 100
    r = run("history", "add", "--history", h, "-dir", os.path.join(OUT, "n4"), rep)
    assert r.returncode == 2, r.stderr


def case_concurrent_appends():
    h = os.path.join(OUT, "busy.db")
    procs = [subprocess.Popen([TB, "history", "add", "--history", h, "-dir", os.path.join(OUT, "n%d" % k),
                               "--spec", "builtin:top_kernels", "--label", "c%d" % k, "-q"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for k in range(1, 6)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert sorted(labels(h)) == ["c1", "c2", "c3", "c4", "c5"], labels(h)


def case_history_in_an_input_folder():
    # a history kept beside the profile is never read as profile data
    d = os.path.join(OUT, "withhist")
    shutil.copytree(os.path.join(OUT, "n2"), d)
    shutil.copy(H, os.path.join(d, "nights.db"))
    before = sha(os.path.join(d, "nights.db"))
    r = run("report", "-dir", d, "--spec", "builtin:top_kernels", "-o", os.path.join(OUT, "wh"))
    assert r.returncode == 0, r.stderr
    assert "nights.db: not read: a history of nights" in r.stderr, r.stderr
    r2 = run("report", "-dir", os.path.join(OUT, "n2"), "--spec", "builtin:top_kernels", "-o", os.path.join(OUT, "wh2"))
    assert r2.returncode == 0, r2.stderr
    assert open(os.path.join(OUT, "wh", "top_kernels.csv")).read() == open(os.path.join(OUT, "wh2", "top_kernels.csv")).read()
    assert sha(os.path.join(d, "nights.db")) == before


def case_bad_rules():
    spec = os.path.join(OUT, "bad.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nreports:\n  - use: top_kernels\n    regressions:\n"
                "      - {column: Total Time, nights: 2}\n")
    r = run("history", "report", "--history", H, "--spec", spec, "-o", os.path.join(OUT, "x2"))
    assert r.returncode == 3 and "bad.yaml:5:" in r.stderr and "'nights' must be" in r.stderr, (r.returncode, r.stderr)
    with open(spec, "w") as f:
        f.write("tracebook: 1\nreports:\n  - use: top_kernels\n    regressions:\n"
                "      - {column: Total Time, mad: 100, nights: 5}\n")
    # a wide noise band: the 1.5x kernel passes it, the 6% one does not
    out = os.path.join(OUT, "r5")
    r = run("history", "report", "--history", H, "--spec", spec, "-o", out)
    assert r.returncode == 0, r.stderr
    v = dicts(os.path.join(out, "history_verdicts.csv"))
    assert {x["Key"] for x in v} == {SLOW_KEY}, v
    assert v[0]["Baseline Nights"].split() == NIGHTS[3:8], v[0]


def case_nightly_spec_charts():
    # samples/specs/nightly.yaml: the night summary charts step time, computing,
    # exposed communication and free time; the top kernels their total time
    spec = os.path.join(os.path.dirname(SAMPLES), "samples", "specs", "nightly.yaml")
    if not os.path.exists(spec):
        spec = os.path.join(SAMPLES, "specs", "nightly.yaml")
    h = os.path.join(OUT, "nightly.db")
    for k in (1, 2, 3):
        r = run("history", "add", "--history", h, "-dir", os.path.join(OUT, "n%d" % k), "--spec", spec,
                "--label", "d%d" % k, "-q")
        assert r.returncode == 0, r.stderr
    out = os.path.join(OUT, "r6")
    r = run("history", "report", "--history", h, "--spec", spec, "-o", out)
    assert r.returncode == 0, r.stderr
    c = rows(os.path.join(out, "night_summary_trend_chart.csv"))
    assert c[0] == ["Night", "Step Time(us)", "Computing(us)", "Communication(Not Overlapped)(us)", "Free(us)"], c[0]
    assert [x[0] for x in c[1:]] == ["d1", "d2", "d3"] and all(float(x[1]) > 0 for x in c[1:]), c
    c = rows(os.path.join(out, "top_kernels_trend_chart.csv"))
    assert c[0][0] == "Night" and len(c[0]) == 6, c[0]  # the spec's top 5 kernels
    t = rows(os.path.join(out, "night_summary_trend.csv"))
    # three nights: too few for a verdict
    assert {x[-2] for x in t[1:] if x[1] in ("Step Time(us)", "Free(us)")} == {"too few nights"}, t
    m = json.load(open(os.path.join(out, "tracebook_run.json")))
    charts = {e["id"]: e.get("chart", {}).get("of") for e in m["reports"]}
    assert charts["night_summary"] == "the time columns of its one row", charts
    assert charts["top_kernels"] == "Total Time", charts
    exe = openpyxl_python()
    if exe:
        p = subprocess.run([exe, "-c", OPENPYXL_DUMP, os.path.join(out, "trend.xlsx")], capture_output=True, text=True)
        book = json.loads(p.stdout)
        assert book["Night summary chart"]["charts"] == ["LineChart"], list(book)


# ---- the workbooks in their clients ----------------------------------------

OPENPYXL_DUMP = r"""
import json, sys, openpyxl
wb = openpyxl.load_workbook(sys.argv[1])
out = {}
for ws in wb.worksheets:
    cf = [r.type + ":" + (r.operator or "") + ":" + ",".join(r.formula or [])
          for rs in ws.conditional_formatting._cf_rules.values() for r in rs]
    out[ws.title] = {"rows": [[c for c in row] for row in ws.iter_rows(values_only=True)],
                     "charts": [type(c).__name__ for c in ws._charts], "cf": cf}
print(json.dumps(out, default=str))
"""


def openpyxl_python():
    for exe in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(exe) and subprocess.run([exe, "-c", "import openpyxl"],
                                                  capture_output=True).returncode == 0:
            return exe
    return None


def same(a, b):
    """A cell as a client read it against the CSV twin's text."""
    if a is None:
        return b == ""
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        try:
            return abs(float(b) - a) <= 1e-9 * max(1, abs(a))
        except ValueError:
            return False
    return str(a) == b


WORKBOOKS = []  # (path, {sheet: csv twin}, {sheet: chart kinds}, {sheet: needs red/green formats})


def workbooks():
    if WORKBOOKS:
        return WORKBOOKS
    r1 = os.path.join(OUT, "r1")
    WORKBOOKS.append((os.path.join(r1, "trend.xlsx"),
                      {"Summary": os.path.join(r1, "history_verdicts.csv"),
                       "Top kernels by total time": os.path.join(r1, "top_kernels_trend.csv"),
                       "Top kernels by total time chart": os.path.join(r1, "top_kernels_trend_chart.csv")},
                      {"Top kernels by total time chart": ["LineChart"]},
                      {"Top kernels by total time"}))
    c = os.path.join(OUT, "cmp")
    r = run("compare", "-base", os.path.join(OUT, "n1"), "-new", os.path.join(OUT, "n9"), "--spec",
            "builtin:top_kernels", "-o", c, "-q")
    assert r.returncode == 0, r.stderr
    WORKBOOKS.append((os.path.join(c, "compare.xlsx"),
                      {"Summary": os.path.join(c, "compare_summary.csv"),
                       "Top kernels by total time": os.path.join(c, "top_kernels_compare.csv")},
                      {"Summary": ["BarChart"]},
                      {"Top kernels by total time"}))
    return WORKBOOKS


def case_workbooks_openpyxl():
    exe = openpyxl_python()
    if not exe:
        raise tbtest.Skip("python3-openpyxl is not installed")
    for path, twins, charts, formats in workbooks():
        p = subprocess.run([exe, "-c", OPENPYXL_DUMP, path], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        book = json.loads(p.stdout)
        assert list(book)[0] == "About", list(book)
        for sheet, twin in twins.items():
            got, want = book[sheet]["rows"], rows(twin)
            assert len(got) == len(want), (path, sheet, len(got), len(want))
            for g, w in zip(got, want):
                assert len(g) == len(w) and all(same(a, b) for a, b in zip(g, w)), (path, sheet, g, w)
        for sheet, kinds in charts.items():
            assert book[sheet]["charts"] == kinds, (sheet, book[sheet]["charts"])
        for sheet in formats:
            cf = book[sheet]["cf"]
            # worse past the threshold: cellIs; better (below it): on numbers only, an empty Ratio stays white
            assert any(c.startswith("cellIs:greaterThan:") for c in cf), (path, sheet, cf)
            assert any(c.startswith("expression::AND(ISNUMBER(") and "<0.95)" in c for c in cf), (path, sheet, cf)


def case_workbooks_libreoffice():
    if not shutil.which("soffice"):
        raise tbtest.Skip("LibreOffice (soffice) is not installed")
    conv = os.path.join(OUT, "lo")
    os.makedirs(conv, exist_ok=True)
    filt = "csv:Text - txt - csv (StarCalc):44,34,UTF8,1,,0,false,true,false,false,false,-1"
    books = workbooks()
    stems = []
    for i, (path, _, _, _) in enumerate(books):
        # one folder per workbook: both may share sheet names
        d = os.path.join(conv, str(i))
        os.makedirs(d, exist_ok=True)
        p = subprocess.run(["soffice", "-env:UserInstallation=file://" + os.path.join(OUT, "lo-profile"),
                            "--headless", "--convert-to", filt, "--outdir", d, path],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        stems.append((d, os.path.splitext(os.path.basename(path))[0]))
    for (d, stem), (path, twins, _, _) in zip(stems, books):
        for sheet, twin in twins.items():
            got = rows(os.path.join(d, "%s-%s.csv" % (stem, sheet)))
            want = rows(twin)
            assert len(got) == len(want), (path, sheet, len(got), len(want))
            for g, w in zip(got, want):
                assert len(g) == len(w), (path, sheet, g, w)
                for a, b in zip(g, w):
                    ok = a == b
                    if not ok:
                        try:
                            ok = abs(float(a) - float(b)) <= 1e-9 * max(1, abs(float(b)))
                        except ValueError:
                            ok = False
                    assert ok, (path, sheet, a, b)


if __name__ == "__main__":
    tbtest.fresh_dir(OUT)
    tbtest.use_cache(os.path.join(OUT, "cache"))
    for k in range(1, 10):
        make_night(os.path.join(OUT, "n%d" % k), 1000 + k, slow=1.5 if k == 9 else 1.0,
                   steady=1.06 if k == 9 else 1.0)
    make_night(os.path.join(OUT, "n9j"), 1099)
    H = os.path.join(OUT, "nights.db")
    for k in range(1, 10):
        add(H, os.path.join(OUT, "n%d" % k), "night%d" % k, "--meta", "commit=c%d" % k, "--meta", "team=perf")
    suite = tbtest.Suite(work=OUT)
    suite.collect(globals())
    suite.main()
