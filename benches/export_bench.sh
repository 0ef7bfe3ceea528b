#!/usr/bin/env bash
# Row-export bench (issue 24): a table imported from the first LINES lines of TPC-H lineitem CSV
# (benches/lineitem.toml: SNAPPY, ROW Bloom, 16 regions), then `hfkit export --rows` to CSV and to
# Parquet, each run by farm-bench in turn with the import (`--out`) of the same lines, pinned to
# one core: CPU seconds (user + sys, medians), cells per CPU-second of each, and export/import.
# The table's cells are the export's cells and the import's (every line gives its 16 cells).
#
# Usage: benches/export_bench.sh [CSV] [LINES] [WORKDIR] [HFKIT]
#   CSV default /work/bench/csv/lineitem.csv; LINES default 947137 (947,136 rows: 15.2M cells);
#   WORKDIR default /tmp/hfkit-export-bench; HFKIT default: this checkout's release build.
#   BENCH_CPU (default 1) is the core; RUNS (default 5) the runs of each command.
set -euo pipefail
cd "$(dirname "$0")/.."
CSV=${1:-/work/bench/csv/lineitem.csv}
LINES=${2:-947137}
W=${3:-/tmp/hfkit-export-bench}
B=${4:-}
CPU=${BENCH_CPU:-1}
RUNS=${RUNS:-5}
S=$PWD/benches/lineitem.toml
if [ -z "$B" ]; then
  cargo build --release --quiet --bin hfkit
  B=$PWD/target/release/hfkit
fi
mkdir -p "$W"
head -n "$LINES" "$CSV" > "$W/sample.csv"
rm -rf "$W/table"
"$B" import --schema "$S" "$W/sample.csv" --table "$W/table" --quiet
CELLS=$("$B" export "$W/table" --format csv --rows --schema "$S" --to "$W/check.csv" --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["cells"])')
rm -f "$W/check.csv"
IMPORT="sh -c 'rm -rf $W/imp; exec $B import --schema $S $W/sample.csv --out $W/imp --quiet'"
for fmt in csv parquet; do
  out="$W/out.$fmt"
  farm-bench -n "$RUNS" --pin "$CPU" --timeout 1200 --vs "$IMPORT" -- \
    sh -c "rm -f $out; exec $B export $W/table --format $fmt --rows --schema $S --to $out" |
    tee "$W/farm-$fmt.txt"
  python3 - "$W/farm-$fmt.txt" "$CELLS" "$fmt" <<'EOF'
import sys
rows = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) >= 5 and p[1] == "cpu" and p[2] == "s":
        rows[p[0]] = float(p[4])  # the median
cells = int(sys.argv[2])
a, b = rows["A"], rows["B"]
print(f"export {sys.argv[3]}: {cells} cells, {a:.3f} CPU-s, {cells / a / 1e6:.2f}M cells per CPU-second; "
      f"import --out {b:.3f} CPU-s, {cells / b / 1e6:.2f}M; export/import (cells per CPU-s) {b / a:.2f}")
EOF
done
rm -rf "$W/imp" "$W"/out.* "$W/sample.csv"
