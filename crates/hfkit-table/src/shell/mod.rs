//! The HBase shell form of a schema: one `create` statement as typed into `hbase shell`.
//! Prose: `formats/schema.md` §"HBase shell form".
//!
//! The shell is JRuby, and no Rust crate parses Ruby literals, so this is a small hand-written
//! tokenizer and recursive-descent parser for the subset `create` takes:
//!
//! ```text
//! statement := 'create' ( '(' args ')' | args ) ';'? EOF
//! args      := arg (',' arg)* ','?          consecutive `k => v` args form one hash (Ruby)
//! arg       := value | value '=>' value
//! value     := STRING | INT | true | false | nil | CONST | hash | array
//! hash      := '{' (value '=>' value (',' value '=>' value)* ','?)? '}'
//! array     := '[' (value (',' value)* ','?)? ']'
//! STRING    := '...' (\\ and \' only) | "..." (\xNN \n \t \r \s \e \0 \NNN \uXXXX \u{...} ...)
//! INT       := -?[0-9][0-9_]*               CONST := [A-Z][A-Za-z0-9_]*  (its own name; FOREVER = 2147483647)
//! comments  := '#' to end of line
//! ```
//!
//! Meaning follows `admin.rb`'s `create`: the first argument is the table name; arrays are
//! flattened and `nil`s dropped; a string is a family with defaults; a hash with `NAME` is a
//! family (its other keys are family attributes, `METADATA`/`CONFIGURATION` hashes kept as
//! strings; a family named twice is replaced, with a warning); any other hash holds table
//! options: `SPLITS` (keys in `Bytes.toBytesBinary` syntax), `SPLITS_FILE`, `NUMREGIONS` with
//! `SPLITALGO`, `METHOD => 'table_att'`, table attributes, `METADATA`, `CONFIGURATION`.
//! Where the shell prints "ignored" for an unknown key, this is an error naming it. Errors give
//! `<shell>:line:column` (column in characters) and what was expected.
//!
//! | module | owns |
//! |---|---|
//! | `lex` | the tokens: strings and their escapes, integers, constants, comments; Ruby expressions refused |
//! | `parse` | the grammar above, over a [`TokenCursor`](crate::cursor::TokenCursor), into located values |
//! | `interp` | the meaning of the values (`admin.rb`'s `create`) as a [`ParsedSchema`] |

mod interp;
mod lex;
mod parse;

use crate::error::SchemaError;
use crate::schema::ParsedSchema;

/// Label of shell text in locations.
const SHELL_SOURCE: &str = "<shell>";

/// Parses a `create` statement (errors located in `<shell>`).
pub fn parse_create(text: &str) -> Result<ParsedSchema, SchemaError> {
    parse_create_from(text, SHELL_SOURCE)
}

