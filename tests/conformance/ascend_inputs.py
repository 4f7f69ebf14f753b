#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# ascend_inputs.py - conformance of the Ascend text, DB and topsprof inputs.
#
# On the shared public data this test checks, counting every expectation
# independently of tracebook (Python's csv, json and sqlite3 modules):
#   - every directory under ascend/ loads (exit 0);
#   - kernel_details.csv: TASK and COMMUNICATION_OP rows equal the CSV's rows
#     (HCCL rows are communication ops), minus rows of the wrong width, which
#     are skipped and counted in TB_SOURCE.rowsSkipped;
#   - misc/op_summary_1.csv alone: the same counts, the FILE:LINE warning of
#     each row of the wrong width (its line found with Python's csv), and
#     with --strict exit 3 and the error at the first such row;
#   - memory_record / operator_memory / step_trace_time rows;
#   - the two torch_npu ranks load as one DB with ranks 0 and 1 (from
#     profiler_info_N.json) and each rank's rows equal its own load;
#   - the msprof DB: rows per table equal the source's, and text attributes
#     resolve to the same strings after re-interning;
#   - the torch_npu timeline exported with --pytorch-links: the links of
#     its PyTorch calls to their tasks (worked out here from its async_npu
#     flows) in CONNECTION_IDS and PYTORCH_API.connectionId, and the same
#     free_analysis and module_statistic over that DB as over the timeline;
#   - precedence: a rank directory with both trace_view.json and
#     kernel_details.csv gives exactly the TASK rows of the JSON alone;
#   - topsprof listings: rows per class and the footers;
#   - no input file is modified or created beside the inputs.
# usage: ascend_inputs.py TRACEBOOK SHARED_DATA_DIR OUT_DIR   (exit 77 when the data is absent)
import csv
import decimal
import hashlib
import json
import os
import re
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

T = tbtest.Checks()


def q(db, sql):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def q1(db, sql):
    return q(db, sql)[0][0]


