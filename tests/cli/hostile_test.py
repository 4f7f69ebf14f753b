#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# hostile_test.py - data from outside stays data (suite 'cli';
# docs/reliability.md).
#
# A trace whose kernel names read as spreadsheet formulas
# (`=cmd|' /C calc'!A0`, `@SUM(1)`): with --csv-safe, report, compare,
# history report and export summary write them (and a header cell that
# reads as one) as text, with a leading '; without it, as they are. A spec
# of 100,000 params loads in seconds (the duplicate-key check sorts).
#
# usage: hostile_test.py TRACEBOOK WORK_DIR
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, WORK = (os.path.abspath(a) for a in tbtest.args("TRACEBOOK WORK_DIR", 2, 2))
SUITE = tbtest.Suite(tbtest.Program(TB, timeout=300, errors="replace"), work=WORK, clean=True)
case = SUITE.case

EVIL = "=cmd|' /C calc'!A0"


def trace(box):
    """A Kineto trace of three kernels, two of them named like formulas."""
    events = [{"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
               "args": {"device": 0, "stream": 7, "correlation": i + 1}}
              for i, (name, ts, dur) in enumerate([(EVIL, 10, 5), (EVIL, 20, 7), ("@SUM(1)", 30, 3)])]
    path = box.path("trace.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)
    return path


def cells(path):
    with open(path, newline="", encoding="utf-8") as f:
        return [c for row in csv.reader(f) for c in row]


@case("--csv-safe guards cells and header cells from the data in every command that writes CSV")
def _(t):
    box = tbtest.Sandbox(SUITE.program, WORK, "csv-safe")
    tr = trace(box)
    spec = box.path("header.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nreports:\n  - id: header\n    sql: SELECT name AS \"%s\" FROM kernel LIMIT 1\n"
                % EVIL.replace('"', '""'))
    for safe in (0, 1):
        flag = ["--csv-safe"] if safe else []
        want = ("'" if safe else "") + EVIL
        out = box.path("report%d" % safe)
        r = box.run(["report", "-dir", tr, "--spec", spec, "--spec", "builtin:top_kernels", "-o", out, "-q",
                     "--format", "csv"] + flag)
        t.check(r.rc == 0, "report: %s" % r)
        t.check(cells(os.path.join(out, "header.csv"))[:2] == [want, want], "report: header and cell %s" % safe)
        t.check(want in cells(os.path.join(out, "top_kernels.csv")), "report: the kernel name %s" % safe)
        out = box.path("compare%d" % safe)
        r = box.run(["compare", "-base", tr, "-new", tr, "--spec", "builtin:top_kernels", "-o", out, "-q",
                     "--format", "csv"] + flag)
        t.check(r.rc == 0, "compare: %s" % r)
        got = cells(os.path.join(out, "top_kernels_compare.csv"))
        t.check(want in got and ("'@SUM(1)" in got) == bool(safe), "compare: the kernel names %s" % safe)
        h = box.path("h.db")
        if not safe:
            r = box.run(["history", "add", "--history", h, "-dir", tr, "--spec", "builtin:top_kernels", "-q"])
            t.check(r.rc == 0, "history add: %s" % r)
        out = box.path("trend%d" % safe)
        r = box.run(["history", "report", "--history", h, "--spec", "builtin:top_kernels", "-o", out, "-q",
                     "--format", "csv"] + flag)
        t.check(r.rc == 0, "history report: %s" % r)
        t.check(want in cells(os.path.join(out, "top_kernels_trend.csv")), "history report: the kernel name %s" % safe)
        # the chart's columns are the kernels: header cells from the data
        with open(os.path.join(out, "top_kernels_trend_chart.csv"), newline="", encoding="utf-8") as f:
            header = next(csv.reader(f))
        t.check(want in header, "history report: the chart's header cells %s: %s" % (safe, header))
        out = box.path("summary%d" % safe)
        r = box.run(["export", "summary", "-dir", tr, "-o", out, "-q"] + flag)
        t.check(r.rc == 0, "export summary: %s" % r)
        found = [os.path.join(d, n) for d, _, ns in os.walk(out) for n in ns if n.endswith(".csv")]
        t.check(any(want in cells(p) for p in found), "export summary: the kernel name %s" % safe)
    r = box.run(["compare", "-base", tr, "-new", tr, "--spec", "builtin:top_kernels", "-o", box.path("x"),
                 "--format", "json", "--csv-safe"])
    t.check(r.rc == 2 and "--csv-safe: --format 'json' writes no CSV" in r.err, "compare: --csv-safe without CSV: %s" % r)



@case("a spec of 100,000 params loads in seconds; a duplicate among them is still found")
def _(t):
    box = tbtest.Sandbox(SUITE.program, WORK, "params")
    tr = trace(box)
    for dup in (0, 1):
        spec = box.path("params%d.yaml" % dup)
        with open(spec, "w") as f:
            f.write("tracebook: 1\nparams:\n")
            f.write("".join("  p%d: %d\n" % (i, i) for i in range(100000)))
            if dup:
                f.write("  p4711: 0\n")
            f.write("reports:\n  - id: a\n    sql: SELECT :p99999 AS x\n")
        before = os.times()
        r = box.run(["report", "-dir", tr, "--spec", spec, "-o", box.path("out%d" % dup), "-q", "--format", "csv"])
        after = os.times()
        cpu = after.children_user + after.children_system - before.children_user - before.children_system
        t.check(cpu < 10, "loaded within 10 s of CPU time (%.1f s)" % cpu)
        if dup:
            t.check(r.rc == 3 and r.err == "tracebook: error: %s:100003:3: duplicate key 'p4711' (first at line "
                    "4714)\n" % spec, "the duplicate is named: %s" % r)
        else:
            t.check(r.rc == 0, "the spec runs: %s" % r)
            with open(box.path("out0", "a.csv")) as f:
                t.check(f.read() == "x\n99999\n", "the last param is bound")


SUITE.main()
