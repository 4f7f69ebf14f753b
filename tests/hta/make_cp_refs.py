#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# make_cp_refs.py - writes critical_path_refs.json, the critical paths
# HolisticTraceAnalysis itself finds (critical_path_analysis) on the traces
# the hta_critical_path test reads. Not a test: it needs an HTA checkout,
# pandas and networkx, and is run by hand when the traces or HTA change:
#
#   tracebook-gen --kind kineto --events 4000 --seed 7 --ranks 2 --rank R -o GEN/rankR.pt.trace.json  (R = 0, 1)
#   python3 tests/hta/make_cp_refs.py HTA_CHECKOUT SHARED_DATA_DIR GEN [HTA_COMMIT] > tests/hta/critical_path_refs.json
#
# And the project's sample samples/kineto_small, and the one-rank trace of
# tests/hta/sync_trace.py (its steps wait on the
# device through Stream Sync, Event Sync, Context Sync and Stream Wait
# Event events).
#
# For each set, rank and instance of the annotation "ProfilerStep" (HTA
# counts every slice whose name holds it, the device's copies too, in the
# trace file's order): the slice's name and category, and either HTA's
# path (its length: the sum of its edges' durations; the sum per bound_by;
# and its edges in path order, one word each: the type's letter, the
# duration in µs, the bound's letter; see TYPES and BOUNDS) or the error
# HTA stops with.
import json
import os
import shutil
import subprocess
import sys
import tempfile

hta_dir, shared, gen = sys.argv[1], sys.argv[2], sys.argv[3]
SETS = [
    ("ns_resolution_trace", os.path.join(shared, "kineto", "ns_resolution_trace")),
    ("amd_trace", os.path.join(shared, "kineto", "amd_trace")),
    ("tracelens_h100", os.path.join(shared, "kineto", "tracelens", "h100")),
    ("tracelens_mi300", os.path.join(shared, "kineto", "tracelens", "mi300")),
    ("gen_kineto_2ranks", gen),
    ("sync_trace", None),  # tests/hta/sync_trace.py writes it
    ("kineto_small", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples", "kineto_small")),
]

CHILD = r'''
import json, logging, sys
sys.path.insert(0, sys.argv[1])
from hta.trace_analysis import TraceAnalysis
logging.disable(logging.CRITICAL)
t = TraceAnalysis(trace_dir=sys.argv[2])
st = t.t.symbol_table
TYPES = {"critical_path_operator": "o", "critical_path_dependency": "d", "critical_path_kernel_launch_delay": "l",
         "critical_path_kernel_kernel_delay": "k", "critical_path_sync_dependency": "s"}
BOUNDS = {"": "", "cpu_bound": "c", "data_loading": "D", "gpu_compute_bound": "g", "gpu_communication_bound": "m",
          "gpu_kernel_kernel_overhead": "K", "gpu_kernel_launch_overhead": "L"}
out = {}
for r in sorted(t.t.get_ranks()):
    df = t.t.get_trace(r)
    ids = [v for k, v in st.get_sym_id_map().items() if "ProfilerStep" in k]
    ann = df[df.name.isin(ids)]
    rows = []
    for inst, (name, cat) in enumerate(zip(ann.name, ann.cat)):
        row = {"name": st.sym_table[name], "cat": st.sym_table[cat]}
        try:
            res = t.critical_path_analysis(rank=r, annotation="ProfilerStep", instance_id=inst)
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
        rows.append(row)
    out[str(r)] = rows
print(json.dumps(out))
'''

refs = {"command": "python3 tests/hta/make_cp_refs.py HTA_CHECKOUT SHARED_DATA_DIR GEN HTA_COMMIT (see its header)",
        "hta_commit": sys.argv[4] if len(sys.argv) > 4 else "unknown", "sets": {}}
for name, src in SETS:
    with tempfile.TemporaryDirectory() as d:
        if src is None:
            subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "sync_trace.py"),
                            d], check=True)
        for f in sorted(os.listdir(src)) if src else []:
            if f.endswith((".json", ".json.gz")):
                shutil.copy(os.path.join(src, f), d)
        r = subprocess.run([sys.executable, "-c", CHILD, hta_dir, d], capture_output=True, text=True, check=True)
        refs["sets"][name] = json.loads(r.stdout.strip().splitlines()[-1])

print("{")
print(' "command": %s,\n "hta_commit": %s,\n "sets": {' % (json.dumps(refs["command"]), json.dumps(refs["hta_commit"])))
names = list(refs["sets"])
for i, name in enumerate(names):
    print('  %s: %s%s' % (json.dumps(name), json.dumps(refs["sets"][name], separators=(",", ":")),
                          "," if i + 1 < len(names) else ""))
print(" }\n}")
