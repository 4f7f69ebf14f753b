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
# has its finish. Then it regenerates the checked-in samples and compares
# them byte for byte, so a generator change that alters them is caught and
# the samples are regenerated on purpose (commands in samples/README.md).
#
# usage: check_gen.py GENERATOR [TMPDIR] [SAMPLES_DIR]
#   TMPDIR       where outputs go (default: a new temporary directory, removed)
#   SAMPLES_DIR  default: ../../samples next to this script
# Exit 0 when all checks pass, 1 with a message per failure otherwise.
# Python 3 standard library only.

import collections
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


def check_usage(gen, tmp):
    out = os.path.join(tmp, "bad.json")
    for args in (["--kind", "nope", "--events", "5"], ["--kind", "ascend"],
                 ["--kind", "ascend", "--events", "-1"], ["--kind", "ascend", "--events", "5x"]):
        r = subprocess.run([gen] + args + ["-o", out], capture_output=True)
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
        check_usage(gen, tmp)
        check_samples(gen, tmp, samples)
    finally:
        if own_tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("check_gen: %d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print("check_gen: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
