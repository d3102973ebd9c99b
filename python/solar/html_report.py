"""The HTML report: one self-contained file (inline SVG plots, inline CSS and JS, no URL)
with the SOL tables, the roofline, a sortable per-node table and, when their data is given,
headroom bars, the cache-aware curve and sweep plots (docs/reports.md).

    html = build_report(graph.source, graph, archs, analyses, validation=("none", "..."))
    Path("report.html").write_text(html)

Sections appear only when their data is given; the data shapes are those of solar.plots.
"""

from __future__ import annotations

import html
from pathlib import Path

from . import plots
from .api import __version__
from .report import (
    bottleneck_text,
    cache_line,
    einsum_text,
    fusion_benefit_text,
    quantization_lines,
    rate,
    seconds,
    si,
)

_CSS = """
:root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --head: #f6f8fa; --warn: #d62728; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       margin: 0 auto; padding: 16px 24px 48px; max-width: 1200px; background: #fff; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 18px; margin: 28px 0 8px;
     border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; margin: 8px 0; }
dl.meta dt { color: var(--muted); } dl.meta dd { margin: 0; }
nav a { margin-right: 14px; }
table { border-collapse: collapse; margin: 6px 0 10px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; }
th { background: var(--head); }
td.num, th.num { text-align: right; } td { white-space: nowrap; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort=ascending]::after { content: " \\25B2"; }
table.sortable th[aria-sort=descending]::after { content: " \\25BC"; }
.scroll { max-height: 640px; overflow: auto; }
figure { margin: 8px 0 16px; } figure svg { max-width: 100%; height: auto; display: block; }
figcaption, .note { color: var(--muted); font-size: 13px; }
.warn { color: var(--warn); font-weight: 600; }
code { font-size: 13px; }
"""

# Runs first: records uncaught errors, rejected promises and console.error calls in the
# <html> element's data-solar-errors attribute, so a headless browser's DOM dump shows them.
_ERROR_HOOK = """
(function () {
  var errors = [];
  function note(text) {
    errors.push(String(text));
    document.documentElement.setAttribute("data-solar-errors", JSON.stringify(errors));
  }
  window.addEventListener("error", function (e) { note(e.message || "error"); });
  window.addEventListener("unhandledrejection", function (e) { note("rejection: " + e.reason); });
  var original = console.error;
  console.error = function () {
    note(Array.prototype.join.call(arguments, " "));
    return original.apply(console, arguments);
  };
})();
"""

