"""Solar's counts against XLA's own cost analysis, on every JAX workload (docs/jax.md,
"Cross-check with XLA").

For each program: Solar's matrix and vector FLOPs and its fused and unfused bytes (captured
and lowered, no validation), and `jax.jit(fn).lower(params, *inputs).compile()
.cost_analysis()` of the same function on this machine's backend (the CPU here): its
`flops`, `transcendentals` and `bytes accessed`. Prints one row per program and the ratios,
then the geometric means.

    .venv/bin/python bench/jax_cost_analysis.py [PATHS...]   (default: workloads/jax)
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def xla_costs(capture) -> dict:
    import jax
    from solar.frontend.jax.capture import abstract_arguments

    params, inputs = abstract_arguments(capture.program, capture.source)
    compiled = jax.jit(capture.program.fn).lower(params, *inputs).compile()
    cost = compiled.cost_analysis()
    if isinstance(cost, list):  # older JAX: one dict per computation
        cost = cost[0] if cost else {}
    return {
        "flops": float(cost.get("flops", 0.0)),
        "transcendentals": float(cost.get("transcendentals", 0.0)),
        "bytes": float(cost.get("bytes accessed", 0.0)),
    }


def solar_costs(path: str) -> tuple[dict, object]:
    from solar import _core, load_arch
    from solar.frontend.validation import load_lowered
    from solar.jax import lower_jax

    capture, lowered = lower_jax(path)
    graph = _core.trace(load_lowered(lowered), [])
    a = _core.analyze(graph, load_arch("H100_PCIe"), "default", False)
    return {
        "matrix": a.fused.matrix_flops,
        "vector": a.fused.vector_flops,
        "fused": a.fused.bytes,
        "unfused": a.unfused.bytes,
    }, capture


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv] or [ROOT / "workloads" / "jax"]
    files = sorted(f for p in paths for f in ([p] if p.is_file() else p.rglob("*.py")))
    header = (
        f"{'program':44} {'solar FLOP':>12} {'xla FLOP':>12} {'ratio':>6} "
        f"{'xla transc.':>11} {'fused B':>11} {'xla B':>11} {'unfused B':>11} {'xla/fused':>9}"
    )
    print(header)
    flop_ratios, byte_ratios = [], []
    for f in files:
        name = str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else str(f)
        start = time.perf_counter()
        try:
            s, capture = solar_costs(str(f))
            x = xla_costs(capture)
        except Exception as e:  # a row per program, whatever fails
            print(f"{name[-44:]:44} error: {type(e).__name__}: {str(e).splitlines()[0][:80]}")
            continue
        total = s["matrix"] + s["vector"]
        fr = x["flops"] / total if total else float("nan")
        br = x["bytes"] / s["fused"] if s["fused"] else float("nan")
        if total and x["flops"]:
            flop_ratios.append(fr)
        if s["fused"] and x["bytes"]:
            byte_ratios.append(br)
        print(
            f"{name[-44:]:44} {total:12.4g} {x['flops']:12.4g} {fr:6.2f} "
            f"{x['transcendentals']:11.4g} {s['fused']:11.4g} {x['bytes']:11.4g} "
            f"{s['unfused']:11.4g} {br:9.2f}  ({time.perf_counter() - start:.1f} s)"
        )

    def geomean(v):
        return math.exp(sum(math.log(r) for r in v) / len(v)) if v else float("nan")

    print(
        f"\n{len(files)} programs; geometric mean XLA/Solar FLOPs {geomean(flop_ratios):.3f} "
        f"({len(flop_ratios)} programs), XLA bytes accessed / Solar fused bytes "
        f"{geomean(byte_ratios):.3f} ({len(byte_ratios)} programs)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
