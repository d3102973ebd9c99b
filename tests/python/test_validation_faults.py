"""Validation faults (docs/pytorch.md, Validation): the backend that really ran and its speed
in the budget, the memory of the real model checked before it is built, a failure to build
it kept apart from the analysis, and peak resident memory inside the budget (measured, in a
subprocess). Each regression test fails on 5dd0d0b, the commit before these fixes (the
control fails there only for want of Validation.backend)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import solar.cli  # noqa: E402
from solar import _core  # noqa: E402
from solar.errors import UserError  # noqa: E402
from solar.frontend.validate import validate  # noqa: E402
from solar.frontend.validation import load_lowered  # noqa: E402
from solar.pytorch import analyze_pytorch, lower_pytorch  # noqa: E402


def _linear():
    """Linear 512 -> 512 on [1024, 512]: MACs = 1024 * 512 * 512 = 268,435,456. The budget's
    estimate: 2 operations a MAC point, 5.4e8 in all; the interpreter (2e7 /s) needs 27 s,
    the native backend's GEMM (2 MACs at 1e10 FLOP/s) 0.05 s."""
    torch.manual_seed(0)
    model = torch.nn.Linear(512, 512)
    capture, lowered = lower_pytorch(model, [torch.randn(1024, 512)])
    program = load_lowered(lowered)
    return capture, lowered, program, _core.trace(program, [])


@pytest.mark.native
def test_validation_runs_natively_at_full_size_when_it_can(monkeypatch, tmp_path):
    # Control for the two below.
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(tmp_path / "kernels"))
    v = validate(*_linear(), backend="native", max_seconds=1.0)
    assert (v.status, v.backend) == ("full", "native"), v.detail
    assert v.detail.endswith("(native backend)")


@pytest.mark.native
def test_without_a_compiler_validation_budgets_the_interpreter_and_says_so(monkeypatch, tmp_path):
    # Before: the C++ side fell back to the interpreter silently, the budget assumed native
    # speed (0.05 s, "full"), and the detail said "native backend" for a 27 s estimate.
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(tmp_path / "kernels"))
    monkeypatch.setenv("SOLAR_CXX", "/nonexistent/c++")
    v = validate(*_linear(), backend="native", max_seconds=1.0)
    # 27 s over a 1 s budget: per kernel, the batch halved until it fits (1024 -> 32 rows).
    assert v.status == "per-kernel", v.detail
    assert v.backend == "interpreter"
    assert "about 27 s with the interpreter backend (budget 1 s)" in v.detail
    assert "run with the interpreter backend: the native backend is unavailable here" in v.detail
    assert "the C++ compiler '/nonexistent/c++' was not found" in v.detail


@pytest.mark.native
def test_a_kernel_that_does_not_compile_revalidates_with_the_interpreter(monkeypatch, tmp_path):
    # The compiler exists (the check before validation passes) but fails on every kernel:
    # validation starts again on the interpreter, with the budget at its speed.
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(tmp_path / "kernels"))
    monkeypatch.setenv("SOLAR_CXX", "c++ -include /nonexistent/solar-missing.h")
    v = validate(*_linear(), backend="native", max_seconds=1.0)
    assert v.status == "per-kernel", v.detail
    assert v.backend == "interpreter"
    assert "the native backend could not compile kernel" in v.detail


UNUSED_BUFFER = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.zeros({elements}))  # never read by forward

    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.rand(64, 64)]
"""


def test_an_unused_50_gib_buffer_is_never_built(tmp_path):
    # Before: validation built the real model, the 50 GiB allocation failed and a captured,
    # analysed program ended in a `capture` error. Now the model's memory is checked on the
    # meta device first: 50 x 2^30 B of fp32 zeros = 53,687,091,200 B over the 1 GiB budget,
    # so the operator is validated alone.
    path = tmp_path / "unused_buffer.py"
    path.write_text(UNUSED_BUFFER.format(elements=50 * 2**30 // 4))
    r = analyze_pytorch(str(path), archs=["H100_PCIe"])
    assert r.analysis.fused.seconds > 0  # the analysis stands
    assert r.validation.status == "per-kernel", r.validation.detail
    assert "50.00 GiB of model parameters and buffers" in r.validation.detail


FAILS_FOR_REAL = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(8))
        if not isinstance(self.w, torch._subclasses.fake_tensor.FakeTensor):
            raise RuntimeError("cannot allocate the weights here")

    def forward(self, x):
        return x * self.w


def get_inputs():
    return [torch.rand(4, 8)]
"""


