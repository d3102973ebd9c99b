// Inverse roofline: target parsing and the paper's Table 4 pi0 column on Jetson Thor, plus
// the paper's Figure 2 program through analyze(). Every expected number is derived by hand.
#include <gtest/gtest.h>

#include <string>

#include "solar/arch/spec.h"
#include "solar/pipeline/pipeline.h"
#include "solar/sol/analysis.h"
#include "solar/sol/inverse.h"
#include "test_util.h"

namespace solar {
namespace {

using solar::testing::example;
using solar::testing::expect_user_error;

const std::string kArchDir = std::string(SOLAR_SOURCE_DIR) + "/configs/arch";
ArchSpec load(const std::string& name) { return load_arch_spec(kArchDir + "/" + name + ".yaml"); }

TEST(InverseTarget, LatencyUnits) {
  EXPECT_DOUBLE_EQ(parse_latency("2ms").seconds, 2e-3);
  EXPECT_DOUBLE_EQ(parse_latency("2ms").hertz, 500.0);  // 1 / 2 ms
  EXPECT_DOUBLE_EQ(parse_latency("500us").seconds, 500e-6);
  EXPECT_DOUBLE_EQ(parse_latency("500\xc2\xb5s").seconds, 500e-6);  // "500µs"
  EXPECT_DOUBLE_EQ(parse_latency("1.5s").seconds, 1.5);
  EXPECT_DOUBLE_EQ(parse_latency("250 ns").seconds, 250e-9);
  EXPECT_DOUBLE_EQ(parse_latency("2MS").seconds, 2e-3);  // units are case-insensitive
  EXPECT_EQ(parse_latency("2ms").text, "2ms");
}

TEST(InverseTarget, RateUnits) {
  EXPECT_DOUBLE_EQ(parse_rate("500Hz").seconds, 1.0 / 500.0);  // 2 ms
  EXPECT_DOUBLE_EQ(parse_rate("1kHz").seconds, 1e-3);
  EXPECT_DOUBLE_EQ(parse_rate("2.5 MHz").seconds, 1.0 / 2.5e6);  // 400 ns
  EXPECT_DOUBLE_EQ(parse_rate("30hz").hertz, 30.0);
}

TEST(InverseTarget, BadUnitsNameTheAcceptedForms) {
  for (const char* bad : {"2", "2 parsecs", "-1ms", "0ms", "fast", "ms", "2msec"}) {
    expect_user_error([&] { parse_latency(bad); }, ErrorKind::kArgument,
                      "expected a positive number and a unit: 2ms, 500us, 1.5s, 250ns");
  }
  expect_user_error([&] { parse_rate("500"); }, ErrorKind::kArgument,
                    "--rate '500': expected a positive number and a unit: 500Hz, 1kHz, 2.5MHz");
  expect_user_error([&] { parse_rate("2ms"); }, ErrorKind::kArgument, "500Hz, 1kHz");
}

// The paper's Table 4, pi0 column (Jetson Thor, 1,035 TFLOP/s fp4, 273 GB/s, 500 Hz):
// 4,007 GFLOP, 3.50 GB fused. A one-node graph with those counts: nvfp4 MACs
// 2,003,500,000,000 (FLOPs 2 x that = 4.007e12); an int8 weight of 3,499,000,000 bytes and an
// fp32 output of 250,000 elements (1,000,000 bytes): 3.5e9 bytes, both modes.
Graph pi0_like() {
  Graph g;
  TensorInfo w;
  w.id = 0;
  w.name = "w";
  w.shape = {3499000000};
  w.dtype = DType::kInt8;
  w.role = Role::kWeight;
  w.storage = 0;
  w.consumers = {0};
  TensorInfo y;
  y.id = 1;
  y.name = "y";
  y.shape = {250000};
  y.storage = 1;
  y.producer = 0;
  y.is_output = true;
  g.tensors = {w, y};
  g.inputs = {0};
  g.outputs = {1};
  Node n;
  n.name = "vla#0";
  n.inputs = {0};
  n.input_bytes = {3499000000};
  n.outputs = {1};
  n.macs = 2003500000000;
  n.matrix_dtype = DType::kNvfp4;
  n.bytes_read = 3499000000;
  n.bytes_written = 1000000;
  g.nodes = {n};
  return g;
}

TEST(Inverse, PaperTable4Pi0Column) {
  const Analysis a = analyze(pi0_like(), load("Jetson_Thor"), {});
  const Inverse inv = inverse_roofline(a, parse_rate("500Hz"));
  // unfused, fused, and cache_aware (Jetson Thor's spec has an on-chip level).
  ASSERT_EQ(inv.modes.size(), 3u);
  EXPECT_EQ(inv.modes[0].mode, "unfused");
  EXPECT_EQ(inv.modes[2].mode, "cache_aware");
  const InverseMode& f = inv.modes[1];
  EXPECT_EQ(f.mode, "fused");
  EXPECT_EQ(f.bytes, 3500000000);
  EXPECT_EQ(f.flops, 4007000000000);
  // Fused SOL = max(4.007e12 / 1035e12 = 3.87 ms, 3.5e9 / 273e9 = 12.82 ms) = 12.82 ms, memory.
  EXPECT_DOUBLE_EQ(f.seconds, 3.5e9 / 273e9);
  EXPECT_EQ(f.bottleneck.kind, "memory");
  // beta_min = 3.50 GB / 2 ms = 1,750 GB/s; 1,750 / 273 = 6.41x (the paper: "6.4x").
  EXPECT_DOUBLE_EQ(f.bytes_per_second_min, 1.75e12);
  EXPECT_NEAR(f.dram_improvement, 6.410, 5e-4);
  // Pi_min = 4,007 GFLOP / 2 ms = 2,003.5 TFLOP/s; / 1,035 = 1.93575x (the paper: 2,004, "1.9x").
  EXPECT_DOUBLE_EQ(f.flops_per_second_min, 2.0035e15);
  EXPECT_DOUBLE_EQ(f.matrix_flops_per_second_min, 2.0035e15);
  EXPECT_DOUBLE_EQ(f.vector_flops_per_second_min, 0.0);
  EXPECT_NEAR(f.compute_improvement, 1.93575, 5e-6);
  EXPECT_NEAR(f.matrix_improvement, 1.93575, 5e-6);  // one math mode: the same factor
  // Speedup required = 12.82 ms / 2 ms = 6.41x; attainable 1 / 12.82 ms = 78.0 Hz (paper 78.0).
  EXPECT_NEAR(f.speedup_required, 6.410, 5e-4);
  EXPECT_FALSE(f.met);
  EXPECT_NEAR(f.attainable_hertz, 78.0, 0.05);
  EXPECT_DOUBLE_EQ(inv.dram_bytes_per_second, 273e9);
  EXPECT_DOUBLE_EQ(inv.matrix_flops_per_second, 1035e12);
}

TEST(Inverse, Figure2ProgramOnThePaperSpec) {
  const Graph g = trace_program(load_program(example("linear_bias_matmul.py")), {});
  const Analysis a = analyze(g, load("H100_PCIe_paper"), {});
  const Inverse inv = inverse_roofline(a, parse_latency("1us"));
  const InverseMode& u = inv.modes[0];
  const InverseMode& f = inv.modes[1];
  // Unfused: 2,033,664 B / 1 us = 2.033664e12 B/s; / 2.0388e12 = 0.9975x. SOL 1.0115 us > 1 us:
  // speedup required 1.0115x, not met (sum of per-node maxima exceeds each term's sum).
  EXPECT_DOUBLE_EQ(u.bytes_per_second_min, 2.033664e12);
  EXPECT_NEAR(u.dram_improvement, 0.99748, 5e-6);
  EXPECT_NEAR(u.speedup_required, 1.0115, 5e-5);
  EXPECT_FALSE(u.met);
  // Fused: 985,088 B / 1 us = 9.85088e11 B/s, / 2.0388e12 = 0.4832x; 83,886,080 FLOP / 1 us =
  // 8.388608e13 FLOP/s, / 102e12 = 0.8224x. SOL 0.8224 us <= 1 us: met.
  EXPECT_DOUBLE_EQ(f.bytes_per_second_min, 9.85088e11);
  EXPECT_NEAR(f.dram_improvement, 0.48317, 5e-6);
  EXPECT_DOUBLE_EQ(f.flops_per_second_min, 8.388608e13);
  EXPECT_NEAR(f.compute_improvement, 0.82241, 5e-6);
  EXPECT_NEAR(f.speedup_required, 0.82241, 5e-6);
  EXPECT_TRUE(f.met);
  // Attainable rate 1 / 0.8224 us = 1.216 MHz.
  EXPECT_NEAR(f.attainable_hertz / 1e6, 1.2159, 5e-5);
}

}  // namespace
}  // namespace solar
