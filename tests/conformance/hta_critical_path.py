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
# samples/kineto_small, on the trace of tests/hta/sync_trace.py (Stream, Event and Context Sync, a
# Stream Wait Event; and its variant with a second device, whose launch onto
# the awaited stream's number is not the one awaited), on the trace of
# tests/hta/cross_sync_trace.py (syncs awaiting a kernel of the step
# before: each step's graph starts afresh), on the trace of
# tests/hta/graph_trace.py (a CUDA graph launch's kernels: one kept per
# launching call, the last in the file; with --launch-kernel, a counted
# launch of several, where HTA finds no path: a host step HTA finds none
# for, alone of its name, must have none either) and on HTA's own
# cuda_event_sync test trace.
# For every instance that is a host step (a user_annotation or cpu_op
# slice: tracebook's steps; HTA also counts the device's copies of the step
# slices, whose window is the device's) and where HTA finds a path:
#   - the critical_path report holds the step, with HTA's edges in HTA's
#     order: the same type, bound and duration for each (to 1e-6 relative);
#   - critical_path_summary gives HTA's length, its time per bound and the
#     share of each (HTA's summary(), rounded to 2 decimals);
# and every set compares at least one step. The device copies of a step
# are checked to be no tracebook step.
# The refs' "runs" do the same for other choices, asked of both reports
# through their parameters (annotation, instance, data_load_events): HTA's
# annotation of its alexnet and simple_add test traces, one instance, a
# window of instances (numbered as HTA's instance_id: the device's copies
# of the steps too, in the trace file's order; on samples/kineto_small
# instance 3 is a copy), the whole trace (its cuda_event_sync_multi_stream
# trace), data-load events (HTA's data_loading bound), HTA's numbering
# among events of every category (tests/hta/instance_trace.py: host
# annotations, runtime calls, kernels and memcpys holding the annotation,
# with steps and without; a window past the last instance, where HTA stops
# with an error, gives no path).
# HTA's test traces are read from the shared data under
# kineto/hta_critical_path/NAME, else from HTA_TEST_DATA/critical_path/NAME
# when the environment names a checkout's tests/data folder of HTA; a set or
# run whose input is in neither is skipped (said on stdout). tbtest.HtaRefs
# reads the refs and finds the inputs, the sync traces and the sample
# being this script's own.
# usage: hta_critical_path.py TRACEBOOK TRACEBOOK_GEN SHARED_DATA_DIR REFS_JSON OUT_DIR
# Exit 77 (skip) when the shared data is absent. SHARED_DATA_DIR "-": only
# the sets the test has without it (the generated and the sync traces, the
# sample; the cli suite runs it so).
import csv
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
OWN_SETS = ("gen_kineto_2ranks", "sync_trace", "sync_trace_two_devices", "kineto_small", "cross_sync_trace",
            "graph_trace", "graph_trace_launch_kernel", "instance_trace", "instance_trace_no_steps")
# The traces of tests/hta's scripts: (script, arguments) by input name.
SCRIPTS = {"sync_trace": ("sync_trace.py", []), "sync_trace_two_devices": ("sync_trace.py", ["--two-devices"]),
           "cross_sync_trace": ("cross_sync_trace.py", []), "graph_trace": ("graph_trace.py", []),
           "graph_trace_launch_kernel": ("graph_trace.py", ["--launch-kernel"]),
           "instance_trace": ("instance_trace.py", []),
           "instance_trace_no_steps": ("instance_trace.py", ["--no-steps"])}


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def own_inputs(out, name):
    """The -dir arguments of the inputs this script makes (None: another)."""
    if name == "kineto_small":
        return [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples", "kineto_small")]
    if name in SCRIPTS:
        script, args = SCRIPTS[name]
        d = tbtest.fresh_dir(os.path.join(out, "in_" + name))
        tbtest.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hta", script), d]
                   + args, code=0)
        return [d]
    return None


def decode(edges):
    """HTA's edges (make_cp_refs.py's words) as [type, duration, bound]."""
    out = []
    for w in edges.split():
        i = 1
        while i < len(w) and (w[i].isdigit() or w[i] == "-"):
            i += 1
        out.append([TYPES[w[0]], float(w[1:i]), BOUNDS[w[i:]]])
    return out


def run_reports(exe, dirs, out, params=None):
    argv = [exe, "report", "-q"]
    for d in dirs:
        argv += ["-dir", d]
    for k, v in sorted((params or {}).items()):
        argv += ["--param", "%s=%s" % (k, v)]
    r = tbtest.run(argv + ["--spec", "builtin:critical_path", "--spec", "builtin:critical_path_summary", "-o", out])
    if not T.check(r.returncode == 0, "report critical_path: exit 0", r.stderr):
        return None
    got = {}
    for spec in ("critical_path", "critical_path_summary"):
        with open(os.path.join(out, spec + ".csv"), newline="") as f:
            got[spec] = list(csv.DictReader(f))
    return got


