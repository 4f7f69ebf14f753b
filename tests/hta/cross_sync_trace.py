#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# cross_sync_trace.py - writes a small one-rank Kineto trace whose syncs
# cross a step boundary: a step waits, through an Event Sync and a Stream
# Wait Event, on the record made in the step before it, after a kernel
# that step launched and that runs on into this step. HTA draws each
# step's graph on its own (critical_path_analysis per instance), so the
# awaited kernel, launched in the step before, is no node of this step's
# graph; tracebook draws every step in one pass and must start each step's
# graph afresh (tests/conformance/hta_critical_path.py,
# tests/hta/make_cp_refs.py).
#
# Each step N of 1000 us, on host thread 100 (times from the step's start):
#   aten::add   10-60    launches add_kernel on stream 7    (30-130)
#   cudaEventSynchronize 70-255 with its Event Sync (71-254), waiting on
#     stream 8 on step N-1's cudaEventRecord (step 0: no sync)
#   cudaStreamSynchronize 300-350 with its Stream Sync on stream 7
#   cudaStreamWaitEvent 450-452 with its Stream Wait Event on stream 9,
#     waiting on stream 8 on step N-1's record (step 0: none)
#   aten::copy_ 460-470  launches copy_kernel on stream 9   (480-520)
#   aten::mul   800-830  launches long_kernel on stream 8   (850-1250: into step N+1)
#   cudaEventRecord 840-842 (stream 8, after long_kernel)
# Four steps; HTA's window cuts the last one.
# usage: cross_sync_trace.py OUT_DIR
import json
import os
import sys

BASE = 1_700_000_000_000  # us
HOST = 100


def x(cat, name, ts, dur, tid=HOST, pid=HOST, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def launch(ev, corr, op, t0, ts, dur, kernel, stream, kts, kdur):
    ev.append(x("cpu_op", op, t0 + ts, dur))
    ev.append(x("cuda_runtime", "cudaLaunchKernel", t0 + ts + 2, 4, correlation=corr))
    ev.append(x("kernel", kernel, t0 + kts, kdur, tid=stream, pid=0, correlation=corr, stream=stream, device=0))
    ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": HOST, "tid": HOST, "ts": t0 + ts + 2})
    ev.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": stream, "ts": t0 + kts,
               "bp": "e"})


def record_corr(step):
    return 1000 + 20 * step + 10


def step_events(step):
    t0 = BASE + step * 1000
    corr = 1000 + 20 * step
    ev = [x("user_annotation", "ProfilerStep#%d" % (step + 1), t0, 990)]
    launch(ev, corr + 1, "aten::add", t0, 10, 50, "add_kernel", 7, 30, 100)
    if step > 0:
        ev.append(x("cuda_runtime", "cudaEventSynchronize", t0 + 70, 185, correlation=corr + 2))
        ev.append(x("cuda_sync", "Event Sync", t0 + 71, 183, tid=-1, pid=0, correlation=corr + 2, stream=-1, device=0,
                    wait_on_stream=8, wait_on_cuda_event_record_corr_id=record_corr(step - 1),
                    wait_on_cuda_event_id=1, cuda_sync_kind="Event Sync"))
    ev.append(x("cuda_runtime", "cudaStreamSynchronize", t0 + 300, 50, correlation=corr + 3))
    ev.append(x("cuda_sync", "Stream Sync", t0 + 301, 48, tid=7, pid=0, correlation=corr + 3, stream=7, device=0,
                cuda_sync_kind="Stream Sync"))
    if step > 0:
        ev.append(x("cuda_runtime", "cudaStreamWaitEvent", t0 + 450, 2, correlation=corr + 4))
        ev.append(x("cuda_sync", "Stream Wait Event", t0 + 453, 1, tid=9, pid=0, correlation=corr + 4, stream=9,
                    device=0, wait_on_stream=8, wait_on_cuda_event_record_corr_id=record_corr(step - 1),
                    wait_on_cuda_event_id=2, cuda_sync_kind="Stream Wait Event"))
    launch(ev, corr + 5, "aten::copy_", t0, 460, 10, "copy_kernel", 9, 480, 40)
    launch(ev, corr + 6, "aten::mul", t0, 800, 30, "long_kernel", 8, 850, 400)
    ev.append(x("cuda_runtime", "cudaEventRecord", t0 + 840, 2, correlation=record_corr(step)))
    return ev


def main():
    if len(sys.argv) != 2:
        print("usage: cross_sync_trace.py OUT_DIR", file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    ev = []
    for step in range(4):
        ev += step_events(step)
    with open(os.path.join(out, "rank0.pt.trace.json"), "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
