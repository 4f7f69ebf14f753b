#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# make_refs.py - writes refs.json, the figures HolisticTraceAnalysis itself
# gives for its counters on the traces the hta_counters test reads. Not a
# test: it needs an HTA checkout and pandas, and is run by hand when the
# traces or HTA change:
#
#   tracebook-gen --kind kineto --events 4000 --seed 7 --ranks 2 --rank R -o GEN/rankR.pt.trace.json  (R = 0, 1)
#   python3 tests/hta/make_refs.py HTA_CHECKOUT SHARED_DATA_DIR GEN [HTA_COMMIT] [--reuse OLD] [--only SET,...] \
#       [--sequences SET,...] [--seq-timeout S] > tests/hta/refs.json
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
# The sets hta_FOLDER are the folders of HTA's own tests/data (HTA_SETS;
# "hta_path" names the folder); "unreadable" lists those HTA cannot read
# (its last words) or the checkout lacks. Where an analysis of HTA stops on
# a set (a trace without GPU kernels), its figure is "error: TYPE"; where
# its frequent kernel sequences take longer than SEQ_TIMEOUT, "sequences"
# says so. --reuse OLD copies the sets OLD holds as they are, --only runs
# the named sets only: parts can be run in parallel and joined by a last
# run that reuses their union. --sequences SET,... runs HTA's frequent
# kernel sequences again on sets OLD holds (their other figures copied),
# with --seq-timeout S in place of SEQ_TIMEOUT: the way the sets whose
# search is long are run, one at a time; the seconds each took go to stderr.
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
import time

# --reuse OLD_REFS: the sets OLD_REFS holds are copied from it as they are
# (only the sets it lacks are run)
argv = sys.argv[1:]
reuse, reuse_unreadable = {}, {}
if "--reuse" in argv:
    i = argv.index("--reuse")
    with open(argv[i + 1]) as f:
        old = json.load(f)
    reuse, reuse_unreadable = old["sets"], old.get("unreadable", {})
    del argv[i:i + 2]
# --only NAME,...: run these sets only (the others reused or left out)
only = None
if "--only" in argv:
    i = argv.index("--only")
    only = set(argv[i + 1].split(","))
    del argv[i:i + 2]
# --sequences NAME,...: the frequent kernel sequences of these sets run
# again (the rest of their figures reused); --seq-timeout S: their limit
redo = set()
if "--sequences" in argv:
    i = argv.index("--sequences")
    redo = set(argv[i + 1].split(","))
    del argv[i:i + 2]
seq_timeout = None
if "--seq-timeout" in argv:
    i = argv.index("--seq-timeout")
    seq_timeout = int(argv[i + 1])
    del argv[i:i + 2]
hta_dir, shared, gen = argv[0], argv[1], argv[2]
SETS = [
    ("ns_resolution_trace", os.path.join(shared, "kineto", "ns_resolution_trace"), 1000),
    ("amd_trace", os.path.join(shared, "kineto", "amd_trace"), 1),
    ("tracelens_h100", os.path.join(shared, "kineto", "tracelens", "h100"), 100),
    ("tracelens_mi300", os.path.join(shared, "kineto", "tracelens", "mi300"), 1800),
    ("gen_kineto_2ranks", gen, 3),
    ("gen_mtia_2ranks", tempfile.mkdtemp(), 2),
]
# HTA's own test traces (HTA_CHECKOUT/tests/data), each folder HTA's
# TraceAnalysis reads (its figures there, "auto": the full queue is the
# largest queue length HTA finds). Not here: the folders the sets above
# already are (ns_resolution_trace, amd_trace), the copies of another
# folder's files (critical_path/end_to_end/simple_add/input), and what is no
# Kineto trace (memory_analysis: a memory timeline).
HTA_DATA = os.path.join(hta_dir, "tests", "data")
HTA_SETS = ["call_stack", "cpu_only", "critical_path/alexnet", "critical_path/cuda_event_sync",
            "critical_path/cuda_event_sync_multi_stream", "critical_path/simple_add",
            "critical_path/end_to_end/simple_add/output", "cupti_profiler", "df_index_resolver",
            "distributed_info_unavailable", "execution_trace", "h100", "inference_single_rank", "mixed_files",
            "mtia_inference_trace", "mtia_trace_single_rank", "nccl_parser_config",
            "negative_queue_length_values_check", "rank_non_gpu", "rank_unavailable", "timeline_analysis",
            "trace_compare/base", "trace_compare/test", "trace_diff/control", "trace_diff/test", "trace_file_list",
            "trace_filter", "triton_example", "vision_transformer"]
