//! Store file names in HBase's layout (`StoreFileInfo`, `HFileLink`): plain HFiles, HFileLinks
//! and reference files, and where an HFileLink's target may live. Spec:
//! `formats/hbase-layout.md` §"Store files".
//!
//! ```text
//! hfile      [0-9a-f]+ [ _SeqId_<n>_ | _del ]
//! link       [<namespace>=]<table>=<encoded region>-<hfile>      (empty file)
//! reference  <hfile or link>.<parent encoded region>            (PBUF + Reference)
//! ```

use std::path::{Path, PathBuf};

use hfkit_table::TableName;

/// `archive/` under the root.
pub const ARCHIVE_DIR: &str = "archive";
/// `data/` under the root (and under `archive/`, `.tmp/`, `mobdir/`).
pub const DATA_DIR: &str = "data";
/// The root's temporary directory.
pub const TMP_DIR: &str = ".tmp";
/// The root's MOB directory.
pub const MOB_DIR: &str = "mobdir";

/// HBase's `HFILE_NAME_REGEX`: lowercase hex, optionally `_SeqId_<digits>_` or `_del`.
pub fn is_hfile_name(name: &str) -> bool {
    let hex_end = name
        .bytes()
        .position(|b| !matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        .unwrap_or(name.len());
    if hex_end == 0 {
        return false;
    }
    let rest = &name[hex_end..];
    if rest.is_empty() || rest == "_del" {
        return true;
    }
    rest.strip_prefix("_SeqId_")
        .and_then(|r| r.strip_suffix('_'))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The sequence id of a bulk-loaded file's name (`..._SeqId_<n>_`; HBase's
/// `StoreFileInfo.getBulkloadSeqId`).
pub fn bulkload_seq_id(name: &str) -> Option<u64> {
    let at = name.find("_SeqId_")?;
    let rest = &name[at + "_SeqId_".len()..];
    let end = rest.find('_')?;
    rest[..end].parse().ok()
}

fn is_encoded_region_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `TableName.VALID_NAMESPACE_REGEX` (letters, digits, `_`).
fn is_namespace(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c == '_' || c.is_alphanumeric())
}

/// `TableName.VALID_TABLE_QUALIFIER_REGEX` (letters, digits, `_`, then also `-` and `.`).
fn is_qualifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c == '_' || c.is_alphanumeric() => {}
        _ => return false,
    }
    chars.all(|c| matches!(c, '_' | '-' | '.') || c.is_alphanumeric())
}

/// An HFileLink name, parsed: the file `hfile` of `table`'s region `region`, same family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HFileLink {
    pub table: TableName,
    pub region: String,
    pub hfile: String,
}

impl HFileLink {
    /// Parses `[ns=]table=region-hfile` (HBase's `LINK_NAME_PATTERN`); `None` when `name` is
    /// not a link name.
    pub fn parse(name: &str) -> Option<HFileLink> {
        let (left, hfile) = name.rsplit_once('-')?;
        let (table_part, region) = left.rsplit_once('=')?;
        if !is_hfile_name(hfile) || !is_encoded_region_name(region) {
            return None;
        }
        let (namespace, qualifier) = match table_part.split_once('=') {
            Some((ns, q)) => (ns, q),
            None => (hfkit_table::schema::DEFAULT_NAMESPACE, table_part),
        };
        if !is_namespace(namespace) || !is_qualifier(qualifier) {
            return None;
        }
        Some(HFileLink {
            table: TableName {
                namespace: namespace.to_string(),
                qualifier: qualifier.to_string(),
            },
            region: region.to_string(),
            hfile: hfile.to_string(),
        })
    }

    /// The link name (`HFileLink.createHFileLinkName`): the table's name with `:` as `=`.
    pub fn name(&self) -> String {
        format!(
            "{}={}-{}",
            self.table.full_name().replace(':', "="),
            self.region,
            self.hfile
        )
    }

    /// Where the linked file may be, in HBase's search order: `data/`, `archive/data/`,
    /// `.tmp/data/`, `mobdir/data/` (each `<ns>/<table>/<region>/<family>/<hfile>`).
    pub fn locations(&self, root: &Path, family: &str) -> [PathBuf; 4] {
        let rel = Path::new(DATA_DIR)
            .join(&self.table.namespace)
            .join(&self.table.qualifier)
            .join(&self.region)
            .join(family)
            .join(&self.hfile);
        [
            root.join(&rel),
            root.join(ARCHIVE_DIR).join(&rel),
            root.join(TMP_DIR).join(&rel),
            root.join(MOB_DIR).join(&rel),
        ]
    }
}

/// Whether `name` is a MOB file's name (`MobFileName.getFileName`): the MD5 hex of the region
/// start key, the date `yyyyMMdd`, a 32-hex uuid, then (HBase 2.5 on) `_` and the encoded name
/// of the region that wrote it.
pub fn is_mob_file_name(name: &str) -> bool {
    let (body, region) = match name.split_once('_') {
        Some((b, r)) => (b, Some(r)),
        None => (name, None),
    };
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    body.len() == 72 && hex(body) && region.is_none_or(is_encoded_region_name)
}

