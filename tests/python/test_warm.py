"""The starting state (docs/sol-modes.md, "Starting state"): every report says the bounds start
inputs and weights in DRAM; --warm (solar.analyze(warm=True)) lets the last-level cache serve
up to its capacity of the fused and cache-aware modes' DRAM bytes, at its bandwidth.

The program is a relu over N = 1,024 fp32 elements: x 4,096 B in, y 4,096 B out, fused bytes
8,192. The spec has round numbers: DRAM 1e12 B/s, vector 1e12 FLOP/s, an L2 at 4e12 B/s.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import solar
from solar.score import Score, report
from solar.timings import timings_line

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

SPEC = """name: warm_test
description: a test spec with round numbers (not a datasheet spec)
sparsity: dense
clock: assumed
sources:
  t: "round numbers for tests/python/test_warm.py"
matrix_flops_per_second:
  fp32: {{value: 2.0e12, source: t}}
vector_flops_per_second:
  fp32: {{value: 1.0e12, source: t}}
dram:
  bytes_per_second: {{value: 1.0e12, source: t}}
on_chip:
  - name: L2
    capacity_bytes: {{value: {capacity}, source: t}}
    bytes_per_second: {{value: 4.0e12, source: t}}
cache_level: L2
"""

FUSED = 8_192  # x 1,024 x 4 B + y 1,024 x 4 B


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "relu.py"
    path.write_text(RELU)
    return path


def spec(tmp_path, capacity: int):
    path = tmp_path / f"warm_test_{capacity}.yaml"
    path.write_text(SPEC.format(capacity=capacity))
    return str(path)


def test_cold_by_default(program, tmp_path):
    a = solar.analyze(str(program), arch=spec(tmp_path, 16_384))
    assert not a.starting_state.warm
    assert "inputs and weights start in DRAM" in a.starting_state.assumption
    # 8,192 B / 1e12 B/s = 8.192 ns.
    assert a.fused.bytes == FUSED and a.fused.llc_bytes == 0
    assert a.fused.seconds == pytest.approx(FUSED / 1e12)


def test_warm_inputs_that_fit_are_served_by_the_llc(program, tmp_path):
    # C = 16,384 B >= 8,192 B: x and y stay in L2 between runs. DRAM 0 B; the L2 serves
    # 8,192 B at 4e12 B/s = 2.048 ns, above the vector time (1,024 compares / 1e12 = 1.024 ns
    # at most), so the bound is 2.048 ns, against 8.192 ns cold.
    a = solar.analyze(str(program), arch=spec(tmp_path, 16_384), warm=True)
    assert a.starting_state.warm and a.starting_state.level == "L2"
    assert a.fused.bytes == 0 and a.fused.llc_bytes == FUSED
    assert a.fused.vector_seconds < FUSED / 4e12
    assert a.fused.seconds == pytest.approx(FUSED / 4e12)
    assert a.fused.bottleneck.unit == "llc"
    # The cache-aware bound of one elementwise nest is its compulsory traffic: the same split.
    assert a.cache_aware.bytes == 0 and a.cache_aware.llc_bytes == FUSED
    # The unfused mode stays cold.
    assert a.unfused.seconds == pytest.approx(FUSED / 1e12)


def test_warm_inputs_that_do_not_fit_save_the_capacity(program, tmp_path):
    # C = 4,096 B < 8,192 B: DRAM 8,192 - 4,096 = 4,096 B / 1e12 = 4.096 ns; L2 4,096 B / 4e12
    # = 1.024 ns: the bound is 4.096 ns.
    a = solar.analyze(str(program), arch=spec(tmp_path, 4_096), warm=True)
    assert a.fused.bytes == 4_096 and a.fused.llc_bytes == 4_096
    assert a.fused.seconds == pytest.approx(4_096 / 1e12)


def test_warm_without_a_cache_level_is_unchanged(program, tmp_path):
    # The same spec without on_chip: nothing can stay on chip between runs, so the warm bound
    # is the cold 8,192 B / 1e12 = 8.192 ns, and the line says why.
    text = SPEC.format(capacity=1)
    path = tmp_path / "no_levels.yaml"
    path.write_text(text[: text.index("on_chip:")])
    a = solar.analyze(str(program), arch=str(path), warm=True)
    assert not a.starting_state.warm
    assert "--warm needs a last-level cache" in a.starting_state.assumption
    assert a.fused.bytes == FUSED and a.fused.llc_bytes == 0
    assert a.fused.seconds == pytest.approx(FUSED / 1e12)


def test_cli_text_and_json_state_the_assumption(program, tmp_path):
    arch = spec(tmp_path, 16_384)
    out = tmp_path / "cold.json"
    r = cli("analyze", str(program), "--arch", arch, "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "  starting state: inputs and weights start in DRAM" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["starting_state"]["warm"] is False
    assert "inputs and weights start in DRAM" in doc["starting_state"]["assumption"]
    out = tmp_path / "warm.json"
    r = cli("analyze", str(program), "--arch", arch, "--warm", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "starting state: warm:" in r.stdout
    assert "served by L2: fused 8.19 kB (8,192 B)" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["starting_state"]["warm"] is True
    assert doc["starting_state"]["level"] == "L2"
    assert doc["starting_state"]["llc_bytes"]["fused"] == FUSED
    assert doc["totals"]["bytes"]["fused"] == 0
    assert doc["totals"]["seconds"]["fused"] == pytest.approx(FUSED / 4e12)


def test_batch_takes_warm():
    r = cli("batch", "--help")
    assert r.returncode == 0 and "--warm" in r.stdout


def test_score_says_which_timings_the_bounds_need():
    cold = report([Score("p", 1e-6, 2e-6, 3e-6, 0.5, "")], [], "fused")
    assert cold.splitlines()[-1] == timings_line(False)
    assert "start in DRAM" in timings_line(False) and "caches flushed" in timings_line(False)
    warm = report([Score("p", 1e-6, 2e-6, 3e-6, 0.5, "", warm=True)], [], "fused")
    assert warm.splitlines()[-1] == timings_line(True)
    assert "without flushing" in timings_line(True)
