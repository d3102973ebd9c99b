// Quantisation recipes (sol/quantize.h, docs/sol-modes.md "Quantisation recipes") on a small
// bf16 MLP whose every number is derived by hand in the comments.
#include <gtest/gtest.h>

#include <string>

#include "solar/arch/spec.h"
#include "solar/pipeline/pipeline.h"
#include "solar/sol/analysis.h"
#include "solar/sol/quantize.h"
#include "solar/trace/tracer.h"
#include "test_util.h"

namespace solar {
namespace {

const std::string kArchDir = std::string(SOLAR_SOURCE_DIR) + "/configs/arch";
ArchSpec load(const std::string& name) { return load_arch_spec(kArchDir + "/" + name + ".yaml"); }

// C = A @ B.T in bf16, the product every program below calls.
const std::string kMmNt = R"(
@kernel
def mm_nt(A: Tensor("M,K"), B: Tensor("N,K")) -> Tensor("M,N", dtype="bf16"):
    C = Tensor(M=A.shape[0], N=B.shape[0], dtype="bf16")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[n, k]
    return C
)";

// x [16, 256] -> h = x * g -> u = h @ w1.T [16, 512] -> r = relu(u) -> d = r @ w2.T [16, 256]
// -> y = x + d; beside it att = h @ x.T [16, 16], a product of two activations. All bf16.
// Nodes: 0 scale, 1 mm_nt(h, w1), 2 relu, 3 mm_nt(r, w2), 4 add, 5 mm_nt(h, x).
Graph mlp() {
  const std::string src = kMmNt + R"(
@kernel
def scale(X: Tensor("A,B"), G: Tensor("B")) -> Tensor("A,B", dtype="bf16"):
    Y = Tensor(A=X.shape[0], B=X.shape[1], dtype="bf16")
    for i in Dim("A", parallel=True):
        for j in Dim("B", parallel=True):
            Y[i, j] = X[i, j] * G[j]
    return Y
@kernel
def relu(X: Tensor("A,B")) -> Tensor("A,B", dtype="bf16"):
    Y = Tensor(A=X.shape[0], B=X.shape[1], dtype="bf16")
    for i in Dim("A", parallel=True):
        for j in Dim("B", parallel=True):
            Y[i, j] = max(X[i, j], 0.0)
    return Y
@kernel
def add(X: Tensor("A,B"), Z: Tensor("A,B")) -> Tensor("A,B", dtype="bf16"):
    Y = Tensor(A=X.shape[0], B=X.shape[1], dtype="bf16")
    for i in Dim("A", parallel=True):
        for j in Dim("B", parallel=True):
            Y[i, j] = X[i, j] + Z[i, j]
    return Y
DIMS = {"T": 16, "D": 256, "F": 512}
def model(x: Tensor("T,D", role="input", dtype="bf16"), g: Tensor("D", role="weight", dtype="bf16"),
          w1: Tensor("F,D", role="weight", dtype="bf16"),
          w2: Tensor("D,F", role="weight", dtype="bf16")):
    h = scale(x, g)
    r = relu(mm_nt(h, w1))
    return add(x, mm_nt(r, w2)), mm_nt(h, x)
)";
  return trace_program(load_program_source(src, "mlp.py"), {});
}

// Unquantised, for reference: weights 2 x 512 x 256 x 2 B = 524,288 B; fused bytes = x 8,192
// + g 512 + weights 524,288 + outputs y 8,192 and att 16 x 16 x 2 = 512: 541,696.
TEST(Quantize, TheMlpAsWritten) { EXPECT_EQ(fused_bytes(mlp()), 541696); }

