//! What HBase will not return of an import's cells right after the load: cells already past
//! their family's TTL, and versions of a column beyond the family's VERSIONS. The output
//! ([`crate::import::output`]) counts them per store as it writes, so that the import can warn
//! (`formats/import.md` §"Cells hidden at import"). The rules are the read matcher's wildcard
//! rules (`formats/read.md` §"Matcher", steps 2 and 7), over the cells of one import only.

use hfkit_format::bytes::equal_bytes;
use hfkit_format::cell::{CellRef, CellType};
use hfkit_read::matcher::oldest_unexpired_ts;
use hfkit_read::FamilyReadSettings;

/// A family's VERSIONS, MIN_VERSIONS and TTL, with the TTL resolved against "now".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    pub versions: u32,
    pub min_versions: u32,
    /// Cells with a timestamp below this are expired (`i64::MIN`: no TTL).
    pub oldest_unexpired_ts: i64,
}

impl Retention {
    /// Everything is kept: nothing is counted as hidden.
    pub const KEEP_ALL: Retention = Retention {
        versions: u32::MAX,
        min_versions: 0,
        oldest_unexpired_ts: i64::MIN,
    };

    /// The retention of a family with `settings`, at `now_ms`.
    pub fn new(settings: &FamilyReadSettings, now_ms: i64) -> Retention {
        Retention {
            versions: settings.versions,
            min_versions: settings.min_versions,
            oldest_unexpired_ts: oldest_unexpired_ts(settings, false, now_ms),
        }
    }
}

/// Counts of hidden cells, by reason: a hidden cell past the TTL counts as expired (whatever
/// ended its column), any other as beyond VERSIONS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HiddenCells {
    /// Past the family's TTL (and not kept by MIN_VERSIONS).
    pub expired: u64,
    /// Not expired, but newer versions of the same column already fill VERSIONS.
    pub beyond_versions: u64,
}

impl HiddenCells {
    pub fn add(&mut self, other: HiddenCells) {
        self.expired += other.expired;
        self.beyond_versions += other.beyond_versions;
    }
}

/// The state of the column being written, across the rows of one store written in order.
#[derive(Debug)]
pub struct ColumnVersions {
    qualifier: Vec<u8>,
    /// Versions counted so far (HBase's wildcard column tracker count).
    count: u32,
    last_ts: i64,
    /// The rest of the column is hidden (HBase's matcher has moved to the next column).
    ended: bool,
}

impl Default for ColumnVersions {
    fn default() -> Self {
        ColumnVersions {
            qualifier: Vec::new(),
            count: 0,
            last_ts: i64::MIN,
            ended: false,
        }
    }
}

impl ColumnVersions {
    /// Classifies `cells` (one row of one family, in HBase order) and adds the hidden ones to
    /// `hidden`. `new_row`: the row differs from the previous call's. Only Puts count (an import
    /// writes nothing else); a Put with the timestamp of the one before it in its column is a
    /// duplicate, which reads skip, and is not counted.
    pub fn offer(
        &mut self,
        r: &Retention,
        new_row: bool,
        cells: &[CellRef<'_>],
        hidden: &mut HiddenCells,
    ) {
        let Some(last) = cells.last() else {
            return;
        };
        let mut prev: Option<&[u8]> = (!new_row).then_some(self.qualifier.as_slice());
        for c in cells {
            let same_column = prev.is_some_and(|q| same_bytes(q, c.qualifier));
            prev = Some(c.qualifier);
            if c.cell_type != CellType::Put {
                continue;
            }
            let expired = c.timestamp < r.oldest_unexpired_ts;
            if !same_column {
                // A new column's newest version: hidden only when expired without MIN_VERSIONS
                // (VERSIONS is at least 1).
                self.count = 1;
                self.last_ts = c.timestamp;
                self.ended = expired && r.min_versions == 0;
            } else if c.timestamp == self.last_ts {
                continue;
            } else {
                self.last_ts = c.timestamp;
                if !self.ended {
                    if expired && r.min_versions == 0 {
                        // Step 2: ignored before it is counted, and so is the (older) rest.
                        self.ended = true;
                    } else {
                        self.count += 1;
                        self.ended =
                            self.count > r.versions || (expired && self.count > r.min_versions);
                    }
                }
            }
            if self.ended {
                if expired {
                    hidden.expired += 1;
                } else {
                    hidden.beyond_versions += 1;
                }
            }
        }
        self.qualifier.clear();
        self.qualifier.extend_from_slice(last.qualifier);
    }
}

/// `a == b`, the last bytes compared first: consecutive qualifiers of a row usually differ
/// there, and this is called for every cell an import writes.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.last() == b.last() && equal_bytes(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hfkit_format::cell::Cell;
    use hfkit_read::matcher::{MatchCode, MatcherConfig, QueryMatcher};
    use hfkit_read::TimeRange;

