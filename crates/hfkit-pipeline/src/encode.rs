//! Record encoding: an input record → its cells. The schema's rowkey specs, column mapping and
//! timestamp formats are compiled once ([`Compiled`]), bound to each input file's columns
//! ([`bind`]), and run on batches of records in parallel ([`encode_batch`]), checking every
//! cell against what HBase's client takes (`check_mutation`). A record that cannot be encoded
//! is rejected whole, with a [`Rejection`] saying why. Shared by the import, the router and
//! `hfkit plan`. Prose: `formats/import.md` §"Rejected records", `formats/schema.md`
//! §"Import mapping" and §"Timestamps".
//!
//! ```text
//! per record:  row key (the [rowkey] spec; at most 32767 bytes)
//!              one cell per non-empty mapped field, in HBase order (family, qualifier;
//!                schema order on ties): value by its type, timestamp fixed or from a field
//!                and a TTL tag (type 8, i64 ms) where the column has a `ttl`
//!              if it wrote a cell: one cell per [[index]] whose fields are all there
//!                (row = index key, value = the row key; sorter family past the table's)
//! with [explode]: one record per item of the list field (that field replaced by the item),
//!   each encoded as above; an item that cannot be encoded rejects the whole record
//! with [operation]: a put value encodes as above; a delete value gives delete markers at the
//!   operation timestamp instead (DeleteFamily per family, DeleteColumn or Delete per cell),
//!   and no index cell (`formats/schema.md` §"Changes from input")
//! ```

use rayon::prelude::*;

use super::error::{quote, ImportError, RowkeyError};
use super::rowkey::{FieldSource, RowkeyEncoder, RowkeySpec};
use super::source::Batch;
use super::timestamp::{TimestampError, TimestampFormat};
use super::value::encode_value;
use hfkit_format::bytes::extend_short;
use hfkit_format::cell::{check_mutation, CellLimit, CellType, LATEST_TIMESTAMP, MAX_ROW_LEN};
use hfkit_read::matcher::TTL_TAG_TYPE;
use hfkit_table::{
    DeleteScope, ImportMapping, IndexSchema, QualifierPart, TableSchema, TimestampSource,
    TtlSource, ValueType,
};

/// Why a record is rejected (`formats/import.md` §"Rejected records").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The row key cannot be encoded.
    #[error("row key: {0}")]
    RowKey(RowkeyError),
    /// The encoded row key is longer than HBase takes.
    #[error("row key is {len} bytes, more than HBase's maximum of {max}")]
    RowKeyTooLong { len: usize, max: usize },
    /// A mapped field the record does not have.
    #[error("column '{column}': missing")]
    MissingColumn { column: String },
    /// A `timestamp` field that does not read in its `timestamp_format`.
    #[error("timestamp field '{field}': {source}")]
    Timestamp {
        field: String,
        #[source]
        source: TimestampError,
    },
    /// A value that is not its `type`.
    #[error("{0}")]
    Value(RowkeyError),
    /// An `[operation]` field whose value is none of the schema's.
    #[error("operation field '{field}': '{value}' is none of the [operation] values ({known})")]
    Operation {
        field: String,
        value: String,
        known: String,
    },
    /// One item of an `[explode]` field could not be encoded: the whole record is rejected.
    #[error("item {item} of field '{field}': {reason}")]
    Item {
        field: String,
        item: usize,
        reason: Box<Rejection>,
    },
    /// A `ttl` field that is not milliseconds.
    #[error("ttl field '{field}': '{value}' is not a TTL in milliseconds (a non-negative 64-bit decimal integer)")]
    Ttl { field: String, value: String },
    /// A cell HBase's client would refuse, named by the part of it at fault.
    #[error("{part}: {limit}")]
    Refused { part: CellPart, limit: CellLimit },
    /// One of the above, for the cell of an `[[index]]`.
    #[error("index {index}: {reason}")]
    Index {
        index: String,
        reason: Box<Rejection>,
    },
}

/// The part of a refused cell a rejection names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CellPart {
    /// The row: the main row key, or an index cell's key.
    RowKey,
    /// The value of the mapped column reading this field.
    Column(String),
    /// An index cell's value (the main row key).
    Value,
    /// A fixed timestamp (`timestamp = N`, or the import time).
    Timestamp,
    /// A timestamp read from this field, with the field's text.
    TimestampField { field: String, text: String },
}

impl std::fmt::Display for CellPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CellPart::RowKey => f.write_str("row key"),
            CellPart::Column(c) => write!(f, "column '{c}'"),
            CellPart::Value => f.write_str("value"),
            CellPart::Timestamp => f.write_str("timestamp"),
            CellPart::TimestampField { field, text } => {
                write!(f, "timestamp field '{field}': '{text}'")
            }
        }
    }
}

/// A column mapping bound to one file's columns.
struct BoundColumn {
    column: usize,
    family: u8,
    family_len: usize,
    qualifier: Vec<u8>,
    value_type: ValueType,
    timestamp: BoundTimestamp,
    ttl: Option<BoundTtl>,
    /// A qualifier from the record: literal bytes and input columns (with their names).
    template: Option<Vec<BoundPart>>,
    source: String,
}

