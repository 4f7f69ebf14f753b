#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# bound_test.py - tools/bench/tracebook-bound, the SQLite bound the
# benchmark prints (tests/bench/bench.sh): it must write the very rows and
# indexes of the DB it reads, or the bound would time something else.
#
# It loads samples/ascend_small and a generated device-heavy trace
# (tracebook-gen --mix device) with `tracebook export db`, runs
# tracebook-bound on each DB, and checks its line ("rows N tables T insert_s
# S index_s S total_s S"), that N is the sum of the source tables' rows,
# that every table of the copy holds the same rows in the same order as the
# source, generated columns included, and that the copy has the same
# indexes. Then its refusals: an existing DST (exit 2, the file untouched)
# and a SRC that is no SQLite DB (exit 1, a message naming the file). With
# --each, a line per table (its rows) and per index built after the rows on
# standard error.
#
# usage: bound_test.py TRACEBOOK TRACEBOOK_BOUND TRACEBOOK_GEN SAMPLES_DIR OUTDIR
# Prints one `ok`/`FAIL` line per case and a final `N passed, N failed`
# line; exits 0 when all pass, 1 otherwise.
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, BOUND, GEN, SAMPLES, OUT = tbtest.args("TRACEBOOK TRACEBOOK_BOUND TRACEBOOK_GEN SAMPLES_DIR OUTDIR", 5, 5)
LINE = re.compile(r"^rows (\d+) tables (\d+) insert_s ([0-9.]+) index_s ([0-9.]+) total_s ([0-9.]+)\n$")


def load(src, name):
    db = os.path.join(OUT, name + ".db")
    r = tbtest.run([TB, "export", "db", "-dir", src, "-o", db, "--quiet"])
    assert r.returncode == 0, r.stderr
    return db


def tables(con):
    return [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                      "AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def same_rows(src, name):
    db = load(src, name)
    dst = os.path.join(OUT, name + ".bound.db")
    r = tbtest.run([BOUND, db, dst])
    assert r.returncode == 0 and not r.stderr, (r.returncode, r.stderr)
    m = LINE.match(r.stdout)
    assert m, r.stdout
    a, b = sqlite3.connect(db), sqlite3.connect(dst)
    names = tables(a)
    assert tables(b) == names, (tables(b), names)
    total = 0
    for t in names:
        rows = a.execute('SELECT * FROM "%s" ORDER BY rowid' % t).fetchall() if t != "STRING_IDS" else \
            a.execute('SELECT * FROM "%s" ORDER BY id' % t).fetchall()
        got = b.execute('SELECT * FROM "%s" ORDER BY rowid' % t).fetchall() if t != "STRING_IDS" else \
            b.execute('SELECT * FROM "%s" ORDER BY id' % t).fetchall()
        assert got == rows, "%s: %d rows copied, %d in the source" % (t, len(got), len(rows))
        total += len(rows)
    assert int(m.group(1)) == total and int(m.group(2)) == len(names), (m.groups(), total, len(names))
    idx = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
    assert b.execute(idx).fetchall() == a.execute(idx).fetchall()
    assert total > 1000, total
    return db


def case_sample():
    same_rows(os.path.join(SAMPLES, "ascend_small"), "sample")


def case_device_mix():
    trace = os.path.join(OUT, "device", "trace_view.json")
    os.makedirs(os.path.dirname(trace), exist_ok=True)
    r = tbtest.run([GEN, "--kind", "ascend", "--mix", "device", "--events", "5000", "--seed", "2", "-o", trace])
    assert r.returncode == 0, r.stderr
    db = same_rows(trace, "device")
    con = sqlite3.connect(db)
    tasks = con.execute("SELECT count(*) FROM TASK").fetchone()[0]
    assert tasks > 500 and con.execute("SELECT count(*) FROM PYTORCH_API").fetchone()[0] < tasks / 10


def case_each():
    # --each: a line per table with rows (its rows and insert seconds) and per index built after the rows
    # on standard error; standard output as without it
    db = os.path.join(OUT, "device.db")
    if not os.path.exists(db):
        case_device_mix()
    dst = os.path.join(OUT, "each.bound.db")
    r = tbtest.run([BOUND, "--each", db, dst])
    assert r.returncode == 0 and LINE.match(r.stdout), (r.returncode, r.stdout, r.stderr)
    con = sqlite3.connect(db)
    counts = {t: con.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0] for t in tables(con)}
    indexes = {x[0] for x in con.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")}
    con.close()
    got, built = {}, []
    for line in r.stderr.splitlines():
        m = re.match(r"^table (\S+) rows (\d+) insert_s [0-9.]+$", line) or \
            re.match(r"^index (\S+) index_s [0-9.]+$", line)
        assert m, line
        if line.startswith("table "):
            got[m.group(1)] = int(m.group(2))
        else:
            built.append(m.group(1))
    assert got == {t: n for t, n in counts.items() if n}, (got, counts)
    assert sum(got.values()) == int(LINE.match(r.stdout).group(1))
    assert built and set(built) < indexes and "STEP_TIME_id" in built, (built, indexes)
    r = tbtest.run([BOUND, "--each", db])
    assert r.returncode == 2 and "usage" in r.stderr, (r.returncode, r.stderr)

def case_refusals():
    db = os.path.join(OUT, "sample.db")
    if not os.path.exists(db):
        db = load(os.path.join(SAMPLES, "ascend_small"), "sample")
    taken = os.path.join(OUT, "taken.db")
    with open(taken, "w") as f:
        f.write("keep me\n")
    r = tbtest.run([BOUND, db, taken])
    assert r.returncode == 2 and taken in r.stderr and "exists" in r.stderr, (r.returncode, r.stderr)
    with open(taken) as f:
        assert f.read() == "keep me\n"
    junk = os.path.join(OUT, "junk.db")
    with open(junk, "w") as f:
        f.write("not a database, but long enough to be read as one by SQLite's header check\n" * 20)
    r = tbtest.run([BOUND, junk, os.path.join(OUT, "new.db")])
    assert r.returncode == 1 and junk in r.stderr, (r.returncode, r.stderr)


if __name__ == "__main__":
    tbtest.fresh_dir(OUT)
    tbtest.use_cache(os.path.join(OUT, "cache"))
    suite = tbtest.Suite(work=OUT)
    suite.collect(globals())
    suite.main()
