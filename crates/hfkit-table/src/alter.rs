//! `alter`: changing a column family's settings in a new manifest version, validated as HBase's
//! `ColumnFamilyDescriptor` is. Spec: `formats/table.md` §"Alter".

use crate::directory::Table;
use crate::manifest::FamilyEntry;
use crate::read::family_read_settings;
use crate::schema::BloomFilterKind;
use crate::TableError;
use hfkit_format::compression::Compression;
use hfkit_format::encoding::DataBlockEncoding;
use hfkit_read::KeepDeletedCells;

/// Changes to a family's settings (`None` = unchanged).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FamilyChanges {
    pub compression: Option<Compression>,
    pub data_block_encoding: Option<DataBlockEncoding>,
    pub bloom_filter: Option<BloomFilterKind>,
    pub block_size: Option<u32>,
    pub versions: Option<u32>,
    pub min_versions: Option<u32>,
    /// `Some(None)` = FOREVER.
    pub ttl_seconds: Option<Option<u64>>,
    pub keep_deleted_cells: Option<KeepDeletedCells>,
    /// COMPRESS_TAGS: whether files written with tags compress them.
    pub compress_tags: Option<bool>,
    /// Family CONFIGURATION keys set (`Some`) or removed (`None`), in order: the writer
    /// settings of `writer_settings` (Bloom block size, error rate and fold, index block size
    /// and minimum entries, ZSTD level) among any others HBase keeps.
    pub configuration: Vec<(String, Option<String>)>,
}

impl Table {
    /// Changes family `family`'s settings in a new manifest version. Files already written
    /// keep their encoding; later attaches (splits) and compactions use the new settings,
    /// and reads and compactions use the new VERSIONS / MIN_VERSIONS / TTL /
    /// KEEP_DELETED_CELLS at once.
    pub fn alter(&self, family: &str, changes: &FamilyChanges) -> Result<FamilyEntry, TableError> {
        let lock = self.lock()?;
        self.collect_garbage(&lock)?;
        let m = self.manifest()?;
        let mut next = m.clone();
        let f = next
            .families
            .iter_mut()
            .find(|f| f.name == family)
            .ok_or_else(|| TableError::Invalid(format!("no family '{family}'")))?;
        if let Some(v) = changes.compression {
            f.compression = v.name().into();
        }
        if let Some(v) = changes.data_block_encoding {
            f.data_block_encoding = v.name().into();
        }
        if let Some(v) = changes.bloom_filter {
            f.bloom_filter = v.manifest_form();
            // HBase keeps the ROWPREFIX_FIXED_LENGTH prefix length in the family configuration.
            if let BloomFilterKind::RowPrefixFixedLength(n) = v {
                f.other
                    .configuration
                    .insert(crate::schema::ROW_PREFIX_LENGTH_KEY.into(), n.to_string());
            }
        }
        if let Some(v) = changes.block_size {
            f.block_size = v;
        }
        if let Some(v) = changes.versions {
            f.versions = v;
        }
        if let Some(v) = changes.min_versions {
            f.min_versions = v;
        }
        if let Some(v) = changes.ttl_seconds {
            f.ttl_seconds = v;
        }
        if let Some(v) = changes.keep_deleted_cells {
            f.keep_deleted_cells = v.name().into();
        }
        if let Some(v) = changes.compress_tags {
            f.compress_tags = v;
        }
        for (key, value) in &changes.configuration {
            match value {
                Some(v) => f.other.configuration.insert(key.clone(), v.clone()),
                None => f.other.configuration.remove(key),
            };
        }
        validate_family(f)?;
        let out = f.clone();
        if next == m {
            return Ok(out);
        }
        next.version += 1;
        self.commit(&next, &[])?;
        Ok(out)
    }
}

/// Checks a family's settings as HBase's `ColumnFamilyDescriptor` validation does for the
/// attributes `alter` can change.
fn validate_family(f: &FamilyEntry) -> Result<(), TableError> {
    let bad = |msg: String| TableError::Invalid(format!("family {}: {msg}", f.name));
    if f.versions == 0 {
        return Err(bad("VERSIONS must be at least 1".into()));
    }
    if f.min_versions > f.versions {
        return Err(bad(format!(
            "MIN_VERSIONS {} is larger than VERSIONS {}",
            f.min_versions, f.versions
        )));
    }
    if f.ttl_seconds == Some(0) {
        return Err(bad("TTL must be positive (or FOREVER)".into()));
    }
    if f.block_size == 0 {
        return Err(bad("BLOCKSIZE must be positive".into()));
    }
    family_read_settings(f)?;
    f.writer_options(0)?;
    Ok(())
}
