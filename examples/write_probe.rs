//! One HFile write of N lineitem-shaped cells (the generator of `benches/lineitem`), for
//! instruction counts and profiles of the writer alone (callgrind, perf): prints the file's
//! size, its CRC32C (the same bytes whichever append path) and the best of ITERS write speeds.
//!
//! Usage: `cargo run --profile profiling --example write_probe [CELLS] [snappy|none]
//! [cell|row|records] [row|none] [ITERS]` (`cell`: `append` per cell; `row`: `append_row` per
//! row; `records`: `append_records` of 128 KiB of records a call; the fourth argument is the
//! Bloom type). For instance
//! `valgrind --tool=callgrind target/profiling/examples/write_probe 200000 snappy row row 1`
//! (the `profiling` profile is `release` with line-level debug info).

// A bench or probe, not a library path: a failed unwrap stops it with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../benches/lineitem/mod.rs"]
mod lineitem;
use hfkit::format::bloom::BloomType;
use hfkit::format::compression::Compression;
use hfkit::format::writer::{HFileWriter, WriterOptions};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: usize = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let comp = match a.get(2).map(|s| s.as_str()) {
        Some("none") => Compression::None,
        _ => Compression::Snappy,
    };
    let way = a.get(3).map(String::as_str).unwrap_or("cell");
    let bloom = match a.get(4).map(|s| s.as_str()) {
        Some("none") => None,
        _ => Some(BloomType::Row),
    };
    let iters: usize = a.get(5).and_then(|s| s.parse().ok()).unwrap_or(1);
    let data = lineitem::Lineitem::generate(n);
    let opts = WriterOptions {
        compression: comp,
        bloom,
        ..WriterOptions::default()
    };
    let (records, calls) = if way == "records" {
        lineitem::records_of(&data, &opts, 128 * 1024)
    } else {
        (Vec::new(), Vec::new())
    };
    let mut out = vec![0u8; n * 64];
    let mut best = f64::MAX;
    for _ in 0..iters {
        out.clear();
        let t = std::time::Instant::now();
        let mut w = HFileWriter::new(&mut out, opts.clone()).unwrap();
        match way {
            "row" => data.for_each_row(|r| w.append_row(r).unwrap()),
            "records" => {
                for c in calls.windows(2) {
                    w.append_records(&records[c[0]..c[1]]).unwrap();
                }
            }
            _ => data.for_each(|c| w.append(c).unwrap()),
        }
        w.finish().unwrap();
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{} {:08x} {:.2}M cells/s",
        out.len(),
        hfkit::format::checksum::crc32c(&out),
        n as f64 / best / 1e6
    );
}
