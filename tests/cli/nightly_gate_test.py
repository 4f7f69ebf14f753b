#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# nightly_gate_test.py - the nightly gate of docs/nightly.md on six nights
# of one generated profile.
#
# tracebook-gen writes one torch_npu profiling directory (two ranks, seed 7)
# six times: nights 1 to 5 differ only by noise (each kernel type's times
# scaled by one factor within ±2% for the night, each task's within ±1%),
# night 6 has the same noise and one kernel type (ForeachMulScalarInplace,
# about a tenth of rank 0's device time) 30% slower. Each night is reported
# with samples/specs/nightly.yaml and compared with the night before it, as
# the cron job of docs/nightly.md does, from one working directory:
# `compare --fail-on-regression` must exit 0 on every noise night and 8 on
# night 6, naming the slow kernel type on stderr in the list of the largest
# regressions (report, key, column, base -> new, ratio).
#
# usage: nightly_gate_test.py TRACEBOOK TRACEBOOK_GEN SAMPLES_DIR OUTDIR
# Prints one `ok`/`FAIL` line per case and a final `N passed, N failed` line.
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, GEN, SAMPLES, OUT = tbtest.args("TRACEBOOK TRACEBOOK_GEN SAMPLES_DIR OUTDIR", 4)
SPEC = os.path.join(os.path.abspath(SAMPLES), "specs", "nightly.yaml")
SLOW = "ForeachMulScalarInplace"
NIGHTS = 6
WORK = tbtest.fresh_dir(os.path.abspath(OUT))
tb = tbtest.Program(TB, cwd=WORK, env={"XDG_CACHE_HOME": os.path.join(WORK, "cache")})
gen = tbtest.Program(GEN, cwd=WORK)
suite = tbtest.Suite(work=os.path.join(WORK, "cases"))


def night_args(n):
    a = ["--kind", "torch_npu_dir", "--events", "30000", "--ranks", "2", "--seed", "7",
         "--noise-seed", str(n), "--type-noise", "2", "--task-noise", "1"]
    return a + (["--slow", "%s=30" % SLOW] if n == NIGHTS else [])


def make_nights():
    os.makedirs(os.path.join(WORK, "runs"), exist_ok=True)
    for n in range(1, NIGHTS + 1):
        gen(*night_args(n), "-o", "runs/n%d" % n, code=0)
        tb("report", "-q", "-dir", "runs/n%d" % n, "--spec", SPEC, "-o", "reports/n%d" % n, "--keep-db", code=0)


def compare(n, out, reports="reports", **kw):
    return tb("compare", "-base", "%s/n%d" % (reports, n - 1), "-new", "%s/n%d" % (reports, n), "--spec", SPEC,
              "-o", "%s/n%d" % (out, n), "--fail-on-regression", **kw)


def regressions(out, n):
    with open(os.path.join(WORK, out, "n%d" % n, "tracebook_run.json")) as f:
        return json.load(f)["regressions"]


@suite.case()
def case_generator_nights(t):
    # the same ops in the same order every night: only the kernels' times move
    for n in (2, NIGHTS):
        t.check(gen(*night_args(n), "-o", "-", code=2).rc == 2, "torch_npu_dir needs a directory")
    a = os.path.join(WORK, "cases", "a.json")
    b = os.path.join(WORK, "cases", "b.json")
    os.makedirs(os.path.dirname(a), exist_ok=True)
    gen("--kind", "ascend", "--events", "3000", "--ranks", "1", "--noise-seed", "3", "--type-noise", "2", "-o", a,
        code=0)
    gen("--kind", "ascend", "--events", "3000", "--ranks", "1", "--noise-seed", "3", "--type-noise", "2", "-o", b,
        code=0)
    with open(a) as f:
        ea = json.load(f)
    with open(b) as f:
        eb = json.load(f)
    t.eq(ea, eb, "a night is reproducible")
    gen("--kind", "ascend", "--events", "3000", "--ranks", "1", "--slow", "MatMulV3=30", "-o", b, code=0)
    with open(b) as f:
        eb = json.load(f)
    t.eq(len(ea), len(eb), "the event count does not depend on the night")
    t.eq([e.get("name") for e in ea], [e.get("name") for e in eb], "nor do the events")
    mm = [(x, y) for x, y in zip(ea, eb) if str(x.get("name", "")).endswith("_MatMulV3") and x.get("ph") == "X"
          and "Task Type" in x.get("args", {})]
    t.check(mm and all(float(y["dur"]) > float(x["dur"]) * 1.2 for x, y in mm), "--slow MatMulV3=30 slows MatMulV3")
    r = gen("--kind", "kineto", "--events", "100", "--type-noise", "2", "-o", b)
    t.check(r.rc == 2 and "apply to --kind ascend" in r.err, "no noise for kineto", r.err)
    r = gen("--kind", "ascend", "--events", "100", "--slow", "MatMulV3", "-o", b)
    t.check(r.rc == 2 and "--slow needs TYPE=PCT" in r.err, "--slow without a percentage", r.err)


