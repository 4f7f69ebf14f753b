#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# fidelity_test.py - numbers a review can trust: nothing of an input is
# dropped without a word, and a degraded run says so.
#
#   - an msprof DB written here with Python's sqlite3 (msprof's sample tables
#     DDR, HBM, LLC, PCIE, OSRT_API with string-id columns, an ENUM table with
#     an id of its own, a COMPUTE_TASK_INFO with the older blockDim /
#     mixBlockDim names whose taskType differs from TASK's, a viewer's table
#     with rows and an empty one): every row of msprof's tables arrives, the
#     columns tracebook has no place for are named in TB_SOURCE.note, the
#     string ids resolve to the same text, ENUM rows land in TB_SOURCE_ENUM,
#     the table with rows that tracebook does not know is named in exactly
#     one warning, op_statistic's Core Type is COMPUTE_TASK_INFO's task type,
#     and SQL written for msprof DBs (older column names included) runs;
#   - the same statement on the DB of the Ascend timeline sample;
#   - tracebook_run.json lists the load's warnings with their files and the
#     run's (a spec's), counted per kind and file; --fail-on-warning turns
#     them into exit 7 for report and export db, the outputs still written;
#   - info flags a rank whose time span exceeds 30 days, and not one of 10.
#
# Expected values come from the inputs written here, never from tracebook.
# Every run writes with -o under a temporary directory (its own TMPDIR and
# XDG_CACHE_HOME), removed when all cases pass.
#
# usage: fidelity_test.py TRACEBOOK SAMPLES_DIR
# Prints one ok/FAIL line per case and a final `N passed, N failed` line.
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB = None
SAMPLES = None
SUITE = tbtest.Suite(name="fidelity_test")
case = SUITE.case


def rows(db, query):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return [tuple(r) for r in con.execute(query).fetchall()]
    finally:
        con.close()


# A statement in the style msprof-analyze runs on msprof DBs: COMPUTE_TASK_INFO
# as t with its older block column names, joined to TASK; then the
# COMMUNICATION_OP columns it reads.
MSPROF_STYLE = ("SELECT (SELECT value FROM STRING_IDS WHERE id = t.name) AS op_name, t.globalTaskId,"
                " t.blockDim AS block_dim, t.mixBlockDim AS mix_block_dim, t.blockNum, t.mixBlockNum, t.opState,"
                " (SELECT value FROM STRING_IDS WHERE id = t.taskType) AS task_type, k.startNs, k.endNs"
                " FROM COMPUTE_TASK_INFO t JOIN TASK k ON k.globalTaskId = t.globalTaskId ORDER BY k.startNs")
COMM_STYLE = "SELECT o.opName, o.count, o.dataType, o.algType, o.relay, o.retry, o.rankSize FROM COMMUNICATION_OP o"

STRINGS = ["aclnnAdd_AddAiCore_Add", "AI_VECTOR_CORE", "Add", "aclnnAdd", "read", "write", "pthread_mutex_lock",
           "hcom_allReduce__1_0_1", "group0"]


def sid(s):
    return STRINGS.index(s) + 10  # ids that are not tracebook's own


