//! Lanes (`pipeline::import::route`): a store whose input arrives in order is written straight to its
//! file; one that does not goes through the sorter, and one that turns out of order midway is
//! read back into the sorter. Whatever the input, the files hold exactly the cells of an import
//! with lanes off, in the right regions, and the duplicate counts agree.

use std::collections::BTreeMap;
use std::path::Path;

use hfkit::format::reader::HFileReader;
use hfkit::pipeline::import::{run_import, ImportOptions, ImportReport, InputFormat};
use hfkit::pipeline::source::CsvOptions;

const SCHEMA: &str = r#"
[table]
name = "t"

[[family]]
name = "a"
BLOCKSIZE = 1024

[[family]]
name = "b"

[splits]
keys = ["k0300", "k0600"]

[rowkey]
spec = '"k" + pad(id, 4)'

[[column]]
source = "x"
cell = "a:x"
timestamp = 7

[[column]]
source = "y"
cell = "a:y"
timestamp = 7

[[column]]
source = "x"
cell = "b:x"
timestamp = "ts"

[[index]]
name = "t_by_y"
rowkey = 'y + "|" + id'
cell = "i:"
timestamp = 1
"#;

/// One file's cells as text, with the file's family and region.
type Cells = Vec<(String, usize, String)>;

/// Imports on a pool of `threads` (with more than one, lanes are written by writer threads).
fn import(
    dir: &Path,
    csv: &str,
    streaming: bool,
    memory: usize,
    threads: usize,
) -> (ImportReport, Cells) {
    let input = dir.join("in.csv");
    std::fs::write(&input, csv).unwrap();
    let parsed = hfkit::table::TableSchema::from_toml_str(SCHEMA, "s.toml", None).unwrap();
    let out = dir.join(format!("{streaming}-{threads}"));
    let mut opts = ImportOptions::new(
        vec![input],
        InputFormat::Csv(CsvOptions::default()),
        out.clone(),
    );
    opts.streaming = streaming;
    opts.memory_budget = memory;
    opts.max_file_size = 4096; // lanes roll to several files before some are taken back
    opts.index_out = Some(vec![dir.join(format!("{}-index", out.display()))]);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let r = pool
        .install(|| run_import(&parsed.table, &parsed.mapping, opts))
        .unwrap();
    let mut cells = Vec::new();
    let files = r
        .output_files
        .iter()
        .chain(r.indexes.iter().flat_map(|i| i.output_files.iter()));
    let mut stores = BTreeMap::new();
    for f in files {
        *stores.entry((f.family.clone(), f.region)).or_insert(0) += 1;
        let h = HFileReader::open(&f.path).unwrap();
        let mut s = h.scanner().unwrap();
        let mut n = 0;
        while let Some(c) = s.next().unwrap() {
            let t = |b: &[u8]| String::from_utf8_lossy(b).to_string();
            cells.push((
                f.family.clone(),
                f.region,
                format!(
                    "{} {} {} {} {}",
                    t(c.row),
                    t(c.family),
                    t(c.qualifier),
                    c.timestamp,
                    t(c.value)
                ),
            ));
            n += 1;
        }
        assert_eq!(n, f.cells, "{}", f.path.display());
    }
    // Files of a store, in the report's order, hold its cells in order: sorting all cells by
    // (family, region) keeps each store's sequence.
    cells.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    assert!(stores.values().all(|&n| n <= 32));
    (r, cells)
}

/// Rows as CSV: `id,x,y,ts` for each id, in the order given.
fn csv(ids: impl IntoIterator<Item = u32>) -> String {
    let mut s = String::from("id,x,y,ts\n");
    for id in ids {
        s.push_str(&format!(
            "{id},x{id},{},{}\n",
            (id * 7919) % 101,
            1000 + u64::from(id % 5)
        ));
    }
    s
}

