#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# testsummary.py - one closing line `N passed, N failed, N skipped` from
# meson's testlog.json files (one JSON object per test run and line).
#
# When tests were skipped, the line goes on with why, per suite, in
# parentheses: `3 passed, 0 failed, 4 skipped (conformance: ../shared/data/public
# not found)`. The reason is the last line a skipped test printed (meson keeps
# a test's stdout in testlog.json), without a leading "skip:" or "skipped:",
# absolute paths shown relative to the current directory; a suite's equal
# reasons are given once. The line always starts with the three counts, which
# is what CI reads. Exits 1 when a test failed or a log is missing.
import json
import os
import re
import sys


def reason(test):
    lines = [l.strip() for l in (test.get("stdout") or "").splitlines() if l.strip()]
    if not lines:
        return "no reason given"
    text = re.sub(r"^(skip(ped)?)\s*:\s*", "", lines[-1], flags=re.I)
    return re.sub(r"/[^\s'\"]+", lambda m: os.path.relpath(m.group(0)), text)


passed = failed = skipped = 0
why = {}  # suite -> reasons, in order
missing = False
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                test = json.loads(line)
                r = test.get("result")
                if r in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif r == "SKIP":
                    skipped += 1
                    # the name is "project:suite / test" (meson 1.0 logs no suite field)
                    suite = test.get("name", "").split(" / ")[0].split(":")[-1] or "?"
                    reasons = why.setdefault(suite, [])
                    if reason(test) not in reasons:
                        reasons.append(reason(test))
                else:
                    failed += 1
    except OSError as e:
        print("testsummary: cannot read %s: %s" % (path, e.strerror), file=sys.stderr)
        missing = True
line = "%d passed, %d failed, %d skipped" % (passed, failed, skipped)
if why:
    line += " (%s)" % "; ".join("%s: %s" % (s, ", ".join(r)) for s, r in why.items())
print(line)
sys.exit(1 if failed or missing else 0)
