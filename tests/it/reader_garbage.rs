//! A stable-Rust, fuzz-like test of the reader: valid files written by the writer (every
//! codec, multi-level indexes, NULL checksums so that corruption reaches the parsers) are
//! mutated — bit flips, byte overwrites, "interesting" 4/8-byte values over length and offset
//! fields, truncations, extensions — with a seeded generator, and opening, scanning and seeking
//! each mutant must return `Ok` or `Err`, never panic. A panic is reported with the mutation
//! that caused it.
//!
//! The base files are [`common::seed_files`], which `cargo run --example fuzz_seed_corpus --
//! fuzz/corpus/read_hfile` also writes as the seed corpus of the cargo-fuzz target `read_hfile`
//! (see `fuzz/README.md`).

use std::panic::{catch_unwind, AssertUnwindSafe};

use hfkit::format::block::{BlockDecoder, HEADER_LEN};
use hfkit::format::cell::first_on_row;
use hfkit::format::reader::HFileReader;
use hfkit::format::trailer::{Trailer, TRAILER_SIZE};
use hfkit::format::Result;

use crate::common;
use crate::common::mem_source::{open_tiny, MemSource};
use crate::common::seed_files::{base_files, cells};

/// Mutants per base file (× the base files below ≥ 20k in total).
const MUTANTS_PER_FILE: usize = 2_600;

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Everything a reader user does with a file: open, scan, seek. Errors are fine. Done twice,
/// on the bytes in memory and read by tiny ranges ([`MemSource`], [`open_tiny`]): both must
/// give the same outcome, the same error included.
fn exercise(bytes: Vec<u8>, probes: &[Vec<u8>]) -> Result<usize> {
    let ranged = exercise_reader(open_tiny(&MemSource::new(bytes.clone())), probes);
    let mapped = exercise_reader(HFileReader::from_bytes(bytes), probes);
    let outcome = |r: &Result<usize>| match r {
        Ok(n) => format!("{n} cells"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        outcome(&ranged),
        outcome(&mapped),
        "read by ranges vs in memory"
    );
    mapped
}

/// [`exercise`] on one reader.
fn exercise_reader(r: Result<HFileReader>, probes: &[Vec<u8>]) -> Result<usize> {
    let r = r?;
    let mut n = 0usize;
    let mut s = r.scanner()?;
    while s.next()?.is_some() {
        n += 1;
    }
    let last = r.last_key().map(|k| k.to_vec());
    let mut s = r.scanner()?;
    for k in probes.iter().chain(last.iter()) {
        // A key that is not a valid cell key is an error, which is fine too.
        if s.seek(k).is_ok() {
            let _ = s.next();
            let _ = s.current();
        }
    }
    Ok(n)
}

const INTERESTING: [u64; 12] = [
    0,
    1,
    0x20,
    0x21,
    0x7f,
    0xff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x7fff_ffff_ffff_ffff,
    0xffff_ffff_ffff_ffff,
    0x1000,
];

/// (offset, length, is a data block) of every block before the trailer.
fn block_spans(bytes: &[u8]) -> Vec<(usize, usize, bool)> {
    let end = Trailer::offset_in(bytes.len() as u64) as usize;
    let mut at = 0usize;
    let mut out = Vec::new();
    while at < end {
        let h = BlockDecoder::header_at(&bytes[..end], at as u64).unwrap();
        let len = h.on_disk_size_with_header() as usize;
        out.push((at, len, h.block_type.is_data()));
        at += len;
    }
    out
}

/// Applies 1 to 4 random edits; returns a description of them. `spans` are the base file's
/// blocks, so that edits can aim at index blocks and block headers.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>, spans: &[(usize, usize, bool)]) -> String {
    let mut what = Vec::new();
    let index_blocks: Vec<_> = spans.iter().filter(|s| !s.2).collect();
    for _ in 0..1 + rng.below(4) {
        if bytes.is_empty() {
            break;
        }
        let len = bytes.len();
        // A third of the edits land in the load-on-open section and trailer, which hold the
        // sizes and offsets everything else trusts; a third in an index or meta block (or
        // the header of any block); the rest anywhere.
        let at = match rng.below(3) {
            0 => {
                let tail = (TRAILER_SIZE + 400).min(len);
                len - tail + rng.below(tail)
            }
            1 if !index_blocks.is_empty() && rng.below(3) > 0 => {
                let (o, l, _) = index_blocks[rng.below(index_blocks.len())];
                (o + rng.below(*l)).min(len - 1)
            }
            1 => {
                let (o, _, _) = spans[rng.below(spans.len())];
                (o + rng.below(HEADER_LEN)).min(len - 1)
            }
            _ => rng.below(len),
        };
        match rng.below(8) {
            0 | 1 => {
                let bit = rng.below(8);
                bytes[at] ^= 1 << bit;
                what.push(format!("flip bit {bit} of byte {at}"));
            }
            2 => {
                let v = rng.next() as u8;
                bytes[at] = v;
                what.push(format!("byte {at} = {v:#x}"));
            }
            3 | 4 => {
                let v = INTERESTING[rng.below(INTERESTING.len())];
                let w = if rng.below(2) == 0 { 4 } else { 8 };
                let be = v.to_be_bytes();
                for (j, b) in be[8 - w..].iter().enumerate() {
                    if let Some(x) = bytes.get_mut(at + j) {
                        *x = *b;
                    }
                }
                what.push(format!("{w} bytes at {at} = {v:#x}"));
            }
            5 => {
                let n = rng.below(len);
                bytes.truncate(n);
                what.push(format!("truncate to {n}"));
            }
            6 => {
                let n = 1 + rng.below(64);
                let keep = bytes.len() - n.min(bytes.len());
                bytes.drain(keep.min(at)..(keep.min(at) + n).min(bytes.len()));
                what.push(format!("remove {n} bytes at {}", keep.min(at)));
            }
            _ => {
                let n = 1 + rng.below(64);
                let fill = rng.next() as u8;
                bytes.splice(at..at, std::iter::repeat_n(fill, n));
                what.push(format!("insert {n} × {fill:#x} at {at}"));
            }
        }
    }
    what.join(", ")
}

