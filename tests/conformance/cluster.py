#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# cluster.py - conformance of the cluster reports (reports/cluster.yaml,
# engine/metrics/cluster.c) on the shared public msprof-analyze output.
#
# Each check runs the tracebook command on a shared folder or file and compares
# its CSV with an answer computed here, independently, from the input files:
#   - cluster_step_trace_time on cluster_analysis_output/: the header is
#     msprof-analyze's, the rank rows are the file's, and every stage row of
#     cluster_step_trace_time.csv (p2p groups [0..7], [8..15] of
#     communication_group.json) and of cluster_step_trace_time_8ranks.csv (one
#     stage) is reproduced, value for value (the files write 0 and 0.0 and
#     floats as Python prints them: compared as numbers);
#   - the 8-rank file loaded alone (no groups: one stage) and with the group
#     file (p2p groups restricted to its ranks: one stage), the 16-rank file
#     alone (one stage of all ranks, the max computed here);
#   - slow_rank_op and slow_rank against the elapse times of
#     cluster_communication.json (transmit = least time of a collective op
#     over its ranks, wait = time - transmit, ranks by total wait);
#   - communication_matrix against cluster_communication_matrix.json;
#   - the two torch_npu ranks: rank rows from their step_trace_time.csv (the
#     metrics.cluster.rank_source option), one stage of both, and slow_rank_op
#     from their communication.json files.
# Times are compared in integer ns (--timeunit ns): the loader rounds the JSON
# milliseconds half away from zero to the ns, as done here with Decimal.
# usage: cluster.py TRACEBOOK SHARED_DATA_DIR OUT_DIR
# Exit 77 (skip) when the shared data is absent. Writes only under OUT_DIR.
import csv
import decimal
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

T = tbtest.Checks()


