//! `[[index]]` tables: which records give an index cell, duplicate index keys, sampled index
//! splits, and the schema's checks. The seed's index pattern end to end is in `import_seeds.rs`.

use std::collections::BTreeMap;
use std::path::Path;

use hfkit::format::reader::HFileReader;
use hfkit::pipeline::import::{run_import, ImportOptions, ImportReport, InputFormat};
use hfkit::pipeline::source::CsvOptions;
use hfkit::table::TableSchema;

const BASE: &str = r#"
[table]
name = "app:people"

[[family]]
name = "d"

[rowkey]
spec = 'pad(id, 4)'

[[column]]
source = "name"
cell = "d:n"
timestamp = 5
"#;

/// Imports `csv` with `schema` into `dir/out`; index tables go to `dir/out/.indexes/<qualifier>`.
fn import(dir: &Path, schema: &str, csv: &str) -> ImportReport {
    let input = dir.join("in.csv");
    std::fs::write(&input, csv).unwrap();
    let parsed = TableSchema::from_toml_str(schema, "s.toml", None).unwrap();
    let opts = ImportOptions::new(
        vec![input],
        InputFormat::Csv(CsvOptions::default()),
        dir.join("out"),
    );
    run_import(&parsed.table, &parsed.mapping, opts).unwrap()
}

/// row -> (qualifier, timestamp, value) of the cells of one index's files.
fn cells(r: &ImportReport, index: usize) -> BTreeMap<String, (String, i64, String)> {
    let mut out = BTreeMap::new();
    for f in &r.indexes[index].output_files {
        let h = HFileReader::open(&f.path).unwrap();
        let mut s = h.scanner().unwrap();
        while let Some(c) = s.next().unwrap() {
            let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
            out.insert(text(c.row), (text(c.qualifier), c.timestamp, text(c.value)));
        }
    }
    out
}

#[test]
fn records_without_all_index_fields_or_without_a_row_give_no_index_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = format!(
        "{BASE}
[[index]]
name = \"app:people_by_email\"
rowkey = 'email + \"|\" + id'
cell = \"x:\"
timestamp = \"seen\"
timestamp_format = \"%Y-%m-%d\"

[[index]]
name = \"people_by_nick\"
rowkey = 'nick'
cell = \"x:row\"
"
    );
    let r = import(
        tmp.path(),
        &schema,
        "id,name,email,nick,seen\n\
         1,ann,a@x,annie,1970-01-02\n\
         2,bob,,bobby,1970-01-03\n\
         3,,c@x,cc,1970-01-04\n\
         4,dan,d@x,,1970-01-05\n",
    );
    // Record 3 writes no main cell (its only mapped field is empty): no row, so no index cell
    // in either index, though its index fields are present.
    assert_eq!(r.cells, 3);
    assert_eq!(r.indexes.len(), 2);
    let by_email = cells(&r, 0);
    assert_eq!(
        by_email,
        BTreeMap::from([
            ("a@x|1".into(), (String::new(), 86_400_000, "0001".into())),
            (
                "d@x|4".into(),
                (String::new(), 4 * 86_400_000, "0004".into())
            ),
        ])
    );
    assert_eq!(r.indexes[0].cells, 2);
    assert_eq!(r.indexes[0].rows_without_entry, 2);
    let by_nick = cells(&r, 1);
    assert_eq!(
        by_nick.keys().collect::<Vec<_>>(),
        ["annie", "bobby"],
        "{by_nick:?}"
    );
    assert!(by_nick.values().all(|(q, _, _)| q == "row"));
    // Where each went: inside the output directory, under .indexes/ by table qualifier.
    assert_eq!(
        r.indexes[0].dir,
        tmp.path()
            .join("out/.indexes/people_by_email")
            .display()
            .to_string()
    );
    assert!(tmp.path().join("out/.indexes/people_by_nick/x").is_dir());
    assert!(
        r.warnings.iter().all(|w| !w.contains("index")),
        "{:?}",
        r.warnings
    );
    // A failed import with the same two indexes leaves nothing: not the output, not the
    // .indexes/ directory the index tables share inside it.
    let failed = tempfile::tempdir().unwrap();
    let input = failed.path().join("in.csv");
    std::fs::write(
        &input,
        "id,name,email,nick,seen\n1,ann,a@x,annie,1970-01-02\nx,bob,b@x,b,1970-01-03\n",
    )
    .unwrap();
    let parsed = TableSchema::from_toml_str(&schema, "s.toml", None).unwrap();
    let opts = ImportOptions::new(
        vec![input],
        InputFormat::Csv(CsvOptions::default()),
        failed.path().join("out"),
    );
    let e = run_import(&parsed.table, &parsed.mapping, opts).unwrap_err();
    assert!(e.to_string().contains("line 3"), "{e}");
    let left: Vec<_> = std::fs::read_dir(failed.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["in.csv"]);
}