#[test]
fn mutated_files_never_panic_the_reader() {
    let files = base_files();
    let probes: Vec<Vec<u8>> = {
        let cs = cells(90);
        let mut p: Vec<Vec<u8>> = cs.iter().step_by(13).map(|c| c.as_ref().key()).collect();
        p.push(first_on_row(b""));
        p.push(first_on_row(b"r00015"));
        p.push(first_on_row(b"zzz"));
        p
    };
    // Every base file is readable to start with.
    for (name, bytes) in &files {
        let n = exercise(bytes.clone(), &probes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(n, if name == "empty" { 0 } else { 90 }, "{name}");
    }

    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    let mut total = 0usize;
    let mut outcomes = [0usize; 2];
    for (fi, (name, base)) in files.iter().enumerate() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (fi as u64 + 1).wrapping_mul(0x1234_5678_9abc));
        let spans = block_spans(base);
        for m in 0..MUTANTS_PER_FILE {
            let mut bytes = base.clone();
            let what = mutate(&mut rng, &mut bytes, &spans);
            total += 1;
            match catch_unwind(AssertUnwindSafe(|| exercise(bytes, &probes))) {
                Ok(Ok(_)) => outcomes[0] += 1,
                Ok(Err(_)) => outcomes[1] += 1,
                Err(p) => {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    failures.push(format!("{name} mutant {m} [{what}]: {msg}"));
                }
            }
        }
    }
    std::panic::set_hook(hook);
    eprintln!(
        "{total} mutants: {} read fine, {} gave errors, {} panicked",
        outcomes[0],
        outcomes[1],
        failures.len()
    );
    assert!(total >= 20_000);
    assert!(
        failures.is_empty(),
        "{} mutants panicked the reader; first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

/// Regression (found by `mutated_files_never_panic_the_reader`): a leaf index block whose
/// secondary index holds an entry offset near i32::MAX overflowed `parse_non_root`'s bounds
/// check (a panic in debug builds).
#[test]
fn leaf_index_entry_offset_near_i32_max_is_an_error() {
    let files = base_files();
    let (_, base) = files.iter().find(|(n, _)| n == "NONE_NULL").unwrap();
    let r = HFileReader::from_bytes(base.clone()).unwrap();
    assert!(r.trailer().num_data_index_levels >= 2);
    let leaves: Vec<usize> = block_spans(base)
        .into_iter()
        .filter(|&(o, _, _)| &base[o..o + 8] == b"IDXLEAF2")
        .map(|(o, _, _)| o)
        .collect();
    assert!(!leaves.is_empty());
    for v in [0x7fff_ffffu32, 0x7fff_fff5, 0x8000_0000] {
        let mut bytes = base.clone();
        for leaf_at in &leaves {
            // Header, then i32 entry count, then the secondary index: patch its first entry.
            let at = leaf_at + HEADER_LEN + 4;
            bytes[at..at + 4].copy_from_slice(&v.to_be_bytes());
        }
        let key = cells(90)[0].as_ref().key();
        let result = catch_unwind(AssertUnwindSafe(|| {
            let r = HFileReader::from_bytes(bytes)?;
            let mut s = r.scanner()?;
            s.seek(&key).map(|c| c.is_some())
        }));
        assert!(matches!(result, Ok(Err(_))), "{v:#x}: {result:?}");
    }
}

/// The seed corpus the fuzz target starts from (`examples/fuzz_seed_corpus.rs`): every base
/// file, named by codec and checksum, each one the reader opens and scans whole.
#[test]
fn seed_corpus_holds_every_base_file_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("corpus/read_hfile");
    let n = common::seed_files::write_corpus(&dir).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), n);
    assert!(names.contains(&"GZ_NULL.hfile".to_string()), "{names:?}");
    assert!(names.contains(&"empty.hfile".to_string()), "{names:?}");
    for name in &names {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let n = exercise(bytes, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(n, if name == "empty.hfile" { 0 } else { 90 }, "{name}");
    }
}
