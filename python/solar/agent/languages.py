"""Source languages of the agent: how each is recognised, its prompt adapter
(`adapters/<name>.md`), and — where Solar can run it here — how it produces golden outputs.

A **golden run** executes the reference computation on seeded inputs and returns the arrays
model() must take (the program's inputs, then its parameters) and the outputs it must
return. A language whose programs cannot run here (CUDA, Triton; TensorFlow when it is not
installed) needs a reference: a PyTorch, JAX or NumPy problem file, or an `.npz` of inputs
and outputs. Adding a language is an adapter file, an entry in LANGUAGES and, if its
programs can run here, a golden function (docs/agent.md, "Adapters").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import argument_error
from ..frontend.builder import NUMPY_DTYPES

ADAPTERS = Path(__file__).resolve().parent / "adapters"


@dataclass
class Signature:
    """What model() takes and returns, at one size: (name, shape, dtype) per parameter and
    (shape, dtype) per output."""

    params: list = field(default_factory=list)
    outputs: list = field(default_factory=list)


@dataclass
class Golden:
    """One golden run: the arrays model() takes (in order) and the outputs it must return."""

    names: list
    inputs: list
    outputs: list
    overrides: dict = field(default_factory=dict)  # size constants replaced ({}: own sizes)

    def signature(self) -> Signature:
        return Signature(
            [
                (n, tuple(a.shape), _dtype_name(a))
                for n, a in zip(self.names, self.inputs, strict=True)
            ],
            [(tuple(a.shape), _dtype_name(a)) for a in self.outputs],
        )


_IR_DTYPES = NUMPY_DTYPES  # NumPy dtype name -> IR dtype


def _dtype_name(a) -> str:
    return _IR_DTYPES.get(str(a.dtype), str(a.dtype))


def _outputs(value) -> list:
    """A program's return value as a list of arrays (one array, or a tuple/list of them)."""
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    return [np.asarray(_numpy(v)) for v in items]


def _numpy(v):
    if hasattr(v, "detach"):  # a torch tensor
        v = v.detach()
        if str(v.dtype) == "torch.bfloat16":
            import ml_dtypes

            return v.float().numpy().astype(ml_dtypes.bfloat16)
        return v.numpy()
    return np.asarray(v)


# ---- golden runs, one per runnable language -------------------------------------------


def _golden_numpy(path: str, overrides: dict, seed: int) -> Golden:
    from ..frontend.builder import frontend_error
    from ..frontend.problem import call_user, import_program

    module = import_program(path, overrides)
    for name in ("get_inputs", "forward"):
        if not callable(getattr(module, name, None)):
            raise frontend_error(
                "capture",
                f"the NumPy program defines no {name}",
                "a NumPy problem file defines get_inputs(rng) returning a list of arrays and "
                "forward(*inputs) (docs/agent.md)",
                path,
            )
    rng = np.random.default_rng(seed)
    inputs = list(call_user(lambda: module.get_inputs(rng), "get_inputs(rng)", path, "NumPy"))
    inputs = [np.asarray(a) for a in inputs]
    outputs = call_user(lambda: module.forward(*inputs), "forward(...)", path, "NumPy")
    names = _parameter_names(module.forward, len(inputs))
    return Golden(names, inputs, _outputs(outputs), dict(overrides))


def _parameter_names(fn, n: int) -> list:
    import inspect

    try:
        names = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        names = []
    names = names[:n]
    return names + [f"input{i}" for i in range(len(names), n)]


def _pytorch_run(path: str, overrides: dict, seed: int, fake: bool):
    """(names, argument tensors, output tensors) of a PyTorch problem file; on fake tensors
    (nothing allocated, any size) with `fake`."""
    import contextlib

    import torch

    from ..frontend.capture import build_problem, fake_tensors, load_problem

    problem = load_problem(path, overrides)
    with fake_tensors() if fake else contextlib.nullcontext():
        model, inputs = build_problem(problem, None, None if fake else seed)
        params = [(n.replace(".", "_"), p) for n, p in model.named_parameters()]
        # Floating-point buffers (batch norm's running statistics), not counters
        # (num_batches_tracked).
        params += [
            (n.replace(".", "_"), b)
            for n, b in model.named_buffers()
            if b is not None and b.is_floating_point()
        ]
        with torch.no_grad():
            out = model(*inputs)
    names = _parameter_names(model.forward, len(inputs)) + [n for n, _ in params]
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return names, list(inputs) + [p for _, p in params], outs


