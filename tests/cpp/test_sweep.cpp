// Sweeps: one checked program traced and analysed at several DIMS configurations.
// Every expected number is derived by hand in the comment beside it.
#include <gtest/gtest.h>

#include <string>

#include "solar/arch/spec.h"
#include "solar/pipeline/pipeline.h"
#include "solar/pipeline/sweep.h"
#include "test_util.h"

namespace solar {
namespace {

using solar::testing::example;
using solar::testing::expect_user_error;

const std::string kArchDir = std::string(SOLAR_SOURCE_DIR) + "/configs/arch";
ArchSpec load(const std::string& name) { return load_arch_spec(kArchDir + "/" + name + ".yaml"); }

TEST(Sweep, BatchAxisOnTwoArchs) {
  const Program p = load_program(example("linear_bias_matmul.py"));
  const auto points =
      sweep(p, {{{"B", 2}}, {{"B", 4}}}, {load("H100_PCIe_paper"), load("H100_PCIe")}, {});
  ASSERT_EQ(points.size(), 4u);  // 2 configurations x 2 archs, archs innermost
  EXPECT_EQ(points[0].arch, "H100_PCIe_paper");
  EXPECT_EQ(points[1].arch, "H100_PCIe");
  // B=2 (the paper's example): 83,886,080 FLOPs, 2,033,664 / 985,088 bytes; on the paper's
  // spec fused = 83,886,080 / 102e12 = 0.8224 us (compute), unfused 1.0115 us (memory).
  EXPECT_EQ(points[0].dims.front(), (std::pair<std::string, int64_t>{"B", 2}));
  EXPECT_EQ(points[0].flops, 83886080);
  EXPECT_EQ(points[0].unfused_bytes, 2033664);
  EXPECT_EQ(points[0].fused_bytes, 985088);
  EXPECT_DOUBLE_EQ(points[0].fused_seconds, 83886080 / 102e12);
  EXPECT_EQ(points[0].fused_bottleneck.kind, "compute");
  EXPECT_EQ(points[0].unfused_bottleneck.kind, "memory");
  // B=4: MACs double (2 * 41,943,040), FLOPs 167,772,160. Fused bytes =
  // 4 * (BMK + NK + N + NP + BMP) = 4 * (131,072 + 131,072 + 512 + 32,768 + 32,768) = 1,312,768.
  // Unfused = 4 * [(BMK + NK + N + BMN) + (BMN + NP + BMP)] = 4 * [(131,072 + 131,072 + 512 +
  // 262,144) + (262,144 + 32,768 + 32,768)] = 4 * 852,480 = 3,409,920.
  EXPECT_EQ(points[2].dims.front(), (std::pair<std::string, int64_t>{"B", 4}));
  EXPECT_EQ(points[2].flops, 167772160);
  EXPECT_EQ(points[2].matrix_flops, 167772160);
  EXPECT_EQ(points[2].fused_bytes, 1312768);
  EXPECT_EQ(points[2].unfused_bytes, 3409920);
  // On H100_PCIe (tf32 378e12, 2e12 B/s): fused = max(167,772,160 / 378e12 = 0.4438 us,
  // 1,312,768 / 2e12 = 0.6564 us) = 0.6564 us, memory.
  EXPECT_DOUBLE_EQ(points[3].fused_seconds, 1312768 / 2e12);
  EXPECT_EQ(points[3].fused_bottleneck.kind, "memory");
}

TEST(Sweep, BadOverrideNamesTheConfiguration) {
  const Program p = load_program(example("linear_bias_matmul.py"));
  expect_user_error([&] { sweep(p, {{{"B", 2}}, {{"X", 3}}}, {load("H100_PCIe")}, {}); },
                    ErrorKind::kArgument, "(sweep configuration X=3)");
}

}  // namespace
}  // namespace solar
