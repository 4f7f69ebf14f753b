#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# critical_path_params_test.py - the parameters of the critical_path reports
# (annotation, instance, data_load_events) as the command takes them, on
# samples/kineto_small (six ProfilerSteps, #8 to #13); the paths' figures
# are HTA's own in the conformance test (hta_critical_path):
#   - one run, two reports, two choices: critical_path asked for the whole
#     trace (critical_path.annotation=) and critical_path_summary left at its
#     defaults: the table is built for each, the first gets one path (step
#     "") and the second a path per step, each as a run of its own gives;
#   - instance N and N-M: one path, named by the instance or "first .. last",
#     the instances numbered as HTA's instance_id: every slice whose name
#     holds the annotation in the trace file's order, the device's copies
#     (gpu_user_annotation) too: host #8 is 0, its copy 1, host #9 2, ...,
#     host #13 10 (the copy of #13 starts after the last step's start: HTA's
#     window drops it); each host step alone gives the rows the run of every
#     step gives it;
#   - tracebook query --param annotation= reads the whole trace's path;
#   - an instance the rank lacks, an annotation no slice holds: exit 0, a
#     note naming it, the header alone;
#   - bad values: exit 2, a message naming the parameter and the value, no
#     file written;
#   - the file order that numbering follows: every Kineto row of TASK,
#     CANN_API, PYTORCH_API and TB_EVENT keeps its event's byte offset in
#     the trace file (the text there is that event: its name follows), the
#     offsets distinct; an Ascend timeline's CANN_API and TASK rows none;
#   - TB_EVENT args that are no JSON (a DB given as input): read as a host
#     event's, no failure; a DB written before TASK and CANN_API had
#     fileOffset: numbered (their rows as rows without an offset).
# usage: critical_path_params_test.py TRACEBOOK SAMPLES_DIR OUT_DIR
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

T = tbtest.Checks()
STEPS = ["ProfilerStep#%d" % i for i in range(8, 14)]


def rows(d, name):
    with open(os.path.join(d, name + ".csv"), newline="") as f:
        return list(csv.DictReader(f))


def report(exe, small, out, *args, code=0):
    d = tbtest.fresh_dir(out)
    r = tbtest.run([exe, "report", "-dir", small, "-o", d] + list(args))
    T.check(r.returncode == code, "%s: exit %d" % (" ".join(args), code), r.stderr)
    return d, r


def steps_of(d, name):
    return sorted({r["step"] for r in rows(d, name)}, key=lambda s: (len(s), s))