TEST(Quantize, W4a16StoresInt4WeightsWithGroupScalesAndKeepsBf16Macs) {
  const Graph g = mlp();
  const Quantized q = quantize(g, parse_quant_recipe("w4a16"));
  // Nodes 1 and 3 read a weight; node 5 multiplies two activations.
  ASSERT_EQ(q.report.changes.size(), 2u);
  ASSERT_EQ(q.report.skipped.size(), 1u);
  EXPECT_EQ(q.report.skipped[0].node, 5);
  EXPECT_EQ(q.report.skipped[0].reason, "no operand is a weight");
  EXPECT_EQ(q.report.weights, "int4, one fp16 scale per 128 of K");
  // w1 [512, 256]: codes 131,072 x 4 bits = 65,536 B; scales 512 rows x 256/128 = 1,024 fp16
  // = 2,048 B. w2 [256, 512]: 65,536 B and 256 x 512/128 = 1,024 scales = 2,048 B.
  EXPECT_EQ(q.report.weight_bytes_before, 524288);
  EXPECT_EQ(q.report.weight_bytes_after, 2 * (65536 + 2048));
  const Node& up = q.graph.nodes[1];
  EXPECT_EQ(up.matrix_dtype, DType::kBf16);  // weight-only: the activations' format
  // Each code converted once (131,072 `other`); scales applied per output and K-group: MACs
  // 16 x 512 x 256 = 2,097,152, / 128 = 16,384 mul (< 131,072 per weight element).
  EXPECT_EQ(up.flops.other - g.nodes[1].flops.other, 131072);
  EXPECT_EQ(up.flops.mul - g.nodes[1].flops.mul, 16384);
  // Node 1 reads h (8,192 B), w1's codes and scales.
  EXPECT_EQ(up.bytes_read, 8192 + 65536 + 2048);
  EXPECT_EQ(q.report.changes[0].bytes_before, 8192 + 262144);
  EXPECT_EQ(q.report.changes[0].bytes_after, 8192 + 65536 + 2048);
  // Fused: x 8,192 + g 512 + 2 x (65,536 + 2,048) + outputs 8,704 = 152,576.
  EXPECT_EQ(fused_bytes(q.graph), 152576);
  // The graph it was made from is unchanged.
  EXPECT_EQ(fused_bytes(g), 541696);
}

TEST(Quantize, W4a4QuantisesActivationsWhereTheyAreMadeOrInThePrologue) {
  const Graph g = mlp();
  const Quantized q = quantize(g, parse_quant_recipe("w4a4"));
  ASSERT_EQ(q.report.changes.size(), 2u);
  // h is also read by node 5, which stays bf16: node 1 quantises it as it reads it (16 x 256
  // = 4,096 elements: 4,096 compare, mul and other; 16 rows x 256/16 = 256 scales: 256 div).
  const QuantChange& up = q.report.changes[0];
  EXPECT_TRUE(up.prologue);
  EXPECT_EQ(up.matrix_after, DType::kNvfp4);
  const Node& n1 = q.graph.nodes[1];
  EXPECT_EQ(n1.flops.compare - g.nodes[1].flops.compare, 4096);
  EXPECT_EQ(n1.flops.div - g.nodes[1].flops.div, 256);
  // It reads h as bf16 (8,192 B), w1 at 4 bits (65,536 B) and one e4m3 scale per 16
  // (131,072 / 16 = 8,192 B).
  EXPECT_EQ(n1.bytes_read, 8192 + 65536 + 8192);
  // r is read only by node 3: relu writes it as e2m1 codes (8,192 x 4 bits = 4,096 B, not
  // 16,384) and 16 x 512/16 = 512 e4m3 scales (512 B), and does the quantiser's work.
  const QuantChange& down = q.report.changes[1];
  EXPECT_FALSE(down.prologue);
  const Node& relu = q.graph.nodes[2];
  EXPECT_EQ(relu.bytes_written, 4096 + 512);
  EXPECT_EQ(relu.flops.mul - g.nodes[2].flops.mul, 8192);
  EXPECT_EQ(relu.flops.div - g.nodes[2].flops.div, 512);
  EXPECT_EQ(q.graph.nodes[3].bytes_read, 4096 + 512 + 65536 + 8192);
  // Block scales are applied by the MMA: node 3 gains no FLOPs.
  EXPECT_EQ(q.graph.nodes[3].flops.total(), g.nodes[3].flops.total());
  // Weights: 2 x (65,536 + 8,192) = 147,456 B; fused: 8,192 + 512 + 147,456 + 8,704.
  EXPECT_EQ(q.report.weight_bytes_after, 147456);
  EXPECT_EQ(fused_bytes(q.graph), 164864);
}

