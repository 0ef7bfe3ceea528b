"""An HBase snapshot copied between root directories on Spark (``formats/python.md``
§"Snapshot copy on Spark"): what ``hfkit hbase copy-snapshot`` does (HBase's ExportSnapshot,
whose ``-mappers`` and ``-bandwidth`` are ``parallelism`` and ``bandwidth_mb`` here).

``copy_snapshot(spark, src, dest, snapshot, parallelism=None, bandwidth_mb=None)``:

1. Driver: ``begin_snapshot_copy`` lists the HFiles the snapshot names (through links and
   references) with their archive paths, refuses a name ``dest`` has, rolls back killed copies
   and exports there, and makes the staging directory under
   ``dest/.hbase-snapshot/.tmp/``, locked by the driver while the job runs.
2. ``parallelism`` tasks, the files dealt out largest first to the least loaded: each copies
   its files into the staging directory (written under a temporary name, verified in full,
   renamed), at most ``bandwidth_mb`` MB/s per task. A retried task keeps a sound copy and
   redoes a partial one. Each task copies under a marker of its own (``_task_in``), so
   that the driver removes the staging of a failed job only once no task writes into it.
3. Driver: ``commit`` checks every file is staged, copies the snapshot's directory, moves the
   copies into the archive and renames the staging directory: the snapshot appears last. On
   failure the staging directory is removed; a killed driver's is rolled back by the next copy
   or export into ``dest``.
"""

import json
import os
import shutil
import time

from . import begin_snapshot_copy, begin_snapshot_export, copy_snapshot_files
from .spark import (RUNNING_DIR, _absolute, _is_remote, _open_staging, _quiesce,
                    _remove_staging, _task_in)


def _shares(files, n):
    """``files`` dealt into ``n`` shares: largest first, each to the share with the fewest
    bytes so far."""
    shares = [[] for _ in range(n)]
    loads = [0] * n
    for f in sorted(files, key=lambda f: (-f["size"], f["rel"])):
        i = loads.index(min(loads))
        shares[i].append(f)
        loads[i] += f["size"]
    return shares


def _copy_task(shares, staging, bandwidth_mb, on_task):
    def run(items):
        for i in items:
            started, cpu = time.monotonic(), time.process_time()
            with _task_in(staging):
                copied = copy_snapshot_files(json.dumps(shares[i]), staging,
                                             bandwidth_mb=bandwidth_mb)
                if on_task is not None:
                    on_task(i)
            yield (i, copied, time.monotonic() - started, time.process_time() - cpu)
    return run


def copy_snapshot(spark, src, dest, snapshot, parallelism=None, bandwidth_mb=None,
                  on_task=None, progress=True):
    """Copies snapshot ``snapshot`` of the HBase root ``src`` into the root ``dest`` (created
    when absent) as ``hfkit hbase copy-snapshot`` does, the files copied by ``parallelism``
    Spark tasks (default: Spark's default parallelism, at most one per file), each at most
    ``bandwidth_mb`` MB/s. Returns ``hfkit hbase copy-snapshot --json``'s report
    (``snapshot_dir``, ``files``, ``files_present``, ``bytes``) with ``tasks`` (the tasks run),
    ``tasks_cpu_seconds`` and ``seconds``. ``on_task(share)`` is called in each task after it
    copied (tests inject failures there). Roots on object storage are refused (``hfkit hbase
    copy-snapshot`` copies from one).
    """
    started = time.monotonic()
    src, dest = _local_paths("a snapshot copy", "copy-snapshot", src, dest)
    _check_bandwidth(bandwidth_mb)
    job = begin_snapshot_copy(src, dest, snapshot)
    return _run(spark, job, f"copy-snapshot {snapshot}", parallelism, bandwidth_mb, on_task,
                progress, started)


def export_snapshot(spark, table, root, name, hbase_table=None, snapshot=None,
                    creation_time=None, parallelism=None, bandwidth_mb=None, on_task=None,
                    progress=True):
    """Exports the hfkit table ``table`` (or its ``snapshot``) as HBase snapshot ``name`` (of
    HBase table ``hbase_table``, default the table's) into the HBase root ``root`` as ``hfkit
    hbase export-snapshot`` does, the store files copied by ``parallelism`` Spark tasks at most
    ``bandwidth_mb`` MB/s each; ``creation_time`` (epoch ms, also every region's id) defaults
    to now. The table's writers' lock is held by the driver until the commit. Returns the
    report of ``copy_snapshot``. Tables and roots on object storage are refused (``hfkit hbase
    export-snapshot`` writes into one).
    """
    started = time.monotonic()
    table, root = _local_paths("a snapshot export", "export-snapshot", table, root)
    _check_bandwidth(bandwidth_mb)
    job = begin_snapshot_export(table, root, name, hbase_table=hbase_table, snapshot=snapshot,
                                creation_time=creation_time)
    return _run(spark, job, f"export-snapshot {name}", parallelism, bandwidth_mb, on_task,
                progress, started)


def _local_paths(job, command, *paths):
    """``paths`` made absolute; one on object storage is refused by name (``hfkit hbase
    COMMAND`` does that job)."""
    paths = [_absolute(p) for p in paths]
    for p in paths:
        if _is_remote(p):
            raise ValueError(f"{p}: {job} on Spark takes paths on a local or shared file "
                             f"system, not object storage (use `hfkit hbase {command}`)")
    return paths


def _check_bandwidth(bandwidth_mb):
    if bandwidth_mb is not None and not bandwidth_mb > 0:
        raise ValueError(f"bandwidth_mb: {bandwidth_mb}: not a positive number")


def _run(spark, job, label, parallelism, bandwidth_mb, on_task, progress, started):
    """Copies the files of ``job`` (a ``SnapshotCopy``) by Spark tasks, then commits it; on
    failure the staging goes once no task writes into it and the job is aborted."""
    staging = job.staging()
    sc = spark.sparkContext
    try:
        _open_staging(staging)
        files = json.loads(job.files())
        n = parallelism or sc.defaultParallelism
        n = max(1, min(int(n), len(files)))
        shares = _shares(files, n)
        results = []
        if files:
            sc.setJobGroup(f"hfkit-{label.replace(' ', '-')}",
                           f"hfkit hbase {label}: {len(files)} files")
            if progress:
                import sys
                print(f"hfkit: {label}: copying {len(files)} files in {n} tasks",
                      file=sys.stderr, flush=True)
            results = (sc.parallelize(range(n), n)
                       .mapPartitions(_copy_task(shares, staging, bandwidth_mb, on_task))
                       .collect())
        # Every task has ended (a worker that died: its marker went stale): the markers'
        # directory goes, and the staging directory is the snapshot's to be.
        if not _quiesce(staging):
            raise RuntimeError(f"{staging}: tasks still copy into it")
        shutil.rmtree(os.path.join(staging, RUNNING_DIR))
        report = json.loads(job.commit(sum(r[1] for r in results)))
        report["tasks"] = len(results)
        report["tasks_cpu_seconds"] = sum(r[3] for r in results)
        report["seconds"] = time.monotonic() - started
        return report
    except BaseException:
        # Tasks of a failed job may still copy: the staging goes once none writes into it.
        _remove_staging(staging)
        job.abort()
        raise
    finally:
        sc.setJobGroup("", "")
