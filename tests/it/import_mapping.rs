//! Mapping language features through a whole import (`formats/schema.md`, `formats/rowkey.md`):
//! each test imports a small file and compares the cells' bytes with bytes computed here,
//! independently of the import's code.

use crate::common::{hfkit, import_with, text, tmpdir};

/// Imports `csv` with `schema` into a table and returns its cells as (row, qualifier, value),
/// each as bytes, in scan order.
fn import_cells(schema: &str, csv: &str) -> Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    let tmp = tmpdir();
    let s = tmp.path().join("s.toml");
    std::fs::write(&s, schema).unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, csv).unwrap();
    let table = tmp.path().join("t");
    let t = table.to_str().unwrap();
    let o = import_with(
        &s,
        &input,
        "--table",
        &table,
        &["--quiet", "--timestamp", "1"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = hfkit(&["scan", t, "--format", "cells", "--versions", "10"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let unhex = |h: &str| -> Vec<u8> {
        if h == "-" {
            return Vec::new();
        }
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect()
    };
    text(&o.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (unhex(f[0]), unhex(f[2]), unhex(f[5]))
        })
        .collect()
}

#[test]
fn value_types_write_hbase_bytes() {
    let mut schema =
        String::from("[table]\nname = \"v\"\n[[family]]\nname = \"d\"\n[rowkey]\nspec = \"id\"\n");
    let types = [
        "int16",
        "int32",
        "float32",
        "boolean",
        "bigdecimal",
        "hex",
        "base64",
    ];
    for t in types {
        schema.push_str(&format!(
            "[[column]]\nsource = \"{t}\"\ncell = \"d:{t}\"\ntype = \"{t}\"\n"
        ));
    }
    let cells = import_cells(
        &schema,
        "id,int16,int32,float32,boolean,bigdecimal,hex,base64\n\
         r,-2,42,1.5,true,-123.45,0aFF,aGJhc2U=\n",
    );
    // By hand: short -2; int 42; 1.5f = 0x3FC00000; true = FF; BigDecimal("-123.45") = scale 2,
    // unscaled -12345 = 0xCFC7 as two's complement; the hex digits; base64 of "hbase".
    let mut want: Vec<(&str, Vec<u8>)> = vec![
        ("int16", vec![0xFF, 0xFE]),
        ("int32", vec![0, 0, 0, 42]),
        ("float32", vec![0x3F, 0xC0, 0, 0]),
        ("boolean", vec![0xFF]),
        ("bigdecimal", vec![0, 0, 0, 2, 0xCF, 0xC7]),
        ("hex", vec![0x0A, 0xFF]),
        ("base64", b"hbase".to_vec()),
    ];
    want.sort();
    let got: Vec<(String, Vec<u8>)> = cells
        .into_iter()
        .map(|(row, q, v)| {
            assert_eq!(row, b"r");
            (String::from_utf8(q).unwrap(), v)
        })
        .collect();
    let want: Vec<(String, Vec<u8>)> = want.into_iter().map(|(q, v)| (q.to_string(), v)).collect();
    assert_eq!(got, want);
}

/// `cell = "family:...{field}..."`: the qualifier comes from the record, so several records of
/// one row give it several columns (tags, child ids as columns).
#[test]
fn qualifiers_from_fields() {
    let schema = "[table]\nname = \"q\"\n[[family]]\nname = \"t\"\n[[family]]\nname = \"c\"\n\
                  [rowkey]\nspec = \"parent\"\n\
                  [[column]]\nsource = \"score\"\ncell = \"t:{tag}\"\n\
                  [[column]]\nsource = \"name\"\ncell = \"c:child_{child}_{{n}}\"\n";
    // Input out of qualifier order within each row: the import sorts them.
    let cells = import_cells(
        schema,
        "parent,tag,score,child,name\n\
         p1,zeta,1,7,ann\n\
         p1,alpha,2,3,bob\n\
         p2,mid,3,10,cid\n",
    );
    let got: Vec<(String, String, String)> = cells
        .into_iter()
        .map(|(r, q, v)| {
            let s = |b: Vec<u8>| String::from_utf8(b).unwrap();
            (s(r), s(q), s(v))
        })
        .collect();
    let want: Vec<(String, String, String)> = [
        ("p1", "child_3_{n}", "bob"),
        ("p1", "child_7_{n}", "ann"),
        ("p1", "alpha", "2"),
        ("p1", "zeta", "1"),
        ("p2", "child_10_{n}", "cid"),
        ("p2", "mid", "3"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(got, want);
}

/// `[explode]`: a list field makes one record per item, so one input record gives several
/// rows (the item in the row key) and several cells (the item in a qualifier); an item that
/// cannot be encoded rejects the whole record.
#[test]
fn several_rows_and_cells_from_one_record() {
    let schema = "[table]\nname = \"x\"\n[[family]]\nname = \"d\"\n\
                  [rowkey]\nspec = 'order + \"#\" + pad(item, 3)'\n\
                  [[column]]\nsource = \"qty\"\ncell = \"d:qty_{item}\"\n\
                  [explode]\nfield = \"item\"\ndelimiter = \";\"\n";
    let tmp = tmpdir();
    let s = tmp.path().join("s.toml");
    std::fs::write(&s, schema).unwrap();
    let input = tmp.path().join("in.csv");
    // o2's second item is too wide for pad(item, 3): o2 is rejected whole.
    std::fs::write(&input, "order,item,qty\no1,7;12,5\no2,3;1234,6\no3,,9\n").unwrap();
    let table = tmp.path().join("t");
    let bad = tmp.path().join("bad.txt");
    let o = import_with(
        &s,
        &input,
        "--table",
        &table,
        &[
            "--quiet",
            "--timestamp",
            "1",
            "--bad-rows",
            bad.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let bad = std::fs::read_to_string(&bad).unwrap();
    // o3's empty list is the record as it is, and pad('') is an error: rejected too.
    let lines: Vec<&str> = bad.lines().collect();
    assert_eq!(lines.len(), 2, "{bad}");
    assert!(
        lines[0].contains(
            "line 3\titem 2 of field 'item': row key: pad(item, 3): '1234' has 4 characters"
        ),
        "{bad}"
    );
    assert!(
        lines[1].contains("line 4\trow key: pad(item, 3): ''"),
        "{bad}"
    );
    let o = hfkit(&["scan", table.to_str().unwrap(), "--format", "tsv"]);
    let got: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    // Nothing of o2 (its first item was fine), nothing of o3.
    assert_eq!(
        got,
        ["o1#007\td:qty_7\t1\tPut\t5", "o1#012\td:qty_12\t1\tPut\t5",]
    );
}
