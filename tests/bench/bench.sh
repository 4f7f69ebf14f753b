#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench.sh - how fast and how lean `tracebook export db` loads a big trace,
# against Python's json.load on the same file, DuckDB's read_json on the same
# file (a peer figure, where node and @duckdb/node-api are installed) and the
# bound: SQLite alone inserting the same rows (tools/bench/tracebook-bound).
#
# Mixes (--kind, default all three, one after the other in one run):
#   ascend         torch_npu trace_view.json as today's generator writes it:
#                  mostly host events (Python ops, task queue, CANN calls)
#   ascend-device  the device-heavy trace (tracebook-gen --mix device): as many
#                  device tasks as CANN calls, every task with its HostToDevice
#                  flow, HCCL ops, no Python layer
#   kineto         PyTorch profiler GPU trace
# For each mix and size it writes a synthetic trace with
# tools/gen/tracebook-gen (seed 1) into a temporary directory (under $TMPDIR,
# removed at exit), then times with /usr/bin/time -v:
#   python3 -c 'import json,sys; json.load(open(sys.argv[1]))' FILE
#   node tests/bench/duckdb_read.js KIND FILE   (typed columns and a group-by)
#   BUILD/tracebook export db -dir FILE -o TMP/out.db --quiet
#   BUILD/tools/bench/tracebook-bound TMP/out.db TMP/bound.db
# and prints wall seconds and peak RSS of each, tracebook's MB/s and rows/s
# (rows: every row of every table of the DB, as tracebook-bound counts them),
# the speed-ups over Python and DuckDB, DuckDB's memory over tracebook's, and
# the bound: SQLite's seconds to insert the same rows with the writer's
# settings and batch, and to build the same indexes, untimed reading aside
# (insert_s + index_s), and load seconds / bound seconds; then a second table
# of CPU seconds (user + system, every thread) of json.load, DuckDB and the
# load, and the load's CPU speed-ups, steadier than wall time on a shared
# machine (a figure beside the targets, which are wall time). Then one PASS/FAIL
# line per target: speed-up >= 4 and tracebook peak RSS < 150 MB for every
# mix, and for ascend-device the issue's targets: >= 8x json.load, >= 3x
# DuckDB at <= 1/8 of its memory.
#
# For kineto it also times the HTA path: after the load, HTA's temporal
# breakdown, comm/comp overlap and idle-time breakdown in one run
#   BUILD/tracebook report -q -dir TMP/out.db --spec builtin:temporal_breakdown
#     --spec builtin:comm_comp_overlap --spec builtin:idle_time_breakdown
# and prints load, reports and total seconds and both peak RSS. Where
# HolisticTraceAnalysis is there (HTA_DIR=a checkout of it, and pandas for
# python3 on PATH or Debian's /usr/bin/python3), it also times HTA itself on
# the same trace (tests/bench/hta_peer.py: TraceAnalysis, then
# get_temporal_breakdown, get_comm_comp_overlap, get_idle_time_breakdown,
# nothing drawn), prints its seconds and peak RSS, HTA's seconds over the
# HTA path's total, and the verdict "HTA path >= 20x HTA". HTA is a figure
# printed beside tracebook's, not a dependency of tracebook or its tests.
#
# Then, per mix and size, a multi-rank case (--ranks R, default 2; 0 skips it):
# R generated ranks of N events each, loaded together. For the ascend mixes
# these are the torch_npu rank directories of `tracebook-gen --kind
# torch_npu_dir` (with --mix device for ascend-device); for kineto, one trace
# per rank (--rank r) in a directory of its own. It times
#   python3 json.load of every rank's trace, one after the other
#   BUILD/tracebook export db -dir RANK0 -dir RANK1 ... (ranks in parallel)
#   the same with TRACEBOOK_JOBS=1 (one rank after the other)
# and prints a second table: wall seconds and peak RSS of each, the parallel
# speed-up over TRACEBOOK_JOBS=1 and over Python, and whether both DBs hold
# the same rows (they must: sqlite3 dumps compared, when sqlite3 is there).
#
# It prints figures; it is not a unit test. Exit status is 0 unless a command
# fails (the generator, python, tracebook or tracebook-bound on a trace; a
# DuckDB failure is reported and its columns say FAIL). When the tracebook
# binary is not built yet its columns say "-" and its targets are skipped;
# without node or @duckdb/node-api (looked up through NODE_PATH) the DuckDB
# columns say "-" and a note says why.
#
# usage: tests/bench/bench.sh [--kind ascend|ascend-device|kineto|all]... [--ranks R] [BUILD_DIR] [SIZES...]
#   defaults: --kind all, --ranks 2, BUILD_DIR build, SIZES 1000000 5000000
# MB = 10^6 bytes for file sizes and throughput; RSS MB = 2^20 bytes. Times
# are /usr/bin/time's wall clock (10 ms resolution; below that counts as 10 ms).
# Needs /usr/bin/time from Debian's `time` package (apt-get install time).

