#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeline_roundtrip.py - `export timeline` is the inverse of loading a timeline.
#
# For each input (the checked-in samples and traces written by tracebook-gen):
# load it (export db), export its timeline, load that timeline again, and
# compare the rows of TASK, COMPUTE_TASK_INFO, MEMCPY_INFO,
# COMMUNICATION_OP, CANN_API, PYTORCH_API, STEP_TIME and OVERLAP_ANALYSIS
# of the two DBs, strings resolved and ids (globalTaskId, opId, string ids)
# left out, as multisets: they must be equal. Also parses every exported
# file strictly (duplicate keys rejected) and checks the basics of the
# format. Usage: timeline_roundtrip.py TRACEBOOK GEN SAMPLES OUTDIR
import collections
import json
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

# per table: the SELECT giving its comparable rows (names resolved, ids dropped)
TABLES = {
    "TASK": """SELECT t.rankId, t.startNs, t.endNs, t.deviceId, t.connectionId, t.streamId, t.taskId,
                      t.modelId, t.contextId, n.value, tt.value
               FROM TASK t LEFT JOIN STRING_IDS n ON n.id = t.name LEFT JOIN STRING_IDS tt ON tt.id = t.taskType""",
    "COMPUTE_TASK_INFO": """SELECT t.startNs, n.value, tt.value, c.blockNum, c.mixBlockNum
               FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId
               LEFT JOIN STRING_IDS n ON n.id = c.name LEFT JOIN STRING_IDS tt ON tt.id = c.taskType""",
    "MEMCPY_INFO": """SELECT t.startNs, m.size, m.memcpyOperation FROM MEMCPY_INFO m
               JOIN TASK t ON t.globalTaskId = m.globalTaskId""",
    "COMMUNICATION_OP": """SELECT o.rankId, o.startNs, o.endNs, o.connectionId, o.deviceId, o.dataType, o.count,
                      n.value, g.value, a.value, ot.value
               FROM COMMUNICATION_OP o LEFT JOIN STRING_IDS n ON n.id = o.opName
               LEFT JOIN STRING_IDS g ON g.id = o.groupName LEFT JOIN STRING_IDS a ON a.id = o.algType
               LEFT JOIN STRING_IDS ot ON ot.id = o.opType""",
    "CANN_API": """SELECT a.rankId, a.startNs, a.endNs, a.type, a.globalTid, a.connectionId, n.value
               FROM CANN_API a LEFT JOIN STRING_IDS n ON n.id = a.name""",
    "PYTORCH_API": """SELECT p.rankId, p.startNs, p.endNs, p.globalTid, p.type, p.sequenceNumber, p.fwdThreadId,
                      n.value FROM PYTORCH_API p LEFT JOIN STRING_IDS n ON n.id = p.name""",
    "STEP_TIME": "SELECT rankId, id, startNs, endNs FROM STEP_TIME",
    "OVERLAP_ANALYSIS": "SELECT rankId, deviceId, startNs, endNs, type FROM OVERLAP_ANALYSIS",
    # a flow missing one of its ends is not exported
    "TB_FLOW": """SELECT f.rankId, c.value, f.flowId, f.fromPid, f.fromTid, f.fromNs, f.toPid, f.toTid, f.toNs,
                      f.connectionId FROM TB_FLOW f LEFT JOIN STRING_IDS c ON c.id = f.cat""",
    "TB_COUNTER": """SELECT c.rankId, c.pid, n.value, s.value, c.timestampNs, c.value FROM TB_COUNTER c
               LEFT JOIN STRING_IDS n ON n.id = c.name LEFT JOIN STRING_IDS s ON s.id = c.series""",
}

# A DB or CSV input has no process metadata and its own ids and details:
# the timeline made from it carries its times, devices and names.
LOOSE = {
    "TASK": """SELECT t.rankId, t.startNs, t.endNs, t.deviceId, t.streamId, t.taskId FROM TASK t""",
    "COMMUNICATION_OP": """SELECT o.rankId, o.startNs, o.endNs, o.deviceId, n.value FROM COMMUNICATION_OP o
               LEFT JOIN STRING_IDS n ON n.id = o.opName""",
    "CANN_API": """SELECT a.rankId, a.startNs, a.endNs, a.type, a.connectionId, n.value
               FROM CANN_API a LEFT JOIN STRING_IDS n ON n.id = a.name""",
    "PYTORCH_API": """SELECT p.rankId, p.startNs, p.endNs, n.value FROM PYTORCH_API p
               LEFT JOIN STRING_IDS n ON n.id = p.name""",
    "STEP_TIME": "SELECT rankId, id, startNs, endNs FROM STEP_TIME",
}