@suite.case()
def case_gate(t):
    make_nights()
    for n in range(2, NIGHTS):
        r = compare(n, "compare")
        t.eq(r.rc, 0, "noise night %d passes the gate" % n)
        t.check("tracebook: regression:" not in r.err, "noise night %d lists no regression" % n, r.err)
    r = compare(NIGHTS, "compare")
    t.eq(r.rc, 8, "the slow night fails the gate")
    listed = [line for line in r.err.splitlines() if line.startswith("tracebook: regression: ")]
    t.check(listed and all(SLOW in line for line in listed[:2]), "stderr names the slow kernel type first", r.err)
    # report, key, column, base -> new, ratio; times to the ns in us, the ratio to 4 decimals
    form = re.compile(r"^tracebook: regression: (\w+): (.+): (.+) (\d+(?:\.\d{1,3})?) -> (\d+(?:\.\d{1,3})?) "
                      r"\(x(\d+\.\d{4})\)$")
    for line in listed:
        m = form.match(line)
        if not t.check(m, "a regression line has its parts", line):
            continue
        t.check(1.2 < float(m.group(6)) < 1.45 or m.group(1) != "top_kernels", "the ratio is the slowdown", line)
    regs = regressions("compare", NIGHTS)
    t.check(regs and SLOW in regs[0]["key"], "tracebook_run.json lists the kernel type first", regs[:3])
    # -q keeps the list when the gate fails
    r = tb("compare", "-q", "-base", "reports/n5", "-new", "reports/n6", "--spec", SPEC, "-o", "compare/q",
           "--fail-on-regression")
    t.eq(r.rc, 8, "-q: the slow night fails the gate")
    t.check(SLOW in r.err and "compared" not in r.err, "-q: only the regressions", r.err)


OLD_RULES = """tracebook: 1
reports:
  - use: step_trace_time
    regressions:
""" + "".join("      - {column: %s, relative: 5%%, absolute: 1us}\n" % c
              for c in ("Computing", "Communication(Not Overlapped)", "Overlapped", "Communication", "Free", "Stage",
                        "Bubble", "Preparing"))
KERNEL_TIME = """tracebook: 1
reports:
  - id: kernel_time
    sql: |
      SELECT rankId AS "Rank ID:rank", name AS "Name", count(*) AS "Count", sum(dur) AS "Total Time:dur_ns",
             avg(dur) AS "Avg Time:dur_ns"
      FROM kernel GROUP BY rankId, name ORDER BY rankId, name
"""


