#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# check_layout.py - the engine's stages depend on each other only as
# docs/architecture.md says.
#
# Data flows ingest -> db -> metrics -> spec -> query -> scale -> session ->
# report / export / nightly; output writes rows for query and the
# applications; the CLI composes the stages through the public headers.
# Each engine folder is a stage, and each public header of include/tracebook/
# belongs to one:
#
#   util       error.h, progress.h, version.h, columns.h  may use: nothing else
#   db         db.h        may use: util
#   ingest     load.h      may use: db, util
#   metrics    (none)      may use: db, util
#   output     output.h    may use: util
#   spec       spec.h      may use: metrics, db, util
#   query      query.h     may use: spec, metrics, db, output, util
#   scale      (none)      may use: query and what it may
#   session    session.h   may use: ingest, scale and what they may
#   report     report.h    may use: session and what it may
#   export     export.h    may use: report, session and what they may
#   nightly    nightly.h   may use: report, session and what they may
#   cli        tracebook.h may use: the public headers only (and its own
#                          headers, by bare name: the command is built
#                          without the engine's private folder)
#   sqlite-ext (none)      may use: query, spec, metrics, db, output, util
#                          (the loadable SQLite extension)
#
# Three things are checked:
#   1. each #include "..." names a header of its own stage or of a stage it
#      may use (a private header by its folder, a public one by its stage);
#      the umbrella tracebook.h is for the CLI and users of the library;
#   2. each call of a function that another engine file defines (a
#      non-static definition) goes to its own stage or to one it may use;
#   3. no circle between files: a file that calls a function of another
#      file is never called back by it, directly or through others (the
#      files of a folder depend on each other in one direction, too).
# Prints every breach as FILE:LINE: what; exits 1 when there is one.
import os
import re
import sys

ALLOWED = {
    "util": set(),
    "db": {"util"},
    "ingest": {"db", "util"},
    "metrics": {"db", "util"},
    "output": {"util"},
    "spec": {"metrics", "db", "util"},
    "query": {"spec", "metrics", "db", "output", "util"},
    "scale": {"query", "spec", "metrics", "db", "output", "util"},
    "session": {"ingest", "scale", "query", "spec", "metrics", "db", "output", "util"},
    "report": {"session", "ingest", "scale", "query", "spec", "metrics", "db", "output", "util"},
    "export": {"report", "session", "ingest", "scale", "query", "spec", "metrics", "db", "output", "util"},
    "nightly": {"report", "session", "ingest", "scale", "query", "spec", "metrics", "db", "output", "util"},
    "cli": set(),  # public headers only, below
    "sqlite-ext": {"query", "spec", "metrics", "db", "output", "util"},
}
PUBLIC = {"error.h": "util", "progress.h": "util", "columns.h": "util", "version.h": "util", "db.h": "db", "load.h": "ingest", "output.h": "output",
          "spec.h": "spec", "query.h": "query", "session.h": "session", "report.h": "report",
          "export.h": "export", "nightly.h": "nightly"}


def strip(text):
    """Text without comments and string/char literals, lines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def check_circles(files, texts, defre, callre, root):
    """Prints every circle of calls between .c files; returns their count."""
    owner = {}
    code = {}
    for _, path in files:
        if path.endswith(".c"):
            code[path] = strip(texts[path])
            for m in defre.finditer(code[path]):
                owner.setdefault(m.group(1), path)
    calls = {p: set() for p in code}
    for p, c in code.items():
        for m in callre.finditer(c):
            q = owner.get(m.group(1))
            if q and q != p:
                calls[p].add(q)
    # strongly connected components (Tarjan), iteratively
    index, low, on, stack, circles = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(calls):
        if start in index:
            continue
        work = [(start, iter(sorted(calls[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(calls[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    circles.append(sorted(comp))
    for comp in circles:
        print("a circle of calls between files: %s" % ", ".join(os.path.relpath(p, root) for p in comp))
    return len(circles)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    engine = os.path.join(root, "engine")
    files = []
    for stage in sorted(os.listdir(engine)):
        d = os.path.join(engine, stage)
        if not os.path.isdir(d):
            continue
        if stage not in ALLOWED:
            print("engine/%s: a folder that is no stage: add it to tests/layout/check_layout.py and docs" % stage)
            return 1
        for dirpath, _, names in os.walk(d):
            for f in sorted(names):
                if f.endswith((".c", ".h")):
                    files.append((stage, os.path.join(dirpath, f)))
    texts = {}
    defined = {}  # function name -> stage
    defre = re.compile(r"^(?!static\b)(?:[A-Za-z_][\w \t\*]*?[\s\*])([a-z_][a-z0-9_]*)\s*\([^;{]*\)\s*\{", re.M)
    for stage, path in files:
        with open(path, encoding="utf-8") as fh:
            texts[path] = fh.read()
        if path.endswith(".c"):
            for m in defre.finditer(strip(texts[path])):
                defined.setdefault(m.group(1), stage)
    bad = 0
    increl = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    callre = re.compile(r"\b([a-z_][a-z0-9_]*)\s*\(")
    for stage, path in files:
        rel = os.path.relpath(path, root)
        text = texts[path]
        may = ALLOWED[stage] | {stage}
        for m in increl.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            parts = inc.split("/")
            if parts[0] == "tracebook":
                hstage = PUBLIC.get(parts[-1])
                if parts[-1] == "tracebook.h":
                    if stage != "cli":
                        print('%s:%d: includes the umbrella "%s": include the stage headers it needs' % (rel, line, inc))
                        bad += 1
                    continue
                if hstage is None:
                    print('%s:%d: "%s" is not a public header of a stage' % (rel, line, inc))
                    bad += 1
                elif hstage not in may and stage != "cli":
                    print('%s:%d: %s includes "%s" of the %s stage' % (rel, line, stage, inc, hstage))
                    bad += 1
                continue
            if stage == "cli":
                # the command sees include/ only: its own headers sit beside it
                if "/" in inc or not os.path.exists(os.path.join(engine, "cli", inc)):
                    print('%s:%d: the CLI includes the private header "%s"' % (rel, line, inc))
                    bad += 1
                continue
            if len(parts) != 2 or parts[0] not in ALLOWED:
                if not (len(parts) == 1 and parts[0].endswith("embedded_sql.h")):
                    print('%s:%d: include "%s" by its stage folder: "STAGE/name.h"' % (rel, line, inc))
                    bad += 1
                continue
            if parts[0] not in may and parts[0] != "cli":
                print('%s:%d: %s includes "%s" of the %s stage' % (rel, line, stage, inc, parts[0]))
                bad += 1
        code = strip(text)
        seen = set()
        for m in callre.finditer(code):
            name = m.group(1)
            owner = defined.get(name)
            if owner is None or owner in may or (stage == "cli" and name.startswith("tb_")):
                continue
            if (name, owner) in seen:
                continue
            seen.add((name, owner))
            line = code.count("\n", 0, m.start()) + 1
            print("%s:%d: %s calls %s() of the %s stage" % (rel, line, stage, name, owner))
            bad += 1
    bad += check_circles(files, texts, defre, callre, root)
    if bad:
        print("%d breach(es) of the stage order (docs/architecture.md, 'Who may include whom')" % bad)
        return 1
    print("layout: %d files, %d functions, every include and call in stage order" % (len(files), len(defined)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
