//! Inverting a rowkey spec: a row key back to the field values that encode to it, so that a
//! table can be exported as the records an import with the same mapping reads back
//! (`pipeline::export`). Prose: `formats/rowkey.md` §"Inverting a spec".
//!
//! ```text
//! "literal"                      must be there
//! field                          its segment's bytes                         exact
//! reverse(x), reverse_domain(x)  undone (each is its own inverse)            exact
//! reverse_ts(x[, dec|bin])       the epoch ms, as decimal text               canonical
//! i64be(x), f64be(x)             the number, as decimal text                 canonical
//! pad(x, W)                      the digits without leading zeros            canonical
//! salt, hash_prefix, bucket      not invertible: skipped (fixed width), then checked by
//!                                encoding fields recovered elsewhere
//! ```
//!
//! Segments: a term of known width (a literal, a fixed-width function, a field whose value is
//! already known) takes that many bytes. A term of unknown width takes what is left when every
//! term after it has a known width; otherwise it ends at the first occurrence of the next
//! literal (after the known-width terms in between). A spec where neither applies (`a + b`) is
//! refused by [`RowkeySpec::inverse`], before any row is read.
//!
//! *Canonical* values re-encode to the same key but may not be the input's text (`007` comes
//! back as `7`); the export prefers an exact source when the mapping has one.

use super::{apply, encode_key, eval, BucketUnit, Func, Node, RowkeySpec, TsFormat};

mod decode;
use crate::error::RowkeyError;
use decode::Decoder;
use hfkit_table::to_string_binary;

/// How a field's value came out of a row key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovered {
    /// The input's bytes (a field reference, possibly under `reverse` / `reverse_domain`).
    Exact,
    /// A text that encodes the same (numbers as decimal, `pad` without leading zeros).
    Canonical,
}

/// What a field is used as in the key, by the function nearest to it: says which Parquet type
/// can carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyUse {
    /// Its bytes, as they are (directly, or under `reverse` / `reverse_domain`).
    Text,
    /// `pad`: decimal digits of any length.
    Digits,
    /// `reverse_ts`, `i64be`, `bucket`: a 64-bit integer.
    Integer,
    /// `f64be`: a double.
    Float,
    /// `salt`, `hash_prefix`: hashed as text.
    Hashed,
}

/// A rowkey spec checked for inversion ([`RowkeySpec::inverse`]).
#[derive(Clone, Debug)]
pub struct RowkeyInverse {
    spec: RowkeySpec,
    uses: Vec<(usize, KeyUse)>,
}

/// The values of a spec's fields (indexed like [`RowkeySpec::fields`]) while a key is decoded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyFields {
    /// `Some` before decoding: known from elsewhere (exact); after: known.
    pub values: Vec<Option<Vec<u8>>>,
    /// How the key gave a value (`None`: it did not, the value was known before).
    pub recovered: Vec<Option<Recovered>>,
    /// Buffers a decode reuses, so that decoding key after key into one `KeyFields` does not
    /// allocate them for every key.
    scratch: decode::Scratch,
}

/// Buffers [`RowkeyInverse::verify_in`] reuses from key to key.
#[derive(Debug, Default)]
pub struct VerifyScratch {
    /// `eval`'s buffers by depth.
    pool: Vec<Vec<u8>>,
    /// A deferred term's input.
    buf: Vec<u8>,
    /// A deferred term's encoding, then the whole key's.
    out: Vec<u8>,
}

/// The terms of a decoded key that could not be inverted, to be checked by
/// [`RowkeyInverse::verify`] once every field is known.
#[derive(Debug, Default)]
pub struct Deferred<'s> {
    terms: Vec<(&'s Node, Vec<u8>)>,
}

