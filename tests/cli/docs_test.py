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
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

BLOCK = re.compile(r"```yaml\n(.*?)```\n((?:<!-- (?:error|args): .*? -->\n)*)", re.S)


def main():
    exe, page, sample, work = (os.path.abspath(a) for a in tbtest.args("TRACEBOOK PAGE_MD SAMPLE_DIR WORK_DIR", 4, 4))
    text = open(page, encoding="utf-8").read()
    tbtest.fresh_dir(work)
    T = tbtest.Checks(verbose=True)
    blocks = BLOCK.findall(text)
    if not T.check(blocks, "yaml examples found in %s" % page):
        sys.exit(T.finish())
    for n, (body, notes) in enumerate(blocks, 1):
        error = re.search(r"<!-- error: (.*?) -->", notes)
        args = re.search(r"<!-- args: (.*?) -->", notes)
        spec = os.path.join(work, "example%d.yaml" % n)
        with open(spec, "w", encoding="utf-8") as f:
            f.write(body)
        cmd = [exe, "report", "-q", "-dir", sample, "--spec", spec, "-o", os.path.join(work, "out%d" % n)]
        if args:
            cmd += shlex.split(args.group(1))
        p = tbtest.run(cmd)
        if error:
            ok = p.returncode != 0 and error.group(1) in p.stderr
        else:
            ok = p.returncode == 0
        first = body.splitlines()[1] if len(body.splitlines()) > 1 else body
        T.check(ok, "example %d (%s)" % (n, first.strip()), "exit %d\n%s" % (p.returncode, p.stderr))
    sys.exit(T.finish())


main()
