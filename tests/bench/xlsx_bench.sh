#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# xlsx_bench.sh - what a workbook with a report of more than a million rows
# costs (target: peak RSS under 200 MB, thanks to libxlsxwriter's
# constant-memory mode), and how fast it is written against its bound and
# its peer (target: 5x Python's XlsxWriter).
#
# It loads samples/ascend_small into a DB (`tracebook export db`, into a
# temporary directory under $TMPDIR, removed at exit), then runs one report
# whose SQL makes ROWS rows (a recursive CTE: a row number, a text, a time
# column and a ratio column) to `--format xlsx` under /usr/bin/time -v, and
# prints the wall time, the CPU time (user + system), the peak RSS, the
# workbook's size and its sheets (About, the report's sheet and its
# continuation "<title> (2)" once the rows pass Excel's 1,048,576). Then, on
# the same cells:
#   - the bound: tools/bench/tracebook-xlsx-bound, libxlsxwriter alone
#     writing those cells with the same options and formats (no SQL, no
#     sink, no cleaning), and whether its cells are the report's (values and
#     types; style numbers aside);
#   - the peer, where Python's XlsxWriter is installed (python3 on PATH, or
#     Debian's /usr/bin/python3 with python3-xlsxwriter): xlsx_peer.py in
#     XlsxWriter's default mode and in its constant_memory mode;
#   - the SQL alone: the same report's SQL, its rows summed by SQLite into
#     one row (every column computed, nothing written but a one-row CSV):
#     what SQLite takes to make the cells, which no writer of them saves;
# and a table of wall and CPU seconds, peak RSS and ratios: Python's CPU
# and wall time (the faster of its two modes) over each writer's, and
# tracebook's CPU over the bound's and over the bound's plus the SQL's. Last, the verdicts: PASS/FAIL peak RSS
# < 200 MB, and PASS/FAIL Python's XlsxWriter CPU >= 5x tracebook's (SKIP
# without XlsxWriter). Wall time suffers when other processes share the
# CPUs; CPU time much less.
#
# It prints figures; it is not a unit test. Exit status is 0 unless a command
# fails (tracebook, the bound or Python); a missed target is reported.
#
# usage: tests/bench/xlsx_bench.sh [BUILD_DIR] [ROWS]
#   defaults: BUILD_DIR build, ROWS 1200000
# Needs /usr/bin/time from Debian's `time` package (apt-get install time).

set -u -o pipefail

build=${1:-build}
rows=${2:-1200000}
root=$(cd "$(dirname "$0")/../.." && pwd)
exe=$(cd "$build" 2>/dev/null && pwd)/tracebook
[ -x "$exe" ] || { echo "xlsx_bench.sh: error: no tracebook in '$build' (build it first)" >&2; exit 2; }
[[ $rows =~ ^[0-9]+$ ]] || { echo "xlsx_bench.sh: error: ROWS must be a number, got '$rows'" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "xlsx_bench.sh: error: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/xlsx_bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/cache

"$exe" export db -dir "$root/samples/ascend_small" -o "$work/run.db" >/dev/null 2>&1 ||
    { echo "xlsx_bench.sh: error: loading samples/ascend_small failed" >&2; exit 1; }

cat >"$work/rows.yaml" <<'EOF'
tracebook: 1
outputs: xlsx
reports:
  - id: rows
    title: Many rows
    params: {rows: 1200000}
    sql: |
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :rows)
      SELECT i AS "Row", 'kernel_' || (i % 97) AS "Name", i * 1234 AS "Time:dur_ns",
             (i % 10000) / 100.0 AS "Share:ratio_%"
      FROM n
EOF

cat >"$work/rows_sql.yaml" <<'EOF'
tracebook: 1
outputs: csv
reports:
  - id: rows_sql
    title: Many rows, the SQL alone
    params: {rows: 1200000}
    sql: |
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :rows)
      SELECT count(*) AS "Rows", sum(r) AS "Row sum", sum(length(name)) AS "Name bytes", sum(t) AS "Time sum",
             sum(s) AS "Share sum"
      FROM (SELECT i AS r, 'kernel_' || (i % 97) AS name, i * 1234 AS t, (i % 10000) / 100.0 AS s FROM n)
EOF

/usr/bin/time -v -o "$work/time.txt" "$exe" report -dir "$work/run.db" --spec "$work/rows.yaml" \
    --param "rows=$rows" -o "$work/out" >/dev/null 2>"$work/stderr.txt" ||
    { cat "$work/stderr.txt" >&2; echo "xlsx_bench.sh: error: the report failed" >&2; exit 1; }

# wall s, CPU s (user + system), peak RSS MB of a /usr/bin/time -v file
times() {
    awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + t[i] }
                /User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident/ { m = $2 }
                END { printf "%.2f %.2f %.1f\n", w, u + s, m / 1024 }' "$1"
}

read -r tb_wall tb_cpu tb_rss < <(times "$work/time.txt")

# the SQL alone
/usr/bin/time -v -o "$work/sql_time.txt" "$exe" report -dir "$work/run.db" --spec "$work/rows_sql.yaml" \
    --param "rows=$rows" -o "$work/sql" >/dev/null 2>"$work/stderr.txt" ||
    { cat "$work/stderr.txt" >&2; echo "xlsx_bench.sh: error: the SQL-alone report failed" >&2; exit 1; }
read -r sq_wall sq_cpu sq_rss < <(times "$work/sql_time.txt")
rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
size=$(stat -c %s "$work/out/tracebook.xlsx")
sheets=$(python3 - "$work/out/tracebook.xlsx" <<'EOF'
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = re.findall(r'<sheet name="([^"]*)"', z.read("xl/workbook.xml").decode())
print("%d (%s)" % (len(names), ", ".join(names)))
EOF
)

