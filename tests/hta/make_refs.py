#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# make_refs.py - writes refs.json, the figures HolisticTraceAnalysis itself
# gives for its counters on the traces the hta_counters test reads. Not a
# test: it needs an HTA checkout and pandas, and is run by hand when the
# traces or HTA change:
#
#   tracebook-gen --kind kineto --events 4000 --seed 7 --ranks 2 --rank R -o GEN/rankR.pt.trace.json  (R = 0, 1)
#   python3 tests/hta/make_refs.py HTA_CHECKOUT SHARED_DATA_DIR GEN [HTA_COMMIT] > tests/hta/refs.json
#
# Figures: get_queue_length_summary, get_time_spent_blocked_on_full_queue,
# get_trace_duration, get_cuda_kernel_launch_stats (its rows, and how
# many of them fall in each group its plots show), get_memory_bw_summary,
# get_gpu_user_annotation_breakdown and get_aten_op_kernels_and_delay; and
# get_potential_stragglers (num_candidates 1, 2, 3) with its metric on the
# four-rank job that tests/hta/straggler_trace.py writes. The same figures
# on the MTIA job tests/hta/mtia_trace.py writes (gen_mtia_2ranks), whose
# window HTA cuts its own way. And
# get_frequent_cuda_kernel_sequences ("sequences": per rank, for each
# operator name and min_pattern_len of SEQ_CASES, its rows, or the error
# HTA stops with: its call graph refuses a slice that its rounding leaves
# with a negative duration, which the shared traces but amd_trace have).
#
# Each figure is recorded twice: as HTA gives it ("hta"), and as HTA gives it
# when its sorts are stable ("stable"). HTA orders the changes of a queue by
# time with an unstable sort, so at equal times its order (a launch before or
# after a kernel start) is arbitrary; with stable sorts a launch comes first,
# which is tracebook's rule. The same holds for the memory bandwidth series
# (with stable sorts a start comes before an end). A NaN (pandas' std of one
# value) is written as null.
import json
import os
import shutil
import subprocess
import sys
import tempfile

hta_dir, shared, gen = sys.argv[1], sys.argv[2], sys.argv[3]
SETS = [
    ("ns_resolution_trace", os.path.join(shared, "kineto", "ns_resolution_trace"), 1000),
    ("amd_trace", os.path.join(shared, "kineto", "amd_trace"), 1),
    ("tracelens_h100", os.path.join(shared, "kineto", "tracelens", "h100"), 100),
    ("tracelens_mi300", os.path.join(shared, "kineto", "tracelens", "mi300"), 1800),
    ("gen_kineto_2ranks", gen, 3),
    ("gen_mtia_2ranks", tempfile.mkdtemp(), 2),
]
# the MTIA job of tests/hta/mtia_trace.py (HTA's MTIA window)
subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "mtia_trace.py"), SETS[-1][1]],
               check=True)

