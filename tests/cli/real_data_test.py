#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# real_data_test.py - inputs as the profilers really write them load to the
# same numbers.
#
# A generated torch_npu timeline is loaded twice: as written, and with its
# communication layer named `HCCL` (torch_npu's name in several versions)
# instead of `Communication`. Both must give the same COMMUNICATION_OP rows
# and the same step trace, and tracebook_run.json must list the layers whose
# events only the generic tables keep.
#
# Kernel types: a timeline alone (Ascend or Kineto) gives its kernels no
# type; each gets one from its name (docs/inputs.md "Kernel types"), marked
# as derived in tracebook_run.json, so op_statistic has a row per type and
# a compare of two runs where one type got 40% slower flags that type.
#
# usage: real_data_test.py TRACEBOOK TRACEBOOK_GEN SHARED_DATA OUTDIR
# Prints one `ok`/`FAIL` line per case and a final `N passed, N failed`
# line; exits 0 when all pass, 1 otherwise.
import csv
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, GEN, SHARED, OUT = tbtest.args("TRACEBOOK TRACEBOOK_GEN SHARED_DATA OUTDIR", 4)
run = tbtest.Program(TB)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def meta(out):
    with open(os.path.join(out, "tracebook_run.json")) as f:
        return json.load(f)


def gen(path, kind, events, *more):
    tbtest.run([GEN, "--kind", kind, "--events", str(events), *more, "-o", path], code=0)


def rename_process(src, dst, old, new):
    """A copy of the timeline src with the process named old named new (only
    the process_name metadata changes)."""
    with open(src) as f:
        events = json.load(f)
    n = 0
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name" and e["args"].get("name") == old:
            e["args"]["name"] = new
            n += 1
    assert n == 1, n
    with open(dst, "w") as f:
        json.dump(events, f)


def comm_ops(db):
    with sqlite3.connect(db) as c:
        return c.execute("SELECT s.value, startNs, endNs, connectionId, g.value, deviceId FROM COMMUNICATION_OP o"
                         " LEFT JOIN STRING_IDS s ON s.id = o.opName LEFT JOIN STRING_IDS g ON g.id = o.groupName"
                         " ORDER BY startNs, opId").fetchall()


def case_hccl_layer():
    d = os.path.join(OUT, "hccl")
    os.makedirs(d)
    comm, hccl = os.path.join(d, "comm.json"), os.path.join(d, "hccl.json")
    gen(comm, "ascend", 4000, "--ranks", "2")
    rename_process(comm, hccl, "Communication", "HCCL")
    dbs, steps = [], []
    for name in ("comm", "hccl"):
        db = os.path.join(d, name + ".db")
        r = run("export", "db", "-dir", os.path.join(d, name + ".json"), "-o", db)
        assert r.rc == 0, r
        dbs.append(db)
        out = os.path.join(d, name + "_out")
        r = run("report", "-dir", os.path.join(d, name + ".json"), "--spec", "builtin:step_trace_time", "-o", out)
        assert r.rc == 0, r
        steps.append(rows(os.path.join(out, "step_trace_time.csv")))
        m = meta(out)
        layers = {x["process"]: x for x in m["loading"]["layers_not_routed"]}
        # NPU MEM is kept as counters; the communication layer is routed
        assert set(layers) == {"NPU MEM"}, layers
        assert layers["NPU MEM"]["layer"] == "Ascend (other)" and layers["NPU MEM"]["events"] > 0, layers
        assert layers["NPU MEM"]["file"].endswith(name + ".json"), layers
    a, b = comm_ops(dbs[0]), comm_ops(dbs[1])
    assert len(a) > 0, "the generated timeline has no communication ops"
    assert a == b, (a[:3], b[:3])
    assert steps[0] == steps[1], (steps[0], steps[1])
    assert any(float(s["Communication"]) > 0 for s in steps[1]), steps[1]
    with sqlite3.connect(dbs[1]) as c:
        assert c.execute("SELECT layer FROM TB_PROCESS WHERE name = 'HCCL'").fetchall() == [("Communication",)]


