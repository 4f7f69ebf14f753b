#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# steptrace_bench.sh - how long the step trace computed tables take on a DB
# with a million device tasks (target: step_trace_time, every field, in under
# 1 second).
#
# It writes a synthetic trace with tools/gen/tracebook-gen (seed 1) sized to
# hold TASKS TASK rows (the events-per-task ratio is measured first on a
# small trace of the same kind), loads it with `tracebook export db` into a
# temporary directory (under $TMPDIR, removed at exit; the trace is deleted
# once loaded), prints the DB's row counts, then times with /usr/bin/time, RUNS
# times each (the best and the median are printed, wall and user+sys CPU):
#   tracebook query -dir DB "SELECT 1"                                (the fixed cost)
#   tracebook query -dir DB "SELECT count(*) FROM step_trace_time"    (policy torch_npu)
#   tracebook report -dir DB --spec S -o OUT, S = one report reading step_trace_time
#       with metrics.step_trace.policy torch_npu_text, msprof_analyze, mindspore
#   tracebook query -dir DB "SELECT count(*) FROM overlap_lanes"      (every lane slice stored)
# and one PASS/FAIL line: the best wall time of the torch_npu query < 1 s.
# Wall time suffers when other processes share the CPUs; the CPU column does not.
#
# It prints figures; it is not a unit test. Exit status is 0 unless a command
# fails.
#
# usage: tests/bench/steptrace_bench.sh [--kind ascend|kineto] [--runs N] [BUILD_DIR] [TASKS]
#   defaults: --kind ascend, --runs 3, BUILD_DIR build, TASKS 1000000
# Needs /usr/bin/time from Debian's `time` package (apt-get install time).

set -u -o pipefail

kind=ascend
runs=3
build=
tasks=

usage() {
    sed -n 's/^# \{0,1\}//; /^usage:/,/^Needs/p' "$0"
}

while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --kind) [ $# -ge 2 ] || { echo "steptrace_bench.sh: error: --kind needs a value" >&2; exit 2; }
        kind=$2; shift 2; continue ;;
    --kind=*) kind=${1#--kind=} ;;
    --runs) [ $# -ge 2 ] || { echo "steptrace_bench.sh: error: --runs needs a value" >&2; exit 2; }
        runs=$2; shift 2; continue ;;
    --runs=*) runs=${1#--runs=} ;;
    -*) echo "steptrace_bench.sh: error: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *)
        if [[ $1 =~ ^[0-9]+$ ]] && [ -z "$tasks" ]; then
            tasks=$1
        elif [ -z "$build" ] && [ -z "$tasks" ]; then
            build=$1
        else
            echo "steptrace_bench.sh: error: unexpected argument '$1'" >&2; exit 2
        fi ;;
    esac
    shift
done
case "$kind" in
ascend | kineto) ;;
*) echo "steptrace_bench.sh: error: --kind must be ascend or kineto '$kind'" >&2; exit 2 ;;
esac
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "steptrace_bench.sh: error: --runs must be a positive number '$runs'" >&2; exit 2; }
build=${build:-build}
tasks=${tasks:-1000000}

gen=$build/tools/gen/tracebook-gen
tb=
for c in "$build/tracebook" "$build/engine/cli/tracebook"; do
    if [ -x "$c" ]; then tb=$c; break; fi
