//! Tests of [`super`] (toml_form.rs).
use super::super::*;
use super::read_targets;
use crate::SchemaError;
use hfkit_format::compression::Compression;
use std::path::{Path, PathBuf};

fn toml(text: &str) -> Result<ParsedSchema, SchemaError> {
    TableSchema::from_toml_str(text, "s.toml", None)
}

fn err(text: &str) -> String {
    toml(text).unwrap_err().to_string()
}

#[test]
fn splits_forms() {
    let base = "[table]\nname = \"t\"\n[[family]]\nname = \"f\"\n";
    let p = toml(&format!("{base}[splits]\nkeys = [\"b\", \"a\\\\x00\"]\n")).unwrap();
    assert_eq!(
        p.table.splits,
        SplitSpec::Explicit(vec![b"b".to_vec(), b"a\x00".to_vec()])
    );
    assert_eq!(
        p.table.splits.regions(None).unwrap().split_keys(),
        [b"a\x00".to_vec(), b"b".to_vec()]
    );
    let p = TableSchema::from_toml_str(
        &format!("{base}[splits]\nfile = \"s.txt\"\n"),
        "x",
        Some(Path::new("/d")),
    )
    .unwrap();
    assert_eq!(p.table.splits, SplitSpec::File(PathBuf::from("/d/s.txt")));
    let p = toml(&format!("{base}[splits]\nsample = 8\n")).unwrap();
    assert_eq!(p.table.splits, SplitSpec::Sampled { regions: 8 });
    assert!(p.table.splits.regions(None).is_err());
    let sample: Vec<Vec<u8>> = (0..80u8).map(|i| vec![i]).collect();
    assert_eq!(p.table.splits.regions(Some(&sample)).unwrap().len(), 8);
    let p = toml(&format!(
        "{base}[splits]\nalgorithm = \"org.apache.hadoop.hbase.util.RegionSplitter$UniformSplit\"\nregions = 4\nlast_row = \"\\\\xFF\"\n"
    ))
    .unwrap();
    let keys = p.table.splits.regions(None).unwrap();
    assert_eq!(keys.split_keys(), [vec![0x40], vec![0x80], vec![0xC0]]);
    assert!(toml(base).unwrap().table.splits == SplitSpec::None);

    let e = err(&format!("{base}[splits]\nkeys = [\"a\", \"b\", \"a\"]\n"));
    assert!(
        e.starts_with("s.toml:6:19: split key 'a'") && e.contains("unique"),
        "{e}"
    );
    let e = err(&format!("{base}[splits]\nkeys = [\"\"]\n"));
    assert!(
        e.starts_with("s.toml:6:9: split key ''") && e.contains("empty"),
        "{e}"
    );
    let e = err(&format!("{base}[splits]\nkeys = [\"a\"]\nsample = 3\n"));
    assert!(e.contains("only one of"), "{e}");
    let e = err(&format!("{base}[splits]\nalgorithm = \"HexStringSplit\"\n"));
    assert!(e.contains("needs regions"), "{e}");
    let e = err(&format!(
        "{base}[splits]\nalgorithm = \"MD5StringSplit\"\nregions = 3\n"
    ));
    assert!(
        e.starts_with("s.toml:6:13: unknown split algorithm 'MD5StringSplit'"),
        "{e}"
    );
    let e = err(&format!(
        "{base}[splits]\nalgorithm = \"DecimalStringSplit\"\nregions = 1\n"
    ));
    assert!(e.contains("greater than 1"), "{e}");
    let e = err(&format!("{base}[splits]\nregion = 3\n"));
    assert!(
        e.starts_with("s.toml:6:1: unknown key 'region' in [splits]"),
        "{e}"
    );
}

const TWO_TABLES: &str = "[[table]]\nname = \"a\"\n[[table.family]]\nname = \"d\"\n\
[table.rowkey]\nspec = 'id'\n[[table.column]]\nsource = \"v\"\ncell = \"d:v\"\n\n\
[[table]]\nname = \"ns:b\"\nMAX_FILESIZE = 1073741824\n[[table.family]]\nname = \"e\"\n\
[table.splits]\nkeys = [\"m\"]\n[table.rowkey]\nspec = 'v'\n[[table.column]]\nsource = \"id\"\n\
cell = \"e:{v}\"\n";

