//! Shared helpers for tests that read Apache HBase's fixtures from `../shared/fixtures` (or
//! `$HFKIT_HBASE_FIXTURES`, the directory holding `hbase/`), found through
//! [`test_fixtures`] (the `hfkit-testkit` crate, the one copy the crates' unit tests use too):
//! absent, a test is skipped and counted, or fails under `HFKIT_REQUIRE_FIXTURES=1`. Also small
//! helpers shared by the table tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hfkit::format::bloom::{BloomParams, BloomType};
use hfkit::format::cell::Cell;
use hfkit::format::checksum::ChecksumType;
use hfkit::format::compression::Compression;
use hfkit::format::encoding::DataBlockEncoding;
use hfkit::format::text::parse_cell_line;
use hfkit::format::trailer::COMPARATOR_INNER_STORE;
use hfkit::format::writer::{BulkLoadInfo, WriterOptions};

pub use hfkit_testkit as test_fixtures;

pub mod hbase_root;
pub mod mem_source;
pub mod seed_files;

/// The fixtures root (holding `hbase/`, `hbase-corrupt/`, `hashes/`, `splits/`) for test
/// `test`, or `None` when it is to be skipped ([`test_fixtures::dir`]).
pub fn fixtures_root(test: &str) -> Option<PathBuf> {
    test_fixtures::dir(test, "hbase").and_then(|d| d.parent().map(Path::to_path_buf))
}

/// One HBase-written fixture.
pub struct Fixture {
    pub name: String,
    pub hfile: PathBuf,
    pub options: BTreeMap<String, String>,
}

impl Fixture {
    pub fn opt(&self, key: &str) -> &str {
        self.options.get(key).map(String::as_str).unwrap_or("")
    }

    pub fn cells_txt(&self) -> String {
        std::fs::read_to_string(self.hfile.with_extension("cells.txt")).unwrap()
    }

    pub fn cells(&self) -> Vec<Cell> {
        self.cells_txt()
            .lines()
            .enumerate()
            .map(|(i, l)| {
                parse_cell_line(l).unwrap_or_else(|e| panic!("{} line {}: {e}", self.name, i + 1))
            })
            .collect()
    }

    pub fn has_seqid(&self) -> bool {
        self.opt("cells_txt_has_seqid") == "true"
    }

    pub fn compression(&self) -> Compression {
        Compression::from_name(self.opt("compression")).unwrap()
    }

    pub fn encoding(&self) -> DataBlockEncoding {
        DataBlockEncoding::from_name(self.opt("encoding")).unwrap()
    }

    pub fn bloom(&self) -> &str {
        self.opt("bloom")
    }

    /// Writer options that reproduce how HBase wrote this file (Bloom settings excluded).
    pub fn writer_options(&self) -> WriterOptions {
        let bulk = self.opt("bulkload_meta") == "true";
        let create = self.opt("create_time_ms").parse().unwrap();
        WriterOptions {
            block_size: self.opt("block_size").parse().unwrap(),
            compression: self.compression(),
            encoding: self.encoding(),
            checksum_type: ChecksumType::from_name(self.opt("checksum")).unwrap(),
            bytes_per_checksum: self.opt("bytes_per_checksum").parse().unwrap(),
            include_tags: self.opt("include_tags") == "true",
            include_mvcc: self.opt("include_mvcc") == "true",
            compress_tags: false,
            index_block_size: self.opt("index_block_size").parse().unwrap(),
            create_time: create,
            comparator: COMPARATOR_INNER_STORE.to_string(),
            store_file: bulk,
            bulk_load: bulk.then(|| BulkLoadInfo {
                timestamp: create,
                task: "attempt_local_0001_m_000000_0".to_string(),
                exclude_from_minor_compaction: false,
                major_compaction: true,
            }),
            bloom: self.bloom_type(),
            bloom_params: BloomParams {
                chunk_byte_size_hint: self.opt("bloom_block_size").parse().unwrap(),
                ..BloomParams::default()
            },
            ..WriterOptions::default()
        }
    }

    /// The general Bloom type from `.options`.
    pub fn bloom_type(&self) -> Option<BloomType> {
        match self.bloom() {
            "NONE" | "" => None,
            "ROWPREFIX_FIXED_LENGTH" => {
                Some(BloomType::prefix(self.opt("bloom_prefix_len").parse().unwrap()).unwrap())
            }
            other => BloomType::parse(other).unwrap(),
        }
    }
}

