"""Quantisation recipes' cost: the analysis of one decode step of a Llama (Llama-3-8B layer
shapes, fake tensors, 8 of its 32 layers) with and without `--quantize w4a4 --kv-cache fp8`,
side by side in one process (the capture and lowering, shared, are not timed). Prints the
median of --repeat analyses of each and their ratio; the recipe's own transform
(src/sol/quantize.cpp) is one copy of the graph and one walk over its nodes.

    .venv/bin/python bench/bench_quantize.py [--arch B200] [--repeat 9] [--layers 8]
"""

from __future__ import annotations

import argparse
import statistics
import time

import solar
import torch
import transformers
from solar.accuracy import MathPolicy
from solar.llm import step_inputs
from solar.pytorch import lower_pytorch
from solar.session import analyze_graph


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="B200")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--layers", type=int, default=8)
    args = ap.parse_args()

    cfg = transformers.LlamaConfig(
        hidden_size=4096,
        intermediate_size=14336,
        num_hidden_layers=args.layers,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=128256,
    )
    with solar.fake_tensors():
        model = transformers.LlamaForCausalLM(cfg).eval()
    inputs = step_inputs(model, "decode", batch=8, seq=1, context=4096)
    from solar.frontend.validation import load_lowered

    with torch.no_grad():
        _, lowered = lower_pytorch(model, inputs, output_caches=False)
    graph = solar._core.trace(load_lowered(lowered), [])
    arch = solar.load_arch(args.arch)
    policies = {
        "as written": MathPolicy(),
        "w4a4 + fp8 KV cache": MathPolicy(quantize="w4a4", kv_cache="fp8"),
    }
    print(
        f"{len(graph.nodes):,} nodes, {args.layers} layers, decode batch 8 context 4096, "
        f"{args.arch}, median of {args.repeat}"
    )
    for cache_aware in (True, False):
        times: dict[str, list[float]] = {name: [] for name in policies}
        for _ in range(args.repeat):  # interleaved: the machine's load hits both alike
            for name, policy in policies.items():
                t0 = time.perf_counter()
                analyze_graph(graph, arch, policy, cache_aware=cache_aware)
                times[name].append(time.perf_counter() - t0)
        print(f"cache-aware mode {'on (the default)' if cache_aware else 'off'}:")
        for name, t in times.items():
            print(f"  {name:22s} {statistics.median(t) * 1e3:8.2f} ms")
        base, quant = (statistics.median(t) for t in times.values())
        print(f"  ratio {quant / base:.2f}x")


if __name__ == "__main__":
    main()
