#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench.sh - how fast and how lean `tracebook export db` loads a big trace,
# against the Python baseline of json.load on the same file.
#
# For each size it writes a synthetic trace with tools/gen/tracebook-gen (seed 1)
# into a temporary directory (under $TMPDIR, removed at exit), then times with
# /usr/bin/time -v:
#   python3 -c 'import json,sys; json.load(open(sys.argv[1]))' FILE
#   BUILD/tracebook export db -dir FILE -o TMP/out.db --quiet
# and prints wall seconds and peak RSS of each, the speed-up (python s /
# tracebook s) and tracebook's throughput in MB/s, then one PASS/FAIL line per
# target: speed-up >= 4 and tracebook peak RSS < 150 MB.
#
# Then, per size, a multi-rank case (--ranks R, default 2; 0 skips it): R
# generated ranks of N events each, loaded together. For --kind ascend these
# are the torch_npu rank directories of `tracebook-gen --kind torch_npu_dir`
# (trace_view.json, kernel_details.csv, step_trace_time.csv each); for kineto,
# one trace per rank (--rank r) in a directory of its own. It times
#   python3 json.load of every rank's trace, one after the other
#   BUILD/tracebook export db -dir RANK0 -dir RANK1 ... (ranks in parallel)
#   the same with TRACEBOOK_JOBS=1 (one rank after the other)
# and prints a second table: wall seconds and peak RSS of each, the parallel
# speed-up over TRACEBOOK_JOBS=1 and over Python, and whether both DBs hold
# the same rows (they must: sqlite3 dumps compared, when sqlite3 is there).
#
# It prints figures; it is not a unit test. Exit status is 0 unless a command
# fails (the generator, python, or tracebook on a trace). When the tracebook
# binary is not built yet its columns say "-" and its targets are skipped.
#
# usage: tests/bench/bench.sh [--kind ascend|kineto] [--ranks R] [BUILD_DIR] [SIZES...]
#   defaults: --kind ascend, --ranks 2, BUILD_DIR build, SIZES 1000000 5000000
# MB = 10^6 bytes for file sizes and throughput; RSS MB = 2^20 bytes. Times
# are /usr/bin/time's wall clock (10 ms resolution; below that counts as 10 ms).
# Needs /usr/bin/time from Debian's `time` package (apt-get install time).

set -u -o pipefail

kind=ascend
nranks=2
build=
sizes=()

usage() {
    sed -n 's/^# \{0,1\}//; /^usage:/,/^Needs/p' "$0"
}

while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --kind) [ $# -ge 2 ] || { echo "bench.sh: error: --kind needs a value" >&2; exit 2; }
        kind=$2; shift 2; continue ;;
    --kind=*) kind=${1#--kind=} ;;
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
case "$kind" in
ascend) trace_name=trace_view.json ;;
kineto) trace_name=trace.json ;;
*) echo "bench.sh: error: --kind must be ascend or kineto '$kind'" >&2; exit 2 ;;
esac
[[ $nranks =~ ^[0-9]+$ ]] || { echo "bench.sh: error: --ranks must be a number '$nranks'" >&2; exit 2; }
build=${build:-build}
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 5000000)

gen=$build/tools/gen/tracebook-gen
tb=
for c in "$build/tracebook" "$build/engine/cli/tracebook"; do
    if [ -x "$c" ]; then tb=$c; break; fi
done
if [ ! -x "$gen" ]; then
    echo "bench.sh: error: generator not built '$gen' (meson compile -C $build)" >&2
    exit 1
fi
if [ ! -x /usr/bin/time ]; then
    echo "bench.sh: error: /usr/bin/time not found (apt-get install time)" >&2
    exit 1
fi
command -v python3 >/dev/null || { echo "bench.sh: error: python3 not found" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracebook-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# seconds from /usr/bin/time's "Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02.34"
wall() {
    sed -n 's/.*Elapsed (wall clock) time.*): //p' "$1" |
        awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }'
}
# MB (2^20 bytes) from "Maximum resident set size (kbytes): 123456"
rss() {
    sed -n 's/.*Maximum resident set size (kbytes): //p' "$1" | awk '{ printf "%.1f", $1 / 1024 }'
}
label() {
    awk -v n="$1" 'BEGIN { if (n % 1000000 == 0) printf "%dM", n / 1000000;
                           else if (n % 1000 == 0) printf "%dk", n / 1000; else printf "%d", n }'
}

status=0
rows=()
rank_rows=()
verdicts=()
echo "tracebook bench: kind $kind, generator $gen, tracebook ${tb:-(not built)}, tmp $tmp"
[ -n "$tb" ] || echo "note: no tracebook binary in $build (looked for tracebook, engine/cli/tracebook): its columns are skipped"

