//! The import's outputs: opening them (phase 2: a bulk-load directory per table, guarded so
//! that a failed import leaves none of it), the lane sink its reading writes through
//! (lane-writer threads, or the outputs themselves), writing the sorted cells (phase 5: with
//! more than one thread on a writer thread fed 1 MiB batches, so merge and write overlap), and
//! publishing every table's files at once. Spec: `formats/import.md` §"Output", §"Lanes".

use std::path::{Path, PathBuf};

use super::options::ImportOptions;
use crate::error::ImportError;
use crate::import::output::{BulkOutput, OutputFamily, OutputReport};
use crate::import::retention::Retention;
use crate::import::route::{run_lane_writer, LaneSink, Outputs, ThreadSink};
use crate::import::sort::{SortedCell, SortedCells};
use hfkit_format::bytes::{equal_bytes, extend_pieces};
use hfkit_format::cell::{CellRef, CellType};
use hfkit_format::writer::BulkLoadInfo;
use hfkit_table::manifest::FamilyEntry;
use hfkit_table::read::family_read_settings;
use hfkit_table::{FamilySchema, ImportMapping, Regions, TableSchema};

/// Full lane staging buffers (128 KiB each) queued for each lane-writer thread. Deep enough
/// that the importing thread rarely waits for one writer while another is idle (lineitem SF1,
/// 2 threads: 4 left the CPU idle 1.7-2.5 s a run, 16 about 0.9 s; 10.4 -> 9.6 s).
const LANE_WRITER_QUEUE: usize = 16;

/// Bytes of sorted cells handed to the writer thread at a time.
const BATCH_BYTES: usize = 1 << 20;

/// The bulk-load outputs of an import: the main table's and each `[[index]]` table's.
pub(super) struct TableOutputs {
    main: BulkOutput,
    indexes: Vec<BulkOutput>,
    /// Families of the main table (sorter family numbers past these are index tables).
    n_main: usize,
    /// Every sorter family's name: the main table's, then each index table's.
    family_names: Vec<Vec<u8>>,
    /// Last, so that on a failure the outputs have removed their files before the guards
    /// remove the directories.
    guards: DirGuards,
}

/// Every sorter family's name: the main table's families, then each index table's.
pub(crate) fn sorter_family_names(schema: &TableSchema, mapping: &ImportMapping) -> Vec<Vec<u8>> {
    schema
        .families
        .iter()
        .map(|f| f.name.as_bytes().to_vec())
        .chain(
            mapping
                .indexes
                .iter()
                .map(|ix| ix.family().name.as_bytes().to_vec()),
        )
        .collect()
}

impl TableOutputs {
    /// Phase 2: the outputs of the main table (in `opts.out_dir`, over `regions`) and of each
    /// index table (in `index_dirs`, over `index_regions`), their directories guarded until
    /// [`TableOutputs::publish`].
    pub fn open(
        schema: &TableSchema,
        mapping: &ImportMapping,
        opts: &ImportOptions,
        regions: &Regions,
        index_dirs: &[PathBuf],
        index_regions: &[Regions],
    ) -> Result<TableOutputs, ImportError> {
        // The main directory's guard first: the index tables' directories are inside it by
        // default, and on a failure guards are dropped in reverse.
        let main_guard = guarded_dir(
            &opts.out_dir,
            schema.families.iter().map(|f| f.name.clone()).collect(),
        )?;
        let mut guards = DirGuards {
            indexes: Vec::new(),
            main: main_guard,
        };
        let mut indexes = Vec::new();
        for ((ix, dir), ix_regions) in mapping.indexes.iter().zip(index_dirs).zip(index_regions) {
            // Newest first: a vector drops in order, and a later one's directory may be inside
            // a parent an earlier one created.
            guards
                .indexes
                .insert(0, guarded_dir(dir, vec![ix.family().name.clone()])?);
            indexes.push(BulkOutput::new(
                dir,
                vec![output_family(ix.family(), opts)?],
                ix_regions.split_keys().to_vec(),
                opts.max_file_size,
            )?);
        }
        let families: Vec<OutputFamily> = schema
            .families
            .iter()
            .map(|f| output_family(f, opts))
            .collect::<Result<_, ImportError>>()?;
        let main = BulkOutput::new(
            &opts.out_dir,
            families,
            regions.split_keys().to_vec(),
            opts.max_file_size,
        )?;
        let family_names = sorter_family_names(schema, mapping);
        Ok(TableOutputs {
            main,
            indexes,
            n_main: schema.families.len(),
            family_names,
            guards,
        })
    }

