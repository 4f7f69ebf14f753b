#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# cli_test.py - the `tracebook` command's behaviour, exit codes and messages.
#
# Each case runs the built binary on the checked-in samples or on small
# traces written here (malformed, cut short, with raw control characters,
# unknown phases, gzip, several ranks) and asserts what a user sees: the
# exit code, the exact stdout/stderr text where it is deterministic, which
# files exist afterwards (no half DBs, no temporary leftovers, an older DB of
# the same name untouched after a failure) and, through the `sqlite3` shell,
# the row counts in the DB. Expected values are computed independently from
# the inputs with Python's json module, never read back from tracebook.
#
# Every run writes with -o into a directory made by tempfile.mkdtemp under
# $TMPDIR (one tree per run of this script, removed when all cases pass),
# except the default-output-name case, which copies its input into such a
# directory first. Runs get their own TMPDIR, XDG_CACHE_HOME and an empty
# working directory; a run that leaves anything in its working directory or
# TMPDIR fails its case.
# The samples are checked to be unchanged at the end.
#
# usage: cli_test.py TRACEBOOK SAMPLES_DIR [CASE_SUBSTRING ...]
# Prints one `ok`/`FAIL` line per case (failures with their details) and a
# final `N passed, N failed` line; exits 0 when all pass, 1 otherwise.
# Python 3 standard library and the `sqlite3` command only.

import collections
import datetime
import decimal
import fnmatch
import gzip
import hashlib
import csv
import io
import json
import os
import pty
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

VERSION = "0.1.0"

EXIT_CODES_HELP = (
    "exit codes:\n"
    "  0  success\n"
    "  1  internal error\n"
    "  2  usage error (bad command line)\n"
    "  3  malformed input, or an input cut short with --strict\n"
    "  4  a file could not be read or written\n"
    "  5  SQLite error\n"
    "  6  no usable input found\n"
    "  7  --fail-on-warning: the load or the run warned (the outputs are written)\n"
)

NO_TRACE_MSG = "no input found (looked for msprof/torch_npu timelines and DBs, Kineto traces, topsprof listings)"
LEFTOVER_PATTERNS = ("*.tmp-*", ".tracebook-pending-*")

TB = None        # path of the binary
SAMPLES = None   # samples/ directory
ASCEND = None    # samples/ascend_small/trace_view.json
KINETO = None    # samples/kineto_small/trace.json
ROOT = None      # this run's temporary tree


# ---- harness -------------------------------------------------------------------

class Case(tbtest.Case):
    """One test case: a sandbox directory and the list of problems found."""

    def run(self, args, default_out=False, outside_ok=False, stderr_fd=None, stdout_fd=None):
        """Runs tracebook in the case's empty working directory; checks that it
        left nothing there or in its TMPDIR. default_out: an `export db` without
        -o on purpose; outside_ok: -o points outside the temporary tree (/proc)."""
        args = [str(a) for a in args]
        loads = any(a in ("-dir", "--dir") or a.startswith(("-dir=", "--dir=")) for a in args)
        if args[:2] == ["export", "db"] and loads and not default_out and not outside_ok:
            out = None
            for i, a in enumerate(args):
                name, eq, value = a.partition("=")
                if name in ("-o", "--output", "-output"):
                    out = value if eq else args[i + 1] if i + 1 < len(args) else None
            # a safety net for the test itself: never let a run write beside the samples
            if out != "-" and (out is None or not os.path.abspath(out).startswith(ROOT + os.sep)):
                raise AssertionError("test bug: export db run without -o into the temporary tree: %r" % args)
        try:
            res = super().run(args, timeout=120, errors="surrogateescape",
                              stdout=subprocess.PIPE if stdout_fd is None else stdout_fd,
                              stderr=subprocess.PIPE if stderr_fd is None else stderr_fd)
        except subprocess.TimeoutExpired:
            self.fail("timed out: tracebook %s" % " ".join(args))
            return tbtest.Result(None, "", "")
        for d, what in ((self.cwd, "its working directory"), (self.tmp, "TMPDIR")):
            left = sorted(os.listdir(d))
            if left:
                self.fail("tracebook %s left files in %s: %s" % (" ".join(args), what, left))
                for n in left:
                    path = os.path.join(d, n)
                    shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
        return res

    def expect(self, res, rc, out=None, err=None, what=""):
        """Checks exit code and (when given) exact stdout / stderr."""
        label = (what + ": ") if what else ""
        ok = self.eq(res.rc, rc, label + "exit code (%r)" % res)
        if out is not None:
            ok &= self.eq(res.out, out, label + "stdout")
        if err is not None:
            ok &= self.eq(res.err, err, label + "stderr")
        return ok


SUITE = tbtest.Suite(case_class=Case, name="cli_test")
case = SUITE.case


# ---- helpers -------------------------------------------------------------------

def sql(db, query):
    """Rows of query on db (a list of dicts), through the sqlite3 shell, read-only."""
    p = subprocess.run(["sqlite3", "-readonly", "-json", db, query], capture_output=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("sqlite3 %s %r: %s" % (db, query, p.stderr.decode(errors="replace").strip()))
    text = p.stdout.decode("utf-8", "surrogateescape").strip()
    return json.loads(text) if text else []


def scalar(db, query):
    rows = sql(db, query)
    if not rows:
        return None
    return next(iter(rows[0].values()))


def load_counts(db, source_id=1):
    """TB_LOAD_COUNT of one source as {dest: events}."""
    return {r["dest"]: r["events"] for r in
            sql(db, "SELECT dest, events FROM TB_LOAD_COUNT WHERE sourceId = %d" % source_id)}


def table_counts(db):
    """{table: rows} for every table of db."""
    names = [r["name"] for r in sql(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    if not names:
        return {}
    q = " UNION ALL ".join("SELECT '%s' AS t, count(*) AS n FROM \"%s\"" % (n, n) for n in names)
    return {r["t"]: r["n"] for r in sql(db, q)}


def rank_tables(db):
    """Tables that have a rankId column."""
    return [r["name"] for r in sql(db, "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c"
                                       " WHERE m.type = 'table' AND c.name = 'rankId' ORDER BY m.name")]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def listing(d):
    return sorted(os.listdir(d))


def leftovers(d):
    return [n for n in os.listdir(d) if any(fnmatch.fnmatch(n, p) for p in LEFTOVER_PATTERNS)]


def fingerprint(path):
    st = os.stat(path)
    return (hashlib.sha256(read(path)).hexdigest(), st.st_size, st.st_mtime_ns)


def line_col(data, offset):
    """1-based line and column (in bytes) of a byte offset."""
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


def scan_events(data):
    """Reads the events of a JSON trace (top-level array or traceEvents) one by one
    with json.JSONDecoder.raw_decode. Returns (complete events, byte offset where
    the first incomplete event starts, or None when the array is complete)."""
    t = data.decode("latin-1")  # one char per byte: offsets are byte offsets
    dec = json.JSONDecoder()

    def skip(p):
        while p < len(t) and t[p] in " \t\r\n":
            p += 1
        return p

    p = skip(0)
    if t[p] == "[":
        p += 1
    else:
        p = t.index("[", t.index('"traceEvents"')) + 1
    evs = []
    p = skip(p)
    while True:
        if p < len(t) and t[p] == "]":
            return evs, None
        if evs:
            if p < len(t) and t[p] == ",":
                p = skip(p + 1)
            elif p < len(t):
                raise ValueError("unexpected %r at byte %d" % (t[p], p))
        try:
            ev, end = dec.raw_decode(t, p)
        except ValueError:
            return evs, p
        evs.append(ev)
        p = skip(end)


def make_old_db(path):
    """Creates a small SQLite DB with known content (the DB a failed run must not touch)."""
    subprocess.run(["sqlite3", path, "CREATE TABLE keep(x TEXT); INSERT INTO keep VALUES('precious');"],
                   check=True, capture_output=True, timeout=60)
    return read(path)


_usage = {}


def usage(kind):
    """The help text of the main command ('main'), 'export' or 'info', as printed on stdout."""
    if kind not in _usage:
        args = {"main": ["--help"], "export": ["help", "export"], "info": ["help", "info"],
                "report": ["help", "report"]}[kind]
        _usage[kind] = tbtest.run([TB] + args, timeout=60, cwd=ROOT, errors="strict").out
    return _usage[kind]


def usage_error(topic, msg):
    """What a usage error prints: one line, then the help command to try."""
    return "tracebook: error: %s\ntry 'tracebook help%s'\n" % (msg, " " + topic if topic else "")


def ts_ns(v):
    """A trace ts (µs, number or string) in integer ns."""
    return int(decimal.Decimal(str(v).strip()) * 1000)


def step_summary(events):
    """(count, first, last) of the ProfilerStep#N host steps in events."""
    ids = sorted({int(e["name"].split("#", 1)[1]) for e in events
                  if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
                  and e.get("cat") != "gpu_user_annotation"})
    return len(ids), ids[0], ids[-1]


def info_sections(text):
    """Section titles of `info` output (lines that start a section), in order."""
    lines = text.split("\n")
    return [lines[i] for i in range(1, len(lines)) if lines[i - 1] == "" and lines[i] and lines[i][0] != " "]


# ---- 1. usage ----------------------------------------------------------------------

@case("usage: --help, -h, help")
def _(t):
    r = t.run(["--help"])
    t.expect(r, 0, err="")
    t.check(r.out.startswith("usage: tracebook <command> [options]\n"), "--help starts with the usage line: %r" % r.out[:80])
    t.check(EXIT_CODES_HELP in r.out, "--help lists the exit codes 0-7:\n%s" % r.out)
    for cmd in ("  export db ", "  info ", "  help CMD "):
        t.check(cmd in r.out, "--help lists %r" % cmd.strip())
    for args in (["-h"], ["help"]):
        r2 = t.run(args)
        t.expect(r2, 0, out=r.out, err="", what=" ".join(args))


@case("usage: --version, -V")
def _(t):
    for a in ("--version", "-V"):
        t.expect(t.run([a]), 0, out="tracebook %s\n" % VERSION, err="", what=a)


@case("usage: help export / help info")
def _(t):
    r = t.run(["help", "export"])
    t.expect(r, 0, err="")
    t.check(r.out.startswith("usage: tracebook export db -dir PATH [-dir PATH ...] [-o FILE|DIR] [options]\n"),
            "help export usage line: %r" % r.out[:100])
    for opt in ("-dir, --dir PATH", "-o, --output FILE|DIR", "--strict", "--keep-python-functions",
                "--timing", "-q, --quiet", "msprof_<UTC YYYYMMDDhhmmss>.db"):
        t.check(opt in r.out, "help export mentions %r" % opt)
    for args in (["export", "db", "--help"], ["export", "db", "-h"], ["export", "--help"], ["export", "-h"]):
        t.expect(t.run(args), 0, out=r.out, err="", what=" ".join(args))
    r = t.run(["help", "info"])
    t.expect(r, 0, err="")
    t.check(r.out.startswith("usage: tracebook info -dir PATH [-dir PATH ...] [options]\n"),
            "help info usage line: %r" % r.out[:100])
    for opt in ("-dir, --dir PATH", "--strict", "--keep-python-functions", "-q, --quiet"):
        t.check(opt in r.out, "help info mentions %r" % opt)
    t.check("--output" not in r.out, "help info has no -o")
    t.expect(t.run(["info", "--help"]), 0, out=r.out, err="", what="info --help")


@case("usage: no arguments -> exit 2, usage on stderr")
def _(t):
    t.expect(t.run([]), 2, out="", err=usage("main"))


@case("usage: unknown command -> exit 2")
def _(t):
    msg = usage_error("", "unknown command 'frobnicate'")
    t.expect(t.run(["frobnicate"]), 2, out="", err=msg, what="frobnicate")
    t.expect(t.run(["help", "frobnicate"]), 2, out="", err=msg, what="help frobnicate")


@case("usage: unknown option -> exit 2, nothing written")
def _(t):
    out = t.mkdir("out")
    r = t.run(["export", "db", "--frobnicate", "-dir", ASCEND, "-o", os.path.join(out, "x.db")])
    t.expect(r, 2, out="", err=usage_error("export", "unknown option '--frobnicate'"))
    r = t.run(["info", "-dir", ASCEND, "-o", os.path.join(out, "x.db")])
    t.expect(r, 2, out="", err=usage_error("info", "unknown option '-o'"), what="info -o")
    t.eq(listing(out), [], "files in the output directory")


@case("usage: export db without -dir -> exit 2")
def _(t):
    out = t.mkdir("out")
    t.expect(t.run(["export", "db", "-o", os.path.join(out, "x.db")]), 2, out="",
             err=usage_error("export", "no input: give -dir PATH"))
    t.expect(t.run(["info"]), 2, out="",
             err=usage_error("info", "no input: give -dir PATH"), what="info")
    t.expect(t.run(["export"]), 2, out="", err=usage_error("export", "export needs a type: db, timeline, summary"), what="export alone")
    t.expect(t.run(["export", "db", "-o", os.path.join(out, "x.db"), "-dir"]), 2, out="",
             err=usage_error("export", "option '-dir' needs a path"), what="-dir without a value")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o"], outside_ok=True), 2, out="",
             err=usage_error("export", "option '-o' needs a path"), what="-o without a value")
    t.eq(listing(out), [], "files in the output directory")


@case("usage: export of an unknown type -> exit 2, this version exports db and timeline")
def _(t):
    out = t.mkdir("out")
    r = t.run(["export", "nosuch", "-dir", ASCEND, "-o", os.path.join(out, "t.json")])
    t.expect(r, 2, out="",
             err=usage_error("export", "unknown export type 'nosuch' (this version exports: db, timeline, summary)"))
    t.eq(listing(out), [], "files in the output directory")


@case("usage: --dir=PATH and --output=FILE forms; stdout is the DB path")
def _(t):
    out = os.path.join(t.mkdir("out"), "eq.db")
    r = t.run(["export", "db", "--dir=" + ASCEND, "--output=" + out])
    t.expect(r, 0, out=out + "\n", err="")
    if os.path.exists(out):
        t.eq(scalar(out, "SELECT rowsRead FROM TB_SOURCE"), 2500, "rowsRead")


@case("usage: every option in every form: -name V, --name V, --name=V, -name=V")
def _(t):
    out = t.mkdir("out")
    for i, form in enumerate((["-dir", ASCEND, "-output", "%s/a%d.db"], ["--dir", ASCEND, "--output", "%s/a%d.db"],
                              ["--dir=" + ASCEND, "--output=%s/a%d.db"], ["-dir=" + ASCEND, "-o", "%s/a%d.db"])):
        args = [a % (out, i) if "%s" in a else a for a in form]
        db = "%s/a%d.db" % (out, i)
        t.expect(t.run(["export", "db", "-quiet"] + args), 0, out=db + "\n", err="", what=" ".join(form))
    # the same spellings for report and query options
    r = t.run(["query", "-dir=" + ASCEND, "-format", "csv", "--timeunit=ms", "-max-steps=100000000",
               "SELECT 1500000 AS \"T:dur_ns\""])
    t.expect(r, 0, out="T(ms)\n1.5\n", err="", what="query options")
    r = t.run(["report", "-q", "-dir", ASCEND, "-spec=builtin:top_kernels", "-param", "top=1", "-format=json",
               "-o", os.path.join(out, "r")])
    t.expect(r, 0, out="", err="", what="report options")
    t.eq(len(json.loads(read(os.path.join(out, "r", "top_kernels.json")))), 1, "-param top=1 gives one row")
    # `--` ends the options: a statement may then start with a dash
    r = t.run(["query", "-dir", ASCEND, "--format", "csv", "--", "-- a comment first\nSELECT 2 AS x"])
    t.expect(r, 0, out="x\n2\n", err="", what="-- before the SQL")


@case("usage: a single-valued option given twice, a flag given a value, extra arguments")
def _(t):
    out = t.mkdir("out")
    a, b = os.path.join(out, "a.db"), os.path.join(out, "b.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", a, "--output=" + b]), 2, out="",
             err=usage_error("export", "option '--output' given twice ('%s', then '%s'): it takes one value" % (a, b)))
    t.expect(t.run(["query", "-dir", ASCEND, "--format", "csv", "--format", "json", "SELECT 1"]), 2, out="",
             err=usage_error("query", "option '--format' given twice ('csv', then 'json'): it takes one value"))
    t.expect(t.run(["report", "-dir", ASCEND, "--spec", "builtin:top_kernels", "--timeunit", "ms", "-timeunit",
                    "s"]), 2, out="",
             err=usage_error("report", "option '-timeunit' given twice ('ms', then 's'): it takes one value"))
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", a, "--strict=yes"]), 2, out="",
             err=usage_error("export", "option '--strict' takes no value"))
    t.expect(t.run(["query", "-dir", ASCEND, "SELECT 1", "SELECT 2"]), 2, out="",
             err=usage_error("query", "unexpected argument 'SELECT 2' (query takes one SQL statement)"))
    t.expect(t.run(["query", "-dir", ASCEND]), 2, out="", err=usage_error("query", "no SQL statement given"))
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", a, "extra"]), 2, out="",
             err=usage_error("export", "unexpected argument 'extra'"))
    t.expect(t.run(["reports", "a", "b"]), 2, out="",
             err=usage_error("reports", "unexpected argument 'b' (reports takes one report name)"))
    # repeatable options keep every value
    r = t.run(["query", "-dir", ASCEND, "--format", "csv", "--param", "a=1", "--param=b=x", "SELECT :a AS a, :b AS b"])
    t.expect(r, 0, out="a,b\n1,x\n", err="", what="--param twice")
    t.eq(listing(out), [], "nothing written")


