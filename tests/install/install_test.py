#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# install_test.py - `meson install` gives a usable library and package.
#
#   install_test.py MESON BUILD_DIR CC SANITIZE VERSION SAMPLES OUT_DIR
#
# Installs the build into OUT_DIR/destdir (meson install --destdir, no
# rebuild), checks the installed files (command, shared library with its
# soname links, static library, public headers with the generated
# version.h, tracebook.pc, the SQLite extension, LICENSE), then builds
# tests/install/use_library.c the way a user would, with
# `pkg-config --cflags --libs tracebook` (PKG_CONFIG_PATH and
# PKG_CONFIG_SYSROOT_DIR pointed into the destdir), once against the shared
# library and once against the static one. Each program loads
# SAMPLES/ascend_small and prints the built-in report step_trace_time; its
# rows must equal the installed command's CSV of the same report.
# SANITIZE is meson's b_sanitize ("none" or e.g. "address,undefined"): a
# sanitized library needs the same flags on the program.
import csv
import glob
import io
import os
import shlex
import shutil
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def run(cmd, env=None, **kw):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if p.returncode != 0:
        print("command failed (%d): %s\n%s%s" % (p.returncode, " ".join(map(shlex.quote, cmd)), p.stdout, p.stderr))
        sys.exit(1)
    return p.stdout


def one(pattern):
    found = glob.glob(pattern, recursive=True)
    check(len(found) == 1, "exactly one %s (found %s)" % (pattern, found))
    return found[0] if found else None


def main():
    meson, build, cc, sanitize, version, samples, out = sys.argv[1:8]
    cc = shlex.split(cc)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    dest = os.path.join(out, "destdir")
    run([meson, "install", "-C", build, "--destdir", dest, "--no-rebuild", "--quiet"])

    # what is installed
    exe = one(dest + "/**/bin/tracebook")
    pc = one(dest + "/**/pkgconfig/tracebook.pc")
    libdir = os.path.dirname(os.path.dirname(pc))
    major_minor = ".".join(version.split(".")[:2]) if version.startswith("0.") else version.split(".")[0]
    for name in ("libtracebook.so", "libtracebook.so." + major_minor, "libtracebook.so." + version,
                 "libtracebook.a"):
        check(os.path.exists(os.path.join(libdir, name)), "%s in %s" % (name, libdir))
    check(os.path.islink(os.path.join(libdir, "libtracebook.so")), "libtracebook.so is a link")
    soname = run(["objdump", "-p", os.path.join(libdir, "libtracebook.so." + version)]) if shutil.which("objdump") else ""
    if soname:
        check("SONAME               libtracebook.so." + major_minor in soname, "soname libtracebook.so." + major_minor)
    ext = os.path.join(libdir, "tracebook", "tracebook.so")
    if check(os.path.exists(ext), "the SQLite extension in <libdir>/tracebook/") and sanitize in ("", "none") \
            and shutil.which("sqlite3"):
        # (a sanitized module needs its runtime preloaded: tests/cli/extension_test.py covers that build)
        loaded = run(["sqlite3", ":memory:", ".load " + ext, "SELECT tracebook_version()"]).strip()
        check(loaded == version, "the installed extension says %r" % loaded)
    incdir = one(dest + "/**/include/tracebook")
    for h in ("tracebook.h", "error.h", "load.h", "db.h", "report.h", "output.h", "version.h"):
        check(os.path.exists(os.path.join(incdir, h)), "include/tracebook/" + h)
    with open(os.path.join(incdir, "version.h")) as f:
        check('#define TB_VERSION "%s"' % version in f.read(), "version.h says " + version)
    lic = one(dest + "/**/share/doc/tracebook/LICENSE")
    if lic:
        with open(lic) as f:
            check("Copyright (c) 2026 the tracebook authors" in f.read(), "LICENSE is tracebook's")

    got = run([exe, "--version"]).strip()
    check(got == "tracebook " + version, "the installed command says %r" % got)

    # pkg-config as a user's build runs it
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"), PKG_CONFIG_SYSROOT_DIR=dest)
    check(run(["pkg-config", "--modversion", "tracebook"], env=env).strip() == version, "pkg-config --modversion")
    cflags = shlex.split(run(["pkg-config", "--cflags", "tracebook"], env=env))
    libs = shlex.split(run(["pkg-config", "--libs", "tracebook"], env=env))
    static_libs = shlex.split(run(["pkg-config", "--static", "--libs", "tracebook"], env=env))
    check(any(f.startswith("-I" + dest) for f in cflags), "cflags point into the destdir: %s" % cflags)
    check("-ltracebook" in libs, "-ltracebook in %s" % libs)
    check("-lsqlite3" in static_libs and "-ljansson" in static_libs, "--static adds the private deps: %s" % static_libs)

    san = ["-fsanitize=" + sanitize] if sanitize not in ("", "none") else []
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "use_library.c")
    dyn = os.path.join(out, "use_library_shared")
    run(cc + san + ["-std=c11", "-Wall", "-Werror", src, "-o", dyn] + cflags + libs)
    sta = os.path.join(out, "use_library_static")
    # -ltracebook would pick the shared library: ask the linker for the static one
    static_link = []
    for f in static_libs:
        static_link += ["-Wl,-Bstatic", f, "-Wl,-Bdynamic"] if f == "-ltracebook" else [f]
    run(cc + san + ["-std=c11", "-Wall", "-Werror", src, "-o", sta] + cflags + static_link)
    needed = run(["readelf", "-d", sta]) if shutil.which("readelf") else ""
    check("libtracebook" not in needed, "the static program needs no libtracebook.so")
    needed = run(["readelf", "-d", dyn]) if shutil.which("readelf") else "libtracebook.so." + major_minor
    check("libtracebook.so." + major_minor in needed, "the shared program needs libtracebook.so." + major_minor)

    # what the command writes for the same report
    cli_out = os.path.join(out, "cli")
    run([exe, "report", "-dir", os.path.join(samples, "ascend_small"), "--spec", "builtin:step_trace_time",
         "--report", "step_trace_time", "--format", "csv", "--timeunit", "ns", "-q", "-o", cli_out])
    with open(os.path.join(cli_out, "step_trace_time.csv"), newline="") as f:
        expected = list(csv.reader(f))
    check(len(expected) > 2, "the command wrote rows")

    for prog, extra in ((dyn, {"LD_LIBRARY_PATH": libdir}), (sta, {})):
        wd = os.path.join(out, os.path.basename(prog) + ".out")
        os.makedirs(wd)
        text = run([prog, os.path.join(samples, "ascend_small"), wd], env=dict(os.environ, **extra))
        first, _, rest = text.partition("\n")
        check(first == "version %s %s" % (version, version), "%s: %r" % (os.path.basename(prog), first))
        got = list(csv.reader(io.StringIO(rest)))
        check(got == expected, "%s prints the command's rows:\n%s\n---\n%s" % (os.path.basename(prog), got, expected))

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("install: files, pkg-config, shared and static programs agree with the command")
    if not os.environ.get("TB_KEEP_TEST_OUTPUT"):
        shutil.rmtree(out, ignore_errors=True)  # a failing run keeps its files for reading
    return 0


if __name__ == "__main__":
    sys.exit(main())
