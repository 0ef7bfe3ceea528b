//! Real kills (issue 19): a child `hfkit` process is killed with SIGKILL at points spread over
//! its run — table create, import --table (into a new table, into an existing one spilling in
//! the table and in --temp-dir), attach, minor and major compaction, alter, snapshot create / restore /
//! delete — not simulated through the `Fs` trait. Each operation is first run uninterrupted on
//! copies of the tables, which gives the state after it and how long it takes; then copies are
//! killed after delays drawn (from a seeded generator) over that duration, half of them near its
//! end, so that kills land before, during and after the commit. After each kill:
//!
//! * `table check` passes (for the index table of an import too);
//! * the state — raw scan (every cell, marker and version), manifest version, sequence counter,
//!   families, files per store, snapshots — equals the state before or after, never a mix (an
//!   import creating its tables creates them with their first data in one step: killed, it
//!   leaves no table, never an empty one);
//! * the next writer (a snapshot; for an import spilling to `--temp-dir`, also a later import
//!   spilling there; for an import creating its tables, that import again) leaves nothing
//!   behind: the table directory holds only what the manifest and the snapshots name
//!   (`common::leftovers`), the temporary directory is empty, and nothing lies beside the
//!   tables.
//!
//! `hbase compact` of an HBase root (`hbase_compact_sigkill_...`: `t1`'s stores, `ns1:t2`'s
//! split daughters whose references it compacts away, and `t1` on the FILE store-file tracker,
//! committed by its lists) is killed the same way, and at the points its debug-build test hook
//! pauses at: each store is left as before or as after, and the next `hbase compact` leaves the
//! root as an uninterrupted run does.
//!
//! At the end a table of the kills and their outcomes is printed to stderr (`cargo test --test
//! kill -- --nocapture`): per operation the uninterrupted run times, the kills, how many of
//! them left temporary files for the next writer (killed mid-operation), how many runs left
//! the state before and the state after, how many left the index
//! table further on than the main table (an import killed between its two attaches), and how
//! many ended before their kill came.

use crate::common;
use crate::common::hbase_root::{
    hbase_layout_after, hbase_leftovers, hbase_store_states, HbaseTable,
};

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hfkit::format::text::cell_line;
use hfkit::read::ReadOptions;
use hfkit::table::directory::Table;
use hfkit::table::read::TableReader;

/// Kills each operation must take (11 operations: 110 kills a run).
const KILLS_PER_OP: usize = 10;
/// Most runs of an operation (a run whose delay falls after the process ended kills nothing).
const MAX_RUNS_PER_OP: usize = 4 * KILLS_PER_OP;
/// Uninterrupted runs of each operation measured (and compared) first.
const CALIBRATION_RUNS: usize = 2;
/// "Now" for the major compaction (TTL).
const NOW_MS: &str = "1800000000000";

fn ok(args: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "hfkit {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn seed(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/seeds")
        .join(name)
}

/// What a table holds, as far as an operation can change it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    version: u64,
    next_seq_id: u64,
    families: String,
    files_per_store: BTreeMap<(String, String), usize>,
    snapshots: Vec<String>,
    /// Raw scan: every cell, marker and version, canonical lines.
    cells: Vec<String>,
}

/// The state of the table at `dir`; `None` when there is no table (no directory).
fn state(dir: &Path) -> Option<State> {
    if !dir.exists() {
        return None;
    }
    let t = Table::open(dir).unwrap();
    let m = t.manifest().unwrap();
    let mut files_per_store = BTreeMap::new();
    for e in &m.files {
        *files_per_store
            .entry((e.region.clone(), e.family.clone()))
            .or_default() += 1;
    }
    let reader = TableReader::open(&t).unwrap();
    let mut scan = reader
        .scan(&ReadOptions {
            raw: true,
            max_versions: u32::MAX,
            ..ReadOptions::default()
        })
        .unwrap();
    let mut cells = Vec::new();
    while let Some(row) = scan.next_row().unwrap() {
        cells.extend(row.cells.iter().map(|c| cell_line(&c.as_ref(), false)));
    }
    Some(State {
        version: m.version,
        next_seq_id: m.next_seq_id,
        families: format!("{:?}", m.families),
        files_per_store,
        snapshots: t.snapshots().unwrap().into_iter().map(|s| s.name).collect(),
        cells,
    })
}

