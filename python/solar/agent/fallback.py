"""The LLM fallback of the deterministic front ends (`--llm-fallback`, docs/agent.md): an
operator the PyTorch lowering (or a primitive the JAX lowering) has no rule for is
translated by the agent into one IR kernel,
validated per kernel against that operator on random inputs with its real attributes, cached,
and called like a standard-library kernel; the rest of the program stays deterministic, and
the whole program is validated as usual afterwards.

The kernel is specialised to the operator's attributes (they are in its cache key) and
written for any sizes (its dims bind from its arguments), so the scaled validation's
re-lowering at other sizes reuses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import UserError
from . import prompt
from .cache import Cache
from .client import Endpoint
from .languages import Golden, Signature
from .translate import Budget, Translation, _Transcript, canonical, converse

KERNEL = "op"  # the name the reply's kernel must have
_ADAPTER = """\
The source is one {kind} applied to tensors of the shapes given. Write its exact semantics
(its schema is shown; defaults apply where an argument is not given) as ONE kernel, and a
model() that only calls it. The kernel must work for any sizes: take sizes from its
arguments (X.shape[i], or dims bound by its parameter annotations), never from DIMS. The
attributes are fixed: write them into the kernel as literals."""


@dataclass
class _OperatorGoldens:
    """The golden-run interface translate._evaluate uses, for one operator at one size."""

    golden: Golden
    text: str = ""
    scalable: bool = False

    def at(self, overrides: dict) -> Golden:
        return self.golden


@dataclass
class AgentOperator:
    """One operator the agent lowered, for the report."""

    op: str
    kernel: str
    shapes: list
    cached: bool
    iterations: int


@dataclass
class Fallback:
    """What --llm-fallback needs: the endpoint, the budgets, the cache. `operators` lists,
    in order, each operator the agent lowered."""

    endpoint: Endpoint
    budget: Budget = field(default_factory=Budget)
    cache: object = True
    transcript: str | None = None
    progress: object = None
    operators: list = field(default_factory=list)
    kernels: dict = field(default_factory=dict)  # cache key -> kernel text ({name} to fill)

    def lower(self, lw, node, args, kwargs):
        """The Value of FX `node` (a PyTorch operator without a rule) from an agent kernel."""
        import torch

        from ..frontend.builder import Value
        from ..frontend.lower import TORCH_DTYPES

        op = str(node.target)
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            lw.fail(
                f"operator {op} has no lowering, and the LLM fallback translates only operators "
                "with one tensor result"
            )
        tensors, attrs = [], []
        for i, a in enumerate(args):
            if isinstance(a, Value):
                tensors.append(a)
            elif isinstance(a, (list, tuple)) and any(isinstance(x, Value) for x in a):
                lw.fail(f"operator {op} takes a list of tensors: the LLM fallback does not")
            else:
                attrs.append(f"argument {i} = {a!r}")
        for k, a in kwargs.items():
            if isinstance(a, Value):
                lw.fail(f"operator {op} takes tensor keyword {k}: the LLM fallback does not")
            attrs.append(f"{k} = {a!r}")
        out_dtype = TORCH_DTYPES.get(str(val.dtype), "")
        if not out_dtype:
            lw.fail(
                f"operator {op} has no lowering and returns {val.dtype}, which the IR has no "
                "dtype for (complex numbers are not IR values)"
            )

        def reference(arrays):
            import torch.fx

            it = iter(
                torch.from_numpy(_widened(a)).to(_torch_dtype(t))
                for a, t in zip(arrays, tensors, strict=True)
            )

            def value(a):
                return next(it) if isinstance(a, torch.fx.Node) else a

            with torch.no_grad():
                out = node.target(
                    *[value(a) for a in node.args], **{k: value(a) for k, a in node.kwargs.items()}
                )
            return _torch_array(out)

        schema = str(getattr(node.target, "_schema", op))
        shape = tuple(int(s) for s in val.shape)
        return self._lower(
            lw, "PyTorch ATen operator", op, schema, tensors, attrs, (shape, out_dtype), reference
        )

    def rule(self, lw, eqn, *args):
        """The Value of jaxpr equation `eqn` (a JAX primitive without a rule) from an agent
        kernel: a lowering rule with frontend/jax/rules.py's signature."""
        from ..frontend.builder import NUMPY_DTYPES, Value

        op = eqn.primitive.name
        if eqn.primitive.multiple_results or len(eqn.outvars) != 1:
            lw.fail(
                f"primitive {op} has no lowering, and the LLM fallback translates only "
                "primitives with one result"
            )
        tensors, attrs = [], []
        for i, a in enumerate(args):
            if isinstance(a, Value):
                tensors.append(a)
            else:
                attrs.append(f"operand {i} = {a!r}")
        attrs += [f"{k} = {v!r}" for k, v in sorted(eqn.params.items())]
        aval = eqn.outvars[0].aval
        out_dtype = NUMPY_DTYPES.get(str(aval.dtype), "")
        if not out_dtype:
            lw.fail(f"primitive {op} has no lowering and returns {aval.dtype}, which the IR lacks")

        def reference(arrays):
            import jax.numpy as jnp

            it = iter(arrays)
            vals = [jnp.asarray(next(it)) if isinstance(a, Value) else a for a in args]
            return np.asarray(eqn.primitive.bind(*vals, **eqn.params))

        shape = tuple(int(s) for s in aval.shape)
        return self._lower(
            lw,
            "JAX primitive (jax.lax)",
            op,
            f"jax.lax primitive {op}",
            tensors,
            attrs,
            (shape, out_dtype),
            reference,
        )

    def _lower(self, lw, kind, op, schema, tensors, attrs, result, reference):
        out_shape, out_dtype = result
        key = Cache.key(
            "\n".join(
                [kind, op, schema, *attrs]
                + [f"{t.dtype}/{len(t.shape)}" for t in tensors]
                + [f"{out_dtype}/{len(out_shape)}"]
            ),
            "operator",
            self.endpoint.model,
            prompt.ir_spec_version(),
            "kernel",
        )
        text, cached, iterations = self._kernel(key, kind, op, schema, tensors, attrs, reference)
        stem = "agent_" + re.sub(r"\W+", "_", op.removeprefix("aten.")).strip("_")
        name = lw.add_kernel(text, stem)
        self.operators.append(
            AgentOperator(op, name, [list(t.shape) for t in tensors], cached, iterations)
        )
        framework = "PyTorch" if kind.startswith("PyTorch") else "JAX"
        lw.notes.append(
            f"{op} has no lowering rule: its kernel {name} was written by the LLM agent "
            f"({self.endpoint.model}{', cached' if cached else ''}) and validated against "
            f"{framework} on random inputs (docs/agent.md, fallback)"
        )
        return lw.call_kernel(name, [t.var for t in tensors], out_shape, out_dtype)

    def _cached_kernel(self, text: str, signature: Signature, op: str) -> str:
        """A cached kernel as the checker and the printer give it back inside its harness
        (like a fresh reply), or "" (a miss, with a note) when the checker refuses it."""
        try:
            program = canonical(
                _harness(text.replace("def {name}(", f"def {KERNEL}(", 1), signature), op
            )
        except UserError as e:
            (self.progress or (lambda msg: None))(
                f"note: the cached kernel for {op} is refused by the checker "
                f"({e.diagnostics[0] if e.diagnostics else e}); translating again"
            )
            return ""
        kernel, problems = _one_kernel(program)
        return "" if problems else kernel.replace(f"def {KERNEL}(", "def {name}(", 1)

    def _kernel(self, key, kind, op, schema, tensors, attrs, reference):
        if key in self.kernels:
            return self.kernels[key], True, 0
        store = Cache.at(self.cache)
        hit = store.get(key) if store is not None else None
        golden = _operator_golden(tensors, reference)
        signature = golden.signature()
        if hit is not None:
            text = self._cached_kernel(hit["program"], signature, op)
            if text:
                self.kernels[key] = text
                iterations = hit.get("iterations", 0)
                return text, True, iterations if isinstance(iterations, int) else 0
        messages = [
            {
                "role": "system",
                "content": prompt.ir_spec() + "\n\n# Source\n\n" + _ADAPTER.format(kind=kind),
            },
            {"role": "user", "content": _task(kind, op, schema, attrs, signature)},
        ]
        result = Translation("", "", "operator", self.endpoint.model)
        log = _Transcript(self.transcript)

        def harness(program: str):
            kernel, problems = _one_kernel(program)
            return (_harness(kernel, signature), []) if not problems else ("", problems)

        try:
            program, _, _ = converse(
                self.endpoint,
                messages,
                _OperatorGoldens(golden),
                signature,
                self.budget,
                result,
                log,
                self.progress or (lambda msg: None),
                op,
                rewrite=harness,
            )
        finally:
            log.close()
        kernel, _ = _one_kernel(program)
        text = kernel.replace(f"def {KERNEL}(", "def {name}(", 1)
        self.kernels[key] = text
        if store is not None:
            store.put(key, {"program": text, "iterations": result.iterations, "op": op})
        return text, False, result.iterations


