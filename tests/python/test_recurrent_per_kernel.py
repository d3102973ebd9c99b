"""Recurrent modules captured as one operator each (frontend/rnn.py) and the per-kernel
validation level (frontend/per_kernel.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import solar  # noqa: E402
from solar import _core  # noqa: E402
from solar.frontend.validate import validate  # noqa: E402
from solar.frontend.validation import load_lowered  # noqa: E402
from solar.pytorch import analyze_pytorch, lower_pytorch  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RECURRENT = Path(__file__).parent / "data" / "recurrent_small.py"


def test_recurrent_modules_are_one_operator_each_and_validate():
    r = analyze_pytorch(str(RECURRENT), archs=("H100_PCIe",))
    ops = r.ops
    assert ops["solar.gru.default"] == 1
    assert ops["solar.lstm.default"] == 1
    assert ops["solar.rnn.default"] == 1
    # Every output (GRU out/h, LSTM out/h/c, RNN out/h) matches PyTorch's own modules.
    assert r.validation.status == "full", r.validation.detail
    # MACs by hand, B=4, T=6, H=16, per step x·W_ih^T + h·W_hh^T:
    #   GRU (3H=48 gate rows), 2 directions:  layer 0 (I=8):  4·8·48 + 4·16·48 = 4,608
    #                                          layer 1 (I=32): 4·32·48 + 4·16·48 = 9,216
    #       -> (4,608 + 9,216) · 6 steps · 2 directions = 165,888
    #   LSTM (4H=64): layer 0 (I=32): 4·32·64 + 4·16·64 = 12,288; layer 1 (I=16): 8,192
    #       -> (12,288 + 8,192) · 6 = 122,880
    #   RNN (H=16, I=16, no bias): (4·16·16 + 4·16·16) · 6 = 12,288
    assert r.graph.total_macs == 165_888 + 122_880 + 12_288


def _cell_loop_program(tmp_path, module_form: bool) -> Path:
    body = (
        "        out, (h, c) = self.rnn(x, (h0, c0))\n        return out, h, c\n"
        if module_form
        else "        h, c, outs = h0[0], c0[0], []\n"
        "        for t in range(x.shape[0]):\n"
        "            h, c = self.rnn(x[t], (h, c))\n            outs.append(h)\n"
        "        return torch.stack(outs), h.unsqueeze(0), c.unsqueeze(0)\n"
    )
    ctor = "nn.LSTM(24, 40)" if module_form else "nn.LSTMCell(24, 40)"
    p = tmp_path / ("module.py" if module_form else "cell.py")
    p.write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
        f"    def __init__(self):\n        super().__init__()\n        self.rnn = {ctor}\n\n"
        "    def forward(self, x, h0, c0):\n" + body + "\n\n"
        "def get_inputs():\n"
        "    return [torch.randn(5, 3, 24), torch.randn(1, 3, 40), torch.randn(1, 3, 40)]\n\n\n"
        "def get_init_inputs():\n    return []\n"
    )
    return p


def test_lstm_module_counts_like_the_unrolled_lstm_cell(tmp_path):
    # nn.LSTM through solar::lstm and nn.LSTMCell in a Python loop (unrolled by torch.export
    # into ATen operators) compute the same thing: MACs and vector FLOPs must agree.
    # MACs by hand: T=5, B=3, I=24, H=40 (160 gate rows): 5 · (3·24·160 + 3·40·160) = 153,600.
    a = analyze_pytorch(str(_cell_loop_program(tmp_path, True)), validate=False).graph
    b = analyze_pytorch(str(_cell_loop_program(tmp_path, False)), validate=False).graph
    assert a.total_macs == b.total_macs == 153_600
    assert sum(n.vector_flops for n in a.nodes) == sum(n.vector_flops for n in b.nodes)
    # nn.LSTM projects the inputs of all 5 steps at once: W_ih (160x24 fp32, 15,360 B) is read
    # once instead of 5 times, so its unfused traffic is lower.
    assert a.unfused_bytes < b.unfused_bytes


def test_per_kernel_level_for_a_module_on_the_meta_device():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
            self.bn = torch.nn.BatchNorm2d(16)
            self.fc = torch.nn.Linear(16, 10)

        def forward(self, x):
            y = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
            return self.fc(y.mean(dim=(2, 3))).softmax(-1)

    with torch.device("meta"):
        net = Net()
    r = solar.analyze(net, [torch.empty(64, 3, 64, 64, device="meta")], arch="H100_PCIe")
    # No values to run the whole program: each distinct operator (convolution, batch norm,
    # relu, max pool, mean, addmm, softmax = 7) runs alone on random inputs.
    assert r.validation.status == "per-kernel", r.validation.detail
    assert r.validation.detail.startswith("7 distinct operators")


def test_per_kernel_names_the_operators_it_cannot_run():
    cap, low = lower_pytorch(str(ROOT / "workloads" / "level2" / "linear_bias_matmul.py"))
    program = load_lowered(low)
    graph = _core.trace(program, [])
    # 600 kB of validation memory (validate.validation_bytes): addmm's transposed weight
    # [256, 512] fp32 is 524,288 B, held with the copy forward gets: over 1 MB even with its
    # rows halved to 1. mm [1, 512] @ [512, 64] fits: inputs 4 x (512 + 32,768) = 133,120 B
    # twice, the output (256 B) and its packed GEMM operands 4 x (512 + 32,768 + 64) =
    # 133,376 B twice, and 64 B a compared element x 64: 537,600 B.
    v = validate(cap, low, program, graph, max_bytes=600_000)
    assert v.status == "none"
    assert "per-kernel: 1 of 2 distinct operators match PyTorch" in v.detail
    assert "could not run here: aten.addmm.default" in v.detail


def test_tensors_created_in_forward_capture_and_validate(tmp_path):
    # torch.ones / torch.arange without device= land on the meta device while capturing, and
    # torch.tensor([2.0, 3.0]) (a constant built from Python data, captured without values on
    # meta) gets its values from a real export at validation time.
    p = tmp_path / "made_in_forward.py"
    p.write_text(
        "import torch\nimport torch.nn as nn\n\nn = 16\n\n\nclass Model(nn.Module):\n"
        "    def forward(self, x):\n"
        "        mask = torch.triu(torch.ones(n, n), diagonal=1)\n"
        "        scale = torch.tensor([2.0, 3.0]).sum()\n"
        "        return x * mask * scale + torch.arange(n)\n\n\n"
        "def get_inputs():\n    return [torch.randn(4, n, n)]\n\n\n"
        "def get_init_inputs():\n    return []\n"
    )
    r = analyze_pytorch(str(p))
    assert "c_lifted_tensor_0" in r.ir_text
    assert r.validation.status == "full", r.validation.detail
