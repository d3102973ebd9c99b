"""The cache-aware mode from Python: the proven bound and the best schedule found on the
analysis object, the CLI table, the JSON fields and the curve files. Every number is derived
by hand in the comment beside it."""

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
    # H100 PCIe L2 = 50 * 2^20 = 52,428,800 B > every tensor together (1.51 MB). The bound is
    # max(fused, per-nest bounds): every per-nest bound is below the compulsory traffic at this
    # capacity, so it is the fused 985,088 B; the best schedule found keeps y on chip and
    # moves every tensor once: the same 985,088 B (gap 1.00).
    a = solar.analyze(solar.trace(EXAMPLE), arch="H100_PCIe")
    assert a.cache.available and a.cache.level == "L2"
    assert a.cache.capacity_bytes == 52_428_800
    # The bound's capacity is all on-chip storage: L2 52,428,800 + L1/shared 114 x 256 KiB
    # (29,884,416) + constant caches 114 x 8 KiB (933,888) + registers 114 x 256 KiB
    # (29,884,416) = 113,131,520 B.
    assert a.cache.bound_capacity_bytes == 113_131_520
    assert a.cache_aware.bytes == FUSED == a.fused.bytes
    assert a.cache_schedule.bytes == FUSED and a.cache_schedule.gap == 1.0
    # Node by node: linear#0 alone moves x + W + b + y = 1,312,768 B (its bias nest writes y
    # and its MAC nest accumulates into it: y stays on chip between the two).
    assert a.nodes[0].cache_aware_bytes == 1_312_768
    assert a.nodes[0].cache_schedule_bytes == 1_312_768


def test_node_bound_above_its_unfused_bytes_at_a_small_capacity():
    # matmul#0 alone, z[b,m,p] += y[b,m,n] D[n,p], B=2 M=128 N=512 P=64 fp32, at C = 4 KiB:
    # y, D, z all cross DRAM; HBL exponents 1/2 each (every rank is in two of them), budget
    # 2C + M. At M = 4C = 16,384: budget 24,576 B, each tensor gets a third, 2,048 elements
    # (below its size), so a segment executes at most 2,048^1.5 = 92,681.9 points; the 2^23 =
    # 8,388,608 points need ceil(90.51) = 91 segments: Q >= 90 x 16,384 = 1,474,560 B (the
    # other segment sizes give less, e.g. M = 2^3.5 C: 126 segments, 1,448,154 B). That is
    # above the node's unfused 720,896 B: no schedule that fits 4 KiB moves less.
    graph = solar.trace(EXAMPLE)
    assert _core.cache_aware_bound_bytes(graph, 4096.0, node=1) == 1_474_560
    schedule = _core.cache_schedule_bytes(graph, 4096.0, node=1)
    assert schedule >= 1_474_560
    # The graph bound at 4 KiB is the fused traffic: y is an intermediate there (it may be
    # produced on chip), and matmul#0 alone with only z and D constrained bounds nothing more.
    assert _core.cache_aware_bound_bytes(graph, 4096.0) == FUSED


def b200_without_levels(tmp_path) -> str:
    """B200.yaml cut before its on_chip list (its last fields): a spec with no on-chip level."""
    text = (ROOT / "configs" / "arch" / "B200.yaml").read_text()
    path = tmp_path / "B200.yaml"
    path.write_text(text[: text.index("\non_chip:") + 1])
    return str(path)


def test_no_cache_level_gives_none(tmp_path):
    a = solar.analyze(solar.trace(EXAMPLE), arch=b200_without_levels(tmp_path))
    assert a.cache_aware is None and a.cache_schedule is None
    assert "has no on-chip memory level" in a.cache.reason


def test_cache_aware_can_be_turned_off():
    # H100_PCIe has an L2; cache_aware=False skips the search: no row, and the reason says so.
    a = solar.analyze(solar.trace(EXAMPLE), arch="H100_PCIe", cache_aware=False)
    assert a.cache_aware is None and a.cache_schedule is None
    assert a.cache.reason == "the cache-aware mode was not requested"
    assert a.fused.bytes == FUSED  # the other modes are unchanged
    r = solar_cli("analyze", str(EXAMPLE), "--arch", "H100_PCIe", "--no-cache-aware")
    assert r.returncode == 0, r.stderr
    assert "Cache-aware" not in r.stdout
    assert "cache-aware: none (the cache-aware mode was not requested)" in r.stdout


