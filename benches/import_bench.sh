#!/usr/bin/env bash
# End-to-end import bench: TPC-H lineitem (scale factor $SF, default 1) from CSV and Parquet into
# SNAPPY HFiles (benches/lineitem.toml), with 1 and 2 threads, beside the machine's floors
# (CSV parsing alone, Snappy alone) measured in the same run. Needs `pip install tpchgen-cli`.
#
# lineitem.toml's row key (salt bucket = region, then the zero-padded order key) reaches every
# region in order, so by default each store is a lane written straight to its file. The
# `sorted` runs (--no-lanes) send every cell through the sort and spill path instead, as an
# input in no useful order would; the `64MiB` runs show the memory bound (with --no-lanes the
# run spills). Every run must give the same cells: one digest per region's files, compared.
# Each line gives cells/s of wall time and cells per CPU-second (user + system time), the rate
# per core actually used: with 2 threads the two differ by the time threads waited.
#
# Usage: benches/import_bench.sh [WORKDIR]   (default /tmp/hfkit-bench; needs ~6 GB free per SF)
set -euo pipefail
cd "$(dirname "$0")/.."
SF=${SF:-1}
W=${1:-/tmp/hfkit-bench}
mkdir -p "$W"
command -v tpchgen-cli >/dev/null || { echo "install tpchgen-cli: pip install tpchgen-cli" >&2; exit 1; }
[ -f "$W/csv/lineitem.csv" ] || tpchgen-cli csv -s "$SF" --tables=lineitem --output-dir="$W/csv"
[ -f "$W/pq/lineitem.parquet" ] || tpchgen-cli parquet -s "$SF" --tables=lineitem --output-dir="$W/pq"
cargo build --release --quiet --bin hfkit --example import_floors --example cells_digest
B=target/release/hfkit

# run NAME INPUT THREADS MEMORY [FLAGS...]
run() {
  local name=$1 input=$2 t=$3 mem=$4; shift 4
  local out="$W/out-$name"; rm -rf "$out"
  /usr/bin/time -v "$B" import --schema benches/lineitem.toml "$W/$input" --out "$out" --threads "$t" \
    --memory "$mem" --quiet --report "$out.json" "$@" 2> "$out.time"
  python3 - "$out.json" "$out.time" "$name" <<'PY'
import json, sys, re
r = json.load(open(sys.argv[1])); tm = open(sys.argv[2]).read()
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", tm).group(1)) * 1024
cpu = re.search(r"Percent of CPU this job got: (\d+)%", tm).group(1)
# Per core: cells per second of CPU the run used (user + system), which does not count the
# time its threads waited (for each other, or for the disk) or a core the machine did not give.
cpu_s = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", tm).group(1)) for k in ("User", "System"))
print(f"{sys.argv[3]:<18} {r['cells']} cells in {r['wall_seconds']:6.1f}s = {r['cells']/r['wall_seconds']/1e6:5.2f}M cells/s, "
      f"{r['cells']/cpu_s/1e6:4.2f}M per CPU-second, "
      f"{r['input_bytes']/r['wall_seconds']/1e6:5.1f} MB/s input, CPU {cpu}%, peak RSS {rss/2**20:5.0f} MiB, "
      f"out {r['output_bytes']/1e6:.0f} MB in {r['files']} files, streamed {r['streamed_cells']}, "
      f"spilled runs {r['spilled_runs']}")
PY
}

run csv-1 csv/lineitem.csv 1 4GB
run csv-2 csv/lineitem.csv 2 4GB
run parquet-1 pq/lineitem.parquet 1 4GB
run parquet-2 pq/lineitem.parquet 2 4GB
run csv-sorted-1 csv/lineitem.csv 1 4GB --no-lanes
run csv-sorted-2 csv/lineitem.csv 2 4GB --no-lanes
run csv-64MiB-2 csv/lineitem.csv 2 64MiB
run csv-64MiB-sorted-2 csv/lineitem.csv 2 64MiB --no-lanes

for f in "$W"/out-csv-1/l/*; do "$B" hfile verify "$f" > /dev/null; done && echo "every output file of csv-1 verifies"
# The same cells everywhere: per file (names differ), the CRC32C of its cells, in row order.
RUNS="csv-1 csv-2 parquet-1 parquet-2 csv-sorted-1 csv-sorted-2 csv-64MiB-2 csv-64MiB-sorted-2"
printf '%s\n' $RUNS | W="$W" xargs -P 2 -I{} sh -c 'target/release/examples/cells_digest "$W/out-{}" > "$W/out-{}.digests"'
for name in $RUNS; do
  cmp -s "$W/out-csv-1.digests" "$W/out-$name.digests" || { echo "$name: cells differ from csv-1" >&2; exit 1; }
done
echo "all runs wrote the same cells ($(wc -l < "$W/out-csv-1.digests") files, $(awk '{n+=$2} END {print n}' "$W/out-csv-1.digests") cells)"
target/release/examples/import_floors "$W/csv/lineitem.csv" "$W/out-csv-1"
