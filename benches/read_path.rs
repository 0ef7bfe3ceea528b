//! Read-path bench on one table imported from TPC-H lineitem CSV (issue 24): CPU time per cell
//! or per operation, one core, every figure beside the others in the same run.
//!
//! - `file scan`: every store file read by its own `HFileReader` scanner (the floor);
//! - `table scan`: a full scan through `table::read::TableReader` (merge + matcher + rows),
//!   with rows borrowed from the scanner (`next_row_ref`) and as owned `Row`s (the iterator);
//! - `cli scan`: `hfkit scan TABLE --format cells > /dev/null` (a child process; its CPU time);
//! - `get present`: gets of random present rows (16 cells each) through one `TableReader`,
//!   with the default block cache (64 MiB), after a warm-up pass over the same rows;
//! - `get absent`: gets of rows inside the files' key ranges that do not exist (line number
//!   9, which lineitem never has), so only the Bloom filter can skip the file;
//! - `cli get`: `hfkit get TABLE --rows-from FILE > /dev/null` over the present rows, one process.
//!
//! `HFKIT_BENCH_ONLY=scan` stops after the scans; `HFKIT_BENCH_ONLY=gets` runs the gets alone
//! (for a profile), and `HFKIT_BENCH_GETS=present,one` only the get sets whose names hold
//! every word given.
//!
//! Figures are CPU time (user + sys, `getrusage`), not wall time. The table is the one at
//! `HFKIT_BENCH_TABLE`; `benches/read_bench.sh` builds it (`hfkit import --table` of the first
//! `LINES` lines of lineitem.csv) and runs this bench pinned to one core.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use hfkit::format::block_cache::{BlockCache, DEFAULT_BLOCK_CACHE_BYTES};
use hfkit::format::reader::HFileReader;
use hfkit::read::ReadOptions;
use hfkit::table::directory::Table;
use hfkit::table::read::TableReader;

const GETS: usize = 200_000;

fn cpu(who: i32) -> Duration {
    // SAFETY: getrusage writes one rusage struct into the zeroed value it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// CPU time of `f` in this process (best of `runs`) and its result.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut out: Option<(Duration, T)> = None;
    for _ in 0..runs {
        let t = cpu(libc::RUSAGE_SELF);
        let v = f();
        let d = cpu(libc::RUSAGE_SELF) - t;
        if out.as_ref().is_none_or(|(b, _)| d < *b) {
            out = Some((d, v));
        }
    }
    out.expect("runs ≥ 1")
}

/// CPU time of a child process (best of `runs`), stdout to /dev/null; `None` if it failed.
fn child(runs: usize, cmd: &mut dyn FnMut() -> Command) -> Option<Duration> {
    let mut out: Option<Duration> = None;
    for _ in 0..runs {
        let t = cpu(libc::RUSAGE_CHILDREN);
        let st = cmd().stdout(Stdio::null()).status().ok()?;
        if !st.success() {
            return None;
        }
        let d = cpu(libc::RUSAGE_CHILDREN) - t;
        out = Some(out.map_or(d, |b| b.min(d)));
    }
    out
}

/// splitmix64.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn picks(rows: &[Vec<u8>], absent: bool) -> Vec<Vec<u8>> {
    (0..GETS)
        .map(|i| {
            let mut k = rows[(mix(i as u64) % rows.len() as u64) as usize].clone();
            if absent {
                if let Some(last) = k.last_mut() {
                    *last = b'9';
                }
            }
            k
        })
        .collect()
}

fn main() {
    let runs: usize = std::env::var("HFKIT_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let dir = PathBuf::from(
        std::env::var_os("HFKIT_BENCH_TABLE").expect("HFKIT_BENCH_TABLE: a table directory"),
    );
    let bin = std::env::var_os("HFKIT_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/hfkit"));
    let table = Table::open(&dir).expect("open table");
    let reader = TableReader::open(&table).expect("open reader");
    let m = reader.manifest();
    let entries: u64 = m.files.iter().map(|e| e.entries).sum();
    let disk: u64 = m.files.iter().map(|e| e.size).sum();
    println!(
        "table {}: {entries} cells, {} files, {:.1} MB; runs: best CPU time of {runs}",
        dir.display(),
        m.files.len(),
        disk as f64 / 1e6
    );
    // The floor: each file through its own scanner.
    let files: Vec<HFileReader> = m
        .files
        .iter()
        .map(|e| HFileReader::open(table.file_path(e)).expect("open file"))
        .collect();
    let only = std::env::var("HFKIT_BENCH_ONLY").unwrap_or_default();
    if only != "gets" {
        scans(runs, &files, &reader, &bin, &dir, entries);
    }
    if only == "scan" {
        return;
    }
    // The row keys the gets below pick from, collected outside the timed scans.
    let mut rows = Vec::new();
    let mut scan = reader.scan(&ReadOptions::default()).expect("scan");
    while let Some(r) = scan.next_row_ref().expect("row") {
        rows.push(r.row().to_vec());
    }
    gets(runs, &reader, &rows, &bin, &dir);
}

