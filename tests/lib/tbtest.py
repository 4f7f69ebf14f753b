# SPDX-License-Identifier: MIT
#
# tbtest.py - what the Python tests of the command share: running a program
# and capturing its result, a case's own folders, checks that collect
# problems, case registration with a runner that prints one line a case and
# a closing `N passed, N failed` line, and the skip convention (exit 77).
#
# A test script finds this module beside itself:
#
#   sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
#   import tbtest
#
# It is not a test (tests/check_registered.py knows it by name), and it
# depends on the Python standard library only.
#
# The pieces, smallest first:
#   run(argv, ...) -> Result        one process: rc, out, err (stdin is
#                                   /dev/null unless given; a timeout raises)
#   Program(path, ...)              a program and how every run of it is made
#                                   (argv prefix, env, cwd, timeout, the exit
#                                   code it must give); called with its words
#   Checks                          problems collected by check()/eq()/fail();
#                                   finish() prints the closing line
#   Sandbox(program, parent, name)  a run's folders: cwd (empty), tmp (its
#                                   TMPDIR), cache (its XDG_CACHE_HOME), out
#   Case(Sandbox, Checks)           one case: its name, folders and problems
#   Suite                           registers cases, runs the selected ones
#   Skip, skip(why)                 a case that cannot run; a script that
#                                   cannot run at all (exit 77)
#   HtaRefs(gen, shared, refs, out) HTA's reference figures (tests/hta) and
#                                   the inputs each set was taken on
#
# What a script leaves on disk: its runs cache under a folder of its own
# (XDG_CACHE_HOME, made under $TMPDIR at import, removed at exit), and the
# folders named on its command line that lie directly inside $TMPDIR (meson
# sets TMPDIR to the build's tests/ folder and gives each script its output
# folder there) are removed at exit when the script passed or skipped (its
# finish()/run()/skip() said so and nothing raised). A failing script keeps
# them for reading; TB_KEEP_TEST_OUTPUT=1 keeps them always.

import gzip
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
import atexit

SKIP_EXIT = 77  # meson's exit-code protocol: the test was skipped


# ---- what the script leaves behind ---------------------------------------------

_verdict = {"status": None}  # 0 passed, 77 skipped, 1 failed; None: not said


def _say(status):
    """Records the script's outcome; a failure is never undone by a later pass."""
    if status not in (0, SKIP_EXIT):
        _verdict["status"] = 1
    elif _verdict["status"] is None or (_verdict["status"] == SKIP_EXIT and status == 0):
        _verdict["status"] = status
    return status


def _output_folders():
    """The command-line arguments naming a folder directly inside $TMPDIR."""
    tmp = os.environ.get("TMPDIR")
    if not tmp:
        return []
    tmp = os.path.realpath(tmp)
    return [os.path.realpath(a) for a in sys.argv[1:]
            if os.path.dirname(os.path.realpath(a)) == tmp and os.path.realpath(a) != tmp]


def _own_cache():
    """A cache folder of this process, made under $TMPDIR (else the system's)."""
    path = tempfile.mkdtemp(prefix="cache-", dir=os.environ.get("TMPDIR") or None)
    os.environ["XDG_CACHE_HOME"] = path
    return path


_CACHE = _own_cache()


def _leave():
    shutil.rmtree(_CACHE, ignore_errors=True)
    if _verdict["status"] in (0, SKIP_EXIT) and not os.environ.get("TB_KEEP_TEST_OUTPUT"):
        for d in _output_folders():
            if os.path.isdir(d):
                shutil.rmtree(d, ignore_errors=True)


def _raised(kind, value, tb):
    _verdict["status"] = 1
    sys.__excepthook__(kind, value, tb)


atexit.register(_leave)
sys.excepthook = _raised


# ---- running a program ---------------------------------------------------------

class Result:
    """A finished run: rc (None when it timed out in a caller that keeps going),
    out and err (str, or bytes when run with text=False). returncode, stdout
    and stderr name the same, as subprocess.CompletedProcess does."""

    def __init__(self, rc, out, err, args=()):
        self.rc, self.out, self.err, self.args = rc, out, err, list(args)

    @property
    def returncode(self):
        return self.rc

    @property
    def stdout(self):
        return self.out

    @property
    def stderr(self):
        return self.err

    def __repr__(self):
        return "exit %s, stdout %r, stderr %r" % (self.rc, self.out[:400], self.err[:400])


