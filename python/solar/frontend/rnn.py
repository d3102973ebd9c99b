"""nn.LSTM / nn.GRU / nn.RNN captured as one operator each, lowered step by step.

torch.export unrolls a recurrent module into one group of ATen operators per time step and
layer (a 512-step bidirectional GRU is ~25,000 operators, minutes of export and
decomposition). Capture instead replaces the forward of each such module (on the meta copy
only; the reference run uses the real module) by a call to a custom operator `solar::lstm`,
`solar::gru` or `solar::rnn`, which export keeps as one node. Its lowering emits, per layer
and direction, the input projection of all time steps as one product (as PyTorch's CPU path
and cuDNN do), then per time step the operators of PyTorch's own cell
(aten/src/ATen/native/RNN.cpp: LSTMCell, GRUCell, SimpleCell, with the input gates
precomputed): the MACs and FLOPs of the cells written out, and W_ih read once per layer.

Configurations the custom operators do not model (proj_size > 0, dropout between layers in
training mode, unbatched or packed inputs) keep PyTorch's own forward and are unrolled by
torch.export as before.
"""

import types

from .builder import Value
from .values import _concat, tensor

_REGISTERED = False
_MODES = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}


def _register() -> None:
    """Defines solar::lstm / solar::gru / solar::rnn (once per process)."""
    global _REGISTERED
    if _REGISTERED:
        return
    import torch
    from torch import Tensor

    def fake_outputs(x, h0, bidirectional):
        # (B, T, D*H) batch-first, else (T, B, D*H): the first two dims of x either way.
        dirs = 2 if bidirectional else 1
        return x.new_empty((x.shape[0], x.shape[1], dirs * h0.shape[2])), h0.new_empty(h0.shape)

    @torch.library.custom_op("solar::lstm", mutates_args=())
    def lstm(
        x: Tensor,
        h0: Tensor,
        c0: Tensor,
        params: list[Tensor],
        has_biases: bool,
        num_layers: int,
        bidirectional: bool,
        batch_first: bool,
    ) -> tuple[Tensor, Tensor, Tensor]:
        out, h, c = torch.lstm(
            x, [h0, c0], params, has_biases, num_layers, 0.0, False, bidirectional, batch_first
        )
        return out, h, c

    @lstm.register_fake
    def _(x, h0, c0, params, has_biases, num_layers, bidirectional, batch_first):
        out, h = fake_outputs(x, h0, bidirectional)
        return out, h, c0.new_empty(c0.shape)

    @torch.library.custom_op("solar::gru", mutates_args=())
    def gru(
        x: Tensor,
        h0: Tensor,
        params: list[Tensor],
        has_biases: bool,
        num_layers: int,
        bidirectional: bool,
        batch_first: bool,
    ) -> tuple[Tensor, Tensor]:
        out, h = torch.gru(
            x, h0, params, has_biases, num_layers, 0.0, False, bidirectional, batch_first
        )
        return out, h

    @gru.register_fake
    def _(x, h0, params, has_biases, num_layers, bidirectional, batch_first):
        return fake_outputs(x, h0, bidirectional)

    @torch.library.custom_op("solar::rnn", mutates_args=())
    def rnn(
        x: Tensor,
        h0: Tensor,
        params: list[Tensor],
        relu: bool,
        has_biases: bool,
        num_layers: int,
        bidirectional: bool,
        batch_first: bool,
    ) -> tuple[Tensor, Tensor]:
        fn = torch.rnn_relu if relu else torch.rnn_tanh
        out, h = fn(x, h0, params, has_biases, num_layers, 0.0, False, bidirectional, batch_first)
        return out, h

    @rnn.register_fake
    def _(x, h0, params, relu, has_biases, num_layers, bidirectional, batch_first):
        return fake_outputs(x, h0, bidirectional)

    _REGISTERED = True


