//! Encoding records with a bound mapping (`formats/import.md` §"Rejected records",
//! `formats/schema.md` §"Import mapping", §"Changes from input"): [`encode_batch`] runs a
//! batch in parallel slices; each record gives its row key, its cells in HBase order with
//! values, timestamps and TTL tags, its index cells, or, for an `[operation]` delete, its
//! delete markers; with `[explode]`, one record per list item. Every cell is checked with
//! `check_mutation`, and a record that cannot be encoded is rejected whole.

use rayon::prelude::*;

use crate::error::quote;
use crate::mapping::rowkey::RowkeyEncoder;
use crate::mapping::value::encode_value;
use crate::source::Batch;
use hfkit_format::bytes::extend_short;
use hfkit_format::cell::{check_mutation, CellType, MAX_ROW_LEN};
use hfkit_table::ValueType;

use super::bound::{refused_cell, Bound, BoundDelete, BoundOperation};
use super::encoded::{ttl_tag, Encoded, EncodedCell};
use crate::error::{CellPart, Rejection};
use crate::mapping::rowkey::FieldSource;

/// Field slices in the table a column batch's rows are encoded from (16 bytes each: 64 KiB,
/// within a core's L2 cache).
const FIELD_TABLE_SLOTS: usize = 4096;

/// Encodes a batch in parallel slices into `out` (one [`Encoded`] per slice, in input order;
/// its buffers are reused from the previous batch, so a steady import allocates nothing here).
pub(crate) fn encode_batch(batch: &Batch, bound: &Bound, out: &mut Vec<Encoded>) {
    let n = batch.len();
    let threads = rayon::current_num_threads().max(1);
    let chunk = n.div_ceil(threads * 4).max(256);
    let slices = n.div_ceil(chunk);
    out.resize_with(slices, Encoded::default);
    out.truncate(slices);
    out.par_iter_mut().enumerate().for_each(|(k, out)| {
        let start = k * chunk;
        let end = (start + chunk).min(n);
        let mut enc = bound.encoder.clone();
        let mut ix_enc: Vec<RowkeyEncoder> =
            bound.indexes.iter().map(|ix| ix.encoder.clone()).collect();
        out.reset();
        let mut item = csv::ByteRecord::new();
        let mut rec = csv::ByteRecord::new();
        let columns = batch.columns.as_ref().filter(|c| c.width() > 0);
        if let (Some(cols), None) = (columns, &bound.explode) {
            // The fields read where they are (no record built), a run of rows at a time
            // through a table of their slices small enough to stay in the CPU's cache.
            let width = cols.width();
            let run = (FIELD_TABLE_SLOTS / width).max(1);
            let mut table = Vec::with_capacity(run * width);
            for from in (start..end).step_by(run) {
                let to = (from + run).min(end);
                cols.fill_rows(from..to, &mut table);
                for (i, fields) in (from..to).zip(table.chunks_exact(width)) {
                    encode_record(fields, i, &mut enc, &mut ix_enc, bound, out);
                }
            }
            return;
        }
        for i in start..end {
            let rec = match &batch.columns {
                // The fields as a record ([explode] takes one).
                Some(cols) => {
                    cols.record(i, &mut rec);
                    &rec
                }
                None => &batch.records[i],
            };
            match &bound.explode {
                None => encode_record(rec, i, &mut enc, &mut ix_enc, bound, out),
                Some(x) => encode_exploded(rec, i, x, &mut item, &mut enc, &mut ix_enc, bound, out),
            }
        }
    });
}

