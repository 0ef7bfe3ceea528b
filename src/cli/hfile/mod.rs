//! `hfkit hfile ...`: single-file commands over `format::{reader, writer, verify}`: cells, get,
//! verify and write here, `info` in [`info`], opening the file in [`open`].

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use serde_json::{json, Value};

mod info;
mod open;
mod region;

use super::error::{CliError, EXIT_OK};
use crate::format::bloom::{
    BloomKind, BloomParams, BloomQuery, BloomType, DEFAULT_CHUNK_BYTE_SIZE_HINT,
    DEFAULT_ERROR_RATE, DEFAULT_MAX_FOLD,
};
use crate::format::cell::{first_on_column, first_on_row};
use crate::format::checksum::ChecksumType;
use crate::format::compression::Compression;
use crate::format::encoding::DataBlockEncoding;
use crate::format::text::{limit_field, parse_hex, push_cell_line, CellLineParser};
use crate::format::trailer::{COMPARATOR_CELL_IMPL, COMPARATOR_INNER_STORE, COMPARATOR_KV};
use crate::format::verify::verify;
use crate::format::writer::{BulkLoadInfo, WriterOptions, DEFAULT_BLOCK_SIZE};
use info::{info, key_text, InfoParts};
use open::{fail, open};

#[derive(Debug, Subcommand)]
pub enum HfileCommand {
    /// Print every cell in file order, one per line, in the canonical text form (or as HBase's
    /// `hbase hfile -p` prints them).
    #[command(after_help = concat!(
        "\
HBase's HFilePrettyPrinter (`hbase hfile`) in hfkit's flags: -p is --format hbase (K: <key>
V: <value> T[n]: <tag>, keys and values as Bytes.toStringBinary text, the key as KeyValue's
row/family:qualifier/timestamp/Type/vlen=N/seqid=N), -e is --keys-only, -w ROW is --row ROW;
-m, -s, -b and -h are `hfkit hfile info` with --stats, --blocks and --headers.