@case("usage: options the chosen mode would ignore are errors")
def _(t):
    out = t.mkdir("out")
    f = os.path.join(out, "q.csv")
    t.expect(t.run(["query", "-dir", ASCEND, "-o", f, "SELECT 1"]), 2, out="",
             err=usage_error("query", "-o: the console table goes to stdout; give --format csv or json to write a "
                                      "file"))
    t.expect(t.run(["query", "-dir", ASCEND, "--format", "json", "--max-rows", "5", "SELECT 1"]), 2, out="",
             err=usage_error("query", "--max-rows: only the console table has a row limit (--format json writes "
                                      "every row)"))
    t.expect(t.run(["report", "-dir", ASCEND, "--spec", "builtin:top_kernels", "--format", "console", "-o", out]), 2,
             out="", err=usage_error("report", "-o: --format console writes no files; drop -o or add csv or json"))
    t.expect(t.run(["report", "-dir", ASCEND, "--spec", "builtin:top_kernels", "-o", "-"]), 2, out="",
             err=usage_error("report", "-o -: report writes a directory of files; give a directory"))
    t.expect(t.run(["info", "-dir", ASCEND, "--timing"]), 2, out="",
             err=usage_error("info", "unknown option '--timing'"))
    t.eq(listing(out), [], "nothing written")


@case("-o: '-' is stdout where one file is written; missing directories are created")
def _(t):
    out = t.mkdir("out")
    db = os.path.join(out, "ref.db")
    t.expect(t.run(["export", "db", "-q", "-dir", ASCEND, "-o", db]), 0)
    r = t.run(["export", "db", "-q", "-dir", ASCEND, "-o", "-"], outside_ok=True)
    t.eq(r.rc, 0, "export db -o -: exit code (%r)" % r)
    piped = os.path.join(out, "piped.db")
    write(piped, r.out.encode("utf-8", "surrogateescape"))
    t.check(read(piped)[:16] == b"SQLite format 3\0", "stdout holds an SQLite DB")
    t.eq(table_counts(piped), table_counts(db), "the DB on stdout has the rows of the DB written to a file")
    r = t.run(["query", "-dir", ASCEND, "--format", "csv", "-o", "-", "SELECT 1 AS x"])
    t.expect(r, 0, out="x\n1\n", err="", what="query -o -")
    deep = os.path.join(out, "a", "b", "q.json")
    t.expect(t.run(["query", "-dir", ASCEND, "--format", "json", "-o", deep, "SELECT 1 AS x"]), 0, out="", err="")
    t.eq(json.loads(read(deep)), [{"x": 1}], "query -o into missing directories")
    rdir = os.path.join(out, "c", "d")
    t.expect(t.run(["report", "-q", "-dir", ASCEND, "--spec", "builtin:top_kernels", "-o", rdir]), 0, out="", err="")
    t.eq(listing(rdir), ["top_kernels.csv", "tracebook_run.json"], "report -o into missing directories")
    edir = os.path.join(out, "e", "f") + "/"
    r = t.run(["export", "db", "-q", "-dir", ASCEND, "-o", edir])
    t.expect(r, 0, err="", what="export db -o DIR/ (missing)")
    t.check(r.out.startswith(edir) and r.out.endswith(".db\n") and os.path.isfile(r.out.strip()),
            "DIR/ gets the default name: %r" % r.out)
    # every command that writes makes the missing folders of its output
    made = os.path.join(out, "g", "h", "m.db")
    t.expect(t.run(["merge", "-o", made, db]), 0, out=made + "\n", err="", what="merge -o into missing directories")
    tdir = os.path.join(out, "i", "j")
    t.expect(t.run(["export", "timeline", "-q", "-dir", ASCEND, "-o", tdir]), 0, err="")
    t.check(any(n.endswith(".json") for n in listing(tdir)), "export timeline -o into missing directories")
    sdir = os.path.join(out, "k", "l")
    t.expect(t.run(["export", "summary", "-q", "-dir", ASCEND, "-o", sdir]), 0, err="")
    t.check(os.path.isdir(sdir) and listing(sdir), "export summary -o into missing directories")
    cdir = os.path.join(out, "m", "n")
    t.expect(t.run(["compare", "-q", "-base", ASCEND, "-new", ASCEND, "--spec", "builtin:top_kernels", "-o", cdir]),
             0, out="", err="")
    t.check("tracebook_run.json" in listing(cdir), "compare -o into missing directories")
    hist = os.path.join(out, "o", "p", "h.db")
    r = t.run(["history", "add", "-q", "--history", hist, "-dir", ASCEND, "--spec", "builtin:top_kernels"])
    t.eq(r.rc, 0, "history add --history into missing directories (%r)" % r)
    hdir = os.path.join(out, "q", "r")
    t.expect(t.run(["history", "report", "-q", "--history", hist, "--spec", "builtin:top_kernels", "-o", hdir]),
             0, out="", err="")
    t.check("tracebook_run.json" in listing(hdir), "history report -o into missing directories")
    log = os.path.join(out, "s", "t", "summary.txt")
    t.expect(t.run(["print", "summary", "-q", "-dir", ASCEND, "--log-file", log]), 0, err="")
    t.check(os.path.isfile(log), "print --log-file into missing directories")
    # a DB is never written to a terminal
    rc, seen = run_on_pty(t, ["export", "db", "-dir", ASCEND, "-o", "-"], stream="stdout")
    t.eq(rc, 2, "export db -o - on a terminal: exit code")


@case("did you mean: commands, options, built-in reports, --report ids")
def _(t):
    out = t.mkdir("out")
    t.expect(t.run(["reprot"]), 2, out="", err=usage_error("", "unknown command 'reprot' (did you mean 'report'?)"))
    t.expect(t.run(["help", "qurey"]), 2, out="", err=usage_error("", "unknown command 'qurey' (did you mean 'query'?)"))
    t.expect(t.run(["export", "bd", "-dir", ASCEND]), 2, out="",
             err=usage_error("export", "unknown export type 'bd' (did you mean 'db'?)"))
    t.expect(t.run(["export", "db", "-dri", ASCEND, "-o", os.path.join(out, "x.db")]), 2, out="",
             err=usage_error("export", "unknown option '-dri' (did you mean '--dir'?)"))
    t.expect(t.run(["--verison"]), 2, out="", err=usage_error("", "unknown option '--verison' (did you mean "
                                                                 "'--version'?)"))
    t.expect(t.run(["export", "db", "-dir", ASCEND, "--stirct", "-o", os.path.join(out, "x.db")]), 2, out="",
             err=usage_error("export", "unknown option '--stirct' (did you mean '--strict'?)"))
    t.expect(t.run(["report", "-dir", ASCEND, "--spec", "builtin:top_kernels", "--time-unit", "ms"]), 2, out="",
             err=usage_error("report", "unknown option '--time-unit' (did you mean '--timeunit'?)"))
    t.expect(t.run(["report", "-dir", ASCEND, "--spec", "builtin:op_statistc", "-o", out]), 2, out="",
             err="tracebook: error: --spec 'builtin:op_statistc': no built-in report 'op_statistc' (did you mean "
                 "'op_statistic'?); tracebook reports lists them\n")
    # every command that takes --spec says the same of an unknown built-in, before loading anything
    hist = os.path.join(out, "h.db")
    for cmd in (["compare", "-base", ASCEND, "-new", ASCEND, "-o", out],
                ["history", "add", "--history", hist, "-dir", ASCEND]):
        t.expect(t.run(cmd + ["--spec", "builtin:op_statistc"]), 2, out="",
                 err="tracebook: error: --spec 'builtin:op_statistc': no built-in report 'op_statistc' (did you mean "
                     "'op_statistic'?); tracebook reports lists them\n", what=" ".join(cmd[:2]))
    t.check(not os.path.exists(hist), "a history add with an unknown built-in makes no history")
    t.expect(t.run(["reports", "top_kernel"]), 2, out="",
             err="tracebook: error: no built-in report 'top_kernel' (did you mean 'top_kernels'?); tracebook "
                 "reports lists them\n")
    t.expect(t.run(["report", "-dir", ASCEND, "--spec", "builtin:top_kernels", "--report", "top_kernel", "-o", out]),
             2, out="", err=usage_error("report", "--report 'top_kernel': no spec has a report with this id (did you "
                                                  "mean 'top_kernels'?)"))
    t.eq(listing(out), [], "nothing written")



# ---- 2. exit codes -------------------------------------------------------------------

@case("exit 6: missing path")
def _(t):
    out = t.mkdir("out")
    missing = os.path.join(t.root, "no-such-dir")
    err = "tracebook: error: %s: cannot read: No such file or directory\n" % missing
    t.expect(t.run(["export", "db", "-dir", missing, "-o", os.path.join(out, "x.db")]), 6, out="", err=err)
    t.expect(t.run(["info", "-dir", missing]), 6, out="", err=err, what="info")
    # a missing second input fails the whole load
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-dir", missing, "-o", os.path.join(out, "x.db")]),
             6, out="", err=err, what="second -dir missing")
    t.eq(listing(out), [], "files in the output directory")


@case("exit 6: directory without traces")
def _(t):
    d = t.mkdir("notraces")
    write(os.path.join(d, "notes.txt"), "not a trace\n")
    write(os.path.join(d, "config.json"), '{"a": 1}\n')         # JSON, not a trace
    write(os.path.join(d, "profiler_info_0.json"), '{"ph": "X"}\n')  # known non-trace name
    out = t.mkdir("out")
    err = "tracebook: error: %s: %s\n" % (d, NO_TRACE_MSG)
    t.expect(t.run(["export", "db", "-dir", d, "-o", os.path.join(out, "x.db")]), 6, out="", err=err)
    t.expect(t.run(["export", "db", "-dir", d, "-o", out]), 6, out="", err=err, what="-o DIR")
    t.expect(t.run(["info", "-dir", d]), 6, out="", err=err, what="info")
    t.eq(listing(out), [], "files in the output directory")


@case("exit 4: unreadable input")
def _(t):
    out = t.mkdir("out")
    loop = os.path.join(t.root, "loop.json")
    os.symlink("loop.json", loop)  # stat() fails with ELOOP, even for root
    r = t.run(["export", "db", "-dir", loop, "-o", os.path.join(out, "x.db")])
    t.expect(r, 4, out="", err="tracebook: error: %s: cannot read: Too many levels of symbolic links\n" % loop)
    if os.geteuid() != 0:
        locked = os.path.join(t.root, "locked.json")
        shutil.copyfile(ASCEND, locked)
        os.chmod(locked, 0)
        r = t.run(["export", "db", "-dir", locked, "-o", os.path.join(out, "x.db")])
        t.expect(r, 4, out="", err="tracebook: error: %s: cannot open: Permission denied\n" % locked,
                 what="mode 000 file")
    t.eq(listing(out), [], "files in the output directory")


@case("exit 3: empty input file")
def _(t):
    out = t.mkdir("out")
    empty = os.path.join(t.root, "empty.json")
    write(empty, "")
    r = t.run(["export", "db", "-dir", empty, "-o", os.path.join(out, "x.db")])
    t.expect(r, 3, out="", err="tracebook: error: %s:1:1: empty input, expected a JSON trace\n" % empty)
    t.eq(listing(out), [], "files in the output directory")


@case("exit 4: unwritable output file (/proc, file as directory); missing directories are created")
def _(t):
    d = t.mkdir("d")
    plain = os.path.join(d, "plain")
    write(plain, "x")
    made = os.path.join(d, "no", "such", "dir", "x.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", made]), 0, out=made + "\n", err="", what="missing parents")
    t.check(os.path.isfile(made), "the DB under the created directories")
    shutil.rmtree(os.path.join(d, "no"))
    for out, reason in ((os.path.join(plain, "x.db"), "Not a directory"),
                        ("/proc/x.db", None)):
        r = t.run(["export", "db", "-dir", ASCEND, "-o", out], outside_ok=True)
        if reason:
            t.expect(r, 4, out="", err="tracebook: error: %s: cannot write: %s\n" % (out, reason), what=out)
        else:
            t.expect(r, 4, out="", what=out)
            t.check(r.err.startswith("tracebook: error: %s: cannot write: " % out) and r.err.count("\n") == 1,
                    "%s: one error line naming the path: %r" % (out, r.err))
    t.eq(listing(d), ["plain"], "files in the directory")


@case("exit 4: unwritable output directory names that directory")
def _(t):
    # -o DIR where DIR exists but cannot be written: the message must name what
    # the user gave, not tracebook's internal pending file name
    r = t.run(["export", "db", "-dir", ASCEND, "-o", "/proc"], outside_ok=True)
    t.expect(r, 4, out="")
    t.check(r.err.startswith("tracebook: error: /proc") and "cannot write" in r.err and r.err.count("\n") == 1,
            "one error line naming /proc: %r" % r.err)
    t.check(".tracebook-pending" not in r.err, "message names an internal temporary file: %r" % r.err)


@case("exit 4: default name taken by a directory, nothing left behind")
def _(t):
    out = t.mkdir("out")
    name = expected_default_name(json.loads(read(ASCEND)))
    os.mkdir(os.path.join(out, name))
    r = t.run(["export", "db", "-dir", ASCEND, "-o", out])
    t.expect(r, 4, out="", err="tracebook: error: %s/%s: cannot write: Is a directory\n" % (out, name))
    t.eq(listing(out), [name], "files in the output directory")
    t.eq(listing(os.path.join(out, name)), [], "files in the directory in the way")


@case("-o naming an input file is refused, the input kept")
def _(t):
    d = t.mkdir("in")
    trace = os.path.join(d, "trace_view.json")
    shutil.copyfile(ASCEND, trace)
    before = fingerprint(trace)
    r = t.run(["export", "db", "-dir", trace, "-o", trace])
    t.check(r.rc not in (0, None), "exit code is not 0 (%r)" % r)
    t.check(r.err.startswith("tracebook: error: ") and trace in r.err, "an error naming the file: %r" % r.err)
    t.eq(fingerprint(trace), before, "the input (sha256, size, mtime) after the run")
    t.eq(listing(d), ["trace_view.json"], "files beside the input")


# ---- 3. malformed JSON ----------------------------------------------------------------

MALFORMED = (
    b'[\n'
    b'{"ph": "X", "name": "good", "pid": 1, "tid": 1, "ts": 1.0, "dur": 2.0},\n'
    b'{"ph": "X", "name": "bad" "pid": 1, "tid": 1, "ts": 3.0, "dur": 1.0},\n'
    b'{"ph": "X", "name": "after", "pid": 1, "tid": 1, "ts": 5.0, "dur": 1.0}\n'
    b']\n'
)
# By hand: line 3 is `{"ph": "X", "name": "bad" "pid": ...`; after the value
# "bad" (columns 21-25) and a space, column 27 holds `"` where ',' or '}' must be.
MALFORMED_LINE, MALFORMED_COL = 3, 27


@case("malformed JSON mid-file: exit 3, FILE:LINE:COL, old DB kept, no leftovers")
def _(t):
    d = t.mkdir("work")
    bad = os.path.join(d, "bad.json")
    write(bad, MALFORMED)
    off = MALFORMED.index(b'"bad" ') + len(b'"bad" ')
    t.eq(line_col(MALFORMED, off), (MALFORMED_LINE, MALFORMED_COL), "test self-check: hand-computed position")
    err = "tracebook: error: %s:%d:%d: malformed JSON: expected ',' or '}'\n" % (bad, MALFORMED_LINE, MALFORMED_COL)
    out = os.path.join(d, "out.db")
    old = make_old_db(out)
    r = t.run(["export", "db", "-dir", bad, "-o", out])
    t.expect(r, 3, out="", err=err)
    t.eq(read(out) == old, True, "the existing out.db is byte-identical after the failed run")
    t.eq(sql(out, "SELECT x FROM keep"), [{"x": "precious"}], "content of the existing out.db")
    t.eq(leftovers(d), [], "temporary leftovers")
    t.eq(listing(d), ["bad.json", "out.db"], "files in the output directory")
    # no older DB there: nothing is created
    out2 = os.path.join(t.mkdir("out2"), "new.db")
    t.expect(t.run(["export", "db", "-dir", bad, "-o", out2]), 3, out="", err=err, what="-o new file")
    t.eq(listing(os.path.dirname(out2)), [], "files after a failed run into an empty directory")
    # -o DIR (default name): the pending file is removed too
    out3 = t.mkdir("out3")
    t.expect(t.run(["export", "db", "-dir", bad, "-o", out3]), 3, out="", err=err, what="-o DIR")
    t.eq(listing(out3), [], "files after a failed run with -o DIR")
    # info loads into a temporary DB: the same error, nothing left in TMPDIR
    t.expect(t.run(["info", "-dir", bad]), 3, out="", err=err, what="info")


@case("malformed JSON past the first MiB (plain and .gz): exact line and column")
def _(t):
    lines = [b"["]
    for i in range(40000):
        lines.append(b'{"ph": "X", "name": "ev%d", "pid": 1, "tid": 1, "ts": %d, "dur": 1, "cat": "c"},' % (i, i * 10))
    lines.append(b'{"ph": "X", "name": "bad", "pid": 1, "tid": 1, "ts": 5, "dur": 1, "cat": "c",},')
    lines.append(b'{"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 5, "dur": 1}')
    lines.append(b"]")
    data = b"\n".join(lines) + b"\n"
    t.check(len(data) > 2 << 20, "test self-check: the file is bigger than two MiB")
    # the error is the '}' after the trailing comma of line 40002 (1 + 40000 + 1)
    off = data.index(b'"cat": "c",}') + len(b'"cat": "c",')
    line, col = line_col(data, off)
    t.eq(line, 40002, "test self-check: line of the error")
    d = t.mkdir("work")
    plain = os.path.join(d, "deep.json")
    gz = os.path.join(d, "deep.json.gz")
    write(plain, data)
    write(gz, gzip.compress(data, mtime=0))
    for path in (plain, gz):
        out = os.path.join(d, "out.db")
        r = t.run(["export", "db", "-dir", path, "-o", out])
        t.expect(r, 3, out="", err="tracebook: error: %s:%d:%d: malformed JSON: expected a string key\n"
                 % (path, line, col), what=os.path.basename(path))
        t.eq(listing(d), ["deep.json", "deep.json.gz"], "files after " + os.path.basename(path))


