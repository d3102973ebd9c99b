"""Cache-aware benchmark (issue 5): the tiling search over every einsum of the workloads/ suite.

Captures every PyTorch workload under workloads/ (torch.export, lowering to IR, tracing; not
timed, kept in memory), then times, in this one process:

- cold: with an empty memo, the least DRAM traffic of every einsum nest of every graph alone
  at the arch's cache capacity (`_core.cache_aware_einsum_bytes`); identical einsums
  (same ranks, sizes, projections, dtypes) are searched once;
- warm: the same again (every einsum a memo hit);
- graph-level: the cache-aware analysis of every graph (`_core.analyze`, which adds the
  proven bound and the best schedule found, over each graph and each node, to the unfused
  and fused modes), warm memo.

Prints the einsum count, the distinct signatures searched and the seconds. Target: cold
under 30 s on this machine.

    .venv/bin/python bench/bench_cache_aware.py [--arch H100_PCIe] [--limit N] [--ir-cache DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import solar
from solar import _core

ROOT = Path(__file__).resolve().parents[1]


def capture(path: Path, ir_cache: Path | None):
    """The workload's einsum graph; with `ir_cache`, its lowered IR is kept there and reused
    (torch.export is the slow part of capture)."""
    from solar.pytorch import lower_pytorch

    cached = (
        ir_cache / (str(path.relative_to(ROOT)).replace("/", "__") + ".ir.py") if ir_cache else None
    )
    if cached and cached.exists():
        text = cached.read_text()
    else:
        _, lowered = lower_pytorch(str(path), None)
        text = lowered.text
        if cached:
            cached.write_text(text)
    return _core.trace(_core.load_program_source(text, str(path) + ".ir.py"), [])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="H100_PCIe")
    ap.add_argument("--limit", type=int, default=0, help="only the first N workloads")
    ap.add_argument("--ir-cache", type=Path, help="keep and reuse the lowered IR in this folder")
    args = ap.parse_args()
    arch = solar.load_arch(args.arch)
    capacity = next(
        lvl["capacity_bytes"] for lvl in arch.on_chip if lvl["name"] == arch.cache_level
    )
    from solar.frontend.capture import is_pytorch_program

    # The PyTorch workloads (the numbers in bench/README.md); workloads/jax/ is not timed.
    files = sorted(f for f in (ROOT / "workloads").rglob("*.py") if is_pytorch_program(str(f)))
    if args.ir_cache:
        args.ir_cache.mkdir(parents=True, exist_ok=True)
    if args.limit:
        files = files[: args.limit]
    graphs, failed = [], []
    t0 = time.perf_counter()
    for i, f in enumerate(files):
        try:
            graphs.append((f, capture(f, args.ir_cache)))
        except Exception as e:  # a workload that does not capture is reported, not fatal
            failed.append((f, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))
        print(f"\rcaptured {i + 1}/{len(files)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    capture_s = time.perf_counter() - t0
    nests = sum(len(n.einsums) for _, g in graphs for n in g.nodes)

    session = _core.Session()
    t0 = time.perf_counter()
    total = 0
    slowest = []
    for f, g in graphs:
        t1 = time.perf_counter()
        count, traffic = _core.cache_aware_einsum_bytes(g, capacity, session)
        slowest.append((time.perf_counter() - t1, f.relative_to(ROOT)))
        total += traffic
    cold_s = time.perf_counter() - t0
    hits, misses = session.tiling_memo_stats

    t0 = time.perf_counter()
    for _, g in graphs:
        _core.cache_aware_einsum_bytes(g, capacity, session)
    warm_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    for _, g in graphs:
        _core.analyze(g, arch, "default", True, session)
    graph_s = time.perf_counter() - t0
    hits2, misses2 = session.tiling_memo_stats

    print(f"workloads captured: {len(graphs)} of {len(files)} ({capture_s:.1f} s, not timed)")
    for f, why in failed:
        print(f"  not captured: {f.relative_to(ROOT)}: {why}")
    print(f"einsum nests: {nests}; distinct signatures searched: {misses} (memo hits {hits})")
    print(f"sum of least DRAM bytes at {capacity:,.0f} B ({arch.cache_level}): {total:,}")
    print(f"cold (empty memo): {cold_s:.2f} s   target < 30 s: {'ok' if cold_s < 30 else 'MISSED'}")
    print(f"warm (all memo hits): {warm_s:.3f} s")
    print(
        f"graph-level analyze() of every graph, warm memo: {graph_s:.2f} s "
        f"({misses2 - misses} more searches: frontiers with tensors kept on chip)"
    )
    print("slowest workloads (cold):")
    for s, f in sorted(slowest, reverse=True)[:5]:
        print(f"  {s:7.3f} s  {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
