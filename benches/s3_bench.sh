#!/usr/bin/env bash
# Object-storage bench: TPC-H lineitem (benches/lineitem.toml) imported to `--out s3://...` on a
# loopback moto server against the same import to a local directory (wall, CPU of hfkit and of
# the server, peak RSS), then the s3:// output attached to an s3:// table (server-side copies
# after one verifying read) and a get and scans of that table with `--stats`: requests and bytes
# per operation, and the full scan against the same scan of a local table. Every run must give
# the same objects: their count is compared with the local output's files and both byte totals
# printed (they may differ by a few bytes: each file's FileInfo records its creation time,
# hfile.CREATE_TIME_TS, and that block is compressed).
#
# moto is a Python server keeping objects in its own process: it is far slower than S3 or MinIO,
# so the s3:// numbers bound hfkit's own cost from above; its CPU is printed beside hfkit's.
#
# Usage: benches/s3_bench.sh [CSV] [WORKDIR]
#   CSV      default /work/bench/csv/lineitem.csv (tpchgen-cli csv -s 1 --tables=lineitem)
#   WORKDIR  default /tmp/hfkit-s3-bench (needs ~1.5 GB, and as much memory or /tmp for moto)
#   THREADS  import threads (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
CSV=${1:-/work/bench/csv/lineitem.csv}
W=${2:-/tmp/hfkit-s3-bench}
THREADS=${THREADS:-2}
command -v moto_server >/dev/null || { echo "install moto: pip install 'moto[server]'" >&2; exit 1; }
[ -f "$CSV" ] || { echo "$CSV: not found (tpchgen-cli csv -s 1 --tables=lineitem)" >&2; exit 1; }
rm -rf "$W"; mkdir -p "$W"
cargo build --release --quiet --bin hfkit
B=${CARGO_TARGET_DIR:-$PWD/target}/release/hfkit

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
moto_server -H 127.0.0.1 -p "$PORT" > "$W/moto.log" 2>&1 &
MOTO=$!
trap 'kill $MOTO 2>/dev/null' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
curl -sf -o /dev/null -X PUT "http://127.0.0.1:$PORT/bench"
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
S3=(--s3-endpoint "http://127.0.0.1:$PORT")

# CPU seconds (user + system) the server has used so far.
moto_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$MOTO/stat"; }

# timed NAME COMMAND...: runs it; prints wall, hfkit's CPU and peak RSS, and the server's CPU.
timed() {
  local name=$1; shift
  local before; before=$(moto_cpu)
  /usr/bin/time -f "%e %U %S %M" -o "$W/$name.time" "$@" > "$W/$name.out" 2> "$W/$name.err" \
    || { cat "$W/$name.err" >&2; exit 1; }
  read -r wall user sys rss < "$W/$name.time"
  printf '%-22s wall %6.1f s  hfkit CPU %6.1f s (user %.1f, sys %.1f)  peak RSS %5d MiB  server CPU %6.1f s\n' \
    "$name" "$wall" "$(echo "$user + $sys" | bc)" "$user" "$sys" "$((rss / 1024))" \
    "$(echo "$(moto_cpu) - $before" | bc)"
}

IMPORT=("$B" import --schema benches/lineitem.toml "$CSV" --threads "$THREADS" --quiet)
timed import-local "${IMPORT[@]}" --out "$W/out-local"
timed import-s3 "${IMPORT[@]}" --out s3://bench/out "${S3[@]}"

local_files=$(find "$W/out-local" -type f | wc -l)
local_bytes=$(find "$W/out-local" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
read -r s3_files s3_bytes < <(python3 - "$PORT" <<'PY'
import sys, urllib.request, re
body = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/bench?list-type=2&prefix=out/").read().decode()
sizes = [int(s) for s in re.findall(r"<Size>(\d+)</Size>", body)]
print(len(sizes), sum(sizes))
PY
)
echo "output: local $local_files files, $local_bytes bytes; s3:// $s3_files objects, $s3_bytes bytes"
[ "$local_files" = "$s3_files" ] || { echo "the outputs differ in file count" >&2; exit 1; }

"$B" table create s3://bench/t --schema benches/lineitem.toml "${S3[@]}" > /dev/null
timed attach-s3-to-s3 "$B" attach s3://bench/t s3://bench/out "${S3[@]}"

row=$("$B" scan s3://bench/t --limit 1 --format tsv "${S3[@]}" | awk 'NR == 1 { print $1 }')
stats() {
  local name=$1; shift
  timed "$name" "$B" "$@" --stats "${S3[@]}"
  grep -h "object storage\|files" "$W/$name.err" | sed 's/^/    /'
}
stats get "get" s3://bench/t "$row"
stats scan-limit-1000 scan s3://bench/t --limit 1000 --format tsv
stats scan-limit-100000 scan s3://bench/t --limit 100000 --format tsv
stats get-absent get s3://bench/t "${row}x"
stats scan-full-one-column scan s3://bench/t --column l:returnflag --format tsv
# The same full scan of the same files in a local table (issue 43: the s3:// scan's CPU
# against the local one's), and their outputs compared.
"$B" table create "$W/t-local" --schema benches/lineitem.toml > /dev/null
"$B" attach "$W/t-local" "$W/out-local" > /dev/null
timed scan-full-local "$B" scan "$W/t-local" --column l:returnflag --format tsv
cmp -s "$W/scan-full-one-column.out" "$W/scan-full-local.out" || { echo "the s3:// and local scans differ" >&2; exit 1; }
python3 - "$W" <<'PY'
import sys
def cpu(n):
    wall, user, sys_, rss = open(f"{sys.argv[1]}/{n}.time").read().split()
    return float(user) + float(sys_)
s3, local = cpu("scan-full-one-column"), cpu("scan-full-local")
print(f"full scan: s3:// {s3:.2f} CPU-s, local {local:.2f} CPU-s: s3:// costs {s3 / local:.2f}x the local scan's CPU (goal <= 1.2x)")
PY
