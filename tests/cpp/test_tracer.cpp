#include <gtest/gtest.h>

#include "solar/ir/checker.h"
#include "solar/ir/parser.h"
#include "solar/pipeline/pipeline.h"
#include "solar/sol/analysis.h"
#include "solar/trace/tracer.h"
#include "test_util.h"

namespace solar {
namespace {

using testing::expect_user_error;

const char* kAdd = R"(
@kernel
def add(X: Tensor("N,D"), Y: Tensor("N,D")) -> Tensor("N,D"):
    Z = Tensor(N=X.shape[0], D=X.shape[1])
    for n in Dim("N"):
        for d in Dim("D"):
            Z[n, d] = X[n, d] + Y[n, d]
    return Z
LAYERS = 3
DIMS = {"N": 4, "D": 8, "L": 3}
def block(x, w):
    return add(x, select(w, dim="L", index=0))
def model(x: Tensor("N,D"), w: Tensor("L,N,D", role="weight")):
    for i in range(LAYERS):
        x = add(x, select(w, dim="L", index=i))
    return block(x, w)
)";

TEST(Tracer, UnrollsStaticLoopsAndCallsHelpers) {
  Graph g = trace_program(load_program_source(kAdd, "t.py"), {});
  // 3 loop iterations x (select + add) + helper (select + add) = 8 nodes.
  ASSERT_EQ(g.nodes.size(), 8u);
  EXPECT_EQ(g.nodes[1].name, "add#0");
  EXPECT_EQ(g.nodes[7].name, "add#3");
  // add: N*D = 32 points, one add each.
  EXPECT_EQ(g.nodes[1].flops.add, 32);
  // select is a view: 0 bytes; add reads x (4*32 B) and a view of w (4*32 B), writes 128 B.
  EXPECT_EQ(g.nodes[0].bytes(), 0);
  EXPECT_EQ(g.nodes[1].bytes(), 3 * 128);
}

TEST(Tracer, DimOverrides) {
  TraceOptions o;
  o.dims = {{"N", 16}};
  Graph g = trace_program(load_program_source(kAdd, "t.py"), o);
  EXPECT_EQ(g.tensors[0].shape, (std::vector<int64_t>{16, 8}));
  o.dims = {{"Q", 2}};
  expect_user_error([&] { trace_program(load_program_source(kAdd, "t.py"), o); },
                    ErrorKind::kArgument, "no dim named 'Q'");
}

TEST(Tracer, DimMismatchNamesCallDimAndBothSizes) {
  const char* src = R"(
@kernel
def mm(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[1])
    for m in Dim("M"):
        for n in Dim("N"):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    return C
DIMS = {"M": 4, "K": 8, "J": 6, "N": 2}
def model(a: Tensor("M,K"), b: Tensor("J,N")):
    return mm(a, b)
)";
  expect_user_error([&] { trace_program(load_program_source(src, "t.py"), {}); },
                    ErrorKind::kDimMismatch,
                    "mm#0 to kernel 'mm': dim 'K' is 8 from 'A' (dim 1) but 6 from 'B'");
}

TEST(Tracer, CallArity) {
  const char* src = R"(
@kernel
def neg(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = -X[i]
    return Y
DIMS = {"N": 4}
def model(x: Tensor("N")):
    return neg(x, x)
)";
  expect_user_error([&] { trace_program(load_program_source(src, "t.py"), {}); },
                    ErrorKind::kCallArity, "neg(X) takes 1 argument(s), got 2");
}

// `with unit("label"):` groups the calls of one source operator (docs/ir.md §4.1).
const char* kUnits = R"(
@kernel
def scale(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for n in Dim("N"):
        Y[n] = X[n] * 0.5
    return Y
@kernel
def relu(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for n in Dim("N"):
        Y[n] = max(X[n], 0.0)
    return Y
DIMS = {"N": 1024}
def model(x: Tensor("N", role="input")):
    with unit("aten.hardsigmoid", fp32_math="fp32"):
        t = scale(x)
        t = relu(t)
        y = scale(t)
    z = relu(y)
    with unit("aten.relu"):
        return relu(z)
)";

TEST(Tracer, UnitsGroupTheNodesOfOneSourceOperator) {
  Graph g = trace_program(load_program_source(kUnits, "t.py"), {});
  ASSERT_EQ(g.nodes.size(), 5u);
  // Three units: the block of three nodes, relu#1 alone, and the block that returns.
  ASSERT_EQ(g.units.size(), 3u);
  EXPECT_EQ(g.units[0].name, "aten.hardsigmoid#0");
  EXPECT_EQ(g.units[0].nodes, (std::vector<NodeId>{0, 1, 2}));
  EXPECT_TRUE(g.units[0].declared);
  EXPECT_EQ(g.units[0].loc.line, 16);  // the `with` (line 1 is the empty first line)
  EXPECT_EQ(g.units[1].name, "relu#1");
  EXPECT_FALSE(g.units[1].declared);
  EXPECT_EQ(g.units[2].name, "aten.relu#0");
  EXPECT_EQ(g.units[2].nodes, (std::vector<NodeId>{4}));
  for (NodeId n : {0, 1, 2}) {
    EXPECT_EQ(g.nodes[static_cast<size_t>(n)].unit, 0);
    EXPECT_EQ(g.nodes[static_cast<size_t>(n)].fp32_math, Fp32Math::kFp32);
  }
  EXPECT_EQ(g.nodes[3].fp32_math, Fp32Math::kPlatformDefault);
  // N = 1,024 fp32 = 4,096 B per tensor. The block reads x and writes y: 8,192 B (node by
  // node it would be 3 x 8,192); relu#1 and the last unit 8,192 B each: 24,576 B unfused.
  const auto [read, written] = unit_bytes(g, g.units[0]);
  EXPECT_EQ(read, 4096);
  EXPECT_EQ(written, 4096);
  EXPECT_EQ(unfused_bytes(g), 24576);
}
}  // namespace
}  // namespace solar
