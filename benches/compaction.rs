//! Throughput of a major compaction (`table::compact`) beside a plain read-plus-write floor on
//! the same files: 8 interleaved input files (the merge really merges), 2 columns a row, every
//! 4th row with an older version that VERSIONS 1 drops. Plain timing, one run (no criterion:
//! the compaction takes seconds), wall and CPU time (user + sys of the process, `getrusage`:
//! the figure to compare on a shared machine). Run, single-threaded:
//!
//! ```text
//! RAYON_NUM_THREADS=1 cargo bench --bench compaction
//! ```
//!
//! `HFKIT_BENCH_DIR` chooses the scratch directory (default: `/dev/shm` when present, so the
//! numbers are CPU, not disk). `HFKIT_BENCH_CELLS` overrides the cell count (default 10M).
//!
//! Measured once (2 shared cores, tmpfs, 10,000,008 cells, 564 MB in 8 files, NONE / NONE /
//! ROW Bloom): floor 3.57 s = 158 MB/s, 2.80 M cells/s; major compaction 7.12 s = 79 MB/s,
//! 1.40 M cells/s of input (2.0× the floor: the 8-way merge and the matcher).

// A bench or probe, not a library path: a failed unwrap stops it with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hfkit::format::cell::Cell;
use hfkit::format::reader::HFileReader;
use hfkit::format::writer::{HFileWriter, WriterOptions};
use hfkit::table::compact::CompactOptions;
use hfkit::table::directory::Table;
use hfkit::table::manifest::FamilyEntry;

const FILES: usize = 8;

/// CPU time (user + sys) of this process so far.
fn cpu() -> f64 {
    // SAFETY: getrusage writes one rusage struct into the zeroed value it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(u.ru_utime) + tv(u.ru_stime)).as_secs_f64()
}

fn scratch() -> tempfile::TempDir {
    let base = std::env::var_os("HFKIT_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            if Path::new("/dev/shm").is_dir() {
                PathBuf::from("/dev/shm")
            } else {
                std::env::temp_dir()
            }
        });
    tempfile::tempdir_in(base).unwrap()
}

/// File `f` holds rows `k × FILES + f`: the files interleave, so the merge really merges.
/// Every row has 2 columns; every 4th row also has an older version of `q0` (dropped by the
/// major compaction with VERSIONS 1).
fn write_input(path: &Path, f: usize, cells: usize) -> (usize, usize) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = HFileWriter::new(
        BufWriter::with_capacity(1 << 20, file),
        WriterOptions::default(),
    )
    .unwrap();
    let (mut n, mut old) = (0, 0);
    let mut k = 0usize;
    while n < cells {
        let row = format!("row{:010}", k * FILES + f);
        let v = format!("value-{k:012}");
        w.append(&Cell::put(row.as_bytes(), b"f", b"q0", 2000, v.as_bytes()).as_ref())
            .unwrap();
        n += 1;
        if k.is_multiple_of(4) {
            w.append(&Cell::put(row.as_bytes(), b"f", b"q0", 1000, b"old-value-xx").as_ref())
                .unwrap();
            n += 1;
            old += 1;
        }
        w.append(&Cell::put(row.as_bytes(), b"f", b"q1", 2000, v.as_bytes()).as_ref())
            .unwrap();
        n += 1;
        k += 1;
    }
    w.finish().unwrap();
    (n, old)
}

fn main() {
    let total: usize = std::env::var("HFKIT_BENCH_CELLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let tmp = scratch();
    let bulk = tmp.path().join("bulk");
    std::fs::create_dir_all(bulk.join("f")).unwrap();
    let t0 = Instant::now();
    let (mut cells, mut old) = (0, 0);
    for f in 0..FILES {
        let (n, o) = write_input(&bulk.join("f").join(format!("in{f}")), f, total / FILES);
        cells += n;
        old += o;
    }
    let family = FamilyEntry::new("f");
    let t = Table::create(
        &tmp.path().join("t"),
        "default:bench",
        vec![family.clone()],
        &[],
    )
    .unwrap();
    t.attach(&bulk).unwrap();
    std::fs::remove_dir_all(&bulk).unwrap();
    let m = t.manifest().unwrap();
    let in_bytes: u64 = m.files.iter().map(|e| e.size).sum();
    eprintln!(
        "setup: {cells} cells in {} files, {:.1} MB, {:.1} s",
        m.files.len(),
        in_bytes as f64 / 1e6,
        t0.elapsed().as_secs_f64()
    );

    // Floor: scan every file and write its cells to a new file with the family's settings.
    let (t0, c0) = (Instant::now(), cpu());
    let mut floor_cells = 0u64;
    for (i, e) in m.files.iter().enumerate() {
        let r = HFileReader::open(t.file_path(e)).unwrap();
        let out = std::fs::File::create(tmp.path().join(format!("floor{i}"))).unwrap();
        let mut w = HFileWriter::new(
            BufWriter::with_capacity(1 << 20, out),
            family.writer_options(0).unwrap(),
        )
        .unwrap();
        let mut s = r.scanner().unwrap();
        while let Some(c) = s.next().unwrap() {
            w.append(&c).unwrap();
            floor_cells += 1;
        }
        let (buf, _) = w.finish().unwrap();
        buf.into_inner().unwrap().sync_all().unwrap();
    }
    let (floor, floor_cpu) = (t0.elapsed().as_secs_f64(), cpu() - c0);
    for i in 0..m.files.len() {
        std::fs::remove_file(tmp.path().join(format!("floor{i}"))).unwrap();
    }

    let (t0, c0) = (Instant::now(), cpu());
    let r = t
        .compact(CompactOptions {
            major: true,
            now_ms: 10_000,
            ..CompactOptions::default()
        })
        .unwrap();
    let (major, major_cpu) = (t0.elapsed().as_secs_f64(), cpu() - c0);
    let s = &r.stores[0];
    let mb = in_bytes as f64 / 1e6;
    eprintln!(
        "floor (scan + write, no merge): {floor_cells} cells, {:.2} s ({floor_cpu:.2} CPU-s), {:.1} MB/s, {:.2} M cells/s",
        floor,
        mb / floor,
        floor_cells as f64 / floor / 1e6
    );
    eprintln!(
        "major compaction: {} files, {} cells -> {} cells, {:.2} s ({major_cpu:.2} CPU-s), {:.1} MB/s, {:.2} M cells/s (input), {:.2}x the floor's time, {:.2}x its CPU",
        s.inputs.len(),
        s.input_cells,
        s.output_cells,
        major,
        mb / major,
        s.input_cells as f64 / major / 1e6,
        major / floor,
        major_cpu / floor_cpu
    );
    assert_eq!(s.input_cells, cells as u64);
    assert_eq!(s.output_cells, (cells - old) as u64);
}
