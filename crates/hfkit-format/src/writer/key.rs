//! The writer's keys: [`KeyShape`], the lengths and fixed fields of the last key kept beside
//! its bytes, and [`order_in_row`], the order of a cell against the one before it in its row
//! and family. Spec: `formats/hfile.md` §"Cells" (the flat key and its order), as the writer
//! checks it (§"File layout").

use std::cmp::Ordering;

use crate::bytes::compare_bytes;
use crate::cell::{compare_without_row, CellRef, KeyView};

/// The lengths and fixed fields of a flat key, kept beside its bytes so a [`KeyView`] of it
/// needs no parsing.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct KeyShape {
    row_len: usize,
    family_len: usize,
    qualifier_len: usize,
    timestamp: i64,
    type_code: u8,
}

impl KeyShape {
    #[inline(always)]
    pub(super) fn of(cell: &CellRef<'_>) -> KeyShape {
        KeyShape {
            row_len: cell.row.len(),
            family_len: cell.family.len(),
            qualifier_len: cell.qualifier.len(),
            timestamp: cell.timestamp,
            type_code: cell.cell_type.code(),
        }
    }

    /// The shape of a flat key (`None` if it does not parse).
    pub(super) fn of_key(key: &[u8]) -> Option<KeyShape> {
        let v = KeyView::parse(key)?;
        Some(KeyShape {
            row_len: v.row.len(),
            family_len: v.family.len(),
            qualifier_len: v.qualifier.len(),
            timestamp: v.timestamp,
            type_code: v.type_code,
        })
    }

    /// The view of `key`, whose shape this is (`None` if the lengths do not fit).
    #[inline]
    pub(super) fn view<'a>(&self, key: &'a [u8]) -> Option<KeyView<'a>> {
        let family_at = 2 + self.row_len + 1;
        let qualifier_at = family_at + self.family_len;
        Some(KeyView {
            row: key.get(2..2 + self.row_len)?,
            family: key.get(family_at..qualifier_at)?,
            qualifier: key.get(qualifier_at..qualifier_at + self.qualifier_len)?,
            timestamp: self.timestamp,
            type_code: self.type_code,
        })
    }
}

/// The order of `cell` against `prev`, the cell before it in the same row and family
/// (`Greater`: out of order; `Equal`: the same key).
#[inline(always)]
pub(super) fn order_in_row(prev: &CellRef<'_>, cell: &CellRef<'_>) -> Ordering {
    if cell.family.is_empty() {
        compare_without_row(&KeyView::of(prev), &KeyView::of(cell))
    } else {
        compare_bytes(prev.qualifier, cell.qualifier)
            .then(cell.timestamp.cmp(&prev.timestamp))
            .then(cell.cell_type.code().cmp(&prev.cell_type.code()))
    }
}