set -u -o pipefail

kinds=()
nranks=2
build=
sizes=()
here=$(cd "$(dirname "$0")" && pwd)

usage() {
    sed -n 's/^# \{0,1\}//; /^usage:/,/^Needs/p' "$0"
}

while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --kind) [ $# -ge 2 ] || { echo "bench.sh: error: --kind needs a value" >&2; exit 2; }
        kinds+=("$2"); shift 2; continue ;;
    --kind=*) kinds+=("${1#--kind=}") ;;
    --ranks) [ $# -ge 2 ] || { echo "bench.sh: error: --ranks needs a value" >&2; exit 2; }
        nranks=$2; shift 2; continue ;;
    --ranks=*) nranks=${1#--ranks=} ;;
    -*) echo "bench.sh: error: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *)
        if [[ $1 =~ ^[0-9]+$ ]]; then
            sizes+=("$1")
        elif [ -z "$build" ] && [ ${#sizes[@]} -eq 0 ]; then
            build=$1
        else
            echo "bench.sh: error: not a size '$1'" >&2; exit 2
        fi ;;
    esac
    shift
done
[ ${#kinds[@]} -gt 0 ] || kinds=(all)
mixes=()
for k in "${kinds[@]}"; do
    case "$k" in
    all) mixes+=(ascend ascend-device kineto) ;;
    ascend | ascend-device | kineto) mixes+=("$k") ;;
    *) echo "bench.sh: error: --kind must be ascend, ascend-device, kineto or all '$k'" >&2; exit 2 ;;
    esac
done
[[ $nranks =~ ^[0-9]+$ ]] || { echo "bench.sh: error: --ranks must be a number '$nranks'" >&2; exit 2; }
build=${build:-build}
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 5000000)

gen=$build/tools/gen/tracebook-gen
bound=$build/tools/bench/tracebook-bound
tb=
for c in "$build/tracebook" "$build/engine/cli/tracebook"; do
    if [ -x "$c" ]; then tb=$c; break; fi
done
for x in "$gen" "$bound"; do
    if [ ! -x "$x" ]; then
        echo "bench.sh: error: not built '$x' (meson compile -C $build)" >&2
        exit 1
    fi
done
if [ ! -x /usr/bin/time ]; then
    echo "bench.sh: error: /usr/bin/time not found (apt-get install time)" >&2
    exit 1
fi
command -v python3 >/dev/null || { echo "bench.sh: error: python3 not found" >&2; exit 1; }
duck_note=
if ! command -v node >/dev/null; then
    duck_note="node not found: DuckDB columns skipped"
elif ! node -e "require('@duckdb/node-api')" >/dev/null 2>&1; then
    duck_note="@duckdb/node-api not found through NODE_PATH (npm install @duckdb/node-api; NODE_PATH=DIR/node_modules): DuckDB columns skipped"
fi
# HTA: a checkout in HTA_DIR and a python3 with pandas
hta_py= hta_note=
if [ -z "${HTA_DIR:-}" ]; then
    hta_note="HTA_DIR not set (a HolisticTraceAnalysis checkout): HTA's own figure skipped"
elif [ ! -f "$HTA_DIR/hta/trace_analysis.py" ]; then
    hta_note="HTA_DIR '$HTA_DIR' holds no hta/trace_analysis.py: HTA's own figure skipped"
else
    for p in python3 /usr/bin/python3; do
        if command -v "$p" >/dev/null && "$p" -c 'import pandas' 2>/dev/null; then
            hta_py=$p
            break
        fi
    done
    [ -n "$hta_py" ] || hta_note="no python3 with pandas (apt-get install python3-pandas): HTA's own figure skipped"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracebook-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# seconds from /usr/bin/time's "Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02.34"
