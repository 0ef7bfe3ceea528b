//! A snapshot's description, `.hbase-snapshot/<name>/.snapshotinfo` (HBase's
//! `SnapshotDescription`): what a snapshot is called, of which table, when, of which type and
//! manifest format. Spec: `formats/hbase-layout.md` §"Snapshots".

use std::path::Path;

use prost::Message;

use super::proto;
use super::{ContentError, HBaseError, Result};
use hfkit_table::TableName;

/// A snapshot's description file.
pub const SNAPSHOT_INFO_FILE: &str = ".snapshotinfo";
/// The manifest format version of v1 snapshots.
pub const VERSION_1: i32 = 0;
/// The manifest format version HBase writes today.
pub const VERSION_2: i32 = 2;

/// A snapshot's description (`.snapshotinfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotInfo {
    pub name: String,
    /// `ns:qualifier`, or the qualifier alone in the default namespace.
    pub table: String,
    pub creation_time: i64,
    /// `DISABLED`, `FLUSH` or `SKIPFLUSH`.
    pub snapshot_type: String,
    pub version: i32,
    pub owner: Option<String>,
    pub ttl: i64,
}

impl SnapshotInfo {
    /// From the message; an error for an unknown type.
    pub fn from_proto(p: &proto::SnapshotDescription) -> Result<SnapshotInfo, ContentError> {
        let t = p.r#type.unwrap_or(proto::SnapshotType::Flush as i32);
        let snapshot_type = match proto::SnapshotType::try_from(t) {
            Ok(proto::SnapshotType::Disabled) => "DISABLED",
            Ok(proto::SnapshotType::Flush) => "FLUSH",
            Ok(proto::SnapshotType::SkipFlush) => "SKIPFLUSH",
            Err(_) => return Err(ContentError::SnapshotType(t)),
        };
        Ok(SnapshotInfo {
            name: p.name.clone(),
            table: p.table.clone().unwrap_or_default(),
            creation_time: p.creation_time.unwrap_or(0),
            snapshot_type: snapshot_type.into(),
            version: p.version.unwrap_or(VERSION_1),
            owner: p.owner.clone(),
            ttl: p.ttl.unwrap_or(0),
        })
    }

    /// The message HBase writes for a FLUSH snapshot of format v2.
    pub fn to_proto(&self) -> proto::SnapshotDescription {
        let t = match self.snapshot_type.as_str() {
            "DISABLED" => proto::SnapshotType::Disabled,
            "SKIPFLUSH" => proto::SnapshotType::SkipFlush,
            _ => proto::SnapshotType::Flush,
        };
        proto::SnapshotDescription {
            name: self.name.clone(),
            table: Some(self.table.clone()),
            creation_time: Some(self.creation_time),
            r#type: Some(t as i32),
            version: Some(self.version),
            owner: self.owner.clone(),
            ttl: (self.ttl != 0).then_some(self.ttl),
            max_file_size: None,
        }
    }

    /// Reads `.snapshotinfo` of the snapshot directory `dir`.
    pub fn read(dir: &Path) -> Result<SnapshotInfo> {
        let path = dir.join(SNAPSHOT_INFO_FILE);
        let bytes = std::fs::read(&path).map_err(|e| HBaseError::io(&path, e))?;
        let p = proto::SnapshotDescription::decode(bytes.as_slice()).map_err(|e| {
            HBaseError::corrupt(&path, format!("unable to parse snapshot description: {e}"))
        })?;
        SnapshotInfo::from_proto(&p).map_err(|e| HBaseError::content(&path, e))
    }

    /// The snapshot's table.
    pub fn table_name(&self, path: &Path) -> Result<TableName> {
        TableName::parse(&self.table)
            .map_err(|e| HBaseError::corrupt(&path.join(SNAPSHOT_INFO_FILE), format!("table: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_snapshot_type_is_a_typed_error_naming_the_file() {
        let info = SnapshotInfo {
            name: "s".into(),
            table: "t".into(),
            creation_time: 1,
            snapshot_type: "FLUSH".into(),
            version: VERSION_2,
            owner: None,
            ttl: 0,
        };
        let mut p = info.to_proto();
        assert_eq!(SnapshotInfo::from_proto(&p).unwrap(), info);
        p.r#type = Some(9);
        assert!(matches!(
            SnapshotInfo::from_proto(&p),
            Err(ContentError::SnapshotType(9))
        ));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SNAPSHOT_INFO_FILE), p.encode_to_vec()).unwrap();
        match SnapshotInfo::read(dir.path()) {
            Err(HBaseError::Content {
                path,
                source: ContentError::SnapshotType(9),
            }) => assert_eq!(path, dir.path().join(SNAPSHOT_INFO_FILE)),
            other => panic!("{other:?}"),
        }
    }
}
