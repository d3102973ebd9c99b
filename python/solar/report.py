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
    if b.kind == "none":  # no work at all (the program returns views of its inputs)
        return "none"
    if b.kind == "memory":
        return "Memory"
    return "Compute" + (f" ({b.unit})" if b.unit == "vector" else "")


def fusion_benefit_text(analysis) -> str:
    """unfused / fused SOL as "1.23x"; "n/a" when the fused bound is 0 (no work at all)."""
    if not analysis.fused.seconds:
        return "n/a (no work)" if not analysis.unfused.seconds else "n/a"
    return f"{analysis.unfused.seconds / analysis.fused.seconds:.2f}x"


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
    tail = f"  fusion benefit (unfused / fused): {fusion_benefit_text(analysis)}"
    tail += "\n" + cache_line(analysis) + "\n" + starting_line(analysis)
    if analysis.quantization is not None:
        tail += "\n" + quantization_lines(graph, analysis.quantization)
    return "\n".join(head) + "\n\n" + body + "\n" + tail


# Quantised nodes listed by name before the rest are counted (--json lists each).
QUANTIZED_NODES_SHOWN = 6


def quantization_lines(graph, q) -> str:
    """What --quantize and --kv-cache changed (Analysis.quantization): the formats, the
    weights' and the cache's bytes before and after, each quantised node's operand bytes and
    matrix format, and what was left as written with why."""
    lines = []
    weight_changes = [c for c in q.changes if not c.cache]
    if q.recipe:
        contractions = len(weight_changes) + len(q.skipped)
        acts = f"; activations {q.activations}" if q.activations else "; activations as written"
        lines.append(
            f"  quantize {q.recipe}: {len(weight_changes)} of {contractions} contraction nodes "
            f"(weights {q.weights}{acts})"
        )
        if weight_changes:
            lines.append(
                f"    weights {si(q.weight_bytes_before, 'B')} -> "
                f"{si(q.weight_bytes_after, 'B')} ({q.weight_bytes_before:,} -> "
                f"{q.weight_bytes_after:,} B, codes and scales)"
            )
    if q.kv_cache:
        inputs = ", ".join(q.kv_inputs[:3]) + (
            f", ... ({len(q.kv_inputs)} inputs)" if len(q.kv_inputs) > 3 else ""
        )
        lines.append(
            f"  kv cache {q.kv_format} ({q.kv_cache}): "
            + (
                f"{inputs}; {si(q.kv_bytes_before, 'B')} -> {si(q.kv_bytes_after, 'B')} "
                f"({q.kv_bytes_before:,} -> {q.kv_bytes_after:,} B)"
                if q.kv_inputs
                else "no input is appended to and read only by products (no KV cache)"
            )
        )
        for why in q.kv_skipped[:3]:
            lines.append(f"    left as written: {why}")
    for c in q.changes[:QUANTIZED_NODES_SHOWN]:
        name = graph.nodes[c.node].name
        what = c.weight or c.cache
        if c.activation:
            by = "its prologue quantises it" if c.prologue else "quantised by its producer"
            what += f" and {c.activation} ({by})"
        lines.append(
            f"    {name}: {what}; operands {si(c.bytes_before, 'B')} -> "
            f"{si(c.bytes_after, 'B')}; MACs {c.matrix_before} -> {c.matrix_after}"
        )
    if len(q.changes) > QUANTIZED_NODES_SHOWN:
        lines.append(
            f"    ... and {len(q.changes) - QUANTIZED_NODES_SHOWN} more (--json lists each)"
        )
    reasons: dict[str, list[str]] = {}
    for k in q.skipped:
        reasons.setdefault(k.reason, []).append(graph.nodes[k.node].name)
    for reason, names in reasons.items():
        shown = ", ".join(names[:3]) + (f", ... ({len(names)} nodes)" if len(names) > 3 else "")
        lines.append(f"    left as written: {shown}: {reason}")
    return "\n".join(lines)


