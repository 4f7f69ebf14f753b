#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# summary_as_read_test.py - `export summary` of torch_npu ranks writes each
# rank's own summary CSVs as read in a window of steps and with --merge: the
# memory files (memory_record, operator_memory, npu_module_mem), which carry
# no step, keep the rows whose time meets the rank's span of the window (the
# span read from the window itself, the rows placed before, on and after its
# bounds); --merge writes each file the selected ranks held, in any window,
# with the rows of exactly those ranks and steps, each led by its Rank ID.
#
# The data: the sample torch_npu ranks (samples/torch_npu_2rank: a timeline
# with steps, kernel_details.csv, step_trace_time.csv) given memory files
# written here, and generated torch_npu ranks (tracebook-gen --kind
# torch_npu_dir) whose steps both ranks hold.
#
# usage: summary_as_read_test.py TRACEBOOK TRACEBOOK_GEN SAMPLES_DIR OUTDIR
import csv
import json
import os
import shutil
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, GEN, SAMPLES, OUT = tbtest.args("TRACEBOOK TRACEBOOK_GEN SAMPLES_DIR OUTDIR", 4, 4)
run = tbtest.Program(TB, code=0)
gen = tbtest.Program(GEN, code=0)
STEP = ("--model-id", "4294967295", "--iteration-id")


def fresh(name):
    return tbtest.fresh_dir(os.path.join(OUT, name))


