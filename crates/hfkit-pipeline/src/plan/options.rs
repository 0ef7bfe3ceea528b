//! How to run a plan: [`PlanOptions`], and the [`Sampling`] that says which records of the
//! input it looks at. Prose: `formats/import.md` §"Plan".

use std::path::PathBuf;

use crate::import::regions::DEFAULT_SAMPLE_ROWS;
use crate::source::input::{InputFormat, DEFAULT_BATCH_ROWS};

/// Which records of the input the plan looks at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// The first N records, in input order.
    FirstRows(usize),
    /// Each record with this probability (0 < F <= 1), chosen deterministically.
    Fraction(f64),
}

/// How to run a plan.
#[derive(Clone, Debug)]
pub struct PlanOptions {
    pub inputs: Vec<PathBuf>,
    pub format: InputFormat,
    pub sampling: Sampling,
    /// Plan for this many regions cut at the sample's quantiles instead of the schema's splits.
    pub regions: Option<usize>,
    /// Records sampled for `[splits] sample = n`, as the import's `--sample-rows`.
    pub split_sample_rows: usize,
    pub batch_rows: usize,
}

impl PlanOptions {
    pub fn new(inputs: Vec<PathBuf>, format: InputFormat) -> PlanOptions {
        PlanOptions {
            inputs,
            format,
            sampling: Sampling::FirstRows(DEFAULT_SAMPLE_ROWS),
            regions: None,
            split_sample_rows: DEFAULT_SAMPLE_ROWS,
            batch_rows: DEFAULT_BATCH_ROWS,
        }
    }
}
