//! HBase's own layout, read offline: every table and snapshot of the HBase-written fixture
//! root (`../shared/fixtures/hbase-layout`, written by Apache HBase's own classes) read
//! through hfkit's `hbase` layer and compared with what HBase's own readers returned.

use crate::common;
use crate::common::hfkit;
use crate::common::{use_file_tracker, write_filelist, write_filelist_sized};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hfkit::format::cell::{compare_cells, Cell};
use hfkit::format::fileinfo::keys;
use hfkit::format::reader::HFileReader;
use hfkit::format::text::{hex, parse_cell_line};
use hfkit::hbase::clone::clone_to_table;
use hfkit::hbase::compact::{compact_in_place, CompactOptions};
use hfkit::hbase::descriptor::{tableinfo_file_name, TABLEINFO_DIR};
use hfkit::hbase::export::{export_snapshot, ExportOptions};
use hfkit::hbase::manifest::FILELIST_DIR;
use hfkit::hbase::manifest::{Manifest, Source};
use hfkit::hbase::proto;
use hfkit::hbase::proto::CompactionEventTracker;
use hfkit::hbase::snapshot::SnapshotInfo;
use hfkit::hbase::store::{for_each_cell, open_store_file};
use hfkit::hbase::{verify, HBaseRoot};
use hfkit::read::{ReadOptions, Row};
use hfkit::table::directory::Table;
use hfkit::table::to_string_binary;
use md5::{Digest, Md5};
use prost::Message;

mod cli;
mod compact;
mod export;
mod verify_digests;

/// The layout fixtures (`hbase-layout/`), or `None` (skip) when absent.
fn layout(test: &str) -> Option<PathBuf> {
    let dir = common::fixtures_root(test)?.join("hbase-layout");
    if dir.join("root1").is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIP {test}: no hbase-layout fixtures at {}", dir.display());
        None
    }
}

/// (expected directory name, table or snapshot) of every fixture view.
const VIEWS: [(&str, View); 5] = [
    ("t1", View::Table("t1")),
    ("ns1_t2", View::Table("ns1:t2")),
    ("t3", View::Table("t3")),
    ("snap_t1", View::Snapshot("snap_t1")),
    ("snap_t2", View::Snapshot("snap_t2")),
];

#[derive(Clone, Copy)]
enum View {
    Table(&'static str),
    Snapshot(&'static str),
}

fn open(root: &Path, v: View) -> Manifest {
    let r = HBaseRoot::open(root).unwrap();
    match v {
        View::Table(t) => r.table(t).unwrap(),
        View::Snapshot(s) => r.snapshot(s).unwrap(),
    }
}

/// One `# file` section of a `<family>.cells.txt`: header fields and cell lines.
struct Section {
    name: String,
    header: BTreeMap<String, String>,
    lines: Vec<String>,
}

fn sections(path: &Path) -> Vec<Section> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: Vec<Section> = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("# file ") {
            let mut parts = h.split(' ');
            let name = parts.next().unwrap().to_string();
            let header = parts
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            out.push(Section {
                name,
                header,
                lines: Vec::new(),
            });
        } else if !line.is_empty() {
            out.last_mut().unwrap().lines.push(line.to_string());
        }
    }
    out
}

/// The cell lines (with sequence ids) of one store file, as hfkit reads it.
fn file_lines(m: &Manifest, region: &str, family: &str, name: &str) -> (Vec<String>, String) {
    let r = m
        .regions
        .iter()
        .find(|r| r.info.encoded_name() == region)
        .unwrap_or_else(|| panic!("region {region}"));
    let ff = r
        .families
        .iter()
        .find(|f| f.family == family.as_bytes())
        .unwrap();
    let f = ff.files.iter().find(|f| f.name == name).unwrap();
    let resolved = m.resolve(r, family, f).unwrap();
    let opened = open_store_file(&resolved).unwrap();
    let mut lines = Vec::new();
    for_each_cell(&opened, &mut |c| {
        lines.push(hfkit::format::text::cell_line(c, true))
    })
    .unwrap();
    (lines, resolved.kind())
}