TEST(Quantize, W8a8ScalesEachOutputInTheEpilogue) {
  const Graph g = mlp();
  const Quantized q = quantize(g, parse_quant_recipe("w8a8"));
  // Per-channel and per-token fp32 scales: 2 mul per output, 16 x 512 = 8,192 outputs of
  // node 1, plus the prologue's 4,096 mul quantising h.
  EXPECT_EQ(q.graph.nodes[1].flops.mul - g.nodes[1].flops.mul, 2 * 8192 + 4096);
  EXPECT_EQ(q.graph.nodes[1].matrix_dtype, DType::kInt8);
  // w1: 131,072 B of codes and 512 fp32 scales (2,048 B); w2: 131,072 B and 256 (1,024 B).
  EXPECT_EQ(q.report.weight_bytes_after, 131072 + 2048 + 131072 + 1024);
}

TEST(Quantize, TheAnalysisPricesTheRecipeAndSaysSo) {
  const Graph g = mlp();
  AnalysisOptions options;
  options.cache_aware = false;
  options.quantize = parse_quant_recipe("w4a4");
  const Analysis a = analyze(g, load("B200"), options);
  ASSERT_TRUE(a.quantization.has_value());
  EXPECT_EQ(a.quantization->changes.size(), 2u);
  EXPECT_EQ(a.fused.bytes, 164864);
  // Two of three contraction nodes in fp4 at B200's 9e15 (its spec), 4,194,304 MACs; node 5
  // (16 x 16 x 256 = 65,536 MACs) in bf16.
  EXPECT_EQ(a.math_modes.front().mode, "fp4");
  EXPECT_EQ(a.math_modes.front().reason, "--quantize w4a4");
  EXPECT_DOUBLE_EQ(a.math_modes.front().matrix_flops_per_second, 9.0e15);
  EXPECT_EQ(a.math_modes.front().macs, 4194304);
  // Without the recipe the graph's own analysis: no report, the bf16 weights' bytes.
  options.quantize.reset();
  const Analysis plain = analyze(g, load("B200"), options);
  EXPECT_FALSE(plain.quantization.has_value());
  EXPECT_EQ(plain.fused.bytes, 541696);
}

TEST(Quantize, TheBestScheduleCarriesTheScalesToo) {
  // The scales are read outside the nests: the schedule's fixed step per node moves them, so
  // the achievable traffic is never below the bound (164,864 B, the fused bytes above; the
  // whole MLP fits B200's L2).
  AnalysisOptions options;
  options.quantize = parse_quant_recipe("w4a4");
  const Analysis a = analyze(mlp(), load("B200"), options);
  ASSERT_TRUE(a.cache.available);
  EXPECT_EQ(a.cache_aware.bytes, 164864);
  ASSERT_TRUE(a.cache_schedule.found);
  EXPECT_EQ(a.cache_schedule.bytes, 164864);
}

TEST(Quantize, AWeightReadByAnythingElseStaysAsItIs) {
  // w is read by the product and returned: the recipe leaves it, and says why.
  const std::string src = kMmNt + R"(
DIMS = {"M": 4, "N": 8, "K": 32}
def model(x: Tensor("M,K", role="input", dtype="bf16"), w: Tensor("N,K", role="weight", dtype="bf16")):
    return mm_nt(x, w), w
)";
  const Graph g = trace_program(load_program_source(src, "tied.py"), {});
  const Quantized q = quantize(g, parse_quant_recipe("w4a16"));
  EXPECT_TRUE(q.report.changes.empty());
  ASSERT_EQ(q.report.skipped.size(), 1u);
  EXPECT_EQ(q.report.skipped[0].reason, "'w' is an output of the graph");
}

// One decode step of one head: the cache k [32, 16] and the step's new key [1, 16] are
// concatenated, scaled by 1/4 (PyTorch's attention scales the keys by sqrt(scale)) and
// multiplied by the query [1, 16]; all bf16. Nodes: 0 concat, 1 scale, 2 mm_nt.
Graph decode_step() {
  const std::string src = kMmNt + R"(
@kernel
def scale(X: Tensor("A,B"), s: float) -> Tensor("A,B", dtype="bf16"):
    Y = Tensor(A=X.shape[0], B=X.shape[1], dtype="bf16")
    for i in Dim("A", parallel=True):
        for j in Dim("B", parallel=True):
            Y[i, j] = X[i, j] * s
    return Y
DIMS = {"S": 32, "D": 16, "O": 1}
def model(q: Tensor("O,D", role="input", dtype="bf16"), cache: Tensor("S,D", role="input", dtype="bf16"),
          k: Tensor("O,D", role="input", dtype="bf16")):
    return mm_nt(q, scale(concat([cache, k], dim="S"), 0.25))
)";
  return trace_program(load_program_source(src, "decode.py"), {});
}