def _decode(data, text, errors):
    """subprocess' text mode by default (UTF-8, strict, universal newlines);
    with errors given, decoded with it and the bytes' newlines kept."""
    if data is None:
        return "" if text else b""
    if not text:
        return data
    if errors:
        return data.decode("utf-8", errors)
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def _words(args):
    """The words of a command line: each argument a word, a list or tuple
    giving several (run(["a", "b"]) and run("a", "b") alike)."""
    words = []
    for a in args:
        words += [str(w) for w in a] if isinstance(a, (list, tuple)) else [str(a)]
    return words


def run(argv, *, cwd=None, env=None, stdin=None, timeout=None, code=None, text=True, errors=None,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE):
    """Runs argv and returns its Result. stdin: None (/dev/null), bytes or str
    (written to it), or a file. env: the whole environment (None: this one's).
    code: the exit code it must give, else AssertionError naming the command,
    the exit code and its stderr. stdout/stderr: where else to send them (a
    file descriptor; the Result has "" then). A timeout raises
    subprocess.TimeoutExpired."""
    argv = _words([argv])
    data = None
    if stdin is None:
        stdin = subprocess.DEVNULL
    elif isinstance(stdin, (bytes, str)):
        data, stdin = (stdin.encode() if isinstance(stdin, str) else stdin), None
    p = subprocess.run(argv, cwd=cwd, env=env, stdin=stdin, input=data, stdout=stdout, stderr=stderr,
                       timeout=timeout)
    res = Result(p.returncode, _decode(p.stdout, text, errors), _decode(p.stderr, text, errors), argv)
    if code is not None and res.rc != code:
        raise AssertionError("%s: exit %s (want %d)\n%s" % (" ".join(argv), res.rc, code, res.err))
    return res


class Program:
    """A program (the tracebook binary, tracebook-gen) and the defaults of every
    run of it. prefix: words before the program (a list kept by reference, so a
    launcher such as mpirun can be set and cleared later). env: variables set
    over os.environ as it is at each call. The other defaults are run()'s;
    each call may override any of them."""

    def __init__(self, path, *, prefix=None, env=None, **defaults):
        self.path = os.path.abspath(path)
        self.prefix = prefix if prefix is not None else []
        self.env = env or {}
        self.defaults = defaults

    def environ(self):
        return dict(os.environ, **self.env)

    def argv(self, *args):
        return [*self.prefix, self.path, *_words(args)]

    def __call__(self, *args, **kw):
        """Runs the program with args as its words; returns its Result."""
        opts = dict(self.defaults, **kw)
        opts.setdefault("env", self.environ())
        return run(self.argv(*args), **opts)

    def start(self, *args, **kw):
        """Starts the program with args and returns its Popen (stdin /dev/null,
        stdout and stderr piped unless given)."""
        kw.setdefault("env", self.environ())
        kw.setdefault("cwd", self.defaults.get("cwd"))
        kw.setdefault("stdin", subprocess.DEVNULL)
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(self.argv(*args), **kw)


# ---- checks --------------------------------------------------------------------

class Checks:
    """Problems found, one message each. report: print a failure as it is
    found; verbose: print a passing check too (`ok   what`)."""

    def __init__(self, report=True, verbose=False):
        self.problems = []
        self.passed = 0
        self.report, self.verbose = report, verbose

    def fail(self, msg):
        self.problems.append(str(msg))
        if self.report:
            print("FAIL " + _indent(str(msg)))
            sys.stdout.flush()

    def check(self, cond, what, detail=""):
        """Records what as a problem (with detail) unless cond; returns bool(cond)."""
        if cond:
            self.passed += 1
            if self.verbose:
                print("ok   %s" % (what,))
            return True
        self.fail("%s:\n%s" % (what, detail) if detail else what)
        return False

    def eq(self, got, want, what):
        """check(got == want) with both values in the message."""
        return self.check(got == want, what, "expected %r\ngot      %r" % (want, got))

    @property
    def failed(self):
        return len(self.problems)

    def finish(self):
        """Prints `N passed, N failed` (checks); returns the exit status."""
        print("%d passed, %d failed" % (self.passed, self.failed))
        return _say(1 if self.problems else 0)