def ns(ms):
    """ms (a Decimal from the JSON text) as ns, rounded half away from zero."""
    return int((ms * 1000000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def load_json(path):
    with open(path) as f:
        return json.load(f, parse_float=decimal.Decimal, parse_int=decimal.Decimal)


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def num(s):
    return None if s == "" else float(s)


def run(tb, out, inputs, spec, env):
    if os.path.isdir(out):
        shutil.rmtree(out)
    cmd = [tb, "report", "-q", "--timeunit", "ns", "-o", out, "--spec", spec]
    for i in inputs:
        cmd += ["-dir", i]
    p = tbtest.run(cmd, env=env)
    if p.returncode != 0:
        T.fail("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
        return None
    return out


def step_rows(path):
    """(header, {(step, type, index): [numbers]}) of a cluster step trace CSV."""
    header, rows = read_csv(path)
    return header, {(r[0], r[1], r[2]): [num(x) for x in r[3:]] for r in rows}


def compare_rows(what, got, want, types=("rank", "stage")):
    g = {k: v for k, v in got.items() if k[1] in types}
    w = {k: v for k, v in want.items() if k[1] in types}
    T.eq(sorted(g), sorted(w), what + ": rows")
    # tracebook writes reals to 15 significant digits (the 16th and 17th are binary noise)
    for k in sorted(set(g) & set(w)):
        T.eq(g[k], [x if x is None else float("%.15g" % x) for x in w[k]], "%s: row %s" % (what, k))


def stage_max(rows, step, ranks):
    """The max over ranks of each field of the rank rows of step."""
    vals = [rows[(step, "rank", str(r))] for r in ranks]
    return [max(col) for col in zip(*vals)]


def step_trace_checks(tb, folder, out, env):
    csv16 = os.path.join(folder, "cluster_step_trace_time.csv")
    csv8 = os.path.join(folder, "cluster_step_trace_time_8ranks.csv")
    groups = os.path.join(folder, "communication_group.json")
    spec = "builtin:cluster_step_trace_time"
    h16, want16 = step_rows(csv16)
    h8, want8 = step_rows(csv8)
    p2p = [sorted(int(r) for r in g) for g in load_json(groups)["p2p"]]
    T.eq(p2p, [list(range(8)), list(range(8, 16))], "p2p groups of the sample")

    # the whole folder: both CSVs (steps "2" and ""), the group file
    d = run(tb, os.path.join(out, "folder"), [folder], spec, env)
    if d:
        header, got = step_rows(os.path.join(d, "cluster_step_trace_time.csv"))
        T.eq(header, h16, "header")
        want = dict(want16)
        want.update(want8)
        compare_rows("folder", got, want)
        n_stage = sum(1 for k in want if k[1] == "stage")
        T.eq(sum(1 for k in got if k[1] == "stage"), n_stage, "folder: stage rows")

    # the 8-rank file alone (no groups) and with the group file: one stage
    for name, inputs in (("8ranks", [csv8]), ("8ranks+groups", [csv8, groups])):
        d = run(tb, os.path.join(out, name), inputs, spec, env)
        if d:
            header, got = step_rows(os.path.join(d, "cluster_step_trace_time.csv"))
            T.eq(header, h8, name + ": header")
            compare_rows(name, got, want8)

    # the 16-rank file alone: one stage of all ranks, the max over all 16
    d = run(tb, os.path.join(out, "16ranks"), [csv16], spec, env)
    if d:
        _, got = step_rows(os.path.join(d, "cluster_step_trace_time.csv"))
        ranks = list(range(16))
        idx = "(" + ", ".join(str(r) for r in ranks) + ")"
        want = {k: v for k, v in want16.items() if k[1] == "rank"}
        want[("2", "stage", idx)] = stage_max(want16, "2", ranks)
        compare_rows("16ranks alone", got, want)
        # and the two stages of the sample are the max over their p2p group
        for g in p2p:
            idx = "(" + ", ".join(str(r) for r in g) + ")"
            T.eq(want16[("2", "stage", idx)], stage_max(want16, "2", g), "stage %s = max over its ranks" % idx)


def op_times(per_rank):
    """{(step, op, group): {rank: ns}} -> slow_rank_op rows and slow_rank rows, as computed here."""
    ops = []
    for (step, op, group), t in per_rank.items():
        transmit = min(t.values())
        for rank, v in t.items():
            ops.append((step, op, group, rank, len(t), v, transmit, v - transmit))
    totals = {}
    for step, op, group, rank, n, v, transmit, wait in ops:
        a = totals.setdefault(rank, [0, 0, 0, 0, 0])
        a[0] += 1
        a[1] += v
        a[2] += wait
        a[3] = max(a[3], wait)
        a[4] += 1 if n > 1 and wait == 0 else 0
    order = sorted(totals, key=lambda r: (totals[r][2], r))
    ranking = [(pos + 1, r, *totals[r]) for pos, r in enumerate(order)]
    return sorted(ops), ranking


def slow_rank_checks(tb, name, inputs, spec, per_rank, out, env):
    d = run(tb, os.path.join(out, name), inputs, spec, env)
    if not d:
        return
    want_ops, want_rank = op_times(per_rank)
    header, rows = read_csv(os.path.join(d, "slow_rank_op.csv"))
    T.eq(header, ["Step", "Op Name", "Group", "Rank", "Ranks", "Time(ns)", "Transmit Time(ns)", "Wait Time(ns)"],
         name + ": slow_rank_op header")
    got = sorted((r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5]), int(r[6]), int(r[7])) for r in rows)
    T.eq(got, want_ops, name + ": slow_rank_op rows")
    header, rows = read_csv(os.path.join(d, "slow_rank.csv"))
    T.eq(header, ["Position", "Rank", "Ops", "Total Time(ns)", "Total Wait(ns)", "Max Wait(ns)", "Wait Ratio(%)",
           "Last Arrivals"], name + ": slow_rank header")
    got = [(int(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5]), int(r[7])) for r in rows]
    T.eq(got, want_rank, name + ": slow_rank rows")
    for r in rows:
        want_ratio = 100.0 * int(r[4]) / int(r[3]) if int(r[3]) else None
        got_ratio = num(r[6])
        if want_ratio is None or got_ratio is None:
            T.eq(got_ratio, want_ratio, name + ": wait ratio of rank " + r[1])
        elif abs(got_ratio - want_ratio) > 1e-9 * max(1.0, abs(want_ratio)):
            T.fail("%s: wait ratio of rank %s: got %r, want %r" % (name, r[1], got_ratio, want_ratio))


def cluster_comm_times(path):
    """Collective op times per (step, op, group) and rank from cluster_communication.json."""
    per = {}
    for key, steps in load_json(path).items():
        if key == "p2p":
            continue
        for step, ops in steps.items():
            for opkey, ranks in ops.items():
                if opkey == "Total Op Info":
                    continue
                op, group = opkey.rsplit("@", 1)
                for rank, info in ranks.items():
                    t = info["Communication Time Info"]["Elapse Time(ms)"]
                    per.setdefault((step[4:], op, group), {})[int(rank)] = ns(t)
    return per


