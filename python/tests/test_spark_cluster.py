"""hfkit.spark.bulk_load_files with separate executor processes (Spark's
``local-cluster[2,1,1024]``: a master, two workers and their executor JVMs, each with its own
Python workers, as on a cluster), against one `hfkit import` of the same input: every seed
design and a lineitem sample, to out= and table=, local and s3://; and cells with the same
coordinates in several splits keep the last one, as the CLI keeps the last record read."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import hfkit
from conftest import (DESIGNS, IMPORT_TIME, ROOT, SEEDS, bulk_cells, cli_import, hfkit_bin,
                      seed_input, table_cells)

pyspark = pytest.importorskip("pyspark")
from hfkit.spark import bulk_load_files  # noqa: E402
from test_spark import DUPLICATES_SCHEMA, duplicates_input, lineitem_sample  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    from pyspark.sql import SparkSession
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # local-cluster launches its executors with SPARK_HOME's scripts: pip's pyspark has them.
    os.environ.setdefault("SPARK_HOME", os.path.dirname(pyspark.__file__))
    s = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("hfkit-cluster-tests")
         .config("spark.ui.enabled", "false")
         .config("spark.task.maxFailures", "2")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def test_executors_are_processes_of_their_own(cluster):
    pids = cluster.sparkContext.parallelize(range(8), 8).map(lambda _: os.getppid()).collect()
    # Each executor JVM forks its Python workers: two JVMs, neither the driver's.
    assert len(set(pids)) == 2, pids
    assert os.getpid() not in pids


def load(spark, schema, inputs, **kwargs):
    kwargs.setdefault("import_time", IMPORT_TIME)
    kwargs.setdefault("progress", False)
    kwargs.setdefault("split_bytes", 8 << 10)
    return bulk_load_files(spark, str(inputs), str(schema), **kwargs)


@pytest.mark.parametrize("where", ["local", "s3"])
@pytest.mark.parametrize("design", DESIGNS + ["accounts", "enrollments", "sale_lines", "lineitem"])
def test_every_design_gives_the_cells_of_one_import(cluster, request, design, where, tmp_path):
    if design == "accounts":
        # The change feed's first day (the test of bulk_load_files loads both days).
        inputs, schema, csv = SEEDS / "accounts-day1.csv", SEEDS / "accounts.toml", {}
        cli = [hfkit_bin(), "import", "--schema", str(schema), str(inputs), "--timestamp",
               str(IMPORT_TIME), "--quiet"]
        run = lambda *a: subprocess.run(cli + list(a), capture_output=True, text=True)  # noqa
    elif design == "lineitem":
        inputs, schema = tmp_path / "lineitem.csv", ROOT / "benches" / "lineitem.toml"
        lineitem_sample(inputs)
        csv = None
        cli = [hfkit_bin(), "import", "--schema", str(schema), str(inputs), "--timestamp",
               str(IMPORT_TIME), "--quiet"]
        run = lambda *a: subprocess.run(cli + list(a), capture_output=True, text=True)  # noqa
    else:
        inputs, delimiter = seed_input(design)
        schema, csv = SEEDS / f"{design}.toml", {"delimiter": delimiter}
        run = lambda *a: cli_import(design, *a)  # noqa: E731
    for mode in ("--out", "--table"):
        r = run(mode, str(tmp_path / f"cli{mode}"))
        assert r.returncode == 0, r.stderr
    out, table, extra = str(tmp_path / "out"), str(tmp_path / "t"), {}
    if where == "s3":
        # The input, the bulk-load directory, the table and the staging on object storage.
        from test_spark_files import hfkit_put
        s3 = request.getfixturevalue("s3")
        src = s3.url(f"every/{design}/in/{inputs.name}")
        hfkit_put(s3, src, inputs.read_bytes(), tmp_path)
        inputs, out, table = src, s3.url(f"every/{design}/out"), s3.url(f"every/{design}/t")
        extra = {"s3_endpoint": s3.endpoint, "staging": s3.url(f"every/{design}/staging")}
    load(cluster, schema, inputs, csv=csv, out=out, **extra)
    load(cluster, schema, inputs, csv=csv, table=table, merge="always", **extra)
    if where == "s3":
        assert hfkit.list_objects(extra["staging"]) == []
        out = s3.download(out, tmp_path / "out-downloaded")
    # A schema of several [[table]] sections: each table under its qualifier, as the CLI's.
    targets = hfkit.Schema.load_targets(str(schema))
    for q in [t.qualifier for t in targets] if len(targets) > 1 else [""]:
        assert bulk_cells([Path(out) / q]) == bulk_cells([tmp_path / "cli--out" / q])
        cli_table = tmp_path / "cli--table" / q
        ix = cli_table / "indexes"
        names = sorted(p.name for p in ix.iterdir()) if ix.is_dir() else []
        t = f"{table}/{q}".rstrip("/")
        assert table_cells(t, indexes=names) == table_cells(cli_table)


def test_object_storage_out_and_table(cluster, s3, tmp_path):
    from test_spark_files import hfkit_put
    r = cli_import("users", "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    r = cli_import("users", "--table", str(tmp_path / "cli-t"))
    assert r.returncode == 0, r.stderr
    src = s3.url("cluster/in/users.csv")
    hfkit_put(s3, src, (SEEDS / "users.csv").read_bytes(), tmp_path)
    out = s3.url("cluster/out")
    load(cluster, SEEDS / "users.toml", src, out=out, s3_endpoint=s3.endpoint)
    assert bulk_cells([s3.download(out, tmp_path / "dl")]) == bulk_cells([tmp_path / "cli"])
    table = s3.url("cluster/users")
    load(cluster, SEEDS / "users.toml", src, table=table, s3_endpoint=s3.endpoint,
         staging=s3.url("cluster/staging"))
    assert table_cells(table, indexes=["users_by_email"]) == table_cells(tmp_path / "cli-t")
    assert hfkit.list_objects(s3.url("cluster/staging")) == []


def test_duplicates_across_splits_keep_the_last_as_the_cli(cluster, tmp_path):
    schema = tmp_path / "dups.toml"
    schema.write_text(DUPLICATES_SCHEMA)
    data = tmp_path / "dups.csv"
    duplicates_input(data)
    r = subprocess.run([hfkit_bin(), "import", "--schema", str(schema), str(data), "--out",
                        str(tmp_path / "cli"), "--timestamp", str(IMPORT_TIME), "--quiet"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for merge in ("auto", "always"):
        s = load(cluster, schema, data, out=str(tmp_path / merge), split_bytes=512,
                 merge=merge)
        assert s["splits"] > 10
        assert bulk_cells([tmp_path / merge]) == bulk_cells([tmp_path / "cli"]), merge


def test_compact_and_export_of_a_lineitem_table_equal_the_cli(cluster, tmp_path):
    """A 16-region lineitem table loaded twice: ``hfkit.spark.compact`` (a task per store, on
    executors of their own) gives the bytes ``hfkit compact`` gives on a copy,
    ``hfkit.spark.export`` the records of ``hfkit export``, and ``hfkit.spark.copy_snapshot``
    of the table exported as an HBase snapshot the files of ``hfkit hbase copy-snapshot``."""
    import shutil
    from test_spark_compact import NOW, cli_compact, data_files
    from test_spark_export import assert_same_records, cli_export
    from hfkit.spark import compact, export
    inputs, schema = tmp_path / "lineitem.csv", ROOT / "benches" / "lineitem.toml"
    lineitem_sample(inputs)
    t = tmp_path / "t"
    for extra in ([], ["--force"]):
        r = subprocess.run([hfkit_bin(), "import", "--schema", str(schema), str(inputs),
                            "--timestamp", str(IMPORT_TIME), "--quiet", "--table", str(t),
                            *extra], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    cli = tmp_path / "cli"
    shutil.copytree(t, cli, symlinks=True)
    want = cli_compact(cli, "--major")
    got = compact(cluster, str(t), major=True, now_ms=NOW, progress=False)
    assert len(got["stores"]) == len(want["stores"]) == 16
    assert data_files(t) == data_files(cli)
    cli_export(cli, tmp_path / "cli.csv", "csv")
    got = export(cluster, str(t), str(tmp_path / "out"), format="csv", now_ms=NOW,
                 progress=False)
    assert got["parts"] == 16
    assert_same_records(tmp_path / "cli.csv", tmp_path / "out", "csv", parts_expected=16)
    # The table (16 regions, 16 files after the compaction) as an HBase snapshot, copied to
    # another root by four tasks: the files of the CLI's copy, byte for byte.
    from test_spark_copy import cli_copy, tree
    from hfkit.spark import copy_snapshot
    src = tmp_path / "hbase"
    r = subprocess.run([hfkit_bin(), "hbase", "export-snapshot", str(t), str(src), "--name",
                        "lineitem"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cli_copy(src, tmp_path / "cli-copy", "lineitem")
    got = copy_snapshot(cluster, str(src), str(tmp_path / "copy"), "lineitem", parallelism=4,
                        progress=False)
    assert got["files"] == 16 and got["tasks"] == 4
    assert tree(tmp_path / "copy") == tree(tmp_path / "cli-copy")
