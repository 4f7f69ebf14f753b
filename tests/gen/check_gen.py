#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# check_gen.py - checks tools/gen/tracebook-gen, the synthetic trace generator.
#
# For both kinds (ascend, kineto), a few seeds and N in {50, 1000} it runs the
# generator and checks that the output is valid JSON with exactly N trace
# events, that the same arguments give byte-identical output, that another
# seed gives other output, that the metadata sits at the end (ascend) and
# baseTimeNanoseconds after traceEvents (kineto), and that every flow start
# has its finish. For --kind torch_npu_dir it checks that the same arguments
# give the same tree, that each rank's trace_view.json is the ascend trace of
# seed S+r, and that each kernel_details.csv has one row per Ascend Hardware
# task and hcom_* Communication op of that trace (same names, starts and
# durations, in the right step) and parses with every row as wide as its
# header, and that step_trace_time.csv agrees with the Overlap Analysis lanes.
# Then it regenerates the checked-in samples and compares them byte for
# byte, so a generator change that alters them is caught and the samples are
# regenerated on purpose (commands in samples/README.md).
# --mix device (ascend): the same checks, and that it is the device-heavy
# trace it says: no Python op but the ProfilerStep markers, one Node@launch
# or Runtime@MemcpyAsync call per compute-stream task (same connection_id),
# and every task with its HostToDevice flow; --mix with kineto is refused.
# --parallel TP,PP (torch_npu_dir): the same tree twice; each rank's
# profiler_metadata.json names its tp, dp and pp groups as Megatron lays the
# ranks out, one id per group across its ranks; every hcom op carries the
# group_name of its group (all-gather tp, all-reduce dp, send and receive
# pp: the id's double hash, its last three digits in the op name); the
# ranks' steps are numbered alike; bad --parallel values are refused.
#
# usage: check_gen.py GENERATOR [TMPDIR] [SAMPLES_DIR]
#   TMPDIR       where outputs go (default: a new temporary directory, removed)
#   SAMPLES_DIR  default: ../../samples next to this script
# Exit 0 when all checks pass, 1 with a message per failure otherwise.
# Python 3 standard library only.

import collections
import csv
import decimal
import json
import os
import shutil
import subprocess
import sys
import tempfile

KINDS = ("ascend", "kineto")
SEEDS = (1, 2, 12345)
SIZES = (50, 1000)

# The checked-in samples and the arguments that regenerate them
# (keep in step with samples/README.md).
SAMPLES = (
    ("ascend_small/trace_view.json",
     ["--kind", "ascend", "--events", "2500", "--seed", "1", "--layers", "1"]),
    ("kineto_small/trace.json",
     ["--kind", "kineto", "--events", "2500", "--seed", "1", "--layers", "1"]),
)
# Checked-in directories written by --kind torch_npu_dir: (dir, ranks, events, seed, layers).
SAMPLE_DIRS = (
    ("torch_npu_2rank", 2, 1500, 1, 1),
)

KD_HEADER = ["Step Id", "Model ID", "Task ID", "Stream ID", "Name", "Type", "Accelerator Core",
             "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Dim", "Mix Block Dim",
             "HF32 Eligible", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
             "Output Data Types", "Output Formats", "Context ID"]
ST_HEADER = ["Device_id", "Step", "Computing", "Communication(Not Overlapped)", "Overlapped",
             "Communication", "Free", "Stage", "Bubble",
             "Communication(Not Overlapped and Exclude Receive)", "Preparing"]
LANES = ("Computing", "Communication", "Communication(Not Overlapped)", "Free")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(gen, args, out):
    """Runs the generator; returns True when it succeeded quietly."""
    cmd = [gen] + args + ["-o", out]
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        fail("%s: %s" % (" ".join(cmd), e))
        return False
    if r.returncode != 0:
        fail("%s: exit %d: %s" % (" ".join(cmd), r.returncode,
                                  r.stderr.decode(errors="replace").strip()))
        return False
    if r.stdout or r.stderr:
        fail("%s: printed output on success" % " ".join(cmd))
    return True


def read(path):
    with open(path, "rb") as f:
        return f.read()


def events_of(kind, path, doc):
    """Returns the event list, checking the top-level shape of each kind."""
    if kind == "ascend":
        if not isinstance(doc, list):
            fail("%s: top level is not an array" % path)
            return []
        return doc
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("%s: no traceEvents array" % path)
        return []
    keys = list(doc)
    if "baseTimeNanoseconds" not in keys or \
            keys.index("baseTimeNanoseconds") < keys.index("traceEvents"):
        fail("%s: baseTimeNanoseconds missing or before traceEvents" % path)
    if "distributedInfo" not in doc or "deviceProperties" not in doc:
        fail("%s: distributedInfo or deviceProperties missing" % path)
    return doc["traceEvents"]