#[test]
fn every_store_file_reads_exactly_hbase_cells() {
    let Some(dir) = layout("every_store_file_reads_exactly_hbase_cells") else {
        return;
    };
    let root = dir.join("root1");
    let root_text = root.display().to_string();
    let mut checked = 0;
    for (exp, v) in VIEWS {
        let m = open(&root, v);
        for region in std::fs::read_dir(dir.join("expected").join(exp)).unwrap() {
            let region = region.unwrap().path();
            if !region.is_dir() {
                continue;
            }
            let enc = region.file_name().unwrap().to_string_lossy().into_owned();
            for cells in std::fs::read_dir(&region).unwrap() {
                let cells = cells.unwrap().path();
                let fname = cells.file_name().unwrap().to_string_lossy().into_owned();
                let family = fname.strip_suffix(".cells.txt").unwrap();
                let r = m
                    .regions
                    .iter()
                    .find(|r| r.info.encoded_name() == enc)
                    .unwrap();
                let ff = r
                    .families
                    .iter()
                    .find(|f| f.family == family.as_bytes())
                    .unwrap();
                let mut ours: Vec<&str> = ff.files.iter().map(|f| f.name.as_str()).collect();
                ours.sort();
                let expected = sections(&cells);
                let names: Vec<&str> = expected.iter().map(|s| s.name.as_str()).collect();
                assert_eq!(ours, names, "{exp}/{enc}/{family}: store file list");
                for s in &expected {
                    let (lines, kind) = file_lines(&m, &enc, family, &s.name);
                    assert_eq!(lines, s.lines, "{exp}/{enc}/{family}/{}", s.name);
                    let is_ref = s.header["reference"] == "true";
                    assert_eq!(kind.starts_with("reference"), is_ref, "{}", s.name);
                    if let Some(top) = s.header.get("top") {
                        assert_eq!(kind.starts_with("reference top"), top == "true");
                    }
                    if let Some(link) = s.header.get("link") {
                        assert_eq!(kind.contains("link"), link == "true", "{}", s.name);
                    }
                    if let Some(resolved) = s.header.get("resolved") {
                        let r = m
                            .regions
                            .iter()
                            .find(|r| r.info.encoded_name() == enc)
                            .unwrap();
                        let f = ff.files.iter().find(|f| f.name == s.name).unwrap();
                        let p = m.resolve(r, family, f).unwrap().path;
                        assert_eq!(
                            p.display().to_string().replace(&root_text, "$ROOT"),
                            *resolved
                        );
                    }
                    if let (Some(key), Some(reference)) = (
                        s.header.get("splitkey"),
                        f_reference(&m, &enc, family, &s.name),
                    ) {
                        assert_eq!(hex(&reference), *key);
                    }
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 40, "store files compared");
}

fn f_reference(m: &Manifest, region: &str, family: &str, name: &str) -> Option<Vec<u8>> {
    let r = m.regions.iter().find(|r| r.info.encoded_name() == region)?;
    let ff = r.families.iter().find(|f| f.family == family.as_bytes())?;
    let f = ff.files.iter().find(|f| f.name == name)?;
    f.reference.as_ref().map(|r| r.split_key.clone())
}

/// Every cell line of the expected store files of the live regions, in HBase's order (key,
/// then sequence id descending).
fn expected_union(dir: &Path, exp: &str, skip_region: Option<&str>) -> Vec<String> {
    let mut cells: Vec<Cell> = Vec::new();
    for region in std::fs::read_dir(dir.join("expected").join(exp)).unwrap() {
        let region = region.unwrap().path();
        if !region.is_dir() || region.file_name().unwrap().to_str() == skip_region {
            continue;
        }
        for f in std::fs::read_dir(&region).unwrap() {
            for s in sections(&f.unwrap().path()) {
                cells.extend(s.lines.iter().map(|l| parse_cell_line(l).unwrap()));
            }
        }
    }
    cells.sort_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()).then(b.seq_id.cmp(&a.seq_id)));
    cells
        .iter()
        .map(|c| hfkit::format::text::cell_line(&c.as_ref(), true))
        .collect()
}

fn raw_scan(m: &Manifest) -> Vec<String> {
    let reader = m.reader().unwrap();
    let opts = ReadOptions {
        raw: true,
        max_versions: u32::MAX,
        ..ReadOptions::default()
    };
    let mut out = Vec::new();
    for row in reader.scan(&opts).unwrap() {
        let Row { cells, .. } = row.unwrap();
        out.extend(
            cells
                .iter()
                .map(|c| hfkit::format::text::cell_line(&c.as_ref(), true)),
        );
    }
    out
}

#[test]
fn raw_scan_is_the_union_of_the_store_files_without_the_split_parent() {
    let Some(dir) = layout("raw_scan_is_the_union_of_the_store_files_without_the_split_parent")
    else {
        return;
    };
    let root = dir.join("root1");
    let parent = "65374ed9eca7cccfe7a1fb7c3de41505";
    for (exp, v) in VIEWS {
        let m = open(&root, v);
        let skip = exp.contains("t2").then_some(parent);
        let parents: Vec<String> = m
            .regions
            .iter()
            .filter(|r| !r.live)
            .map(|r| r.info.encoded_name())
            .collect();
        assert_eq!(
            parents,
            skip.map(str::to_string).into_iter().collect::<Vec<_>>()
        );
        let expected = expected_union(&dir, exp, skip);
        let got = raw_scan(&m);
        assert!(!got.is_empty());
        assert_eq!(got, expected, "{exp}: raw scan, all versions");
    }
    // The split parent's cells, each exactly once, through the daughters' halves.
    let t2 = open(&root, View::Table("ns1:t2"));
    let all = expected_union(&dir, "ns1_t2", Some("x"));
    assert_eq!(raw_scan(&t2).len() * 2, all.len());
}

/// Cell lines (with sequence ids, as HBase's reader listed them) as `hbase verify` digests
/// them: without sequence ids, in HBase's cell order, equal keys by their line, each followed
/// by `\n` (`formats/hbase-layout.md` §"Verification").
fn digested_lines(lines: &[String]) -> Vec<String> {
    let mut cells: Vec<(Cell, String)> = lines
        .iter()
        .map(|l| {
            let c = parse_cell_line(l).unwrap();
            let text = hfkit::format::text::cell_line(&c.as_ref(), false) + "\n";
            (c, text)
        })
        .collect();
    cells.sort_by(|a, b| compare_cells(&a.0.as_ref(), &b.0.as_ref()).then(a.1.cmp(&b.1)));
    cells.into_iter().map(|(_, text)| text).collect()
}

fn sha256_hex(lines: &[String]) -> String {
    use sha2::{Digest as _, Sha256};
    let mut h = Sha256::new();
    for l in lines {
        h.update(l.as_bytes());
    }
    hex(&h.finalize())
}

/// The stores of a snapshot's `verify.txt` (HBase's `verifySnapshot` result, with its files and
/// cells per store), their digests computed from HBase's cell listings (`<store>.cells.txt`);
/// and the total line over the live regions (family after family, regions in order).
fn expected_verify(dir: &Path, name: &str, m: &Manifest) -> (Vec<String>, String) {
    let exp = dir.join("expected").join(name);
    let verify_txt = std::fs::read_to_string(exp.join("verify.txt")).unwrap();
    let mut stores = Vec::new();
    let mut by_family: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in verify_txt.lines() {
        let Some(s) = l.trim().strip_prefix("store ") else {
            continue;
        };
        let (store, rest) = s.split_once(' ').unwrap();
        let (region, family) = store.split_once('/').unwrap();
        let lines: Vec<String> = sections(&exp.join(region).join(format!("{family}.cells.txt")))
            .into_iter()
            .flat_map(|sec| sec.lines)
            .collect();
        let counts = rest.rsplit_once(" sha256=").unwrap().0;
        assert_eq!(
            counts.rsplit_once("cells=").unwrap().1,
            lines.len().to_string()
        );
        stores.push(format!(
            "{store} {counts} sha256={}",
            sha256_hex(&digested_lines(&lines))
        ));
        let live = m
            .regions
            .iter()
            .any(|r| r.live && r.info.encoded_name() == region);
        if live {
            by_family
                .entry(family.to_string())
                .or_default()
                .push(region.to_string());
        }
    }
    let order: Vec<String> = verify::regions_in_order(m)
        .iter()
        .map(|r| r.info.encoded_name())
        .collect();
    let mut total = Vec::new();
    for (family, mut regions) in by_family {
        regions.sort_by_key(|r| order.iter().position(|o| o == r));
        let lines: Vec<String> = regions
            .iter()
            .flat_map(|r| sections(&exp.join(r).join(format!("{family}.cells.txt"))))
            .flat_map(|sec| sec.lines)
            .collect();
        total.extend(digested_lines(&lines));
    }
    let total = format!("total_cells={} sha256={}", total.len(), sha256_hex(&total));
    (stores, total)
}

#[test]
fn snapshot_digests_match_hbase_verify() {
    let Some(dir) = layout("snapshot_digests_match_hbase_verify") else {
        return;
    };
    let root = dir.join("root1");
    for name in ["snap_t1", "snap_t2"] {
        let m = open(&root, View::Snapshot(name));
        let report = verify::verify(&m);
        assert!(report.is_ok(), "{name}: {:?}", report.problems);
        let (want, total) = expected_verify(&dir, name, &m);
        let got: Vec<String> = report
            .stores
            .iter()
            .map(|s| {
                format!(
                    "{}/{} files={} cells={} sha256={}",
                    s.region, s.family, s.files, s.cells, s.sha256
                )
            })
            .collect();
        assert_eq!(got, want, "{name}");
        assert_eq!(
            format!(
                "total_cells={} sha256={}",
                report.total_cells, report.total_sha256
            ),
            total
        );
        let expected =
            std::fs::read_to_string(dir.join("expected").join(name).join("verify.txt")).unwrap();
        let Source::Snapshot { description, .. } = &m.source else {
            panic!("a snapshot")
        };
        let first = expected.lines().next().unwrap();
        assert_eq!(
            first,
            format!(
                "snapshot: name={} table={} type={} version={} creation_time={}",
                description.name,
                description.table,
                description.snapshot_type,
                description.version,
                description.creation_time
            )
        );
    }
}

fn region_lines(m: &Manifest) -> Vec<String> {
    verify::regions_in_order(m)
        .iter()
        .map(|r| {
            let i = &r.info;
            let key = |k: &[u8]| if k.is_empty() { "-".into() } else { hex(k) };
            format!(
                "{} start={} end={} regionId={} split={} offline={} replicaId={} regionName={}",
                i.encoded_name(),
                key(&i.start_key),
                key(&i.end_key),
                i.region_id,
                i.split,
                i.offline,
                i.replica_id,
                i.region_name_string()
            )
        })
        .collect()
}

#[test]
fn regions_and_schemas_are_hbase_own() {
    let Some(dir) = layout("regions_and_schemas_are_hbase_own") else {
        return;
    };
    let root = dir.join("root1");
    for (exp, v) in VIEWS {
        let m = open(&root, v);
        let e = dir.join("expected").join(exp);
        let regions = std::fs::read_to_string(e.join("regions.txt")).unwrap();
        assert_eq!(
            region_lines(&m),
            regions.lines().collect::<Vec<_>>(),
            "{exp}"
        );
        let schema = std::fs::read_to_string(e.join("schema.txt")).unwrap();
        let d = &m.descriptor;
        let mut want = vec![
            format!("table: {}:{}", d.table.namespace, d.table.qualifier),
            format!("toString: {}", d.describe()),
        ];
        for f in d.sorted_families() {
            want.push(format!("family {}: {}", f.name_str(), f.describe()));
        }
        assert_eq!(want, schema.lines().collect::<Vec<_>>(), "{exp}");
    }
}

#[test]
fn encoded_region_names_are_md5_of_table_start_key_and_id() {
    let Some(dir) = layout("encoded_region_names_are_md5_of_table_start_key_and_id") else {
        return;
    };
    let root = dir.join("root1");
    let mut n = 0;
    for (_, v) in VIEWS {
        let m = open(&root, v);
        for r in &m.regions {
            let i = &r.info;
            let mut input = i.table.full_name().into_bytes();
            input.push(b',');
            input.extend_from_slice(&i.start_key);
            input.extend_from_slice(format!(",{}", i.region_id).as_bytes());
            let md5 = hex(&Md5::digest(&input));
            assert_eq!(i.encoded_name(), md5);
            if let Source::Table { dir } = &m.source {
                assert!(dir.join(&md5).join(".regioninfo").is_file());
            }
            assert_eq!(
                i.region_name_string(),
                format!("{}.{md5}.", to_string_binary(&input))
            );
            n += 1;
        }
    }
    assert_eq!(n, 15);
}

#[test]
fn damaged_layouts_fail_naming_the_file_and_the_problem() {
    let Some(dir) = layout("damaged_layouts_fail_naming_the_file_and_the_problem") else {
        return;
    };
    let corrupt = dir.join("corrupt");

    let root = corrupt.join("truncated_manifest");
    let err = HBaseRoot::open(&root)
        .unwrap()
        .snapshot("snap_t1")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(".hbase-snapshot/snap_t1/data.manifest")
            && err.contains("unable to parse data manifest"),
        "{err}"
    );

    let root = corrupt.join("missing_archived_file");
    let m = HBaseRoot::open(&root).unwrap().snapshot("snap_t1").unwrap();
    let report = verify::verify(&m);
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    let p = &report.problems[0];
    assert!(
        p.contains("can't find hfile 1c7152a2e13060a3cca94724b74a5911")
            && p.contains("archive/data/default/t1/3997d7168c1693a7e337a840fa1290a5/cf2/1c7152a2e13060a3cca94724b74a5911"),
        "{p}"
    );
    assert!(
        m.reader().err().is_some(),
        "a read of the snapshot fails too"
    );

    let root = corrupt.join("reference_missing_parent");
    let hb = HBaseRoot::open(&root).unwrap();
    let parent_file = "65374ed9eca7cccfe7a1fb7c3de41505/f/cfca939b85130c57fc914135e3f5cb6f";
    let report = verify::verify(&hb.snapshot("snap_t2_daughters").unwrap());
    assert_eq!(report.problems.len(), 2, "{:?}", report.problems);
    for p in &report.problems {
        assert!(
            p.contains("missing parent hfile for reference cfca939b85130c57fc914135e3f5cb6f.65374ed9eca7cccfe7a1fb7c3de41505")
                && p.contains(parent_file),
            "{p}"
        );
    }
    let report = verify::verify(&hb.snapshot("snap_t2").unwrap());
    assert_eq!(report.problems.len(), 3, "{:?}", report.problems);
    assert!(report.problems[0].contains("can't find hfile cfca939b85130c57fc914135e3f5cb6f"));
    let Err(err) = hb.table("ns1:t2").unwrap().reader() else {
        panic!("the daughters' references cannot be read");
    };
    let err = err.to_string();
    assert!(
        err.contains(parent_file) && err.contains("missing parent hfile"),
        "{err}"
    );
}

