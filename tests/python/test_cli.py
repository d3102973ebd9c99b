"""The `solar` command line, run as a user would (a subprocess), and its output files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ir" / "linear_bias_matmul.py"


def solar(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


def test_analyze_paper_spec_reproduces_figure_2d(tmp_path):
    out = tmp_path / "out.json"
    r = solar("analyze", str(EXAMPLE), "--arch", "H100_PCIe_paper", "--json", str(out))
    assert r.returncode == 0, r.stderr
    # The Figure 2d table: unfused 2.03 MB 1.01 µs memory-bound; fused 0.99 MB (985 kB)
    # 0.82 µs (822 ns) compute-bound, 83.9 MFLOP in both rows.
    lines = r.stdout.splitlines()
    unfused = next(line for line in lines if line.startswith("Unfused"))
    fused = next(line for line in lines if line.startswith("Fused"))
    assert "83.9 MFLOP" in unfused and "2.03 MB" in unfused and "1.01 µs" in unfused
    assert unfused.rstrip().endswith("Memory")
    assert "985 kB" in fused and "822 ns" in fused and fused.rstrip().endswith("Compute")
    assert "math mode: fp32" in r.stdout

    doc = json.loads(out.read_text())
    assert doc["schema"] == "solar.analysis/1"
    assert doc["arch"]["name"] == "H100_PCIe_paper"
    assert doc["validation"]["status"] == "none"
    t = doc["totals"]
    # 2 · (33,554,432 + 8,388,608) MACs = 83,886,080 FLOPs, all on the matrix unit.
    assert t["macs"] == 41_943_040
    assert t["flops"] == 83_886_080 and isinstance(t["flops"], int)
    assert t["matrix_flops"] == 83_886_080 and t["vector_flops"] == 0
    # The paper's worked example (its Figure 2): 4·[(BMK+NK+N+BMN) + (BMN+NP+BMP)] and
    # 4·(BMK+NK+N+NP+BMP).
    # Cache-aware: the L2 (52,428,800 B) holds every tensor, so it equals the fused bytes.
    assert t["bytes"] == {"unfused": 2_033_664, "fused": 985_088, "cache_aware": 985_088}
    # fused = max(83,886,080 / 102e12, 985,088 / 2.0388e12) = 0.8224 µs (compute);
    # unfused = 0.6579 µs (linear, compute) + 0.3536 µs (matmul, memory) = 1.0115 µs.
    assert t["seconds"]["fused"] == pytest.approx(83_886_080 / 102e12, rel=1e-12)
    assert t["seconds"]["unfused"] == pytest.approx(
        67_108_864 / 102e12 + 720_896 / 2.0388e12, rel=1e-12
    )
    assert t["bottleneck"] == {"unfused": "memory", "fused": "compute", "cache_aware": "compute"}
    names = [n["name"] for n in doc["nodes"]]
    assert names == ["linear#0", "matmul#0"]
    linear = doc["nodes"][0]
    assert linear["kind"] == "einsum" and linear["einsum"] == "BMK,NK,N->BMN"
    assert linear["macs"] == 33_554_432 and linear["bytes"] == 1_312_768
    assert linear["seconds"]["unfused"] == pytest.approx(67_108_864 / 102e12)


def test_datasheet_h100_strict_fp32_is_compute_bound_at_51_2_tflops(tmp_path):
    out = tmp_path / "strict.json"
    r = solar(
        "analyze", str(EXAMPLE), "--arch", "H100_PCIe", "--fp32-math", "fp32", "--json", str(out)
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["fp32_math"] == "fp32"
    assert doc["peaks"]["matrix_flops_per_second"] == 51.2e12
    # 83,886,080 / 51.2e12 = 1.638 µs > 985,088 / 2.0e12 = 0.493 µs: compute-bound.
    assert doc["totals"]["bottleneck"]["fused"] == "compute"
    assert doc["totals"]["seconds"]["fused"] == pytest.approx(83_886_080 / 51.2e12)
    assert "math mode: fp32 (--fp32-math fp32" in r.stdout


def test_datasheet_h100_default_is_tf32_and_says_so(tmp_path):
    r = solar("analyze", str(EXAMPLE), "--arch", "H100_PCIe")
    assert r.returncode == 0, r.stderr
    assert "math mode: tf32" in r.stdout
    # max(83,886,080 / 378e12 = 0.222 µs, 985,088 / 2.0e12 = 0.493 µs): memory-bound.
    fused = next(line for line in r.stdout.splitlines() if line.startswith("Fused"))
    assert "493 ns" in fused and fused.rstrip().endswith("Memory")


def test_several_archs_print_a_cross_platform_table():
    r = solar("analyze", str(EXAMPLE), "--arch", "H100_PCIe", "--arch", "A100_SXM")
    assert r.returncode == 0, r.stderr
    assert "Fusion benefit" in r.stdout
    assert r.stdout.count("SOL analysis of") == 2


def test_graph_yaml_loads_and_states_ranks_sizes_projections_bits(tmp_path):
    out = tmp_path / "graph.yaml"
    r = solar("graph", str(ROOT / "examples" / "ir" / "conv2d.py"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    doc = yaml.safe_load(out.read_text())
    assert doc["schema"] == "solar.einsum_graph/1"
    einsums = [e for n in doc["nodes"] for e in n.get("einsums", [])]
    assert einsums
    for e in einsums:
        assert set(e["rank_sizes"]) == set(e["ranks"])
        assert all(isinstance(v, int) and v > 0 for v in e["rank_sizes"].values())
        for access in e["tensor_accesses"]:
            assert len(access["projection"]) == len(access["timeloop_projection"])
            assert access["name"] in e["bits_per_value"]
    # A strided, padded conv: the input's height index is p*stride + r - pad.
    conv = next(e for e in einsums if e["macs"] > 0)
    x = conv["tensor_accesses"][0]
    assert any("+" in p and "*" not in p or "*" in p for p in x["projection"])


def test_check_prints_ok_and_format_round_trips():
    r = solar("check", str(EXAMPLE))
    assert r.returncode == 0 and "ok (2 kernels: linear, matmul)" in r.stdout
    r = solar("format", str(EXAMPLE))
    assert r.returncode == 0 and "@kernel\ndef linear(" in r.stdout


def test_arch_list_and_show():
    r = solar("arch", "list")
    assert r.returncode == 0
    for name in [
        "A100_SXM",
        "B200",
        "H100_PCIe",
        "H100_PCIe_paper",
        "H100_SXM",
        "Jetson_Thor",
        "RTX_A6000",
    ]:
        assert name in r.stdout
    r = solar("arch", "show", "h100_pcie")
    assert r.returncode == 0 and "378 TFLOP/s" in r.stdout and "2 TB/s" in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["analyze", "missing.py"], "cannot open file 'missing.py'"),
        (["analyze", str(EXAMPLE), "--arch", "H900"], "unknown architecture 'H900'"),
        (["analyze", str(EXAMPLE), "--dim", "B"], "--dim B: expected NAME=INTEGER"),
        (["analyze", str(EXAMPLE), "--dim", "Q=4"], "model() has no dim named 'Q'"),
        (["analyze", str(EXAMPLE), "--dim", "B=0"], "sizes must be positive"),
        (["analyze", str(EXAMPLE), "--fp32-math", "fp4"], "invalid choice: 'fp4'"),
        (
            ["analyze", str(EXAMPLE), "--arch", "H100_PCIe_paper", "--fp32-math", "tf32"],
            "has no matrix rate for tf32",
        ),
        (["bogus"], "invalid choice: 'bogus'"),
    ],
)
def test_user_errors_exit_1_with_message_and_no_traceback(args, message):
    r = solar(*args, cwd=ROOT)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert message in r.stderr
    assert "Traceback" not in r.stderr + r.stdout


def test_a_file_is_sniffed_for_its_language_only_when_it_is_not_ir():
    # A PyTorch problem given where IR is expected names its language (checked after the IR
    # parser rejects it); an IR file that checks is never scanned, so checking it imports
    # neither the PyTorch front end's detector nor the agent's language table.
    import solar
    from solar.errors import UserError

    with pytest.raises(UserError) as e:
        solar.check(ROOT / "workloads" / "level1" / "pad_reflect.py")
    assert "is a PyTorch program, not an Affine Loop IR file" in e.value.diagnostics[0].message
    probe = (
        "import sys, solar; solar.check(sys.argv[1]); "
        "print(sorted(m for m in ('solar.agent.languages', 'solar.frontend.capture') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(EXAMPLE)], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "imports, kind",
    [
        ("import math, torch", "pytorch"),  # a comma list: the old text test missed it
        ("from torch import nn", "pytorch"),  # so did an import from the package
        ("import torch.nn as nn", "pytorch"),
        ("import jax.numpy as jnp", "jax"),
        ("import numpy as np, flax.linen as nn", "jax"),
        ("import numpy as np\n'''import torch in a docstring'''", "ir"),
        ("import math, torch\ndef broken(:", "pytorch"),  # no parse: the line fallback
    ],
)
def test_the_front_end_follows_the_imports(tmp_path, imports, kind):
    from solar.frontend.kind import program_kind

    f = tmp_path / "p.py"
    f.write_text(imports + "\n\nclass Model: pass\n")
    assert program_kind(f) == kind


def test_progress_is_printed_as_lines_when_stderr_is_no_terminal(capsys, monkeypatch):
    """Piped stderr (a script, CI, nohup) gets a line per PROGRESS_INTERVAL while a stage runs
    (30 s by default; 0.02 s here), each naming the file and the stage with the seconds since
    the start, and one line as each stage ends with its own time; nothing follows the end
    (show("")). --quiet's progress prints nothing."""
    import time

    from solar import cli

    monkeypatch.setattr(cli, "PROGRESS_INTERVAL", 0.02)
    show = cli._terminal_progress("model.py")  # capsys's stderr is no terminal
    show("capturing")
    time.sleep(0.2)
    show("validating")
    show("")
    time.sleep(0.05)
    lines = capsys.readouterr().err.splitlines()
    beats = [ln for ln in lines if ln == "model.py: capturing (0 s)"]
    assert len(beats) >= 2, lines
    ends = [ln for ln in lines if ln not in beats]
    assert len(ends) == 2, lines
    assert ends[0].startswith("model.py: capturing done in 0.") and ends[0].endswith(" s")
    assert ends[1].startswith("model.py: validating done in 0.0")
    time.sleep(0.1)
    assert capsys.readouterr().err == ""
    quiet = cli._terminal_progress("model.py", quiet=True)
    quiet("capturing")
    time.sleep(0.1)
    quiet("")
    assert capsys.readouterr().err == ""


