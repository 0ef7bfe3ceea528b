//! HFile core benchmarks on ≥ 1M TPC-H lineitem-shaped cells (see `lineitem/mod.rs`):
//!
//! - `write/<codec>`: cells → a complete HFile in a `Vec<u8>` (one thread), bulk-load options;
//! - `scan/<codec>`: full scan of that file (open included);
//! - `floor/snappy_raw`, `floor/crc32c`: what the machine does on the same bytes without the
//!   HFile code — raw Snappy over the NONE-format data blocks (64 KiB each) and CRC32C over
//!   them in 16 KiB chunks.
//!
//! Throughput is in cells (`Throughput::Elements`); each file's size is printed so MB/s of
//! file bytes follows. Run: `cargo bench --bench hfile` (a few minutes).

// A bench or probe, not a library path: a failed unwrap stops it with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod lineitem;

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput,
};

use hfkit::format::compression::Compression;
use hfkit::format::encoding::{CellEncoder, EncodingContext, NoneEncoder};
use hfkit::format::reader::HFileReader;
use hfkit::format::writer::{HFileWriter, WriterOptions, DEFAULT_BLOCK_SIZE};
use lineitem::Lineitem;

const CELLS: usize = 1_000_000;
const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gz,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn options(compression: Compression) -> WriterOptions {
    WriterOptions {
        compression,
        ..WriterOptions::default()
    }
}

fn write_file(cells: &Lineitem, compression: Compression, capacity: usize) -> Vec<u8> {
    let mut w = HFileWriter::new(Vec::with_capacity(capacity), options(compression)).unwrap();
    cells.for_each(|c| w.append(c).unwrap());
    w.finish().unwrap().0
}

/// The NONE-format data block payloads the writer would produce (cut at 64 KiB).
fn none_blocks(cells: &Lineitem) -> Vec<Vec<u8>> {
    let ctx = EncodingContext {
        include_tags: true,
        include_mvcc: true,
        compress_tags: false,
    };
    let mut enc = NoneEncoder::new(ctx);
    let mut blocks = Vec::new();
    let mut cur = Vec::with_capacity(DEFAULT_BLOCK_SIZE + 1024);
    cells.for_each(|c| {
        if cur.len() >= DEFAULT_BLOCK_SIZE {
            blocks.push(std::mem::replace(
                &mut cur,
                Vec::with_capacity(DEFAULT_BLOCK_SIZE + 1024),
            ));
        }
        enc.encode(c, &mut cur).unwrap();
    });
    blocks.push(cur);
    blocks
}

fn configure(g: &mut BenchmarkGroup<'_, WallTime>, cells: usize) {
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(cells as u64));
}

fn benches(c: &mut Criterion) {
    let cells = Lineitem::generate(CELLS);
    let n = cells.len();
    let blocks = none_blocks(&cells);
    let raw: usize = blocks.iter().map(Vec::len).sum();
    eprintln!(
        "lineitem: {n} cells, {raw} bytes in NONE format ({:.1} bytes/cell), {} blocks of 64 KiB",
        raw as f64 / n as f64,
        blocks.len()
    );
    let files: Vec<(Compression, Vec<u8>)> = CODECS
        .iter()
        .map(|&codec| (codec, write_file(&cells, codec, raw + raw / 8)))
        .collect();
    for (codec, f) in &files {
        eprintln!(
            "file {:6}: {:>10} bytes ({:.1} bytes/cell)",
            codec.name(),
            f.len(),
            f.len() as f64 / n as f64
        );
    }

    let mut g = c.benchmark_group("write");
    configure(&mut g, n);
    for (codec, f) in &files {
        let cap = f.len() + 4096;
        g.bench_function(codec.name(), |b| {
            b.iter(|| black_box(write_file(&cells, *codec, cap).len()))
        });
    }
    // The target case: SNAPPY with a ROW Bloom filter.
    // The same output buffer as the SNAPPY case's, plus room for the Bloom chunks.
    let cap = files
        .iter()
        .find(|(c, _)| *c == Compression::Snappy)
        .map_or(0, |(_, f)| f.len())
        + (1 << 20);
    g.bench_function("SNAPPY+ROW", |b| {
        b.iter(|| {
            let opts = WriterOptions {
                bloom: Some(hfkit::format::bloom::BloomType::Row),
                ..options(Compression::Snappy)
            };
            let mut w = HFileWriter::new(Vec::with_capacity(cap), opts).unwrap();
            cells.for_each(|c| w.append(c).unwrap());
            black_box(w.finish().unwrap().0.len())
        })
    });
    // The same file through `append_row`, a row's 16 cells at a time (as the import writes).
    g.bench_function("SNAPPY+ROW/rows", |b| {
        b.iter(|| {
            let opts = WriterOptions {
                bloom: Some(hfkit::format::bloom::BloomType::Row),
                ..options(Compression::Snappy)
            };
            let mut w = HFileWriter::new(Vec::with_capacity(cap), opts).unwrap();
            cells.for_each_row(|r| w.append_row(r).unwrap());
            black_box(w.finish().unwrap().0.len())
        })
    });
    g.finish();

    let mut g = c.benchmark_group("scan");
    configure(&mut g, n);
    for (codec, f) in &files {
        let reader = HFileReader::from_bytes(f.clone()).unwrap();
        g.bench_function(codec.name(), |b| {
            b.iter(|| {
                let mut s = reader.scanner().unwrap();
                let mut count = 0usize;
                let mut bytes = 0usize;
                while let Some(c) = s.next().unwrap() {
                    count += 1;
                    bytes += c.value.len();
                }
                assert_eq!(count, n);
                black_box(bytes)
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("floor");
    configure(&mut g, n);
    let mut out = vec![0u8; snap::raw::max_compress_len(DEFAULT_BLOCK_SIZE * 2)];
    let mut snappy = snap::raw::Encoder::new();
    g.bench_function("snappy_raw", |b| {
        b.iter(|| {
            let mut total = 0usize;
            for blk in &blocks {
                total += snappy.compress(blk, &mut out).unwrap();
            }
            black_box(total)
        })
    });
    g.bench_function("crc32c", |b| {
        b.iter(|| {
            let mut x = 0u32;
            for blk in &blocks {
                for chunk in blk.chunks(16 * 1024) {
                    x ^= hfkit::format::checksum::crc32c(chunk);
                }
            }
            black_box(x)
        })
    });
    g.finish();
}

criterion_group!(hfile, benches);
criterion_main!(hfile);
