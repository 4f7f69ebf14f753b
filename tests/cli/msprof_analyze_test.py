#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# msprof_analyze_test.py - the reports that give msprof-analyze's cluster
# analyses (reports/msprof_analyze.yaml) on generated 8-rank clusters,
# against msprof-analyze's own figures.
#
# slow_rank_vote and slow_op_stats (the slow_rank recipe's rank_stats.csv
# and slow_op_stats.csv), on two clusters made here from tracebook-gen
# traces:
#   - dixon: one Ascend trace of a group of 4 copied to ranks 0..7, each
#     rank's collectives stretched by 1 + r/16, rank 5's first of each op name
#     shrunk to 0.4: every op name has 8 x (its steps) times, Dixon's test;
#   - sigma: Kineto traces of ranks 0..7 (seeds 1..8), their all-reduce
#     kernels only, rank 2's every third shrunk to 1%: more than 100 times
#     per op name, the 3-sigma rule.
# cluster_time_summary (the cluster_time_summary recipe's CSV) on a cluster
# tracebook-gen makes with tensor-, pipeline- and data-parallel groups of 2
# (--parallel 2,2), against the recipe's own output kept in
# ../conformance/reference; one rank alone (no wait or transmit stage) and a
# rank without communication (no row), as the recipe. communication_group_map
# (the communication_group_map recipe's table) on the same cluster, byte for
# byte the recipe's, and without the ranks' profiler_metadata.json; its
# communication_group.json (builtin:communication_group): the recipe's rows
# as comm_group_parallel_info and the groups' rank lists. json_shape:
# document, the report key that writes it, and its errors.
# mstx_mark_stats and mstx_{fwk,cann,device}_stats (the mstx_sum recipe's
# mark_stats.csv and all_*_stats.csv) on three ranks' msprof-style DBs built
# here (mstx_db), against the recipe's own CSVs
# (../conformance/reference/make_mstx_sum.py); pp_chart (the pp_chart
# recipe's StepTaskInfo rows) on the same DBs against the recipe's mapper;
# its DualPipeV schedule on an 8-rank cluster of msprof-style DBs built here
# (dualpipev_cluster: tp 2, pp 4, 8 micro-batches, pp_info and
# distributed_args in META_DATA) against the names and types of the recipe's
# own schedule code (../conformance/reference/make_pp_chart_dualpipev.py),
# also through the DB tracebook exports of it.
# module_statistic (the module_statistic recipe's ModuleStatistic table) on
# two ranks' msprof-style DBs built here (module_db), against the recipe's
# own rows (../conformance/reference/make_module_statistic.py); ranks without
# linked ops or without Module ranges give no row and no file.
# free_analysis (the free_analysis recipe's free_analysis.csv) on two ranks'
# msprof-style DBs built here (free_db), against the recipe's own CSV
# (../conformance/reference/make_free_analysis.py); its top_num; a rank
# without free time gives no row. The same rank as a torch_npu timeline
# (free_timeline): its calls linked through its async_npu flows, in a
# report and in the DB `export db --pytorch-links` writes (CONNECTION_IDS
# rows and PYTORCH_API.connectionId), where the recipes' join finds what it
# finds in the DB of the rank.
#
# The slow_rank references (REFERENCE below) are what msprof-analyze's
# SlowRankVoteAnalysis (its slow_rank.py, run unchanged with pandas and
# numpy) gives for the same communication ops, read from tracebook's DB of
# these inputs (rank, group, op name, start, (end - start) / 1000 in rank,
# start, op id order); the figures were computed once and kept here. The
# headers are msprof-analyze's byte for byte; times compare to 1e-9
# relative (its pandas sums against SQLite's).
#
# usage: msprof_analyze_test.py TRACEBOOK TRACEBOOK_GEN OUTDIR [CASE...]
# Prints one `ok`/`FAIL` line per case and a final count; exits 0 when none failed.
import csv
import json
import os
import shutil
import sqlite3
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

RANK_STATS_HEAD = "rankId,slowAffectCount"
SLOW_OP_HEAD = "SlowRank,OpName,GroupName,Timestamp,Count,MeanNs,StdNs,MinNs,Q1Ns,MedianNs,Q3Ns,MaxNs,SumNs"
REFERENCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance", "reference")
# cluster_time_summary's reference: msprof-analyze's recipe on the cluster below
# (reference/make_cluster_time_summary.py says how it was run)
TIME_SUMMARY_REF = os.path.join(REFERENCE_DIR, "msprof_analyze_cluster_time_summary_8ranks.csv")
GROUP_MAP_REF = os.path.join(REFERENCE_DIR, "msprof_analyze_communication_group_map_8ranks.csv")
MSTX_REFS = [("mstx_mark_stats", "msprof_analyze_mstx_mark_stats_3ranks.csv"),
             ("mstx_fwk_stats", "msprof_analyze_mstx_all_fwk_stats_3ranks.csv"),
             ("mstx_cann_stats", "msprof_analyze_mstx_all_cann_stats_3ranks.csv"),
             ("mstx_device_stats", "msprof_analyze_mstx_all_device_stats_3ranks.csv")]
PARALLEL_CLUSTER = ("--kind", "torch_npu_dir", "--events", "6000", "--ranks", "8", "--parallel", "2,2", "--seed", "5")


def parallel_cluster(gen, d):
    """The generated 8-rank cluster with tp, pp and dp groups of 2 (tracebook-gen --parallel 2,2)."""
    p = os.path.join(d, "parallel")
    if not os.path.exists(os.path.join(p, "rank7_ascend_pt")):
        gen(*PARALLEL_CLUSTER, "-o", p)
    return p


T0 = 1_000_000_000