    /// The outputs as the router writes lanes to them.
    fn lanes(&mut self) -> Outputs<'_> {
        Outputs {
            main: &mut self.main,
            indexes: &mut self.indexes,
            n_main: self.n_main,
        }
    }

    /// Runs `read` (phases 3 and 4) with the sink its lanes are written to. With `threads > 1`
    /// lanes are written by writer threads (one per thread of the pool, at most 8, each with
    /// outputs of its own, gathered afterwards) while `read` reads and encodes; else by this
    /// thread, straight to the outputs.
    pub fn with_lane_sink(
        &mut self,
        threads: usize,
        read: impl FnOnce(&mut dyn LaneSink) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        if threads <= 1 {
            return read(&mut self.lanes());
        }
        let mut siblings: Vec<(BulkOutput, Vec<BulkOutput>)> = (1..threads.min(8))
            .map(|_| {
                let indexes = self.indexes.iter().map(BulkOutput::sibling).collect();
                (self.main.sibling(), indexes)
            })
            .collect();
        let n_main = self.n_main;
        let mut all: Vec<Outputs> = std::iter::once(self.lanes())
            .chain(siblings.iter_mut().map(|(main, indexes)| Outputs {
                main,
                indexes,
                n_main,
            }))
            .collect();
        std::thread::scope(|scope| -> Result<(), ImportError> {
            let (to_reader, spares) = std::sync::mpsc::channel();
            let mut writers = Vec::new();
            let mut handles = Vec::new();
            for outs in all.iter_mut() {
                let (to_writer, messages) = std::sync::mpsc::sync_channel(LANE_WRITER_QUEUE);
                let to_reader = to_reader.clone();
                writers.push(to_writer);
                handles.push(scope.spawn(move || run_lane_writer(messages, to_reader, outs)));
            }
            let mut sink = ThreadSink { writers, spares };
            let read = read(&mut sink);
            drop(sink); // ends the writers' loops
            let mut written = Ok(());
            for h in handles {
                let r = h
                    .join()
                    .map_err(|_| ImportError::Invalid("internal: a lane writer panicked".into()))?;
                written = written.and(r);
            }
            // A writer's own error explains a failed send.
            written.and(read)
        })?;
        drop(all);
        for (main, indexes) in siblings {
            self.main.absorb(main)?;
            for (o, sibling) in self.indexes.iter_mut().zip(indexes) {
                o.absorb(sibling)?;
            }
        }
        Ok(())
    }

    /// Phase 5: writes the sorter's cells (the main table's families, then each index's),
    /// calling `count` with each cell's sorter family. The cells are copied into batches and
    /// written a row at a time (the writer's row path). With `threads > 1`, merging and
    /// writing overlap: this thread fills the batches and a writer thread that owns the
    /// outputs writes them.
    pub fn write_sorted(
        &mut self,
        sorted: &mut SortedCells,
        threads: usize,
        count: &mut impl FnMut(usize),
    ) -> Result<(), ImportError> {
        let mut fill = |batch: &mut Vec<u8>| -> Result<bool, ImportError> {
            ImportError::check_interrupt()?;
            while let Some(c) = sorted.next()? {
                count(usize::from(c.family));
                push_batch_cell(batch, &c);
                if batch.len() >= BATCH_BYTES {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        let mut batch = Vec::with_capacity(BATCH_BYTES + 4096);
        if threads <= 1 {
            loop {
                let more = fill(&mut batch)?;
                self.write_batch(&batch)?;
                batch.clear();
                if !more {
                    return Ok(());
                }
            }
        }
        std::thread::scope(|scope| -> Result<(), ImportError> {
            // Created in the scope so that an early return drops the sender, which ends the
            // writer's loop before the scope joins it.
            let (to_writer, batches) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
            let (to_reader, spares) = std::sync::mpsc::channel::<Vec<u8>>();
            let writer = scope.spawn(move || -> Result<(), ImportError> {
                for batch in batches {
                    self.write_batch(&batch)?;
                    let _ = to_reader.send(batch);
                }
                Ok(())
            });
            loop {
                let more = fill(&mut batch)?;
                let next = spares
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(BATCH_BYTES + 4096));
                // An error stops the writer, and its join reports it.
                if to_writer.send(std::mem::replace(&mut batch, next)).is_err() || !more {
                    break;
                }
                batch.clear(); // a recycled batch still holds its cells
            }
            drop(to_writer);
            writer
                .join()
                .map_err(|_| ImportError::Invalid("internal: the writer thread panicked".into()))?
        })
    }

    /// Writes a batch of sorted cells (records of [`push_batch_cell`]) to the main table's
    /// output or to its index tables', a row (of one family) at a time. A row cut by the end of
    /// a batch goes on in the next one: the writer's row path takes it as `append` of each cell
    /// would.
    fn write_batch(&mut self, batch: &[u8]) -> Result<(), ImportError> {
        let n_main = self.n_main;
        let (output, index_outputs) = (&mut self.main, &mut self.indexes);
        let mut write = |f: usize, row: &[CellRef<'_>]| -> Result<(), ImportError> {
            match f.checked_sub(n_main) {
                None => output.append_row(f, row)?,
                Some(i) => index_outputs
                    .get_mut(i)
                    .ok_or_else(|| {
                        ImportError::Invalid("internal: index family out of range".into())
                    })?
                    .append_row(0, row)?,
            }
            Ok(())
        };
        let mut row: Vec<CellRef<'_>> = Vec::with_capacity(64);
        let mut row_family = 0;
        let mut at = 0;
        while let Some((f, cell, next)) = batch_cell(batch, at, &self.family_names) {
            if row
                .first()
                .is_some_and(|r| f != row_family || !equal_bytes(r.row, cell.row))
            {
                write(row_family, &row)?;
                row.clear();
            }
            row_family = f;
            row.push(cell);
            at = next;
        }
        if at != batch.len() {
            return Err(ImportError::Invalid(format!(
                "internal: malformed sorted-cell batch at byte {at}"
            )));
        }
        if !row.is_empty() {
            write(row_family, &row)?;
        }
        Ok(())
    }

    /// Every file of every table complete and synced, then all published, and the directories
    /// kept: the main table's output and each index table's.
    pub fn publish(mut self) -> Result<(OutputReport, Vec<OutputReport>), ImportError> {
        self.main.seal()?;
        for o in &mut self.indexes {
            o.seal()?;
        }
        let mut indexes = Vec::new();
        for o in self.indexes {
            indexes.push(o.finish()?);
        }
        let main = self.main.finish()?;
        self.guards.disarm();
        Ok((main, indexes))
    }
}

/// Appends one sorted cell to a writer-thread batch:
/// `u8 family | u8 type | u16 rowLen | u32 qualifierLen | u32 valueLen | i64 ts | u16 tagsLen |
/// row | q | v | tags`.
#[inline]
fn push_batch_cell(batch: &mut Vec<u8>, c: &SortedCell<'_>) {
    let mut h = [0u8; 22];
    h[0] = c.family;
    h[1] = c.cell_type.code();
    h[2..4].copy_from_slice(&(c.row.len() as u16).to_be_bytes());
    h[4..8].copy_from_slice(&(c.qualifier.len() as u32).to_be_bytes());
    h[8..12].copy_from_slice(&(c.value.len() as u32).to_be_bytes());
    h[12..20].copy_from_slice(&c.timestamp.to_be_bytes());
    h[20..22].copy_from_slice(&(c.tags.len() as u16).to_be_bytes());
    extend_pieces(batch, [&h, c.row, c.qualifier, c.value, c.tags]);
}

/// The cell at `at` of a batch (family index, cell, offset of the next), `None` at the end
/// (or on a malformed record, which `push_batch_cell` never writes).
fn batch_cell<'a>(
    batch: &'a [u8],
    at: usize,
    fam_names: &'a [Vec<u8>],
) -> Option<(usize, CellRef<'a>, usize)> {
    let h = batch.get(at..at + 22)?;
    let f = usize::from(h[0]);
    let cell_type = CellType::from_code(h[1])?;
    let row_len = usize::from(u16::from_be_bytes([h[2], h[3]]));
    let q_len = u32::from_be_bytes([h[4], h[5], h[6], h[7]]) as usize;
    let v_len = u32::from_be_bytes([h[8], h[9], h[10], h[11]]) as usize;
    let mut ts = [0u8; 8];
    ts.copy_from_slice(&h[12..20]);
    let t_len = usize::from(u16::from_be_bytes([h[20], h[21]]));
    let body = at + 22;
    let end = body + row_len + q_len + v_len + t_len;
    let b = batch.get(body..end)?;
    let cell = CellRef {
        row: &b[..row_len],
        family: fam_names.get(f)?,
        qualifier: &b[row_len..row_len + q_len],
        timestamp: i64::from_be_bytes(ts),
        cell_type,
        value: &b[row_len + q_len..row_len + q_len + v_len],
        tags: &b[row_len + q_len + v_len..],
        seq_id: 0,
    };
    Some((f, cell, end))
}

