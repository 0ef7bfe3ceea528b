//! Regions in HBase's layout: `RegionInfo`, its region name and encoded name (the region
//! directory's name), the `.regioninfo` file, HBase's region order, and which regions of a
//! table are live (split and merge parents are not). Spec: `formats/hbase-layout.md`
//! §"Regions".

use std::cmp::Ordering;
use std::path::Path;

use md5::{Digest, Md5};
use prost::Message;

use super::proto;
use super::{pb_magic, ContentError, HBaseError, Result};
use hfkit_format::fileinfo::PB_MAGIC;
use hfkit_table::{to_string_binary, TableName};

/// The region info file in a region directory.
pub const REGION_INFO_FILE: &str = ".regioninfo";

/// The start key of a table's MOB region (`MobConstants.MOB_REGION_NAME`).
pub const MOB_REGION_START: &[u8] = b".mob";

/// A region: table, key range `[start_key, end_key)` (empty end = unbounded), region id and
/// flags, as HBase's `RegionInfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionInfo {
    pub table: TableName,
    pub start_key: Vec<u8>,
    pub end_key: Vec<u8>,
    /// Usually the creation time in ms.
    pub region_id: u64,
    pub offline: bool,
    /// A split parent (as `hbase:meta` records it; never on the parent's own `.regioninfo`).
    pub split: bool,
    pub replica_id: i32,
}

impl RegionInfo {
    /// The region-name bytes the encoded name hashes: `<table>,<start key>,<region id>` (with
    /// `_<replica id as %04X>` for replicas).
    fn name_prefix(&self) -> Vec<u8> {
        let mut b = self.table.full_name().into_bytes();
        b.push(b',');
        b.extend_from_slice(&self.start_key);
        b.push(b',');
        b.extend_from_slice(self.region_id.to_string().as_bytes());
        if self.replica_id > 0 {
            b.extend_from_slice(format!("_{:04X}", self.replica_id).as_bytes());
        }
        b
    }

    /// Whether this is a table's MOB region (`MobUtils.getMobRegionInfo`: start key `.mob`, no
    /// end key, region id 0): the region of `mobdir/`'s MOB files, never a key range of the
    /// table (formats/hbase-layout.md §"MOB tables").
    pub fn is_mob_region(&self) -> bool {
        self.start_key == MOB_REGION_START && self.end_key.is_empty() && self.region_id == 0
    }

    /// The MOB region of `table`.
    pub fn mob_region(table: &TableName) -> RegionInfo {
        RegionInfo {
            table: table.clone(),
            start_key: MOB_REGION_START.to_vec(),
            end_key: Vec::new(),
            region_id: 0,
            offline: false,
            split: false,
            replica_id: 0,
        }
    }

    /// `hbase:meta`'s regions keep HBase's old region name format (no encoded suffix).
    fn old_format(&self) -> bool {
        self.table.namespace == hfkit_table::schema::SYSTEM_NAMESPACE
            && self.table.qualifier == "meta"
    }

    /// The encoded region name (and region directory name): lowercase hex MD5 of the region
    /// name up to the region id (HBase's `RegionInfo.encodeRegionName`, new format); for
    /// `hbase:meta` (old format) the absolute value of the Jenkins hash of the region name,
    /// in decimal (`1588230740`).
    pub fn encoded_name(&self) -> String {
        if self.old_format() {
            use hfkit_format::bloom::hash::{hash, HashType};
            return hash(HashType::Jenkins, &self.name_prefix(), 0)
                .wrapping_abs()
                .to_string();
        }
        let digest = Md5::digest(self.name_prefix());
        hfkit_format::text::hex(&digest)
    }

    /// The full region name: `<table>,<start key>,<region id>.<encoded>.` (`hbase:meta`:
    /// without `.<encoded>.`).
    pub fn region_name(&self) -> Vec<u8> {
        let mut b = self.name_prefix();
        if self.old_format() {
            return b;
        }
        b.push(b'.');
        b.extend_from_slice(self.encoded_name().as_bytes());
        b.push(b'.');
        b
    }

    /// The region name as HBase prints it (`Bytes.toStringBinary`).
    pub fn region_name_string(&self) -> String {
        to_string_binary(&self.region_name())
    }

    /// True when `row` is in `[start_key, end_key)`.
    pub fn contains(&self, row: &[u8]) -> bool {
        row >= self.start_key.as_slice() && (self.end_key.is_empty() || row < &self.end_key[..])
    }

    /// True when every row of `other` is in this region (the keys of a merged region and one
    /// of its parents).
    pub fn covers(&self, other: &RegionInfo) -> bool {
        other.start_key >= self.start_key
            && (self.end_key.is_empty()
                || (!other.end_key.is_empty() && other.end_key <= self.end_key))
    }

