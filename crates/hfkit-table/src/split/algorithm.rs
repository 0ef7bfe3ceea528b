//! HBase's pre-split algorithms (`RegionSplitter`'s HexStringSplit, DecimalStringSplit and
//! UniformSplit), bit for bit. Prose: `formats/schema.md` §"Splits".
//!
//! ```text
//! HexStringSplit / DecimalStringSplit (RegionSplitter.NumberStringSplit), radix r, rows as numbers:
//!   range = last - first + 1 ; size = floor(range / n) ; k_i = first + size*i   (i = 1..n-1)
//!   k_i written in radix r, lowercase, left-padded with '0' to the length of the last-row string
//!   defaults: hex 00000000..FFFFFFFF (width 8), decimal 00000000..99999999 (width 8)
//! UniformSplit (Bytes.split(first, last, inclusive = true, n-1)), rows as raw bytes:
//!   pad first and last with trailing zero bytes to equal length L;
//!   while last - first + 1 < n: append one zero byte to both (L += 1)
//!   interval = floor((last - first + 1) / n) ; k_i = first + interval*i as L big-endian bytes
//!   defaults: first = empty, last = FF x 8
//! ```
//!
//! The arithmetic is exact in `u128`, which covers the defaults and any first/last rows of up to
//! 15 bytes (UniformSplit) or 128 bits (the number algorithms); wider rows are refused.

use super::keys::{to_bytes_binary, to_string_binary};
use crate::error::{At, SchemaError};

/// The three pre-split algorithms built into HBase's `RegionSplitter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SplitAlgorithm {
    /// `RegionSplitter$HexStringSplit`: 8 lowercase hex digits.
    HexString,
    /// `RegionSplitter$DecimalStringSplit`: 8 decimal digits.
    DecimalString,
    /// `RegionSplitter$UniformSplit`: raw bytes, uniform over 8 bytes.
    Uniform,
}

/// The package and outer class of HBase's split algorithms (the `$` marks a nested class, as
/// `Configuration.getClassByName` needs it).
const REGION_SPLITTER_CLASS: &str = "org.apache.hadoop.hbase.util.RegionSplitter$";

impl SplitAlgorithm {
    pub const ALL: [SplitAlgorithm; 3] = [
        SplitAlgorithm::HexString,
        SplitAlgorithm::DecimalString,
        SplitAlgorithm::Uniform,
    ];

    /// HBase's simple class name, as `SPLITALGO => '...'` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            SplitAlgorithm::HexString => "HexStringSplit",
            SplitAlgorithm::DecimalString => "DecimalStringSplit",
            SplitAlgorithm::Uniform => "UniformSplit",
        }
    }

    /// Parses the simple class name (`HexStringSplit`) or the fully-qualified one
    /// (`org.apache.hadoop.hbase.util.RegionSplitter$HexStringSplit`). Case-sensitive, as in HBase.
    pub fn from_name(s: &str) -> Option<SplitAlgorithm> {
        let simple = s.strip_prefix(REGION_SPLITTER_CLASS).unwrap_or(s);
        SplitAlgorithm::ALL.into_iter().find(|a| a.name() == simple)
    }

    /// The algorithm with HBase's default first and last rows.
    pub fn splitter(self) -> Splitter {
        match self {
            SplitAlgorithm::HexString => Splitter::Number(NumberStringSplit::hex()),
            SplitAlgorithm::DecimalString => Splitter::Number(NumberStringSplit::decimal()),
            SplitAlgorithm::Uniform => Splitter::Uniform(UniformSplit::default()),
        }
    }

    /// The `regions - 1` split keys HBase's `split(regions)` returns with default first/last rows.
    pub fn split(self, regions: usize) -> Result<Vec<Vec<u8>>, SchemaError> {
        self.splitter().split(regions)
    }
}

/// A split algorithm with its (possibly user-set) first and last rows, like a configured
/// `RegionSplitter.SplitAlgorithm` instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Splitter {
    Number(NumberStringSplit),
    Uniform(UniformSplit),
}

impl Splitter {
    /// Sets the first row, in the algorithm's own syntax (digits of its radix for the number
    /// algorithms, `Bytes.toBytesBinary` text for UniformSplit), like `RegionSplitter --firstrow`.
    pub fn set_first_row(&mut self, row: &str) -> Result<(), SchemaError> {
        match self {
            Splitter::Number(s) => s.set_first_row(row),
            Splitter::Uniform(s) => s.set_first_row(row),
        }
    }

    /// Sets the last row; see [`Splitter::set_first_row`].
    pub fn set_last_row(&mut self, row: &str) -> Result<(), SchemaError> {
        match self {
            Splitter::Number(s) => s.set_last_row(row),
            Splitter::Uniform(s) => s.set_last_row(row),
        }
    }

