"""Design-space exploration on top of the core: inverse roofline, sweeps and chain reordering
(docs/sol-modes.md). Every number comes from the C++ core; this module loads programs (IR or
PyTorch), builds sweep configurations and turns the core's results into plain data."""

from __future__ import annotations

import itertools
import os
import time

from . import _core
from .api import dim_overrides, list_archs, load_arch
from .errors import argument_error
from .session import analyze_graph

# --- loading ---------------------------------------------------------------------------


def resolve_archs(names) -> list:
    """Arch specs from names, paths, 'all', comma lists ('A,B') or ArchSpec objects."""
    if names is None:
        names = ["H100_PCIe"]
    if isinstance(names, (str, _core.ArchSpec)):
        names = [names]
    flat = []
    for n in names:
        if isinstance(n, _core.ArchSpec):
            flat.append(n)
            continue
        parts = [str(n)] if os.path.exists(str(n)) else str(n).split(",")  # a path may hold ","
        for part in parts:
            part = part.strip()
            if not part:
                raise argument_error(f"--arch {n!r}: empty architecture name in the list")
            if part == "all":
                flat.extend(list_archs())
            else:
                flat.append(part)
    return [a if isinstance(a, _core.ArchSpec) else load_arch(a) for a in flat]


def is_pytorch(source) -> bool:
    if not isinstance(source, (str, os.PathLike)):
        return False
    from .frontend.capture import is_pytorch_program

    return os.path.exists(source) and is_pytorch_program(str(source))


def is_jax(source) -> bool:
    if not isinstance(source, (str, os.PathLike)):
        return False
    from .frontend.jax.capture import is_jax_program

    return os.path.exists(source) and is_jax_program(str(source))


def load_graph(source, dims=None):
    """(graph, note) of an IR file, or of a PyTorch or JAX problem file (captured and
    lowered, not validated: the note says so)."""
    if is_pytorch(source) or is_jax(source):
        from .frontend.validation import load_lowered

        # --dim on a PyTorch or JAX program overrides its module-level size constants (as
        # in solar analyze).
        overrides = dict(dim_overrides(dims)) or None
        if is_jax(source):
            from .jax import lower_jax

            _, lowered = lower_jax(str(source), overrides=overrides)
            language = "JAX"
        else:
            from .pytorch import lower_pytorch

            _, lowered = lower_pytorch(str(source), overrides=overrides)
            language = "PyTorch"
        program = load_lowered(lowered)
        note = f"{language} program captured and lowered; not validated (run solar analyze)"
        return _core.trace(program, []), note
    program = source if isinstance(source, _core.Program) else _core.load_program(str(source))
    return _core.trace(program, dim_overrides(dims)), ""


# --- inverse roofline ------------------------------------------------------------------


def parse_target(latency: str | None = None, rate: str | None = None):
    """The target of `--latency` or `--rate` (exactly one)."""
    if (latency is None) == (rate is None):
        raise argument_error("give exactly one target: --latency (e.g. 2ms) or --rate (e.g. 500Hz)")
    return _core.parse_latency(latency) if latency is not None else _core.parse_rate(rate)


def inverse(source, latency=None, rate=None, arch="H100_PCIe", fp32_math="default", dims=None):
    """Inverse roofline of an IR or PyTorch program on one or more archs:
    (graph, [(arch spec, Analysis, Inverse)], note)."""
    target = parse_target(latency, rate)
    graph, note = (source, "") if isinstance(source, _core.Graph) else load_graph(source, dims)
    out = []
    for spec in resolve_archs(arch):
        analysis = analyze_graph(graph, spec, fp32_math)
        out.append((spec, analysis, _core.inverse_roofline(analysis, target)))
    return graph, out, note