fn encode_record<R: FieldSource + ?Sized>(
    rec: &R,
    index: usize,
    enc: &mut RowkeyEncoder,
    ix_enc: &mut [RowkeyEncoder],
    bound: &Bound,
    out: &mut Encoded,
) {
    let arena_at = out.arena.len();
    let cells_at = out.cells.len();
    let reject = |out: &mut Encoded, reason: Rejection| {
        out.arena.truncate(arena_at);
        out.cells.truncate(cells_at);
        out.rejected.push((index, reason));
    };
    if let Err(e) = enc.encode(rec, &mut out.arena) {
        reject(out, Rejection::RowKey(e));
        return;
    }
    let key_len = out.arena.len() - arena_at;
    if key_len > MAX_ROW_LEN {
        let too_long = Rejection::RowKeyTooLong {
            len: key_len,
            max: MAX_ROW_LEN,
        };
        reject(out, too_long);
        return;
    }
    let row = (arena_at as u32, key_len as u32);
    if let Some(op) = &bound.operation {
        let value = rec.field(op.column).unwrap_or_default();
        if !op.put.iter().any(|p| p.as_slice() == value) {
            let Some((_, delete)) = op.deletes.iter().find(|(d, _)| d.as_slice() == value) else {
                let reason = Rejection::Operation {
                    field: op.field.clone(),
                    value: quote(value),
                    known: op.known(),
                };
                reject(out, reason);
                return;
            };
            if let Err(reason) = encode_delete(rec, delete, op, bound, row, out) {
                reject(out, reason);
                return;
            }
            key_stats(out, arena_at, key_len);
            return;
        }
    }
    for c in &bound.columns {
        let Some(v) = rec.field(c.column) else {
            let column = c.source.clone();
            reject(out, Rejection::MissingColumn { column });
            return;
        };
        if v.is_empty() {
            continue; // an empty or null field writes no cell
        }
        let ts = match c.timestamp.of(rec) {
            Ok(t) => t,
            Err(reason) => {
                reject(out, reason);
                return;
            }
        };
        let q_at = out.arena.len();
        if let Err(reason) = c.push_qualifier(rec, &mut out.arena) {
            reject(out, reason);
            return;
        }
        let q_len = out.arena.len() - q_at;
        let v_at = out.arena.len();
        if c.value_type == ValueType::String {
            extend_short(&mut out.arena, v); // the common case, without the call
        } else if let Err(e) = encode_value(c.value_type, &c.source, v, &mut out.arena) {
            reject(out, Rejection::Value(e));
            return;
        }
        let v_len = out.arena.len() - v_at;
        let t_at = out.arena.len();
        match c.ttl.as_ref().map(|t| t.of(rec)) {
            None | Some(Ok(None)) => {}
            Some(Ok(Some(ms))) => out.arena.extend_from_slice(&ttl_tag(ms)),
            Some(Err(reason)) => {
                reject(out, reason);
                return;
            }
        }
        let t_len = out.arena.len() - t_at;
        if let Err(limit) = check_mutation(key_len, c.family_len, q_len, v_len, t_len, ts) {
            let value = CellPart::Column(c.source.clone());
            reject(out, refused_cell(limit, rec, &c.timestamp, value));
            return;
        }
        out.cells.push(EncodedCell {
            family: c.family,
            row,
            qualifier: (q_at as u32, q_len as u32),
            timestamp: ts,
            cell_type: CellType::Put,
            value: (v_at as u32, v_len as u32),
            tags: (t_at as u32, t_len as u32),
        });
    }
    // Index cells: only for a row that exists (wrote a cell) and whose index fields are all
    // present; the value is the main row key.
    if out.cells.len() > cells_at {
        for (ix, ix_enc) in bound.indexes.iter().zip(ix_enc.iter_mut()) {
            if ix
                .fields
                .iter()
                .any(|&c| rec.field(c).is_none_or(<[u8]>::is_empty))
            {
                continue;
            }
            let k_at = out.arena.len();
            if let Err(e) = ix_enc.encode(rec, &mut out.arena) {
                reject(out, ix.rejection(Rejection::RowKey(e)));
                return;
            }
            let k_len = out.arena.len() - k_at;
            let ts = match ix.timestamp.of(rec) {
                Ok(t) => t,
                Err(reason) => {
                    reject(out, ix.rejection(reason));
                    return;
                }
            };
            let q_len = ix.qualifier.len();
            if let Err(limit) = check_mutation(k_len, ix.family_len, q_len, key_len, 0, ts) {
                let reason = refused_cell(limit, rec, &ix.timestamp, CellPart::Value);
                reject(out, ix.rejection(reason));
                return;
            }
            let q_at = out.arena.len();
            out.arena.extend_from_slice(&ix.qualifier);
            out.cells.push(EncodedCell {
                family: ix.family,
                row: (k_at as u32, k_len as u32),
                qualifier: (q_at as u32, ix.qualifier.len() as u32),
                timestamp: ts,
                cell_type: CellType::Put,
                value: row,
                tags: (0, 0),
            });
        }
    }
    key_stats(out, arena_at, key_len);
}