    /// The `regions - 1` split keys for `regions` regions (at least 2).
    pub fn split(&self, regions: usize) -> Result<Vec<Vec<u8>>, SchemaError> {
        match self {
            Splitter::Number(s) => s.split(regions),
            Splitter::Uniform(s) => s.split(regions),
        }
    }
}

fn range_error(algorithm: &'static str, reason: impl Into<String>) -> SchemaError {
    SchemaError::SplitRange {
        algorithm,
        reason: reason.into(),
    }
}

/// Most regions hfkit pre-splits a table into (HBase has no fixed limit; a million regions is
/// far beyond any sane table and keeps a typo from allocating billions of keys).
pub const MAX_REGIONS: usize = 1_000_000;

fn check_regions(algorithm: &'static str, regions: usize) -> Result<u128, SchemaError> {
    if regions < 2 {
        return Err(range_error(
            algorithm,
            format!("number of regions must be greater than 1, got {regions}"),
        ));
    }
    if regions > MAX_REGIONS {
        return Err(range_error(
            algorithm,
            format!("{regions} regions is more than hfkit's limit of {MAX_REGIONS}"),
        ));
    }
    Ok(regions as u128)
}

/// HBase's `NumberStringSplit` (the base of HexStringSplit and DecimalStringSplit): rows are
/// numbers written in `radix`, zero-padded to the width of the last row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumberStringSplit {
    algorithm: SplitAlgorithm,
    radix: u32,
    first: u128,
    last: u128,
    /// Length of the last-row string: every key is left-padded with '0' to it.
    width: usize,
}

impl NumberStringSplit {
    /// HexStringSplit: `00000000`..`FFFFFFFF`, radix 16.
    pub fn hex() -> NumberStringSplit {
        NumberStringSplit {
            algorithm: SplitAlgorithm::HexString,
            radix: 16,
            first: 0,
            last: 0xFFFF_FFFF,
            width: 8,
        }
    }

    /// DecimalStringSplit: `00000000`..`99999999`, radix 10.
    pub fn decimal() -> NumberStringSplit {
        NumberStringSplit {
            algorithm: SplitAlgorithm::DecimalString,
            radix: 10,
            first: 0,
            last: 99_999_999,
            width: 8,
        }
    }

    fn parse_row(&self, which: &str, row: &str) -> Result<u128, SchemaError> {
        let digits_ok = !row.is_empty() && row.chars().all(|c| c.is_digit(self.radix));
        let parsed = if digits_ok {
            u128::from_str_radix(row, self.radix).ok()
        } else {
            None
        };
        parsed.ok_or_else(|| {
            range_error(
                self.algorithm.name(),
                format!(
                    "{which} row '{row}' is not a non-negative base-{} number of at most 128 bits",
                    self.radix
                ),
            )
        })
    }

    /// Sets the first row (digits of the radix). The key width does not change, as in HBase.
    pub fn set_first_row(&mut self, row: &str) -> Result<(), SchemaError> {
        self.first = self.parse_row("first", row)?;
        Ok(())
    }

    /// Sets the last row (digits of the radix); its length becomes the key width.
    pub fn set_last_row(&mut self, row: &str) -> Result<(), SchemaError> {
        self.last = self.parse_row("last", row)?;
        self.width = row.chars().count();
        Ok(())
    }

    /// `split(n)`: `first + floor((last - first + 1) / n) * i` for i = 1..n-1.
    pub fn split(&self, regions: usize) -> Result<Vec<Vec<u8>>, SchemaError> {
        let name = self.algorithm.name();
        let n = check_regions(name, regions)?;
        if self.last <= self.first {
            return Err(range_error(
                name,
                format!(
                    "last row ({}) is configured less than or equal to first row ({})",
                    self.render(self.last),
                    self.render(self.first)
                ),
            ));
        }
        // +1 because the last row is inclusive; last > first so the subtraction cannot wrap.
        let range = (self.last - self.first)
            .checked_add(1)
            .ok_or_else(|| range_error(name, "range exceeds 128 bits"))?;
        if range < n {
            return Err(range_error(
                name,
                format!("split granularity ({regions}) is greater than the range ({range})"),
            ));
        }
        let size = range / n;
        // first + size*i <= first + range - size <= last: no overflow.
        Ok((1..n)
            .map(|i| self.render(self.first + size * i).into_bytes())
            .collect())
    }

    /// `BigInteger.toString(radix)` (lowercase), left-padded with '0' to the key width.
    fn render(&self, v: u128) -> String {
        let digits = to_radix(v, self.radix);
        let pad = self.width.saturating_sub(digits.len());
        let mut s = "0".repeat(pad);
        s.push_str(&digits);
        s
    }
}