def quantization_dict(q) -> dict | None:
    """What a --quantize / --kv-cache analysis assumed (Analysis.quantization) as plain data,
    or None without one: the formats and the bytes before and after (the per-node list is the
    analysis JSON's)."""
    if q is None:
        return None
    return {
        "recipe": q.recipe or None,
        "weights": q.weights or None,
        "activations": q.activations or None,
        "quantised_nodes": len(q.changes),
        "weight_bytes_before": q.weight_bytes_before,
        "weight_bytes_after": q.weight_bytes_after,
        "kv_cache": q.kv_cache or None,
        "kv_inputs": list(q.kv_inputs),
        "kv_bytes_before": q.kv_bytes_before,
        "kv_bytes_after": q.kv_bytes_after,
    }


def inverse_dict(inv) -> dict:
    """One arch's inverse roofline as plain data (schema solar.inverse/1, docs/json-schema.md)."""
    return {
        "arch": inv.arch,
        "target": {
            "text": inv.target.text,
            "seconds": inv.target.seconds,
            "hertz": inv.target.hertz,
        },
        "math_mode": inv.math_mode,
        "peaks": {
            "matrix_flops_per_second": inv.matrix_flops_per_second,
            "vector_flops_per_second": inv.vector_flops_per_second,
            "dram_bytes_per_second": inv.dram_bytes_per_second,
        },
        "modes": [
            {
                "mode": m.mode,
                "flops": m.flops,
                "matrix_flops": m.matrix_flops,
                "vector_flops": m.vector_flops,
                "bytes": m.bytes,
                "seconds": m.seconds,
                "bottleneck": m.bottleneck.kind,
                "attainable_hertz": m.attainable_hertz if m.seconds > 0 else None,
                "speedup_required": m.speedup_required,
                "met": m.met,
                "flops_per_second_min": m.flops_per_second_min,
                "matrix_flops_per_second_min": m.matrix_flops_per_second_min,
                "vector_flops_per_second_min": m.vector_flops_per_second_min,
                "bytes_per_second_min": m.bytes_per_second_min,
                "improvement": {
                    "compute": m.compute_improvement,
                    "matrix": m.matrix_improvement,
                    "vector": m.vector_improvement,
                    "dram": m.dram_improvement,
                },
            }
            for m in inv.modes
        ],
    }


# --- sweeps ----------------------------------------------------------------------------

_MAX_VALUES = 100_000
_VALUE_FORMS = "V1,V2,... (a list), A:B:xK (geometric) or A:B:+K (arithmetic)"


def parse_values(name: str, spec: str) -> list[int]:
    """'1,2,4' | '512:8192:x2' | '0:64:+16' -> sizes (positive integers)."""

    def bad(why: str):
        return argument_error(
            f"--dim {name}={spec}: {why}; expected {_VALUE_FORMS}",
            f"for example --dim {name}=1,2,4 or --dim {name}=512:8192:x2",
        )

    def integer(text: str) -> int:
        text = text.strip()
        if not text.lstrip("-").isdigit():
            raise bad(f"'{text}' is not an integer")
        return int(text)

    spec = spec.strip()
    if not spec:
        raise bad("no values")
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) != 3 or parts[2][:1] not in ("x", "+"):
            raise bad("a range is A:B:xK or A:B:+K")
        start, stop, step = integer(parts[0]), integer(parts[1]), integer(parts[2][1:])
        if start <= 0 or stop < start:
            raise bad("a range needs 0 < A <= B")
        geometric = parts[2][0] == "x"
        if (geometric and step < 2) or (not geometric and step < 1):
            raise bad("the step must be at least x2 or +1")
        values, v = [], start
        while v <= stop:
            values.append(v)
            if len(values) > _MAX_VALUES:
                raise bad(f"more than {_MAX_VALUES:,} values")
            v = v * step if geometric else v + step
        return values
    values = [integer(v) for v in spec.split(",")]
    if any(v <= 0 for v in values):
        raise bad("sizes must be positive")
    return values


def parse_axis(item: str) -> tuple[str, list[int]]:
    """'B=1,2,4' -> ('B', [1, 2, 4])."""
    name, sep, spec = item.partition("=")
    if not sep or not name.strip():
        raise argument_error(
            f"--dim {item}: expected NAME=VALUES with VALUES {_VALUE_FORMS}",
            "for example --dim B=1,2,4",
        )
    return name.strip(), parse_values(name.strip(), spec)


