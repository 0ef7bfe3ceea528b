//! Throughput of the store merge (`read::MergeScanner`) and of a full scan (`read::scan`, with
//! the matcher) beside sequential scanners of the same files: 8 in-memory HFiles of 250,000
//! cells, rows interleaved across the files, 4 versions a column. Plain timing, one run, in
//! ns/cell. Run:
//!
//! ```text
//! cargo bench --bench merge_scan
//! ```

// A bench or probe, not a library path: a failed unwrap stops it with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Instant;

use hfkit::format::cell::Cell;
use hfkit::format::reader::HFileReader;
use hfkit::format::writer::{HFileWriter, WriterOptions};
use hfkit::read::{scan, FamilyReadSettings, MergeScanner, ReadOptions, Store};

fn files(n_files: usize, per_file: usize) -> Vec<Arc<HFileReader>> {
    (0..n_files)
        .map(|f| {
            let mut w = HFileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
            for i in 0..per_file {
                // Interleaved rows across files; 4 versions per column.
                let row = format!("row{:08}", (i / 4) * n_files + f);
                let c = Cell::put(
                    row.as_bytes(),
                    b"f",
                    b"q",
                    1000 - (i % 4) as i64,
                    b"value-bytes-xx",
                );
                w.append(&c.as_ref()).unwrap();
            }
            Arc::new(HFileReader::from_bytes(w.finish().unwrap().0).unwrap())
        })
        .collect()
}

/// A merge scanner over `fs` (file `i` with sequence id `i + 1`), at the first cell.
fn merge_from_first(fs: &[Arc<HFileReader>]) -> MergeScanner<'_> {
    let mut m = MergeScanner::new(
        fs.iter()
            .enumerate()
            .map(|(i, f)| (f.as_ref(), i as u64 + 1)),
    )
    .unwrap();
    m.seek_to_first().unwrap();
    m
}

fn main() {
    let (n, per) = (8, 250_000);
    let fs = files(n, per);
    let total = (n * per) as f64;

    let t = Instant::now();
    let mut count = 0usize;
    for f in &fs {
        let mut s = f.scanner().unwrap();
        while s.next().unwrap().is_some() {
            count += 1;
        }
    }
    let base = t.elapsed().as_secs_f64();
    assert_eq!(count, n * per);

    let t = Instant::now();
    let mut m = merge_from_first(&fs);
    let mut count = 0usize;
    while m.peek().is_some() {
        count += 1;
        m.advance().unwrap();
    }
    let merge = t.elapsed().as_secs_f64();
    assert_eq!(count, n * per);

    let t = Instant::now();
    let mut m = merge_from_first(&fs);
    let mut owned = Vec::new();
    while let Some(c) = m.peek() {
        owned.push(c.to_owned());
        m.advance().unwrap();
        if owned.len() == 1024 {
            owned.clear();
        }
    }
    let merge_owned = t.elapsed().as_secs_f64();

    let store = [Store {
        family: b"f".to_vec(),
        settings: FamilyReadSettings {
            versions: 4,
            ..Default::default()
        },
        files: fs
            .iter()
            .enumerate()
            .map(|(i, f)| (f.clone(), i as u64 + 1))
            .collect(),
    }];
    let t = Instant::now();
    let opts = ReadOptions {
        max_versions: 4,
        ..Default::default()
    };
    let cells: usize = scan(&store, &opts)
        .unwrap()
        .map(|r| r.unwrap().cells.len())
        .sum();
    let full = t.elapsed().as_secs_f64();
    assert_eq!(cells, n * per);

    let ns = |s: f64| s * 1e9 / total;
    println!(
        "{n} files x {per} cells: sequential scanners {:.0} ns/cell, merge (peek/advance, no copy) {:.0} ns/cell, \
         merge + owned copy {:.0} ns/cell, full scan() with matcher and owned rows {:.0} ns/cell",
        ns(base), ns(merge), ns(merge_owned), ns(full)
    );
}
