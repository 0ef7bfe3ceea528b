//! Machine floors for the import bench (`benches/import_bench.sh`), measured on the same data:
//! CSV parsing alone (the `csv` crate, every field touched) and Snappy compression alone of
//! the produced cells in NONE format, 64 KiB blocks.
//!
//! Usage: cargo run --release --example import_floors -- INPUT.csv BULK_DIR

// A bench or probe, not a library path: a failed unwrap stops it with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use hfkit::format::encoding::{new_encoder, DataBlockEncoding, EncodingContext};
use hfkit::format::reader::HFileReader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: import_floors INPUT.csv BULK_DIR");
        std::process::exit(2);
    }
    // CSV parse floor.
    let t = Instant::now();
    let mut r = csv::ReaderBuilder::new().from_path(&args[1])?;
    let mut rec = csv::ByteRecord::new();
    let (mut rows, mut bytes) = (0u64, 0u64);
    while r.read_byte_record(&mut rec)? {
        rows += 1;
        bytes += rec.as_slice().len() as u64;
    }
    let s = t.elapsed().as_secs_f64();
    let size = std::fs::metadata(&args[1])?.len() as f64;
    println!("csv_parse: {rows} rows in {s:.2}s = {:.0} rows/s, {:.0} MB/s of input ({bytes} field bytes)", rows as f64 / s, size / s / 1e6);

    // Snappy floor over the output's cells in NONE format.
    let ctx = EncodingContext {
        include_tags: true,
        include_mvcc: true,
        compress_tags: false,
    };
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    let mut cells = 0u64;
    let mut stack = vec![std::path::PathBuf::from(&args[2])];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let reader = HFileReader::open(&p)?;
            let mut sc = reader.scanner()?;
            let mut enc = new_encoder(DataBlockEncoding::None, ctx)?;
            let mut block = Vec::new();
            enc.start_block(&mut block);
            while let Some(c) = sc.next()? {
                enc.encode(&c, &mut block)?;
                cells += 1;
                if block.len() >= 64 * 1024 {
                    blocks.push(std::mem::take(&mut block));
                    enc.start_block(&mut block);
                }
            }
            blocks.push(block);
        }
    }
    let raw: usize = blocks.iter().map(Vec::len).sum();
    let mut enc = snap::raw::Encoder::new();
    let mut out = vec![0u8; snap::raw::max_compress_len(128 * 1024)];
    let t = Instant::now();
    let mut compressed = 0usize;
    for b in &blocks {
        compressed += enc.compress(b, &mut out)?;
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "snappy: {cells} cells, {:.0} MB in {s:.2}s = {:.0} cells/s, {:.0} MB/s (ratio {:.2})",
        raw as f64 / 1e6,
        cells as f64 / s,
        raw as f64 / s / 1e6,
        raw as f64 / compressed as f64
    );
    Ok(())
}
