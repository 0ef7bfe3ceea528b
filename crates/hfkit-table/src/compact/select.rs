//! Which files a compaction takes (`formats/table.md` §"Compaction", §"Selection"): every
//! file of a store (major, or on request), or HBase's ratio-based minor selection.

use super::options::{CompactOptions, CompactionPolicy};
use crate::directory::Table;
use crate::manifest::{FamilyEntry, Manifest, StoreFileEntry};
use crate::TableError;
use hfkit_format::fileinfo::keys;

/// One candidate file of a minor selection, oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub size: u64,
    /// FileInfo `EXCLUDE_FROM_MINOR_COMPACTION`.
    pub exclude_from_minor: bool,
}

/// HBase's ratio-based minor selection over a store's files (oldest first). Returns the
/// selected index range (empty = nothing to do). Steps, after `SortedCompactionPolicy` and
/// `RatioBasedCompactionPolicy`:
///
/// 1. Files flagged `EXCLUDE_FROM_MINOR_COMPACTION` are not candidates. HBase removes them
///    from the list; to keep the selection contiguous in sequence-id order, only the files
///    newer than the newest flagged one are candidates here.
/// 2. Leading (oldest) files larger than `max_compact_size` are left out.
/// 3. From the oldest candidate on, a file is skipped while at least `min_files` candidates
///    remain and its size exceeds `max(min_compact_size, ratio × sum of the sizes of the next
///    max_files − 1 newer files)`.
/// 4. When that leaves nothing and the store has `blocking_files` files or more, the newest
///    `min_files` are taken.
/// 5. Fewer than `min_files` selected: nothing. More than `max_files`: the oldest `max_files`.
pub fn select_minor(files: &[Candidate], p: &CompactionPolicy) -> std::ops::Range<usize> {
    let min_files = p.min_files.max(2);
    let max_files = p.max_files.max(min_files);
    let mut lo = files
        .iter()
        .rposition(|c| c.exclude_from_minor)
        .map_or(0, |i| i + 1);
    while lo < files.len() && files[lo].size > p.max_compact_size {
        lo += 1;
    }
    let cand = &files[lo..];
    let n = cand.len();
    if n == 0 {
        return 0..0;
    }
    // sum[i] = size[i] + ... + size[i + max_files - 2] (clipped at n).
    let mut sum = vec![0u64; n + 1];
    for i in (0..n).rev() {
        let too_far = i + max_files - 1;
        sum[i] = cand[i].size.saturating_add(sum[i + 1])
            - if too_far < n { cand[too_far].size } else { 0 };
    }
    let mut start = 0;
    while n - start >= min_files
        && cand[start].size
            > p.min_compact_size
                .max((sum[start + 1] as f64 * p.ratio) as u64)
    {
        start += 1;
    }
    if start >= n && files.len() >= p.blocking_files && n >= min_files {
        start = n - min_files;
    }
    let count = n - start;
    if count < min_files {
        return 0..0;
    }
    let end = start + count.min(max_files);
    lo + start..lo + end
}

/// Whether a major compaction leaves a store alone: it holds one file (`files`), written by a
/// compaction of every file of the store that left no marker and no tag, under the family's
/// settings as they are now (`compacted_under`), and no cell of it is past the family's TTL by
/// its time range. As HBase's `RatioBasedCompactionPolicy.shouldPerformMajorCompaction` skips
/// a store of one major-compacted file whose oldest cell is within the TTL; the fingerprint
/// also keeps a file written under other VERSIONS, codec or encoding from being skipped.
fn settled(e: &StoreFileEntry, fam: &FamilyEntry, now_ms: i64, files: usize) -> bool {
    let within_ttl = fam.ttl_seconds.is_none_or(|ttl| {
        let ttl_ms = i64::try_from(ttl.saturating_mul(1000)).unwrap_or(i64::MAX);
        e.min_ts >= now_ms.saturating_sub(ttl_ms)
    });
    files == 1
        && within_ttl
        && e.compacted_under.is_some()
        && e.compacted_under == fam.fingerprint()
}

