//! Every import mode against every destination (issue 39 §6): one table, index tables, several
//! `[[table]]`s and a change feed (deletes, per-cell TTL tags, a second day into the existing
//! table), each with `--out` and `--table`, local and `s3://` (moto on loopback), on one and two
//! threads. Each run's cells, per table, equal one reference (the local `--out` run on one
//! thread); the same import again is refused and changes nothing; a dry run writes nothing; and
//! no run leaves anything behind (temporary files, mirrors, upload journals, uploads in
//! progress). A several-table import into `s3://` that stored nothing, and `--threads` failing
//! for several tables, were each a seam that a test of one feature alone did not see.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hfkit::format::reader::HFileReader;
use hfkit::storage::{Location, StorageConfig, Store};
use hfkit::table::directory::Table;
use hfkit::table::manifest::Manifest;
use hfkit_testkit::s3::S3Server;

use crate::common::{files_under, leftovers, text};

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");

/// (row, family, qualifier, timestamp, type, value, tags): a cell as stored, less its sequence
/// id (a table's attach records the load's sequence id in the manifest, not in the cells).
type CellKey = (Vec<u8>, Vec<u8>, Vec<u8>, i64, String, Vec<u8>, Vec<u8>);

/// Each table of a destination, by its path there (`""` the table itself, `indexes/<q>` an
/// index table, `<q>` one of several tables), with its cells, sorted.
type Cells = BTreeMap<String, Vec<CellKey>>;

/// One import mode: a schema and the inputs imported one after the other (a change feed's
/// days), each a run of its own into the same destination.
struct Design {
    name: &'static str,
    schema: &'static str,
    days: &'static [&'static str],
}

const DESIGNS: [Design; 4] = [
    Design {
        name: "one table",
        schema: "orders.toml",
        days: &["orders.csv"],
    },
    Design {
        name: "index tables",
        schema: "users.toml",
        days: &["users.csv"],
    },
    Design {
        name: "several tables",
        schema: "sale_lines.toml",
        days: &["sale_lines.csv"],
    },
    Design {
        name: "change feed",
        schema: "accounts.toml",
        days: &["accounts-day1.csv", "accounts-day2.csv"],
    },
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Dest {
    OutLocal,
    OutS3,
    TableLocal,
    TableS3,
}

impl Dest {
    fn flag(self) -> &'static str {
        match self {
            Dest::OutLocal | Dest::OutS3 => "--out",
            Dest::TableLocal | Dest::TableS3 => "--table",
        }
    }
    fn remote(self) -> bool {
        matches!(self, Dest::OutS3 | Dest::TableS3)
    }
}

/// The runs' environment: the server, a scratch directory, and the temporary directory every
/// run gets (`$TMPDIR`: where mirrors of `s3://` tables go), which must be empty after each.
struct Env {
    server: S3Server,
    store: Store,
    scratch: tempfile::TempDir,
    tmp: PathBuf,
}

