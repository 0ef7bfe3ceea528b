//! Property tests for every encoding: round trip, seek, and robustness against arbitrary or
//! mutated payloads.

use std::cmp::Ordering;

use proptest::prelude::*;

use super::{new_decoder, new_encoder, CellDecoder, DataBlockEncoding, EncodingContext};
use crate::block::BlockType;
use crate::cell::{compare_cells, compare_keys, Cell, CellType, CellTypeOwned, KeyView};

const ENCODINGS: [DataBlockEncoding; 5] = DataBlockEncoding::ALL;

fn arb_bytes(alphabet: &'static [u8], max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(alphabet), 0..=max)
}

fn arb_row() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => arb_bytes(b"ab", 4),
        1 => (0usize..600, any::<u8>()).prop_map(|(n, b)| {
            let mut r = vec![b'r'; n];
            if let Some(last) = r.last_mut() {
                *last = b;
            }
            r
        }),
    ]
}

fn arb_timestamp() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => 0i64..20,
        2 => any::<i64>(),
        1 => prop::sample::select(vec![i64::MIN, i64::MAX, -1, 0, 1_700_000_000_000, 255, 256, -256]),
        1 => 1_700_000_000_000i64..1_700_000_100_000,
    ]
}

fn arb_tags() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => Just(Vec::new()),
        1 => prop::collection::vec((1u8..10, arb_bytes(b"xyz", 5)), 1..4).prop_map(|tags| {
            let mut out = Vec::new();
            for (t, v) in tags {
                out.extend_from_slice(&((v.len() + 1) as u16).to_be_bytes());
                out.push(t);
                out.extend_from_slice(&v);
            }
            out
        }),
    ]
}

/// A cell of `family` (any type, tags or not, any sequence id); shared with the writer's tests.
pub(crate) fn arb_cell(family: &'static [u8]) -> impl Strategy<Value = Cell> {
    (
        arb_row(),
        arb_bytes(b"qr", 3),
        arb_timestamp(),
        prop::sample::select(CellType::ALL.to_vec()),
        prop_oneof![2 => arb_bytes(b"v", 2), 1 => arb_bytes(b"vw", 40)],
        arb_tags(),
        prop_oneof![3 => Just(0u64), 1 => any::<u64>().prop_map(|s| s >> 1)],
    )
        .prop_map(move |(row, qualifier, timestamp, t, value, tags, seq_id)| {
            // A Minimum-type key with empty family and qualifier is HBase's synthetic
            // "last on row" search key; the comparator is not a total order over two of them.
            let t = if t == CellType::Minimum && family.is_empty() && qualifier.is_empty() {
                CellType::Put
            } else {
                t
            };
            Cell {
                row,
                family: family.to_vec(),
                qualifier,
                timestamp,
                cell_type: CellTypeOwned(t),
                value,
                tags,
                seq_id,
            }
        })
}

/// Sorted cells of one family, cut into blocks.
fn arb_blocks() -> impl Strategy<Value = Vec<Vec<Cell>>> {
    (
        prop::sample::select(vec![&b"cf"[..], &b""[..], &b"family"[..]]),
        1usize..40,
    )
        .prop_flat_map(|(family, per_block)| {
            (
                prop::collection::vec(arb_cell(family), 0..80),
                Just(per_block),
            )
        })
        .prop_map(|(mut cells, per_block)| {
            cells.sort_by(|a, b| {
                compare_cells(&a.as_ref(), &b.as_ref()).then(b.seq_id.cmp(&a.seq_id))
            });
            cells.chunks(per_block).map(|c| c.to_vec()).collect()
        })
}

fn arb_ctx() -> impl Strategy<Value = EncodingContext> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(include_tags, include_mvcc, compress_tags)| EncodingContext {
            include_tags,
            include_mvcc,
            compress_tags,
        },
    )
}

/// What a file with `ctx` keeps of a cell.
fn stored(ctx: &EncodingContext, c: &Cell) -> Cell {
    let mut c = c.clone();
    if !ctx.include_tags {
        c.tags.clear();
    }
    if !ctx.include_mvcc {
        c.seq_id = 0;
    }
    c
}

