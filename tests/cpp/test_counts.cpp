// Counts are exact or refused, never wrapped (docs/ir.md §7-8): every count of a node and
// every sum over a graph either fits in int64 and is exact, or is a UserError of kind
// `overflow` naming the node (or the graph total) and the quantity. Also the integer
// arithmetic of model() and static expressions, which forms sizes. Each number below is
// derived by hand in its comment; 2^63 - 1 = 9,223,372,036,854,775,807.
#include <gtest/gtest.h>

#include <string>

#include "solar/arch/spec.h"
#include "solar/base/checked.h"
#include "solar/exec/executor.h"
#include "solar/io/json.h"
#include "solar/ir/static_eval.h"
#include "solar/pipeline/pipeline.h"
#include "solar/sol/analysis.h"
#include "solar/sol/chains.h"
#include "solar/trace/tracer.h"
#include "test_util.h"

namespace solar {
namespace {

using testing::expect_user_error;

constexpr int64_t kTwo62 = int64_t{1} << 62;

const char* kMatmul = R"(
@kernel
def mm(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[1], fill=0)
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    return C
DIMS = {"M": 2097152, "K": 1048576, "N": 2097152}
def model(a: Tensor("M,K", role="input"), b: Tensor("K,N", role="weight")):
    return mm(a, b)
)";

ArchSpec paper_arch() {
  return load_arch_spec(std::string(SOLAR_SOURCE_DIR) + "/configs/arch/H100_PCIe_paper.yaml");
}

Analysis analyze_unfused_fused(const Graph& g) {
  AnalysisOptions o;
  o.cache_aware = false;  // the cache-aware search has its own tests
  return analyze(g, paper_arch(), o);
}

Graph trace(const char* src, TraceOptions options = {}) {
  return trace_program(load_program_source(src, "t.py"), options);
}

TEST(Counts, MatmulWhoseMatrixFlopsExceedInt64IsRefused) {
  // The issue's 2^21 x 2^20 x 2^21 matmul: MACs = 2^(21+20+21) = 2^62 fit, but matrix FLOPs
  // = 2 x 2^62 = 2^63 do not (the old code printed -9.22 EFLOP).
  expect_user_error([&] { trace(kMatmul); }, ErrorKind::kOverflow,
                    "node 'mm#0': matrix FLOPs (2 x MACs) do not fit in 64 bits");
  try {
    trace(kMatmul);
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostics().front().loc.line, 12u) << e.what();  // the call mm(a, b)
  }
}

TEST(Counts, MatmulJustBelowTheLimitIsExact) {
  // N = 2^20 instead: MACs = 2^(21+20+20) = 2^61, matrix FLOPs = 2^62 = 4,611,686,018,427,387,904.
  // fp32 bytes: A = 4 * 2^41 = 2^43, B = 4 * 2^40 = 2^42, C = 4 * 2^41 = 2^43, so the node
  // (and the fused graph: A, B in, C out) moves 2^43 + 2^42 + 2^43 = 5 * 2^42
  // = 21,990,232,555,520 bytes.
  TraceOptions o;
  o.dims = {{"N", 1048576}};
  const Graph g = trace(kMatmul, o);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].macs, int64_t{1} << 61);
  EXPECT_EQ(g.nodes[0].matrix_flops(), kTwo62);
  EXPECT_EQ(g.nodes[0].bytes(), int64_t{21990232555520});
  const Analysis a = analyze_unfused_fused(g);
  EXPECT_EQ(a.unfused.flops, kTwo62);
  EXPECT_EQ(a.unfused.bytes, int64_t{21990232555520});
  EXPECT_EQ(a.fused.bytes, int64_t{21990232555520});
  // The JSON keeps integers exact: "matrix_flops": 4611686018427387904.
  const std::string json = analysis_json(g, paper_arch(), a, ValidationInfo{});
  EXPECT_NE(json.find("\"matrix_flops\": 4611686018427387904"), std::string::npos);
}

const char* kAdd = R"(
@kernel
def add(X: Tensor("N"), Y: Tensor("N")) -> Tensor("N"):
    Z = Tensor(N=X.shape[0])
    for i in Dim("N", parallel=True):
        Z[i] = X[i] + Y[i]
    return Z
DIMS = {"N": 1024}
def model(x: Tensor("N", role="input"), y: Tensor("N", role="input")):
    return add(x, y)
)";

TEST(Counts, TensorBytesThatExceedInt64AreRefused) {
  // --dim N=2^62 on an elementwise fp32 add: x has 4 * 2^62 = 2^64 bytes (the old code
  // wrapped them to 0 B everywhere).
  TraceOptions o;
  o.dims = {{"N", kTwo62}};
  expect_user_error(
      [&] { trace(kAdd, o); }, ErrorKind::kOverflow,
      "model() parameter 'x': bytes (4611686018427387904 elements of fp32) do not fit");
}