",
        examples!(
            "hfkit hfile cells /tmp/hfkit-sample.hfile --seqid",
            "hfkit hfile cells /tmp/hfkit-sample.hfile --format hbase --limit 3",
            "hfkit hfile cells /tmp/hfkit-sample.hfile --keys-only --format hbase --limit 2",
        )
    ))]
    Cells {
        /// The HFile (or `s3://` URL).
        #[arg(required_unless_present = "region")]
        file: Option<PathBuf>,
        /// Every store file of this region directory instead of FILE (HFilePrettyPrinter's
        /// -r): `TABLE/data/<region>`, or an HBase region's directory; each file's output
        /// after a line `== PATH`.
        #[arg(long, value_name = "DIR", conflicts_with = "file")]
        region: Option<PathBuf>,
        /// Also print each cell's MVCC sequence id (an 8th field of the canonical form).
        #[arg(long)]
        seqid: bool,
        /// `canonical` (hex fields) or `hbase` (HFilePrettyPrinter's -p lines).
        #[arg(long, value_enum, default_value = "canonical")]
        format: CellsFormat,
        /// Keys only, no values or tags (HFilePrettyPrinter's -e).
        #[arg(long)]
        keys_only: bool,
        /// Only the cells of this row (toStringBinary text, `\xNN` escapes), found by seeking
        /// (HFilePrettyPrinter's -w).
        #[arg(long, value_name = "ROW")]
        row: Option<String>,
        /// At most this many cells.
        #[arg(long, value_name = "N")]
        limit: Option<u64>,
    },
    /// Show the trailer, FileInfo, index, Bloom filters, block counts and cell statistics.
    #[command(after_help = examples!(
        "hfkit hfile info /tmp/hfkit-sample.hfile",
        "hfkit hfile info /tmp/hfkit-sample.hfile --json",
        "hfkit hfile info --region /tmp/hfkit-users/data/r00003",
    ))]
    Info {
        /// The HFile (or `s3://` URL).
        #[arg(required_unless_present = "region")]
        file: Option<PathBuf>,
        /// Every store file of this region directory instead of FILE (HFilePrettyPrinter's
        /// -r), each after a line `== PATH` (with --json, one array).
        #[arg(long, value_name = "DIR", conflicts_with = "file")]
        region: Option<PathBuf>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Size statistics as HFilePrettyPrinter's -s: key length (per row), value length,
        /// row size in bytes and in cells, each with min, max, mean, median, the 75th, 95th,
        /// 99th and 99.9th percentiles (exact, where HBase's histograms approximate) and count,
        /// and the biggest row.
        #[arg(long)]
        stats: bool,
        /// Every data index entry, level by level (HFilePrettyPrinter's -b): offset, on-disk
        /// size, key.
        #[arg(long)]
        blocks: bool,
        /// Every block's header, in file order (HFilePrettyPrinter's -h).
        #[arg(long)]
        headers: bool,
    },
    /// Check every block's checksum, the block chains, cell order, the index against the
    /// blocks and FileInfo against the cells. Exit 0 when sound, 1 with the problems otherwise.
    #[command(after_help = examples!(
        "hfkit hfile verify /tmp/hfkit-sample.hfile",
        "hfkit hfile verify /tmp/hfkit-sample.hfile --json",
    ))]
    Verify {
        /// The HFile (or `s3://` URL).
        #[arg(required_unless_present = "region")]
        file: Option<PathBuf>,
        /// Every store file of this region directory instead of FILE, each after a line `==
        /// PATH` (with --json, one array); exit 1 when any is not sound.
        #[arg(long, value_name = "DIR", conflicts_with = "file")]
        region: Option<PathBuf>,
        /// Machine-readable report on standard output (`ok`, `blocks`, `data_blocks`,
        /// `cells`, `problems` with each one's block `offset`), also when the file is not
        /// sound (exit 1).
        #[arg(long)]
        json: bool,
    },
    /// Write an HFile from sorted cells in the canonical text form (see `hfkit --help`).
    #[command(after_help = examples!(
        "hfkit hfile write /tmp/hfkit-sample.hfile --cells fixtures/users.cells.txt --compression snappy --encoding fast_diff --bloom row",
        "hfkit hfile write /tmp/hfkit-sample-plain.hfile --cells fixtures/users.cells.txt --plain --comparator inner-store",
    ))]
    Write(WriteArgs),
    /// Print the cells of one row (or one column of it), asking the Bloom filter first.
    /// No cell is an answer (exit 0, as `hfkit get`): stderr says how many cells were found
    /// and whether the Bloom filter ruled the file out. The row and `--column` are written as
    /// `hfkit get` takes them (toStringBinary text), or as hex with `--hex`.
    #[command(after_help = examples!(
        "hfkit hfile get /tmp/hfkit-sample.hfile 001000",
        "hfkit hfile get /tmp/hfkit-sample.hfile 001000 --column d:score",
        "hfkit hfile get /tmp/hfkit-sample.hfile 303031303030 --hex --column 64:73636f7265",
    ))]
    Get {
        /// The HFile (or `s3://` URL).
        file: PathBuf,
        /// The row: toStringBinary text (`\xNN` escapes), as `hfkit get` takes it; hex with
        /// `--hex`.
        row: String,
        /// Only this family (`FAMILY`) or column (`FAMILY:QUALIFIER`; `FAMILY:` for the empty
        /// qualifier), as `hfkit get --column`.
        #[arg(long, value_name = "FAMILY[:QUALIFIER]")]
        column: Option<String>,
        /// ROW and the parts of `--column` are hex (`hfile cells`' form).
        #[arg(long)]
        hex: bool,
        /// The form before `--column`: hex positionals after the row. Refused with what to
        /// write instead, so that an old call is not read as a different row.
        #[arg(hide = true)]
        old_positionals: Vec<String>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ComparatorName {
    /// org.apache.hadoop.hbase.KeyValue$KVComparator: read by HBase 2.x and 3.x.
    Kv,
    /// org.apache.hadoop.hbase.InnerStoreCellComparator: what HBase 3 (master) writes.
    InnerStore,
    /// org.apache.hadoop.hbase.CellComparatorImpl: what HBase master writes given the plain
    /// cell comparator.
    CellComparatorImpl,
}

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The HFile to create (written under a temporary name, renamed when complete).
    out: PathBuf,
    /// Cells, sorted in HBase order, one per line ('-' for standard input).
    #[arg(long)]
    cells: PathBuf,
    /// Block compression: none, gz, snappy, lz4, zstd.
    #[arg(long, default_value = "none")]
    compression: String,
    /// Data block encoding: none, prefix, diff, fast_diff, row_index_v1.
    #[arg(long, default_value = "none")]
    encoding: String,
    /// Bloom filter: none, row, rowcol, rowprefix:N.
    #[arg(long, default_value = "none")]
    bloom: String,
    /// Target data block size in bytes (the family's BLOCKSIZE).
    #[arg(long, default_value_t = DEFAULT_BLOCK_SIZE)]
    block_size: usize,
    /// Block checksum: crc32c, crc32, null.
    #[arg(long, default_value = "crc32c")]
    checksum: String,
    /// Bytes covered by each checksum.
    #[arg(long, default_value_t = 16384)]
    bytes_per_checksum: u32,
    /// Store a tags length in every cell (HBase bulk loads do); required if any cell has tags.
    #[arg(long)]
    include_tags: bool,
    /// Leave out the per-cell MVCC sequence id (HBase bulk loads include it, as 0).
    #[arg(long)]
    no_mvcc: bool,
    /// hfile.CREATE_TIME_TS in epoch ms (default: now).
    #[arg(long)]
    create_time: Option<i64>,
    /// Add HBase's bulk-load FileInfo keys with this BULKLOAD_TIMESTAMP (epoch ms).
    #[arg(long)]
    bulkload_time: Option<i64>,
    /// BULKLOAD_SOURCE_TASK for --bulkload-time.
    #[arg(long, default_value = "hfkit")]
    bulkload_task: String,
    /// Write what HBase's plain HFile writer writes: no store-file keys, no Bloom.
    #[arg(long)]
    plain: bool,
    /// Comparator class name in the trailer.
    #[arg(long, value_enum, default_value = "kv")]
    comparator: ComparatorName,
    /// Max bytes of an index block before the index grows a level (hfile.index.block.max.size).
    #[arg(long, default_value_t = crate::format::index::DEFAULT_MAX_CHUNK_SIZE)]
    index_block_size: usize,
    /// Least entries of an index block before it may be cut (hfile.index.block.min.entries).
    #[arg(long, default_value_t = crate::format::index::DEFAULT_MIN_ENTRIES)]
    index_min_entries: usize,
    /// Bloom chunk size in bytes, rounded up to a multiple of 2^--bloom-max-fold
    /// (io.storefile.bloom.block.size).
    #[arg(long, default_value_t = DEFAULT_CHUNK_BYTE_SIZE_HINT)]
    bloom_block_size: usize,
    /// Bloom false-positive rate per lookup (io.storefile.bloom.error.rate).
    #[arg(long, default_value_t = DEFAULT_ERROR_RATE)]
    bloom_error_rate: f32,
    /// How many times a Bloom chunk may be folded in half (io.storefile.bloom.max.fold).
    #[arg(long, default_value_t = DEFAULT_MAX_FOLD)]
    bloom_max_fold: u32,
    /// Dictionary-compress the tags in encoded blocks (the family's COMPRESS_TAGS; with
    /// --include-tags and an --encoding other than none, as HBase).
    #[arg(long)]
    compress_tags: bool,
    /// Compression level: zstd 1 to 22 (hbase.io.compress.zstd.level, default 3), gz 0 to 9
    /// (default 6); other codecs have none.
    #[arg(long)]
    compression_level: Option<i32>,
    /// MAJOR_COMPACTION_KEY of a --bulkload-time file: false marks it for minor compactions
    /// with the store's other files.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    major_compaction: bool,
    /// EXCLUDE_FROM_MINOR_COMPACTION of a --bulkload-time file (HFileOutputFormat2's
    /// hbase.mapreduce.hfileoutputformat.compaction.exclude).
    #[arg(long)]
    exclude_from_minor_compaction: bool,
}

