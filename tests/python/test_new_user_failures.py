"""What a new user's first programs ran into (issue 41, "New-user crashes"): keyword SDPA,
bf16/half modules, the notes and hints of such programs. Each program is tiny and each test
failed on the code before its fix."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import solar  # noqa: E402

F = torch.nn.functional


class KeywordSdpa(torch.nn.Module):
    """Attention called as diffusers' Flux calls it: every tensor by keyword."""

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(query=q, key=k, value=v, dropout_p=0.0)


def test_sdpa_called_with_keywords_validates():
    # The validation run replaces SDPA by a dropout-free wrapper whose first parameters were
    # positional (q, k, v), so `query=` raised TypeError. B = 1, H = 2, S = 8, D = 4: two
    # products of 2 x 8 x 8 x 4 = 512 MACs each, 1,024 in all.
    torch.manual_seed(0)
    inputs = [torch.randn(1, 2, 8, 4) for _ in range(3)]
    r = solar.analyze(KeywordSdpa(), inputs, arch="H100_PCIe")
    assert r.graph.total_macs == 1024
    assert r.validation.status == "full", r.validation.detail


class ProjectedSdpa(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(self.proj(q), k, v)


def test_sdpa_backward_error_names_eager_attention():
    # A training step differentiates through the fused SDPA kernel, whose backward has no
    # rule; the hint used to ask for a rule in rules.py, now it names the eager path.
    from solar.errors import UserError

    torch.manual_seed(0)
    inputs = [torch.randn(1, 2, 8, 4) for _ in range(3)]
    with pytest.raises(UserError) as err:
        solar.analyze(ProjectedSdpa(), inputs, training=True)
    message = str(err.value)
    assert "scaled_dot_product" in message and "backward" in message
    assert 'attn_implementation="eager"' in message
    assert "add a rule" not in message


LINEAR_PROBLEM = """
import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(32, 16)
        self.{convert}

    def forward(self, x):
        return self.lin(x)

def get_inputs():
    return [torch.randn(8, 32, dtype=torch.{dtype})]

def get_init_inputs():
    return []
"""


@pytest.mark.parametrize(
    "convert, dtype",
    [("to(torch.bfloat16)", "bfloat16"), ("half()", "float16")],
)
def test_a_module_converted_to_16_bits_in_init_captures_and_validates(tmp_path, convert, dtype):
    # Capture builds the model on fake tensors, where Module._apply's in-place swap of a
    # parameter failed ("Couldn't swap Linear.weight", blamed on the program). Now it builds,
    # lowers and validates. Fused bytes at 2 B per element: x 8 x 32 x 2 = 512, weight
    # 16 x 32 x 2 = 1,024, bias 16 x 2 = 32, output 8 x 16 x 2 = 256: 1,824 B. The unit is a
    # 16-bit contraction, so the report carries no fp32-math note (it did: item 7).
    path = tmp_path / "linear16.py"
    path.write_text(LINEAR_PROBLEM.format(convert=convert, dtype=dtype))
    r = solar.analyze(str(path), arch="H100_PCIe")
    assert r.fused.bytes == 1824
    assert r.validation.status == "full", r.validation.detail
    assert not [n for n in r.notes if "fp32 math" in n]


def test_an_fp32_linear_still_carries_the_fp32_math_note(tmp_path):
    # The same program in fp32 does fp32 contractions: the note stays (bytes 4 B per element:
    # 1,024 + 2,048 + 64 + 512 = 3,648).
    path = tmp_path / "linear32.py"
    path.write_text(LINEAR_PROBLEM.format(convert="float()", dtype="float32"))
    r = solar.analyze(str(path), arch="H100_PCIe")
    assert r.fused.bytes == 3648
    assert [n for n in r.notes if "fp32 math" in n]
