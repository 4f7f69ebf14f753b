#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# prof_test.py - `export summary` on generated msprof collections: two
# PROF_XXX folders (two ranks on two nodes, both on device 0), each with a
# timeline and msprof's step_trace CSV of two models with several graph
# iterations.
#
# Checks: one set of summaries per PROF_XXX in its own
# mindstudio_profiler_output/, headers byte for byte as msprof writes them,
# the step_trace rows equal to the CSV read, a rank's files equal to those of
# a run on that rank alone (nothing merged although both are device 0), a
# window (--model-id/--iteration-id/--iteration-count) that gives msprof's
# file names and exactly the device tasks of its range, and exports written
# into the collections that are never read back.
#
# usage: prof_test.py TRACEBOOK TRACEBOOK_GEN OUTDIR
# Prints one `ok`/`FAIL` line per case and a final count; exits 0 when none failed.
import csv
import glob
import json
import os
import re
import shutil
import sqlite3
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, GEN, OUT = (os.path.abspath(a) for a in tbtest.args("TRACEBOOK TRACEBOOK_GEN OUTDIR", 3, 3))
STAMP = "20240102020000"
STEP_TRACE_HEAD = ("Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),Iteration Time(us),"
                   "FP to BP Time(us),Iteration Refresh(us),Data Aug Bound(us),Model ID")
HEADERS = {
    "op_statistic": "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),"
                    "Ratio(%)",
    "task_time": "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)",
    "communication_statistic": "Device_id,OP Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),"
                               "Ratio(%)",
    "step_trace": STEP_TRACE_HEAD,
}
PROFS = {}  # rank -> PROF folder
STEP_TRACE_IN = {}  # rank -> the step_trace CSV's lines as generated
ITERS = {}  # rank -> [(model, iteration, end_us, time_us)]


run = tbtest.Program(TB, code=0)
gen = tbtest.Program(GEN, code=0)


