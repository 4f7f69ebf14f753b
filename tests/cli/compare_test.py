#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# compare_test.py - `tracebook compare` on two generated runs.
#
# The runs are made here from samples/ascend_small: every device task's
# duration jitters by up to 1% (a different seed per run), and in the new run
# one kernel (aclnnMm_MatMulV3_MatMulV3) is made slower by a known factor and
# one kernel is renamed. compare must flag exactly that kernel with the right
# ratio, list the renamed one as removed and added (or match it through
# `normalize:`), exit 8 with --fail-on-regression (0 without, and 0 when the
# rules' threshold is above the slowdown), read an earlier report run's
# folder as a side, and say which steps a per-step report compared.
#
# usage: compare_test.py TRACEBOOK SAMPLES_DIR OUTDIR [TRACEBOOK_GEN]
# Prints one `ok`/`FAIL` line per case and a final `N passed, N failed`
# line; exits 0 when all pass, 1 otherwise.
import csv
import json
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, SAMPLES, OUT, *GEN = tbtest.args("TRACEBOOK SAMPLES_DIR OUTDIR [TRACEBOOK_GEN]", 3, 4)
GEN = GEN[0] if GEN else None
SLOW = "aclnnMm_MatMulV3_MatMulV3"
SLOW_KEY = SLOW + " | MatMulV3"  # top_kernels' key: the name and its type (from the name)
FACTOR = 1.5
RENAMED = "aclnnAdd_AddAiCore_Add"


def make_run(path, factor, seed, rename=None):
    with open(os.path.join(SAMPLES, "ascend_small", "trace_view.json")) as f:
        events = json.load(f)
    rnd = random.Random(seed)
    for e in events:
        if e.get("ph") == "X" and "Task Type" in e.get("args", {}):
            j = 1 + rnd.uniform(-0.01, 0.01)
            if e["name"] == SLOW:
                j = factor  # exactly the factor: the ratio is known
            e["dur"] = round(float(e["dur"]) * j, 3)
            if rename and e["name"] in rename:
                e["name"] = rename[e["name"]]
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "trace_view.json"), "w") as f:
        json.dump(events, f)


run = tbtest.Program(TB)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def meta(out):
    with open(os.path.join(out, "tracebook_run.json")) as f:
        return json.load(f)


def case_regression():
    out = os.path.join(OUT, "c1")
    r = run("compare", "-base", BASE, "-new", NEW, "--spec", "builtin:top_kernels", "-o", out, "--fail-on-regression")
    assert r.returncode == 8, (r.returncode, r.stderr)
    top = rows(os.path.join(out, "top_kernels_compare.csv"))
    flagged = [x["Name"] for x in top if x["Regressions"]]
    assert flagged == [SLOW], flagged
    slow = [x for x in top if x["Name"] == SLOW][0]
    assert "Total Time" in slow["Regressions"], slow["Regressions"]
    ratio = float(slow["Total Time(us) Ratio"])
    # the base jittered by up to 1% per task
    assert abs(ratio - FACTOR) < 0.02, ratio
    m = meta(out)
    assert m["command"] == "compare"
    assert m["regression_count"] == len(m["regressions"]) > 0
    assert {g["key"] for g in m["regressions"] if g["report"] == "top_kernels"} == {SLOW_KEY}, m["regressions"]
    assert all(g["ratio"] > 1.05 for g in m["regressions"]), m["regressions"]
    # the call counts did not change (a change is noted, never a regression)
    assert [x["count_changes"] for x in m["reports"] if x["id"] == "top_kernels"] == [0], m["reports"]
    # no jitter of 1% makes a regression under the 5% rule
    for x in top:
        if x["Name"] != SLOW and x["Status"] == "matched":
            assert not x["Regressions"], x


def case_workbook():
    # About, Summary, then the report's sheet with red/green rules on its Ratio columns
    import re
    import zipfile
    book = os.path.join(OUT, "c1", "compare.xlsx")
    with zipfile.ZipFile(book) as z:
        names = re.findall(r'<sheet name="([^"]*)"', z.read("xl/workbook.xml").decode())
        assert names == ["About", "Summary", "Top kernels by total time"], names
        strings = z.read("xl/sharedStrings.xml").decode() if "xl/sharedStrings.xml" in z.namelist() else ""
        summary = z.read("xl/worksheets/sheet2.xml").decode()
        assert SLOW in strings or SLOW in summary, "the summary does not name the slow kernel"
        sheet = z.read("xl/worksheets/sheet3.xml").decode()
        assert 'operator="greaterThan"' in sheet and "<formula>1.05</formula>" in sheet, sheet[-2000:]
        # better: below 0.95 on numbers only (an empty Ratio is no improvement)
        assert re.search(r"<cfRule type=\"expression\"[^>]*><formula>AND\(ISNUMBER\(([A-Z]+)2\),\1\d&lt;0.95\)"
                         r"</formula>", sheet), sheet[-2000:]
    assert meta(os.path.join(OUT, "c1"))["workbook"] == "compare.xlsx"
    r = run("compare", "-base", BASE, "-new", NEW, "--spec", "builtin:top_kernels", "-o", os.path.join(OUT, "c11"),
            "--format", "json")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(os.path.join(OUT, "c11"))) == ["top_kernels_compare.json", "tracebook_run.json"]