for n in "${sizes[@]}"; do
    f=$tmp/$trace_name
    lab=$(label "$n")
    if ! /usr/bin/time -v -o "$tmp/gen.time" "$gen" --kind "$kind" --events "$n" --seed 1 -o "$f"; then
        echo "bench.sh: error: generator failed for $n events" >&2
        exit 1
    fi
    bytes=$(stat -c %s "$f")
    mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
    echo "$lab: generated $n events, $mb MB in $(wall "$tmp/gen.time") s"

    py_s=- py_rss=-
    if /usr/bin/time -v -o "$tmp/py.time" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f"; then
        py_s=$(wall "$tmp/py.time") py_rss=$(rss "$tmp/py.time")
    else
        echo "bench.sh: error: python3 json.load failed on $f" >&2
        status=1
    fi
    echo "$lab: python json.load $py_s s, $py_rss MB RSS"

    tb_s=- tb_rss=- ratio=- mbs=-
    if [ -n "$tb" ]; then
        rm -f "$tmp/out.db"
        if /usr/bin/time -v -o "$tmp/tb.time" "$tb" export db -dir "$f" -o "$tmp/out.db" --quiet \
            2>"$tmp/tb.err"; then
            tb_s=$(wall "$tmp/tb.time") tb_rss=$(rss "$tmp/tb.time")
            if [ "$py_s" != - ]; then
                ratio=$(awk -v p="$py_s" -v t="$tb_s" 'BEGIN { if (t < 0.01) t = 0.01; printf "%.2f", p / t }')
            fi
            mbs=$(awk -v m="$mb" -v t="$tb_s" 'BEGIN { if (t < 0.01) t = 0.01; printf "%.1f", m / t }')
            echo "$lab: tracebook export db $tb_s s, $tb_rss MB RSS"
        else
            echo "bench.sh: error: tracebook export db failed on $n events:" >&2
            head -5 "$tmp/tb.err" >&2
            tb_s=FAIL tb_rss=FAIL
            status=1
        fi
        rm -f "$tmp/out.db"
        if [ "$ratio" != - ]; then
            verdicts+=("$(awk -v r="$ratio" -v l="$lab" 'BEGIN { printf "%s %s: speed-up %.2fx >= 4", (r >= 4 ? "PASS" : "FAIL"), l, r }')")
        else
            verdicts+=("FAIL $lab: speed-up not measured")
        fi
        if [ "$tb_rss" != FAIL ]; then
            verdicts+=("$(awk -v m="$tb_rss" -v l="$lab" 'BEGIN { printf "%s %s: tracebook RSS %.1f MB < 150 MB", (m < 150 ? "PASS" : "FAIL"), l, m }')")
        else
            verdicts+=("FAIL $lab: tracebook RSS not measured")
        fi
    else
        verdicts+=("SKIP $lab: speed-up >= 4 and RSS < 150 MB (tracebook not built)")
    fi
    rows+=("$(printf '%-6s %10s %9s %9s %12s %11s %13s %8s %8s' \
        "$lab" "$n" "$mb" "$py_s" "$py_rss" "$tb_s" "$tb_rss" "$ratio" "$mbs")")
    rm -f "$f"

    # ---- R ranks of n events each, loaded together ----
    if [ "$nranks" -ge 2 ] && [ -n "$tb" ]; then
        rd=$tmp/ranks
        rm -rf "$rd"
        mkdir -p "$rd"
        dirs=() traces=()
        if [ "$kind" = ascend ]; then
            if ! "$gen" --kind torch_npu_dir --events "$n" --seed 1 --ranks "$nranks" -o "$rd" >/dev/null; then
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
        rpy_s=- rpy_rss=-
        if /usr/bin/time -v -o "$tmp/rpy.time" python3 -c \
            'import json,sys; [json.load(open(p)) for p in sys.argv[1:]]' "${traces[@]}"; then
            rpy_s=$(wall "$tmp/rpy.time") rpy_rss=$(rss "$tmp/rpy.time")
        else
            echo "bench.sh: error: python3 json.load failed on the rank traces" >&2
            status=1
        fi
        args=()
        for d in "${dirs[@]}"; do args+=(-dir "$d"); done
        par_s=FAIL par_rss=FAIL seq_s=FAIL seq_rss=FAIL
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
        same=-
        if command -v sqlite3 >/dev/null && [ -f "$tmp/par.db" ] && [ -f "$tmp/seq.db" ]; then
            if cmp -s <(sqlite3 "$tmp/par.db" .dump) <(sqlite3 "$tmp/seq.db" .dump); then same=yes; else same=NO; status=1; fi
        fi
        vs_seq=$(awk -v p="$par_s" -v s="$seq_s" 'BEGIN { if (p == "FAIL" || s == "FAIL") print "-";
                 else { if (p < 0.01) p = 0.01; printf "%.2f", s / p } }')
        vs_py=$(awk -v p="$par_s" -v s="$rpy_s" 'BEGIN { if (p == "FAIL" || s == "-") print "-";
                 else { if (p < 0.01) p = 0.01; printf "%.2f", s / p } }')
        echo "$lab x $nranks ranks: parallel $par_s s, $par_rss MB RSS; one after the other $seq_s s, $seq_rss MB RSS"
        rank_rows+=("$(printf '%-6s %5s %9s %9s %12s %10s %11s %10s %11s %8s %8s %5s' \
            "$lab" "$nranks" "$rmb" "$rpy_s" "$rpy_rss" "$par_s" "$par_rss" "$seq_s" "$seq_rss" "$vs_seq" "$vs_py" \
            "$same")")
        if [ "$par_rss" != FAIL ]; then
            verdicts+=("$(awk -v m="$par_rss" -v l="$lab x $nranks ranks" 'BEGIN { printf "%s %s: tracebook RSS %.1f MB < 150 MB", (m < 150 ? "PASS" : "FAIL"), l, m }')")
        fi
        rm -rf "$rd" "$tmp/par.db" "$tmp/seq.db"
    fi
done

echo
printf '%-6s %10s %9s %9s %12s %11s %13s %8s %8s\n' \
    size events MB python_s python_RSS_MB tracebook_s tracebook_RSS_MB speedup MB/s
for r in "${rows[@]}"; do echo "$r"; done
echo
if [ ${#rank_rows[@]} -gt 0 ]; then
    printf '%-6s %5s %9s %9s %12s %10s %11s %10s %11s %8s %8s %5s\n' \
        size ranks MB python_s python_RSS_MB par_s par_RSS_MB seq_s seq_RSS_MB vs_seq vs_py same
    for r in "${rank_rows[@]}"; do echo "$r"; done
    echo
fi
for v in "${verdicts[@]}"; do echo "$v"; done
exit $status
