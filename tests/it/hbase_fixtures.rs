//! Compatibility with files written by Apache HBase's own writer (`../shared/fixtures/hbase`):
//! every cell read back exactly, every file verified, and our writer reproducing HBase's bytes.

use crate::common;

use common::{fixtures, fixtures_root};
use hfkit::format::block::{BlockDecoder, BlockType};
use hfkit::format::encoding::{CellEncoder, EncodingContext, NoneEncoder};
use hfkit::format::reader::HFileReader;
use hfkit::format::text::push_cell_line;
use hfkit::format::trailer::Trailer;
use hfkit::format::writer::HFileWriter;

/// All cells of a file in canonical text.
fn cells_text(
    path: &std::path::Path,
    with_seq: bool,
) -> Result<String, hfkit::format::FormatError> {
    let r = HFileReader::open(path)?;
    let mut s = r.scanner()?;
    let mut out = String::new();
    while let Some(c) = s.next()? {
        push_cell_line(&mut out, &c, with_seq);
        out.push('\n');
    }
    Ok(out)
}

#[test]
fn every_fixture_reads_back_exactly() {
    let Some(root) = fixtures_root("every_fixture_reads_back_exactly") else {
        return;
    };
    let mut checked = 0;
    for f in fixtures(&root) {
        let got = cells_text(&f.hfile, f.has_seqid()).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        let want = f.cells_txt();
        if got != want {
            let line = got.lines().zip(want.lines()).position(|(a, b)| a != b);
            panic!(
                "{}: cells differ (first differing line {:?}; {} vs {} lines)",
                f.name,
                line.map(|l| l + 1),
                got.lines().count(),
                want.lines().count()
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 52, "fixtures checked");
}

/// Block list of a file: (offset, header bytes + payload bytes) for every block before the trailer.
fn blocks(bytes: &[u8]) -> Vec<(u64, &[u8])> {
    let end = Trailer::offset_in(bytes.len() as u64);
    let mut at = 0u64;
    let mut out = Vec::new();
    while at < end {
        let h = BlockDecoder::header_at(&bytes[..end as usize], at).unwrap();
        let len = h.on_disk_size_with_header();
        out.push((at, &bytes[at as usize..(at + len) as usize]));
        at += len;
    }
    out
}

#[test]
fn writer_reproduces_hbase_bytes_for_uncompressed_unencoded_fixtures() {
    let Some(root) = fixtures_root("writer_reproduces_hbase_bytes") else {
        return;
    };
    let mut compared = 0;
    for f in fixtures(&root) {
        if f.opt("compression") != "NONE" {
            continue;
        }
        let mut w = HFileWriter::new(Vec::new(), f.writer_options()).unwrap();
        for c in f.cells() {
            w.append(&c.as_ref()).unwrap();
        }
        let (ours, _) = w.finish().unwrap();
        let theirs = std::fs::read(&f.hfile).unwrap();
        let (a, b) = (blocks(&ours), blocks(&theirs));
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(x.0, y.0, "{}: block {i} offset", f.name);
            assert!(
                x.1 == y.1,
                "{}: block {i} at offset {} ({}) differs",
                f.name,
                x.0,
                String::from_utf8_lossy(&x.1[..8])
            );
        }
        assert_eq!(a.len(), b.len(), "{}: block count", f.name);
        assert_eq!(ours, theirs, "{}: trailer differs", f.name);
        // The same cells a row at a time (the import's way): HBase's bytes again.
        let cells = f.cells();
        let mut w = HFileWriter::new(Vec::new(), f.writer_options()).unwrap();
        for row in cells.chunk_by(|a, b| a.row == b.row) {
            let refs: Vec<_> = row.iter().map(|c| c.as_ref()).collect();
            w.append_row(&refs).unwrap();
        }
        let (by_rows, _) = w.finish().unwrap();
        assert!(by_rows == theirs, "{}: append_row gave other bytes", f.name);
        // And as records in the file's layout (HBase's KeyValue bytes), 4 KiB a call.
        let opts = f.writer_options();
        let mut encoder = NoneEncoder::new(EncodingContext {
            include_tags: opts.include_tags,
            include_mvcc: opts.include_mvcc,
            compress_tags: opts.compress_tags,
        });
        let mut records = Vec::new();
        let mut w = HFileWriter::new(Vec::new(), opts).unwrap();
        for c in &cells {
            encoder.encode(&c.as_ref(), &mut records).unwrap();
            if records.len() >= 4096 {
                w.append_records(&records).unwrap();
                records.clear();
            }
        }
        w.append_records(&records).unwrap();
        let (by_records, _) = w.finish().unwrap();
        assert!(
            by_records == theirs,
            "{}: append_records gave other bytes",
            f.name
        );
        compared += 1;
    }
    assert_eq!(compared, 22, "uncompressed fixtures compared");
}

/// Decompressed view of every block: (type, uncompressed payload).
fn decoded_blocks(bytes: &[u8]) -> Vec<(BlockType, Vec<u8>)> {
    let r = HFileReader::from_bytes(bytes.to_vec()).unwrap();
    let mut dec = r.block_decoder().unwrap();
    let end = Trailer::offset_in(bytes.len() as u64);
    let mut at = 0u64;
    let mut out = Vec::new();
    while at < end {
        let mut payload = Vec::new();
        let h = r.read_block(&mut dec, at, &mut payload).unwrap();
        out.push((h.block_type, payload));
        at += h.on_disk_size_with_header();
    }
    out
}

#[test]
fn writer_matches_hbase_block_boundaries_and_payloads_for_compressed_fixtures() {
    let Some(root) = fixtures_root("writer_matches_compressed") else {
        return;
    };
    let mut compared = 0;
    let mut identical_files = 0;
    for f in fixtures(&root) {
        if f.opt("compression") == "NONE" {
            continue;
        }
        let mut w = HFileWriter::new(Vec::new(), f.writer_options()).unwrap();
        for c in f.cells() {
            w.append(&c.as_ref()).unwrap();
        }
        let (ours, _) = w.finish().unwrap();
        let theirs = std::fs::read(&f.hfile).unwrap();
        let (a, b) = (decoded_blocks(&ours), decoded_blocks(&theirs));
        assert_eq!(a.len(), b.len(), "{}: block count", f.name);
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(x.0, y.0, "{}: block {i} type", f.name);
            assert_eq!(
                x.1.len(),
                y.1.len(),
                "{}: block {i} ({}) uncompressed size",
                f.name,
                x.0.name()
            );
            // Index and Bloom meta payloads hold block offsets, which depend on compressed sizes.
            if x.0.is_data() || x.0 == BlockType::BloomChunk || x.0 == BlockType::FileInfo {
                assert!(
                    x.1 == y.1,
                    "{}: block {i} ({}) payload differs",
                    f.name,
                    x.0.name()
                );
            }
        }
        if ours == theirs {
            identical_files += 1;
        }
        compared += 1;
    }
    eprintln!(
        "compressed fixtures: {compared} compared, {identical_files} byte-identical as whole files"
    );
    assert_eq!(compared, 30, "compressed fixtures compared");
}

