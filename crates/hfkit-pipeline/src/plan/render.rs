//! The plan as text (`formats/import.md` §"Plan"): the split points (a splits file), a table of
//! regions with a bar each (its cells against the largest region's), then the warnings.

use super::report::PlanReport;

/// The plan as text: the split points (a splits file), then a table of regions, then warnings.
pub fn render_text(p: &PlanReport) -> String {
    let mut out = String::new();
    let s = &p.sample;
    out.push_str(&format!(
        "sample: {} of {} records read ({}{}){}\n",
        s.records,
        s.records_read,
        s.method,
        if s.whole_input {
            "; the whole input"
        } else {
            ""
        },
        if s.rejected > 0 {
            format!(", {} would be rejected", s.rejected)
        } else {
            String::new()
        }
    ));
    match (s.input_records, &s.input_records_basis, s.scale) {
        (Some(n), Some(basis), Some(f)) => out.push_str(&format!(
            "input: {n} records ({basis}); expected counts = sample x {f:.3}\n"
        )),
        _ => out.push_str(
            "input: size unknown (a compressed file was not read to its end); counts are the sample's\n",
        ),
    }
    for t in std::iter::once(&p.table).chain(&p.indexes) {
        out.push_str(&format!(
            "\ntable {}: {} regions, split points from {}\n",
            t.table,
            t.regions.len(),
            t.splits_from
        ));
        if !t.split_points.is_empty() {
            out.push_str("split points (Bytes.toStringBinary, one per line):\n");
            for k in &t.split_points {
                out.push_str(&format!("  {k}\n"));
            }
        }
        out.push_str(&format!(
            "{:>6}  {:<20} {:<20} {:>12} {:>12} {:>14} {:>14} {:>7}\n",
            "region",
            "start",
            "end",
            "sample rows",
            "sample cells",
            "expected rows",
            "expected cells",
            "share"
        ));
        let opt = |v: Option<u64>| v.map_or("?".to_string(), |n| n.to_string());
        let most = t.regions.iter().map(|r| r.sample_cells).max().unwrap_or(0);
        for (i, r) in t.regions.iter().enumerate() {
            out.push_str(&format!(
                "{:>6}  {:<20} {:<20} {:>12} {:>12} {:>14} {:>14} {:>6.1}% {:<20}{}\n",
                i,
                shorten(&r.start_key),
                shorten(&r.end_key),
                r.sample_rows,
                r.sample_cells,
                opt(r.expected_rows),
                opt(r.expected_cells),
                r.share * 100.0,
                super::chart::bar(r.sample_cells, most, 20),
                if r.hot { " HOT" } else { "" }
            ));
        }
    }
    out.push_str(&format!(
        "\nrow keys: {} to {} bytes, mean {:.1}\n",
        p.rowkey_len_min, p.rowkey_len_max, p.rowkey_len_mean
    ));
    for w in &p.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// A key for the region table: `''` when empty, cut to 20 characters.
fn shorten(k: &str) -> String {
    if k.is_empty() {
        return "''".into();
    }
    let chars: Vec<char> = k.chars().collect();
    if chars.len() <= 20 {
        k.to_string()
    } else {
        chars[..17].iter().collect::<String>() + "..."
    }
}
