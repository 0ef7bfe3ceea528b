//! Deterministic TPC-H `lineitem`-shaped cells for benchmarks (shared by bench targets:
//! `mod lineitem;` from a file in `benches/`).
//!
//! ```text
//! row:        salt (2 hex digits, a hash of the order key) | orderkey (10 digits) | linenumber (1 digit)
//! family:     "f"
//! qualifiers: the 16 lineitem columns (l_comment ... l_tax), in byte order
//! values:     TPC-H-like strings: dates, decimals, flags, ship modes, comments of 10-43 chars
//! ```
//! Rows are sorted, so the cells come out in HBase order. One timestamp, type Put, no tags.
#![allow(dead_code)]

use hfkit::format::cell::{CellRef, CellType};

pub const FAMILY: &[u8] = b"f";
pub const TIMESTAMP: i64 = 1_700_000_000_000;
/// The lineitem columns in byte order (= HBase qualifier order).
pub const QUALIFIERS: [&str; 16] = [
    "l_comment",
    "l_commitdate",
    "l_discount",
    "l_extendedprice",
    "l_linenumber",
    "l_linestatus",
    "l_orderkey",
    "l_partkey",
    "l_quantity",
    "l_receiptdate",
    "l_returnflag",
    "l_shipdate",
    "l_shipinstruct",
    "l_shipmode",
    "l_suppkey",
    "l_tax",
];
const ROW_LEN: usize = 13;

const WORDS: [&str; 24] = [
    "furiously",
    "quickly",
    "carefully",
    "blithely",
    "slyly",
    "regular",
    "express",
    "final",
    "pending",
    "ironic",
    "special",
    "bold",
    "deposits",
    "requests",
    "accounts",
    "packages",
    "theodolites",
    "instructions",
    "foxes",
    "pinto",
    "beans",
    "dependencies",
    "sleep",
    "haggle",
];
const SHIP_INSTRUCT: [&str; 4] = [
    "DELIVER IN PERSON",
    "COLLECT COD",
    "NONE",
    "TAKE BACK RETURN",
];
const SHIP_MODE: [&str; 7] = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"];

/// splitmix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The cells, stored compactly (rows and values in arenas).
pub struct Lineitem {
    rows: Vec<[u8; ROW_LEN]>,
    values: Vec<u8>,
    /// End of each cell's value in `values`, row-major (16 per row).
    value_ends: Vec<u32>,
}

fn date(rng: &mut Rng, out: &mut Vec<u8>) {
    let y = 1992 + rng.below(7);
    let m = 1 + rng.below(12);
    let d = 1 + rng.below(28);
    out.extend_from_slice(format!("{y}-{m:02}-{d:02}").as_bytes());
}

