"""Hand-derived numbers for every IR program in examples/ir/.

Each assertion states how its number was derived from the program's DIMS with the counting
rules of docs/ir.md §7 (points of a nest = product of its loop sizes, guards never reduce
it; MACs from `+=` of a product of tensor reads in a nest with a reduction dim, where a
kept dim is indexed by only one factor (a square or batched dot product is vector work); other
arithmetic per point and per kind; bytes = distinct parameter tensors read + returned
tensors, fp32 = 4 bytes). The literal in each assert is the hand-derived value; the code never
recomputes it from the same formula.
"""

import pathlib

import pytest
import solar

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples" / "ir"

KINDS = ("add", "mul", "div", "transcendental", "compare", "other")


def trace(file_name, **dims):
    path = str(EXAMPLES / file_name)
    if dims:
        return solar.trace(path, dims=dims)
    return solar.trace(path)


def node(g, name):
    for n in g.nodes:
        if n.name == name:
            return n
    raise AssertionError(f"no node {name!r}; nodes: {[n.name for n in g.nodes]}")


def tensor(g, name):
    for t in g.tensors:
        if t.name == name:
            return t
    raise AssertionError(f"no tensor {name!r}; tensors: {[t.name for t in g.tensors]}")


def flops_by_kind(g):
    """Non-MAC FLOPs of the whole graph, summed per kind over the nodes."""
    total = dict.fromkeys(KINDS, 0)
    for n in g.nodes:
        for k in KINDS:
            total[k] += n.flops[k]
    return total


def kinds(**nonzero):
    """A full FLOP-kind dict: the given kinds, every other kind 0."""
    d = dict.fromkeys(KINDS, 0)
    d.update(nonzero)
    return d


def ops(g):
    """How many nodes call each kernel or builtin."""
    counts = {}
    for n in g.nodes:
        counts[n.op] = counts.get(n.op, 0) + 1
    return counts


def matrix_flops(g):
    return sum(n.matrix_flops for n in g.nodes)


def vector_flops(g):
    return sum(n.vector_flops for n in g.nodes)


# Every file in examples/ir must have a test below.
TESTED = {
    "linear_bias_matmul.py",
    "conv2d.py",
    "grouped_conv.py",
    "conv_transpose2d.py",
    "softmax.py",
    "layer_norm.py",
    "rms_norm.py",
    "pooling.py",
    "reductions.py",
    "cumsum.py",
    "embedding.py",
    "attention.py",
    "transformer.py",
    "lstm.py",
    "data_movement.py",
    "transformer_block.py",
    "mla_absorbed_attention.py",
    "sliding_windows.py",
}


def test_every_example_has_a_test():
    on_disk = {p.name for p in EXAMPLES.glob("*.py")}
    assert on_disk == TESTED


@pytest.mark.parametrize("file_name", sorted(TESTED))
def test_example_is_self_consistent(file_name):
    # Identities that hold for any graph (no hand-derived numbers here).
    g = trace(file_name)
    assert g.total_macs == sum(n.macs for n in g.nodes)
    assert g.total_flops == 2 * g.total_macs + vector_flops(g)
    assert g.unfused_bytes == sum(n.bytes for n in g.nodes)
    assert 0 < g.fused_bytes <= g.unfused_bytes
    for n in g.nodes:
        assert n.kind in ("einsum", "data_movement")
        assert n.matrix_flops == 2 * n.macs
        assert n.vector_flops == sum(n.flops[k] for k in KINDS)
        assert n.bytes == n.bytes_read + n.bytes_written
        if n.kind == "data_movement":
            assert n.macs == 0 and n.vector_flops == 0 and n.einsum == ""
        else:
            assert n.macs == sum(e.macs for e in n.einsums)
            for e in n.einsums:
                assert len(e.ranks) == len(e.rank_sizes)


# --------------------------------------------------------------------------------------------
# 1. linear_bias_matmul.py — the paper's Figure 2. B=2, M=128, K=256, N=512, P=64, fp32.
#    Element counts: BMK = 2·128·256 = 65,536; NK = 512·256 = 131,072; N = 512;
#    BMN = 2·128·512 = 131,072; NP = 512·64 = 32,768; BMP = 2·128·64 = 16,384.
# --------------------------------------------------------------------------------------------


def test_linear_bias_matmul():
    g = trace("linear_bias_matmul.py")
    assert [n.name for n in g.nodes] == ["linear#0", "matmul#0"]
    linear, matmul = node(g, "linear#0"), node(g, "matmul#0")
    assert linear.kind == "einsum" and linear.op == "linear"

    # linear: B·M·K·N = 2·128·256·512 = 33,554,432
    assert linear.macs == 33_554_432
    # matmul: B·M·N·P = 2·128·512·64 = 8,388,608
    assert matmul.macs == 8_388_608
    # 33,554,432 + 8,388,608 = 41,943,040 (paper Figure 2)
    assert g.total_macs == 41_943_040
    # 2 · 41,943,040 = 83,886,080 (83.9 MFLOP); the bias copy nest has no arithmetic
    assert g.total_flops == 83_886_080
    assert matrix_flops(g) == 83_886_080
    assert vector_flops(g) == 0
    assert flops_by_kind(g) == kinds()

    # linear reads 4·(BMK + NK + N) = 4·(65,536 + 131,072 + 512) = 788,480, writes 4·BMN = 524,288
    assert linear.bytes_read == 788_480
    assert linear.bytes_written == 524_288
    # matmul reads 4·(BMN + NP) = 4·(131,072 + 32,768) = 655,360, writes 4·BMP = 65,536
    assert matmul.bytes_read == 655_360
    assert matmul.bytes_written == 65_536
    # unfused: 4·[(BMK+NK+N+BMN) + (BMN+NP+BMP)] = 1,312,768 + 720,896 = 2,033,664 (2.03 MB)
    assert g.unfused_bytes == 2_033_664
    # fused: 4·(BMK+NK+N+NP+BMP) = 4·(65,536+131,072+512+32,768+16,384) = 985,088 (0.99 MB)
    assert g.fused_bytes == 985_088

    # Definition 1 / Figure 2c
    assert linear.einsum == "BMK,NK,N->BMN"
    assert matmul.einsum == "BMN,NP->BMP"
    # linear has two nests: the bias copy and the MAC nest.
    init, mac = linear.einsums
    assert init.text == "N->BMN"
    assert init.ranks == ["B", "M", "N"]
    assert init.rank_sizes == [2, 128, 512]
    assert init.points == 131_072  # 2·128·512
    assert init.macs == 0
    assert init.reduce == "none"
    assert init.flops == kinds()
    assert mac.text == "BMK,NK->BMN"
    assert mac.ranks == ["B", "M", "N", "K"]
    assert mac.rank_sizes == [2, 128, 512, 256]
    assert mac.points == 33_554_432  # 2·128·512·256
    assert mac.macs == 33_554_432
    assert mac.reduce == "+"
    assert mac.flops == kinds()

    x = tensor(g, "x")
    assert x.role == "input"
    assert x.dims == ["B", "M", "K"]
    assert x.shape == [2, 128, 256]
    assert x.dtype == "fp32"
    assert x.bytes == 262_144  # 4·65,536
    assert tensor(g, "fc_weight").role == "weight"
    assert tensor(g, "D").shape == [512, 64]


