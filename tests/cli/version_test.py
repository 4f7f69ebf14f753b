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
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402


def main():
    exe, version, samples, out = tbtest.args("TRACEBOOK VERSION SAMPLES OUT_DIR", 4, 4)
    tbtest.fresh_dir(out)
    T = tbtest.Checks()

    got = tbtest.run([exe, "--version"], code=0).stdout.strip()
    T.check(got == "tracebook " + version, "--version says %r, the project is %s" % (got, version))

    db = os.path.join(out, "sample.db")
    tbtest.run([exe, "export", "db", "-dir", os.path.join(samples, "ascend_small"), "-o", db, "-q"], code=0)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT value FROM META_DATA WHERE name = 'TRACEBOOK_VERSION'").fetchall()
    con.close()
    T.check(rows == [(version,)], "META_DATA TRACEBOOK_VERSION is %r, the project is %s" % (rows, version))

    rep = os.path.join(out, "report")
    tbtest.run([exe, "report", "-dir", db, "--spec", "builtin:step_trace_time", "-q", "-o", rep], code=0)
    with open(os.path.join(rep, "tracebook_run.json")) as f:
        run_version = json.load(f).get("version")
    T.check(run_version == version, "tracebook_run.json version is %r, the project is %s" % (run_version, version))

    if not T.problems:
        print("version: --version, META_DATA and tracebook_run.json say %s" % version)
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
