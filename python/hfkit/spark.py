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
``local`` mode, a shared file system on a cluster), or be ``s3://`` URLs: then the attempts
write into staging under the URL, and the driver copies the committed attempts' objects into
``out`` (server-side) or attaches their directories (``formats/python.md`` §"Object
storage").
"""

import json
import os
import shutil
import socket
import tempfile
import threading
import time
import uuid
import warnings
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from . import (HfkitError, Schema, Table, TableError, attach, configure_storage, copy_object,
               create_tables, delete_object, get_object, head_object, list_objects,
               put_object, write_region)

REGION_COLUMN = "__hfkit_region"
PART_COLUMN = "__hfkit_part"
# The row's position in the DataFrame (monotonically_increasing_id, taken before the shuffle):
# each task reads its rows in this order, so that of two cells with the same coordinates the
# last in the DataFrame is kept, as `hfkit import` keeps the last one read.
ORDER_COLUMN = "__hfkit_order"
# The row's key (with rows_per_task only): a large region is cut into row-key ranges.
KEY_COLUMN = "__hfkit_key"
ADDED_COLUMNS = (REGION_COLUMN, PART_COLUMN, ORDER_COLUMN, KEY_COLUMN)
ATTEMPTS_DIR = "_attempts"
# In a load's staging: a marker per task writing into it, and the driver's record that the
# load has ended (``_task_in``, ``_remove_staging``).
RUNNING_DIR = "_running"
ABANDONED = "_abandoned"
# How long the driver waits for tasks still writing into the staging of a load that ended.
QUIESCE_SECONDS = 600
# A running task rewrites its marker this often; a marker unchanged for STALE_SECONDS is a
# dead worker's.
HEARTBEAT_SECONDS = 1.0
STALE_SECONDS = 10.0
# In a job's local staging: who runs it (host, pid), for a later job's sweep (``_sweep``).
DRIVER_FILE = "_driver.json"
# HBase's hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily default.
MAX_FILES_PER_REGION_FAMILY = 32
# Row keys sampled per task of a large region to cut it into row-key ranges.
SAMPLE_KEYS_PER_TASK = 64
# Records sampled for [splits] sample = N, as `hfkit import --sample-rows`'s default.
DEFAULT_SAMPLE_ROWS = 100_000

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


def _is_remote(p):
    """Whether ``p`` names object storage (``s3://bucket/prefix``) rather than a local path."""
    return str(p).startswith("s3://")


def _join(base, *names):
    """``base``/``names``: a URL's or a path's."""
    if _is_remote(base):
        return "/".join([str(base).rstrip("/"), *names])
    return str(Path(base, *names))


def _table_exists(table):
    if not _is_remote(table):
        return (Path(table) / "CURRENT").exists()
    try:
        Table(table)
        return True
    except TableError:
        return False


def _regions_of(schema, table):
    """`schema` over the regions of the existing table at `table` and of its index tables."""
    main = Table(table).split_points()
    indexes = []
    for q in schema.index_tables:
        ix = _join(table, "indexes", q)
        indexes.append(Table(ix).split_points() if _table_exists(ix)
                       else schema.index_split_points()[len(indexes)])
    return schema.with_regions(main, indexes)


def _tag_regions(schema, with_keys):
    """The mapInArrow function adding each row's region (and with ``with_keys``, its row key).
    The row keys and regions are computed from the input's own columns, not the added order."""
    def tag(batches):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        name = f"spark partition {ctx.partitionId()}" if ctx else "record batches"
        for i, b in enumerate(batches):
            data = _drop(b)
            added = [schema.regions(data, name=name, number=i)]
            names = [REGION_COLUMN]
            if with_keys:
                added.append(schema.row_keys(data, name=name, number=i))
                names.append(KEY_COLUMN)
            yield pa.RecordBatch.from_arrays(b.columns + added, names=b.schema.names + names)
    return tag


def _write_parts(schema, staging, memory, import_time, on_written, s3_endpoint):
    """The mapInArrow function of the write stage: the task's rows, sorted by task number, each
    task number's rows written by ``write_region`` into the attempt's own directory."""
    def write(batches):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        if s3_endpoint is not None:
            configure_storage(s3_endpoint)
        attempt = _join(staging, ATTEMPTS_DIR,
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

        with _task_in(staging):
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
                out = _join(attempt, f"part-{group['part']}")
                started = time.monotonic()
                files = write_region(schema, region, rows_of_part(b, it), str(out), memory=memory,
                                     import_time=import_time,
                                     name=f"spark partition {ctx.partitionId()}")
                seconds = time.monotonic() - started - group["waited"]
                if on_written is not None:
                    on_written(files)
                if files:
                    yield pa.RecordBatch.from_pylist([
                        {"part_dir": out, "path": f["path"], "table": f["table"],
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
    keep = [i for i, n in enumerate(b.schema.names) if n not in ADDED_COLUMNS]
    return pa.RecordBatch.from_arrays([b.column(i) for i in keep],
                                      names=[b.schema.names[i] for i in keep])


def _cut_points(sample, tasks):
    """Row keys cutting one region into at most ``tasks`` row-key ranges at the quantiles of
    ``sample`` (its sampled row keys), as ``[splits] sample`` cuts a table: sorted distinct keys
    s_0 < ... < s_{m-1}, cut i at s_floor(i*m/tasks), none repeated, never s_0."""
    keys = sorted(set(sample))
    cuts = []
    for i in range(1, tasks):
        idx = i * len(keys) // tasks
        if idx > 0 and (not cuts or cuts[-1] != keys[idx]):
            cuts.append(keys[idx])
    return cuts


def _parts(tagged, schema, rows_per_task, max_tasks_per_region, seed):
    """Adds each row's task number: its region's, or with ``rows_per_task``, a region of more
    rows is cut into row-key ranges of about that many rows (at most ``max_tasks_per_region``),
    each range a task: rows with the same row key always meet in one task. Returns the frame and
    the number of tasks."""
    from pyspark.sql import functions as F
    n_regions = schema.region_count()
    if not rows_per_task:
        return tagged.withColumn(PART_COLUMN, F.col(REGION_COLUMN)), n_regions
    counts = dict(tagged.groupBy(REGION_COLUMN).count().collect())
    wanted = {r: min(max_tasks_per_region, -(-c // rows_per_task))
              for r, c in counts.items() if r is not None and c > rows_per_task}
    cuts = {}
    if wanted:
        large = sum(counts[r] for r in wanted)
        fraction = min(1.0, SAMPLE_KEYS_PER_TASK * sum(wanted.values()) / large)
        sample = {}
        for row in (tagged.where(F.col(REGION_COLUMN).isin(list(wanted)))
                    .select(REGION_COLUMN, KEY_COLUMN)
                    .sample(withReplacement=False, fraction=fraction, seed=seed)
                    .collect()):
            sample.setdefault(row[0], []).append(bytes(row[1]))
        cuts = {r: _cut_points(sample.get(r, []), k) for r, k in wanted.items()}
    offsets, total = {}, 0
    for r in range(n_regions):
        offsets[r] = total
        total += 1 + len(cuts.get(r, []))
    region = F.col(REGION_COLUMN)
    part = F.element_at(F.create_map(*[F.lit(x) for kv in offsets.items() for x in kv]), region)
    key = F.col(KEY_COLUMN)
    for r, keys in cuts.items():
        for k in keys:
            part = part + F.when((region == r) & (key >= F.lit(bytearray(k))), 1).otherwise(0)
    return tagged.withColumn(PART_COLUMN, part), total


def _sampled_regions(df, schema, sample_rows):
    """``schema`` over the regions its ``[splits] sample = N`` cuts from the first
    ``sample_rows`` rows of ``df``, sampled as ``hfkit import`` samples its input's first
    records (the rows written as one Parquet file on the driver, read by the import's sampler)."""
    import pyarrow.parquet as pq
    first = df.limit(sample_rows)
    if hasattr(first, "toArrow"):
        rows = first.toArrow()
    else:  # Spark 3.x
        rows = pa.Table.from_batches(first._collect_as_arrow(), schema=None)
    with tempfile.TemporaryDirectory(prefix="hfkit-sample-") as scratch:
        path = os.path.join(scratch, "sample.parquet")
        pq.write_table(rows, path)
        return schema.with_sampled_regions([path], sample_rows=sample_rows)


def _check_files_per_store(results, limit, name=str,
                           hint="Use fewer tasks per region (a larger rows_per_task)"):
    """Refuses, before anything is published, more than ``limit`` files for one region and
    family of a table (index tables get a file from every task with rows of their region).
    ``name``: a table's name from a result's ``table``; ``hint``: what to do first."""
    per_store = {}
    for r in results:
        key = (r["table"], r["region"], r["family"])
        per_store[key] = per_store.get(key, 0) + 1
    over = sorted((n, k) for k, n in per_store.items() if n > limit)
    if over:
        n, (table, region, family) = over[-1]
        raise ValueError(
            f"table {name(table)} region {region} family {family}: {n} files, more than "
            f"max_files_per_region_family={limit} (HBase's "
            f"hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily); nothing was published. "
            f"{hint}, or raise the limit (and HBase's setting for completebulkload) and "
            f"compact the table afterwards")


def bulk_load(df, schema, out=None, table=None, memory=256 << 20, import_time=None,
              rows_per_task=None, staging=None, on_written=None,
              max_files_per_region_family=MAX_FILES_PER_REGION_FAMILY,
              sample_rows=DEFAULT_SAMPLE_ROWS, seed=0, s3_endpoint=None, route="spark",
              **routed):
    """Writes the rows of the Spark DataFrame ``df`` through ``schema``'s mapping (a ``Schema``
    or a path to its TOML) as HFiles and publishes them: attached to the table directory
    ``table`` (created from the schema if absent), or assembled as one bulk-load directory
    ``out``. Every column ``df`` has is rendered as text as a Parquet file's values are
    (``formats/import.md`` §"Sources"); read CSV without schema inference to keep its text.
    Of two cells with the same coordinates the last in ``df``'s order is kept, as ``hfkit
    import`` keeps the last one read.

    ``memory``: each task's sort budget in bytes; ``import_time``: epoch ms of cells without a
    timestamp (default: now, the same for every task); ``rows_per_task``: cut a region of more
    rows into row-key ranges of about that many rows, one task each (at most
    ``max_files_per_region_family`` per region); ``staging``: where the task attempts write
    (default: inside ``out``, or beside ``table``); ``on_written(files)``: called in the task
    after each ``write_region``; ``max_files_per_region_family``: HBase's
    ``hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily`` (default 32), checked for every
    table before anything is published; ``sample_rows``: rows of ``df`` sampled for ``[splits]
    sample = N`` (its first rows, as the import samples its input's first records); ``seed``: of
    the row-key sample cutting large regions; ``s3_endpoint``: the S3-compatible endpoint of
    ``s3://`` locations, set in the driver and every task (``configure_storage``; default: the
    AWS environment, ``AWS_ENDPOINT_URL``, as the CLI). ``out``, ``table`` and ``staging`` may
    be ``s3://`` URLs.

    ``route``: ``spark`` (Spark shuffles the rows to a task per region, as above) or ``hfkit``:
    no shuffle; each partition's Arrow batches are imported by hfkit in its task, routed to
    every region's run files, and the regions merged by file as ``bulk_load_files`` does
    (``formats/python.md`` §"The DataFrame path"; ``rows_per_task``, ``on_written`` and
    ``seed`` are the shuffle's; ``routed`` takes ``bulk_load_files``' ``merge``,
    ``max_file_size``, ``on_task`` and ``progress``).

    Returns a dict: files, cells, bytes, tasks, attached ({table: manifest version}),
    hfkit_seconds (task time spent in write_region, less the time it waited for rows from
    Spark) and seconds (the whole job); with ``route="hfkit"``, ``bulk_load_files``' counts.
    """
    if route == "hfkit":
        if rows_per_task or on_written is not None or seed:
            raise ValueError("rows_per_task, on_written and seed are route='spark''s")
        from .spark_files import bulk_load_routed
        return bulk_load_routed(df, schema, out=out, table=table, memory=memory,
                                import_time=import_time, staging=staging,
                                max_files_per_region_family=max_files_per_region_family,
                                sample_rows=sample_rows, s3_endpoint=s3_endpoint, **routed)
    if route != "spark" or routed:
        raise ValueError(f"route={route!r} ({sorted(routed)}): 'spark', or 'hfkit' with "
                         "merge=, max_file_size=, on_task=, progress=")
    started = time.monotonic()
    out, table, schema, import_time = _begin(out, table, schema, import_time, s3_endpoint)
    job = uuid.uuid4().hex
    if table is not None:
        if staging is None:
            parent, name = table.rstrip("/").rsplit("/", 1)
            # Not `.<name>.hfkit-*`: creating the table sweeps those (`staging::beside`).
            staging = _join(parent, f".hfkit-bulkload-{name}-{job}")
    else:
        _refuse_filled(out, lambda parts: True)
        if staging is None:
            staging = _join(out, f"_hfkit-bulkload-{job}")
    staging = _absolute(staging)
    try:
        _open_staging(staging)
        from pyspark.sql import functions as F
        from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType
        exists = table is not None and _table_exists(table)
        if exists:
            schema = _regions_of(schema, table)
        elif schema.samples_splits:
            schema = _sampled_regions(df, schema, sample_rows)
        if table is not None and not exists:
            create_tables(schema, table)
        ordered = df.withColumn(ORDER_COLUMN, F.monotonically_increasing_id())
        added = [StructField(REGION_COLUMN, IntegerType())]
        if rows_per_task:
            added.append(StructField(KEY_COLUMN, BinaryType()))
        tagged = ordered.mapInArrow(_tag_regions(schema, bool(rows_per_task)),
                                    StructType(ordered.schema.fields + added))
        parted, n_tasks = _parts(tagged, schema, rows_per_task, max_files_per_region_family,
                                 seed)
        write = _write_parts(schema, staging, memory, import_time, on_written, s3_endpoint)
        results = (parted.repartition(n_tasks, PART_COLUMN)
                   .sortWithinPartitions(PART_COLUMN, ORDER_COLUMN)
                   .mapInArrow(write, _RESULT_DDL)
                   .collect())
        _check_files_per_store(results, max_files_per_region_family)
        part_dirs = sorted({r["part_dir"] for r in results})
        summary = {
            "files": len(results),
            "cells": sum(r["cells"] for r in results),
            "bytes": sum(r["bytes"] for r in results),
            "tasks": n_tasks,
            "hfkit_seconds": sum(r["seconds"] for r in results),
            "attached": {},
        }
        summary["attached"] = _publish(table, out, part_dirs, max_files_per_region_family)
        summary["seconds"] = time.monotonic() - started
        return summary
    finally:
        _remove_staging(staging)


def _begin(out, table, schema, import_time, s3_endpoint):
    """A load's arguments checked and settled: exactly one of ``out`` and ``table`` (made
    absolute), the object-storage endpoint set, the schema loaded, the import time fixed (the
    driver's clock, one value for every task)."""
    if (out is None) == (table is None):
        raise ValueError("give exactly one of out= or table=")
    if s3_endpoint is not None:
        configure_storage(s3_endpoint)
    if not isinstance(schema, Schema):
        schema = Schema.load(str(schema))
    if import_time is None:
        import_time = int(time.time() * 1000)
    out = None if out is None else _absolute(out)
    table = None if table is None else _absolute(table)
    return out, table, schema, import_time


def _refuse_filled(out, counts):
    """Refuses a bulk-load directory ``out`` that already holds an object, or a file whose
    relative path's parts ``counts`` accepts."""
    if _is_remote(out):
        if list_objects(out):
            raise ValueError(f"{out}: already holds objects")
    elif Path(out).exists() and any(
            p.is_file() and counts(p.relative_to(out).parts) for p in Path(out).rglob("*")):
        raise ValueError(f"{out}: already holds files")


def _publish(table, out, dirs, limit):
    """The bulk-load directories ``dirs`` attached to ``table`` (one commit per table, index
    tables first), or assembled into the one directory ``out``. Returns {table: version}."""
    if table is not None:
        return attach(table, dirs, max_files_per_region_family=limit) if dirs else {}
    if _is_remote(out):
        _assemble_remote(out, dirs)
    else:
        _assemble(Path(out), dirs)
    return {}


def _open_staging(staging):
    """Makes the staging a load's tasks write into, with its directory of running tasks'
    markers (``_task_in``)."""
    if not _is_remote(staging):
        Path(staging, RUNNING_DIR).mkdir(parents=True, exist_ok=True)


@contextmanager
def _task_in(staging):
    """Runs a task's writing into ``staging`` under a marker of its own in
    ``STAGING/_running/``, so that the driver removes the staging only once no task writes
    into it any more (``_remove_staging``). A failed job leaves tasks running: Spark ends
    their JVM side, but their Python workers write on. The marker is made before the task
    looks for the driver's ``_abandoned`` record, and the driver lists markers after writing
    that record: a task either sees the record and writes nothing, or its marker is seen. A
    local marker is made without its parent directories: once the driver has removed the
    staging, no task can make any. While the task runs, a thread rewrites its marker every
    ``HEARTBEAT_SECONDS``: the marker of a worker that died stops changing, and the driver
    stops waiting for it."""
    marker = _join(staging, RUNNING_DIR, uuid.uuid4().hex)
    abandoned = _join(staging, ABANDONED)
    remote = _is_remote(staging)
    ended = f"{staging}: the load has ended; this task writes nothing"
    beats = [0]

    def beat():
        beats[0] += 1
        if remote:
            put_object(marker, str(beats[0]).encode())
        else:
            with open(marker, "w") as f:
                f.write(str(beats[0]))

    if remote:
        beat()
    else:
        try:
            open(marker, "x").close()
        except FileNotFoundError:
            raise RuntimeError(ended)
    stop = threading.Event()

    def heartbeat():
        while not stop.wait(HEARTBEAT_SECONDS):
            try:
                beat()
            except (OSError, HfkitError):
                return  # the staging is gone: the driver no longer waits

    thread = threading.Thread(target=heartbeat, name="hfkit-task-heartbeat", daemon=True)
    try:
        if (head_object(abandoned) is not None if remote else os.path.exists(abandoned)):
            raise RuntimeError(ended)
        thread.start()
        yield
    finally:
        stop.set()
        if thread.is_alive():
            thread.join()
        if remote:
            delete_object(marker)
        else:
            try:
                os.remove(marker)
            except FileNotFoundError:
                pass


def _running(staging):
    """The markers of tasks in ``staging``: (name, what it holds now), the second changing
    while its task lives."""
    if _is_remote(staging):
        return [(url, get_object(url)) for url, _ in list_objects(_join(staging, RUNNING_DIR))]
    d = _join(staging, RUNNING_DIR)
    out = []
    try:
        names = os.listdir(d)
    except FileNotFoundError:
        return out
    for n in names:
        try:
            with open(os.path.join(d, n)) as f:
                out.append((n, f.read()))
        except FileNotFoundError:
            pass  # ended meanwhile
    return out


def _quiesce(staging, wait=QUIESCE_SECONDS):
    """Waits up to ``wait`` seconds until no task writes into ``staging`` (``_task_in``): its
    running tasks' markers gone, a marker unchanged for ``STALE_SECONDS`` counting as gone (its
    worker died). False if some still write."""
    deadline = time.monotonic() + wait
    seen = {}  # marker: (what it held, since when, on this clock)
    pause = 0.01
    while True:
        now = time.monotonic()
        live = []
        for name, held in _running(staging):
            before = seen.get(name)
            if before is None or before[0] != held:
                seen[name] = (held, now)
                live.append(name)
            elif now - before[1] < STALE_SECONDS:
                live.append(name)
        if not live:
            return True
        if now >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.5)


def _remove_staging(staging, wait=QUIESCE_SECONDS):
    """Removes a load's staging, objects or files, once no task writes into it (``_task_in``):
    the ``_abandoned`` record first, then up to ``wait`` seconds for the running tasks'
    markers to go, a marker unchanged for ``STALE_SECONDS`` counting as gone (its worker
    died). A failure is warned of (the job's own error, if any, is the one raised)."""
    abandoned = _join(staging, ABANDONED)
    try:
        if _is_remote(staging):
            put_object(abandoned, b"")
        elif Path(staging).is_dir():
            Path(abandoned).touch()
        if not _quiesce(staging, wait):
            warnings.warn(f"{staging}: tasks still write into it after {wait:.0f}s; "
                          "removed anyway")
        if _is_remote(staging):
            # The record last: a task starting meanwhile still sees it.
            for url, _ in list_objects(staging):
                if url != abandoned:
                    delete_object(url)
            delete_object(abandoned)
        else:
            shutil.rmtree(staging, ignore_errors=True)
    except HfkitError as e:
        warnings.warn(f"{staging}: staging objects not removed: {e}")


def _write_driver_file(staging):
    """Who runs the load: a later load sweeping staging directories asks whether it still runs."""
    record = json.dumps({"host": socket.gethostname(), "pid": os.getpid(),
                         "started": time.time()})
    if _is_remote(staging):
        return  # swept by age (see _sweep)
    Path(staging).mkdir(parents=True, exist_ok=True)
    (Path(staging) / DRIVER_FILE).write_text(record)


def _sweep(parent, prefix):
    """Removes the staging directories under ``parent`` of loads whose driver died: on this
    host, a driver process that no longer exists. Others' are left alone."""
    if _is_remote(parent) or not Path(parent).is_dir():
        return
    for d in Path(parent).iterdir():
        if not d.name.startswith(prefix) or not d.is_dir():
            continue
        try:
            rec = json.loads((d / DRIVER_FILE).read_text())
        except (OSError, ValueError):
            continue
        if rec.get("host") != socket.gethostname():
            continue
        try:
            os.kill(int(rec["pid"]), 0)
            continue  # alive
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except (PermissionError, ValueError, KeyError):
            continue


def _absolute(p):
    return str(p).rstrip("/") if _is_remote(p) else str(Path(p).absolute())


def _published(rel):
    """Whether a file of a task's bulk-load directory, at ``rel`` (its parts), is published:
    not the import's own records (``.hfkit-*``)."""
    return not any(p.startswith(".hfkit-") for p in rel)


def _assemble_remote(out, part_dirs):
    """Copies (server-side) the committed attempts' objects into the one bulk-load directory
    ``out`` on object storage; the attempts are removed with the staging prefix after."""
    for d in part_dirs:
        for url, _ in list_objects(d):
            rel = url[len(d.rstrip("/")) + 1:]
            if _published(rel.split("/")):
                copy_object(url, _join(out, rel))


def _assemble(out, part_dirs):
    """Moves the committed attempts' files into the one bulk-load directory ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for d in part_dirs:
        d = Path(d)
        for f in d.rglob("*"):
            rel = f.relative_to(d)
            if not f.is_file() or not _published(rel.parts):
                continue
            dest = out / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.exists():
                raise FileExistsError(f"{dest}: two attempts wrote one file name")
            os.replace(f, dest)


def bulk_load_files(spark, inputs, schema, **kwargs):
    """``hfkit.spark_files.bulk_load_files``: files bulk-loaded by hfkit's native code in
    Spark's tasks (no row passes through the JVM or Python)."""
    from .spark_files import bulk_load_files as load
    return load(spark, inputs, schema, **kwargs)


def compact(spark, table, **kwargs):
    """``hfkit.spark_compact.compact``: ``hfkit compact`` with a Spark task per store."""
    from .spark_compact import compact as run
    return run(spark, table, **kwargs)


def compact_hbase(spark, root, table, **kwargs):
    """``hfkit.spark_compact.compact_hbase``: ``hfkit hbase compact`` (HBase's CompactionTool)
    of an HBase table in place, with a Spark task per store."""
    from .spark_compact import compact_hbase as run
    return run(spark, root, table, **kwargs)


def export(spark, table, to, **kwargs):
    """``hfkit.spark_export.export``: ``hfkit export --format`` as a part per region, each
    written by a Spark task."""
    from .spark_export import export as run
    return run(spark, table, to, **kwargs)


def copy_snapshot(spark, src, dest, snapshot, **kwargs):
    """``hfkit.spark_copy.copy_snapshot``: ``hfkit hbase copy-snapshot`` (HBase's
    ExportSnapshot) with the files copied by ``parallelism`` Spark tasks."""
    from .spark_copy import copy_snapshot as run
    return run(spark, src, dest, snapshot, **kwargs)


def export_snapshot(spark, table, root, name, **kwargs):
    """``hfkit.spark_copy.export_snapshot``: ``hfkit hbase export-snapshot`` with the store
    files copied by Spark tasks."""
    from .spark_copy import export_snapshot as run
    return run(spark, table, root, name, **kwargs)