/// Every fixture in `hbase/`, sorted by name.
pub fn fixtures(root: &Path) -> Vec<Fixture> {
    let dir = root.join("hbase");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("hfile") {
            continue;
        }
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(p.with_extension("options")).unwrap();
        let options = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        out.push(Fixture {
            name,
            hfile: p,
            options,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Every cell of every live file of a table, as sorted canonical lines (the physical contents,
/// markers and all versions included).
pub fn live_file_cells(t: &hfkit::table::directory::Table) -> Vec<String> {
    let m = t.manifest().unwrap();
    let mut out = Vec::new();
    for e in &m.files {
        let r = hfkit::format::reader::HFileReader::open(t.file_path(e)).unwrap();
        let mut s = r.scanner().unwrap();
        while let Some(c) = s.next().unwrap() {
            out.push(hfkit::format::text::cell_line(&c, false));
        }
    }
    out.sort();
    out
}

/// A scratch directory, on tmpfs when there is one: table tests fsync hundreds of times and
/// measure semantics, not the disk.
pub fn tmpdir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().unwrap()
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Copies the directory tree `from` to `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// What in the table directory `dir` is not part of the table: anything but `CURRENT`, `.lock`,
/// `manifests/manifest-<v>.json` up to the live version, `data/` with the files the live
/// manifest or a snapshot names (and their region and family directories), an empty `.tmp/`,
/// and `snapshots/` with `<name>.json` per snapshot. What a writer that died may leave, and
/// the next writer has to remove. Written from the layout of `formats/table.md`, not from the
/// garbage collector. A leftover directory is listed, not what it holds.
pub fn leftovers(dir: &Path) -> Vec<PathBuf> {
    use hfkit::table::manifest::manifest_file_name;
    let t = hfkit::table::directory::Table::open(dir).unwrap();
    let m = t.manifest().unwrap();
    let mut keep: std::collections::BTreeSet<PathBuf> = ["CURRENT", ".lock"]
        .iter()
        .map(|n| dir.join(n))
        .chain((0..=m.version).map(|v| dir.join("manifests").join(manifest_file_name(v))))
        .collect();
    let mut keep_dirs: std::collections::BTreeSet<PathBuf> = ["data", "manifests", ".tmp"]
        .iter()
        .map(|n| dir.join(n))
        .collect();
    let mut files: Vec<_> = m.files.clone();
    for s in t.snapshots().unwrap() {
        keep_dirs.insert(dir.join("snapshots"));
        keep.insert(dir.join("snapshots").join(format!("{}.json", s.name)));
        files.extend(t.snapshot(&s.name).unwrap().manifest.files);
    }
    if dir.join("snapshots").is_dir() {
        keep_dirs.insert(dir.join("snapshots"));
    }
    for e in &files {
        let p = t.file_path(e);
        keep_dirs.extend(p.parent().map(Path::to_path_buf));
        keep_dirs.extend(p.parent().and_then(Path::parent).map(Path::to_path_buf));
        keep.insert(p);
    }
    // Index tables imported with the table live in `indexes/<qualifier>`: tables of their own,
    // checked on their own.
    let indexes = dir.join("indexes");
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                if p == indexes || (d == indexes && p.join("CURRENT").is_file()) {
                    if p == indexes {
                        stack.push(p);
                    }
                } else if keep_dirs.contains(&p) {
                    stack.push(p);
                } else {
                    out.push(p);
                }
            } else if !keep.contains(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Runs the `hfkit` binary with `args`.
pub fn hfkit(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(args)
        .output()
        .unwrap()
}

/// Command output as text (lossy UTF-8).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// Every file under `dir` (recursively), sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `hfkit import --schema SCHEMA INPUT MODE DEST EXTRA...` (MODE `--table` or `--out`).
pub fn import_with(
    schema: &Path,
    input: &Path,
    mode: &str,
    dest: &Path,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "import",
        "--schema",
        schema.to_str().unwrap(),
        input.to_str().unwrap(),
        mode,
        dest.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    hfkit(&args)
}

/// Gives `table` of `root` a newer descriptor with `hbase.store.file-tracker.impl = FILE`.
pub fn use_file_tracker(root: &Path, table: &str) {
    let m = hfkit::hbase::HBaseRoot::open(root)
        .unwrap()
        .table(table)
        .unwrap();
    let mut d = m.descriptor.clone();
    d.attributes.push((
        hfkit::hbase::descriptor::TRACKER_IMPL.as_bytes().to_vec(),
        b"FILE".to_vec(),
    ));
    let bytes = d.to_file_bytes();
    let hfkit::hbase::manifest::Source::Table { dir } = &m.source else {
        panic!()
    };
    std::fs::write(
        dir.join(hfkit::hbase::descriptor::TABLEINFO_DIR)
            .join(hfkit::hbase::descriptor::tableinfo_file_name(2, &bytes)),
        bytes,
    )
    .unwrap();
}

pub fn write_filelist(
    store: &Path,
    file: &str,
    timestamp: u64,
    entries: &[(&str, Option<hfkit::hbase::Reference>)],
) {
    let sized: Vec<_> = entries
        .iter()
        .map(|(n, r)| {
            let size = std::fs::metadata(store.join(n))
                .map(|m| m.len())
                .unwrap_or(0);
            (*n, r.clone(), size)
        })
        .collect();
    write_filelist_sized(store, file, timestamp, &sized);
}

/// A FILE-tracker list of `(name, reference, size)` entries.
pub fn write_filelist_sized(
    store: &Path,
    file: &str,
    timestamp: u64,
    entries: &[(&str, Option<hfkit::hbase::Reference>, u64)],
) {
    let list = hfkit::hbase::proto::StoreFileList {
        timestamp,
        store_file: entries
            .iter()
            .map(|(n, r, size)| hfkit::hbase::proto::StoreFileEntry {
                name: n.to_string(),
                size: *size,
                reference: r.as_ref().map(|r| r.to_proto()),
            })
            .collect(),
        version: Some(2),
    };
    std::fs::create_dir_all(store.join(hfkit::hbase::manifest::FILELIST_DIR)).unwrap();
    std::fs::write(
        store.join(hfkit::hbase::manifest::FILELIST_DIR).join(file),
        hfkit::hbase::manifest::filelist_file_bytes(&list),
    )
    .unwrap();
}

/// Puts `table` of `root` on the FILE store-file tracker, each store's list naming the files
/// it has now (a reference in the list only, its file removed, as the FILE tracker keeps it).
pub fn use_file_tracker_listing(root: &Path, table: &str) {
    let m = hfkit::hbase::HBaseRoot::open(root)
        .unwrap()
        .table(table)
        .unwrap();
    use_file_tracker(root, table);
    let hfkit::hbase::manifest::Source::Table { dir } = &m.source else {
        panic!("{table} is a table")
    };
    for r in &m.regions {
        for ff in &r.families {
            let store = dir
                .join(r.info.encoded_name())
                .join(String::from_utf8_lossy(&ff.family).as_ref());
            let entries: Vec<(&str, Option<hfkit::hbase::Reference>)> = ff
                .files
                .iter()
                .map(|f| (f.name.as_str(), f.reference.clone()))
                .collect();
            write_filelist(&store, "f1.1", 1, &entries);
            for f in ff.files.iter().filter(|f| f.reference.is_some()) {
                std::fs::remove_file(store.join(&f.name)).unwrap();
            }
        }
    }
}

/// Runs `hfkit ARGS` with the debug build's export test hook (`HFKIT_TEST_EXPORT_PAUSE`, also
/// the copy's) set to `pause`, until it says it paused, then SIGKILLs it.
pub fn kill_export_when_paused(args: &[&str], pause: &str) {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_hfkit"));
    c.args(args)
        .env("HFKIT_TEST_EXPORT_PAUSE", pause)
        .stdout(std::process::Stdio::null());
    let mut child = spawn_until_paused(c, pause);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Spawns `cmd` (its test hook's pause variable set by the caller) and returns once it says
/// it paused (its first line on standard error); `what` names the pause in a failure.
pub fn spawn_until_paused(mut cmd: std::process::Command, what: &str) -> std::process::Child {
    use std::io::BufRead;
    let mut child = cmd.stderr(std::process::Stdio::piped()).spawn().unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(
        line.starts_with("paused after"),
        "{what}: no pause: {line:?}"
    );
    child
}