def rows(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def first_line(path):
    with open(path, "rb") as f:
        line = f.readline().decode("utf-8")
    return line.lstrip("\ufeff").rstrip("\r\n")


def make_prof(rank, node):
    """PROF_XXX of one rank: its timeline and a step_trace CSV of two models."""
    prof = os.path.join(OUT, "collection", "PROF_00000%d_20240102020000000_%s" % (rank % 7 + 1, node))
    out = os.path.join(prof, "mindstudio_profiler_output")
    os.makedirs(out)
    timeline = os.path.join(out, "msprof_%s.json" % STAMP)
    gen("--kind", "ascend", "--events", "4000", "--seed", str(rank + 5), "--rank", str(rank), "-o", timeline)
    ev = json.load(open(timeline))
    names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
    hw = [e for e in ev if e.get("ph") == "X" and names.get(e["pid"]) == "Ascend Hardware"]
    t0 = min(Decimal(e["ts"]) for e in hw)
    t1 = max(Decimal(e["ts"]) + Decimal(str(e["dur"])) for e in hw)
    span = t1 - t0
    # model 1: three iterations over the first half; model 2: two over the second
    its = []
    for k in range(1, 4):
        its.append((1, k, (t0 + span * k / 6).quantize(Decimal("0.001")), (span / 6).quantize(Decimal("0.001"))))
    for k in range(1, 3):
        end = t0 + span / 2 + span * k / 4 + (Decimal("0.001") if k == 2 else 0)
        its.append((2, k, end.quantize(Decimal("0.001")), (span / 4).quantize(Decimal("0.001"))))
    # rank 0 with FP/BP times and Reduce pairs (two in model 1's iterations, one in
    # model 2's), rank 8 with N/A where msprof had none, as msprof writes them
    reduces = rank == 0
    lines = [STEP_TRACE_HEAD + (",Reduce Start(us),Reduce Duration(us)" * 2 if reduces else "")]
    for model, it, end, dur in its:
        if reduces:
            fp, bp = end - dur + Decimal("1.5"), end - Decimal("2.25")
            red = [(fp + Decimal("10.125"), Decimal("3.5"))] + ([(bp - Decimal("5"), Decimal("4"))] if model == 1 else [])
            cells = ["0", str(it), str(fp), str(bp), str(end), str(dur), str(bp - fp), "0.75", "0.5", str(model)]
            for a, b in red:
                cells += [str(a), str(b)]
            cells += [""] * (2 * (2 - len(red)))
            lines.append(",".join(cells))
        else:
            lines.append("0,%d,N/A,N/A,%s,%s,N/A,N/A,N/A,%d" % (it, end, dur, model))
    with open(os.path.join(out, "step_trace_%s.csv" % STAMP), "w", newline="") as f:
        f.write("\n".join(lines) + "\n")
    PROFS[rank] = prof
    ITERS[rank] = its
    STEP_TRACE_IN[rank] = lines


def summaries(folder, label=""):
    got = {}
    for path in glob.glob(os.path.join(folder, "*.csv")):
        m = re.fullmatch(r"([a-z_]+?)_(\d{14})%s\.csv" % (("_" + label) if label else ""), os.path.basename(path))
        assert m, "unexpected name %s" % path
        got[m.group(1)] = path
    return got


def case_one_set_per_prof():
    out = os.path.join(OUT, "s1")
    run("export", "summary", "-q", "-dir", PROFS[0], "-dir", PROFS[8], "-o", out)
    for rank, prof in PROFS.items():
        folder = os.path.join(out, os.path.basename(prof), "mindstudio_profiler_output")
        files = summaries(folder)
        for name in ("op_summary", "op_statistic", "task_time", "communication_statistic", "step_trace"):
            assert name in files, (rank, sorted(files))
        for name, head in HEADERS.items():
            if name == "step_trace" and rank == 0:
                head += ",Reduce Start(us),Reduce Duration(us)" * 2
            assert first_line(files[name]) == head, (rank, name, first_line(files[name]))
        # step_trace: every field as the input CSV gave it (in msprof's order: by iteration, then model)
        got = open(files["step_trace"], encoding="utf-8-sig").read().splitlines()[1:]
        want = sorted(STEP_TRACE_IN[rank][1:], key=lambda l: (int(l.split(",")[1]), int(l.split(",")[9])))
        norm = lambda l: [Decimal(x) if re.fullmatch(r"-?[0-9.]+", x) else x for x in l.split(",")]
        assert [norm(l) for l in got] == [norm(l) for l in want], (rank, got, want)
        # the graph iterations as the CSV gave them
        st = rows(files["step_trace"])
        want = sorted(ITERS[rank], key=lambda x: (x[1], x[0]))
        assert [(int(x["Model ID"]), int(x["Iteration ID"]), Decimal(x["Iteration End(us)"]),
                 Decimal(x["Iteration Time(us)"])) for x in st] == [(m, i, e, d) for m, i, e, d in want], st
        assert all(x["Device_id"] == "0" for x in st)
        assert os.path.exists(os.path.join(folder, "README.txt"))


def case_rank_alone_equals_rank_of_two():
    both = os.path.join(OUT, "s1")
    for rank, prof in PROFS.items():
        alone = os.path.join(OUT, "alone%d" % rank)
        run("export", "summary", "-q", "-dir", prof, "-o", alone)
        a = summaries(os.path.join(alone, os.path.basename(prof), "mindstudio_profiler_output"))
        b = summaries(os.path.join(both, os.path.basename(prof), "mindstudio_profiler_output"))
        assert sorted(a) == sorted(b), (sorted(a), sorted(b))
        for name in a:
            assert open(a[name], "rb").read() == open(b[name], "rb").read(), (rank, name)


def case_window():
    # model 1, iterations 2..3: from the end of iteration 1 to the end of iteration 3
    out = os.path.join(OUT, "s2")
    run("export", "summary", "-q", "-dir", PROFS[0], "-dir", PROFS[8], "--model-id", "1", "--iteration-id", "2",
        "--iteration-count", "2", "-o", out)
    for rank, prof in PROFS.items():
        folder = os.path.join(out, os.path.basename(prof), "mindstudio_profiler_output")
        files = summaries(folder, "2_3")
        assert "task_time" in files and "op_summary" in files, sorted(files)
        its = {(m, i): (e, d) for m, i, e, d in ITERS[rank]}
        start_ns = int(its[(1, 1)][0] * 1000)
        end_ns = int(its[(1, 3)][0] * 1000)
        db = os.path.join(OUT, "rank%d.db" % rank)
        if not os.path.exists(db):
            run("export", "db", "-q", "-dir", prof, "-o", db)
        con = sqlite3.connect(db)
        want = con.execute("SELECT count(*) FROM TASK WHERE startNs >= ? AND startNs < ?", (start_ns, end_ns)).fetchone()[0]
        total = con.execute("SELECT count(*) FROM TASK").fetchone()[0]
        con.close()
        tt = rows(files["task_time"])
        assert len(tt) == want and 0 < want < total, (rank, len(tt), want, total)
        starts = [Decimal(x["task_start(us)"].strip()) * 1000 for x in tt]
        assert all(start_ns <= s < end_ns for s in starts), rank
        st = rows(files["step_trace"])
        assert [(x["Model ID"], x["Iteration ID"]) for x in st] == [("1", "2"), ("1", "3")], st
    # an iteration the data does not have
    p = run("export", "summary", "-q", "-dir", PROFS[0], "--model-id", "2", "--iteration-id", "3", "-o",
            os.path.join(OUT, "s3"), code=2)
    assert "iteration" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(OUT, "s3", os.path.basename(PROFS[0]), "mindstudio_profiler_output",
                                           "task_time_%s_3.csv" % STAMP))


