"""The Python API against the CLI on every seed design: the same cells, the same regions, the
same errors."""

import json
import pickle
import subprocess

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hfkit
from conftest import (DESIGNS, IMPORT_TIME, SEEDS, bulk_cells, cli_import, hfkit_bin,
                      read_strings, seed_table, table_cells)


def by_region(schema, table):
    """The rows of `table` of each region, as lists of record batches (small batches, so that
    a region's rows arrive in several)."""
    regions = pa.concat_arrays([schema.regions(b) for b in table.to_batches()])
    tagged = table.append_column("_region", regions)
    out = {}
    for r in pc.unique(regions).to_pylist():
        rows = tagged.filter(pc.equal(tagged["_region"], r)).drop_columns(["_region"])
        out[r] = rows.to_batches(max_chunksize=97)
    return out


@pytest.mark.parametrize("design", DESIGNS)
def test_write_region_per_region_gives_the_cells_of_one_cli_import(design, tmp_path):
    r = cli_import(design, "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    schema = hfkit.Schema.load(SEEDS / f"{design}.toml")
    dirs = []
    for region, batches in by_region(schema, seed_table(design)).items():
        out = tmp_path / "py" / f"region-{region}"
        files = hfkit.write_region(schema, region, batches, str(out), memory=1 << 20,
                                   import_time=IMPORT_TIME)
        assert files, region
        split = [b""] + schema.split_points()
        for f in files:
            # A main-table file holds only its region's rows.
            if f["table"] == schema.name:
                assert f["region"] == region
                assert f["first_row"] >= split[region]
                if region + 1 < len(split):
                    assert f["last_row"] < split[region + 1]
            assert f["cells"] > 0 and f["bytes"] > 0
        dirs.append(out)
    want = bulk_cells([tmp_path / "cli"])
    assert sum(want.values()) > 0
    assert bulk_cells(dirs) == want


@pytest.mark.parametrize("design", DESIGNS)
def test_row_keys_and_regions_are_the_imports(design, tmp_path):
    r = cli_import(design, "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    schema = hfkit.Schema.load(SEEDS / f"{design}.toml")
    table = seed_table(design)
    keys = pa.concat_arrays([schema.row_keys(b) for b in table.to_batches()])
    regions = pa.concat_arrays([schema.regions(b) for b in table.to_batches()])
    assert len(keys) == table.num_rows
    rows = {c[2] for c in bulk_cells([tmp_path / "cli"]) if c[0] == ""}
    assert set(keys.to_pylist()) == rows
    split = schema.split_points()
    for k, reg in zip(keys.to_pylist(), regions.to_pylist()):
        assert reg == sum(1 for s in split if s <= k)
    # A pickled schema (as Spark ships it) is the same schema.
    again = pickle.loads(pickle.dumps(schema))
    assert again.split_points() == split
    assert again.regions(table.to_batches()[0]) == regions[: table.to_batches()[0].num_rows]


def test_attach_of_many_directories_is_one_commit_per_table(tmp_path):
    r = cli_import("users", "--table", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    schema = hfkit.Schema.load(SEEDS / "users.toml")
    created = hfkit.create_tables(schema, str(tmp_path / "t"))
    assert len(created) == 2  # the table and its index table
    dirs = []
    for region, batches in by_region(schema, seed_table("users")).items():
        d = tmp_path / "out" / str(region)
        hfkit.write_region(schema, region, batches, str(d), import_time=IMPORT_TIME)
        dirs.append(str(d))
    before = hfkit.Table(str(tmp_path / "t")).version
    versions = hfkit.attach(str(tmp_path / "t"), dirs)
    assert versions == {str(tmp_path / "t"): before + 1,
                        str(tmp_path / "t" / "indexes" / "users_by_email"): before + 1}
    assert table_cells(tmp_path / "t") == table_cells(tmp_path / "cli")
    # get, and a scan with a row range and a limit.
    got = hfkit.Table(str(tmp_path / "t")).get(b"7700000000")
    assert set(got.column("family").to_pylist()) == {b"i", b"s", b"h"}
    assert got.column("row").to_pylist() == [b"7700000000"] * got.num_rows
    part = hfkit.Table(str(tmp_path / "t")).scan(start=b"2", stop=b"3", limit=5)
    assert len(set(part.column("row").to_pylist())) == 5
    assert all(b"2" <= r < b"3" for r in part.column("row").to_pylist())


def test_a_raw_scan_gives_the_cells_and_types_the_cli_scan_prints(tmp_path):
    # Two days of accounts: puts, and delete markers of both kinds (DeleteFamily,
    # DeleteColumn), each cell as the CLI's `scan --format cells` prints it
    # (row, family, qualifier and value in hex, "-" for empty; the type by its HBase name).
    t = tmp_path / "t"
    for day in ("day1", "day2"):
        r = subprocess.run([hfkit_bin(), "import", "--schema", str(SEEDS / "accounts.toml"),
                            str(SEEDS / f"accounts-{day}.csv"), "--table", str(t), "--quiet"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    r = subprocess.run([hfkit_bin(), "scan", str(t), "--raw", "--versions", "1000",
                        "--format", "cells"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = [tuple(line.split(" ")[:6]) for line in r.stdout.splitlines()]
    b = hfkit.Table(str(t)).scan(raw=True, versions=1000).to_pydict()
    got = [(b["row"][i].hex(), b["family"][i].hex(), b["qualifier"][i].hex() or "-",
            str(b["timestamp"][i]), b["type"][i], b["value"][i].hex() or "-")
           for i in range(len(b["row"]))]
    assert got == want
    assert {"Put", "DeleteFamily", "DeleteColumn"} <= set(b["type"])


def test_attach_refuses_more_files_per_region_and_family_than_its_limit(tmp_path):
    # HBase's hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily: 32 by default.
    schema = hfkit.Schema.from_toml(
        '[table]\nname = "m"\n[[family]]\nname = "d"\n[rowkey]\nspec = "id"\n'
        '[[column]]\nsource = "v"\ncell = "d:v"\n')
    hfkit.create_tables(schema, str(tmp_path / "t"))
    dirs = []
    for i in range(33):
        batch = pa.RecordBatch.from_pydict({"id": [f"r{i:02}"], "v": [str(i)]})
        d = tmp_path / "out" / str(i)
        hfkit.write_region(schema, 0, [batch], str(d), import_time=IMPORT_TIME)
        dirs.append(str(d))
    with pytest.raises(hfkit.TableError) as e:
        hfkit.attach(str(tmp_path / "t"), dirs)
    assert "more than 32 files for region" in str(e.value), str(e.value)
    assert "family d in one attach" in str(e.value)
    assert hfkit.Table(str(tmp_path / "t")).scan().num_rows == 0
    done = hfkit.attach(str(tmp_path / "t"), dirs, max_files_per_region_family=33)
    assert list(done.values()) == [hfkit.Table(str(tmp_path / "t")).version]
    assert hfkit.Table(str(tmp_path / "t")).scan().num_rows == 33
    with pytest.raises(hfkit.TableError):
        hfkit.attach(str(tmp_path / "t"), dirs[:3], max_files_per_region_family=2)


def test_write_region_create_tables_attach_and_read_on_object_storage(s3, tmp_path):
    r = cli_import("users", "--table", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    schema = hfkit.Schema.load(SEEDS / "users.toml")
    table = s3.url("api/users")
    created = hfkit.create_tables(schema, table)
    assert created == [f"{table}/indexes/users_by_email", table]
    assert hfkit.create_tables(schema, table) == []  # existing ones are left alone
    dirs, written = [], []
    for region, batches in by_region(schema, seed_table("users")).items():
        d = s3.url(f"api/out/{region}")
        written += hfkit.write_region(schema, region, batches, d, import_time=IMPORT_TIME)
        dirs.append(d)
    assert all(f["path"].startswith(s3.url("api/out/")) for f in written)
    assert {o for o, _ in hfkit.list_objects(s3.url("api/out"))} == {f["path"] for f in written}
    # The uploaded files are the cells of one import, and the directory refuses a second write.
    local = [s3.download(d, tmp_path / "dl" / str(i)) for i, d in enumerate(dirs)]
    r = cli_import("users", "--out", str(tmp_path / "cli-out"))
    assert r.returncode == 0, r.stderr
    assert bulk_cells(local) == bulk_cells([tmp_path / "cli-out"])
    with pytest.raises(hfkit.HfkitError, match="already holds"):
        region, batches = next(iter(by_region(schema, seed_table("users")).items()))
        hfkit.write_region(schema, region, batches, dirs[0], import_time=IMPORT_TIME)
    before = hfkit.Table(table).version
    versions = hfkit.attach(table, dirs)
    assert versions == {table: before + 1, f"{table}/indexes/users_by_email": before + 1}
    assert table_cells(table, ["users_by_email"]) == table_cells(tmp_path / "cli")
    got = hfkit.Table(table).get(b"7700000000")
    assert set(got.column("family").to_pylist()) == {b"i", b"s", b"h"}
    # The same s3:// directories attach to a local table too (downloaded first).
    hfkit.create_tables(schema, str(tmp_path / "local"))
    hfkit.attach(str(tmp_path / "local"), dirs)
    assert table_cells(tmp_path / "local") == table_cells(tmp_path / "cli")


def test_sampled_splits_are_those_the_cli_samples_from_the_same_rows(tmp_path):
    import pyarrow.parquet as pq
    text = (SEEDS / "users.toml").read_text().replace(
        'keys = ["1", "2", "3", "4", "5", "6", "7", "8", "9"]', "sample = 6")
    schema_path = tmp_path / "users.toml"
    schema_path.write_text(text)
    schema = hfkit.Schema.load(schema_path)
    assert schema.samples_splits
    with pytest.raises(hfkit.HfkitError, match="Schema.with_sampled_regions"):
        schema.split_points()
    pq.write_table(seed_table("users"), str(tmp_path / "users.parquet"))
    sampled = schema.with_sampled_regions([str(tmp_path / "users.parquet")], sample_rows=500)
    r = subprocess.run([hfkit_bin(), "table", "create", str(tmp_path / "t"), "--schema",
                        str(schema_path), "--input", str(SEEDS / "users.csv"),
                        "--sample-rows", "500"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sampled.split_points() == hfkit.Table(str(tmp_path / "t")).split_points()
    assert 3 <= len(sampled.split_points()) <= 5
    # Picklable with its regions, as bulk_load ships it to the tasks.
    assert pickle.loads(pickle.dumps(sampled)).split_points() == sampled.split_points()


def test_a_row_of_another_region_is_refused_and_leaves_no_file(tmp_path):
    schema = hfkit.Schema.load(SEEDS / "users.toml")
    table = seed_table("users")
    with pytest.raises(ValueError, match="rows of region .* in the input of region 4"):
        hfkit.write_region(schema, 4, table.to_batches(), str(tmp_path / "o"))
    assert [p for p in (tmp_path / "o").rglob("*") if p.is_file()] == []


def test_bad_input_raises_with_file_row_and_field_as_the_cli_reports_it(tmp_path):
    # Line 6 of the file (row 5): a score that is not an int64.
    bad = tmp_path / "bad.csv"
    lines = (SEEDS / "users.csv").read_text().splitlines()
    fields = lines[5].split(",")
    fields[4] = "lots"
    lines[5] = ",".join(fields)
    bad.write_text("\n".join(lines) + "\n")
    cli = subprocess.run(
        [hfkit_bin(), "import", "--schema", str(SEEDS / "users.toml"), str(bad),
         "--out", str(tmp_path / "cli"), "--quiet"], capture_output=True, text=True)
    assert cli.returncode == 1
    assert f"{bad}: line 6:" in cli.stderr and "score" in cli.stderr, cli.stderr
    schema = hfkit.Schema.load(SEEDS / "users.toml")
    batches = read_strings(bad).to_batches(max_chunksize=3)
    region = schema.regions(batches[1])[1].as_py()  # the bad row: batch 1, row 1
    with pytest.raises(hfkit.InputError) as e:
        hfkit.write_region(schema, region, batches, str(tmp_path / "py"), name="bad rows")
    # Rows of other regions are refused only after the bad row has stopped the import.
    err = e.value
    assert (err.file, err.row_group, err.row, err.field) == ("bad rows", 1, 1, "score")
    assert str(err).startswith("bad rows: row group 1, row 1: ")
    # The reason is the CLI's, word for word.
    assert err.reason in cli.stderr
    assert not (tmp_path / "py").exists() or not any(
        p.is_file() for p in (tmp_path / "py").rglob("*"))
    # row_keys / regions: a key that cannot be encoded names its row and field.
    # The same attributes as write_region's error for the same row: file, row group, row,
    # the field (not the spec's expression), the reason.
    keyless = batches[0].set_column(0, "user_id", pa.array(["1", "x", "3"]))
    with pytest.raises(hfkit.InputError) as w:
        hfkit.write_region(schema, 0, [keyless], str(tmp_path / "keyless"), name="part 7")
    for f in (schema.regions, schema.row_keys):
        with pytest.raises(hfkit.InputError) as e:
            f(keyless, name="part 7", number=2)
        assert (e.value.file, e.value.row_group, e.value.row) == ("part 7", 2, 1)
        assert e.value.field == w.value.field == "user_id"
        assert e.value.reason == w.value.reason and "'x'" in e.value.reason


def test_schema_errors_carry_file_line_and_column(tmp_path):
    bad = tmp_path / "s.toml"
    text = (SEEDS / "users.toml").read_text().replace('type = "int64"', 'type = "int65"', 1)
    bad.write_text(text)
    with pytest.raises(hfkit.SchemaError) as e:
        hfkit.Schema.load(bad)
    line = next(i for i, l in enumerate(text.splitlines(), 1) if "int65" in l)
    assert (e.value.file, e.value.line) == (str(bad), line)
    assert e.value.column >= 1
    cli = subprocess.run(
        [hfkit_bin(), "import", "--schema", str(bad),
         str(SEEDS / "users.csv"), "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert cli.returncode == 1 and str(e.value) in cli.stderr


def test_hfile_info_and_verify(tmp_path):
    r = cli_import("orders", "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    f = next(p for p in (tmp_path / "cli" / "o").iterdir())
    h = hfkit.HFile(str(f))
    info = h.info()
    cells = h.cells()
    assert info["entries"] == cells.num_rows > 0
    assert info["first_row"] == cells.column("row")[0].as_py()
    assert info["last_row"] == cells.column("row")[-1].as_py()
    assert info["compression"].lower() == "lz4"
    assert h.verify() == {"ok": True, "cells": cells.num_rows, "blocks": h.verify()["blocks"],
                          "problems": []}
    # One flipped byte in a data block: verify names a problem.
    damaged = tmp_path / "damaged"
    data = bytearray(f.read_bytes())
    data[100] ^= 0xFF
    damaged.write_bytes(bytes(data))
    try:
        v = hfkit.HFile(str(damaged)).verify()
        assert not v["ok"] and v["problems"]
    except hfkit.HFileError:
        pass
    with pytest.raises(hfkit.HFileError):
        hfkit.HFile(str(tmp_path / "missing"))


WRITER_SETTINGS_SCHEMA = """
[table]
name = "w"
[[family]]
name = "d"
BLOOMFILTER = "ROWCOL"
BLOCKSIZE = 1024
{configuration}
[rowkey]
spec = "id"
[[column]]
source = "v"
cell = "d:v"
"""

WRITER_SETTINGS = """[family.CONFIGURATION]
"io.storefile.bloom.block.size" = "512"
"io.storefile.bloom.error.rate" = "0.001"
"hfile.index.block.max.size" = "256"
"hfile.index.block.min.entries" = "4"
"""


def test_write_region_writes_hbase_writer_settings_as_the_cli_import(tmp_path):
    # HBase's writer settings in a family's CONFIGURATION (Bloom block size and error rate,
    # index block size and minimum entries) reach the files the Python API writes: byte for
    # byte the CLI import's of the same schema, and visible in the file against the defaults.
    rows = {"id": [f"r{i:05}" for i in range(3000)], "v": ["x" * (i % 50) for i in range(3000)]}
    csv = tmp_path / "in.csv"
    csv.write_text("id,v\n" + "".join(f"{k},{v}\n" for k, v in zip(rows["id"], rows["v"])))
    infos = {}
    for name, conf in (("set", WRITER_SETTINGS), ("default", "")):
        toml = tmp_path / f"{name}.toml"
        toml.write_text(WRITER_SETTINGS_SCHEMA.format(configuration=conf))
        schema = hfkit.Schema.load(toml)
        files = hfkit.write_region(schema, 0, [pa.RecordBatch.from_pydict(rows)],
                                   str(tmp_path / name / "py"), import_time=IMPORT_TIME)
        r = subprocess.run([hfkit_bin(), "import", "--schema", str(toml), str(csv), "--out",
                            str(tmp_path / name / "cli"), "--timestamp", str(IMPORT_TIME),
                            "--quiet", "--threads", "1"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        [cli_file] = (tmp_path / name / "cli" / "d").iterdir()
        [py_file] = [f["path"] for f in files]
        assert open(py_file, "rb").read() == cli_file.read_bytes(), name
        r = subprocess.run([hfkit_bin(), "hfile", "info", "--json", py_file],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        infos[name] = json.loads(r.stdout)
    bloom = infos["set"]["bloom"]["general"]
    assert (bloom["num_chunks"] - 1) * 512 < bloom["total_byte_size"] <= bloom["num_chunks"] * 512
    default_bloom = infos["default"]["bloom"]["general"]
    assert default_bloom["num_chunks"] == 1  # HBase's 128 KiB chunks
    assert bloom["hash_count"] > default_bloom["hash_count"]  # error rate 0.001, not 0.01
    assert infos["set"]["index"]["levels"] > infos["default"]["index"]["levels"] == 1


# Every value type of formats/schema.md: (qualifier, type, the input's text = the decoded
# value, the stored bytes).
TYPED = [("s", "string", "hello", b"hello"),
         ("l", "int64", "-42", (-42).to_bytes(8, "big", signed=True)),
         ("d", "double", "1.5", bytes.fromhex("3ff8000000000000")),
         ("i16", "int16", "300", (300).to_bytes(2, "big")),
         ("i32", "int32", "70000", (70000).to_bytes(4, "big")),
         ("f", "float32", "0.25", bytes.fromhex("3e800000")),
         ("b", "boolean", "true", b"\xff"),
         ("bd", "bigdecimal", "12.345", b"\x00\x00\x00\x03" + (12345).to_bytes(2, "big")),
         ("h", "hex", "00ff10", b"\x00\xff\x10"),
         ("b64", "base64", "AQID", b"\x01\x02\x03")]


def test_reads_decode_the_columns_the_schema_typed(tmp_path):
    schema = '[table]\nname = "typed"\n[[family]]\nname = "v"\n[rowkey]\nspec = "id"\n'
    schema += "".join(f'[[column]]\nsource = "{q}"\ncell = "v:{q}"\ntype = "{t}"\n'
                      for q, t, _, _ in TYPED)
    (tmp_path / "s.toml").write_text(schema)
    (tmp_path / "in.csv").write_text("id," + ",".join(q for q, *_ in TYPED) + "\nr1,"
                                     + ",".join(v for _, _, v, _ in TYPED) + "\n")
    r = subprocess.run([hfkit_bin(), "import", "--schema", str(tmp_path / "s.toml"),
                        str(tmp_path / "in.csv"), "--table", str(tmp_path / "t"), "--quiet"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    t = hfkit.Table(str(tmp_path / "t"))
    assert t.typed_columns == {f"v:{q}": ty for q, ty, _, _ in TYPED if ty != "string"}
    for batch in (t.get(b"r1"), t.scan()):
        got = {q.decode(): (v, d) for q, v, d in zip(*(batch[c].to_pylist() for c in
                                                      ("qualifier", "value", "decoded")))}
        for q, ty, text, stored in TYPED:
            # The stored bytes, and the value as its type reads it (a string is not typed).
            assert got[q] == (stored, None if ty == "string" else text), q
    raw = t.get(b"r1", raw_values=True)
    assert "decoded" not in raw.schema.names
    assert sorted(raw["value"].to_pylist()) == sorted(stored for *_, stored in TYPED)
