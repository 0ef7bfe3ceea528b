//! The mapping, the import's second stage: a record's fields → its row key (the rowkey spec
//! language, and its inverse for exports and reads), its timestamps, its cell values, and the
//! cells themselves (`formats/rowkey.md`, `formats/schema.md`); and back: stored values and
//! keys shown as the schema typed them.

pub mod encode;
pub mod rowkey;
pub mod timestamp;
pub mod typed;
pub mod value;
