// The fft builtin (docs/ir.md, fft): shapes, bytes and FLOPs from the tracer, values from the
// executor, and its errors.
#include <gtest/gtest.h>

#include <cstring>

#include "solar/exec/executor.h"
#include "solar/graph/attrs.h"
#include "solar/pipeline/pipeline.h"
#include "test_util.h"

namespace solar {
namespace {

TEST(FftFlops, JohnsonFrigoCountsAtPowersOfTwo) {
  // Complex data, n = 16 (m = 4): 34/9·64 - 124/27·16 - 8 - 8/9 + 16/27 + 8 = 168, the
  // modified split radix's published count; the formula with (-1)^m = +1 gives 168 too.
  EXPECT_EQ(fft_flops(16, false), 168);
  // n = 4: 30.22 - 18.37 - 4.44 + 0.59 + 8 = 16, the 4-point DFT's 16 real additions.
  EXPECT_EQ(fft_flops(4, false), 16);
  // Real data, n = 16: 17/9·64 - 89/27·16 - 40/9 + 8/27 + 2 = 120.89 - 52.74 - 4.44 + 2.30
  // = 66.
  EXPECT_EQ(fft_flops(16, true), 66);
  // Nothing to do for one point; a 2-point real DFT is clamped at 0 (the formula is
  // negative there: 3.78 - 6.59 - 1.11 + 2.30 = -1.63).
  EXPECT_EQ(fft_flops(1, false), 0);
  EXPECT_EQ(fft_flops(2, true), 0);
}

TEST(Fft, R2cC2rC2cShapesBytesAndFlops) {
  // x [B=3, L=16] fp32 (192 B). r2c along L: 16/2 + 1 = 9 bins of (re, im): [3, 9, 2]
  // (216 B), 3 real transforms of 16 points: 3 · 66 = 198 FLOPs. c2r back to n = 16: reads
  // 216 B, writes 192 B, 198 FLOPs. c2c of the 9 bins: [3, 9, 2], 3 · fft_flops(9, complex)
  // = 3 · floor(34·log2 9 - 124/3 - 20/9·log2 9 + 16/27 + 8) = 3 · floor(67.99) = 201.
  const char* src = R"(
DIMS = {"B": 3, "L": 16}
def model(x: Tensor("B,L")):
    y = fft(x, dim="L", kind="r2c", scale=0.5)
    z = fft(y, dim=1, kind="c2r", n=16)
    w = fft(y, dim=1, kind="c2c", inverse=1)
    v = fft(x, dim="L", kind="r2c", onesided=0)
    return z, w, v
)";
  const Graph g = trace_program(load_program_source(src, "t.py"), {});
  ASSERT_EQ(g.nodes.size(), 4u);
  auto shape = [&](const Node& n) { return g.tensors[static_cast<size_t>(n.outputs[0])].shape; };
  EXPECT_EQ(shape(g.nodes[0]), (Shape{3, 9, 2}));
  EXPECT_EQ(g.nodes[0].input_bytes, (Shape{192}));
  EXPECT_EQ(g.nodes[0].bytes_written, 216);
  EXPECT_EQ(g.nodes[0].flops.add, 198);
  EXPECT_EQ(fft_flops(9, false), 67);
  EXPECT_EQ(shape(g.nodes[1]), (Shape{3, 16}));
  EXPECT_EQ(g.nodes[1].input_bytes, (Shape{216}));
  EXPECT_EQ(g.nodes[1].bytes_written, 192);
  EXPECT_EQ(g.nodes[1].flops.add, 198);
  EXPECT_EQ(shape(g.nodes[2]), (Shape{3, 9, 2}));
  EXPECT_EQ(g.nodes[2].flops.add, 201);
  EXPECT_EQ(shape(g.nodes[3]), (Shape{3, 16, 2}));  // two-sided: all 16 bins
  const FftAttrs a = FftAttrs::of(g.nodes[0]);
  EXPECT_EQ(a.kind, FftKind::kR2c);
  EXPECT_EQ(a.n, 16);
  EXPECT_DOUBLE_EQ(a.scale, 0.5);
  EXPECT_TRUE(FftAttrs::of(g.nodes[1]).inverse);
}

TEST(Fft, ExecutorComputesTheTransforms) {
  // x = [1, 2, 3, 4]: its DFT is [10, -2 + 2i, -2, -2 - 2i]; r2c keeps bins 0..2, scaled
  // by 0.5: [5, -1 + i, -1]. c2r of those (n = 4, unnormalised inverse) is 4 · 0.5 · x =
  // 2x; scale 0.25 gives 0.5x = [0.5, 1, 1.5, 2]. c2c (forward) of y = [5, -1 + i, -1]:
  // X0 = the sum of y = 3 + i, and the sum of all X_k = 3 · y_0 = 15 (3 times the inverse
  // transform at 0).
  const char* src = R"(
DIMS = {"L": 4}
def model(x: Tensor("L")):
    y = fft(x, dim="L", kind="r2c", scale=0.5)
    z = fft(y, dim=0, kind="c2r", n=4, scale=0.25)
    w = fft(y, dim=0, kind="c2c")
    return y, z, w
)";
  const Program p = load_program_source(src, "t.py");
  const Graph g = trace_program(p, {});
  Array x = Array::allocate(DType::kFp32, {4});
  const float xs[] = {1, 2, 3, 4};
  std::memcpy(x.data, xs, sizeof xs);
  const std::vector<Array> out = execute(p, g, {x}, ExecOptions{});
  ASSERT_EQ(out.size(), 3u);
  const auto* y = static_cast<const float*>(out[0].data);
  const float want_y[] = {5, 0, -1, 1, -1, 0};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y[i], want_y[i], 1e-6) << i;
  const auto* z = static_cast<const float*>(out[1].data);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(z[i], 0.5 * xs[i], 1e-6) << i;
  const auto* w = static_cast<const float*>(out[2].data);
  EXPECT_NEAR(w[0], 3, 1e-6);  // X0 = 5 + (-1 + i) + (-1) = 3 + i
  EXPECT_NEAR(w[1], 1, 1e-6);
  EXPECT_NEAR(w[0] + w[2] + w[4], 15, 1e-5);
  EXPECT_NEAR(w[1] + w[3] + w[5], 0, 1e-5);
}

