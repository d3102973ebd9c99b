"""`solar batch` per workload, warm workers against one process per workload, side by side
in one run (issue 14): the same workloads, the same jobs, with and without validation.

    .venv/bin/python bench/bench_batch.py [--every K] [--jobs 2] [--no-validated]

--every K takes every K-th program of workloads/level{1,2,3} (default 6: 31 of 183). It
prints the mean wall seconds per workload (the batch's wall time over its workloads, as a
user waits for it) of each mode, the cold/warm ratio and, where Ray is installed, the Ray
engine (warm workers, a local cluster started by the batch) against the local engine, also
without the seconds the batch spent starting and stopping the cluster (`cluster s`, from
its "ray: ... in X s" lines: a fixed cost that a long suite, or a cluster already running
under --address, does not pay per workload), and checks that every mode gives the same
totals. --every 1 runs all 183 programs.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(files, workers: str, jobs: int, validate: bool, engine: str = "local"):
    """(wall seconds, {source: totals}, seconds the batch spent starting and stopping a
    local Ray cluster) of one `solar batch` over `files`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.jsonl"
        cmd = [sys.executable, "-m", "solar.cli", "batch", *map(str, files)]
        cmd += ["--out", str(out), "--jobs", str(jobs), "--workers", workers]
        cmd += ["--arch", "H100_PCIe", "--engine", engine]
        cmd += [] if validate else ["--no-validate"]
        start = time.perf_counter()
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        wall = time.perf_counter() - start
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    # "ray: started a local cluster of 2 CPUs in 3.11 s", "ray: stopped ... in 1.14 s"
    cluster = sum(map(float, re.findall(r"^ray: .* in ([0-9.]+) s$", done.stderr, re.M)))
    return wall, {r["source"]: r.get("totals") for r in rows}, cluster


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--every", type=int, default=6)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument(
        "--no-validated", dest="validated", action="store_false", help="skip the validated runs"
    )
    p.add_argument("--no-cold", dest="cold", action="store_false", help="skip the cold runs")
    args = p.parse_args(argv)
    files = sorted(
        f
        for level in ("level1", "level2", "level3")
        for f in (ROOT / "workloads" / level).glob("*.py")
    )[:: args.every]
    try:
        import ray  # noqa: F401

        with_ray = True
    except ImportError:
        with_ray = False
    n = len(files)
    print(f"{n} workloads, --jobs {args.jobs}")
    head = f"{'mode':16s} {'warm s/wl':>10s}"
    head += f" {'cold s/wl':>10s} {'cold/warm':>10s}" if args.cold else ""
    head += (
        f" {'ray s/wl':>9s} {'ray/warm':>9s} {'cluster s':>9s} {'w/o it':>7s}" if with_ray else ""
    )
    print(head + "  same totals")
    for validate in (False, True) if args.validated else (False,):
        warm, w, _ = run(files, "warm", args.jobs, validate)
        line, same = f"{warm / n:10.2f}", True
        if args.cold:
            cold, c, _ = run(files, "cold", args.jobs, validate)
            line += f" {cold / n:10.2f} {cold / warm:9.2f}x"
            same = same and c == w
        if with_ray:
            on_ray, r, cluster = run(files, "warm", args.jobs, validate, "ray")
            line += f" {on_ray / n:9.2f} {on_ray / warm:8.2f}x"
            line += f" {cluster:9.2f} {(on_ray - cluster) / warm:6.2f}x"
            same = same and r == w
        name = "validated" if validate else "--no-validate"
        print(f"{name:16s} {line}  {same}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
