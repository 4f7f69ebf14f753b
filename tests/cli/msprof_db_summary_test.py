#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# msprof_db_summary_test.py - `export summary` of an msprof DB writes every
# summary the DB holds data for, as msprof names and heads them, and its
# README says what the DB holds that no file is written from.
#
# The public msprof_0.db: msprof_tx (MSTX_EVENTS), hbm (HBM), ddr (DDR),
# llc_read_write (LLC), memory_record and operator_memory (NPU_OP_MEM), each
# checked against the DB's own rows read here with the sqlite3 module; no
# file for a table without rows (NPU_MEM); OVERLAP_ANALYSIS listed in the
# README. A DB generated here with known answers (worked out by hand below)
# checks what the public one cannot: HBM and DDR samples that are not zero, HCCS,
# two HBM units and two caches, a mstx event linked to device tasks,
# allocations released, not released and releases with no allocation, a row
# type the DB does not name, and a table tracebook writes no summary of;
# PCIE samples of an averaged and a last-sample device, UB samples, and the host tables
# (os_runtime_statistic, host_cpu_usage, host_disk_usage, host_network_usage;
# HOST_MEM_USAGE listed in the README with the reason it gives no file); AI Core and
# AI Vector Core sample metrics (ai_core_utilization, ai_vector_core_utilization) on
# an Ascend910B and an Ascend310B device; NIC and ROCE samples of several ports (nic, roce), and
# ACC_PMU and SOC_BANDWIDTH_LEVEL listed in the README as tables msprof writes no summary of; CCU rows
# of both kinds (ccu_mission).
#
# usage: msprof_db_summary_test.py TRACEBOOK SHARED_DATA OUTDIR
# Prints one `ok`/`FAIL` line per case and a final `N passed, N failed`
# line; exits 0 when all pass, 1 otherwise.
import csv
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, SHARED, OUT = tbtest.args("TRACEBOOK SHARED_DATA OUTDIR", 3)
run = tbtest.Program(TB)
MB = 1048576

HEADERS = {
    "msprof_tx": "Device_id,pid,tid,category,event_type,payload_type,payload_value,Start_time(us),End_time(us),"
                 "message_type,message,domain,Device Start_time(us),Device End_time(us)",
    "hbm": "Device_id,Metric,Read(MB/s),Write(MB/s)",
    "ddr": "Device_id,Metric,Read(MB/s),Write(MB/s)",
    "hccs": "Device_id,Mode,Max,Min,Average",
    "llc_read_write": "Device_id,Mode,Task,Hit Rate(%),Throughput(MB/s)",
    "memory_record": "Device_id,Component,Timestamp(us),Total Allocated(KB),Total Reserved(KB),Device",
    "operator_memory": "Device_id,Name,Size(KB),Allocation Time(us),Duration(us),Allocation Total Allocated(KB),"
                       "Allocation Total Reserved(KB),Release Total Allocated(KB),Release Total Reserved(KB),Device",
    "pcie": "Device_id,Mode,Min,Max,Avg",
    "host_cpu_usage": "Device_id,Total Cpu Numbers,Occupied Cpu Numbers,Recommend Cpu Numbers",
    "host_disk_usage": "Device_id,Peak Disk Read(KB/s),Recommend Disk Read(KB/s),Peak Disk Write(KB/s),"
                       "Recommend Disk Write(KB/s)",
    "host_network_usage": "Device_id,Netcard Speed(KB/s),Peak Used Speed(KB/s),Recommend Speed(KB/s)",
    "os_runtime_statistic": "Device_id,Process ID,Thread ID,Name,Time(%),Time(us),Count,Avg(us),Max(us),Min(us)",
    "ub": "Device_id,PortId,TimeStamp,UBRxPortBandWidth(MB/s),UBTxPortBandWidth(MB/s)",
    "nic": "Device_id,Timestamp(us),Bandwidth(MB/s),Rx Bandwidth efficiency(%),rxPacket/s,rxError rate(%),"
           "rxDropped rate(%),Tx Bandwidth efficiency(%),txPacket/s,txError rate(%),txDropped rate(%),funcId",
    "roce": "Device_id,Timestamp(us),Bandwidth(MB/s),Rx Bandwidth efficiency(%),rxPacket/s,rxError rate(%),"
            "rxDropped rate(%),Tx Bandwidth efficiency(%),txPacket/s,txError rate(%),txDropped rate(%),funcId",
    "ccu_mission": "Device_id,Stream ID,Task Id,Instruction ID,Instruction Start Time(us),Instruction Duration(us),"
                   "Notify Instruction ID,Notify Rank ID,Notify Duration(us)",
    # ai_core_utilization and ai_vector_core_utilization: their metric columns depend on the DB;
    # each case below checks its header
}
PUBLIC = ("msprof_tx", "hbm", "ddr", "llc_read_write", "memory_record", "operator_memory")


def export(src, name):
    """export summary of src into OUT/name: {summary: its rows (lists)}, the README text."""
    out = os.path.join(OUT, name)
    r = run("export", "summary", "-q", "-dir", src, "-o", out)
    assert r.rc == 0, r
    d = os.path.join(out, "mindstudio_profiler_output")
    files = {}
    for f in os.listdir(d):
        if f.endswith(".csv"):
            files[f.rsplit("_", 1)[0]] = os.path.join(d, f)
    got = {}
    for k, path in files.items():
        with open(path, newline="") as f:
            lines = list(csv.reader(f))
        if k in HEADERS:
            assert ",".join(lines[0]) == HEADERS[k], (k, lines[0])
        got[k] = lines[1:]
    with open(os.path.join(d, "README.txt")) as f:
        return got, f.read()


def near(a, b, tol=0.0005):
    if a == "N/A" or b == "N/A":
        return a == b
    return abs(float(a) - float(b)) <= tol


def same_rows(got, want, what):
    assert len(got) == len(want), (what, len(got), len(want))
    for g, w in zip(got, want):
        assert len(g) == len(w) and all(near(x, y) if isinstance(y, (int, float)) or y == "N/A" else x == y
                                        for x, y in zip(g, w)), (what, g, w)


def public_db():
    src = os.path.join(SHARED, "ascend", "msprof_db", "msprof_0.db")
    if not os.path.exists(src):
        raise tbtest.Skip("no public data at " + SHARED)
    return src