    fn retention(versions: u32, min_versions: u32, ttl: Option<u64>, now: i64) -> Retention {
        Retention::new(
            &FamilyReadSettings {
                versions,
                min_versions,
                ttl_seconds: ttl,
                ..FamilyReadSettings::default()
            },
            now,
        )
    }

    fn hidden(r: &Retention, rows: &[Vec<Cell>]) -> HiddenCells {
        let mut h = HiddenCells::default();
        let mut col = ColumnVersions::default();
        let mut last_row: Option<Vec<u8>> = None;
        for row in rows {
            let cells: Vec<CellRef<'_>> = row.iter().map(Cell::as_ref).collect();
            let new_row = last_row.as_deref() != Some(cells[0].row);
            col.offer(r, new_row, &cells, &mut h);
            last_row = Some(cells[0].row.to_vec());
        }
        h
    }

    fn put(row: &str, q: &str, ts: i64) -> Cell {
        Cell::put(row.as_bytes(), b"f", q.as_bytes(), ts, b"v")
    }

    #[test]
    fn versions_beyond_the_limit_per_column() {
        let r = retention(2, 0, None, 0);
        let rows = vec![
            vec![
                put("a", "q", 5),
                put("a", "q", 4),
                put("a", "q", 3),
                put("a", "x", 1),
            ],
            // The same row again (a row cut between two batches): q continues.
            vec![put("a", "x", 0)],
            vec![put("b", "x", 9), put("b", "x", 8)],
        ];
        assert_eq!(
            hidden(&r, &rows),
            HiddenCells {
                expired: 0,
                beyond_versions: 1
            }
        );
        let r = retention(1, 0, None, 0);
        assert_eq!(hidden(&r, &rows).beyond_versions, 4);
    }

    #[test]
    fn ttl_expired_and_min_versions_keep_the_newest() {
        // TTL 1 s at now = 10_000: ts < 9_000 expired.
        let rows = vec![vec![
            put("a", "q", 9_500),
            put("a", "q", 8_000),
            put("a", "q", 7_000),
            put("a", "r", 100),
        ]];
        let r = retention(5, 0, Some(1), 10_000);
        assert_eq!(
            hidden(&r, &rows),
            HiddenCells {
                expired: 3,
                beyond_versions: 0
            }
        );
        // MIN_VERSIONS 2: q keeps 9_500 and 8_000; r keeps its only version.
        let r = retention(5, 2, Some(1), 10_000);
        assert_eq!(hidden(&r, &rows).expired, 1);
        // Duplicates (same column and timestamp) are not counted.
        let dup = vec![vec![put("a", "q", 5), put("a", "q", 5), put("a", "q", 4)]];
        assert_eq!(hidden(&retention(1, 0, None, 0), &dup).beyond_versions, 1);
    }

    /// The counts agree with the read matcher: what it includes of every column is what is not
    /// hidden, for every combination of VERSIONS, MIN_VERSIONS and TTL over a mix of columns.
    #[test]
    fn agrees_with_the_read_matcher() {
        let now = 100_000;
        let mut cells = Vec::new();
        for (q, stamps) in [
            ("a", vec![99_000i64, 98_000, 97_000, 10_000, 5_000]),
            ("b", vec![50_000, 40_000]),
            ("c", vec![99_999]),
            ("d", vec![1, 0]),
        ] {
            for ts in stamps {
                cells.push(put("r", q, ts));
            }
        }
        for versions in 1..=4 {
            for min_versions in 0..=versions.min(2) {
                for ttl in [None, Some(1), Some(20), Some(80)] {
                    let settings = FamilyReadSettings {
                        versions,
                        min_versions,
                        ttl_seconds: ttl,
                        ..FamilyReadSettings::default()
                    };
                    let retention = Retention::new(&settings, now);
                    let mut m = QueryMatcher::new(MatcherConfig {
                        settings,
                        max_versions: versions,
                        time_range: TimeRange::ALL,
                        raw: false,
                        now_ms: now,
                        columns: None,
                    });
                    m.new_row();
                    // As the store scanner does: a seek skips the rest of the column or row.
                    let mut included = 0u64;
                    let mut skip_column: Option<&[u8]> = None;
                    for c in &cells {
                        if skip_column == Some(c.qualifier.as_slice()) {
                            continue;
                        }
                        skip_column = None;
                        let code = m.matches(&c.as_ref());
                        included += u64::from(code.includes());
                        match code {
                            MatchCode::IncludeAndSeekNextCol | MatchCode::SeekNextCol => {
                                skip_column = Some(&c.qualifier)
                            }
                            MatchCode::IncludeAndSeekNextRow | MatchCode::SeekNextRow => break,
                            MatchCode::Include | MatchCode::Skip => {}
                        }
                    }
                    let h = hidden(&retention, &[cells.clone()]);
                    assert_eq!(
                        included + h.expired + h.beyond_versions,
                        cells.len() as u64,
                        "VERSIONS {versions} MIN_VERSIONS {min_versions} TTL {ttl:?}: {h:?}"
                    );
                }
            }
        }
    }
}
