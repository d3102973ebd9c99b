#include <gtest/gtest.h>

#include "solar/einsum/lift.h"
#include "solar/ir/parser.h"
#include "solar/pipeline/pipeline.h"
#include "solar/sol/analysis.h"
#include "solar/trace/tracer.h"
#include "test_util.h"

namespace solar {
namespace {

TEST(Lift, PaperFigure2Numbers) {
  Graph g = graph_from_file(testing::example("linear_bias_matmul.py"), {});
  ASSERT_EQ(g.nodes.size(), 2u);
  // linear: B·M·K·N = 2·128·256·512 = 33,554,432 MACs; matmul: B·M·N·P = 2·128·512·64.
  EXPECT_EQ(g.nodes[0].macs, 33554432);
  EXPECT_EQ(g.nodes[1].macs, 8388608);
  EXPECT_EQ(g.total_flops(), 83886080);  // 2 · Σ MACs
  // 4·(BMK+NK+N+BMN) = 4·(65536+131072+512+131072) and 4·(BMN+NP+BMP).
  EXPECT_EQ(g.nodes[0].bytes(), 1312768);
  EXPECT_EQ(g.nodes[1].bytes(), 720896);
  // Fused: 4·(BMK+NK+N+NP+BMP) = 4·(65536+131072+512+32768+16384) = 985,088.
  EXPECT_EQ(fused_bytes(g), 985088);
}

TEST(Lift, ConvProjectionsCarryStrideAndOffset) {
  Graph g = graph_from_file(testing::example("conv2d.py"), {});
  const Node* conv = nullptr;
  for (const Node& n : g.nodes)
    if (n.macs > 0) conv = &n;
  ASSERT_NE(conv, nullptr);
  ASSERT_GT(conv->einsum_count(), 0u);
  const Einsum& e = conv->einsums->back();
  // Input operand, height index p*stride + r - pad: terms {P: stride, R: 1}, offset -pad.
  const Operand& x = e.inputs[0];
  ASSERT_EQ(x.projection.size(), 4u);
  ASSERT_EQ(x.projection[2].size(), 2u);
  EXPECT_EQ(x.projection[2][1].coefficient, 1);
  EXPECT_LT(x.offsets[2], 0);
}

// --- touched footprint: what a kernel reads of a tensor -------------------------------------

// An einsum with the given ranks and one operand with per-dim terms and offsets.
Einsum access(std::vector<std::pair<std::string, int64_t>> ranks,
              std::vector<std::vector<ProjectionTerm>> projection, std::vector<int64_t> offsets) {
  Einsum e;
  for (const auto& [name, size] : ranks) {
    e.ranks.push_back(name);
    e.rank_sizes.push_back(size);
  }
  Operand op;
  op.projection = std::move(projection);
  op.offsets = std::move(offsets);
  e.inputs.push_back(op);
  return e;
}

TEST(Touched, StridedOneByOneConvolutionReadsAQuarter) {
  // X[c, 2p, 2q] over C=4, P=Q=8 on a [4, 16, 16] tensor: rows and columns 0, 2, ..., 14,
  // 4 x 8 x 8 = 256 of 1,024 elements.
  const Einsum e =
      access({{"C", 4}, {"P", 8}, {"Q", 8}}, {{{"C", 1}}, {{"P", 2}}, {{"Q", 2}}}, {0, 0, 0});
  EXPECT_EQ(touched_elements(e, e.inputs[0], {4, 16, 16}), 256);
}

TEST(Touched, WindowsThatCoverTheStrideReadEverything) {
  // 3x3 window, stride 2, pad 1 on H=16: 2p + r - 1 for p < 8, r < 3 spans -1..15: clipped to
  // 0..15, all 16 rows. Stride 2 with a 2-wide window (pooling): 2p + r covers 0..15.
  const Einsum e = access({{"P", 8}, {"R", 3}}, {{{"P", 2}, {"R", 1}}}, {-1});
  EXPECT_EQ(touched_elements(e, e.inputs[0], {16}), 16);
  const Einsum pool = access({{"P", 8}, {"R", 2}}, {{{"P", 2}, {"R", 1}}}, {0});
  EXPECT_EQ(touched_elements(pool, pool.inputs[0], {16}), 16);
}

TEST(Touched, GapsAndSharedRanksCountNoMoreThanTouched) {
  // Stride 4 with a 2-wide window on 16: values {0,1,4,5,8,9,12,13} = 8 touched, counted
  // exactly (8 combinations enumerated; one rank at a time gave P alone: 4).
  const Einsum gaps = access({{"P", 4}, {"R", 2}}, {{{"P", 4}, {"R", 1}}}, {0});
  EXPECT_EQ(touched_elements(gaps, gaps.inputs[0], {16}), 8);
  // KernelBench's dilated 3-D max pooling per dim: 2p - 1 + 3r, p < 63, r < 3, on 128 rows.
  // r = 0: odd 1..123 (-1 is padding); r = 1: even 2..126; r = 2: odd 5..127. Together every
  // row but 0: 127 (one rank at a time: 63).
  const Einsum dilated = access({{"P", 63}, {"R", 3}}, {{{"P", 2}, {"R", 3}}}, {-1});
  EXPECT_EQ(touched_elements(dilated, dilated.inputs[0], {128}), 127);
  // Beyond 2^20 combinations the count takes one rank at a time, a lower bound: 4p + 8192r
  // for p < 2048, r < 1024 touches 2^21 values; P alone gives 2,048.
  const Einsum wide = access({{"P", 2048}, {"R", 1024}}, {{{"P", 4}, {"R", 8192}}}, {0});
  EXPECT_EQ(touched_elements(wide, wide.inputs[0], {int64_t{1} << 23}), 2048);
  // The diagonal X[i, i] of an 8 x 8 tensor touches 8 elements, not 64.
  const Einsum diag = access({{"I", 8}}, {{{"I", 1}}, {{"I", 1}}}, {0, 0});
  EXPECT_EQ(touched_elements(diag, diag.inputs[0], {8, 8}), 8);
  // Reversed X[7 - i]: all 8; X[i + 4] over i < 8 on 8 elements: 4 inside the tensor.
  const Einsum rev = access({{"I", 8}}, {{{"I", -1}}}, {7});
  EXPECT_EQ(touched_elements(rev, rev.inputs[0], {8}), 8);
  const Einsum shifted = access({{"I", 8}}, {{{"I", 1}}}, {4});
  EXPECT_EQ(touched_elements(shifted, shifted.inputs[0], {8}), 4);
}

// A stride-2 1x1 kernel in a program: the node's read of X is charged 1/4 of X, in the node
// (unfused) and in the fused bytes.
TEST(Touched, ANodeIsChargedWhatItReads) {
  const char* src = R"(
@kernel
def subsample(X: Tensor("C,H,W")) -> Tensor("C,P,Q"):
    Y = Tensor(C=X.shape[0], P=X.shape[1] // 2, Q=X.shape[2] // 2)
    for c in Dim("C"):
        for p in Dim("P"):
            for q in Dim("Q"):
                Y[c, p, q] = X[c, 2 * p, 2 * q]
    return Y
DIMS = {"C": 4, "H": 16, "W": 16}
def model(x: Tensor("C,H,W", role="input")):
    return subsample(x)
)";
  Graph g = trace_program(load_program_source(src, "t.py"), {});
  // X: 1,024 fp32 = 4,096 B, a quarter read: 1,024 B; Y: 4 x 8 x 8 fp32 = 1,024 B written.
  EXPECT_EQ(g.nodes[0].bytes_read, 1024);
  EXPECT_EQ(g.nodes[0].bytes_written, 1024);
  EXPECT_EQ(fused_bytes(g), 2048);
}

// --- guarded statements count the points their guard lets through ---------------------------

Graph guarded_graph(const std::string& guard, const std::string& dims) {
  const std::string src = R"(
@kernel
def banded(A: Tensor("B,M,K"), B: Tensor("B,N,K"), lo: int, hi: int) -> Tensor("B,M,N"):
    C = Tensor(B=A.shape[0], M=A.shape[1], N=B.shape[1], fill=-inf)
    for b in Dim("B"):
        for m in Dim("M"):
            for n in Dim("N"):
                for k in Dim("K"):
                    if )" +
                          guard + R"(:
                        C[b, m, n] += A[b, m, k] * B[b, n, k]
    return C
DIMS = )" + dims + R"(
def model(a: Tensor("B,S,D", role="input"), b: Tensor("B,T,D", role="input")):
    return banded(a, b, -2, 0)
)";
  return trace_program(load_program_source(src, "t.py"), {});
}