impl Env {
    /// `hfkit ARGS --s3-endpoint ...` with this environment's `$TMPDIR`.
    fn hfkit(&self, args: &[String]) -> std::process::Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
            .args(args)
            .args(["--s3-endpoint", &self.server.endpoint()])
            .env("TMPDIR", &self.tmp)
            .output()
            .unwrap()
    }

    /// `hfkit import` of `design`'s day `day` into `dest` at `at`.
    fn import(
        &self,
        design: &Design,
        day: usize,
        dest: Dest,
        at: &str,
        threads: usize,
        extra: &[&str],
    ) -> std::process::Output {
        let mut args: Vec<String> = [
            "import",
            "--schema",
            &format!("{SEEDS}/{}", design.schema),
            &format!("{SEEDS}/{}", design.days[day]),
            dest.flag(),
            at,
            "--threads",
            &threads.to_string(),
            "--timestamp",
            "1700000000000",
            "--quiet",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        self.hfkit(&args)
    }

    /// Every object key under `url`'s prefix.
    fn keys(&self, url: &str) -> Vec<String> {
        let loc = Location::parse(url).unwrap();
        let mut keys: Vec<String> = self
            .store
            .list(&loc)
            .unwrap()
            .into_iter()
            .map(|o| o.location.to_string())
            .collect();
        keys.sort();
        keys
    }

    /// The destination's cells, read from a local copy of it.
    fn cells(&self, dest: Dest, at: &str) -> Cells {
        let local = match dest.remote() {
            true => {
                let to = self
                    .scratch
                    .path()
                    .join(format!("copy-{}", at.replace('/', "_")));
                let _ = std::fs::remove_dir_all(&to);
                self.store
                    .download_tree(&Location::parse(at).unwrap(), &to)
                    .unwrap();
                to
            }
            false => PathBuf::from(at),
        };
        match dest {
            Dest::OutLocal | Dest::OutS3 => bulk_cells(&local),
            Dest::TableLocal => table_cells(&local, false),
            Dest::TableS3 => table_cells(&local, true),
        }
    }

    /// Nothing left behind by a run: no mirror in `$TMPDIR`; no upload journal, staging or
    /// upload in progress on the server; in a local table, nothing but the table
    /// (`common::leftovers`); in a local bulk-load directory, no hidden temporary file.
    fn assert_clean(&self, what: &str, dest: Dest, at: &str) {
        let tmp: Vec<_> = std::fs::read_dir(&self.tmp).unwrap().collect();
        assert!(tmp.is_empty(), "{what}: left in $TMPDIR: {tmp:?}");
        let uploads = self.server.multipart_uploads();
        assert!(
            uploads.is_empty(),
            "{what}: uploads in progress: {uploads:?}"
        );
        match dest {
            Dest::OutS3 | Dest::TableS3 => {
                let stray: Vec<String> = self
                    .keys(at)
                    .into_iter()
                    .filter(|k| k.contains("/.tmp/") || k.contains("hfkit-tmp"))
                    .collect();
                assert!(stray.is_empty(), "{what}: left on the server: {stray:?}");
            }
            Dest::TableLocal => {
                for dir in table_dirs(Path::new(at)) {
                    let left = leftovers(&dir);
                    assert!(
                        left.is_empty(),
                        "{what}: left in {}: {left:?}",
                        dir.display()
                    );
                }
            }
            Dest::OutLocal => {
                let hidden: Vec<_> = files_under(Path::new(at))
                    .into_iter()
                    .filter(|p| {
                        let rel = p.strip_prefix(at).unwrap_or(p);
                        rel.components().any(|c| {
                            let c = c.as_os_str().to_string_lossy();
                            c.starts_with('.') && c != ".indexes"
                        })
                    })
                    .collect();
                assert!(hidden.is_empty(), "{what}: left: {hidden:?}");
            }
        }
    }
}

