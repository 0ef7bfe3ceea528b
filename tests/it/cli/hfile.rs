//! `hfkit hfile`: write, cells, get, info, verify on single files and on a region's files,
//! damaged files, Bloom filters consulted.

use super::*;

#[test]
fn write_then_cells_round_trips_the_sample_for_every_codec() {
    let dir = tempfile::tempdir().unwrap();
    let want = std::fs::read_to_string(SAMPLE).unwrap();
    for codec in ["none", "gz", "snappy", "lz4", "zstd"] {
        let out = dir.path().join(format!("{codec}.hfile"));
        let o = hfkit(&[
            "hfile",
            "write",
            out.to_str().unwrap(),
            "--cells",
            SAMPLE,
            "--compression",
            codec,
            "--block-size",
            "4096",
        ]);
        assert!(o.status.success(), "{codec}: {}", text(&o.stderr));
        let o = hfkit(&["hfile", "cells", out.to_str().unwrap()]);
        assert!(o.status.success());
        assert_eq!(text(&o.stdout), want, "{codec}");
        let o = hfkit(&["hfile", "verify", out.to_str().unwrap()]);
        assert!(o.status.success(), "{codec}: {}", text(&o.stderr));
        // Only the finished file is left: no temporary files.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            names
                .iter()
                .all(|n| n.to_string_lossy().ends_with(".hfile")),
            "{names:?}"
        );
    }
}

#[test]
fn write_rejects_out_of_order_input_naming_the_line_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let err = write_fails(
        &dir.path().join("bad.txt"),
        "61 66 71 5 Put 76 -\n62 66 71 5 Put 76 -\n61 66 71 4 Put 76 -\n",
        "bad.txt: line 3",
    );
    assert!(err.contains("out of order"), "{err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the input file remains"
    );
}

