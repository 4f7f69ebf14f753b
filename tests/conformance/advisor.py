#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# advisor.py - the built-in advisor (--spec builtin:advisor) on every shared
# public profile, and on the two torch_npu ranks together.
#
# Each run must exit 0 and write advisor.csv, advisor.json and
# tracebook_run.json that agree: the same findings (rule and severity, in
# the same order, critical first), the counts of the JSON and of the
# metadata equal to the CSV's rows, every rule of reports/advisor.yaml in
# the JSON's and the metadata's rules (run or skipped), and each finding's
# evidence rows as many as its evidence file's rows. One finding is checked
# by value: on ascend/torch_npu_rank0 the Cast operator ran twice on the
# AI_CPU though it has an AI Core version (its op_summary says so).
# usage: advisor.py TRACEBOOK SHARED_DATA_DIR OUT_DIR
# Exit 77 (skip) when the shared data is absent. Writes only under OUT_DIR.
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, DATA, OUT = (os.path.abspath(a) for a in tbtest.args("TRACEBOOK SHARED_DATA_DIR OUT_DIR", 3, 3))
tbtest.need_dirs(DATA)

PROFILES = {
    "torch_npu_rank0": ["ascend/torch_npu_rank0"],
    "torch_npu_rank1": ["ascend/torch_npu_rank1"],
    "torch_npu_both": ["ascend/torch_npu_rank0", "ascend/torch_npu_rank1"],
    "torch_npu_timeline": ["ascend/torch_npu_timeline"],
    "msprof_db": ["ascend/msprof_db"],
    "cluster_analysis_output": ["ascend/cluster_analysis_output"],
    "trace_view_tiny": ["ascend/misc/trace_view_tiny.json"],
    "trace_view_heatmap": ["ascend/misc/trace_view_heatmap.json"],
    "amd_trace": ["kineto/amd_trace"],
    "ns_resolution_trace": ["kineto/ns_resolution_trace"],
    "tracelens_h100": ["kineto/tracelens/h100"],
    "tracelens_mi300": ["kineto/tracelens/mi300"],
    "topsprof": ["topsprof"],
}
RULES = ["advisor_aicpu_op", "advisor_data_loading", "advisor_host_gaps", "advisor_exposed_comm",
         "advisor_tiny_kernels", "advisor_d2h_copy", "advisor_slow_rank", "advisor_slow_rank_vote",
         "advisor_slow_link", "advisor_straggler"]

T = tbtest.Checks(verbose=True)


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def check(name, inputs):
    out = tbtest.fresh_dir(os.path.join(OUT, name))
    args = [TB, "report", "-q"]
    for i in inputs:
        args += ["-dir", os.path.join(DATA, i)]
    r = tbtest.run(args + ["--spec", "builtin:advisor", "-o", out], timeout=600)
    if not T.eq(r.rc, 0, "%s: exit code (stderr: %s)" % (name, r.err.strip())):
        return None
    found = rows(os.path.join(out, "advisor.csv"))
    with open(os.path.join(out, "advisor.json"), encoding="utf-8") as f:
        doc = json.load(f)
    with open(os.path.join(out, "tracebook_run.json"), encoding="utf-8") as f:
        meta = json.load(f)["advisor"]
    csv_keys = [(x["Rule"], x["Severity"]) for x in found]
    T.eq([(x["rule"], x["severity"]) for x in doc["findings"]], csv_keys, "%s: advisor.json's findings" % name)
    order = {"critical": 0, "warning": 1, "info": 2}
    T.eq(csv_keys, sorted(csv_keys, key=lambda k: order[k[1]]), "%s: critical first" % name)
    counts = {s: sum(1 for k in csv_keys if k[1] == s) for s in order}
    T.eq(doc["counts"], counts, "%s: advisor.json's counts" % name)
    T.eq(meta["counts"], counts, "%s: tracebook_run.json's counts" % name)
    T.eq([x["rule"] for x in doc["rules"]], RULES, "%s: advisor.json's rules" % name)
    T.eq([x["rule"] for x in meta["rules"]], RULES, "%s: tracebook_run.json's rules" % name)
    fired = sorted(x["rule"] for x in meta["rules"] if x.get("fired"))
    T.eq(fired, sorted(k[0] for k in csv_keys), "%s: the rules that fired" % name)
    for x in doc["findings"]:
        ev = rows(os.path.join(out, x["evidence_files"][0]))
        T.eq(x["evidence_rows"], len(ev), "%s: %s's evidence rows" % (name, x["rule"]))
        T.eq(len(x["evidence"]), min(len(ev), 100), "%s: %s's evidence in advisor.json" % (name, x["rule"]))
    return out


def main():
    outs = {name: check(name, inputs) for name, inputs in PROFILES.items()}
    if outs["torch_npu_rank0"]:
        ev = rows(os.path.join(outs["torch_npu_rank0"], "advisor_aicpu_op.csv"))
        T.eq([(x["Operator"], x["AI_CPU Calls"], x["AI Core Versions"]) for x in ev], [("Cast", "2", "AI_CORE")],
             "torch_npu_rank0: Cast on the AI_CPU, with an AI Core version")
    sys.exit(T.finish())


main()
