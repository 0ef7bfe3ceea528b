//! The base HFiles of the reader's garbage test (`tests/it/reader_garbage.rs`) and of the
//! `read_hfile` fuzz target's seed corpus: small files made by the writer with every codec,
//! both NULL and CRC32C checksums (NULL, so that corruption reaches the parsers instead of
//! stopping at a checksum), multi-level block indexes, tags and MVCC on and off, plus a
//! single-level CRC32 file and an empty one.
//!
//! One copy, used by the test (as `common::seed_files`) and by `examples/fuzz_seed_corpus.rs`
//! (through `#[path]`), so the corpus and the test always start from the same files.

use std::path::Path;

use hfkit::format::cell::{Cell, CellType, CellTypeOwned};
use hfkit::format::checksum::ChecksumType;
use hfkit::format::compression::Compression;
use hfkit::format::writer::{HFileWriter, WriterOptions};

/// `n` cells: three columns a row, some with tags, every 7th a DeleteColumn, each with its own
/// sequence id.
pub fn cells(n: usize) -> Vec<Cell> {
    let mut out = Vec::new();
    for i in 0..n {
        let row = format!("r{:05}", i / 3);
        let mut c = Cell::put(
            row.as_bytes(),
            b"cf",
            format!("q{}", i % 3).as_bytes(),
            1_700_000_000_000 - i as i64,
            format!("value {i} {}", "x".repeat(i % 17)).as_bytes(),
        );
        if i % 5 == 0 {
            c.tags = vec![0, 2, 1, i as u8];
        }
        if i % 7 == 0 {
            c.cell_type = CellTypeOwned(CellType::DeleteColumn);
            c.value.clear();
        }
        c.seq_id = i as u64;
        out.push(c);
    }
    out
}

/// One HFile of `cells`, in memory.
fn write(cells: &[Cell], opts: WriterOptions) -> Vec<u8> {
    let mut w = HFileWriter::new(Vec::new(), opts).unwrap();
    for c in cells {
        w.append(&c.as_ref()).unwrap();
    }
    w.finish().unwrap().0
}

/// The base files: (name, bytes).
pub fn base_files() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let small = cells(90);
    for (i, compression) in Compression::SUPPORTED.into_iter().enumerate() {
        for checksum_type in [ChecksumType::Null, ChecksumType::Crc32c] {
            let opts = WriterOptions {
                compression,
                checksum_type,
                block_size: 256 + 128 * i,
                index_block_size: 128,
                index_min_entries: 2,
                include_tags: i % 2 == 0,
                include_mvcc: i != 3,
                ..WriterOptions::default()
            };
            out.push((
                format!("{}_{}", compression.name(), checksum_type.name()),
                write(&small, opts),
            ));
        }
    }
    out.push((
        "NONE_CRC32_single_level".into(),
        write(
            &small,
            WriterOptions {
                checksum_type: ChecksumType::Crc32,
                ..WriterOptions::default()
            },
        ),
    ));
    out.push(("empty".into(), write(&[], WriterOptions::default())));
    out
}

/// Writes the base files into `dir` (created if missing) as `<name>.hfile`, the layout
/// cargo-fuzz reads a corpus directory in; returns how many.
pub fn write_corpus(dir: &Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    let files = base_files();
    for (name, bytes) in &files {
        std::fs::write(dir.join(format!("{name}.hfile")), bytes)?;
    }
    Ok(files.len())
}
