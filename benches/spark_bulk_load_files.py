"""hfkit.spark.bulk_load_files against `hfkit import`, on TPC-H lineitem (benches/lineitem.toml).

    python benches/spark_bulk_load_files.py INPUT WORKDIR [-n RUNS] [--master local[2]]
        [--split-mb 64|auto] [--hfkit BIN] [--s3 ENDPOINT] [--dataframe [--route hfkit]]
        [--merge always]

INPUT is lineitem as CSV or Parquet (`tpchgen-cli csv|parquet -s 1 --tables=lineitem`). Runs
`hfkit import --threads 2` and `bulk_load_files` in Spark (`local[2]` by default) alternately,
RUNS times each, each run a whole process: wall time and the CPU time of every process it
made (the driver's JVM and Python, Spark's Python workers), and the ratios pair by pair. With --s3 the
input is uploaded to a moto server on loopback and both write to `s3://` (the server's CPU is
not counted). With --dataframe, `bulk_load(spark.read.csv(...))` (the DataFrame path) is timed
once beside them (with --route hfkit, `route="hfkit"`: no shuffle, rows routed by hfkit).
Checks that both wrote the same number of cells. Needs release builds:
`cargo build --release` and the wheel `maturin build --release` installed. CPU is the
machine's CPU time during each run (every process, however Spark reaps its workers): run it
on an otherwise idle machine.

With --warm, Spark runs in this process for the whole bench (a session already up, as on a
cluster or in a notebook): one load warms it up, then the timed loads alternate with the CLI's
runs as above, each load's CPU the machine's during the call (the JVM and the Python workers,
idle between loads, included).

    python benches/spark_bulk_load_files.py --job INPUT OUT MASTER SPLIT_MB [S3_ENDPOINT|-] [MERGE]

is the Spark side on its own (what the bench times); it prints the load's summary as JSON.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "benches" / "lineitem.toml"
IMPORT_TIME = 1_700_000_000_000


def session(master):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    # The driver's JVM carries no data (file names and summaries): its JIT's C1 tier is
    # enough, and C2 compiling Spark's code costs CPU that never pays back in a short job.
    spark = (SparkSession.builder.master(master).appName("hfkit-bench-files")
             .config("spark.ui.enabled", "false")
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def load(spark, inp, out, split_mb, endpoint, merge):
    from hfkit.spark import bulk_load_files
    return bulk_load_files(spark, inp, SCHEMA, out=out, import_time=IMPORT_TIME,
                           split_bytes=None if split_mb == "auto" else int(split_mb) << 20,
                           memory=512 << 20,
                           s3_endpoint=endpoint, progress=False, merge=merge)


def job(argv):
    inp, out, master, split_mb = argv[:4]
    endpoint = argv[4] if len(argv) > 4 and argv[4] != "-" else None
    merge = argv[5] if len(argv) > 5 else "auto"
    spark = session(master)
    s = load(spark, inp, out, split_mb, endpoint, merge)
    spark.stop()
    print(json.dumps(s))


def dataframe_job(argv):
    inp, out, master, route = argv[:4]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from hfkit.spark import bulk_load
    spark = (SparkSession.builder.master(master).appName("hfkit-bench-df")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "4g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = (spark.read.parquet(inp) if inp.endswith(".parquet")
          else spark.read.csv(inp, header=True, escape='"'))
    s = bulk_load(df, SCHEMA, out=out, import_time=IMPORT_TIME, memory=512 << 20, route=route)
    spark.stop()
    print(json.dumps(s))


def timed(cmd, env=None):
    """Runs `cmd`; returns (wall, cpu of the whole reaped process tree, stdout)."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = p.communicate()
    wall = time.monotonic() - start
    # communicate() reaped it; RUSAGE_CHILDREN grows by the tree's CPU.
    return wall, out.decode(), err.decode(), p.returncode


def become_subreaper():
    """Orphans of the timed commands (Spark's JVM outlives its Python driver by a moment, and
    the Python workers it forked) are reparented to this process, which reaps them: so the CPU
    of every process a run made is in RUSAGE_CHILDREN."""
    import ctypes
    PR_SET_CHILD_SUBREAPER = 36
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed: CPU of orphaned processes not counted")


