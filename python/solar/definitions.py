"""SOL-ExecBench / FlashInfer-Trace problem definitions (docs/definitions.md).

A **definition** (`definition.json`) names its axes (`const` with a value, `var` given per
workload, `expr` computed from the others), its inputs and outputs (a shape over the axes, or
`null` for a scalar, and a dtype), and a PyTorch reference `run(...)` as source text, with an
optional `custom_inputs_entrypoint`: a function of that source called as
`fn(axes_and_scalars, device) -> {name: tensor}` for inputs of type `custom`. A **workload**
(one line of `workload.jsonl`) gives the `var` axes' values and how each input is made:
`random`, `zeros`, `scalar` (with its `value`), `custom`, `safetensors` (a `path` and a
`tensor_key`) or `generated` (a `generator`: `normal` with `mean`/`std`, `uniform` with
`low`/`high`, `integer` with `low`/`high`, `simplex` along an `axis` at a `temperature`, or
`constant` with a `value`; a parameter written as a string is an axis expression).

Each (definition, workload) becomes a PyTorch problem file (`problem_text`):

- the axes become module-level size constants, so `--dim` and scaled validation work;
- `Model.forward` takes the tensor inputs in the definition's order and calls `run` with
  the scalars in place;
- `get_inputs()` draws the inputs the way the workload says.

It then goes through the PyTorch front end and is validated like any program. Nothing here
runs the reference: the front end does, as it runs any problem file.
"""

from __future__ import annotations

import contextlib
import json
import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UserError, argument_error
from .json_input import loads

# dtype names of the format -> torch dtype attribute (float4 travels packed, two per byte).
DTYPES = {
    "float64": "float64",
    "float32": "float32",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
    "float4_e2m1": "float4_e2m1fn_x2",
    "float4_e2m1fn_x2": "float4_e2m1fn_x2",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
}
INPUT_TYPES = ("random", "zeros", "scalar", "custom", "safetensors", "generated")
# `generated` inputs (the workload.v2 layout of some SOL-ExecBench forks) name a generator.
GENERATORS = ("normal", "uniform", "integer", "simplex", "constant")


@dataclass
class Definition:
    path: str
    name: str
    axes: dict  # name -> {"type": const|var|expr, "value"?, "expression"?}
    inputs: dict  # name -> {"shape": [axis | int] | None, "dtype": str}
    outputs: dict
    reference: str
    custom_inputs: str = ""
    description: str = ""


@dataclass
class Workload:
    uuid: str
    axes: dict = field(default_factory=dict)  # var axis -> value
    inputs: dict = field(default_factory=dict)  # input -> {"type": ..., ...}
    source: str = ""  # the workload file ("" for a definition without one)
    tolerance: dict = field(default_factory=dict)  # {"max_atol": ..., "max_rtol": ...}
    line: int = 0  # its line in `source`


def fp32_math_of(d: Definition) -> str:
    """How the reference's fp32 contractions may run (docs/definitions.md, "Math mode"): in
    the narrowest floating format of the definition's tensors (fp8, then bf16, then fp16),
    as the benchmark's kernels do (a bf16 attention multiplies its probabilities in bf16,
    within the workload's tolerance); "default" when every tensor is fp32 or wider."""
    dtypes = {s.get("dtype", "") for s in [*d.inputs.values(), *d.outputs.values()]}
    if any(t.startswith("float8") for t in dtypes):
        return "fp8"
    if "bfloat16" in dtypes:
        return "bf16"
    if "float16" in dtypes:
        return "fp16"
    return "default"


def is_definition(path: str) -> bool:
    """A .json file with the fields of a definition."""
    if not str(path).endswith(".json") or not Path(path).is_file():
        return False
    try:
        data = loads(Path(path).read_text(), str(path))
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    except UserError:
        return True  # too deep to read: load_definition says so, with the file
    return isinstance(data, dict) and {"axes", "inputs", "outputs", "reference"} <= set(data)


def _fail(path: str, message: str, hint: str = ""):
    raise argument_error(f"{path}: {message}", hint)


def _json_error(path: str, e: json.JSONDecodeError, what: str):
    _fail(f"{path}:{e.lineno}:{e.colno}", f"{what} is not JSON: {e.msg}")


def _object(where: str, value, what: str) -> dict:
    """`value` if it is a JSON object; else a user error naming `what`."""
    if not isinstance(value, dict):
        _fail(where, f"{what} is a {_json_type(value)}, not an object")
    return value


