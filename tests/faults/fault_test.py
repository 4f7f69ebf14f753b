#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# fault_test.py - runs that are killed, interrupted, out of disk space or
# racing each other (suite 'cli'; docs/reliability.md).
#
# Every case checks what a run promises whatever happens to it: no input
# changes (sha256 of every input file before and after); no partial output
# (a file is either the previous one, byte for byte, or a complete new one);
# no temporary file left, except a SIGKILLed run's NAME.tmp-<pid>@<host>-*,
# which the next run into the same folder removes.
#
# 1. SIGKILL, SIGINT, SIGTERM while export db, report and info load (the
#    input is a FIFO fed the start of a trace, so the load blocks), while
#    report runs its SQL (a report that never ends), and at several moments
#    of a load of a bigger generated trace (reading, post-processing,
#    indexing, renaming: whatever the clock hits).
# 2. Disk full: export db and report onto a 1 MB tmpfs (skipped when not
#    root or when mount fails).
# 3. Runaway report SQL (an endless CTE, 100 MB strings per row, sorts of
#    100M rows, temporary files, median over 300M values, a 4-way cross
#    join, a huge printf) under the default limits: each ends within a
#    minute of CPU time with an error naming the limit; a tracebook DB whose
#    TASK is a view is refused at once. A FIFO named tracebook_run.json in
#    the output folder of report, compare and export summary is refused at
#    once; two reports into an input's own folder: the first one's files
#    are still passed over; a report refused for a later file wrote none.
#    history list and report after a writer was SIGKILLed inside its
#    transaction; a failed history add on a new path leaves nothing.
# 4. Concurrent runs: four `info` on one empty cache, two `report` into one
#    folder, two `export db` to one file.
#
# usage: fault_test.py TRACEBOOK TRACEBOOK_GEN SAMPLES_DIR WORK_DIR
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, GEN, SAMPLES, WORK = (os.path.abspath(a) for a in
                          tbtest.args("TRACEBOOK TRACEBOOK_GEN SAMPLES_DIR WORK_DIR", 4, 4))
ASCEND = os.path.join(SAMPLES, "ascend_small", "trace_view.json")
NPU_DIR = os.path.join(SAMPLES, "torch_npu_2rank")
SPEC = os.path.join(SAMPLES, "specs", "top_kernels.yaml")
TRACEBOOK = tbtest.Program(TB, timeout=300, errors="replace")
SUITE = tbtest.Suite(TRACEBOOK, work=WORK, clean=True)
case = SUITE.case


def Box(name):
    """A run's folders under WORK: cwd, tmp (TMPDIR), cache, out."""
    return tbtest.Sandbox(TRACEBOOK, WORK, name)


def sha_tree(path):
    """sha256 of a file, or of every file of a tree with its relative path
    (a SIGKILLed run's temporary files aside: temps() finds those)."""
    h = hashlib.sha256()
    if os.path.isfile(path):
        with open(path, "rb") as f:
            h.update(f.read())
        return h.hexdigest()
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for n in sorted(files):
            if ".tmp-" in n:
                continue
            p = os.path.join(root, n)
            h.update(os.path.relpath(p, path).encode() + b"\0")
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def temps(*dirs):
    found = []
    for d in dirs:
        for root, _, files in os.walk(d):
            found += [os.path.join(root, n) for n in files if ".tmp-" in n or n.startswith(".tracebook-pending-")]
    return found


def blocked_run(t, box, args, fifo, watch, sig):
    """Starts args (reading FIFO fifo), feeds it the start of a trace and keeps
    it open so the load blocks, waits until a temporary file shows in watch,
    sends sig; returns the exit status."""
    before = set(os.listdir(watch))
    p = box.start(args)
    fd = None
    try:
        deadline = time.monotonic() + 60
        while fd is None and time.monotonic() < deadline and p.poll() is None:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.01)
        if not t.check(fd is not None, "%s: never opened its input (%r)" % (args, p.poll())):
            return None
        os.write(fd, b'[\n{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},\n')
        while time.monotonic() < deadline and set(os.listdir(watch)) == before:
            time.sleep(0.01)
        t.check(set(os.listdir(watch)) != before, "%s: no temporary file appeared in %s" % (args, watch))
        p.send_signal(sig)
        p.communicate(timeout=60)
        return p.returncode
    finally:
        if fd is not None:
            os.close(fd)
        if p.poll() is None:
            p.kill()
            p.wait()


