//! Probe: the SNAPPY + ROW Bloom writer on lineitem cells (per-cell `append` and `append_row`)
//! against snappy alone, CPU time of the thread from /proc/thread-self/schedstat (ns).
//! Usage: cargo run --release -p hfkit-format --example append_probe [CELLS] [ROUNDS]
//! (`PROBE_PARTS=1`: the parts; `PROBE_BLOCKS=1`: snappy over the writer's own block payloads;
//! `PROBE_ROW_ONLY=1`: `append_row` alone, for a profiler).
#![allow(clippy::unwrap_used, clippy::expect_used)]

extern crate self as hfkit;
pub mod format {
    pub use hfkit_format::*;
}
#[path = "../../../benches/lineitem/mod.rs"]
mod lineitem;

use hfkit_format::bloom::BloomType;
use hfkit_format::compression::Compression;
use hfkit_format::writer::{HFileWriter, WriterOptions};

fn cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    s.split_whitespace().next().unwrap().parse().unwrap()
}

fn best<T>(rounds: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut b = u64::MAX;
    for _ in 0..rounds {
        let t = cpu_ns();
        std::hint::black_box(f());
        b = b.min(cpu_ns() - t);
    }
    b as f64 / 1e9
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(8_000_000);
    let rounds: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let data = lineitem::Lineitem::generate(n);
    let cells = data.len() as f64;
    let opts = WriterOptions {
        compression: Compression::Snappy,
        bloom: Some(BloomType::Row),
        ..WriterOptions::default()
    };
    let mut cell_bytes = Vec::new();
    {
        let mut w = HFileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        data.for_each(|c| w.append(c).unwrap());
        cell_bytes.extend_from_slice(&w.finish().unwrap().0);
    }
    let mut out = vec![0u8; cell_bytes.len()];
    let mut encoder = snap::raw::Encoder::new();
    let mut sout = vec![0u8; snap::raw::max_compress_len(65536)];
    if std::env::var_os("PROBE_ROW_ONLY").is_some() {
        for _ in 0..rounds {
            out.clear();
            let mut w = HFileWriter::new(&mut out, opts.clone()).unwrap();
            data.for_each_row(|cs| w.append_row(cs).unwrap());
            w.finish().unwrap();
        }
        return;
    }
    if std::env::var_os("PROBE_BLOCKS").is_some() {
        // Snappy over the writer's own data-block payloads (the NONE file's, same cuts), by
        // hand and through the writer's Compressor: the codec's share of the writer is that
        // of snappy alone.
        use hfkit_format::block::{BlockHeader, BlockType, HEADER_LEN};
        let mut payloads: Vec<&[u8]> = Vec::new();
        let mut at = 0usize;
        while let Ok(h) = BlockHeader::parse(&cell_bytes[at..], at as u64) {
            if h.block_type == BlockType::Data {
                let p = &cell_bytes[at + HEADER_LEN
                    ..at + HEADER_LEN + h.uncompressed_size_without_header as usize];
                payloads.push(p);
            }
            at += h.on_disk_size_with_header() as usize;
        }
        let total: usize = payloads.iter().map(|p| p.len()).sum();
        let mut comp = hfkit_format::compression::Compressor::new(Compression::Snappy).unwrap();
        let mut cout = Vec::with_capacity(1 << 20);
        for _ in 0..2 {
            let s = best(rounds, || {
                let mut t = 0usize;
                for block in cell_bytes.chunks(65536) {
                    t += encoder.compress(block, &mut sout).unwrap();
                }
                t
            });
            let b = best(rounds, || {
                let mut t = 0usize;
                for p in &payloads {
                    for c in p.chunks(65536) {
                        t += encoder.compress(c, &mut sout).unwrap();
                    }
                }
                t
            });
            let c = best(rounds, || {
                let mut end = 0;
                for p in &payloads {
                    end = comp.compress_at(p, &mut cout, 0).unwrap();
                }
                end
            });
            println!(
                "{} blocks, {} payload bytes; snappy alone {:.1} ns/cell; over the payloads {:.1}; Compressor {:.1}",
                payloads.len(), total, s * 1e9 / cells, b * 1e9 / cells, c * 1e9 / cells
            );
        }
        return;
    }
    if std::env::var_os("PROBE_PARTS").is_some() {
        // The parts: the source alone, NONE codec (no snappy), snappy alone.
        let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
        let src = best(rounds, || {
            let mut k = 0usize;
            data.for_each_row(|cs| k += std::hint::black_box(cs).len());
            k
        });
        let copy = best(rounds, || {
            data.for_each_row(|cs| {
                for c in cs {
                    buf.extend_from_slice(c.row);
                    buf.extend_from_slice(c.qualifier);
                    buf.extend_from_slice(c.value);
                    buf.extend_from_slice(&c.timestamp.to_be_bytes());
                }
                if buf.len() > 65536 {
                    buf.clear();
                }
            })
        });
        let plain = WriterOptions {
            bloom: Some(BloomType::Row),
            ..WriterOptions::default()
        };
        let none = best(rounds, || {
            out.clear();
            let mut w = HFileWriter::new(&mut out, plain.clone()).unwrap();
            data.for_each_row(|cs| w.append_row(cs).unwrap());
            w.finish().unwrap();
        });
        let s = best(rounds, || {
            let mut total = 0usize;
            for block in cell_bytes.chunks(65536) {
                total += encoder.compress(block, &mut sout).unwrap();
            }
            total
        });
        println!(
            "source {:.1} ns/cell; source + naive copy {:.1}; writer without codec (ROW Bloom, CRC32C) {:.1}; snappy alone {:.1}",
            src * 1e9 / cells,
            copy * 1e9 / cells,
            none * 1e9 / cells,
            s * 1e9 / cells
        );
        return;
    }
    let mut per_cell = Vec::new();
    let mut per_row = Vec::new();
    for _ in 0..2 {
        let s = best(rounds, || {
            let mut total = 0usize;
            for block in cell_bytes.chunks(65536) {
                total += encoder.compress(block, &mut sout).unwrap();
            }
            total
        });
        let a = best(rounds, || {
            out.clear();
            let mut w = HFileWriter::new(&mut out, opts.clone()).unwrap();
            data.for_each(|c| w.append(c).unwrap());
            w.finish().unwrap();
        });
        let first = out.clone();
        let r = best(rounds, || {
            out.clear();
            let mut w = HFileWriter::new(&mut out, opts.clone()).unwrap();
            data.for_each_row(|cs| w.append_row(cs).unwrap());
            w.finish().unwrap();
        });
        if std::env::var_os("PROBE_NO_CHECK").is_none() {
            assert!(first == out, "append_row wrote other bytes");
        }
        per_cell.push(s / a);
        per_row.push(s / r);
        println!(
            "snappy alone {:.1} ns/cell; append {:.1} ns/cell ({:.3}x); append_row {:.1} ns/cell ({:.3}x)",
            s * 1e9 / cells,
            a * 1e9 / cells,
            s / a,
            r * 1e9 / cells,
            s / r
        );
    }
}
