//! Changes from input (`formats/schema.md` §"Changes from input"): a day-1 full load and a
//! day-2 change file with inserts, updates and every kind of delete, both imported into one
//! table; `scan` must equal an independent model of HBase's delete semantics, before and after
//! a major compaction.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{hfkit, import_with, text, tmpdir};

const SCHEMA: &str = r#"
[table]
name = "cdc"

[[family]]
name = "d"
VERSIONS = 5

[[family]]
name = "m"
VERSIONS = 5

[rowkey]
spec = "id"

[[column]]
source = "name"
cell = "d:name"
timestamp = "ts"

[[column]]
source = "email"
cell = "d:email"
timestamp = "ts"

[[column]]
source = "score"
cell = "m:score"
timestamp = "ts"

[operation]
field = "op"
timestamp = "ts"
put = ["I", "U"]

[[operation.delete]]
value = "D"
scope = "row"

[[operation.delete]]
value = "DF"
scope = "family"
families = ["m"]

[[operation.delete]]
value = "DC"
scope = "columns"
cells = ["d:email"]

[[operation.delete]]
value = "DV"
scope = "version"
"#;

const DAY1: &str = "\
id,op,ts,name,email,score
r1,I,1000,ann,ann@x,10
r2,I,1000,bob,bob@x,20
r3,I,1000,cid,cid@x,30
r4,I,1000,dan,dan@x,40
r5,I,1000,eve,eve@x,50
r6,I,1000,fay,fay@x,60
r7,I,1000,gus,gus@x,70
r8,I,1000,hal,hal@x,80
";

/// Inserts, updates and each delete kind, some at timestamps that mask nothing or only part.
const DAY2: &str = "\
id,op,ts,name,email,score
r2,U,2000,bobby,,
r9,I,2000,ivy,ivy@x,90
r3,D,2000,,,
r4,DF,2000,,,
r5,DC,2000,,,
r6,DV,1000,x,,
r7,DV,1500,x,,
r8,U,2000,,hal@y,
r8,D,1500,,,
r1,DC,500,,,
";

/// (row, family, qualifier) → versions (timestamp, value).
type Model = BTreeMap<(String, String, String), Vec<(i64, String)>>;

/// HBase's semantics applied by hand: a Put adds a version; DeleteFamily at T removes the
/// family's versions with ts ≤ T; DeleteColumn at T the column's versions ≤ T; Delete at T the
/// version at exactly T. (No Put in these files comes after a marker that masks it.)
fn model(files: &[&str]) -> Model {
    let cells = [
        ("name", "d", "name"),
        ("email", "d", "email"),
        ("score", "m", "score"),
    ];
    let mut m = Model::new();
    for file in files {
        let mut lines = file.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        for line in lines {
            let f: Vec<&str> = line.split(',').collect();
            let get = |name: &str| f[header.iter().position(|h| *h == name).unwrap()];
            let (row, op, ts) = (get("id"), get("op"), get("ts").parse::<i64>().unwrap());
            let key = |fam: &str, q: &str| (row.to_string(), fam.to_string(), q.to_string());
            match op {
                "I" | "U" => {
                    for (field, fam, q) in cells {
                        if !get(field).is_empty() {
                            let v = m.entry(key(fam, q)).or_default();
                            v.retain(|(t, _)| *t != ts);
                            v.push((ts, get(field).to_string()));
                        }
                    }
                }
                "D" | "DF" => {
                    let families: &[&str] = if op == "D" { &["d", "m"] } else { &["m"] };
                    for (k, v) in m.iter_mut() {
                        if k.0 == row && families.contains(&k.1.as_str()) {
                            v.retain(|(t, _)| *t > ts);
                        }
                    }
                }
                "DC" => {
                    if let Some(v) = m.get_mut(&key("d", "email")) {
                        v.retain(|(t, _)| *t > ts);
                    }
                }
                "DV" => {
                    for (field, fam, q) in cells {
                        if !get(field).is_empty() {
                            if let Some(v) = m.get_mut(&key(fam, q)) {
                                v.retain(|(t, _)| *t != ts);
                            }
                        }
                    }
                }
                other => panic!("model: unknown op {other}"),
            }
        }
    }
    m.retain(|_, v| !v.is_empty());
    for v in m.values_mut() {
        v.sort_by_key(|c| std::cmp::Reverse(c.0));
    }
    m
}

/// The model as `scan --format tsv` prints it, with at most `versions` per column.
fn model_lines(m: &Model, versions: usize) -> Vec<String> {
    let mut out = Vec::new();
    for ((row, fam, q), v) in m {
        for (ts, value) in v.iter().take(versions) {
            out.push(format!("{row}\t{fam}:{q}\t{ts}\tPut\t{value}"));
        }
    }
    out
}

