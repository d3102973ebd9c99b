"""Run Affine Loop IR kernels under Numba, for the executor benchmark (bench/bench_exec.py).

The shim gives the IR's names a NumPy meaning. It parses an IR file with Python's `ast` and
rewrites each `@kernel` into a plain Python function that Numba compiles with
`@njit(parallel=True, fastmath=False, error_model="numpy")`:

- an allocation `Y = Tensor(M=..., N=..., dtype=.., fill=..)` becomes
  `Y = np.full((..., ...), fill, dtype)`;
- `for v in Dim("D", parallel=True)` becomes `for v in prange(<size of D>)` (`range` without
  `parallel=True`); a dim's size is `X.shape[i]` of the first tensor parameter that names it,
  or the allocation keyword that names it; `size("D")` is the same size;
- `select(c, a, b)` becomes `a if c else b`; `exp log sqrt tanh erf` become `math.*`; `rsqrt(x)`
  becomes `1 / math.sqrt(x)`, `sigmoid(x)` `1 / (1 + math.exp(-x))`; `max`, `min`, `abs` stay;
  `inf` is `np.inf`; module constants are inlined;
- float literals and float scalar parameters are fp32 (`np.float32`) in a kernel whose
  allocations are all fp32, so that Numba computes in fp32 as the native executor does
  (a Python float literal would promote every expression to fp64).

`error_model="numpy"` gives IR semantics for division (x/0 is inf, no ZeroDivisionError check).
`model()` is evaluated by a tiny interpreter that supports what the benchmark programs use:
tensor parameters, scalar parameters with defaults, module constants, literals, kernel calls
(positional or keyword arguments), assignments and `return`. Everything else fails loudly
(`ShimError`), naming the construct and its line.

    .venv/bin/python bench/numba_shim.py      # self-check against solar's interpreter
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

DTYPES = {
    "fp32": np.float32,
    "fp64": np.float64,
    "int64": np.int64,
    "int32": np.int32,
    "bool": np.bool_,
}
MATH = {"exp", "log", "sqrt", "tanh", "erf", "log1p", "expm1", "sin", "cos"}
PASS_THROUGH = {"max", "min", "abs"}


class ShimError(Exception):
    """A construct the shim does not translate."""


def _fail(node: ast.AST, what: str, file: str) -> ShimError:
    line = getattr(node, "lineno", 0)
    return ShimError(f"{file}:{line}: numba shim: {what}: {ast.unparse(node)[:80]!r}")


def _literal(node: ast.AST, consts: dict, file: str):
    """Value of a static literal: numbers, -x, `inf`, constants, + - * / // on them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return node.value
    if isinstance(node, ast.Name) and node.id == "inf":
        return math.inf
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literal(node.operand, consts, file)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _literal(node.left, consts, file), _literal(node.right, consts, file)
        ops = {
            ast.Add: lambda: a + b,
            ast.Sub: lambda: a - b,
            ast.Mult: lambda: a * b,
            ast.Div: lambda: a / b,
            ast.FloorDiv: lambda: a // b,
        }
        if type(node.op) in ops:
            return ops[type(node.op)]()
    raise _fail(node, "not a static literal", file)


def _tensor_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Tensor"
    )


def _kwargs(call: ast.Call, consts: dict, file: str) -> dict:
    out = {}
    for kw in call.keywords:
        if kw.arg in ("dtype", "role"):
            if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)):
                raise _fail(kw.value, f"{kw.arg}= must be a string", file)
            out[kw.arg] = kw.value.value
        elif kw.arg in ("fill", "sparsity"):
            out[kw.arg] = _literal(kw.value, consts, file)
    return out


@dataclass
class KernelParam:
    name: str
    kind: str  # "tensor", "int" or "float"
    dims: list[str] = field(default_factory=list)
    dtype: str = "fp32"


@dataclass
class ShimKernel:
    name: str
    params: list[KernelParam]
    source: str  # the generated Python function
    fp32: bool  # computes in fp32 (float literals and float parameters are np.float32)
    fn: object = None  # the numba dispatcher

    def call(self, args: list):
        conv = []
        for p, a in zip(self.params, args, strict=True):
            if p.kind == "float":
                a = np.float32(a) if self.fp32 else float(a)
            elif p.kind == "int":
                a = int(a)
            else:
                want = DTYPES[p.dtype]
                if not isinstance(a, np.ndarray) or a.dtype != want:
                    raise ShimError(f"kernel {self.name}: parameter {p.name} must be {p.dtype}")
            conv.append(a)
        return self.fn(*conv)


