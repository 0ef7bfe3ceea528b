//! The mapping bound to one input file's columns: [`Bound`] — the row key's encoder, the
//! `[[column]]`s ([`BoundColumn`], their qualifier templates, timestamps and TTLs), the
//! `[[index]]`es, `[operation]` and `[explode]` — what `bind` makes and `encode_batch` runs;
//! and why a record is rejected for a cell HBase would refuse ([`refused_cell`]). Spec:
//! `formats/schema.md` §"Import mapping" and §"Timestamps"; `formats/import.md` §"Rejected
//! records".

use crate::error::{quote, CellPart, Rejection};
use crate::mapping::rowkey::{FieldSource, RowkeyEncoder};
use crate::mapping::timestamp::TimestampFormat;
use hfkit_format::bytes::extend_short;
use hfkit_format::cell::{CellLimit, CellType, LATEST_TIMESTAMP};
use hfkit_table::ValueType;

/// A column mapping bound to one file's columns.
pub(super) struct BoundColumn {
    pub(super) column: usize,
    pub(super) family: u8,
    pub(super) family_len: usize,
    pub(super) qualifier: Vec<u8>,
    pub(super) value_type: ValueType,
    pub(super) timestamp: BoundTimestamp,
    pub(super) ttl: Option<BoundTtl>,
    /// A qualifier from the record: literal bytes and input columns (with their names).
    pub(super) template: Option<Vec<BoundPart>>,
    pub(super) source: String,
}

/// A part of a bound qualifier template.
pub(super) enum BoundPart {
    Literal(Vec<u8>),
    Column(usize, String),
}

impl BoundColumn {
    /// Appends the cell's qualifier for record `rec`: the fixed one, or the template's parts.
    #[inline]
    pub(super) fn push_qualifier<R: FieldSource + ?Sized>(
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
pub(super) enum BoundTtl {
    Fixed(i64),
    /// Input column and field name.
    Field(usize, String),
}

impl BoundTtl {
    /// The TTL of record `rec` in milliseconds; `None` for an empty field (no tag).
    pub(super) fn of<R: FieldSource + ?Sized>(&self, rec: &R) -> Result<Option<i64>, Rejection> {
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

/// What a delete value of `[operation]` writes, bound to the table's families.
pub(super) enum BoundDelete {
    /// A DeleteFamily marker in each of these families (sorter number, name length), in order.
    Families(Vec<(u8, usize)>),
    /// A marker of this type for each of these cells (family, family length, qualifier), in
    /// HBase order.
    Cells(CellType, Vec<(u8, usize, Vec<u8>)>),
    /// A marker of this type for each mapped cell whose field the record fills.
    FilledColumns(CellType),
}

/// `[operation]`, bound to one file's columns.
pub(super) struct BoundOperation {
    pub(super) column: usize,
    pub(super) field: String,
    pub(super) put: Vec<Vec<u8>>,
    pub(super) deletes: Vec<(Vec<u8>, BoundDelete)>,
    pub(super) timestamp: BoundTimestamp,
}

impl BoundOperation {
    /// Every value the schema gives, for messages.
    pub(super) fn known(&self) -> String {
        let mut v: Vec<String> = self.put.iter().map(|p| quote(p)).collect();
        v.extend(self.deletes.iter().map(|(d, _)| quote(d)));
        v.join(", ")
    }
}

#[derive(Clone)]
pub(super) enum BoundTimestamp {
    Fixed(i64),
    /// Input column, field name, format, and the import time (see [`put_timestamp`]).
    Field(usize, String, TimestampFormat, i64),
}

impl BoundTimestamp {
    /// The timestamp of record `rec`, or why it has none.
    #[inline]
    pub(super) fn of<R: FieldSource + ?Sized>(&self, rec: &R) -> Result<i64, Rejection> {
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
pub(super) fn put_timestamp(ts: i64, now: i64) -> i64 {
    if ts == LATEST_TIMESTAMP {
        now
    } else {
        ts
    }
}

/// Why a record is rejected for a cell HBase would refuse (`check_mutation`): the limit, named
/// by the part that broke it. `value` names where the cell's value came from.
#[cold]
pub(super) fn refused_cell<R: FieldSource + ?Sized>(
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
pub(super) struct BoundIndex {
    pub(super) name: String,
    pub(super) encoder: RowkeyEncoder,
    /// Input columns the index rowkey reads: an empty one means no index cell for the record.
    pub(super) fields: Vec<usize>,
    /// Sorter family number: after the main table's families.
    pub(super) family: u8,
    pub(super) family_len: usize,
    pub(super) qualifier: Vec<u8>,
    pub(super) timestamp: BoundTimestamp,
}

impl BoundIndex {
    /// `reason`, for this index's cell.
    #[cold]
    pub(super) fn rejection(&self, reason: Rejection) -> Rejection {
        Rejection::Index {
            index: self.name.clone(),
            reason: Box::new(reason),
        }
    }
}

/// The spec, the mapping and the indexes bound to one file's columns.
pub(crate) struct Bound {
    pub(super) encoder: RowkeyEncoder,
    /// In HBase order (family, then qualifier; schema order on ties, so that a later column
    /// mapped to the same cell wins): a record's cells come out already sorted.
    pub(super) columns: Vec<BoundColumn>,
    pub(super) indexes: Vec<BoundIndex>,
    pub(super) operation: Option<BoundOperation>,
    /// `[explode]`: the list column, its name and the delimiter.
    pub(super) explode: Option<(usize, String, Vec<u8>)>,
}