def test_linear_bias_matmul_dims_override():
    # B=4 instead of 2; every other size from DIMS.
    g = trace("linear_bias_matmul.py", B=4)
    # 4·128·256·512 + 4·128·512·64 = 67,108,864 + 16,777,216 = 83,886,080
    assert g.total_macs == 83_886_080
    assert g.total_flops == 167_772_160  # 2 · 83,886,080
    # BMK = 131,072, BMN = 262,144, BMP = 32,768:
    # linear 4·(131,072 + 131,072 + 512 + 262,144) = 2,099,200;
    # matmul 4·(262,144 + 32,768 + 32,768) = 1,310,720; sum 3,409,920
    assert g.unfused_bytes == 3_409_920
    # 4·(131,072 + 131,072 + 512 + 32,768 + 32,768) = 1,312,768
    assert g.fused_bytes == 1_312_768
    assert tensor(g, "x").shape == [4, 128, 256]


# --------------------------------------------------------------------------------------------
# 2. conv2d.py — N=2, C=16, H=W=32, O=32, F=64, R=S=3.
#    conv1: stride 1, pad 1 -> P = (32 + 2 - 3)//1 + 1 = 32; conv2: stride 2, pad 1 ->
#    P = (32 + 2 - 3)//2 + 1 = 16. Elements: x = 2·16·32·32 = 32,768; w1 = 32·16·9 = 4,608;
#    b1 = 32; h = 2·32·32·32 = 65,536; w2 = 64·32·9 = 18,432; b2 = 64; y = 2·64·16·16 = 32,768.
# --------------------------------------------------------------------------------------------


def test_conv2d():
    g = trace("conv2d.py")
    assert [n.name for n in g.nodes] == ["conv2d#0", "relu#0", "conv2d#1"]
    conv1, relu, conv2 = g.nodes

    # The padding guard skips the taps outside the input (docs/ir.md §7.1). conv1 (stride 1,
    # pad 1): output row p keeps the taps r with 0 <= p + r - 1 < 32: 2 at p = 0 and p = 31,
    # 3 elsewhere: 30·3 + 4 = 94 (p, r) pairs of 96, as many (q, s); N·O·C·94·94 =
    # 2·32·16·8,836 = 9,048,064 (dense 9,437,184)
    assert conv1.macs == 9_048_064
    # conv2 (stride 2, pad 1, P = 16): 0 <= 2p + r - 1 < 32 keeps 2 taps at p = 0, 3 elsewhere
    # (at p = 15: 29 + r < 32): 15·3 + 2 = 47 pairs of 48; 2·64·32·47·47 = 4,096·2,209 =
    # 9,048,064
    assert conv2.macs == 9_048_064
    # 9,048,064 · 2
    assert g.total_macs == 18_096_128
    # relu: one 2-arg max per element of h: 65,536 compares
    assert relu.flops == kinds(compare=65_536)
    assert flops_by_kind(g) == kinds(compare=65_536)
    # matrix 2·18,096,128 = 36,192,256; + 65,536 vector = 36,257,792
    assert matrix_flops(g) == 36_192_256
    assert g.total_flops == 36_257_792

    # conv1 reads 4·(32,768 + 4,608 + 32) = 149,632, writes 4·65,536 = 262,144
    assert conv1.bytes_read == 149_632
    assert conv1.bytes_written == 262_144
    # relu reads and writes 4·65,536 = 262,144
    assert relu.bytes == 524_288
    # conv2 reads 4·(65,536 + 18,432 + 64) = 336,128, writes 4·32,768 = 131,072
    assert conv2.bytes_read == 336_128
    assert conv2.bytes_written == 131_072
    # 411,776 + 524,288 + 467,200 = 1,403,264
    assert g.unfused_bytes == 1_403_264
    # 4·(x 32,768 + w1 4,608 + b1 32 + w2 18,432 + b2 64 + y 32,768) = 4·88,672 = 354,688
    assert g.fused_bytes == 354_688

    assert conv1.einsum == "NC(P+R)(Q+S),OCRS,O->NOPQ"
    assert conv2.einsum == "NC(P+R)(Q+S),OCRS,O->NOPQ"
    assert relu.einsum == "NCHW->NCHW"
    # The MAC nest's ranks and sizes show the computed output size P, Q.
    assert conv1.einsums[1].ranks == ["N", "O", "P", "Q", "C", "R", "S"]
    assert conv1.einsums[1].rank_sizes == [2, 32, 32, 32, 16, 3, 3]
    assert conv2.einsums[1].rank_sizes == [2, 64, 16, 16, 32, 3, 3]
    assert conv2.einsums[1].points == 9_437_184  # dense: 2·64·16·16·32·3·3
    assert conv2.einsums[1].reduce == "+"
    # bias nest: N·O·P·Q = 2·64·16·16 = 32,768 points, no arithmetic
    assert conv2.einsums[0].points == 32_768
    assert conv2.einsums[0].flops == kinds()


def test_conv2d_dims_override():
    g = trace("conv2d.py", H=64, W=64)
    # P = 64 after conv1: 62·3 + 4 = 190 (p, r) pairs; conv2 (P = 32): 31·3 + 2 = 95; each
    # conv N·O·C·pairs² = 1,024·190² = 4,096·95² = 36,966,400; both 73,932,800
    assert g.total_macs == 73_932_800
    # relu: 2·32·64·64 = 262,144 compares; 2·73,932,800 + 262,144 = 148,127,744
    assert g.total_flops == 148_127_744
    # conv1 4·(131,072 + 4,608 + 32 + 262,144) = 1,591,424; relu 4·2·262,144 = 2,097,152;
    # conv2 4·(262,144 + 18,432 + 64 + 131,072) = 1,646,848; sum 5,335,424
    assert g.unfused_bytes == 5_335_424
    # 4·(131,072 + 4,608 + 32 + 18,432 + 64 + 131,072) = 4·285,280 = 1,141,120
    assert g.fused_bytes == 1_141_120


# --------------------------------------------------------------------------------------------
# 3. grouped_conv.py — N=2, C=32, H=W=16, R=S=3, K=64, D=8, groups=4 (so G=4, O=16).
#    depthwise stride 1 pad 1: P = Q = 16; grouped stride 1 pad 1: P = Q = 16.
#    Elements: x = 2·32·16·16 = 16,384; w_dw = 32·9 = 288; h = 16,384;
#    w_g = 64·8·9 = 4,608; y = 2·4·16·16·16 = 32,768.
# --------------------------------------------------------------------------------------------


