//! The regions of an import's tables and how its row keys spread over them: split points
//! from the schema's `[splits]`, or cut at the quantiles of a sample of the input's first row
//! keys for `sample = N` (`formats/schema.md` §"Splits"); and HBase's table-design warnings
//! (hot regions, keys arriving in increasing order, key length). Shared by the import and
//! `hfkit plan`.

use std::path::PathBuf;

use crate::error::ImportError;
use crate::mapping::encode::{Compiled, KeyStats, RecordFields};
use crate::mapping::rowkey::{RowkeyEncoder, RowkeySpec};
use crate::source::input::{open_input, InputFormat};
use crate::source::Batch;
use hfkit_table::{ImportMapping, Regions, SplitSpec, TableSchema};

/// Records sampled (from the start of the input) for `sample = N` splits.
pub const DEFAULT_SAMPLE_ROWS: usize = 100_000;

/// The regions of an import's tables: the main table's and each index table's (schema order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportRegions {
    pub main: Regions,
    pub indexes: Vec<Regions>,
}

/// The regions the schema's `[splits]` (and each `[index.splits]`) give. When one says
/// `sample = N`, the row keys of the first `sample_rows` records of `inputs` are sampled, as
/// the import samples them (`formats/schema.md` §"Splits").
pub fn import_regions(
    schema: &TableSchema,
    mapping: &ImportMapping,
    inputs: &[PathBuf],
    format: &InputFormat,
    sample_rows: usize,
) -> Result<ImportRegions, ImportError> {
    let compiled = Compiled::new(schema, mapping)?;
    let sampled = |s: &SplitSpec| matches!(s, SplitSpec::Sampled { .. });
    let sample =
        if sampled(&schema.splits) || mapping.indexes.iter().any(|ix| sampled(&ix.table.splits)) {
            Some(sample_keys(&compiled, inputs, format, sample_rows)?)
        } else {
            None
        };
    let main = schema
        .splits
        .regions(sample.as_ref().map(|s| s.main.as_slice()))?;
    let indexes = mapping
        .indexes
        .iter()
        .enumerate()
        .map(|(i, ix)| {
            ix.table
                .splits
                .regions(
                    sample
                        .as_ref()
                        .and_then(|s| s.indexes.get(i))
                        .map(Vec::as_slice),
                )
                .map_err(|e| ImportError::Invalid(format!("index {}: {e}", ix.full_name())))
        })
        .collect::<Result<_, _>>()?;
    Ok(ImportRegions { main, indexes })
}

/// Encoded row keys of the first `sample_rows` records, for sampled split points: the main
/// table's, and each index table's (of the records with all its index fields present).
pub(crate) struct KeySample {
    pub main: Vec<Vec<u8>>,
    pub indexes: Vec<Vec<Vec<u8>>>,
}

/// Samples the row keys of the first `sample_rows` records of `inputs` (in order), skipping
/// records whose key cannot be encoded.
pub(crate) fn sample_keys(
    compiled: &Compiled,
    inputs: &[PathBuf],
    format: &InputFormat,
    sample_rows: usize,
) -> Result<KeySample, ImportError> {
    let mut sample = KeySample {
        main: Vec::new(),
        indexes: vec![Vec::new(); compiled.indexes.len()],
    };
    let wanted = compiled.key_fields();
    let mut records = 0usize;
    'inputs: for path in inputs {
        let Some((units, columns)) = open_input(path, format, &wanted, 8192, false, None)? else {
            continue;
        };
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let compile = |spec: &RowkeySpec| {
            spec.compile(&names).map_err(|source| ImportError::Rowkey {
                context: path.display().to_string(),
                source,
            })
        };
        let mut enc = compile(&compiled.spec)?;
        let mut ix_enc: Vec<(RowkeyEncoder, Vec<usize>)> = Vec::new();
        for ix in &compiled.indexes {
            let e = compile(&ix.spec)?;
            let cols = ix
                .spec
                .fields()
                .iter()
                .filter_map(|f| names.iter().position(|n| n == f))
                .collect();
            ix_enc.push((e, cols));
        }
        let mut batch = Batch::default();
        for mut next in units {
            while next(&mut batch)? {
                for rec in &batch.records {
                    if records >= sample_rows {
                        break 'inputs;
                    }
                    records += 1;
                    let mut k = Vec::new();
                    if enc.encode(&RecordFields(rec), &mut k).is_ok() {
                        sample.main.push(k);
                    }
                    for ((e, cols), keys) in ix_enc.iter_mut().zip(&mut sample.indexes) {
                        if cols
                            .iter()
                            .any(|&c| rec.get(c).is_none_or(<[u8]>::is_empty))
                        {
                            continue;
                        }
                        let mut k = Vec::new();
                        if e.encode(&RecordFields(rec), &mut k).is_ok() {
                            keys.push(k);
                        }
                    }
                }
            }
        }
    }
    Ok(sample)
}

/// Fewest cells in all regions for a hot region to be worth a warning: in a handful of rows
/// any region is "more than twice the mean", and HBase would not notice.
pub(crate) const HOT_REGION_MIN_CELLS: f64 = 1000.0;

/// Regions holding more than twice the mean number of cells: `(start, end, cells)` each (no
/// warning below [`HOT_REGION_MIN_CELLS`] cells in all).
pub(crate) fn hot_region_warnings<'a>(
    prefix: &str,
    regions: impl Iterator<Item = (&'a str, &'a str, f64)>,
) -> Vec<String> {
    let regions: Vec<(&str, &str, f64)> = regions.collect();
    let total: f64 = regions.iter().map(|r| r.2).sum();
    let mut w = Vec::new();
    if regions.len() > 1 && total >= HOT_REGION_MIN_CELLS {
        let mean = total / regions.len() as f64;
        for (start, end, cells) in &regions {
            if *cells > 2.0 * mean {
                w.push(format!(
                    "{prefix}region [{start}, {end}) holds {cells:.0} cells, more than twice the mean {mean:.0}: a hot region; consider salting the row key or different split points",
                ));
            }
        }
    }
    w
}

/// Keys arriving in increasing order (with `ascending`: `hfkit plan`, which judges a key
/// design; an import does not, as sorted input is what a bulk load wants and a table's own
/// row export always is); mean key length outside HBase's advice.
pub(crate) fn key_warnings(stats: &KeyStats, ascending_too: bool) -> Vec<String> {
    let (keys, ascending, mean_len) = (stats.keys, stats.ascending, stats.mean_len());
    let mut w = Vec::new();
    if ascending_too && keys > 1000 && ascending as f64 >= 0.99 * (keys - 1) as f64 {
        w.push("row keys arrive in increasing order: if live writes to HBase come in this order too, they all hit one region at a time; consider a salt or hash prefix (a bulk load of sorted input is fine)".into());
    }
    if keys > 0 && !(10.0..=100.0).contains(&mean_len) {
        w.push(format!(
            "mean row key length is {mean_len:.1} bytes; HBase practice keeps row keys between 10 and 100 bytes",
        ));
    }
    w
}