@case("malformed values: bad ts, bad top-level member, data after the end")
def _(t):
    d = t.mkdir("work")
    out = os.path.join(t.mkdir("out"), "x.db")
    asc = read(ASCEND)
    # a ts that is not a number: the position of the value
    good = b'"ts": "1704161547420330.895"'
    data = asc.replace(good, b'"ts": "17041615474x0330.895"', 1)
    p1 = os.path.join(d, "bad_ts.json")
    write(p1, data)
    line, col = line_col(data, asc.index(good) + len(b'"ts": '))
    t.expect(t.run(["export", "db", "-dir", p1, "-o", out]), 3, out="",
             err="tracebook: error: %s:%d:%d: malformed JSON: 'ts' is not a number\n" % (p1, line, col), what="bad ts")
    # a Kineto member after traceEvents without its ':'
    kin = read(KINETO)
    key = b'"displayTimeUnit": '
    data = kin.replace(key, b'"displayTimeUnit" ', 1)
    p2 = os.path.join(d, "bad_member.json")
    write(p2, data)
    line, col = line_col(data, kin.index(key) + len(key) - 1)  # the value's '"' now sits where ':' was
    t.expect(t.run(["export", "db", "-dir", p2, "-o", out]), 3, out="",
             err="tracebook: error: %s:%d:%d: malformed JSON: expected ':'\n" % (p2, line, col), what="bad member")
    # something after the closing ']'
    data = asc.rstrip() + b"\n]\n"
    p3 = os.path.join(d, "extra.json")
    write(p3, data)
    line, col = line_col(data, len(asc.rstrip()) + 1)
    t.expect(t.run(["export", "db", "-dir", p3, "-o", out]), 3, out="",
             err="tracebook: error: %s:%d:%d: malformed JSON: unexpected data after the end of the trace\n"
             % (p3, line, col), what="data after the end")
    t.eq(listing(os.path.dirname(out)), [], "files in the output directory")


# ---- 4. cut-short input ----------------------------------------------------------------