/// A state in one line, for messages.
fn summary(s: &Option<State>) -> String {
    match s {
        None => "no table".into(),
        Some(s) => format!(
            "version {}, next seq id {}, {} cells, files per store {:?}, snapshots {:?}, \
             families {}",
            s.version,
            s.next_seq_id,
            s.cells.len(),
            s.files_per_store,
            s.snapshots,
            s.families
        ),
    }
}

/// Where a killed run left a table, in the order an operation moves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Before,
    After,
}

/// The states a table may be left in.
struct Expected {
    before: Option<State>,
    after: Option<State>,
}

/// Which expected state the table at `dir` is in, after checking it (a panic for anything
/// else).
fn classify(dir: &Path, e: &Expected, what: &str) -> Outcome {
    if dir.exists() {
        let check = Table::open(dir).unwrap().check().unwrap();
        assert!(check.is_ok(), "{what}: table check: {:?}", check.problems);
    }
    let now = state(dir);
    if now == e.before {
        Outcome::Before
    } else if now == e.after {
        Outcome::After
    } else {
        panic!(
            "{what}: {}: neither before nor after:\n now:    {}\n before: {}\n after:  {}",
            dir.display(),
            summary(&now),
            summary(&e.before),
            summary(&e.after)
        )
    }
}

/// One operation under test: its arguments, with `{T}` for the table and `{TMP}` for a
/// temporary directory outside it.
struct Op {
    name: &'static str,
    args: Vec<String>,
    /// Also writes the index table `users_by_email` (inside the table, `indexes/`).
    writes_index: bool,
    /// Starts without the tables (and creates them).
    creates: bool,
}

/// A scratch copy of the base tables, and the paths an operation's arguments name.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new(base: &Path, root: PathBuf, op: &Op) -> Scratch {
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
        if !op.creates {
            // The index table is inside the main one (users/indexes/users_by_email).
            common::copy_dir(&base.join("users"), &root.join("users"));
        }
        std::fs::create_dir(root.join("spill")).unwrap();
        Scratch { root }
    }
    /// Entries of the scratch directory other than the tables, the temporary directory and
    /// the next import's output (a table staged beside its place, say).
    fn strays(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&self.root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let n = p.file_name().unwrap();
                !["users", "spill", "next-import"].iter().any(|k| n == *k)
            })
            .collect();
        v.sort();
        v
    }
    fn table(&self) -> PathBuf {
        self.root.join("users")
    }
    fn index(&self) -> PathBuf {
        self.table().join("indexes").join("users_by_email")
    }
    /// The tables `op` writes.
    fn tables(&self, op: &Op) -> Vec<PathBuf> {
        let mut v = vec![self.table()];
        if op.writes_index {
            v.push(self.index());
        }
        v
    }
    fn spill(&self) -> PathBuf {
        self.root.join("spill")
    }
    fn command(&self, op: &Op) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hfkit"));
        for a in &op.args {
            c.arg(
                a.replace("{T}", s(&self.table()))
                    .replace("{TMP}", s(&self.spill())),
            );
        }
        c.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c
    }
}

/// The tables every run starts from: `users` (the users seed's first 100 rows, imported, then two
/// more loads with later timestamps, so that every store has three files and `i` three
/// versions of each cell; snapshot `s0` of the first load), its index table, the CSV and the
/// bulk-load directory the operations load.
fn build_base(root: &Path) -> PathBuf {
    let base = root.join("base");
    let t = base.join("users");
    let csv = root.join("users100.csv");
    let text = std::fs::read_to_string(seed("users.csv")).unwrap();
    let head: Vec<&str> = text.lines().take(101).collect();
    std::fs::write(&csv, head.join("\n") + "\n").unwrap();
    let schema = seed("users.toml");
    let import = |dest: &[&str], ts: &str| {
        let mut args = vec!["import", "--schema", s(&schema), s(&csv)];
        args.extend_from_slice(dest);
        args.extend_from_slice(&["--timestamp", ts, "--quiet"]);
        ok(&args);
    };
    import(&["--table", s(&t)], "1700000000001");
    ok(&["snapshot", "create", s(&t), "s0"]);
    for (i, ts) in ["1700000000002", "1700000000003", "1700000000004"]
        .iter()
        .enumerate()
    {
        let bulk = root.join(format!("bulk{i}"));
        import(
            &[
                "--out",
                s(&bulk.join("users")),
                "--index-out",
                s(&bulk.join("index")),
            ],
            ts,
        );
        if i < 2 {
            ok(&["attach", s(&t), s(&bulk.join("users"))]);
        }
    }
    base
}

