//! A table never holds a symbolic link (`formats/table.md` §"Attach"): attach, clone and export
//! follow a link to its target and store the target's bytes, a link that leads nowhere is a
//! clear error, `table check` reports a store file that became a link, and restore refuses one.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use hfkit::format::cell::Cell;
use hfkit::format::writer::{HFileWriter, WriterOptions};
use hfkit::read::ReadOptions;
use hfkit::table::directory::Table;
use hfkit::table::manifest::FamilyEntry;
use hfkit::table::read::TableReader;

/// An HFile of family `family` with one cell per row, value `tag`.
fn write_hfile(path: &Path, family: &str, rows: &[&str], tag: &str) {
    let mut w = HFileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    for r in rows {
        w.append(&Cell::put(r.as_bytes(), family.as_bytes(), b"q", 5, tag.as_bytes()).as_ref())
            .unwrap();
    }
    std::fs::write(path, w.finish().unwrap().0).unwrap();
}

/// Families `f` and `g`, regions split at `m`.
fn new_table(dir: &Path) -> Table {
    Table::create(
        dir,
        "default:t",
        vec![FamilyEntry::new("f"), FamilyEntry::new("g")],
        &[b"m".to_vec()],
    )
    .unwrap()
}

/// Every cell a full scan returns, as (row, family, value).
fn scan(t: &Table) -> Vec<(String, String, String)> {
    let r = TableReader::open(t).unwrap();
    let mut s = r.scan(&ReadOptions::default()).unwrap();
    let mut out = Vec::new();
    while let Some(row) = s.next_row().unwrap() {
        for c in row.cells {
            let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
            out.push((text(&c.row), text(&c.family), text(&c.value)));
        }
    }
    out
}

/// The live store files, asserting that each is a regular file and not a link.
fn assert_regular_store_files(t: &Table) -> Vec<PathBuf> {
    let m = t.manifest().unwrap();
    let mut out = Vec::new();
    for e in &m.files {
        let p = t.file_path(e);
        let md = std::fs::symlink_metadata(&p).unwrap();
        assert!(
            md.file_type().is_file(),
            "{} is {:?}, not a regular file",
            p.display(),
            md.file_type()
        );
        out.push(p);
    }
    out
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn cells(rows: &[&str], family: &str, tag: &str) -> Vec<(String, String, String)> {
    rows.iter()
        .map(|r| (r.to_string(), family.to_string(), tag.to_string()))
        .collect()
}

#[test]
fn attach_of_a_linked_hfile_stores_the_target_and_survives_its_removal() {
    let tmp = tempfile::tempdir().unwrap();
    let t = new_table(&tmp.path().join("t"));
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    write_hfile(&outside.join("real"), "f", &["a", "b", "c"], "x");
    let bulk = tmp.path().join("bulk");
    std::fs::create_dir_all(bulk.join("f")).unwrap();
    symlink(outside.join("real"), bulk.join("f").join("linked")).unwrap();
    // A relative link, resolved against the link's own directory.
    write_hfile(&outside.join("rel"), "f", &["n", "o"], "y");
    symlink("../../outside/rel", bulk.join("f").join("relative")).unwrap();

    let r = t.attach(&bulk).unwrap();
    assert_eq!(r.files.len(), 2);
    assert_regular_store_files(&t);

    let mut want = cells(&["a", "b", "c"], "f", "x");
    want.extend(cells(&["n", "o"], "f", "y"));
    // The outside files move away: the table does not notice.
    std::fs::remove_dir_all(&outside).unwrap();
    std::fs::remove_dir_all(&bulk).unwrap();
    assert_eq!(scan(&t), want);
    let check = t.check().unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
}

#[test]
fn attach_through_a_linked_family_directory_stores_regular_files() {
    let tmp = tempfile::tempdir().unwrap();
    let t = new_table(&tmp.path().join("t"));
    // The family directory is a link; inside it, one plain file and one link.
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(outside.join("fam")).unwrap();
    write_hfile(&outside.join("fam").join("plain"), "g", &["a", "b"], "p");
    write_hfile(&outside.join("elsewhere"), "g", &["x", "y"], "q");
    symlink(
        outside.join("elsewhere"),
        outside.join("fam").join("linked"),
    )
    .unwrap();
    let bulk = tmp.path().join("bulk");
    std::fs::create_dir_all(&bulk).unwrap();
    symlink(outside.join("fam"), bulk.join("g")).unwrap();

    let r = t.attach(&bulk).unwrap();
    assert_eq!(r.files.len(), 2);
    assert!(r.files.iter().all(|f| f.family == "g"), "{:?}", r.files);
    assert_regular_store_files(&t);

    let mut want = cells(&["a", "b"], "g", "p");
    want.extend(cells(&["x", "y"], "g", "q"));
    std::fs::remove_dir_all(&outside).unwrap();
    assert_eq!(scan(&t), want);
    assert!(t.check().unwrap().is_ok());
}

#[test]
fn a_dangling_link_is_an_error_naming_it_and_the_table_is_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let t = new_table(&tmp.path().join("t"));
    let first = tmp.path().join("first");
    std::fs::create_dir_all(first.join("f")).unwrap();
    write_hfile(&first.join("f").join("h"), "f", &["a"], "1");
    t.attach(&first).unwrap();
    let before = t.manifest().unwrap();
    let data_before = files_under(&t.dir().join("data"));

    // A dangling file link next to a good file; a dangling family directory link next to a
    // good family. Either way, leaving it out would silently drop data.
    let gone = tmp.path().join("gone");
    let file_case = tmp.path().join("bulk-file");
    std::fs::create_dir_all(file_case.join("f")).unwrap();
    write_hfile(&file_case.join("f").join("good"), "f", &["b"], "2");
    symlink(gone.join("h"), file_case.join("f").join("zz")).unwrap();
    let dir_case = tmp.path().join("bulk-dir");
    std::fs::create_dir_all(dir_case.join("f")).unwrap();
    write_hfile(&dir_case.join("f").join("good"), "f", &["b"], "2");
    symlink(gone.join("g"), dir_case.join("g")).unwrap();

    for (bulk, link) in [
        (&file_case, file_case.join("f").join("zz")),
        (&dir_case, dir_case.join("g")),
    ] {
        let err = t.attach(bulk).unwrap_err().to_string();
        assert!(
            err.contains(&link.display().to_string())
                && err.contains("symbolic link")
                && err.contains("does not exist"),
            "{err}"
        );
        assert_eq!(t.manifest().unwrap(), before);
        assert_eq!(files_under(&t.dir().join("data")), data_before);
        assert_eq!(files_under(&t.dir().join(".tmp")), Vec::<PathBuf>::new());
        assert_eq!(scan(&t), cells(&["a"], "f", "1"));
    }
}

