#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# advisor_test.py - the built-in advisor (reports/advisor.yaml) and the
# spec language's advisor rules (`advice:`), on generated data.
#
# The data: traces of tracebook-gen, and copies of them changed here so that
# one rule's condition holds with figures known from the change (a kernel
# made AI_CPU, a first step started earlier, a pause in the host's
# launches, kernels made tiny, a rank whose kernels run longer, a rank whose
# collectives are shorter, a copy to the host removed), plus a small
# cluster_communication_matrix.json written here. Each rule has a case where
# it fires, with its evidence checked against those figures, and one where
# it does not. Also: advisor.csv/advisor.json/tracebook_run.json, thresholds
# changed with --param, --fail-on-finding and its exit code, a rule of the
# user's own spec (and `use:` of a built-in rule), and the load errors of
# the language, each with its file:line.
#
# usage: advisor_test.py TRACEBOOK TRACEBOOK_GEN OUTDIR [CASE...]  (cases whose name holds a CASE)
# Prints one `ok`/`FAIL` line per case and a final count; exits 0 when none failed.
import csv
import json
import os
import shutil
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

ARGS = tbtest.args("TRACEBOOK TRACEBOOK_GEN OUTDIR [CASE...]", 3)
TB, GEN, OUT = (os.path.abspath(a) for a in ARGS[:3])
RULES = ["advisor_aicpu_op", "advisor_data_loading", "advisor_host_gaps", "advisor_exposed_comm",
         "advisor_tiny_kernels", "advisor_d2h_copy", "advisor_slow_rank", "advisor_slow_rank_vote",
         "advisor_slow_link", "advisor_straggler"]
CSV_HEAD = "Severity,Rule,Title,Finding,Suggestion,Evidence Rows,Threshold,Reason,Source,Evidence Files"

tb = tbtest.Program(TB)
gen = tbtest.Program(GEN, code=0)
suite = tbtest.Suite(tb, work=os.path.join(OUT, "cases"))
INPUTS = tbtest.fresh_dir(os.path.join(OUT, "inputs"))


# ---- generated inputs ------------------------------------------------------------

def generate(name, *args):
    path = os.path.join(INPUTS, name)
    if not os.path.exists(path):
        gen(*args, "-o", path)
    return path


def one_rank():
    """An Ascend trace of one rank, no communication: no rule fires on it."""
    return generate("one.json", "--kind", "ascend", "--events", "4000", "--ranks", "1", "--seed", "1")


def group_rank():
    """An Ascend trace of one rank of a group of 4 (with collectives)."""
    return generate("group.json", "--kind", "ascend", "--events", "6000", "--ranks", "4", "--seed", "7")


def kineto():
    return generate("kineto.json", "--kind", "kineto", "--events", "6000", "--ranks", "1", "--seed", "3")


