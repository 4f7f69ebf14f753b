#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# hta_stacks_test.py - the call_stack table and the frequent_kernel_sequences
# report on a hand-written Kineto trace whose answers are worked out below.
#
# The trace (µs): a main thread (pid 1, tid 1) with ProfilerStep#1 [0, 1000],
# #2 [1000, 2000] and #3 [2000, 2100] (the last step: HTA's window drops it);
# in step k (base b = 0, 1000): aten::linear [b+100, b+300] holding aten::mm
# [b+110, b+290], which holds two cudaLaunchKernel calls launching gemm_a
# then gemm_b; aten::add [b+300, b+400] (it starts where linear ends: a
# sibling) launching add_k. A backward thread (pid 1, tid 2) with an
# autograd::engine::evaluate_function: MmBackward0 [b+500, b+700] holding
# aten::mm [b+510, b+690], launching gemm_b then gemm_a.
#
# Depths: the steps 0, linear and add 1, mm 2, its calls 3 (add's 2), the
# kernels 4 (add_k 3);
# the backward slices move under the step that holds them (HTA links the
# backward thread to the main one): evaluate_function 1, its aten::mm 2.
# Kernel durations (start, end): step 1 gemm_a [400, 450], gemm_b [450,
# 470], add_k [470, 480], backward gemm_b [800, 820], gemm_a [820, 850];
# step 2 gemm_a [1400, 1460], gemm_b [1460, 1470], add_k [1470, 1485],
# backward gemm_b [1800, 1830], gemm_a [1830, 1850].
#
#   aten::mm, min 2: depth 2 (forward and backward): aten::mm|gemm_a|gemm_b
#     2 times, kernels 50+20+60+10 = 140, ops 180+180 = 360;
#     aten::mm|gemm_b|gemm_a 2, 20+30+30+20 = 100, 360.
#   aten::, min 1: depth 1: aten::add|add_k 2, 10+15 = 25, 200;
#     aten::linear|gemm_a|gemm_b 2, 140, 400.
#   aten::, min 3: the depth-1 ops have fewer kernels: no row (as HTA).
#   ProfilerStep, min 3: #1 with 5 kernels in start order, 50+20+10+20+30 =
#     130, 1000; #2 60+10+15+30+20 = 135, 1000. top_k 1: #1 only.
#
# A second trace holds the device's cuda_sync slices, which HTA lists among
# a pattern's kernels when they sit on a stream above 0 with their runtime
# call's correlation (Stream Sync, Stream Wait Event), and leaves out when
# their stream is -1 (Event Sync, Context Sync). ProfilerStep#1 [0, 1000],
# #2 [1000, 2000], #3 [2000, 2100] (dropped: the last step); in step k
# (base b = 0, 1000): aten::to [b+100, b+300] with cudaMemcpyAsync (its
# Memcpy HtoD [b+130, b+150] on stream 7) and cudaStreamSynchronize (its
# Stream Sync [b+170, b+245] on stream 7); aten::item [b+300, b+400] with
# cudaEventSynchronize (Event Sync [b+320, b+340], stream -1) and
# cudaDeviceSynchronize (Context Sync [b+365, b+385], stream -1);
# aten::wait [b+400, b+450] with cudaStreamWaitEvent (Stream Wait Event
# [b+415, b+416] on stream 20). Step 3 has an aten::to whose Stream Sync
# HTA's window drops with its call.
#   aten::, min 1: aten::to|Memcpy HtoD (Pageable -> Device)|Stream Sync 2
#     times, (20 + 75) * 2 = 190, 400; aten::wait|Stream Wait Event 2, 2,
#     100 (aten::item has nothing below it: no pattern).
#   ProfilerStep, min 3: #k|Memcpy HtoD (Pageable -> Device)|Stream
#     Sync|Stream Wait Event, 96 each, 1000.
# HTA (at f4d0062c) gives these rows on this trace too.
# usage: hta_stacks_test.py TRACEBOOK OUT_DIR
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

T = tbtest.Checks()


