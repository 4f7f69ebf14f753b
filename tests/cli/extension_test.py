#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# extension_test.py - the loadable SQLite extension gives a spec's rows.
#
#   extension_test.py TRACEBOOK EXTENSION SOURCE_ROOT OUT_DIR
#
# Exports samples/ascend_small into a DB with the command, then loads
# EXTENSION (tracebook.so) into Python's sqlite3 module and checks that
#   - SELECT * FROM <computed table> gives the rows (and column names) of
#     `tracebook query --format csv` with the same SQL, for the step trace,
#     breakdown and cluster families;
#   - the SQL of the built-in report step_trace_time (reports/step_trace.yaml)
#     gives the rows of `tracebook report` for it (times in ns);
#   - a table first named while another is being read is built all the same;
#   - median() and union_ns() give what the command's SQL functions give;
#   - the sqlite3 shell (`.load`) prints the same step_trace_time;
#   - a DB that is not tracebook's and an in-memory DB fail with a message.
# A Python built without loadable extensions (no enable_load_extension) runs
# the test with /usr/bin/python3 instead, or skips (exit 77) saying why.
import csv
import io
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

T = tbtest.Checks()


def same_value(py, text):
    """A value from Python's sqlite3 equals the command's CSV field."""
    if py is None:
        return text == ""
    if isinstance(py, float):
        # the command writes reals to 15 significant digits (no binary noise)
        try:
            return float(text) == float("%.15g" % py)
        except ValueError:
            return False
    return str(py) == text


def same_rows(got, expected):
    return len(got) == len(expected) and all(
        len(g) == len(e) and all(same_value(a, b) for a, b in zip(g, e)) for g, e in zip(got, expected))


def cli_query(exe, db, sql):
    p = tbtest.run([exe, "query", "-dir", db, "--format", "csv", "-q", sql])
    if p.returncode != 0:
        print("tracebook query failed: %s" % p.stderr)
        sys.exit(1)
    rows = list(csv.reader(io.StringIO(p.stdout)))
    return rows[0], rows[1:]


def connect(db, ext):
    con = sqlite3.connect(db)
    con.enable_load_extension(True)
    con.load_extension(ext)
    con.enable_load_extension(False)
    return con


