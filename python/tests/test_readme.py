"""The README's Python blocks (its "Python and Spark" section), run as written from the
checkout, one after the other as a reader would: /tmp/ a scratch directory, the checkout's
`fixtures/` by its absolute path (the process keeps its directory: Spark's JVM, started once
per process, gives it to the Python workers of every later test), and the object-storage block
against the tests' moto server (its endpoint for the block's `http://127.0.0.1:5000`, the
block's bucket made first)."""

import os
import re
import sys
import urllib.request

import pytest

import hfkit
from conftest import ROOT, cli_import

pytest.importorskip("pyspark")


def python_blocks():
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Python and Spark")[1].split("\n## ")[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def cells(table, **kwargs):
    return hfkit.Table(str(table)).scan(versions=1000, **kwargs).num_rows


def test_the_readme_python_blocks_run_as_written(s3, tmp_path):
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    blocks = python_blocks()
    assert len(blocks) >= 4, blocks
    bucket = re.search(r"s3://([a-z0-9-]+)/", "".join(blocks)).group(1)
    put = urllib.request.Request(f"{s3.endpoint}/{bucket}", method="PUT")
    with urllib.request.urlopen(put) as r:
        assert r.status == 200
    scope = {}
    try:
        for block in blocks:
            code = (block.replace("/tmp/", f"{tmp_path}/")
                    .replace('"fixtures/', f'"{ROOT}/fixtures/')
                    .replace("http://127.0.0.1:5000", s3.endpoint))
            exec(compile(code, "README.md", "exec"), scope)
    finally:
        if "spark" in scope:
            scope["spark"].stop()
    # What the blocks said they would make: the users seed's cells, as one CLI import.
    r = cli_import("users", "--table", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    want = cells(tmp_path / "cli")
    assert cells(tmp_path / "hfkit-spark-files-users") == want
    assert cells(tmp_path / "hfkit-spark-users") == want  # compacted: the same cells
    assert cells(f"s3://{bucket}/tables/users") == want
    parts = list((tmp_path / "hfkit-spark-users-csv").rglob("*.csv"))
    assert parts and sum(len(p.read_text().splitlines()) - 1 for p in parts) == want