def trace():
    ev = []
    corr = [0]

    def x(cat, name, pid, tid, ts, dur, **args):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
        if args:
            e["args"] = args
        ev.append(e)

    def launch(ts, kernel, _pid, ks, kd, tid):
        corr[0] += 1
        x("cuda_runtime", "cudaLaunchKernel", 1, tid, ts, 10, correlation=corr[0])
        x("kernel", kernel, 0, 7, ks, kd, correlation=corr[0], stream=7, device=0)

    for k in (1, 2, 3):
        b = (k - 1) * 1000
        x("user_annotation", "ProfilerStep#%d" % k, 1, 1, b, 1000 if k < 3 else 100)
    for b, d in ((0, (50, 20, 10, 20, 30)), (1000, (60, 10, 15, 30, 20))):
        x("cpu_op", "aten::linear", 1, 1, b + 100, 200)
        x("cpu_op", "aten::mm", 1, 1, b + 110, 180)
        launch(b + 120, "gemm_a", 1, b + 400, d[0], 1)
        launch(b + 200, "gemm_b", 1, b + 400 + d[0], d[1], 1)
        x("cpu_op", "aten::add", 1, 1, b + 300, 100)
        launch(b + 350, "add_k", 1, b + 400 + d[0] + d[1], d[2], 1)
        x("cpu_op", "autograd::engine::evaluate_function: MmBackward0", 1, 2, b + 500, 200)
        x("cpu_op", "aten::mm", 1, 2, b + 510, 180)
        launch(b + 520, "gemm_b", 1, b + 800, d[3], 2)
        launch(b + 600, "gemm_a", 1, b + 800 + d[3], d[4], 2)
    # the step 3 call and its kernel: dropped with the last step
    launch(2010, "late_k", 1, 2050, 5, 1)
    return {"traceEvents": ev}