def _indent(msg, by="      "):
    return msg.replace("\n", "\n" + by)


# ---- folders -------------------------------------------------------------------

def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key in %r" % (keys,))
    return dict(pairs)


def trace_events(path, strict=False):
    """The events of a Chrome-trace JSON file (.gz or plain; an object with
    traceEvents or a bare list). strict: a duplicate key is an error."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, object_pairs_hook=_unique_keys if strict else None)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def fresh_dir(path):
    """path emptied (made when absent); returns it."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def use_cache(path):
    """Every later run of this process' programs caches under path."""
    os.environ["XDG_CACHE_HOME"] = path
    return path


class Sandbox:
    """A fresh folder under parent (named after name) made when first used, with
    cwd (an empty working directory), tmp (its TMPDIR), cache (its
    XDG_CACHE_HOME) and out; runs of program go there with the C locale."""

    def __init__(self, program, parent, name):
        self.program, self.parent, self.name = program, parent, name
        self._root = None

    @property
    def root(self):
        if self._root is None:
            slug = re.sub(r"[^A-Za-z0-9]+", "_", self.name)[:40]
            os.makedirs(self.parent, exist_ok=True)
            self._root = tempfile.mkdtemp(prefix=slug + "-", dir=self.parent)
            for d in ("cwd", "tmp", "cache", "out"):
                os.makedirs(os.path.join(self._root, d))
        return self._root

    cwd = property(lambda self: os.path.join(self.root, "cwd"))
    tmp = property(lambda self: os.path.join(self.root, "tmp"))
    cache = property(lambda self: os.path.join(self.root, "cache"))
    out = property(lambda self: os.path.join(self.root, "out"))

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def mkdir(self, *parts):
        """A folder under the root (made with its parents); returns its path."""
        path = self.path(*parts)
        os.makedirs(path, exist_ok=True)
        return path

    def env(self, **extra):
        """The environment of the runs: C locale, this sandbox's TMPDIR and cache."""
        return dict(os.environ, LC_ALL="C", LANG="C", TMPDIR=self.tmp, XDG_CACHE_HOME=self.cache, **extra)

    def run(self, *args, **kw):
        """Runs the program with args in cwd with env(); returns its Result."""
        kw.setdefault("cwd", self.cwd)
        kw.setdefault("env", self.env())
        return self.program(*args, **kw)

    def start(self, *args, **kw):
        kw.setdefault("cwd", self.cwd)
        kw.setdefault("env", self.env())
        return self.program.start(*args, **kw)


# ---- cases ---------------------------------------------------------------------

class Skip(Exception):
    """Raised by a case that cannot run here; the message says why."""


def skip(why):
    """The whole script cannot run here: says why (the last line, which
    tools/testsummary.py shows) and exits 77."""
    print("skip: " + why)
    sys.stdout.flush()
    sys.exit(_say(SKIP_EXIT))


class Case(Sandbox, Checks):
    """One case: its name, its folders (Sandbox) and the problems it found."""

    def __init__(self, program, parent, name):
        Sandbox.__init__(self, program, parent, name)
        Checks.__init__(self, report=False)


def _takes_case(fn):
    """A case function gets its Case when it has a parameter without a default."""
    return any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               for p in inspect.signature(fn).parameters.values())