def events(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_events(ev, path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(ev, f)
    return path


def pids(ev):
    return {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}


def of(ev, process, ph="X"):
    p = pids(ev)
    return [e for e in ev if p.get(e.get("pid")) == process and e.get("ph") == ph]


def ns(ts):
    """An Ascend trace's microsecond timestamp (a string with three decimals) in ns."""
    return int(Decimal(str(ts)) * 1000)


def us(v):
    """ns as an Ascend trace's microsecond timestamp (exact: no float on the way)."""
    return str((Decimal(v) / 1000).quantize(Decimal("0.001")))


def shift_after(ev, t0, d):
    """Delays everything at or after t0 (ns) by d ns; ranges across t0 grow by d."""
    for e in ev:
        if "ts" not in e:
            continue
        t = ns(e["ts"])
        if t >= t0:
            e["ts"] = us(t + d)
        elif e.get("ph") == "X" and t + ns(e["dur"]) > t0:
            e["dur"] = float(Decimal(ns(e["dur"]) + d) / 1000)


def pause_host(ev, t0, d):
    """The host pauses d ns at t0: host events at or after t0 move by d (ranges
    across t0 grow), and so do the device tasks those calls launched (and the
    flow ends on them); the device work launched before t0 stays."""
    p = pids(ev)
    host = {pid for pid, name in p.items() if name in ("Python", "CANN")}
    late = {e["args"]["connection_id"] for e in ev if p.get(e.get("pid")) == "CANN" and e.get("ph") == "X"
            and "connection_id" in e.get("args", {}) and ns(e["ts"]) >= t0}
    moved = set()
    for e in ev:
        if "ts" not in e:
            continue
        if e.get("pid") in host:
            t = ns(e["ts"])
            if t >= t0:
                e["ts"] = us(t + d)
            elif e.get("ph") == "X" and t + ns(e["dur"]) > t0:
                e["dur"] = float(Decimal(ns(e["dur"]) + d) / 1000)
        elif e.get("ph") == "X" and e.get("args", {}).get("connection_id") in late:
            moved.add((e["pid"], e["tid"], e["ts"]))
            e["ts"] = us(ns(e["ts"]) + d)
    for e in ev:
        if e.get("ph") == "f" and (e.get("pid"), e.get("tid"), e.get("ts")) in moved:
            e["ts"] = us(ns(e["ts"]) + d)


# ---- running the advisor ---------------------------------------------------------

def advise(t, inputs, *extra, code=0, spec="builtin:advisor"):
    args = ["report", "-q"]
    for i in inputs:
        args += ["-dir", i]
    r = t.run(*args, "--spec", spec, "-o", t.out, *extra)
    t.eq(r.rc, code, "exit code of %s (stderr: %s)" % (" ".join(extra) or "the run", r.err.strip()))
    return r


def findings(t):
    with open(os.path.join(t.out, "advisor.csv"), newline="", encoding="utf-8") as f:
        return {row["Rule"]: row for row in csv.DictReader(f)}


def evidence(t, rule):
    with open(os.path.join(t.out, rule + ".csv"), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def fired_only(t, want):
    got = sorted(findings(t))
    t.eq(got, sorted(want), "the rules that fired")


# ---- no rule fires -----------------------------------------------------------------

@suite.case("quiet data: no finding; advisor.csv and .json still written, every rule in tracebook_run.json")
def case_quiet(t):
    advise(t, [one_rank()])
    with open(os.path.join(t.out, "advisor.csv"), encoding="utf-8") as f:
        t.eq(f.read(), CSV_HEAD + "\n", "advisor.csv without findings")
    with open(os.path.join(t.out, "advisor.json"), encoding="utf-8") as f:
        doc = json.load(f)
    t.eq(doc["counts"], {"critical": 0, "warning": 0, "info": 0}, "advisor.json counts")
    t.eq(doc["findings"], [], "advisor.json findings")
    t.eq([r["rule"] for r in doc["rules"]], RULES, "advisor.json rules, in run order")
    with open(os.path.join(t.out, "tracebook_run.json"), encoding="utf-8") as f:
        meta = json.load(f)
    adv = meta.get("advisor", {})
    t.eq(adv.get("files"), ["advisor.csv", "advisor.json"], "tracebook_run.json: the advisor's files")
    t.eq(adv.get("counts"), {"critical": 0, "warning": 0, "info": 0}, "tracebook_run.json: counts")
    t.eq([r["rule"] for r in adv.get("rules", [])], RULES, "tracebook_run.json: the rules")
    skipped = {r["rule"]: r.get("skipped") for r in adv.get("rules", []) if "skipped" in r}
    t.eq(sorted(skipped), ["advisor_slow_link", "advisor_slow_rank_vote", "advisor_straggler"],
         "rules skipped (no communication_matrix, slow_rank_vote_ops, slow_rank_op rows)")
    # the quiet run passes CI at any severity
    advise(t, [one_rank()], "--fail-on-finding", "info")


# ---- advisor_aicpu_op --------------------------------------------------------------

@suite.case("aicpu_op: an Add kernel made AI_CPU fires with its time; NonZero (AI_CPU only) never does")
def case_aicpu(t):
    ev = events(one_rank())
    adds = [e for e in of(ev, "Ascend Hardware") if e["name"].endswith("_Add")
            and e["args"].get("Task Type") != "AI_CPU"]
    t.check(adds, "the trace has Add kernels")
    k = max(adds, key=lambda e: ns(e["dur"]))
    k["args"]["Task Type"] = "AI_CPU"
    path = write_events(ev, t.path("aicpu.json"))
    advise(t, [path])
    fired_only(t, ["advisor_aicpu_op"])
    rows = evidence(t, "advisor_aicpu_op")
    t.eq([(r["Operator"], r["AI_CPU Calls"], r["AI_CPU Time(us)"]) for r in rows],
         [("Add", "1", us(ns(k["dur"])).rstrip("0").rstrip("."))], "the evidence: Add, 1 call, its time")
    t.check("Add" in findings(t)["advisor_aicpu_op"]["Finding"], "the message names Add",
            findings(t)["advisor_aicpu_op"]["Finding"])
    # a threshold above that time: quiet
    advise(t, [path], "--param", "advisor_aicpu_op.threshold=%d" % (ns(k["dur"]) + 1))
    fired_only(t, [])
    t.eq(findings(t), {}, "no finding above the threshold")


# ---- advisor_data_loading ------------------------------------------------------------

@suite.case("data_loading: the first step's work 100 ms after its start fires with Preparing + 100 ms")
def case_data_loading(t):
    base = t.run("query", "-dir", one_rank(), "--format", "json",
                 "SELECT step, preparing, endNs - fwkStartNs AS t FROM step_trace_time ORDER BY step")
    t.eq(base.rc, 0, "query the base step trace")
    steps = json.loads(base.out)
    ev = events(one_rank())
    first = min((e for e in of(ev, "Python") if e["name"].startswith("ProfilerStep#")), key=lambda e: ns(e["ts"]))
    d = 100 * 1000 * 1000
    # everything after the first step's start 100 ms later: its first device work too
    shift_after(ev, ns(first["ts"]) + 1, d)
    path = write_events(ev, t.path("loading.json"))
    advise(t, [path])
    fired_only(t, ["advisor_data_loading"])
    rows = evidence(t, "advisor_data_loading")
    s = steps[0]
    t.eq([(r["Step"], Decimal(r["Preparing(us)"])) for r in rows], [(str(s["step"]), Decimal(s["preparing"] + d) / 1000)],
         "the evidence: the first step, its Preparing grown by 100 ms")
    t.eq(Decimal(rows[0]["Step Time(us)"]), Decimal(s["t"] + d) / 1000, "its step time grown by 100 ms")


# ---- advisor_host_gaps ------------------------------------------------------------------

@suite.case("host_gaps: a 100 ms pause of the host before a launch fires with that gap; none without it")
def case_host_gaps(t):
    ev = events(one_rank())
    hw = sorted(of(ev, "Ascend Hardware"), key=lambda e: ns(e["ts"]))
    cann = {e["args"].get("connection_id"): e for e in of(ev, "CANN") if "connection_id" in e.get("args", {})}
    # a task in the second half launched in a step that launched compute
    # before it (the step's Preparing stays as it was)
    steps = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in of(ev, "Python") if e["name"].startswith("ProfilerStep#")]
    launched = set()
    pick = None
    for i, e in enumerate(hw):
        call = cann.get(e["args"].get("connection_id"))
        step = [s for s in steps if call and s[0] <= ns(call["ts"]) < s[1]]
        if i > len(hw) // 2 and step and step[0] in launched:
            pick = (e, call)
            break
        if e["args"].get("Task Type") in ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "AI_CPU"):
            launched.update(step)  # the step's first compute: its Preparing ends there
    t.check(pick, "a task launched in a step after its first compute")
    task, call = pick
    d = 100 * 1000 * 1000
    pause_host(ev, ns(call["ts"]), d)
    # the gap as the rule defines it, on the changed trace: the task's start
    # less the latest end of the tasks before it in (start, end) order
    hw = sorted(of(ev, "Ascend Hardware"), key=lambda e: (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    idle_from = max(ns(e["ts"]) + ns(e["dur"]) for e in hw[:hw.index(task)])
    gap = ns(task["ts"]) - idle_from
    t.check(gap >= 1000 * 1000, "the pause made a gap of 1 ms or more (what the device had queued ran first)", gap)
    path = write_events(ev, t.path("gaps.json"))
    advise(t, [path])
    fired_only(t, ["advisor_host_gaps"])
    rows = evidence(t, "advisor_host_gaps")
    t.eq([(Decimal(r["Gap(us)"]), r["Next Task"], r["Launch"]) for r in rows],
         [(Decimal(gap) / 1000, task["name"], call["name"])], "the evidence: one gap, its task and launch")
    t.eq(Decimal(rows[0]["Idle From(us)"]) * 1000, idle_from, "the gap starts where the device went idle")


# ---- advisor_exposed_comm ----------------------------------------------------------------

@suite.case("exposed_comm: a group's steps fire with their shares; one rank without collectives does not")
def case_exposed(t):
    inputs = [group_rank()]
    advise(t, inputs)
    t.check("advisor_exposed_comm" in findings(t), "exposed communication found")
    rows = evidence(t, "advisor_exposed_comm")
    t.check(rows, "evidence rows")
    for r in rows:
        share = Decimal(100) * Decimal(r["Exposed(us)"]) / Decimal(r["Step Time(us)"])
        t.eq(Decimal(r["Share(%)"]), round(share, 2), "Share of step %s" % r["Step"])
        t.check(share >= 20, "step %s at or above the threshold" % r["Step"])
    q = t.run("query", "-dir", inputs[0], "--format", "csv",
              "SELECT count(*) FROM step_trace_time WHERE 100.0 * communicationNotOverlapped / (endNs - startNs) >= 20")
    t.eq(q.out.splitlines()[-1], str(len(rows)), "every step at or above the threshold is evidence")
    top = max(Decimal(r["Share(%)"]) for r in rows)
    advise(t, inputs, "--param", "advisor_exposed_comm.threshold=%d" % (int(top) + 1))
    t.check("advisor_exposed_comm" not in findings(t), "quiet above the largest share")
    advise(t, [one_rank()])
    t.check("advisor_exposed_comm" not in findings(t), "no collectives, no exposed communication")


# ---- advisor_tiny_kernels -------------------------------------------------------------

@suite.case("tiny_kernels: vector kernels made 2 us long fire, most frequent first")
def case_tiny(t):
    ev = events(one_rank())
    aiv = [e for e in of(ev, "Ascend Hardware") if e["args"].get("Task Type") == "AI_VECTOR_CORE"]
    for e in aiv:
        e["dur"] = 2.0
    path = write_events(ev, t.path("tiny.json"))
    advise(t, [path])
    fired_only(t, ["advisor_tiny_kernels"])
    kernels = [e for e in of(ev, "Ascend Hardware")
               if e["args"].get("Task Type") in ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "AI_CPU")]
    tiny = [e for e in kernels if ns(e["dur"]) < 10000]
    rows = evidence(t, "advisor_tiny_kernels")
    t.eq(Decimal(rows[0]["Tiny Share(%)"]), round(Decimal(100 * len(tiny)) / len(kernels), 2), "the tiny share")
    counts = {}
    for e in tiny:
        counts[e["name"]] = counts.get(e["name"], 0) + 1
    want = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:20]
    t.eq([(r["Name"], int(r["Calls"])) for r in rows], want, "the tiny kernels, most frequent first, 20 at most")


# ---- advisor_d2h_copy ------------------------------------------------------------------

def kineto_dtoh(ev):
    return [e for e in ev.get("traceEvents", []) if e.get("cat") == "gpu_memcpy" and "DtoH" in e.get("name", "")]


@suite.case("d2h_copy: the Kineto trace's copies to the host fire per step; removed, nothing")
def case_d2h(t):
    doc = events(kineto())
    copies = kineto_dtoh(doc)
    t.check(copies, "the generated trace has DtoH copies")
    advise(t, [kineto()])
    t.check("advisor_d2h_copy" in findings(t), "copies to the host found")
    rows = evidence(t, "advisor_d2h_copy")
    q = t.run("query", "-dir", kineto(), "--format", "csv",
              "SELECT count(*) FROM memcpy m JOIN step_trace_time s ON s.rankId = m.rankId AND m.startNs >= s.startNs"
              " AND m.startNs < s.endNs WHERE s.step IS NOT NULL AND m.operation = 'device to host'")
    t.eq(sum(int(r["Copies"]) for r in rows), int(q.out.splitlines()[-1]), "every copy inside a step counted")
    t.check(sum(int(r["Copies"]) for r in rows) <= len(copies), "no more than the trace has")
    drop = set(id(e) for e in copies)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if id(e) not in drop]
    path = write_events(doc, t.path("no_dtoh.json"))
    advise(t, [path])
    t.check("advisor_d2h_copy" not in findings(t), "no copy to the host, no finding")