def sync_trace():
    ev = []
    corr = [0]

    def x(cat, name, pid, tid, ts, dur, **args):
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args})

    def call(name, ts, dur, cat, dname, stream, tid, dts, ddur):
        corr[0] += 1
        x("cuda_runtime", name, 1, 1, ts, dur, correlation=corr[0])
        x(cat, dname, 0, tid, dts, ddur, correlation=corr[0], stream=stream, device=0)

    for k in (1, 2, 3):
        b = (k - 1) * 1000
        x("user_annotation", "ProfilerStep#%d" % k, 1, 1, b, 1000 if k < 3 else 100)
    for b in (0, 1000):
        x("cpu_op", "aten::to", 1, 1, b + 100, 200)
        call("cudaMemcpyAsync", b + 110, 10, "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, 7, b + 130, 20)
        call("cudaStreamSynchronize", b + 160, 90, "cuda_sync", "Stream Sync", 7, 7, b + 170, 75)
        x("cpu_op", "aten::item", 1, 1, b + 300, 100)
        call("cudaEventSynchronize", b + 310, 40, "cuda_sync", "Event Sync", -1, -1, b + 320, 20)
        call("cudaDeviceSynchronize", b + 360, 30, "cuda_sync", "Context Sync", -1, -1, b + 365, 20)
        x("cpu_op", "aten::wait", 1, 1, b + 400, 50)
        call("cudaStreamWaitEvent", b + 410, 10, "cuda_sync", "Stream Wait Event", 20, 20, b + 415, 1)
    x("cpu_op", "aten::to", 1, 1, 2010, 40)
    call("cudaStreamSynchronize", 2020, 20, "cuda_sync", "Stream Sync", 7, 7, 2025, 10)
    return {"traceEvents": ev}


def check_syncs(exe, out):
    """The cuda_sync slices among a pattern's kernels, as HTA lists them."""
    src = os.path.join(out, "sync", "rank0.pt.trace.json")
    os.makedirs(os.path.dirname(src))
    with open(src, "w") as f:
        json.dump(sync_trace(), f)
    head = ["rank", "pattern", "count", "GPU kernel duration (us)", "CPU op duration (us)"]
    T.eq(report(exe, src, os.path.join(out, "sync_aten"), "operator_name=aten::", "min_pattern_len=1"),
         [head, ["0", "aten::to|Memcpy HtoD (Pageable -> Device)|Stream Sync", "2", "190", "400"],
          ["0", "aten::wait|Stream Wait Event", "2", "2", "100"]],
         "cuda_sync: Stream Sync and Stream Wait Event among the kernels, Event and Context Sync (stream -1) not")
    T.eq(report(exe, src, os.path.join(out, "sync_steps"), "operator_name=ProfilerStep"),
         [head] + [["0", "ProfilerStep#%d|Memcpy HtoD (Pageable -> Device)|Stream Sync|Stream Wait Event" % k, "1",
                    "96", "1000"] for k in (1, 2)],
         "cuda_sync: the kept steps; the last step's Stream Sync dropped with its call")
    r = tbtest.run([exe, "query", "--format", "csv", "-o", os.path.join(out, "sync.csv"), "-dir", src,
                    "SELECT side, name, depth, count(*) FROM call_stack WHERE name LIKE '% Sync' "
                    "OR name LIKE 'Stream Wait%' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"])
    if T.check(r.returncode == 0, "query call_stack (syncs)", r.stderr):
        with open(os.path.join(out, "sync.csv"), newline="") as f:
            rows = list(csv.reader(f))[1:]
        T.eq(rows, [["device", "Stream Sync", "3", "2"], ["device", "Stream Wait Event", "3", "2"],
                    ["host", "Context Sync", "-1", "2"], ["host", "Event Sync", "-1", "2"]],
             "call_stack: Stream Sync and Stream Wait Event as device events below their calls (the dropped "
             "step's none), Event and Context Sync host-side slices in no tree")


def report(exe, src, out, *params):
    argv = [exe, "report", "-q", "-dir", src, "--spec", "builtin:frequent_kernel_sequences", "-o", out]
    for p in params:
        argv += ["--param", p]
    r = tbtest.run(argv)
    if not T.check(r.returncode == 0, "report %s" % " ".join(params), r.stderr):
        return []
    with open(os.path.join(out, "frequent_kernel_sequences.csv"), newline="") as f:
        return list(csv.reader(f))


def main():
    exe, out = sys.argv[1:3]
    tbtest.fresh_dir(out)
    src = os.path.join(out, "in", "rank0.pt.trace.json")
    os.makedirs(os.path.dirname(src))
    with open(src, "w") as f:
        json.dump(trace(), f)
    head = ["rank", "pattern", "count", "GPU kernel duration (us)", "CPU op duration (us)"]
    T.eq(report(exe, src, os.path.join(out, "mm"), "operator_name=aten::mm", "min_pattern_len=2"),
         [head, ["0", "aten::mm|gemm_a|gemm_b", "2", "140", "360"], ["0", "aten::mm|gemm_b|gemm_a", "2", "100", "360"]],
         "aten::mm: forward and backward at one depth")
    T.eq(report(exe, src, os.path.join(out, "aten1"), "operator_name=aten::", "min_pattern_len=1"),
         [head, ["0", "aten::add|add_k", "2", "25", "200"], ["0", "aten::linear|gemm_a|gemm_b", "2", "140", "400"]],
         "aten::: the shallowest ops")
    T.eq(report(exe, src, os.path.join(out, "aten3"), "operator_name=aten::", "min_pattern_len=3"), [head],
         "aten::, 3 kernels: the shallowest ops have fewer: no row")
    steps = [["0", "ProfilerStep#1|gemm_a|gemm_b|add_k|gemm_b|gemm_a", "1", "130", "1000"],
             ["0", "ProfilerStep#2|gemm_a|gemm_b|add_k|gemm_b|gemm_a", "1", "135", "1000"]]
    T.eq(report(exe, src, os.path.join(out, "steps"), "operator_name=ProfilerStep"), [head] + steps,
         "ProfilerStep: the kept steps, their kernels in start order")
    T.eq(report(exe, src, os.path.join(out, "top1"), "operator_name=ProfilerStep", "top_k=1"), [head] + steps[:1],
         "top_k 1")
    T.eq(report(exe, src, os.path.join(out, "none"), "operator_name=no_such_op"), [head], "no match: no row")
    # the table: depths and counts
    r = tbtest.run([exe, "query", "--format", "csv", "-o", os.path.join(out, "q.csv"), "-dir", src,
                    "SELECT name, depth, kernels, kernel_dur FROM call_stack "
                    "WHERE name IN ('ProfilerStep#1', 'aten::mm', 'cudaLaunchKernel', 'gemm_a', "
                    "'autograd::engine::evaluate_function: MmBackward0') AND ts < 1000 ORDER BY ts, depth"])
    if T.check(r.returncode == 0, "query call_stack", r.stderr):
        with open(os.path.join(out, "q.csv"), newline="") as f:
            rows = list(csv.reader(f))[1:]
        T.eq(rows, [["ProfilerStep#1", "0", "5", "130"], ["aten::mm", "2", "2", "70"],
                    ["cudaLaunchKernel", "3", "1", "50"], ["cudaLaunchKernel", "3", "1", "20"],
                    ["cudaLaunchKernel", "2", "1", "10"], ["gemm_a", "4", "1", "50"],
                    ["autograd::engine::evaluate_function: MmBackward0", "1", "2", "50"], ["aten::mm", "2", "2", "50"],
                    ["cudaLaunchKernel", "3", "1", "20"], ["cudaLaunchKernel", "3", "1", "30"],
                    ["gemm_a", "4", "1", "30"]], "call_stack: depths, kernels below, their time")
    check_syncs(exe, out)
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
