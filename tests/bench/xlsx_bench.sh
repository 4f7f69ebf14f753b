#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# xlsx_bench.sh - what a workbook with a report of more than a million rows
# costs (target: peak RSS under 200 MB, thanks to libxlsxwriter's
# constant-memory mode).
#
# It loads samples/ascend_small into a DB (`tracebook export db`, into a
# temporary directory under $TMPDIR, removed at exit), then runs one report
# whose SQL makes ROWS rows (a recursive CTE: a row number, a text, a time
# column and a ratio column) to `--format xlsx` under /usr/bin/time -v, and
# prints the wall time, the peak RSS, the workbook's size and its sheets
# (About, the report's sheet and its continuation "<title> (2)" once the
# rows pass Excel's 1,048,576), then one PASS/FAIL line: peak RSS < 200 MB.
# Wall time suffers when other processes share the CPUs.
#
# It prints figures; it is not a unit test. Exit status is 0 unless a command
# fails.
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

/usr/bin/time -v -o "$work/time.txt" "$exe" report -dir "$work/run.db" --spec "$work/rows.yaml" \
    --param "rows=$rows" -o "$work/out" >/dev/null 2>"$work/stderr.txt" ||
    { cat "$work/stderr.txt" >&2; echo "xlsx_bench.sh: error: the report failed" >&2; exit 1; }

wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
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
printf 'wall          %s\n' "$wall"
printf 'peak RSS      %d MB\n' $((rss_kb / 1024))
printf 'workbook      %d MB\n' $((size / 1024 / 1024))
printf 'sheets        %s\n' "$sheets"
if [ "$rss_kb" -lt $((200 * 1024)) ]; then
    echo "PASS peak RSS under 200 MB"
else
    echo "FAIL peak RSS $((rss_kb / 1024)) MB, over 200 MB"
fi