SIGNALS = (signal.SIGKILL, signal.SIGINT, signal.SIGTERM)


@case("signals during the load of export db, report and info")
def _(t):
    for sig in SIGNALS:
        box = Box("load-" + sig.name)
        fifo = os.path.join(box.root, "in", "slow.json")
        os.makedirs(os.path.dirname(fifo))
        os.mkfifo(fifo)
        db = os.path.join(box.out, "x.db")
        # a previous output of each command
        t.check(box.run(["export", "db", "-dir", ASCEND, "-o", db]).rc == 0, "export db of the sample")
        rep = os.path.join(box.out, "rep")
        t.check(box.run(["report", "-dir", ASCEND, "--spec", SPEC, "-o", rep, "-q"]).rc == 0, "report of the sample")
        old_db, old_rep = sha_tree(db), sha_tree(rep)
        cache = os.path.join(box.cache, "tracebook")
        cached_before = sorted(os.listdir(cache))
        for what, args, watch in (
                ("export db", ["export", "db", "-dir", fifo, "-o", db], box.out),
                ("report", ["report", "-dir", fifo, "--spec", SPEC, "-o", rep, "-q"], cache),
                ("info", ["info", "-dir", fifo], cache)):
            rc = blocked_run(t, box, args, fifo, watch, sig)
            label = "%s, %s" % (what, sig.name)
            t.check(rc == -sig, "%s: died of the signal (exit %r)" % (label, rc))
            t.check(sha_tree(db) == old_db, "%s: the previous DB is byte-identical" % label)
            t.check(sha_tree(rep) == old_rep, "%s: the previous report outputs are byte-identical" % label)
            left = temps(box.out, box.cache, box.tmp)
            if sig == signal.SIGKILL:
                # the next run into the same folders removes the dead run's temporaries
                t.check(box.run(["export", "db", "-dir", ASCEND, "-o", os.path.join(box.out, "y.db")]).rc == 0
                        and box.run(["info", "--rebuild", "-dir", ASCEND]).rc == 0, label + ": the next runs")
                os.unlink(os.path.join(box.out, "y.db"))
                left = temps(box.out, box.cache, box.tmp)
            t.check(not left, "%s: temporary files left: %s" % (label, left))
        t.check(sorted(os.listdir(cache)) == sorted(set(cached_before) | set(os.listdir(cache))),
                "the cache keeps its DBs")
        t.check(os.path.exists(ASCEND) and sha_tree(SAMPLES) == SAMPLES_SHA, "the samples are unchanged")


@case("signals while report runs its SQL: the previous outputs stay")
def _(t):
    spec_dir = os.path.join(WORK, "slow-spec")
    os.makedirs(spec_dir, exist_ok=True)
    slow = os.path.join(spec_dir, "slow.yaml")
    with open(slow, "w") as f:
        f.write("tracebook: 1\nreports:\n  - id: top_kernels\n    sql: WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL"
                " SELECT n + 1 FROM c) SELECT count(*) AS n FROM c\n")
    spec_sha = sha_tree(slow)
    for sig in SIGNALS:
        box = Box("sql-" + sig.name)
        rep = os.path.join(box.out, "rep")
        t.check(box.run(["report", "-dir", ASCEND, "--spec", SPEC, "-o", rep, "-q"]).rc == 0, "report of the sample")
        old = sha_tree(rep)
        p = box.start(["report", "-dir", ASCEND, "--spec", slow, "-o", rep, "-q"])
        time.sleep(1.5)  # the DB is cached: the report's SQL runs by now
        t.check(p.poll() is None, "%s: the endless report still runs" % sig.name)
        p.send_signal(sig)
        p.communicate(timeout=60)
        t.check(p.returncode == -sig, "%s: died of the signal (exit %r)" % (sig.name, p.returncode))
        t.check(sha_tree(rep) == old, "%s: the previous report outputs are byte-identical" % sig.name)
        if sig == signal.SIGKILL:
            t.check(box.run(["report", "-dir", ASCEND, "--spec", SPEC, "-o", rep, "-q"]).rc == 0, "the next report")
        left = temps(box.root)
        t.check(not left, "%s: temporary files left: %s" % (sig.name, left))
    t.check(sha_tree(slow) == spec_sha, "the spec is unchanged")


