#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# print_test.py - `print summary` and `print trace` read back through
# tracebook's own topsprof reader, and tracebook's numbers never in exponent
# notation.
#
# For each sample: load it (export db), print its listing with --log-file,
# load the listing with export db (it is a topsprof listing then) and compare
# what the topsprof reader found (TB_TOPS_SUMMARY, TB_TOPS_TOTAL, TASK) with
# sums computed here with SQL over the sample's DB: every class's calls
# exactly, its times within the rounding of two printed decimals. Also:
# --per-device splits by device, --width cuts names, the window options
# select fewer tasks, --log-file leaves no temporary, and the CSV and JSON of
# every built-in report hold no exponent form.
#
# usage: print_test.py TRACEBOOK SAMPLES_DIR OUTDIR
# Prints one `ok`/`FAIL` line per case and a final `N passed, N failed`
# line; exits 0 when all pass, 1 otherwise.
import glob
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, SAMPLES, OUT = tbtest.args("TRACEBOOK SAMPLES_DIR OUTDIR", 3, 3)

CLASSES = {
    "DEVICE": "SELECT rankId, deviceId, name, startNs, endNs, dur FROM device_task WHERE name IS NOT NULL AND name <> ''",
    "HOST": "SELECT rankId, NULL AS deviceId, name, startNs, endNs, dur FROM api WHERE source = 'PYTORCH'"
            " AND name IS NOT NULL AND name <> ''",
    "RUNTIME": "SELECT rankId, NULL AS deviceId, name, startNs, endNs, dur FROM api WHERE source = 'CANN'"
               " AND name IS NOT NULL AND name <> ''",
}

INPUTS = ["ascend_small", "kineto_small", "torch_npu_2rank", "topsprof/trace_nodes.txt"]


run = tbtest.Program(TB, code=0)


def case_dir(name):
    return tbtest.fresh_dir(os.path.join(OUT, name))


def load(path, d, name):
    db = os.path.join(d, name + ".db")
    run("export", "db", "-q", "-dir", path, "-o", db)
    return sqlite3.connect(db)


def within(exact, printed):
    # a value in [1, 1000) units printed with two decimals is off by at most 0.005 units,
    # i.e. at most 0.5% of the value; values below 1 ns do not occur
    if abs(exact - printed) > exact * 0.005 + 0.5:
        raise AssertionError("printed %d, exact %d" % (printed, exact))


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def check_summary(sample):
    d = case_dir("summary_" + sample.replace("/", "_"))
    src = load(os.path.join(SAMPLES, sample), d, "src")
    log = os.path.join(d, "sub", "summary.txt")
    p = run("print", "summary", "-q", "-dir", os.path.join(SAMPLES, sample), "--log-file", log)
    expect(p.stdout == "", "stdout not empty with --log-file")
    expect(os.listdir(os.path.dirname(log)) == ["summary.txt"], "leftovers: %s" % os.listdir(os.path.dirname(log)))
    back = load(log, d, "back")
    totals = {r[0]: r[1:] for r in back.execute(
        "SELECT class, accumulateNs, totalCalls, totalNs FROM TB_TOPS_TOTAL WHERE fromTrace = 0")}
    text = open(log, encoding="utf-8").read()
    for klass, sql in CLASSES.items():
        calls, acc, first, last, names = src.execute(
            "SELECT count(*), total(dur), min(startNs), max(endNs), count(DISTINCT name) FROM (%s)" % sql).fetchone()
        if calls == 0:
            expect(klass not in totals, "%s: a total for an empty class" % klass)
            expect("%s activities:\n    does not contain" % klass in text, "%s: no 'does not contain' line" % klass)
            continue
        expect(klass in totals, "%s: no footer read back" % klass)
        b_acc, b_calls, b_total = totals[klass]
        expect(b_calls == calls, "%s: Total Calls %s, want %d" % (klass, b_calls, calls))
        within(int(acc), b_acc)
        if klass == "DEVICE":
            within(last - first, b_total)
        else:
            expect(b_total is None, "%s: a Total Time" % klass)
        rows = back.execute("SELECT count(*), sum(calls), sum(timeNs), sum(timePct) FROM TB_TOPS_SUMMARY"
                            " WHERE class = ?", (klass,)).fetchone()
        expect(rows[0] == names, "%s: %d rows, want one per name (%d)" % (klass, rows[0], names))
        expect(rows[1] == calls, "%s: rows' calls %d, want %d" % (klass, rows[1], calls))
        expect(abs(rows[3] - 100) < 0.01 * names + 0.01, "%s: Time(%%) sums to %s" % (klass, rows[3]))
        # every row: calls exact, time within rounding, biggest first
        want = {n: (c, t, lo, hi) for n, c, t, lo, hi in src.execute(
            "SELECT name, count(*), sum(dur), min(dur), max(dur) FROM (%s) GROUP BY name" % sql)}
        prev = None
        for name, c, t, lo, hi in back.execute(
                "SELECT n.value, s.calls, s.timeNs, s.minNs, s.maxNs FROM TB_TOPS_SUMMARY s"
                " JOIN STRING_IDS n ON n.id = s.name WHERE s.class = ? ORDER BY s.rowid", (klass,)):
            expect(name in want, "%s: unknown name %r" % (klass, name))
            wc, wt, wlo, whi = want[name]
            expect(c == wc, "%s %r: calls %d, want %d" % (klass, name, c, wc))
            within(wt, t)
            within(wlo, lo)
            within(whi, hi)
            expect(prev is None or prev >= wt, "%s: not sorted by time at %r" % (klass, name))
            prev = wt


