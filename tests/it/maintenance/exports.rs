//! Exports of directory tables: parts in region order, every format round-tripped, bulk-load
//! and snapshot exports.

use super::*;

fn parse_cell(row: &str, fam: &str, q: &str, ts: &str, t: &str, v: &str) -> String {
    use hfkit::table::to_bytes_binary;
    let c = Cell {
        cell_type: CellTypeOwned(CellType::from_name(t).unwrap()),
        ..Cell::put(
            &to_bytes_binary(row).unwrap(),
            &to_bytes_binary(fam).unwrap(),
            &to_bytes_binary(q).unwrap(),
            ts.parse().unwrap(),
            &to_bytes_binary(v).unwrap(),
        )
    };
    cell_line(&c.as_ref(), false)
}

/// `Table::export_parts` on three threads: the sink gets every region's parts in region order
/// (the rows a read returns, each region ended by its marker) whichever worker made them, with
/// the workers ahead held back by a queue of one part; an encoder's error in the middle region
/// stops the export and leaves neither the file nor its staging directory.
#[test]
fn parallel_export_parts_come_in_region_order_and_an_error_leaves_no_file() {
    use hfkit::read::{ReadOptions, RowRef};
    use hfkit::table::export::{PartEncoder, PartSink};
    use hfkit::table::TableError;

    /// A part per row (its key), and one marker part per region end; fails on row `fail`.
    #[derive(Debug)]
    struct Keys {
        fail: Option<Vec<u8>>,
    }
    impl PartEncoder for Keys {
        type Part = Vec<u8>;
        type Error = TableError;
        fn write_row(&mut self, row: RowRef<'_>) -> Result<Option<Vec<u8>>, TableError> {
            if self.fail.as_deref() == Some(row.row()) {
                return Err(TableError::Invalid("refused row".into()));
            }
            Ok(Some(row.row().to_vec()))
        }
        fn end_region(&mut self) -> Result<Option<Vec<u8>>, TableError> {
            Ok(Some(b"|".to_vec()))
        }
    }
    #[derive(Debug)]
    struct Lines(std::fs::File, Vec<Vec<u8>>);
    impl PartSink for Lines {
        type Part = Vec<u8>;
        type Output = Vec<Vec<u8>>;
        type Error = TableError;
        fn write_part(&mut self, part: Vec<u8>) -> Result<(), TableError> {
            use std::io::Write;
            self.0.write_all(&part).unwrap();
            self.1.push(part);
            Ok(())
        }
        fn finish(self) -> Result<Vec<Vec<u8>>, TableError> {
            Ok(self.1)
        }
    }

    let tmp = tmpdir();
    let (t, _) = random_table(tmp.path(), 7, 3);
    let opts = ReadOptions {
        max_versions: 1,
        now_ms: NOW,
        ..ReadOptions::default()
    };
    // What one region after the other gives: each region's row keys, then its marker.
    let regions = t.manifest().unwrap().regions.len();
    assert_eq!(regions, 3);
    let export = |threads: usize, fail: Option<&[u8]>, dest: &Path| {
        t.export_parts(
            None,
            dest,
            &opts,
            &Default::default(),
            threads,
            1,
            |f| Ok(Lines(f, Vec::new())),
            |_| {
                Ok(Keys {
                    fail: fail.map(<[u8]>::to_vec),
                })
            },
        )
    };
    let (_, one, _) = export(1, None, &tmp.path().join("one")).unwrap();
    let (_, three, encoders) = export(8, None, &tmp.path().join("three")).unwrap();
    // One worker per region at most.
    assert_eq!(encoders.len(), 3);
    assert_eq!(three, one);
    assert_eq!(
        std::fs::read(tmp.path().join("three")).unwrap(),
        std::fs::read(tmp.path().join("one")).unwrap()
    );
    let markers: Vec<usize> = (0..one.len()).filter(|&i| one[i] == b"|").collect();
    assert_eq!(markers.len(), regions);
    let rows: Vec<&Vec<u8>> = one.iter().filter(|p| p.as_slice() != b"|").collect();
    assert!(rows.len() > 20, "{}", rows.len());
    assert!(rows.windows(2).all(|w| w[0] < w[1]), "rows in key order");
    // A row of the middle region refused.
    let middle = one[markers[0] + 1].clone();
    let dest = tmp.path().join("failed");
    let e = export(3, Some(&middle), &dest).unwrap_err();
    assert_eq!(e.to_string(), "refused row");
    assert!(!dest.exists());
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("failed"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn exports_round_trip() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use hfkit::pipeline::export::cells::{export_cells, ExportFormat};

    let tmp = tmpdir();
    let (t, _) = random_table(tmp.path(), 21, 3);
    // Bytes CSV must escape: a comma, a quote, a backslash, a newline, non-ASCII.
    let odd = tmp.path().join("odd");
    std::fs::create_dir_all(odd.join("a")).unwrap();
    write_file(
        &odd.join("a").join("x"),
        vec![Cell::put(
            b"r05,\"x\\\n\xff",
            b"a",
            b"q\x00",
            31_000,
            b"v,\"\\\n\x80",
        )],
    );
    t.attach(&odd).unwrap();
    let want = scan_live(&t, NOW);
    assert!(want.len() > 50);

    let csv_path = tmp.path().join("cells.csv");
    let r = export_cells(
        &t,
        None,
        ExportFormat::Csv,
        &csv_path,
        NOW,
        &Default::default(),
        3,
    )
    .unwrap();
    assert_eq!(r.cells as usize, want.len());
    // Regions read on three threads and on one: the same file (parts joined in region order).
    let one = tmp.path().join("cells-1.csv");
    let r1 = export_cells(
        &t,
        None,
        ExportFormat::Csv,
        &one,
        NOW,
        &Default::default(),
        1,
    )
    .unwrap();
    assert_eq!(r1.cells, r.cells);
    assert!(std::fs::read(&one).unwrap() == std::fs::read(&csv_path).unwrap());
    // Region by region (a cluster export's tasks, `ExportScope`): the parts' lines after
    // their headers are the file's, in region order; a table at another version is refused.
    let version = t.manifest().unwrap().version;
    let regions = t.manifest().unwrap().regions.len();
    let mut joined = Vec::new();
    for i in 0..regions {
        let part = tmp.path().join(format!("part-{i}.csv"));
        let scope = ExportScope {
            regions: Some(i..i + 1),
            version: Some(version),
            lock_held_elsewhere: true,
        };
        export_cells(&t, None, ExportFormat::Csv, &part, NOW, &scope, 1).unwrap();
        let text = std::fs::read_to_string(&part).unwrap();
        joined.extend(text.lines().skip(1).map(String::from));
    }
    let whole = std::fs::read_to_string(&csv_path).unwrap();
    assert_eq!(joined, whole.lines().skip(1).collect::<Vec<_>>());
    let stale = ExportScope {
        version: Some(version - 1),
        ..ExportScope::default()
    };
    let e = export_cells(
        &t,
        None,
        ExportFormat::Csv,
        &tmp.path().join("stale.csv"),
        NOW,
        &stale,
        1,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("changed since the export began"),
        "{e}"
    );
    assert!(!tmp.path().join("stale.csv").exists());
    let mut rd = csv::Reader::from_path(&csv_path).unwrap();
    assert_eq!(
        rd.headers().unwrap().iter().collect::<Vec<_>>(),
        ["row", "family", "qualifier", "timestamp", "type", "value"]
    );
    let got: Vec<String> = rd
        .records()
        .map(|r| {
            let r = r.unwrap();
            parse_cell(&r[0], &r[1], &r[2], &r[3], &r[4], &r[5])
        })
        .collect();
    same(&got, &want, "CSV");
    assert!(export_cells(
        &t,
        None,
        ExportFormat::Csv,
        &csv_path,
        NOW,
        &Default::default(),
        3
    )
    .is_err());

    let pq_path = tmp.path().join("cells.parquet");
    export_cells(
        &t,
        None,
        ExportFormat::Parquet,
        &pq_path,
        NOW,
        &Default::default(),
        3,
    )
    .unwrap();
    let one = tmp.path().join("cells-1.parquet");
    export_cells(
        &t,
        None,
        ExportFormat::Parquet,
        &one,
        NOW,
        &Default::default(),
        1,
    )
    .unwrap();
    assert!(std::fs::read(&one).unwrap() == std::fs::read(&pq_path).unwrap());
    let f = std::fs::File::open(&pq_path).unwrap();
    let builder =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    // A row group never holds two regions' cells: one per region with cells.
    let regions = t.manifest().unwrap().regions.len();
    assert_eq!(builder.metadata().num_row_groups(), regions);
    // Statistics where they can rule out row groups (row, timestamp, value), none for the
    // columns that take all their values in every row group.
    let group = builder.metadata().row_group(0);
    let with_stats: Vec<bool> = (0..6)
        .map(|i| group.column(i).statistics().is_some())
        .collect();
    assert_eq!(with_stats, [true, false, false, true, false, true]);
    let reader = builder.build().unwrap();
    let mut got = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let bin = |i: usize| b.column(i).as_binary::<i32>().clone();
        let (row, fam, q, v) = (bin(0), bin(1), bin(2), bin(5));
        let ts = b.column(3).as_primitive::<Int64Type>().clone();
        let ty = b.column(4).as_string::<i32>().clone();
        for i in 0..b.num_rows() {
            let c = Cell {
                cell_type: CellTypeOwned(CellType::from_name(ty.value(i)).unwrap()),
                ..Cell::put(
                    row.value(i),
                    fam.value(i),
                    q.value(i),
                    ts.value(i),
                    v.value(i),
                )
            };
            got.push(cell_line(&c.as_ref(), false));
        }
    }
    same(&got, &want, "Parquet");

    // A self-contained copy, and a bulk-load directory that attaches back to the same view.
    let r = t.export_table(None, &tmp.path().join("copy")).unwrap();
    let copy = Table::open(&r.path).unwrap();
    assert_eq!(scan_live(&copy, NOW), want);
    std::fs::remove_dir_all(t.dir().join("data")).ok();
    assert_eq!(scan_live(&copy, NOW), want, "the copy stands alone");
}