/// Imports with lanes on one thread and on three (three lane writers), and with lanes off;
/// asserts the same files' contents and counts; returns the one-thread lanes report.
fn same_as_sorted(csv: &str, memory: usize) -> ImportReport {
    let tmp = tempfile::tempdir().unwrap();
    let (sorted, sorted_cells) = import(tmp.path(), csv, false, memory, 1);
    assert_eq!(sorted.streamed_cells, 0);
    let region_cells =
        |r: &ImportReport| -> Vec<u64> { r.regions.iter().map(|g| g.cells).collect() };
    let mut reports = Vec::new();
    for threads in [1, 3] {
        let (lanes, lane_cells) = import(tmp.path(), csv, true, memory, threads);
        assert_eq!(lane_cells.len(), sorted_cells.len());
        assert!(
            lane_cells == sorted_cells,
            "the same cells in the same stores ({threads} threads)"
        );
        assert_eq!(lanes.cells, sorted.cells);
        assert_eq!(lanes.duplicate_cells, sorted.duplicate_cells);
        assert_eq!(region_cells(&lanes), region_cells(&sorted));
        assert_eq!(lanes.indexes[0].cells, sorted.indexes[0].cells);
        assert_eq!(
            lanes.indexes[0].duplicate_cells,
            sorted.indexes[0].duplicate_cells
        );
        reports.push(lanes);
    }
    assert_eq!(reports[0].streamed_cells, reports[1].streamed_cells);
    assert_eq!(reports[0].lanes_taken_back, reports[1].lanes_taken_back);
    reports.swap_remove(0)
}

#[test]
fn input_in_order_is_written_without_sorting_or_spilling() {
    let r = same_as_sorted(&csv(0..900), 64 << 20);
    assert_eq!(
        r.streamed_cells, r.cells,
        "every main-table store arrived in order"
    );
    assert_eq!(r.cells, 900 * 3);
    // Only the index table's one store (keys y|id, out of order) started as a lane and was
    // taken back.
    assert_eq!(r.lanes_taken_back, 1);
    assert_eq!(r.indexes[0].cells, 900);
}

#[test]
fn input_out_of_order_goes_through_the_sorter() {
    let ids: Vec<u32> = (0..900).map(|i| (i * 37) % 900).collect();
    let r = same_as_sorted(&csv(ids), 1 << 16);
    assert!(r.streamed_cells < r.cells);
    assert!(r.spilled_runs > 0, "{r:?}");
}

#[test]
fn a_store_that_turns_out_of_order_is_read_back_into_the_sorter() {
    // In order, then an early row of region 0 again (a duplicate: the later one wins), then a
    // late row of region 2 that lands before rows already written.
    let mut ids: Vec<u32> = (0..900).collect();
    ids.push(17);
    ids.insert(850, 899);
    let mut text = csv(ids);
    text.push_str("17,x17-again,5,1000\n");
    let r = same_as_sorted(&text, 64 << 20);
    assert!(r.lanes_taken_back >= 2, "{r:?}");
    assert!(r.cells_re_read > 0);
    assert!(r.streamed_cells > 0, "region 1 stayed a lane");
    assert!(r.duplicate_cells > 0);
}

#[test]
fn many_small_budgets_fall_back_to_the_sorter_for_lanes_past_the_limit() {
    // With the smallest budget only one lane fits: the other stores are sorted.
    let r = same_as_sorted(&csv(0..900), 1);
    assert!(r.streamed_cells > 0 && r.streamed_cells < r.cells, "{r:?}");
}

/// The import's progress tells the truth (issue 42 §1): while reading, the input bytes grow
/// with the records read (not only when a file ends), stay within the inputs' size and reach
/// it; while writing, the sorted cells written grow against those to write and never pass
/// them; every table's cells are counted.
#[test]
fn import_progress_counts_input_bytes_as_read_and_cells_as_written() {
    use std::sync::{Arc, Mutex};
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.csv");
    let mut csv = String::from("user_id,name,email,city,score,last_login\n");
    for i in 0..200_000u64 {
        // Out of key order: the cells go through the sorter, so there is a writing phase.
        let id = (i * 7919) % 200_000;
        csv.push_str(&format!(
            "{id},n{id},u{id}@x.org,C{},{},{}\n",
            id % 7,
            id % 100,
            1_700_000_000_000 + id
        ));
    }
    std::fs::write(&input, &csv).unwrap();
    let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds/users.toml");
    let parsed = hfkit::table::TableSchema::from_file(Path::new(schema)).unwrap();
    let mut opts = ImportOptions::new(
        vec![input],
        InputFormat::Csv(CsvOptions::default()),
        tmp.path().join("out"),
    );
    opts.streaming = false;
    opts.batch_rows = 4096;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    opts.progress = Some(Box::new(move |p| s.lock().unwrap().push(p.clone())));
    let report = run_import(&parsed.table, &parsed.mapping, opts).unwrap();
    let seen = seen.lock().unwrap();
    let total = csv.len() as u64;
    let reading: Vec<_> = seen.iter().filter(|p| p.phase == "reading").collect();
    assert!(
        reading
            .iter()
            .any(|p| p.input_bytes > 0 && p.input_bytes < total),
        "no report of a file partly read: {reading:?}"
    );
    assert!(reading
        .windows(2)
        .all(|w| w[0].input_bytes <= w[1].input_bytes));
    assert!(seen
        .iter()
        .all(|p| p.input_bytes <= total && p.total_input_bytes == total));
    let writing: Vec<_> = seen.iter().filter(|p| p.phase == "writing").collect();
    let first = writing.first().expect("a writing phase");
    assert!(first.cells_to_write > 0);
    let every_table = report.cells + report.indexes.iter().map(|i| i.cells).sum::<u64>();
    assert!(
        first.cells_to_write <= every_table,
        "{first:?} of {every_table}"
    );
    assert!(writing.iter().all(|p| p.cells_written <= p.cells_to_write));
}