def case_public_db_summaries():
    src = public_db()
    got, readme = export(src, "public")
    for k in HEADERS:
        assert (k in got) == (k in PUBLIC), (k, sorted(got))  # the public DB has no HCCS, PCIE nor host table
    assert "npu_mem" not in got and "communication_statistic" not in got, sorted(got)
    c = sqlite3.connect("file:%s?mode=ro&immutable=1" % src, uri=True)
    # msprof_tx: every MSTX_EVENTS row, by start time
    want = [["host", g >> 32, g & 0xFFFFFFFF, cat, {0: "marker", 1: "push/pop", 2: "start/end", 3: "marker_ex"}[t],
             "N/A", "N/A", s / 1000, e / 1000, "N/A", msg, dom, "N/A", "N/A"]
            for s, e, t, cat, msg, g, dom, _ in c.execute(
                "SELECT m.startNs, m.endNs, m.eventType, m.category, v.value, m.globalTid, m.domainId, m.connectionId"
                " FROM MSTX_EVENTS m JOIN STRING_IDS v ON v.id = m.message ORDER BY 1, 2, 8")]
    assert len(want) == 13, want
    same_rows(got["msprof_tx"], want, "msprof_tx")
    # hbm: Average over the samples, then per hbmId (bytes/s -> MB/s)
    dev = c.execute("SELECT DISTINCT deviceId FROM HBM").fetchone()[0]
    q = ("SELECT {g}, avg(CASE WHEN s.value = 'read' THEN bandwidth END) / 1048576.0,"
         " avg(CASE WHEN s.value = 'write' THEN bandwidth END) / 1048576.0"
         " FROM HBM h JOIN STRING_IDS s ON s.id = h.type {by}")
    want = [[str(dev), m, round(r, 3) if r is not None else "N/A", round(w, 3) if w is not None else "N/A"]
            for m, r, w in c.execute(q.format(g="'Average'", by="")).fetchall() +
            c.execute(q.format(g="CAST(hbmId AS TEXT)", by="GROUP BY hbmId ORDER BY hbmId")).fetchall()]
    assert len(want) == 5, want
    same_rows(got["hbm"], want, "hbm")
    # ddr: one Average row
    r, w = c.execute("SELECT avg(read) / 1048576.0, avg(write) / 1048576.0 FROM DDR").fetchone()
    same_rows(got["ddr"], [[str(dev), "Average", round(r, 3), round(w, 3)]], "ddr")
    # llc: Average then per llcId, the DB's percent and bytes/s -> MB/s
    q = ("SELECT s.value, {g}, avg(hitRate), avg(throughput) / 1048576.0 FROM LLC l"
         " JOIN STRING_IDS s ON s.id = l.mode {by}")
    want = [[str(dev), m, t, round(h, 3), round(b, 3)]
            for m, t, h, b in c.execute(q.format(g="'Average'", by="")).fetchall() +
            c.execute(q.format(g="CAST(llcId AS TEXT)", by="GROUP BY llcId ORDER BY llcId")).fetchall()]
    same_rows(got["llc_read_write"], want, "llc_read_write")
    # memory_record: every NPU_OP_MEM row, by time, bytes -> KB
    want = [[str(d), comp, t / 1000, a / 1024, r / 1024, "NPU:%d" % d]
            for d, comp, t, a, r in c.execute(
                "SELECT deviceId, s.value, timestampNs, totalAllocate, totalReserve FROM NPU_OP_MEM m"
                " JOIN STRING_IDS s ON s.id = m.component ORDER BY timestampNs, addr")]
    assert len(want) == 494, len(want)
    same_rows(got["memory_record"], want, "memory_record")
    # operator_memory: each allocation paired with the next release of its operator and
    # address, worked out here as msprof pairs them (the DB's ENUM_MEMORY names the types)
    kinds = dict(c.execute("SELECT id, name FROM ENUM_MEMORY"))
    open_, done = {}, []
    for name, addr, typ, size, t, a, r, d in c.execute(
            "SELECT s.value, addr, type, size, timestampNs, totalAllocate, totalReserve, deviceId FROM NPU_OP_MEM m"
            " JOIN STRING_IDS s ON s.id = m.operatorName ORDER BY timestampNs, m.rowid"):
        key = (name, addr, d)
        if kinds[typ] == "allocate":
            open_[key] = (size, t, a, r)
        elif key in open_:
            size0, t0, a0, r0 = open_.pop(key)
            done.append([str(d), name, size0 / 1024, t0 / 1000, (t - t0) / 1000, a0 / 1024, r0 / 1024, a / 1024,
                         r / 1024, "NPU:%d" % d])
    # then the allocations never released, by allocation time
    done += [[str(d), name, size / 1024, t / 1000, "N/A", a / 1024, r / 1024, "N/A", "N/A", "NPU:%d" % d]
             for (name, addr, d), (size, t, a, r) in sorted(open_.items(), key=lambda x: x[1][1])]
    assert len(done) == 247 and len(open_) == 1, (len(done), open_)
    same_rows(got["operator_memory"], done, "operator_memory")
    n = c.execute("SELECT count(*) FROM OVERLAP_ANALYSIS").fetchone()[0]
    assert "OVERLAP_ANALYSIS (%d rows in the DB): msprof writes no summary file" % n in readme, readme


def make_db(path):
    """A small msprof DB with known answers (see case_generated_db)."""
    c = sqlite3.connect(path)
    c.executescript("""
    CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
    CREATE TABLE SESSION_TIME_INFO (startTimeNs INTEGER, endTimeNs INTEGER);
    CREATE TABLE NPU_INFO (id INTEGER, name TEXT);
    CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, globalTaskId INTEGER,
                       globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, taskId INTEGER,
                       modelId INTEGER);
    CREATE TABLE HBM (deviceId INTEGER, timestampNs INTEGER, bandwidth NUMERIC, hbmId INTEGER, type INTEGER);
    CREATE TABLE DDR (deviceId INTEGER, timestampNs INTEGER, read NUMERIC, write NUMERIC);
    CREATE TABLE LLC (deviceId INTEGER, llcId INTEGER, timestampNs INTEGER, hitRate NUMERIC, throughput NUMERIC,
                      mode INTEGER);
    CREATE TABLE MSTX_EVENTS (startNs INTEGER, endNs INTEGER, eventType INTEGER, rangeId INTEGER, category INTEGER,
                              message INTEGER, globalTid INTEGER, endGlobalTid INTEGER, domainId INTEGER,
                              connectionId INTEGER);
    CREATE TABLE NPU_OP_MEM (operatorName INTEGER, addr INTEGER, type INTEGER, size INTEGER, timestampNs INTEGER,
                             globalTid INTEGER, totalAllocate NUMERIC, totalReserve NUMERIC, component INTEGER,
                             deviceId INTEGER);
    CREATE TABLE ENUM_MEMORY (id INTEGER PRIMARY KEY, name TEXT);
    CREATE TABLE NIC (deviceId INTEGER, timestampNs INTEGER, bandwidth NUMERIC, rxPacketRate NUMERIC,
                      rxByteRate NUMERIC, rxPackets NUMERIC, rxBytes NUMERIC, rxErrors NUMERIC, rxDropped NUMERIC,
                      txPacketRate NUMERIC, txByteRate NUMERIC, txPackets NUMERIC, txBytes NUMERIC, txErrors NUMERIC,
                      txDropped NUMERIC, funcId INTEGER);
    CREATE TABLE ROCE AS SELECT * FROM NIC WHERE 0;
    CREATE TABLE HCCS (deviceId INTEGER, timestampNs INTEGER, txThroughput NUMERIC, rxThroughput NUMERIC);
    """)
    c.executemany("INSERT INTO STRING_IDS VALUES (?, ?)",
                  [(1, "read"), (2, "write"), (3, "KERNEL_AIVEC"), (4, "step 1"), (5, "GE"), (6, "matmul"),
                   (7, "add"), (8, "mark")])
    c.execute("INSERT INTO SESSION_TIME_INFO VALUES (1000000000, 2000000000)")
    c.execute("INSERT INTO NPU_INFO VALUES (3, 'Ascend910B')")
    c.executemany("INSERT INTO TASK VALUES (?, ?, 3, 77, ?, 5, 3, 4294967295, 2, ?, 4294967295)",
                  [(1000100000, 1000200000, 1, 10), (1000300000, 1000350000, 2, 11)])
    c.executemany("INSERT INTO HBM VALUES (3, ?, ?, ?, ?)",
                  [(1, 100 * MB, 0, 1), (2, 201 * MB, 0, 1), (1, 50 * MB, 0, 2),
                   (1, 300 * MB, 1, 1), (1, 70 * MB, 1, 2), (2, 91 * MB, 1, 2)])
    c.executemany("INSERT INTO DDR VALUES (3, ?, ?, ?)",
                  [(1, 10 * MB, 5 * MB), (2, 20 * MB, 5 * MB), (3, 31 * MB, 6 * MB)])
    c.executemany("INSERT INTO LLC VALUES (3, ?, ?, ?, ?, 1)",
                  [(0, 1, 40, 100 * MB), (0, 2, 60, 200 * MB), (1, 1, 70, 400 * MB)])
    tid = (1234 << 32) | 5678
    c.executemany("INSERT INTO MSTX_EVENTS VALUES (?, ?, ?, 4294967295, 4294967295, ?, ?, ?, 0, ?)",
                  [(1000050000, 1000400000, 2, 4, tid, tid, 77), (1000500000, 1000500000, 0, 8, tid, tid, 99)])
    c.executemany("INSERT INTO ENUM_MEMORY VALUES (?, ?)", [(5, "allocate"), (6, "release"), (9, "other")])
    c.executemany("INSERT INTO NPU_OP_MEM VALUES (?, ?, ?, ?, ?, 1, ?, ?, 5, 3)",
                  [(6, 100, 5, 2048, 1000001000, 4096, 8192),   # matmul allocates 2 KB
                   (7, 200, 5, 1024, 1000001200, 5120, 8192),   # add allocates 1 KB, never released
                   (7, 300, 6, 1024, 1000001300, 4096, 8192),   # a release with no allocation: left out
                   (6, 100, 6, 2048, 1000001500, 2048, 8192),   # matmul's 2 KB released after 0.5 us
                   (6, 100, 5, 4096, 1000002000, 6144, 8192),   # matmul allocates 4 KB at the same address
                   (6, 100, 6, 4096, 1000002100, 2048, 8192),   # released after 0.1 us
                   (6, 400, 9, 64, 1000002200, 2048, 8192)])    # a type ENUM_MEMORY names neither way
    # one NIC sample of port 0: 100 MB/s; 7 and 9 packets/s; 200 rx packets, 3 errors, 1 drop; no tx packet
    c.execute("INSERT INTO NIC VALUES (3, 1000000500, ?, 7, 0, 200, 0, 3, 1, 9, 0, 0, 0, 5, 2, 0)", (100 * MB,))
    c.executemany("INSERT INTO HCCS VALUES (3, ?, ?, ?)",
                  [(1, 10 * MB, 40 * MB), (2, 30 * MB, 20 * MB), (3, 21 * MB, 31 * MB)])
    c.commit()
    c.close()