fn ops(root: &Path) -> Vec<Op> {
    let csv = s(&root.join("users100.csv")).to_string();
    let schema = s(&seed("users.toml")).to_string();
    let bulk = s(&root.join("bulk2").join("users")).to_string();
    let v = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let import = |csv: &str, extra: &[&str]| {
        let mut a = v(&[
            "import",
            "--schema",
            &schema,
            csv,
            "--table",
            "{T}",
            "--timestamp",
            "1700000000005",
            "--memory",
            "64KB",
            "--quiet",
        ]);
        a.extend(v(extra));
        a
    };
    let op = |name, args, writes_index| Op {
        name,
        args,
        writes_index,
        creates: false,
    };
    vec![
        Op {
            creates: true,
            ..op(
                "table create",
                v(&["table", "create", "{T}", "--schema", &schema]),
                false,
            )
        },
        Op {
            creates: true,
            ..op("import --table, creating it", import(&csv, &[]), true)
        },
        op("import --table", import(&csv, &[]), true),
        // The whole seed: it spills 7 runs.
        op(
            "import --table --temp-dir",
            import(s(&seed("users.csv")), &["--temp-dir", "{TMP}"]),
            true,
        ),
        op("attach", v(&["attach", "{T}", &bulk]), false),
        op("minor compaction", v(&["compact", "{T}"]), false),
        op(
            "major compaction",
            v(&["compact", "{T}", "--major", "--now-ms", NOW_MS]),
            false,
        ),
        op(
            "alter",
            v(&[
                "table",
                "alter",
                "{T}",
                "--family",
                "s",
                "--versions",
                "1",
                "--compression",
                "NONE",
            ]),
            false,
        ),
        op(
            "snapshot create",
            v(&["snapshot", "create", "{T}", "s1"]),
            false,
        ),
        op(
            "snapshot restore",
            v(&["snapshot", "restore", "{T}", "s0"]),
            false,
        ),
        op(
            "snapshot delete",
            v(&["snapshot", "delete", "{T}", "s0"]),
            false,
        ),
    ]
}

/// What the next writer does after a kill: a snapshot (cheap; a writer like any other, it
/// collects garbage first) of each table the operation writes; for an import spilling to a
/// temporary directory, a later import spilling there; after an operation creating the table,
/// an import into it, creating it if needed (it must work whatever the kill left). Then nothing
/// may be left.
fn next_writer_leaves_nothing(sc: &Scratch, op: &Op, root: &Path, what: &str) {
    if op.creates {
        ok(&[
            "import",
            "--schema",
            s(&seed("users.toml")),
            s(&root.join("users100.csv")),
            "--table",
            s(&sc.table()),
            "--quiet",
        ]);
    }
    for t in &sc.tables(op) {
        ok(&["snapshot", "create", s(t), "next-writer"]);
        assert_eq!(common::leftovers(t), Vec::<PathBuf>::new(), "{what}");
    }
    if op.args.iter().any(|a| a == "--temp-dir") {
        let out = sc.root.join("next-import");
        ok(&[
            "import",
            "--schema",
            s(&seed("users.toml")),
            s(&root.join("users100.csv")),
            "--out",
            s(&out.join("users")),
            "--index-out",
            s(&out.join("index")),
            "--temp-dir",
            s(&sc.spill()),
            "--memory",
            "64KB",
            "--quiet",
        ]);
    }
    let spill: Vec<_> = std::fs::read_dir(sc.spill()).unwrap().collect();
    assert!(spill.is_empty(), "{what}: {spill:?}");
    assert_eq!(sc.strays(), Vec::<PathBuf>::new(), "{what}");
}

/// Whether the kill left anything for the next writer to remove.
fn left_garbage(sc: &Scratch, op: &Op) -> bool {
    sc.tables(op)
        .iter()
        .any(|t| t.exists() && !common::leftovers(t).is_empty())
        || std::fs::read_dir(sc.spill()).unwrap().next().is_some()
        || !sc.strays().is_empty()
}

