#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# make_cp_refs.py - writes critical_path_refs.json, the critical paths
# HolisticTraceAnalysis itself finds (critical_path_analysis) on the traces
# the hta_critical_path test reads. Not a test: it needs an HTA checkout,
# pandas and networkx, and is run by hand when the traces or HTA change:
#
#   tracebook-gen --kind kineto --events 4000 --seed 7 --ranks 2 --rank R -o GEN/rankR.pt.trace.json  (R = 0, 1)
#   python3 tests/hta/make_cp_refs.py HTA_CHECKOUT SHARED_DATA_DIR GEN [HTA_COMMIT] [--reuse OLD] \
#       > tests/hta/critical_path_refs.json
#
# --reuse OLD copies HTA's paths from OLD (a critical_path_refs.json) for
# each set, and each run whose input and HTA arguments OLD holds the same:
# only what is new runs HTA (tracebook's side of a run, its params and
# step, is always taken from RUNS below).
#
# And the project's sample samples/kineto_small, the one-rank trace of
# tests/hta/cross_sync_trace.py (syncs that wait on the step before), the
# one-rank trace of tests/hta/graph_trace.py (a cudaGraphLaunch's three
# kernels of one correlation, of which HTA keeps one; with --launch-kernel
# a cudaLaunchKernel of three, where HTA finds no path), the
# one-rank trace of tests/hta/sync_trace.py (its steps wait on the
# device through Stream Sync, Event Sync, Context Sync and Stream Wait
# Event events; with --two-devices, a second device whose launch onto the
# same stream number must not be taken for the awaited one), and the
# traces of HTA's own critical path tests
# (tests/data/critical_path of HTA_COMMIT: alexnet, simple_add,
# cuda_event_sync, cuda_event_sync_multi_stream), which the shared data
# keeps under kineto/hta_critical_path/.
#
# For each set, rank and instance of the annotation "ProfilerStep" (HTA
# counts every slice whose name holds it, the device's copies too, in the
# trace file's order): the slice's name and category, and either HTA's
# path (its length: the sum of its edges' durations; the sum per bound_by;
# and its edges in path order, one word each: the type's letter, the
# duration in µs, the bound's letter; see TYPES and BOUNDS) or the error
# HTA stops with.
#
# "runs" then holds HTA's paths for other choices (RUNS): another
# annotation, one instance or a window of instances, the whole trace
# (annotation ""), data-load events, HTA's numbering of the instances of
# an annotation held by events of every category (tests/hta/instance_trace.py,
# with and without steps); each with the reports' parameters
# that ask tracebook the same (params) and, for a single window, the step
# name tracebook gives it (step).
import json
import os
import shutil
import subprocess
import sys
import tempfile

argv = sys.argv[1:]
old = {"sets": {}, "runs": {}}
if "--reuse" in argv:
    i = argv.index("--reuse")
    with open(argv[i + 1]) as f:
        old = json.load(f)
    del argv[i:i + 2]
