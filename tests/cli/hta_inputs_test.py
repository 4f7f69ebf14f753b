#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# hta_inputs_test.py - what HTA's analyses read from a Kineto trace beyond
# slices and times, on hand-written traces with worked-out answers:
#
#   - the trace's own memory bandwidth: a copy of 1000 bytes in 10 µs whose
#     args say "memory bandwidth (GB/s)": 0.25 (an older trace's figure, not
#     1000 B / 10000 ns = 0.1) counts 0.25 (TB_MEMCPY_BW keeps it); a copy of
#     2000 bytes in 10 µs without it counts 2000 / 10000 = 0.2. The
#     memory_bw_summary of "Memcpy HtoD" over its positive points: count 2,
#     mean 0.225, min 0.2, max 0.25;
#   - MTIA: an mtia_ccp_events slice is a device task and the mtia_runtime
#     call runFunction - job_prep_and_submit_for_execution [100, 110] that
#     launched it (correlation 5) a runtime call (CANN_API type 60006): the
#     task [200, 260] gets kernel_launch_stats cpu_duration 10, gpu_duration
#     60, launch_delay 90, and is one deeper than its call in call_stack;
#   - MTIA by the trace's metadata, as HTA's infer_gpu_type: the MTIA job of
#     tests/hta/mtia_trace.py with a cudaLaunchKernel call added before its
#     steps (by its names alone an NVIDIA trace) keeps its distributedInfo
#     backend mtia:hccl and so HTA's MTIA window: kernel_launch_stats and
#     queue_length_summary equal the job's own (HTA's figures); with backend
#     nccl the names decide and the GPU window cuts the last step;
#   - a trace without GPU work: gpu_user_annotation_breakdown of the host's
#     annotations (use_gpu_annotation 0) sums them (step 10 and 30 µs: sum 40,
#     mean 20, std sqrt(200)), as HTA does on its cpu_only trace;
#   - Kineto's categories of 2022 (Kernel, Memcpy, Memset, Runtime): device
#     tasks and runtime calls as today's; a kernel that is the trace's first
#     event gets the TB_PROFILE_META row traceEvents[0].correlation and, as in
#     HTA (its trace_file_list trace), its launch is left out of the queue
#     length (6 changes on stream 7, not 8; 8 when a metadata event comes
#     first) but not out of the launch statistics;
#   - aten_op_kernels lists an op's kernels in the order of their launch
#     calls in the file, as HTA: calls written latest first give "k_b ->
#     k_a", the first delays those of the call written first; under a
#     window of steps too.
# usage: hta_inputs_test.py TRACEBOOK OUT_DIR
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hta"))
import mtia_trace  # noqa: E402

T = tbtest.Checks()


def x(cat, name, pid, tid, ts, dur, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def write(path, events):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)


def rows(exe, src, spec, out):
    r = tbtest.run([exe, "report", "-q", "-dir", src, "--spec", "builtin:" + spec, "-o", out])
    if not T.check(r.returncode == 0, "report %s" % spec, r.stderr):
        return []
    with open(os.path.join(out, spec + ".csv"), newline="") as f:
        return list(csv.reader(f))


def query(exe, src, sql, out):
    r = tbtest.run([exe, "query", "--format", "csv", "-o", out, "-dir", src, sql])
    if not T.check(r.returncode == 0, "query %s" % sql, r.stderr):
        return []
    with open(out, newline="") as f:
        return list(csv.reader(f))[1:]