def main():
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        tbtest.rerun_with_system_python("import sqlite3, yaml; sqlite3.Connection.enable_load_extension")
        tbtest.skip("this Python's sqlite3 module cannot load extensions (built without it)")

    import yaml  # after the interpreter is settled: the other one has its own

    exe, ext, root, out = tbtest.args("TRACEBOOK EXTENSION SOURCE_ROOT OUT_DIR", 4, 4)
    tbtest.fresh_dir(out)
    db = os.path.join(out, "sample.db")
    tbtest.run([exe, "export", "db", "-dir", os.path.join(root, "samples", "ascend_small"), "-o", db, "-q"], code=0)
    con = connect(db, ext)

    # every family: the table as the command's SQL sees it
    for table in ("step_trace_time", "overlap_lanes", "overlap_consistency", "temporal_breakdown",
                  "idle_time_breakdown", "exposed_time", "cluster_step_trace_time", "slow_rank",
                  "communication_matrix", "slow_rank_vote_ops", "queue_length", "queue_length_summary",
                  "hta_trace_span", "kernel_launch_stats", "memory_bw", "memory_bw_summary", "user_annotation",
                  "aten_op_kernels", "straggler_metric", "cluster_time_summary",
                  "communication_group_map", "mstx_marks", "module_stats", "free_time", "pp_schedule",
                  "pp_dualpipev_tasks", "pp_dualpipev", "call_stack", "critical_path"):
        cur = con.execute("SELECT * FROM %s" % table)
        got = cur.fetchall()
        names = [d[0] for d in cur.description]
        header, expected = cli_query(exe, db, "SELECT * FROM %s" % table)
        T.check(names == header, "%s: columns %s, the command's %s" % (table, names, header))
        T.check(same_rows(got, expected), "%s: rows\n%s\nthe command's\n%s" % (table, got, expected))
    T.check(len(con.execute("SELECT * FROM step_trace_time").fetchall()) >= 2, "step_trace_time has rows")

    # a table first named while a scan of another is still running
    running = con.execute("SELECT * FROM step_trace_time")
    first = running.fetchone()
    got = con.execute("SELECT * FROM slow_rank_op").fetchall()
    _, expected = cli_query(exe, db, "SELECT * FROM slow_rank_op")
    T.check(same_rows(got, expected), "slow_rank_op during a scan: %s, the command's %s" % (got, expected))
    rest = running.fetchall()
    T.check([first] + rest == con.execute("SELECT * FROM step_trace_time").fetchall(),
            "the interrupted scan goes on with the same rows")

    # the built-in report's own SQL, against the report's CSV
    with open(os.path.join(root, "reports", "step_trace.yaml")) as f:
        spec = yaml.safe_load(f)
    sql = next(r["sql"] for r in spec["reports"] if r["id"] == "step_trace_time")
    cur = con.execute(sql)
    # as the runner writes it: no helper columns, and a :rank column only for several ranks
    ranks = con.execute("SELECT count(DISTINCT rankId) FROM TB_RANK").fetchone()[0]
    keep = [i for i, d in enumerate(cur.description)
            if not d[0].startswith("_") and not (d[0].endswith(":rank") and ranks < 2)]
    got = [[row[i] for i in keep] for row in cur.fetchall()]
    rep = os.path.join(out, "report")
    tbtest.run([exe, "report", "-dir", db, "--spec", "builtin:step_trace_time",
                "--format", "csv", "--timeunit", "ns", "-q", "-o", rep], code=0)
    with open(os.path.join(rep, "step_trace_time.csv"), newline="") as f:
        expected = list(csv.reader(f))[1:]
    T.check(len(expected) >= 2 and same_rows(got, expected),
            "report step_trace_time: rows\n%s\nthe report's\n%s" % (got, expected))

    # SQL functions
    sql = ("SELECT median(endNs - startNs), union_ns(startNs, endNs), percentile(endNs - startNs, 90), "
           "stdev(endNs - startNs) FROM TASK")
    got = con.execute(sql).fetchall()
    _, expected = cli_query(exe, db, sql)
    T.check(same_rows(got, expected), "SQL functions: %s, the command's %s" % (got, expected))
    T.check(con.execute("SELECT tracebook_version()").fetchone()[0] ==
            tbtest.run([exe, "--version"]).stdout.split()[-1],
            "tracebook_version() is the command's version")
    con.close()

    # the sqlite3 shell
    shell = shutil.which("sqlite3")
    if T.check(shell is not None, "the sqlite3 shell is installed"):
        p = tbtest.run([shell, "-csv", "-header", db, ".load " + ext, "SELECT * FROM step_trace_time"])
        header, expected = cli_query(exe, db, "SELECT * FROM step_trace_time")
        shown = list(csv.reader(io.StringIO(p.stdout)))
        T.check(p.returncode == 0 and shown == [header] + expected,
                "sqlite3 shell: %s%s\nthe command's\n%s" % (p.stdout, p.stderr, [header] + expected))

    # errors: not tracebook's DB, an in-memory DB
    other = os.path.join(out, "other.db")
    c = sqlite3.connect(other)
    c.execute("CREATE TABLE t(x)")
    c.commit()
    c.close()
    for path, message in ((other, "not a unified trace DB (no STRING_IDS table)"),
                          (":memory:", "this connection's main DB is in memory")):
        c = connect(path, ext)
        try:
            c.execute("SELECT * FROM step_trace_time").fetchall()
            T.check(False, "%s: step_trace_time did not fail" % path)
        except sqlite3.Error as e:
            T.check(message in str(e), "%s: error %r names %r" % (path, str(e), message))
        T.check(c.execute("SELECT median(x) FROM (SELECT 1 AS x UNION ALL SELECT 4)").fetchone()[0] == 2.5,
                "%s: median() works without a trace DB" % path)
        c.close()

    if not T.problems:
        print("extension: computed tables, a built-in report's SQL, SQL functions and the shell agree with the command")
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
