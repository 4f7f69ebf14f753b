#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# recipes_test.py - the DB `export db` writes serves msprof-analyze's recipes
# that read one rank's DB: hccl_sum (every communication op with its name,
# type, duration and group), slow_rank (the communication time of each op of
# the rank, RANK_DEVICE_MAP crossed with COMMUNICATION_OP joined to its
# launching CANN_API by connectionId) and cluster_time_summary (the same with
# the step of STEP_TIME, and the compute, communication and memcpy tasks by
# their launching API). The queries below ask what those recipes ask of the
# tables, written for this test; each must return rows.
#
# The data: the public torch_npu ranks (summary CSVs and communication.json:
# no CANN_API, so hccl_sum only), and generated torch_npu ranks
# (tracebook-gen: a timeline, kernel_details.csv, step_trace_time.csv) given
# a communication.json naming the group of each of their ops, whose name
# ends in the digits torch_npu's op names carry (hcom_<kind>__<NNN>_...).
# A rank loaded without any group name known keeps groupName NULL.
#
# usage: recipes_test.py TRACEBOOK TRACEBOOK_GEN SHARED_DATA OUTDIR
import csv
import json
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, GEN, SHARED, OUT = tbtest.args("TRACEBOOK TRACEBOOK_GEN SHARED_DATA OUTDIR", 4, 4)
run = tbtest.Program(TB, code=0)

# hccl_sum: per op, its name, type, duration and group, within the rank's span
HCCL_SUM = """
SELECT n.value, t.value, c.endNs - c.startNs, g.value
FROM COMMUNICATION_OP c
LEFT JOIN STRING_IDS n ON n.id = c.opName
LEFT JOIN STRING_IDS t ON t.id = c.opType
LEFT JOIN STRING_IDS g ON g.id = c.groupName
WHERE c.startNs BETWEEN ? AND ?"""

# slow_rank: per op of the rank (the DB's RANK_DEVICE_MAP row), its group and
# op names and its time in us, through the API that launched it
SLOW_RANK = """
SELECT m.rankId, g.value, n.value, c.startNs, (c.endNs - c.startNs) / 1000.0
FROM COMMUNICATION_OP c, RANK_DEVICE_MAP m
JOIN STRING_IDS g ON g.id = c.groupName
JOIN STRING_IDS n ON n.id = c.opName
JOIN CANN_API a ON a.connectionId = c.connectionId
WHERE a.startNs BETWEEN ? AND ?"""

# cluster_time_summary: the same with the step its API falls in
COMM_WITH_STEP = """
SELECT m.rankId, g.value, n.value, (c.endNs - c.startNs) / 1000.0, s.id
FROM COMMUNICATION_OP c, RANK_DEVICE_MAP m
JOIN STRING_IDS g ON g.id = c.groupName
JOIN STRING_IDS n ON n.id = c.opName
JOIN CANN_API a ON a.connectionId = c.connectionId
LEFT JOIN STEP_TIME s ON a.startNs BETWEEN s.startNs AND s.endNs
WHERE a.startNs BETWEEN ? AND ?"""

# cluster_time_summary: compute (0), communication (1) and memcpy (4) device
# time by the start of what launched it, with its step
DEVICE_TIME = """
WITH dev(startNs, endNs, apiNs, kind) AS (
  SELECT t.startNs, t.endNs, a.startNs, 0 FROM COMPUTE_TASK_INFO i
    JOIN TASK t ON t.globalTaskId = i.globalTaskId AND t.startNs <> t.endNs
    JOIN CANN_API a ON a.connectionId = t.connectionId
  UNION ALL
  SELECT c.startNs, c.endNs, a.startNs, 1 FROM COMMUNICATION_OP c JOIN CANN_API a ON a.connectionId = c.connectionId
  UNION ALL
  SELECT t.startNs, t.endNs, t.startNs, 4 FROM TASK t
    WHERE t.taskType = (SELECT id FROM STRING_IDS WHERE value = 'MEMCPY_ASYNC'))
SELECT d.startNs, d.endNs, d.kind, s.id FROM dev d
LEFT JOIN STEP_TIME s ON d.apiNs BETWEEN s.startNs AND s.endNs
WHERE d.apiNs BETWEEN ? AND ? ORDER BY d.startNs, d.endNs"""

SPAN = (0, 2 ** 62)


def rank_db(src, name):
    """The DB of one rank alone, as msprof-analyze reads one DB per rank."""
    db = os.path.join(OUT, name + ".db")
    if os.path.exists(db):
        os.remove(db)
    run("export", "db", "-q", "-dir", src, "-o", db)
    return sqlite3.connect(db)


def public_hccl_sum():
    """The public ranks (CSV): every communication op has its group, from the rank's communication.json."""
    for r in (0, 1):
        src = os.path.join(SHARED, "ascend", "torch_npu_rank%d" % r)
        if not os.path.isdir(src):
            raise tbtest.Skip("%s absent" % src)
        con = rank_db(src, "public%d" % r)
        rows = con.execute(HCCL_SUM, SPAN).fetchall()
        assert rows, "hccl_sum: no op"
        assert all(n and t and d > 0 and g for n, t, d, g in rows), rows
        # the group of each op as the rank's own communication.json names it
        comm = json.load(open(os.path.join(src, "ASCEND_PROFILER_OUTPUT", "communication.json")))
        named = {k.split("@")[0]: k.split("@")[1] for step in comm.values() for kind in step.values()
                 for k in kind if "@" in k}
        assert all(named[n] == g for n, t, d, g in rows), (rows, named)
        assert con.execute("SELECT rankId, deviceId FROM RANK_DEVICE_MAP").fetchall() == [(r, 0)]


