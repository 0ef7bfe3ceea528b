//! Input sources: CSV/TSV files (plain, `.gz`, `.zst`) and Parquet files, read in batches of
//! records with their positions, so that every error can name the file and line (or Parquet row
//! group and row). Spec: `formats/import.md` §"Sources".
//!
//! Every source yields records as byte fields addressed by column index ([`Batch`]); Parquet
//! values are rendered as the text a CSV export of the same data would hold, so the same data
//! gives the same cells from either format.

pub mod arrow;
pub mod columns;
mod error;
pub mod input;
pub mod parquet;
pub(crate) mod remote;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::Arc;

use crate::source::columns::ColumnBatch;
pub use error::{ColumnNames, SourceError};

/// Refuses column names that are not unique, naming the first name given twice and both of
/// its (1-based) positions.
pub fn check_unique_columns(
    path: &Path,
    names_from: ColumnNames,
    names: &[String],
) -> Result<(), SourceError> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, n) in names.iter().enumerate() {
        if let Some(first) = seen.insert(n.as_str(), i) {
            return Err(SourceError::DuplicateColumn {
                path: path.to_path_buf(),
                names: names_from,
                name: n.clone(),
                first: first + 1,
                second: i + 1,
            });
        }
    }
    Ok(())
}

/// CSV dialect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvOptions {
    pub delimiter: u8,
    pub quote: u8,
    /// Escape character inside quoted fields; `None` = doubled quotes (RFC 4180).
    pub escape: Option<u8>,
    /// Lines starting with this byte are skipped (so is a record whose first field, after
    /// unquoting, starts with it).
    pub comment: Option<u8>,
    /// The first line names the columns.
    pub has_header: bool,
    /// Column names when the file has no header (or to override it).
    pub columns: Option<Vec<String>>,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            delimiter: b',',
            quote: b'"',
            escape: None,
            comment: None,
            has_header: true,
            columns: None,
        }
    }
}

/// A batch of records from one file.
#[derive(Debug, Default)]
pub struct Batch {
    pub file: Option<Arc<PathBuf>>,
    /// Records; field `i` is column `i` of the source's columns. Empty when `columns` holds
    /// the batch.
    pub records: Vec<csv::ByteRecord>,
    /// The batch column by column, when its source gives it so (Parquet read by the import:
    /// its fields read in place, no record built per row); `None` otherwise.
    pub columns: Option<ColumnBatch>,
    /// 1-based line (CSV) or row-in-file (Parquet) of each record.
    pub lines: Vec<u64>,
    /// Parquet row group of each record (empty for CSV).
    pub row_groups: Vec<usize>,
    /// Set on a CSV file's last batch when the file's last line, this one, has no line end:
    /// its record is imported, but the file may have been cut short there.
    pub unterminated_line: Option<u64>,
}

impl Batch {
    /// Number of records.
    pub fn len(&self) -> usize {
        match &self.columns {
            Some(c) => c.len(),
            None => self.records.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fields of record `i`, as text (for messages).
    pub fn fields_text(&self, i: usize) -> Vec<String> {
        let mut rec = csv::ByteRecord::new();
        let rec = match &self.columns {
            Some(c) => {
                c.record(i, &mut rec);
                &rec
            }
            None => &self.records[i],
        };
        rec.iter()
            .map(|f| String::from_utf8_lossy(f).to_string())
            .collect()
    }

    /// Where record `i` is.
    pub fn record_position(&self, i: usize) -> RecordPosition {
        RecordPosition {
            file: self.file.clone(),
            at: match (self.row_groups.get(i), self.lines.get(i)) {
                (Some(&row_group), Some(&row)) => Some(RecordAt::Row { row_group, row }),
                (None, Some(&line)) => Some(RecordAt::Line(line)),
                _ => None,
            },
        }
    }

    /// "file: line N" / "file: row group G, row N" for record `i`.
    pub fn position(&self, i: usize) -> String {
        self.record_position(i).to_string()
    }
}

/// Where a record is in its input: the file, and the line (CSV) or the row group and row
/// (Parquet). Shown as "file: line N" / "file: row group G, row N".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordPosition {
    pub file: Option<Arc<PathBuf>>,
    pub at: Option<RecordAt>,
}

/// A record's place within its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordAt {
    /// 1-based line of a CSV file.
    Line(u64),
    /// Parquet row group and row within it, both from 0.
    Row { row_group: usize, row: u64 },
}