def _json_type(value) -> str:
    names = {bool: "boolean", int: "number", float: "number", str: "string", list: "list"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def load_definition(path: str) -> Definition:
    try:
        data = loads(Path(path).read_text(), path)
    except (OSError, UnicodeDecodeError) as e:
        _fail(path, f"cannot read the definition: {e}")
    except json.JSONDecodeError as e:
        _json_error(path, e, "the definition")
    _object(path, data, "the definition")
    for key in ("axes", "inputs", "outputs", "reference"):
        if key not in data:
            _fail(path, f"the definition has no '{key}'")
    axes = _object(path, data["axes"] or {}, "'axes'")
    for name, axis in axes.items():
        kind = axis.get("type") if isinstance(axis, dict) else None
        if not _identifier(name):
            _fail(path, f"axis '{name}' is not a Python identifier")
        if kind not in ("const", "var", "expr"):
            _fail(path, f"axis '{name}' has type {kind!r}", "axes are const, var or expr")
        if kind == "const" and not (_size(axis.get("value")) and axis["value"] >= 0):
            _fail(path, f"const axis '{name}' needs an integer value, 0 or more")
        if kind == "expr" and not isinstance(axis.get("expression"), str):
            _fail(path, f"expr axis '{name}' needs an expression")
    for group in ("inputs", "outputs"):
        for name, spec in _object(path, data[group], f"'{group}'").items():
            if not _identifier(name):
                _fail(path, f"{group[:-1]} '{name}' is not a Python identifier")
            _object(path, spec, f"{group[:-1]} '{name}'")
            shape = spec.get("shape")
            if shape is not None and not isinstance(shape, list):
                _fail(path, f"{group[:-1]} '{name}': shape {shape!r} is not a list")
            if shape is not None:
                # A literal size written as a string ("1") is that size: no axis is a number.
                shape = [_literal_size(d) for d in shape]
                spec["shape"] = shape
                for d in shape:
                    if isinstance(d, str) and d not in axes:
                        _fail(path, f"{group[:-1]} '{name}': axis '{d}' is not in axes")
                    if not (isinstance(d, str) or (_size(d) and d >= 0)):
                        _fail(path, f"{group[:-1]} '{name}': shape entry {d!r}")
            if not (isinstance(spec.get("dtype"), str) and spec["dtype"] in DTYPES):
                _fail(
                    path,
                    f"{group[:-1]} '{name}' has dtype {spec.get('dtype')!r}",
                    "one of " + ", ".join(DTYPES),
                )
    if not isinstance(data["reference"], str) or "def run(" not in data["reference"]:
        _fail(path, "the reference defines no run(...)")
    entry = data.get("custom_inputs_entrypoint") or ""
    if not (entry == "" or (isinstance(entry, str) and _identifier(entry))):
        _fail(path, f"custom_inputs_entrypoint {entry!r} is not a function name")
    return Definition(
        path,
        str(data.get("name") or Path(path).stem),
        axes,
        dict(data["inputs"]),
        dict(data["outputs"]),
        data["reference"],
        entry,
        str(data.get("description") or ""),
    )


def _identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def _literal_size(entry):
    """A shape entry, with a size written as a string of ASCII digits ("1") made that int."""
    return int(entry) if isinstance(entry, str) and entry.isascii() and entry.isdigit() else entry


def _size(value) -> bool:
    """An integer size (JSON's true and false are not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def workloads_file(definition_path: str) -> str:
    """The workloads of a definition where the layouts put them: `<name>.jsonl` or
    `workload.jsonl` beside it, or FlashInfer-Trace's `workloads/<op>/<name>.jsonl` for
    `definitions/<op>/<name>.json`; "" if none."""
    p = Path(definition_path)
    candidates = [p.with_suffix(".jsonl"), p.parent / "workload.jsonl"]
    if p.parent.parent.name == "definitions":
        candidates.append(p.parents[2] / "workloads" / p.parent.name / f"{p.stem}.jsonl")
    return next((str(c) for c in candidates if c.is_file()), "")


def load_workloads(path: str, definition: Definition) -> list[Workload]:
    """Every workload of a JSON-lines file for `definition` (FlashInfer-Trace's lines wrap
    one in {"definition", "workload": {...}}; a bare {"uuid", "axes", "inputs"} works too)."""
    out = []
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        _fail(path, f"cannot read the workloads: {e}")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            row = loads(line, where)
        except json.JSONDecodeError as e:
            _fail(f"{where}:{e.colno}", f"not a JSON object: {e.msg}")
        _object(where, row, "the line")
        if row.get("definition") not in (None, definition.name):
            continue  # another definition's workload in a shared file
        w = _object(where, row.get("workload", row), "'workload'")
        uuid = str(w.get("uuid") or f"w{n}")
        axes = dict(_object(where, w.get("axes") or {}, "'axes'"))
        for name, value in axes.items():
            if not (_size(value) and value >= 0):
                _fail(where, f"axis '{name}' = {value!r}", "a size is an integer, 0 or more")
        inputs = dict(_object(where, w.get("inputs") or {}, "'inputs'"))
        for name, spec in inputs.items():
            _object(where, spec, f"input '{name}'")
            if name not in definition.inputs:
                # The benchmark's harness draws the definition's inputs and looks each up in
                # the workload: one the definition does not take is never drawn.
                continue
            if spec.get("type") not in INPUT_TYPES:
                _fail(
                    f"{path}:{n}",
                    f"input '{name}' has type {spec.get('type')!r}",
                    "one of " + ", ".join(INPUT_TYPES),
                )
            gen = spec.get("generator")
            if spec["type"] == "generated" and (
                not isinstance(gen, dict) or gen.get("type") not in GENERATORS
            ):
                kind = gen.get("type") if isinstance(gen, dict) else gen
                _fail(
                    f"{path}:{n}",
                    f"input '{name}' is generated by {kind!r}",
                    "a generator of type " + ", ".join(GENERATORS),
                )
            if spec["type"] == "safetensors" and not (
                isinstance(spec.get("path"), str) and isinstance(spec.get("tensor_key"), str)
            ):
                _fail(where, f"input '{name}' is safetensors: it needs a path and a tensor_key")
        tolerance = dict(_object(where, w.get("tolerance") or {}, "'tolerance'"))
        for key in ("max_atol", "max_rtol"):
            value = tolerance.get(key)
            if value is not None and not (
                isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value
            ):
                _fail(where, f"tolerance {key} = {value!r}", "a tolerance is a number, 0 or more")
        inputs = {k: v for k, v in inputs.items() if k in definition.inputs}
        out.append(Workload(uuid, axes, inputs, path, tolerance, n))
    return out


def resolve_axes(d: Definition, given: dict) -> dict:
    """Every axis's value: const ones, the given var ones, expr ones computed in order."""
    values = {}
    for name, axis in d.axes.items():
        if axis["type"] != "var" and name in given and given[name] != axis.get("value"):
            _fail(
                d.path,
                f"axis '{name}' is {axis['type']} in the definition"
                + (f" ({axis['value']})" if axis["type"] == "const" else "")
                + f": it cannot be set to {given[name]}",
                "only var axes take values from a workload or --dim",
            )
        if axis["type"] == "const":
            values[name] = axis["value"]
        elif axis["type"] == "var":
            if name not in given:
                _fail(
                    d.path,
                    f"axis '{name}' is var: the workload gives no value",
                    f"give --workloads FILE, or --dim {name}=N",
                )
            values[name] = given[name]
    for name, axis in d.axes.items():
        if axis["type"] == "expr":
            values[name] = _expression(d, name, axis["expression"], values)
    for name, value in values.items():
        if not (_size(value) and value >= 0):
            _fail(
                d.path,
                f"axis '{name}' = {value!r}: a size is an integer, 0 or more",
                "check the workload's var axes and --dim",
            )
    # A workload axis the definition has not (SOL-ExecBench task 126 gives a scalar input's
    # value there) sizes nothing: the harness passes it to the custom input generator only
    # (problem_text).
    return values


# An axis expression's values stay within int64 (a tensor size): each step is checked, so a
# product of 200,000 terms stops at the first that overflows instead of growing a huge int.
_MAX_SIZE = 2**63 - 1
# Longer expressions are refused before parsing (no definition's is near this).
_MAX_EXPRESSION = 10_000


def _expression(d: Definition, name: str, text: str, values: dict, what: str = "expr axis") -> int:
    """An expr axis: integer arithmetic over other axes (+ - * // % and parentheses)."""
    import ast
    import operator

    ops = {
        ast.Add: operator.add,
        ast.Sub: operator.sub,
        ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv,
        ast.Mod: operator.mod,
        ast.Div: operator.floordiv,
    }

    def ev(node):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            value = node.value
        elif isinstance(node, ast.Name) and node.id in values:
            value = values[node.id]
        elif isinstance(node, ast.BinOp) and type(node.op) in ops:
            value = ops[type(node.op)](ev(node.left), ev(node.right))
        else:
            raise ValueError(ast.dump(node)[:80])
        if abs(value) > _MAX_SIZE:
            raise ValueError(f"a value exceeds {_MAX_SIZE}")
        return value

    if len(text) > _MAX_EXPRESSION:
        _fail(d.path, f"{what} '{name}' is {len(text)} characters long (at most {_MAX_EXPRESSION})")
    try:
        return int(ev(ast.parse(text, mode="eval").body))
    except (SyntaxError, ValueError, ZeroDivisionError) as e:
        _fail(d.path, f"{what} '{name}' = {text[:80]!r} cannot be computed: {e}")
    except (RecursionError, MemoryError):
        _fail(d.path, f"{what} '{name}' is nested too deeply to compute")


def _shape(spec: dict) -> str:
    return "(" + "".join(f"{d}, " for d in spec["shape"]) + ")"


def _without_value_asserts(reference: str) -> str:
    """The reference with each `assert` whose test calls something (`token_indices.min() >= 0`,
    `mask.any()`) made a `pass` on the same lines. Such a check reads tensor values, which
    capture on fake tensors cannot, and it computes nothing the outputs depend on. Asserts of
    sizes (`x.shape[1] == 4096`, no call) stay: they keep scaled validation honest."""
    import ast

    try:
        tree = ast.parse(reference)
    except SyntaxError:
        return reference  # the front end reports it with its line
    lines = reference.splitlines()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert) or node.end_lineno is None:
            continue
        if not any(isinstance(n, ast.Call) for n in ast.walk(node.test)):
            continue
        first = lines[node.lineno - 1]
        if first[: node.col_offset].strip():  # not alone on its line (`if c: assert x`)
            continue
        lines[node.lineno - 1] = (
            first[: node.col_offset]
            + "pass  # value check: "
            + first[node.col_offset :].strip()[:60].replace("\\", "")
        )
        for i in range(node.lineno, node.end_lineno):
            lines[i] = ""
    return "\n".join(lines)


