//! Names as HBase checks them: table names ([`TableName`], namespace and qualifier, as
//! `TableName.valueOf`) and column family names (`isLegalColumnFamilyName`), with typed reasons
//! for a refusal ([`NameError`], [`FamilyNameError`]). Prose: `formats/schema.md` §"Names".

use hfkit_format::cell::MAX_FAMILY_LEN;

/// The namespace of tables named without one.
pub const DEFAULT_NAMESPACE: &str = "default";
/// HBase's system namespace.
pub const SYSTEM_NAMESPACE: &str = "hbase";
/// A family may not be named like the region's WAL-replay directory.
const RECOVERED_EDITS_DIR: &str = "recovered.edits";
/// Names ZooKeeper reserves, refused for namespaces and tables.
const DISALLOWED_TABLE_NAME: &str = "zookeeper";

/// Why HBase's `TableName` refuses a namespace or qualifier.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("namespace name must not be empty")]
    EmptyNamespace,
    #[error("namespaces may not be named 'zookeeper'")]
    ReservedNamespace,
    #[error(
        "illegal character '{}' at {index} of namespace '{namespace}': namespaces may only \
         contain letters, digits and '_'",
        .character.escape_default()
    )]
    NamespaceCharacter {
        character: char,
        index: usize,
        namespace: String,
    },
    #[error("table qualifier must not be empty")]
    EmptyQualifier,
    #[error("qualifier '{0}' must not start with '.' or '-'")]
    QualifierStart(String),
    #[error("tables may not be named 'zookeeper'")]
    ReservedQualifier,
    #[error(
        "illegal character '{}' at {index} of qualifier '{qualifier}': table qualifiers may \
         only contain letters, digits, '_', '-' and '.'",
        .character.escape_default()
    )]
    QualifierCharacter {
        character: char,
        index: usize,
        qualifier: String,
    },
}

/// Why `isLegalColumnFamilyName` (or the cell format's length limit) refuses a family name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FamilyNameError {
    #[error("column family name can not be empty")]
    Empty,
    #[error("column family names cannot start with a period")]
    LeadingPeriod,
    #[error(
        "illegal character 0x{0:02X}: column family names cannot contain control characters, \
         ':', '\\' or '/'"
    )]
    IllegalByte(u8),
    #[error("column family name cannot be 'recovered.edits'")]
    RecoveredEdits,
    #[error("{0} bytes, more than the maximum of {MAX_FAMILY_LEN}", MAX_FAMILY_LEN = MAX_FAMILY_LEN)]
    TooLong(usize),
}

/// A validated table name: namespace (`default` when none was given) and qualifier.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableName {
    pub namespace: String,
    pub qualifier: String,
}

impl TableName {
    /// Parses `qualifier` or `namespace:qualifier` (split at the first `:`, as
    /// `TableName.valueOf(String)` does) and checks both parts as HBase does.
    pub fn parse(name: &str) -> Result<TableName, crate::SchemaError> {
        TableName::parse_parts(name).map_err(|reason| crate::SchemaError::TableName {
            at: crate::error::At::default(),
            name: name.to_string(),
            reason,
        })
    }

    /// [`TableName::parse`] with the bare reason of a refusal.
    pub fn parse_parts(name: &str) -> Result<TableName, NameError> {
        let (ns, q) = match name.split_once(':') {
            Some((ns, q)) => (ns, q),
            None => (DEFAULT_NAMESPACE, name),
        };
        check_namespace(ns)?;
        check_qualifier(q)?;
        Ok(TableName {
            namespace: ns.to_string(),
            qualifier: q.to_string(),
        })
    }

    /// HBase's `getNameAsString`: the qualifier alone in the default namespace, else `ns:qualifier`.
    pub fn full_name(&self) -> String {
        if self.namespace == DEFAULT_NAMESPACE {
            self.qualifier.clone()
        } else {
            format!("{}:{}", self.namespace, self.qualifier)
        }
    }
}

/// Java's `Character.isAlphabetic || Character.isDigit` on one UTF-16 unit. Characters outside
/// the Basic Multilingual Plane are two surrogate units in Java, neither of which passes, so they
/// are refused here too. Digits are ASCII only (Java also takes other scripts' decimal digits;
/// refusing those is the safe side).
fn java_word_char(c: char) -> bool {
    (c as u32) <= 0xFFFF && (c.is_alphabetic() || c.is_ascii_digit())
}