impl std::fmt::Display for RecordPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
        }
        match self.at {
            Some(RecordAt::Row { row_group, row }) => {
                write!(f, ": row group {row_group}, row {row}")
            }
            Some(RecordAt::Line(line)) => write!(f, ": line {line}"),
            None => Ok(()),
        }
    }
}

/// Expands globs (`data/*.csv`) and plain paths, in order, without duplicates.
pub fn expand_paths(patterns: &[String]) -> Result<Vec<PathBuf>, SourceError> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in patterns {
        if crate::source::remote::is_remote(Path::new(p)) {
            out.extend(crate::source::remote::expand(p)?);
        } else if p.contains(['*', '?', '[']) {
            let mut matched: Vec<PathBuf> = glob::glob(p)
                .map_err(|e| SourceError::Invalid(format!("bad glob '{p}': {e}")))?
                .filter_map(|r| r.ok())
                .filter(|p| p.is_file())
                .collect();
            if matched.is_empty() {
                return Err(SourceError::Invalid(format!("'{p}' matches no file")));
            }
            matched.sort();
            out.extend(matched);
        } else {
            let path = PathBuf::from(p);
            match std::fs::metadata(&path) {
                Ok(m) if m.is_dir() => {
                    return Err(SourceError::Invalid(format!(
                        "{}: is a directory, not an input file; to read the files in it, \
                         give a glob such as '{}'",
                        path.display(),
                        path.join("*").display()
                    )))
                }
                Ok(_) => {}
                Err(source) => return Err(SourceError::Io { path, source }),
            }
            out.push(path);
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    Ok(out)
}

/// A compressed input's stream: what a message needs to say where it breaks.
struct CompressedStream {
    /// "gzip" or "zstd".
    kind: &'static str,
    /// Compressed bytes the decompressor has taken so far.
    consumed: Arc<AtomicU64>,
    /// The file's size.
    len: u64,
}

impl CompressedStream {
    /// What is wrong with a stream whose decompressor failed with `err`: truncated when the
    /// whole file was taken, else damaged where the decompressor stopped.
    fn describe(&self, err: &std::io::Error) -> String {
        let at = self.consumed.load(Ordering::Relaxed);
        if at >= self.len {
            format!(
                "the {} stream is truncated: the file ends at byte {} before the stream does \
                 ({err})",
                self.kind, self.len
            )
        } else {
            format!(
                "the {} stream is damaged at byte {at} of {} ({err})",
                self.kind, self.len
            )
        }
    }
}

/// A buffered file that counts the bytes taken from it (by a decompressor reading it as a
/// [`BufRead`]).
struct Counted<R> {
    inner: R,
    consumed: Arc<AtomicU64>,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.inner.consume(n);
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// Opens a file, decompressing `.gz` and `.zst` by extension.
fn open_maybe_compressed(
    path: &Path,
) -> Result<(Box<dyn Read + Send>, Option<CompressedStream>), SourceError> {
    let io = |source| SourceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let (r, len): (BufReader<Box<dyn Read + Send>>, u64) = if crate::source::remote::is_remote(path)
    {
        let (input, len) = crate::source::remote::stream(path)?;
        (BufReader::with_capacity(1 << 20, input), len)
    } else {
        let f = File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        (BufReader::with_capacity(1 << 20, Box::new(f)), len)
    };
    let kind = match path.extension().and_then(|e| e.to_str()) {
        Some("gz") => "gzip",
        Some("zst") => "zstd",
        _ => return Ok((Box::new(r), None)),
    };
    let consumed = Arc::new(AtomicU64::new(0));
    let counted = Counted {
        inner: r,
        consumed: consumed.clone(),
    };
    let decoder: Box<dyn Read + Send> = if kind == "gzip" {
        Box::new(flate2::bufread::MultiGzDecoder::new(counted))
    } else {
        Box::new(zstd::stream::read::Decoder::with_buffer(counted).map_err(io)?)
    };
    Ok((
        decoder,
        Some(CompressedStream {
            kind,
            consumed,
            len,
        }),
    ))
}

/// Reads one CSV file in batches.
pub struct CsvSource {
    path: Arc<PathBuf>,
    reader: csv::Reader<Box<dyn Read + Send>>,
    columns: Vec<String>,
    expected_fields: usize,
    comment: Option<u8>,
    compressed: Option<CompressedStream>,
    /// A header was expected and the file has not a single line (so no record either).
    empty: bool,
    /// The last byte the parser took from the (decompressed) input; 256 before any.
    last_byte: Arc<AtomicU16>,
    /// The line of the last record read.
    last_line: u64,
    /// The end of the file (or of the split) was reached.
    ended: bool,
    /// The offset in the file of the first byte the parser reads (a split's first record).
    base: u64,
    /// Records starting at or past this offset are not read (the split's end).
    limit: u64,
}

/// An input that remembers its last byte, to tell a file whose last line has no line end.
struct LastByte<R> {
    inner: R,
    last: Arc<AtomicU16>,
}

impl<R: Read> Read for LastByte<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(b) = buf[..n].last() {
            self.last.store(u16::from(*b), Ordering::Relaxed);
        }
        Ok(n)
    }
}