/// A part of a bound qualifier template.
enum BoundPart {
    Literal(Vec<u8>),
    Column(usize, String),
}

impl BoundColumn {
    /// Appends the cell's qualifier for record `rec`: the fixed one, or the template's parts.
    #[inline]
    fn push_qualifier(&self, rec: &csv::ByteRecord, out: &mut Vec<u8>) -> Result<(), Rejection> {
        let Some(parts) = &self.template else {
            extend_short(out, &self.qualifier);
            return Ok(());
        };
        for p in parts {
            match p {
                BoundPart::Literal(b) => out.extend_from_slice(b),
                BoundPart::Column(i, name) => match rec.get(*i) {
                    Some(v) => out.extend_from_slice(v),
                    None => {
                        return Err(Rejection::MissingColumn {
                            column: name.clone(),
                        })
                    }
                },
            }
        }
        Ok(())
    }
}

/// A column's `ttl`, bound.
enum BoundTtl {
    Fixed(i64),
    /// Input column and field name.
    Field(usize, String),
}

impl BoundTtl {
    /// The TTL of record `rec` in milliseconds; `None` for an empty field (no tag).
    fn of(&self, rec: &csv::ByteRecord) -> Result<Option<i64>, Rejection> {
        match self {
            BoundTtl::Fixed(ms) => Ok(Some(*ms)),
            BoundTtl::Field(i, name) => {
                let text = rec.get(*i).unwrap_or_default();
                if text.is_empty() {
                    return Ok(None);
                }
                std::str::from_utf8(text)
                    .ok()
                    .and_then(|s| s.trim().parse::<i64>().ok())
                    .filter(|ms| *ms >= 0)
                    .map(Some)
                    .ok_or_else(|| Rejection::Ttl {
                        field: name.clone(),
                        value: quote(text),
                    })
            }
        }
    }
}

/// HBase's serialized TTL tag (`TagType.TTL_TAG_TYPE`): `u16 length = 9 | u8 type 8 | i64 ms`,
/// big-endian, as `Mutation.setTTL` writes it.
pub fn ttl_tag(ms: i64) -> [u8; 11] {
    let mut t = [0u8; 11];
    t[..2].copy_from_slice(&9u16.to_be_bytes());
    t[2] = TTL_TAG_TYPE;
    t[3..].copy_from_slice(&ms.to_be_bytes());
    t
}

/// What a delete value of `[operation]` writes, bound to the table's families.
enum BoundDelete {
    /// A DeleteFamily marker in each of these families (sorter number, name length), in order.
    Families(Vec<(u8, usize)>),
    /// A marker of this type for each of these cells (family, family length, qualifier), in
    /// HBase order.
    Cells(CellType, Vec<(u8, usize, Vec<u8>)>),
    /// A marker of this type for each mapped cell whose field the record fills.
    FilledColumns(CellType),
}

/// `[operation]`, bound to one file's columns.
struct BoundOperation {
    column: usize,
    field: String,
    put: Vec<Vec<u8>>,
    deletes: Vec<(Vec<u8>, BoundDelete)>,
    timestamp: BoundTimestamp,
}

impl BoundOperation {
    /// Every value the schema gives, for messages.
    fn known(&self) -> String {
        let mut v: Vec<String> = self.put.iter().map(|p| quote(p)).collect();
        v.extend(self.deletes.iter().map(|(d, _)| quote(d)));
        v.join(", ")
    }
}

#[derive(Clone)]
enum BoundTimestamp {
    Fixed(i64),
    /// Input column, field name, format, and the import time (see [`put_timestamp`]).
    Field(usize, String, TimestampFormat, i64),
}

impl BoundTimestamp {
    /// The timestamp of record `rec`, or why it has none.
    #[inline]
    fn of(&self, rec: &csv::ByteRecord) -> Result<i64, Rejection> {
        match self {
            BoundTimestamp::Fixed(t) => Ok(*t),
            BoundTimestamp::Field(i, name, format, now) => Self::parse(rec, *i, name, format, *now),
        }
    }

    #[inline(never)]
    fn parse(
        rec: &csv::ByteRecord,
        i: usize,
        name: &str,
        format: &TimestampFormat,
        now: i64,
    ) -> Result<i64, Rejection> {
        format
            .to_millis(rec.get(i).unwrap_or_default())
            .map(|t| put_timestamp(t, now))
            .map_err(|source| Rejection::Timestamp {
                field: name.to_string(),
                source,
            })
    }
}

/// The timestamp a cell given `ts` gets, `now` being the import time: HBase's
/// `LATEST_TIMESTAMP` (i64::MAX) is not a time but "now", which a region server replaces with
/// its clock in a Put and `HFileOutputFormat2`'s writer with its own start time
/// (`updateLatestStamp`); every other value is kept.
fn put_timestamp(ts: i64, now: i64) -> i64 {
    if ts == LATEST_TIMESTAMP {
        now
    } else {
        ts
    }
}

