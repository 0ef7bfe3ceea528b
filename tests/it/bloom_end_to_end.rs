//! Bloom filters through the whole stack: written by `HFileWriter`, read by `HFileReader`.

use hfkit::format::bloom::{BloomQuery, BloomType};
use hfkit::format::cell::Cell;
use hfkit::format::compression::Compression;
use hfkit::format::reader::HFileReader;
use hfkit::format::verify::verify;
use hfkit::format::writer::{HFileWriter, WriterOptions};

fn file(bloom: BloomType, rows: u32, compression: Compression) -> Vec<u8> {
    let opts = WriterOptions {
        bloom: Some(bloom),
        compression,
        block_size: 4096,
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::new(Vec::new(), opts).unwrap();
    for r in 0..rows {
        let row = format!("user{:08}", r * 2);
        for q in ["a", "b", "c"] {
            w.append(&Cell::put(row.as_bytes(), b"f", q.as_bytes(), 1000, b"value").as_ref())
                .unwrap();
        }
    }
    w.finish().unwrap().0
}

#[test]
fn row_bloom_rules_out_at_least_98_percent_of_absent_rows() {
    let r = HFileReader::from_bytes(file(BloomType::Row, 12_000, Compression::Snappy)).unwrap();
    assert!(verify(&r).is_ok());
    let mut probe = r.bloom_probe().unwrap();
    for i in 0..12_000u32 {
        let row = format!("user{:08}", i * 2);
        assert!(
            probe
                .might_contain(BloomQuery::Row(row.as_bytes()))
                .unwrap(),
            "present row {row}"
        );
    }
    let absent = 12_000u32;
    let mut ruled_out = 0;
    for i in 0..absent {
        let row = format!("user{:08}", i * 2 + 1);
        if !probe
            .might_contain(BloomQuery::Row(row.as_bytes()))
            .unwrap()
        {
            ruled_out += 1;
        }
    }
    let rate = ruled_out as f64 / absent as f64;
    eprintln!(
        "ROW Bloom ruled out {ruled_out} of {absent} absent rows ({:.2}%)",
        rate * 100.0
    );
    assert!(rate >= 0.98, "ruled out only {:.2}%", rate * 100.0);
}

#[test]
fn every_bloom_type_answers_maybe_for_present_keys() {
    for bloom in [
        BloomType::Row,
        BloomType::RowCol,
        BloomType::prefix(6).unwrap(),
    ] {
        let r = HFileReader::from_bytes(file(bloom, 3000, Compression::None)).unwrap();
        assert!(verify(&r).is_ok(), "{bloom:?}");
        let mut probe = r.bloom_probe().unwrap();
        for i in (0..3000u32).step_by(7) {
            let row = format!("user{:08}", i * 2);
            for q in ["a", "c"] {
                let query = BloomQuery::RowCol {
                    row: row.as_bytes(),
                    family: b"f",
                    qualifier: q.as_bytes(),
                };
                assert!(probe.might_contain(query).unwrap(), "{bloom:?} {row} {q}");
            }
            assert!(probe
                .might_contain(BloomQuery::Row(row.as_bytes()))
                .unwrap());
        }
        // Past the last Bloom key: ruled out without a probe.
        let past = BloomQuery::RowCol {
            row: b"zzz",
            family: b"f",
            qualifier: b"a",
        };
        assert!(!r.might_contain(past).unwrap(), "{bloom:?}");
    }
}
