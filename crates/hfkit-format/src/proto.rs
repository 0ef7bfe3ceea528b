//! Protobuf messages HFile v3 stores: the trailer and FileInfo. Spec: `formats/hfile.md`
//! §"Trailer" and §"FileInfo". Field numbers follow HBase's `HFile.proto` and `HBase.proto`
//! (proto2); they are on disk: DO NOT CHANGE. Encoding is done by `prost`.

/// `FileTrailerProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FileTrailerProto {
    #[prost(uint64, optional, tag = "1")]
    pub file_info_offset: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub load_on_open_data_offset: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub uncompressed_data_index_size: Option<u64>,
    #[prost(uint64, optional, tag = "4")]
    pub total_uncompressed_bytes: Option<u64>,
    #[prost(uint32, optional, tag = "5")]
    pub data_index_count: Option<u32>,
    #[prost(uint32, optional, tag = "6")]
    pub meta_index_count: Option<u32>,
    #[prost(uint64, optional, tag = "7")]
    pub entry_count: Option<u64>,
    #[prost(uint32, optional, tag = "8")]
    pub num_data_index_levels: Option<u32>,
    #[prost(uint64, optional, tag = "9")]
    pub first_data_block_offset: Option<u64>,
    #[prost(uint64, optional, tag = "10")]
    pub last_data_block_offset: Option<u64>,
    #[prost(string, optional, tag = "11")]
    pub comparator_class_name: Option<String>,
    #[prost(uint32, optional, tag = "12")]
    pub compression_codec: Option<u32>,
    #[prost(bytes = "vec", optional, tag = "13")]
    pub encryption_key: Option<Vec<u8>>,
    #[prost(string, optional, tag = "14")]
    pub key_namespace: Option<String>,
    #[prost(string, optional, tag = "15")]
    pub kek_metadata: Option<String>,
    #[prost(uint64, optional, tag = "16")]
    pub kek_checksum: Option<u64>,
}

/// `BytesBytesPair`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BytesBytesPair {
    #[prost(bytes = "vec", required, tag = "1")]
    pub first: Vec<u8>,
    #[prost(bytes = "vec", required, tag = "2")]
    pub second: Vec<u8>,
}

/// `FileInfoProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FileInfoProto {
    #[prost(message, repeated, tag = "1")]
    pub map_entry: Vec<BytesBytesPair>,
}