pub fn run(cmd: HfileCommand, out: &mut dyn Write) -> Result<i32, CliError> {
    match cmd {
        HfileCommand::Cells {
            file,
            region,
            seqid,
            format,
            keys_only,
            row,
            limit,
        } => {
            let row = row
                .map(|r| crate::table::to_bytes_binary(&r))
                .transpose()
                .map_err(|e| CliError::usage(format!("--row: {e}")))?;
            let opts = CellsOptions {
                seqid,
                format,
                keys_only,
                row,
                limit,
            };
            one_or_region(file, region, false, out, |f, out| cells(f, &opts, out))
        }
        HfileCommand::Info {
            file,
            region,
            json,
            stats,
            blocks,
            headers,
        } => {
            let parts = InfoParts {
                stats,
                blocks,
                headers,
            };
            one_or_region(file, region, json, out, |f, out| info(f, json, parts, out))
        }
        HfileCommand::Verify { file, region, json } => {
            one_or_region(file, region, json, out, |f, out| verify_cmd(f, json, out))
        }
        HfileCommand::Write(args) => write(args, out),
        HfileCommand::Get {
            file,
            row,
            column,
            hex,
            old_positionals,
        } => {
            if !old_positionals.is_empty() {
                return Err(CliError::usage(format!(
                    "hfile get: unexpected {}: the family and qualifier go in --column \
                     FAMILY:QUALIFIER, and a row written as hex needs --hex (e.g. `hfkit hfile \
                     get FILE {row} --hex --column {}`)",
                    old_positionals.join(" "),
                    old_positionals.join(":")
                )));
            }
            let (row, family, qualifier) = get_coordinates(&row, column.as_deref(), hex)?;
            get(&file, row, family, qualifier, out)
        }
    }
}