/// The lookup and the skip report of the `hfkit-testkit` crate.
mod skips {
    use super::common::test_fixtures::*;
    use std::ffi::OsString;

    #[test]
    fn missing_fixtures_skip_unless_required() {
        let tmp = tempfile::tempdir().unwrap();
        let root = || Some(tmp.path().as_os_str().to_owned());
        let some = |s: &str| Some(OsString::from(s));
        assert!(matches!(lookup(root(), None, "hbase"), Lookup::Skip(_)));
        assert!(matches!(
            lookup(root(), some("0"), "hbase"),
            Lookup::Skip(_)
        ));
        match lookup(root(), some("1"), "hbase") {
            Lookup::Fail(why) => assert!(
                why.contains("HBase fixtures not found at")
                    && why.contains("HFKIT_REQUIRE_FIXTURES is set"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
        std::fs::create_dir(tmp.path().join("hbase")).unwrap();
        assert_eq!(
            lookup(root(), some("1"), "hbase"),
            Lookup::Found(tmp.path().join("hbase"))
        );
    }

    #[test]
    #[should_panic(expected = "HFKIT_REQUIRE_FIXTURES is set, so this is a failure")]
    fn a_required_fixture_fails_the_test() {
        let tmp = tempfile::tempdir().unwrap();
        if let Lookup::Fail(why) = lookup(
            Some(tmp.path().as_os_str().to_owned()),
            Some("yes".into()),
            "splits",
        ) {
            panic!("{why}");
        }
    }

    #[test]
    fn skips_are_recorded_and_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        assert_eq!(
            report(&skipped(&run)),
            "hfkit: no HBase compatibility test was skipped in this run\n"
        );
        record_skip(&run, "hbase_fixtures::writer_matches_compressed");
        record_skip(&run, "every_fixture_reads_back_exactly");
        record_skip(&run, "every_fixture_reads_back_exactly");
        let names = skipped(&run);
        assert_eq!(
            names,
            [
                "every_fixture_reads_back_exactly",
                "hbase_fixtures::writer_matches_compressed"
            ]
        );
        let r = report(&names);
        assert!(
            r.contains("WARNING: 2 HBase compatibility test(s) SKIPPED")
                && r.contains("  skipped: hbase_fixtures::writer_matches_compressed\n"),
            "{r}"
        );
        // A finished run's directory goes, and so does that of a run whose cargo is gone.
        let stale = tmp.path().join("4294967295-1");
        std::fs::create_dir(&stale).unwrap();
        finish_run(&run);
        assert!(!run.exists() && !stale.exists());
    }

    #[test]
    fn the_run_is_named_after_the_parent_process() {
        let dir = run_dir().unwrap();
        assert!(dir.parent().unwrap().ends_with("hfkit-fixture-skips"));
        assert_eq!(run_dir(), Some(dir));
    }
}

/// `hfile info --json --blocks --headers` (HFilePrettyPrinter's `-m`, `-b`, `-h`) against
/// what HBase's reader said of the same file (`dump`): every FileInfo key HBase lists, its
/// bytes (the reader's) and its decoded value (the CLI's: numbers, booleans, strings, the time
/// range), the trailer's fields, and every block's header HBase iterated, by offset.
/// Returns how many blocks were compared.
fn same_meta_and_blocks(
    name: &str,
    dump: &str,
    info: &serde_json::Value,
    r: &HFileReader,
) -> usize {
    let fi = &info["file_info"];
    let count = dump
        .lines()
        .find_map(|l| l.strip_prefix("fileinfo.count: "));
    let keys = fi.as_object().unwrap();
    assert_eq!(
        count.map(|c| c.parse::<usize>().unwrap()),
        Some(keys.len()),
        "{name}"
    );
    for line in dump.lines().filter_map(|l| l.strip_prefix("fileinfo[")) {
        let (key, rest) = line.split_once("]: ").unwrap();
        let (bytes, shown) = match rest.split_once("  (") {
            Some((b, s)) => (b, Some(s.trim_end_matches(')'))),
            None => (rest, None),
        };
        let ours = r
            .file_info()
            .get(key)
            .unwrap_or_else(|| panic!("{name}: no {key}"));
        assert_eq!(
            hfkit::format::text::hex(ours),
            bytes,
            "{name}: {key}'s bytes"
        );
        let v = &fi[key];
        assert!(!v.is_null(), "{name}: hfile info lists no {key}");
        match shown {
            Some("true") | Some("false") => assert_eq!(v.as_bool(), shown.map(|s| s == "true")),
            Some(s) if s.starts_with("str:") => {
                let text = &s[4..];
                assert!(v == text || v == bytes, "{name}: {key}: {v} for {text}");
            }
            Some(s) if s.starts_with("min=") => {
                let (min, max) = s[4..].split_once(" max=").unwrap();
                assert_eq!(v["min"].as_i64(), min.parse().ok(), "{name}: {key}");
                assert_eq!(v["max"].as_i64(), max.parse().ok(), "{name}: {key}");
            }
            Some(s) if s.parse::<i64>().is_ok() => {
                assert_eq!(v.as_i64(), s.parse().ok(), "{name}: {key}")
            }
            _ => {}
        }
    }
    // The trailer: HBase's camelCase names, ours in snake_case.
    for line in dump.lines().filter_map(|l| l.strip_prefix("trailer.")) {
        let (field, value) = line.split_once(": ").unwrap();
        let snake: String = field
            .chars()
            .flat_map(|c| match c.is_ascii_uppercase() {
                true => vec!['_', c.to_ascii_lowercase()],
                false => vec![c],
            })
            .collect();
        let ours = &info["trailer"][snake.as_str()];
        match ours {
            serde_json::Value::Number(n) => assert_eq!(n.to_string(), value, "{name}: {field}"),
            serde_json::Value::String(t) => assert_eq!(t, value, "{name}: {field}"),
            _ => {}
        }
    }
    // Every block HBase iterated, by offset: type, sizes, previous block, checksums.
    let headers: std::collections::HashMap<u64, &serde_json::Value> = info["block_headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["offset"].as_u64().unwrap(), h))
        .collect();
    let mut blocks = 0;
    for line in dump.lines().filter_map(|l| l.strip_prefix("block: ")) {
        let f: Vec<&str> = line.split(' ').collect();
        let h = headers
            .get(&f[0].parse::<u64>().unwrap())
            .unwrap_or_else(|| panic!("{name}: no block at {}", f[0]));
        let n = |k: &str| h[k].as_i64().unwrap().to_string();
        let with_header = (h["on_disk_size_without_header"].as_i64().unwrap() + 33).to_string();
        let ours = [
            h["type"].as_str().unwrap().to_string(),
            with_header,
            n("uncompressed_size_without_header"),
            n("on_disk_data_size_with_header"),
            n("prev_block_offset"),
            h["checksum_type"].as_str().unwrap().to_string(),
            n("bytes_per_checksum"),
        ];
        assert_eq!(&f[1..8], ours.as_slice(), "{name}: block {}", f[0]);
        blocks += 1;
    }
    blocks
}

/// `hfile info` and `hfile cells` in HFilePrettyPrinter's terms, on every HBase-written file:
/// the first and last keys HBase's reader reports (`reader.firstKey`, `reader.lastKey` of the
/// fixture's dump), a mid key that is one of the data index's keys (HBase's
/// `BlockIndexReader.midkey`: the middle root entry, or the leaf entry the mid-key metadata
/// names), size statistics over every cell, and `cells --format hbase` / `--keys-only` /
/// `--row` / `--limit` lines: one per cell of the row sought, `K: row/family:qualifier/ts/Type
/// /vlen=N/seqid=N V: value`; FileInfo, trailer and blocks as [`same_meta_and_blocks`].
#[test]
fn hfile_info_and_cells_answer_as_hfile_pretty_printer() {
    let Some(root) = fixtures_root("hfile_info_and_cells_answer_as_hfile_pretty_printer") else {
        return;
    };
    let run = |args: &[&str]| {
        let o = common::hfkit(args);
        assert!(o.status.success(), "{args:?}: {}", common::text(&o.stderr));
        common::text(&o.stdout)
    };
    let (mut checked, mut blocks) = (0, 0);
    for f in fixtures(&root) {
        let path = f.hfile.to_str().unwrap();
        let dump = std::fs::read_to_string(f.hfile.with_extension("dump.txt")).unwrap();
        let field = |k: &str| {
            dump.lines()
                .find_map(|l| l.strip_prefix(&format!("{k}: ")))
                .map(str::to_string)
        };
        let info: serde_json::Value = serde_json::from_str(&run(&[
            "hfile",
            "info",
            path,
            "--json",
            "--stats",
            "--blocks",
            "--headers",
        ]))
        .unwrap();
        let r = HFileReader::open(&f.hfile).unwrap();
        if r.entry_count() == 0 {
            continue;
        }
        assert_eq!(
            info["first_key"].as_str(),
            field("reader.firstKey").as_deref(),
            "{}",
            f.name
        );
        assert_eq!(
            info["last_key"].as_str(),
            field("reader.lastKey").as_deref(),
            "{}",
            f.name
        );
        blocks += same_meta_and_blocks(&f.name, &dump, &info, &r);
        let mid = info["index"]["mid_key"].as_str().unwrap().to_string();
        let levels = info["index_entries"].as_array().unwrap();
        assert!(
            levels
                .iter()
                .flat_map(|l| l.as_array().unwrap())
                .any(|e| e["key"] == mid.as_str()),
            "{}: mid key {mid} is no index key",
            f.name
        );
        assert_eq!(
            info["size_stats"]["value_length"]["count"].as_u64(),
            Some(r.entry_count()),
            "{}",
            f.name
        );
        let first = run(&["hfile", "cells", path, "--format", "hbase", "--limit", "1"]);
        assert!(first.starts_with("K: ") && first.contains("/vlen=") && first.contains(" V: "));
        assert_eq!(first.lines().count(), 1);
        // The last row, sought: every one of its cells, as many as the canonical form has.
        let last_row = r.bounds().last_row.clone().unwrap();
        let row_text = hfkit::table::to_string_binary(&last_row);
        let sought = run(&["hfile", "cells", path, "--row", &row_text, "--keys-only"]);
        let all = cells_text(&f.hfile, false).unwrap();
        let row_hex = hfkit::format::text::hex(&last_row);
        let in_row = all
            .lines()
            .filter(|l| l.split(' ').next() == Some(row_hex.as_str()))
            .count();
        assert_eq!(sought.lines().count(), in_row, "{}", f.name);
        checked += 1;
    }
    assert!(checked >= 50, "{checked} fixtures checked");
    assert!(blocks >= 5000, "{blocks} blocks compared");
}