done
[ -x "$gen" ] || { echo "steptrace_bench.sh: error: generator not built '$gen' (meson compile -C $build)" >&2; exit 1; }
[ -n "$tb" ] || { echo "steptrace_bench.sh: error: no tracebook binary in '$build'" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "steptrace_bench.sh: error: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracebook-stbench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/xdg

# One number from a query: the first field of the second CSV line.
value() {
    "$tb" query -q -dir "$1" --format csv "$2" | sed -n 2p | cut -d, -f1
}

# Loads a generated trace of $2 events into DB $1 (the trace is removed).
make_db() {
    local db=$1 n=$2 f=$tmp/trace.json
    if ! "$gen" --kind "$kind" --events "$n" --seed 1 -o "$f"; then
        echo "steptrace_bench.sh: error: generator failed for $n events" >&2
        exit 1
    fi
    rm -f "$db"
    if ! /usr/bin/time -f "%e" -o "$tmp/load.time" "$tb" export db -dir "$f" -o "$db" --quiet >/dev/null; then
        echo "steptrace_bench.sh: error: tracebook export db failed on $n events" >&2
        exit 1
    fi
    rm -f "$f"
}

# Runs the command "$@" $runs times; sets best/median wall and CPU (user + sys) seconds.
timed() {
    local walls=() cpus=() i
    for ((i = 0; i < runs; i++)); do
        if ! /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@" >"$tmp/out" 2>"$tmp/err"; then
            echo "steptrace_bench.sh: error: failed: $*" >&2
            head -5 "$tmp/err" >&2
            exit 1
        fi
        read -r w u s <"$tmp/t"
        walls+=("$w")
        cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')")
    done
    best_wall=$(printf '%s\n' "${walls[@]}" | sort -g | head -1)
    med_wall=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    best_cpu=$(printf '%s\n' "${cpus[@]}" | sort -g | head -1)
    med_cpu=$(printf '%s\n' "${cpus[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
}

echo "steptrace bench: kind $kind, $tasks tasks, $runs runs, generator $gen, tracebook $tb, tmp $tmp"

# events per task, measured on a small trace of the same kind
probe=200000
make_db "$tmp/probe.db" "$probe"
ptasks=$(value "$tmp/probe.db" "SELECT count(*) FROM TASK")
rm -f "$tmp/probe.db"
if [ -z "$ptasks" ] || [ "$ptasks" -eq 0 ]; then
    echo "steptrace_bench.sh: error: the generator's $kind trace has no tasks" >&2
    exit 1
fi
events=$(awk -v t="$tasks" -v p="$probe" -v k="$ptasks" 'BEGIN { printf "%d", t * p / k * 1.005 + 1000 }')

db=$tmp/big.db
make_db "$db" "$events"
echo "loaded $events events in $(cat "$tmp/load.time") s: $(du -h "$db" | cut -f1) DB"
for t in TASK COMPUTE_TASK_INFO COMMUNICATION_OP CANN_API STEP_TIME OVERLAP_ANALYSIS; do
    printf '  %-18s %9s rows\n' "$t" "$(value "$db" "SELECT count(*) FROM $t")"
done

printf '\n%-44s %9s %9s %9s %9s %7s\n' "what" "best s" "median s" "best cpu" "med cpu" "rows"
line() {
    printf '%-44s %9s %9s %9s %9s %7s\n' "$1" "$best_wall" "$med_wall" "$best_cpu" "$med_cpu" "$2"
}

timed "$tb" query -q -dir "$db" "SELECT 1"
line "query SELECT 1 (fixed cost)" -
timed "$tb" query -q -dir "$db" --format csv "SELECT count(*) FROM step_trace_time"
main_best=$best_wall
line "step_trace_time, torch_npu (query)" "$(sed -n 2p "$tmp/out")"
for p in torch_npu_text msprof_analyze mindspore; do
    spec=$tmp/$p.yaml
    printf 'tracebook: 1\nmetrics: {step_trace: {policy: %s}}\nreports:\n  - id: n\n    sql: SELECT count(*) AS n FROM step_trace_time\n' \
        "$p" >"$spec"
    rm -rf "$tmp/out-$p"
    timed "$tb" report -q -dir "$db" --spec "$spec" -o "$tmp/out-$p"
    line "step_trace_time, $p (report)" "$(sed -n 2p "$tmp/out-$p/n.csv")"
done
timed "$tb" query -q -dir "$db" --format csv "SELECT count(*) FROM overlap_lanes"
line "overlap_lanes (query)" "$(sed -n 2p "$tmp/out")"

echo
awk -v b="$main_best" -v n="$tasks" 'BEGIN {
    printf "%s step_trace_time on %d tasks: best %.2f s < 1 s\n", (b < 1 ? "PASS" : "FAIL"), n, b }'
exit 0