/// A MOB region's store file `name` as the link HBase resolves it by (a snapshot lists MOB
/// files by name, a clone by `table=region-<mob file>` links, which `HFileLink.isHFileLink`
/// does not match because of the `_<region>` suffix): the file of the MOB region `region` of
/// `table`, or of the one the link names.
pub fn mob_link(name: &str, table: &TableName, region: &str) -> Option<HFileLink> {
    if is_mob_file_name(name) {
        return Some(HFileLink {
            table: table.clone(),
            region: region.to_string(),
            hfile: name.to_string(),
        });
    }
    let (left, file) = name.rsplit_once('-')?;
    let (table_part, linked_region) = left.rsplit_once('=')?;
    if !is_mob_file_name(file) || !is_encoded_region_name(linked_region) {
        return None;
    }
    let (namespace, qualifier) = match table_part.split_once('=') {
        Some((ns, q)) => (ns, q),
        None => (hfkit_table::schema::DEFAULT_NAMESPACE, table_part),
    };
    Some(HFileLink {
        table: TableName {
            namespace: namespace.to_string(),
            qualifier: qualifier.to_string(),
        },
        region: linked_region.to_string(),
        hfile: file.to_string(),
    })
}

/// What a store file name says the file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreFileName {
    /// An HFile in the store directory.
    HFile,
    /// An empty file naming an HFile of another region (usually another table).
    Link(HFileLink),
    /// Half of the file `referred` (an HFile name or a link name) of region `parent`, same
    /// table and family.
    Reference { referred: String, parent: String },
}

impl StoreFileName {
    /// Classifies `name` as HBase's `StoreFileInfo` does (link first, then reference, then
    /// HFile); `None` for a name that is none of them.
    pub fn parse(name: &str) -> Option<StoreFileName> {
        if let Some(link) = HFileLink::parse(name) {
            return Some(StoreFileName::Link(link));
        }
        // REF_NAME_PATTERN: (hfile|link) '.' (.+); the first '.' after a valid prefix.
        for (i, _) in name.match_indices('.') {
            let (referred, parent) = (&name[..i], &name[i + 1..]);
            if parent.is_empty() {
                break;
            }
            if is_hfile_name(referred) || HFileLink::parse(referred).is_some() {
                return Some(StoreFileName::Reference {
                    referred: referred.to_string(),
                    parent: parent.to_string(),
                });
            }
        }
        is_hfile_name(name).then_some(StoreFileName::HFile)
    }
}

/// `<root>/data/<ns>/<table>`.
pub fn table_dir(root: &Path, table: &TableName) -> PathBuf {
    root.join(DATA_DIR)
        .join(&table.namespace)
        .join(&table.qualifier)
}

/// `<root>/archive/data/<ns>/<table>`.
pub fn archive_table_dir(root: &Path, table: &TableName) -> PathBuf {
    root.join(ARCHIVE_DIR)
        .join(DATA_DIR)
        .join(&table.namespace)
        .join(&table.qualifier)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_classified_as_hbase_does() {
        assert!(is_hfile_name("cfca939b85130c57fc914135e3f5cb6f"));
        assert!(is_hfile_name("ab12_SeqId_42_"));
        assert!(is_hfile_name("ab12_del"));
        assert!(!is_hfile_name("ab12_SeqId_42"));
        assert!(!is_hfile_name("AB12"));
        assert!(!is_hfile_name(""));
        assert_eq!(bulkload_seq_id("ab12_SeqId_42_"), Some(42));
        assert_eq!(bulkload_seq_id("ab12"), None);

        let l = HFileLink::parse(
            "t1=3997d7168c1693a7e337a840fa1290a5-485ac0bc9325a413ef398c315fdc775f",
        )
        .unwrap();
        assert_eq!(l.table.full_name(), "t1");
        assert_eq!(l.region, "3997d7168c1693a7e337a840fa1290a5");
        assert_eq!(l.hfile, "485ac0bc9325a413ef398c315fdc775f");
        let l = HFileLink::parse("ns1=my-t.x=abc-12_SeqId_3_").unwrap();
        assert_eq!(l.table.full_name(), "ns1:my-t.x");
        assert_eq!(l.name(), "ns1=my-t.x=abc-12_SeqId_3_");
        assert!(HFileLink::parse("t1=xyz-12").is_none(), "region not hex");
        assert!(HFileLink::parse("a=b=c=d1-12").is_none());

        assert_eq!(StoreFileName::parse("0d78"), Some(StoreFileName::HFile));
        assert_eq!(
            StoreFileName::parse("cfca.65374ed9"),
            Some(StoreFileName::Reference {
                referred: "cfca".into(),
                parent: "65374ed9".into()
            })
        );
        assert_eq!(
            StoreFileName::parse("ns1=t2=6537-cfca.6537"),
            Some(StoreFileName::Reference {
                referred: "ns1=t2=6537-cfca".into(),
                parent: "6537".into()
            })
        );
        assert_eq!(
            StoreFileName::parse("my.t=6537-cfca.6537"),
            Some(StoreFileName::Reference {
                referred: "my.t=6537-cfca".into(),
                parent: "6537".into()
            })
        );
        assert!(StoreFileName::parse(".filelist").is_none());
        assert!(StoreFileName::parse("junk-name").is_none());
    }
}