def main():
    exe, samples, out = sys.argv[1:4]
    small = os.path.join(samples, "kineto_small")
    both = ["--spec", "builtin:critical_path", "--spec", "builtin:critical_path_summary"]

    # defaults: a path per step
    base, _ = report(exe, small, os.path.join(out, "base"), *both)
    T.eq(steps_of(base, "critical_path"), STEPS, "defaults: a path per ProfilerStep")

    # two choices in one run: each report gets the table it asks for
    mixed, _ = report(exe, small, os.path.join(out, "mixed"), *both, "--param", "critical_path.annotation=")
    whole, _ = report(exe, small, os.path.join(out, "whole"), *both, "--param", "annotation=")
    T.eq(steps_of(mixed, "critical_path"), [""], "critical_path.annotation=: one path over the whole trace")
    T.eq(rows(mixed, "critical_path"), rows(whole, "critical_path"), "the whole trace's path as a run of its own")
    T.eq(rows(mixed, "critical_path_summary"), rows(base, "critical_path_summary"),
         "the other report of the run keeps the defaults' table")
    T.check(len(rows(whole, "critical_path")) > len(rows(base, "critical_path")) / 6,
            "the whole trace's path is longer than a step's")

    # the query command gives the table its --param too
    r = tbtest.run([exe, "query", "-dir", small, "--format", "csv", "--param", "annotation=",
                    "SELECT DISTINCT quote(step) AS s FROM critical_path"])
    T.check(r.returncode == 0 and r.stdout.splitlines() == ["s", "''"],
            "query --param annotation=: the whole trace's path alone", r.stdout + r.stderr)

    # one instance, a window of instances
    one, _ = report(exe, small, os.path.join(out, "one"), *both, "--param", "instance=4")
    T.eq(steps_of(one, "critical_path"), ["ProfilerStep#10"], "instance=4: host step #10 alone")
    T.eq([r for r in rows(one, "critical_path")], [r for r in rows(base, "critical_path")
                                                   if r["step"] == "ProfilerStep#10"],
         "instance=4: the step's path as in the run of every step")
    copy, _ = report(exe, small, os.path.join(out, "copy"), *both, "--param", "instance=3")
    T.eq(steps_of(copy, "critical_path"), ["ProfilerStep#9"], "instance=3: the device's copy of step #9")
    T.check(rows(copy, "critical_path") and rows(copy, "critical_path") !=
            [r for r in rows(base, "critical_path") if r["step"] == "ProfilerStep#9"],
            "instance=3: the path of the copy's window, not the host step's")
    # each step alone as in the run of every step: nothing of one step's
    # graph (its nodes, its waits) stays for the next; host step i is HTA's
    # instance 2i (each host step has its device copy after it)
    for i, step in enumerate(STEPS):
        alone, _ = report(exe, small, os.path.join(out, "alone%d" % i), "--spec", "builtin:critical_path",
                          "--param", "instance=%d" % (2 * i))
        T.eq(rows(alone, "critical_path"), [r for r in rows(base, "critical_path") if r["step"] == step],
             "instance=%d: %s's path as in the run of every step" % (2 * i, step))
    win, _ = report(exe, small, os.path.join(out, "window"), *both, "--param", "instance=2-4")
    T.eq(steps_of(win, "critical_path"), ["ProfilerStep#9 .. ProfilerStep#10"],
         "instance=2-4: one path named by its first and last instance (HTA's (2, 4))")
    clip, _ = report(exe, small, os.path.join(out, "clip"), *both, "--param", "instance=8-99")
    T.eq(steps_of(clip, "critical_path"), ["ProfilerStep#12 .. ProfilerStep#13"],
         "instance=8-99: up to the rank's last instance (HTA's slice)")

    # what a rank lacks: a note, no row
    d, r = report(exe, small, os.path.join(out, "past"), *both, "--param", "instance=11")
    T.check("critical_path: rank 0: no row: instance 11 asked, it has 11 of 'ProfilerStep'" in r.stderr,
            "instance=11: a note naming the instance and the count", r.stderr)
    T.eq(rows(d, "critical_path"), [], "instance=11: no row")
    d, r = report(exe, small, os.path.join(out, "none"), *both, "--param", "annotation=NoSuchAnnotation")
    T.check("no row: no host slice's name holds the annotation 'NoSuchAnnotation'" in r.stderr,
            "an annotation no slice holds: a note naming it", r.stderr)
    T.eq(rows(d, "critical_path_summary"), [], "an annotation no slice holds: no row")

    # data-load events: their edges bound by data_loading
    dl, _ = report(exe, small, os.path.join(out, "dl"), *both, "--param", "data_load_events=aten::mm")
    bounds = {r["bound_by"] for r in rows(dl, "critical_path_summary")}
    T.check("data_loading" in bounds and "data_loading" not in {r["bound_by"] for r in
                                                               rows(base, "critical_path_summary")},
            "data_load_events=aten::mm: a data_loading bound", repr(bounds))
    T.check(all(r["event"].find("aten::mm") >= 0 for r in rows(dl, "critical_path") if r["bound_by"] == "data_loading"),
            "only the named events' edges are data_loading")

    # bad values: exit 2, the parameter and the value named, nothing written
    for args, msg in [(["--param", "instance=x"], "critical_path: parameter instance: 'x' is not all, N or N-M"),
                      (["--param", "instance=3-1"], "critical_path: parameter instance: '3-1' is not all, N or N-M"),
                      (["--param", "instance=-1"], "critical_path: parameter instance: '-1' is not all, N or N-M"),
                      (["--param", "annotation=", "--param", "instance=0"],
                       "critical_path: parameter instance: '0' asks an instance of no annotation"),
                      (["--param", "data_load_events=a,,b"],
                       "critical_path: parameter data_load_events: 'a,,b' holds an empty name"),
                      (["--param", "data_load_events=f("],
                       "critical_path: parameter data_load_events: 'f(' is no regular expression")]:
        d, r = report(exe, small, os.path.join(out, "bad"), *both, *args, code=2)
        T.check(msg in r.stderr, "%s: the message names it" % " ".join(args), r.stderr)
        T.eq(sorted(os.listdir(d)), [], "%s: no file written" % " ".join(args))
    check_offsets(exe, samples, out)
    return T.finish()


