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


def is_cache(v) -> bool:
    """A key-value cache object (transformers' DynamicCache and its kin): a `layers` list whose
    entries hold `keys` and `values` tensors."""
    import torch

    layers = getattr(v, "layers", None)
    return (
        isinstance(layers, list)
        and bool(layers)
        and all(
            isinstance(getattr(layer, "keys", None), torch.Tensor)
            and isinstance(getattr(layer, "values", None), torch.Tensor)
            for layer in layers
        )
    )


class CacheInput:
    """A key-value cache given as an input, seen as its tensors (layer 0 keys, layer 0
    values, layer 1 keys, ...): each call rebuilds a fresh copy of the cache around the tensors
    it gets, so a forward pass that appends to its cache never changes the example's."""

    def __init__(self, template, tensors):
        self.template, self.tensors = template, list(tensors)

    def rebuild(self):
        cache = copy.copy(self.template)
        cache.layers = []
        for i, layer in enumerate(self.template.layers):
            fresh = copy.copy(layer)
            fresh.keys, fresh.values = self.tensors[2 * i], self.tensors[2 * i + 1]
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


def _as_cache_input(v):
    if is_cache(v):
        return CacheInput(v, [t for layer in v.layers for t in (layer.keys, layer.values)])
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
