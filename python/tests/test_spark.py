"""hfkit.spark.bulk_load in Spark local mode against one hfkit import of the same input: the
same cells, on every seed design; a task attempt that fails after writing leaves nothing."""

import os
import sys
from pathlib import Path

import pytest

import hfkit
from conftest import (DESIGNS, IMPORT_TIME, SEEDS, bulk_cells, cli_import, first_time, seed_input,
                      table_cells)

pyspark = pytest.importorskip("pyspark")
from hfkit.spark import bulk_load  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # local[2, 2]: two task slots, and a failed task is tried again once.
    s = (SparkSession.builder.master("local[2,2]").appName("hfkit-tests")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "4")
         .config("spark.driver.memory", "1g")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def read(spark, design):
    path, delimiter = seed_input(design)
    return spark.read.csv(str(path), header=True, sep=delimiter)


def files_under(d):
    return sorted(p for p in Path(d).rglob("*") if p.is_file())


@pytest.mark.parametrize("design", DESIGNS)
def test_bulk_load_out_gives_the_cells_of_one_import(spark, design, tmp_path):
    r = cli_import(design, "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    summary = bulk_load(read(spark, design), SEEDS / f"{design}.toml", out=str(tmp_path / "out"),
                        import_time=IMPORT_TIME)
    assert bulk_cells([tmp_path / "out"]) == bulk_cells([tmp_path / "cli"])
    assert summary["cells"] == sum(bulk_cells([tmp_path / "out"]).values())
    # One bulk-load directory: families (and .indexes) only, no attempt left behind.
    names = {p.name for p in (tmp_path / "out").iterdir()}
    assert names == {p.name for p in (tmp_path / "cli").iterdir()}, names
    assert summary["files"] == len(files_under(tmp_path / "out"))