def make_msprof_db(path):
    """An msprof DB in the older layout, with sample tables and a viewer's leftovers."""
    con = sqlite3.connect(path)
    c = con.cursor()
    c.execute("CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT)")
    c.executemany("INSERT INTO STRING_IDS VALUES (?, ?)", [(sid(s), s) for s in STRINGS])
    c.execute("CREATE TABLE SESSION_TIME_INFO (startTimeNs INTEGER, endTimeNs INTEGER)")
    c.execute("INSERT INTO SESSION_TIME_INFO VALUES (1700000000000000000, 1700000001000000000)")
    c.execute("CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,"
              " globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, taskId INTEGER,"
              " modelId INTEGER, globalTaskId INTEGER PRIMARY KEY, depth INTEGER)")
    tasks = [(1700000000000000000 + 1000 * i, 1700000000000000000 + 1000 * i + 500 + i, 2, i, 0, sid("aclnnAdd"),
              4294967295, 3, 100 + i, 4294967295, i, 0) for i in range(3)]
    c.executemany("INSERT INTO TASK VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", tasks)
    c.execute("CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY, blockDim INTEGER,"
              " mixBlockDim INTEGER, taskType INTEGER, opType INTEGER, inputFormats INTEGER,"
              " inputDataTypes INTEGER, inputShapes INTEGER, outputFormats INTEGER, outputDataTypes INTEGER,"
              " outputShapes INTEGER, waitNs INTEGER)")
    c.executemany("INSERT INTO COMPUTE_TASK_INFO VALUES (?,?,?,?,?,?,NULL,NULL,NULL,NULL,NULL,NULL,0)",
                  [(sid("aclnnAdd_AddAiCore_Add"), i, 48 - i, i, sid("AI_VECTOR_CORE"), sid("Add")) for i in range(3)])
    c.execute("CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER, connectionId INTEGER,"
              " groupName INTEGER, opId INTEGER PRIMARY KEY)")
    c.execute("INSERT INTO COMMUNICATION_OP VALUES (?, 1700000000000100000, 1700000000000200000, 9, ?, 1)",
              (sid("hcom_allReduce__1_0_1"), sid("group0")))
    c.execute("CREATE TABLE HBM (deviceId INTEGER, timestampNs INTEGER, bandwidth NUMERIC, hbmId INTEGER,"
              " type INTEGER)")
    c.executemany("INSERT INTO HBM VALUES (2, ?, ?, ?, ?)",
                  [(1700000000000000000 + i, 100 * i, i % 2, sid("read" if i % 3 else "write")) for i in range(7)])
    c.execute("CREATE TABLE DDR (deviceId INTEGER, timestampNs INTEGER, read NUMERIC, write NUMERIC)")
    c.executemany("INSERT INTO DDR VALUES (2, ?, ?, ?)", [(1700000000000000000 + i, i, 2 * i) for i in range(5)])
    c.execute("CREATE TABLE LLC (deviceId INTEGER, llcId INTEGER, timestampNs INTEGER, hitRate REAL,"
              " throughput INTEGER, mode INTEGER)")
    c.executemany("INSERT INTO LLC VALUES (2, 0, ?, ?, ?, ?)",
                  [(1700000000000000000 + i, 50.5 + i, 1000 * i, sid("write")) for i in range(4)])
    c.execute("CREATE TABLE PCIE (deviceId INTEGER, timestampNs INTEGER, txPostMin NUMERIC, rxCplAvg NUMERIC)")
    c.executemany("INSERT INTO PCIE VALUES (2, ?, ?, ?)", [(1700000000000000000 + i, i, 3 * i) for i in range(2)])
    c.execute("CREATE TABLE OSRT_API (name INTEGER, globalTid INTEGER, startNs INTEGER, endNs INTEGER)")
    c.execute("INSERT INTO OSRT_API VALUES (?, 4294967297, 1700000000000000000, 1700000000000000900)",
              (sid("pthread_mutex_lock"),))
    c.execute("CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY, name TEXT)")
    c.executemany("INSERT INTO ENUM_API_TYPE VALUES (?, ?)", [(5500, "hccl"), (25000, "pta")])
    c.execute("CREATE TABLE _COMPUTE_TASK_INFO_backup (name INTEGER, globalTaskId INTEGER)")
    c.executemany("INSERT INTO _COMPUTE_TASK_INFO_backup VALUES (?, ?)", [(1, 0), (2, 1)])
    c.execute("CREATE TABLE viewer_empty (x)")
    con.commit()
    con.close()


