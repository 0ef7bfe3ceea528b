//! The seed table designs, end to end from the bundled data in `fixtures/seeds/`: every cell is
//! recomputed independently from the input, found in the output, in the right region's file,
//! written with its family's settings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use hfkit::format::bloom::BloomType;
use hfkit::format::compression::Compression;
use hfkit::format::encoding::DataBlockEncoding;
use hfkit::format::fileinfo::keys;
use hfkit::format::reader::HFileReader;
use hfkit::format::verify::verify;

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");

use crate::common::hfkit;

/// (row, family, qualifier, timestamp, value) cells of an output directory, with the file each
/// came from.
type Cells = BTreeMap<(Vec<u8>, String, Vec<u8>, i64), Vec<u8>>;

struct FamilyExpect {
    compression: Compression,
    encoding: DataBlockEncoding,
    bloom: Option<BloomType>,
}

/// Imports `input` with `schema`, checks every output file, returns the cells and, per file,
/// its [first, last] rows.
fn import(
    schema: &str,
    input: &str,
    splits: &[Vec<u8>],
    families: &[(&str, FamilyExpect)],
) -> Cells {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("bulk");
    let o = hfkit(&[
        "import",
        "--schema",
        &format!("{SEEDS}/{schema}"),
        &format!("{SEEDS}/{input}"),
        "--out",
        dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(
        o.status.success(),
        "{schema}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut cells = Cells::new();
    for (fam, expect) in families {
        cells.extend(read_store(&dir, fam, expect, splits));
    }
    cells
}

fn csv(path: &Path, delim: char) -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(delim)
        .map(String::from)
        .collect();
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(delim).map(|f| f.trim_matches('"').to_string()))
                .collect()
        })
        .collect()
}

/// The users seed's row key: `reverse(pad(user_id, 10))`.
fn user_row(user_id: &str) -> String {
    format!("{user_id:0>10}").chars().rev().collect()
}

fn reverse_ts(ts: &str) -> String {
    format!("{:019}", i64::MAX - ts.parse::<i64>().unwrap())
}

fn put(cells: &mut Cells, row: &str, fam: &str, q: &str, ts: i64, v: &[u8]) {
    if !v.is_empty() {
        cells.insert(
            (
                row.as_bytes().to_vec(),
                fam.into(),
                q.as_bytes().to_vec(),
                ts,
            ),
            v.to_vec(),
        );
    }
}

fn fam(c: Compression, e: DataBlockEncoding, b: Option<BloomType>) -> FamilyExpect {
    FamilyExpect {
        compression: c,
        encoding: e,
        bloom: b,
    }
}

#[test]
fn user_table_reversed_padded_ids_three_families() {
    let splits: Vec<Vec<u8>> = (1..=9).map(|i| i.to_string().into_bytes()).collect();
    let got = import(
        "users.toml",
        "users.csv",
        &splits,
        &[
            (
                "i",
                fam(
                    Compression::Snappy,
                    DataBlockEncoding::None,
                    Some(BloomType::Row),
                ),
            ),
            (
                "s",
                fam(
                    Compression::Gz,
                    DataBlockEncoding::FastDiff,
                    Some(BloomType::Row),
                ),
            ),
            (
                "h",
                fam(
                    Compression::Zstd,
                    DataBlockEncoding::None,
                    Some(BloomType::RowCol),
                ),
            ),
        ],
    );
    let mut want = Cells::new();
    for r in csv(&Path::new(SEEDS).join("users.csv"), ',') {
        let row = user_row(&r["user_id"]);
        let t = 1_700_000_000_000;
        put(&mut want, &row, "i", "name", t, r["name"].as_bytes());
        put(&mut want, &row, "i", "email", t, r["email"].as_bytes());
        put(&mut want, &row, "i", "city", t, r["city"].as_bytes());
        put(
            &mut want,
            &row,
            "s",
            "score",
            t,
            &r["score"].parse::<i64>().unwrap().to_be_bytes(),
        );
        let login: i64 = r["last_login"].parse().unwrap();
        put(&mut want, &row, "h", "login", login, &login.to_be_bytes());
    }
    assert_eq!(got, want);
}