fn scan(table: &Path, versions: usize) -> Vec<String> {
    let v = versions.to_string();
    let t = table.to_str().unwrap();
    let o = hfkit(&["scan", t, "--versions", &v, "--format", "tsv"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout).lines().map(str::to_string).collect()
}

fn import(schema: &Path, input: &Path, table: &Path, extra: &[&str]) {
    let o = import_with(
        schema,
        input,
        "--table",
        table,
        &[extra, &["--quiet"]].concat(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
}

#[test]
fn a_change_file_applies_inserts_updates_and_every_delete_kind() {
    let tmp = tmpdir();
    let schema = tmp.path().join("cdc.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    let (day1, day2) = (tmp.path().join("day1.csv"), tmp.path().join("day2.csv"));
    std::fs::write(&day1, DAY1).unwrap();
    std::fs::write(&day2, DAY2).unwrap();
    for extra in [&[][..], &["--no-lanes", "--threads", "1"][..]] {
        let table = tmp.path().join(format!("t{}", extra.len()));
        import(&schema, &day1, &table, extra);
        assert_eq!(scan(&table, 1), model_lines(&model(&[DAY1]), 1));
        import(&schema, &day2, &table, extra);
        let want = model(&[DAY1, DAY2]);
        // The model is not trivial: each delete kind removed something, and some kept some.
        assert!(!want.keys().any(|k| k.0 == "r3"));
        assert!(!want.contains_key(&("r4".into(), "m".into(), "score".into())));
        assert!(want.contains_key(&("r4".into(), "d".into(), "name".into())));
        assert!(!want.contains_key(&("r5".into(), "d".into(), "email".into())));
        assert!(!want.contains_key(&("r6".into(), "d".into(), "name".into())));
        assert!(want.contains_key(&("r7".into(), "d".into(), "name".into())));
        assert_eq!(want[&("r8".into(), "d".into(), "email".into())].len(), 1);
        assert_eq!(want[&("r2".into(), "d".into(), "name".into())].len(), 2);
        for versions in [1, 5] {
            assert_eq!(scan(&table, versions), model_lines(&want, versions));
        }
        let t = table.to_str().unwrap();
        let o = hfkit(&["compact", t, "--major"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        for versions in [1, 5] {
            assert_eq!(scan(&table, versions), model_lines(&want, versions));
        }
        // The compaction dropped the markers and what they masked: a raw scan shows the model.
        let o = hfkit(&["scan", t, "--raw", "--versions", "5", "--format", "tsv"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let raw: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
        assert_eq!(raw, model_lines(&want, 5));
    }
}

#[test]
fn an_unknown_operation_value_rejects_its_record() {
    let tmp = tmpdir();
    let schema = tmp.path().join("cdc.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(
        &input,
        "id,op,ts,name,email,score\nr1,I,1,a,,\nr2,X,1,b,,\n",
    )
    .unwrap();
    let o = import_with(&schema, &input, "--table", &tmp.path().join("t"), &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("line 3")
            && err.contains(
                "operation field 'op': 'X' is none of the [operation] values (I, U, D, DF, DC, DV)"
            ),
        "{err}"
    );
}

/// The bundled daily feed (`fixtures/seeds/accounts*.csv`, the `import --help` examples): after
/// day 2, account 3 is gone, account 4 has lost its e-mail, account 2 its old name (still a
/// version) and sessions live as long as their own TTL says.
#[test]
fn the_accounts_seed_feed_after_two_days() {
    let tmp = tmpdir();
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seeds");
    let schema = seeds.join("accounts.toml");
    let table = tmp.path().join("accounts");
    for day in ["accounts-day1.csv", "accounts-day2.csv"] {
        import(&schema, &seeds.join(day), &table, &[]);
    }
    let t = table.to_str().unwrap();
    // One hour after day 2's changes: day 1's sessions (1 day and 1 hour TTLs) have expired.
    let o = hfkit(&["scan", t, "--format", "tsv", "--now", "1700090000000"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let d1 = "1700000000000";
    let d2 = "1700086400000";
    let want = [
        format!("acct-00000001\tp:email\t{d1}\tPut\tana@example.com"),
        format!("acct-00000001\tp:name\t{d1}\tPut\tAna"),
        format!("acct-00000002\tp:email\t{d1}\tPut\tben@example.com"),
        format!("acct-00000002\tp:name\t{d2}\tPut\tBenjamin"),
        format!("acct-00000002\ts:id\t{d2}\tPut\ts-22"),
        format!("acct-00000004\tp:name\t{d1}\tPut\tDev"),
        format!("acct-00000005\tp:email\t{d2}\tPut\teve@example.com"),
        format!("acct-00000005\tp:name\t{d2}\tPut\tEve"),
        format!("acct-00000005\ts:id\t{d2}\tPut\ts-51"),
    ];
    assert_eq!(text(&o.stdout).lines().collect::<Vec<_>>(), want);
}

/// `export --rows` refuses the mapping features a row cannot give back (an operation field, a
/// TTL field, an exploded list, a qualifier from the data), naming them, and writes nothing.
#[test]
fn row_exports_refuse_what_a_row_cannot_give_back() {
    let tmp = tmpdir();
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seeds");
    let table = tmp.path().join("accounts");
    import(
        &seeds.join("accounts.toml"),
        &seeds.join("accounts-day1.csv"),
        &table,
        &[],
    );
    let base = std::fs::read_to_string(seeds.join("accounts.toml")).unwrap();
    let without_op = &base[..base.find("[operation]").unwrap()];
    let without_ttl = without_op.replace("ttl = \"session_ttl_ms\"\n", "");
    let cases = [
        (base.clone(), "the schema has an [operation]"),
        (without_op.to_string(), "column 'session' has a ttl"),
        (
            format!("{without_ttl}[explode]\nfield = \"name\"\n"),
            "the schema explodes field 'name' ([explode])",
        ),
        (
            without_ttl.replace("cell = \"p:name\"", "cell = \"p:{email}\""),
            "column 'name': its qualifier '{email}' is taken from the record",
        ),
    ];
    for (i, (schema, message)) in cases.iter().enumerate() {
        let s = tmp.path().join(format!("s{i}.toml"));
        std::fs::write(&s, schema).unwrap();
        let out = tmp.path().join(format!("out{i}.csv"));
        let o = hfkit(&[
            "export",
            table.to_str().unwrap(),
            "--rows",
            "--schema",
            s.to_str().unwrap(),
            "--format",
            "csv",
            "--to",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{message}");
        assert!(text(&o.stderr).contains(message), "{}", text(&o.stderr));
        assert!(!out.exists());
    }
}