printf 'rows          %s\n' "$rows"
printf 'wall          %s s\n' "$tb_wall"
printf 'CPU           %s s\n' "$tb_cpu"
printf 'peak RSS      %d MB\n' $((rss_kb / 1024))
printf 'workbook      %d MB\n' $((size / 1024 / 1024))
printf 'sheets        %s\n' "$sheets"

# the bound: libxlsxwriter alone, the same cells
bound_exe=$(cd "$build" && pwd)/tools/bench/tracebook-xlsx-bound
[ -x "$bound_exe" ] || { echo "xlsx_bench.sh: error: no tools/bench/tracebook-xlsx-bound in '$build' (build it first)" >&2; exit 2; }
mkdir -p "$work/bound"
/usr/bin/time -v -o "$work/bound_time.txt" "$bound_exe" "$work/bound/bound.xlsx" "$rows" >"$work/bound.txt" ||
    { echo "xlsx_bench.sh: error: tracebook-xlsx-bound failed" >&2; exit 1; }
read -r bd_wall bd_cpu bd_rss < <(times "$work/bound_time.txt")
same=$(python3 - "$work/out/tracebook.xlsx" "$work/bound/bound.xlsx" <<'EOF'
# the rows of every report sheet (header included), style numbers aside
import hashlib, re, sys, zipfile
def cells(path):
    h = hashlib.sha256()
    with zipfile.ZipFile(path) as z:
        book = z.read("xl/workbook.xml").decode()
        for name, rid in re.findall(r'<sheet name="([^"]*)" sheetId="\d+" r:id="rId(\d+)"', book):
            if name.startswith("Many rows"):
                xml = z.read("xl/worksheets/sheet%s.xml" % rid).decode()
                data = xml[xml.index("<sheetData>"):xml.index("</sheetData>")]
                h.update(re.sub(r' s="\d+"', "", data).encode())
    return h.hexdigest()
print("yes" if cells(sys.argv[1]) == cells(sys.argv[2]) else "NO")
EOF
)
printf 'bound         %s (the same cells as the report: %s)\n' "$(cat "$work/bound.txt")" "$same"
rm -f "$work/bound/bound.xlsx"

# the peer: Python's XlsxWriter, both modes
py=
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import xlsxwriter' 2>/dev/null; then
        py=$p
        break
    fi
done
declare -A pw pc pr
if [ -n "$py" ]; then
    for mode in default constant_memory; do
        /usr/bin/time -v -o "$work/py_$mode.txt" "$py" "$root/tests/bench/xlsx_peer.py" "$work/py_$mode.xlsx" "$rows" "$mode" ||
            { echo "xlsx_bench.sh: error: xlsx_peer.py $mode failed" >&2; exit 1; }
        read -r "pw[$mode]" "pc[$mode]" "pr[$mode]" < <(times "$work/py_$mode.txt")
        rm -f "$work/py_$mode.xlsx"
    done
else
    echo "note: no Python XlsxWriter (python3 -c 'import xlsxwriter' fails; Debian: apt-get install python3-xlsxwriter): the peer columns say -"
fi

# the faster Python mode's figure (by CPU) over v
over() { # which(c|w) v
    [ -n "$py" ] || { echo -; return; }
    local m
    m=$(awk -v a="${pc[default]}" -v b="${pc[constant_memory]}" 'BEGIN { print (b < a ? "constant_memory" : "default") }')
    local p=${pc[$m]}
    [ "$1" = w ] && p=${pw[$m]}
    awk -v p="$p" -v v="$2" 'BEGIN { printf "%.2fx", (v > 0 ? p / v : 0) }'
}

echo
printf '%-32s %8s %8s %8s %10s %10s\n' writer wall_s cpu_s rss_MB py_cpu/cpu py_wall/wall
printf '%-32s %8s %8s %8s %10s %10s\n' "tracebook report --format xlsx" "$tb_wall" "$tb_cpu" "$tb_rss" "$(over c "$tb_cpu")" "$(over w "$tb_wall")"
printf '%-32s %8s %8s %8s %10s %10s\n' "tracebook-xlsx-bound" "$bd_wall" "$bd_cpu" "$bd_rss" "$(over c "$bd_cpu")" "$(over w "$bd_wall")"
if [ -n "$py" ]; then
    for mode in default constant_memory; do
        printf '%-32s %8s %8s %8s %10s %10s\n' "XlsxWriter $mode" "${pw[$mode]}" "${pc[$mode]}" "${pr[$mode]}" - -
    done
fi
printf '%-32s %8s %8s %8s %10s %10s\n' "SQL alone (tracebook, csv)" "$sq_wall" "$sq_cpu" "$sq_rss" - -
awk -v t="$tb_cpu" -v b="$bd_cpu" -v q="$sq_cpu" 'BEGIN { if (b > 0) printf "tracebook CPU / bound CPU: %.2f; / (bound + SQL alone) CPU: %.2f\n", t / b, t / (b + q) }'
echo
if [ "$rss_kb" -lt $((200 * 1024)) ]; then
    echo "PASS peak RSS under 200 MB"
else
    echo "FAIL peak RSS $((rss_kb / 1024)) MB, over 200 MB"
fi
if [ -n "$py" ]; then
    r=$(over c "$tb_cpu")
    r=${r%x}
    verdict=$(awk -v r="$r" 'BEGIN { print (r >= 5 ? "PASS" : "FAIL") }')
    echo "$verdict Python XlsxWriter CPU / tracebook CPU $r >= 5 (the bound alone: $(over c "$bd_cpu"))"
else
    echo "SKIP Python XlsxWriter CPU / tracebook CPU >= 5 (no XlsxWriter)"
fi