/// `TableName.isLegalNamespaceName`.
fn check_namespace(ns: &str) -> Result<(), NameError> {
    if ns.is_empty() {
        return Err(NameError::EmptyNamespace);
    }
    if ns == DISALLOWED_TABLE_NAME {
        return Err(NameError::ReservedNamespace);
    }
    match ns
        .chars()
        .enumerate()
        .find(|&(_, c)| !(java_word_char(c) || c == '_'))
    {
        Some((index, character)) => Err(NameError::NamespaceCharacter {
            character,
            index,
            namespace: ns.to_string(),
        }),
        None => Ok(()),
    }
}

/// `TableName.isLegalTableQualifierName`.
fn check_qualifier(q: &str) -> Result<(), NameError> {
    if q.is_empty() {
        return Err(NameError::EmptyQualifier);
    }
    if q.starts_with('.') || q.starts_with('-') {
        return Err(NameError::QualifierStart(q.to_string()));
    }
    if q == DISALLOWED_TABLE_NAME {
        return Err(NameError::ReservedQualifier);
    }
    let legal = |c: char| java_word_char(c) || c == '_' || c == '-' || c == '.';
    match q.chars().enumerate().find(|&(_, c)| !legal(c)) {
        Some((index, character)) => Err(NameError::QualifierCharacter {
            character,
            index,
            qualifier: q.to_string(),
        }),
        None => Ok(()),
    }
}

/// `ColumnFamilyDescriptorBuilder.isLegalColumnFamilyName`, plus the 127-byte family limit of
/// the cell format.
pub fn check_family_name(name: &[u8]) -> Result<(), FamilyNameError> {
    if name.is_empty() {
        return Err(FamilyNameError::Empty);
    }
    if name[0] == b'.' {
        return Err(FamilyNameError::LeadingPeriod);
    }
    // Java's Character.isISOControl on a signed byte: 0x00-0x1F and 0x7F (0x80-0x9F are
    // negative there and pass).
    if let Some(&b) = name
        .iter()
        .find(|&&b| b < 0x20 || b == 0x7F || b == b':' || b == b'\\' || b == b'/')
    {
        return Err(FamilyNameError::IllegalByte(b));
    }
    if name == RECOVERED_EDITS_DIR.as_bytes() {
        return Err(FamilyNameError::RecoveredEdits);
    }
    if name.len() > MAX_FAMILY_LEN {
        return Err(FamilyNameError::TooLong(name.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names() {
        let t = TableName::parse("ns:users").unwrap();
        assert_eq!(
            (t.namespace.as_str(), t.qualifier.as_str()),
            ("ns", "users")
        );
        assert_eq!(t.full_name(), "ns:users");
        let t = TableName::parse("users.v2-x_1").unwrap();
        assert_eq!(t.namespace, "default");
        assert_eq!(t.full_name(), "users.v2-x_1");
        assert_eq!(TableName::parse("default:t").unwrap().full_name(), "t");
        assert!(TableName::parse("Ünïcode_表").is_ok());
        for bad in [
            "",
            "ns:",
            ":t",
            ".t",
            "-t",
            "a b",
            "ns-x:t",
            "zookeeper",
            "zookeeper:t",
            "a:b:c",
            "t/x",
            "t\u{1F600}",
        ] {
            assert!(TableName::parse(bad).is_err(), "{bad:?} should be refused");
        }
        let e = TableName::parse("ns-x:t").unwrap_err().to_string();
        assert!(e.contains("'ns-x:t'") && e.contains("namespace"), "{e}");
    }

    #[test]
    fn family_names() {
        for ok in ["d", "info", "a.b", "x-y", "\u{e9}", "f\u{85}"] {
            assert!(check_family_name(ok.as_bytes()).is_ok(), "{ok:?}");
        }
        for bad in [
            "",
            ".d",
            "a:b",
            "a/b",
            "a\\b",
            "a\tb",
            "a\x7fb",
            "recovered.edits",
        ] {
            assert!(
                check_family_name(bad.as_bytes()).is_err(),
                "{bad:?} should be refused"
            );
        }
        assert!(check_family_name(&[b'f'; 128]).is_err());
        assert!(check_family_name(&[b'f'; 127]).is_ok());
    }
}