def check_step(name, rank, step, ref, path, rows):
    """HTA's path ref against one tracebook path (its critical_path rows)
    and its critical_path_summary rows."""
    what = "%s: rank %s %s" % (name, rank, step)
    want = decode(ref["edges"])
    got = [[r["type"], float(r["duration"]), r["bound_by"]] for r in path]
    same = len(got) == len(want) and all(g[0] == w[0] and g[2] == w[2] and close(g[1], w[1])
                                         for g, w in zip(got, want))
    bad = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
    T.check(same, "%s: the path's %d edges as HTA's, in HTA's order" % (what, len(want)),
            "first difference at edge %d: expected %r, got %r" % (bad, want[bad:bad + 3], got[bad:bad + 3]))
    length = ref["length"]
    T.check(rows and all(close(float(r["path_length"]), length) for r in rows),
            "%s: length %g as HTA's" % (what, length), repr(rows[:1]))
    bounds = {k: v for k, v in ref["bound_by"].items() if k}
    T.eq({r["bound_by"]: float(r["duration"]) for r in rows}, {k: float(v) for k, v in bounds.items()},
         "%s: time per bound as HTA's summary" % what)
    for r in rows:
        share = round(100.0 * bounds[r["bound_by"]] / length, 2) if length and r["bound_by"] in bounds else None
        T.check(share is not None and close(float(r["share_pct"]), share), "%s: %s share %s%% as HTA's" %
                (what, r["bound_by"], share), repr(r))


def group(got):
    """The reports' rows per (rank, step), one list per path in start order
    (two instances may share a name): critical_path's split where seq
    starts again, the summary's where bound_by (in order within a path)
    does."""
    paths, summary = {}, {}
    for r in got["critical_path"]:
        p = paths.setdefault((r["rank"], r["step"]), [])
        if r["seq"] == "0" or not p:
            p.append([])
        p[-1].append(r)
    for r in got["critical_path_summary"]:
        p = summary.setdefault((r["rank"], r["step"]), [])
        if not p or r["bound_by"] <= p[-1][-1]["bound_by"]:
            p.append([])
        p[-1].append(r)
    return paths, summary


def nth(d, key, k):
    v = d.get(key, [])
    return v[k] if k < len(v) else []


def check_set(exe, dirs, name, ref, out, params=None, step=None):
    """HTA's paths ref (per rank: a row per instance, or with step one row,
    the path of that window) against the reports run with params."""
    got = run_reports(exe, dirs, out, params)
    if got is None:
        return
    paths, summary = group(got)
    T.check(all([int(r["seq"]) for r in p] == list(range(len(p))) for v in paths.values() for p in v),
            "%s: seq counts each path's edges from 0" % name)
    compared = refused = 0
    for rank, steps in sorted(ref.items()):
        if step is not None:
            if "error" not in steps[0]:
                check_step(name, rank, step, steps[0], nth(paths, (rank, step), 0), nth(summary, (rank, step), 0))
                compared += 1
            T.eq(sorted((s, len(v)) for (r, s), v in paths.items() if r == rank),
                 [(step, 1)] if "error" not in steps[0] else [], "%s: rank %s: the one window's path alone" % (name, rank))
            continue
        host = {s["name"] for s in steps if s["cat"] in ("user_annotation", "cpu_op")}
        seen = {}
        for s in steps:
            if s["cat"] not in ("user_annotation", "cpu_op"):
                T.check(s["name"] in host or (rank, s["name"]) not in paths,
                        "%s: rank %s: the device copy of %s is no step of its own" % (name, rank, s["name"]))
                continue
            if "error" in s:
                if sum(1 for o in steps if o["name"] == s["name"]) == 1:
                    T.check((rank, s["name"]) not in paths, "%s: rank %s %s: no path, as HTA finds none (%s)" %
                            (name, rank, s["name"], s["error"]))
                    refused += 1
                continue
            k = seen.get(s["name"], 0)
            seen[s["name"]] = k + 1
            key = (rank, s["name"])
            check_step(name, rank, s["name"] + ("" if k == 0 else " (%d)" % k), s, nth(paths, key, k),
                       nth(summary, key, k))
            compared += 1
    # a window past the last instance: HTA stops with an error, tracebook gives no path (checked above)
    past = step is not None and all("error" in steps[0] for steps in ref.values())
    T.check(compared > 0 or refused > 0 or past, "%s: at least one step compared with HTA's" % name)


def main():
    exe, gen, shared, refs_path, out = sys.argv[1:6]
    refs = tbtest.HtaRefs(gen, shared, refs_path, out, own=OWN_SETS, make=lambda name: own_inputs(out, name))
    for name, ref, dirs, d in refs.each("sets"):
        check_set(exe, dirs, name, ref, d)
    for name, run, dirs, d in refs.each("runs", input_key="input", prefix="run_"):
        check_set(exe, dirs, name, run["ranks"], d, run["params"], run.get("step"))
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