def case_unknown_layer_listed():
    d = os.path.join(OUT, "unknown")
    os.makedirs(d)
    src, dst = os.path.join(d, "a.json"), os.path.join(d, "b.json")
    gen(src, "ascend", 2000, "--ranks", "2")
    rename_process(src, dst, "Communication", "Collectives")
    out = os.path.join(d, "out")
    r = run("report", "-dir", dst, "--spec", "builtin:step_trace_time", "-o", out)
    assert r.rc == 0, r
    layers = {x["process"]: x for x in meta(out)["loading"]["layers_not_routed"]}
    assert set(layers) == {"NPU MEM", "Collectives"}, layers
    assert layers["Collectives"]["layer"] == "other", layers
    with open(dst) as f:
        pid = [e["pid"] for e in json.load(f) if e.get("ph") == "M" and e["args"].get("name") == "Collectives"][0]
    with open(dst) as f:
        n = sum(1 for e in json.load(f) if e.get("pid") == pid and e.get("ph") != "M")
    assert layers["Collectives"]["events"] == n, (layers, n)


def scale_kernels(src, dst, names, factor):
    """A copy of the trace src with the kernels named in names factor times slower."""
    with open(src) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    n = 0
    for e in events:
        if e.get("ph") == "X" and e.get("name") in names:
            e["dur"] = round(float(e["dur"]) * factor, 3)
            n += 1
    assert n > 0, names
    with open(dst, "w") as f:
        json.dump(doc, f)


def kernel_names(path, pick):
    """The kernel names of the trace at path that pick(name) accepts."""
    with open(path) as f:
        doc = json.load(f)
    if isinstance(doc, dict):
        return {e["name"] for e in doc["traceEvents"] if e.get("cat") == "kernel" and pick(e["name"])}
    hw = {e["pid"] for e in doc if e.get("ph") == "M" and e["args"].get("name") == "Ascend Hardware"}
    return {e["name"] for e in doc if e.get("ph") == "X" and e.get("pid") in hw and pick(e["name"])}


def compare_flags(d, kind, slow_type, pick):
    base, new = os.path.join(d, "base.json"), os.path.join(d, "new.json")
    gen(base, kind, 4000)
    names = kernel_names(base, pick)
    assert len(names) >= 1, names
    scale_kernels(base, new, names, 1.4)
    out = os.path.join(d, "cmp")
    r = run("compare", "-base", base, "-new", new, "--spec", "builtin:op_statistic", "-o", out,
            "--fail-on-regression")
    assert r.rc == 8, r
    got = rows(os.path.join(out, "op_statistic_compare.csv"))
    flagged = [x["OP Type"] for x in got if x["Regressions"]]
    assert flagged == [slow_type], (flagged, [x["OP Type"] for x in got])
    x = [x for x in got if x["OP Type"] == slow_type][0]
    assert abs(float(x["Total Time(us) Ratio"]) - 1.4) < 0.002, x
    # a row per type, none empty
    assert all(x["OP Type"] for x in got), got
    assert len(got) > 3, got
    # the types are marked as derived, per input
    for side in (base, new):
        out1 = os.path.join(d, "rep_" + os.path.basename(side))
        r = run("report", "-dir", side, "--spec", "builtin:op_statistic", "-o", out1)
        assert r.rc == 0, r
        derived = meta(out1)["loading"]["derived_kernel_types"]
        n = sum(int(x["Count"]) for x in rows(os.path.join(out1, "op_statistic.csv")))
        assert [(x["file"].endswith(os.path.basename(side)), x["kernels"]) for x in derived] == [(True, n)], \
            (derived, n)


def case_compare_ascend_type():
    d = os.path.join(OUT, "types_ascend")
    os.makedirs(d)
    # aclnnRmsNorm_RmsNorm_RmsNorm and the like: type RmsNorm
    compare_flags(d, "ascend", "RmsNorm", lambda n: n.endswith("_RmsNorm"))


