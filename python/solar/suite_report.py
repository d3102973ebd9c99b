"""`solar headroom`: a batch's bounds joined with runtimes the user already measured
(docs/reports.md, "Suite report").

Headroom is measured / bound. It is computed per workload, and per group as the geometric
mean. Every workload measured below its fused or cache-aware bound is a **violation**:
either the bound or the measurement is wrong. The unfused bound holds only for eager
execution, so a fused kernel under it is no violation. The HTML suite report draws three things:

- measured against bound on log axes, with the diagonal (the paper's Figure 1a);
- per-group geomean headroom over each fidelity: unfused, fused, cache-aware (Figures 3a
  and 4a);
- the violations and the tightest workloads.

Runtime files (`load_runtimes`) can be any of these:

- a CSV or JSON of name -> time (`seconds`, `ms`, `us` or `time` columns/keys, or a bare
  number of seconds);
- KernelBench's timing JSON `{level: {file: {mean, std, min, max}}}`, in milliseconds;
  the level is the group;
- PyTorch profiler traces (Chrome trace JSON): the GPU kernel time of one trace, the sum
  of its `kernel`-category events. A single file is named by its stem, and a directory
  holds one trace per workload;
- SOL-ExecBench's `metadata.json` (one problem), or a directory of problems each with one:
  the baseline NVIDIA measured per workload (`sol.per_workload[i].baseline_latency_ms`)
  named by the uuid of line i of the `workload.jsonl` beside it, grouped by `subset`, with
  NVIDIA's own bound (`sol_ms`) as a reference to compare the bounds with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from .errors import argument_error
from .json_input import loads
from .timings import match_source, named, read, time_of, timings_line

FIDELITIES = ("unfused", "fused", "cache_aware")
# The bounds every correct implementation must respect. The unfused bound holds only for
# eager execution (one kernel per source operator): a fused kernel may run under it.
BOUNDS = ("fused", "cache_aware")


@dataclass
class Runtime:
    seconds: float
    group: str = ""  # KernelBench's level, when the file says
    reference: float = 0.0  # another tool's bound for the workload (SOL-ExecBench's sol_ms), s


@dataclass
class Row:
    name: str
    group: str
    measured: float
    bounds: dict  # fidelity -> seconds
    reference: float = 0.0  # another tool's bound (s); 0: none given
    terms: dict = field(default_factory=dict)  # the fused bound's terms (fused_terms)
    warm: bool = False  # the bounds are --warm's (docs/sol-modes.md, "Starting state")

    def headroom(self, fidelity: str) -> float:
        b = self.bounds.get(fidelity, 0.0)
        return self.measured / b if b > 0 else math.inf

    def violation(self, fidelity: str = "fused") -> bool:
        """Measured under a bound every implementation must respect (fused, cache-aware)."""
        return fidelity in BOUNDS and self.measured < self.bounds.get(fidelity, 0.0)

    @property
    def violated(self) -> list[str]:
        return [f for f in BOUNDS if self.violation(f)]


def _trace_seconds(path: Path) -> float | None:
    """The GPU kernel time of a PyTorch profiler trace (Chrome trace JSON), or None."""
    try:
        data = loads(path.read_text(), str(path))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    events = data.get("traceEvents") if isinstance(data, dict) else None
    if not isinstance(events, list):
        return None
    kernels = [
        e
        for e in events
        if isinstance(e, dict) and e.get("ph") == "X" and str(e.get("cat", "")).lower() == "kernel"
    ]
    if not kernels:
        raise argument_error(f"{path}: a profiler trace without GPU kernel events (cat: kernel)")
    try:
        return sum(float(e.get("dur", 0)) for e in kernels) * 1e-6  # dur is in microseconds
    except (TypeError, ValueError, OverflowError):
        raise argument_error(f"{path}: a kernel event's dur is not a number") from None


def _execbench_metadata(data) -> bool:
    sol = data.get("sol") if isinstance(data, dict) else None
    return isinstance(sol, dict) and isinstance(sol.get("per_workload"), list)


def _execbench_runtimes(path: Path, data: dict) -> dict[str, Runtime]:
    """The workloads of one SOL-ExecBench problem's metadata.json, read as it comes: entry i
    of `sol.per_workload` is line i of the workload.jsonl beside it (named by its uuid;
    without that file, `<name>#<index>`). Entries without a baseline are left out."""
    lines = []
    jsonl = path.parent / "workload.jsonl"
    if jsonl.is_file():
        text = jsonl.read_text(encoding="utf-8", errors="replace")
        lines = [ln for ln in text.splitlines() if ln.strip()]
    group = str(data.get("subset") or path.parent.name)
    out = {}
    for i, entry in enumerate(data["sol"]["per_workload"]):
        where = f"{path}: sol.per_workload[{i}]"
        if not isinstance(entry, dict) or entry.get("baseline_latency_ms") in (None, ""):
            continue
        index = entry.get("index", i)
        index = index if isinstance(index, int) and not isinstance(index, bool) else i
        name = f"{data.get('name') or path.parent.name}#{index}"
        if index < len(lines):
            uuid = loads(lines[index], f"{jsonl}:{index + 1}")
            if isinstance(uuid, dict) and isinstance(uuid.get("uuid"), str):
                name = uuid["uuid"]
        seconds = time_of({"ms": entry["baseline_latency_ms"]}, f"{where}.baseline_latency_ms")
        sol = entry.get("sol_ms")
        reference = time_of({"ms": sol}, f"{where}.sol_ms") if sol not in (None, "") else 0.0
        out[name] = Runtime(seconds, group, reference)
    return out


def _execbench_problems(p: Path) -> dict[str, Runtime] | None:
    """Every problem's metadata.json under directory `p` (itself or its subdirectories,
    symlinked ones included), or None when it holds none."""
    files = [p / "metadata.json"] if (p / "metadata.json").is_file() else []
    files += sorted(f for f in p.glob("*/metadata.json") if f.is_file())
    if not files:
        return None
    out = {}
    for f in files:
        data = read(str(f))
        if _execbench_metadata(data):
            out.update(_execbench_runtimes(f, data))
    if not out:
        raise argument_error(f"{p}: no metadata.json with sol.per_workload baselines")
    return out


def load_runtimes(path: str) -> dict[str, Runtime]:
    """name -> Runtime from any of the formats in the module docstring."""
    p = Path(path)
    if p.is_dir():
        problems = _execbench_problems(p)
        if problems is not None:
            return problems
        out = {}
        for f in sorted(p.glob("*.json")):
            s = _trace_seconds(f)
            if s is not None:
                out[f.stem] = Runtime(s)
        if not out:
            raise argument_error(f"{path}: no PyTorch profiler trace (*.json) in the directory")
        return out
    data = read(path)
    if isinstance(data, dict) and "traceEvents" in data:
        return {p.stem: Runtime(_trace_seconds(p))}
    if _execbench_metadata(data):
        return _execbench_runtimes(p, data)
    kernelbench = (
        isinstance(data, dict)
        and data
        and all(
            isinstance(v, dict)
            and v
            and all(isinstance(t, dict) and "mean" in t for t in v.values())
            for v in data.values()
        )
    )
    if kernelbench:  # {level: {file: {mean, std, min, max}}}, milliseconds
        return {
            file: Runtime(time_of(t["mean"], f"{path}: {level}/{file}") * 1e-3, level)
            for level, files in data.items()
            for file, t in files.items()
        }
    return {
        str(r["name"]): Runtime(time_of(r, f"{path}: entry {n}"), str(r.get("group") or ""))
        for n, r in enumerate(named(data, path), 1)
    }


def join(results: list[dict], runtimes: dict) -> tuple[list[Row], list[str]]:
    """(rows of the measured workloads, timing names with no result)."""
    rows, used = [], set()
    for r in results:
        if r.get("status") != "ok":
            continue
        key = match_source(r["source"], runtimes)
        if key is None:
            continue
        used.add(key)
        t = runtimes[key]
        seconds = r.get("totals", {}).get("seconds", {})
        group = t.group or Path(r["source"].partition("#")[0]).parent.name
        bounds = {f: float(seconds.get(f) or 0.0) for f in FIDELITIES}
        warm = bool(r.get("starting_state", {}).get("warm", False))
        rows.append(Row(r["source"], group, t.seconds, bounds, t.reference, fused_terms(r), warm))
    return rows, sorted(set(runtimes) - used)


def fused_terms(result: dict) -> dict:
    """The fused bound's three terms of a result (docs/sol-modes.md): memory = fused bytes /
    DRAM bandwidth, matrix = sum over math-mode groups of 2 MACs / the group's rate, vector =
    vector FLOPs / the fp32 vector rate; with the quantities and rates they come from. Empty
    when the result does not carry them (a results file of an older Solar)."""
    totals, peaks = result.get("totals", {}), result.get("peaks", {})
    try:
        dram = float(peaks["dram_bytes_per_second"])
        vector_rate = float(peaks["vector_flops_per_second"])
        fused_bytes = float(totals["bytes"]["fused"])
        vector_flops = float(totals["vector_flops"])
        groups_ = result.get("math_modes", [])
        matrix = sum(2.0 * float(g["macs"]) / float(g["matrix_flops_per_second"]) for g in groups_)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return {}
    return {
        "memory": fused_bytes / dram if dram > 0 else 0.0,
        "matrix": matrix,
        "vector": vector_flops / vector_rate if vector_rate > 0 else 0.0,
        "bytes": fused_bytes,
        "dram": dram,
        "matrix_flops": float(totals.get("matrix_flops") or 0.0),
        "vector_flops": vector_flops,
        "modes": ", ".join(str(g.get("mode", "")) for g in groups_),
    }


def reference_reason(row: Row) -> str:
    """Why the fused bound and the reference bound (NVIDIA's T_SOL) differ: the fused bound's
    largest term, and what the reference time means for that term's quantity (the bytes it
    moves at the same DRAM bandwidth, or the rate it implies for the same FLOPs)."""
    from .report import seconds

    t, ref = row.terms, row.reference
    if not t or ref <= 0:
        return "the result carries no terms"
    term = max(("memory", "matrix", "vector"), key=lambda k: t[k])
    if term == "memory":
        return (
            f"memory-bound: {t['bytes']:.4g} B at {t['dram']:.4g} B/s = {seconds(t['memory'])}; "
            f"the reference time moves {ref * t['dram']:.4g} B at that bandwidth "
            f"({ref * t['dram'] / t['bytes']:.3g}x Solar's bytes)"
        )
    flops = t["matrix_flops"] if term == "matrix" else t["vector_flops"]
    rate = flops / t[term]
    unit = f"matrix ({t['modes']})" if term == "matrix" else "vector (fp32)"
    return (
        f"{term}-bound: {flops:.4g} FLOP at {rate:.4g} FLOP/s {unit} = {seconds(t[term])}; "
        f"the reference time implies {flops / ref:.4g} FLOP/s ({t[term] / ref:.3g}x Solar's rate)"
    )


def disagreements(rows: list[Row], factor: float = 2.0, mode: str = "fused") -> list[Row]:
    """Rows whose bound and reference bound differ by more than `factor` either way, the
    largest ratio first."""
    out = [
        r
        for r in rows
        if r.reference > 0
        and r.bounds.get(mode, 0) > 0
        and max(r.bounds[mode] / r.reference, r.reference / r.bounds[mode]) > factor
    ]
    return sorted(out, key=lambda r: -abs(math.log(r.bounds[mode] / r.reference)))


def geomean(values) -> float:
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def groups(rows: list[Row]) -> dict[str, dict]:
    """group -> {fidelity: geomean headroom, "count": n, "violations": k (fused)}."""
    out = {}
    for g in sorted({r.group for r in rows}):
        members = [r for r in rows if r.group == g]
        out[g] = {f: geomean(r.headroom(f) for r in members) for f in FIDELITIES}
        out[g]["count"] = len(members)
        out[g]["violations"] = sum(r.violation("fused") for r in members)
    return out


def text_report(rows: list[Row], unmatched: list[str], mode: str = "fused") -> str:
    from .report import seconds

    lines = [f"{len(rows)} measured workload(s); headroom = measured / {mode} bound"]
    lines.append(f"{'group':14s} {'n':>4s} " + " ".join(f"{f:>12s}" for f in FIDELITIES))
    for g, s in groups(rows).items():
        lines.append(
            f"{g[:14]:14s} {s['count']:4d} " + " ".join(f"{s[f]:11.3g}x" for f in FIDELITIES)
        )
    lines.append(
        f"{'all':14s} {len(rows):4d} "
        + " ".join(f"{geomean(r.headroom(f) for r in rows):11.3g}x" for f in FIDELITIES)
    )
    refs = [r for r in rows if r.reference > 0]
    if refs:
        lines.append(
            f"reference bound (SOL-ExecBench's sol_ms) for {len(refs)}: geomean measured / "
            f"{mode} bound beside measured / reference, and {mode} bound / reference"
        )
        for g in sorted({r.group for r in refs}) + ["all"]:
            members = [r for r in refs if g in ("all", r.group)]
            lines.append(
                f"  {g[:12]:12s} {len(members):4d} "
                f"{geomean(r.headroom(mode) for r in members):9.3g}x "
                f"{geomean(r.measured / r.reference for r in members):9.3g}x "
                f"{geomean(r.bounds[mode] / r.reference for r in members):9.3g}x"
            )
        far = disagreements(refs, 2.0, mode)
        lines.append(f"{len(far)} workload(s) where the {mode} bound and the reference differ >2x")
        for r in far[:10]:
            lines.append(
                f"  {Path(r.name).name}: {mode} {seconds(r.bounds[mode])}, reference "
                f"{seconds(r.reference)} ({r.bounds[mode] / r.reference:.3g}x): "
                + reference_reason(r)
            )
    violations = [r for r in rows if r.violated]
    for r in violations:
        modes = ", ".join(r.violated)
        lines.append(
            f"VIOLATION: {r.name}: measured {seconds(r.measured)} is below the {modes} bound "
            f"({seconds(r.bounds['fused'])} fused): the bound or the measurement is wrong"
        )
    tight = sorted((r for r in rows if not r.violation(mode)), key=lambda r: r.headroom(mode))[:5]
    if tight:
        lines.append(
            "tightest: " + ", ".join(f"{Path(r.name).name} {r.headroom(mode):.3g}x" for r in tight)
        )
    if unmatched:
        lines.append(f"no result for {len(unmatched)} timing(s): {', '.join(unmatched[:5])}")
    lines.append(timings_line(any(r.warm for r in rows)))
    return "\n".join(lines)


def _scatter(rows: list[Row], mode: str):
    from .plots import PALETTE, WARNING, _new_figure

    fig, ax = _new_figure(6.5, 5.5)
    names = sorted({r.group for r in rows})
    for i, g in enumerate(names):
        members = [r for r in rows if r.group == g]
        ok = [r for r in members if not r.violation(mode)]
        bad = [r for r in members if r.violation(mode)]
        if ok:
            ax.scatter(
                [r.bounds[mode] for r in ok],
                [r.measured for r in ok],
                s=18,
                color=PALETTE[i % len(PALETTE)],
                label=g or "(no group)",
                gid=f"solar-scatter-{i}",
            )
        if bad:
            ax.scatter(
                [r.bounds[mode] for r in bad],
                [r.measured for r in bad],
                s=40,
                marker="x",
                color=WARNING,
                label=f"{g}: violation" if g else "violation",
            )
    values = [v for r in rows for v in (r.measured, r.bounds[mode]) if v > 0]
    lo, hi = min(values) / 2, max(values) * 2
    ax.plot([lo, hi], [lo, hi], color="black", linewidth=1, label="measured = bound")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel(f"{mode} SOL bound (s)")
    ax.set_ylabel("measured runtime (s)")
    ax.set_title("Measured against the bound (below the diagonal: a violation)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def _bars(rows: list[Row]):
    from .plots import PALETTE, _new_figure

    stats = groups(rows)
    names = list(stats)
    fig, ax = _new_figure(max(6.0, 1.5 + 1.2 * len(names)), 4.5)
    width = 0.8 / len(FIDELITIES)
    for j, f in enumerate(FIDELITIES):
        xs = [i + (j - 1) * width for i in range(len(names))]
        ys = [stats[g][f] for g in names]
        bars = ax.bar(
            xs,
            ys,
            width=width,
            color=PALETTE[j],
            edgecolor="black",
            linewidth=0.5,
            label=f"{f} bound",
        )
        for bar, i in zip(bars, range(len(names)), strict=True):
            bar.set_gid(f"solar-bars-{f}-{i}")
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)), [g or "(no group)" for g in names])
    ax.set_ylabel("geomean headroom: measured / bound")
    ax.set_title("Headroom per group and fidelity")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def html_report(rows: list[Row], unmatched: list[str], mode: str, title: str) -> str:
    from . import plots
    from .html_report import _e, _figure, _table, page
    from .report import seconds

    stats = groups(rows)
    sections = [f"<h1>{_e(title)}</h1>"]
    violations = [r for r in rows if r.violated]
    sections.append(
        f"<p>{len(rows)} measured workloads; headroom = measured / bound."
        + (f' <span class="warn">{len(violations)} violation(s).</span>' if violations else "")
        + "</p>"
    )
    sections.append(
        '<section id="scatter"><h2>Measured against the bound</h2>'
        + _figure(
            "fig-scatter",
            plots.svg_text(_scatter(rows, mode), "scatter-"),
            f"Each workload at its {mode} bound (x) and its measured runtime (y), log axes;"
            " the diagonal is measured = bound, and a point under it is a violation.",
        )
        + "</section>"
    )
    sections.append(
        '<section id="groups"><h2>Headroom per group</h2>'
        + _figure(
            "fig-groups",
            plots.svg_text(_bars(rows), "groups-"),
            "Geometric-mean headroom per group over the unfused, fused and cache-aware bounds.",
        )
        + _table(
            ["group", "workloads", *FIDELITIES, "violations (fused)"],
            [
                [
                    g,
                    (str(s["count"]), s["count"]),
                    *[(f"{s[f]:.3g}x", s[f]) for f in FIDELITIES],
                    (str(s["violations"]), s["violations"]),
                ]
                for g, s in stats.items()
            ],
            numeric=(1, 2, 3, 4, 5),
            cls="sortable",
        )
        + "</section>"
    )
    if violations:
        sections.append(
            '<section id="violations"><h2 class="warn">Violations</h2>'
            + _table(
                ["workload", "measured", *[f"{f} bound" for f in FIDELITIES]],
                [
                    [r.name, seconds(r.measured), *[seconds(r.bounds[f]) for f in FIDELITIES]]
                    for r in violations
                ],
            )
            + '<p class="note">A runtime below a bound means the bound or the measurement'
            " is wrong.</p></section>"
        )
    far = disagreements(rows, 2.0, mode)
    if any(r.reference > 0 for r in rows):
        sections.append(
            '<section id="reference"><h2>Against the reference bound</h2>'
            f"<p>{len(far)} workload(s) where the {mode} bound and the reference bound"
            " (SOL-ExecBench's sol_ms) differ by more than 2x, the largest ratio first.</p>"
            + _table(
                ["workload", f"{mode} bound", "reference", "ratio", "why"],
                [
                    [
                        r.name,
                        seconds(r.bounds[mode]),
                        seconds(r.reference),
                        f"{r.bounds[mode] / r.reference:.3g}x",
                        reference_reason(r),
                    ]
                    for r in far
                ],
            )
            + "</section>"
        )
    ordered = sorted(rows, key=lambda r: r.headroom(mode))
    sections.append(
        '<section id="workloads"><h2>Workloads, tightest first</h2><div class="scroll">'
        + _table(
            ["workload", "group", "measured", f"{mode} bound", "headroom"],
            [
                [
                    r.name,
                    r.group,
                    (seconds(r.measured), r.measured),
                    (seconds(r.bounds[mode]), r.bounds[mode]),
                    (f"{r.headroom(mode):.3g}x", r.headroom(mode)),
                ]
                for r in ordered
            ],
            numeric=(2, 3, 4),
            cls="sortable",
            keys=["name", "group", "measured", "bound", "headroom"],
        )
        + "</div></section>"
    )
    if unmatched:
        sections.append(f'<p class="note">No result for: {_e(", ".join(unmatched))}</p>')
    return page(title, sections)
