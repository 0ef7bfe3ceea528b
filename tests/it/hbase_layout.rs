//! HBase's own layout, read offline: every table and snapshot of the HBase-written fixture
//! root (`../shared/fixtures/hbase-layout`, written by Apache HBase's own classes) read
//! through hfkit's `hbase` layer and compared with what HBase's own readers returned.

use crate::common;
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

use crate::common::hfkit;

/// The words of a command line (paths here hold no spaces).
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
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

#[test]
fn cli_lists_describes_and_verifies() {
    let Some(dir) = layout("cli_lists_describes_and_verifies") else {
        return;
    };
    let root = dir.join("root1");
    let r = root.to_str().unwrap();

    let o = ok(&["hbase", "ls", r]);
    let s = stdout(&o);
    assert!(
        s.contains("TABLE     ns1:t2  2 region(s) (+1 split/merge parent(s))  families f"),
        "{s}"
    );
    assert!(
        s.contains("SNAPSHOT  snap_t1  table t1  FLUSH v2  created 1700000300000"),
        "{s}"
    );
    assert!(s.ends_with("3 table(s), 2 snapshot(s)\n"), "{s}");

    let o = ok(&["hbase", "describe", r, "ns1:t2"]);
    let s = stdout(&o);
    let schema = std::fs::read_to_string(dir.join("expected/ns1_t2/schema.txt")).unwrap();
    let to_string = schema
        .lines()
        .nth(1)
        .unwrap()
        .strip_prefix("toString: ")
        .unwrap();
    assert_eq!(s.lines().nth(1), Some(to_string));
    assert!(s.contains("REGION 65374ed9eca7cccfe7a1fb7c3de41505  [, )  id 1700000000000  split/merge parent (not read)"), "{s}");
    assert!(s.contains("  f  cfca939b85130c57fc914135e3f5cb6f.65374ed9eca7cccfe7a1fb7c3de41505  reference top at 'r10'  5838 bytes  "), "{s}");
    let o = hfkit(&["hbase", "describe", r, "--snapshot", "snap_t1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files = v["regions"][1]["files"].as_array().unwrap();
    let archived = files
        .iter()
        .find(|f| f["name"] == "1c7152a2e13060a3cca94724b74a5911")
        .unwrap();
    assert_eq!(archived["kind"], "link");
    assert_eq!(archived["size"], 5071);
    assert!(archived["path"]
        .as_str()
        .unwrap()
        .contains("/archive/data/default/t1/"));

    let o = ok(&["hbase", "verify", r, "--snapshot", "snap_t1"]);
    let (stores, total) = expected_verify(&dir, "snap_t1", &open(&root, View::Snapshot("snap_t1")));
    let want = std::fs::read_to_string(dir.join("expected/snap_t1/verify.txt")).unwrap();
    let s = stdout(&o);
    let first = want.lines().next().unwrap().to_string();
    for l in stores
        .iter()
        .map(|l| format!("store {l}"))
        .chain([total, first])
    {
        assert!(s.contains(&format!("{l}\n")), "{l} not in {s}");
    }
    let bad = dir.join("corrupt/missing_archived_file");
    let o = hfkit(&words(&format!(
        "hbase verify {} --snapshot snap_t1",
        bad.to_str().unwrap()
    )));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("1 problem(s)")
            && err.contains("can't find hfile 1c7152a2e13060a3cca94724b74a5911"),
        "{err}"
    );
    // --json: the same digests and problems on standard output.
    let o = ok(&["hbase", "verify", r, "--snapshot", "snap_t1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["ok"].clone(), v["snapshot"].clone()),
        (true.into(), "snap_t1".into())
    );
    for st in v["stores"].as_array().unwrap() {
        let line = format!(
            "store {}/{} files={} cells={} sha256={}\n",
            st["region"].as_str().unwrap(),
            st["family"].as_str().unwrap(),
            st["files"],
            st["cells"],
            st["sha256"].as_str().unwrap()
        );
        assert!(s.contains(&line), "{line} not in {s}");
    }
    let total = format!(
        "total_cells={} sha256={}\n",
        v["total_cells"],
        v["total_sha256"].as_str().unwrap()
    );
    assert!(s.contains(&total), "{total} not in {s}");
    let o = hfkit(&[
        "hbase",
        "verify",
        bad.to_str().unwrap(),
        "--snapshot",
        "snap_t1",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert!(v["problems"][0]
        .as_str()
        .unwrap()
        .contains("can't find hfile 1c7152a2e13060a3cca94724b74a5911"));
    let o = hfkit(&["hbase", "describe", r]);
    assert_eq!(o.status.code(), Some(2), "TABLE or --snapshot is required");
    for cmd in ["ls", "describe", "verify", "get", "scan"] {
        let o = hfkit(&["hbase", cmd, "--help"]);
        assert!(stdout(&o).contains("Example"), "hbase {cmd} --help");
    }
}

#[test]
fn cli_get_and_scan_read_tables_and_snapshots() {
    let Some(dir) = layout("cli_get_and_scan_read_tables_and_snapshots") else {
        return;
    };
    let root = dir.join("root1");
    let r = root.to_str().unwrap();
    // A raw scan of every version prints the union of the live store files' cells.
    for (exp, target) in [
        ("ns1_t2", vec!["ns1:t2"]),
        ("snap_t1", vec!["--snapshot", "snap_t1"]),
    ] {
        let mut args = vec!["hbase", "scan", r];
        args.extend(target.iter());
        args.extend(["--raw", "--versions", "1000", "--format", "cells"]);
        let o = hfkit(&args);
        assert!(o.status.success(), "{o:?}");
        let skip = exp
            .contains("t2")
            .then_some("65374ed9eca7cccfe7a1fb7c3de41505");
        let want: Vec<String> = expected_union(&dir, exp, skip)
            .iter()
            .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
            .collect();
        assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), want, "{exp}");
    }
    // Gets: the top daughter of the split holds r15; the snapshot reads the same.
    for target in [vec!["ns1:t2"], vec!["--snapshot", "snap_t2"]] {
        let mut args = vec!["hbase", "get", r];
        args.extend(target.iter());
        args.extend(["r15", "--format", "tsv", "--now", "1700000400000"]);
        let o = hfkit(&args);
        assert!(o.status.success(), "{o:?}");
        assert_eq!(stdout(&o), "r15\tf:c\t1700000000015\tPut\tvalue-15\n");
    }
    let o = ok(&words(&format!("hbase scan {} t3 --start g --stop p --column cf1:q1 --versions 2 --format tsv --now 1700000400000", r)));
    let s = stdout(&o);
    assert!(
        s.lines().all(|l| l.split('\t').nth(1) == Some("cf1:q1")),
        "{s}"
    );
    assert_eq!(s.lines().filter(|l| l.starts_with("k\t")).count(), 2, "{s}");
    let o = hfkit(&["hbase", "get", r, "nosuch", "r1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no table nosuch"));
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

#[test]
fn clone_compact_and_export_preserve_the_cells() {
    let Some(dir) = layout("clone_compact_and_export_preserve_the_cells") else {
        return;
    };
    let now = 1_700_000_400_000;
    let hb = HBaseRoot::open(&dir.join("root1")).unwrap();
    let tmp = tempfile::tempdir().unwrap();

    let snap = hb.snapshot("snap_t1").unwrap();
    let source = snap.reader().unwrap();
    let (raw, user) = (read_all(&source, true, now), read_all(&source, false, now));
    assert_eq!(raw.len(), 150);
    let cloned = tmp.path().join("c1");
    let report = clone_to_table(&snap, &cloned, Some("ns:c1"), now).unwrap();
    assert_eq!((report.regions, report.files_linked), (3, 12));
    let t = Table::open(&cloned).unwrap();
    assert_eq!(t.manifest().unwrap().table, "ns:c1");
    assert!(t.check().unwrap().is_ok());
    assert_eq!(
        read_all(&table_reader(&cloned), true, now),
        raw,
        "clone: raw"
    );
    assert_eq!(read_all(&table_reader(&cloned), false, now), user, "clone");

    t.compact(hfkit::table::compact::CompactOptions {
        major: true,
        now_ms: now,
        ..Default::default()
    })
    .unwrap();
    let m = t.manifest().unwrap();
    assert_eq!(m.files.len(), 6, "one file per store");
    let compacted_raw = read_all(&table_reader(&cloned), true, now);
    assert!(
        compacted_raw.len() < raw.len(),
        "markers and masked cells dropped"
    );
    assert_eq!(
        read_all(&table_reader(&cloned), false, now),
        user,
        "major compaction"
    );

    let exported = tmp.path().join("export");
    t.export_table(None, &exported).unwrap();
    assert_eq!(read_all(&table_reader(&exported), true, now), compacted_raw);
    assert_eq!(
        read_all(&table_reader(&exported), false, now),
        user,
        "export"
    );

    // ... and as an HBase snapshot, read back as HBase-written snapshots are.
    let hroot = tmp.path().join("hbase");
    let opts = hfkit::hbase::export::ExportOptions {
        name: "c1_snap".into(),
        from_snapshot: None,
        table: None,
        creation_time: now,
    };
    let exported_table = Table::open(&exported).unwrap();
    let r = hfkit::hbase::export::export_snapshot(&exported_table, &hroot, &opts).unwrap();
    assert_eq!((r.regions, r.files), (3, 6));
    let back = HBaseRoot::open(&hroot)
        .unwrap()
        .snapshot("c1_snap")
        .unwrap();
    assert!(verify::verify(&back).is_ok());
    let back = back.reader().unwrap();
    assert_eq!(
        read_all(&back, true, now),
        compacted_raw,
        "HBase snapshot: raw"
    );
    assert_eq!(read_all(&back, false, now), user, "HBase snapshot");

    // A table with split references: the halves are rewritten, the parent is not read.
    let t2 = hb.table("ns1:t2").unwrap();
    let cloned2 = tmp.path().join("c2");
    let report = clone_to_table(&t2, &cloned2, None, now).unwrap();
    assert_eq!(
        (report.regions, report.files_linked, report.halves_written),
        (2, 0, 2)
    );
    let source = t2.reader().unwrap();
    assert_eq!(
        read_all(&table_reader(&cloned2), true, now),
        read_all(&source, true, now)
    );
    let m = Table::open(&cloned2).unwrap().manifest().unwrap();
    assert_eq!(
        m.regions
            .iter()
            .map(|r| r.end_key.clone())
            .collect::<Vec<_>>(),
        [b"r10".to_vec(), vec![]]
    );

    // Nothing is created when the clone fails (a file missing from the archive).
    let bad = HBaseRoot::open(&dir.join("corrupt/missing_archived_file"))
        .unwrap()
        .snapshot("snap_t1")
        .unwrap();
    let dest = tmp.path().join("c3");
    let err = clone_to_table(&bad, &dest, None, now)
        .unwrap_err()
        .to_string();
    assert!(err.contains("1c7152a2e13060a3cca94724b74a5911"), "{err}");
    assert!(!dest.exists());
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 4, "no staging left: {left:?}");
}

#[test]
fn cli_clone_hbase() {
    let Some(dir) = layout("cli_clone_hbase") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = dir.join("root1");
    let dest = tmp.path().join("t");
    let o = ok(&words(&format!(
        "table clone-hbase {} {} --snapshot snap_t2",
        root.to_str().unwrap(),
        dest.to_str().unwrap()
    )));
    assert!(stdout(&o).contains("cloned ns1:t2 into"), "{}", stdout(&o));
    let o = hfkit(&words(&format!(
        "get {} r15 --format tsv --now 1700000400000",
        dest.to_str().unwrap()
    )));
    assert_eq!(stdout(&o), "r15\tf:c\t1700000000015\tPut\tvalue-15\n");
    let o = hfkit(&words(&format!(
        "table clone-hbase {} t1 {}",
        root.to_str().unwrap(),
        dest.to_str().unwrap()
    )));
    assert_eq!(o.status.code(), Some(1), "DEST exists");
    assert!(String::from_utf8_lossy(&o.stderr).contains("exists and is not empty"));
    let o = hfkit(&["table", "clone-hbase", "--help"]);
    assert!(stdout(&o).contains("Examples ("));

    let hroot = tmp.path().join("hbase");
    let h = hroot.to_str().unwrap();
    let o = ok(&words(&format!(
        "hbase export-snapshot {} {} --name s1",
        dest.to_str().unwrap(),
        h
    )));
    assert!(
        stdout(&o).contains("of table ns1:t2: 2 region(s), 2 file(s)"),
        "{}",
        stdout(&o)
    );
    let o = hfkit(&["hbase", "verify", h, "--snapshot", "s1"]);
    assert!(o.status.success() && stdout(&o).ends_with("OK\n"), "{o:?}");
    let o = hfkit(&words(&format!(
        "hbase get {} --snapshot s1 r15 --format tsv --now 1700000400000",
        h
    )));
    assert_eq!(stdout(&o), "r15\tf:c\t1700000000015\tPut\tvalue-15\n");
    let o = hfkit(&words(&format!(
        "hbase export-snapshot {} {} --name s1",
        dest.to_str().unwrap(),
        h
    )));
    assert_eq!(o.status.code(), Some(1), "the name is taken");
    let o = hfkit(&["hbase", "export-snapshot", "--help"]);
    assert!(stdout(&o).contains("Examples ("));
}

#[test]
fn snapshot_export_writes_what_hbase_reads() {
    let Some(dir) = layout("snapshot_export_writes_what_hbase_reads") else {
        return;
    };
    let now = 1_700_000_400_000;
    let tmp = tempfile::tempdir().unwrap();
    let src = HBaseRoot::open(&dir.join("root1"))
        .unwrap()
        .table("t1")
        .unwrap();
    let table_dir = tmp.path().join("t1");
    hfkit::hbase::clone::clone_to_table(&src, &table_dir, Some("ns9:tx"), now).unwrap();
    let t = Table::open(&table_dir).unwrap();
    t.snapshot_create("before").unwrap();
    t.compact(hfkit::table::compact::CompactOptions {
        major: true,
        now_ms: now,
        ..Default::default()
    })
    .unwrap();
    let root = tmp.path().join("hbase");
    for (name, from) in [("live", None), ("old", Some("before"))] {
        let opts = ExportOptions {
            name: name.into(),
            from_snapshot: from.map(str::to_string),
            table: None,
            creation_time: now + 7,
        };
        export_snapshot(&t, &root, &opts).unwrap();
        let m = match from {
            Some(s) => t.snapshot(s).unwrap().manifest,
            None => t.manifest().unwrap(),
        };

        // The bytes decode to exactly the fields written.
        let sdir = root.join(".hbase-snapshot").join(name);
        let info = proto::SnapshotDescription::decode(
            std::fs::read(sdir.join(".snapshotinfo"))
                .unwrap()
                .as_slice(),
        )
        .unwrap();
        assert_eq!(
            info,
            proto::SnapshotDescription {
                name: name.into(),
                table: Some("ns9:tx".into()),
                creation_time: Some(now + 7),
                r#type: Some(1),
                version: Some(2),
                owner: None,
                ttl: None,
                max_file_size: None,
            }
        );
        let data = proto::SnapshotDataManifest::decode(
            std::fs::read(sdir.join("data.manifest"))
                .unwrap()
                .as_slice(),
        )
        .unwrap();
        let attrs = |pairs: &[(&str, &str)]| -> Vec<proto::BytesBytesPair> {
            pairs
                .iter()
                .map(|(a, b)| proto::BytesBytesPair {
                    first: a.as_bytes().to_vec(),
                    second: b.as_bytes().to_vec(),
                })
                .collect()
        };
        let schema = &data.table_schema;
        assert_eq!(
            schema.table_name,
            Some(proto::TableName {
                namespace: b"ns9".to_vec(),
                qualifier: b"tx".to_vec()
            })
        );
        assert_eq!(schema.attributes, attrs(&[("IS_META", "false")]));
        assert!(schema.configuration.is_empty());
        let cf2 = &schema.column_families[1];
        assert_eq!(cf2.name, b"cf2");
        assert_eq!(
            cf2.attributes,
            attrs(&[
                ("INDEX_BLOCK_ENCODING", "NONE"),
                ("VERSIONS", "5"),
                ("KEEP_DELETED_CELLS", "TRUE"),
                ("DATA_BLOCK_ENCODING", "FAST_DIFF"),
                ("TTL", "315360000"),
                ("MIN_VERSIONS", "1"),
                ("REPLICATION_SCOPE", "0"),
                ("BLOOMFILTER", "ROWCOL"),
                ("IN_MEMORY", "false"),
                ("COMPRESSION", "GZ"),
                ("BLOCKCACHE", "true"),
                ("BLOCKSIZE", "8192"),
            ])
        );
        assert_eq!(data.region_manifests.len(), m.regions.len());
        for (rm, r) in data.region_manifests.iter().zip(&m.regions) {
            let ri = &rm.region_info;
            assert_eq!(rm.version, None);
            assert_eq!(
                (ri.region_id, ri.start_key.as_deref(), ri.end_key.as_deref()),
                (
                    (now + 7) as u64,
                    Some(&r.start_key[..]),
                    Some(&r.end_key[..])
                )
            );
            assert_eq!(
                (ri.offline, ri.split, ri.replica_id),
                (Some(false), Some(false), Some(0))
            );
            let mut input = b"ns9:tx,".to_vec();
            input.extend_from_slice(&r.start_key);
            input.extend_from_slice(format!(",{}", now + 7).as_bytes());
            let encoded = hex(&Md5::digest(&input));
            let mut files = 0;
            for ff in &rm.family_files {
                let family = String::from_utf8(ff.family_name.clone()).unwrap();
                for sf in &ff.store_files {
                    let e = m
                        .files
                        .iter()
                        .find(|e| {
                            e.region == r.id
                                && e.family == family
                                && sf.name.starts_with(&e.name[..32])
                        })
                        .unwrap();
                    assert_eq!(sf.name, format!("{}_SeqId_{}_", &e.name[..32], e.seq_id));
                    assert_eq!((sf.file_size, &sf.reference), (Some(e.size), &None));
                    let archived = root
                        .join("archive/data/ns9/tx")
                        .join(&encoded)
                        .join(&family)
                        .join(&sf.name);
                    assert_eq!(std::fs::metadata(&archived).unwrap().len(), e.size);
                    files += 1;
                }
            }
            assert_eq!(files, m.files.iter().filter(|e| e.region == r.id).count());
        }

        // Read back through the code that reads HBase-written snapshots: identical cells.
        let back = HBaseRoot::open(&root).unwrap().snapshot(name).unwrap();
        let report = verify::verify(&back);
        assert!(report.is_ok(), "{:?}", report.problems);
        let reader = back.reader().unwrap();
        let hfkit_reader = match from {
            Some(s) => {
                let snap_dir = tmp.path().join(format!("restored-{s}"));
                t.snapshot_clone(s, &snap_dir, None).unwrap();
                table_reader(&snap_dir)
            }
            None => table_reader(&table_dir),
        };
        let with_seq = |r: &hfkit::table::read::TableReader| -> Vec<String> {
            let opts = ReadOptions {
                raw: true,
                max_versions: u32::MAX,
                ..Default::default()
            };
            r.scan(&opts)
                .unwrap()
                .flat_map(|row| row.unwrap().cells)
                .map(|c| hfkit::format::text::cell_line(&c.as_ref(), true))
                .collect()
        };
        assert_eq!(with_seq(&reader), with_seq(&hfkit_reader), "{name}: raw");
        assert_eq!(
            read_all(&reader, false, now),
            read_all(&hfkit_reader, false, now),
            "{name}"
        );
    }
    // The pre-compaction snapshot still holds the markers the compaction dropped.
    let hb = HBaseRoot::open(&root).unwrap();
    let live = hb.snapshot("live").unwrap().reader().unwrap();
    let old = hb.snapshot("old").unwrap().reader().unwrap();
    assert!(read_all(&old, true, now).len() > read_all(&live, true, now).len());

    // A name in use or not valid: refused, nothing written.
    let before = walk(&root);
    let opts = ExportOptions {
        name: "live".into(),
        from_snapshot: None,
        table: Some("other".into()),
        creation_time: now,
    };
    let err = export_snapshot(&t, &root, &opts).unwrap_err().to_string();
    assert!(err.contains("already exists"), "{err}");
    let opts = ExportOptions {
        name: ".bad".into(),
        ..opts
    };
    assert!(export_snapshot(&t, &root, &opts).is_err());
    assert_eq!(walk(&root), before);
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

#[test]
fn offline_compaction_in_place_archives_the_inputs_and_keeps_the_cells() {
    let Some((dir, tmp, root)) =
        root_copy("offline_compaction_in_place_archives_the_inputs_and_keeps_the_cells")
    else {
        return;
    };
    let now = 1_700_000_400_000;
    let opts = CompactOptions {
        now_ms: now,
        ..Default::default()
    };
    let refused = |m: &Manifest| compact_in_place(m, &opts).unwrap_err().to_string();
    let hb = HBaseRoot::open(&root).unwrap();
    let t1 = hb.table("t1").unwrap();
    let before = t1.reader().unwrap();
    let (raw_before, user_before) = (raw_scan(&t1), read_all(&before, false, now));
    let t3_before = raw_scan(&hb.table("t3").unwrap());

    // What hfkit's own major compaction leaves, from a clone of the same table.
    let cloned = tmp.path().join("clone");
    hfkit::hbase::clone::clone_to_table(&t1, &cloned, None, now).unwrap();
    Table::open(&cloned)
        .unwrap()
        .compact(hfkit::table::compact::CompactOptions {
            major: true,
            now_ms: now,
            ..Default::default()
        })
        .unwrap();
    let want_raw = read_all(&table_reader(&cloned), true, now);

    // Refused while the layout says HBase may be using the table; nothing changes.
    let snapshot_of_root = walk(&root);
    let wal = root.join("WALs/rs1.example.com,16020,1700000000000");
    std::fs::create_dir_all(&wal).unwrap();
    std::fs::write(
        wal.join("rs1.example.com%2C16020%2C1700000000000.1700000000001"),
        b"x",
    )
    .unwrap();
    let err = refused(&t1);
    assert!(
        err.contains("WALs/rs1.example.com") && err.contains("write-ahead log"),
        "{err}"
    );
    std::fs::remove_dir_all(root.join("WALs")).unwrap();
    let edits = root.join("data/default/t1/669d6d57c514f503ce48c2c8f5fb2b7b/recovered.edits");
    std::fs::create_dir_all(&edits).unwrap();
    std::fs::write(edits.join("0000000000000000400"), b"x").unwrap();
    let err = refused(&t1);
    assert!(err.contains("recovered.edits/0000000000000000400"), "{err}");
    std::fs::remove_dir_all(&edits).unwrap();
    assert_eq!(walk(&root), snapshot_of_root, "refusals change nothing");

    // A split's daughters: each compacts its reference away (the half it reads of the
    // parent's file), the reference archived, the parent's file kept; reads are unchanged.
    let t2 = hb.table("ns1:t2").unwrap();
    let (t2_raw, t2_user) = (raw_scan(&t2), read_all(&t2.reader().unwrap(), false, now));
    let report = compact_in_place(&t2, &opts).unwrap();
    assert_eq!(report.stores.len(), 2, "the two daughters' stores");
    let t2_after = hb.table("ns1:t2").unwrap();
    assert!(t2_after
        .regions
        .iter()
        .filter(|r| r.live)
        .flat_map(|r| &r.families)
        .flat_map(|f| &f.files)
        .all(|f| f.reference.is_none()));
    assert_eq!(read_all(&t2_after.reader().unwrap(), false, now), t2_user);
    let t2_raw_after = raw_scan(&t2_after);
    assert!(
        t2_raw_after.iter().all(|l| t2_raw.contains(l)),
        "cells keep their sequence ids"
    );
    let reference = "cfca939b85130c57fc914135e3f5cb6f.65374ed9eca7cccfe7a1fb7c3de41505";
    for daughter in [
        "d5c0c080cbe170cd031cf1f7b4ffbf52",
        "8f23ef59531b58c9b20e08f067da3696",
    ] {
        let archived = root
            .join("archive/data/ns1/t2")
            .join(daughter)
            .join("f")
            .join(reference);
        assert!(archived.is_file(), "{}", archived.display());
    }
    assert!(root
        .join("data/ns1/t2/65374ed9eca7cccfe7a1fb7c3de41505/f/cfca939b85130c57fc914135e3f5cb6f")
        .is_file());
    let v = verify::verify(&hb.snapshot("snap_t2").unwrap());
    assert!(
        v.is_ok(),
        "the snapshot of the split still reads: {:?}",
        v.problems
    );

    // Compact.
    let report = compact_in_place(&t1, &opts).unwrap();
    assert_eq!(report.stores.len(), 6);
    let after = hb.table("t1").unwrap();
    let raw_after = raw_scan(&after);
    let strip = |l: &String| l.rsplit_once(' ').unwrap().0.to_string();
    assert_eq!(
        raw_after.iter().map(strip).collect::<Vec<_>>(),
        want_raw,
        "as a major compaction leaves them"
    );
    assert!(
        raw_after.iter().all(|l| raw_before.contains(l)),
        "cells keep their sequence ids"
    );
    assert!(raw_after.len() < raw_before.len());
    assert_eq!(
        read_all(&after.reader().unwrap(), false, now),
        user_before,
        "reads unchanged"
    );

    // One new file per store; the inputs, byte for byte, in the archive.
    for s in &report.stores {
        let store = root.join("data/default/t1").join(&s.region).join(&s.family);
        let names: Vec<String> = std::fs::read_dir(&store)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [s.output.clone().unwrap()]);
        let r = HFileReader::open(store.join(&names[0])).unwrap();
        let fi = r.file_info();
        assert_eq!(fi.get_bool(keys::MAJOR_COMPACTION_KEY), Some(true));
        let event =
            CompactionEventTracker::decode(&fi.get(keys::COMPACTION_EVENT_KEY).unwrap()[4..])
                .unwrap();
        let mut compacted: Vec<String> = event
            .compacted_store_file
            .iter()
            .map(|n| String::from_utf8(n.clone()).unwrap())
            .collect();
        compacted.sort();
        let mut inputs = s.inputs.clone();
        inputs.sort();
        assert_eq!(compacted, inputs);
        for name in &s.inputs {
            let archived = root
                .join("archive/data/default/t1")
                .join(&s.region)
                .join(&s.family)
                .join(name);
            let original = dir
                .join("root1/data/default/t1")
                .join(&s.region)
                .join(&s.family)
                .join(name);
            assert_eq!(
                std::fs::read(&archived).unwrap(),
                std::fs::read(&original).unwrap()
            );
        }
        assert!(!root
            .join("data/default/t1")
            .join(&s.region)
            .join(".tmp")
            .exists());
    }

    // The snapshot and the clone t3 (links into t1) still read, now from the archive.
    let snap = hb.snapshot("snap_t1").unwrap();
    let v = verify::verify(&snap);
    assert!(v.is_ok(), "{:?}", v.problems);
    let (_, expected) = expected_verify(&dir, "snap_t1", &snap);
    assert_eq!(
        format!("total_cells={} sha256={}", v.total_cells, v.total_sha256),
        expected
    );
    assert_eq!(raw_scan(&hb.table("t3").unwrap()), t3_before);

    // Done: a second run finds every store major-compacted.
    let again = compact_in_place(&hb.table("t1").unwrap(), &opts).unwrap();
    assert!(again.stores.is_empty());

    // The CLI.
    let o = ok(&words(&format!(
        "hbase compact {} t3 --now 1700000400000",
        root.to_str().unwrap()
    )));
    assert!(
        stdout(&o).ends_with("6 store(s) compacted\n"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        raw_scan(&hb.table("t3").unwrap())
            .iter()
            .map(strip)
            .collect::<Vec<_>>(),
        want_raw
    );
    let o = hfkit(&["hbase", "compact", "--help"]);
    assert!(stdout(&o).contains("Examples ("));
}

#[test]
fn ls_reads_hbase_meta_and_names_unreadable_tables() {
    use hfkit::hbase::{RegionInfo, TableDescriptor};
    use hfkit::table::manifest::FamilyEntry;
    use hfkit::table::TableName;
    let Some((_, _tmp, root)) = root_copy("ls_reads_hbase_meta_and_names_unreadable_tables") else {
        return;
    };
    // hbase:meta's region directory is named by HBase's old (Jenkins hash) encoding.
    let meta = TableName::parse("hbase:meta").unwrap();
    let dir = root.join("data/hbase/meta");
    let td = TableDescriptor::from_families(meta.clone(), &[FamilyEntry::new("info")]);
    let bytes = td.to_file_bytes();
    std::fs::create_dir_all(dir.join(TABLEINFO_DIR)).unwrap();
    std::fs::write(
        dir.join(TABLEINFO_DIR).join(tableinfo_file_name(1, &bytes)),
        &bytes,
    )
    .unwrap();
    let info = RegionInfo {
        table: meta,
        start_key: vec![],
        end_key: vec![],
        region_id: 1,
        offline: false,
        split: false,
        replica_id: 0,
    };
    std::fs::create_dir_all(dir.join("1588230740/info")).unwrap();
    std::fs::write(dir.join("1588230740/.regioninfo"), info.to_file_bytes()).unwrap();
    let s = stdout(&ok(&["hbase", "ls", root.to_str().unwrap()]));
    assert!(
        s.contains("TABLE     hbase:meta  1 region(s)  families info"),
        "{s}"
    );

    // A region directory whose .regioninfo describes another region.
    let t3 = root.join("data/default/t3");
    std::fs::copy(
        t3.join("1462c4a9a00da50d18c920d052ee4d84/.regioninfo"),
        t3.join("8726e8cb721eb51c501fd56e361070f8/.regioninfo"),
    )
    .unwrap();
    let o = hfkit(&["hbase", "ls", root.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let s = stdout(&o);
    assert!(s.contains("TABLE     default:t3  ERROR ") && s.contains("8726e8cb721eb51c501fd56e361070f8/.regioninfo: describes region t3,g,1700000000000.1462c4a9a00da50d18c920d052ee4d84."), "{s}");
    assert!(
        s.contains("TABLE     default:t1  3 region(s)"),
        "the others are listed: {s}"
    );
}

#[test]
fn reference_split_keys_must_match_the_daughter_bounds() {
    use hfkit::format::reader::HalfRange;
    use hfkit::hbase::Reference;
    let Some((_, _tmp, root)) = root_copy("reference_split_keys_must_match_the_daughter_bounds")
    else {
        return;
    };
    let hb = HBaseRoot::open(&root).unwrap();
    let t2 = root.join("data/ns1/t2");
    let name = "cfca939b85130c57fc914135e3f5cb6f.65374ed9eca7cccfe7a1fb7c3de41505";
    // (daughter, its half, a split row that is not its bound, the bound, which bound).
    let cases = [
        (
            "8f23ef59531b58c9b20e08f067da3696",
            HalfRange::Top,
            "r05",
            "r10",
            "region's start",
        ),
        (
            "d5c0c080cbe170cd031cf1f7b4ffbf52",
            HalfRange::Bottom,
            "r15",
            "r10",
            "region's end",
        ),
    ];
    for (daughter, range, row, bound, which) in cases {
        let file = t2.join(daughter).join("f").join(name);
        let good = std::fs::read(&file).unwrap();
        std::fs::write(
            &file,
            Reference::at_row(row.as_bytes(), range).to_file_bytes(),
        )
        .unwrap();
        let m = hb.table("ns1:t2").unwrap();
        let Err(err) = m.reader() else {
            panic!("{daughter}: a reference split at {row} was read");
        };
        let err = err.to_string();
        let half = if range == HalfRange::Top {
            "top"
        } else {
            "bottom"
        };
        assert!(
            err.contains(&file.display().to_string())
                && err.contains(&format!(
                    "{half} reference split at '{row}', but the {which} key is '{bound}'"
                )),
            "{err}"
        );
        let report = verify::verify(&m);
        assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
        assert!(report.problems[0].contains(name), "{:?}", report.problems);
        std::fs::write(&file, good).unwrap();
    }
    assert!(verify::verify(&hb.table("ns1:t2").unwrap()).is_ok());
}

/// HBase's FILE tracker records `StoreFileInfo.getSize()`, which is 0 for references and links
/// (only an HFile's own status gives it a length): `hbase verify` must not take that 0 for the
/// size of the file they resolve to, and still compares every other recorded size.
#[test]
fn verify_takes_the_file_trackers_zero_sizes_of_references_and_links_as_unknown() {
    let Some((_, _tmp, root)) =
        root_copy("verify_takes_the_file_trackers_zero_sizes_of_references_and_links_as_unknown")
    else {
        return;
    };
    let hb = HBaseRoot::open(&root).unwrap();
    // Each store's list as HBase writes it: HFiles with their length, the rest with 0.
    let track = |table: &str| {
        let m = hb.table(table).unwrap();
        let Source::Table { dir } = &m.source else {
            panic!()
        };
        use_file_tracker(&root, table);
        for r in &m.regions {
            for ff in &r.families {
                let store = dir
                    .join(r.info.encoded_name())
                    .join(String::from_utf8_lossy(&ff.family).as_ref());
                let entries: Vec<_> = ff
                    .files
                    .iter()
                    .map(|f| {
                        let plain = hfkit::hbase::names::is_hfile_name(&f.name);
                        let size = if plain {
                            std::fs::metadata(store.join(&f.name)).unwrap().len()
                        } else {
                            0
                        };
                        (f.name.as_str(), f.reference.clone(), size)
                    })
                    .collect();
                write_filelist_sized(&store, "f1.1", 1, &entries);
            }
        }
        dir.clone()
    };
    // ns1:t2: split daughters (references) and their parent (an HFile); t3: a clone (links).
    let t2 = track("ns1:t2");
    track("t3");
    for table in ["ns1:t2", "t3"] {
        let m = hb.table(table).unwrap();
        let listed: usize = m
            .regions
            .iter()
            .flat_map(|r| &r.families)
            .map(|ff| ff.files.len())
            .sum();
        assert!(listed > 0, "{table}: the lists are read");
        let report = verify::verify(&m);
        assert!(report.is_ok(), "{table}: {:?}", report.problems);
    }

    // A plain HFile's size is still compared: the parent's entry says 1 byte.
    let parent = t2.join("65374ed9eca7cccfe7a1fb7c3de41505/f");
    write_filelist_sized(
        &parent,
        "f1.2",
        2,
        &[("cfca939b85130c57fc914135e3f5cb6f", None, 1)],
    );
    let report = verify::verify(&hb.table("ns1:t2").unwrap());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(
        report.problems[0].contains("the manifest says 1 for cfca939b85130c57fc914135e3f5cb6f"),
        "{:?}",
        report.problems
    );
}

/// (family, cells, sha256) of the stores of `m`'s live regions, in the report's order.
fn live_store_digests(m: &Manifest, report: &verify::VerifyReport) -> Vec<(String, u64, String)> {
    report
        .stores
        .iter()
        .filter(|s| {
            m.regions
                .iter()
                .any(|r| r.live && r.info.encoded_name() == s.region)
        })
        .map(|s| (s.family.clone(), s.cells, s.sha256.clone()))
        .collect()
}

/// Rewrites the HFile at `path` with hfkit's writer (other bytes than HBase's), its cells as
/// read, the value of the cell at `change` (if any) with its first byte flipped.
fn rewrite_hfile(path: &Path, change: Option<usize>) {
    use hfkit::format::writer::{HFileWriter, WriterOptions};
    let r = HFileReader::open(path).unwrap();
    let mut s = r.scanner().unwrap();
    let mut cells = Vec::new();
    while let Some(c) = s.next().unwrap() {
        cells.push(c.to_owned());
    }
    if let Some(i) = change {
        cells[i].value[0] ^= 1;
    }
    let opts = WriterOptions {
        include_tags: true,
        include_mvcc: true,
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::new(Vec::new(), opts).unwrap();
    for c in &cells {
        w.append(&c.as_ref()).unwrap();
    }
    let (bytes, _) = w.finish().unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// `hbase verify`'s digests depend on the cells only: a snapshot, its clone into an hfkit table
/// exported back as an HBase snapshot into another root (other file names, regions, sequence
/// ids, reference halves rewritten, the split parent gone), and the table it was taken of give
/// one digest; one changed value gives another, a file rewritten with the same cells the same.
#[test]
fn verify_digests_are_a_function_of_the_cells() {
    let Some((_, tmp, root)) = root_copy("verify_digests_are_a_function_of_the_cells") else {
        return;
    };
    let now = 1_700_000_400_000;
    let hb = HBaseRoot::open(&root).unwrap();
    let other = tmp.path().join("other");
    for name in ["snap_t1", "snap_t2"] {
        let m = hb.snapshot(name).unwrap();
        let src = verify::verify(&m);
        assert!(src.is_ok(), "{name}: {:?}", src.problems);
        let table = tmp.path().join(format!("{name}-clone"));
        clone_to_table(&m, &table, None, now).unwrap();
        let opts = ExportOptions {
            name: format!("{name}_copy"),
            from_snapshot: None,
            table: None,
            creation_time: now,
        };
        export_snapshot(&Table::open(&table).unwrap(), &other, &opts).unwrap();
        let copy_m = HBaseRoot::open(&other)
            .unwrap()
            .snapshot(&opts.name)
            .unwrap();
        let copy = verify::verify(&copy_m);
        assert!(copy.is_ok(), "{name}: {:?}", copy.problems);
        assert_eq!(
            (copy.total_cells, &copy.total_sha256),
            (src.total_cells, &src.total_sha256),
            "{name} and its copy"
        );
        assert_eq!(
            live_store_digests(&copy_m, &copy),
            live_store_digests(&m, &src),
            "{name}: per store"
        );
    }
    let t2 = verify::verify(&hb.table("ns1:t2").unwrap());
    let snap_t2 = verify::verify(&hb.snapshot("snap_t2").unwrap());
    assert_eq!(t2.total_sha256, snap_t2.total_sha256, "ns1:t2 and snap_t2");

    // The parent HFile both daughters read: the same cells in other bytes, then one changed.
    let parent = root
        .join("data/ns1/t2/65374ed9eca7cccfe7a1fb7c3de41505/f/cfca939b85130c57fc914135e3f5cb6f");
    let original = std::fs::read(&parent).unwrap();
    rewrite_hfile(&parent, None);
    assert_ne!(std::fs::read(&parent).unwrap(), original);
    let same = verify::verify(&hb.table("ns1:t2").unwrap());
    assert!(same.is_ok(), "{:?}", same.problems);
    assert_eq!(
        same.total_sha256, t2.total_sha256,
        "same cells, other bytes"
    );
    std::fs::write(&parent, &original).unwrap();
    rewrite_hfile(&parent, Some(3));
    let changed = verify::verify(&hb.table("ns1:t2").unwrap());
    assert!(changed.is_ok(), "{:?}", changed.problems);
    assert_eq!(changed.total_cells, t2.total_cells);
    assert_ne!(changed.total_sha256, t2.total_sha256, "one value changed");
}

/// What a killed `hbase compact` leaves: its half-written output under a region's
/// `.tmp/<family>/` (named `hfkit-compact-<32 hex>`, unlike HBase's 32-hex names) is removed by
/// the next compact, which proceeds; a file HBase left there still makes it refuse, naming it.
/// Killed between moving an output in and archiving the inputs, the store reads as compacted
/// (the output's compaction event names the inputs, as HBase's store opening honours) and the
/// next compact archives them.
#[test]
fn offline_compaction_removes_its_own_leftovers_and_finishes_a_killed_commit() {
    let Some((dir, _tmp, root)) =
        root_copy("offline_compaction_removes_its_own_leftovers_and_finishes_a_killed_commit")
    else {
        return;
    };
    let now = 1_700_000_400_000;
    let opts = CompactOptions {
        now_ms: now,
        ..Default::default()
    };
    let hb = HBaseRoot::open(&root).unwrap();
    let region = root.join("data/default/t1/43ae7364b4a555b93267937f9bc49ec1");
    let leftover = region
        .join(".tmp/cf1")
        .join("hfkit-compact-0000018a3f2b9c1d000012340000000a");
    std::fs::create_dir_all(leftover.parent().unwrap()).unwrap();
    std::fs::write(&leftover, b"half an HFile").unwrap();
    let report = compact_in_place(&hb.table("t1").unwrap(), &opts).unwrap();
    assert_eq!(report.stores.len(), 6);
    assert!(!region.join(".tmp").exists(), "the leftover is removed");
    let after = raw_scan(&hb.table("t1").unwrap());

    // HBase's own file under .tmp (a flush or compaction in progress): refused, named, kept,
    // and hfkit's leftover beside it is kept too (a refusal changes nothing).
    let hbase_file = region.join(".tmp/cf2/0123456789abcdef0123456789abcdef");
    std::fs::create_dir_all(hbase_file.parent().unwrap()).unwrap();
    std::fs::write(&hbase_file, b"x").unwrap();
    std::fs::create_dir_all(leftover.parent().unwrap()).unwrap();
    std::fs::write(&leftover, b"half an HFile").unwrap();
    let err = compact_in_place(&hb.table("t1").unwrap(), &opts)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&hbase_file.display().to_string()) && err.contains("refusing"),
        "{err}"
    );
    assert!(hbase_file.is_file() && leftover.is_file());
    std::fs::remove_dir_all(region.join(".tmp")).unwrap();

    // Killed after the output of 43ae.../cf1 moved in, before its inputs were archived: put
    // two inputs back.
    let s = &report.stores[0];
    assert_eq!(
        (s.region.as_str(), s.family.as_str()),
        ("43ae7364b4a555b93267937f9bc49ec1", "cf1")
    );
    let archive = root.join("archive/data/default/t1/43ae7364b4a555b93267937f9bc49ec1/cf1");
    for name in &s.inputs[..2] {
        std::fs::rename(archive.join(name), region.join("cf1").join(name)).unwrap();
    }
    assert_eq!(
        raw_scan(&hb.table("t1").unwrap()),
        after,
        "reads as compacted"
    );
    let again = compact_in_place(&hb.table("t1").unwrap(), &opts).unwrap();
    assert!(again.stores.is_empty(), "{:?}", again.stores);
    let names: Vec<String> = std::fs::read_dir(region.join("cf1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [s.output.clone().unwrap()], "inputs archived again");
    for name in &s.inputs {
        let original = dir
            .join("root1/data/default/t1/43ae7364b4a555b93267937f9bc49ec1/cf1")
            .join(name);
        if original.is_file() {
            assert_eq!(
                std::fs::read(archive.join(name)).unwrap(),
                std::fs::read(&original).unwrap()
            );
        }
    }
    assert_eq!(raw_scan(&hb.table("t1").unwrap()), after);
}

/// Runs `hfkit hbase export-snapshot TABLE ROOT --name NAME` until it pauses at `pause` (the
/// test hook `HFKIT_TEST_EXPORT_PAUSE`), then SIGKILLs it.
fn kill_export_at(table: &Path, root: &Path, name: &str, pause: &str) {
    let (table, root) = (table.to_str().unwrap(), root.to_str().unwrap());
    common::kill_export_when_paused(
        &["hbase", "export-snapshot", table, root, "--name", name],
        pause,
    );
}

/// The files under `root/archive/` no snapshot of `root` names (back-reference directories
/// aside).
fn unnamed_archive_files(root: &Path) -> Vec<PathBuf> {
    let hb = HBaseRoot::open(root).unwrap();
    let mut named = std::collections::BTreeSet::new();
    for s in hb.snapshots().unwrap() {
        let m = hb.snapshot(&s.name).unwrap();
        for r in &m.regions {
            for ff in &r.families {
                let family = String::from_utf8_lossy(&ff.family).into_owned();
                for f in &ff.files {
                    named.insert(m.resolve(r, &family, f).unwrap().path);
                }
            }
        }
    }
    walk(&root.join("archive"))
        .into_iter()
        .filter(|p| p.is_file() && !named.contains(p))
        .collect()
}

/// A SIGKILLed `hbase export-snapshot` (while copying, or moving the copies into the archive)
/// leaves no snapshot; the rerun leaves no file in `archive/` that no snapshot names
/// and nothing under `.hbase-snapshot/.tmp/`, and its snapshot verifies.
#[test]
fn killed_snapshot_export_leaves_nothing_unnamed_after_a_rerun() {
    let Some(dir) = layout("killed_snapshot_export_leaves_nothing_unnamed_after_a_rerun") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let snap = HBaseRoot::open(&dir.join("root1"))
        .unwrap()
        .snapshot("snap_t1")
        .unwrap();
    let table = tmp.path().join("t");
    clone_to_table(&snap, &table, None, 1_700_000_400_000).unwrap();
    let root = tmp.path().join("hbase");
    // Killed while copying, after every copy (before the list of moves), while moving, and
    // after every move (before the rename).
    let points = [
        ("s1", "copied:5"),
        ("s2", "copied:12"),
        ("s3", "moved:5"),
        ("s4", "moved:12"),
    ];
    for (name, pause) in points {
        kill_export_at(&table, &root, name, pause);
        assert!(
            !root.join(".hbase-snapshot").join(name).exists(),
            "{pause}: the snapshot is not visible"
        );
        ok(&[
            "hbase",
            "export-snapshot",
            table.to_str().unwrap(),
            root.to_str().unwrap(),
            "--name",
            name,
        ]);
        assert_eq!(
            unnamed_archive_files(&root),
            Vec::<PathBuf>::new(),
            "{pause}"
        );
        let staging: Vec<_> = std::fs::read_dir(root.join(".hbase-snapshot/.tmp"))
            .into_iter()
            .flatten()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(staging.is_empty(), "{pause}: {staging:?}");
        let report = verify::verify(&HBaseRoot::open(&root).unwrap().snapshot(name).unwrap());
        assert!(report.is_ok(), "{pause}: {:?}", report.problems);
        assert_eq!(report.total_sha256, verify::verify(&snap).total_sha256);
    }
}

/// `hbase copy-snapshot` (HBase's ExportSnapshot between roots): each of root1's snapshots is
/// copied with the files its links and references reach, at their archive paths, and reads
/// with the source's digests and cells (a clone of the copy scans as a clone of the source);
/// a name the target has is refused; files already archived are not copied again; a copy
/// SIGKILLed while moving its files in leaves no snapshot, and the next copy leaves no file
/// that no snapshot names; a bandwidth cap holds the copy back.
#[test]
fn snapshots_copy_between_roots_as_export_snapshot_does() {
    let Some(dir) = layout("snapshots_copy_between_roots_as_export_snapshot_does") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let src = dir.join("root1");
    let dest = tmp.path().join("copy");
    let (src_s, dest_s) = (src.to_str().unwrap(), dest.to_str().unwrap());
    for snap in ["snap_t1", "snap_t2"] {
        let o = ok(&[
            "hbase",
            "copy-snapshot",
            src_s,
            dest_s,
            "--snapshot",
            snap,
            "--threads",
            "2",
        ]);
        assert!(stdout(&o).contains(&format!("{dest_s}/.hbase-snapshot/{snap}")));
        let verified = |root: &str| stdout(&ok(&["hbase", "verify", root, "--snapshot", snap]));
        assert_eq!(
            verified(dest_s),
            verified(src_s).replace(src_s, dest_s),
            "{snap}"
        );
        let clones: Vec<String> = [src_s, dest_s]
            .iter()
            .enumerate()
            .map(|(i, root)| {
                let t = tmp.path().join(format!("clone-{snap}-{i}"));
                let t = t.to_str().unwrap();
                ok(&["table", "clone-hbase", root, "--snapshot", snap, t]);
                stdout(&ok(&["scan", t]))
            })
            .collect();
        assert_eq!(clones[0], clones[1], "{snap}");
    }
    // Only what the snapshots name: the copy's archive holds their files, nothing else.
    assert_eq!(unnamed_archive_files(&dest), Vec::<PathBuf>::new());
    let again = hfkit(&[
        "hbase",
        "copy-snapshot",
        src_s,
        dest_s,
        "--snapshot",
        "snap_t1",
    ]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    // The snapshot deleted (its files stay archived): copied again, nothing copied.
    std::fs::remove_dir_all(dest.join(".hbase-snapshot/snap_t1")).unwrap();
    let o = ok(&[
        "hbase",
        "copy-snapshot",
        src_s,
        dest_s,
        "--snapshot",
        "snap_t1",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["files_present"], report["files"], "{report}");
    assert_eq!(report["bytes"], 0);

    // Killed while moving its copies into the archive: no snapshot; the next copy cleans up.
    let killed = tmp.path().join("killed");
    let killed_s = killed.to_str().unwrap();
    let copy = [
        "hbase",
        "copy-snapshot",
        src_s,
        killed_s,
        "--snapshot",
        "snap_t1",
    ];
    common::kill_export_when_paused(&copy, "moved:5");
    assert!(!killed.join(".hbase-snapshot/snap_t1").exists());
    ok(&[
        "hbase",
        "copy-snapshot",
        src_s,
        killed_s,
        "--snapshot",
        "snap_t2",
    ]);
    assert_eq!(unnamed_archive_files(&killed), Vec::<PathBuf>::new());
    ok(&copy);
    assert_eq!(unnamed_archive_files(&killed), Vec::<PathBuf>::new());
    let staging: Vec<_> = std::fs::read_dir(killed.join(".hbase-snapshot/.tmp"))
        .unwrap()
        .collect();
    assert!(staging.is_empty(), "{staging:?}");

    // 61,720 bytes at 0.01 MB/s: more than 6 s, and off a terminal a progress line after 5.
    let slow = tmp.path().join("slow");
    let started = std::time::Instant::now();
    let o = ok(&[
        "hbase",
        "copy-snapshot",
        src_s,
        slow.to_str().unwrap(),
        "--snapshot",
        "snap_t1",
        "--bandwidth",
        "0.01",
    ]);
    assert!(started.elapsed() >= std::time::Duration::from_secs(6));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("hfkit: hbase copy-snapshot: ") && l.contains("MB (")),
        "{err}"
    );
}

/// `hbase compact` of FILE-tracker stores (issue 41 item 3): each store's `.filelist` is
/// replaced by a new track file naming the output instead of the inputs (the older track files
/// deleted), the inputs archived (a reference the list alone holds has no file), reads
/// unchanged; an input a killed run committed away but left in the directory is archived by
/// the next run.
#[test]
fn offline_compaction_of_file_tracker_stores_replaces_their_lists() {
    let Some((_dir, _tmp, root)) =
        root_copy("offline_compaction_of_file_tracker_stores_replaces_their_lists")
    else {
        return;
    };
    let hb = HBaseRoot::open(&root).unwrap();
    // t1 and ns1:t2 on the FILE tracker, each store listing its files (t2's references in the
    // list only, their files removed, as the FILE tracker keeps them).
    for table in ["t1", "ns1:t2"] {
        common::use_file_tracker_listing(&root, table);
    }
    let now = 1_700_000_400_000;
    let opts = CompactOptions {
        now_ms: now,
        ..Default::default()
    };
    for (table, dir, stores) in [("t1", "data/default/t1", 6), ("ns1:t2", "data/ns1/t2", 2)] {
        let m = hb.table(table).unwrap();
        let user = read_all(&m.reader().unwrap(), false, now);
        let report = compact_in_place(&m, &opts).unwrap();
        assert_eq!(report.stores.len(), stores, "{table}");
        let after = hb.table(table).unwrap();
        assert_eq!(
            read_all(&after.reader().unwrap(), false, now),
            user,
            "{table}"
        );
        for s in &report.stores {
            let store = root.join(dir).join(&s.region).join(&s.family);
            let r = after
                .regions
                .iter()
                .find(|r| r.info.encoded_name() == s.region)
                .unwrap();
            let listed: Vec<&str> = r
                .families
                .iter()
                .filter(|f| f.family == s.family.as_bytes())
                .flat_map(|f| &f.files)
                .map(|f| f.name.as_str())
                .collect();
            assert_eq!(
                listed,
                [s.output.as_deref().unwrap()],
                "{table} {}",
                s.region
            );
            let tracks: Vec<String> = std::fs::read_dir(store.join(FILELIST_DIR))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(tracks.len(), 1, "{tracks:?}");
            assert!(
                tracks[0].starts_with("f1.") && tracks[0] != "f1.1",
                "{tracks:?}"
            );
            for input in &s.inputs {
                assert!(!store.join(input).exists(), "{input} left in the store");
            }
        }
        assert!(compact_in_place(&hb.table(table).unwrap(), &opts)
            .unwrap()
            .stores
            .is_empty());
        let o = ok(&["hbase", "verify", root.to_str().unwrap(), table]);
        assert!(stdout(&o).contains("OK"), "{}", stdout(&o));
    }
    // A killed run's input, committed away but not archived: archived by the next run.
    let t1 = hb.table("t1").unwrap();
    let r = &t1.regions[0];
    let store = root
        .join("data/default/t1")
        .join(r.info.encoded_name())
        .join("cf1");
    let out = HFileReader::open(store.join(&r.families[0].files[0].name)).unwrap();
    let event = CompactionEventTracker::decode(
        &out.file_info().get(keys::COMPACTION_EVENT_KEY).unwrap()[4..],
    )
    .unwrap();
    let input = String::from_utf8(event.compacted_store_file[0].clone()).unwrap();
    let archived = root
        .join("archive/data/default/t1")
        .join(r.info.encoded_name())
        .join("cf1")
        .join(&input);
    std::fs::copy(&archived, store.join(&input)).unwrap();
    let report = compact_in_place(&hb.table("t1").unwrap(), &opts).unwrap();
    assert!(report.stores.is_empty());
    assert_eq!(
        report.compacted_archived,
        [format!("{}/cf1/{input}", r.info.encoded_name())]
    );
    assert!(!store.join(&input).exists());
}

/// `hbase compact` of a merged region (issue 41 item 3): t1's first two regions merged as
/// HBase's `HRegionFileSystem.mergeStoreFile` leaves them (a newer region `[, p)` whose
/// stores hold a top reference, at each parent's start key, to every file of both parents);
/// the parents are then covered, not read. The compaction reads the references as their
/// halves, writes one file per store, archives the references and leaves the parents' files;
/// reads are unchanged and the snapshot of the parents still verifies.
#[test]
fn offline_compaction_of_a_merged_region_compacts_its_references_away() {
    use hfkit::format::reader::HalfRange;
    use hfkit::hbase::{Reference, RegionInfo};
    let Some((_dir, _tmp, root)) =
        root_copy("offline_compaction_of_a_merged_region_compacts_its_references_away")
    else {
        return;
    };
    let hb = HBaseRoot::open(&root).unwrap();
    let now = 1_700_000_400_000;
    let t1 = hb.table("t1").unwrap();
    let user = read_all(&t1.reader().unwrap(), false, now);
    let parents: Vec<&hfkit::hbase::RegionManifest> = t1
        .live_regions()
        .into_iter()
        .filter(|r| r.info.end_key.as_slice() <= &b"p"[..] && !r.info.end_key.is_empty())
        .collect();
    assert_eq!(parents.len(), 2);
    let merged = RegionInfo {
        start_key: Vec::new(),
        end_key: b"p".to_vec(),
        region_id: parents[0].info.region_id + 1,
        ..parents[0].info.clone()
    };
    let table_dir = root.join("data/default/t1");
    let merged_dir = table_dir.join(merged.encoded_name());
    std::fs::create_dir_all(&merged_dir).unwrap();
    std::fs::write(merged_dir.join(".regioninfo"), merged.to_file_bytes()).unwrap();
    let mut references = Vec::new();
    for parent in &parents {
        let enc = parent.info.encoded_name();
        for ff in &parent.families {
            let family = String::from_utf8_lossy(&ff.family).into_owned();
            std::fs::create_dir_all(merged_dir.join(&family)).unwrap();
            for f in &ff.files {
                let name = format!("{}.{enc}", f.name);
                let r = Reference::at_row(&parent.info.start_key, HalfRange::Top);
                std::fs::write(merged_dir.join(&family).join(&name), r.to_file_bytes()).unwrap();
                references.push((family.clone(), name));
            }
        }
    }
    let m = hb.table("t1").unwrap();
    let live: Vec<String> = m
        .live_regions()
        .iter()
        .map(|r| r.info.encoded_name())
        .collect();
    assert!(
        live.contains(&merged.encoded_name()) && live.len() == 2,
        "{live:?}"
    );
    assert_eq!(
        read_all(&m.reader().unwrap(), false, now),
        user,
        "the merge reads as before"
    );
    let parent_files: Vec<PathBuf> = parents
        .iter()
        .flat_map(|p| walk(&table_dir.join(p.info.encoded_name())))
        .filter(|p| p.is_file())
        .collect();

    let opts = CompactOptions {
        now_ms: now,
        ..Default::default()
    };
    let report = compact_in_place(&m, &opts).unwrap();
    let merged_stores = report
        .stores
        .iter()
        .filter(|s| s.region == merged.encoded_name())
        .count();
    assert_eq!(merged_stores, 2, "cf1 and cf2 of the merged region");
    let after = hb.table("t1").unwrap();
    assert_eq!(
        read_all(&after.reader().unwrap(), false, now),
        user,
        "reads unchanged"
    );
    let r = after
        .regions
        .iter()
        .find(|r| r.info.encoded_name() == merged.encoded_name())
        .unwrap();
    assert!(r
        .families
        .iter()
        .all(|ff| ff.files.len() == 1 && ff.files[0].reference.is_none()));
    for (family, name) in &references {
        let archived = root
            .join("archive/data/default/t1")
            .join(merged.encoded_name())
            .join(family)
            .join(name);
        assert!(archived.is_file(), "{}", archived.display());
    }
    assert!(
        parent_files.iter().all(|p| p.is_file()),
        "the parents' files stay"
    );
    let v = verify::verify(&hb.snapshot("snap_t1").unwrap());
    assert!(v.is_ok(), "{:?}", v.problems);
}

/// `hbase compact` writes with the family's settings as HBase's compaction does
/// (`StoreFileTrackerBase.createFileContext` over the family's descriptor and configuration):
/// a Bloom error rate in the family's CONFIGURATION gives the outputs the hash count of that
/// rate, where the same compaction under the unchanged descriptor gives the default's.
#[test]
fn offline_compaction_writes_with_the_familys_configuration() {
    let Some((_dir, tmp, root)) =
        root_copy("offline_compaction_writes_with_the_familys_configuration")
    else {
        return;
    };
    let plain = tmp.path().join("plain");
    copy_tree(&root, &plain);
    let m = HBaseRoot::open(&root).unwrap().table("t1").unwrap();
    let mut d = m.descriptor.clone();
    for f in d.families.iter_mut() {
        f.configuration
            .push(("io.storefile.bloom.error.rate".into(), "0.0001".into()));
    }
    let bytes = d.to_file_bytes();
    let Source::Table { dir } = &m.source else {
        panic!()
    };
    std::fs::write(
        dir.join(TABLEINFO_DIR).join(tableinfo_file_name(2, &bytes)),
        bytes,
    )
    .unwrap();
    let hash_counts = |root: &Path| -> Vec<u32> {
        let m = HBaseRoot::open(root).unwrap().table("t1").unwrap();
        let opts = CompactOptions {
            now_ms: 1_700_000_400_000,
            ..Default::default()
        };
        let report = compact_in_place(&m, &opts).unwrap();
        let mut counts = Vec::new();
        for s in &report.stores {
            let Some(out) = &s.output else { continue };
            let f = root
                .join("data/default/t1")
                .join(&s.region)
                .join(&s.family)
                .join(out);
            let r = HFileReader::open(&f).unwrap();
            let bloom = r.general_bloom().expect("a Bloom filter");
            counts.push(bloom.meta().hash_count);
        }
        counts
    };
    let (set, default) = (hash_counts(&root), hash_counts(&plain));
    assert_eq!(set.len(), 6);
    assert_eq!(default.len(), 6);
    for (s, d) in set.iter().zip(&default) {
        assert!(s > d, "hash counts {set:?}, by default {default:?}");
    }
}