def cut_in_event(data):
    """Cuts data 40 bytes into the first event line that starts after the middle."""
    start = data.index(b"\n{", len(data) // 2) + 1
    return data[:start + 40]


@case("cut-short Ascend trace: warning with the byte offset, complete events kept; --strict fails")
def _(t):
    data = cut_in_event(read(ASCEND))
    evs, stop = scan_events(data)
    t.check(stop is not None and data[stop:stop + 1] == b"{", "test self-check: the cut is inside an event")
    d = t.mkdir("work")
    cut = os.path.join(d, "trace_view.json")
    write(cut, data)
    out = os.path.join(t.mkdir("out"), "cut.db")
    msg = "%s: input cut short at byte %d: kept %d complete events, the rest is lost" % (cut, stop, len(evs))
    r = t.run(["export", "db", "-dir", cut, "-o", out])
    t.expect(r, 0, out=out + "\n", err="tracebook: warning: %s\n" % msg)
    if os.path.exists(out):
        t.eq(sql(out, "SELECT rowsRead, rowsSkipped, bytes, note FROM TB_SOURCE"),
             [{"rowsRead": len(evs), "rowsSkipped": 0, "bytes": len(data), "note": "cut short at byte %d" % stop}],
             "TB_SOURCE")
        t.eq(sql(out, "SELECT sourceId, message FROM TB_WARNING"), [{"sourceId": 1, "message": msg}], "TB_WARNING")
        counts = load_counts(out)
        t.eq(counts.get("TB_FLOW (flow ends)"), sum(e.get("ph") in ("s", "f") for e in evs), "flow ends loaded")
        t.eq(counts.get("TB_COUNTER"), sum(e.get("ph") == "C" for e in evs), "counter events loaded")
        # every complete slice is in the DB exactly once, the cut one is not
        names = sql(out, "SELECT s.value AS name FROM (SELECT name FROM PYTORCH_API UNION ALL SELECT name FROM"
                         " CANN_API UNION ALL SELECT name FROM TASK UNION ALL SELECT name FROM TB_EVENT"
                         " WHERE ph = 'X') x JOIN STRING_IDS s ON s.id = x.name")
        t.eq(collections.Counter(r["name"] for r in names),
             collections.Counter(e["name"] for e in evs if e.get("ph") == "X"), "names of the loaded slices")
    # -q: the same DB, nothing on stderr
    outq = os.path.join(os.path.dirname(out), "quiet.db")
    t.expect(t.run(["export", "db", "-q", "-dir", cut, "-o", outq]), 0, out=outq + "\n", err="", what="-q")
    # --strict: exit 3, no DB, an existing DB kept
    sd = t.mkdir("strict")
    strict = os.path.join(sd, "strict.db")
    old = make_old_db(strict)
    r = t.run(["export", "db", "--strict", "-dir", cut, "-o", strict])
    t.expect(r, 3, out="", err="tracebook: error: %s: byte %d: input cut short at byte %d after %d complete events"
             " (--strict)\n" % (cut, stop, stop, len(evs)), what="--strict")
    t.eq(read(strict) == old, True, "--strict: the existing DB is byte-identical")
    t.eq(listing(sd), ["strict.db"], "--strict: files in the output directory")
    t.expect(t.run(["export", "db", "--strict", "-dir", cut, "-o", sd]), 3, out="", what="--strict -o DIR")
    t.eq(listing(sd), ["strict.db"], "--strict -o DIR: files in the output directory")


@case("a load's warnings said again by a run that reuses the cached DB, and not with -q")
def _(t):
    d = t.mkdir("work")
    cut = os.path.join(d, "trace_view.json")
    data = cut_in_event(read(ASCEND))
    write(cut, data)
    evs, stop = scan_events(data)
    warn = "tracebook: warning: %s: input cut short at byte %d: kept %d complete events, the rest is lost\n" % (
        cut, stop, len(evs))
    first = t.run(["report", "-dir", cut, "--spec", "builtin:top_kernels", "-o", t.mkdir("r1")])
    t.eq((first.rc, first.err.count(warn)), (0, 1), "the load warns once")
    again = t.run(["report", "-dir", cut, "--spec", "builtin:top_kernels", "-o", t.mkdir("r2")])
    t.eq((again.rc, again.err.count(warn)), (0, 1), "the cached run says it again")
    info = t.run(["info", "-dir", cut])
    t.check("cached" in info.out or "reused" in info.out, "the second run reused the cache", info.out)
    quiet = t.run(["report", "-q", "-dir", cut, "--spec", "builtin:top_kernels", "-o", t.mkdir("r3")])
    t.eq((quiet.rc, quiet.err), (0, ""), "-q: nothing on stderr")


@case("console tables cut long names in the middle, apart where they differ; --width on report and query")
def _(t):
    out = t.run(["report", "-dir", KINETO, "--spec", "builtin:top_kernels", "--format", "console"])
    t.eq(out.rc, 0, "report --format console")
    gemms = [line.split("  ")[0] for line in out.out.splitlines() if line.startswith("sm90_")]
    t.eq(len(gemms), 3, "three GEMM rows")
    t.eq(len(set(gemms)), 3, "three different GEMM names")
    t.check(all(len(g) == 40 and g.startswith("sm90_xmma...") for g in gemms), "cut to 40, head kept", gemms)
    t.check(any("_nn_n_tilesize128x256x64" in g for g in gemms), "the part where they differ is kept", gemms)
    narrow = t.run(["report", "-dir", KINETO, "--spec", "builtin:top_kernels", "--format", "console",
                    "--width", "24"])
    names = [line.split("  ")[0] for line in narrow.out.splitlines() if line.startswith("sm90_")]
    t.check(narrow.rc == 0 and len(names) == 3 and len(set(names)) == 3 and all(len(n) == 24 for n in names),
            "--width 24: three different names of 24", names)
    sql = ("SELECT 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_stage3_' || column1 AS Name "
           "FROM (VALUES ('128x256_64x3_tn'), ('256x128_64x3_nt'))")
    q = t.run(["query", "-dir", ASCEND, "--width", "30", sql])
    rows = q.out.splitlines()[2:]
    t.check(q.rc == 0 and len(rows) == 2 and len(set(rows)) == 2 and all(len(r) == 30 for r in rows),
            "query --width 30: two different names", q.out)
    t.check(all(r.endswith(("64x3_tn", "64x3_nt")) for r in rows), "query: the tails where they differ", rows)
    r = t.run(["query", "-dir", ASCEND, "--format", "csv", "--width", "30", sql])
    t.check(r.rc == 2 and "only a console table" in r.err, "--width with csv: a usage error", r.err)
    r = t.run(["report", "-dir", ASCEND, "--spec", "builtin:top_kernels", "--width", "4", "--format", "console"])
    t.check(r.rc == 2 and "5 to 100000" in r.err, "--width 4: a usage error", r.err)


@case("cut-short Kineto trace and cut-short .gz stream")
def _(t):
    d = t.mkdir("work")
    out = t.mkdir("out")
    # Kineto: cut inside traceEvents; the members after it are lost too
    data = cut_in_event(read(KINETO))
    evs, stop = scan_events(data)
    kin = os.path.join(d, "trace.json")
    write(kin, data)
    db = os.path.join(out, "k.db")
    r = t.run(["export", "db", "-dir", kin, "-o", db])
    t.expect(r, 0, out=db + "\n", err="tracebook: warning: %s: input cut short at byte %d: kept %d complete events,"
             " the rest is lost\n" % (kin, stop, len(evs)), what="kineto")
    if os.path.exists(db):
        t.eq(sql(db, "SELECT rowsRead, note FROM TB_SOURCE"),
             [{"rowsRead": len(evs), "note": "cut short at byte %d" % stop}], "kineto TB_SOURCE")
        t.eq(scalar(db, "SELECT count(*) FROM TB_WARNING"), 1, "kineto TB_WARNING rows")
    # gzip stream cut in half: the offset is in the decompressed text
    gzdata = gzip.compress(read(ASCEND), mtime=0)
    gzdata = gzdata[:len(gzdata) // 2]
    text = zlib.decompressobj(31).decompress(gzdata)
    evs, stop = scan_events(text)
    gz = os.path.join(d, "trace_view.json.gz")
    write(gz, gzdata)
    db = os.path.join(out, "g.db")
    r = t.run(["export", "db", "-dir", gz, "-o", db])
    t.expect(r, 0, out=db + "\n", err="tracebook: warning: %s: input cut short at byte %d: kept %d complete events,"
             " the rest is lost\n" % (gz, stop, len(evs)), what="gz")
    if os.path.exists(db):
        t.eq(scalar(db, "SELECT rowsRead FROM TB_SOURCE"), len(evs), "gz rowsRead")


# ---- 5. raw control characters, {} events --------------------------------------------

CTRL_TRACE = (
    b'[\n'
    b'{"ph": "X", "name": "ctl\x01name\tend", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "cat": "misc",'
    b' "args": {"note": "a\x01b\tc", "n": 1}},\n'
    b'{"ph": "i", "name": "tab\tinstant", "pid": 1, "tid": 1, "ts": 12, "s": "t",'
    b' "args": {"multi": "line1\nline2\x1f", "esc": "q\\"\\u0041"}},\n'
    b'{}\n'
    b']\n'
)


@case("raw control characters in strings and a trailing {} event")
def _(t):
    d = t.mkdir("work")
    p = os.path.join(d, "ctl.json")
    write(p, CTRL_TRACE)
    out = os.path.join(t.mkdir("out"), "c.db")
    r = t.run(["export", "db", "-dir", p, "-o", out])
    t.expect(r, 0, out=out + "\n", err="")
    if not os.path.exists(out):
        return
    names = {r["value"] for r in sql(out, "SELECT value FROM STRING_IDS")}
    for n in ("ctl\x01name\tend", "tab\tinstant"):
        t.check(n in names, "name %r in STRING_IDS (%r)" % (n, sorted(names)))
    rows = sql(out, "SELECT name, args FROM event ORDER BY startNs")
    t.eq([r["name"] for r in rows], ["ctl\x01name\tend", "tab\tinstant"], "TB_EVENT names")
    want = [{"note": "a\x01b\tc", "n": 1}, {"multi": "line1\nline2\x1f", "esc": 'q"A'}]
    for row, w in zip(rows, want):
        try:
            t.eq(json.loads(row["args"]), w, "args of %r" % row["name"])
        except (ValueError, TypeError) as e:
            t.fail("args of %r is not valid JSON (%s): %r" % (row["name"], e, row["args"]))
    t.eq(load_counts(out).get("empty {} events"), 1, "'empty {} events' in TB_LOAD_COUNT")
    t.eq(sql(out, "SELECT rowsRead, rowsSkipped FROM TB_SOURCE"), [{"rowsRead": 3, "rowsSkipped": 1}], "TB_SOURCE")


# ---- 6. unknown phases ------------------------------------------------------------------

@case("unknown phases: kept in TB_EVENT, counted, warned about")
def _(t):
    d = t.mkdir("work")
    p = os.path.join(d, "phases.json")
    write(p, '[\n'
             '{"ph": "X", "name": "known", "pid": 7, "tid": 1, "ts": 100, "dur": 5, "cat": "cpu_op"},\n'
             '{"ph": "Z", "name": "zed_one", "pid": 7, "tid": 1, "ts": 101, "args": {"k": 1}},\n'
             '{"ph": "Z", "name": "zed_two", "pid": 7, "tid": 2, "ts": 102}\n'
             ']\n')
    out = os.path.join(t.mkdir("out"), "p.db")
    msg = "%s: 2 events with an unknown phase kept in TB_EVENT" % p
    r = t.run(["export", "db", "-dir", p, "-o", out])
    t.expect(r, 0, out=out + "\n", err="tracebook: warning: %s\n" % msg)
    if not os.path.exists(out):
        return
    t.eq(load_counts(out).get("unknown phase (TB_EVENT)"), 2, "'unknown phase (TB_EVENT)' in TB_LOAD_COUNT")
    rows = sql(out, "SELECT name, ph, tid, args FROM event WHERE ph = 'Z' ORDER BY name")
    for r in rows:
        r["args"] = None if r["args"] is None else json.loads(r["args"])
    t.eq(rows, [{"name": "zed_one", "ph": "Z", "tid": 1, "args": {"k": 1}},
                {"name": "zed_two", "ph": "Z", "tid": 2, "args": None}], "TB_EVENT rows of phase Z")
    t.eq(sql(out, "SELECT message FROM TB_WARNING"), [{"message": msg}], "TB_WARNING")
    t.eq(scalar(out, "SELECT rowsRead FROM TB_SOURCE"), 3, "rowsRead")
    t.expect(t.run(["export", "db", "-q", "-dir", p, "-o", out]), 0, out=out + "\n", err="", what="-q")


# ---- 7. gzip -------------------------------------------------------------------------------

@case(".json.gz input loads the same rows as the plain file")
def _(t):
    for sample in (ASCEND, KINETO):
        d = t.mkdir("gz-" + os.path.basename(os.path.dirname(sample)))
        gz = os.path.join(d, os.path.basename(sample) + ".gz")
        write(gz, gzip.compress(read(sample), mtime=0))
        out = t.mkdir("out-" + os.path.basename(d))
        plain_db, gz_db, dir_db = (os.path.join(out, n) for n in ("plain.db", "gz.db", "dir.db"))
        for src, db in ((sample, plain_db), (gz, gz_db), (d, dir_db)):
            t.expect(t.run(["export", "db", "-dir", src, "-o", db]), 0, out=db + "\n", err="", what=src)
        if not all(os.path.exists(p) for p in (plain_db, gz_db, dir_db)):
            continue
        want = table_counts(plain_db)
        t.check(want.get("TASK", 0) > 0, "plain load has TASK rows")
        for db in (gz_db, dir_db):
            t.eq(table_counts(db), want, "rows per table, %s vs plain" % os.path.basename(db))
            t.eq(load_counts(db), load_counts(plain_db), "TB_LOAD_COUNT, %s vs plain" % os.path.basename(db))
            t.eq(sql(db, "SELECT path, kind, rowsRead, rowsSkipped, bytes FROM TB_SOURCE"),
                 [{"path": gz, "kind": sql(plain_db, "SELECT kind FROM TB_SOURCE")[0]["kind"], "rowsRead": 2500,
                   "rowsSkipped": sql(plain_db, "SELECT rowsSkipped FROM TB_SOURCE")[0]["rowsSkipped"],
                   "bytes": os.path.getsize(gz)}], "TB_SOURCE of " + os.path.basename(db))


# ---- 8. default output name ----------------------------------------------------------------

def expected_default_name(doc):
    """msprof_<UTC YYYYMMDDhhmmss>.db of the earliest event ts (Unix µs)."""
    evs = doc if isinstance(doc, list) else doc["traceEvents"]
    first = min(ts_ns(e["ts"]) for e in evs if "ts" in e)
    assert first > 946684800 * 10 ** 9, "ts are not Unix times"
    when = datetime.datetime.fromtimestamp(first // 10 ** 9, tz=datetime.timezone.utc)
    return when.strftime("msprof_%Y%m%d%H%M%S.db")


@case("default output name: msprof_<earliest ts>.db beside the input, deterministic, atomic")
def _(t):
    name = expected_default_name(json.loads(read(ASCEND)))
    t.eq(name, "msprof_20240102021227.db", "test self-check: name from the sample's earliest ts")
    d = t.mkdir("input")
    trace = os.path.join(d, "trace_view.json")
    shutil.copyfile(ASCEND, trace)
    before = fingerprint(trace)
    db = os.path.join(d, name)
    r = t.run(["export", "db", "-dir", d], default_out=True)
    t.expect(r, 0, out=db + "\n", err="")
    t.eq(listing(d), sorted(["trace_view.json", name]), "files beside the input")
    if not os.path.exists(db):
        return
    t.eq(scalar(db, "SELECT rowsRead FROM TB_SOURCE"), 2500, "rowsRead")
    ino = os.stat(db).st_ino
    # again, through the file: same name, the DB replaced by a rename (new inode)
    r = t.run(["export", "db", "-dir", trace], default_out=True)
    t.expect(r, 0, out=db + "\n", err="", what="second run")
    t.eq(listing(d), sorted(["trace_view.json", name]), "files beside the input after the second run")
    t.check(os.stat(db).st_ino != ino, "the second run replaced the DB by renaming a new file into place")
    t.eq(scalar(db, "SELECT count(*) FROM TB_SOURCE"), 1, "TB_SOURCE rows after the second run")
    # -o DIR: the default name in that directory
    out = t.mkdir("out")
    r = t.run(["export", "db", "-dir", d, "-o", out])
    # the DB beside the input was loaded from it: passed over, not a second rank
    t.expect(r, 0, out=os.path.join(out, name) + "\n",
             err="tracebook: note: %s: not read: a tracebook DB loaded from inputs of this same run\n" % db,
             what="-o DIR")
    t.eq(listing(out), [name], "files in the -o directory")
    odb = os.path.join(out, name)
    if os.path.exists(odb):
        t.eq(scalar(odb, "SELECT count(DISTINCT rankId) FROM TASK"), 1, "-o DIR: ranks")
        t.eq(scalar(odb, "SELECT count(*) FROM TASK"), scalar(db, "SELECT count(*) FROM TASK"), "-o DIR: tasks")
        t.eq(scalar(odb, "SELECT kind || ' ' || note FROM TB_SOURCE WHERE path = '%s'" % db),
             "skipped a tracebook DB loaded from inputs of this same run", "-o DIR: TB_SOURCE row of the DB")
    r = t.run(["export", "db", "-dir", d, "-o", out + "/", "--quiet"])
    t.eq(r.rc, 0, "-o DIR/: exit code (%r)" % r)
    t.check(r.out.endswith("\n") and os.path.exists(r.out[:-1]) and
            os.path.samefile(r.out[:-1], os.path.join(out, name)), "-o DIR/: prints the DB's path: %r" % r.out)
    t.eq(listing(out), [name], "files in the -o directory after -o DIR/")
    t.eq(fingerprint(trace), before, "the input (sha256, size, mtime) after the runs")


@case("own outputs: a DB exported beside its inputs is not loaded again with them")
def _(t):
    d = t.mkdir("run")
    shutil.copyfile(ASCEND, os.path.join(d, "trace_view.json"))
    first = os.path.join(t.mkdir("first"), "a.db")
    t.expect(t.run(["export", "db", "-dir", d, "-o", first]), 0, out=first + "\n", err="")
    tasks = scalar(first, "SELECT count(*) FROM TASK")
    # two exports into the input folder itself, then a third run over the folder
    inside = os.path.join(d, "inside.db")
    t.expect(t.run(["export", "db", "-dir", d, "-o", inside]), 0, out=inside + "\n", err="")
    again = os.path.join(d, "again.db")
    r = t.run(["export", "db", "-dir", d, "-o", again])
    t.expect(r, 0, out=again + "\n",
             err="tracebook: note: %s: not read: a tracebook DB loaded from inputs of this same run\n" % inside)
    last = os.path.join(t.mkdir("last"), "b.db")
    r = t.run(["export", "db", "-dir", d, "-o", last, "--quiet"])
    t.expect(r, 0, out=last + "\n", err="")
    if os.path.exists(last):
        t.eq(scalar(last, "SELECT count(*) FROM TASK"), tasks, "tasks: the trace's, once")
        t.eq(scalar(last, "SELECT count(DISTINCT rankId) FROM TASK"), 1, "ranks")
        t.eq(scalar(last, "SELECT group_concat(relPath, ' ') FROM (SELECT relPath FROM TB_SOURCE"
                          " WHERE kind = 'skipped' ORDER BY relPath)"), "again.db inside.db", "skipped files")
    # named on its own, a tracebook DB loads, even beside its inputs
    named = os.path.join(t.mkdir("named"), "n.db")
    t.expect(t.run(["export", "db", "-dir", d, "-dir", inside, "-o", named, "--quiet"]), 0, out=named + "\n")
    if os.path.exists(named):
        t.eq(scalar(named, "SELECT count(DISTINCT rankId) FROM TASK"), 2, "-dir FILE.db: a rank of its own")


@case("own outputs: a timeline exported beside its inputs is not loaded again with them; alone, it loads")
def _(t):
    d = t.mkdir("prof")
    shutil.copyfile(ASCEND, os.path.join(d, "trace_view.json"))
    r = t.run(["export", "timeline", "-dir", d, "-q"], default_out=True)
    t.eq(r.rc, 0, "export timeline beside the input (%r)" % r)
    exported = [n for n in os.listdir(d) if n.startswith("msprof_")]
    t.eq(len(exported), 1, "one timeline written beside the input: %r" % exported)
    first = json.loads(read(os.path.join(d, exported[0]))) if exported else []
    t.check(first and first[0].get("name") == "tracebook_export" and first[0].get("ph") == "M"
            and first[0]["args"]["sources"][0][0] == "trace_view.json",
            "the first event names tracebook and the input: %r" % (first[:1],))
    # it names no process: no process_name event for pid 0 (in a Kineto trace, the GPU)
    t.check(not [e for e in first if e.get("name") == "process_name" and e.get("pid") == 0
                 and e.get("args", {}).get("name", "").startswith("tracebook")],
            "no tracebook process in the exported timeline")
    db = os.path.join(t.mkdir("out"), "x.db")
    r = t.run(["export", "db", "-dir", d, "-o", db])
    t.expect(r, 0, out=db + "\n",
             err="tracebook: note: %s: not read: a timeline tracebook exported from inputs of this same run\n"
             % os.path.join(d, exported[0] if exported else "?"))
    single = os.path.join(t.mkdir("single"), "s.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", single, "-q"]), 0)
    if os.path.exists(db):
        t.eq(scalar(db, "SELECT count(*) FROM TASK"), scalar(single, "SELECT count(*) FROM TASK"), "tasks once")
    # the exported timeline alone (moved away from its input) loads
    alone = t.mkdir("alone")
    if exported:
        shutil.move(os.path.join(d, exported[0]), os.path.join(alone, exported[0]))
    adb = os.path.join(t.mkdir("adb"), "a.db")
    t.expect(t.run(["export", "db", "-dir", alone, "-o", adb, "-q"]), 0, out=adb + "\n")
    if os.path.exists(adb):
        t.eq(scalar(adb, "SELECT count(*) FROM TASK"), scalar(single, "SELECT count(*) FROM TASK"), "alone: tasks")


@case("own outputs: a folder of tracebook DBs alone loads them all")
def _(t):
    shards = t.mkdir("shards")
    for i, src in enumerate((ASCEND, KINETO)):
        out = os.path.join(shards, "shard%d.db" % i)
        t.expect(t.run(["export", "db", "-dir", src, "-o", out]), 0, out=out + "\n", err="")
    merged = os.path.join(t.mkdir("merged"), "m.db")
    r = t.run(["export", "db", "-dir", shards, "-o", merged])
    t.expect(r, 0, out=merged + "\n")
    # both shards hold a rank 0: numbered in input order, with the usual warning, no note
    t.check(r.err.startswith("tracebook: warning: ") and "both name rank 0" in r.err and "note" not in r.err,
            "stderr: %r" % r.err)
    if os.path.exists(merged):
        t.eq(scalar(merged, "SELECT count(DISTINCT rankId) FROM TASK"), 2, "ranks of the two shards")
        t.eq(scalar(merged, "SELECT count(*) FROM TB_SOURCE WHERE kind = 'skipped'"), 0, "nothing skipped")


@case("own outputs: report files listed in tracebook_run.json are passed over; other files load")
def _(t):
    d = t.mkdir("prof")
    shutil.copyfile(ASCEND, os.path.join(d, "trace_view.json"))
    spec = os.path.join(SAMPLES, "specs", "nightly.yaml")
    base = t.mkdir("base")
    t.expect(t.run(["report", "-dir", d, "--spec", spec, "-o", base, "--quiet"]), 0, err="")
    # the reports written into the input folder itself
    t.expect(t.run(["report", "-dir", d, "--spec", spec, "-o", d, "--quiet"]), 0, err="")
    meta = json.loads(read(os.path.join(d, "tracebook_run.json")))
    written = sorted(f for rep in meta["reports"] for f in rep.get("files", []))
    t.check(len(written) >= 4, "the run wrote its files into the input folder: %r" % written)
    # a file tracebook did not write, in a format it reads, still loads
    shutil.copyfile(KINETO, os.path.join(d, "kineto_trace.json"))
    db = os.path.join(t.mkdir("db"), "x.db")
    r = t.run(["export", "db", "-dir", d, "-o", db])
    t.eq(r.rc, 0, "exit code (%r)" % r)
    notes = sorted(l for l in r.err.splitlines())
    t.eq(len(notes), len(written) + 1, "one note per file passed over, and the metadata: %r" % notes)
    t.check(all(l.startswith("tracebook: note: ") for l in notes), "notes only: %r" % notes)
    if os.path.exists(db):
        t.eq(scalar(db, "SELECT group_concat(relPath, ' ') FROM (SELECT relPath FROM TB_SOURCE"
                        " WHERE kind NOT IN ('skipped', 'ignored') ORDER BY relPath)"),
             "kineto_trace.json trace_view.json", "files loaded")
        t.eq(scalar(db, "SELECT count(*) FROM TB_SOURCE WHERE kind = 'skipped'"), len(written) + 1, "files skipped")
    # and the reports of a second run equal the first's
    again = t.mkdir("again")
    t.expect(t.run(["report", "-dir", os.path.join(d, "trace_view.json"), "--spec", spec, "-o", again, "--quiet"]),
             0, err="")
    for f in written:
        if f.endswith(".csv"):
            t.eq(read(os.path.join(again, f)), read(os.path.join(base, f)), "%s: same as the first run" % f)


@case("output DB permissions follow the umask (0644 with umask 022)")
def _(t):
    old = os.umask(0o022)
    try:
        out = os.path.join(t.mkdir("out"), "m.db")
        t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", out]), 0, out=out + "\n", err="")
        if os.path.exists(out):
            t.eq(oct(os.stat(out).st_mode & 0o777), oct(0o644), "mode of the DB")
    finally:
        os.umask(old)


@case("an existing DB at -o FILE is replaced on success")
def _(t):
    d = t.mkdir("out")
    out = os.path.join(d, "x.db")
    make_old_db(out)
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", out]), 0, out=out + "\n", err="")
    t.eq(scalar(out, "SELECT count(*) FROM sqlite_master WHERE name = 'keep'"), 0, "old table gone")
    t.eq(scalar(out, "SELECT rowsRead FROM TB_SOURCE"), 2500, "rowsRead of the new DB")
    t.eq(listing(d), ["x.db"], "files in the output directory")


# ---- 9. several ranks -----------------------------------------------------------------------

@case("two -dir: two ranks, distinct rank ids, per-rank rows as in single loads; info sections")
def _(t):
    out = t.mkdir("out")
    asc_dir, kin_dir = os.path.dirname(ASCEND), os.path.dirname(KINETO)
    single = {}
    for name, src in (("ascend", asc_dir), ("kineto", kin_dir)):
        db = os.path.join(out, name + ".db")
        t.expect(t.run(["export", "db", "-dir", src, "-o", db]), 0, out=db + "\n", err="", what="single " + name)
        single[name] = db
    kin_doc = json.loads(read(KINETO))
    t.eq(kin_doc["distributedInfo"]["rank"], 0, "test self-check: the Kineto sample says rank 0")
    # the ascend trace names no rank, so input order decides: first 0, then 1
    for order, want in ((("ascend", "kineto"), {"ascend": 0, "kineto": 1}),
                        (("kineto", "ascend"), {"kineto": 0, "ascend": 1})):
        db = os.path.join(out, "-".join(order) + ".db")
        dirs = {"ascend": asc_dir, "kineto": kin_dir}
        paths = {"ascend": ASCEND, "kineto": KINETO}
        r = t.run(["export", "db", "-dir", dirs[order[0]], "-dir", dirs[order[1]], "-o", db])
        t.expect(r, 0, out=db + "\n", err="", what=" + ".join(order))
        if not os.path.exists(db):
            continue
        src = sql(db, "SELECT id, rankId, path, rowsRead FROM TB_SOURCE ORDER BY id")
        t.eq(src, [{"id": i + 1, "rankId": want[n], "path": paths[n], "rowsRead": 2500} for i, n in enumerate(order)],
             "%s: TB_SOURCE" % "+".join(order))
        t.eq([r["rankId"] for r in sql(db, "SELECT DISTINCT rankId FROM TASK ORDER BY rankId")], [0, 1],
             "%s: SELECT DISTINCT rankId FROM TASK" % "+".join(order))
        t.eq(sql(db, "SELECT rankId, source FROM TB_RANK ORDER BY rankId"),
             sorted(({"rankId": want[n], "source": paths[n]} for n in order), key=lambda x: x["rankId"]),
             "%s: TB_RANK" % "+".join(order))
        # every rank's rows match the single-rank load of its input
        for table in rank_tables(db):
            for n in order:
                got = scalar(db, 'SELECT count(*) FROM "%s" WHERE rankId = %d' % (table, want[n]))
                exp = scalar(single[n], 'SELECT count(*) FROM "%s"' % table)
                t.eq(got, exp, "%s: %s rows of rank %d (%s)" % ("+".join(order), table, want[n], n))
            others = scalar(db, 'SELECT count(*) FROM "%s" WHERE rankId NOT IN (0, 1) OR rankId IS NULL' % table)
            t.eq(others, 0, "%s: %s rows with another rank" % ("+".join(order), table))
        t.eq(scalar(db, "SELECT count(*) - count(DISTINCT globalTaskId) FROM TASK"), 0,
             "%s: globalTaskId unique across ranks" % "+".join(order))
    # info over both inputs
    r = t.run(["info", "-dir", asc_dir, "-dir", kin_dir])
    t.expect(r, 0, err="", what="info")
    secs = info_sections(r.out)
    want_secs = ["Sources", "Ranks and devices", "Layers", "Time span", "Steps", "Events per destination",
                 "Rows per table", "Warnings"]
    found = [next((i for i, s in enumerate(secs) if s.startswith(w)), None) for w in want_secs]
    t.check(None not in found and found == sorted(found), "info sections %s in order; got %s" % (want_secs, secs))
    asc_steps = step_summary(json.loads(read(ASCEND)))
    kin_steps = step_summary(kin_doc["traceEvents"])
    for rank, (n, a, b) in ((0, asc_steps), (1, kin_steps)):
        t.check("\n  %d %d %d %d\n" % (rank, n, a, b) in r.out, "info Steps line for rank %d: %d steps %d..%d\n%s"
                % (rank, n, a, b, r.out))
    t.check("\n  0: 0\n  1: 0\n" in r.out, "info Ranks and devices lists ranks 0 and 1")


# ---- 10. --keep-python-functions ----------------------------------------------------------

@case("--keep-python-functions: python_function events go to TB_EVENT")
def _(t):
    evs = json.loads(read(KINETO))["traceEvents"]
    py = collections.Counter(e["name"] for e in evs if e.get("cat") == "python_function")
    n = sum(py.values())
    t.check(n > 0, "test self-check: the Kineto sample has python_function events")
    out = t.mkdir("out")
    keep, skip = os.path.join(out, "keep.db"), os.path.join(out, "skip.db")
    t.expect(t.run(["export", "db", "--keep-python-functions", "-dir", KINETO, "-o", keep]), 0, out=keep + "\n", err="")
    t.expect(t.run(["export", "db", "-dir", KINETO, "-o", skip]), 0, out=skip + "\n", err="", what="without")
    if not (os.path.exists(keep) and os.path.exists(skip)):
        return
    kc, sc = load_counts(keep), load_counts(skip)
    t.eq(sc.get("skipped python_function"), n, "without: 'skipped python_function'")
    t.eq(kc.get("skipped python_function"), None, "with: 'skipped python_function'")
    t.eq(kc.get("TB_EVENT", 0), sc.get("TB_EVENT", 0) + n, "with: TB_EVENT count = without + python_function")
    t.eq(collections.Counter(r["name"] for r in sql(keep, "SELECT name FROM event WHERE cat = 'python_function'")),
         py, "with: python_function names in TB_EVENT")
    t.eq(scalar(skip, "SELECT count(*) FROM event WHERE cat = 'python_function'"), 0, "without: none in TB_EVENT")
    t.eq(scalar(keep, "SELECT rowsSkipped FROM TB_SOURCE"), 0, "with: rowsSkipped")
    t.eq(scalar(skip, "SELECT rowsSkipped FROM TB_SOURCE"), n, "without: rowsSkipped")


# ---- 11. progress only on a TTY --------------------------------------------------------------

def padded_trace(path):
    """A Kineto-shaped trace with 65 MiB of blanks between its two events:
    enough bytes for the progress callback (every 64 MiB) to fire after the
    second event, in no item longer than the reader's 64 MiB limit."""
    with open(path, "wb") as f:
        f.write(b'{"traceEvents": [\n'
                b'{"ph": "i", "name": "a", "pid": 1, "tid": 1, "ts": 1, "s": "t"},' + b" " * (65 << 20) +
                b'\n{"ph": "i", "name": "b", "pid": 1, "tid": 1, "ts": 2, "s": "t"}\n]}\n')


def run_on_pty(t, args, stream="stderr"):
    """Runs tracebook with stderr (or stdout) on a pseudo-terminal; returns (exit code, bytes written there)."""
    master, slave = pty.openpty()
    try:
        r = t.run(args, **{stream + "_fd": slave})
        os.close(slave)
        slave = None
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child is gone and the slave closed
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if slave is not None:
            os.close(slave)
        os.close(master)
    return r.rc, seen


@case("no progress line when stderr is not a TTY (clean loads print nothing)")
def _(t):
    out = t.mkdir("out")
    for src in (ASCEND, KINETO):
        for q in ([], ["-q"]):
            db = os.path.join(out, "x.db")
            t.expect(t.run(["export", "db"] + q + ["-dir", src, "-o", db]), 0, out=db + "\n", err="",
                     what="%s %s" % (os.path.basename(src), " ".join(q)))
    big = os.path.join(t.mkdir("big"), "padded.json")
    padded_trace(big)
    db = os.path.join(out, "big.db")
    t.expect(t.run(["export", "db", "-dir", big, "-o", db]), 0, out=db + "\n", err="", what="65 MiB input, pipe")
    # the positive control: on a pseudo-terminal the same load shows progress and clears it
    rc, seen = run_on_pty(t, ["export", "db", "-dir", big, "-o", db])
    t.eq(rc, 0, "pty: exit code")
    text = seen.decode("utf-8", "replace")
    t.check(("loading %s: " % big) in text and text.endswith("\r\x1b[K"),
            "pty: a progress line that is cleared at the end: %r" % text[:300])
    t.eq(run_on_pty(t, ["export", "db", "-q", "-dir", big, "-o", db]), (0, b""), "pty with -q: exit code and stderr")


@case("progress on a TTY: one line for all ranks, the phases after reading, then one for the reports")
def _(t):
    d = t.mkdir("big")
    big = os.path.join(d, "padded.json")
    padded_trace(big)
    big2 = os.path.join(d, "padded2.json")
    shutil.copyfile(big, big2)
    out = t.mkdir("out")
    db = os.path.join(out, "two.db")
    rc, seen = run_on_pty(t, ["export", "db", "-dir", big, "-dir", big2, "-o", db])
    t.eq(rc, 0, "two ranks: exit code")
    text = seen.decode("utf-8", "replace")
    t.check(re.search(r"\x1b\[Kloading 2 files: +\d+% \(\d+ MB read\)", text) and text.endswith("\r\x1b[K"),
            "two ranks: one line for both files, cleared at the end: %r" % text[-300:])
    t.check("\x1b[Kloading 2 files: post-processing\r\x1b[Kloading 2 files: indexing\r\x1b[K" in text,
            "two ranks: the phases after reading: %r" % text[-300:])
    t.eq(sql(db, "SELECT count(*) AS n FROM TB_RANK"), [{"n": 2}], "two ranks loaded")
    # a .gz: the share from the compressed bytes, the megabytes read out of it (65 MiB in a file of 65 KiB)
    gz = os.path.join(d, "padded.json.gz")
    with open(big, "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    t.check(os.path.getsize(gz) < (1 << 20), "test self-check: the .gz is small")
    rc, seen = run_on_pty(t, ["export", "db", "-dir", gz, "-o", os.path.join(out, "gz.db")])
    t.eq(rc, 0, ".gz: exit code")
    text = seen.decode("utf-8", "replace")
    m = re.search(r"\x1b\[Kloading \S+padded\.json\.gz: +(\d+)% \((\d+) MB read\)", text)
    t.check(m and int(m.group(2)) >= 64, ".gz: the progress line counts the bytes read out of it: %r" % text[-300:])
    # a summary CSV shows its progress too (a column tracebook does not read pads it to 65 MiB)
    pt = t.mkdir("csvrank")
    with open(os.path.join(pt, "kernel_details.csv"), "w") as f:
        f.write("Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),"
                "Wait Time(us),Block Dim,Padding\n")
        f.write("1,4294967295,10,2,MatMul,MatMul,AI_CORE,1704161547420374.537,5.489,0.0,8,%s\n" % ("x" * (65 << 20)))
        f.write("1,4294967295,11,2,Add,Add,AI_VECTOR_CORE,1704161547420384.000,1.5,0.0,4,y\n")
    rc, seen = run_on_pty(t, ["export", "db", "-dir", pt, "-o", os.path.join(out, "csv.db")])
    t.eq(rc, 0, "csv: exit code")
    text = seen.decode("utf-8", "replace")
    t.check(re.search(r"\x1b\[Kloading \S+kernel_details\.csv: +\d+% \(6\d MB read\)", text),
            "csv: a progress line: %r" % text[-300:])
    rc, seen = run_on_pty(t, ["report", "-dir", ASCEND, "--spec", "builtin:top_kernels", "--spec",
                              "builtin:op_statistic", "-o", out])
    t.eq(rc, 0, "report: exit code")
    text = seen.decode("utf-8", "replace")
    # the inputs load into the cache first: the phases after reading, then the reports
    want = ("\r\x1b[Kloading: post-processing\r\x1b[Kloading: indexing\r\x1b[K"
            "\r\x1b[Krunning reports: 0/2 done\r\x1b[Ktracebook: wrote %s/top_kernels.csv\r\n"
            "\r\x1b[Krunning reports: 1/2 done (last: top_kernels)\r\x1b[Ktracebook: wrote %s/op_statistic.csv\r\n"
            "\r\x1b[Krunning reports: 2/2 done (last: op_statistic)\r\x1b[Ktracebook: wrote %s/tracebook_run.json"
            "\r\n" % (out, out, out))
    t.eq(text, want, "report: a progress line per report, erased before every message")
    t.eq(run_on_pty(t, ["report", "-q", "-dir", ASCEND, "--spec", "builtin:top_kernels", "-o", out]), (0, b""),
         "report -q on a TTY: nothing on stderr")


@case("--timing prints one timing line")
def _(t):
    db = os.path.join(t.mkdir("out"), "x.db")
    r = t.run(["export", "db", "--timing", "-dir", ASCEND, "-o", db])
    t.expect(r, 0, out=db + "\n")
    t.check(re.fullmatch(r"tracebook: timing: 2500 events: read \d+\.\d{3} s, post-process \d+\.\d{3} s,"
                         r" indexes \d+\.\d{3} s\n", r.err), "timing line: %r" % r.err)


# ---- interrupted runs ----------------------------------------------------------------------

def interrupted_run(t, args, fifo, sig, watch_dir):
    """Starts tracebook on args (which read the FIFO fifo), feeds it the start of a
    trace and keeps the FIFO open so the load blocks, waits until a temporary file
    shows up in watch_dir, sends sig. Returns (returncode, stdout, stderr) or None."""
    before = set(os.listdir(watch_dir))
    p = subprocess.Popen([TB] + args, cwd=t.cwd, env=t.env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    fd = None
    try:
        deadline = time.monotonic() + 30
        while fd is None and time.monotonic() < deadline and p.poll() is None:
            try:  # succeeds once tracebook has the FIFO open for reading
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.01)
        if fd is None:
            t.fail("tracebook %s never opened its input (%r)" % (" ".join(args), p.poll()))
            return None
        os.write(fd, b'[\n{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},\n')
        while time.monotonic() < deadline and set(os.listdir(watch_dir)) == before:
            time.sleep(0.01)
        t.check(set(os.listdir(watch_dir)) != before, "a temporary file appeared in %s during the load" % watch_dir)
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
        return p.returncode, out.decode(errors="replace"), err.decode(errors="replace")
    finally:
        if fd is not None:
            os.close(fd)
        if p.poll() is None:
            p.kill()
            p.wait()


@case("SIGTERM/SIGINT during a load: no temporary files left, an existing DB kept")
def _(t):
    d = t.mkdir("in")
    fifo = os.path.join(d, "slow.json")
    os.mkfifo(fifo)
    out = t.mkdir("out")
    db = os.path.join(out, "x.db")
    old = make_old_db(db)
    for sig in (signal.SIGTERM, signal.SIGINT):
        for target in (db, out):
            what = "%s, -o %s" % (sig.name, "FILE" if target == db else "DIR")
            r = interrupted_run(t, ["export", "db", "-dir", fifo, "-o", target], fifo, sig, out)
            if r is None:
                continue
            t.eq(r[0], -sig, what + ": died of the signal (%r)" % (r,))
            t.eq(listing(out), ["x.db"], what + ": files in the output directory")
            t.check(read(db) == old, what + ": the existing DB is byte-identical")
    # info loads into its cache directory: the temporary DB must go there too
    cache = os.path.join(t.env()["XDG_CACHE_HOME"], "tracebook")
    os.makedirs(cache, exist_ok=True)
    r = interrupted_run(t, ["info", "-dir", fifo], fifo, signal.SIGTERM, cache)
    if r is not None:
        t.eq(r[0], -signal.SIGTERM, "info: died of the signal (%r)" % (r,))
        # the entry's lock file (empty, reused by every run on these inputs) is all that may stay
        t.eq([n for n in listing(cache) if not n.endswith(".db.lock")], [], "info: files left in the cache directory")
        t.eq(listing(t.tmp), [], "info: files left in TMPDIR")


# ---- 12. info on a DB -------------------------------------------------------------------------

@case("info -dir X.db reads a DB written by export db")
def _(t):
    db = os.path.join(t.mkdir("out"), "a.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", db]), 0, out=db + "\n", err="")
    before = fingerprint(db)
    r = t.run(["info", "-dir", db])
    t.expect(r, 0, err="")
    first, _, rest = r.out.partition("\n")
    t.eq(first, "tracebook %s: %s" % (VERSION, db), "first line")
    r2 = t.run(["info", "-dir", ASCEND])
    t.expect(r2, 0, err="", what="info on the trace")
    t.eq(rest, r2.out.partition("\n")[2], "info of the DB = info of the trace it came from (after line 1)")
    t.check("\n  1 0 [ascend timeline] %d 2500 0 %s \n" % (os.path.getsize(ASCEND), ASCEND) in r.out,
            "Sources line of the DB:\n%s" % r.out)
    t.eq(fingerprint(db), before, "the DB after info (read only)")