#[test]
fn order_table_reverse_timestamps_hex_split() {
    let splits: Vec<Vec<u8>> = (1..16)
        .map(|i| format!("{:x}0000000", i).into_bytes())
        .collect();
    let got = import(
        "orders.toml",
        "orders.csv",
        &splits,
        &[(
            "o",
            fam(
                Compression::Lz4,
                DataBlockEncoding::RowIndexV1,
                Some(BloomType::Row),
            ),
        )],
    );
    let mut want = Cells::new();
    for r in csv(&Path::new(SEEDS).join("orders.csv"), ',') {
        let row = format!(
            "{}_{}_{:0>10}",
            r["user_id"],
            reverse_ts(&r["order_ts"]),
            r["order_id"]
        );
        let ts: i64 = r["order_ts"].parse().unwrap();
        put(
            &mut want,
            &row,
            "o",
            "amount",
            ts,
            &r["amount"].parse::<i64>().unwrap().to_be_bytes(),
        );
        put(&mut want, &row, "o", "status", ts, r["status"].as_bytes());
    }
    assert_eq!(got, want);
}

#[test]
fn sensor_table_32_hex_regions_snappy_ttl() {
    let splits: Vec<Vec<u8>> = (1..32u64)
        .map(|i| format!("{:08x}", i * (1u64 << 32) / 32).into_bytes())
        .collect();
    let got = import(
        "sensors.toml",
        "sensors.tsv",
        &splits,
        &[(
            "r",
            fam(
                Compression::Snappy,
                DataBlockEncoding::Diff,
                Some(BloomType::Row),
            ),
        )],
    );
    let mut want = Cells::new();
    for r in csv(&Path::new(SEEDS).join("sensors.tsv"), '\t') {
        let row = format!("{}_{}", r["device"], reverse_ts(&r["ts"]));
        let ts: i64 = r["ts"].parse().unwrap();
        put(
            &mut want,
            &row,
            "r",
            "t",
            ts,
            &r["temp"].parse::<f64>().unwrap().to_bits().to_be_bytes(),
        );
        put(&mut want, &row, "r", "h", ts, r["humidity"].as_bytes());
    }
    assert_eq!(got, want);
}

#[test]
fn salted_event_table_100_regions() {
    let splits: Vec<Vec<u8>> = (1..100).map(|i| format!("{i:02}").into_bytes()).collect();
    let got = import(
        "events.toml",
        "events.csv",
        &splits,
        &[(
            "e",
            fam(
                Compression::Zstd,
                DataBlockEncoding::None,
                Some(BloomType::RowPrefixFixedLength(2)),
            ),
        )],
    );
    let mut want = Cells::new();
    let mut per_salt = [0u32; 100];
    for r in csv(&Path::new(SEEDS).join("events.csv"), ',') {
        let id = &r["event_id"];
        let salt = (hfkit::format::bloom::hash::murmur(id.as_bytes(), 0) as u32) % 100;
        per_salt[salt as usize] += 1;
        let row = format!("{salt:02}_{:0>8}", id);
        put(
            &mut want,
            &row,
            "e",
            "kind",
            1_700_000_000_000,
            r["kind"].as_bytes(),
        );
        put(
            &mut want,
            &row,
            "e",
            "p",
            1_700_000_000_000,
            r["payload"].as_bytes(),
        );
    }
    assert_eq!(got, want);
    assert!(per_salt.iter().all(|&n| n > 0), "every salt bucket used");
}

