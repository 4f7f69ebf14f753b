#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# history_bench.sh - what a history of many large nights costs (target:
# history add's and history report's peak RSS within the load's, the
# memory bound of a run).
#
# For each of NIGHTS nights it writes a synthetic ascend trace of EVENTS
# events with tools/gen/tracebook-gen (seed = the night: the same shape,
# other durations), loads it (`export db`, under /usr/bin/time -v: the
# load's peak RSS), appends it to one history with the built-in
# top_kernels, op_statistic and step_trace_time reports (the spec below),
# and removes the night's trace and DB. Then `history report` over all the
# nights. It prints the load's and the appends' median wall time and
# largest peak RSS, the history's size, the report's wall time and peak
# RSS and the verdicts, then one PASS/FAIL line: every append's and the
# report's peak RSS <= the largest load's. Everything goes to a temporary
# directory under $TMPDIR, removed at exit.
#
# It prints figures; it is not a unit test. Exit status is 0 unless a
# command fails.
#
# usage: tests/bench/history_bench.sh [BUILD_DIR] [NIGHTS] [EVENTS]
#   defaults: BUILD_DIR build, NIGHTS 30, EVENTS 1000000
# Needs /usr/bin/time from Debian's `time` package (apt-get install time).

set -u -o pipefail

build=${1:-build}
nights=${2:-30}
events=${3:-1000000}
exe=$(cd "$build" 2>/dev/null && pwd)/tracebook
gen=$(cd "$build" 2>/dev/null && pwd)/tools/gen/tracebook-gen
[ -x "$exe" ] || { echo "history_bench.sh: error: no tracebook in '$build' (build it first)" >&2; exit 2; }
[ -x "$gen" ] || { echo "history_bench.sh: error: no tools/gen/tracebook-gen in '$build'" >&2; exit 2; }
[[ $nights =~ ^[0-9]+$ && $nights -ge 1 ]] || { echo "history_bench.sh: error: NIGHTS must be a number >= 1" >&2; exit 2; }
[[ $events =~ ^[0-9]+$ ]] || { echo "history_bench.sh: error: EVENTS must be a number, got '$events'" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "history_bench.sh: error: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/history_bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/cache

field() { sed -n "s/.*$1: //p" "$2"; }
secs() { # m:ss.cc or h:mm:ss -> seconds
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f\n", s }' <<<"$1"
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

cat >"$work/spec.yaml" <<'EOF'
tracebook: 1
reports:
  - use: top_kernels
  - use: op_statistic
  - use: step_trace_time
EOF

load_rss=0 add_rss=0
: >"$work/load_walls" && : >"$work/add_walls"
for k in $(seq 1 "$nights"); do
    "$gen" --kind ascend --events "$events" --seed "$k" -o "$work/night.json" ||
        { echo "history_bench.sh: error: the generator failed" >&2; exit 1; }
    /usr/bin/time -v -o "$work/load.txt" "$exe" export db -q -dir "$work/night.json" -o "$work/night.db" >/dev/null ||
        { echo "history_bench.sh: error: loading night $k failed" >&2; exit 1; }
    /usr/bin/time -v -o "$work/add.txt" "$exe" history add -q --history "$work/nights.db" -dir "$work/night.db" \
        --spec "$work/spec.yaml" --label "night$k" >/dev/null 2>"$work/stderr.txt" ||
        { cat "$work/stderr.txt" >&2; echo "history_bench.sh: error: adding night $k failed" >&2; exit 1; }
    for what in load add; do
        rss=$(field "Maximum resident set size (kbytes)" "$work/$what.txt")
        secs "$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' "$work/$what.txt")" >>"$work/${what}_walls"
        if [ $what = load ]; then [ "$rss" -gt "$load_rss" ] && load_rss=$rss; fi
        if [ $what = add ]; then [ "$rss" -gt "$add_rss" ] && add_rss=$rss; fi
    done
    rm -f "$work/night.json" "$work/night.db"
done
printf 'load        %d nights of %s events  median wall %s s  largest peak RSS %d MB\n' "$nights" "$events" \
    "$(median <"$work/load_walls")" $((load_rss / 1024))
printf 'history add median wall %s s  largest peak RSS %d MB  history %d MB (%d nights)\n' \
    "$(median <"$work/add_walls")" $((add_rss / 1024)) $(($(stat -c %s "$work/nights.db") / 1048576)) "$nights"

/usr/bin/time -v -o "$work/time.txt" "$exe" history report --history "$work/nights.db" --spec "$work/spec.yaml" \
    -o "$work/out" >/dev/null 2>"$work/stderr.txt" ||
    { cat "$work/stderr.txt" >&2; echo "history_bench.sh: error: history report failed" >&2; exit 1; }
rss=$(field "Maximum resident set size (kbytes)" "$work/time.txt")
printf 'history report  wall %s  peak RSS %d MB\n' "$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' "$work/time.txt")" \
    $((rss / 1024))
tail -n 1 "$work/stderr.txt"
top=$add_rss
[ "$rss" -gt "$top" ] && top=$rss
if [ "$top" -le "$load_rss" ]; then
    echo "PASS: history's peak RSS $((top / 1024)) MB <= the load's $((load_rss / 1024)) MB"
else
    echo "FAIL: history's peak RSS $((top / 1024)) MB > the load's $((load_rss / 1024)) MB"
fi