def test_grouped_conv():
    g = trace("grouped_conv.py")
    assert [n.name for n in g.nodes] == [
        "depthwise_conv2d#0",
        "reshape#0",
        "grouped_conv2d#0",
        "reshape#1",
    ]
    dw, wview, gc, yview = g.nodes
    assert wview.kind == "data_movement" and wview.op == "reshape"

    # Both pad 1 over 16: 14·3 + 4 = 46 (p, r) pairs of 48 in the input, as many (q, s).
    # depthwise: N·C·46·46 = 64·2,116 = 135,424 (dense N·C·P·Q·R·S = 147,456)
    assert dw.macs == 135_424
    # grouped: N·G·O·D·46·46 = 2·4·16·8·2,116 = 2,166,784 (dense 2,359,296)
    assert gc.macs == 2_166_784
    # 135,424 + 2,166,784
    assert g.total_macs == 2_302_208
    assert g.total_flops == 4_604_416  # 2 · 2,302,208
    assert vector_flops(g) == 0

    # depthwise reads 4·(16,384 + 288) = 66,688, writes 4·16,384 = 65,536
    assert dw.bytes_read == 66_688
    assert dw.bytes_written == 65_536
    # reshapes are views: 0 bytes
    assert wview.bytes == 0
    assert yview.bytes == 0
    # grouped reads 4·(16,384 + 4,608) = 83,968 (the weight view at its full size),
    # writes 4·32,768 = 131,072
    assert gc.bytes_read == 83_968
    assert gc.bytes_written == 131_072
    # 132,224 + 215,040
    assert g.unfused_bytes == 347_264
    # 4·(x 16,384 + w_dw 288 + w_g 4,608 + output 32,768) = 4·54,048 = 216,192
    assert g.fused_bytes == 216_192

    assert dw.einsum == "NC(P+R)(Q+S),CRS->NCPQ"
    # the grouped input channel g*size("D") + d renders as (G+D)
    assert gc.einsum == "N(G+D)(P+R)(Q+S),GODRS->NGOPQ"
    assert gc.einsums[0].ranks == ["N", "G", "O", "P", "Q", "D", "R", "S"]
    assert gc.einsums[0].rank_sizes == [2, 4, 16, 16, 16, 8, 3, 3]


# --------------------------------------------------------------------------------------------
# 4. conv_transpose2d.py — N=2, C=32, H=W=16, O=16, R=S=4, stride 2, pad 1.
#    P = (16 - 1)·2 - 2·1 + 4 = 32 = Q. Elements: x = 2·32·16·16 = 16,384;
#    w = 32·16·4·4 = 8,192; b = 16; y = 2·16·32·32 = 32,768.
# --------------------------------------------------------------------------------------------


def test_conv_transpose2d():
    g = trace("conv_transpose2d.py")
    assert [n.name for n in g.nodes] == ["conv_transpose2d#0", "sigmoid_act#0"]
    ct, sig = g.nodes

    # scatter form, guarded to outputs inside Y: 0 <= 2h + r - 1 < 32 keeps 3 taps at h = 0
    # and h = 15, 4 elsewhere: 14·4 + 6 = 62 (h, r) pairs of 64, as many (w, s);
    # N·C·O·62·62 = 1,024·3,844 = 3,936,256 (dense 4,194,304)
    assert ct.macs == 3_936_256
    assert g.total_macs == 3_936_256
    # sigmoid: one transcendental per output element: 32,768
    assert sig.flops == kinds(transcendental=32_768)
    # 2·3,936,256 + 32,768 = 7,905,280
    assert g.total_flops == 7_905_280
    assert matrix_flops(g) == 7_872_512

    bias_nest, mac_nest = ct.einsums
    # bias nest over the output: N·O·P·Q = 2·16·32·32 = 32,768 (shows P = Q = 32)
    assert bias_nest.ranks == ["N", "O", "P", "Q"]
    assert bias_nest.rank_sizes == [2, 16, 32, 32]
    assert bias_nest.points == 32_768
    assert mac_nest.ranks == ["N", "C", "H", "W", "O", "R", "S"]
    assert mac_nest.rank_sizes == [2, 32, 16, 16, 16, 4, 4]
    assert mac_nest.points == 4_194_304
    assert mac_nest.reduce == "+"
    # the written index h*stride + r - pad renders as (H+R)
    assert mac_nest.text == "NCHW,CORS->NO(H+R)(W+S)"
    assert ct.einsum == "NCHW,CORS,O->NOPQ"

    # reads 4·(16,384 + 8,192 + 16) = 98,368, writes 4·32,768 = 131,072
    assert ct.bytes_read == 98_368
    assert ct.bytes_written == 131_072
    # sigmoid 2·131,072 = 262,144; 229,440 + 262,144 = 491,584
    assert g.unfused_bytes == 491_584
    # 4·(16,384 + 8,192 + 16 + 32,768) = 229,440
    assert g.fused_bytes == 229_440


# --------------------------------------------------------------------------------------------
# 5. softmax.py — R=512, C=1024: R·C = 524,288 elements, 2,097,152 bytes.
# --------------------------------------------------------------------------------------------


def test_softmax():
    g = trace("softmax.py")
    assert [n.name for n in g.nodes] == ["scale#0", "softmax#0"]
    scale, sm = g.nodes

    assert g.total_macs == 0
    # scale: 1 mul per element = 524,288
    assert scale.flops == kinds(mul=524_288)
    m_nest, s_nest, y_nest = sm.einsums
    # M[i] = max(M[i], X[i,j]): 1 compare per point, R·C = 524,288
    assert m_nest.reduce == "max"
    assert m_nest.points == 524_288
    assert m_nest.flops == kinds(compare=524_288)
    # S[i] += exp(X - M): 1 add (+=) + 1 add (sub) = 2·524,288; 1 exp = 524,288
    assert s_nest.reduce == "+"
    assert s_nest.macs == 0
    assert s_nest.flops == kinds(add=1_048_576, transcendental=524_288)
    assert s_nest.text == "RC,R->R"
    # Y = exp(X - M) / S: 1 sub, 1 exp, 1 div per point
    assert y_nest.reduce == "none"
    assert y_nest.flops == kinds(add=524_288, transcendental=524_288, div=524_288)
    assert y_nest.text == "RC,R,R->RC"
    # softmax: 7 per element = 3,670,016
    assert sm.vector_flops == 3_670_016
    # graph: add 3·524,288 = 1,572,864; mul 524,288; div 524,288; exp 2·524,288 = 1,048,576;
    # compare 524,288; total 8·524,288 = 4,194,304
    assert flops_by_kind(g) == kinds(
        add=1_572_864, mul=524_288, div=524_288, transcendental=1_048_576, compare=524_288
    )
    assert g.total_flops == 4_194_304

    # M and S are kernel-local: softmax moves only X and Y: 2·2,097,152
    assert sm.bytes_read == 2_097_152
    assert sm.bytes_written == 2_097_152
    # scale 4,194,304 + softmax 4,194,304
    assert g.unfused_bytes == 8_388_608
    # x + output: 2·2,097,152
    assert g.fused_bytes == 4_194_304
    assert scale.einsum == "RC->RC"
    assert sm.einsum == "RC->RC"