def case_generated_db():
    src = os.path.join(OUT, "gen", "msprof_1.db")
    os.makedirs(os.path.dirname(src), exist_ok=True)
    make_db(src)
    got, readme = export(src, "gen_out")
    tx = got["msprof_tx"]
    # pid/tid from globalTid; the range's device side spans the two tasks of connection 77
    same_rows(tx, [["host", "1234", "5678", "4294967295", "start/end", "N/A", "N/A", 1000050, 1000400, "N/A",
                    "step 1", "0", 1000100, 1000350],
                   ["host", "1234", "5678", "4294967295", "marker", "N/A", "N/A", 1000500, 1000500, "N/A",
                    "mark", "0", "N/A", "N/A"]], "msprof_tx")
    # hbm: Average (100 + 201 + 300) / 3 and (50 + 70 + 91) / 3; unit 0: 150.5 / 50; unit 1: 300 / 80.5
    same_rows(got["hbm"], [["3", "Average", 200.333, 70.333], ["3", "0", 150.5, 50], ["3", "1", 300, 80.5]], "hbm")
    same_rows(got["ddr"], [["3", "Average", 20.333, 5.333]], "ddr")
    # llc: Average (40 + 60 + 70) / 3 %, (100 + 200 + 400) / 3 MB/s; cache 0: 50 / 150; cache 1: 70 / 400
    same_rows(got["llc_read_write"], [["3", "read", "Average", 56.667, 233.333], ["3", "read", "0", 50, 150],
                                      ["3", "read", "1", 70, 400]], "llc_read_write")
    # hccs: Tx max 30, min 10, mean 61 / 3; Rx max 40, min 20, mean 91 / 3
    same_rows(got["hccs"], [["3", "Tx (MB/s)", 30, 10, 20.333], ["3", "Rx (MB/s)", 40, 20, 30.333]], "hccs")
    assert len(got["memory_record"]) == 7, got["memory_record"]
    same_rows(got["memory_record"][:1], [["3", "GE", 1000001, 4, 8, "NPU:3"]], "memory_record")
    # released blocks by release time, then the one never released
    same_rows(got["operator_memory"], [["3", "matmul", 2, 1000001, 0.5, 4, 8, 2, 8, "NPU:3"],
                                       ["3", "matmul", 4, 1000002, 0.1, 6, 8, 2, 8, "NPU:3"],
                                       ["3", "add", 1, 1000001.2, "N/A", 5, 8, "N/A", "N/A", "NPU:3"]],
              "operator_memory")
    # nic of one sample: its time (host clock) and bandwidth, efficiencies 0, its packet rates, and each
    # error or drop count / the packet counter as a fraction: 3 / 200, 1 / 200; no tx packet: 0
    same_rows(got["nic"], [["3", 1000000.5, 100, 0, 7, 0.015, 0.005, 0, 9, 0, 0, "0"]], "nic")
    assert "roce" not in got and "nic_*.csv" not in readme, (sorted(got), readme)
    assert "operator_memory_*.csv: 1 NPU_OP_MEM row left out: the DB's ENUM_MEMORY names type 9 neither" \
        " allocate nor release" in readme, readme