def check_events(kind, path, events, n):
    if len(events) != n:
        fail("%s: %d events, expected %d" % (path, len(events), n))
        return
    if not all(isinstance(e, dict) and "ph" in e for e in events):
        fail("%s: an event is not an object with ph" % path)
        return
    phs = [e["ph"] for e in events]
    if kind == "ascend" and "M" in phs:
        first = phs.index("M")
        if any(p != "M" for p in phs[first:]):
            fail("%s: metadata events are not all at the end" % path)
        if not all(isinstance(e["ts"], str) and len(e["ts"].split(".")[-1]) == 3
                   for e in events if "ts" in e):
            fail("%s: a ts is not a string with 3 decimals" % path)
    flows = collections.defaultdict(set)
    for e in events:
        if e["ph"] in ("s", "f"):
            flows[(e.get("cat"), str(e.get("id")))].add(e["ph"])
    # a trace cut at N events may end a step early, but never splits a flow
    broken = [k for k, v in flows.items() if v != {"s", "f"}]
    if broken:
        fail("%s: %d unpaired flows, e.g. %r" % (path, len(broken), broken[0]))


def check_kinds(gen, tmp):
    for kind in KINDS:
        for n in SIZES:
            outputs = {}
            for seed in SEEDS:
                args = ["--kind", kind, "--events", str(n), "--seed", str(seed)]
                a = os.path.join(tmp, "%s-%d-%d.json" % (kind, n, seed))
                b = os.path.join(tmp, "%s-%d-%d.again.json" % (kind, n, seed))
                if not (run(gen, args, a) and run(gen, args, b)):
                    continue
                data = read(a)
                if data != read(b):
                    fail("%s: same arguments gave different bytes" % a)
                try:
                    doc = json.loads(data)
                except ValueError as e:
                    fail("%s: not valid JSON: %s" % (a, e))
                    continue
                check_events(kind, a, events_of(kind, a, doc), n)
                outputs[seed] = data
            if len(set(outputs.values())) != len(outputs):
                fail("%s N=%d: different seeds gave identical output" % (kind, n))


def dir_args(ranks, events, seed, layers):
    return ["--kind", "torch_npu_dir", "--ranks", str(ranks), "--events", str(events),
            "--seed", str(seed), "--layers", str(layers)]


def tree(root):
    """Relative paths of the files under root, sorted."""
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.relpath(os.path.join(d, f), root) for f in files]
    return sorted(out)


def same_tree(a, b, what):
    """Fails unless directories a and b hold the same files with the same bytes."""
    ta, tb = tree(a), tree(b)
    if ta != tb:
        fail("%s: files differ: only in %s %s, only in %s %s"
             % (what, a, sorted(set(ta) - set(tb)), b, sorted(set(tb) - set(ta))))
        return False
    diff = [f for f in ta if read(os.path.join(a, f)) != read(os.path.join(b, f))]
    if diff:
        fail("%s: %d file(s) differ, e.g. %s" % (what, len(diff), diff[0]))
        return False
    return True


def dec(x):
    """A µs value as an exact Decimal (a trailing TAB, as torch_npu writes, stripped)."""
    return decimal.Decimal(str(x).rstrip("\t"))