class Suite:
    """Cases and the runner. work: the folder the cases' folders go in (made
    when absent); None: a new one under $TMPDIR. clean: remove work when every
    case passed (default: when it was made here). case_class: what each case
    gets (a Case or a subclass)."""

    def __init__(self, program=None, work=None, clean=None, case_class=Case, name=None):
        self.program = program
        self.name = name or os.path.splitext(os.path.basename(sys.argv[0]))[0]
        self.given = work is not None
        self._work = os.path.abspath(work) if work else None
        self.clean = (not self.given) if clean is None else clean
        self.case_class = case_class
        self.cases = []  # (name, fn, always)

    @property
    def work(self):
        if self._work is None:
            self._work = os.path.realpath(tempfile.mkdtemp(prefix=self.name + "-"))
        os.makedirs(self._work, exist_ok=True)
        return self._work

    def add(self, name, fn, always=False):
        """Registers fn as the case name; always: runs whatever is selected."""
        self.cases.append((name, fn, always))
        return fn

    def case(self, name=None, always=False):
        """Decorator: registers the function as a case (name: its own without case_)."""
        def deco(fn):
            return self.add(name or re.sub(r"^case_", "", fn.__name__), fn, always)
        return deco

    def collect(self, namespace, prefix="case_"):
        """Registers every function of namespace (a module's globals()) whose name
        starts with prefix, in the order they are defined, named without it."""
        for name, fn in list(namespace.items()):
            if name.startswith(prefix) and callable(fn):
                self.add(name[len(prefix):], fn)

    def run(self, only=()):
        """Runs the cases whose name contains one of only (all when empty). A
        case fails on a problem it recorded or an exception (its traceback);
        raising Skip skips it. Prints `ok`/`FAIL`/`skip` lines and the closing
        count; returns the exit status. A passing case's folder is removed."""
        passed = failed = skipped = 0
        for i, (name, fn, always) in enumerate(self.cases, 1):
            if only and not always and not any(s in name for s in only):
                continue
            t = self.case_class(self.program, self.work, name)
            why = None
            try:
                if _takes_case(fn):
                    fn(t)
                else:
                    fn()
            except Skip as e:
                why = str(e)
            except Exception:  # a crash of the test itself is a failure of its case
                t.problems.append("exception:\n" + traceback.format_exc().rstrip("\n"))
            if t.problems:
                failed += 1
                print("FAIL %2d %s" % (i, name))
                for p in t.problems:
                    print("    - " + _indent(p))
            else:
                if why is None:
                    passed += 1
                    print("ok   %2d %s" % (i, name))
                else:
                    skipped += 1
                    print("skip %2d %s: %s" % (i, name, why))
                if t._root:
                    shutil.rmtree(t._root, ignore_errors=True)
            sys.stdout.flush()
        if failed:
            print("kept the failing cases' files under %s" % self.work)
        elif self.clean and self._work:
            shutil.rmtree(self._work, ignore_errors=True)
        print("%d passed, %d failed" % (passed, failed) + (", %d skipped" % skipped if skipped else ""))
        return _say(1 if failed else 0)

    def main(self, only=()):
        sys.exit(self.run(only))


# ---- HTA's reference figures --------------------------------------------------

