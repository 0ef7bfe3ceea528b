//! `hfkit get` and `hfkit scan`: table-level reads over `table::read::TableReader`.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, ValueEnum};
use serde_json::{json, Value};

use super::error::{CliError, EXIT_OK};
use crate::format::block_cache::BlockCache;
use crate::format::bytes::equal_bytes;
use crate::format::cell::{now_ms, Cell, CellRef, CellType};
use crate::format::text::{push_cell_line, CellLines};
use crate::pipeline::mapping::typed::ColumnTypes;
use crate::read::{ReadOptions, ReadStats, TimeRange};
use crate::table::directory::Table;
use crate::table::read::TableReader;
use crate::table::{push_string_binary, to_bytes_binary, to_string_binary};

const GET_AFTER_HELP: &str = concat!(
    "\
Reads one row of a table directory (only the region holding it), with HBase's read semantics:
delete markers, VERSIONS / MIN_VERSIONS, TTL (against --now, default the current time),
KEEP_DELETED_CELLS, time range. A row without cells prints nothing (text: '0 row(s)'), exit 0.

--rows-from FILE (or - for standard input) does one get per line of FILE, in one process, each
printed as a get of that row alone; a line is a row in the same form as ROW (a trailing \r is
dropped, empty lines are skipped). Data blocks read by the gets are kept in a block cache of
--block-cache-size bytes, as HBase's hfile.block.cache.size: by default (auto) a quarter of the
machine's memory (HBase gives its cache 40% of a heap that is commonly a quarter to a half of
the machine), at least 64MiB; the cache holds no more than the blocks read, so a small table
costs no more; 0: none.

Rows, qualifiers and values are written and shown as text in HBase's Bytes.toStringBinary form:
printable ASCII as itself, every other byte (and the backslash) as \\xNN with upper-case hex
digits. Quote them for the shell: 'row\\x00\\xFF'. The values of columns the table's schema
typed (int64, double, boolean, bigdecimal, hex, ...: `table describe` lists them) are shown as
the schema reads them, numbers and booleans in JSON; --raw-values shows them as stored.

",
    examples!(
        "hfkit get /tmp/hfkit-users 7700000000",
        "hfkit get /tmp/hfkit-users 7700000000 --column i:name --column s --versions 3 --format json",
        "hfkit get /tmp/hfkit-users 7700000000 --time-range 0,1700000000001 --stats",
        "hfkit get /tmp/hfkit-users --rows-from fixtures/seeds/users.rows --format tsv",
        "hfkit get /tmp/hfkit-users/indexes/users_by_email 'u77@example.com_77' --format tsv",
    ),
);

const SCAN_AFTER_HELP: &str = concat!(
    "\
Scans the rows of a table directory in [--start, --stop) and with --prefix, region after region,
with HBase's read semantics (see `hfkit get --help`). --reverse returns the same rows, last
first (unlike the HBase shell, --start is still the lower bound).

Formats:
  text   like the HBase shell:   ' ROW  column=f:q, timestamp=T, value=V', then 'N row(s)'
  tsv    one line per cell:      row<TAB>family:qualifier<TAB>timestamp<TAB>type<TAB>value
  json   one JSON object a line: {\"row\":..,\"cells\":[{\"family\",\"qualifier\",\"timestamp\",\"type\",\"value\"}]}
  cells  the canonical cell lines (hex; see `hfkit --help`), as `hfkit hfile cells` prints

Rows, qualifiers and values are written and shown as text in HBase's Bytes.toStringBinary form:
printable ASCII as itself, every other byte (and the backslash) as \\xNN with upper-case hex
digits. Quote them for the shell: 'row\\x00\\xFF'.

",
    examples!(
        "hfkit scan /tmp/hfkit-users --limit 3",
        "hfkit scan /tmp/hfkit-users --start 1 --stop 2 --column i:email --format tsv --limit 5",
        "hfkit scan /tmp/hfkit-users/indexes/users_by_email --prefix 'u77@example.com_'",
        "hfkit scan /tmp/hfkit-users --prefix '\\x37' --reverse --raw --versions 10 --format cells --limit 2",
    ),
);

/// Output formats of `get` and `scan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReadFormat {
    /// Like the HBase shell.
    Text,
    /// One tab-separated line per cell: row, family:qualifier, timestamp, type, value.
    Tsv,
    /// One JSON object per row (JSON lines).
    Json,
    /// Canonical cell lines (hex).
    Cells,
}

