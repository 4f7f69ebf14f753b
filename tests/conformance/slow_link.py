#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# slow_link.py - the built-in reports slow_link and slow_link_summary on the
# shared cluster_analysis_output, against msprof-analyze's own figures.
#
# REFERENCE is what msprof-analyze's advisor (its ClusterCommunicationDataset,
# the class's source run unchanged) computes from that folder's
# cluster_communication.json, kept here: per step and rank the RDMA and SDMA
# bandwidth, and the sizes and times it sums. Its sums also take the file's
# "Total Op Info" entry of a group, which holds the group's ops again: the p2p
# group's send counts twice there (RDMA size 41.94304, time 1.7276308125 on
# rank 0). tracebook sums the ops, so sizes and times are compared with the
# figures of the same code on the file without those entries (the bandwidth,
# a ratio, is the same either way, and so is the summary built on it).
# usage: slow_link.py TRACEBOOK SHARED_DATA_DIR OUT_DIR
# Exit 77 (skip) when the shared data is absent. Writes only under OUT_DIR.
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, DATA, OUT = (os.path.abspath(a) for a in tbtest.args("TRACEBOOK SHARED_DATA_DIR OUT_DIR", 3, 3))
CLUSTER = os.path.join(DATA, "ascend", "cluster_analysis_output")
tbtest.need_dirs(CLUSTER)

HEAD = ["step", "rank_id", "RDMA bandwidth(GB/s)", "RDMA size(mb)", "RDMA time(ms)", "SDMA bandwidth(GB/s)",
        "SDMA size(mb)", "SDMA time(ms)"]
# msprof-analyze, "Total Op Info" left out of the file: step_rank -> values in HEAD's order from the third
REFERENCE = {
    "2_0": [24.2778, 20.97152, 0.86381540625, 9.2873, 0.114576, 0.012336796875000002],
    "2_1": [24.2777, 20.97152, 0.86382, 9.0935, 0.131128, 0.014419999999999999],
}
# msprof-analyze's own bandwidths on the file as it is (with "Total Op Info")
BANDWIDTH = {"2_0": (24.2778, 9.2873), "2_1": (24.2777, 9.0935)}
# its bottleneck: average (3 places), max, min, difference per link type
SUMMARY = {"RDMA": (24.278, 24.278, 24.278, 0.0), "SDMA": (9.19, 9.287, 9.094, 0.194)}

T = tbtest.Checks(verbose=True)


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def main():
    out = tbtest.fresh_dir(os.path.join(OUT, "slow_link"))
    r = tbtest.run([TB, "report", "-q", "-dir", CLUSTER, "--spec", "builtin:slow_link", "--spec",
                    "builtin:slow_link_summary", "-o", out])
    if not T.eq(r.rc, 0, "exit code (stderr: %s)" % r.err.strip()):
        sys.exit(T.finish())
    got = rows(os.path.join(out, "slow_link.csv"))
    T.eq(got[0], HEAD, "slow_link's header, msprof-analyze's detail headers")
    T.eq(["%s_%s" % (g[0], g[1]) for g in got[1:]], list(REFERENCE), "one row per step and rank, in order")
    for g in got[1:]:
        key = "%s_%s" % (g[0], g[1])
        want = REFERENCE.get(key, [])
        for name, v, w in zip(HEAD[2:], g[2:], want):
            T.check(abs(float(v) - w) <= 1e-12 * max(1.0, abs(w)), "%s %s" % (key, name), "%s vs %r" % (v, w))
        T.eq((float(g[2]), float(g[5])), BANDWIDTH.get(key), "%s: the bandwidths of msprof-analyze on the file" % key)
    summary = rows(os.path.join(out, "slow_link_summary.csv"))
    T.eq(summary[0], ["Link Type", "Average(GB/s)", "Max(GB/s)", "Min(GB/s)", "Difference(GB/s)"], "summary header")
    T.eq({s[0]: tuple(float(x) for x in s[1:]) for s in summary[1:]}, SUMMARY, "the bottleneck figures")
    sys.exit(T.finish())


main()
