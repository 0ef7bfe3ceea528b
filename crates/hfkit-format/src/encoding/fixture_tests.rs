//! Interop tests against the HFiles Apache HBase wrote (`shared/fixtures/hbase`, or the
//! directory named by `$HFKIT_HBASE_FIXTURES`), found through [`hfkit_testkit`].
//!
//! - every fixture's data blocks decode to exactly its `.cells.txt`;
//! - every encoded fixture re-encodes block by block to HBase's exact (uncompressed) payload;
//! - cutting `.cells.txt` into blocks with our counters gives the file's block boundaries.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::{new_decoder, new_encoder, CellDecoder, DataBlockEncoding, EncodingContext};
use crate::block::{BlockDecoder, BlockType};
use crate::cell::{compare_cells, Cell};
use crate::compression::Compression;
use crate::fileinfo::{keys, FileInfo};
use crate::text::{cell_line, hex, parse_cell_line};
use crate::trailer::Trailer;

/// Every fixture name (without extension), sorted.
fn fixture_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".hfile").map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

fn options(dir: &Path, name: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir.join(format!("{name}.options"))).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// One decoded fixture: its blocks' payloads and cells, in file order.
struct Decoded {
    ctx: EncodingContext,
    compression: Compression,
    /// (block type, uncompressed payload, cells)
    blocks: Vec<(BlockType, Vec<u8>, Vec<Cell>)>,
}

fn decode_file(file: &[u8]) -> Decoded {
    let trailer = Trailer::read(file).unwrap();
    let compression = trailer.compression().unwrap();
    let mut blocks = BlockDecoder::new(compression).unwrap();
    let mut payload = Vec::new();
    blocks
        .read(file, trailer.file_info_offset, &mut payload)
        .unwrap();
    let info = FileInfo::from_payload(&payload, trailer.file_info_offset).unwrap();
    let ctx = EncodingContext {
        include_tags: info.contains(keys::MAX_TAGS_LEN),
        include_mvcc: info.get_i32(keys::KEY_VALUE_VERSION) == Some(1),
        compress_tags: info.get_bool(keys::TAGS_COMPRESSED) == Some(true),
    };
    let mut out = Vec::new();
    let mut offset = 0u64;
    while offset < trailer.load_on_open_data_offset {
        let h = BlockDecoder::header_at(file, offset).unwrap();
        if h.block_type.is_data() {
            let mut payload = Vec::new();
            blocks.read(file, offset, &mut payload).unwrap();
            let mut dec = new_decoder(h.block_type, payload, ctx, offset).unwrap();
            let mut cells = Vec::new();
            while dec
                .advance()
                .unwrap_or_else(|e| panic!("block at {offset}: {e}"))
            {
                cells.push(dec.cell().to_owned());
            }
            out.push((h.block_type, dec.into_payload_vec(), cells));
        }
        offset += h.on_disk_size_with_header();
    }
    Decoded {
        ctx,
        compression,
        blocks: out,
    }
}

#[test]
fn every_fixture_decodes_to_its_cells_txt() {
    let Some(dir) = hfkit_testkit::dir("every_fixture_decodes_to_its_cells_txt", "hbase") else {
        return;
    };
    let mut checked = 0;
    let mut cells_total = 0;
    for name in fixture_names(&dir) {
        let opts = options(&dir, &name);
        let with_seqid = opts.get("cells_txt_has_seqid").map(String::as_str) == Some("true");
        let file = std::fs::read(dir.join(format!("{name}.hfile"))).unwrap();
        let expected = std::fs::read_to_string(dir.join(format!("{name}.cells.txt"))).unwrap();
        let decoded = decode_file(&file);
        let encoding = DataBlockEncoding::from_name(&opts["encoding"]).unwrap();
        let mut got = Vec::new();
        for (block_type, _, cells) in &decoded.blocks {
            assert_eq!(*block_type, encoding.block_type(), "{name}");
            got.extend(cells.iter().map(|c| cell_line(&c.as_ref(), with_seqid)));
        }
        let want: Vec<&str> = expected.lines().collect();
        assert_eq!(got.len(), want.len(), "{name}: cell count");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{name}: cell {i}");
        }
        checked += 1;
        cells_total += got.len();
    }
    eprintln!("decoded {checked} fixtures, {cells_total} cells, all equal to .cells.txt");
    assert!(checked >= 50, "only {checked} fixtures found");
}