#[test]
fn colliding_index_keys_keep_the_last_and_warn() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = format!(
        "{BASE}
[[index]]
name = \"app:people_by_email\"
rowkey = 'email'
cell = \"x:k\"
"
    );
    let r = import(
        tmp.path(),
        &schema,
        "id,name,email\n1,ann,same@x\n2,bob,same@x\n3,cid,other@x\n",
    );
    let c = cells(&r, 0);
    assert_eq!(c.len(), 2);
    assert_eq!(c["same@x"].2, "0002", "the last record read wins");
    assert_eq!(r.indexes[0].duplicate_cells, 1);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("index app:people_by_email: 1 index cells") && w.contains("unique")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn index_splits_may_be_sampled_from_index_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = format!(
        "{BASE}
[[index]]
name = \"app:people_by_name\"
rowkey = 'name'
cell = \"x:k\"

[index.splits]
sample = 4

[index.family]
VERSIONS = 2
COMPRESSION = \"GZ\"
"
    );
    let mut csv = String::from("id,name\n");
    for i in 0..400 {
        csv.push_str(&format!("{i},n{:03}\n", (i * 7) % 400));
    }
    let r = import(tmp.path(), &schema, &csv);
    let ix = &r.indexes[0];
    assert_eq!(ix.cells, 400);
    let starts: Vec<&str> = ix.regions.iter().map(|g| g.start_key.as_str()).collect();
    assert_eq!(starts, ["", "n100", "n200", "n300"]);
    assert!(
        ix.regions.iter().all(|g| g.cells == 100),
        "{:?}",
        ix.regions
    );
    // The main table has no splits.
    assert_eq!(r.regions.len(), 1);
    for f in &ix.output_files {
        let h = HFileReader::open(&f.path).unwrap();
        assert_eq!(h.compression(), hfkit::format::compression::Compression::Gz);
    }
}

#[test]
fn index_schema_errors_name_the_place() {
    let err = |extra: &str| {
        TableSchema::from_toml_str(&format!("{BASE}{extra}"), "s.toml", None)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err("[[index]]\nname = \"ix\"\nrowkey = 'name'\n"),
        "s.toml:15:1: index 'ix': needs cell = \"family:qualifier\""
    );
    assert_eq!(
        err("[[index]]\nrowkey = 'name'\ncell = \"x:k\"\n"),
        "s.toml:15:1: index #1: needs name = \"namespace:table\""
    );
    assert_eq!(
        err("[[index]]\nname = \"app:people\"\nrowkey = 'name'\ncell = \"x:k\"\n"),
        "s.toml:15:1: index 'app:people': an index table must not be the table itself"
    );
    let twice = "[[index]]\nname = \"ix\"\nrowkey = 'name'\ncell = \"x:k\"\n";
    assert!(err(&format!("{twice}{twice}")).ends_with("index 'ix': defined twice"));
    assert_eq!(
        err("[[index]]\nname = \"ix\"\nrowkey = 'name'\ncell = \"x\"\n"),
        "s.toml:18:8: index 'ix': cell 'x' must be family:qualifier"
    );
    assert!(
        err("[[index]]\nname = \"ix\"\nrowkey = 'name'\ncell = \".x:k\"\n")
            .starts_with("s.toml:18:8: family name '.x'")
    );
    assert_eq!(
        err("[[index]]\nname = \"ix\"\nrowkey = 'name'\ncell = \"x:k\"\n[index.family]\nname = \"y\"\n"),
        "s.toml:20:8: index 'ix': [index.family] name must be the family of cell 'x:k' ('x')"
    );
    assert_eq!(
        err("[[index]]\nname = \"ix\"\nrowkey = 'name'\ncell = \"x:k\"\n[index.family]\nVERSION = 2\n"),
        "s.toml:20:1: family 'x': unknown attribute 'VERSION'"
    );
    assert!(
        err("[[index]]\nname = \"ix\"\nrowkey = 'name'\ncell = \"x:k\"\nvalue = \"id\"\n")
            .starts_with("s.toml:19:1: unknown key 'value' in [[index]]")
    );
    assert!(
        err("[[index]]\nname = \"bad name\"\nrowkey = 'name'\ncell = \"x:k\"\n")
            .starts_with("s.toml:16:8: table name 'bad name'")
    );
    assert!(
        err("[[index]]\nname = \"ix\"\nrowkey = 'name'\ncell = \"x:k\"\ntimestamp_format = \"epoch_s\"\n")
            .contains("timestamp_format needs timestamp = \"field\"")
    );
    // A rowkey spec error names the index and the schema position.
    let parsed = TableSchema::from_toml_str(
        &format!("{BASE}[[index]]\nname = \"ix\"\nrowkey = 'name +'\ncell = \"x:k\"\n"),
        "s.toml",
        None,
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, "id,name\n1,a\n").unwrap();
    let e = run_import(
        &parsed.table,
        &parsed.mapping,
        ImportOptions::new(
            vec![input],
            InputFormat::Csv(CsvOptions::default()),
            tmp.path().join("out"),
        ),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("s.toml:17:10: index ix: rowkey: rowkey spec, column 7:"),
        "{e}"
    );
}
