"""Programs whose inputs and outputs are structures: flattened to tensors, with names.

A Hugging Face model takes keyword arguments (`input_ids=..., attention_mask=...`) and returns
a `ModelOutput` that may hold a key-value cache object; a detection model returns a list of
dicts. The IR has positional tensor inputs and outputs, so capture, validation and measurement
all run the program through `flat_module`: the same module (the same parameters, buffers and
qualified names) whose forward takes the input tensors positionally and returns its outputs as
one tuple of tensors, each named by its path in the original structure (`logits`,
`past_key_values.layers.0.keys`). Non-tensor leaves of the inputs (flags such as
`use_cache=False`, integers) are fixed at their example values; non-tensor leaves of the
outputs are dropped.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
from dataclasses import dataclass

# Objects nested deeper than this in an output are not searched for tensors.
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Signature:
    """How the flat inputs rebuild the original call: the pytree spec of `(args, kwargs)`,
    its leaves with tensors replaced by None, and the indices of the tensor leaves."""

    spec: object
    leaves: tuple
    tensor_leaves: tuple
    names: tuple  # one per tensor input: its path ("0", "input_ids", "pixel_values")
    positional: int = 0  # how many positional arguments the call has

    def call_args(self, tensors) -> tuple[tuple, dict]:
        from torch.utils import _pytree as pytree

        leaves = list(self.leaves)
        for i, t in zip(self.tensor_leaves, tensors, strict=True):
            leaves[i] = t
        args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        rebuild = lambda v: v.rebuild() if isinstance(v, CacheInput) else v  # noqa: E731
        return tuple(rebuild(a) for a in args), {k: rebuild(v) for k, v in kwargs.items()}


# A linear-attention (Mamba) cache layer's state (transformers' LinearAttentionLayer, and the
# hybrid LinearAttentionAndFullAttentionLayer of Falcon-H1): conv and recurrent states in
# dicts by state index, and the count of tokens seen; a decode step updates them in place.
_LINEAR_STATES = ("conv_states", "recurrent_states")
_LINEAR_COUNT = "cumulative_length_linear"


def cache_slots(layer) -> list[tuple[str, object]]:
    """(attribute, state index) of every tensor of one cache layer that a step reads: its
    keys and values (index None), and a linear-attention layer's conv and recurrent states
    and its token count."""
    import torch

    slots = [
        (a, None) for a in ("keys", "values") if isinstance(getattr(layer, a, None), torch.Tensor)
    ]
    for a in _LINEAR_STATES:
        states = getattr(layer, a, None)
        if isinstance(states, dict):
            slots += [(a, i) for i, t in states.items() if isinstance(t, torch.Tensor)]
    linear = any(a in _LINEAR_STATES for a, _ in slots)
    if linear and isinstance(getattr(layer, _LINEAR_COUNT, None), torch.Tensor):
        slots.append((_LINEAR_COUNT, None))
    return slots


def _filled(layer) -> bool:
    """The layer holds its state: keys and values (an attention layer), initialised conv
    states (a linear-attention layer), both for a hybrid one."""
    import torch

    attention = not hasattr(layer, "keys") or all(
        isinstance(getattr(layer, a, None), torch.Tensor) for a in ("keys", "values")
    )
    conv = getattr(layer, "conv_states", None)
    linear = not isinstance(conv, dict) or all(isinstance(t, torch.Tensor) for t in conv.values())
    return attention and linear and bool(cache_slots(layer))


def is_cache(v) -> bool:
    """A key-value cache object (transformers' DynamicCache and its kin, hybrid ones with
    linear-attention layers included): a `layers` list whose every entry holds its state."""
    layers = getattr(v, "layers", None)
    return isinstance(layers, list) and bool(layers) and all(_filled(layer) for layer in layers)


class CacheInput:
    """A key-value cache given as an input, seen as its tensors (layer 0 keys, layer 0
    values, then a linear-attention layer's states and count, layer 1 ...: cache_slots):
    each call rebuilds a fresh copy of the cache around the tensors it gets, so a forward
    pass that appends to its cache or updates its states never changes the example's."""

    def __init__(self, template, tensors):
        self.template, self.tensors = template, list(tensors)

    def rebuild(self):
        cache = copy.copy(self.template)
        cache.layers = []
        tensors = iter(self.tensors)
        for layer in self.template.layers:
            fresh = copy.copy(layer)
            for a in _LINEAR_STATES:  # fresh dicts: the step assigns into them
                if isinstance(getattr(layer, a, None), dict):
                    setattr(fresh, a, dict(getattr(layer, a)))
            for a, i in cache_slots(layer):
                if i is None:
                    setattr(fresh, a, next(tensors))
                else:
                    getattr(fresh, a)[i] = next(tensors)
            cache.layers.append(fresh)
        return cache


def _register_cache_input() -> None:
    from torch.utils import _pytree as pytree

    if CacheInput in pytree.SUPPORTED_NODES:
        return
    pytree.register_pytree_node(
        CacheInput,
        lambda c: (c.tensors, c.template),
        lambda tensors, template: CacheInput(template, tensors),
        flatten_with_keys_fn=lambda c: (
            [(pytree.SequenceKey(i), t) for i, t in enumerate(c.tensors)],
            c.template,
        ),
    )


def _unfilled_linear_layer(v):
    """The first layer of a cache object whose linear-attention states are not made yet (a
    fresh `DynamicCache(config=...)` of a hybrid model); None when there is none."""
    layers = getattr(v, "layers", None)
    for layer in layers if isinstance(layers, list) else []:
        conv = getattr(layer, "conv_states", None)
        if isinstance(conv, dict) and any(t is None for t in conv.values()):
            return layer
    return None


def _as_cache_input(v):
    layer = _unfilled_linear_layer(v)
    if layer is not None:
        # The step would create the states inside the exported program and update the
        # cache's token count, a constant to torch.export: refused with what works instead.
        from .builder import frontend_error

        raise frontend_error(
            "capture",
            f"the {type(v).__name__} input has {type(layer).__name__} layers whose "
            "linear-attention (Mamba) states are not made yet; Solar captures a hybrid cache "
            "only once a prefill has filled it",
            "for a prefill give no cache (use_cache=False, or use_cache=True without one: "
            "the model makes its own); for a decode step give the cache a prefill returned "
            "(model(input_ids, use_cache=True).cache), as solar.analyze_llm and --phase "
            "decode do (docs/llm.md)",
        )
    if is_cache(v):
        tensors = [
            getattr(layer, a) if i is None else getattr(layer, a)[i]
            for layer in v.layers
            for a, i in cache_slots(layer)
        ]
        return CacheInput(v, tensors)
    return v


def signature(example) -> tuple[Signature, list]:
    """(signature, tensors) of example inputs: a list/tuple of positional arguments, a dict of
    keyword arguments, or a `(args, kwargs)` pair written as `{"args": [...], "kwargs":
    {...}}`."""
    import torch
    from torch.utils import _pytree as pytree

    if isinstance(example, dict) and set(example) == {"args", "kwargs"}:
        args, kwargs = tuple(example["args"]), dict(example["kwargs"])
    elif isinstance(example, dict):
        args, kwargs = (), dict(example)
    else:
        args, kwargs = tuple(example), {}
    _register_cache_input()
    args = tuple(_as_cache_input(a) for a in args)
    kwargs = {k: _as_cache_input(v) for k, v in kwargs.items()}
    paths, spec = pytree.tree_flatten_with_path((args, kwargs))
    leaves, tensor_leaves, names, tensors = [], [], [], []
    for i, (path, leaf) in enumerate(paths):
        if isinstance(leaf, torch.Tensor):
            tensor_leaves.append(i)
            names.append(_path_name(path[1:]))  # drop the (args, kwargs) level
            tensors.append(leaf)
            leaves.append(None)
        else:
            leaves.append(leaf)
    sig = Signature(spec, tuple(leaves), tuple(tensor_leaves), tuple(names), len(args))
    return sig, tensors


def _path_name(path) -> str:
    parts = []
    for k in path:
        for attr in ("key", "idx", "name"):
            if hasattr(k, attr):
                parts.append(str(getattr(k, attr)))
                break
        else:
            parts.append(str(k))
    return ".".join(parts)


def flatten_outputs(value, caches: bool = True) -> list[tuple[str, object]]:
    """(path, tensor) for every distinct tensor in an output structure, in a fixed order:
    tuples and lists by index, dicts and `ModelOutput`s by key, dataclasses by field, other
    objects (a key-value cache) by their attributes. `caches` False leaves out key-value
    caches (an inference step's bound then counts reading the cache, not rewriting it)."""
    import torch

    out: list[tuple[str, object]] = []
    seen: set[int] = set()

    def walk(v, path: str, depth: int) -> None:
        if isinstance(v, torch.Tensor):
            if id(v) not in seen:
                seen.add(id(v))
                out.append((path or "output", v))
            return
        if depth > _MAX_DEPTH or v is None or isinstance(v, (bool, int, float, complex, str)):
            return
        if id(v) in seen or (not caches and is_cache(v)):
            return
        seen.add(id(v))
        join = (lambda k: f"{path}.{k}") if path else str
        if isinstance(v, (tuple, list)):
            for i, x in enumerate(v):
                walk(x, join(i), depth + 1)
        elif isinstance(v, dict):  # ModelOutput is an OrderedDict
            for k, x in v.items():
                walk(x, join(k), depth + 1)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):
                walk(getattr(v, f.name, None), join(f.name), depth + 1)
        elif hasattr(v, "__dict__") and not isinstance(v, (type, torch.nn.Module)):
            for k, x in vars(v).items():
                if not k.startswith("_"):
                    walk(x, join(k), depth + 1)

    walk(value, "", 0)
    return out


