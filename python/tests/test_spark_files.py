"""hfkit.spark.bulk_load_files: files bulk-loaded by hfkit's native code in Spark's tasks, against
one `hfkit import` of the same input: the same cells for every seed design, CSV split into byte
ranges and Parquet into row groups, to out= and table=, local and s3://; a task of each stage
that fails once after writing, a Python worker that dies, and a driver killed after stage 1
leave no duplicate, partial or stray file."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import hfkit
from conftest import (DESIGNS, IMPORT_TIME, SEEDS, bulk_cells, cli_import, first_time, hfkit_bin,
                      read_strings, seed_input, table_cells)

pyspark = pytest.importorskip("pyspark")
from hfkit.spark import bulk_load_files  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # local[2, 2]: two task slots, and a failed task is tried again once.
    s = (SparkSession.builder.master("local[2,2]").appName("hfkit-files-tests")
         .config("spark.ui.enabled", "false")
         .config("spark.driver.memory", "1g")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def csv_options(design):
    _, delimiter = seed_input(design)
    return {"delimiter": delimiter}


def load(spark, design, **kwargs):
    path, _ = seed_input(design)
    kwargs.setdefault("import_time", IMPORT_TIME)
    kwargs.setdefault("progress", False)
    return bulk_load_files(spark, kwargs.pop("inputs", str(path)), SEEDS / f"{design}.toml",
                           csv=kwargs.pop("csv", csv_options(design)), **kwargs)


def leftovers(d):
    """Staging of this module's loads left under ``d``."""
    return sorted(p.name for p in Path(d).rglob("*hfkit-files-*"))


