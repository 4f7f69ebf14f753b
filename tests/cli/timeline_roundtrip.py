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
# format. A trace with Kineto's categories of 2022 and before (Kernel,
# Runtime, Memcpy, Memset) comes back slice by slice as read: pid, tid,
# name, ts, dur, cat and args, its instant events with their scope ("s"),
# and its top-level members with their values; a member whose escaped key
# reads as traceEvents is not written as a second one. MTIA's device slices
# (mtia_ccp_events) come back on their own tids, which are not their
# streams' numbers (nor numbers at all). Usage: timeline_roundtrip.py
# TRACEBOOK GEN SAMPLES OUTDIR
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


# A trace as Kineto wrote it until 2022: the categories Kernel, Runtime,
# Memcpy and Memset (today kernel, cuda_runtime, gpu_memcpy, gpu_memset).
def old_kineto_trace(path):
    cpu, gpu, t0 = 4242, 0, 1665536373729000
    ev = [{"name": "process_name", "ph": "M", "ts": t0, "pid": cpu, "tid": 0, "args": {"name": "python"}},
          {"name": "process_labels", "ph": "M", "ts": t0, "pid": cpu, "tid": 0, "args": {"labels": "CPU"}},
          {"name": "process_name", "ph": "M", "ts": t0, "pid": gpu, "tid": 0, "args": {"name": "python"}},
          {"name": "process_labels", "ph": "M", "ts": t0, "pid": gpu, "tid": 0, "args": {"labels": "GPU 0"}},
          {"name": "thread_name", "ph": "M", "ts": t0, "pid": gpu, "tid": 7, "args": {"name": "stream 7"}},
          {"name": "thread_name", "ph": "M", "ts": t0, "pid": cpu, "tid": cpu,
           "args": {"name": "thread 4242 (python)"}},
          {"ph": "X", "cat": "Trace", "ts": t0, "dur": 5000, "pid": "Spans", "tid": "PyTorch Profiler",
           "name": "PyTorch Profiler (0)", "args": {"Op count": 0}}]
    gpu_work = [("Kernel", "void gemmk1_kernel<float, 256>(cublasGemmk1Params<float>)", "cudaLaunchKernel", 211,
                 {"registers per thread": 27, "shared memory": 1024, "blocks per SM": 12.8, "warps per SM": 102.4,
                  "grid": [2, 1, 512], "block": [256, 1, 1], "est. achieved occupancy %": 100}),
                ("Memcpy", "Memcpy HtoD (Pageable -> Device)", "cudaMemcpyAsync", 41,
                 {"bytes": 4096, "memory bandwidth (GB/s)": 1.024}),
                ("Memset", "Memset (Device)", "cudaMemsetAsync", 51, {"bytes": 512, "memory bandwidth (GB/s)": 0.256})]
    t = t0 + 100
    for i, (cat, name, call, cbid, more) in enumerate(gpu_work * 2):
        corr = 538860 + i
        ev.append({"ph": "X", "cat": "Runtime", "name": call, "pid": cpu, "tid": cpu, "ts": t, "dur": 14 + i,
                   "args": {"cbid": cbid, "correlation": corr, "external id": 6294 + i, "external ts": t - 20}})
        ev.append({"ph": "s", "id": corr, "pid": cpu, "tid": cpu, "ts": t, "cat": "async_gpu", "name": call,
                   "bp": "e"})
        args = {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": corr, "external id": 6294 + i}
        args.update(more)
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": gpu, "tid": 7, "ts": t + 30, "dur": 4 + i,
                   "args": args})
        ev.append({"ph": "f", "id": corr, "pid": gpu, "tid": 7, "ts": t + 30, "cat": "async_gpu", "name": call,
                   "bp": "e"})
        t += 100
    # calls that launch nothing, one without args
    ev.append({"ph": "X", "cat": "Runtime", "name": "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
               "pid": cpu, "tid": cpu, "ts": t, "dur": 1,
               "args": {"cbid": 251, "correlation": 538899, "external id": 6300, "external ts": t - 5}})
    ev.append({"ph": "X", "cat": "Runtime", "name": "cudaDeviceSynchronize", "pid": cpu, "tid": cpu, "ts": t + 2,
               "dur": 0})
    # instant events of each scope (a viewer draws a global one across the whole view) and none
    ev.append({"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
               "tid": "Trace PyTorch Profiler", "ts": t0})
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": cpu, "tid": cpu,
               "ts": t + 3, "args": {"Total Reserved": 2097152, "Bytes": 512, "Device Id": 0}})
    ev.append({"ph": "i", "s": "p", "name": "mark", "pid": cpu, "tid": cpu, "ts": t + 4})
    ev.append({"ph": "i", "name": "unscoped", "pid": cpu, "tid": cpu, "ts": t + 5})
    ev.append({"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": t + 10})
    with open(path, "w") as f:
        json.dump(dict(TOP_MEMBERS, traceEvents=ev), f, indent=1)