def union_ns(intervals):
    """The length of the union of [start, end) intervals sorted by start."""
    total, cur = 0, None
    for a, b in intervals:
        if cur is None or a > cur[1]:
            total += cur[1] - cur[0] if cur else 0
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    return total + (cur[1] - cur[0] if cur else 0)


def case_cluster_step_trace_graph_window():
    # model 1, iterations 2..3 of both ranks: cluster_step_trace_time has one row per rank and graph
    # iteration (Step = the iteration id), each over the device work that starts in the iteration, not
    # the profiler steps the window's range cuts through; Computing = the union of the compute tasks
    # starting in [iteration start, iteration end)
    out = os.path.join(OUT, "cst_graph")
    run("report", "-q", "-dir", PROFS[0], "-dir", PROFS[8], "--spec", "builtin:cluster_step_trace_time",
        "--model-id", "1", "--iteration-id", "2", "--iteration-count", "2", "-o", out)
    got = rows(os.path.join(out, "cluster_step_trace_time_2_3.csv"))
    index = sorted({x["Index"] for x in got}, key=int)
    assert len(index) == 2 and all(x["Type"] == "rank" for x in got), got
    assert [(x["Step"], x["Index"]) for x in got] == [(s, i) for i in index for s in ("2", "3")], got
    for idx, rank in zip(index, (0, 8)):
        db = os.path.join(OUT, "rank%d.db" % rank)
        if not os.path.exists(db):
            run("export", "db", "-q", "-dir", PROFS[rank], "-o", db)
        con = sqlite3.connect(db)
        for it in (2, 3):
            start, end = con.execute("SELECT startNs, endNs FROM TB_ITERATION WHERE modelId = 1 AND indexId = ?",
                                     (it,)).fetchone()
            tasks = con.execute("SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c"
                                " ON c.globalTaskId = t.globalTaskId WHERE t.startNs >= ? AND t.startNs < ?"
                                " ORDER BY t.startNs", (start, end)).fetchall()
            row = next(x for x in got if x["Index"] == idx and x["Step"] == str(it))
            assert tasks and Decimal(row["Computing"]) == Decimal(union_ns(tasks)) / 1000, (rank, it, row)
        con.close()
    # without a window: the profiler steps, as before
    whole = os.path.join(OUT, "cst_whole")
    run("report", "-q", "-dir", PROFS[0], "-dir", PROFS[8], "--spec", "builtin:cluster_step_trace_time", "-o", whole)
    got = rows(os.path.join(whole, "cluster_step_trace_time.csv"))
    for idx, rank in zip(index, (0, 8)):
        con = sqlite3.connect(os.path.join(OUT, "rank%d.db" % rank))
        want = [str(i) for (i,) in con.execute("SELECT id FROM step ORDER BY startNs")]
        con.close()
        assert [x["Step"] for x in got if x["Index"] == idx] == want, (rank, want, got)


