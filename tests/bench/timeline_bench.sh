#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# timeline_bench.sh - how fast and how lean `tracebook export timeline`
# writes a big timeline.
#
# Writes a synthetic Ascend trace of N events (tools/gen/tracebook-gen, seed
# 1) into a temporary directory (under $TMPDIR, removed at exit), loads it
# once (`export db`), then times with /usr/bin/time -v
#   BUILD/tracebook export timeline -dir TMP/trace.db -o TMP/tl -q
# and prints the wall seconds, CPU seconds (user + system) and peak RSS of
# the load and of the export,
# the events and bytes written, and one PASS/FAIL line: the export's peak RSS
# below 150 MB (the load's bound). A second export with --slice-mb 200 shows
# the cost of slicing. It prints figures; it is not a unit test.
#
# usage: tests/bench/timeline_bench.sh [BUILD_DIR] [EVENTS]
#   defaults: BUILD_DIR build, EVENTS 5000000
# RSS MB = 2^20 bytes, file MB = 10^6 bytes.
# Needs /usr/bin/time from Debian's `time` package (apt-get install time).

set -u -o pipefail

build=${1:-build}
events=${2:-5000000}
tb=$build/tracebook
gen=$build/tools/gen/tracebook-gen
for f in "$tb" "$gen" /usr/bin/time; do
    [ -x "$f" ] || { echo "timeline_bench.sh: error: '$f' is missing (build first; /usr/bin/time: apt-get install time)" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tb-timeline-bench-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Runs a command under /usr/bin/time -v; prints "<wall s> <peak RSS MB> <CPU s>".
measure() {
    local log=$tmp/time.log
    /usr/bin/time -v "$@" >"$tmp/out.txt" 2>"$log" || { cat "$log" >&2; return 1; }
    awk '/Elapsed \(wall clock\)/ {
             n = split($NF, p, ":"); s = 0
             for (i = 1; i <= n; i++) s = s * 60 + p[i]
             wall = s
         }
         /Maximum resident set size/ { rss = $NF / 1024 }
         /User time \(seconds\)|System time \(seconds\)/ { cpu += $NF }
         END { printf "%.2f %.1f %.2f\n", wall, rss, cpu }' "$log"
}

"$gen" --kind ascend --events "$events" --seed 1 -o "$tmp/trace.json" || exit 1
trace_mb=$(awk -v b="$(stat -c %s "$tmp/trace.json")" 'BEGIN { printf "%.1f", b / 1e6 }')

read -r load_s load_rss load_cpu < <(measure "$tb" export db -dir "$tmp/trace.json" -o "$tmp/trace.db" -q) || exit 1
rm -f "$tmp/trace.json"
read -r exp_s exp_rss exp_cpu < <(measure "$tb" export timeline -dir "$tmp/trace.db" -o "$tmp/tl" -q) || exit 1
out=$(cat "$tmp/out.txt")
out_mb=$(awk -v b="$(stat -c %s "$out")" 'BEGIN { printf "%.1f", b / 1e6 }')
written=$(grep -c '^{' "$out")
rm -rf "$tmp/tl"
read -r sl_s sl_rss sl_cpu < <(measure "$tb" export timeline -dir "$tmp/trace.db" -o "$tmp/tl" -q --slice-mb 200) || exit 1
slices=$(wc -l <"$tmp/out.txt")

printf 'trace: %s events, %s MB\n' "$events" "$trace_mb"
printf '%-34s %8s %8s %12s\n' step "wall s" "CPU s" "peak RSS MB"
printf '%-34s %8s %8s %12s\n' "export db (load)" "$load_s" "$load_cpu" "$load_rss"
printf '%-34s %8s %8s %12s\n' "export timeline" "$exp_s" "$exp_cpu" "$exp_rss"
printf '%-34s %8s %8s %12s\n' "export timeline --slice-mb 200" "$sl_s" "$sl_cpu" "$sl_rss"
printf 'timeline: %s events, %s MB; sliced: %s files\n' "$written" "$out_mb" "$slices"
if awk -v r="$exp_rss" 'BEGIN { exit !(r < 150) }'; then
    echo "PASS export timeline peak RSS < 150 MB"
else
    echo "FAIL export timeline peak RSS < 150 MB"
fi