/// `hfile write` of `input` (written to `cells`) into `x.hfile` next to it fails with `expect`
/// in its message, which it returns, and leaves no file.
fn write_fails(cells: &Path, input: &str, expect: &str) -> String {
    let out = cells.with_file_name("x.hfile");
    std::fs::write(cells, input).unwrap();
    let o = hfkit(&[
        "hfile",
        "write",
        out.to_str().unwrap(),
        "--cells",
        cells.to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{expect}: {err}");
    assert!(err.contains(expect), "{expect}: {err}");
    assert!(!out.exists());
    err
}

#[test]
fn write_refuses_cells_hbase_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let long_row = "61".repeat(32_768);
    for (input, expect) in [
        (
            "61 66 71 5 Put 76 -\n62 66 71 -5 Put 76 -\n".to_string(),
            "cells.txt: line 2: field 4 (timestamp): timestamp -5 is negative",
        ),
        (
            "- 66 71 5 Put 76 -\n".to_string(),
            "cells.txt: line 1: field 1 (row): row is empty",
        ),
        (
            "61 66 71 5 Put 76 -\n62 66 71 -1 DeleteColumn - -\n".to_string(),
            "cells.txt: line 2: field 4 (timestamp)",
        ),
        (
            format!("{long_row} 66 71 5 Put 76 -\n"),
            "cells.txt: line 1: field 1 (row): row is 32768 bytes; HBase allows at most 32767",
        ),
    ] {
        write_fails(&dir.path().join("cells.txt"), &input, expect);
    }
}

#[test]
fn write_rejects_bad_lines_mixed_families_and_untagged_tags() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.hfile");
    for (input, expect) in [
        ("61 66 71 5 Put 7g -\n", "line 1: field 6 (value)"),
        (
            "61 66 71 5 Put 76 -\n62 67 71 5 Put 76 -\n",
            "line 2: invalid input: an HFile holds one column family",
        ),
        ("61 66 71 5 Put 76 0002017a\n", "line 1: the cell has tags"),
        (
            "61 66 71 notanumber Put 76 -\n",
            "line 1: field 4 (timestamp)",
        ),
    ] {
        write_fails(&dir.path().join("in.txt"), input, expect);
    }
    let o = hfkit(&[
        "hfile",
        "write",
        out.to_str().unwrap(),
        "--cells",
        SAMPLE,
        "--compression",
        "brotli",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn get_prints_one_row_or_one_column() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("u.hfile");
    assert!(hfkit(&[
        "hfile",
        "write",
        out.to_str().unwrap(),
        "--cells",
        SAMPLE,
        "--block-size",
        "512"
    ])
    .status
    .success());
    let want: Vec<String> = std::fs::read_to_string(SAMPLE)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("303031303030 "))
        .map(String::from)
        .collect();
    // The row as `hfkit get` takes it (toStringBinary text), or as hex with --hex.
    let file = out.to_str().unwrap();
    for args in [[file, "001000", "--quiet"], [file, "303031303030", "--hex"]] {
        let o = hfkit(&[&["hfile", "get"][..], &args[..]].concat());
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        assert_eq!(
            text(&o.stdout).lines().collect::<Vec<_>>(),
            want,
            "{args:?}"
        );
    }
    let column = |args: &[&str]| {
        let o = hfkit(&[&["hfile", "get", file][..], args].concat());
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        text(&o.stdout)
    };
    let score = column(&["001000", "--column", "d:score"]);
    assert_eq!(score.lines().count(), 3, "{score}");
    assert_eq!(
        column(&["303031303030", "--hex", "--column", "64:73636f7265"]),
        score
    );
    assert_eq!(
        column(&["001000", "--column", "d"]).lines().count(),
        want.len()
    );
    // The old form (hex positionals) is refused, saying what to write, not read as a row.
    let o = hfkit(&["hfile", "get", file, "303031303030", "64", "73636f7265"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--hex --column 64:73636f7265"),
        "{}",
        text(&o.stderr)
    );
    // Not there: an answer (exit 0, as `hfkit get`), no cell, and stderr says so.
    let o = hfkit(&["hfile", "get", out.to_str().unwrap(), "ffff"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
    assert!(text(&o.stderr).contains("0 cell(s)"), "{}", text(&o.stderr));
}

#[test]
fn info_json_describes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("u.hfile");
    assert!(hfkit(&[
        "hfile",
        "write",
        out.to_str().unwrap(),
        "--cells",
        SAMPLE,
        "--block-size",
        "256",
        "--index-block-size",
        "256",
        "--compression",
        "lz4"
    ])
    .status
    .success());
    let o = hfkit(&["hfile", "info", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["trailer"]["entry_count"], 1506);
    assert_eq!(v["compression"], "LZ4");
    assert!(v["index"]["levels"].as_u64().unwrap() >= 2);
    assert_eq!(v["stats"]["rows"], 300);
    assert!(v["file_info"]["hfile.AVG_KEY_LEN"].as_i64().unwrap() > 0);
}

#[test]
fn corrupt_hbase_file_is_reported_by_offset_and_prints_no_cells() {
    let Some(root) = common::fixtures_root("corrupt_hbase_file") else {
        return;
    };
    let f = root.join("hbase-corrupt/TestCompaction_HFileWithCorruptBlock.hfile");
    let o = hfkit(&["hfile", "verify", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("block at offset 0: checksum mismatch"),
        "{}",
        text(&o.stderr)
    );
    let o = hfkit(&["hfile", "cells", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stdout.is_empty(),
        "no cell of the corrupt block may be printed"
    );
    assert!(text(&o.stderr).contains("offset 0"));
    // --json: the same report on standard output, each problem with its block's offset.
    let o = hfkit(&["hfile", "verify", f.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["problems"][0]["offset"], 0);
    assert!(v["problems"][0]["message"]
        .as_str()
        .unwrap()
        .contains("checksum mismatch"));
}

#[test]
fn hfile_commands_on_a_directory_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let d = dir.to_str().unwrap();
    for args in [
        vec!["hfile", "info", d],
        vec!["hfile", "cells", d],
        vec!["hfile", "verify", d],
        vec!["hfile", "get", d, "00"],
    ] {
        let o = hfkit(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&o.stderr),
            format!("hfkit: {d}: is a directory, expected an HFile\n"),
            "{args:?}"
        );
    }
}

#[test]
fn hbase_fixtures_pass_verify_and_print_their_cells() {
    let Some(root) = common::fixtures_root("hbase_fixtures_cli") else {
        return;
    };
    for f in common::fixtures(&root) {
        let p = f.hfile.to_str().unwrap();
        let o = hfkit(&["hfile", "verify", p]);
        assert!(o.status.success(), "{}: {}", f.name, text(&o.stderr));
        let mut args = vec!["hfile", "cells", p];
        if f.has_seqid() {
            args.push("--seqid");
        }
        let o = hfkit(&args);
        assert!(o.status.success(), "{}", f.name);
        assert!(
            o.stdout == f.cells_txt().as_bytes(),
            "{}: cells differ",
            f.name
        );
        let _ = Path::new(p);
    }
}

#[test]
fn bloom_filters_are_written_and_consulted_by_get() {
    let dir = tempfile::tempdir().unwrap();
    for bloom in ["row", "rowcol", "rowprefix:4"] {
        let out = dir.path().join("b.hfile");
        let o = hfkit(&[
            "hfile",
            "write",
            out.to_str().unwrap(),
            "--cells",
            SAMPLE,
            "--bloom",
            bloom,
        ]);
        assert!(o.status.success(), "{bloom}: {}", text(&o.stderr));
        assert!(hfkit(&["hfile", "verify", out.to_str().unwrap()])
            .status
            .success());
        let o = hfkit(&[
            "hfile",
            "get",
            out.to_str().unwrap(),
            "303031303030",
            "--hex",
            "--column",
            "64:6e616d65",
        ]);
        assert!(o.status.success(), "{bloom}");
        assert_eq!(text(&o.stdout).lines().count(), 1);
        // A ROWCOL Bloom can only rule out a column get, as in HBase.
        let o = hfkit(&[
            "hfile",
            "get",
            out.to_str().unwrap(),
            "7a7a7a7a7a7a",
            "--hex",
            "--column",
            "64:6e616d65",
        ]);
        // Not there: exit 0, as `hfkit get`.
        assert_eq!(o.status.code(), Some(0));
        assert!(
            text(&o.stderr).contains("ruled the file out"),
            "{bloom}: {}",
            text(&o.stderr)
        );
    }
    let o = hfkit(&[
        "hfile", "write", "x", "--cells", SAMPLE, "--bloom", "rowcolx",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// `hfile cells|info|verify --region DIR` (HFilePrettyPrinter's -r): every store file of a
/// region directory, each after `== PATH` (an array with --json); a damaged one is reported
/// and the others still run (exit 1); a split reference of an HBase daughter is named and
/// skipped.
#[test]
fn hfile_commands_take_every_file_of_a_region() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    let schema = std::path::PathBuf::from(format!("{SEEDS}/users.toml"));
    let input = std::path::PathBuf::from(format!("{SEEDS}/users.csv"));
    let o = common::import_with(&schema, &input, "--table", &t, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let region = t.join("data/r00003");
    let r = region.to_str().unwrap();
    let o = hfkit(&["hfile", "verify", "--region", r]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(out.matches("== ").count(), 3, "{out}");
    assert_eq!(out.matches(": OK (").count(), 3, "{out}");
    let o = hfkit(&["hfile", "info", "--region", r, "--json"]);
    let infos: serde_json::Value = serde_json::from_str(&text(&o.stdout)).unwrap();
    assert_eq!(infos.as_array().unwrap().len(), 3);
    let cells = text(&hfkit(&["hfile", "cells", "--region", r]).stdout);
    let entries: u64 = infos
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["trailer"]["entry_count"].as_u64().unwrap())
        .sum();
    assert_eq!(
        cells.lines().filter(|l| !l.starts_with("== ")).count() as u64,
        entries
    );
    // One file damaged: named, exit 1, the other two still verified.
    let family = region.join("i");
    let damaged = std::fs::read_dir(&family)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&damaged, bytes).unwrap();
    let o = hfkit(&["hfile", "verify", "--region", r]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout).matches(": OK (").count(),
        2,
        "{}",
        text(&o.stdout)
    );
    assert!(text(&o.stdout).contains(&damaged.display().to_string()));
    // FILE and --region together, or neither: usage errors.
    assert_eq!(
        hfkit(&["hfile", "info", "x", "--region", r]).status.code(),
        Some(2)
    );
    assert_eq!(hfkit(&["hfile", "info"]).status.code(), Some(2));
    // An HBase daughter region holds references: each named and skipped.
    let Some(root) = common::fixtures_root("hfile_commands_take_every_file_of_a_region") else {
        return;
    };
    let table = root.join("hbase-layout/root1/data/ns1/t2");
    let with_ref = std::fs::read_dir(&table)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|d| {
            d.is_dir()
                && std::fs::read_dir(d).unwrap().any(|f| {
                    let f = f.unwrap().path();
                    f.is_dir()
                        && std::fs::read_dir(&f)
                            .unwrap()
                            .any(|x| x.unwrap().file_name().to_string_lossy().contains('.'))
                })
        })
        .expect("a daughter region with a reference in root1's ns1:t2");
    let o = hfkit(&["hfile", "info", "--region", with_ref.to_str().unwrap()]);
    assert!(
        text(&o.stderr).contains("a split reference or HFileLink"),
        "{}",
        text(&o.stderr)
    );
}