/// Copies the directory tree `from` to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// A scratch copy of the fixture root: (fixtures, the temporary directory, the copy).
fn root_copy(test: &str) -> Option<(PathBuf, tempfile::TempDir, PathBuf)> {
    let dir = layout(test)?;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    copy_tree(&dir.join("root1"), &root);
    Some((dir, tmp, root))
}

#[test]
fn file_store_file_tracker_lists_the_stores() {
    let Some((dir, _tmp, root)) = root_copy("file_store_file_tracker_lists_the_stores") else {
        return;
    };
    let hb = HBaseRoot::open(&root).unwrap();

    // t1: the newest list wins over the directory listing and older lists.
    use_file_tracker(&root, "t1");
    let store = root.join("data/default/t1/43ae7364b4a555b93267937f9bc49ec1/cf1");
    write_filelist(
        &store,
        "f1.50",
        9,
        &[("e8503d0ff957546109e681dceafe0d88", None)],
    );
    write_filelist(
        &store,
        "f1.100",
        5,
        &[
            ("d6092c5365ce832c8b74043d87def563", None),
            ("e8503d0ff957546109e681dceafe0d88", None),
        ],
    );
    write_filelist(
        &store,
        "f2.100",
        6,
        &[("d6092c5365ce832c8b74043d87def563", None)],
    );
    let m = hb.table("t1").unwrap();
    let r = m
        .regions
        .iter()
        .find(|r| r.info.encoded_name() == "43ae7364b4a555b93267937f9bc49ec1")
        .unwrap();
    let names: Vec<&str> = r.families[0]
        .files
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["d6092c5365ce832c8b74043d87def563"]);
    assert!(r.families[1].files.is_empty(), "no list: no files");

    // A damaged list is an error naming it.
    let bad = store.join(".filelist/f2.100");
    let mut bytes = std::fs::read(&bad).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&bad, bytes).unwrap();
    let err = hb.table("t1").unwrap_err().to_string();
    assert!(
        err.contains("f2.100") && err.contains("checksum mismatch"),
        "{err}"
    );

    // ns1:t2: the FILE tracker keeps references in the list only (no reference files).
    let t2 = hb.table("ns1:t2").unwrap();
    use_file_tracker(&root, "ns1:t2");
    for r in &t2.regions {
        let store = root
            .join("data/ns1/t2")
            .join(r.info.encoded_name())
            .join("f");
        let entries: Vec<(&str, Option<hfkit::hbase::Reference>)> = r.families[0]
            .files
            .iter()
            .map(|f| (f.name.as_str(), f.reference.clone()))
            .collect();
        write_filelist(&store, "f1.1", 1, &entries);
        for f in &r.families[0].files {
            if f.reference.is_some() {
                std::fs::remove_file(store.join(&f.name)).unwrap();
            }
        }
    }
    let t2 = hb.table("ns1:t2").unwrap();
    let got = raw_scan(&t2);
    assert_eq!(
        got,
        expected_union(&dir, "ns1_t2", Some("65374ed9eca7cccfe7a1fb7c3de41505"))
    );
}