DEEP = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(16, 16), nn.ReLU())  # mixed classes: no stack
        self.layers = nn.ModuleList(nn.Linear(16, 16) for _ in range(3))

    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def get_inputs():
    return [torch.randn(4, 16)]
"""


def test_a_capture_names_the_layers_it_reaches(tmp_path):
    """A model with a stack of 3 like layers (and a Sequential of two classes, which is no
    stack): with stderr a pipe, one line per layer as the trace leaves it, then the
    lowering; --quiet prints none of them."""
    path = tmp_path / "deep.py"
    path.write_text(DEEP)
    r = solar("analyze", str(path), "--no-validate")
    assert r.returncode == 0, r.stderr
    layers = [ln for ln in r.stderr.splitlines() if ": layer " in ln]
    assert [ln.split(": layer ")[1].split(" done")[0] for ln in layers] == ["1/3", "2/3", "3/3"]
    assert layers[0].startswith(f"{path}: capturing with torch.export: layer 1/3 done in ")
    assert f"{path}: lowering to the IR done in " in r.stderr
    quiet = solar("analyze", str(path), "--no-validate", "--quiet")
    assert quiet.returncode == 0 and ": layer " not in quiet.stderr


def test_rate_line_gives_the_pace_and_the_time_left():
    from solar.report import rate_line

    # 3 entries in 90 s: 2.0 a minute; 6 left take 3 minutes.
    assert rate_line(3, 90.0, 6) == "2.0/min, about 3 min left"
    assert rate_line(10, 60.0, 5) == "10.0/min, under a minute left"
    # 1 a minute, 600 left: 10 hours.
    assert rate_line(1, 60.0, 600) == "1.0/min, about 10.0 h left"
    assert rate_line(4, 60.0, 0) == "4.0/min, done"