@case("info -dir on a missing .db, a non-DB .db and a foreign SQLite DB fails")
def _(t):
    d = t.mkdir("work")
    missing = os.path.join(d, "missing.db")
    r = t.run(["info", "-dir", missing])
    t.expect(r, 6, out="", what="missing .db (exit 6 like every missing path)")
    t.check(r.err.startswith("tracebook: error: %s: " % missing), "missing .db: message names it: %r" % r.err)
    garbage = os.path.join(d, "garbage.db")
    write(garbage, "this is not a database\n" * 100)
    foreign = os.path.join(d, "foreign.db")
    make_old_db(foreign)
    for path in (garbage, foreign):
        r = t.run(["info", "-dir", path])
        t.check(r.rc not in (0, None), "%s: exit code is not 0 (%r)" % (os.path.basename(path), r))
        t.check(r.err.startswith("tracebook: error: %s: " % path), "%s: an error naming the file: %r"
                % (os.path.basename(path), r.err))
    t.eq(listing(d), ["foreign.db", "garbage.db"], "files after info")


# ---- 13. info's cached DB -------------------------------------------------------------------

@case("info keeps its DB in the cache and reuses it only while the inputs are unchanged")
def _(t):
    d = t.mkdir("in")
    trace = os.path.join(d, "trace_view.json")
    shutil.copyfile(ASCEND, trace)
    first = t.run(["info", "-dir", d])
    t.expect(first, 0)
    head = first.out.splitlines()[0] if first.out else ""
    t.check(head.endswith(", loaded now)"), "first run loads: %r" % head)
    m = re.search(r"\(DB (\S+), ", head)
    t.check(m is not None, "the first line names the DB: %r" % head)
    if m:
        db = m.group(1)
        cache = os.path.join(t.env()["XDG_CACHE_HOME"], "tracebook")
        t.eq(os.path.dirname(db), cache, "the DB is in $XDG_CACHE_HOME/tracebook")
        second = t.run(["info", "-dir", d])
        t.check(second.out.splitlines()[0].endswith(", reused: inputs unchanged)"), "second run reuses")
        t.eq(second.out.splitlines()[1:], first.out.splitlines()[1:], "same report when reused")
        # a changed input (new mtime) is loaded again, as is --rebuild
        os.utime(trace, ns=(os.stat(trace).st_atime_ns, os.stat(trace).st_mtime_ns + 1000000000))
        third = t.run(["info", "-dir", d])
        t.check(third.out.splitlines()[0].endswith(", loaded now)"), "changed input: loaded again")
        fourth = t.run(["info", "--rebuild", "-dir", d])
        t.check(fourth.out.splitlines()[0].endswith(", loaded now)"), "--rebuild: loaded again")
        # a file added to the input directory makes the cached DB stale too
        shutil.copyfile(KINETO, os.path.join(d, "trace.json"))
        fifth = t.run(["info", "-dir", d])
        t.check(fifth.out.splitlines()[0].endswith(", loaded now)"), "added input: loaded again")
        t.eq(scalar(db, "SELECT count(*) FROM TB_SOURCE"), 2, "the reloaded DB has both sources")


@case("ranks that share a device id stay apart: a leading Rank ID, each rank's rows as a run on it alone")
def _(t):
    ranks = []
    for r in range(2):
        d = t.mkdir("node%d" % r)  # two machines' device 0
        shutil.copyfile(ASCEND, os.path.join(d, "trace_view.json"))
        ranks.append(d)
    specs = ["builtin:op_statistic", "builtin:api_statistic", "builtin:communication_statistic",
             "builtin:step_trace_time", "builtin:top_kernels", "builtin:kernel_breakdown"]
    names = [sp.split(":")[1] + ".csv" for sp in specs]
    one, two = t.mkdir("one"), t.mkdir("two")
    args = sum((["--spec", sp] for sp in specs), [])
    t.expect(t.run(["report", "-dir", ranks[0], "-o", one, "-q"] + args), 0, err="")
    t.expect(t.run(["report", "-dir", ranks[0], "-dir", ranks[1], "-o", two, "-q"] + args), 0, err="")
    for n in names:
        p1, p2 = os.path.join(one, n), os.path.join(two, n)
        if not (t.check(os.path.exists(p1), "%s written for one rank" % n) and
                t.check(os.path.exists(p2), "%s written for two ranks" % n)):
            continue
        single = list(csv.reader(io.StringIO(read(p1).decode("utf-8-sig"))))
        both = list(csv.reader(io.StringIO(read(p2).decode("utf-8-sig"))))
        t.check(single and single[0][0] != "Rank ID", "%s: one rank, no rank column: %r" % (n, single[:1]))
        t.eq(both[0], ["Rank ID"] + single[0], "%s: header with two ranks" % n)
        t.check(len(single) > 1, "%s: rows" % n)
        for r in ("0", "1"):
            t.eq([row[1:] for row in both[1:] if row[0] == r], single[1:], "%s: rank %s's rows" % (n, r))


