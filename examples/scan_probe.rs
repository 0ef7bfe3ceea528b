//! A table scan alone (rows borrowed, `next_row_ref`), for profiles of the read path (perf):
//! the table scan of `benches/read_path.rs` without the other measurements around it. Prints
//! each pass's speed and the best, in cells per second of wall time (pin it with `taskset`).
//!
//! Usage: `cargo build --profile profiling --example scan_probe &&
//! taskset -c 1 perf record target/profiling/examples/scan_probe TABLE [PASSES]` (a table such
//! as the one `benches/read_bench.sh` leaves in /tmp/hfkit-read-bench).

// A probe, not a library path: a failed unwrap stops it with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use hfkit::read::ReadOptions;
use hfkit::table::directory::Table;
use hfkit::table::read::TableReader;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: scan_probe TABLE [PASSES]");
    let passes: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let table = Table::open(std::path::Path::new(&dir)).unwrap();
    let reader = TableReader::open(&table).unwrap();
    let mut best = 0f64;
    for _ in 0..passes {
        let t = std::time::Instant::now();
        let mut cells = 0u64;
        let mut scan = reader.scan(&ReadOptions::default()).unwrap();
        while let Some(r) = scan.next_row_ref().unwrap() {
            cells += r.len() as u64;
        }
        let rate = cells as f64 / t.elapsed().as_secs_f64();
        best = best.max(rate);
        println!("{cells} cells: {:.2}M cells/s", rate / 1e6);
    }
    println!("best {:.2}M cells/s", best / 1e6);
}