def case_compare_kineto_type():
    d = os.path.join(OUT, "types_kineto")
    os.makedirs(d)
    # void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, ...>(...)
    compare_flags(d, "kineto", "CUDAFunctor_add", lambda n: "CUDAFunctor_add<" in n)


def case_public_kineto_types():
    trace = os.path.join(SHARED, "kineto", "tracelens", "h100", "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
    if not os.path.exists(trace):
        raise tbtest.Skip("no public data at " + SHARED)
    out = os.path.join(OUT, "public_kineto")
    r = run("report", "-dir", trace, "--spec", "builtin:op_statistic", "-o", out)
    assert r.rc == 0, r
    types = {x["OP Type"]: int(x["Count"]) for x in rows(os.path.join(out, "op_statistic.csv"))}
    # the op each generic launcher runs, as named in the kernel's template arguments
    want = {"MulFunctor": 314, "direct_copy_kernel_cuda": 207, "CUDAFunctor_add": 137, "MeanOps": 70,
            "pow_tensor_scalar_kernel_impl": 70, "flash_fwd_kernel": 34,
            "cutlass_80_simt_sgemm_128x32_8x5_nn_align1": 1}
    assert {k: types.get(k) for k in want} == want, types
    assert "" not in types and "elementwise_kernel" not in types, types


def case_msprof_db_op_names():
    # msprof DBs name their tasks only in COMPUTE_TASK_INFO (TASK has no name)
    src = os.path.join(SHARED, "ascend", "msprof_db", "msprof_0.db")
    if not os.path.exists(src):
        raise tbtest.Skip("no public data at " + SHARED)
    with sqlite3.connect(src) as c:
        want = dict(c.execute("SELECT t.taskId || '/' || t.streamId, s.value FROM TASK t"
                              " JOIN COMPUTE_TASK_INFO ci ON ci.globalTaskId = t.globalTaskId"
                              " JOIN STRING_IDS s ON s.id = ci.name").fetchall())
    assert len(want) >= 10, want
    for how in ("report", "summary"):
        out = os.path.join(OUT, "msprof_db_" + how)
        if how == "report":
            r = run("report", "-dir", src, "--spec", "builtin:op_summary", "--spec", "builtin:task_time", "-o", out)
            files = {k: os.path.join(out, k + ".csv") for k in ("op_summary", "task_time")}
        else:
            r = run("export", "summary", "-dir", src, "-o", out)
            d = os.path.join(out, "mindstudio_profiler_output")
            files = {k: os.path.join(d, [f for f in os.listdir(d) if f.startswith(k + "_")][0])
                     for k in ("op_summary", "task_time")}
        assert r.rc == 0, r
        got = {x["Task ID"] + "/" + x["Stream ID"]: x["Op Name"] for x in rows(files["op_summary"])}
        assert {k: got.get(k) for k in want} == want, (got, want)
        got = {x["task_id"] + "/" + x["stream_id"]: x["kernel_name"] for x in rows(files["task_time"])}
        assert {k: got.get(k) for k in want} == want, (got, want)


def case_hta_reports_timeunit_and_std():
    trace = os.path.join(OUT, "hta.json")
    gen(trace, "kineto", 4000)
    specs = ["--spec", "builtin:temporal_breakdown", "--spec", "builtin:idle_time_breakdown",
             "--spec", "builtin:kernel_breakdown", "--param", "top=1000"]
    us, ms = os.path.join(OUT, "hta_us"), os.path.join(OUT, "hta_ms")
    assert run("report", "-dir", trace, *specs, "-o", us).rc == 0
    assert run("report", "-dir", trace, *specs, "-o", ms, "--timeunit", "ms").rc == 0
    a, b = rows(os.path.join(us, "temporal_breakdown.csv")), rows(os.path.join(ms, "temporal_breakdown.csv"))
    for f in ("idle_time", "compute_time", "non_compute_time", "kernel_time"):
        assert abs(float(a[0][f + "(us)"]) / 1000 - float(b[0][f + "(ms)"])) < 1e-9, (f, a, b)
        assert float(a[0][f + "(us)"]) > 0, a
    a, b = rows(os.path.join(us, "idle_time_breakdown.csv")), rows(os.path.join(ms, "idle_time_breakdown.csv"))
    assert len(a) == len(b) > 0 and list(a[0]) == ["rank", "stream", "idle_category", "idle_time", "idle_time_ratio"]
    for x, y in zip(a, b):
        assert abs(float(x["idle_time"]) / 1000 - float(y["idle_time"])) < 1e-9, (x, y)
    # Std Time: the sample standard deviation of each kernel's durations
    import statistics
    with open(trace) as f:
        durs = {}
        for e in json.load(f)["traceEvents"]:
            if e.get("cat") == "kernel":
                durs.setdefault(e["name"], []).append(float(e["dur"]))
    got = [x for x in rows(os.path.join(us, "kernel_breakdown.csv")) if x["Class"] == "compute"]
    assert len(got) > 5, got
    for x in got:
        v = durs[x["Name"]]
        if len(v) == 1:
            assert x["Std Time(us)"] == "", x
        else:
            assert abs(float(x["Std Time(us)"]) - statistics.stdev(v)) <= 0.0005 + 1e-9, x  # a time: to the ns


def case_hta_stream_example():
    # the example of docs/metrics.md "Where tracebook and HTA differ": tracebook's figures
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "docs", "metrics.md")) as f:
        doc = f.read()
    sec = doc[doc.index("### Where tracebook and HTA differ"):]
    trace = sec[sec.index("```json") + 7:]
    trace = trace[:trace.index("```")]
    path = os.path.join(OUT, "sync.json")
    with open(path, "w") as f:
        f.write(trace)
    out = os.path.join(OUT, "sync")
    r = run("report", "-dir", path, "--spec", "builtin:temporal_breakdown", "-o", out)
    assert r.rc == 0, r
    with open(os.path.join(out, "temporal_breakdown.csv")) as f:
        got = f.read().splitlines()[1]
    assert got == "0,80,150,0,230,34.78,65.22,0", got
    assert "tracebook writes `%s`" % got in sec, "the doc's figures"
    # with HTA's rule: HTA's figures, as the doc's table gives them
    spec = os.path.join(OUT, "hta_rule.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nmetrics:\n  hta:\n    stream_events: true\nreports:\n"
                "  - use: temporal_breakdown\n")
    out = os.path.join(OUT, "sync_hta")
    r = run("report", "-dir", path, "--spec", spec, "-o", out)
    assert r.rc == 0, r
    with open(os.path.join(out, "temporal_breakdown.csv")) as f:
        got = f.read().splitlines()[1]
    assert got == "0,0,150,90,240,0,62.5,37.5", got
    assert "`%s`" % got in sec, "the doc's HTA figures"


