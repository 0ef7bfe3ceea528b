"""Bulk load from Spark: Spark moves and partitions the rows, hfkit encodes, sorts and writes each
region's HFiles in the tasks, and the driver publishes the result in one commit.

``bulk_load(df, schema, table=...)`` or ``bulk_load(df, schema, out=...)``:

1. The target regions: an existing table's own (and its index tables'), else the schema's
   splits (a table given and absent is created from the schema first, as ``hfkit import
   --table`` creates it).
2. ``mapInArrow``: each row's region, by the import's own rowkey encoder (``Schema.regions``).
   A region with more than ``rows_per_task`` rows is spread over several tasks (a hash of the
   row's fields picks one); a row of region r only ever goes to a task of region r.
3. ``repartition`` by that task number, sorted within each partition by it, then in each task
   ``write_region`` for each of its task numbers, into a directory of the task *attempt*'s own:
   ``<staging>/_attempts/<stage>-<partition>-<attempt id>/<part>/``.
4. The driver collects what the tasks returned: Spark keeps the result of exactly one
   successful attempt per partition, so the files of failed, retried or speculative attempts
   are never named. Only the named directories are attached (``attach``: one commit per table,
   index tables first) or moved into ``out`` (``out/<family>/`` and
   ``out/.indexes/<qualifier>/<family>/``, ready for ``completebulkload``); every attempt
   directory is removed afterwards, whatever happened.

Paths must be visible to the driver and every executor under the same name (a local path in
``local`` mode, a shared file system on a cluster).
"""

import os
import shutil
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from . import Schema, Table, attach, create_tables, write_region

REGION_COLUMN = "__hfkit_region"
PART_COLUMN = "__hfkit_part"
ATTEMPTS_DIR = "_attempts"

# What each task returns: one row per file written.
_RESULT = pa.schema([
    ("part_dir", pa.string()),
    ("path", pa.string()),
    ("table", pa.string()),
    ("family", pa.string()),
    ("region", pa.int32()),
    ("cells", pa.int64()),
    ("bytes", pa.int64()),
    ("seconds", pa.float64()),
])
_RESULT_DDL = ("part_dir string, path string, table string, family string, region int, "
               "cells long, bytes long, seconds double")


def _regions_of(schema, table):
    """`schema` over the regions of the existing table at `table` and of its index tables."""
    main = Table(str(table)).split_points()
    indexes = []
    for q in schema.index_tables:
        ix = Path(table) / "indexes" / q
        indexes.append(Table(str(ix)).split_points() if (ix / "CURRENT").exists()
                       else schema.index_split_points()[len(indexes)])
    return schema.with_regions(main, indexes)


def _tag_regions(schema):
    """The mapInArrow function adding each row's region."""
    def tag(batches):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        name = f"spark partition {ctx.partitionId()}" if ctx else "record batches"
        for i, b in enumerate(batches):
            regions = schema.regions(b, name=name, number=i)
            yield pa.RecordBatch.from_arrays(b.columns + [regions],
                                             names=b.schema.names + [REGION_COLUMN])
    return tag


def _write_parts(schema, staging, memory, import_time, on_written):
    """The mapInArrow function of the write stage: the task's rows, sorted by task number, each
    task number's rows written by ``write_region`` into the attempt's own directory."""
    def write(batches):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        attempt = Path(staging) / ATTEMPTS_DIR / (
            f"{ctx.stageId()}-{ctx.partitionId()}-{ctx.taskAttemptId()}")
        # "waited": seconds spent pulling rows out of Spark inside write_region, which are
        # Spark's time (shuffle read, sort), not hfkit's.
        group = {"part": None, "pending": None, "waited": 0.0}

        def pull(rest):
            t = time.monotonic()
            b = next(rest, None)
            group["waited"] += time.monotonic() - t
            return b

        def rows_of_part(first, rest):
            """Batches of one task number, stripped of the added columns; stops at the next
            task number, which it leaves in group["pending"]."""
            b = first
            while True:
                same = pc.equal(b.column(PART_COLUMN), group["part"])
                n = pc.sum(pc.cast(same, pa.int64())).as_py() or 0
                # Sorted within the partition: this part's rows come first.
                yield _drop(b.slice(0, n))
                if n < b.num_rows:
                    group["pending"] = b.slice(n)
                    return
                b = pull(rest)
                if b is None:
                    return

        it = iter(batches)
        b = next(it, None)
        while b is not None:
            if b.num_rows == 0:
                b = next(it, None)
                continue
            group["part"] = b.column(PART_COLUMN)[0].as_py()
            region = b.column(REGION_COLUMN)[0].as_py()
            group["pending"] = None
            group["waited"] = 0.0
            out = attempt / f"part-{group['part']}"
            started = time.monotonic()
            files = write_region(schema, region, rows_of_part(b, it), str(out), memory=memory,
                                 import_time=import_time,
                                 name=f"spark partition {ctx.partitionId()}")
            seconds = time.monotonic() - started - group["waited"]
            if on_written is not None:
                on_written(files)
            if files:
                yield pa.RecordBatch.from_pylist([
                    {"part_dir": str(out), "path": f["path"], "table": f["table"],
                     "family": f["family"], "region": f["region"], "cells": f["cells"],
                     "bytes": f["bytes"], "seconds": seconds if i == 0 else 0.0}
                    for i, f in enumerate(files)
                ], schema=_RESULT)
            b = group["pending"]
            if b is None:
                b = next(it, None)
    return write