impl<'s> Deferred<'s> {
    /// Number of terms waiting for a check.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

impl RowkeySpec {
    /// Checks that a row key of this spec can be split into its terms and every field the spec
    /// reads recovered: from an invertible part of the key or, for fields only under `salt`,
    /// `hash_prefix` or `bucket`, from `elsewhere` (fields the caller recovers another way).
    /// Errors name the term: `rowkey spec: salt(16, id): cannot be inverted: ...`.
    pub fn inverse(&self, elsewhere: &[&str]) -> Result<RowkeyInverse, RowkeyError> {
        let mut a = Analysis {
            in_key: vec![false; self.fields.len()],
            needs: Vec::new(),
            uses: Vec::new(),
        };
        a.concat(&self.nodes, None, KeyUse::Text)?;
        for (what, slot) in &a.needs {
            let name = &self.fields[*slot];
            if !a.in_key[*slot] && !elsewhere.contains(&name.as_str()) {
                return Err(RowkeyError::NotInvertible {
                    what: what.clone(),
                    reason: format!(
                        "field '{name}' appears nowhere else (in no invertible part of the row \
                         key, and no [[column]] holds it), so it cannot be recovered"
                    ),
                });
            }
        }
        Ok(RowkeyInverse {
            spec: self.clone(),
            uses: a.uses,
        })
    }
}

impl RowkeyInverse {
    pub fn spec(&self) -> &RowkeySpec {
        &self.spec
    }

    /// Every place a field occurs in the key, as `(slot, use)`.
    pub fn uses(&self) -> &[(usize, KeyUse)] {
        &self.uses
    }

    /// An empty [`KeyFields`] for this spec.
    pub fn fields(&self) -> KeyFields {
        let n = self.spec.fields.len();
        KeyFields {
            values: vec![None; n],
            recovered: vec![None; n],
            scratch: decode::Scratch::default(),
        }
    }

    /// Splits `key` into the spec's terms and recovers the fields of invertible ones into
    /// `fields` (values already there are checked against the key instead, and give widths).
    /// Terms that cannot be inverted and whose fields are not yet known are returned, for
    /// [`RowkeyInverse::verify`].
    pub fn decode(&self, key: &[u8], fields: &mut KeyFields) -> Result<Deferred<'_>, RowkeyError> {
        let n = self.spec.fields.len();
        fields.values.resize(n, None);
        fields.recovered.resize(n, None);
        let mut d = Decoder {
            names: &self.spec.fields,
            ts: &self.spec.ts_format,
            values: &mut fields.values,
            recovered: &mut fields.recovered,
            deferred: Vec::new(),
            scratch: &mut fields.scratch,
        };
        d.concat(&self.spec.nodes, key, true)?;
        Ok(Deferred { terms: d.deferred })
    }

    /// Checks the deferred terms of a decode against `values` (now complete), then that the
    /// values encode to exactly `key`.
    pub fn verify(
        &self,
        key: &[u8],
        deferred: &Deferred<'_>,
        values: &[Option<Vec<u8>>],
    ) -> Result<(), RowkeyError> {
        self.verify_in(key, deferred, values, &mut VerifyScratch::default())
    }

    /// [`verify`](Self::verify) in the buffers of `scratch`, which a caller checking key after
    /// key keeps, so that a check does not allocate them each time.
    pub fn verify_in(
        &self,
        key: &[u8],
        deferred: &Deferred<'_>,
        values: &[Option<Vec<u8>>],
        scratch: &mut VerifyScratch,
    ) -> Result<(), RowkeyError> {
        let get = |slot: usize| values.get(slot).and_then(|v| v.as_deref());
        let VerifyScratch { pool, buf, out } = scratch;
        for (node, seg) in &deferred.terms {
            let Node::Call { func, input, what } = node else {
                continue;
            };
            buf.clear();
            match eval(
                input,
                &self.spec.fields,
                &self.spec.ts_format,
                &get,
                buf,
                pool,
                0,
            ) {
                Err(RowkeyError::MissingField { field }) => {
                    return Err(RowkeyError::KeyMismatch {
                        what: what.clone(),
                        reason: format!(
                            "field '{field}' has no value to check it with (it is in no \
                             invertible part of the row key, and its column has no cell in \
                             this row)"
                        ),
                    })
                }
                r => r?,
            }
            out.clear();
            apply(*func, what, &self.spec.ts_format, buf, out)?;
            if out.as_slice() != seg.as_slice() {
                return Err(RowkeyError::KeyMismatch {
                    what: what.clone(),
                    reason: format!(
                        "the row key has '{}', the recovered fields give '{}'",
                        to_string_binary(seg),
                        to_string_binary(out)
                    ),
                });
            }
        }
        out.clear();
        encode_key(
            &self.spec.nodes,
            &self.spec.fields,
            &self.spec.ts_format,
            &get,
            out,
            pool,
        )?;
        if out.as_slice() != key {
            return Err(RowkeyError::KeyMismatch {
                what: "row key".into(),
                reason: format!("the recovered fields encode to '{}'", to_string_binary(out)),
            });
        }
        Ok(())
    }
}

