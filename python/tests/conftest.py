"""Shared helpers of the Python package's tests: the seed designs (fixtures/seeds), the CLI
binary they are checked against, and cells gathered from bulk-load directories and tables."""

import os
import subprocess
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
import pytest

import hfkit

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "fixtures" / "seeds"
# One fixed timestamp for cells without one, so the CLI's and the package's cells compare.
IMPORT_TIME = 1_700_000_000_123
DESIGNS = ["users", "orders", "events", "sensors"]


def hfkit_bin():
    """The CLI binary: $HFKIT_BIN, else the workspace's debug build."""
    p = Path(os.environ.get("HFKIT_BIN", ROOT / "target" / "debug" / "hfkit"))
    if not p.is_file():
        pytest.fail(f"{p}: no hfkit binary (cargo build --bin hfkit, or set HFKIT_BIN)")
    return str(p)


def seed_input(design):
    """The seed's input file and its delimiter."""
    csv = SEEDS / f"{design}.csv"
    return (csv, ",") if csv.exists() else (SEEDS / f"{design}.tsv", "\t")


def read_strings(path, delimiter=",", batch_rows=None):
    """A CSV file as a pyarrow Table whose columns are all strings (the text the CLI reads)."""
    with open(path) as f:
        header = f.readline().rstrip("\n").split(delimiter)
    read = pcsv.ReadOptions(block_size=batch_rows) if batch_rows else pcsv.ReadOptions()
    return pcsv.read_csv(
        path,
        read_options=read,
        parse_options=pcsv.ParseOptions(delimiter=delimiter),
        convert_options=pcsv.ConvertOptions(column_types={c: pa.string() for c in header}),
    )


def seed_table(design):
    path, delimiter = seed_input(design)
    return read_strings(path, delimiter)


def cli_import(design, *args):
    """`hfkit import` of a seed design with IMPORT_TIME; returns the completed process."""
    path, delimiter = seed_input(design)
    cmd = [hfkit_bin(), "import", "--schema", str(SEEDS / f"{design}.toml"), str(path),
           "--timestamp", str(IMPORT_TIME), "--quiet", "--threads", "1"]
    if delimiter == "\t":
        cmd += ["--format", "tsv"]
    return subprocess.run(cmd + list(args), capture_output=True, text=True)


def cells_of_batch(batch, table=""):
    cols = batch.to_pydict()
    return [
        (table, cols["family"][i], cols["row"][i], cols["qualifier"][i], cols["timestamp"][i],
         cols["type"][i], cols["value"][i])
        for i in range(batch.num_rows)
    ]


def bulk_cells(dirs):
    """Every cell of the HFiles under bulk-load directories (main table ''; index tables by
    qualifier), as a Counter, so that a cell written twice counts twice."""
    out = Counter()
    for d in dirs:
        d = Path(d)
        for f in d.rglob("*"):
            if not f.is_file() or f.name.startswith((".", "_")):
                continue
            rel = f.relative_to(d).parts
            table = rel[1] if rel[0] == hfkit.INDEX_BULK_DIR else ""
            out.update(cells_of_batch(hfkit.HFile(str(f)).cells(), table))
    return out


def table_cells(path):
    """Every cell a scan of a table and its index tables returns, as a Counter."""
    path = Path(path)
    out = Counter(cells_of_batch(hfkit.Table(str(path)).scan(versions=1000)))
    ix = path / "indexes"
    if ix.is_dir():
        for q in sorted(ix.iterdir()):
            out.update(cells_of_batch(hfkit.Table(str(q)).scan(versions=1000), q.name))
    return out
