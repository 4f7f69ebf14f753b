#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# mtia_trace.py - writes a small MTIA Kineto job of 2 ranks and 3 steps for
# HTA's MTIA window (tests/conformance/hta_counters.py, tests/hta/make_refs.py).
#
# An MTIA trace (its distributedInfo backend mtia:hccl; runtime calls
# "runFunction - job_prep_and_submit_for_execution" in mtia_runtime, device
# slices in mtia_ccp_events) is cut by HTA to the span of its ProfilerSteps,
# the last step included: a host event stays when it lies wholly inside
# [first step start, last step end], a device slice when the call that
# launched it stays, and a memory slice (dma_*) without a launching call when
# it starts inside a step. Each rank here (times in us from BASE, rank 1
# shifted by 7 us and its kernels 10 us longer):
#   - before the first step: an operator and a launch whose kernel is left out;
#   - steps 1-3 at 1000, 2000, 3000 (990 us each): an operator aten::mm with
#     two launches (mul, add kernels on stream 1, the second queued behind
#     the first), and a dma_request on stream 2 launched by no call (kept);
#   - near the end of step 3: an operator aten::add that outlasts the step
#     (left out) holding a launch that ends inside it (its kernel kept) and
#     one that ends after the step (its kernel left out);
#   - after the last step: a dma_request (left out).
# A GPU trace's window would instead keep only what was launched before the
# last step began.
# usage: mtia_trace.py OUT_DIR
import json
import os
import sys

BASE = 1_700_000_000_000  # us
RUN = "runFunction - job_prep_and_submit_for_execution"


def rank_events(r):
    pid, dev = 100 + r, 9
    ev = []
    corr = [0]

    def host(cat, name, ts, dur, **args):
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": pid, "ts": BASE + 7 * r + ts,
                   "dur": dur, "args": args})

    def launch(ts, dur, kernel, kts, kdur, stream=1):
        corr[0] += 1
        host("mtia_runtime", RUN, ts, dur, correlation=corr[0])
        ev.append({"ph": "X", "cat": "mtia_ccp_events", "name": kernel, "pid": dev, "tid": stream,
                   "ts": BASE + 7 * r + kts, "dur": kdur,
                   "args": {"correlation": corr[0], "stream": stream, "device": dev}})

    def dma(ts, dur):
        ev.append({"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": dev, "tid": 2,
                   "ts": BASE + 7 * r + ts, "dur": dur,
                   "args": {"stream": 2, "direction": "HOST_TO_DEVICE", "size": 4096}})

    host("cpu_op", "aten::empty", 100, 50)
    launch(110, 20, "add-dtype_Float", 200, 100)
    for step in (1, 2, 3):
        s = 1000 * step
        host("user_annotation", "ProfilerStep#%d" % step, s, 990)
        host("cpu_op", "aten::mm", s + 10, 300)
        launch(s + 20, 15, "mul-dtype_Float", s + 100, 200 + 10 * r)
        launch(s + 40, 12, "add-dtype_Float", s + 310 + 10 * r, 150)
        dma(s + 500, 40)
    host("cpu_op", "aten::add", 3900, 200)
    launch(3950, 30, "mul-dtype_Float", 4000, 50)
    launch(3985, 10, "add-dtype_Float", 4060, 20)
    dma(4100, 30)
    return ev


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for r in (0, 1):
        doc = {"schemaVersion": 1, "distributedInfo": {"backend": "mtia:hccl", "rank": r, "world_size": 2},
               "traceEvents": [{"ph": "M", "name": "process_name", "pid": 9, "tid": 0, "args": {"name": "MTIA 9"}}]
               + rank_events(r)}
        with open(os.path.join(out, "mtia_rank%d.pt.trace.json" % r), "w", encoding="utf-8") as f:
            json.dump(doc, f)


if __name__ == "__main__":
    main()
