//! One line per HFile of a bulk-load directory: the CRC32C of its cells (row, family, qualifier,
//! timestamp, type, value, each length-prefixed) and its cell count, sorted by the file's
//! first row. Two imports of the same data give the same lines whatever their file names, so
//! `benches/import_bench.sh` diffs them to show that every run wrote the same cells.
//!
//! Usage: cargo run --release --example cells_digest -- BULK_DIR

// A bench or probe, not a library path: a failed unwrap stops it with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use hfkit::format::reader::HFileReader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: cells_digest BULK_DIR")?;
    let mut lines = Vec::new();
    for family in std::fs::read_dir(&dir)? {
        let family = family?.path();
        if !family.is_dir()
            || family
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        {
            continue;
        }
        for file in std::fs::read_dir(&family)? {
            let path = file?.path();
            let reader = HFileReader::open(&path)?;
            let mut scanner = reader.scanner()?;
            let mut h = 0u32;
            let mut first = None;
            let mut n = 0u64;
            while let Some(c) = scanner.next()? {
                if first.is_none() {
                    first = Some(c.row.to_vec());
                }
                for part in [c.row, c.family, c.qualifier, c.value] {
                    h = hfkit::format::checksum::crc32c_append(
                        h,
                        &(part.len() as u32).to_be_bytes(),
                    );
                    h = hfkit::format::checksum::crc32c_append(h, part);
                }
                h = hfkit::format::checksum::crc32c_append(h, &c.timestamp.to_be_bytes());
                h = hfkit::format::checksum::crc32c_append(h, &[c.cell_type.code()]);
                n += 1;
            }
            lines.push((first.unwrap_or_default(), format!("{h:08x} {n}")));
        }
    }
    lines.sort();
    for (_, l) in lines {
        println!("{l}");
    }
    Ok(())
}