/// Options shared by `get` and `scan`.
#[derive(Debug, Args)]
pub struct CommonReadArgs {
    /// Only this family (`f`) or column (`f:q`; `f:` is the empty qualifier). Repeatable.
    #[arg(long = "column", value_name = "F[:Q]")]
    columns: Vec<String>,
    /// Versions per column (capped by the family's VERSIONS unless --raw).
    #[arg(long, default_value_t = 1, value_name = "N")]
    versions: u32,
    /// Only cells with MIN ≤ timestamp < MAX (epoch ms).
    #[arg(long, value_name = "MIN,MAX")]
    time_range: Option<String>,
    /// Also return delete markers and the cells they mask; no TTL. Whole families only.
    #[arg(long)]
    raw: bool,
    /// "Now" for TTL, in epoch ms (default: the current time). Also `--now-ms`.
    #[arg(long, value_name = "MS", alias = "now-ms")]
    now: Option<i64>,
    /// Print which store files were read and which were skipped (Bloom filter, time range,
    /// key range, TTL) to standard error.
    #[arg(long)]
    stats: bool,
    /// Every value as stored (toStringBinary text), also in the columns the table's schema
    /// typed (shown decoded by default: numbers, booleans, hex and base64 as the schema reads
    /// them).
    #[arg(long)]
    raw_values: bool,
}

/// `hfkit get TABLE ROW`.
#[derive(Debug, Args)]
#[command(after_help = GET_AFTER_HELP)]
pub struct GetArgs {
    /// The table directory.
    table: PathBuf,
    /// The row (toStringBinary text, `\xNN` escapes).
    #[arg(required_unless_present = "rows_from", conflicts_with = "rows_from")]
    row: Option<String>,
    /// Get every row listed in FILE, one a line (`-`: standard input).
    #[arg(long, value_name = "FILE")]
    rows_from: Option<PathBuf>,
    /// Bytes of decoded data blocks the gets keep cached (`64MiB`, `1GB`; `0`: no cache;
    /// `auto`: a quarter of the machine's memory, at least 64MiB).
    #[arg(long, value_name = "SIZE", default_value = "auto")]
    block_cache_size: String,
    #[command(flatten)]
    common: CommonReadArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ReadFormat,
}

/// `hfkit scan TABLE`.
#[derive(Debug, Args)]
#[command(after_help = SCAN_AFTER_HELP)]
pub struct ScanArgs {
    /// The table directory.
    table: PathBuf,
    #[command(flatten)]
    query: ScanQueryArgs,
}

/// What a scan reads and how it prints it.
#[derive(Debug, Args)]
pub struct ScanQueryArgs {
    #[command(flatten)]
    range: ScanRangeArgs,
    #[command(flatten)]
    common: CommonReadArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ReadFormat,
}

/// Which rows a scan returns.
#[derive(Debug, Args)]
pub struct ScanRangeArgs {
    /// First row (inclusive).
    #[arg(long, value_name = "ROW")]
    start: Option<String>,
    /// Row to stop before (exclusive).
    #[arg(long, value_name = "ROW")]
    stop: Option<String>,
    /// Only rows starting with this prefix.
    #[arg(long, value_name = "P")]
    prefix: Option<String>,
    /// At most N rows.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Rows in descending order.
    #[arg(long)]
    reverse: bool,
}

fn binary_arg(what: &str, s: &str) -> Result<Vec<u8>, CliError> {
    to_bytes_binary(s).map_err(|e| CliError::usage(format!("{what} '{s}': {e}")))
}

/// `f` → (f, None); `f:q` → (f, Some(q)).
fn parse_column(s: &str) -> Result<(Vec<u8>, Option<Vec<u8>>), CliError> {
    let (f, q) = match s.split_once(':') {
        Some((f, q)) => (f, Some(q)),
        None => (s, None),
    };
    if f.is_empty() {
        return Err(CliError::usage(format!(
            "--column '{s}': expected FAMILY or FAMILY:QUALIFIER"
        )));
    }
    let q = q.map(|q| binary_arg("--column qualifier", q)).transpose()?;
    Ok((f.as_bytes().to_vec(), q))
}