@case("nothing a run reads is replaced: inputs, specs, sql_files, an input DB; tracebook_run is reserved")
def _(t):
    d = t.mkdir("in")
    trace = os.path.join(d, "t.json")
    shutil.copyfile(ASCEND, trace)
    fp = fingerprint(trace)
    refuse = "tracebook: error: %s: refusing to replace an input file: write the output elsewhere (-o)\n"
    # query -o onto the input trace, and onto a torch_npu CSV input
    t.expect(t.run(["query", "-dir", trace, "--format", "json", "-o", trace, "SELECT 1 AS a"]), 2, out="",
             err=refuse % trace)
    rank = os.path.join(t.mkdir("rank"), "r0_ascend_pt")
    shutil.copytree(os.path.join(SAMPLES, "torch_npu_2rank", "rank0_ascend_pt"), rank)
    kd = os.path.join(rank, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
    fk = fingerprint(kd)
    t.expect(t.run(["query", "-dir", rank, "--format", "csv", "-o", kd, "SELECT 1 AS a", "-q"]), 2, out="",
             err=refuse % kd)
    t.eq(fingerprint(kd), fk, "the CSV input is unchanged")
    # a report whose output is its spec, or its sql_file
    sd = t.mkdir("specs")
    spec = os.path.join(sd, "r.json")
    write(spec, '{"tracebook": 1, "reports": [{"id": "r", "sql": "SELECT 1 AS a", "outputs": ["json"]}]}\n')
    fs = fingerprint(spec)
    r = t.run(["report", "-dir", trace, "--spec", spec, "-o", sd, "-q"])
    t.expect(r, 2, out="", err=refuse % os.path.join(sd, "r.json"))
    t.eq(fingerprint(spec), fs, "the spec is unchanged")
    sqlf = os.path.join(sd, "q.csv")
    write(sqlf, "SELECT 2 AS b\n")
    spec2 = os.path.join(sd, "s.yaml")
    write(spec2, "tracebook: 1\nreports:\n  - id: q\n    sql_file: q.csv\n    outputs: [csv]\n")
    fq = fingerprint(sqlf)
    t.expect(t.run(["report", "-dir", trace, "--spec", spec2, "-o", sd, "-q"]), 2, out="",
             err=refuse % os.path.join(sd, "q.csv"))
    t.eq(fingerprint(sqlf), fq, "the sql_file is unchanged")
    # a spec named tracebook_run.json: refused before any report writes
    meta_spec = os.path.join(t.mkdir("meta"), "tracebook_run.json")
    write(meta_spec, "tracebook: 1\nreports:\n  - id: m\n    sql: SELECT 1 AS a\n")
    fm = fingerprint(meta_spec)
    t.expect(t.run(["report", "-dir", trace, "--spec", meta_spec, "-o", os.path.dirname(meta_spec), "-q"]), 2,
             out="", err=refuse % os.path.join(os.path.dirname(meta_spec), "tracebook_run.json"))
    t.eq(fingerprint(meta_spec), fm, "the spec named tracebook_run.json is unchanged")
    t.eq(listing(os.path.dirname(meta_spec)), ["tracebook_run.json"], "nothing written beside it")
    # a report id that names the metadata file
    rid = os.path.join(sd, "id.yaml")
    write(rid, "tracebook: 1\nreports:\n  - id: tracebook_run\n    sql: SELECT 1 AS a\n")
    t.expect(t.run(["report", "-dir", trace, "--spec", rid, "-o", t.mkdir("o2")]), 2, out="",
             err="tracebook: error: %s:3:5: report id 'tracebook_run' names the run's metadata file "
                 "tracebook_run.json: give the report another id\n" % rid)
    t.eq(fingerprint(trace), fp, "the trace is unchanged")
    # export db of a DB named alone, into its own folder under its own default name
    x = t.mkdir("x")
    shutil.copyfile(ASCEND, os.path.join(x, "t.json"))
    r = t.run(["export", "db", "-dir", x, "-q"], default_out=True)
    t.eq(r.rc, 0, "first export (%r)" % r)
    db = r.out.strip()
    os.unlink(os.path.join(x, "t.json"))
    fd = fingerprint(db)
    r = t.run(["export", "db", "-dir", db], default_out=True)
    t.expect(r, 2, out="", err="tracebook: error: %s: the output would replace the input '%s': write it "
                               "elsewhere (-o)\n" % (db, db))
    t.eq(fingerprint(db), fd, "the input DB is unchanged")
    t.eq(listing(x), [os.path.basename(db)], "nothing else left beside it")


@case("times outside +-2^62 ns: skipped with a counted warning, an error with --strict; no report fails")
def _(t):
    d = t.mkdir("in")
    trace = os.path.join(d, "far.json")
    # one kernel in range, one whose ts + dur would overflow int64, two moved to +-7e15 us
    events = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Ascend Hardware"}},
              {"ph": "M", "name": "process_labels", "pid": 1, "args": {"labels": "NPU 0"}},
              {"ph": "X", "name": "k", "pid": 1, "tid": 1, "ts": "1.000", "dur": 2, "args": {"Task Type": "AI_CORE"}},
              {"ph": "X", "name": "big", "pid": 1, "tid": 1, "ts": 5e15, "dur": 5e15, "args": {"Task Type": "AI_CORE"}},
              {"ph": "X", "name": "far", "pid": 1, "tid": 1, "ts": 7e15, "dur": 1, "args": {"Task Type": "AI_CORE"}},
              {"ph": "X", "name": "neg", "pid": 1, "tid": 1, "ts": -7e15, "dur": 1, "args": {"Task Type": "AI_CORE"}},
              # beyond int64 ns itself: skipped as well, not "'ts' is not a number" (found by tests/bad-inputs)
              {"ph": "X", "name": "e16", "pid": 1, "tid": 1, "ts": 1e16, "dur": 1, "args": {"Task Type": "AI_CORE"}},
              {"ph": "X", "name": "e300", "pid": 1, "tid": 1, "ts": -1e300, "dur": 1, "args": {"Task Type": "AI_CORE"}},
              {"ph": "X", "name": "digits", "pid": 1, "tid": 1, "ts": "99999999999999999999999", "dur": 1e300,
               "args": {"Task Type": "AI_CORE"}}]
    write(trace, json.dumps(events))
    db = os.path.join(t.mkdir("out"), "x.db")
    t.expect(t.run(["export", "db", "-dir", trace, "-o", db]), 0, out=db + "\n",
             err="tracebook: warning: %s: 6 events with a time outside +-2^62 ns (about 146 years from 1970) "
                 "skipped\n" % trace)
    if os.path.exists(db):
        t.eq(sql(db, "SELECT name, startNs, endNs FROM kernel"), [{"name": "k", "startNs": 1000, "endNs": 3000}],
             "the kernel in range")
        t.eq(scalar(db, "SELECT events FROM TB_LOAD_COUNT WHERE dest LIKE 'skipped: times%'"), 6, "counted")
        t.eq(scalar(db, "SELECT min(startNs) >= -(1 << 62) AND max(endNs) < (1 << 62) FROM TASK"), 1, "range")
    r = t.run(["export", "db", "-dir", trace, "-o", os.path.join(t.mkdir("strict"), "s.db"), "--strict"])
    t.eq(r.rc, 3, "--strict: exit code (%r)" % r)
    t.check(re.match(r"tracebook: error: %s: byte \d+: a time outside \+-2\^62 ns" % re.escape(trace), r.err),
            "--strict: the error names the file and the byte: %r" % r.err)
    # a DB input with such a time: the row is skipped and counted as well
    base = os.path.join(t.mkdir("dbin"), "base.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", base, "-q"]), 0)
    tasks = scalar(base, "SELECT count(*) FROM TASK")
    con = sqlite3.connect(base)
    con.execute("UPDATE TASK SET startNs = 7000000000000000000 WHERE rowid = (SELECT min(rowid) FROM TASK)")
    con.commit()
    con.close()
    again = os.path.join(t.mkdir("dbout"), "again.db")
    r = t.run(["export", "db", "-dir", base, "-o", again])
    t.expect(r, 0, out=again + "\n",
             err="tracebook: warning: %s: 1 events with a time outside +-2^62 ns (about 146 years from 1970) "
                 "skipped\n" % base)
    if os.path.exists(again):
        t.eq(scalar(again, "SELECT count(*) FROM TASK"), tasks - 1, "DB input: the row is skipped")
    # the computed tables work on what was kept
    out = t.mkdir("rep")
    r = t.run(["report", "-dir", trace, "--spec", "builtin:exposed_time", "--spec", "builtin:step_trace_time",
               "-o", out, "-q"])
    t.eq(r.rc, 0, "reports run (%r)" % r)


def load_far_times(t, path, skipped, strict_line):
    """export db of path: its rows with a time outside +-2^62 ns (skipped of them) are skipped with one
    warning and counted in TB_LOAD_COUNT; with --strict the first is an error at line strict_line and
    nothing is written. Returns the DB's path, or None when it was not written."""
    db = os.path.join(t.mkdir("out"), "x.db")
    t.expect(t.run(["export", "db", "-dir", path, "-o", db]), 0, out=db + "\n",
             err="tracebook: warning: %s: %d events with a time outside +-2^62 ns (about 146 years from 1970) "
                 "skipped\n" % (path, skipped))
    if os.path.exists(db):
        t.eq(scalar(db, "SELECT events FROM TB_LOAD_COUNT WHERE dest LIKE 'skipped: times%'"), skipped, "counted")
    strict = t.mkdir("strict")
    r = t.run(["export", "db", "-dir", path, "-o", os.path.join(strict, "s.db"), "--strict"])
    t.expect(r, 3, out="", err="tracebook: error: %s:%d: a time outside +-2^62 ns (about 146 years from 1970)\n"
                               % (path, strict_line))
    t.eq(listing(strict), [], "--strict: nothing written")
    return db if os.path.exists(db) else None


@case("topsprof rows outside +-2^62 ns: skipped and counted, an error at the line with --strict")
def _(t):
    # the second row starts 1 ns short of 2^63 (its end would overflow), the third 2^62 ns in,
    # the fourth beyond int64 ns itself
    listing_txt = ("==9==      Start   Duration                        Node Name Name\n"
                   "==9== GCU trace:\n"
                   "==9==     1.00us     2.00us                            node k\n"
                   "==9== 9223372036854775807ns 13320ns                      node far\n"
                   "==9== 4611686018427387904ns 1ns                          node edge\n"
                   "==9== 99999999999999999999ns 1ns                         node beyond\n"
                   "==9==     5.00us     1.00us                            node m\n")
    d = t.mkdir("in")
    path = os.path.join(d, "tops.txt")
    write(path, listing_txt)
    db = load_far_times(t, path, 3, 4)
    if db:
        t.eq(sql(db, "SELECT s.value AS name, startNs, endNs FROM TASK JOIN STRING_IDS s ON s.id = TASK.name "
                     "ORDER BY startNs"),
             [{"name": "k", "startNs": 1000, "endNs": 3000}, {"name": "m", "startNs": 5000, "endNs": 6000}],
             "the rows in range")


@case("summary CSV rows outside +-2^62 ns: graph iterations whose start (end - time) would overflow are skipped")
def _(t):
    # step_trace: iteration 2's end and time are -9e15 and 9e15 us (their difference overflowed int64),
    # 3's lie within +-2^62 ns each but start 8e18 ns before 1970, 4's reduce starts 5e15 us in
    head = ("Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),Iteration Time(us),"
            "FP to BP Time(us),Iteration Refresh(us),Data Aug Bound(us),Model ID,"
            "Reduce Start(us),Reduce Duration(us)\n")
    rows = ("0,1,100.000,150.000,200.000,110.000,50,1,1,1,160,10\n"
            "0,2,N/A,N/A,-9000000000000000,9000000000000000,N/A,N/A,N/A,1,N/A,N/A\n"
            "0,3,N/A,N/A,-4000000000000000,4000000000000000,N/A,N/A,N/A,1,N/A,N/A\n"
            "0,4,300.000,350.000,400.000,100.000,50,1,1,1,5000000000000000,1\n"
            "0,5,500.000,550.000,600.000,100.000,50,1,1,1,560,10\n")
    d = t.mkdir("in")
    path = os.path.join(d, "step_trace_20240101000000.csv")
    write(path, head + rows)
    db = load_far_times(t, path, 3, 3)
    if db:
        t.eq(sql(db, "SELECT iterId, indexId, startNs, endNs FROM TB_ITERATION ORDER BY iterId"),
             [{"iterId": 1, "indexId": 1, "startNs": 90000, "endNs": 200000},
              {"iterId": 5, "indexId": 2, "startNs": 500000, "endNs": 600000}], "the iterations in range")
        t.eq(scalar(db, "SELECT count(*) FROM TB_ITERATION_REDUCE"), 2, "their reduces")


@case("communication.json ops with a time outside +-2^62 ns or beyond int64 ns: skipped and counted, or --strict")
def _(t):
    def op(start, elapse, bw=False):
        o = {"Communication Time Info": {"Start Timestamp(us)": start, "Elapse Time(ms)": elapse}}
        if bw:
            o["Communication Bandwidth Info"] = {"HCCS": {"Transit Size(MB)": 1, "Transit Time(ms)": 0.25,
                                                          "Bandwidth(GB/s)": 4, "Large Packet Ratio": 0}}
        return o
    # written as numbers (msprof-analyze's style): 5e15 us is 5e18 ns (beyond 2^62), 1e20 ms and
    # -1e44 us do not even fit in int64 ns (were stored as NULL, silently)
    ops = [("hcom_allReduce__1_1@g8", op("1700000000000000.125", "0.5", True)),
           ("hcom_allReduce__1_2@g8", op("5e15", "0.5", True)),
           ("hcom_allReduce__1_3@g8", op("1700000000001000", "1e20")),
           ("hcom_allReduce__1_4@g8", op("-" + "9" * 44, "1")),
           ("hcom_allReduce__1_5@g8", op("1700000000002000", "1"))]
    body = ", ".join('"%s": %s' % (k, json.dumps(v)) for k, v in ops)
    body = re.sub(r'"(-?[0-9][0-9.e]*)"', r"\1", body)  # the times as JSON numbers
    d = t.mkdir("in")
    path = os.path.join(d, "communication.json")
    write(path, '{"step1": {"collective": {%s}}}' % body)
    db = os.path.join(t.mkdir("out"), "x.db")
    t.expect(t.run(["export", "db", "-dir", path, "-o", db]), 0, out=db + "\n",
             err="tracebook: warning: %s: 3 events with a time outside +-2^62 ns (about 146 years from 1970) "
                 "skipped\n" % path)
    if os.path.exists(db):
        t.eq(sql(db, "SELECT s.value AS op, startTimeNs, elapseNs FROM TB_COMM_OP_STAT o "
                     "JOIN STRING_IDS s ON s.id = o.opName ORDER BY startTimeNs"),
             [{"op": "hcom_allReduce__1_1", "startTimeNs": 1700000000000000125, "elapseNs": 500000},
              {"op": "hcom_allReduce__1_5", "startTimeNs": 1700000000002000000, "elapseNs": 1000000}], "the ops in range")
        t.eq(scalar(db, "SELECT count(*) FROM TB_COMM_BANDWIDTH"), 1, "a skipped op's bandwidth goes with it")
        t.eq(scalar(db, "SELECT events FROM TB_LOAD_COUNT WHERE dest LIKE 'skipped: times%'"), 3, "counted")
    strict = t.mkdir("strict")
    r = t.run(["export", "db", "-dir", path, "-o", os.path.join(strict, "s.db"), "--strict"])
    t.expect(r, 3, out="", err="tracebook: error: %s: step1/hcom_allReduce__1_2@g8: a time outside +-2^62 ns "
                               "(about 146 years from 1970)\n" % path)
    t.eq(listing(strict), [], "--strict: nothing written")
    # the DB of it as an input: a duration (any ns column, not only startNs and endNs) is checked too
    if os.path.exists(db):
        con = sqlite3.connect(db)
        con.execute("UPDATE TB_COMM_OP_STAT SET elapseNs = 7000000000000000000 WHERE rowid = 1")
        con.execute("UPDATE TB_COMM_OP_STAT SET waitNs = 7e18 WHERE rowid = 2")  # a REAL as well
        con.commit()
        con.close()
        again = os.path.join(t.mkdir("dbout"), "again.db")
        t.expect(t.run(["export", "db", "-dir", db, "-o", again]), 0, out=again + "\n",
                 err="tracebook: warning: %s: 2 events with a time outside +-2^62 ns (about 146 years from 1970) "
                     "skipped\n" % db)
        if os.path.exists(again):
            t.eq(scalar(again, "SELECT count(*) FROM TB_COMM_OP_STAT"), 0, "DB input: the rows are skipped")


@case("a DB input's session span or base time outside +-2^62 ns is not taken: the span of its tasks is")
def _(t):
    base = os.path.join(t.mkdir("in"), "base.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", base, "-q"]), 0, out=base + "\n")
    con = sqlite3.connect(base)
    con.execute("UPDATE SESSION_TIME_INFO SET startTimeNs = -7000000000000000000, endTimeNs = 7000000000000000000,"
                " baseTimeNs = 8000000000000000000")
    con.commit()
    con.close()
    again = os.path.join(t.mkdir("out"), "again.db")
    t.expect(t.run(["export", "db", "-dir", base, "-o", again]), 0, out=again + "\n", err="")
    if os.path.exists(again):
        t.eq(sql(again, "SELECT startTimeNs, endTimeNs, baseTimeNs FROM SESSION_TIME_INFO"),
             sql(again, "SELECT min(startNs) AS startTimeNs, max(endNs) AS endTimeNs, NULL AS baseTimeNs FROM TASK"),
             "the span of the tasks, no base time")


@case("a shard DB whose TB_SHARD.ranksAll or TB_SHARD_RANK.claim no load has: an error naming it, no output")
def _(t):
    shards = t.mkdir("shards")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "--shard", "0/1", "-o", shards, "-q"]), 0,
             out=os.path.join(shards, "shard_0_of_1.db") + "\n")
    shard = os.path.join(shards, "shard_0_of_1.db")
    for ranks in (2305843009213693952, -1, 1000001):  # 2^61 ranks wrapped the size of the merge's table to 0
        con = sqlite3.connect(shard)
        con.execute("UPDATE TB_SHARD SET ranksAll = ?", (ranks,))
        con.commit()
        con.close()
        out = t.mkdir("merged%d" % (ranks & 0xff))
        r = t.run(["export", "db", "-dir", shard, "-o", os.path.join(out, "m.db")])
        t.expect(r, 3, out="", err="tracebook: error: %s: TB_SHARD.ranksAll %d is out of range (0 to 1000000 ranks)\n"
                                   % (shard, ranks))
        t.eq(listing(out), [], "nothing written")
    # a rank's claim beyond what a rank id can be (a load ignores such an id; the merge took it whole,
    # and the rank's tables said 2^40 where the bookkeeping held a truncated int)
    con = sqlite3.connect(shard)
    con.execute("UPDATE TB_SHARD SET ranksAll = 1")
    con.execute("UPDATE TB_SHARD_RANK SET claim = 1099511627776")
    con.commit()
    con.close()
    out = t.mkdir("merged-claim")
    r = t.run(["export", "db", "-dir", shard, "-o", os.path.join(out, "m.db")])
    t.expect(r, 3, out="", err="tracebook: error: %s: TB_SHARD_RANK.claim 1099511627776 (rank 0) is out of range "
                               "(-1 to 2147483647)\n" % shard)
    t.eq(listing(out), [], "nothing written")