@suite.case()
def case_default_rules(t):
    # samples/ascend_small with every task's time jittered by ±1% (a seed a
    # night); the fifth night also has aclnnMm_MatMulV3 (two fifths of the
    # kernel time) 30% slower. 5% and 1 us alone flag the Free time of some
    # step (60-150 us) on noise nights; the default rules, judging a change
    # against the step time and the steps' spread, flag nothing there and
    # still flag the slow kernel in a report without rules of its own.
    import random
    with open(os.path.join(SAMPLES, "ascend_small", "trace_view.json")) as f:
        events = json.load(f)
    d = os.path.join(WORK, "jitter")
    for n in range(1, 6):
        rnd = random.Random(n)
        out = []
        for e in events:
            e = dict(e)
            if e.get("ph") == "X" and "Task Type" in e.get("args", {}):
                j = 1 + rnd.uniform(-0.01, 0.01)
                e["dur"] = round(float(e["dur"]) * j * (1.3 if n == 5 and e["name"].endswith("_MatMulV3") else 1), 3)
            out.append(e)
        os.makedirs(os.path.join(d, str(n)), exist_ok=True)
        with open(os.path.join(d, str(n), "trace_view.json"), "w") as f:
            json.dump(out, f)
    specs = {}
    for name, text in (("old", OLD_RULES), ("kernels", KERNEL_TIME)):
        specs[name] = os.path.join(d, name + ".yaml")
        with open(specs[name], "w") as f:
            f.write(text)
    specs["default"] = "builtin:step_trace_time"

    def run(n, spec):
        return tb("compare", "-base", os.path.join(d, str(n - 1)), "-new", os.path.join(d, str(n)), "--spec",
                  specs[spec], "-o", os.path.join(d, "out", "%s-%d" % (spec, n)), "--fail-on-regression")

    old = [run(n, "old").rc for n in range(2, 5)]
    t.check(8 in old, "the noise trips 5% and 1 us alone", old)
    for n in range(2, 5):
        r = run(n, "default")
        t.eq(r.rc, 0, "night %d: the default rules see noise" % n)
        t.eq(run(n, "kernels").rc, 0, "night %d: kernel_time, no rules of its own: noise" % n)
    with open(os.path.join(d, "out", "default-2", "tracebook_run.json")) as f:
        entry = json.load(f)["reports"][0]
    # samples/ascend_small has 2 whole steps (too few for a spread): 1% of its 46.95 ms mean step
    t.check(abs(entry["noise_floor"]["Free"] - 469.543) < 0.01, "the floor: 1% of the mean step", entry)
    r = run(5, "kernels")
    t.eq(r.rc, 8, "the slow night: kernel_time flags it")
    listed = [x for x in r.err.splitlines() if x.startswith("tracebook: regression: ")]
    t.check(listed and all("aclnnMm_MatMulV3_MatMulV3" in x for x in listed), "only the slow kernel", r.err)