def rank_comm_times(paths):
    """The same from the per-rank communication.json files {rank: path}."""
    per = {}
    for rank, path in paths.items():
        for step, kinds in load_json(path).items():
            for opkey, info in kinds.get("collective", {}).items():
                if opkey == "Total Op Info":
                    continue
                op, group = opkey.rsplit("@", 1)
                t = info["Communication Time Info"]["Elapse Time(ms)"]
                per.setdefault((step[4:], op, group), {})[rank] = ns(t)
    return per


def matrix_checks(tb, folder, out, env):
    d = run(tb, os.path.join(out, "matrix"), [folder], "builtin:communication_matrix", env)
    if not d:
        return
    want = []
    for key, steps in load_json(os.path.join(folder, "cluster_communication_matrix.json")).items():
        for step, ops in steps.items():
            for opkey, links in ops.items():
                if opkey == "Total Op Info":
                    continue
                op, group = opkey.rsplit("@", 1)
                kind = "p2p" if key == "p2p" else "collective"
                for link, v in links.items():
                    src, dst = link.split("-")
                    size = int((v["Transit Size(MB)"] * 1000000).quantize(decimal.Decimal(1),
                                                                          rounding=decimal.ROUND_HALF_UP))
                    want.append((step[4:], kind, op, group, int(src), int(dst), v["Transport Type"], size,
                                 ns(v["Transit Time(ms)"]), float(v["Bandwidth(GB/s)"])))
    header, rows = read_csv(os.path.join(d, "communication_matrix.csv"))
    T.eq(header, ["Step", "Op Kind", "Op Name", "Group", "Src Rank", "Dst Rank", "Transport Type", "Transit Size(B)",
           "Transit Time(ns)", "Bandwidth(GB/s)"], "communication_matrix header")
    got = sorted((r[0], r[1], r[2], r[3], int(r[4]), int(r[5]), r[6], int(r[7]), int(r[8]), float(r[9]))
                 for r in rows)
    T.eq(got, sorted(want), "communication_matrix rows")


def torch_npu_checks(tb, data, out, env):
    ranks = {r: os.path.join(data, "ascend", "torch_npu_rank%d" % r) for r in (0, 1)}
    if not all(os.path.isdir(p) for p in ranks.values()):
        return
    os.makedirs(out, exist_ok=True)
    spec = os.path.join(out, "rank_source.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\n"
                "metrics: {cluster: {rank_source: TB_STEP_TRACE_TIME}}\n"
                "reports:\n"
                "  - use: cluster_step_trace_time\n"
                "  - use: slow_rank_op\n"
                "  - use: slow_rank\n")
    d = run(tb, os.path.join(out, "torch_npu"), list(ranks.values()), spec, env)
    if d:
        _, got = step_rows(os.path.join(d, "cluster_step_trace_time.csv"))
        want = {}
        for r, p in ranks.items():
            header, rows = read_csv(os.path.join(p, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"))
            skip = 1 if header[0] == "Device_id" else 0  # columns after Step
            for row in rows:
                want[(row[skip], "rank", str(r))] = [num(x) for x in row[skip + 1:]]
        steps = sorted({k[0] for k in want})
        for s in steps:
            want[(s, "stage", "(0, 1)")] = stage_max(want, s, [0, 1])
        compare_rows("torch_npu ranks", got, want)
    comm = {r: os.path.join(p, "ASCEND_PROFILER_OUTPUT", "communication.json") for r, p in ranks.items()}
    if all(os.path.isfile(p) for p in comm.values()):
        slow_rank_checks(tb, "torch_npu_slow_rank", list(ranks.values()), spec, rank_comm_times(comm), out, env)


def main():
    tb, data, out = tbtest.args("TRACEBOOK SHARED_DATA_DIR OUT_DIR", 3, 3)
    tbtest.need_dirs(data)
    folder = os.path.join(data, "ascend", "cluster_analysis_output")
    tbtest.need_dirs(folder)
    tbtest.fresh_dir(out)
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(out, "xdg-cache"))

    step_trace_checks(tb, folder, out, env)
    os.makedirs(os.path.join(out, "spec"), exist_ok=True)
    spec = os.path.join(out, "spec", "slow.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nreports:\n  - use: slow_rank_op\n  - use: slow_rank\n")
    slow_rank_checks(tb, "cluster_slow_rank", [folder], spec,
                     cluster_comm_times(os.path.join(folder, "cluster_communication.json")), out, env)
    matrix_checks(tb, folder, out, env)
    torch_npu_checks(tb, data, os.path.join(out, "torch_npu"), env)

    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
