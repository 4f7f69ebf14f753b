#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# trace_counts.py - conformance of `tracebook export db` on the shared public traces.
#
# For every public trace (Ascend timelines, Kineto traces) this test loads the
# file with `tracebook export db`, then recounts the file independently with
# Python's json module and compares, table by table, through the sqlite3
# shell (the client users query DBs with):
#   - rows of TASK, COMPUTE_TASK_INFO, COMMUNICATION_OP, MEMCPY_INFO, CANN_API,
#     PYTORCH_API, STEP_TIME, OVERLAP_ANALYSIS, TB_FLOW, TB_COUNTER, TB_EVENT;
#   - the X events of every named layer (process_name) against the rows that
#     carry that layer's pid;
#   - exact nanosecond times: min/max start of TASK equal the decimal ts text;
#   - every event is accounted for: the per-destination counts add up to the
#     events in the file.
# usage: trace_counts.py TRACEBOOK SHARED_DATA_DIR OUT_DIR
# Exit 77 (skip) when the shared data is absent.
import collections
import decimal
import gzip
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

NON_COMPUTE = ("EVENT_", "NOTIFY_", "STREAM_WAIT", "MEMCPY", "PROFILING_", "HCCL", "COMMUNICATION",
               "RDMA", "SDMA", "WRITE_VALUE", "Notify", "Memcpy", "Reduce", "Event")
ASCEND_LAYERS = {"Python", "Python GC", "CANN", "Ascend Hardware", "Communication", "Overlap Analysis",
                 "MsprofTx", "AI Core Freq", "NPU MEM", "Step Trace", "OS Runtime API", "Task Scheduler",
                 "HBM", "DDR", "LLC", "PCIe", "HCCS", "NIC", "RoCE", "SIO", "QoS", "Acc PMU", "Stars Soc Info",
                 "Stars Chip Trans", "CCU", "Biu Perf", "Ub", "Block Detail", "DPU", "Fusion Task", "Low Power",
                 "CPU Usage", "Memory Usage", "Disk Usage", "Network Usage"}
OVERLAP_NAMES = {"Computing", "Communication", "Communication(Not Overlapped)", "Free"}

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