@case("SIGKILL/SIGTERM at several moments of a bigger load")
def _(t):
    big_dir = os.path.join(WORK, "big")
    os.makedirs(big_dir, exist_ok=True)
    big = os.path.join(big_dir, "trace_view.json")
    tbtest.run([GEN, "--kind", "ascend", "--events", "60000", "--seed", "3", "-o", big], code=0, timeout=120)
    big_sha = sha_tree(big)
    box = Box("moments")
    db = os.path.join(box.out, "x.db")
    t0 = time.monotonic()
    t.check(box.run(["export", "db", "-dir", big, "-o", db]).rc == 0, "a full load")
    full = time.monotonic() - t0
    count = "SELECT (SELECT count(*) FROM TASK) || ' ' || (SELECT count(*) FROM STRING_IDS)"
    rows = subprocess.run(["sqlite3", db, count], capture_output=True, text=True).stdout
    os.unlink(db)
    for sig in (signal.SIGKILL, signal.SIGTERM):
        for frac in (0.05, 0.25, 0.5, 0.75, 0.9, 0.98):
            p = box.start(["export", "db", "-dir", big, "-o", db])
            time.sleep(full * frac)
            p.send_signal(sig)
            p.communicate(timeout=120)
            label = "%s at %d%% of the load" % (sig.name, frac * 100)
            if p.returncode == 0:
                t.check(os.path.exists(db), label + ": finished, and the DB is there")
            else:
                # a signal after the rename (the commit point) finds the DB complete
                # and in place: then it must be whole (below), else absent
                t.check(p.returncode == -sig, "%s: died of the signal (exit %r)" % (label, p.returncode))
            if sig == signal.SIGKILL:
                box.run(["export", "db", "-dir", ASCEND, "-o", os.path.join(box.out, "y.db")])
                os.unlink(os.path.join(box.out, "y.db"))
            left = temps(box.root)
            t.check(not left, "%s: temporary files left: %s" % (label, left))
            if os.path.exists(db):
                r = subprocess.run(["sqlite3", db, "PRAGMA integrity_check"], capture_output=True, text=True)
                t.check(r.stdout.strip() == "ok", label + ": the DB is whole: " + r.stdout[:200])
                t.check(subprocess.run(["sqlite3", db, count], capture_output=True, text=True).stdout == rows,
                        label + ": the DB holds every row")
                os.unlink(db)
    t.check(sha_tree(big) == big_sha, "the input is unchanged")


def mount_small_tmpfs(path):
    if os.geteuid() != 0:
        return "not root"
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", path], capture_output=True, text=True)
    return None if r.returncode == 0 else "mount failed: " + r.stderr.strip()


@case("disk full: export db and report onto a 1 MB tmpfs")
def _(t):
    box = Box("full")
    mnt = os.path.join(box.root, "small")
    why = mount_small_tmpfs(mnt)
    if why:
        raise tbtest.Skip("disk full (%s)" % why)
    try:
        old = os.path.join(mnt, "x.db")
        with open(old, "wb") as f:
            f.write(b"previous contents\n")
        big = os.path.join(SAMPLES, "kineto_small", "trace.json")
        before = sha_tree(SAMPLES)
        r = box.run(["export", "db", "-dir", big, "-o", old])
        rc, err = r.rc, r.err
        t.check(rc == 4, "export db onto a full disk: exit 4, got %d (%r)" % (rc, err))
        t.check(old in err, "export db: the message names the DB being written: %r" % err)
        t.check(err.startswith("tracebook: error: ") and ("No space left" in err or "full" in err),
                "export db: the message says the disk is full: %r" % err)
        with open(old, "rb") as f:
            t.check(f.read() == b"previous contents\n", "export db: the previous file is intact")
        t.check(sorted(os.listdir(mnt)) == ["x.db"], "export db: files on the full disk: %s" % os.listdir(mnt))
        # report: the DB goes to the cache (not full), the outputs to the full disk
        filler = os.path.join(mnt, "filler")
        try:
            with open(filler, "wb") as f:
                f.write(b"\0" * (1024 * 1024))
        except OSError:
            pass  # full, as meant
        rep = os.path.join(mnt, "rep")
        r = box.run(["report", "-dir", ASCEND, "--spec", SPEC, "-o", rep, "-q", "--format", "csv,json,xlsx"])
        rc, err = r.rc, r.err
        t.check(rc == 4, "report onto a full disk: exit 4, got %d (%r)" % (rc, err))
        t.check(err.startswith("tracebook: error: "), "report: one error message: %r" % err)
        left = temps(mnt, box.root)
        t.check(not left, "disk full: temporary files left: %s" % left)
        t.check(sha_tree(SAMPLES) == before, "the samples are unchanged")
    finally:
        subprocess.run(["umount", mnt], capture_output=True)


