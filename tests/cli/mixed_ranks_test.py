#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# mixed_ranks_test.py - a run that mixes vendors keeps every rank, and each
# rank's rows are the rows of a run on that rank alone.
#
# Loads the samples of the three vendors together: samples/ascend_small
# (torch_npu timeline), samples/kineto_small (Kineto trace), samples/topsprof
# (a statistics listing: a rank without device tasks, and a trace listing),
# plus a copy of the Ascend sample cut to its first ProfilerStep, written into
# WORK_DIR (a rank with one step beside a Kineto rank with six: HTA's
# last-step cut counted the steps of the whole load and so emptied that rank).
# Every computed table (step_trace_time, overlap_lanes, temporal_breakdown,
# comm_comp_overlap, idle_time_breakdown, exposed_time) and the
# kernel_breakdown report is read, in the two input orders, and checked:
#   - each rank with device tasks has rows in each table;
#   - each rank's rows (the rank column left out) are those of a run on that
#     rank's input alone (ranks matched by their source path in TB_RANK);
#   - the rank without device tasks gets a note per computed table, saying so,
#     and the topsprof trace rank (no host calls) a note that
#     exposed.linked_only does not apply to it.
#
# usage: mixed_ranks_test.py TRACEBOOK SAMPLES_DIR WORK_DIR
# Writes only under WORK_DIR. Prints one ok/FAIL line per check and
# `N passed, N failed`; exits 1 on failure.
import csv
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TABLES = {
    # table: (SQL, the name of its rank column)
    "step_trace_time": ("SELECT * FROM step_trace_time", "rankId"),
    "overlap_lanes": ("SELECT * FROM overlap_lanes", "rankId"),
    "temporal_breakdown": ("SELECT * FROM temporal_breakdown", "rank"),
    "comm_comp_overlap": ("SELECT * FROM comm_comp_overlap", "rank"),
    "idle_time_breakdown": ("SELECT * FROM idle_time_breakdown", "rank"),
    "exposed_time": ("SELECT * FROM exposed_time", "rank"),
    "kernel_breakdown": (None, "rankId"),
}
# the computed tables that name a rank without device work in a note
NOTED = ("step_trace_time", "overlap_lanes", "temporal_breakdown", "comm_comp_overlap", "idle_time_breakdown",
         "exposed_time")

T = tbtest.Checks(verbose=True)


def write_spec(path):
    """One report per table, each with its rank column first, and the ranks'
    sources; kernel_breakdown's own SQL with the rank always present."""
    lines = ["tracebook: 1", "reports:",
             "  - id: ranks", "    sql: SELECT rankId, source FROM TB_RANK ORDER BY rankId",
             "  - id: tasks", "    sql: SELECT rankId, count(*) AS n FROM device_task GROUP BY rankId"]
    for name, (sql, _) in TABLES.items():
        if sql:
            lines += ["  - id: %s" % name, "    sql: %s" % sql]
    lines += ["  - id: kernel_breakdown",
              "    sql: SELECT rankId, class, coalesce(name, taskType) AS name, count(*) AS n, sum(dur) AS total"
              " FROM device_task GROUP BY 1, 2, 3"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run(tb, spec, inputs, out):
    shutil.rmtree(out, ignore_errors=True)
    args = [tb, "report"]
    for i in inputs:
        args += ["-dir", i]
    r = tbtest.run(args + ["--spec", spec, "-o", out])
    if r.returncode != 0:
        T.check(False, "run %s" % " ".join(inputs), r.stderr.strip())
        return None, ""
    tables = {}
    for name in list(TABLES) + ["ranks", "tasks"]:
        with open(os.path.join(out, name + ".csv"), newline="") as f:
            tables[name] = list(csv.reader(f))
    return tables, r.stderr


def by_source(tables):
    """{table: {source: sorted rows without the rank column}}, the sources of
    the ranks with device tasks, and {rank id: source}."""
    src = {row[0]: row[1] for row in tables["ranks"][1:]}
    busy = {src[row[0]] for row in tables["tasks"][1:]}
    out = {}
    for name, (_, rankcol) in TABLES.items():
        head, rows = tables[name][0], tables[name][1:]
        k = head.index(rankcol)
        per = {}
        for row in rows:
            per.setdefault(src.get(row[k], "?" + row[k]), []).append(row[:k] + row[k + 1:])
        out[name] = {s: sorted(v) for s, v in per.items()}
    return out, busy, src


def one_step_copy(samples, work):
    """The Ascend sample with only its first ProfilerStep slice kept."""
    d = os.path.join(work, "ascend_one_step")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(samples, "ascend_small", "trace_view.json")) as f:
        events = json.load(f)
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    first = min(steps, key=lambda e: float(e["ts"]))
    events = [e for e in events if e not in steps or e is first]
    with open(os.path.join(d, "trace_view.json"), "w") as f:
        json.dump(events, f)
    return d


def check_mixed(tb, spec, inputs, work, nranks, nbusy):
    """Runs each input alone and all of them together (in input order and
    reversed) and checks the mixed runs: nranks ranks, nbusy with device
    tasks, each of those with rows in every table equal to its rows alone;
    each rank without device tasks with a note per computed table. Returns
    the stderr of the forward mixed run."""
    alone = {}
    for i, path in enumerate(inputs):
        tables, _ = run(tb, spec, [path], os.path.join(work, "alone%d" % i))
        if tables is None:
            continue
        rows, _, _ = by_source(tables)
        for name in TABLES:
            for s, v in rows[name].items():
                alone.setdefault(name, {})[s] = v
    first = ""
    for order, ins in (("forward", inputs), ("reversed", inputs[::-1])):
        tables, notes = run(tb, spec, ins, os.path.join(work, "mixed_" + order))
        if tables is None:
            continue
        first = first or notes
        rows, busy, src = by_source(tables)
        T.check(len(src) == nranks and len(busy) == nbusy,
                "%s: %d ranks, %d with device tasks" % (order, len(src), len(busy)), "ranks %r" % src)
        for name in TABLES:
            for s in sorted(busy):
                got = rows[name].get(s, [])
                T.check(len(got) > 0, "%s: %s has rows for %s" % (order, name, s))
                T.check(got == alone.get(name, {}).get(s),
                        "%s: %s rows of %s equal a run on it alone" % (order, name, s),
                        "got %r, alone %r" % (got[:3], alone.get(name, {}).get(s, [])[:3]))
        idle = [r for r, s in src.items() if s not in busy]
        for name in NOTED:
            for r in idle:
                want = ("tracebook: note: %s: rank %s: no row: the rank has no device tasks or communication ops"
                        % (name, r))
                T.check(want in notes.splitlines(), "%s: %s says why rank %s has no row" % (order, name, r), notes)
        tops = [r for r, s in src.items() if s.endswith("trace_nodes.txt") or s.endswith("trace_example.txt")]
        T.check(len(tops) == 1 and ("tracebook: note: exposed_time: rank %s has no host calls" % tops[0]) in notes,
                "%s: exposed_time says linked_only does not apply to the topsprof rank" % order, notes)
    return first


def main():
    tb, samples, work = tbtest.args("TRACEBOOK SAMPLES_DIR WORK_DIR", 3, 3)
    tbtest.fresh_dir(work)
    spec = os.path.join(work, "tables.yaml")
    write_spec(spec)
    inputs = [os.path.join(samples, "ascend_small"), one_step_copy(samples, work),
              os.path.join(samples, "kineto_small"), os.path.join(samples, "topsprof")]
    check_mixed(tb, spec, inputs, work, 5, 4)
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