/// Output width of a function, when it does not depend on the input.
fn fixed_width(func: Func) -> Option<usize> {
    match func {
        Func::Salt { width, .. } => Some(width),
        Func::HashPrefix { chars } => Some(chars),
        Func::Mod { width, .. } => Some(width),
        Func::ReverseTs(TsFormat::Decimal, _) => Some(super::REVERSE_TS_DIGITS),
        Func::ReverseTs(TsFormat::Binary, _) | Func::I64Be | Func::F64Be => Some(8),
        Func::Bucket(BucketUnit::Hour) => Some(10),
        Func::Bucket(BucketUnit::Day) | Func::Bucket(BucketUnit::Week) => Some(8),
        Func::Bucket(BucketUnit::Month) => Some(6),
        Func::Bucket(BucketUnit::Span { digits, .. }) => Some(digits),
        Func::Pad { width } => Some(width),
        Func::Reverse | Func::ReverseDomain => None,
    }
}

/// Width of a term's output, given the widths of fields (`None` = unknown).
fn width(node: &Node, field: &dyn Fn(usize) -> Option<usize>) -> Option<usize> {
    match node {
        Node::Literal(b) => Some(b.len()),
        Node::Field { slot, .. } => field(*slot),
        Node::Call { func, input, .. } => {
            fixed_width(*func).or_else(|| input.iter().map(|n| width(n, field)).sum())
        }
    }
}

/// Whether the end of term `i` can be found: its width is known, or every later term's is, or
/// a literal follows it after terms of known width.
fn delimited(nodes: &[Node], i: usize, field: &dyn Fn(usize) -> Option<usize>) -> bool {
    if width(&nodes[i], field).is_some() {
        return true;
    }
    for n in &nodes[i + 1..] {
        match (n, width(n, field)) {
            (_, None) => return false,
            (Node::Literal(b), Some(_)) if !b.is_empty() => return true,
            _ => {}
        }
    }
    true
}

/// A term, for messages.
fn describe(node: &Node) -> String {
    match node {
        Node::Literal(b) => format!("the literal \"{}\"", to_string_binary(b)),
        Node::Field { name, .. } => format!("field '{name}'"),
        Node::Call { what, .. } => what.clone(),
    }
}

/// The static check of [`RowkeySpec::inverse`].
struct Analysis {
    /// Field occurs in an invertible part of the key.
    in_key: Vec<bool>,
    /// (call, field) for fields under a call that cannot be inverted.
    needs: Vec<(String, usize)>,
    uses: Vec<(usize, KeyUse)>,
}

impl Analysis {
    /// `hidden`: the non-invertible call this concatenation is under.
    fn concat(
        &mut self,
        nodes: &[Node],
        hidden: Option<&str>,
        class: KeyUse,
    ) -> Result<(), RowkeyError> {
        if hidden.is_none() {
            for i in 0..nodes.len() {
                if !delimited(nodes, i, &|_| None) {
                    let next = nodes
                        .get(i + 1)
                        .map(describe)
                        .unwrap_or_else(|| "the end".into());
                    return Err(RowkeyError::NotInvertible {
                        what: describe(&nodes[i]),
                        reason: format!(
                            "its width varies and {next} follows it without a separator, so \
                             where it ends in the key is unknown (put a string literal between \
                             them, or give it a fixed width with pad)"
                        ),
                    });
                }
            }
        }
        for n in nodes {
            match n {
                Node::Literal(_) => {}
                Node::Field { slot, .. } => {
                    self.uses.push((*slot, class));
                    match hidden {
                        None => self.in_key[*slot] = true,
                        Some(what) => self.needs.push((what.to_string(), *slot)),
                    }
                }
                Node::Call { func, input, what } => {
                    let (hides, class) = match func {
                        Func::Salt { .. } | Func::HashPrefix { .. } => (true, KeyUse::Hashed),
                        Func::Bucket(_) | Func::Mod { .. } => (true, KeyUse::Integer),
                        Func::ReverseTs(..) | Func::I64Be => (false, KeyUse::Integer),
                        Func::F64Be => (false, KeyUse::Float),
                        Func::Pad { .. } => (false, KeyUse::Digits),
                        Func::Reverse | Func::ReverseDomain => (false, class),
                    };
                    let hidden = match hidden {
                        Some(h) => Some(h),
                        None if hides => Some(what.as_str()),
                        None => None,
                    };
                    self.concat(input, hidden, class)?;
                }
            }
        }
        Ok(())
    }
}

