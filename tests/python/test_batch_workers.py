"""Warm workers of `solar batch` (solar/zygote.py): the same results as one process per
workload, and the same isolation: a workload that is killed, hangs, or kills the zygote
itself loses no other workload's result."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCALE = """
from solar.ir import kernel, Tensor, Dim
@kernel
def scale(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = X[i] * {k}
    return Y
DIMS = {{"N": 64}}
def model(x: Tensor("N")):
    return scale(x)
"""

TORCH = """
import os, signal, time
import torch
import torch.nn as nn
{prelude}
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2
def get_inputs():
    return [torch.randn(8, 16)]
def get_init_inputs():
    return []
"""

# Kills the zygote: the topmost ancestor whose command line is solar.zygote's (its forked
# descendants keep that command line: the workload's process, and the contained run's
# middle process, the program's parent; solar/contain.py). Run cold, it finds none.
KILL_ZYGOTE = """
pid, zygote = os.getppid(), 0
while pid > 1:
    if b"solar.zygote" in open(f"/proc/{pid}/cmdline", "rb").read():
        zygote = pid
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
if zygote:
    os.kill(zygote, signal.SIGKILL)
    time.sleep(2)
"""


def batch(paths, out: Path, *extra):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "solar.cli",
            "batch",
            *map(str, paths),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--no-validate",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )


def results(out: Path) -> dict:
    return {Path(r["source"]).name: r for r in map(json.loads, out.read_text().splitlines())}


def suite(tmp_path: Path, extra: dict | None = None) -> list[Path]:
    d = tmp_path / "suite"
    d.mkdir()
    for k in range(3):
        (d / f"scale{k}.py").write_text(SCALE.format(k=k + 2))
    (d / "relu.py").write_text(TORCH.format(prelude=""))
    for name, text in (extra or {}).items():
        (d / name).write_text(text)
    return sorted(d.glob("*.py"))


def test_warm_and_cold_workers_give_the_same_results(tmp_path):
    """3 IR programs and a PyTorch one: equal totals either way (relu: 8 x 16 fp32 in and
    out, 1,024 B fused)."""
    files = suite(tmp_path)
    warm, cold = (
        batch(files, tmp_path / "w.jsonl"),
        batch(files, tmp_path / "c.jsonl", "--workers", "cold"),
    )
    assert warm.returncode == 0 and cold.returncode == 0, warm.stderr + cold.stderr
    w, c = results(tmp_path / "w.jsonl"), results(tmp_path / "c.jsonl")
    assert set(w) == set(c) == {"scale0.py", "scale1.py", "scale2.py", "relu.py"}
    assert all(w[k]["totals"] == c[k]["totals"] for k in w)
    assert w["relu.py"]["totals"]["bytes"]["fused"] == 1024
    # stderr is a pipe here: one line per entry with the count, the pace and the time
    # left, the last one "done".
    lines = [ln for ln in warm.stderr.splitlines() if ln.startswith("[")]
    assert [ln[:7] for ln in lines] == ["[   1/4", "[   2/4", "[   3/4", "[   4/4"], warm.stderr
    assert all(" left)" in ln and "/min, " in ln for ln in lines[:3]), lines
    assert lines[3].endswith("/min, done)"), lines


def test_quiet_batch_prints_no_progress(tmp_path):
    """--quiet: the IR programs are analysed, stderr holds no per-entry line; the summary
    still prints on stdout."""
    files = [f for f in suite(tmp_path) if f.name.startswith("scale")]
    r = batch(files, tmp_path / "q.jsonl", "--quiet", "--workers", "cold")
    assert r.returncode == 0, r.stderr
    assert len(results(tmp_path / "q.jsonl")) == 3
    assert not [ln for ln in r.stderr.splitlines() if ln.startswith("[")], r.stderr
    assert r.stdout.strip()


def test_a_killed_or_hanging_workload_loses_nothing_else(tmp_path):
    """One workload SIGKILLs itself, one sleeps past the 20 s timeout: both are recorded as
    errors naming why, every other workload is analysed, and the hung one's process is
    gone when the batch ends."""
    files = suite(
        tmp_path,
        {
            "killed.py": TORCH.format(prelude="os.kill(os.getpid(), signal.SIGKILL)"),
            "hang.py": TORCH.format(
                prelude="open(os.environ['HANG_PID'], 'w').write(str(os.getpid()))\ntime.sleep(600)"
            ),
        },
    )
    import os

    pid_file = tmp_path / "hang.pid"
    env = dict(os.environ, HANG_PID=str(pid_file))
    start = time.monotonic()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "solar.cli",
            "batch",
            *map(str, files),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--jobs",
            "2",
            "--no-validate",
            "--timeout",
            "20",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    got = results(tmp_path / "o.jsonl")
    assert got["killed.py"]["status"] == "error"
    assert "killed by signal 9 (SIGKILL)" in got["killed.py"]["message"]
    assert (
        got["hang.py"]["stage"] == "timeout" and "timed out after 20 s" in got["hang.py"]["message"]
    )
    assert all(got[n]["status"] == "ok" for n in ("scale0.py", "scale1.py", "scale2.py", "relu.py"))
    hung = int(pid_file.read_text())
    assert (
        not Path(f"/proc/{hung}").exists()
        or "zombie" in Path(f"/proc/{hung}/status").read_text().lower()
    )
    assert time.monotonic() - start < 300


def test_a_dead_zygote_hands_its_workloads_to_cold_processes(tmp_path):
    """A workload SIGKILLs the zygote: the workloads in flight and the rest run in their
    own processes, and every one of the 5 is analysed (the killer too, run cold)."""
    files = suite(tmp_path, {"killer.py": TORCH.format(prelude=KILL_ZYGOTE)})
    r = batch(files, tmp_path / "o.jsonl")
    assert r.returncode == 0, r.stderr
    got = results(tmp_path / "o.jsonl")
    assert len(got) == 5 and all(v["status"] == "ok" for v in got.values()), got
    assert "the warm workers ended during the batch: " in r.stderr


def test_sources_only_the_agent_translates_are_skipped_with_the_way_in(tmp_path):
    """A folder with a NumPy program and an IR one: the NumPy source is named as skipped
    (`solar analyze --lang`), the IR program is analysed."""
    files = suite(tmp_path)[:1]
    np_source = files[0].parent / "np_prog.py"
    np_source.write_text("import numpy as np\n\ndef forward(x):\n    return x\n")
    r = batch([files[0].parent], tmp_path / "o.jsonl")
    assert r.returncode == 0, r.stderr
    assert "skipping 1 program(s) in languages only the LLM agent translates (NumPy): " in (
        r.stderr
    )
    assert "np_prog.py" not in results(tmp_path / "o.jsonl")