#[test]
fn several_tables_each_a_schema_of_its_own() {
    let t = read_targets(TWO_TABLES, "s.toml", None).unwrap();
    assert_eq!(t.len(), 2);
    assert_eq!(t[0].table.full_name(), "a");
    assert_eq!(t[0].mapping.rowkey.as_deref(), Some("id"));
    assert_eq!(t[0].mapping.columns[0].family, "d");
    assert_eq!(t[1].table.full_name(), "ns:b");
    assert_eq!(t[1].table.families[0].name, "e");
    assert_eq!(t[1].mapping.rowkey.as_deref(), Some("v"));
    assert_eq!(t[1].table.splits.regions(None).unwrap().len(), 2);
    assert!(t[1].mapping.columns[0].qualifier_template.is_some());
    // A one-table reader refuses the file rather than reading one of its tables.
    let e = toml(TWO_TABLES).unwrap_err().to_string();
    assert!(
        e.starts_with("s.toml:1:1: 2 [[table]] sections: only `hfkit import`"),
        "{e}"
    );
    // A one-table file reads as one target.
    let one = read_targets(
        "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n",
        "s",
        None,
    );
    assert_eq!(one.unwrap().len(), 1);
}

#[test]
fn several_tables_errors_name_line_and_column() {
    let targets = |text: &str| read_targets(text, "s.toml", None).unwrap_err().to_string();
    // An unknown key in a section under the second [[table]]: the key's place, and the
    // keys the section takes.
    let e = targets(&TWO_TABLES.replace("source = \"id\"", "sorce = \"id\""));
    assert!(e.starts_with("s.toml:21:1: "), "{e}");
    assert!(e.contains("source, cell, type"), "{e}");
    // A column in a family its own table lacks (d is the first table's): the place of its
    // [[table.column]].
    let e = targets(&TWO_TABLES.replace("cell = \"e:{v}\"", "cell = \"d:{v}\""));
    assert_eq!(
        e,
        "s.toml:20:1: column 'id': family 'd' is not a family of the table"
    );
    // A table without a name: the place of its [[table]].
    let e = targets(&TWO_TABLES.replace("name = \"ns:b\"\n", ""));
    assert!(e.starts_with("s.toml:11:1: [[table]] needs name"), "{e}");
    // Two tables with one qualifier (one directory under --table ROOT).
    let e = targets(&TWO_TABLES.replace("ns:b", "ns:a"));
    assert_eq!(
        e,
        "s.toml:11:1: [[table]] 'ns:a': 'a' is already a table of this schema: every \
         table (and index table) needs a qualifier of its own, its directory under \
         --table ROOT"
    );
    // [table] and [[table]] in one file: TOML's own error, placed.
    let e = targets("[table]\nname = \"a\"\n[[table]]\nname = \"b\"\n");
    assert!(e.starts_with("s.toml:3:"), "{e}");
}