/// A double as the shortest decimal text that parses back to it (Rust's `Display`, which is
/// also how Parquet doubles are read: `formats/import.md`).
pub fn format_f64(v: f64) -> String {
    format!("{v}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(spec: &RowkeySpec, fields: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        spec.encode(
            &|n: &str| fields.iter().find(|(f, _)| *f == n).map(|(_, v)| *v),
            &mut out,
        )
        .unwrap();
        out
    }

    /// Encodes `fields`, decodes the key back, verifies it; returns each field's value.
    fn round_trip(spec: &str, fields: &[(&str, &[u8])]) -> Vec<(String, Vec<u8>)> {
        let spec = RowkeySpec::parse(spec).unwrap();
        let k = key(&spec, fields);
        let inv = spec.inverse(&[]).unwrap();
        let mut kf = inv.fields();
        let deferred = inv.decode(&k, &mut kf).unwrap();
        inv.verify(&k, &deferred, &kf.values).unwrap();
        spec.fields()
            .iter()
            .cloned()
            .zip(kf.values.into_iter().map(Option::unwrap))
            .collect()
    }

    fn values(v: &[(String, Vec<u8>)]) -> Vec<&[u8]> {
        v.iter().map(|(_, b)| b.as_slice()).collect()
    }

    #[test]
    fn field_refs_split_at_separators() {
        let got = round_trip(
            r#"a + "_" + b + "::" + c"#,
            &[("a", b"x"), ("b", b"y:z"), ("c", b"w_v")],
        );
        assert_eq!(values(&got), [b"x".as_slice(), b"y:z", b"w_v"]);
        // An empty field is fine.
        let got = round_trip(r#"a + "_" + b"#, &[("a", b""), ("b", b"q")]);
        assert_eq!(values(&got), [b"".as_slice(), b"q"]);
    }

    #[test]
    fn a_field_before_fixed_width_terms_takes_what_they_leave() {
        // The separator also occurs in the field: widths, not a search, decide.
        let got = round_trip(
            r#"device + "_" + reverse_ts(ts)"#,
            &[("device", b"a_b"), ("ts", b"1700000000000")],
        );
        assert_eq!(values(&got), [b"a_b".as_slice(), b"1700000000000"]);
        let got = round_trip("id + i64be(n)", &[("id", b"\x00\xff"), ("n", b"-5")]);
        assert_eq!(values(&got), [b"\x00\xff".as_slice(), b"-5"]);
    }

    #[test]
    fn reverse_and_reverse_domain_are_exact() {
        let got = round_trip("reverse(user_id)", &[("user_id", b"1200")]);
        assert_eq!(values(&got), [b"1200".as_slice()]);
        let got = round_trip(
            r#"reverse_domain(host) + "/" + path"#,
            &[("host", b"www.example.com"), ("path", b"a/b")],
        );
        assert_eq!(values(&got), [b"www.example.com".as_slice(), b"a/b"]);
        let got = round_trip("reverse_domain(h)", &[("h", b"a..b.")]);
        assert_eq!(values(&got), [b"a..b.".as_slice()]);
        let got = round_trip(
            r#"reverse(a + "-" + b)"#,
            &[("a", b"left"), ("b", b"right")],
        );
        assert_eq!(values(&got), [b"left".as_slice(), b"right"]);
    }

    #[test]
    fn reverse_ts_decimal_and_binary() {
        for spec in ["reverse_ts(t)", "reverse_ts(t, bin)", "reverse_ts(t, dec)"] {
            for t in [b"0".as_slice(), b"1700000000000", b"9223372036854775807"] {
                let got = round_trip(spec, &[("t", t)]);
                assert_eq!(values(&got), [t], "{spec}");
            }
        }
        // Canonical: leading zeros and a sign are not kept.
        let spec = RowkeySpec::parse("reverse_ts(t)").unwrap();
        let inv = spec.inverse(&[]).unwrap();
        let mut kf = inv.fields();
        inv.decode(&key(&spec, &[("t", b"+0042")]), &mut kf)
            .unwrap();
        assert_eq!(kf.values[0].as_deref(), Some(b"42".as_slice()));
        assert_eq!(kf.recovered[0], Some(Recovered::Canonical));
    }

    /// `mod` and spans of `bucket` are checked like `salt`; `reverse_ts` in seconds gives the
    /// time back in whole seconds (as milliseconds, canonical).
    #[test]
    fn mod_spans_and_reverse_ts_seconds() {
        let v = round_trip(
            "mod(id, 16) + '_' + pad(id, 6) + '_' + bucket(ts, 15m) + reverse_ts(ts, s)",
            &[("id", b"42"), ("ts", b"1700000000000")],
        );
        assert_eq!(values(&v), [b"42".as_slice(), b"1700000000000"]);
        // A key whose mod does not match its id fails the check.
        let spec = RowkeySpec::parse("mod(id, 16) + '_' + pad(id, 6)").unwrap();
        let inv = spec.inverse(&[]).unwrap();
        let mut kf = inv.fields();
        let k = b"11_000042";
        let deferred = inv.decode(k, &mut kf).unwrap();
        assert!(inv.verify(k, &deferred, &kf.values).is_err());
    }

    #[test]
    fn pad_gives_the_digits_without_leading_zeros() {
        let got = round_trip(r#"pad(id, 10) + "_" + x"#, &[("id", b"007"), ("x", b"q")]);
        assert_eq!(values(&got), [b"7".as_slice(), b"q"]);
        let got = round_trip("pad(id, 4)", &[("id", b"0")]);
        assert_eq!(values(&got), [b"0".as_slice()]);
        let got = round_trip("pad(id, 4)", &[("id", b"1234")]);
        assert_eq!(values(&got), [b"1234".as_slice()]);
        // Under reverse, and with a fixed-width input (which keeps its zeros).
        let got = round_trip("reverse(pad(id, 6))", &[("id", b"120")]);
        assert_eq!(values(&got), [b"120".as_slice()]);
        let got = round_trip("pad(reverse_ts(t), 25)", &[("t", b"5")]);
        assert_eq!(values(&got), [b"5".as_slice()]);
    }

    #[test]
    fn i64be_and_f64be_give_decimal_text() {
        for v in [
            b"0".as_slice(),
            b"-1",
            b"9223372036854775807",
            b"-9223372036854775808",
        ] {
            let got = round_trip("i64be(n)", &[("n", v)]);
            assert_eq!(values(&got), [v]);
        }
        for (input, want) in [
            (b"-16.36".as_slice(), b"-16.36".as_slice()),
            (b"1.5e3", b"1500"),
            (b"-0", b"0"),
            (b"inf", b"inf"),
            (b"-inf", b"-inf"),
            (b"1e-7", b"0.0000001"),
        ] {
            let got = round_trip("f64be(x)", &[("x", input)]);
            assert_eq!(values(&got), [want], "{}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn salt_hash_prefix_and_bucket_are_checked_not_inverted() {
        let got = round_trip(r#"salt(100, id) + "_" + pad(id, 8)"#, &[("id", b"1")]);
        assert_eq!(values(&got), [b"1".as_slice()]);
        let got = round_trip("hash_prefix(4, id) + id", &[("id", b"abc")]);
        assert_eq!(values(&got), [b"abc".as_slice()]);
        let got = round_trip(
            r#"bucket(ts, day) + "_" + reverse_ts(ts, bin)"#,
            &[("ts", b"1700000000000")],
        );
        assert_eq!(values(&got), [b"1700000000000".as_slice()]);

        // A key whose salt does not match its id.
        let spec = RowkeySpec::parse(r#"salt(100, id) + "_" + pad(id, 8)"#).unwrap();
        let inv = spec.inverse(&[]).unwrap();
        let mut kf = inv.fields();
        let bad = b"99_00000001";
        let deferred = inv.decode(bad, &mut kf).unwrap();
        assert_eq!(deferred.len(), 1);
        let e = inv.verify(bad, &deferred, &kf.values).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("salt(100, id): the row key has '99'"),
            "{e}"
        );
    }

    /// One [`VerifyScratch`] kept from key to key checks each as a fresh one does: good and
    /// bad keys in turn, nested calls and deferred terms.
    #[test]
    fn verify_in_kept_scratch_is_verify() {
        let spec =
            RowkeySpec::parse(r#"salt(100, id) + "_" + reverse(pad(id, 8)) + "_" + id"#).unwrap();
        let inv = spec.inverse(&[]).unwrap();
        let mut scratch = VerifyScratch::default();
        let mut bad = 0;
        let keys: Vec<Vec<u8>> = (0..40u32)
            .map(|i| {
                let id = (i * 7919).to_string();
                let mut k = key(&spec, &[("id", id.as_bytes())]);
                if i % 3 == 0 {
                    k[0] ^= 1; // a salt that does not match
                }
                k
            })
            .collect();
        for k in &keys {
            let mut kf = inv.fields();
            let d = inv.decode(k, &mut kf).unwrap();
            let fresh = inv.verify(k, &d, &kf.values).map_err(|e| e.to_string());
            let kept = inv
                .verify_in(k, &d, &kf.values, &mut scratch)
                .map_err(|e| e.to_string());
            bad += usize::from(fresh.is_err());
            assert_eq!(fresh, kept);
        }
        assert_eq!(bad, 14);
    }

    #[test]
    fn fields_known_from_elsewhere_give_widths_and_checks() {
        // `a` under salt only: recoverable only from elsewhere.
        let spec = RowkeySpec::parse(r#"salt(16, a) + "_" + b"#).unwrap();
        let e = spec.inverse(&[]).unwrap_err().to_string();
        assert_eq!(
            e,
            "rowkey spec: salt(16, a): cannot be inverted: field 'a' appears nowhere else (in \
             no invertible part of the row key, and no [[column]] holds it), so it cannot be \
             recovered"
        );
        let inv = spec.inverse(&["a"]).unwrap();
        let k = key(&spec, &[("a", b"user7"), ("b", b"x")]);
        // Known before: checked while decoding.
        let mut kf = inv.fields();
        kf.values[0] = Some(b"user7".to_vec());
        let d = inv.decode(&k, &mut kf).unwrap();
        assert!(d.is_empty());
        inv.verify(&k, &d, &kf.values).unwrap();
        assert_eq!(kf.recovered, [None, Some(Recovered::Exact)]);
        // Unknown while decoding, supplied before the check.
        let mut kf = inv.fields();
        let d = inv.decode(&k, &mut kf).unwrap();
        assert_eq!(d.len(), 1);
        let e = inv.verify(&k, &d, &kf.values).unwrap_err().to_string();
        assert!(e.contains("field 'a' has no value to check it with"), "{e}");
        kf.values[0] = Some(b"user8".to_vec());
        let e = inv.verify(&k, &d, &kf.values).unwrap_err().to_string();
        assert!(e.starts_with("salt(16, a): the row key has"), "{e}");
        kf.values[0] = Some(b"user7".to_vec());
        inv.verify(&k, &d, &kf.values).unwrap();

        // A known field gives its segment a width: `a` may hold the separator.
        let spec = RowkeySpec::parse(r#"a + "_" + b"#).unwrap();
        let inv = spec.inverse(&[]).unwrap();
        let k = key(&spec, &[("a", b"x_y"), ("b", b"z")]);
        let mut kf = inv.fields();
        kf.values[0] = Some(b"x_y".to_vec());
        inv.decode(&k, &mut kf).unwrap();
        assert_eq!(kf.values[1].as_deref(), Some(b"z".as_slice()));
        // Known, but not what the key holds.
        let mut kf = inv.fields();
        kf.values[1] = Some(b"q".to_vec());
        let e = inv.decode(&k, &mut kf).unwrap_err().to_string();
        assert_eq!(
            e,
            "field 'b': the row's cells give 'q', but the row key has 'z' there"
        );
    }

    #[test]
    fn specs_that_cannot_be_inverted_name_the_term() {
        let err = |s: &str| {
            RowkeySpec::parse(s)
                .unwrap()
                .inverse(&[])
                .unwrap_err()
                .to_string()
        };
        assert!(
            err("a + b").starts_with(
                "rowkey spec: field 'a': cannot be inverted: its width varies and field 'b' \
                 follows it without a separator"
            ),
            "{}",
            err("a + b")
        );
        assert!(err("reverse(a) + reverse_domain(b)").starts_with("rowkey spec: reverse(a): "));
        assert!(err(r#"bucket(ts, day) + "_" + id"#)
            .starts_with("rowkey spec: bucket(ts, day): cannot be inverted: field 'ts'"));
        assert!(err("hash_prefix(8, id)").starts_with("rowkey spec: hash_prefix(8, id): "));
        // i64be's decimal text cannot be split into two fields.
        assert!(err("i64be(a + b)").starts_with("rowkey spec: field 'a': "));
        // Fine: the separator, or fixed widths, delimit.
        for ok in [
            r#"a + "." + b"#,
            "a + pad(b, 4)",
            "pad(a, 3) + b",
            r#"salt(4, a) + a"#,
            "a + reverse_ts(t) + i64be(n)",
        ] {
            RowkeySpec::parse(ok).unwrap().inverse(&[]).unwrap();
        }
    }

    #[test]
    fn keys_of_the_wrong_shape_are_errors() {
        let dec = |spec: &str, k: &[u8]| {
            let spec = RowkeySpec::parse(spec).unwrap();
            let inv = spec.inverse(&[]).unwrap();
            let mut kf = inv.fields();
            let r = inv
                .decode(k, &mut kf)
                .and_then(|d| inv.verify(k, &d, &kf.values));
            r.unwrap_err().to_string()
        };
        assert_eq!(
            dec(r#"a + "_" + b"#, b"nosep"),
            "the literal \"_\": not found after field 'a'"
        );
        assert_eq!(
            dec("pad(a, 4) + b", b"12"),
            "pad(a, 4): needs 4 bytes, the key has 2 left"
        );
        assert_eq!(
            dec("pad(a, 4)", b"12x4"),
            "pad(a, 4): '12x4' is not decimal digits"
        );
        assert_eq!(
            dec("reverse_ts(t)", b"x223372036854775807"),
            "reverse_ts(t): 'x223372036854775807' is not a reversed timestamp"
        );
        assert_eq!(
            dec("pad(a, 2)", b"123"),
            "pad(a, 2): '3' is left over after it"
        );
        assert_eq!(
            dec("reverse_ts(t, bin)", b"\xff\xff\xff\xff\xff\xff\xff\xff"),
            "reverse_ts(t, bin): '\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF' is not a reversed timestamp"
        );
    }

    #[test]
    fn uses_say_what_each_field_is_in_the_key() {
        let spec = RowkeySpec::parse(
            r#"salt(8, u) + reverse(u) + "_" + pad(n, 4) + reverse_ts(t) + f64be(x) + bucket(t, day)"#,
        )
        .unwrap();
        let inv = spec.inverse(&[]).unwrap();
        assert_eq!(
            inv.uses(),
            [
                (0, KeyUse::Hashed),
                (0, KeyUse::Text),
                (1, KeyUse::Digits),
                (2, KeyUse::Integer),
                (3, KeyUse::Float),
                (2, KeyUse::Integer),
            ]
        );
    }

    proptest! {
        /// Every invertible encoder at once: encode, decode, re-encode gives the same key, and
        /// exact fields come back as they were.
        #[test]
        fn decode_inverts_encode(
            a in proptest::collection::vec(any::<u8>().prop_filter("no |", |b| *b != b'|'), 0..12),
            d in "[a-z]{0,4}(\\.[a-z]{0,4}){0,3}",
            n in 0u64..1_000_000,
            t in 0i64..=i64::MAX,
            i in any::<i64>(),
            f in any::<f64>().prop_filter("not NaN", |v| !v.is_nan()),
            s in "[0-9a-z]{1,6}",
        ) {
            let spec = r#"salt(16, s) + reverse(a) + "|" + pad(n, 8) + reverse_ts(t, bin) + i64be(i) + f64be(f) + reverse_ts(t) + "|" + reverse_domain(d) + "|" + hash_prefix(3, s) + s"#;
            let (n, t, i, f) = (n.to_string(), t.to_string(), i.to_string(), format!("{f:e}"));
            let fields: Vec<(&str, &[u8])> = vec![
                ("s", s.as_bytes()), ("a", &a), ("n", n.as_bytes()), ("t", t.as_bytes()),
                ("i", i.as_bytes()), ("f", f.as_bytes()), ("d", d.as_bytes()),
            ];
            let got = round_trip(spec, &fields);
            let by = |k: &str| got.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap();
            prop_assert_eq!(by("a"), a);
            prop_assert_eq!(by("d"), d.as_bytes());
            prop_assert_eq!(by("s"), s.as_bytes());
            prop_assert_eq!(by("t"), t.as_bytes());
            prop_assert_eq!(by("i"), i.as_bytes());
        }
    }
}
