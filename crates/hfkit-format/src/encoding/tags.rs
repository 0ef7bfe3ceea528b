//! Tag compression for key-delta encoded blocks (HBase `TagCompressionContext` over an
//! `LRUDictionary` of 127 entries). Spec: `formats/encodings.md` §"Tag compression".
//!
//! ```text
//! compressed tags area (its uncompressed length is the compressedInt before it):
//!   per tag, the tag's bytes after its u16 length (type byte + value) as either
//!     u16 BE dictionary index                      (hit: entry becomes most recent)
//!     FF | varint32 length | bytes                 (miss: added to the dictionary)
//! ```
//!
//! The dictionary starts empty at every block. An added entry takes the next free slot while
//! fewer than 127 are used, else the slot of the least recently used entry (which keeps its
//! index) — so writer and reader stay in step as long as both touch entries in the same order.
//! Zero-length entries are never added. No HBase fixture uses tag compression (every fixture
//! has `hfile.TAGS_COMPRESSED` false); the format is covered by round-trip tests only.

use crate::bytes::Cursor;
use crate::error::{FormatError, Result};

/// `TagCompressionContext` capacity (`Byte.MAX_VALUE`).
pub const DICTIONARY_CAPACITY: usize = 127;
/// Status byte announcing a literal (`Dictionary.NOT_IN_DICTIONARY`).
pub const NOT_IN_DICTIONARY: u8 = 0xff;
/// Longest tag content a u16 tag length can describe.
const MAX_TAG_LEN: usize = u16::MAX as usize;

/// HBase's `LRUDictionary`: fixed slots, least recently used slot reused when full.
///
/// Slot buffers are kept across [`TagDictionary::clear`] so a decoder does not allocate per
/// block once warmed up. Recency is a counter stamped on every touch; the smallest stamp is the
/// LRU tail.
#[derive(Debug, Default)]
pub struct TagDictionary {
    slots: Vec<Vec<u8>>,
    stamps: Vec<u64>,
    used: usize,
    clock: u64,
}

impl TagDictionary {
    pub fn new() -> TagDictionary {
        TagDictionary::default()
    }

    /// Forgets every entry (HBase clears the context at each block start).
    pub fn clear(&mut self) {
        self.used = 0;
        self.clock = 0;
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.used
    }

    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    fn touch(&mut self, idx: usize) {
        self.clock += 1;
        if let Some(s) = self.stamps.get_mut(idx) {
            *s = self.clock;
        }
    }

    /// Adds an entry (no lookup first); returns its index, or `None` for empty data, which
    /// HBase never stores.
    pub fn add(&mut self, data: &[u8]) -> Option<usize> {
        if data.is_empty() {
            return None;
        }
        let idx = if self.used < DICTIONARY_CAPACITY {
            let idx = self.used;
            if self.slots.len() <= idx {
                self.slots.push(Vec::new());
                self.stamps.push(0);
            }
            self.used += 1;
            idx
        } else {
            // Full: reuse the least recently used slot.
            let stamps = self.stamps.get(..self.used)?;
            stamps
                .iter()
                .enumerate()
                .min_by_key(|(_, s)| **s)
                .map(|(i, _)| i)?
        };
        let slot = self.slots.get_mut(idx)?;
        slot.clear();
        slot.extend_from_slice(data);
        self.touch(idx);
        Some(idx)
    }

    /// Writer side (`findEntry`): the index of `data` if present (made most recent); else adds
    /// it and returns `None`.
    pub fn find_or_add(&mut self, data: &[u8]) -> Option<usize> {
        let found = self
            .slots
            .iter()
            .take(self.used)
            .position(|s| s.as_slice() == data);
        match found {
            Some(i) => {
                self.touch(i);
                Some(i)
            }
            None => {
                self.add(data);
                None
            }
        }
    }

    /// Reader side (`getEntry`): the entry at `idx`, made most recent.
    pub fn get(&mut self, idx: usize) -> Option<&[u8]> {
        if idx >= self.used {
            return None;
        }
        self.touch(idx);
        self.slots.get(idx).map(|s| s.as_slice())
    }
}

/// Appends the compressed form of a well-formed tags area.
pub fn compress_tags(tags: &[u8], dict: &mut TagDictionary, out: &mut Vec<u8>) -> Result<()> {
    let mut pos = 0usize;
    while pos < tags.len() {
        let len_bytes = tags.get(pos..pos + 2).ok_or_else(|| {
            FormatError::Invalid(format!("tags area ends inside a tag length at byte {pos}"))
        })?;
        let len = u16::from_be_bytes([len_bytes[0], len_bytes[1]]) as usize;
        pos += 2;
        let tag = tags.get(pos..pos + len).ok_or_else(|| {
            FormatError::Invalid(format!("tag at byte {} overruns the tags area", pos - 2))
        })?;
        match dict.find_or_add(tag) {
            Some(idx) => out.extend_from_slice(&(idx as u16).to_be_bytes()),
            None => {
                out.push(NOT_IN_DICTIONARY);
                prost::encoding::encode_varint(len as u64, out);
                out.extend_from_slice(tag);
            }
        }
        pos += len;
    }
    Ok(())
}

