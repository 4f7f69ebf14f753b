#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# cluster.py - conformance of the cluster reports (reports/cluster.yaml,
# engine/metrics/cluster.c) on the shared public msprof-analyze output.
#
# Each check runs the tracebook command on a shared folder or file and compares
# its CSV with an answer computed here, independently, from the input files:
#   - cluster_step_trace_time on cluster_analysis_output/: the header is
#     msprof-analyze's, the rank rows and the stage rows are the files' own
#     (cluster_step_trace_time.csv: stages [0..7], [8..15], each the max of
#     its ranks; cluster_step_trace_time_8ranks.csv: one stage), value for
#     value (the files write 0 and 0.0 and floats as Python prints them:
#     compared as numbers);
#   - the 8-rank file loaded alone and with the group file, the 16-rank file
#     alone: a loaded cluster CSV's rank rows come with its own stage rows;
#   - slow_rank_op and slow_rank against the elapse times of
#     cluster_communication.json (transmit = least time of a collective op
#     over its ranks, wait = time - transmit, ranks by total wait);
#   - communication_matrix against cluster_communication_matrix.json;
#   - the two torch_npu ranks: rank rows from their step_trace_time.csv (the
#     metrics.cluster.rank_source option), no stage (no pipeline group known),
#     and slow_rank_op from their communication.json files; by default, the
#     file msprof-analyze wrote for them (reference/, its README says how):
#     the same header, rows and values to 0.001 us; their communication_matrix
#     has the links of msprof-analyze's cluster_communication_matrix.json for
#     them (group-local ranks mapped to global ranks, the unmappable left out);
#     their slow_rank_op has each collective op's Transit, Wait,
#     Synchronization and Idle Time and ratios per rank as msprof-analyze's
#     cluster_communication.json for them gives them, and comm_op_bandwidth
#     each op's Communication Bandwidth Info and Size Distribution likewise;
#     their communication_group.json is msprof-analyze's byte for byte.
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

    # the 16-rank file alone: its rank rows and its own stage rows, as written
    d = run(tb, os.path.join(out, "16ranks"), [csv16], spec, env)
    if d:
        _, got = step_rows(os.path.join(d, "cluster_step_trace_time.csv"))
        compare_rows("16ranks alone", got, want16)
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
    T.eq(header, ["Step", "Op Name", "Group", "Rank", "Ranks", "Time(ns)", "Transmit Time(ns)", "Wait Time(ns)",
                  "Transit Time(ns)", "Comm Wait Time(ns)", "Synchronization Time(ns)", "Idle Time(ns)",
                  "Wait Time Ratio", "Synchronization Time Ratio"], name + ": slow_rank_op header")
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
        # no pipeline-parallel group is known: no stage row, as msprof-analyze
        compare_rows("torch_npu ranks", got, want)
    # the default (no options) equals msprof-analyze's own output on these two ranks
    ref = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference",
                       "msprof_analyze_cluster_step_trace_time_2ranks.csv")
    d = run(tb, os.path.join(out, "torch_npu_default"), list(ranks.values()), "builtin:cluster_step_trace_time", env)
    if d:
        got_path = os.path.join(d, "cluster_step_trace_time.csv")
        with open(got_path, "rb") as f, open(ref, "rb") as g:
            T.eq(f.readline().rstrip(b"\r\n"), g.readline().rstrip(b"\r\n"), "msprof-analyze's header")
        _, got = step_rows(got_path)
        _, want = step_rows(ref)
        T.eq(sorted(got), sorted(want), "msprof-analyze's rows")
        for k in sorted(set(got) & set(want)):
            T.check(all(abs(a - b) <= 0.001 for a, b in zip(got[k], want[k])) and len(got[k]) == len(want[k]),
                    "row %s: %s, msprof-analyze %s" % (k, got[k], want[k]))
    # communication_matrix of the two ranks: the links msprof-analyze writes for them (reference/), its
    # group-local ranks mapped to global ones the same way, the links it could not map left out
    d = run(tb, os.path.join(out, "torch_npu_matrix"), list(ranks.values()), "builtin:communication_matrix", env)
    if d:
        ref = load_json(os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference",
                                     "msprof_analyze_cluster_communication_matrix_2ranks.json"))
        want = {}
        for steps in ref.values():
            for step, ops in steps.items():
                for opkey, links in ops.items():
                    if opkey.startswith("Total Op Info"):  # its per-group sums ("Total Op Info@<group>")
                        continue
                    op, group = opkey.rsplit("@", 1)
                    for link, v in links.items():
                        src, dst = link.split("-")
                        size = int((v["Transit Size(MB)"] * 1000000).quantize(decimal.Decimal(1),
                                                                              rounding=decimal.ROUND_HALF_UP))
                        want[(step[4:], op, group, int(src), int(dst))] = (v["Transport Type"], size,
                                                                           ns(v["Transit Time(ms)"]))
        _, rows = read_csv(os.path.join(d, "communication_matrix.csv"))
        got = {(r[0], r[2], r[3], int(r[4]), int(r[5])): (r[6], int(r[7]), int(r[8])) for r in rows}
        T.eq(sorted(got), sorted(want), "torch_npu communication_matrix: msprof-analyze's links")
        for k in sorted(set(got) & set(want)):
            g, w = got[k], want[k]
            T.check(g[0] == w[0] and g[1] == w[1] and abs(g[2] - w[2]) <= 1, "link %s: %s, msprof-analyze %s"
                    % (k, g, w))
    # slow_rank_op of the two ranks: each collective op's Communication Time Info on each rank as
    # msprof-analyze's cluster_communication.json for them gives it (reference/)
    d = run(tb, os.path.join(out, "torch_npu_slow_info"), list(ranks.values()), "builtin:slow_rank_op", env)
    if d:
        ref = load_json(os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference",
                                     "msprof_analyze_cluster_communication_2ranks.json"))
        keys = ("Transit Time(ms)", "Wait Time(ms)", "Synchronization Time(ms)", "Idle Time(ms)")
        want = {}
        for steps in ref.values():
            for step, ops in steps.items():
                for opkey, per_rank in ops.items():
                    op, group = opkey.rsplit("@", 1)
                    if opkey.startswith("Total Op Info") or "send" in op or "receive" in op or "recv" in op:
                        continue  # sums, and point-to-point ops (slow_rank_op is of collective ops)
                    for r, v in per_rank.items():
                        info = v["Communication Time Info"]
                        want[(step[4:], op, group, r)] = ([ns(info[k]) for k in keys],
                                                          [float(info["Wait Time Ratio"]),
                                                           float(info["Synchronization Time Ratio"])])
        header, rows = read_csv(os.path.join(d, "slow_rank_op.csv"))
        col = {h: i for i, h in enumerate(header)}
        times = ["Transit Time(ns)", "Comm Wait Time(ns)", "Synchronization Time(ns)", "Idle Time(ns)"]
        got = {(x[col["Step"]], x[col["Op Name"]], x[col["Group"]], x[col["Rank"]]):
               ([int(x[col[t]]) for t in times],
                [float(x[col["Wait Time Ratio"]]), float(x[col["Synchronization Time Ratio"]])]) for x in rows}
        T.eq(sorted(got), sorted(want), "torch_npu slow_rank_op: msprof-analyze's collective ops and ranks")
        for k in sorted(set(got) & set(want)):
            (gt, gr), (wt, wr) = got[k], want[k]
            T.check(all(abs(a - b) <= 1 for a, b in zip(gt, wt)) and all(abs(a - b) <= 1e-4 for a, b in zip(gr, wr)),
                    "op %s: %s, msprof-analyze %s" % (k, got[k], want[k]))
    # comm_op_bandwidth of the two ranks: each op's Communication Bandwidth Info per rank and transport,
    # its Size Distribution included, as msprof-analyze's cluster_communication.json for them gives it
    d = run(tb, os.path.join(out, "torch_npu_bandwidth"), list(ranks.values()), "builtin:comm_op_bandwidth", env)
    if d:
        ref = load_json(os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference",
                                     "msprof_analyze_cluster_communication_2ranks.json"))
        want = {}
        for steps in ref.values():
            for step, ops in steps.items():
                for opkey, per_rank in ops.items():
                    if opkey.startswith("Total Op Info"):
                        continue
                    op, group = opkey.rsplit("@", 1)
                    for r, v in per_rank.items():
                        for transport, b in v["Communication Bandwidth Info"].items():
                            want[(step[4:], op, group, r, transport)] = (
                                [float(b[k]) for k in ("Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)",
                                                       "Large Packet Ratio")],
                                {k: [float(x) for x in c] for k, c in b["Size Distribution"].items()})
        header, rows = read_csv(os.path.join(d, "comm_op_bandwidth.csv"))
        col = {h: i for i, h in enumerate(header)}
        got = {}
        for x in rows:
            dist = json.loads(x[col["Size Distribution"]])
            got[(x[col["Step"]], x[col["Op Name"]], x[col["Group"]], x[col["Rank"]], x[col["Transport Type"]])] = (
                [float(x[col[k]]) for k in ("Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)",
                                            "Large Packet Ratio")],
                {k: [float(v) for v in c] for k, c in dist.items()})
        T.eq(sorted(got), sorted(want), "torch_npu comm_op_bandwidth: msprof-analyze's ops, ranks and transports")
        for k in sorted(set(got) & set(want)):
            (gv, gd), (wv, wd) = got[k], want[k]
            same = all(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for a, b in zip(gv, wv)) and sorted(gd) == sorted(wd) \
                and all(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for s_ in wd for a, b in zip(gd[s_], wd[s_]))
            T.check(same, "bandwidth %s: %s, msprof-analyze %s" % (k, got[k], want[k]))
    # communication_group.json of the two ranks: byte for byte the file msprof-analyze's cluster analysis
    # wrote for them (reference/), its groups in the order it read them (rank 0's, then rank 1's new ones)
    d = run(tb, os.path.join(out, "torch_npu_groups"), list(ranks.values()), "builtin:communication_group", env)
    if d:
        ref = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference",
                           "msprof_analyze_communication_group_2ranks.json")
        with open(os.path.join(d, "communication_group.json"), "rb") as f, open(ref, "rb") as g:
            got, want = f.read(), g.read()
        T.eq(got, want, "torch_npu communication_group.json: msprof-analyze's, byte for byte")
        T.check(len(json.loads(want)["collective"]) == 6, "six collective groups in the reference", want)
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
