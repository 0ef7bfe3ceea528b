"""hfkit.spark.bulk_load against `hfkit import`, on TPC-H lineitem (benches/lineitem.toml).

    python benches/spark_bulk_load.py LINEITEM.csv WORKDIR [--rows N] [--hfkit BIN] [--master M]

Runs `hfkit import --threads 2` and `bulk_load` in Spark `local[2]` on the same CSV (the first
N rows with --rows), with one import time, and prints the wall time of each, and for Spark the
time its tasks spent in hfkit's `write_region` (task-seconds) against the task-seconds the job
had (2 slots x wall): the rest is Spark's (CSV parsing, regions, shuffle, sort, scheduling).
Checks that both wrote the same number of cells. Needs the package built with --release
(`maturin build --release`) for numbers worth reading.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMPORT_TIME = 1_700_000_000_000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("workdir")
    ap.add_argument("--rows", type=int)
    ap.add_argument("--hfkit", default=str(ROOT / "target" / "release" / "hfkit"))
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--memory", default="1GB")
    a = ap.parse_args()
    work = Path(a.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    csv = Path(a.csv)
    if a.rows:
        sample = work / "lineitem.csv"
        with open(csv) as src, open(sample, "w") as dst:
            for i, line in enumerate(src):
                if i > a.rows:
                    break
                dst.write(line)
        csv = sample
    schema = ROOT / "benches" / "lineitem.toml"

    started = time.monotonic()
    subprocess.run([a.hfkit, "import", "--schema", str(schema), str(csv), "--out",
                    str(work / "cli"), "--threads", "2", "--memory", a.memory, "--timestamp",
                    str(IMPORT_TIME), "--quiet", "--report", str(work / "cli.json")], check=True)
    cli_wall = time.monotonic() - started
    cli_cells = json.loads((work / "cli.json").read_text())["cells"]
    shutil.rmtree(work / "cli")

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from hfkit.spark import bulk_load
    spark = (SparkSession.builder.master(a.master).appName("hfkit-bench")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "4g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    slots = spark.sparkContext.defaultParallelism
    df = spark.read.csv(str(csv), header=True, escape='"')
    s = bulk_load(df, schema, out=str(work / "spark"), import_time=IMPORT_TIME,
                  memory=512 << 20)
    spark.stop()
    task_seconds = slots * s["seconds"]
    print(json.dumps({
        "rows": a.rows or "all", "cells": cli_cells,
        "hfkit_import_threads2_s": round(cli_wall, 1),
        "spark_bulk_load_s": round(s["seconds"], 1),
        "spark_tasks": s["tasks"], "spark_files": s["files"],
        "in_write_region_task_s": round(s["hfkit_seconds"], 1),
        "slot_s": round(task_seconds, 1),
        "share_in_hfkit": round(s["hfkit_seconds"] / task_seconds, 3),
        "same_cell_count": s["cells"] == cli_cells,
    }, indent=1))
    assert s["cells"] == cli_cells, (s["cells"], cli_cells)


if __name__ == "__main__":
    main()
