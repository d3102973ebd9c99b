"""Breadth probe: Hugging Face `transformers` architectures beyond the tested model zoo
(tests/python/hf_zoo.py), each built from a small config object (nothing downloaded),
captured, lowered, validated in full and analysed, one fresh process per model.

The zoo test runs in CI and compares every count with FlopCounterMode; this probe only asks
whether each further architecture goes through end to end, so that a release of transformers
that breaks one is seen. It prints one row per model: seconds, validation, MACs, or the first
line of its error.

    .venv/bin/python bench/zoo_breadth.py [--only NAME,NAME]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# name -> (Config class, Model class, config kwargs over a base of hf_zoo, inputs kind).
# Base "decoder": hf_zoo.DECODER; "gqa": hf_zoo.GQA (2 key/value heads); "vision":
# hf_zoo.VISION; "none": the kwargs alone.
MOE = dict(num_experts_per_tok=2)
EXTRA = {
    "olmo": ("OlmoConfig", "OlmoModel", "gqa", {}, "ids"),
    "olmo2": ("Olmo2Config", "Olmo2Model", "gqa", {}, "ids"),
    "granite": ("GraniteConfig", "GraniteModel", "gqa", {}, "ids"),
    "cohere": ("CohereConfig", "CohereModel", "gqa", {}, "ids"),
    "stablelm": ("StableLmConfig", "StableLmModel", "gqa", {}, "ids"),
    "phi": ("PhiConfig", "PhiModel", "decoder", {}, "ids"),
    "starcoder2": ("Starcoder2Config", "Starcoder2Model", "gqa", {}, "ids"),
    "gemma": ("GemmaConfig", "GemmaModel", "gqa", dict(head_dim=16), "ids"),
    "glm": ("GlmConfig", "GlmModel", "gqa", dict(head_dim=16), "ids"),
    "nemotron": ("NemotronConfig", "NemotronModel", "gqa", dict(head_dim=16), "ids"),
    "exaone4": ("Exaone4Config", "Exaone4Model", "gqa", dict(head_dim=16), "ids"),
    "smollm3": ("SmolLM3Config", "SmolLM3Model", "gqa", {}, "ids"),
    "helium": ("HeliumConfig", "HeliumModel", "gqa", dict(head_dim=16), "ids"),
    "ernie4_5": ("Ernie4_5Config", "Ernie4_5Model", "gqa", dict(head_dim=16), "ids"),
    "seed_oss": ("SeedOssConfig", "SeedOssModel", "gqa", dict(head_dim=16), "ids"),
    "hunyuan_dense": (
        "HunYuanDenseV1Config",
        "HunYuanDenseV1Model",
        "gqa",
        dict(head_dim=16),
        "ids",
    ),
    "apertus": ("ApertusConfig", "ApertusModel", "gqa", dict(head_dim=16), "ids"),
    "diffllama": ("DiffLlamaConfig", "DiffLlamaModel", "gqa", {}, "ids"),
    "qwen2_moe": (
        "Qwen2MoeConfig",
        "Qwen2MoeModel",
        "gqa",
        dict(MOE, num_experts=4, moe_intermediate_size=32, shared_expert_intermediate_size=32),
        "ids",
    ),
    "olmoe": ("OlmoeConfig", "OlmoeModel", "gqa", dict(MOE, num_experts=4), "ids"),
    "phimoe": ("PhimoeConfig", "PhimoeModel", "gqa", dict(MOE, num_local_experts=4), "ids"),
    "granitemoe": (
        "GraniteMoeConfig",
        "GraniteMoeModel",
        "gqa",
        dict(MOE, num_local_experts=4),
        "ids",
    ),
    "gpt_oss": (
        "GptOssConfig",
        "GptOssModel",
        "gqa",
        dict(MOE, head_dim=16, num_local_experts=4),
        "ids",
    ),
    "qwen3_next": (
        "Qwen3NextConfig",
        "Qwen3NextModel",
        "gqa",
        dict(
            MOE,
            head_dim=16,
            num_experts=4,
            moe_intermediate_size=32,
            shared_expert_intermediate_size=32,
            linear_num_value_heads=4,
            linear_num_key_heads=2,
            linear_key_head_dim=16,
            linear_value_head_dim=16,
            layer_types=["linear_attention", "full_attention"],
        ),
        "ids",
    ),
    "lfm2": ("Lfm2Config", "Lfm2Model", "gqa", dict(layer_types=["conv", "full_attention"]), "ids"),
    "jamba": (
        "JambaConfig",
        "JambaModel",
        "gqa",
        dict(
            num_experts=2,
            num_experts_per_tok=1,
            attn_layer_period=2,
            attn_layer_offset=1,
            expert_layer_period=2,
            expert_layer_offset=1,
            mamba_d_state=8,
            mamba_dt_rank=8,
            use_mamba_kernels=False,
        ),
        "ids",
    ),
    "bamba": (
        "BambaConfig",
        "BambaModel",
        "gqa",
        dict(
            mamba_n_heads=4,
            mamba_d_head=32,
            mamba_d_state=16,
            mamba_n_groups=1,
            mamba_chunk_size=8,
            attn_layer_indices=[1],
        ),
        "ids",
    ),
    "zamba2": (
        "Zamba2Config",
        "Zamba2Model",
        "gqa",
        dict(
            mamba_d_state=16,
            mamba_headdim=16,
            n_mamba_heads=8,
            layers_block_type=["mamba", "hybrid"],
            hybrid_layer_ids=[1],
        ),
        "ids",
    ),
    "mamba2": (
        "Mamba2Config",
        "Mamba2Model",
        "none",
        dict(
            num_hidden_layers=2,
            hidden_size=64,
            num_heads=4,
            head_dim=32,
            vocab_size=128,
            state_size=16,
            n_groups=1,
            expand=2,
            chunk_size=8,
        ),
        "ids",
    ),
    "falcon_mamba": (
        "FalconMambaConfig",
        "FalconMambaModel",
        "none",
        dict(num_hidden_layers=2, hidden_size=64, vocab_size=128, state_size=8),
        "ids",
    ),
    "recurrent_gemma": (
        "RecurrentGemmaConfig",
        "RecurrentGemmaModel",
        "none",
        dict(
            num_hidden_layers=3,
            hidden_size=64,
            intermediate_size=128,
            num_attention_heads=4,
            num_key_value_heads=1,
            vocab_size=128,
            lru_width=64,
            attention_window_size=8,
            head_dim=16,
        ),
        "ids",
    ),
    "opt": (
        "OPTConfig",
        "OPTModel",
        "none",
        dict(
            num_hidden_layers=2,
            hidden_size=64,
            ffn_dim=128,
            num_attention_heads=4,
            vocab_size=128,
            word_embed_proj_dim=64,
            pad_token_id=1,
        ),
        "ids",
    ),
    "bloom": (
        "BloomConfig",
        "BloomModel",
        "none",
        dict(n_layer=2, hidden_size=64, n_head=4, vocab_size=128),
        "ids",
    ),
    "codegen": (
        "CodeGenConfig",
        "CodeGenModel",
        "none",
        dict(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=64, rotary_dim=8),
        "ids",
    ),
    "mpt": (
        "MptConfig",
        "MptModel",
        "none",
        dict(n_layers=2, d_model=64, n_heads=4, vocab_size=128),
        "ids",
    ),
    "xlnet": (
        "XLNetConfig",
        "XLNetModel",
        "none",
        dict(n_layer=2, d_model=64, n_head=4, d_inner=128, vocab_size=128),
        "ids",
    ),
    "electra": ("ElectraConfig", "ElectraModel", "decoder", dict(embedding_size=64), "ids"),
    "albert": ("AlbertConfig", "AlbertModel", "decoder", dict(embedding_size=32), "ids"),
    "deberta_v2": ("DebertaV2Config", "DebertaV2Model", "decoder", {}, "ids"),
    "xlm_roberta": ("XLMRobertaConfig", "XLMRobertaModel", "decoder", dict(pad_token_id=1), "ids"),
    "bigbird": (
        "BigBirdConfig",
        "BigBirdModel",
        "decoder",
        dict(attention_type="original_full"),
        "ids",
    ),
    "funnel": (
        "FunnelConfig",
        "FunnelModel",
        "none",
        dict(
            block_sizes=[1, 1],
            num_decoder_layers=1,
            d_model=64,
            n_head=4,
            d_head=16,
            d_inner=128,
            vocab_size=128,
        ),
        "ids",
    ),
    "longformer": (
        "LongformerConfig",
        "LongformerModel",
        "decoder",
        dict(attention_window=4, pad_token_id=1),
        "ids",
    ),
    "deit": ("DeiTConfig", "DeiTModel", "vision", dict(image_size=32, patch_size=8), "image"),
    "beit": ("BeitConfig", "BeitModel", "vision", dict(image_size=32, patch_size=8), "image"),
    "siglip": (
        "SiglipVisionConfig",
        "SiglipVisionModel",
        "vision",
        dict(image_size=32, patch_size=8),
        "image",
    ),
    "yolos": (
        "YolosConfig",
        "YolosModel",
        "vision",
        dict(image_size=[32, 32], patch_size=8, num_detection_tokens=4),
        "image",
    ),
    "segformer": (
        "SegformerConfig",
        "SegformerModel",
        "none",
        dict(
            num_encoder_blocks=2,
            depths=[1, 1],
            sr_ratios=[2, 1],
            hidden_sizes=[16, 32],
            num_attention_heads=[1, 2],
            strides=[4, 2],
            patch_sizes=[7, 3],
            mlp_ratios=[2, 2],
        ),
        "image",
    ),
    "mobilevit": (
        "MobileViTConfig",
        "MobileViTModel",
        "none",
        dict(
            image_size=32, hidden_sizes=[32, 48, 64], neck_hidden_sizes=[8, 16, 24, 24, 32, 40, 160]
        ),
        "image",
    ),
}

PROBE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
import torch, transformers, hf_zoo, solar
transformers.logging.set_verbosity_error()
config_cls, model_cls, base, kwargs, kind = json.loads(sys.argv[2])
base = {"decoder": hf_zoo.DECODER, "gqa": hf_zoo.GQA, "vision": hf_zoo.VISION, "none": {}}[base]
t0 = time.perf_counter()
try:
    config = getattr(transformers, config_cls)(**{**base, **kwargs})
    torch.manual_seed(0)
    model = getattr(transformers, model_cls)(config)
    r = solar.analyze(model, hf_zoo.inputs(kind), mode="eval")
    row = {"validation": r.validation.status, "macs": r.graph.total_macs}
except Exception as e:  # noqa: BLE001 - the row says it
    first = next((ln for ln in str(e).splitlines() if ln.strip()), "")
    row = {"error": f"{type(e).__name__}: {first[:160]}"}
row["seconds"] = time.perf_counter() - t0
print(json.dumps(row))
"""


def probe(name: str) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            name,
            json.dumps(EXTRA[name]),
            str(ROOT / "tests" / "python"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {out.returncode}: {tail[:160]}", "seconds": 0.0}
    return json.loads(lines[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated names (default: all)")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(EXTRA)
    unknown = [n for n in names if n not in EXTRA]
    if unknown:
        print(f"zoo_breadth: unknown model {', '.join(unknown)}; known: {', '.join(EXTRA)}")
        return 2
    print(f"{'model':<16} {'time s':>7} {'validation':>10} {'MACs':>12}")
    passed = 0
    for name in names:
        r = probe(name)
        if "error" in r:
            print(f"{name:<16} {r['seconds']:>7.1f} error: {r['error']}", flush=True)
            continue
        passed += r["validation"] == "full"
        print(f"{name:<16} {r['seconds']:>7.1f} {r['validation']:>10} {r['macs']:>12,}", flush=True)
    print(f"\n{passed} of {len(names)} analysed and validated in full")
    return 0


if __name__ == "__main__":
    sys.exit(main())
