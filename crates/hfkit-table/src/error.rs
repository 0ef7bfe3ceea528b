//! [`SchemaError`], the error of reading a schema (TOML or shell, with its splits and mapping),
//! and [`Location`], where in a schema text an error was found. Messages name the offending
//! item: file, line and column of a schema file (or the column of a shell statement), the
//! family, the attribute, the split key. The table's operations return [`crate::TableError`];
//! a few checks have their own small errors (names, units, `to_bytes_binary`, store-file and
//! region-chain checks) that these two wrap or turn into messages.

use std::fmt;
use std::path::PathBuf;

/// A place in a schema text: `source` is a file path or a label such as `<shell>`; `line` and
/// `column` count from 1 (the column in characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub source: String,
    pub line: usize,
    pub column: usize,
}

impl Location {
    /// The location of byte offset `offset` in `text` (clamped to the text).
    pub fn of_offset(source: &str, text: &str, offset: usize) -> Location {
        let mut end = offset.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &text[..end];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Location {
            source: source.to_string(),
            line,
            column,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.source, self.line, self.column)
    }
}

/// An optional location, displayed as `source:line:column: ` or as nothing (boxed to keep
/// [`SchemaError`] small).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct At(pub Option<Box<Location>>);

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(l) => write!(f, "{l}: "),
            None => Ok(()),
        }
    }
}

impl From<Location> for At {
    fn from(l: Location) -> At {
        At(Some(Box::new(l)))
    }
}

/// Displays `family 'x' ` or `table ` for messages about attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner(pub Option<String>);

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(name) => write!(f, "family '{name}'"),
            None => f.write_str("table"),
        }
    }
}

/// `section` or `key` for [`SchemaError::UnknownKey`].
struct Kind<'a>(&'a Option<String>);

impl fmt::Display for Kind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "key" } else { "section" })
    }
}

/// ` in [splits]` or nothing.
struct InSection<'a>(&'a Option<String>);

impl fmt::Display for InSection<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(s) => write!(f, " in {s}"),
            None => Ok(()),
        }
    }
}

/// `, not integer` or nothing.
struct Found<'a>(&'a Option<&'static str>);

impl fmt::Display for Found<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(t) => write!(f, ", not {t}"),
            None => Ok(()),
        }
    }
}

/// Everything that can be wrong with a table schema, its splits or its import mapping.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The text is not well-formed (TOML or shell syntax).
    #[error("{at}{message}")]
    Syntax { at: At, message: String },

    /// A table or namespace name HBase's `TableName` would refuse.
    #[error("{at}table name '{name}': {reason}")]
    TableName {
        at: At,
        name: String,
        reason: crate::schema::NameError,
    },

    /// A family name `ColumnFamilyDescriptorBuilder.isLegalColumnFamilyName` would refuse.
    #[error("{at}family name '{name}': {reason}")]
    FamilyName {
        at: At,
        name: String,
        reason: crate::schema::FamilyNameError,
    },

    /// The same family twice (TOML form; the shell replaces with a warning).
    #[error("{at}family '{family}' is defined twice")]
    DuplicateFamily { at: At, family: String },

    /// HBase refuses tables without families.
    #[error("{at}table '{table}' has no column family")]
    NoFamilies { at: At, table: String },

    /// An attribute name HBase does not know (at family or table level).
    #[error("{at}{owner}: unknown attribute '{attribute}'")]
    UnknownAttribute {
        at: At,
        owner: Owner,
        attribute: String,
    },

    /// A key that a section of the TOML schema file does not have (`section` is `None` for a
    /// top-level section); `expected` lists the keys it has.
    #[error(
        "{at}unknown {} '{key}'{} (expected {expected})",
        Kind(section),
        InSection(section)
    )]
    UnknownKey {
        at: At,
        key: String,
        section: Option<String>,
        expected: &'static str,
    },

    /// A value of the TOML schema file of the wrong type or range: `item` names it (`[splits]
    /// regions`), `found` is the TOML type given when the type is wrong.
    #[error("{at}{item} must be {expected}{}", Found(found))]
    WrongValue {
        at: At,
        item: String,
        expected: String,
        found: Option<&'static str>,
    },

    /// A known attribute with a value HBase would refuse.
    #[error("{at}{owner}: attribute {attribute} = {value}: {reason}")]
    InvalidAttribute {
        at: At,
        owner: Owner,
        attribute: String,
        value: String,
        reason: String,
    },

    /// A split algorithm name that is not one of HBase's built-in three.
    #[error("{at}unknown split algorithm '{name}' (expected HexStringSplit, DecimalStringSplit or UniformSplit)")]
    UnknownSplitAlgorithm { at: At, name: String },

    /// A split algorithm cannot produce the requested regions.
    #[error("{algorithm}: {reason}")]
    SplitRange {
        algorithm: &'static str,
        reason: String,
    },

    /// A split key that is empty, duplicated, or badly written.
    #[error("{at}split key '{key}': {reason}")]
    SplitKey { at: At, key: String, reason: String },

    /// The `[splits]` / `SPLITS` specification itself is inconsistent.
    #[error("{at}splits: {reason}")]
    Splits { at: At, reason: String },

    /// An `[rowkey]` or `[[column]]` entry that cannot be used.
    #[error("{at}{what}: {reason}")]
    Mapping {
        at: At,
        what: String,
        reason: String,
    },

    /// Reading a schema or splits file failed.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_counts_lines_and_characters() {
        let text = "ab\ncé\nxyz";
        assert_eq!(Location::of_offset("f", text, 0).to_string(), "f:1:1");
        assert_eq!(Location::of_offset("f", text, 3).to_string(), "f:2:1");
        // 'é' is two bytes, one column.
        assert_eq!(Location::of_offset("f", text, 6).to_string(), "f:2:3");
        assert_eq!(Location::of_offset("f", text, 99).to_string(), "f:3:4");
    }
}