def case_host_tables():
    # the host tables of an msprof DB, with answers worked out by hand below
    src = os.path.join(OUT, "host", "msprof_5.db")
    os.makedirs(os.path.dirname(src), exist_ok=True)
    make_db(src)
    with sqlite3.connect(src) as c:
        c.executescript("""
        CREATE TABLE CPU_USAGE (timestampNs INTEGER, cpuId INTEGER, usage NUMERIC);
        CREATE TABLE HOST_DISK_USAGE (timestampNs INTEGER, readRate NUMERIC, writeRate NUMERIC, usage NUMERIC);
        CREATE TABLE HOST_NETWORK_USAGE (timestampNs INTEGER, usage NUMERIC, speed NUMERIC);
        CREATE TABLE HOST_MEM_USAGE (timestampNs INTEGER, usage NUMERIC);
        CREATE TABLE OSRT_API (name INTEGER, globalTid INTEGER, startNs INTEGER, endNs INTEGER);
        """)
        # CPU 0 never used, CPU 3 once, CPU 7 at 100 %: 3 CPUs occupied, 2 used
        c.executemany("INSERT INTO CPU_USAGE VALUES (?, ?, ?)",
                      [(1, 0, 0), (2, 0, 0), (1, 3, 5.5), (2, 3, 0), (1, 7, 100)])
        # reads 0 and 1..101 KB/s (bytes/s in the DB): peak 101; the 101 samples above zero,
        # index ceil(100 * 0.98) = 98 is 99 KB/s, / 0.8 = 123.75. Writes all 0: peak 0, recommend 0
        c.executemany("INSERT INTO HOST_DISK_USAGE VALUES (?, ?, 0, 1)", [(k, k * 1024.0) for k in range(0, 102)])
        # network 0, 4 and 2 KB/s: peak 4; samples above zero [2, 4], index ceil(0.98) = 1: 4 / 0.8 = 5
        c.executemany("INSERT INTO HOST_NETWORK_USAGE VALUES (?, 1, ?)", [(1, 0), (2, 4096), (3, 2048)])
        c.execute("INSERT INTO HOST_MEM_USAGE VALUES (1, 12.5)")
        c.executemany("INSERT INTO STRING_IDS VALUES (?, ?)", [(30, "pthread_mutex_lock"), (31, "pthread_mutex_unlock")])
        a, b = (12 << 32) | 34, (12 << 32) | 35
        # 10000 ns in all: thread 35's lock 6500, thread 34's two locks 2000 + 1000 and one unlock 500
        c.executemany("INSERT INTO OSRT_API VALUES (?, ?, ?, ?)",
                      [(30, a, 1000, 3000), (30, a, 5000, 6000), (31, a, 7000, 7500), (30, b, 1000, 7500)])
    got, readme = export(src, "host_out")
    same_rows(got["host_cpu_usage"], [["host", "N/A", 3, 2]], "host_cpu_usage")
    same_rows(got["host_disk_usage"], [["host", 101, 123.75, 0, 0]], "host_disk_usage")
    same_rows(got["host_network_usage"], [["host", "N/A", 4, 5]], "host_network_usage")
    same_rows(got["os_runtime_statistic"], [["host", 12, 35, "pthread_mutex_lock", 0.65, 6.5, 1, 6.5, 6.5, 6.5],
                                            ["host", 12, 34, "pthread_mutex_lock", 0.3, 3, 2, 1.5, 2, 1],
                                            ["host", 12, 34, "pthread_mutex_unlock", 0.05, 0.5, 1, 0.5, 0.5, 0.5]],
              "os_runtime_statistic")
    assert "host_mem_usage_*.csv: not written from HOST_MEM_USAGE (1 row in the DB): the DB keeps the host's" \
        " memory usage in % only" in readme, readme
    for t in ("CPU_USAGE", "HOST_DISK_USAGE", "HOST_NETWORK_USAGE", "OSRT_API"):
        assert t not in readme, (t, readme)


PCIE_COLS = [d + k + m for d, ks in (("tx", ("Post", "Nonpost", "Cpl", "NonpostLatency")),
                                     ("rx", ("Post", "Nonpost", "Cpl"))) for k in ks for m in ("Min", "Max", "Avg")]
PCIE_MODES = ["Tx_p_avg(MB/s)", "Tx_np_avg(MB/s)", "Tx_cpl_avg(MB/s)", "Tx_latency_avg(us)", "Rx_p_avg(MB/s)",
              "Rx_np_avg(MB/s)", "Rx_cpl_avg(MB/s)"]


def pcie_sample(dev, ts, x):
    """A PCIE row whose column j holds (x + j) MB/s in bytes/s, the latency (x + j) us in ns."""
    return [dev, ts] + [(x + j) * (1000 if "Latency" in col else MB) for j, col in enumerate(PCIE_COLS)]


def case_pcie():
    # device 3 (Ascend910A): the mean of its samples, the sample with Tx posted Max < Min left
    # out, a Min of msprof's 0xFFFFF written as 0; device 4 (Ascend910B): its last sample
    src = os.path.join(OUT, "pcie", "msprof_6.db")
    os.makedirs(os.path.dirname(src), exist_ok=True)
    make_db(src)
    with sqlite3.connect(src) as c:
        c.execute("CREATE TABLE PCIE (deviceId INTEGER, timestampNs INTEGER, %s)"
                  % ", ".join(k + " INTEGER" for k in PCIE_COLS))
        c.execute("DELETE FROM NPU_INFO")
        c.executemany("INSERT INTO NPU_INFO VALUES (?, ?)", [(3, "Ascend910A"), (4, "Ascend910B")])
        rows = [pcie_sample(3, 1, 10), pcie_sample(3, 2, 20), pcie_sample(4, 2, 50), pcie_sample(4, 1, 70)]
        bad = pcie_sample(3, 3, 1000)
        bad[2], bad[3] = 5 * MB, 1 * MB   # txPostMin 5 > txPostMax 1: left out
        rows.append(bad)
        rx_cpl_min = 2 + PCIE_COLS.index("rxCplMin")
        for r in rows[:2]:
            r[rx_cpl_min] = 0xFFFFF * 1000000   # msprof's "no value" (bytes/us) in bytes/s
        c.executemany("INSERT INTO PCIE VALUES (%s)" % ",".join("?" * (2 + len(PCIE_COLS))), rows)
    got, readme = export(src, "pcie_out")
    want = []
    for dev, x in ((3, 15), (4, 50)):   # device 3: the mean of 10 and 20; device 4: the sample at ts 2
        for i, mode in enumerate(PCIE_MODES):
            lo, hi, av = (x + 3 * i + k for k in range(3))
            if dev == 3 and mode.startswith("Rx_cpl"):
                lo = 0
            want.append([str(dev), mode, lo, hi, av])
    same_rows(got["pcie"], want, "pcie")
    assert "PCIE" not in readme, readme


def case_ub():
    # UB samples written one per row, by device, time and port; the time in us to 3 decimals
    src = os.path.join(OUT, "ub", "msprof_7.db")
    os.makedirs(os.path.dirname(src), exist_ok=True)
    make_db(src)
    with sqlite3.connect(src) as c:
        c.execute("CREATE TABLE UB (deviceId INTEGER, portId INTEGER, timestampNs INTEGER, rxUdmaBind INTEGER,"
                  " txUdmaBind INTEGER)")
        c.executemany("INSERT INTO UB VALUES (3, ?, ?, ?, ?)",
                      [(5, 1000002500, 40, 41), (2, 1000002500, 30, 31), (2, 1000001001, 10, 11)])
    got, readme = export(src, "ub_out")
    assert got["ub"] == [["3", "2", "1000001.001", "10", "11"], ["3", "2", "1000002.500", "30", "31"],
                         ["3", "5", "1000002.500", "40", "41"]], got["ub"]
    assert "UB" not in readme, readme


GB = 1073741824


def aic_db(name, chip, rows):
    """A DB of make_db whose device 3 is chip, with SAMPLE_PMU_SUMMARY rows (metric, value, core, type)."""
    src = os.path.join(OUT, name, "msprof_8.db")
    os.makedirs(os.path.dirname(src), exist_ok=True)
    make_db(src)
    with sqlite3.connect(src) as c:
        c.execute("CREATE TABLE SAMPLE_PMU_SUMMARY (deviceId INTEGER, metric INTEGER, value NUMERIC, coreId INTEGER,"
                  " coreType INTEGER)")
        c.execute("UPDATE NPU_INFO SET name = ?", (chip,))
        names = sorted({r[0] for r in rows} | {"AIC", "AIV"})
        ids = {n: 100 + i for i, n in enumerate(names)}
        c.executemany("INSERT INTO STRING_IDS VALUES (?, ?)", [(i, n) for n, i in ids.items()])
        c.executemany("INSERT INTO SAMPLE_PMU_SUMMARY VALUES (3, ?, ?, ?, ?)",
                      [(ids[m], v, core, ids[k]) for m, v, core, k in rows])
    return src