T = tbtest.Checks()
check = T.check


def rows(db, sql):
    con = sqlite3.connect(db)
    try:
        return collections.Counter(tuple(r) for r in con.execute(sql))
    finally:
        con.close()


def reject_dup(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key in %r" % (keys,))
    return dict(pairs)


def check_file(path):
    """Strict parse and the format's basics; returns the events, whether the
    file is a Kineto trace and how many flow ends have no partner in it."""
    with open(path) as f:
        doc = json.load(f, object_pairs_hook=reject_dup)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    named = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    flows = collections.Counter()
    for e in events:
        ph = e.get("ph")
        if ph == "X":
            for k in ("ts", "dur", "pid", "tid", "name"):
                check(k in e, "%s: X event without %s: %r" % (path, k, e))
        if "pid" in e:
            check(e["pid"] in named, "%s: pid %r not named" % (path, e["pid"]))
        if ph in ("s", "f"):
            flows[(e.get("cat"), e.get("id"), ph)] += 1
    unpaired = sum(abs(n - flows.get((cat, fid, "f"), 0)) for (cat, fid, ph), n in flows.items() if ph == "s")
    unpaired += sum(n for (cat, fid, ph), n in flows.items() if ph == "f" and (cat, fid, "s") not in flows)
    return events, isinstance(doc, dict), unpaired


def run(cmd):
    p = tbtest.run(cmd)
    check(p.returncode == 0, "%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
    return p


def roundtrip(tb, name, inputs, out, loose=False):
    print("== " + name)
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    db1 = os.path.join(d, "first.db")
    args = []
    for i in inputs:
        args += ["-dir", i]
    run([tb, "export", "db"] + args + ["-o", db1, "-q"])
    tl = os.path.join(d, "timeline")
    p = run([tb, "export", "timeline", "-dir", db1, "-o", tl, "-q"])
    files = p.stdout.split()
    check(files and all(os.path.isfile(f) for f in files), name + ": files listed on stdout")
    kineto = False
    unpaired = 0
    for f in files:
        _, k, u = check_file(f)
        kineto = k or kineto
        unpaired += u
    # every flow is paired in the file, but those the input had with one end only
    half = rows(db1, "SELECT count(*) FROM TB_FLOW WHERE (fromNs IS NULL) <> (toNs IS NULL)")
    check(collections.Counter({(unpaired,): 1}) == half, "%s: %d flow ends without a partner, the DB has %r" % (
        name, unpaired, half))
    db2 = os.path.join(d, "second.db")
    args = []
    for f in files:
        args += ["-dir", f]
    run([tb, "export", "db"] + args + ["-o", db2, "-q"])
    for table, sql in (LOOSE if loose else TABLES).items():
        a, b = rows(db1, sql), rows(db2, sql)
        if table == "OVERLAP_ANALYSIS" and not a:
            # no lanes in the input: an Ascend export of a rank without process
            # metadata (a DB or CSV input) computes them from the tasks; a rank
            # read from a timeline keeps the processes it had
            tasks = rows(db1, "SELECT count(*) FROM TASK")
            own = rows(db1, "SELECT count(*) FROM TB_PROCESS") != collections.Counter({(0,): 1})
            check(bool(b) == (not kineto and not own and tasks != collections.Counter({(0,): 1})),
                  "%s: computed Overlap Analysis lanes exported" % name)
            print("  %-18s computed: %d rows" % (table, sum(b.values())))
            continue
        check(a == b, "%s: %s differs: %d rows vs %d; only first: %s; only second: %s" % (
            name, table, sum(a.values()), sum(b.values()), list((a - b).items())[:3], list((b - a).items())[:3]))
        print("  %-18s %6d rows %s" % (table, sum(a.values()), "same" if a == b else "DIFFERENT"))


def main():
    tb, gen, samples, out = tbtest.args("TRACEBOOK GEN SAMPLES OUTDIR", 4, 4)
    os.makedirs(out, exist_ok=True)
    roundtrip(tb, "ascend_small", [os.path.join(samples, "ascend_small")], out)
    roundtrip(tb, "torch_npu_2rank", [os.path.join(samples, "torch_npu_2rank")], out)
    roundtrip(tb, "kineto_small", [os.path.join(samples, "kineto_small")], out)
    for kind in ("ascend", "kineto"):
        trace = os.path.join(out, "gen_%s.json" % kind)
        run([gen, "--kind", kind, "--events", "20000", "--seed", "7", "-o", trace])
        roundtrip(tb, "gen_" + kind, [trace], out)
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