def main():
    exe, out = sys.argv[1:3]
    tbtest.fresh_dir(out)
    bw = os.path.join(out, "bw", "rank0.pt.trace.json")
    write(bw, [x("cuda_runtime", "cudaMemcpyAsync", 1, 1, 100, 10, correlation=1),
               x("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 7, 200, 10, correlation=1, stream=7,
                 device=0, bytes=1000, **{"memory bandwidth (GB/s)": 0.25}),
               x("cuda_runtime", "cudaMemcpyAsync", 1, 1, 300, 10, correlation=2),
               x("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 7, 400, 10, correlation=2, stream=7,
                 device=0, bytes=2000)])
    T.eq(query(exe, bw, "SELECT bandwidth FROM TB_MEMCPY_BW", os.path.join(out, "bw.csv")), [["0.25"]],
         "TB_MEMCPY_BW: the trace's bandwidth of the copy that gives one")
    got = rows(exe, bw, "memory_bw_summary", os.path.join(out, "bw-out"))
    T.eq([r[:4] + [r[5], r[9]] for r in got[1:]], [["0", "Memcpy HtoD", "2", "0.225", "0.2", "0.25"]],
         "memory_bw_summary: the trace's bandwidth where given, bytes / duration elsewhere")
    T.check(len(got) == 2 and abs(float(got[1][4]) - 0.05 / 2 ** 0.5) < 1e-12, "memory_bw_summary: std",
            repr(got))
    mtia = os.path.join(out, "mtia", "rank0.pt.trace.json")
    write(mtia, [x("mtia_runtime", "runFunction - job_prep_and_submit_for_execution", 1, 1, 100, 10, correlation=5),
                 x("mtia_ccp_events", "fwd_kernel", 0, 3, 200, 60, correlation=5, stream=3, device=0)])
    T.eq(query(exe, mtia, "SELECT (SELECT count(*) FROM TASK), (SELECT type FROM CANN_API)",
               os.path.join(out, "mtia.csv")), [["1", "60006"]], "MTIA: a device task and a runtime call")
    T.eq(rows(exe, mtia, "kernel_launch_stats", os.path.join(out, "mtia-out"))[1:], [["0", "5", "10", "60", "90"]],
         "MTIA: the launch's statistics")
    T.eq(query(exe, mtia, "SELECT name, depth FROM call_stack ORDER BY ts", os.path.join(out, "mtia-stack.csv")),
         [["runFunction - job_prep_and_submit_for_execution", "0"], ["fwd_kernel", "1"]],
         "MTIA: the task under its call")
    mtia_by_metadata(exe, out)
    host_only(exe, out)
    old_categories(exe, out)
    aten_file_order(exe, out)
    return T.finish()


def old_trace(path, meta_first):
    """A trace with Kineto's categories of 2022: kernel 1 (written first,
    unless meta_first puts a process_name event before it), kernel 2, a copy
    and a set, each launched on stream 7."""
    ev = [x("Kernel", "k_first", 0, 7, 12, 4, correlation=1, stream=7, device=0),
          x("Runtime", "cudaLaunchKernel", 1, 1, 0, 20, correlation=1),
          x("Runtime", "cudaLaunchKernel", 1, 1, 30, 5, correlation=2),
          x("Kernel", "k_second", 0, 7, 40, 5, correlation=2, stream=7, device=0),
          x("Runtime", "cudaMemcpyAsync", 1, 1, 50, 2, correlation=3),
          x("Memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 7, 60, 10, correlation=3, stream=7, device=0,
            bytes=1000),
          x("Runtime", "cudaMemsetAsync", 1, 1, 80, 2, correlation=4),
          x("Memset", "Memset (Device)", 0, 7, 90, 2, correlation=4, stream=7, device=0, bytes=64)]
    if meta_first:
        ev.insert(0, {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}})
    write(path, ev)


def old_categories(exe, out):
    first = os.path.join(out, "old", "rank0.pt.trace.json")
    old_trace(first, False)
    T.eq(query(exe, first, "SELECT (SELECT count(*) FROM TASK), (SELECT count(*) FROM MEMCPY_INFO), "
               "(SELECT group_concat(DISTINCT type) FROM CANN_API), (SELECT count(*) FROM CANN_API)",
               os.path.join(out, "old.csv")), [["4", "2", "60001", "4"]],
         "Kernel, Memcpy, Memset: device tasks; Runtime: runtime calls")
    T.eq(query(exe, first, "SELECT rankId, name, value FROM TB_PROFILE_META", os.path.join(out, "old-meta.csv")),
         [["0", "traceEvents[0].correlation", "1"], ["0", "runtimeCategory", "Runtime"]],
         "TB_PROFILE_META: the first event's correlation; the runtime calls' category, Runtime")
    got = query(exe, first, "SELECT stream, ts, queue_length FROM queue_length", os.path.join(out, "old-q.csv"))
    T.eq(got, [["7", "30", "1"], ["7", "40", "0"], ["7", "50", "1"], ["7", "60", "0"], ["7", "80", "1"],
               ["7", "90", "0"]], "queue_length: the first event's launch left out, as HTA")
    T.eq(rows(exe, first, "kernel_launch_stats", os.path.join(out, "old-launch"))[1:],
         [["0", "1", "20", "4", "0"], ["0", "2", "5", "5", "5"], ["0", "3", "2", "10", "8"],
          ["0", "4", "2", "2", "8"]], "kernel_launch_stats: every launch, the first event's too")
    T.eq([r[1] for r in rows(exe, first, "memory_bw_summary", os.path.join(out, "old-bw"))[1:]],
         ["Memcpy HtoD", "Memset"], "memory_bw_summary: the copy and the set")
    meta = os.path.join(out, "old-meta", "rank0.pt.trace.json")
    old_trace(meta, True)
    T.eq(query(exe, meta, "SELECT count(*) FROM TB_PROFILE_META WHERE name = 'traceEvents[0].correlation'",
               os.path.join(out, "meta-meta.csv")), [["0"]],
         "a metadata event first: no traceEvents[0] row")
    got = query(exe, meta, "SELECT ts, queue_length FROM queue_length", os.path.join(out, "meta-q.csv"))
    T.eq(got[:2], [["0", "1"], ["12", "0"]], "a metadata event first: the first kernel's launch counts")
    T.eq(len(got), 8, "a metadata event first: 8 changes")