def mount_tmpfs(path, size):
    if os.geteuid() != 0:
        return "not root"
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", path], capture_output=True, text=True)
    return None if r.returncode == 0 else "mount failed: " + r.stderr.strip()


CTE = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c%s) "
RUNAWAYS = [
    # name, SQL, needs a small TMPDIR (it writes temporary files), what stops it
    ("endless", CTE % "" + "SELECT count(*) AS n FROM c", 0, "cpu"),
    ("strings", CTE % "" + "SELECT length(replace(printf('%.*c', 100000000 + x, 'a'), 'a', 'bb')) AS n FROM c",
     0, "cpu"),
    ("median", CTE % " WHERE x < 300000000" + "SELECT median(x) AS m FROM c", 0, "cpu"),
    ("printf", "SELECT printf('%.*c', 2000000000, 'x') AS v", 0, "value"),
    ("sort", CTE % " WHERE x < 100000000" + "SELECT x FROM c ORDER BY random()", 1, "any"),
    ("zeroblob", CTE % "" + "SELECT x, zeroblob(100000) AS z FROM c ORDER BY random()", 1, "temp"),
    ("cross", "SELECT a.rowid AS r FROM TASK a, TASK b, TASK c, TASK d ORDER BY random()", 1, "any"),
]
# what each stop says; the default temporary-file limit is half the free
# space of the temporary folder, so reaching it is a full folder (exit 4)
LIMIT_SAYS = {"cpu": "s of CPU time (the CPU limit of a report)",
              "temp": "small-tmp: no room for SQLite's temporary files: they may take half the free space there",
              "value": "printf(): the result would be longer than 268435456 bytes, the limit of a value"}
LIMIT_RC = {"cpu": 2, "temp": 4, "value": 5}


@case("runaway reports end under the default limits, each within a minute of CPU time")
def _(t):
    box = Box("runaway")
    small = os.path.join(box.root, "small-tmp")
    why = mount_tmpfs(small, "64m")
    try:
        procs = []
        for name, sql, needs_tmp, _ in RUNAWAYS:
            if needs_tmp and why:
                print("%s: skipped (a 64 MB tmpfs for TMPDIR: %s)" % (name, why))
                continue
            spec = box.path("%s.yaml" % name)
            with open(spec, "w") as f:
                f.write("tracebook: 1\nreports:\n  - id: %s\n    sql: \"%s\"\n" % (name, sql.replace('"', '\\"')))
            out = box.path("out-" + name)
            env = dict(box.env(), TMPDIR=small) if needs_tmp else box.env()
            p = box.start(["report", "-dir", ASCEND, "--spec", spec, "-o", out, "-q", "--format", "csv"], env=env)
            procs.append((name, p, out))
        for name, p, out in procs:
            _, status, ru = os.wait4(p.pid, 0)
            rc = os.waitstatus_to_exitcode(status)
            p.returncode = rc
            err = p.stderr.read().decode(errors="replace")
            p.stdout.close()
            p.stderr.close()
            cpu = ru.ru_utime + ru.ru_stime
            stop = [r[3] for r in RUNAWAYS if r[0] == name][0]
            t.check(cpu < 60, "%s: ended within a minute of CPU time (%.1f s)" % (name, cpu))
            stops = [stop] if stop in LIMIT_SAYS else ["cpu", "temp"]
            t.check(any(rc == LIMIT_RC[k] and LIMIT_SAYS[k] in err for k in stops) and
                    err.startswith("tracebook: error: report '%s': " % name),
                    "%s: the error names the limit: exit %d, %r" % (name, rc, err))
            t.check(not os.path.exists(out) or not os.listdir(out), "%s: a failed run writes nothing" % name)
        if not why:
            t.check(not os.listdir(small), "no temporary file left in TMPDIR: %s" % os.listdir(small))
            # a full TMPDIR: the load's sort cannot spill there; the message names the place, exit 4
            with open(os.path.join(small, "filler"), "wb") as f:
                f.write(b"\0" * (64 * 1024 * 1024 - 64 * 1024))
            db = box.path("full.db")
            r = box.run(["export", "db", "-dir", os.path.join(SAMPLES, "kineto_small"), "-o", db, "-q"],
                        env=dict(box.env(), TMPDIR=small))
            t.check(r.rc == 4 and r.err.startswith("tracebook: error: %s: no room for SQLite's temporary files" % small),
                    "export db with TMPDIR full: exit 4 naming TMPDIR: %s" % r)
            t.check(not os.path.exists(db) and sorted(os.listdir(small)) == ["filler"], "export db: nothing left")
    finally:
        if not why:
            subprocess.run(["umount", small], capture_output=True)