def _forward(self, x, hx=None):
    """Replaces nn.LSTM/GRU/RNN.forward on the meta copy (see the module docstring)."""
    import torch

    dirs = 2 if self.bidirectional else 1
    batch = x.shape[0] if self.batch_first else x.shape[1]
    shape = (self.num_layers * dirs, batch, self.hidden_size)
    # By name: export then lifts them as the module's parameters (not as constants).
    params = [getattr(self, n) for n in self._flat_weights_names]
    if self.mode == "LSTM":
        if hx is None:
            hx = (
                torch.zeros(shape, dtype=x.dtype, device=x.device),
                torch.zeros(shape, dtype=x.dtype, device=x.device),
            )
        out, h, c = torch.ops.solar.lstm(
            x, hx[0], hx[1], params, self.bias, self.num_layers, self.bidirectional,
            self.batch_first,
        )  # fmt: skip
        return out, (h, c)
    if hx is None:
        hx = torch.zeros(shape, dtype=x.dtype, device=x.device)
    if self.mode == "GRU":
        return torch.ops.solar.gru(
            x, hx, params, self.bias, self.num_layers, self.bidirectional, self.batch_first
        )
    return torch.ops.solar.rnn(
        x, hx, params, self.mode == "RNN_RELU", self.bias, self.num_layers, self.bidirectional,
        self.batch_first,
    )  # fmt: skip


def _plain_forward(module, x, hx=None):
    return type(module).forward(module, x, hx)


def patch_recurrent(model) -> bool:
    """Routes every supported recurrent submodule of `model` through the custom operators.
    Returns whether any was patched. Call it on a copy the caller owns."""
    import torch.nn as nn

    patched = False
    for m in model.modules():
        if type(m) not in (nn.LSTM, nn.GRU, nn.RNN) or m.mode not in _MODES:
            continue
        if getattr(m, "proj_size", 0) or (m.dropout and m.training and m.num_layers > 1):
            continue
        _register()
        original = types.MethodType(_plain_forward, m)

        def forward(self, x, hx=None, _original=original):
            import torch

            if x.dim() != 3 or not isinstance(x, torch.Tensor):  # unbatched / packed
                return _original(x, hx)
            return _forward(self, x, hx)

        m.forward = types.MethodType(forward, m)
        patched = True
    return patched


# ------------------------------------------------------------------------------- lowering
def _ew(lw, kernel: str, *values):
    """An elementwise stdlib kernel on same-shape values (flattened, as the ATen rules do)."""
    shape = values[0].shape
    flat = [lw.flat(v) for v in values]
    r = lw.call(kernel, [f.var for f in flat], (flat[0].shape[0],), values[0].dtype)
    return lw.reshape(Value(r.var, r.shape, r.dtype), shape)


def _linear(lw, x, w, b):
    """x @ w.T (+ b): the bias-initialised contraction of nn.Linear."""
    shape = (x.shape[0], w.shape[0])
    if b is None:
        return lw.call("mm_nt", [x.var, w.var], shape, x.dtype)
    return lw.call("linear_nt", [x.var, w.var, b.var], shape, x.dtype)


def _select(lw, v, axis: int, index: int):
    var = lw.fresh()
    lw.emit(f"{var} = select({v.var}, dim={axis}, index={index})")
    return Value(var, tuple(s for i, s in enumerate(v.shape) if i != axis), v.dtype)


def _stack(lw, values, axis: int):
    if len(values) == 1:
        return lw.reshape(values[0], (*values[0].shape[:axis], 1, *values[0].shape[axis:]))
    var = lw.fresh()
    lw.emit(f'{var} = stack([{", ".join(v.var for v in values)}], dim="s", axis={axis})')
    shape = list(values[0].shape)
    shape.insert(axis, len(values))
    return Value(var, tuple(shape), values[0].dtype)


def _split(lw, v, parts: int):
    size = v.shape[1] // parts
    var = lw.fresh()
    lw.emit(f"{var} = split({v.var}, dim=1, sizes={[size] * parts})")
    return [Value(f"{var}[{i}]", (v.shape[0], size), v.dtype) for i in range(parts)]


