//! The import pipeline layer: turning input records into cells for the table layer's schema.
//!
//! So far it owns the per-record encoders the pipeline is built from:
//!
//! | module | owns | prose |
//! |---|---|---|
//! | [`rowkey`] | the rowkey spec language: parse once, compile against the input's columns, encode per row | `formats/rowkey.md` |
//! | [`value`] | cell value encodings (`string`, `int64`, `double` as HBase's `Bytes.toBytes`) | `formats/rowkey.md` §"Cell values" |
//! | [`hash`] | HBase's MurmurHash (the `salt` function's hash) | `formats/rowkey.md` §"salt" |
//!
//! Reading input files, sorting, and writing HFiles per region are not here yet.
//! Every failure is a [`RowkeyError`] naming the field or spec position at fault.

pub mod error;
pub mod hash;
pub mod rowkey;
pub mod value;

pub use error::RowkeyError;
pub use rowkey::{FieldSource, RowkeyEncoder, RowkeySpec};
