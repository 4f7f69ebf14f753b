#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# campaign.py - one libFuzzer campaign of one harness (tests/fuzz/run, and
# CI through scripts/test): runs FUZZER for SECONDS over a work corpus that
# starts from the checked-in corpus (read-only: new inputs go to WORK_DIR)
# and the matching files of the shared public data when present, under the
# sanitizers of the fuzz build. Prints the executions, the inputs kept and
# the findings; exits 1 when the fuzzer found a crash, a leak, a timeout or
# a memory blow-up (its input is kept under WORK_DIR/artifacts/); a slow
# input is counted, not a finding. The
# coverage printed is libFuzzer's last status line (edges and features).
# usage: campaign.py FUZZER TARGET SECONDS CORPUS_DIR WORK_DIR [SHARED_DATA]
import os
import re
import shutil
import subprocess
import sys

fuzzer, target, seconds, corpus, work = sys.argv[1:6]
shared = sys.argv[6] if len(sys.argv) > 6 else ""

# Seeds of the public data, by target (copied, never written to).
SHARED_SEEDS = {
    "trace": ["ascend/misc/trace_view_tiny.json", "ascend/misc/trace_view_heatmap.json"],
    "csv": ["ascend/misc/kernel_details_new_header.csv", "ascend/misc/op_summary_1.csv"],
    "topsprof": ["topsprof/summary_example.txt", "topsprof/trace_example.txt"],
    "msprof_db": [],
    "spec": [],
    "sql": [],
}

live = os.path.join(work, "corpus")
arts = os.path.join(work, "artifacts")
seeds = os.path.join(work, "seeds")
shutil.rmtree(arts, ignore_errors=True)  # this campaign's findings only
for d in (live, arts, seeds):
    os.makedirs(d, exist_ok=True)
for rel in SHARED_SEEDS.get(target, []):
    src = os.path.join(shared, rel)
    if shared and os.path.isfile(src) and os.path.getsize(src) <= 64 * 1024:
        shutil.copyfile(src, os.path.join(seeds, os.path.basename(rel)))

# The harness's temporary folder: libFuzzer ends a campaign without the
# harness's atexit clean-up, so it goes with the campaign.
tmp = os.path.join(work, "tmp")
shutil.rmtree(tmp, ignore_errors=True)
os.makedirs(tmp)
env = dict(os.environ, TMPDIR=tmp)
env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1")
env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
args = [fuzzer, "-max_total_time=" + seconds, "-timeout=30", "-rss_limit_mb=2560", "-max_len=65536",
        "-print_final_stats=1", "-artifact_prefix=" + arts + "/", live, corpus, seeds]
r = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
out = r.stdout
shutil.rmtree(tmp, ignore_errors=True)
stats = dict(re.findall(r"^stat::(\w+):\s*(\d+)", out, re.M))
# the coverage at the end: libFuzzer's last status line (edges, features)
cov = re.findall(r"^#\d+\s+\w+\s+cov: (\d+) ft: (\d+)", out, re.M)
# libFuzzer's slow-unit-* files are inputs that took more than 10 s of wall
# time: on a shared machine that is the machine's load as often as the
# input's (each is still bounded by the CPU limit and -timeout); they are
# kept and counted, and are no finding
slow = sorted(n for n in os.listdir(arts) if n.startswith("slow-unit-"))
found = sorted(n for n in os.listdir(arts) if not n.startswith("slow-unit-"))
print("fuzz %s: %s s, %s executions, coverage %s edges / %s features, %d inputs in the corpus, %d findings%s" % (
    target, seconds, stats.get("number_of_executed_units", "?"), cov[-1][0] if cov else "?",
    cov[-1][1] if cov else "?", len(os.listdir(live)), len(found),
    (": " + ", ".join(found)) if found else ""))
if slow:
    print("fuzz %s: %d slow inputs (over 10 s of wall time) kept in %s" % (target, len(slow), arts))
if r.returncode != 0 or found:
    print(out[-20000:])
    sys.exit(1)
