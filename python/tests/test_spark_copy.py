"""hfkit.spark.copy_snapshot: `hfkit hbase copy-snapshot` (HBase's ExportSnapshot) with the
files copied by Spark tasks, against the CLI's copy of the same snapshot: the same files, byte
for byte, for HBase's own snapshots (root1: links into the archive, split references) and a
table exported as a snapshot; a task failing once after copying changes nothing; a failed
copy leaves no snapshot and nothing staged; a name the target has is refused."""

import subprocess
from pathlib import Path

import pytest

from conftest import cli_import, first_time, hbase_layout, hfkit_bin, local_spark

pyspark = pytest.importorskip("pyspark")
from hfkit.spark import copy_snapshot, export_snapshot  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    yield from local_spark("hfkit-copy-tests")


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    """HBase's root1, and a root holding the users seed (10 regions) exported as snapshot
    `users`."""
    root1 = hbase_layout("test_spark_copy") / "root1"
    d = tmp_path_factory.mktemp("roots")
    t = d / "t"
    assert cli_import("users", "--table", str(t)).returncode == 0
    users_root = d / "hbase"
    r = subprocess.run([hfkit_bin(), "hbase", "export-snapshot", str(t), str(users_root),
                        "--name", "users"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return {"snap_t1": root1, "snap_t2": root1, "users": users_root, "table": t}


def tree(root):
    """Every file under `root` as (relative path, bytes), sorted."""
    root = Path(root)
    return sorted((str(f.relative_to(root)), f.read_bytes())
                  for f in root.rglob("*") if f.is_file())


def cli_copy(src, dest, snapshot):
    r = subprocess.run([hfkit_bin(), "hbase", "copy-snapshot", str(src), str(dest),
                        "--snapshot", snapshot], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("snapshot", ["snap_t1", "snap_t2", "users"])
def test_the_same_files_as_the_cli(spark, roots, tmp_path, snapshot):
    src = roots[snapshot]
    cli_copy(src, tmp_path / "cli", snapshot)
    got = copy_snapshot(spark, str(src), str(tmp_path / "ours"), snapshot, parallelism=3,
                        progress=False)
    assert got["files"] > 0 and got["files_present"] == 0
    assert got["tasks"] == min(3, got["files"])
    assert tree(tmp_path / "ours") == tree(tmp_path / "cli")
    r = subprocess.run([hfkit_bin(), "hbase", "verify", str(tmp_path / "ours"), "--snapshot",
                        snapshot], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_task_failing_once_after_copying_changes_nothing(spark, roots, tmp_path):
    src = roots["snap_t1"]
    cli_copy(src, tmp_path / "cli", "snap_t1")
    flag = tmp_path / "failed-once"

    def fail_once(share):
        if share == 1 and first_time(flag):
            raise RuntimeError("injected failure after copying")

    copy_snapshot(spark, str(src), str(tmp_path / "ours"), "snap_t1", parallelism=2,
                  bandwidth_mb=100, on_task=fail_once, progress=False)
    assert flag.exists()
    assert tree(tmp_path / "ours") == tree(tmp_path / "cli")


def test_a_failed_copy_leaves_no_snapshot_and_nothing_staged(spark, roots, tmp_path):
    def fail(share):
        raise RuntimeError("injected failure")

    dest = tmp_path / "ours"
    with pytest.raises(Exception, match="injected failure"):
        copy_snapshot(spark, str(roots["users"]), str(dest), "users", parallelism=2,
                      on_task=fail, progress=False)
    assert [p for p, _ in tree(dest)] == []
    # A copy afterwards works, and is the CLI's.
    copy_snapshot(spark, str(roots["users"]), str(dest), "users", progress=False)
    cli_copy(roots["users"], tmp_path / "cli", "users")
    assert tree(dest) == tree(tmp_path / "cli")


def test_a_name_the_target_has_and_object_storage_are_refused(spark, roots, tmp_path):
    dest = tmp_path / "dest"
    cli_copy(roots["snap_t2"], dest, "snap_t2")
    with pytest.raises(Exception, match="already exists"):
        copy_snapshot(spark, str(roots["snap_t2"]), str(dest), "snap_t2", progress=False)
    with pytest.raises(ValueError, match="not object storage"):
        copy_snapshot(spark, "s3://bucket/hbase", str(dest), "snap_t2", progress=False)


def archived(root):
    """The archive's files of `root` by name, with their bytes (region directories left out:
    their names hash the snapshot's creation time)."""
    return sorted((f.name, f.read_bytes()) for f in (Path(root) / "archive").rglob("*")
                  if f.is_file())


def verified_stores(root, snapshot):
    r = subprocess.run([hfkit_bin(), "hbase", "verify", str(root), "--snapshot", snapshot],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    # Each store by family and digest, in region order; the total.
    return [line.split("/", 1)[1] if line.startswith("store ") else line
            for line in r.stdout.splitlines() if not line.startswith("snapshot:")]


def test_export_snapshot_gives_the_clis_files_and_cells(spark, roots, tmp_path):
    """hfkit.spark.export_snapshot of the users table: the store files the CLI's export put in
    the archive (by name and bytes), and a snapshot that verifies to the CLI's digests; a task
    failing once changes nothing; a name taken is refused."""
    flag = tmp_path / "failed-once"

    def fail_once(share):
        if share == 0 and first_time(flag):
            raise RuntimeError("injected failure after copying")

    dest = tmp_path / "hbase"
    got = export_snapshot(spark, str(roots["table"]), str(dest), "users", parallelism=3,
                          creation_time=1_800_000_000_000, on_task=fail_once, progress=False)
    assert flag.exists()
    assert got["files"] == 30 and got["tasks"] == 3
    assert archived(dest) == archived(roots["users"])
    assert verified_stores(dest, "users") == verified_stores(roots["users"], "users")
    with pytest.raises(Exception, match="already exists"):
        export_snapshot(spark, str(roots["table"]), str(dest), "users", progress=False)