/// The cells of every HFile of a bulk-load directory (`OUT/<family>/<hfile>`, index tables
/// in `OUT/.indexes/<q>/`, several tables in `OUT/<q>/`), by table.
fn bulk_cells(dir: &Path) -> Cells {
    let mut out = Cells::new();
    for f in files_under(dir) {
        let rel: Vec<String> = f
            .strip_prefix(dir)
            .unwrap()
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if rel.last().is_some_and(|n| n.starts_with('_')) {
            continue; // _hfkit-import-id
        }
        let table = rel[..rel.len() - 2]
            .iter()
            .map(|p| {
                if p == ".indexes" {
                    "indexes"
                } else {
                    p.as_str()
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        out.entry(table).or_default().extend(file_cells(&f));
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

/// The table directories under `root`: those holding `manifests/`.
fn table_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = files_under(root)
        .into_iter()
        .filter(|f| f.parent().is_some_and(|p| p.ends_with("manifests")))
        .filter_map(|f| f.parent()?.parent().map(Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// The cells of the live files of every table under `root`, by table. A copy of an `s3://`
/// table (`downloaded`) has no `CURRENT`: its live version is its newest manifest (versions
/// are created create-only, in order: formats/table.md §"Tables on object storage").
fn table_cells(root: &Path, downloaded: bool) -> Cells {
    let mut out = Cells::new();
    for dir in table_dirs(root) {
        let rel = dir
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let manifest: Manifest = match downloaded {
            false => Table::open(&dir).unwrap().manifest().unwrap(),
            true => {
                let newest = files_under(&dir.join("manifests"))
                    .into_iter()
                    .max()
                    .unwrap();
                serde_json::from_slice(&std::fs::read(newest).unwrap()).unwrap()
            }
        };
        let cells = out.entry(rel).or_default();
        for f in &manifest.files {
            let path = dir
                .join("data")
                .join(&f.region)
                .join(&f.family)
                .join(&f.name);
            cells.extend(file_cells(&path));
        }
        cells.sort();
    }
    out.retain(|_, v| !v.is_empty());
    out
}

fn file_cells(path: &Path) -> Vec<CellKey> {
    let r = HFileReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut s = r.scanner().unwrap();
    let mut out = Vec::new();
    while let Some(c) = s.next().unwrap() {
        out.push((
            c.row.to_vec(),
            c.family.to_vec(),
            c.qualifier.to_vec(),
            c.timestamp,
            format!("{:?}", c.cell_type),
            c.value.to_vec(),
            c.tags.to_vec(),
        ));
    }
    out
}

/// The union of two destinations' cells (a table after a second day's load).
fn union(a: &Cells, b: &Cells) -> Cells {
    let mut out = a.clone();
    for (t, cells) in b {
        let v = out.entry(t.clone()).or_default();
        v.extend(cells.iter().cloned());
        v.sort();
    }
    out
}

#[test]
fn every_import_mode_against_every_destination() {
    let Some(server) = S3Server::start("every_import_mode_against_every_destination") else {
        return;
    };
    let store = Store::open(
        &Location::parse(&server.url("x")).unwrap(),
        &StorageConfig::with_endpoint(Some(server.endpoint())),
    )
    .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let tmp = scratch.path().join("tmpdir");
    std::fs::create_dir(&tmp).unwrap();
    let env = Env {
        server,
        store,
        scratch,
        tmp,
    };
    let mut runs = 0;
    for (d, design) in DESIGNS.iter().enumerate() {
        // The reference: each day into a local bulk-load directory of its own, on one thread.
        let reference: Vec<Cells> = (0..design.days.len())
            .map(|day| {
                let at = env.scratch.path().join(format!("ref-{d}-{day}"));
                let at = at.to_str().unwrap();
                let o = env.import(design, day, Dest::OutLocal, at, 1, &[]);
                assert!(o.status.success(), "{}: {}", design.name, text(&o.stderr));
                env.cells(Dest::OutLocal, at)
            })
            .collect();
        assert!(
            reference[0].values().all(|c| !c.is_empty()) && !reference[0].is_empty(),
            "{}: the reference holds no cells",
            design.name
        );
        for dest in [Dest::OutLocal, Dest::OutS3, Dest::TableLocal, Dest::TableS3] {
            for threads in [1, 2] {
                let what = format!("{} {dest:?} --threads {threads}", design.name);
                let name = format!("d{d}-{dest:?}-t{threads}").to_lowercase();
                let table = matches!(dest, Dest::TableLocal | Dest::TableS3);
                // --out: a directory a day; --table: every day into the one table.
                let at_of = |day: usize| match (dest.remote(), table) {
                    (true, true) => env.server.url(&name),
                    (true, false) => env.server.url(&format!("{name}/day{day}")),
                    (false, true) => path_str(&env.scratch.path().join(&name)),
                    (false, false) => {
                        path_str(&env.scratch.path().join(format!("{name}-day{day}")))
                    }
                };
                let mut expected = Cells::new();
                for (day, day_ref) in reference.iter().enumerate() {
                    let at = at_of(day);
                    let what = format!("{what}, day {}", day + 1);
                    // A dry run first: exit 0, nothing written.
                    let before = snapshot(&env, dest, &at);
                    let o = env.import(design, day, dest, &at, threads, &["--dry-run"]);
                    assert!(o.status.success(), "{what} --dry-run: {}", text(&o.stderr));
                    assert_eq!(snapshot(&env, dest, &at), before, "{what}: --dry-run wrote");
                    // The import.
                    let o = env.import(design, day, dest, &at, threads, &[]);
                    assert!(o.status.success(), "{what}: {}", text(&o.stderr));
                    expected = match table {
                        true => union(&expected, day_ref),
                        false => day_ref.clone(),
                    };
                    assert_eq!(env.cells(dest, &at), expected, "{what}: cells");
                    env.assert_clean(&what, dest, &at);
                    // The same import again: refused (exit 3 with --table: recorded; --out:
                    // the directory holds HFiles), nothing changed, nothing left.
                    let after = snapshot(&env, dest, &at);
                    let o = env.import(design, day, dest, &at, threads, &[]);
                    let code = o.status.code();
                    match table {
                        true => assert_eq!(code, Some(3), "{what}: rerun: {}", text(&o.stderr)),
                        false => assert_eq!(code, Some(1), "{what}: rerun: {}", text(&o.stderr)),
                    }
                    assert_eq!(snapshot(&env, dest, &at), after, "{what}: the rerun wrote");
                    env.assert_clean(&format!("{what}, rerun"), dest, &at);
                    runs += 3;
                }
            }
        }
    }
    eprintln!("import matrix: {runs} runs");
}

/// What a destination holds: its files or objects (names; a file's size), to tell a run that
/// wrote nothing.
fn snapshot(env: &Env, dest: Dest, at: &str) -> Vec<String> {
    match dest.remote() {
        true => env.keys(at),
        false if Path::new(at).exists() => files_under(Path::new(at))
            .into_iter()
            .map(|p| format!("{} {}", p.display(), p.metadata().unwrap().len()))
            .collect(),
        false => Vec::new(),
    }
}

fn path_str(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}