/// Reads a compressed tags area whose uncompressed length is `tags_len`, replacing `out`'s
/// contents with the uncompressed tags (u16 length + bytes per tag).
pub fn decompress_tags(
    c: &mut Cursor<'_>,
    tags_len: usize,
    dict: &mut TagDictionary,
    out: &mut Vec<u8>,
) -> Result<()> {
    out.clear();
    while out.len() < tags_len {
        let at = c.offset();
        let status = c.u8()?;
        if status == NOT_IN_DICTIONARY {
            let len = c.varint()?;
            let len = usize::try_from(len)
                .ok()
                .filter(|l| *l <= MAX_TAG_LEN && *l > 0)
                .ok_or_else(|| {
                    FormatError::corrupt("compressed tag", at, format!("literal tag length {len}"))
                })?;
            let bytes = c.take(len)?;
            out.extend_from_slice(&(len as u16).to_be_bytes());
            out.extend_from_slice(bytes);
            dict.add(bytes);
        } else {
            let low = c.u8()?;
            let idx = u16::from_be_bytes([status, low]) as usize;
            let entry = dict.get(idx).ok_or_else(|| {
                FormatError::corrupt(
                    "compressed tag",
                    at,
                    format!("dictionary index {idx} is not in the dictionary"),
                )
            })?;
            out.extend_from_slice(&(entry.len() as u16).to_be_bytes());
            out.extend_from_slice(entry);
        }
        if out.len() > tags_len {
            return Err(FormatError::corrupt(
                "compressed tag",
                at,
                format!("tags decompress past their stated length {tags_len}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(t: u8, v: &[u8]) -> Vec<u8> {
        let mut out = ((v.len() + 1) as u16).to_be_bytes().to_vec();
        out.push(t);
        out.extend_from_slice(v);
        out
    }

    #[test]
    fn literal_then_hit() {
        let mut tags = tag(1, b"ab");
        tags.extend(tag(8, &[0, 0, 0, 0, 0, 0, 0, 9]));
        let mut d = TagDictionary::new();
        let mut out = Vec::new();
        compress_tags(&tags, &mut d, &mut out).unwrap();
        compress_tags(&tags, &mut d, &mut out).unwrap();
        // first cell: two literals; second cell: indexes 0 and 1
        let mut expect = vec![0xff, 3, 1, b'a', b'b', 0xff, 9, 8, 0, 0, 0, 0, 0, 0, 0, 9];
        expect.extend([0, 0, 0, 1]);
        assert_eq!(out, expect);
        let mut r = TagDictionary::new();
        let mut c = Cursor::new(&out, 0, "t");
        let mut buf = Vec::new();
        decompress_tags(&mut c, tags.len(), &mut r, &mut buf).unwrap();
        assert_eq!(buf, tags);
        decompress_tags(&mut c, tags.len(), &mut r, &mut buf).unwrap();
        assert_eq!(buf, tags);
        assert!(c.is_empty());
    }

    #[test]
    fn lru_eviction_keeps_writer_and_reader_in_step() {
        // 200 distinct tags, re-touching some old ones, forces evictions.
        let mut all = Vec::new();
        for i in 0..200u32 {
            all.push(tag(1, &i.to_be_bytes()));
            if i % 3 == 0 {
                all.push(tag(1, &(i / 2).to_be_bytes()));
            }
        }
        let mut w = TagDictionary::new();
        let mut out = Vec::new();
        for t in &all {
            compress_tags(t, &mut w, &mut out).unwrap();
        }
        assert_eq!(w.len(), DICTIONARY_CAPACITY);
        let mut r = TagDictionary::new();
        let mut c = Cursor::new(&out, 0, "t");
        let mut buf = Vec::new();
        for t in &all {
            decompress_tags(&mut c, t.len(), &mut r, &mut buf).unwrap();
            assert_eq!(&buf, t);
        }
        assert!(c.is_empty());
    }

    #[test]
    fn eviction_reuses_the_least_recent_slot() {
        let mut d = TagDictionary::new();
        for i in 0..DICTIONARY_CAPACITY as u32 {
            assert_eq!(d.add(&i.to_be_bytes()), Some(i as usize));
        }
        assert_eq!(d.find_or_add(&0u32.to_be_bytes()), Some(0)); // 0 becomes most recent
        assert_eq!(d.find_or_add(b"new"), None); // evicts slot 1
        assert_eq!(d.find_or_add(b"new"), Some(1));
        assert_eq!(d.find_or_add(&0u32.to_be_bytes()), Some(0));
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut d = TagDictionary::new();
        let mut buf = Vec::new();
        for bytes in [
            &[0u8, 0][..],
            &[0xff, 0],
            &[0xff, 5, 1],
            &[0x80, 1],
            &[0xff],
        ] {
            let mut c = Cursor::new(bytes, 0, "t");
            assert!(
                decompress_tags(&mut c, 4, &mut d, &mut buf).is_err(),
                "{bytes:?}"
            );
        }
        // overshoot: a 3-byte literal where 2 bytes were announced
        let mut c = Cursor::new(&[0xff, 1, 7], 0, "t");
        assert!(decompress_tags(&mut c, 2, &mut d, &mut buf).is_err());
    }
}