def case_ai_core_utilization():
    # Ascend910B: the DB's order of metrics; total_time left out; the l2 bandwidths kept in GB/s
    # (bytes/s / 2^30), the ub_*_mte ones left out (msprof keeps them on Ascend310 only);
    # scalar_time back from ns to us; memory_bound = mte2_ratio / max(vec_ratio, mac_ratio):
    # core 0: 0.1 / 0.4 = 0.25, core 1: 0.15 / 0.3 = 0.5, Average: 0.125 / 0.25 = 0.5
    rows = []
    for core, (vec, mac, mte2, l2r, l2w, sc) in ((0, (0.2, 0.4, 0.1, 2, 1.5, 1234)),
                                               (1, (0.3, 0.1, 0.15, 1, 0.25, 2000))):
        rows += [("total_time", 5e6, core, "AIC"), ("vec_ratio", vec, core, "AIC"), ("mac_ratio", mac, core, "AIC"),
                 ("mte2_ratio", mte2, core, "AIC"), ("l2_read_bw", l2r * GB, core, "AIC"),
                 ("l2_write_bw", l2w * GB, core, "AIC"), ("ub_read_bw_mte", GB, core, "AIC"),
                 ("ub_write_bw_mte", GB, core, "AIC"), ("scalar_time", sc, core, "AIC")]
    got, readme = export(aic_db("aic", "Ascend910B", rows), "aic_out")
    d = os.path.join(OUT, "aic_out", "mindstudio_profiler_output")
    f = [x for x in os.listdir(d) if x.startswith("ai_core_utilization_")]
    with open(os.path.join(d, f[0]), newline="") as h:
        head = h.readline()
    assert head == "Device_id,Core ID,vec_ratio,mac_ratio,mte2_ratio,l2_read_bw(GB/s),l2_write_bw(GB/s)," \
                   "scalar_time,memory_bound\r\n" or head.rstrip("\r\n") == \
        "Device_id,Core ID,vec_ratio,mac_ratio,mte2_ratio,l2_read_bw(GB/s),l2_write_bw(GB/s),scalar_time," \
        "memory_bound", head
    same_rows(got["ai_core_utilization"], [["3", "Core0", 0.2, 0.4, 0.1, 2, 1.5, 1.234, 0.25],
                                           ["3", "Core1", 0.3, 0.1, 0.15, 1, 0.25, 2, 0.5],
                                           ["3", "Average", 0.25, 0.25, 0.125, 1.5, 0.875, 1.617, 0.5]],
              "ai_core_utilization")
    assert "ai_vector_core_utilization" not in got, sorted(got)   # no AIV rows: no file
    assert "SAMPLE_PMU" not in readme and "ai_core_utilization_" in readme, readme


def case_ai_vector_core_utilization_310b():
    # Ascend310B: ub_*_mte and l2 bandwidths left out; vec_ratio and ub_read_bw counted by no
    # unit of this chip are N/A, as msprof writes them; memory_bound from the DB's values
    # (0.2 / max(0.5, 0.25) = 0.4; cores 2 and 5: Average (0.2 + 0.4) / 2 = 0.3 ...)
    rows = []
    for core, (vec, mac, mte2, ub) in ((5, (0.25, 0.5, 0.4, 3)), (2, (0.5, 0.25, 0.2, 1))):
        rows += [("vec_ratio", vec, core, "AIV"), ("mac_ratio", mac, core, "AIV"), ("mte2_ratio", mte2, core, "AIV"),
                 ("ub_read_bw", ub * GB, core, "AIV"), ("l2_read_bw", GB, core, "AIV"),
                 ("l2_write_bw", GB, core, "AIV"), ("ub_read_bw_mte", GB, core, "AIV"),
                 ("ub_write_bw_mte", GB, core, "AIV"), ("total_time", 7e6, core, "AIV")]
    got, _ = export(aic_db("aiv", "Ascend310B", rows), "aiv_out")
    d = os.path.join(OUT, "aiv_out", "mindstudio_profiler_output")
    f = [x for x in os.listdir(d) if x.startswith("ai_vector_core_utilization_")]
    with open(os.path.join(d, f[0]), newline="") as h:
        head = h.readline().rstrip("\r\n")
    assert head == "Device_id,Core ID,vec_ratio,mac_ratio,mte2_ratio,ub_read_bw(GB/s),memory_bound", head
    # core 2: 0.2 / 0.5 = 0.4; core 5: 0.4 / 0.5 = 0.8; Average: vec 0.375, mac 0.375, mte2 0.3: 0.8
    same_rows(got["ai_vector_core_utilization"], [["3", "Core2", "N/A", 0.25, 0.2, "N/A", 0.4],
                                                  ["3", "Core5", "N/A", 0.5, 0.4, "N/A", 0.8],
                                                  ["3", "Average", "N/A", 0.375, 0.3, "N/A", 0.8]],
              "ai_vector_core_utilization")
    assert "ai_core_utilization" not in got, sorted(got)


def case_ai_core_utilization_no_chip():
    # NPU_INFO names no chip of device 3: l2 and ub_*_mte bandwidths left out, said in the README
    rows = [("l2_read_bw", GB, 0, "AIC"), ("l2_write_bw", GB, 0, "AIC"), ("mac_ratio", 0.5, 0, "AIC"),
            ("ub_read_bw_mte", GB, 0, "AIC"), ("ub_write_bw_mte", GB, 0, "AIC")]
    src = aic_db("aic_nochip", "x", rows)
    with sqlite3.connect(src) as c:
        c.execute("DELETE FROM NPU_INFO")
    got, readme = export(src, "aic_nochip_out")
    same_rows(got["ai_core_utilization"], [["3", "Core0", 0.5], ["3", "Average", 0.5]], "ai_core_utilization")
    assert "ai_core_utilization_*.csv, ai_vector_core_utilization_*.csv: NPU_INFO names no chip for device 3: the" \
        " columns msprof writes for some chips only (ub_read_bw_mte, ub_write_bw_mte, l2_read_bw, l2_write_bw) are" \
        " not written" in readme, readme


GEN_OPERATOR_MEMORY = [["3", "matmul", 2, 1000001, 0.5, 4, 8, 2, 8, "NPU:3"],
                       ["3", "matmul", 4, 1000002, 0.1, 6, 8, 2, 8, "NPU:3"],
                       ["3", "add", 1, 1000001.2, "N/A", 5, 8, "N/A", "N/A", "NPU:3"]]