/// A table whose one store file was replaced, by an outside hand, with a link to the same bytes
/// moved elsewhere. Returns the table and where the bytes are now.
fn table_with_linked_store_file(root: &Path) -> (Table, PathBuf) {
    let t = new_table(&root.join("t"));
    let bulk = root.join("bulk");
    std::fs::create_dir_all(bulk.join("f")).unwrap();
    write_hfile(&bulk.join("f").join("h"), "f", &["a", "b"], "v");
    t.attach(&bulk).unwrap();
    let store = assert_regular_store_files(&t).remove(0);
    let moved = root.join("moved-away");
    std::fs::copy(&store, &moved).unwrap();
    std::fs::remove_file(&store).unwrap();
    symlink(&moved, &store).unwrap();
    (t, moved)
}

#[test]
fn check_reports_a_store_file_that_is_a_link_and_restore_refuses_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (t, moved) = table_with_linked_store_file(tmp.path());
    let check = t.check().unwrap();
    assert_eq!(check.problems.len(), 1, "{:?}", check.problems);
    assert!(
        check.problems[0].contains("symbolic link")
            && check.problems[0].contains(&moved.display().to_string()),
        "{:?}",
        check.problems
    );

    t.snapshot_create("s").unwrap();
    let before = t.manifest().unwrap();
    let err = t.snapshot_restore("s").unwrap_err().to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(t.manifest().unwrap(), before);
}

#[test]
fn clone_and_export_store_the_target_of_a_linked_store_file() {
    let tmp = tempfile::tempdir().unwrap();
    let (t, moved) = table_with_linked_store_file(tmp.path());
    t.snapshot_create("s").unwrap();
    let clone = t
        .snapshot_clone("s", &tmp.path().join("clone"), None)
        .unwrap();
    t.export_table(None, &tmp.path().join("copy")).unwrap();
    let bulk_out = tmp.path().join("bulk-out");
    t.export_bulkload(None, &bulk_out).unwrap();

    let want = cells(&["a", "b"], "f", "v");
    std::fs::remove_file(&moved).unwrap();
    let copy = Table::open(&tmp.path().join("copy")).unwrap();
    for c in [&clone, &copy] {
        assert_regular_store_files(c);
        assert_eq!(scan(c), want);
        assert!(c.check().unwrap().is_ok());
    }
    let exported = files_under(&bulk_out);
    assert_eq!(exported.len(), 1);
    assert!(std::fs::symlink_metadata(&exported[0])
        .unwrap()
        .file_type()
        .is_file());
    let again = new_table(&tmp.path().join("again"));
    again.attach(&bulk_out).unwrap();
    assert_eq!(scan(&again), want);
}
