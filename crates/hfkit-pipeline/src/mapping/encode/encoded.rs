//! What encoding produces: the cells a worker encodes ([`EncodedCell`], byte ranges into its
//! arena), a worker's [`Encoded`] slice of a batch with its rejected records and key counts,
//! and the TTL tag bytes a cell carries ([`ttl_tag`]). Spec: `formats/import.md` §"Rejected
//! records"; `formats/schema.md` §"Import mapping".

use crate::error::Rejection;
use hfkit_format::cell::CellType;
use hfkit_read::matcher::TTL_TAG_TYPE;

/// HBase's serialized TTL tag (`TagType.TTL_TAG_TYPE`): `u16 length = 9 | u8 type 8 | i64 ms`,
/// big-endian, as `Mutation.setTTL` writes it.
pub fn ttl_tag(ms: i64) -> [u8; 11] {
    let mut t = [0u8; 11];
    t[..2].copy_from_slice(&9u16.to_be_bytes());
    t[2] = TTL_TAG_TYPE;
    t[3..].copy_from_slice(&ms.to_be_bytes());
    t
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
    pub(super) fn reset(&mut self) {
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