/// The import's bar on a terminal (issue 42 §1), driven under a pseudo-terminal (`script`) on a
/// multi-megabyte input: while reading, the bar's bytes grow and never pass the input's size;
/// while writing, its cells never pass the cells to write; no frame mixes the two.
#[test]
fn import_bar_on_a_terminal_grows_with_the_input_and_never_passes_its_totals() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.csv");
    let mut csv = String::from("user_id,name,email,city,score,last_login\n");
    for i in 0..150_000u64 {
        let id = (i * 7919) % 150_000;
        csv.push_str(&format!(
            "{id},name-{id},user{id}@example.org,City{},{},{}\n",
            id % 7,
            id % 100,
            1_700_000_000_000 + id
        ));
    }
    std::fs::write(&input, &csv).unwrap();
    let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds/users.toml");
    let line = format!(
        "{} import --schema {schema} {} --out {} --threads 1 --no-lanes",
        env!("CARGO_BIN_EXE_hfkit"),
        input.display(),
        tmp.path().join("out").display()
    );
    let o = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .output()
        .expect("script(1), util-linux's, runs a command under a pseudo-terminal");
    let shown = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{shown}");
    // The frames, escape sequences removed.
    let mut frames = Vec::new();
    for f in shown.split(['\r', '\n']) {
        let mut plain = String::new();
        let mut esc = false;
        for ch in f.chars() {
            match (esc, ch) {
                (false, '\x1b') => esc = true,
                (true, c) if c.is_ascii_alphabetic() => esc = false,
                (true, _) => {}
                (false, c) => plain.push(c),
            }
        }
        frames.push(plain);
    }
    let mib = |s: &str| -> f64 {
        let (n, unit) = s
            .trim()
            .split_at(s.trim().find(|c: char| c.is_alphabetic()).unwrap());
        let n: f64 = n.trim().parse().unwrap();
        n * match unit.trim() {
            "B" => 1.0 / (1 << 20) as f64,
            "KiB" => 1.0 / 1024.0,
            "MiB" => 1.0,
            "GiB" => 1024.0,
            u => panic!("unit {u}"),
        }
    };
    let total = csv.len() as f64 / (1 << 20) as f64;
    let mut read = Vec::new();
    let mut wrote = 0;
    for f in frames.iter().filter(|f| f.contains(" ETA ")) {
        let before = f.rsplit_once(" ETA ").unwrap().0;
        if f.contains("reading:") && before.ends_with('B') {
            let (l, of) = before.rsplit_once('/').unwrap();
            let l: Vec<&str> = l.split_whitespace().collect();
            let done = mib(&l[l.len() - 2..].join(" "));
            let of = mib(of);
            assert!(
                (of - total).abs() < 0.01,
                "{f}: the input is {total:.2} MiB"
            );
            assert!(done <= of, "{f}");
            read.push(done);
        }
        if let Some(counts) = f.rsplit_once(" cells ETA").map(|x| x.0) {
            let (done, of) = counts.rsplit(' ').next().unwrap().split_once('/').unwrap();
            let (done, of): (u64, u64) = (done.parse().unwrap(), of.parse().unwrap());
            assert!(done <= of, "{f}");
            assert!(f.contains("writing:"), "a cell count while reading: {f}");
            wrote += 1;
        }
    }
    assert!(read.windows(2).all(|w| w[0] <= w[1]), "{read:?}");
    assert!(
        read.iter().any(|&d| d > 0.0 && d < total),
        "no frame of the input partly read: {read:?}"
    );
    assert!(wrote > 0, "no frame of the writing phase");
}