fn to_radix(mut v: u128, radix: u32) -> String {
    if v == 0 {
        return "0".to_string();
    }
    let mut out = Vec::new();
    while v > 0 {
        let d = (v % u128::from(radix)) as u32;
        out.push(char::from_digit(d, radix).unwrap_or('?'));
        v /= u128::from(radix);
    }
    out.iter().rev().collect()
}

/// HBase's `UniformSplit`: rows are raw bytes, split uniformly as big-endian numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UniformSplit {
    first: Vec<u8>,
    last: Vec<u8>,
}

impl Default for UniformSplit {
    /// From the empty row to `FF FF FF FF FF FF FF FF`.
    fn default() -> UniformSplit {
        UniformSplit {
            first: Vec::new(),
            last: vec![0xFF; 8],
        }
    }
}

/// Longest padded row the `u128` arithmetic handles (the value carries one more byte of headroom).
const UNIFORM_MAX_LEN: usize = 15;

impl UniformSplit {
    /// Sets the first row from `Bytes.toBytesBinary` text.
    pub fn set_first_row(&mut self, row: &str) -> Result<(), SchemaError> {
        self.first = to_bytes_binary(row).map_err(|e| SchemaError::SplitKey {
            at: At::default(),
            key: row.to_string(),
            reason: e.to_string(),
        })?;
        Ok(())
    }

    /// Sets the last row from `Bytes.toBytesBinary` text.
    pub fn set_last_row(&mut self, row: &str) -> Result<(), SchemaError> {
        self.last = to_bytes_binary(row).map_err(|e| SchemaError::SplitKey {
            at: At::default(),
            key: row.to_string(),
            reason: e.to_string(),
        })?;
        Ok(())
    }

    /// `Bytes.split(first, last, true, n - 1)` without its two end points.
    pub fn split(&self, regions: usize) -> Result<Vec<Vec<u8>>, SchemaError> {
        const NAME: &str = "UniformSplit";
        let n = check_regions(NAME, regions)?;
        if self.last <= self.first {
            return Err(range_error(
                NAME,
                format!(
                    "last row ({}) is configured less than or equal to first row ({})",
                    to_string_binary(&self.last),
                    to_string_binary(&self.first)
                ),
            ));
        }
        let mut len = self.first.len().max(self.last.len());
        let (first, diff) = loop {
            if len > UNIFORM_MAX_LEN {
                return Err(range_error(
                    NAME,
                    format!("rows longer than {UNIFORM_MAX_LEN} bytes (after padding) are not supported"),
                ));
            }
            let first = be_value(&self.first, len);
            let last = be_value(&self.last, len);
            if last <= first {
                // Only possible when padding makes them equal (e.g. "a" vs "a\x00").
                return Err(range_error(
                    NAME,
                    "first and last rows are equal once zero-padded",
                ));
            }
            let diff = last - first + 1;
            if diff >= n {
                break (first, diff);
            }
            // Too few values between the rows: HBase appends a zero byte to both and retries.
            len += 1;
        };
        let interval = diff / n;
        Ok((1..n)
            .map(|i| {
                let v = first + interval * i;
                v.to_be_bytes()[16 - len..].to_vec()
            })
            .collect())
    }
}

