//! Reference files: what a region split leaves in each daughter's store instead of a copy of
//! the parent's HFile (HBase's `io.Reference`): the split key and which half. Spec:
//! `formats/hbase-layout.md` §"Store files".

use std::path::Path;

use prost::Message;

use super::proto;
use super::{ContentError, HBaseError, Result};
use hfkit_format::cell::{first_on_row, KeyView};
use hfkit_format::fileinfo::PB_MAGIC;
use hfkit_format::reader::HalfRange;

/// A reference: the half of the referred file on one side of `split_key`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// A flat key: first-on-row of the split row, as HBase writes it.
    pub split_key: Vec<u8>,
    pub range: HalfRange,
}

impl Reference {
    /// The reference a split at `row` gives to the daughter holding `range`.
    pub fn at_row(row: &[u8], range: HalfRange) -> Reference {
        Reference {
            split_key: first_on_row(row),
            range,
        }
    }

    /// The split row (the row of the split key), if the key is valid.
    pub fn split_row(&self) -> Option<&[u8]> {
        KeyView::parse(&self.split_key).map(|k| k.row)
    }

    pub fn is_top(&self) -> bool {
        self.range == HalfRange::Top
    }

    /// From the protobuf message; an error for a range HBase does not know.
    pub fn from_proto(p: &proto::Reference) -> Result<Reference, ContentError> {
        let range = match proto::ReferenceRange::try_from(p.range) {
            Ok(proto::ReferenceRange::Top) => HalfRange::Top,
            Ok(proto::ReferenceRange::Bottom) => HalfRange::Bottom,
            Err(_) => return Err(ContentError::ReferenceRange(p.range)),
        };
        if KeyView::parse(&p.splitkey).is_none() {
            return Err(ContentError::ReferenceSplitKey);
        }
        Ok(Reference {
            split_key: p.splitkey.clone(),
            range,
        })
    }

    pub fn to_proto(&self) -> proto::Reference {
        proto::Reference {
            splitkey: self.split_key.clone(),
            range: match self.range {
                HalfRange::Top => proto::ReferenceRange::Top as i32,
                HalfRange::Bottom => proto::ReferenceRange::Bottom as i32,
            },
        }
    }

    /// The bytes of a reference file: `PBUF` + the message.
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let mut b = PB_MAGIC.to_vec();
        b.extend(self.to_proto().encode_to_vec());
        b
    }

    /// Parses a reference file: `PBUF` + message, or the pre-protobuf Writable form (a boolean
    /// byte, true = top, then the split key as a vint-length byte array), as HBase's
    /// `readReference` accepts both.
    pub fn from_file_bytes(path: &Path, bytes: &[u8]) -> Result<Reference> {
        let bad = |d: String| HBaseError::corrupt(path, d);
        if let Some(body) = bytes.strip_prefix(PB_MAGIC.as_slice()) {
            let p =
                proto::Reference::decode(body).map_err(|e| bad(format!("not a Reference: {e}")))?;
            return Reference::from_proto(&p).map_err(|e| HBaseError::content(path, e));
        }
        let (&top, rest) = bytes
            .split_first()
            .ok_or_else(|| bad("empty reference file".into()))?;
        let mut cur = hfkit_format::bytes::Cursor::new(rest, 1, "reference split key");
        let key = cur
            .vint_len()
            .and_then(|n| cur.take(n))
            .map_err(|e| bad(format!("not a Reference (Writable form): {e}")))?;
        if top > 1 || cur.remaining() != 0 || KeyView::parse(key).is_none() {
            return Err(bad(
                "not a Reference (neither PBUF nor Writable form)".into()
            ));
        }
        Ok(Reference {
            split_key: key.to_vec(),
            range: if top == 1 {
                HalfRange::Top
            } else {
                HalfRange::Bottom
            },
        })
    }

    /// Reads a reference file.
    pub fn read_file(path: &Path) -> Result<Reference> {
        let bytes = std::fs::read(path).map_err(|e| HBaseError::io(path, e))?;
        Reference::from_file_bytes(path, &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_references_are_typed_errors_naming_the_file() {
        let good = Reference::at_row(b"r5", HalfRange::Top);
        let mut p = good.to_proto();
        p.range = 7;
        assert!(matches!(
            Reference::from_proto(&p),
            Err(ContentError::ReferenceRange(7))
        ));
        let mut bytes = PB_MAGIC.to_vec();
        p.encode(&mut bytes).unwrap();
        let path = Path::new("t/r/f/0123.abcd");
        match Reference::from_file_bytes(path, &bytes) {
            Err(HBaseError::Content {
                path: at,
                source: ContentError::ReferenceRange(7),
            }) => assert_eq!(at, path),
            other => panic!("{other:?}"),
        }
        let mut p = good.to_proto();
        p.splitkey = b"not a key".to_vec();
        let e = Reference::from_proto(&p).unwrap_err();
        assert!(matches!(e, ContentError::ReferenceSplitKey));
        assert_eq!(
            e.in_store_file("0123.abcd").to_string(),
            "0123.abcd: the reference's split key is not a valid cell key"
        );
    }
}
