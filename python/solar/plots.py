"""Figures of a Solar analysis: roofline, cache-aware curve, sweep and headroom (docs/reports.md).

Each ``*_figure`` function returns a matplotlib ``Figure`` built without pyplot (so no
display and no global backend are involved); :func:`save` writes it as PNG or SVG and
:func:`svg_text` returns the SVG for inlining in the HTML report. The numbers each figure
draws come from a ``*_data`` function that returns plain dicts, so tests and other reports
can check or reuse them. matplotlib is imported lazily: the rest of solar does not need it
(install it with the ``plots`` extra).

Input shapes (plain data, produced by other stages):

- roofline: a graph, its arch specs and one ``_core.Analysis`` per arch;
- cache-aware curve: ``[{"capacity_bytes": int, "dram_bytes": int}, ...]`` (a Pareto
  frontier) and marks ``[{"level": "L2", "capacity_bytes": int, "arch": "H100_PCIe"}, ...]``;
- sweep: ``[{"dims": {...}, "arch": str, "flops": int, "bytes": {"unfused", "fused"},
  "seconds": {"unfused", "fused"}, "bottleneck": {"unfused", "fused"}}, ...]`` and the
  name of the swept dim;
- headroom: ``[{"name": str, "measured_seconds": {"eager": float, "compile": float|None},
  "sol_seconds": {"unfused": float, "fused": float}}, ...]``.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

from .errors import UserError, argument_error

# Colour per architecture (in the order given), then the warning colour of SOL violations.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
WARNING = "#d62728"
MODES = ("fused", "unfused")


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise argument_error(
            "plots need matplotlib, which is not installed",
            "install the plots extra: pip install 'solar-sol[plots]' (or matplotlib)",
        ) from None
    return Figure


def _new_figure(width: float = 9.0, height: float = 5.0):
    fig = _figure_class()(figsize=(width, height), dpi=100, layout="constrained")
    return fig, fig.add_subplot()


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _si(value: float, unit: str) -> str:
    from .report import si

    return si(value, unit)


# ---------------------------------------------------------------------------- roofline


def roofline_data(graph, arch, analysis) -> dict:
    """Roofs, ridge points and one point per node of one architecture.

    x of a node = its arithmetic intensity (FLOPs per unfused DRAM byte, from the core);
    y = FLOPs / its SOL seconds, the rate it attains when it runs at its bound. The matrix
    roof is min(matrix peak, beta * I), the vector roof min(vector peak, beta * I); the
    ridge points (the core's ``ridge_matrix`` and ``ridge_vector``) are peak / beta.
    Nodes without FLOPs or without bytes (views, copies) have no point; they are listed in
    ``skipped``.
    """
    from .session import analysed_graph

    points, skipped = [], []
    for node, sol in zip(analysed_graph(graph, analysis).nodes, analysis.nodes, strict=True):
        flops = node.total_flops
        if flops <= 0 or node.bytes <= 0 or sol.seconds <= 0:
            skipped.append(node.name)
            continue
        points.append(
            {
                "name": node.name,
                "op": node.op,
                "flops": flops,
                "bytes": node.bytes,
                "intensity": sol.intensity,
                "flops_per_second": flops / sol.seconds,
                "seconds": sol.seconds,
                "bottleneck": sol.bottleneck.kind,
                "unit": sol.bottleneck.unit,
            }
        )
    return {
        "arch": getattr(arch, "name", analysis.arch),
        "dram_bytes_per_second": analysis.dram_bytes_per_second,
        "matrix_flops_per_second": analysis.matrix_flops_per_second,
        "vector_flops_per_second": analysis.vector_flops_per_second,
        "ridge_matrix": analysis.ridge_matrix,
        "ridge_vector": analysis.ridge_vector,
        "math_mode": analysis.math_mode,
        "points": points,
        "skipped": skipped,
    }


def _roof(beta: float, peak: float, ridge: float, x_lo: float, x_hi: float):
    """Corner points of min(peak, beta * x) over [x_lo, x_hi] (exact at the ridge)."""
    xs = [x_lo] + ([ridge] if x_lo < ridge < x_hi else []) + [x_hi]
    return xs, [min(peak, beta * x) for x in xs]


def roofline_figure(graph, archs, analyses):
    """One roofline chart: for each arch its matrix roof (solid), vector roof (dashed),
    ridge points (dotted verticals) and its nodes as points (circle: compute-bound,
    triangle: memory-bound). Point groups carry the gid ``solar-roofline-points-<i>`` and
    their points follow ``roofline_data(...)["points"]`` order (the HTML report adds the
    node names as tooltips)."""
    data = [roofline_data(graph, a, r) for a, r in zip(archs, analyses, strict=True)]
    fig, ax = _new_figure()
    xs = [p["intensity"] for d in data for p in d["points"]]
    xs += [d["ridge_matrix"] for d in data if d["ridge_matrix"] > 0]
    xs += [d["ridge_vector"] for d in data if d["ridge_vector"] > 0]
    x_lo = min(xs) / 10 if xs else 0.1
    x_hi = max(xs) * 10 if xs else 1e4
    for i, d in enumerate(data):
        c = colour(i)
        beta = d["dram_bytes_per_second"]
        for kind, style in (("matrix", "-"), ("vector", "--")):
            peak, ridge = d[f"{kind}_flops_per_second"], d[f"ridge_{kind}"]
            if peak <= 0:
                continue
            rx, ry = _roof(beta, peak, ridge, x_lo, x_hi)
            (line,) = ax.plot(
                rx,
                ry,
                style,
                color=c,
                linewidth=2 if kind == "matrix" else 1.3,
                label=f"{d['arch']} {kind} roof ({_si(peak, 'FLOP/s')})",
            )
            line.set_gid(f"solar-roof-{kind}-{i}")
            ax.axvline(ridge, color=c, linestyle=":", linewidth=1)
            ax.annotate(
                f"ridge {ridge:.3g} FLOP/B",
                (ridge, peak),
                textcoords="offset points",
                xytext=(4, -12 if kind == "matrix" else 4),
                fontsize=8,
                color=c,
            )
        for kind, marker in (("compute", "o"), ("memory", "^")):
            pts = [p for p in d["points"] if p["bottleneck"] == kind]
            if not pts:
                continue
            sc = ax.scatter(
                [p["intensity"] for p in pts],
                [p["flops_per_second"] for p in pts],
                marker=marker,
                s=36,
                color=c,
                edgecolors="black",
                linewidths=0.5,
                zorder=3,
                label=f"{d['arch']} nodes, {kind}-bound",
            )
            sc.set_gid(f"solar-roofline-points-{i}-{kind}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_xlabel("arithmetic intensity (FLOP / DRAM byte, unfused)")
    ax.set_ylabel("attainable FLOP/s at the SOL (node FLOPs / node SOL)")
    ax.set_title("Roofline: every node at its speed-of-light bound")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return fig


# ------------------------------------------------------------------- cache-aware curve


def _require(items, keys: tuple[str, ...], what: str) -> list[dict]:
    items = list(items or [])
    if not items:
        raise argument_error(f"{what}: no data points")
    for i, item in enumerate(items):
        missing = [k for k in keys if k not in item]
        if missing:
            raise argument_error(f"{what}: entry {i} lacks {', '.join(missing)}")
    return items


def cache_curve_data(points, marks=()) -> dict:
    """The Pareto frontier sorted by capacity, and for each mark the DRAM traffic the
    frontier allows at that capacity: the least ``dram_bytes`` among points whose
    ``capacity_bytes`` fits (None when even the smallest point needs more capacity)."""
    pts = _require(points, ("capacity_bytes", "dram_bytes"), "cache-aware curve")
    for p in pts:
        if p["capacity_bytes"] <= 0 or p["dram_bytes"] <= 0:
            raise argument_error(
                f"cache-aware curve: capacity_bytes and dram_bytes must be positive, got {p}"
            )
    pts = sorted(pts, key=lambda p: (p["capacity_bytes"], p["dram_bytes"]))
    out_marks = []
    for m in marks or ():
        fits = [p["dram_bytes"] for p in pts if p["capacity_bytes"] <= m["capacity_bytes"]]
        out_marks.append({**m, "dram_bytes": min(fits) if fits else None})
    return {"points": pts, "marks": out_marks}


def cache_curve_figure(points, marks=(), title: str = ""):
    """DRAM traffic versus on-chip capacity as a step line (the frontier holds from each
    point's capacity up to the next), log-log; each mark is a vertical line at a platform's
    capacity, with the traffic at that capacity as a point."""
    d = cache_curve_data(points, marks)
    fig, ax = _new_figure(9.0, 4.5)
    xs = [p["capacity_bytes"] for p in d["points"]]
    ys = [p["dram_bytes"] for p in d["points"]]
    x_hi = max(xs + [m["capacity_bytes"] for m in d["marks"]]) * 2
    (line,) = ax.step(xs + [x_hi], ys + [ys[-1]], where="post", color=PALETTE[0], linewidth=2)
    line.set_gid("solar-cache-curve")
    ax.scatter(xs, ys, s=16, color=PALETTE[0], zorder=3, label="proven lower bound")
    sched = [(p["capacity_bytes"], p.get("schedule_bytes")) for p in d["points"]]
    sched = [(x, y) for x, y in sched if y]
    if sched:  # the best schedule found at each capacity: achievable, above the bound
        sx, sy = [x for x, _ in sched], [y for _, y in sched]
        (sline,) = ax.step(
            sx + [x_hi], sy + [sy[-1]], where="post", color=PALETTE[0], linestyle=":", linewidth=1.5
        )
        sline.set_gid("solar-cache-schedule")
        sline.set_label("best schedule found (achievable)")
    for i, m in enumerate(d["marks"]):
        c = colour(i + 1)
        name = f"{m.get('arch', '')} {m['level']}".strip()
        ax.axvline(m["capacity_bytes"], color=c, linestyle="--", linewidth=1.3)
        label = f"{name}: {_si(m['capacity_bytes'], 'B')}"
        if m["dram_bytes"] is not None:
            label += f" -> {_si(m['dram_bytes'], 'B')} DRAM"
            ax.scatter([m["capacity_bytes"]], [m["dram_bytes"]], s=60, color=c, zorder=4)
        ax.plot([], [], "--", color=c, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("on-chip buffer capacity (bytes)")
    ax.set_ylabel("minimum DRAM traffic (bytes)")
    ax.set_title(title or "Cache-aware bound: DRAM traffic vs on-chip capacity")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    return fig


# ------------------------------------------------------------------------------ sweep


def sweep_axis(sweep) -> str:
    """The dim a sweep varies: the only dim whose value differs between entries."""
    entries = _require(sweep, ("dims",), "sweep")
    names = sorted({k for e in entries for k in e["dims"]})
    varying = [n for n in names if len({e["dims"].get(n) for e in entries}) > 1]
    if len(varying) != 1:
        raise argument_error(
            f"sweep: cannot tell the swept dim ({', '.join(varying) or 'none'} vary)",
            "pass the axis name explicitly",
        )
    return varying[0]


def is_geometric(values) -> bool:
    """True for at least 3 distinct positive values whose consecutive ratios agree within
    1% (1, 2, 4, 8; 512, 1024, ..., 8192), or for any positive values spanning 100x."""
    v = sorted({float(x) for x in values})
    if not v or v[0] <= 0:
        return False
    if v[-1] / v[0] >= 100:
        return True
    if len(v) < 3:
        return False
    ratios = [b / a for a, b in zip(v, v[1:], strict=False)]
    return all(abs(r / ratios[0] - 1) < 0.01 for r in ratios) and ratios[0] > 1.01


def sweep_data(sweep, axis: str | None = None) -> dict:
    """Series per (arch, mode) sorted by the axis, and every regime change: where the
    bottleneck of a series differs from the previous point's."""
    entries = _require(sweep, ("dims", "arch", "seconds", "bottleneck"), "sweep")
    axis = axis or sweep_axis(entries)
    for e in entries:
        if axis not in e["dims"]:
            raise argument_error(f"sweep: an entry lacks the swept dim '{axis}': {e['dims']}")
    archs = list(dict.fromkeys(e["arch"] for e in entries))
    series, changes = [], []
    for arch in archs:
        rows = sorted((e for e in entries if e["arch"] == arch), key=lambda e: e["dims"][axis])
        for mode in MODES:
            pts = [
                {
                    "x": r["dims"][axis],
                    "seconds": r["seconds"][mode],
                    "bottleneck": r["bottleneck"][mode],
                }
                for r in rows
            ]
            series.append({"arch": arch, "mode": mode, "points": pts})
            for a, b in zip(pts, pts[1:], strict=False):
                if a["bottleneck"] != b["bottleneck"]:
                    changes.append(
                        {
                            "arch": arch,
                            "mode": mode,
                            "from": a["bottleneck"],
                            "to": b["bottleneck"],
                            "between": (a["x"], b["x"]),
                        }
                    )
    xs = [e["dims"][axis] for e in entries]
    return {
        "axis": axis,
        "archs": archs,
        "series": series,
        "changes": changes,
        "log_x": is_geometric(xs),
        "log_y": is_geometric([p["seconds"] for s in series for p in s["points"]]),
    }


def sweep_figure(sweep, axis: str | None = None):
    """SOL seconds versus the swept dim: per arch a solid line (fused) and a dashed line
    (unfused); each point's regime as its marker (filled circle C: compute-bound, open
    square M: memory-bound); each regime change as a dotted vertical between the two
    points with an arrow label 'memory -> compute'."""
    d = sweep_data(sweep, axis)
    fig, ax = _new_figure()
    for s in d["series"]:
        c = colour(d["archs"].index(s["arch"]))
        xs = [p["x"] for p in s["points"]]
        ys = [p["seconds"] for p in s["points"]]
        style = "-" if s["mode"] == "fused" else "--"
        (line,) = ax.plot(xs, ys, style, color=c, label=f"{s['arch']} {s['mode']}")
        line.set_gid(f"solar-sweep-{s['arch']}-{s['mode']}")
        for kind, marker, face in (("compute", "o", c), ("memory", "s", "white")):
            pts = [p for p in s["points"] if p["bottleneck"] == kind]
            ax.scatter(
                [p["x"] for p in pts],
                [p["seconds"] for p in pts],
                marker=marker,
                s=40,
                facecolors=face,
                edgecolors=c,
                linewidths=1.5,
                zorder=3,
            )
    for ch in d["changes"]:
        a, b = ch["between"]
        x = math.sqrt(a * b) if d["log_x"] else (a + b) / 2
        ax.axvline(x, color="grey", linestyle=":", linewidth=1)
        ax.annotate(
            f"{ch['arch']} {ch['mode']}: {ch['from']} -> {ch['to']}",
            (x, 0.97 - 0.06 * d["changes"].index(ch)),
            xycoords=("data", "axes fraction"),
            fontsize=8,
            ha="center",
            va="top",
            bbox={"boxstyle": "round", "fc": "#fff8dc", "ec": "grey"},
        )
    # Legend entries for the regime markers.
    ax.scatter([], [], marker="o", color="grey", label="C: compute-bound")
    ax.scatter([], [], marker="s", facecolors="white", edgecolors="grey", label="M: memory-bound")
    if d["log_x"]:
        ax.set_xscale("log", base=2)
    if d["log_y"]:
        ax.set_yscale("log")
    ax.set_xlabel(d["axis"])
    ax.set_ylabel("SOL (seconds)")
    ax.set_title(f"SOL versus {d['axis']}")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


# --------------------------------------------------------------------------- headroom


def headroom_data(headroom) -> list[dict]:
    """Per workload and measurement (eager, compile): measured seconds / fused SOL seconds.
    A ratio below 1 means the measurement beat the bound: a SOL violation."""
    rows = _require(headroom, ("name", "measured_seconds", "sol_seconds"), "headroom")
    out = []
    for r in rows:
        sol = r["sol_seconds"]["fused"]
        for kind in ("eager", "compile"):
            measured = r["measured_seconds"].get(kind)
            if measured is None:
                continue
            if sol <= 0 or measured <= 0:
                raise argument_error(
                    f"headroom of {r['name']}: seconds must be positive "
                    f"(measured {kind} {measured}, fused SOL {sol})"
                )
            ratio = measured / sol
            out.append(
                {
                    "name": r["name"],
                    "kind": kind,
                    "measured_seconds": measured,
                    "sol_seconds": sol,
                    "ratio": ratio,
                    "violation": ratio < 1.0,
                }
            )
    return out


def headroom_figure(headroom):
    """Bars of measured / fused SOL per workload (eager and torch.compile side by side) on
    a log scale, with a line at 1x; a bar below it (a SOL violation) is drawn in red."""
    d = headroom_data(headroom)
    names = list(dict.fromkeys(r["name"] for r in d))
    fig, ax = _new_figure(max(6.0, 1.0 + 0.7 * len(names)), 4.5)
    width = 0.38
    for j, (kind, c) in enumerate((("eager", PALETTE[0]), ("compile", PALETTE[1]))):
        rows = [r for r in d if r["kind"] == kind]
        if not rows:
            continue
        xs = [names.index(r["name"]) + (j - 0.5) * width for r in rows]
        bars = ax.bar(
            xs,
            [r["ratio"] for r in rows],
            width=width,
            bottom=None,
            color=[WARNING if r["violation"] else c for r in rows],
            edgecolor="black",
            linewidth=0.5,
            label=f"{kind} / fused SOL",
        )
        for bar, r in zip(bars, rows, strict=True):
            bar.set_gid(f"solar-headroom-{kind}-{names.index(r['name'])}")
        for x, r in zip(xs, rows, strict=True):
            ax.annotate(
                f"{r['ratio']:.3g}x",
                (x, r["ratio"]),
                textcoords="offset points",
                xytext=(0, 2 if r["ratio"] >= 1 else -10),
                ha="center",
                fontsize=7,
            )
    ax.axhline(1.0, color=WARNING, linewidth=1.2, label="1x: the bound (below = SOL violation)")
    ax.set_yscale("log")
    ratios = [r["ratio"] for r in d]
    ax.set_ylim(min(ratios + [1.0]) / 2, max(ratios + [1.0]) * 2)
    ax.set_xticks(range(len(names)), names, rotation=30 if len(names) > 4 else 0, ha="right")
    ax.set_ylabel("headroom: measured / fused SOL")
    ax.set_title("Headroom over the fused SOL")
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


# ---------------------------------------------------------------------------- output


def cache_marks(archs) -> list[dict]:
    """One mark per arch: the on-chip level its spec names for the cache-aware mode."""
    marks = []
    for a in archs:
        levels = {lv["name"]: lv for lv in a.on_chip}
        level = levels.get(a.cache_level) or (a.on_chip[0] if a.on_chip else None)
        if level:
            marks.append(
                {
                    "level": level["name"],
                    "capacity_bytes": int(level["capacity_bytes"]),
                    "arch": a.name,
                }
            )
    return marks


def normalise_curve(curve, archs) -> tuple[list, list]:
    """``curve`` as the points list alone (marks from the archs' specs) or as a dict
    ``{"points": [...], "marks": [...]}`` / ``{"points": [...], "mark": {...}}``."""
    if isinstance(curve, dict):
        marks = curve.get("marks") or ([curve["mark"]] if curve.get("mark") else None)
        return curve.get("points", []), marks if marks is not None else cache_marks(archs)
    return list(curve), cache_marks(archs)


def normalise_sweep(sweep) -> tuple[list, str | None]:
    """``sweep`` as the entries list (axis inferred) or ``{"axis": "B", "points": [...]}``."""
    if isinstance(sweep, dict):
        return sweep.get("points", []), sweep.get("axis")
    return list(sweep), None


def split_sweeps(sweep) -> list[tuple[list, str | None]]:
    """One (entries, axis) per swept axis. ``sweep`` is one sweep (as normalise_sweep takes)
    or the points of `solar.sweep` over several axes (each point's ``axis`` names the dim it
    varies; grid points, with ``axis`` None, are plotted only when one dim varies)."""
    if isinstance(sweep, dict):
        return [normalise_sweep(sweep)]
    entries = list(sweep)
    if entries and all(isinstance(e, dict) and "points" in e for e in entries):
        return [normalise_sweep(e) for e in entries]
    groups: dict = {}
    for e in entries:
        groups.setdefault(e.get("axis") if isinstance(e, dict) else None, []).append(e)
    out = []
    for axis, group in groups.items():
        if axis is None:
            try:
                axis = sweep_axis(group)
            except UserError:
                continue  # a grid over several dims: no single axis to plot against
        out.append((group, axis))
    return out


def report_figures(graph, archs, analyses, curve=None, sweep=None, headroom=None) -> dict:
    """name -> Figure for every plot whose data is given (the roofline always); sweeps over
    several axes give "sweep", "sweep_2", ..."""
    figs = {"roofline": roofline_figure(graph, archs, analyses)}
    if headroom:
        figs["headroom"] = headroom_figure(headroom)
    if curve:
        points, marks = normalise_curve(curve, archs)
        figs["cache_curve"] = cache_curve_figure(points, marks)
    if sweep:
        for i, (entries, axis) in enumerate(split_sweeps(sweep)):
            figs["sweep" if i == 0 else f"sweep_{i + 1}"] = sweep_figure(entries, axis)
    return figs


def save_all(figures: dict, directory, fmt: str = "png") -> list[Path]:
    """Writes each figure of ``report_figures`` as DIRECTORY/<name>.<fmt> (creating the
    directory); returns the paths in the dict's order."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise argument_error(f"--png {directory}: exists and is not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    return [save(fig, directory / f"{name}.{fmt}") for name, fig in figures.items()]


_SVG_META = {"Creator": None, "Date": None, "Format": None, "Type": None}


def save(fig, path) -> Path:
    """Writes a figure; the format follows the suffix (.png or .svg)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in ("png", "svg"):
        raise argument_error(f"{path}: plots are written as .png or .svg")
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "solar"}):
        fig.savefig(path, format=fmt, metadata=_SVG_META if fmt == "svg" else None)
    return path


