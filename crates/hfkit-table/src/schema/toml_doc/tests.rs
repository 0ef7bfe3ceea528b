//! Tests of [`super`] (toml_doc.rs).
use crate::TableSchema;

const BASE: &str = "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n";

fn err(text: &str) -> String {
    TableSchema::from_toml_str(text, "s.toml", None)
        .unwrap_err()
        .to_string()
}

#[test]
fn wrong_types_name_the_key_what_was_expected_and_what_was_given() {
    for (text, message) in [
        (
            "table = 3\n".to_string(),
            "s.toml:1:9: [table] must be a table, not integer",
        ),
        (
            "family = 3\n".to_string(),
            "s.toml:1:10: [family] must be an array of tables, not integer",
        ),
        (
            "family = [1]\n".to_string(),
            "s.toml:1:11: [[family]] must be a table, not integer",
        ),
        (
            "[table]\nname = 3\n".to_string(),
            "s.toml:2:8: [table] name must be a string, not integer",
        ),
        (
            format!("{BASE}VERSIONS = 1.5\n"),
            "s.toml:5:12: [[family]] VERSIONS must be a string, integer or boolean, not float",
        ),
        (
            format!("{BASE}[family.METADATA]\nx = [1]\n"),
            "s.toml:6:5: [family.METADATA] x must be a string, integer or boolean, not array",
        ),
        (
            format!("{BASE}METADATA = 1979-05-27\n"),
            "s.toml:5:12: [[family]] METADATA must be a table, not datetime",
        ),
        (
            format!("{BASE}splits = 1979-05-27\n[other]\n"),
            "s.toml:5:10: [[family]] splits must be a string, integer or boolean, not datetime",
        ),
        (
            "splits = 1979-05-27\n".to_string(),
            "s.toml:1:10: [splits] must be a table, not datetime",
        ),
        (
            format!("{BASE}[splits]\nkeys = \"a\"\n"),
            "s.toml:6:8: [splits] keys must be an array of strings, not string",
        ),
        (
            format!("{BASE}[splits]\nkeys = [\"a\", 1]\n"),
            "s.toml:6:14: [splits] keys[1] must be a string, not integer",
        ),
        (
            format!("{BASE}[splits]\nregions = -1\n"),
            "s.toml:6:11: [splits] regions must be a non-negative integer",
        ),
        (
            format!("{BASE}[rowkey]\nspec = 3\n"),
            "s.toml:6:8: [rowkey] spec must be a string, not integer",
        ),
        (
            format!("{BASE}[[column]]\nsource = \"a\"\ncell = \"d:a\"\ntimestamp = -1\n"),
            "s.toml:8:13: [[column]] timestamp must be in 0..=i64::MAX",
        ),
        (
            format!("{BASE}[[column]]\nsource = \"a\"\ncell = \"d:a\"\ntimestamp = true\n"),
            "s.toml:8:13: [[column]] timestamp must be epoch milliseconds (integer) or a \
             field name (string), not boolean",
        ),
        (
            format!("{BASE}[[index]]\nname = \"ix\"\nfamily = 3\n"),
            "s.toml:7:10: [[index]] family must be a table, not integer",
        ),
        (
            "[table]\nname = \"t\"\nMAX_FILESIZE = 9223372036854775808\n".to_string(),
            "s.toml:3:16: [table] MAX_FILESIZE must be an integer within the range of a \
             64-bit signed integer",
        ),
        (
            format!("{BASE}splits = {{ keys = ['a'], sample = 2, x = 1 }}\n"),
            "s.toml:5:10: [[family]] splits must be a string, integer or boolean, not table",
        ),
        (
            "[table]\nname = \"t\"\nsplits = { keys = ['a'], x = 1 }\n".to_string(),
            "s.toml:3:10: [table] splits must be a string, integer or boolean, not table",
        ),
    ] {
        assert_eq!(err(&text), message, "{text}");
    }
}

#[test]
fn unknown_keys_are_named_at_their_position() {
    for (text, message) in [
        (
            format!("{BASE}[rowkey]\nspecs = 'a'\n"),
            "s.toml:6:1: unknown key 'specs' in [rowkey] (expected spec, timestamp_format)",
        ),
        (
            format!("{BASE}[[column]]\nsource = \"a\"\n  value = 1\n"),
            "s.toml:7:3: unknown key 'value' in [[column]] (expected source, cell, type, \
             timestamp, timestamp_format, ttl)",
        ),
        (
            format!("{BASE}[[index]]\nname = \"ix\"\n[index.splits]\nregion = 3\n"),
            "s.toml:8:1: unknown key 'region' in [index.splits] (expected keys, file, \
             algorithm, regions, first_row, last_row or sample)",
        ),
        (
            "splits = { keys = ['a'], \"x`y\" = 1 }\n".to_string(),
            "s.toml:1:26: unknown key 'x`y' in [splits] (expected keys, file, algorithm, \
             regions, first_row, last_row or sample)",
        ),
        (
            format!("{BASE}[other]\n"),
            "s.toml:5:2: unknown section 'other' (expected [table], [[family]], [splits], \
             [rowkey], [[column]], [[index]], [operation], [explode])",
        ),
    ] {
        assert_eq!(err(&text), message, "{text}");
    }
}

#[test]
fn splits_errors_point_at_the_key() {
    assert_eq!(
        err(&format!("{BASE}[splits]\nkeys = [\"a\"]\n  sample = 3\n")),
        "s.toml:7:3: splits: use only one of keys, file, algorithm or sample"
    );
    assert_eq!(
        err(&format!("{BASE}[splits]\nalgorithm = \"HexStringSplit\"\n")),
        "s.toml:6:1: splits: algorithm needs regions = N"
    );
    assert_eq!(
        err(&format!("{BASE}[splits]\nsample = 1\n")),
        "s.toml:6:10: splits: sample = 1: the number of regions must be greater than 1"
    );
}
