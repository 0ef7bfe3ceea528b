"""Bulk load of files on Spark at hfkit's own speed (``formats/python.md`` §"Bulk load of
files"): Spark schedules, retries and places the tasks; hfkit's native code reads, encodes,
sorts, merges and writes. No row passes through the JVM or Python objects: Spark moves file
names, split descriptions and small summaries, and the shuffle is files.

``bulk_load_files(spark, inputs, schema, table=... | out=...)``:

1. Driver: the inputs (paths, globs, ``s3://`` URLs; CSV/TSV, ``.gz``/``.zst`` whole-file, or
   Parquet) cut into splits (``input_splits``: byte ranges of plain CSV files, read from record
   boundaries as Hadoop's LineRecordReader reads; runs of Parquet row groups); the target
   regions (an existing table's, the schema's splits, or ``[splits] sample = N`` sampled from
   the inputs as ``hfkit import`` samples).
2. Stage 1, a task per split: ``import_split`` into ``STAGING/s1/<split>-<attempt>/``: the
   split's cells encoded, routed to their regions, sorted and written as HFiles, one per
   region and family, index tables too (with ``merge="always"``, as uncompressed *run
   files*).
3. Stage 2, a task per region of each table that needs it: ``merge_region`` merges the
   region's files of every split, in split order (a later split's cell wins, as a later
   record does in one import), into its final HFiles in
   ``STAGING/s2/<table>-<region>-<attempt>/``. With ``merge="auto"`` a region whose files
   lie in key ranges of their own (row keys that grow with the input) and are few enough is
   published as stage 1 wrote it, with no second pass over its cells.
4. Driver: only the attempts whose results Spark returned (one per task) are published:
   attached (one commit per table, index tables first; a new table is created just before)
   or moved into ``out``. A schema of several ``[[table]]`` sections runs stages 1 and 2 for
   each table in turn (tasks' directories named by the table's position), and publishes only
   once every table's stages are done, each at ``<table or out>/<qualifier>``. ``STAGING`` is
   removed at the end, whatever happened; a driver killed mid-job leaves it, and the next
   load into the same place removes it (``_sweep``).
"""

import os
import time
import uuid
from pathlib import Path

from . import (Schema, configure_storage, copy_object, create_tables, import_batches,
               import_split, input_splits, keys_disjoint, merge_region)
from .spark import (DEFAULT_SAMPLE_ROWS, MAX_FILES_PER_REGION_FAMILY, _absolute, _begin,
                    _check_files_per_store, _is_remote, _join, _open_staging, _publish,
                    _refuse_filled, _regions_of, _remove_staging, _sampled_regions, _sweep,
                    _table_exists, _task_in, _write_driver_file)

STAGING_PREFIX = "hfkit-files-"


def _absolute_input(p):
    p = str(p)
    return p if _is_remote(p) else str(Path(p).absolute())


def _attempt():
    """``<stage>-<partition>-<attempt id>`` of the running task: a directory of its own."""
    from pyspark import TaskContext
    ctx = TaskContext.get()
    return f"{ctx.partitionId()}-{ctx.taskAttemptId()}"


def _stage1(schema, staging, tag, fmt, csv, memory, import_time, s3_endpoint, on_task,
            run_files):
    def run(items):
        if s3_endpoint is not None:
            configure_storage(s3_endpoint)
        for index, split in items:
            out = _join(staging, "s1", f"{tag}{index}-{_attempt()}")
            started, cpu = time.monotonic(), time.process_time()
            with _task_in(staging):
                r = import_split(schema, split, out, format=fmt, csv=csv, memory=memory,
                                 import_time=import_time, run_files=run_files)
                r["seconds"] = time.monotonic() - started
                r["cpu_seconds"] = time.process_time() - cpu
                r["split"] = index
                r["dir"] = out
                if on_task is not None:
                    on_task(1, index)
            yield r
    return run


