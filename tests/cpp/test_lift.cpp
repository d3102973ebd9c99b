#include <gtest/gtest.h>

#include "solar/pipeline/pipeline.h"
#include "solar/sol/analysis.h"
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

}  // namespace
}  // namespace solar
