#!/usr/bin/env bash
# End-to-end import bench: TPC-H lineitem (scale factor $SF, default 1) from CSV and Parquet into
# SNAPPY HFiles (benches/lineitem.toml), with 1 and 2 threads, beside the machine's floors
# (CSV parsing alone, Snappy alone) measured in the same run. Needs `pip install tpchgen-cli`.
# Usage: benches/import_bench.sh [WORKDIR]   (default /tmp/hfkit-bench; needs ~4 GB free per SF)
set -euo pipefail
cd "$(dirname "$0")/.."
SF=${SF:-1}
W=${1:-/tmp/hfkit-bench}
mkdir -p "$W"
command -v tpchgen-cli >/dev/null || { echo "install tpchgen-cli: pip install tpchgen-cli" >&2; exit 1; }
[ -f "$W/csv/lineitem.csv" ] || tpchgen-cli csv -s "$SF" --tables=lineitem --output-dir="$W/csv"
[ -f "$W/pq/lineitem.parquet" ] || tpchgen-cli parquet -s "$SF" --tables=lineitem --output-dir="$W/pq"
cargo build --release --quiet --bin hfkit --example import_floors
B=target/release/hfkit
for input in csv/lineitem.csv pq/lineitem.parquet; do
  for t in 1 2; do
    out="$W/out-${input%%/*}-$t"; rm -rf "$out"
    /usr/bin/time -v "$B" import --schema benches/lineitem.toml "$W/$input" --out "$out" --threads "$t" \
      --memory "${MEMORY:-4GB}" --quiet --report "$out.json" 2> "$out.time"
    python3 - "$out.json" "$out.time" "$input" "$t" <<'PY'
import json, sys, re
r = json.load(open(sys.argv[1])); tm = open(sys.argv[2]).read()
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", tm).group(1)) * 1024
print(f"{sys.argv[3]} threads={sys.argv[4]}: {r['cells']} cells in {r['wall_seconds']:.1f}s = "
      f"{r['cells']/r['wall_seconds']/1e6:.2f}M cells/s, {r['input_bytes']/r['wall_seconds']/1e6:.1f} MB/s input, "
      f"out {r['output_bytes']/1e6:.0f} MB in {r['files']} files, peak RSS {rss/2**20:.0f} MiB, spilled runs {r['spilled_runs']}")
PY
  done
done
for f in "$W"/out-csv-1/l/*; do "$B" hfile verify "$f" > /dev/null; done && echo "every output file verifies"
target/release/examples/import_floors "$W/csv/lineitem.csv" "$W/out-csv-1"