def _stage2(schema, staging, tag, import_time, max_file_size, exclude, s3_endpoint, on_task):
    def run(items):
        if s3_endpoint is not None:
            configure_storage(s3_endpoint)
        for (table, region), runs in items:
            out = _join(staging, "s2", f"{tag}{table}-{region}-{_attempt()}")
            started, cpu = time.monotonic(), time.process_time()
            with _task_in(staging):
                files = merge_region(schema, table, region, runs, out, import_time=import_time,
                                     max_file_size=max_file_size,
                                     exclude_from_minor_compaction=exclude)
                seconds = time.monotonic() - started
                cpu = time.process_time() - cpu
                if on_task is not None:
                    on_task(2, (table, region))
            yield {"table": table, "region": region, "dir": out, "files": files,
                   "seconds": seconds, "cpu_seconds": cpu, "runs": len(runs)}
    return run


def _staging(out, table, staging, job):
    """Where job ``job`` of a load into ``table`` (or the bulk-load directory ``out``, refused
    when it already holds files) stages its tasks' files: ``staging``, or beside the table,
    or inside ``out``; a dead load's staging there is swept first."""
    if table is not None:
        parent, name = table.rstrip("/").rsplit("/", 1)
        if staging is None:
            _sweep(parent, f".{STAGING_PREFIX}")
            staging = _join(parent, f".{STAGING_PREFIX}{name}-{job}")
    else:
        # A dead load's staging (`_hfkit-files-*`) is no output: it is swept below.
        _refuse_filled(out, lambda parts: not any(q.startswith("_") for q in parts))
        if staging is None:
            _sweep(out, f"_{STAGING_PREFIX}")
            staging = _join(out, f"_{STAGING_PREFIX}{job}")
    return _absolute(staging)


def _say(progress):
    """A stage's line on standard error, with ``progress``."""
    def say(line):
        if progress:
            import sys
            print(f"hfkit: {line}", file=sys.stderr, flush=True)
    return say


def _stage1_batches(schema, staging, memory, import_time, s3_endpoint, on_task, run_files):
    """Stage 1 of the DataFrame path: a partition's Arrow batches imported by
    ``import_batches`` into the task attempt's directory; one row of JSON out (the keys as hex)."""
    def run(batches):
        import json
        import pyarrow as pa
        from pyspark import TaskContext
        if s3_endpoint is not None:
            configure_storage(s3_endpoint)
        ctx = TaskContext.get()
        index = ctx.partitionId()
        out = _join(staging, "s1", f"{index}-{ctx.taskAttemptId()}")
        started, cpu = time.monotonic(), time.process_time()
        with _task_in(staging):
            r = import_batches(schema, batches, out, memory=memory, import_time=import_time,
                               run_files=run_files, name=f"partition {index}")
            if on_task is not None:
                on_task(1, index)
        r.update(seconds=time.monotonic() - started, cpu_seconds=time.process_time() - cpu,
                 split=index, dir=out, bytes=r["input_bytes"])
        for f in r["files"]:
            f["first_key"], f["last_key"] = f["first_key"].hex(), f["last_key"].hex()
        yield pa.RecordBatch.from_pydict({"result": [json.dumps(r)]})
    return run