def aten_file_order(exe, out):
    """Two steps, each with an ATen op whose two launch calls are written
    latest first: the whole trace (HTA's window: the first step) and a
    window of step 2 (CANN_API is then a view) list the kernels in the
    calls' file order."""
    src = os.path.join(out, "aten", "rank0.pt.trace.json")
    write(src, [x("user_annotation", "ProfilerStep#1", 1, 1, 90, 400), x("cpu_op", "aten::add", 1, 1, 100, 100),
                x("cuda_runtime", "cudaLaunchKernel", 1, 1, 150, 10, correlation=2),
                x("cuda_runtime", "cudaLaunchKernel", 1, 1, 110, 10, correlation=1),
                x("kernel", "k_a", 0, 7, 250, 5, correlation=1, stream=7, device=0),
                x("kernel", "k_b", 0, 7, 300, 5, correlation=2, stream=7, device=0),
                x("user_annotation", "ProfilerStep#2", 1, 1, 500, 100), x("cpu_op", "aten::mul", 1, 1, 510, 50),
                x("cuda_runtime", "cudaLaunchKernel", 1, 1, 530, 10, correlation=4),
                x("cuda_runtime", "cudaLaunchKernel", 1, 1, 515, 10, correlation=3),
                x("kernel", "k_c", 0, 7, 560, 5, correlation=3, stream=7, device=0),
                x("kernel", "k_d", 0, 7, 570, 5, correlation=4, stream=7, device=0)])
    got = rows(exe, src, "aten_op_kernels", os.path.join(out, "aten-out"))[1:]
    T.eq([g[:4] + [float(g[4]), float(g[5])] for g in got], [["0", "aten::add", "k_b -> k_a", "1", 50.0, 150.0]],
         "aten_op_kernels: the kernels in the order of their calls in the file, as HTA")
    d = os.path.join(out, "aten-step2")
    r = tbtest.run([exe, "report", "-q", "-dir", src, "--spec", "builtin:aten_op_kernels", "--model-id",
                    "4294967295", "--iteration-id", "2", "-o", d])
    if T.check(r.returncode == 0, "aten_op_kernels, window of step 2", r.stderr):
        with open(os.path.join(d, "aten_op_kernels_2.csv"), newline="") as f:
            got = list(csv.reader(f))[1:]
        T.eq([g[:4] + [float(g[4]), float(g[5])] for g in got], [["0", "aten::mul", "k_d -> k_c", "1", 20.0, 40.0]],
             "aten_op_kernels, window of step 2: the calls' file order too")


def host_only(exe, out):
    """A trace without GPU work (HTA's cpu_only test trace is one): HTA's
    breakdown of the host's user annotations still has its rows; the
    GPU's is empty."""
    src = os.path.join(out, "host", "rank0.pt.trace.json")
    write(src, [x("user_annotation", "step", 1, 1, 100, 10), x("cpu_op", "aten::add", 1, 1, 102, 5),
                x("user_annotation", "step", 1, 1, 200, 30), x("user_annotation", "load", 1, 1, 300, 4)])
    got = rows(exe, src, "gpu_user_annotation_breakdown", os.path.join(out, "host-gpu"))
    T.eq(got[1:], [], "host-only trace: no GPU annotation")
    r = tbtest.run([exe, "report", "-q", "-dir", src, "--spec", "builtin:gpu_user_annotation_breakdown", "--param",
                    "use_gpu_annotation=0", "-o", os.path.join(out, "host-cpu")])
    T.check(r.returncode == 0, "host-only trace: the host's annotations", r.stderr)
    with open(os.path.join(out, "host-cpu", "gpu_user_annotation_breakdown.csv"), newline="") as f:
        got = list(csv.reader(f))[1:]
    # step: 10 and 30 µs (sample std sqrt(200)); load: 4 µs
    T.eq([g[:4] + [g[5], g[6]] for g in got],
         [["load", "4", "4", "4", "4", "0"], ["step", "40", "30", "10", "20", "0"]],
         "host-only trace: the host's annotations, by name")
    T.check(len(got) == 2 and abs(float(got[1][4]) - 200 ** 0.5) < 1e-9, "host-only trace: stddev", repr(got))