wall() {
    sed -n 's/.*Elapsed (wall clock) time.*): //p' "$1" |
        awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }'
}
# CPU seconds, user + system, from "User time (seconds): 1.23" and "System time (seconds): 0.04"
cpu() {
    awk -F': ' '/User time \(seconds\)|System time \(seconds\)/ { s += $2; n++ }
                END { if (n == 2) printf "%.2f", s; else print "-" }' "$1"
}
# MB (2^20 bytes) from "Maximum resident set size (kbytes): 123456"
rss() {
    sed -n 's/.*Maximum resident set size (kbytes): //p' "$1" | awk '{ printf "%.1f", $1 / 1024 }'
}
label() {
    awk -v n="$1" 'BEGIN { if (n % 1000000 == 0) printf "%dM", n / 1000000;
                           else if (n % 1000 == 0) printf "%dk", n / 1000; else printf "%d", n }'
}
# a / b with 2 decimals, "-" when either is not a number (b at least 0.01)
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/) { print "-"; exit }
                                     if (b < 0.01) b = 0.01; printf "%.2f", a / b }'
}
# verdict NAME VALUE OP LIMIT TEXT: PASS/FAIL line, or FAIL "not measured"
verdict() {
    if [[ ! $2 =~ ^[0-9.]+$ ]]; then
        verdicts+=("FAIL $1: $5 not measured")
    else
        verdicts+=("$(awk -v v="$2" -v o="$3" -v l="$4" -v n="$1" -v t="$5" 'BEGIN {
            ok = (o == ">=" ? v >= l : o == "<" ? v < l : v <= l)
            printf "%s %s: %s %s %s %s", (ok ? "PASS" : "FAIL"), n, t, v, o, l }')")
    fi
}

status=0
rows=()
cpu_rows=()
rank_rows=()
hta_rows=()
verdicts=()
echo "tracebook bench: mixes ${mixes[*]}, generator $gen, tracebook ${tb:-(not built)}, tmp $tmp"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/MemTotal/ { printf "%.0f GB RAM", $2 / 1048576 }' /proc/meminfo); sqlite3 $(sqlite3 --version 2>/dev/null | cut -d' ' -f1)"
[ -n "$tb" ] || echo "note: no tracebook binary in $build (looked for tracebook, engine/cli/tracebook): its columns are skipped"
[ -z "$duck_note" ] || echo "note: $duck_note"
[ -z "$hta_note" ] || [[ " ${mixes[*]} " != *" kineto "* ]] || echo "note: $hta_note"

# gen_args MIX: the generator's --kind/--mix for a single trace of MIX
gen_args() {
    case "$1" in
    ascend) echo "--kind ascend" ;;
    ascend-device) echo "--kind ascend --mix device" ;;
    kineto) echo "--kind kineto" ;;
    esac
}

