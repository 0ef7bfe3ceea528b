//! Damaged store files: never silent loss, never handed out (issue 19 §1 and §2).
//!
//! §1: one flipped trailer bit must never lose data silently. The trailer is the one
//! part of an HFile without a checksum; for every bit of the 4096-byte trailer of an
//! hfkit-written and of an HBase-written store file, the four things a user runs — `hfile
//! cells` (a file scan), `scan` and `get` of the table holding the file, and `compact --major`
//! — must either fail or give exactly the cells of the undamaged file. Never fewer.
//!
//! The reader is a function of the decoded [`Trailer`] and the bytes before the trailer (it
//! reads nothing else of the trailer's bytes). So a flip that leaves the decoded trailer equal
//! to the original (a bit in the zero padding, say) cannot change any outcome; the sweep
//! asserts that equality and runs the four operations for every other flip.
//!
//! §2: an export (or a clone or restore) that meets a damaged file fails and leaves nothing at
//! its destination.

use crate::common;

use std::path::{Path, PathBuf};

use hfkit::format::bloom::BloomType;
use hfkit::format::cell::{Cell, CellType, CellTypeOwned};
use hfkit::format::compression::Compression;
use hfkit::format::reader::HFileReader;
use hfkit::format::text::cell_line;
use hfkit::format::trailer::{Trailer, TRAILER_SIZE};
use hfkit::format::verify::verify;
use hfkit::format::writer::{HFileWriter, WriterOptions};
use hfkit::read::ReadOptions;
use hfkit::table::compact::CompactOptions;
use hfkit::table::directory::Table;
use hfkit::table::manifest::FamilyEntry;
use hfkit::table::read::TableReader;

const NOW_MS: i64 = 1_800_000_000_000;

fn raw_opts() -> ReadOptions {
    ReadOptions {
        max_versions: u32::MAX,
        raw: true,
        now_ms: NOW_MS,
        ..ReadOptions::default()
    }
}

/// Every cell of a file, from its first to its last, as text lines.
fn file_cells(bytes: Vec<u8>) -> Result<Vec<String>, String> {
    let r = HFileReader::from_bytes(bytes).map_err(|e| e.to_string())?;
    let mut s = r.scanner().map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(c) = s.next().map_err(|e| e.to_string())? {
        out.push(cell_line(&c, false));
    }
    Ok(out)
}

fn table_scan(t: &Table) -> Result<Vec<String>, String> {
    let reader = TableReader::open(t).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for row in reader.scan(&raw_opts()).map_err(|e| e.to_string())? {
        for c in row.map_err(|e| e.to_string())?.cells {
            out.push(cell_line(&c.as_ref(), false));
        }
    }
    Ok(out)
}

/// Gets of every row in `rows`, one result per row.
fn table_gets(t: &Table, rows: &[Vec<u8>]) -> Vec<Result<Vec<String>, String>> {
    let reader = match TableReader::open(t) {
        Ok(r) => r,
        Err(e) => return rows.iter().map(|_| Err(e.to_string())).collect(),
    };
    rows.iter()
        .map(|row| {
            let (cells, _) = reader.get(row, &raw_opts()).map_err(|e| e.to_string())?;
            Ok(cells
                .iter()
                .map(|c| cell_line(&c.as_ref(), false))
                .collect())
        })
        .collect()
}