def check_kernel_details(path, events, names):
    """kernel_details.csv against its trace: one row per Ascend Hardware task and hcom_* op."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != KD_HEADER:
        fail("%s: header is not the 20-column kernel_details header" % path)
        return
    header, rows = rows[0], rows[1:]
    wrong = [i + 2 for i, r in enumerate(rows) if len(r) != len(header)]
    if wrong:
        fail("%s: %d row(s) not %d fields wide, first at line %d"
             % (path, len(wrong), len(header), wrong[0]))
        return
    hw = [e for e in events if e["ph"] == "X" and names.get(e["pid"]) == "Ascend Hardware"]
    hcom = [e for e in events if e["ph"] == "X" and names.get(e["pid"]) == "Communication"
            and e["name"].startswith("hcom_")]
    if len(rows) != len(hw) + len(hcom):
        fail("%s: %d rows, but its trace has %d Ascend Hardware + %d hcom_* X events"
             % (path, len(rows), len(hw), len(hcom)))
    col = {h: i for i, h in enumerate(header)}
    starts = [r[col["Start Time(us)"]] for r in rows]
    if not all(s.endswith("\t") and len(s[:-1].split(".")[-1]) == 3 for s in starts):
        fail("%s: a Start Time(us) is not 3 decimals followed by a TAB" % path)
        return
    want = collections.Counter((e["name"], dec(e["ts"]), dec(e["dur"])) for e in hw + hcom)
    got = collections.Counter((r[col["Name"]], dec(r[col["Start Time(us)"]]),
                               dec(r[col["Duration(us)"]])) for r in rows)
    if want != got:
        fail("%s: names, starts and durations differ from the trace's, e.g. %r"
             % (path, sorted((want - got) + (got - want))[:1]))
    hccl = [r for r in rows if r[col["Accelerator Core"]] == "HCCL"]
    if len(hccl) != len(hcom) or any(r[col["Task ID"]] != "N/A" or r[col["Stream ID"]] != "N/A"
                                     for r in hccl):
        fail("%s: HCCL rows do not match the hcom_* ops or have a Task/Stream ID" % path)
    if [dec(s) for s in starts] != sorted(dec(s) for s in starts):
        fail("%s: rows are not sorted by start" % path)
    steps = step_ranges(events)
    for r in rows:
        rng = steps.get(r[col["Step Id"]])
        if rng is None or not rng[0] <= dec(r[col["Start Time(us)"]]) <= rng[1]:
            fail("%s: %s at %s is not inside ProfilerStep#%s"
                 % (path, r[col["Name"]], r[col["Start Time(us)"]].strip(), r[col["Step Id"]]))
            break


def step_ranges(events):
    """{"N": (start, end)} of the ProfilerStep#N slices."""
    return {e["name"].split("#", 1)[1]: (dec(e["ts"]), dec(e["ts"]) + dec(e["dur"]))
            for e in events if e["ph"] == "X" and e["name"].startswith("ProfilerStep#")}