def raw_rows(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def as_read(folder):
    listed = json.load(open(os.path.join(folder, "tracebook_run.json")))
    return sorted(listed.get("as_read", {}).get("files", []))


def span(rank_dir, first, count="1"):
    """The rank's span of the window, in ns, as the window itself gives it."""
    p = run("query", "-q", "-dir", rank_dir, *STEP, first, "--iteration-count", count, "--format", "csv",
            "SELECT startNs, endNs FROM temp.tb_window")
    row = list(csv.reader(p.stdout.splitlines()))[1]
    return int(row[0]), int(row[1])


def us(ns):
    return "%d.%03d" % divmod(ns, 1000)


def memory_files(folder, start, end):
    """memory_record, npu_module_mem and operator_memory with rows before, on and after [start, end];
    the rows the window keeps (header first) by file."""
    before, after = start - 1000, end + 1000
    mr = [["Component", "Timestamp(us)", "Total Allocated(MB)", "Total Reserved(MB)", "Device Type"]]
    mm = [["Component", "Timestamp(us)", "Total Reserved(MB)", "Device"]]
    for k, t in enumerate((before, start, start + 5000, end, after)):
        mr.append(["APP", us(t), "%d.5" % k, "112.375", "NPU:0"])
        mm.append(["SLOG", us(t) + "\t", "%d.0" % k, "NPU:0"])
    om = [["Name", "Size(KB)", "Allocation Time(us)", "Release Time(us)", "Duration(us)",
           "Allocation Total Allocated(MB)", "Allocation Total Reserved(MB)", "Release Total Allocated(MB)",
           "Release Total Reserved(MB)", "Device Type"]]
    spans = ((before - 5000, before), (before, start), (start + 1000, after), (after, after + 3000),
             (before, after))
    for k, (a, b) in enumerate(spans):
        om.append(["cann::Graph_%d" % k, "64", us(a), us(b), us(b - a), "0.25", "242.0", "0.0625", "242.0", "NPU:0"])
    for name, rows in (("memory_record", mr), ("npu_module_mem", mm), ("operator_memory", om)):
        with open(os.path.join(folder, name + ".csv"), "w", newline="") as f:
            csv.writer(f, lineterminator="\r\n").writerows(rows)
    return {"memory_record": [mr[0]] + mr[2:5], "npu_module_mem": [mm[0]] + mm[2:5],
            "operator_memory": [om[0], om[2], om[3], om[5]]}


def window_memory_files():
    """A window of steps: each memory file of the rank as read, with the rows whose time meets the rank's
    span of the window (a sample on a bound in, one a microsecond outside out; an allocation held over
    the span in), under the window's name, in CSV and JSON, listed as read."""
    d = fresh("window_memory")
    rank = os.path.join(d, "in", "rank1_ascend_pt")
    shutil.copytree(os.path.join(SAMPLES, "torch_npu_2rank", "rank1_ascend_pt"), rank)
    start, end = span(os.path.join(SAMPLES, "torch_npu_2rank", "rank1_ascend_pt"), "3")
    want = memory_files(os.path.join(rank, "ASCEND_PROFILER_OUTPUT"), start, end)
    assert span(rank, "3") == (start, end)
    run("export", "summary", "-q", "-dir", rank, "-o", os.path.join(d, "out"), *STEP, "3", "--format", "csv,json")
    folder = os.path.join(d, "out", "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    names = ("kernel_details", "step_trace_time", "memory_record", "npu_module_mem", "operator_memory")
    assert as_read(folder) == sorted(n + "_3" + e for n in names for e in (".csv", ".json")), as_read(folder)
    for name, rows in want.items():
        got = raw_rows(os.path.join(folder, name + "_3.csv"))
        assert got == rows, (name, got, rows)
        with open(os.path.join(rank, "ASCEND_PROFILER_OUTPUT", name + ".csv"), "rb") as f:
            head = f.readline()
        with open(os.path.join(folder, name + "_3.csv"), "rb") as f:
            assert f.readline() == head, name
        arr = json.load(open(os.path.join(folder, name + "_3.json")), parse_float=Decimal)
        assert [[str(v) for v in o.values()] for o in arr] == [[x.strip() for x in r] for r in rows[1:]], (name, arr)
    # the whole run: every row
    run("export", "summary", "-q", "-dir", rank, "-o", os.path.join(d, "whole"))
    folder = os.path.join(d, "whole", "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    assert len(raw_rows(os.path.join(folder, "memory_record.csv"))) == 6


def step_rows(path, step):
    """The rows of a kept file in one step (its Step Id / Step column), header first."""
    rows = raw_rows(path)
    at = rows[0].index("Step Id") if "Step Id" in rows[0] else rows[0].index("Step")
    return [rows[0]] + [r for r in rows[1:] if r[at].strip() == step]


def merged(parts):
    """The merged file of parts [(rank, rows with header first)]: `Rank ID` first, the ranks in order."""
    return [["Rank ID"] + parts[0][1][0]] + [[str(r)] + x for r, rows in parts for x in rows[1:]]


def merge_window():
    """--merge in a window of steps: each file the ranks in the window held (kernel_details,
    step_trace_time and the memory files) as read, with the rows of exactly those ranks and steps (the
    memory files: of each rank's own span), each led by its Rank ID, in CSV and JSON; a rank without the
    window adds no row; the sample ranks, which hold no common step, give the one rank's rows."""
    d = fresh("merge_window")
    gen("--kind", "torch_npu_dir", "--events", "3000", "--ranks", "2", "--seed", "5", "-o", os.path.join(d, "in"))
    ranks = [os.path.join(d, "in", "rank%d_ascend_pt" % r) for r in (0, 1)]
    own = [os.path.join(x, "ASCEND_PROFILER_OUTPUT") for x in ranks]
    held = [{x[0] for x in raw_rows(os.path.join(o, "kernel_details.csv"))[1:]} for o in own]
    common = sorted(held[0] & held[1])
    alone = sorted(held[0] - held[1])
    assert common and alone, held
    step = common[0]
    mem = [memory_files(o, *span(x, step)) for x, o in zip(ranks, own)]
    dirs = [a for x in ranks for a in ("-dir", x)]
    run("export", "summary", "-q", *dirs, "-o", os.path.join(d, "out"), "--merge", *STEP, step, "--format", "csv,json")
    folder = os.path.join(d, "out", "ASCEND_PROFILER_OUTPUT")
    names = ["kernel_details", "step_trace_time", "memory_record", "npu_module_mem", "operator_memory"]
    assert as_read(folder) == sorted("%s_%s%s" % (n, step, e) for n in names for e in (".csv", ".json")), \
        as_read(folder)
    for n in names:
        if n in mem[0]:
            want = merged([(r, mem[r][n]) for r in (0, 1)])
        else:
            want = merged([(r, step_rows(os.path.join(own[r], n + ".csv"), step)) for r in (0, 1)])
        got = raw_rows(os.path.join(folder, "%s_%s.csv" % (n, step)))
        assert got == want and (len(got) > 2 or n == "step_trace_time"), (n, got[:3], want[:3])
        arr = json.load(open(os.path.join(folder, "%s_%s.json" % (n, step))), parse_float=Decimal)
        assert [[str(v) for v in o.values()] for o in arr] == [[x.strip() for x in r] for r in want[1:]], n
        assert list(arr[0].keys()) == want[0] if arr else True, n
    # a step rank 1 does not hold: rank 0's rows alone, still as read
    step = alone[0]
    run("export", "summary", "-q", *dirs, "-o", os.path.join(d, "out_alone"), "--merge", *STEP, step)
    folder = os.path.join(d, "out_alone", "ASCEND_PROFILER_OUTPUT")
    assert "kernel_details_%s.csv" % step in as_read(folder), as_read(folder)
    got = raw_rows(os.path.join(folder, "kernel_details_%s.csv" % step))
    assert got == merged([(0, step_rows(os.path.join(own[0], "kernel_details.csv"), step))]) and len(got) > 1
    # the sample ranks: steps 8-9 (rank 0) and 3-4 (rank 1); step 3 merges rank 1's rows alone
    src = os.path.join(SAMPLES, "torch_npu_2rank")
    run("export", "summary", "-q", "-dir", src, "-o", os.path.join(d, "sample"), "--merge", *STEP, "3")
    folder = os.path.join(d, "sample", "ASCEND_PROFILER_OUTPUT")
    assert as_read(folder) == ["kernel_details_3.csv", "step_trace_time_3.csv"], as_read(folder)
    for n in ("kernel_details", "step_trace_time"):
        want = merged([(1, step_rows(os.path.join(src, "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT", n + ".csv"),
                                     "3"))])
        assert raw_rows(os.path.join(folder, n + "_3.csv")) == want, n


def readme_lines(folder):
    """The lines under the README's 'Files of the rank(s) not written here:'."""
    text = open(os.path.join(folder, "README.txt")).read()
    at = text.index(" not written here:\n")
    return text[at:].splitlines()[1:]


def readme_merge_and_subfolders():
    """README.txt names what each rank holds that is not written where: the files of its folders and the
    subfolders of its root (FRAMEWORK/: the number of files and the reason), each line led by its rank
    with --merge, and a file the merge computes instead of writing the rank's own as read."""
    d = fresh("readme")
    src = os.path.join(SAMPLES, "torch_npu_2rank")
    ranks = [os.path.join(d, "in", "rank%d_ascend_pt" % r) for r in (0, 1)]
    for r, x in enumerate(ranks):
        shutil.copytree(os.path.join(src, "rank%d_ascend_pt" % r), x)
    os.makedirs(os.path.join(ranks[1], "FRAMEWORK"))
    for n in ("torch.op_mark", "torch.memory_usage"):
        with open(os.path.join(ranks[1], "FRAMEWORK", n), "w") as f:
            f.write("raw\n")
    run("export", "summary", "-q", "-dir", ranks[1], "-o", os.path.join(d, "one"))
    lines = readme_lines(os.path.join(d, "one", "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT"))
    info = "profiler_info_%d.json: the profiler's run information: its name gives the rank's id, no summary holds it"
    assert lines == ["  trace_view.json: the timeline: `tracebook export timeline` writes it", "  " + info % 1,
                     "  FRAMEWORK/: 2 files found there, not a format tracebook reads"], lines
    # rank 0's kernel_details with another line end: its header differs, the merged file is computed
    kd = os.path.join(ranks[0], "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
    text = open(kd, newline="").read()
    with open(kd, "w", newline="") as f:
        f.write(text.replace("\r\n", "\n").replace("\n", "\r\n"))
    run("export", "summary", "-q", "-dir", ranks[0], "-dir", ranks[1], "-o", os.path.join(d, "merged"), "--merge")
    folder = os.path.join(d, "merged", "ASCEND_PROFILER_OUTPUT")
    assert as_read(folder) == ["step_trace_time.csv"], as_read(folder)
    computed = ": the merged file is computed, not the rank's own as read (the ranks written do not all hold it " \
               "under one header, or the window cannot select its rows)"
    lines = readme_lines(folder)
    assert lines == ["  rank 0: trace_view.json: the timeline: `tracebook export timeline` writes it",
                     "  rank 0: kernel_details.csv" + computed, "  rank 0: " + info % 0,
                     "  rank 1: trace_view.json: the timeline: `tracebook export timeline` writes it",
                     "  rank 1: kernel_details.csv" + computed, "  rank 1: " + info % 1,
                     "  rank 1: FRAMEWORK/: 2 files found there, not a format tracebook reads"], lines
    assert "Files of the ranks not written here:" in open(os.path.join(folder, "README.txt")).read()


suite = tbtest.Suite(work=OUT)
for fn in (window_memory_files, merge_window, readme_merge_and_subfolders):
    suite.add(fn.__name__, fn)
suite.main()