TEST(Quantize, AnFp8KvCacheIsStoredAndMultipliedInFp8) {
  const Graph g = decode_step();
  // As written: q 32 B + cache 32 x 16 x 2 = 1,024 B + k 32 B + scores [1, 33] 66 B.
  EXPECT_EQ(fused_bytes(g), 1154);
  const Quantized q = quantize(g, parse_quant_recipe("", "fp8"));
  ASSERT_EQ(q.report.kv_inputs, std::vector<std::string>{"cache"});
  EXPECT_EQ(q.report.kv_bytes_before, 1024);
  EXPECT_EQ(q.report.kv_bytes_after, 512);  // 512 e4m3 codes, one fp32 scale per tensor
  // The concat writes 33 x 16 = 528 codes (not 1,056 B) and quantises the new key: 16
  // elements, a max, a multiply and a rounding each, and one division (one scale).
  EXPECT_EQ(q.graph.nodes[0].bytes_written, 528);
  EXPECT_EQ(q.graph.nodes[0].flops.compare, 16);
  EXPECT_EQ(q.graph.nodes[0].flops.div, 1);
  // The product reads the scaled keys as codes (528 B) and quantises the query in its
  // prologue (16 elements); its MACs are fp8, 1 x 33 x 16 = 528; the scales' product costs
  // one multiply per output (33).
  const Node& product = q.graph.nodes[2];
  EXPECT_EQ(product.matrix_dtype, DType::kFp8E4M3);
  EXPECT_EQ(product.bytes_read, 32 + 528);
  EXPECT_EQ(product.flops.mul, 16 + 33);
  ASSERT_EQ(q.report.changes.size(), 1u);
  EXPECT_EQ(q.report.changes[0].cache, "cache");
  EXPECT_EQ(q.report.changes[0].activation, "q");
  // Fused: q 32 + cache 512 + k 32 + scores 66.
  EXPECT_EQ(fused_bytes(q.graph), 642);
}

TEST(Quantize, AnNvfp4KvCacheCarriesBlockScales) {
  const Quantized q = quantize(decode_step(), parse_quant_recipe("", "nvfp4"));
  // 512 codes at 4 bits = 256 B, and 32 rows x 16/16 = 32 e4m3 scales = 32 B.
  EXPECT_EQ(q.report.kv_bytes_after, 256 + 32);
  // The concat writes 33 x 16 codes (264 B) and 33 scales; the scaling kernel reads them and
  // writes as many; the product reads the scaled codes and their scales.
  EXPECT_EQ(q.graph.nodes[0].bytes_written, 264 + 33);
  EXPECT_EQ(q.graph.nodes[2].bytes_read, 32 + 264 + 33);
  EXPECT_EQ(q.graph.nodes[2].matrix_dtype, DType::kNvfp4);
}

TEST(Quantize, AWeightRecipeAndAKvCacheMeetOnTheAttentionsOutput) {
  // The scores [1, 33] feed a weight's product: w4a4 makes the attention's product write them
  // as codes (its epilogue quantises 33 elements: 33 mul, and 3 scales of 16), then the fp8
  // cache makes it multiply fp8 codes (the query quantised: 16 mul; the two per-tensor scales'
  // product: one mul per output, 33): 82 mul in all, none before.
  const std::string src = kMmNt + R"(
@kernel
def scale(X: Tensor("A,B"), s: float) -> Tensor("A,B", dtype="bf16"):
    Y = Tensor(A=X.shape[0], B=X.shape[1], dtype="bf16")
    for i in Dim("A", parallel=True):
        for j in Dim("B", parallel=True):
            Y[i, j] = X[i, j] * s
    return Y
DIMS = {"S": 32, "D": 16, "O": 1, "N": 8, "C": 33}
def model(q: Tensor("O,D", role="input", dtype="bf16"), cache: Tensor("S,D", role="input", dtype="bf16"),
          k: Tensor("O,D", role="input", dtype="bf16"), w: Tensor("N,C", role="weight", dtype="bf16")):
    return mm_nt(mm_nt(q, scale(concat([cache, k], dim="S"), 0.25)), w)
)";
  const Graph g = trace_program(load_program_source(src, "meet.py"), {});
  const Quantized q = quantize(g, parse_quant_recipe("w4a4", "fp8"));
  EXPECT_EQ(q.report.kv_inputs, std::vector<std::string>{"cache"});
  ASSERT_EQ(q.report.changes.size(), 2u);  // the weight's product, then the attention's
  const Node& attention = q.graph.nodes[2];
  EXPECT_EQ(attention.matrix_dtype, DType::kFp8E4M3);
  EXPECT_EQ(attention.flops.mul, 82);
  EXPECT_EQ(attention.flops.div, 3 + 1);  // its output's scales, and the query's one scale
}

