#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# graph_trace.py - writes a small one-rank Kineto trace in which a CUDA
# graph launch (cudaGraphLaunch) runs three kernels of one correlation on
# one stream, between ordinary launches, and bounds the step
# (tests/conformance/hta_critical_path.py, tests/hta/make_cp_refs.py).
#
# Each step N of 1000 us, on host thread 100, device stream 7 (times from
# the step's start):
#   aten::add 10-40, cudaLaunchKernel 12-18      add_kernel    50-150
#   aten::_graph_replay 60-80, cudaGraphLaunch 62-72 (one correlation):
#                                                graph_k0      160-300
#                                                graph_k1      305-450
#                                                graph_k2      460-640
#     (in the file in start order; in steps 2 and 4 graph_k2 first, so
#     that the last of them in the file, the one HTA keeps, is graph_k1)
#   cudaEventRecord 82-84 (stream 7, after the graph)
#   cudaEventSynchronize 90-650 with its Event Sync (91-649), waiting on
#     that record
#   aten::mul 660-690, cudaLaunchKernel 662-668  mul_kernel    700-760
#   cudaStreamSynchronize 770-800 with its Stream Sync on stream 7
# Four steps; HTA's window cuts the last one. With --launch-kernel the
# graph's kernels are launched by one cudaLaunchKernel instead, a launch
# HTA's queue length counts: it holds the call once per kernel, HTA's graph
# walks the kept kernel once per row and joins its end back to its start,
# and HTA finds no path for any step.
# usage: graph_trace.py OUT_DIR [--launch-kernel]
import json
import os
import sys

BASE = 1_700_000_000_000  # us
HOST = 100
STREAM = 7


def x(cat, name, ts, dur, tid=HOST, pid=HOST, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def kernel(name, ts, dur, corr):
    return x("kernel", name, ts, dur, tid=STREAM, pid=0, correlation=corr, stream=STREAM, device=0)


def flows(corr, call_ts, task_ts):
    return [{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": HOST, "tid": HOST, "ts": call_ts},
            {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": STREAM, "ts": task_ts,
             "bp": "e"}]


def graph_kernels(step, t0, corr):
    """The graph's kernels, in start order in the file; in steps 2 and 4
    the last to start first in the file."""
    k = [kernel("graph_k0", t0 + 160, 140, corr), kernel("graph_k1", t0 + 305, 145, corr),
         kernel("graph_k2", t0 + 460, 180, corr)]
    return k if step % 2 == 0 else k[2:] + k[:2]


def step_events(step, graph_call):
    t0 = BASE + step * 1000
    corr = 1000 + 20 * step
    ev = [x("user_annotation", "ProfilerStep#%d" % (step + 1), t0, 990),
          x("cpu_op", "aten::add", t0 + 10, 30),
          x("cuda_runtime", "cudaLaunchKernel", t0 + 12, 6, correlation=corr + 1),
          kernel("add_kernel", t0 + 50, 100, corr + 1),
          x("cpu_op", "aten::_graph_replay", t0 + 60, 20),
          x("cuda_runtime", graph_call, t0 + 62, 10, correlation=corr + 2),
          *graph_kernels(step, t0, corr + 2),
          x("cuda_runtime", "cudaEventRecord", t0 + 82, 2, correlation=corr + 3),
          x("cuda_runtime", "cudaEventSynchronize", t0 + 90, 560, correlation=corr + 4),
          x("cuda_sync", "Event Sync", t0 + 91, 558, tid=-1, pid=0, correlation=corr + 4, stream=-1, device=0,
            wait_on_stream=STREAM, wait_on_cuda_event_record_corr_id=corr + 3, wait_on_cuda_event_id=1,
            cuda_sync_kind="Event Sync"),
          x("cpu_op", "aten::mul", t0 + 660, 30),
          x("cuda_runtime", "cudaLaunchKernel", t0 + 662, 6, correlation=corr + 5),
          kernel("mul_kernel", t0 + 700, 60, corr + 5),
          x("cuda_runtime", "cudaStreamSynchronize", t0 + 770, 30, correlation=corr + 6),
          x("cuda_sync", "Stream Sync", t0 + 771, 28, tid=STREAM, pid=0, correlation=corr + 6, stream=STREAM,
            device=0, cuda_sync_kind="Stream Sync")]
    ev += flows(corr + 1, t0 + 12, t0 + 50) + flows(corr + 2, t0 + 62, t0 + 160) + flows(corr + 5, t0 + 662, t0 + 700)
    return ev


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--launch-kernel"]):
        print("usage: graph_trace.py OUT_DIR [--launch-kernel]", file=sys.stderr)
        return 2
    out = sys.argv[1]
    call = "cudaLaunchKernel" if sys.argv[2:] else "cudaGraphLaunch"
    os.makedirs(out, exist_ok=True)
    ev = []
    for step in range(4):
        ev += step_events(step, call)
    with open(os.path.join(out, "rank0.pt.trace.json"), "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
