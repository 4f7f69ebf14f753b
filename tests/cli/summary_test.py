#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# summary_test.py - `export summary`: msprof's and torch_npu's summaries,
# one file set per rank, in each rank's layout.
#
# The expected headers are read from the facts file formats.md (section 4),
# not from tracebook's code: every summary written must start with exactly
# that line. Also: one file set per rank, and a rank's files equal those of
# a run over that rank alone; values against the loaded DB (row counts, the
# Task Wait Time rule, ratios); windows give exact contents and names;
# writing into the input folder leaves the next load unchanged (the files
# are listed in tracebook_run.json); --no-clobber refuses and leaves the
# files as they were; a second run replaces them by rename, leaving no
# temporary; --merge writes every rank into one folder with its Rank ID;
# --clear removes the export's cache entry and nothing else. The public data (torch_npu ranks, an msprof DB) is used when
# present.
#
# usage: summary_test.py TRACEBOOK SAMPLES_DIR FORMATS_MD SHARED_DATA OUTDIR
# Prints one `ok`/`FAIL` line per case and a final `N passed, N failed`
# line; exits 0 when all pass, 1 otherwise.
import csv
import glob
import json
import os
import re
import shutil
import sqlite3
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, SAMPLES, FORMATS, SHARED, OUT = tbtest.args("TRACEBOOK SAMPLES_DIR FORMATS_MD SHARED_DATA OUTDIR", 5, 5)
if not os.path.exists(FORMATS):
    tbtest.skip("%s absent (the expected headers come from it)" % FORMATS)


def expected_headers(path):
    """The summary headers of formats.md section 4: {name: [columns]}."""
    text = open(path, encoding="utf-8").read()
    sec = text[text.index("## 4."):text.index("## 5.")]
    items, cur = [], None
    for line in sec.splitlines():
        if line.startswith("- "):
            cur = line[2:]
            items.append(cur)
        elif line.startswith("  ") and items:
            items[-1] += " " + line.strip()
    heads = {}
    for it in items:
        m = re.match(r"([a-z_]+)(\.csv)?(, [a-z_]+\.csv)?: (.*)", it)
        if not m:
            continue
        name, body = m.group(1), m.group(4)
        if body.startswith("as msprof"):
            continue  # torch_npu's copies of msprof's files keep msprof's header
        if name in heads:
            name = "torch_npu:" + name  # torch_npu's own variant (npu_module_mem.csv in MB)
        body = body.replace(", then, when task info exists,", ",")
        for cut in (", then ", " — ", " (older", " (maybe"):
            if cut in body:
                body = body[:body.index(cut)]
        heads[name] = [c.strip().rstrip(".") for c in body.split(", ")]
        if m.group(3):
            heads[m.group(3)[2:-4]] = heads[name]
    # kernel_details: op_summary renamed, Step Id first (the item's own words)
    kd = next(it for it in items if it.startswith("kernel_details.csv"))
    ren = dict(re.findall(r"([A-Za-z][A-Za-z ()]*?[A-Za-z)]) -> ([A-Za-z][A-Za-z ()]*?[A-Za-z)])(?=,| —)", kd))
    heads["kernel_details"] = ["Step Id"] + [ren.get(c, c) for c in heads["op_summary"]]
    return heads


HEADERS = expected_headers(FORMATS)
# the torch_npu op_statistic/api_statistic are "as msprof"
TORCH_NPU_FILES = ["kernel_details", "step_trace_time", "op_statistic", "api_statistic"]

# msprof's summaries of an msprof DB's sample and memory tables: their headers
# (msprof's docs; memory_record and operator_memory in msprof's KB variant, not
# torch_npu's of formats.md) are checked by msprof_db_summary_test.py
MSPROF_DB_FILES = {"msprof_tx", "hbm", "ddr", "llc_read_write", "hccs", "pcie", "memory_record", "operator_memory",
                   "os_runtime_statistic", "host_cpu_usage", "host_disk_usage", "host_network_usage",
                   "ai_core_utilization", "ai_vector_core_utilization", "nic", "roce", "ccu_mission"}

run = tbtest.Program(TB, code=0)


def fresh(name):
    return tbtest.fresh_dir(os.path.join(OUT, name))


