#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# sync_trace.py - writes a small one-rank Kineto trace whose steps wait on
# the device in the four ways HTA's critical path draws (the cuda_sync
# events Stream Sync, Event Sync, Context Sync and Stream Wait Event), for
# the critical path checks (tests/conformance/hta_critical_path.py,
# tests/hta/make_cp_refs.py).
#
# Each step of 1000 us, on host thread 100 (times from the step's start):
#   aten::add   10-60   launches add_kernel on stream 7    (30-130)
#   aten::mul   70-100  launches mul_kernel on stream 8    (85-300)
#   cudaEventRecord 105-107, then cudaEventSynchronize 110-305 with its
#     Event Sync (waits on stream 8, on that record)
#   aten::sub   310-330 launches sub_kernel on stream 7    (320-420)
#   cudaStreamSynchronize 335-425 with its Stream Sync (stream 7)
#   aten::div   430-450 launches div_kernel on stream 8    (440-600 + 10 * step)
#   cudaDeviceSynchronize 455-(605 + 10 * step) with its Context Sync
#   a backward op on thread 200 (autograd::engine..., 620-700, + 10 * step)
#     next to a forward op on thread 100 (aten::forward 700-720, + 10 *
#     step), so that HTA merges the two threads
#   aten::fill_ 760-770 launches fill_kernel on stream 8   (775-900)
#   cudaEventRecord 772-774, cudaStreamWaitEvent 776-778 with its Stream
#     Wait Event on stream 9 (waits on stream 8, on that record)
#   aten::copy_ 782-795 launches copy_kernel on stream 9   (901-950)
# Step 4 is the last (cut by HTA's window).
#
# With --two-devices, a second device (pid 1) in the same process: each
# step also launches dev1_kernel onto its stream 8 (aten::mul 100-106, the
# call 102-106, the kernel 108-358) just before the cudaEventRecord, which
# moves to 107-109. The Event Sync awaits the record's stream 8 of device
# 0 (the sync event's pid): its task is mul_kernel, not the later launch
# onto stream 8 of device 1 (HTA matches the record by device and stream).
# usage: sync_trace.py OUT_DIR [--two-devices]
import json
import os
import sys

BASE = 1_700_000_000_000  # us
HOST = 100


def x(cat, name, ts, dur, tid=HOST, pid=HOST, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def launch(ev, corr, op, t0, ts, dur, kernel, stream, kts, kdur, device=0):
    ev.append(x("cpu_op", op, t0 + ts, dur))
    ev.append(x("cuda_runtime", "cudaLaunchKernel", t0 + ts + 2, 4, correlation=corr))
    ev.append(x("kernel", kernel, t0 + kts, kdur, tid=stream, pid=device, correlation=corr, stream=stream,
                device=device))
    ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": HOST, "tid": HOST, "ts": t0 + ts + 2})
    ev.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": device, "tid": stream, "ts": t0 + kts,
               "bp": "e"})


def step_events(step, corr, two_devices=False):
    t0 = BASE + step * 1000
    tail = 10 * step
    ev = [x("user_annotation", "ProfilerStep#%d" % (step + 1), t0, 990)]
    launch(ev, corr + 1, "aten::add", t0, 10, 50, "add_kernel", 7, 30, 100)
    launch(ev, corr + 2, "aten::mul", t0, 70, 30, "mul_kernel", 8, 85, 215)
    record = 105
    if two_devices:
        launch(ev, corr + 13, "aten::mul", t0, 100, 6, "dev1_kernel", 8, 108, 250, device=1)
        record = 107
    ev.append(x("cuda_runtime", "cudaEventRecord", t0 + record, 2, correlation=corr + 3))
    ev.append(x("cuda_runtime", "cudaEventSynchronize", t0 + 110, 195, correlation=corr + 4))
    ev.append(x("cuda_sync", "Event Sync", t0 + 111, 193, tid=-1, pid=0, correlation=corr + 4, stream=-1, device=0,
                wait_on_stream=8, wait_on_cuda_event_record_corr_id=corr + 3, wait_on_cuda_event_id=1,
                cuda_sync_kind="Event Sync"))
    launch(ev, corr + 5, "aten::sub", t0, 310, 20, "sub_kernel", 7, 320, 100)
    ev.append(x("cuda_runtime", "cudaStreamSynchronize", t0 + 335, 90, correlation=corr + 6))
    ev.append(x("cuda_sync", "Stream Sync", t0 + 336, 88, tid=7, pid=0, correlation=corr + 6, stream=7, device=0,
                cuda_sync_kind="Stream Sync"))
    launch(ev, corr + 7, "aten::div", t0, 430, 20, "div_kernel", 8, 440, 160 + tail)
    ev.append(x("cuda_runtime", "cudaDeviceSynchronize", t0 + 455, 150 + tail, correlation=corr + 8))
    ev.append(x("cuda_sync", "Context Sync", t0 + 456, 148 + tail, tid=-1, pid=0, correlation=corr + 8, stream=-1,
                device=0, cuda_sync_kind="Context Sync"))
    ev.append(x("cpu_op", "autograd::engine::evaluate_function: AddBackward0", t0 + 620 + tail, 80, tid=200))
    ev.append(x("cpu_op", "aten::forward", t0 + 700 + tail, 20))
    launch(ev, corr + 9, "aten::fill_", t0, 760, 10, "fill_kernel", 8, 775, 125)
    ev.append(x("cuda_runtime", "cudaEventRecord", t0 + 772, 2, correlation=corr + 10))
    ev.append(x("cuda_runtime", "cudaStreamWaitEvent", t0 + 776, 2, correlation=corr + 11))
    ev.append(x("cuda_sync", "Stream Wait Event", t0 + 779, 1, tid=9, pid=0, correlation=corr + 11, stream=9,
                device=0, wait_on_stream=8, wait_on_cuda_event_record_corr_id=corr + 10, wait_on_cuda_event_id=2,
                cuda_sync_kind="Stream Wait Event"))
    launch(ev, corr + 12, "aten::copy_", t0, 782, 13, "copy_kernel", 9, 901, 49)
    return ev


def main():
    out = sys.argv[1]
    two = sys.argv[2:] == ["--two-devices"]
    if sys.argv[2:] and not two:
        print("usage: sync_trace.py OUT_DIR [--two-devices]", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    ev = []
    for step in range(4):
        ev += step_events(step, 1000 + 20 * step, two)
    trace = {"schemaVersion": 1, "traceEvents": ev}
    with open(os.path.join(out, "rank0.pt.trace.json"), "w") as f:
        json.dump(trace, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