def case_no_enum_memory():
    # a DB without ENUM_MEMORY: msprof documents NPU_OP_MEM.type as an id of STRING_IDS
    # ("allocate", "release"); the rows of the generated DB with their types named there
    # pair as they do through ENUM_MEMORY. Ids 5 and 6 (the ENUM_MEMORY ids of the other
    # case) are GE and matmul in STRING_IDS, so reading them as enum ids pairs nothing.
    src = os.path.join(OUT, "noenum", "msprof_4.db")
    os.makedirs(os.path.dirname(src), exist_ok=True)
    make_db(src)
    with sqlite3.connect(src) as c:
        c.execute("DROP TABLE ENUM_MEMORY")
        c.executemany("INSERT INTO STRING_IDS VALUES (?, ?)", [(20, "allocate"), (21, "release"), (22, "other")])
        c.execute("UPDATE NPU_OP_MEM SET type = CASE type WHEN 5 THEN 20 WHEN 6 THEN 21 ELSE 22 END")
    got, readme = export(src, "noenum_out")
    same_rows(got["operator_memory"], GEN_OPERATOR_MEMORY, "operator_memory without ENUM_MEMORY")
    assert len(got["memory_record"]) == 7, got["memory_record"]
    assert "operator_memory_*.csv: 1 NPU_OP_MEM row left out: the DB's STRING_IDS names type 22 neither" \
        " allocate nor release" in readme, readme
    # the DB tracebook writes of it keeps the names (TB_SOURCE_ENUM), so loading that DB pairs the same
    db = os.path.join(OUT, "noenum.db")
    r = run("export", "db", "-q", "-dir", src, "-o", db)
    assert r.rc == 0, r
    with sqlite3.connect(db) as c:
        names = c.execute("SELECT id, name FROM TB_SOURCE_ENUM WHERE tableName = 'NPU_OP_MEM.type'"
                          " ORDER BY id").fetchall()
    assert names == [(20, "allocate"), (21, "release"), (22, "other")], names
    got, _ = export(db, "noenum_db_out")
    same_rows(got["operator_memory"], GEN_OPERATOR_MEMORY, "operator_memory of tracebook's DB")
    # a type STRING_IDS does not name: the rows are left out, with the reason
    with sqlite3.connect(src) as c:
        c.execute("DELETE FROM STRING_IDS WHERE id = 22")
    got, readme = export(src, "noenum_out2")
    same_rows(got["operator_memory"], GEN_OPERATOR_MEMORY, "operator_memory, type 22 unnamed")
    assert "the DB's STRING_IDS names type 22 neither allocate nor release" in readme, readme


def case_nic_roce():
    # NIC samples of three ports of device 3, worked out by hand as msprof sums them up; ROCE the
    # same samples of port 0 alone (its Rx error rate then takes port 0's errors only)
    src = os.path.join(OUT, "nic", "msprof_7.db")
    os.makedirs(os.path.dirname(src), exist_ok=True)
    make_db(src)
    t = 1000002000
    # (ts, bandwidth, rxPacketRate, rxPackets, rxBytes, rxErrors, rxDropped, txPacketRate, txBytes, txErrors,
    #  txDropped, funcId)
    rows = [(t, MB, 100, 1000, 0, 3, 1, 50, MB, 5, 1, 0),              # port 0: 1 MB/s, over 1000 ns
            (t + 500, MB, 200, 1000, 2 * MB, 6, 2, 50, 11 * MB, 5, 2, 0),
            (t + 1000, MB, 300, 1000, 5 * MB, 9, 3, 150, 26 * MB, 20, 2, 0),
            (t, 2 * MB, 10, 1000, 0, 0, 4, 0, 0, 1, 1, 1),             # port 1: 2 MB/s, over 2000 ns
            (t + 2000, 2 * MB, 30, 1000, 4 * MB, 12, 0, 0, 0, 1, 1, 1),
            (t, 3 * MB, 5, 1000, 0, 6, 0, 5, 0, 0, 0, 2),               # port 2: two samples at one time
            (t, 3 * MB, 5, 1000, 0, 6, 0, 5, 0, 0, 0, 2)]
    with sqlite3.connect(src) as c:
        c.execute("DELETE FROM NIC")
        for table, some in (("NIC", rows), ("ROCE", rows[:3])):
            c.executemany("INSERT INTO %s VALUES (3, ?, ?, ?, 0, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?)" % table, some)
        # msprof writes no summary of these (its Acc PMU and Stars Soc Info timeline layers only)
        c.execute("CREATE TABLE ACC_PMU (accId INTEGER, readBwLevel INTEGER, writeBwLevel INTEGER, "
                  "readOstLevel INTEGER, writeOstLevel INTEGER, timestampNs INTEGER, deviceId INTEGER)")
        c.execute("INSERT INTO ACC_PMU VALUES (1, 2, 3, 4, 5, 1000002000, 3)")
        c.execute("CREATE TABLE SOC_BANDWIDTH_LEVEL (l2BufferBwLevel INTEGER, mataBwLevel INTEGER, "
                  "timestampNs INTEGER, deviceId INTEGER)")
        c.executemany("INSERT INTO SOC_BANDWIDTH_LEVEL VALUES (1, 2, ?, 3)", [(1000002000,), (1000003000,)])
    got, readme = export(src, "nic_out")
    # port 0: d = 1000 ns; Rx efficiency 5 MB * 8 / (1000 * 1 MB/s in bytes) = 0.04, Tx 25 MB * 8 / ... = 0.2;
    # packets 600 / 1000 and 250 / 1000; rx errors: the device's mean over its 7 samples, 42 / 7 = 6,
    # / 600 = 0.01 -> 1 %; rx drops mean 2 / 600 = 0.0033 -> 0.003 -> 0.3 %; tx errors mean 10 / 250 =
    # 0.04 -> 4 %; tx drops sum 5 / 250 = 0.02 -> 2 %.
    # port 1: d = 2000; Rx 4 MB * 8 / (2000 * 2 MB) = 0.008, Tx 0; packets 40 / 2000 = 0.02 and 0;
    # rx errors 6 / 40 = 0.15 -> 15 %; drops mean 2 / 40 = 0.05 -> 5 %; no tx packet: 0, 0.
    # port 2: no time span: every figure 0 but its bandwidth.
    same_rows(got["nic"], [["3", 1000002, 1, 0.04, 0.6, 1, 0.3, 0.2, 0.25, 4, 2, "0"],
                           ["3", 1000002, 2, 0.008, 0.02, 15, 5, 0, 0, 0, 0, "1"],
                           ["3", 1000002, 3, 0, 0, 0, 0, 0, 0, 0, 0, "2"]], "nic")
    # roce: port 0's samples alone: rx errors mean 6 / 600 as well
    same_rows(got["roce"], [["3", 1000002, 1, 0.04, 0.6, 1, 0.3, 0.2, 0.25, 4, 2, "0"]], "roce")
    assert "nic_*.csv" not in readme and "roce_*.csv" not in readme and "ROCE" not in readme, readme
    # the README says which clock the files' times are in
    for k in ("nic", "roce"):
        assert re.search(r"\n  %s_\d+\.csv \(Timestamp in the host clock, as the DB keeps it; msprof's own CSV uses"
                         r" the device clock\)\n" % k, readme), readme
    for t, n in (("ACC_PMU", "1 row"), ("SOC_BANDWIDTH_LEVEL", "2 rows")):
        assert "  %s (%s in the DB): msprof writes no summary file of this table" % (t, n) in readme, readme
    assert "acc_pmu" not in readme and "inter_soc" not in readme, readme


