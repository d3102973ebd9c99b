"""The models people use: Hugging Face transformers built from config objects (tests/python/
hf_zoo.py), captured, lowered and validated from the Python API; a published-size Llama on
fake tensors; and the capture failures real model code used to hit (issue 11)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import solar  # noqa: E402
from solar.errors import UserError  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hf_zoo  # noqa: E402
from dense import dense_macs  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def flop_counter_macs(name: str) -> int:
    """FlopCounterMode's count / 2 of the same model with eager attention (FlopCounterMode
    has no formula for CPU SDPA, _scaled_dot_product_flash_attention_for_cpu: with the default
    attention it would miss every attention product); mixtures of experts with the eager
    experts, which run each token through its k experts as Solar counts them."""
    from torch.utils.flop_counter import FlopCounterMode

    overrides = {"attn_implementation": "eager"}
    if name in hf_zoo.MOE:  # the experts a routing hit, one linear each (FlopCounterMode has
        # no formula for transformers' grouped_mm operator)
        overrides["experts_implementation"] = "eager"
    model, inputs = hf_zoo.build(name, **overrides)
    model.eval()
    # Parameters that need no gradient: FlopCounterMode's module tracker registers gradient
    # hooks on module inputs that require one, and a view of a parameter made under no_grad
    # (transformers >= 5.25's Mamba passes conv1d.weight.squeeze(1) to a hub-kernel layer)
    # requires one but has no gradient function: "Expected gradient function to be set".
    model.requires_grad_(False)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(**inputs)
    return counter.get_total_flops() // 2


@pytest.mark.parametrize("name", list(hf_zoo.ZOO))
def test_hugging_face_model_validates_and_counts_what_flop_counter_counts(name):
    model, inputs = hf_zoo.build(name)
    r = solar.analyze(model, inputs, mode="eval")
    assert r.validation.status == "full", r.validation.detail
    # The MACs over the dense space are FlopCounterMode's, exactly (every zoo model:
    # matmuls, convolutions and attention products are all the multiply-accumulates these
    # models have); Solar's own count skips padding taps and masked attention pairs.
    assert dense_macs(r.graph) == flop_counter_macs(name)
    assert r.graph.total_macs <= dense_macs(r.graph)
    assert model.training  # mode="eval" analysed an eval view; the module keeps its mode


# Batch norm over a 1 x 1 map of one image has one value per channel: PyTorch refuses it in
# training mode, the problem files' default, so these run in eval mode.
EVAL_ONLY = ("mobilenet_v2", "efficientnet")


@pytest.mark.parametrize("name", list(hf_zoo.ZOO))
def test_hugging_face_model_as_a_problem_file_validates(name, tmp_path):
    # The same model from a problem file: built on fake tensors for the capture (a
    # constructor's initialisation reads nothing back), for real for validation; in training
    # mode (dropout live, validated at its expectation) unless EVAL_ONLY.
    path = tmp_path / f"{name}.py"
    path.write_text(hf_zoo.problem_file(name))
    r = solar.analyze(str(path), mode="eval" if name in EVAL_ONLY else None)
    assert r.validation.status == "full", r.validation.detail
    assert dense_macs(r.graph) == flop_counter_macs(name)
    assert r.graph.total_macs <= dense_macs(r.graph)


def test_outputs_are_named_by_their_path_in_the_model_output():
    # GPT-2 returns BaseModelOutputWithPastAndCrossAttentions whose `cache` is a DynamicCache
    # (transformers 5): the flat outputs are the hidden state and one key and one value per
    # layer (2 layers).
    model, inputs = hf_zoo.build("gpt2")
    r = solar.analyze(model, inputs, mode="eval")
    names = [c.name for c in r.validation.outputs]
    model.eval()
    cache = [k for k in model(**inputs).keys() if k != "last_hidden_state"][0]
    names = [n.replace(f"({cache}.", "(cache.") for n in names]  # `past_key_values` before 5.0
    assert names == [
        "out0 (last_hidden_state)",
        "out1 (cache.layers.0.keys)",
        "out2 (cache.layers.0.values)",
        "out3 (cache.layers.1.keys)",
        "out4 (cache.layers.1.values)",
    ]


def test_training_mode_dropout_is_live_and_said_once():
    # BERT in training mode has 2 layers x 3 dropouts + the embedding dropout: 7 dropouts,
    # one note; validation runs PyTorch with dropout at its expectation.
    model, inputs = hf_zoo.build("bert")
    model.train()
    r = solar.analyze(model, inputs)
    assert r.validation.status == "full", r.validation.detail
    assert sum(1 for n in r.notes if "dropout" in n) == 1
    assert r.ops.get("aten.native_dropout.default", 0) == 7


def test_mixture_of_experts_bound_takes_the_best_case_routing_with_the_dense_upper_end():
    # hf_zoo's Mixtral: 2 layers, hidden 64, expert FFN 128, 4 experts, top-2, 16 tokens,
    # fp32. Per layer the experts' weights are gate_up [4, 256, 64] and down [4, 64, 128]:
    # 65,536 B per expert (gate_up) + 32,768 B (down). Each gather is by the 16 x 2 = 32
    # top-k indices (int64, 256 B). Best case: 2 experts per gather -> 131,072 + 65,536 B
    # per layer, 393,216 B for both; dense upper end: min(32, 4) = all 4 experts, 786,432 B.
    from solar.pytorch import routing_upper_end

    model, inputs = hf_zoo.build("mixtral")
    r = solar.analyze(model, inputs, mode="eval", validate=False)
    gathers = [n for n in r.graph.nodes if n.op == "gather" and n.attrs[1] > 0]
    assert [n.bytes_read for n in gathers] == [131_072 + 256, 65_536 + 256] * 2
    upper = routing_upper_end(r.graph, r.analysis)
    assert (upper.gathers, upper.best_bytes, upper.dense_bytes) == (4, 393_216, 786_432)
    # The dense upper end moves 393,216 B more at the fused bound's bandwidth.
    fused = r.analysis.fused
    beta = fused.bytes / fused.memory_seconds
    assert upper.fused_seconds == pytest.approx(max(fused.seconds, (fused.bytes + 393_216) / beta))
    assert any("best-case routing" in n and "786 kB" in n for n in r.notes)
    # The MACs per layer: q and o (16 x 64 x 64 each), k and v (16 x 64 x 32 each: 2 KV
    # heads of 16), QK^T and PV (4 heads x 16 each over the 16 x 17 / 2 = 136 (query, key)
    # pairs the causal mask keeps), the router (16 x 4 x 64), and each token's 2 experts
    # (gate_up 256 x 64 + down 64 x 128 per token-expert pair).
    per_layer = (
        2 * 16 * 64 * 64
        + 2 * 16 * 64 * 32
        + 2 * 4 * 136 * 16
        + 16 * 4 * 64
        + 16 * 2 * (256 * 64 + 64 * 128)
    )
    assert r.graph.total_macs == 2 * per_layer == 2_009_088


def llama_macs(layers, hidden, ffn, heads, kv_heads, vocab, seq) -> int:
    """Multiply-accumulates of a Llama forward pass (LlamaForCausalLM, logits for every
    position), by hand: per token and layer the q and o projections (hidden^2 each), k and v
    (hidden * kv_dim each), the gated MLP (3 * hidden * ffn); per layer the attention products
    QK^T and PV (seq^2 * hidden each: SDPA computes the whole square, the causal mask only
    hides half of it); the LM head (hidden * vocab per token)."""
    kv_dim = hidden // heads * kv_heads
    per_token = 2 * hidden * hidden + 2 * hidden * kv_dim + 3 * hidden * ffn
    return layers * (seq * per_token + 2 * seq * seq * hidden) + seq * hidden * vocab


def test_dims_are_named_from_the_config_and_the_token_ids():
    # Llama with hidden 1024, FFN 2816, vocab 32000, 2 x 512 token ids: those sizes get their
    # names; the KV width (4 KV heads x 64 = 256) has no single name and keeps its size.
    cfg = transformers.LlamaConfig(
        hidden_size=1024,
        intermediate_size=2816,
        num_hidden_layers=1,
        num_attention_heads=16,
        num_key_value_heads=4,
        vocab_size=32000,
    )
    with solar.fake_tensors():
        model = transformers.LlamaForCausalLM(cfg).eval()
        ids = torch.zeros(2, 512, dtype=torch.long)
    r = solar.analyze(model, {"input_ids": ids}, validate=False)
    dims = next(line for line in r.ir_text.splitlines() if line.startswith("DIMS = "))
    for named in ('"batch": 2', '"seq": 512', '"hidden": 1024', '"ffn": 2816', '"vocab": 32000'):
        assert named in dims, dims
    assert '"d256": 256' in dims


def test_published_convnext_tiny_builds_on_fake_tensors():
    # ConvNextConfig() is ConvNeXt-T (depths 3, 3, 9, 3): its constructor cuts a linspace of
    # drop-path rates with .split(depths) and reads each piece back (.tolist()), which fake
    # tensors could not do. 4,454,763,264 MACs: FlopCounterMode's count of the same module on
    # fake tensors (bench/bench_zoo.py); torchvision publishes 4.46 G for convnext_tiny with
    # its 768 x 1000 classifier (0.77 M) on top.
    from torch.utils.flop_counter import FlopCounterMode

    with solar.fake_tensors():
        model = transformers.ConvNextModel(transformers.ConvNextConfig()).eval()
        pixels = torch.zeros(1, 3, 224, 224)
        with FlopCounterMode(display=False) as counter:
            model(pixel_values=pixels)
    r = solar.analyze(model, {"pixel_values": pixels}, validate=False)
    # Over the dense space, as FlopCounterMode counts the 7x7 depthwise convolutions' taps in
    # the padding; Solar's own count skips them.
    assert dense_macs(r.graph) == counter.get_total_flops() // 2 == 4_454_763_264
    assert r.graph.total_macs < dense_macs(r.graph)


def test_published_size_llama_on_fake_tensors_allocates_nothing():
    # Llama-3-8B's shapes (4096 hidden, 14336 FFN, 32 heads, 8 KV heads, 128256 vocab), 4 of
    # its 32 layers (each layer is captured alike; 4 keep the test short), at 256 tokens:
    # 1.9 G parameters (4 x 218 M a layer, 2 x 525 M of embedding and head), 7.7 GB of fp32
    # weights that a capture on real tensors would allocate; on fake tensors it holds none.
    cfg = transformers.LlamaConfig(
        hidden_size=4096,
        intermediate_size=14336,
        num_hidden_layers=4,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=128256,
    )
    with solar.fake_tensors():
        model = transformers.LlamaForCausalLM(cfg)
        ids = torch.zeros(1, 256, dtype=torch.long)
    r = solar.analyze(model, {"input_ids": ids}, validate=False, mode="eval")
    assert r.validation.status == "none"
    # The formula counts the attention dense; Solar counts the causal half (the mask keeps
    # 256 x 257 / 2 of the 256 x 256 pairs: per layer 2 products x 4096 x (65,536 - 32,896)
    # fewer MACs).
    assert dense_macs(r.graph) == llama_macs(4, 4096, 14336, 32, 8, 128256, 256)
    assert dense_macs(r.graph) - r.graph.total_macs == 4 * 2 * 4096 * (65_536 - 32_896)


def test_meta_device_model_with_autocast_captures_on_a_cpu_view():
    # Llama's rotary embedding calls torch.autocast(device_type=x.device.type): on the meta
    # device that raised "unsupported scalarType"; a meta module is now captured on fake CPU
    # tensors.
    with torch.device("meta"):
        model, _ = hf_zoo.build("llama")
    r = solar.analyze(model, {"input_ids": torch.zeros(1, 16, dtype=torch.long)}, validate=False)
    assert dense_macs(r.graph) == flop_counter_macs("llama")


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(text))
    return path


CUDA_INPUTS = """
import torch
import torch.nn as nn

N = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(N, N)

    def forward(self, x):
        with torch.autocast(device_type=x.device.type, enabled=False):
            return torch.relu(self.lin(x))


def get_inputs():
    return [torch.randn(8, N, device="cuda")]


def get_init_inputs():
    return []
"""


def test_problem_file_asking_for_cuda_captures_and_validates_on_the_cpu(tmp_path):
    # Before: "Torch not compiled with CUDA enabled" at capture. MACs 8 * 64 * 64 = 32,768.
    r = solar.analyze(str(write(tmp_path, CUDA_INPUTS)))
    assert r.graph.total_macs == 8 * 64 * 64
    assert r.validation.status == "full", r.validation.detail


TUPLE_CONSTANTS = """
import torch
import torch.nn as nn

M, K, N = 2048, 64 * 4, 256 * 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(K, N, bias=False)

    def forward(self, x):
        return self.lin(x)


def get_inputs():
    return [torch.randn(M, K)]
"""


def test_tuple_and_expression_constants_are_sizes(tmp_path):
    from solar.frontend.problem import int_constants

    path = write(tmp_path, TUPLE_CONSTANTS)
    assert int_constants(path.read_text()) == {"M": 2048, "K": 256, "N": 256}
    # --dim on a tuple element and on an expression: 16 * 256 * 256 MACs.
    r = subprocess.run(
        [sys.executable, "-m", "solar.cli", "analyze", str(path), "--no-validate"]
        + ["--dim", "M=16", "--dim", "K=256", "--json", str(tmp_path / "a.json")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    import json

    assert json.loads((tmp_path / "a.json").read_text())["totals"]["macs"] == 16 * 256 * 256


def test_data_dependent_control_flow_is_one_line_with_a_hint(tmp_path):
    path = write(
        tmp_path,
        """
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = nn.Parameter(torch.ones(4))

            def forward(self, x):
                if x.sum() > 0:
                    return x * self.scale
                return x


        def get_inputs():
            return [torch.randn(4, 4)]
        """,
    )
    with pytest.raises(UserError) as e:
        solar.analyze(str(path))
    text = str(e.value)
    assert "control flow or output shapes depend on tensor values" in text
    assert "need a static variant" in text
    assert len(text.splitlines()) == 2  # the message and its hint: no graph dump


def test_lowered_program_errors_do_not_name_a_file_that_does_not_exist():
    from solar.frontend.validation import lowered_name

    assert lowered_name("model.py") == "<IR lowered from model.py>"


def test_mode_option_of_the_cli(tmp_path):
    path = write(
        tmp_path,
        """
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm1d(16)

            def forward(self, x):
                return self.bn(x)


        def get_inputs():
            return [torch.randn(32, 16)]
        """,
    )

    def run(*extra):
        r = subprocess.run(
            [sys.executable, "-m", "solar.cli", "analyze", str(path), *extra],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        return r.stdout

    # Training mode (the default) reads x and writes y, updates the running mean and variance
    # (16 + 16 floats read and written) and the batch counter; eval reads the running
    # statistics only. Both validate; the report names the real file.
    train, evaluated = run(), run("--mode", "eval")
    assert "validation: full" in train and "validation: full" in evaluated
    assert f"SOL analysis of {path} on" in train
    assert "4 output(s) match" in train and "1 output(s) match" in evaluated
    r = subprocess.run(
        [sys.executable, "-m", "solar.cli", "analyze", str(path), "--mode", "test"],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0 and "invalid choice: 'test'" in r.stderr


ITEM_IN_CONSTRUCTOR = """
import torch
import torch.nn as nn

N = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        # Swin's per-block stochastic-depth rates: read back with .item() while building.
        rates = [x.item() for x in torch.linspace(0, 0.2, 4)]
        self.scale = sum(rates)
        self.lin = nn.Linear(N, N)

    def forward(self, x):
        return self.lin(x) * self.scale


def get_inputs():
    return [torch.randn(8, N)]
"""


def test_constructor_calling_item_captures_and_validates(tmp_path):
    # Before: DataDependentOutputException (fake/meta tensors have no values). 0 + 0.0667 +
    # 0.1333 + 0.2 = 0.4: the output is lin(x) * 0.4, validated against PyTorch.
    r = solar.analyze(str(write(tmp_path, ITEM_IN_CONSTRUCTOR)))
    assert r.validation.status == "full", r.validation.detail
    assert r.graph.total_macs == 8 * 32 * 32


SIZES_COMPUTED_FROM_TENSORS = """
import torch
import torch.nn as nn


class Model(nn.Module):
    # torchvision RegNet's pattern: block widths computed with tensor arithmetic and read
    # back, stage depths from a tensor of Python data.
    def __init__(self):
        super().__init__()
        widths = (torch.round(torch.arange(4) * 8.0 + 16)).int().tolist()  # 16, 24, 32, 40
        depths = torch.diff(torch.tensor([0, 2, 5])).int().tolist()  # 2, 3
        self.lin = nn.Linear(widths[-1], sum(depths))

    def forward(self, x):
        return self.lin(x)


