//! Fuzz target: any bytes given to the HFile reader must give `Ok` or `Err`, never a panic,
//! a hang or an unbounded allocation. Opens the input, scans every cell, then seeks to keys
//! taken from the file (its cells, its last key) and from the input bytes.
//!
//! Seed corpus (small writer-made files, every codec, multi-level indexes, NULL checksums):
//!   cargo run --example fuzz_seed_corpus -- fuzz/corpus/read_hfile
//! Run (nightly):
//!   cargo +nightly fuzz run read_hfile -- -max_total_time=600
#![no_main]

use hfkit::format::cell::{first_on_row, write_key_parts};
use hfkit::format::reader::HFileReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(reader) = HFileReader::from_bytes(data.to_vec()) else {
        return;
    };
    let Ok(mut scanner) = reader.scanner() else {
        return;
    };
    // Scan, keeping a few keys of the cells seen.
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut n = 0usize;
    while let Ok(Some(cell)) = scanner.next() {
        if n % 7 == 0 && keys.len() < 8 {
            keys.push(cell.key());
        }
        n += 1;
    }
    if let Some(k) = reader.last_key() {
        keys.push(k.to_vec());
    }
    // Keys from the input bytes: rows of its first bytes, and a raw slice as a flat key.
    let head = &data[..data.len().min(16)];
    keys.push(first_on_row(head));
    keys.push(first_on_row(b""));
    let mut k = Vec::new();
    write_key_parts(
        &mut k,
        &data[data.len() / 2..(data.len() / 2 + 4).min(data.len())],
        b"cf",
        b"q",
        0,
        4,
    );
    keys.push(k);
    keys.push(data[data.len().saturating_sub(40)..].to_vec());
    let Ok(mut scanner) = reader.scanner() else {
        return;
    };
    for key in &keys {
        if let Ok(Some(_)) = scanner.seek(key) {
            let _ = scanner.next();
            let _ = scanner.current();
        }
    }
});
