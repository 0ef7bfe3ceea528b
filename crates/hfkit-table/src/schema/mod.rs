//! Table schemas: the model ([`TableSchema`], [`FamilySchema`], [`SplitSpec`]), HBase's defaults
//! and validation rules, the TOML schema file, and the [`ImportMapping`] a schema file carries
//! for the import pipeline. Prose: `formats/schema.md`.
//!
//! ```text
//! schema file (TOML)        [table] [[family]]... [splits] [rowkey] [[column]]...
//!   toml_doc: serde types with spans (unknown keys, value types)  -> toml_form: meaning
//! shell statement           create 'ns:t', {NAME => 'f', ...}, ..., SPLITS => [...]   (crate::shell)
//!        \                      /
//!         SchemaBuilder: names checked as TableName / isLegalColumnFamilyName,
//!                        attributes checked one by one (FamilySchema::set_attribute),
//!                        then per family (VERSIONS >= 1, MIN_VERSIONS <= VERSIONS, TTL > 0,
//!                        1 KiB <= BLOCKSIZE <= 16 MiB, ROWPREFIX bloom has a prefix length)
//!         -> ParsedSchema { table: TableSchema, mapping: ImportMapping, warnings }
//! ```
//!
//! | module | owns | prose (`formats/schema.md`) |
//! |---|---|---|
//! | [`names`] | [`TableName`], namespace, qualifier and family name rules | §"Names" |
//! | [`units`] | HBase's duration (`TTL`) and size syntaxes | §"Family attributes", §"Table attributes" |
//! | [`attributes`] | [`FamilySchema`], family and table attributes, HBase's defaults | §"Family attributes", §"Table attributes" |
//! | [`table`] | [`TableSchema`], [`SplitSpec`] | §"Sections", §"Splits" |
//! | [`mapping`] | [`ImportMapping`], [`ColumnMapping`], [`IndexSchema`], [`ParsedSchema`] (a table and its mapping) | §"Import mapping", §"Index tables" |
//! | `load` | reading a schema file or text (TOML or shell, one table or several) into [`ParsedSchema`]s | §"Sections", §"Several tables from one input" |
//! | [`builder`] | [`SchemaBuilder`]: both front ends' assembly and whole-table checks | §"Names", §"Warnings" |
//! | `toml_doc` | the TOML file as serde types with spans; library errors located and worded | §"Sections" |
//! | `toml_form` | the TOML file's meaning: sections into a [`SchemaBuilder`] and mapping | §"Sections", §"Splits", §"Import mapping", §"Index tables" |
//!
//! Attribute names are HBase's (`VERSIONS`, `BLOOMFILTER`, ...), matched case-insensitively;
//! an unknown name is an error naming it. Values follow HBase's parsers (the shell's duration
//! and size strings for `TTL` and `BLOCKSIZE`, enum names case-insensitively).

pub mod attributes;
pub mod builder;
mod load;
pub mod mapping;
pub mod names;
pub mod table;
mod toml_doc;
mod toml_form;
pub mod units;

pub(crate) use attributes::attr_error;
pub use attributes::{
    table_attribute, AttrError, AttrValue, BloomFilterKind, FamilyProblem, FamilySchema,
    KeepDeletedCells, DEFAULT_BLOCK_SIZE, DEFAULT_MIN_VERSIONS, DEFAULT_VERSIONS, MAX_BLOCK_SIZE,
    MIN_BLOCK_SIZE, ROW_PREFIX_LENGTH_KEY,
};
pub use builder::{SchemaBuilder, FAMILY_COUNT_WARNING};
pub use mapping::{
    ColumnMapping, DeleteAction, DeleteScope, ExplodeMapping, ImportMapping, IndexSchema,
    OperationMapping, ParsedSchema, QualifierPart, TimestampSource, TtlSource, ValueType,
};
pub use names::{
    check_family_name, FamilyNameError, NameError, TableName, DEFAULT_NAMESPACE, SYSTEM_NAMESPACE,
};
pub(crate) use table::explicit_keys;
pub use table::{SplitSpec, TableSchema};
pub use units::{
    format_interval_seconds, parse_interval_seconds, parse_size_bytes, UnitError, TTL_FOREVER,
};