def _on_the_cpu(reference: str) -> str:
    """The reference with each string literal naming a CUDA device (`torch.device('cuda')`,
    `device="cuda:0"`) made "cpu", in place: a reference that hard-codes its device (SOL-ExecBench
    tasks 16 and 28) is captured and validated on the CPU like the others, whose device
    follows their inputs'. Other text is untouched (tokens, not a search of the text)."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(reference).readline))
    except (tokenize.TokenError, SyntaxError):
        return reference  # the front end reports it with its line
    lines = reference.splitlines(keepends=True)
    for tok in reversed(tokens):
        if tok.type != tokenize.STRING or tok.start[0] != tok.end[0]:
            continue
        if not re.fullmatch(r"""[rRbBuU]?(['"])cuda(:\d+)?\1""", tok.string):
            continue
        row, (c0, c1) = tok.start[0] - 1, (tok.start[1], tok.end[1])
        lines[row] = lines[row][:c0] + '"cpu"' + lines[row][c1:]
    return "".join(lines)


def problem_text(d: Definition, w: Workload, axes: dict) -> str:
    """The PyTorch problem file of one workload of a definition."""
    tensors = [n for n, s in d.inputs.items() if s.get("shape") is not None]
    scalars = {}
    for name, spec in d.inputs.items():
        if spec.get("shape") is None:
            given = w.inputs.get(name, {})
            if given.get("type") == "scalar":
                scalars[name] = given.get("value")
            elif given.get("type") == "custom" and name in w.axes:
                # The harness hands the workload's axes to the custom generator, which returns
                # a scalar of that name as given (SOL-ExecBench task 126's is_joint_block).
                scalars[name] = w.axes[name]
            elif "value" in spec:
                scalars[name] = spec["value"]
            else:
                scalars[name] = 1.0  # any value: the bound does not depend on it
    custom = [n for n in tensors if w.inputs.get(n, {}).get("type") == "custom"]
    if custom and not d.custom_inputs:
        _fail(d.path, f"input(s) {', '.join(custom)} are custom: no custom_inputs_entrypoint")
    lines = [
        f"# Generated by Solar from {d.path} (workload {w.uuid}); docs/definitions.md.",
        "import torch",
        "import torch.nn as nn",
        "",
        "# --- the definition's reference ---",
        _on_the_cpu(_without_value_asserts(d.reference)).rstrip(),
        "# --- end of the reference ---",
        # The reference's own names may be the file's (a custom entrypoint called
        # `get_inputs`, NVIDIA's moe_index_add sample): the file calls them by these.
        "_reference_run = run",
        *([f"_reference_inputs = {d.custom_inputs}"] if custom else []),
        "",
    ]
    lines += [f"{name} = {value}" for name, value in axes.items()]
    lines += ["", "", "class Model(nn.Module):", f"    def forward(self, {', '.join(tensors)}):"]
    call = [name if name in tensors else repr(scalars[name]) for name in d.inputs]
    lines.append(f"        return _reference_run({', '.join(call)})")
    lines += ["", "", "def get_inputs():"]
    if custom:
        arg = (
            "{"
            + ", ".join(f"{k!r}: {k}" for k in axes)
            + "".join(f", {k!r}: {v!r}" for k, v in w.axes.items() if k not in axes)
            + "".join(f", {k!r}: {v!r}" for k, v in scalars.items() if k not in w.axes)
            + "}"
        )
        lines.append(
            "    from solar.definitions import custom_inputs\n"
            f"    made = custom_inputs(_reference_inputs, {arg}, {_input_bytes(d, axes, custom)})"
        )
    lines.append("    out = []")
    for name in tensors:
        spec = d.inputs[name]
        dtype = f"torch.{DTYPES[spec['dtype']]}"
        how = w.inputs.get(name, {"type": "random"})
        kind = how.get("type", "random")
        if kind == "custom":
            lines.append(f"    out.append(made[{name!r}])")
        elif kind == "zeros":
            lines.append(f"    out.append(torch.zeros({_shape(spec)}, dtype={dtype}))")
        elif kind == "safetensors":
            base = Path(w.source).parent if w.source else Path(d.path).parent
            file = str((base / how["path"]).resolve())
            where = f"{w.source or d.path}:{w.line}" if w.line else (w.source or d.path)
            lines.append(
                "    from solar.definitions import load_safetensor\n"
                f"    out.append(load_safetensor({file!r}, {how['tensor_key']!r}, {where!r}, "
                f"{name!r}))"
            )
        elif kind == "generated":
            lines.append(f"    out.append({_generated(d, name, how['generator'], dtype, axes)})")
        elif spec["dtype"] in ("bool",):
            lines.append(f"    out.append(torch.randint(0, 2, {_shape(spec)}).bool())")
        elif spec["dtype"].startswith(("int", "uint")):
            lines.append(f"    out.append(torch.randint(0, 8, {_shape(spec)}, dtype={dtype}))")
        elif spec["dtype"].startswith(("float8", "float4")):
            # fp8/fp4 draws: N(0, 1) clamped to [-2, 2], as SOL-ExecBench draws fp8.
            lines.append(f"    out.append(torch.randn({_shape(spec)}).clamp(-2, 2).to({dtype}))")
        else:
            lines.append(f"    out.append(torch.randn({_shape(spec)}, dtype={dtype}))")
    lines += ["    return out", "", "", "def get_init_inputs():", "    return []", ""]
    return "\n".join(lines)


# A custom input generator that reads values (`.item()` on a tensor it drew: an NVFP4
# quantiser's global scale) cannot run on fake tensors. It runs for real, on the CPU, at the
# workload's size, when the inputs it makes take at most this many bytes (their declared
# shapes and dtypes); its tensors are then made fakes of the capture's mode. Measured:
# SOL-ExecBench task 196's NVFP4 generator (71,303,168 B declared: fp4 codes and fp8 scales
# made from fp32 draws 8x their size) peaked at 1.27 GB above torch's baseline, 17.8x its
# declared bytes, in 37 s on the loaded 2-core development machine; at 512 MiB declared
# that is ~9 GiB, within the 16 GiB memory limit of an analysis (solar/contain.py).
CUSTOM_REAL_BYTES = 512 << 20


def _dtype_bytes(dtype: str) -> float:
    if dtype.startswith("float4"):
        return 1.0  # float4_e2m1fn_x2: two values per byte, one element per byte
    if dtype.startswith(("float8", "int8", "uint8", "bool")):
        return 1.0
    if dtype in ("float16", "bfloat16", "int16"):
        return 2.0
    return 8.0 if dtype in ("float64", "int64") else 4.0


def _input_bytes(d: Definition, axes: dict, names: list) -> int:
    """Bytes the tensor inputs `names` take at the workload's `axes` (declared shapes)."""
    total = 0
    for name in names:
        spec = d.inputs[name]
        count = 1
        for e in spec.get("shape") or []:
            count *= axes[e] if isinstance(e, str) else e
        total += int(count * _dtype_bytes(spec["dtype"]))
    return total


def custom_inputs(entrypoint, axes_and_scalars: dict, declared_bytes: int) -> dict:
    """The custom inputs of a workload: `entrypoint(axes_and_scalars, "cpu")`. Inside a
    capture's fake mode, an entrypoint that reads a value it drew (`.item()`, a data-dependent
    size) is run again for real, outside the fake mode, when its inputs take at most
    CUSTOM_REAL_BYTES (`declared_bytes`, from the definition's shapes), and what it returns
    becomes fakes of that mode: the capture sees their shapes, dtypes and sizes."""
    from torch._guards import detect_fake_mode

    fake = detect_fake_mode()
    if fake is None:
        return entrypoint(axes_and_scalars, "cpu")
    try:
        return entrypoint(axes_and_scalars, "cpu")
    except Exception as e:  # noqa: BLE001 - only a value read is retried for real
        if not _reads_a_value(e):
            raise
    import torch
    from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily

    from .frontend.specialise import Refused, floating_fake

    if declared_bytes <= CUSTOM_REAL_BYTES:
        with unset_fake_temporarily(), _without_function_modes():
            made = entrypoint(axes_and_scalars, "cpu")
    else:
        # Too large to build whole: the floating tensors above 256 MiB (or beyond 4 GiB in
        # all) are made fakes of the capture's mode, the rest for real (specialise.py,
        # floating_fake). SOL-ExecBench's NVFP4 generators read the global scale of a weight
        # they quantise (`.item()`), beside an embedding table of 2.5 GB that nothing reads.
        try:
            with unset_fake_temporarily(), _without_function_modes(), floating_fake(fake):
                made = entrypoint(axes_and_scalars, "cpu")
        except Exception as e:  # noqa: BLE001 - a value read of a fake tensor is refused
            if not (isinstance(e, Refused) or _reads_a_value(e)):
                raise
            _fail(
                f"the custom input generator {getattr(entrypoint, '__name__', '')}",
                "it reads tensor values, so it runs on real tensors, but its inputs take "
                f"{declared_bytes:,} bytes, above the {CUSTOM_REAL_BYTES:,} built whole "
                "(CUSTOM_REAL_BYTES in solar/definitions.py), and it reads a value computed "
                f"from a large floating tensor, which is built fake ({e}); lower the sizes "
                "with --dim",
            )
    return {
        k: fake.from_tensor(v)
        if isinstance(v, torch.Tensor) and not isinstance(v, FakeTensor)
        else v
        for k, v in made.items()
    }


@contextlib.contextmanager
def _without_function_modes():
    """The capture's TorchFunctionModes (small ranges made fake tensors) set aside, a device
    "cuda" still made the CPU: what a generator builds here is real."""
    import torch
    from torch.overrides import _get_current_function_mode_stack

    from .frontend.capture import _cuda_as_cpu

    stack = _get_current_function_mode_stack()
    for _ in stack:
        torch._C._pop_torch_function_stack()
    try:
        with _cuda_as_cpu():
            yield
    finally:
        for mode in stack:
            torch._C._push_on_torch_function_stack(mode)


def _reads_a_value(e: BaseException) -> bool:
    """An error of fake tensors asked for a value they do not have."""
    from torch._subclasses.fake_tensor import (
        DataDependentOutputException,
        DynamicOutputShapeException,
    )
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    kinds = (DataDependentOutputException, DynamicOutputShapeException)
    return isinstance(e, (*kinds, GuardOnDataDependentSymNode))


def load_safetensor(path: str, key: str, where: str = "", name: str = ""):
    """Tensor `key` of a safetensors file, for a workload's `safetensors` input `name` of the
    workload at `where` (file:line). A file that is not there is a one-line user error naming
    the workload, the input, the file and the key (SOL-ExecBench tasks 221-229 read blobs
    that are not published with the problems). The file is
    read for real even inside a capture's fake mode (safetensors builds tensors over an
    untyped storage, which a fake mode cannot make), and the tensor is made a fake of that
    mode there: the capture sees its shape and dtype, a value-specialised capture and
    validation (no fake mode) its values."""
    from safetensors.torch import load_file
    from torch._guards import detect_fake_mode
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    if not Path(path).is_file():
        _fail(
            where or path,
            f"input '{name}' reads the safetensors blob {path} (key '{key}'), which is not there",
        )
    fake = detect_fake_mode()
    with unset_fake_temporarily():
        tensor = load_file(path)[key]
    return fake.from_tensor(tensor) if fake is not None else tensor


def _generated(d: Definition, name: str, gen: dict, dtype: str, axes: dict) -> str:
    """The expression that draws a `generated` input (its generator checked on loading).
    A parameter written as a string is an axis expression (`"high": "P * BS"`)."""
    shape = _shape(d.inputs[name])

    def number(key, default):
        value = gen.get(key, default)
        if isinstance(value, str):
            return _expression(d, f"{name}.{key}", value, axes, what="generator parameter")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            _fail(d.path, f"input '{name}': generator parameter {key} = {value!r}")
        return value

    kind = gen["type"]
    if kind == "normal":
        draw = f"torch.randn({shape}) * {number('std', 1.0)!r} + {number('mean', 0.0)!r}"
    elif kind == "uniform":
        low, high = number("low", 0.0), number("high", 1.0)
        draw = f"torch.rand({shape}) * {high - low!r} + {low!r}"
    elif kind == "integer":
        return f"torch.randint({number('low', 0)!r}, {number('high', 8)!r}, {shape}).to({dtype})"
    elif kind == "simplex":
        axis, temperature = number("axis", -1), number("temperature", 1.0)
        draw = f"torch.softmax(torch.randn({shape}) / {temperature!r}, dim={axis!r})"
    else:  # constant
        draw = f"torch.full({shape}, {number('value', 0.0)!r})"
    return f"({draw}).to({dtype})"


def workloads_of(path: str, workloads: str | None, dims: dict) -> tuple[Definition, list]:
    """(definition, [(workload, axes)]) for `solar analyze definition.json`: the workloads
    of `workloads` (or of the file found beside the definition), or one workload from the
    const axes and `dims` (--dim) when there is no file."""
    d = load_definition(path)
    file = workloads if workloads is not None else workloads_file(path)
    if file:
        ws = load_workloads(file, d)
        if not ws:
            _fail(file, f"no workload of {d.name}")
    else:
        ws = [Workload("default")]
    out = []
    for w in ws:
        given = {**w.axes, **{k: v for k, v in dims.items() if k in d.axes}}
        out.append((w, resolve_axes(d, given)))
    return d, out


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:80]


def check_outputs(d: Definition, w: Workload, axes: dict, returned: list) -> None:
    """The reference's outputs, [(shape, dtype)] from a capture on fake tensors (dtype as
    torch names it: "float16"), against the definition's declared outputs: their number,
    each shape over `axes` and each dtype. A mismatch is a user error naming the output."""
    where = f"{d.path} (workload {w.uuid})"
    declared = list(d.outputs.items())
    if len(returned) != len(declared):
        _fail(
            where,
            f"the reference returns {len(returned)} output(s); the definition declares "
            f"{len(declared)} ({', '.join(n for n, _ in declared)})",
        )
    for (name, spec), (shape, dtype) in zip(declared, returned, strict=True):
        want_shape = [axes[e] if isinstance(e, str) else e for e in spec.get("shape") or []]
        want_dtype = DTYPES[spec["dtype"]]
        if list(shape) != want_shape or dtype != want_dtype:
            _fail(
                where,
                f"output '{name}' is declared {want_shape} {want_dtype}; "
                f"the reference returns {list(shape)} {dtype}",
                "correct the definition's outputs, or its reference",
            )


def reference_outputs(problem: str) -> list | None:
    """[(shape, dtype)] of the outputs of a generated problem file (`problem_text`), from one
    run on fake tensors (nothing allocated; dtype as torch names it). None when that run
    fails: the capture that follows runs it again and reports the failure with its hint."""
    return reference_run(problem)[0]


def reference_run(problem: str) -> tuple[list | None, tuple | None]:
    """(reference_outputs, the path the run took): the lines of the problem file it executed,
    in order, or None when the run failed. Two workloads whose reference takes the same path
    differ in sizes only, as far as the reference's own control flow goes (a branch or a loop
    over a size changes the path); a size template serves only workloads of its path."""
    import sys

    from .frontend.capture import build_problem, fake_tensors, load_problem

    loaded = load_problem(problem)  # its errors are the capture's: user errors
    lines: list = []

    def trace(frame, event, arg):  # called for every frame: follows those of the problem
        if frame.f_code.co_filename != problem:
            return None
        if event == "line":
            lines.append(frame.f_lineno)
        return trace

    previous = sys.gettrace()
    try:
        with fake_tensors():
            model, inputs = build_problem(loaded, None)
            sys.settrace(trace)
            try:
                out = model(*inputs)
            finally:
                sys.settrace(previous)
            outs = out if isinstance(out, (tuple, list)) else [out]
            return [
                (tuple(int(n) for n in o.shape), str(o.dtype).removeprefix("torch.")) for o in outs
            ], tuple(lines)
    except Exception:  # noqa: BLE001 - reported by the capture that follows
        return None, None


class _Group:
    """Workloads of a definition that share their var axes below 2 (a size template varies
    only sizes of 2 and more): the pair fitted, their template, the capture that checked it."""

    def __init__(self, members: list, var_axes: list, items: list):
        from .frontend.size_template import seeds

        self.members = members
        self.var_axes = var_axes  # the axes free in this group
        chosen = seeds([items[i][1] for i in members], var_axes)[:2] if len(members) > 3 else []
        self.pair = [members[k] for k in chosen]
        self.template = None
        self.route = None  # the path the pair's reference took (reference_run)
        self.checked = None
        self.why_not = (
            "fewer than four workloads"
            if len(members) <= 3
            else ""
            if self.pair
            else "no two of its workloads differ in every var axis"
        )


class WorkloadTemplates:
    """Which workloads of a definition are captured and which take a size template's IR
    (frontend/size_template.py; docs/definitions.md, "Workloads from one template"). With
    `--no-validate`, and inputs that are random or the same scalars in every workload, the
    workloads are grouped by their var axes below 2 (batch 1 apart from larger batches); in a
    group of four or more, two workloads whose free axes all differ are captured first, the
    first capture their template could have given checks it, and the rest take its text at
    their sizes. Any workload no checked template gives is captured. `order` is the order to
    analyse them in; `source[i]` says where workload i's IR came from once it is analysed."""

    def __init__(self, d: Definition, items: list, no_validate: bool, capture_each: bool):
        self.items = items  # [(Workload, axes)]
        var_axes = [a for a, spec in d.axes.items() if spec.get("type") == "var"]
        self.order = list(range(len(items)))
        self.source = ["capture"] * len(items)
        self.results: dict = {}  # a pair's index -> (ProgramResult, route): kept for the fit
        self.groups: list = []
        self.group_of: dict = {}
        self.why_not = ""
        if capture_each:
            self.why_not = "--capture-each"
        elif not no_validate:
            self.why_not = "validation captures every workload"
        elif not var_axes:
            self.why_not = "no var axis"
        elif not self._same_inputs():
            self.why_not = "inputs other than random ones and equal scalars"
        else:
            keys: dict = {}
            for i, (_, axes) in enumerate(items):
                small = tuple((a, axes[a]) for a in var_axes if axes[a] < 2)
                keys.setdefault(small, []).append(i)
            for small, members in keys.items():
                free = [a for a in var_axes if a not in dict(small)]
                group = _Group(members, free, items) if free else None
                for i in members:
                    self.group_of[i] = group
                if group is not None:
                    self.groups.append(group)
            pairs = [i for g in self.groups for i in g.pair]
            self.order = pairs + [i for i in self.order if i not in pairs]

    def _same_inputs(self) -> bool:
        kinds = {json.dumps(w.inputs, sort_keys=True) for w, _ in self.items}
        types = {spec.get("type") for w, _ in self.items for spec in w.inputs.values()}
        return len(kinds) == 1 and types <= {"random", "scalar"}

    def captured(self, i: int, result, route) -> None:
        """Workload i was captured (its ProgramResult; `route`, the path its reference took): a
        group's template is fitted once its pair is; the first capture the template could have
        given checks it."""
        from .frontend.size_template import SizeTemplate

        g = self.group_of.get(i)
        if g is None or not g.pair:
            return
        axes = self.items[i][1]
        if i in g.pair:
            self.results[i] = (result, route)  # the others' graphs are not kept
            self.source[i] = "capture (fits the template)"
        first, second = g.pair
        if i in g.pair and first in self.results and second in self.results:
            (r1, route1), (r2, route2) = self.results[first], self.results[second]
            t = SizeTemplate.fit(
                r1.ir_text, self.items[first][1], r2.ir_text, self.items[second][1], g.var_axes
            )
            if route1 is None or route1 != route2:
                g.why_not, g.pair = "the reference takes another path at the pair's sizes", []
            elif isinstance(t, str):
                g.why_not, g.pair = t, []
            else:
                g.template, g.route = t, route1
        elif g.template is not None and g.checked is None and i not in g.pair:
            if g.template.text_at(axes)[0] is None or route != g.route:
                return  # not one the template gives: no check
            if g.template.agrees(axes, result.ir_text):
                g.checked = i
                self.source[i] = "capture (checks the template)"
            else:
                g.why_not = (
                    f"the template disagrees with workload {self.items[i][0].uuid}'s capture"
                )
                g.template, g.pair = None, []

    def from_template(self, i: int, route, path: str, archs, fp32_math, cache_aware):
        """Workload i (whose reference took `route`; its problem file `path`) analysed from
        its group's checked template at its sizes (a ProgramResult without validation), or
        None: capture it."""
        from .frontend.builder import LoweredProgram
        from .frontend.validation import Validation
        from .pytorch import ProgramResult, analyse_lowered

        g = self.group_of.get(i)
        if g is None or g.template is None or g.checked is None:
            return None
        text, why = g.template.text_at(self.items[i][1])
        if route != g.route:
            text, why = None, "the reference takes another path at these sizes"
        if text is None:
            self.source[i] = f"capture ({why})"
            return None
        base = self.results[g.pair[0]][0]
        lowered = LoweredProgram(text=text, source=path, ops=base.ops, notes=base.notes)
        program, graph, specs, analyses = analyse_lowered(
            lowered, archs, fp32_math, cache_aware, None, lambda stage: None
        )
        self.source[i] = "template"
        return ProgramResult(
            path,
            text,
            program,
            graph,
            analyses,
            specs,
            Validation("none", "validation skipped (--no-validate)"),
            base.ops,
            list(base.notes),
        )

    def summary(self) -> str:
        """One line: captures performed, and each template's seeds or why there was none."""
        n = len(self.items)
        captures = sum(1 for s in self.source if s.startswith("capture"))
        used = [g for g in self.groups if g.template is not None and g.checked is not None]
        line = f"captures: {captures} of {n} workloads"
        if not used:
            why = self.why_not or "; ".join(
                g.why_not or "no workload could check its template" for g in self.groups
            )
            return f"{line} (no size template: {why or 'no group of four workloads'})"
        parts = []
        for g in used:
            uuid = [self.items[k][0].uuid[:8] for k in (*g.pair, g.checked)]
            parts.append(f"{uuid[0]} and {uuid[1]}, checked against {uuid[2]}")
        unused = [g.why_not for g in self.groups if g not in used and g.why_not]
        return (
            f"{line}; {n - captures} took a size template (fitted from "
            + "; ".join(parts)
            + "; docs/definitions.md)"
            + "".join(f"; another group has none: {why}" for why in unused)
        )
