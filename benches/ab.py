#!/usr/bin/env python3
"""A/B timing of two whole commands, run in turn (A B A B ...) so a drift of the machine's speed
touches both alike. Each run's CPU time (user + system) and peak RSS are the kernel's own
accounting of the reaped child (wait4); wall time is a monotonic clock around it. Prints min,
median and max of each figure and the median of the pair-by-pair CPU ratios A/B.

Usage: benches/ab.py [-n RUNS] [--cpu N] [--warmup W] --a 'COMMAND A' --b 'COMMAND B'
Each command is run by `sh -c` (so `rm -rf out; exec hfkit ...` works), pinned with `taskset -c N`
when --cpu is given, its output thrown away. A command that exits non-zero stops the bench.
With `--json`, the last line is the figures as JSON (for the other bench scripts).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def run(cmd, cpu):
    argv = ["sh", "-c", cmd]
    if cpu is not None:
        argv = ["taskset", "-c", str(cpu)] + argv
    start = time.monotonic()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"command failed (exit {code}): {cmd}\n{err.decode(errors='replace')}")
    # ru_maxrss is in KiB on Linux: the largest process the command waited for.
    return {"cpu": ru.ru_utime + ru.ru_stime, "wall": wall, "rss_mib": ru.ru_maxrss / 1024}


def spread(xs):
    return f"{min(xs):8.3f} {statistics.median(xs):8.3f} {max(xs):8.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=5, help="runs of each command (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="uncounted runs of each (default 1)")
    ap.add_argument("--cpu", type=int, help="pin both commands to this core")
    ap.add_argument("--a", required=True, help="command A (measured)")
    ap.add_argument("--b", required=True, help="command B (the baseline)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON last")
    args = ap.parse_args()
    for _ in range(args.warmup):
        run(args.a, args.cpu)
        run(args.b, args.cpu)
    a, b = [], []
    for _ in range(args.n):
        a.append(run(args.a, args.cpu))
        b.append(run(args.b, args.cpu))
    print("           min   median      max")
    for name, rs in (("A", a), ("B", b)):
        for k in ("cpu", "wall", "rss_mib"):
            print(f"{name} {k:7} {spread([r[k] for r in rs])}")
    ratios = [x["cpu"] / y["cpu"] for x, y in zip(a, b)]
    print(f"A/B cpu  {spread(ratios)}   (pair by pair)")
    if args.json:
        med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
        print(json.dumps({
            "a": {k: med(a, k) for k in ("cpu", "wall", "rss_mib")},
            "b": {k: med(b, k) for k in ("cpu", "wall", "rss_mib")},
            "ratio_cpu": statistics.median(ratios),
        }))


if __name__ == "__main__":
    main()
