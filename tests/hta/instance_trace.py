#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# instance_trace.py - writes a small one-rank Kineto trace in which the
# annotation "Memcpy" is held by events of every category HTA counts for its
# instance_id (critical_path_analysis: every event whose name holds the
# annotation), written in an order that is not their start order, for the
# critical path checks of HTA's instance numbering
# (tests/conformance/hta_critical_path.py, tests/hta/make_cp_refs.py).
#
# Each step of 1000 us, on host thread 100, device stream 7 (times from the
# step's start; the file holds each step's events in the order listed, the
# annotation's holders marked *):
#   ProfilerStep#N                 user_annotation  0-990     (not with --no-steps)
# * Memcpy HtoD (Pageable -> ...)  gpu_memcpy       130-330   launched by cudaMemcpyAsync
# * MemcpyGraphNode                kernel           460-560   launched by cudaGraphLaunch (its first node)
#   aten::copy_                    cpu_op           100-200
# * Memcpy staging                 user_annotation  205-600   (a host annotation)
# * cudaMemcpyAsync                cuda_runtime     110-120
# * MemcpyEpilogueKernel           kernel           340-450   launched by the first cudaLaunchKernel
#   aten::mm                       cpu_op           210-260
#   cudaLaunchKernel               cuda_runtime     215-220
#   aten::_graph_replay            cpu_op           122-128
#   cudaGraphLaunch                cuda_runtime     123-127
#   aten::sum, cudaLaunchKernel    cpu_op, runtime  350-370, 352-366: sum_kernel 810-830
#   aten::relu, cudaLaunchKernel   cpu_op, runtime  500-520, 505-510: relu_kernel 710-760
#   aten::add, cudaLaunchKernel    cpu_op, runtime  590-600, 592-596: add_kernel 770-800
#   relu_kernel, add_kernel, sum_kernel  kernel
# * MemcpyGraphNode                kernel           570-700   the graph's second node (same correlation)
# so that each holder's window holds events (each holds the next launches)
# (HTA's graph holds one kernel of a launch of two, the last in the file:
# the second; the first, on the same stream, is no node of its graph).
# Four steps; HTA's window cuts the last one. With its steps, HTA numbers
# the device events it keeps first (the two graph nodes together, by the
# first of them), then the host events, in file order; with --no-steps
# (no ProfilerStep: no cut) every event in file order.
# usage: instance_trace.py OUT_DIR [--no-steps]
import json
import os
import sys

BASE = 1_700_000_000_000  # us
HOST = 100
STREAM = 7


def x(cat, name, ts, dur, tid=HOST, pid=HOST, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def dev(cat, name, ts, dur, corr, stream=STREAM):
    return x(cat, name, ts, dur, tid=stream, pid=0, correlation=corr, stream=stream, device=0)


def flows(corr, call_ts, task_ts, stream=STREAM):
    return [{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": HOST, "tid": HOST, "ts": call_ts},
            {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": stream, "ts": task_ts, "bp": "e"}]


def launch(ev, op, ts, dur, corr):
    ev.append(x("cpu_op", op, ts, dur))
    ev.append(x("cuda_runtime", "cudaLaunchKernel", ts + 2, dur - 6, correlation=corr))


def step_events(step, corr, steps):
    t0 = BASE + step * 1000
    ev = [x("user_annotation", "ProfilerStep#%d" % (step + 1), t0, 990)] if steps else []
    ev += [dev("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", t0 + 130, 200, corr + 1),
           dev("kernel", "MemcpyGraphNode", t0 + 460, 100, corr + 3),
           x("cpu_op", "aten::copy_", t0 + 100, 100),
           x("user_annotation", "Memcpy staging", t0 + 205, 395),
           x("cuda_runtime", "cudaMemcpyAsync", t0 + 110, 10, correlation=corr + 1),
           dev("kernel", "MemcpyEpilogueKernel", t0 + 340, 110, corr + 2),
           x("cpu_op", "aten::mm", t0 + 210, 50),
           x("cuda_runtime", "cudaLaunchKernel", t0 + 215, 5, correlation=corr + 2),
           x("cpu_op", "aten::_graph_replay", t0 + 122, 6),
           x("cuda_runtime", "cudaGraphLaunch", t0 + 123, 4, correlation=corr + 3)]
    launch(ev, "aten::sum", t0 + 350, 20, corr + 6)
    launch(ev, "aten::relu", t0 + 500, 20, corr + 4)
    launch(ev, "aten::add", t0 + 590, 10, corr + 5)
    ev += [dev("kernel", "relu_kernel", t0 + 710, 50, corr + 4),
           dev("kernel", "add_kernel", t0 + 770, 30, corr + 5),
           dev("kernel", "sum_kernel", t0 + 810, 20, corr + 6),
           dev("kernel", "MemcpyGraphNode", t0 + 570, 130, corr + 3)]
    for c, call, task in ((1, 110, 130), (2, 215, 340), (4, 502, 710), (5, 592, 770), (6, 352, 810)):
        ev += flows(corr + c, t0 + call, t0 + task)
    ev += flows(corr + 3, t0 + 123, t0 + 460)
    return ev


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--no-steps"]):
        print("usage: instance_trace.py OUT_DIR [--no-steps]", file=sys.stderr)
        return 2
    out = sys.argv[1]
    steps = sys.argv[2:] != ["--no-steps"]
    os.makedirs(out, exist_ok=True)
    ev = []
    for step in range(4):
        ev += step_events(step, 1000 + 10 * step, steps)
    with open(os.path.join(out, "rank0.pt.trace.json"), "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
