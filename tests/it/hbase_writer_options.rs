//! Every writer setting HBase has, checked against `../shared/fixtures/hbase-writer-options/`
//! (HFiles HBase's own `StoreFileWriter` wrote, each `.options` naming every setting): `hfkit
//! hfile write` of each file's cells with its options gives HBase's bytes, all 13 (the
//! uncompressed ones; ZSTD at level 19, the same libzstd as zstd-jni's; GZ, deflate at zlib's
//! level 6), and hfkit reads HBase's file to its cells, verifies it and answers its Bloom
//! queries as HBase does. `formats/hfile.md` §"Writer settings".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hfkit::format::bloom::BloomQuery;
use hfkit::format::reader::HFileReader;
use hfkit::format::text::parse_hex;

use crate::common::{hfkit, test_fixtures, text};

struct Case {
    name: String,
    hfile: PathBuf,
    options: BTreeMap<String, String>,
}

impl Case {
    fn opt(&self, k: &str) -> &str {
        self.options.get(k).map(String::as_str).unwrap_or("")
    }

    fn sibling(&self, ext: &str) -> PathBuf {
        self.hfile.with_extension(ext)
    }

    /// The `hfkit hfile write` arguments that say what `.options` says.
    fn write_args(&self, out: &Path) -> Vec<String> {
        let mut a: Vec<String> = vec!["hfile".into(), "write".into(), out.display().to_string()];
        let mut flag = |k: &str, v: &str| {
            a.push(format!("--{k}"));
            if !v.is_empty() {
                a.push(v.to_string());
            }
        };
        flag("cells", &self.sibling("cells.txt").display().to_string());
        flag("compression", &self.opt("compression").to_lowercase());
        flag("encoding", &self.opt("encoding").to_lowercase());
        let bloom = match self.opt("bloom") {
            "ROWPREFIX_FIXED_LENGTH" => format!("rowprefix:{}", self.opt("bloom_prefix_len")),
            b => b.to_lowercase(),
        };
        flag("bloom", &bloom);
        for (k, o) in [
            ("block-size", "block_size"),
            ("index-block-size", "index_block_size"),
            ("index-min-entries", "index_min_entries"),
            ("bloom-block-size", "bloom_block_size"),
            ("bloom-error-rate", "bloom_error_rate"),
            ("bloom-max-fold", "bloom_max_fold"),
            ("bytes-per-checksum", "bytes_per_checksum"),
            ("create-time", "create_time_ms"),
            ("bulkload-time", "bulkload_timestamp_ms"),
            ("bulkload-task", "bulkload_source_task"),
            ("major-compaction", "major_compaction"),
        ] {
            flag(k, self.opt(o));
        }
        flag("checksum", &self.opt("checksum").to_lowercase());
        if !self.opt("zstd_level").is_empty() {
            flag("compression-level", self.opt("zstd_level"));
        }
        for (k, o) in [
            ("include-tags", "include_tags"),
            ("compress-tags", "compress_tags"),
            (
                "exclude-from-minor-compaction",
                "exclude_from_minor_compaction",
            ),
        ] {
            if self.opt(o) == "true" {
                flag(k, "");
            }
        }
        assert_eq!(self.opt("include_mvcc"), "true", "{}", self.name);
        assert_eq!(self.opt("bulkload_meta"), "true", "{}", self.name);
        let comparator = match self.opt("comparator") {
            "org.apache.hadoop.hbase.InnerStoreCellComparator" => "inner-store",
            "org.apache.hadoop.hbase.CellComparatorImpl" => "cell-comparator-impl",
            other => panic!("{}: comparator {other}", self.name),
        };
        flag("comparator", comparator);
        a
    }
}