def _axes(axes) -> list[tuple[str, list[int]]]:
    items = axes.items() if isinstance(axes, dict) else axes
    out = []
    for name, values in items:
        if isinstance(values, str):
            values = parse_values(name, values)
        values = [v for _, v in dim_overrides([(name, v) for v in values])]
        if any(name == n for n, _ in out):
            raise argument_error(f"--dim {name} is given twice")
        if not values:
            raise argument_error(f"--dim {name}: no values")
        out.append((name, values))
    if not out:
        raise argument_error("a sweep needs at least one --dim NAME=VALUES axis")
    return out


def configurations(axes, grid: bool = False) -> list[tuple[str | None, list[tuple[str, int]]]]:
    """(axis, overrides) per configuration: each axis alone with the other dims at their
    defaults (axis = its name), or with `grid` the Cartesian product (axis = None)."""
    axes = _axes(axes)
    if grid:
        names = [n for n, _ in axes]
        return [
            (None, list(zip(names, combo, strict=True)))
            for combo in itertools.product(*(v for _, v in axes))
        ]
    return [(name, [(name, v)]) for name, values in axes for v in values]


def _point(dims: dict, axis, p) -> dict:
    return {
        "dims": dims,
        "axis": axis,
        "arch": p.arch,
        "flops": p.flops,
        "bytes": {"unfused": p.unfused_bytes, "fused": p.fused_bytes},
        "seconds": {"unfused": p.unfused_seconds, "fused": p.fused_seconds},
        "bottleneck": {"unfused": p.unfused_bottleneck.kind, "fused": p.fused_bottleneck.kind},
    }