def mtia_job(out, name, backend, gpu_call):
    """The two-rank MTIA job of tests/hta/mtia_trace.py with its distributedInfo backend, and with
    gpu_call a cuda_runtime call cudaLaunchKernel in each rank before the first step (no kernel)."""
    files = []
    for r in (0, 1):
        ev = mtia_trace.rank_events(r)
        if gpu_call:
            ev.append(x("cuda_runtime", "cudaLaunchKernel", 100 + r, 100 + r, mtia_trace.BASE + 7 * r + 105, 3))
        doc = {"schemaVersion": 1, "distributedInfo": {"backend": backend, "rank": r, "world_size": 2},
               "traceEvents": [{"ph": "M", "name": "process_name", "pid": 9, "tid": 0, "args": {"name": "MTIA 9"}}]
               + ev}
        f = os.path.join(out, name, "mtia_rank%d.pt.trace.json" % r)
        os.makedirs(os.path.dirname(f), exist_ok=True)
        with open(f, "w") as fh:
            json.dump(doc, fh)
        files.append(f)
    return files


def job_rows(exe, files, spec, out):
    argv = [exe, "report", "-q"]
    for f in files:
        argv += ["-dir", f]
    r = tbtest.run(argv + ["--spec", "builtin:" + spec, "-o", out])
    if not T.check(r.returncode == 0, "report %s" % spec, r.stderr):
        return []
    with open(os.path.join(out, spec + ".csv"), newline="") as f:
        return list(csv.reader(f))


def mtia_by_metadata(exe, out):
    """HTA's infer_gpu_type: a trace whose distributedInfo.backend names mtia:hccl is MTIA whatever its
    names say; a cudaLaunchKernel among the names alone would make it an NVIDIA trace (GPU window).
    The MTIA job's figures are HTA's own (tests/hta/refs.json, tests/conformance/hta_counters.py): the
    call before the first step is outside the MTIA window, so the job with it gives the same rows."""
    plain = mtia_job(out, "mtia-plain", "mtia:hccl", False)
    named = mtia_job(out, "mtia-named-gpu", "mtia:hccl", True)
    nccl = mtia_job(out, "mtia-nccl", "nccl", True)
    T.eq(query(exe, named[0], "SELECT rankId, name, json_extract(value, '$.backend') FROM TB_PROFILE_META",
               os.path.join(out, "meta.csv")), [["0", "schemaVersion", ""], ["0", "distributedInfo", "mtia:hccl"]],
         "TB_PROFILE_META: the trace's top-level members, its distributedInfo as written")
    for spec in ("kernel_launch_stats", "queue_length_summary"):
        want = job_rows(exe, plain, spec, os.path.join(out, "plain-" + spec))
        got = job_rows(exe, named, spec, os.path.join(out, "named-" + spec))
        T.check(len(want) > 2, "%s: rows of the MTIA job" % spec, repr(want))
        T.eq(got, want, "%s: backend mtia:hccl with a cudaLaunchKernel call: HTA's MTIA window" % spec)
        other = job_rows(exe, nccl, spec, os.path.join(out, "nccl-" + spec))
        T.check(other and other != want, "%s: backend nccl, the names decide: NVIDIA, the GPU window" % spec,
                repr(other))
    launches = job_rows(exe, nccl, "kernel_launch_stats", os.path.join(out, "nccl-launches"))
    T.check(len(launches) < len(job_rows(exe, plain, "kernel_launch_stats", os.path.join(out, "plain-launches"))),
            "GPU window: the last step's launches are cut", repr(launches))


if __name__ == "__main__":
    sys.exit(main())
