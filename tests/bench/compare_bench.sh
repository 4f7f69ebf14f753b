#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compare_bench.sh - what `tracebook compare` of two large runs costs
# (target: its peak RSS within the load's, the memory bound of a run).
#
# It writes two synthetic ascend traces of EVENTS events each with
# tools/gen/tracebook-gen (seeds 1 and 2: the same shape, other durations),
# loads each into a DB (`export db`, under /usr/bin/time -v: the load's peak
# RSS), then compares the two DBs with the built-in top_kernels,
# op_statistic and step_trace_time reports (the spec below) under
# /usr/bin/time -v, and prints the wall times, peak RSS, rows matched and
# the regressions, then one PASS/FAIL line: compare's peak RSS <= the
# larger load's. Everything goes to a temporary directory under $TMPDIR,
# removed at exit. Wall time suffers when other processes share the CPUs.
#
# It prints figures; it is not a unit test. Exit status is 0 unless a
# command fails.
#
# usage: tests/bench/compare_bench.sh [BUILD_DIR] [EVENTS]
#   defaults: BUILD_DIR build, EVENTS 1000000
# Needs /usr/bin/time from Debian's `time` package (apt-get install time).

set -u -o pipefail

build=${1:-build}
events=${2:-1000000}
exe=$(cd "$build" 2>/dev/null && pwd)/tracebook
gen=$(cd "$build" 2>/dev/null && pwd)/tools/gen/tracebook-gen
[ -x "$exe" ] || { echo "compare_bench.sh: error: no tracebook in '$build' (build it first)" >&2; exit 2; }
[ -x "$gen" ] || { echo "compare_bench.sh: error: no tools/gen/tracebook-gen in '$build'" >&2; exit 2; }
[[ $events =~ ^[0-9]+$ ]] || { echo "compare_bench.sh: error: EVENTS must be a number, got '$events'" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "compare_bench.sh: error: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/compare_bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/cache

field() { sed -n "s/.*$1: //p" "$2"; }

load_rss=0
for side in base new; do
    seed=1
    [ $side = new ] && seed=2
    "$gen" --kind ascend --events "$events" --seed $seed -o "$work/$side.json" ||
        { echo "compare_bench.sh: error: the generator failed" >&2; exit 1; }
    /usr/bin/time -v -o "$work/load_$side.txt" "$exe" export db -q -dir "$work/$side.json" -o "$work/$side.db" >/dev/null ||
        { echo "compare_bench.sh: error: loading the $side run failed" >&2; exit 1; }
    rss=$(field "Maximum resident set size (kbytes)" "$work/load_$side.txt")
    printf 'load %-4s  %s events  wall %s  peak RSS %d MB\n' $side "$events" \
        "$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' "$work/load_$side.txt")" $((rss / 1024))
    [ "$rss" -gt "$load_rss" ] && load_rss=$rss
done

cat >"$work/spec.yaml" <<'EOF'
tracebook: 1
reports:
  - use: top_kernels
  - use: op_statistic
  - use: step_trace_time
EOF

/usr/bin/time -v -o "$work/time.txt" "$exe" compare -base "$work/base.db" -new "$work/new.db" \
    --spec "$work/spec.yaml" -o "$work/out" >/dev/null 2>"$work/stderr.txt" ||
    { cat "$work/stderr.txt" >&2; echo "compare_bench.sh: error: compare failed" >&2; exit 1; }
rss=$(field "Maximum resident set size (kbytes)" "$work/time.txt")
printf 'compare    wall %s  peak RSS %d MB\n' "$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' "$work/time.txt")" \
    $((rss / 1024))
tail -n 1 "$work/stderr.txt"
if [ "$rss" -le "$load_rss" ]; then
    echo "PASS: compare's peak RSS $((rss / 1024)) MB <= the load's $((load_rss / 1024)) MB"
else
    echo "FAIL: compare's peak RSS $((rss / 1024)) MB > the load's $((load_rss / 1024)) MB"
fi
