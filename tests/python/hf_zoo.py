"""Hugging Face transformers models built from small config objects (nothing downloaded),
with example inputs: the model zoo of tests/python/test_model_zoo.py and bench/bench_zoo.py.

Each entry: name -> (Config class, Model class, config kwargs, inputs kind). The small configs
keep every architectural feature (grouped-query attention, rotary embeddings, sliding
windows, gated MLPs, cross-attention, patch embeddings, selective scan) and shrink only the
widths and depths, so a capture and a full validation take seconds.
"""

from __future__ import annotations

DECODER = dict(
    num_hidden_layers=2,
    hidden_size=64,
    intermediate_size=128,
    num_attention_heads=4,
    vocab_size=128,
    pad_token_id=0,
)
GQA = dict(DECODER, num_key_value_heads=2)
VISION = {k: v for k, v in DECODER.items() if k not in ("vocab_size", "pad_token_id")}
# BART's and Whisper's shared layout: 2 encoder and 2 decoder layers of width 64.
ENCODER_DECODER = dict(
    encoder_layers=2,
    decoder_layers=2,
    d_model=64,
    encoder_ffn_dim=128,
    decoder_ffn_dim=128,
    encoder_attention_heads=4,
    decoder_attention_heads=4,
    vocab_size=128,
)
# DeepSeek's multi-head latent attention, grouped routing over 8 experts and a shared one.
MLA = dict(
    DECODER,
    num_key_value_heads=4,
    first_k_dense_replace=1,
    moe_intermediate_size=32,
    n_routed_experts=8,
    n_shared_experts=1,
    num_experts_per_tok=2,
    n_group=4,
    topk_group=2,
    kv_lora_rank=16,
    q_lora_rank=32,
    qk_rope_head_dim=8,
    qk_nope_head_dim=8,
    v_head_dim=16,
)
SEQ = 16
IMAGE_TOKEN = 2  # below the ids inputs() draws (3..127): only the placed ones are image tokens

ZOO = {
    "gpt2": (
        "GPT2Config",
        "GPT2Model",
        dict(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=64),
        "ids",
    ),
    "gptj": (
        "GPTJConfig",
        "GPTJModel",
        dict(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=64, rotary_dim=8),
        "ids",
    ),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXModel", DECODER, "ids"),
    "llama": ("LlamaConfig", "LlamaModel", GQA, "ids"),
    "mistral": ("MistralConfig", "MistralModel", GQA, "ids"),
    "qwen2": ("Qwen2Config", "Qwen2Model", GQA, "ids"),
    "qwen3": ("Qwen3Config", "Qwen3Model", dict(GQA, head_dim=16), "ids"),
    # Mixtures of experts: captured with transformers' "batched_mm" experts (frontend/
    # capture.py, static_experts); every token runs its top-k experts.
    "mixtral": (
        "MixtralConfig",
        "MixtralModel",
        dict(GQA, num_local_experts=4, num_experts_per_tok=2),
        "ids",
    ),
    "qwen3_moe": (
        "Qwen3MoeConfig",
        "Qwen3MoeModel",
        dict(GQA, head_dim=16, moe_intermediate_size=32, num_experts=4, num_experts_per_tok=2),
        "ids",
    ),
    "deepseek_v3": ("DeepseekV3Config", "DeepseekV3Model", MLA, "ids"),
    # DeepSeek-V2: the same latent attention with its rotary embedding in complex form
    # (polar, view_as_complex: computed over pairs of reals, frontend/complex_pairs.py).
    "deepseek_v2": ("DeepseekV2Config", "DeepseekV2Model", MLA, "ids"),
    "gemma2": ("Gemma2Config", "Gemma2Model", dict(GQA, head_dim=16), "ids"),
    "gemma3": ("Gemma3TextConfig", "Gemma3TextModel", dict(GQA, head_dim=16), "ids"),
    "phi3": ("Phi3Config", "Phi3Model", GQA, "ids"),
    "falcon": (
        "FalconConfig",
        "FalconModel",
        dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, vocab_size=128),
        "ids",
    ),
    "bert": ("BertConfig", "BertModel", DECODER, "ids"),
    "roberta": ("RobertaConfig", "RobertaModel", dict(DECODER, pad_token_id=1), "ids"),
    "distilbert": (
        "DistilBertConfig",
        "DistilBertModel",
        dict(n_layers=2, dim=64, hidden_dim=128, n_heads=4, vocab_size=128, pad_token_id=0),
        "ids",
    ),
    "t5": (
        "T5Config",
        "T5Model",
        dict(num_layers=2, d_model=64, d_ff=128, num_heads=4, d_kv=16, vocab_size=128),
        "seq2seq",
    ),
    "bart": ("BartConfig", "BartModel", ENCODER_DECODER, "ids"),
    "whisper": (
        "WhisperConfig",
        "WhisperModel",
        dict(
            ENCODER_DECODER,
            num_mel_bins=16,
            max_source_positions=32,
            pad_token_id=0,
            decoder_start_token_id=1,
            bos_token_id=1,
            eos_token_id=2,
        ),
        "audio",
    ),
    "vit": ("ViTConfig", "ViTModel", dict(VISION, image_size=32, patch_size=8), "image"),
    "clip": (
        "CLIPConfig",
        "CLIPModel",
        dict(
            text_config=dict(DECODER, max_position_embeddings=32),
            vision_config=dict(VISION, image_size=32, patch_size=8),
            projection_dim=32,
        ),
        "text_image",
    ),
    # A vision-language model: CLIP's vision tower, a projector, a Llama decoder; the image's
    # 16 patch features replace the 16 image tokens of the prompt (masked_scatter).
    "llava": (
        "LlavaConfig",
        "LlavaModel",
        dict(
            vision_config=dict(
                model_type="clip_vision_model",
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=4,
                image_size=32,
                patch_size=8,
            ),
            text_config=dict(model_type="llama", **GQA),
            image_token_index=IMAGE_TOKEN,
            projector_hidden_act="gelu",
        ),
        "vlm",
    ),
    "swin": (
        "SwinConfig",
        "SwinModel",
        dict(
            image_size=32,
            patch_size=4,
            embed_dim=16,
            depths=[1, 1],
            num_heads=[2, 4],
            window_size=4,
        ),
        "image",
    ),
    "convnext": (
        "ConvNextConfig",
        "ConvNextModel",
        dict(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2, image_size=32),
        "image",
    ),
    "resnet": (
        "ResNetConfig",
        "ResNetModel",
        dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="bottleneck"),
        "image",
    ),
    "regnet": (
        "RegNetConfig",
        "RegNetModel",
        dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8),
        "image",
    ),
    "mobilenet_v2": (
        "MobileNetV2Config",
        "MobileNetV2Model",
        dict(image_size=32, depth_multiplier=0.25),
        "image",
    ),
    "efficientnet": (
        "EfficientNetConfig",
        "EfficientNetModel",
        dict(image_size=32, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320),
        "image",
    ),
    "convnextv2": (
        "ConvNextV2Config",
        "ConvNextV2Model",
        dict(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2, image_size=32),
        "image",
    ),
    "dinov2": ("Dinov2Config", "Dinov2Model", dict(VISION, image_size=32, patch_size=8), "image"),
    "mamba": (
        "MambaConfig",
        "MambaModel",
        dict(num_hidden_layers=2, hidden_size=64, state_size=8, vocab_size=128, expand=2),
        "ids",
    ),
    # Token shift by a negative pad (F.pad(x, (0, 0, 1, -1))), the WKV recurrence a loop.
    "rwkv": (
        "RwkvConfig",
        "RwkvModel",
        dict(
            num_hidden_layers=2,
            hidden_size=64,
            attention_hidden_size=64,
            intermediate_size=128,
            vocab_size=128,
            context_length=64,
        ),
        "ids",
    ),
}