def check_step_trace(path, events, names, device):
    """step_trace_time.csv: consistent values that agree with the Overlap Analysis lanes."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != ST_HEADER:
        fail("%s: header is not the 11-column step_trace_time header" % path)
        return
    rows = rows[1:]
    if any(len(r) != len(ST_HEADER) for r in rows):
        fail("%s: a row is not %d fields wide" % (path, len(ST_HEADER)))
        return
    steps = step_ranges(events)
    lanes = [e for e in events if e["ph"] == "X" and names.get(e["pid"]) == "Overlap Analysis"]
    if len(set(r[1] for r in rows)) != len(rows):
        fail("%s: a step has more than one row" % path)
    # only the trace's last step can have been cut short: every other one needs its row
    order = sorted(steps, key=int)
    missing = sorted(set(order[:-1]) - set(r[1] for r in rows), key=int)
    if missing:
        fail("%s: no row for complete step(s) %s" % (path, missing))
    for r in rows:
        v = dict(zip(ST_HEADER, r))
        if v["Device_id"] != str(device) or v["Step"] not in steps:
            fail("%s: row %r: wrong Device_id or a step not in the trace" % (path, r[:2]))
            continue
        num = {k: dec(x) for k, x in v.items() if k not in ("Device_id", "Step")}
        if min(num.values()) < 0:
            fail("%s: step %s has a negative value" % (path, v["Step"]))
        if num["Overlapped"] != num["Communication"] - num["Communication(Not Overlapped)"]:
            fail("%s: step %s: Overlapped != Communication - Communication(Not Overlapped)"
                 % (path, v["Step"]))
        a, b = steps[v["Step"]]
        sums = collections.Counter()
        for e in lanes:
            if a <= dec(e["ts"]) <= b:
                sums[e["name"]] += dec(e["dur"])
        bad = [k for k in LANES if sums[k] != num[k]]
        if bad:
            fail("%s: step %s: %s differs from the sum of its Overlap Analysis lane"
                 % (path, v["Step"], bad[0]))


def check_torch_npu_dir(gen, tmp, root, ranks, events, seed, layers):
    """The files of a --kind torch_npu_dir tree, rank by rank."""
    want = ["rank%d_ascend_pt" % r for r in range(ranks)]
    if sorted(os.listdir(root)) != sorted(want):
        fail("%s: holds %s, expected %s" % (root, sorted(os.listdir(root)), want))
        return
    for r in range(ranks):
        base = os.path.join(root, "rank%d_ascend_pt" % r)
        out = os.path.join(base, "ASCEND_PROFILER_OUTPUT")
        info = os.path.join(base, "profiler_info_%d.json" % r)
        try:
            with open(info) as f:
                doc = json.load(f)
            if sorted(doc) != ["config", "end_info", "rank_id", "start_info"] or doc["rank_id"] != r:
                fail("%s: keys %s, rank_id %r" % (info, sorted(doc), doc.get("rank_id")))
        except (OSError, ValueError) as e:
            fail("%s: %s" % (info, e))
        trace = os.path.join(out, "trace_view.json")
        # the rank's trace is the ascend kind's trace of seed S+r
        single = os.path.join(tmp, "torch_npu_dir-rank%d.json" % r)
        if run(gen, ["--kind", "ascend", "--events", str(events), "--seed", str(seed + r),
                     "--rank", str(r), "--ranks", str(ranks), "--layers", str(layers)], single) \
                and read(single) != read(trace):
            fail("%s differs from --kind ascend --seed %d --rank %d" % (trace, seed + r, r))
        try:
            with open(trace, "rb") as f:
                evs = json.loads(f.read(), parse_float=decimal.Decimal)
        except (OSError, ValueError) as e:
            fail("%s: %s" % (trace, e))
            continue
        check_events("ascend", trace, events_of("ascend", trace, evs), events)
        meta = [e for e in evs if e.get("ph") == "M"]
        names = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
        labels = {e["args"]["labels"] for e in meta if e["name"] == "process_labels"
                  and names.get(e["pid"]) == "Ascend Hardware"}
        if labels != {"NPU %d" % (r % 8)}:
            fail("%s: Ascend Hardware labels %s, expected NPU %d" % (trace, sorted(labels), r % 8))
        check_kernel_details(os.path.join(out, "kernel_details.csv"), evs, names)
        check_step_trace(os.path.join(out, "step_trace_time.csv"), evs, names, r % 8)


def check_dir_kind(gen, tmp):
    """--kind torch_npu_dir: same arguments, same tree; the tree's contents."""
    for ranks, events, seed, layers in ((3, 2000, 4, 1), (2, 50, 7, 2)):
        a = os.path.join(tmp, "torch_npu_dir-%d-a" % events)
        b = os.path.join(tmp, "torch_npu_dir-%d-b" % events)
        ok = True
        for d in (a, b):
            shutil.rmtree(d, ignore_errors=True)
            ok = ok and run(gen, dir_args(ranks, events, seed, layers), d)
        if ok and same_tree(a, b, "torch_npu_dir: same arguments twice"):
            check_torch_npu_dir(gen, tmp, a, ranks, events, seed, layers)


def check_device_mix(gen, tmp):
    for n, seed in ((1000, 1), (6000, 3)):
        args = ["--kind", "ascend", "--events", str(n), "--seed", str(seed), "--mix", "device"]
        a = os.path.join(tmp, "device-%d-%d.json" % (n, seed))
        b = os.path.join(tmp, "device-%d-%d.again.json" % (n, seed))
        host = os.path.join(tmp, "device-%d-%d.host.json" % (n, seed))
        if not (run(gen, args, a) and run(gen, args, b) and run(gen, args[:-2], host)):
            continue
        if read(a) != read(b):
            fail("%s: same arguments gave different bytes" % a)
        if read(a) == read(host):
            fail("%s: --mix device wrote the same trace as --mix host" % a)
        try:
            events = json.loads(read(a))
        except ValueError as e:
            fail("%s: not valid JSON: %s" % (a, e))
            continue
        check_events("ascend", a, events, n)
        names = {e["pid"]: e["args"]["name"] for e in events
                 if e["ph"] == "M" and e["name"] == "process_name"}
        py = [e["name"] for e in events if e["ph"] == "X" and names.get(e["pid"]) == "Python"
              and not e["name"].startswith("ProfilerStep#")]
        if py:
            fail("%s: %d Python events in a device-heavy trace, e.g. %r" % (a, len(py), py[0]))
        calls = {e["args"]["connection_id"] for e in events
                 if e["ph"] == "X" and names.get(e["pid"]) == "CANN"
                 and e["name"] in ("Node@launch", "Runtime@MemcpyAsync")}
        tasks = [e for e in events if e["ph"] == "X" and names.get(e["pid"]) == "Ascend Hardware"]
        compute = [t for t in tasks if t["tid"] == 2 and t["name"] != "EVENT_WAIT"]
        if not compute or len(calls) != len(compute) or \
                calls != {t["args"]["connection_id"] for t in compute}:
            fail("%s: %d launch calls for %d compute tasks" % (a, len(calls), len(compute)))
        h2d = {(str(e["id"]), e["ts"]) for e in events if e["ph"] == "f" and e.get("cat") == "HostToDevice"}
        bare = [t for t in tasks if t["tid"] == 2 and (str(t["args"]["connection_id"]), t["ts"]) not in h2d]
        if bare:
            fail("%s: %d compute tasks without their HostToDevice flow" % (a, len(bare)))


