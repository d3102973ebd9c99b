"""Deterministic lowering: an exported core-ATen graph -> an Affine Loop IR program.

Every ATen operator maps to a kernel of the standard library (`stdlib/*.py`, IR files parsed
by the core like any program) or to a builtin. Rules are registered per operator in
`rules.py`. The result is a readable IR file: kernels first, then DIMS, then model() with one
statement per operator, each commented with the source line that produced it.
"""

from __future__ import annotations

import operator
import re
from pathlib import Path

from .builder import Builder, LoweredProgram, Value, frontend_error
from .capture import Capture
from .complex_pairs import pair_complex
from .masks import attention_bands
from .problem import constant_dim_names
from .rules import RANDOM_OPS, RULES, source_operator
from .specialise import SELECTED_PREFIX
from .values import _Unused, tensor

# Rules that only pick an element of a tuple: they pass an unproduced result on to its user.
_PASS_THROUGH = {str(operator.getitem)}


def _check_produced(lw, args) -> None:
    """Fails with the user error of `tensor` when an argument (or an element of a list
    argument) is a result the lowering does not produce, such as max_pool2d's indices read by
    max_unpool2d's decomposition, before a rule takes it for a number."""
    for a in args:
        for v in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(v, _Unused):
                tensor(lw, v)


__all__ = ["LoweredProgram", "Lowerer", "Value", "ir_dtype", "lower"]

TORCH_DTYPES = {
    "torch.float32": "fp32",
    "torch.float64": "fp64",
    "torch.bfloat16": "bf16",
    "torch.float16": "fp16",
    "torch.float8_e4m3fn": "fp8_e4m3",
    "torch.float8_e5m2": "fp8_e5m2",
    "torch.int64": "int64",
    "torch.int32": "int32",
    "torch.int16": "int16",
    "torch.int8": "int8",
    "torch.uint8": "uint8",
    "torch.bool": "bool",
    # Two E2M1 codes per byte: the IR holds the bytes (uint8, the same shape and storage),
    # and a consumer that reads the codes bitcasts them to nvfp4 (`torch._scaled_mm`,
    # narrow.py), one code per element.
    "torch.float4_e2m1fn_x2": "uint8",
}


# The fp32 math mode of a PyTorch operator's contractions on a CUDA device: matmul-like
# operators follow torch.get_float32_matmul_precision() ("highest", the default: true fp32;
# "high": TF32 may be used; "medium": bf16 may be used); convolutions and cuDNN RNNs follow
# torch.backends.cudnn.allow_tf32 (True by default). Other operators with MACs keep the
# platform default (TF32 where the spec has it: the faster mode, so the bound stays a bound).
MATMUL_OPS = {
    "aten.mm",
    "aten.bmm",
    "aten.addmm",
    "aten.addbmm",
    "aten.baddbmm",
    "aten.matmul",
    "aten.linear",
    "aten.einsum",
    "aten.mv",
    "aten.addmv",
    "aten.dot",
    "aten.vdot",
    "aten.inner",
    "aten.outer",
    "aten.tensordot",
    "aten.bilinear",
    "aten.scaled_dot_product_attention",
    "aten._scaled_dot_product_attention_math",
    "aten.chain_matmul",
    "aten.linalg_multi_dot",
}
CUDNN_OPS = {
    "aten.convolution",
    "aten._convolution",
    "aten.conv1d",
    "aten.conv2d",
    "aten.conv3d",
    "aten.conv_transpose1d",
    "aten.conv_transpose2d",
    "aten.conv_transpose3d",
    "aten.conv_tbc",
    "solar.lstm",
    "solar.gru",
    "solar.rnn",
}


def pytorch_fp32_math() -> dict[str, str]:
    """{"matmul": "fp32"|"tf32"|"bf16", "cudnn": "fp32"|"tf32"} from PyTorch's current
    settings."""
    import torch

    precision = torch.get_float32_matmul_precision()
    matmul = {"highest": "fp32", "high": "tf32"}.get(precision, "bf16")
    cudnn = "tf32" if torch.backends.cudnn.allow_tf32 else "fp32"
    return {"matmul": matmul, "cudnn": cudnn}