impl CsvSource {
    pub fn open(path: &Path, opts: &CsvOptions) -> Result<CsvSource, SourceError> {
        let (input, compressed) = open_maybe_compressed(path)?;
        let last_byte = Arc::new(AtomicU16::new(256));
        let input: Box<dyn Read + Send> = Box::new(LastByte {
            inner: input,
            last: last_byte.clone(),
        });
        let mut b = csv::ReaderBuilder::new();
        b.delimiter(opts.delimiter)
            .quote(opts.quote)
            .has_headers(opts.has_header)
            .flexible(true);
        if let Some(e) = opts.escape {
            b.escape(Some(e)).double_quote(false);
        }
        let mut reader = b.from_reader(input);
        let header: Vec<String> = if opts.has_header {
            reader
                .byte_headers()
                .map_err(|e| csv_error(path, &e, 1, compressed.as_ref()))?
                .iter()
                .map(|h| String::from_utf8_lossy(h).trim().to_string())
                .collect()
        } else {
            Vec::new()
        };
        let columns = match &opts.columns {
            Some(c) => {
                check_unique_columns(path, ColumnNames::Given, c)?;
                c.clone()
            }
            None if opts.has_header => {
                check_unique_columns(path, ColumnNames::Header, &header)?;
                header.clone()
            }
            None => {
                return Err(SourceError::Invalid(format!(
                    "{}: the file has no header; name its columns",
                    path.display()
                )))
            }
        };
        let expected_fields = if opts.has_header {
            header.len()
        } else {
            columns.len()
        };
        Ok(CsvSource {
            path: Arc::new(path.to_path_buf()),
            reader,
            columns,
            expected_fields,
            comment: opts.comment,
            compressed,
            empty: opts.has_header && header.is_empty(),
            last_byte,
            last_line: 0,
            ended: false,
            base: 0,
            limit: u64::MAX,
        })
    }

    /// The records of a plain (uncompressed) CSV file whose first byte lies in `start..end`:
    /// a split of the file, as Hadoop's LineRecordReader reads one (`formats/python.md`
    /// §"Bulk load of files"). A split that does not start at 0 begins after the first line
    /// end at or after byte `start - 1` (the line it cuts belongs to the split before); it
    /// reads every record that starts before `end`, the last one to its end wherever that
    /// is. The columns are the file's header's (read from its first line). A quoted field
    /// holding a line end must not cross a split's start: such files are read whole.
    /// Positions in messages are lines counted from the split's first record, named so.
    pub fn open_range(
        path: &Path,
        opts: &CsvOptions,
        start: u64,
        end: u64,
    ) -> Result<CsvSource, SourceError> {
        if CsvSource::is_compressed(path) && (start > 0 || end < u64::MAX) {
            return Err(SourceError::Invalid(format!(
                "{}: a compressed file is read whole, not in byte ranges",
                path.display()
            )));
        }
        let mut whole = CsvSource::open(path, opts)?;
        whole.limit = end;
        if start == 0 {
            return Ok(whole);
        }
        let io = |source| SourceError::Io {
            path: path.to_path_buf(),
            source,
        };
        let input: Box<dyn Read + Send> = if crate::source::remote::is_remote(path) {
            crate::source::remote::stream_from(path, start - 1)?.0
        } else {
            use std::io::{Seek, SeekFrom};
            let mut f = File::open(path).map_err(io)?;
            f.seek(SeekFrom::Start(start - 1)).map_err(io)?;
            Box::new(f)
        };
        let mut input = BufReader::with_capacity(1 << 20, input);
        // The rest of the line the split's start cuts (or, when byte start - 1 is a line end,
        // that line end alone) belongs to the split before.
        let mut skipped = Vec::new();
        let cut = input.read_until(b'\n', &mut skipped).map_err(io)? as u64;
        let first = start - 1 + cut;
        let label = PathBuf::from(format!("{} (the split from byte {first})", path.display()));
        let last_byte = Arc::new(AtomicU16::new(256));
        let counted: Box<dyn Read + Send> = Box::new(LastByte {
            inner: input,
            last: last_byte.clone(),
        });
        let mut b = csv::ReaderBuilder::new();
        b.delimiter(opts.delimiter)
            .quote(opts.quote)
            .has_headers(false)
            .flexible(true);
        if let Some(e) = opts.escape {
            b.escape(Some(e)).double_quote(false);
        }
        Ok(CsvSource {
            path: Arc::new(label),
            reader: b.from_reader(counted),
            last_byte,
            last_line: 0,
            ended: skipped.last() != Some(&b'\n') || first >= end,
            base: first,
            limit: end,
            ..whole
        })
    }