/// Writer options of a family of the output, with the bulk-load FileInfo (the import time,
/// `EXCLUDE_FROM_MINOR_COMPACTION` as asked), and its retention at the import's `now_ms`.
pub(crate) fn output_family(
    f: &FamilySchema,
    opts: &ImportOptions,
) -> Result<OutputFamily, ImportError> {
    let (import_time, now_ms) = (opts.import_time, opts.now_ms);
    let entry = FamilyEntry::from_schema(f);
    let invalid = |e: hfkit_table::TableError| ImportError::Invalid(e.to_string());
    let mut o = entry.writer_options(import_time).map_err(invalid)?;
    if opts.run_files {
        o.compression = hfkit_format::compression::Compression::None;
        o.encoding = hfkit_format::encoding::DataBlockEncoding::None;
        o.bloom = None;
    }
    let retention = Retention::new(&family_read_settings(&entry).map_err(invalid)?, now_ms);
    o.bulk_load = Some(BulkLoadInfo {
        timestamp: import_time,
        task: "hfkit-import".into(),
        exclude_from_minor_compaction: opts.exclude_from_minor_compaction,
        major_compaction: true,
    });
    Ok(OutputFamily {
        name: f.name.clone(),
        options: o,
        retention,
    })
}

/// The guards of an import's output directories: on a failed import (dropped armed), the index
/// tables' are cleared first (newest first), then the main table's.
struct DirGuards {
    indexes: Vec<OutputDirGuard>,
    main: OutputDirGuard,
}

impl DirGuards {
    /// The import succeeded: its directories stay.
    fn disarm(&mut self) {
        self.main.armed = false;
        for g in &mut self.indexes {
            g.armed = false;
        }
    }
}

/// Creates `dir` (remembering which of it and its parents did not exist) and a guard that
/// removes what a failed import leaves of it.
fn guarded_dir(dir: &Path, families: Vec<String>) -> Result<OutputDirGuard, ImportError> {
    let created = dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    let guard = OutputDirGuard {
        dir: dir.to_path_buf(),
        created,
        families,
        armed: true,
    };
    std::fs::create_dir_all(dir).map_err(|source| ImportError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    Ok(guard)
}

/// On a failed import, removes the (then empty) family directories, and the output directory
/// and those of its parents the import created.
struct OutputDirGuard {
    dir: PathBuf,
    /// `dir` and its parents that did not exist, deepest first.
    created: Vec<PathBuf>,
    families: Vec<String>,
    armed: bool,
}

impl Drop for OutputDirGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        for f in &self.families {
            let _ = std::fs::remove_dir(self.dir.join(f));
        }
        for d in &self.created {
            let _ = std::fs::remove_dir(d);
        }
    }
}