#[test]
fn errors_name_the_item() {
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nVERSION = 3\n");
    assert_eq!(e, "s.toml:5:1: family 'd': unknown attribute 'VERSION'");
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nversions = 0\n");
    assert_eq!(
        e,
        "s.toml:5:1: family 'd': attribute VERSIONS = 0: must be between 1 and 2147483647"
    );
    let e =
        err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nVERSIONS = 2\nMIN_VERSIONS = 3\n");
    assert_eq!(
        e,
        "s.toml:4:8: family 'd': attribute MIN_VERSIONS = 3: must not exceed VERSIONS (2)"
    );
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nCOMPRESSION = \"LZO\"\n");
    assert!(e.starts_with("s.toml:5:1: family 'd': attribute COMPRESSION = 'LZO': HBase knows LZO, but hfkit cannot write it"), "{e}");
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nCOMPRESSION = \"FAST\"\n");
    assert!(e.contains("expected one of NONE, GZ"), "{e}");
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nBLOOMFILTER = \"ROWPREFIX_FIXED_LENGTH\"\n");
    assert!(
        e.contains("family 'd': attribute BLOOMFILTER")
            && e.contains("RowPrefixBloomFilter.prefix_length"),
        "{e}"
    );
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nTTL = 0\n");
    assert!(e.contains("TTL must be positive"), "{e}");
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nTTL = \"soon\"\n");
    assert!(e.contains("attribute TTL = 'soon'"), "{e}");
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nBLOCKSIZE = 512\n");
    assert!(e.contains("between 1024 (1K) and 16777216 (16MB)"), "{e}");
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nIN_MEMORY = \"yes\"\n");
    assert!(e.contains("expected true or false"), "{e}");
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nENCRYPTION = \"AES\"\n");
    assert!(e.contains("encrypted"), "{e}");
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \".d\"\n");
    assert_eq!(
        e,
        "s.toml:4:8: family name '.d': column family names cannot start with a period"
    );
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[family]]\nname = \"d\"\n");
    assert_eq!(e, "s.toml:6:8: family 'd' is defined twice");
    let e = err("[table]\nname = \"t\"\n");
    assert_eq!(e, "s.toml:1:1: table 't' has no column family");
    let e = err("[table]\nname = \"bad name\"\n[[family]]\nname = \"d\"\n");
    assert!(e.starts_with("s.toml:2:8: table name 'bad name'"), "{e}");
    let e = err("[table]\nname = \"t\"\nCOLOR = 1\n[[family]]\nname = \"d\"\n");
    assert_eq!(e, "s.toml:3:1: table: unknown attribute 'COLOR'");
    let e = err("[tabel]\nname = \"t\"\n");
    assert!(e.starts_with("s.toml:1:2: unknown section 'tabel'"), "{e}");
    let e = err("[table]\nname = \n");
    assert!(e.starts_with("s.toml:2:") && e.contains("TOML"), "{e}");
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[column]]\nsource = \"a\"\ncell = \"x:q\"\n");
    assert_eq!(
        e,
        "s.toml:5:1: column 'a': family 'x' is not a family of the table"
    );
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[column]]\nsource = \"a\"\ncell = \"dq\"\n");
    assert_eq!(
        e,
        "s.toml:7:8: column 'a': cell 'dq' must be family:qualifier"
    );
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[column]]\ncell = \"d:q\"\n");
    assert_eq!(e, "s.toml:5:1: column #1: needs source = \"field\"");
    let e = err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[column]]\nsource = \"a\"\ncell = \"d:q\"\ntype = \"int\"\n");
    assert!(e.starts_with("s.toml:8:8: type 'int'"), "{e}");
}

#[test]
fn operation_and_ttl() {
    let base = "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[family]]\nname = \"m\"\n[rowkey]\nspec = \"id\"\n[[column]]\nsource = \"a\"\ncell = \"d:a\"\nttl = \"life\"\n[[column]]\nsource = \"b\"\ncell = \"m:b\"\nttl = 60000\n";
    let p = toml(&format!(
        "{base}[operation]\nfield = \"op\"\ntimestamp = \"ts\"\n[[operation.delete]]\nvalue = \"D\"\n[[operation.delete]]\nvalue = \"F\"\nscope = \"family\"\nfamilies = [\"m\"]\n[[operation.delete]]\nvalue = \"C\"\nscope = \"columns\"\ncells = [\"d:a\", \"m:\"]\n[[operation.delete]]\nvalue = \"V\"\nscope = \"version\"\n"
    ))
    .unwrap();
    let m = &p.mapping;
    assert_eq!(m.columns[0].ttl, Some(TtlSource::Field("life".into())));
    assert_eq!(m.columns[1].ttl, Some(TtlSource::Fixed(60000)));
    let op = m.operation.as_ref().unwrap();
    assert_eq!(op.field, "op");
    assert_eq!(op.put, ["I", "U"]);
    assert_eq!(op.timestamp, TimestampSource::Field("ts".into()));
    let scopes: Vec<(&str, &DeleteScope)> = op
        .deletes
        .iter()
        .map(|d| (d.value.as_str(), &d.scope))
        .collect();
    assert_eq!(
        scopes,
        [
            ("D", &DeleteScope::Row),
            ("F", &DeleteScope::Families(vec!["m".into()])),
            (
                "C",
                &DeleteScope::Columns(vec![("d".into(), b"a".to_vec()), ("m".into(), vec![])])
            ),
            ("V", &DeleteScope::Version(vec![])),
        ]
    );
    let e = err(&format!(
        "{base}[operation]\nfield = \"op\"\n[[operation.delete]]\nvalue = \"D\"\nscope = \"table\"\n"
    ));
    assert_eq!(
        e,
        "s.toml:21:9: [operation]: scope 'table': expected row, family, columns or version"
    );
    let e = err(&format!(
        "{base}[operation]\nfield = \"op\"\n[[operation.delete]]\nvalue = \"U\"\n"
    ));
    assert!(e.contains("operation value 'U' is given twice"), "{e}");
    let e = err(&format!(
        "{base}[operation]\nfield = \"op\"\n[[operation.delete]]\nvalue = \"D\"\nscope = \"family\"\nfamilies = [\"x\"]\n"
    ));
    assert!(e.contains("family 'x' is not a family of the table"), "{e}");
    let e = err(&format!("{base}[operation]\nput = [\"I\"]\n"));
    assert!(e.contains("[operation]: needs field = \"name\""), "{e}");
    let e = err(&format!("{base}[operation]\nfield = \"op\"\nmode = 1\n"));
    assert!(
        e.contains("field, put, timestamp, timestamp_format, [[operation.delete]]"),
        "{e}"
    );
}