@case("a tracebook DB whose TASK is a view is refused at once")
def _(t):
    box = Box("view")
    db = box.path("own.db")
    r = box.run(["export", "db", "-dir", ASCEND, "-o", db, "-q"])
    t.check(r.rc == 0, "export db: %r" % r.err)
    q = ("ALTER TABLE TASK RENAME TO TASK_REAL; CREATE VIEW TASK AS WITH RECURSIVE c(x) AS "
         "(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT t.* FROM TASK_REAL t, c;")
    t.check(subprocess.run(["sqlite3", db, q]).returncode == 0, "crafted the DB")
    before = sha_tree(db)
    start = time.monotonic()
    r = box.run(["report", "-dir", db, "--spec", SPEC, "-o", box.path("out"), "-q"])
    t.check(time.monotonic() - start < 30, "refused within seconds")
    t.check(r.rc == 3 and r.err == "tracebook: error: %s: 'TASK' is a view, where a tracebook DB has a table: "
            "refusing to read it\n" % db, "exit 3 and the message: %d %r" % (r.rc, r.err))
    t.check(sha_tree(db) == before, "the DB is unchanged")
    t.check(not os.path.exists(box.path("out")) or not os.listdir(box.path("out")), "nothing written")


@case("a FIFO at an output name is refused at once; report never reads its own outputs back")
def _(t):
    box = Box("fifo")
    spec = os.path.join(SAMPLES, "specs", "top_kernels.yaml")
    runs = {"report": ["report", "-dir", ASCEND, "--spec", spec, "--format", "csv", "-q", "-o"],
            "compare": ["compare", "-base", ASCEND, "-new", ASCEND, "--spec", spec, "-q", "-o"],
            "export summary": ["export", "summary", "-dir", ASCEND, "-q", "-o"]}
    for name, args in runs.items():
        out = box.path("out-" + name.replace(" ", "-"))
        # export summary writes into the rank's folder under -o
        meta_dir = os.path.join(out, "ASCEND_PROFILER_OUTPUT") if name == "export summary" else out
        os.makedirs(meta_dir)
        fifo = os.path.join(meta_dir, "tracebook_run.json")
        os.mkfifo(fifo)
        start = time.monotonic()
        p = box.start(args + [out])
        try:
            rc = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        err = p.stderr.read().decode(errors="replace")
        p.stdout.close()
        p.stderr.close()
        t.check(time.monotonic() - start < 30, "%s: refused within seconds" % name)
        t.check(rc == 4 and err == "tracebook: error: %s: cannot write: not a regular file (refusing to write the "
                "run's metadata over it)\n" % fifo, "%s: exit 4 naming the FIFO: %d %r" % (name, rc, err))
        left = [n for n in os.listdir(meta_dir) if n != "tracebook_run.json"]
        t.check(not left, "%s: nothing written: %s" % (name, left))
    # two reports into the input's own folder: the first one's files stay listed
    rank = box.path("rank0_ascend_pt")
    shutil.copytree(os.path.join(NPU_DIR, "rank0_ascend_pt"), rank)
    apo = os.path.join(rank, "ASCEND_PROFILER_OUTPUT")
    os.unlink(os.path.join(apo, "kernel_details.csv"))
    for spec in ("builtin:op_statistic", "builtin:api_statistic"):
        r = box.run(["report", "-dir", rank, "--spec", spec, "-o", apo, "--format", "csv", "-q"])
        t.check(r.rc == 0, "report %s into the input's folder: %r" % (spec, r.err))
    r = box.run(["query", "-dir", rank, "--rebuild", "-q", "--format", "csv",
                 "SELECT substr(path, instr(path, 'OUTPUT/') + 7) AS f, kind FROM TB_SOURCE WHERE path LIKE '%statistic.csv' "
                 "ORDER BY f"])
    t.check(r.out == "f,kind\napi_statistic.csv,skipped\nop_statistic.csv,skipped\n",
            "both runs' files are passed over as tracebook's outputs: %r %r" % (r.out, r.err))
    # a run refused for a later report's file writes none of the earlier ones
    two = box.path("two.yaml")
    with open(two, "w") as f:
        f.write("tracebook: 1\nreports:\n  - id: first\n    sql: SELECT 1 AS a\n"
                "  - id: step_trace_time\n    sql: SELECT 1 AS a\n")
    before = sha_tree(rank)
    r = box.run(["report", "-dir", rank, "--spec", two, "-o", apo, "--format", "csv", "-q"])
    t.check(r.rc == 2 and "refusing to replace an input file" in r.err, "refused: %d %r" % (r.rc, r.err))
    t.check(not os.path.exists(os.path.join(apo, "first.csv")), "the refused run wrote nothing into the input's folder")
    t.check(sha_tree(rank) == before, "the input folder is unchanged")



