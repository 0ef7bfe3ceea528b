//! Shared body of the decoder fuzz targets.
//!
//! Input: one context byte (bit 0 include tags, bit 1 include MVCC, bit 2 compress tags), then
//! the payload after the encoding id (the target prepends its encoding's id so the fuzzer does
//! not spend its time on the id check). The target decodes every cell, then seeks to a key
//! taken from the decoded cells and to one made from the input's last bytes.

use hfkit::format::block::BlockType;
use hfkit::format::cell::{first_on_row, KeyView};
use hfkit::format::encoding::{new_decoder, DataBlockEncoding, EncodingContext};

pub fn run(encoding: DataBlockEncoding, data: &[u8]) {
    let Some((&flags, body)) = data.split_first() else {
        return;
    };
    let ctx = EncodingContext {
        include_tags: flags & 1 != 0,
        include_mvcc: flags & 2 != 0,
        compress_tags: flags & 4 != 0,
    };
    let mut payload = encoding.id().to_be_bytes().to_vec();
    payload.extend_from_slice(body);
    let Ok(mut dec) = new_decoder(BlockType::EncodedData, payload, ctx, 0) else {
        return;
    };
    let mut middle_key = None;
    let mut n = 0usize;
    while let Ok(true) = dec.advance() {
        let c = dec.cell();
        assert_eq!(
            c.row.len() + c.family.len() + c.qualifier.len() + 12,
            dec.key().len()
        );
        n += 1;
        if n == 3 {
            middle_key = Some(dec.key().to_vec());
        }
    }
    let tail = &body[body.len().saturating_sub(4)..];
    for key in [middle_key, Some(first_on_row(tail))].into_iter().flatten() {
        if let Some(target) = KeyView::parse(&key) {
            if let Ok(true) = dec.seek(&target) {
                let _ = dec.advance();
            }
        }
    }
}
