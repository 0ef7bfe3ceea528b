"""Compaction of a table on Spark (``formats/python.md`` §"Compaction on Spark"): what
``hfkit compact`` does, with a Spark task per store; and ``compact_hbase(spark, root, table)``,
``hfkit hbase compact`` of an HBase table in place, a task per store
(``formats/python.md`` §"HBase compaction on Spark").

``compact(spark, table, major=..., ...)``:

1. Driver: ``plan_compaction`` chooses the stores and their files as ``hfkit compact`` would
   (HBase's ratio-based minor selection, or every file with ``major``/``all_files``), from one
   manifest version, with one ``now_ms`` for every task.
2. A task per store: ``compact_store`` merges the store's files with HBase's compaction rules
   and writes its one output into ``STAGING/<store>-<partition>-<attempt>/`` (verified,
   fsynced), returning the output's path and report.
3. Driver: ``commit_compaction`` takes the table's lock, checks that the manifest is still
   the planned version and each output is the file its task reported, moves the outputs into
   the table and replaces every input in one manifest commit, then collects garbage, as
   ``hfkit compact``. Only the attempts whose results Spark returned are committed; ``STAGING``
   (``.hfkit-compact-<table>-<id>`` beside the table) is removed at the end, whatever happened.
"""

import json
import time
import uuid

from . import (HBaseCompaction, commit_compaction, compact_hbase_store, compact_store,
               plan_compaction)
from .spark import (_absolute, _is_remote, _join, _open_staging, _remove_staging, _sweep,
                    _task_in, _write_driver_file)

STAGING_PREFIX = "hfkit-compact-"


def _stores(table, plan, staging, on_task):
    def run(items):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        for task in items:
            out = _join(staging, f"{task}-{ctx.partitionId()}-{ctx.taskAttemptId()}")
            started, cpu = time.monotonic(), time.process_time()
            with _task_in(staging):
                output = compact_store(table, plan, task, out)
                if on_task is not None:
                    on_task(task)
            yield (task, output, time.monotonic() - started, time.process_time() - cpu)
    return run


def compact(spark, table, major=False, all_files=False, region=None, family=None, now_ms=None,
            on_task=None, progress=True):
    """Compacts the table directory ``table`` as ``hfkit compact`` does (``major``: every file
    of each store, deleted, expired and excess cells dropped; else HBase's minor selection, or
    every file with ``all_files``; ``region``/``family`` narrow it; ``now_ms``: "now" for TTL,
    default the driver's clock), each store in a Spark task, in one commit.

    Returns ``hfkit compact --json``'s report (``version``: the manifest committed, ``None`` if
    nothing was to compact; ``stores``: per store its inputs, cells in and out, output), with
    ``tasks_cpu_seconds`` and ``seconds``. ``on_task(store)`` is called in each task after it
    wrote (tests inject failures there). A table on object storage is refused (``hfkit
    compact`` compacts it).
    """
    started = time.monotonic()
    table = _absolute(table)
    if _is_remote(table):
        raise ValueError(f"{table}: compaction on Spark takes a table on a local or shared "
                         "file system, not object storage (use `hfkit compact`)")
    plan = plan_compaction(table, major=major, all_files=all_files, region=region,
                           family=family, now_ms=now_ms)
    stores = json.loads(plan)["stores"]
    if not stores:
        report = json.loads(commit_compaction(table, plan, []))
        report.update(tasks_cpu_seconds=0.0, seconds=time.monotonic() - started)
        return report
    parent, name = table.rstrip("/").rsplit("/", 1)
    # A killed driver's staging (its process gone) is removed first.
    _sweep(parent, f".{STAGING_PREFIX}{name}-")
    staging = _join(parent, f".{STAGING_PREFIX}{name}-{uuid.uuid4().hex}")
    sc = spark.sparkContext
    try:
        _write_driver_file(staging)
        _open_staging(staging)
        sc.setJobGroup(f"hfkit-compact-{name}",
                       f"hfkit compact: {len(stores)} stores of {name}")
        if progress:
            import sys
            print(f"hfkit: compacting {len(stores)} stores of {table}", file=sys.stderr,
                  flush=True)
        results = (sc.parallelize(range(len(stores)), len(stores))
                   .mapPartitions(_stores(table, plan, staging, on_task))
                   .collect())
        report = json.loads(commit_compaction(table, plan, [o for _, o, _, _ in results]))
        report["tasks_cpu_seconds"] = sum(r[3] for r in results)
        report["seconds"] = time.monotonic() - started
        return report
    finally:
        sc.setJobGroup("", "")
        _remove_staging(staging)


def _hbase_stores(root, table, now_ms, on_task):
    def run(items):
        for i, store in items:
            started, cpu = time.monotonic(), time.process_time()
            staged = compact_hbase_store(root, table, store, now_ms)
            if on_task is not None:
                on_task(i)
            yield (i, staged, time.monotonic() - started, time.process_time() - cpu)
    return run


def compact_hbase(spark, root, table, region=None, family=None, now_ms=None, on_task=None,
                  progress=True):
    """Major-compacts ``table`` (``name`` or ``namespace:name``) of the HBase root ``root`` in
    place, offline, as ``hfkit hbase compact`` does (HBase's CompactionTool), each store in a
    Spark task: the driver takes the table (refused while HBase may be using it), cleans up
    what a killed run left and plans the stores; each task writes its store's output under
    the region's ``.tmp/`` (verified); the driver then moves the outputs in and archives the
    inputs store after store, and removes the outputs of failed or duplicate task attempts.
    ``region``/``family`` narrow it; ``now_ms``: "now" for TTL, default the driver's clock.

    Returns ``hfkit hbase compact --json``'s report (``stores``: per store its region,
    family, inputs, output, cells and delete markers), with ``tasks_cpu_seconds`` and
    ``seconds``. ``on_task(i)`` is called in each task after it wrote store ``i`` (tests
    inject failures there). A root on object storage is refused (``hfkit hbase compact``
    compacts it).
    """
    started = time.monotonic()
    root = _absolute(root)
    if _is_remote(root):
        raise ValueError(f"{root}: an HBase compaction on Spark takes a root on a local or "
                         "shared file system, not object storage (use `hfkit hbase compact`)")
    job = HBaseCompaction(root, table, region=region, family=family, now_ms=now_ms)
    sc = spark.sparkContext
    try:
        stores = job.stores()
        results = []
        if stores:
            sc.setJobGroup(f"hfkit-hbase-compact-{table}",
                           f"hfkit hbase compact: {len(stores)} stores of {table}")
            if progress:
                import sys
                print(f"hfkit: compacting {len(stores)} stores of {table} in {root}",
                      file=sys.stderr, flush=True)
            results = sorted(sc.parallelize(list(enumerate(stores)), len(stores))
                             .mapPartitions(_hbase_stores(root, table, job.now_ms, on_task))
                             .collect())
        report = json.loads(job.commit([staged for _, staged, _, _ in results]))
    except BaseException:
        job.abort()
        raise
    finally:
        sc.setJobGroup("", "")
    report["tasks_cpu_seconds"] = sum(r[3] for r in results)
    report["seconds"] = time.monotonic() - started
    return report