/// Why a record is rejected for a cell HBase would refuse (`check_mutation`): the limit, named
/// by the part that broke it. `value` names where the cell's value came from.
#[cold]
fn refused_cell(
    limit: CellLimit,
    rec: &csv::ByteRecord,
    timestamp: &BoundTimestamp,
    value: CellPart,
) -> Rejection {
    let part = match (limit, timestamp) {
        (CellLimit::NegativeTimestamp(_), BoundTimestamp::Field(i, name, ..)) => {
            CellPart::TimestampField {
                field: name.clone(),
                text: quote(rec.get(*i).unwrap_or_default()),
            }
        }
        (CellLimit::NegativeTimestamp(_), BoundTimestamp::Fixed(_)) => CellPart::Timestamp,
        (CellLimit::EmptyRow | CellLimit::RowTooLong(_), _) => CellPart::RowKey,
        _ => value,
    };
    Rejection::Refused { part, limit }
}

/// An `[[index]]` bound to one file's columns.
struct BoundIndex {
    name: String,
    encoder: RowkeyEncoder,
    /// Input columns the index rowkey reads: an empty one means no index cell for the record.
    fields: Vec<usize>,
    /// Sorter family number: after the main table's families.
    family: u8,
    family_len: usize,
    qualifier: Vec<u8>,
    timestamp: BoundTimestamp,
}

impl BoundIndex {
    /// `reason`, for this index's cell.
    #[cold]
    fn rejection(&self, reason: Rejection) -> Rejection {
        Rejection::Index {
            index: self.name.clone(),
            reason: Box::new(reason),
        }
    }
}

/// The spec, the mapping and the indexes bound to one file's columns.
pub(crate) struct Bound {
    encoder: RowkeyEncoder,
    /// In HBase order (family, then qualifier; schema order on ties, so that a later column
    /// mapped to the same cell wins): a record's cells come out already sorted.
    columns: Vec<BoundColumn>,
    indexes: Vec<BoundIndex>,
    operation: Option<BoundOperation>,
    /// `[explode]`: the list column, its name and the delimiter.
    explode: Option<(usize, String, Vec<u8>)>,
}

/// A cell encoded by a worker: byte ranges (offset, length) into its arena.
pub(crate) struct EncodedCell {
    pub family: u8,
    pub row: (u32, u32),
    pub qualifier: (u32, u32),
    pub timestamp: i64,
    /// Put, or a delete marker of an `[operation]` delete.
    pub cell_type: CellType,
    pub value: (u32, u32),
    /// Serialized tags (the TTL tag), `(0, 0)` without.
    pub tags: (u32, u32),
}

impl EncodedCell {
    /// A Put without tags: what a lane can take.
    pub fn is_plain_put(&self) -> bool {
        self.cell_type == CellType::Put && self.tags.1 == 0
    }
}

/// The bytes of `arena` an [`EncodedCell`] range points at.
pub(crate) fn slice(arena: &[u8], (at, len): (u32, u32)) -> &[u8] {
    &arena[at as usize..(at + len) as usize]
}

/// What one worker produced for a slice of a batch.
#[derive(Default)]
pub(crate) struct Encoded {
    pub arena: Vec<u8>,
    /// Main-table cells of each record, then its index cells (sorter family numbers past the
    /// table's families).
    pub cells: Vec<EncodedCell>,
    /// Rejected records: index in the batch, and why.
    pub rejected: Vec<(usize, Rejection)>,
    pub key_len_sum: u64,
    pub key_len_min: usize,
    pub key_len_max: usize,
    pub keys: u64,
    /// Main row keys: the first and the last of this slice (input order), for the
    /// monotonic-keys check across slices.
    pub first_key: Vec<u8>,
    pub last_key: Vec<u8>,
    pub ascending: u64,
}

impl Encoded {
    /// Empties it for the next batch, keeping its buffers.
    fn reset(&mut self) {
        self.arena.clear();
        self.cells.clear();
        self.rejected.clear();
        self.key_len_sum = 0;
        self.key_len_min = usize::MAX;
        self.key_len_max = 0;
        self.keys = 0;
        self.first_key.clear();
        self.last_key.clear();
        self.ascending = 0;
    }
}

/// The main row keys of encoded records, in input order: how many, their lengths, and how
/// many arrived greater than or equal to the one before (for the design warnings).
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyStats {
    pub keys: u64,
    pub ascending: u64,
    pub len_sum: u64,
    /// Shortest and longest key; 0 and 0 without keys.
    pub len_min: usize,
    pub len_max: usize,
    /// The last key of the slices seen so far.
    last_key: Vec<u8>,
}

impl KeyStats {
    /// Adds the next slice's keys (slices in input order).
    pub fn add(&mut self, e: &Encoded) {
        if e.keys == 0 {
            return;
        }
        self.len_min = if self.keys == 0 {
            e.key_len_min
        } else {
            self.len_min.min(e.key_len_min)
        };
        self.len_max = self.len_max.max(e.key_len_max);
        self.keys += e.keys;
        self.len_sum += e.key_len_sum;
        self.ascending += e.ascending;
        // The monotonic-keys check across slices: each slice's first key against the
        // previous slice's last.
        if !self.last_key.is_empty() && e.first_key >= self.last_key {
            self.ascending += 1;
        }
        self.last_key.clone_from(&e.last_key);
    }

