"""Pipeline benchmark: parse -> check -> trace -> lift -> the default analysis (every mode:
unfused, fused, the cache-aware bound and best schedule), and the same without the
cache-aware mode.

Generates transformer programs of 5k-40k nodes in two styles (bench/gen_program.py), then for
each program, side by side in one run:

- C++: bench_pipeline (Google Benchmark), steady-state time per pipeline run with every mode
  and without the cache-aware mode ("no cache"), and the process's first run with every mode
  ("first": what one `solar analyze` pays), one process per program so that each peak RSS
  and first run is its own; and two stages alone, trace (and lift, then destroy the graph)
  and the analysis with every mode on a graph traced once, to show which grows;
- Python: solar.trace + solar.analyze through the binding, first (cold) run and best of 5,
  in a fresh process, with its peak RSS.

Prints one table with ns per node and the growth of ns/node against the smallest program
(linear scaling = 1.00x). The C++ runs interleave the sizes over `--rounds` rounds (5k, 20k,
40k, 5k, 20k, 40k, ...) and keep each size's fastest round, so that a change in the machine's
load during the run hits every size alike instead of skewing the growth (this VM's timings
move by 30% between minutes). Targets (issues 2 and 10): < 100 ms for 20k nodes with every mode,
growth within 10% from 5k to 40k, peak memory < 500 MB.

    .venv/bin/python bench/run_bench.py [--sizes 5000,10000,20000,40000] [--styles flat,loop]
                                        [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH_BIN = ROOT / "build" / "cpp" / "bench" / "bench_pipeline"
OUT_DIR = ROOT / "build" / "bench"

PY_TIMER = r"""
import resource, sys, time
import solar
path = sys.argv[1]
arch = solar.load_arch("H100_PCIe")
times = []
for _ in range(6):
    t0 = time.perf_counter()
    g = solar.trace(path)
    a = solar.analyze(g, arch)
    times.append(time.perf_counter() - t0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(len(g.nodes), times[0], min(times[1:]), peak)
"""


def generate(style: str, nodes: int) -> Path:
    path = OUT_DIR / f"{style}_{nodes}.py"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "gen_program.py"),
            "--nodes",
            str(nodes),
            "--out",
            str(path),
            "--style",
            style,
        ],
        check=True,
        capture_output=True,
    )
    return path


def run_cpp(path: Path) -> dict:
    out = subprocess.run(
        [
            str(BENCH_BIN),
            str(path),
            "--benchmark_filter=pipeline|first_run|analysis|trace_lift",
            "--benchmark_format=json",
            "--benchmark_repetitions=3",
            "--benchmark_report_aggregates_only=true",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    rows = json.loads(out)["benchmarks"]

    def median(prefix: str) -> dict:
        return next(
            r
            for r in rows
            if r.get("aggregate_name") == "median" and r["name"].startswith(prefix + "/")
        )

    full, plain = median("pipeline"), median("pipeline_no_cache")
    first = next(r for r in rows if r["name"].startswith("first_run/"))
    return {
        "analysis_ms": median("analysis")["real_time"],
        "trace_ms": median("trace_lift")["real_time"],
        "first_ms": first["real_time"],
        "ms": full["real_time"],
        "cpu_ms": full["cpu_time"],
        "no_cache_ms": plain["real_time"],
        "no_cache_cpu_ms": plain["cpu_time"],
        "nodes": int(full["nodes"]),
        "peak_mb": full["peak_rss_MB"],
    }


def run_python(path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PY_TIMER, str(path)], check=True, capture_output=True, text=True
    ).stdout.split()
    return {
        "nodes": int(out[0]),
        "cold_ms": float(out[1]) * 1e3,
        "ms": float(out[2]) * 1e3,
        "peak_mb": float(out[3]),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="5000,10000,20000,40000")
    p.add_argument("--styles", default="flat,loop")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the C++ runs")
    a = p.parse_args()
    if not BENCH_BIN.exists():
        sys.exit(f"{BENCH_BIN} not found: run `make build` first")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in a.sizes.split(",")]
    header = (
        f"{'style':5s} {'nodes':>6s} | {'C++ ms':>7s} {'cpu':>6s} {'ns/node':>8s} {'growth':>7s} "
        f"{'no cache':>8s} {'cpu':>6s} {'growth':>7s} {'first':>7s} {'growth':>7s} "
        f"{'trace':>7s} {'analyse':>7s} "
        f"{'peak MB':>8s} | {'Py ms':>7s} "
        f"{'Py cold':>8s} {'Py/C++':>7s} {'peak MB':>8s}"
    )
    print(header)
    print("-" * len(header))
    for style in a.styles.split(","):
        base = base_plain = base_first = base_analysis = base_trace = None
        keys = ("first_ms", "ms", "cpu_ms", "no_cache_ms", "no_cache_cpu_ms", "analysis_ms")
        keys += ("trace_ms",)
        paths = [generate(style, n) for n in sizes]
        best: list[dict] = [{} for _ in sizes]
        for _ in range(max(1, a.rounds)):
            for i, path in enumerate(paths):
                r = run_cpp(path)
                for key in keys:
                    best[i][key] = min(best[i].get(key, float("inf")), r[key])
                best[i]["nodes"] = r["nodes"]
                best[i]["peak_mb"] = max(best[i].get("peak_mb", 0.0), r["peak_mb"])
        for path, cpp in zip(paths, best, strict=True):
            py = run_python(path)
            per_node = cpp["ms"] * 1e6 / cpp["nodes"]
            plain = cpp["no_cache_ms"] * 1e6 / cpp["nodes"]
            first = cpp["first_ms"] * 1e6 / cpp["nodes"]
            analysis = cpp["analysis_ms"] * 1e6 / cpp["nodes"]
            trace = cpp["trace_ms"] * 1e6 / cpp["nodes"]
            base = base or per_node
            base_plain = base_plain or plain
            base_first = base_first or first
            base_analysis = base_analysis or analysis
            base_trace = base_trace or trace
            print(
                f"{style:5s} {cpp['nodes']:6d} | {cpp['ms']:7.1f} {cpp['cpu_ms']:6.1f} "
                f"{per_node:8.0f} {per_node / base:6.2f}x {cpp['no_cache_ms']:8.1f} "
                f"{cpp['no_cache_cpu_ms']:6.1f} {plain / base_plain:6.2f}x "
                f"{cpp['first_ms']:7.1f} {first / base_first:6.2f}x "
                f"{trace / base_trace:6.2f}x {analysis / base_analysis:6.2f}x "
                f"{cpp['peak_mb']:8.1f} | {py['ms']:7.1f} {py['cold_ms']:8.1f} "
                f"{py['ms'] / cpp['ms']:6.2f}x {py['peak_mb']:8.1f}"
            )
    print("\nC++ ms: every mode (the default analysis), wall time (cpu: process CPU time, less")
    print("sensitive to other load), the fastest of the rounds (each round a median of 3);")
    print("no cache: the same without the cache-aware mode; first: the process's first run")
    print("(every mode, caches and heap cold, no tiling search remembered: one `solar analyze`)")
    print("growth: ns/node relative to the smallest program of the style (1.00x = linear);")
    print("trace, analyse: the growth of the stages alone (trace and lift, then destroy the")
    print("graph; the analysis with every mode on a graph traced once)")


if __name__ == "__main__":
    main()
