#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scale_bench.sh - what scale-out costs, phase by phase (docs/scale-out.md,
# docs/performance.md).
#
# Two generated clusters (tools/gen/tracebook-gen --kind ascend, one trace
# per rank, under $TMPDIR, removed at exit): many small ranks (default
# 1,024 ranks of 2,000 events) and a few big ones (default 8 ranks of
# 1,000,000 events). For each, with P = 1, 2, 4 processes:
#   report   `tracebook report` over the raw inputs, one process (P = 1), or
#            `mpirun -n P tracebook report` (P > 1): wall time of the run,
#            and each process's wall time and peak RSS (/usr/bin/time);
#   shards   `export db --shard p/P` for every p, one after the other: the
#            wall time of the slowest part (what P machines would take),
#            and the bytes of the P shard DBs, which process 0 reads back:
#            the gathered data;
#   merge    `export db -dir SHARDS -o merged.db`: process 0's merge alone;
#   same     whether the report's files equal the single run's.
# The spec is a few built-in reports, rank and cluster ones (op_statistic,
# step_trace_time, cluster_step_trace_time, slow_rank, communication_statistic),
# all given `scope: all`: its runs merge the shards. Then the same five
# reports in their own scopes (rank, and cluster for cluster_step_trace_time
# and slow_rank), which merge nothing (docs/scale-out.md#report-scopes):
#   report   as above (under mpirun each process runs its shard's reports);
#   partial_MB  the rows the shards gave, gathered at process 0 (the
#            processes' partial_bytes in tracebook_run.json);
#   shards_report_s  `report -dir SHARDS` over the P shard DBs, one process:
#            the final step of the shard way, without a merge;
#   same     whether its files equal the single run's.
#
# It prints figures; it is not a test. On a machine with fewer cores than P,
# the processes share them: P > cores cannot be faster, and the figures show
# what each phase costs.
#
# usage: tests/bench/scale_bench.sh [BUILD_DIR] [--small R E] [--big R E] [--procs "1 2 4"]
#   defaults: BUILD_DIR build, --small 1024 2000, --big 8 1000000
# Needs /usr/bin/time (Debian's `time`), and mpirun for P > 1 (else those
# rows are skipped). MB = 10^6 bytes; RSS MB = 2^20 bytes.

set -u -o pipefail

build=build
small_r=1024 small_e=2000 big_r=8 big_e=1000000
procs="1 2 4"
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) sed -n 's/^# \{0,1\}//; /^usage:/,/^Needs/p' "$0"; exit 0 ;;
    --small) small_r=$2 small_e=$3; shift 3 ;;
    --big) big_r=$2 big_e=$3; shift 3 ;;
    --procs) procs=$2; shift 2 ;;
    -*) echo "scale_bench.sh: error: unknown option '$1'" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
tb=$(realpath "$build/tracebook")
gen=$(realpath "$build/tools/gen/tracebook-gen")
[ -x "$tb" ] && [ -x "$gen" ] || { echo "scale_bench.sh: error: build $build first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "scale_bench.sh: error: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }
have_mpi=0
command -v mpirun >/dev/null && have_mpi=1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracebook-scale-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
mkdir -p "$XDG_CACHE_HOME"
cat > "$tmp/spec.yaml" <<'SPEC'
tracebook: 1
reports:
  - use: op_statistic
    scope: all
  - use: step_trace_time
    scope: all
  - use: cluster_step_trace_time
    scope: all
  - use: slow_rank
    scope: all
  - use: communication_statistic
    scope: all
SPEC

cat > "$tmp/rank.yaml" <<'SPEC'
tracebook: 1
reports:
  - use: op_statistic
  - use: step_trace_time
  - use: cluster_step_trace_time
  - use: slow_rank
  - use: communication_statistic
SPEC

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
bytes() { du -cb "$@" 2>/dev/null | tail -1 | cut -f1; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }

# generate NAME RANKS EVENTS: one ascend trace per rank, sizes a little apart
generate() {
    local dir=$tmp/$1 r
    mkdir -p "$dir"
    for ((r = 0; r < $2; r++)); do
        "$gen" --kind ascend --events $(($3 + ($3 / 50) * (r % 7))) --seed $((7 + r)) --ranks 8 --rank $((r % 8)) \
            -o "$(printf '%s/r%05d.json' "$dir" "$r")" || exit 1
    done
}