# --------------------------------------------------------------------------------------------
# 6. layer_norm.py — B=4, S=128, D=768: T = B·S = 512 rows, T·D = 393,216 elements.
# --------------------------------------------------------------------------------------------


def test_layer_norm():
    g = trace("layer_norm.py")
    assert [n.name for n in g.nodes] == ["reshape#0", "layer_norm#0", "reshape#1"]
    ln = node(g, "layer_norm#0")

    assert g.total_macs == 0
    nests = ln.einsums
    assert [e.ranks for e in nests] == [["T", "D"], ["T"], ["T", "D"], ["T"], ["T", "D"]]
    assert [e.points for e in nests] == [393_216, 512, 393_216, 512, 393_216]
    # S1 += X: 1 add per element
    assert nests[0].flops == kinds(add=393_216)
    # Mu = S1 / n: 1 div per row
    assert nests[1].flops == kinds(div=512)
    # S2 += (X - Mu) ** 2: 2 adds (+=, sub) and 1 pow per element
    assert nests[2].flops == kinds(add=786_432, transcendental=393_216)
    # Rs = rsqrt(S2 / n + eps): 1 div, 1 add, 1 rsqrt per row
    assert nests[3].flops == kinds(div=512, add=512, transcendental=512)
    # Y = (X - Mu) * Rs * G + Bt: 2 adds, 2 muls per element
    assert nests[4].flops == kinds(add=786_432, mul=786_432)
    # add 393,216 + 786,432 + 512 + 786,432 = 1,966,592; mul 786,432; div 2·512 = 1,024;
    # transcendental 393,216 + 512 = 393,728; total 8·393,216 + 4·512 = 3,147,776
    assert flops_by_kind(g) == kinds(add=1_966_592, mul=786_432, div=1_024, transcendental=393_728)
    assert g.total_flops == 3_147_776

    # reads 4·(393,216 + 768 + 768) = 1,579,008, writes 4·393,216 = 1,572,864
    assert ln.bytes_read == 1_579_008
    assert ln.bytes_written == 1_572_864
    assert node(g, "reshape#0").bytes == 0
    # 1,579,008 + 1,572,864 (reshapes are views)
    assert g.unfused_bytes == 3_151_872
    # x + gamma + beta + output, the same four tensors
    assert g.fused_bytes == 3_151_872
    assert ln.einsum == "TD,D,D->TD"


# --------------------------------------------------------------------------------------------
# 7. rms_norm.py — T=1024, D=2048: T·D = 2,097,152 elements = 8,388,608 bytes.
# --------------------------------------------------------------------------------------------


def test_rms_norm():
    g = trace("rms_norm.py")
    assert [n.name for n in g.nodes] == ["add#0", "rms_norm#0"]
    add, rms = g.nodes

    assert g.total_macs == 0
    # add: 1 add per element
    assert add.flops == kinds(add=2_097_152)
    # rms_norm: Sq = X*X (1 mul, no MAC: not +=) + Ss += Sq (1 add) + Y = X*Rs*G (2 mul) per
    # element; Rs = rsqrt(Ss/n + eps) per row: 1 div, 1 add, 1 rsqrt.
    # mul 3·2,097,152 = 6,291,456; add 2,097,152 + 1,024 = 2,098,176
    assert rms.flops == kinds(mul=6_291_456, add=2_098_176, div=1_024, transcendental=1_024)
    assert rms.einsums[0].macs == 0
    # 2,097,152 + 2,098,176 = 4,195,328 adds; total 5·2,097,152 + 3·1,024 = 10,488,832
    assert flops_by_kind(g) == kinds(add=4_195_328, mul=6_291_456, div=1_024, transcendental=1_024)
    assert g.total_flops == 10_488_832

    # add: 3·8,388,608 = 25,165,824
    assert add.bytes == 25_165_824
    # rms_norm reads 8,388,608 + 4·2,048 = 8,396,800 (the [T,D] squares stay local),
    # writes 8,388,608
    assert rms.bytes_read == 8_396_800
    assert rms.bytes_written == 8_388_608
    # 25,165,824 + 16,785,408
    assert g.unfused_bytes == 41_951_232
    # x + residual + weight + both returned tensors (y, h): 4·(4·2,097,152 + 2,048)
    assert g.fused_bytes == 33_562_624
    assert add.einsum == "TD,TD->TD"
    assert rms.einsum == "TD,D->TD"


# --------------------------------------------------------------------------------------------
# 8. pooling.py — N=2, C=64, H=W=112. max pool 3x3 stride 2 pad 1: P = (112 + 2 - 3)//2 + 1
#    = 56; avg pool 2x2: 28. Elements: x = 2·64·112·112 = 1,605,632; m = 2·64·56·56 =
#    401,408; y = 2·64·28·28 = 100,352.
# --------------------------------------------------------------------------------------------


def test_pooling():
    g = trace("pooling.py")
    assert [n.name for n in g.nodes] == ["max_pool2d#0", "reshape#0", "avg_pool#0"]
    mp, view, ap = g.nodes

    assert g.total_macs == 0
    (mp_nest,) = mp.einsums
    assert mp_nest.ranks == ["N", "C", "P", "Q", "R", "S"]
    assert mp_nest.rank_sizes == [2, 64, 56, 56, 3, 3]
    assert mp_nest.reduce == "max"
    # 1 compare per point inside the input: 0 <= 2p + r - 1 < 112 keeps 2 taps at p = 0 and 3
    # elsewhere (at p = 55: 109 + r < 112): 55·3 + 2 = 167 (p, r) pairs, as many (q, s):
    # N·C·167² = 128·27,889 = 3,569,792 (dense 401,408·9 = 3,612,672)
    assert mp.flops == kinds(compare=3_569_792)
    sum_nest, div_nest = ap.einsums
    assert sum_nest.rank_sizes == [2, 64, 28, 28, 2, 2]
    # 1 add per point: 100,352·4 = 401,408; 1 div per output: 100,352
    assert ap.flops == kinds(add=401_408, div=100_352)
    assert g.total_flops == 4_071_552  # 3,569,792 + 401,408 + 100,352

    # max pool reads 4·1,605,632 = 6,422,528, writes 4·401,408 = 1,605,632 (Win costs 0)
    assert mp.bytes_read == 6_422_528
    assert mp.bytes_written == 1_605_632
    assert view.bytes == 0
    # avg pool reads 1,605,632 (the view), writes 4·100,352 = 401,408
    assert ap.bytes == 2_007_040
    # 8,028,160 + 2,007,040
    assert g.unfused_bytes == 10_035_200
    # 4·(1,605,632 + 100,352)
    assert g.fused_bytes == 6_823_936
    assert mp.einsum == "NC(P+R)(Q+S)->NCPQ"
    assert ap.einsum == "NCPRQS->NCPQ"