@case("one huge event: an error naming where it starts, in bounded memory; TRACEBOOK_MAX_EVENT_MB raises it")
def _(t):
    d = t.mkdir("in")
    gz = os.path.join(d, "huge.json.gz")
    with gzip.open(gz, "wb") as f:  # 100 KiB on disk, one 100 MiB name
        f.write(b'[{"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "name": "' + b"a" * (100 << 20) + b'"}]')
    out = t.mkdir("out")
    db = os.path.join(out, "h.db")
    r = t.run(["export", "db", "-dir", gz, "-o", db])
    t.expect(r, 3, out="", err="tracebook: error: %s:1:2: an event or value longer than 64 MiB "
                               "(TRACEBOOK_MAX_EVENT_MB raises the limit)\n" % gz)
    t.eq(listing(out), [], "nothing written")
    env = t.env()
    env["TRACEBOOK_MAX_EVENT_MB"] = "200"
    p = subprocess.run([TB, "export", "db", "-dir", gz, "-o", db, "-q"], cwd=t.cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    t.eq((p.returncode, p.stderr), (0, b""), "with the limit raised it loads")
    if os.path.exists(db):
        t.eq(scalar(db, "SELECT length(s.value) FROM TB_EVENT e JOIN STRING_IDS s ON s.id = e.name"), 100 << 20,
             "the whole name")


@case("--csv-safe: text a spreadsheet would take for a formula gets a leading quote; numbers stay")
def _(t):
    sqlq = "SELECT '=1+1' AS a, '-5' AS b, '+cmd|x' AS c, '@SUM(A1)' AS d, 'a,=b' AS e, '=x,y' AS f, '-' AS g"
    r = t.run(["query", "-dir", ASCEND, "--format", "csv", "--csv-safe", sqlq])
    t.expect(r, 0, out="a,b,c,d,e,f,g\n'=1+1,-5,'+cmd|x,'@SUM(A1),\"a,=b\",\"'=x,y\",'-\n", err="")
    t.expect(t.run(["query", "-dir", ASCEND, "--format", "csv", "SELECT '=1+1' AS a"]), 0, out="a\n=1+1\n")
    t.expect(t.run(["query", "-dir", ASCEND, "--csv-safe", "SELECT 1"]), 2, out="",
             err=usage_error("query", "--csv-safe: only CSV output has cells to guard (give --format csv)"))
    out = t.mkdir("out")
    spec = os.path.join(t.mkdir("s"), "f.yaml")
    write(spec, "tracebook: 1\nreports:\n  - id: f\n    sql: SELECT '=HYPERLINK(1)' AS x, -2.5 AS y\n")
    t.expect(t.run(["report", "-dir", ASCEND, "--spec", spec, "-o", out, "--csv-safe", "-q"]), 0, err="")
    t.eq(read(os.path.join(out, "f.csv")), b"x,y\n'=HYPERLINK(1),-2.5\n", "report --csv-safe")
    t.expect(t.run(["report", "-dir", ASCEND, "--spec", spec, "-o", out, "--csv-safe", "--format", "json"]), 2,
             out="", err=usage_error("report", "--csv-safe: --format 'json' writes no CSV"))


@case("concurrent runs: info on the same inputs loads once; reports into one folder take turns")
def _(t):
    d = t.mkdir("in")
    big = os.path.join(d, "padded.json")
    padded_trace(big)  # 65 MiB: a load long enough for the two runs to overlap
    shutil.copyfile(ASCEND, os.path.join(d, "trace_view.json"))
    procs = [subprocess.Popen([TB, "info", "-dir", d], cwd=t.cwd, env=t.env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    t.eq([p.returncode for p in procs], [0, 0], "both info runs succeed")
    loaded = sum(1 for o, _ in outs if o.decode().splitlines()[0].endswith(", loaded now)"))
    reused = sum(1 for o, _ in outs if o.decode().splitlines()[0].endswith(", reused: inputs unchanged)"))
    t.eq((loaded, reused), (1, 1), "one run loads, the other waits and reuses its DB")
    out = t.mkdir("out")
    procs = [subprocess.Popen([TB, "report", "-dir", d, "--spec", "builtin:top_kernels", "-o", out, "-q"],
                              cwd=t.cwd, env=t.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    for p in procs:
        p.communicate(timeout=120)
    t.eq([p.returncode for p in procs], [0, 0], "both report runs succeed")
    t.eq(listing(out), ["top_kernels.csv", "tracebook_run.json"], "one complete set of files")
    meta = json.loads(read(os.path.join(out, "tracebook_run.json")))
    t.eq([r["files"] for r in meta["reports"]], [["top_kernels.csv"]], "the metadata lists the file")


@case("disk full: exit 4 naming the DB being written, nothing left behind (a 512 KiB tmpfs; root only)")
def _(t):
    full = t.mkdir("full")
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", full],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        return  # needs root and tmpfs: nothing to check here
    try:
        db = os.path.join(full, "x.db")
        r = t.run(["export", "db", "-dir", ASCEND, "-o", db])
        t.expect(r, 4, out="", err="tracebook: error: %s: SQLite: database or disk is full\n" % db)
        t.eq(os.listdir(full), [], "nothing left on the full disk")
    finally:
        subprocess.run(["umount", full])


@case("the cache is never inside an input folder: refused before anything is created there")
def _(t):
    d = t.mkdir("in")
    shutil.copyfile(ASCEND, os.path.join(d, "trace_view.json"))
    env = t.env()
    env["XDG_CACHE_HOME"] = os.path.join(d, ".cache")
    p = subprocess.run([TB, "info", "-dir", d], cwd=t.cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    t.eq(p.returncode, 2, "exit code")
    t.eq(p.stderr.decode(), "tracebook: error: %s: the cache directory is inside the input '%s': set "
                            "XDG_CACHE_HOME elsewhere\n" % (os.path.join(d, ".cache", "tracebook"), d), "message")
    t.eq(listing(d), ["trace_view.json"], "nothing created in the input folder")


@case("merge: tracebook DBs of two ranks give the rows of a load of both raw ranks at once")
def _(t):
    root = os.path.join(SAMPLES, "torch_npu_2rank")
    out = t.mkdir("out")
    shards = []
    for r in (0, 1):
        db = os.path.join(out, "r%d.db" % r)
        t.expect(t.run(["export", "db", "-dir", os.path.join(root, "rank%d_ascend_pt" % r), "-o", db, "-q"]), 0)
        shards.append(db)
    merged = os.path.join(out, "merged", "all.db")
    t.expect(t.run(["merge", "-o", merged] + shards), 0, out=merged + "\n", err="")
    raw = os.path.join(out, "raw.db")
    t.expect(t.run(["export", "db", "-dir", root, "-o", raw, "-q"]), 0)
    for view in ("kernel", "comm_op", "api", "step", "device_task"):
        q = "SELECT * FROM %s ORDER BY 1, 2, 3, 4, 5" % view
        if os.path.exists(merged) and os.path.exists(raw):
            t.eq(sql(merged, q), sql(raw, q), "%s: the same rows" % view)
    t.eq(sql(merged, "SELECT rankId FROM TB_RANK ORDER BY 1"), [{"rankId": 0}, {"rankId": 1}], "ranks kept")
    notdb = os.path.join(out, "x.json")
    shutil.copyfile(ASCEND, notdb)
    t.expect(t.run(["merge", "-o", os.path.join(out, "y.db"), notdb]), 2, out="",
             err=usage_error("merge", "'%s' is not a DB that tracebook wrote (merge reads such DBs; export db "
                                      "reads profile data)" % notdb))


@case("the cache folder must be private: another user's or a world-writable one is refused")
def _(t):
    d = t.mkdir("in")
    shutil.copyfile(ASCEND, os.path.join(d, "trace_view.json"))
    cache = os.path.join(t.env()["XDG_CACHE_HOME"], "tracebook")
    t.expect(t.run(["info", "-dir", d]), 0)
    t.eq(oct(os.stat(cache).st_mode & 0o777), oct(0o700), "the cache folder is made 0700")
    os.chmod(cache, 0o777)
    r = t.run(["info", "-dir", d])
    t.expect(r, 4, out="", err="tracebook: error: %s: the cache directory is writable by other users: refusing "
                                "to use it (set XDG_CACHE_HOME to a folder of your own)\n" % cache)
    os.chmod(cache, 0o700)
    # a cached DB that others may write is not reused: loaded again over it
    dbs = [os.path.join(cache, n) for n in os.listdir(cache) if n.endswith(".db")]
    t.eq(len(dbs), 1, "one cached DB")
    if dbs:
        os.chmod(dbs[0], 0o666)
        r = t.run(["info", "-dir", d])
        t.check(r.rc == 0 and r.out.splitlines()[0].endswith(", loaded now)"), "writable DB: loaded again: %r" % r)
        r = t.run(["info", "-dir", d])
        t.check(r.rc == 0 and r.out.splitlines()[0].endswith(", reused: inputs unchanged)"), "then reused: %r" % r)
    if os.geteuid() == 0:
        os.chown(cache, 65534, 65534)
        r = t.run(["info", "-dir", d])
        t.expect(r, 4, out="", err="tracebook: error: %s: the cache directory is owned by another user: refusing "
                                    "to use it (set XDG_CACHE_HOME to a folder of your own)\n" % cache)
        os.chown(cache, 0, 0)


@case("temporaries a killed run left are removed by the next run; others' are kept")
def _(t):
    out = t.mkdir("out")
    host = socket.gethostname() or "localhost"
    host = "".join("_" if c in "/@- " else c for c in host)[:63]
    dead = subprocess.Popen(["true"])
    dead.wait()
    live = os.getpid()
    names = {"stale": "x.db.tmp-%d@%s-abcdef" % (dead.pid, host),
             "stale_csv": "op_statistic.csv.tmp-%d@%s-ghijkl" % (dead.pid, host),
             "running": "x.db.tmp-%d@%s-mnopqr" % (live, host),
             "other_host": "x.db.tmp-%d@elsewhere-stuvwx" % dead.pid,
             "not_ours": "notes.tmp-1234"}
    for n in names.values():
        with open(os.path.join(out, n), "w") as f:
            f.write("left over")
    db = os.path.join(out, "x.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", db, "-q"]), 0, out=db + "\n", err="")
    t.eq(listing(out), sorted(["x.db", names["running"], names["other_host"], names["not_ours"]]),
         "stale temporaries of this host removed, the rest kept")
    # a SIGKILLed export leaves its temporary; the next run into that folder removes it
    big = os.path.join(t.mkdir("big"), "trace.json")
    with open(big, "w") as f:
        f.write('{"traceEvents": [')
        f.write(",".join('{"ph": "X", "name": "k%d", "pid": 1, "tid": 1, "ts": %d, "dur": 1}' % (i, i)
                         for i in range(400000)))
        f.write("]}")
    killed = t.mkdir("killed")
    p = subprocess.Popen([TB, "export", "db", "-dir", big, "-o", os.path.join(killed, "k.db"), "-q"],
                         cwd=t.cwd, env=t.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline and not any(".tmp-" in n for n in os.listdir(killed)):
        time.sleep(0.005)
    p.kill()
    p.wait()
    left = [n for n in os.listdir(killed) if ".tmp-" in n]
    t.check(left and all(n.startswith("k.db.tmp-%d@" % p.pid) for n in left),
            "a SIGKILL leaves the temporary, named with the pid: %r" % left)
    again = os.path.join(killed, "k2.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", again, "-q"]), 0, out=again + "\n", err="")
    t.eq(listing(killed), ["k2.db"], "the next run removed the killed run's temporary")


# ---- 14. the generated multi-rank and topsprof samples ------------------------------------

@case("samples/torch_npu_2rank loads as two ranks, the timeline winning over kernel_details.csv")
def _(t):
    root = os.path.join(SAMPLES, "torch_npu_2rank")
    out = t.mkdir("out")
    db = os.path.join(out, "two.db")
    r = t.run(["export", "db", "-dir", root, "-o", db, "-q"])
    t.expect(r, 0, out=db + "\n", err="")
    t.eq(sql(db, "SELECT rankId FROM TB_RANK ORDER BY 1"), [{"rankId": 0}, {"rankId": 1}], "ranks")
    for rank in (0, 1):
        pt = os.path.join(root, "rank%d_ascend_pt" % rank, "ASCEND_PROFILER_OUTPUT")
        events = json.loads(read(os.path.join(pt, "trace_view.json")))
        names = {str(e["pid"]): e["args"]["name"] for e in events
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
        hw = sum(1 for e in events if e.get("ph") == "X" and names.get(str(e.get("pid"))) == "Ascend Hardware")
        with open(os.path.join(pt, "kernel_details.csv"), newline="") as f:
            csv_rows = sum(1 for _ in csv.reader(f)) - 1
        t.eq(scalar(db, "SELECT count(*) FROM TASK WHERE rankId = %d" % rank), hw,
             "rank %d: TASK rows = the timeline's Ascend Hardware slices" % rank)
        skipped = scalar(db, "SELECT sum(c.events) FROM TB_LOAD_COUNT c JOIN TB_SOURCE s ON s.id = c.sourceId"
                             " WHERE s.rankId = %d AND s.path LIKE '%%kernel_details.csv'"
                             " AND c.dest = 'skipped: table filled by a better source'" % rank)
        t.eq(skipped, csv_rows, "rank %d: every kernel_details.csv row skipped for the better source" % rank)
        t.eq(scalar(db, "SELECT count(*) FROM TB_STEP_TRACE_TIME WHERE rankId = %d" % rank), 1,
             "rank %d: step_trace_time.csv row" % rank)
        t.eq(scalar(db, "SELECT group_concat(deviceId) FROM RANK_DEVICE_MAP WHERE rankId = %d" % rank), str(rank),
             "rank %d: device from NPU <n>" % rank)


@case("samples/topsprof listings load: statistics per device, trace rows as device tasks")
def _(t):
    out = t.mkdir("out")
    stats = os.path.join(SAMPLES, "topsprof", "summary_per_gcu.txt")
    db = os.path.join(out, "tops.db")
    t.expect(t.run(["export", "db", "-dir", stats, "-o", db, "-q"]), 0, out=db + "\n", err="")
    # rows counted from the text: lines of a table with a percentage first
    want = sum(1 for line in read(stats).decode().splitlines()
               if re.match(r"^(==\d+== )?\s*(GCU activities:|RUNTIME activities:|CPU activities:)?\s*\d+\.\d+%", line))
    t.eq(scalar(db, "SELECT count(*) FROM TB_TOPS_SUMMARY"), want, "statistics rows")
    t.check(scalar(db, "SELECT count(DISTINCT deviceId) FROM TB_TOPS_SUMMARY") >= 2, "split per device")
    trace = os.path.join(SAMPLES, "topsprof", "trace_nodes.txt")
    db2 = os.path.join(out, "trace.db")
    t.expect(t.run(["export", "db", "-dir", trace, "-o", db2, "-q"]), 0, out=db2 + "\n", err="")
    t.check(scalar(db2, "SELECT count(*) FROM kernel") > 0, "trace rows are kernels")
    t.eq(scalar(db2, "SELECT count(*) FROM kernel"), scalar(db2, "SELECT count(*) FROM TASK"), "every task a kernel")


# ---- 15. report, query, reports --------------------------------------------------------------

def ascend_counts():
    """Independent counts of the Ascend sample: device tasks and steps."""
    events = json.loads(read(ASCEND))
    names = {str(e["pid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    hw = [e for e in events if e.get("ph") == "X" and names.get(str(e.get("pid"))) == "Ascend Hardware"]
    steps = sorted(int(e["name"].split("#")[1]) for e in events
                   if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))
    return hw, steps


@case("query: console table, csv and json on stdout, typed columns converted")
def _(t):
    hw, _steps = ascend_counts()
    total_ns = sum(int(decimal.Decimal(str(e["dur"])) * 1000) for e in hw)
    r = t.run(["query", "-dir", ASCEND, "SELECT count(*) AS n FROM TASK"])
    width = max(1, len(str(len(hw))))
    t.expect(r, 0, out="%s\n%s\n%s\n" % ("n".rjust(width), "-" * width, str(len(hw)).rjust(width)), err="")
    r = t.run(["query", "-dir", ASCEND, "--format", "csv", "--timeunit", "ms",
               "SELECT count(*) AS n, sum(endNs - startNs) AS \"Total:dur_ns\" FROM TASK"])
    ms = (decimal.Decimal(total_ns) / 1000000).normalize()
    t.expect(r, 0, out="n,Total(ms)\n%d,%s\n" % (len(hw), format(ms, "f")), err="")
    r = t.run(["query", "-dir", ASCEND, "--format", "json", "SELECT 1 AS a, 'x' AS b, NULL AS c"])
    t.expect(r, 0, err="")
    t.eq(json.loads(r.out), [{"a": 1, "b": "x", "c": None}], "json rows")


@case("query: an SQL error points at its place in the statement")
def _(t):
    out = t.mkdir("out")
    db = os.path.join(out, "a.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", db, "-q"]), 0)
    t.expect(t.run(["query", "-dir", db, "SELECT name,\n       nme AS y\nFROM kernel"]), 3, out="",
             err="tracebook: error: query: no such column: nme\n         nme AS y\n         ^ line 2, column 8\n")
    t.expect(t.run(["query", "-dir", db, "SELECT 1; SELEC 2"]), 3, out="",
             err="tracebook: error: query: near \"SELEC\": syntax error\n  SELECT 1; SELEC 2\n"
                 "            ^ line 1, column 11\n", what="an error in a second statement")
    # an error without a place in the text has no pointer
    t.expect(t.run(["query", "-dir", db, "SELECT 1 +"]), 3, out="", err="tracebook: error: query: incomplete input\n")


@case("query and report: an unknown column type suffix is an error listing the types")
def _(t):
    out = t.mkdir("out")
    db = os.path.join(out, "a.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", db, "-q"]), 0)
    types = "the types are :dur_ns, :ts_ns, :ratio_%, :mem_B, :rank"
    t.expect(t.run(["query", "-dir", db, "SELECT 1 AS \"Share:ratio_pct\""]), 3, out="",
             err="tracebook: error: query: column 'Share:ratio_pct': unknown type suffix ':ratio_pct'; %s\n" % types)
    spec = os.path.join(t.mkdir("specs"), "s.yaml")
    write(spec, b"tracebook: 1\nreports:\n  - id: a\n    sql: SELECT 1 AS \"T:dur_us\"\n")
    t.expect(t.run(["report", "-dir", db, "--spec", spec, "-o", out]), 3, out="",
             err="tracebook: error: %s:4:10: report 'a': column 'T:dur_us': unknown type suffix ':dur_us'; %s\n"
                 % (spec, types))
    # other colons are plain names
    t.expect(t.run(["query", "-dir", db, "--format", "csv", "SELECT 1 AS \"a:b\", 2 AS \"10:30\", 3 AS \"x:ms\""]),
             0, out="a:b,10:30,x:ms\n1,2,3\n", err="")
    t.eq(listing(out), ["a.db"], "nothing written")


@case("query: the sandbox refuses writes, exit 2, input DB unchanged")
def _(t):
    out = t.mkdir("out")
    db = os.path.join(out, "a.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", db, "-q"]), 0)
    before = fingerprint(db)
    for sql_text, msg in (("DELETE FROM TASK", "DELETE is not allowed: report SQL is read-only"),
                          ("ATTACH DATABASE 'x.db' AS x", "ATTACH is not allowed: report SQL is read-only"),
                          ("PRAGMA writable_schema = 1",
                           "PRAGMA writable_schema = 1 is not allowed: report SQL is read-only")):
        t.expect(t.run(["query", "-dir", db, sql_text]), 2, out="", err="tracebook: error: query: %s\n" % msg,
                 what=sql_text)
    r = t.run(["query", "-dir", db, "--max-steps", "100000",
               "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"])
    t.expect(r, 2, out="", err="tracebook: error: query: stopped after 100000 SQLite steps (the step budget); "
                               "a query that never ends? raise the budget with --max-steps\n")
    t.eq(fingerprint(db), before, "the DB is unchanged")
    t.eq(listing(out), ["a.db"], "nothing else beside the DB")