fn encode_block(encoding: DataBlockEncoding, ctx: EncodingContext, cells: &[Cell]) -> Vec<u8> {
    let mut enc = new_encoder(encoding, ctx).unwrap();
    let mut out = Vec::new();
    enc.start_block(&mut out);
    let mut unencoded = 0;
    for c in cells {
        enc.encode(&c.as_ref(), &mut out).unwrap();
        unencoded += ctx.unencoded_size(&c.as_ref());
    }
    enc.finish_block(&mut out);
    assert_eq!(enc.unencoded_bytes(), unencoded);
    out
}

fn decoder(
    encoding: DataBlockEncoding,
    payload: Vec<u8>,
    ctx: EncodingContext,
) -> Box<dyn CellDecoder> {
    Box::new(new_decoder(encoding.block_type(), payload, ctx, 0).unwrap())
}

fn target_key(row: &[u8], family: &[u8], qualifier: &[u8], ts: i64, t: u8) -> Vec<u8> {
    KeyView {
        row,
        family,
        qualifier,
        timestamp: ts,
        type_code: t,
    }
    .to_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn round_trip_and_seek(
        blocks in arb_blocks(),
        ctx in arb_ctx(),
        targets in prop::collection::vec((arb_row(), arb_bytes(b"qr", 3), arb_timestamp(), prop::sample::select(CellType::ALL.to_vec())), 1..6),
    ) {
        for encoding in ENCODINGS {
            let mut enc = new_encoder(encoding, ctx).unwrap();
            // one encoder reused across blocks, as the writer does
            for cells in &blocks {
                let mut payload = Vec::new();
                enc.start_block(&mut payload);
                for c in cells {
                    enc.encode(&c.as_ref(), &mut payload).unwrap();
                }
                enc.finish_block(&mut payload);
                prop_assert_eq!(&payload, &encode_block(encoding, ctx, cells));
                let expected: Vec<Cell> = cells.iter().map(|c| stored(&ctx, c)).collect();
                let mut dec = decoder(encoding, payload, ctx);
                for pass in 0..2 {
                    let mut got = Vec::new();
                    while dec.advance().unwrap() {
                        got.push(dec.cell().to_owned());
                    }
                    prop_assert_eq!(&got, &expected, "{} pass {}", encoding.name(), pass);
                    dec.rewind();
                }
                // seek to existing keys and to random keys
                let family = cells.first().map(|c| c.family.clone()).unwrap_or_default();
                let mut keys: Vec<Vec<u8>> = cells.iter().step_by(3).map(|c| c.as_ref().key()).collect();
                for (row, q, ts, t) in &targets {
                    keys.push(target_key(row, &family, q, *ts, t.code()));
                }
                for key in keys {
                    let target = KeyView::parse(&key).unwrap();
                    let want = expected
                        .iter()
                        .find(|c| compare_keys(&KeyView::of(&c.as_ref()), &target) != Ordering::Less);
                    let found = dec.seek(&target).unwrap();
                    prop_assert_eq!(found, want.is_some(), "{}", encoding.name());
                    if let Some(w) = want {
                        prop_assert_eq!(&dec.cell().to_owned(), w, "{}", encoding.name());
                        // the cursor continues from the sought cell
                        let idx = expected.iter().position(|c| std::ptr::eq(c, w)).unwrap();
                        if idx + 1 < expected.len() {
                            prop_assert!(dec.advance().unwrap());
                            prop_assert_eq!(&dec.cell().to_owned(), &expected[idx + 1]);
                        }
                    } else {
                        prop_assert!(!dec.advance().unwrap());
                    }
                }
            }
        }
    }

    #[test]
    fn arbitrary_payloads_are_errors_not_panics(
        encoding in prop::sample::select(ENCODINGS[1..].to_vec()),
        ctx in arb_ctx(),
        body in prop::collection::vec(any::<u8>(), 0..300),
        target in (arb_row(), arb_bytes(b"qr", 3), arb_timestamp()),
    ) {
        let mut payload = encoding.id().to_be_bytes().to_vec();
        payload.extend_from_slice(&body);
        exercise(encoding, payload, ctx, &target);
    }

    #[test]
    fn mutated_payloads_are_errors_not_panics(
        blocks in arb_blocks(),
        ctx in arb_ctx(),
        encoding in prop::sample::select(ENCODINGS[1..].to_vec()),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        target in (arb_row(), arb_bytes(b"qr", 3), arb_timestamp()),
    ) {
        let Some(cells) = blocks.first() else { return Ok(()) };
        let mut payload = encode_block(encoding, ctx, cells);
        for (i, b) in flips {
            let i = i.index(payload.len());
            payload[i] ^= b;
        }
        if cut.index(4) == 0 {
            let n = cut.index(payload.len() + 1);
            payload.truncate(n);
        }
        exercise(encoding, payload, ctx, &target);
    }
}

