#!/usr/bin/env python3
"""Peer bench: RocksDB's SstFileWriter (through the `rocksdict` package) on exactly the cells of
`examples/format_bench` (lineitem-shaped, 16 qualifiers, ~55 bytes a cell), beside hfkit's
writer on the same cells in the same run, one core.

Both write one sorted file: RocksDB with SNAPPY, 64 KiB blocks and a 10-bit-per-key Bloom
filter (its block-based table, keys prefix-compressed within blocks); hfkit with SNAPPY,
64 KiB blocks and a ROW Bloom (HFile v3, NONE encoding). Keys are the HBase flat keys.
RocksDB's time is CPU time of the put loop plus finish, minus the same Python loop doing
nothing (each put still crosses from Python into Rust and C++, so RocksDB is if anything
favoured less than a C++ caller would be).

Usage: benches/peer_rocksdb.py [CELLS]   (default 1000000; needs `pip install rocksdict`
and `cargo build --release --example format_bench`)
"""
import os
import struct
import subprocess
import sys
import tempfile
import time

from rocksdict import BlockBasedOptions, DBCompressionType, Options, SstFileWriter

n = sys.argv[1] if len(sys.argv) > 1 else "1000000"
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
tmp = tempfile.mkdtemp(prefix="hfkit-peer-")
dump = os.path.join(tmp, "cells.bin")
bench = os.path.join(root, "target", "release", "examples", "format_bench")
ours = subprocess.run(
    [bench, n, "SNAPPY + ROW Bloom, NONE", "write"],
    env={**os.environ, "FORMAT_BENCH_DUMP": dump},
    capture_output=True, text=True, check=True,
).stdout

data = open(dump, "rb").read()
cells, at = [], 0
while at < len(data):
    (klen,) = struct.unpack_from("<I", data, at)
    key = data[at + 4:at + 4 + klen]
    at += 4 + klen
    (vlen,) = struct.unpack_from("<I", data, at)
    cells.append((key, data[at + 4:at + 4 + vlen]))
    at += 4 + vlen
# RocksDB orders keys bytewise; HBase flat keys of one family in HBase order are also in
# bytewise order here (one timestamp and type, qualifiers in byte order), but sort to be sure.
cells.sort()

opts = Options()
opts.set_compression_type(DBCompressionType.snappy())
table = BlockBasedOptions()
table.set_block_size(64 * 1024)
table.set_bloom_filter(10, False)
opts.set_block_based_table_factory(table)
best, size = None, 0
for _ in range(3):
    w = SstFileWriter(opts)
    path = os.path.join(tmp, "out.sst")
    w.open(path)
    t0 = time.process_time()
    for k, v in cells:
        w[k] = v
    w.finish()
    dt = time.process_time() - t0
    t1 = time.process_time()
    for k, v in cells:
        pass
    dt -= time.process_time() - t1
    best = dt if best is None else min(best, dt)
    size = os.path.getsize(path)
for line in ours.splitlines():
    if line.startswith("floor:") or line.startswith("SNAPPY + ROW Bloom, NONE "):
        print("hfkit  ", line)
print(f"rocksdb SstFileWriter SNAPPY + Bloom: {len(cells)} cells, {size / len(cells):.2f} bytes/cell, "
      f"{len(cells) / best / 1e6:.2f} Mcells/s (CPU, best of 3)")
for f in os.listdir(tmp):
    os.remove(os.path.join(tmp, f))
os.rmdir(tmp)