def starting_line(analysis) -> str:
    """Where the fused and cache-aware rows assume the data starts (docs/sol-modes.md,
    "Starting state"), and under --warm what the last-level cache serves instead of DRAM."""
    s = analysis.starting_state
    line = f"  starting state: {s.assumption}"
    if s.warm:
        served = [("fused", analysis.fused)]
        if analysis.cache_aware is not None:
            served.append(("cache-aware", analysis.cache_aware))
        line += (
            "; served by "
            + s.level
            + ": "
            + ", ".join(f"{name} {si(g.llc_bytes, 'B')} ({g.llc_bytes:,} B)" for name, g in served)
        )
    return line


def cache_line(analysis) -> str:
    """Which on-chip level the cache-aware row used, or why there is no such row, and the
    best schedule found beside the bound (achievable, not a bound)."""
    c = analysis.cache
    if not c.available:
        return f"  cache-aware: none ({c.reason})"
    size = f"{si(c.capacity_bytes, 'B')} ({c.capacity_bytes:,.0f} B)"
    line = f"  cache-aware: on-chip level {c.level}, {size}; the row is a proven lower bound"
    if c.bound_capacity_bytes != c.capacity_bytes:
        line += f" at all on-chip storage, {c.bound_capacity_bytes:,.0f} B"
    return line + "\n" + schedule_line(analysis)


def schedule_line(analysis) -> str:
    """'best schedule found: 1.07 GB (achievable, 1.00x the bound)'."""
    s = analysis.cache_schedule
    if s is None:
        return "  best schedule found: none (no tiling of some nest fits the capacity)"
    return (
        f"  best schedule found: {si(s.bytes, 'B')} ({s.bytes:,} B; achievable, "
        f"{schedule_gap(s.gap)} the bound)"
    )


def schedule_gap(gap: float) -> str:
    return f"{gap:.2f}x" if gap > 0 else "-"


def node_table(graph, analysis) -> str:
    """One row per node (each alone: its bytes and SOL); with a cache-aware mode also its
    bound alone ("Cache-aware B") and the best schedule found for it alone ("Schedule B",
    achievable). When the program groups nodes into source operators (`with unit(...)`), a
    Unit column names each node's unit: the unfused mode runs a unit as one, with its inner
    intermediates on chip."""
    cached = analysis.cache_aware is not None
    from .session import analysed_graph

    graph = analysed_graph(graph, analysis)
    block = {n: u.name for u in graph.units if u.declared for n in u.nodes}
    grouped = bool(block)
    rows = []
    for node, sol in zip(graph.nodes, analysis.nodes, strict=True):
        row = [node.name]
        if grouped:
            row.append(block.get(node.id, ""))
        row += [
            einsum_text(node),
            f"{node.macs:,}",
            f"{node.vector_flops:,}",
            f"{node.bytes:,}",
        ]
        if cached:
            sched = sol.cache_schedule_bytes
            row += [f"{sol.cache_aware_bytes:,}", "-" if sched is None else f"{sched:,}"]
        row += [
            seconds(sol.seconds),
            bottleneck_text(sol.bottleneck) if sol.seconds > 0 else "-",
        ]
        rows.append(row)
    head = ["Node", *(["Unit"] if grouped else []), "Einsum", "MACs", "Vector FLOPs", "Bytes"]
    head += ["Cache-aware B", "Schedule B"] if cached else []
    head += ["SOL", "Bottleneck"]
    first = 3 if grouped else 2
    return table(head, rows, right=set(range(first, len(head) - 1)))


def cross_table(rows: list[tuple[str, object]]) -> str:
    """One line per architecture (when several are given): the peaks each bound used, the
    unfused and fused SOL with their bottlenecks, and the fusion benefit (unfused / fused)."""
    out = []
    for name, a in rows:
        out.append(
            [
                name,
                rate(a.matrix_flops_per_second, "FLOP"),
                rate(a.vector_flops_per_second, "FLOP"),
                rate(a.dram_bytes_per_second, "B"),
                seconds(a.unfused.seconds),
                bottleneck_text(a.unfused.bottleneck),
                seconds(a.fused.seconds),
                bottleneck_text(a.fused.bottleneck),
                fusion_benefit_text(a),
            ]
        )
    return table(
        [
            "Arch",
            "Matrix peak",
            "Vector peak",
            "DRAM",
            "Unfused",
            "Bound",
            "Fused",
            "Bound",
            "Fusion benefit",
        ],
        out,
        right={1, 2, 3, 4, 6, 8},
    )