def first_line(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.readline().rstrip("\r\n")


def rows(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def as_read(folder):
    """The files of folder that tracebook_run.json lists as written back as read."""
    listed = json.load(open(os.path.join(folder, "tracebook_run.json")))
    return listed.get("as_read", {}).get("files", [])


def check_headers(folder, stem_re, src=None):
    """Every CSV of folder whose summary name formats.md documents has its header
    (torch_npu's variant of a name in an ASCEND_PROFILER_OUTPUT folder); a
    file written back as read (src: the input's folder) has the input's header
    line, byte for byte."""
    torch_npu = os.path.basename(folder) == "ASCEND_PROFILER_OUTPUT"
    seen = []
    kept = as_read(folder) if torch_npu else []
    for p in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        m = re.fullmatch(stem_re, os.path.basename(p))
        assert m, "unexpected file name %s" % p
        name = m.group(1)
        if os.path.basename(p) in kept:
            assert src, "%s written as read, no input to compare with" % p
            with open(os.path.join(src, name + ".csv"), "rb") as f:
                want = f.readline()
            with open(p, "rb") as f:
                got = f.readline()
            assert got == want, "%s header\n  got  %r\n  want %r" % (p, got, want)
            seen.append(name)
            continue
        if not torch_npu and name in MSPROF_DB_FILES:
            seen.append(name)  # msprof_db_summary_test.py checks its header and rows
            continue
        assert name in HEADERS, "%s: no documented header for %s" % (p, name)
        got = first_line(p)
        want = ",".join(HEADERS.get("torch_npu:" + name, HEADERS[name]) if torch_npu else HEADERS[name])
        # op_summary / kernel_details: "Context ID, then PMU metric columns" when the data has them
        if name in ("op_summary", "kernel_details") and got.startswith(want + ","):
            got = want
        assert got == want, "%s header\n  got  %s\n  want %s" % (p, got, want)
        seen.append(name)
    return seen


TORCH_RE = r"([a-z_]+?)(?:_\d+(?:_\d+)?)?\.csv"
MSPROF_RE = r"([a-z_]+?)_\d{14}(?:_rank\d+)?(?:_\d+(?:_\d+)?)?\.csv"


def two_rank():
    d = fresh("two_rank")
    p = run("export", "summary", "-q", "-dir", os.path.join(SAMPLES, "torch_npu_2rank"), "-o", d)
    for r in (0, 1):
        folder = os.path.join(d, "rank%d_ascend_pt" % r, "ASCEND_PROFILER_OUTPUT")
        src = os.path.join(SAMPLES, "torch_npu_2rank", "rank%d_ascend_pt" % r, "ASCEND_PROFILER_OUTPUT")
        seen = check_headers(folder, TORCH_RE, src)
        assert sorted(seen) == sorted(TORCH_NPU_FILES), seen
        # the rank's own CSVs come back as read; the statistics it did not hold are computed
        assert as_read(folder) == ["kernel_details.csv", "step_trace_time.csv"], as_read(folder)
        for n in as_read(folder):
            assert open(os.path.join(folder, n), "rb").read() == open(os.path.join(src, n), "rb").read(), n
        assert os.path.exists(os.path.join(folder, "README.txt"))
        listed = json.load(open(os.path.join(folder, "tracebook_run.json")))
        files = [f for rep in listed["reports"] for f in rep["files"]] + listed["readme"]["files"] + as_read(folder)
        assert sorted(files) == sorted([n + ".csv" for n in TORCH_NPU_FILES] + ["README.txt"]), files
        readme = open(os.path.join(folder, "README.txt")).read()
        for f in files:
            assert f == "README.txt" or f in readme, f
        # the timeline the rank holds is not written here, and the README says why
        assert "trace_view.json: the timeline: `tracebook export timeline` writes it" in readme, readme
    # the files printed are the files written
    printed = sorted(p.stdout.split())
    assert len(printed) == 2 * 6 and all(os.path.exists(x) for x in printed), printed
    return d


def rank_alone_equals_rank_of_two():
    d = two_rank()
    for r in (0, 1):
        alone = fresh("alone%d" % r)
        run("export", "summary", "-q", "-dir", os.path.join(SAMPLES, "torch_npu_2rank", "rank%d_ascend_pt" % r),
            "-o", alone)
        for n in TORCH_NPU_FILES:
            a = open(os.path.join(alone, "rank%d_ascend_pt" % r, "ASCEND_PROFILER_OUTPUT", n + ".csv"), "rb").read()
            b = open(os.path.join(d, "rank%d_ascend_pt" % r, "ASCEND_PROFILER_OUTPUT", n + ".csv"), "rb").read()
            assert a == b, "rank %d %s differs from the run over that rank alone" % (r, n)
            assert b.count(b"\n") > 1, "rank %d %s has no rows" % (r, n)


def values_match_db():
    d = fresh("values")
    db = os.path.join(d, "t.db")
    run("export", "db", "-q", "-dir", os.path.join(SAMPLES, "torch_npu_2rank"), "-o", db)
    # a DB without the ranks' own text of their files (TB_SOURCE_CSV, as an older DB): every file is
    # computed from the tables
    con = sqlite3.connect(db)
    con.execute("DELETE FROM TB_SOURCE_CSV")
    con.commit()
    run("export", "summary", "-q", "-dir", db, "-o", d, "--format", "csv,json")
    assert as_read(os.path.join(d, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")) == []
    # a DB tracebook wrote places each rank by the input it came from
    for r in (0, 1):
        folder = os.path.join(d, "rank%d_ascend_pt" % r, "ASCEND_PROFILER_OUTPUT")
        kd = rows(os.path.join(folder, "kernel_details.csv"))
        n_tasks = con.execute("SELECT count(*) FROM device_task WHERE rankId = ? AND class <> 'communication'",
                              (r,)).fetchone()[0]
        n_ops = con.execute("SELECT count(*) FROM comm_op WHERE rankId = ?", (r,)).fetchone()[0]
        assert len(kd) == n_tasks + n_ops, (len(kd), n_tasks, n_ops)
        first = con.execute("SELECT min(startNs) FROM TASK WHERE rankId = ?", (r,)).fetchone()[0]
        assert kd[0]["Start Time(us)"] == "%d.%03d" % (first // 1000, first % 1000), kd[0]
        # Wait Time: max(0, start - (previous start + previous duration)) per device, in file order
        prev = {}
        for row in kd:
            s, du, w = (Decimal(row[k]) for k in ("Start Time(us)", "Duration(us)", "Wait Time(us)"))
            dev = row["Device_id"]
            want = max(Decimal(0), s - prev[dev]) if dev in prev else Decimal(0)
            assert w == want, (row, want)
            prev[dev] = s + du
        starts = [(r_["Device_id"], Decimal(r_["Start Time(us)"])) for r_ in kd]
        assert starts == sorted(starts, key=lambda x: (int(x[0]), x[1])), "not sorted by device then start"
        st = rows(os.path.join(folder, "op_statistic.csv"))
        assert abs(sum(float(x["Ratio(%)"]) for x in st) - 100.0) < 0.01
        n_k = con.execute("SELECT count(*) FROM kernel WHERE rankId = ?", (r,)).fetchone()[0]
        assert sum(int(x["Count"]) for x in st) == n_k
        totals = [float(x["Total Time(us)"]) for x in st]
        assert totals == sorted(totals, reverse=True), "op_statistic not sorted by total"
        api = rows(os.path.join(folder, "api_statistic.csv"))
        n_api = con.execute("SELECT count(*) FROM api WHERE rankId = ? AND source = 'CANN'", (r,)).fetchone()[0]
        assert sum(int(x["Count"]) for x in api) == n_api
        for x in api:
            assert float(x["Min(us)"]) <= float(x["Avg(us)"]) <= float(x["Max(us)"]), x
            if int(x["Count"]) == 1:
                assert float(x["Variance"]) == 0.0, x


def raw_rows(path):
    """The rows of a CSV as lists of fields as written (a trailing TAB kept), header first."""
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def window_names_and_contents():
    """A window of steps: the rank's own kernel_details and step_trace_time come back as read, the
    header unchanged and only the rows whose Step Id / Step is a step of the window; the statistics are
    computed from the window's tables. With --format csv,json every file is computed: kernel_details'
    rows are those of the whole run's computed file in the window's steps."""
    d = fresh("window")
    src = os.path.join(SAMPLES, "torch_npu_2rank")
    p = run("export", "summary", "-dir", src, "-o", d, "--model-id", "4294967295", "--iteration-id", "3")
    # rank 0 has steps 8 and 9 only: no files for it, a note says so
    assert not os.path.exists(os.path.join(d, "rank0_ascend_pt")), os.listdir(d)
    assert "rank 0: not in the window" in p.stderr, p.stderr
    folder = os.path.join(d, "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    names = sorted(os.listdir(folder))
    assert names == sorted([n + "_3.csv" for n in TORCH_NPU_FILES] + ["README.txt", "tracebook_run.json"]), names
    own = os.path.join(src, "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    assert sorted(check_headers(folder, TORCH_RE, own)) == sorted(TORCH_NPU_FILES)
    assert sorted(as_read(folder)) == ["kernel_details_3.csv", "step_trace_time_3.csv"], as_read(folder)
    for name, col in (("kernel_details", "Step Id"), ("step_trace_time", "Step")):
        want = raw_rows(os.path.join(own, name + ".csv"))
        at = want[0].index(col)
        want = [want[0]] + [x for x in want[1:] if x[at] == "3"]
        got = raw_rows(os.path.join(folder, name + "_3.csv"))
        assert got == want and len(got) > 1, (name, len(got), len(want))
    # two steps of rank 0: label 8_9, both steps and nothing else, as read
    d2 = fresh("window2")
    run("export", "summary", "-q", "-dir", src, "-o", d2, "--model-id", "4294967295", "--iteration-id", "8",
        "--iteration-count", "2")
    folder = os.path.join(d2, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    kd_in = raw_rows(os.path.join(src, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "kernel_details.csv"))
    assert {x[0] for x in kd_in[1:]} == {"8", "9"}
    assert raw_rows(os.path.join(folder, "kernel_details_8_9.csv")) == kd_in
    # step 9 alone: kernel_details' step-9 rows, step_trace_time (which holds step 8 only) its header alone
    d4 = fresh("window9")
    run("export", "summary", "-q", "-dir", src, "-o", d4, "--model-id", "4294967295", "--iteration-id", "9")
    folder = os.path.join(d4, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    assert raw_rows(os.path.join(folder, "kernel_details_9.csv")) == [kd_in[0]] + [x for x in kd_in if x[0] == "9"]
    stt_in = raw_rows(os.path.join(src, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"))
    assert raw_rows(os.path.join(folder, "step_trace_time_9.csv")) == stt_in[:1], stt_in
    # JSON asked beside CSV: the window's rows as read in both; step 9 alone in JSON
    d5 = fresh("window_json")
    run("export", "summary", "-q", "-dir", src, "-o", d5, "--model-id", "4294967295", "--iteration-id", "9",
        "--format", "csv,json")
    folder = os.path.join(d5, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    assert sorted(as_read(folder)) == ["kernel_details_9.csv", "kernel_details_9.json", "step_trace_time_9.csv",
                                       "step_trace_time_9.json"], as_read(folder)
    want = [kd_in[0]] + [x for x in kd_in if x[0] == "9"]
    assert raw_rows(os.path.join(folder, "kernel_details_9.csv")) == want
    json_as_read(os.path.join(folder, "kernel_details_9.json"), want, "kernel_details_9.json")
    assert json.load(open(os.path.join(folder, "step_trace_time_9.json"))) == []


def msprof_layout_into_input_folder():
    """An msprof collection: PROF_*/mindstudio_profiler_output/<name>_<timestamp>.csv, written into the
    input itself; loading the folder again reads exactly what it read before."""
    d = fresh("prof")
    prof = os.path.join(d, "PROF_000001_20240101000000000_TEST")
    os.makedirs(os.path.join(prof, "mindstudio_profiler_output"))
    shutil.copy(os.path.join(SAMPLES, "ascend_small", "trace_view.json"),
                os.path.join(prof, "mindstudio_profiler_output", "msprof_20240101000000.json"))
    before = os.path.join(d, "before.db")
    run("export", "db", "-q", "-dir", prof, "-o", before)
    run("export", "summary", "-q", "-dir", prof)
    folder = os.path.join(prof, "mindstudio_profiler_output")
    seen = check_headers(folder, MSPROF_RE)
    assert sorted(seen) == sorted(["op_summary", "op_statistic", "api_statistic", "task_time",
                                   "communication_statistic"]), seen
    # op_summary: the device tasks (small communication tasks left out) and the communication ops;
    # task_time: every device task, the same starts
    con = sqlite3.connect(before)
    op = rows(glob.glob(os.path.join(folder, "op_summary_*.csv"))[0])
    n_tasks = con.execute("SELECT count(*) FROM device_task WHERE class <> 'communication'").fetchone()[0]
    n_ops = con.execute("SELECT count(*) FROM comm_op").fetchone()[0]
    assert len(op) == n_tasks + n_ops and n_ops > 0, (len(op), n_tasks, n_ops)
    comm = [x for x in op if x["Task Type"] == "COMMUNICATION"]
    assert len(comm) == n_ops and all(x["Task ID"] == "N/A" and x["Stream ID"] == "N/A" for x in comm)
    tt = rows(glob.glob(os.path.join(folder, "task_time_*.csv"))[0])
    assert len(tt) == con.execute("SELECT count(*) FROM TASK").fetchone()[0]
    assert [x["task_start(us)"] for x in tt] == sorted((x["task_start(us)"] for x in tt), key=Decimal)
    after = os.path.join(d, "after.db")
    run("export", "db", "-q", "-dir", prof, "-o", after)
    def counts(db):
        c = sqlite3.connect(db)
        tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: c.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0] for t in tables
                if t not in ("TB_SOURCE", "TB_LOAD_COUNT", "TB_WARNING")}
    a, b = counts(before), counts(after)
    assert a == b, {t: (a[t], b.get(t)) for t in a if a[t] != b.get(t)}
    read = sqlite3.connect(after).execute("SELECT count(*) FROM TB_SOURCE WHERE status <> 'ignored'").fetchone()[0] \
        if "status" in [r[1] for r in sqlite3.connect(after).execute("PRAGMA table_info(TB_SOURCE)")] else None
    assert read in (None, 1), read
    return prof


def no_clobber_and_atomic_replace():
    prof = msprof_layout_into_input_folder()
    folder = os.path.join(prof, "mindstudio_profiler_output")
    op = [f for f in os.listdir(folder) if f.startswith("op_summary_")][0]
    path = os.path.join(folder, op)
    before = open(path, "rb").read()
    ino = os.stat(path).st_ino
    p = run("export", "summary", "-q", "-dir", prof, "--no-clobber", code=2)
    assert "exists already (--no-clobber)" in p.stderr, p.stderr
    assert open(path, "rb").read() == before and os.stat(path).st_ino == ino
    listing = sorted(os.listdir(folder))
    # replaced: a new file (rename), same bytes, nothing else left behind
    run("export", "summary", "-q", "-dir", prof)
    assert os.stat(path).st_ino != ino, "not replaced by a rename"
    assert open(path, "rb").read() == before
    assert sorted(os.listdir(folder)) == listing, (listing, sorted(os.listdir(folder)))
    meta = json.load(open(os.path.join(folder, "tracebook_run.json")))
    assert "earlier_runs" not in meta, "a run whose files were all replaced is still listed"


def json_format():
    d = fresh("json")
    p = run("export", "summary", "-dir", os.path.join(SAMPLES, "torch_npu_2rank", "rank1_ascend_pt"), "-o", d,
            "--format", "csv,json")
    # a summary without data: skipped with a note, and said in the listing
    assert "report 'memory_record' skipped: the data has no MEMORY_RECORD rows" in p.stderr, p.stderr
    folder = os.path.join(d, "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    meta = json.load(open(os.path.join(folder, "tracebook_run.json")))
    skipped = {r["id"]: r.get("skipped") for r in meta["reports"]}
    assert skipped["memory_record"] == "the data has no MEMORY_RECORD rows" and "kernel_details" not in skipped
    own = os.path.join(SAMPLES, "torch_npu_2rank", "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    # the rank's own files as read in JSON too; the computed ones under their documented header
    assert sorted(as_read(folder)) == sorted(n + e for n in ("kernel_details", "step_trace_time")
                                             for e in (".csv", ".json")), as_read(folder)
    for n in TORCH_NPU_FILES:
        arr = json.load(open(os.path.join(folder, n + ".json")))
        if os.path.exists(os.path.join(own, n + ".csv")):
            json_as_read(os.path.join(folder, n + ".json"), raw_rows(os.path.join(own, n + ".csv")), n + ".json")
            continue
        assert isinstance(arr, list) and arr and list(arr[0].keys()) == HEADERS[n], (n, list(arr[0].keys()))
        assert len(arr) == len(rows(os.path.join(folder, n + ".csv")))


def xlsx_format():
    d = fresh("xlsx")
    src = os.path.join(SAMPLES, "torch_npu_2rank")
    run("export", "summary", "-q", "-dir", src, "-o", d, "--format", "xlsx")
    for r in (0, 1):
        folder = os.path.join(d, "rank%d_ascend_pt" % r, "ASCEND_PROFILER_OUTPUT")
        assert sorted(os.listdir(folder)) == ["README.txt", "tracebook.xlsx", "tracebook_run.json"], os.listdir(folder)
    p = run("export", "summary", "-q", "-dir", src, "-o", d, "--format", "xlsx", "--no-clobber", code=2)
    assert "tracebook.xlsx: exists already (--no-clobber)" in p.stderr, p.stderr


def public_data():
    base = os.path.join(SHARED, "ascend")
    ins = [os.path.join(base, "torch_npu_rank0"), os.path.join(base, "torch_npu_rank1")]
    if not all(os.path.isdir(x) for x in ins):
        raise tbtest.Skip("%s absent" % base)
    d = fresh("public")
    run("export", "summary", "-q", "-dir", ins[0], "-o", d)
    folder = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
    seen = check_headers(folder, r"([a-z_]+?)\.csv", os.path.join(ins[0], "ASCEND_PROFILER_OUTPUT"))
    assert sorted(seen) == sorted(["kernel_details", "operator_details", "step_trace_time", "memory_record",
                                   "operator_memory", "npu_module_mem", "op_statistic"]), seen
    # torch_npu's communication.json and communication_matrix.json: the input's, key order and
    # Total Op Info included, every number equal (times kept to the ns)
    for name in ("communication.json", "communication_matrix.json"):
        want = json.load(open(os.path.join(ins[0], "ASCEND_PROFILER_OUTPUT", name)))
        got = json.load(open(os.path.join(folder, name)))
        same_json(got, want, name)
    listing = json.load(open(os.path.join(folder, "tracebook_run.json")))
    assert listing["communication"]["files"] == ["communication.json", "communication_matrix.json"], listing
    # rows written back equal the rows of the input's own files
    src = os.path.join(ins[0], "ASCEND_PROFILER_OUTPUT")
    for n, key in (("operator_details", "Name"), ("memory_record", "Timestamp(us)"), ("operator_memory", "Name")):
        a, b = rows(os.path.join(src, n + ".csv")), rows(os.path.join(folder, n + ".csv"))
        num = (lambda v: Decimal(v.strip())) if key.endswith("(us)") else (lambda v: v)
        assert [num(x[key]) for x in a] == [num(x[key]) for x in b], n
    mr_in, mr_out = rows(os.path.join(src, "memory_record.csv")), rows(os.path.join(folder, "memory_record.csv"))
    assert [Decimal(x["Total Reserved(MB)"]) for x in mr_in] == [Decimal(x["Total Reserved(MB)"]) for x in mr_out]
    # kernel_details: the input's PMU metric columns after Context ID, named and valued as the input
    kd_in, kd_out = rows(os.path.join(src, "kernel_details.csv")), rows(os.path.join(folder, "kernel_details.csv"))
    head_in = open(os.path.join(src, "kernel_details.csv"), encoding="utf-8-sig").readline().rstrip("\r\n").split(",")
    pmu = head_in[head_in.index("Context ID") + 1:]
    assert len(pmu) == 12, pmu
    head_out = first_line(os.path.join(folder, "kernel_details.csv")).split(",")
    assert head_out[head_out.index("Context ID") + 1:] == pmu, head_out
    def pmu_of(rs):
        out = {}
        for x in rs:
            if x["Accelerator Core"] in ("HCCL", "COMMUNICATION") or None in x.values():
                continue  # a row short of fields is skipped by the load (with a warning)
            out[(x["Name"], Decimal(x["Start Time(us)"].strip()))] = [x[m] if x[m] == "N/A" else Decimal(x[m]) for m in pmu]
        return out
    a, b = pmu_of(kd_in), pmu_of(kd_out)
    assert a == b and len(a) >= 10, (len(a), len(b))
    assert all(x[m] == "N/A" for x in kd_out if x["Accelerator Core"] == "COMMUNICATION" for m in pmu)
    # msprof's npu_module_mem (KB) from torch_npu's (MB): the same samples, x 1024
    d2 = fresh("public_module_mem")
    run("report", "-q", "-dir", ins[0], "--spec", "builtin:npu_module_mem", "-o", d2)
    check_headers(d2, r"(npu_module_mem)\.csv")
    mm_in, mm_out = rows(os.path.join(src, "npu_module_mem.csv")), rows(os.path.join(d2, "npu_module_mem.csv"))
    assert len(mm_in) == len(mm_out) and mm_out
    got = sorted((x["Component"], Decimal(x["Timestamp(us)"]), Decimal(x["Total Reserved(KB)"])) for x in mm_out)
    want = sorted((x["Component"], Decimal(x["Timestamp(us)"].strip()), Decimal(x["Total Reserved(MB)"].strip()) * 1024)
                  for x in mm_in)
    assert got == want, (got[:3], want[:3])
    # torch_npu's own (MB) in its folder: the input's samples as they were
    mm_tn = rows(os.path.join(folder, "npu_module_mem.csv"))
    got = sorted((x["Component"], Decimal(x["Timestamp(us)"]), Decimal(x["Total Reserved(MB)"])) for x in mm_tn)
    want = sorted((x["Component"], Decimal(x["Timestamp(us)"].strip()), Decimal(x["Total Reserved(MB)"].strip()))
                  for x in mm_in)
    assert got == want, (got[:3], want[:3])
    # two ranks at once: each folder as for its rank alone
    d3 = fresh("public2")
    run("export", "summary", "-q", "-dir", ins[0], "-dir", ins[1], "-o", d3)
    folders = glob.glob(os.path.join(d3, "**", "ASCEND_PROFILER_OUTPUT"), recursive=True)
    assert folders, os.listdir(d3)
    for f in folders:
        assert "kernel_details" in " ".join(os.listdir(f))
        for r in (0, 1):
            kept = [x for x in as_read(f) if x.endswith("_rank%d.csv" % r)]
            assert "kernel_details_rank%d.csv" % r in kept, kept
    db = os.path.join(SHARED, "ascend", "msprof_db", "msprof_0.db")
    if os.path.exists(db):
        d = fresh("public_db")
        run("export", "summary", "-q", "-dir", db, "-o", d)
        folder = os.path.join(d, "mindstudio_profiler_output")
        seen = check_headers(folder, MSPROF_RE)
        assert "op_summary" in seen and "task_time" in seen, seen


def clear_removes_only_the_cache_entry():
    """--clear: the cached DB of the export (and its lock) goes, the outputs stay;
    a DB tracebook wrote given as the input is kept."""
    d = fresh("clear")
    tb = tbtest.Program(TB, env={"XDG_CACHE_HOME": os.path.join(d, "cache")}, code=0)
    cache = os.path.join(d, "cache", "tracebook")
    src = os.path.join(SAMPLES, "torch_npu_2rank")

    tb("export", "summary", "-q", "-dir", src, "-o", os.path.join(d, "keep"))
    assert [f for f in os.listdir(cache) if f.endswith(".db")], "no cache entry without --clear"
    p = tb("export", "summary", "-dir", src, "-o", os.path.join(d, "out"), "--clear")
    assert "--clear: removed " + cache in p.stderr, p.stderr
    assert os.listdir(cache) == [], os.listdir(cache)
    assert len(p.stdout.split()) == 12 and all(os.path.exists(x) for x in p.stdout.split()), p.stdout
    tb("export", "timeline", "-q", "-dir", src, "-o", os.path.join(d, "tl"), "--clear")
    assert os.listdir(cache) == [] and glob.glob(os.path.join(d, "tl", "*.json")), os.listdir(d)
    db = os.path.join(d, "own.db")
    tb("export", "db", "-q", "-dir", src, "-o", db)
    before = open(db, "rb").read()
    p = tb("export", "summary", "-dir", db, "-o", os.path.join(d, "fromdb"), "--clear")
    assert "the input DB is kept" in p.stderr, p.stderr
    assert open(db, "rb").read() == before


def merge_one_folder():
    """--merge: one folder for every rank; each file's rows are the per-rank
    files' rows, each with its Rank ID; msprof's layout when a rank has it."""
    per = two_rank()
    d = fresh("merge")
    p = run("export", "summary", "-q", "-dir", os.path.join(SAMPLES, "torch_npu_2rank"), "--merge", "-o", d)
    folder = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
    assert sorted(os.listdir(d)) == ["ASCEND_PROFILER_OUTPUT"], os.listdir(d)
    printed = p.stdout.split()
    assert all(x.startswith(folder + "/") and os.path.exists(x) for x in printed), printed
    for name in ("kernel_details.csv", "op_statistic.csv", "step_trace_time.csv"):
        merged = rows(os.path.join(folder, name))
        assert list(merged[0])[0] == "Rank ID", list(merged[0])
        for r in (0, 1):
            alone = rows(os.path.join(per, "rank%d_ascend_pt" % r, "ASCEND_PROFILER_OUTPUT", name))
            mine = [{k: v for k, v in x.items() if k != "Rank ID"} for x in merged if x["Rank ID"] == str(r)]
            key = lambda x: sorted(x.items())
            assert sorted(mine, key=key) == sorted(alone, key=key), (name, r, len(mine), len(alone))
    readme = open(os.path.join(folder, "README.txt")).read()
    assert "of ranks 0, 1" in readme and "merged (--merge)" in readme, readme
    p = run("export", "summary", "-q", "-dir", os.path.join(SAMPLES, "torch_npu_2rank"), "--merge", code=2)
    assert "--merge needs -o DIR" in p.stderr, p.stderr
    # two PROF_XXX of one device: msprof's layout, one set of files
    src = fresh("merge_prof")
    for name in ("PROF_000001_a", "PROF_000002_b"):
        shutil.copytree(os.path.join(SAMPLES, "ascend_small"), os.path.join(src, name))
    out = os.path.join(src, "out")
    run("export", "summary", "-q", "-dir", os.path.join(src, "PROF_000001_a"), "-dir",
        os.path.join(src, "PROF_000002_b"), "--merge", "-o", out)
    folder = os.path.join(out, "mindstudio_profiler_output")
    ops = [f for f in os.listdir(folder) if f.startswith("op_summary_")]
    assert len(ops) == 1 and re.fullmatch(r"op_summary_\d{14}\.csv", ops[0]), os.listdir(folder)
    got = rows(os.path.join(folder, ops[0]))
    assert sorted({x["Rank ID"] for x in got}) == ["0", "1"], sorted({x["Rank ID"] for x in got})
    n0 = sum(1 for x in got if x["Rank ID"] == "0")
    assert n0 * 2 == len(got) and n0 > 0, (n0, len(got))


def same_json(got, want, where):
    """Equal JSON, keys in the same order; numbers within 1 ns of a ms time (1e-6) relatively."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), (where, list(got)[:5], list(want)[:5])
        for k in want:
            same_json(got[k], want[k], where + "/" + k)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (where, got, want)
        for i, (a, b) in enumerate(zip(got, want)):
            same_json(a, b, "%s[%d]" % (where, i))
    elif isinstance(want, (int, float)) and not isinstance(want, bool):
        assert isinstance(got, (int, float)) and abs(got - want) <= 1e-6 * max(1, abs(want)), (where, got, want)
    else:
        assert got == want, (where, got, want)


def old_timeline_step_trace():
    """The real torch_npu timeline of Jan 2024 (one ProfilerStep, the old decimal pid of Ascend
    Hardware, HostToDevice flows): step_trace_time gives its step, and its Computing and Free
    agree with the timeline's own Overlap Analysis lanes (summed here from the JSON)."""
    src = os.path.join(SHARED, "ascend", "torch_npu_timeline")
    if not os.path.isdir(src):
        raise tbtest.Skip("%s absent" % src)
    events = json.load(open(os.path.join(src, "trace_view.json")))
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    lanes = {}
    for e in events:
        if e.get("ph") == "X" and names.get(e["pid"]) == "Overlap Analysis":
            lanes[e["name"]] = lanes.get(e["name"], Decimal(0)) + Decimal(str(e["dur"]))
    d = fresh("old_timeline")
    run("report", "-q", "-dir", src, "--spec", "builtin:step_trace_time", "-o", d)
    st = rows(os.path.join(d, "step_trace_time.csv"))
    assert [x["Step"] for x in st] == ["1"], st
    for col in ("Computing", "Free"):
        got, want = Decimal(st[0][col]), lanes[col]
        assert abs(got - want) <= want * Decimal("0.005"), (col, got, want)


def same_row(got, want, where):
    """Equal rows by value: a field that is a number (a trailing TAB stripped) within 0.0005, else the same text."""
    assert len(got) == len(want), (where, got, want)
    for g, w in zip(got, want):
        try:
            gd, wd = Decimal(g.strip()), Decimal(w.strip())
        except ArithmeticError:
            assert g == w, (where, g, w)
            continue
        assert abs(gd - wd) <= Decimal("0.0005"), (where, g, w)


def json_as_read(path, want, where):
    """A JSON file written as read equals the CSV rows want (header first): keyed by the header's fields,
    a number where the field is one (its value as written, within 0.0005), else the field's text."""
    with open(path, encoding="utf-8") as f:
        arr = json.load(f, parse_float=Decimal)
    head = [h.lstrip("\ufeff") for h in want[0]]
    assert len(arr) == len(want) - 1, (where, len(arr), len(want) - 1)
    for i, (obj, w) in enumerate(zip(arr, want[1:])):
        assert list(obj.keys()) == head, (where, list(obj.keys()), head)
        for k, f in zip(head, w):
            v = obj[k]
            if isinstance(v, (int, Decimal)):
                assert abs(Decimal(f.strip()) - Decimal(v)) <= Decimal("0.0005"), (where, i, k, v, f)
            else:
                assert v == f and not re.fullmatch(r"\s*-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?\s*", f), (where, i, k, v, f)


def xlsx_sheets(path):
    """The sheets of a workbook tracebook wrote: {name: [[cell, ...], ...]}, a number cell as a float, an
    inline text cell as its text."""
    import xml.etree.ElementTree as ET
    import zipfile
    ns = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
    out = {}
    with zipfile.ZipFile(path) as z:
        names = [e.get("name") for e in ET.fromstring(z.read("xl/workbook.xml")).iter("{%s}sheet" % ns["m"])]
        for k, name in enumerate(names):
            table = []
            for row in ET.fromstring(z.read("xl/worksheets/sheet%d.xml" % (k + 1))).iter("{%s}row" % ns["m"]):
                cells = []
                for c in row.findall("m:c", ns):
                    col = 0
                    for ch in re.match(r"[A-Z]+", c.get("r")).group(0):
                        col = col * 26 + ord(ch) - 64
                    cells += [""] * (col - 1 - len(cells))
                    if c.get("t") == "inlineStr":
                        cells.append("".join(t.text or "" for t in c.iter("{%s}t" % ns["m"])))
                    else:
                        v = c.find("m:v", ns)
                        cells.append(float(v.text) if v is not None else "")
                table.append(cells)
            out[name] = table
    return out


def same_sheet(table, want, where):
    """A sheet written as read equals the CSV rows want (header first): the header's fields, then each
    field a number cell within 0.0005 of it, or (text, or a number of more digits than a cell keeps) its text."""
    assert [h.lstrip("\ufeff") for h in want[0]] == table[0], (where, table[0], want[0])
    assert len(table) == len(want), (where, len(table), len(want))
    for i, (g, w) in enumerate(zip(table[1:], want[1:])):
        g = g + [""] * (len(w) - len(g))
        for x, f in zip(g, w):
            if isinstance(x, float):
                assert abs(Decimal(f.strip()) - Decimal(repr(x))) <= Decimal("0.0005"), (where, i, x, f)
            else:
                assert x == f or x == f.strip(), (where, i, x, f)


def public_ranks_as_read():
    """Each public torch_npu rank: every CSV it holds comes back with the same header line, byte for
    byte, and the same rows by value (a row of the wrong width, left out by the load with a warning,
    excepted); the files are listed as written back as read."""
    base = os.path.join(SHARED, "ascend")
    for r in (0, 1):
        src = os.path.join(base, "torch_npu_rank%d" % r)
        if not os.path.isdir(src):
            raise tbtest.Skip("%s absent" % src)
        d = fresh("public_as_read%d" % r)
        p = run("export", "summary", "--rebuild", "-dir", src, "-o", d)
        folder = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
        own = sorted(f for f in os.listdir(os.path.join(src, "ASCEND_PROFILER_OUTPUT")) if f.endswith(".csv"))
        assert own and sorted(as_read(folder)) == own, (as_read(folder), own)
        for name in own:
            with open(os.path.join(src, "ASCEND_PROFILER_OUTPUT", name), "rb") as f:
                head_in = f.readline()
            with open(os.path.join(folder, name), "rb") as f:
                head_out = f.readline()
            assert head_in == head_out, (name, head_in, head_out)
            with open(os.path.join(src, "ASCEND_PROFILER_OUTPUT", name), encoding="utf-8", newline="") as f:
                want = list(csv.reader(f))
            with open(os.path.join(folder, name), encoding="utf-8", newline="") as f:
                got = list(csv.reader(f))
            width = len(want[0])
            bad = [i for i, x in enumerate(want) if len(x) != width]
            for i in bad:  # the load said so, naming the line
                assert "%s:%d: row has" % (name, i + 1) in p.stderr, (name, i, p.stderr)
            want = [x for x in want if len(x) == width]
            assert len(got) == len(want) > 1, (name, len(got), len(want))
            for i, (g, w) in enumerate(zip(got, want)):
                same_row(g, w, "%s row %d" % (name, i))
        # what the old computed kernel_details changed is kept: Step Id, HF32 Eligible, shapes in
        # literal quotes, HCCL as the core, Block Dim
        kd = rows(os.path.join(folder, "kernel_details.csv"))
        assert kd[0]["Step Id"] == "2" and "Block Dim" in kd[0] and "Device_id" not in kd[0], kd[0]
        assert any(x["Accelerator Core"] == "HCCL" for x in kd) and any(x["HF32 Eligible"] == "NO" for x in kd)
        assert any(x["Input Shapes"].startswith('"') for x in kd)


def files_not_written_listed():
    """Files a rank holds that tracebook does not read (l2_cache.csv, data_preprocess.csv) are named in the
    README with the reason; the ones it reads are written."""
    src = os.path.join(SHARED, "ascend", "torch_npu_rank1")
    if not os.path.isdir(src):
        raise tbtest.Skip("%s absent" % src)
    d = fresh("not_written")
    rank = os.path.join(d, "in", "r1_ascend_pt")
    shutil.copytree(src, rank)
    out_in = os.path.join(rank, "ASCEND_PROFILER_OUTPUT")
    with open(os.path.join(out_in, "l2_cache.csv"), "w") as f:
        f.write("Stream Id,Task Id,Hit Rate,Victim Rate,Op Name\n1,2,0.5,0.1,MatMul\n")
    with open(os.path.join(out_in, "data_preprocess.csv"), "w") as f:
        f.write("Timestamp(us),Duration(us)\n1,2\n")
    run("export", "summary", "-q", "-dir", rank, "-o", os.path.join(d, "out"))
    folder = os.path.join(d, "out", "r1_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    readme = open(os.path.join(folder, "README.txt")).read()
    tail = readme[readme.index("Files of the rank not written here:"):]
    for name in ("l2_cache.csv", "data_preprocess.csv"):
        assert "  %s: not a format tracebook reads" % name in tail, tail
    assert "static_op_mem.csv" in as_read(folder) and "static_op_mem.csv" not in tail, (as_read(folder), tail)


def formats_as_read():
    """Each public torch_npu rank's own files in every format: --format csv,json,xlsx writes each CSV it
    holds as read (the same header, the same rows by value), its JSON (keyed by the same header, numbers
    as written) and a sheet of the workbook (the same header, the same rows), all listed as read; the
    summaries it did not hold are computed. With --spec, a report that is one of the summaries
    unchanged gives the rank's own file as read; the others are computed."""
    for r in (0, 1):
        src = os.path.join(SHARED, "ascend", "torch_npu_rank%d" % r)
        if not os.path.isdir(src):
            raise tbtest.Skip("%s absent" % src)
        d = fresh("as_read_formats%d" % r)
        run("export", "summary", "-q", "-dir", src, "-o", d, "--format", "csv,json,xlsx")
        folder = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
        own_dir = os.path.join(src, "ASCEND_PROFILER_OUTPUT")
        own = sorted(f[:-4] for f in os.listdir(own_dir) if f.endswith(".csv"))
        assert sorted(as_read(folder)) == sorted(n + e for n in own for e in (".csv", ".json")), as_read(folder)
        sheets = xlsx_sheets(os.path.join(folder, "tracebook.xlsx"))
        titles = {"kernel_details": "Kernel details", "operator_details": "Operator details",
                  "step_trace_time": "Step trace time", "memory_record": "Memory record",
                  "operator_memory": "Operator memory", "npu_module_mem": "NPU memory per component (torch",
                  "static_op_mem": "static_op_mem"}
        for n in own:
            want = raw_rows(os.path.join(own_dir, n + ".csv"))
            width = len(want[0])
            want = [x for x in want if len(x) == width]  # a malformed row stays out, as in the CSV
            assert raw_rows(os.path.join(folder, n + ".csv")) == want, n
            json_as_read(os.path.join(folder, n + ".json"), want, n + ".json")
            same_sheet(sheets[titles[n]], want, n + " sheet")
        # the computed op_statistic beside them, in each format
        assert first_line(os.path.join(folder, "op_statistic.csv")).split(",") == HEADERS["op_statistic"]
        assert sheets["Operator statistics"][0] == HEADERS["op_statistic"], sheets["Operator statistics"][0]
    # --spec: a report that is torch_npu's summary unchanged (the built-in itself, or `use:` under an id of
    # its own) writes the rank's own file as read, named by the report; one that changes it (a limit) and
    # the summaries the rank did not hold are computed
    src = os.path.join(SHARED, "ascend", "torch_npu_rank1")
    own_kd = raw_rows(os.path.join(src, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv"))
    own_kd = [x for x in own_kd if len(x) == len(own_kd[0])]
    computed = HEADERS["kernel_details"]
    d = fresh("spec_builtin")
    run("export", "summary", "-q", "-dir", src, "-o", d, "--spec", "builtin:kernel_details")
    folder = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
    assert as_read(folder) == ["kernel_details.csv"] and sorted(os.listdir(folder)) == [
        "README.txt", "kernel_details.csv", "tracebook_run.json"], os.listdir(folder)
    assert raw_rows(os.path.join(folder, "kernel_details.csv")) == own_kd
    d = fresh("spec_use")
    spec = os.path.join(d, "spec.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nreports:\n  - use: kernel_details\n    id: kd\n"
                "  - use: kernel_details\n    id: kd_top\n    title: Top 3\n    limit: 3\n  - use: op_statistic\n"
                "  - use: kernel_details\n    id: kd2\n    title: Again\n")
    run("export", "summary", "-q", "-dir", src, "-o", os.path.join(d, "out"), "--spec", spec,
        "--format", "csv,json,xlsx")
    folder = os.path.join(d, "out", "ASCEND_PROFILER_OUTPUT")
    assert as_read(folder) == ["kd.csv", "kd.json", "kd2.csv", "kd2.json"], as_read(folder)
    assert raw_rows(os.path.join(folder, "kd.csv")) == own_kd
    json_as_read(os.path.join(folder, "kd.json"), own_kd, "kd.json")
    top = raw_rows(os.path.join(folder, "kd_top.csv"))
    assert top[0][:len(computed)] == computed and len(top) == 4, top[0]
    sheets = xlsx_sheets(os.path.join(folder, "tracebook.xlsx"))
    assert list(sheets) == ["About", "Kernel details", "Top 3", "Operator statistics", "Again"], list(sheets)
    same_sheet(sheets["Kernel details"], own_kd, "kd sheet")
    same_sheet(sheets["Again"], own_kd, "kd2 sheet")
    assert sheets["Top 3"][0][:len(computed)] == computed and len(sheets["Top 3"]) == 4


def rank_root_files_listed():
    """The README's files not written include those of the rank's root folder, beside
    ASCEND_PROFILER_OUTPUT/ (profiler_info_1.json, profiler_metadata.json), and the timeline, each with
    its reason; in a window, static_op_mem.csv (the graphs' static memory, no step column) is written
    whole as read, the same as without a window."""
    src = os.path.join(SHARED, "ascend", "torch_npu_rank1")
    meta = os.path.join(SHARED, "ascend", "misc", "profiler_metadata.json")
    if not os.path.isdir(src) or not os.path.isfile(meta):
        raise tbtest.Skip("%s absent" % src)
    d = fresh("root_files")
    rank = os.path.join(d, "in", "r1_ascend_pt")
    shutil.copytree(src, rank)
    shutil.copy(meta, rank)
    out_in = os.path.join(rank, "ASCEND_PROFILER_OUTPUT")
    timeline_of(os.path.join(out_in, "kernel_details.csv"), os.path.join(out_in, "trace_view.json"))
    run("export", "summary", "-q", "-dir", rank, "-o", os.path.join(d, "out"))
    readme = open(os.path.join(d, "out", "r1_ascend_pt", "ASCEND_PROFILER_OUTPUT", "README.txt")).read()
    tail = readme[readme.index("Files of the rank not written here:"):].splitlines()[1:]
    assert tail == [
        "  trace_view.json: the timeline: `tracebook export timeline` writes it",
        "  profiler_metadata.json: the parallel groups: read to map communication ranks to global ones, "
        "no summary holds them",
        "  profiler_info_1.json: the profiler's run information: its name gives the rank's id, no summary holds it",
    ], tail
    # a window: static_op_mem.csv (no step column, static: the same for any window) is written whole,
    # byte for byte, under the window's label, and the README lists it nowhere as not written
    d = fresh("root_files_window")
    rank = os.path.join(d, "in", "rank1_ascend_pt")
    shutil.copytree(os.path.join(SAMPLES, "torch_npu_2rank", "rank1_ascend_pt"), rank)
    own = os.path.join(src, "ASCEND_PROFILER_OUTPUT", "static_op_mem.csv")
    shutil.copy(own, os.path.join(rank, "ASCEND_PROFILER_OUTPUT"))
    run("export", "summary", "-q", "-dir", rank, "-o", os.path.join(d, "out"), "--model-id", "4294967295",
        "--iteration-id", "3")
    folder = os.path.join(d, "out", "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    with open(own, "rb") as f, open(os.path.join(folder, "static_op_mem_3.csv"), "rb") as g:
        want, got = f.read(), g.read()
    assert got == want and want.count(b"\n") > 2, (got[:300], want[:300])
    readme = open(os.path.join(folder, "README.txt")).read()
    assert "static_op_mem.csv:" not in readme, readme
    assert sorted(as_read(folder)) == ["kernel_details_3.csv", "static_op_mem_3.csv", "step_trace_time_3.csv"], \
        as_read(folder)


def timeline_of(kernel_csv, path):
    """A torch_npu timeline (Ascend Hardware layer, old decimal pid 800 as torch_npu wrote it) holding
    every device kernel of kernel_csv with its name, start and duration as the CSV gives them; like any
    timeline it names no kernel type. Returns {(name, start µs): Type} of the compute kernels whose
    row the load reads, and the same of those whose row it leaves out (a row of the wrong width)."""
    events = [{"name": "process_name", "pid": 800, "tid": 0, "ph": "M", "args": {"name": "Ascend Hardware"}},
              {"name": "process_labels", "pid": 800, "tid": 0, "ph": "M", "args": {"labels": "NPU"}}]
    want, derived = {}, {}
    with open(kernel_csv, encoding="utf-8", newline="") as f:
        table = list(csv.reader(f))
    for row in table[1:]:
        x = dict(zip(table[0], row))
        if x["Accelerator Core"] == "HCCL":
            continue
        start = x["Start Time(us)"].strip()
        stream = x["Stream ID"] if x["Stream ID"].isdigit() else "0"
        events.append({"name": x["Name"], "pid": 800, "tid": int(stream), "ts": start, "dur": x["Duration(us)"],
                       "ph": "X", "args": {"Model Id": 4294967295, "Task Type": x["Accelerator Core"],
                                           "Physic Stream Id": int(stream), "Task Id": 1}})
        # a row of the wrong width is left out by the load: its kernel keeps the name's type
        (want if len(row) == len(table[0]) else derived)[(x["Name"], Decimal(start))] = x["Type"]
    with open(path, "w") as f:
        json.dump(events, f)
    return want, derived


def public_kernel_types_from_csv():
    """A torch_npu rank with its timeline beside kernel_details.csv: the timeline gives the tasks, and
    every compute kernel's OP Type is the CSV's Type, not the one the name would give (DSAStatelessGenBitMask
    for StatelessDropOutGenMask/DSASTATELESSGENBITMASK, MemSet for atomic_memset-1_68_..., 0 for
    NonZero_MemSet); only a kernel whose CSV row the load left out is listed as derived, in the DB and
    in tracebook_run.json."""
    for r in (0, 1):
        src = os.path.join(SHARED, "ascend", "torch_npu_rank%d" % r)
        if not os.path.isdir(src):
            raise tbtest.Skip("%s absent" % src)
        d = fresh("kernel_types%d" % r)
        rank = os.path.join(d, "in", "r%d_ascend_pt" % r)
        shutil.copytree(src, rank)
        out_in = os.path.join(rank, "ASCEND_PROFILER_OUTPUT")
        want, left_out = timeline_of(os.path.join(out_in, "kernel_details.csv"),
                                     os.path.join(out_in, "trace_view.json"))
        db = os.path.join(d, "t.db")
        run("export", "db", "-q", "-dir", rank, "-o", db)
        con = sqlite3.connect(db)
        kinds = [k for (k,) in con.execute("SELECT kind FROM TB_SOURCE WHERE path LIKE '%trace_view.json'")]
        assert kinds and "timeline" in kinds[0], kinds  # the timeline gave the tasks
        got = {(n, Decimal(s) / 1000): t for n, s, t in con.execute(
            "SELECT n.value, t.startNs, ty.value FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId"
            " JOIN STRING_IDS n ON n.id = t.name LEFT JOIN STRING_IDS ty ON ty.id = c.opType")}
        assert con.execute("SELECT count(*) FROM TB_KERNEL_TYPE").fetchone()[0] == 0
        derived = con.execute("SELECT coalesce(sum(events), 0) FROM TB_LOAD_COUNT"
                              " WHERE dest = 'COMPUTE_TASK_INFO.opType from the name'").fetchone()[0]
        con.close()
        assert len(left_out) == (1 if r == 0 else 0), left_out  # rank 0's FlashAttentionScore row of 31 fields
        for k in left_out:
            assert got.pop(k) == k[0], k  # FlashAttentionScore: the name's type
        assert got == want, sorted(set(got.items()) ^ set(want.items()))
        assert derived == len(left_out), derived
        if r == 0:
            assert want[("StatelessDropOutGenMask/DSASTATELESSGENBITMASK", Decimal("1695115378729796.8"))] \
                == "DSAStatelessGenBitMask"
        out = os.path.join(d, "rep")
        run("report", "-q", "-dir", rank, "--spec", "builtin:op_statistic", "-o", out)
        listed = json.load(open(os.path.join(out, "tracebook_run.json")))
        listed = [x["kernels"] for x in listed["loading"]["derived_kernel_types"]]
        assert listed == ([1] if left_out else []), listed


suite = tbtest.Suite(work=OUT)
for fn in (old_timeline_step_trace, two_rank, rank_alone_equals_rank_of_two, values_match_db, window_names_and_contents,
           msprof_layout_into_input_folder, no_clobber_and_atomic_replace, json_format, xlsx_format, public_data,
           clear_removes_only_the_cache_entry, merge_one_folder, public_ranks_as_read, files_not_written_listed,
           public_kernel_types_from_csv, formats_as_read, rank_root_files_listed):
    suite.add(fn.__name__, fn)
suite.main()