#[test]
fn bulkload_and_snapshot_exports() {
    use hfkit::pipeline::export::cells::{export_cells, ExportFormat};
    let tmp = tmpdir();
    let (t, families) = random_table(tmp.path(), 22, 3);
    t.snapshot_create("s").unwrap();
    let at_s = scan_live(&t, NOW);
    let mut rng = Rng(1);
    t.attach(&random_bulk(tmp.path(), &mut rng, &families, "x"))
        .unwrap();
    let bulk = tmp.path().join("bulk");
    let r = t.export_bulkload(Some("s"), &bulk).unwrap();
    assert!(r.files >= 3);
    let fresh = Table::create(
        &tmp.path().join("fresh"),
        "default:t",
        families.clone(),
        &[b"r10".to_vec(), b"r20".to_vec()],
    )
    .unwrap();
    fresh.attach(&bulk).unwrap();
    same(&scan_live(&fresh, NOW), &at_s, "bulk load of the export");
    let csv_path = tmp.path().join("s.csv");
    let r = export_cells(
        &t,
        Some("s"),
        ExportFormat::Csv,
        &csv_path,
        NOW,
        &Default::default(),
        2,
    )
    .unwrap();
    assert_eq!(r.cells as usize, at_s.len());
    let copy = t.export_table(Some("s"), &tmp.path().join("copy")).unwrap();
    assert_eq!(scan_live(&Table::open(&copy.path).unwrap(), NOW), at_s);
}
