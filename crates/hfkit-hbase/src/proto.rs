//! The protobuf messages of HBase's on-disk layout, by hand as `prost` derives (no protoc):
//! `HBase.proto` (TableName, TableSchema, ColumnFamilySchema, NameStringPair, RegionInfo),
//! `server/io/FS.proto` (HBaseVersionFileContent, Reference), `server/Snapshot.proto`
//! (SnapshotDescription, SnapshotRegionManifest, SnapshotDataManifest),
//! `server/region/StoreFileTracker.proto` (StoreFileEntry, StoreFileList),
//! `server/io/HFile.proto` (CompactionEventTracker) and `server/ClusterId.proto`. Spec:
//! `formats/hbase-layout.md`, each message in the section of the file that holds it. Field
//! numbers and types are on disk: DO NOT CHANGE. All are proto2; `required` fields are always
//! written, `optional` ones only when `Some`.

pub use hfkit_format::proto::BytesBytesPair;

/// `hbase.pb.TableName`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TableName {
    #[prost(bytes = "vec", required, tag = "1")]
    pub namespace: Vec<u8>,
    #[prost(bytes = "vec", required, tag = "2")]
    pub qualifier: Vec<u8>,
}

/// `hbase.pb.NameStringPair`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NameStringPair {
    #[prost(string, required, tag = "1")]
    pub name: String,
    #[prost(string, required, tag = "2")]
    pub value: String,
}

/// `hbase.pb.TableSchema` (the content of `.tableinfo` files after `PBUF`, and of
/// `data.manifest`'s `table_schema`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TableSchema {
    #[prost(message, optional, tag = "1")]
    pub table_name: Option<TableName>,
    #[prost(message, repeated, tag = "2")]
    pub attributes: Vec<BytesBytesPair>,
    #[prost(message, repeated, tag = "3")]
    pub column_families: Vec<ColumnFamilySchema>,
    #[prost(message, repeated, tag = "4")]
    pub configuration: Vec<NameStringPair>,
}

/// `hbase.pb.ColumnFamilySchema`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ColumnFamilySchema {
    #[prost(bytes = "vec", required, tag = "1")]
    pub name: Vec<u8>,
    #[prost(message, repeated, tag = "2")]
    pub attributes: Vec<BytesBytesPair>,
    #[prost(message, repeated, tag = "3")]
    pub configuration: Vec<NameStringPair>,
}

/// `hbase.pb.RegionInfo` (`.regioninfo` holds `PBUF` + this, length-delimited).
#[derive(Clone, PartialEq, prost::Message)]
pub struct RegionInfo {
    #[prost(uint64, required, tag = "1")]
    pub region_id: u64,
    #[prost(message, required, tag = "2")]
    pub table_name: TableName,
    #[prost(bytes = "vec", optional, tag = "3")]
    pub start_key: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "4")]
    pub end_key: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "5")]
    pub offline: Option<bool>,
    #[prost(bool, optional, tag = "6")]
    pub split: Option<bool>,
    #[prost(int32, optional, tag = "7")]
    pub replica_id: Option<i32>,
}

/// `hbase.pb.HBaseVersionFileContent` (`hbase.version`, after `PBUF`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct HBaseVersionFileContent {
    #[prost(string, required, tag = "1")]
    pub version: String,
}

/// `hbase.pb.ClusterId` (`hbase.id`, after `PBUF`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClusterId {
    #[prost(string, required, tag = "1")]
    pub cluster_id: String,
}

/// `hbase.pb.Reference.Range`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum ReferenceRange {
    Top = 0,
    Bottom = 1,
}

/// `hbase.pb.Reference` (a reference file holds `PBUF` + this).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Reference {
    #[prost(bytes = "vec", required, tag = "1")]
    pub splitkey: Vec<u8>,
    #[prost(enumeration = "ReferenceRange", required, tag = "2")]
    pub range: i32,
}

/// `hbase.pb.SnapshotDescription.Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum SnapshotType {
    Disabled = 0,
    Flush = 1,
    SkipFlush = 2,
}

/// `hbase.pb.SnapshotDescription` (`.snapshotinfo`, no magic). Field 7
/// (`users_and_permissions`) is not modelled: a reader skips it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SnapshotDescription {
    #[prost(string, required, tag = "1")]
    pub name: String,
    #[prost(string, optional, tag = "2")]
    pub table: Option<String>,
    #[prost(int64, optional, tag = "3")]
    pub creation_time: Option<i64>,
    #[prost(enumeration = "SnapshotType", optional, tag = "4")]
    pub r#type: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub version: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub owner: Option<String>,
    #[prost(int64, optional, tag = "8")]
    pub ttl: Option<i64>,
    #[prost(int64, optional, tag = "9")]
    pub max_file_size: Option<i64>,
}

/// `hbase.pb.SnapshotRegionManifest.StoreFile`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SnapshotStoreFile {
    #[prost(string, required, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub reference: Option<Reference>,
    #[prost(uint64, optional, tag = "3")]
    pub file_size: Option<u64>,
}

/// `hbase.pb.SnapshotRegionManifest.FamilyFiles`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FamilyFiles {
    #[prost(bytes = "vec", required, tag = "1")]
    pub family_name: Vec<u8>,
    #[prost(message, repeated, tag = "2")]
    pub store_files: Vec<SnapshotStoreFile>,
}

/// `hbase.pb.SnapshotRegionManifest` (one region of a snapshot; also a `region-manifest.*`
/// file of a snapshot in progress).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SnapshotRegionManifest {
    #[prost(int32, optional, tag = "1")]
    pub version: Option<i32>,
    #[prost(message, required, tag = "2")]
    pub region_info: RegionInfo,
    #[prost(message, repeated, tag = "3")]
    pub family_files: Vec<FamilyFiles>,
}

/// `hbase.pb.SnapshotDataManifest` (`data.manifest`, no magic).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SnapshotDataManifest {
    #[prost(message, required, tag = "1")]
    pub table_schema: TableSchema,
    #[prost(message, repeated, tag = "2")]
    pub region_manifests: Vec<SnapshotRegionManifest>,
}

/// `hbase.pb.StoreFileEntry` (FILE store-file tracker).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StoreFileEntry {
    #[prost(string, required, tag = "1")]
    pub name: String,
    #[prost(uint64, required, tag = "2")]
    pub size: u64,
    #[prost(message, optional, tag = "3")]
    pub reference: Option<Reference>,
}

/// `hbase.pb.StoreFileList` (a `.filelist/f1.<ts>` / `f2.<ts>` file holds a 4-byte length,
/// this, and a CRC32 of it).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StoreFileList {
    #[prost(uint64, required, tag = "1")]
    pub timestamp: u64,
    #[prost(message, repeated, tag = "2")]
    pub store_file: Vec<StoreFileEntry>,
    #[prost(uint64, optional, tag = "3")]
    pub version: Option<u64>,
}

/// `hbase.pb.CompactionEventTracker` (FileInfo `COMPACTION_EVENT_KEY` of a compaction output,
/// after `PBUF`): the names of the files it replaced.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CompactionEventTracker {
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub compacted_store_file: Vec<Vec<u8>>,
}