def svg_text(fig, id_prefix: str) -> str:
    """The figure as an ``<svg>`` element for inlining in HTML: no XML prolog, DOCTYPE,
    metadata or namespace declarations (so the text names no URL), and every id made
    unique in the page with ``id_prefix`` (gids starting with ``solar-`` are kept)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "solar"}):
        fig.savefig(buf, format="svg", metadata=_SVG_META)
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text, count=0)
    ids = set(re.findall(r'\bid="([^"]+)"', text)) - {
        i for i in re.findall(r'\bid="(solar-[^"]+)"', text)
    }
    if ids:
        pattern = re.compile(r'(\bid="|#)(' + "|".join(map(re.escape, sorted(ids))) + r')(?=["\)])')
        text = pattern.sub(lambda m: f"{m.group(1)}{id_prefix}{m.group(2)}", text)
    return text


def add_titles(svg: str, gid: str, titles: list[str]) -> str:
    """Gives the i-th mark (path or use element) of group ``gid`` the tooltip titles[i];
    leaves the SVG unchanged when the group is missing or its mark count differs."""
    import html

    start = svg.find(f'<g id="{gid}"')
    if start < 0:
        return svg
    depth, pos = 0, start
    for m in re.finditer(r"<g\b|</g>", svg[start:]):
        depth += 1 if m.group() == "<g" else -1
        if depth == 0:
            pos = start + m.end()
            break
    group = svg[start:pos]
    body = re.sub(r"<defs>.*?</defs>", lambda m: "\0" * len(m.group()), group, flags=re.S)
    marks = list(re.finditer(r"<(path|use)\b([^>]*?)/>", body))
    if len(marks) != len(titles):
        return svg
    out, last = [], 0
    for m, t in zip(marks, titles, strict=True):
        out.append(group[last : m.start()])
        out.append(f"<{m.group(1)}{m.group(2)}><title>{html.escape(t)}</title></{m.group(1)}>")
        last = m.end()
    out.append(group[last:])
    return svg[:start] + "".join(out) + svg[pos:]