def _task(kind: str, op: str, schema: str, attrs: list, signature: Signature) -> str:
    lines = [
        f"Write the {kind} {op} as one IR kernel named `{KERNEL}`.",
        f"Schema: {schema}",
    ]
    lines.append("Tensor arguments, in order (the kernel's parameters and model()'s):")
    for name, shape, dtype in signature.params:
        lines.append(f"  - {name}: shape {list(shape)}, dtype {dtype}")
    lines.append("Attributes: " + ("; ".join(attrs) if attrs else "none"))
    (shape, dtype) = signature.outputs[0]
    lines.append(f"Result: one tensor of shape {list(shape)}, dtype {dtype}.")
    lines.append(
        f"model() takes the tensor arguments in that order and returns {KERNEL}(...) of them; "
        "DIMS gives these shapes. Reply with the whole program in one ```python block."
    )
    return "\n".join(lines)


def _harness(kernel: str, signature: Signature) -> str:
    """The program that validates `kernel` alone: model() passes its parameters, of the
    operator's argument shapes, straight to it (the reply's own model() is not used)."""
    dims, params = {}, []
    for name, shape, dtype in signature.params:
        names = [f"{name}_{k}" for k in range(len(shape))]
        dims.update(zip(names, shape, strict=True))
        params.append(f'{name}: Tensor("{",".join(names)}", dtype="{dtype}", role="input")')
    call = ", ".join(name for name, _, _ in signature.params)
    return (
        "from solar.ir import kernel, Tensor, Dim\n\n"
        f"{kernel}\nDIMS = {dims!r}\n\n\ndef model({', '.join(params)}):\n"
        f"    return {KERNEL}({call})\n"
    )


