"""Two builds side by side in one run (issue 15: a refactor is no slower): the 40,000-node
pipeline benchmark and the executor benchmark, of this tree and of another checkout.

    git worktree add /tmp/old REV
    cmake -S /tmp/old -B /tmp/old/build -G Ninja -DSOLAR_BUILD_BENCH=ON \\
        -DPython_EXECUTABLE=$PWD/.venv/bin/python && ninja -C /tmp/old/build _core bench_pipeline
    .venv/bin/python bench/compare_builds.py /tmp/old [--rounds 3] [--no-exec]

Pipeline: both builds' `bench_pipeline` (Google Benchmark, median of 3 each) on the same
generated programs (flat and loop styles, 40,000 nodes), alternating old and new `--rounds`
times, so that a change in machine load hits both alike; it prints the median wall and CPU
milliseconds of each and new/old. Executor: `bench/bench_exec.py --json` of each tree (the old
one importing its own python/ with its extension module copied in, the editable install's
import finder taken out), alternating
`--exec-rounds` times (default 1: a run takes about 3 minutes), and the new/old ratio of the
geometric mean over ops of Solar's native time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pipeline_ms(binary: Path, program: Path) -> tuple[float, float]:
    """(wall ms, CPU ms) of the whole pipeline with every mode: the median of 3 runs."""
    out = subprocess.run(
        [
            str(binary),
            str(program),
            "--benchmark_filter=^pipeline/",
            "--benchmark_format=json",
            "--benchmark_repetitions=3",
            "--benchmark_report_aggregates_only=true",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    row = next(r for r in json.loads(out)["benchmarks"] if r.get("aggregate_name") == "median")
    return row["real_time"], row["cpu_time"]


def old_python(old: Path) -> dict:
    """An environment that imports the old tree's solar package (its python/, which finds its
    include/ and configs/ beside it) with its own extension module, copied into it."""
    for so in (old / "build").glob("_core*.so"):
        shutil.copy(so, old / "python" / "solar" / so.name)
    return {**os.environ, "SOLAR_PACKAGE_DIR": str(old / "python")}


# Runs a script with `solar` imported from $SOLAR_PACKAGE_DIR when it is set: the editable
# install's import finder (which would always give this tree's package) is taken out first.
LAUNCHER = r"""
import os, runpy, sys
pkg = os.environ.get("SOLAR_PACKAGE_DIR")
if pkg:
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
    sys.path.insert(0, pkg)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def exec_geomean(tree: Path, env: dict, out: Path, quick: bool) -> float:
    """Geometric mean over ops of the native backend's seconds in one bench_exec run."""
    cmd = [sys.executable, "-c", LAUNCHER, str(tree / "bench" / "bench_exec.py")]
    cmd += ["--json", str(out)]
    subprocess.run(cmd + (["--quick"] if quick else []), check=True, env=env, capture_output=True)
    rows = json.loads(out.read_text())["rows"]
    times = [r["solar_ms"] / 1e3 for r in rows]
    return math.exp(sum(math.log(t) for t in times) / len(times))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old", help="the other checkout, built as above")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--nodes", type=int, default=40000)
    p.add_argument("--exec-rounds", type=int, default=1, help="executor runs of each build")
    p.add_argument("--no-exec", dest="exec", action="store_false", help="skip the executor")
    p.add_argument("--quick", action="store_true", help="bench_exec --quick (a smoke test)")
    args = p.parse_args(argv)
    old = Path(args.old).resolve()
    builds = {"old": old / "build" / "bench" / "bench_pipeline"}
    builds["new"] = ROOT / "build" / "cpp" / "bench" / "bench_pipeline"
    for name, binary in builds.items():
        if not binary.exists():
            sys.exit(f"{binary} not found: build the {name} tree first (see the docstring)")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        print(f"pipeline, {args.nodes} nodes, {args.rounds} rounds (median of 3 each)")
        print(
            f"{'style':6s} {'old ms':>9s} {'new ms':>9s} {'new/old':>8s}   "
            f"{'old cpu':>9s} {'new cpu':>9s} {'new/old':>8s}"
        )
        for style in ("flat", "loop"):
            program = tmp / f"{style}.py"
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "bench" / "gen_program.py"),
                    "--nodes",
                    str(args.nodes),
                    "--out",
                    str(program),
                    "--style",
                    style,
                ],
                check=True,
                capture_output=True,
            )
            runs = {"old": [], "new": []}
            for _ in range(args.rounds):
                for name in ("old", "new"):
                    runs[name].append(pipeline_ms(builds[name], program))
            wall = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
            cpu = {k: statistics.median(c for _, c in v) for k, v in runs.items()}
            print(
                f"{style:6s} {wall['old']:9.1f} {wall['new']:9.1f} "
                f"{wall['new'] / wall['old']:7.3f}x   {cpu['old']:9.1f} {cpu['new']:9.1f} "
                f"{cpu['new'] / cpu['old']:7.3f}x",
                flush=True,
            )
        if args.exec:
            env_old = old_python(old)
            geo = {"old": [], "new": []}
            for r in range(args.exec_rounds):
                for name, tree, env in (("old", old, env_old), ("new", ROOT, dict(os.environ))):
                    geo[name].append(exec_geomean(tree, env, tmp / f"{name}{r}.json", args.quick))
            g = {k: statistics.median(v) for k, v in geo.items()}
            print(
                f"executor, native backend, geometric mean over ops: old {g['old'] * 1e3:.2f} "
                f"ms, new {g['new'] * 1e3:.2f} ms, new/old {g['new'] / g['old']:.3f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
