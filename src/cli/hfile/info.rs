//! `hfkit hfile info`: the trailer, FileInfo decoded, index (first, last and mid key), Bloom
//! filters, block counts and cell statistics of one HFile, and HFilePrettyPrinter's `-s`
//! (size statistics), `-b` (index entries) and `-h` (block headers). Spec: formats/hfile.md.

use std::io::Write;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::open::{fail, open};
use crate::cli::error::{CliError, EXIT_OK};
use crate::format::block::BlockDecoder;
use crate::format::bloom::{BloomKind, BloomReader};
use crate::format::cell::KeyView;
use crate::format::fileinfo::{value_kind, ValueKind};
use crate::format::reader::HFileReader;
use crate::format::text::hex;
use crate::format::trailer::Trailer;

/// Statistics of a full scan (`hbase hfile -s`).
#[derive(Default)]
struct Stats {
    cells: u64,
    rows: u64,
    key_min: usize,
    key_max: usize,
    key_sum: u64,
    val_min: usize,
    val_max: usize,
    val_sum: u64,
    row_cells_max: u64,
    row_bytes_max: u64,
}

fn scan_stats(r: &HFileReader) -> crate::format::Result<Stats> {
    let mut st = Stats {
        key_min: usize::MAX,
        val_min: usize::MAX,
        ..Stats::default()
    };
    let mut s = r.scanner()?;
    let mut last_row: Vec<u8> = Vec::new();
    let (mut row_cells, mut row_bytes) = (0u64, 0u64);
    while let Some(c) = s.next()? {
        let k = c.key_len();
        let v = c.value.len();
        if st.cells == 0 || c.row != last_row.as_slice() {
            st.rows += 1;
            last_row.clear();
            last_row.extend_from_slice(c.row);
            row_cells = 0;
            row_bytes = 0;
        }
        row_cells += 1;
        row_bytes += (k + v) as u64;
        st.row_cells_max = st.row_cells_max.max(row_cells);
        st.row_bytes_max = st.row_bytes_max.max(row_bytes);
        st.cells += 1;
        st.key_min = st.key_min.min(k);
        st.key_max = st.key_max.max(k);
        st.key_sum += k as u64;
        st.val_min = st.val_min.min(v);
        st.val_max = st.val_max.max(v);
        st.val_sum += v as u64;
    }
    if st.cells == 0 {
        st.key_min = 0;
        st.val_min = 0;
    }
    Ok(st)
}

pub(super) fn key_text(key: &[u8]) -> String {
    match KeyView::parse(key) {
        Some(k) => format!(
            "{} {} {} {} {}",
            hex_or_dash(k.row),
            hex_or_dash(k.family),
            hex_or_dash(k.qualifier),
            k.timestamp,
            crate::format::cell::CellType::from_code(k.type_code)
                .map(|t| t.name().to_string())
                .unwrap_or_else(|| k.type_code.to_string())
        ),
        None => hex(key),
    }
}

fn hex_or_dash(b: &[u8]) -> String {
    if b.is_empty() {
        "-".into()
    } else {
        hex(b)
    }
}

fn file_info_value(key: &[u8], v: &[u8]) -> Value {
    let as_arr = |n: usize| -> Option<Vec<u8>> { (v.len() == n).then(|| v.to_vec()) };
    match value_kind(key) {
        ValueKind::I32 => as_arr(4).map(|b| json!(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))),
        ValueKind::I64 => as_arr(8).map(|b| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b);
            json!(i64::from_be_bytes(a))
        }),
        ValueKind::Bool => as_arr(1).map(|b| json!(b[0] != 0)),
        ValueKind::Str => std::str::from_utf8(v).ok().map(|s| json!(s)),
        ValueKind::Key => Some(json!(key_text(v))),
        ValueKind::TimeRange => as_arr(16).map(|b| {
            let mut x = [0u8; 8];
            let mut y = [0u8; 8];
            x.copy_from_slice(&b[..8]);
            y.copy_from_slice(&b[8..]);
            json!({"min": i64::from_be_bytes(x), "max": i64::from_be_bytes(y)})
        }),
        ValueKind::Bytes => None,
    }
    .unwrap_or_else(|| json!(hex(v)))
}

/// The optional parts of `hfile info`.
#[derive(Clone, Copy)]
pub(super) struct InfoParts {
    pub(super) stats: bool,
    pub(super) blocks: bool,
    pub(super) headers: bool,
}