fn parse_time_range(s: &str) -> Result<TimeRange, CliError> {
    let bad = |why: String| CliError::usage(format!("--time-range '{s}': {why}"));
    let Some((a, b)) = s.split_once(',') else {
        return Err(bad("expected MIN,MAX (epoch ms)".into()));
    };
    let a: i64 = a.trim().parse().map_err(|e| bad(format!("MIN: {e}")))?;
    let b: i64 = b.trim().parse().map_err(|e| bad(format!("MAX: {e}")))?;
    TimeRange::between(a, b).map_err(|e| bad(e.to_string()))
}

fn base_options(c: &CommonReadArgs) -> Result<ReadOptions, CliError> {
    let mut opts = ReadOptions {
        max_versions: c.versions,
        raw: c.raw,
        now_ms: c.now.unwrap_or_else(now_ms),
        ..ReadOptions::default()
    };
    for col in &c.columns {
        opts.columns.push(parse_column(col)?);
    }
    if let Some(tr) = &c.time_range {
        opts.time_range = parse_time_range(tr)?;
    }
    opts.validate()
        .map_err(|e| CliError::usage(e.to_string()))?;
    Ok(opts)
}

fn open(dir: &Path) -> Result<TableReader, CliError> {
    let t = Table::open(dir).map_err(|e| CliError::failure(format!("{}: {e}", dir.display())))?;
    TableReader::open(&t).map_err(|e| CliError::failure(format!("{}: {e}", dir.display())))
}

fn print_stats(stats: &ReadStats, rows: usize, cells: usize) {
    note!(
        "{rows} row(s), {cells} cell(s); store files: {} considered, {} read, skipped: {} by Bloom filter, {} by time range, {} by key range, {} by TTL",
        stats.files_considered,
        stats.files_read,
        stats.skipped_bloom,
        stats.skipped_time_range,
        stats.skipped_key_range,
        stats.skipped_ttl
    );
}

/// Lines are written out once this many bytes have gathered: as large as the output's buffer
/// (`cli::run`'s), which then passes them on without copying them again.
const LINE_BATCH: usize = 1 << 16;

/// Writes rows in one format; keeps one line buffer.
struct Printer<'w> {
    out: &'w mut dyn Write,
    format: ReadFormat,
    line: String,
    /// `--format cells`: the row's hex and the timestamp's digits, made once for many cells.
    cell_lines: CellLines,
    /// `get` prints the row key once, in a header, as the HBase shell does.
    get_style: bool,
    /// The typed columns, whose values are shown decoded.
    types: ColumnTypes,
}

/// `family:qualifier`, as the shell shows a column.
fn push_column(out: &mut String, c: &CellRef<'_>) {
    push_string_binary(out, c.family);
    out.push(':');
    push_string_binary(out, c.qualifier);
}

/// A cell's value: decoded when its column is typed, else toStringBinary text.
fn push_value(out: &mut String, c: &CellRef<'_>, types: &ColumnTypes) {
    match types.text(c) {
        Some(t) => out.push_str(&t),
        None => push_string_binary(out, c.value),
    }
}

/// `timestamp=T, value=V` (Puts) or `timestamp=T, type=Delete...` (markers), as the shell.
fn push_cell_text(out: &mut String, c: &CellRef<'_>, types: &ColumnTypes) {
    out.push_str("timestamp=");
    out.push_str(itoa::Buffer::new().format(c.timestamp));
    if c.cell_type == CellType::Put {
        out.push_str(", value=");
        push_value(out, c, types);
    } else {
        out.push_str(", type=");
        out.push_str(c.cell_type.name());
    }
}

/// Pads what was pushed to `out` since `from` with spaces to `width` characters (`{:<width}`;
/// the text pushed is ASCII).
fn pad_from(out: &mut String, from: usize, width: usize) {
    let len = out.len() - from;
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(len)));
}

fn cell_json(c: &CellRef<'_>, types: &ColumnTypes) -> Value {
    let value = match c.cell_type == CellType::Put {
        true => types.json(c),
        false => None,
    };
    let mut v = json!({
        "family": to_string_binary(c.family),
        "qualifier": to_string_binary(c.qualifier),
        "timestamp": c.timestamp,
        "type": c.cell_type.name(),
        "value": value.unwrap_or_else(|| Value::String(to_string_binary(c.value))),
    });
    if !c.tags.is_empty() {
        v["tags"] = Value::String(to_string_binary(c.tags));
    }
    v
}

