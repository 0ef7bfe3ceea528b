"""Shared helpers of the Python package's tests: the seed designs (fixtures/seeds), the CLI
binary they are checked against, and cells gathered from bulk-load directories and tables."""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
import pytest

import hfkit

# Dummy credentials for moto (it accepts any), set before Spark starts its Python workers so
# that they inherit them; real ones already in the environment are left alone.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_REGION", "us-east-1")

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


def hbase_layout(test):
    """The HBase-written layout fixtures (``../shared/fixtures/hbase-layout``, or under
    ``$HFKIT_HBASE_FIXTURES``): missing, the test fails where fixtures are required
    (``HFKIT_REQUIRE_FIXTURES=1``, as ``.ci/run`` sets) and is skipped otherwise."""
    base = os.environ.get("HFKIT_HBASE_FIXTURES")
    root = Path(base) if base else ROOT.parent / "shared" / "fixtures"
    d = root / "hbase-layout"
    if not (d / "root1").is_dir():
        why = f"{test}: no hbase-layout fixtures at {d}"
        if os.environ.get("HFKIT_REQUIRE_FIXTURES", "") in ("1", "true", "yes"):
            pytest.fail(why)
        pytest.skip(why)
    return d


def first_time(flag):
    """True for the one caller that creates ``flag``, atomically: Spark tasks in several
    workers may ask at once, and only one of them may inject its failure."""
    try:
        os.close(os.open(str(flag), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


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


def table_cells(path, indexes=None):
    """Every cell a scan of a table and its index tables returns, as a Counter. ``indexes``:
    the index tables' names (default: those under ``path/indexes``; give them for s3://)."""
    out = Counter(cells_of_batch(hfkit.Table(str(path)).scan(versions=1000)))
    if indexes is None:
        ix = Path(path) / "indexes"
        indexes = sorted(q.name for q in ix.iterdir()) if ix.is_dir() else []
    for q in indexes:
        t = hfkit.Table(f"{str(path).rstrip('/')}/indexes/{q}")
        out.update(cells_of_batch(t.scan(versions=1000), q))
    return out


class S3:
    """A moto S3 server on loopback with the bucket ``hfkit-test``."""
    BUCKET = "hfkit-test"

    def __init__(self, port):
        self.endpoint = f"http://127.0.0.1:{port}"

    def url(self, key):
        return f"s3://{self.BUCKET}/{key.strip('/')}"

    def download(self, url, to):
        """Every object below ``url`` into the local directory ``to``."""
        hfkit.download_objects(url, str(to))
        return Path(to)


def _moto_server():
    """`moto_server`: $HFKIT_MOTO_SERVER, else on PATH, else beside this Python."""
    found = os.environ.get("HFKIT_MOTO_SERVER") or shutil.which("moto_server")
    beside = Path(sys.executable).parent / "moto_server"
    return found or (str(beside) if beside.is_file() else None)


def _answers(port, path, method="GET"):
    try:
        req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
        with urllib.request.urlopen(req, timeout=2) as r:
            return r.status
    except Exception:
        return None


@pytest.fixture(scope="session")
def s3():
    """moto_server on a free loopback port, as crates/hfkit-testkit starts it for the Rust
    tests: missing, the test is skipped, or fails with HFKIT_REQUIRE_S3=1 (set by .ci/run)."""
    exe = _moto_server()
    if exe is None:
        why = "moto_server not found (pip install 'moto[server]', or set HFKIT_MOTO_SERVER)"
        if os.environ.get("HFKIT_REQUIRE_S3", "").lower() in ("1", "true", "yes"):
            pytest.fail(why)
        pytest.skip(why)
    for _ in range(5):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            if _answers(port, "/") is not None:
                break
            time.sleep(0.2)
        if proc.poll() is None and _answers(port, f"/{S3.BUCKET}", "PUT") == 200:
            server = S3(port)
            hfkit.configure_storage(server.endpoint)
            yield server
            hfkit.configure_storage(None)
            proc.terminate()
            proc.wait()
            return
        proc.kill()
        proc.wait()
    pytest.fail("moto_server did not answer on loopback")


def local_spark(app):
    """A Spark session in ``local[2,2]`` (two task slots, a failed task tried again once) for
    a test module, with this Python in the workers; stopped when the module is done."""
    from pyspark.sql import SparkSession
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    s = (SparkSession.builder.master("local[2,2]").appName(app)
         .config("spark.ui.enabled", "false")
         .config("spark.driver.memory", "1g")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()