def check_trace(sample):
    d = case_dir("trace_" + sample.replace("/", "_"))
    src = load(os.path.join(SAMPLES, sample), d, "src")
    log = os.path.join(d, "trace.txt")
    run("print", "trace", "-q", "-dir", os.path.join(SAMPLES, sample), "--log-file", log)
    back = load(log, d, "back")
    calls, acc, first, last = src.execute(
        "SELECT count(*), total(dur), min(startNs), max(endNs) FROM (%s)" % CLASSES["DEVICE"]).fetchone()
    b = back.execute("SELECT accumulateNs, totalCalls, totalNs FROM TB_TOPS_TOTAL WHERE fromTrace = 1").fetchall()
    expect(len(b) == 1, "trace footers: %s" % b)
    expect(b[0][1] == calls, "Total Calls %d, want %d" % (b[0][1], calls))
    within(int(acc), b[0][0])
    within(last - first, b[0][2])
    # the rows: one task each, in start order, starts relative to the first
    got = back.execute("SELECT t.startNs, t.endNs - t.startNs, n.value FROM TASK t JOIN STRING_IDS n"
                       " ON n.id = t.name ORDER BY t.globalTaskId").fetchall()
    want = src.execute("SELECT startNs - ?, dur, name FROM (%s) ORDER BY startNs" % CLASSES["DEVICE"],
                       (first,)).fetchall()
    expect(len(got) == len(want), "%d rows, want %d" % (len(got), len(want)))
    starts = [g[0] for g in got]
    expect(starts == sorted(starts) and starts[0] == 0, "starts not in order from 0")
    for (gs, gd, gn), (ws, wd, wn) in zip(got, want):
        within(ws, gs)
        within(wd, gd)


def check_per_device():
    d = case_dir("per_device")
    inp = os.path.join(SAMPLES, "torch_npu_2rank")
    src = load(inp, d, "src")
    log = os.path.join(d, "per_device.txt")
    run("print", "summary", "-q", "-dir", inp, "--per-device", "--log-file", log)
    back = load(log, d, "back")
    want = dict(src.execute("SELECT deviceId, count(*) FROM (%s) GROUP BY deviceId" % CLASSES["DEVICE"]))
    expect(len(want) == 2, "the sample has two devices: %s" % want)
    got = dict(back.execute("SELECT deviceId, totalCalls FROM TB_TOPS_TOTAL WHERE class = 'DEVICE'"))
    expect(got == want, "per device calls %s, want %s" % (got, want))
    # host ops go with their rank's device (one rank per device here)
    want = dict(src.execute("SELECT d.deviceId, count(*) FROM (%s) h JOIN (SELECT DISTINCT rankId, deviceId"
                            " FROM device_task) d ON d.rankId = h.rankId GROUP BY d.deviceId" % CLASSES["HOST"]))
    got = dict(back.execute("SELECT deviceId, totalCalls FROM TB_TOPS_TOTAL WHERE class = 'HOST'"))
    expect(got == want, "per device host calls %s, want %s" % (got, want))
    text = open(log, encoding="utf-8").read()
    expect(re.search(r'^Device "device rank 0 \(0\)"$', text, re.M), "no device line:\n" + text[:300])


