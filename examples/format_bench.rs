//! CPU-time measurements of the HFile writer and reader on 1M lineitem-shaped cells (the
//! generator of `benches/lineitem`): bytes per cell and encode/decode speed per data block
//! encoding, and the SNAPPY + ROW Bloom write case. Process CPU time (user + system, from
//! /proc/self/stat) is reported beside wall time, so a busy second core does not skew it.
//!
//! Usage: cargo run --release --example format_bench [CELLS]

#[path = "../benches/lineitem/mod.rs"]
mod lineitem;

use std::time::Instant;

use hfkit::format::bloom::BloomType;
use hfkit::format::compression::Compression;
use hfkit::format::encoding::DataBlockEncoding;
use hfkit::format::reader::HFileReader;
use hfkit::format::writer::{HFileWriter, WriterOptions};

/// Process CPU seconds (utime + stime).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn measure<T>(mut f: impl FnMut() -> T) -> (T, f64, f64) {
    // Best of three by CPU time.
    let mut best = (None, f64::MAX, 0.0);
    for _ in 0..3 {
        let (c0, w0) = (cpu_seconds(), Instant::now());
        let v = f();
        let (cpu, wall) = (cpu_seconds() - c0, w0.elapsed().as_secs_f64());
        if cpu < best.1 {
            best = (Some(v), cpu, wall);
        }
    }
    (best.0.unwrap_or_else(f), best.1, best.2)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let data = lineitem::Lineitem::generate(n);
    let cells = data.len() as f64;
    let mut none_bytes = 0u64;
    data.for_each(|c| none_bytes += (8 + c.key_len() + c.value.len() + 2 + 1) as u64);
    println!(
        "{} cells, {:.1} bytes/cell in NONE format",
        data.len(),
        none_bytes as f64 / cells
    );
    println!(
        "{:<28} {:>10} {:>14} {:>14} {:>14}",
        "case", "bytes/cell", "write Mcells/s", "scan Mcells/s", "(cpu; wall w/s)"
    );
    let mut cases: Vec<(String, WriterOptions)> = DataBlockEncoding::ALL
        .into_iter()
        .map(|e| {
            (
                format!("NONE codec, {}", e.name()),
                WriterOptions {
                    encoding: e,
                    ..WriterOptions::default()
                },
            )
        })
        .collect();
    cases.push((
        "SNAPPY + ROW Bloom, NONE".into(),
        WriterOptions {
            compression: Compression::Snappy,
            bloom: Some(BloomType::Row),
            ..WriterOptions::default()
        },
    ));
    for (name, opts) in cases {
        let (bytes, wcpu, wwall) = measure(|| {
            let mut w =
                HFileWriter::new(Vec::with_capacity(none_bytes as usize), opts.clone()).unwrap();
            data.for_each(|c| w.append(c).unwrap());
            w.finish().unwrap().0
        });
        let size = bytes.len() as f64;
        let reader = HFileReader::from_bytes(bytes).unwrap();
        let (count, scpu, swall) = measure(|| {
            let mut s = reader.scanner().unwrap();
            let mut k = 0u64;
            while s.next().unwrap().is_some() {
                k += 1;
            }
            k
        });
        assert_eq!(count as f64, cells);
        println!(
            "{name:<28} {:>10.2} {:>14.2} {:>14.2}   write {:.0}/{:.0} ms, scan {:.0}/{:.0} ms",
            size / cells,
            cells / wcpu / 1e6,
            cells / scpu / 1e6,
            wcpu * 1e3,
            wwall * 1e3,
            scpu * 1e3,
            swall * 1e3
        );
    }
}
