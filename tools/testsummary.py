#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# testsummary.py - one closing line `N passed, N failed, N skipped` from
# meson's testlog.json files (one JSON object per test run and line).
# Exits 1 when a test failed or a log is missing.
import json
import sys

passed = failed = skipped = 0
missing = False
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                r = json.loads(line).get("result")
                if r in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif r == "SKIP":
                    skipped += 1
                else:
                    failed += 1
    except OSError as e:
        print("testsummary: cannot read %s: %s" % (path, e.strerror), file=sys.stderr)
        missing = True
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed or missing else 0)