class HtaRefs:
    """HTA's reference figures for a conformance script and the inputs they
    were taken on: a JSON file of tests/hta (refs.json, critical_path_refs.json;
    make_refs.py and make_cp_refs.py say how they were made) whose sections
    ("sets", "runs") name each entry's input.

    HtaRefs(gen, shared, refs_path, out, own=None, make=None):
      gen       tracebook-gen (the generated two-rank Kineto trace);
      shared    the shared data folder. Without its kineto folder this prints
                `shared data absent: SHARED` and exits 77, unless shared is "-"
                and own is given: then only the inputs named in own are used;
      refs_path the JSON file, read into .doc;
      out       the script's folder, emptied;
      own       the inputs the script makes without the shared data;
      make      make(name): the -dir arguments of the script's own inputs
                (None for a name it does not make).

    inputs(name) gives the -dir arguments of an input: make's, else one of the
    shared Kineto traces (ns_resolution_trace, amd_trace, tracelens_h100,
    tracelens_mi300: they must be there), HTA's own test traces (hta_NAME:
    kineto/hta_critical_path/NAME of the shared data, else
    HTA_TEST_DATA/critical_path/NAME when the environment names a checkout's
    tests/data folder of HTA; None when in neither) or gen_kineto_2ranks
    (tracebook-gen --kind kineto --events 4000 --seed 7, ranks 0 and 1, under
    out/gen). each(section, input_key=None, prefix="") yields (name, entry,
    dirs, folder) for every entry of the section, its input being
    entry[input_key] (else its name) and folder out/PREFIXNAME (made); it
    passes over an entry whose input is not own (shared "-") and prints
    `skip NAME: not in the shared data nor HTA_TEST_DATA` for one whose
    input is absent."""

    KINETO = {"ns_resolution_trace": ("ns_resolution_trace",), "amd_trace": ("amd_trace",),
              "tracelens_h100": ("tracelens", "h100"), "tracelens_mi300": ("tracelens", "mi300")}

    def __init__(self, gen, shared, refs_path, out, own=None, make=None):
        self.gen, self.shared, self.out, self.make = gen, shared, out, make
        self.own = set(own) if own is not None and shared == "-" else None
        if self.own is None and not os.path.isdir(os.path.join(shared, "kineto")):
            print("shared data absent: %s" % shared)
            sys.exit(_say(SKIP_EXIT))
        with open(refs_path) as f:
            self.doc = json.load(f)
        fresh_dir(out)

    def inputs(self, name):
        """The -dir arguments of the input name, or None when it is absent."""
        mine = self.make(name) if self.make else None
        if mine is not None:
            return mine
        kineto = os.path.join(self.shared, "kineto")
        if name in self.KINETO:
            return [os.path.join(kineto, *self.KINETO[name])]
        if name.startswith("hta_"):
            d = os.path.join(kineto, "hta_critical_path", name[len("hta_"):])
            hta_data = os.environ.get("HTA_TEST_DATA")
            if not os.path.isdir(d) and hta_data:
                d = os.path.join(hta_data, "critical_path", name[len("hta_"):])
            return [d] if os.path.isdir(d) else None
        if name != "gen_kineto_2ranks":
            raise ValueError("no input %r" % name)
        gen = fresh_dir(os.path.join(self.out, "gen"))
        files = []
        for r in (0, 1):
            f = os.path.join(gen, "rank%d.pt.trace.json" % r)
            run([self.gen, "--kind", "kineto", "--events", "4000", "--seed", "7", "--ranks", "2", "--rank", str(r),
                 "-o", f], code=0)
            files.append(f)
        return files

    def each(self, section, input_key=None, prefix=""):
        """(name, entry, dirs, folder) for each entry of the section (see the class)."""
        for name, entry in self.doc[section].items():
            source = entry[input_key] if input_key else name
            if self.own is not None and source not in self.own:
                continue
            dirs = self.inputs(source)
            if dirs is None:
                print("skip %s: not in the shared data nor HTA_TEST_DATA" % name)
                continue
            folder = os.path.join(self.out, prefix + name)
            os.makedirs(folder, exist_ok=True)
            yield name, entry, dirs, folder


# ---- the script's arguments and interpreter -------------------------------------

def usage(words):
    """The usage line on stderr (words: what follows the script's name); exits 2."""
    print("usage: %s %s" % (os.path.basename(sys.argv[0]), words), file=sys.stderr)
    sys.exit(2)


def args(words, count, at_most=None):
    """sys.argv[1:], at least count (and at most at_most) of them, or usage(words)."""
    got = sys.argv[1:]
    if len(got) < count or (at_most is not None and len(got) > at_most):
        usage(words)
    return got


def need_dirs(*paths):
    """Skips the script (77) unless every one of paths is a folder."""
    for p in paths:
        if not os.path.isdir(p):
            skip("%s is absent" % p)


def rerun_with_system_python(probe):
    """When this Python lacks what probe (Python code that fails without it)
    needs, runs the script again with Debian's /usr/bin/python3 if that one
    passes the probe (meson may run another python3); returns when it cannot."""
    other = "/usr/bin/python3"
    if os.path.realpath(sys.executable) == os.path.realpath(other) or not os.path.exists(other):
        return
    if subprocess.run([other, "-c", probe], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
        shutil.rmtree(_CACHE, ignore_errors=True)  # exec runs no exit handler; the new process makes its own
        os.execv(other, [other] + sys.argv)