def test_bulk_load_into_a_table_with_several_tasks_per_region(spark, tmp_path):
    r = cli_import("users", "--table", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    summary = bulk_load(read(spark, "users"), SEEDS / "users.toml", table=str(tmp_path / "t"),
                        import_time=IMPORT_TIME, rows_per_task=40)
    assert summary["tasks"] > 10  # ten regions, ~120 rows each: three tasks a region
    assert table_cells(tmp_path / "t") == table_cells(tmp_path / "cli")
    assert summary["attached"] == {str(tmp_path / "t"): 1,
                                   str(tmp_path / "t" / "indexes" / "users_by_email"): 1}
    # A second load into the existing table: its regions are used, one more commit each.
    again = bulk_load(read(spark, "users"), SEEDS / "users.toml", table=str(tmp_path / "t"),
                      import_time=IMPORT_TIME + 1)
    assert set(again["attached"].values()) == {2}
    assert [p.name for p in tmp_path.iterdir() if "bulkload" in p.name] == []


def fail_once(flag):
    def on_written(files):
        # The first attempt to get here fails after its files are written.
        if files and first_time(flag):
            raise RuntimeError("injected failure after writing")
    return on_written


def test_a_task_that_fails_once_and_is_retried_leaves_no_duplicate_or_partial_file(
        spark, tmp_path):
    r = cli_import("orders", "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    flag = tmp_path / "failed-once"
    summary = bulk_load(read(spark, "orders"), SEEDS / "orders.toml", out=str(tmp_path / "out"),
                        import_time=IMPORT_TIME, on_written=fail_once(str(flag)),
                        staging=str(tmp_path / "staging"))
    assert flag.exists(), "no attempt failed"
    # Exactly the cells of one import: none twice (Counter), none missing.
    assert bulk_cells([tmp_path / "out"]) == bulk_cells([tmp_path / "cli"])
    assert summary["files"] == len(files_under(tmp_path / "out"))
    assert not (tmp_path / "staging").exists()


def test_a_table_load_with_a_failed_attempt_attaches_each_file_once(spark, tmp_path):
    r = cli_import("users", "--table", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    flag = tmp_path / "failed-once"
    bulk_load(read(spark, "users"), SEEDS / "users.toml", table=str(tmp_path / "t"),
              import_time=IMPORT_TIME, on_written=fail_once(str(flag)))
    assert flag.exists()
    assert table_cells(tmp_path / "t") == table_cells(tmp_path / "cli")


def test_bad_input_fails_the_load_naming_partition_row_and_field_and_writes_nothing(
        spark, tmp_path):
    lines = (SEEDS / "users.csv").read_text().splitlines()
    fields = lines[5].split(",")
    fields[4] = "lots"
    lines[5] = ",".join(fields)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    df = spark.read.csv(str(bad), header=True)
    with pytest.raises(Exception) as e:
        bulk_load(df, SEEDS / "users.toml", out=str(tmp_path / "out"),
                  staging=str(tmp_path / "staging"))
    text = str(e.value)
    # The task's error: the input (the task's partition), the row, the field and the reason.
    assert "hfkit.InputError: spark partition " in text, text[-2000:]
    assert "field 'score': 'lots' is not a 64-bit decimal integer" in text, text[-2000:]
    assert files_under(tmp_path / "out") == [] if (tmp_path / "out").exists() else True
    assert not (tmp_path / "staging").exists()


def lineitem_sample(path, rows=3000, seed=7):
    """A TPC-H lineitem-shaped CSV (benches/lineitem.toml's columns): quoted comments with
    commas, decimals, dates; deterministic."""
    import random
    rnd = random.Random(seed)
    header = ("l_orderkey,l_partkey,l_suppkey,l_linenumber,l_quantity,l_extendedprice,"
              "l_discount,l_tax,l_returnflag,l_linestatus,l_shipdate,l_commitdate,"
              "l_receiptdate,l_shipinstruct,l_shipmode,l_comment")
    lines = [header]
    order, line = 1, 0
    for _ in range(rows):
        line += 1
        if line > rnd.randint(1, 7):
            order += rnd.randint(1, 5)
            line = 1
        date = f"199{rnd.randint(2, 8)}-{rnd.randint(1, 12):02}-{rnd.randint(1, 28):02}"
        comment = rnd.choice(["furiously, final", "ironic requests", 'say "hi", then'])
        lines.append(",".join([
            str(order), str(rnd.randint(1, 200000)), str(rnd.randint(1, 10000)), str(line),
            str(rnd.randint(1, 50)), f"{rnd.uniform(900, 100000):.2f}",
            f"0.0{rnd.randint(0, 9)}", f"0.0{rnd.randint(0, 8)}", rnd.choice("ANR"),
            rnd.choice("OF"), date, date, date, rnd.choice(["NONE", "TAKE BACK RETURN"]),
            rnd.choice(["TRUCK", "MAIL", "AIR"]),
            '"' + comment.replace('"', '""') + '"',
        ]))
    path.write_text("\n".join(lines) + "\n")


def test_bulk_load_of_a_lineitem_sample_gives_the_cells_of_one_import(spark, tmp_path):
    import subprocess
    from conftest import ROOT, hfkit_bin
    sample = tmp_path / "lineitem.csv"
    lineitem_sample(sample)
    schema = ROOT / "benches" / "lineitem.toml"
    r = subprocess.run([hfkit_bin(), "import", "--schema", str(schema), str(sample), "--out",
                        str(tmp_path / "cli"), "--timestamp", str(IMPORT_TIME), "--quiet"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    df = spark.read.csv(str(sample), header=True, escape='"')
    summary = bulk_load(df, schema, out=str(tmp_path / "out"), import_time=IMPORT_TIME,
                        rows_per_task=100)
    want = bulk_cells([tmp_path / "cli"])
    assert sum(want.values()) == 3000 * 16
    assert bulk_cells([tmp_path / "out"]) == want
    assert summary["tasks"] > 16


DUPLICATES_SCHEMA = """
[table]
name = "dups"
[[family]]
name = "d"
VERSIONS = 3
[splits]
keys = ["k5"]
[rowkey]
spec = "id"
[[column]]
source = "v"
cell = "d:v"
"""


def duplicates_input(path, rows=600, ids=40):
    """Rows whose ids repeat: every id ``ids`` apart, each time with another value, so that
    cells with identical coordinates (row, family, qualifier, import time, Put) recur."""
    lines = ["id,v"] + [f"k{i % ids:02},value {i}" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")


def test_cells_with_identical_coordinates_keep_the_last_row_as_the_cli_across_tasks(
        spark, tmp_path):
    schema = tmp_path / "dups.toml"
    schema.write_text(DUPLICATES_SCHEMA)
    data = tmp_path / "dups.csv"
    duplicates_input(data)
    r = __import__("subprocess").run(
        [__import__("conftest").hfkit_bin(), "import", "--schema", str(schema), str(data),
         "--out", str(tmp_path / "cli"), "--timestamp", str(IMPORT_TIME), "--quiet"],
        capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = bulk_cells([tmp_path / "cli"])
    assert sum(want.values()) == 40  # one cell per id: the last value read
    df = spark.read.csv(str(data), header=True)
    summary = bulk_load(df, schema, out=str(tmp_path / "out"), import_time=IMPORT_TIME,
                        rows_per_task=50)
    assert summary["tasks"] > 4  # both regions cut into several row-key ranges
    assert bulk_cells([tmp_path / "out"]) == want
    # Into a table too: one cell per coordinates, the last value.
    summary = bulk_load(df, schema, table=str(tmp_path / "t"), import_time=IMPORT_TIME,
                        rows_per_task=50)
    assert table_cells(tmp_path / "t") == want


def test_large_regions_use_at_most_max_files_per_region_family_tasks(spark, tmp_path):
    r = cli_import("orders", "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    summary = bulk_load(read(spark, "orders"), SEEDS / "orders.toml", out=str(tmp_path / "out"),
                        import_time=IMPORT_TIME, rows_per_task=5,
                        max_files_per_region_family=3)
    assert bulk_cells([tmp_path / "out"]) == bulk_cells([tmp_path / "cli"])
    regions = hfkit.Schema.load(str(SEEDS / "orders.toml")).region_count()
    assert regions < summary["tasks"] <= 3 * regions
    assert summary["files"] == len(files_under(tmp_path / "out"))


def test_more_files_than_the_limit_for_an_index_region_publish_nothing(spark, tmp_path):
    # users: ten regions, each task writes its rows' e-mail index cells: ten files for an
    # index table's region, more than a limit of 4. Nothing is attached.
    first = bulk_load(read(spark, "users"), SEEDS / "users.toml", table=str(tmp_path / "t"),
                      import_time=IMPORT_TIME)
    before = table_cells(tmp_path / "t")
    with pytest.raises(ValueError) as e:
        bulk_load(read(spark, "users"), SEEDS / "users.toml", table=str(tmp_path / "t"),
                  import_time=IMPORT_TIME + 1, max_files_per_region_family=4)
    assert "table app:users_by_email region " in str(e.value), str(e.value)
    assert "more than max_files_per_region_family=4" in str(e.value)
    assert "nothing was published" in str(e.value)
    assert table_cells(tmp_path / "t") == before
    assert hfkit.Table(str(tmp_path / "t")).version == first["attached"][str(tmp_path / "t")]
    assert [p.name for p in tmp_path.iterdir() if "bulkload" in p.name] == []


def test_sampled_splits_are_cut_from_the_first_rows_as_the_cli_cuts_them(spark, tmp_path):
    text = (SEEDS / "users.toml").read_text()
    text = text.replace('keys = ["1", "2", "3", "4", "5", "6", "7", "8", "9"]', "sample = 6")
    assert "sample = 6" in text
    schema = tmp_path / "users.toml"
    schema.write_text(text)
    path, _ = seed_input("users")
    r = __import__("subprocess").run(
        [__import__("conftest").hfkit_bin(), "import", "--schema", str(schema), str(path),
         "--out", str(tmp_path / "cli"), "--timestamp", str(IMPORT_TIME), "--quiet"],
        capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    bulk_load(read(spark, "users"), schema, out=str(tmp_path / "out"), import_time=IMPORT_TIME)
    assert bulk_cells([tmp_path / "out"]) == bulk_cells([tmp_path / "cli"])

    def regions(d):
        """(family, first row, last row) of the main table's files."""
        infos = ((f, hfkit.HFile(str(f)).info()) for f in files_under(d)
                 if hfkit.INDEX_BULK_DIR not in f.parts)
        return sorted((f.parent.name, i["first_row"], i["last_row"]) for f, i in infos)
    # The same regions: one file per region and family, with the same first and last rows.
    assert regions(tmp_path / "out") == regions(tmp_path / "cli")
    assert len({f for f, _, _ in regions(tmp_path / "cli")}) > 1
    # A table created by the load is cut there too.
    bulk_load(read(spark, "users"), schema, table=str(tmp_path / "t"), import_time=IMPORT_TIME)
    cut = hfkit.Schema.load(str(schema))
    assert cut.samples_splits
    assert len(hfkit.Table(str(tmp_path / "t")).split_points()) >= 3


def test_bulk_load_to_object_storage_gives_the_cells_of_a_local_import(spark, s3, tmp_path):
    from hfkit import list_objects
    r = cli_import("users", "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    flag = tmp_path / "failed-once"
    out, staging = s3.url("spark/out"), s3.url("spark/staging")
    summary = bulk_load(read(spark, "users"), SEEDS / "users.toml", out=out,
                        import_time=IMPORT_TIME, on_written=fail_once(str(flag)),
                        staging=staging, s3_endpoint=s3.endpoint)
    assert flag.exists(), "no attempt failed"
    # The retried task's first attempt left nothing: exactly the cells of one import.
    assert bulk_cells([s3.download(out, tmp_path / "dl")]) == bulk_cells([tmp_path / "cli"])
    assert summary["files"] == len(list_objects(out))
    assert list_objects(staging) == []
    names = {o[len(out) + 1:].split("/")[0] for o, _ in list_objects(out)}
    assert names == {p.name for p in (tmp_path / "cli").iterdir()}, names
    with pytest.raises(ValueError, match="already holds objects"):
        bulk_load(read(spark, "users"), SEEDS / "users.toml", out=out, s3_endpoint=s3.endpoint)


def test_bulk_load_into_a_table_on_object_storage(spark, s3, tmp_path):
    from hfkit import list_objects
    r = cli_import("users", "--table", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    table = s3.url("spark/users")
    flag = tmp_path / "failed-once"
    summary = bulk_load(read(spark, "users"), SEEDS / "users.toml", table=table,
                        import_time=IMPORT_TIME, rows_per_task=40,
                        on_written=fail_once(str(flag)), s3_endpoint=s3.endpoint)
    assert flag.exists()
    assert summary["tasks"] > 10
    assert table_cells(table, ["users_by_email"]) == table_cells(tmp_path / "cli")
    assert set(summary["attached"]) == {table, f"{table}/indexes/users_by_email"}
    # Nothing of the load is left beside the table.
    assert [o for o, _ in list_objects(s3.url("spark")) if "bulkload" in o] == []


def test_route_hfkit_to_object_storage_out_and_table(spark, s3, tmp_path):
    """``route="hfkit"`` with ``s3://`` outputs: the run files and merged regions staged on the
    bucket, published by server-side copies (``out=``) or one attach per table (``table=``)."""
    from hfkit import list_objects
    for mode in ("--out", "--table"):
        r = cli_import("users", mode, str(tmp_path / f"cli{mode}"))
        assert r.returncode == 0, r.stderr
    df = read(spark, "users").repartition(3)
    out = s3.url("routed/out")
    bulk_load(df, SEEDS / "users.toml", out=out, import_time=IMPORT_TIME, route="hfkit",
              s3_endpoint=s3.endpoint)
    assert bulk_cells([s3.download(out, tmp_path / "dl")]) == bulk_cells([tmp_path / "cli--out"])
    table = s3.url("routed/users")
    bulk_load(df, SEEDS / "users.toml", table=table, import_time=IMPORT_TIME, route="hfkit",
              s3_endpoint=s3.endpoint)
    assert table_cells(table, ["users_by_email"]) == table_cells(tmp_path / "cli--table")
    assert [o for o, _ in list_objects(s3.url("routed")) if "hfkit-files" in o] == []


@pytest.mark.parametrize("design", DESIGNS)
def test_route_hfkit_gives_the_cells_of_one_import_without_a_shuffle(spark, design, tmp_path):
    """``route="hfkit"``: each partition routed by hfkit into every region's run files, the
    regions merged by file. The cells of one import, to out= and into a new then an existing
    table, with a task of each stage failing once after writing."""
    for mode in ("--out", "--table"):
        r = cli_import(design, mode, str(tmp_path / f"cli{mode}"))
        assert r.returncode == 0, r.stderr
    df = read(spark, design).repartition(3)  # no two rows of one coordinates: any order
    s = bulk_load(df, SEEDS / f"{design}.toml", out=str(tmp_path / "out"),
                  import_time=IMPORT_TIME, route="hfkit")
    assert bulk_cells([tmp_path / "out"]) == bulk_cells([tmp_path / "cli--out"])
    assert s["splits"] == 3 and s["cells"] == sum(bulk_cells([tmp_path / "out"]).values())
    flags = tmp_path / "flags"
    flags.mkdir()

    def fail_each_stage_once(stage, key):
        if first_time(flags / f"stage{stage}"):
            raise RuntimeError(f"injected failure in stage {stage} after writing")

    t = bulk_load(df, SEEDS / f"{design}.toml", table=str(tmp_path / "t"),
                  import_time=IMPORT_TIME, route="hfkit", merge="always",
                  on_task=fail_each_stage_once)
    assert sorted(p.name for p in flags.iterdir()) == ["stage1", "stage2"]
    assert table_cells(tmp_path / "t") == table_cells(tmp_path / "cli--table")
    assert set(t["attached"].values()) == {1}
    again = bulk_load(df, SEEDS / f"{design}.toml", table=str(tmp_path / "t"),
                      import_time=IMPORT_TIME, route="hfkit")
    assert set(again["attached"].values()) == {2}
    assert sorted(p.name for p in tmp_path.iterdir() if "hfkit-files" in p.name) == []


def test_route_hfkit_keeps_the_last_row_in_the_dataframes_order(spark, tmp_path):
    schema = tmp_path / "dups.toml"
    schema.write_text(DUPLICATES_SCHEMA)
    data = tmp_path / "dups.csv"
    duplicates_input(data)
    r = __import__("subprocess").run(
        [__import__("conftest").hfkit_bin(), "import", "--schema", str(schema), str(data),
         "--out", str(tmp_path / "cli"), "--timestamp", str(IMPORT_TIME), "--quiet"],
        capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # Partitions of about 1 KiB of the file, in the file's order: each id recurs in several.
    spark.conf.set("spark.sql.files.maxPartitionBytes", "1024")
    try:
        df = spark.read.csv(str(data), header=True)
        assert df.rdd.getNumPartitions() > 4
        bulk_load(df, schema, out=str(tmp_path / "out"), import_time=IMPORT_TIME,
                  route="hfkit")
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert bulk_cells([tmp_path / "out"]) == bulk_cells([tmp_path / "cli"])
    with pytest.raises(ValueError, match="route='spark'"):
        bulk_load(df, schema, out=str(tmp_path / "x"), route="hfkit", rows_per_task=10)