def csv_rows(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = [r for r in csv.reader(f) if r]
    return rows[0], rows[1:]


def snapshot(root):
    state = {}
    for d, _, files in os.walk(root):
        for name in files:
            p = os.path.join(d, name)
            with open(p, "rb") as f:
                state[p] = hashlib.sha256(f.read()).hexdigest()
    return state


# msprof's own tables (its DB reference): each one the input has is loaded
# with every row; MSPROF_STRING_COLS are the columns msprof marks as string ids
MSPROF_TABLES = ("TASK", "COMPUTE_TASK_INFO", "COMMUNICATION_TASK_INFO", "COMMUNICATION_OP", "CANN_API",
                 "OVERLAP_ANALYSIS", "MSTX_EVENTS", "NPU_OP_MEM", "NPU_INFO", "NPU_MEM", "NPU_MODULE_MEM",
                 "MEMCPY_INFO", "TASK_PMU_INFO", "QOS", "AICORE_FREQ", "ACC_PMU", "SOC_BANDWIDTH_LEVEL", "NIC",
                 "ROCE", "LLC", "SAMPLE_PMU_TIMELINE", "SAMPLE_PMU_SUMMARY", "HBM", "DDR", "HCCS", "UB", "SIO",
                 "CCU", "DPU_TASK", "PCIE", "CPU_USAGE", "HOST_MEM_USAGE", "HOST_DISK_USAGE",
                 "HOST_NETWORK_USAGE", "OSRT_API", "NETDEV_STATS")
MSPROF_STRING_COLS = {"HBM": ["type"], "LLC": ["mode"], "QOS": ["eventName"], "SIO": ["name"]}
KNOWN = set(MSPROF_TABLES) | {"STRING_IDS", "SESSION_TIME_INFO", "META_DATA", "RANK_DEVICE_MAP", "HOST_INFO",
                              "STEP_TIME", "PYTORCH_API", "GC_RECORD", "CONNECTION_IDS", "PYTORCH_CALLCHAINS",
                              "MEMORY_RECORD", "OP_MEMORY", "COMMUNICATION_SCHEDULE_TASK_INFO"}


def msprof_db_fidelity(tb, out, src, db):
    """Every msprof table of the shared DB arrives whole, its string ids resolve to the
    same text, the tables it does not know are named in one warning, op_statistic's Core
    Type is the compute task's accelerator core, and SQL written for msprof DBs (the
    older column names included) runs."""
    con = sqlite3.connect("file:%s?immutable=1" % src, uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        counts = {t: con.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0] for t in tables}
        strings = {}
        for t, cols in MSPROF_STRING_COLS.items():
            if t in tables:
                for c in cols:
                    strings[(t, c)] = con.execute('SELECT s.value, count(*) FROM "%s" x JOIN STRING_IDS s ON s.id ='
                                                  ' x."%s" GROUP BY 1 ORDER BY 1' % (t, c)).fetchall()
        cores = sorted(r[0] for r in con.execute("SELECT DISTINCT s.value FROM COMPUTE_TASK_INFO c"
                                                 " JOIN STRING_IDS s ON s.id = c.taskType"))
        dropped = set()
        for t in MSPROF_TABLES:
            if t in tables:
                ours = {r[0] for r in q(db, "SELECT name FROM pragma_table_xinfo('%s')" % t)}
                dropped |= {"%s.%s" % (t, r[1]) for r in con.execute("PRAGMA table_info('%s')" % t)
                            if r[1] not in ours}
        enums = con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name GLOB 'ENUM_*'").fetchone()[0]
        enum_rows = sum(counts[t] for t in tables if t.startswith("ENUM_"))
    finally:
        con.close()
    T.eq(all(counts.get(t, 0) > 0 for t in ("DDR", "HBM", "LLC")), True,
         "test self-check: the shared DB has DDR, HBM and LLC rows")
    for t in MSPROF_TABLES:
        if t in tables:
            T.eq(q1(db, 'SELECT count(*) FROM "%s"' % t), counts[t], "msprof db %s rows" % t)
    for (t, c), want in strings.items():
        T.eq([tuple(r) for r in q(db, 'SELECT s.value, count(*) FROM "%s" x'
                                                                          ' JOIN STRING_IDS s ON s.id = x."%s"'
                                                                          ' GROUP BY 1 ORDER BY 1' % (t, c))], want,
             "msprof db %s.%s strings" % (t, c))
    note = q1(db, "SELECT note FROM TB_SOURCE") or ""
    prefix = "columns not copied: "
    T.eq(set(note[len(prefix):].split(", ")) if note.startswith(prefix) else set(), dropped,
         "msprof db: the columns not copied, in TB_SOURCE.note")
    T.eq(bool(dropped), True, "test self-check: the shared DB has columns tracebook does not keep")
    T.eq(q1(db, "SELECT count(*) FROM TB_SOURCE_ENUM"), enum_rows if enums else 0,
         "msprof db: every ENUM row kept in TB_SOURCE_ENUM")
    unknown = sorted(t for t in tables if t not in KNOWN and not t.startswith(("ENUM_", "sqlite_")) and counts[t])
    want_msg = "%s: %s not loaded (not in msprof's DB schema): %s" % (
        src, "a table" if len(unknown) == 1 else "tables",
        ", ".join("%s (%d row%s)" % (t, counts[t], "" if counts[t] == 1 else "s") for t in unknown))
    T.eq([r[0] for r in q(db, "SELECT message FROM TB_WARNING")], [want_msg] if unknown else [],
         "msprof db: the tables it does not know, in one warning")
    # op_statistic: Core Type is COMPUTE_TASK_INFO's task type (AI_VECTOR_CORE), not TASK's
    rep = os.path.join(out, "msprof_op_statistic")
    shutil.rmtree(rep, ignore_errors=True)
    r = tbtest.run([tb, "report", "-dir", db, "--spec", "builtin:op_statistic", "-o", rep, "--format", "csv",
                    "--quiet"])
    T.eq(r.returncode, 0, "msprof db op_statistic exit")
    if r.returncode == 0:
        header, rows = csv_rows(os.path.join(rep, "op_statistic.csv"))
        T.eq(sorted({row[header.index("Core Type")] for row in rows}), cores, "msprof db op_statistic Core Type")
    # SQL written for msprof DBs, with the older COMPUTE_TASK_INFO names
    try:
        got = q(db, "SELECT t.globalTaskId, t.blockDim, t.mixBlockDim, t.blockNum, t.mixBlockNum, t.opState,"
                    " (SELECT value FROM STRING_IDS WHERE id = t.taskType) AS task_type, k.startNs, k.endNs"
                    " FROM COMPUTE_TASK_INFO t JOIN TASK k ON k.globalTaskId = t.globalTaskId ORDER BY k.startNs")
        T.eq(len(got), counts["COMPUTE_TASK_INFO"], "msprof-style statement: rows")
        T.eq(all(r[2] == r[4] for r in got), True, "msprof-style statement: mixBlockDim is mixBlockNum")
        q(db, "SELECT o.opName, o.count, o.dataType, o.algType, o.relay, o.retry, o.rankSize FROM COMMUNICATION_OP o")
    except sqlite3.Error as e:
        T.fail("msprof-style statement on the DB from msprof_0.db: %s" % e)


def load(tb, out, name, dirs):
    db = os.path.join(out, name)
    if os.path.exists(db):
        os.unlink(db)
    args = ["export", "db", "-o", db, "--quiet"]
    for d in dirs:
        args += ["-dir", d]
    r = tbtest.run([tb] + args)
    if r.returncode != 0:
        T.fail("%s: exit %d: %s" % (name, r.returncode, r.stderr.strip()))
        return None
    return db


def expected_links(trace, db):
    """The links docs/schema.md's rules give ("PyTorch calls and their tasks"), worked out here
    from the timeline's own async_npu flows over the DB's PYTORCH_API and TASK rows: {call rowid:
    (id, {task connection ids})}, ids by the calls' (start, rowid)."""
    with open(trace, encoding="utf-8") as f:
        ev = json.load(f)
    ends = {"s": {}, "f": {}}
    for e in ev:
        if isinstance(e, dict) and e.get("cat") == "async_npu" and e.get("ph") in ends:
            ends[e["ph"]][e["id"]] = e

    def ns(ts):
        return int(decimal.Decimal(str(ts)) * 1000)
    calls = q(db, "SELECT rowid, globalTid, startNs, endNs FROM PYTORCH_API")
    tasks = q(db, "SELECT rowid, globalPid, startNs, endNs, connectionId FROM TASK")
    links = {}
    for fid, s in ends["s"].items():
        f = ends["f"].get(fid)
        if f is None:
            continue
        ts, tf, gtid = ns(s["ts"]), ns(f["ts"]), int(s["pid"]) << 32 | int(s["tid"])
        c = [r for r in calls if r[1] == gtid and r[2] <= ts <= r[3]]
        k = [r for r in tasks if r[1] == int(f["pid"]) and r[2] <= tf <= r[3]]
        if not c or not k:
            continue
        call = min(c, key=lambda r: (r[3] - r[2], r[0]))
        task = min(k, key=lambda r: (-r[2], r[0]))
        if task[4] is not None:
            links.setdefault((call[2], call[0]), set()).add(task[4])
    return {key[1]: (i, conns) for i, (key, conns) in enumerate(sorted(links.items()))}


def check_timeline_links(tb, out, trace):
    """export db --pytorch-links of the public torch_npu timeline stores the links the rules give
    (expected_links), as CONNECTION_IDS rows and PYTORCH_API.connectionId; a report over the
    timeline (links made in the run) and over that DB (read as stored) give the same
    free_analysis and module_statistic; without the option nothing is stored."""
    db = os.path.join(out, "timeline_links.db")
    if os.path.exists(db):
        os.unlink(db)
    r = tbtest.run([tb, "export", "db", "-q", "--pytorch-links", "-dir", trace, "-o", db])
    if r.returncode != 0:
        T.fail("export db --pytorch-links: exit %d: %s" % (r.returncode, r.stderr.strip()))
        return
    want = expected_links(trace, db)
    T.eq(len(want) > 100, True, "test self-check: the timeline links over 100 calls (%d)" % len(want))
    T.eq(dict(q(db, "SELECT rowid, connectionId FROM PYTORCH_API WHERE connectionId IS NOT NULL")),
         {row: i for row, (i, _) in want.items()}, "timeline links: each linked call's id in PYTORCH_API")
    T.eq(sorted(q(db, "SELECT id, connectionId, rankId FROM CONNECTION_IDS")),
         sorted((i, c, 0) for i, conns in want.values() for c in conns), "timeline links: CONNECTION_IDS rows")
    plain = load(tb, out, "timeline_plain.db", [trace])
    if plain:
        T.eq(q1(plain, "SELECT (SELECT count(*) FROM CONNECTION_IDS) + (SELECT count(*) FROM PYTORCH_API"
                       " WHERE connectionId IS NOT NULL)"), 0, "timeline links: none without --pytorch-links")
    outs = {}
    for name, d in (("timeline", trace), ("stored", db)):
        o = os.path.join(out, "links_" + name)
        shutil.rmtree(o, ignore_errors=True)
        r = tbtest.run([tb, "report", "-q", "-dir", d, "--spec", "builtin:free_analysis", "--spec",
                        "builtin:module_statistic", "-o", o])
        T.eq(r.returncode, 0, "timeline links: report over the %s (stderr: %s)" % (name, r.stderr.strip()))
        outs[name] = {f: open(os.path.join(o, f), encoding="utf-8").read() for f in sorted(os.listdir(o))
                      if f.endswith(".csv")}
    T.eq("free_analysis.csv" in outs["timeline"], True, "test self-check: the timeline has free_analysis rows")
    T.eq(outs["stored"], outs["timeline"], "timeline links: the reports read the stored links as they make them")


def check_kernel_details(db, path, rank, label):
    header, rows = csv_rows(path)
    good = [r for r in rows if len(r) == len(header)]
    core = header.index("Accelerator Core")
    hccl = sum(1 for r in good if r[core] in ("HCCL", "COMMUNICATION"))
    T.eq(q1(db, "SELECT count(*) FROM TASK WHERE rankId = %d" % rank), len(good) - hccl, "%s TASK rows" % label)
    T.eq(q1(db, "SELECT count(*) FROM COMMUNICATION_OP WHERE rankId = %d" % rank), hccl,
         "%s COMMUNICATION_OP rows" % label)
    bad = len(rows) - len(good)
    got_bad = q1(db, "SELECT coalesce(sum(events), 0) FROM TB_LOAD_COUNT c JOIN TB_SOURCE s ON s.id = c.sourceId"
                     " WHERE s.path = '%s' AND c.dest = 'skipped: rows with a wrong field count'" % path)
    T.eq(got_bad, bad, "%s rows of the wrong width skipped" % label)
    T.eq(q1(db, "SELECT rowsSkipped FROM TB_SOURCE WHERE path = '%s'" % path), bad, "%s rowsSkipped" % label)
    # the earliest start, exactly (a trailing TAB stripped, µs text to ns)
    start = header.index("Start Time(us)")
    want_min = min(int((decimal.Decimal(r[start].strip()) * 1000).quantize(1, rounding=decimal.ROUND_HALF_UP))
                   for r in good)
    got_min = q1(db, "SELECT min(startNs) FROM (SELECT startNs FROM TASK WHERE rankId = %d UNION ALL"
                     " SELECT startNs FROM COMMUNICATION_OP WHERE rankId = %d)" % (rank, rank))
    T.eq(got_min, want_min, "%s earliest start ns" % label)


def wrong_width_lines(path):
    """(line where each record of the wrong width starts, its width, the header's width)."""
    out = []
    with open(path, newline="", encoding="utf-8-sig") as f:
        r = csv.reader(f)
        header = next(r)
        last = r.line_num
        for row in r:
            if row and len(row) != len(header):
                out.append((last + 1, len(row), len(header)))
            last = r.line_num
    return out


def check_short_rows(tb, out, path):
    """A CSV with rows of the wrong width: skipped with a FILE:LINE warning each, or an error with --strict."""
    bad = wrong_width_lines(path)
    if not bad:
        T.fail("%s: expected rows of the wrong width" % path)
        return
    db = os.path.join(out, "short_rows.db")
    if os.path.exists(db):
        os.unlink(db)
    r = tbtest.run([tb, "export", "db", "-dir", path, "-o", db])
    if r.returncode != 0:
        T.fail("%s: exit %d: %s" % (path, r.returncode, r.stderr.strip()))
        return
    want = ["tracebook: warning: %s:%d: row has %d fields, the header has %d: row skipped (an error with --strict)"
            % (path, line, n, width) for line, n, width in bad]
    got = [l for l in r.stderr.splitlines() if "row skipped" in l]
    T.eq(got, want, "%s warnings" % path)
    T.eq(q1(db, "SELECT rowsSkipped FROM TB_SOURCE"), len(bad), "%s rowsSkipped" % path)
    header, rows = csv_rows(path)
    good = sum(1 for row in rows if len(row) == len(header))
    T.eq(q1(db, "SELECT (SELECT count(*) FROM TASK) + (SELECT count(*) FROM COMMUNICATION_OP)"), good,
         "%s tasks and ops" % path)
    r = tbtest.run([tb, "export", "db", "--strict", "-dir", path, "-o", os.path.join(out, "short_rows_strict.db")])
    line, n, width = bad[0]
    T.eq(r.returncode, 3, "%s --strict exit" % path)
    T.eq(r.stderr.strip(), "tracebook: error: %s:%d: row has %d fields, the header has %d" % (path, line, n, width),
         "%s --strict error" % path)


def main():
    tb, data, out = tbtest.args("TRACEBOOK SHARED_DATA_DIR OUT_DIR", 3, 3)
    tbtest.need_dirs(data)
    asc = os.path.join(data, "ascend")
    tbtest.need_dirs(asc)
    os.makedirs(out, exist_ok=True)
    before = snapshot(data)

    # every directory of profile data loads (msprof_config holds report configs, not data)
    for d in sorted(os.listdir(asc)):
        if os.path.isdir(os.path.join(asc, d)) and d != "msprof_config":
            load(tb, out, "dir_%s.db" % d, [os.path.join(asc, d)])

    # torch_npu ranks: one DB, ranks from profiler_info_N.json
    r0, r1 = os.path.join(asc, "torch_npu_rank0"), os.path.join(asc, "torch_npu_rank1")
    db = load(tb, out, "two_ranks.db", [r0, r1])
    if db:
        T.eq(q(db, "SELECT DISTINCT rankId FROM TB_RANK ORDER BY 1"), [(0,), (1,)], "two ranks: ranks")
        for rank, d in ((0, r0), (1, r1)):
            out_dir = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
            check_kernel_details(db, os.path.join(out_dir, "kernel_details.csv"), rank, "rank %d" % rank)
            for table, name in (("MEMORY_RECORD", "memory_record.csv"), ("OP_MEMORY", "operator_memory.csv"),
                                ("TB_STEP_TRACE_TIME", "step_trace_time.csv")):
                p = os.path.join(out_dir, name)
                if os.path.exists(p):
                    header, rows = csv_rows(p)
                    want = sum(1 for r in rows if len(r) == len(header))
                    T.eq(q1(db, "SELECT count(*) FROM %s WHERE rankId = %d" % (table, rank)), want,
                         "rank %d %s rows" % (rank, table))
        # each rank's rows equal its own load
        for rank, d in ((0, r0), (1, r1)):
            single = load(tb, out, "rank%d.db" % rank, [d])
            if single:
                for t in ("TASK", "COMMUNICATION_OP", "MEMORY_RECORD", "OP_MEMORY"):
                    T.eq(q1(db, "SELECT count(*) FROM %s WHERE rankId = %d" % (t, rank)),
                         q1(single, "SELECT count(*) FROM %s" % t), "rank %d %s: in the 2-rank DB as alone" % (rank, t))

    # op_summary_1.csv: its row of the wrong width
    check_short_rows(tb, out, os.path.join(asc, "misc", "op_summary_1.csv"))

    # the msprof DB: rows per table, strings resolved the same
    src = os.path.join(asc, "msprof_db", "msprof_0.db")
    db = load(tb, out, "msprof.db", [src])
    if db:
        # immutable: a read-only open of a WAL DB would still create -shm/-wal beside it
        con = sqlite3.connect("file:%s?immutable=1" % src, uri=True)
        try:
            tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for t in ("TASK", "COMPUTE_TASK_INFO", "COMMUNICATION_TASK_INFO", "COMMUNICATION_OP", "CANN_API",
                      "OVERLAP_ANALYSIS", "MSTX_EVENTS", "NPU_OP_MEM", "NPU_INFO"):
                if t in tables:
                    T.eq(q1(db, "SELECT count(*) FROM %s" % t),
                         con.execute("SELECT count(*) FROM %s" % t).fetchone()[0], "msprof db %s rows" % t)
            want = con.execute("SELECT s.value, count(*) FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s"
                               " ON s.id = c.name GROUP BY 1 ORDER BY 1").fetchall()
            want_api = con.execute("SELECT s.value, count(*) FROM CANN_API c JOIN STRING_IDS s"
                                   " ON s.id = c.name GROUP BY 1 ORDER BY 1").fetchall()
            want_span = con.execute("SELECT min(startNs), max(endNs) FROM TASK").fetchone()
        finally:
            con.close()
        T.eq(q(db, "SELECT name, count(*) FROM kernel GROUP BY 1 ORDER BY 1"), want, "msprof db kernel names")
        T.eq(q(db, "SELECT s.value, count(*) FROM CANN_API c JOIN STRING_IDS s"
                                           " ON s.id = c.name GROUP BY 1 ORDER BY 1"), want_api, "msprof db API names")
        T.eq(q(db, "SELECT min(startNs), max(endNs) FROM TASK")[0], want_span, "msprof db task span")
        T.eq(q1(db, "SELECT count(*) FROM kernel"), q1(db, "SELECT count(*) FROM COMPUTE_TASK_INFO"),
             "msprof db kernels join TASK")
        msprof_db_fidelity(tb, out, src, db)

    # precedence: JSON and CSV in one rank directory give the JSON's tasks only
    rank_dir = os.path.join(out, "both", "rank_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    shutil.rmtree(os.path.join(out, "both"), ignore_errors=True)
    os.makedirs(rank_dir)
    shutil.copyfile(os.path.join(asc, "torch_npu_timeline", "trace_view.json"), os.path.join(rank_dir, "trace_view.json"))
    shutil.copyfile(os.path.join(r0, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv"),
                    os.path.join(rank_dir, "kernel_details.csv"))
    json_only = load(tb, out, "json_only.db", [os.path.join(asc, "torch_npu_timeline", "trace_view.json")])
    both = load(tb, out, "both.db", [os.path.join(out, "both")])
    if json_only:
        # SQL written for msprof DBs runs on a timeline's DB too, and the kernel view's
        # task type is the compute task's
        try:
            got = q(json_only, "SELECT t.globalTaskId, t.blockDim, t.mixBlockDim, t.mixBlockNum, t.opState,"
                               " (SELECT value FROM STRING_IDS WHERE id = t.taskType) FROM COMPUTE_TASK_INFO t"
                               " JOIN TASK k ON k.globalTaskId = t.globalTaskId")
            T.eq(len(got), q1(json_only, "SELECT count(*) FROM COMPUTE_TASK_INFO"),
                 "timeline: msprof-style statement rows")
            T.eq(all(r[2] == r[3] for r in got), True, "timeline: mixBlockDim is mixBlockNum")
            T.eq(sorted({r[0] for r in q(json_only, "SELECT taskType FROM kernel")}), sorted({r[5] for r in got}),
                 "timeline: kernel task types")
            q(json_only, "SELECT o.count, o.dataType, o.algType FROM COMMUNICATION_OP o")
        except sqlite3.Error as e:
            T.fail("msprof-style statement on the timeline's DB: %s" % e)
    if json_only and both:
        T.eq(q1(both, "SELECT count(*) FROM TASK"), q1(json_only, "SELECT count(*) FROM TASK"),
             "precedence: TASK rows of JSON+CSV equal JSON alone")
        T.eq(q1(both, "SELECT count(*) FROM TB_RANK"), 1, "precedence: one rank")
        T.eq(q1(both, "SELECT coalesce(sum(events), 0) FROM TB_LOAD_COUNT WHERE dest ="
                       " 'skipped: table filled by a better source'") > 0, True,
             "precedence: the CSV's tasks counted as skipped")

    # topsprof listings: rows per class counted with a regex over the text
    tops = os.path.join(data, "topsprof")
    if os.path.isdir(tops):
        summary = os.path.join(tops, "summary_example.txt")
        db = load(tb, out, "tops_summary.db", [summary])
        if db:
            klass, counts = None, {}
            row = re.compile(r"^(?:==\d+== )?\s*[\d.]+%?\s+[\d.]+[mun]?s\s+\d+\s")
            for line in open(summary, encoding="utf-8", errors="replace"):
                m = re.search(r"(GCU|CPU|RUNTIME) activities:", line)
                if m:
                    klass = m.group(1)
                    rest = line[m.end():]
                    if row.match(rest.strip() and "x " + rest.strip() or ""):
                        counts[klass] = counts.get(klass, 0) + 1
                    continue
                if klass and row.match(line):
                    counts[klass] = counts.get(klass, 0) + 1
            got = dict(q(db, "SELECT class, count(*) FROM TB_TOPS_SUMMARY GROUP BY 1"))
            T.eq(got, counts, "topsprof summary rows per class")
        trace = os.path.join(tops, "trace_example.txt")
        db = load(tb, out, "tops_trace.db", [trace])
        if db:
            T.eq(q1(db, "SELECT count(*) FROM TASK"), 3, "topsprof trace: GCU tasks")

    check_timeline_links(tb, out, os.path.join(asc, "torch_npu_timeline", "trace_view.json"))

    # inputs untouched, nothing created beside them
    T.eq(snapshot(data) == before, True, "shared data unchanged (files and contents)")

    return T.finish()


sys.exit(main())
