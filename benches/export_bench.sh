#!/usr/bin/env bash
# Row-export bench (issue 24): a table imported from the first LINES lines of TPC-H lineitem CSV
# (benches/lineitem.toml: SNAPPY, ROW Bloom, 16 regions), then `hfkit export --rows --threads 1` to CSV and to
# Parquet, each run in turn with the import (`--out`) of the same lines by benches/ab.py, pinned to
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
IMPORT="rm -rf $W/imp; exec $B import --schema $S $W/sample.csv --out $W/imp --quiet"
for fmt in csv parquet; do
  out="$W/out.$fmt"
  benches/ab.py -n "$RUNS" --cpu "$CPU" --json --b "$IMPORT" \
    --a "rm -f $out; exec $B export $W/table --format $fmt --rows --schema $S --to $out --threads 1" |
    tee "$W/ab-$fmt.txt"
  python3 - "$W/ab-$fmt.txt" "$CELLS" "$fmt" <<'EOF'
import json, sys
fig = json.loads(open(sys.argv[1]).read().splitlines()[-1])
cells = int(sys.argv[2])
a, b = fig["a"]["cpu"], fig["b"]["cpu"]
print(f"export {sys.argv[3]}: {cells} cells, {a:.3f} CPU-s, {cells / a / 1e6:.2f}M cells per CPU-second; "
      f"import --out {b:.3f} CPU-s, {cells / b / 1e6:.2f}M; export/import (cells per CPU-s) {b / a:.2f}")
EOF
done
rm -rf "$W/imp" "$W"/out.* "$W/sample.csv"