TEST(Fft, ErrorsNameWhatIsWrong) {
  auto trace = [](const std::string& body) {
    return [body] {
      trace_program(load_program_source("DIMS = {\"B\": 2, \"L\": 8}\n"
                                        "def model(x: Tensor(\"B,L\"), c: Tensor(\"B,L\", "
                                        "dtype=\"bf16\")):\n    return " +
                                            body + "\n",
                                        "t.py"),
                    {});
    };
  };
  testing::expect_user_error(trace(R"(fft(x, dim="L", kind="dct"))"), ErrorKind::kShape,
                             "fft(): kind \"dct\" is none of \"r2c\", \"c2r\", \"c2c\"");
  testing::expect_user_error(trace(R"(fft(c, dim="L", kind="r2c"))"), ErrorKind::kType,
                             "fft(): 'c' is bf16; fft takes fp32 or fp64");
  testing::expect_user_error(
      trace(R"(fft(x, dim="B", kind="c2c"))"), ErrorKind::kShape,
      "fft(): a complex input holds (real, imaginary) pairs in a last dim of size 2");
  testing::expect_user_error(trace(R"(fft(x, dim="L", kind="r2c", n=16))"), ErrorKind::kShape,
                             "fft(): n must be the length of dim 'L' (8): pad or slice x first");
  testing::expect_user_error(
      trace(R"(fft(fft(x, dim="L", kind="r2c"), dim=1, kind="c2r", n=10))"), ErrorKind::kShape,
      "fft(): a c2r transform of n = 10 reads n/2 + 1 bins, but dim 'L' holds 5");
  testing::expect_user_error(trace(R"(fft(x, dim="L", kind="r2c", onesided=2))"), ErrorKind::kShape,
                             "fft(): inverse and onesided must be 0 or 1");
  testing::expect_user_error(trace(R"(fft(x, dim="L", kind="r2c", inverse=1))"), ErrorKind::kShape,
                             "fft(): an r2c transform is a forward one");
  testing::expect_user_error(
      trace(R"(fft(fft(x, dim="L", kind="r2c"), dim=1, kind="c2r", n=8, inverse=0))"),
      ErrorKind::kShape, "fft(): a c2r transform is an inverse one");
  testing::expect_user_error(trace(R"(fft(x, dim="L", kind="r2c", scale="half"))"),
                             ErrorKind::kShape, "fft(): scale must be a finite number");
}

}  // namespace
}  // namespace solar