/// Runs `one` on FILE, or on every store file of the region directory given instead.
fn one_or_region(
    file: Option<PathBuf>,
    region: Option<PathBuf>,
    json: bool,
    out: &mut dyn Write,
    mut one: impl FnMut(&Path, &mut dyn Write) -> Result<i32, CliError>,
) -> Result<i32, CliError> {
    match (file, region) {
        (Some(f), _) => one(&f, out),
        (None, Some(dir)) => region::each_file(&dir, json, out, one),
        (None, None) => Err(CliError::usage("give FILE or --region DIR")),
    }
}

/// How `hfile cells` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CellsFormat {
    /// Canonical cell lines: hex fields (formats/hfile.md §"Cells").
    Canonical,
    /// HFilePrettyPrinter's -p lines.
    Hbase,
}

/// What `hfile cells` prints of which cells.
struct CellsOptions {
    seqid: bool,
    format: CellsFormat,
    keys_only: bool,
    row: Option<Vec<u8>>,
    limit: Option<u64>,
}

/// A cell as HBase's `KeyValue.toString` prints it: row/family:qualifier/timestamp/Type
/// (toStringBinary text; `LATEST_TIMESTAMP` for Long.MAX_VALUE) then `/vlen=N/seqid=N`.
fn push_hbase_key(line: &mut String, c: &crate::format::cell::CellRef<'_>) {
    use crate::table::to_string_binary as sb;
    line.push_str(&sb(c.row));
    line.push('/');
    line.push_str(&sb(c.family));
    if !c.family.is_empty() {
        line.push(':');
    }
    line.push_str(&sb(c.qualifier));
    line.push('/');
    match c.timestamp {
        i64::MAX => line.push_str("LATEST_TIMESTAMP"),
        i64::MIN => line.push_str("OLDEST_TIMESTAMP"),
        t => line.push_str(&t.to_string()),
    }
    line.push('/');
    line.push_str(c.cell_type.name());
    line.push_str(&format!("/vlen={}/seqid={}", c.value.len(), c.seq_id));
}