#[test]
fn encoded_fixtures_re_encode_byte_for_byte() {
    let Some(dir) = hfkit_testkit::dir("encoded_fixtures_re_encode_byte_for_byte", "hbase") else {
        return;
    };
    let mut checked = 0;
    let mut uncompressed = 0;
    for name in fixture_names(&dir) {
        let opts = options(&dir, &name);
        let encoding = DataBlockEncoding::from_name(&opts["encoding"]).unwrap();
        if encoding == DataBlockEncoding::None {
            continue;
        }
        // Compressed fixtures are compared after decompression: the encoder's output is the
        // uncompressed payload whatever the codec.
        let file = std::fs::read(dir.join(format!("{name}.hfile"))).unwrap();
        let decoded = decode_file(&file);
        if decoded.compression == Compression::None {
            uncompressed += 1;
        }
        let mut enc = new_encoder(encoding, decoded.ctx).unwrap();
        for (i, (_, payload, cells)) in decoded.blocks.iter().enumerate() {
            let mut out = Vec::new();
            enc.start_block(&mut out);
            for c in cells {
                enc.encode(&c.as_ref(), &mut out).unwrap();
            }
            enc.finish_block(&mut out);
            if out != *payload {
                let at = out
                    .iter()
                    .zip(payload)
                    .position(|(a, b)| a != b)
                    .unwrap_or(out.len().min(payload.len()));
                panic!(
                    "{name} block {i}: first difference at payload byte {at} (ours {} bytes, HBase {})\nours:  {}\nhbase: {}",
                    out.len(),
                    payload.len(),
                    hex(&out[at.saturating_sub(8)..(at + 24).min(out.len())]),
                    hex(&payload[at.saturating_sub(8)..(at + 24).min(payload.len())])
                );
            }
        }
        eprintln!("{name}: {} blocks byte-identical", decoded.blocks.len());
        checked += 1;
    }
    eprintln!(
        "{checked} encoded fixtures ({uncompressed} of them uncompressed) re-encoded byte for byte"
    );
    assert!(
        uncompressed >= 5,
        "only {uncompressed} uncompressed fixtures checked"
    );
}

#[test]
fn block_cutting_matches_hbase_boundaries() {
    let Some(dir) = hfkit_testkit::dir("block_cutting_matches_hbase_boundaries", "hbase") else {
        return;
    };
    let mut checked = 0;
    let mut report = String::new();
    for name in fixture_names(&dir) {
        let opts = options(&dir, &name);
        let encoding = DataBlockEncoding::from_name(&opts["encoding"]).unwrap();
        let block_size: usize = opts["block_size"].parse().unwrap();
        let file = std::fs::read(dir.join(format!("{name}.hfile"))).unwrap();
        let decoded = decode_file(&file);
        let text = std::fs::read_to_string(dir.join(format!("{name}.cells.txt"))).unwrap();
        let cells: Vec<Cell> = text.lines().map(|l| parse_cell_line(l).unwrap()).collect();
        let want: Vec<usize> = decoded.blocks.iter().map(|(_, _, c)| c.len()).collect();

        let mut enc = new_encoder(encoding, decoded.ctx).unwrap();
        let mut got = Vec::new();
        let mut out = Vec::new();
        let mut in_block = 0usize;
        let mut encoded_payload_bytes = 0usize;
        for (i, c) in cells.iter().enumerate() {
            let new_key = i > 0 && compare_cells(&cells[i - 1].as_ref(), &c.as_ref()).is_ne();
            if in_block > 0
                && new_key
                && (enc.encoded_bytes() >= block_size || enc.unencoded_bytes() >= block_size)
            {
                enc.finish_block(&mut out);
                encoded_payload_bytes += out.len();
                got.push(in_block);
                in_block = 0;
            }
            if in_block == 0 {
                out.clear();
                enc.start_block(&mut out);
            }
            enc.encode(&c.as_ref(), &mut out).unwrap();
            in_block += 1;
        }
        if in_block > 0 {
            enc.finish_block(&mut out);
            encoded_payload_bytes += out.len();
            got.push(in_block);
        }
        assert_eq!(got, want, "{name}: cells per block");
        if !cells.is_empty() {
            writeln!(
                report,
                "{name}: {} blocks, {:.2} payload bytes/cell ({})",
                got.len(),
                encoded_payload_bytes as f64 / cells.len() as f64,
                encoding.name()
            )
            .unwrap();
        }
        checked += 1;
    }
    eprint!("{report}");
    eprintln!("{checked} fixtures: block boundaries equal HBase's");
}