def test_a_real_model_that_cannot_be_built_keeps_the_analysis(tmp_path, capsys):
    # Before: the capture (on fake tensors) succeeded, then building the real model for
    # validation raised and `solar analyze` failed with error[capture].
    path = tmp_path / "fails_for_real.py"
    path.write_text(FAILS_FOR_REAL)
    r = analyze_pytorch(str(path), archs=["H100_PCIe"])
    assert r.validation.status == "none"
    assert r.validation.detail == (
        "not validated: running the real program at the program's own sizes failed "
        "(Model(...) failed: RuntimeError: cannot allocate the weights here)"
    )
    assert solar.cli.main(["analyze", str(path)]) == 0
    assert "validation: none" in capsys.readouterr().out


# Peak resident memory of a validation, in a fresh process: the growth of the process's peak
# resident size over its resident size just before validating (an upper bound on what
# validation added). The peak is /proc's VmHWM, which getrusage's ru_maxrss reports too, except
# that Linux carries ru_maxrss over from the parent through fork and exec (a child of a 1 GB
# pytest process starts with ru_maxrss = 1 GB); VmHWM starts afresh at exec.
MEASURE = """
import json, sys
from solar import _core
from solar.frontend.validate import validate
from solar.frontend.validation import load_lowered
from solar.pytorch import lower_pytorch

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)

capture, lowered = lower_pytorch(sys.argv[1])
program = load_lowered(lowered)
graph = _core.trace(program, [])
resident = status("VmRSS")
v = validate(capture, lowered, program, graph, max_bytes=int(sys.argv[2]))
peak = status("VmHWM")
print(json.dumps({"status": v.status, "detail": v.detail, "growth": peak - resident}))
"""

LARGE = {
    # A matrix-vector product, lowered as a broadcast multiply and a sum: [8192, 8192] fp32
    # is 256 MiB per array. No module-level sizes: validated per kernel.
    "matrix_vector": """
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, A, x):
        return torch.matmul(A, x)
def get_inputs():
    return [torch.rand(8192, 8192), torch.rand(8192)]
""",
    # Tall-skinny: [16384, 16] @ [16, 16384] -> a 1 GiB output.
    "tall_skinny": """
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, A, B):
        return A @ B
def get_inputs():
    return [torch.rand(16384, 16), torch.rand(16, 16384)]
""",
    # A 4 GiB buffer forward never reads (2^30 fp32 zeros).
    "unused_4_gib_buffer": UNUSED_BUFFER.format(elements=2**30),
}


@pytest.mark.parametrize("name", LARGE)
def test_validation_stays_inside_its_memory_budget(tmp_path, name):
    # Before (budget 256 MiB): per-kernel validation drew each operator's inputs at full
    # size before checking the budget, and the budget counted only the IR's arrays (not the
    # real model, PyTorch's copies, the comparison); the 4 GiB buffer was built.
    budget = 256 * 2**20
    path = tmp_path / f"{name}.py"
    path.write_text(LARGE[name])
    r = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), str(budget)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["status"] == "per-kernel", result["detail"]
    assert result["growth"] <= budget, f"{result['growth'] / 2**20:.0f} MiB: {result['detail']}"


def test_an_empty_output_is_left_out_of_the_comparison():
    """forward() returns (x * 2, y + 1) with y of shape [0, 4]: the second output has no
    data, so the lowered program returns only the first (8 x 4 = 32 values) and full
    validation compares that one. Before: KeyError 'out1' (the comparison read one IR output
    per PyTorch output)."""

    class TwoOutputs(torch.nn.Module):
        def forward(self, x, y):
            return x * 2, y + 1

    capture, lowered = lower_pytorch(TwoOutputs(), [torch.randn(8, 4), torch.randn(0, 4)])
    program = load_lowered(lowered)
    v = validate(capture, lowered, program, _core.trace(program, []), backend="interpreter")
    assert v.status == "full", v.detail
    assert v.detail.startswith("1 output(s) match PyTorch"), v.detail


def test_a_program_whose_every_output_is_empty_is_refused():
    class Empty(torch.nn.Module):
        def forward(self, y):
            return y + 1

    with pytest.raises(UserError) as e:
        lower_pytorch(Empty(), [torch.randn(0, 4)])
    assert "every tensor forward() returns is empty (a dim of 0): nothing to analyse" in str(
        e.value
    )