SETS += [("hta_" + rel.replace("/", "_"), os.path.join(HTA_DATA, rel), "auto") for rel in HTA_SETS]
# the MTIA job of tests/hta/mtia_trace.py (HTA's MTIA window)
subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "mtia_trace.py"), SETS[5][1]],
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
s = t.get_queue_length_summary(ranks=ranks)  # None: no GPU stream
for (rank, stream), row in (s.iterrows() if s is not None else []):
    q = row["queue_length"]
    out["summary"].append([int(rank), int(stream)] + [float(q[k]) for k in
                          ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]])
full_at = int(sys.argv[4]) if sys.argv[4] != "auto" else max([1] + [int(r[9]) for r in out["summary"]])
if sys.argv[4] == "auto":
    out["max_queue_length"] = full_at
full = t.get_time_spent_blocked_on_full_queue(t.get_queue_length_time_series(ranks=ranks),
                                              max_queue_length=full_at) if s is not None else None
for _, row in (full.iterrows() if full is not None else []):
    out["full"].append([int(row["rank"]), int(row["stream"]), float(row["duration_at_max_queue_length"]),
                        float(row["relative_duration_at_max_queue_length"])])
for r in ranks:
    out["duration"][str(r)] = int(t.t.get_trace_duration(r))
# get_cuda_kernel_launch_stats with its defaults (memory events included),
# and the three groups its plots show (cutoffs 50 and 100 us)
out["launch"], out["abnormal"] = [], {}
try:
    launches = sorted(t.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False).items())
except Exception as e:  # HTA stops (a trace without GPU kernels)
    out["launch"], launches = "error: %s" % type(e).__name__, []
for r, df in launches:
    for _, row in df.sort_values("correlation", kind="stable").iterrows():
        out["launch"].append([int(r), int(row["correlation"]), float(row["cpu_duration"]),
                              float(row["gpu_duration"]), float(row["launch_delay"])])
    out["abnormal"][str(r)] = {
        "short_kernels": int(((df["cpu_duration"] <= 50) & (df["gpu_duration"] < df["cpu_duration"])).sum()),
        "runtime_outliers": int((df["cpu_duration"] > 50).sum()),
        "launch_delay_outliers": int((df["launch_delay"] > 100).sum())}
# get_memory_bw_summary
out["membw"] = []
try:
    m = t.get_memory_bw_summary(ranks=ranks)
except Exception as e:
    out["membw"], m = "error: %s" % type(e).__name__, None
if m is not None:
    for (rank, name), row in m.iterrows():
        q = row["memory_bw_gbps"]
        out["membw"].append([int(rank), name] + [None if q[k] != q[k] else float(q[k]) for k in
                            ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]])
# get_gpu_user_annotation_breakdown: the GPU's, the host's, the host's with num_kernels 5
out["annotations"] = {}
for key, kw in (("gpu", {}), ("cpu", {"use_gpu_annotation": False}),
                ("cpu_top5", {"use_gpu_annotation": False, "num_kernels": 5})):
    try:
        a = t.get_gpu_user_annotation_breakdown(visualize=False, **kw)
    except Exception as e:
        out["annotations"][key] = "error: %s" % type(e).__name__
        continue
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
SEQ_TIMEOUT = 300  # s, HTA's search on one set (its larger traces take far longer)
if seq_timeout is not None:
    SEQ_TIMEOUT = seq_timeout
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
        "hta_commit": argv[3] if len(argv) > 3 else "unknown",
        "sets": {}, "unreadable": {}}