# --------------------------------------------------------------------------------------------
# 9. reductions.py — R=512, C=1024: R·C = 524,288 elements, 2,097,152 bytes.
# --------------------------------------------------------------------------------------------


def test_reductions():
    g = trace("reductions.py")
    assert [n.name for n in g.nodes] == ["row_sum#0", "col_mean#0", "argmax#0"]
    rs, cm, am = g.nodes

    assert g.total_macs == 0
    # row_sum: 1 add per element
    assert rs.flops == kinds(add=524_288)
    # col_mean: 1 add per element + 1 div per column (C = 1,024)
    assert cm.flops == kinds(add=524_288, div=1_024)
    assert [e.points for e in cm.einsums] == [524_288, 1_024]
    assert cm.einsums[0].ranks == ["R", "C"]
    # argmax: the select's comparison + the max reduction: 2 compares per element
    assert am.flops == kinds(compare=1_048_576)
    # add 2·524,288; div 1,024; compare 1,048,576
    assert flops_by_kind(g) == kinds(add=1_048_576, div=1_024, compare=1_048_576)
    assert g.total_flops == 2_098_176

    # row_sum writes 4·512 = 2,048; col_mean 4·1,024 = 4,096; argmax int64: 8·512 = 4,096
    assert rs.bytes == 2_099_200
    assert cm.bytes == 2_101_248
    assert am.bytes_read == 2_097_152
    assert am.bytes_written == 4_096
    # 2,099,200 + 2,101,248 + 2,101,248
    assert g.unfused_bytes == 6_301_696
    # x + three outputs: 2,097,152 + 2,048 + 4,096 + 4,096
    assert g.fused_bytes == 2_107_392
    assert rs.einsum == "RC->R"
    assert cm.einsum == "RC->C"
    assert am.einsum == "RC->R"


# --------------------------------------------------------------------------------------------
# 10. cumsum.py — R=128, C=4096: R·C = 524,288 elements, 2,097,152 bytes.
# --------------------------------------------------------------------------------------------


def test_cumsum():
    g = trace("cumsum.py")
    assert [n.name for n in g.nodes] == ["cumsum#0", "reverse_cumsum#0"]
    fwd, rev = g.nodes

    assert g.total_macs == 0
    # 1 add per element of the `else` branch (j > 0) in each scan: R·(C - 1) = 128·4,095 =
    # 524,160; the first column's copy costs nothing
    assert fwd.flops == kinds(add=524_160)
    assert rev.flops == kinds(add=524_160)
    assert fwd.einsums[0].points == 524_288
    assert g.total_flops == 1_048_320

    # each: read X, write Y
    assert fwd.bytes == 4_194_304
    assert rev.bytes == 4_194_304
    assert g.unfused_bytes == 8_388_608
    # x + two outputs: 3·2,097,152
    assert g.fused_bytes == 6_291_456
    assert fwd.einsum == "RC->RC"


# --------------------------------------------------------------------------------------------
# 11. embedding.py — B=8, S=128, V=32000, D=512. B·S = 1,024 tokens (int64, 8,192 bytes);
#     table 32,000·512·4 = 65,536,000 bytes; one row 512·4 = 2,048 bytes;
#     output B·S·D = 524,288 elements = 2,097,152 bytes; positions 128·512·4 = 262,144.
# --------------------------------------------------------------------------------------------


def test_embedding():
    g = trace("embedding.py")
    assert [n.name for n in g.nodes] == ["gather#0", "add_positions#0"]
    gather, addp = g.nodes

    assert gather.kind == "data_movement"
    assert gather.macs == 0 and gather.flops == kinds()
    # gather reads the index (8,192) + 1,024 rows · 2,048 = 2,097,152 (less than the table)
    assert gather.bytes_read == 2_105_344
    assert gather.bytes_written == 2_097_152
    # 1 add per element
    assert addp.flops == kinds(add=524_288)
    assert g.total_macs == 0
    assert g.total_flops == 524_288

    # add_positions reads 2,097,152 + 262,144, writes 2,097,152
    assert addp.bytes_read == 2_359_296
    assert addp.bytes_written == 2_097_152
    # 4,202,496 + 4,456,448
    assert g.unfused_bytes == 8_658_944
    # tokens 8,192 + table min(65,536,000, 2,097,152 fetched) + positions 262,144
    # + output 2,097,152
    assert g.fused_bytes == 4_464_640
    assert addp.einsum == "BSD,SD->BSD"

    tokens = tensor(g, "tokens")
    assert tokens.dtype == "int64"
    assert tokens.role == "input"
    assert tokens.bytes == 8_192
    assert tensor(g, "table").bytes == 65_536_000


# --------------------------------------------------------------------------------------------
# 12. attention.py — B=2, S=256, D=512, N=512 (projection width), heads=8, E = 512/8 = 64.
#     B·S·D = B·S·N = 262,144 elements (1,048,576 bytes); N·D = 262,144 elements;
#     scores B·H·S·T = 2·8·256·256 = 1,048,576 elements (4,194,304 bytes).
# --------------------------------------------------------------------------------------------


