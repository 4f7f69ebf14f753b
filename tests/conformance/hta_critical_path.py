#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# hta_critical_path.py - conformance of the critical_path table and its
# reports (critical_path, critical_path_summary) against
# HolisticTraceAnalysis' own critical_path_analysis on the same traces.
#
# tests/hta/critical_path_refs.json holds HTA's paths (make_cp_refs.py says
# how it was made) for every instance of the ProfilerStep annotation on the
# shared Kineto traces (ns_resolution_trace, amd_trace, tracelens h100 and
# mi300), on a generated two-rank Kineto trace (tracebook-gen, seed 7), on
# samples/kineto_small and on the trace of tests/hta/sync_trace.py (Stream, Event and Context Sync, a
# Stream Wait Event).
# For every instance that is a host step (a user_annotation or cpu_op
# slice: tracebook's steps; HTA also counts the device's copies of the step
# slices, whose window is the device's) and where HTA finds a path:
#   - the critical_path report holds the step, with HTA's edges in HTA's
#     order: the same type, bound and duration for each (to 1e-6 relative);
#   - critical_path_summary gives HTA's length, its time per bound and the
#     share of each (HTA's summary(), rounded to 2 decimals);
# and every set compares at least one step. The device copies of a step
# are checked to be no tracebook step.
# usage: hta_critical_path.py TRACEBOOK TRACEBOOK_GEN SHARED_DATA_DIR REFS_JSON OUT_DIR
# Exit 77 (skip) when the shared data is absent. SHARED_DATA_DIR "-": only
# the sets the test has without it (the generated and the sync traces, the
# sample; the cli suite runs it so).
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

T = tbtest.Checks()
TYPES = {"o": "critical_path_operator", "d": "critical_path_dependency", "l": "critical_path_kernel_launch_delay",
         "k": "critical_path_kernel_kernel_delay", "s": "critical_path_sync_dependency"}
BOUNDS = {"": "", "c": "cpu_bound", "D": "data_loading", "g": "gpu_compute_bound", "m": "gpu_communication_bound",
          "K": "gpu_kernel_kernel_overhead", "L": "gpu_kernel_launch_overhead"}


# The sets the test makes itself (SHARED_DATA_DIR "-": these only).
OWN_SETS = ("gen_kineto_2ranks", "sync_trace", "kineto_small")


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def inputs(exe_gen, shared, out, name):
    """The -dir arguments of a reference set."""
    k = os.path.join(shared, "kineto")
    dirs = {"ns_resolution_trace": [os.path.join(k, "ns_resolution_trace")],
            "amd_trace": [os.path.join(k, "amd_trace")],
            "tracelens_h100": [os.path.join(k, "tracelens", "h100")],
            "tracelens_mi300": [os.path.join(k, "tracelens", "mi300")]}
    if name in dirs:
        return dirs[name]
    if name == "kineto_small":
        return [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples", "kineto_small")]
    if name == "sync_trace":
        d = tbtest.fresh_dir(os.path.join(out, "sync"))
        tbtest.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hta",
                                                 "sync_trace.py"), d], code=0)
        return [d]
    gen = tbtest.fresh_dir(os.path.join(out, "gen"))
    files = []
    for r in (0, 1):
        f = os.path.join(gen, "rank%d.pt.trace.json" % r)
        tbtest.run([exe_gen, "--kind", "kineto", "--events", "4000", "--seed", "7", "--ranks", "2", "--rank", str(r),
                    "-o", f], code=0)
        files.append(f)
    return files


def decode(edges):
    """HTA's edges (make_cp_refs.py's words) as [type, duration, bound]."""
    out = []
    for w in edges.split():
        i = 1
        while i < len(w) and (w[i].isdigit() or w[i] == "-"):
            i += 1
        out.append([TYPES[w[0]], float(w[1:i]), BOUNDS[w[i:]]])
    return out


def run_reports(exe, dirs, out):
    argv = [exe, "report", "-q"]
    for d in dirs:
        argv += ["-dir", d]
    r = tbtest.run(argv + ["--spec", "builtin:critical_path", "--spec", "builtin:critical_path_summary", "-o", out])
    if not T.check(r.returncode == 0, "report critical_path: exit 0", r.stderr):
        return None
    got = {}
    for spec in ("critical_path", "critical_path_summary"):
        with open(os.path.join(out, spec + ".csv"), newline="") as f:
            got[spec] = list(csv.DictReader(f))
    return got


def check_step(name, rank, step, ref, paths, summary):
    what = "%s: rank %s %s" % (name, rank, step)
    want = decode(ref["edges"])
    got = [[r["type"], float(r["duration"]), r["bound_by"]] for r in paths.get((rank, step), [])]
    same = len(got) == len(want) and all(g[0] == w[0] and g[2] == w[2] and close(g[1], w[1])
                                         for g, w in zip(got, want))
    bad = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
    T.check(same, "%s: the path's %d edges as HTA's, in HTA's order" % (what, len(want)),
            "first difference at edge %d: expected %r, got %r" % (bad, want[bad:bad + 3], got[bad:bad + 3]))
    rows = [r for r in summary if r["rank"] == rank and r["step"] == step]
    length = ref["length"]
    T.check(rows and all(close(float(r["path_length"]), length) for r in rows),
            "%s: length %g as HTA's" % (what, length), repr(rows[:1]))
    bounds = {k: v for k, v in ref["bound_by"].items() if k}
    T.eq({r["bound_by"]: float(r["duration"]) for r in rows}, {k: float(v) for k, v in bounds.items()},
         "%s: time per bound as HTA's summary" % what)
    for r in rows:
        share = round(100.0 * bounds[r["bound_by"]] / length, 2) if length else None
        T.check(share is not None and close(float(r["share_pct"]), share), "%s: %s share %s%% as HTA's" %
                (what, r["bound_by"], share), repr(r))


def check_set(exe, dirs, name, ref, out):
    got = run_reports(exe, dirs, out)
    if got is None:
        return
    paths = {}
    for r in got["critical_path"]:
        paths.setdefault((r["rank"], r["step"]), []).append(r)
    seqs = {k: [int(r["seq"]) for r in v] for k, v in paths.items()}
    T.check(all(s == list(range(len(s))) for s in seqs.values()), "%s: seq counts each path's edges from 0" % name)
    compared = 0
    for rank, steps in sorted(ref.items()):
        host = {s["name"] for s in steps if s["cat"] in ("user_annotation", "cpu_op")}
        for s in steps:
            if s["cat"] not in ("user_annotation", "cpu_op"):
                T.check(s["name"] in host or (rank, s["name"]) not in paths,
                        "%s: rank %s: the device copy of %s is no step of its own" % (name, rank, s["name"]))
                continue
            if "error" in s:
                continue
            check_step(name, rank, s["name"], s, paths, got["critical_path_summary"])
            compared += 1
    T.check(compared > 0, "%s: at least one step compared with HTA's" % name)


def main():
    exe, gen, shared, refs_path, out = sys.argv[1:6]
    own = shared == "-"
    if not own and not os.path.isdir(os.path.join(shared, "kineto")):
        print("shared data absent: %s" % shared)
        return 77
    with open(refs_path) as f:
        refs = json.load(f)
    tbtest.fresh_dir(out)
    for name, ref in refs["sets"].items():
        if own and name not in OWN_SETS:
            continue
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        check_set(exe, inputs(gen, shared, out, name), name, ref, d)
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