def _lstm_cell(lw, gi, h, c, w_hh, b_hh):
    gates = _ew(lw, "add", gi, _linear(lw, h, w_hh, b_hh))
    i, f, g, o = _split(lw, gates, 4)
    i, f, g, o = (
        _ew(lw, "sigmoid_", i),
        _ew(lw, "sigmoid_", f),
        _ew(lw, "tanh_", g),
        _ew(lw, "sigmoid_", o),
    )
    c = _ew(lw, "add", _ew(lw, "mul", f, c), _ew(lw, "mul", i, g))
    return _ew(lw, "mul", o, _ew(lw, "tanh_", c)), c


def _gru_cell(lw, gi, h, w_hh, b_hh):
    ir, ii, inew = _split(lw, gi, 3)
    hr, hi, hnew = _split(lw, _linear(lw, h, w_hh, b_hh), 3)
    reset = _ew(lw, "sigmoid_", _ew(lw, "add", ir, hr))
    update = _ew(lw, "sigmoid_", _ew(lw, "add", ii, hi))
    new = _ew(lw, "tanh_", _ew(lw, "add", inew, _ew(lw, "mul", hnew, reset)))
    return _ew(lw, "add", _ew(lw, "mul", _ew(lw, "sub", h, new), update), new)


def _simple_cell(lw, gi, h, w_hh, b_hh, relu: bool):
    pre = _ew(lw, "add", gi, _linear(lw, h, w_hh, b_hh))
    return _ew(lw, "relu" if relu else "tanh_", pre)


def lower_recurrent(lw, mode: str, x, states, params, has_biases, layers, bidirectional, bf):
    """Emits the unrolled recurrence; returns (output, final states...)."""
    x = tensor(lw, x)
    states = [tensor(lw, s) for s in states]
    params = [tensor(lw, p) for p in params]
    taxis = 1 if bf else 0
    steps = x.shape[taxis]
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    finals: list[list] = [[] for _ in states]
    layer_in = x
    for layer in range(layers):
        seqs = []
        for d in range(dirs):
            k = layer * dirs + d
            w = params[k * per : (k + 1) * per]
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            carry = [_select(lw, s, 0, k) for s in states]
            # The input projection of every step at once (one product over T·B rows), as
            # PyTorch's own CPU path and cuDNN do: W_ih is read once, not once per step.
            a, b, width = layer_in.shape
            rows = lw.reshape(layer_in, (a * b, width))
            gi_all = _linear(lw, rows, w_ih, b_ih)
            gi_all = lw.reshape(gi_all, (a, b, w_ih.shape[0]))
            hs = [None] * steps
            for t in range(steps) if d == 0 else reversed(range(steps)):
                gi = _select(lw, gi_all, taxis, t)
                if mode == "lstm":
                    carry = list(_lstm_cell(lw, gi, carry[0], carry[1], w_hh, b_hh))
                elif mode == "gru":
                    carry = [_gru_cell(lw, gi, carry[0], w_hh, b_hh)]
                else:
                    relu = mode == "rnn_relu"
                    carry = [_simple_cell(lw, gi, carry[0], w_hh, b_hh, relu)]
                hs[t] = carry[0]
            seqs.append(_stack(lw, hs, taxis))
            for i, s in enumerate(carry):
                finals[i].append(s)
        layer_in = _concat(lw, seqs, 2)
    return (layer_in, *(_stack(lw, f, 0) for f in finals))


def _lstm_rule(lw, x, h0, c0, params, has_biases, layers, bidirectional, bf):
    return lower_recurrent(lw, "lstm", x, [h0, c0], params, has_biases, layers, bidirectional, bf)


def _gru_rule(lw, x, h0, params, has_biases, layers, bidirectional, bf):
    return lower_recurrent(lw, "gru", x, [h0], params, has_biases, layers, bidirectional, bf)


def _rnn_rule(lw, x, h0, params, relu, has_biases, layers, bidirectional, bf):
    mode = "rnn_relu" if relu else "rnn_tanh"
    return lower_recurrent(lw, mode, x, [h0], params, has_biases, layers, bidirectional, bf)


RULES = {
    "solar.lstm.default": _lstm_rule,
    "solar.gru.default": _gru_rule,
    "solar.rnn.default": _rnn_rule,
}
