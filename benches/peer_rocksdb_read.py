#!/usr/bin/env python3
"""Peer bench for reads: RocksDB (through `rocksdict`) on the cells of one region of the table
that benches/read_bench.sh builds, beside `hfkit get --rows-from` on the same rows, in the same
run, CPU time, one core (run it under `taskset -c 1`, as read_bench.sh does).

RocksDB holds the region's cells in one SST (SNAPPY, 64 KiB blocks, a Bloom filter on the row:
a fixed-length prefix extractor over the row part of the key, 10 bits a key; a 64 MiB LRU
block cache), keys laid out as HBase's (u16 row length, row, family, qualifier, timestamp,
type), so a row is a prefix. A get of a row is a prefix iteration (seek, then next while the
key is in the row), as HBase's Get is a scan of one row. Each figure is CPU time of the loop
minus the same Python loop doing nothing: RocksDB is still charged the crossing from Python
into C++ per call, so it is if anything favoured less than a C++ caller would be.

Usage: benches/peer_rocksdb_read.py HFKIT_BINARY TABLE_DIR [GETS]   (default 100000)
"""
import os
import random
import struct
import subprocess
import sys
import tempfile
import time

from rocksdict import (BlockBasedOptions, Cache, DBCompressionType, Options, Rdict, ReadOptions,
                       SliceTransform, SstFileWriter)

hfkit, table = sys.argv[1], sys.argv[2]
gets = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
# Region 0 of benches/lineitem.toml holds the rows before "01".
lines = subprocess.run([hfkit, "scan", table, "--stop", "01", "--format", "cells"],
                       capture_output=True, text=True, check=True).stdout.splitlines()
cells, rows = [], []
for line in lines:
    row, fam, qual, ts, typ, val, _tags = line.split(" ")
    row, fam, qual, val = (bytes.fromhex(x) for x in (row, fam, qual, val))
    key = struct.pack(">H", len(row)) + row + bytes([len(fam)]) + fam + qual \
        + struct.pack(">q", int(ts)) + bytes([4])
    cells.append((key, val))
    if not rows or rows[-1] != row:
        rows.append(row)
cells.sort()
row_len = len(rows[0])
assert all(len(r) == row_len for r in rows), "fixed-length rows expected"
prefix_len = 2 + row_len

tmp = tempfile.mkdtemp(prefix="hfkit-peer-read-")
opts = Options()
opts.create_if_missing(True)
opts.set_compression_type(DBCompressionType.snappy())
table_opts = BlockBasedOptions()
table_opts.set_block_size(64 * 1024)
table_opts.set_bloom_filter(10, False)
table_opts.set_block_cache(Cache(64 << 20))
opts.set_block_based_table_factory(table_opts)
opts.set_prefix_extractor(SliceTransform.create_fixed_prefix(prefix_len))
sst = os.path.join(tmp, "region0.sst")
w = SstFileWriter(opts)
w.open(sst)
for k, v in cells:
    w[k] = v
w.finish()
db = Rdict(os.path.join(tmp, "db"), opts)
db.ingest_external_file([sst])

rng = random.Random(7)
present = [rows[rng.randrange(len(rows))] for _ in range(gets)]
absent = [r[:-1] + b"9" for r in present]
ro = ReadOptions()
ro.set_prefix_same_as_start(True)


def rocks_get(row):
    p = struct.pack(">H", len(row)) + row
    it = db.iter(ro)
    it.seek(p)
    n = 0
    while it.valid() and it.key().startswith(p):
        n += 1
        it.next()
    return n


def empty(row):
    p = struct.pack(">H", len(row)) + row
    return 0


def cpu(f, keys):
    t = time.process_time()
    n = sum(f(k) for k in keys)
    return time.process_time() - t, n


for name, keys in (("present", present), ("absent ", absent)):
    sum(rocks_get(k) for k in keys)  # warm the block cache
    best = None
    for _ in range(3):
        dt, n = cpu(rocks_get, keys)
        floor, _ = cpu(empty, keys)
        dt -= floor
        best = dt if best is None else min(best, dt)
    assert (n == 0) == (name == "absent "), (name, n)
    print(f"rocksdb get {name}: {gets / best:9.0f} gets/s ({best * 1e6 / gets:.2f} us/get, "
          f"{n / gets:.1f} cells/get), {len(cells)} cells in one SST, prefix Bloom, 64 MiB cache")

# hfkit on the same rows, one process (its default 64 MiB block cache).
listing = os.path.join(tmp, "rows.txt")
for name, keys in (("present", present), ("absent ", absent)):
    with open(listing, "w") as f:
        f.write("".join(k.decode() + "\n" for k in keys))
    best = None
    for _ in range(3):
        t = os.times()
        subprocess.run([hfkit, "get", table, "--rows-from", listing, "--format", "cells"],
                       stdout=subprocess.DEVNULL, check=True)
        u = os.times()
        dt = (u.children_user - t.children_user) + (u.children_system - t.children_system)
        best = dt if best is None else min(best, dt)
    print(f"hfkit   get {name}: {gets / best:9.0f} gets/s ({best * 1e6 / gets:.2f} us/get), "
          f"hfkit get --rows-from (whole process: open, parse, print)")
db.close()
Rdict.destroy(os.path.join(tmp, "db"))
for f in os.listdir(tmp):
    p = os.path.join(tmp, f)
    if os.path.isfile(p):
        os.remove(p)
os.rmdir(tmp)