def ir_dtype(torch_dtype, where: str = "", source: str = "") -> str:
    name = str(torch_dtype)
    if name not in TORCH_DTYPES:
        raise frontend_error("lower", f"dtype {name} has no IR equivalent{where}", file=source)
    return TORCH_DTYPES[name]


class Lowerer(Builder):
    """Lowers an exported core-ATen graph: one rule (rules.py) per FX node."""

    def __init__(self, capture: Capture):
        super().__init__(capture.source)
        self.capture = capture
        self.ep = capture.exported
        self.values: dict[str, object] = {}  # FX node name -> Value | tuple | python scalar
        self.ops: dict[str, int] = {}
        self.sequence: list[str] = []
        self.needed: set = set()  # FX nodes the outputs and buffer updates depend on
        self.notes += capture.notes

    def _buffer_value(self, sig):
        """placeholder name -> the real value of the buffer it is, read from a real model
        built once on first use (_real_buffers); None for inputs and unknown buffers."""
        from torch.export.graph_signature import InputKind

        targets = {
            s.arg.name: s.target
            for s in sig.input_specs
            if s.kind in (InputKind.BUFFER, InputKind.CONSTANT_TENSOR) and s.target
        }
        real: dict = {}

        def value(name: str):
            if name not in targets:
                return None
            if "buffers" not in real:
                real["buffers"] = _real_buffers(self.capture)
            return real["buffers"].get(targets[name])

        return value

    # ---------------------------------------------------------------- language hooks
    def _find_where(self) -> tuple[str, int, str]:
        trace = (self.node.meta.get("stack_trace") or "") if self.node is not None else ""
        file, line, code = self.source, 0, ""
        frames = re.findall(r'File "([^"]+)", line (\d+), in [^\n]*\n\s*([^\n]*)', trace)
        for f, ln, c in frames:
            if self.source and Path(f).resolve() == Path(self.source).resolve():
                file, line, code = f, int(ln), c.strip()
        return file, line, code

    def _close_unit(self, group: dict, fp32_math: dict, modes: dict) -> None:
        """The unit of one source operator (Builder.close_unit), with PyTorch's fp32 math
        mode for its contractions."""
        # A sum of a product lowered as a contraction (rules.py, _summed_product) is priced
        # as a matmul.
        contraction = self.__dict__.pop("unit_contraction", False)
        if group["key"] is None:
            return
        label = group["label"]
        mode = ""
        if not group.get("fp32"):
            pass  # no fp32 value in the unit (a bf16 or fp16 program): no fp32 math to name
        elif label in MATMUL_OPS or contraction:
            mode = fp32_math["matmul"]
        elif label in CUDNN_OPS:
            mode = fp32_math["cudnn"]
        if mode:
            modes[label.removeprefix("aten.")] = mode
        self.close_unit(group["start"], label, mode)

    def library_frame(self) -> str:
        """`path:line: code` of the innermost frame of the current node's stack outside the
        user's file and outside torch (the model library's line that called the operator:
        transformers' modeling_mixtral.py calling torch.topk), or ""."""
        trace = (self.node.meta.get("stack_trace") or "") if self.node is not None else ""
        frames = re.findall(r'File "([^"]+)", line (\d+), in [^\n]*\n\s*([^\n]*)', trace)
        for f, ln, c in reversed(frames):
            parts = Path(f).parts
            if self.source and Path(f).resolve() == Path(self.source).resolve():
                return ""  # the user's own line is the operator's caller
            if "torch" in parts or "solar" in parts:
                continue
            short = (
                "/".join(parts[parts.index("site-packages") + 1 :])
                if "site-packages" in parts
                else f
            )
            return f"{short}:{ln}: {c.strip()}"
        return ""

    def size_names(self) -> dict[int, str]:
        """Names for the model's dims from the source: a problem file's module-level size
        constant whose value no other constant has (`N = 4096` names the dim of 4,096); for a
        module, the sizes of its Hugging Face config and its token ids (capture.py,
        module_dim_names: `hidden`, `heads`, `seq`, ...); other sizes are named after their
        value (`d64`)."""
        problem = getattr(self.capture, "problem", None)
        if problem is None:
            return dict(getattr(self.capture, "dim_names", {}) or {})
        return constant_dim_names(problem.path)

    def generated_input(self, shape, dtype: str) -> Value:
        """A model() parameter of role "generated" for the next random tensor forward() draws
        (torch.randn and friends): values made on chip where they are used, so no DRAM
        traffic (docs/ir.md §3). Validation feeds it the values PyTorch drew (params kind
        "random", target: the draw's number; frontend/fullrun.py, random_tape)."""
        draws = [n.name for n in self.node.graph.nodes if str(n.target) in RANDOM_OPS]
        k = draws.index(self.node.name)  # drawn in graph order, used or not
        self.notes.append(
            "random numbers drawn in forward() are inputs of role generated: made on chip, no "
            "DRAM traffic; validation feeds the values PyTorch drew"
        )
        return self.parameter(f"random_{k}", shape, dtype, "generated", "random", k)

    def arg(self, a):
        """The lowered value of an FX argument (a node, a list of them, or a constant)."""
        import torch.fx

        if isinstance(a, torch.fx.Node):
            if a.name not in self.values:
                self.fail(f"internal: '{a.name}' used before it was lowered")
            return self.values[a.name]
        if isinstance(a, (list, tuple)):
            return type(a)(self.arg(x) for x in a)
        return a

    def out_meta(self):
        return self.node.meta.get("val")

    def ir_dtype(self, dtype, where: str = "") -> str:
        return ir_dtype(dtype, f" (output of {self.node.target})", self.source)

    # ---------------------------------------------------------------- the walk
    def run(self) -> LoweredProgram:
        from torch.export.graph_signature import InputKind, OutputKind

        sig = self.ep.graph_signature
        graph = self.ep.graph
        rewritten, left = pair_complex(graph)  # complex tensors as pairs of reals
        if rewritten:
            self.ep.graph_module.recompile()
        # An operator without a rule (an FFT) is the walk's below, as any such operator
        # (--llm-fallback says itself that complex values are not IR values).
        if left is not None and (left.op == "output" or str(left.target) in RULES):
            self.node = left
            what = (
                "the program returns a complex tensor"
                if left.op == "output"
                else f"{left.target} makes or reads a complex tensor"
            )
            self.fail(
                f"{what}, and the IR has no complex dtype: complex values are computed as "
                "pairs of reals through polar, view_as_complex, view_as_real, products, sums "
                'and views (docs/pytorch.md, "Complex tensors")'
            )
        # Only what the user's outputs and the buffer updates (batch norm's running
        # statistics: eager PyTorch reads and writes them) depend on is lowered; unused
        # results cost nothing, as in the compiled program.
        # A training step's joint graph returns the loss and the gradients (capture.py).
        returned = (
            OutputKind.USER_OUTPUT,
            OutputKind.LOSS_OUTPUT,
            OutputKind.GRADIENT_TO_PARAMETER,
            OutputKind.GRADIENT_TO_USER_INPUT,
        )
        user_outputs = [s.arg.name for s in sig.output_specs if s.kind in returned]
        mutations = [
            (s.arg.name, s.target)
            for s in sig.output_specs
            if s.kind == OutputKind.BUFFER_MUTATION and hasattr(s.arg, "name")
        ]
        # The placeholders whose memory the program updates (a buffer it assigns into, a
        # user input it mutates): an in-place update of them is what eager PyTorch runs.
        mutated_targets = {
            s.target
            for s in sig.output_specs
            if s.kind in (OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION)
        }
        self.mutated = {
            s.arg.name
            for s in sig.input_specs
            if s.target in mutated_targets or s.arg.name in mutated_targets
        }
        self.order = {n: i for i, n in enumerate(graph.nodes)}
        needed = set()
        self.needed = needed
        by_name = {n.name: n for n in graph.nodes}
        stack = list(user_outputs) + [name for name, _ in mutations]
        while stack:
            name = stack.pop()
            if name in needed or name not in by_name:
                continue
            needed.add(name)
            for inp in by_name[name].all_input_nodes:
                stack.append(inp.name)

        self.size_names_ = self.size_names()
        user_index = 0
        for spec in sig.input_specs:
            node = by_name[spec.arg.name]
            val = node.meta.get("val")
            if spec.kind == InputKind.USER_INPUT:
                target, kind = user_index, "input"
                user_index += 1
            else:
                target, kind = spec.target, "weight"
            if not hasattr(val, "shape"):  # a Python scalar input
                if kind == "input" and node.name in needed:
                    self.node = node
                    self.fail("scalar inputs to forward() are not supported yet")
                continue
            if node.name not in needed:
                continue
            dtype = ir_dtype(val.dtype, f" (input '{node.name}')", self.source)
            shape = tuple(int(s) for s in val.shape)
            if 0 in shape:
                # An empty tensor (a key-value cache's initial state, which torch.cat skips):
                # no data, no parameter; a rule that reads it sees numel 0.
                self.values[node.name] = Value("", shape, dtype)
                continue
            name = re.sub(r"\W", "_", node.name)
            role = "input" if kind == "input" else "weight"
            if kind == "weight" and str(target).startswith(SELECTED_PREFIX):
                # What a mask selected, for the values a specialised capture was made for
                # (frontend/specialise.py): a kernel computes the positions from the mask as
                # it reads it, so they cost no DRAM traffic of their own (the bound stays a
                # bound, slightly loose by the mask's bytes where nothing else reads it).
                role = "generated"
            self.values[node.name] = self.parameter(name, shape, dtype, role, kind, target)

        self.bands = attention_bands(graph, self._buffer_value(sig))
        fp32_math = pytorch_fp32_math()
        group: dict = {"key": None, "label": "", "start": 0}
        unit_modes: dict[str, str] = {}
        for node in graph.nodes:
            if node.op != "call_function" or node.name not in needed:
                continue
            key, label = source_operator(node)
            if key != group["key"]:
                self._close_unit(group, fp32_math, unit_modes)
                group = {"key": key, "label": label, "start": len(self.lines)}
            self.node = node
            key = str(node.target)
            self.ops[key] = self.ops.get(key, 0) + 1
            self.sequence.append(key)
            val = node.meta.get("val")
            group["fp32"] = group.get("fp32") or _has_fp32(node)
            if hasattr(val, "shape") and any(type(d) is int and d == 0 for d in val.shape):
                # An empty result (the pass-through half of a partial rotary embedding whose
                # rotary part is the whole head): no data; torch.cat skips it.
                shape = tuple(int(s) for s in val.shape)
                self.values[node.name] = Value("", shape, ir_dtype(val.dtype, "", self.source))
                continue
            rule = RULES.get(key)
            if rule is None and self.capture.fallback is not None:
                # --llm-fallback: an IR kernel from the agent (agent/fallback.py)
                args = [self.arg(a) for a in node.args]
                kwargs = {k: self.arg(v) for k, v in node.kwargs.items()}
                self.values[node.name] = self.capture.fallback.lower(self, node, args, kwargs)
                continue
            if rule is None:
                self.fail(f"operator {key} has no lowering to the IR", _missing_rule_hint(key))
            args = [self.arg(a) for a in node.args]
            kwargs = {k: self.arg(v) for k, v in node.kwargs.items()}
            # A rule marked `ignores_unused` takes unproduced results and never reads them.
            if key not in _PASS_THROUGH and not getattr(rule, "ignores_unused", False):
                _check_produced(self, [*args, *kwargs.values()])
            self.values[node.name] = rule(self, *args, **kwargs)
        self._close_unit(group, fp32_math, unit_modes)
        if unit_modes:
            self.notes.append(
                "fp32 math follows PyTorch's settings on a CUDA device: "
                + "; ".join(f"{op}: {mode}" for op, mode in sorted(unit_modes.items()))
                + " (torch.get_float32_matmul_precision() is "
                f"'{_matmul_precision()}', torch.backends.cudnn.allow_tf32 is "
                f"{_cudnn_tf32()}); --fp32-math overrides"
            )

        self.node = None
        outs = []
        for name in user_outputs:
            v = self.values.get(name)
            if not isinstance(v, Value):
                raise frontend_error("lower", f"output '{name}' is not a tensor", file=self.source)
            outs.append(v.var)
        for name, _ in mutations:
            v = self.values.get(name)
            if not isinstance(v, Value):
                raise frontend_error(
                    "lower", f"buffer update '{name}' is not a tensor", file=self.source
                )
            outs.append(v.var)
        if outs and not any(outs):
            raise frontend_error(
                "capture",
                "every tensor forward() returns is empty (a dim of 0): nothing to analyse",
                "give the program sizes at which its outputs hold data",
                self.source,
            )
        outs = [o for o in outs if o]  # an empty output ("": a dim of 0) has no data
        if not outs:
            raise frontend_error(
                "capture",
                "forward() returns no tensor; Solar analyses programs whose outputs are tensors",
                "return the tensors the program computes (non-tensor outputs are dropped)",
                self.source,
            )
        header = [
            f"# Generated by Solar from {self.source or 'an in-memory module'} "
            "(torch.export, core ATen); do not edit.",
            "# Each statement is one ATen operator; its comment gives the source line.",
        ]
        text = self.program_text(header, outs)
        return LoweredProgram(
            text,
            self.source,
            self.params,
            self.ops,
            list(dict.fromkeys(self.notes)),  # each note once per program
            self.sequence,
            [target for _, target in mutations],
        )


