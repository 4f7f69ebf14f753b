#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# run.py - malformed inputs through the command (suite 'cli').
#
# Each case of expected.txt names an input (a file of files/, or one made
# here at test time: the big ones, deep nesting, folders without profile
# data), where it is placed, the command run over it, the exit code and the
# exact stderr. Checked for every case: the exit code; the message, exactly
# (it names the file, with a line, column or byte offset where the reader
# knows one); that the input is byte-identical afterwards (sha256); that a
# failed run left nothing in its output folder, and no run left a temporary
# file (NAME.tmp-*) in its output folder, TMPDIR or cache.
#
# expected.txt: one case a line, fields separated by " | ":
#   INPUT | PLACE | COMMAND | EXIT | STDERR
# PLACE is "-" (the file itself is the -dir) or a relative path under a fresh
# folder that becomes the -dir (kernel_details.csv, ASCEND_PROFILER_OUTPUT/x).
# COMMAND is db (export db --strict), db-lax (export db), info, report
# (report --spec INPUT over samples/ascend_small), report-limits (the same
# with small limits: 2 s of CPU time, 64 MiB of SQLite heap and temporary
# files) or report-space (64 MiB of heap and temporary files, and CPU time
# enough that a slow build, such as the sanitizers', meets them first). In STDERR, {in} is the input's path, {dir} the -dir, {out} the
# output folder and \n a newline.
#
# usage: run.py TRACEBOOK SAMPLES_DIR WORK_DIR [--record]
#   --record rewrites the STDERR and EXIT fields from what the command does
#   now (review the diff before committing it).
import hashlib
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import tbtest  # noqa: E402

TB, SAMPLES, WORK, *OPTS = tbtest.args("TRACEBOOK SAMPLES_DIR WORK_DIR [--record]", 3, 4)
RECORD = "--record" in OPTS
FILES = os.path.join(HERE, "files")
MANIFEST = os.path.join(HERE, "expected.txt")
MB = 1024 * 1024


def gen(name):
    """The inputs made at test time (not checked in: too big, or folders)."""
    ev = '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1'
    if name == "gen_trace_1mb_name.json":
        return ('[{"ph":"X","name":"' + "n" * MB + '","pid":1,"tid":1,"ts":1,"dur":1}]').encode()
    if name == "gen_trace_1mb_key.json":
        return ('[{"' + "k" * MB + '":1,' + ev[1:] + '}]').encode()
    if name == "gen_trace_deep_arrays.json":
        return ('[' + ev + ',"args":' + "[" * 100000 + "]" * 100000 + '}]').encode()
    if name == "gen_trace_deep_objects.json":
        return ('[' + ev + ',"args":' + '{"a":' * 100000 + "1" + "}" * 100000 + '}]').encode()
    if name == "gen_trace_deep_unclosed.json":
        return ('[' + ev + ',"args":' + "[" * 200000).encode()
    if name == "gen_csv_1mb_field.csv":
        with open(os.path.join(FILES, "csv_header_only.csv"), "rb") as f:
            hdr = f.read()
        return hdr + b"1,2,3,4," + b"x" * MB + b",K\n"
    if name == "gen_spec_1mb_sql.yaml":
        return ("tracebook: 1\nreports:\n  - id: a\n    sql: SELECT '" + "s" * MB + "' AS x\n").encode()
    if name == "gen_spec_deep.yaml":
        return ("tracebook: 1\nreports: " + "[" * 50000 + "]" * 50000 + "\n").encode()
    if name == "gen_tops_1mb_line.txt":
        return b"x" * MB + b"\n"
    return None


def digest(path):
    h = hashlib.sha256()
    if os.path.isdir(path):
        for root, dirs, files in sorted(os.walk(path)):
            dirs.sort()
            for f in sorted(files):
                h.update(os.path.relpath(os.path.join(root, f), path).encode())
                with open(os.path.join(root, f), "rb") as fh:
                    h.update(fh.read())
        return h.hexdigest()
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def leftovers(top):
    found = []
    for root, _, files in os.walk(top):
        found += [os.path.join(root, f) for f in files if ".tmp-" in f or f.startswith(".tracebook-pending-")]
    return found


