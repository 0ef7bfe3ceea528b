//! Tables made from schemas (`hfkit table create`, `hfkit import --table` into a new table):
//! every schema attribute kept in the manifest and shown by `table describe`
//! (`formats/schema.md`).

mod common;

use std::path::{Path, PathBuf};

use common::{hfkit, text};
use hfkit::table::directory::Table;
use hfkit::table::manifest::Manifest;

fn ok(args: &[&str]) -> String {
    let o = hfkit(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn manifest(dir: &Path) -> Manifest {
    Table::open(dir).unwrap().manifest().unwrap()
}

/// Users with skewed, natural ids (far from uniform, so sampling decides the split points),
/// and an e-mail for an index.
fn write_input(dir: &Path) -> PathBuf {
    let mut csv = String::from("id,email,score\n");
    for i in 0..3000u64 {
        let id = if i % 3 == 0 { i * 7 } else { 100_000 + i * i };
        csv.push_str(&format!("{id},u{}@example.com,{}\n", i % 1000, i % 97));
    }
    let path = dir.join("users.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

const ATTRIBUTES: &str = r#"
[table]
name = "ns:orders"
MAX_FILESIZE = "10GB"
DURABILITY = "ASYNC_WAL"

[table.METADATA]
owner = "payments"

[table.CONFIGURATION]
"hbase.hstore.blockingStoreFiles" = "20"

[[family]]
name = "d"
VERSIONS = 3
IN_MEMORY = true
BLOCKCACHE = false
BLOOMFILTER = "ROWPREFIX_FIXED_LENGTH"

[family.METADATA]
note = "hot"

[family.CONFIGURATION]
"RowPrefixBloomFilter.prefix_length" = "3"

[rowkey]
spec = 'pad(id, 12)'

[[column]]
source = "score"
cell = "d:score"
"#;

/// What `table describe` must show of [`ATTRIBUTES`] (before and after compaction and alter).
const SHOWN: &[&str] = &[
    "ns:orders, {TABLE_ATTRIBUTES => {DURABILITY => 'ASYNC_WAL', MAX_FILESIZE => '10737418240', METADATA => {'owner' => 'payments'}, CONFIGURATION => {'hbase.hstore.blockingStoreFiles' => '20'}}}",
    "IN_MEMORY => 'true'",
    "BLOCKCACHE => 'false'",
    "METADATA => {'note' => 'hot'}",
    "CONFIGURATION => {'RowPrefixBloomFilter.prefix_length' => '3'}}",
];

#[test]
fn schema_attributes_survive_create_describe_reload_compaction_and_alter() {
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path());
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, ATTRIBUTES).unwrap();
    let table = tmp.path().join("t");
    ok(&["table", "create", p(&table), "--schema", p(&schema)]);
    let shown = |what: &str| {
        let d = ok(&["table", "describe", p(&table)]);
        for s in SHOWN {
            assert!(d.contains(s), "{what}: {s} not in\n{d}");
        }
        d
    };
    shown("created");
    let created = manifest(&table);
    assert_eq!(
        created.table_attributes.attributes["MAX_FILESIZE"],
        "10737418240"
    );
    assert_eq!(created.families[0].other.metadata["note"], "hot");

    // Two imports (two files per store), a major compaction, an alter: a new manifest each
    // time, attributes unchanged.
    for _ in 0..2 {
        ok(&[
            "import",
            "--schema",
            p(&schema),
            p(&input),
            "--table",
            p(&table),
            "--quiet",
        ]);
    }
    ok(&["compact", p(&table), "--major"]);
    shown("compacted");
    let altered = ok(&[
        "table",
        "alter",
        p(&table),
        "--family",
        "d",
        "--versions",
        "5",
    ]);
    assert!(
        altered.contains("IN_MEMORY => 'true'") && altered.contains("VERSIONS => '5'"),
        "{altered}"
    );
    let d = shown("altered");
    assert!(d.contains("VERSIONS => '5'"), "{d}");
    let after = manifest(&table);
    assert!(after.version > created.version + 3, "{}", after.version);
    assert_eq!(after.table_attributes, created.table_attributes);
    let (mut f, g) = (after.families[0].clone(), &created.families[0]);
    assert_eq!(f.versions, 5);
    f.versions = g.versions;
    assert_eq!(&f, g);

    // The shell form keeps the same attributes.
    let shell = tmp.path().join("shell");
    ok(&[
        "table",
        "create",
        p(&shell),
        "--hbase-shell",
        "create 'ns:orders', {NAME => 'd', VERSIONS => 3, IN_MEMORY => true, BLOCKCACHE => false, \
         BLOOMFILTER => 'ROWPREFIX_FIXED_LENGTH', METADATA => {'note' => 'hot'}, \
         CONFIGURATION => {'RowPrefixBloomFilter.prefix_length' => '3'}}, \
         {MAX_FILESIZE => '10GB', DURABILITY => 'ASYNC_WAL', METADATA => {'owner' => 'payments'}, \
         CONFIGURATION => {'hbase.hstore.blockingStoreFiles' => '20'}}",
    ]);
    let s = manifest(&shell);
    assert_eq!(
        (&s.table_attributes, &s.families),
        (&created.table_attributes, &created.families)
    );
}