def bulk_load_routed(df, schema, out=None, table=None, memory=256 << 20, import_time=None,
                     staging=None, max_files_per_region_family=MAX_FILES_PER_REGION_FAMILY,
                     max_file_size=None, exclude_from_minor_compaction=False,
                     sample_rows=DEFAULT_SAMPLE_ROWS, s3_endpoint=None, on_task=None,
                     progress=False, merge="auto"):
    """``bulk_load(df, ..., route="hfkit")``: the DataFrame's rows routed to their regions by
    hfkit in each task, not shuffled by Spark (``formats/python.md`` §"The DataFrame path").
    Stage 1, a task per partition of ``df``: its Arrow batches imported as a split of
    ``bulk_load_files`` is (every region's cells, a file per region and family, into the
    staging); then stage 2 and the publication of ``bulk_load_files``. Of two cells with the
    same coordinates the last in ``df``'s order (partition, then row) is kept. Returns the
    counts of ``bulk_load_files`` (``splits``: the partitions)."""
    if merge not in ("auto", "always"):
        raise ValueError(f"merge={merge!r}: 'auto' or 'always'")
    started = time.monotonic()
    out, table, schema, import_time = _begin(out, table, schema, import_time, s3_endpoint)
    job = uuid.uuid4().hex
    staging = _staging(out, table, staging, job)
    sc = df.sparkSession.sparkContext

    say = _say(progress)

    try:
        _write_driver_file(staging)
        _open_staging(staging)
        load = _Load(sc, job, staging, None, say, memory=memory, import_time=import_time,
                     max_file_size=max_file_size, exclude=exclude_from_minor_compaction,
                     s3_endpoint=s3_endpoint, on_task=on_task, merge=merge,
                     limit=max_files_per_region_family)
        schema, exists = load.regions(schema, table,
                                      lambda s: _sampled_regions(df, s, sample_rows))
        parts = df.rdd.getNumPartitions()
        sc.setJobGroup(f"hfkit-{job}",
                       f"hfkit bulk load of {schema.name}: stage 1, {parts} partitions")
        say(f"{schema.name}: stage 1: {parts} partitions")
        t1 = time.monotonic()
        import json
        rows = df.mapInArrow(_stage1_batches(schema, staging, memory, import_time, s3_endpoint,
                                             on_task, merge == "always"),
                             "result string").collect()
        stage1 = [json.loads(r["result"]) for r in rows]
        for r in stage1:
            for f in r["files"]:
                f["first_key"] = bytes.fromhex(f["first_key"])
                f["last_key"] = bytes.fromhex(f["last_key"])
        schema, dirs, summary, exists = load.finish(schema, exists, "", stage1,
                                                    time.monotonic() - t1)
        if table is not None and not exists:
            create_tables(schema, table)
        summary["attached"] = _publish(table, out, dirs, max_files_per_region_family)
        summary["seconds"] = time.monotonic() - started
        return summary
    finally:
        sc.setJobGroup("", "")
        _remove_staging(staging)


def _as_they_are(files, limit):
    """Whether one region's stage-1 files can be published as they are: per family at most
    ``limit`` files, none sharing a cell's coordinates with another or interleaving with it
    (each split's rows of the region in a key range of their own). Then they hold the cells
    one import would write, in several files instead of one."""
    per_family = {}
    for f in files:
        per_family.setdefault(f["family"], []).append((f["first_key"], f["last_key"]))
    return all(len(r) <= limit and keys_disjoint(r) for r in per_family.values())


def _gather(staging, name, found):
    """Moves the stage-1 files published as they are into one bulk-load directory ``name`` of
    the staging (server-side copies on object storage)."""
    to = _join(staging, name)
    for r, f in found:
        rel = f["path"][len(r["dir"].rstrip("/")) + 1:]
        dest = _join(to, rel)
        if _is_remote(to):
            copy_object(f["path"], dest)
        else:
            Path(dest).parent.mkdir(parents=True, exist_ok=True)
            os.replace(f["path"], dest)
    return to


DEFAULT_SPLIT_BYTES = 128 << 20


