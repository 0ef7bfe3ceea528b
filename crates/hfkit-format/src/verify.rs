//! Whole-file verification: everything `hfkit hfile verify` checks. Spec: `formats/hfile.md`
//! §"Verification".
//!
//! - every block: header sane, checksums match, payload decompresses to its stated size;
//! - the per-type `prevBlockOffset` chains;
//! - data blocks: every cell decodes, cells are in HBase order, first/last data block offsets
//!   match the trailer;
//! - the index: its leaf level names exactly the data blocks, with the on-disk sizes they have,
//!   and each index key sorts after the previous block's last cell and not after its own
//!   block's first cell;
//! - FileInfo against contents: entry count, LASTKEY, TIMERANGE, AVG_KEY_LEN, AVG_VALUE_LEN;
//! - the general Bloom filter answers "maybe" for every cell's Bloom key.
//!
//! Problems are collected (each with the offset of the block concerned) rather than stopping
//! at the first one.

use std::cmp::Ordering;

use super::block::{BlockDecoder, BlockType, HEADER_LEN};
use super::bloom::{BloomKind, BloomQuery, BloomType};
use super::cell::{compare_flat_keys, compare_keys, KeyView};
use super::encoding::{new_decoder, CellDecoder};
use super::fileinfo::{keys, TimeRangeTracker};
use super::index::{parse_non_root, IndexEntry};
use super::reader::HFileReader;
use super::trailer::{Trailer, TRAILER_SIZE};

/// One thing wrong with a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Offset of the block concerned, when there is one.
    pub offset: Option<u64>,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(o) => write!(f, "block at offset {o}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

/// What verification found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub blocks: u64,
    pub data_blocks: u64,
    pub cells: u64,
    pub problems: Vec<Problem>,
}

impl VerifyReport {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
    fn problem(&mut self, offset: Option<u64>, message: impl Into<String>) {
        // Bound the report: a badly broken file could otherwise yield millions of lines.
        if self.problems.len() < 1000 {
            self.problems.push(Problem {
                offset,
                message: message.into(),
            });
        }
    }
}

/// A data block found while walking the file.
struct DataBlockInfo {
    offset: u64,
    on_disk_size: u32,
    first_key: Option<Vec<u8>>,
    last_key: Option<Vec<u8>>,
}

