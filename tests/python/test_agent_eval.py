"""bench/agent_eval.py end to end against the scripted server (tests/python/scripted_llm.py):
the server answers each translation with the suite's hand-written IR (workloads/*/ir/), except
for relu.cu, which it never answers with a program."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from scripted_llm import ScriptedServer, fenced, reply

ROOT = Path(__file__).resolve().parents[2]


def answer(request: dict):
    first = next(m["content"] for m in request["messages"] if m["role"] == "user")
    name = re.search(r"program \(([\w.]+)\)", first).group(1)
    if name == "relu.cu":
        return reply("I would rather describe the kernel in words.")
    suite = "cuda" if name.endswith(".cu") else "numpy"
    return reply(
        fenced((ROOT / "workloads" / suite / "ir" / (Path(name).stem + ".py")).read_text())
    )


def test_agent_eval_reports_pass_rates_and_failures(tmp_path):
    """3 NumPy and 3 CUDA programs, 2 samples each, at most 2 iterations: relu.cu fails both
    samples (no program in the reply, 2 attempts each), the other 5 programs pass at the first
    attempt: pass@1 = pass@2 = 5/6 = 0.833; 10 accepted samples of 12; the fused bound of each
    accepted translation equals its ground truth (the same IR): 10/10."""
    out = tmp_path / "runs.jsonl"
    with ScriptedServer(answer) as s:
        r = subprocess.run(
            [
                sys.executable,
                str(ROOT / "bench" / "agent_eval.py"),
                "--endpoint",
                s.url,
                "--model",
                "scripted",
                "--suite",
                "numpy,cuda",
                "--limit",
                "3",
                "--samples",
                "2",
                "--max-iters",
                "2",
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert r.returncode == 0, r.stderr
    text = r.stdout
    assert "agent_eval: 6 programs x 2 sample(s)" in text
    assert "pass@1: 0.833" in text and "pass@2: 0.833" in text
    assert "accepted samples: 10/12; first attempt: 10; mean iterations when accepted: 1.00" in text
    assert "failures by category: no-program 2" in text
    assert "fused bound equal to the ground truth: 10/10" in text
    # 10 accepted samples of one request, 2 failed ones of 2: 14 replies of 1,200 tokens.
    assert "tokens: 16,800" in text
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 12 and {r["source"] for r in rows if not r["accepted"]} == {
        "workloads/cuda/relu.cu"
    }