def test_attention():
    g = trace("attention.py")
    assert [n.name for n in g.nodes] == [
        "linear#0",
        "reshape#0",
        "permute#0",
        "linear#1",
        "reshape#1",
        "permute#1",
        "linear#2",
        "reshape#2",
        "permute#2",
        "causal_scores#0",
        "softmax#0",
        "attend#0",
        "permute#3",
        "reshape#3",
        "linear#3",
    ]

    # each projection: B·S·D·N = 262,144·512 = 134,217,728
    for i in range(4):
        assert node(g, f"linear#{i}").macs == 134_217_728
    sc, sm, av = node(g, "causal_scores#0"), node(g, "softmax#0"), node(g, "attend#0")
    # Q·K^T: B·H·S·T·E = 1,048,576·64 = 67,108,864
    assert sc.macs == 67_108_864
    # P·V: B·H·S·E·T = 67,108,864
    assert av.macs == 67_108_864
    # 4·134,217,728 + 2·67,108,864 = 671,088,640
    assert g.total_macs == 671_088_640
    assert matrix_flops(g) == 1_342_177_280

    mac_nest, mask_nest = sc.einsums
    assert mac_nest.text == "BHSE,BHTE->BHST"
    assert mac_nest.points == 67_108_864
    # select(j <= i, A * scale, -inf): 1 mul + 1 compare per score
    assert mask_nest.flops == kinds(mul=1_048_576, compare=1_048_576)
    # softmax: add 3, exp 2, div 1, compare 1 per score
    assert sm.flops == kinds(
        add=3_145_728, transcendental=2_097_152, div=1_048_576, compare=1_048_576
    )
    # vector: 9 per score = 9,437,184
    assert flops_by_kind(g) == kinds(
        add=3_145_728, mul=1_048_576, div=1_048_576, transcendental=2_097_152, compare=2_097_152
    )
    # 1,342,177,280 + 9,437,184
    assert g.total_flops == 1_351_614_464

    # projection: 3·1,048,576 = 3,145,728 bytes
    assert node(g, "linear#0").bytes == 3_145_728
    # permute: read + write 1,048,576; reshape: 0
    for i in range(4):
        assert node(g, f"permute#{i}").bytes == 2_097_152
        assert node(g, f"reshape#{i}").bytes == 0
    # scores: Q + K + A = 4·(262,144 + 262,144 + 1,048,576) = 6,291,456
    assert sc.bytes == 6_291_456
    # softmax: 2·4,194,304
    assert sm.bytes == 8_388_608
    # attend: P + V + O = 4·(1,048,576 + 262,144 + 262,144) = 6,291,456
    assert av.bytes == 6_291_456
    # 4·3,145,728 + 4·2,097,152 + 6,291,456 + 8,388,608 + 6,291,456 = 41,943,040
    assert g.unfused_bytes == 41_943_040
    # x (read by three projections, fetched once) + 4 weights + output: 6·1,048,576
    assert g.fused_bytes == 6_291_456

    assert node(g, "linear#0").einsum == "BSK,NK->BSN"
    assert sc.einsum == "BHSE,BHTE->BHST"
    assert sm.einsum == "BHST->BHST"
    assert av.einsum == "BHST,BHTE->BHSE"


# --------------------------------------------------------------------------------------------
# 13. transformer.py — L=2, B=2, S=128, D=256, F=1024, heads=4, E=64.
#     B·S·D = 65,536 elements (262,144 bytes); D·D = 65,536; F·D = 262,144;
#     B·S·F = 262,144; scores B·H·S·T = 2·4·128·128 = 131,072; rows B·S = 256.
# --------------------------------------------------------------------------------------------


def test_transformer():
    g = trace("transformer.py")
    # per layer: 8 selects (ln1, wq, wk, wv, wo, ln2, w_up, w_down), 6 linears,
    # 4 reshape+permute pairs, 2 rms_norm, 2 add
    assert ops(g) == {
        "select": 16,
        "rms_norm": 4,
        "linear": 12,
        "reshape": 8,
        "permute": 8,
        "scores": 2,
        "softmax": 2,
        "attend": 2,
        "add": 4,
        "silu": 2,
    }

    # per layer: q, k, v, o: 4 · B·S·D·D = 4·16,777,216 = 67,108,864;
    # scores + attend: 2 · B·H·S·T·E = 2·8,388,608 = 16,777,216;
    # up + down: 2 · B·S·D·F = 2·67,108,864 = 134,217,728; layer = 218,103,808
    assert node(g, "linear#0").macs == 16_777_216
    assert node(g, "linear#4").macs == 67_108_864  # layer 0 up projection
    assert node(g, "scores#1").macs == 8_388_608
    # 2 layers · 218,103,808
    assert g.total_macs == 436_207_616
    assert matrix_flops(g) == 872_415_232

    # per layer (vector):
    #   2 rms_norm: add 2·(65,536 + 256), mul 2·3·65,536, div 2·256, rsqrt 2·256
    #   scores *= scale: mul 131,072
    #   softmax: add 3·131,072, exp 2·131,072, div 131,072, compare 131,072
    #   2 add: add 2·65,536;  silu: mul 262,144, sigmoid 262,144
    #   => add 655,872; mul 786,432; div 131,584; transcendental 524,800; compare 131,072
    # two layers:
    assert flops_by_kind(g) == kinds(
        add=1_311_744, mul=1_572_864, div=263_168, transcendental=1_049_600, compare=262_144
    )
    assert vector_flops(g) == 4_459_520
    # 872,415,232 + 4,459,520
    assert g.total_flops == 876_874_752

    # a per-layer weight slice is a view; the kernel reads only that slice:
    # linear#0 reads a (65,536) + wq[l] (65,536), writes 65,536: 4·196,608 = 786,432
    assert node(g, "linear#0").bytes == 786_432
    # up projection: 4·(65,536 + 262,144) = 1,310,720 read, 4·262,144 = 1,048,576 written
    assert node(g, "linear#4").bytes_read == 1_310_720
    assert node(g, "linear#4").bytes_written == 1_048_576
    # rms_norm reads 4·(65,536 + 256) = 263,168, writes 262,144
    assert node(g, "rms_norm#0").bytes_read == 263_168
    assert all(n.bytes == 0 for n in g.nodes if n.op in ("select", "reshape"))
    # per layer: rms 2·525,312 + qkvo 4·786,432 + permutes 4·524,288 + scores 1,048,576
    #   + softmax 1,048,576 + attend 1,048,576 + adds 2·786,432 + up 2,359,296
    #   + silu 2,097,152 + down 2,359,296 = 17,827,840; two layers:
    assert g.unfused_bytes == 35_655_680
    # x 65,536 + ln1, ln2 2·512 + wq, wk, wv, wo 4·131,072 + w_up, w_down 2·524,288
    # + output 65,536 = 1,704,960 elements · 4 (each layer's select fetches its own slice,
    # so the stacked weights are read once in full)
    assert g.fused_bytes == 6_819_840

    assert node(g, "rms_norm#0").einsum == "BSD,D->BSD"
    assert node(g, "silu#0").einsum == "BSF->BSF"
    assert node(g, "scores#0").einsums[1].reduce == "*"
    assert tensor(g, "wq").shape == [2, 256, 256]


def test_transformer_more_layers():
    # The layer count follows the L dim of the stacked weights.
    g = trace("transformer.py", L=4)
    assert ops(g)["linear"] == 24
    # 4 · 218,103,808
    assert g.total_macs == 872_415_232
    # 4 · 17,827,840
    assert g.unfused_bytes == 71_311_360
    # weights double: (65,536 + 2·1,024 + 4·262,144 + 2·1,048,576 + 65,536) · 4
    # = 3,278,848 · 4
    assert g.fused_bytes == 13_115_392


# --------------------------------------------------------------------------------------------
# 14. lstm.py — T=16, B=4, I=256, H=512, G=4H=2048.
#     x = 16·4·256 = 16,384 elements; one step x_t = B·I = 1,024; h, c = B·H = 2,048;
#     w_ih = G·I = 524,288; w_hh = G·H = 1,048,576; bias = 2,048; gates z = B·G = 8,192.
# --------------------------------------------------------------------------------------------