def reap_all():
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def machine_cpu():
    """CPU seconds the whole machine has spent (user, nice, system, irq, softirq) so far."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    ticks = sum(int(fields[i]) for i in (1, 2, 3, 6, 7))
    return ticks / os.sysconf("SC_CLK_TCK")


def cpu_of(cmd, env=None, reap=True):
    """Wall and CPU seconds of `cmd`: the CPU is the machine's during the run (so every
    process Spark starts, the JVM's threads and the Python workers included, however they
    are reaped; run it on an otherwise idle machine), cross-checked against the kernel's
    accounting of the reaped process tree, which may miss processes reaped by no one."""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    m0 = machine_cpu()
    wall, out, err, code = timed(cmd, env)
    if reap:
        reap_all()  # not while this process runs Spark (--warm): its JVM is a child
    m1 = machine_cpu()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        sys.exit(f"failed ({code}): {' '.join(cmd)}\n{err[-3000:]}")
    tree = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, max(m1 - m0, tree), out


def spread(xs):
    return f"{min(xs):8.2f} {statistics.median(xs):8.2f} {max(xs):8.2f}"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--job":
        return job(sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] == "--dataframe-job":
        return dataframe_job(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("workdir")
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--master", default="local[2]")
    # "auto": bulk_load_files's own choice (128 MiB, or larger to stay within 32 splits).
    ap.add_argument("--split-mb", default="64")
    ap.add_argument("--hfkit", default=str(ROOT / "target" / "release" / "hfkit"))
    ap.add_argument("--s3", help="a moto endpoint (http://127.0.0.1:PORT) with bucket hfkit-bench")
    ap.add_argument("--dataframe", action="store_true")
    ap.add_argument("--route", default="spark", choices=["spark", "hfkit"])
    ap.add_argument("--merge", default="auto", help="bulk_load_files' merge= (auto, always)")
    ap.add_argument("--warm", action="store_true",
                    help="Spark up in this process for the whole bench (see the module doc)")
    a = ap.parse_args()
    become_subreaper()
    work = Path(a.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    inp = str(Path(a.input).absolute())
    fmt = ["--format", "parquet"] if inp.endswith(".parquet") else []
    extra_env = dict(os.environ)
    if a.s3:
        import hfkit
        hfkit.configure_storage(a.s3)
        src = f"s3://hfkit-bench/in/{Path(inp).name}"
        subprocess.run([a.hfkit, "import", "--help"], capture_output=True, check=True)
        put(a.s3, src, inp)
        inp = src

    def out(kind, i):
        if a.s3:
            return f"s3://hfkit-bench/out/{kind}-{i}"
        return str(work / f"{kind}-{i}")

    rows = {"cli": [], "spark": []}
    cells = {}
    spark = None
    if a.warm:
        spark = session(a.master)
        o = out("warmup", 0)
        load(spark, inp, o, a.split_mb, a.s3, a.merge)
        cleanup(o)
    for i in range(a.n):
        o = out("cli", i)
        cmd = [a.hfkit, "import", "--schema", str(SCHEMA), inp, *fmt, "--out", o,
               "--threads", "2", "--memory", "1GB", "--timestamp", str(IMPORT_TIME), "--quiet",
               "--report", str(work / f"cli-{i}.json")]
        if a.s3:
            cmd += ["--s3-endpoint", a.s3]
        wall, cpu, _ = cpu_of(cmd, extra_env, reap=not a.warm)
        rows["cli"].append((wall, cpu))
        cells["cli"] = json.loads((work / f"cli-{i}.json").read_text())["cells"]
        cleanup(o)
        o = out("spark", i)
        if spark is not None:
            m0, t0 = machine_cpu(), time.monotonic()
            s = load(spark, inp, o, a.split_mb, a.s3, a.merge)
            wall, cpu = time.monotonic() - t0, machine_cpu() - m0
        else:
            cmd = [sys.executable, __file__, "--job", inp, o, a.master, str(a.split_mb),
                   a.s3 or "-", a.merge]
            wall, cpu, stdout = cpu_of(cmd, extra_env)
            s = json.loads(stdout.strip().splitlines()[-1])
        rows["spark"].append((wall, cpu))
        cells["spark"] = s["cells"]
        last = s
        cleanup(o)
        print(f"run {i}: cli {rows['cli'][-1][0]:.1f}s wall {rows['cli'][-1][1]:.1f} CPU-s; "
              f"spark {wall:.1f}s wall {cpu:.1f} CPU-s", file=sys.stderr)
    assert cells["cli"] == cells["spark"], cells
    n = cells["cli"]
    ratio_wall = [c[0] / s[0] for c, s in zip(rows["cli"], rows["spark"])]
    ratio_cpu = [s[1] / c[1] for c, s in zip(rows["cli"], rows["spark"])]
    print(f"cells {n}, input {a.input}{' via s3' if a.s3 else ''}, master {a.master}"
          f"{' (warm session)' if a.warm else ''}, splits {last['splits']}, "
          f"regions {last['regions']}")
    print("                                   min   median      max")
    print(f"hfkit import --threads 2 wall {spread([r[0] for r in rows['cli']])}")
    print(f"hfkit import --threads 2 CPU  {spread([r[1] for r in rows['cli']])}")
    print(f"bulk_load_files wall          {spread([r[0] for r in rows['spark']])}")
    print(f"bulk_load_files CPU (all)     {spread([r[1] for r in rows['spark']])}")
    print(f"throughput, files/CLI (wall)  {spread(ratio_wall)}")
    print(f"CPU per cell, files/CLI       {spread(ratio_cpu)}")
    print("stage 1 tasks (split, input bytes, s):",
          [(t[0], t[1], round(t[2], 2)) for t in last["stage1_tasks"]])
    print(f"stage 1 {last['stage1_seconds']:.1f}s, stage 2 {last['stage2_seconds']:.1f}s, "
          f"whole job {last['seconds']:.1f}s")
    if a.dataframe:
        o = out("df", 0)
        wall, cpu, stdout = cpu_of([sys.executable, __file__, "--dataframe-job", inp, o,
                                    a.master, a.route], extra_env)
        s = json.loads(stdout.strip().splitlines()[-1])
        assert s["cells"] == n, (s["cells"], n)
        print(f"bulk_load(DataFrame, route={a.route}) wall {wall:.1f}s, CPU {cpu:.1f}s")
        cleanup(o)


def cleanup(o):
    if o.startswith("s3://"):
        import hfkit
        hfkit.delete_objects(o)
    else:
        shutil.rmtree(o, ignore_errors=True)


def put(endpoint, url, path):
    import urllib.request
    key = url[len("s3://"):]
    req = urllib.request.Request(f"{endpoint}/hfkit-bench", method="PUT")
    try:
        urllib.request.urlopen(req)
    except Exception:
        pass
    with open(path, "rb") as f:
        data = f.read()
    req = urllib.request.Request(f"{endpoint}/{key}", data=data, method="PUT",
                                 headers={"Content-Type": "application/octet-stream"})
    urllib.request.urlopen(req)


if __name__ == "__main__":
    main()
