"""`solar score` (solar/score.py): the SOL-ExecBench score S = 1 / (1 + (T_k - T_SOL) /
(T_b - T_SOL)) on hand-made numbers, its undefined and violating cases, and the command."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from solar.errors import UserError
from solar.score import load_timings, sol_score


def test_the_formula_on_hand_made_numbers():
    # T_SOL = 2: a kernel at the bound scores 1, one as fast as the baseline (5) 1/2, and
    # T_k = 3 scores 1 / (1 + 1/3) = 0.75.
    assert sol_score(2.0, 5.0, 2.0) == (1.0, "")
    assert sol_score(5.0, 5.0, 2.0) == (0.5, "")
    assert sol_score(3.0, 5.0, 2.0) == (pytest.approx(0.75), "")
    # Slower than the baseline: T_k = 8 gives 1 / (1 + 6/3) = 1/3.
    assert sol_score(8.0, 5.0, 2.0)[0] == pytest.approx(1 / 3)


def test_a_baseline_at_or_under_the_bound_is_undefined():
    # T_b = T_SOL: the denominator is 0, S undefined, no violation (equal is allowed).
    assert sol_score(3.0, 2.0, 2.0) == (None, "")
    # T_b < T_SOL: undefined, and the baseline beats a lower bound: a violation.
    s, violation = sol_score(3.0, 1.0, 2.0)
    assert s is None and "the baseline (1 s) beats the bound (2 s)" in violation


def test_a_kernel_under_the_bound_is_a_violation():
    # T_k = 1 < T_SOL = 2, T_b = 5: S = 1 / (1 + (-1)/3) = 1.5, flagged.
    s, violation = sol_score(1.0, 5.0, 2.0)
    assert s == pytest.approx(1.5) and "the kernel (1 s) beats the bound (2 s)" in violation


def _results(path, rows):
    path.write_text(
        "".join(
            json.dumps({"source": name, "status": "ok", "totals": {"seconds": {"fused": t}}}) + "\n"
            for name, t in rows
        )
    )


def test_the_command_scores_flags_and_writes_json(tmp_path):
    """Two workloads at T_SOL = 2 ms: gemm (3 ms vs a 5 ms baseline: 0.75) and norm (1 ms,
    under the bound: a violation, exit status 1); a timing with no result is named."""
    results, timings = tmp_path / "r.jsonl", tmp_path / "t.csv"
    _results(results, [("suite/gemm.py", 2e-3), ("suite/norm.py", 2e-3)])
    timings.write_text("name,kernel_ms,baseline_ms\ngemm,3,5\nnorm.py,1,5\nother,1,2\n")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "solar.cli",
            "score",
            str(results),
            "--timings",
            str(timings),
            "--json",
            str(tmp_path / "s.json"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1, r.stderr
    assert "0.750" in r.stdout and "VIOLATION: the kernel (0.001 s) beats the bound" in r.stdout
    assert "mean score 0.750 over 1 workload(s); violations left out" in r.stdout
    assert "no result for 1 timing(s): other" in r.stdout
    doc = json.loads((tmp_path / "s.json").read_text())
    assert [round(s["score"], 3) for s in doc["scores"]] == [0.75, 1.5]
    assert doc["scores"][0]["headroom"] == pytest.approx(1.5)  # 3 ms over 2 ms


def test_timings_errors_name_the_entry(tmp_path):
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"name": "a", "kernel_ms": 1}\n')
    with pytest.raises(UserError, match=r"entry 1: no baseline time"):
        load_timings(str(bad))
    bad.write_text('{"name": "a", "kernel_ms": -1, "baseline_ms": 2}\n')
    with pytest.raises(UserError, match="kernel_ms = -1: the time must be positive"):
        load_timings(str(bad))
    obj = tmp_path / "t.json"
    obj.write_text('{"a": {"kernel_us": 2, "baseline_us": 4}}')
    assert load_timings(str(obj)) == {"a": (pytest.approx(2e-6), pytest.approx(4e-6))}


def test_no_matching_timing_is_one_clear_error(tmp_path):
    results, timings = tmp_path / "r.jsonl", tmp_path / "t.csv"
    _results(results, [("suite/gemm.py", 2e-3)])
    timings.write_text("name,kernel_ms,baseline_ms\nother,3,5\n")
    r = subprocess.run(
        [sys.executable, "-m", "solar.cli", "score", str(results), "--timings", str(timings)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "no workload of" in r.stderr and "has a timing in" in r.stderr


@pytest.mark.parametrize("command", ["score", "headroom"])
def test_a_missing_results_file_is_named(tmp_path, command):
    timings = tmp_path / "t.csv"
    timings.write_text("name,kernel_ms,baseline_ms\na,3,5\n")
    missing = tmp_path / "none.jsonl"
    r = subprocess.run(
        [sys.executable, "-m", "solar.cli", command, str(missing), "--timings", str(timings)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"no such results file: '{missing}'" in r.stderr
