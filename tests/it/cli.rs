//! End-to-end tests of the `hfkit` binary.

use crate::common;

use std::path::Path;
use std::process::Command;

use crate::common::hfkit;

use crate::common::text;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/users.cells.txt");

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
fn help_teaches_exit_codes_and_cell_format() {
    let o = hfkit(&["--help"]);
    assert!(o.status.success());
    let h = text(&o.stdout);
    assert!(
        h.contains("Exit codes") && h.contains("row_hex family_hex qualifier_hex"),
        "{h}"
    );
    let o = hfkit(&["hfile", "write", "--help"]);
    assert!(text(&o.stdout).contains("--compression"));
    assert_eq!(hfkit(&["nonsense"]).status.code(), Some(2));
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

#[test]
fn attach_describe_check_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    hfkit::table::directory::Table::create(
        &table,
        "default:users",
        vec![hfkit::table::manifest::FamilyEntry::new("d")],
        &[b"5".to_vec()],
    )
    .unwrap();
    let bulk = dir.path().join("bulk");
    std::fs::create_dir_all(bulk.join("d")).unwrap();
    let f = bulk.join("d").join("users.hfile");
    assert!(
        hfkit(&["hfile", "write", f.to_str().unwrap(), "--cells", SAMPLE])
            .status
            .success()
    );
    let o = hfkit(&[
        "attach",
        table.to_str().unwrap(),
        bulk.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cells"], 1506);
    assert_eq!(v["split_inputs"], 1);
    let o = hfkit(&["table", "describe", table.to_str().unwrap()]);
    assert!(
        text(&o.stdout).contains("region r00001 [5, ''): 1 files"),
        "{}",
        text(&o.stdout)
    );
    // Each store file by its path, which `hfile info` takes.
    let described = text(&o.stdout);
    let path = described
        .lines()
        .find_map(|l| {
            l.strip_prefix("  d ")?
                .split_once(": ")
                .map(|(p, _)| p.to_string())
        })
        .unwrap();
    assert!(
        path.starts_with(table.join("data").to_str().unwrap()),
        "{path}"
    );
    assert!(hfkit(&["hfile", "info", &path]).status.success(), "{path}");
    let o = hfkit(&["table", "check", table.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("OK (manifest version 1, 2 files, 1506 cells)"),
        "{}",
        text(&o.stdout)
    );
    // --json, sound and then damaged: the report on standard output, exit 0 then 1.
    let check = || hfkit(&["table", "check", table.to_str().unwrap(), "--json"]);
    let o = check();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["ok"].clone(), v["files"].clone()),
        (true.into(), 2.into())
    );
    assert_eq!(v["cells"], 1506);
    let o = hfkit(&["hfile", "verify", f.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["ok"].clone(), v["cells"].clone()),
        (true.into(), 1506.into())
    );
    let live = common::files_under(&table.join("data"));
    let victim = live.first().unwrap();
    let bytes = std::fs::read(victim).unwrap();
    std::fs::write(victim, &bytes[..bytes.len() - 1]).unwrap();
    let o = check();
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert!(!v["problems"].as_array().unwrap().is_empty(), "{v}");
}

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");

#[test]
fn plan_prints_split_points_and_expected_cells_per_region() {
    let schema = format!("{SEEDS}/users.toml");
    let input = format!("{SEEDS}/users.csv");
    // Text: the schema's split points, a line per region, the import's warnings; nothing
    // written next to the input.
    let o = hfkit(&["plan", "--schema", &schema, &input]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let t = text(&o.stdout);
    assert!(t.contains("1200 of 1200 records read"), "{t}");
    assert!(t.contains("table app:users: 10 regions"), "{t}");
    assert!(t.contains("table app:users_by_email: 3 regions"), "{t}");
    // The seed's design draws no warning (its keys: 10 bytes, reversed, fixed width).
    assert!(t.contains("row keys: 10 to 10 bytes, mean 10.0"), "{t}");
    assert!(!t.contains("warning"), "{t}");
    assert!(!Path::new(SEEDS).join("users_by_email").exists());
    // JSON: every cell the import writes is accounted for (the whole input was sampled).
    let o = hfkit(&["plan", "--schema", &schema, &input, "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let regions = v["table"]["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 10);
    let cells: u64 = regions
        .iter()
        .map(|r| r["expected_cells"].as_u64().unwrap())
        .sum();
    assert_eq!(cells, 5805);
    assert_eq!(v["table"]["split_points"][0], "1");
    assert_eq!(v["sample"]["whole_input"], true);
    assert_eq!(v["indexes"][0]["table"], "app:users_by_email");
    // --regions cuts at the sample's quantiles; a partial sample is scaled to the file size.
    let o = hfkit(&[
        "plan",
        "--schema",
        &schema,
        &input,
        "--regions",
        "4",
        "--sample-rows",
        "600",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["table"]["split_points"].as_array().unwrap().len(), 3);
    assert_eq!(v["sample"]["records"], 600);
    assert_eq!(v["sample"]["input_records_basis"], "estimated");
    let est = v["sample"]["input_records"].as_u64().unwrap();
    assert!((1100..1300).contains(&est), "{est}");
    // Usage errors.
    let o = hfkit(&[
        "plan",
        "--schema",
        &schema,
        &input,
        "--sample-rows",
        "5",
        "--sample-fraction",
        "0.5",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = hfkit(&[
        "plan",
        "--schema",
        &schema,
        &input,
        "--sample-fraction",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = hfkit(&["plan", "--schema", &schema, &input, "--regions", "1"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn plan_flags_the_hot_region_of_sequential_keys() {
    // The orders seed split by HexStringSplit, with every user id in one hex range.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("orders.csv");
    let mut csv = String::from("user_id,order_id,order_ts,amount,status\n");
    // Enough cells in all (over 1,000) for a hot region to be worth a warning.
    for i in 0..400 {
        let user = if i % 4 == 0 {
            format!("{:08x}", i * 10_000_000)
        } else {
            format!("a{:07x}", i)
        };
        csv.push_str(&format!("{user},{i},{},5,NEW\n", 1_700_000_000_000u64 + i));
    }
    std::fs::write(&input, csv).unwrap();
    let o = hfkit(&[
        "plan",
        "--schema",
        &format!("{SEEDS}/orders.toml"),
        input.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let t = text(&o.stdout);
    let hot: Vec<&str> = t.lines().filter(|l| l.ends_with("HOT")).collect();
    assert_eq!(hot.len(), 1, "{t}");
    assert!(hot[0].contains("a0000000"), "{t}");
    // 400 orders make fewer than 1,000 cells: marked, but no warning of it.
    assert!(!t.contains("a hot region"), "{t}");
    let mut more = std::fs::read_to_string(&input).unwrap();
    for i in 400..800 {
        more.push_str(&format!(
            "a{i:07x},{i},{},5,NEW\n",
            1_700_000_000_000u64 + i
        ));
    }
    std::fs::write(&input, more).unwrap();
    let o = hfkit(&[
        "plan",
        "--schema",
        &format!("{SEEDS}/orders.toml"),
        input.to_str().unwrap(),
    ]);
    let t = text(&o.stdout);
    assert!(
        t.contains("warning: region [a0000000, b0000000) holds 1412 cells")
            && t.contains("a hot region"),
        "{t}"
    );
}

/// The pixels of a rendered chart (`resvg`, text left out): for each region's band, the
/// columns of its cells bar that are `colour`, and whether the band holds grey (bytes).
fn chart_bars(svg_path: &std::path::Path, regions: usize) -> Vec<(u32, u32, bool)> {
    use hfkit::pipeline::plan::chart::{BAND, BYTES, CELLS, HOT, TOP, WIDTH};
    let svg = std::fs::read_to_string(svg_path).unwrap();
    let tree = resvg::usvg::Tree::from_str(&svg, &resvg::usvg::Options::default()).unwrap();
    let size = tree.size().to_int_size();
    assert_eq!(
        (size.width(), size.height()),
        (WIDTH, TOP + BAND * regions as u32 + 30)
    );
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    let rgb = |hex: &str| {
        let v = u32::from_str_radix(&hex[1..], 16).unwrap();
        [(v >> 16) as u8, (v >> 8) as u8, v as u8]
    };
    let at = |x: u32, y: u32| {
        let p = pixmap.pixel(x, y).unwrap();
        [p.red(), p.green(), p.blue()]
    };
    (0..regions as u32)
        .map(|i| {
            let y = TOP + BAND * i + 6;
            let count = |c: [u8; 3]| (0..WIDTH).filter(|&x| at(x, y) == c).count() as u32;
            let grey = (TOP + BAND * i..TOP + BAND * (i + 1))
                .any(|y| (0..WIDTH).any(|x| at(x, y) == rgb(BYTES)));
            (count(rgb(CELLS)), count(rgb(HOT)), grey)
        })
        .collect()
}

/// `plan --chart` and `table describe --chart` write SVG charts that a renderer draws: a bar
/// per region as long as its cells (against the largest region's), the hot region's red, a
/// table's bytes in grey; and the terminal's bars in the text forms.
#[test]
fn region_charts_render_with_a_bar_per_region_and_the_hot_one_red() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("orders.csv");
    let mut csv = String::from("user_id,order_id,order_ts,amount,status\n");
    for i in 0..400 {
        let user = if i % 4 == 0 {
            format!("{:08x}", i * 10_000_000)
        } else {
            format!("a{i:07x}")
        };
        csv.push_str(&format!("{user},{i},{},5,NEW\n", 1_700_000_000_000u64 + i));
    }
    std::fs::write(&input, csv).unwrap();
    let svg = dir.path().join("plan.svg");
    let schema = format!("{SEEDS}/orders.toml");
    let o = hfkit(&[
        "plan",
        "--schema",
        &schema,
        input.to_str().unwrap(),
        "--json",
        "--chart",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let plan: serde_json::Value = serde_json::from_str(&text(&o.stdout)).unwrap();
    let regions = plan["table"]["regions"].as_array().unwrap();
    let bars = chart_bars(&svg, regions.len());
    let most = regions
        .iter()
        .map(|r| r["sample_cells"].as_u64().unwrap())
        .max()
        .unwrap();
    for (r, (blue, red, _)) in regions.iter().zip(&bars) {
        let cells = r["sample_cells"].as_u64().unwrap();
        let hot = r["hot"].as_bool().unwrap();
        // The bar's pixels, of its colour only; its length in proportion (440 px the most).
        let (ours, other) = if hot { (*red, *blue) } else { (*blue, *red) };
        assert_eq!(other, 0, "{r}");
        let want = (cells as f64 / most as f64 * 440.0).round() as i64;
        assert!(
            (i64::from(ours) - want).abs() <= 1,
            "{r}: {ours} px for {want}"
        );
    }
    assert_eq!(regions.iter().filter(|r| r["hot"] == true).count(), 1);
    // A table: cells bars and bytes bars, every region drawn; its text lines carry bars.
    let t = dir.path().join("t");
    let o = common::import_with(std::path::Path::new(&schema), &input, "--table", &t, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let svg = dir.path().join("t.svg");
    let o = hfkit(&[
        "table",
        "describe",
        t.to_str().unwrap(),
        "--chart",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let described = text(&o.stdout);
    let lines: Vec<&str> = described
        .lines()
        .filter(|l| l.starts_with("region "))
        .collect();
    let bars = chart_bars(&svg, lines.len());
    for (line, (blue, red, grey)) in lines.iter().zip(&bars) {
        let cells: u64 = line
            .split(" cells")
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(cells > 0, blue + red > 0 && *grey, "{line}");
        assert_eq!(line.ends_with(" HOT"), *red > 0, "{line}");
        assert_eq!(line.contains('█'), blue + red >= 22, "{line}");
    }
    assert!(bars.iter().any(|b| b.1 > 0), "{described}");
}

/// Every subcommand, in the order its `--help` examples run: later examples use what earlier
/// ones created (the import's table, the written HFile).
const EXAMPLE_ORDER: &[&str] = &[
    "import",
    "plan",
    "table create",
    "table describe",
    "table check",
    "attach",
    "get",
    "scan",
    "table alter",
    "compact",
    "snapshot create",
    "snapshot list",
    "snapshot clone",
    "snapshot restore",
    "snapshot delete",
    "export",
    "hfile write",
    "hfile info",
    "hfile cells",
    "hfile verify",
    "hfile get",
    // Against /tmp/hbase-root, which the first one makes from the seed table, and
    // /tmp/hbase-live, a copy of the HBase-written root directory of the fixtures
    // (../shared/fixtures/hbase-layout/root1), with live tables.
    "hbase export-snapshot",
    "hbase copy-snapshot",
    "hbase ls",
    "hbase describe",
    "hbase verify",
    "hbase get",
    "hbase scan",
    "table clone-hbase",
    "hbase compact",
    "completions",
    "man",
];

/// The leaf subcommands of `hfkit` (hidden ones and `help` left out), as space-separated paths.
fn leaf_subcommands(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let path = format!("{prefix}{}", sub.get_name());
        if sub.has_subcommands() {
            leaf_subcommands(sub, &format!("{path} "), out);
        } else {
            out.push(path);
        }
    }
}

/// The lines under "Examples" of a help text: each a command line starting with `hfkit `.
fn examples_of(help: &str) -> Vec<String> {
    let mut lines = help.lines().skip_while(|l| !l.starts_with("Examples"));
    lines.next();
    lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect()
}

/// Every subcommand's `--help` has at least one example, and every example works: run as
/// written by `sh` from a directory laid out like a checkout (the bundled fixtures), with
/// /tmp/ a scratch directory, in EXAMPLE_ORDER, each exiting 0 without a warning.
#[test]
fn every_subcommand_has_working_help_examples() {
    use clap::CommandFactory;
    let mut leaves = Vec::new();
    leaf_subcommands(&hfkit::cli::Cli::command(), "", &mut leaves);
    let mut sorted_order: Vec<&str> = EXAMPLE_ORDER.to_vec();
    sorted_order.sort();
    leaves.sort();
    assert_eq!(
        leaves, sorted_order,
        "a subcommand missing from EXAMPLE_ORDER"
    );

    let work = tempfile::tempdir().unwrap();
    let checkout = work.path().join("checkout");
    let scratch = work.path().join("tmp");
    std::fs::create_dir_all(&checkout).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    std::os::unix::fs::symlink(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"),
        checkout.join("fixtures"),
    )
    .unwrap();
    // The hbase examples of live tables read an HBase root directory: the fixtures' (CI
    // always has them); the others read the root the first export-snapshot example makes.
    let hbase_root = common::fixtures_root("every_subcommand_has_working_help_examples (hbase)")
        .map(|f| f.join("hbase-layout/root1"));
    if let Some(root) = &hbase_root {
        common::copy_dir(root, &scratch.join("hbase-live"));
    }
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_hfkit")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    let mut skipped = 0;
    for sub in EXAMPLE_ORDER {
        let mut args: Vec<&str> = sub.split(' ').collect();
        args.push("--help");
        let o = hfkit(&args);
        assert!(o.status.success());
        let examples = examples_of(&text(&o.stdout));
        assert!(!examples.is_empty(), "`hfkit {sub} --help` has no example");
        for e in examples {
            assert!(
                e.starts_with(&format!("hfkit {sub} ")),
                "`hfkit {sub} --help`: an example of another command: {e}"
            );
            if hbase_root.is_none() && e.contains("/tmp/hbase-live") {
                skipped += 1;
                continue;
            }
            let line = e.replace("/tmp/", &format!("{}/", scratch.display()));
            let o = Command::new("sh")
                .arg("-c")
                .arg(&line)
                .current_dir(&checkout)
                .env("PATH", &path)
                .output()
                .unwrap();
            let stderr = text(&o.stderr);
            assert!(o.status.success(), "`{e}` failed: {stderr}");
            assert!(!stderr.contains("warning"), "`{e}`: {stderr}");
            assert!(!o.stdout.is_empty(), "`{e}` printed nothing");
            ran += 1;
        }
    }
    assert!(
        ran >= EXAMPLE_ORDER.len() && skipped <= 7,
        "{ran} run, {skipped} skipped"
    );
}

/// `hfkit completions SHELL` prints a script that completes every command and option, for each
/// shell clap_complete knows; an unknown shell is a usage error.
#[test]
fn completions_cover_every_command_in_every_shell() {
    for (shell, marker) in [
        ("bash", "complete -F _hfkit"),
        ("zsh", "#compdef hfkit"),
        ("fish", "complete -c hfkit"),
        ("elvish", "edit:completion:arg-completer[hfkit]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = hfkit(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", text(&o.stderr));
        let script = text(&o.stdout);
        assert!(script.contains(marker), "{shell}: no `{marker}`");
        for word in [
            "import",
            "hfile",
            "clone-hbase",
            "completions",
            "--hbase-shell",
        ] {
            assert!(script.contains(word), "{shell}: `{word}` is not completed");
        }
    }
    let o = hfkit(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("invalid value 'tcsh'"));
}

/// A completion script larger than a pipe's buffer, into a pipe closed by its reader (as
/// `hfkit completions bash | head` does), ends quietly with 0 like any other output
/// (clap_complete itself panics on a failed write).
#[test]
fn completions_into_a_closed_pipe_end_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(["completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "");
}

/// Only a write to a closed output ends quietly: an error whose message merely says "Broken
/// pipe" (here a missing file of that name) is reported, with exit 1.
#[test]
fn only_a_closed_output_is_a_broken_pipe() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("Broken pipe.hfile");
    let o = hfkit(&["hfile", "info", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("Broken pipe.hfile"),
        "{}",
        text(&o.stderr)
    );
}

/// A line to stderr (a warning of `table create`, `hfile get`'s Bloom verdict) does not panic
/// when stderr cannot take it: closed (`2>&-`), a full device, or a pipe closed by its reader.
/// The command does its work and exits with its own code, not 101.
#[test]
fn a_stderr_that_cannot_be_written_is_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let quiet = |redirect: &str, args: &[&str]| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("\"$0\" \"$@\" {redirect}"))
            .arg(env!("CARGO_BIN_EXE_hfkit"))
            .args(args)
            .output()
            .unwrap()
    };
    for (i, redirect) in ["2>&-", "2>/dev/full"].into_iter().enumerate() {
        let dir = tmp.path().join(format!("t{i}"));
        let dir = dir.to_str().unwrap();
        // Warns that family 'f' is defined twice.
        let create = [
            "table",
            "create",
            dir,
            "--hbase-shell",
            "create 't', 'f', 'f'",
        ];
        let o = quiet(redirect, &create);
        assert_eq!(o.status.code(), Some(0), "{redirect}: {}", text(&o.stderr));
        assert!(text(&o.stdout).contains("created table t"), "{redirect}");
    }
    let file = tmp.path().join("s.hfile");
    let file = file.to_str().unwrap();
    let o = hfkit(&["hfile", "write", file, "--cells", SAMPLE, "--bloom", "row"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // A get of an absent row (exit 0, "0 cell(s)" on stderr): the same with stderr closed
    // or full.
    let get = ["hfile", "get", file, "00"];
    assert_eq!(hfkit(&get).status.code(), Some(0));
    for redirect in ["2>&-", "2>/dev/full"] {
        let o = quiet(redirect, &get);
        assert_eq!(o.status.code(), Some(0), "{redirect}: {}", text(&o.stderr));
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(get)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// `hfkit man` prints hfkit(1) in roff; `hfkit man COMMAND...` a command's own page;
/// `--dir` writes one page per command (the groups and every leaf), named as `man` looks them
/// up, and lists them. A command that does not exist is a usage error.
#[test]
fn man_pages_for_hfkit_and_every_command() {
    let o = hfkit(&["man"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let page = text(&o.stdout);
    assert!(page.contains(".TH hfkit 1"), "{page}");
    assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
    assert!(page.contains("hfkit\\-import(1)"), "{page}");

    let o = hfkit(&["man", "hfile", "info"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let page = text(&o.stdout);
    let title = format!(
        ".TH hfkit-hfile-info 1  \"hfkit {}\"",
        env!("CARGO_PKG_VERSION")
    );
    assert!(page.contains(&title), "{page}");
    assert!(page.contains("\\-\\-json"), "{page}");

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man1");
    let o = hfkit(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let listed: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // hfkit.1, and one page per command: the groups (hfile, table, ...) and their leaves.
    fn count(cmd: &clap::Command) -> usize {
        1 + cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
            .map(count)
            .sum::<usize>()
    }
    use clap::CommandFactory;
    assert_eq!(names.len(), count(&hfkit::cli::Cli::command()), "{names:?}");
    assert_eq!(listed.len(), names.len());
    for name in [
        "hfkit.1",
        "hfkit-import.1",
        "hfkit-hbase-export-snapshot.1",
        "hfkit-man.1",
    ] {
        assert!(
            names.contains(&name.to_string()),
            "{name} missing: {names:?}"
        );
        assert!(listed.contains(&dir.join(name).display().to_string()));
        let page = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(page.contains(".SH NAME"), "{name}");
    }

    let o = hfkit(&["man", "hfile", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "hfkit: man: `hfkit hfile` has no command `nope` (see `hfkit hfile --help`)\n"
    );
}

/// A location a command cannot handle is refused by name before anything runs (issue 39 §3):
/// other schemes, typos and upper-case schemes everywhere, `s3://` where the command takes a
/// local path. Run from an empty directory, which stays empty (no `./s3:/...` or `./gs:/...`
/// folder); exit code 2.
#[test]
fn locations_a_command_cannot_handle_are_refused_by_name() {
    let cwd = common::tmpdir();
    let seeds = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");
    let (schema, input) = (format!("{seeds}/users.toml"), format!("{seeds}/users.csv"));
    // An import with `extra` arguments after its schema and input.
    let import = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["import", "--schema", &schema, &input];
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect()
    };
    let other = |args: &[&str]| -> Vec<String> { args.iter().map(|a| a.to_string()).collect() };
    let lines: Vec<(Vec<String>, &str)> = vec![
        (import(&["--out", "gs://bucket/out"]), "--out"),
        (import(&["--out", "az://bucket/out"]), "--out"),
        (import(&["--out", "hdfs://nn/out"]), "--out"),
        (import(&["--out", "http://h/out"]), "--out"),
        (import(&["--out", "S3://bucket/out"]), "--out"),
        (import(&["--table", "s3:/bucket/x"]), "--table"),
        (
            import(&["--out", "o", "--report", "s3://bucket/r"]),
            "--report",
        ),
        (
            import(&["--out", "o", "--bad-rows", "s3://bucket/b"]),
            "--bad-rows",
        ),
        (
            other(&["table", "clone-hbase", "root", "t1", "s3://bucket/clone"]),
            "<DEST>",
        ),
        (
            other(&[
                "hbase",
                "export-snapshot",
                "s3://bucket/t",
                "root",
                "--name",
                "x",
            ]),
            "<TABLE>",
        ),
        (other(&["man", "--dir", "s3://bucket/man"]), "--dir"),
        (
            other(&["snapshot", "clone", "t", "s1", "s3://bucket/c"]),
            "<NEW_DIR>",
        ),
        (other(&["export", "t", "--to", "s3://bucket/copy"]), "--to"),
        (
            other(&["man", "--s3-endpoint", "http://127.0.0.1:9"]),
            "--s3-endpoint",
        ),
    ];
    for (args, named) in lines {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
            .args(&args)
            .current_dir(cwd.path())
            .output()
            .unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("hfkit: {named}")),
            "{args:?}: {err}"
        );
        let left: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
        assert!(left.is_empty(), "{args:?} wrote {left:?}");
    }
}

/// `--threads` beyond what helps is capped at four per core, with a note; the import runs.
#[test]
fn threads_beyond_four_per_core_are_capped_with_a_note() {
    let tmp = common::tmpdir();
    let seeds = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");
    let out = tmp.path().join("out");
    let o = hfkit(&[
        "import",
        "--schema",
        &format!("{seeds}/users.toml"),
        &format!("{seeds}/users.csv"),
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "100000",
        "--quiet",
    ]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let cores = std::thread::available_parallelism().unwrap().get();
    assert!(
        err.contains(&format!(
            "--threads 100000: using {} (4 per core",
            4 * cores
        )),
        "{err}"
    );
}

/// Every argument and option of every command says what it is (`--help`): none is listed
/// bare. (The global `--s3-endpoint` is said once, on the commands that take it.)
#[test]
fn every_argument_has_help_text() {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            if a.is_hide_set() || a.get_id() == "help" || a.get_id() == "version" {
                continue;
            }
            if a.get_help().is_none() && a.get_long_help().is_none() {
                out.push(format!("{path} {}", a.get_id()));
            }
        }
        for sub in cmd.get_subcommands() {
            if sub.get_name() != "help" {
                walk(sub, &format!("{path} {}", sub.get_name()), out);
            }
        }
    }
    let mut bare = Vec::new();
    walk(&hfkit::cli::Cli::command(), "hfkit", &mut bare);
    assert!(
        bare.is_empty(),
        "{} without help:\n{}",
        bare.len(),
        bare.join("\n")
    );
}

/// "Now" is spelled `--now` by the reads and `--now-ms` by compact and export: each command
/// takes both, with the same meaning.
#[test]
fn now_and_now_ms_are_one_option() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    let t = t.to_str().unwrap();
    let o = hfkit(&[
        "import",
        "--schema",
        &format!("{SEEDS}/users.toml"),
        &format!("{SEEDS}/users.csv"),
        "--table",
        t,
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let scan = |flag: &str| hfkit(&["scan", t, "--limit", "2", flag, "1800000000000"]).stdout;
    assert_eq!(scan("--now"), scan("--now-ms"));
    for flag in ["--now", "--now-ms"] {
        let o = hfkit(&["compact", t, flag, "1800000000000", "--json"]);
        assert!(o.status.success(), "compact {flag}: {}", text(&o.stderr));
        let f = tmp.path().join(format!("e{flag}.csv"));
        let o = hfkit(&[
            "export",
            t,
            "--format",
            "csv",
            "--to",
            f.to_str().unwrap(),
            flag,
            "1800000000000",
        ]);
        assert!(o.status.success(), "export {flag}: {}", text(&o.stderr));
    }
    let e = |flag: &str| std::fs::read(tmp.path().join(format!("e{flag}.csv"))).unwrap();
    assert_eq!(e("--now"), e("--now-ms"));
}

/// `table alter` reads sizes and durations as the schema and the HBase shell write them, with
/// the schema's ranges: `64KB`, `7 DAYS`; a block size HBase refuses is refused.
#[test]
fn table_alter_takes_the_schemas_sizes_and_durations() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    let t = t.to_str().unwrap();
    let o = hfkit(&[
        "table",
        "create",
        t,
        "--schema",
        &format!("{SEEDS}/users.toml"),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["table"], "app:users");
    assert_eq!(v["regions"].as_array().unwrap().len(), 10);
    assert_eq!(v["regions"][1]["start_key"], "1");
    let alter = |args: &[&str]| {
        let mut a = vec!["table", "alter", t, "--family", "h"];
        a.extend_from_slice(args);
        hfkit(&a)
    };
    let o = alter(&["--ttl", "7 DAYS 12 HOURS", "--block-size", "32KB", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["family"]["ttl_seconds"], 7 * 86_400 + 12 * 3_600, "{v}");
    assert_eq!(v["family"]["block_size"], 32 * 1024, "{v}");
    let o = alter(&["--ttl", "FOREVER"]);
    assert!(
        text(&o.stdout).contains("TTL => 'FOREVER'"),
        "{}",
        text(&o.stdout)
    );
    for (args, why) in [
        (["--block-size", "3"], "between 1024"),
        (["--ttl", "soon"], "is not FOREVER"),
    ] {
        let o = alter(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(text(&o.stderr).contains(why), "{}", text(&o.stderr));
    }
}

/// Every snapshot command reports in JSON with `--json`.
#[test]
fn snapshot_commands_report_in_json() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    let t = t.to_str().unwrap();
    let o = hfkit(&[
        "import",
        "--schema",
        &format!("{SEEDS}/users.toml"),
        &format!("{SEEDS}/users.csv"),
        "--table",
        t,
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json = |args: &[&str]| -> serde_json::Value {
        let mut a = vec!["snapshot"];
        a.extend_from_slice(args);
        a.push("--json");
        let o = hfkit(&a);
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    assert_eq!(json(&["create", t, "s1"])["name"], "s1");
    let clone = tmp.path().join("c");
    let v = json(&["clone", t, "s1", clone.to_str().unwrap()]);
    assert_eq!(
        (v["cloned"].clone(), v["files"].clone()),
        ("s1".into(), 30.into())
    );
    let v = json(&["restore", t, "s1"]);
    assert_eq!(
        (v["restored"].clone(), v["version"].clone()),
        ("s1".into(), 2.into())
    );
    let v = json(&["delete", t, "s1"]);
    assert_eq!(v["deleted"], "s1");
    assert_eq!(json(&["list", t]), serde_json::json!([]));
}

/// `--s3-endpoint` is offered (in `--help`, manual pages and completions) exactly by the
/// commands that take an `s3://` location, and refused by name elsewhere (issue 39 §3).
#[test]
fn s3_endpoint_is_offered_only_where_it_has_an_effect() {
    fn leaves(cmd: &clap::Command, path: &str, out: &mut Vec<(String, bool)>) {
        for sub in cmd.get_subcommands() {
            let p = match path {
                "" => sub.get_name().to_string(),
                p => format!("{p} {}", sub.get_name()),
            };
            let offered = sub
                .get_arguments()
                .any(|a| a.get_id() == "s3_endpoint" && !a.is_hide_set());
            out.push((p.clone(), offered));
            leaves(sub, &p, out);
        }
    }
    let mut all = Vec::new();
    leaves(&hfkit::cli::help_command(), "", &mut all);
    let takes = |p: &str| {
        [
            "import", "plan", "attach", "get", "scan", "compact", "export", "alter",
        ]
        .contains(&p)
            || (p.starts_with("table ")
                && ["create", "describe", "check", "alter", "clone-hbase"]
                    .contains(&p.trim_start_matches("table ")))
            || (p.starts_with("snapshot ") && p != "snapshot clone")
            || (p.starts_with("hfile ") && p != "hfile write")
            || p.starts_with("hbase ")
    };
    let mut checked = 0;
    for (p, offered) in &all {
        if p.split(' ').count() == 1
            && ["table", "snapshot", "hfile", "hbase"].contains(&p.as_str())
        {
            continue; // groups, not commands
        }
        assert_eq!(*offered, takes(p), "{p}");
        checked += 1;
    }
    assert!(checked >= 30, "{checked}");
    let help = |args: &[&str]| text(&hfkit(&[args, &["--help"]].concat()).stdout);
    assert!(help(&["scan"]).contains("--s3-endpoint"));
    assert!(!help(&["man"]).contains("--s3-endpoint"));
    assert!(!help(&[]).contains("--s3-endpoint"));
    let o = hfkit(&["man", "--s3-endpoint", "http://127.0.0.1:9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).starts_with("hfkit: --s3-endpoint: `hfkit man`"));
}

/// Every option and positional of every subcommand (and of `hfkit` itself) has a description
/// in `--help`: clap's own `--help`/`--version` aside, none is listed without one.
#[test]
fn every_option_and_positional_has_a_description() {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            if a.is_hide_set() || ["help", "version"].contains(&a.get_id().as_str()) {
                continue;
            }
            if a.get_help().is_none_or(|h| h.to_string().trim().is_empty()) {
                missing.push(format!("`{path}` {}", a.get_id()));
            }
        }
        for sub in cmd.get_subcommands() {
            if !sub.is_hide_set() && sub.get_name() != "help" {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
    }
    let mut missing = Vec::new();
    walk(&hfkit::cli::Cli::command(), "hfkit", &mut missing);
    assert!(
        missing.is_empty(),
        "{} without a description:\n{}",
        missing.len(),
        missing.join("\n")
    );
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

/// One vocabulary (issue 42 item 3): the snapshot commands take `--snapshot NAME` as every
/// command that reads a snapshot does, and `snapshot clone` the new table's name as
/// `--table-name` (`--name` is a snapshot's name elsewhere); the older spellings (NAME after
/// TABLE, `--name`) still work, and mixing both forms is a usage error.
#[test]
fn snapshot_commands_take_snapshot_names_as_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    let schema = std::path::PathBuf::from(format!("{SEEDS}/users.toml"));
    let input = std::path::PathBuf::from(format!("{SEEDS}/users.csv"));
    assert!(common::import_with(&schema, &input, "--table", &t, &[])
        .status
        .success());
    let t = t.to_str().unwrap();
    let dir = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    let ok = |args: &[&str]| {
        let o = hfkit(args);
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        text(&o.stdout)
    };
    ok(&["snapshot", "create", t, "--snapshot", "new"]);
    ok(&["snapshot", "create", t, "old"]);
    let (a, b) = (dir("a"), dir("b"));
    let new = ok(&[
        "snapshot",
        "clone",
        t,
        &a,
        "--snapshot",
        "new",
        "--table-name",
        "x:a",
    ]);
    let old = ok(&["snapshot", "clone", t, "old", &b, "--name", "x:b"]);
    assert!(
        new.contains("table x:a") && old.contains("table x:b"),
        "{new}{old}"
    );
    assert!(ok(&["snapshot", "list", t]).contains("new\t"));
    ok(&["snapshot", "restore", t, "--snapshot", "new"]);
    ok(&["snapshot", "delete", t, "--snapshot", "new"]);
    ok(&["snapshot", "delete", t, "old"]);
    assert_eq!(ok(&["snapshot", "list", t]), "");
    for bad in [
        vec!["snapshot", "create", t],
        vec!["snapshot", "create", t, "x", "--snapshot", "y"],
        vec!["snapshot", "clone", t, &a],
        vec!["snapshot", "clone", t, "x", &a, "--snapshot", "y"],
    ] {
        assert_eq!(hfkit(&bad).status.code(), Some(2), "{bad:?}");
    }
}