/// A printer dropped before its footer (a read that failed midway) still writes the lines it
/// gathered, as a printer writing each line at once would have.
impl Drop for Printer<'_> {
    fn drop(&mut self) {
        let _ = self.flush_lines();
    }
}

impl Printer<'_> {
    fn header(&mut self) -> std::io::Result<()> {
        if self.format == ReadFormat::Text {
            if self.get_style {
                writeln!(self.out, "{:<32} CELL", "COLUMN")?;
            } else {
                writeln!(self.out, "{:<32} COLUMN+CELL", "ROW")?;
            }
        }
        Ok(())
    }

    /// Prints one row; text, TSV and cell lines are built in one reused line buffer (no
    /// allocation per cell).
    fn row<'c>(
        &mut self,
        row: &[u8],
        cells: impl Iterator<Item = CellRef<'c>>,
    ) -> std::io::Result<()> {
        if self.format == ReadFormat::Json {
            let mut v = json!({
                "row": to_string_binary(row),
                "cells": cells.map(|c| cell_json(&c, &self.types)).collect::<Vec<_>>(),
            });
            if let Some(fields) = self.types.row_fields(row) {
                v["row_fields"] = fields
                    .into_iter()
                    .map(|(k, f)| (k, Value::String(f)))
                    .collect();
            }
            return writeln!(self.out, "{v}");
        }
        // Lines gather in one buffer, written out in batches of LINE_BATCH bytes or more.
        let line = &mut self.line;
        if self.format == ReadFormat::Cells {
            // A loop of its own: a scan's cell lines are most of its output's cost.
            let cell_lines = &mut self.cell_lines;
            cell_lines.start_row(row);
            for c in cells {
                match equal_bytes(c.row, row) {
                    true => cell_lines.push_line(line, &c),
                    false => {
                        push_cell_line(line, &c, false);
                        line.push('\n');
                    }
                }
                if line.len() >= LINE_BATCH {
                    self.out.write_all(line.as_bytes())?;
                    line.clear();
                }
            }
            return Ok(());
        }
        for c in cells {
            let start = line.len();
            match self.format {
                ReadFormat::Text if self.get_style => {
                    line.push(' ');
                    push_column(line, &c);
                    pad_from(line, start + 1, 31);
                    line.push(' ');
                    push_cell_text(line, &c, &self.types);
                }
                ReadFormat::Text => {
                    line.push(' ');
                    push_string_binary(line, row);
                    pad_from(line, start + 1, 31);
                    line.push_str(" column=");
                    push_column(line, &c);
                    line.push_str(", ");
                    push_cell_text(line, &c, &self.types);
                }
                ReadFormat::Tsv => {
                    push_string_binary(line, row);
                    line.push('\t');
                    push_column(line, &c);
                    line.push('\t');
                    line.push_str(itoa::Buffer::new().format(c.timestamp));
                    line.push('\t');
                    line.push_str(c.cell_type.name());
                    line.push('\t');
                    match c.cell_type == CellType::Put {
                        true => push_value(line, &c, &self.types),
                        false => push_string_binary(line, c.value),
                    }
                }
                ReadFormat::Cells | ReadFormat::Json => push_cell_line(line, &c, false),
            }
            line.push('\n');
            if line.len() >= LINE_BATCH {
                self.out.write_all(line.as_bytes())?;
                line.clear();
            }
        }
        Ok(())
    }

    /// Writes out the lines gathered.
    fn flush_lines(&mut self) -> std::io::Result<()> {
        self.out.write_all(self.line.as_bytes())?;
        self.line.clear();
        Ok(())
    }

    fn footer(&mut self, rows: usize) -> std::io::Result<()> {
        self.flush_lines()?;
        if self.format == ReadFormat::Text {
            writeln!(self.out, "{rows} row(s)")?;
        }
        Ok(())
    }
}

/// `hfkit get`.
pub fn get(args: GetArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let cache_bytes = match args.block_cache_size.trim() {
        "0" => 0,
        "auto" => auto_block_cache_bytes(crate::pipeline::sys::total_memory()),
        s => super::import::parse_size("block-cache-size", s)? as usize,
    };
    let reader = open(&args.table)?;
    if cache_bytes > 0 {
        reader.set_block_cache(&Arc::new(BlockCache::new(cache_bytes)));
    }
    match (&args.row, &args.rows_from) {
        (Some(row), _) => get_from(&reader, row, &args.common, args.format, None, out),
        (None, Some(file)) => get_many(&reader, file, &args.common, args.format, out),
        (None, None) => Err(CliError::usage("give a ROW or --rows-from FILE")),
    }
}