#[derive(Default)]
struct Tally {
    kills: usize,
    before: usize,
    after: usize,
    /// Import: the index table further on than the main table.
    index_ahead: usize,
    /// Killed runs that left temporary files or directories for the next writer.
    left_garbage: usize,
    /// The delay fell after the process had ended.
    finished: usize,
    /// Durations of the uninterrupted runs (ms).
    calibration_ms: Vec<f64>,
}

#[test]
fn sigkill_at_spread_points_leaves_before_or_after_and_nothing_behind() {
    let started = Instant::now();
    let tmp = common::tmpdir();
    let root = tmp.path();
    let base = build_base(root);
    let mut rng = common::Rng(0x5eed_4b11_0019_0001);
    let mut tallies: Vec<(&'static str, Tally)> = Vec::new();
    for (oi, op) in ops(root).iter().enumerate() {
        let mut tally = Tally::default();
        let before = |dir: &str| {
            if op.creates {
                None
            } else {
                state(&base.join(dir))
            }
        };
        // Uninterrupted runs: the state after, and how long the operation takes.
        let mut after = None;
        for c in 0..CALIBRATION_RUNS {
            let sc = Scratch::new(&base, root.join(format!("calib{oi}-{c}")), op);
            let t0 = Instant::now();
            let status = sc.command(op).status().unwrap();
            tally.calibration_ms.push(t0.elapsed().as_secs_f64() * 1e3);
            assert!(status.success(), "{}: {status}", op.name);
            let got = (state(&sc.table()), state(&sc.index()));
            assert_ne!(got.0, before("users"), "{}: changes nothing", op.name);
            if let Some(a) = &after {
                assert!(*a == got, "{}: two uninterrupted runs differ", op.name);
            }
            after = Some(got);
            next_writer_leaves_nothing(&sc, op, root, op.name);
            std::fs::remove_dir_all(&sc.root).unwrap();
        }
        let (after, after_index) = after.unwrap();
        let main = Expected {
            before: before("users"),
            after,
        };
        let index = Expected {
            before: before("users/indexes/users_by_email"),
            after: after_index,
        };
        // The fastest uninterrupted run, shortened whenever a process ends before its kill
        // (the machine's load changes).
        let fastest = tally
            .calibration_ms
            .iter()
            .copied()
            .fold(f64::MAX, f64::min);
        let mut duration = Duration::from_secs_f64(fastest / 1e3);
        for run in 0..MAX_RUNS_PER_OP {
            if tally.kills == KILLS_PER_OP {
                break;
            }
            let what = format!("{} run {run}", op.name);
            let sc = Scratch::new(&base, root.join(format!("kill{oi}-{run}")), op);
            // Half of the kills anywhere in the run, half near its end, where the commit is.
            let delay = duration.mul_f64(if rng.unit() < 0.5 {
                rng.unit()
            } else {
                0.75 + 0.35 * rng.unit()
            });
            // Measured as the uninterrupted runs were: from before the spawn.
            let t0 = Instant::now();
            let mut child = sc.command(op).spawn().unwrap();
            std::thread::sleep(delay.saturating_sub(t0.elapsed()));
            child.kill().unwrap();
            let status = child.wait().unwrap();
            if status.signal() == Some(libc::SIGKILL) {
                tally.kills += 1;
            } else {
                assert!(status.success(), "{what}: {status}");
                tally.finished += 1;
                duration = duration.mul_f64(0.85);
            }
            let outcome = classify(&sc.table(), &main, &what);
            match outcome {
                Outcome::Before => tally.before += 1,
                Outcome::After => tally.after += 1,
            }
            if status.signal().is_none() {
                assert_eq!(outcome, Outcome::After, "{what}: finished but not after");
            }
            if left_garbage(&sc, op) {
                tally.left_garbage += 1;
            }
            if op.writes_index {
                let ix = classify(&sc.index(), &index, &what);
                // Index tables are attached first: a main table after has its index after.
                assert!(
                    outcome != Outcome::After || ix == Outcome::After,
                    "{what}: main table {outcome:?}, index {ix:?}"
                );
                if ix > outcome {
                    tally.index_ahead += 1;
                }
            }
            next_writer_leaves_nothing(&sc, op, root, &what);
            std::fs::remove_dir_all(&sc.root).unwrap();
        }
        assert_eq!(
            tally.kills, KILLS_PER_OP,
            "{}: only {} of {MAX_RUNS_PER_OP} runs were killed before they ended",
            op.name, tally.kills
        );
        tallies.push((op.name, tally));
    }
    eprintln!(
        "operation                    ran (ms)   kills  garbage  before  after  \
         index ahead  ended first"
    );
    for (name, t) in &tallies {
        eprintln!(
            "{name:<28} {:>4.0}-{:<4.0} {:>6} {:>8} {:>7} {:>6} {:>12} {:>12}",
            t.calibration_ms.iter().copied().fold(f64::MAX, f64::min),
            t.calibration_ms.iter().copied().fold(0.0, f64::max),
            t.kills,
            t.left_garbage,
            t.before,
            t.after,
            t.index_ahead,
            t.finished
        );
    }
    let total = |f: fn(&Tally) -> usize| tallies.iter().map(|(_, t)| f(t)).sum::<usize>();
    let kills = total(|t| t.kills);
    eprintln!(
        "{kills} SIGKILLs ({} left garbage for the next writer): {} runs left the state before, \
         {} the state after ({} with the index table further on); {} runs ended before their \
         kill; {:.1} s",
        total(|t| t.left_garbage),
        total(|t| t.before),
        total(|t| t.after),
        total(|t| t.index_ahead),
        total(|t| t.finished),
        started.elapsed().as_secs_f64()
    );
    assert!(kills >= 100);
}

/// `hfkit hbase compact` of an HBase table (the fixture root's `t1`, six stores), killed with
/// SIGKILL at points spread over its run, as the table operations above. Its stores commit one
/// after the other, each atomically (the output's rename; inputs a kill left unarchived are
/// named by the output's compaction event and not read): after each kill every store reads
/// exactly as before or as after (raw cells with sequence ids), and the next `hbase compact`
/// leaves the root as an uninterrupted run does: every store one file, every input in the
/// archive once, nothing under the regions' `.tmp/`.
#[test]
fn hbase_compact_sigkill_leaves_each_store_before_or_after_and_the_next_run_finishes() {
    let Some(fixtures) = common::fixtures_root(
        "hbase_compact_sigkill_leaves_each_store_before_or_after_and_the_next_run_finishes",
    ) else {
        return;
    };
    let root1 = fixtures.join("hbase-layout/root1");
    let t1 = HbaseTable {
        name: "t1",
        dir: "data/default/t1",
        families: &["cf1", "cf2"],
    };
    let t2 = HbaseTable {
        name: "ns1:t2",
        dir: "data/ns1/t2",
        families: &["f"],
    };
    // t1's stores; ns1:t2's split daughters (their references compacted away); t1 on the
    // FILE store-file tracker (committed by its lists).
    hbase_compact_sigkill_case(
        &root1,
        &t1,
        &[
            "written:1",
            "written:6",
            "moved:1",
            "committed:1",
            "moved:4",
            "committed:5",
            "moved:6",
        ],
    );
    hbase_compact_sigkill_case(
        &root1,
        &t2,
        &["written:1", "moved:1", "committed:1", "moved:2"],
    );
    let tmp = common::tmpdir();
    let file_root = tmp.path().join("file-tracker");
    common::copy_dir(&root1, &file_root);
    common::use_file_tracker_listing(&file_root, t1.name);
    hbase_compact_sigkill_case(
        &file_root,
        &t1,
        &[
            "written:6",
            "unlisted:1",
            "moved:1",
            "committed:1",
            "unlisted:6",
            "moved:6",
        ],
    );
}

/// `hfkit hbase compact` of `table` of a copy of `base`, killed at the test hook's `points` and
/// after delays spread over its run: each store before or after, the next run finishing.
fn hbase_compact_sigkill_case(base: &Path, table: &HbaseTable, points: &[&str]) {
    let tmp = common::tmpdir();
    let run = |root: &Path| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hfkit"));
        c.args(["hbase", "compact", s(root), table.name, "--now", NOW_MS])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c
    };
    let copy = |name: &str| {
        let root = tmp.path().join(name);
        common::copy_dir(base, &root);
        root
    };
    let before = hbase_store_states(base, table);
    let mut calibration_ms = Vec::new();
    let mut after = None;
    for c in 0..CALIBRATION_RUNS {
        let root = copy(&format!("calib{c}"));
        let t0 = Instant::now();
        assert!(run(&root).status().unwrap().success());
        calibration_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        let got = (
            hbase_store_states(&root, table),
            hbase_layout_after(&root, table),
        );
        assert_ne!(got.0, before, "compacts nothing");
        if let Some(a) = &after {
            assert!(*a == got, "two uninterrupted runs differ");
        }
        after = Some(got);
    }
    let (after, after_layout) = after.unwrap();
    let mut rng = common::Rng(0x5eed_4b11_0019_0002);
    let mut duration =
        Duration::from_secs_f64(calibration_ms.iter().copied().fold(f64::MAX, f64::min) / 1e3);
    // Stores a compaction changes (a one-file store's cells may come out the same).
    let changing: Vec<_> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .map(|(k, _)| k.clone())
        .collect();
    let (mut kills, mut finished) = (0, 0);
    let (mut all_before, mut all_after, mut mixed, mut garbage) = (0, 0, 0, 0);
    // After a kill: every store before or after; the next run finishes the job.
    let mut check = |root: &Path, what: &str| {
        let now = hbase_store_states(root, table);
        assert_eq!(
            now.keys().collect::<Vec<_>>(),
            after.keys().collect::<Vec<_>>()
        );
        for (store, cells) in &now {
            assert!(
                Some(cells) == after.get(store) || Some(cells) == before.get(store),
                "{what}: store {store:?} neither before nor after"
            );
        }
        let stores_after = changing
            .iter()
            .filter(|k| now.get(*k) == after.get(*k))
            .count();
        match stores_after {
            0 => all_before += 1,
            n if n == changing.len() => all_after += 1,
            _ => mixed += 1,
        }
        if hbase_leftovers(root, table) {
            garbage += 1;
        }
        assert!(run(root).status().unwrap().success(), "{what}: next run");
        assert_eq!(hbase_store_states(root, table), after, "{what}: next run");
        assert_eq!(
            hbase_layout_after(root, table),
            after_layout,
            "{what}: next run"
        );
        std::fs::remove_dir_all(root).unwrap();
    };
    // Killed at the points the test hook pauses at: outputs written, an output moved in with
    // its inputs not archived yet, stores committed.
    for (i, point) in points.iter().enumerate() {
        let root = copy(&format!("point{i}"));
        let mut c = run(&root);
        c.env("HFKIT_TEST_COMPACT_PAUSE", point);
        let mut child = common::spawn_until_paused(c, point);
        child.kill().unwrap();
        child.wait().unwrap();
        check(&root, point);
    }
    // Killed after delays spread over the run.
    for attempt in 0..MAX_RUNS_PER_OP {
        if kills == KILLS_PER_OP {
            break;
        }
        let root = copy(&format!("kill{attempt}"));
        let delay = duration.mul_f64(if rng.unit() < 0.5 {
            rng.unit()
        } else {
            0.75 + 0.35 * rng.unit()
        });
        let t0 = Instant::now();
        let mut child = run(&root).spawn().unwrap();
        std::thread::sleep(delay.saturating_sub(t0.elapsed()));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        if status.signal() == Some(libc::SIGKILL) {
            kills += 1;
        } else {
            assert!(status.success(), "run {attempt}: {status}");
            finished += 1;
            duration = duration.mul_f64(0.85);
        }
        check(&root, &format!("run {attempt}"));
    }
    eprintln!(
        "hbase compact {} ({}): ran {:.0}-{:.0} ms; {} SIGKILLs ({garbage} left files for the next \
         run): {all_before} runs left every store before, {mixed} some stores after and the \
         others before, {all_after} every store after; {finished} runs ended before their kill",
        table.name,
        base.file_name().unwrap_or_default().to_string_lossy(),
        calibration_ms.iter().copied().fold(f64::MAX, f64::min),
        calibration_ms.iter().copied().fold(0.0, f64::max),
        kills + points.len(),
    );
    assert_eq!(
        kills, KILLS_PER_OP,
        "only {kills} runs were killed before they ended"
    );
}