fn cells(file: &Path, o: &CellsOptions, out: &mut dyn Write) -> Result<i32, CliError> {
    let r = open(file)?;
    let mut s = r.scanner().map_err(|e| fail(file, e))?;
    let mut line = String::with_capacity(256);
    let mut printed = 0u64;
    let mut next = match &o.row {
        Some(row) => s
            .seek(&first_on_row(row))
            .map_err(|e| fail(file, e))?
            .map(|c| c.to_owned()),
        None => None,
    };
    loop {
        if o.limit.is_some_and(|l| printed >= l) {
            break;
        }
        let cell = match next.take() {
            Some(c) => c,
            None if o.row.is_some() && printed == 0 => break,
            None => match s.next().map_err(|e| fail(file, e))? {
                Some(c) => c.to_owned(),
                None => break,
            },
        };
        if o.row.as_ref().is_some_and(|r| *r != cell.row) {
            break;
        }
        let c = cell.as_ref();
        line.clear();
        match o.format {
            CellsFormat::Canonical if o.keys_only => {
                let key = c.key();
                line.push_str(&key_text(&key));
                if o.seqid {
                    line.push_str(&format!(" {}", c.seq_id));
                }
            }
            CellsFormat::Canonical => push_cell_line(&mut line, &c, o.seqid),
            CellsFormat::Hbase => {
                line.push_str("K: ");
                push_hbase_key(&mut line, &c);
                if !o.keys_only {
                    line.push_str(" V: ");
                    line.push_str(&crate::table::to_string_binary(c.value));
                    for (i, (ty, v)) in crate::hbase::mob::tags(c.tags).enumerate() {
                        line.push_str(&format!(
                            " T[{i}]: [Tag type : {ty}, value : {}]",
                            crate::table::to_string_binary(v)
                        ));
                    }
                }
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
        printed += 1;
        if o.row.is_some() {
            // The rest of the row, read on from the seek.
            next = s.next().map_err(|e| fail(file, e))?.map(|c| c.to_owned());
            if next.is_none() {
                break;
            }
        }
    }
    Ok(EXIT_OK)
}

fn verify_cmd(file: &Path, json: bool, out: &mut dyn Write) -> Result<i32, CliError> {
    let r = open(file)?;
    let report = verify(&r);
    if json {
        let problems: Vec<Value> = report
            .problems
            .iter()
            .map(|p| json!({"offset": p.offset, "message": p.message}))
            .collect();
        let doc = json!({
            "file": file.display().to_string(),
            "ok": report.is_ok(),
            "blocks": report.blocks,
            "data_blocks": report.data_blocks,
            "cells": report.cells,
            "problems": problems,
        });
        writeln!(out, "{doc:#}")?;
        return if report.is_ok() {
            Ok(EXIT_OK)
        } else {
            Err(CliError::failure(format!(
                "{}: {} problem(s)",
                file.display(),
                report.problems.len()
            )))
        };
    }
    if report.is_ok() {
        writeln!(
            out,
            "{}: OK ({} blocks, {} data blocks, {} cells)",
            file.display(),
            report.blocks,
            report.data_blocks,
            report.cells
        )?;
        Ok(EXIT_OK)
    } else {
        let mut msg = format!("{}: {} problem(s)", file.display(), report.problems.len());
        for p in &report.problems {
            msg.push_str(&format!("\n  {p}"));
        }
        Err(CliError::failure(msg))
    }
}

/// `--compression`: a codec hfkit writes, by HBase's name in any case.
pub(super) fn compression_arg(s: &str) -> Result<Compression, CliError> {
    Compression::from_name(s)
        .filter(|c| Compression::SUPPORTED.contains(c))
        .ok_or_else(|| {
            CliError::usage(format!(
                "--compression: '{s}' is not one of none, gz, snappy, lz4, zstd"
            ))
        })
}

/// `--encoding`: a data block encoding by HBase's name in any case.
pub(super) fn encoding_arg(s: &str) -> Result<DataBlockEncoding, CliError> {
    DataBlockEncoding::from_name(s).ok_or_else(|| {
        CliError::usage(format!(
            "--encoding: '{s}' is not one of none, prefix, diff, fast_diff, row_index_v1"
        ))
    })
}

/// `--bloom`: `none`, `row`, `rowcol` or `rowprefix:N` (HBase's names too); `None` for none.
pub(super) fn bloom_arg(s: &str) -> Result<Option<BloomType>, CliError> {
    BloomType::parse(s).map_err(|e| CliError::usage(format!("--bloom: {e}")))
}

fn write(a: WriteArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let compression = compression_arg(&a.compression)?;
    let encoding = encoding_arg(&a.encoding)?;
    let checksum_type = ChecksumType::from_name(&a.checksum).ok_or_else(|| {
        CliError::usage(format!(
            "--checksum: '{}' is not one of crc32c, crc32, null",
            a.checksum
        ))
    })?;
    let bloom = bloom_arg(&a.bloom)?;
    if a.plain && bloom.is_some() {
        return Err(CliError::usage(
            "--plain files carry no Bloom filter; drop --bloom or --plain",
        ));
    }
    if a.bulkload_time.is_none() && (!a.major_compaction || a.exclude_from_minor_compaction) {
        return Err(CliError::usage(
            "--major-compaction and --exclude-from-minor-compaction set bulk-load keys: give \
             --bulkload-time too",
        ));
    }
    if !(a.bloom_error_rate > 0.0 && a.bloom_error_rate < 1.0) {
        return Err(CliError::usage(format!(
            "--bloom-error-rate: {} is not between 0 and 1",
            a.bloom_error_rate
        )));
    }
    if a.index_min_entries < 2 {
        return Err(CliError::usage("--index-min-entries: at least 2"));
    }
    let now = crate::format::cell::now_ms();
    let opts = WriterOptions {
        block_size: a.block_size,
        compression,
        encoding,
        checksum_type,
        bytes_per_checksum: a.bytes_per_checksum,
        include_tags: a.include_tags,
        include_mvcc: !a.no_mvcc,
        compress_tags: a.compress_tags,
        compression_level: a.compression_level,
        index_block_size: a.index_block_size,
        index_min_entries: a.index_min_entries,
        create_time: a.create_time.unwrap_or(now),
        comparator: match a.comparator {
            ComparatorName::Kv => COMPARATOR_KV,
            ComparatorName::InnerStore => COMPARATOR_INNER_STORE,
            ComparatorName::CellComparatorImpl => COMPARATOR_CELL_IMPL,
        }
        .to_string(),
        store_file: !a.plain,
        bulk_load: a.bulkload_time.map(|t| BulkLoadInfo {
            timestamp: t,
            task: a.bulkload_task.clone(),
            exclude_from_minor_compaction: a.exclude_from_minor_compaction,
            major_compaction: a.major_compaction,
        }),
        bloom,
        bloom_params: BloomParams {
            error_rate: a.bloom_error_rate,
            chunk_byte_size_hint: a.bloom_block_size,
            max_fold: a.bloom_max_fold,
            ..BloomParams::default()
        },
    };
    let include_tags = opts.include_tags;
    let cells_name = a.cells.display().to_string();
    let input: Box<dyn BufRead> = if a.cells.as_os_str() == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        Box::new(BufReader::new(
            File::open(&a.cells).map_err(|e| CliError::failure(format!("{cells_name}: {e}")))?,
        ))
    };
    let mut input = input;
    let summary = crate::format::writer::write_file_atomically(&a.out, opts, |w| {
        // One line buffer and one parser for every line (no allocation per cell).
        let mut line = Vec::new();
        let mut parser = CellLineParser::default();
        let mut lineno = 0usize;
        loop {
            line.clear();
            let n = input
                .read_until(b'\n', &mut line)
                .map_err(|e| format!("{cells_name}: line {}: {e}", lineno + 1))?;
            if n == 0 {
                break;
            }
            lineno += 1;
            if line.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            let cell = parser.parse(&line).map_err(|e| format!("{cells_name}: line {lineno}: {e}"))?;
            // What HBase's client would refuse (an empty row, a negative timestamp, lengths).
            if let Err(limit) = cell.check_mutation() {
                return Err(format!("{cells_name}: line {lineno}: {}: {limit}", limit_field(&limit)));
            }
            if !include_tags && !cell.tags.is_empty() {
                return Err(format!("{cells_name}: line {lineno}: the cell has tags; pass --include-tags to keep them"));
            }
            w.append(&cell).map_err(|e| match e {
                crate::format::FormatError::OutOfOrder { .. } => format!(
                    "{cells_name}: line {lineno}: cell is out of order (cells must be sorted by row, family, qualifier, timestamp descending, type descending)"
                ),
                other => format!("{cells_name}: line {lineno}: {other}"),
            })?;
        }
        Ok(())
    })
    .map_err(|e| CliError::failure(e.to_string()))?;
    writeln!(
        out,
        "wrote {} ({} cells, {} bytes, {} data blocks, {}-level index)",
        a.out.display(),
        summary.entry_count,
        summary.file_size,
        summary.data_blocks,
        summary.index_levels
    )?;
    Ok(EXIT_OK)
}

/// A family, and maybe a qualifier.
type Column = (Option<Vec<u8>>, Option<Vec<u8>>);

/// A row, and `--column`'s family and qualifier.
type Coordinates = (Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);

/// `hfile get`'s row and `--column` as bytes: toStringBinary text, or hex with `hex`.
fn get_coordinates(row: &str, column: Option<&str>, hex: bool) -> Result<Coordinates, CliError> {
    let bytes = |what: &str, s: &str| {
        if hex {
            parse_hex(s).map_err(|e| CliError::usage(format!("{what} '{s}' (--hex): {e}")))
        } else {
            crate::table::to_bytes_binary(s)
                .map_err(|e| CliError::usage(format!("{what} '{s}': {e}")))
        }
    };
    let row = bytes("ROW", row)?;
    let (family, qualifier): Column = match column {
        None => (None, None),
        Some(c) => {
            let (f, q) = match c.split_once(':') {
                Some((f, q)) => (f, Some(q)),
                None => (c, None),
            };
            if f.is_empty() {
                return Err(CliError::usage(format!(
                    "--column '{c}': expected FAMILY or FAMILY:QUALIFIER"
                )));
            }
            let q = q.map(|q| bytes("--column qualifier", q)).transpose()?;
            (Some(bytes("--column family", f)?), q)
        }
    };
    Ok((row, family, qualifier))
}

fn get(
    file: &Path,
    row: Vec<u8>,
    family: Option<Vec<u8>>,
    qualifier: Option<Vec<u8>>,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let r = open(file)?;
    let query = match (&family, &qualifier) {
        (Some(f), Some(q)) => BloomQuery::RowCol {
            row: &row,
            family: f,
            qualifier: q,
        },
        _ => BloomQuery::Row(&row),
    };
    let bloom_name = r
        .general_bloom()
        .map(|b| match b.kind() {
            BloomKind::General(t) => t.hbase_name().to_string(),
            BloomKind::DeleteFamily => "DELETE_FAMILY".to_string(),
        })
        .unwrap_or_else(|| "none".to_string());
    if !r.might_contain(query).map_err(|e| fail(file, e))? {
        note!("0 cell(s); bloom filter {bloom_name}: ruled the file out (no data block read)");
        return Ok(EXIT_OK);
    }
    let key = match (&family, &qualifier) {
        (Some(f), Some(q)) => first_on_column(&row, f, q),
        _ => first_on_row(&row),
    };
    let mut s = r.scanner().map_err(|e| fail(file, e))?;
    let mut n = 0u64;
    let mut line = String::new();
    let mut cur = s
        .seek(&key)
        .map_err(|e| fail(file, e))?
        .map(|c| c.to_owned());
    while let Some(c) = cur {
        if c.row != row {
            break;
        }
        let fam_ok = family.as_ref().is_none_or(|f| &c.family == f);
        let col_ok = qualifier.as_ref().is_none_or(|q| &c.qualifier == q);
        if fam_ok && col_ok {
            line.clear();
            push_cell_line(&mut line, &c.as_ref(), false);
            line.push('\n');
            out.write_all(line.as_bytes())?;
            n += 1;
        } else if qualifier.is_some() && fam_ok {
            break;
        }
        cur = s.next().map_err(|e| fail(file, e))?.map(|c| c.to_owned());
    }
    let verdict = if r.general_bloom().is_some() {
        "maybe present"
    } else {
        "none in this file"
    };
    note!("{n} cell(s); bloom filter {bloom_name}: {verdict}");
    // Nothing found is an answer, not a failure: as `hfkit get` (and the HBase shell's get).
    Ok(EXIT_OK)
}
