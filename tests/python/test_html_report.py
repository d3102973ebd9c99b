"""Visual reports: the plot functions (solar.plots), the HTML report (solar.html_report),
`solar analyze --html/--png`, and the report opened in a real headless browser (Debian's
chromium): plots render, no console errors, the sort script works, nothing is fetched.

The browser tests skip (with the reason) when chromium is absent, except under
SOLAR_REQUIRE_BROWSER=1 (set by `make test`, which installs chromium), where they fail.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import solar
from solar import html_report, plots

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "examples" / "ir" / "linear_bias_matmul.py"
TRANSFORMER = ROOT / "examples" / "ir" / "transformer.py"


def _analyses(path, names):
    graph = solar.trace(path)
    archs = [solar.load_arch(n) for n in names]
    return graph, archs, [solar.analyze(graph, arch=a) for a in archs]


# Hand-made inputs in the shapes the other stages produce (docs/reports.md).
CURVE = [  # a Pareto frontier: more on-chip capacity, less DRAM traffic
    {"capacity_bytes": 1_024, "dram_bytes": 1_000_000_000},
    {"capacity_bytes": 1_048_576, "dram_bytes": 100_000_000},
    {"capacity_bytes": 67_108_864, "dram_bytes": 10_000_000},
]


def _sweep():
    """B = 1, 2, 4, 8 on one arch with Pi = 100e12 FLOP/s and beta = 1e12 B/s:
    FLOPs = B * 1e9, fused bytes = 20e6 (weights, fixed), unfused bytes = B * 20e6 + 20e6.
    fused: compute B*1e9/100e12 = B*10 us vs memory 20e6/1e12 = 20 us: memory for B = 1
    (10 < 20), compute from B = 2 on (20 >= 20, ties go to compute), 4, 8;
    unfused: memory (B*20e6+20e6)/1e12 = (B+1)*20 us > B*10 us always: memory throughout."""
    out = []
    for b in (1, 2, 4, 8):
        flops = b * 10**9
        nbytes = {"unfused": b * 20_000_000 + 20_000_000, "fused": 20_000_000}
        sec = {m: max(flops / 100e12, v / 1e12) for m, v in nbytes.items()}
        neck = {m: "compute" if flops / 100e12 >= v / 1e12 else "memory" for m, v in nbytes.items()}
        out.append(
            {
                "dims": {"B": b, "S": 512},
                "arch": "H100_PCIe",
                "flops": flops,
                "bytes": nbytes,
                "seconds": sec,
                "bottleneck": neck,
            }
        )
    return out


HEADROOM = [
    {
        "name": "gemm",
        "measured_seconds": {"eager": 2e-5, "compile": 1.5e-5},
        "sol_seconds": {"unfused": 5e-6, "fused": 4e-6},
    },
    {
        "name": "softmax",
        "measured_seconds": {"eager": 3e-6, "compile": None},
        "sol_seconds": {"unfused": 5e-6, "fused": 4e-6},
    },
]


# ------------------------------------------------------------------------- plot data


def test_roofline_ridge_points_of_h100_pcie():
    graph, archs, analyses = _analyses(PAPER, ["H100_PCIe"])
    d = plots.roofline_data(graph, archs[0], analyses[0])
    # Ridge = peak / beta: TF32 matrix 378e12 / 2.0e12 = 189 FLOP/B; fp32 vector
    # 51.2e12 / 2.0e12 = 25.6 FLOP/B.
    assert d["ridge_matrix"] == pytest.approx(189.0)
    assert d["ridge_vector"] == pytest.approx(25.6)
    fig = plots.roofline_figure(graph, archs, analyses)
    ax = fig.axes[0]
    lines = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
    xs, ys = lines["solar-roof-matrix-0"].get_data()
    # The matrix roof bends exactly at the ridge: (189, 378e12); left of it beta * x.
    assert 189.0 in list(xs)
    assert ys[list(xs).index(189.0)] == pytest.approx(378e12)
    assert ys[0] == pytest.approx(2.0e12 * xs[0])
    assert ys[-1] == pytest.approx(378e12)
    vx, vy = lines["solar-roof-vector-0"].get_data()
    assert 25.6 in [round(x, 9) for x in vx] and max(vy) == pytest.approx(51.2e12)


def test_roofline_points_are_the_nodes_at_their_bounds():
    graph, archs, analyses = _analyses(PAPER, ["H100_PCIe_paper"])
    d = plots.roofline_data(graph, archs[0], analyses[0])
    pts = {p["name"]: p for p in d["points"]}
    # linear#0: 2 * 33,554,432 = 67,108,864 FLOPs over 4*(BMK+NK+N+BMN) = 1,312,768 B:
    # I = 51.12 FLOP/B > ridge 102e12 / 2.0388e12 = 50.03, compute-bound at the peak 102e12.
    assert pts["linear#0"]["intensity"] == pytest.approx(67_108_864 / 1_312_768)
    assert pts["linear#0"]["bottleneck"] == "compute"
    assert pts["linear#0"]["flops_per_second"] == pytest.approx(102e12)
    # matmul#0: 16,777,216 FLOPs over 4*(BMN+NP+BMP) = 720,896 B: I = 23.27 < 50.03,
    # memory-bound on the roof: y = beta * I = 2.0388e12 * 23.27 = 4.745e13 FLOP/s.
    assert pts["matmul#0"]["intensity"] == pytest.approx(16_777_216 / 720_896)
    assert pts["matmul#0"]["bottleneck"] == "memory"
    assert pts["matmul#0"]["flops_per_second"] == pytest.approx(2.0388e12 * 16_777_216 / 720_896)
    # The figure draws those very points (one collection per bottleneck kind).
    ax = plots.roofline_figure(graph, archs, analyses).axes[0]
    drawn = {c.get_gid(): c.get_offsets().tolist() for c in ax.collections if c.get_gid()}
    assert drawn["solar-roofline-points-0-compute"] == [[67_108_864 / 1_312_768, 102e12]]
    mx, my = drawn["solar-roofline-points-0-memory"][0]
    assert mx == pytest.approx(23.2727, rel=1e-4) and my == pytest.approx(4.7448e13, rel=1e-4)


def test_roofline_skips_nodes_without_work():
    graph, archs, analyses = _analyses(TRANSFORMER, ["H100_PCIe"])
    d = plots.roofline_data(graph, archs[0], analyses[0])
    no_work = [n.name for n in graph.nodes if n.total_flops == 0 or n.bytes == 0]
    # Views (select, reshape, permute) have no FLOPs: no point on a log-log chart.
    assert d["skipped"] == no_work and no_work
    assert len(d["points"]) + len(d["skipped"]) == len(graph.nodes)


def test_cache_curve_mark_reads_the_frontier_at_the_capacity():
    mark = {"level": "L2", "capacity_bytes": 52_428_800}
    d = plots.cache_curve_data(CURVE, [mark])
    # 50 MiB = 52,428,800 B holds the 1 KiB and 1 MiB tilings but not the 64 MiB one:
    # the least traffic among them is 100,000,000 B.
    assert d["marks"][0]["dram_bytes"] == 100_000_000
    ax = plots.cache_curve_figure(CURVE, [mark]).axes[0]
    (step,) = [line for line in ax.get_lines() if line.get_gid() == "solar-cache-curve"]
    xs, ys = step.get_data()
    assert list(xs[:3]) == [1_024, 1_048_576, 67_108_864]
    assert list(ys[:3]) == [1_000_000_000, 100_000_000, 10_000_000]
    # A mark below the smallest tiling's capacity has no traffic to show.
    assert (
        plots.cache_curve_data(CURVE, [{"level": "SMEM", "capacity_bytes": 512}])["marks"][0][
            "dram_bytes"
        ]
        is None
    )


def test_cache_marks_come_from_the_spec():
    # H100_PCIe.yaml: cache_level L2, 50 x 2^20 = 52,428,800 bytes.
    marks = plots.cache_marks([solar.load_arch("H100_PCIe")])
    assert marks == [{"level": "L2", "capacity_bytes": 52_428_800, "arch": "H100_PCIe"}]


def test_sweep_regime_changes_and_log_axis():
    d = plots.sweep_data(_sweep())
    assert d["axis"] == "B"  # S = 512 in every entry: B is the only dim that varies
    assert d["log_x"]  # 1, 2, 4, 8: ratio 2 throughout
    # fused: memory at B=1, compute from B=2 (see _sweep): one change between 1 and 2;
    # unfused stays memory-bound: none.
    assert d["changes"] == [
        {"arch": "H100_PCIe", "mode": "fused", "from": "memory", "to": "compute", "between": (1, 2)}
    ]
    fused = next(s for s in d["series"] if s["mode"] == "fused")
    # B=8: max(8e9 / 100e12, 20e6 / 1e12) = max(80 us, 20 us) = 80 us.
    assert fused["points"][-1]["seconds"] == pytest.approx(80e-6)
    ax = plots.sweep_figure(_sweep()).axes[0]
    assert ax.get_xscale() == "log"
    assert any("memory -> compute" in t.get_text() for t in ax.texts)


def test_sweep_geometric_detection():
    assert plots.is_geometric([512, 1024, 2048, 4096, 8192])  # ratio 2
    assert not plots.is_geometric([1, 2, 3, 4])  # ratios 2, 1.5, 1.33
    assert plots.is_geometric([1, 3, 200])  # spans 200x >= 100x


def test_sweep_with_two_varying_dims_needs_the_axis():
    entries = _sweep()
    entries[1] = {**entries[1], "dims": {"B": 2, "S": 1024}}
    with pytest.raises(solar.UserError, match="cannot tell the swept dim .B, S vary."):
        plots.sweep_data(entries)
    assert plots.sweep_data(entries, "B")["axis"] == "B"


def test_headroom_ratios_and_violation_colour():
    d = plots.headroom_data(HEADROOM)
    ratios = {(r["name"], r["kind"]): r for r in d}
    # gemm eager 20 us / 4 us = 5x; compile 15 us / 4 us = 3.75x; softmax eager
    # 3 us / 4 us = 0.75x < 1: a SOL violation; softmax compile absent: no bar.
    assert ratios["gemm", "eager"]["ratio"] == pytest.approx(5.0)
    assert ratios["gemm", "compile"]["ratio"] == pytest.approx(3.75)
    assert ratios["softmax", "eager"]["ratio"] == pytest.approx(0.75)
    assert ratios["softmax", "eager"]["violation"] and not ratios["gemm", "eager"]["violation"]
    assert ("softmax", "compile") not in ratios
    ax = plots.headroom_figure(HEADROOM).axes[0]
    bars = {p.get_gid(): p for p in ax.patches if p.get_gid()}
    from matplotlib.colors import to_hex

    assert to_hex(bars["solar-headroom-eager-1"].get_facecolor()) == plots.WARNING
    assert to_hex(bars["solar-headroom-eager-0"].get_facecolor()) == plots.PALETTE[0]
    assert bars["solar-headroom-eager-0"].get_height() == pytest.approx(5.0)
    assert ax.get_yscale() == "log"


def test_bad_plot_data_is_a_user_error():
    with pytest.raises(solar.UserError, match="cache-aware curve: entry 0 lacks dram_bytes"):
        plots.cache_curve_data([{"capacity_bytes": 1}])
    with pytest.raises(solar.UserError, match="headroom: no data points"):
        plots.headroom_data([])


def test_missing_matplotlib_is_a_clear_user_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import fails
    with pytest.raises(solar.UserError, match=r"(?s)plots need matplotlib.*solar-sol\[plots\]"):
        plots.headroom_figure(HEADROOM)


def test_solar_imports_matplotlib_only_for_plots():
    code = "import sys, solar, solar.cli, solar.html_report; print('matplotlib' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False", r.stderr


def test_save_png_and_svg(tmp_path):
    graph, archs, analyses = _analyses(PAPER, ["H100_PCIe"])
    fig = plots.roofline_figure(graph, archs, analyses)
    png = plots.save(fig, tmp_path / "r.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = plots.save(fig, tmp_path / "r.svg").read_text()
    assert "<svg" in svg
    with pytest.raises(solar.UserError, match=r"r\.pdf: plots are written as \.png or \.svg"):
        plots.save(fig, tmp_path / "r.pdf")


def test_inline_svg_has_no_url_and_unique_ids():
    graph, archs, analyses = _analyses(PAPER, ["H100_PCIe"])
    fig = plots.roofline_figure(graph, archs, analyses)
    a, b = plots.svg_text(fig, "a-"), plots.svg_text(fig, "b-")
    assert a.startswith("<svg") and "http" not in a
    ids_a = set(re.findall(r'\bid="([^"]+)"', a))
    ids_b = set(re.findall(r'\bid="([^"]+)"', b))
    # Only the solar-* gids (the same chart twice) may repeat; matplotlib's ids may not.
    assert all(i.startswith("solar-") for i in ids_a & ids_b)
    # Every internal reference points at an id of the same SVG.
    refs = set(re.findall(r'(?:href="#|url\(#)([^")]+)', a))
    assert refs and refs <= ids_a


# ------------------------------------------------------------------------ HTML report


def _full_report(tmp_path) -> tuple[Path, object, list, list]:
    graph, archs, analyses = _analyses(TRANSFORMER, ["H100_PCIe", "B200"])
    path = tmp_path / "report.html"
    html_report.write_report(
        path,
        str(TRANSFORMER),
        graph,
        archs,
        analyses,
        validation=("none", "not validated"),
        curve=CURVE,
        sweep=_sweep(),
        headroom=HEADROOM,
    )
    return path, graph, archs, analyses


def test_report_tables_match_the_terminal_table():
    graph, archs, analyses = _analyses(PAPER, ["H100_PCIe_paper"])
    text = html_report.build_report(str(PAPER), graph, archs, analyses)
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", text)]
    # The paper's Figure 2d (its worked example): unfused 83.9 MFLOP, 2.03 MB, 1.01 µs,
    # memory; fused 985 kB, 822 ns, compute; as `solar analyze` prints them.
    i = cells.index("Unfused")
    assert cells[i : i + 5] == ["Unfused", "83.9 MFLOP", "2.03 MB", "1.01 µs", "Memory"]
    j = cells.index("Fused")
    assert cells[j : j + 5] == ["Fused", "83.9 MFLOP", "985 kB", "822 ns", "Compute"]
    # Only the sections with data: no cross-platform table for one arch, no headroom,
    # cache-aware or sweep sections without their data.
    ids = re.findall(r'<section id="([^"]+)"', text)
    assert ids == ["sol", "roofline", "nodes"]
    assert "validation</dt><dd>" in text and ">none</span>" in text


def test_report_is_self_contained(tmp_path):
    path, graph, archs, analyses = _full_report(tmp_path)
    text = path.read_text()
    assert re.findall(r'<section id="([^"]+)"', text) == [
        "sol",
        "cross",
        "roofline",
        "nodes",
        "headroom",
        "cache",
        "sweep",
    ]
    assert not re.search(r"https?://", text, re.I)
    # No attribute loads anything: every href is an in-page anchor; no src, no @import.
    assert set(re.findall(r'\bhref="(.)', text)) == {"#"}
    assert not re.search(r"\bsrc=|@import|url\((?!#)", text)
    # One tooltip per plotted node and arch (28 nodes with work in transformer.py, 2 archs).
    plotted = len(plots.roofline_data(graph, archs[0], analyses[0])["points"])
    assert text.count("<title>") == 1 + 2 * plotted
    assert "Regime changes:" in text and "fused: memory → compute between B=1 and 2" in text
    assert "SOL VIOLATION" in text  # softmax eager: 0.75x


def test_cli_writes_html_and_png(tmp_path):
    out, pngs = tmp_path / "r.html", tmp_path / "plots"
    r = subprocess.run(
        [sys.executable, "-m", "solar.cli", "analyze", str(PAPER), "--arch", "H100_PCIe_paper"]
        + ["--html", str(out), "--png", str(pngs)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert f"wrote {out}" in r.stdout
    text = out.read_text()
    assert "1.01 µs" in text  # the unfused SOL of Figure 2d, as in the terminal
    # The paper spec has an L2 level: the report also has the cache-aware curve.
    assert 'id="fig-cache"' in text
    assert sorted(p.name for p in pngs.iterdir()) == ["cache_curve.png", "roofline.png"]
    assert (pngs / "roofline.png").read_bytes()[:4] == b"\x89PNG"
    bad = subprocess.run(
        [sys.executable, "-m", "solar.cli", "analyze", str(PAPER), "--png", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1 and "exists and is not a directory" in bad.stderr
    assert "Traceback" not in bad.stderr


# --------------------------------------------------------------------- in a browser


def _browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    reason = (
        "chromium is not installed (Debian: apt-get install -y chromium); `make test` installs it"
    )
    if os.environ.get("SOLAR_REQUIRE_BROWSER"):
        pytest.fail(reason)
    print(f"skipping browser tests: {reason}")
    pytest.skip(reason)


WIDTH = 1280


def _run_browser(tmp_path, url: str, *args: str) -> tuple[str, list[str]]:
    """Runs headless chromium on url; returns (stdout, console messages from stderr).
    Name resolution is switched off so that any attempt to fetch from a host fails."""
    cmd = [
        _browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--enable-logging=stderr",
        "--v=0",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        "--virtual-time-budget=5000",
        *args,
        url,
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    console = [line for line in r.stderr.splitlines() if ":CONSOLE" in line]
    return r.stdout, console


def _html_attr(dom: str, name: str):
    m = re.search(r"<html[^>]*\b" + name + r'="([^"]*)"', dom)
    return html.unescape(m.group(1)) if m else None


def _page_errors(tmp_path, url: str) -> tuple[str, list[str]]:
    """The DOM after load and every error the page reported (its hook plus the console)."""
    dom, console = _run_browser(tmp_path, url, f"--window-size={WIDTH},900", "--dump-dom")
    hooked = json.loads(_html_attr(dom, "data-solar-errors") or "[]")
    return dom, hooked + console


def _rendered(region) -> tuple[int, float]:
    """(number of distinct colours, standard deviation of the grey levels) of an image."""
    from PIL import ImageStat

    colours = region.convert("RGB").getcolors(maxcolors=1 << 20) or []
    return len(colours), ImageStat.Stat(region.convert("L")).stddev[0]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    path, graph, archs, analyses = _full_report(tmp)
    return tmp, path, graph, archs, analyses


def test_error_detection_catches_a_broken_page(tmp_path):
    # The checks below could pass vacuously if errors went unseen: a page that calls an
    # undefined function and logs with console.error must show both.
    _browser()
    page = tmp_path / "broken.html"
    page.write_text(
        "<!DOCTYPE html><html><head><script>"
        + html_report._ERROR_HOOK
        + "</script></head><body><script>console.error('logged');noSuchFunction();"
        "</script></body></html>"
    )
    _, errors = _page_errors(tmp_path, page.as_uri())
    assert any("logged" in e for e in errors)
    assert any("noSuchFunction is not defined" in e for e in errors)


def test_report_loads_without_errors(report):
    tmp, path, *_ = report
    dom, errors = _page_errors(tmp, path.as_uri())
    assert _html_attr(dom, "data-solar-ready") == "1"  # the script ran to its end
    assert errors == []


def test_sort_by_clicking_the_sol_header(report):
    tmp, path, graph, archs, analyses = report
    # ?sort=sol-0 clicks the "SOL H100_PCIe" header once: largest first; ties keep the
    # graph order. The expected order is the nodes sorted by their H100_PCIe SOL.
    dom, errors = _page_errors(tmp, path.as_uri() + "?sort=sol-0")
    assert errors == []
    section = dom[dom.index('<section id="nodes"') :]
    section = section[: section.index("</section>")]
    shown = re.findall(r"<tr[^>]*><td[^>]*>([^<]*)</td>", section)
    order = sorted(range(len(graph.nodes)), key=lambda i: (-analyses[0].nodes[i].seconds, i))
    assert shown == [graph.nodes[i].name for i in order]
    assert shown != [n.name for n in graph.nodes]  # the sort changed the order
    assert 'data-key="sol-0" aria-sort="descending"' in section
    # A second click (?dir=asc) reverses it: smallest first.
    dom, _ = _page_errors(tmp, path.as_uri() + "?sort=sol-0&dir=asc")
    section = dom[dom.index('<section id="nodes"') :]
    shown = re.findall(r"<tr[^>]*><td[^>]*>([^<]*)</td>", section[: section.index("</section>")])
    assert shown == [
        graph.nodes[i].name
        for i in sorted(range(len(graph.nodes)), key=lambda i: (analyses[0].nodes[i].seconds, i))
    ]


def test_plots_render_in_the_screenshot(report):
    from PIL import Image

    tmp, path, *_ = report
    dom, _ = _page_errors(tmp, path.as_uri())
    layout = json.loads(_html_attr(dom, "data-solar-layout"))
    assert sorted(layout) == ["fig-cache", "fig-headroom", "fig-roofline", "fig-sweep"]
    height = int(_html_attr(dom, "data-solar-height"))
    shot = tmp / "shot.png"
    _run_browser(tmp, path.as_uri(), f"--window-size={WIDTH},{height}", f"--screenshot={shot}")
    image = Image.open(shot).convert("RGB")
    assert image.size == (WIDTH, height)
    colours, spread = _rendered(image)
    assert colours > 50 and spread > 10  # a page, not a blank screen
    for name, (x, y, w, h) in layout.items():
        assert w > 300 and h > 200, (name, w, h)
        region = image.crop((int(x), int(y), int(x + w), int(y + h)))
        colours, spread = _rendered(region)
        # A rendered chart: antialiased lines and text give hundreds of colours; a blank
        # or failed SVG gives one (checked on a white image in the next test).
        assert colours >= 20 and spread > 5, (name, colours, spread)
        # The first arch's colour (PALETTE[0] = #1f77b4) is drawn in every chart.
        distance = np.abs(np.asarray(region, dtype=int) - [0x1F, 0x77, 0xB4]).sum(axis=2)
        assert (distance < 24).sum() >= 20, name


def test_blank_region_is_not_taken_for_a_plot():
    from PIL import Image

    colours, spread = _rendered(Image.new("RGB", (400, 300), "white"))
    assert colours == 1 and spread == 0.0