def case_no_fail_flag():
    out = os.path.join(OUT, "c2")
    r = run("compare", "--base", BASE, "--new", NEW, "--spec", "builtin:top_kernels", "-o", out)
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert "regression" in r.stderr


def case_added_removed():
    top = rows(os.path.join(OUT, "c1", "top_kernels_compare.csv"))
    status = {x["Name"]: x["Status"] for x in top}
    assert status[RENAMED] == "removed", status
    assert status[RENAMED + "_7"] == "added", status
    assert list(status.values()).count("added") == 1 and list(status.values()).count("removed") == 1, status
    gone = [x for x in top if x["Name"] == RENAMED][0]
    assert gone["Count New"] == "" and gone["Count Base"] != "", gone


def write_spec(name, text):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def case_normalize():
    spec = write_spec("norm.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n"
                      "    normalize: [strip_trailing_numbers]\n")
    out = os.path.join(OUT, "c3")
    r = run("compare", "-base", BASE, "-new", NEW, "--spec", spec, "-o", out)
    assert r.returncode == 0, r.stderr
    top = rows(os.path.join(out, "top_kernels_compare.csv"))
    assert all(x["Status"] == "matched" for x in top), [(x["Name"], x["Status"]) for x in top]
    # the row keeps the base run's name
    assert RENAMED in {x["Name"] for x in top}


def case_normalize_names():
    # template arguments and a build hash added to a kernel's name in the new run
    name = "aclnnMm_TransData_TransData"
    other = os.path.join(OUT, "new_hashed")
    make_run(other, 1.0, 2, {name: name + "<float, 4>_0a1b2c3d4e"})
    out = os.path.join(OUT, "c12")
    r = run("compare", "-base", BASE, "-new", other, "--spec", "builtin:top_kernels", "-o", out)
    assert r.returncode == 0, r.stderr
    status = {x["Name"]: x["Status"] for x in rows(os.path.join(out, "top_kernels_compare.csv"))}
    assert status[name] == "removed" and status[name + "<float, 4>_0a1b2c3d4e"] == "added", status
    spec = write_spec("norm2.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n"
                      "    normalize: [strip_template_args, strip_hashes]\n")
    out = os.path.join(OUT, "c13")
    r = run("compare", "-base", BASE, "-new", other, "--spec", spec, "-o", out)
    assert r.returncode == 0, r.stderr
    got = rows(os.path.join(out, "top_kernels_compare.csv"))
    assert all(x["Status"] == "matched" for x in got), [(x["Name"], x["Status"]) for x in got]
    m = meta(out)
    assert m["regression_count"] == 0, m["regressions"]


def case_output_is_a_side():
    rep = os.path.join(OUT, "report_side")
    r = run("report", "-dir", BASE, "--spec", "builtin:top_kernels", "-o", rep, "-q")
    assert r.returncode == 0, r.stderr
    before = open(os.path.join(rep, "tracebook_run.json")).read()
    r = run("compare", "-base", rep, "-new", NEW, "--spec", "builtin:top_kernels", "-o", rep)
    assert r.returncode == 2 and "would replace" in r.stderr, (r.returncode, r.stderr)
    assert open(os.path.join(rep, "tracebook_run.json")).read() == before


def case_outputs_never_replace_what_is_read():
    # an input trace and a spec named as compare's outputs, in the output folder
    d = os.path.join(OUT, "own_files")
    os.makedirs(d, exist_ok=True)
    trace = os.path.join(d, "top_kernels_compare.json")
    shutil.copy(os.path.join(BASE, "trace_view.json"), trace)
    before = open(trace, "rb").read()
    r = run("compare", "-base", trace, "-new", NEW, "--spec", "builtin:top_kernels", "--format", "json", "-o", d)
    assert r.returncode == 2 and "refusing to replace an input file" in r.stderr and trace in r.stderr, \
        (r.returncode, r.stderr)
    assert open(trace, "rb").read() == before
    assert sorted(os.listdir(d)) == ["top_kernels_compare.json"], os.listdir(d)
    spec = os.path.join(d, "tracebook_run.json")
    with open(spec, "w") as f:
        f.write('{"tracebook": 1, "reports": [{"id": "n", "sql": "SELECT count(*) AS n FROM TASK"}]}\n')
    before = open(spec, "rb").read()
    r = run("compare", "-base", BASE, "-new", NEW, "--spec", spec, "-o", d)
    assert r.returncode == 2 and "refusing to replace an input file" in r.stderr and spec in r.stderr, \
        (r.returncode, r.stderr)
    assert open(spec, "rb").read() == before
    assert sorted(os.listdir(d)) == ["top_kernels_compare.json", "tracebook_run.json"], os.listdir(d)