#[test]
fn warnings_do_not_fail() {
    let p = toml("[table]\nname = \"hbase:t\"\n[[family]]\nname = \"a\"\n[[family]]\nname = \"b\"\n[[family]]\nname = \"c\"\n[[family]]\nname = \"d\"\n").unwrap();
    assert_eq!(p.table.families.len(), 4);
    assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
    assert!(p.warnings[0].contains("system namespace"));
    assert!(p.warnings[1].contains("4 column families"));
}

#[test]
fn attribute_names_in_any_case_and_values_in_every_form_hbase_takes() {
    let p = toml(
        "[table]\nname = \"t\"\nmax_filesize = '1 GB'\nReadOnly = 'TRUE'\n\
         [[family]]\nNAME = \"a\"\nversions = '3'\nTtl = 'forever'\nIn_Memory = 'true'\n\
         blocksize = '1 MB'\ncompression = 'gz'\nkeep_deleted_cells = true\n\
         [[family]]\nname = \"b\"\nVERSIONS = 2\nTTL = '1 DAY 2 HOURS'\nIN_MEMORY = true\n\
         BLOCKSIZE = 8192\nKEEP_DELETED_CELLS = 'ttl'\n\
         [[family]]\nname = \"c\"\nName = 7\nTTL = 86400\nBLOCKCACHE = false\n",
    )
    .unwrap();
    let t = &p.table;
    assert_eq!(t.attributes["MAX_FILESIZE"], (1u64 << 30).to_string());
    assert_eq!(t.attributes["READONLY"], "true");
    let a = t.family("a").unwrap();
    assert_eq!(
        (a.versions, a.ttl_seconds, a.in_memory, a.block_size),
        (3, None, true, 1 << 20)
    );
    assert_eq!(a.compression, Compression::Gz);
    assert_eq!(a.keep_deleted_cells, crate::schema::KeepDeletedCells::True);
    let b = t.family("b").unwrap();
    assert_eq!(
        (b.versions, b.ttl_seconds, b.in_memory, b.block_size),
        (2, Some(93_600), true, 8192)
    );
    assert_eq!(b.keep_deleted_cells, crate::schema::KeepDeletedCells::Ttl);
    // Other spellings of NAME are skipped, as before.
    let c = t.family("c").unwrap();
    assert_eq!(c.ttl_seconds, Some(86_400));
    assert_eq!(c.attributes["BLOCKCACHE"], "false");
    // `NAME` is a family's name, not a table's.
    assert_eq!(
        err("[table]\nname = \"t\"\nNAME = \"x\"\n"),
        "s.toml:3:1: table: unknown attribute 'NAME'"
    );
    assert_eq!(
        err("[table]\nname = \"t\"\n[[family]]\nname = \"d\"\nIN_MEMORY = 'yes'\n"),
        "s.toml:5:1: family 'd': attribute IN_MEMORY = 'yes': expected true or false"
    );
}