/// The file scans, the table scans and the CLI's scan.
fn scans(
    runs: usize,
    files: &[HFileReader],
    reader: &TableReader,
    bin: &Path,
    dir: &Path,
    entries: u64,
) {
    let rate = |n: u64, d: Duration| n as f64 / d.as_secs_f64();
    let (t, n) = best(runs, || {
        let mut n = 0u64;
        for f in files {
            let mut s = f.scanner().expect("scanner");
            while s.next().expect("next").is_some() {
                n += 1;
            }
        }
        n
    });
    assert_eq!(n, entries);
    let file_scan = rate(n, t);
    println!("file scan:   {:6.2} M cells/s", file_scan / 1e6);

    let (t, n) = best(runs, || {
        let mut n = 0u64;
        let mut scan = reader.scan(&ReadOptions::default()).expect("scan");
        while let Some(r) = scan.next_row_ref().expect("row") {
            n += r.len() as u64;
        }
        n
    });
    let table_scan_line = |n: u64, t: Duration, how: &str| {
        assert_eq!(n, entries);
        let r = rate(n, t);
        println!(
            "table scan:  {:6.2} M cells/s  ({:.2}x file scan)  {how}",
            r / 1e6,
            r / file_scan
        );
        r
    };
    let table_scan = table_scan_line(n, t, "rows borrowed (next_row_ref)");
    let (t, n) = best(runs, || {
        let mut n = 0u64;
        for r in reader.scan(&ReadOptions::default()).expect("scan") {
            n += r.expect("row").cells.len() as u64;
        }
        n
    });
    table_scan_line(n, t, "owned rows (Iterator: Row of Cells)");

    match child(runs, &mut || {
        let mut c = Command::new(bin);
        c.arg("scan").arg(dir).args(["--format", "cells"]);
        c
    }) {
        Some(t) => {
            let r = rate(entries, t);
            println!(
                "cli scan:    {:6.2} M cells/s  ({:.2}x table scan)  hfkit scan --format cells > /dev/null",
                r / 1e6,
                r / table_scan
            );
        }
        None => println!("cli scan:    failed ({})", bin.display()),
    }
}

/// Gets of present and absent rows through the library, then the CLI's `get --rows-from`.
fn gets(runs: usize, reader: &TableReader, rows: &[Vec<u8>], bin: &Path, dir: &Path) {
    let rate = |n: u64, d: Duration| n as f64 / d.as_secs_f64();
    let m = reader.manifest();
    let wanted = std::env::var("HFKIT_BENCH_GETS").unwrap_or_default();
    // As `hfkit get` does: the default block cache (64 MiB), for gets only.
    let cache = std::sync::Arc::new(BlockCache::new(DEFAULT_BLOCK_CACHE_BYTES));
    reader.set_block_cache(&cache);
    let opts = ReadOptions::default();
    let mut get_rates = Vec::new();
    // The measure: rows of one region (its first), whose blocks the cache can hold;
    // then rows of the whole table, most of whose blocks it cannot.
    let region0 = &rows[..rows.len().div_ceil(m.regions.len().max(1))];
    for (what, set, absent) in [
        ("present, one region", region0, false),
        ("absent,  one region", region0, true),
        ("present, all regions", rows, false),
        ("absent,  all regions", rows, true),
    ] {
        if !wanted.split(',').all(|w| what.contains(w.trim())) {
            continue;
        }
        let keys = picks(set, absent);
        let run = || {
            let mut cells = 0usize;
            for k in &keys {
                let (c, _) = reader.get(k, &opts).expect("get");
                cells += c.len();
            }
            cells
        };
        run(); // warm-up: the same rows, so a block cache holds what the timed runs read
        let (t, cells) = best(runs, run);
        assert_eq!(cells == 0, absent);
        let r = rate(GETS as u64, t);
        get_rates.push(r);
        let s = cache.stats();
        println!(
            "get {what:<20}: {:9.0} gets/s ({:.2} µs/get, {:.1} cells/get); cache: {:.1} MB, hit ratio so far {:.3}",
            r,
            1e6 / r,
            cells as f64 / GETS as f64,
            s.used as f64 / 1e6,
            s.hits as f64 / (s.hits + s.misses).max(1) as f64
        );
    }

    let s = cache.stats();
    println!(
        "block cache: {} blocks, {:.1} MB of {:.1} MB, {} hits, {} misses, {} evictions",
        s.blocks,
        s.used as f64 / 1e6,
        s.capacity as f64 / 1e6,
        s.hits,
        s.misses,
        s.evictions
    );
    let keys = picks(region0, false);
    let list = std::env::temp_dir().join(format!("hfkit-read-bench-{}.rows", std::process::id()));
    let mut text = String::new();
    for k in &keys {
        text.push_str(&hfkit::table::to_string_binary(k));
        text.push('\n');
    }
    std::fs::write(&list, text).expect("write row list");
    match child(runs, &mut || {
        let mut c = Command::new(bin);
        c.arg("get")
            .arg(dir)
            .arg("--rows-from")
            .arg(&list)
            .args(["--format", "cells"]);
        c
    }) {
        Some(t) => {
            let r = rate(GETS as u64, t);
            println!(
                "cli get:     {:9.0} gets/s ({:.2}x library get, one region)  hfkit get --rows-from FILE --format cells",
                r,
                r / get_rates[0]
            );
        }
        None => println!("cli get:     failed (no --rows-from in {})", bin.display()),
    }
    let _ = std::fs::remove_file(&list);
}
