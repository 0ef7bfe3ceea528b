//! [`BlockCache`]: a bounded cache of decoded (checksum-verified, decompressed) data blocks,
//! shared by the readers of one process, HBase's block cache (`hfile.block.cache.size`) for
//! processes that do many gets. Spec: `formats/hfile.md` §"Reading" (block cache).
//!
//! ```text
//! key:      (reader id, block offset)   a reader id is unique within the process
//! value:    block header + payload (Arc: a decoder reads a cached block in place)
//! bound:    Σ (payload length + its seek index's bound + ENTRY_OVERHEAD) ≤ capacity; a
//!           larger block is not cached
//! eviction: CLOCK (second chance): a hit sets the entry's reference bit; the hand clears
//!           set bits and evicts the first entry whose bit is clear
//! ```
//!
//! Only seeks (gets) go through the cache; sequential scans read past it, as HBase's
//! scanners do with `cacheBlocks=false`, so a scan neither pays for nor flushes it. A block
//! evicted while a decoder still reads it stays alive until that decoder moves on, so the
//! memory beyond the bound is at most one block per open scanner.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::block::BlockHeader;
use super::encoding::SharedBlock;

/// Bytes counted for an entry on top of its payload (key, header, map and slot).
pub const ENTRY_OVERHEAD: usize = 128;

/// HBase's default is a share of the heap; hfkit's a fixed, modest size.
pub const DEFAULT_BLOCK_CACHE_BYTES: usize = 64 << 20;

/// A cached block (a data block, or an index block on a get's path): its header and
/// decompressed payload.
#[derive(Clone, Debug)]
pub struct CachedBlock {
    pub header: BlockHeader,
    pub payload: Arc<SharedBlock>,
}

/// Counters of a [`BlockCache`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockCacheStats {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    /// Entries held now.
    pub blocks: usize,
    /// Bytes counted against the capacity now.
    pub used: usize,
    pub capacity: usize,
}

struct Slot {
    key: (u64, u64),
    block: Option<CachedBlock>,
    size: usize,
    referenced: bool,
}

#[derive(Default)]
struct Clock {
    map: HashMap<(u64, u64), usize>,
    slots: Vec<Slot>,
    free: Vec<usize>,
    hand: usize,
    stats: BlockCacheStats,
}

impl Clock {
    /// Evicts one entry (CLOCK); false when nothing is held.
    fn evict_one(&mut self) -> bool {
        if self.map.is_empty() || self.slots.is_empty() {
            return false;
        }
        // Two sweeps clear every reference bit, so the loop ends within them.
        for _ in 0..2 * self.slots.len() + 1 {
            let i = self.hand % self.slots.len();
            self.hand = i + 1;
            let s = &mut self.slots[i];
            if s.block.is_none() {
                continue;
            }
            if s.referenced {
                s.referenced = false;
                continue;
            }
            s.block = None;
            let (key, size) = (s.key, s.size);
            self.map.remove(&key);
            self.free.push(i);
            self.stats.used -= size;
            self.stats.blocks -= 1;
            self.stats.evictions += 1;
            return true;
        }
        false
    }
}

/// A bounded, thread-safe cache of decoded data blocks (see the module documentation).
pub struct BlockCache {
    inner: Mutex<Clock>,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl BlockCache {
    /// A cache holding at most `capacity` bytes (payloads plus [`ENTRY_OVERHEAD`] each).
    pub fn new(capacity: usize) -> BlockCache {
        BlockCache {
            inner: Mutex::new(Clock {
                stats: BlockCacheStats {
                    capacity,
                    ..Default::default()
                },
                ..Default::default()
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Clock> {
        // The state stays consistent at every return point, so a panic elsewhere while the
        // lock was held leaves nothing half-done.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The block at `offset` of reader `reader`, if cached (a hit marks it recently used).
    pub fn get(&self, reader: u64, offset: u64) -> Option<CachedBlock> {
        let mut c = self.lock();
        match c.map.get(&(reader, offset)).copied() {
            Some(i) => {
                c.stats.hits += 1;
                let s = &mut c.slots[i];
                s.referenced = true;
                s.block.clone()
            }
            None => {
                c.stats.misses += 1;
                None
            }
        }
    }

    /// Caches `block` as the block at `offset` of reader `reader`, evicting others to stay
    /// within the capacity; a block larger than the whole capacity is not cached.
    pub fn insert(&self, reader: u64, offset: u64, block: CachedBlock) {
        let len = block.payload.len();
        let size = len + SharedBlock::seek_index_bound(len) + ENTRY_OVERHEAD;
        let mut c = self.lock();
        if size > c.stats.capacity || c.map.contains_key(&(reader, offset)) {
            return;
        }
        while c.stats.used + size > c.stats.capacity {
            if !c.evict_one() {
                return;
            }
        }
        let slot = Slot {
            key: (reader, offset),
            block: Some(block),
            size,
            referenced: false,
        };
        let i = match c.free.pop() {
            Some(i) => {
                c.slots[i] = slot;
                i
            }
            None => {
                c.slots.push(slot);
                c.slots.len() - 1
            }
        };
        c.map.insert((reader, offset), i);
        c.stats.used += size;
        c.stats.blocks += 1;
    }

    pub fn stats(&self) -> BlockCacheStats {
        self.lock().stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::BlockType;

    fn block(len: usize, fill: u8) -> CachedBlock {
        CachedBlock {
            header: BlockHeader {
                block_type: BlockType::Data,
                on_disk_size_without_header: len as u32,
                uncompressed_size_without_header: len as u32,
                prev_block_offset: -1,
                checksum_type: crate::checksum::ChecksumType::Crc32c,
                bytes_per_checksum: 16384,
                on_disk_data_size_with_header: len as u32 + 33,
            },
            payload: Arc::new(SharedBlock::new(vec![fill; len])),
        }
    }

    #[test]
    fn stays_within_its_capacity_and_keeps_what_is_used() {
        // Each entry counts its block, the bound of its seek index and the overhead.
        let cap = 10 * (1000 + SharedBlock::seek_index_bound(1000) + ENTRY_OVERHEAD);
        let cache = BlockCache::new(cap);
        for i in 0..10u64 {
            cache.insert(1, i * 1000, block(1000, i as u8));
        }
        assert_eq!(cache.stats().blocks, 10);
        // Block 0 is used again; the next inserts evict others first.
        assert_eq!(cache.get(1, 0).unwrap().payload[0], 0);
        for i in 10..15u64 {
            cache.insert(1, i * 1000, block(1000, i as u8));
            let s = cache.stats();
            assert!(s.used <= cap, "{s:?}");
        }
        let s = cache.stats();
        assert_eq!((s.blocks, s.evictions), (10, 5), "{s:?}");
        assert!(
            cache.get(1, 0).is_some(),
            "a referenced block got a second chance"
        );
        assert!(cache.get(1, 14_000).is_some());
        // Another reader's block at the same offset is another entry.
        assert!(cache.get(2, 0).is_none());
        // A block larger than the cache is not cached.
        cache.insert(1, 99, block(cap, 0));
        assert!(cache.get(1, 99).is_none());
        assert!(cache.stats().used <= cap);
        let s = cache.stats();
        assert_eq!((s.hits, s.misses), (3, 2), "{s:?}");
    }

    #[test]
    fn a_zero_capacity_cache_holds_nothing() {
        let cache = BlockCache::new(0);
        cache.insert(1, 0, block(10, 0));
        assert!(cache.get(1, 0).is_none());
        assert_eq!(cache.stats().used, 0);
    }
}
