//! `hfkit plan`: before writing anything, how an import would spread over its regions. A
//! sample of the input goes through the import's own sources, rowkey encoders and cell
//! mapping; its rows and cells are counted per region of the split points the import would
//! use (or of N regions cut at the sample's quantiles), and scaled to the whole input when its
//! size is known. Regions with more than twice the mean are flagged hot, and the import's
//! design warnings (increasing keys, key length) are given. Prose: `formats/import.md` §"Plan".
//!
//! ```text
//! sample:   first N records (--sample-rows, default the import's 100000)
//!         | each record with probability F (--sample-fraction; reads the whole input,
//!           encodes only the chosen records; deterministic)
//! splits:   the schema's; [splits] sample = n: exactly the import's (quantiles of the first
//!           --sample-rows records' keys); --regions N: quantiles of the plan's sample
//! scale:    whole input sampled               -> 1 (exact)
//!           fraction                          -> records seen / records sampled
//!           first N, input not all read       -> estimated records / records sampled, the
//!             estimate from Parquet footers (exact) and plain CSV bytes per record; unknown
//!             (no extrapolation) when a compressed CSV file was not read to its end
//! ```

//!
//! | module | owns |
//! |---|---|
//! | `sample` | drawing the sample (first N records, or a deterministic fraction) through the import's sources and encoders |
//! | `render` | the plan as text |
//! | `options` | [`PlanOptions`] and [`Sampling`] |
//! | `report` | [`PlanReport`]: each table's [`TablePlan`] and its [`PlannedRegion`]s, the [`SampleReport`] |
//! | this module | the regions the import would use and the counts per region |

pub mod chart;
mod options;
mod render;
mod report;
mod sample;

use crate::error::ImportError;
use crate::import::regions::{hot_region_warnings, key_warnings, sample_keys};
use crate::mapping::encode::Compiled;
use hfkit_table::{
    sample_splits, to_string_binary, ImportMapping, Regions, SplitSpec, TableSchema,
};

pub use options::{PlanOptions, Sampling};
pub use render::render_text;
pub use report::{PlanReport, PlannedRegion, SampleReport, TablePlan};
use sample::draw_sample;

/// Plans an import of `opts.inputs` with `schema` and `mapping`.
pub fn plan(
    schema: &TableSchema,
    mapping: &ImportMapping,
    opts: &PlanOptions,
) -> Result<PlanReport, ImportError> {
    if opts.inputs.is_empty() {
        return Err(ImportError::Invalid("no input files".into()));
    }
    match opts.sampling {
        Sampling::FirstRows(0) => return Err(ImportError::Invalid("a sample of 0 records".into())),
        Sampling::Fraction(f) if !(f > 0.0 && f <= 1.0) => {
            return Err(ImportError::Invalid(format!(
                "sample fraction {f} is not in (0, 1]"
            )))
        }
        _ => {}
    }
    if let Some(n) = opts.regions {
        if n < 2 {
            return Err(ImportError::Invalid(format!(
                "--regions {n}: the number of regions must be greater than 1"
            )));
        }
    }
    let compiled = Compiled::new(schema, mapping)?;
    let s = draw_sample(schema, mapping, &compiled, opts)?;

    // Split points: --regions from the plan's sample, else exactly the import's.
    let sampled = |spec: &SplitSpec| matches!(spec, SplitSpec::Sampled { .. });
    let import_sample = if opts.regions.is_none()
        && (sampled(&schema.splits) || mapping.indexes.iter().any(|ix| sampled(&ix.table.splits)))
    {
        Some(sample_keys(
            &compiled,
            &opts.inputs,
            &opts.format,
            opts.split_sample_rows,
        )?)
    } else {
        None
    };
    let main_keys: Vec<&[u8]> = s.rows.iter().map(|(k, _)| k.as_slice()).collect();
    let (regions, splits_from) = table_regions(
        &schema.splits,
        opts,
        &main_keys,
        import_sample.as_ref().map(|x| x.main.as_slice()),
    )?;
    let scale = s
        .input_records
        .and_then(|(n, _)| (s.records > 0).then(|| n as f64 / s.records as f64));
    let main_rows = s.rows.iter().map(|(k, c)| (k.as_slice(), u64::from(*c)));
    let table = table_plan(schema.full_name(), splits_from, &regions, main_rows, scale);
    let mut warnings = hot_region_warnings(
        "",
        table.regions.iter().map(|r| {
            (
                r.start_key.as_str(),
                r.end_key.as_str(),
                r.sample_cells as f64,
            )
        }),
    );
    warnings.extend(key_warnings(&s.keys, true));

    let mut indexes = Vec::new();
    for (i, ix) in mapping.indexes.iter().enumerate() {
        let keys: Vec<&[u8]> = s.index_rows[i].iter().map(Vec::as_slice).collect();
        let (regions, splits_from) = table_regions(
            &ix.table.splits,
            opts,
            &keys,
            import_sample
                .as_ref()
                .and_then(|x| x.indexes.get(i))
                .map(Vec::as_slice),
        )
        .map_err(|e| ImportError::Invalid(format!("index {}: {e}", ix.full_name())))?;
        let p = table_plan(
            ix.full_name(),
            splits_from,
            &regions,
            keys.iter().map(|k| (*k, 1)),
            scale,
        );
        warnings.extend(hot_region_warnings(
            &format!("index {}: ", ix.full_name()),
            p.regions.iter().map(|r| {
                (
                    r.start_key.as_str(),
                    r.end_key.as_str(),
                    r.sample_cells as f64,
                )
            }),
        ));
        indexes.push(p);
    }
    if s.rejected > 0 {
        warnings.push(format!(
            "{} of {} sampled records would be rejected; first: {}",
            s.rejected,
            s.records,
            s.first_rejection.as_deref().unwrap_or("")
        ));
    }
    Ok(PlanReport {
        table,
        indexes,
        sample: SampleReport {
            method: match opts.sampling {
                Sampling::FirstRows(n) => format!("first {n} records"),
                Sampling::Fraction(f) => format!("fraction {f}"),
            },
            records: s.records,
            rejected: s.rejected,
            first_rejection: s.first_rejection,
            records_read: s.records_read,
            whole_input: s.whole_input,
            input_records: s.input_records.map(|(n, _)| n),
            input_records_basis: s.input_records.map(|(_, b)| b.to_string()),
            scale,
        },
        rowkey_len_min: s.keys.len_min,
        rowkey_len_mean: s.keys.mean_len(),
        rowkey_len_max: s.keys.len_max,
        warnings,
    })
}

