//! Reads by byte ranges (`formats/hfile.md` §"Reading by ranges"), as a store file on object
//! storage is read: the same cells, checks and errors as a mapped file (every HBase-written
//! fixture; every mutant of `reader_garbage.rs` compares both ways too), and only the bytes
//! an operation needs: opening reads the file's end once, a get reads exactly the index,
//! Bloom and data blocks on its path, an absent row stops at the Bloom chunk, and a full scan
//! reads each byte once in few, growing requests.

use std::sync::Arc;

use hfkit::format::block::BlockDecoder;
use hfkit::format::block_cache::BlockCache;
use hfkit::format::bloom::{BloomQuery, BloomType};
use hfkit::format::cell::{first_on_row, Cell};
use hfkit::format::compression::Compression;
use hfkit::format::reader::{HFileReader, MIN_READAHEAD, OPEN_READ};
use hfkit::format::text::push_cell_line;
use hfkit::format::trailer::Trailer;
use hfkit::format::verify::verify;
use hfkit::format::writer::{HFileWriter, WriterOptions};

use crate::common::mem_source::{open_ranged, open_tiny, MemSource};
use crate::common::{fixtures, fixtures_root};

/// Every cell of `r` in canonical text.
fn cell_lines(r: &HFileReader, with_seq: bool) -> String {
    let mut s = r.scanner().unwrap();
    let mut out = String::new();
    while let Some(c) = s.next().unwrap() {
        push_cell_line(&mut out, &c, with_seq);
        out.push('\n');
    }
    out
}

/// The first cell at or after the first cell of `row`, as text, or "none".
fn seek_line(r: &HFileReader, row: &[u8]) -> String {
    let mut s = r.scanner().unwrap();
    let mut out = String::new();
    match s.seek(&first_on_row(row)).unwrap() {
        Some(c) => push_cell_line(&mut out, &c, true),
        None => out.push_str("none"),
    }
    out
}

#[test]
fn hbase_fixtures_read_by_ranges_equal_mapped_reads() {
    let Some(root) = fixtures_root("hbase_fixtures_read_by_ranges_equal_mapped_reads") else {
        return;
    };
    let mut checked = 0;
    for f in fixtures(&root) {
        let bytes = std::fs::read(&f.hfile).unwrap();
        let mapped = HFileReader::open(&f.hfile).unwrap();
        let source = MemSource::new(bytes.clone());
        let ranged = open_ranged(&source).unwrap();
        assert_eq!(
            cell_lines(&ranged, f.has_seqid()),
            f.cells_txt(),
            "{}",
            f.name
        );
        // Small files: read again in many small windows.
        let tiny = open_tiny(&MemSource::new(bytes.clone())).unwrap();
        assert_eq!(
            cell_lines(&tiny, f.has_seqid()),
            f.cells_txt(),
            "{}",
            f.name
        );
        assert_eq!(ranged.entry_count(), mapped.entry_count());
        for c in f.cells().iter().step_by(7) {
            let want = seek_line(&mapped, &c.row);
            assert_eq!(seek_line(&ranged, &c.row), want, "{}: get", f.name);
            assert_eq!(seek_line(&tiny, &c.row), want, "{}: get", f.name);
            assert_eq!(
                ranged.might_contain(BloomQuery::Row(&c.row)).unwrap(),
                mapped.might_contain(BloomQuery::Row(&c.row)).unwrap(),
                "{}: Bloom",
                f.name
            );
        }
        let problems = |r: &HFileReader| {
            let v = verify(r);
            v.problems
                .iter()
                .map(|p| format!("{:?} {}", p.offset, p.message))
                .collect::<Vec<_>>()
        };
        assert_eq!(problems(&ranged), problems(&mapped), "{}: verify", f.name);
        assert_eq!(problems(&tiny), problems(&mapped), "{}: verify", f.name);
        checked += 1;
    }
    assert_eq!(checked, 52);
}

/// A file of 20,000 rows × 3 cells (~4 MB; values that do not compress): Snappy, 4 KiB
/// blocks, a three-level index, ROW Bloom in small chunks. Returns its bytes.
const ROWS: u32 = 20_000;

fn big_file() -> Vec<u8> {
    let opts = WriterOptions {
        compression: Compression::Snappy,
        block_size: 4096,
        index_block_size: 512,
        index_min_entries: 4,
        bloom: Some(BloomType::Row),
        ..WriterOptions::default()
    };
    let mut opts = opts;
    opts.bloom_params.chunk_byte_size_hint = 1024;
    let mut w = HFileWriter::new(Vec::new(), opts).unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..ROWS {
        for q in ["a", "b", "c"] {
            let row = format!("row-{:08}", i * 2);
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let value = format!("{x:016x}{:016x}{:016x}", x.rotate_left(21), !x);
            let c = Cell::put(
                row.as_bytes(),
                b"f",
                q.as_bytes(),
                1_700_000_000_000,
                value.as_bytes(),
            );
            w.append(&c.as_ref()).unwrap();
        }
    }
    w.finish().unwrap().0
}