def test_tiled_fusion_reaches_the_fused_traffic_below_the_working_set():
    graph = solar.trace(EXAMPLE)
    # 512 KiB = 524,288 B: y (524,288 B) cannot stay whole (nothing would be left), but the
    # three nests (bias, MAC, matmul) can fuse tile by tile along y's N dim (e.g. tile 16 of
    # the tiles tried, 1, 16, 256), its loop outermost in all three: a y tile 2*128*16*4 =
    # 16,384 B on chip; held across the tiles, x (262,144 B, no N) and z (65,536 B, N is its
    # reduction); in turn, a W tile 16*256*4 = 16,384 B, the bias tile or a D tile: about
    # 352 KiB in all.
    # Every tensor crosses DRAM once: the fused 985,088 B, which is also the bound here.
    assert _core.cache_schedule_bytes(graph, 524_288) == FUSED
    assert _core.cache_aware_bound_bytes(graph, 524_288) == FUSED
    # 256 KiB = 262,144 B: x alone fills it; tensors are re-fetched: more than fused.
    assert _core.cache_schedule_bytes(graph, 262_144) > FUSED


def test_curve_is_plain_data():
    points = solar.cache_aware_curve(EXAMPLE, "H100_PCIe")
    caps = [p["capacity_bytes"] for p in points]
    # Tensors total 262,144 + 524,288 + 2,048 + 131,072 + 524,288 + 65,536 = 1,509,376 B:
    # powers of two 1 KiB .. 2 MiB (2^10 .. 2^21, 12 points) plus the L2's 52,428,800 B.
    assert caps == [2.0**i for i in range(10, 22)] + [52_428_800.0]
    assert all(set(p) == {"capacity_bytes", "dram_bytes", "schedule_bytes"} for p in points)
    assert points[-1]["dram_bytes"] == FUSED == points[-1]["schedule_bytes"]
    # The bound is never below the fused traffic, the schedule never below the bound, and a
    # larger buffer never makes the best schedule found worse.
    assert all(p["dram_bytes"] >= FUSED for p in points)
    assert all(p["schedule_bytes"] >= p["dram_bytes"] for p in points)
    sched = [p["schedule_bytes"] for p in points]
    assert sched == sorted(sched, reverse=True)
    nodes = solar.cache_aware_node_curves(EXAMPLE, "H100_PCIe")
    assert [n["node"] for n in nodes] == ["linear#0", "matmul#0"]
    # matmul#0 alone with everything on chip: y + D + z = 524,288 + 131,072 + 65,536.
    assert nodes[1]["points"][-1]["dram_bytes"] == 720_896
    # At 4 KiB (index 2) its bound is 1,474,560 B (test above).
    assert nodes[1]["points"][2]["dram_bytes"] == 1_474_560