def _golden_pytorch(path: str, overrides: dict, seed: int) -> Golden:
    names, args, outs = _pytorch_run(path, overrides, seed, fake=False)
    return Golden(names, [_numpy(t) for t in args], _outputs(outs), dict(overrides))


def _torch_dtype(t) -> str:
    return _IR_DTYPES.get(str(t.dtype).removeprefix("torch."), str(t.dtype))


def _signature_pytorch(path: str, overrides: dict) -> Signature:
    names, args, outs = _pytorch_run(path, overrides, 0, fake=True)
    return Signature(
        [(n, tuple(t.shape), _torch_dtype(t)) for n, t in zip(names, args, strict=True)],
        [(tuple(t.shape), _torch_dtype(t)) for t in outs],
    )


def _signature_jax(path: str, overrides: dict) -> Signature:
    import jax

    from ..frontend.jax.capture import abstract_arguments, program_of
    from ..frontend.problem import import_program

    program = program_of(import_program(path, overrides), path)
    params, inputs = abstract_arguments(program, path)
    out = jax.eval_shape(program.fn, params, *inputs)
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    names = [f"input{i}" for i in range(len(inputs))]
    names += [re.sub(r"\W+", "_", jax.tree_util.keystr(p)).strip("_") for p, _ in leaves]
    args = list(inputs) + [v for _, v in leaves]
    return Signature(
        [(n, tuple(a.shape), _dtype_name(a)) for n, a in zip(names, args, strict=True)],
        [(tuple(o.shape), _dtype_name(o)) for o in jax.tree_util.tree_leaves(out)],
    )


def _golden_jax(path: str, overrides: dict, seed: int) -> Golden:
    import jax

    from ..frontend.jax.capture import program_of
    from ..frontend.problem import import_program

    program = program_of(import_program(path, overrides), path)
    # The JAX front end's keys (docs/jax.md, "Random keys"): parameters from key(seed),
    # inputs from key(seed + 1).
    params = program.make_params(jax.random.key(seed))
    inputs = program.make_inputs(jax.random.key(seed + 1))
    out = program.fn(params, *inputs)
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    names = [f"input{i}" for i in range(len(inputs))]
    names += [re.sub(r"\W+", "_", jax.tree_util.keystr(p)).strip("_") for p, _ in leaves]
    arrays = [np.asarray(a) for a in inputs] + [np.asarray(v) for _, v in leaves]
    outs = jax.tree_util.tree_leaves(out)
    return Golden(names, arrays, [np.asarray(o) for o in outs], dict(overrides))


def _golden_tensorflow(path: str, overrides: dict, seed: int) -> Golden:
    from ..frontend.problem import import_program

    try:
        import tensorflow  # noqa: F401
    except ImportError:
        raise argument_error(
            "TensorFlow is not installed here, so the program cannot give golden outputs",
            "pass --reference (a PyTorch, JAX or NumPy problem file, or an .npz of inputs and "
            "outputs), or install tensorflow",
        ) from None
    module = import_program(path, overrides)
    rng = np.random.default_rng(seed)
    inputs = [np.asarray(a) for a in module.get_inputs(rng)]
    out = module.forward(*inputs)
    outs = out if isinstance(out, (tuple, list)) else [out]
    return Golden(
        _parameter_names(module.forward, len(inputs)),
        inputs,
        [np.asarray(o.numpy() if hasattr(o, "numpy") else o) for o in outs],
        dict(overrides),
    )


