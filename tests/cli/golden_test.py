#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# golden_test.py - every sample spec run through the command, its outputs
# compared byte for byte with the checked-in expected files.
#
# usage: golden_test.py TRACEBOOK SAMPLES_DIR GOLDEN_DIR WORK_DIR [--update]
#
# Each case runs `tracebook report` from SAMPLES_DIR (so inputs and specs are
# named relative to it in the outputs) with -o into a fresh directory under
# WORK_DIR. The expected files of case NAME are GOLDEN_DIR/NAME/: every file
# the run wrote, plus stdout.txt and stderr.txt (the output directory's path
# written as OUT). A workbook (.xlsx) is compared by its unzipped parts,
# kept as GOLDEN_DIR/NAME/<workbook>.parts/<part path> (its creation time
# comes from the data, so the parts repeat). --update rewrites them; do that
# only for a change you understand, and say why in the commit.
import os
import shutil
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

CASES = [
    # the team nightly spec over the Ascend sample: built-ins + custom SQL
    ("nightly", ["-dir", "ascend_small", "--spec", "specs/nightly.yaml"]),
    # the same in step mode, step 9 only: every report sees one step
    ("nightly_step9", ["-dir", "ascend_small", "--spec", "specs/nightly.yaml",
                       "--model-id", "4294967295", "--iteration-id", "9"]),
    # the top-kernels spec with params, on a Kineto trace, console output too
    ("top_kernels", ["-dir", "kineto_small", "--spec", "specs/top_kernels.yaml",
                     "--param", "top=5", "--param", "name_like=%", "--timeunit", "ms"]),
    # msprof's reports_sample_config.json is a valid spec
    ("msprof_config", ["-dir", "ascend_small", "--spec", "specs/reports_sample_config.json"]),
    # two ranks, JSON output, a built-in run by name
    ("two_ranks_json", ["-dir", "torch_npu_2rank", "--spec", "builtin:op_statistic",
                        "--spec", "builtin:communication_statistic", "--format", "json,csv"]),
    # a review workbook: About sheet, charts, conditional formats
    ("review_workbook", ["-dir", "ascend_small", "--spec", "specs/review_workbook.yaml"]),
    # a self-contained HTML page: the headline, a section per report, every chart kind
    ("html_report", ["-dir", "ascend_small", "--spec", "specs/html_report.yaml"]),
    # the built-in review: workbook (contents, Summary, charts under their tables), page, CSVs
    ("review", ["-dir", "ascend_small", "--spec", "builtin:review"]),
    # HTA's critical path of each step of the Kineto sample: summary and edges
    ("hta_critical_path", ["-dir", "kineto_small", "--spec", "builtin:critical_path_summary",
                           "--spec", "builtin:critical_path"]),
    # the nightly spec's reports in one workbook, in a window
    ("nightly_xlsx_step9", ["-dir", "ascend_small", "--spec", "specs/nightly.yaml", "--format", "xlsx",
                            "--model-id", "4294967295", "--iteration-id", "9"]),
]


def run_case(exe, samples, work, name, args):
    out = os.path.join(work, name)
    shutil.rmtree(out, ignore_errors=True)
    p = tbtest.run([exe, "report"] + args + ["-o", out], cwd=samples)
    got = {}
    if os.path.isdir(out):
        for f in sorted(os.listdir(out)):
            if f.endswith(".xlsx"):
                with zipfile.ZipFile(os.path.join(out, f)) as z:
                    for part in z.namelist():
                        got[f + ".parts/" + part] = z.read(part)
                continue
            with open(os.path.join(out, f), "rb") as fh:
                got[f] = fh.read()
    got["stdout.txt"] = p.stdout.replace(out, "OUT").encode()
    got["stderr.txt"] = p.stderr.replace(out, "OUT").encode()
    return p.returncode, got


def main():
    exe, samples, golden, work, *opts = tbtest.args("TRACEBOOK SAMPLES_DIR GOLDEN_DIR WORK_DIR [--update]", 4, 5)
    exe, samples, golden, work = (os.path.abspath(a) for a in (exe, samples, golden, work))
    update = "--update" in opts
    os.makedirs(work, exist_ok=True)
    # its own cache: a run that waits for another test's load says so on stderr
    tbtest.use_cache(os.path.join(work, "cache"))
    T = tbtest.Checks()
    for name, args in CASES:
        rc, got = run_case(exe, samples, work, name, args)
        want_dir = os.path.join(golden, name)
        if not T.check(rc == 0, "%s: exit %d" % (name, rc), got["stderr.txt"].decode()):
            continue
        if update:
            shutil.rmtree(want_dir, ignore_errors=True)
            os.makedirs(want_dir)
            for f, data in got.items():
                os.makedirs(os.path.dirname(os.path.join(want_dir, f)), exist_ok=True)
                with open(os.path.join(want_dir, f), "wb") as fh:
                    fh.write(data)
            print("updated %s (%d files)" % (name, len(got)))
            continue
        want = {}
        for root, _dirs, files in os.walk(want_dir):
            for f in files:
                full = os.path.join(root, f)
                with open(full, "rb") as fh:
                    want[os.path.relpath(full, want_dir)] = fh.read()
        problems = []
        for f in sorted(set(want) | set(got)):
            if f not in got:
                problems.append("missing output %s" % f)
            elif f not in want:
                problems.append("unexpected output %s" % f)
            elif got[f] != want[f]:
                a = want[f].decode(errors="replace").splitlines()
                b = got[f].decode(errors="replace").splitlines()
                line = next((i for i in range(max(len(a), len(b)))
                             if i >= len(a) or i >= len(b) or a[i] != b[i]), 0)
                problems.append("%s differs at line %d:\n  want: %s\n  got:  %s" % (
                    f, line + 1, a[line] if line < len(a) else "<end>", b[line] if line < len(b) else "<end>"))
        if T.check(not problems, name, "\n".join(problems)):
            print("ok   %s (%d files)" % (name, len(got)))
    sys.exit(T.finish())


main()
