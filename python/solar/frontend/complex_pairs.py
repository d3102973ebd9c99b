"""Complex tensors as pairs of reals: the rotary embedding many reference implementations
write in complex form (Meta's Llama, DeepSeek-V2, Mistral's reference code:
`view_as_complex(x.reshape(..., -1, 2)) * polar(1, angles)`, then `view_as_real`) has no IR
dtype to lower to. Before the lowering, this pass rewrites such a graph over real tensors:
a complex tensor of shape S becomes its `view_as_real` form, a real tensor of shape S + [2]
(real and imaginary parts last), and each complex operator the operators on that form that
compute the same values (docs/pytorch.md, "Complex tensors").

The rewritten operators are `polar`, `view_as_complex` and `view_as_real` (the pair form is
their layout, so the views cost nothing), products and sums of complex tensors (a complex
product is four real products and two sums per element, as a kernel computes it), products
with real tensors and scalars and quotients by them, magnitudes (`abs`), a real tensor made
complex, torch.fft's transforms (`_fft_r2c`, `_fft_c2c`, `_fft_c2r`: one `fft` builtin per
transformed dim, frontend/fft.py), and the views and copies in between. A complex input,
buffer or constant is given in its pair form. An operator with no pair form that makes or reads a
complex tensor, or a complex program output, is left, and the lowering names it."""

from __future__ import annotations

from .fft import FFT_OPS


def pair_complex(graph):
    """Rewrites the complex operators of the exported `graph` in place (the module doc).
    Returns (how many it rewrote, the first node that still makes or reads a complex value:
    an operator without a pair form, or the output node when the program returns a complex
    tensor; None when there is none)."""
    import torch
    from torch._guards import detect_fake_mode

    if not any(_is_complex(n) for n in graph.nodes):
        return 0, None
    vals = [n.meta.get("val") for n in graph.nodes]
    fake = detect_fake_mode(tuple(v for v in vals if isinstance(v, torch.Tensor)))
    if fake is None:  # not an export's graph (its values are fake tensors): left whole
        return 0, next(n for n in graph.nodes if _is_complex(n))
    pairs = _Pairs(graph, fake)
    # A complex input, buffer or constant (Meta Llama's precomputed freqs_cis) is given in
    # its pair form (fullrun.py feeds view_as_real of the value).
    inputs = [n for n in graph.nodes if n.op == "placeholder" and _is_complex(n)]
    for node in inputs:
        with fake:
            node.meta["val"] = torch.view_as_real(node.meta["val"])
        pairs.rep[node] = node
    rewritten = [n for n in list(graph.nodes) if pairs.rewrite(n)]
    for node in reversed(rewritten):  # users before what they read
        if not node.users:
            graph.erase_node(node)
    done = set(rewritten)
    left = next(
        (
            n
            for n in graph.nodes
            if n not in done and (_is_complex(n) or any(map(_is_complex, n.all_input_nodes)))
        ),
        None,
    )
    return len(rewritten) + len(inputs), left


def _is_complex(n) -> bool:
    import torch

    val = getattr(n, "meta", {}).get("val")
    return isinstance(val, torch.Tensor) and val.is_complex()


