"""The language-neutral half of a lowering: it builds an Affine Loop IR program.

A front end (PyTorch: lower.py and rules.py; JAX: jax/lower.py and jax/rules.py) walks its
captured graph and, for each operator, calls this builder: values with shapes and IR dtypes,
kernels from the standard library (`stdlib/*.py`, IR files parsed by the core like any
program) or generated for the operator, builtins, `with unit(...)` blocks around the
statements of one source operator, model() parameters, and the program text with DIMS. What
is language-specific (where a statement comes from, the output shape of the current
operator) comes from three hooks a front end overrides: `_find_where`, `out_meta` and
`library_frame`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .. import _core
from ..errors import Diagnostic, UserError

STDLIB = Path(__file__).resolve().parent / "stdlib"

# Builtins that only re-view memory (docs/ir.md §5; the `view` column of the C++ registry,
# graph/ops.def): statements of these are free in every mode, so a source operator lowered
# to one kernel plus views needs no unit block.
VIEW_BUILTINS = frozenset(b["name"] for b in _core.builtins() if b["view"])
_CALL = re.compile(r"^\s*[\w, ]+ = (\w+)\(")


def frontend_error(kind: str, message: str, hint: str = "", file: str = "", line: int = 0):
    d = Diagnostic(kind, file, line, 1 if line else 0, message, hint)
    return UserError(str(d), [d])


@cache
def stdlib_kernels() -> dict[str, str]:
    """Kernel name -> its source text (decorator included), from every stdlib file."""
    kernels = {}
    for path in sorted(STDLIB.glob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.decorator_list:
                start = min(d.lineno for d in node.decorator_list) - 1
                kernels[node.name] = "\n".join(lines[start : node.end_lineno])
    return kernels


# The IR dtype of each NumPy dtype name that has one (JAX arrays, golden runs' arrays).
NUMPY_DTYPES = {
    "float32": "fp32",
    "float64": "fp64",
    "bfloat16": "bf16",
    "float16": "fp16",
    "float8_e4m3fn": "fp8_e4m3",
    "float8_e5m2": "fp8_e5m2",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
}


@dataclass
class Value:
    """A tensor of the emitted model(): its variable, shape and IR dtype."""

    var: str
    shape: tuple
    dtype: str
    # An integer tensor known to hold at least this many distinct values (the indices of a
    # top-k: k distinct per row), kept through views; a gather by it fetches at least that
    # many rows (the `gather` builtin's `distinct=`). 0: unknown.
    distinct: int = 0

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


@dataclass
class LoweredProgram:
    """The emitted IR program and how to feed it."""

    text: str
    source: str
    # One entry per model() parameter, in order: (name, kind, target) where kind is
    # "input" (target: index into the program's tensor arguments: PyTorch forward's, or the
    # flattened leaves of a JAX function's arguments), "random" (target: the number of the
    # random draw in forward(), in call order) or "weight" (target: the state_dict key of a
    # parameter or buffer, or a constant's name).
    params: list = field(default_factory=list)
    ops: dict = field(default_factory=dict)  # source operator -> count
    notes: list = field(default_factory=list)  # e.g. dropout replaced by its expectation
    sequence: list = field(default_factory=list)  # lowered source operators in order
    # The buffers the program updates (torch.export's buffer mutations: batch norm's running
    # statistics), by state_dict key: model() returns their new values after the user's
    # outputs, in this order.
    buffer_outputs: list = field(default_factory=list)


def _names(n: int, prefix: str = "a") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


# A statement whose results are views of its first argument (docs/ir.md: no data moves).
_VIEW_STATEMENT = re.compile(r"^([\w, ]+?) = (?:reshape|broadcast|slice|select|split)\((\w+)[,)]")


class Builder:
    """Emits the statements of model() and collects its kernels, dims and parameters."""

    def __init__(self, source: str):
        self.source = source
        self.lines: list[str] = []
        self.kernels: dict[str, str] = {}
        self.counter = 0
        self.notes: list[str] = []
        self.node = None  # the source operator being lowered (for messages)
        self.dims: dict[int, str] = {}  # size -> dim name
        self.size_names_: dict[int, str] = {}  # names the source gives sizes
        self.signature: list[str] = []
        self.params: list = []
        self._where = (None, ("", 0, ""))
        self._view_of: dict[str, str] = {}  # a view's variable -> the variable it views
        # Source node name -> masks.Band: a masked attention's products and softmax, which
        # the rules lower inside the band (the PyTorch front end finds them; masks.py).
        self.bands: dict = {}

    # ---------------------------------------------------------------- language hooks
    def _find_where(self) -> tuple[str, int, str]:
        """(file, line, code) of the user's source line of the current operator."""
        return self.source, 0, ""

    def library_frame(self) -> str:
        """`path:line: code` of the library line that called the operator, or ""."""
        return ""

    def out_meta(self):
        """The current operator's result: something with .shape and .dtype, or a sequence of
        them for an operator with several results."""
        raise NotImplementedError

    def ir_dtype(self, dtype, where: str = "") -> str:
        raise NotImplementedError

    # ---------------------------------------------------------------- messages
    def where(self) -> tuple[str, int, str]:
        """(file, line, code) of the user's source line that produced the current node
        (cached per node: a recurrent operator emits thousands of statements)."""
        if self._where[0] is self.node and self.node is not None:
            return self._where[1]
        self._where = (self.node, self._find_where())
        return self._where[1]

    def fail(self, message: str, hint: str = ""):
        file, line, code = self.where()
        extra = f" (from `{code}`)" if code else ""
        library = self.library_frame()
        if library:
            extra += f" (called in {library})"
        raise frontend_error("lower", message + extra, hint, file or self.source, line)

    # ---------------------------------------------------------------- the current result
    def out_shape(self, i: int | None = None):
        val = self.out_meta()
        if i is not None:
            val = val[i]
        return tuple(int(s) for s in val.shape)

    def out_dtype(self, i: int | None = None) -> str:
        val = self.out_meta()
        if i is not None:
            val = val[i]
        return self.ir_dtype(val.dtype, " (a result of the operator)")

    # ---------------------------------------------------------------- parameters
    def dim_name(self, size: int) -> str:
        return self.dims.setdefault(size, self.size_names_.get(size, f"d{size}"))

    def parameter(self, name: str, shape, dtype: str, role: str, kind: str, target) -> Value:
        """A model() tensor parameter (role "input", "weight" or "generated"; docs/ir.md §3)
        and how validation feeds it (LoweredProgram.params)."""
        shape = tuple(int(s) for s in shape)
        spec = ",".join(self.dim_name(s) for s in shape)
        dt = "" if dtype == "fp32" else f', dtype="{dtype}"'
        self.signature.append(f'{name}: Tensor("{spec}", role="{role}"{dt})')
        self.params.append((name, kind, target))
        return Value(name, shape, dtype)

    # ---------------------------------------------------------------- statements
    def viewed(self, var: str) -> str:
        """The variable whose memory `var` views, through any chain of views (`var` itself
        when it is no view)."""
        while var in self._view_of:
            var = self._view_of[var]
        return var

    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, text: str) -> None:
        if m := _VIEW_STATEMENT.match(text):
            for var in m.group(1).split(","):
                self._view_of[var.strip()] = m.group(2)
        file, line, code = self.where()
        comment = f"  # {Path(file or self.source).name}:{line}: {code}" if line else ""
        self.lines.append(f"    {text}{comment}")

    def close_unit(self, start: int, label: str, mode: str = "") -> None:
        """Wraps the statements emitted since `start` by one source operator in `with
        unit(...)` (docs/ir.md §4.1) when two or more of them move data, or when its
        contractions have a math mode: the unfused mode then runs them as one kernel, as the
        source framework does."""
        lines = self.lines[start:]
        if not lines:
            return
        work = 0
        for line in lines:
            m = _CALL.match(line)
            if m and m.group(1) not in VIEW_BUILTINS:
                work += 1
        if work < 2 and not mode:
            return
        header = f'    with unit("{label}"' + (f', fp32_math="{mode}"' if mode else "") + "):"
        self.lines[start:] = [header, *("    " + line for line in lines)]

    def use_kernel(self, name: str, dtype: str = "fp32") -> str:
        """Adds a stdlib kernel (instantiated for `dtype`) and returns its name."""
        kernels = stdlib_kernels()
        if name not in kernels:
            raise AssertionError(f"stdlib has no kernel {name}")
        inst = name if dtype == "fp32" else f"{name}_{dtype}"
        if inst not in self.kernels:
            text = kernels[name]
            if dtype != "fp32":
                text = text.replace(f"def {name}(", f"def {inst}(", 1)
                text = text.replace('dtype="fp32"', f'dtype="{dtype}"')
            self.kernels[inst] = text
        return inst

    def add_kernel(self, text: str, stem: str) -> str:
        """Adds a kernel the front end generated (`def {name}(` in `text`, {name} to be
        filled) and returns its name: the same text twice is one kernel."""
        for name, existing in self.kernels.items():
            if name.startswith(stem) and existing == text.replace("{name}", name):
                return name
        name = f"{stem}_{sum(1 for k in self.kernels if k.startswith(stem))}"
        self.kernels[name] = text.replace("{name}", name)
        return name

    def call(self, kernel: str, args: list, shape, dtype: str, kernel_dtype: str | None = None):
        name = self.use_kernel(kernel, kernel_dtype or dtype)
        return self.call_kernel(name, args, shape, dtype)

    def call_kernel(self, name: str, args: list, shape, dtype: str) -> Value:
        var = self.fresh()
        self.emit(f"{var} = {name}({', '.join(str(a) for a in args)})")
        return Value(var, tuple(shape), dtype)

    def reshape(self, v: Value, shape) -> Value:
        shape = tuple(int(s) for s in shape)
        if shape == v.shape:
            return v
        names = _names(len(shape))
        sizes = ", ".join(f"{n}={s}" for n, s in zip(names, shape, strict=True))
        var = self.fresh()
        self.emit(f'{var} = reshape({v.var}, "{",".join(names)}"{", " + sizes if sizes else ""})')
        return Value(var, shape, v.dtype, v.distinct)

    def flat(self, v: Value) -> Value:
        return self.reshape(v, (v.numel,))

    def broadcast_to(self, v: Value, shape) -> Value:
        """Expands `v` to `shape` (NumPy rules: align trailing dims; size 1 or missing dims
        expand). A view: a kernel reading it fetches `v` once."""
        shape = tuple(int(s) for s in shape)
        if v.shape == shape:
            return v
        names = _names(len(shape), "b")
        mine = names[len(shape) - len(v.shape) :]
        src = v.var
        if mine:
            src = self.fresh()
            sizes = ", ".join(f"{n}={s}" for n, s in zip(mine, v.shape, strict=True))
            self.emit(f'{src} = reshape({v.var}, "{",".join(mine)}", {sizes})')
        var = self.fresh()
        sizes = ", ".join(f"{n}={s}" for n, s in zip(names, shape, strict=True))
        self.emit(f'{var} = broadcast({src}, "{",".join(names)}", {sizes})')
        return Value(var, shape, v.dtype)

    def permute(self, v: Value, order, view: bool = False) -> Value:
        """v's dims reordered: a copy (`permute`), or with view=True a view (`permute_view`,
        for a permutation the program returns as it is)."""
        order = [int(o) % max(len(v.shape), 1) for o in order]
        if order == list(range(len(v.shape))):
            return v
        src = self.reshape_named(v, "p")
        var = self.fresh()
        op = "permute_view" if view else "permute"
        self.emit(f'{var} = {op}({src.var}, "{",".join(f"p{o}" for o in order)}")')
        return Value(var, tuple(v.shape[o] for o in order), v.dtype)

    def reshape_named(self, v: Value, prefix: str) -> Value:
        """The same tensor with dims named prefix0, prefix1, ... (a view)."""
        names = _names(len(v.shape), prefix)
        var = self.fresh()
        sizes = ", ".join(f"{n}={s}" for n, s in zip(names, v.shape, strict=True))
        self.emit(f'{var} = reshape({v.var}, "{",".join(names)}"{", " + sizes if sizes else ""})')
        return Value(var, v.shape, v.dtype)

    def cast(self, v: Value, dtype: str) -> Value:
        if v.dtype == dtype:
            return v
        var = self.fresh()
        self.emit(f'{var} = cast({v.var}, "{dtype}")')
        return Value(var, v.shape, dtype)

    def bitcast(self, v: Value, dtype: str, shape) -> Value:
        """v's bytes read as `dtype` (a view; `shape`: v's with the last size scaled by the
        ratio of the element sizes)."""
        if v.dtype == dtype:
            return v
        var = self.fresh()
        self.emit(f'{var} = bitcast({v.var}, "{dtype}")')
        return Value(var, tuple(int(s) for s in shape), dtype)

    # ---------------------------------------------------------------- the program
    def program_text(self, header: list[str], outs: list[str]) -> str:
        """The whole IR file: `header` comment lines, the kernels, DIMS and model()."""
        body = self.lines or ["    pass"]
        head = [*header, "from solar.ir import kernel, Tensor, Dim", ""]
        kernels = [self.kernels[k] + "\n" for k in self.kernels]
        # Dims in the order the program first names them, which its sizes do not change (a
        # size template of a definition's workloads relies on it: docs/definitions.md).
        dims_line = "DIMS = {" + ", ".join(f'"{n}": {s}' for s, n in self.dims.items()) + "}"
        signature = ", ".join(self.signature)
        model = [f"def model({signature}):", *body, "    return " + ", ".join(outs)]
        return (
            "\n".join(head)
            + "\n"
            + "\n\n".join(kernels)
            + "\n"
            + dims_line
            + "\n\n\n"
            + "\n".join(model)
            + "\n"
        )
