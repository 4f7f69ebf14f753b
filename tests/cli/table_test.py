#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# table_test.py - the command table, and what is made from it, agree.
#
# tools/cligen writes the man page and the bash completion from the same
# table (engine/cli/commands.c, linked in) that drives dispatch, the option
# parser and `help CMD`. This test fails when the checked-in
# docs/man/tracebook.1 or completion/tracebook.bash differ from what the
# binary writes (regenerate them as the message says), when an option that
# `help CMD` shows is missing from the man page or the completion, when a man
# page makes groff warn, when the hand-written tracebook-spec(5) misses a key
# of the spec's JSON Schema or its example does not run, and when the
# completion function, run in bash, does not complete what it should.
#
# usage: table_test.py TRACEBOOK CLIGEN SOURCE_ROOT WORK_DIR
# Prints one ok/FAIL line per check and `N passed, N failed`; exits 1 on failure.

import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tbtest  # noqa: E402

TB = CLIGEN = SRC = WORK = None
COMMANDS = ["export", "merge", "report", "compare", "history", "query", "print", "reports", "info", "help"]
# every command by its whole name
FULL_NAMES = ["export db", "export summary", "export timeline", "report", "compare", "history add", "history report", "history list", "history remove", "query", "print summary", "print trace", "reports", "info",
              "help"]
T = tbtest.Checks(verbose=True)
run = None  # the command, run in WORK with its own TMPDIR and cache (main)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def help_options(cmd):
    """The option spellings `help CMD` shows, e.g. ['-dir', '--dir', '-o', '--output', ...]."""
    out = run(["help"] + (cmd if isinstance(cmd, list) else [cmd])).stdout
    opts = []
    for line in out.split("\noptions:\n", 1)[1].splitlines():
        m = re.match(r"  (-\S+?)(?:, (--\S+))?(?: |$)", line)
        if m:
            opts += [g.rstrip(",") for g in m.groups() if g]
    return opts


def complete(words):
    """What _tracebook completes for the command line `words` (the last one being typed)."""
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); '
              '_tracebook; printf "%s\\n" "${COMPREPLY[@]}"')
    p = subprocess.run(["bash", "-c", script, "bash", os.path.join(SRC, "completion", "tracebook.bash"), TB] + words[1:],
                       capture_output=True, text=True, timeout=60, cwd=WORK)
    return sorted(x for x in p.stdout.splitlines() if x)