def test_cli_table_json_and_curve(tmp_path):
    out, curve = tmp_path / "a.json", tmp_path / "c.csv"
    r = solar_cli(
        "analyze", str(EXAMPLE), "--arch", "H100_PCIe", "--json", str(out), "--curve", str(curve)
    )
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith("Cache-aware"))
    assert "985 kB" in row  # 985,088 B
    assert "cache-aware: on-chip level L2, 52.4 MB (52,428,800 B)" in r.stdout
    assert "proven lower bound" in r.stdout
    assert "best schedule found: 985 kB (985,088 B; achievable, 1.00x the bound)" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["cache"] == {
        "level": "L2",
        "capacity_bytes": 52428800.0,
        "bound_capacity_bytes": 113131520.0,  # all on-chip levels (test above)
        "reason": "",
    }
    assert doc["totals"]["bytes"]["cache_aware"] == FUSED
    # 985,088 B / 2.0e12 B/s = 4.92544e-7 s (memory-bound: 83.9 MFLOP / 378e12 = 0.22 us).
    assert abs(doc["totals"]["seconds"]["cache_aware"] - 985_088 / 2.0e12) < 1e-18
    assert doc["totals"]["bottleneck"]["cache_aware"] == "memory"
    sched = doc["totals"]["cache_schedule"]
    assert sched["bytes"] == FUSED and sched["gap"] == 1.0
    assert abs(sched["seconds"] - 985_088 / 2.0e12) < 1e-18
    assert doc["nodes"][1]["bytes_cache_aware"] == 720_896
    assert doc["nodes"][1]["bytes_cache_schedule"] == 720_896
    rows = list(csv.DictReader(curve.open()))
    assert list(rows[0]) == ["scope", "capacity_bytes", "dram_bytes", "schedule_bytes"]
    assert (rows[0]["scope"], rows[0]["capacity_bytes"]) == ("graph", "1024")
    # 1 KiB holds none of the tensors whole: the schedule re-fetches; the graph bound stays
    # the fused traffic (see test_node_bound_above_its_unfused_bytes_at_a_small_capacity).
    assert int(rows[0]["schedule_bytes"]) > FUSED == int(rows[0]["dram_bytes"])
    assert {r["scope"] for r in rows} == {"graph", "linear#0", "matmul#0"}
    assert [r for r in rows if r["scope"] == "graph"][-1]["dram_bytes"] == str(FUSED)


def test_cli_without_cache_level_and_bad_curve_suffix(tmp_path):
    out = tmp_path / "a.json"
    no_levels = b200_without_levels(tmp_path)
    r = solar_cli("analyze", str(EXAMPLE), "--arch", no_levels, "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "Cache-aware" not in r.stdout and "best schedule" not in r.stdout
    assert "cache-aware: none (arch 'B200' has no on-chip memory level" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["totals"]["bytes"]["cache_aware"] is None
    assert doc["totals"]["cache_schedule"] is None
    assert doc["nodes"][0]["bytes_cache_schedule"] is None
    assert doc["cache"]["level"] is None and "no on-chip" in doc["cache"]["reason"]
    r = solar_cli("analyze", str(EXAMPLE), "--curve", str(tmp_path / "c.txt"))
    assert r.returncode == 1
    assert "must end in .csv or .json" in r.stderr and "Traceback" not in r.stderr


def test_curve_json(tmp_path):
    curve = tmp_path / "c.json"
    r = solar_cli("analyze", str(EXAMPLE), "--arch", "H100_PCIe", "--curve", str(curve))
    assert r.returncode == 0, r.stderr
    doc = json.loads(curve.read_text())
    assert doc["schema"] == "solar.cache_curve/2"
    assert doc["cache_level"] == "L2" and doc["platform_capacity_bytes"] == 52_428_800
    assert doc["graph"][-1] == {
        "capacity_bytes": 52_428_800,
        "dram_bytes": FUSED,
        "schedule_bytes": FUSED,
    }
    assert [n["node"] for n in doc["nodes"]] == ["linear#0", "matmul#0"]


CHAIN = """from solar.ir import kernel, Tensor, Dim

@kernel
def inc(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for n in Dim("N", parallel=True):
        Y[n] = X[n] + 1.0
    return Y

DIMS = {"N": 268435456}

def model(x: Tensor("N", role="input")):
    return inc(inc(inc(x)))
"""


def test_elementwise_chain_is_bounded_by_the_fused_traffic(tmp_path):
    # Three elementwise kernels over 2^28 fp32 (1 GiB each) on H100 PCIe: fused = x + the
    # output = 2^31 = 2,147,483,648 B; the bound is that and the schedule fuses the chain
    # tile by tile to reach it. At 5dd0d0b the Cache-aware row said 4.29 GB (one intermediate
    # spilled), above what torch.compile's fused kernel moves.
    path = tmp_path / "chain.py"
    path.write_text(CHAIN)
    r = solar_cli("analyze", str(path), "--arch", "H100_PCIe")
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith("Cache-aware"))
    assert "2.15 GB" in row
    assert "best schedule found: 2.15 GB (2,147,483,648 B; achievable, 1.00x the bound)" in (
        r.stdout
    )