# --- inverse roofline, sweeps, chain reordering (solar inverse | sweep | chains) ----------


def factor(x: float) -> str:
    """6.4102 -> '6.41x'."""
    return f"{x:.3g}x"


def inverse_table(source: str, inv) -> str:
    """The paper's Table 4 for one architecture: one column per SOL mode."""
    t = inv.target
    head = [
        f"Inverse roofline of {source} on {inv.arch}: target {t.text} "
        f"({seconds(t.seconds)} per run, {si(t.hertz, 'Hz')})",
        f"  math mode: {inv.math_mode}",
        f"  platform: matrix {rate(inv.matrix_flops_per_second, 'FLOP')}, "
        f"vector {rate(inv.vector_flops_per_second, 'FLOP')}, "
        f"DRAM {rate(inv.dram_bytes_per_second, 'B')}",
    ]
    modes = list(inv.modes)

    def row(label, fn):
        return [label] + [fn(m) for m in modes]

    def need(value, unit, improvement):
        return f"{rate(value, unit)} ({factor(improvement)})"

    rows = [
        row("Compute", lambda m: si(m.flops, "FLOP")),
        row(
            "  matrix / vector",
            lambda m: f"{si(m.matrix_flops, 'FLOP')} / {si(m.vector_flops, 'FLOP')}",
        ),
        row("Data movement", lambda m: si(m.bytes, "B")),
        row("Intensity", lambda m: f"{m.flops / m.bytes:.3g} FLOP/B" if m.bytes else "-"),
        row("Bottleneck", lambda m: m.bottleneck.kind),
        row("SOL", lambda m: seconds(m.seconds)),
        row(
            "Attainable rate",
            lambda m: si(m.attainable_hertz, "Hz") if m.seconds > 0 else "unbounded (no work)",
        ),
        row(
            "Speedup required",
            lambda m: (
                f"met ({factor(m.speedup_required)})" if m.met else factor(m.speedup_required)
            ),
        ),
        row(
            "Π_min = FLOPs/T",
            lambda m: need(m.flops_per_second_min, "FLOP", m.compute_improvement),
        ),
        row(
            "  matrix FLOPs/T",
            lambda m: need(m.matrix_flops_per_second_min, "FLOP", m.matrix_improvement),
        ),
        row(
            "  vector FLOPs/T",
            lambda m: need(m.vector_flops_per_second_min, "FLOP", m.vector_improvement),
        ),
        row("β_min = bytes/T", lambda m: need(m.bytes_per_second_min, "B", m.dram_improvement)),
    ]
    headers = ["Metric"] + [m.mode.capitalize().replace("_", "-") for m in modes]
    body = table(headers, rows, right=set(range(1, len(headers))))
    tail = (
        "  (x): improvement over the platform needed to meet the target (below 1x: it already\n"
        "  suffices). Π: over the headline matrix peak; matrix, vector: over each MAC's and the\n"
        "  vector peak; β: over DRAM bandwidth."
    )
    return "\n".join(head) + "\n\n" + body + "\n" + tail


def sweep_table(points: list[dict], changes: list[dict]) -> str:
    """One row per (configuration, arch); regime changes called out under the table."""
    swept = []
    for p in points:
        for name in [p["axis"]] if p["axis"] else list(p["dims"]):
            if name not in swept:
                swept.append(name)
    archs = list(dict.fromkeys(p["arch"] for p in points))
    rows = []
    for p in points:
        dims = " ".join(f"{k}={p['dims'][k]}" for k in swept if k in p["dims"])
        rows.append(
            ([p["arch"]] if len(archs) > 1 else [])
            + [
                p["axis"] or "grid",
                dims,
                si(p["flops"], "FLOP"),
                si(p["bytes"]["unfused"], "B"),
                si(p["bytes"]["fused"], "B"),
                seconds(p["seconds"]["unfused"]),
                seconds(p["seconds"]["fused"]),
                f"{p['bottleneck']['unfused'][0].upper()}/{p['bottleneck']['fused'][0].upper()}",
            ]
        )
    headers = (["Arch"] if len(archs) > 1 else []) + [
        "Axis",
        "Dims",
        "FLOPs",
        "Unfused B",
        "Fused B",
        "Unfused SOL",
        "Fused SOL",
        "Bound U/F",
    ]
    first = 1 if len(archs) > 1 else 0
    lines = [table(headers, rows, right=set(range(first + 2, first + 7)))]
    legend = "  Bound U/F: unfused / fused bottleneck, C = compute, M = memory"
    if any("none" in p["bottleneck"].values() for p in points):
        legend += ", N = none (no work)"
    lines.append(legend)
    if not changes:
        lines.append("  no regime change: each axis keeps its bottleneck")
    for c in changes:
        others = " ".join(f"{k}={v}" for k, v in c["others"].items() if k in swept)
        lines.append(
            f"  regime change ({c['mode']}, {c['arch']}): {c['axis']} "
            f"{c['before']['value']} -> {c['after']['value']}: "
            f"{c['before']['bottleneck']} -> {c['after']['bottleneck']}"
            + (f" (at {others})" if others else "")
        )
    return "\n".join(lines)


