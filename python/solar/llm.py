"""LLM inference as users run it: prefill and decode as separate workloads (docs/llm.md).

`analyze_llm(model, phase, batch, seq, context)` analyses one forward pass of a Hugging Face
causal language model:

- **prefill**: `seq` new tokens per sequence after `context` cached ones (0: a plain prompt);
- **decode**: one new token per sequence (`seq` = 1) after `context` cached ones.

The key-value cache of `context` tokens is an input at its real size (a transformers
`DynamicCache`, one key and one value tensor of [batch, kv_heads, context, head_dim] per
layer; a hybrid model's, with linear-attention (Mamba) layers, the one a prefill of
`context` tokens leaves), so its bytes are read once per layer in the fused bound, every
layer's slice counted. The cache the step returns is not an output: a serving engine writes
only the new tokens' keys and values in place (a paged or static cache), so the bound counts
reading the cache, not rewriting it (leaving out the new tokens' writes keeps it a lower
bound: they are batch * seq * layers * 2 * kv_dim elements). Tokens per second at the bound
is batch * seq over the fused bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import argument_error

PHASES = ("prefill", "decode")


@dataclass
class LLMResult:
    phase: str
    batch: int
    seq: int
    context: int
    result: object  # pytorch.PyTorchResult

    @property
    def tokens(self) -> int:
        return self.batch * self.seq

    def tokens_per_second(self, i: int = 0) -> float:
        """New tokens per second at the fused bound on architecture `i`."""
        seconds = self.result.analyses[i].fused.seconds
        return self.tokens / seconds if seconds > 0 else float("inf")


def cache_shape(config, batch: int, context: int) -> tuple[int, int, int, int]:
    """[batch, kv_heads, context, head_dim] of one layer's keys (and values)."""
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return (batch, kv_heads, context, head_dim)


def _cache_keyword(model) -> str:
    """`cache` (transformers 5.x's name) when forward takes it, else `past_key_values`."""
    import inspect

    try:
        params = inspect.signature(type(model).forward).parameters
    except (TypeError, ValueError):
        return "past_key_values"
    return "cache" if "cache" in params else "past_key_values"


def step_inputs(model, phase: str, batch: int, seq: int, context: int, seed: int = 0) -> dict:
    """Keyword inputs of one prefill or decode step: token ids and, with `context` > 0, a
    DynamicCache of that many tokens (random values for a real model, a prefill's for a
    hybrid one; fake tensors, nothing allocated, for a model built inside
    `solar.fake_tensors()`)."""
    import torch
    import transformers

    from .frontend.capture import fake_tensors, is_fake

    if phase not in PHASES:
        raise argument_error(f"phase must be 'prefill' or 'decode', got {phase!r}")
    if phase == "decode" and seq != 1:
        raise argument_error("a decode step has one new token per sequence (seq=1)")
    if batch < 1 or seq < 1 or context < 0:
        raise argument_error("batch and seq must be at least 1 and context at least 0")
    if phase == "decode" and context < 1:
        raise argument_error("a decode step reads a cache: give context >= 1")
    config = model.config
    fake = any(is_fake(p) for p in model.parameters())
    g = torch.Generator().manual_seed(seed)

    def make():
        ids = torch.randint(0, config.vocab_size, (batch, seq), generator=None if fake else g)
        inputs = {"input_ids": ids, "use_cache": True}
        if context:
            cache = transformers.DynamicCache(config=config)
            if any(hasattr(layer, "conv_states") for layer in cache.layers):
                context_ids = torch.randint(
                    0, config.vocab_size, (batch, context), generator=None if fake else g
                )
                prefill(cache, context_ids)
            else:
                shape = cache_shape(config, batch, context)
                dtype = next(model.parameters()).dtype
                for layer in range(config.num_hidden_layers):
                    k = torch.randn(shape, dtype=dtype, generator=None if fake else g)
                    v = torch.randn(shape, dtype=dtype, generator=None if fake else g)
                    cache.update(k, v, layer)
            inputs[_cache_keyword(model)] = cache
        return inputs

    def prefill(cache, ids):
        """A hybrid model's cache (linear-attention (Mamba) layers: Falcon-H1): their conv and
        recurrent states are no function of random keys and values, so the cache of
        `context` tokens is the one a prefill of them leaves (in eval mode)."""
        from .frontend.capture import module_modes, restore_modes

        modes = module_modes(model)
        model.eval()
        try:
            with torch.no_grad():
                model(input_ids=ids, use_cache=True, **{_cache_keyword(model): cache})
        finally:
            restore_modes(modes)

    if fake:
        with fake_tensors():
            return make()
    return make()