def test_per_node_table_has_the_bound_and_the_schedule(tmp_path):
    # --per-node: each node's bound alone and its best schedule alone; at the H100 L2 both are
    # the node's unfused bytes (linear#0: 1,312,768 B; matmul#0: 720,896 B, see above).
    r = solar_cli("analyze", str(EXAMPLE), "--arch", "H100_PCIe", "--per-node")
    assert r.returncode == 0, r.stderr
    header = next(line for line in r.stdout.splitlines() if line.startswith("Node "))
    assert "Cache-aware B" in header and "Schedule B" in header
    row = next(line for line in r.stdout.splitlines() if line.startswith("matmul#0"))
    assert row.count("720,896") == 3  # unfused bytes, bound, schedule
    r = solar_cli("analyze", str(EXAMPLE), "--arch", b200_without_levels(tmp_path), "--per-node")
    header = next(line for line in r.stdout.splitlines() if line.startswith("Node "))
    assert "Cache-aware B" not in header


RELU = """from solar.ir import kernel, Tensor, Dim

@kernel
def relu(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for n in Dim("N", parallel=True):
        Y[n] = max(X[n], 0.0)
    return Y

DIMS = {"N": 1024}

def model(x: Tensor("N", role="input")):
    return relu(x)
"""


def test_schedule_is_exact_up_to_the_search_limit(tmp_path):
    # A relu over N fp32 moves x and y once: 8N bytes, the bound and the schedule alike.
    # N = 2^40: 2^43 = 8,796,093,022,208 B. N = 2^57: 2^60 B; the search used to form
    # N x 32 bits = 2^62 > 2^61 - 1, saturate and divide by 8, printing 2^59 - 1 B per tensor
    # (0.50x the bound).
    path = tmp_path / "relu.py"
    path.write_text(RELU)
    for n, total in ((1 << 40, 1 << 43), (1 << 57, 1 << 60)):
        a = solar.analyze(solar.trace(str(path), dims={"N": n}), arch="H100_PCIe")
        assert a.cache_aware.bytes == total
        assert a.cache_schedule.bytes == total and a.cache_schedule.gap == 1.0
        assert a.nodes[0].cache_schedule_bytes == total


def test_schedule_beyond_the_search_limit_is_refused(tmp_path):
    # N = 2^59: 2^61 B per tensor, at the search's limit 2^61 - 1 (it printed 0.12x the bound).
    # The refusal points at the kernel call in model() (line 13, col 12).
    path = tmp_path / "relu.py"
    path.write_text(RELU)
    r = solar_cli("analyze", str(path), "--arch", "H100_PCIe", "--dim", f"N={1 << 59}")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert (
        f"{path}:13:12: error[overflow]: the graph (node 'relu#0' moves the most): the DRAM "
        in (r.stderr)
    )
    assert "reach 2^61 - 1 = 2305843009213693951" in r.stderr
    assert "best schedule found:" not in r.stdout
    # An int8 relu over 2^61 elements: 2^61 B per tensor fit in int64, but its 2^61
    # iterations reach the search's limit, which then could not count trips exactly: refused
    # at the same call site, naming the einsum.
    int8 = tmp_path / "relu8.py"
    int8.write_text(
        RELU.replace('"N")', '"N", dtype="int8")')
        .replace('role="input")', 'role="input", dtype="int8")')
        .replace("X.shape[0])", 'X.shape[0], dtype="int8")')
        .replace("0.0)", "0)")
    )
    r = solar_cli("analyze", str(int8), "--arch", "H100_PCIe", "--dim", f"N={1 << 61}")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"{int8}:13:12: error[overflow]: node 'relu#0': the iterations of einsum " in r.stderr
    # Without the cache-aware mode the fp32 program is analysed: the 2^61-byte tensors fit in
    # int64 (fused bytes 2^62).
    r = solar_cli(
        "analyze", str(path), "--arch", "H100_PCIe", "--dim", f"N={1 << 59}", "--no-cache-aware"
    )
    assert r.returncode == 0, r.stderr