def get_inputs():
    return [torch.randn(4, 40)]
"""


def test_sizes_computed_from_small_tensors_capture_on_fake_tensors(tmp_path):
    # Before: DataDependentOutputException in Model(...) (the widths' .tolist() on a fake
    # tensor). The linear is 40 -> 5 on 4 rows: 4 x 40 x 5 = 800 MACs.
    r = solar.analyze(str(write(tmp_path, SIZES_COMPUTED_FROM_TENSORS)))
    assert r.validation.status == "full", r.validation.detail
    assert r.graph.total_macs == 800


MUTATED_ATTRIBUTE_WITH_EINOPS = """
import torch
import torch.nn as nn
from einops import rearrange

N = 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.zeros(4, N)  # a plain tensor attribute, not a buffer
        self.lin = nn.Linear(N, N)

    def forward(self, x):
        self.hidden = self.hidden + 1  # updated by every call
        y = rearrange(self.lin(x), "b (h d) -> b h d", h=2)
        return y.sum(-1) + self.hidden[:, :2]


def get_inputs():
    return [torch.randn(4, N)]
"""


def test_mutated_tensor_attribute_and_einops_analyse_and_validate(tmp_path):
    # Before: torch.export refused "Constant hidden is mutated ... register it as buffer".
    # Outputs: the result and the attribute's new value (a buffer update eager also makes).
    r = solar.analyze(str(write(tmp_path, MUTATED_ATTRIBUTE_WITH_EINOPS)))
    assert r.validation.status == "full", r.validation.detail
    assert len(r.validation.outputs) == 2


def test_missing_package_is_named(tmp_path):
    path = write(tmp_path, "import torch\nimport not_a_package_here\n")
    with pytest.raises(UserError) as e:
        solar.analyze(str(path))
    assert "the program imports 'not_a_package_here', which is not installed here" in str(e.value)
    assert "pip install not_a_package_here" in str(e.value)


def test_unsupported_operator_names_the_library_line(tmp_path, monkeypatch):
    # A model library's module takes a running maximum into data-chosen positions (no IR
    # kernel writes there): the error names the library's line that called scatter_reduce,
    # not only the operator.
    (tmp_path / "ranking_lib.py").write_text(
        "import torch\n\n\nclass Ranker(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        '        return x.scatter_reduce(1, x.argsort(-1), x, reduce="amax")\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import ranking_lib

    model = torch.nn.Sequential(ranking_lib.Ranker(), torch.nn.ReLU())
    with pytest.raises(UserError) as e:
        solar.analyze(model, [torch.randn(2, 8)], validate=False)
    assert "scatter_reduce with reduce='amax', include_self=True is not expressible" in str(e.value)
    assert 'ranking_lib.py:6: return x.scatter_reduce(1, x.argsort(-1), x, reduce="amax")' in str(
        e.value
    )


RANDN_IN_FORWARD = """
import torch
import torch.nn as nn