# One run of HTA in a child process (a fresh pandas, patched or not).
CHILD = r'''
import json, logging, sys
sys.path.insert(0, sys.argv[1])
import pandas as pd
if sys.argv[3] == "stable":
    plain = pd.DataFrame.sort_values
    def stable(self, *a, **k):
        k.setdefault("kind", "stable")
        return plain(self, *a, **k)
    pd.DataFrame.sort_values = stable
from hta.trace_analysis import TraceAnalysis
logging.disable(logging.CRITICAL)
t = TraceAnalysis(trace_dir=sys.argv[2])
ranks = sorted(t.t.get_ranks())
out = {"summary": [], "full": [], "duration": {}}
s = t.get_queue_length_summary(ranks=ranks)
for (rank, stream), row in s.iterrows():
    q = row["queue_length"]
    out["summary"].append([int(rank), int(stream)] + [float(q[k]) for k in
                          ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]])
full = t.get_time_spent_blocked_on_full_queue(t.get_queue_length_time_series(ranks=ranks),
                                              max_queue_length=int(sys.argv[4]))
for _, row in full.iterrows():
    out["full"].append([int(row["rank"]), int(row["stream"]), float(row["duration_at_max_queue_length"]),
                        float(row["relative_duration_at_max_queue_length"])])
for r in ranks:
    out["duration"][str(r)] = int(t.t.get_trace_duration(r))
# get_cuda_kernel_launch_stats with its defaults (memory events included),
# and the three groups its plots show (cutoffs 50 and 100 us)
out["launch"], out["abnormal"] = [], {}
for r, df in sorted(t.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False).items()):
    for _, row in df.sort_values("correlation", kind="stable").iterrows():
        out["launch"].append([int(r), int(row["correlation"]), float(row["cpu_duration"]),
                              float(row["gpu_duration"]), float(row["launch_delay"])])
    out["abnormal"][str(r)] = {
        "short_kernels": int(((df["cpu_duration"] <= 50) & (df["gpu_duration"] < df["cpu_duration"])).sum()),
        "runtime_outliers": int((df["cpu_duration"] > 50).sum()),
        "launch_delay_outliers": int((df["launch_delay"] > 100).sum())}
# get_memory_bw_summary
out["membw"] = []
m = t.get_memory_bw_summary(ranks=ranks)
if m is not None:
    for (rank, name), row in m.iterrows():
        q = row["memory_bw_gbps"]
        out["membw"].append([int(rank), name] + [None if q[k] != q[k] else float(q[k]) for k in
                            ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]])
# get_gpu_user_annotation_breakdown: the GPU's, the host's, the host's with num_kernels 5
out["annotations"] = {}
for key, kw in (("gpu", {}), ("cpu", {"use_gpu_annotation": False}),
                ("cpu_top5", {"use_gpu_annotation": False, "num_kernels": 5})):
    a = t.get_gpu_user_annotation_breakdown(visualize=False, **kw)
    out["annotations"][key] = [] if a is None else [
        [r["name"], float(r["sum (us)"]), float(r["max (us)"]), float(r["min (us)"]), float(r["stddev"]),
         float(r["mean (us)"]), int(r["rank"])] for _, r in a.iterrows()]
# get_aten_op_kernels_and_delay, one rank per call (HTA's list of launches
# is shared between the ranks of one call), without its plots
import hta.analyzers.cuda_kernel_analysis as cka
cka.CudaKernelAnalysis.visualize_aten_op_kernels_and_overhead = classmethod(lambda *a, **k: None)
out["aten"] = []
for r in ranks:
    try:
        a = t.get_aten_op_kernels_and_delay(ranks=[r])[r]
    except Exception as e:  # HTA stops on a launch whose kernel it does not keep
        out["aten"].append([int(r), "error: %s" % type(e).__name__])
        continue
    for _, row in a.iterrows():
        out["aten"].append([int(r), row["aten_op_name"], row["kernel_sequence"], int(row["occurrence_count"]),
                            float(row["avg_aten_op_launch_delay"]), float(row["avg_runtime_delay"])])
print(json.dumps(out))
'''

# get_frequent_cuda_kernel_sequences, once per set (its sorts do not matter
# but for the order of kernels that start at the same time: see
# hta_counters.py)
SEQ_CASES = [("ProfilerStep", 3), ("aten::", 1), ("aten::linear", 1), ("autograd::engine", 2), ("aten::mm", 1),
             ("Backward0", 1), ("Optimizer", 3), ("nccl", 1), ("cudaLaunchKernel", 1)]
SEQ = r'''
import json, logging, sys, tempfile
sys.path.insert(0, sys.argv[1])
from hta.trace_analysis import TraceAnalysis
logging.disable(logging.CRITICAL)
t = TraceAnalysis(trace_dir=sys.argv[2])
out = []
with tempfile.TemporaryDirectory() as o:
    for r in sorted(t.t.get_ranks()):
        for op, ml in json.loads(sys.argv[3]):
            try:
                df = t.get_frequent_cuda_kernel_sequences(operator_name=op, output_dir=o, rank=r, min_pattern_len=ml,
                                                          visualize=False)
            except Exception as e:
                out.append([int(r), op, ml, "error: %s" % type(e).__name__])
                continue
            out.append([int(r), op, ml, [[x["pattern"], int(x["count"]), float(x["GPU kernel duration (us)"]),
                                          float(x["CPU op duration (us)"])] for _, x in df.iterrows()]])
print(json.dumps(out))
'''

