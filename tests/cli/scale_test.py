#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# scale_test.py - scale-out: `export db --shard I/N` and runs over the shards
# (docs/scale-out.md), and the same under mpirun when the build has MPI.
#
# A cluster of 64 generated ranks (tools/gen, --kind ascend, sizes that
# differ per rank) is loaded once whole and once as N shard DBs; report (every
# built-in, csv, json and xlsx), export summary, export timeline, info and
# compare over the shards must give the files of the single run byte for byte
# (tracebook_run.json aside, which names what was given; info's first line
# names the DB; compare.xlsx holds the wall-clock time of its making and the
# cached DBs' names, so its parts are compared without docProps/core.xml and
# with the DB names masked; compare.html's headline names the sides' DBs and
# inputs, so it is compared from the end of the headline). N = 4 over the 64 ranks, and
# N = 3 over 2 ranks, where one shard holds no rank. Then: the `processes`
# lists, a missing shard (exit 6 naming it, or --keep-going), bad --shard
# values (exit 2), a bad rank file (exit 3 naming it, no shard written).
# Rank-scope reports (every built-in of scope rank, and reports of a :rank
# column, a limit, a computed table and a `requires` no rank meets) over 16
# ranks that name themselves in reverse input order (generated torch_npu
# directories whose profiler_info_N.json name them; checked, so the shards'
# numbers really differ from the load's ids): as 4 shards, the run
# merges nothing and caches nothing (status `scoped`, no DB added to the
# cache, no folder left) and gives the single run's files byte for byte,
# with and without a window; a spec with one report of scope all merges; a
# missing shard, a report's SQL error, a window no rank has and one that a
# rank has only the start of fail as they do for a merge or a single run.
#
# With --mpi yes|no (the build has MPI or not), the MPI cases instead: the
# same commands under `mpirun --allow-run-as-root --oversubscribe -n 4` give
# the files of the single run; a bad rank file fails the run naming the
# process and the file (exit 3) with no output, or is left out with
# --keep-going; a process killed by SIGKILL (the TRACEBOOK_TEST_MPI_KILL
# hook) fails the run with no output and no temporary file left; the
# rank-scope reports under mpirun (each process its shard's) give the single
# run's files, and a process killed while they run (TRACEBOOK_TEST_MPI_KILL_
# PARTIAL) leaves no output and no folder. Skips
# (exit 77) when the build has no MPI.
#
# Cluster-scope reports (the four cluster built-ins and one of a user's) over
# 6 such ranks with collective ops, as 3 shards and under mpirun: the
# single run's files, no merge, with and without a window, alone and beside
# rank-scope reports; over the shared public data (msprof-analyze's files,
# torch_npu ranks, an msprof DB: every source of the cluster tables) when
# --shared names it; SQL of scope cluster that reads an event table fails
# alike on one DB and over shards; a shard's note names a rank by its id in
# the load, once.
#
# usage: scale_test.py TRACEBOOK TRACEBOOK_GEN OUTDIR [--mpi yes|no] [--shared DATA_DIR]
# Prints one `ok`/`FAIL` line per case and a final `N passed, N failed`
# line; exits 0 when all pass, 1 otherwise.
import contextlib
import filecmp
import json
import os
import re
import shutil
import sqlite3
import sys
import time
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB, GEN, OUT, *OPTS = tbtest.args("TRACEBOOK TRACEBOOK_GEN OUTDIR [--mpi yes|no] [--shared DATA_DIR]", 3)
OPTS = dict(zip(OPTS[0::2], OPTS[1::2]))
MPI = OPTS.get("--mpi")
SHARED = OPTS.get("--shared")  # the shared public data (optional)
RANKS = 64
LAUNCH = []  # the mpirun words before the command, in the MPI cases
TRACEBOOK = tbtest.Program(TB, prefix=LAUNCH)
gen = tbtest.Program(GEN, code=0)


def mpi_env(env=None):
    # Open MPI keeps allocations past MPI_Finalize: under the sanitizer build,
    # LeakSanitizer would report them for every process (the same code runs
    # without mpirun, leak-checked, in the other cases)
    env = dict(env or os.environ)
    if LAUNCH:
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""), "detect_leaks=0"]))
    return env


@contextlib.contextmanager
def one_process():
    """Commands run without mpirun inside (the MPI cases' reference runs)."""
    saved = LAUNCH[:]
    LAUNCH.clear()
    try:
        yield
    finally:
        LAUNCH[:] = saved


def run(*args, env=None):
    return TRACEBOOK(*args, env=mpi_env(env))


def gen_cluster(path, ranks, events=150, step=9):
    os.makedirs(path, exist_ok=True)
    for r in range(ranks):
        # sizes differ, so the assignment by size is exercised
        gen("--kind", "ascend", "--events", str(events + step * ((r * 37) % ranks)), "--seed", str(100 + r),
            "--ranks", "8", "--rank", str(r % 8), "-o", os.path.join(path, "r%03d.json" % r))


def spec(path):
    names = [line.split()[0] for line in run("reports").stdout.splitlines() if line.strip()]
    with open(path, "w") as f:
        f.write("tracebook: 1\nreports:\n" + "".join("  - use: %s\n" % n for n in names))
    return path


def shard(cluster, shards, n, extra=()):
    for i in range(n):
        r = run("export", "db", "-dir", cluster, "--shard", "%d/%d" % (i, n), "-o", shards, "-q", *extra)
        assert r.returncode == 0, (i, r.returncode, r.stderr)
        assert r.stdout == os.path.join(shards, "shard_%d_of_%d.db" % (i, n)) + "\n", r.stdout