def mstx_db(path, rank, stretch, steps, pytorch):
    """An msprof-style DB of one rank with mstx ranges and marks (msprof's
    table layouts): nested ranges (forward > layer > attn), a name twice in a
    step, ranges without device task, one not on the device (connection id
    4294967295), backward ranges and a WeightGradStore_pop (pp_chart's
    backward), mark pairs on two threads, an unpaired start; STEP_TIME when
    steps, PyTorch calls of the marks (CONNECTION_IDS) when pytorch. stretch
    (ns) lengthens some events, so that ranks differ. No two rows of a rank
    have the same CANN time: the recipe's order of ties is pandas' sort's,
    which is not stable past 16 rows."""
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);"
        "CREATE TABLE MSTX_EVENTS (startNs INTEGER, endNs INTEGER, eventType INTEGER, rangeId INTEGER, "
        "  category INTEGER, message INTEGER, globalTid INTEGER, endGlobalTid INTEGER, domainId INTEGER, "
        "  connectionId INTEGER);"
        "CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, "
        "  globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, "
        "  taskId INTEGER, modelId INTEGER);")
    names = ["forward", "layer", "attn", "opt", "skip", "data_start", "data_stop", "iter_start", "iter_stop",
             "lonely_start", "MsTx", "Backward_pass", "WeightGradStore_pop"]
    con.executemany("INSERT INTO STRING_IDS VALUES (?, ?)", list(enumerate(names, 1)))
    sid = {n: i for i, n in enumerate(names, 1)}
    con.execute("INSERT INTO RANK_DEVICE_MAP VALUES (?, 0)", (rank,))
    ranges = [("forward", 1_000_000, 8_000_000 + stretch, 101, (1_200_000, 7_900_000)),
              ("layer", 2_000_000, 4_000_000, 102, (2_100_000, 3_950_000 + stretch)),
              ("attn", 2_500_000, 3_000_000 + stretch // 2, 103, (2_600_000, 2_900_000)),
              ("layer", 5_000_000, 6_900_000 + stretch // 2, 104, (5_100_000, 6_800_000)),
              ("opt", 12_000_000, 13_000_000 + stretch, 105, None),
              ("skip", 3_000_000, 3_100_000, 4294967295, None),
              ("Backward_pass", 8_200_000, 9_500_000 + stretch, 106, (8_300_000, 9_400_000 + stretch)),
              ("WeightGradStore_pop", 9_600_000, 9_700_000, 107, (9_610_000, 9_690_000)),
              ("Backward_pass", 17_000_000, 18_150_000, 108, None)]
    marks = [("data_start", 500_000, 7, 201), ("data_stop", 900_000 + stretch, 7, 202),
             ("iter_start", 11_000_000, 7, 203), ("iter_start", 11_500_000, 8, 204),
             ("iter_stop", 14_000_000, 7, 205), ("iter_stop", 15_000_000 + stretch, 8, 206),
             ("lonely_start", 16_000_000, 7, 207)]
    task_id = 0
    for name, a, b, conn, task in ranges:
        con.execute("INSERT INTO MSTX_EVENTS VALUES (?, ?, 2, 0, 0, ?, 7, 7, 0, ?)", (T0 + a, T0 + b, sid[name], conn))
        if task:
            task_id += 1
            con.execute("INSERT INTO TASK VALUES (?, ?, 0, ?, ?, 1, ?, 0, 2, ?, 0)",
                        (T0 + task[0], T0 + task[1], conn, task_id, sid["MsTx"], task_id))
    for name, a, tid, conn in marks:
        con.execute("INSERT INTO MSTX_EVENTS VALUES (?, ?, 3, 0, 0, ?, ?, ?, 0, ?)", (T0 + a, T0 + a, sid[name], tid,
                                                                                     tid, conn))
        task_id += 1
        con.execute("INSERT INTO TASK VALUES (?, ?, 0, ?, ?, 1, ?, 0, 2, ?, 0)",
                    (T0 + a + 20_000 + (conn % 7) * 1000, T0 + a + 30_000, conn, task_id, sid["MsTx"], task_id))
    if steps:
        con.execute("CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER)")
        con.executemany("INSERT INTO STEP_TIME VALUES (?, ?, ?)", [(1, T0, T0 + 10_000_000),
                                                                  (2, T0 + 10_000_000, T0 + 20_000_000)])
    if pytorch:
        con.executescript(
            "CREATE TABLE PYTORCH_API (startNs INTEGER, endNs INTEGER, globalTid INTEGER, connectionId INTEGER, "
            "  name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, "
            "  inputShapes INTEGER, callchainId INTEGER, type INTEGER);"
            "CREATE TABLE CONNECTION_IDS (id INTEGER, connectionId INTEGER);")
        for k, (name, a, tid, conn) in enumerate(marks, 1):
            con.execute("INSERT INTO PYTORCH_API VALUES (?, ?, ?, ?, ?, 0, 0, 0, 0, 0, 0)",
                        (T0 + a - 40_000 - (conn % 5) * 1000, T0 + a - 10_000, tid, k, sid[name]))
            con.execute("INSERT INTO CONNECTION_IDS VALUES (?, ?)", (k, conn))
    con.commit()
    con.close()


DUALPIPEV_REF = os.path.join(REFERENCE_DIR, "msprof_analyze_pp_chart_dualpipev_pp4_mb8.csv")
DUALPIPEV_REF2 = os.path.join(REFERENCE_DIR, "msprof_analyze_pp_chart_dualpipev_pp2_mb8.csv")
DUALPIPEV_META = {"pp_info": {"pp_type": "DualPipeV", "microbatch_num": 8},
                  "distributed_args": {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 4,
                                       "data_parallel_size": 1}}
STEP_NS = 100_000_000


def dualpipev_counts(ref=None):
    """The recipe's count of rows per step of each stage (the reference)."""
    with open(ref or DUALPIPEV_REF, encoding="utf-8", newline="") as f:
        return {int(r["stage"]): int(r["expected"]) for r in csv.DictReader(f)}


def dualpipev_events(rank, count):
    """Rank's mstx ranges (message, start, task start, task end), and the
    (step, task start, task end) the recipe keeps: count in each of steps 1
    and 2, but rank 1's step 2 one short; rank 0's step 1 one more task
    overlapping the one before (dropped), rank 3 one event after the steps
    (no step: dropped), rank 5 one not forward or backward (not read)."""
    events, kept = [], []
    for step in (1, 2):
        n = count - 1 if (rank, step) == (1, 2) else count
        for i in range(n):
            a = T0 + (step - 1) * STEP_NS + 1_000_000 + i * 1_000_000
            events.append(("forward_step" if i % 3 else "Backward_step", a, a + 100_000, a + 500_000 + rank))
            kept.append((step, a + 100_000, a + 500_000 + rank))
            if (rank, step, i) == (0, 1, 4):
                events.append(("backward_step", a + 1_000, a + 300_000, a + 600_000))
    if rank == 3:
        events.append(("forward_step", T0 + 2 * STEP_NS + 5_000_000, T0 + 2 * STEP_NS + 5_100_000,
                       T0 + 2 * STEP_NS + 5_200_000))
    if rank == 5:
        events.append(("optimizer", T0 + 90_000_000, T0 + 90_100_000, T0 + 90_200_000))
    return events, kept


def dualpipev_db(path, rank, meta, count):
    """An msprof-style DB of one rank of the DualPipeV cluster: its META_DATA
    rows (name, JSON value) as torch_npu writes its profiler metadata (none
    for meta None), two steps, the mstx ranges of dualpipev_events with their
    device tasks."""
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE META_DATA (name TEXT, value TEXT);"
        "CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);"
        "CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);"
        "CREATE TABLE MSTX_EVENTS (startNs INTEGER, endNs INTEGER, eventType INTEGER, rangeId INTEGER, "
        "  category INTEGER, message INTEGER, globalTid INTEGER, endGlobalTid INTEGER, domainId INTEGER, "
        "  connectionId INTEGER);"
        "CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, "
        "  globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, "
        "  taskId INTEGER, modelId INTEGER);")
    names = ["forward_step", "Backward_step", "backward_step", "optimizer", "MsTx"]
    con.executemany("INSERT INTO STRING_IDS VALUES (?, ?)", list(enumerate(names, 1)))
    sid = {n: i for i, n in enumerate(names, 1)}
    con.execute("INSERT INTO RANK_DEVICE_MAP VALUES (?, 0)", (rank,))
    if meta is not None:
        con.executemany("INSERT INTO META_DATA VALUES (?, ?)",
                        [("SCHEMA_VERSION", "1.0.0")] + [(k, v if isinstance(v, str) else json.dumps(v))
                                                         for k, v in meta.items()])
    con.executemany("INSERT INTO STEP_TIME VALUES (?, ?, ?)",
                    [(s, T0 + (s - 1) * STEP_NS, T0 + s * STEP_NS) for s in (1, 2)])
    events, _ = dualpipev_events(rank, count)
    for k, (msg, a, ta, tb) in enumerate(events, 1):
        con.execute("INSERT INTO MSTX_EVENTS VALUES (?, ?, 2, 0, 0, ?, 7, 7, 0, ?)", (a, a + 800_000, sid[msg], k))
        con.execute("INSERT INTO TASK VALUES (?, ?, 0, ?, ?, 1, ?, 0, 2, ?, 0)", (ta, tb, k, k, sid["MsTx"], k))
    con.commit()
    con.close()


def dualpipev_cluster(d, meta, json_meta=False, ref=None, group=2):
    """Eight ranks (tp 2, pp 4, dp 1: stage rank // 2) of the DualPipeV
    schedule with 8 micro-batches, their DBs' metadata meta; with json_meta
    each rank is a torch_npu folder (rank<N>_ascend_pt: the DB in
    ASCEND_PROFILER_OUTPUT, without metadata) holding meta in a
    profiler_metadata.json as torch_npu writes it (indent 4, the rank in
    distributed_args). Each rank's steps have the rows its stage (rank // group)
    of the schedule ref (default DUALPIPEV_REF) expects."""
    counts, dirs = dualpipev_counts(ref), []
    for rank in range(8):
        sub = os.path.join(d, ("rank%d_ascend_pt" if json_meta else "dualpipev_rank%d") % rank)
        db_dir = os.path.join(sub, "ASCEND_PROFILER_OUTPUT") if json_meta else sub
        os.makedirs(db_dir, exist_ok=True)
        dualpipev_db(os.path.join(db_dir, ("ascend_pytorch_profiler_%d.db" if json_meta else "msprof_%d.db") % rank),
                     rank, None if json_meta else meta, counts[rank // group])
        if json_meta:
            doc = dict(meta)
            if isinstance(doc.get("distributed_args"), dict):
                doc["distributed_args"] = dict(doc["distributed_args"], rank=rank)
            with open(os.path.join(sub, "profiler_metadata.json"), "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=4)
        dirs.append(sub)
    return dirs


MSTX_RANKS = ((0, 0, True, True), (1, 300_000, False, False), (2, 600_000, True, True))


def mstx_cluster(d):
    """Three ranks' DBs (mstx_db): ranks 0 and 2 with steps and PyTorch calls, rank 1 without either."""
    dirs = []
    for rank, stretch, steps, pytorch in MSTX_RANKS:
        sub = os.path.join(d, "mstx_rank%d" % rank)
        os.makedirs(sub, exist_ok=True)
        mstx_db(os.path.join(sub, "msprof_%d.db" % rank), rank, stretch, steps, pytorch)
        dirs.append(sub)
    return dirs


MODULE_TABLES = (
    "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
    "CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);"
    "CREATE TABLE MSTX_EVENTS (startNs INTEGER, endNs INTEGER, eventType INTEGER, rangeId INTEGER, "
    "  category INTEGER, message INTEGER, globalTid INTEGER, endGlobalTid INTEGER, domainId INTEGER, "
    "  connectionId INTEGER);"
    "CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, "
    "  globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, "
    "  taskId INTEGER, modelId INTEGER);"
    "CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER, blockDim INTEGER, mixBlockDim INTEGER, "
    "  taskType INTEGER, opType INTEGER, inputFormats INTEGER, inputDataTypes INTEGER, inputShapes INTEGER, "
    "  outputFormats INTEGER, outputDataTypes INTEGER, outputShapes INTEGER, attrInfo INTEGER);"
    "CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER, connectionId INTEGER, "
    "  groupName INTEGER, opId INTEGER, relay INTEGER, retry INTEGER, dataType INTEGER, algType INTEGER, "
    "  count NUMERIC, opType INTEGER);"
    "CREATE TABLE PYTORCH_API (startNs INTEGER, endNs INTEGER, globalTid INTEGER, connectionId INTEGER, "
    "  name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, "
    "  callchainId INTEGER, type INTEGER);"
    "CREATE TABLE CONNECTION_IDS (id INTEGER, connectionId INTEGER);")


def module_db(path, rank, stretch, backward):
    """An msprof-style DB of one rank for module_statistic (msprof's table
    layouts): mstx ranges of the domain Module (Model > Layer > Attn twice,
    with the same ops; three Blocks one after the other, two or three op
    sequences), a range of another domain, PyTorch calls linked to their
    compute kernels (one with two) and to a communication op through
    CONNECTION_IDS, a call outside every module; when backward, forward calls
    linked to backward calls (a connection id shared by two calls), one
    forward call named Enqueue. stretch (ns) moves the later events so that
    ranks differ; rank 1's third Block runs other ops."""
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.executescript(MODULE_TABLES)
    sid = {}

    def s(v):
        if v not in sid:
            sid[v] = len(sid) + 1
            con.execute("INSERT INTO STRING_IDS VALUES (?, ?)", (sid[v], v))
        return sid[v]
    con.execute("INSERT INTO RANK_DEVICE_MAP VALUES (?, 0)", (rank,))
    st = [0, 0]  # PyTorch call id, task id

    def rng(name, a, b, domain="Module"):
        con.execute("INSERT INTO MSTX_EVENTS VALUES (?, ?, 2, 0, 0, ?, 7, 7, ?, 4294967295)",
                    (T0 + a, T0 + b, s(name), s(domain)))

    def call(name, a, b, kernels=(), flows=(), comm=None):
        st[0] += 1
        con.execute("INSERT INTO PYTORCH_API VALUES (?, ?, 7, ?, ?, 0, 0, 0, 0, 0, 0)",
                    (T0 + a, T0 + b, st[0], s(name)))
        for f in flows:
            con.execute("INSERT INTO CONNECTION_IDS VALUES (?, ?)", (st[0], f))
        if kernels or comm:
            conn = 1000 + st[0]
            con.execute("INSERT INTO CONNECTION_IDS VALUES (?, ?)", (st[0], conn))
        for k, (kname, ka, kb) in enumerate(kernels):
            st[1] += 1
            con.execute("INSERT INTO TASK VALUES (?, ?, 0, ?, ?, 1, 0, 0, 2, ?, 0)",
                        (T0 + 500_000 + ka, T0 + 500_000 + kb, conn, st[1], st[1]))
            con.execute("INSERT INTO COMPUTE_TASK_INFO VALUES (?, ?, 8, 0, 0, ?, 0, 0, 0, 0, 0, 0, 0)",
                        (s(kname), st[1], s(kname)))
        if comm:
            con.execute("INSERT INTO COMMUNICATION_OP VALUES (?, ?, ?, ?, ?, 1, 0, 0, 0, 0, 1024, ?)",
                        (s(comm[0] + "_1_1"), T0 + 500_000 + comm[1], T0 + 500_000 + comm[2], conn, s("group0"),
                         s(comm[0])))
    x = stretch
    rng("Step", 0, 300_000 + x, "default")
    rng("Model", 1_000, 200_000 + x)
    for n, base in ((1, 2_000), (2, 41_000)):
        rng("Layer", base, base + 38_000)
        rng("Attn", base + 8_000, base + 18_000)
        call("aten::matmul", base + 1_000, base + 3_000 + x // 10, [("MatMul", base * 2, base * 2 + 900 + x)],
             flows=[5000 + n] if backward else ())
        call("aten::add", base + 4_000, base + 6_000, [("Add", base * 2 + 1_000, base * 2 + 1_300)],
             flows=[5010 + n] if backward and n == 1 else ())
        call("aten::softmax", base + 9_000, base + 11_000,
             [("SoftmaxA", base * 2 + 2_000, base * 2 + 2_400), ("SoftmaxB", base * 2 + 2_500, base * 2 + 2_700 + n)],
             flows=[5020 + n] if backward and n == 1 else ())
    blocks = (("aten::mul", "aten::relu"), ("aten::mul", "aten::gelu"),
              ("aten::mul", "aten::relu") if rank != 1 else ("aten::mul", "aten::tanh"))
    for k, ops in enumerate(blocks):
        a = 81_000 + 10_000 * k + x
        rng("Block", a, a + 9_000)
        for j, op in enumerate(ops):
            call(op, a + 1_000 + 3_000 * j, a + 3_000 + 3_000 * j,
                 [(op[6:].capitalize(), 200_000 + a + 1_000 * j, 200_000 + a + 1_000 * j + 300 + 10 * k)])
    call("HcclAllreduce", 112_000 + x, 118_000 + x, comm=("hcom_allReduce_", 400_000, 460_000 + x))
    call("aten::copy_", 250_000 + x, 252_000 + x, [("Copy", 600_000, 600_500)])
    if backward:
        for name, a, b, flow, kern in (("MatmulBackward0", 140_000, 142_000, 5002, "MatMulGradA"),
                                       ("SoftmaxBackward0", 146_000, 148_000, 5021, "SoftmaxGrad"),
                                       ("MatmulBackward0", 150_000, 152_000, 5001, "MatMulGradB"),
                                       ("AddBackward0", 153_000, 154_000, 5011, "AddGrad")):
            call(name, a + x, b + x, [(kern, 300_000 + a, 300_000 + a + 700)], flows=[flow])
        call("Enqueue", 160_000 + x, 161_000 + x, flows=[5030])
        call("aten::mul", 162_000 + x, 163_000 + x, [("Mul", 370_000, 370_100)], flows=[5030])
    con.commit()
    con.close()


MODULE_RANKS = ((0, 0, True), (1, 3_000, False))


def module_cluster(d):
    """Two ranks' DBs (module_db): rank 0 with backward calls, rank 1 without."""
    dirs = []
    for rank, stretch, backward in MODULE_RANKS:
        sub = os.path.join(d, "module_rank%d" % rank)
        os.makedirs(sub, exist_ok=True)
        module_db(os.path.join(sub, "msprof_%d.db" % rank), rank, stretch, backward)
        dirs.append(sub)
    return dirs


FREE_TABLES = MODULE_TABLES + (
    "CREATE TABLE CANN_API (startNs INTEGER, endNs INTEGER, type INTEGER, globalTid INTEGER, "
    "  connectionId INTEGER, name INTEGER);")


def free_db(path, rank, pytorch):
    """An msprof-style DB of one rank for free_analysis: compute kernels with
    their CANN and (when pytorch) PyTorch calls, other tasks inside the
    longest free interval (two EVENT_WAIT, one MEMCPY_ASYNC), intervals whose
    tasks around them give each of the recipe's reasons (PyTorch idle, a long
    gap between CANN launches, a long launch), and a communication op with no
    task after it (rank 0) or before it (rank 1). Every free interval has its
    own length."""
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.executescript(FREE_TABLES)
    sid = {}

    def s(v):
        if v not in sid:
            sid[v] = len(sid) + 1
            con.execute("INSERT INTO STRING_IDS VALUES (?, ?)", (sid[v], v))
        return sid[v]
    con.execute("INSERT INTO RANK_DEVICE_MAP VALUES (?, 0)", (rank,))
    n = [0]

    def task(a, b, kind, conn=None):
        n[0] += 1
        con.execute("INSERT INTO TASK VALUES (?, ?, 0, ?, ?, 1, ?, 0, 2, ?, 0)", (T0 + a, T0 + b, conn, n[0], s(kind),
                                                                                n[0]))
        return n[0]

    def kernel(a, b, cann, pt):
        conn = 7000 + n[0]
        gid = task(a, b, "KERNEL_AICORE", conn)
        con.execute("INSERT INTO COMPUTE_TASK_INFO VALUES (?, ?, 8, 0, 0, ?, 0, 0, 0, 0, 0, 0, 0)",
                    (s("Kernel%d" % gid), gid, s("Kernel")))
        con.execute("INSERT INTO CANN_API VALUES (?, ?, 20000, 7, ?, ?)", (T0 + cann[0], T0 + cann[1], conn,
                                                                           s("aclnnKernel")))
        if pytorch:
            con.execute("INSERT INTO PYTORCH_API VALUES (?, ?, 7, ?, ?, 0, 0, 0, 0, 0, 0)",
                        (T0 + pt[0], T0 + pt[1], gid, s("aten::op%d" % gid)))
            con.execute("INSERT INTO CONNECTION_IDS VALUES (?, ?)", (gid, conn))

    def comm(a, b):
        con.execute("INSERT INTO COMMUNICATION_OP VALUES (?, ?, ?, NULL, ?, 1, 0, 0, 0, 0, 1024, ?)",
                    (s("hcom_allReduce__1_1"), T0 + a, T0 + b, s("group0"), s("hcom_allReduce_")))
    x = rank * 1_000
    if rank == 1:
        comm(20_000, 30_000)
    kernel(100_000, 200_000, (50_000, 60_000), (40_000, 45_000))
    task(250_000, 260_000, "EVENT_WAIT")
    task(300_000, 320_000 + x, "EVENT_WAIT")
    task(400_000, 410_000, "MEMCPY_ASYNC")
    kernel(500_000, 600_000, (450_000, 460_000), (440_000, 445_000))
    kernel(700_000 + x, 750_000, (610_000, 620_000), (600_000, 605_000))
    kernel(1_000_000, 1_050_000, (900_000, 910_000), (630_000, 640_000))
    kernel(1_310_000, 1_311_234 + x, (1_040_000, 1_280_000), (700_000, 705_000))
    if rank == 0:
        comm(1_400_000, 1_450_500)
    con.commit()
    con.close()


FREE_RANKS = ((0, True), (1, False))


def free_cluster(d):
    """Two ranks' DBs (free_db): rank 0 with PyTorch calls, rank 1 without."""
    dirs = []
    for rank, pytorch in FREE_RANKS:
        sub = os.path.join(d, "free_rank%d" % rank)
        os.makedirs(sub, exist_ok=True)
        free_db(os.path.join(sub, "msprof_%d.db" % rank), rank, pytorch)
        dirs.append(sub)
    return dirs


def free_timeline(path, flows=True):
    """free_db's rank 0 (with PyTorch calls) as a torch_npu timeline: the
    same tasks (Ascend Hardware, the kernels AI_CORE with their connection
    ids), CANN calls (Node@launch), PyTorch calls (cpu_op) and communication
    op, and per kernel the async_npu flow (torch_to_npu) from its PyTorch
    call to the task, the only link between the two (when flows). The
    second kernel's call sits inside a longer call of its thread
    (aten::outer), which its flow must not pick."""
    def us(t):
        return str(Decimal(T0 + t) / 1000)

    py, cann, hw, comm = 100, 200, 300, 400
    ev = [{"ph": "M", "name": "process_name", "pid": p, "tid": 0, "args": {"name": n}}
          for p, n in ((py, "Python"), (cann, "CANN"), (hw, "Ascend Hardware"), (comm, "Communication"))]
    n = [0]

    def x(pid, tid, name, a, b, args, cat=None):
        e = {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": us(a), "dur": str(Decimal(b - a) / 1000),
             "args": args}
        if cat:
            e["cat"] = cat
        ev.append(e)

    def task(a, b, kind, conn=None):
        n[0] += 1
        args = {"Task Type": kind, "Stream Id": 2, "Task Id": n[0]}
        if conn is not None:
            args["connection_id"] = conn
        x(hw, 2, kind if conn is None else "Kernel%d" % n[0], a, b, args)
        return n[0]

    def kernel(a, b, c, pt):
        conn = 7000 + n[0]
        gid = task(a, b, "AI_CORE", conn)
        x(cann, 7, "Node@launch", c[0], c[1], {"level": "node", "connection_id": conn})
        x(py, 7, "aten::op%d" % gid, pt[0], pt[1], {"Sequence number": -1}, "cpu_op")
        if flows:
            ev.append({"ph": "s", "bp": "e", "name": "torch_to_npu", "id": T0 + a, "pid": py, "tid": 7,
                       "ts": us(pt[0]), "cat": "async_npu"})
            ev.append({"ph": "f", "bp": "e", "name": "torch_to_npu", "id": T0 + a, "pid": hw, "tid": 2,
                       "ts": us(a), "cat": "async_npu"})

    kernel(100_000, 200_000, (50_000, 60_000), (40_000, 45_000))
    task(250_000, 260_000, "EVENT_WAIT")
    task(300_000, 320_000, "EVENT_WAIT")
    task(400_000, 410_000, "MEMCPY_ASYNC")
    kernel(500_000, 600_000, (450_000, 460_000), (440_000, 445_000))
    x(py, 7, "aten::outer", 430_000, 447_000, {"Sequence number": -1}, "cpu_op")
    kernel(700_000, 750_000, (610_000, 620_000), (600_000, 605_000))
    kernel(1_000_000, 1_050_000, (900_000, 910_000), (630_000, 640_000))
    kernel(1_310_000, 1_311_234, (1_040_000, 1_280_000), (700_000, 705_000))
    x(comm, 0, "hcom_allReduce__1_1", 1_400_000, 1_450_500, {"data_type": "FP16", "count": 1024})
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(ev, f)


def read_csv(path):
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    return text.split("\n", 1)[0].rstrip("\r"), list(csv.reader(text.splitlines()[1:]))


def close(got, want):
    return abs(float(got) - float(want)) <= 1e-9 * max(1.0, abs(float(want)))


def ns(ts):
    return int(Decimal(str(ts)) * 1000)


def pids(ev):
    return {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}


def dixon_cluster(gen, d):
    """Eight Ascend ranks from one trace; the collectives of rank r stretched by
    1 + r/16, but rank 5's first of each op name shrunk to 0.4. Returns the
    eight paths."""
    base = os.path.join(d, "group.json")
    if not os.path.exists(base):
        gen("--kind", "ascend", "--events", "6000", "--ranks", "4", "--seed", "7", "-o", base)
    paths = []
    for r in range(8):
        p = os.path.join(d, "dixon_rank%d.json" % r)
        if not os.path.exists(p):
            with open(base, encoding="utf-8") as f:
                ev = json.load(f)
            comm = [pid for pid, name in pids(ev).items() if name == "Communication"]
            seen = set()
            for e in ev:
                if e.get("pid") in comm and e.get("ph") == "X":
                    num, den = (2, 5) if r == 5 and e["name"] not in seen else (16 + r, 16)
                    seen.add(e["name"])
                    e["dur"] = float(Decimal(ns(e["dur"]) * num // den) / 1000)
            with open(p, "w", encoding="utf-8") as f:
                json.dump(ev, f)
        paths.append(p)
    return paths


def sigma_cluster(gen, d):
    """Eight Kineto ranks (seeds 1..8), their all-reduce NCCL kernels only (the
    op names of a group must occur equally often); rank 2's every third
    shrunk to 1%. Returns the eight paths."""
    paths = []
    for r in range(8):
        p = os.path.join(d, "sigma_rank%d.json" % r)
        if not os.path.exists(p):
            raw = p + ".gen"
            gen("--kind", "kineto", "--events", "30000", "--ranks", "8", "--rank", str(r), "--seed", str(r + 1),
                "-o", raw)
            with open(raw, encoding="utf-8") as f:
                doc = json.load(f)
            os.remove(raw)
            doc["traceEvents"] = [e for e in doc["traceEvents"]
                                  if not e.get("name", "").startswith("ncclDevKernel_AllGather")]
            if r == 2:
                seen = 0
                for e in doc["traceEvents"]:
                    if e.get("ph") == "X" and e.get("cat") == "kernel" and e.get("name", "").startswith("nccl"):
                        seen += 1
                        if seen % 3 == 0:
                            e["dur"] = e["dur"] / 100
            with open(p, "w", encoding="utf-8") as f:
                json.dump(doc, f)
        paths.append(p)
    return paths


REFERENCE = {
    "dixon": {
        "rank_stats": [[5, 2]],
        "slow_op_stats": [
            ["5", "hcom_allReduce__538_2_1", "", 1704161763447122931, 24, 17118.260833333334, 3270.0084277574374, 6111.507, 15633.320749999999, 17396.6185, 19162.283, 21963.229, 410838.26],
            ["5", "hcom_allGather__538_0_1", "", 1704161763488490182, 24, 9819.744666666667, 1837.5303306208407, 3408.77, 8999.95375, 10015.927, 11029.2375, 12250.268, 235673.872],
        ],
    },
    "sigma": {
        "rank_stats": [[2, 1]],
        "slow_op_stats": [
            ["2", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "0", 1428628978259091, 1014, 5793.205620315582, 7352.375628042224, 183.962, 2322.584, 2672.206, 6889.26, 37459.024, 5874310.499],
        ],
    },
}


def main(tb_path, gen_path, out, only):
    tb = tbtest.Program(tb_path)
    gen = tbtest.Program(gen_path, code=0)
    suite = tbtest.Suite(tb, work=os.path.join(out, "cases"))
    inputs = tbtest.fresh_dir(os.path.join(out, "inputs"))

    def report(t, dirs, spec, *words, out=None, name=None):
        """Runs `tracebook report -q -dir DIR... --spec SPEC WORDS... -o OUT` (dirs: a folder or a
        list; spec: a builtin's name or a spec file; OUT: the case's out folder unless given),
        checks that it exits 0, and returns read_csv of OUT/NAME.csv (NAME: the builtin's name
        unless given): (header, rows), or (None, []) when the report wrote no such file."""
        out = out or t.out
        args = ["report", "-q"]
        for d in [dirs] if isinstance(dirs, str) else dirs:
            args += ["-dir", d]
        is_file = spec.endswith(".yaml")
        r = t.run(*args, "--spec", spec if is_file else "builtin:" + spec, *words, "-o", out)
        t.eq(r.rc, 0, "%s: exit code (stderr: %s)" % (" ".join((spec,) + words), r.err.strip()))
        path = os.path.join(out, (name or spec) + ".csv")
        return read_csv(path) if os.path.exists(path) else (None, [])

    def same_as_ref(t, got, ref, what):
        """The (header, rows) of a report against the recipe's CSV ref (REFERENCE_DIR): the header
        byte for byte, as many rows, each cell the same (numbers to 1e-9: same_cell)."""
        (head, rows), (want_head, want) = got, read_csv(os.path.join(REFERENCE_DIR, ref))
        t.eq(head, want_head, "%s: the recipe's header, byte for byte" % what)
        t.eq(len(rows), len(want), "%s: rows" % what)
        for k, (g, w) in enumerate(zip(rows, want)):
            t.check(len(g) == len(w) and all(same_cell(a, b) for a, b in zip(g, w)), "%s row %d" % (what, k + 1),
                    "%s vs %s" % (g, w))

    def run_vote(t, paths):
        head, ranks = report(t, paths, "slow_rank_vote")
        t.eq(head, RANK_STATS_HEAD, "rank_stats.csv's header")
        head, ops = report(t, paths, "slow_op_stats")
        t.eq(head, SLOW_OP_HEAD, "slow_op_stats.csv's header")
        return [[int(a), int(b)] for a, b in ranks], ops

    def compare(t, name, ranks, ops):
        ref = REFERENCE[name]
        t.eq(ranks, ref["rank_stats"], "rank_stats: rank and slowAffectCount, in msprof-analyze's order")
        t.eq([o[:5] for o in ops], [[r[0], r[1], r[2], str(r[3]), str(r[4])] for r in ref["slow_op_stats"]],
             "slow_op_stats: SlowRank, OpName, GroupName, Timestamp, Count")
        for o, r in zip(ops, ref["slow_op_stats"]):
            for k, (got, want) in enumerate(zip(o[5:], r[5:])):
                t.check(abs(float(got) - want) <= 1e-9 * max(1.0, abs(want)),
                        "slow_op_stats %s, %s" % (o[1], SLOW_OP_HEAD.split(",")[5 + k]), "%s vs %r" % (got, want))

    @suite.case("slow_rank_vote, dixon: 8 Ascend ranks, rank 5 voted as by msprof-analyze")
    def case_dixon(t):
        ranks, ops = run_vote(t, dixon_cluster(gen, inputs))
        t.check(ranks and ranks[0][0] == 5, "rank 5 voted first", ranks)
        compare(t, "dixon", ranks, ops)

    @suite.case("slow_rank_vote, 3 sigma: 8 Kineto ranks, rank 2's short kernels voted as by msprof-analyze")
    def case_sigma(t):
        ranks, ops = run_vote(t, sigma_cluster(gen, inputs))
        t.check(any(r[0] == 2 for r in ranks), "rank 2 voted", ranks)
        t.check(all(int(o[4]) > 100 for o in ops), "lists of more than 100 times: the 3-sigma rule")
        compare(t, "sigma", ranks, ops)

    @suite.case("slow_rank_vote: equal ranks give no vote (rows none, header kept)")
    def case_equal(t):
        base = dixon_cluster(gen, inputs)[0]
        copies = []
        for r in range(4):
            p = t.path("same%d.json" % r)
            with open(base, "rb") as src, open(p, "wb") as dst:
                dst.write(src.read())
            copies.append(p)
        ranks, ops = run_vote(t, copies)
        t.eq((ranks, ops), ([], []), "no vote among equal times")

    @suite.case("cluster_time_summary: 8 ranks in tp, pp and dp groups equal msprof-analyze's recipe")
    def case_time_summary(t):
        head, rows = report(t, parallel_cluster(gen, inputs), "cluster_time_summary")
        want_head, want = read_csv(TIME_SUMMARY_REF)
        t.eq(head, want_head, "the recipe's header, byte for byte")
        t.eq([r[:2] for r in rows], [w[:2] for w in want], "Rank and Step of each row, in the recipe's order")
        for r, w in zip(rows, want):
            for k in range(2, len(w)):
                t.check(close(r[k], w[k]), "rank %s step %s %s" % (r[0], r[1], want_head.split(",")[k]),
                        "%s vs %s" % (r[k], w[k]))
        t.check(any(float(r[8]) > 0 for r in rows), "some rank waited in a collective", rows[:2])
        t.check(any(float(r[11]) > 0 for r in rows), "some memory copy not overlapped", rows[:2])

    @suite.case("cluster_time_summary: one rank alone has no wait or transmit stage, the rest as in the cluster")
    def case_time_summary_one(t):
        head, rows = report(t, os.path.join(parallel_cluster(gen, inputs), "rank3_ascend_pt"), "cluster_time_summary")
        _, want = read_csv(TIME_SUMMARY_REF)
        want = [w for w in want if w[0] == "3"]
        t.eq([r[:2] for r in rows], [w[:2] for w in want], "rank 3's steps")
        for r, w in zip(rows, want):
            t.eq((float(r[8]), float(r[9])), (0.0, 0.0), "wait and transmit of step %s" % r[1])
            t.check(all(close(r[k], w[k]) for k in (2, 3, 4, 5, 6, 7, 10, 11)), "the other figures of step %s" % r[1],
                    (r, w))

    @suite.case("cluster_time_summary: without communication ops no row, as the recipe")
    def case_time_summary_none(t):
        d = t.path("single")
        gen("--kind", "torch_npu_dir", "--events", "3000", "--ranks", "1", "-o", d)
        head, rows = report(t, d, "cluster_time_summary")
        t.eq(rows, [], "no row")

    def group_map(t, *dirs):
        args = ["report", "-q"]
        for d in dirs:
            args += ["-dir", d]
        r = t.run(*args, "--spec", "builtin:communication_group_map", "-o", t.out)
        t.eq(r.rc, 0, "exit code (stderr: %s)" % r.err.strip())
        with open(os.path.join(t.out, "communication_group_map.csv"), encoding="utf-8", newline="") as f:
            return f.read()

    @suite.case("communication_group_map: the 8-rank cluster's tp, dp and pp groups, byte for byte msprof-analyze's")
    def case_group_map(t):
        got = group_map(t, parallel_cluster(gen, inputs))
        with open(GROUP_MAP_REF, encoding="utf-8", newline="") as f:
            want = f.read()
        t.eq(got, want, "CommunicationGroupMapping as the recipe wrote it")

    @suite.case("communication_group_map: without profiler_metadata.json the ranks of the ops, no id or name")
    def case_group_map_bare(t):
        src = parallel_cluster(gen, inputs)
        d = t.path("bare")
        shutil.copytree(src, d, ignore=shutil.ignore_patterns("profiler_metadata.json"))
        got = list(csv.reader(group_map(t, d).splitlines()))
        with open(GROUP_MAP_REF, encoding="utf-8", newline="") as f:
            want = list(csv.reader(f.read().splitlines()))
        t.eq(got, [want[0]] + [w[:3] + ["", ""] for w in want[1:]],
             "type, the ops' ranks, group name; group_id and pg_name empty")

    def group_json(t, d):
        r = t.run("report", "-q", "-dir", d, "--spec", "builtin:communication_group", "-o", t.out)
        t.eq(r.rc, 0, "exit code (stderr: %s)" % r.err.strip())
        t.eq(sorted(os.listdir(t.out)), ["communication_group.json", "tracebook_run.json"], "the files written")
        with open(os.path.join(t.out, "communication_group.json"), encoding="utf-8", newline="") as f:
            return f.read()

    def ref_groups(t, d):
        """msprof-analyze's CommunicationGroupMapping rows of the cluster in d, as comm_group_parallel_info
        entries, in the cluster analysis' read order: by first op, the ranks ascending, each rank's
        communication ops (trace events here: the cluster has no communication.json) by start."""
        with open(GROUP_MAP_REF, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        for w in rows:
            w["rank_set"] = [int(x) for x in w["rank_set"].strip("()").split(",")]
        db = t.path("order.db")
        if not os.path.exists(db):
            r = t.run("export", "db", "-q", "-dir", d, "-o", db)
            t.eq(r.rc, 0, "export db (stderr: %s)" % r.err.strip())
        con = sqlite3.connect(db)
        first = {}
        for name, group in con.execute("SELECT name, groupName FROM comm_op WHERE groupName IS NOT NULL "
                                       "ORDER BY rankId, startNs"):
            kind = "p2p" if any(k in name.lower() for k in ("send", "receive", "recv")) else "collective"
            first.setdefault((kind, str(group)), len(first))
        con.close()
        return sorted(rows, key=lambda w: (w["type"], first[(w["type"], w["group_name"])]))

    @suite.case("communication_group: communication_group.json of the 8-rank cluster, msprof-analyze's shape and groups")
    def case_group_json(t):
        text = group_json(t, parallel_cluster(gen, inputs))
        doc = json.loads(text)
        t.eq(text, json.dumps(doc), "one line, json.dump's separators, no newline after")
        t.eq(list(doc), ["collective", "p2p", "comm_group_parallel_info"], "the keys, in msprof-analyze's order")
        want = ref_groups(t, parallel_cluster(gen, inputs))
        t.eq(doc["comm_group_parallel_info"], want, "comm_group_parallel_info: the recipe's rows, rank_set a list")
        t.eq(doc["collective"], [w["rank_set"] for w in want if w["type"] == "collective"],
             "collective: the 4 tp and 4 dp groups of 2")
        t.eq(doc["p2p"], [w["rank_set"] for w in want if w["type"] == "p2p"], "p2p: the 4 pp groups")
        t.eq(sorted(len(g) for g in doc["collective"] + doc["p2p"]), [2] * 12, "groups of 2")

    @suite.case("communication_group: without profiler_metadata.json the groups of the ops, no id or name")
    def case_group_json_bare(t):
        src = parallel_cluster(gen, inputs)
        d = t.path("bare")
        shutil.copytree(src, d, ignore=shutil.ignore_patterns("profiler_metadata.json"))
        doc = json.loads(group_json(t, d))
        want = ref_groups(t, d)
        for w in want:
            w["group_id"] = w["pg_name"] = ""
        t.eq(doc["comm_group_parallel_info"], want, "type, ranks and name of each group; group_id and pg_name empty")

    def py_set_list(ranks):
        """The list python3 itself gives for the set msprof-analyze builds: an empty set, add() of
        each rank in the order the ranks are read (ascending here), then list(set)."""
        s = set()
        for r in ranks:
            s.add(r)
        return list(s)

    @suite.case("communication_group: ranks of groups of 8 and 16 in CPython's set order, as msprof-analyze's lists")
    def case_group_json_set_order(t):
        seen_unsorted, docs = 0, {}
        for ranks, tp, want_sizes in ((128, 8, [8, 16]), (32, 16, [2, 16])):
            d = t.path("c%d" % ranks)
            gen("--kind", "torch_npu_dir", "--events", "2000", "--ranks", str(ranks), "--parallel", "%d,1" % tp,
                "--seed", "5", "-o", d)
            doc = docs[ranks] = json.loads(group_json(t, d))
            shutil.rmtree(t.out)
            os.mkdir(t.out)
            info = [w for w in doc["comm_group_parallel_info"] if w["type"] == "collective"]
            t.eq(sorted(set(len(g) for g in doc["collective"])), want_sizes, "%d ranks: the sizes of the groups" % ranks)
            t.eq([sorted(g) for g in doc["collective"]], [w["rank_set"] for w in info],
                 "%d ranks: each list holds its group's ranks" % ranks)
            t.eq(doc["collective"], [py_set_list(w["rank_set"]) for w in info],
                 "%d ranks: each list in python3's order of the set" % ranks)
            seen_unsorted += sum(g != sorted(g) for g in doc["collective"])
        t.check([0, 32, 64, 96, 8, 40, 72, 104, 16, 48, 80, 112, 24, 56, 88, 120] in docs[128]["collective"],
                "the dp group {0, 8, ..., 120} in its slot order", "")
        t.check(seen_unsorted >= 8, "lists whose set order is not ascending", seen_unsorted)

    @suite.case("communication_group: one rank without communication ops writes no file")
    def case_group_json_none(t):
        d = t.path("single")
        gen("--kind", "torch_npu_dir", "--events", "3000", "--ranks", "1", "-o", d)
        r = t.run("report", "-q", "-dir", d, "--spec", "builtin:communication_group", "-o", t.out)
        t.eq(r.rc, 0, "exit code (stderr: %s)" % r.err.strip())
        t.check(not os.path.exists(os.path.join(t.out, "communication_group.json")), "no file", os.listdir(t.out))

    @suite.case("json_shape: document: a report's one cell written as the file; another shape is an error")
    def case_json_document(t):
        src = parallel_cluster(gen, inputs)
        cases = [("SELECT json_object('a', 1, 'b', json_array(1.5, 'é')) AS doc", 0, '{"a": 1, "b": [1.5, "\\u00e9"]}'),
                 ("SELECT '[1' AS doc", 1, "is not valid JSON"),
                 ("SELECT '1' AS a, '2' AS b", 1, "must give one column"),
                 ("SELECT '1' AS doc UNION ALL SELECT '2'", 1, "must give one row"),
                 ("SELECT NULL AS doc", 1, "as text, got NULL"),
                 ("SELECT '1' AS doc WHERE 0", 1, "got none")]
        for k, (sql, fails, want) in enumerate(cases):
            spec = t.path("doc%d.yaml" % k)
            with open(spec, "w", encoding="utf-8") as f:
                f.write("tracebook: 1\nreports:\n  - id: doc\n    outputs: json\n    json_shape: document\n"
                        "    sql: \"%s\"\n" % sql.replace('"', '\\"'))
            out = t.path("out%d" % k)
            r = t.run("report", "-q", "-dir", os.path.join(src, "rank0_ascend_pt"), "--spec", spec, "-o", out)
            path = os.path.join(out, "doc.json")
            if fails:
                t.check(r.rc != 0 and want in r.err and "doc.json" in r.err, "%s: an error naming the file" % sql,
                        (r.rc, r.err))
                t.check(not os.path.exists(path), "%s: no file" % sql, os.listdir(out) if os.path.isdir(out) else [])
            else:
                t.eq(r.rc, 0, "exit code (stderr: %s)" % r.err.strip())
                with open(path, encoding="utf-8") as f:
                    t.eq(f.read(), want, "the document as json.dump writes it")
        spec = t.path("bad.yaml")
        with open(spec, "w", encoding="utf-8") as f:
            f.write("tracebook: 1\nreports:\n  - id: doc\n    json_shape: object\n    sql: SELECT 1\n")
        r = t.run("report", "-q", "-dir", os.path.join(src, "rank0_ascend_pt"), "--spec", spec, "-o", t.out)
        t.check(r.rc != 0 and "bad.yaml:4" in r.err and "'json_shape' must be rows or document" in r.err,
                "an unknown json_shape is a spec error at its line", (r.rc, r.err))

    def same_cell(got, want):
        if want == "" or got == "":
            return got == want
        try:
            return close(got, want)
        except ValueError:
            return got == want

    @suite.case("mstx_sum: 3 ranks' mstx marks and ranges, the recipe's four CSVs")
    def case_mstx_sum(t):
        spec = t.path("mstx.yaml")
        with open(spec, "w", encoding="utf-8") as f:
            f.write("tracebook: 1\nreports:\n" + "".join("  - use: %s\n" % r for r, _ in MSTX_REFS))
        same_as_ref(t, report(t, mstx_cluster(t.path("in")), spec, name=MSTX_REFS[0][0]), MSTX_REFS[0][1],
                    MSTX_REFS[0][0])
        for name, ref in MSTX_REFS[1:]:  # written by the same run
            same_as_ref(t, read_csv(os.path.join(t.out, name + ".csv")), ref, name)

    @suite.case("pp_chart: the forward and backward device tasks of 3 ranks' mstx events, as the recipe")
    def case_pp_chart(t):
        got = report(t, mstx_cluster(t.path("in")), "pp_chart")
        want = read_csv(os.path.join(REFERENCE_DIR, "msprof_analyze_pp_chart_3ranks.csv"))
        t.eq(got, want, "rankId and the recipe's StepTaskInfo rows (name, startNs, endNs, type)")
        t.check(any(row[1] == "BP" for row in got[1]), "backward rows", got[1])

    @suite.case("module_statistic: 2 ranks' Module ranges, ops, kernels and backward calls, as the recipe")
    def case_module_statistic(t):
        got = report(t, module_cluster(t.path("in")), "module_statistic")
        same_as_ref(t, got, "msprof_analyze_module_statistic_2ranks.csv", "ModuleStatistic")
        rows = got[1]
        t.check(any(row[1].startswith("[Backward]") for row in rows) and any(row[1] == "Block_2" for row in rows),
                "backward modules and numbered repeats", rows)

    def skipped(t, out, what):
        with open(os.path.join(out, "tracebook_run.json"), encoding="utf-8") as f:
            rep = json.load(f)["reports"][0]
        t.check(not os.path.exists(os.path.join(out, "module_statistic.csv")) and
                rep["skipped"] == "the data has no module_stats rows",
                "%s: no row, no file (as the recipe)" % what, rep)

    @suite.case("module_statistic: Module ranges without ops linked to kernels, or no Module range: no row")
    def case_module_statistic_none(t):
        d = module_cluster(t.path("in"))[1]
        con = sqlite3.connect(os.path.join(d, "msprof_1.db"))
        con.execute("DELETE FROM CONNECTION_IDS")
        con.commit()
        con.close()
        report(t, d, "module_statistic", out=t.path("a"))
        skipped(t, t.path("a"), "no op linked")
        d = module_cluster(t.path("in2"))[0]
        con = sqlite3.connect(os.path.join(d, "msprof_0.db"))
        con.execute("UPDATE STRING_IDS SET value = 'Other' WHERE value = 'Module'")
        con.commit()
        con.close()
        report(t, d, "module_statistic", out=t.path("b"))
        skipped(t, t.path("b"), "no Module range")

    @suite.case("free_analysis: 2 ranks' free intervals and their reasons, as the recipe")
    def case_free_analysis(t):
        dirs = free_cluster(t.path("in"))
        got = report(t, dirs, "free_analysis")
        same_as_ref(t, got, "msprof_analyze_free_analysis_2ranks.csv", "free_analysis.csv")
        rows = got[1]
        reasons = {row[6].split(":")[0] for row in rows}
        t.check(len(reasons) == 5, "every kind of reason", reasons)
        got = report(t, dirs, "free_analysis", "--param", "top_num=2", out=t.path("top2"))[1]
        t.eq(got, [row for row in rows if [x[0] for x in rows[:rows.index(row)]].count(row[0]) < 2],
             "top_num 2: the two longest of each rank")

    @suite.case("free_analysis: a torch_npu timeline's async_npu flows link its calls as the DB of the same rank")
    def case_free_analysis_timeline(t):
        db = free_cluster(t.path("in"))[0]
        tl = t.path("tl")
        free_timeline(os.path.join(tl, "trace_view.json"))
        outs = {}
        for name, d in (("db", db), ("tl", tl)):
            outs[name] = report(t, d, "free_analysis", out=t.path(name))
        t.eq(outs["tl"], outs["db"], "free_analysis of the timeline = of the DB of the same rank")
        reasons = {row[6].split(":")[0] for row in outs["tl"][1]}
        t.check({"Idle Pytorch layer", "Abnormal CANN layer"} <= reasons, "reasons from the linked calls", reasons)
        t.check("Skip free analysis due to no pytorch dispatch time." not in reasons, "every task linked", reasons)
        # the links are made for the computed tables, not stored (docs/schema.md)
        r = t.run("query", "-dir", tl, "--format", "json",
                  "SELECT (SELECT count(*) FROM CONNECTION_IDS) AS ids, "
                  "(SELECT count(*) FROM PYTORCH_API WHERE connectionId IS NOT NULL) AS calls")
        t.eq(r.rc, 0, "query the stored links (stderr: %s)" % r.err.strip())
        t.eq(json.loads(r.out), [{"ids": 0, "calls": 0}], "no links in the DB")
        # without the flows the calls are not linked: the reason the DB's rank never gives
        bare = t.path("bare")
        free_timeline(os.path.join(bare, "trace_view.json"), flows=False)
        rows = report(t, bare, "free_analysis", out=t.path("bare-out"))[1]
        t.check(any(row[6] == "Skip free analysis due to no pytorch dispatch time." for row in rows),
                "no flows: no PyTorch call linked", rows)

    @suite.case("export db --pytorch-links of a torch_npu timeline: its links stored as the DB of the rank's")
    def case_export_db_timeline_links(t):
        db = free_cluster(t.path("in"))[0]
        tl = t.path("tl")
        free_timeline(os.path.join(tl, "trace_view.json"))
        out = t.path("tl.db")
        r = t.run("export", "db", "-q", "--pytorch-links", "-dir", tl, "-o", out)
        t.eq(r.rc, 0, "export db (stderr: %s)" % r.err.strip())
        # what msprof-analyze's recipes join: a task's connection id to a CONNECTION_IDS
        # row, its id to the PyTorch call's connectionId
        recipe = ("SELECT t.startNs, p.startNs, p.endNs, s.value FROM TASK t "
                  "JOIN CONNECTION_IDS c ON c.connectionId = t.connectionId "
                  "JOIN PYTORCH_API p ON p.connectionId = c.id JOIN STRING_IDS s ON s.id = p.name "
                  "ORDER BY t.startNs, p.startNs")
        got = {}
        for name, path in (("db", os.path.join(db, "msprof_0.db")), ("tl", out)):
            con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
            got[name] = con.execute(recipe).fetchall()
            if name == "tl":
                calls = con.execute("SELECT count(*), count(DISTINCT connectionId) FROM PYTORCH_API "
                                    "WHERE connectionId IS NOT NULL").fetchone()
                ids = con.execute("SELECT count(*), count(DISTINCT id), min(id), max(id), "
                                  "count(DISTINCT rankId) FROM CONNECTION_IDS").fetchone()
            con.close()
        t.eq(len(got["db"]), 5, "the DB of the rank links its 5 kernels")
        t.eq(got["tl"], got["db"], "each task reaches the same PyTorch call in both DBs")
        t.eq(calls, (5, 5), "5 calls linked, each with an id of its own")
        t.eq(ids, (5, 5, 0, 4, 1), "one CONNECTION_IDS row per call (one task each), ids 0..4, rank 0")
        # the computed tables read the stored links: the same free_analysis as the DB's
        outs = {name: report(t, d, "free_analysis", out=t.path(name + "-out")) for name, d in (("db", db), ("tl", out))}
        t.eq(outs["tl"], outs["db"], "free_analysis of the exported DB = of the DB of the same rank")
        # the links do not come from a read of the DB it was exported from: exported again, the same rows
        again = t.path("again.db")
        r = t.run("export", "db", "-q", "--pytorch-links", "-dir", out, "-o", again)
        t.eq(r.rc, 0, "export db of the exported DB (stderr: %s)" % r.err.strip())
        con = sqlite3.connect("file:%s?mode=ro" % again, uri=True)
        t.eq(con.execute(recipe).fetchall(), got["db"], "kept as stored by a DB input")
        t.eq(con.execute("SELECT count(*) FROM CONNECTION_IDS").fetchone()[0], 5, "no link added twice")
        con.close()
        # without the option, or without the flows, nothing is stored: no row, the calls' connectionId NULL
        bare = t.path("bare")
        free_timeline(os.path.join(bare, "trace_view.json"), flows=False)
        for name, d, words in (("plain", tl, ()), ("bare", bare, ("--pytorch-links",))):
            path = t.path(name + ".db")
            r = t.run("export", "db", "-q", *words, "-dir", d, "-o", path)
            t.eq(r.rc, 0, "export db %s (stderr: %s)" % (name, r.err.strip()))
            con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
            t.eq(con.execute("SELECT (SELECT count(*) FROM CONNECTION_IDS), (SELECT count(*) FROM PYTORCH_API "
                             "WHERE connectionId IS NOT NULL)").fetchone(), (0, 0), "%s: no link stored" % name)
            con.close()

    @suite.case("free_analysis: a rank without free time (one kernel) gives no row")
    def case_free_analysis_none(t):
        d = free_cluster(t.path("in"))[0]
        con = sqlite3.connect(os.path.join(d, "msprof_0.db"))
        con.execute("DELETE FROM COMMUNICATION_OP")
        con.execute("DELETE FROM COMPUTE_TASK_INFO WHERE globalTaskId > 1")
        con.commit()
        con.close()
        report(t, d, "free_analysis")
        with open(os.path.join(t.out, "tracebook_run.json"), encoding="utf-8") as f:
            rep = json.load(f)["reports"][0]
        t.check(not os.path.exists(os.path.join(t.out, "free_analysis.csv")) and
                rep["skipped"] == "the data has no free_time rows", "no row, no file (as the recipe)", rep)

    def pp_chart_run(t, meta, name, via_db=False, json_meta=False, params=(), ref=None, group=2):
        args = ["-q"]
        for d in dualpipev_cluster(t.path(name), meta, json_meta, ref, group):
            args += ["-dir", d]
        if via_db:  # the DB tracebook writes of the cluster keeps the metadata (TB_PROFILE_META)
            db = t.path(name + ".db")
            r = t.run("export", "db", *args, "-o", db)
            t.eq(r.rc, 0, "export db (stderr: %s)" % r.err.strip())
            args = ["-q", "-dir", db]
        out = t.path(name + ("-db" if via_db else "") + "-out")
        args = ["report"] + args
        for p in params:
            args += ["--param", p]
        return t.run(*args, "--spec", "builtin:pp_chart", "-o", out), out

    def pp_chart_rows(t, meta, name, **kw):
        r, out = pp_chart_run(t, meta, name, **kw)
        t.eq(r.rc, 0, "exit code (stderr: %s)" % r.err.strip())
        head, rows = read_csv(os.path.join(out, "pp_chart.csv"))
        t.eq(head, "rankId,name,startNs,endNs,type", "header")
        return rows

    def dualpipev_want(ref, group, ranks=8):
        """The rows pp_chart must give the cluster of dualpipev_cluster(ref, group): each full step's
        tasks named and typed as the recipe's schedule ref says for the rank's stage, other steps ''/0."""
        with open(ref, encoding="utf-8", newline="") as f:
            names = {}
            for r in csv.DictReader(f):
                names.setdefault(int(r["stage"]), []).append([r["name"], r["type"]])
        want = []
        for rank in range(ranks):
            stage = names[rank // group]
            kept = dualpipev_events(rank, len(stage))[1]
            for step in (1, 2):
                mine = [k for k in kept if k[0] == step]
                full = len(mine) == len(stage)
                want += [[str(rank), (stage[i] if full else ["", "0"])[0], str(a), str(b),
                          (stage[i] if full else ["", "0"])[1]] for i, (_, a, b) in enumerate(mine)]
        return want

    @suite.case("pp_chart: DualPipeV (pp_info): 8 ranks' tasks named by the recipe's schedule, stage by stage")
    def case_pp_chart_dualpipev(t):
        with open(DUALPIPEV_REF, encoding="utf-8", newline="") as f:
            names = {}
            for r in csv.DictReader(f):
                names.setdefault(int(r["stage"]), []).append([r["name"], r["type"]])
        want = []
        for rank in range(8):
            kept = dualpipev_events(rank, len(names[rank // 2]))[1]
            for step in (1, 2):
                mine = [k for k in kept if k[0] == step]
                full = len(mine) == len(names[rank // 2])
                want += [[str(rank), *(names[rank // 2][i] if full else ["", "0"])[:1], str(a), str(b),
                          (names[rank // 2][i] if full else ["", "0"])[1]] for i, (_, a, b) in enumerate(mine)]
        got = pp_chart_rows(t, DUALPIPEV_META, "in")
        t.eq(len(got), len(want), "rows")
        for k, (g, w) in enumerate(zip(got, want)):
            t.eq(g, w, "row %d" % (k + 1))
        t.check(any(r[1] == "12F+0B" for r in got) and any(r[1] == "logits" for r in got), "F+B pairs, logits",
                got[:40])
        short = [r for r in got if r[0] == "1" and int(r[2]) >= T0 + STEP_NS]
        t.check(short and all(r[1] == "" and r[4] == "0" for r in short), "rank 1's short step unnamed", short[:3])
        t.eq(pp_chart_rows(t, DUALPIPEV_META, "in", via_db=True), got, "the same rows from tracebook's DB of it")
        args = ["query", "-q", "--format", "csv", "-o", t.path("table.csv")]
        for d in dualpipev_cluster(t.path("in"), DUALPIPEV_META):
            args += ["-dir", d]
        r = t.run(*args, "SELECT rankId, name, startNs, endNs, type FROM pp_dualpipev ORDER BY rankId, step, startNs")
        t.eq(r.rc, 0, "query pp_dualpipev (stderr: %s)" % r.err.strip())
        t.eq(read_csv(t.path("table.csv"))[1], got, "the computed table pp_dualpipev holds the same rows")

    @suite.case("pp_chart: DualPipeV from the ranks' profiler_metadata.json: the rows of META_DATA's pp_info")
    def case_pp_chart_dualpipev_json(t):
        want = pp_chart_rows(t, DUALPIPEV_META, "db")
        t.check(any(r[1] == "12F+0B" for r in want), "named by the schedule through META_DATA", want[:5])
        t.eq(pp_chart_rows(t, DUALPIPEV_META, "json", json_meta=True), want,
             "the same rows with pp_info and distributed_args in profiler_metadata.json")
        t.eq(pp_chart_rows(t, DUALPIPEV_META, "json", json_meta=True, via_db=True), want,
             "and through the DB tracebook writes of that load")
        std = pp_chart_rows(t, {"distributed_args": DUALPIPEV_META["distributed_args"]}, "json-std", json_meta=True)
        t.check(std and {r[1] for r in std} == {"FP", "BP"}, "a profiler_metadata.json without pp_info: FP and BP",
                std[:3])

    @suite.case("pp_chart: DualPipeV with tp, pp and dp given (--param): the recipe's schedule of those sizes")
    def case_pp_chart_dualpipev_params(t):
        sizes = ("tp=4", "pp=2", "dp=1")
        want = dualpipev_want(DUALPIPEV_REF2, 4)
        got = pp_chart_rows(t, DUALPIPEV_META, "p", params=sizes, ref=DUALPIPEV_REF2, group=4)
        t.eq(got, want, "ranks 0-3 stage 0, 4-7 stage 1 of 2, named by the recipe's 2-stage schedule")
        t.check(any(r[1] == "logits" for r in got) and sum(r[1] != "" for r in got) > 100, "named rows", got[:5])
        meta = pp_chart_rows(t, DUALPIPEV_META, "p", ref=DUALPIPEV_REF2, group=4)
        t.check(meta != got and all(r[1] == "" for r in meta if r[0] in ("0", "1")),
                "without the parameters the metadata's tp 2, pp 4: other stages, other counts", meta[:3])
        none = {"pp_info": DUALPIPEV_META["pp_info"]}
        t.eq(pp_chart_rows(t, none, "p-none", params=sizes, ref=DUALPIPEV_REF2, group=4), want,
             "the same without distributed_args in the metadata")
        t.eq(pp_chart_rows(t, none, "p-none-json", params=sizes, ref=DUALPIPEV_REF2, group=4, json_meta=True),
             want, "and with pp_info in profiler_metadata.json")
        t.eq([r for r in pp_chart_rows(t, DUALPIPEV_META, "p8", params=("tp=1", "pp=8", "dp=1"))
              if r[1] != ""], [], "pp 8 needs 16 micro-batches: no names (the recipe has no schedule)")
        t.eq({r[0] for r in pp_chart_rows(t, DUALPIPEV_META, "p1", params=("tp=2", "pp=1", "dp=1"))}, {"0", "1"},
             "tp 2, pp 1, dp 1: ranks 0 and 1 only (the others in no stage)")
        for bad, what in ((("tp=4",), "tp alone: (tp 4, pp 0, dp 0)"),
                          (("tp=4", "pp=-2", "dp=1"), "a negative pp: (tp 4, pp -2, dp 1)")):
            r, out = pp_chart_run(t, DUALPIPEV_META, "bad", params=bad)
            t.eq(r.rc, 5, "%s: exit code (stderr: %s)" % (what, r.err.strip()))
            msg = "report 'pp_chart': dualpipev_slot: tp, pp and dp must be 1 or more " + what.split(": ")[1]
            t.check(msg in r.err, "%s: the message" % what, r.err)
            t.check(not os.path.exists(os.path.join(out, "pp_chart.csv")), "%s: no file" % what, os.listdir(out))

    @suite.case("pp_chart: DualPipeV with too few micro-batches: unnamed; sizes not integers: no rows; no pp_info: FP/BP")
    def case_pp_chart_dualpipev_invalid(t):
        few = dict(DUALPIPEV_META, pp_info={"pp_type": "dualpipev", "microbatch_num": 7})
        got = pp_chart_rows(t, few, "few")
        t.check(got and all(r[1] == "" and r[4] == "0" for r in got), "micro_batch_num 7 < 2 x pp: name '' type 0",
                got[:3])
        bad = dict(DUALPIPEV_META, distributed_args={"pipeline_model_parallel_size": "4"})
        t.eq(pp_chart_rows(t, bad, "bad"), [], "a size that is not an integer: the recipe writes nothing")
        std = pp_chart_rows(t, {"distributed_args": DUALPIPEV_META["distributed_args"]}, "std")
        t.check(std and {r[1] for r in std} == {"FP", "BP"} and {r[4] for r in std} == {"0", "1"},
                "without pp_info: the standard schedule's FP and BP", std[:3])

    suite.main(only)


if __name__ == "__main__":
    ARGS = tbtest.args("TRACEBOOK TRACEBOOK_GEN OUTDIR [CASE...]", 3)
    main(*(os.path.abspath(a) for a in ARGS[:3]), ARGS[3:])
