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
//!
//! | module | owns |
//! |---|---|
//! | (here) | [`Rejection`], the bound mapping's types, and what encoding produces ([`Encoded`]) |
//! | `binding` | [`Compiled`] (the schema's specs and formats, once) and [`bind`] (to a file's columns) |
//! | `record` | [`encode_batch`]: records to cells, exploded lists, delete markers, index cells |

mod binding;
mod record;

use crate::error::quote;
use crate::mapping::rowkey::{FieldSource, RowkeyEncoder};
use crate::mapping::timestamp::TimestampFormat;
pub(crate) use binding::{bind, Compiled};
use hfkit_format::bytes::extend_short;
use hfkit_format::cell::{CellLimit, CellType, LATEST_TIMESTAMP};
use hfkit_read::matcher::TTL_TAG_TYPE;
use hfkit_table::ValueType;
pub(crate) use record::encode_batch;

/// Why a record is rejected, and the part of a refused cell it names: the import's error
/// types (`crate::error`), named here too.
pub use crate::error::{CellPart, Rejection};

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
    fn push_qualifier<R: FieldSource + ?Sized>(
        &self,
        rec: &R,
        out: &mut Vec<u8>,
    ) -> Result<(), Rejection> {
        let Some(parts) = &self.template else {
            extend_short(out, &self.qualifier);
            return Ok(());
        };
        for p in parts {
            match p {
                BoundPart::Literal(b) => out.extend_from_slice(b),
                BoundPart::Column(i, name) => match rec.field(*i) {
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
    fn of<R: FieldSource + ?Sized>(&self, rec: &R) -> Result<Option<i64>, Rejection> {
        match self {
            BoundTtl::Fixed(ms) => Ok(Some(*ms)),
            BoundTtl::Field(i, name) => {
                let text = rec.field(*i).unwrap_or_default();
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
    fn of<R: FieldSource + ?Sized>(&self, rec: &R) -> Result<i64, Rejection> {
        match self {
            BoundTimestamp::Fixed(t) => Ok(*t),
            BoundTimestamp::Field(i, name, format, now) => Self::parse(rec, *i, name, format, *now),
        }
    }

    #[inline(never)]
    fn parse<R: FieldSource + ?Sized>(
        rec: &R,
        i: usize,
        name: &str,
        format: &TimestampFormat,
        now: i64,
    ) -> Result<i64, Rejection> {
        format
            .to_millis(rec.field(i).unwrap_or_default())
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
fn refused_cell<R: FieldSource + ?Sized>(
    limit: CellLimit,
    rec: &R,
    timestamp: &BoundTimestamp,
    value: CellPart,
) -> Rejection {
    let part = match (limit, timestamp) {
        (CellLimit::NegativeTimestamp(_), BoundTimestamp::Field(i, name, ..)) => {
            CellPart::TimestampField {
                field: name.clone(),
                text: quote(rec.field(*i).unwrap_or_default()),
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

impl FieldSource for csv::ByteRecord {
    #[inline]
    fn field(&self, column: usize) -> Option<&[u8]> {
        self.get(column)
    }
}
