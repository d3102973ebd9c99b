"""The JAX front end's speed: capture + lower + analyse (no validation) of Flax ResNet-50
at batch 64 and 224x224 images (workloads/jax/level3/resnet50.py with its size constants
overridden), in a fresh process each time, with the wall time of each stage and the
process's peak memory. Target (issue 12): under 20 s and 1 GB.

    .venv/bin/python bench/bench_jax.py [--repeats N] [FILE --dim K=V ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import jax  # noqa: F401
from solar import _core, load_arch
from solar.frontend.validation import load_lowered
from solar.jax import lower_jax
t1 = time.perf_counter()
capture, lowered = lower_jax(sys.argv[1], overrides=json.loads(sys.argv[2]))
t2 = time.perf_counter()
graph = _core.trace(load_lowered(lowered), [])
analysis = _core.analyze(graph, load_arch("H100_PCIe"), "default", True)
t3 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"import": t1 - t0, "capture_lower": t2 - t1, "analyse": t3 - t2,
                  "total": t3 - t0, "peak_bytes": peak, "nodes": len(graph.nodes),
                  "equations": sum(lowered.ops.values()),
                  "fused_seconds": analysis.fused.seconds}))
"""


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?", default=str(ROOT / "workloads/jax/level3/resnet50.py"))
    ap.add_argument("--dim", action="append", default=[])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    dims = dict(d.split("=", 1) for d in args.dim) if args.dim else {"B": "64", "IMG": "224"}
    overrides = {k: int(v) for k, v in dims.items()}
    runs = []
    for _ in range(args.repeats):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, args.file, json.dumps(overrides)],
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(
        f"{Path(args.file).name} at {overrides}: {runs[0]['equations']} jaxpr equations, "
        f"{runs[0]['nodes']} IR nodes"
    )
    print(
        f"{'run':>4} {'import s':>9} {'capture+lower s':>16} {'analyse s':>10} "
        f"{'total s':>8} {'peak MB':>8}"
    )
    for i, r in enumerate(runs):
        print(
            f"{i:4d} {r['import']:9.2f} {r['capture_lower']:16.2f} {r['analyse']:10.2f} "
            f"{r['total']:8.2f} {r['peak_bytes'] / 1e6:8.0f}"
        )
    best = min(runs, key=lambda r: r["total"])
    print(
        f"best: {best['total']:.2f} s (target 20 s: {best['total'] / 20:.2f}x), peak "
        f"{best['peak_bytes'] / 1e6:.0f} MB (target 1,000 MB: {best['peak_bytes'] / 1e9:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