def copy_traces(src, d):
    """HTA reads every trace file of a folder: the set's own into d"""
    for f in sorted(os.listdir(src)):
        if f.endswith((".json", ".json.gz")):
            shutil.copy(os.path.join(src, f), d)


def sequences(name, d):
    """HTA's frequent kernel sequences on the traces of d, or why not"""
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, "-c", SEQ, hta_dir, d, json.dumps(SEQ_CASES)], capture_output=True,
                           text=True, check=True, timeout=SEQ_TIMEOUT)
        print("%s: sequences in %.0f s" % (name, time.monotonic() - t0), file=sys.stderr)
        return json.loads(r.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:  # not compared (the test says so)
        print("%s: sequences not done in %d s" % (name, SEQ_TIMEOUT), file=sys.stderr)
        return "HTA did not finish in %d s" % SEQ_TIMEOUT


for name, src, full_at in SETS:
    if name in reuse:
        refs["sets"][name] = reuse[name]
        if name in redo:
            with tempfile.TemporaryDirectory() as d:
                copy_traces(src, d)
                refs["sets"][name] = dict(reuse[name], sequences=sequences(name, d))
        continue
    if only is not None and name not in only:  # what OLD said of it, if anything
        if name in reuse_unreadable:
            refs["unreadable"][name] = reuse_unreadable[name]
        continue
    if not os.path.isdir(src) or not any(f.endswith((".json", ".json.gz")) for f in os.listdir(src)):
        refs["unreadable"][name] = "absent from the checkout"
        continue
    with tempfile.TemporaryDirectory() as d:
        copy_traces(src, d)
        entry = {"max_queue_length": full_at}
        if name.startswith("hta_"):  # where the test finds it in a checkout's tests/data
            entry["hta_path"] = os.path.relpath(src, HTA_DATA)
        for mode in ("hta", "stable"):
            r = subprocess.run([sys.executable, "-c", CHILD, hta_dir, d, mode, str(full_at)], capture_output=True,
                               text=True)
            if r.returncode != 0:  # HTA cannot read the set: its last words
                refs["unreadable"][name] = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
                break
            entry[mode] = json.loads(r.stdout.strip().splitlines()[-1])
        if name in refs["unreadable"]:
            continue
        if full_at == "auto":
            entry["max_queue_length"] = entry["hta"].pop("max_queue_length")
            entry["stable"].pop("max_queue_length")
        # the launch statistics do not sort by time: kept once, when both agree
        if entry["stable"]["launch"] == entry["hta"]["launch"]:
            del entry["stable"]["launch"], entry["stable"]["abnormal"]
        if entry["stable"]["annotations"] == entry["hta"]["annotations"]:
            del entry["stable"]["annotations"]
        if sorted(map(str, entry["stable"]["aten"])) == sorted(map(str, entry["hta"]["aten"])):
            del entry["stable"]["aten"]
        entry["sequences"] = sequences(name, d)
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
    path = ' "hta_path": %s,' % json.dumps(e["hta_path"]) if "hta_path" in e else ""
    print('  %s: {"max_queue_length": %d,%s' % (json.dumps(name), e["max_queue_length"], path))
    print('   "hta": %s,' % json.dumps(e["hta"], separators=(",", ":")))
    print('   "stable": %s,' % json.dumps(e["stable"], separators=(",", ":")))
    print('   "sequences": %s}%s' % (json.dumps(e["sequences"], separators=(",", ":")), "," if i + 1 < len(names) else ""))
print(" },\n \"stragglers\": %s,\n \"unreadable\": %s\n}" %
      (json.dumps(refs["stragglers"]), json.dumps(refs["unreadable"], indent=1)))
