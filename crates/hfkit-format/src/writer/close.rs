//! The file's end (`formats/hfile.md` §"File layout", §"FileInfo", §"Trailer"): the last data
//! block and the closing inline blocks, the data index's upper levels, the meta index,
//! FILE_INFO, the Bloom metas and the trailer, and the summary of what was written.

use std::io::Write;

use crate::block::{BlockType, HEADER_LEN};
use crate::encoding::DataBlockEncoding;
use crate::error::{FormatError, Result};
use crate::fileinfo::{keys, FileInfo};
use crate::trailer::{Trailer, MAJOR_VERSION, MINOR_VERSION, TRAILER_SIZE};

use super::append::HFileWriter;
use super::options::WriteSummary;

impl<W: Write> HFileWriter<W> {
    fn file_info(&self) -> FileInfo {
        let mut fi = self.extra_file_info.clone();
        let o = &self.opts;
        if self.entry_count > 0 {
            fi.insert(keys::LASTKEY, self.last_key.clone());
        }
        let avg = |total: u64| total.checked_div(self.entry_count).unwrap_or(0) as i32;
        fi.insert_i32(keys::AVG_KEY_LEN, avg(self.stats.total_key_len));
        fi.insert_i32(keys::AVG_VALUE_LEN, avg(self.stats.total_value_len));
        fi.insert_i64(keys::CREATE_TIME_TS, o.create_time);
        if let Some(k) = &self.biggest_key {
            fi.insert(keys::KEY_OF_BIGGEST_CELL, k.clone());
            fi.insert_i64(keys::LEN_OF_BIGGEST_CELL, self.stats.biggest_len);
        }
        if o.include_tags {
            fi.insert_i32(keys::MAX_TAGS_LEN, self.stats.max_tags_len as i32);
            fi.insert_bool(
                keys::TAGS_COMPRESSED,
                o.encoding != DataBlockEncoding::None && o.compress_tags,
            );
        }
        if o.include_mvcc {
            fi.insert_i64(keys::MAX_MEMSTORE_TS_KEY, self.stats.max_seq_id as i64);
            fi.insert_i32(keys::KEY_VALUE_VERSION, 1);
        }
        if o.encoding != DataBlockEncoding::None {
            fi.insert(
                keys::DATA_BLOCK_ENCODING,
                o.encoding.name().as_bytes().to_vec(),
            );
        }
        if o.store_file {
            let mut tr = self.stats.time_range.min.to_be_bytes().to_vec();
            tr.extend_from_slice(&self.stats.time_range.max.to_be_bytes());
            fi.insert(keys::TIMERANGE, tr);
            fi.insert_i64(keys::EARLIEST_PUT_TS, self.stats.earliest_put);
            fi.insert_i64(keys::DELETE_FAMILY_COUNT, self.delete_family_count);
            fi.insert_bool(keys::HISTORICAL, false);
            if let Some(b) = &self.general_bloom {
                b.add_file_info(&mut fi);
            }
        }
        if let Some(b) = &o.bulk_load {
            fi.insert_i64(keys::BULKLOAD_TIMESTAMP, b.timestamp);
            fi.insert(keys::BULKLOAD_SOURCE_TASK, b.task.as_bytes().to_vec());
            fi.insert_bool(keys::MAJOR_COMPACTION_KEY, b.major_compaction);
            fi.insert_bool(
                keys::EXCLUDE_FROM_MINOR_COMPACTION,
                b.exclude_from_minor_compaction,
            );
        }
        fi
    }

    /// Completes the file and returns the output and a summary.
    pub fn finish(mut self) -> Result<(W, WriteSummary)> {
        if self.failed {
            return Err(FormatError::Invalid(
                "writer failed earlier; the file is incomplete".into(),
            ));
        }
        self.finish_block()?;
        self.settle_last_key();
        self.write_inline_blocks(true)?;

        let sink = &mut self.sink;
        let load_on_open = self
            .index
            .write_index_blocks(&mut |t, p| sink.write_block(t, p))?;

        // Meta index: single level, no META blocks.
        let (_, _) = self.sink.write_block(BlockType::RootIndex, &[])?;
        self.total_uncompressed_bytes += HEADER_LEN as u64;

        let fi_payload = self.file_info().to_payload();
        let (file_info_offset, _) = self.sink.write_block(BlockType::FileInfo, &fi_payload)?;
        self.total_uncompressed_bytes += (HEADER_LEN + fi_payload.len()) as u64;

        // Bloom metas: general first, then delete-family; a Bloom with no keys is not written.
        let metas = [
            (
                BlockType::GeneralBloomMeta,
                self.general_bloom.as_ref().and_then(|b| b.meta_payload()),
            ),
            (
                BlockType::DeleteFamilyBloomMeta,
                self.delete_family_bloom
                    .as_ref()
                    .and_then(|b| b.meta_payload()),
            ),
        ];
        for (block_type, meta) in metas {
            if let Some(p) = meta {
                self.sink.write_block(block_type, &p)?;
                self.total_uncompressed_bytes += (HEADER_LEN + p.len()) as u64;
            }
        }

        let trailer = Trailer {
            file_info_offset,
            load_on_open_data_offset: load_on_open,
            uncompressed_data_index_size: self.index.total_uncompressed_size(),
            total_uncompressed_bytes: self.total_uncompressed_bytes + TRAILER_SIZE as u64,
            data_index_count: self.index.num_root_entries() as u32,
            meta_index_count: 0,
            entry_count: self.entry_count,
            num_data_index_levels: self.index.num_levels(),
            first_data_block_offset: self.first_data_block_offset,
            last_data_block_offset: self.last_data_block_offset,
            comparator_class_name: self.opts.comparator.clone(),
            compression_codec: self.opts.compression.id(),
            encryption_key: None,
            major_version: MAJOR_VERSION,
            minor_version: MINOR_VERSION,
        };
        let mut tb = Vec::with_capacity(TRAILER_SIZE);
        trailer.write(&mut tb)?;
        self.sink
            .out
            .write_all(&tb)
            .map_err(|e| FormatError::io("writing the trailer", e))?;
        self.sink
            .out
            .flush()
            .map_err(|e| FormatError::io("flushing the file", e))?;
        let summary = WriteSummary {
            entry_count: self.entry_count,
            file_size: self.sink.pos + TRAILER_SIZE as u64,
            data_blocks: self.data_blocks,
            index_levels: self.index.num_levels(),
            first_key: self.first_key.clone(),
            last_key: (self.entry_count > 0).then(|| self.last_key.clone()),
            time_range: (self.entry_count > 0)
                .then_some((self.stats.time_range.min, self.stats.time_range.max)),
        };
        Ok((self.sink.out, summary))
    }
}