def case_into_the_collection_never_read_back():
    # msprof's own place: the summaries go into each PROF_XXX; loading it again reads what it read before
    src = os.path.join(OUT, "inplace")
    shutil.copytree(os.path.join(OUT, "collection"), src)
    profs = sorted(glob.glob(os.path.join(src, "PROF_*")))
    before = os.path.join(OUT, "before.db")
    run("export", "db", "-q", "-dir", profs[0], "-dir", profs[1], "-o", before)
    inputs = {p: open(p, "rb").read() for p in glob.glob(os.path.join(src, "PROF_*", "*", "*"))}
    run("export", "summary", "-q", "-dir", profs[0], "-dir", profs[1])
    for path, data in inputs.items():
        assert open(path, "rb").read() == data, "input changed: %s" % path
    for prof in profs:
        written = os.listdir(os.path.join(prof, "mindstudio_profiler_output"))
        # the summaries went in beside the inputs (msprof's step_trace CSV kept as it was, ours
        # named by the data's start), and are never read back (the counts below)
        assert len([f for f in written if f.startswith("step_trace_")]) == 2, written
        assert "README.txt" in written and "tracebook_run.json" in written, written
        assert len([f for f in written if f.startswith("op_summary_")]) == 1, written
    after = os.path.join(OUT, "after.db")
    run("export", "db", "-q", "-dir", profs[0], "-dir", profs[1], "-o", after)

    def counts(db):
        c = sqlite3.connect(db)
        tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: c.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0] for t in tables
                if t not in ("TB_SOURCE", "TB_LOAD_COUNT", "TB_WARNING")}
    a, b = counts(before), counts(after)
    assert a == b, {t: (a[t], b.get(t)) for t in a if a[t] != b.get(t)}
    assert a["TB_ITERATION"] == 10, a["TB_ITERATION"]
    ranks = sqlite3.connect(after).execute("SELECT DISTINCT rankId FROM TASK ORDER BY 1").fetchall()
    assert len(ranks) == 2, ranks


