"""hfkit from Python: the import pipeline of the ``hfkit`` CLI on Arrow record batches.

``Schema`` reads a table schema with its import mapping (``formats/schema.md``); its
``row_keys`` and ``regions`` run the import's own rowkey encoders on a whole
``pyarrow.RecordBatch``. ``write_region`` encodes, sorts (spilling past ``memory``) and writes one
region's bulk-load HFiles, the index tables' too. ``attach`` publishes many such directories in
one commit per table; ``Table`` and ``HFile`` read them back as record batches of cells.
``hfkit.spark.bulk_load`` runs it all on a Spark DataFrame. Data crosses between Python and Rust
through the Arrow C data interface: no Python object per row.

Errors are ``HfkitError`` subclasses carrying the CLI's message and, as attributes, where:
``file``, ``line`` (CSV) or ``row_group`` and ``row``, ``field``, ``column`` (schema), ``reason``.
"""

from ._hfkit import (  # noqa: F401
    INDEX_BULK_DIR,
    HBaseCompaction,
    HFile,
    HFileError,
    HfkitError,
    InputError,
    Schema,
    SchemaError,
    Table,
    TableError,
    TableLock,
    SnapshotCopy,
    attach,
    begin_snapshot_copy,
    begin_snapshot_export,
    commit_compaction,
    compact_hbase_store,
    compact_store,
    configure_storage,
    copy_object,
    copy_snapshot_files,
    create_tables,
    delete_object,
    delete_objects,
    download_objects,
    export_outline,
    export_part,
    get_object,
    head_object,
    import_batches,
    import_split,
    input_splits,
    keys_disjoint,
    list_objects,
    lock_table,
    merge_region,
    plan_compaction,
    put_object,
    write_region,
)

__all__ = [
    "INDEX_BULK_DIR",
    "HBaseCompaction",
    "HFile",
    "HFileError",
    "HfkitError",
    "InputError",
    "Schema",
    "SchemaError",
    "Table",
    "TableError",
    "TableLock",
    "SnapshotCopy",
    "attach",
    "begin_snapshot_copy",
    "begin_snapshot_export",
    "commit_compaction",
    "compact_hbase_store",
    "compact_store",
    "configure_storage",
    "copy_object",
    "copy_snapshot_files",
    "create_tables",
    "delete_object",
    "delete_objects",
    "download_objects",
    "export_outline",
    "export_part",
    "get_object",
    "head_object",
    "import_batches",
    "import_split",
    "input_splits",
    "keys_disjoint",
    "list_objects",
    "lock_table",
    "merge_region",
    "plan_compaction",
    "put_object",
    "write_region",
]