def case_msprof_reports_file():
    # an msprof reports file compares msprof's summaries, as report runs them
    cfg = os.path.join(SAMPLES, "specs", "reports_sample_config.json")
    out = os.path.join(OUT, "c_msprof")
    r = run("compare", "-base", BASE, "-new", NEW, "--spec", cfg, "-o", out, "--fail-on-regression")
    assert r.returncode == 8, (r.returncode, r.stderr)
    assert "running msprof's summaries" in r.stderr, r.stderr
    m = meta(out)
    assert m["spec"] == cfg, m["spec"]
    assert [x["id"] for x in m["reports"]][:2] == ["op_statistic", "api_statistic"], m["reports"]
    assert os.path.exists(os.path.join(out, "op_statistic_compare.csv"))
    # the slower kernel's type is the regression
    assert {(g["report"], g["column"]) for g in m["regressions"]} >= {("op_statistic", "Total Time(us)")}, \
        m["regressions"]


def case_rules():
    # 60% relative: the 50% slowdown is not a regression
    spec = write_spec("rules.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    key: [Name]\n"
                      "    regressions:\n      - {column: Total Time, worse: higher, relative: 60%, absolute: 10us}\n")
    out = os.path.join(OUT, "c4")
    r = run("compare", "-base", BASE, "-new", NEW, "--spec", spec, "-o", out, "--fail-on-regression")
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert meta(out)["regression_count"] == 0
    # worse when lower: the slowdown is an improvement
    spec = write_spec("lower.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n"
                      "    regressions:\n      - {column: Total Time, worse: lower, relative: 5%}\n")
    out = os.path.join(OUT, "c5")
    r = run("compare", "-base", BASE, "-new", NEW, "--spec", spec, "-o", out, "--fail-on-regression")
    assert r.returncode == 0, (r.returncode, r.stderr)
    top = rows(os.path.join(out, "top_kernels_compare.csv"))
    assert [x["Name"] for x in top if x["Improvements"]] == [SLOW]
    # min_count above the kernel's calls: nothing fires
    spec = write_spec("mincount.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n"
                      "    regressions:\n      - {column: Total Time, min_count: 1000}\n")
    out = os.path.join(OUT, "c6")
    r = run("compare", "-base", BASE, "-new", NEW, "--spec", spec, "-o", out, "--fail-on-regression")
    assert r.returncode == 0, (r.returncode, r.stderr)


def case_bad_spec():
    spec = write_spec("bad.yaml", "tracebook: 1\nreports:\n  - use: top_kernels\n    normalize: [strip_everything]\n")
    r = run("compare", "-base", BASE, "-new", NEW, "--spec", spec, "-o", os.path.join(OUT, "c7"))
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "bad.yaml:4:17: unknown normalize step 'strip_everything'" in r.stderr, r.stderr
    r = run("compare", "-base", BASE, "--spec", "builtin:top_kernels")
    assert r.returncode == 2 and "give -base PATH and -new PATH" in r.stderr, r.stderr


def case_run_folder():
    rep = os.path.join(OUT, "report_base")
    r = run("report", "-dir", BASE, "--spec", "builtin:top_kernels", "-o", rep, "-q")
    assert r.returncode == 0, r.stderr
    out = os.path.join(OUT, "c8")
    r = run("compare", "-base", rep, "-new", NEW, "--spec", "builtin:top_kernels", "-o", out, "--fail-on-regression")
    assert r.returncode == 8, (r.returncode, r.stderr)
    m = meta(out)
    assert m["base"]["inputs"] == [BASE], m["base"]
    assert {g["key"] for g in m["regressions"] if g["report"] == "top_kernels"} == {SLOW_KEY}


def gen_dir(d, seed):
    shutil.rmtree(d, ignore_errors=True)
    tbtest.run([GEN, "--kind", "torch_npu_dir", "--events", "3000", "--ranks", "1", "--seed", str(seed), "-o", d],
               code=0)


def step_report(a, b, out):
    r = run("compare", "-base", a, "-new", b, "--spec", "builtin:step_trace_time", "-o", out)
    assert r.returncode == 0, (r.returncode, r.stderr)
    st = [x for x in meta(out)["reports"] if x["id"] == "step_trace_time"][0]
    assert "Step" in st["key"], st
    return st, rows(os.path.join(out, "step_trace_time_compare.csv"))