def case_pmu_from_kernel_details_onto_timeline_tasks():
    # torch_npu ranks: each timeline gives the tasks, kernel_details.csv beside it the PMU metrics; the
    # CSV names no device, rank 1's timeline device 1: its values find their tasks all the same
    d = os.path.join(OUT, "pmu")
    gen("--kind", "torch_npu_dir", "--events", "3000", "--ranks", "2", "-o", d)
    metrics = ["aicore_time(us)", "aic_total_cycles", "aic_mac_ratio"]
    want = {}
    for r in (0, 1):
        kd = os.path.join(d, "rank%d_ascend_pt" % r, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
        with open(kd, newline="") as f:
            table = list(csv.reader(f))
        assert "Device_id" not in table[0], table[0]
        for i, row in enumerate(table[1:]):
            compute = row[6] in ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU")
            i += 1000 * r
            vals = [str(Decimal(i) / 4 + Decimal("0.5")), str(1000 + i), "0.%02d" % (i % 100)] if compute \
                else ["N/A"] * 3
            if compute:
                want[(r, row[4], Decimal(row[7].strip()))] = [Decimal(v) for v in vals]
            row += vals
        table[0] += metrics
        with open(kd, "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(table)
    assert len([k for k in want if k[0] == 1]) > 20, len(want)
    db = os.path.join(OUT, "pmu.db")
    run("export", "db", "-q", "-dir", d, "-o", db)
    con = sqlite3.connect(db)
    kinds = dict(con.execute("SELECT path, kind FROM TB_SOURCE").fetchall())
    assert any(k and "timeline" in k for k in kinds.values()), kinds  # the timeline gave the tasks
    got = {}
    assert con.execute("SELECT count(DISTINCT deviceId) FROM TASK").fetchone()[0] == 2
    for rank, name, start, metric, value in con.execute(
            "SELECT t.rankId, n.value, t.startNs, m.value, p.value FROM TASK_PMU_INFO p"
            " JOIN TASK t ON t.globalTaskId = p.globalTaskId"
            " JOIN STRING_IDS n ON n.id = t.name JOIN STRING_IDS m ON m.id = p.name ORDER BY p.rowid"):
        got.setdefault((rank, name, Decimal(start) / 1000), []).append(Decimal(str(value)))
    assert con.execute("SELECT count(*) FROM TB_KERNEL_PMU").fetchone()[0] == 0  # every value found its task
    con.close()
    assert got == want, (len(got), len(want))
    out = os.path.join(OUT, "pmu_sum")
    run("export", "summary", "-q", "-dir", d, "-o", out)
    path = glob.glob(os.path.join(out, "**", "rank0_ascend_pt", "**", "kernel_details.csv"), recursive=True)[0]
    head = first_line(path).split(",")
    assert head[head.index("Context ID") + 1:] == metrics, head
    for x in rows(path):
        key = (0, x["Name"], Decimal(x["Start Time(us)"].strip()))
        if key in want:
            assert [Decimal(x[m]) for m in metrics] == want[key], (key, [x[m] for m in metrics])
        else:
            assert [x[m] for m in metrics] == ["N/A"] * 3, x


def case_kernel_types_of_a_large_rank_bound_in_linear_time():
    # kernel_details.csv's types onto the timeline's tasks: a join on the task's id, then the CSV row at
    # the task's start; left to SQLite's planner without TASK's start index, it searched the CSV rows by
    # rank alone for every task (100,000 device-heavy events: 175 s). A timeout of 120 s fails that.
    d = os.path.join(OUT, "types")
    gen("--kind", "torch_npu_dir", "--mix", "device", "--events", "100000", "--ranks", "1", "-o", d)
    kd = os.path.join(d, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
    staged = len(rows(kd))
    db = os.path.join(OUT, "types.db")
    run("export", "db", "-q", "-dir", d, "-o", db, timeout=120)
    con = sqlite3.connect(db)
    assert staged > 10000, staged
    assert con.execute("SELECT count(*) FROM TB_KERNEL_TYPE").fetchone()[0] == 0  # every type found its task
    typed = con.execute("SELECT count(*) FROM COMPUTE_TASK_INFO WHERE opType IS NOT NULL").fetchone()[0]
    assert typed > 10000, typed
    con.close()


def case_kernel_types_first_staged_wins_unmatched_stay():
    # Two CSV rows of one kernel (same start and name): the first one's Type is the task's, the other
    # stays staged; a row at a start no task has stays staged too; every other kernel takes its Type.
    d = os.path.join(OUT, "types_dup")
    gen("--kind", "torch_npu_dir", "--mix", "device", "--events", "5000", "--ranks", "1", "-o", d)
    kd = os.path.join(d, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
    with open(kd, newline="", encoding="utf-8-sig") as f:
        table = list(csv.reader(f))
    head, body = table[0], table[1:]
    ti, ci, si, ni = (head.index(c) for c in ("Type", "Accelerator Core", "Start Time(us)", "Name"))
    pick = next(r for r in body if r[ci] in ("AI_CORE", "AI_CPU") and r[ti])
    first = list(pick)
    first[ti] = "FirstStagedType"
    orphan = list(pick)
    orphan[ti] = "OrphanType"
    us = Decimal(orphan[si].strip())
    orphan[si] = str(us + Decimal("0.001"))  # 1 ns later: no task starts there
    with open(kd, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows([head, first] + body + [orphan])
    db = os.path.join(OUT, "types_dup.db")
    run("export", "db", "-q", "-dir", d, "-o", db)
    con = sqlite3.connect(db)
    left = sorted(r[0] for r in con.execute("SELECT s.value FROM TB_KERNEL_TYPE k JOIN STRING_IDS s ON s.id = k.opType"))
    assert left == sorted(["OrphanType", pick[ti]]), left
    start_ns = int(us * 1000)
    got = con.execute("SELECT o.value FROM TASK t JOIN STRING_IDS n ON n.id = t.name"
                      " JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId"
                      " JOIN STRING_IDS o ON o.id = c.opType WHERE t.startNs = ? AND n.value = ?",
                      (start_ns, pick[ni])).fetchall()
    assert got == [("FirstStagedType",)], got
    staged = sum(1 for r in body if r[ci] in ("AI_CORE", "AI_CPU", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV"))
    typed = con.execute("SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)"
                        " JOIN STRING_IDS n ON n.id = t.name JOIN STRING_IDS o ON o.id = c.opType").fetchone()[0]
    assert typed >= staged > 100, (typed, staged)
    # That DB loaded again: the row left staged finds its task now. A device that is text (only a DB
    # input can hold one) leaves the matching to SQLite's comparison: the same rows are bound.
    con.execute("UPDATE TASK SET deviceId = 'dev' WHERE startNs = ?", (start_ns,))
    con.execute("UPDATE TB_KERNEL_TYPE SET deviceId = 'dev' WHERE startNs = ?", (start_ns,))
    con.commit()
    con.close()
    again = os.path.join(OUT, "types_again.db")
    run("export", "db", "-q", "-dir", db, "-o", again)
    con = sqlite3.connect(again)
    left = [r[0] for r in con.execute("SELECT s.value FROM TB_KERNEL_TYPE k JOIN STRING_IDS s ON s.id = k.opType")]
    assert left == ["OrphanType"], left
    got = con.execute("SELECT o.value FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId"
                      " JOIN STRING_IDS o ON o.id = c.opType WHERE t.deviceId = 'dev'").fetchall()
    assert got == [(pick[ti],)], got
    con.close()


if __name__ == "__main__":
    tbtest.fresh_dir(OUT)
    tbtest.use_cache(os.path.join(OUT, "cache"))
    make_prof(0, "nodeA")
    make_prof(8, "nodeB")
    suite = tbtest.Suite(work=OUT)
    suite.collect(globals())
    suite.main()