hta_dir, shared, gen = argv[0], argv[1], argv[2]
SETS = [
    ("ns_resolution_trace", os.path.join(shared, "kineto", "ns_resolution_trace")),
    ("amd_trace", os.path.join(shared, "kineto", "amd_trace")),
    ("tracelens_h100", os.path.join(shared, "kineto", "tracelens", "h100")),
    ("tracelens_mi300", os.path.join(shared, "kineto", "tracelens", "mi300")),
    ("gen_kineto_2ranks", gen),
    ("sync_trace", []),  # tests/hta/sync_trace.py writes it (with these arguments)
    ("kineto_small", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples", "kineto_small")),
    ("hta_cuda_event_sync", os.path.join(shared, "kineto", "hta_critical_path", "cuda_event_sync")),
    ("sync_trace_two_devices", ["--two-devices"]),
    ("cross_sync_trace", ["cross_sync_trace.py"]),  # syncs across a step boundary
    ("graph_trace", ["graph_trace.py"]),  # a CUDA graph launch: one kernel of its correlation kept
    ("graph_trace_launch_kernel", ["graph_trace.py", "--launch-kernel"]),  # a counted launch of 3: no path
]
HTA_CP = os.path.join(shared, "kineto", "hta_critical_path")
# the inputs of the runs: the sets', and HTA's other test traces
INPUTS = dict(SETS, hta_alexnet=os.path.join(HTA_CP, "alexnet"), hta_simple_add=os.path.join(HTA_CP, "simple_add"),
              hta_cuda_event_sync_multi_stream=os.path.join(HTA_CP, "cuda_event_sync_multi_stream"),
              instance_trace=["instance_trace.py"], instance_trace_no_steps=["instance_trace.py", "--no-steps"])
MC = "Memcpy"  # instance_trace.py's annotation: held by a host annotation, a runtime call, kernels, a memcpy
MC_H2D, MC_GRAPH, MC_EPI = "Memcpy HtoD (Pageable -> Device)", "MemcpyGraphNode", "MemcpyEpilogueKernel"
FWD = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
# (name, input, HTA's annotation, HTA's instance_id ("each": every instance),
#  data_load_events, tracebook's params, tracebook's step for one window)
RUNS = [
    ("hta_alexnet", "hta_alexnet", FWD, "each", None, {"annotation": FWD}, None),
    ("hta_alexnet_1", "hta_alexnet", FWD, 1, None, {"annotation": FWD, "instance": "1"}, FWD),
    ("hta_simple_add", "hta_simple_add", FWD, "each", None, {"annotation": FWD}, None),
    ("hta_cuda_event_sync_multi_stream", "hta_cuda_event_sync_multi_stream", "", None, None, {"annotation": ""}, ""),
    ("hta_cuda_event_sync_whole", "hta_cuda_event_sync", "", None, None, {"annotation": ""}, ""),
    ("ns_resolution_trace_data_load", "ns_resolution_trace", "ProfilerStep", "each", ["Optimizer.zero_grad"],
     {"data_load_events": "Optimizer.zero_grad"}, None),
    ("sync_trace_whole", "sync_trace", "", None, None, {"annotation": ""}, ""),
    ("kineto_small_whole", "kineto_small", "", None, None, {"annotation": ""}, ""),
    # instances numbered as HTA: every slice so named, the device's copies
    # too (gpu_user_annotation), in the trace file's order
    ("kineto_small_window", "kineto_small", "ProfilerStep", (2, 4), None, {"instance": "2-4"},
     "ProfilerStep#9 .. ProfilerStep#10"),
    ("kineto_small_device_copy", "kineto_small", "ProfilerStep", 3, None, {"instance": "3"}, "ProfilerStep#9"),
    ("kineto_small_4", "kineto_small", "ProfilerStep", 4, None, {"instance": "4"}, "ProfilerStep#10"),
    ("kineto_small_window_1_2", "kineto_small", "ProfilerStep", (1, 2), None, {"instance": "1-2"},
     "ProfilerStep#8 .. ProfilerStep#9"),
    # aten::mm: ops on the path; Mm.ackward a regular expression only: to
    # HTA MmBackward0 (a node as an op) is bound by data_loading
    ("kineto_small_data_load", "kineto_small", "ProfilerStep", "each", ["nccl:all_reduce", "aten::mm", "Mm.ackward"],
     {"data_load_events": "nccl:all_reduce,aten::mm,Mm.ackward"}, None),
    # HTA's instance_id among events of every category (instance_trace.py):
    # under the window's cut the device events it keeps first (a graph's two
    # nodes of one correlation together), then the host events, in file order
    ("instance_memcpy_0", "instance_trace", MC, 0, None, {"annotation": MC, "instance": "0"}, MC_H2D),
    ("instance_memcpy_1", "instance_trace", MC, 1, None, {"annotation": MC, "instance": "1"}, MC_GRAPH),
    ("instance_memcpy_2", "instance_trace", MC, 2, None, {"annotation": MC, "instance": "2"}, MC_GRAPH),
    ("instance_memcpy_3", "instance_trace", MC, 3, None, {"annotation": MC, "instance": "3"}, MC_EPI),
    ("instance_memcpy_1_3", "instance_trace", MC, (1, 3), None, {"annotation": MC, "instance": "1-3"},
     MC_GRAPH + " .. " + MC_EPI),
    ("instance_memcpy_12", "instance_trace", MC, 12, None, {"annotation": MC, "instance": "12"}, "Memcpy staging"),
    ("instance_memcpy_13", "instance_trace", MC, 13, None, {"annotation": MC, "instance": "13"}, "cudaMemcpyAsync"),
    ("instance_memcpy_11_13", "instance_trace", MC, (11, 13), None, {"annotation": MC, "instance": "11-13"},
     MC_EPI + " .. cudaMemcpyAsync"),
    ("instance_memcpy_17", "instance_trace", MC, 17, None, {"annotation": MC, "instance": "17"}, "cudaMemcpyAsync"),
    ("instance_memcpy_18", "instance_trace", MC, 18, None, {"annotation": MC, "instance": "18"}, "cudaMemcpyAsync"),
    # without ProfilerStep (no cut): every event in file order
    ("instance_no_steps_2", "instance_trace_no_steps", MC, 2, None, {"annotation": MC, "instance": "2"},
     "Memcpy staging"),
    ("instance_no_steps_3", "instance_trace_no_steps", MC, 3, None, {"annotation": MC, "instance": "3"},
     "cudaMemcpyAsync"),
    ("instance_no_steps_4", "instance_trace_no_steps", MC, 4, None, {"annotation": MC, "instance": "4"}, MC_EPI),
    ("instance_no_steps_5", "instance_trace_no_steps", MC, 5, None, {"annotation": MC, "instance": "5"}, MC_GRAPH),
    ("instance_no_steps_1_3", "instance_trace_no_steps", MC, (1, 3), None, {"annotation": MC, "instance": "1-3"},
     MC_GRAPH + " .. cudaMemcpyAsync"),
    ("instance_no_steps_23", "instance_trace_no_steps", MC, 23, None, {"annotation": MC, "instance": "23"}, MC_GRAPH),
    ("instance_no_steps_24", "instance_trace_no_steps", MC, 24, None, {"annotation": MC, "instance": "24"}, MC_GRAPH),
]

CHILD = r'''
import json, logging, sys
sys.path.insert(0, sys.argv[1])
from hta.trace_analysis import TraceAnalysis
logging.disable(logging.CRITICAL)
t = TraceAnalysis(trace_dir=sys.argv[2])
annotation, instance, dl = json.loads(sys.argv[3])
instance = tuple(instance) if isinstance(instance, list) else instance
st = t.t.symbol_table
TYPES = {"critical_path_operator": "o", "critical_path_dependency": "d", "critical_path_kernel_launch_delay": "l",
         "critical_path_kernel_kernel_delay": "k", "critical_path_sync_dependency": "s"}
BOUNDS = {"": "", "cpu_bound": "c", "data_loading": "D", "gpu_compute_bound": "g", "gpu_communication_bound": "m",
          "gpu_kernel_kernel_overhead": "K", "gpu_kernel_launch_overhead": "L"}


def path(r, inst):
    row = {}
    try:
        res = t.critical_path_analysis(rank=r, annotation=annotation, instance_id=inst, data_load_events=dl)
        cp, ok = res
        if not ok:
            raise RuntimeError("no path")
        bd = cp.get_critical_path_breakdown()  # names the trace's events (s_name)
        bound = {k: float(v) for k, v in bd.groupby("bound_by").duration.sum().items()}
        edges = []
        nodes = cp.critical_path_nodes
        for u, v in zip(nodes, nodes[1:]):
            e = cp.edges[u, v]["object"]
            ev = cp.get_event_attribution_for_edge(e)
            known = ev is not None and ev in cp.trace_df.index
            b = cp.bound_by({"type": e.type.value, "s_name": cp.trace_df.s_name.loc[ev] if known else "",
                             "stream": cp.trace_df.stream.loc[ev] if known else -1})
            edges.append(TYPES[e.type.value] + str(int(e.weight)) + BOUNDS[b])
        row.update({"length": float(bd.duration.sum()), "bound_by": bound, "edges": " ".join(edges)})
    except Exception as e:
        row["error"] = type(e).__name__
    return row


out = {}
for r in sorted(t.t.get_ranks()):
    if instance != "each":
        out[str(r)] = [path(r, instance)]
        continue
    df = t.t.get_trace(r)
    ids = [v for k, v in st.get_sym_id_map().items() if annotation in k]
    ann = df[df.name.isin(ids)]
    out[str(r)] = [dict({"name": st.sym_table[name], "cat": st.sym_table[cat]}, **path(r, inst))
                   for inst, (name, cat) in enumerate(zip(ann.name, ann.cat))]
print(json.dumps(out))
'''

refs = {"command": "python3 tests/hta/make_cp_refs.py HTA_CHECKOUT SHARED_DATA_DIR GEN HTA_COMMIT (see its header)",
        "hta_commit": argv[3] if len(argv) > 3 else "unknown", "sets": {}, "runs": {}}


def analyse(src, annotation, instance, dl):
    """HTA's paths on the set in src (a list: sync_trace.py's with those
    arguments) for one choice."""
    with tempfile.TemporaryDirectory() as d:
        if isinstance(src, list):
            # [SCRIPT.py, ARGS...] of tests/hta, or sync_trace.py's ARGS
            script, args = (src[0], src[1:]) if src and src[0].endswith(".py") else ("sync_trace.py", src)
            subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), script),
                            d] + args, check=True)
        for f in sorted(os.listdir(src)) if isinstance(src, str) else []:
            if f.endswith((".json", ".json.gz")):
                shutil.copy(os.path.join(src, f), d)
        r = subprocess.run([sys.executable, "-c", CHILD, hta_dir, d, json.dumps([annotation, instance, dl])],
                           capture_output=True, text=True, check=True)
        return json.loads(r.stdout.strip().splitlines()[-1])


for name, src in SETS:
    refs["sets"][name] = old["sets"][name] if name in old["sets"] else analyse(src, "ProfilerStep", "each", None)
for name, inp, annotation, instance, dl, params, step in RUNS:
    src = INPUTS[inp]
    hta = {"annotation": annotation, "instance_id": list(instance) if isinstance(instance, tuple) else instance,
           "data_load_events": dl}
    was = old["runs"].get(name)
    same = was is not None and was["input"] == inp and was["hta"] == hta
    run = {"input": inp, "params": params, "hta": hta,
           "ranks": was["ranks"] if same else analyse(src, annotation, instance, dl)}
    if step is not None:
        run["step"] = step
    refs["runs"][name] = run

print("{")
print(' "command": %s,\n "hta_commit": %s,' % (json.dumps(refs["command"]), json.dumps(refs["hta_commit"])))
for key in ("sets", "runs"):
    print(' "%s": {' % key)
    names = list(refs[key])
    for i, name in enumerate(names):
        print('  %s: %s%s' % (json.dumps(name), json.dumps(refs[key][name], separators=(",", ":")),
                              "," if i + 1 < len(names) else ""))
    print(" }%s" % ("," if key == "sets" else ""))
print("}")