class _Pairs:
    def __init__(self, graph, fake):
        self.graph = graph
        self.fake = fake
        self.rep = {}  # complex node -> its real [..., 2] form

    def op(self, at, target, *args):
        """A new node target(*args) before `at`, with its fake value and `at`'s source."""
        import torch

        with self.graph.inserting_before(at):
            new = self.graph.call_function(target, args)
        for key in ("stack_trace", "nn_module_stack", "from_node"):  # its source operator
            if key in at.meta:
                new.meta[key] = at.meta[key]
        with self.fake:
            new.meta["val"] = target(*torch.fx.node.map_arg(args, lambda a: a.meta["val"]))
        return new

    def rewrite(self, node) -> bool:
        """Rewrites one node over pair forms; False where it is not complex or not handled."""
        import torch

        aten = torch.ops.aten
        t = node.target
        real_out = t in (aten.view_as_real.default, aten._fft_c2r.default, aten.abs.default)
        if node.op != "call_function" or not (_is_complex(node) or real_out):
            return False
        if any(_is_complex(i) and i not in self.rep for i in node.all_input_nodes):
            return False  # reads a complex value this pass did not make (an input)
        out = self._pair_form(node)
        if out is None:
            return False
        if real_out:  # kept (it may be named as an output): a view of its real result
            node.target, node.args = aten.view.default, (out, list(node.meta["val"].shape))
        else:
            self.rep[node] = out
        return True

    def _fft(self, node):
        """torch.fft's core operators as one-dim steps over pair forms (frontend/fft.py)."""
        import torch

        from .fft import fft_steps, register

        register()
        x = node.args[0]
        real = x.target is torch.ops.aten._to_copy.default and not _is_complex(x.args[0])
        if real:  # a real tensor made complex: transformed as real data
            x = x.args[0]
        out = self.rep.get(x, x)  # a real input of r2c is itself
        shape_in, shape_out = x.meta["val"].shape, node.meta["val"].shape
        steps = fft_steps(str(node.target), node.args[1:], shape_in, shape_out, real)
        for name, dim, arg, scale in steps:
            out = self.op(node, getattr(torch.ops.solar, name).default, out, dim, arg, scale)
        return out

    def _pair_form(self, node):
        import torch

        aten = torch.ops.aten
        rep, a, t = self.rep, node.args, node.target

        def op(target, *args):
            return self.op(node, target, *args)

        def dim(d):  # a dim of the complex shape, in the pair form
            return d - 1 if d < 0 else d

        def pair(re, im):  # the pair form of re + i im
            last = [op(aten.unsqueeze.default, re, -1), op(aten.unsqueeze.default, im, -1)]
            return op(aten.cat.default, last, -1)

        def paired(x) -> bool:
            return isinstance(x, torch.fx.Node) and x in rep

        if t is aten.view_as_real.default:
            return rep.get(a[0])
        if t is aten.view_as_complex.default:
            return a[0]
        if t is aten.polar.default:  # abs * (cos, sin) of the angle
            re = op(aten.mul.Tensor, a[0], op(aten.cos.default, a[1]))
            im = op(aten.mul.Tensor, a[0], op(aten.sin.default, a[1]))
            return pair(re, im)
        if t is aten.abs.default:  # |re + i im| = sqrt(re^2 + im^2), a real result
            if not paired(a[0]):
                return None
            squares = op(aten.mul.Tensor, rep[a[0]], rep[a[0]])
            return op(aten.sqrt.default, op(aten.sum.dim_IntList, squares, [-1]))
        if str(t) in FFT_OPS and not node.kwargs:
            return self._fft(node)
        if t is aten._to_copy.default and not paired(a[0]) and set(node.kwargs) <= {"dtype"}:
            return pair(a[0], op(aten.zeros_like.default, a[0]))  # a real tensor made complex
        if node.kwargs:
            return None
        if t in (aten.view.default, aten._unsafe_view.default, aten.reshape.default):
            return op(aten.view.default, rep[a[0]], [*a[1], 2])
        if t is aten.expand.default:
            return op(aten.expand.default, rep[a[0]], [*a[1], 2])
        if t is aten.unsqueeze.default:
            return op(aten.unsqueeze.default, rep[a[0]], dim(a[1]))
        if t is aten.permute.default:
            rank = node.meta["val"].dim()
            return op(aten.permute.default, rep[a[0]], [d % rank for d in a[1]] + [rank])
        if t is aten.slice.Tensor and len(a) >= 2:
            return op(aten.slice.Tensor, rep[a[0]], dim(a[1]), *a[2:])
        if t is aten.select.int:
            return op(aten.select.int, rep[a[0]], dim(a[1]), a[2])
        if t is aten.clone.default:
            return op(aten.clone.default, rep[a[0]])
        if t in (aten.add.Tensor, aten.sub.Tensor) and len(a) == 2:
            return op(t, rep[a[0]], rep[a[1]]) if all(paired(x) for x in a) else None
        if t is aten.div.Tensor and len(a) == 2 and paired(a[0]) and not paired(a[1]):
            r = a[1]  # a complex tensor divided by a real one or a number
            divisor = op(aten.unsqueeze.default, r, -1) if isinstance(r, torch.fx.Node) else r
            return op(aten.div.Tensor, rep[a[0]], divisor)
        if t is not aten.mul.Tensor or len(a) != 2:
            return None
        x, y = a
        if paired(x) and paired(y):  # (xr + i xi)(yr + i yi)
            xr, xi = op(aten.select.int, rep[x], -1, 0), op(aten.select.int, rep[x], -1, 1)
            yr, yi = op(aten.select.int, rep[y], -1, 0), op(aten.select.int, rep[y], -1, 1)
            re = op(aten.sub.Tensor, op(aten.mul.Tensor, xr, yr), op(aten.mul.Tensor, xi, yi))
            im = op(aten.add.Tensor, op(aten.mul.Tensor, xr, yi), op(aten.mul.Tensor, xi, yr))
            return pair(re, im)
        z, r = (x, y) if paired(x) else (y, x)  # a complex tensor times a real one
        if isinstance(r, torch.fx.Node) and not _is_complex(r):
            return op(aten.mul.Tensor, rep[z], op(aten.unsqueeze.default, r, -1))
        if isinstance(r, (int, float)):
            return op(aten.mul.Tensor, rep[z], r)
        return None