def run_case(i, inp, place, cmd, case_dir):
    tmp = os.path.join(case_dir, "tmp")
    cache = os.path.join(case_dir, "cache")
    out = os.path.join(case_dir, "out")
    for d in (tmp, cache, out):
        os.makedirs(d)
    if inp.startswith("dir_"):
        # folders without profile data
        top = os.path.join(case_dir, inp)
        os.makedirs(top)
        if inp == "dir_readme_only":
            with open(os.path.join(top, "README.txt"), "w") as f:
                f.write("no profile here\n")
        elif inp == "dir_other_json":
            with open(os.path.join(top, "config.json"), "w") as f:
                f.write('{"a": 1}\n')
            os.makedirs(os.path.join(top, "ASCEND_PROFILER_OUTPUT"))
        elif inp == "dir_missing":
            os.rmdir(top)
        src = top
    else:
        data = gen(inp)
        if data is None:
            with open(os.path.join(FILES, inp), "rb") as f:
                data = f.read()
        src = os.path.join(case_dir, "input", inp if place == "-" else place)
        os.makedirs(os.path.dirname(src), exist_ok=True)
        with open(src, "wb") as f:
            f.write(data)
    top = src if place == "-" or inp.startswith("dir_") else os.path.join(case_dir, "input")
    before = digest(src) if os.path.exists(src) else None
    args = {"db": ["export", "db", "--strict", "-dir", top, "-o", os.path.join(out, "x.db")],
            "db-lax": ["export", "db", "-dir", top, "-o", os.path.join(out, "x.db")],
            "info": ["info", "-dir", top],
            "report": ["report", "-dir", os.path.join(SAMPLES, "ascend_small"), "--spec", src, "-o", out,
                       "--format", "csv", "--max-steps", "20000000"],
            "report-limits": ["report", "-dir", os.path.join(SAMPLES, "ascend_small"), "--spec", src, "-o", out,
                              "--format", "csv", "--max-cpu-time", "2", "--max-memory", "64M", "--max-temp", "64M"],
            "report-space": ["report", "-dir", os.path.join(SAMPLES, "ascend_small"), "--spec", src, "-o", out,
                             "--format", "csv", "--max-cpu-time", "600", "--max-memory", "64M", "--max-temp", "64M"]}[cmd]
    env = dict(os.environ, LC_ALL="C", LANG="C", TMPDIR=tmp, XDG_CACHE_HOME=cache)
    p = tbtest.run([TB] + args, env=env, timeout=300, errors="replace")
    err = p.stderr
    for k, v in (("{in}", src), ("{dir}", top), ("{out}", out), ("{samples}", SAMPLES)):
        err = err.replace(v, k) if v else err
    problems = []
    if before is not None and digest(src) != before:
        problems.append("the input changed")
    if p.returncode != 0 and os.listdir(out):
        problems.append("a failed run left files in its output folder: %s" % os.listdir(out))
    left = leftovers(case_dir)
    if left:
        problems.append("temporary files left: %s" % left)
    if os.listdir(tmp):
        problems.append("files left in TMPDIR: %s" % os.listdir(tmp))
    if p.returncode < 0 or p.returncode == 1:
        problems.append("crashed or internal error (exit %d)" % p.returncode)
    return p.returncode, err.rstrip("\n").replace("\n", "\\n"), problems


def main():
    tbtest.fresh_dir(WORK)
    with open(MANIFEST, encoding="utf-8") as f:
        lines = f.read().splitlines()
    cases = [l for l in lines if l.strip() and not l.startswith("#")]
    T = tbtest.Checks(verbose=True)
    new_lines = []
    seen = set()
    for i, line in enumerate(lines):
        if not line.strip() or line.startswith("#"):
            new_lines.append(line)
            continue
        parts = line.split(" | ", 4)
        while len(parts) < 5:
            parts.append("")
        inp, place, cmd, want_rc, want_err = (p.strip() if k < 4 else p for k, p in enumerate(parts))
        seen.add(inp)
        rc, err, problems = run_case(i, inp, place, cmd, os.path.join(WORK, "case%03d" % i))
        if RECORD:
            new_lines.append(" | ".join([inp, place, cmd, str(rc), err]))
        else:
            if str(rc) != want_rc:
                problems.append("exit %d, expected %s" % (rc, want_rc))
            if err != want_err:
                problems.append("stderr:\n      expected %r\n      got      %r" % (want_err, err))
        T.check(not problems, "%s (%s, %s)" % (inp, place, cmd), "\n".join(problems))
    unused = sorted(set(os.listdir(FILES)) - seen)
    T.check(not unused, "every file has a case in expected.txt", "without one: %s" % ", ".join(unused))
    if RECORD:
        with open(MANIFEST, "w", encoding="utf-8") as f:
            f.write("\n".join(new_lines) + "\n")
    T.check(len(cases) >= 60, "at least 60 cases", "only %d" % len(cases))
    status = T.finish()
    if not status:
        shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(status)


main()