class _KernelWriter:
    """Translates one @kernel FunctionDef into Python source for Numba."""

    def __init__(self, fdef: ast.FunctionDef, consts: dict, file: str):
        self.f = fdef
        self.consts = consts
        self.file = file
        self.dims: dict[str, str] = {}  # dim name -> Python expression of its size
        self.floats: dict[float, str] = {}  # float literal -> global name (np.float32)
        self.lines: list[str] = []
        self.params: list[KernelParam] = []
        self.alloc_dtypes: list[str] = []

    def fail(self, node, what):
        return _fail(node, what, self.file)

    def signature(self):
        a = self.f.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
            raise self.fail(self.f, "only plain positional kernel parameters are supported")
        for arg in a.args:
            ann = arg.annotation
            if _tensor_call(ann):
                if not (ann.args and isinstance(ann.args[0], ast.Constant)):
                    raise self.fail(ann, "Tensor annotation needs a dims string")
                names = [d.strip() for d in ann.args[0].value.split(",") if d.strip()]
                dtype = _kwargs(ann, self.consts, self.file).get("dtype", "fp32")
                if dtype not in DTYPES:
                    raise self.fail(ann, f"dtype {dtype} is not supported")
                self.params.append(KernelParam(arg.arg, "tensor", names, dtype))
                for i, d in enumerate(names):
                    self.dims.setdefault(d, f"{arg.arg}.shape[{i}]")
            elif isinstance(ann, ast.Name) and ann.id in ("int", "float"):
                self.params.append(KernelParam(arg.arg, ann.id))
            else:
                raise self.fail(arg, "unsupported kernel parameter annotation")

    # -- expressions ------------------------------------------------------------------------
    def expr(self, node: ast.AST) -> ast.AST:
        writer = self

        class T(ast.NodeTransformer):
            def visit_Constant(self, n):
                if isinstance(n.value, float):
                    return ast.Name(writer.float_const(n.value), ast.Load())
                if isinstance(n.value, (int, bool)):
                    return n
                raise writer.fail(n, "unsupported constant")

            def visit_Name(self, n):
                if n.id == "inf":
                    return ast.Name(writer.float_const(math.inf), ast.Load())
                if n.id in writer.consts:
                    v = writer.consts[n.id]
                    if isinstance(v, float):
                        return ast.Name(writer.float_const(v), ast.Load())
                    return ast.Constant(v)
                return n

            def visit_Call(self, n):
                if not isinstance(n.func, ast.Name) or n.keywords:
                    raise writer.fail(n, "unsupported call")
                f = n.func.id
                if f == "size":
                    if len(n.args) != 1 or not isinstance(n.args[0], ast.Constant):
                        raise writer.fail(n, 'size() takes one dim name: size("D")')
                    d = n.args[0].value
                    if d not in writer.dims:
                        raise writer.fail(n, f"dim {d} is not bound")
                    return ast.parse(writer.dims[d], mode="eval").body
                args = [self.visit(a) for a in n.args]
                if f == "select":
                    if len(args) != 3:
                        raise writer.fail(n, "select takes 3 arguments")
                    return ast.IfExp(test=args[0], body=args[1], orelse=args[2])
                if f in MATH and len(args) == 1:
                    return ast.Call(
                        ast.Attribute(ast.Name("math", ast.Load()), f, ast.Load()), args, []
                    )
                if f == "rsqrt" and len(args) == 1:
                    sq = ast.Call(
                        ast.Attribute(ast.Name("math", ast.Load()), "sqrt", ast.Load()), args, []
                    )
                    return ast.BinOp(ast.Name(writer.float_const(1.0), ast.Load()), ast.Div(), sq)
                if f == "sigmoid" and len(args) == 1:
                    one = ast.Name(writer.float_const(1.0), ast.Load())
                    e = ast.Call(
                        ast.Attribute(ast.Name("math", ast.Load()), "exp", ast.Load()),
                        [ast.UnaryOp(ast.USub(), args[0])],
                        [],
                    )
                    return ast.BinOp(one, ast.Div(), ast.BinOp(one, ast.Add(), e))
                if f in PASS_THROUGH:
                    return ast.Call(ast.Name(f, ast.Load()), args, [])
                raise writer.fail(n, f"function {f} is not supported by the shim")

            def generic_visit(self, n):
                allowed = (
                    ast.BinOp,
                    ast.UnaryOp,
                    ast.BoolOp,
                    ast.Compare,
                    ast.Subscript,
                    ast.Tuple,
                    ast.Attribute,
                    ast.Load,
                    ast.Store,
                    ast.operator,
                    ast.unaryop,
                    ast.boolop,
                    ast.cmpop,
                    ast.expr_context,
                )
                if not isinstance(n, allowed):
                    raise writer.fail(n, f"unsupported expression ({type(n).__name__})")
                return super().generic_visit(n)

        import copy

        return ast.fix_missing_locations(T().visit(copy.deepcopy(node)))

    def float_const(self, v: float) -> str:
        if v not in self.floats:
            self.floats[v] = f"_f{len(self.floats)}"
        return self.floats[v]

    def src(self, node: ast.AST) -> str:
        return ast.unparse(self.expr(node))

    # -- statements -------------------------------------------------------------------------
    def emit(self, text: str, depth: int):
        self.lines.append("    " * depth + text)

    def allocation(self, st: ast.Assign, depth: int):
        call = st.value
        kw = _kwargs(call, self.consts, self.file)
        dtype = kw.get("dtype", "fp32")
        if dtype not in DTYPES:
            raise self.fail(call, f"dtype {dtype} is not supported")
        self.alloc_dtypes.append(dtype)
        name = st.targets[0].id
        shape = []
        for k in call.keywords:
            if k.arg in ("dtype", "fill", "role", "sparsity"):
                continue
            shape.append(self.src(k.value))
        if not shape:
            raise self.fail(call, "rank-0 allocations are not supported")
        fill = kw.get("fill", 0)
        fill_src = {math.inf: "np.inf", -math.inf: "-np.inf"}.get(fill, repr(fill))
        np_type = "np." + DTYPES[dtype].__name__
        self.emit(f"{name} = np.full(({', '.join(shape)},), {fill_src}, dtype={np_type})", depth)
        i = 0
        for k in call.keywords:
            if k.arg in ("dtype", "fill", "role", "sparsity"):
                continue
            self.dims.setdefault(k.arg, f"{name}.shape[{i}]")
            i += 1

    def stmt(self, st: ast.stmt, depth: int):
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            t = st.targets[0]
            if isinstance(t, ast.Name) and _tensor_call(st.value):
                if depth != 1:
                    raise self.fail(st, "allocation inside a loop")
                return self.allocation(st, depth)
            if isinstance(t, ast.Subscript):
                return self.emit(f"{self.src(t)} = {self.src(st.value)}", depth)
        if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Subscript):
            op = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*="}.get(type(st.op))
            if op is None:
                raise self.fail(st, "unsupported augmented assignment")
            return self.emit(f"{self.src(st.target)} {op} {self.src(st.value)}", depth)
        if isinstance(st, ast.For):
            it = st.iter
            if not (
                isinstance(st.target, ast.Name)
                and isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name)
                and it.func.id == "Dim"
                and it.args
                and isinstance(it.args[0], ast.Constant)
                and not st.orelse
            ):
                raise self.fail(st, 'loops must be `for v in Dim("D"[, parallel=True])`')
            d = it.args[0].value
            if d not in self.dims:
                raise self.fail(it, f"dim {d} is not bound")
            par = False
            for k in it.keywords:
                if k.arg != "parallel" or not isinstance(k.value, ast.Constant):
                    raise self.fail(it, "Dim() takes only parallel=True|False")
                par = bool(k.value.value)
            loop = "prange" if par else "range"
            self.emit(f"for {st.target.id} in {loop}({self.dims[d]}):", depth)
            for s in st.body:
                self.stmt(s, depth + 1)
            return None
        if isinstance(st, ast.If):
            self.emit(f"if {self.src(st.test)}:", depth)
            for s in st.body:
                self.stmt(s, depth + 1)
            if st.orelse:
                self.emit("else:", depth)
                for s in st.orelse:
                    self.stmt(s, depth + 1)
            return None
        if isinstance(st, ast.Return) and depth == 1:
            return self.emit(f"return {ast.unparse(st.value)}", depth)
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            return None  # docstring
        raise self.fail(st, "unsupported statement in a kernel")

    def write(self) -> ShimKernel:
        self.signature()
        names = ", ".join(p.name for p in self.params)
        self.lines.append(f"def {self.f.name}({names}):")
        for st in self.f.body:
            self.stmt(st, 1)
        fp32 = all(d == "fp32" for d in self.alloc_dtypes)
        return ShimKernel(self.f.name, self.params, "\n".join(self.lines) + "\n", fp32)