/// `bytes` padded with trailing zeros to `len` bytes, as a big-endian number (`len` <= 15).
fn be_value(bytes: &[u8], len: usize) -> u128 {
    let mut v: u128 = 0;
    for i in 0..len {
        v = (v << 8) | u128::from(bytes.get(i).copied().unwrap_or(0));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::split::tests::strs;
    use crate::split::Regions;
    use hfkit_testkit as fixtures;
    use proptest::prelude::*;

    #[test]
    fn algorithm_names() {
        for a in SplitAlgorithm::ALL {
            assert_eq!(SplitAlgorithm::from_name(a.name()), Some(a));
            let fq = format!("org.apache.hadoop.hbase.util.RegionSplitter${}", a.name());
            assert_eq!(SplitAlgorithm::from_name(&fq), Some(a));
        }
        assert_eq!(SplitAlgorithm::from_name("hexstringsplit"), None);
        assert_eq!(
            SplitAlgorithm::from_name("org.example.HexStringSplit"),
            None
        );
        assert_eq!(
            SplitAlgorithm::from_name("RegionSplitter$HexStringSplit"),
            None
        );
    }

    #[test]
    fn reference_examples() {
        let hex = SplitAlgorithm::HexString;
        assert_eq!(strs(&hex.split(3).unwrap()), ["55555555", "aaaaaaaa"]);
        assert_eq!(
            strs(&hex.split(10).unwrap()),
            [
                "19999999", "33333332", "4ccccccb", "66666664", "7ffffffd", "99999996", "b333332f",
                "ccccccc8", "e6666661"
            ]
        );
        assert_eq!(
            strs(&SplitAlgorithm::DecimalString.split(3).unwrap()),
            ["33333333", "66666666"]
        );
        let u = SplitAlgorithm::Uniform.split(3).unwrap();
        assert_eq!(u, [vec![0x55; 8], vec![0xAA; 8]]);
        let u16 = SplitAlgorithm::Uniform.split(16).unwrap();
        assert_eq!(u16.len(), 15);
        assert_eq!(u16[0], [0x10, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(u16[14], [0xF0, 0, 0, 0, 0, 0, 0, 0]);
    }

    /// Every file of HBase's own split keys: `ALGORITHM-N.txt` / `UniformSplit-N.hex.txt`.
    #[test]
    fn hbase_golden_split_keys() {
        let Some(dir) = fixtures::dir("hbase_golden_split_keys", "splits") else {
            return;
        };
        let mut files = 0;
        let mut keys_checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            if name == "README.md" {
                continue;
            }
            let stem = name.strip_suffix(".txt").unwrap();
            let (stem, hex) = match stem.strip_suffix(".hex") {
                Some(s) => (s, true),
                None => (stem, false),
            };
            let (algo, n) = stem.rsplit_once('-').unwrap();
            let algo = SplitAlgorithm::from_name(algo).unwrap_or_else(|| panic!("{name}"));
            let n: usize = n.parse().unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            let expected: Vec<Vec<u8>> = text
                .lines()
                .map(|l| {
                    if hex {
                        hfkit_format::text::parse_hex(l).unwrap()
                    } else {
                        l.as_bytes().to_vec()
                    }
                })
                .collect();
            let got = algo.split(n).unwrap();
            assert_eq!(got.len(), n - 1, "{name}");
            assert_eq!(got, expected, "{name}");
            // The keys are valid, sorted region boundaries.
            let regions = Regions::from_sorted(got).unwrap();
            assert_eq!(regions.len(), n, "{name}");
            files += 1;
            keys_checked += expected.len();
        }
        assert_eq!(files, 18, "expected 3 algorithms x 6 region counts");
        eprintln!("checked {keys_checked} split keys in {files} HBase fixture files");
    }

    #[test]
    fn custom_rows() {
        let mut s = SplitAlgorithm::HexString.splitter();
        s.set_first_row("10").unwrap();
        s.set_last_row("1f").unwrap();
        // range 16, width 2 (length of the last row).
        assert_eq!(strs(&s.split(4).unwrap()), ["14", "18", "1c"]);
        // First row set after the last keeps the width of the last row.
        let mut d = SplitAlgorithm::DecimalString.splitter();
        d.set_last_row("999").unwrap();
        d.set_first_row("100").unwrap();
        assert_eq!(strs(&d.split(3).unwrap()), ["400", "700"]);
        assert!(d.set_first_row("-1").is_err());
        assert!(d.set_first_row("12a").is_err());

        let mut u = SplitAlgorithm::Uniform.splitter();
        u.set_first_row("a").unwrap();
        u.set_last_row("c").unwrap();
        // range 'a'..='c' = 3 values < ... 2 regions fits: interval 1 -> "b".
        assert_eq!(u.split(2).unwrap(), [b"b".to_vec()]);
        // 4 regions need a wider range: one zero byte is appended -> 0x6100..=0x6300.
        let k = u.split(4).unwrap();
        assert_eq!(k, [vec![0x61, 0x80], vec![0x62, 0x00], vec![0x62, 0x80]]);
    }

    #[test]
    fn split_errors_say_why() {
        let e = SplitAlgorithm::HexString.split(1).unwrap_err().to_string();
        assert!(
            e.contains("HexStringSplit") && e.contains("greater than 1"),
            "{e}"
        );
        let mut s = SplitAlgorithm::DecimalString.splitter();
        s.set_last_row("5").unwrap();
        let e = s.split(10).unwrap_err().to_string();
        assert!(
            e.contains("granularity (10)") && e.contains("range (6)"),
            "{e}"
        );
        let mut s = SplitAlgorithm::HexString.splitter();
        s.set_first_row("ff").unwrap();
        s.set_last_row("0f").unwrap();
        assert!(s.split(2).unwrap_err().to_string().contains("less than"));
        let e = SplitAlgorithm::Uniform
            .split(usize::MAX)
            .unwrap_err()
            .to_string();
        assert!(e.contains("limit of 1000000"), "{e}");
        let mut u = SplitAlgorithm::Uniform.splitter();
        u.set_last_row(&"\\xFF".repeat(16)).unwrap();
        assert!(u.split(2).unwrap_err().to_string().contains("15 bytes"));
    }

    proptest! {
        #[test]
        fn number_splits_are_sorted(n in 2usize..500) {
            for a in SplitAlgorithm::ALL {
                let k = a.split(n).unwrap();
                prop_assert_eq!(k.len(), n - 1);
                prop_assert!(Regions::from_sorted(k).is_ok());
            }
        }

    }
}