# one_trace MIX N: the single-trace figures of MIX at N events
one_trace() {
    local mix=$1 n=$2 lab f bytes mb dkind
    local py_s=- py_rss=- dk_s=- dk_rss=- tb_s=- tb_rss=- nrows=- mbs=- rps=- vs_py=- vs_dk=- mem_dk=-
    local b_s=- b_ins=- b_idx=- vs_b=- py_cpu=- dk_cpu=- tb_cpu=-
    lab="$(label "$n") $mix"
    # a Kineto trace alone in its folder: HTA reads every trace of a folder
    if [ "$mix" = kineto ]; then f=$tmp/kineto/trace.json dkind=kineto; else f=$tmp/trace_view.json dkind=ascend; fi
    mkdir -p "$tmp/kineto"
    # shellcheck disable=SC2046
    if ! /usr/bin/time -v -o "$tmp/gen.time" "$gen" $(gen_args "$mix") --events "$n" --seed 1 -o "$f"; then
        echo "bench.sh: error: generator failed for $mix, $n events" >&2
        exit 1
    fi
    bytes=$(stat -c %s "$f")
    mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
    echo "$lab: generated $n events, $mb MB ($(awk -v b="$bytes" -v n="$n" 'BEGIN { printf "%.0f", b / n }') bytes an event) in $(wall "$tmp/gen.time") s"

    if /usr/bin/time -v -o "$tmp/py.time" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f"; then
        py_s=$(wall "$tmp/py.time") py_rss=$(rss "$tmp/py.time") py_cpu=$(cpu "$tmp/py.time")
    else
        echo "bench.sh: error: python3 json.load failed on $f" >&2
        py_s=FAIL py_rss=FAIL status=1
    fi
    echo "$lab: python json.load $py_s s (CPU $py_cpu s), $py_rss MB RSS"

    if [ -z "$duck_note" ]; then
        if /usr/bin/time -v -o "$tmp/dk.time" node "$here/duckdb_read.js" "$dkind" "$f" >"$tmp/dk.out" 2>"$tmp/dk.err"; then
            dk_s=$(wall "$tmp/dk.time") dk_rss=$(rss "$tmp/dk.time") dk_cpu=$(cpu "$tmp/dk.time")
            echo "$lab: duckdb read_json $dk_s s (CPU $dk_cpu s), $dk_rss MB RSS ($(cat "$tmp/dk.out"))"
        else
            echo "bench.sh: note: duckdb read_json failed on $f: $(head -c 300 "$tmp/dk.err")" >&2
            dk_s=FAIL dk_rss=FAIL
        fi
    fi

    if [ -n "$tb" ]; then
        rm -f "$tmp/out.db" "$tmp/bound.db"
        if /usr/bin/time -v -o "$tmp/tb.time" "$tb" export db -dir "$f" -o "$tmp/out.db" --quiet >/dev/null \
            2>"$tmp/tb.err"; then
            tb_s=$(wall "$tmp/tb.time") tb_rss=$(rss "$tmp/tb.time") tb_cpu=$(cpu "$tmp/tb.time")
            echo "$lab: tracebook export db $tb_s s (CPU $tb_cpu s), $tb_rss MB RSS"
            [ "$mix" != kineto ] || hta_path "$lab" "$tb_s" "$tb_rss"
            if "$bound" "$tmp/out.db" "$tmp/bound.db" >"$tmp/bound.out" 2>"$tmp/bound.err"; then
                read -r _ nrows _ _ _ b_ins _ b_idx _ _ <"$tmp/bound.out"
                b_s=$(awk -v a="$b_ins" -v b="$b_idx" 'BEGIN { printf "%.2f", a + b }')
                echo "$lab: $nrows rows; SQLite bound: insert $b_ins s, indexes $b_idx s"
            else
                echo "bench.sh: error: tracebook-bound failed: $(head -c 300 "$tmp/bound.err")" >&2
                status=1
            fi
        else
            echo "bench.sh: error: tracebook export db failed on $mix, $n events:" >&2
            head -5 "$tmp/tb.err" >&2
            tb_s=FAIL tb_rss=FAIL status=1
        fi
        rm -f "$tmp/out.db" "$tmp/bound.db"
        mbs=$(ratio "$mb" "$tb_s")
        rps=$(awk -v r="$nrows" -v t="$tb_s" 'BEGIN { if (r !~ /^[0-9]+$/ || t !~ /^[0-9.]+$/) { print "-"; exit }
                                                     if (t < 0.01) t = 0.01; printf "%.0f", r / t }')
        vs_py=$(ratio "$py_s" "$tb_s") vs_dk=$(ratio "$dk_s" "$tb_s") mem_dk=$(ratio "$dk_rss" "$tb_rss")
        vs_b=$(ratio "$tb_s" "$b_s")
        verdict "$lab" "$vs_py" ">=" 4 "speed-up over json.load"
        verdict "$lab" "$tb_rss" "<" 150 "tracebook RSS MB"
        if [ "$mix" = ascend-device ]; then
            verdict "$lab" "$vs_py" ">=" 8 "target: speed-up over json.load"
            if [ -z "$duck_note" ]; then
                verdict "$lab" "$vs_dk" ">=" 3 "target: speed-up over DuckDB read_json"
                verdict "$lab" "$mem_dk" ">=" 8 "target: DuckDB RSS / tracebook RSS"
            fi
        fi
    else
        verdicts+=("SKIP $lab: speed-up >= 4 and RSS < 150 MB (tracebook not built)")
    fi
    rows+=("$(printf '%-18s %9s %7s %7s %8s %7s %8s %7s %8s %8s %11s %7s %6s %6s %6s %7s %6s' \
        "$lab" "$n" "$mb" "$py_s" "$py_rss" "$dk_s" "$dk_rss" "$tb_s" "$tb_rss" "$nrows" "$rps" "$mbs" \
        "$vs_py" "$vs_dk" "$mem_dk" "$b_s" "$vs_b")")
    cpu_rows+=("$(printf '%-18s %8s %8s %8s %11s %11s' "$lab" "$py_cpu" "$dk_cpu" "$tb_cpu" \
        "$(ratio "$py_cpu" "$tb_cpu")" "$(ratio "$dk_cpu" "$tb_cpu")")")
    rm -f "$f"
}

