// The starting state (docs/sol-modes.md, "Starting state"): the default bound starts inputs
// and weights in DRAM; --warm lets the last-level cache serve up to
// C + min(C, in-place bytes) of the fused and cache-aware modes' DRAM bytes, at its
// bandwidth. Every expected number is derived by hand in the comment beside it.
#include <gtest/gtest.h>

#include <string>

#include "solar/arch/spec.h"
#include "solar/graph/graph.h"
#include "solar/sol/analysis.h"

namespace solar {
namespace {

// y = x + w over 256 fp32 elements: x 1,024 B (input), w 1,024 B (weight), y 1,024 B (the
// output); 256 vector FLOPs. Fused bytes: x + w + y = 3,072 B.
Graph add_graph() {
  Graph g;
  auto tensor = [&](const std::string& name, Role role) {
    TensorInfo t;
    t.id = static_cast<TensorId>(g.tensors.size());
    t.name = name;
    t.shape = {256};
    t.dtype = DType::kFp32;
    t.role = role;
    t.storage = t.id;
    g.tensors.push_back(t);
    if (role == Role::kInput || role == Role::kWeight) g.inputs.push_back(t.id);
    return t.id;
  };
  const TensorId x = tensor("x", Role::kInput);
  const TensorId w = tensor("w", Role::kWeight);
  const TensorId y = tensor("y", Role::kActivation);
  Node n;
  n.id = 0;
  n.name = "add#0";
  n.inputs = {x, w};
  n.input_bytes = {1024, 1024};
  n.outputs = {y};
  n.bytes_read = 2048;
  n.bytes_written = 1024;
  n.flops.add = 256;
  g.tensors[static_cast<size_t>(y)].producer = 0;
  g.tensors[static_cast<size_t>(x)].consumers.push_back(0);
  g.tensors[static_cast<size_t>(w)].consumers.push_back(0);
  g.nodes.push_back(n);
  g.tensors[static_cast<size_t>(y)].is_output = true;
  g.outputs.push_back(y);
  return g;
}

// Round numbers: vector fp32 1e12 FLOP/s, DRAM 1e12 B/s; an L2 of `capacity` bytes at
// `bandwidth` B/s (0: none given).
ArchSpec spec_with_l2(double capacity, double bandwidth) {
  ArchSpec spec;
  spec.name = "round";
  spec.matrix_flops_per_second["fp32"] = {2e12, "test"};
  spec.vector_flops_per_second["fp32"] = {1e12, "test"};
  spec.dram_bytes_per_second = {1e12, "test"};
  MemoryLevel l2;
  l2.name = "L2";
  l2.capacity_bytes = capacity;
  if (bandwidth > 0) l2.bytes_per_second = bandwidth;
  spec.on_chip = {l2};
  spec.cache_level = "L2";
  return spec;
}

AnalysisOptions warm() {
  AnalysisOptions o;
  o.warm = true;
  return o;
}

TEST(StartingState, ColdByDefaultAndSaysSo) {
  const Analysis a = analyze(add_graph(), spec_with_l2(4096, 4e12), {});
  EXPECT_FALSE(a.starting_state.warm);
  EXPECT_NE(a.starting_state.assumption.find("inputs and weights start in DRAM"),
            std::string::npos);
  // 3,072 B / 1e12 B/s = 3.072 ns > vector 256 / 1e12 = 0.256 ns.
  EXPECT_EQ(a.fused.bytes, 3072);
  EXPECT_EQ(a.fused.llc_bytes, 0);
  EXPECT_DOUBLE_EQ(a.fused.seconds, 3072 / 1e12);
}

TEST(StartingState, WarmInputsThatFitAreServedByTheCache) {
  // C = 4,096 B >= 3,072 B: all of x, w and y stay in L2 between runs. DRAM 0 B; L2 serves
  // 3,072 B at 4e12 B/s = 0.768 ns > vector 0.256 ns: the bound is 0.768 ns, memory (llc).
  const Analysis a = analyze(add_graph(), spec_with_l2(4096, 4e12), warm());
  EXPECT_TRUE(a.starting_state.warm);
  EXPECT_EQ(a.starting_state.level, "L2");
  EXPECT_EQ(a.starting_state.served_max_bytes, 4096);  // C + min(C, 0 in-place bytes)
  EXPECT_EQ(a.fused.bytes, 0);
  EXPECT_EQ(a.fused.llc_bytes, 3072);
  EXPECT_DOUBLE_EQ(a.fused.llc_seconds, 3072 / 4e12);
  EXPECT_DOUBLE_EQ(a.fused.seconds, 3072 / 4e12);
  EXPECT_EQ(a.fused.bottleneck.kind, "memory");
  EXPECT_EQ(a.fused.bottleneck.unit, "llc");
  // The cache-aware bound of one elementwise node is its compulsory 3,072 B (cold), so warm
  // it is the same split.
  ASSERT_TRUE(a.cache.available);
  EXPECT_EQ(a.cache_aware.bytes, 0);
  EXPECT_EQ(a.cache_aware.llc_bytes, 3072);
  EXPECT_DOUBLE_EQ(a.cache_aware.seconds, 3072 / 4e12);
  // The unfused mode stays cold: 3,072 B / 1e12.
  EXPECT_EQ(a.unfused.bytes, 3072);
  EXPECT_DOUBLE_EQ(a.unfused.seconds, 3072 / 1e12);
}

TEST(StartingState, WarmInputsThatDoNotFitSaveTheCapacity) {
  // C = 1,024 B < 3,072 B: at most 1,024 B stay on chip. DRAM 3,072 - 1,024 = 2,048 B / 1e12
  // = 2.048 ns; L2 1,024 B / 4e12 = 0.256 ns; the bound is 2.048 ns, memory (dram).
  const Analysis a = analyze(add_graph(), spec_with_l2(1024, 4e12), warm());
  EXPECT_EQ(a.fused.bytes, 2048);
  EXPECT_EQ(a.fused.llc_bytes, 1024);
  EXPECT_DOUBLE_EQ(a.fused.seconds, 2048 / 1e12);
  EXPECT_EQ(a.fused.bottleneck.unit, "dram");
}

TEST(StartingState, WarmWithoutABandwidthChargesTheCacheNoTime) {
  // C = 4,096 B, no L2 bandwidth: DRAM 0 B, the served 3,072 B cost 0 s; the bound is the
  // vector time 256 / 1e12 = 0.256 ns, and the assumption says why.
  const Analysis a = analyze(add_graph(), spec_with_l2(4096, 0), warm());
  EXPECT_EQ(a.fused.llc_bytes, 3072);
  EXPECT_DOUBLE_EQ(a.fused.llc_seconds, 0.0);
  EXPECT_DOUBLE_EQ(a.fused.seconds, 256 / 1e12);
  EXPECT_NE(a.starting_state.assumption.find("no L2 bandwidth"), std::string::npos);
}

TEST(StartingState, InPlaceBytesAreSavedTwice) {
  // A 256-element fp32 cache (1,024 B, an input) updated in place at 64 elements from src
  // (256 B, an input), then read whole by a sum into s (4 B, the output). Fused bytes
  // (docs/sol-modes.md, "In-place updates"): src 256 + the cache's reads less the written
  // elements 1,024 - 256 = 768 + the written elements W = 256 + s 4 = 1,284 B.
  Graph g;
  auto tensor = [&](const std::string& name, Shape shape, Role role) {
    TensorInfo t;
    t.id = static_cast<TensorId>(g.tensors.size());
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = DType::kFp32;
    t.role = role;
    t.storage = t.id;
    g.tensors.push_back(t);
    if (role == Role::kInput || role == Role::kWeight) g.inputs.push_back(t.id);
    return t.id;
  };
  const TensorId cache = tensor("cache", {256}, Role::kInput);
  const TensorId src = tensor("src", {64}, Role::kInput);
  const TensorId updated = tensor("updated", {256}, Role::kActivation);
  const TensorId s = tensor("s", {1}, Role::kActivation);
  g.tensors[static_cast<size_t>(updated)].storage = cache;  // written into cache's memory
  Node update;
  update.id = 0;
  update.name = "update#0";
  update.kind = NodeKind::kDataMovement;
  update.inputs = {src};
  update.input_bytes = {256};
  update.outputs = {updated};
  update.bytes_read = 256;
  update.bytes_written = 256;
  g.tensors[static_cast<size_t>(updated)].producer = 0;
  g.nodes.push_back(update);
  Node sum;
  sum.id = 1;
  sum.name = "sum#0";
  sum.inputs = {updated};
  sum.input_bytes = {1024};
  sum.outputs = {s};
  sum.bytes_read = 1024;
  sum.bytes_written = 4;
  sum.flops.add = 256;
  g.tensors[static_cast<size_t>(s)].producer = 1;
  g.nodes.push_back(sum);
  g.tensors[static_cast<size_t>(s)].is_output = true;
  g.outputs.push_back(s);
  AnalysisOptions cold;
  cold.cache_aware = false;
  EXPECT_EQ(analyze(g, spec_with_l2(512, 4e12), cold).fused.bytes, 1284);
  // C = 512 B: each resident byte of the updated cache saves its read and its write, so at
  // most C + min(C, W) = 512 + 256 = 768 B are served; DRAM 1,284 - 768 = 516 B.
  AnalysisOptions o = warm();
  o.cache_aware = false;
  const Analysis a = analyze(g, spec_with_l2(512, 4e12), o);
  EXPECT_EQ(a.starting_state.served_max_bytes, 768);
  EXPECT_EQ(a.fused.llc_bytes, 768);
  EXPECT_EQ(a.fused.bytes, 516);
  // The assumption prints the capacity with separators.
  EXPECT_NE(a.starting_state.assumption.find("up to 512 B"), std::string::npos);
}

TEST(StartingState, WarmWithoutACacheLevelIsUnchanged) {
  ArchSpec spec = spec_with_l2(4096, 4e12);
  spec.on_chip.clear();
  spec.cache_level.clear();
  const Analysis a = analyze(add_graph(), spec, warm());
  EXPECT_FALSE(a.starting_state.warm);
  EXPECT_NE(a.starting_state.assumption.find("--warm needs a last-level cache"), std::string::npos);
  EXPECT_EQ(a.fused.bytes, 3072);
  EXPECT_EQ(a.fused.llc_bytes, 0);
  EXPECT_DOUBLE_EQ(a.fused.seconds, 3072 / 1e12);
}

}  // namespace
}  // namespace solar
