//! Golden bytes: the worked examples of `formats/encodings.md`, byte for byte. Each payload
//! is also decoded back to the cells. (The same example is in the document, annotated.)

use super::{new_decoder, new_encoder, CellDecoder, DataBlockEncoding, EncodingContext};
use crate::cell::{Cell, CellType, CellTypeOwned};

/// The three cells of the worked example (family `cf`, bulk-load context: tags and MVCC on).
fn cells() -> Vec<Cell> {
    let mut c3 = Cell::put(b"row2", b"cf", b"a", 1_700_000_000_000, b"");
    c3.cell_type = CellTypeOwned(CellType::DeleteColumn);
    vec![
        Cell::put(b"row1", b"cf", b"a", 1_700_000_000_000, b"v1"),
        Cell::put(b"row1", b"cf", b"b", 1_699_999_999_000, b"v1"),
        c3,
    ]
}

const CTX: EncodingContext = EncodingContext {
    include_tags: true,
    include_mvcc: true,
    compress_tags: false,
};

/// Bytes written as hex pairs separated by white space.
fn spaced_hex(s: &str) -> Vec<u8> {
    crate::text::parse_hex(&s.split_whitespace().collect::<String>()).unwrap()
}

fn check(e: DataBlockEncoding, ctx: EncodingContext, cells: &[Cell], want: &str) {
    let mut enc = new_encoder(e, ctx).unwrap();
    let mut out = Vec::new();
    enc.start_block(&mut out);
    for c in cells {
        enc.encode(&c.as_ref(), &mut out).unwrap();
    }
    enc.finish_block(&mut out);
    assert_eq!(out, spaced_hex(want), "{}", e.name());
    let mut dec = new_decoder(e.block_type(), out, ctx, 0).unwrap();
    for c in cells {
        assert!(dec.advance().unwrap());
        assert_eq!(&dec.cell().to_owned(), c);
    }
    assert!(!dec.advance().unwrap());
}

const KEY1: &str = "00 04 72 6f 77 31 02 63 66 61 00 00 01 8b cf e5 68 00 04";

#[test]
fn prefix_worked_example() {
    let want = format!(
        "00 02  00 00 00 5e
         13 02 00  {KEY1}  76 31  00 00
         0a 02 09  62 00 00 01 8b cf e5 64 18 04  76 31  00 00
         0e 00 05  32 02 63 66 61 00 00 01 8b cf e5 68 00 0c  00 00"
    );
    check(DataBlockEncoding::Prefix, CTX, &cells(), &want);
}

#[test]
fn diff_worked_example() {
    let want = "00 03  00 00 00 5e
         02 63 66  50 13 02 00  00 04 72 6f 77 31 61  00 68 e5 cf 8b 01  04  76 31  00 00
         1f 09  62  e8 03  76 31  00 00
         99 00 05  32 61  e8 03  0c  00 00";
    check(DataBlockEncoding::Diff, CTX, &cells(), want);
}

#[test]
fn fast_diff_worked_example() {
    let want = format!(
        "00 04  00 00 00 5e
         00 13 02 00  {KEY1}  76 31  00 00
         7e 09  62  64 18  00 00
         0e 00 05  32 61  68 00  0c  00 00"
    );
    check(DataBlockEncoding::FastDiff, CTX, &cells(), &want);
}

#[test]
fn row_index_worked_example() {
    let want = format!(
        "00 07
         00 00 00 13  00 00 00 02  {KEY1}  76 31  00 00  00
         00 00 00 13  00 00 00 02  00 04 72 6f 77 31 02 63 66 62 00 00 01 8b cf e5 64 18 04  76 31  00 00  00
         00 00 00 13  00 00 00 00  00 04 72 6f 77 32 02 63 66 61 00 00 01 8b cf e5 68 00 0c  00 00  00
         00 00 00 02  00 00 00 00  00 00 00 40  00 00 00 5e"
    );
    check(DataBlockEncoding::RowIndexV1, CTX, &cells(), &want);
}

#[test]
fn tag_compression_worked_example() {
    // Two cells carrying the same tag (type 1, value "ab"): a literal, then dictionary index 0.
    let mut cells = cells();
    cells.truncate(2);
    for c in &mut cells {
        c.tags = vec![0x00, 0x03, 0x01, b'a', b'b'];
    }
    let ctx = EncodingContext {
        compress_tags: true,
        ..CTX
    };
    let want = format!(
        "00 02  00 00 00 4a
         13 02 00  {KEY1}  76 31  05 ff 03 01 61 62  00
         0a 02 09  62 00 00 01 8b cf e5 64 18 04  76 31  05 00 00  00"
    );
    check(DataBlockEncoding::Prefix, ctx, &cells, &want);
}

/// Corrupt payloads report the block offset, the encoding and the payload position.
#[test]
fn corrupt_payloads_name_where() {
    let err = |e: DataBlockEncoding, payload: Vec<u8>| -> String {
        let mut dec = match new_decoder(e.block_type(), payload, CTX, 8192) {
            Ok(d) => d,
            Err(err) => return err.to_string(),
        };
        loop {
            match dec.advance() {
                Ok(true) => {}
                Ok(false) => panic!("{} decoded without error", e.name()),
                Err(err) => return err.to_string(),
            }
        }
    };
    // PREFIX cell 2 cut short: 1 of its 10 key bytes present.
    let mut p = spaced_hex(&format!(
        "00 02 00 00 00 5e 13 02 00 {KEY1} 76 31 00 00 0a 02 09 62"
    ));
    assert_eq!(
        err(DataBlockEncoding::Prefix, p.clone()),
        "corrupt encoded data block at offset 8192: PREFIX cell at payload byte 32: \
         truncated cell record at offset 35: needed 10 bytes, 1 available"
    );
    // A common prefix longer than the previous key.
    p.truncate(32);
    p.extend(spaced_hex("01 00 30 00"));
    assert_eq!(
        err(DataBlockEncoding::Prefix, p),
        "corrupt encoded data block at offset 8192: PREFIX cell at payload byte 32: \
         corrupt cell record at offset 32: common prefix 48 is longer than the previous key (19 bytes)"
    );
    // The stated unencoded size must match the cells.
    let p = spaced_hex(&format!("00 04 00 00 00 21 00 13 02 00 {KEY1} 76 31 00 00"));
    assert_eq!(
        err(DataBlockEncoding::FastDiff, p),
        "corrupt encoded data block at offset 8192: FAST_DIFF block states 33 unencoded bytes but its cells take 32"
    );
    // ROW_INDEX_V1 whose row count does not fit its trailer.
    assert_eq!(
        err(DataBlockEncoding::RowIndexV1, spaced_hex("00 07 00 00 00 05 00 00 00 00")),
        "corrupt encoded data block at offset 8192: ROW_INDEX_V1: 5 row offsets do not fit between \
         the cell section (0 bytes) and the payload end (10 bytes)"
    );
}