def case_ccu_mission():
    # CCU rows as msprof's DB keeps them: a wait, a loop group (args a pretty-printed JSON array of
    # names and values, as msprof writes them) and a loop group whose args (an object) lack its
    # instruction id
    src = os.path.join(OUT, "ccu", "msprof_8.db")
    os.makedirs(os.path.dirname(src), exist_ok=True)
    make_db(src)
    loop = '[\n    "Physic Stream Id",\n    2,\n    "Task Id",\n    10,\n    "Instruction ID",\n    7,\n' \
           '    "Die Id",\n    0\n]'
    wait = '["Physic Stream Id",2,"Task Id",10,"Notify Instruction ID",9,"Notify Rank ID",1,"Mask",3]'
    with sqlite3.connect(src) as c:
        c.execute("CREATE TABLE CCU (deviceId NUMERIC, globalTaskId NUMERIC, name INTEGER, startNs NUMERIC, "
                  "endNs NUMERIC, args INTEGER)")
        c.executemany("INSERT INTO STRING_IDS VALUES (?, ?)",
                      [(40, "LoopGroup"), (41, "Wait"), (42, loop), (43, wait), (44, '{"Physic Stream Id": 4, '
                                                                                   '"Task Id": 11}')])
        c.executemany("INSERT INTO CCU VALUES (3, 1, ?, ?, ?, ?)",
                      [(40, 1000003000, 1000003500, 42), (41, 1000002000, 1000004250, 43),
                       (40, 1000005000, 1000005100, 44)])
    got, readme = export(src, "ccu_out")
    # by start time: the wait (notify duration from its start to the release's end, 2.25 us), then the
    # loop groups (their start in us, duration 0.5 and 0.1 us); the other kind's columns N/A
    same_rows(got["ccu_mission"], [["3", "2", "10", "N/A", "N/A", "N/A", "9", "1", 2.25],
                                   ["3", "2", "10", "7", 1000003, 0.5, "N/A", "N/A", "N/A"],
                                   ["3", "4", "11", "N/A", 1000005, 0.1, "N/A", "N/A", "N/A"]], "ccu_mission")
    assert "CCU" not in readme and "ccu_mission_*.csv" not in readme, readme
    assert re.search(r"\n  ccu_mission_\d+\.csv \(Instruction Start Time in the host clock, as the DB keeps it;"
                     r" msprof's own CSV uses the device clock\)\n", readme), readme
    assert re.search(r"\n  hbm_\d+\.csv\n", readme), readme  # the DB's times are msprof's: no note


def case_no_rows_no_file():
    # a DB with tasks only: none of these files, each report skipped with its reason
    src = os.path.join(OUT, "tasks", "msprof_2.db")
    os.makedirs(os.path.dirname(src), exist_ok=True)
    make_db(src)
    with sqlite3.connect(src) as c:
        for t in ("HBM", "DDR", "LLC", "HCCS", "MSTX_EVENTS", "NPU_OP_MEM", "NIC"):
            c.execute("DELETE FROM " + t)
    out = os.path.join(OUT, "tasks_out")
    r = run("export", "summary", "-dir", src, "-o", out)
    assert r.rc == 0, r
    d = os.path.join(out, "mindstudio_profiler_output")
    names = sorted(f.rsplit("_", 1)[0] for f in os.listdir(d) if f.endswith(".csv"))
    assert names == ["op_summary", "task_time"], names
    for k, table in (("msprof_tx", "MSTX_EVENTS"), ("hbm", "HBM"), ("ddr", "DDR"), ("llc_read_write", "LLC"),
                     ("hccs", "HCCS"), ("nic", "NIC"), ("roce", "ROCE"),
                     ("operator_memory", "NPU_OP_MEM")):
        assert "report '%s' skipped: the data has no %s rows" % (k, table) in r.err, r.err
    with open(os.path.join(d, "README.txt")) as f:
        assert "not written here" not in f.read()


STEPS = [(3, "1", 100.5, 20.25, 10.0, 30.25, 5.0, 0.0, 0.0, 20.25, 1.5),
         (3, "2", 110.0, 10.0, 12.5, 22.5, 7.75, 0.0, 0.0, 10.0, 2.0)]
STEP_HEADER = ("Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
               "Communication(Not Overlapped and Exclude Receive),Preparing")


def make_analysis_db(path, steps):
    """torch_npu's analysis.db: its StepTraceTime table (µs), rows as given."""
    c = sqlite3.connect(path)
    c.execute("CREATE TABLE StepTraceTime (deviceId INTEGER, step TEXT, computing NUMERIC, "
              "communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, "
              "stage NUMERIC, bubble NUMERIC, communication_not_overlapped_and_exclude_receive NUMERIC, "
              "preparing NUMERIC)")
    c.executemany("INSERT INTO StepTraceTime VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", steps)
    c.commit()
    c.close()


def step_rows(folder):
    with open(os.path.join(folder, "step_trace_time.csv"), newline="") as f:
        lines = list(csv.reader(f))
    assert ",".join(lines[0]) == STEP_HEADER, lines[0]
    return lines[1:]


def case_analysis_db_joins_its_rank():
    # torch_npu writes analysis.db beside ascend_pytorch_profiler_<rank>.db; loaded from
    # that folder (no rank root around it) or from the rank's *_ascend_pt folder, it is
    # that rank's step trace, and export summary writes it as step_trace_time.csv
    for how in ("loose", "rank_root"):
        top = os.path.join(OUT, "an_" + how)
        folder = os.path.join(top, "r3_ascend_pt", "ASCEND_PROFILER_OUTPUT") if how == "rank_root" else top
        os.makedirs(folder, exist_ok=True)
        make_db(os.path.join(folder, "ascend_pytorch_profiler_3.db"))
        make_analysis_db(os.path.join(folder, "analysis.db"), STEPS)
        db = os.path.join(OUT, "an_%s.db" % how)
        r = run("export", "db", "-q", "-dir", top, "-o", db)
        assert r.rc == 0, r
        with sqlite3.connect(db) as c:
            ranks = c.execute("SELECT DISTINCT rankId FROM TB_SOURCE WHERE rankId IS NOT NULL").fetchall()
            task_rank = c.execute("SELECT DISTINCT rankId FROM TASK").fetchall()
            steps = c.execute("SELECT rankId, deviceId, step, computing, communicationNotOverlapped, overlapped,"
                              " communication, free, stage, bubble, communicationNotOverlappedExcludeReceive,"
                              " preparing FROM TB_STEP_TRACE_TIME ORDER BY step").fetchall()
        assert len(ranks) == 1 and task_rank == ranks, (how, ranks, task_rank)
        assert [s[1:] for s in steps] == STEPS and {s[0] for s in steps} == {ranks[0][0]}, (how, steps)
        out = os.path.join(OUT, "an_%s_out" % how)
        r = run("export", "summary", "-q", "-dir", top, "-o", out)
        assert r.rc == 0, r
        d = os.path.join(out, "r3_ascend_pt", "ASCEND_PROFILER_OUTPUT") if how == "rank_root" \
            else os.path.join(out, "ASCEND_PROFILER_OUTPUT")
        same_rows(step_rows(d), [[str(x) if isinstance(x, str) else x for x in s] for s in STEPS], how)
        with open(os.path.join(d, "README.txt")) as f:
            assert "analysis.db: its StepTraceTime is step_trace_time.csv here" in f.read()