/// Verifies an opened file. (A file that does not open fails with the open error instead.)
pub fn verify(reader: &HFileReader) -> VerifyReport {
    let mut report = VerifyReport::default();
    let bytes = match reader.bytes() {
        Ok(b) => b,
        Err(e) => {
            report.problem(None, e.to_string());
            return report;
        }
    };
    let trailer = reader.trailer();
    let end = Trailer::offset_in(bytes.len() as u64);
    let mut dec = match reader.block_decoder() {
        Ok(d) => d,
        Err(e) => {
            report.problem(None, e.to_string());
            return report;
        }
    };
    let ctx = reader.encoding_context();
    let mut prev_by_chain = [-1i64; BlockType::CHAINS];
    let mut payload = Vec::new();
    let mut data_blocks: Vec<DataBlockInfo> = Vec::new();
    let mut last_key: Option<Vec<u8>> = None;
    let mut time_range = TimeRangeTracker::default();
    let (mut key_total, mut value_total) = (0u64, 0u64);
    let mut at = 0u64;
    let mut unreadable_cells = false;
    // The trailer's two size sums (formats/hfile.md §"Trailer"): every index block's payload;
    // 33 + payload of every block but the data index root and intermediate blocks, + 4096.
    let (mut index_bytes, mut counted_bytes) = (0u64, TRAILER_SIZE as u64);

    while at < end {
        let header = match BlockDecoder::header_at(&bytes[..end as usize], at) {
            Ok(h) => h,
            Err(e) => {
                report.problem(
                    Some(at),
                    format!("unreadable block header: {e}; stopping the walk"),
                );
                break;
            }
        };
        report.blocks += 1;
        let size = header.on_disk_size_with_header();
        let chain = header.block_type.chain_id();
        if header.prev_block_offset != prev_by_chain[chain] {
            report.problem(
                Some(at),
                format!(
                    "prevBlockOffset is {}, the previous {} block is at {}",
                    header.prev_block_offset,
                    header.block_type.name(),
                    prev_by_chain[chain]
                ),
            );
        }
        prev_by_chain[chain] = at as i64;
        let payload_len = u64::from(header.uncompressed_size_without_header);
        let data_index_block = match header.block_type {
            BlockType::LeafIndex => {
                index_bytes += payload_len;
                false
            }
            BlockType::IntermediateIndex => true,
            BlockType::RootIndex => at == trailer.load_on_open_data_offset,
            _ => false,
        };
        if data_index_block {
            index_bytes += payload_len;
        } else {
            counted_bytes += HEADER_LEN as u64 + payload_len;
        }
        match dec.read(&bytes[..end as usize], at, &mut payload) {
            Err(e) => {
                report.problem(Some(at), e.to_string());
                if header.block_type.is_data() {
                    // Still a data block for the index and trailer checks; its cells are unknown.
                    report.data_blocks += 1;
                    data_blocks.push(DataBlockInfo {
                        offset: at,
                        on_disk_size: size as u32,
                        first_key: None,
                        last_key: None,
                    });
                    unreadable_cells = true;
                }
            }
            Ok(h) if h.block_type.is_data() => {
                report.data_blocks += 1;
                let mut info = DataBlockInfo {
                    offset: at,
                    on_disk_size: size as u32,
                    first_key: None,
                    last_key: None,
                };
                match new_decoder(h.block_type, std::mem::take(&mut payload), ctx, at) {
                    Err(e) => report.problem(Some(at), e.to_string()),
                    Ok(mut d) => {
                        loop {
                            match d.advance() {
                                Ok(false) => break,
                                Err(e) => {
                                    report.problem(Some(at), e.to_string());
                                    break;
                                }
                                Ok(true) => {}
                            }
                            report.cells += 1;
                            let key = d.key();
                            if let Some(prev) = &last_key {
                                if compare_flat_keys(prev, key) == Ordering::Greater {
                                    report.problem(
                                        Some(at),
                                        format!("cell {} is out of order", report.cells),
                                    );
                                }
                            }
                            let layout = d.layout();
                            time_range.include(layout.timestamp, layout.cell_type);
                            key_total += key.len() as u64;
                            value_total += d.value().len() as u64;
                            if info.first_key.is_none() {
                                info.first_key = Some(key.to_vec());
                            }
                            match &mut last_key {
                                Some(k) => {
                                    k.clear();
                                    k.extend_from_slice(key);
                                }
                                None => last_key = Some(key.to_vec()),
                            }
                        }
                        info.last_key = last_key.clone();
                        payload = d.into_payload_vec();
                    }
                }
                data_blocks.push(info);
            }
            Ok(_) => {}
        }
        at += size;
    }

    // Trailer against the blocks' sizes (fields no read uses, so only checked here).
    if report.is_ok() {
        if index_bytes != trailer.uncompressed_data_index_size {
            report.problem(
                None,
                format!(
                    "trailer uncompressed_data_index_size is {}, the index blocks hold {index_bytes} bytes",
                    trailer.uncompressed_data_index_size
                ),
            );
        }
        if counted_bytes != trailer.total_uncompressed_bytes {
            report.problem(
                None,
                format!(
                    "trailer total_uncompressed_bytes is {}, the blocks add up to {counted_bytes}",
                    trailer.total_uncompressed_bytes
                ),
            );
        }
    }

    // Trailer against the data blocks.
    let first = data_blocks.first().map(|b| b.offset as i64).unwrap_or(-1);
    let last = data_blocks.last().map(|b| b.offset as i64).unwrap_or(-1);
    if first != trailer.first_data_block_offset || last != trailer.last_data_block_offset {
        report.problem(
            None,
            format!(
                "trailer says data blocks span {}..{}, the file has {first}..{last}",
                trailer.first_data_block_offset, trailer.last_data_block_offset
            ),
        );
    }
    if report.cells != trailer.entry_count && !unreadable_cells {
        report.problem(
            None,
            format!(
                "trailer entry count {} but {} cells decoded",
                trailer.entry_count, report.cells
            ),
        );
    }

    verify_index(reader, &mut dec, &data_blocks, &mut report);
    if !unreadable_cells {
        verify_bloom(reader, &mut report);
    }

    // FileInfo against contents.
    let fi = reader.file_info();
    match (fi.get(keys::LASTKEY), &last_key) {
        _ if unreadable_cells => {}
        (Some(a), Some(b)) if a != b.as_slice() => {
            report.problem(None, "FileInfo LASTKEY is not the last cell's key")
        }
        (None, Some(_)) => report.problem(None, "FileInfo has no LASTKEY but the file has cells"),
        (Some(_), None) if report.cells == 0 => {
            report.problem(None, "FileInfo has a LASTKEY but the file has no cells")
        }
        _ => {}
    }
    if let Some((min, max)) = fi.time_range() {
        if report.problems.is_empty() && (min, max) != (time_range.min, time_range.max) {
            report.problem(
                None,
                format!(
                    "FileInfo TIMERANGE is {min}..{max}, the cells span {}..{}",
                    time_range.min, time_range.max
                ),
            );
        }
    }
    if let (Some(ak), Some(av)) = (
        key_total.checked_div(report.cells),
        value_total.checked_div(report.cells),
    ) {
        let (avg_k, avg_v) = (ak as i32, av as i32);
        if fi.get_i32(keys::AVG_KEY_LEN).is_some_and(|v| v != avg_k) {
            report.problem(
                None,
                format!("FileInfo AVG_KEY_LEN differs from the cells' {avg_k}"),
            );
        }
        if fi.get_i32(keys::AVG_VALUE_LEN).is_some_and(|v| v != avg_v) {
            report.problem(
                None,
                format!("FileInfo AVG_VALUE_LEN differs from the cells' {avg_v}"),
            );
        }
    }
    report
}