def check_offsets(exe, samples, out):
    """fileOffset: the place of a Kineto event in its file; none for an
    Ascend timeline's layers."""
    import sqlite3
    path = os.path.join(samples, "kineto_small", "trace.json")
    with open(path, "rb") as f:
        text = f.read()
    db = os.path.join(tbtest.fresh_dir(os.path.join(out, "offsets")), "k.db")
    r = tbtest.run([exe, "export", "db", "-dir", path, "-o", db, "-q"])
    T.check(r.returncode == 0, "export db kineto_small: exit 0", r.stderr)
    con = sqlite3.connect(db)
    seen = []
    for table, name in (("TASK", "name"), ("CANN_API", "name"), ("PYTORCH_API", "name"), ("TB_EVENT", "name")):
        got = con.execute("SELECT t.fileOffset, s.value FROM %s t LEFT JOIN STRING_IDS s ON s.id = t.%s" %
                          (table, name)).fetchall()
        T.check(got and all(o is not None for o, _ in got), "kineto_small: every %s row has a fileOffset" % table)
        bad = [(o, n) for o, n in got if o is None or event_at(text, o).get("name") != n]
        T.eq(bad[:3], [], "kineto_small: each %s row's offset is its event's text" % table)
        seen += [o for o, _ in got]
    T.eq(len(seen), len(set(seen)), "kineto_small: the offsets are distinct")
    con.close()
    db = os.path.join(out, "offsets", "a.db")
    r = tbtest.run([exe, "export", "db", "-dir", os.path.join(samples, "ascend_small"), "-o", db, "-q"])
    T.check(r.returncode == 0, "export db ascend_small: exit 0", r.stderr)
    con = sqlite3.connect(db)
    for table in ("TASK", "CANN_API"):
        n, off = con.execute("SELECT count(*), count(fileOffset) FROM %s" % table).fetchone()
        T.check(n > 0 and off == 0, "ascend_small: %d %s rows, none with a fileOffset" % (n, table), repr((n, off)))
    con.close()
    unread_args(exe, os.path.join(out, "offsets", "k.db"), out)


def unread_args(exe, db, out):
    """The device's copies of the steps (TB_EVENT rows holding the
    annotation) with args that are no JSON (a DB given as input) are host
    events, as with empty args: the numbering reads them without failing."""
    import shutil
    import sqlite3
    notes = {}
    for tag, args in (("nojson", "not json"), ("empty", "{}")):
        copy = os.path.join(out, "offsets", tag + ".db")
        shutil.copyfile(db, copy)
        con = sqlite3.connect(copy)
        n = con.execute("UPDATE TB_EVENT SET args = ? WHERE name IN (SELECT id FROM STRING_IDS "
                        "WHERE instr(value, 'ProfilerStep') > 0)", (args,)).rowcount
        con.commit()
        con.close()
        T.check(n > 0, "%s: TB_EVENT rows holding the annotation" % tag)
        d, r = report(exe, copy, os.path.join(out, "args-" + tag), "--spec", "builtin:critical_path",
                      "--param", "instance=99")
        notes[tag] = [x for x in r.stderr.splitlines() if "instance 99 asked" in x]
    T.check(notes["nojson"] and notes["nojson"] == notes["empty"],
            "args that are no JSON: the instances counted as with empty args", repr(notes))
    # a DB written before TASK and CANN_API had the column: numbered, not refused
    old = os.path.join(out, "offsets", "old.db")
    shutil.copyfile(db, old)
    con = sqlite3.connect(old)
    con.execute("ALTER TABLE TASK DROP COLUMN fileOffset")
    con.execute("ALTER TABLE CANN_API DROP COLUMN fileOffset")
    con.commit()
    con.close()
    d, r = report(exe, db, os.path.join(out, "cols-new"), "--spec", "builtin:critical_path", "--param", "instance=4")
    d2, r2 = report(exe, old, os.path.join(out, "cols-old"), "--spec", "builtin:critical_path", "--param",
                    "instance=4")
    T.eq(rows(d2, "critical_path"), rows(d, "critical_path"),
         "a DB without TASK.fileOffset and CANN_API.fileOffset: instance=4 as with them (no task holds the name)")


def event_at(text, o):
    """The JSON object that starts at byte o of text ({} when none does)."""
    import json
    if text[o:o + 1] != b"{":
        return {}
    try:
        return json.JSONDecoder().raw_decode(text[o:o + 65536].decode("utf-8", "replace"))[0]
    except ValueError:
        return {}


if __name__ == "__main__":
    sys.exit(main())