def generated_ranks(root):
    """Two generated ranks, each given a communication.json naming the group of each op of its kernel_details."""
    res = tbtest.run([GEN, "--kind", "torch_npu_dir", "--events", "3000", "--ranks", "2", "-o", root])
    assert res.rc == 0, res.err
    groups = {}
    for r in (0, 1):
        out = os.path.join(root, "rank%d_ascend_pt" % r, "ASCEND_PROFILER_OUTPUT")
        with open(os.path.join(out, "kernel_details.csv"), newline="") as f:
            ops = [x["Name"] for x in csv.DictReader(f) if x["Accelerator Core"] in ("HCCL", "COMMUNICATION")]
        assert ops, "the generated rank has no communication op"
        info = {"Start Timestamp(us)": 0, "Elapse Time(ms)": 0, "Transit Time(ms)": 0, "Wait Time(ms)": 0,
                "Synchronization Time(ms)": 0, "Idle Time(ms)": 0, "Wait Time Ratio": 0,
                "Synchronization Time Ratio": 0}
        coll = {}
        for op in ops:
            nnn = op.split("__")[1].split("_")[0]
            groups[op] = "7000000000000000" + nnn
            coll["%s@%s" % (op, groups[op])] = {"Communication Time Info": info,
                                                "Communication Bandwidth Info": {}}
        with open(os.path.join(out, "communication.json"), "w") as f:
            json.dump({"step1": {"collective": coll}}, f)
    return groups


def generated_recipes():
    root = os.path.join(OUT, "gen")
    if os.path.exists(root):
        shutil.rmtree(root)
    groups = generated_ranks(root)
    for r in (0, 1):
        con = rank_db(os.path.join(root, "rank%d_ascend_pt" % r), "gen%d" % r)
        n_ops = con.execute("SELECT count(*) FROM COMMUNICATION_OP").fetchone()[0]
        hs = con.execute(HCCL_SUM, SPAN).fetchall()
        assert len(hs) == n_ops > 0 and all(g == groups[n] for n, t, d, g in hs), hs
        assert con.execute("SELECT rankId FROM RANK_DEVICE_MAP").fetchall() == [(r,)]
        sr = con.execute(SLOW_RANK, SPAN).fetchall()
        assert len(sr) == n_ops and all(x[0] == r and x[4] > 0 for x in sr), (len(sr), n_ops)
        cs = con.execute(COMM_WITH_STEP, SPAN).fetchall()
        assert len(cs) == n_ops and any(x[4] is not None for x in cs), cs
        dt = con.execute(DEVICE_TIME, SPAN).fetchall()
        kinds = {x[2] for x in dt}
        assert {0, 1} <= kinds and any(x[3] is not None for x in dt), kinds


def no_group_known():
    """A rank whose load names no group: its ops keep groupName NULL (nothing made up)."""
    root = os.path.join(OUT, "gen_nogroup")
    if os.path.exists(root):
        shutil.rmtree(root)
    res = tbtest.run([GEN, "--kind", "torch_npu_dir", "--events", "2000", "--ranks", "2", "-o", root])
    assert res.rc == 0, res.err
    con = rank_db(os.path.join(root, "rank0_ascend_pt"), "nogroup")
    n, named = con.execute("SELECT count(*), count(groupName) FROM COMMUNICATION_OP").fetchone()
    assert n > 0 and named == 0, (n, named)


def group_from_name_digits():
    """Public rank 0 without its communication files, loaded with rank 1 (which has them): its ops
    (hcom_<kind>__483_<i>) take the one group name the load knows that ends in 483; alone, none."""
    base = os.path.join(SHARED, "ascend")
    if not os.path.isdir(os.path.join(base, "torch_npu_rank0")):
        raise tbtest.Skip("%s absent" % base)
    root = os.path.join(OUT, "digits")
    if os.path.exists(root):
        shutil.rmtree(root)
    shutil.copytree(os.path.join(base, "torch_npu_rank0"), os.path.join(root, "r0"))
    for n in ("communication.json", "communication_matrix.json"):
        os.remove(os.path.join(root, "r0", "ASCEND_PROFILER_OUTPUT", n))
    db = os.path.join(OUT, "digits.db")
    if os.path.exists(db):
        os.remove(db)
    run("export", "db", "-q", "-dir", os.path.join(root, "r0"), "-dir", os.path.join(base, "torch_npu_rank1"),
        "-o", db)
    rows = sqlite3.connect(db).execute(
        "SELECT n.value, g.value FROM COMMUNICATION_OP c JOIN STRING_IDS n ON n.id = c.opName"
        " LEFT JOIN STRING_IDS g ON g.id = c.groupName WHERE c.rankId = 0").fetchall()
    assert len(rows) == 4 and all("__483_" in n and g == "9350434047717501483" for n, g in rows), rows
    con = rank_db(os.path.join(root, "r0"), "digits_alone")
    assert con.execute("SELECT count(*), count(groupName) FROM COMMUNICATION_OP").fetchone() == (4, 0)


suite = tbtest.Suite(work=OUT)
for fn in (public_hccl_sum, generated_recipes, no_group_known, group_from_name_digits):
    suite.add(fn.__name__, fn)
suite.main()