@case("an output name on an input is refused before the first report: in a window, a workbook, a split CSV's part, "
      "the advisor's files, the kept trace DB")
def _(t):
    box = Box("names")
    refuse = "tracebook: error: %s: refusing to replace an input file: write the output elsewhere (-o)\n"
    # the run-wide files, each named as the SQL file of the second report
    own = {"workbook": ("tracebook.xlsx", ["--format", "csv,xlsx"]), "advisor": ("advisor.json", ["--format", "csv"]),
           "keep-db": ("tracebook_trace.db", ["--format", "csv", "--keep-db"])}
    for kind in ("window", "workbook", "advisor", "keep-db", "part"):
        rank = box.path(kind, "rank0_ascend_pt")
        shutil.copytree(os.path.join(NPU_DIR, "rank0_ascend_pt"), rank)
        apo = os.path.join(rank, "ASCEND_PROFILER_OUTPUT")
        spec = os.path.join(apo, "two.yaml")
        late = "SELECT 1 AS a"
        args = ["--format", "csv"]
        if kind == "window":
            # the kernels' CSV named as report kernel_details's file in step 8
            victim = os.path.join(apo, "kernel_details_8.csv")
            args += ["--model-id", "4294967295", "--iteration-id", "8"]
        elif kind in own:
            victim = os.path.join(apo, own[kind][0])
            with open(victim, "w") as f:
                f.write("SELECT 2 AS b WHERE 2 > :threshold\n" if kind == "advisor" else "SELECT 2 AS b\n")
            late = None
            args = own[kind][1]
        else:
            # the kernels' CSV named as the second part of a split kernel_details.csv
            victim = os.path.join(apo, "kernel_details_2.csv")
            late = ("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 1000001) "
                    "SELECT i FROM r")
        if kind not in own:
            os.rename(os.path.join(apo, "kernel_details.csv"), victim)
        with open(spec, "w") as f:
            f.write("tracebook: 1\nreports:\n  - id: first\n    sql: SELECT 1 AS a\n  - id: %s\n"
                    % ("second" if late is None else "kernel_details"))
            f.write("    sql_file: %s\n" % os.path.basename(victim) if late is None else "    sql: %s\n" % late)
            if kind == "advisor":
                f.write("    advice: {severity: warning, threshold: 0, message: \"{#} rows\", reason: r, suggestion: s}\n")
        before = sha_tree(rank)
        r = box.run(["report", "-dir", rank, "--spec", spec, "-o", apo, "-q"] + args)
        t.check(r.rc == 2 and r.err == refuse % victim, "%s: refused, naming the input: %d %r" % (kind, r.rc, r.err))
        t.check(sha_tree(rank) == before, "%s: nothing written into the input's folder" % kind)
    # the part check passes over a file that no part would take, and over
    # a part name that is no input: the split is written
    out = box.path("part", "out")
    os.makedirs(out)
    with open(os.path.join(out, "kernel_details_x.csv"), "w") as f:
        f.write("x\n")
    r = box.run(["report", "-dir", rank, "--spec", spec, "-o", out, "-q", "--format", "csv"])
    t.check(r.rc == 0 and sorted(n for n in os.listdir(out) if n.startswith("kernel_details")) ==
            ["kernel_details_1.csv", "kernel_details_2.csv", "kernel_details_x.csv"], "split: %d %r %s"
            % (r.rc, r.err, sorted(os.listdir(out))))
    # compare: a part of <id>_compare.csv
    rank = box.path("compare", "rank0_ascend_pt")
    shutil.copytree(os.path.join(NPU_DIR, "rank0_ascend_pt"), rank)
    apo = os.path.join(rank, "ASCEND_PROFILER_OUTPUT")
    victim = os.path.join(apo, "kernel_details_compare_2.csv")
    os.rename(os.path.join(apo, "kernel_details.csv"), victim)
    spec = box.path("compare", "one.yaml")
    with open(spec, "w") as f:
        f.write("tracebook: 1\nreports:\n  - id: kernel_details\n    key: [a]\n    sql: SELECT 1 AS a\n")
    before = sha_tree(rank)
    r = box.run(["compare", "-base", rank, "-new", rank, "--spec", spec, "-o", apo, "-q", "--format", "csv"])
    t.check(r.rc == 2 and r.err == refuse % victim, "compare: refused, naming the input: %d %r" % (r.rc, r.err))
    t.check(sha_tree(rank) == before, "compare: nothing written into the input's folder")