def _one_kernel(program: str) -> tuple[str, list]:
    """The text of the single kernel `op` of a program, or problems."""
    lines = program.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("@kernel")]
    if len(starts) != 1:
        return "", [f"write exactly one @kernel (named {KERNEL}); the program has {len(starts)}"]
    i = starts[0]
    if i + 1 >= len(lines) or not re.match(rf"def\s+{KERNEL}\s*\(", lines[i + 1]):
        return "", [f"the kernel must be named {KERNEL}: `@kernel` then `def {KERNEL}(...)`"]
    end = i + 2
    while end < len(lines) and (not lines[end].strip() or lines[end][:1] in (" ", "\t", "#")):
        end += 1
    body = "\n".join(lines[i:end]).rstrip() + "\n"
    used = set(re.findall(r"\b[A-Z][A-Z0-9_]{2,}\b", body)) & set(
        re.findall(r"(?m)^([A-Z][A-Z0-9_]*)\s*=", program)
    )
    if used:
        return "", [
            f"the kernel reads module-level constant(s) {', '.join(sorted(used))}: write them "
            "into the kernel as literals (it is used outside this program)"
        ]
    return body, []


def _operator_golden(tensors, reference) -> Golden:
    """The operator run by its framework (`reference(arrays)`) on seeded random arrays of
    its arguments' shapes and dtypes (floats ~ N(0, 1), integers in [0, 8), bools 1/2)."""
    from ..execution import NUMPY_TYPES

    rng = np.random.default_rng(0)
    arrays = []
    for t in tensors:
        dt = NUMPY_TYPES[t.dtype]
        if t.dtype == "bool":
            arrays.append(rng.random(t.shape) < 0.5)
        elif t.dtype.startswith(("int", "uint")):
            arrays.append(rng.integers(0, 8, t.shape).astype(dt))
        else:
            arrays.append(rng.standard_normal(t.shape).astype(np.float32).astype(dt))
    return Golden([f"x{i}" for i in range(len(arrays))], arrays, [reference(arrays)])


def _widened(a: np.ndarray) -> np.ndarray:
    """An array torch.from_numpy takes (bf16 and fp8 travel as float32)."""
    return (
        a.astype(np.float32)
        if a.dtype.kind == "V" or "float8" in str(a.dtype) or str(a.dtype) == "bfloat16"
        else np.ascontiguousarray(a)
    )


def _torch_dtype(t):
    import torch

    from ..frontend.lower import TORCH_DTYPES

    # The first torch dtype of each IR dtype (uint8 is torch.uint8, not the packed fp4 pairs
    # it also holds).
    first: dict = {}
    for k, v in TORCH_DTYPES.items():
        first.setdefault(v, getattr(torch, k.removeprefix("torch.")))
    return first[t.dtype]


def _torch_array(t) -> np.ndarray:
    if str(t.dtype) == "torch.bfloat16":
        import ml_dtypes

        return t.float().numpy().astype(ml_dtypes.bfloat16)
    return t.detach().numpy()
