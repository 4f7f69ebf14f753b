#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeline_args.py - `tracebook export timeline` gives back every slice of a
# public timeline as the input had it (docs/timeline.md "Slices").
#
# Each public Ascend timeline and Kineto trace is loaded (python_function
# slices kept), the DB exported as a timeline, and both files are read with Python's json,
# strictly (duplicate keys rejected). Every X slice of the input must come
# back once, on the same pid and tid (same JSON types) at the same ts and
# dur, with the same args: the same names, values and types (1, 1.0 and "1"
# differ). The output holds no X slice the input lacks and no pid the input
# does not use. Every flow end comes back as written (a flow the input has
# with one end only, too): the same id (a number stays a number, a string a
# string), category, name, pid, tid, ts and bp; the output holds no other.
# Every instant event comes back with its scope ("s": g, p, t or none),
# category, name, pid, tid, ts and args, and no other. Every top-level
# member of a Kineto trace (schemaVersion, deviceProperties, traceName,
# displayTimeUnit, ...) comes back with its value, and no other but
# distributedInfo.
# usage: timeline_args.py TRACEBOOK SHARED_DATA_DIR OUT_DIR
# Exit 77 (skip) when the shared data is absent.
import collections
import decimal
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import tbtest  # noqa: E402

TRACES = [
    "ascend/torch_npu_timeline/trace_view.json",
    "ascend/misc/trace_view_tiny.json",
    "ascend/misc/trace_view_heatmap.json",
    "kineto/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "kineto/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "kineto/tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "kineto/tracelens/mi300/resnet_act_checkpoint.json.gz",
]

T = tbtest.Checks()
check = T.check


def ns(v):
    """A ts or dur (µs, number or string) as integer nanoseconds, as the loader rounds it."""
    return None if v is None else int((decimal.Decimal(str(v)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def typed(v):
    """A JSON value with its types spelled out, so that 1, 1.0, True and "1" differ."""
    return json.dumps(v, sort_keys=True) + ":" + type(v).__name__


def slices(evs):
    """Counter of the X slices: (pid, tid, ts, dur, name, args), types kept."""
    return collections.Counter(
        (typed(e.get("pid")), typed(e.get("tid")), ns(e.get("ts")), ns(e.get("dur")), e.get("name"),
         typed(e.get("args"))) for e in evs if e.get("ph") == "X")


def flows(evs):
    """Counter of the flow ends, those without a partner included."""
    return collections.Counter(
        (e["ph"], e.get("cat"), e.get("name"), typed(e.get("id")), typed(e.get("pid")), typed(e.get("tid")),
         ns(e.get("ts")), typed(e.get("bp"))) for e in evs if e.get("ph") in ("s", "f"))


def instants(evs):
    """Counter of the instant events: their scope ("s", which a viewer draws
    differently: g across the whole view, t on its thread) with the rest."""
    return collections.Counter(
        (e["ph"], typed(e.get("s")), e.get("cat"), e.get("name"), typed(e.get("pid")), typed(e.get("tid")),
         ns(e.get("ts")), typed(e.get("args"))) for e in evs if e.get("ph") in ("i", "I"))


def top(path):
    """The top-level members of a trace file other than traceEvents ({} for an array)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return {k: v for k, v in doc.items() if k != "traceEvents"} if isinstance(doc, dict) else {}


def top_members(rel, src, written):
    """Every top-level member of a Kineto trace comes back with its value, distributedInfo
    with the loaded rank's id as its rank."""
    a, b = top(src), top(written)
    if not a:
        return
    for k, v in a.items():
        w = b.get(k)
        if k == "distributedInfo" and isinstance(v, dict) and isinstance(w, dict):
            v = dict(v, rank=w.get("rank"))
        check(k in b and w == v, "%s: top-level member %s written back as %.200r, read %.200r" % (
            rel, k, w if k in b else "(absent)", v))
    extra = set(b) - set(a) - {"distributedInfo"}
    check(not extra, "%s: top-level members the input does not have: %s" % (rel, sorted(extra)))


def show(k):
    return "pid %s tid %s ts %s dur %s %r args %s" % k


def compare(tb, rel, data, out):
    src = os.path.join(data, rel)
    name = os.path.basename(rel).split(".")[0]
    d = os.path.join(out, name)
    db = os.path.join(out, name + ".db")
    p = tbtest.run([tb, "export", "db", "-dir", src, "-o", db, "--keep-python-functions", "-q"])
    check(p.returncode == 0, "%s: export db exited %d: %s" % (rel, p.returncode, p.stderr))
    p = tbtest.run([tb, "export", "timeline", "-dir", db, "-o", d, "-q"])
    check(p.returncode == 0, "%s: export timeline exited %d: %s" % (rel, p.returncode, p.stderr))
    files = p.stdout.split()
    check(len(files) == 1, "%s: one file, got %r" % (rel, files))
    if p.returncode != 0 or len(files) != 1:
        return
    a, b = tbtest.trace_events(src, strict=True), tbtest.trace_events(files[0], strict=True)
    sa, sb = slices(a), slices(b)
    lost, added = sa - sb, sb - sa
    check(not lost, "%s: %d of %d slices not given back as they were, e.g. %s" % (
        rel, sum(lost.values()), sum(sa.values()), "; ".join(show(k) for k in list(lost)[:3])))
    check(not added, "%s: %d slices the input does not have, e.g. %s" % (
        rel, sum(added.values()), "; ".join(show(k) for k in list(added)[:3])))
    fa, fb = flows(a), flows(b)
    lost, added = fa - fb, fb - fa
    check(not lost and not added, "%s: %d of %d flow ends not given back as written (e.g. %s), %d added (e.g. %s)" % (
        rel, sum(lost.values()), sum(fa.values()), list(lost)[:2], sum(added.values()), list(added)[:2]))
    ia, ib = instants(a), instants(b)
    lost, added = ia - ib, ib - ia
    check(not lost and not added, "%s: %d of %d instant events not given back as written (e.g. %s), %d added "
          "(e.g. %s)" % (rel, sum(lost.values()), sum(ia.values()), list(lost)[:2], sum(added.values()),
                         list(added)[:2]))
    top_members(rel, src, files[0])
    pids_in = {typed(e["pid"]) for e in a if "pid" in e}
    pids_out = {typed(e["pid"]) for e in b if "pid" in e}
    check(pids_out <= pids_in, "%s: pids the input does not use: %s" % (rel, sorted(pids_out - pids_in)))
    print("%s: %d slices, args as written; %d flow ends; %d instant events" % (
        rel, sum(sa.values()), sum(fa.values()), sum(ia.values())))


def main():
    tb, data, out = tbtest.args("TRACEBOOK SHARED_DATA_DIR OUT_DIR", 3, 3)
    tbtest.need_dirs(data)
    os.makedirs(out, exist_ok=True)
    for rel in TRACES:
        compare(tb, rel, data, out)
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