/// The store files under `data/` with their bytes, and the manifest version.
fn table_state(t: &Table) -> (u64, Vec<(PathBuf, Vec<u8>)>) {
    fn walk(d: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    walk(&t.dir().join("data"), &mut files);
    files.sort();
    (t.manifest().unwrap().version, files)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// What the undamaged table gives.
struct Expected {
    file: Vec<String>,
    scan: Vec<String>,
    gets: Vec<Result<Vec<String>, String>>,
    after_major: Vec<String>,
}

#[derive(Default, Debug)]
struct Tally {
    unchanged_trailer: usize,
    refused_at_open: usize,
    opened: usize,
    failed_ops: usize,
    exact_ops: usize,
}

/// Builds a one-file table from `hfile` (family `family`), then flips every bit of the trailer
/// in place and checks the four operations.
fn sweep(root: &Path, hfile: &[u8], family: FamilyEntry, rows: &[Vec<u8>]) -> Tally {
    let bulk = root.join("bulk");
    std::fs::create_dir_all(bulk.join(&family.name)).unwrap();
    std::fs::write(bulk.join(&family.name).join("f0"), hfile).unwrap();
    let pristine = root.join("pristine");
    let t = Table::create(&pristine, "default:t", vec![family], &[]).unwrap();
    t.attach(&bulk).unwrap();

    let expected = {
        let work = root.join("expected");
        copy_dir(&pristine, &work);
        let t = Table::open(&work).unwrap();
        let scan = table_scan(&t).unwrap();
        let gets = table_gets(&t, rows);
        t.compact(CompactOptions {
            major: true,
            now_ms: NOW_MS,
            ..CompactOptions::default()
        })
        .unwrap();
        Expected {
            file: file_cells(hfile.to_vec()).unwrap(),
            scan,
            gets,
            after_major: table_scan(&t).unwrap(),
        }
    };
    assert!(!expected.file.is_empty());
    assert_eq!(expected.scan.len(), expected.file.len());

    let work = root.join("work");
    copy_dir(&pristine, &work);
    let mut t = Table::open(&work).unwrap();
    let store_file = |t: &Table| {
        let m = t.manifest().unwrap();
        t.file_path(&m.files[0])
    };
    let original = Trailer::read(hfile).unwrap();
    let trailer_at = hfile.len() - TRAILER_SIZE;
    let mut tally = Tally::default();
    for byte in trailer_at..hfile.len() {
        for bit in 0..8 {
            let mut damaged = hfile.to_vec();
            damaged[byte] ^= 1 << bit;
            let at = format!("trailer byte {} bit {bit}", byte - trailer_at);
            match Trailer::read(&damaged) {
                Ok(t) if t == original => {
                    tally.unchanged_trailer += 1;
                    continue;
                }
                Ok(t) => {
                    tally.opened += 1;
                    // A field the reads do not use (they all succeeded below): `hfile verify`
                    // notices every one but the minor version (3.1 to 3.3 read the same).
                    let only_minor = Trailer {
                        minor_version: original.minor_version,
                        ..t
                    } == original;
                    if file_cells(damaged.clone()).is_ok() && !only_minor {
                        let verified = HFileReader::from_bytes(damaged.clone())
                            .map(|r| verify(&r).is_ok())
                            .unwrap_or(false);
                        assert!(!verified, "{at}: hfile verify passes a changed trailer");
                    }
                }
                Err(_) => tally.refused_at_open += 1,
            }
            let mut check =
                |what: &str, got: Result<Vec<String>, String>, want: &[String]| match got {
                    Err(_) => tally.failed_ops += 1,
                    Ok(got) if got == want => tally.exact_ops += 1,
                    Ok(got) => panic!(
                        "{at}: {what} returned {} cells instead of {} and did not fail",
                        got.len(),
                        want.len()
                    ),
                };
            check("hfile cells", file_cells(damaged.clone()), &expected.file);
            let path = store_file(&t);
            std::fs::write(&path, &damaged).unwrap();
            check("scan", table_scan(&t), &expected.scan);
            for (row, (got, want)) in rows
                .iter()
                .zip(table_gets(&t, rows).into_iter().zip(&expected.gets))
            {
                let want = want.as_ref().unwrap();
                check(&format!("get {row:?}"), got, want);
            }
            let before = table_state(&t);
            let compacted = t.compact(CompactOptions {
                major: true,
                now_ms: NOW_MS,
                ..CompactOptions::default()
            });
            match compacted {
                Err(_) => {
                    tally.failed_ops += 1;
                    assert!(
                        table_state(&t) == before,
                        "{at}: a failed major compaction changed the table"
                    );
                    std::fs::write(&path, hfile).unwrap();
                }
                Ok(_) => {
                    check("compact --major", table_scan(&t), &expected.after_major);
                    std::fs::remove_dir_all(&work).unwrap();
                    copy_dir(&pristine, &work);
                    t = Table::open(&work).unwrap();
                }
            }
        }
    }
    tally
}

/// An hfkit-written file: SNAPPY, ROW Bloom, small blocks and index blocks (a multi-level
/// index), several versions and every kind of delete marker.
fn hfkit_file() -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut cells = Vec::new();
    let mut rows = Vec::new();
    for r in 0..150u32 {
        let row = format!("row{r:05}").into_bytes();
        for q in 0..3u32 {
            let qual = format!("q{q}").into_bytes();
            for ts in [300i64, 200] {
                cells.push(Cell::put(
                    &row,
                    b"f",
                    &qual,
                    ts,
                    format!("v{r}-{q}-{ts}").as_bytes(),
                ));
            }
        }
        let marker = |t: CellType, q: &[u8], ts: i64| Cell {
            cell_type: CellTypeOwned(t),
            ..Cell::put(&row, b"f", q, ts, b"")
        };
        match r % 10 {
            1 => cells.push(marker(CellType::Delete, b"q0", 300)),
            2 => cells.push(marker(CellType::DeleteColumn, b"q1", 250)),
            3 => cells.push(marker(CellType::DeleteFamily, b"", 250)),
            4 => cells.push(marker(CellType::DeleteFamilyVersion, b"", 200)),
            _ => {}
        }
        rows.push(row);
    }
    rows.push(b"absent".to_vec());
    rows.push(b"row00075x".to_vec());
    cells.sort_by(|a, b| hfkit::format::cell::compare_cells(&a.as_ref(), &b.as_ref()));
    let opts = WriterOptions {
        block_size: 512,
        index_block_size: 128,
        compression: Compression::Snappy,
        bloom: Some(BloomType::Row),
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::new(Vec::new(), opts).unwrap();
    for c in &cells {
        w.append(&c.as_ref()).unwrap();
    }
    let (bytes, summary) = w.finish().unwrap();
    assert!(
        summary.index_levels >= 2,
        "the sweep wants a multi-level index"
    );
    (bytes, rows)
}

#[test]
fn every_trailer_bit_of_an_hfkit_file_fails_or_reads_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let (bytes, rows) = hfkit_file();
    let family = FamilyEntry {
        versions: 2,
        keep_deleted_cells: "FALSE".into(),
        ..FamilyEntry::new("f")
    };
    let tally = sweep(tmp.path(), &bytes, family, &rows);
    eprintln!("hfkit file: {tally:?}");
    assert_eq!(
        tally.unchanged_trailer + tally.opened + tally.refused_at_open,
        TRAILER_SIZE * 8
    );
    assert!(tally.opened > 0 && tally.refused_at_open > 0);
}

#[test]
fn every_trailer_bit_of_an_hbase_file_fails_or_reads_exactly() {
    let Some(root) = common::fixtures_root("every_trailer_bit_of_an_hbase_file") else {
        return;
    };
    // 3-level index, ROWCOL Bloom, delete markers; written by HBase's StoreFileWriter.
    let path = root.join("hbase/index_3level.hfile");
    let bytes = std::fs::read(&path).unwrap();
    let mut rows: Vec<Vec<u8>> = Vec::new();
    let reader = HFileReader::from_bytes(bytes.clone()).unwrap();
    let mut s = reader.scanner().unwrap();
    while let Some(c) = s.next().unwrap() {
        if rows.last().is_none_or(|r| r.as_slice() != c.row) {
            rows.push(c.row.to_vec());
        }
    }
    // Every 7th row keeps the run short; the first and last rows are always in.
    let last = rows.len() - 1;
    let mut rows: Vec<Vec<u8>> = rows
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % 7 == 0 || *i == last)
        .map(|(_, r)| r)
        .collect();
    rows.push(b"absent".to_vec());
    let family = FamilyEntry {
        versions: 3,
        ..FamilyEntry::new("cf")
    };
    let tmp = tempfile::tempdir().unwrap();
    let tally = sweep(tmp.path(), &bytes, family, &rows);
    eprintln!("HBase file: {tally:?}");
    assert!(tally.opened > 0 && tally.refused_at_open > 0);
}