TEST(Quantize, AnInputNothingIsAppendedToIsNoKvCache) {
  // The MLP's x is read by products but never concatenated with new entries: no cache.
  const Quantized q = quantize(mlp(), parse_quant_recipe("", "fp8"));
  EXPECT_TRUE(q.report.kv_inputs.empty());
  EXPECT_TRUE(q.report.changes.empty());
  EXPECT_EQ(fused_bytes(q.graph), 541696);
}

// A mixture of experts' weights reach their product through a gather: 4 experts [16, 32]
// in bf16, one expert per token for 2 tokens (x [2, 32]); nodes 0 gather, 1 the product.
TEST(Quantize, GatheredExpertsAreQuantisedWithTheirScales) {
  const std::string src = R"(
@kernel
def per_token(A: Tensor("T,K"), B: Tensor("T,N,K")) -> Tensor("T,N", dtype="bf16"):
    C = Tensor(T=A.shape[0], N=B.shape[1], dtype="bf16")
    for t in Dim("T", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[t, n] += A[t, k] * B[t, n, k]
    return C
DIMS = {"T": 2, "E": 4, "N": 16, "K": 32}
def model(x: Tensor("T,K", role="input", dtype="bf16"), w: Tensor("E,N,K", role="weight", dtype="bf16"),
          idx: Tensor("T", role="input", dtype="int64")):
    return per_token(x, gather(w, idx, dim="E"))
)";
  const Graph g = trace_program(load_program_source(src, "moe.py"), {});
  // As written: x 128 B + the 2 experts the gather fetches (2 x 16 x 32 x 2 = 2,048 B) + idx
  // 16 B + output 2 x 16 x 2 = 64 B.
  EXPECT_EQ(fused_bytes(g), 2256);
  const Quantized q = quantize(g, parse_quant_recipe("w4a16"));
  ASSERT_EQ(q.report.changes.size(), 1u);
  EXPECT_EQ(q.report.changes[0].weight, "w");
  // w: 2,048 codes at 4 bits = 1,024 B, and one fp16 scale per row of K = 32 (under one
  // group of 128): 4 x 16 = 64 scales, 128 B.
  EXPECT_EQ(q.report.weight_bytes_after, 1024 + 128);
  // The gather fetches half of each (2 of 4 experts): 512 B of codes and 64 B of scales, and
  // writes as much; the product reads those.
  EXPECT_EQ(q.graph.nodes[0].bytes_read, 16 + 512 + 64);
  EXPECT_EQ(q.graph.nodes[0].bytes_written, 512 + 64);
  EXPECT_EQ(q.graph.nodes[1].bytes_read, 128 + 512 + 64);
  // Fused: x 128 + codes 512 + scales 64 + idx 16 + output 64.
  EXPECT_EQ(fused_bytes(q.graph), 784);
}

TEST(Quantize, RecipesAreNamedAndTheirGroupsChecked) {
  EXPECT_EQ(parse_quant_recipe("w4a16:g64").weights->group, 64);
  EXPECT_EQ(parse_quant_recipe("mxfp4").weights->name, "e2m1, one e8m0 scale per 32 of K");
  using testing::expect_user_error;
  expect_user_error([] { parse_quant_recipe("w5a5"); }, ErrorKind::kArgument,
                    "unknown quantisation recipe 'w5a5'");
  expect_user_error([] { parse_quant_recipe("nvfp4:g32"); }, ErrorKind::kArgument,
                    "recipe 'nvfp4' has the group its format defines; it takes no :g32");
  expect_user_error([] { parse_quant_recipe("w4a16:64"); }, ErrorKind::kArgument,
                    "'w4a16:64': the group is written :gN, e.g. w4a16:g64");
  expect_user_error([] { parse_quant_recipe("", "fp6"); }, ErrorKind::kArgument,
                    "unknown KV-cache format 'fp6'");
}

}  // namespace
}  // namespace solar