    /// HBase's `RegionInfo.COMPARATOR`: table, start key, end key (the last region last),
    /// region id, replica id, offline first.
    pub fn compare(&self, other: &RegionInfo) -> Ordering {
        let table = |r: &RegionInfo| (r.table.namespace.clone(), r.table.qualifier.clone());
        table(self)
            .cmp(&table(other))
            .then_with(|| self.start_key.cmp(&other.start_key))
            .then_with(|| match self.end_key.cmp(&other.end_key) {
                Ordering::Equal => Ordering::Equal,
                _ if !self.start_key.is_empty() && self.end_key.is_empty() => Ordering::Greater,
                _ if !other.start_key.is_empty() && other.end_key.is_empty() => Ordering::Less,
                o => o,
            })
            .then_with(|| self.region_id.cmp(&other.region_id))
            .then_with(|| self.replica_id.cmp(&other.replica_id))
            .then_with(|| other.offline.cmp(&self.offline))
    }

    /// The region from its protobuf message.
    pub fn from_proto(p: &proto::RegionInfo) -> Result<RegionInfo, ContentError> {
        let utf8 = |bytes: &[u8], part| {
            String::from_utf8(bytes.to_vec()).map_err(|_| ContentError::TableNameNotUtf8 { part })
        };
        let namespace = utf8(&p.table_name.namespace, "namespace")?;
        let qualifier = utf8(&p.table_name.qualifier, "qualifier")?;
        let table = TableName::parse(&format!("{namespace}:{qualifier}"))?;
        Ok(RegionInfo {
            table,
            start_key: p.start_key.clone().unwrap_or_default(),
            end_key: p.end_key.clone().unwrap_or_default(),
            region_id: p.region_id,
            offline: p.offline.unwrap_or(false),
            split: p.split.unwrap_or(false),
            replica_id: p.replica_id.unwrap_or(0),
        })
    }

    /// The protobuf message, every field set (as `ProtobufUtil.toRegionInfo` writes it).
    pub fn to_proto(&self) -> proto::RegionInfo {
        proto::RegionInfo {
            region_id: self.region_id,
            table_name: proto::TableName {
                namespace: self.table.namespace.as_bytes().to_vec(),
                qualifier: self.table.qualifier.as_bytes().to_vec(),
            },
            start_key: Some(self.start_key.clone()),
            end_key: Some(self.end_key.clone()),
            offline: Some(self.offline),
            split: Some(self.split),
            replica_id: Some(self.replica_id),
        }
    }

    /// The bytes of a `.regioninfo` file: `PBUF` + the length-delimited message
    /// (`RegionInfo.toDelimitedByteArray`).
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let mut b = PB_MAGIC.to_vec();
        b.extend(self.to_proto().encode_length_delimited_to_vec());
        b
    }

    /// Reads a `.regioninfo` file.
    pub fn read_file(path: &Path) -> Result<RegionInfo> {
        let bytes = std::fs::read(path).map_err(|e| HBaseError::io(path, e))?;
        let body = pb_magic(path, &bytes)?;
        let p = proto::RegionInfo::decode_length_delimited(body)
            .map_err(|e| HBaseError::corrupt(path, format!("not a RegionInfo: {e}")))?;
        RegionInfo::from_proto(&p).map_err(|e| HBaseError::content(path, e))
    }
}

/// Which regions of a set are live: HBase records splits and merges only in `hbase:meta`, so
/// a split (or merge) parent whose directory is still there looks like any region on disk. A
/// region is a parent when it is flagged split, or when regions with a greater region id
/// (its daughters, or the merged region) cover its whole key range. Returns, per region, the
/// live flag; an error when live regions overlap or leave a hole in the key space.
pub fn live_regions(regions: &[RegionInfo]) -> Result<Vec<bool>, ContentError> {
    let mut order: Vec<usize> = (0..regions.len()).collect();
    // Newest first; equal ids in key order.
    order.sort_by(|&a, &b| {
        regions[b]
            .region_id
            .cmp(&regions[a].region_id)
            .then_with(|| regions[a].compare(&regions[b]))
    });
    let mut live = vec![false; regions.len()];
    // Key ranges of the live regions accepted so far, sorted by start key.
    let mut accepted: Vec<usize> = Vec::new();
    for &i in &order {
        let r = &regions[i];
        if r.split || r.replica_id != 0 {
            continue;
        }
        if covered(r, &accepted, regions) {
            continue;
        }
        if let Some(&j) = accepted.iter().find(|&&j| overlaps(r, &regions[j])) {
            return Err(ContentError::RegionsOverlap {
                first: regions[j].region_name(),
                second: r.region_name(),
            });
        }
        let at = accepted.partition_point(|&j| regions[j].start_key < r.start_key);
        accepted.insert(at, i);
        live[i] = true;
    }
    let mut expect: &[u8] = b"";
    for (n, &j) in accepted.iter().enumerate() {
        let r = &regions[j];
        if r.start_key != expect || (n > 0 && expect.is_empty()) {
            return Err(ContentError::RegionHole {
                start: expect.to_vec(),
                next: r.region_name(),
            });
        }
        expect = &r.end_key;
    }
    if !accepted.is_empty() && !expect.is_empty() {
        return Err(ContentError::RegionTail {
            end: expect.to_vec(),
        });
    }
    Ok(live)
}

