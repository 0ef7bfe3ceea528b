"""Export of a table on Spark (``formats/python.md`` §"Export on Spark"): what ``hfkit export
--format csv|parquet`` writes, as a part per region, each written by a Spark task.

``export(spark, table, to, format="csv", rows_schema=None, snapshot=None)``:

1. Driver: takes the table's writers' lock for the whole job (no compaction, restore or
   garbage collection removes a file the tasks read) and reads the manifest version and the
   regions to export (``export_outline``), or a snapshot's.
2. A task per region: ``export_part`` writes the region's cells (or, with ``rows_schema``,
   one record per row through that schema's import mapping) as ``hfkit export`` writes them,
   read at the driver's manifest version, into ``STAGING/parts/<region>-<partition>-<attempt>``.
3. Driver: the attempts whose results Spark returned, one per region, are renamed to
   ``part-<region, 5 digits>.csv|parquet`` in ``STAGING/out``, which is renamed to ``to``: the
   directory appears whole or not at all. Each part is a whole file (a CSV part starts with
   the header), so the parts in order hold exactly the records of ``hfkit export``'s one file.
"""

import os
import time
import uuid
from pathlib import Path

from . import Schema, export_outline, export_part, lock_table
from .spark import (_absolute, _is_remote, _join, _open_staging, _remove_staging, _sweep,
                    _task_in, _write_driver_file)

STAGING_PREFIX = "hfkit-export-"


def _parts(table, staging, fmt, version, now_ms, snapshot, schema, on_task):
    def run(items):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        for region in items:
            dest = _join(staging, "parts",
                         f"{region}-{ctx.partitionId()}-{ctx.taskAttemptId()}.{fmt}")
            started, cpu = time.monotonic(), time.process_time()
            with _task_in(staging):
                counts = export_part(table, dest, fmt, region, version, now_ms,
                                     snapshot=snapshot, rows_schema=schema)
                if on_task is not None:
                    on_task(region)
            counts.update(region=region, path=dest, seconds=time.monotonic() - started,
                          cpu_seconds=time.process_time() - cpu)
            yield counts
    return run


def export(spark, table, to, format="csv", rows_schema=None, snapshot=None, now_ms=None,
           on_task=None, progress=True):
    """Exports the table directory ``table`` (or its ``snapshot``) as ``format`` (``csv``,
    ``parquet``) into the new directory ``to``, a part per region in region order: every
    cell a read returns (all versions the families keep, TTL at ``now_ms``, default the
    driver's clock), or with ``rows_schema`` (a ``Schema`` or a path to its TOML) one record
    per row through its import mapping, as ``hfkit export --format ... [--rows --schema]``.

    Returns the counts (``cells``, ``bytes``, with rows ``rows``, ``rows_skipped``,
    ``unmapped_cells``, ``untimed_cells``), ``version`` (the manifest exported), ``parts``,
    ``tasks`` (region, seconds) and ``seconds``. ``on_task(region)`` is called in each task
    after it wrote (tests inject failures there). Local or shared paths; ``s3://`` is refused.
    """
    started = time.monotonic()
    if format not in ("csv", "parquet"):
        raise ValueError(f"format={format!r}: 'csv' or 'parquet'")
    table, to = _absolute(table), _absolute(to)
    for p, what in ((table, "table"), (to, "to")):
        if _is_remote(p):
            raise ValueError(f"{p}: export on Spark takes a {what} on a local or shared file "
                             "system, not object storage (use `hfkit export`)")
    if os.path.exists(to) and (not os.path.isdir(to) or os.listdir(to)):
        raise ValueError(f"{to}: exists and is not an empty directory")
    if rows_schema is not None and not isinstance(rows_schema, Schema):
        rows_schema = Schema.load(str(rows_schema))
    if now_ms is None:
        now_ms = int(time.time() * 1000)
    parent, name = to.rstrip("/").rsplit("/", 1)
    # A killed driver's staging (its process gone) is removed first.
    _sweep(parent, f".{STAGING_PREFIX}{name}-")
    staging = _join(parent, f".{STAGING_PREFIX}{name}-{uuid.uuid4().hex}")
    sc = spark.sparkContext
    with lock_table(table):
        try:
            _write_driver_file(staging)
            _open_staging(staging)
            version, regions = export_outline(table, snapshot)
            sc.setJobGroup(f"hfkit-export-{name}",
                           f"hfkit export: {regions} regions of {table} as {format}")
            if progress:
                import sys
                print(f"hfkit: exporting {regions} regions of {table} to {to}",
                      file=sys.stderr, flush=True)
            results = (sc.parallelize(range(regions), max(1, regions))
                       .mapPartitions(_parts(table, staging, format, version, now_ms, snapshot,
                                             rows_schema, on_task))
                       .collect())
            by_region = {r["region"]: r for r in results}
            if sorted(by_region) != list(range(regions)) or len(results) != regions:
                raise RuntimeError(f"{table}: export: {len(results)} parts for {regions} "
                                   "regions")
            out = Path(staging) / "out"
            out.mkdir()
            for i in range(regions):
                os.replace(by_region[i]["path"], out / f"part-{i:05d}.{format}")
            if os.path.isdir(to):
                os.rmdir(to)  # empty, checked above
            os.rename(out, to)
        finally:
            sc.setJobGroup("", "")
            _remove_staging(staging)
    summary = {k: sum(r.get(k, 0) for r in results)
               for k in ("cells", "bytes", "rows", "rows_skipped", "unmapped_cells",
                         "untimed_cells")}
    if rows_schema is None:
        for k in ("rows", "rows_skipped", "unmapped_cells", "untimed_cells"):
            del summary[k]
    summary.update(version=version, parts=regions,
                   tasks=[(r["region"], r["seconds"]) for r in results],
                   tasks_cpu_seconds=sum(r["cpu_seconds"] for r in results),
                   seconds=time.monotonic() - started)
    return summary