/// Walks the index down to its leaf level and checks it names exactly the data blocks.
fn verify_index(
    reader: &HFileReader,
    dec: &mut BlockDecoder,
    blocks: &[DataBlockInfo],
    report: &mut VerifyReport,
) {
    let levels = reader.trailer().num_data_index_levels;
    let mut level: Vec<IndexEntry> = reader.root_index().to_vec();
    let mut payload = Vec::new();
    for depth in 1..levels {
        let want = if depth + 1 == levels {
            BlockType::LeafIndex
        } else {
            BlockType::IntermediateIndex
        };
        let mut next = Vec::new();
        for e in &level {
            match reader.read_block(dec, e.offset, &mut payload) {
                Err(err) => {
                    report.problem(Some(e.offset), format!("index block unreadable: {err}"));
                    return;
                }
                Ok(h) if h.block_type != want => {
                    report.problem(
                        Some(e.offset),
                        format!(
                            "index points at a {} block, expected {}",
                            h.block_type.name(),
                            want.name()
                        ),
                    );
                    return;
                }
                Ok(h) => {
                    if h.on_disk_size_with_header() != e.on_disk_size as u64 {
                        report.problem(
                            Some(e.offset),
                            "index entry's on-disk size differs from the block's",
                        );
                    }
                    match parse_non_root(&payload, e.offset) {
                        Ok(children) => {
                            if children.first().map(|c| &c.key) != Some(&e.key) {
                                report.problem(
                                    Some(e.offset),
                                    "parent index key is not the child block's first key",
                                );
                            }
                            next.extend(children);
                        }
                        Err(err) => {
                            report.problem(Some(e.offset), err.to_string());
                            return;
                        }
                    }
                }
            }
        }
        level = next;
    }
    if level.len() != blocks.len() {
        report.problem(
            None,
            format!(
                "index names {} data blocks, the file has {}",
                level.len(),
                blocks.len()
            ),
        );
        return;
    }
    for (i, (e, b)) in level.iter().zip(blocks).enumerate() {
        if e.offset != b.offset || e.on_disk_size != b.on_disk_size {
            report.problem(
                Some(b.offset),
                format!(
                    "index entry {i} points at {} ({} bytes), the data block is at {} ({} bytes)",
                    e.offset, e.on_disk_size, b.offset, b.on_disk_size
                ),
            );
            continue;
        }
        let Some(k) = KeyView::parse(&e.key) else {
            report.problem(Some(b.offset), format!("index key {i} is malformed"));
            continue;
        };
        if let Some(first) = b.first_key.as_deref().and_then(KeyView::parse) {
            if compare_keys(&k, &first) == Ordering::Greater {
                report.problem(
                    Some(b.offset),
                    format!("index key {i} sorts after its block's first cell"),
                );
            }
        }
        if i > 0 {
            if let Some(prev_last) = blocks[i - 1].last_key.as_deref().and_then(KeyView::parse) {
                if compare_keys(&k, &prev_last) != Ordering::Greater {
                    report.problem(
                        Some(b.offset),
                        format!("index key {i} does not sort after the previous block"),
                    );
                }
            }
        }
    }
}

/// Every cell's Bloom key must test positive (a Bloom may have false positives, never false
/// negatives).
fn verify_bloom(reader: &HFileReader, report: &mut VerifyReport) {
    let Some(bloom) = reader.general_bloom() else {
        return;
    };
    let rowcol = bloom.kind() == BloomKind::General(BloomType::RowCol);
    let (mut probe, mut scanner) = match (reader.bloom_probe(), reader.scanner()) {
        (Ok(p), Ok(s)) => (p, s),
        (Err(e), _) | (_, Err(e)) => {
            report.problem(None, e.to_string());
            return;
        }
    };
    let mut last: Option<(Vec<u8>, Vec<u8>)> = None;
    loop {
        let cell = match scanner.next() {
            Ok(Some(c)) => c,
            Ok(None) => break,
            Err(e) => {
                report.problem(None, e.to_string());
                return;
            }
        };
        let q: &[u8] = if rowcol { cell.qualifier } else { b"" };
        if last
            .as_ref()
            .is_some_and(|(r, lq)| r.as_slice() == cell.row && lq.as_slice() == q)
        {
            continue;
        }
        let query = if rowcol {
            BloomQuery::RowCol {
                row: cell.row,
                family: cell.family,
                qualifier: cell.qualifier,
            }
        } else {
            BloomQuery::Row(cell.row)
        };
        match probe.might_contain(query) {
            Ok(true) => {}
            Ok(false) => {
                report.problem(
                    None,
                    format!(
                        "the Bloom filter rules out row {} which the file holds",
                        crate::text::hex(cell.row)
                    ),
                );
                return;
            }
            Err(e) => {
                report.problem(None, format!("Bloom filter unreadable: {e}"));
                return;
            }
        }
        last = Some((cell.row.to_vec(), q.to_vec()));
    }
}
