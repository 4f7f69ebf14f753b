#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# mixed_vendors.py - the computed tables on the shared data of three vendors
# loaded together, and exposed_time on the shared torch_npu timeline.
#
#   - exposed_time on ascend/torch_npu_timeline (an older torch_npu timeline:
#     a task's connection_id is not its launching call's; only HostToDevice
#     flows join them) has a row, and its numbers are those computed here
#     from the raw JSON: the Ascend Hardware tasks at the finish of a
#     HostToDevice flow whose start lies inside a CANN call on its thread
#     (all of them compute tasks), their span, union and idle time;
#   - ascend/torch_npu_timeline (one ProfilerStep), the Kineto
#     ns_resolution_trace (five) and the topsprof listings (a statistics
#     listing without device tasks, a trace listing without host calls),
#     loaded together in both orders: every rank with device tasks has rows
#     in step_trace_time, overlap_lanes, temporal_breakdown, comm_comp_overlap,
#     idle_time_breakdown, exposed_time and kernel_breakdown, equal to a run
#     on it alone; the rank without device tasks is named in a note per
#     computed table (tests/cli/mixed_ranks_test.py does the work).
# usage: mixed_vendors.py TRACEBOOK SHARED_DATA_DIR OUT_DIR
# Exit 77 (skip) when the shared data is absent. Writes only under OUT_DIR.
import csv
import decimal
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import tbtest  # noqa: E402
_spec = importlib.util.spec_from_file_location("mixed_ranks_test",
                                               os.path.join(HERE, "..", "cli", "mixed_ranks_test.py"))
mr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mr)


def ns(us):
    """A trace's decimal µs (string or number) in ns, to the nearest."""
    return int((decimal.Decimal(str(us)) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def expected_exposed(path):
    """(total, computation, idle, linked tasks) of the timeline's linked tasks, in ns."""
    with open(path) as f:
        doc = json.load(f)
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    calls = {}
    for e in events:
        if e.get("ph") == "X" and names.get(e["pid"]) == "CANN":
            s = ns(e["ts"])
            calls.setdefault((e["pid"], e["tid"]), []).append((s, s + ns(e["dur"])))
    starts = {}
    for e in events:
        if e.get("ph") == "s" and e.get("cat") == "HostToDevice":
            t = ns(e["ts"])
            if any(a <= t <= b for a, b in calls.get((e["pid"], e["tid"]), [])):
                starts[e["id"]] = t
    finishes = {(e["pid"], e["tid"], ns(e["ts"])) for e in events
                if e.get("ph") == "f" and e.get("cat") == "HostToDevice" and e["id"] in starts}
    tasks = []
    for e in events:
        if e.get("ph") == "X" and names.get(e["pid"]) == "Ascend Hardware":
            s = ns(e["ts"])
            if (e["pid"], e["tid"], s) in finishes:
                tasks.append((s, ns(decimal.Decimal(str(e["ts"])) + decimal.Decimal(str(e["dur"])))))
    tasks.sort()
    union, end = 0, None
    for s, e in tasks:
        if end is None or s > end:
            union += e - s
            end = e
        elif e > end:
            union += e - end
            end = e
    total = max(e for _, e in tasks) - tasks[0][0]
    return total, union, total - union, len(tasks)


def main():
    tb, data, out = tbtest.args("TRACEBOOK SHARED_DATA_DIR OUT_DIR", 3, 3)
    timeline = os.path.join(data, "ascend", "torch_npu_timeline")
    kineto = os.path.join(data, "kineto", "ns_resolution_trace")
    tops = os.path.join(data, "topsprof")
    tbtest.need_dirs(timeline, kineto, tops)
    tbtest.fresh_dir(out)

    # exposed_time on the timeline alone
    o = os.path.join(out, "exposed")
    r = tbtest.run([tb, "report", "-dir", timeline, "--spec", "builtin:exposed_time", "--timeunit", "ns", "-o", o])
    mr.T.check(r.returncode == 0, "exposed_time on the torch_npu timeline runs", r.stderr.strip())
    if r.returncode == 0:
        with open(os.path.join(o, "exposed_time.csv"), newline="") as f:
            rows = {row[1]: float(row[2]) for row in list(csv.reader(f))[1:]}
        total, comp, idle, n = expected_exposed(os.path.join(timeline, "trace_view.json"))
        mr.T.check("total_time" in rows and n > 0,
                   "exposed_time on the torch_npu timeline has a row (%d linked tasks)" % n, repr(rows))
        # ms as written; the trace's sub-ns durations may round either way: 1 ns a task
        for key, want in (("total_time", total), ("computation_time", comp), ("idle_time", idle),
                          ("exposed_comm_time", 0), ("exposed_memcpy_time", 0)):
            got = rows.get(key)
            mr.T.check(got is not None and abs(got * 1e6 - want) <= n, "exposed_time %s %s ns" % (key, want),
                       "got %r ms" % got)

    spec = os.path.join(out, "tables.yaml")
    mr.write_spec(spec)
    mr.check_mixed(tb, spec, [timeline, kineto, tops], os.path.join(out, "mixed"), 4, 3)
    return mr.T.finish()


if __name__ == "__main__":
    sys.exit(main())