/// `--block-cache-size auto`: a quarter of the machine's memory (`total`, when known), at least
/// the library's default. The cache is filled by the blocks the gets read, so it never holds
/// more than the table's blocks, whatever its bound.
fn auto_block_cache_bytes(total: Option<u64>) -> usize {
    let quarter = total.map_or(0, |t| usize::try_from(t / 4).unwrap_or(usize::MAX));
    quarter.max(crate::format::block_cache::DEFAULT_BLOCK_CACHE_BYTES)
}

/// `hfkit get --rows-from FILE`: one get per line of `file` (`-`: standard input), streamed.
fn get_many(
    reader: &TableReader,
    file: &Path,
    common: &CommonReadArgs,
    format: ReadFormat,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let opts = base_options(common)?;
    let name = file.display().to_string();
    let input: Box<dyn BufRead> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(file)
            .map_err(|e| CliError::failure(format!("--rows-from {name}: {e}")))?;
        Box::new(std::io::BufReader::with_capacity(1 << 16, f))
    };
    let mut p = Printer {
        out,
        format,
        line: String::new(),
        cell_lines: CellLines::default(),
        get_style: true,
        types: ColumnTypes::of(reader.manifest(), common.raw_values),
    };
    let (mut rows, mut cells, mut stats) = (0usize, 0usize, ReadStats::default());
    // One line buffer for the whole file, and an ASCII row without escapes taken as it is: a
    // get of an absent row costs about 0.1 µs, so the loop around it allocates nothing.
    let mut input = input;
    let mut line = Vec::new();
    let mut n = 0usize;
    loop {
        line.clear();
        let read = input
            .read_until(b'\n', &mut line)
            .map_err(|e| CliError::failure(format!("--rows-from {name}: {e}")))?;
        if read == 0 {
            break;
        }
        n += 1;
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.is_empty() {
            continue;
        }
        // toStringBinary text: an ASCII row without escapes is its own bytes.
        let row: std::borrow::Cow<'_, [u8]> = if !text.is_ascii() || text.contains(&b'\\') {
            let what = format!("--rows-from {name} line {n}: row");
            let text = std::str::from_utf8(text)
                .map_err(|_| CliError::usage(format!("{what}: not UTF-8 text")))?;
            std::borrow::Cow::Owned(binary_arg(&what, text)?)
        } else {
            std::borrow::Cow::Borrowed(text)
        };
        let (cs, s) = reader
            .get(&row, &opts)
            .map_err(|e| CliError::failure(e.to_string()))?;
        crate::table::read::add_stats(&mut stats, s);
        p.header()?;
        if !cs.is_empty() {
            rows += 1;
            cells += cs.len();
            p.row(&row, cs.iter().map(Cell::as_ref))?;
        }
        p.footer(usize::from(!cs.is_empty()))?;
    }
    if common.stats {
        print_stats(&stats, rows, cells);
    }
    Ok(EXIT_OK)
}

