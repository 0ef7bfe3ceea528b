//! An import's inputs cut into *splits*, the parts that the tasks of a distributed import
//! read on their own (`formats/python.md` §"Bulk load of files"): a plain CSV file into byte
//! ranges of about `split_bytes` (each task reads the records that start in its range, as
//! Hadoop's LineRecordReader does), a compressed CSV file or one whose quoted fields may hold
//! line ends whole, a Parquet file into runs of whole row groups of about `split_bytes`. Only
//! sizes and Parquet footers are read: the cost does not grow with the data.

use std::path::{Path, PathBuf};

use crate::error::ImportError;
use crate::source::input::{InputFormat, InputRange};
use crate::source::parquet::row_group_sizes;
use crate::source::CsvSource;

/// One task's part of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    pub path: PathBuf,
    /// `None`: the whole file.
    pub range: Option<InputRange>,
    /// About how many bytes of the input it holds (for balancing and progress).
    pub bytes: u64,
}

/// The splits of `inputs` (in input order: a later split's cells win over an earlier one's
/// with the same coordinates, as a later record does in one import).
pub fn input_splits(
    inputs: &[PathBuf],
    format: &InputFormat,
    split_bytes: u64,
    multiline: bool,
) -> Result<Vec<Split>, ImportError> {
    let split_bytes = split_bytes.max(1);
    let mut out = Vec::new();
    for path in inputs {
        match format {
            InputFormat::Csv(_) => {
                let len = file_size(path)?;
                if multiline || CsvSource::is_compressed(path) || len <= split_bytes {
                    out.push(Split {
                        path: path.clone(),
                        range: None,
                        bytes: len,
                    });
                    continue;
                }
                let mut start = 0;
                while start < len {
                    let end = (start + split_bytes).min(len);
                    out.push(Split {
                        path: path.clone(),
                        // The last split reads to the file's end, a record that ends without a
                        // line end included.
                        range: Some(InputRange::Bytes {
                            start,
                            end: if end == len { u64::MAX } else { end },
                        }),
                        bytes: end - start,
                    });
                    start = end;
                }
            }
            InputFormat::Parquet => {
                let sizes = row_group_sizes(path)?;
                let (mut first, mut bytes) = (0, 0);
                for (g, size) in sizes.iter().enumerate() {
                    bytes += size;
                    if bytes >= split_bytes || g + 1 == sizes.len() {
                        out.push(Split {
                            path: path.clone(),
                            range: Some(InputRange::RowGroups { first, end: g + 1 }),
                            bytes,
                        });
                        (first, bytes) = (g + 1, 0);
                    }
                }
            }
        }
    }
    Ok(out)
}

fn file_size(path: &Path) -> Result<u64, ImportError> {
    if crate::source::remote::is_remote(path) {
        return Ok(crate::source::remote::size(path)?);
    }
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|source| ImportError::Io {
            path: path.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Batch, CsvOptions};

    /// Every record of a CSV file is read by exactly one split, whatever the split size: the
    /// splits' records, in order, are the whole file's.
    #[test]
    fn byte_splits_read_every_record_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.csv");
        let mut text = String::from("id,name\n");
        for i in 0..300 {
            // Lines of different lengths, so that splits cut them everywhere.
            text.push_str(&format!("{i},{}\n", "x".repeat(i % 17)));
        }
        text.push_str("last,no-line-end");
        std::fs::write(&path, &text).unwrap();
        let opts = CsvOptions::default();
        let read = |range: Option<InputRange>| -> Vec<String> {
            let mut src = match range {
                None => CsvSource::open(&path, &opts).unwrap(),
                Some(InputRange::Bytes { start, end }) => {
                    CsvSource::open_range(&path, &opts, start, end).unwrap()
                }
                Some(_) => unreachable!(),
            };
            assert_eq!(src.columns(), ["id", "name"]);
            let (mut out, mut b) = (Vec::new(), Batch::default());
            while src.next_batch(&mut b, 7).unwrap() {
                out.extend((0..b.len()).map(|i| b.fields_text(i).join(",")));
            }
            out
        };
        let whole = read(None);
        assert_eq!(whole.len(), 301);
        let format = InputFormat::Csv(opts.clone());
        for split_bytes in [1, 2, 3, 5, 8, 13, 64, 100, 1000, 1 << 20] {
            let splits =
                input_splits(std::slice::from_ref(&path), &format, split_bytes, false).unwrap();
            let got: Vec<String> = splits.iter().flat_map(|s| read(s.range)).collect();
            assert_eq!(got, whole, "split_bytes {split_bytes}");
        }
        // Read whole when asked (quoted fields with line ends).
        let splits = input_splits(std::slice::from_ref(&path), &format, 10, true).unwrap();
        assert_eq!(splits.len(), 1);
        assert_eq!(splits[0].range, None);
    }
}
