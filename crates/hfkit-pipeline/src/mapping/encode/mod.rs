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
//! | (here) | [`Rejection`] (the import's, named here too), `KeyStats` of encoded row keys, `slice`, and `RecordFields` (a record as the rowkey encoders read it) |
//! | `bound` | the bound mapping's types (`Bound`), and why a record is rejected for a cell HBase refuses |
//! | `encoded` | what encoding produces ([`Encoded`], `EncodedCell`) and the TTL tag ([`ttl_tag`]) |
//! | `binding` | [`Compiled`] (the schema's specs and formats, once) and [`bind`] (to a file's columns) |
//! | `record` | [`encode_batch`]: records to cells, exploded lists, delete markers, index cells |

mod binding;
mod bound;
mod encoded;
mod record;

use crate::mapping::rowkey::FieldSource;
pub(crate) use binding::{bind, Compiled};
pub(crate) use bound::Bound;
pub use encoded::ttl_tag;
pub(crate) use encoded::{Encoded, EncodedCell};
pub(crate) use record::encode_batch;

/// Why a record is rejected, and the part of a refused cell it names: the import's error
/// types (`crate::error`), named here too.
pub use crate::error::{CellPart, Rejection};

/// The bytes of `arena` an [`EncodedCell`] range points at.
pub(crate) fn slice(arena: &[u8], (at, len): (u32, u32)) -> &[u8] {
    &arena[at as usize..(at + len) as usize]
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