@suite.case()
def case_cut_step(t):
    # the generator cuts the last step of each rank short: it is marked in
    # step_all and left out of step, the step trace time and the means
    import sqlite3
    db = sqlite3.connect(os.path.join(WORK, "reports", "n1", "tracebook_trace.db"))
    steps = db.execute("SELECT rankId, id, dur, cut FROM step_all ORDER BY rankId, startNs").fetchall()
    for rank in (0, 1):
        mine = [x for x in steps if x[0] == rank]
        t.eq([x[3] for x in mine], [0] * (len(mine) - 1) + [1], "rank %d: its last step is cut" % rank)
        whole = sorted(x[2] for x in mine[:-1])
        t.check(mine[-1][2] * 2 < whole[len(whole) // 2], "rank %d: the cut step is short" % rank, mine[-1])
    n_whole = db.execute("SELECT count(*) FROM step").fetchone()[0]
    t.eq(n_whole, len(steps) - 2, "step has the whole steps")
    import csv
    with open(os.path.join(WORK, "reports", "n1", "step_trace_time.csv")) as f:
        rows = list(csv.DictReader(f))
    t.eq(len(rows), n_whole, "step_trace_time: one row per whole step")
    cut = {(x[0], x[1]) for x in steps if x[3]}
    t.check(not any((int(r["Rank ID"]), int(r["Step"])) in cut for r in rows), "the cut step is in no step_trace_time row",
            cut)
    with open(os.path.join(WORK, "reports", "n1", "night_summary.csv")) as f:
        summary = list(csv.DictReader(f))
    for r in summary:
        mine = sorted(x[2] for x in steps if x[0] == int(r["Rank"]) and not x[3])
        t.eq(int(r["Steps"]), len(mine), "night_summary: rank %s counts whole steps" % r["Rank"])
        mean = sum(mine) / len(mine) / 1000
        t.check(abs(float(r["Step Time(us)"]) - mean) < 0.001, "night_summary: the mean of whole steps", (r, mean))


@suite.case()
def case_top_n_union(t):
    # top 3 per rank: on night 6 the slow kernel type moves into rank 0's top 3
    # and pushes another kernel out; both are compared with their value of the
    # other night (the union of both nights' top 3), none is added or removed
    spec = os.path.join(WORK, "top3.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nreports:\n  - use: top_kernels\n    params: {top: 3}\n")
    r = tb("compare", "-base", "reports/n5", "-new", "reports/n6", "--spec", spec, "-o", "compare/top3")
    t.eq(r.rc, 0, "compare top 3")
    with open(os.path.join(WORK, "compare", "top3", "top_kernels_compare.csv")) as f:
        import csv
        rows = list(csv.DictReader(f))
    rank0 = [x for x in rows if x["Rank ID"] == "0"]
    t.eq(sorted(x["Status"] for x in rows), ["matched"] * len(rows), "every row matched")
    t.eq(len(rank0), 4, "rank 0: the three of each night, four kernels in all")
    slow = [x for x in rank0 if SLOW in x["Name"]]
    t.check(len(slow) == 1 and slow[0]["Total Time(us) Base"] and "Total Time" in slow[0]["Regressions"],
            "the kernel that moved into the top 3 is compared, and regressed", slow)
    # as run alone, each night's top 3 is still three rows per rank
    tb("report", "-q", "-dir", "reports/n6/tracebook_trace.db", "--spec", spec, "-o", "top3-n6", code=0)
    with open(os.path.join(WORK, "top3-n6", "top_kernels.csv")) as f:
        t.eq(len(f.read().splitlines()), 1 + 3 * 2, "the report itself keeps its top 3")


@suite.case()
def case_without_profiles(t):
    # the report folders carry their DB: with the raw profiles gone, from another
    # working directory and a cache of its own, the gate and the history judge alike
    with open(os.path.join(WORK, "reports", "n1", "tracebook_run.json")) as f:
        m = json.load(f)
    t.eq(m.get("trace_db"), "tracebook_trace.db", "the report run names its DB")
    t.check("tracebook_trace.db" in m.get("outputs", {}).get("files", []), "listed among its outputs", m)
    import shutil
    shutil.rmtree(os.path.join(WORK, "runs"))
    elsewhere = os.path.join(WORK, "elsewhere")
    os.makedirs(elsewhere, exist_ok=True)
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(elsewhere, "cache"))
    reports = os.path.join(WORK, "reports")
    for n in range(2, NIGHTS + 1):
        r = compare(n, os.path.join(elsewhere, "compare"), reports, cwd=elsewhere, env=env)
        t.eq(r.rc, 8 if n == NIGHTS else 0, "night %d without its profile" % n)
        if n == NIGHTS:
            t.check(SLOW in r.err, "the slow kernel type named without the profiles", r.err)
    hist = os.path.join(elsewhere, "nights.db")
    for n in range(1, NIGHTS + 1):
        tb("history", "add", "-q", "--history", hist, os.path.join(reports, "n%d" % n), "--label", "n%d" % n,
           cwd=elsewhere, env=env, code=0)
    r = tb("history", "report", "-q", "--history", hist, "--spec", SPEC, "-o", "trend", "--fail-on-regression",
           cwd=elsewhere, env=env)
    t.eq(r.rc, 8, "history: the sixth night stands out from the five before it")
    with open(os.path.join(elsewhere, "trend", "tracebook_run.json")) as f:
        regs = json.load(f)["regressions"]
    t.check(regs and all(SLOW in g["key"] for g in regs), "history: only the slow kernel type", regs[:3])
    # a report folder without its DB still names its inputs: gone, they fail as before
    os.remove(os.path.join(reports, "n1", "tracebook_trace.db"))
    r = compare(2, os.path.join(elsewhere, "compare2"), reports, cwd=elsewhere, env=env)
    t.check(r.rc == 6 and "cannot read" in r.err, "without the DB the inputs are read", r.err)
    t.check("keeps no trace DB" in r.err and "--keep-db" in r.err, "the error says what would have kept the run",
            r.err)


suite.main(sys.argv[5:])
