//! What a plan says: [`PlanReport`] (also `hfkit plan --json`) — each table's
//! [`TablePlan`] with its [`PlannedRegion`]s, and the [`SampleReport`]. Prose:
//! `formats/import.md` §"Plan".

/// One region of a plan.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PlannedRegion {
    pub start_key: String,
    pub end_key: String,
    /// Rows and cells of the sample in this region.
    pub sample_rows: u64,
    pub sample_cells: u64,
    /// The sample's counts scaled to the whole input (`None` when its size is unknown).
    pub expected_rows: Option<u64>,
    pub expected_cells: Option<u64>,
    /// This region's part of the table's cells, 0..=1.
    pub share: f64,
    /// More than twice the mean cells per region.
    pub hot: bool,
}

/// The plan of one table (the main table or an index table).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct TablePlan {
    pub table: String,
    /// Where the split points come from.
    pub splits_from: String,
    /// Split keys, `Bytes.toStringBinary` text (a splits file, one per line).
    pub split_points: Vec<String>,
    pub regions: Vec<PlannedRegion>,
}

/// What the sample was.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SampleReport {
    /// `first N records` or `fraction F`.
    pub method: String,
    /// Records the sample holds, and of those the ones the import would reject.
    pub records: u64,
    pub rejected: u64,
    /// The first rejection: position and reason.
    pub first_rejection: Option<String>,
    /// Records read to draw the sample.
    pub records_read: u64,
    /// The sample covers every record of the input.
    pub whole_input: bool,
    /// Records in the whole input: exact when every record was read or Parquet footers say,
    /// estimated from bytes for plain CSV, `None` when unknown.
    pub input_records: Option<u64>,
    /// How `input_records` was found: `exact` or `estimated`.
    pub input_records_basis: Option<String>,
    /// Factor from sample counts to expected counts.
    pub scale: Option<f64>,
}

/// `hfkit plan`'s report (also its `--json`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PlanReport {
    pub table: TablePlan,
    pub indexes: Vec<TablePlan>,
    pub sample: SampleReport,
    pub rowkey_len_min: usize,
    pub rowkey_len_mean: f64,
    pub rowkey_len_max: usize,
    pub warnings: Vec<String>,
}