def double_hash(text):
    """msprof-analyze's hash of a process group's id (its communication files name groups so)."""
    a = b = 0
    for ch in text:
        a = (a * 29 + ord(ch)) & 0xFFFFFFFF
        b = (b * 131 + ord(ch)) & 0xFFFFFFFF
    return str(a << 32 | b)


def megatron_groups(rank, ranks, tp, pp):
    """The rank's tp, dp and pp groups (global ranks in order), Megatron's layout."""
    dp = ranks // (tp * pp)
    t, d, p = rank % tp, rank // tp % dp, rank // (tp * dp)
    return {"tp": [rank - t + i for i in range(tp)],
            "dp": [t + tp * (i + dp * p) for i in range(dp)],
            "pp": [t + tp * (d + dp * i) for i in range(pp)]}


def check_parallel(gen, tmp):
    """--parallel TP,PP: the groups of profiler_metadata.json, the ops' group names, ranks alike."""
    ranks, tp, pp = 8, 2, 2
    args = ["--kind", "torch_npu_dir", "--events", "4000", "--ranks", str(ranks), "--parallel", "%d,%d" % (tp, pp),
            "--seed", "3"]
    a, b = os.path.join(tmp, "parallel-a"), os.path.join(tmp, "parallel-b")
    for d in (a, b):
        shutil.rmtree(d, ignore_errors=True)
        if not run(gen, args, d):
            return
    if not same_tree(a, b, "--parallel: same arguments twice"):
        return
    kind_of = {"allGather": "tp", "allReduce": "dp", "send": "pp", "receive": "pp"}
    ids, steps = {}, {}
    for r in range(ranks):
        base = os.path.join(a, "rank%d_ascend_pt" % r)
        meta = json.loads(read(os.path.join(base, "profiler_metadata.json")))
        dist = meta.get("distributed_args", {})
        if (dist.get("rank"), dist.get("world_size"), dist.get("tensor_model_parallel_size"),
                dist.get("pipeline_model_parallel_size"), dist.get("data_parallel_size")) != (r, ranks, tp, pp, 2):
            fail("rank %d: distributed_args %r" % (r, dist))
        want = megatron_groups(r, ranks, tp, pp)
        names = {}
        for gid, info in meta.get("parallel_group_info", {}).items():
            kind = info.get("group_name")
            if info.get("global_ranks") != want.get(kind) or info.get("group_rank") != want[kind].index(r):
                fail("rank %d: group %s %r, want ranks %r" % (r, kind, info, want.get(kind)))
            ids.setdefault((kind, tuple(want[kind])), set()).add(gid)
            names[kind] = double_hash(gid)
        if sorted(names) != ["dp", "pp", "tp"]:
            fail("rank %d: parallel_group_info names %r" % (r, sorted(names)))
            continue
        events = json.loads(read(os.path.join(base, "ASCEND_PROFILER_OUTPUT", "trace_view.json")))
        ops = [e for e in events if e.get("ph") == "X" and e["name"].startswith("hcom_")]
        for e in ops:
            kind = kind_of[e["name"][5:].split("__")[0]]
            group = e["args"].get("group_name")
            if group != names[kind] or not e["name"].startswith("hcom_%s__%s_" % (e["name"][5:].split("__")[0],
                                                                                  group[-3:])):
                fail("rank %d: %s in group %r, want its %s group %s" % (r, e["name"], group, kind, names[kind]))
                break
        steps[r] = [e["name"] for e in events if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")]
    for (kind, members), gids in sorted(ids.items()):
        if len(gids) != 1:
            fail("%s group %r: its ranks name it %r" % (kind, members, sorted(gids)))
    if len({tuple(v[:2]) for v in steps.values()}) != 1:
        fail("--parallel: the ranks' first steps differ: %r" % {r: v[:2] for r, v in steps.items()})
    plain = os.path.join(tmp, "parallel-plain")
    shutil.rmtree(plain, ignore_errors=True)
    if run(gen, [x for x in args if x not in ("--parallel", "%d,%d" % (tp, pp))], plain) and \
            os.path.exists(os.path.join(plain, "rank0_ascend_pt", "profiler_metadata.json")):
        fail("--parallel not given, yet profiler_metadata.json written")


def check_usage(gen, tmp):
    out = os.path.join(tmp, "bad.json")
    for args in (["--kind", "nope", "--events", "5"], ["--kind", "ascend"],
                 ["--kind", "ascend", "--events", "-1"], ["--kind", "ascend", "--events", "5x"],
                 ["--kind", "torch_npu_dir", "--events", "5", "--rank", "1"],
                 ["--kind", "ascend", "--events", "5", "--mix", "hosts"],
                 ["--kind", "kineto", "--events", "5", "--mix", "device"],
                 ["--kind", "ascend", "--events", "5", "--parallel", "2,2"],
                 ["--kind", "torch_npu_dir", "--events", "5", "--ranks", "8", "--parallel", "3,2"],
                 ["--kind", "torch_npu_dir", "--events", "5", "--ranks", "8", "--parallel", "2"],
                 ["--kind", "torch_npu_dir", "--events", "5", "--ranks", "8", "--parallel", "0,2"],
                 ["--kind", "torch_npu_dir", "--events", "5", "--ranks", "1", "--parallel", "1,1"]):
        r = subprocess.run([gen] + args + ["-o", out], capture_output=True)
        if r.returncode == 0 or not r.stderr:
            fail("%s: bad arguments accepted (exit %d)" % (" ".join(args), r.returncode))
    for args in (["--kind", "torch_npu_dir", "--events", "5", "-o", "-"],):
        r = subprocess.run([gen] + args, capture_output=True)
        if r.returncode == 0 or not r.stderr:
            fail("%s: bad arguments accepted (exit %d)" % (" ".join(args), r.returncode))


def check_samples(gen, tmp, samples):
    for rel, args in SAMPLES:
        path = os.path.join(samples, rel)
        if not os.path.isfile(path):
            fail("%s: sample missing" % path)
            continue
        fresh = os.path.join(tmp, os.path.basename(os.path.dirname(rel)) + ".json")
        if not run(gen, args, fresh):
            continue
        if read(path) != read(fresh):
            fail("%s differs from a fresh 'tracebook-gen %s': regenerate it as "
                 "samples/README.md says, or find what changed the generator"
                 % (path, " ".join(args)))
    for rel, ranks, events, seed, layers in SAMPLE_DIRS:
        path = os.path.join(samples, rel)
        if not os.path.isdir(path):
            fail("%s: sample missing" % path)
            continue
        fresh = os.path.join(tmp, rel)
        shutil.rmtree(fresh, ignore_errors=True)
        args = dir_args(ranks, events, seed, layers)
        if not run(gen, args, fresh):
            continue
        if not same_tree(path, fresh, "%s vs a fresh 'tracebook-gen %s' (regenerate it as "
                         "samples/README.md says, or find what changed the generator)"
                         % (path, " ".join(args))):
            continue
        check_torch_npu_dir(gen, tmp, path, ranks, events, seed, layers)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print("usage: check_gen.py GENERATOR [TMPDIR] [SAMPLES_DIR]", file=sys.stderr)
        return 1
    gen = os.path.abspath(argv[1])
    if not os.access(gen, os.X_OK):
        print("FAIL: generator not found or not executable '%s'" % gen, file=sys.stderr)
        return 1
    here = os.path.dirname(os.path.abspath(__file__))
    samples = argv[3] if len(argv) > 3 else os.path.join(here, "..", "..", "samples")
    own_tmp = len(argv) < 3 or not argv[2]
    tmp = tempfile.mkdtemp(prefix="check_gen.") if own_tmp else argv[2]
    os.makedirs(tmp, exist_ok=True)
    try:
        check_kinds(gen, tmp)
        check_dir_kind(gen, tmp)
        check_device_mix(gen, tmp)
        check_parallel(gen, tmp)
        check_usage(gen, tmp)
        check_samples(gen, tmp, samples)
    finally:
        if own_tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("check_gen: %d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print("check_gen: all checks passed")
    if not own_tmp and not os.environ.get("TB_KEEP_TEST_OUTPUT"):
        shutil.rmtree(tmp, ignore_errors=True)  # a failing run keeps its files for reading
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
