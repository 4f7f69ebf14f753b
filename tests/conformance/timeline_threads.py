#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeline_threads.py - `tracebook export timeline` gives back the thread
# names of a public trace as the input had them (docs/timeline.md
# "Processes and threads"), also where a thread is named twice: every
# public Kineto trace names one thread twice (`thread 1262
# (pt_main_thread)`, then `thread 1262 (pt_autograd_0)`; the H100 trace the
# same name twice), and both must come back, in the input's order.
#
# Each public Ascend timeline and Kineto trace is loaded and its DB exported
# as a timeline; for every (pid, tid) the input names, the output's
# thread_name events of that pid and tid must be the input's, in order.
# At least one input must name a thread twice (else the test proves
# nothing and fails).
# usage: timeline_threads.py TRACEBOOK SHARED_DATA_DIR OUT_DIR
# Exit 77 (skip) when the shared data is absent.
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import tbtest  # noqa: E402

TRACES = [
    "ascend/torch_npu_timeline/trace_view.json",
    "ascend/misc/trace_view_tiny.json",
    "kineto/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "kineto/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "kineto/tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "kineto/tracelens/mi300/resnet_act_checkpoint.json.gz",
]

T = tbtest.Checks()
check = T.check


def names(evs):
    """The thread_name names of each (pid, tid), in order."""
    out = collections.defaultdict(list)
    for e in evs:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            out[(json.dumps(e.get("pid")), json.dumps(e.get("tid")))].append((e.get("args") or {}).get("name"))
    return out


def compare(tb, rel, data, out):
    """1 when the input names a thread twice."""
    src = os.path.join(data, rel)
    name = os.path.basename(rel).split(".")[0]
    d = os.path.join(out, name)
    db = os.path.join(out, name + ".db")
    p = tbtest.run([tb, "export", "db", "-dir", src, "-o", db, "-q"])
    check(p.returncode == 0, "%s: export db exited %d: %s" % (rel, p.returncode, p.stderr))
    p = tbtest.run([tb, "export", "timeline", "-dir", db, "-o", d, "-q"])
    check(p.returncode == 0, "%s: export timeline exited %d: %s" % (rel, p.returncode, p.stderr))
    files = p.stdout.split()
    check(len(files) == 1, "%s: one file, got %r" % (rel, files))
    if p.returncode != 0 or len(files) != 1:
        return 0
    a, b = names(tbtest.trace_events(src)), names(tbtest.trace_events(files[0]))
    for k, v in a.items():
        check(b.get(k) == v, "%s: pid %s tid %s named %r, written back as %r" % (rel, k[0], k[1], v, b.get(k)))
    twice = sum(1 for v in a.values() if len(v) > 1)
    print("%s: %d threads named, %d of them more than once" % (rel, len(a), twice))
    return 1 if twice else 0


def main():
    tb, data, out = tbtest.args("TRACEBOOK SHARED_DATA_DIR OUT_DIR", 3, 3)
    tbtest.need_dirs(data)
    os.makedirs(out, exist_ok=True)
    twice = sum(compare(tb, rel, data, out) for rel in TRACES)
    check(twice > 0, "no input names a thread twice: the test proves nothing")
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
