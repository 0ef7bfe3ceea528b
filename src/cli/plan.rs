//! `hfkit plan`: a sample of the input through the import's sources, rowkey spec and column
//! mapping, printed as expected rows and cells per region (`formats/import.md` §"Plan").
//! Shares the schema loading and input options with [`super::import`].

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::error::{CliError, EXIT_OK};
use super::input::{load_schema, InputArgs};
use crate::pipeline::plan::chart::{self, RegionBar};
use crate::pipeline::plan::{PlanOptions, Sampling};
use crate::pipeline::source::expand_paths;

const PLAN_HELP: &str = concat!(
    "\
Reads a sample of the input through the import's own sources, rowkey spec and column mapping,
and prints, for the split points the import would use (or for --regions N cut at the sample's
quantiles), each region's rows and cells in the sample and expected for the whole input.
Nothing is written.

Each region gets a bar (its cells against the largest region's); regions holding more than
twice the mean are marked HOT. --chart FILE.svg draws the same as a picture. The warnings are the import's own:
hot regions, row keys in increasing order, mean key length outside 10-100 bytes, and records
the import would reject. Expected counts are the sample's scaled to the input's size: exact
when every record was read (a fraction reads them all), from Parquet footers, or estimated from
the bytes of plain CSV files; unknown when a compressed file was not read to its end.

Exit codes: 0 a plan was printed (hot regions included), 1 bad input or schema, 2 wrong
command line.

",
    examples!(
        "hfkit plan --schema fixtures/seeds/users.toml fixtures/seeds/users.csv",
        "hfkit plan --schema fixtures/seeds/events.toml fixtures/seeds/events.csv --sample-fraction 0.5 --regions 16 --json",
        "hfkit plan --schema fixtures/seeds/users.toml fixtures/seeds/users.csv --chart /tmp/hfkit-users-plan.svg",
    ),
);

/// `hfkit plan`.
#[derive(Debug, Args)]
#[command(after_help = PLAN_HELP)]
pub struct PlanArgs {
    /// Table schema with its import mapping (TOML).
    #[arg(long)]
    schema: PathBuf,
    /// Input files or globs, as for `hfkit import`.
    #[arg(required = true)]
    inputs: Vec<String>,
    #[command(flatten)]
    input: InputArgs,
    /// Sample the first N records (default 100000, the import's sample for `[splits] sample`;
    /// also used for sampled splits, as `import --sample-rows N`).
    #[arg(long, conflicts_with = "sample_fraction")]
    sample_rows: Option<usize>,
    /// Sample each record with probability F (0 < F <= 1): reads the whole input.
    #[arg(long)]
    sample_fraction: Option<f64>,
    /// Plan for N regions cut at the quantiles of the sample's row keys instead of the
    /// schema's split points.
    #[arg(long)]
    regions: Option<usize>,
    /// Print the plan as JSON.
    #[arg(long)]
    json: bool,
    /// Also write an SVG chart of the main table's regions to FILE: a bar per region, its
    /// expected cells against the largest region's, hot regions in red.
    #[arg(long, value_name = "FILE.svg")]
    chart: Option<PathBuf>,
}

/// `hfkit plan`: split points and expected cells per region for a sample of the input.
pub fn plan(a: PlanArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let parsed = load_schema(&a.schema)?;
    let inputs = expand_paths(&a.inputs).map_err(|e| CliError::failure(e.to_string()))?;
    let format = a.input.format(&inputs)?;
    let mut opts = PlanOptions::new(inputs, format);
    match (a.sample_rows, a.sample_fraction) {
        (Some(0), _) => return Err(CliError::usage("--sample-rows must be at least 1")),
        (Some(n), _) => {
            opts.sampling = Sampling::FirstRows(n);
            opts.split_sample_rows = n;
        }
        (None, Some(f)) if f > 0.0 && f <= 1.0 => opts.sampling = Sampling::Fraction(f),
        (None, Some(f)) => {
            return Err(CliError::usage(format!(
                "--sample-fraction {f}: expected a number in (0, 1]"
            )))
        }
        (None, None) => {}
    }
    if let Some(n) = a.regions {
        if n < 2 {
            return Err(CliError::usage(format!(
                "--regions {n}: the number of regions must be at least 2"
            )));
        }
    }
    opts.regions = a.regions;
    let report = crate::pipeline::plan::plan(&parsed.table, &parsed.mapping, &opts)
        .map_err(|e| CliError::failure(e.to_string()))?;
    if let Some(path) = &a.chart {
        let t = &report.table;
        let regions: Vec<RegionBar> = t
            .regions
            .iter()
            .enumerate()
            .map(|(i, r)| RegionBar {
                label: format!("{i} [{}", r.start_key),
                cells: r.expected_cells.unwrap_or(r.sample_cells),
                hot: r.hot,
                ..RegionBar::default()
            })
            .collect();
        let title = format!("{}: expected cells per region (hfkit plan)", t.table);
        chart::write(path, &title, &regions).map_err(CliError::failure)?;
    }
    if a.json {
        let text =
            serde_json::to_string_pretty(&report).map_err(|e| CliError::failure(e.to_string()))?;
        writeln!(out, "{text}")?;
    } else {
        write!(out, "{}", crate::pipeline::plan::render_text(&report))?;
    }
    Ok(EXIT_OK)
}
