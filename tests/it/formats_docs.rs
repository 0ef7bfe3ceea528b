//! The examples in `formats/` parse and mean what the prose says.

use hfkit::pipeline::RowkeySpec;
use hfkit::table::TableSchema;

/// The examples in `formats/schema.md` parse (the rowkey spec too), and describe the same
/// table in both forms.
#[test]
fn schema_md_examples_parse() {
    let doc = include_str!("../../formats/schema.md");
    let block = |lang: &str, nth: usize| -> String {
        let fence = format!("```{lang}\n");
        let start = doc.match_indices(&fence).nth(nth).unwrap().0 + fence.len();
        doc[start..start + doc[start..].find("```").unwrap()].to_string()
    };
    let t = TableSchema::from_toml_str(&block("toml", 0), "schema.md", None).unwrap();
    let spec = t.mapping.rowkey.as_deref().unwrap();
    RowkeySpec::parse(spec).unwrap();
    let s = TableSchema::from_shell(&block("ruby", 0)).unwrap();
    assert_eq!(s.table, t.table);
    assert_eq!(t.table.splits.regions(None).unwrap().len(), 4);
    for line in block("ruby", 1).lines() {
        TableSchema::from_shell(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
}

/// The `[operation]` and `ttl` examples of `formats/schema.md` parse, appended to a table with
/// the families they name.
#[test]
fn schema_md_change_and_ttl_examples_parse() {
    let doc = include_str!("../../formats/schema.md");
    let blocks: Vec<&str> = doc
        .split("```toml\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()])
        .collect();
    let table = "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[family]]\nname = \"m\"\n\
                 [[family]]\nname = \"s\"\n[rowkey]\nspec = \"id\"\n";
    let op = blocks.iter().find(|b| b.contains("[operation]")).unwrap();
    let ttl = blocks.iter().find(|b| b.contains("ttl = ")).unwrap();
    let text = format!("{table}{ttl}[[column]]\nsource = \"email\"\ncell = \"d:email\"\n{op}");
    let t = TableSchema::from_toml_str(&text, "schema.md", None).unwrap();
    let op = t.mapping.operation.unwrap();
    assert_eq!(op.deletes.len(), 4);
    assert!(t.mapping.columns[0].ttl.is_some());
}