def _drop(b):
    """The batch without the columns bulk_load added."""
    keep = [i for i, n in enumerate(b.schema.names) if n not in (REGION_COLUMN, PART_COLUMN)]
    return pa.RecordBatch.from_arrays([b.column(i) for i in keep],
                                      names=[b.schema.names[i] for i in keep])


def _parts(tagged, schema, rows_per_task):
    """Adds each row's task number: its region's, or with ``rows_per_task``, one of its
    region's ceil(rows / rows_per_task) numbers. Returns the frame and the number of tasks."""
    from pyspark.sql import functions as F
    n_regions = schema.region_count()
    if not rows_per_task:
        return tagged.withColumn(PART_COLUMN, F.col(REGION_COLUMN)), n_regions
    counts = dict(tagged.groupBy(REGION_COLUMN).count().collect())
    offsets, tasks, total = {}, {}, 0
    for r in range(n_regions):
        tasks[r] = max(1, -(-counts.get(r, 0) // rows_per_task))
        offsets[r] = total
        total += tasks[r]
    def lookup(m):
        return F.element_at(F.create_map(*[F.lit(x) for kv in m.items() for x in kv]),
                            F.col(REGION_COLUMN))
    data_cols = [c for c in tagged.columns if c != REGION_COLUMN]
    salt = F.pmod(F.hash(*data_cols), lookup(tasks))
    return tagged.withColumn(PART_COLUMN, lookup(offsets) + salt), total


def bulk_load(df, schema, out=None, table=None, memory=256 << 20, import_time=None,
              rows_per_task=None, staging=None, on_written=None):
    """Writes the rows of the Spark DataFrame ``df`` through ``schema``'s mapping (a ``Schema``
    or a path to its TOML) as HFiles and publishes them: attached to the table directory
    ``table`` (created from the schema if absent), or assembled as one bulk-load directory
    ``out``. Every column ``df`` has is rendered as text as a Parquet file's values are
    (``formats/import.md`` §"Sources"); read CSV without schema inference to keep its text.

    ``memory``: each task's sort budget in bytes; ``import_time``: epoch ms of cells without a
    timestamp (default: now, the same for every task); ``rows_per_task``: spread a region over
    several tasks past this many rows; ``staging``: where the task attempts write (default:
    inside ``out``, or beside ``table``); ``on_written(files)``: called in the task after each
    ``write_region``.

    Returns a dict: files, cells, bytes, tasks, attached ({table: manifest version}),
    hfkit_seconds (task time spent in write_region, less the time it waited for rows from
    Spark) and seconds (the whole job).
    """
    if (out is None) == (table is None):
        raise ValueError("give exactly one of out= or table=")
    started = time.monotonic()
    if not isinstance(schema, Schema):
        schema = Schema.load(str(schema))
    if import_time is None:
        import_time = int(time.time() * 1000)
    if table is not None:
        table = Path(table).absolute()
        if (table / "CURRENT").exists():
            schema = _regions_of(schema, table)
        else:
            create_tables(schema, str(table))
        if staging is None:
            staging = table.parent / f".{table.name}.hfkit-bulkload-{uuid.uuid4().hex}"
    else:
        out = Path(out).absolute()
        if out.exists() and any(p.is_file() for p in out.rglob("*")):
            raise ValueError(f"{out}: already holds files")
        if staging is None:
            staging = out / f"_hfkit-bulkload-{uuid.uuid4().hex}"
    staging = Path(staging).absolute()
    try:
        from pyspark.sql.types import IntegerType, StructField, StructType
        tagged_schema = StructType(df.schema.fields + [StructField(REGION_COLUMN, IntegerType())])
        tagged = df.mapInArrow(_tag_regions(schema), tagged_schema)
        parted, n_tasks = _parts(tagged, schema, rows_per_task)
        write = _write_parts(schema, str(staging), memory, import_time, on_written)
        results = (parted.repartition(n_tasks, PART_COLUMN)
                   .sortWithinPartitions(PART_COLUMN)
                   .mapInArrow(write, _RESULT_DDL)
                   .collect())
        part_dirs = sorted({r["part_dir"] for r in results})
        summary = {
            "files": len(results),
            "cells": sum(r["cells"] for r in results),
            "bytes": sum(r["bytes"] for r in results),
            "tasks": n_tasks,
            "hfkit_seconds": sum(r["seconds"] for r in results),
            "attached": {},
        }
        if table is not None:
            if part_dirs:
                summary["attached"] = attach(str(table), part_dirs)
        else:
            _assemble(out, part_dirs)
        summary["seconds"] = time.monotonic() - started
        return summary
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _assemble(out, part_dirs):
    """Moves the committed attempts' files into the one bulk-load directory ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for d in part_dirs:
        d = Path(d)
        for f in d.rglob("*"):
            rel = f.relative_to(d)
            if not f.is_file() or any(p.startswith(".hfkit-") for p in rel.parts):
                continue
            dest = out / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.exists():
                raise FileExistsError(f"{dest}: two attempts wrote one file name")
            os.replace(f, dest)