impl Lineitem {
    /// At least `min_cells` cells (whole rows of 16).
    pub fn generate(min_cells: usize) -> Lineitem {
        let n_rows = min_cells.div_ceil(QUALIFIERS.len());
        let mut rng = Rng(42);
        let mut rows = Vec::with_capacity(n_rows);
        let mut orderkey = 0u64;
        while rows.len() < n_rows {
            orderkey += 1 + rng.below(4);
            let lines = 1 + rng.below(7);
            let salt = (orderkey.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8;
            for line in 1..=lines {
                if rows.len() == n_rows {
                    break;
                }
                let s = format!("{salt:02x}{orderkey:010}{line}");
                let mut r = [0u8; ROW_LEN];
                r.copy_from_slice(s.as_bytes());
                rows.push(r);
            }
        }
        rows.sort_unstable();
        let mut values = Vec::with_capacity(n_rows * 16 * 8);
        let mut value_ends = Vec::with_capacity(n_rows * 16);
        for row in &rows {
            let orderkey = std::str::from_utf8(&row[2..12])
                .unwrap()
                .trim_start_matches('0');
            let line = row[12] - b'0';
            let quantity = 1 + rng.below(50);
            let price_cents = quantity * (90_000 + rng.below(1_000_000)) / 10;
            for q in QUALIFIERS {
                match q {
                    "l_comment" => {
                        let target = 10 + rng.below(34) as usize;
                        let start = values.len();
                        while values.len() - start < target {
                            if values.len() > start {
                                values.push(b' ');
                            }
                            values.extend_from_slice(WORDS[rng.below(24) as usize].as_bytes());
                        }
                        values.truncate(start + target);
                    }
                    "l_commitdate" | "l_receiptdate" | "l_shipdate" => date(&mut rng, &mut values),
                    "l_discount" => {
                        values.extend_from_slice(format!("0.{:02}", rng.below(11)).as_bytes())
                    }
                    "l_tax" => {
                        values.extend_from_slice(format!("0.{:02}", rng.below(9)).as_bytes())
                    }
                    "l_extendedprice" => values.extend_from_slice(
                        format!("{}.{:02}", price_cents / 100, price_cents % 100).as_bytes(),
                    ),
                    "l_linenumber" => values.push(b'0' + line),
                    "l_linestatus" => values.push(if rng.below(2) == 0 { b'O' } else { b'F' }),
                    "l_orderkey" => values.extend_from_slice(orderkey.as_bytes()),
                    "l_partkey" => {
                        values.extend_from_slice((1 + rng.below(200_000)).to_string().as_bytes())
                    }
                    "l_suppkey" => {
                        values.extend_from_slice((1 + rng.below(10_000)).to_string().as_bytes())
                    }
                    "l_quantity" => values.extend_from_slice(quantity.to_string().as_bytes()),
                    "l_returnflag" => values.push(b"NRA"[rng.below(3) as usize]),
                    "l_shipinstruct" => {
                        values.extend_from_slice(SHIP_INSTRUCT[rng.below(4) as usize].as_bytes())
                    }
                    "l_shipmode" => {
                        values.extend_from_slice(SHIP_MODE[rng.below(7) as usize].as_bytes())
                    }
                    _ => unreachable!(),
                }
                value_ends.push(values.len() as u32);
            }
        }
        Lineitem {
            rows,
            values,
            value_ends,
        }
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.value_ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.value_ends.is_empty()
    }

    /// Calls `f` on every cell, in HBase order.
    pub fn for_each(&self, mut f: impl FnMut(&CellRef<'_>)) {
        self.for_each_row(|cells| cells.iter().for_each(&mut f));
    }

    /// Calls `f` on the cells of every row (16 each), in HBase order. The row's cells are
    /// one array kept across rows: the family, qualifiers, timestamp and type are set once and
    /// only the row and values change per row (as a caller holding parsed columns would do).
    pub fn for_each_row(&self, mut f: impl FnMut(&[CellRef<'_>])) {
        let Some(first_row) = self.rows.first() else {
            return;
        };
        let mut cells = QUALIFIERS.map(|q| CellRef {
            row: first_row,
            family: FAMILY,
            qualifier: q.as_bytes(),
            timestamp: TIMESTAMP,
            cell_type: CellType::Put,
            value: &[],
            tags: &[],
            seq_id: 0,
        });
        let mut start = 0usize;
        for (row, ends) in self
            .rows
            .iter()
            .zip(self.value_ends.chunks_exact(QUALIFIERS.len()))
        {
            for (cell, &end) in cells.iter_mut().zip(ends) {
                let end = end as usize;
                cell.row = row;
                cell.value = &self.values[start..end];
                start = end;
            }
            f(&cells);
        }
    }
}

/// The cells of `data` in the record layout of a file written with `opts` (HBase's KeyValue
/// bytes, what `HFileWriter::append_records` takes), and the offsets that cut them into calls
/// of about `call_bytes` (whole records), from 0 to the end.
pub fn records_of(
    data: &Lineitem,
    opts: &hfkit::format::writer::WriterOptions,
    call_bytes: usize,
) -> (Vec<u8>, Vec<usize>) {
    use hfkit::format::encoding::{CellEncoder, EncodingContext, NoneEncoder};
    let mut enc = NoneEncoder::new(EncodingContext {
        include_tags: opts.include_tags,
        include_mvcc: opts.include_mvcc,
        compress_tags: opts.compress_tags,
    });
    let mut records = Vec::new();
    let mut calls = vec![0];
    data.for_each(|c| {
        enc.encode(c, &mut records)
            .expect("a lineitem cell encodes");
        if records.len() - calls[calls.len() - 1] >= call_bytes {
            calls.push(records.len());
        }
    });
    if calls[calls.len() - 1] < records.len() {
        calls.push(records.len());
    }
    (records, calls)
}
