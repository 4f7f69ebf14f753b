#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# breakdown.py - conformance of the breakdown reports on the shared Kineto traces.
#
# Runs `tracebook report --spec builtin:NAME` and checks:
#   - temporal_breakdown on kineto/ns_resolution_trace against the numbers
#     HolisticTraceAnalysis gives for it (idle 2.63 %, compute 96.75 %,
#     non-compute 0.62 %, kernel_time 384634 us), header exactly HTA's;
#   - exposed_time on kineto/tracelens/h100 against TraceLens' own
#     gpu_timeline.csv beside the trace, every type to 0.001 ms;
#   - comm_comp_overlap, idle_time_breakdown and temporal_breakdown on
#     kineto/tracelens/mi300 (which has NCCL kernels) against a plain Python
#     re-implementation of HTA's definitions below, read from the raw JSON
#     (not from tracebook's DB).
# usage: breakdown.py TRACEBOOK SHARED_DATA_DIR OUT_DIR
# Exit 77 (skip) when the shared data is absent.
import csv
import gzip
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

T = tbtest.Checks()


def report(exe, trace_dir, name, out):
    os.makedirs(out, exist_ok=True)
    r = tbtest.run([exe, "report", "-q", "-dir", trace_dir, "--spec", "builtin:" + name, "-o", out])
    if r.returncode != 0:
        T.fail("%s on %s: exit %d: %s" % (name, trace_dir, r.returncode, r.stderr.strip()))
        return None, []
    with open(os.path.join(out, name + ".csv"), newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


# ---- HTA, re-implemented from its definitions ------------------------------------------------

COMM = re.compile(r"(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)")
MEMORY = re.compile(r"(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)")
NON_COMPUTE = re.compile(r"(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)"
                         r"|(cuda.*LaunchKernel)|(^runFunction)|(^hip)|(^job_exe)|(^packet)|(^pe_exe)"
                         r"|(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution)")


def kind(name):
    if COMM.match(name):
        return "comm"
    if MEMORY.match(name):
        return "memory"
    return "other" if NON_COMPUTE.match(name) else "compute"


def hta_events(path):
    """Events as HTA keeps them: complete events with a category other than
    Trace, ts rounded up and ts + dur rounded down to whole us; with two or
    more ProfilerStep names, CPU events starting before the last step start
    and the GPU events (stream and correlation set) whose correlation a kept
    CPU event has."""
    with gzip.open(path, "rb") as f:
        events = json.load(f)["traceEvents"]
    rows = []
    for i, e in enumerate(events):
        if "dur" not in e or "ts" not in e or e.get("cat") in (None, "Trace"):
            continue
        ts = float(e["ts"])
        end = ts + float(e["dur"])
        args = e.get("args", {})
        rows.append({"i": i, "name": e.get("name", ""), "cat": e["cat"], "ts": math.ceil(ts),
                     "end": math.floor(end), "stream": int(args.get("stream", -1)),
                     "corr": int(args.get("correlation", -1))})
    steps = {r["name"] for r in rows if re.match(r"^ProfilerStep#(\d+)", r["name"])}

    def gpu(r):
        return r["stream"] >= 0 and r["corr"] >= 0

    if len(steps) >= 2:
        cpu = [r for r in rows if not gpu(r)]
        last = max(r["ts"] for r in cpu if r["name"] in steps)
        cpu = [r for r in cpu if r["ts"] < last]
        kept = {r["corr"] for r in cpu}
        rows = [r for r in rows if gpu(r) and r["corr"] in kept] + cpu
    return rows


def merge(intervals):
    """HTA's merge_kernel_intervals: a group opens at a start after every earlier end."""
    groups = []
    reach = None
    for s, e in sorted(intervals, key=lambda x: (x[0], -x[1])):
        if groups and s <= reach:
            groups[-1][1] = max(groups[-1][1], e)
        else:
            groups.append([s, e])
        reach = e if reach is None else max(reach, e)
    return groups


def length(groups):
    return sum(e - s for s, e in groups)


def hta_temporal(rows):
    gpu = [r for r in rows if r["stream"] != -1]
    merged = merge((r["ts"], r["end"]) for r in gpu)
    kernel = merged[-1][1] - merged[0][0]
    idle = kernel - length(merged)
    compute = length(merge((r["ts"], r["end"]) for r in gpu if kind(r["name"]) == "compute"))
    pct = lambda x: round(100 * (x / kernel), 2)
    return [idle, compute, kernel - compute - idle, kernel, pct(idle), pct(compute),
            pct(kernel - compute - idle)]


def hta_overlap(rows):
    """Both classes merged, swept with +1/-1 (comm) and +2/-2 (compute): the time at 3."""
    gpu = [r for r in rows if r["stream"] != -1]
    comm = merge((r["ts"], r["end"]) for r in gpu if kind(r["name"]) == "comm")
    comp = merge((r["ts"], r["end"]) for r in gpu if kind(r["name"]) == "compute")
    points = sorted([(s, 1) for s, e in comm] + [(e, -1) for s, e in comm] +
                    [(s, 2) for s, e in comp] + [(e, -2) for s, e in comp])
    running = both = 0
    for k, (t, d) in enumerate(points):
        running += d
        if running == 3:
            both += points[k + 1][0] - t
    total = length(comm)
    return None if not comm or total == 0 else round(100 * (both / total), 2)


def hta_idle(rows, threshold=30):
    """Per stream, consecutive tasks in start order: gap = start - previous end;
    host_wait if the launching runtime call started after the previous end,
    else kernel_wait if gap < threshold, else other (the first task too)."""
    launch = {}
    for r in rows:
        if r["cat"] in ("cuda_runtime", "cuda_driver") and r["corr"] != -1:
            launch[r["corr"]] = min(launch.get(r["corr"], r["ts"]), r["ts"])
    gpu = [r for r in rows if r["stream"] != -1 and r["cat"] in ("kernel", "gpu_memset", "gpu_memcpy")]
    out = []
    for stream in sorted({r["stream"] for r in gpu}):
        tasks = sorted((r for r in gpu if r["stream"] == stream), key=lambda r: (r["ts"], r["i"]))
        sums = {"other": 0}
        for prev, cur in zip(tasks, tasks[1:]):
            gap = cur["ts"] - prev["end"]
            started = launch.get(cur["corr"])
            cat = "host_wait" if started is not None and started > prev["end"] else \
                  "kernel_wait" if gap < threshold else "other"
            sums[cat] = sums.get(cat, 0) + gap
        total = sum(sums.values())
        for cat in ("host_wait", "kernel_wait", "other"):
            if cat in sums:
                out.append([stream, cat, round(float(sums[cat]), 2),
                            None if total == 0 else round(sums[cat] / total, 2)])
    return out


def num(text):
    return None if text == "" else float(text)


def main():
    exe, data, out = tbtest.args("TRACEBOOK SHARED_DATA_DIR OUT_DIR", 3, 3)
    tbtest.need_dirs(data)
    ns_dir = os.path.join(data, "kineto", "ns_resolution_trace")
    h100 = os.path.join(data, "kineto", "tracelens", "h100")
    mi300 = os.path.join(data, "kineto", "tracelens", "mi300")
    tbtest.need_dirs(ns_dir, h100, mi300)

    # HTA's numbers for the ns-resolution trace
    header, rows = report(exe, ns_dir, "temporal_breakdown", os.path.join(out, "ns"))
    if header is not None:
        T.eq(header, ["rank", "idle_time(us)", "compute_time(us)", "non_compute_time(us)", "kernel_time(us)",
               "idle_time_pctg", "compute_time_pctg", "non_compute_time_pctg"], "temporal_breakdown header")
        T.eq(len(rows), 1, "temporal_breakdown rows")
        if rows:
            T.eq(num(rows[0][4]), 384634, "kernel_time(us)")
            T.eq(num(rows[0][5]), 2.63, "idle_time_pctg")
            T.eq(num(rows[0][6]), 96.75, "compute_time_pctg")
            T.eq(num(rows[0][7]), 0.62, "non_compute_time_pctg")
        trace = [f for f in sorted(os.listdir(ns_dir)) if f.endswith(".json.gz")][0]
        want = hta_temporal(hta_events(os.path.join(ns_dir, trace)))
        T.eq([num(x) for x in rows[0][1:]] if rows else None, want, "temporal_breakdown, ns trace, all columns")

    # TraceLens' gpu_timeline.csv for the H100 trace
    header, rows = report(exe, h100, "exposed_time", os.path.join(out, "h100"))
    if header is not None:
        T.eq(header, ["rank", "type", "time ms", "percent"], "exposed_time header")
        got = {r[1]: float(r[2]) for r in rows}
        csvs = [d for d in os.listdir(h100) if d.endswith("_perf_report_csvs")]
        with open(os.path.join(h100, csvs[0], "gpu_timeline.csv"), newline="") as f:
            want = {r["type"]: float(r["time ms"]) for r in csv.DictReader(f)}
        T.eq(sorted(got), sorted(want), "exposed_time types")
        for t in want:
            if t in got and abs(got[t] - want[t]) > 0.001:
                T.fail("exposed_time %s: got %.6f ms, TraceLens %.6f ms" % (t, got[t], want[t]))
        for t, v in (("computation_time", 31.9031), ("idle_time", 2.9869), ("total_time", 34.8924)):
            if abs(got.get(t, -1) - v) > 0.001:
                T.fail("exposed_time %s: got %r, want %r" % (t, got.get(t), v))

    # mi300: NCCL kernels; overlap and idle time against the Python model
    trace = [f for f in sorted(os.listdir(mi300)) if f.endswith(".json.gz")][0]
    model = hta_events(os.path.join(mi300, trace))
    header, rows = report(exe, mi300, "comm_comp_overlap", os.path.join(out, "mi300"))
    if header is not None:
        T.eq(header, ["rank", "comp_comm_overlap_pctg"], "comm_comp_overlap header")
        T.eq([[int(r[0]), num(r[1])] for r in rows], [[0, hta_overlap(model)]], "comm_comp_overlap")
    header, rows = report(exe, mi300, "idle_time_breakdown", os.path.join(out, "mi300"))
    if header is not None:
        T.eq(header, ["rank", "stream", "idle_category", "idle_time", "idle_time_ratio"], "idle_time_breakdown header")
        T.eq([[int(r[1]), r[2], num(r[3]), num(r[4])] for r in rows], hta_idle(model), "idle_time_breakdown")
    header, rows = report(exe, mi300, "temporal_breakdown", os.path.join(out, "mi300"))
    if header is not None:
        T.eq([[num(x) for x in r[1:]] for r in rows], [hta_temporal(model)], "temporal_breakdown, mi300")

    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