# Sorting of table.sortable: a click on a header sorts by that column (numbers by the
# cell's data-v value, first click descending; text ascending), a second click reverses.
# ?sort=KEY clicks the header whose data-key is KEY once when the page loads; with
# &dir=asc or &dir=desc it clicks again if the first click sorted the other way. On load
# the <html> element gets data-solar-ready="1", data-solar-height (the page height) and
# data-solar-layout (the page rectangle of each <figure class=plot>).
_SCRIPT = """
function solarSort(th) {
  var table = th.closest("table");
  var col = Array.prototype.indexOf.call(th.parentNode.children, th);
  var numeric = th.getAttribute("data-type") === "num";
  var current = th.getAttribute("aria-sort");
  var dir = current ? (current === "ascending" ? "descending" : "ascending")
                    : (numeric ? "descending" : "ascending");
  Array.prototype.forEach.call(th.parentNode.children, function (h) {
    h.removeAttribute("aria-sort");
  });
  th.setAttribute("aria-sort", dir);
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  rows.forEach(function (r, i) { if (!r.hasAttribute("data-i")) r.setAttribute("data-i", i); });
  function key(r) {
    var c = r.cells[col];
    return numeric ? parseFloat(c.getAttribute("data-v")) : c.textContent.trim().toLowerCase();
  }
  rows.sort(function (a, b) {
    var x = key(a), y = key(b), d = 0;
    if (numeric) { d = x - y; } else { d = x < y ? -1 : (x > y ? 1 : 0); }
    if (dir === "descending") d = -d;
    return d || (+a.getAttribute("data-i") - +b.getAttribute("data-i"));
  });
  rows.forEach(function (r) { body.appendChild(r); });
}
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.addEventListener("click", function () { solarSort(th); });
});
(function () {
  var params = new URLSearchParams(window.location.search);
  var key = params.get("sort");
  if (key) {
    var th = document.querySelector('table.sortable th[data-key="' + key + '"]');
    if (!th) throw new Error("no sortable column " + key);
    th.click();
    var want = params.get("dir");
    if (want && th.getAttribute("aria-sort").slice(0, want.length) !== want) th.click();
  }
  var layout = {};
  document.querySelectorAll("figure.plot").forEach(function (f) {
    var r = f.querySelector("svg").getBoundingClientRect();
    layout[f.id] = [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height];
  });
  document.documentElement.setAttribute("data-solar-layout", JSON.stringify(layout));
  document.documentElement.setAttribute("data-solar-height",
                                        String(document.documentElement.scrollHeight));
  document.documentElement.setAttribute("data-solar-ready", "1");
})();
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _table(headers, rows, numeric=(), cls="", keys=None) -> str:
    """rows: lists of cells; a cell is text or (text, sort value). Columns in `numeric`
    are right-aligned and sort by number."""
    head = []
    for i, h in enumerate(headers):
        attrs = ' class="num" data-type="num"' if i in numeric else ' data-type="text"'
        if keys:
            attrs += f' data-key="{_e(keys[i])}"'
        head.append(f"<th{attrs}>{_e(h)}</th>")
    body = []
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            text, value = c if isinstance(c, tuple) else (c, None)
            attrs = ' class="num"' if i in numeric else ""
            if value is not None:
                attrs += f' data-v="{value!r}"'
            cells.append(f"<td{attrs}>{_e(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cls_attr = f' class="{cls}"' if cls else ""
    return (
        f"<table{cls_attr}><thead><tr>{''.join(head)}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _validation(validation) -> tuple[str, str]:
    if validation is None:
        return "none", "not validated"
    if isinstance(validation, (tuple, list)):
        return str(validation[0]), str(validation[1]) if len(validation) > 1 else ""
    return str(validation.status), str(getattr(validation, "detail", ""))


def _header(source, graph, archs, analyses, validation) -> str:
    status, detail = _validation(validation)
    dims = " ".join(f"{k}={v}" for k, v in graph.dims) or "(none)"
    modes = "; ".join(f"{a.name}: {r.math_mode}" for a, r in zip(archs, analyses, strict=True))
    items = [
        ("program", f"<code>{_e(source)}</code>"),
        ("dims", _e(dims)),
        (
            "architectures",
            ", ".join(f"{_e(a.name)} ({_e(a.description)})" for a in archs),
        ),
        ("math mode", _e(modes)),
        (
            "validation",
            f'<span class="{"warn" if status in ("none", "failed") else ""}">{_e(status)}</span>'
            + (f" — {_e(detail)}" if detail else ""),
        ),
        (
            "graph",
            f"{len(graph.nodes)} nodes, {si(graph.total_flops, 'FLOP')}, "
            f"{si(graph.unfused_bytes, 'B')} unfused / {si(graph.fused_bytes, 'B')} fused DRAM",
        ),
    ]
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items)
    return f'<header><h1>Solar SOL report</h1><dl class="meta">{dl}</dl></header>'


def _sol_tables(graph, archs, analyses) -> str:
    """The terminal's `solar analyze` table per arch, with the same formatting."""
    parts = ['<section id="sol"><h2>SOL per architecture</h2>']
    for a, r in zip(archs, analyses, strict=True):
        rows = [
            [name, si(g.flops, "FLOP"), si(g.bytes, "B"), seconds(g.seconds)]
            + [bottleneck_text(g.bottleneck)]
            for name, g in (("Unfused", r.unfused), ("Fused", r.fused))
        ]
        if r.cache_aware is not None:
            g = r.cache_aware
            rows.append(
                ["Cache-aware (bound)", si(g.flops, "FLOP"), si(g.bytes, "B"), seconds(g.seconds)]
                + [bottleneck_text(g.bottleneck)]
            )
        parts.append(
            f"<h3>{_e(a.name)} — {_e(a.description)}</h3>"
            f'<p class="note">math mode: {_e(r.math_mode)}; peaks: matrix '
            f"{_e(rate(r.matrix_flops_per_second, 'FLOP'))}, vector "
            f"{_e(rate(r.vector_flops_per_second, 'FLOP'))}, DRAM "
            f"{_e(rate(r.dram_bytes_per_second, 'B'))}</p>"
            + _table(["Mode", "Compute", "Memory", "SOL", "Bottleneck"], rows, numeric={1, 2, 3})
            + f'<p class="note">fusion benefit (unfused / fused): {_e(fusion_benefit_text(r))}</p>'
            + '<p class="note">'
            + "<br>".join(_e(line.strip()) for line in cache_line(r).splitlines())
            + "</p>"
            + _quantization_note(graph, r)
        )
    parts.append("</section>")
    return "".join(parts)


def _quantization_note(graph, analysis) -> str:
    """What --quantize and --kv-cache changed, as the terminal prints it (report.py)."""
    if analysis.quantization is None:
        return ""
    lines = quantization_lines(graph, analysis.quantization).splitlines()
    return '<p class="note">' + "<br>".join(_e(line.strip()) for line in lines) + "</p>"