def _cut(inputs, format, csv, split_bytes, multiline, merge, target):
    """The inputs' splits, of ``split_bytes`` when given. By default, of 128 MiB, or larger so
    that there are at most ``target`` splits when ``merge="auto"``: ``target`` is the larger
    of the files a region may take per family (HBase's bulk-load limit) and the cluster's
    parallelism. Up to the limit, a region whose stage-1 files lie in key ranges of their own
    (row keys growing with the input) is published with no second pass over its cells; past
    it, every region is merged again, which a cluster with more cores than the limit can
    afford and a smaller one cannot (lineitem SF10 in ``local[2]``, 60 splits of 128 MiB: a
    merge of every region, 1.8x the CLI's CPU; 32 splits: none, benches/README.md)."""
    if split_bytes is not None:
        return input_splits(inputs, format=format, csv=csv, split_bytes=split_bytes,
                            multiline=multiline)
    splits = input_splits(inputs, format=format, csv=csv, split_bytes=DEFAULT_SPLIT_BYTES,
                          multiline=multiline)
    if merge != "auto" or len(splits) <= target:
        return splits
    total = sum(s["bytes"] for s in splits)
    return input_splits(inputs, format=format, csv=csv, split_bytes=-(-total // target),
                        multiline=multiline)


def bulk_load_files(spark, inputs, schema, out=None, table=None, format=None, csv=None,
                    split_bytes=None, multiline=False, memory=256 << 20, import_time=None,
                    staging=None, max_files_per_region_family=MAX_FILES_PER_REGION_FAMILY,
                    max_file_size=None, exclude_from_minor_compaction=False,
                    sample_rows=DEFAULT_SAMPLE_ROWS, s3_endpoint=None, on_task=None,
                    progress=True, merge="auto"):
    """Bulk-loads the files ``inputs`` (a path, glob or ``s3://`` URL, or a list of them)
    through ``schema`` (a ``Schema`` or a path to its TOML) into the table directory ``table``
    (created from the schema if absent) or the one bulk-load directory ``out``, with Spark's
    tasks running hfkit's native import (see the module's documentation). A schema file of
    several ``[[table]]`` sections loads each of its tables from the same inputs, as ``hfkit
    import`` does: into ``table/<qualifier>`` or ``out/<qualifier>``, every table's stages
    done before the first is published, so that a failed stage changes no table.

    ``format``: ``csv``, ``tsv`` or ``parquet`` (default: by extension); ``csv``: a dict of
    ``delimiter``, ``quote``, ``escape``, ``comment``, ``has_header``, ``columns`` (as ``hfkit
    import``'s options); ``split_bytes``: the size of a split of a plain CSV file, or of a run
    of Parquet row groups (default: ``_split_bytes``, 128 MiB or larger); ``multiline``: quoted CSV fields may hold line ends (then CSV files
    are read whole, one task each); ``memory``: each stage-1 task's sort budget;
    ``import_time``: epoch ms of cells without a timestamp (default: the driver's clock, one
    value for every task); ``staging``: where tasks write (default: ``out/_hfkit-files-<id>``,
    or ``.hfkit-files-<id>`` beside ``table``); ``max_files_per_region_family``: HBase's
    bulk-load limit, checked before anything is published; ``on_task(stage, key)``: called in
    each task after it wrote (tests inject failures there); ``progress``: a line per stage on
    standard error, and Spark job descriptions naming each stage; ``merge``: ``auto`` publishes
    a region's stage-1 files as they are when they can be (their key ranges apart, at most
    ``max_files_per_region_family`` a family: the same cells in a file per split) and merges
    the others, ``always`` merges every region into a file per family, as one import writes.

    Returns the CLI report's counts: ``rows_read``, ``rows_rejected``, ``cells``, ``files``,
    ``bytes``, ``regions``, ``attached`` ({table: manifest version}), ``splits``,
    ``stage1_tasks``/``stage2_tasks`` (each task's seconds), and ``seconds``; for a schema of
    several tables, the sums, and each table's own counts in ``tables`` ({name: counts}).
    """
    if merge not in ("auto", "always"):
        raise ValueError(f"merge={merge!r}: 'auto' or 'always'")
    started = time.monotonic()
    targets = [schema] if isinstance(schema, Schema) else Schema.load_targets(str(schema))
    out, table, _, import_time = _begin(out, table, targets[0], import_time, s3_endpoint)
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    inputs = [_absolute_input(p) for p in inputs]
    job = uuid.uuid4().hex
    staging = _staging(out, table, staging, job)
    sc = spark.sparkContext

    say = _say(progress)

    several = len(targets) > 1

    def place(root, t):
        return None if root is None else (_join(root, t.qualifier) if several else root)

    try:
        _write_driver_file(staging)
        _open_staging(staging)
        splits = _cut(inputs, format, csv, split_bytes, multiline, merge,
                      max(max_files_per_region_family, sc.defaultParallelism))
        if not splits:
            raise ValueError(f"{inputs}: no input file")
        load = _Load(sc, job, staging, splits, say, format=format, csv=csv, memory=memory,
                     import_time=import_time, max_file_size=max_file_size,
                     exclude=exclude_from_minor_compaction, sample_rows=sample_rows,
                     s3_endpoint=s3_endpoint, on_task=on_task, merge=merge,
                     limit=max_files_per_region_family)
        # Every table's stages first: a failure in any of them changes no table.
        staged = [load.stage(t, place(table, t), tag=f"{i}-" if several else "")
                  for i, t in enumerate(targets)]
        summaries = {}
        for (t, dirs, summary, exists) in staged:
            t_table = place(table, t)
            # A new table is created only now, with its first load: a failed or killed load
            # leaves no table behind.
            if t_table is not None and not exists:
                create_tables(t, t_table)
            summary["attached"] = _publish(t_table, place(out, t), dirs,
                                           max_files_per_region_family)
            summaries[t.name] = summary
        if not several:
            summary = summaries[targets[0].name]
        else:
            summary = {k: sum(s[k] for s in summaries.values())
                       for k in ("rows_read", "rows_rejected", "cells", "files", "bytes",
                                 "regions", "regions_merged", "tasks_cpu_seconds",
                                 "stage1_seconds", "stage2_seconds")}
            summary["splits"] = len(splits)
            summary["stage1_tasks"] = [x for s in summaries.values() for x in s["stage1_tasks"]]
            summary["stage2_tasks"] = [x for s in summaries.values() for x in s["stage2_tasks"]]
            summary["attached"] = {k: v for s in summaries.values()
                                   for k, v in s["attached"].items()}
            summary["tables"] = summaries
        summary["seconds"] = time.monotonic() - started
        say(f"done: {summary['cells']} cells in {summary['files']} files"
            f"{', attached' if table is not None else ''}")
        return summary
    finally:
        sc.setJobGroup("", "")
        _remove_staging(staging)


class _Load:
    """One bulk load's settings, and its two stages for each table of the schema."""

    def __init__(self, sc, job, staging, splits, say, **settings):
        self.sc, self.job, self.staging, self.splits, self.say = sc, job, staging, splits, say
        self.__dict__.update(settings)

    def regions(self, schema, table, sample):
        """``schema`` over the regions the load writes: the existing table's (at ``table``),
        or sampled (``sample(schema)``) for ``[splits] sample = N``, or the schema's own.
        Returns it, and whether the table exists."""
        exists = table is not None and _table_exists(table)
        if exists:
            schema = _regions_of(schema, table)
        elif schema.samples_splits:
            schema = sample(schema)
        return schema, exists

    def stage(self, schema, table, tag):
        """Stages 1 and 2 of the table of ``schema`` (placed at ``table``, or in a bulk-load
        directory): its files written into the staging, nothing published. ``tag`` keeps the
        tasks' directories of the tables of one schema apart. Returns (the schema over the
        regions written, the directories to publish, the counts, whether the table exists)."""
        sc, job, staging, splits, say = self.sc, self.job, self.staging, self.splits, self.say
        schema, exists = self.regions(schema, table, lambda s: s.with_sampled_regions(
            [x["path"] for x in splits], sample_rows=self.sample_rows, format=self.format,
            csv=self.csv))
        # Stage 1.
        sc.setJobGroup(f"hfkit-{job}",
                       f"hfkit bulk load of {schema.name}: stage 1, {len(splits)} splits")
        say(f"{schema.name}: stage 1: {len(splits)} splits of "
            f"{sum(s['bytes'] for s in splits)} bytes")
        t1 = time.monotonic()
        stage1 = (sc.parallelize(list(enumerate(splits)), len(splits))
                  .mapPartitions(_stage1(schema, staging, tag, self.format, self.csv,
                                         self.memory, self.import_time, self.s3_endpoint,
                                         self.on_task, self.merge == "always"))
                  .collect())
        for r in stage1:
            r["bytes"] = splits[r["split"]]["bytes"]
        return self.finish(schema, exists, tag, stage1, time.monotonic() - t1)

    def finish(self, schema, exists, tag, stage1, t1):
        """Stage 2 after ``stage1`` (one result per stage-1 task, ``split`` its position in
        the input's order): the regions to merge merged, the others taken as they are. Returns
        what ``stage`` returns."""
        sc, job, staging, say = self.sc, self.job, self.staging, self.say
        names = [schema.name] + list(schema.index_tables)
        groups = {}
        for r in sorted(stage1, key=lambda r: r["split"]):
            for f in r["files"]:
                groups.setdefault((f["table"], f["region"]), []).append((r, f))
        direct, tasks = [], []
        for key, found in sorted(groups.items()):
            if self.merge == "auto" and _as_they_are([f for _, f in found], self.limit):
                direct.extend(found)
            else:
                tasks.append((key, [(f["path"], f["family"], r["split"]) for r, f in found]))
        # Stage 2.
        sc.setJobGroup(f"hfkit-{job}",
                       f"hfkit bulk load of {schema.name}: stage 2, {len(tasks)} regions")
        say(f"{schema.name}: stage 1 done in {t1:.1f}s: "
            f"{sum(r['rows_read'] for r in stage1)} rows; stage 2: {len(tasks)} regions")
        t2 = time.monotonic()
        stage2 = (sc.parallelize(tasks, max(1, len(tasks)))
                  .mapPartitions(_stage2(schema, staging, tag, self.import_time,
                                         self.max_file_size, self.exclude, self.s3_endpoint,
                                         self.on_task))
                  .collect()) if tasks else []
        t2 = time.monotonic() - t2
        files = [f for r in stage2 for f in r["files"]] + [f for _, f in direct]
        _check_files_per_store(files, self.limit, name=names.__getitem__,
                               hint="Use larger splits, or merge='always'")
        dirs = sorted({r["dir"] for r in stage2 if r["files"]})
        if direct and not tasks:
            # Every region's files as stage 1 wrote them: its directories are published.
            dirs = sorted({r["dir"] for r, _ in direct})
        elif direct:
            dirs.append(_gather(staging, f"{tag}direct", direct))
        say(f"{schema.name}: stage 2 done in {t2:.1f}s: {sum(f['cells'] for f in files)} cells "
            f"in {len(files)} files")
        summary = {
            "rows_read": sum(r["rows_read"] for r in stage1),
            "rows_rejected": sum(r["rows_rejected"] for r in stage1),
            "cells": sum(f["cells"] for f in files),
            "files": len(files),
            "bytes": sum(f["bytes"] for f in files),
            "regions": len(groups),
            "regions_merged": len(tasks),
            "splits": len(stage1),
            "stage1_tasks": [(r["split"], r["bytes"], r["seconds"]) for r in stage1],
            "stage2_tasks": [(r["table"], r["region"], r["runs"], r["seconds"])
                             for r in stage2],
            "tasks_cpu_seconds": sum(r["cpu_seconds"] for r in stage1 + stage2),
            "stage1_seconds": t1,
            "stage2_seconds": t2,
            "attached": {},
        }
        return schema, dirs, summary, exists