/// A store chosen for compaction.
pub(super) struct Plan {
    pub(super) region: String,
    pub(super) family: String,
    /// Indices into the manifest's `files`, oldest first.
    pub(super) inputs: Vec<usize>,
    pub(super) all_files: bool,
}

impl Table {
    /// Chooses the stores and files to compact.
    pub(super) fn plan(
        &self,
        m: &Manifest,
        opts: &CompactOptions,
    ) -> Result<Vec<Plan>, TableError> {
        let mut plans = Vec::new();
        for region in &m.regions {
            if opts.region.as_ref().is_some_and(|r| *r != region.id) {
                continue;
            }
            for fam in &m.families {
                if opts.family.as_ref().is_some_and(|f| *f != fam.name) {
                    continue;
                }
                let mut idx: Vec<usize> = (0..m.files.len())
                    .filter(|&i| m.files[i].region == region.id && m.files[i].family == fam.name)
                    .collect();
                // Oldest first: sequence id, then manifest position (a later file wins ties).
                idx.sort_by_key(|&i| (m.files[i].seq_id, i));
                if idx.is_empty() {
                    continue;
                }
                let chosen: Vec<usize> =
                    if opts.major && settled(&m.files[idx[0]], fam, opts.now_ms, idx.len()) {
                        Vec::new()
                    } else if opts.major || opts.all_files {
                        idx.clone()
                    } else {
                        let mut cands = Vec::with_capacity(idx.len());
                        for &i in &idx {
                            let e = &m.files[i];
                            let r = self.open_store_file(e)?;
                            cands.push(Candidate {
                                size: e.size,
                                exclude_from_minor: r
                                    .file_info()
                                    .get_bool(keys::EXCLUDE_FROM_MINOR_COMPACTION)
                                    .unwrap_or(false),
                            });
                        }
                        idx[select_minor(&cands, &opts.policy)].to_vec()
                    };
                if chosen.is_empty() {
                    continue;
                }
                plans.push(Plan {
                    region: region.id.clone(),
                    family: fam.name.clone(),
                    all_files: chosen.len() == idx.len(),
                    inputs: chosen,
                });
            }
        }
        Ok(plans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(sizes: &[u64]) -> Vec<Candidate> {
        sizes
            .iter()
            .map(|&size| Candidate {
                size,
                exclude_from_minor: false,
            })
            .collect()
    }

    fn p() -> CompactionPolicy {
        CompactionPolicy {
            min_compact_size: 10,
            ..CompactionPolicy::default()
        }
    }

    #[test]
    fn ratio_selection_skips_big_old_files() {
        // 100 > 1.2 × (50+23+12+12) = 116.4? no → selected from the start.
        assert_eq!(select_minor(&c(&[100, 50, 23, 12, 12]), &p()), 0..5);
        // 250 > 1.2 × 97: skipped; 50 ≤ 1.2 × 47: start.
        assert_eq!(select_minor(&c(&[250, 50, 23, 12, 12]), &p()), 1..5);
        // Too few files left.
        assert_eq!(select_minor(&c(&[999, 100, 1]), &p()), 0..0);
        assert_eq!(select_minor(&c(&[5, 5]), &p()), 0..0);
        // Small files always qualify; at most max_files, the oldest.
        assert_eq!(select_minor(&c(&[1; 15]), &p()), 0..10);
        // Excluded files are barriers.
        let mut v = c(&[1, 1, 1, 1, 1]);
        v[1].exclude_from_minor = true;
        assert_eq!(select_minor(&v, &p()), 2..5);
        // Sizes falling by 3× each: every file outweighs the newer ones; nothing qualifies.
        let big: Vec<u64> = (0..16).map(|i| 3u64.pow(20 - i)).collect();
        assert_eq!(select_minor(&c(&big), &p()), 0..0);
    }
}
