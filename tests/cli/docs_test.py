#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# docs_test.py - the examples of a docs page (docs/spec.md, docs/metrics.md) are tests.
#
# usage: docs_test.py TRACEBOOK PAGE_MD SAMPLE_DIR WORK_DIR
#
# Every ```yaml block of the page is written to a file and run with
# `tracebook report -dir SAMPLE_DIR --spec FILE`. HTML comments right after
# the block say what to expect: `<!-- args: ... -->` adds options, and
# `<!-- error: MESSAGE -->` says the run must fail with MESSAGE in its error
# line; without it, the run must succeed.
import os
import re
import shlex
import shutil
import subprocess
import sys

BLOCK = re.compile(r"```yaml\n(.*?)```\n((?:<!-- (?:error|args): .*? -->\n)*)", re.S)


def main():
    exe, page, sample, work = (os.path.abspath(a) for a in sys.argv[1:5])
    text = open(page, encoding="utf-8").read()
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failed = 0
    blocks = BLOCK.findall(text)
    if not blocks:
        print("FAIL: no yaml examples found in %s" % page)
        sys.exit(1)
    for n, (body, notes) in enumerate(blocks, 1):
        error = re.search(r"<!-- error: (.*?) -->", notes)
        args = re.search(r"<!-- args: (.*?) -->", notes)
        spec = os.path.join(work, "example%d.yaml" % n)
        with open(spec, "w", encoding="utf-8") as f:
            f.write(body)
        cmd = [exe, "report", "-q", "-dir", sample, "--spec", spec, "-o", os.path.join(work, "out%d" % n)]
        if args:
            cmd += shlex.split(args.group(1))
        p = subprocess.run(cmd, capture_output=True, text=True)
        if error:
            ok = p.returncode != 0 and error.group(1) in p.stderr
        else:
            ok = p.returncode == 0
        first = body.splitlines()[1] if len(body.splitlines()) > 1 else body
        if ok:
            print("ok example %d (%s)" % (n, first.strip()))
        else:
            failed += 1
            print("FAIL example %d (%s): exit %d\n%s" % (n, first.strip(), p.returncode, p.stderr))
    sys.exit(1 if failed else 0)


main()