# The top-level members of the trace beside traceEvents, each given back as read.
TOP_MEMBERS = {
    "schemaVersion": 1,
    "deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-32GB", "totalGlobalMem": 34089730048,
                          "computeMajor": 7, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                          "numSms": 80, "sharedMemPerBlock": 49152, "regsPerMultiprocessor": 65536}],
    "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
    "record_shapes": 0,
    "with_stack": False,
    "trace_id": "B5A1E8D2",
    "traceName": "/tmp/traces/inference_rank_0.json",
    "displayTimeUnit": "ms",
    "metadata": None,
    "cupti_version": 1.5e1,
}


def canon(v):
    """A JSON value comparable as written: objects as their members in order."""
    if isinstance(v, dict):
        return tuple((k, canon(x)) for k, x in v.items())
    if isinstance(v, list):
        return tuple(canon(x) for x in v)
    return v


def slices(events):
    """The complete slices and instant events of a trace: pid, tid, name, ts, dur, cat,
    args and an instant's scope as written."""
    return collections.Counter((e.get("ph"), e.get("pid"), e.get("tid"), e.get("name"), e.get("ts"), e.get("dur"),
                                e.get("cat"), canon(e.get("args")), e.get("s"))
                               for e in events if e.get("ph") in ("X", "i", "I"))


def slices_as_read(tb, name, trace, out):
    """Each slice and instant event of trace comes back from export db and export timeline as read."""
    print("== " + name + " (slices as read)")
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    db = os.path.join(d, "trace.db")
    run([tb, "export", "db", "-dir", trace, "-o", db, "-q"])
    p = run([tb, "export", "timeline", "-dir", db, "-o", os.path.join(d, "timeline"), "-q"])
    back = collections.Counter()
    for f in p.stdout.split():
        back += slices(check_file(f)[0])
    read = slices(tbtest.trace_events(trace))
    check(read == back, "%s: slices differ: %d read, %d written; only read: %s; only written: %s" % (
        name, sum(read.values()), sum(back.values()), list((read - back).items())[:3],
        list((back - read).items())[:3]))
    print("  %d slices and instants %s" % (sum(read.values()), "same" if read == back else "DIFFERENT"))
    return db


def old_categories(tb, out):
    """Kineto's categories of 2022 and before are read as today's and written back as read."""
    trace = os.path.join(out, "kineto_2022.json")
    old_kineto_trace(trace)
    db = slices_as_read(tb, "kineto_2022", trace, out)
    # the calls are runtime calls (type 60001) and the device work tasks, as today's
    got = rows(db, "SELECT 'api', type, count(*) FROM CANN_API GROUP BY type UNION ALL "
                   "SELECT 'task', s.value, count(*) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType GROUP BY 2 "
                   "UNION ALL SELECT 'compute', count(*), 0 FROM COMPUTE_TASK_INFO "
                   "UNION ALL SELECT 'memcpy', memcpyOperation, count(*) FROM MEMCPY_INFO GROUP BY 2")
    want = collections.Counter({("api", 60001, 8): 1, ("task", "Kernel", 2): 1, ("task", "Memcpy", 2): 1,
                                ("task", "Memset", 2): 1, ("compute", 2, 0): 1, ("memcpy", 1, 2): 1,
                                ("memcpy", 65535, 2): 1})
    check(got == want, "kineto_2022: rows %r, expected %r" % (sorted(got), sorted(want)))
    written = [f for f in os.listdir(os.path.join(out, "kineto_2022", "timeline")) if f.endswith(".json")]
    with open(os.path.join(out, "kineto_2022", "timeline", written[0])) as f:
        back = json.load(f)
    back = {k: v for k, v in back.items() if k != "traceEvents"}
    check(back == TOP_MEMBERS, "kineto_2022: top-level members %r, read %r" % (back, TOP_MEMBERS))
    # a trace with both names of a runtime call (no Kineto wrote one) comes back as today's
    with open(trace) as f:
        doc = json.load(f)
    calls = [e for e in doc["traceEvents"] if e.get("cat") == "Runtime"]
    calls[0]["cat"] = "cuda_runtime"
    mixed = os.path.join(out, "kineto_mixed.json")
    with open(mixed, "w") as f:
        json.dump(doc, f)
    d = os.path.join(out, "kineto_mixed")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    run([tb, "export", "db", "-dir", mixed, "-o", os.path.join(d, "trace.db"), "-q"])
    p = run([tb, "export", "timeline", "-dir", os.path.join(d, "trace.db"), "-o", os.path.join(d, "tl"), "-q"])
    cats = collections.Counter(e.get("cat") for f in p.stdout.split() for e in check_file(f)[0]
                               if e.get("ph") == "X" and e.get("pid") == calls[0]["pid"])
    check(cats == collections.Counter({"cuda_runtime": len(calls)}), "kineto_mixed: runtime calls as %r" % cats)


