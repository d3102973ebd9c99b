"""Sweeps (`solar sweep`, `solar.sweep`): value syntax, the per-axis and grid configurations,
regime changes, IR and PyTorch programs. Every number is derived by hand beside it."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import solar
from solar.explore import parse_values

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ir" / "linear_bias_matmul.py"
LINEAR = ROOT / "workloads" / "level1" / "linear_with_bias.py"


def solar_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "spec, values",
    [
        ("1,2,4", [1, 2, 4]),
        ("512:8192:x2", [512, 1024, 2048, 4096, 8192]),  # 512 * 2^k up to 8192
        ("1:100:x10", [1, 10, 100]),
        ("64:256:+64", [64, 128, 192, 256]),
        ("3:10:+3", [3, 6, 9]),  # 12 > 10 stops
        ("7", [7]),
    ],
)
def test_value_syntax(spec, values):
    assert parse_values("S", spec) == values


@pytest.mark.parametrize(
    "item, message",
    [
        ("S=512:8192:y2", "a range is A:B:xK or A:B:+K"),
        ("S=512:8192", "a range is A:B:xK or A:B:+K"),
        ("S=0:8:x2", "a range needs 0 < A <= B"),
        ("S=8:4:+1", "a range needs 0 < A <= B"),
        ("S=1:8:x1", "the step must be at least x2 or +1"),
        ("S=1,two", "'two' is not an integer"),
        ("S=1,-2", "sizes must be positive"),
        ("S", "expected NAME=VALUES"),
    ],
)
def test_bad_value_syntax_is_a_user_error(item, message):
    r = solar_cli("sweep", str(EXAMPLE), "--dim", item)
    assert r.returncode == 1
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_sweep_needs_an_axis_and_a_known_dim():
    r = solar_cli("sweep", str(EXAMPLE))
    assert r.returncode == 1 and "needs at least one --dim" in r.stderr
    r = solar_cli("sweep", str(EXAMPLE), "--dim", "Q=1,2")
    assert r.returncode == 1 and "sweep configuration Q=1" in r.stderr


def test_sweep_api_batch_axis():
    points = solar.sweep(str(EXAMPLE), {"B": [2, 4]}, arch="H100_PCIe_paper")
    assert [p["dims"]["B"] for p in points] == [2, 4]
    assert all(
        set(p) >= {"dims", "arch", "flops", "bytes", "seconds", "bottleneck"} for p in points
    )
    # B=2, the paper's example: 83,886,080 FLOPs, 2,033,664 / 985,088 bytes, fused 0.8224 us.
    p2, p4 = points
    assert p2["dims"] == {"B": 2, "M": 128, "K": 256, "N": 512, "P": 64}
    assert p2["flops"] == 83_886_080
    assert p2["bytes"] == {"unfused": 2_033_664, "fused": 985_088}
    assert p2["seconds"]["fused"] == pytest.approx(83_886_080 / 102e12, rel=1e-12)
    assert p2["bottleneck"] == {"unfused": "memory", "fused": "compute"}
    # B=4: FLOPs double to 167,772,160; fused bytes 4·(BMK + NK + N + NP + BMP) =
    # 4·(131,072 + 131,072 + 512 + 32,768 + 32,768) = 1,312,768.
    assert p4["flops"] == 167_772_160
    assert p4["bytes"]["fused"] == 1_312_768
    assert p4["arch"] == "H100_PCIe_paper" and p4["axis"] == "B"


def test_sweep_regime_change_cli(tmp_path):
    # M=1 (B=2): FLOPs 2·(2·1·256·512 + 2·1·512·64) = 655,360; fused bytes 4·(BMK 512 + NK
    # 131,072 + N 512 + NP 32,768 + BMP 128) = 659,968: 0.99 FLOP/B, below the paper spec's
    # ridge 102e12 / 2.0388e12 = 50.0 -> memory-bound. M=128: 85.2 FLOP/B -> compute-bound.
    out, table = tmp_path / "s.json", tmp_path / "s.csv"
    r = solar_cli(
        "sweep",
        str(EXAMPLE),
        "--dim",
        "M=1,128",
        "--arch",
        "H100_PCIe_paper",
        "--json",
        str(out),
        "--csv",
        str(table),
    )
    assert r.returncode == 0, r.stderr
    assert "regime change (fused, H100_PCIe_paper): M 1 -> 128: memory -> compute" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["schema"] == "solar.sweep/1"
    assert [p["flops"] for p in doc["points"]] == [655_360, 83_886_080]
    assert doc["points"][0]["bytes"]["fused"] == 659_968
    change = next(c for c in doc["regime_changes"] if c["mode"] == "fused")
    assert change["before"] == {"value": 1, "bottleneck": "memory"}
    assert change["after"] == {"value": 128, "bottleneck": "compute"}
    rows = list(csv.DictReader(table.open()))
    assert [int(row["M"]) for row in rows] == [1, 128]
    assert int(rows[0]["fused_bytes"]) == 659_968


def test_sweep_axes_alone_and_grid():
    # Alone: 2 + 2 points, each axis with the other at its default (B=2, M=128).
    alone = solar.sweep(str(EXAMPLE), {"B": "1:2:+1", "M": [1, 128]}, arch="H100_PCIe_paper")
    assert [(p["axis"], p["dims"]["B"], p["dims"]["M"]) for p in alone] == [
        ("B", 1, 128),
        ("B", 2, 128),
        ("M", 2, 1),
        ("M", 2, 128),
    ]
    # Grid: 2 x 2 points, the last axis innermost. B=1, M=1: FLOPs 2·(256·512 + 512·64) =
    # 327,680 (half of the B=2, M=1 count above).
    grid = solar.sweep(
        str(EXAMPLE), {"B": [1, 2], "M": [1, 128]}, arch="H100_PCIe_paper", grid=True
    )
    assert [(p["dims"]["B"], p["dims"]["M"]) for p in grid] == [(1, 1), (1, 128), (2, 1), (2, 128)]
    assert grid[0]["flops"] == 327_680 and grid[0]["axis"] is None
    # Two archs: archs innermost.
    two = solar.sweep(str(EXAMPLE), {"B": [2]}, arch=["H100_PCIe_paper", "H100_PCIe"])
    assert [p["arch"] for p in two] == ["H100_PCIe_paper", "H100_PCIe"]


def test_sweep_pytorch_program_constants_and_constructor_args():
    # linear_with_bias: batch_size 256, in 8192, out 8192 (constructor arguments from
    # get_init_inputs()). batch 128: MACs 128·8192·8192 = 8,589,934,592 -> 17,179,869,184
    # FLOPs; bytes 4·(128·8192 + 8192·8192 + 8192 + 128·8192) = 276,856,832 (one node: unfused
    # = fused). out_features 4096 at batch 256: MACs 256·8192·4096 -> 17,179,869,184 FLOPs.
    told = []
    points = solar.sweep(
        str(LINEAR),
        {"batch_size": [128], "out_features": [4096]},
        arch="H100_PCIe",
        progress=lambda done, total, dims, seconds: told.append((done, total, dims)),
    )
    assert told == [(1, 2, {"batch_size": 128}), (2, 2, {"out_features": 4096})]
    assert [p["dims"] for p in points] == [
        {"batch_size": 128, "out_features": 8192},
        {"batch_size": 256, "out_features": 4096},
    ]
    assert points[0]["flops"] == 17_179_869_184
    assert points[0]["bytes"] == {"unfused": 276_856_832, "fused": 276_856_832}
    assert points[1]["flops"] == 17_179_869_184


def test_sweep_of_a_pytorch_program_prints_a_line_per_point_on_a_pipe():
    # Two configurations, each captured: "point 1/2 (batch_size=2) in S s (R/min, T left)",
    # then "point 2/2 ... done"; --quiet prints none of them (the table still prints).
    args = ("sweep", str(LINEAR), "--dim", "batch_size=2,4")
    r = solar_cli(*args)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ": point " in ln]
    assert len(lines) == 2, r.stderr
    assert lines[0].startswith(f"{LINEAR}: point 1/2 (batch_size=2) in ")
    assert lines[0].endswith(" left)") and "/min, " in lines[0]
    assert lines[1].startswith(f"{LINEAR}: point 2/2 (batch_size=4) in ")
    assert lines[1].endswith("/min, done)")
    quiet = solar_cli(*args, "--quiet")
    assert quiet.returncode == 0 and ": point " not in quiet.stderr
    assert quiet.stdout == r.stdout


def test_sweep_pytorch_unknown_constant():
    r = solar_cli("sweep", str(LINEAR), "--dim", "hidden=1,2")
    assert r.returncode == 1
    assert "has no module-level integer constant 'hidden'" in r.stderr
    assert "batch_size, in_features, out_features" in r.stderr


def test_sweep_html_and_png_have_one_plot_per_axis(tmp_path):
    pytest.importorskip("matplotlib")
    html, png = tmp_path / "sweep.html", tmp_path / "png"
    r = solar_cli(
        "sweep", str(ROOT / "examples/ir/transformer_block.py"), "--dim", "B=1,2,4",
        "--dim", "S=512:2048:x2", "--arch", "Jetson_Thor", "--html", str(html), "--png", str(png),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    text = html.read_text()
    # Two axes (B and S) -> two sweep sections, each with its own inline SVG plot.
    assert 'id="sweep"' in text and 'id="sweep_2"' in text
    assert "Sweep of B" in text and "Sweep of S" in text
    assert sorted(p.name for p in png.iterdir()) == ["sweep.png", "sweep_2.png"]