def test_lstm():
    g = trace("lstm.py")
    assert ops(g) == {"select": 16, "lstm_gates": 16, "split": 16, "lstm_cell": 16}
    gates, cell = node(g, "lstm_gates#0"), node(g, "lstm_cell#0")

    # gates: B·G·I + B·G·H = 4·2048·256 + 4·2048·512 = 2,097,152 + 4,194,304 = 6,291,456
    assert gates.macs == 6_291_456
    assert [e.macs for e in gates.einsums] == [0, 2_097_152, 4_194_304]
    # 16 steps · 6,291,456
    assert g.total_macs == 100_663_296
    # cell per B·H = 2,048 points: c' = sig(f)·c + sig(i)·tanh(g): 3 transc., 2 mul, 1 add;
    # h' = sig(o)·tanh(c'): 2 transc., 1 mul
    assert cell.flops == kinds(transcendental=10_240, mul=6_144, add=2_048)
    # 16 steps
    assert flops_by_kind(g) == kinds(transcendental=163_840, mul=98_304, add=32_768)
    # 2·100,663,296 + 16·18,432
    assert g.total_flops == 201_621_504

    # gates reads x_t 1,024 + h 2,048 + w_ih 524,288 + w_hh 1,048,576 + bias 2,048
    # = 1,577,984 elements = 6,311,936 bytes; writes 8,192·4 = 32,768
    assert gates.bytes_read == 6_311_936
    assert gates.bytes_written == 32_768
    # cell reads four gate views + c = 5·2,048·4 = 40,960; writes h, c = 2·8,192 = 16,384
    assert cell.bytes_read == 40_960
    assert cell.bytes_written == 16_384
    # 16 · (6,344,704 + 57,344)
    assert g.unfused_bytes == 102_432_768
    # x 16,384 (every step fetches its own slice) + h0 2,048 + c0 2,048 + w_ih 524,288
    # + w_hh 1,048,576 + bias 2,048 + returned h, c 4,096 = 1,599,488 elements · 4
    assert g.fused_bytes == 6_397_952

    assert gates.einsum == "BI,BH,GI,GH,G->BG"
    assert cell.einsum == "BH,BH,BH,BH,BH->BH,BH"


def test_lstm_fewer_steps():
    g = trace("lstm.py", T=4)
    assert ops(g)["lstm_cell"] == 4
    # 4 · 6,291,456
    assert g.total_macs == 25_165_824
    # 4 · 6,402,048
    assert g.unfused_bytes == 25_608_192
    # x is now 4·4·256 = 4,096 elements: 1,599,488 - 12,288 = 1,587,200 elements · 4
    assert g.fused_bytes == 6_348_800


# --------------------------------------------------------------------------------------------
# 15. data_movement.py — B=2, C=64, S=256: one [B, C, S] fp32 tensor is 32,768 elements =
#     131,072 bytes; bias 64·4 = 256 bytes.
# --------------------------------------------------------------------------------------------


def test_data_movement():
    g = trace("data_movement.py")
    assert [n.name for n in g.nodes] == [
        "concat#0",
        "pad#0",
        "slice#0",
        "split#0",
        "stack#0",
        "permute#0",
        "select#0",
        "broadcast#0",
        "add_bias#0",
        "cast#0",
    ]
    b = {n.op: n for n in g.nodes}
    assert all(n.kind == "data_movement" for n in g.nodes if n.op != "add_bias")

    # concat: read a, b (2·131,072), write [2, 128, 256] (262,144)
    assert b["concat"].bytes_read == 262_144
    assert b["concat"].bytes_written == 262_144
    # pad: read 262,144, write [2, 128, 258] = 66,048·4 = 264,192
    assert b["pad"].bytes_read == 262_144
    assert b["pad"].bytes_written == 264_192
    # views
    for op in ("slice", "split", "select", "broadcast"):
        assert b[op].bytes == 0
    # stack: read lo, hi (2·131,072), write [2, 2, 64, 256] = 262,144
    assert b["stack"].bytes == 524_288
    # permute L<->B: read + write 262,144
    assert b["permute"].bytes == 524_288
    # add_bias: reads the selected slice (131,072) and the broadcast bias at its source size
    # (256, not 131,072), writes 131,072; 1 add per element
    assert b["add_bias"].bytes_read == 131_328
    assert b["add_bias"].bytes_written == 131_072
    assert b["add_bias"].flops == kinds(add=32_768)
    # cast to bf16: read 131,072, write 32,768·2 = 65,536
    assert b["cast"].bytes_read == 131_072
    assert b["cast"].bytes_written == 65_536

    assert g.total_macs == 0
    assert g.total_flops == 32_768
    # 524,288 + 526,336 + 524,288 + 524,288 + 262,400 + 196,608
    assert g.unfused_bytes == 2_558_208
    # a 131,072 + b 131,072 + bias 256 + bf16 output 65,536
    assert g.fused_bytes == 327_936
    assert b["add_bias"].einsum == "BCS,BCS->BCS"


# --------------------------------------------------------------------------------------------
# 16. transformer_block.py — B=1, S=512, D=1024, H=8, E=128, F=4096, fp32.
#     B·S·D = 524,288 elements (2,097,152 B); per-head weights H·E·D = 1,048,576 (4,194,304 B);
#     MLP weights F·D = 4,194,304 (16,777,216 B); scores B·H·S·T = 2,097,152; B·S·F = 2,097,152.
# --------------------------------------------------------------------------------------------