def case_hta_stream_rule_window():
    # two steps: HTA keeps host events with a stream only as its window does
    ev = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 300},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 300, "dur": 300},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
         "args": {"correlation": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 30, "dur": 5,
         "args": {"correlation": 4}},
        # a GPU event for HTA (a stream and a correlation), launched by no CPU event: not in its window
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": 40,
         "dur": 220, "args": {"correlation": 3, "stream": 7}},
        # a CPU event with a stream (no correlation): in the window by its start, and GPU work for HTA
        {"ph": "X", "cat": "cpu_op", "name": "aten::record_stream", "pid": 1, "tid": 1, "ts": 130, "dur": 50,
         "args": {"stream": 7}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 350, "dur": 5,
         "args": {"correlation": 2}},
        {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 20, "dur": 100,
         "args": {"device": 0, "stream": 7, "correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 200, "dur": 50,
         "args": {"device": 0, "stream": 7, "correlation": 4}},
        # launched in the last step: out of HTA's window
        {"ph": "X", "cat": "kernel", "name": "late_kernel", "pid": 0, "tid": 7, "ts": 400, "dur": 50,
         "args": {"device": 0, "stream": 7, "correlation": 2}},
    ]
    path = os.path.join(OUT, "window.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)
    spec = os.path.join(OUT, "hta_rule2.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nmetrics:\n  hta:\n    stream_events: true\nreports:\n"
                "  - use: temporal_breakdown\n  - use: idle_time_breakdown\n")
    got = {}
    for name, s in (("default", "builtin:temporal_breakdown"), ("hta", spec)):
        out = os.path.join(OUT, "window_" + name)
        r = run("report", "-dir", path, "--spec", s, "-o", out)
        assert r.rc == 0, r
        got[name] = rows(os.path.join(out, "temporal_breakdown.csv"))[0]
    # tracebook: the two kernels of the first step, [20, 120) and [200, 250)
    assert [got["default"][k] for k in ("idle_time(us)", "compute_time(us)", "kernel_time(us)")] == \
        ["80", "150", "230"], got
    # HTA: and the cpu_op with a stream, [130, 180); not the sync (no CPU event launched it)
    assert [got["hta"][k] for k in ("idle_time(us)", "compute_time(us)", "non_compute_time(us)",
                                    "kernel_time(us)")] == ["30", "200", "0", "230"], got
    # HTA's idle time breakdown reads kernels and memory events only
    idle = rows(os.path.join(OUT, "window_hta", "idle_time_breakdown.csv"))
    assert sum(float(x["idle_time"]) for x in idle) == 80, idle


def comm_ops_of(db):
    with sqlite3.connect(db) as c:
        return c.execute("SELECT t.value, o.count, o.dataType, ct.size, o.endNs - o.startNs, o.startNs"
                         " FROM COMMUNICATION_OP o LEFT JOIN STRING_IDS t ON t.id = o.opType"
                         " LEFT JOIN COMMUNICATION_TASK_INFO ct ON ct.opId = o.opId AND ct.rankId IS o.rankId"
                         " ORDER BY o.startNs").fetchall()


def case_rccl_collectives_as_tracelens():
    base = os.path.join(SHARED, "kineto", "tracelens", "mi300")
    trace = os.path.join(base, "resnet_act_checkpoint.json.gz")
    if not os.path.exists(trace):
        raise tbtest.Skip("no public data at " + SHARED)
    db = os.path.join(OUT, "mi300.db")
    r = run("export", "db", "-dir", trace, "-o", db)
    assert r.rc == 0, r
    ops = comm_ops_of(db)
    named = [o for o in ops if o[0] != "Generic"]
    # TraceLens' coll_analysis.csv: one row per (collective, dtype, size) with its count and durations
    want = rows(os.path.join(base, "resnet_act_checkpoint_recompute_perf_report_csvs", "coll_analysis.csv"))
    hccl = {"BFloat16": 11, "Long": 5, "Float": 4}
    width = {"BFloat16": 2, "Long": 8, "Float": 4}
    seen = 0
    for w in want:
        n = int(float(w["In msg nelems"]))
        got = [o for o in named if o[0] == w["Collective name"] and o[1] == n and o[2] == hccl[w["dtype"]]]
        assert len(got) == int(w["operation_count"]), (w, got)
        assert all(o[3] == n * width[w["dtype"]] for o in got), got
        assert abs(got[0][3] / 1024 ** 2 - float(w["In msg size (MB)_first"])) < 1e-12, (w, got)
        assert abs(sum(o[4] for o in got) / 1000 - float(w["dur_sum"])) < 0.001, (w, got)
        seen += len(got)
    # every collective a record_param_comms call launched is named; the kernels
    # whose launch the trace lacks keep the kernel's own name
    assert seen == len(named) == 12, (seen, named)
    assert all(o[1] is None for o in ops if o[0] == "Generic"), ops


def case_nccl_collectives_named():
    trace = os.path.join(OUT, "nccl.json")
    gen(trace, "kineto", 4000)
    with open(trace) as f:
        ev = json.load(f)["traceEvents"]
    calls = {e["args"]["External id"]: e["args"] for e in ev if e.get("name") == "record_param_comms"}
    kinds = {"allreduce": "allreduce", "_allgather_base": "allgather"}
    want = [(kinds[calls[e["args"]["External id"]]["Collective name"]], calls[e["args"]["External id"]]["In msg nelems"])
            for e in sorted((e for e in ev if e.get("cat") == "kernel" and e["name"].startswith("nccl")),
                            key=lambda e: float(e["ts"]))]
    assert len(want) > 3, want
    db = os.path.join(OUT, "nccl.db")
    assert run("export", "db", "-dir", trace, "-o", db).rc == 0
    got = [(o[0], o[1]) for o in comm_ops_of(db)]
    assert got == want, (got[:4], want[:4])
    # the round trip through an exported timeline keeps them
    tl, db2 = os.path.join(OUT, "nccl_tl"), os.path.join(OUT, "nccl2.db")
    assert run("export", "timeline", "-dir", trace, "-o", tl).rc == 0
    assert run("export", "db", "-dir", tl, "-o", db2).rc == 0
    assert [(o[0], o[1]) for o in comm_ops_of(db2)] == want


def case_timeline_adds_no_process():
    trace = os.path.join(OUT, "gpu.json")
    gen(trace, "kineto", 3000)
    with open(trace) as f:
        named = sorted((str(e["pid"]), e["args"]["name"]) for e in json.load(f)["traceEvents"]
                       if e.get("ph") == "M" and e.get("name") == "process_name")
    assert ("0", "GPU 0") in named or any(p == "0" for p, _ in named), named
    tl = os.path.join(OUT, "gpu_tl")
    assert run("export", "timeline", "-dir", trace, "-o", tl).rc == 0
    files = [f for f in os.listdir(tl) if f.endswith(".json") and f != "tracebook_run.json"]
    assert len(files) == 1, files
    out = os.path.join(tl, files[0])
    with open(out) as f:
        doc = json.load(f)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    got = sorted((str(e["pid"]), e["args"]["name"]) for e in ev
                 if e.get("ph") == "M" and e.get("name") == "process_name")
    # the input's process names as they were (pids the input named not are named by their
    # number or string, timeline.md); none for tracebook, pid 0 named once
    assert set(named) <= set(got) and all(n == p for p, n in set(got) - set(named)), (got, named)
    assert [p for p, _ in got].count("0") == 1 and not [n for _, n in got if "tracebook" in n], got
    assert ev[0]["name"] == "tracebook_export" and ev[0]["args"]["sources"][0][0] == "gpu.json", ev[0]
    assert str(ev[0]["pid"]) in dict(named), ev[0]
    # loaded again: the same processes, the mark stored nowhere
    db = os.path.join(OUT, "gpu_tl.db")
    assert run("export", "db", "-dir", out, "-o", db).rc == 0
    with sqlite3.connect(db) as c:
        procs = sorted((str(p), n) for p, n in c.execute("SELECT pid, name FROM TB_PROCESS WHERE name IS NOT NULL"))
        marks = c.execute("SELECT count(*) FROM TB_EVENT e JOIN STRING_IDS s ON s.id = e.name"
                          " WHERE s.value = 'tracebook_export'").fetchone()[0]
    assert set(named) <= set(procs) and not [n for _, n in procs if "tracebook" in n] and marks == 0, \
        (procs, named, marks)


if __name__ == "__main__":
    tbtest.fresh_dir(OUT)
    tbtest.use_cache(os.path.join(OUT, "cache"))
    suite = tbtest.Suite(work=OUT)
    suite.collect(globals())
    suite.main()