/// `hfkit import` of the users seed to `dest` (`mode`: `--table` or `--out`), with `extra`
/// arguments.
fn import_users(mode: &str, dest: &Path, extra: &[&str]) -> std::process::Output {
    let schema = format!("{SEEDS}/users.toml");
    let input = format!("{SEEDS}/users.csv");
    let mut args = vec![
        "import",
        "--schema",
        &schema,
        &input,
        mode,
        dest.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    hfkit(&args)
}

/// A quiet [`import_users`] into the table directory `table` (created by the run if missing),
/// which must succeed.
fn import_users_into(table: &Path) {
    let o = import_users("--table", table, &["--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// [`import_users_into`] again: the same import, which the table records, so `--force`
/// (`formats/import.md` §"Reruns").
fn reimport_users_into(table: &Path) {
    let o = import_users("--table", table, &["--quiet", "--force"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The README's main job: import into a table in one run, then scan and get from it.
#[test]
fn import_into_a_table_then_scan_and_get() {
    let tmp = tempfile::tempdir().unwrap();
    let table = tmp.path().join("users");
    import_users_into(&table);
    let o = hfkit(&["table", "check", table.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("5805 cells"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // Only the table's own entries remain (and its index tables): no staging directory.
    let names: Vec<String> = std::fs::read_dir(&table)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        names.iter().all(
            |n| [".lock", ".tmp", "CURRENT", "data", "manifests", "indexes"].contains(&n.as_str())
        ),
        "{names:?}"
    );
    let o = hfkit(&[
        "scan",
        table.to_str().unwrap(),
        "--format",
        "cells",
        "--now",
        "1700000000000",
    ]);
    assert!(o.status.success());
    // i: and s: cells of every user, and h: logins not yet expired at that instant.
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 5805);
    // User 100's row: 0000000100 reversed.
    let o = hfkit(&[
        "get",
        table.to_str().unwrap(),
        "0010000000",
        "--column",
        "i:name",
        "--format",
        "cells",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!(
            "{} 69 6e616d65 1700000000000 Put {} -",
            hex(b"0010000000"),
            hex(b"user 100")
        )
    );
}

/// Every cell of every HFile under `dir/<family>/`, with the file's settings checked.
fn read_store(dir: &Path, family: &str, expect: &FamilyExpect, splits: &[Vec<u8>]) -> Cells {
    let mut cells = Cells::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(family))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no files in {}", dir.display());
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(name.len(), 32, "output name {name}");
        let r = HFileReader::open(&f).unwrap();
        assert!(verify(&r).is_ok(), "{} fails verification", f.display());
        assert_eq!(r.compression(), expect.compression);
        assert_eq!(r.encoding(), expect.encoding);
        assert_eq!(
            BloomType::from_file_info(r.file_info()).unwrap(),
            expect.bloom
        );
        assert!(r.file_info().contains(keys::BULKLOAD_TIMESTAMP));
        let mut s = r.scanner().unwrap();
        let mut region = None;
        while let Some(c) = s.next().unwrap() {
            assert_eq!(c.family, family.as_bytes());
            let reg = splits.partition_point(|k| k.as_slice() <= c.row);
            assert_eq!(*region.get_or_insert(reg), reg, "a file crosses a region");
            let prev = cells.insert(
                (
                    c.row.to_vec(),
                    family.to_string(),
                    c.qualifier.to_vec(),
                    c.timestamp,
                ),
                c.value.to_vec(),
            );
            assert!(prev.is_none(), "duplicate cell");
        }
    }
    cells
}

/// The users seed's index table: written in the same run inside the main output (under
/// `.indexes/`, which bulk loads of the main table skip), with its own family settings and
/// splits; every index cell points at a row of the main table.
#[test]
fn user_index_by_email_points_at_main_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let bulk = tmp.path().join("bulk");
    let report = tmp.path().join("report.json");
    let o = import_users("--out", &bulk, &["--report", report.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(
        summary.contains("index app:users_by_email: 1200 cells (0 records without an entry"),
        "{summary}"
    );
    // The main table's rows, from all its families.
    let main_splits: Vec<Vec<u8>> = (1..=9).map(|i| i.to_string().into_bytes()).collect();
    let mut main_rows = std::collections::BTreeSet::new();
    for (family, c, e, b) in [
        (
            "i",
            Compression::Snappy,
            DataBlockEncoding::None,
            Some(BloomType::Row),
        ),
        (
            "s",
            Compression::Gz,
            DataBlockEncoding::FastDiff,
            Some(BloomType::Row),
        ),
        (
            "h",
            Compression::Zstd,
            DataBlockEncoding::None,
            Some(BloomType::RowCol),
        ),
    ] {
        for k in read_store(&bulk, family, &fam(c, e, b), &main_splits).keys() {
            main_rows.insert(k.0.clone());
        }
    }
    assert_eq!(main_rows.len(), 1200);
    // The index: its own directory, family settings and regions.
    let index_dir = bulk.join(".indexes/users_by_email");
    let index_splits = vec![b"u3".to_vec(), b"u6".to_vec()];
    let index = read_store(
        &index_dir,
        "r",
        &fam(Compression::Snappy, DataBlockEncoding::Prefix, None),
        &index_splits,
    );
    assert_eq!(index.len(), 1200);
    let users = csv(&Path::new(SEEDS).join("users.csv"), ',');
    let mut per_region = [0usize; 3];
    for ((row, fam, q, ts), value) in &index {
        assert_eq!(
            (fam.as_str(), q.as_slice(), *ts),
            ("r", &b"k"[..], 1_700_000_000_000)
        );
        assert!(
            main_rows.contains(value),
            "index row {} points at a missing row {}",
            String::from_utf8_lossy(row),
            String::from_utf8_lossy(value)
        );
        // The index row is email_userid, the value that user's main row key.
        let row = String::from_utf8(row.clone()).unwrap();
        let (email, uid) = row.rsplit_once('_').unwrap();
        let user = users.iter().find(|u| u["user_id"] == uid).unwrap();
        assert_eq!(user["email"], email);
        assert_eq!(value, user_row(uid).as_bytes());
        per_region[index_splits.partition_point(|k| k.as_slice() <= row.as_bytes())] += 1;
    }
    assert!(per_region.iter().all(|&n| n > 0), "{per_region:?}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["indexes"][0]["name"], "app:users_by_email");
    assert_eq!(r["indexes"][0]["cells"], 1200);
    assert_eq!(r["indexes"][0]["regions"].as_array().unwrap().len(), 3);
    assert_eq!(r["cells"], 5805, "main cells only");
}

/// With --table, each index table is a table directory of its own inside the main one
/// (`indexes/<qualifier>`), attached in the same run.
#[test]
fn user_index_is_attached_as_its_own_table() {
    let tmp = tempfile::tempdir().unwrap();
    let table = tmp.path().join("users");
    import_users_into(&table);
    let index = table.join("indexes/users_by_email");
    let o = hfkit(&["table", "check", index.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("1200 cells"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = hfkit(&["table", "describe", index.to_str().unwrap()]);
    let d = String::from_utf8_lossy(&o.stdout);
    assert!(d.contains("app:users_by_email"), "{d}");
    // Look a user up by e-mail, then get the user's row from the main table.
    let o = hfkit(&[
        "get",
        index.to_str().unwrap(),
        "u77@example.com_77",
        "--format",
        "cells",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!(
            "{} 72 6b 1700000000000 Put {} -",
            hex(b"u77@example.com_77"),
            hex(b"7700000000")
        )
    );
    let o = hfkit(&[
        "get",
        table.to_str().unwrap(),
        "7700000000",
        "--column",
        "i:email",
        "--format",
        "cells",
    ]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&hex(b"u77@example.com")),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // A second import into the same tables attaches to both.
    reimport_users_into(&table);
    let o = hfkit(&["table", "check", index.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("2400 cells"));
    let names: Vec<String> = std::fs::read_dir(&index)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| [".lock", ".tmp", "CURRENT", "data", "manifests"].contains(&n.as_str())),
        "staging left in the index table: {names:?}"
    );
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Writes a Parquet file of the users seed's columns: `ids` with every other column null (rows
/// without a cell), or no row group at all when `ids` is empty.
fn users_parquet_without_cells(path: &Path, ids: &[i64]) {
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;
    let schema = Arc::new(Schema::new(vec![
        Field::new("user_id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("email", DataType::Utf8, true),
        Field::new("city", DataType::Utf8, true),
        Field::new("score", DataType::Int64, true),
        Field::new("last_login", DataType::Int64, true),
    ]));
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        schema.clone(),
        None,
    )
    .unwrap();
    if !ids.is_empty() {
        let text: ArrayRef = Arc::new(StringArray::from(vec![None::<&str>; ids.len()]));
        let number: ArrayRef = Arc::new(Int64Array::from(vec![None; ids.len()]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(ids.to_vec())),
                text.clone(),
                text.clone(),
                text,
                number.clone(),
                number,
            ],
        )
        .unwrap();
        w.write(&batch).unwrap();
    }
    w.close().unwrap();
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

/// The README's "Try it": its command, run as written (with the binary for `cargo run` and a
/// scratch directory for /tmp), succeeds without a single warning, and so do the `hfkit`
/// commands the paragraph after it suggests.
#[test]
fn readme_try_it_runs_warning_free() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme
        .split("## Try it")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a '## Try it' section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("a sh block");
    let tmp = tempfile::tempdir().unwrap();
    let scratch = format!("{}/", tmp.path().display());
    let bin = env!("CARGO_BIN_EXE_hfkit");
    // /tmp in the README's text becomes the scratch directory before the binary's path goes
    // in (a checkout under /tmp must keep its binary's path).
    let mut commands: Vec<String> = block
        .replace("\\\n", " ")
        .split("&&")
        .map(|c| {
            c.trim()
                .replace("/tmp/", &scratch)
                .replacen("cargo run --release --", bin, 1)
        })
        .collect();
    // The suggestions: `hfkit ...` in backquotes, except those with a placeholder.
    for s in section.split('`').skip(1).step_by(2) {
        if s.starts_with("hfkit ") && !s.contains('<') {
            commands.push(s.replace("/tmp/", &scratch).replacen("hfkit", bin, 1));
        }
    }
    assert!(commands.len() >= 5, "{commands:?}");
    for c in commands {
        let o = Command::new("sh")
            .arg("-c")
            .arg(&c)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{c}: {stderr}");
        assert!(!stderr.contains("warning"), "{c}: {stderr}");
        assert!(!o.stdout.is_empty(), "{c}: no output");
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

/// An input without a cell (a header-only CSV, an empty TSV, a Parquet file of rows whose
/// mapped columns are all null, one without rows) is one outcome, with the seed's index table
/// too: success saying 0 cells; `--out` leaves the output directories without a family
/// directory or file; `--table` attaches nothing (no manifest version, no staging left).
#[test]
fn an_input_without_cells_imports_nothing_for_every_kind() {
    let tmp = tempfile::tempdir().unwrap();
    let header = std::fs::read_to_string(format!("{SEEDS}/users.csv"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let inputs = tmp.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    let header_only = inputs.join("header.csv");
    std::fs::write(&header_only, header + "\n").unwrap();
    let empty_tsv = inputs.join("empty.tsv");
    std::fs::write(&empty_tsv, "").unwrap();
    let null_rows = inputs.join("nulls.parquet");
    users_parquet_without_cells(&null_rows, &[1, 2, 3]);
    let no_rows = inputs.join("none.parquet");
    users_parquet_without_cells(&no_rows, &[]);
    let schema = format!("{SEEDS}/users.toml");
    let table = tmp.path().join("tables/users");
    let index = table.join("indexes/users_by_email");
    import_users_into(&table);
    for (input, rows) in [
        (&header_only, 0),
        (&empty_tsv, 0),
        (&null_rows, 3),
        (&no_rows, 0),
    ] {
        let what = input.file_name().unwrap().to_string_lossy().to_string();
        let run = |target: &str, dir: &Path| {
            let report = dir.with_extension("json");
            let o = hfkit(&[
                "import",
                "--schema",
                &schema,
                input.to_str().unwrap(),
                target,
                dir.to_str().unwrap(),
                "--report",
                report.to_str().unwrap(),
            ]);
            let stdout = String::from_utf8_lossy(&o.stdout).to_string();
            assert!(
                o.status.success(),
                "{what} {target}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(
                stdout.contains(&format!("imported {rows} rows (0 rejected) into 0 cells")),
                "{what}: {stdout}"
            );
            let r: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
            assert_eq!(
                (r["rows_read"].as_u64(), r["cells"].as_u64()),
                (Some(rows), Some(0))
            );
            assert_eq!(
                (r["files"].as_u64(), r["indexes"][0]["files"].as_u64()),
                (Some(0), Some(0))
            );
            assert!(r.get("attached").is_none(), "{what}: {r}");
            stdout
        };

        // --out: the output directories exist, without a family directory or any file.
        let case = tmp.path().join(format!("out-{what}"));
        std::fs::create_dir(&case).unwrap();
        let out = case.join("bulk");
        let stdout = run("--out", &out);
        assert!(stdout.contains(&format!("no cells: no files written to {}", out.display())));
        assert_eq!(names_in(&case), ["bulk", "bulk.json"], "{what}");
        assert_eq!(names_in(&out), [".indexes"], "{what}");
        assert!(
            names_in(&out.join(".indexes/users_by_email")).is_empty(),
            "{what}"
        );

        // --table, into tables holding the seed: nothing attached, nothing left behind.
        let before: Vec<_> = [&table, &index]
            .iter()
            .map(|t| (names_in(t), std::fs::read(t.join("CURRENT")).unwrap()))
            .collect();
        let stdout = run("--table", &table);
        assert!(
            stdout.contains(&format!(
                "no cells: nothing attached to {}",
                table.display()
            )) && stdout.contains("unchanged)")
                && stdout.contains(&format!("nothing attached to {}", index.display())),
            "{what}: {stdout}"
        );
        let after: Vec<_> = [&table, &index]
            .iter()
            .map(|t| (names_in(t), std::fs::read(t.join("CURRENT")).unwrap()))
            .collect();
        assert_eq!(before, after, "{what}");
        let o = hfkit(&["table", "check", table.to_str().unwrap()]);
        assert!(String::from_utf8_lossy(&o.stdout).contains("5805 cells"));

        // --table, creating the tables: they are created (as by any import), empty.
        let fresh = tmp.path().join(format!("new-{what}"));
        std::fs::create_dir(&fresh).unwrap();
        run("--table", &fresh.join("users"));
        let users = fresh.join("users");
        for (t, names) in [
            (
                users.clone(),
                &[".tmp", "CURRENT", "data", "indexes", "manifests"][..],
            ),
            (
                users.join("indexes/users_by_email"),
                &[".tmp", "CURRENT", "data", "manifests"][..],
            ),
        ] {
            let manifests = names_in(&t.join("manifests"));
            assert_eq!(manifests, ["manifest-00000000000000000000.json"], "{what}");
            assert_eq!(names_in(&t), names, "{what}");
        }
    }
}

/// Runs `hfkit args`, asserting success; returns stdout.
fn ok(args: &[&str]) -> String {
    let o = hfkit(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// An import creates nothing outside the path it was given: with --table T the index tables
/// are T/indexes/<qualifier>, with --out DIR they are DIR/.indexes/<qualifier>, which a bulk
/// load of DIR skips. Nothing done to T afterwards (imports, compaction, snapshots, exports,
/// their garbage collection) touches the index tables' files.
#[test]
fn index_tables_stay_under_the_path_named() {
    let tmp = tempfile::tempdir().unwrap();
    let table = tmp.path().join("users");
    let t = table.to_str().unwrap();
    import_users_into(&table);
    assert_eq!(entries(tmp.path()), ["users"]);
    let index = table.join("indexes/users_by_email");
    let ix = index.to_str().unwrap();
    assert!(
        ok(&["table", "describe", t]).contains(&format!("index table app:users_by_email: {ix}"))
    );
    // Writers of the main table collect its garbage first: the index tables are not garbage.
    ok(&["snapshot", "create", t, "s1"]);
    reimport_users_into(&table); // attaches to both tables
    let index_check = ok(&["table", "check", ix]);
    assert!(
        index_check.ends_with("OK (manifest version 2, 6 files, 2400 cells)\n"),
        "{index_check}"
    );
    ok(&["compact", t, "--major"]);
    ok(&["snapshot", "delete", t, "s1"]);
    let copy = tmp.path().join("copy");
    ok(&["export", t, "--to", copy.to_str().unwrap()]);
    ok(&["table", "alter", t, "--family", "i", "--compression", "GZ"]);
    // Every file of the index table is still there (check opens each one), no orphan either.
    assert_eq!(ok(&["table", "check", ix]), index_check);
    let check = ok(&["table", "check", t]);
    assert!(!check.contains("orphan"), "{check}");
    // The export is a copy of the table alone.
    assert!(!copy.join("indexes").exists());

    // --out DIR: the index's bulk-load directory inside DIR, skipped by an attach of DIR.
    let out = tmp.path().join("out");
    let bulk = out.join("bulk");
    assert!(import_users("--out", &bulk, &["--quiet"]).status.success());
    assert_eq!(entries(&out), ["bulk"]);
    assert_eq!(entries(&bulk), [".indexes", "h", "i", "s"]);
    assert_eq!(entries(&bulk.join(".indexes")), ["users_by_email"]);
    let t2 = tmp.path().join("t2");
    ok(&[
        "table",
        "create",
        t2.to_str().unwrap(),
        "--schema",
        &format!("{SEEDS}/users.toml"),
    ]);
    assert!(
        ok(&["attach", t2.to_str().unwrap(), bulk.to_str().unwrap()])
            .starts_with("attached 30 files (5805 cells)")
    );
}

/// A table imported before index tables went inside it has its index next to it: the next
/// import into that table says where the old one is and where this one goes.
#[test]
fn an_index_table_beside_the_table_is_pointed_out() {
    let tmp = tempfile::tempdir().unwrap();
    let table = tmp.path().join("users");
    // The earlier layout, as --index-out gives it.
    let index_out = ["--index-out", tmp.path().to_str().unwrap(), "--quiet"];
    assert!(import_users("--table", &table, &index_out).status.success());
    assert_eq!(entries(tmp.path()), ["users", "users_by_email"]);
    let o = import_users("--table", &table, &["--quiet", "--force"]);
    assert!(o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!(
            "warning: index table app:users_by_email of an earlier import is at {}; this import writes it to {}",
            tmp.path().join("users_by_email").display(),
            table.join("indexes/users_by_email").display()
        )),
        "{stderr}"
    );
}
