//! An import's inputs: each file opened as batch readers (one per Parquet row group, one for a
//! CSV file), and read ahead on threads of their own while the importer encodes, the order
//! staying the input's. Shared by the import, its sampling of row keys and `hfkit plan`.
//! Spec: `formats/import.md` §"Sources".

use std::path::Path;

use crate::error::ImportError;
use crate::source::parquet::{self as parquet_source, ParquetSource};
use crate::source::{Batch, CsvOptions, CsvSource, SourceError};

/// Records per batch handed to the parallel encoders.
pub const DEFAULT_BATCH_ROWS: usize = 16 * 1024;

/// Input file format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputFormat {
    Csv(CsvOptions),
    Parquet,
}

/// The part of an input one task of a distributed import reads (`formats/python.md`
/// §"Bulk load of files"); the whole input without one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputRange {
    /// A plain CSV file's records that start in `start..end` ([`CsvSource::open_range`]).
    Bytes { start: u64, end: u64 },
    /// A Parquet file's row groups `first..end`.
    RowGroups { first: usize, end: usize },
}

/// Reads the next batch of an input; false at its end.
pub(crate) type BatchReader = Box<dyn FnMut(&mut Batch) -> Result<bool, SourceError> + Send>;

/// An opened input: its batch readers and its column names.
pub(crate) type OpenInput = (Vec<BatchReader>, Vec<String>);

/// Opens one input: its readers (one per Parquet row group, in order; one for a CSV file) and
/// its column names. Parquet files are read projected to `wanted`; one without row groups has
/// no reader, and the columns of its schema. `None` for a CSV file without a single line: no
/// record, and no header to check the mapping against.
/// With `columnar`, Parquet batches come column by column ([`Batch::columns`]).
pub(crate) fn open_input(
    path: &Path,
    format: &InputFormat,
    wanted: &[String],
    batch_rows: usize,
    columnar: bool,
    range: Option<InputRange>,
) -> Result<Option<OpenInput>, ImportError> {
    let mut units: Vec<BatchReader> = Vec::new();
    let wrong = |what: &str| {
        ImportError::Invalid(format!(
            "{}: a {what} range does not apply to this input's format",
            path.display()
        ))
    };
    match format {
        InputFormat::Csv(csv_opts) => {
            let mut src = match range {
                None => CsvSource::open(path, csv_opts)?,
                Some(InputRange::Bytes { start, end }) => {
                    CsvSource::open_range(path, csv_opts, start, end)?
                }
                Some(InputRange::RowGroups { .. }) => return Err(wrong("row-group")),
            };
            if src.is_empty() {
                return Ok(None);
            }
            let columns = src.columns().to_vec();
            units.push(Box::new(move |b| src.next_batch(b, batch_rows)));
            Ok(Some((units, columns)))
        }
        InputFormat::Parquet => {
            let groups = parquet_source::row_group_count(path)?;
            let (first, end) = match range {
                None => (0, groups),
                Some(InputRange::RowGroups { first, end }) => (first.min(groups), end.min(groups)),
                Some(InputRange::Bytes { .. }) => return Err(wrong("byte")),
            };
            let mut cols = None;
            for g in first..end {
                let mut src = ParquetSource::open(path, Some(wanted), g, batch_rows)?;
                if columnar {
                    src = src.columnar();
                }
                cols.get_or_insert_with(|| src.columns().to_vec());
                units.push(Box::new(move |b| src.next_batch(b)));
            }
            let columns = match cols {
                Some(c) => c,
                None => parquet_source::column_names(path)?,
            };
            Ok(Some((units, columns)))
        }
    }
}

/// Batches each reader thread parses ahead of the importer.
const READ_AHEAD_BATCHES: usize = 2;

/// What a reader thread sends: a batch of its current unit, or the end of that unit.
enum ReadAhead {
    Batch(Batch),
    UnitDone,
}

