#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# check_registered.py - configure-time check that every test file under
# tests/ is registered in tests/meson.build (a test nobody runs is worse than
# none). A helper module the tests import is not a test: HELPERS names each
# one, so any other file in its folder must still be registered.
# usage: check_registered.py TESTS_DIR REGISTERED_FILE...
import os
import sys

TEST_DIRS = {"unit": (".c",), "layout": (".py",), "cli": (".py", ".sh"), "conformance": (".py",), "gen": (".py",),
             "install": (".py", ".c"),
             "fuzz": (".c", ".py"), "bad-inputs": (".py",),
             "faults": (".py",), "lib": (".py",)}
HELPERS = {"lib/tbtest.py"}

root = sys.argv[1]
registered = {os.path.normpath(os.path.join(root, p)) if not os.path.isabs(p) else os.path.normpath(p)
              for p in sys.argv[2:]}
missing = []
for d, exts in TEST_DIRS.items():
    full = os.path.join(root, d)
    if not os.path.isdir(full):
        continue
    for name in sorted(os.listdir(full)):
        path = os.path.normpath(os.path.join(full, name))
        helper = os.path.join(d, name) in HELPERS
        if name.endswith(exts) and not name.startswith("_") and not helper and path not in registered:
            missing.append(os.path.relpath(path, root))
if missing:
    print("tests not registered in tests/meson.build: " + ", ".join(missing))
    sys.exit(1)