def xlsx_parts(path):
    # compare's Summary sheet names each side's DB: the cached DB of what was given
    with zipfile.ZipFile(path) as z:
        return {n: re.sub(rb"cache/tracebook/[^<]*?\.db", b"DB", z.read(n))
                for n in z.namelist() if n != "docProps/core.xml"}


def html_body(path):
    # compare.html's headline names each side's DB and inputs; the sections after it must be the same
    with open(path, "rb") as f:
        text = f.read()
    assert b"</header>" in text, path
    return text.split(b"</header>", 1)[1]


def same_tree(a, b, skip=("tracebook_run.json",)):
    """Every file of a is in b with the same bytes, and b has no other file."""
    fa, fb = [], []
    for root, lst in ((a, fa), (b, fb)):
        for d, _, files in os.walk(root):
            for f in files:
                if f not in skip:
                    lst.append(os.path.relpath(os.path.join(d, f), root))
    assert sorted(fa) == sorted(fb), (sorted(set(fa) ^ set(fb)))
    assert fa, "no files in " + a
    for f in fa:
        x, y = os.path.join(a, f), os.path.join(b, f)
        if f.endswith("compare.xlsx"):
            assert xlsx_parts(x) == xlsx_parts(y), f
        elif f.endswith("compare.html"):
            assert html_body(x) == html_body(y), f
        else:
            assert filecmp.cmp(x, y, shallow=False), f


def outputs(inputs, out, spec_path):
    """Runs report, export summary, export timeline, info and compare over inputs into out."""
    r = run("report", "-dir", inputs, "--spec", spec_path, "--format", "csv,json,xlsx", "-o",
            os.path.join(out, "report"), "-q")
    assert r.returncode == 0, r.stderr
    r = run("export", "summary", "-dir", inputs, "-o", os.path.join(out, "summary"), "-q")
    assert r.returncode == 0, r.stderr
    r = run("export", "timeline", "-dir", inputs, "-o", os.path.join(out, "timeline"), "-q")
    assert r.returncode == 0, r.stderr
    r = run("info", "-dir", inputs, "-q")
    assert r.returncode == 0, r.stderr
    os.makedirs(os.path.join(out, "info"))
    with open(os.path.join(out, "info", "info.txt"), "w") as f:
        f.write(r.stdout.split("\n", 1)[1])  # the first line names the DB
    r = run("compare", "-base", inputs, "-new", inputs, "--spec", spec_path, "-o", os.path.join(out, "compare"),
            "-q")
    assert r.returncode == 0, r.stderr


def meta(path):
    with open(os.path.join(path, "tracebook_run.json")) as f:
        return json.load(f)


def case_shards_4_identical():
    shards = os.path.join(OUT, "shards4")
    shard(CLUSTER, shards, 4)
    outputs(shards, os.path.join(OUT, "sharded4"), SPEC)
    same_tree(os.path.join(OUT, "single"), os.path.join(OUT, "sharded4"))
    # the shard export's record: one entry per shard, every rank once, largest parts first
    m = meta(shards)
    assert [p["shard"] for p in m["processes"]] == [0, 1, 2, 3], m
    ranks = sorted(r for p in m["processes"] for r in p["ranks"])
    assert ranks == list(range(RANKS)), ranks
    for p in m["processes"]:
        assert p["input_bytes"] > 0 and p["peak_rss_bytes"] > 0 and p["wall_seconds"] >= 0, p
    sizes = [p["input_bytes"] for p in m["processes"]]
    assert max(sizes) - min(sizes) <= max(os.path.getsize(os.path.join(CLUSTER, f)) for f in os.listdir(CLUSTER))
    # the run over the shards names them, with the final rank ids
    rm = meta(os.path.join(OUT, "sharded4", "report"))
    assert [(p["shard"], p["status"]) for p in rm["processes"]] == [(i, "merged") for i in range(4)], rm
    assert sorted(r for p in rm["processes"] for r in p["ranks"]) == list(range(RANKS))


def case_empty_shard():
    small = os.path.join(OUT, "small")
    gen_cluster(small, 2)
    shards = os.path.join(OUT, "shards3")
    shard(small, shards, 3)
    m = meta(shards)
    assert [len(p["ranks"]) for p in m["processes"]] == [1, 1, 0], m
    outputs(small, os.path.join(OUT, "small_single"), SPEC)
    outputs(shards, os.path.join(OUT, "small_sharded"), SPEC)
    same_tree(os.path.join(OUT, "small_single"), os.path.join(OUT, "small_sharded"))