@case("msprof DB: every msprof table kept, unknown tables named, Core Type, msprof SQL")
def _(t):
    src = t.path("msprof_20240101000000.db")
    make_msprof_db(src)
    out = t.path("out", "m.db")
    warning = "%s: a table not loaded (not in msprof's DB schema): _COMPUTE_TASK_INFO_backup (2 rows)" % src
    p = t.run(["export", "db", "-dir", src, "-o", out])
    t.eq((p.returncode, p.stdout, p.stderr), (0, out + "\n", "tracebook: warning: %s\n" % warning), "export db")
    if p.returncode != 0:
        return
    t.eq(rows(out, "SELECT sourceId, message FROM TB_WARNING"), [(1, warning)], "TB_WARNING")
    t.eq(rows(out, "SELECT note FROM TB_SOURCE"), [("columns not copied: TASK.depth, COMPUTE_TASK_INFO.waitNs",)],
         "TB_SOURCE.note: the columns not copied")
    for table, n in (("HBM", 7), ("DDR", 5), ("LLC", 4), ("PCIE", 2), ("OSRT_API", 1), ("COMMUNICATION_OP", 1)):
        t.eq(rows(out, "SELECT count(*) FROM %s" % table), [(n,)], table + " rows")
    t.eq(rows(out, "SELECT s.value, count(*) FROM HBM h JOIN STRING_IDS s ON s.id = h.type GROUP BY 1 ORDER BY 1"),
         [("read", 4), ("write", 3)], "HBM.type re-interned")
    t.eq(rows(out, "SELECT DISTINCT s.value FROM LLC l JOIN STRING_IDS s ON s.id = l.mode"), [("write",)],
         "LLC.mode re-interned")
    t.eq(rows(out, "SELECT s.value, o.startNs, o.endNs FROM OSRT_API o JOIN STRING_IDS s ON s.id = o.name"),
         [("pthread_mutex_lock", 1700000000000000000, 1700000000000000900)], "OSRT_API")
    t.eq(rows(out, "SELECT sum(read), sum(write) FROM DDR"), [(10, 20)], "DDR values")
    t.eq(rows(out, "SELECT txPostMin, rxCplAvg, txPostMax FROM PCIE ORDER BY timestampNs"),
         [(0, 0, None), (1, 3, None)], "PCIE: the columns it has, NULL for the others")
    t.eq(rows(out, "SELECT rankId, tableName, id, name FROM TB_SOURCE_ENUM ORDER BY id"),
         [(0, "ENUM_API_TYPE", 5500, "hccl"), (0, "ENUM_API_TYPE", 25000, "pta")], "TB_SOURCE_ENUM")
    t.eq(rows(out, "SELECT DISTINCT taskType FROM kernel"), [("AI_VECTOR_CORE",)],
         "kernel.taskType: the compute task's accelerator core, not TASK's")
    t.eq(rows(out, "SELECT DISTINCT taskType, class FROM device_task"), [("AI_VECTOR_CORE", "compute")],
         "device_task.taskType")
    got = rows(out, MSPROF_STYLE)
    t.eq([(r[0], r[2], r[3], r[4], r[5], r[7]) for r in got],
         [("aclnnAdd_AddAiCore_Add", 48 - i, i, 48 - i, i, "AI_VECTOR_CORE") for i in range(3)],
         "msprof-style statement on COMPUTE_TASK_INFO t")
    t.eq(rows(out, COMM_STYLE)[0][1:], (None, None, None, None, None, None), "COMMUNICATION_OP columns")
    rep = t.path("rep")
    p = t.run(["report", "-dir", out, "--spec", "builtin:op_statistic", "-o", rep, "--format", "csv", "-q"])
    t.eq(p.returncode, 0, "op_statistic exit")
    if p.returncode == 0:
        with open(os.path.join(rep, "op_statistic.csv")) as f:
            lines = f.read().splitlines()
        t.eq(lines[0].split(",")[:4], ["Device_id", "OP Type", "Core Type", "Count"], "op_statistic header")
        t.eq([line.split(",")[:4] for line in lines[1:]], [["2", "Add", "AI_VECTOR_CORE", "3"]], "op_statistic rows")
    # the timeline's Task Type of a compute task is its accelerator core too
    tl = t.path("tl")
    p = t.run(["export", "timeline", "-dir", out, "-o", tl, "-q"])
    t.eq(p.returncode, 0, "export timeline")
    if p.returncode == 0:
        with open(p.stdout.splitlines()[0]) as f:
            events = json.load(f)
        t.eq(sorted(e["args"]["Task Type"] for e in events if e.get("ph") == "X" and "Task Type" in e.get("args", {})),
             ["AI_VECTOR_CORE"] * 3, "timeline Task Type")
    # --fail-on-warning: exit 7, the DB is still written
    out2 = t.path("out", "strict.db")
    p = t.run(["export", "db", "-dir", src, "-o", out2, "--fail-on-warning", "-q"])
    t.eq((p.returncode, p.stdout, p.stderr),
         (7, out2 + "\n", "tracebook: error: the load gave 1 warning (--fail-on-warning): the outputs are written"
                          " but degraded\n"), "export db --fail-on-warning")
    t.eq(os.path.exists(out2) and rows(out2, "SELECT count(*) FROM HBM"), [(7,)], "the DB written with exit 7")