fn cases(dir: &Path) -> Vec<Case> {
    let mut out: Vec<Case> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hfile"))
        .map(|p| {
            let options = std::fs::read_to_string(p.with_extension("options"))
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect();
            Case {
                name: p.file_stem().unwrap().to_string_lossy().into_owned(),
                hfile: p,
                options,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[test]
fn hfile_write_gives_hbase_bytes_for_every_writer_setting() {
    let Some(dir) = test_fixtures::dir(
        "hfile_write_gives_hbase_bytes_for_every_writer_setting",
        "hbase-writer-options",
    ) else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let mut identical = Vec::new();
    for c in cases(&dir) {
        let ours = t.path().join(format!("{}.hfile", c.name));
        let o = hfkit(
            &c.write_args(&ours)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        );
        assert!(o.status.success(), "{}: {}", c.name, text(&o.stderr));
        let (a, b) = (
            std::fs::read(&ours).unwrap(),
            std::fs::read(&c.hfile).unwrap(),
        );
        assert!(a == b, "{}: bytes differ from HBase's", c.name);
        identical.push(c.name.clone());
        // HBase's file read by hfkit: its cells, a clean verify, HBase's Bloom answers.
        let mut cells = vec!["hfile", "cells"];
        let hbase = c.hfile.display().to_string();
        cells.push(&hbase);
        if c.opt("cells_txt_has_seqid") == "true" {
            cells.push("--seqid");
        }
        let o = hfkit(&cells);
        assert!(o.status.success(), "{}: {}", c.name, text(&o.stderr));
        let want = std::fs::read_to_string(c.sibling("cells.txt")).unwrap();
        assert!(text(&o.stdout) == want, "{}: cells differ", c.name);
        let o = hfkit(&["hfile", "verify", &hbase]);
        assert!(o.status.success(), "{}: {}", c.name, text(&o.stderr));
        let bloom = c.sibling("bloom.txt");
        if bloom.exists() {
            let r = HFileReader::open(&c.hfile).unwrap();
            let mut answers = 0;
            for line in std::fs::read_to_string(&bloom).unwrap().lines() {
                if line.starts_with('#') || line.trim().is_empty() {
                    continue;
                }
                let (q, want) = line.split_once(' ').unwrap();
                let p: Vec<Vec<u8>> = q.split(':').map(|h| parse_hex(h).unwrap()).collect();
                let query = BloomQuery::RowCol {
                    row: &p[0],
                    family: &p[1],
                    qualifier: &p[2],
                };
                let got = r.might_contain(query).unwrap();
                assert_eq!(got, want == "maybe", "{}: {line}", c.name);
                answers += 1;
            }
            assert_eq!(answers, 400, "{}", c.name);
        }
    }
    assert_eq!(identical.len(), 13, "byte-identical: {identical:?}");
}

/// Settings outside what HBase accepts are refused by name, before any file is made.
#[test]
fn out_of_range_writer_settings_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let cells = t.path().join("c.txt");
    std::fs::write(&cells, "72 66 71 1 Put 76\n").unwrap();
    let out = t.path().join("o.hfile");
    let (c, o) = (cells.to_str().unwrap(), out.to_str().unwrap());
    for (args, want) in [
        (
            vec!["--compression", "zstd", "--compression-level", "23"],
            "1 to 22",
        ),
        (
            vec!["--compression", "gz", "--compression-level", "10"],
            "0 to 9",
        ),
        (
            vec!["--compression", "snappy", "--compression-level", "1"],
            "no level",
        ),
        (
            vec!["--bloom", "row", "--bloom-error-rate", "1.5"],
            "--bloom-error-rate",
        ),
        (vec!["--bloom", "row", "--bloom-max-fold", "31"], "max fold"),
        (vec!["--major-compaction", "false"], "--bulkload-time"),
        (vec!["--index-min-entries", "1"], "--index-min-entries"),
    ] {
        let mut a = vec!["hfile", "write", o, "--cells", c];
        a.extend(&args);
        let r = hfkit(&a);
        assert!(!r.status.success(), "{args:?}");
        assert!(
            text(&r.stderr).contains(want),
            "{args:?}: {}",
            text(&r.stderr)
        );
        assert!(!out.exists(), "{args:?} left a file");
    }
}

/// The same settings in a family's `CONFIGURATION`, under HBase's keys, reach the files every
/// command writes: an import's HFiles carry the Bloom the error rate, chunk size and fold ask
/// for, and a ZSTD family at level 19 holds the same cells in fewer bytes than at level 3.
#[test]
fn family_configuration_sets_the_writer_settings_of_an_import() {
    let t = tempfile::tempdir().unwrap();
    let csv = t.path().join("in.csv");
    let mut rows = String::from("id,v\n");
    for i in 0..3000 {
        rows.push_str(&format!("{i:06},value {} of row {i}\n", i * 7919 % 1000));
    }
    std::fs::write(&csv, rows).unwrap();
    let schema = |conf: &str| {
        format!(
            "[table]\nname = \"t\"\n\n[[family]]\nname = \"f\"\nCOMPRESSION = \"ZSTD\"\n\
             BLOOMFILTER = \"ROW\"\nBLOCKSIZE = 1024\n\n[family.CONFIGURATION]\n{conf}\n\n\
             [rowkey]\nspec = \"id\"\n\n[[column]]\nsource = \"v\"\ncell = \"f:v\"\n\
             timestamp = 1700000000000\n"
        )
    };
    let import = |name: &str, conf: &str| {
        let s = t.path().join(format!("{name}.toml"));
        std::fs::write(&s, schema(conf)).unwrap();
        let out = t.path().join(name);
        let o = hfkit(&[
            "import",
            "--schema",
            s.to_str().unwrap(),
            csv.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(o.status.success(), "{name}: {}", text(&o.stderr));
        let files: Vec<PathBuf> = std::fs::read_dir(out.join("f"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{name}");
        files.into_iter().next().unwrap()
    };
    let plain = import("plain", "");
    let tuned = import(
        "tuned",
        "\"io.storefile.bloom.error.rate\" = \"0.001\"\n\
         \"io.storefile.bloom.block.size\" = \"600\"\n\
         \"io.storefile.bloom.max.fold\" = \"3\"\n\
         \"hfile.index.block.max.size\" = \"128\"\n\
         \"hfile.index.block.min.entries\" = \"4\"",
    );
    let leveled = import("leveled", "\"hbase.io.compress.zstd.level\" = \"19\"");
    let (p, q) = (
        HFileReader::open(&plain).unwrap(),
        HFileReader::open(&tuned).unwrap(),
    );
    let (bp, bq) = (p.general_bloom().unwrap(), q.general_bloom().unwrap());
    // HBase's sizing: 7 hashes for 0.01, 10 for 0.001; 600-byte chunks (a multiple of 2^3).
    assert_eq!((bp.meta().hash_count, bq.meta().hash_count), (7, 10));
    assert_eq!(bq.chunk_byte_size(0), Some(600));
    assert!(bq.num_chunks() > 1);
    // Small index blocks of at least 4 entries: a deeper index.
    assert!(q.trailer().num_data_index_levels > p.trailer().num_data_index_levels);
    // Level 19: the same cells, fewer bytes.
    let cells = |f: &Path| text(&hfkit(&["hfile", "cells", f.to_str().unwrap()]).stdout);
    assert_eq!(cells(&plain), cells(&tuned));
    assert_eq!(cells(&plain), cells(&leveled));
    let size = |f: &Path| std::fs::metadata(f).unwrap().len();
    assert!(
        size(&leveled) < size(&plain),
        "{} !< {}",
        size(&leveled),
        size(&plain)
    );
    // Out of HBase's range: refused when the table is made, naming the family and key.
    let bad = t.path().join("bad.toml");
    std::fs::write(&bad, schema("\"io.storefile.bloom.error.rate\" = \"2\"")).unwrap();
    let o = hfkit(&[
        "table",
        "create",
        t.path().join("tb").to_str().unwrap(),
        "--schema",
        bad.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = text(&o.stderr);
    assert!(
        e.contains("family f") && e.contains("io.storefile.bloom.error.rate"),
        "{e}"
    );
    assert!(!t.path().join("tb").exists());
}