def sweep(
    program, axes, arch="H100_PCIe", grid: bool = False, fp32_math: str = "default", progress=None
):
    """SOL of `program` (an IR file, a checked Program, or a PyTorch problem file) at each
    configuration of `axes` ({name: [sizes] or 'A:B:xK'}), on each arch. Returns one dict per
    (configuration, arch): {dims, axis, arch, flops, bytes: {unfused, fused},
    seconds: {unfused, fused}, bottleneck: {unfused, fused}}; `axis` is the dim varied
    (None in a grid). IR programs are checked once and traced per configuration by the core
    (solar::sweep); PyTorch programs are captured again per configuration with their
    module-level size constants overridden; `progress(done, total, dims, seconds)`, when
    given, is called as each of their configurations is analysed."""
    configs = configurations(axes, grid)
    archs = resolve_archs(arch)
    if is_pytorch(program) or is_jax(program):
        return _sweep_pytorch(str(program), configs, archs, fp32_math, progress)
    if not isinstance(program, _core.Program):
        program = _core.load_program(str(program))
    from .accuracy import unpack

    points = _core.sweep(program, [c for _, c in configs], archs, *unpack(fp32_math))
    out = []
    for i, p in enumerate(points):
        out.append(_point(dict(p.dims), configs[i // len(archs)][0], p))
    return out


def _sweep_pytorch(path: str, configs, archs, fp32_math, progress=None):
    """A PyTorch or JAX problem file, captured again per configuration."""
    from .frontend.capture import program_text
    from .frontend.problem import int_constants
    from .frontend.validation import load_lowered

    if is_jax(path):
        from .jax import lower_jax as lower_source
    else:
        from .pytorch import lower_pytorch as lower_source

    constants = int_constants(program_text(path))
    names = []
    for _, config in configs:
        for name, _ in config:
            if name not in constants:
                known = ", ".join(sorted(constants)) or "none"
                raise argument_error(
                    f"--dim {name}: {path} has no module-level integer constant '{name}'",
                    f"its size constants: {known}",
                )
            if name not in names:
                names.append(name)
    out = []
    for i, (axis, config) in enumerate(configs):
        start = time.perf_counter()
        overrides = dict(config)
        program = load_lowered(lower_source(path, overrides=overrides)[1])
        graph = _core.trace(program, [])
        dims = {n: overrides.get(n, constants[n]) for n in names}
        for spec in archs:
            a = analyze_graph(graph, spec, fp32_math, False)  # a sweep reports no cache-aware
            out.append(_point(dims, axis, _SweepPoint(spec.name, a)))
        if progress is not None:
            progress(i + 1, len(configs), dict(config), time.perf_counter() - start)
    return out


class _SweepPoint:
    """A core SweepPoint's fields, from an Analysis (the PyTorch path)."""

    def __init__(self, arch: str, a):
        self.arch = arch
        self.flops = a.fused.flops
        self.unfused_bytes, self.fused_bytes = a.unfused.bytes, a.fused.bytes
        self.unfused_seconds, self.fused_seconds = a.unfused.seconds, a.fused.seconds
        self.unfused_bottleneck, self.fused_bottleneck = a.unfused.bottleneck, a.fused.bottleneck


def regime_changes(points: list[dict]) -> list[dict]:
    """Consecutive points of one axis (same arch, same other dims) whose bottleneck differs:
    {axis, arch, mode, before: {dim, value, bottleneck}, after: {...}}."""
    changes = []
    axes = []
    for p in points:
        names = [p["axis"]] if p["axis"] else list(p["dims"])
        axes += [n for n in names if n not in axes]
    for axis in axes:
        groups: dict = {}
        for p in points:
            if p["axis"] not in (None, axis) or axis not in p["dims"]:
                continue
            others = tuple((k, v) for k, v in p["dims"].items() if k != axis)
            groups.setdefault((p["arch"], others), []).append(p)
        for (arch, _), group in groups.items():
            group = sorted(group, key=lambda q: q["dims"][axis])
            for mode in ("fused", "unfused"):
                for a, b in itertools.pairwise(group):
                    if a["bottleneck"][mode] != b["bottleneck"][mode]:
                        changes.append(
                            {
                                "axis": axis,
                                "arch": arch,
                                "mode": mode,
                                "before": {
                                    "value": a["dims"][axis],
                                    "bottleneck": a["bottleneck"][mode],
                                },
                                "after": {
                                    "value": b["dims"][axis],
                                    "bottleneck": b["bottleneck"][mode],
                                },
                                "others": {k: v for k, v in a["dims"].items() if k != axis},
                            }
                        )
    return changes


# --- chain reordering ------------------------------------------------------------------


def chains(source, dims=None):
    """(graph, [Chain], note): the multi-operand products and contraction chains of an IR or
    PyTorch program, every association order costed by the core."""
    graph, note = (source, "") if isinstance(source, _core.Graph) else load_graph(source, dims)
    return graph, _core.find_chains(graph), note


def chain_dict(c) -> dict:
    """One chain as plain data (schema solar.chains/1, docs/json-schema.md)."""

    def order(o) -> dict:
        return {
            "expression": o.expression,
            "macs": o.macs,
            "flops": o.flops,
            "bytes": o.bytes,
            "intermediate_bytes": o.intermediate_bytes,
        }

    lr, best, worst = c.orders[c.left_to_right], c.orders[c.best], c.orders[c.worst]
    out = {
        "kind": c.kind,
        "nodes": list(c.nodes),
        "einsum": c.einsum,
        "operands": [
            {"name": t.name, "ranks": list(t.ranks), "dtype": t.dtype} for t in c.operands
        ],
        "output": {"ranks": list(c.output.ranks), "dtype": c.output.dtype},
        "rank_sizes": dict(c.rank_sizes),
        "orders": [order(o) for o in c.orders],
        "left_to_right": c.left_to_right,
        "best": c.best,
        "worst": c.worst,
        "as_written": c.as_written if c.as_written >= 0 else None,
        "best_vs_left_to_right": lr.flops / best.flops if best.flops else 1.0,
        "range": worst.flops / best.flops if best.flops else 1.0,
    }
    if c.kind == "nest":
        out["direct"] = {
            "expression": c.direct.expression,
            "macs": c.direct.macs,
            "flops": c.direct.flops,
            "bytes": c.direct.bytes,
        }
    return out