/// An `[explode]` record: one record per item of its list field (the field replaced by the
/// item; an empty field is the record as it is), each encoded by [`encode_record`]. An item
/// that is rejected rejects the record: the cells of its earlier items are removed.
#[allow(clippy::too_many_arguments)]
fn encode_exploded(
    rec: &csv::ByteRecord,
    index: usize,
    (column, field, delimiter): &(usize, String, Vec<u8>),
    item: &mut csv::ByteRecord,
    enc: &mut RowkeyEncoder,
    ix_enc: &mut [RowkeyEncoder],
    bound: &Bound,
    out: &mut Encoded,
) {
    let list = rec.get(*column).unwrap_or_default();
    if list.is_empty() {
        encode_record(rec, index, enc, ix_enc, bound, out);
        return;
    }
    let (arena_at, cells_at, rejected_at) = (out.arena.len(), out.cells.len(), out.rejected.len());
    let (keys, key_len_sum, ascending) = (out.keys, out.key_len_sum, out.ascending);
    let mut rest = list;
    let mut n = 0;
    loop {
        let (piece, next) = match find_bytes(rest, delimiter) {
            Some(at) => (&rest[..at], Some(&rest[at + delimiter.len()..])),
            None => (rest, None),
        };
        n += 1;
        item.clear();
        for (j, f) in rec.iter().enumerate() {
            item.push_field(if j == *column { piece } else { f });
        }
        encode_record(item, index, enc, ix_enc, bound, out);
        if out.rejected.len() > rejected_at {
            let reason = out.rejected.pop().map(|(_, r)| r);
            out.arena.truncate(arena_at);
            out.cells.truncate(cells_at);
            out.rejected.truncate(rejected_at);
            (out.keys, out.key_len_sum, out.ascending) = (keys, key_len_sum, ascending);
            if let Some(reason) = reason {
                out.rejected.push((
                    index,
                    Rejection::Item {
                        field: field.clone(),
                        item: n,
                        reason: Box::new(reason),
                    },
                ));
            }
            return;
        }
        match next {
            Some(r) => rest = r,
            None => return,
        }
    }
}

/// Where `needle` (not empty) first occurs in `hay`.
fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The delete markers of a record whose operation value is a delete (at the operation
/// timestamp, with empty values), in HBase order: by family, then qualifier.
fn encode_delete<R: FieldSource + ?Sized>(
    rec: &R,
    delete: &BoundDelete,
    op: &BoundOperation,
    bound: &Bound,
    row: (u32, u32),
    out: &mut Encoded,
) -> Result<(), Rejection> {
    let ts = op.timestamp.of(rec)?;
    let key_len = row.1 as usize;
    let marker = |out: &mut Encoded, family: u8, family_len: usize, q: &[u8], t: CellType| {
        if let Err(limit) = check_mutation(key_len, family_len, q.len(), 0, 0, ts) {
            let value = CellPart::Column(op.field.clone());
            return Err(refused_cell(limit, rec, &op.timestamp, value));
        }
        let q_at = out.arena.len();
        out.arena.extend_from_slice(q);
        out.cells.push(EncodedCell {
            family,
            row,
            qualifier: (q_at as u32, q.len() as u32),
            timestamp: ts,
            cell_type: t,
            value: (0, 0),
            tags: (0, 0),
        });
        Ok(())
    };
    match delete {
        BoundDelete::Families(families) => {
            for &(f, len) in families {
                marker(out, f, len, b"", CellType::DeleteFamily)?;
            }
        }
        BoundDelete::Cells(t, cells) => {
            for (f, len, q) in cells {
                marker(out, *f, *len, q, *t)?;
            }
        }
        BoundDelete::FilledColumns(t) => {
            // Fixed qualifiers are in HBase order (equal cells are neighbours); a template's
            // come from the record, and the sorter orders them.
            let mut last: Option<(u8, Vec<u8>)> = None;
            let mut q = Vec::new();
            for c in &bound.columns {
                if rec.field(c.column).is_none_or(<[u8]>::is_empty) {
                    continue;
                }
                q.clear();
                c.push_qualifier(rec, &mut q)?;
                if last
                    .as_ref()
                    .is_some_and(|(f, lq)| *f == c.family && *lq == q)
                {
                    continue;
                }
                marker(out, c.family, c.family_len, &q, *t)?;
                last = Some((c.family, q.clone()));
            }
        }
    }
    Ok(())
}

/// Counts an encoded record's main row key (its length, and whether it arrived in order).
fn key_stats(out: &mut Encoded, arena_at: usize, key_len: usize) {
    out.keys += 1;
    out.key_len_sum += key_len as u64;
    out.key_len_min = out.key_len_min.min(key_len);
    out.key_len_max = out.key_len_max.max(key_len);
    let key = &out.arena[arena_at..arena_at + key_len];
    if out.keys == 1 {
        out.first_key.clear();
        out.first_key.extend_from_slice(key);
    } else if key >= out.last_key.as_slice() {
        out.ascending += 1;
    }
    out.last_key.clear();
    out.last_key
        .extend_from_slice(&out.arena[arena_at..arena_at + key_len]);
}