# hta_path LABEL LOAD_S LOAD_RSS: HTA's three reports over TMP/out.db in one run, after the load
hta_path() {
    local r_s=FAIL r_rss=FAIL
    rm -rf "$tmp/hta"
    if /usr/bin/time -v -o "$tmp/hta.time" "$tb" report -q -dir "$tmp/out.db" --spec builtin:temporal_breakdown \
        --spec builtin:comm_comp_overlap --spec builtin:idle_time_breakdown -o "$tmp/hta" >/dev/null 2>"$tmp/hta.err"; then
        r_s=$(wall "$tmp/hta.time") r_rss=$(rss "$tmp/hta.time")
    else
        echo "bench.sh: error: the HTA reports failed: $(head -c 300 "$tmp/hta.err")" >&2
        status=1
    fi
    rm -rf "$tmp/hta"
    local total h_s=- h_rss=- vs_h=-
    total=$(awk -v a="$2" -v b="$r_s" 'BEGIN { if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/) print "-"; else printf "%.2f", a + b }')
    echo "$1: HTA path: load $2 s + temporal_breakdown, comm_comp_overlap, idle_time_breakdown $r_s s, peak RSS $3 / $r_rss MB"
    if [ -n "$hta_py" ]; then
        if /usr/bin/time -v -o "$tmp/htapy.time" "$hta_py" "$here/hta_peer.py" "$HTA_DIR" "$tmp/kineto" \
            >"$tmp/htapy.out" 2>"$tmp/htapy.err"; then
            h_s=$(wall "$tmp/htapy.time") h_rss=$(rss "$tmp/htapy.time")
            echo "$1: HTA itself $h_s s, $h_rss MB RSS ($(cat "$tmp/htapy.out"))"
        else
            echo "bench.sh: note: HTA failed on $tmp/kineto: $(tail -c 300 "$tmp/htapy.err")" >&2
            h_s=FAIL h_rss=FAIL
        fi
        vs_h=$(ratio "$h_s" "$total")
        verdict "$1" "$vs_h" ">=" 20 "target: HTA's seconds / the HTA path's"
    fi
    hta_rows+=("$(printf '%-18s %8s %9s %8s %9s %8s %8s %8s %7s' "$1" "$2" "$r_s" "$total" "$3" "$r_rss" \
        "$h_s" "$h_rss" "$vs_h")")
}