    /// The mean key length, 0 without keys.
    pub fn mean_len(&self) -> f64 {
        if self.keys == 0 {
            0.0
        } else {
            self.len_sum as f64 / self.keys as f64
        }
    }
}

/// A record as the rowkey encoders read it.
pub(crate) struct RecordFields<'a>(pub &'a csv::ByteRecord);

impl FieldSource for RecordFields<'_> {
    fn field(&self, column: usize) -> Option<&[u8]> {
        self.0.get(column)
    }
}

/// The schema's specs and formats, compiled once and checked against the table: shared by
/// the import and [`super::plan`].
pub(crate) struct Compiled {
    pub spec: RowkeySpec,
    /// The `timestamp_format` of each `[[column]]`.
    pub ts_formats: Vec<TimestampFormat>,
    pub indexes: Vec<CompiledIndex>,
}

/// One `[[index]]`, compiled.
pub(crate) struct CompiledIndex {
    pub schema: IndexSchema,
    pub spec: RowkeySpec,
    pub ts_format: TimestampFormat,
}

impl Compiled {
    /// Parses the rowkey specs and timestamp formats and checks the mapping against the table.
    pub fn new(schema: &TableSchema, mapping: &ImportMapping) -> Result<Compiled, ImportError> {
        let spec_text = mapping
            .rowkey
            .as_deref()
            .ok_or_else(|| ImportError::Invalid("the schema has no [rowkey] spec".into()))?;
        let spec = RowkeySpec::parse(spec_text).map_err(|source| ImportError::Rowkey {
            context: format!(
                "{}[rowkey] spec",
                at_prefix(mapping.rowkey_location.as_ref())
            ),
            source,
        })?;
        let rowkey_ts = match &mapping.rowkey_timestamp_format {
            Some((text, at)) => TimestampFormat::parse(text)
                .map_err(|e| ImportError::Invalid(format!("{at}: [rowkey] {e}")))?,
            None => TimestampFormat::EpochMillis,
        };
        let spec = spec.with_timestamp_format(rowkey_ts.clone());
        if mapping.columns.is_empty() {
            return Err(ImportError::Invalid(
                "the schema maps no [[column]] to a cell".into(),
            ));
        }
        let families: Vec<&str> = schema.families.iter().map(|f| f.name.as_str()).collect();
        for c in &mapping.columns {
            if !families.contains(&c.family.as_str()) {
                return Err(ImportError::Invalid(format!(
                    "column '{}' maps to family '{}', which table {} does not have (families: {})",
                    c.source,
                    c.family,
                    schema.full_name(),
                    families.join(", ")
                )));
            }
        }
        if families.len() + mapping.indexes.len() > usize::from(u8::MAX) + 1 {
            return Err(ImportError::Invalid(format!(
                "{} families and {} index tables: at most 256 together",
                families.len(),
                mapping.indexes.len()
            )));
        }
        let ts_formats = mapping
            .columns
            .iter()
            .map(|c| {
                timestamp_format(c.timestamp_format.as_deref(), c.location.as_ref(), || {
                    format!("column '{}'", c.source)
                })
            })
            .collect::<Result<_, _>>()?;
        if let Some(op) = &mapping.operation {
            timestamp_format(op.timestamp_format.as_deref(), op.location.as_ref(), || {
                "[operation]".to_string()
            })?;
        }
        let mut indexes = Vec::new();
        for ix in &mapping.indexes {
            let what = format!("index {}", ix.full_name());
            let at = ix
                .rowkey_location
                .as_ref()
                .map(|l| format!("{l}: "))
                .unwrap_or_default();
            let ix_spec = RowkeySpec::parse(&ix.rowkey)
                .map_err(|source| ImportError::Rowkey {
                    context: format!("{at}{what}: rowkey"),
                    source,
                })?
                .with_timestamp_format(rowkey_ts.clone());
            indexes.push(CompiledIndex {
                spec: ix_spec,
                ts_format: timestamp_format(
                    ix.timestamp_format.as_deref(),
                    ix.location.as_ref(),
                    || what.clone(),
                )?,
                schema: ix.clone(),
            });
        }
        Ok(Compiled {
            spec,
            ts_formats,
            indexes,
        })
    }

    /// Every input field the import reads (the Parquet projection).
    pub fn wanted_fields(&self, mapping: &ImportMapping) -> Vec<String> {
        let mut wanted: Vec<String> = self.spec.fields().to_vec();
        for c in &mapping.columns {
            wanted.push(c.source.clone());
            if let TimestampSource::Field(f) = &c.timestamp {
                wanted.push(f.clone());
            }
            if let Some(TtlSource::Field(f)) = &c.ttl {
                wanted.push(f.clone());
            }
            for p in c.qualifier_template.iter().flatten() {
                if let QualifierPart::Field(f) = p {
                    wanted.push(f.clone());
                }
            }
        }
        for ix in &self.indexes {
            wanted.extend(ix.spec.fields().iter().cloned());
            if let TimestampSource::Field(f) = &ix.schema.timestamp {
                wanted.push(f.clone());
            }
        }
        if let Some(x) = &mapping.explode {
            wanted.push(x.field.clone());
        }
        if let Some(op) = &mapping.operation {
            wanted.push(op.field.clone());
            if let TimestampSource::Field(f) = &op.timestamp {
                wanted.push(f.clone());
            }
        }
        wanted.sort();
        wanted.dedup();
        wanted
    }