def input_names(forward, sig: Signature) -> list[str]:
    """Identifiers for the flat inputs: the forward's parameter name for a positional
    argument, the keyword for a keyword argument, with the path inside a nested structure
    (`pair_0`); unique."""
    try:
        params = [
            p.name
            for p in list(inspect.signature(forward).parameters.values())[1:]
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    out: list[str] = []
    for path in sig.names:
        head, _, rest = path.partition(".")
        if head.isdigit() and int(head) < sig.positional:
            head = params[int(head)] if int(head) < len(params) else f"arg{head}"
        name = re.sub(r"\W", "_", head + ("_" + rest if rest else ""))
        if not name.isidentifier():
            name = "x_" + name
        while name in out or name == "self":
            name += "_"
        out.append(name)
    return out


def flat_module(model, sig: Signature, caches: bool = True, loss: bool = False):
    """`model` seen through flat inputs and outputs: a shallow copy sharing its parameters,
    buffers, submodules and hooks (so qualified names and state are the original's), whose
    forward takes the input tensors positionally and returns a tuple of output tensors. The
    output names of the last call are in `.solar_output_names`. With `loss`, forward returns
    one scalar, the sum of every floating output (a training step's loss: its backward
    propagates a gradient of ones into each output)."""
    cls = type(model)
    if getattr(cls, "_solar_flat", False):
        cls = cls.__mro__[1]  # a flat view of a flat view: of the module it views

    def forward(self, *tensors):
        args, kwargs = sig.call_args(tensors)
        named = flatten_outputs(cls.forward(self, *args, **kwargs), caches)
        object.__setattr__(self, "solar_output_names", [n for n, _ in named])
        if loss:  # a training step: the backward of the sum of every floating output
            floats = [t for _, t in named if t.is_floating_point()]
            object.__setattr__(self, "solar_output_names", ["loss"])
            return (sum(t.sum() for t in floats),)
        return tuple(t for _, t in named)

    # torch.export names the inputs after the forward's parameters: those of the original
    # forward (`x`, `input_ids`), not `tensors_0`.
    forward.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [
            inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for n in input_names(cls.forward, sig)
        ]
    )

    flat_cls = type(cls.__name__, (cls,), {"forward": forward, "_solar_flat": True})
    flat_cls.__module__ = cls.__module__
    flat_cls.__qualname__ = cls.__qualname__
    view = copy.copy(model)  # shares _parameters, _buffers, _modules: the same state
    view.__class__ = flat_cls
    return view
