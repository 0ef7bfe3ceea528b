"""hfkit.spark.export: `hfkit export --format` as a part per region written by Spark tasks,
against the CLI's one file of the same table: the parts in order hold exactly its records
(cells or rows, CSV or Parquet, live or a snapshot); a task failing once after writing leaves
no extra part; nothing is left beside the output."""

import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import SEEDS, cli_import, first_time, hfkit_bin, local_spark

pyspark = pytest.importorskip("pyspark")
from hfkit.spark import export  # noqa: E402

NOW = 1_800_000_000_000


@pytest.fixture(scope="module")
def spark():
    yield from local_spark("hfkit-export-tests")


@pytest.fixture(scope="module")
def users(tmp_path_factory):
    """The users seed (10 regions) in a table, with a snapshot, then imported again."""
    t = tmp_path_factory.mktemp("src") / "t"
    assert cli_import("users", "--table", str(t)).returncode == 0
    r = subprocess.run([hfkit_bin(), "snapshot", "create", str(t), "s"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert cli_import("users", "--table", str(t), "--force").returncode == 0
    return t


def cli_export(table, to, fmt, *args):
    r = subprocess.run([hfkit_bin(), "export", str(table), "--format", fmt, "--to", str(to),
                        "--now-ms", str(NOW), "--json", *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def parts(d, fmt):
    names = sorted(os.listdir(d))
    assert names == [f"part-{i:05d}.{fmt}" for i in range(len(names))], names
    return [Path(d) / n for n in names]


def assert_same_records(cli_file, out_dir, fmt, parts_expected=10):
    ps = parts(out_dir, fmt)
    assert len(ps) == parts_expected  # a part per region
    if fmt == "csv":
        want = Path(cli_file).read_text().splitlines(keepends=True)
        texts = [p.read_text().splitlines(keepends=True) for p in ps]
        assert all(t[0] == want[0] for t in texts)  # each part starts with the header
        assert [line for t in texts for line in t[1:]] == want[1:]
    else:
        got = pa.concat_tables([pq.read_table(p) for p in ps])
        assert got.equals(pq.read_table(cli_file))


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("how", ["cells", "rows", "snapshot"])
def test_the_parts_hold_the_records_of_the_cli_export(spark, users, tmp_path, fmt, how):
    args, kwargs = [], {}
    if how == "rows":
        args = ["--rows", "--schema", str(SEEDS / "users.toml")]
        kwargs["rows_schema"] = SEEDS / "users.toml"
    if how == "snapshot":
        args, kwargs["snapshot"] = ["--snapshot", "s"], "s"
    want = cli_export(users, tmp_path / f"cli.{fmt}", fmt, *args)
    got = export(spark, str(users), str(tmp_path / "out"), format=fmt, now_ms=NOW,
                 progress=False, **kwargs)
    assert_same_records(tmp_path / f"cli.{fmt}", tmp_path / "out", fmt)
    assert got["parts"] == 10 and got["version"] == want["version"]
    for k in ("cells", "rows", "rows_skipped", "unmapped_cells", "untimed_cells"):
        if k in want:
            assert got[k] == want[k], k
    assert sorted(os.listdir(tmp_path)) == ["cli." + fmt, "out"]


def test_a_task_failing_once_after_writing_leaves_one_part_per_region(spark, users, tmp_path):
    cli_export(users, tmp_path / "cli.csv", "csv")
    flag = tmp_path / "failed-once"

    def fail_once(region):
        if region == 3 and first_time(flag):
            raise RuntimeError("injected failure after writing")

    export(spark, str(users), str(tmp_path / "out"), now_ms=NOW, on_task=fail_once,
           progress=False)
    assert flag.exists()
    assert_same_records(tmp_path / "cli.csv", tmp_path / "out", "csv")
    assert sorted(os.listdir(tmp_path)) == ["cli.csv", "failed-once", "out"]


def test_a_failed_export_leaves_nothing(spark, users, tmp_path):
    def always(region):
        if region == 5:
            raise RuntimeError("injected failure")

    with pytest.raises(Exception, match="injected failure"):
        export(spark, str(users), str(tmp_path / "out"), now_ms=NOW, on_task=always,
               progress=False)
    assert os.listdir(tmp_path) == []


def test_refusals(spark, users, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(ValueError, match="not an empty directory"):
        export(spark, str(users), str(tmp_path / "full"), progress=False)
    with pytest.raises(ValueError, match="not object storage"):
        export(spark, str(users), "s3://bucket/out", progress=False)
    with pytest.raises(ValueError, match="'csv' or 'parquet'"):
        export(spark, str(users), str(tmp_path / "o"), format="json", progress=False)


def test_a_killed_drivers_staging_is_removed_by_the_next_export(spark, users, tmp_path):
    from test_spark_compact import dead_drivers_staging
    dead = dead_drivers_staging(tmp_path, ".hfkit-export-out-0123")
    export(spark, str(users), str(tmp_path / "out"), now_ms=NOW, progress=False)
    assert not dead.exists()
    assert sorted(os.listdir(tmp_path)) == ["out"]
