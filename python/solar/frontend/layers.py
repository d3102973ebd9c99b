"""Progress through a model's layers while torch.export traces it: a deep model's capture
takes most of a run (tens of seconds for a decoder stack), and a stage line that only says
"capturing" for that long does not tell the user whether it moves."""

from __future__ import annotations

import contextlib


def layer_stack(model) -> list:
    """The modules of the model's largest stack of like layers: the nn.ModuleList (or
    nn.Sequential) whose children share one class, with the most children (at least 2): a
    decoder's layers, a ViT's blocks, a ResNet stage's blocks. [] when there is none."""
    import torch.nn as nn

    best: list = []
    for module in model.modules():
        if not isinstance(module, (nn.ModuleList, nn.Sequential)):
            continue
        children = list(module.children())
        if len(children) >= max(2, len(best) + 1) and len({type(c) for c in children}) == 1:
            best = children
    return best


@contextlib.contextmanager
def layer_progress(model, step, what: str):
    """While open, `step(f"{what}: layer i/L")` as each layer of layer_stack(model) starts
    its forward (a forward pre-hook, removed on exit). Nothing without `step` or a stack."""
    layers = layer_stack(model) if step is not None else []
    handles = [
        layer.register_forward_pre_hook(
            lambda module, args, i=i: step(f"{what}: layer {i + 1}/{len(layers)}")
        )
        for i, layer in enumerate(layers)
    ]
    try:
        yield
    finally:
        for h in handles:
            h.remove()