refs = {"command": "python3 tests/hta/make_refs.py HTA_CHECKOUT SHARED_DATA_DIR GEN HTA_COMMIT (see its header)",
        "hta_commit": sys.argv[4] if len(sys.argv) > 4 else "unknown",
        "sets": {}}
for name, src, full_at in SETS:
    with tempfile.TemporaryDirectory() as d:
        # HTA reads every trace file of a folder
        for f in sorted(os.listdir(src)):
            if f.endswith((".json", ".json.gz")):
                shutil.copy(os.path.join(src, f), d)
        entry = {"max_queue_length": full_at}
        for mode in ("hta", "stable"):
            r = subprocess.run([sys.executable, "-c", CHILD, hta_dir, d, mode, str(full_at)], capture_output=True,
                               text=True, check=True)
            entry[mode] = json.loads(r.stdout.strip().splitlines()[-1])
        # the launch statistics do not sort by time: kept once, when both agree
        if entry["stable"]["launch"] == entry["hta"]["launch"]:
            del entry["stable"]["launch"], entry["stable"]["abnormal"]
        if entry["stable"]["annotations"] == entry["hta"]["annotations"]:
            del entry["stable"]["annotations"]
        if sorted(map(str, entry["stable"]["aten"])) == sorted(map(str, entry["hta"]["aten"])):
            del entry["stable"]["aten"]
        r = subprocess.run([sys.executable, "-c", SEQ, hta_dir, d, json.dumps(SEQ_CASES)], capture_output=True,
                           text=True, check=True)
        entry["sequences"] = json.loads(r.stdout.strip().splitlines()[-1])
        refs["sets"][name] = entry
# get_potential_stragglers on the job of tests/hta/straggler_trace.py
STRAG = r'''
import json, logging, sys
sys.path.insert(0, sys.argv[1])
import pandas as pd
from hta.trace_analysis import TraceAnalysis
from hta.analyzers.straggler import _compute_normalized_start_time_of_significant_comm_kernels
from hta.analyzers.straggler_analysis import StragglerAnalysis
logging.disable(logging.CRITICAL)
t = TraceAnalysis(trace_dir=sys.argv[2])
out = {"potential": {str(k): sorted(int(r) for r in t.get_potential_stragglers(num_candidates=k))
                     for k in (1, 2, 3)}}
ranks = list(t.t.get_all_traces().keys())
df = pd.concat([t.t.get_trace(r) for r in ranks], axis=0, keys=ranks, names=["rank", "idx"]).reset_index()
df = df.loc[df["iteration"].isin(StragglerAnalysis.get_profiler_steps(t.t))]
m, col = _compute_normalized_start_time_of_significant_comm_kernels(df, t.t.symbol_table)
out["metric"] = sorted([int(r["rank"]), int(r["iteration"]), float(r[col]), float(r["duration"])]
                       for _, r in m.iterrows())
print(json.dumps(out))
'''
with tempfile.TemporaryDirectory() as d:
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "straggler_trace.py"), d],
                   check=True)
    r = subprocess.run([sys.executable, "-c", STRAG, hta_dir, d], capture_output=True, text=True, check=True)
    refs["stragglers"] = json.loads(r.stdout.strip().splitlines()[-1])

# one line per set and mode
print("{")
print(' "command": %s,\n "hta_commit": %s,\n "sets": {' % (json.dumps(refs["command"]), json.dumps(refs["hta_commit"])))
names = list(refs["sets"])
for i, name in enumerate(names):
    e = refs["sets"][name]
    print('  %s: {"max_queue_length": %d,' % (json.dumps(name), e["max_queue_length"]))
    print('   "hta": %s,' % json.dumps(e["hta"], separators=(",", ":")))
    print('   "stable": %s,' % json.dumps(e["stable"], separators=(",", ":")))
    print('   "sequences": %s}%s' % (json.dumps(e["sequences"], separators=(",", ":")), "," if i + 1 < len(names) else ""))
print(" },\n \"stragglers\": %s\n}" % json.dumps(refs["stragglers"]))
