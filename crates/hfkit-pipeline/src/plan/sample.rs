//! The plan's sample (`formats/import.md` §"Plan"): the first N records, or each record with a
//! deterministic probability, read through the import's own sources, rowkey encoders and cell
//! mapping; each row's key and cell count, and what the input's size says about the rest.

use std::path::Path;

use super::options::{PlanOptions, Sampling};
use crate::error::ImportError;
use crate::mapping::encode::{bind, encode_batch, slice, Bound, Compiled, KeyStats};
use crate::source::input::{open_input, InputFormat};
use crate::source::parquet as parquet_source;
use crate::source::{Batch, CsvSource};
use hfkit_table::{ImportMapping, TableSchema};

/// The encoded sample: each imported row's key and cell count; each index's keys.
#[derive(Default)]
pub(super) struct Sampled {
    pub(super) rows: Vec<(Vec<u8>, u32)>,
    pub(super) index_rows: Vec<Vec<Vec<u8>>>,
    pub(super) records: u64,
    pub(super) rejected: u64,
    pub(super) first_rejection: Option<String>,
    pub(super) records_read: u64,
    pub(super) whole_input: bool,
    pub(super) keys: KeyStats,
    pub(super) input_records: Option<(u64, &'static str)>,
}

/// SplitMix64: a record's deterministic coin for fraction sampling.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Reads the sample through the import's sources and encoders.
pub(super) fn draw_sample(
    schema: &TableSchema,
    mapping: &ImportMapping,
    compiled: &Compiled,
    opts: &PlanOptions,
) -> Result<Sampled, ImportError> {
    let families: Vec<&str> = schema.families.iter().map(|f| f.name.as_str()).collect();
    let n_main = families.len();
    let wanted = compiled.wanted_fields(mapping);
    let mut s = Sampled {
        index_rows: vec![Vec::new(); compiled.indexes.len()],
        ..Sampled::default()
    };
    // Input size: per file, (records read, whether read to the end, known record count or
    // bytes read of known total bytes).
    let mut estimate = Some(0f64);
    // Every record read; the count of records known exactly (read, or Parquet footers).
    let mut all_read = true;
    let mut exact = true;
    let mut csv_rate: Option<(u64, u64)> = None; // (records, bytes) of plain CSV read
    let mut header_bytes = 0u64; // of the last CSV file opened
    let mut unread: Vec<&Path> = Vec::new();
    let mut stopped = false;
    let limit = match opts.sampling {
        Sampling::FirstRows(n) => n as u64,
        Sampling::Fraction(_) => u64::MAX,
    };
    let mut batch = Batch::default();
    let mut chosen = Batch::default();
    for path in &opts.inputs {
        if stopped {
            unread.push(path);
            continue;
        }
        let mut file_records = 0u64;
        let mut at_end = true;
        // CSV is read here directly (for its byte position); Parquet through the import's
        // per-row-group readers.
        let (mut units, columns, mut csv) = match &opts.format {
            InputFormat::Csv(o) => {
                let src = CsvSource::open(path, o)?;
                header_bytes = src.bytes_read();
                let cols = src.columns().to_vec();
                (Vec::new(), cols, Some(src))
            }
            InputFormat::Parquet => {
                let (u, c) = open_input(path, &opts.format, &wanted, opts.batch_rows, false, None)?
                    .unwrap_or_default();
                (u, c, None)
            }
        };
        let bound = bind(compiled, mapping, &families, &columns, path, 0)?;
        let mut unit = 0;
        loop {
            let room = limit.saturating_sub(s.records_read);
            if room == 0 {
                at_end = false;
                stopped = true;
                break;
            }
            let want = opts
                .batch_rows
                .min(usize::try_from(room).unwrap_or(usize::MAX));
            let more = match csv.as_mut() {
                Some(src) => src.next_batch(&mut batch, want)?,
                None => match units.get_mut(unit) {
                    None => false,
                    Some(next) => {
                        if next(&mut batch)? {
                            true
                        } else {
                            unit += 1;
                            continue;
                        }
                    }
                },
            };
            if !more {
                break;
            }
            if batch.records.len() as u64 > room {
                // A Parquet batch past the limit: keep its first records only.
                batch.records.truncate(room as usize);
                batch.lines.truncate(room as usize);
                batch.row_groups.truncate(room as usize);
            }
            let first_ordinal = s.records_read;
            s.records_read += batch.records.len() as u64;
            file_records += batch.records.len() as u64;
            let b = match opts.sampling {
                Sampling::FirstRows(_) => &batch,
                Sampling::Fraction(f) => {
                    choose(&batch, &mut chosen, first_ordinal, f);
                    &chosen
                }
            };
            take(&mut s, b, &bound, n_main);
        }
        // What this file tells about the size of the input.
        if at_end {
            *estimate.get_or_insert(0.0) += file_records as f64;
            if let Some(src) = &csv {
                if !CsvSource::is_compressed(path) {
                    let r = csv_rate.get_or_insert((0, 0));
                    r.0 += file_records;
                    r.1 += src.bytes_read().saturating_sub(header_bytes);
                }
            }
        } else {
            all_read = false;
            match &csv {
                None => {
                    let n = parquet_source::row_count(path)?;
                    estimate = estimate.map(|e| e + n as f64);
                }
                Some(src) if !CsvSource::is_compressed(path) => {
                    exact = false;
                    // Records per byte past the header line, as read so far.
                    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
                    let size = size.saturating_sub(header_bytes);
                    let read = src.bytes_read().saturating_sub(header_bytes).max(1);
                    estimate =
                        estimate.map(|e| e + file_records as f64 * size as f64 / read as f64);
                    let r = csv_rate.get_or_insert((0, 0));
                    r.0 += file_records;
                    r.1 += read;
                }
                Some(_) => estimate = None,
            }
        }
    }
    for path in unread {
        all_read = false;
        if matches!(opts.format, InputFormat::Parquet) {
            let n = parquet_source::row_count(path)?;
            estimate = estimate.map(|e| e + n as f64);
        } else if CsvSource::is_compressed(path) {
            estimate = None;
        } else {
            exact = false;
            // As long a header as the last file read.
            let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            let size = size.saturating_sub(header_bytes);
            estimate = match csv_rate {
                Some((records, bytes)) if bytes > 0 => {
                    estimate.map(|e| e + size as f64 * records as f64 / bytes as f64)
                }
                _ => None,
            };
        }
    }
    s.whole_input = all_read && matches!(opts.sampling, Sampling::FirstRows(_));
    s.input_records =
        estimate.map(|e| (e.round() as u64, if exact { "exact" } else { "estimated" }));
    Ok(s)
}

/// The records of `batch` whose coin (by input ordinal) falls under `fraction`.
fn choose(batch: &Batch, chosen: &mut Batch, first_ordinal: u64, fraction: f64) {
    chosen.file.clone_from(&batch.file);
    chosen.records.clear();
    chosen.lines.clear();
    chosen.row_groups.clear();
    let threshold = (fraction * u64::MAX as f64) as u64;
    for (i, rec) in batch.records.iter().enumerate() {
        if fraction >= 1.0 || splitmix(first_ordinal + i as u64) <= threshold {
            chosen.records.push(rec.clone());
            if let Some(l) = batch.lines.get(i) {
                chosen.lines.push(*l);
            }
            if let Some(g) = batch.row_groups.get(i) {
                chosen.row_groups.push(*g);
            }
        }
    }
}

/// Encodes one batch of sampled records and keeps what the plan counts.
fn take(s: &mut Sampled, batch: &Batch, bound: &Bound, n_main: usize) {
    s.records += batch.records.len() as u64;
    let mut encoded = Vec::new();
    encode_batch(batch, bound, &mut encoded);
    for e in encoded {
        s.keys.add(&e);
        if let Some((i, reason)) = e.rejected.first() {
            if s.first_rejection.is_none() {
                s.first_rejection = Some(format!("{}: {reason}", batch.position(*i)));
            }
        }
        s.rejected += e.rejected.len() as u64;
        // A record's main cells share one row range; count rows by range.
        let mut last_row = None;
        for c in &e.cells {
            match usize::from(c.family).checked_sub(n_main) {
                None => {
                    if last_row == Some(c.row) {
                        if let Some(r) = s.rows.last_mut() {
                            r.1 += 1;
                        }
                    } else {
                        last_row = Some(c.row);
                        s.rows.push((slice(&e.arena, c.row).to_vec(), 1));
                    }
                }
                Some(i) => {
                    if let Some(keys) = s.index_rows.get_mut(i) {
                        keys.push(slice(&e.arena, c.row).to_vec());
                    }
                }
            }
        }
    }
}