def case_steps():
    if not GEN:
        raise tbtest.Skip("no TRACEBOOK_GEN given")
    a, b, c = (os.path.join(OUT, x) for x in ("steps_a", "steps_b", "steps_c"))
    gen_dir(a, 1)
    gen_dir(b, 1)
    gen_dir(c, 2)
    # the new run: the same steps, every device task 20% longer
    tv = os.path.join(b, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
    with open(tv) as f:
        events = json.load(f)
    for e in events:
        if e.get("ph") == "X" and "Task Type" in e.get("args", {}):
            e["dur"] = round(float(e["dur"]) * 1.2, 3)
    with open(tv, "w") as f:
        json.dump(events, f)
    st, got = step_report(a, b, os.path.join(OUT, "c9"))
    steps = st["steps"]
    assert steps["compared"] and steps["compared"] == steps["base"] == steps["new"], steps
    assert {x["Step"] for x in got if x["Status"] == "matched"} == {str(s) for s in steps["compared"]}, got
    assert all(x["Status"] == "matched" for x in got), got
    # seed 2 numbers its steps otherwise: step k meets only step k, so nothing is matched
    st, got = step_report(a, c, os.path.join(OUT, "c10"))
    steps = st["steps"]
    assert not set(steps["base"]) & set(steps["new"]), steps
    assert steps["compared"] == [] and st["matched"] == 0, st
    assert st["added"] == len(steps["new"]) and st["removed"] == len(steps["base"]), st


def case_windows():
    if not GEN:
        raise tbtest.Skip("no TRACEBOOK_GEN given")
    a = os.path.join(OUT, "win_a")
    gen_dir(a, 1)
    rep = os.path.join(OUT, "win_report")
    r = run("report", "-q", "-dir", a, "--spec", "builtin:step_trace_time", "-o", rep)
    assert r.returncode == 0, r.stderr
    per_step = {x["Step"]: x for x in rows(os.path.join(rep, "step_trace_time.csv"))}
    first, second = sorted(per_step, key=int)[:2]
    # one window for both: only that step, on both sides
    out = os.path.join(OUT, "c_win1")
    r = run("compare", "-base", a, "-new", a, "--spec", "builtin:step_trace_time", "--model-id", "4294967295",
            "--iteration-id", second, "-o", out)
    assert r.returncode == 0, r.stderr
    st = [x for x in meta(out)["reports"] if x["id"] == "step_trace_time"][0]
    assert st["steps"]["base"] == st["steps"]["new"] == st["steps"]["compared"] == [int(second)], st
    assert "new_offset" not in st["steps"], st
    # a window for each side: the base's first step meets the new run's second
    out = os.path.join(OUT, "c_win2")
    r = run("compare", "-base", a, "-new", a, "--spec", "builtin:step_trace_time", "--model-id", "4294967295",
            "--base-iteration-id", first, "--new-iteration-id", second, "-o", out)
    assert r.returncode == 0, r.stderr
    m = meta(out)
    assert m["base"]["window"]["iteration_id"] == int(first) and m["new"]["window"]["iteration_id"] == int(second), m
    st = [x for x in m["reports"] if x["id"] == "step_trace_time"][0]
    assert st["steps"] == {"column": "Step", "base": [int(first)], "new": [int(second)], "compared": [int(first)],
                           "new_offset": int(second) - int(first)}, st
    got = rows(os.path.join(out, "step_trace_time_compare.csv"))
    assert len(got) == 1 and got[0]["Status"] == "matched" and got[0]["Step"] == first, got
    assert got[0]["Computing Base"] == per_step[first]["Computing"], got
    assert got[0]["Computing New"] == per_step[second]["Computing"], got
    # usage errors
    r = run("compare", "-base", a, "-new", a, "--spec", "builtin:step_trace_time", "--new-iteration-id", "1")
    assert r.returncode == 2 and "needs --model-id" in r.stderr, (r.returncode, r.stderr)
    r = run("compare", "-base", a, "-new", a, "--spec", "builtin:step_trace_time", "--model-id", "4294967295",
            "--new-iteration-id", "1")
    assert r.returncode == 2 and "give --iteration-id for the base run" in r.stderr, (r.returncode, r.stderr)


if __name__ == "__main__":
    tbtest.fresh_dir(OUT)
    tbtest.use_cache(os.path.join(OUT, "cache"))
    BASE = os.path.join(OUT, "base")
    NEW = os.path.join(OUT, "new")
    make_run(BASE, 1.0, 1)
    make_run(NEW, FACTOR, 2, {RENAMED: RENAMED + "_7"})
    suite = tbtest.Suite(work=OUT)
    suite.collect(globals())
    suite.main()