/// Decodes everything and seeks; any result but a panic is fine.
fn exercise(
    encoding: DataBlockEncoding,
    payload: Vec<u8>,
    ctx: EncodingContext,
    target: &(Vec<u8>, Vec<u8>, i64),
) {
    let _ = encoding;
    let Ok(mut dec) = new_decoder(BlockType::EncodedData, payload, ctx, 4096) else {
        return;
    };
    for _ in 0..10_000 {
        match dec.advance() {
            Ok(true) => {
                let c = dec.cell();
                let _ = (c.row.len(), c.value.len(), c.tags.len());
            }
            _ => break,
        }
    }
    let key = target_key(&target.0, b"cf", &target.1, target.2, CellType::Put.code());
    let _ = dec.seek(&KeyView::parse(&key).unwrap());
    let _ = dec.advance();
    dec.rewind();
    let _ = dec.advance();
}

/// Sorted cells of one family, enough of them for a NONE block of many seek-index strides.
fn arb_long_block() -> impl Strategy<Value = Vec<Cell>> {
    prop::collection::vec(arb_cell(b"cf"), 0..400).prop_map(|mut cells| {
        cells.sort_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()).then(b.seq_id.cmp(&a.seq_id)));
        cells
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A seek in a shared NONE block starts from the block's seek index; one in an owned
    /// block steps from the start. Both end on the same cell, or fail alike, on whole blocks
    /// and on blocks with bytes changed.
    #[test]
    fn a_seek_from_the_seek_index_finds_what_a_seek_from_the_start_finds(
        cells in arb_long_block(),
        ctx in arb_ctx(),
        targets in prop::collection::vec((arb_row(), arb_bytes(b"qr", 3), arb_timestamp(), prop::sample::select(CellType::ALL.to_vec())), 1..8),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
    ) {
        use super::none::NoneDecoder;
        use super::{Payload, SharedBlock};
        let mut payload = encode_block(DataBlockEncoding::None, ctx, &cells);
        let damaged = !flips.is_empty() && !payload.is_empty();
        for (i, b) in &flips {
            if !payload.is_empty() {
                let i = i.index(payload.len());
                payload[i] ^= b;
            }
        }
        let shared = std::sync::Arc::new(SharedBlock::new(payload.clone()));
        let mut plain = NoneDecoder::new(payload, 0, ctx, 0);
        let mut indexed = NoneDecoder::new(Payload::Shared(shared.clone()), 0, ctx, 0);
        let mut keys: Vec<Vec<u8>> = cells.iter().step_by(7).map(|c| c.as_ref().key()).collect();
        for (row, q, ts, t) in &targets {
            keys.push(target_key(row, b"cf", q, *ts, t.code()));
        }
        for key in keys {
            let target = KeyView::parse(&key).unwrap();
            let a = plain.seek(&target).map(|found| found.then(|| plain.cell().to_owned()));
            let b = indexed.seek(&target).map(|found| found.then(|| indexed.cell().to_owned()));
            prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
            if matches!(a, Ok(Some(_))) {
                let a = plain.advance().map(|more| more.then(|| plain.cell().to_owned()));
                let b = indexed.advance().map(|more| more.then(|| indexed.cell().to_owned()));
                prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
            }
        }
        if !damaged && !cells.is_empty() {
            // The seeks above (two at least) made the index on the second.
            let index = shared.seek_index(|| None);
            prop_assert!(index.is_some());
            let index = index.unwrap();
            prop_assert_eq!(index.offsets.first(), Some(&0));
            prop_assert!(index.offsets.windows(2).all(|w| w[1] - w[0] >= super::SeekIndex::STRIDE as u32));
        }
    }
}
