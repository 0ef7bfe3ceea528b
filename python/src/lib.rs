//! `hfkit._hfkit`, the native module of the `hfkit` Python package (python/hfkit): the import
//! pipeline's encoders and outputs, table attach and reads, and HFiles, exchanging data with
//! pyarrow through the Arrow C data interface (whole record batches and arrays, never a Python
//! object per row). Spec: `formats/python.md`.
//!
//! | module | owns |
//! |---|---|
//! | [`schema`] | `Schema`: a schema and its mapping, its regions, row keys and regions of batches |
//! | [`distributed`] | a bulk load of files on a cluster: input splits, a split's run files, a region's merge |
//! | [`region`] | `write_region`: one region's HFiles from record batches, by the import pipeline |
//! | [`tables`] | `create_tables`, `attach`, `Table` reads and `HFile` as record batches of cells |
//! | [`storage`] | object storage: the S3 settings, scratch directories, list/copy/delete/download of objects |
//! | [`errors`] | the exceptions, with the CLI's file/line/field context |

use pyo3::prelude::*;

mod compaction;
mod distributed;
mod errors;
mod export;
mod hbase_compaction;
mod input_format;
mod region;
mod schema;
mod snapshot_copy;
mod storage;
mod tables;

#[pymodule]
fn _hfkit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<schema::Schema>()?;
    m.add_class::<tables::Table>()?;
    m.add_class::<tables::HFile>()?;
    m.add_function(wrap_pyfunction!(region::write_region, m)?)?;
    m.add_function(wrap_pyfunction!(distributed::input_splits, m)?)?;
    m.add_function(wrap_pyfunction!(distributed::import_split, m)?)?;
    m.add_function(wrap_pyfunction!(distributed::import_batches, m)?)?;
    m.add_function(wrap_pyfunction!(distributed::merge_region, m)?)?;
    m.add_function(wrap_pyfunction!(distributed::keys_disjoint, m)?)?;
    m.add_function(wrap_pyfunction!(tables::attach, m)?)?;
    m.add_function(wrap_pyfunction!(compaction::plan_compaction, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot_copy::begin_snapshot_copy, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot_copy::begin_snapshot_export, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot_copy::copy_snapshot_files, m)?)?;
    m.add_function(wrap_pyfunction!(export::lock_table, m)?)?;
    m.add_function(wrap_pyfunction!(export::export_outline, m)?)?;
    m.add_function(wrap_pyfunction!(export::export_part, m)?)?;
    m.add_class::<export::TableLock>()?;
    m.add_class::<snapshot_copy::SnapshotCopy>()?;
    m.add_class::<hbase_compaction::HBaseCompaction>()?;
    m.add_function(wrap_pyfunction!(hbase_compaction::compact_hbase_store, m)?)?;
    m.add_function(wrap_pyfunction!(compaction::compact_store, m)?)?;
    m.add_function(wrap_pyfunction!(compaction::commit_compaction, m)?)?;
    m.add_function(wrap_pyfunction!(tables::create_tables, m)?)?;
    m.add_function(wrap_pyfunction!(storage::configure_storage, m)?)?;
    m.add_function(wrap_pyfunction!(storage::list_objects, m)?)?;
    m.add_function(wrap_pyfunction!(storage::copy_object, m)?)?;
    m.add_function(wrap_pyfunction!(storage::delete_objects, m)?)?;
    m.add_function(wrap_pyfunction!(storage::put_object, m)?)?;
    m.add_function(wrap_pyfunction!(storage::delete_object, m)?)?;
    m.add_function(wrap_pyfunction!(storage::head_object, m)?)?;
    m.add_function(wrap_pyfunction!(storage::get_object, m)?)?;
    m.add_function(wrap_pyfunction!(storage::download_objects, m)?)?;
    m.add("HfkitError", py.get_type::<errors::HfkitError>())?;
    m.add("SchemaError", py.get_type::<errors::SchemaError>())?;
    m.add("InputError", py.get_type::<errors::InputError>())?;
    m.add("TableError", py.get_type::<errors::TableError>())?;
    m.add("HFileError", py.get_type::<errors::HFileError>())?;
    m.add("INDEX_BULK_DIR", hfkit_pipeline::import::INDEX_BULK_DIR)?;
    Ok(())
}
