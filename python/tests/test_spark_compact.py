"""hfkit.spark.compact: `hfkit compact` with a Spark task per store, against the CLI on a copy
of the same table: the same cells and the same output bytes, in one commit, for major and minor
compactions; a task that fails once after writing leaves no file behind; a table changed while
the tasks run is not committed to; a table on object storage is refused. hfkit.spark.compact_hbase:
`hfkit hbase compact` of HBase's own tables (root1) with a task per store, the CLI's result."""

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import (cli_import, first_time, hbase_layout, hfkit_bin, local_spark,
                      table_cells)

pyspark = pytest.importorskip("pyspark")
from hfkit.spark import compact, compact_hbase  # noqa: E402

NOW = 1_800_000_000_000


@pytest.fixture(scope="module")
def spark():
    yield from local_spark("hfkit-compact-tests")


@pytest.fixture(scope="module")
def three_loads(tmp_path_factory):
    """The users seed imported three times into one table: three files per store."""
    t = tmp_path_factory.mktemp("src") / "t"
    for _ in range(3):
        r = cli_import("users", "--table", str(t), "--force")
        assert r.returncode == 0, r.stderr
    return t


def copy(src, to):
    shutil.copytree(src, to, symlinks=True)
    return to


def cli_compact(table, *args):
    r = subprocess.run([hfkit_bin(), "compact", str(table), "--now-ms", str(NOW), "--json",
                        *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def data_files(table):
    """The table's store files as (region, family, sha256 of the bytes), sorted: the names are
    random, the bytes are not."""
    out = []
    for f in (Path(table) / "data").rglob("*"):
        if f.is_file():
            rel = f.relative_to(Path(table) / "data").parts
            out.append((rel[0], rel[1], hashlib.sha256(f.read_bytes()).hexdigest()))
    return sorted(out)


def strays(d):
    return sorted(p.name for p in Path(d).iterdir() if "hfkit-compact-" in p.name)


@pytest.mark.parametrize("args", [["--major"], [], ["--all", "--family", "s"]])
def test_the_same_cells_and_bytes_as_the_cli(spark, three_loads, tmp_path, args):
    cli, ours = copy(three_loads, tmp_path / "cli"), copy(three_loads, tmp_path / "ours")
    want = cli_compact(cli, *args)
    kwargs = {"major": "--major" in args, "all_files": "--all" in args,
              "family": "s" if "--family" in args else None}
    got = compact(spark, str(ours), now_ms=NOW, progress=False, **kwargs)
    assert got["version"] == want["version"] is not None
    assert len(got["stores"]) == len(want["stores"]) > 0
    key = lambda s: (s["region"], s["family"])  # noqa: E731
    for a, b in zip(sorted(got["stores"], key=key), sorted(want["stores"], key=key)):
        for k in ("region", "family", "inputs", "input_cells", "output_cells",
                  "output_markers", "all_files"):
            assert a[k] == b[k], k
    assert table_cells(ours) == table_cells(cli)
    assert data_files(ours) == data_files(cli)
    assert strays(tmp_path) == []


def test_nothing_to_compact_commits_nothing(spark, tmp_path):
    t = tmp_path / "t"
    assert cli_import("users", "--table", str(t)).returncode == 0
    got = compact(spark, str(t), now_ms=NOW, progress=False)  # one file a store: no minor
    assert got["version"] is None and got["stores"] == []


def test_a_task_failing_once_after_writing_leaves_no_file(spark, three_loads, tmp_path):
    cli, ours = copy(three_loads, tmp_path / "cli"), copy(three_loads, tmp_path / "ours")
    cli_compact(cli, "--major")
    flag = tmp_path / "failed-once"

    def fail_once(task):
        if task == 1 and first_time(flag):
            raise RuntimeError("injected failure after writing")

    compact(spark, str(ours), major=True, now_ms=NOW, on_task=fail_once, progress=False)
    assert flag.exists()
    assert data_files(ours) == data_files(cli)
    assert strays(tmp_path) == []


def test_a_table_changed_meanwhile_is_not_committed_to(spark, three_loads, tmp_path):
    t = copy(three_loads, tmp_path / "t")
    flag = tmp_path / "imported"

    def import_meanwhile(task):
        if first_time(flag):
            r = cli_import("users", "--table", str(t), "--force")
            assert r.returncode == 0, r.stderr

    with pytest.raises(Exception, match="changed since the compaction was planned"):
        compact(spark, str(t), major=True, now_ms=NOW, on_task=import_meanwhile,
                progress=False)
    # The four loads' files, nothing compacted, nothing staged left.
    four = copy(three_loads, tmp_path / "four")
    assert cli_import("users", "--table", str(four), "--force").returncode == 0
    assert table_cells(t) == table_cells(four)
    assert len(data_files(t)) == len(data_files(four))
    assert strays(tmp_path) == []


def test_a_table_on_object_storage_is_refused(spark):
    with pytest.raises(ValueError, match="not object storage"):
        compact(spark, "s3://bucket/t", progress=False)


def dead_drivers_staging(parent, name):
    """A staging directory a killed driver left: its `_driver.json` names this host and a
    process that has ended."""
    import socket
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    d = Path(parent) / name
    (d / "s").mkdir(parents=True)
    (d / "s" / "half-written").write_bytes(b"x")
    (d / "_driver.json").write_text(json.dumps(
        {"host": socket.gethostname(), "pid": p.pid, "started": 0}))
    return d


def test_a_killed_drivers_staging_is_removed_by_the_next_compaction(spark, three_loads,
                                                                     tmp_path):
    t = copy(three_loads, tmp_path / "t")
    dead = dead_drivers_staging(tmp_path, ".hfkit-compact-t-0123")
    compact(spark, str(t), major=True, now_ms=NOW, progress=False)
    assert not dead.exists()
    assert strays(tmp_path) == []


def hbase_cli_compact(root, table):
    r = subprocess.run([hfkit_bin(), "hbase", "compact", str(root), table, "--now", str(NOW),
                        "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def hbase_state(root, table):
    """What a compaction of `table` leaves: its raw cells with sequence ids (`hbase scan
    --raw`), its verify digests, and every file of the root by path and bytes except the
    outputs (whose names are random): the archive, the lists, the layout."""
    def run(*args):
        r = subprocess.run([hfkit_bin(), "hbase", *args], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r.stdout
    cells = run("scan", str(root), table, "--raw", "--versions", "100", "--format", "cells")
    digests = run("verify", str(root), table)
    files = sorted(str(f.relative_to(root)) for f in Path(root).rglob("*")
                   if f.is_file() and Path(root, "data") not in f.parents)
    archived = sorted((str(f.relative_to(root)), f.read_bytes())
                      for f in (Path(root) / "archive").rglob("*") if f.is_file())
    stores = sorted(str(f.parent.relative_to(root)) for f in (Path(root) / "data").rglob("*")
                    if f.is_file() and not f.name.startswith("."))
    return cells, digests, files, archived, stores


def without_names(report):
    return [{k: v for k, v in s.items() if k != "output"} for s in report["stores"]]


@pytest.mark.parametrize("table", ["t1", "ns1:t2"])
def test_hbase_compact_gives_the_clis_result(spark, tmp_path, table):
    # HBase's root1: t1 (six stores), ns1:t2 (split daughters, their references compacted
    # away). A task fails once after writing: its output is not committed, nor left behind.
    root1 = hbase_layout("test_spark_compact") / "root1"
    cli, ours = copy(root1, tmp_path / "cli"), copy(root1, tmp_path / "ours")
    want = hbase_cli_compact(cli, table)
    flag = tmp_path / "failed-once"

    def fail_once(i):
        if i == 0 and first_time(flag):
            raise RuntimeError("injected failure after writing")

    got = compact_hbase(spark, str(ours), table, now_ms=NOW, on_task=fail_once,
                        progress=False)
    assert flag.exists()
    assert without_names(got) == without_names(want) and len(want["stores"]) > 1
    assert hbase_state(ours, table) == hbase_state(cli, table)
    assert not list(Path(ours).rglob(".tmp"))
    # Nothing left to compact.
    again = compact_hbase(spark, str(ours), table, now_ms=NOW, progress=False)
    assert again["stores"] == []


def test_a_failed_hbase_compaction_changes_nothing(spark, tmp_path):
    root1 = hbase_layout("test_spark_compact") / "root1"
    ours = copy(root1, tmp_path / "ours")
    before = sorted((str(f.relative_to(ours)), f.read_bytes())
                    for f in Path(ours).rglob("*") if f.is_file())

    def fail(i):
        raise RuntimeError("injected failure")

    with pytest.raises(Exception):
        compact_hbase(spark, str(ours), "t1", now_ms=NOW, on_task=fail, progress=False)
    after = sorted((str(f.relative_to(ours)), f.read_bytes())
                   for f in Path(ours).rglob("*") if f.is_file())
    assert after == before
    with pytest.raises(ValueError, match="not object storage"):
        compact_hbase(spark, "s3://bucket/root", "t1", progress=False)