@case("query: the sandbox allows listed functions and modules only (FTS3 tables, fts3_tokenizer)")
def _(t):
    out = t.mkdir("out")
    db = os.path.join(out, "a.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", db, "-q"]), 0)
    # an FTS3 table and a view that calls fts3_tokenizer, planted in a DB tracebook wrote
    con = sqlite3.connect(db)
    con.execute("CREATE VIRTUAL TABLE notes USING fts3(body)")
    con.execute("INSERT INTO notes(body) VALUES ('x')")
    con.execute("CREATE VIEW leak AS SELECT hex(fts3_tokenizer('simple')) AS p")
    con.commit()
    con.close()
    before = fingerprint(db)
    for sql_text, msg in (("SELECT * FROM notes", "the virtual table module fts3 is not allowed in report SQL"),
                          ("SELECT count(*) FROM notes WHERE notes MATCH 'x'",
                           "the virtual table module fts3 is not allowed in report SQL"),
                          ("SELECT * FROM leak", "the function fts3_tokenizer() is not allowed in report SQL"),
                          ("SELECT fts3_tokenizer('simple', x'4141414141414141')",
                           "the function fts3_tokenizer() is not allowed in report SQL")):
        t.expect(t.run(["query", "-dir", db, sql_text]), 2, out="", err="tracebook: error: query: %s\n" % msg,
                 what=sql_text)
    # json_each is a virtual table of an allowed module
    r = t.run(["query", "-dir", db, "--format", "csv", "SELECT sum(value) AS s FROM json_each('[1,2,3]')"])
    t.expect(r, 0, out="s\n6\n", err="")
    t.eq(fingerprint(db), before, "the DB is unchanged")


@case("report: window options checked, unknown model lists what exists")
def _(t):
    _hw, steps = ascend_counts()
    out = t.mkdir("out")
    base = ["report", "-dir", ASCEND, "--spec", "builtin:top_kernels", "-o", out]
    first = usage_error("report", "%s")
    t.expect(t.run(base + ["--iteration-id", "9"]), 2, out="",
             err=first % "--iteration-id needs --model-id (4294967295 for step mode)")
    t.expect(t.run(base + ["--model-id", "4294967295"]), 2, out="", err=first % "--model-id needs --iteration-id")
    t.expect(t.run(base + ["--model-id", "4294967295", "--iteration-id", "9", "--iteration-count", "0"]), 2,
             out="", err=first % "--iteration-count must be at least 1")
    t.expect(t.run(base + ["--max-memory", "2GB"]), 2, out="",
             err=first % "--max-memory '2GB': expected a size such as 512M or 2G")
    t.expect(t.run(base + ["--max-temp=0"]), 2, out="", err=first % "--max-temp '0': expected a size such as 512M or 2G")
    t.expect(t.run(base + ["--max-cpu-time", "5s"]), 2, out="",
             err=first % "--max-cpu-time '5s': expected a positive number of seconds")
    t.expect(t.run(base + ["--model-id", "5", "--iteration-id", "1"]), 2, out="",
             err="tracebook: error: --model-id 5: no such model; the data has: step mode, model 4294967295 "
                 "(steps %d-%d)\n" % (steps[0], steps[-1]))
    t.expect(t.run(base + ["--model-id", "4294967295", "--iteration-id", str(steps[-1]), "--iteration-count", "2"]),
             2, out="", err="tracebook: error: --iteration-id %d --iteration-count 2: step mode has steps %d-%d\n"
             % (steps[-1], steps[0], steps[-1]))
    t.eq(listing(out), [], "nothing written")
    r = t.run(base + ["-q", "--model-id", "4294967295", "--iteration-id", str(steps[0])])
    t.expect(r, 0, out="", err="")
    t.eq(listing(out), ["top_kernels_%d.csv" % steps[0], "tracebook_run.json"], "files carry the step label")


@case("report: a broken spec fails before loading, exact message, nothing written")
def _(t):
    out = t.mkdir("out")
    spec = os.path.join(t.mkdir("specs"), "bad.yaml")
    write(spec, b"tracebook: 1\nreports:\n  - id: a\n    titel: A\n    sql: SELECT 1 AS x\n")
    r = t.run(["report", "-dir", ASCEND, "--spec", spec, "-o", out])
    t.eq(r.rc, 3, "exit code")
    t.check(r.err.startswith("tracebook: error: %s:4:5: unknown key 'titel' in report (did you mean 'title'?); "
                             "expected one of: id, title," % spec), r.err)
    t.eq(listing(out), [], "nothing written")
    write(spec, b"tracebook: 1\nreports:\n  - id: a\n    sql: |\n      SELECT name,\n             nme AS y\n"
                b"      FROM kernel\n")
    r = t.run(["report", "-dir", ASCEND, "--spec", spec, "-o", out])
    t.expect(r, 3, out="", err="tracebook: error: %s:6:14: report 'a': no such column: nme\n" % spec)
    t.eq(listing(out), [], "nothing written")


@case("report: --param, --format, --report; a failing report keeps the complete files before it")
def _(t):
    out = t.mkdir("out")
    t.expect(t.run(["report", "-dir", ASCEND, "--spec", "builtin:top_kernels", "--param", "nope=1", "-o", out]), 2,
             out="", err="tracebook: error: --param 'nope': no report declares this parameter\n")
    t.expect(t.run(["report", "-dir", ASCEND, "--spec", "builtin:top_kernels", "--param", "top=x", "-o", out]), 2,
             out="", err="tracebook: error: --param top=x: 'x' is not a valid int\n")
    r = t.run(["report", "-q", "-dir", ASCEND, "--spec", "builtin:top_kernels", "--param", "top=2",
               "--format", "json", "-o", out])
    t.expect(r, 0, out="", err="")
    rows = json.loads(read(os.path.join(out, "top_kernels.json")))
    t.eq(len(rows), 2, "top=2 gives two rows")
    t.eq(list(rows[0]), ["Name", "Type", "Count", "Total Time(us)", "Avg Time(us)", "Min Time(us)",
                         "Max Time(us)", "Ratio(%)"], "headers")
    spec = os.path.join(t.mkdir("specs"), "two.yaml")
    write(spec, b"tracebook: 1\nreports:\n  - id: good\n    sql: SELECT 1 AS x\n"
                b"  - id: bad\n    sql: SELECT abs(-9223372036854775807 - 1) AS x\n")
    out2 = t.mkdir("out2")
    r = t.run(["report", "-q", "-dir", ASCEND, "--spec", spec, "-o", out2])
    t.expect(r, 5, out="", err="tracebook: error: report 'bad': integer overflow\n")
    t.eq(listing(out2), ["good.csv"], "the good report's file, no half file of the bad one")
    r = t.run(["report", "-q", "-dir", ASCEND, "--spec", spec, "--report", "good", "-o", out2])
    t.expect(r, 0, out="", err="")
    t.eq(listing(out2), ["good.csv", "tracebook_run.json"], "--report runs one")


@case("report: -o naming a file is refused, the file untouched")
def _(t):
    f = os.path.join(t.mkdir("out"), "afile")
    write(f, b"keep me\n")
    t.expect(t.run(["report", "-dir", ASCEND, "--spec", "builtin:top_kernels", "-o", f]), 4, out="",
             err="tracebook: error: %s: the output must be a directory\n" % f)
    t.eq(read(f), b"keep me\n", "the file is unchanged")


@case("report/query: an output never replaces an input; colliding ids and writing SQL refused")
def _(t):
    d = t.mkdir("in")
    pt = os.path.join(d, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    shutil.copytree(os.path.join(SAMPLES, "torch_npu_2rank", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT"), pt)
    before = {n: fingerprint(os.path.join(pt, n)) for n in sorted(os.listdir(pt))}
    r = t.run(["report", "-q", "-dir", d, "--spec", "builtin:step_trace_time", "-o", pt])
    t.expect(r, 2, out="", err="tracebook: error: %s/step_trace_time.csv: refusing to replace an input file: "
                               "write the output elsewhere (-o)\n" % pt)
    t.eq({n: fingerprint(os.path.join(pt, n)) for n in sorted(os.listdir(pt))}, before, "the inputs are unchanged")
    out = t.mkdir("out")
    db = os.path.join(out, "a.db")
    t.expect(t.run(["export", "db", "-dir", ASCEND, "-o", db, "-q"]), 0)
    size = os.path.getsize(db)
    t.expect(t.run(["query", "-dir", db, "--format", "csv", "-o", db, "SELECT 1"]), 2, out="",
             err="tracebook: error: %s: refusing to replace an input file: write the output elsewhere (-o)\n" % db)
    t.eq(os.path.getsize(db), size, "the DB is unchanged")
    spec = os.path.join(t.mkdir("specs"), "ids.yaml")
    write(spec, b"tracebook: 1\nreports:\n  - {id: a, sql: SELECT 1 AS x}\n  - {id: a_1, sql: SELECT 2 AS x}\n")
    t.expect(t.run(["report", "-dir", db, "--spec", spec, "-o", out]), 2, out="",
             err="tracebook: error: report ids 'a' and 'a_1' could name the same file (split CSVs and window "
                 "labels add _N to an id): rename 'a_1'\n")
    write(spec, b"tracebook: 1\nreports:\n  - {id: v, sql: VACUUM}\n")
    t.expect(t.run(["report", "-dir", db, "--spec", spec, "-o", out]), 2, out="",
             err="tracebook: error: %s:3:18: report 'v': only a read-only statement (SELECT, WITH, VALUES) may run\n"
                 % spec)
    # no index to rebuild: the authorizer is never asked, SQLite calls it read-only (found by tests/fuzz)
    write(spec, b"tracebook: 1\nreports:\n  - {id: v, sql: REINDEX TB_SOURCE}\n")
    t.expect(t.run(["report", "-dir", db, "--spec", spec, "-o", out]), 2, out="",
             err="tracebook: error: %s:3:18: report 'v': only a read-only statement (SELECT, WITH, VALUES) may run\n"
                 % spec)
    t.eq(listing(out), ["a.db"], "nothing written")


@case("report: windows over ranks with different steps")
def _(t):
    root = os.path.join(SAMPLES, "torch_npu_2rank")
    out = t.mkdir("out")
    base = ["query", "-dir", root, "--model-id", "4294967295"]
    msg = "step mode has rank 0: steps 8-9; rank 1: steps 3-4"
    t.expect(t.run(base + ["--iteration-id", "6", "SELECT 1"]), 2, out="",
             err="tracebook: error: --iteration-id 6 --iteration-count 1: %s\n" % msg)
    t.expect(t.run(base + ["--iteration-id", "3", "--iteration-count", "7", "SELECT 1"]), 2, out="",
             err="tracebook: error: --iteration-id 3 --iteration-count 7: %s\n" % msg)
    t.expect(t.run(base + ["--iteration-id", "3", "--iteration-count", "9223372036854775807", "SELECT 1"]), 2,
             out="", err="tracebook: error: --iteration-id 3 --iteration-count 9223372036854775807: the last "
                         "iteration is out of range\n")
    r = t.run(base + ["--format", "csv", "--iteration-id", "8", "SELECT DISTINCT rankId AS r FROM TASK"])
    t.expect(r, 0, out="r\n0\n", err="", what="rank 1 has no step 8: left out")
    t.eq(listing(out), [], "nothing written")


@case("report: xlsx outputs go to one workbook, byte-identical from run to run")
def _(t):
    out = t.mkdir("out")
    spec = os.path.join(t.mkdir("specs"), "x.yaml")
    write(spec, b"tracebook: 1\nreports:\n  - {id: a, sql: SELECT 1 AS x, outputs: [csv, xlsx]}\n"
                b"  - {id: b, title: 'B: two', sql: SELECT 2 AS y, outputs: xlsx}\n")
    r = t.run(["report", "-dir", ASCEND, "--spec", spec, "-o", out])
    t.expect(r, 0, out="", err="tracebook: wrote %s/a.csv\ntracebook: wrote %s/tracebook.xlsx\n"
                               "tracebook: wrote %s/tracebook_run.json\n" % (out, out, out))
    t.eq(listing(out), ["a.csv", "tracebook.xlsx", "tracebook_run.json"], "files")
    with open(os.path.join(out, "tracebook_run.json")) as f:
        meta = json.load(f)
    t.eq(meta["workbook"], "tracebook.xlsx", "run file names the workbook")
    t.eq([(x["files"], x["sheets"]) for x in meta["reports"]],
         [(["a.csv", "tracebook.xlsx"], ["a"]), (["tracebook.xlsx"], ["B_ two"])], "files and sheets")
    with open(os.path.join(out, "tracebook.xlsx"), "rb") as f:
        first = f.read()
    t.eq(first[:2], b"PK", "a zip file")
    r = t.run(["report", "-dir", ASCEND, "--spec", spec, "-o", out])
    t.expect(r, 0, out="")
    with open(os.path.join(out, "tracebook.xlsx"), "rb") as f:
        t.eq(f.read() == first, True, "same inputs, same bytes")
    # --format xlsx: every report to the workbook, named by the spec
    write(spec, b"tracebook: 1\nworkbook: {file: review.xlsx}\nreports:\n  - {id: a, sql: SELECT 1 AS x}\n")
    out2 = t.mkdir("out2")
    r = t.run(["report", "-dir", ASCEND, "--spec", spec, "--format", "xlsx", "-o", out2])
    t.expect(r, 0, out="", err="tracebook: wrote %s/review.xlsx\ntracebook: wrote %s/tracebook_run.json\n"
                               % (out2, out2))


@case("report: a failing workbook leaves nothing behind")
def _(t):
    out = t.mkdir("out")
    spec = os.path.join(t.mkdir("specs"), "x.yaml")
    write(spec, b"tracebook: 1\noutputs: xlsx\nreports:\n  - {id: a, sql: SELECT 1 AS x}\n"
                b"  - {id: b, sql: SELECT 1 AS x, xlsx: {chart: {type: bar, values: nope}}}\n")
    r = t.run(["report", "-dir", ASCEND, "--spec", spec, "-o", out])
    t.expect(r, 2, out="", err="tracebook: error: %s/tracebook.xlsx: sheet 'b': chart values column 'nope' is "
                               "not a column of the report\n" % out)
    t.eq(listing(out), [], "no workbook, no temporary")


@case("reports: lists the built-ins, shows one's help")
def _(t):
    r = t.run(["reports"])
    t.expect(r, 0, err="")
    ids = [line.split()[0] for line in r.out.splitlines()]
    # every report of every reports/*.yaml (the list grows with the files)
    rdir = os.path.join(os.path.dirname(SAMPLES), "reports")
    want = []
    for name in sorted(os.listdir(rdir)):
        if name.endswith(".yaml"):
            with open(os.path.join(rdir, name)) as f:
                want += re.findall(r"^  - id: (\S+)$", f.read(), re.M)
    t.check({"api_statistic", "communication_statistic", "op_statistic", "top_kernels"} <= set(want), want)
    t.eq(sorted(ids), sorted(want), "ids")
    r = t.run(["reports", "top_kernels"])
    t.expect(r, 0, err="")
    t.check(r.out.startswith("top_kernels: Top kernels by total time\n"), r.out[:80])
    t.check("    top (int, default 20): number of kernels to list\n" in r.out, r.out)
    t.check("  scope: rank (each rank alone)\n" in r.out, r.out)
    r = t.run(["reports", "slow_rank"])
    t.check("  scope: cluster (the cluster tables, made from per-rank rows)\n" in r.out, r.out)
    r = t.run(["reports", "op_summary"])
    t.check("  scope: all (every rank at once)\n" in r.out, r.out)
    t.expect(t.run(["reports", "nope"]), 2, out="",
             err="tracebook: error: no built-in report 'nope' (tracebook reports lists them)\n")


# ---- the end -----------------------------------------------------------------------------------

def main():
    global TB, SAMPLES, ASCEND, KINETO, ROOT
    TB, SAMPLES, *only = (os.path.abspath(a) if i < 2 else a for i, a in enumerate(tbtest.args(
        "TRACEBOOK SAMPLES_DIR [CASE_SUBSTRING ...]", 2)))
    ASCEND = os.path.join(SAMPLES, "ascend_small", "trace_view.json")
    KINETO = os.path.join(SAMPLES, "kineto_small", "trace.json")
    for path in (TB, ASCEND, KINETO):
        if not os.path.exists(path):
            print("cli_test.py: missing %s" % path, file=sys.stderr)
            return 1
    if not shutil.which("sqlite3"):
        print("cli_test.py: the sqlite3 command is needed (Debian: apt-get install sqlite3)", file=sys.stderr)
        return 1
    SUITE.program = tbtest.Program(TB)
    ROOT = SUITE.work
    sample_state = {p: fingerprint(p) for p in (ASCEND, KINETO)}
    sample_dirs = {d: listing(d) for d in (os.path.dirname(ASCEND), os.path.dirname(KINETO))}

    # the samples are inputs only
    @case("samples untouched", always=True)
    def _(t):
        for p, fp in sample_state.items():
            t.check(fingerprint(p) == fp, p)
        for d, names in sample_dirs.items():
            t.check(listing(d) == names, "%s now holds %s" % (d, sorted(set(listing(d)) - set(names))))

    return SUITE.run(only)


if __name__ == "__main__":
    sys.exit(main())