def check_width():
    d = case_dir("width")
    inp = os.path.join(SAMPLES, "ascend_small")
    full = run("print", "summary", "-q", "-dir", inp).stdout
    cut = run("print", "summary", "-q", "-dir", inp, "--width", "24").stdout
    names = [l[56:] for l in full.splitlines() if l.endswith("ForeachAddScalarInplace")]
    expect(names and len(names[0]) > 24, "no long name in the sample")
    cut_names = [l[56:] for l in cut.splitlines() if re.match(r"^ +[0-9.]+% ", l)]
    full_names = [l[56:] for l in full.splitlines() if re.match(r"^ +[0-9.]+% ", l)]
    expect(len(cut_names) == len(full_names), "not the same rows")
    short = sum(len(n) <= 24 for n in cut_names)
    expect(short > len(cut_names) * 0.8, "only %d of %d names within 24" % (short, len(cut_names)))
    expect(any("..." in n for n in cut_names), "no cut name")
    for c, f in zip(cut_names, full_names):
        expect(c == f or ("..." in c and len(c) < len(f)), "%r shown as %r" % (f, c))
    # kept apart: a name the width would cut to another's text is cut one character later
    expect(len(set(cut_names)) == len(set(full_names)), "cut names collide: %d of %d" %
           (len(set(cut_names)), len(set(full_names))))
    tr = [l[55:] for l in run("print", "trace", "-q", "-dir", inp, "--width", "24").stdout.splitlines()
          if re.match(r"^ +[0-9.]+(ns|us|ms|s) ", l)]
    expect(max(len(n) for n in tr) <= 28 and any("..." in n for n in tr), "trace names not cut")
    p = run("print", "summary", "-q", "-dir", inp, "--width", "x", code=2)
    expect("--width" in p.stderr, p.stderr)
    # a fixed unit
    ms = run("print", "trace", "-q", "-dir", inp, "--timeunit", "ms").stdout
    rows = [l for l in ms.splitlines() if re.match(r"^ +[0-9.]+(ns|us|ms|s) ", l)]
    expect(rows and all(re.match(r"^ +[0-9]+\.[0-9]{2}ms +[0-9]+\.[0-9]{2}ms ", l) for l in rows),
           "not every time in ms")
    del d


def check_window():
    d = case_dir("window")
    inp = os.path.join(SAMPLES, "ascend_small")
    src = load(inp, d, "src")
    s, e = src.execute("SELECT startNs, endNs FROM STEP_TIME WHERE id = 9").fetchone()
    want = src.execute("SELECT count(*) FROM (%s) WHERE startNs >= ? AND startNs < ?" % CLASSES["DEVICE"],
                       (s, e)).fetchone()[0]
    out = run("print", "trace", "-q", "-dir", inp, "--model-id", "4294967295", "--iteration-id", "9").stdout
    m = re.search(r"Total Calls ([0-9]+)", out)
    expect(m, "no footer")
    total = src.execute("SELECT count(*) FROM (%s)" % CLASSES["DEVICE"]).fetchone()[0]
    expect(0 < int(m.group(1)) < total, "window: %s calls of %d" % (m.group(1), total))
    expect(int(m.group(1)) == want, "window: %s calls, want %d" % (m.group(1), want))


def check_errors():
    d = case_dir("errors")
    inp = os.path.join(SAMPLES, "ascend_small")
    blocker = os.path.join(d, "file")
    open(blocker, "w").close()
    p = run("print", "summary", "-q", "-dir", inp, "--log-file", os.path.join(blocker, "x.txt"), code=4)
    expect(p.stderr == "tracebook: error: %s/x.txt: cannot write: Not a directory\n" % blocker, p.stderr)
    expect(os.listdir(d) == ["file"], "leftovers: %s" % os.listdir(d))
    p = run("print", "trace", "-q", "-dir", inp, "--model-id", "4294967295", "--iteration-id", "99", code=2)
    expect("step mode has steps 8-10" in p.stderr, p.stderr)
    p = run("print", "summary", "-q", code=2)
    expect(p.stderr.startswith("tracebook: error: no input: give -dir PATH\n"), p.stderr)
    p = run("print", code=2)
    expect(p.stderr.startswith("tracebook: error: print needs a type: summary, trace\n"), p.stderr)


def check_no_exponent():
    d = case_dir("no_exponent")
    num = re.compile(r"(^|[,:\[])-?[0-9.]+[eE][-+]?[0-9]+(?=[,}\]\n]|$)", re.M)
    for sample in ["ascend_small", "kineto_small", "torch_npu_2rank"]:
        o = os.path.join(d, sample)
        names = [l.split()[0] for l in run("reports").stdout.splitlines()]
        args = ["report", "-q", "-dir", os.path.join(SAMPLES, sample), "-o", o, "--format", "csv,json"]
        for n in names:
            args += ["--spec", "builtin:" + n]
        run(*args)
        files = glob.glob(os.path.join(o, "*.csv")) + glob.glob(os.path.join(o, "*.json"))
        expect(files, "no output")
        for f in files:
            m = num.search(open(f, encoding="utf-8").read())
            expect(not m, "%s: exponent form %r" % (f, m and m.group(0)))


CASES = [(f"summary {s}", lambda s=s: check_summary(s)) for s in INPUTS]
CASES += [(f"trace {s}", lambda s=s: check_trace(s)) for s in INPUTS]
CASES += [("per device", check_per_device), ("width and unit", check_width), ("window", check_window),
          ("errors", check_errors), ("no exponent", check_no_exponent)]

os.environ.setdefault("XDG_CACHE_HOME", os.path.join(OUT, "cache"))
os.makedirs(OUT, exist_ok=True)
suite = tbtest.Suite(work=OUT)
for name, fn in CASES:
    suite.add(name, fn)
suite.main()