def case_rank_clash():
    # Kineto traces that name their rank: two name rank 0, so every rank keeps
    # its number in input order, and the load warns once, as a single load does
    cl = os.path.join(OUT, "clash")
    os.makedirs(cl)
    for r, named in enumerate((0, 1, 2, 0)):
        gen("--kind", "kineto", "--events", str(600 + 50 * r), "--seed", str(r), "--ranks", "4",
            "--rank", str(named), "-o", os.path.join(cl, "k%d.json" % r))
    shards = os.path.join(OUT, "clash-shards")
    shard(cl, shards, 2)
    outs = []
    for name, inputs in (("clash-single", cl), ("clash-sharded", shards)):
        out = os.path.join(OUT, name)
        r = run("report", "-dir", inputs, "--spec", SPEC, "--format", "csv,json,xlsx", "-o", out, "-q")
        assert r.returncode == 0, r.stderr
        outs.append(out)
    same_tree(*outs)
    warned = [meta(o)["warnings"]["load"] for o in outs]
    assert warned[0] == warned[1] and len(warned[0]) == 1, warned
    assert "both name rank 0: ranks are numbered in input order" in warned[0][0]["message"], warned
    r = run("export", "db", "-dir", shards, "--shard", "0/2", "-o", os.path.join(OUT, "reshard"))
    assert r.returncode == 2 and "the inputs are shard DBs already" in r.stderr, (r.returncode, r.stderr)


def case_missing_shard():
    shards = os.path.join(OUT, "partial")
    os.makedirs(shards)
    for i in (0, 1, 3):
        shutil.copy(os.path.join(OUT, "shards4", "shard_%d_of_4.db" % i), shards)
    out = os.path.join(OUT, "missing")
    r = run("report", "-dir", shards, "--spec", SPEC, "-o", out)
    assert r.returncode == 6, (r.returncode, r.stderr)
    assert r.stderr == ("tracebook: error: %s: shard 2 of 4 missing (shard_2_of_4.db): the merge needs every part,"
                        " or --keep-going to leave its ranks out\n" % shards), r.stderr
    assert not os.path.exists(out), os.listdir(out)
    r = run("report", "-dir", shards, "--spec", SPEC, "-o", out, "--keep-going", "-q")
    assert r.returncode == 0, r.stderr
    m = meta(out)
    assert [(p["shard"], p["status"]) for p in m["processes"]] == [(0, "merged"), (1, "merged"), (2, "missing"),
                                                                   (3, "merged")], m["processes"]
    assert any("shard 2 of 4 missing" in w["message"] for w in m["warnings"]["load"]), m["warnings"]
    # without --keep-going again, the cached merge is not taken for a whole one
    r = run("report", "-dir", shards, "--spec", SPEC, "-o", os.path.join(OUT, "missing2"))
    assert r.returncode == 6 and not os.path.exists(os.path.join(OUT, "missing2")), r.stderr


def case_bad_shard_values():
    for bad, why in (("4/4", "I must be below N (parts are numbered 0 to 3)"),
                     ("1/0", "N must be 1 to 1000000"),
                     ("x/4", "expected I/N, part I (0 to N-1) of N"),
                     ("-1/4", "expected I/N, part I (0 to N-1) of N"),
                     ("1/4/2", "expected I/N, part I (0 to N-1) of N")):
        out = os.path.join(OUT, "bad")
        r = run("export", "db", "-dir", CLUSTER, "--shard", bad, "-o", out)
        assert r.returncode == 2, (bad, r.returncode)
        assert r.stderr.startswith("tracebook: error: --shard '%s': %s\n" % (bad, why)), r.stderr
        assert not os.path.exists(out)


def case_bad_rank():
    cl = os.path.join(OUT, "badcluster")
    gen_cluster(cl, 4)
    bad = os.path.join(cl, "r002.json")
    with open(bad, "r+") as f:
        f.seek(200)
        f.write("}}}")
    shards = os.path.join(OUT, "badshards")
    failed = 0
    for i in range(2):
        r = run("export", "db", "-dir", cl, "--shard", "%d/2" % i, "-o", shards, "-q")
        target = os.path.join(shards, "shard_%d_of_2.db" % i)
        if r.returncode:
            failed += 1
            assert r.returncode == 3, (r.returncode, r.stderr)
            assert r.stderr.startswith("tracebook: error: %s:" % bad), r.stderr
            assert not os.path.exists(target)
        else:
            assert os.path.exists(target)
    assert failed == 1, failed
    leftovers = [f for f in os.listdir(shards) if "tmp" in f or "pending" in f]
    assert not leftovers, leftovers