MOE = ("mixtral", "qwen3_moe", "deepseek_v3", "deepseek_v2")


def build(name: str, **overrides):
    """(model, example inputs as keyword arguments) of a zoo entry, seeded."""
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    config_cls, model_cls, kwargs, kind = ZOO[name]
    config = getattr(transformers, config_cls)(**{**kwargs, **overrides})
    torch.manual_seed(0)
    model = getattr(transformers, model_cls)(config)
    return model, inputs(kind)


def inputs(kind: str) -> dict:
    import torch

    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 128, (1, SEQ), generator=g)
    if kind == "ids":
        return {"input_ids": ids}
    if kind == "seq2seq":
        return {"input_ids": ids, "decoder_input_ids": ids[:, :8]}
    if kind == "audio":  # 64 mel frames (the encoder's two convolutions halve them to 32)
        return {
            "input_features": torch.randn(1, 16, 64, generator=g),
            "decoder_input_ids": ids[:, :8],
        }
    if kind == "image":
        return {"pixel_values": torch.randn(1, 3, 32, 32, generator=g)}
    if kind == "vlm":  # 16 image tokens (one per patch of a 32 x 32 image) after 2 text tokens
        prompt = torch.cat([ids[:, :2], torch.full((1, 16), IMAGE_TOKEN), ids[:, 2:10]], dim=1)
        return {"input_ids": prompt, "pixel_values": torch.randn(1, 3, 32, 32, generator=g)}
    assert kind == "text_image"
    return {"input_ids": ids, "pixel_values": torch.randn(1, 3, 32, 32, generator=g)}


INPUT_NAMES = {
    "ids": ["input_ids"],
    "seq2seq": ["input_ids", "decoder_input_ids"],
    "audio": ["input_features", "decoder_input_ids"],
    "image": ["pixel_values"],
    "text_image": ["input_ids", "pixel_values"],
    "vlm": ["input_ids", "pixel_values"],
}


def problem_file(name: str) -> str:
    """A zoo entry as a problem file (docs/pytorch.md): Model() builds the transformers model
    from the entry's config, forward takes the inputs positionally, get_inputs() gives them."""
    from pathlib import Path

    config_cls, model_cls, kwargs, kind = ZOO[name]
    names = INPUT_NAMES[kind]
    here = str(Path(__file__).resolve().parent)
    return f'''"""{model_cls} from a small config (tests/python/hf_zoo.py), as a problem file."""
import sys

import torch
import transformers

sys.path.insert(0, {here!r})
import hf_zoo  # noqa: E402

CONFIG = {kwargs!r}


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.model = transformers.{model_cls}(transformers.{config_cls}(**CONFIG))

    def forward(self, {", ".join(names)}):
        return self.model({", ".join(f"{n}={n}" for n in names)})


def get_inputs():
    inputs = hf_zoo.inputs({kind!r})
    return [inputs[k] for k in {names!r}]


def get_init_inputs():
    return []
'''