# ranks MIX N: R ranks of N events each, loaded together
ranks() {
    local mix=$1 n=$2 lab rd r rbytes rmb rpy_s=- rpy_rss=- par_s=FAIL par_rss=FAIL seq_s=FAIL seq_rss=FAIL
    local same=- vs_seq vs_py dirs=() traces=() args=() mixarg=()
    lab="$(label "$n") $mix"
    rd=$tmp/ranks
    rm -rf "$rd"
    mkdir -p "$rd"
    if [ "$mix" != kineto ]; then
        [ "$mix" = ascend ] || mixarg=(--mix device)
        if ! "$gen" --kind torch_npu_dir "${mixarg[@]}" --events "$n" --seed 1 --ranks "$nranks" -o "$rd" >/dev/null; then
            echo "bench.sh: error: generator failed for $nranks ranks of $n events" >&2
            exit 1
        fi
        for ((r = 0; r < nranks; r++)); do
            dirs+=("$rd/rank${r}_ascend_pt")
            traces+=("$rd/rank${r}_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json")
        done
    else
        for ((r = 0; r < nranks; r++)); do
            mkdir -p "$rd/rank$r"
            if ! "$gen" --kind kineto --events "$n" --seed $((1 + r)) --ranks "$nranks" --rank "$r" \
                -o "$rd/rank$r/trace.json"; then
                echo "bench.sh: error: generator failed for rank $r of $n events" >&2
                exit 1
            fi
            dirs+=("$rd/rank$r")
            traces+=("$rd/rank$r/trace.json")
        done
    fi
    rbytes=$(du -cb "${dirs[@]}" | tail -1 | cut -f1)
    rmb=$(awk -v b="$rbytes" 'BEGIN { printf "%.1f", b / 1e6 }')
    echo "$lab x $nranks ranks: generated $rmb MB"
    if /usr/bin/time -v -o "$tmp/rpy.time" python3 -c \
        'import json,sys; [json.load(open(p)) for p in sys.argv[1:]]' "${traces[@]}"; then
        rpy_s=$(wall "$tmp/rpy.time") rpy_rss=$(rss "$tmp/rpy.time")
    else
        echo "bench.sh: error: python3 json.load failed on the rank traces" >&2
        status=1
    fi
    for d in "${dirs[@]}"; do args+=(-dir "$d"); done
    if /usr/bin/time -v -o "$tmp/par.time" "$tb" export db "${args[@]}" -o "$tmp/par.db" --quiet \
        >/dev/null 2>"$tmp/tb.err"; then
        par_s=$(wall "$tmp/par.time") par_rss=$(rss "$tmp/par.time")
    else
        echo "bench.sh: error: tracebook export db failed on $nranks ranks:" >&2
        head -5 "$tmp/tb.err" >&2
        status=1
    fi
    if TRACEBOOK_JOBS=1 /usr/bin/time -v -o "$tmp/seq.time" "$tb" export db "${args[@]}" -o "$tmp/seq.db" \
        --quiet >/dev/null 2>"$tmp/tb.err"; then
        seq_s=$(wall "$tmp/seq.time") seq_rss=$(rss "$tmp/seq.time")
    else
        echo "bench.sh: error: TRACEBOOK_JOBS=1 tracebook export db failed on $nranks ranks:" >&2
        head -5 "$tmp/tb.err" >&2
        status=1
    fi
    if command -v sqlite3 >/dev/null && [ -f "$tmp/par.db" ] && [ -f "$tmp/seq.db" ]; then
        if cmp -s <(sqlite3 "$tmp/par.db" .dump) <(sqlite3 "$tmp/seq.db" .dump); then same=yes; else same=NO; status=1; fi
    fi
    vs_seq=$(ratio "$seq_s" "$par_s") vs_py=$(ratio "$rpy_s" "$par_s")
    echo "$lab x $nranks ranks: parallel $par_s s, $par_rss MB RSS; one after the other $seq_s s, $seq_rss MB RSS"
    rank_rows+=("$(printf '%-18s %5s %9s %9s %12s %10s %11s %10s %11s %8s %8s %5s' \
        "$lab" "$nranks" "$rmb" "$rpy_s" "$rpy_rss" "$par_s" "$par_rss" "$seq_s" "$seq_rss" "$vs_seq" "$vs_py" \
        "$same")")
    verdict "$lab x $nranks ranks" "$par_rss" "<" 150 "tracebook RSS MB"
    rm -rf "$rd" "$tmp/par.db" "$tmp/seq.db"
}

for mix in "${mixes[@]}"; do
    for n in "${sizes[@]}"; do
        one_trace "$mix" "$n"
        if [ "$nranks" -ge 2 ] && [ -n "$tb" ]; then
            ranks "$mix" "$n"
        fi
    done
done

echo
printf '%-18s %9s %7s %7s %8s %7s %8s %7s %8s %8s %11s %7s %6s %6s %6s %7s %6s\n' \
    size_mix events MB json_s json_MB duck_s duck_MB tb_s tb_MB rows rows/s MB/s vs_json vs_duck \
    mem_duck bound_s vs_bound
for r in "${rows[@]}"; do echo "$r"; done
echo
# CPU seconds (user + system, every thread): steadier than wall time on a shared machine
printf '%-18s %8s %8s %8s %11s %11s\n' size_mix json_cpu duck_cpu tb_cpu cpu_vs_json cpu_vs_duck
for r in "${cpu_rows[@]}"; do echo "$r"; done
echo
if [ ${#hta_rows[@]} -gt 0 ]; then
    printf '%-18s %8s %9s %8s %9s %8s %8s %8s %7s\n' size_mix load_s reports_s total_s load_MB rep_MB \
        hta_s hta_MB vs_hta
    for r in "${hta_rows[@]}"; do echo "$r"; done
    echo
fi
if [ ${#rank_rows[@]} -gt 0 ]; then
    printf '%-18s %5s %9s %9s %12s %10s %11s %10s %11s %8s %8s %5s\n' \
        size_mix ranks MB python_s python_RSS_MB par_s par_RSS_MB seq_s seq_RSS_MB vs_seq vs_py same
    for r in "${rank_rows[@]}"; do echo "$r"; done
    echo
fi
for v in "${verdicts[@]}"; do echo "$v"; done
exit $status