/// min, max, mean, median, percentiles (nearest rank) and count of `v` (sorted here), as
/// HFilePrettyPrinter's -s lists them.
fn distribution(mut v: Vec<u64>) -> Value {
    v.sort_unstable();
    let n = v.len();
    if n == 0 {
        return json!({"count": 0});
    }
    let pct = |p: f64| v[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
    let mean = v.iter().sum::<u64>() as f64 / n as f64;
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64;
    json!({
        "min": v[0], "max": v[n - 1],
        "mean": (mean * 100.0).round() / 100.0,
        "stddev": (var.sqrt() * 100.0).round() / 100.0,
        "median": pct(0.5), "p75": pct(0.75), "p95": pct(0.95), "p98": pct(0.98),
        "p99": pct(0.99), "p99_9": pct(0.999), "count": n,
    })
}

/// HFilePrettyPrinter's -s over `r`: key length per row (its last cell's key), value length
/// per cell, row size in bytes (each cell's serialized KeyValue size) and in cells, and the
/// biggest row.
fn size_stats(r: &HFileReader) -> crate::format::Result<Value> {
    let (mut keys, mut values, mut row_bytes, mut row_cells) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut s = r.scanner()?;
    let mut row: Option<Vec<u8>> = None;
    let (mut bytes, mut cells, mut key) = (0u64, 0u64, 0u64);
    let mut biggest: (u64, Vec<u8>) = (0, Vec::new());
    let mut end_row = |row: &Option<Vec<u8>>, bytes: u64, cells: u64, key: u64| {
        if let Some(row) = row {
            row_bytes.push(bytes);
            row_cells.push(cells);
            keys.push(key);
            if bytes > biggest.0 {
                biggest = (bytes, row.clone());
            }
        }
    };
    while let Some(c) = s.next()? {
        if row.as_deref() != Some(c.row) {
            end_row(&row, bytes, cells, key);
            row = Some(c.row.to_vec());
            (bytes, cells) = (0, 0);
        }
        values.push(c.value.len() as u64);
        let tags = if c.tags.is_empty() {
            0
        } else {
            2 + c.tags.len() as u64
        };
        bytes += 8 + c.key_len() as u64 + c.value.len() as u64 + tags;
        cells += 1;
        key = c.key_len() as u64;
    }
    end_row(&row, bytes, cells, key);
    Ok(json!({
        "key_length": distribution(keys),
        "value_length": distribution(values),
        "row_size_bytes": distribution(row_bytes),
        "row_size_cells": distribution(row_cells),
        "biggest_row": crate::table::to_string_binary(&biggest.1),
    }))
}

/// Every data index entry, level by level from the root (HFilePrettyPrinter's -b).
fn index_listing(r: &HFileReader) -> crate::format::Result<Value> {
    let mut dec = r.block_decoder()?;
    let entry = |e: &crate::format::index::IndexEntry| json!({"offset": e.offset, "on_disk_size": e.on_disk_size, "key": key_text(&e.key)});
    let mut levels = vec![Value::Array(r.root_index().iter().map(entry).collect())];
    let mut current: Vec<crate::format::index::IndexEntry> = r.root_index().to_vec();
    for _ in 1..r.trailer().num_data_index_levels {
        let mut below = Vec::new();
        for e in &current {
            let mut payload = Vec::new();
            r.read_block_sized(
                &mut dec,
                e.offset,
                Some(u64::from(e.on_disk_size)),
                &mut payload,
            )?;
            below.extend(crate::format::index::parse_non_root(&payload, e.offset)?);
        }
        levels.push(Value::Array(below.iter().map(entry).collect()));
        current = below;
    }
    Ok(Value::Array(levels))
}

pub(super) fn info(
    file: &Path,
    as_json: bool,
    parts: InfoParts,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let r = open(file)?;
    let t = r.trailer();
    let mut counts: std::collections::BTreeMap<&'static str, u64> = Default::default();
    let mut headers = Vec::new();
    let bytes = r.bytes().map_err(|e| fail(file, e))?;
    let end = Trailer::offset_in(bytes.len() as u64);
    let mut at = 0u64;
    while at < end {
        let h = BlockDecoder::header_at(&bytes[..end as usize], at).map_err(|e| fail(file, e))?;
        *counts.entry(h.block_type.name()).or_default() += 1;
        if parts.headers {
            headers.push(json!({
                "offset": at,
                "type": h.block_type.name(),
                "on_disk_size_without_header": h.on_disk_size_without_header,
                "uncompressed_size_without_header": h.uncompressed_size_without_header,
                "prev_block_offset": h.prev_block_offset,
                "checksum_type": h.checksum_type.name(),
                "bytes_per_checksum": h.bytes_per_checksum,
                "on_disk_data_size_with_header": h.on_disk_data_size_with_header,
            }));
        }
        at += h.on_disk_size_with_header();
    }
    let first_key = r
        .scanner()
        .and_then(|mut s| Ok(s.next()?.map(|c| key_text(&c.key()))))
        .map_err(|e| fail(file, e))?;
    let mid_key = r
        .mid_key()
        .map_err(|e| fail(file, e))?
        .map(|k| key_text(&k));
    let st = scan_stats(&r).map_err(|e| fail(file, e))?;
    let mut fi = Map::new();
    for (k, v) in &r.file_info().entries {
        fi.insert(
            String::from_utf8_lossy(k).to_string(),
            file_info_value(k, v),
        );
    }
    let mean = |sum: u64| {
        if st.cells == 0 {
            0.0
        } else {
            sum as f64 / st.cells as f64
        }
    };
    let doc = json!({
        "file": file.display().to_string(),
        "file_size": r.file_len(),
        "trailer": {
            "major_version": t.major_version,
            "minor_version": t.minor_version,
            "file_info_offset": t.file_info_offset,
            "load_on_open_data_offset": t.load_on_open_data_offset,
            "uncompressed_data_index_size": t.uncompressed_data_index_size,
            "total_uncompressed_bytes": t.total_uncompressed_bytes,
            "data_index_count": t.data_index_count,
            "meta_index_count": t.meta_index_count,
            "entry_count": t.entry_count,
            "num_data_index_levels": t.num_data_index_levels,
            "first_data_block_offset": t.first_data_block_offset,
            "last_data_block_offset": t.last_data_block_offset,
            "comparator_class_name": t.comparator_class_name,
            "compression_codec": r.compression().name(),
        },
        "compression": r.compression().name(),
        "data_block_encoding": r.encoding().name(),
        "includes_tags": r.encoding_context().include_tags,
        "includes_mvcc": r.encoding_context().include_mvcc,
        "file_info": Value::Object(fi),
        "index": {
            "levels": t.num_data_index_levels,
            "root_entries": r.root_index().len(),
            "mid_key_metadata": r.mid_key_metadata().map(|m| json!({"leaf_offset": m.leaf_offset, "leaf_on_disk_size": m.leaf_on_disk_size, "index_in_leaf": m.index_in_leaf})),
            "mid_key": mid_key,
        },
        "first_key": first_key,
        "last_key": r.last_key().map(key_text),
        "blocks": counts,
        "bloom": {
            "general": r.general_bloom().map(bloom_json),
            "delete_family": r.delete_family_bloom().map(bloom_json),
        },
        "stats": {
            "cells": st.cells,
            "rows": st.rows,
            "key_len": {"min": st.key_min, "max": st.key_max, "mean": mean(st.key_sum)},
            "value_len": {"min": st.val_min, "max": st.val_max, "mean": mean(st.val_sum)},
            "row_cells_max": st.row_cells_max,
            "row_bytes_max": st.row_bytes_max,
        },
    });
    let mut doc = doc;
    if parts.stats {
        doc["size_stats"] = size_stats(&r).map_err(|e| fail(file, e))?;
    }
    if parts.blocks {
        doc["index_entries"] = index_listing(&r).map_err(|e| fail(file, e))?;
    }
    if parts.headers {
        doc["block_headers"] = Value::Array(headers);
    }
    if as_json {
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
    } else {
        print_flat(out, "", &doc)?;
    }
    Ok(EXIT_OK)
}

fn bloom_json(b: &BloomReader) -> Value {
    let m = b.meta();
    let kind = match b.kind() {
        BloomKind::General(t) => t.hbase_name().to_string(),
        BloomKind::DeleteFamily => "ROW (delete family)".to_string(),
    };
    json!({
        "type": kind,
        "version": m.version,
        "total_byte_size": m.total_byte_size,
        "hash_count": m.hash_count,
        "hash_type": format!("{:?}", m.hash_type),
        "key_count": m.key_count,
        "max_keys": m.max_keys,
        "num_chunks": m.num_chunks,
        "comparator": m.comparator,
    })
}

/// Prints a JSON document as `path.to.key: value` lines.
fn print_flat(out: &mut dyn Write, prefix: &str, v: &Value) -> std::io::Result<()> {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                print_flat(out, &p, x)?;
            }
            Ok(())
        }
        Value::String(s) => writeln!(out, "{prefix}: {s}"),
        other => writeln!(out, "{prefix}: {other}"),
    }
}