def _cross_table(archs, analyses) -> str:
    rows = []
    for a, r in zip(archs, analyses, strict=True):
        fb = r.unfused.seconds / r.fused.seconds if r.fused.seconds else 1.0
        rows.append(
            [
                a.name,
                (seconds(r.unfused.seconds), r.unfused.seconds),
                bottleneck_text(r.unfused.bottleneck),
                (seconds(r.fused.seconds), r.fused.seconds),
                bottleneck_text(r.fused.bottleneck),
                (f"{fb:.2f}x", fb),
            ]
        )
    headers = ["Arch", "Unfused", "Bound", "Fused", "Bound", "Fusion benefit"]
    keys = ["arch", "unfused", "unfused-bound", "fused", "fused-bound", "fusion-benefit"]
    return (
        '<section id="cross"><h2>Cross-platform</h2>'
        + _table(headers, rows, numeric={1, 3, 5}, cls="sortable", keys=keys)
        + "</section>"
    )


def _node_table(graph, archs, analyses) -> str:
    headers = ["Node", "Op", "Einsum", "MACs", "Vector FLOPs", "Bytes", "Intensity (FLOP/B)"]
    keys = ["node", "op", "einsum", "macs", "vector-flops", "bytes", "intensity"]
    for i, a in enumerate(archs):
        headers += [f"SOL {a.name}", f"Bottleneck {a.name}"]
        keys += [f"sol-{i}", f"bottleneck-{i}"]
    numeric = {3, 4, 5, 6} | {7 + 2 * i for i in range(len(archs))}
    from .session import analysed_graph

    graph = analysed_graph(graph, analyses[0])  # a recipe applies alike on every arch
    rows = []
    for j, node in enumerate(graph.nodes):
        sol0 = analyses[0].nodes[j]
        row = [
            node.name,
            node.op,
            einsum_text(node),
            (f"{node.macs:,}", node.macs),
            (f"{node.vector_flops:,}", node.vector_flops),
            (f"{node.bytes:,}", node.bytes),
            (f"{sol0.intensity:.3g}", sol0.intensity),
        ]
        for r in analyses:
            s = r.nodes[j]
            row += [
                (seconds(s.seconds), s.seconds),
                bottleneck_text(s.bottleneck) if s.seconds > 0 else "-",
            ]
        rows.append(row)
    return (
        '<section id="nodes"><h2>Per node</h2>'
        '<p class="note">Click a column header to sort (numbers: largest first; click again '
        "to reverse). SOL is each node's unfused bound; the graph's unfused SOL is their "
        "sum.</p>"
        f'<div class="scroll">{_table(headers, rows, numeric, "sortable", keys)}</div></section>'
    )


def _figure(fig_id: str, svg: str, caption: str) -> str:
    return f'<figure class="plot" id="{fig_id}">{svg}<figcaption>{caption}</figcaption></figure>'