# ---- advisor_slow_rank and advisor_straggler ------------------------------------------

def four_ranks(t, change=None):
    """Four copies of the group trace as ranks 0..3; change(ev) alters rank 3's."""
    paths = []
    for r in range(4):
        p = t.path("%srank%d.json" % ("changed_" if change else "", r))
        if r == 3 and change:
            ev = events(group_rank())
            change(ev)
            write_events(ev, p)
        else:
            shutil.copyfile(group_rank(), p)
        paths.append(p)
    return paths


@suite.case("slow_rank: rank 3 running 1.5 times slower fires for rank 3 alone; four equal ranks do not")
def case_slow_rank(t):
    def slower(ev):
        t0 = min(ns(e["ts"]) for e in ev if "ts" in e)
        for e in ev:
            if "ts" in e:
                e["ts"] = us(t0 + (ns(e["ts"]) - t0) * 3 // 2)
            if "dur" in e:
                e["dur"] = float(Decimal(ns(e["dur"]) * 3 // 2) / 1000)
    advise(t, four_ranks(t))
    t.check("advisor_slow_rank" not in findings(t), "equal ranks: no slow rank")
    t.check("advisor_straggler" not in findings(t), "equal ranks: no straggler")
    advise(t, four_ranks(t, slower))
    t.check("advisor_slow_rank" in findings(t), "rank 3 found slow")
    rows = evidence(t, "advisor_slow_rank")
    t.eq([r["Rank"] for r in rows], ["3"], "the slow rank")
    q = t.run("query", "-dir", group_rank(), "--format", "csv", "SELECT avg(computing) FROM step_trace_time")
    base = Decimal(q.out.splitlines()[-1])
    t.eq(Decimal(rows[0]["Median(us)"]), Decimal(round(base)) / 1000, "the median is an unchanged rank's")
    # each task's times scaled and cut to whole ns: a few ns of the 42 ms
    t.check(abs(Decimal(rows[0]["Computing(us)"]) * 1000 - base * 3 / 2) <= 500, "rank 3 computes 1.5 times as long",
            rows[0]["Computing(us)"])
    t.check(abs(Decimal(rows[0]["Excess(%)"]) - 50) <= Decimal("0.01"), "50% above the median", rows[0]["Excess(%)"])


@suite.case("straggler: rank 3's collectives halved make it the last arrival of each; equal ranks do not")
def case_straggler(t):
    saved = []

    def shorter(ev):
        for e in of(ev, "Communication"):
            before = ns(e["dur"])
            e["dur"] = float(Decimal(before // 2) / 1000)
            if "send" not in e["name"] and "receive" not in e["name"]:
                saved.append(before - before // 2)
    paths = four_ranks(t, shorter)
    advise(t, paths)
    t.check("advisor_straggler" in findings(t), "rank 3 found a straggler")
    rows = evidence(t, "advisor_straggler")
    t.eq([(r["Rank"], r["Last Arrivals"] == r["Ops"], r["Share(%)"]) for r in rows], [("3", True, "100")],
         "rank 3 is the one last arrival of every op")
    q = t.run("query", "-dir", paths[0], "--format", "csv", "SELECT opName FROM slow_rank_op")
    ops = q.out.splitlines()[1:]
    t.eq(int(rows[0]["Ops"]), len(ops), "every collective op of the rank")
    t.eq(len(saved), len(ops), "the collectives of the trace are those of slow_rank_op")
    t.eq(Decimal(rows[0]["Others' Wait(us)"]) * 1000, 3 * sum(saved), "the others waited 3 x what rank 3 saved")


# ---- advisor_slow_rank_vote ------------------------------------------------------------

@suite.case("slow_rank_vote: the 8-rank Dixon cluster of msprof_analyze_test fires for rank 5; equal ranks do not")
def case_slow_rank_vote(t):
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "msprof_analyze_test", os.path.join(os.path.dirname(os.path.abspath(__file__)), "msprof_analyze_test.py"))
    mt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mt)
    paths = mt.dixon_cluster(gen, INPUTS)
    advise(t, paths)
    t.check("advisor_slow_rank_vote" in findings(t), "rank 5 voted slow")
    # msprof-analyze's vote on this cluster: rank 5 in 2 of its 4 ops (msprof_analyze_test's REFERENCE)
    t.eq([(r["Rank"], r["Votes"], r["Ops"]) for r in evidence(t, "advisor_slow_rank_vote")], [("5", "2", "4")],
         "rank 5, its votes and ops")
    copies = []
    for i in range(4):
        copies.append(t.path("copy%d.json" % i))
        shutil.copyfile(paths[0], copies[-1])
    advise(t, copies)
    t.check("advisor_slow_rank_vote" not in findings(t), "equal ranks: no vote")


# ---- advisor_slow_link ---------------------------------------------------------------------

def matrix(t, bandwidths):
    """A cluster_communication_matrix.json of one allreduce over a ring of 4
    HCCS links of 100 MB each, link i taking 100 MB / bandwidths[i]."""
    d = t.mkdir("cluster_analysis_output")
    links = {}
    for i, bw in enumerate(bandwidths):
        time_ms = 100 / bw  # 100 MB at bw GB/s
        links["%d-%d" % (i, (i + 1) % 4)] = {"Transport Type": "HCCS", "Transit Time(ms)": time_ms,
                                              "Transit Size(MB)": 100.0, "Bandwidth(GB/s)": bw}
    doc = {"(0, 1, 2, 3)": {"step1": {"hcom_allReduce__1_0@77": links}}}
    with open(os.path.join(d, "cluster_communication_matrix.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return d


@suite.case("slow_link: a link at a fifth of its peers' bandwidth fires; four equal links do not")
def case_slow_link(t):
    advise(t, [matrix(t, [20.0, 20.0, 20.0, 20.0])])
    t.eq(findings(t), {}, "equal links: no finding")
    shutil.rmtree(t.path("cluster_analysis_output"))
    advise(t, [matrix(t, [20.0, 4.0, 20.0, 25.0])])
    fired_only(t, ["advisor_slow_link"])
    rows = evidence(t, "advisor_slow_link")
    t.eq([(r["Src Rank"], r["Dst Rank"], r["Transport"], r["Bandwidth"], r["Median"]) for r in rows],
         [("1", "2", "HCCS", "4", "20")], "the slow link, its bandwidth and its transport's median (GB/s)")


# ---- the workbook --------------------------------------------------------------------------

@suite.case("xlsx: the workbook's Advisor sheet comes first after About, with the findings")
def case_workbook(t):
    import re
    import zipfile
    ev = events(one_rank())
    for e in of(ev, "Ascend Hardware"):
        if e["args"].get("Task Type") == "AI_VECTOR_CORE":
            e["dur"] = 2.0
    path = write_events(ev, t.path("tiny.json"))
    advise(t, [path], "--format", "csv,xlsx")
    with zipfile.ZipFile(os.path.join(t.out, "tracebook.xlsx")) as z:
        book = z.read("xl/workbook.xml").decode("utf-8")
        strings = "".join(z.read(n).decode("utf-8") for n in z.namelist()
                          if n.startswith("xl/worksheets/") or n == "xl/sharedStrings.xml")
    names = re.findall(r'<sheet name="([^"]*)"', book)
    t.eq(names[:2], ["About", "Advisor"], "the first sheets")
    t.eq(len(names), 2 + len(RULES) - 3, "About, Advisor and a sheet per rule that ran (three skip)")
    finding = findings(t)["advisor_tiny_kernels"]["Finding"]
    t.check(finding.replace("&", "&amp;").replace("<", "&lt;") in strings, "the finding is in the workbook", finding)
    with open(os.path.join(t.out, "tracebook_run.json"), encoding="utf-8") as f:
        meta = json.load(f)
    t.eq(meta["advisor"].get("sheet"), "Advisor", "tracebook_run.json names the sheet")


# ---- thresholds, exit codes ---------------------------------------------------------------

@suite.case("--fail-on-finding: exit 9 at or above the severity, 0 below; usage errors")
def case_fail_on(t):
    path = t.path("tiny.json")
    ev = events(one_rank())
    for e in of(ev, "Ascend Hardware"):
        if e["args"].get("Task Type") == "AI_VECTOR_CORE":
            e["dur"] = 2.0
    write_events(ev, path)
    # the tiny kernels rule is info
    r = advise(t, [path], "--fail-on-finding", "info", code=9)
    t.eq(r.err, "tracebook: error: the advisor found 1 finding of severity info or worse (--fail-on-finding): "
                "the outputs are written\n", "the message")
    t.check(os.path.exists(os.path.join(t.out, "advisor.csv")), "advisor.csv written")
    advise(t, [path], "--fail-on-finding", "warning")
    advise(t, [path], "--fail-on-finding", "critical")
    # console only: no file anywhere, the findings still counted
    r = t.run("report", "-q", "-dir", path, "--spec", "builtin:advisor", "--format", "console",
              "--fail-on-finding", "info")
    t.eq(r.rc, 9, "console only: exit code")
    t.eq([f for f in os.listdir(t.cwd) if f.startswith("advisor")], [], "console only: no advisor file written")
    r = advise(t, [path], "--fail-on-finding", "high", code=2)
    t.check("--fail-on-finding 'high': expected info, warning or critical" in r.err, "a bad severity", r.err)
    r = advise(t, [path], "--fail-on-finding", "info", code=2, spec="builtin:top_kernels")
    t.check("--fail-on-finding: no report of the run is an advisor rule" in r.err, "no rule to fail on", r.err)
    r = advise(t, [path], "--fail-on-finding", "info", "--report", "advisor_slow_link", code=2,
               spec="builtin:top_kernels")
    t.check(r.rc == 2, "a --report that no spec has")


@suite.case("tracebook reports RULE: the rule's severity, reason, suggestion and source; builtin:advisor named")
def case_reports(t):
    r = t.run("reports", "advisor_d2h_copy")
    t.eq(r.rc, 0, "exit code")
    for want in ("  advisor rule (docs/advisor.md): severity warning; its threshold is the param threshold\n",
                 "  reason: A copy to the host inside a step", "  suggestion: Keep values on the device",
                 "  source: msprof-analyze advisor, schedule analysis", "--spec builtin:advisor\n"):
        t.check(want in r.out, "reports advisor_d2h_copy says %r" % want.strip(), r.out)
    r = t.run("reports", "top_kernels")
    t.check("advisor" not in r.out, "a plain report says nothing of the advisor", r.out)


# ---- the spec language ------------------------------------------------------------------------

OWN = """tracebook: 1
reports:
  - id: long_kernels
    title: Kernels longer than the threshold
    requires: [TASK]
    advice:
      severity: critical
      threshold: 100000
      reason: A kernel this long dominates the step.
      message: "{#} kernel name(s) ran longer than the threshold; {Name} the most: {Longest} ({{max}})"
      suggestion: Split it.
    sql: |
      SELECT name AS "Name", max(dur) AS "Longest:dur_ns" FROM kernel
      GROUP BY name HAVING max(dur) > :threshold ORDER BY 2 DESC, 1
  - use: advisor_tiny_kernels
    advice: {severity: critical}
    params: {threshold: 1}
"""


@suite.case("own rules: a spec's rule and a used built-in rule with its severity and threshold changed")
def case_own(t):
    spec = t.path("own.yaml")
    with open(spec, "w", encoding="utf-8") as f:
        f.write(OWN)
    q = t.run("query", "-dir", one_rank(), "--format", "csv",
              "SELECT name, max(dur), (SELECT count(DISTINCT name) FROM kernel WHERE dur > 100000) FROM kernel"
              " GROUP BY name ORDER BY 2 DESC, 1 LIMIT 1")
    name, longest, n = next(csv.reader(q.out.splitlines()[1:]))
    advise(t, [one_rank()], "--fail-on-finding", "critical", code=9, spec=spec)
    got = findings(t)
    t.eq(sorted(got), ["advisor_tiny_kernels", "long_kernels"], "both rules fired")
    t.eq(got["long_kernels"]["Finding"], "%s kernel name(s) ran longer than the threshold; %s the most: %sus ({max})"
         % (n, name, (Decimal(longest) / 1000).normalize()), "the message, figures and braces filled in")
    t.eq(got["advisor_tiny_kernels"]["Severity"], "critical", "the used rule's severity replaced")
    t.eq(got["advisor_tiny_kernels"]["Threshold"], "1", "the used rule's threshold replaced")
    t.eq(list(got)[0], "long_kernels", "findings listed in run order within a severity")


BAD = [
    ("advice: {severity: high, threshold: 1, reason: r, message: m, suggestion: s}",
     "own.yaml:6:24: 'severity' must be info, warning or critical, got 'high'"),
    ("advice: {severity: info, threshold: 1, reason: r, message: m}",
     "own.yaml:6:13: report 'r1': 'advice' has no 'suggestion'; an advisor rule needs severity, threshold, "
     "reason, message and suggestion"),
    ("advice: {severity: info, threshold: x, reason: r, message: m, suggestion: s}",
     "own.yaml:6:41: 'threshold' must be a number, got 'x'"),
    ("advice: {severity: info, threshold: 1, reason: r, message: 'a {b', suggestion: s}",
     "own.yaml:6:64: 'message': the '{' at character 3 is not closed by '}' (write '{{' for a brace)"),
    ("advice: {severity: info, threshold: 1, reason: r, message: m, suggestion: s, level: 2}",
     "own.yaml:6:82: unknown key 'level' in advice; expected one of: severity, threshold, reason, message, "
     "suggestion, source"),
]


@suite.case("spec errors: each with its file:line:column")
def case_errors(t):
    for i, (advice, want) in enumerate(BAD):
        spec = t.path("own.yaml")
        with open(spec, "w", encoding="utf-8") as f:
            f.write("tracebook: 1\nreports:\n  - id: r1\n    sql: SELECT 1 AS x WHERE 1 > :threshold\n"
                    "    requires: [TASK]\n    %s\n" % advice)
        r = t.run("report", "-q", "-dir", one_rank(), "--spec", spec, "-o", t.out)
        t.eq(r.rc, 3, "exit code of bad spec %d" % i)
        t.check(want in r.err, "message of bad spec %d" % i, r.err)
    with open(spec, "w", encoding="utf-8") as f:
        f.write("tracebook: 1\nreports:\n  - id: r1\n    sql: SELECT 1 AS x\n"
                "    advice: {severity: info, threshold: 1, reason: r, message: m, suggestion: s}\n")
    r = t.run("report", "-q", "-dir", one_rank(), "--spec", spec, "-o", t.out)
    t.check("own.yaml:5:5: report 'r1': its SQL never reads :threshold" in r.err, "SQL without :threshold", r.err)
    with open(spec, "w", encoding="utf-8") as f:
        f.write("tracebook: 1\nreports:\n  - id: r1\n    sql: SELECT 1 AS x WHERE 1 > :threshold\n"
                "    params: {threshold: 2}\n"
                "    advice: {severity: info, threshold: 0, reason: r, message: m, suggestion: s}\n")
    r = t.run("report", "-q", "-dir", one_rank(), "--spec", spec, "-o", t.out)
    t.check("own.yaml:6:30: report 'r1': the param 'threshold' is declared by 'advice.threshold'; remove it from "
            "'params'" in r.err,
            "threshold declared twice", r.err)
    with open(spec, "w", encoding="utf-8") as f:
        f.write("tracebook: 1\nreports:\n  - id: r1\n    sql: SELECT 1 AS x WHERE 1 > :threshold\n"
                "    advice:\n      severity: info\n      threshold: 0\n      reason: r\n"
                "      message: 'x is {y}'\n      suggestion: s\n")
    r = t.run("report", "-q", "-dir", one_rank(), "--spec", spec, "-o", t.out)
    t.eq(r.rc, 3, "a message naming no column: exit code")
    t.check("own.yaml:9:16: report 'r1': 'message' names '{y}', which is no column of its SQL; its columns: x"
            in r.err, "a message naming no column", r.err)
    t.check(not os.path.exists(os.path.join(t.out, "advisor.csv")), "no advisor.csv after an error")
    with open(spec, "w", encoding="utf-8") as f:
        f.write("tracebook: 1\nreports:\n  - id: advisor\n    sql: SELECT 1 AS x WHERE 1 > :threshold\n"
                "    advice: {severity: info, threshold: 0, reason: r, message: m, suggestion: s}\n")
    r = t.run("report", "-q", "-dir", one_rank(), "--spec", spec, "-o", t.out)
    t.eq(r.rc, 2, "a report named advisor: exit code")
    t.check("own.yaml:3:5: report id 'advisor' could name the advisor's files" in r.err, "a report named advisor",
            r.err)


suite.main(ARGS[3:])