@case("msprof DB: NPU_MODULE_MEM written as npu_module_mem, ids named by the DB's own ENUM_MODULE")
def _(t):
    import csv as _csv
    import glob as _glob
    for own_enum in (True, False):
        src = t.path("own" if own_enum else "plain", "msprof_20240101000000.db")
        os.makedirs(os.path.dirname(src))
        make_msprof_db(src)
        con = sqlite3.connect(src)
        con.execute("CREATE TABLE NPU_MODULE_MEM (moduleId INTEGER, timestampNs INTEGER, totalReserved INTEGER,"
                    " deviceId INTEGER)")
        samples = [(7, 1700000000000001000, 2048, 2), (2, 1700000000000002000, 5120, 2),
                   (99, 1700000000000003000, 1536, 2)]
        con.executemany("INSERT INTO NPU_MODULE_MEM VALUES (?, ?, ?, ?)", samples)
        if own_enum:
            # a DB's own list: its names win over this tool's (the lists differ between versions)
            con.execute("CREATE TABLE ENUM_MODULE (id INTEGER PRIMARY KEY, name TEXT)")
            con.executemany("INSERT INTO ENUM_MODULE VALUES (?, ?)", [(2, "IDEDH"), (7, "RUNTIME")])
        con.commit()
        con.close()
        out = t.path("sum_%d" % own_enum)
        p = t.run(["export", "summary", "-q", "-dir", src, "-o", out])
        t.eq(p.returncode, 0, "export summary (%s): %s" % (own_enum, p.stderr))
        found = _glob.glob(os.path.join(out, "*", "npu_module_mem_*.csv")) + \
            _glob.glob(os.path.join(out, "npu_module_mem_*.csv"))
        t.eq(len(found), 1, "one npu_module_mem file (%s): %r" % (own_enum, found))
        if len(found) != 1:
            continue
        with open(found[0], newline="") as f:
            lines = f.read().splitlines()
        t.eq(lines[0], "Device_id,Component,Timestamp(us),Total Reserved(KB),Device", "npu_module_mem header")
        got = list(_csv.reader(lines[1:]))
        names = {7: "RUNTIME", 2: "IDEDH" if own_enum else "SCC", 99: "N/A"}
        us = lambda ns: ("%d.%03d" % divmod(ns, 1000)).rstrip("0").rstrip(".")
        want = [["2", names[m], us(ts), ("%g" % (b / 1024)), "NPU:2"]
                for m, ts, b, _ in samples]
        t.eq(got, want, "npu_module_mem rows (own ENUM_MODULE: %s)" % own_enum)


@case("Ascend timeline: SQL written for msprof DBs runs on its DB")
def _(t):
    out = t.path("a.db")
    p = t.run(["export", "db", "-dir", os.path.join(SAMPLES, "ascend_small"), "-o", out, "-q"])
    t.eq(p.returncode, 0, "export db")
    if p.returncode != 0:
        return
    try:
        got = rows(out, MSPROF_STYLE)
        comm = rows(out, COMM_STYLE)
    except sqlite3.Error as e:
        t.fail("msprof-style statement: %s" % e)
        return
    t.eq(len(got), rows(out, "SELECT count(*) FROM COMPUTE_TASK_INFO")[0][0], "one row per compute task")
    t.eq(len(got) > 0 and all(r[3] == r[5] for r in got), True, "mixBlockDim is mixBlockNum")
    t.eq(len(comm), rows(out, "SELECT count(*) FROM COMMUNICATION_OP")[0][0], "COMMUNICATION_OP rows")
    t.eq(sorted(set(r[0] for r in rows(out, "SELECT taskType FROM kernel"))),
         sorted(set(r[7] for r in got)), "kernel.taskType is COMPUTE_TASK_INFO's")


def cut_kineto(path):
    """A Kineto trace cut inside its third event; returns the two complete events' count."""
    evs = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100 + 10 * i, "dur": 5}
           for i in range(3)]
    text = json.dumps({"traceEvents": evs})
    cut = text.index('"aten::mm"', text.index('"aten::mm"', text.index('"aten::mm"') + 1) + 1)
    with open(path, "w") as f:
        f.write(text[:cut])
    return cut