def analyze_llm(
    model,
    phase: str = "decode",
    batch: int = 1,
    seq: int | None = None,
    context: int = 0,
    arch="H100_PCIe",
    validate: bool | None = None,
    fp32_math: str = "default",
    cache_aware: bool = True,
    quantize: str | None = None,
    kv_cache: str | None = None,
) -> LLMResult:
    """SOL of one prefill or decode step of a Hugging Face causal LM (in eval mode). `seq`
    defaults to 1 for decode and 128 for prefill; `validate` defaults to True for a real
    model and False for a fake one (nothing to run). `quantize` and `kv_cache` are
    `--quantize` and `--kv-cache` (docs/sol-modes.md, "Quantisation recipes")."""
    from .accuracy import with_quantize
    from .frontend.capture import is_fake
    from .pytorch import analyze_pytorch

    fp32_math = with_quantize(fp32_math, quantize, kv_cache)

    seq = seq if seq is not None else (1 if phase == "decode" else 128)
    inputs = step_inputs(model, phase, batch, seq, context)
    if validate is None:
        validate = not any(is_fake(p) for p in model.parameters())
    archs = arch if isinstance(arch, (list, tuple)) else (arch,)
    result = analyze_pytorch(
        model,
        inputs,
        archs=archs,
        fp32_math=fp32_math,
        validate=validate,
        cache_aware=cache_aware,
        mode="eval",
        output_caches=False,
    )
    return LLMResult(phase, batch, seq, context, result)


@dataclass(frozen=True)
class ContextPoint:
    context: int
    seconds: float  # fused bound of one decode step
    bottleneck: str  # what decides the fused bound: "memory" or a compute unit
    tokens_per_second: float


def context_sweep(model, contexts, batch: int = 1, arch="H100_PCIe") -> list[ContextPoint]:
    """Decode steps at each context length (no validation): where the step stops being
    memory-bound (it never does for batch 1 on today's GPUs; it can for large batches)."""
    points = []
    for c in contexts:
        r = analyze_llm(model, "decode", batch, 1, c, arch=arch, validate=False)
        fused = r.result.analysis.fused
        b = fused.bottleneck
        what = "memory" if b.kind == "memory" else f"compute ({b.unit})"
        points.append(ContextPoint(c, fused.seconds, what, r.tokens_per_second()))
    return points


def analyze_llm_file(
    path: str,
    phase: str,
    batch: int = 1,
    seq: int | None = None,
    context: int = 0,
    archs=("H100_PCIe",),
    validate: bool = True,
    fp32_math: str = "default",
    cache_aware: bool = True,
    overrides: dict | None = None,
) -> LLMResult:
    """`solar analyze FILE --phase ...`: the problem file's Model (built from
    get_init_inputs(); a Hugging Face causal LM) for one prefill or decode step; its
    get_inputs() is not used. Built for real when validating (small configs), on fake tensors
    otherwise (published sizes)."""
    from .frontend.capture import _as_list, _call_user, fake_tensors, load_problem

    problem = load_problem(path, overrides)

    def build():
        init = _as_list(
            _call_user(problem.get_init_inputs, "get_init_inputs()", path),
            "get_init_inputs",
            path,
        )
        return _call_user(lambda: problem.model_class(*init), "Model(...)", path)

    if validate:
        import torch

        torch.manual_seed(0)
        model = build()
    else:
        with fake_tensors():
            model = build()
    if not hasattr(model, "config") or not hasattr(model.config, "num_hidden_layers"):
        raise argument_error(
            f"--phase needs a Hugging Face causal language model; {path}'s Model is a "
            f"{type(model).__name__} without a transformers config",
            "write Model as a transformers model (e.g. class Model(LlamaForCausalLM)) or "
            "build it in Python and call solar.llm.analyze_llm",
        )
    return analyze_llm(
        model,
        phase,
        batch,
        seq,
        context,
        arch=list(archs),
        validate=validate,
        fp32_math=fp32_math,
        cache_aware=cache_aware,
    )