# The largest model built for real to read a buffer a mask is made from (its parameters,
# buffers and tensor attributes): 256 MiB. A larger one keeps its masks unknown (dense).
MAX_REAL_MODEL_BYTES = 1 << 28


def _real_buffers(capture) -> dict:
    """The real buffers of the captured model by qualified name ({} when it is not at hand
    for real: a fake or meta module, or a problem file whose model exceeds
    MAX_REAL_MODEL_BYTES)."""
    import torch

    from .capture import build_problem, is_fake

    module = capture.module
    if module is None and capture.problem is not None:
        if capture.model_bytes > MAX_REAL_MODEL_BYTES:
            return {}
        try:
            with torch.no_grad():
                module, _ = build_problem(capture.problem, capture.mode)
        except Exception:  # noqa: BLE001 - its masks stay unknown; validation reports a failing model
            return {}
    if module is None:
        return {}
    return {
        name: b for name, b in module.named_buffers() if not is_fake(b) and b.device.type != "meta"
    }


def _matmul_precision() -> str:
    import torch

    return torch.get_float32_matmul_precision()


def _cudnn_tf32() -> bool:
    import torch

    return bool(torch.backends.cudnn.allow_tf32)


def lower(capture: Capture) -> LoweredProgram:
    return Lowerer(capture).run()


def _missing_rule_hint(key: str) -> str:
    """The hint of an operator without a rule. A fused attention's backward (the kernel
    PyTorch's SDPA differentiates through) has an eager equivalent the rules do lower, so the
    hint names that instead of asking for a rule."""
    if "scaled_dot_product" in key and "backward" in key:
        return (
            "a training step through fused attention (SDPA) is not lowered; use eager "
            'attention: attn_implementation="eager" for a Hugging Face model, or the math '
            "path (softmax(q @ k.transpose(-2, -1) * scale) @ v) in your own module "
            '(docs/pytorch.md, "Training steps")'
        )
    return (
        "docs/pytorch.md lists the supported operators; the IR can express it by "
        "hand (docs/ir.md) — add a rule in python/solar/frontend/rules.py"
    )


def _has_fp32(node) -> bool:
    """Whether an FX node reads or produces an fp32 tensor: a unit without one does no fp32
    math, whatever PyTorch's fp32 settings."""
    import torch

    values = [node.meta.get("val")]
    values += [a.meta.get("val") for a in node.all_input_nodes]
    flat = [v for x in values for v in (x if isinstance(x, (list, tuple)) else [x])]
    return any(getattr(v, "dtype", None) == torch.float32 for v in flat)