#[test]
fn v1_and_in_progress_snapshots_read_like_consolidated_ones() {
    let Some((_, _tmp, root)) =
        root_copy("v1_and_in_progress_snapshots_read_like_consolidated_ones")
    else {
        return;
    };
    let hb = HBaseRoot::open(&root).unwrap();
    for base in ["snap_t1", "snap_t2"] {
        let m = hb.snapshot(base).unwrap();
        let want = verify::verify(&m);
        let Source::Snapshot { description, .. } = &m.source else {
            panic!()
        };
        let td = m.descriptor.to_file_bytes();
        for (suffix, version) in [("_v1", 0), ("_wip", 2)] {
            let name = format!("{base}{suffix}");
            let sdir = root.join(".hbase-snapshot").join(&name);
            std::fs::create_dir_all(sdir.join(TABLEINFO_DIR)).unwrap();
            let mut info = description.clone();
            info.name = name.clone();
            info.version = version;
            std::fs::write(sdir.join(".snapshotinfo"), info.to_proto().encode_to_vec()).unwrap();
            std::fs::write(
                sdir.join(TABLEINFO_DIR).join(tableinfo_file_name(1, &td)),
                &td,
            )
            .unwrap();
            for r in &m.regions {
                let enc = r.info.encoded_name();
                if version == 0 {
                    std::fs::create_dir_all(sdir.join(&enc)).unwrap();
                    std::fs::write(sdir.join(&enc).join(".regioninfo"), r.info.to_file_bytes())
                        .unwrap();
                    for ff in &r.families {
                        let fdir = sdir
                            .join(&enc)
                            .join(String::from_utf8_lossy(&ff.family).as_ref());
                        std::fs::create_dir_all(&fdir).unwrap();
                        for f in &ff.files {
                            let content = f.reference.as_ref().map(|r| r.to_file_bytes());
                            std::fs::write(fdir.join(&f.name), content.unwrap_or_default())
                                .unwrap();
                        }
                    }
                } else {
                    let rm = proto::SnapshotRegionManifest {
                        version: Some(2),
                        region_info: r.info.to_proto(),
                        family_files: r
                            .families
                            .iter()
                            .map(|ff| proto::FamilyFiles {
                                family_name: ff.family.clone(),
                                store_files: ff
                                    .files
                                    .iter()
                                    .map(|f| proto::SnapshotStoreFile {
                                        name: f.name.clone(),
                                        reference: f.reference.as_ref().map(|r| r.to_proto()),
                                        file_size: f.file_size,
                                    })
                                    .collect(),
                            })
                            .collect(),
                    };
                    std::fs::write(
                        sdir.join(format!("region-manifest.{enc}")),
                        rm.encode_to_vec(),
                    )
                    .unwrap();
                }
            }
            let copy = hb.snapshot(&name).unwrap();
            assert_eq!(SnapshotInfo::read(&sdir).unwrap().version, version);
            let got = verify::verify(&copy);
            assert!(got.is_ok(), "{name}: {:?}", got.problems);
            assert_eq!(got.stores, want.stores, "{name}");
            assert_eq!(raw_scan(&copy), raw_scan(&m), "{name}");
        }
    }
}

/// Every path under `dir`, sorted.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The words of a command line (paths here hold no spaces).
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Every row of a read through `reader`, as cell lines without sequence ids.
fn read_all(reader: &hfkit::table::read::TableReader, raw: bool, now_ms: i64) -> Vec<String> {
    let opts = ReadOptions {
        raw,
        max_versions: if raw { u32::MAX } else { 100 },
        now_ms,
        ..ReadOptions::default()
    };
    let mut out = Vec::new();
    for row in reader.scan(&opts).unwrap() {
        for c in row.unwrap().cells {
            out.push(hfkit::format::text::cell_line(&c.as_ref(), false));
        }
    }
    out
}

fn table_reader(dir: &Path) -> hfkit::table::read::TableReader {
    let t = hfkit::table::directory::Table::open(dir).unwrap();
    hfkit::table::read::TableReader::open(&t).unwrap()
}

/// Runs hfkit, which must succeed.
fn ok(args: &[&str]) -> std::process::Output {
    let o = hfkit(args);
    assert!(o.status.success(), "hfkit {args:?}: {o:?}");
    o
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