/// What a read prints of a cell instead of the cell (an HBase MOB reference: the cell it
/// refers to), `None` for the cell itself.
pub(super) type CellResolver<'a> = &'a dyn Fn(&CellRef<'_>) -> Result<Option<Cell>, CliError>;

/// An owned [`CellResolver`].
pub(super) type BoxedCellResolver<'a> =
    Box<dyn Fn(&CellRef<'_>) -> Result<Option<Cell>, CliError> + 'a>;

impl CommonReadArgs {
    /// `--raw`: cells as stored.
    pub(super) fn raw(&self) -> bool {
        self.raw
    }
}

impl ScanQueryArgs {
    /// `--raw`: cells as stored.
    pub(super) fn raw(&self) -> bool {
        self.common.raw
    }
}

/// A get of `row` through `reader`, printed in `format` (also `hfkit hbase get`, whose MOB
/// references `resolve` replaces).
pub(super) fn get_from(
    reader: &TableReader,
    row: &str,
    common: &CommonReadArgs,
    format: ReadFormat,
    resolve: Option<CellResolver<'_>>,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let row = binary_arg("row", row)?;
    let opts = base_options(common)?;
    let (mut cells, stats) = reader
        .get(&row, &opts)
        .map_err(|e| CliError::failure(e.to_string()))?;
    if let Some(resolve) = resolve {
        for c in cells.iter_mut() {
            if let Some(r) = resolve(&c.as_ref())? {
                *c = r;
            }
        }
    }
    let mut p = Printer {
        out,
        format,
        line: String::new(),
        cell_lines: CellLines::default(),
        get_style: true,
        types: ColumnTypes::of(reader.manifest(), common.raw_values),
    };
    p.header()?;
    let rows = usize::from(!cells.is_empty());
    if !cells.is_empty() {
        p.row(&row, cells.iter().map(Cell::as_ref))?;
    }
    p.footer(rows)?;
    if common.stats {
        print_stats(&stats, rows, cells.len());
    }
    Ok(EXIT_OK)
}

/// `hfkit scan`.
pub fn scan(args: ScanArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let reader = open(&args.table)?;
    scan_from(&reader, &args.query, None, out)
}

/// A scan through `reader`, printed as `query` asks (also `hfkit hbase scan`, whose MOB
/// references `resolve` replaces).
pub(super) fn scan_from(
    reader: &TableReader,
    query: &ScanQueryArgs,
    resolve: Option<CellResolver<'_>>,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let (range, common, format) = (&query.range, &query.common, query.format);
    let mut opts = base_options(common)?;
    if let Some(s) = &range.start {
        opts.start_row = binary_arg("--start", s)?;
    }
    if let Some(s) = &range.stop {
        opts.stop_row = binary_arg("--stop", s)?;
    }
    if let Some(p) = &range.prefix {
        opts.prefix = Some(binary_arg("--prefix", p)?);
    }
    opts.limit = range.limit;
    opts.reverse = range.reverse;
    let mut scanner = reader
        .scan(&opts)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let mut p = Printer {
        out,
        format,
        line: String::new(),
        cell_lines: CellLines::default(),
        get_style: false,
        types: ColumnTypes::of(reader.manifest(), query.common.raw_values),
    };
    p.header()?;
    let (mut rows, mut cells) = (0usize, 0usize);
    while let Some(r) = scanner
        .next_row_ref()
        .map_err(|e| CliError::failure(e.to_string()))?
    {
        rows += 1;
        cells += r.len();
        match resolve {
            None => p.row(r.row(), r.cells())?,
            Some(resolve) => {
                let mut owned = Vec::with_capacity(r.len());
                for c in r.cells() {
                    owned.push(resolve(&c)?.unwrap_or_else(|| c.to_owned()));
                }
                p.row(r.row(), owned.iter().map(Cell::as_ref))?;
            }
        }
    }
    p.footer(rows)?;
    if common.stats {
        print_stats(&scanner.stats(), rows, cells);
    }
    Ok(EXIT_OK)
}

/// The table argument (object-storage tables run on a mirror: `remote_table`).
impl GetArgs {
    pub(super) fn table(&self) -> &Path {
        &self.table
    }
}

impl ScanArgs {
    pub(super) fn table(&self) -> &Path {
        &self.table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_auto_block_cache_is_a_quarter_of_the_machine_at_least_the_default() {
        let min = crate::format::block_cache::DEFAULT_BLOCK_CACHE_BYTES;
        assert_eq!(auto_block_cache_bytes(Some(24 << 30)), 6 << 30);
        assert_eq!(auto_block_cache_bytes(Some(128 << 20)), min);
        assert_eq!(auto_block_cache_bytes(None), min);
    }

    #[test]
    fn columns_and_time_ranges() {
        assert_eq!(parse_column("f").unwrap(), (b"f".to_vec(), None));
        assert_eq!(
            parse_column("f:a\\x00:b").unwrap(),
            (b"f".to_vec(), Some(b"a\x00:b".to_vec()))
        );
        assert_eq!(parse_column("f:").unwrap(), (b"f".to_vec(), Some(vec![])));
        assert!(parse_column(":q").is_err());
        assert_eq!(
            parse_time_range("5,9").unwrap(),
            TimeRange::between(5, 9).unwrap()
        );
        assert!(parse_time_range("9,5").is_err());
        assert!(parse_time_range("9").is_err());
    }
}