def chains_table(source: str, chains: list) -> str:
    """Every chain with each association order's cost; best and worst called out."""
    if not chains:
        return (
            f"{source}: no chains (no nest multiplies three or more tensors, and no "
            "contraction's output is read only by another contraction)"
        )
    out = [f"Chain reordering of {source}: {len(chains)} chain(s)"]
    for i, c in enumerate(chains, 1):
        sizes = " ".join(f"{k}={v}" for k, v in c.rank_sizes.items())
        names = ", ".join(c.nodes[:4]) + (
            f", ... ({len(c.nodes)} in all)" if len(c.nodes) > 4 else ""
        )
        out.append("")
        out.append(
            f"{i}. {c.einsum} ({'one nest' if c.kind == 'nest' else 'contraction nodes'}: {names})"
        )
        out.append(
            "   operands: "
            + ", ".join(f"{t.name}[{','.join(t.ranks)}]" for t in c.operands)
            + f"; sizes: {sizes}"
        )
        rows = []
        for k, o in enumerate(c.orders):
            marks = []
            if k == c.left_to_right:
                marks.append("left to right")
            if k == c.as_written:
                marks.append("as written")
            if k == c.best:
                marks.append("best")
            if k == c.worst and c.worst != c.best:
                marks.append("worst")
            rows.append(
                [
                    o.expression,
                    f"{o.macs:,}",
                    si(o.flops, "FLOP"),
                    si(o.bytes, "B"),
                    ", ".join(marks),
                ]
            )
        if c.kind == "nest":
            d = c.direct
            rows.append(
                ["(as written: one nest)", f"{d.macs:,}", si(d.flops, "FLOP"), si(d.bytes, "B"), ""]
            )
        body = table(["Order", "MACs", "FLOPs", "Bytes", ""], rows, right={1, 2, 3})
        out += ["   " + line for line in body.splitlines()]
        lr, best, worst = c.orders[c.left_to_right], c.orders[c.best], c.orders[c.worst]
        gain = lr.flops / best.flops if best.flops else 1.0
        spread = worst.flops / best.flops if best.flops else 1.0
        out.append(
            f"   best vs left to right: {factor(gain)} fewer FLOPs; "
            f"range (worst / best): {factor(spread)}"
        )
    return "\n".join(out)


def rate_line(finished: int, seconds: float, left: int) -> str:
    """`2.4/min, about 12 min left`: the pace of the entries finished since the run began
    and the time the `left` ones take at that pace."""
    per_minute = finished / max(seconds, 1e-9) * 60
    if not left:
        return f"{per_minute:.1f}/min, done"
    remaining = left / per_minute  # minutes
    when = (
        "under a minute"
        if remaining < 1
        else f"about {remaining:.0f} min"
        if remaining < 90
        else f"about {remaining / 60:.1f} h"
    )
    return f"{per_minute:.1f}/min, {when} left"


def einsum_text(node) -> str:
    """A node's einsum column: its einsum string, or for a builtin what it does: "(fft)",
    the builtin that computes (docs/ir.md, fft), or "(data movement)"."""
    if node.einsum:
        return node.einsum
    return "(fft)" if node.op == "fft" else "(data movement)"
