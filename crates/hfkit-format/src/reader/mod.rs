//! The HFile reader: open, scan, seek. Spec: `formats/hfile.md` §"Reading".
//!
//! ```text
//! open:  trailer (last 4096 bytes) → load-on-open section at load_on_open_data_offset:
//!        ROOT_INDEX (data index root [+ mid-key]) | ROOT_INDEX (meta index) | FILE_INFO |
//!        [GENERAL_BLOOM_META] [DELETE_FAMILY_BLOOM_META]
//! scan:  blocks from offset 0, walking offset + onDiskSizeWithHeader to the load-on-open
//!        section, decoding the data blocks and skipping the others
//! seek:  root → intermediate → leaf (last entry ≤ key at each level) → data block → first cell ≥ key
//! ```
//!
//! A reader may be restricted to one half of its file ([`HFileReader::into_half`], HBase's
//! `HalfStoreFileReader` for the reference files a region split leaves): its scanners then
//! return only the cells on that side of the split key. Everything else (index, FileInfo,
//! Bloom filters, entry count) stays the whole file's, a superset of the half's.
//!
//! Every block read is checksum-verified before it is decompressed or decoded; any
//! inconsistency is a [`FormatError`](crate::error::FormatError) naming the offset. No input
//! can make the reader panic or allocate more than the file's own sizes justify.
//!
//! The trailer has no checksum, so no trailer field is trusted alone (`formats/hfile.md`
//! §"Trailer"): [`Trailer::read`](crate::trailer::Trailer::read) checks the fields against each
//! other and the file length; opening checks them against the load-on-open section (it must chain
//! block by block from `load_on_open_data_offset` to the trailer, the root index must hold exactly
//! `data_index_count` entries, a one-level index must start at `first_data_block_offset` and end at
//! `last_data_block_offset`); a scan walks every block up to the load-on-open section instead of
//! stopping where the trailer says the data ends, and when it reaches the end it checks the last
//! data block's offset, and the cells it decoded from the first one, against the trailer. So a scan
//! can never end early because of a trailer field: it returns every cell or fails.
//!
//! | module | owns |
//! |---|---|
//! | `file` | [`HFileReader`]: the file's bytes and metadata, block reads, index walk, mid key, Bloom probes, half |
//! | `open` | opening: the trailer, the load-on-open section and their cross-checks |
//! | `scanner` | [`Scanner`]: the block walk, seeks, the end-of-scan checks, half readers' bounds |
//! | `ranged` | files read by byte ranges ([`RangeSource`]): the kept end, sized reads, read-ahead |

mod file;
mod open;
mod ranged;
mod scanner;

pub use file::{BloomProbe, FileBounds, HFileReader, HalfRange, LoadOnOpenBlock};
pub use ranged::{RangeReads, RangeSource, MAX_READAHEAD, MIN_READAHEAD, OPEN_READ};
pub use scanner::Scanner;