/// The reproduction, through the command line: a bit of `entry_count` flipped in one
/// store file of an imported table. Every command that reads the file fails (exit 1, naming the
/// field) instead of returning fewer cells, and `compact --major` refuses and keeps the file.
#[test]
fn the_reported_flip_fails_every_command_and_compaction_keeps_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let table = tmp.path().join("t");
    let table = table.to_str().unwrap();
    let t = import_users(Path::new(table));
    let m = t.manifest().unwrap();
    let victim = m.files.iter().max_by_key(|e| e.entries).unwrap();
    let path = t.file_path(victim);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - TRAILER_SIZE + entry_count_offset(&bytes[bytes.len() - TRAILER_SIZE..]);
    bytes[at] ^= 1 << 5;
    std::fs::write(&path, &bytes).unwrap();
    let file = path.to_str().unwrap();
    let row = hex_row(&victim.first_row);
    for args in [
        vec!["hfile", "cells", file],
        vec!["scan", table, "--raw"],
        vec!["get", table, &row],
        vec!["compact", table, "--major"],
    ] {
        let o = hfkit(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("entry_count"), "{args:?}: {err}");
    }
    assert!(path.is_file(), "the compaction removed its damaged input");
    assert_eq!(t.manifest().unwrap(), m);
}

/// A row key as `hfkit get` takes it (`Bytes.toStringBinary` text).
fn hex_row(row: &[u8]) -> String {
    row.iter()
        .map(|&b| {
            if b.is_ascii_graphic() && b != b'\\' {
                (b as char).to_string()
            } else {
                format!("\\x{b:02X}")
            }
        })
        .collect()
}

