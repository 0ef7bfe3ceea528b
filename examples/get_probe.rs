//! Gets of absent rows alone, for profiles of the get path (perf): rows of the table's first
//! 20,000 row keys with their last byte set to `9` (which lineitem's keys never end with), so
//! that only the Bloom filter can rule a file out, through one `TableReader` with the default
//! block cache, as `benches/read_path.rs` measures them. Prints the files a get considered,
//! read and skipped by Bloom, and the speed in gets per second of wall time (pin it with
//! `taskset`).
//!
//! Usage: `cargo build --release --example get_probe &&
//! taskset -c 1 target/release/examples/get_probe TABLE [GETS]` (a table such as the one
//! `benches/read_bench.sh` leaves in /tmp/hfkit-read-bench).

// A probe, not a library path: a failed unwrap stops it with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use hfkit::format::block_cache::{BlockCache, DEFAULT_BLOCK_CACHE_BYTES};
use hfkit::read::ReadOptions;
use hfkit::table::directory::Table;
use hfkit::table::read::TableReader;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: get_probe TABLE [GETS]");
    let gets: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().expect("GETS: a number"))
        .unwrap_or(3_000_000);
    let t = Table::open(std::path::Path::new(&dir)).unwrap();
    let reader = TableReader::open(&t).unwrap();
    reader.set_block_cache(&Arc::new(BlockCache::new(DEFAULT_BLOCK_CACHE_BYTES)));
    let opts = ReadOptions::default();
    let keys: Vec<Vec<u8>> = reader
        .scan(&opts)
        .unwrap()
        .take(20_000)
        .map(|row| {
            let mut k = row.unwrap().row;
            if let Some(last) = k.last_mut() {
                *last = b'9';
            }
            k
        })
        .collect();
    let (mut considered, mut read, mut bloom, mut cells) = (0, 0, 0, 0);
    let started = std::time::Instant::now();
    for i in 0..gets {
        let (c, s) = reader.get(&keys[i % keys.len()], &opts).unwrap();
        cells += c.len();
        considered += s.files_considered;
        read += s.files_read;
        bloom += s.skipped_bloom;
    }
    let secs = started.elapsed().as_secs_f64();
    let per = |n: usize| n as f64 / gets as f64;
    println!(
        "{gets} gets of absent rows in {secs:.2} s = {:.2}M gets/s ({:.3} µs/get); per get: \
         {:.2} files considered, {:.3} read, {:.2} skipped by Bloom; {cells} cells",
        gets as f64 / secs / 1e6,
        secs * 1e6 / gets as f64,
        per(considered),
        per(read),
        per(bloom)
    );
}