def escaped_member(tb, out):
    """A top-level member whose key is written with escapes and reads as
    "traceEvents" is no second traceEvents in the file written back (a
    reader that takes the last of two would lose every event); the trace's
    other members come back as read."""
    print("== escaped_member")
    d = os.path.join(out, "escaped_member")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    trace = os.path.join(d, "rank0.pt.trace.json")
    ev = [{"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "python"}},
          {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1700000000000, "dur": 5,
           "args": {}}]
    with open(trace, "w") as f:
        f.write('{"schemaVersion": 1, "trace\\u0045vents": [1, 2], "traceEvents": %s}' % json.dumps(ev))
    db = os.path.join(d, "trace.db")
    run([tb, "export", "db", "-dir", trace, "-o", db, "-q"])
    p = run([tb, "export", "timeline", "-dir", db, "-o", os.path.join(d, "timeline"), "-q"])
    files = p.stdout.split()
    check(len(files) == 1, "escaped_member: one file written: %r" % files)
    events, _, _ = check_file(files[0])  # a duplicate key fails here
    check(slices(events) == slices(ev), "escaped_member: the trace's slice in traceEvents")
    with open(files[0]) as f:
        back = json.load(f)
    check({k: v for k, v in back.items() if k != "traceEvents"} ==
          {"schemaVersion": 1, "distributedInfo": {"rank": 0}},
          "escaped_member: the other members as read: %r" % sorted(back))


def mtia_trace(path):
    """An MTIA-style trace: device slices (mtia_ccp_events) on threads of their
    own, not their stream's number, and a kernel whose tid is text."""
    host, dev, t0 = 31, 9, 1731348176000000
    ev = [{"name": "process_name", "ph": "M", "ts": t0, "pid": host, "tid": 0, "args": {"name": "python"}},
          {"name": "process_name", "ph": "M", "ts": t0, "pid": dev, "tid": 0, "args": {"name": "MTIA 0"}},
          {"name": "process_labels", "ph": "M", "ts": t0, "pid": dev, "tid": 0, "args": {"labels": "MTIA 0"}},
          {"name": "thread_name", "ph": "M", "ts": t0, "pid": dev, "tid": 4, "args": {"name": "CCP 4"}},
          {"name": "thread_name", "ph": "M", "ts": t0, "pid": dev, "tid": 801, "args": {"name": "DMA"}}]
    # (tid, stream arg or None, name); the last two are on their stream's thread
    device = [(4, 1, "job_launch"), (4, 1, "kernel_exec"), (801, None, "dma_request"), (408, 102, "firmware"),
              (-3, None, "negative_tid"), ("stream 7", 7, "text_tid"), (1, 1, "on_stream"), (12, None, "no_stream")]
    t = t0 + 100
    for i, (tid, stream, name) in enumerate(device):
        corr = 900 + i
        ev.append({"ph": "X", "cat": "mtia_runtime", "name": "launch", "pid": host, "tid": host, "ts": t,
                   "dur": 3, "args": {"correlation": corr}})
        args = {"device": 0, "correlation": corr}
        if stream is not None:
            args["stream"] = stream
        ev.append({"ph": "X", "cat": "mtia_ccp_events", "name": name, "pid": dev, "tid": tid, "ts": t + 10,
                   "dur": 5 + i, "args": args})
        t += 50
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f, indent=1)


def mtia_tids(tb, out):
    """An MTIA device slice comes back on its own tid, not its stream's; the DB
    keeps that tid (TASK.tid) only where it is not the stream's number. A DB
    written before that column is still exported."""
    trace = os.path.join(out, "mtia.json")
    mtia_trace(trace)
    db = slices_as_read(tb, "mtia", trace, out)
    got = rows(db, "SELECT n.value, t.streamId, t.tid FROM TASK t JOIN STRING_IDS n ON n.id = t.name")
    want = collections.Counter({("job_launch", 1, 4): 1, ("kernel_exec", 1, 4): 1, ("dma_request", 801, None): 1,
                                ("firmware", 102, 408): 1, ("negative_tid", None, -3): 1,
                                ("text_tid", 7, "stream 7"): 1, ("on_stream", 1, None): 1,
                                ("no_stream", 12, None): 1})
    check(got == want, "mtia: TASK rows %r, expected %r" % (sorted(got, key=repr), sorted(want, key=repr)))
    # a DB written before TASK.tid is exported as then: each task on its stream's tid
    old = os.path.join(out, "mtia", "before_tid.db")
    shutil.copy(db, old)
    con = sqlite3.connect(old)
    con.execute("ALTER TABLE TASK DROP COLUMN tid")
    con.commit()
    con.close()
    p = run([tb, "export", "timeline", "-dir", old, "-o", os.path.join(out, "mtia", "before_tid"), "-q"])
    tids = collections.Counter((e["name"], e["tid"]) for f in p.stdout.split() for e in check_file(f)[0]
                               if e.get("cat") == "mtia_ccp_events")
    want = collections.Counter({("job_launch", 1): 1, ("kernel_exec", 1): 1, ("dma_request", 801): 1,
                                ("firmware", 102): 1, ("negative_tid", 0): 1, ("text_tid", 7): 1,
                                ("on_stream", 1): 1, ("no_stream", 12): 1})
    check(tids == want, "mtia: a DB without TASK.tid exported with tids %r" % sorted(tids.items()))


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
    old_categories(tb, out)
    mtia_tids(tb, out)
    escaped_member(tb, out)
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