/// Parses a `create` statement read from `source` (a file name, for errors).
pub fn parse_create_from(text: &str, source: &str) -> Result<ParsedSchema, SchemaError> {
    let toks = lex::tokenize(text, source)?;
    let args = parse::Parser::new(text, source, toks).statement()?;
    interp::Interpreter { text, source }.create(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{
        BloomFilterKind, FamilySchema, ImportMapping, KeepDeletedCells, SplitSpec,
    };
    use crate::split::SplitAlgorithm;
    use hfkit_format::compression::Compression;
    use proptest::prelude::*;

    fn ok(s: &str) -> ParsedSchema {
        parse_create(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> String {
        parse_create(s).unwrap_err().to_string()
    }

    #[test]
    fn the_usual_create() {
        let p = ok("create 'ns:t', {NAME => 'd', VERSIONS => 1, COMPRESSION => 'SNAPPY', BLOOMFILTER => 'ROW', TTL => 604800}, {NAME => 'i'}, SPLITS => ['a', 'b']");
        let t = &p.table;
        assert_eq!(t.full_name(), "ns:t");
        assert_eq!(t.families.len(), 2);
        let d = t.family("d").unwrap();
        assert_eq!(d.versions, 1);
        assert_eq!(d.compression, Compression::Snappy);
        assert_eq!(d.bloom, BloomFilterKind::Row);
        assert_eq!(d.ttl_seconds, Some(604800));
        assert_eq!(t.family("i").unwrap(), &FamilySchema::new("i"));
        assert_eq!(
            t.splits,
            SplitSpec::Explicit(vec![b"a".to_vec(), b"b".to_vec()])
        );
        assert!(p.warnings.is_empty());
        assert_eq!(p.mapping, ImportMapping::default());
    }

    #[test]
    fn forms() {
        let p = ok("create 't', 'f1', 'f2'");
        assert_eq!(p.table.full_name(), "t");
        assert_eq!(p.table.namespace, "default");
        assert_eq!(
            p.table
                .families
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>(),
            ["f1", "f2"]
        );
        assert_eq!(p.table.splits, SplitSpec::None);

        let p = ok("create 't', {NAME => 'f'}, {NUMREGIONS => 16, SPLITALGO => 'HexStringSplit'}");
        assert_eq!(
            p.table.splits,
            SplitSpec::Algorithm {
                algo: SplitAlgorithm::HexString,
                regions: 16,
                first_row: None,
                last_row: None
            }
        );
        let p = ok("create 't', 'f', {NUMREGIONS => 4, SPLITALGO => 'org.apache.hadoop.hbase.util.RegionSplitter$UniformSplit'}");
        assert_eq!(p.table.splits.regions(None).unwrap().len(), 4);
        let p = ok("create 't', 'f', SPLITS_FILE => 'splits.txt'");
        assert_eq!(p.table.splits, SplitSpec::File("splits.txt".into()));

        // Parentheses, double quotes, arrays, trailing commas, comments, semicolon, nil.
        let p = ok("create(\"t\", ['a', {NAME => \"b\",},], nil, # comment\n  SPLITS => [\"\\x00\\x01\", 'k\\x02',],);");
        assert_eq!(p.table.families.len(), 2);
        assert_eq!(
            p.table.splits,
            SplitSpec::Explicit(vec![vec![0, 1], b"k\x02".to_vec()])
        );

        // FOREVER as a constant and as a string; durations; booleans; integers as strings.
        let p = ok("create 't', {NAME => 'a', TTL => FOREVER}, {NAME => 'b', TTL => 'FOREVER'}, {NAME => 'c', TTL => '1 DAY 2 HOURS', IN_MEMORY => 'true', VERSIONS => '5', BLOCKSIZE => '128KB', KEEP_DELETED_CELLS => true}");
        assert_eq!(p.table.family("a").unwrap().ttl_seconds, None);
        assert_eq!(p.table.family("b").unwrap().ttl_seconds, None);
        let c = p.table.family("c").unwrap();
        assert_eq!(c.ttl_seconds, Some(93600));
        assert!(c.in_memory);
        assert_eq!(c.versions, 5);
        assert_eq!(c.block_size, 131072);
        assert_eq!(c.keep_deleted_cells, KeepDeletedCells::True);

        // Metadata and configuration, at both levels; table attributes; METHOD.
        let p = ok("create 't', {NAME => 'f', BLOOMFILTER => 'ROWPREFIX_FIXED_LENGTH', CONFIGURATION => {'RowPrefixBloomFilter.prefix_length' => 6}, METADATA => {'k' => 1}}, {METHOD => 'table_att', MAX_FILESIZE => 1073741824, DURABILITY => 'SYNC_WAL', METADATA => {'owner' => 'x'}, CONFIGURATION => {'hbase.hstore.blockingStoreFiles' => '20'}}");
        let f = p.table.family("f").unwrap();
        assert_eq!(f.bloom, BloomFilterKind::RowPrefixFixedLength(6));
        assert_eq!(f.metadata["k"], "1");
        assert_eq!(p.table.attributes["MAX_FILESIZE"], "1073741824");
        assert_eq!(p.table.attributes["DURABILITY"], "SYNC_WAL");
        assert_eq!(p.table.metadata["owner"], "x");
        assert_eq!(
            p.table.configuration["hbase.hstore.blockingStoreFiles"],
            "20"
        );
    }

    #[test]
    fn family_named_twice_is_replaced_with_a_warning() {
        let p = ok("create 't', {NAME => 'f', VERSIONS => 3}, {NAME => 'f', TTL => 60}");
        let f = p.table.family("f").unwrap();
        // A hash for an existing family starts from the earlier definition, as in the shell.
        assert_eq!((f.versions, f.ttl_seconds), (3, Some(60)));
        assert_eq!(p.warnings.len(), 1);
        assert!(
            p.warnings[0].contains("family 'f' already exists"),
            "{:?}",
            p.warnings
        );
        let p = ok("create 't', {NAME => 'f', VERSIONS => 3}, 'f'");
        assert_eq!(p.table.family("f").unwrap().versions, 1);
        let p = ok("create 't', 'a', 'b', 'c', 'd'");
        assert!(p.warnings[0].contains("4 column families"));
    }

    #[test]
    fn errors_name_the_column() {
        assert_eq!(
            err("create 't', {NAME => 'f', VERSION => 3}"),
            "<shell>:1:27: family 'f': unknown attribute 'VERSION'"
        );
        assert_eq!(
            err("create 't', {NAME => 'f', VERSIONS => 0}"),
            "<shell>:1:27: family 'f': attribute VERSIONS = 0: must be between 1 and 2147483647"
        );
        assert_eq!(
            err("create 't', {NAME => 'f', VERSIONS => 1, MIN_VERSIONS => 2}"),
            "<shell>:1:22: family 'f': attribute MIN_VERSIONS = 2: must not exceed VERSIONS (1)"
        );
        assert_eq!(err("create 't', 'f', SPLITS => ['a', 'a']"), "<shell>:1:34: split key 'a': all split keys must be unique; this one appears more than once");
        assert_eq!(
            err("create 't', 'f', SPLITS => ['']"),
            "<shell>:1:29: split key '': an empty split key must not be passed in the split keys"
        );
        assert_eq!(
            err("create 't', 'f', COLOR => 'red'"),
            "<shell>:1:18: table: unknown attribute 'COLOR'"
        );
        assert_eq!(
            err("create 't'"),
            "<shell>:1:8: table 't' has no column family"
        );
        assert_eq!(
            err("create 't', {VERSIONS => 1}"),
            "<shell>:1:14: table: unknown attribute 'VERSIONS'"
        );
        assert_eq!(
            err("create 't', 'f', {NUMREGIONS => 1, SPLITALGO => 'HexStringSplit'}"),
            "<shell>:1:33: splits: number of regions must be greater than 1, got 1"
        );
        assert_eq!(
            err("create 't', 'f', {NUMREGIONS => 4}"),
            "<shell>:1:19: splits: split algorithm must be specified (SPLITALGO)"
        );
        assert_eq!(err("create 't', 'f', {NUMREGIONS => 4, SPLITALGO => 'Foo'}"), "<shell>:1:49: unknown split algorithm 'Foo' (expected HexStringSplit, DecimalStringSplit or UniformSplit)");
        assert_eq!(
            err("create 't', 'f', {SPLITS => ['a'], NUMREGIONS => 3, SPLITALGO => 'UniformSplit'}"),
            "<shell>:1:19: splits: use only one of SPLITS, SPLITS_FILE or NUMREGIONS + SPLITALGO"
        );
        assert_eq!(
            err("create 't', 'f', SPLITS => ['a'], SPLITS_FILE => 'x'"),
            "<shell>:1:18: splits: use only one of SPLITS, SPLITS_FILE or NUMREGIONS + SPLITALGO"
        );
        assert_eq!(
            err("create 't', 'f', {SPLITS => ['a']}, {SPLITS => ['b']}"),
            "<shell>:1:38: splits: splits are given more than once"
        );
        assert_eq!(err("create 'a b', 'f'"), "<shell>:1:8: table name 'a b': illegal character ' ' at 1 of qualifier 'a b': table qualifiers may only contain letters, digits, '_', '-' and '.'");
        assert_eq!(err("create 't', 'a:b'"), "<shell>:1:13: family name 'a:b': illegal character 0x3A: column family names cannot contain control characters, ':', '\\' or '/'");
        assert_eq!(err("create 't', {NAME => 'f', COMPRESSION => 'LZMA'}"), "<shell>:1:27: family 'f': attribute COMPRESSION = 'LZMA': HBase knows LZMA, but hfkit cannot write it (supported: NONE, GZ, SNAPPY, LZ4, ZSTD)");
        assert_eq!(
            err("create 't', {NAME => 'f', TTL => 'FOREVER' 'x'}"),
            "<shell>:1:44: expected ',' or '}', found the string 'x'"
        );
        assert_eq!(
            err("create 't' 'f'"),
            "<shell>:1:12: expected ',' or '=>', found the string 'f'"
        );
        assert_eq!(
            err("create 't', {NAME => 'f'"),
            "<shell>:1:25: expected ',' or '}', found the end of the statement"
        );
        assert_eq!(
            err("create 't', 'f"),
            "<shell>:1:13: expected a closing ' for this string"
        );
        assert_eq!(
            err("create 't', 1.5"),
            "<shell>:1:13: expected an integer, found a floating-point number"
        );
        assert_eq!(
            err("create 't', 3"),
            "<shell>:1:13: expected a family name or a hash, found an integer"
        );
        assert_eq!(
            err("create 't', f"),
            "<shell>:1:13: expected a value, found 'f' (quote strings: 'f')"
        );
        assert_eq!(
            err("alter 't', 'f'"),
            "<shell>:1:1: expected 'create', found 'alter'"
        );
        assert_eq!(
            err("create 't', \"#{x}\""),
            "<shell>:1:14: string interpolation #{...} is not supported"
        );
        assert!(
            err("create 't', 'f', SPLITS => [\"\\xff\"]").contains("use a single-quoted '\\xFF'")
        );
        assert!(err("create 't', 'f', SPLITS => ['\\xff']").contains("upper-case"));
        assert_eq!(err("create 't',\n  {NAME => 'f', TTL => 'soon'}"), "<shell>:2:17: family 'f': attribute TTL = 'soon': 'soon' is not FOREVER, a number of seconds or e.g. '7 DAYS 12 HOURS'");
        assert_eq!(
            err("create 't', {NAME => 'f', METHOD => 'x'}"),
            "<shell>:1:27: family 'f': unknown attribute 'METHOD'"
        );
        assert_eq!(
            err("create 't', 'f', METHOD => 'alter'"),
            "<shell>:1:28: table_att is currently the only supported METHOD"
        );
        assert!(err(&format!(
            "create 't', {}'f'{}",
            "[".repeat(20),
            "]".repeat(20)
        ))
        .contains("nesting"));
    }

    #[test]
    fn ruby_expressions_are_named_with_the_literal_form_to_use() {
        let splits = "Ruby expressions are not evaluated (the shell form is read, not run); \
             write the split points as a literal array, e.g. SPLITS => ['10', '20', '30'], or \
             compute them with `hfkit plan --regions N`, or use NUMREGIONS => N with SPLITALGO, \
             or a TOML schema's [splits] section";
        // The seed articles' idiom: a range mapped through a block.
        assert_eq!(
            err("create 'ns:t', 'f', SPLITS => (0..99).map{|i| '%02d' % i}"),
            format!("<shell>:1:33: found '.' in `(0..99).map{{|i| '%02d' % i}}`: {splits}")
        );
        assert_eq!(
            err("create 't', 'f', {SPLITS => (1..9).map { |i| \"#{i}\" }}"),
            format!("<shell>:1:31: found '.' in `(1..9).map {{ |i| \"#{{i}}\" }}}}`: {splits}")
        );
        assert_eq!(
            err("create('t', 'f', SPLITS => ['a', 'b'].map(&:upcase))"),
            format!("<shell>:1:38: found '.' in `['a', 'b'].map(&:upcase))`: {splits}")
        );
        assert_eq!(
            err("create 't', 'f', SPLITS => ('a')"),
            format!("<shell>:1:28: found '(' in `('a')`: {splits}")
        );
        // Other values: arithmetic, a block's bar, with the key named.
        assert_eq!(
            err("create 't', {NAME => 'f', TTL => 7 * 86400}"),
            "<shell>:1:36: found '*' in `7 * 86400}`: Ruby expressions are not evaluated (the \
             shell form is read, not run); write the value of TTL as a literal (a string, an \
             integer, true/false, [...] or {...})"
        );
        assert_eq!(
            err("create 't', 'f', SPLITS => [*'a'..'c']"),
            format!("<shell>:1:29: found '*' in `*'a'..'c']`: {splits}")
        );
    }

    #[test]
    fn string_escapes() {
        let p = ok(
            r#"create 't', 'f', SPLITS => ["a\tb", "\101\x7", "\u0041\u{42}", "q\"\\\s", 'x\'y\\z\n']"#,
        );
        let SplitSpec::Explicit(keys) = p.table.splits else {
            panic!()
        };
        assert_eq!(
            keys,
            [
                b"a\tb".to_vec(),
                b"A\x07".to_vec(),
                b"AB".to_vec(),
                b"q\"\\ ".to_vec(),
                b"x'y\\z\\n".to_vec()
            ]
        );
    }

    proptest! {
        /// Fuzz: the shell parser never panics.
        #[test]
        fn never_panics(s in ".{0,80}") {
            let _ = parse_create(&s);
            let _ = parse_create(&format!("create {s}"));
        }

        #[test]
        fn never_panics_on_shell_like_text(parts in proptest::collection::vec(prop_oneof![
            Just("create"), Just(" 't'"), Just(","), Just("{"), Just("}"), Just("["), Just("]"),
            Just("=>"), Just("NAME"), Just("'f'"), Just("VERSIONS"), Just("3"), Just("-1"),
            Just("SPLITS"), Just("NUMREGIONS"), Just("SPLITALGO"), Just("'HexStringSplit'"),
            Just("\"\\x0"), Just("TTL"), Just("FOREVER"), Just("nil"), Just("("), Just(")"),
            Just("METADATA"), Just("CONFIGURATION"), Just("'\\xZZ'"), Just("#"), Just("\n"),
        ], 0..30)) {
            let _ = parse_create(&parts.concat());
        }
    }
}