# timed_report P SET SPEC OUT: `report` over SET by one process (P = 1) or
# under mpirun -n P; sets run_s (its wall time), walls and rsss (each
# process's wall seconds and peak RSS MB, in process order, "/"-joined).
# Each process's /usr/bin/time writes its own file: mpirun's stderr would
# interleave their lines.
timed_report() {
    local p=$1 set=$2 spec=$3 out=$4 t0 k w r
    rm -f "$tmp"/time.*
    t0=$(now)
    if [ "$p" = 1 ]; then
        /usr/bin/time -f "%e %M" -o "$tmp/time.0" "$tb" report -dir "$tmp/$set" --spec "$spec" -o "$out" -q || exit 1
    else
        mpirun --allow-run-as-root --oversubscribe -n "$p" sh -c \
            'exec /usr/bin/time -f "%e %M" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' \
            "$tmp/time" "$tb" report -dir "$tmp/$set" --spec "$spec" -o "$out" -q || exit 1
    fi
    run_s=$(secs "$t0" "$(now)")
    walls="" rsss=""
    for ((k = 0; k < p; k++)); do
        read -r w r < "$tmp/time.$k" || exit 1
        walls="$walls${walls:+/}$w"
        rsss="$rsss${rsss:+/}$(awk -v r="$r" 'BEGIN { printf "%.0f", r / 1024 }')"
    done
}

printf '%-6s %-2s %9s %9s %-28s %-26s %9s %10s %8s %5s\n' data P report_s shards_s "per-process wall s" \
    "per-process RSS MB" gather_MB merged_MB merge_s same
scoped=""
for set in small big; do
    if [ $set = small ]; then ranks=$small_r events=$small_e; else ranks=$big_r events=$big_e; fi
    t0=$(now)
    generate $set "$ranks" "$events"
    in_mb=$(mb "$(bytes "$tmp/$set")")
    echo "# $set: $ranks ranks x ~$events events, $in_mb MB, generated in $(secs "$t0" "$(now)") s" >&2
    for p in $procs; do
        out=$tmp/out-$set-$p
        rm -rf "$XDG_CACHE_HOME"/tracebook/*
        if [ "$p" != 1 ] && [ $have_mpi = 0 ]; then
            echo "# P=$p: no mpirun, skipped" >&2
            continue
        fi
        timed_report "$p" $set "$tmp/spec.yaml" "$out"
        report_s=$run_s mwalls=$walls mrsss=$rsss
        # the shard way on this machine: each part's load, and what process 0 reads back
        shards=$tmp/shards-$set-$p
        slowest=0
        for ((k = 0; k < p; k++)); do
            s0=$(now)
            "$tb" export db -dir "$tmp/$set" --shard $k/$p -o "$shards/" -q > /dev/null || exit 1
            d=$(secs "$s0" "$(now)")
            slowest=$(awk -v a="$slowest" -v b="$d" 'BEGIN { print (b > a ? b : a) }')
        done
        gather=$(mb "$(bytes "$shards"/shard_*.db)")
        # rank-scope reports: over the raw inputs (mpirun for P > 1), and over the shards
        rout=$tmp/rout-$set-$p
        timed_report "$p" $set "$tmp/rank.yaml" "$rout"
        partial=$(python3 -c 'import json,sys; print("%.2f" % (sum(p.get("partial_bytes", 0) for p in
            json.load(open(sys.argv[1])).get("processes", [])) / 1e6))' "$rout/tracebook_run.json")
        s0=$(now)
        "$tb" report -dir "$shards" --spec "$tmp/rank.yaml" -o "$rout-shards" -q || exit 1
        sr_s=$(secs "$s0" "$(now)")
        rsame=-
        if [ "$p" = 1 ]; then
            rref=$rout
            rsame=ref
        elif diff -rq -x tracebook_run.json "$rref" "$rout" > /dev/null &&
            diff -rq -x tracebook_run.json "$rref" "$rout-shards" > /dev/null; then
            rsame=yes
        else
            rsame=NO
        fi
        [ "$p" = 1 ] && ! diff -rq -x tracebook_run.json "$rref" "$rout-shards" > /dev/null && rsame=NO
        scoped="$scoped$(printf '%-6s %-2s %9s %-28s %-26s %10s %15s %5s' $set "$p" "$run_s" \
            "$walls" "$rsss" "$partial" "$sr_s" $rsame)
"
        m0=$(now)
        "$tb" export db -dir "$shards" -o "$tmp/merged.db" -q > /dev/null || exit 1
        merge_s=$(secs "$m0" "$(now)")
        merged=$(mb "$(bytes "$tmp/merged.db")")
        rm -rf "$shards" "$tmp/merged.db"
        same=-
        if [ "$p" = 1 ]; then
            ref=$out
            same=ref
        elif diff -rq -x tracebook_run.json "$ref" "$out" > /dev/null; then
            same=yes
        else
            same=NO
        fi
        printf '%-6s %-2s %9s %9s %-28s %-26s %9s %10s %8s %5s\n' $set "$p" "$report_s" "$slowest" \
            "$mwalls" "$mrsss" "$gather" "$merged" "$merge_s" $same
    done
    rm -rf "$tmp/$set" "$tmp"/out-$set-* "$tmp"/rout-$set-*
done
echo
echo "# the same reports in their own scopes (rank, cluster): no merge"
printf '%-6s %-2s %9s %-28s %-26s %10s %15s %5s\n' data P report_s "per-process wall s" "per-process RSS MB" \
    partial_MB shards_report_s same
printf '%s' "$scoped"