def case_analysis_db_formats_and_window():
    # the analysis.db's step trace is the rank's step_trace_time in every format and in a
    # window of steps (its rows of the window's steps), also for a rank whose DB has no steps
    import json
    import zipfile
    top = os.path.join(OUT, "an_fmt")
    os.makedirs(top, exist_ok=True)
    make_db(os.path.join(top, "ascend_pytorch_profiler_3.db"))
    make_analysis_db(os.path.join(top, "analysis.db"), STEPS)
    want = [[str(x) if isinstance(x, str) else x for x in s] for s in STEPS]
    out = os.path.join(OUT, "an_fmt_json")
    r = run("export", "summary", "-q", "-dir", top, "-o", out, "--format", "json")
    assert r.rc == 0, r
    with open(os.path.join(out, "ASCEND_PROFILER_OUTPUT", "step_trace_time.json")) as f:
        rows = json.load(f)
    same_rows([[str(v) if k in ("Device_id", "Step") else v for k, v in row.items()] for row in rows], want, "json")
    assert ",".join(rows[0]) == STEP_HEADER, list(rows[0])
    out = os.path.join(OUT, "an_fmt_xlsx")
    r = run("export", "summary", "-q", "-dir", top, "-o", out, "--format", "xlsx")
    assert r.rc == 0, r
    with zipfile.ZipFile(os.path.join(out, "ASCEND_PROFILER_OUTPUT", "tracebook.xlsx")) as z:
        book = z.read("xl/workbook.xml").decode()
        sheets = "".join(z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/sheet"))
    assert 'name="Step trace time as the profiler"' in book, book  # the report's title, cut to 31
    assert "<v>100.5</v>" in sheets and "<v>110</v>" in sheets and "<v>7.75</v>" in sheets, "xlsx step trace"
    for first, count, rows in (("2", "1", want[1:]), ("1", "2", want)):
        out = os.path.join(OUT, "an_fmt_w%s_%s" % (first, count))
        r = run("export", "summary", "-q", "-dir", top, "-o", out, "--model-id", "4294967295",
                "--iteration-id", first, "--iteration-count", count)
        assert r.rc == 0, r
        d = os.path.join(out, "ASCEND_PROFILER_OUTPUT")
        label = first if count == "1" else "%s_%d" % (first, int(first) + int(count) - 1)
        with open(os.path.join(d, "step_trace_time_%s.csv" % label), newline="") as f:
            lines = list(csv.reader(f))
        assert ",".join(lines[0]) == STEP_HEADER, lines[0]
        same_rows(lines[1:], rows, "window %s+%s" % (first, count))
    # a step the analysis.db does not hold: no rank has the window
    r = run("export", "summary", "-q", "-dir", top, "-o", os.path.join(OUT, "an_fmt_w9"), "--model-id",
            "4294967295", "--iteration-id", "9")
    assert r.rc == 2 and "no rank has the window (model 4294967295, iteration 9)" in r.err, r


def case_analysis_db_merge_and_window_readme():
    # --merge of two ranks, each an ascend_pytorch_profiler DB with its analysis.db: one
    # step_trace_time.csv of both ranks' steps as stored, each led by its Rank ID; in a window,
    # the window's steps of both, and the README names the windowed file the analysis.db gave
    top = os.path.join(OUT, "an_merge")
    steps4 = [(4, "1", 90.0, 21.0, 11.0, 32.0, 6.5, 0.0, 0.0, 21.0, 1.25),
              (4, "2", 95.5, 11.0, 13.5, 24.5, 8.0, 0.0, 0.0, 11.0, 2.5)]
    dirs = []
    for rank, steps in ((3, STEPS), (4, steps4)):
        folder = os.path.join(top, "r%d_ascend_pt" % rank, "ASCEND_PROFILER_OUTPUT")
        os.makedirs(folder, exist_ok=True)
        make_db(os.path.join(folder, "ascend_pytorch_profiler_%d.db" % rank))
        make_analysis_db(os.path.join(folder, "analysis.db"), steps)
        dirs += ["-dir", os.path.dirname(folder)]
    as_text = lambda rows: [[str(x) if isinstance(x, str) else x for x in s] for s in rows]
    for window, label, pick in (((), "", lambda rows: rows), (("--iteration-id", "2"), "_2", lambda rows: rows[1:])):
        out = os.path.join(OUT, "an_merge_out" + label)
        w = ("--model-id", "4294967295") + window if window else ()
        r = run("export", "summary", "-q", *dirs, "-o", out, "--merge", *w)
        assert r.rc == 0, r
        d = os.path.join(out, "ASCEND_PROFILER_OUTPUT")
        with open(os.path.join(d, "step_trace_time%s.csv" % label), newline="") as f:
            lines = list(csv.reader(f))
        assert ",".join(lines[0]) == "Rank ID," + STEP_HEADER, lines[0]
        # the load numbers the two ranks 0 and 1 (their devices 3 and 4)
        want = [[0] + x for x in as_text(pick(STEPS))] + [[1] + x for x in as_text(pick(steps4))]
        same_rows(lines[1:], want, "merged" + label)
        with open(os.path.join(d, "README.txt")) as f:
            text = f.read()
        for rank in (0, 1):
            assert "rank %d: analysis.db: its StepTraceTime is step_trace_time%s.csv here" % (rank, label) in text, text
    # one rank in a window: the README names the file with the window's label
    out = os.path.join(OUT, "an_window_readme")
    r = run("export", "summary", "-q", *dirs[:2], "-o", out, "--model-id", "4294967295", "--iteration-id", "2")
    assert r.rc == 0, r
    with open(os.path.join(out, "r3_ascend_pt", "ASCEND_PROFILER_OUTPUT", "README.txt")) as f:
        text = f.read()
    assert "  analysis.db: its StepTraceTime is step_trace_time_2.csv here (a DB is not written back)\n" in text, text


def case_public_analysis_db():
    # the public msprof_db folder holds an msprof DB and an analysis.db of another run
    # (devices 0-3): no torch_npu DB beside it, so the analysis.db is a rank of its own
    # (msprof-analyze pairs it only with ascend_pytorch_profiler_<rank>.db), written
    # in torch_npu's layout as step_trace_time.csv with the rows it stores
    src = os.path.join(os.path.dirname(public_db()), "analysis.db")
    folder = os.path.join(OUT, "pub_an")
    os.makedirs(folder, exist_ok=True)
    for f in ("msprof_0.db", "analysis.db"):
        with open(os.path.join(os.path.dirname(src), f), "rb") as i, open(os.path.join(folder, f), "wb") as o:
            o.write(i.read())
    out = os.path.join(OUT, "pub_an_out")
    r = run("export", "summary", "-q", "-dir", folder, "-o", out)
    assert r.rc == 0, r
    c = sqlite3.connect("file:%s?mode=ro&immutable=1" % src, uri=True)
    want = [[str(d), s if s is not None else ""] + list(v) for d, s, *v in c.execute(
        "SELECT deviceId, step, computing, communication_not_overlapped, overlapped, communication, free, stage,"
        " bubble, communication_not_overlapped_and_exclude_receive, preparing FROM StepTraceTime"
        " ORDER BY deviceId")]
    assert len(want) == 4, want
    same_rows(step_rows(os.path.join(out, "ASCEND_PROFILER_OUTPUT")), want, "public analysis.db")
    assert os.path.isdir(os.path.join(out, "mindstudio_profiler_output")), os.listdir(out)


if __name__ == "__main__":
    tbtest.fresh_dir(OUT)
    tbtest.use_cache(os.path.join(OUT, "cache"))
    suite = tbtest.Suite(work=OUT)
    suite.collect(globals())
    suite.main()