def golden_npz(path: str) -> Golden:
    """Golden arrays from an .npz: inputs named in0, in1, ... (or any names, in file order,
    before the outputs) and outputs named out0, out1, ..."""
    import zipfile
    import zlib

    # Every array is read here, inside the try: a damaged member (a bad .npy magic, a zip
    # version numpy cannot open, patched data failing its CRC) fails on its first read.
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (
        OSError,
        ValueError,
        EOFError,
        KeyError,
        RuntimeError,  # zipfile: a zip version it cannot read ("18.8"), an encrypted member
        zipfile.BadZipFile,
        zlib.error,
    ) as e:
        raise argument_error(f"cannot read the reference {path}: it is damaged ({e})") from None
    keys = list(data)
    outs = [k for k in keys if re.fullmatch(r"out\d+", k)]
    ins = [k for k in keys if k not in outs]
    if not outs or not ins:
        raise argument_error(
            f"the reference {path} holds {', '.join(keys) or 'nothing'}",
            "an .npz reference holds the inputs (in0, in1, ...) and the outputs (out0, out1, ...)",
        )
    outs.sort(key=lambda k: int(k[3:]))
    return Golden(ins, [data[k] for k in ins], [data[k] for k in outs], {})


@dataclass(frozen=True)
class Language:
    name: str
    title: str
    fence: str  # the code fence's language for the prompt
    extensions: tuple
    golden: object = None  # (path, overrides, seed) -> Golden; None: needs a reference
    # (path, overrides) -> Signature without running (fake tensors); None: from a golden run
    signature: object = None

    def adapter(self) -> str:
        return (ADAPTERS / f"{self.name}.md").read_text()


LANGUAGES = {
    lang.name: lang
    for lang in (
        Language("pytorch", "PyTorch", "python", (".py",), _golden_pytorch, _signature_pytorch),
        Language("jax", "JAX", "python", (".py",), _golden_jax, _signature_jax),
        Language("numpy", "NumPy", "python", (".py",), _golden_numpy),
        Language("tensorflow", "TensorFlow", "python", (".py",), _golden_tensorflow),
        Language("cuda", "CUDA C++", "cuda", (".cu", ".cuh")),
        Language("triton", "Triton", "python", (".py",)),
    )
}


def language(name: str) -> Language:
    if name not in LANGUAGES:
        raise argument_error(
            f"unknown language {name!r}", f"one of: {', '.join(sorted(LANGUAGES))}"
        )
    return LANGUAGES[name]


# A line's leading blanks are [ \t\f]*, which cannot cross a line end: with "\s*" every
# line start of a run of blank lines rescanned the whole run (quadratic: 20,000 blank lines
# took 25 s). Each quantifier here consumes characters the one before it cannot.
IMPORT_LINE = re.compile(r"^[ \t\f]*(?:import|from)[ \t\f]+([A-Za-z_]\w*)", re.MULTILINE)


def _imports(text: str) -> set:
    """The top-level modules a Python source names in its import lines."""
    return set(IMPORT_LINE.findall(text))


def detect(path: str, text: str) -> str:
    """The language of a source file, from its extension and imports; "" if unknown."""
    suffix = Path(path).suffix.lower()
    if suffix in (".cu", ".cuh"):
        return "cuda"
    if suffix != ".py":
        return ""
    found = _imports(text)
    for name, modules in (
        ("triton", {"triton"}),
        ("tensorflow", {"tensorflow", "keras"}),
        ("pytorch", {"torch"}),
        ("jax", {"jax", "flax"}),
        ("numpy", {"numpy"}),
    ):
        if found & modules:
            return name
    return ""


def reference_golden(path: str, overrides: dict, seed: int) -> Golden:
    """Golden outputs of a reference: an .npz, or a problem file of a runnable language."""
    if path.endswith(".npz"):
        if overrides:
            raise argument_error(
                f"the reference {path} is an .npz at one size; it cannot be run at reduced sizes"
            )
        return golden_npz(path)
    text = Path(path).read_text()
    lang = detect(path, text)
    if not lang or LANGUAGES[lang].golden is None:
        raise argument_error(
            f"the reference {path} is not a PyTorch, JAX or NumPy problem file",
            "a reference is a program Solar can run here, or an .npz of inputs (in0, ...) and "
            "outputs (out0, ...)",
        )
    return LANGUAGES[lang].golden(path, overrides, seed)