def main():
    global TB, CLIGEN, SRC, WORK, run
    TB, CLIGEN, SRC, WORK = (os.path.abspath(a) for a in tbtest.args("TRACEBOOK CLIGEN SOURCE_ROOT WORK_DIR", 4, 4))
    tbtest.fresh_dir(WORK)
    run = tbtest.Program(TB, env={"LC_ALL": "C", "TMPDIR": WORK, "XDG_CACHE_HOME": os.path.join(WORK, "xdg")},
                         timeout=120, cwd=WORK)

    # 1. the checked-in files are what the table gives
    for what, rel in (("man", "docs/man/tracebook.1"), ("completion", "completion/tracebook.bash")):
        p = subprocess.run([CLIGEN, what], capture_output=True, text=True, timeout=60)
        want = read(os.path.join(SRC, rel))
        T.check(p.returncode == 0 and p.stdout == want, "%s is current" % rel,
                "it differs from `tracebook-cligen %s`: run `ninja -C build cli-docs`" % what)
    p = subprocess.run([CLIGEN, "html"], capture_output=True, text=True, timeout=60)
    T.check(p.returncode == 2 and "usage: tracebook-cligen" in p.stderr, "cligen refuses an unknown page", p.stderr)
    p = run(["--help-man"])
    T.check(p.returncode == 2 and "unknown option '--help-man'" in p.stderr, "the command has no hidden page options",
            p.stderr)

    # 2. every option of every command is in the man page and the completion
    man = read(os.path.join(SRC, "docs/man/tracebook.1")).replace("\\-", "-")
    comp = read(os.path.join(SRC, "completion/tracebook.bash"))
    for name in FULL_NAMES:
        cmd = name
        opts = help_options(name.split())
        T.check(len(opts) >= 2, "help %s lists options" % cmd, repr(opts))
        section = man.split('.SS "%s"' % name, 1)[-1].split(".SS ", 1)[0]
        missing = [o for o in opts if ("\\fB%s\\fR" % o) not in section]
        T.check(not missing, "man page: every option of %s" % cmd, "missing: %r" % missing)
        got = complete(["tracebook"] + name.split() + ["-"])
        missing = [o for o in opts if o.startswith("--") and o not in got]
        T.check(not missing, "completion: every long option of %s" % cmd, "missing: %r in %r" % (missing, got))
        T.check("\n    \"%s\")\n" % name in comp, "completion has a case for %s" % name)

    # 3. groff renders both pages without a warning
    if shutil.which("groff"):
        for page in ("tracebook.1", "tracebook-spec.5"):
            p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", os.path.join(SRC, "docs/man", page)],
                               capture_output=True, text=True, timeout=60)
            T.check(p.returncode == 0 and p.stderr == "", "groff -ww: %s" % page, p.stderr)

    # 4. tracebook-spec(5) describes every key of the JSON Schema, and its example runs
    spec5 = read(os.path.join(SRC, "docs/man/tracebook-spec.5")).replace("\\-", "-")
    schema = json.loads(read(os.path.join(SRC, "schemas/report-spec.schema.json")))
    keys = set()
    for d in ("tracebookSpec", "plainReport", "usedReport", "column", "xlsx"):
        keys |= set(schema["$defs"][d].get("properties", {}))
    missing = sorted(k for k in keys if (".B %s\n" % k) not in spec5 and ("\n.B %s\n" % k) not in spec5
                     and not re.search(r"\b%s\b" % re.escape(k), spec5))
    T.check(not missing, "tracebook-spec.5 names every schema key", "missing: %r" % missing)
    for t in ("dur_ns", "ts_ns", "ratio_%", "mem_B"):
        T.check(".B :%s\n" % t in spec5, "tracebook-spec.5 describes :%s" % t)
    example = spec5.split(".SH EXAMPLE\n.nf\n", 1)[1].split("\n.fi\n", 1)[0] + "\n"
    spec = os.path.join(WORK, "example.yaml")
    with open(spec, "w", encoding="utf-8") as f:
        f.write(example)
    p = run(["report", "-q", "-dir", os.path.join(SRC, "samples", "ascend_small"), "--spec", spec,
             "-o", os.path.join(WORK, "out")])
    T.check(p.returncode == 0 and sorted(os.listdir(os.path.join(WORK, "out"))) ==
            ["frequent_kernels.csv", "top_kernels.csv", "tracebook_run.json"],
            "tracebook-spec.5's example runs", "exit %s: %s" % (p.returncode, p.stderr))

    # 5. the completion completes
    cases = [
        (["tracebook", "rep"], ["report", "reports"]),
        (["tracebook", ""], sorted(COMMANDS + ["-h", "--help", "-V", "--version"])),
        (["tracebook", "export", ""], ["db", "summary", "timeline"]),
        (["tracebook", "print", ""], ["summary", "trace"]),
        (["tracebook", "print", "trace", "--ti"], ["--timeunit"]),
        (["tracebook", "print", "summary", "--per"], ["--per-device"]),
        (["tracebook", "export", "db", "--st"], ["--strict"]),
        (["tracebook", "query", "--format", ""], ["console", "csv", "json"]),
        (["tracebook", "report", "--timeunit", "m"], ["ms"]),
        (["tracebook", "report", "-timeunit", "m"], ["ms"]),
        (["tracebook", "help", "e"], ["export"]),
        (["tracebook", "reports", "top_"], ["top_kernels"]),
        (["tracebook", "report", "--spec", "builtin", ":", "top_k"], ["top_kernels"]),
        (["tracebook", "query", "--format", "="], ["console", "csv", "json"]),
        (["tracebook", "query", "--format", "=", "c"], ["console", "csv"]),
        (["tracebook", "info", "--rep"], []),
        (["tracebook", "info", "--reb"], ["--rebuild"]),
    ]
    for words, want in cases:
        got = complete(words)
        T.check(got == want, "complete %r" % " ".join(words[1:]), "expected %r\ngot      %r" % (want, got))
    os.makedirs(os.path.join(WORK, "dir1"))
    got = complete(["tracebook", "report", "-o", "di"])
    T.check(got == ["dir1"], "complete -o DIR offers directories", repr(got))

    status = T.finish()
    if not status:
        shutil.rmtree(WORK, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