KILLED_WRITER = """
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA cache_size = 1")  # pages spill into the DB file inside the transaction
c.execute("BEGIN IMMEDIATE")
c.execute("DELETE FROM night")
c.execute("CREATE TABLE junk(x)")
c.execute("INSERT INTO junk WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 500) "
          "SELECT zeroblob(4000) FROM r")
print("ready", flush=True)
time.sleep(120)
"""


@case("history: list and report after a writer was killed; a failed add on a new path leaves nothing")
def _(t):
    box = Box("history")
    h = box.path("h.db")
    for label in ("n1", "n2"):
        r = box.run(["history", "add", "--history", h, "-dir", ASCEND, "--spec", "builtin:top_kernels",
                     "--label", label, "-q"])
        t.check(r.rc == 0, "history add %s: %r" % (label, r.err))
    listed = box.run(["history", "list", "--history", h, "--format", "csv"])
    t.check(listed.rc == 0, "history list: %r" % listed.err)
    # a writer killed inside its transaction: a hot journal beside the history
    w = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, h], stdout=subprocess.PIPE, text=True)
    t.check(w.stdout.readline().strip() == "ready", "the writer began")
    w.kill()
    w.wait()
    w.stdout.close()
    journal = h + "-journal"
    t.check(os.path.exists(journal) and os.path.getsize(journal) > 0, "a hot journal is left")
    r = box.run(["history", "list", "--history", h, "--format", "csv"])
    t.check(r.rc == 0 and r.out == listed.out, "history list after the kill: the nights as before: %s" % r)
    r = box.run(["history", "report", "--history", h, "--spec", "builtin:top_kernels", "-o", box.path("trend"), "-q"])
    t.check(r.rc == 0, "history report after the kill: %s" % r)
    t.check(not os.path.exists(journal) or os.path.getsize(journal) == 0, "the journal was rolled back")
    q = subprocess.run(["sqlite3", h, "SELECT count(*) FROM sqlite_master WHERE name = 'junk'; PRAGMA integrity_check"],
                       capture_output=True, text=True)
    t.check(q.stdout == "0\nok\n", "the killed writer's changes are gone, the history whole: %r" % q.stdout)
    # a failed add on a new path: the history it made is removed, with its journal
    small = os.path.join(box.root, "small")
    why = mount_tmpfs(small, "256k")
    if why:
        print("failed add on a full disk: skipped (%s)" % why)
        return
    try:
        filler = os.path.join(small, "filler")
        with open(filler, "wb") as f:
            f.write(b"\0" * (256 * 1024 - 40 * 1024))
        spec = box.path("many.yaml")
        with open(spec, "w") as f:
            f.write("tracebook: 1\nreports:\n  - id: many\n    key: [k]\n    sql: WITH RECURSIVE r(i) AS "
                    "(SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 20000) SELECT printf('row %06d', i) AS k, "
                    "i AS v FROM r\n")
        new = os.path.join(small, "new.db")
        r = box.run(["history", "add", "--history", new, "-dir", ASCEND, "--spec", spec, "-q"])
        t.check(r.rc != 0, "history add onto a full disk fails: %s" % r)
        t.check(sorted(os.listdir(small)) == ["filler"], "a failed add on a new path leaves nothing: %s"
                % os.listdir(small))
    finally:
        subprocess.run(["umount", small], capture_output=True)