TEST(GuardedPoints, ACausalMaskCountsTheLowerTriangle) {
  // n <= m over S = T = 4: 4 + 3 + 2 + 1 = 10 of 16 (m, n) pairs; x B = 2, x K = 8: 160 MACs
  // (dense: 256).
  Graph g = guarded_graph("n <= m", R"({"B": 2, "S": 4, "T": 4, "D": 8})");
  EXPECT_EQ(g.nodes[0].macs, 160);
  // S = 1000, T = 1000: 1000 x 1001 / 2 = 500,500 pairs, x 1 x 1 (the solved rank is
  // counted by intervals, not enumerated).
  Graph big = guarded_graph("n <= m", R"({"B": 1, "S": 1000, "T": 1000, "D": 1})");
  EXPECT_EQ(big.nodes[0].macs, 500500);
}

TEST(GuardedPoints, ABandFromScalarParametersAndDisjunctions) {
  // lo <= n - m <= hi with lo = -2, hi = 0 over S = T = 5: rows m = 0..4 keep n in
  // [m - 2, m] within [0, 4]: 1 + 2 + 3 + 3 + 3 = 12 pairs.
  EXPECT_EQ(guarded_graph("lo <= n - m <= hi", R"({"B": 1, "S": 5, "T": 5, "D": 1})").nodes[0].macs,
            12);
  // Its complement, by `not`: 25 - 12 = 13; by `or`: the same 13.
  EXPECT_EQ(
      guarded_graph("not (lo <= n - m <= hi)", R"({"B": 1, "S": 5, "T": 5, "D": 1})").nodes[0].macs,
      13);
  EXPECT_EQ(guarded_graph("n - m < lo or n - m > hi", R"({"B": 1, "S": 5, "T": 5, "D": 1})")
                .nodes[0]
                .macs,
            13);
  // A guard that no point meets, and one on the batch and contraction ranks: b == 1 and
  // 2 * k + 1 < size("K") over B = 3, K = 8 keeps b = 1, k = 0..3: 4 x S x T = 4 x 4 = 16.
  EXPECT_EQ(guarded_graph("m < 0", R"({"B": 1, "S": 5, "T": 5, "D": 1})").nodes[0].macs, 0);
  EXPECT_EQ(
      guarded_graph("b == 1 and 2 * k + 1 < size(\"K\")", R"({"B": 3, "S": 2, "T": 2, "D": 8})")
          .nodes[0]
          .macs,
      16);
}

