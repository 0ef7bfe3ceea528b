//! Fuzz target: any bytes given to the writer's `append_records` as cell records must be
//! appended or refused, never a panic; and the file the writer then finishes must read back
//! whole, with as many cells as the writer counted.
//!
//! The first input byte picks the file's layout and options (bit 0: tags, bit 1: MVCC,
//! bits 2-3: no Bloom, ROW, ROWCOL or ROWPREFIX, bits 4-6: block size 16 << n bytes, bit 7:
//! PREFIX encoding instead of NONE); the rest is split at byte 0xfe markers into calls.
//! Run (nightly):
//!   cargo +nightly fuzz run append_records -- -max_total_time=600
#![no_main]

use hfkit::format::bloom::BloomType;
use hfkit::format::encoding::DataBlockEncoding;
use hfkit::format::reader::HFileReader;
use hfkit::format::writer::{HFileWriter, WriterOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&how, records)) = data.split_first() else {
        return;
    };
    let opts = WriterOptions {
        include_tags: how & 1 != 0,
        include_mvcc: how & 2 != 0,
        bloom: match (how >> 2) & 3 {
            0 => None,
            1 => Some(BloomType::Row),
            2 => Some(BloomType::RowCol),
            _ => Some(BloomType::RowPrefixFixedLength(2)),
        },
        block_size: 16 << ((how >> 4) & 7),
        encoding: if how & 0x80 != 0 {
            DataBlockEncoding::Prefix
        } else {
            DataBlockEncoding::None
        },
        ..WriterOptions::default()
    };
    let Ok(mut w) = HFileWriter::new(Vec::new(), opts) else {
        return;
    };
    for call in records.split(|&b| b == 0xfe) {
        let _ = w.append_records(call);
    }
    let cells = w.entry_count();
    let Ok((file, _)) = w.finish() else {
        return;
    };
    let reader = HFileReader::from_bytes(file).expect("the writer's file opens");
    let mut scanner = reader.scanner().expect("its scanner starts");
    let mut n = 0u64;
    while scanner.next().expect("its cells read").is_some() {
        n += 1;
    }
    assert_eq!(n, cells, "cells read back");
});