    /// Column names, in field order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Whether the file has no line at all (nor a header, though one was expected): it holds
    /// no record, and no column names to check a mapping against.
    pub fn is_empty(&self) -> bool {
        self.empty
    }

    /// Bytes of the (decompressed) input consumed so far: for a plain file, the offset just
    /// past the last record read.
    pub fn bytes_read(&self) -> u64 {
        self.reader.position().byte()
    }

    /// Whether the file is decompressed on the fly (`.gz`, `.zst`): its size on disk then says
    /// little about the number of records.
    pub fn is_compressed(path: &Path) -> bool {
        matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("gz") | Some("zst")
        )
    }

    /// Reads up to `max` records into `batch` (cleared first). Returns false at end of file.
    /// A record with the wrong number of fields is an error naming its line.
    pub fn next_batch(&mut self, batch: &mut Batch, max: usize) -> Result<bool, SourceError> {
        batch.file = Some(self.path.clone());
        batch.lines.clear();
        batch.row_groups.clear();
        batch.unterminated_line = None;
        if self.ended {
            return Ok(false);
        }
        let mut n = 0;
        while n < max {
            if batch.records.len() <= n {
                batch.records.push(csv::ByteRecord::new());
            }
            let rec = &mut batch.records[n];
            match self.reader.read_byte_record(rec) {
                Ok(true) => {}
                Ok(false) => {
                    // The last record's line had no line end: said on this batch (a batch of
                    // no record, if the record came in the one before).
                    self.ended = true;
                    let last = self.last_byte.load(Ordering::Relaxed);
                    if self.last_line > 0 && last != u16::from(b'\n') && last != u16::from(b'\r') {
                        batch.unterminated_line = Some(self.last_line);
                        batch.records.truncate(n);
                        return Ok(true);
                    }
                    break;
                }
                Err(e) => {
                    // An I/O error has no position of its own: the line being read is the
                    // one after the last record.
                    let line = self.reader.position().line();
                    return Err(csv_error(&self.path, &e, line, self.compressed.as_ref()));
                }
            }
            // A split's records are those that start before its end.
            let at = self.base + rec.position().map_or(0, |p| p.byte());
            if at >= self.limit {
                self.ended = true;
                break;
            }
            let line = rec.position().map(|p| p.line()).unwrap_or(0);
            self.last_line = line;
            // Comments are skipped here rather than by the csv crate, whose line numbers do
            // not count comment lines.
            if let Some(c) = self.comment {
                if rec.get(0).is_some_and(|f| f.first() == Some(&c)) {
                    continue;
                }
            }
            if rec.len() != self.expected_fields {
                return Err(SourceError::Csv {
                    path: self.path.to_path_buf(),
                    line,
                    detail: format!(
                        "expected {} fields, found {}",
                        self.expected_fields,
                        rec.len()
                    ),
                });
            }
            batch.lines.push(line);
            n += 1;
        }
        batch.records.truncate(n);
        Ok(n > 0)
    }
}

