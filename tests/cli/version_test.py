#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# version_test.py - one version everywhere: meson's project version.
#
#   version_test.py TRACEBOOK VERSION SAMPLES OUT_DIR
#
# VERSION is meson.project_version(). `tracebook --version`, the META_DATA
# row TRACEBOOK_VERSION of an exported DB and the "version" of
# tracebook_run.json must all say it.
import json
import os
import shutil
import sqlite3
import subprocess
import sys


def main():
    exe, version, samples, out = sys.argv[1:5]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    bad = 0

    got = subprocess.run([exe, "--version"], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    if got != "tracebook " + version:
        print("FAIL: --version says %r, the project is %s" % (got, version))
        bad += 1

    db = os.path.join(out, "sample.db")
    subprocess.run([exe, "export", "db", "-dir", os.path.join(samples, "ascend_small"), "-o", db, "-q"], check=True)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT value FROM META_DATA WHERE name = 'TRACEBOOK_VERSION'").fetchall()
    con.close()
    if rows != [(version,)]:
        print("FAIL: META_DATA TRACEBOOK_VERSION is %r, the project is %s" % (rows, version))
        bad += 1

    rep = os.path.join(out, "report")
    subprocess.run([exe, "report", "-dir", db, "--spec", "builtin:step_trace_time",
                    "-q", "-o", rep], check=True)
    with open(os.path.join(rep, "tracebook_run.json")) as f:
        run_version = json.load(f).get("version")
    if run_version != version:
        print("FAIL: tracebook_run.json version is %r, the project is %s" % (run_version, version))
        bad += 1

    if bad:
        return 1
    print("version: --version, META_DATA and tracebook_run.json say %s" % version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