@case("concurrent runs: info on one cache, report into one folder, export db to one file")
def _(t):
    box = Box("concurrent")
    inputs = NPU_DIR
    before = sha_tree(inputs)
    ps = [box.start(["info", "-dir", inputs]) for _ in range(4)]
    res = [(p.wait(timeout=300), p.stdout.read().decode(), p.stderr.read().decode()) for p in ps]
    for i, (rc, out, err) in enumerate(res):
        t.check(rc == 0, "info %d of 4 at once: exit 0, got %d (%r)" % (i, rc, err))
    bodies = {r[1].partition("\n")[2] for r in res}
    t.check(len(bodies) == 1, "the four info reports say the same (after line 1)")
    cache = os.path.join(box.cache, "tracebook")
    dbs = [n for n in os.listdir(cache) if n.endswith(".db")]
    t.check(len(dbs) == 1, "one cached DB after four info runs: %s" % os.listdir(cache))
    t.check(not temps(box.root), "info at once: temporary files left: %s" % temps(box.root))
    # two reports into one folder, and a reference run alone
    ref = os.path.join(box.root, "ref")
    t.check(box.run(["report", "-dir", inputs, "--spec", SPEC, "-o", ref, "-q", "--format", "csv,json"]).rc == 0,
            "the reference report")
    shared = os.path.join(box.out, "shared")
    ps = [box.start(["report", "-dir", inputs, "--spec", SPEC, "-o", shared, "-q", "--format", "csv,json"])
          for _ in range(2)]
    res = [(p.wait(timeout=300), p.stderr.read().decode()) for p in ps]
    for i, (rc, err) in enumerate(res):
        t.check(rc == 0, "report %d of 2 into one folder: exit 0, got %d (%r)" % (i, rc, err))
    t.check(sorted(os.listdir(shared)) == sorted(os.listdir(ref)),
            "two reports into one folder: the files of one run: %s" % sorted(os.listdir(shared)))
    for n in os.listdir(ref):
        a, b = os.path.join(ref, n), os.path.join(shared, n)
        if n == "tracebook_run.json":
            try:
                with open(b) as f:
                    json.load(f)
            except (OSError, ValueError) as e:
                t.check(False, "tracebook_run.json of two reports at once is whole JSON: %s" % e)
            continue
        t.check(os.path.exists(b) and sha_tree(a) == sha_tree(b), "two reports at once: %s equals one run's" % n)
    # two export db to one file
    db = os.path.join(box.out, "one.db")
    ps = [box.start(["export", "db", "-dir", inputs, "-o", db]) for _ in range(2)]
    rcs = [p.wait(timeout=300) for p in ps]
    for p in ps:
        p.stdout.close()
        p.stderr.close()
    t.check(rcs == [0, 0], "two export db to one file: both exit 0, got %s" % rcs)
    r = subprocess.run(["sqlite3", db, "PRAGMA integrity_check"], capture_output=True, text=True)
    t.check(r.stdout.strip() == "ok", "two export db to one file: the DB is whole")
    t.check(not temps(box.root), "concurrent runs: temporary files left: %s" % temps(box.root))
    t.check(sha_tree(inputs) == before, "the inputs are unchanged")


def main():
    global SAMPLES_SHA
    tbtest.fresh_dir(WORK)
    SAMPLES_SHA = sha_tree(SAMPLES)

    @case("samples unchanged", always=True)
    def _(t):
        t.check(sha_tree(SAMPLES) == SAMPLES_SHA, "samples changed")

    SUITE.main()


SAMPLES_SHA = None
main()