def same_db(a, b):
    """Every table of a holds the rows of b's, in the same order (b may add TB_SHARDS)."""
    ca, cb = sqlite3.connect(a), sqlite3.connect(b)
    ta = {r[0] for r in ca.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    tb = {r[0] for r in cb.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tb - ta == {"TB_SHARDS"}, tb ^ ta
    for t in sorted(ta):
        q = 'SELECT * FROM "%s" ORDER BY rowid' % t
        assert ca.execute(q).fetchall() == cb.execute(q).fetchall(), t


def mpi_left():
    """The processes' folders left in the cache folder (none once a run ends)."""
    return [f for f in os.listdir(os.path.join(OUT, "cache", "tracebook")) if f.startswith("mpi.tmp-")]


def mpi_case_identical():
    outputs(CLUSTER, os.path.join(OUT, "mpi4"), SPEC)
    same_tree(os.path.join(OUT, "single"), os.path.join(OUT, "mpi4"))
    m = meta(os.path.join(OUT, "mpi4", "report"))
    assert [(p["shard"], p["of"], p["status"]) for p in m["processes"]] == [(i, 4, "merged") for i in range(4)], m
    assert sorted(r for p in m["processes"] for r in p["ranks"]) == list(range(RANKS))
    assert m["inputs"] == [CLUSTER], m["inputs"]
    # export db: process 0 writes the DB a single process writes (with TB_SHARDS)
    db = os.path.join(OUT, "mpi4", "all.db")
    r = run("export", "db", "-dir", CLUSTER, "-o", db, "-q")
    assert r.returncode == 0 and r.stdout == db + "\n", (r.returncode, r.stdout, r.stderr)
    same_db(SINGLE_DB, db)
    assert not mpi_left(), "the processes' folders are removed"


def mpi_case_bad_rank():
    cl = os.path.join(OUT, "mpibad")
    shutil.copytree(CLUSTER, cl)
    bad = os.path.join(cl, "r017.json")
    with open(bad, "r+") as f:
        f.seek(300)
        f.write("}}}")
    out = os.path.join(OUT, "mpibad-out")
    r = run("report", "-dir", cl, "--spec", SPEC, "-o", out, "-q")
    assert r.returncode == 3, (r.returncode, r.stderr)
    first = r.stderr.splitlines()[0]
    assert re.match(r"tracebook: error: %s:\d+:\d+: process \d of 4: malformed JSON" % re.escape(bad), first), first
    assert not os.path.exists(out)
    assert not mpi_left(), mpi_left()
    r = run("report", "-dir", cl, "--spec", SPEC, "-o", out, "--keep-going")
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert re.search(r"tracebook: warning: %s:\d+:\d+: process \d of 4: malformed JSON.*its part is left out"
                     r" \(--keep-going\)" % re.escape(bad), r.stderr), r.stderr
    m = meta(out)
    assert [p["status"] for p in m["processes"]].count("missing") == 1, m["processes"]


def mpi_case_killed():
    out = os.path.join(OUT, "mpikill")
    env = mpi_env(dict(os.environ, TRACEBOOK_TEST_MPI_KILL="2"))
    launch = LAUNCH[:1] + ["-x", "TRACEBOOK_TEST_MPI_KILL"] + LAUNCH[1:]
    r = tbtest.run([*launch, TB, "report", "-dir", CLUSTER, "--spec", SPEC, "-o", out, "-q"], env=env)
    assert r.returncode != 0, r.returncode
    assert "exited on signal 9" in r.stderr, r.stderr
    assert not os.path.exists(out)
    # what the processes had in their folder goes with them when mpirun ends
    # them with SIGTERM; when it has to kill them, the next run of this host
    # removes the folder of the dead run
    # (a process mpirun ended may take a moment to be gone: its folder is
    # removed by the first run that finds it gone)
    assert_swept(CLUSTER)


def assert_swept(cluster):
    """The next runs of this host remove the folders of a killed MPI run."""
    for _ in range(5):
        r = run("info", "-dir", cluster, "-q")
        assert r.returncode == 0, r.stderr
        left = [os.path.join(d, f) for d in mpi_left() for f in os.listdir(os.path.join(OUT, "cache", "tracebook", d))]
        if not left:
            break
        time.sleep(1)
    assert not left, left


# ---- rank-scope reports over shards: no merge (docs/scale-out.md#report-scopes) ----

NOT_RANK = {"cluster_step_trace_time", "slow_rank", "slow_rank_op", "communication_matrix", "comm_op_bandwidth",
            "op_summary", "kernel_details", "step_trace", "slow_rank_vote", "slow_op_stats", "slow_link",
            "slow_link_summary", "potential_stragglers", "straggler_metric", "cluster_time_summary",
            "communication_group_map", "communication_group", "mstx_mark_stats", "mstx_fwk_stats", "mstx_cann_stats",
            "mstx_device_stats", "pp_chart", "module_statistic", "free_analysis",
            "review_top_kernels",  # the review's top kernels are over all ranks (scope all)
            "ai_core_utilization", "ai_vector_core_utilization"}  # columns named by the data: pivot, scope all
NOT_RANK_PREFIX = "advisor_"  # the advisor's rules (reports/advisor.yaml) are of scope all
RANK_SQL = """
  - id: ranked_kernels
    scope: rank
    outputs: [csv, json, xlsx]
    sql: |
      SELECT rankId AS "Rank:rank", name AS "Name", count(*) AS "Count", sum(dur) AS "Total:dur_ns"
      FROM kernel GROUP BY name ORDER BY 4 DESC, 2
    limit: 3
  - id: rank_steps
    scope: rank
    sql: SELECT rankId AS "Rank", * FROM step_trace_time ORDER BY 2
  - id: never
    scope: rank
    requires: [TB_COMM_MATRIX]
    sql: SELECT 1 AS "X"
"""


def rank_spec(path, extra=""):
    names = [line.split()[0] for line in run("reports").stdout.splitlines() if line.strip()]
    with open(path, "w") as f:
        f.write("tracebook: 1\noutputs: [csv, json, xlsx]\nreports:\n" +
                "".join("  - use: %s\n" % n for n in names if n not in NOT_RANK and not n.startswith(NOT_RANK_PREFIX)) +
                RANK_SQL + extra)
    return path


def gen_claimed(path, ranks, events=200):
    """Ranks that name themselves in reverse input order (profiler_info_N.json of torch_npu
    directories, renamed so that the last rank comes first): the load's ids differ from the
    shards' numbers, which a shard's rows must be mapped through."""
    tmp = path + ".gen"
    gen("--kind", "torch_npu_dir", "--events", str(events), "--seed", "500", "--ranks", str(ranks), "-o", tmp)
    os.makedirs(path, exist_ok=True)
    for r in range(ranks):
        os.rename(os.path.join(tmp, "rank%d_ascend_pt" % r), os.path.join(path, "d%03d" % (ranks - 1 - r)))
    os.rmdir(tmp)
    # the first input names the last rank: the mapping is exercised
    with one_process():
        r = run("query", "-dir", path, "--format", "csv", "SELECT rankId FROM TB_RANK ORDER BY rowid")
    assert r.returncode == 0 and r.stdout.split()[1:] == [str(ranks - 1 - k) for k in range(ranks)], r.stdout


def cache_dbs():
    root = os.path.join(OUT, "cache", "tracebook")
    return sorted(f for f in os.listdir(root) if f.endswith(".db")) if os.path.isdir(root) else []


def scoped_left():
    root = os.path.join(OUT, "cache", "tracebook")
    return [f for f in os.listdir(root) if f.startswith(("scoped.tmp-", "mpi.tmp-"))] if os.path.isdir(root) else []


def report(inputs, out, spec_path, *extra):
    r = run("report", "-dir", inputs, "--spec", spec_path, "-o", out, "-q", *extra)
    assert r.returncode == 0, (r.returncode, r.stderr)
    return r


def single_runs(inputs, out, spec_path, window):
    """The runs over the raw ranks by one process, without and with the window (OUT, OUT_w),
    made once. Returns whether they were made now."""
    if os.path.exists(out):
        return False
    with one_process():
        report(inputs, out, spec_path)
        report(inputs, out + "_w", spec_path, *window)
    return True


def scoped_single():
    out = os.path.join(OUT, "rsingle")
    single_runs(RCLUSTER, out, RSPEC, WINDOW)
    return out


WINDOW = ("--model-id", "4294967295", "--iteration-id", "2")  # ranks 11, 12 and 14 have step 2


def case_scoped_shards_identical():
    single = scoped_single()
    # the rank column shows the ids the ranks name (15 .. 0 in input order), in rank order
    with open(os.path.join(single, "ranked_kernels.csv")) as f:
        ranks = [line.split(",")[0] for line in f.read().splitlines()[1:]]
    assert ranks == sorted(ranks, key=int) and set(ranks) == {str(r) for r in range(16)}, ranks
    shards = os.path.join(OUT, "rshards4")
    shard(RCLUSTER, shards, 4)
    before = cache_dbs()
    out = os.path.join(OUT, "rsharded4")
    r = run("report", "-dir", shards, "--spec", RSPEC, "-o", out)
    assert r.returncode == 0, r.stderr
    # one note for the report no rank can run, as the single run gives
    assert r.stderr.count("report 'never' skipped: the data has no TB_COMM_MATRIX rows") == 1, r.stderr
    same_tree(single, out)
    report(shards, out + "_w", RSPEC, *WINDOW)
    same_tree(single + "_w", out + "_w")
    m = meta(out)
    assert [(p["shard"], p["status"]) for p in m["processes"]] == [(i, "scoped") for i in range(4)], m["processes"]
    assert sorted(r for p in m["processes"] for r in p["ranks"]) == list(range(16))
    # nothing merged, nothing cached, nothing left
    assert cache_dbs() == before, (before, cache_dbs())
    assert not scoped_left(), scoped_left()


def case_scope_rank_is_each_rank_alone():
    # what scope: rank means, against SQL of scope all: each rank's rows are
    # those of the same query restricted to that rank, limit included
    single = scoped_single()
    with open(os.path.join(single, "ranked_kernels.csv")) as f:
        got = f.read().splitlines()
    want = [got[0]]
    for rank in range(16):
        r = run("query", "-dir", RCLUSTER, "--format", "csv",
                'SELECT rankId AS "Rank", name AS "Name", count(*) AS "Count", sum(dur) AS "Total:dur_ns" '
                "FROM kernel WHERE rankId = %d GROUP BY name ORDER BY 4 DESC, 2 LIMIT 3" % rank)
        assert r.returncode == 0, r.stderr
        want += r.stdout.splitlines()[1:]
    assert got == want, (got[:8], want[:8])


def case_scoped_mixed_spec_merges():
    # one report of scope all: the shards are merged, as before
    spec2 = rank_spec(os.path.join(OUT, "mixed.yaml"), extra="  - id: whole\n    sql: SELECT count(*) AS \"N\" FROM TASK\n")
    shards = os.path.join(OUT, "rshards4")
    out = os.path.join(OUT, "rmixed")
    report(shards, out, spec2)
    assert [p["status"] for p in meta(out)["processes"]] == ["merged"] * 4
    # --report naming rank-scope reports only: no merge
    out2 = os.path.join(OUT, "rmixed_only")
    report(shards, out2, spec2, "--report", "ranked_kernels", "--report", "top_kernels")
    assert [p["status"] for p in meta(out2)["processes"]] == ["scoped"] * 4
    for f in ("ranked_kernels.csv", "top_kernels.csv"):
        assert filecmp.cmp(os.path.join(out2, f), os.path.join(scoped_single(), f), shallow=False), f


def case_scoped_errors():
    shards = os.path.join(OUT, "rshards4")
    part = os.path.join(OUT, "rshards_missing")
    shutil.copytree(shards, part)
    os.remove(os.path.join(part, "shard_2_of_4.db"))
    out = os.path.join(OUT, "rmissing")
    r = run("report", "-dir", part, "--spec", RSPEC, "-o", out, "-q")
    assert r.returncode == 6 and "shard 2 of 4 missing (shard_2_of_4.db)" in r.stderr, (r.returncode, r.stderr)
    assert not os.path.exists(out) and not scoped_left()
    # a report whose SQL fails on the shards fails as on one DB, naming the spec's line
    bad = os.path.join(OUT, "badrank.yaml")
    with open(bad, "w") as f:
        f.write("tracebook: 1\nreports:\n  - id: b\n    scope: rank\n    sql: SELECT nosuch FROM kernel\n")
    r1 = run("report", "-dir", RCLUSTER, "--spec", bad, "-o", out, "-q")
    r2 = run("report", "-dir", shards, "--spec", bad, "-o", out, "-q")
    assert r1.returncode == r2.returncode == 3 and r1.stderr == r2.stderr, (r1.returncode, r2.returncode, r2.stderr)
    assert "badrank.yaml:5:" in r2.stderr and "no such column: nosuch" in r2.stderr, r2.stderr
    assert not (os.path.exists(out) and os.listdir(out)) and not scoped_left()
    # a window no rank has: the usage error of a single run (exit 2), its
    # message listing every rank by its id in the load
    nowhere = ("--model-id", "4294967295", "--iteration-id", "999")
    r1 = run("report", "-dir", RCLUSTER, "--spec", RSPEC, "-o", out, "-q", *nowhere)
    r2 = run("report", "-dir", shards, "--spec", RSPEC, "-o", out, "-q", *nowhere)
    assert r1.returncode == r2.returncode == 2 and "--iteration-id 999" in r2.stderr, (r2.returncode, r2.stderr)
    assert r1.stderr == r2.stderr, (r1.stderr, r2.stderr)
    assert r2.stderr.count("rank ") == 16, r2.stderr
    assert not (os.path.exists(out) and os.listdir(out)) and not scoped_left()


def case_scoped_window_half_there():
    # rank 0 has steps 7-8, rank 1 steps 6-7, each in its own shard: steps 7-8
    # fail a single run (rank 1 has 7 but not 8), and so over the shards, where
    # the shard of rank 1 alone sees the problem; step 7 alone gives the same files
    cl = os.path.join(OUT, "halfcl")
    os.makedirs(cl, exist_ok=True)
    for name, ev, seed, rank in (("a.json", 3000, 11, 0), ("b.json", 2000, 13, 1)):
        gen("--kind", "ascend", "--events", str(ev), "--seed", str(seed), "--ranks", "2", "--rank", str(rank),
            "-o", os.path.join(cl, name))
    shards = os.path.join(OUT, "halfsh")
    shard(cl, shards, 2)
    spec1 = os.path.join(OUT, "op.yaml")
    with open(spec1, "w") as f:
        f.write("tracebook: 1\nreports:\n  - use: op_statistic\n")
    two = ("--model-id", "4294967295", "--iteration-id", "7", "--iteration-count", "2")
    errors = []
    for inputs in (cl, shards):
        out = os.path.join(OUT, "half-" + os.path.basename(inputs))
        r = run("report", "-dir", inputs, "--spec", spec1, "-o", out, "-q", *two)
        assert r.returncode == 2 and "--iteration-id 7 --iteration-count 2: step mode has" in r.stderr, \
            (inputs, r.returncode, r.stderr)
        assert not (os.path.exists(out) and os.listdir(out)), out
        errors.append(r.stderr)
    # the same message: both ranks, by their ids in the load
    assert errors[0] == errors[1] and "rank 0: steps" in errors[1] and "rank 1: steps" in errors[1], errors
    report(cl, os.path.join(OUT, "half1"), spec1, "--model-id", "4294967295", "--iteration-id", "7")
    report(shards, os.path.join(OUT, "half2"), spec1, "--model-id", "4294967295", "--iteration-id", "7")
    same_tree(os.path.join(OUT, "half1"), os.path.join(OUT, "half2"))
    assert not scoped_left(), scoped_left()


CLUSTER_SPEC = """tracebook: 1
outputs: [csv, json, xlsx]
reports:
  - use: cluster_step_trace_time
  - use: slow_rank
  - use: slow_rank_op
  - use: communication_matrix
  - id: wait_and_compute
    scope: cluster
    sql: |
      SELECT s.rankId AS "Rank", c.step AS "Step", s.totalWaitNs AS "Wait:dur_ns", c.computing AS "Computing(us)"
      FROM slow_rank s LEFT JOIN cluster_step_trace_time c ON c.type = 'rank' AND c.rankId = s.rankId
      ORDER BY 1, 2
"""
CWINDOW = ("--model-id", "4294967295", "--iteration-id", "5")  # ranks 0, 3, 4 and 5 have step 5


def cluster_single():
    """The cluster reports over the raw ranks (one process), made once."""
    out = os.path.join(OUT, "csingle")
    if single_runs(CCLUSTER, out, CSPEC, CWINDOW):
        # the data gives every report rows, and the ranks' own ids
        for name in ("cluster_step_trace_time", "slow_rank", "slow_rank_op", "wait_and_compute"):
            with open(os.path.join(out, name + ".csv")) as f:
                assert len(f.read().splitlines()) > 6, name
        with open(os.path.join(out, "slow_rank.csv")) as f:
            assert sorted(line.split(",")[1] for line in f.read().splitlines()[1:]) == [str(r) for r in range(6)]
    return out


def case_cluster_scope_shards_identical():
    # cluster reports over shards: each shard makes its ranks' rows of the
    # cluster tables, the tables are made from them at the end: the same files
    single = cluster_single()
    shards = os.path.join(OUT, "cshards3")
    shard(CCLUSTER, shards, 3)
    before = cache_dbs()
    out = os.path.join(OUT, "csharded3")
    report(shards, out, CSPEC)
    same_tree(single, out)
    report(shards, out + "_w", CSPEC, *CWINDOW)
    same_tree(single + "_w", out + "_w")
    m = meta(out)
    assert [(p["shard"], p["status"]) for p in m["processes"]] == [(i, "scoped") for i in range(3)], m["processes"]
    assert cache_dbs() == before, (before, cache_dbs())
    assert not scoped_left(), scoped_left()
    # with rank-scope reports before and after them in the same spec: still no merge
    mixed = os.path.join(OUT, "cmixed.yaml")
    with open(mixed, "w") as f:
        f.write(CLUSTER_SPEC.replace("reports:\n", "reports:\n  - use: step_trace_time\n") +
                "  - use: top_kernels\n")
    for extra, tag in (((), "_m"), (CWINDOW, "_mw")):
        with one_process():
            report(CCLUSTER, out + tag + "1", mixed, *extra)
        report(shards, out + tag + "2", mixed, *extra)
        same_tree(out + tag + "1", out + tag + "2")
        assert {p["status"] for p in meta(out + tag + "2")["processes"]} == {"scoped"}
    assert cache_dbs() == before, (before, cache_dbs())


def case_cluster_scope_public_data():
    # msprof-analyze's files, two torch_npu ranks and an msprof DB, in 3 shards:
    # each source of the cluster tables (step trace CSVs, communication.json,
    # the matrix files, the HCCL tasks and ops) gives the same files
    pub = os.path.join(SHARED or "", "ascend")
    if not SHARED or not os.path.isdir(pub):
        print("(no shared public data: part skipped)")
        return
    for name, parts in (("pjob1", ("torch_npu_rank0", "torch_npu_rank1", "cluster_analysis_output")),
                        ("pjob2", ("cluster_analysis_output",)),
                        ("pjob3", ("msprof_db", "torch_npu_rank0", "torch_npu_rank1"))):
        job = os.path.join(OUT, name)
        for part in parts:
            shutil.copytree(os.path.join(pub, part), os.path.join(job, part))
        spec_path = os.path.join(OUT, "cluster.yaml")
        shards = job + "_shards"
        with one_process():
            report(job, job + "_single", spec_path)
            shard(job, shards, 3)
        report(shards, job + "_sharded", spec_path)
        same_tree(job + "_single", job + "_sharded")
        with open(os.path.join(job + "_single", "cluster_step_trace_time.csv")) as f:
            assert len(f.read().splitlines()) > 2, name


def public_summary(tag):
    """export summary and export db of the two public torch_npu ranks (their communication.json and
    communication_matrix.json, rank 0 with the public profiler_metadata.json) over 2 shards, or under
    mpirun in the MPI cases: every file of the single run's, communication_matrix.json of each rank
    included, and the DB of the single load, every table (the communication tables too)."""
    pub = os.path.join(SHARED or "", "ascend")
    if not SHARED or not os.path.isdir(pub):
        raise tbtest.Skip("no shared public data")
    job = os.path.join(OUT, tag)
    for r in (0, 1):
        shutil.copytree(os.path.join(pub, "torch_npu_rank%d" % r), os.path.join(job, "r%d_ascend_pt" % r))
    shutil.copy(os.path.join(pub, "misc", "profiler_metadata.json"), os.path.join(job, "r0_ascend_pt"))
    with one_process():
        r = run("export", "summary", "-q", "-dir", job, "-o", job + "_single")
        assert r.returncode == 0, r.stderr
        r = run("export", "db", "-q", "-dir", job, "-o", job + "_single.db")
        assert r.returncode == 0, r.stderr
        if not LAUNCH:
            shard(job, job + "_shards", 2)
    given = job if LAUNCH else job + "_shards"
    r = run("export", "summary", "-q", "-dir", given, "-o", job + "_split")
    assert r.returncode == 0, r.stderr
    same_tree(job + "_single", job + "_split")
    for r in (0, 1):
        folder = os.path.join(job + "_split", "r%d_ascend_pt" % r, "ASCEND_PROFILER_OUTPUT")
        assert os.path.isfile(os.path.join(folder, "communication_matrix.json")), os.listdir(folder)
    r = run("export", "db", "-q", "-dir", given, "-o", job + "_split.db")
    assert r.returncode == 0, r.stderr
    same_db(job + "_single.db", job + "_split.db")
    con = sqlite3.connect(job + "_split.db")
    assert con.execute("SELECT count(DISTINCT rankId) FROM TB_COMM_MATRIX").fetchone()[0] == 2
    con.close()


def case_public_summary_shards_identical():
    public_summary("psum")


def mpi_case_public_summary_identical():
    public_summary("psum_mpi")


def case_scoped_notes_name_load_ranks():
    # a rank with no device tasks (the first input, which names itself rank 2):
    # the note over shards names it as the single run does, once, from process 0
    cl = os.path.join(OUT, "notecl")
    gen_claimed(cl, 3, events=1500)
    trace = os.path.join(cl, "d000", "ASCEND_PROFILER_OUTPUT", "trace_view.json")
    with open(trace) as f:
        ev = json.load(f)
    device = {e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"
              and e["args"]["name"] in ("Ascend Hardware", "Communication", "Overlap Analysis")}
    with open(trace, "w") as f:
        json.dump([e for e in ev if e.get("ph") == "M" or e.get("pid") not in device], f)
    os.remove(os.path.join(cl, "d000", "ASCEND_PROFILER_OUTPUT", "kernel_details.csv"))
    shards = os.path.join(OUT, "noteshards")
    shard(cl, shards, 2)
    errs = []
    for inputs, out in ((cl, "note1"), (shards, "note2")):
        r = run("report", "-dir", inputs, "--spec", CSPEC, "-o", os.path.join(OUT, out))
        assert r.returncode == 0, r.stderr
        errs.append(sorted(line for line in r.stderr.splitlines() if "note:" in line))
    assert errs[0] == errs[1], errs
    assert "tracebook: note: step_trace_time: rank 2: no row: the rank has no device tasks or communication ops" \
        in errs[1], errs[1]
    same_tree(os.path.join(OUT, "note1"), os.path.join(OUT, "note2"))


def case_cluster_scope_reads_cluster_tables_only():
    # SQL of scope cluster that reads an event table fails alike on one DB and over shards
    bad = os.path.join(OUT, "cbad.yaml")
    with open(bad, "w") as f:
        f.write("tracebook: 1\nreports:\n  - id: mine\n    scope: cluster\n    sql: |\n"
                "      SELECT s.rankId AS \"Rank\", count(*) AS \"N\"\n"
                "      FROM slow_rank s JOIN TASK t ON t.rankId = s.rankId GROUP BY 1\n")
    want = ("tracebook: error: %s:6:7: report 'mine': a report of scope cluster reads only cluster_step_trace_time, "
            "cluster_step_trace_time_csv, slow_rank_op, slow_rank, communication_matrix, comm_op_bandwidth, not TASK"
            % bad)
    shards = os.path.join(OUT, "cshards3")
    if not os.path.isdir(shards):
        shard(CCLUSTER, shards, 3)
    for inputs in (CCLUSTER, shards):
        out = os.path.join(OUT, "cbad_out")
        r = run("report", "-dir", inputs, "--spec", bad, "-o", out, "-q")
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert r.stderr.splitlines()[0] == want, r.stderr
        assert not (os.path.exists(out) and os.listdir(out)), os.listdir(out)
    assert not scoped_left(), scoped_left()


def mpi_scoped_as_single(inputs, spec_path, window, single, out):
    """Under mpirun -n 4, without and with the window: the single run's files, no merge, no folder left."""
    report(inputs, out, spec_path)
    same_tree(single, out)
    report(inputs, out + "_w", spec_path, *window)
    same_tree(single + "_w", out + "_w")
    m = meta(out)
    assert [(p["shard"], p["of"], p["status"]) for p in m["processes"]] == [(i, 4, "scoped") for i in range(4)], m
    assert not mpi_left(), mpi_left()


def mpi_case_cluster_scoped():
    mpi_scoped_as_single(CCLUSTER, CSPEC, CWINDOW, cluster_single(), os.path.join(OUT, "cmpi4"))


def mpi_case_scoped():
    mpi_scoped_as_single(RCLUSTER, RSPEC, WINDOW, scoped_single(), os.path.join(OUT, "rmpi4"))


def mpi_case_scoped_killed():
    # a process killed while its shard's reports run: no output, nothing left once the host's next run sweeps
    out = os.path.join(OUT, "rmpikill")
    env = mpi_env(dict(os.environ, TRACEBOOK_TEST_MPI_KILL_PARTIAL="1"))
    launch = LAUNCH[:1] + ["-x", "TRACEBOOK_TEST_MPI_KILL_PARTIAL"] + LAUNCH[1:]
    r = tbtest.run([*launch, TB, "report", "-dir", RCLUSTER, "--spec", RSPEC, "-o", out, "-q"], env=env)
    assert r.returncode != 0, r.returncode
    assert not os.path.exists(out)
    assert_swept(RCLUSTER)


if __name__ == "__main__":
    tbtest.fresh_dir(OUT)
    tbtest.use_cache(os.path.join(OUT, "cache"))
    CLUSTER = os.path.join(OUT, "cluster")
    gen_cluster(CLUSTER, RANKS)
    SPEC = spec(os.path.join(OUT, "all.yaml"))
    outputs(CLUSTER, os.path.join(OUT, "single"), SPEC)
    RCLUSTER = os.path.join(OUT, "rcluster")
    gen_claimed(RCLUSTER, 16)
    RSPEC = rank_spec(os.path.join(OUT, "rank.yaml"))
    CCLUSTER = os.path.join(OUT, "ccluster")
    gen_claimed(CCLUSTER, 6, events=3000)
    CSPEC = os.path.join(OUT, "cluster.yaml")
    with open(CSPEC, "w") as f:
        f.write(CLUSTER_SPEC)
    SINGLE_DB = os.path.join(OUT, "single.db")
    r = run("export", "db", "-dir", CLUSTER, "-o", SINGLE_DB, "-q")
    assert r.returncode == 0, r.stderr
    prefix = "case_"
    if MPI is not None:
        if MPI != "yes" or not shutil.which("mpirun"):
            tbtest.skip("this build has no MPI" if MPI != "yes" else "no mpirun")
        prefix = "mpi_case_"
        LAUNCH[:] = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-n", "4"]
    suite = tbtest.Suite(work=OUT)
    suite.collect(globals(), prefix)
    suite.main()