@case("tracebook_run.json lists the load's and the run's warnings; --fail-on-warning exits 7")
def _(t):
    trace = t.path("in", "trace.json")
    os.makedirs(os.path.dirname(trace))
    cut_kineto(trace)
    spec = t.path("reports_sample_config.json")
    with open(spec, "w") as f:
        json.dump({"json_process": {"ascend": True, "no_such_layer": True}}, f)
    rep = t.path("rep")
    p = t.run(["report", "-dir", trace, "--spec", spec, "--spec", "builtin:top_kernels", "-o", rep,
               "--format", "csv", "-q", "--fail-on-warning"])
    t.eq(p.returncode, 7, "exit code (%s)" % p.stderr)
    t.eq(p.stderr.splitlines()[-1:], ["tracebook: error: the load and the run gave 2 warnings (--fail-on-warning):"
                                      " the outputs are written but degraded"], "the last stderr line")
    t.eq(os.path.exists(os.path.join(rep, "tracebook_run.json")), True, "the outputs are written")
    try:
        with open(os.path.join(rep, "tracebook_run.json")) as f:
            w = json.load(f)["warnings"]
    except (OSError, KeyError, ValueError) as e:
        t.fail("tracebook_run.json warnings: %s" % e)
        return
    t.eq(w["count"], 2, "count")
    t.eq(w["kinds"], {"cut short": 1, "spec": 1}, "kinds")
    t.eq(w["files"], {trace: 1}, "files")
    t.eq([(x["file"], x["kind"], x["message"].split(": ")[0]) for x in w["load"]], [(trace, "cut short", trace)],
         "load warnings")
    t.eq([x["kind"] for x in w["run"]], ["spec"], "run warnings")
    t.eq("no_such_layer" in w["run"][0]["message"] if w["run"] else None, True, "the spec's warning names the key")
    t.eq([(x["file"], x["note"].startswith("cut short at byte")) for x in w["sources"]], [(trace, True)], "sources")
    # without the option: exit 0, the same file
    rep2 = t.path("rep2")
    p = t.run(["report", "-dir", trace, "--spec", "builtin:top_kernels", "-o", rep2, "--format", "csv", "-q"])
    t.eq(p.returncode, 0, "without --fail-on-warning")
    with open(os.path.join(rep2, "tracebook_run.json")) as f:
        t.eq(json.load(f)["warnings"]["count"], 1, "the cached load's warning is still listed")
    # a clean input: no warning, exit 0 with the option
    p = t.run(["report", "-dir", os.path.join(SAMPLES, "ascend_small"), "--spec", "builtin:top_kernels",
               "-o", t.path("rep3"), "--format", "csv", "-q", "--fail-on-warning"])
    t.eq((p.returncode, p.stderr), (0, ""), "a clean run with --fail-on-warning")


def span_trace(path, days):
    evs = [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1000.0, "dur": 5},
           {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1000.0 + days * 86400e6, "dur": 5}]
    with open(path, "w") as f:
        json.dump({"traceEvents": evs}, f)


@case("info flags a time span of more than 30 days")
def _(t):
    long_, short = t.path("long.json"), t.path("short.json")
    span_trace(long_, 342)
    span_trace(short, 10)
    p = t.run(["info", "-dir", long_])
    warn = p.stdout.split("\nWarnings:\n", 1)[-1].splitlines()
    end = 1000000 + 342 * 86400 * 10 ** 9 + 5000
    t.eq(warn, ["  rank 0: time span of 342.0 days (1000000 to %d ns), more than 30: do its inputs mix clocks"
                " (Unix time and time since boot, or two machines)?" % end], "342 days")
    p = t.run(["info", "-dir", short])
    t.eq(p.stdout.split("\nWarnings:\n", 1)[-1].splitlines(), ["  none"], "10 days")


def main():
    global TB, SAMPLES
    TB, SAMPLES = (os.path.abspath(a) for a in tbtest.args("TRACEBOOK SAMPLES_DIR", 2, 2))
    SUITE.program = tbtest.Program(TB, timeout=120)
    return SUITE.run()


if __name__ == "__main__":
    sys.exit(main())
