#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# hostile_test.py - data from outside stays data (suite 'cli';
# docs/reliability.md).
#
# A trace whose kernel names read as spreadsheet formulas
# (`=cmd|' /C calc'!A0`, `@SUM(1)`): with --csv-safe, report, compare,
# history report and export summary write them (and a header cell that
# reads as one) as text, with a leading '; without it, as they are. A spec
# of 100,000 params loads in seconds (the duplicate-key check sorts). A
# tracebook DB given as the input whose times are INT64_MIN, INT64_MAX or
# 1e300 gets the range rule of every input: skipped with a counted warning
# (the reports as if those rows were not there), an error with --strict.
#
# usage: hostile_test.py TRACEBOOK WORK_DIR
import csv
import gzip
import json
import os
import shutil
import sqlite3
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
        # a chart column is named by the report's key (top_kernels: name | type)
        t.check(any(h == want or h.startswith(want + " | ") for h in header),
                "history report: the chart's header cells %s: %s" % (safe, header))
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



@case("a tracebook DB given as the input with INT64_MIN, INT64_MAX and 1e300 times: the range rule")
def _(t):
    box = tbtest.Sandbox(SUITE.program, WORK, "range")
    tr = trace(box)
    own, cut, bad = box.path("own.db"), box.path("cut.db"), box.path("bad.db")
    r = box.run(["export", "db", "-dir", tr, "-o", own, "-q"])
    t.check(r.rc == 0, "export db: %s" % r)
    shutil.copy(own, cut)
    shutil.copy(own, bad)
    with sqlite3.connect(bad) as c:
        ids = [row[0] for row in c.execute("SELECT rowid FROM TASK ORDER BY rowid")]
        t.check(len(ids) == 3, "three tasks: %s" % ids)
        c.execute("UPDATE TASK SET endNs = 9223372036854775807 WHERE rowid = ?", (ids[0],))
        c.execute("UPDATE TASK SET startNs = -9223372036854775808 WHERE rowid = ?", (ids[1],))
    with sqlite3.connect(cut) as c:
        c.execute("DELETE FROM TASK WHERE rowid IN (?, ?)", (ids[0], ids[1]))
    specs = ["--spec", "builtin:temporal_breakdown", "--spec", "builtin:top_kernels"]
    r = box.run(["report", "-dir", bad, "-o", box.path("bad")] + specs + ["--format", "csv"])
    t.check(r.rc == 0, "report: exit 0: %s" % r)
    t.check("tracebook: warning: %s: 2 events with a time outside +-2^62 ns (about 146 years from 1970) skipped\n"
            % bad in r.err, "report: the skipped rows are counted in a warning: %r" % r.err)
    r = box.run(["report", "-dir", cut, "-o", box.path("cut"), "-q"] + specs + ["--format", "csv"])
    t.check(r.rc == 0, "report over the DB without those rows: %s" % r)
    for name in ("temporal_breakdown.csv", "top_kernels.csv"):
        with open(box.path("bad", name)) as a, open(box.path("cut", name)) as b:
            t.check(a.read() == b.read(), "%s: as if the rows were not there" % name)
    r = box.run(["report", "-dir", bad, "-o", box.path("strict"), "--strict", "-q"] + specs)
    t.check(r.rc == 3 and r.err == "tracebook: error: %s: table TASK: a time outside +-2^62 ns (about 146 years "
            "from 1970)\n" % bad, "--strict: exit 3: %s" % r)
    with sqlite3.connect(bad) as c:
        c.execute("UPDATE TASK SET startNs = 1e300 WHERE rowid = ?", (ids[2],))
    r = box.run(["report", "-dir", bad, "-o", box.path("real"), "--rebuild"] + specs + ["--format", "csv"])
    t.check(r.rc == 0 and "3 events with a time outside" in r.err, "1e300: skipped too: %s" % r)