/// The regions of one table and where their split points come from.
fn table_regions(
    spec: &SplitSpec,
    opts: &PlanOptions,
    plan_sample: &[&[u8]],
    import_sample: Option<&[Vec<u8>]>,
) -> Result<(Regions, String), ImportError> {
    if let Some(n) = opts.regions {
        let r = Regions::from_sorted(sample_splits(plan_sample, n))?;
        return Ok((
            r,
            format!("--regions {n}: quantiles of the plan's sample of row keys"),
        ));
    }
    let from = match spec {
        SplitSpec::None => "the schema: no splits (one region)".to_string(),
        SplitSpec::Explicit(_) => "the schema: [splits] keys".to_string(),
        SplitSpec::File(p) => format!("the schema: [splits] file {}", p.display()),
        SplitSpec::Algorithm { algo, regions, .. } => {
            format!("the schema: {} with {regions} regions", algo.name())
        }
        SplitSpec::Sampled { regions } => format!(
            "the schema: sample = {regions}, quantiles of the first {} records' row keys, as the import computes them",
            opts.split_sample_rows
        ),
    };
    Ok((spec.regions(import_sample)?, from))
}

/// Counts `rows` (key, cells) per region and scales them.
fn table_plan<'k>(
    table: String,
    splits_from: String,
    regions: &Regions,
    rows: impl Iterator<Item = (&'k [u8], u64)>,
    scale: Option<f64>,
) -> TablePlan {
    let mut counts = vec![(0u64, 0u64); regions.len()];
    for (key, cells) in rows {
        let c = &mut counts[regions.region_of(key)];
        c.0 += 1;
        c.1 += cells;
    }
    let total: u64 = counts.iter().map(|c| c.1).sum();
    let mean = total as f64 / regions.len().max(1) as f64;
    let scaled = |n: u64| scale.map(|f| (n as f64 * f).round() as u64);
    TablePlan {
        table,
        splits_from,
        split_points: regions
            .split_keys()
            .iter()
            .map(|k| to_string_binary(k))
            .collect(),
        regions: counts
            .iter()
            .enumerate()
            .map(|(i, &(rows, cells))| PlannedRegion {
                start_key: to_string_binary(regions.start_key(i)),
                end_key: to_string_binary(regions.end_key(i)),
                sample_rows: rows,
                sample_cells: cells,
                expected_rows: scaled(rows),
                expected_cells: scaled(cells),
                share: if total > 0 {
                    cells as f64 / total as f64
                } else {
                    0.0
                },
                hot: regions.len() > 1 && total > 0 && cells as f64 > 2.0 * mean,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::input::InputFormat;
    use crate::source::CsvOptions;
    use std::path::{Path, PathBuf};

    const SCHEMA: &str = r#"
[table]
name = "t"
[[family]]
name = "d"
[splits]
keys = ["b", "c", "d"]
[rowkey]
spec = 'k'
[[column]]
source = "v"
cell = "d:v"
[[column]]
source = "w"
cell = "d:w"
"#;

    fn csv(dir: &Path, name: &str, rows: impl Iterator<Item = String>) -> PathBuf {
        let p = dir.join(name);
        let mut text = String::from("k,v,w\n");
        for r in rows {
            text.push_str(&r);
            text.push('\n');
        }
        std::fs::write(&p, text).unwrap();
        p
    }

    fn run(schema: &str, inputs: Vec<PathBuf>, f: impl FnOnce(&mut PlanOptions)) -> PlanReport {
        let parsed = TableSchema::from_toml_str(schema, "s.toml", None).unwrap();
        let mut o = PlanOptions::new(inputs, InputFormat::Csv(CsvOptions::default()));
        f(&mut o);
        plan(&parsed.table, &parsed.mapping, &o).unwrap()
    }

    /// Keys skewed towards "a": region 0 holds most cells and is flagged, in the report and
    /// as the import's warning.
    #[test]
    fn skewed_input_shows_a_hot_region() {
        let dir = tempfile::tempdir().unwrap();
        // 700 keys a*, 100 each of b*, c*, d*; record 5 of each has no w (one cell).
        let rows = (0..1000).map(|i| {
            let p = match i % 10 {
                0..=6 => 'a',
                7 => 'b',
                8 => 'c',
                _ => 'd',
            };
            let w = if i % 100 == 5 { "" } else { "y" };
            format!("{p}{i:04},x,{w}")
        });
        let input = csv(dir.path(), "in.csv", rows);
        let p = run(SCHEMA, vec![input], |_| {});
        assert!(p.sample.whole_input);
        assert_eq!(p.sample.input_records, Some(1000));
        assert_eq!(p.table.split_points, ["b", "c", "d"]);
        let r = &p.table.regions;
        assert_eq!(r.len(), 4);
        assert_eq!(
            r.iter().map(|g| g.sample_rows).collect::<Vec<_>>(),
            [700, 100, 100, 100]
        );
        // Records 5, 105, ... (i % 10 == 5: all in "a") lack w.
        assert_eq!(r[0].sample_cells, 1400 - 10);
        assert_eq!(r[0].expected_cells, Some(1390));
        assert!(r[0].hot && !r[1].hot && !r[2].hot && !r[3].hot);
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("region [, b) holds 1390 cells") && w.contains("hot region")),
            "{:?}",
            p.warnings
        );
        let text = render_text(&p);
        assert!(text.contains("HOT"), "{text}");
        assert!(
            text.contains("split points (Bytes.toStringBinary"),
            "{text}"
        );
        // Four sampled regions instead even out.
        let p = run(SCHEMA, vec![dir.path().join("in.csv")], |o| {
            o.regions = Some(4)
        });
        assert_eq!(p.table.regions.len(), 4);
        assert!(
            p.table.regions.iter().all(|g| !g.hot),
            "{:?}",
            p.table.regions
        );
        assert!(p.table.regions.iter().all(|g| g.sample_rows == 250));
    }

    /// A partial sample is scaled by the input size: exact for Parquet footers, estimated
    /// from bytes for plain CSV, unknown for compressed CSV; fractions count every record.
    #[test]
    fn expected_counts_scale_the_sample() {
        let dir = tempfile::tempdir().unwrap();
        // Equal-length records: the byte estimate is exact.
        let a = csv(
            dir.path(),
            "a.csv",
            (0..1000).map(|i| format!("a{i:04},x,y")),
        );
        let b = csv(
            dir.path(),
            "b.csv",
            (0..1000).map(|i| format!("c{i:04},x,y")),
        );
        let p = run(SCHEMA, vec![a.clone(), b.clone()], |o| {
            o.sampling = Sampling::FirstRows(500);
            o.batch_rows = 64;
        });
        assert_eq!(p.sample.records, 500);
        assert!(!p.sample.whole_input);
        assert_eq!(p.sample.input_records, Some(2000));
        assert_eq!(p.sample.input_records_basis.as_deref(), Some("estimated"));
        // The sample is all in region 0 ("a..."): 500 rows scaled x4.
        assert_eq!(p.table.regions[0].expected_rows, Some(2000));
        assert_eq!(p.table.regions[2].expected_rows, Some(0));
        // A fraction reads everything: the count is exact and both files are represented.
        let p = run(SCHEMA, vec![a.clone(), b.clone()], |o| {
            o.sampling = Sampling::Fraction(0.25);
        });
        assert_eq!(p.sample.records_read, 2000);
        assert_eq!(p.sample.input_records, Some(2000));
        assert_eq!(p.sample.input_records_basis.as_deref(), Some("exact"));
        assert!(
            (350..650).contains(&p.sample.records),
            "{}",
            p.sample.records
        );
        let (r0, r2) = (&p.table.regions[0], &p.table.regions[2]);
        assert!(
            r0.sample_rows > 150 && r2.sample_rows > 150,
            "{:?}",
            p.table.regions
        );
        let total: u64 = p.table.regions.iter().filter_map(|r| r.expected_rows).sum();
        assert!((1990..=2010).contains(&total), "{total}");
        // Compressed and not read to the end: no extrapolation.
        let gz = dir.path().join("a.csv.gz");
        let mut e = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::default(),
        );
        std::io::Write::write_all(&mut e, &std::fs::read(&a).unwrap()).unwrap();
        e.finish().unwrap();
        let p = run(SCHEMA, vec![gz], |o| o.sampling = Sampling::FirstRows(10));
        assert_eq!(p.sample.input_records, None);
        assert_eq!(p.table.regions[0].expected_rows, None);
        assert!(render_text(&p).contains("size unknown"));
    }

    /// Parquet: the sample stops inside a row group; the footers give the exact input size.
    #[test]
    fn parquet_samples_scale_by_the_footer_row_count() {
        use arrow_array::{RecordBatch, StringArray};
        use arrow_schema::{DataType, Field, Schema};
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, false),
            Field::new("v", DataType::Utf8, true),
            Field::new("w", DataType::Utf8, true),
        ]));
        let write = |name: &str, prefix: char| {
            let keys: Vec<String> = (0..300).map(|i| format!("{prefix}{i:04}")).collect();
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(StringArray::from(keys)),
                    Arc::new(StringArray::from(vec![Some("x"); 300])),
                    Arc::new(StringArray::from(vec![None::<&str>; 300])),
                ],
            )
            .unwrap();
            let props = parquet::file::properties::WriterProperties::builder()
                .set_max_row_group_row_count(Some(100))
                .build();
            let p = dir.path().join(name);
            let mut w = parquet::arrow::ArrowWriter::try_new(
                std::fs::File::create(&p).unwrap(),
                schema.clone(),
                Some(props),
            )
            .unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            p
        };
        let inputs = vec![write("a.parquet", 'a'), write("c.parquet", 'c')];
        let parsed = TableSchema::from_toml_str(SCHEMA, "s.toml", None).unwrap();
        let mut o = PlanOptions::new(inputs, InputFormat::Parquet);
        o.sampling = Sampling::FirstRows(150);
        o.batch_rows = 64;
        let p = plan(&parsed.table, &parsed.mapping, &o).unwrap();
        assert_eq!((p.sample.records, p.sample.records_read), (150, 150));
        assert!(!p.sample.whole_input);
        assert_eq!(p.sample.input_records, Some(600));
        assert_eq!(p.sample.input_records_basis.as_deref(), Some("exact"));
        // One cell per row (w is null); all sampled rows are "a...", region 0.
        assert_eq!(p.table.regions[0].sample_cells, 150);
        assert_eq!(p.table.regions[0].expected_cells, Some(600));
    }

    #[test]
    fn increasing_and_short_keys_and_rejections_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let input = csv(
            dir.path(),
            "in.csv",
            (0..2000)
                .map(|i| format!("{i:05},x,y"))
                .chain(std::iter::once(",x,y".into())),
        );
        let p = run(SCHEMA, vec![input], |_| {});
        assert_eq!(p.sample.rejected, 1);
        let w = p.warnings.join("\n");
        assert!(w.contains("increasing order"), "{w}");
        assert!(w.contains("mean row key length is 5.0 bytes"), "{w}");
        assert!(
            w.contains("line 2002: row key: the row key is empty"),
            "{w}"
        );
    }
}
