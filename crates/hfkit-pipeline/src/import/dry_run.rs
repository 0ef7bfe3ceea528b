//! `hfkit import --dry-run`: every record read and encoded by the import's own code (sources,
//! rowkey encoders, column mapping, timestamps, operations, TTLs, the cell checks), and counted
//! per table, region and family, with every record the import would reject; nothing is
//! written. Prose: `formats/import.md` §"Dry run".
//!
//! ```text
//! per cell:    table (main or index), region (of the split keys given), family:
//!              cells, delete markers, bytes (row + family + qualifier + value + tags)
//! per record:  rejected -> "position: reason", every one, in input order
//! ```
//! Counts are before duplicates are dropped (the sort that finds them is not run).

use std::path::PathBuf;

use serde::Serialize;

use crate::error::ImportError;
use crate::mapping::encode::{bind, encode_batch, slice, Compiled};
use crate::source::input::{open_input, InputFormat, DEFAULT_BATCH_ROWS};
use crate::source::Batch;
use hfkit_format::cell::CellType;
use hfkit_table::{to_string_binary, ImportMapping, Regions, TableSchema};

/// What an import would write into one region and family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DryRunStore {
    pub family: String,
    pub cells: u64,
    /// Of `cells`, delete markers (`[operation]` deletes).
    pub delete_markers: u64,
    /// Row, family, qualifier, value and tag bytes of the cells.
    pub bytes: u64,
}

/// One region of a table: its key range (`Bytes.toStringBinary`) and what each family gets.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DryRunRegion {
    pub start_key: String,
    pub end_key: String,
    pub families: Vec<DryRunStore>,
}

/// One table: the main one or an index table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DryRunTable {
    pub table: String,
    pub regions: Vec<DryRunRegion>,
}

/// The result of a dry run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DryRunReport {
    pub records_read: u64,
    pub records_rejected: u64,
    /// Every rejected record: `position: reason`, in input order.
    pub rejected: Vec<String>,
    pub tables: Vec<DryRunTable>,
}

/// Reads and encodes every record of `inputs` as an import into tables with the regions given
/// (`regions[0]` the main table's, then each index table's), writing nothing.
pub fn dry_run(
    schema: &TableSchema,
    mapping: &ImportMapping,
    inputs: &[PathBuf],
    format: &InputFormat,
    regions: &[Regions],
    import_time: i64,
) -> Result<DryRunReport, ImportError> {
    let compiled = Compiled::new(schema, mapping)?;
    let families: Vec<&str> = schema.families.iter().map(|f| f.name.as_str()).collect();
    let n_main = families.len();
    // Per sorter family: (table number, family name within it).
    let mut family_of: Vec<(usize, String)> = families.iter().map(|f| (0, f.to_string())).collect();
    let mut tables = vec![(
        schema.full_name(),
        families.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
    )];
    for (i, ix) in compiled.indexes.iter().enumerate() {
        let f = ix.schema.family().name.clone();
        family_of.push((i + 1, f.clone()));
        tables.push((ix.schema.full_name(), vec![f]));
    }
    if regions.len() != tables.len() {
        return Err(ImportError::Invalid(format!(
            "internal: {} region sets for {} tables",
            regions.len(),
            tables.len()
        )));
    }
    // counts[table][region][family within the table]
    let mut counts: Vec<Vec<Vec<DryRunStore>>> = tables
        .iter()
        .zip(regions)
        .map(|((_, fams), r)| {
            (0..r.len())
                .map(|_| {
                    fams.iter()
                        .map(|f| DryRunStore {
                            family: f.clone(),
                            ..DryRunStore::default()
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    let wanted = compiled.wanted_fields(mapping);
    let mut records_read = 0u64;
    let mut rejected = Vec::new();
    let mut batch = Batch::default();
    let mut encoded = Vec::new();
    for path in inputs {
        // As the import: Parquet records encoded where their fields are, column by column
        // (an `[explode]` builds a record per list item, from records).
        let columnar = mapping.explode.is_none();
        let Some((mut units, columns)) =
            open_input(path, format, &wanted, DEFAULT_BATCH_ROWS, columnar, None)?
        else {
            continue;
        };
        let bound = bind(&compiled, mapping, &families, &columns, path, import_time)?;
        for unit in &mut units {
            while unit(&mut batch)? {
                records_read += batch.len() as u64;
                encode_batch(&batch, &bound, &mut encoded);
                for e in &encoded {
                    for (i, reason) in &e.rejected {
                        rejected.push(format!("{}: {reason}", batch.position(*i)));
                    }
                    // A record's cells of one table share its row (one range of the arena):
                    // its region is looked up once, not per cell.
                    let mut last: Option<(usize, (u32, u32), usize)> = None;
                    for c in &e.cells {
                        let f = usize::from(c.family);
                        let (t, name) = &family_of[f];
                        let region = match last {
                            Some((lt, lr, region)) if lt == *t && lr == c.row => region,
                            _ => {
                                let row = slice(&e.arena, c.row);
                                let region = regions[*t].region_of(row);
                                last = Some((*t, c.row, region));
                                region
                            }
                        };
                        let within = if *t == 0 { f } else { f - n_main - (t - 1) };
                        let store = &mut counts[*t][region][within];
                        store.cells += 1;
                        if c.cell_type != CellType::Put {
                            store.delete_markers += 1;
                        }
                        store.bytes += (c.row.1 + c.qualifier.1 + c.value.1 + c.tags.1) as u64
                            + name.len() as u64;
                    }
                }
            }
        }
    }
    let tables = tables
        .into_iter()
        .zip(regions)
        .zip(counts)
        .map(|(((table, _), r), per_region)| DryRunTable {
            table,
            regions: per_region
                .into_iter()
                .enumerate()
                .map(|(i, families)| DryRunRegion {
                    start_key: to_string_binary(r.start_key(i)),
                    end_key: to_string_binary(r.end_key(i)),
                    families,
                })
                .collect(),
        })
        .collect();
    Ok(DryRunReport {
        records_read,
        records_rejected: rejected.len() as u64,
        rejected,
        tables,
    })
}

/// The report as text: per table, region and family what would be written, then every record
/// that would be rejected.
pub fn render_text(r: &DryRunReport) -> String {
    let mut out = format!(
        "dry run: {} records read, {} would be rejected; nothing written\n",
        r.records_read, r.records_rejected
    );
    for t in &r.tables {
        out.push_str(&format!("table {}\n", t.table));
        for g in &t.regions {
            let range = format!("['{}', '{}')", g.start_key, g.end_key);
            for f in &g.families {
                out.push_str(&format!(
                    "  region {range} family {}: {} cells ({} delete markers), {} bytes\n",
                    f.family, f.cells, f.delete_markers, f.bytes
                ));
            }
        }
    }
    for line in &r.rejected {
        out.push_str(&format!("rejected: {line}\n"));
    }
    out
}
