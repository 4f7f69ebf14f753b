#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# make_cluster_time_summary.py - how the reference
# msprof_analyze_cluster_time_summary_8ranks.csv was made: msprof-analyze's
# own cluster_time_summary recipe (its ClusterTimeSummary and
# CommunicationGroupMap classes, unchanged) run on the generated 8-rank
# cluster that tests/cli/msprof_analyze_test.py loads (tracebook-gen --kind
# torch_npu_dir --events 6000 --ranks 8 --parallel 2,2 --seed 5).
#
# The recipe reads one profiler DB and one analysis DB per rank. They are
# made here from the DB `tracebook export db` wrote for the cluster, each
# rank's rows of the tables the recipe queries (STRING_IDS, RANK_DEVICE_MAP,
# STEP_TIME, CANN_API, TASK, COMPUTE_TASK_INFO, COMMUNICATION_OP, META_DATA
# with the rank's parallel_group_info), the analysis DB's StepTraceTime
# from the rank's step_trace_time.csv (TB_STEP_TRACE_TIME) and its
# CommAnalyzerTime from the rank's communication ops (op name, group). The
# recipe's mapper and reducer functions are then called as its run() calls
# them, with the default step range; the CSV is what its save step writes
# (pandas' to_csv, index=False). GROUP_MAP_CSV, when given, gets the
# CommunicationGroupMapping table the recipe made on the way (the
# communication_group_map recipe's, also written with to_csv, index=False).
# Not run by the tests: it needs a checkout
# of msprof-analyze (github.com/Ascend/msprof-analyze) and pandas.
#
# usage: make_cluster_time_summary.py MSPROF_ANALYZE_CHECKOUT TRACEBOOK_DB RANK_DIR OUT_CSV [GROUP_MAP_CSV]
#   RANK_DIR: the generated cluster (rank<r>_ascend_pt/profiler_metadata.json)
import json
import os
import sqlite3
import sys
import tempfile

TABLES = ["STEP_TIME", "CANN_API", "TASK", "COMPUTE_TASK_INFO", "COMMUNICATION_OP", "RANK_DEVICE_MAP"]


def rank_dbs(src, rank, meta, d):
    """The rank's profiler and analysis DBs; returns their paths."""
    prof, ana = os.path.join(d, "prof_%d.db" % rank), os.path.join(d, "analysis_%d.db" % rank)
    c = sqlite3.connect(prof)
    c.execute("ATTACH ? AS src", (src,))
    c.execute("CREATE TABLE STRING_IDS AS SELECT id, value FROM src.STRING_IDS")
    for t in TABLES:
        if t == "STEP_TIME" and not c.execute("SELECT 1 FROM src.STEP_TIME WHERE rankId = ?", (rank,)).fetchone():
            continue
        c.execute("CREATE TABLE %s AS SELECT * FROM src.%s WHERE rankId = ?" % (t, t), (rank,))
    c.execute("CREATE TABLE META_DATA (name TEXT, value TEXT)")
    c.execute("INSERT INTO META_DATA VALUES ('parallel_group_info', ?)", (json.dumps(meta["parallel_group_info"]),))
    rows = c.execute("SELECT step, computing, communicationNotOverlapped, overlapped, communication, free "
                     "FROM src.TB_STEP_TRACE_TIME WHERE rankId = ?", (rank,)).fetchall()
    ops = c.execute("SELECT DISTINCT n.value, g.value FROM src.COMMUNICATION_OP o JOIN src.STRING_IDS n "
                    "ON n.id = o.opName JOIN src.STRING_IDS g ON g.id = o.groupName WHERE o.rankId = ?",
                    (rank,)).fetchall()
    c.commit()
    c.close()
    a = sqlite3.connect(ana)
    a.execute("CREATE TABLE StepTraceTime (step INTEGER, computing REAL, communication_not_overlapped REAL, "
              "overlapped REAL, communication REAL, free REAL)")
    a.executemany("INSERT INTO StepTraceTime VALUES (?, ?, ?, ?, ?, ?)", rows)
    a.execute("CREATE TABLE CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT)")
    a.executemany("INSERT INTO CommAnalyzerTime VALUES (?, ?)", ops)
    a.commit()
    a.close()
    return prof, ana


class Future:
    def __init__(self, v):
        self.v = v

    def result(self):
        return self.v


class Context:
    def __init__(self):
        self.future_dict = {}


def main():
    checkout, src, rank_dir, out = sys.argv[1:5]
    sys.path.insert(0, checkout)
    from msprof_analyze.cluster_analyse.recipes.cluster_time_summary.cluster_time_summary import \
        ClusterTimeSummary
    from msprof_analyze.cluster_analyse.recipes.communication_group_map.communication_group_map import \
        CommunicationGroupMap
    from msprof_analyze.prof_common.constant import Constant

    ranks = sorted(r for (r,) in sqlite3.connect(src).execute("SELECT DISTINCT rankId FROM RANK_DEVICE_MAP"))
    with tempfile.TemporaryDirectory() as d:
        maps = []
        for r in ranks:
            with open(os.path.join(rank_dir, "rank%d_ascend_pt" % r, "profiler_metadata.json")) as f:
                meta = json.load(f)
            prof, ana = rank_dbs(src, r, meta, d)
            maps.append({Constant.RANK_ID: r, Constant.PROFILER_DB_PATH: prof, Constant.ANALYSIS_DB_PATH: ana,
                         Constant.STEP_RANGE: {Constant.START_NS: 0, Constant.END_NS: Constant.MAX_INTEGER}})
        gm = CommunicationGroupMap.__new__(CommunicationGroupMap)
        gm.group_df = None
        gm.reducer_func([gm._mapper_func(m, "communication_group_map") for m in maps])
        cts = ClusterTimeSummary.__new__(ClusterTimeSummary)
        cts._step_id = Constant.VOID_STEP
        cts.communication_group_mapping = gm.group_df
        if len(sys.argv) > 5:
            gm.group_df.to_csv(sys.argv[5], index=False)
        ctx = Context()
        for key, fn in ((cts.STEP_TIME, cts.calculate_step_time), (cts.STEP_TRACE, cts.calculate_step_trace_time),
                        (cts.COMMUNICATION, cts.calculate_communication_time),
                        (cts.MEMORY, cts.calculate_memory_and_not_overlapped_time)):
            ctx.future_dict[key] = [Future(fn(m, "cluster_time_summary")) for m in maps]
        df = cts.aggregate_stats(ctx)
    df = df.rename(columns={
        "rank": "Rank", "step": "Step", "stepTime": "Step Time(us)", "computation": "Computation(us)",
        "communicationNotOverlapComputation": "Communication Not Overlap Computation(us)",
        "communicationOverlapComputation": "Communication Overlap Computation(us)",
        "communication": "Communication(us)", "free": "Free(us)",
        "communicationWaitStageTime": "Communication Wait Stage Time(us)",
        "communicationTransmitStageTime": "Communication Transmit Stage Time(us)",
        "memory": "Memory(us)",
        "memoryNotOverlapComputationCommunication": "Memory Not Overlap Computation Communication(us)"})
    df.to_csv(out, index=False)


if __name__ == "__main__":
    main()
