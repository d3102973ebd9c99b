"""`solar batch --engine ray` (solar/ray_engine.py) on a local Ray cluster: the local
engine's results, and a Ray worker killed mid-run costs no workload."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

from test_batch_workers import SCALE, TORCH  # noqa: E402

# Kills the Ray worker (actor) it runs under, once: the marker file says it has.
KILL_ACTOR = """
marker = os.environ["KILL_MARKER"]
if os.environ.get("SOLAR_RAY_WORKER_PID") and not os.path.exists(marker):
    open(marker, "w").write("killed")
    os.kill(int(os.environ["SOLAR_RAY_WORKER_PID"]), signal.SIGKILL)
    time.sleep(5)
"""


def batch(folder: Path, out: Path, *extra, env=None):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "solar.cli",
            "batch",
            str(folder),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--no-validate",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )


def rows(out: Path) -> dict:
    return {Path(r["source"]).name: r for r in map(json.loads, out.read_text().splitlines())}


def test_ray_engine_equals_local_and_survives_a_killed_worker(tmp_path):
    """3 IR programs, a PyTorch one and one that SIGKILLs its Ray worker the first time:
    the dead worker's workload runs again on a new worker, all 5 are analysed, and the
    totals equal the local engine's."""
    import os

    d = tmp_path / "suite"
    d.mkdir()
    for k in range(3):
        (d / f"scale{k}.py").write_text(SCALE.format(k=k + 2))
    (d / "relu.py").write_text(TORCH.format(prelude=""))
    (d / "killer.py").write_text(TORCH.format(prelude=KILL_ACTOR))
    env = dict(os.environ, KILL_MARKER=str(tmp_path / "killed"))
    ray_run = batch(d, tmp_path / "ray.jsonl", "--engine", "ray", env=env)
    assert ray_run.returncode == 0, ray_run.stderr
    # The cluster's fixed cost is reported apart (bench/bench_batch.py subtracts it).
    assert re.search(r"^ray: started a local cluster of 2 CPUs in [0-9.]+ s$", ray_run.stderr, re.M)
    assert re.search(r"^ray: stopped the local cluster in [0-9.]+ s$", ray_run.stderr, re.M)
    assert (tmp_path / "killed").exists()  # the worker was killed once
    local = batch(d, tmp_path / "local.jsonl", env=env)
    assert local.returncode == 0, local.stderr
    r, lo = rows(tmp_path / "ray.jsonl"), rows(tmp_path / "local.jsonl")
    assert set(r) == set(lo) and len(r) == 5
    assert all(v["status"] == "ok" for v in r.values()), r
    assert all(r[k]["totals"] == lo[k]["totals"] for k in r)
    # Resume is the local engine's: nothing left to run.
    again = batch(d, tmp_path / "ray.jsonl", "--engine", "ray", env=env)
    assert "resuming: 5 of 5 already in" in again.stderr