TEST(GuardedPoints, AGuardOnOneLoopNarrowsWhatTheNestReads) {
  // The last 2 keys for every query (size("N") - 2 <= n): B[b, n, k] is read at rows 3 and 4
  // of T = 5: 1 x 2 x 8 = 16 elements of 40, and the MACs are 1 x S x 2 x 8 = 64 (S = 4).
  // A[b, m, k] keeps all its 1 x 4 x 8 = 32. A guard on two loops narrows each loop to the
  // values it takes where the guard holds: n <= m over m < 4 never reaches key 4, so B is
  // read at rows 0..3: 32 elements (PyTorch's top-left causal mask with fewer queries than
  // keys).
  Graph g = guarded_graph("size(\"N\") - 2 <= n", R"({"B": 1, "S": 4, "T": 5, "D": 8})");
  const Einsum& e = g.nodes[0].einsums->back();
  ASSERT_EQ(e.inputs.size(), 2u);
  EXPECT_EQ(e.inputs[0].touched, 32);
  EXPECT_EQ(e.inputs[1].touched, 16);
  EXPECT_EQ(g.nodes[0].macs, 64);
  Graph causal = guarded_graph("n <= m", R"({"B": 1, "S": 4, "T": 5, "D": 8})");
  EXPECT_EQ(causal.nodes[0].einsums->back().inputs[1].touched, 32);
}

TEST(GuardedPoints, APaddedConvolutionSkipsThePaddingTaps) {
  // examples/ir/conv2d.py's first convolution: 3x3, stride 1, padding 1 over 32 x 32. Per
  // output row p, the taps r with 0 <= p + r - 1 < 32 number 3 except at p = 0 and p = 31
  // (2 each): 94 of 96 row taps, and as many column taps: (94/96)^2 of the dense MACs.
  Graph g = graph_from_file(testing::example("conv2d.py"), {});
  const Node* conv = nullptr;
  for (const Node& n : g.nodes)
    if (n.macs > 0 && !conv) conv = &n;
  ASSERT_NE(conv, nullptr);
  const Einsum& e = conv->einsums->back();
  ASSERT_TRUE(e.guarded);
  int64_t n = 1, c = 1, o = 1;
  for (size_t i = 0; i < e.ranks.size(); ++i) {
    if (e.ranks[i] == "N") n = e.rank_sizes[i];
    if (e.ranks[i] == "C") c = e.rank_sizes[i];
    if (e.ranks[i] == "O") o = e.rank_sizes[i];
  }
  EXPECT_EQ(e.points, n * c * o * 32 * 32 * 9);
  EXPECT_EQ(e.macs, n * c * o * 94 * 94);
}

}  // namespace
}  // namespace solar