@pytest.mark.parametrize("design", DESIGNS)
def test_split_csv_gives_the_cells_of_one_import(spark, design, tmp_path):
    r = cli_import(design, "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    want = bulk_cells([tmp_path / "cli"])
    # Splits of 8 KiB: many per file, cutting records everywhere.
    s = load(spark, design, out=str(tmp_path / "out"), split_bytes=8 << 10)
    assert s["splits"] > 3
    assert bulk_cells([tmp_path / "out"]) == want
    assert s["cells"] == sum(want.values())
    assert {p.name for p in (tmp_path / "out").iterdir()} == {
        p.name for p in (tmp_path / "cli").iterdir()}
    # Into a table: the table's cells are the CLI's table's.
    r = cli_import(design, "--table", str(tmp_path / "cli-t"))
    assert r.returncode == 0, r.stderr
    t = load(spark, design, table=str(tmp_path / "t"), split_bytes=8 << 10)
    assert table_cells(tmp_path / "t") == table_cells(tmp_path / "cli-t")
    assert t["rows_read"] == s["rows_read"] and t["rows_rejected"] == 0
    assert leftovers(tmp_path) == []


def test_merge_always_writes_a_file_per_region_and_auto_only_where_needed(spark, tmp_path):
    # users: reversed ids, so every split has rows all over each region: every region merged.
    r = cli_import("users", "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    auto = load(spark, "users", out=str(tmp_path / "auto"), split_bytes=8 << 10)
    assert auto["regions_merged"] == auto["regions"]
    always = load(spark, "users", out=str(tmp_path / "always"), split_bytes=8 << 10,
                  merge="always")
    assert always["files"] == auto["files"] == len(
        [p for p in (tmp_path / "cli").rglob("*") if p.is_file() and p.name[0] not in "._"])
    for d in ("auto", "always"):
        assert bulk_cells([tmp_path / d]) == bulk_cells([tmp_path / "cli"])
    # events: time-ordered keys within each salt bucket: no region needs a merge with
    # merge="auto" (a file per split), one file per region with merge="always".
    r = cli_import("events", "--out", str(tmp_path / "cli-e"))
    assert r.returncode == 0, r.stderr
    auto = load(spark, "events", out=str(tmp_path / "auto-e"), split_bytes=8 << 10)
    always = load(spark, "events", out=str(tmp_path / "always-e"), split_bytes=8 << 10,
                  merge="always")
    for d in ("auto-e", "always-e"):
        assert bulk_cells([tmp_path / d]) == bulk_cells([tmp_path / "cli-e"])
    assert always["regions_merged"] == always["regions"]
    assert always["files"] <= auto["files"]


def test_default_splits_stay_within_the_files_a_region_may_take(spark, tmp_path, monkeypatch):
    # events: keys growing within each salt bucket. Splits of the default size (made 2 KiB
    # here) past the region's file limit (4 here) are made larger, so that every region is
    # published as stage 1 wrote it, with no second pass; the same splits given explicitly
    # exceed the limit, and then regions are merged.
    from hfkit import spark_files
    monkeypatch.setattr(spark_files, "DEFAULT_SPLIT_BYTES", 2 << 10)
    r = cli_import("events", "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    limit = max(4, spark.sparkContext.defaultParallelism)
    auto = load(spark, "events", out=str(tmp_path / "auto"), max_files_per_region_family=4)
    assert 1 < auto["splits"] <= limit, auto["splits"]
    assert auto["regions_merged"] == 0
    small = load(spark, "events", out=str(tmp_path / "small"), split_bytes=2 << 10,
                 max_files_per_region_family=4)
    assert small["splits"] > limit and small["regions_merged"] > 0
    for d in ("auto", "small"):
        assert bulk_cells([tmp_path / d]) == bulk_cells([tmp_path / "cli"])
    # merge="always" merges every region anyway: the default size is kept.
    always = load(spark, "events", out=str(tmp_path / "always"), merge="always")
    assert always["splits"] == small["splits"]


def test_parquet_row_groups_and_a_second_load_into_the_table(spark, tmp_path):
    table = read_strings(SEEDS / "users.csv")
    pq.write_table(table, tmp_path / "a.parquet", row_group_size=100)
    r = cli_import("users", "--table", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    s = load(spark, "users", inputs=str(tmp_path / "*.parquet"), table=str(tmp_path / "t"),
             split_bytes=1, csv=None)
    assert s["splits"] == 12  # a split a row group
    assert table_cells(tmp_path / "t") == table_cells(tmp_path / "cli")
    again = load(spark, "users", inputs=str(tmp_path / "a.parquet"), table=str(tmp_path / "t"),
                 csv=None, import_time=IMPORT_TIME + 1)
    assert set(again["attached"].values()) == {2}


# The seed designs the test above leaves out: a change feed loaded day after day (puts and both
# kinds of deletes) into a new, then an existing table, and the two schemas of several [[table]]
# sections (1:N and M:N from one input), each table at <out or table>/<qualifier>.
FEEDS = {"accounts": ["accounts-day1", "accounts-day2"], "enrollments": ["enrollments"],
         "sale_lines": ["sale_lines"]}


@pytest.mark.parametrize("where", ["local", "s3"])
@pytest.mark.parametrize("design", sorted(FEEDS))
def test_change_feeds_and_several_tables_give_the_cells_of_the_cli(spark, request, design, where,
                                                                   tmp_path):
    schema = SEEDS / f"{design}.toml"
    targets = hfkit.Schema.load_targets(str(schema))
    several = len(targets) > 1
    cli_t = tmp_path / "cli-t"
    s3 = request.getfixturevalue("s3") if where == "s3" else None
    base = s3.url(f"feeds/{design}") if s3 else str(tmp_path)
    table = f"{base}/t"
    for n, day in enumerate(FEEDS[design]):
        src = str(SEEDS / f"{day}.csv")
        cli = [hfkit_bin(), "import", "--schema", str(schema), src, "--timestamp",
               str(IMPORT_TIME), "--quiet", "--threads", "1"]
        out_cli = tmp_path / f"cli-out-{n}"
        for more in (["--out", str(out_cli)], ["--table", str(cli_t)]):
            r = subprocess.run(cli + more, capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
        if s3:
            hfkit_put(s3, f"{base}/in/{day}.csv", (SEEDS / f"{day}.csv").read_bytes(), tmp_path)
            src = f"{base}/in/{day}.csv"
        opts = dict(inputs=src, csv={}, split_bytes=40, import_time=IMPORT_TIME,
                    progress=False, s3_endpoint=s3.endpoint if s3 else None)
        out = f"{base}/out-{n}"
        s = bulk_load_files(spark, opts.pop("inputs"), schema, out=out, **opts)
        assert s["splits"] > 3
        got = s3.download(out, tmp_path / f"dl-{n}") if s3 else Path(out)
        for t in targets:
            q = t.qualifier if several else ""
            assert bulk_cells([got / q]) == bulk_cells([out_cli / q]), (day, t.name)
        t_sum = bulk_load_files(spark, opts.pop("inputs", src), schema, table=table, **opts)
        assert t_sum["rows_read"] == s["rows_read"] > 0
        # One commit per table: the first day creates each table, the next attaches.
        assert sorted(t_sum["attached"].values()) == [n + 1] * len(targets)
        if several:
            assert sorted(t_sum["tables"]) == sorted(t.name for t in targets)
            assert t_sum["cells"] == sum(x["cells"] for x in t_sum["tables"].values())
    for t in targets:
        q = t.qualifier if several else ""
        at = f"{table}/{q}".rstrip("/")
        assert table_cells(at, indexes=t.index_tables) == table_cells(cli_t / q), t.name
    assert leftovers(tmp_path) == []
    if s3:
        assert not [u for u, _ in hfkit.list_objects(base) if "hfkit-files-" in u]


def fail_once(flag_dir, how):
    """``on_task``: the first task of each stage to get here fails after writing (``raise``) or
    kills its Python worker (``exit``)."""
    def on_task(stage, key):
        flag = Path(flag_dir) / f"stage{stage}"
        if first_time(flag):
            if how == "exit":
                os._exit(3)
            raise RuntimeError(f"injected failure in stage {stage} after writing")
    return on_task


@pytest.mark.parametrize("how", ["raise", "exit"])
def test_tasks_that_fail_once_after_writing_leave_no_duplicate(spark, tmp_path, how):
    r = cli_import("orders", "--table", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    (tmp_path / "flags").mkdir()
    load(spark, "orders", table=str(tmp_path / "t"), split_bytes=8 << 10,
         on_task=fail_once(tmp_path / "flags", how))
    assert sorted(p.name for p in (tmp_path / "flags").iterdir()) == ["stage1", "stage2"]
    assert table_cells(tmp_path / "t") == table_cells(tmp_path / "cli")
    assert leftovers(tmp_path) == []


def test_bad_input_fails_naming_the_split_and_publishes_nothing(spark, tmp_path):
    lines = (SEEDS / "users.csv").read_text().splitlines()
    fields = lines[900].split(",")
    fields[4] = "lots"
    lines[900] = ",".join(fields)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(Exception) as e:
        load(spark, "users", inputs=str(bad), table=str(tmp_path / "t"), split_bytes=8 << 10)
    assert "bad.csv (the split from byte" in str(e.value) and "score" in str(e.value)
    # The table is created with its first load's commit: a failed load leaves none.
    assert not (tmp_path / "t").exists()
    assert leftovers(tmp_path) == []


DRIVER = textwrap.dedent("""
    import os, sys, time
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    from hfkit.spark import bulk_load_files
    s = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")

    def slow(stage, key):
        if stage == 2:
            time.sleep(30)

    bulk_load_files(s, sys.argv[1], sys.argv[2], table=sys.argv[3], import_time=int(sys.argv[4]),
                    split_bytes=8 << 10, on_task=slow)
""")


def test_a_driver_killed_after_stage_one_leaves_nothing_taken_for_data(tmp_path):
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    table = tmp_path / "t"
    proc = subprocess.Popen(
        [sys.executable, str(script), str(SEEDS / "users.csv"), str(SEEDS / "users.toml"),
         str(table), str(IMPORT_TIME)],
        cwd=tmp_path, stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "stage 1 done" in line:
            break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert any("stage 1 done" in s for s in seen), "".join(seen)
    # The staging of the dead driver is there, hidden beside where the table goes; no table
    # was made (it is created with the load's commit), and nothing else is there.
    assert len(leftovers(tmp_path)) >= 1
    assert not table.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "driver.py"]
    # The next load removes it, and loads the cells of one import.
    from pyspark.sql import SparkSession
    spark = SparkSession.builder.getOrCreate()
    load(spark, "users", table=str(table), split_bytes=8 << 10)
    assert leftovers(tmp_path) == []
    r = cli_import("users", "--table", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    assert table_cells(table) == table_cells(tmp_path / "cli")


def test_inputs_and_outputs_on_object_storage(spark, s3, tmp_path):
    r = cli_import("users", "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    with open(SEEDS / "users.csv", "rb") as f:
        data = f.read()
    src = s3.url("files/in/users.csv")
    hfkit_put(s3, src, data, tmp_path)
    out = s3.url("files/out")
    load(spark, "users", inputs=src, out=out, split_bytes=8 << 10, s3_endpoint=s3.endpoint)
    assert bulk_cells([s3.download(out, tmp_path / "dl")]) == bulk_cells([tmp_path / "cli"])
    table = s3.url("files/users")
    staging = s3.url("files/staging")
    load(spark, "users", inputs=src, table=table, split_bytes=8 << 10, staging=staging,
         s3_endpoint=s3.endpoint)
    r = cli_import("users", "--table", str(tmp_path / "cli-t"))
    assert table_cells(table, indexes=["users_by_email"]) == table_cells(tmp_path / "cli-t")
    assert hfkit.list_objects(staging) == []


def hfkit_put(s3, url, data, tmp_path):
    """Puts ``data`` at ``url`` through moto's S3 API (it takes unsigned requests)."""
    import urllib.request
    bucket_key = url[len("s3://"):]
    # A body typed as a form would be read as one.
    req = urllib.request.Request(f"{s3.endpoint}/{bucket_key}", data=data, method="PUT",
                                 headers={"Content-Type": "application/octet-stream"})
    with urllib.request.urlopen(req) as r:
        assert r.status == 200
