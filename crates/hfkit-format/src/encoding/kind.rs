//! [`DataBlockEncoding`]: which encoding a file's data blocks use, with its on-disk id (the
//! `i16` at the head of every ENCODED_DATA payload), its HBase name (FileInfo
//! `DATA_BLOCK_ENCODING`) and the block type its data blocks have. Spec: `formats/hfile.md`
//! §"Data blocks" and `formats/encodings.md` (its table of encodings and ids).

use crate::block::BlockType;

/// `DataBlockEncoding`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DataBlockEncoding {
    #[default]
    None,
    Prefix,
    Diff,
    FastDiff,
    RowIndexV1,
}

impl DataBlockEncoding {
    pub const ALL: [DataBlockEncoding; 5] = [
        DataBlockEncoding::None,
        DataBlockEncoding::Prefix,
        DataBlockEncoding::Diff,
        DataBlockEncoding::FastDiff,
        DataBlockEncoding::RowIndexV1,
    ];

    pub const fn id(self) -> u16 {
        match self {
            DataBlockEncoding::None => 0,
            DataBlockEncoding::Prefix => 2,
            DataBlockEncoding::Diff => 3,
            DataBlockEncoding::FastDiff => 4,
            DataBlockEncoding::RowIndexV1 => 7,
        }
    }

    pub fn from_id(id: u16) -> Option<DataBlockEncoding> {
        DataBlockEncoding::ALL.into_iter().find(|e| e.id() == id)
    }

    /// HBase's enum name, as stored in FileInfo `DATA_BLOCK_ENCODING`.
    pub const fn name(self) -> &'static str {
        match self {
            DataBlockEncoding::None => "NONE",
            DataBlockEncoding::Prefix => "PREFIX",
            DataBlockEncoding::Diff => "DIFF",
            DataBlockEncoding::FastDiff => "FAST_DIFF",
            DataBlockEncoding::RowIndexV1 => "ROW_INDEX_V1",
        }
    }

    /// Parses a name case-insensitively (`fast_diff`, `FAST_DIFF`).
    pub fn from_name(s: &str) -> Option<DataBlockEncoding> {
        let up = s.to_ascii_uppercase();
        DataBlockEncoding::ALL.into_iter().find(|e| e.name() == up)
    }

    /// The block type data blocks of this encoding use.
    pub const fn block_type(self) -> BlockType {
        match self {
            DataBlockEncoding::None => BlockType::Data,
            _ => BlockType::EncodedData,
        }
    }
}