    /// The input fields the row keys read (main and index tables), for sampling them.
    pub fn key_fields(&self) -> Vec<String> {
        let mut wanted: Vec<String> = self.spec.fields().to_vec();
        for ix in &self.indexes {
            wanted.extend(ix.spec.fields().iter().cloned());
        }
        wanted.sort();
        wanted.dedup();
        wanted
    }
}

/// `"s.toml:12:8: "` for a schema location, `""` without one.
fn at_prefix(at: Option<&hfkit_table::Location>) -> String {
    at.map(|l| format!("{l}: ")).unwrap_or_default()
}

/// A compiled `timestamp_format` (epoch ms when none is given); a bad format is an error
/// naming `what` and where the schema wrote it.
fn timestamp_format(
    text: Option<&str>,
    at: Option<&hfkit_table::Location>,
    what: impl Fn() -> String,
) -> Result<TimestampFormat, ImportError> {
    match text {
        None => Ok(TimestampFormat::EpochMillis),
        Some(text) => TimestampFormat::parse(text)
            .map_err(|e| ImportError::Invalid(format!("{}{}: {e}", at_prefix(at), what()))),
    }
}

/// Binds the specs and mapping to one file's columns.
pub(crate) fn bind(
    compiled: &Compiled,
    mapping: &ImportMapping,
    families: &[&str],
    columns: &[String],
    path: &std::path::Path,
    import_time: i64,
) -> Result<Bound, ImportError> {
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let encoder = compiled
        .spec
        .compile(&names)
        .map_err(|source| ImportError::Rowkey {
            context: format!(
                "{}: {}[rowkey] spec",
                path.display(),
                at_prefix(mapping.rowkey_location.as_ref())
            ),
            source,
        })?;
    // `reader`: what in the schema reads the field, and where.
    let find = |name: &str, reader: &dyn Fn() -> String| -> Result<usize, ImportError> {
        names.iter().position(|n| *n == name).ok_or_else(|| {
            ImportError::Invalid(format!(
                "{}: missing column '{name}' (the file has: {}); {} reads it",
                path.display(),
                names.join(", "),
                reader()
            ))
        })
    };
    if import_time < 0 {
        let limit = CellLimit::NegativeTimestamp(import_time);
        return Err(ImportError::Invalid(format!("import time: {limit}")));
    }
    let timestamp =
        |source: &TimestampSource, format: &TimestampFormat, reader: &dyn Fn() -> String| {
            Ok::<_, ImportError>(match source {
                TimestampSource::ImportTime => BoundTimestamp::Fixed(import_time),
                TimestampSource::Fixed(t) => BoundTimestamp::Fixed(put_timestamp(*t, import_time)),
                TimestampSource::Field(f) => {
                    BoundTimestamp::Field(find(f, reader)?, f.clone(), format.clone(), import_time)
                }
            })
        };
    let mut bound = Vec::new();
    for (c, ts_format) in mapping.columns.iter().zip(&compiled.ts_formats) {
        let family = families
            .iter()
            .position(|f| *f == c.family)
            .ok_or_else(|| ImportError::Invalid(format!("unknown family '{}'", c.family)))?
            as u8;
        let reader = || format!("{}column '{}'", at_prefix(c.location.as_ref()), c.source);
        bound.push(BoundColumn {
            column: find(&c.source, &reader)?,
            family,
            family_len: c.family.len(),
            qualifier: c.qualifier.clone(),
            value_type: c.value_type,
            timestamp: timestamp(&c.timestamp, ts_format, &reader)?,
            template: match &c.qualifier_template {
                None => None,
                Some(parts) => Some(
                    parts
                        .iter()
                        .map(|p| match p {
                            QualifierPart::Literal(b) => Ok(BoundPart::Literal(b.clone())),
                            QualifierPart::Field(f) => {
                                find(f, &reader).map(|i| BoundPart::Column(i, f.clone()))
                            }
                        })
                        .collect::<Result<_, _>>()?,
                ),
            },
            ttl: match &c.ttl {
                None => None,
                Some(TtlSource::Fixed(ms)) => Some(BoundTtl::Fixed(*ms)),
                Some(TtlSource::Field(f)) => Some(BoundTtl::Field(find(f, &reader)?, f.clone())),
            },
            source: c.source.clone(),
        });
    }
    // A stable sort: columns mapped to the same cell keep their schema order.
    bound.sort_by(|a, b| (a.family, &a.qualifier).cmp(&(b.family, &b.qualifier)));
    let mut indexes = Vec::new();
    for (i, ix) in compiled.indexes.iter().enumerate() {
        let name = ix.schema.full_name();
        let reader = || format!("{}index {name}", at_prefix(ix.schema.location.as_ref()));
        indexes.push(BoundIndex {
            encoder: ix
                .spec
                .compile(&names)
                .map_err(|source| ImportError::Rowkey {
                    context: format!(
                        "{}: {}index {name}: rowkey",
                        path.display(),
                        at_prefix(ix.schema.rowkey_location.as_ref())
                    ),
                    source,
                })?,
            fields: ix
                .spec
                .fields()
                .iter()
                .map(|f| find(f, &reader))
                .collect::<Result<_, _>>()?,
            family: u8::try_from(families.len() + i)
                .map_err(|_| ImportError::Invalid("too many families and index tables".into()))?,
            family_len: ix.schema.family().name.len(),
            qualifier: ix.schema.qualifier.clone(),
            timestamp: timestamp(&ix.schema.timestamp, &ix.ts_format, &reader)?,
            name,
        });
    }
    let operation = match &mapping.operation {
        None => None,
        Some(op) => {
            let at = at_prefix(op.location.as_ref());
            let reader = || format!("{at}[operation]");
            let family_of = |name: &str| -> Result<(u8, usize), ImportError> {
                let f = families
                    .iter()
                    .position(|f| *f == name)
                    .ok_or_else(|| ImportError::Invalid(format!("unknown family '{name}'")))?;
                Ok((f as u8, name.len()))
            };
            let every_family = || {
                (0..families.len())
                    .map(|f| (f as u8, families[f].len()))
                    .collect()
            };
            let cells =
                |list: &[(String, Vec<u8>)]| -> Result<Vec<(u8, usize, Vec<u8>)>, ImportError> {
                    let mut v = list
                        .iter()
                        .map(|(f, q)| family_of(f).map(|(i, len)| (i, len, q.clone())))
                        .collect::<Result<Vec<_>, _>>()?;
                    v.sort_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
                    v.dedup();
                    Ok(v)
                };
            let mut deletes = Vec::new();
            for d in &op.deletes {
                let bound = match &d.scope {
                    DeleteScope::Row => BoundDelete::Families(every_family()),
                    DeleteScope::Families(f) if f.is_empty() => {
                        BoundDelete::Families(every_family())
                    }
                    DeleteScope::Families(f) => {
                        let mut v = f
                            .iter()
                            .map(|f| family_of(f))
                            .collect::<Result<Vec<_>, _>>()?;
                        v.sort();
                        v.dedup();
                        BoundDelete::Families(v)
                    }
                    DeleteScope::Columns(c) if c.is_empty() => {
                        BoundDelete::FilledColumns(CellType::DeleteColumn)
                    }
                    DeleteScope::Columns(c) => {
                        BoundDelete::Cells(CellType::DeleteColumn, cells(c)?)
                    }
                    DeleteScope::Version(c) if c.is_empty() => {
                        BoundDelete::FilledColumns(CellType::Delete)
                    }
                    DeleteScope::Version(c) => BoundDelete::Cells(CellType::Delete, cells(c)?),
                };
                deletes.push((d.value.as_bytes().to_vec(), bound));
            }
            let format =
                timestamp_format(op.timestamp_format.as_deref(), op.location.as_ref(), || {
                    "[operation]".to_string()
                })?;
            Some(BoundOperation {
                column: find(&op.field, &reader)?,
                field: op.field.clone(),
                put: op.put.iter().map(|p| p.as_bytes().to_vec()).collect(),
                deletes,
                timestamp: timestamp(&op.timestamp, &format, &reader)?,
            })
        }
    };
    let explode = match &mapping.explode {
        None => None,
        Some(x) => {
            let at = at_prefix(x.location.as_ref());
            let column = find(&x.field, &|| format!("{at}[explode]"))?;
            Some((column, x.field.clone(), x.delimiter.clone()))
        }
    };
    Ok(Bound {
        encoder,
        columns: bound,
        indexes,
        operation,
        explode,
    })
}