def test_transformer_block():
    g = trace("transformer_block.py")
    assert ops(g) == {
        "rms_norm": 2,
        "project_heads": 3,
        "scores": 1,
        "softmax": 1,
        "attend": 1,
        "merge_heads": 1,
        "add": 2,
        "linear": 3,
        "swiglu": 1,
    }
    # q, k, v: 3 · B·H·S·E·D = 3 · 536,870,912; scores, attend: 2 · B·H·S·T·E = 2 · 268,435,456;
    # merge_heads: B·S·D·H·E = 536,870,912; gate, up, down: 3 · B·S·F·D = 3 · 2,147,483,648;
    # Total 9,126,805,504. rms_norm's sum of squares Ss[b, s] += X[b,s,d] * X[b,s,d] is no MAC
    # (both factors index b and s, docs/ir.md §7.2): a vector mul + add per element.
    assert node(g, "project_heads#0").macs == 536_870_912
    assert node(g, "merge_heads#0").macs == 536_870_912
    assert node(g, "rms_norm#0").macs == 0
    assert g.total_macs == 9_126_805_504
    # Vector: rms_norm per row (B·S = 512) div + add + rsqrt and per element 3 mul + 1 add
    # (square, accumulate, two scales), twice; softmax per score (2,097,152) 1 compare, 3 add,
    # 2 mul, 2 exp, 1 div; swiglu per element (2,097,152) 2 mul + 1 sigmoid; 2 residual adds
    # of 524,288.
    assert flops_by_kind(g) == kinds(
        add=1_024 + 2 * 524_288 + 3 * 2_097_152 + 2 * 524_288,  # 8,389,632
        mul=2 * 3 * 524_288 + 2 * 2_097_152 + 2 * 2_097_152,  # 11,534,336
        div=1_024 + 2_097_152,  # 2,098,176
        transcendental=1_024 + 2 * 2_097_152 + 2_097_152,  # 6,292,480
        compare=2_097_152,
    )
    # 2 · 9,126,805,504 + 30,411,776: the 2 · 1,048,576 matrix FLOPs of the sums of squares
    # moved to the vector unit, the total is unchanged.
    assert g.total_flops == 18_284_022_784
    # Unfused: rms 2 · (2,097,152 + 4,096 + 2,097,152) + q/k/v 3 · 8,388,608 + scores
    # 2 · 2,097,152 + 8,388,608 + softmax 2 · 8,388,608 + attend 8,388,608 + 2 · 2,097,152 +
    # merge 8,388,608 + adds 2 · 6,291,456 + gate/up 2 · 27,262,976 + swiglu 3 · 8,388,608 +
    # down 27,262,976 = 203,431,936.
    assert node(g, "linear#0").bytes == 27_262_976
    assert g.unfused_bytes == 203_431_936
    # Fused: x 2,097,152 + ln1, ln2 8,192 + wq, wk, wv, wo 16,777,216 + MLP 50,331,648 +
    # output 2,097,152 = 71,311,360.
    assert g.fused_bytes == 71_311_360
    assert node(g, "project_heads#0").einsum == "BSD,HED->BHSE"
    # Every size is a DIMS entry: H=16 doubles the per-head projections.
    assert node(trace("transformer_block.py", H=16), "project_heads#0").macs == 1_073_741_824


# --------------------------------------------------------------------------------------------
# 17. mla_absorbed_attention.py — DeepSeek-V3 MLA, B=1, S=T=4096, H=128, N=128, C=512,
#     V=128, D=7168, fp32. 2^30 = 1,073,741,824; scores B·H·S·T = 2^31 elements.
# --------------------------------------------------------------------------------------------


def test_mla_absorbed_attention():
    g = trace("mla_absorbed_attention.py")
    g30 = 2**30
    # absorb_q S·H·C·N = 32·2^30; latent_scores H·S·T·C = 1024·2^30; latent_attend
    # H·S·C·T = 1024·2^30; up_v H·S·V·C = 32·2^30; out_proj S·D·H·V = 448·2^30.
    assert [n.macs for n in g.nodes] == [
        32 * g30,
        1024 * g30,
        0,
        1024 * g30,
        32 * g30,
        448 * g30,
    ]
    assert g.total_macs == 2560 * g30  # 2,748,779,069,440
    # softmax per score (2^31): 1 compare, 3 add, 2 mul, 2 exp, 1 div.
    assert flops_by_kind(g) == kinds(
        add=3 * 2**31, mul=2 * 2**31, div=2**31, transcendental=2 * 2**31, compare=2**31
    )
    assert g.total_flops == 2 * 2560 * g30 + 9 * 2**31  # 5,516,885,491,712
    # Unfused (4 B an element): absorb_q 4·(B·S·H·N + H·N·C + B·S·H·C) = 4·(67,108,864 +
    # 8,388,608 + 268,435,456) = 1,375,731,712; latent_scores 4·(268,435,456 + B·T·C 2,097,152
    # + 2^31) = 9,672,065,024; softmax 4·2·2^31 = 17,179,869,184; latent_attend 9,672,065,024;
    # up_v 1,375,731,712; out_proj 4·(B·H·S·V 67,108,864 + H·V·D 117,440,512 + B·S·D
    # 29,360,128) = 855,638,016. Total 40,131,100,672.
    assert [n.bytes for n in g.nodes] == [
        1_375_731_712,
        9_672_065_024,
        17_179_869_184,
        9_672_065_024,
        1_375_731_712,
        855_638_016,
    ]
    assert g.unfused_bytes == 40_131_100_672
    # Fused: 4·(q_nope 67,108,864 + c_kv 2,097,152 (read twice, fetched once) + w_uk 8,388,608
    # + w_uv 8,388,608 + w_o 117,440,512 + output 29,360,128) = 4·232,783,872 = 931,135,488.
    assert g.fused_bytes == 931_135_488


# --------------------------------------------------------------------------------------------
# 18. sliding_windows.py — B=4, L=16384, window W=512, hop 128: (16384 - 512) / 128 + 1 = 125
#     windows. x is 4·16,384·4 = 262,144 B; the window view [4, 125, 512] has 256,000
#     elements (1,024,000 B), 3.9x x's size (overlap); win 512·4 = 2,048 B.
# --------------------------------------------------------------------------------------------


def test_sliding_windows():
    g = trace("sliding_windows.py")
    assert [n.op for n in g.nodes] == ["unfold", "apply_window"]
    unfold, apply = g.nodes
    assert unfold.kind == "data_movement" and unfold.bytes == 0  # a view
    frames = g.tensors[unfold.outputs[0]]
    assert frames.dims == ["B", "L", "W"] and frames.shape == [4, 125, 512]
    assert frames.storage == g.inputs[0]  # the windows alias x
    # apply_window: reads the overlapping windows at x's size (262,144 B, not 1,024,000) and
    # win (2,048 B), writes 1,024,000 B; one multiply per element (256,000).
    assert apply.bytes_read == 264_192
    assert apply.bytes_written == 1_024_000
    assert apply.flops == kinds(mul=256_000)
    assert g.unfused_bytes == 1_288_192
    # Fused: x 262,144 + win 2,048 + the windowed frames 1,024,000; the second output, the
    # windows as they are, aliases x and writes nothing.
    assert g.fused_bytes == 1_288_192


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ('unfold(x, dim="L", size=0, step=2)', "size and step must be positive, got size=0"),
        ('unfold(x, dim="L", size=4, step=-1)', "got size=4, step=-1"),
        ('unfold(x, dim="L", size=4, window="B")', "'x' already has a dim 'B'"),
        ('unfold(x, dim="Q", size=4)', "tensor 'x' has no dim 'Q'"),
    ],
)
def test_unfold_errors_name_the_problem(tmp_path, call, message):
    path = tmp_path / "bad.py"
    path.write_text(
        'from solar.ir import kernel, Tensor, Dim\n\nDIMS = {"B": 2, "L": 16}\n\n'
        f'def model(x: Tensor("B,L", role="input")):\n    return {call}\n'
    )
    with pytest.raises(solar.UserError) as e:
        solar.trace(path)
    d = e.value.diagnostics[0]
    assert d.kind == "shape" and message in d.message and d.line == 6
