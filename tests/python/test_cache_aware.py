"""The cache-aware mode from Python: the analysis object, the CLI table, the JSON fields and
the curve files. Every number is derived by hand in the comment beside it."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import solar
from solar import _core

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ir" / "linear_bias_matmul.py"

# The paper's example: B=2, M=128, K=256, N=512, P=64, fp32.
#   x 2*128*256*4 = 262,144 B; W 512*256*4 = 524,288 B; b 2,048 B; D 512*64*4 = 131,072 B;
#   y 2*128*512*4 = 524,288 B; z 2*128*64*4 = 65,536 B.
FUSED = 985_088  # x + W + b + D + z


def solar_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_cache_aware_equals_fused_when_everything_fits():
    # H100 PCIe L2 = 50 * 2^20 = 52,428,800 B > every tensor together (1.51 MB): y stays on
    # chip, every nest moves its compulsory traffic: the fused 985,088 B.
    a = solar.analyze(solar.trace(EXAMPLE), arch="H100_PCIe")
    assert a.cache.available and a.cache.level == "L2"
    assert a.cache.capacity_bytes == 52_428_800
    assert a.cache_aware.bytes == FUSED == a.fused.bytes
    # Node by node: linear#0 alone moves x + W + b + y = 1,312,768 B (its bias nest writes y
    # and its MAC nest accumulates into it: y stays on chip between the two).
    assert a.nodes[0].cache_aware_bytes == 1_312_768


def test_no_cache_level_gives_none():
    a = solar.analyze(solar.trace(EXAMPLE), arch="B200")
    assert a.cache_aware is None
    assert "has no on-chip memory level" in a.cache.reason


def test_cache_aware_can_be_turned_off():
    # H100_PCIe has an L2; cache_aware=False skips the search: no row, and the reason says so.
    a = solar.analyze(solar.trace(EXAMPLE), arch="H100_PCIe", cache_aware=False)
    assert a.cache_aware is None
    assert a.cache.reason == "the cache-aware mode was not requested"
    assert a.fused.bytes == FUSED  # the other modes are unchanged
    r = solar_cli("analyze", str(EXAMPLE), "--arch", "H100_PCIe", "--no-cache-aware")
    assert r.returncode == 0, r.stderr
    assert "Cache-aware" not in r.stdout
    assert "cache-aware: none (the cache-aware mode was not requested)" in r.stdout


def test_tiled_fusion_reaches_the_fused_traffic_below_the_working_set():
    graph = solar.trace(EXAMPLE)
    # 512 KiB = 524,288 B: y (524,288 B) cannot stay whole (nothing would be left), but y's N
    # dim tiled by 16 (a tile size of the run search: 1, 16, 256) and outermost in both
    # kernels can: a y tile 2*128*16*4 = 16,384 B, x whole 262,144 B, a W tile 16*256*4 =
    # 16,384 B and the bias 2,048 B fit in linear#0; matmul#0 holds z whole (65,536 B; N is
    # its reduction, so z stays while N runs) and a D tile. Every tensor crosses DRAM once:
    # the fused 985,088 B (no mapping moves less).
    assert _core.cache_schedule_bytes(graph, 524_288) == FUSED
    # 256 KiB = 262,144 B: x alone fills it; tensors are re-fetched: more than fused.
    assert _core.cache_schedule_bytes(graph, 262_144) > FUSED


def test_curve_is_plain_data():
    points = solar.cache_aware_curve(EXAMPLE, "H100_PCIe")
    caps = [p["capacity_bytes"] for p in points]
    # Tensors total 262,144 + 524,288 + 2,048 + 131,072 + 524,288 + 65,536 = 1,509,376 B:
    # powers of two 1 KiB .. 2 MiB (2^10 .. 2^21, 12 points) plus the L2's 52,428,800 B.
    assert caps == [2.0**i for i in range(10, 22)] + [52_428_800.0]
    assert all(set(p) == {"capacity_bytes", "dram_bytes"} for p in points)
    assert points[-1]["dram_bytes"] == FUSED
    assert all(p["dram_bytes"] >= FUSED for p in points)
    nodes = solar.cache_aware_node_curves(EXAMPLE, "H100_PCIe")
    assert [n["node"] for n in nodes] == ["linear#0", "matmul#0"]
    # matmul#0 alone with everything on chip: y + D + z = 524,288 + 131,072 + 65,536.
    assert nodes[1]["points"][-1]["dram_bytes"] == 720_896


def test_cli_table_json_and_curve(tmp_path):
    out, curve = tmp_path / "a.json", tmp_path / "c.csv"
    r = solar_cli(
        "analyze", str(EXAMPLE), "--arch", "H100_PCIe", "--json", str(out), "--curve", str(curve)
    )
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith("Cache-aware"))
    assert "985 kB" in row  # 985,088 B
    assert "cache-aware: on-chip level L2, 52.4 MB (52,428,800 B)" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["cache"] == {"level": "L2", "capacity_bytes": 52428800.0, "reason": ""}
    assert doc["totals"]["bytes"]["cache_aware"] == FUSED
    # 985,088 B / 2.0e12 B/s = 4.92544e-7 s (memory-bound: 83.9 MFLOP / 378e12 = 0.22 us).
    assert abs(doc["totals"]["seconds"]["cache_aware"] - 985_088 / 2.0e12) < 1e-18
    assert doc["totals"]["bottleneck"]["cache_aware"] == "memory"
    assert doc["nodes"][1]["bytes_cache_aware"] == 720_896
    rows = list(csv.DictReader(curve.open()))
    assert (rows[0]["scope"], rows[0]["capacity_bytes"]) == ("graph", "1024")
    assert int(rows[0]["dram_bytes"]) > FUSED  # 1 KiB holds none of the tensors whole
    assert {r["scope"] for r in rows} == {"graph", "linear#0", "matmul#0"}
    assert [r for r in rows if r["scope"] == "graph"][-1]["dram_bytes"] == str(FUSED)


def test_cli_without_cache_level_and_bad_curve_suffix(tmp_path):
    out = tmp_path / "a.json"
    r = solar_cli("analyze", str(EXAMPLE), "--arch", "B200", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "Cache-aware" not in r.stdout
    assert "cache-aware: none (arch 'B200' has no on-chip memory level" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["totals"]["bytes"]["cache_aware"] is None
    assert doc["cache"]["level"] is None and "no on-chip" in doc["cache"]["reason"]
    r = solar_cli("analyze", str(EXAMPLE), "--curve", str(tmp_path / "c.txt"))
    assert r.returncode == 1
    assert "must end in .csv or .json" in r.stderr and "Traceback" not in r.stderr


def test_curve_json(tmp_path):
    curve = tmp_path / "c.json"
    r = solar_cli("analyze", str(EXAMPLE), "--arch", "H100_PCIe", "--curve", str(curve))
    assert r.returncode == 0, r.stderr
    doc = json.loads(curve.read_text())
    assert doc["schema"] == "solar.cache_curve/1"
    assert doc["cache_level"] == "L2" and doc["platform_capacity_bytes"] == 52_428_800
    assert doc["graph"][-1] == {"capacity_bytes": 52_428_800, "dram_bytes": FUSED}
    assert [n["node"] for n in doc["nodes"]] == ["linear#0", "matmul#0"]