class ShimProgram:
    """An IR program whose kernels run under Numba."""

    def __init__(self, path: str | Path):
        self.file = str(path)
        tree = ast.parse(Path(path).read_text(), self.file)
        self.consts: dict = {}
        self.kernels: dict[str, ShimKernel] = {}
        self.model: ast.FunctionDef | None = None
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                name = node.targets[0]
                if isinstance(name, ast.Name) and name.id == "DIMS":
                    continue
                if isinstance(name, ast.Name):
                    self.consts[name.id] = _literal(node.value, self.consts, self.file)
                    continue
            if isinstance(node, ast.FunctionDef):
                decos = [d.id for d in node.decorator_list if isinstance(d, ast.Name)]
                if decos == ["kernel"]:
                    self._add_kernel(node)
                    continue
                if node.name == "model" and not node.decorator_list:
                    self.model = node
                    continue
            raise _fail(node, "unsupported top-level item", self.file)
        if self.model is None:
            raise ShimError(f"{self.file}: no model()")

    def _add_kernel(self, fdef: ast.FunctionDef):
        import numba

        w = _KernelWriter(fdef, self.consts, self.file)
        k = w.write()
        ns = {"np": np, "math": math, "prange": numba.prange}
        for v, g in w.floats.items():
            ns[g] = np.float32(v) if k.fp32 else float(v)
        exec(compile(k.source, f"<numba shim: {self.file}:{fdef.name}>", "exec"), ns)
        k.fn = numba.njit(parallel=True, fastmath=False, error_model="numpy")(ns[fdef.name])
        self.kernels[fdef.name] = k

    def run(self, inputs: dict) -> dict:
        """Evaluates model() on `inputs` (NumPy arrays by parameter name)."""
        m = self.model
        env: dict = {}
        a = m.args
        defaults = dict(
            zip([x.arg for x in a.args][len(a.args) - len(a.defaults) :], a.defaults, strict=True)
        )
        for arg in a.args:
            if _tensor_call(arg.annotation):
                if arg.arg not in inputs:
                    raise ShimError(f"{self.file}: missing input {arg.arg}")
                env[arg.arg] = inputs[arg.arg]
            elif arg.arg in defaults:
                env[arg.arg] = _literal(defaults[arg.arg], self.consts, self.file)
            else:
                raise _fail(arg, "model() parameter without a default", self.file)
        for st in m.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                t = st.targets[0]
                v = self._eval(st.value, env)
                if isinstance(t, ast.Name):
                    env[t.id] = v
                elif isinstance(t, ast.Tuple) and all(isinstance(e, ast.Name) for e in t.elts):
                    for e, x in zip(t.elts, v, strict=True):
                        env[e.id] = x
                else:
                    raise _fail(st, "unsupported assignment in model()", self.file)
            elif isinstance(st, ast.Return):
                v = self._eval(st.value, env)
                vals = v if isinstance(v, tuple) else (v,)
                return {f"out{i}": x for i, x in enumerate(vals)}
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
                continue
            else:
                raise _fail(st, "unsupported statement in model()", self.file)
        raise ShimError(f"{self.file}: model() returns nothing")

    def _eval(self, node, env):
        if isinstance(node, ast.Name) and node.id in env:
            return env[node.id]
        if isinstance(node, ast.Tuple):
            return tuple(self._eval(e, env) for e in node.elts)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            k = self.kernels.get(node.func.id)
            if k is None:
                raise _fail(node, "only kernel calls are supported in model()", self.file)
            names = [p.name for p in k.params]
            args = [self._eval(x, env) for x in node.args]
            by_name = {kw.arg: self._eval(kw.value, env) for kw in node.keywords}
            for n in names[len(args) :]:
                if n not in by_name:
                    raise _fail(node, f"missing argument {n}", self.file)
                args.append(by_name.pop(n))
            if by_name or len(args) != len(names):
                raise _fail(node, "wrong arguments", self.file)
            return k.call(args)
        return _literal(node, self.consts, self.file)


