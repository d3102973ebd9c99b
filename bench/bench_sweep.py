"""Sweep benchmark: 1,000 configurations of an IR transformer block (a 10 x 10 x 10 grid of
B x S x D over examples/ir/transformer_block.py) traced and analysed through the core's sweep
entry point (solar::sweep, bound as solar._core.sweep), the program parsed and checked once.
Target (issue 5): under 1 s in all. Prints the total, the time per configuration and the
best of --repeat runs; also the time through the Python API (solar.sweep, which adds the
conversion to dicts).

    .venv/bin/python bench/bench_sweep.py [--arch Jetson_Thor] [--repeat 5]
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import solar
from solar import _core

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "examples" / "ir" / "transformer_block.py"
AXES = {
    "B": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    "S": [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536],
    "D": [256, 512, 768, 1024, 1536, 2048, 2560, 3072, 4096, 5120],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="Jetson_Thor")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    program = solar.check(PROGRAM)
    arch = solar.load_arch(args.arch)
    names = list(AXES)
    configs = [list(zip(names, combo, strict=True)) for combo in itertools.product(*AXES.values())]
    nodes = len(solar.trace(program).nodes)

    core = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        points = _core.sweep(program, configs, [arch])
        core.append(time.perf_counter() - t0)
    assert len(points) == len(configs)

    api = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        rows = solar.sweep(program, AXES, arch=arch, grid=True)
        api.append(time.perf_counter() - t0)
    assert len(rows) == len(configs)

    n = len(configs)
    print(f"sweep of {PROGRAM.relative_to(ROOT)} ({nodes} graph nodes) on {args.arch}")
    print(
        f"  configurations: {n} (B x S x D grid, {' x '.join(str(len(v)) for v in AXES.values())})"
    )
    for label, times in (("core  (_core.sweep)", core), ("API   (solar.sweep)", api)):
        best = min(times)
        print(
            f"  {label}: best {best:.3f} s, median {sorted(times)[len(times) // 2]:.3f} s "
            f"of {len(times)}; {best / n * 1e6:.0f} us per configuration"
        )
    verdict = "meets" if min(core) < 1.0 else "MISSES"
    print(f"  target < 1 s for 1,000 configurations: {verdict} ({min(core):.3f} s)")


if __name__ == "__main__":
    main()