/// Encodes a batch in parallel slices into `out` (one [`Encoded`] per slice, in input order;
/// its buffers are reused from the previous batch, so a steady import allocates nothing here).
pub(crate) fn encode_batch(batch: &Batch, bound: &Bound, out: &mut Vec<Encoded>) {
    let n = batch.records.len();
    let threads = rayon::current_num_threads().max(1);
    let chunk = n.div_ceil(threads * 4).max(256);
    let slices = n.div_ceil(chunk);
    out.resize_with(slices, Encoded::default);
    out.truncate(slices);
    out.par_iter_mut().enumerate().for_each(|(k, out)| {
        let start = k * chunk;
        let end = (start + chunk).min(n);
        let mut enc = bound.encoder.clone();
        let mut ix_enc: Vec<RowkeyEncoder> =
            bound.indexes.iter().map(|ix| ix.encoder.clone()).collect();
        out.reset();
        let mut item = csv::ByteRecord::new();
        for i in start..end {
            let rec = &batch.records[i];
            match &bound.explode {
                None => encode_record(rec, i, &mut enc, &mut ix_enc, bound, out),
                Some(x) => encode_exploded(rec, i, x, &mut item, &mut enc, &mut ix_enc, bound, out),
            }
        }
    });
}

fn encode_record(
    rec: &csv::ByteRecord,
    index: usize,
    enc: &mut RowkeyEncoder,
    ix_enc: &mut [RowkeyEncoder],
    bound: &Bound,
    out: &mut Encoded,
) {
    let arena_at = out.arena.len();
    let cells_at = out.cells.len();
    let reject = |out: &mut Encoded, reason: Rejection| {
        out.arena.truncate(arena_at);
        out.cells.truncate(cells_at);
        out.rejected.push((index, reason));
    };
    let fields = RecordFields(rec);
    if let Err(e) = enc.encode(&fields, &mut out.arena) {
        reject(out, Rejection::RowKey(e));
        return;
    }
    let key_len = out.arena.len() - arena_at;
    if key_len > MAX_ROW_LEN {
        let too_long = Rejection::RowKeyTooLong {
            len: key_len,
            max: MAX_ROW_LEN,
        };
        reject(out, too_long);
        return;
    }
    let row = (arena_at as u32, key_len as u32);
    if let Some(op) = &bound.operation {
        let value = rec.get(op.column).unwrap_or_default();
        if !op.put.iter().any(|p| p.as_slice() == value) {
            let Some((_, delete)) = op.deletes.iter().find(|(d, _)| d.as_slice() == value) else {
                let reason = Rejection::Operation {
                    field: op.field.clone(),
                    value: quote(value),
                    known: op.known(),
                };
                reject(out, reason);
                return;
            };
            if let Err(reason) = encode_delete(rec, delete, op, bound, row, out) {
                reject(out, reason);
                return;
            }
            key_stats(out, arena_at, key_len);
            return;
        }
    }
    for c in &bound.columns {
        let Some(v) = rec.get(c.column) else {
            let column = c.source.clone();
            reject(out, Rejection::MissingColumn { column });
            return;
        };
        if v.is_empty() {
            continue; // an empty or null field writes no cell
        }
        let ts = match c.timestamp.of(rec) {
            Ok(t) => t,
            Err(reason) => {
                reject(out, reason);
                return;
            }
        };
        let q_at = out.arena.len();
        if let Err(reason) = c.push_qualifier(rec, &mut out.arena) {
            reject(out, reason);
            return;
        }
        let q_len = out.arena.len() - q_at;
        let v_at = out.arena.len();
        if c.value_type == ValueType::String {
            extend_short(&mut out.arena, v); // the common case, without the call
        } else if let Err(e) = encode_value(c.value_type, &c.source, v, &mut out.arena) {
            reject(out, Rejection::Value(e));
            return;
        }
        let v_len = out.arena.len() - v_at;
        let t_at = out.arena.len();
        match c.ttl.as_ref().map(|t| t.of(rec)) {
            None | Some(Ok(None)) => {}
            Some(Ok(Some(ms))) => out.arena.extend_from_slice(&ttl_tag(ms)),
            Some(Err(reason)) => {
                reject(out, reason);
                return;
            }
        }
        let t_len = out.arena.len() - t_at;
        if let Err(limit) = check_mutation(key_len, c.family_len, q_len, v_len, t_len, ts) {
            let value = CellPart::Column(c.source.clone());
            reject(out, refused_cell(limit, rec, &c.timestamp, value));
            return;
        }
        out.cells.push(EncodedCell {
            family: c.family,
            row,
            qualifier: (q_at as u32, q_len as u32),
            timestamp: ts,
            cell_type: CellType::Put,
            value: (v_at as u32, v_len as u32),
            tags: (t_at as u32, t_len as u32),
        });
    }
    // Index cells: only for a row that exists (wrote a cell) and whose index fields are all
    // present; the value is the main row key.
    if out.cells.len() > cells_at {
        for (ix, ix_enc) in bound.indexes.iter().zip(ix_enc.iter_mut()) {
            if ix
                .fields
                .iter()
                .any(|&c| rec.get(c).is_none_or(<[u8]>::is_empty))
            {
                continue;
            }
            let k_at = out.arena.len();
            if let Err(e) = ix_enc.encode(&fields, &mut out.arena) {
                reject(out, ix.rejection(Rejection::RowKey(e)));
                return;
            }
            let k_len = out.arena.len() - k_at;
            let ts = match ix.timestamp.of(rec) {
                Ok(t) => t,
                Err(reason) => {
                    reject(out, ix.rejection(reason));
                    return;
                }
            };
            let q_len = ix.qualifier.len();
            if let Err(limit) = check_mutation(k_len, ix.family_len, q_len, key_len, 0, ts) {
                let reason = refused_cell(limit, rec, &ix.timestamp, CellPart::Value);
                reject(out, ix.rejection(reason));
                return;
            }
            let q_at = out.arena.len();
            out.arena.extend_from_slice(&ix.qualifier);
            out.cells.push(EncodedCell {
                family: ix.family,
                row: (k_at as u32, k_len as u32),
                qualifier: (q_at as u32, ix.qualifier.len() as u32),
                timestamp: ts,
                cell_type: CellType::Put,
                value: row,
                tags: (0, 0),
            });
        }
    }
    key_stats(out, arena_at, key_len);
}

