//! Decoding one row key with a checked spec: split into terms, invertible terms undone into
//! field values, the others deferred for [`super::RowkeyInverse::verify`]
//! (`formats/rowkey.md` §"Inverting a spec").

use super::super::{apply, eval, Func, Node, TsFormat, TsUnit};
use super::{describe, format_f64, width, Recovered};
use crate::error::RowkeyError;
use crate::mapping::timestamp::TimestampFormat;
use hfkit_table::to_string_binary;

fn mismatch(node: &Node, reason: impl Into<String>) -> RowkeyError {
    RowkeyError::KeyMismatch {
        what: describe(node),
        reason: reason.into(),
    }
}

/// A field known from the row's cells that the key does not hold.
fn known_mismatch(name: &str, value: &[u8], there: &[u8]) -> RowkeyError {
    RowkeyError::KeyMismatch {
        what: format!("field '{name}'"),
        reason: format!(
            "the row's cells give '{}', but the row key has '{}' there",
            to_string_binary(value),
            to_string_binary(there)
        ),
    }
}

/// One key decode in progress.
pub(super) struct Decoder<'s, 'v> {
    pub(super) names: &'s [String],
    /// The spec's timestamp format (how `reverse_ts` / `bucket` read their input).
    pub(super) ts: &'s TimestampFormat,
    pub(super) values: &'v mut Vec<Option<Vec<u8>>>,
    pub(super) recovered: &'v mut Vec<Option<Recovered>>,
    pub(super) deferred: Vec<(&'s Node, Vec<u8>)>,
    pub(super) scratch: &'v mut Scratch,
}

/// Buffers of a decode, kept in [`super::KeyFields`] from key to key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Scratch {
    /// A known call's encoding, compared with its segment.
    out: Vec<u8>,
    /// A known call's input.
    input: Vec<u8>,
    /// `eval`'s buffers by depth.
    pool: Vec<Vec<u8>>,
}