def build_report(
    source,
    graph,
    archs,
    analyses,
    validation=None,
    curve=None,
    sweep=None,
    headroom=None,
    figures=None,
) -> str:
    """The report as HTML text.

    source: the program's path as given; graph: its einsum graph; archs and analyses: one
    ``_core.ArchSpec`` and one ``_core.Analysis`` per platform, in the same order;
    validation: ``(status, detail)`` or an object with ``status`` and ``detail``;
    curve, sweep, headroom: the plain data of solar.plots (``curve`` may be the list of
    points alone: the marks then come from the archs' cache levels; ``sweep`` may be the
    list of entries alone when exactly one dim varies). ``figures``: figures already made
    by ``plots.report_figures`` (to share them with ``--png``).
    """
    figs = figures or plots.report_figures(graph, archs, analyses, curve, sweep, headroom)
    sections = [_header(source, graph, archs, analyses, validation)]
    nav = [("sol", "SOL")]
    sections.append(_sol_tables(graph, archs, analyses))
    if len(archs) > 1:
        sections.append(_cross_table(archs, analyses))
        nav.append(("cross", "Cross-platform"))

    svg = plots.svg_text(figs["roofline"], "roofline-")
    skipped = []
    for i, (a, r) in enumerate(zip(archs, analyses, strict=True)):
        d = plots.roofline_data(graph, a, r)
        skipped = d["skipped"]
        for kind in ("compute", "memory"):
            titles = [
                f"{p['name']} ({p['op']}): {p['intensity']:.3g} FLOP/B, "
                f"{rate(p['flops_per_second'], 'FLOP')}, SOL {seconds(p['seconds'])} on {a.name}"
                for p in d["points"]
                if p["bottleneck"] == kind
            ]
            svg = plots.add_titles(svg, f"solar-roofline-points-{i}-{kind}", titles)
    note = (
        f" {len(skipped)} nodes without FLOPs or DRAM bytes (views, copies) have no point."
        if skipped
        else ""
    )
    sections.append(
        '<section id="roofline"><h2>Roofline</h2>'
        + _figure(
            "fig-roofline",
            svg,
            "x: FLOPs per unfused DRAM byte of each node; y: FLOPs / the node's SOL. Solid: "
            "matrix roof min(peak, β·I); dashed: vector roof; dotted: ridge points (peak / "
            "β). Circles are compute-bound nodes, triangles memory-bound; hover a point for "
            "its node." + note,
        )
        + "</section>"
    )
    nav.append(("roofline", "Roofline"))
    sections.append(_node_table(graph, archs, analyses))
    nav.append(("nodes", "Per node"))

    if "headroom" in figs:
        rows = [
            [
                r["name"],
                r["kind"],
                (seconds(r["measured_seconds"]), r["measured_seconds"]),
                (seconds(r["sol_seconds"]), r["sol_seconds"]),
                (f"{r['ratio']:.3g}x", r["ratio"]),
                "SOL VIOLATION" if r["violation"] else "",
            ]
            for r in plots.headroom_data(headroom)
        ]
        sections.append(
            '<section id="headroom"><h2>Headroom</h2>'
            + _figure(
                "fig-headroom",
                plots.svg_text(figs["headroom"], "headroom-"),
                "Measured runtime / fused SOL, log scale. 1x is the bound; a red bar below it "
                "is a SOL violation (a measurement faster than the bound: a wrong spec, a "
                "wrong count or a wrong measurement).",
            )
            + _table(
                ["Workload", "Run", "Measured", "Fused SOL", "Headroom", ""],
                rows,
                numeric={2, 3, 4},
                cls="sortable",
                keys=["workload", "run", "measured", "sol", "headroom", "violation"],
            )
            + "</section>"
        )
        nav.append(("headroom", "Headroom"))

    if "cache_curve" in figs:
        points, marks = plots.normalise_curve(curve, archs)
        d = plots.cache_curve_data(points, marks)
        at = "; ".join(
            f"{m.get('arch', '')} {m['level']} ({si(m['capacity_bytes'], 'B')}): "
            + (si(m["dram_bytes"], "B") if m["dram_bytes"] is not None else "does not fit")
            for m in d["marks"]
        )
        sections.append(
            '<section id="cache"><h2>Cache-aware curve</h2>'
            + _figure(
                "fig-cache",
                plots.svg_text(figs["cache_curve"], "cache-"),
                "The least DRAM traffic any tiling attains with an on-chip buffer of each "
                "capacity (a Pareto frontier). Dashed: the platforms' buffer capacities. "
                + (_e("DRAM traffic at them: " + at + ".") if at else ""),
            )
            + "</section>"
        )
        nav.append(("cache", "Cache-aware"))

    for i, (entries, axis) in enumerate(plots.split_sweeps(sweep) if sweep else []):
        key = "sweep" if i == 0 else f"sweep_{i + 1}"
        if key not in figs:
            continue
        d = plots.sweep_data(entries, axis)
        changes = "".join(
            f"<li>{_e(c['arch'])} {_e(c['mode'])}: {_e(c['from'])} → {_e(c['to'])} between "
            f"{_e(d['axis'])}={_e(c['between'][0])} and {_e(c['between'][1])}</li>"
            for c in d["changes"]
        )
        sections.append(
            f'<section id="{key}"><h2>Sweep of {_e(d["axis"])}</h2>'
            + _figure(
                f"fig-{key}",
                plots.svg_text(figs[key], f"{key}-"),
                f"SOL versus {_e(d['axis'])}: solid fused, dashed unfused; filled circles "
                "compute-bound (C), open squares memory-bound (M)."
                + (" Log scales: the sizes are geometric." if d["log_x"] else ""),
            )
            + (
                f"<p>Regime changes:</p><ul>{changes}</ul>"
                if changes
                else "<p>No regime change.</p>"
            )
            + "</section>"
        )
        nav.append((key, f"Sweep {d['axis']}"))

    links = "".join(f'<a href="#{k}">{_e(v)}</a>' for k, v in nav)
    sections.insert(1, f"<nav>{links}</nav>")
    return page(f"Solar report: {Path(str(source)).name}", sections)


def page(title: str, sections: list[str]) -> str:
    """A self-contained HTML page: the sections with the report's CSS, its error hook (first)
    and its script (last, sorting and layout attributes)."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_e(title)}</title>\n<script>{_ERROR_HOOK}</script>\n"
        f"<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(sections)
        + f'\n<footer class="note">solar {_e(__version__)}</footer>\n'
        f"<script>{_SCRIPT}</script>\n</body>\n</html>\n"
    )


def write_report(path, *args, **kwargs) -> Path:
    """build_report(...) written to `path` (UTF-8)."""
    path = Path(path)
    path.write_text(build_report(*args, **kwargs), encoding="utf-8")
    return path