B, T, N, H = 4, 6, 8, 16


class Model(nn.Module):
    # A random initial LSTM state, drawn in every forward call (a public benchmark pattern).
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(N, H, batch_first=True)
        self.fc = nn.Linear(H, 2)

    def forward(self, x):
        h0 = torch.randn(1, x.size(0), H)
        c0 = torch.randn(1, x.size(0), H)
        out, _ = self.lstm(x, (h0, c0))
        return self.fc(out[:, -1, :])


def get_inputs():
    return [torch.randn(B, T, N)]
"""


def test_randn_in_forward_is_a_generated_input_and_validates(tmp_path):
    # Before: "aten.randn.default is not expressible". Now each draw is a model() input of
    # role generated: 0 bytes (made on chip), and validation feeds the values PyTorch drew.
    r = solar.analyze(str(write(tmp_path, RANDN_IN_FORWARD)))
    assert r.validation.status == "full", r.validation.detail
    drawn = [t for t in r.graph.tensors if t.role == "generated"]
    assert [(t.shape, t.bytes) for t in drawn] == [([1, 4, 16], 0), ([1, 4, 16], 0)]
    assert 'role="generated"' in r.ir_text
    assert sum("random numbers drawn in forward()" in n for n in r.notes) == 1


def test_analysis_leaves_every_submodules_mode_as_it_was():
    # A model in training mode with a frozen (eval-mode) encoder: analysing it in either mode,
    # and validating it, gives every submodule its own mode back.
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.1))
    model.train()
    model[0].eval()
    for mode in ("eval", "train", None):
        solar.analyze(model, [torch.randn(2, 8)], mode=mode)
        assert (model.training, model[0].training, model[1].training) == (True, False, True)


def test_forward_without_tensor_outputs_is_a_capture_error(tmp_path):
    path = write(
        tmp_path,
        """
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def forward(self, x):
                return {"n": 3, "flag": True}


        def get_inputs():
            return [torch.randn(4)]
        """,
    )
    with pytest.raises(UserError) as e:
        solar.analyze(str(path))
    assert str(e.value).startswith(f"{path}: error[capture]: forward() returns no tensor")


def test_errors_tracing_the_lowered_program_name_the_lowered_text():
    # A diagnostic inside the lowered program (here: a tracer cap) points at lines of the
    # lowered text, not of the user's file: it names <IR lowered from ...>.
    from solar.frontend.validation import in_lowered_text

    with pytest.raises(UserError) as e, in_lowered_text("model.py"):
        solar.trace(solar.check(str(ROOT / "examples" / "ir" / "softmax.py")), {"R": 0})
    assert str(e.value).startswith("<IR lowered from model.py>")