/// An `[explode]` record: one record per item of its list field (the field replaced by the
/// item; an empty field is the record as it is), each encoded by [`encode_record`]. An item
/// that is rejected rejects the record: the cells of its earlier items are removed.
#[allow(clippy::too_many_arguments)]
fn encode_exploded(
    rec: &csv::ByteRecord,
    index: usize,
    (column, field, delimiter): &(usize, String, Vec<u8>),
    item: &mut csv::ByteRecord,
    enc: &mut RowkeyEncoder,
    ix_enc: &mut [RowkeyEncoder],
    bound: &Bound,
    out: &mut Encoded,
) {
    let list = rec.get(*column).unwrap_or_default();
    if list.is_empty() {
        encode_record(rec, index, enc, ix_enc, bound, out);
        return;
    }
    let (arena_at, cells_at, rejected_at) = (out.arena.len(), out.cells.len(), out.rejected.len());
    let (keys, key_len_sum, ascending) = (out.keys, out.key_len_sum, out.ascending);
    let mut rest = list;
    let mut n = 0;
    loop {
        let (piece, next) = match find_bytes(rest, delimiter) {
            Some(at) => (&rest[..at], Some(&rest[at + delimiter.len()..])),
            None => (rest, None),
        };
        n += 1;
        item.clear();
        for (j, f) in rec.iter().enumerate() {
            item.push_field(if j == *column { piece } else { f });
        }
        encode_record(item, index, enc, ix_enc, bound, out);
        if out.rejected.len() > rejected_at {
            let reason = out.rejected.pop().map(|(_, r)| r);
            out.arena.truncate(arena_at);
            out.cells.truncate(cells_at);
            out.rejected.truncate(rejected_at);
            (out.keys, out.key_len_sum, out.ascending) = (keys, key_len_sum, ascending);
            if let Some(reason) = reason {
                out.rejected.push((
                    index,
                    Rejection::Item {
                        field: field.clone(),
                        item: n,
                        reason: Box::new(reason),
                    },
                ));
            }
            return;
        }
        match next {
            Some(r) => rest = r,
            None => return,
        }
    }
}