@case("a tracebook DB whose tasks span -(2^62 - 1) to 2^62 - 1: every time report ends, no undefined arithmetic")
def _(t):
    box = tbtest.Sandbox(SUITE.program, WORK, "extreme")
    own, tr = box.path("own.db"), trace(box)
    r = box.run(["export", "db", "-dir", tr, "-o", own, "-q"])
    t.check(r.rc == 0, "export db: %s" % r)
    edge = (1 << 62) - 1  # the widest span the range rule keeps
    with sqlite3.connect(own) as c:
        for rowid, in c.execute("SELECT rowid FROM TASK ORDER BY rowid LIMIT 2").fetchall():
            c.execute("UPDATE TASK SET startNs = ?, endNs = ? WHERE rowid = ?", (-edge, edge, rowid))
    # on the sanitizer build an overflow in C aborts the run: these end with
    # their rows (0) or, where a sum of durations leaves 64 bits, with an
    # error naming the report, the table and the column (3)
    why = ("the sum of TASK durations (endNs - startNs) overflows 64-bit ns (integer overflow): the DB holds "
           "out-of-range times (its longest row spans 9.223e+18 ns, 292 years)\n")
    overflowed = set()
    for spec in ("temporal_breakdown", "comm_comp_overlap", "idle_time_breakdown", "exposed_time",
                 "step_trace_time", "overlap_analysis", "queue_length_summary", "kernel_launch_stats",
                 "top_kernels", "op_statistic", "kernel_breakdown", "advisor_aicpu_op"):
        r = box.run(["report", "-dir", own, "-o", box.path("out_" + spec), "-q", "--spec", "builtin:" + spec])
        t.check(r.rc in (0, 3) and "runtime error" not in r.err and "Sanitizer" not in r.err,
                "%s: %s" % (spec, r))
        t.check(r.rc == 0 or r.err == "tracebook: error: report '%s': %s" % (spec, why), "%s: exit 3 names the "
                "report, table and column: %r" % (spec, r.err))
        if r.rc == 3:
            overflowed.add(spec)
            t.check(not os.path.exists(box.path("out_" + spec, spec + ".csv")), "%s: no file" % spec)
    t.check({"top_kernels", "op_statistic", "kernel_breakdown"} <= overflowed, "the kernel sums overflow: %s"
            % sorted(overflowed))
    r = box.run(["export", "summary", "-dir", own, "-o", box.path("summary"), "-q"])
    t.check(r.rc == 3 and r.err.startswith("tracebook: error: report '") and r.err.endswith("': " + why),
            "export summary: %s" % r)
    for verb in ("summary", "trace"):
        r = box.run(["print", verb, "-dir", own, "-q", "--log-file", box.path(verb + ".txt")])
        t.check((r.rc, r.err) in ((0, ""), (3, "tracebook: error: %s: print %s: %s" % (own, verb, why))),
                "print %s: %s" % (verb, r))
        t.check(r.rc == 0 or not os.path.exists(box.path(verb + ".txt")), "print %s: no listing" % verb)
    # to stdout: the listing is held until it is complete, so the failed run
    # prints not even the header lines it had reached
    r = box.run(["print", "summary", "-dir", own, "-q"])
    t.check(r.rc == 3 and r.out == "" and r.err == "tracebook: error: %s: print summary: %s" % (own, why),
            "print summary to stdout overflows and prints nothing: %d %r %r" % (r.rc, r.out[:200], r.err))
    # the one that ends prints its whole listing, once
    r = box.run(["print", "trace", "-dir", own, "-q"])
    t.check(r.rc == 0 and r.out.startswith("     Start   Duration") and r.out.count("DEVICE trace:") == 1
            and r.out.endswith("\n\n"), "print trace to stdout: %d %r" % (r.rc, r.out[:200]))
    # a query's own overflow where no table's sum explains it stays SQLite's (exit 5)
    r = box.run(["query", "-dir", tr, "-q", "SELECT sum(x) AS s FROM (SELECT 9223372036854775807 AS x UNION ALL "
                 "SELECT 1)"])
    t.check(r.rc == 5 and r.err == "tracebook: error: query: integer overflow\n", "a query's own overflow: %s" % r)
    for cmd in (["export", "timeline", "-o", box.path("timeline")], ["print", "trace"], ["info"]):
        r = box.run(cmd + ["-dir", own, "-q"])
        t.check(r.rc == 0 and "runtime error" not in r.err, "%s: %s" % (" ".join(cmd), r))


@case("an infinite value: inf in CSV, null in JSON (docs/spec.md, Outputs)")
def _(t):
    box = tbtest.Sandbox(SUITE.program, WORK, "inf")
    tr = trace(box)
    sql = "SELECT 1e308 * 10 AS p, -1e308 * 10 AS n, 1.5 AS f"
    r = box.run(["query", "-dir", tr, "-q", "--format", "csv", sql])
    t.check(r.rc == 0 and r.out == "p,n,f\ninf,-inf,1.5\n", "CSV: %s" % r)
    r = box.run(["query", "-dir", tr, "-q", "--format", "json", sql])
    t.check(r.rc == 0 and json.loads(r.out) == [{"p": None, "n": None, "f": 1.5}], "JSON: %s" % r)



@case("a .json.gz: two gzip members read as one; data after the last one is a warning (--strict: exit 3)")
def _(t):
    box = tbtest.Sandbox(SUITE.program, WORK, "gz")
    ev = '{"ph":"X","name":"%s","pid":1,"tid":1,"ts":%d,"dur":1}'
    two = gzip.compress(("[" + ev % ("a", 1) + ",").encode()) + gzip.compress((ev % ("b", 2) + "]").encode())
    for name, data, warn in (("two.json.gz", two, None), ("junk.json.gz", two + b"not gzip at all", len(two))):
        path = box.path(name)
        with open(path, "wb") as f:
            f.write(data)
        r = box.run(["query", "-dir", path, "--format", "csv", "SELECT group_concat(name) AS n FROM (SELECT s.value "
                     "AS name FROM TB_EVENT e JOIN STRING_IDS s ON s.id = e.name ORDER BY e.startNs)"])
        want = "" if warn is None else ("tracebook: warning: %s: data after the end of the gzip stream, from byte %d, "
                                        "ignored\n" % (path, warn))
        t.check(r.rc == 0 and r.out == "n\n\"a,b\"\n" and r.err == want, "%s: both events, warning %s: %s"
                % (name, warn, r))
        if warn:
            r = box.run(["export", "db", "--strict", "-dir", path, "-o", box.path("x.db")])
            t.check(r.rc == 3 and not os.path.exists(box.path("x.db")), "--strict: exit 3, no DB: %s" % r)


SUITE.main()
