//! Region balance as pictures (`formats/import.md` §"Plan"):
//! a bar per region in the terminal, and `--chart FILE.svg`, a small SVG chart of the same
//! numbers, for `hfkit plan` (expected cells per region) and `hfkit table describe` (cells,
//! bytes and files per region). Written by hand: a few `<rect>` and `<text>` elements need no
//! drawing library.
//!
//! ```text
//! chart    title, then one band per region, top to bottom in key order:
//!          label (region and start key) | cells bar (width ∝ cells / the largest region's)
//!          [| bytes bar, thinner, below it] | "N files" | "HOT" when marked
//! colours  cells #1f77b4, a hot region's cells #d62728, bytes #7f7f7f
//! ```

use std::fmt::Write as _;
use std::path::Path;

/// Bar colours: a region's cells, a hot region's cells, its bytes.
pub const CELLS: &str = "#1f77b4";
pub const HOT: &str = "#d62728";
pub const BYTES: &str = "#7f7f7f";

/// Pixels: the chart's width, the label column, a region's band, the bar area's left edge.
pub const WIDTH: u32 = 800;
const LABEL: u32 = 220;
pub const BAND: u32 = 20;
pub const TOP: u32 = 40;
const BARS: u32 = 440;

/// One region of a chart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RegionBar {
    /// The region's id (or number) and start key, as the text forms show them.
    pub label: String,
    pub cells: u64,
    /// Bytes of its store files (a table's; a plan has none).
    pub bytes: Option<u64>,
    /// Its store files (a table's).
    pub files: Option<usize>,
    /// More than twice the mean cells of a region.
    pub hot: bool,
}

/// Marks the regions holding more than twice the mean cells (the plan's and the import's
/// rule for a hot region).
pub fn mark_hot(regions: &mut [RegionBar]) {
    let total: u64 = regions.iter().map(|r| r.cells).sum();
    let n = regions.len().max(1) as f64;
    for r in regions.iter_mut() {
        r.hot = regions_hot(r.cells, total, n);
    }
}

fn regions_hot(cells: u64, total: u64, n: f64) -> bool {
    total > 0 && cells as f64 > 2.0 * total as f64 / n
}

/// A bar of `width` characters for `part` of `whole` (eighths of a character with Unicode's
/// block elements), for the terminal.
pub fn bar(part: u64, whole: u64, width: usize) -> String {
    if whole == 0 {
        return String::new();
    }
    let eighths = ((part as f64 / whole as f64) * (width * 8) as f64).round() as usize;
    let mut s = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        s.push([' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'][eighths % 8]);
    }
    s
}

/// The SVG chart of `regions` under `title` (see the module's documentation).
pub fn svg(title: &str, regions: &[RegionBar]) -> String {
    let max_cells = regions.iter().map(|r| r.cells).max().unwrap_or(0).max(1);
    let max_bytes = regions
        .iter()
        .filter_map(|r| r.bytes)
        .max()
        .unwrap_or(0)
        .max(1);
    let height = TOP + BAND * regions.len() as u32 + 30;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = write!(
        s,
        r#"<rect width="{WIDTH}" height="{height}" fill="white"/><text x="10" y="20" font-size="14">{}</text>"#,
        escape(title)
    );
    let _ = write!(
        s,
        r#"<text x="{LABEL}" y="{}" fill="{CELLS}">cells</text><text x="{}" y="{}" fill="{BYTES}">bytes</text><text x="{}" y="{}" fill="{HOT}">HOT: over twice the mean</text>"#,
        TOP - 6,
        LABEL + 40,
        TOP - 6,
        LABEL + 90,
        TOP - 6
    );
    for (i, r) in regions.iter().enumerate() {
        let y = TOP + BAND * i as u32;
        let w = |part: u64, whole: u64| (part as f64 / whole as f64 * f64::from(BARS)).round();
        let fill = if r.hot { HOT } else { CELLS };
        let _ = write!(
            s,
            r#"<text x="10" y="{}">{}</text><rect x="{LABEL}" y="{}" width="{}" height="{}" fill="{fill}"/>"#,
            y + 13,
            escape(&r.label),
            y + 2,
            w(r.cells, max_cells),
            if r.bytes.is_some() { 10 } else { 16 },
        );
        if let Some(b) = r.bytes {
            let _ = write!(
                s,
                r#"<rect x="{LABEL}" y="{}" width="{}" height="5" fill="{BYTES}"/>"#,
                y + 13,
                w(b, max_bytes)
            );
        }
        let mut note = r.files.map(|f| format!("{f} files")).unwrap_or_default();
        if r.hot {
            note.push_str(" HOT");
        }
        let _ = write!(
            s,
            r#"<text x="{}" y="{}">{}</text>"#,
            LABEL + BARS + 10,
            y + 13,
            escape(note.trim())
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Writes the chart to `path`, replacing it whole (written beside it, then renamed); an error
/// names the path.
pub fn write(path: &Path, title: &str, regions: &[RegionBar]) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".hfkit-tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, svg(title, regions)).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}

/// Text for SVG: `&`, `<`, `>` and `"` escaped.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_count_eighths_and_hot_is_twice_the_mean() {
        assert_eq!(bar(1, 2, 4), "██");
        assert_eq!(bar(1, 16, 2), "▏");
        assert_eq!(bar(0, 5, 10), "");
        assert_eq!(bar(3, 0, 10), "");
        let mut r: Vec<RegionBar> = [10, 10, 10, 70]
            .iter()
            .map(|&cells| RegionBar {
                cells,
                ..RegionBar::default()
            })
            .collect();
        mark_hot(&mut r);
        assert_eq!(
            r.iter().map(|r| r.hot).collect::<Vec<_>>(),
            [false, false, false, true]
        );
        let svg = svg("a <b>", &r);
        assert!(svg.contains("a &lt;b&gt;") && svg.contains(HOT), "{svg}");
    }
}
