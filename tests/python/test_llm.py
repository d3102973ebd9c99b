"""Prefill and decode as separate workloads (solar.llm, docs/llm.md)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import solar  # noqa: E402
from solar.errors import UserError  # noqa: E402
from solar.llm import analyze_llm, context_sweep  # noqa: E402

# A Llama with every feature of the family (grouped-query attention, rotary embeddings, gated
# MLP, RMSNorm) at a size that validates in seconds.
SMALL = dict(
    num_hidden_layers=2,
    hidden_size=64,
    intermediate_size=128,
    num_attention_heads=4,
    num_key_value_heads=2,
    vocab_size=128,
    pad_token_id=0,
)


def small_llama():
    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(**SMALL)).eval()


def decode_bytes_by_hand(batch: int, context: int) -> int:
    """Fused DRAM bytes of one decode step of the small Llama, fp32 (4 bytes), by hand:
    weights: per layer q, o (64 x 64), k, v (64 x 32: 2 KV heads of 16), gate, up, down
    (3 x 64 x 128), two RMSNorm scales (2 x 64) = 36,992; 2 layers, the final norm (64) and
    the LM head (128 x 64): 82,240 values. The embedding reads only its `batch` gathered
    rows (64 each), not the table; rotary's inverse frequencies: 8 values. The cache: 2
    layers x keys and values x [batch, 2, context, 16]. Activations crossing DRAM: the token
    ids (int64) in and the logits (batch x 128) out."""
    weights = 82_240 + batch * 64 + 8
    cache = 2 * 2 * batch * 2 * context * 16
    return 4 * (weights + cache + batch * 128) + 8 * batch


@pytest.mark.parametrize("context", [32, 256])
def test_decode_validates_and_its_bytes_are_weights_cache_and_activations(context):
    r = analyze_llm(small_llama(), "decode", batch=2, context=context)
    assert r.result.validation.status == "full", r.result.validation.detail
    # context 32: 363,312 B; context 256: 592,688 B (the cache's 229,376 B more).
    assert r.result.analysis.fused.bytes == decode_bytes_by_hand(2, context)
    assert r.tokens == 2
    assert r.tokens_per_second() == pytest.approx(2 / r.result.analysis.fused.seconds)


def test_prefill_validates_and_counts_the_prompt():
    r = analyze_llm(small_llama(), "prefill", batch=1, seq=16)
    assert r.result.validation.status == "full", r.result.validation.detail
    # MACs: per token and layer 36,864 (q, k, v, o, MLP), 2 layers; per layer attention
    # QK^T and PV over the 16 x 17 / 2 = 136 (query, key) pairs the causal mask keeps
    # (docs/pytorch.md, "Masked attention"), x 64 (4 heads of 16) each; the LM head 64 x 128
    # per token.
    assert r.result.graph.total_macs == 16 * 2 * 36_864 + 2 * 2 * 136 * 64 + 16 * 64 * 128


def test_published_size_decode_reads_every_layers_cache():
    # Llama-3-8B's layer shapes on fake tensors (fp32), 4 of its 32 layers (the full depth is
    # bench/bench_zoo.py's). The step's fused bytes grow with the context by exactly the
    # cache: 4 layers x (keys + values) x 8 KV heads x 128 x 4 bytes = 32,768 B per token of
    # context (every layer's slice: none is counted once for all).
    cfg = transformers.LlamaConfig(
        hidden_size=4096,
        intermediate_size=14336,
        num_hidden_layers=4,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=128256,
    )
    with solar.fake_tensors():
        model = transformers.LlamaForCausalLM(cfg).eval()
    short, long = (analyze_llm(model, "decode", 1, context=c) for c in (1024, 2048))
    assert short.result.validation.status == "none"
    delta = long.result.analysis.fused.bytes - short.result.analysis.fused.bytes
    assert delta == 1024 * 4 * 2 * 8 * 128 * 4
    points = context_sweep(model, [1024, 8192])
    assert [p.bottleneck for p in points] == ["memory", "memory"]  # batch 1: bandwidth-bound
    assert points[0].tokens_per_second > points[1].tokens_per_second


def small_falcon_h1():
    """A Falcon-H1 (every layer attention and Mamba-2 side by side, a hybrid cache) at a size
    that validates in seconds."""
    transformers.logging.set_verbosity_error()
    cfg = transformers.FalconH1Config(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        mamba_d_ssm=32,
        mamba_n_heads=4,
        mamba_d_head=8,
        mamba_d_state=8,
        mamba_d_conv=4,
        mamba_expand=1,
        mamba_chunk_size=8,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    return transformers.FalconH1ForCausalLM(cfg), cfg


def test_hybrid_cache_decode_validates_and_reads_every_state():
    # A decode step of a hybrid model failed capture: its cache's Mamba states were not
    # made (a DynamicCache only given keys and values), or, from a real prefill, were
    # constants the step updates in place ("Constant ... is mutated"). Now the cache is the
    # one a prefill of the context leaves and every state is an input.
    pytest.importorskip("transformers.models.falcon_h1")
    model, _ = small_falcon_h1()
    r = analyze_llm(model, "decode", batch=1, context=6)
    assert r.result.validation.status == "full", r.result.validation.detail
    # Fused bytes by hand, fp32. Weights per layer: MLP 3 x 64 x 32 = 6,144; Mamba in_proj
    # 84 x 32 = 2,688 (2 x 32 + 2 x 8 + 4 heads), out_proj 32 x 32 = 1,024, conv 48 x 4 + 48,
    # dt_bias, A_log, D 3 x 4: 3,964; attention q, o 32 x 32, k, v 16 x 32: 3,072; two norms
    # 64: 13,244, x 2 layers = 26,488. The final norm 32, the LM head 64 x 32 = 2,048, the
    # embedding's one gathered row 32, two mup vectors 2 x 84, rotary's inverse frequencies
    # 4: 28,772 values. The cache per layer: keys and values 2 x [1, 2, 6, 8] = 192, the conv
    # state [1, 48, 4] = 192, the recurrent state [1, 4, 8, 8] = 256: 640, x 2 = 1,280. The
    # id (int64) in, the logits (64) out. The step's in-place state updates are not outputs
    # (as the new keys and values are not: docs/llm.md).
    assert r.result.analysis.fused.bytes == 4 * (28_772 + 1_280 + 64) + 8


def test_an_unfilled_hybrid_cache_is_refused_with_what_works():
    # A fresh DynamicCache of a hybrid model as an input: its Mamba states are made inside
    # the step, where torch.export sees the cache's token count as a constant it mutates.
    # The error names the cache and its layer class and says what to give instead.
    pytest.importorskip("transformers.models.falcon_h1")
    model, cfg = small_falcon_h1()
    inputs = {
        "input_ids": torch.zeros(1, 4, dtype=torch.long),
        "cache": transformers.DynamicCache(config=cfg),
        "use_cache": True,
    }
    with pytest.raises(UserError) as err:
        solar.analyze(model.eval(), inputs, validate=False)
    message = str(err.value)
    assert "the DynamicCache input has LinearAttentionAndFullAttentionLayer layers" in message
    assert "not made yet" in message and "use_cache=False" in message
    assert "model(input_ids, use_cache=True).cache" in message


def test_phase_arguments_are_checked():
    with pytest.raises(UserError, match="one new token per sequence"):
        analyze_llm(small_llama(), "decode", seq=4, context=8)
    with pytest.raises(UserError, match="reads a cache"):
        analyze_llm(small_llama(), "decode", context=0)
    with pytest.raises(UserError, match="phase must be"):
        analyze_llm(small_llama(), "generate")


LLAMA_FILE = """
import torch
import transformers

transformers.logging.set_verbosity_error()


class Model(transformers.LlamaForCausalLM):
    def __init__(self):
        super().__init__(transformers.LlamaConfig(
            num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=128, pad_token_id=0))
        self.eval()


def get_inputs():
    return [torch.zeros(1, 8, dtype=torch.long)]
"""


def test_cli_phase_decode_of_a_problem_file(tmp_path):
    import json
    import subprocess
    import sys

    path = tmp_path / "llama.py"
    path.write_text(LLAMA_FILE)
    out = tmp_path / "a.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "solar.cli",
            "analyze",
            str(path),
            "--phase",
            "decode",
            "--batch",
            "2",
            "--context",
            "32",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "validation: full" in r.stdout
    assert "decode step: batch 2, 1 new token(s) per sequence after 32 cached" in r.stdout
    # The same bytes as the Python API's decode step of this model (derived by hand above).
    assert json.loads(out.read_text())["totals"]["bytes"]["fused"] == decode_bytes_by_hand(2, 32)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "solar.cli",
            "analyze",
            "examples/ir/softmax.py",
            "--phase",
            "decode",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0 and "--phase and --training apply to PyTorch programs" in r.stderr