/// Offset in a trailer of the first byte of `entry_count`'s value (field 7). Fields 1-12 are
/// varints except the comparator name (11, length-delimited).
fn entry_count_offset(trailer: &[u8]) -> usize {
    let varint = |at: &mut usize| {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = trailer[*at];
            *at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                break;
            }
        }
        v
    };
    let mut at = 8;
    varint(&mut at); // message length
    loop {
        let tag = varint(&mut at);
        if tag >> 3 == 7 {
            return at;
        }
        match tag & 7 {
            0 => {
                varint(&mut at);
            }
            2 => at += varint(&mut at) as usize,
            w => panic!("wire type {w} in a trailer"),
        }
    }
}

use crate::common::hfkit;

/// The README's table: the users seed imported into `dir`.
fn import_users(dir: &Path) -> Table {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seeds");
    let o = hfkit(&[
        "import",
        "--schema",
        seeds.join("users.toml").to_str().unwrap(),
        seeds.join("users.csv").to_str().unwrap(),
        "--table",
        dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Table::open(dir).unwrap()
}

/// Flips one bit inside the first data block of the table's largest store file (a checksum
/// mismatch for every reader). Returns the file's path.
fn damage_a_data_block(t: &Table) -> PathBuf {
    let m = t.manifest().unwrap();
    let e = m.files.iter().max_by_key(|e| e.entries).unwrap();
    let path = t.file_path(e);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[100] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    path
}

/// Names in `dir` (sorted).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn exports_of_a_damaged_table_fail_and_leave_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let table = tmp.path().join("t");
    let t = import_users(&table);
    let o = hfkit(&["snapshot", "create", table.to_str().unwrap(), "s"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let damaged = damage_a_data_block(&t);
    let before = names(tmp.path());
    let users_schema = format!("{}/fixtures/seeds/users.toml", env!("CARGO_MANIFEST_DIR"));
    let out = tmp.path().join("out");
    let out = out.to_str().unwrap();
    for args in [
        vec!["export", table.to_str().unwrap(), "--bulkload", out],
        vec!["export", table.to_str().unwrap(), "--to", out],
        vec![
            "export",
            table.to_str().unwrap(),
            "--snapshot",
            "s",
            "--bulkload",
            out,
        ],
        vec![
            "export",
            table.to_str().unwrap(),
            "--snapshot",
            "s",
            "--to",
            out,
        ],
        vec!["snapshot", "clone", table.to_str().unwrap(), "s", out],
    ]
    .into_iter()
    .chain(
        // Cell and row exports, their regions read on three threads: the worker that reads
        // the damaged file stops them all, and no file is left.
        [
            &["csv"][..],
            &["parquet"],
            &["parquet", "--rows", "--schema", &users_schema],
        ]
        .map(|format| {
            let mut args = vec!["export", table.to_str().unwrap(), "--format"];
            args.extend_from_slice(format);
            args.extend_from_slice(&["--to", out, "--threads", "3"]);
            args
        }),
    ) {
        let o = hfkit(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(damaged.file_name().unwrap().to_str().unwrap()),
            "{args:?} does not name the damaged file: {err}"
        );
        assert_eq!(names(tmp.path()), before, "{args:?} left something behind");
    }
}

#[test]
fn restoring_a_snapshot_with_a_damaged_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let table = tmp.path().join("t");
    let t = import_users(&table);
    let tbl = table.to_str().unwrap();
    assert!(hfkit(&["snapshot", "create", tbl, "s"]).status.success());
    // A major compaction replaces every live file; the snapshot still pins the old ones.
    assert!(hfkit(&["compact", tbl, "--major"]).status.success());
    let live = t.manifest().unwrap();
    let snap = t.snapshot("s").unwrap().manifest;
    let e = snap.files.iter().max_by_key(|e| e.entries).unwrap();
    let path = t.file_path(e);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[100] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let o = hfkit(&["snapshot", "restore", tbl, "s"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(path.file_name().unwrap().to_str().unwrap()),
        "{err}"
    );
    assert_eq!(t.manifest().unwrap(), live, "the restore changed the table");
    for e in &live.files {
        assert!(t.file_path(e).is_file(), "a live file was deleted");
    }
}