_LOADED: dict[str, ShimProgram] = {}


def load(path: str | Path) -> ShimProgram:
    """The ShimProgram of `path`, translated and its Numba dispatchers created once per
    process (a dispatcher compiles on its first call per argument types)."""
    key = str(Path(path).resolve())
    if key not in _LOADED:
        _LOADED[key] = ShimProgram(path)
    return _LOADED[key]


def self_check(programs, seed: int = 0, verbose: bool = True) -> bool:
    """Runs each (path, dims) under the shim and under solar's interpreter; True if all agree.

    Tolerances: rtol 1e-4, atol 1e-5 * max(1, max |interpreter|) (fp32 throughout)."""
    import solar

    ok = True
    for path, dims in programs:
        inputs = solar.make_inputs(path, seed=seed, dims=dims)
        ref = solar.run(path, inputs, dims=dims, backend="interpreter")
        got = load(path).run(inputs)
        for name, r in ref.items():
            g = got.get(name)
            scale = max(1.0, float(np.max(np.abs(r)))) if r.size else 1.0
            good = (
                g is not None
                and g.shape == r.shape
                and g.dtype == r.dtype
                and np.allclose(g, r, rtol=1e-4, atol=1e-5 * scale)
            )
            err = float(np.max(np.abs(g - r))) if g is not None and g.shape == r.shape else -1.0
            ok &= bool(good)
            if verbose:
                status = "ok" if good else "MISMATCH"
                print(f"  shim self-check {Path(path).stem:<18} {name} {r.shape}: {status}", end="")
                print(f" (max abs err {err:.2e})")
    return ok


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_exec import OPS, program_path

    progs = [(program_path(op), op_info["quick"]) for op, op_info in OPS.items()]
    sys.exit(0 if self_check(progs) else 1)
