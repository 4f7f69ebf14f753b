#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeline.py - conformance of `tracebook export timeline` on the shared
# public data.
#
# Every public trace (Ascend timelines, Kineto traces), the public msprof DB
# and the torch_npu CSV export of rank 0 are loaded, exported as timelines
# and loaded again (tests/cli/timeline_roundtrip.py does the work): every
# file must parse strictly (duplicate keys rejected), name every pid, pair
# every flow and give X events with name, pid, tid, ts and dur. A trace must
# come back with the same task, op, API, step, lane, flow and counter rows;
# a DB or CSV input, which has no process metadata and details of its own,
# with the same times, devices, streams and names. Then the public msprof
# configuration files: the reports_sample_config.json (which has a key
# msprof does not know, so msprof exports every layer) gives the same events
# as no spec, and the msprof_slice.json (slicing off) gives one file.
# usage: timeline.py TRACEBOOK SHARED_DATA_DIR OUT_DIR
# Exit 77 (skip) when the shared data is absent.
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import tbtest  # noqa: E402
spec = importlib.util.spec_from_file_location("timeline_roundtrip", os.path.join(HERE, "..", "cli",
                                                                                "timeline_roundtrip.py"))
rt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rt)

TRACES = [
    "ascend/torch_npu_timeline/trace_view.json",
    "ascend/misc/trace_view_tiny.json",
    "ascend/misc/trace_view_heatmap.json",
    "kineto/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "kineto/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "kineto/tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "kineto/tracelens/mi300/resnet_act_checkpoint.json.gz",
]
LOOSE = ["ascend/msprof_db/msprof_0.db", "ascend/torch_npu_rank0"]


def main():
    tb, data, out = tbtest.args("TRACEBOOK SHARED_DATA_DIR OUT_DIR", 3, 3)
    tbtest.need_dirs(data)
    os.makedirs(out, exist_ok=True)
    for rel in TRACES + LOOSE:
        name = os.path.basename(rel.rstrip("/")).split(".")[0]
        rt.roundtrip(tb, name, [os.path.join(data, rel)], out, loose=rel in LOOSE)

    # msprof's configuration files
    trace = os.path.join(data, "ascend/torch_npu_timeline/trace_view.json")
    counts = []
    for extra in ([], ["-reports", os.path.join(data, "ascend/msprof_config/reports_sample_config.json")],
                  ["--slice-config", os.path.join(data, "ascend/msprof_config/msprof_slice.json")]):
        d = os.path.join(out, "config%d" % len(counts))
        p = rt.run([tb, "export", "timeline", "-dir", trace, "-o", d, "-q"] + extra)
        files = p.stdout.split()
        rt.check(len(files) == 1, "%s: one file, got %r" % (extra, files))
        counts.append(sum(len(rt.check_file(f)[0]) for f in files))
    rt.check(counts[0] == counts[1] == counts[2], "events with and without the msprof files: %r" % counts)
    print("msprof configuration files: %r events" % counts)
    return rt.T.finish()


if __name__ == "__main__":
    sys.exit(main())