TEST(Counts, FourBitTensorsCountHalfBytesWithoutOverflow) {
  // int4 x of 2^62 elements: 2^62 / 2 = 2^61 bytes, which fit (4 bits x 2^62 = 2^64 bits do
  // not: the bytes are not formed from bits).
  const char* src = R"(
DIMS = {"N": 4}
def model(x: Tensor("N", role="input", dtype="int4")):
    return reshape(x, "N")
)";
  TraceOptions o;
  o.dims = {{"N", kTwo62}};
  const Graph g = trace(src, o);
  EXPECT_EQ(g.tensors[0].bytes(), int64_t{1} << 61);
}

const char* kPairSums = R"(
@kernel
def pairsum(X: Tensor("N"), Y: Tensor("M")) -> Tensor("N"):
    S = Tensor(N=X.shape[0], fill=0)
    for i in Dim("N", parallel=True):
        for j in Dim("M"):
            S[i] += X[i] + Y[j]
    return S
DIMS = {"N": 2147483648, "M": 1073741824}
def model(x: Tensor("N", role="input"), y: Tensor("M", role="input")):
    return pairsum(x, y), pairsum(x, y)
)";

TEST(Counts, GraphTotalThatExceedsInt64NamesTheNodeWhereItOverflows) {
  // pairsum: N x M = 2^31 x 2^30 = 2^61 points, 2 adds each (X + Y, and the += that is no
  // MAC): 2^62 vector FLOPs per node, which fit; two nodes: 2^63, which do not.
  const Graph g = trace(kPairSums);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].flops.add, kTwo62);
  EXPECT_EQ(g.nodes[1].vector_flops(), kTwo62);
  expect_user_error([&] { analyze_unfused_fused(g); }, ErrorKind::kOverflow,
                    "the graph's total FLOPs (the sum overflows at node 'pairsum#1')");
  expect_user_error([&] { g.total_flops(); }, ErrorKind::kOverflow,
                    "overflows at node 'pairsum#1'");
}

TEST(Counts, VectorFlopsOfAKindThatExceedInt64AreRefused) {
  // N x M = 2^32 x 2^30 = 2^62 points with 2 adds each: 2^63 add FLOPs in one nest.
  TraceOptions o;
  o.dims = {{"N", int64_t{1} << 32}};
  expect_user_error([&] { trace(kPairSums, o); }, ErrorKind::kOverflow,
                    "node 'pairsum#0' (kernel 'pairsum', loop nest 1): vector FLOPs of kind 'add'");
}

TEST(Counts, IterationPointsThatExceedInt64NameTheLoops) {
  // N x M = 2^32 x 2^32 = 2^64 points.
  TraceOptions o;
  o.dims = {{"N", int64_t{1} << 32}, {"M", int64_t{1} << 32}};
  expect_user_error([&] { trace(kPairSums, o); }, ErrorKind::kOverflow,
                    "iteration points (N=4294967296 x M=4294967296) do not fit");
}

TEST(Counts, ConcatAndPadSizesThatExceedInt64AreRefused) {
  // int4 x of 2^62 elements (2^61 bytes) fits; concat([x, x]) would have 2^63 elements, and
  // pad(x, before=2^62) 2^62 + 2^62 = 2^63.
  const char* src = R"(
DIMS = {"N": 4}
def model(x: Tensor("N", role="input", dtype="int4")):
    return concat([x, x], dim="N")
)";
  TraceOptions o;
  o.dims = {{"N", kTwo62}};
  expect_user_error([&] { trace(src, o); }, ErrorKind::kOverflow,
                    "concat(): size of dim 'N' do not fit in 64 bits");
  const char* pad = R"(
DIMS = {"N": 4}
def model(x: Tensor("N", role="input", dtype="int4")):
    return pad(x, dim="N", before=4611686018427387904)
)";
  expect_user_error([&] { trace(pad, o); }, ErrorKind::kOverflow, "pad(): size of dim 'N'");
}

TEST(Counts, ReshapeWhoseElementCountWrapsToTheRightNumberIsRefused) {
  // (2^62 + 1)(2^62 + 3) * 2 = 2^125 + 2^65 + 6, which is 6 modulo 2^64: a wrapping product
  // would accept this reshape of 6 elements.
  const char* src = R"(
DIMS = {"N": 6}
def model(x: Tensor("N", role="input")):
    return reshape(x, "A,B,C", A=4611686018427387905, B=4611686018427387907, C=2)
)";
  expect_user_error([&] { trace(src); }, ErrorKind::kShape, "(more than 2^63 - 1 elements)");
}

TEST(Counts, RangeWithAHugeStepHasOneItem) {
  // range(2^63 - 2, 2^63 - 1, 2^62) = [2^63 - 2]: one add node. A wrapping i += step never
  // reaches the stop.
  const char* src = R"(
@kernel
def neg(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = -X[i]
    return Y
DIMS = {"N": 4}
def model(x: Tensor("N", role="input")):
    for i in range(9223372036854775806, 9223372036854775807, 4611686018427387904):
        x = neg(x)
    for i in range(-9223372036854775807 - 1, 9223372036854775807, 9223372036854775807):
        x = neg(x)
    return x
)";
  // The second range: -2^63, -2^63 + (2^63 - 1) = -1, then 2^63 - 2 < stop: 3 items.
  EXPECT_EQ(trace(src).nodes.size(), 4u);
}

