#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# straggler_trace.py - writes a small Kineto job of 4 ranks and 4 steps in
# which some ranks start their collective late, for the straggler checks
# (tests/conformance/hta_counters.py, tests/hta/make_refs.py).
#
# Each step of 1000 us: a forward op (aten::mm) launching a GEMM kernel on
# stream 7, then an all-reduce (record_param_comms) launching an
# ncclKernel_AllReduce kernel on stream 20. The all-reduce kernel starts at
# 600 us into the step plus the rank's lateness (rank 2: 150 us in steps 1-3;
# rank 3: 90 us in step 2, 20 us otherwise; rank 1: 40 us in step 3; others
# 0-12 us) and ends for every rank at 900 us (the collective waits for the
# last one). Step 4 is the last (cut by HTA's window).
# usage: straggler_trace.py OUT_DIR
import json
import os
import sys

LATE = {0: [0, 5, 3, 0], 1: [8, 12, 40, 2], 2: [150, 150, 150, 0], 3: [20, 90, 20, 20]}
BASE = 1_700_000_000_000  # us


def rank_events(r):
    ev, corr = [], 1000
    for step in range(4):
        t0 = BASE + step * 1000
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (step + 1), "pid": 10 + r,
                   "tid": 1, "ts": t0, "dur": 990, "args": {}})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10 + r, "tid": 1, "ts": t0 + 10,
                   "dur": 100, "args": {}})
        corr += 1
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10 + r, "tid": 1,
                   "ts": t0 + 20, "dur": 8, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7,
                   "ts": t0 + 40, "dur": 400, "args": {"correlation": corr, "stream": 7, "device": 0}})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 10 + r, "tid": 1,
                   "ts": t0 + 500, "dur": 60, "args": {}})
        corr += 1
        late = LATE[r][step]
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10 + r, "tid": 1,
                   "ts": t0 + 510, "dur": 10, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "pid": 0,
                   "tid": 20, "ts": t0 + 600 + late, "dur": 300 - late,
                   "args": {"correlation": corr, "stream": 20, "device": 0}})
    return ev


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for r in range(4):
        trace = {"schemaVersion": 1, "distributedInfo": {"rank": r, "world_size": 4, "backend": "nccl"},
                 "traceEvents": rank_events(r)}
        with open(os.path.join(out, "rank%d.pt.trace.json" % r), "w") as f:
            json.dump(trace, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