/// (offset, on-disk size) of every block before the trailer.
fn blocks(bytes: &[u8]) -> Vec<(u64, u64)> {
    let end = Trailer::offset_in(bytes.len() as u64);
    let mut at = 0;
    let mut out = Vec::new();
    while at < end {
        let h = BlockDecoder::header_at(&bytes[..end as usize], at).unwrap();
        out.push((at, h.on_disk_size_with_header()));
        at += h.on_disk_size_with_header();
    }
    out
}

#[test]
fn a_get_reads_only_the_blocks_on_its_path() {
    let bytes = big_file();
    let len = bytes.len() as u64;
    assert!(len > 4 * OPEN_READ, "{len} bytes");
    let all_blocks = blocks(&bytes);
    let source = MemSource::new(bytes.clone());
    let r = open_ranged(&source).unwrap();
    assert!(r.trailer().num_data_index_levels >= 3);
    // Opening: one read of the file's end, holding the whole load-on-open section.
    assert_eq!(source.reads(), vec![(len - OPEN_READ, OPEN_READ)]);
    assert!(r.trailer().load_on_open_data_offset >= len - OPEN_READ);

    // A present row: each read is exactly one block (intermediate and leaf index, Bloom
    // chunk, data block), nothing else.
    source.clear();
    let row = b"row-00004242";
    assert!(r.might_contain(BloomQuery::Row(row)).unwrap());
    let line = seek_line(&r, row);
    assert!(line.starts_with("726f772d3030303034323432 "), "{line}");
    let reads = source.reads();
    let levels = r.trailer().num_data_index_levels as usize;
    // At most the index levels below the root (those in the kept end need no read), the
    // Bloom chunk and the data block.
    assert!((2..=(levels - 1) + 2).contains(&reads.len()), "{reads:?}");
    for read in &reads {
        assert!(all_blocks.contains(read), "{read:?} is not one whole block");
    }

    // An absent row the Bloom rules out: its chunk only (and none once it is loaded).
    source.clear();
    let absent = (1..ROWS)
        .map(|i| format!("row-{:08}", i * 2 + 1))
        .find(|row| !r.might_contain(BloomQuery::Row(row.as_bytes())).unwrap())
        .unwrap();
    assert!(source.reads().len() <= 2, "{:?}", source.reads());
    source.clear();
    assert!(!r.might_contain(BloomQuery::Row(absent.as_bytes())).unwrap());
    assert_eq!(source.reads(), vec![]);

    // Through a block cache, the second get of a row reads nothing.
    let cache = Arc::new(BlockCache::new(1 << 20));
    r.set_block_cache(cache);
    seek_line(&r, b"row-00000100");
    source.clear();
    seek_line(&r, b"row-00000100");
    assert_eq!(source.reads(), vec![]);
}

#[test]
fn a_full_scan_reads_each_byte_once_in_growing_requests() {
    let bytes = big_file();
    let len = bytes.len() as u64;
    let source = MemSource::new(bytes.clone());
    let r = open_ranged(&source).unwrap();
    let (open_at, _) = source.reads()[0];
    source.clear();
    let mapped = HFileReader::from_bytes(bytes).unwrap();
    assert_eq!(cell_lines(&r, true), cell_lines(&mapped, true));
    let reads = source.reads();
    // Contiguous from 0 to where opening's read began, each read at least as long as the one
    // before (read-ahead doubles), the first MIN_READAHEAD.
    assert_eq!(reads[0], (0, MIN_READAHEAD));
    let mut at = 0;
    for (i, &(offset, n)) in reads.iter().enumerate() {
        assert_eq!(offset, at, "read {i} of {reads:?}");
        if i > 0 && i + 1 < reads.len() {
            assert!(n >= 2 * reads[i - 1].1 - 64 * 1024, "{reads:?}");
        }
        at += n;
    }
    assert_eq!(at, open_at, "{reads:?}");
    assert_eq!(source.bytes_read() + (len - open_at), len);
    assert!(reads.len() <= 8, "{} reads for {len} bytes", reads.len());
}

#[test]
fn a_failing_or_short_source_is_an_error_naming_the_file_and_range() {
    struct Failing(u64);
    impl hfkit::format::reader::RangeSource for Failing {
        fn file_len(&self) -> u64 {
            self.0
        }
        fn read_range(&self, _: u64, _: u64) -> std::io::Result<Vec<u8>> {
            Err(std::io::Error::other("503 Slow Down"))
        }
        fn name(&self) -> String {
            "s3://bucket/t/data/r/f/file1".into()
        }
    }
    let e = HFileReader::from_source(Arc::new(Failing(100_000)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("s3://bucket/t/data/r/f/file1"), "{e}");
    assert!(e.contains("34464..100000"), "{e}");
    assert!(e.contains("503 Slow Down"), "{e}");

    // A source that answers with fewer bytes than asked.
    struct Short(Vec<u8>);
    impl hfkit::format::reader::RangeSource for Short {
        fn file_len(&self) -> u64 {
            self.0.len() as u64 + 10
        }
        fn read_range(&self, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
            let end = (offset + len).min(self.0.len() as u64);
            Ok(self.0[offset.min(end) as usize..end as usize].to_vec())
        }
        fn name(&self) -> String {
            "s3://bucket/short".into()
        }
    }
    let e = HFileReader::from_source(Arc::new(Short(big_file())))
        .unwrap_err()
        .to_string();
    assert!(e.contains("s3://bucket/short") && e.contains("got "), "{e}");
}