/// Runs an input's batch readers (its units: one per Parquet row group, one for a CSV file)
/// on `readers` threads of their own, parsing ahead while this thread encodes and routes,
/// and hands every batch to `each` in input order: unit by unit, each unit's batches in order.
///
/// Unit `u` is read by thread `u % readers`, which reads its units in order; this thread takes
/// unit `u`'s batches from that thread's channel (bounded, [`READ_AHEAD_BATCHES`] deep) until
/// the unit's end. So several row groups are decoded at once, the order stays the input's,
/// and at most `readers * (READ_AHEAD_BATCHES + 1) + 1` batches are in flight (each reader's
/// queued ones and the one it fills, and the one being imported).
pub(crate) fn read_ahead(
    units: Vec<BatchReader>,
    readers: usize,
    each: &mut dyn FnMut(&Batch) -> Result<(), ImportError>,
) -> Result<(), ImportError> {
    let n_units = units.len();
    let readers = readers.clamp(1, n_units.max(1));
    let mut per_reader: Vec<Vec<BatchReader>> = (0..readers).map(|_| Vec::new()).collect();
    for (u, unit) in units.into_iter().enumerate() {
        per_reader[u % readers].push(unit);
    }
    std::thread::scope(|scope| -> Result<(), ImportError> {
        let mut filled = Vec::with_capacity(readers);
        let mut to_readers = Vec::with_capacity(readers);
        for mine in per_reader {
            let (to_importer, rx) =
                std::sync::mpsc::sync_channel::<Result<ReadAhead, SourceError>>(READ_AHEAD_BATCHES);
            let (to_reader, empties) = std::sync::mpsc::channel::<Batch>();
            filled.push(rx);
            to_readers.push(to_reader);
            scope.spawn(move || {
                for mut next in mine {
                    loop {
                        let mut batch = empties.try_recv().unwrap_or_default();
                        // A failed send means the importer stopped (on an error).
                        match next(&mut batch) {
                            Ok(true) => {
                                if to_importer.send(Ok(ReadAhead::Batch(batch))).is_err() {
                                    return;
                                }
                            }
                            Ok(false) => {
                                if to_importer.send(Ok(ReadAhead::UnitDone)).is_err() {
                                    return;
                                }
                                break;
                            }
                            Err(e) => {
                                let _ = to_importer.send(Err(e));
                                return;
                            }
                        }
                    }
                }
            });
        }
        // On an error the receivers are dropped here, which ends every reader's next send.
        for u in 0..n_units {
            let r = u % readers;
            loop {
                // A reader sends its error before it ends; a channel closed before the end
                // of its unit means the reader died, and the unit is not whole.
                let msg = filled[r].recv().map_err(|_| {
                    ImportError::Invalid("internal: an input reader thread panicked".into())
                })?;
                match msg? {
                    ReadAhead::Batch(batch) => {
                        each(&batch)?;
                        let _ = to_readers[r].send(batch);
                    }
                    ReadAhead::UnitDone => break,
                }
            }
        }
        Ok(())
    })
}

/// Reads every batch of `units` in order, handing each to `each`: on `readers` threads of
/// their own with more than one ([`read_ahead`]), else on this one.
pub(crate) fn read_units(
    units: Vec<BatchReader>,
    readers: usize,
    each: &mut dyn FnMut(&Batch) -> Result<(), ImportError>,
) -> Result<(), ImportError> {
    if readers > 1 {
        return read_ahead(units, readers, each);
    }
    let mut batch = Batch::default();
    for mut next in units {
        while next(&mut batch)? {
            each(&batch)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit that yields `batches` batches of one record each, naming (unit, batch); with
    /// `fail_at`, an error instead of that batch.
    fn unit(u: usize, batches: usize, fail_at: Option<usize>) -> BatchReader {
        let mut i = 0;
        Box::new(move |b: &mut Batch| {
            if Some(i) == fail_at {
                return Err(SourceError::Invalid(format!("unit {u} failed at {i}")));
            }
            if i == batches {
                return Ok(false);
            }
            b.records.clear();
            b.records
                .push(csv::ByteRecord::from(vec![format!("{u}/{i}")]));
            i += 1;
            Ok(true)
        })
    }

    fn seen(units: Vec<BatchReader>, readers: usize) -> (Vec<String>, Option<String>) {
        let mut got = Vec::new();
        let r = read_ahead(units, readers, &mut |b: &Batch| {
            got.push(String::from_utf8_lossy(&b.records[0][0]).to_string());
            Ok(())
        });
        (got, r.err().map(|e| e.to_string()))
    }

    #[test]
    fn read_ahead_keeps_input_order_with_parallel_readers() {
        // Units of uneven length (some empty), read by 1..5 threads: always unit by unit.
        let lens = [3, 0, 5, 1, 7, 2, 0, 4];
        let want: Vec<String> = lens
            .iter()
            .enumerate()
            .flat_map(|(u, &n)| (0..n).map(move |i| format!("{u}/{i}")))
            .collect();
        for readers in 1..=5 {
            let units = lens
                .iter()
                .enumerate()
                .map(|(u, &n)| unit(u, n, None))
                .collect();
            assert_eq!(
                seen(units, readers),
                (want.clone(), None),
                "{readers} readers"
            );
        }
        assert_eq!(seen(Vec::new(), 3), (Vec::new(), None));
    }

    #[test]
    fn read_ahead_stops_at_a_units_error_after_the_batches_before_it() {
        for readers in 1..=3 {
            let units = vec![unit(0, 2, None), unit(1, 5, Some(3)), unit(2, 4, None)];
            let (got, err) = seen(units, readers);
            assert_eq!(
                got,
                ["0/0", "0/1", "1/0", "1/1", "1/2"],
                "{readers} readers"
            );
            assert_eq!(err.as_deref(), Some("unit 1 failed at 3"));
        }
    }

    #[test]
    fn read_ahead_passes_on_the_importers_error() {
        let units = (0..4).map(|u| unit(u, 50, None)).collect();
        let mut n = 0;
        let r = read_ahead(units, 2, &mut |_b: &Batch| {
            n += 1;
            if n == 60 {
                return Err(ImportError::Invalid("stop".into()));
            }
            Ok(())
        });
        assert_eq!(r.err().map(|e| e.to_string()).as_deref(), Some("stop"));
        assert_eq!(n, 60);
    }
}
