"""Independent NumPy references for every IR program in examples/ir/.

``REFERENCES[stem](inputs, dims)`` computes what ``model()`` of ``examples/ir/<stem>.py``
returns, as a list in return order. ``inputs`` maps model() parameter names to arrays (cast to
float64 by the caller for float parameters; index tensors stay integer) and ``dims`` holds the
sizes the program was run at (the references read sizes from the arrays; ``dims`` is only used
to check them). The references are written as whole-array NumPy (einsum, matmul, sliding
windows over explicitly padded arrays), not as transliterations of the IR's loop nests, so that
the executor is compared against an independent formulation of each program. Each was
cross-checked against a PyTorch formulation (torch.nn.functional conv2d / conv_transpose2d /
max_pool2d / avg_pool2d / softmax / layer_norm / scaled_dot_product_attention,
torch.nn.LSTMCell, ...) at SMALL_DIMS to 1e-6.

The model() scalar parameters (strides, eps, heads, scale, ...) are the programs' defaults and
are repeated here as literals: a reference that read them from the program would not be
independent of it.

``SMALL_DIMS[stem]`` gives sizes at which the reference interpreter runs each program quickly
(well under 2e6 loop points); tied sizes are kept consistent (grouped_conv: C = 4·D, K a
multiple of 4; lstm: G = 4·H; attention: N a multiple of 8 heads; transformer: D a multiple of
4 heads; pooling: the max-pool output sides are even so the 2x2 average-pool reshape is valid).

``OUTPUT_DTYPES[stem]`` lists the dtype of each returned tensor (from the kernels' RESULT
annotations and the builtins that produce them).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["OUTPUT_DTYPES", "REFERENCES", "SMALL_DIMS", "bf16_round"]


# ---------------------------------------------------------------------------------------------
# helpers


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softmax(x, axis=-1):
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def _pad_hw(x, pad, value=0.0):
    """Pads the last two axes of x by `pad` on each side with `value`."""
    width = [(0, 0)] * (x.ndim - 2) + [(pad, pad), (pad, pad)]
    return np.pad(x, width, mode="constant", constant_values=value)


def _windows(x, kh, kw, stride):
    """Sliding kh x kw windows over the last two axes: [..., P, Q, kh, kw]."""
    v = sliding_window_view(x, (kh, kw), axis=(-2, -1))
    return v[..., ::stride, ::stride, :, :]


def _conv2d(x, w, stride, pad):
    """Cross-correlation, zero padding: x [N, C, H, W], w [O, C, R, S] -> [N, O, P, Q]."""
    win = _windows(_pad_hw(x, pad), w.shape[2], w.shape[3], stride)  # [N, C, P, Q, R, S]
    return np.einsum("ncpqrs,ocrs->nopq", win, w)


def _check(inputs, dims, spec):
    """Asserts every input has the shape its model() annotation names (spec: name -> dims)."""
    for name, names in spec.items():
        want = tuple(dims[d] for d in names.split(",")) if names else ()
        got = tuple(np.shape(inputs[name]))
        if got != want:
            raise ValueError(f"input {name!r}: shape {got}, expected {want} ({names})")


def bf16_round(x):
    """Rounds to bfloat16 (round to nearest, ties to even) via float32; returns float64."""
    f = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    u = f.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    out = u.astype(np.uint32).view(np.float32).astype(np.float64)
    return np.where(np.isnan(f), np.nan, out)


# ---------------------------------------------------------------------------------------------
# references, one per example


def ref_attention(inputs, dims):
    """Causal multi-head self-attention: 8 heads, scale 0.125 (fixed, not 1/sqrt(E))."""
    heads, scale = 8, 0.125
    _check(inputs, dims, {"x": "B,S,D", "wq": "N,D", "wk": "N,D", "wv": "N,D", "wo": "D,N"})
    x = inputs["x"]
    b, s, _ = x.shape
    n = inputs["wq"].shape[0]
    e = n // heads

    def heads_of(w):  # [B, S, N] -> [B, H, S, E]; head h owns columns h*E .. h*E+E-1
        return (x @ w.T).reshape(b, s, heads, e).transpose(0, 2, 1, 3)

    q, k, v = heads_of(inputs["wq"]), heads_of(inputs["wk"]), heads_of(inputs["wv"])
    scores = np.einsum("bhie,bhje->bhij", q, k) * scale
    causal = np.tril(np.ones((s, s), dtype=bool))  # key j visible from query i iff j <= i
    scores = np.where(causal, scores, -np.inf)
    o = _softmax(scores) @ v  # [B, H, S, E]
    o = o.transpose(0, 2, 1, 3).reshape(b, s, n)  # merge heads: column h*E + e
    return [o @ inputs["wo"].T]


def ref_conv2d(inputs, dims):
    """conv 3x3-ish stride 1 pad 1 (+bias), ReLU, conv stride 2 pad 1 (+bias)."""
    _check(
        inputs,
        dims,
        {"x": "N,C,H,W", "w1": "O,C,R,S", "b1": "O", "w2": "F,O,R,S", "b2": "F"},
    )
    h = _conv2d(inputs["x"], inputs["w1"], 1, 1) + inputs["b1"][None, :, None, None]
    h = np.maximum(h, 0.0)
    return [_conv2d(h, inputs["w2"], 2, 1) + inputs["b2"][None, :, None, None]]


def ref_conv_transpose2d(inputs, dims):
    """Transposed conv stride 2 pad 1 (+bias), then sigmoid.

    Formulated as the textbook equivalent: insert stride-1 zeros between input pixels, pad by
    (kernel - 1 - pad) on each side and cross-correlate with the spatially flipped kernel whose
    in/out channel axes are swapped.
    """
    stride, pad = 2, 1
    _check(inputs, dims, {"x": "N,C,H,W", "w": "C,O,R,S", "b": "O"})
    x, w = inputs["x"], inputs["w"]
    n, c, h, wd = x.shape
    kr, ks = w.shape[2], w.shape[3]
    dil = np.zeros((n, c, (h - 1) * stride + 1, (wd - 1) * stride + 1))
    dil[:, :, ::stride, ::stride] = x
    pr, ps = kr - 1 - pad, ks - 1 - pad
    assert pr >= 0 and ps >= 0
    dil = np.pad(dil, [(0, 0), (0, 0), (pr, pr), (ps, ps)])
    wf = w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)  # [O, C, R, S], flipped
    win = _windows(dil, kr, ks, 1)
    y = np.einsum("ncpqrs,ocrs->nopq", win, wf) + inputs["b"][None, :, None, None]
    return [_sigmoid(y)]


def ref_cumsum(inputs, dims):
    """Inclusive prefix sums along C, forward and reversed (suffix sums)."""
    _check(inputs, dims, {"x": "R,C"})
    x = inputs["x"]
    return [np.cumsum(x, axis=1), np.cumsum(x[:, ::-1], axis=1)[:, ::-1]]


def ref_data_movement(inputs, dims):
    """a shifted left by one along S (last column 0), plus bias over C, rounded to bf16.

    concat([a, b], C) -> pad S by 1 -> slice S[2 : S+2] (x[..., j] = a[..., j+1], 0 at the end)
    -> split C -> stack -> permute -> select L=0 keeps only the `a` half; `b` never reaches the
    output.
    """
    _check(inputs, dims, {"a": "B,C,S", "b": "B,C,S", "bias": "C"})
    a = inputs["a"]
    shifted = np.zeros_like(a)
    shifted[:, :, :-1] = a[:, :, 1:]
    y = shifted + inputs["bias"][None, :, None]
    # The add runs in fp32 (the kernel's dtype), then cast() rounds to bf16.
    return [bf16_round(y.astype(np.float32))]


def ref_embedding(inputs, dims):
    """table rows gathered by token id, plus the position table broadcast over B."""
    _check(inputs, dims, {"tokens": "B,S", "table": "V,D", "positions": "S,D"})
    tokens = np.asarray(inputs["tokens"])
    assert np.issubdtype(tokens.dtype, np.integer)
    return [np.take(inputs["table"], tokens, axis=0) + inputs["positions"][None, :, :]]


def ref_grouped_conv(inputs, dims):
    """Depthwise conv stride 1 pad 1, then grouped conv (4 groups) stride 1 pad 1, no bias."""
    groups = 4
    _check(inputs, dims, {"x": "N,C,H,W", "w_dw": "C,R,S", "w_g": "K,D,R,S"})
    x, w_dw, w_g = inputs["x"], inputs["w_dw"], inputs["w_g"]
    win = _windows(_pad_hw(x, 1), w_dw.shape[1], w_dw.shape[2], 1)  # [N, C, P, Q, R, S]
    h = np.einsum("ncpqrs,crs->ncpq", win, w_dw)
    n, c = h.shape[:2]
    k, d = w_g.shape[:2]
    assert c == groups * d and k % groups == 0, "grouped_conv needs C = 4·D and K % 4 == 0"
    win = _windows(_pad_hw(h, 1), w_g.shape[2], w_g.shape[3], 1)  # [N, C, P, Q, R, S]
    win = win.reshape(n, groups, d, *win.shape[2:])  # input channel g*D + d
    wg = w_g.reshape(groups, k // groups, d, *w_g.shape[2:])  # output channel g*O + o
    y = np.einsum("ngdpqrs,godrs->ngopq", win, wg)
    return [y.reshape(n, k, *y.shape[3:])]


def ref_layer_norm(inputs, dims):
    """LayerNorm over D: biased variance, eps 1e-5 inside the rsqrt, affine gamma/beta."""
    eps = 1e-5
    _check(inputs, dims, {"x": "B,S,D", "gamma": "D", "beta": "D"})
    x = inputs["x"]
    mu = x.mean(axis=-1, keepdims=True)
    var = np.mean(np.square(x - mu), axis=-1, keepdims=True)
    return [(x - mu) / np.sqrt(var + eps) * inputs["gamma"] + inputs["beta"]]


def ref_linear_bias_matmul(inputs, dims):
    """(x @ fc_weight^T + fc_bias) @ D."""
    _check(inputs, dims, {"x": "B,M,K", "fc_weight": "N,K", "fc_bias": "N", "D": "N,P"})
    y = np.matmul(inputs["x"], inputs["fc_weight"].T) + inputs["fc_bias"]
    return [np.matmul(y, inputs["D"])]


def ref_lstm(inputs, dims):
    """One LSTM layer over T steps, gate rows in PyTorch order (i, f, g, o); returns (h, c)."""
    _check(
        inputs,
        dims,
        {"x": "T,B,I", "h0": "B,H", "c0": "B,H", "w_ih": "G,I", "w_hh": "G,H", "bias": "G"},
    )
    x, h, c = inputs["x"], inputs["h0"], inputs["c0"]
    hidden = h.shape[1]
    assert inputs["w_ih"].shape[0] == 4 * hidden, "lstm needs G = 4·H"
    w = np.concatenate([inputs["w_ih"], inputs["w_hh"]], axis=1)  # [G, I + H]
    for t in range(x.shape[0]):
        z = np.concatenate([x[t], h], axis=1) @ w.T + inputs["bias"]
        i, f, g, o = np.split(z, 4, axis=1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
    return [h, c]


def ref_pooling(inputs, dims):
    """Max pool 3x3 stride 2 pad 1 (padding never wins), then 2x2 stride-2 average pool."""
    _check(inputs, dims, {"x": "N,C,H,W"})
    m = _windows(_pad_hw(inputs["x"], 1, -np.inf), 3, 3, 2).max(axis=(-2, -1))
    assert m.shape[2] % 2 == 0 and m.shape[3] % 2 == 0, "the 2x2 reshape needs even sides"
    return [_windows(m, 2, 2, 2).mean(axis=(-2, -1))]


def ref_reductions(inputs, dims):
    """Row sums, column means (over R), row argmax (first maximum; int64)."""
    _check(inputs, dims, {"x": "R,C"})
    x = inputs["x"]
    return [x.sum(axis=1), x.mean(axis=0), np.argmax(x, axis=1).astype(np.int64)]


def ref_rms_norm(inputs, dims):
    """h = x + residual; y = h / sqrt(mean(h^2) + 1e-6) * weight; returns (y, h)."""
    eps = 1e-6
    _check(inputs, dims, {"x": "T,D", "residual": "T,D", "weight": "D"})
    h = inputs["x"] + inputs["residual"]
    rms = np.sqrt(np.mean(h * h, axis=1, keepdims=True) + eps)
    return [h / rms * inputs["weight"], h]


def ref_softmax(inputs, dims):
    """Row softmax of x * 0.5 (inv_temperature)."""
    _check(inputs, dims, {"x": "R,C"})
    return [_softmax(inputs["x"] * 0.5, axis=1)]


def ref_transformer(inputs, dims):
    """L pre-norm blocks: h += MHA(RMSNorm(h)) (non-causal, 4 heads, scale 0.125);
    h += W_down SiLU(W_up RMSNorm(h)); RMSNorm eps 1e-6; no final norm."""
    heads, scale, eps = 4, 0.125, 1e-6
    _check(
        inputs,
        dims,
        {
            "x": "B,S,D",
            "ln1": "L,D",
            "wq": "L,D,D",
            "wk": "L,D,D",
            "wv": "L,D,D",
            "wo": "L,D,D",
            "ln2": "L,D",
            "w_up": "L,F,D",
            "w_down": "L,D,F",
        },
    )
    h = inputs["x"]
    b, s, d = h.shape
    e = d // heads

    def rms(t, g):
        return t / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + eps) * g

    for layer in range(inputs["wq"].shape[0]):

        def w(name, layer=layer):
            return inputs[name][layer]

        a = rms(h, w("ln1"))
        q, k, v = (
            np.einsum("bsk,nk->bsn", a, w(n)).reshape(b, s, heads, e) for n in ("wq", "wk", "wv")
        )
        p = _softmax(np.einsum("bihe,bjhe->bhij", q, k) * scale)
        o = np.einsum("bhij,bjhe->bihe", p, v).reshape(b, s, d)
        h = h + o @ w("wo").T
        m = rms(h, w("ln2"))
        u = m @ w("w_up").T
        h = h + (u * _sigmoid(u)) @ w("w_down").T
    return [h]


def ref_transformer_block(inputs, dims):
    """One pre-norm block: h = x + MHA(RMSNorm(x)) with per-head weights (non-causal, scale
    1/sqrt(E)); out = h + W_down (SiLU(W_gate m) * W_up m), m = RMSNorm(h); eps 1e-6."""
    eps = 1e-6
    _check(
        inputs,
        dims,
        {
            "x": "B,S,D",
            "ln1": "D",
            "wq": "H,E,D",
            "wk": "H,E,D",
            "wv": "H,E,D",
            "wo": "D,H,E",
            "ln2": "D",
            "w_gate": "F,D",
            "w_up": "F,D",
            "w_down": "D,F",
        },
    )
    x = inputs["x"]
    scale = 1.0 / np.sqrt(inputs["wq"].shape[1])

    def rms(t, g):
        return t / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + eps) * g

    a = rms(x, inputs["ln1"])
    q, k, v = (np.einsum("bsd,hed->bhse", a, inputs[n]) for n in ("wq", "wk", "wv"))
    p = _softmax(np.einsum("bhie,bhje->bhij", q, k) * scale)
    o = np.einsum("bhij,bhje->bhie", p, v)
    h = x + np.einsum("bhse,dhe->bsd", o, inputs["wo"])
    m = rms(h, inputs["ln2"])
    gate, up = m @ inputs["w_gate"].T, m @ inputs["w_up"].T
    return [h + (gate * _sigmoid(gate) * up) @ inputs["w_down"].T]


def ref_mla_absorbed_attention(inputs, dims):
    """Absorbed MLA: scores = (q_nope W_UK) c_KV^T, P = softmax(0.0722 scores), out =
    ((P c_KV) W_UV) W_O (summed over heads)."""
    scale = 0.0722
    _check(
        inputs,
        dims,
        {"q_nope": "B,S,H,N", "c_kv": "B,T,C", "w_uk": "H,N,C", "w_uv": "H,C,V", "w_o": "H,V,D"},
    )
    c_kv = inputs["c_kv"]
    qc = np.einsum("bshn,hnc->bshc", inputs["q_nope"], inputs["w_uk"])
    p = _softmax(np.einsum("bshc,btc->bhst", qc, c_kv) * scale)
    o = np.einsum("bhst,btc->bhsc", p, c_kv)
    y = np.einsum("bhsc,hcv->bhsv", o, inputs["w_uv"])
    return [np.einsum("bhsv,hvd->bsd", y, inputs["w_o"])]


def ref_sliding_windows(inputs, dims):
    x, win = inputs["x"], inputs["win"]
    _check(inputs, dims, {"x": "B,L", "win": "W"})
    hop = 128  # model() default
    frames = sliding_window_view(x, win.shape[0], axis=-1)[:, ::hop, :]  # [B, P, W]
    return [frames * win, frames]


REFERENCES = {
    "attention": ref_attention,
    "conv2d": ref_conv2d,
    "conv_transpose2d": ref_conv_transpose2d,
    "cumsum": ref_cumsum,
    "data_movement": ref_data_movement,
    "embedding": ref_embedding,
    "grouped_conv": ref_grouped_conv,
    "layer_norm": ref_layer_norm,
    "linear_bias_matmul": ref_linear_bias_matmul,
    "lstm": ref_lstm,
    "pooling": ref_pooling,
    "reductions": ref_reductions,
    "rms_norm": ref_rms_norm,
    "softmax": ref_softmax,
    "transformer": ref_transformer,
    "transformer_block": ref_transformer_block,
    "mla_absorbed_attention": ref_mla_absorbed_attention,
    "sliding_windows": ref_sliding_windows,
}

# Every dim of each model()'s annotations, at small sizes (odd where the program allows, some
# size-1 dims, non-square kernels so that R and S cannot be swapped unnoticed).
SMALL_DIMS = {
    # heads = 8 is a model() default: N = 8 heads x E = 2.
    "attention": {"B": 2, "S": 5, "D": 3, "N": 16},
    # conv1 3x2 kernel pad 1 -> [1, 5, 7, 7]; conv2 stride 2 -> [1, 4, 4, 4].
    "conv2d": {"N": 1, "C": 3, "H": 7, "W": 6, "O": 5, "F": 4, "R": 3, "S": 2},
    # P = (H-1)*2 - 2 + R = 6, Q = (W-1)*2 - 2 + S = 7.
    "conv_transpose2d": {"N": 2, "C": 3, "H": 3, "W": 4, "O": 2, "R": 4, "S": 3},
    "cumsum": {"R": 3, "C": 7},
    "data_movement": {"B": 2, "C": 3, "S": 5},
    "embedding": {"B": 1, "S": 5, "V": 7, "D": 3},
    # groups = 4: C = 4·D, K = 4·O (O = 3).
    "grouped_conv": {"N": 1, "C": 8, "H": 5, "W": 6, "R": 2, "S": 3, "K": 12, "D": 2},
    "layer_norm": {"B": 2, "S": 3, "D": 7},
    "linear_bias_matmul": {"B": 1, "M": 3, "K": 5, "N": 7, "P": 3},
    # G = 4·H.
    "lstm": {"T": 3, "B": 1, "I": 3, "H": 5, "G": 20},
    # max pool -> [1, 3, 4, 6] (even sides for the 2x2 reshape) -> avg pool [1, 3, 2, 3].
    "pooling": {"N": 1, "C": 3, "H": 7, "W": 11},
    "reductions": {"R": 5, "C": 7},
    "rms_norm": {"T": 3, "D": 7},
    "softmax": {"R": 3, "C": 7},
    # heads = 4: D = 4 heads x E = 2.
    "transformer": {"L": 2, "B": 1, "S": 5, "D": 8, "F": 6},
    # H·E need not equal D (per-head weights).
    "transformer_block": {"B": 2, "S": 5, "D": 6, "H": 2, "E": 3, "F": 7},
    "mla_absorbed_attention": {"B": 1, "S": 3, "T": 5, "H": 2, "N": 3, "C": 4, "V": 3, "D": 5},
    # hop = 128 (a model() default): (300 - 5) // 128 + 1 = 3 windows, the last ending at 261.
    "sliding_windows": {"B": 2, "L": 300, "W": 5},
}

OUTPUT_DTYPES = {stem: ["fp32"] for stem in REFERENCES}
OUTPUT_DTYPES.update(
    {
        "cumsum": ["fp32", "fp32"],
        "data_movement": ["bf16"],
        "lstm": ["fp32", "fp32"],
        "reductions": ["fp32", "fp32", "int64"],
        "rms_norm": ["fp32", "fp32"],
        "sliding_windows": ["fp32", "fp32"],
    }
)
