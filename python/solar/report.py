"""Formatting for people: the terminal tables of `solar analyze` (the only place that
formats numbers for reading; the core returns exact values)."""

from __future__ import annotations


def si(value: float, unit: str, digits: int = 3) -> str:
    """83886080 FLOP -> '83.9 MFLOP'; 2033664 B -> '2.03 MB' (powers of 1000)."""
    prefixes = ["", "k", "M", "G", "T", "P", "E"]
    v = float(value)
    i = 0
    while abs(v) >= 1000 and i < len(prefixes) - 1:
        v /= 1000.0
        i += 1
    return f"{v:.{digits}g} {prefixes[i]}{unit}"


def seconds(value: float) -> str:
    """1.0115e-6 -> '1.01 µs'."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if abs(value) >= scale or unit == "ns":
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} s"


def rate(value: float, unit: str) -> str:
    return si(value, unit + "/s")


def table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    right = right or set()
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]

    def fmt(cells):
        out = []
        for i, c in enumerate(cells):
            out.append(c.rjust(widths[i]) if i in right else c.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = [fmt(headers), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


def bottleneck_text(b) -> str:
    if b.kind == "memory":
        return "Memory"
    return "Compute" + (f" ({b.unit})" if b.unit == "vector" else "")


def sol_table(graph, arch, analysis, validation: str = "none") -> str:
    """The paper's Figure 2d table for one architecture."""
    dims = " ".join(f"{k}={v}" for k, v in graph.dims)
    head = [
        f"SOL analysis of {graph.source} on {arch.name} ({arch.description})",
        f"  dims: {dims or '(none)'}",
        f"  math mode: {analysis.math_mode}; validation: {validation}",
        f"  peaks: matrix {rate(analysis.matrix_flops_per_second, 'FLOP')}, "
        f"vector {rate(analysis.vector_flops_per_second, 'FLOP')}, "
        f"DRAM {rate(analysis.dram_bytes_per_second, 'B')}",
    ]
    rows = []
    modes = [("Unfused", analysis.unfused), ("Fused", analysis.fused)]
    if analysis.cache_aware is not None:
        modes.append(("Cache-aware", analysis.cache_aware))
    for name, g in modes:
        rows.append(
            [
                name,
                si(g.flops, "FLOP"),
                si(g.bytes, "B"),
                seconds(g.seconds),
                bottleneck_text(g.bottleneck),
            ]
        )
    body = table(["Mode", "Compute", "Memory", "SOL", "Bottleneck"], rows, right={1, 2, 3})
    fb = analysis.unfused.seconds / analysis.fused.seconds if analysis.fused.seconds else 1.0
    tail = f"  fusion benefit (unfused / fused): {fb:.2f}x"
    tail += "\n" + cache_line(analysis)
    return "\n".join(head) + "\n\n" + body + "\n" + tail


def cache_line(analysis) -> str:
    """Which on-chip level the cache-aware row used, or why there is no such row."""
    c = analysis.cache
    if not c.available:
        return f"  cache-aware: none ({c.reason})"
    size = f"{si(c.capacity_bytes, 'B')} ({c.capacity_bytes:,.0f} B)"
    return f"  cache-aware: on-chip level {c.level}, {size}"


def node_table(graph, analysis) -> str:
    rows = []
    for node, sol in zip(graph.nodes, analysis.nodes, strict=True):
        rows.append(
            [
                node.name,
                node.einsum or "(data movement)",
                f"{node.macs:,}",
                f"{node.vector_flops:,}",
                f"{node.bytes:,}",
                seconds(sol.seconds),
                bottleneck_text(sol.bottleneck) if sol.seconds > 0 else "-",
            ]
        )
    return table(
        ["Node", "Einsum", "MACs", "Vector FLOPs", "Bytes", "SOL", "Bottleneck"],
        rows,
        right={2, 3, 4, 5},
    )


def cross_table(rows: list[tuple[str, object]]) -> str:
    """One line per architecture (when several are given)."""
    out = []
    for name, a in rows:
        fb = a.unfused.seconds / a.fused.seconds if a.fused.seconds else 1.0
        out.append(
            [
                name,
                seconds(a.unfused.seconds),
                bottleneck_text(a.unfused.bottleneck),
                seconds(a.fused.seconds),
                bottleneck_text(a.fused.bottleneck),
                f"{fb:.2f}x",
            ]
        )
    return table(
        ["Arch", "Unfused", "Bound", "Fused", "Bound", "Fusion benefit"], out, right={1, 3, 5}
    )
