#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# hta_read_test.py - the HTA tables built on each rank's device tasks (the
# counters, call_stack, straggler_metric, critical_path) read those tasks and the
# ProfilerSteps once per run: the first table built keeps the read, the
# later ones under the same options and window replay it
# (engine/metrics/hta_read.c). A replay must give each table exactly what a
# read of its own gives (a replayed task or step changed fails it):
#
#   - a generated two-rank Kineto load (tracebook-gen --kind kineto, ranks 0
#     and 1 of 2, with communication kernels and ProfilerSteps): every file
#     of `report --spec builtin:hta` (one run, every table after the first
#     replaying) equals the files of each of its reports run alone (each
#     table reading for itself), byte for byte;
#   - the same under a step window (--model-id 4294967295 --iteration-id,
#     the window's views are part of the key);
#   - two specs in one run whose metrics options differ (hta.round_us on,
#     then off): the second spec's tables read again, so its
#     kernel_launch_stats equals that of a run of the second spec alone
#     (exact ns as µs, not the first spec's whole µs);
#   - the critical path built after builtin:hta's tables (it replays their
#     read) equals its run alone.
# usage: hta_read_test.py TRACEBOOK TRACEBOOK_GEN OUT_DIR
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

T = tbtest.Checks()


def files_of(d):
    got = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".csv"):
            with open(os.path.join(d, name), "rb") as f:
                got[name] = f.read()
    return got


def report(exe, srcs, out, *args):
    argv = [exe, "report", "-q", "-o", out]
    for s in srcs:
        argv += ["-dir", s]
    r = tbtest.run(argv + list(args))
    T.check(r.returncode == 0, "report %s" % " ".join(args), r.stderr)
    return files_of(out) if r.returncode == 0 else {}


def whole_vs_alone(exe, srcs, out, tag, window):
    whole = report(exe, srcs, os.path.join(out, tag + "-whole"), "--spec", "builtin:hta", *window)
    T.check(len(whole) >= 10, "%s: builtin:hta writes its files" % tag, repr(sorted(whole)))
    for rid in HTA_REPORTS:
        alone = report(exe, srcs, os.path.join(out, "%s-%s" % (tag, rid)), "--spec", "builtin:hta", "--report", rid,
                       *window)
        T.check(len(alone) > 0, "%s: %s alone writes a file" % (tag, rid))
        for name, data in alone.items():
            T.check(whole.get(name) == data, "%s: %s of the whole run equals %s run alone" % (tag, name, rid),
                    "%d bytes whole, %d alone" % (len(whole.get(name) or b""), len(data)))


# the reports of builtin:hta that read the tables built on the tasks
HTA_REPORTS = ["queue_length_summary", "queue_length", "queue_full_time", "kernel_launch_stats",
               "kernel_launch_outliers", "memory_bw_summary", "memory_bw", "gpu_user_annotation_breakdown",
               "aten_op_kernels", "frequent_kernel_sequences", "potential_stragglers", "straggler_metric"]

SPEC_TWO = """tracebook: 1
reports:
  - id: stats_us
    scope: rank
    requires: [TASK]
    sql: >-
      SELECT rank, correlation, cpu_duration, gpu_duration, launch_delay
      FROM kernel_launch_stats ORDER BY rank, correlation
"""


def two_options(exe, srcs, out):
    """Two specs in one run, hta.round_us on then off: the second reads again."""
    on = os.path.join(out, "on.yaml")
    off = os.path.join(out, "off.yaml")
    with open(on, "w") as f:
        f.write(SPEC_TWO)
    with open(off, "w") as f:
        f.write(SPEC_TWO.replace("reports:\n", "metrics:\n  hta:\n    round_us: false\nreports:\n")
                .replace("id: stats_us", "id: stats_ns"))
    both = report(exe, srcs, os.path.join(out, "two-both"), "--spec", on, "--spec", off)
    alone = report(exe, srcs, os.path.join(out, "two-off"), "--spec", off)
    T.check("stats_ns.csv" in both and "stats_us.csv" in both, "two specs: both files", repr(sorted(both)))
    T.check(both.get("stats_ns.csv") == alone.get("stats_ns.csv"),
            "two specs: the second spec's options are read again (equals its run alone)")
    T.check(both.get("stats_ns.csv") != both.get("stats_us.csv"),
            "two specs: exact ns differ from whole µs (the check can tell the reads apart)")


def critical_path_after(exe, srcs, out):
    """The critical path built after builtin:hta's tables replays their
    read: its file equals a run of it alone."""
    both = report(exe, srcs, os.path.join(out, "cp-after"), "--spec", "builtin:hta", "--spec",
                  "builtin:critical_path")
    alone = report(exe, srcs, os.path.join(out, "cp-alone"), "--spec", "builtin:critical_path")
    T.check(alone.get("critical_path.csv", b"").count(b"\n") > 1, "critical_path alone: rows")
    T.check(both.get("critical_path.csv") == alone.get("critical_path.csv"),
            "critical_path after builtin:hta equals its run alone")


def main():
    exe, gen, out = sys.argv[1:4]
    tbtest.fresh_dir(out)
    srcs = []
    for rank in (0, 1):
        path = os.path.join(out, "rank%d.pt.trace.json" % rank)
        r = tbtest.run([gen, "--kind", "kineto", "--events", "30000", "--seed", "7", "--ranks", "2", "--rank",
                        str(rank), "-o", path])
        if not T.check(r.returncode == 0, "tracebook-gen rank %d" % rank, r.stderr):
            return T.finish()
        srcs.append(path)
    whole_vs_alone(exe, srcs, out, "all", [])
    whole_vs_alone(exe, srcs, out, "window", ["--model-id", "4294967295", "--iteration-id", "10",
                                              "--iteration-count", "3"])
    two_options(exe, srcs, out)
    critical_path_after(exe, srcs, out)
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