TEST(Counts, IntegerArithmeticOfModelNeverWraps) {
  auto model_with = [](const std::string& expr) {
    return "DIMS = {\"N\": 4}\ndef model(x: Tensor(\"N\", role=\"input\")):\n    n = " + expr +
           "\n    return x\n";
  };
  for (const char* expr : {"(-9223372036854775807 - 1) // -1", "-(-9223372036854775807 - 1)",
                           "abs(-9223372036854775807 - 1)", "2 ** 63", "4611686018427387904 * 2",
                           "9223372036854775807 + 1"}) {
    expect_user_error([&] { trace(model_with(expr).c_str()); }, ErrorKind::kType, "overflow");
  }
  // Python: -2^63 % -1 == 0 (the hardware division traps).
  EXPECT_NO_THROW(trace(model_with("(-9223372036854775807 - 1) % -1").c_str()));
  expect_user_error([&] { trace(model_with("int(1e300)").c_str()); }, ErrorKind::kType,
                    "not an integer in 64 bits");
}

TEST(Counts, PowerByRepeatedSquaring) {
  // 1 ** 10^18 = 1 and (-1) ** (10^18 + 1) = -1 at once (a loop of 10^18 multiplications
  // never ends); 3 ** 39 = 4,052,555,153,018,976,267 < 2^63 - 1 < 3 ** 40.
  std::string why;
  auto pow = [&](int64_t a, int64_t b) {
    return scalar_arith(ast::Op::kPow, Scalar::of_int(a), Scalar::of_int(b), &why);
  };
  EXPECT_EQ(pow(1, 1'000'000'000'000'000'000)->i, 1);
  EXPECT_EQ(pow(-1, 1'000'000'000'000'000'001)->i, -1);
  EXPECT_EQ(pow(0, 1'000'000'000'000'000'000)->i, 0);
  EXPECT_EQ(pow(3, 39)->i, int64_t{4052555153018976267});
  EXPECT_FALSE(pow(3, 40).has_value());
  EXPECT_EQ(why, "integer overflow");
  EXPECT_EQ(pow(2, 62)->i, kTwo62);
}

TEST(Counts, ChainCostThatExceedsInt64NamesTheChainsNodes) {
  // mm(mm(A, B), C) with M = 2^21, K = N = P = 2^20: each node has 2^61 MACs (2^62 FLOPs, which
  // fit), but the left-to-right order of the chain costs 2 * (2^61 + 2^61) = 2^63 FLOPs.
  const char* src = R"(
@kernel
def mm(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[1], fill=0)
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    return C
DIMS = {"M": 2097152, "K": 1048576, "N": 1048576, "P": 1048576}
def model(a: Tensor("M,K", role="input"), b: Tensor("K,N", role="weight"),
          c: Tensor("N,P", role="weight")):
    return mm(mm(a, b), c)
)";
  const Graph g = trace(src);
  expect_user_error([&] { find_chains(g); }, ErrorKind::kOverflow,
                    "the chain of node(s) 'mm#0', 'mm#1': costs");
}

TEST(Counts, IndexValuesThatExceedInt64AreRefused) {
  // X[i * 2^62] with i < 3 reaches 2 * 2^62 = 2^63; and the second read X[i + i * 2^62 * 2]
  // is checked too (the einsum lists only a tensor's first access). Either would wrap in
  // an executor's index arithmetic (or in the cache-aware extents) before a bounds check.
  auto program = [](const std::string& index) {
    return "@kernel\ndef f(X: Tensor(\"N\")) -> Tensor(\"N\"):\n    Y = Tensor(N=X.shape[0])\n"
           "    for i in Dim(\"N\"):\n        Y[i] = X[i] + X[" +
           index +
           "]\n    return Y\nDIMS = {\"N\": 3}\ndef model(x: Tensor(\"N\")):\n    return f(x)\n";
  };
  expect_user_error([&] { trace(program("i * 4611686018427387904").c_str()); },
                    ErrorKind::kOverflow, "index values of 'X' (line 5) do not fit");
  expect_user_error([&] { trace(program("i + i * 9223372036854775807").c_str()); },
                    ErrorKind::kOverflow, "index values of 'X'");
  // i * 2^61 reaches 2 * 2^61 = 2^62, which fits: it traces (a bounds error if it runs).
  EXPECT_NO_THROW(trace(program("i * 2305843009213693952").c_str()));
}

TEST(Counts, ExecutionEstimateSaturatesInsteadOfWrapping) {
  // Three int8 inputs of 2^62 bytes each: 3 * 2^62 live bytes do not fit; the estimate says
  // 2^63 - 1 (above every budget) rather than a wrapped, small number.
  const char* src = R"(
DIMS = {"N": 4}
def model(x: Tensor("N", role="input", dtype="int8"), y: Tensor("N", role="input", dtype="int8"),
          z: Tensor("N", role="input", dtype="int8")):
    return x
)";
  TraceOptions o;
  o.dims = {{"N", kTwo62}};
  EXPECT_EQ(estimate_cost(trace(src, o)).peak_bytes, kMaxCount);
}

}  // namespace
}  // namespace solar