fn overlaps(a: &RegionInfo, b: &RegionInfo) -> bool {
    let a_before_b_ends = b.end_key.is_empty() || a.start_key < b.end_key;
    let b_before_a_ends = a.end_key.is_empty() || b.start_key < a.end_key;
    a_before_b_ends && b_before_a_ends
}

/// True when the regions `accepted` (sorted by start key) cover all of `r`'s key range.
fn covered(r: &RegionInfo, accepted: &[usize], regions: &[RegionInfo]) -> bool {
    let mut at: Vec<u8> = r.start_key.clone();
    loop {
        let Some(&j) = accepted.iter().find(|&&j| regions[j].contains(&at)) else {
            return false;
        };
        let end = &regions[j].end_key;
        if end.is_empty() || (!r.end_key.is_empty() && end >= &r.end_key) {
            return true;
        }
        at = end.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(table: &str, start: &str, end: &str, id: u64) -> RegionInfo {
        RegionInfo {
            table: TableName::parse(table).unwrap(),
            start_key: start.as_bytes().to_vec(),
            end_key: end.as_bytes().to_vec(),
            region_id: id,
            offline: false,
            split: false,
            replica_id: 0,
        }
    }

    #[test]
    fn encoded_names_follow_hbase() {
        // The example of the facts sheet (not a fixture region).
        let r = region("ns1:t1", "row5", "", 1_700_000_000_000);
        assert_eq!(r.encoded_name(), "b9577d910aa8c58a57efd9e6ee375042");
        let r = region("t1", "", "g", 1_700_000_000_000);
        assert_eq!(
            r.region_name_string(),
            "t1,,1700000000000.43ae7364b4a555b93267937f9bc49ec1."
        );
        let meta = region("hbase:meta", "", "", 1);
        assert_eq!(meta.encoded_name(), "1588230740");
        assert_eq!(meta.region_name_string(), "hbase:meta,,1");
        let mut replica = r.clone();
        replica.replica_id = 1;
        assert_ne!(replica.encoded_name(), r.encoded_name());
        assert!(replica
            .region_name_string()
            .starts_with("t1,,1700000000000_0001."));
        let bytes = r.to_file_bytes();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(REGION_INFO_FILE);
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(RegionInfo::read_file(&p).unwrap(), r);
    }

    #[test]
    fn split_and_merge_parents_are_not_live() {
        let parent = region("t", "", "", 1);
        let d1 = region("t", "", "m", 2);
        let d2 = region("t", "m", "", 2);
        assert_eq!(
            live_regions(&[parent.clone(), d1.clone(), d2.clone()]).unwrap(),
            vec![false, true, true]
        );
        // Merge: the merged region is newer than both parents.
        let merged = region("t", "", "", 3);
        assert_eq!(
            live_regions(&[d1.clone(), d2.clone(), merged]).unwrap(),
            vec![false, false, true]
        );
        // Flagged split, daughters gone: an error (a hole), not a silent read of the parent.
        let mut flagged = parent.clone();
        flagged.split = true;
        assert!(live_regions(&[flagged, d1.clone()]).is_err());
        // A parent with only one daughter left is still live where nothing newer covers it:
        // the regions then overlap, which is an error.
        assert!(live_regions(&[parent, d1.clone()]).is_err());
        assert!(live_regions(&[d1, region("t", "n", "", 2)]).is_err());
    }

    #[test]
    fn region_errors_are_typed_with_the_regions_and_keys() {
        let d1 = region("t", "", "m", 2);
        match live_regions(&[d1.clone(), region("t", "k", "", 2)]) {
            Err(ContentError::RegionsOverlap { first, second }) => {
                assert_eq!(first, d1.region_name());
                assert_eq!(second, region("t", "k", "", 2).region_name());
            }
            other => panic!("{other:?}"),
        }
        let d3 = region("t", "n", "", 2);
        match live_regions(&[d1.clone(), d3.clone()]) {
            Err(ContentError::RegionHole { start, next }) => {
                assert_eq!((start.as_slice(), next), (&b"m"[..], d3.region_name()));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            live_regions(&[d1]),
            Err(ContentError::RegionTail { end }) if end == b"m"
        ));
        let mut p = region("t", "", "", 1).to_proto();
        p.table_name.qualifier = vec![0xff];
        assert!(matches!(
            RegionInfo::from_proto(&p),
            Err(ContentError::TableNameNotUtf8 { part: "qualifier" })
        ));
        p.table_name.qualifier = b"bad name".to_vec();
        assert!(matches!(
            RegionInfo::from_proto(&p),
            Err(ContentError::TableName(_))
        ));
    }

    #[test]
    fn hbase_region_order() {
        let parent = region("t", "", "", 1);
        let d1 = region("t", "", "r10", 2);
        let d2 = region("t", "r10", "", 2);
        let mut v = vec![d2.clone(), d1.clone(), parent.clone()];
        v.sort_by(|a, b| a.compare(b));
        assert_eq!(v, vec![parent, d1, d2]);
    }
}