impl<'s> Decoder<'s, '_> {
    fn known_width(&self, node: &Node) -> Option<usize> {
        let values = &*self.values;
        width(node, &|slot| {
            values.get(slot).and_then(|v| v.as_ref()).map(Vec::len)
        })
    }

    fn all_known(&self, nodes: &[Node]) -> bool {
        nodes.iter().all(|n| match n {
            Node::Literal(_) => true,
            Node::Field { slot, .. } => matches!(self.values.get(*slot), Some(Some(_))),
            Node::Call { input, .. } => self.all_known(input),
        })
    }

    /// Splits `bytes` into the terms `nodes` and decodes each.
    pub(super) fn concat(
        &mut self,
        nodes: &'s [Node],
        bytes: &[u8],
        exact: bool,
    ) -> Result<(), RowkeyError> {
        let mut pos = 0;
        for i in 0..nodes.len() {
            if let Node::Field { slot, name } = &nodes[i] {
                // A known field: say so when the key does not hold it (rather than a width).
                if let Some(Some(v)) = self.values.get(*slot) {
                    if !bytes[pos..].starts_with(v) {
                        let there = &bytes[pos..(pos + v.len()).min(bytes.len())];
                        return Err(known_mismatch(name, v, there));
                    }
                }
            }
            let end = self.segment_end(nodes, i, bytes, pos)?;
            self.node(&nodes[i], &bytes[pos..end], exact)?;
            pos = end;
        }
        if pos != bytes.len() {
            let last = nodes.last().map(describe).unwrap_or_default();
            return Err(RowkeyError::KeyMismatch {
                what: last,
                reason: format!(
                    "'{}' is left over after it",
                    to_string_binary(&bytes[pos..])
                ),
            });
        }
        Ok(())
    }

    /// Where the segment of `nodes[i]`, starting at `pos`, ends.
    fn segment_end(
        &self,
        nodes: &[Node],
        i: usize,
        bytes: &[u8],
        pos: usize,
    ) -> Result<usize, RowkeyError> {
        let left = bytes.len() - pos;
        if let Some(w) = self.known_width(&nodes[i]) {
            if w > left {
                return Err(mismatch(
                    &nodes[i],
                    format!("needs {w} bytes, the key has {left} left"),
                ));
            }
            return Ok(pos + w);
        }
        let rest: Option<usize> = nodes[i + 1..].iter().map(|n| self.known_width(n)).sum();
        if let Some(s) = rest {
            if s > left {
                return Err(mismatch(
                    &nodes[i],
                    format!("the terms after it need {s} bytes, the key has {left} left"),
                ));
            }
            return Ok(bytes.len() - s);
        }
        let mut s = 0;
        for n in &nodes[i + 1..] {
            let Some(w) = self.known_width(n) else {
                break;
            };
            if let Node::Literal(lit) = n {
                if !lit.is_empty() {
                    let from = pos + s;
                    let found = bytes
                        .get(from..)
                        .and_then(|b| b.windows(lit.len()).position(|w| w == lit.as_slice()));
                    return match found {
                        Some(p) => Ok(pos + p),
                        None => Err(mismatch(
                            n,
                            format!("not found after {}", describe(&nodes[i])),
                        )),
                    };
                }
            }
            s += w;
        }
        // `RowkeySpec::inverse` refuses specs where this happens.
        Err(RowkeyError::NotInvertible {
            what: describe(&nodes[i]),
            reason: "where it ends in the key is unknown".into(),
        })
    }

    fn node(&mut self, node: &'s Node, seg: &[u8], exact: bool) -> Result<(), RowkeyError> {
        match node {
            Node::Literal(b) => {
                if seg != b.as_slice() {
                    return Err(mismatch(
                        node,
                        format!("the row key has '{}' there", to_string_binary(seg)),
                    ));
                }
                Ok(())
            }
            Node::Field { slot, name } => match self.values.get(*slot) {
                Some(Some(v)) if v.as_slice() == seg => Ok(()),
                Some(Some(v)) => Err(known_mismatch(name, v, seg)),
                _ => {
                    if let (Some(v), Some(r)) =
                        (self.values.get_mut(*slot), self.recovered.get_mut(*slot))
                    {
                        *v = Some(seg.to_vec());
                        *r = Some(if exact {
                            Recovered::Exact
                        } else {
                            Recovered::Canonical
                        });
                    }
                    Ok(())
                }
            },
            Node::Call { func, input, what } => {
                if self.all_known(input) {
                    let mut out = std::mem::take(&mut self.scratch.out);
                    out.clear();
                    self.forward(*func, input, what, &mut out)?;
                    let same = out == seg;
                    self.scratch.out = out;
                    if !same {
                        return Err(mismatch(
                            node,
                            format!(
                                "the row key has '{}', the fields give '{}'",
                                to_string_binary(seg),
                                to_string_binary(&self.scratch.out)
                            ),
                        ));
                    }
                    return Ok(());
                }
                match *func {
                    Func::Salt { .. }
                    | Func::HashPrefix { .. }
                    | Func::Bucket(_)
                    | Func::Mod { .. } => {
                        self.deferred.push((node, seg.to_vec()));
                        Ok(())
                    }
                    Func::Reverse => {
                        let inner: Vec<u8> = seg.iter().rev().copied().collect();
                        self.concat(input, &inner, exact)
                    }
                    Func::ReverseDomain => {
                        // reverse_domain is its own inverse.
                        let mut inner = Vec::with_capacity(seg.len());
                        apply(Func::ReverseDomain, what, self.ts, seg, &mut inner)?;
                        self.concat(input, &inner, exact)
                    }
                    Func::ReverseTs(fmt, unit) => {
                        let reversed = match fmt {
                            TsFormat::Decimal => std::str::from_utf8(seg)
                                .ok()
                                .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
                                .and_then(|s| s.parse::<i64>().ok()),
                            TsFormat::Binary => <[u8; 8]>::try_from(seg)
                                .ok()
                                .map(i64::from_be_bytes)
                                .filter(|v| *v >= 0),
                        };
                        let Some(reversed) = reversed else {
                            return Err(mismatch(
                                node,
                                format!("'{}' is not a reversed timestamp", to_string_binary(seg)),
                            ));
                        };
                        let ms = match unit {
                            TsUnit::Millis => Some(i64::MAX - reversed),
                            TsUnit::Seconds => (i64::MAX - reversed).checked_mul(1000),
                        };
                        let Some(ms) = ms else {
                            return Err(mismatch(
                                node,
                                format!("'{}' is not a reversed timestamp", to_string_binary(seg)),
                            ));
                        };
                        // Written back in the spec's timestamp format; a format that drops
                        // part of the instant (say, the milliseconds) is caught by `verify`.
                        let Some(text) = self.ts.render(ms) else {
                            return Err(mismatch(
                                node,
                                format!("{ms} ms cannot be written as '{}'", self.ts.name()),
                            ));
                        };
                        self.concat(input, text.as_bytes(), false)
                    }
                    Func::Pad { width: w } => {
                        if !seg.iter().all(u8::is_ascii_digit) {
                            return Err(mismatch(
                                node,
                                format!("'{}' is not decimal digits", to_string_binary(seg)),
                            ));
                        }
                        let inner_width: Option<usize> =
                            input.iter().map(|n| self.known_width(n)).sum();
                        let text = match inner_width {
                            Some(iw) if iw <= w && seg[..w - iw].iter().all(|b| *b == b'0') => {
                                &seg[w - iw..]
                            }
                            Some(iw) => {
                                return Err(mismatch(
                                    node,
                                    format!(
                                        "'{}' does not hold a {iw}-digit value",
                                        to_string_binary(seg)
                                    ),
                                ))
                            }
                            None => {
                                let zeros = seg.iter().take_while(|b| **b == b'0').count();
                                &seg[zeros.min(seg.len().saturating_sub(1))..]
                            }
                        };
                        self.concat(input, text, false)
                    }
                    Func::I64Be => {
                        let Ok(b) = <[u8; 8]>::try_from(seg) else {
                            return Err(mismatch(node, "not 8 bytes"));
                        };
                        let v = (u64::from_be_bytes(b) ^ (1 << 63)) as i64;
                        self.concat(input, v.to_string().as_bytes(), false)
                    }
                    Func::F64Be => {
                        let Ok(b) = <[u8; 8]>::try_from(seg) else {
                            return Err(mismatch(node, "not 8 bytes"));
                        };
                        let ordered = u64::from_be_bytes(b);
                        let bits = if ordered >> 63 == 1 {
                            ordered & !(1 << 63)
                        } else {
                            !ordered
                        };
                        let v = f64::from_bits(bits);
                        if v.is_nan() {
                            return Err(mismatch(node, "holds NaN, which no import writes"));
                        }
                        self.concat(input, format_f64(v).as_bytes(), false)
                    }
                }
            }
        }
    }

    /// Encodes a call whose fields are all known.
    fn forward(
        &mut self,
        func: Func,
        input: &[Node],
        what: &str,
        out: &mut Vec<u8>,
    ) -> Result<(), RowkeyError> {
        let values = &*self.values;
        let get = |slot: usize| values.get(slot).and_then(|v| v.as_deref());
        let Scratch {
            input: buf, pool, ..
        } = &mut *self.scratch;
        buf.clear();
        eval(input, self.names, self.ts, &get, buf, pool, 0)?;
        apply(func, what, self.ts, buf, out)
    }
}