def ns(ts):
    """Exact ns from a µs value given as JSON text or number (3 decimals, 4th rounds half up)."""
    d = decimal.Decimal(str(ts)) * 1000
    return int(d.quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        # keep numbers as text so ts precision is not lost by float parsing
        return json.loads(f.read(), parse_float=decimal.Decimal, parse_int=decimal.Decimal)


def sql(db, query):
    out = subprocess.run(["sqlite3", "-readonly", db, query], check=True, capture_output=True, text=True).stdout
    return [line.split("|") for line in out.splitlines()]


def sql1(db, query):
    rows = sql(db, query)
    return int(rows[0][0]) if rows and rows[0][0] != "" else None


def is_comm_kernel(name):
    n = name[5:] if name.startswith("void ") else name
    return n.lower().startswith(("nccl", "rccl", "hccl")) or "ncclKernel" in name or "ncclDevKernel" in name


def expected(doc):
    top_object = isinstance(doc, dict)
    events = doc["traceEvents"] if top_object else doc
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[str(e.get("pid"))] = e.get("args", {}).get("name", "")
    want = collections.Counter()
    layer_x = collections.Counter()
    flows = collections.defaultdict(lambda: [0, 0])
    steps = set()  # one STEP_TIME row per ProfilerStep#N, however often it is recorded
    for e in events:
        ph = e.get("ph")
        if not e:
            continue
        if ph == "M":
            continue
        if ph in ("s", "f"):
            flows[(e.get("cat"), str(e.get("id")))][0 if ph == "s" else 1] += 1
            continue
        if ph == "C":
            n = sum(1 for v in e.get("args", {}).values() if isinstance(v, decimal.Decimal))
            want["TB_COUNTER"] += n
            if n == 0:
                want["TB_EVENT"] += 1
            continue
        if ph != "X" or "ts" not in e:
            want["TB_EVENT"] += 1
            continue
        layer = names.get(str(e.get("pid")))
        layer_x[layer] += 1
        cat = e.get("cat")
        name = e.get("name", "")
        if layer in ASCEND_LAYERS:
            if layer in ("Ascend Hardware", "Task Scheduler"):
                want["TASK"] += 1
                tt = str(e.get("args", {}).get("Task Type", ""))
                if tt.startswith("MEMCPY"):
                    want["MEMCPY_INFO"] += 1
                elif not tt.startswith(NON_COMPUTE):
                    want["COMPUTE_TASK_INFO"] += 1
            elif layer == "CANN":
                want["CANN_API"] += 1
            elif layer == "Python":
                if cat == "python_function":
                    continue
                want["PYTORCH_API"] += 1
                if name.startswith("ProfilerStep#"):
                    steps.add(name)
            elif layer == "Communication":
                if name.startswith("hcom_"):
                    want["COMMUNICATION_OP"] += 1
                else:
                    want["TASK"] += 1
                    want["COMMUNICATION_TASK_INFO"] += 1
            elif layer == "Overlap Analysis":
                if name in OVERLAP_NAMES or str(e.get("tid")) in ("0", "1", "2", "3"):
                    want["OVERLAP_ANALYSIS"] += 1
                else:
                    want["TB_EVENT"] += 1
            elif layer == "MsprofTx":
                want["MSTX_EVENTS"] += 1
            else:
                want["TB_EVENT"] += 1
            continue
        if cat == "kernel":
            want["TASK"] += 1
            if is_comm_kernel(name):
                want["COMMUNICATION_OP"] += 1
                want["COMMUNICATION_TASK_INFO"] += 1
            else:
                want["COMPUTE_TASK_INFO"] += 1
        elif cat in ("gpu_memcpy", "gpu_memset"):
            want["TASK"] += 1
            want["MEMCPY_INFO"] += 1
        elif cat in ("cuda_runtime", "cuda_driver"):
            want["CANN_API"] += 1
        elif cat in ("cpu_op", "user_annotation"):
            want["PYTORCH_API"] += 1
            if name.startswith("ProfilerStep#"):
                steps.add(name)
        elif cat == "python_function":
            pass
        else:
            want["TB_EVENT"] += 1
    want["TB_FLOW"] = sum(max(s, f) for s, f in flows.values())
    want["STEP_TIME"] = len(steps)
    return events, names, want, layer_x


def main():
    tb, data, out = tbtest.args("TRACEBOOK SHARED_DATA_DIR OUT_DIR", 3, 3)
    tbtest.need_dirs(data)
    os.makedirs(out, exist_ok=True)
    tables = ["TASK", "COMPUTE_TASK_INFO", "COMMUNICATION_OP", "COMMUNICATION_TASK_INFO", "MEMCPY_INFO",
              "CANN_API", "PYTORCH_API", "STEP_TIME", "OVERLAP_ANALYSIS", "MSTX_EVENTS", "TB_FLOW",
              "TB_COUNTER", "TB_EVENT"]
    for rel in TRACES:
        path = os.path.join(data, rel)
        db = os.path.join(out, os.path.basename(rel) + ".db")
        if os.path.exists(db):
            os.unlink(db)
        r = tbtest.run([tb, "export", "db", "-dir", path, "-o", db, "--quiet"])
        if r.returncode != 0:
            T.fail("%s: exit %d: %s" % (rel, r.returncode, r.stderr.strip()))
            continue
        events, names, want, layer_x = expected(load(path))
        for t in tables:
            T.eq(sql1(db, "SELECT count(*) FROM %s" % t), want.get(t, 0), "%s %s rows" % (rel, t))
        # X events per named layer, counted from the rows that carry the layer's pid
        for pid, layer in names.items():
            if layer not in ASCEND_LAYERS or not layer_x.get(layer):
                continue
            if layer in ("Ascend Hardware", "Task Scheduler"):
                got = sql1(db, "SELECT count(*) FROM TASK WHERE globalPid = %s" % pid)
            elif layer == "CANN":
                got = sql1(db, "SELECT count(*) FROM CANN_API WHERE globalTid >> 32 = %s" % pid)
            elif layer == "Python":
                got = sql1(db, "SELECT count(*) FROM PYTORCH_API WHERE globalTid >> 32 = %s" % pid)
            elif layer == "Overlap Analysis":
                got = sql1(db, "SELECT count(*) FROM OVERLAP_ANALYSIS")
            else:
                continue
            want_x = sum(1 for e in events if e.get("ph") == "X" and str(e.get("pid")) == pid and "ts" in e
                         and not (layer == "Python" and e.get("cat") == "python_function"))
            T.eq(got, want_x, "%s X events of layer %r (pid %s)" % (rel, layer, pid))
        # every event accounted for
        total = sql1(db, "SELECT sum(events) FROM TB_LOAD_COUNT WHERE dest NOT IN"
                         " ('COMPUTE_TASK_INFO', 'MEMCPY_INFO', 'STEP_TIME', 'COMMUNICATION_TASK_INFO',"
                         "  'COMPUTE_TASK_INFO.opType from the name')"
                         " AND NOT (dest = 'COMMUNICATION_OP' AND sourceId IN"
                         "  (SELECT id FROM TB_SOURCE WHERE kind = 'kineto'))")
        T.eq(total, len(events), "%s events accounted for" % rel)
        # a trace gives no kernel type: every typed kernel's type was taken from its name
        T.eq(sql1(db, "SELECT coalesce(sum(events), 0) FROM TB_LOAD_COUNT"
                      " WHERE dest = 'COMPUTE_TASK_INFO.opType from the name'"),
             sql1(db, "SELECT count(*) FROM COMPUTE_TASK_INFO WHERE opType IS NOT NULL"),
             "%s kernel types from names" % rel)
        T.eq(sql1(db, "SELECT rowsRead FROM TB_SOURCE"), len(events), "%s TB_SOURCE rowsRead" % rel)
        # exact ns: the earliest and latest task starts equal the decimal text
        task_ts = [ns(e["ts"]) for e in events if e.get("ph") == "X" and "ts" in e and (
            names.get(str(e.get("pid"))) in ("Ascend Hardware", "Task Scheduler")
            or (names.get(str(e.get("pid"))) not in ASCEND_LAYERS
                and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")))]
        if task_ts:
            T.eq(sql1(db, "SELECT min(startNs) FROM TASK"), min(task_ts), "%s min TASK.startNs" % rel)
            T.eq(sql1(db, "SELECT max(startNs) FROM TASK"), max(task_ts), "%s max TASK.startNs" % rel)
            T.eq(sql1(db, "SELECT sum(startNs - (SELECT min(startNs) FROM TASK)) FROM TASK"),
                 sum(t - min(task_ts) for t in task_ts), "%s sum TASK.startNs" % rel)
        # schema version and the views answer
        T.eq(sql(db, "SELECT value FROM META_DATA WHERE name = 'SCHEMA_VERSION'"), [["1.2.0"]],
             "%s SCHEMA_VERSION" % rel)
        T.eq(sql1(db, "SELECT count(*) FROM kernel"), want.get("COMPUTE_TASK_INFO", 0), "%s kernel view rows" % rel)
        print("ok   %s: %d events" % (rel, len(events)))
    print("%d traces" % len(TRACES))
    return T.finish()


sys.exit(main())