/// A CSV error as a [`SourceError`] naming the file and line (`line` when the error has no
/// position of its own, as an I/O error has not).
fn csv_error(
    path: &Path,
    e: &csv::Error,
    line: u64,
    compressed: Option<&CompressedStream>,
) -> SourceError {
    let line = e.position().map_or(line, |p| p.line());
    let detail = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("expected {expected_len} fields, found {len}")
        }
        csv::ErrorKind::Io(err) => match compressed {
            Some(c) => c.describe(err),
            None => format!("read error: {err}"),
        },
        _ => e.to_string(),
    };
    SourceError::Csv {
        path: path.to_path_buf(),
        line,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_header_quotes_comments_and_compressed_files() {
        let dir = tempfile::tempdir().unwrap();
        let text = "id,name,note\n# a comment\n1,ann,\"hello, world\"\n2,bob,\"say \"\"hi\"\"\"\n";
        let plain = dir.path().join("a.csv");
        std::fs::write(&plain, text).unwrap();
        let gz = dir.path().join("a.csv.gz");
        let mut e = flate2::write::GzEncoder::new(
            File::create(&gz).unwrap(),
            flate2::Compression::default(),
        );
        e.write_all(text.as_bytes()).unwrap();
        e.finish().unwrap();
        let zst = dir.path().join("a.csv.zst");
        std::fs::write(&zst, zstd::encode_all(text.as_bytes(), 3).unwrap()).unwrap();
        for p in [&plain, &gz, &zst] {
            let opts = CsvOptions {
                comment: Some(b'#'),
                ..CsvOptions::default()
            };
            let mut s = CsvSource::open(p, &opts).unwrap();
            assert_eq!(s.columns(), ["id", "name", "note"]);
            let mut b = Batch::default();
            assert!(s.next_batch(&mut b, 100).unwrap());
            assert_eq!(b.records.len(), 2);
            assert_eq!(&b.records[0][2], b"hello, world");
            assert_eq!(&b.records[1][2], b"say \"hi\"");
            assert_eq!(b.lines, vec![3, 4]);
            assert!(b.position(1).ends_with(": line 4"));
            assert!(!s.next_batch(&mut b, 100).unwrap());
        }
    }

    #[test]
    fn wrong_field_count_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.tsv");
        std::fs::write(&p, "a\tb\n1\t2\n3\n").unwrap();
        let opts = CsvOptions {
            delimiter: b'\t',
            ..CsvOptions::default()
        };
        let mut s = CsvSource::open(&p, &opts).unwrap();
        let err = s
            .next_batch(&mut Batch::default(), 10)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("bad.tsv: line 3: expected 2 fields, found 1"),
            "{err}"
        );
    }

    #[test]
    fn duplicate_column_names_are_refused_with_both_positions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.tsv");
        std::fs::write(&p, "a\tb\t a\n1\t2\t3\n").unwrap();
        let tsv = CsvOptions {
            delimiter: b'\t',
            ..CsvOptions::default()
        };
        let err = CsvSource::open(&p, &tsv).err().unwrap().to_string();
        assert_eq!(
            err,
            format!(
                "{}: header: column 'a' appears twice, as columns 1 and 3 \
                 (name the columns with --columns instead)",
                p.display()
            )
        );
        // Renaming them is the way out; names given twice there are refused as well.
        let renamed = |names: &[&str]| CsvOptions {
            columns: Some(names.iter().map(|s| s.to_string()).collect()),
            ..tsv.clone()
        };
        assert!(CsvSource::open(&p, &renamed(&["a", "b", "c"])).is_ok());
        let err = CsvSource::open(&p, &renamed(&["x", "y", "y"]))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.ends_with("d.tsv: --columns: column 'y' appears twice, as columns 2 and 3"),
            "{err}"
        );
    }

    #[test]
    fn globs_expand_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["b.csv", "a.csv", "c.txt"] {
            std::fs::write(dir.path().join(n), "x\n").unwrap();
        }
        let pat = format!("{}/*.csv", dir.path().display());
        let got =
            expand_paths(&[pat.clone(), dir.path().join("a.csv").display().to_string()]).unwrap();
        assert_eq!(got.len(), 2);
        assert!(got[0].ends_with("a.csv") && got[1].ends_with("b.csv"));
        assert!(expand_paths(&[format!("{}/*.nope", dir.path().display())]).is_err());
    }
}
