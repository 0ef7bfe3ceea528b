//! `hfkit plan` and the region charts (`plan`, `table describe`, `--chart`).

use super::*;

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
