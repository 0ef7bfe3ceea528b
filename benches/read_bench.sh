#!/usr/bin/env bash
# Read-path bench (issue 24): imports the first LINES lines of TPC-H lineitem CSV into a table
# (benches/lineitem.toml: SNAPPY, ROW Bloom, 16 regions) and runs benches/read_path.rs on it,
# pinned to one core: file scan, table scan, `hfkit scan --format cells`, gets of present and
# absent rows, `hfkit get --rows-from`, in CPU time, with ratios in the same run. Then, when
# `rocksdict` is installed, benches/peer_rocksdb_read.py on the same cells.
#
# Usage: benches/read_bench.sh [CSV] [LINES] [WORKDIR]
#   CSV default /work/bench/csv/lineitem.csv; LINES default 600001 (600,000 rows: 9.6M cells);
#   WORKDIR default /tmp/hfkit-read-bench (the table is kept there and reused for the same LINES).
#   HFKIT_BENCH_ONLY=scan: the scans only (no gets, no RocksDB peer); =gets: the gets only;
#   HFKIT_BENCH_GETS=present,one: only the get sets whose names hold every word given.
set -euo pipefail
cd "$(dirname "$0")/.."
CSV=${1:-/work/bench/csv/lineitem.csv}
LINES=${2:-600001}
W=${3:-/tmp/hfkit-read-bench}
CPU=${BENCH_CPU:-1}
cargo build --release --quiet --bin hfkit
B=${CARGO_TARGET_DIR:-$PWD/target}/release/hfkit
mkdir -p "$W"
T="$W/lineitem-$LINES"
if [ ! -f "$T/CURRENT" ]; then
  rm -rf "$T"
  head -n "$LINES" "$CSV" > "$W/sample.csv"
  "$B" import --schema benches/lineitem.toml "$W/sample.csv" --table "$T" --quiet
  rm -f "$W/sample.csv"
fi
# The release profile (not `cargo bench`'s): shares the hfkit binary's build.
BENCH=$(cargo build --release --bench read_path --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "read_path" and m.get("executable"):
        print(m["executable"])')
HFKIT_BENCH_TABLE=$T HFKIT_BIN=$B taskset -c "$CPU" "$BENCH" --bench
if [ "${HFKIT_BENCH_ONLY:-}" != scan ] && python3 -c 'import rocksdict' 2>/dev/null && [ -f benches/peer_rocksdb_read.py ]; then
  taskset -c "$CPU" python3 benches/peer_rocksdb_read.py "$B" "$T"
fi