/// Where `needle` (not empty) first occurs in `hay`.
fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The delete markers of a record whose operation value is a delete (at the operation
/// timestamp, with empty values), in HBase order: by family, then qualifier.
fn encode_delete(
    rec: &csv::ByteRecord,
    delete: &BoundDelete,
    op: &BoundOperation,
    bound: &Bound,
    row: (u32, u32),
    out: &mut Encoded,
) -> Result<(), Rejection> {
    let ts = op.timestamp.of(rec)?;
    let key_len = row.1 as usize;
    let marker = |out: &mut Encoded, family: u8, family_len: usize, q: &[u8], t: CellType| {
        if let Err(limit) = check_mutation(key_len, family_len, q.len(), 0, 0, ts) {
            let value = CellPart::Column(op.field.clone());
            return Err(refused_cell(limit, rec, &op.timestamp, value));
        }
        let q_at = out.arena.len();
        out.arena.extend_from_slice(q);
        out.cells.push(EncodedCell {
            family,
            row,
            qualifier: (q_at as u32, q.len() as u32),
            timestamp: ts,
            cell_type: t,
            value: (0, 0),
            tags: (0, 0),
        });
        Ok(())
    };
    match delete {
        BoundDelete::Families(families) => {
            for &(f, len) in families {
                marker(out, f, len, b"", CellType::DeleteFamily)?;
            }
        }
        BoundDelete::Cells(t, cells) => {
            for (f, len, q) in cells {
                marker(out, *f, *len, q, *t)?;
            }
        }
        BoundDelete::FilledColumns(t) => {
            // Fixed qualifiers are in HBase order (equal cells are neighbours); a template's
            // come from the record, and the sorter orders them.
            let mut last: Option<(u8, Vec<u8>)> = None;
            let mut q = Vec::new();
            for c in &bound.columns {
                if rec.get(c.column).is_none_or(<[u8]>::is_empty) {
                    continue;
                }
                q.clear();
                c.push_qualifier(rec, &mut q)?;
                if last
                    .as_ref()
                    .is_some_and(|(f, lq)| *f == c.family && *lq == q)
                {
                    continue;
                }
                marker(out, c.family, c.family_len, &q, *t)?;
                last = Some((c.family, q.clone()));
            }
        }
    }
    Ok(())
}

/// Counts an encoded record's main row key (its length, and whether it arrived in order).
fn key_stats(out: &mut Encoded, arena_at: usize, key_len: usize) {
    out.keys += 1;
    out.key_len_sum += key_len as u64;
    out.key_len_min = out.key_len_min.min(key_len);
    out.key_len_max = out.key_len_max.max(key_len);
    let key = &out.arena[arena_at..arena_at + key_len];
    if out.keys == 1 {
        out.first_key.clear();
        out.first_key.extend_from_slice(key);
    } else if key >= out.last_key.as_slice() {
        out.ascending += 1;
    }
    out.last_key.clear();
    out.last_key
        .extend_from_slice(&out.arena[arena_at..arena_at + key_len]);
}
