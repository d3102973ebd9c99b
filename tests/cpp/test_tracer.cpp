#include <gtest/gtest.h>

#include "solar/graph/attrs.h"
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

// A tensor's dim names are one shared list per distinct list (graph.h, SharedDims), so that a
// TensorInfo holds a pointer where it held four strings (136 bytes), and tracing copies none.
// The checker counts the calls written in model() (Program::model_calls), and the trace
// reserves the graph's arrays for them before it runs: a long model() without loops fills
// arrays of the right size instead of growing them by copying.
TEST(Tracer, AModelWithoutLoopsFillsArraysReservedForItsCalls) {
  // kAdd's model(): add and select in the loop body, block() after it, each written once;
  // range() adds no node. 3 calls.
  EXPECT_EQ(load_program_source(kAdd, "t.py").model_calls, 3);
  const std::string flat = std::string(kAdd).substr(0, std::string(kAdd).find("def model")) + R"(
def model(x: Tensor("N,D"), w: Tensor("L,N,D", role="weight")):
    y = add(x, select(w, dim="L", index=0))
    z = add(y, select(w, dim="L", index=1))
    return add(z, select(w, dim="L", index=2))
)";
  const Program p = load_program_source(flat, "flat.py");
  EXPECT_EQ(p.model_calls, 6);  // 3 add + 3 select
  Graph g = trace_program(p, {});
  // 6 nodes in an array of 6 (grown by push_back it would hold 8); 2 parameters + 6 outputs.
  EXPECT_EQ(g.nodes.size(), 6u);
  EXPECT_EQ(g.nodes.capacity(), 6u);
  EXPECT_EQ(g.tensors.size(), 8u);
  EXPECT_EQ(g.tensors.capacity(), 8u);
}

TEST(Tracer, TensorsWithTheSameDimNamesShareOneList) {
  static_assert(sizeof(TensorInfo) <= 136, "a tensor's record stays small (SharedDims)");
  Graph g = trace_program(load_program_source(kAdd, "t.py"), {});
  // Tensors: x (N,D), w (L,N,D), then per layer select#i.out (N,D) and add#i.out (N,D).
  ASSERT_EQ(g.tensors.size(), 10u);
  const DimNames& nd = g.tensors[0].dims.names();
  EXPECT_EQ(nd, (DimNames{"N", "D"}));
  EXPECT_EQ(g.tensors[1].dims.names(), (DimNames{"L", "N", "D"}));
  for (size_t t = 2; t < g.tensors.size(); ++t) {
    SCOPED_TRACE(g.tensors[t].name);
    EXPECT_EQ(&g.tensors[t].dims.names(), &nd);  // the same list, not an equal copy
  }
  // A list made by hand compares by its names.
  EXPECT_EQ(g.tensors[2].dims, (SharedDims{"N", "D"}));
  EXPECT_FALSE(g.tensors[1].dims == g.tensors[0].dims);
}

TEST(Tracer, DimOverrides) {
  TraceOptions o;
  o.dims = {{"N", 16}};
  Graph g = trace_program(load_program_source(kAdd, "t.py"), o);
  EXPECT_EQ(g.tensors[0].shape, (Shape{16, 8}));
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
  // Two blocks in the graph; with relu#1 alone, three effective units.
  ASSERT_EQ(g.units.size(), 2u);
  EXPECT_EQ(g.units[0].name, "aten.hardsigmoid#0");
  EXPECT_EQ(g.units[0].nodes, (std::vector<NodeId>{0, 1, 2}));
  EXPECT_TRUE(g.units[0].declared);
  EXPECT_EQ(g.units[0].loc.line, 16);  // the `with` (line 1 is the empty first line)
  EXPECT_EQ(g.units[1].name, "aten.relu#0");
  EXPECT_EQ(g.units[1].nodes, (std::vector<NodeId>{4}));
  EXPECT_EQ(g.nodes[3].unit, -1);
  const std::vector<Unit> units = effective_units(g);
  ASSERT_EQ(units.size(), 3u);
  EXPECT_EQ(units[1].name, "relu#1");
  EXPECT_FALSE(units[1].declared);
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
// --- the tracer's caps (TraceLimits): a budget error naming the loop and the --dim ----------

// Runs `fn`, expects a UserError of kind budget; returns its first diagnostic.
template <typename Fn>
Diagnostic budget_error(Fn&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBudget) << e.what();
    return e.diagnostics().front();
  }
  ADD_FAILURE() << "expected a budget error";
  return {};
}

TEST(TracerCaps, NodeCapNamesTheLoopAndTheDimToLower) {
  // The transformer example unrolls 30 nodes per layer (select, rms_norm, ... add): with a
  // cap of 1,000 nodes, 40 layers stop in layer 34 (33 x 30 = 990 nodes, the 11th of layer
  // 34 is the 1,001st).
  TraceOptions o;
  o.dims = {{"L", 40}};
  o.limits.max_nodes = 1000;
  const Program p = load_program(testing::example("transformer.py"));
  const Diagnostic d = budget_error([&] { trace_program(p, o); });
  EXPECT_NE(
      d.message.find("builds more than 1,000 nodes (the tracer's cap) in the loop "
                     "'for l in range(wq.shape[0])' (40 iterations, stopped in iteration 34)"),
      std::string::npos)
      << d.message;
  EXPECT_NE(d.hint.find("lower --dim L"), std::string::npos) << d.hint;
  EXPECT_EQ(d.loc.line, 139u);  // the for statement
  EXPECT_EQ(d.loc.col, 5u);
}

TEST(TracerCaps, DefaultCapsKeepTheExampleAndStopAHugeLoopAtOnce) {
  // Two layers trace (60 nodes); L = 2,097,152 (the issue's 6 GB and growing) asks range()
  // for 2,097,152 > 1,048,576 values and stops before any layer is built.
  const Program p = load_program(testing::example("transformer.py"));
  EXPECT_EQ(trace_program(p, {}).nodes.size(), 60u);
  TraceOptions o;
  o.dims = {{"L", 2097152}};
  const Diagnostic d = budget_error([&] { trace_program(p, o); });
  EXPECT_NE(d.message.find("range() of 2097152 values"), std::string::npos) << d.message;
  EXPECT_NE(d.hint.find("lower --dim L"), std::string::npos) << d.hint;
  EXPECT_EQ(d.loc.line, 139u);
}

TEST(TracerCaps, StepCapStopsLoopsThatBuildNothing) {
  // 1,000 x 1,000 iterations of one statement: ~10^6 steps, above a cap of 10,000.
  const char* src = R"(
DIMS = {"N": 4}
def model(x: Tensor("N")):
    for i in range(1000):
        for j in range(1000):
            y = i
    return x
)";
  TraceOptions o;
  o.limits.max_steps = 10000;
  const Diagnostic d = budget_error([&] { trace_program(load_program_source(src, "t.py"), o); });
  EXPECT_NE(d.message.find("runs more than 10,000 steps"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("'for i in range(1000)'"), std::string::npos) << d.message;
}

TEST(TracerCaps, CopiesOfNestedListsCountEveryValue) {
  // A list counts itself and every value in it, nested ones too: [x] holds 2, and
  // a = [a, a] holds 1 + 2 x the previous, so after k doublings 3 x 2^k - 1. The 10th
  // doubling (3,071) passes a cap of 2,000 values; the 9th (1,535) did not.
  const char* src = R"(
DIMS = {"N": 4}
def model(x: Tensor("N")):
    a = [x]
    for i in range(20):
        a = [a, a]
    return x
)";
  TraceOptions o;
  o.limits.max_values = 2000;
  const Diagnostic d = budget_error([&] { trace_program(load_program_source(src, "t.py"), o); });
  EXPECT_NE(d.message.find("a list or tuple of more than 2,000 values"), std::string::npos)
      << d.message;
  EXPECT_NE(d.message.find("stopped in iteration 10"), std::string::npos) << d.message;
}

TEST(TracerCaps, StringsDoNotGrowWithoutBound) {
  // "ab" doubled 30 times would be 2 GiB; a cap of 100 characters stops the 6th doubling
  // (2 * 2^6 = 128 > 100).
  const char* src = R"(
DIMS = {"N": 4}
def model(x: Tensor("N")):
    s = "ab"
    for i in range(30):
        s = s + s
    return x
)";
  TraceOptions o;
  o.limits.max_string = 100;
  const Diagnostic d = budget_error([&] { trace_program(load_program_source(src, "t.py"), o); });
  EXPECT_NE(d.message.find("a string of more than 100 characters"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("stopped in iteration 6"), std::string::npos) << d.message;
}

TEST(TracerCaps, SplitIntoMoreChunksThanTheCapIsRefusedBeforeBuildingThem) {
  // split(x, sizes=1) of 2^40 elements would make 2^40 tensors.
  const char* src = R"(
DIMS = {"N": 1099511627776}
def model(x: Tensor("N", dtype="int8")):
    return split(x, dim="N", sizes=1)[0]
)";
  const Diagnostic d =
      budget_error([&] { trace_program(load_program_source(src, "t.py"), TraceOptions{}); });
  EXPECT_NE(d.message.find("more than 1,048,576 values"), std::string::npos) << d.message;
}

TEST(TracerCaps, HelpersThatMultiplyCallsHitTheNodeCapWithoutALoop) {
  // Each helper calls the next twice: 2^12 = 4,096 neg calls, above a cap of 1,000 nodes.
  std::string src = R"(
@kernel
def neg(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = -X[i]
    return Y
DIMS = {"N": 4}
def h12(x):
    return neg(x)
)";
  for (int k = 11; k >= 0; --k) {
    src += "def h" + std::to_string(k) + "(x):\n    return h" + std::to_string(k + 1) + "(h" +
           std::to_string(k + 1) + "(x))\n";
  }
  src += "def model(x: Tensor(\"N\")):\n    return h0(x)\n";
  TraceOptions o;
  o.limits.max_nodes = 1000;
  const Diagnostic d = budget_error([&] { trace_program(load_program_source(src, "t.py"), o); });
  EXPECT_EQ(d.message, "model() builds more than 1,000 nodes (the tracer's cap)");
  EXPECT_NE(d.hint.find("lower the --dim sizes"), std::string::npos) << d.hint;
}

TEST(TracerCaps, AReturnInsideAHelpersLoopLeavesNoStaleLoop) {
  // first() returns from inside its loop; the cap is then hit in model()'s own loop, which
  // the message must name (not first()'s loop, which has ended).
  const char* src = R"(
@kernel
def neg(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = -X[i]
    return Y
DIMS = {"N": 4}
def first(xs):
    for x in xs:
        return x
def model(x: Tensor("N")):
    y = first([x, x])
    for i in range(100):
        y = neg(y)
    return y
)";
  TraceOptions o;
  o.limits.max_nodes = 50;
  const Diagnostic d = budget_error([&] { trace_program(load_program_source(src, "t.py"), o); });
  EXPECT_NE(d.message.find("'for i in range(100)' (100 iterations, stopped in iteration 51)"),
            std::string::npos)
      << d.message;
}

TEST(Tracer, TopkAndScatterShapesDtypesAndTraffic) {
  const char* src = R"(
DIMS = {"T": 4, "E": 8, "K": 2}
def model(x: Tensor("T,E"), i: Tensor("T,K", dtype="int32"), s: Tensor("T,K")):
    v, j = topk(x, k=2, dim="E")
    y = scatter(x, i, s, dim="E")
    return v, j, y
)";
  const Graph g = trace_program(load_program_source(src, "t.py"), {});
  ASSERT_EQ(g.nodes.size(), 2u);
  const Node& topk = g.nodes[0];
  const TensorInfo& values = g.tensors[static_cast<size_t>(topk.outputs[0])];
  const TensorInfo& indices = g.tensors[static_cast<size_t>(topk.outputs[1])];
  EXPECT_EQ(values.shape, (Shape{4, 2}));
  EXPECT_EQ(values.dtype, DType::kFp32);
  EXPECT_EQ(indices.dtype, DType::kInt64);
  // topk reads x (4 x 8 fp32 = 128 B), writes 8 fp32 values (32 B) and 8 int64 indices (64 B).
  EXPECT_EQ(topk.bytes_read, 128);
  EXPECT_EQ(topk.bytes_written, 96);
  EXPECT_EQ(topk.vector_flops(), 0);
  // scatter reads the index (8 int32 = 32 B), src (8 fp32 = 32 B) and the 32 - 8 = 24
  // elements of x no index overwrites (96 B); writes the 32-element output (128 B).
  const Node& scatter = g.nodes[1];
  EXPECT_EQ(scatter.input_bytes, (Shape{96, 32, 32}));
  EXPECT_EQ(scatter.bytes_written, 128);
}

TEST(Tracer, ScatterAddReadsTheWholeBaseAndAddsEachSrcElement) {
  const char* src = R"(
DIMS = {"T": 4, "E": 8, "K": 2}
def model(x: Tensor("T,E"), i: Tensor("T,K", dtype="int32"), s: Tensor("T,K")):
    return scatter_add(x, i, s, dim="E")
)";
  const Graph g = trace_program(load_program_source(src, "t.py"), {});
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& n = g.nodes[0];
  EXPECT_EQ(n.op, "scatter_add");
  // Every base element is copied or added to: all 32 fp32 (128 B) are read, unlike
  // scatter's 24; the index (8 int32 = 32 B) and src (8 fp32 = 32 B); the output written
  // whole (128 B). One add per src element: 4 x 2 = 8 FLOPs.
  EXPECT_EQ(n.input_bytes, (Shape{128, 32, 32}));
  EXPECT_EQ(n.bytes_written, 128);
  EXPECT_EQ(n.flops.add, 8);
  EXPECT_EQ(n.vector_flops(), 8);
  EXPECT_EQ(AxisAttrs::of(n).axis, 1u);
}

TEST(Tracer, InPlaceScattersWriteOnlyWhatTheyIndex) {
  // As above, with inplace=1 (index_put_ / index_copy_ in eager PyTorch): the result shares
  // x's memory. scatter reads the index (32 B) and src (32 B), nothing of x, and writes one
  // element per index element (8 fp32 = 32 B); scatter_add also reads the 8 elements it
  // adds to (32 B) and adds 8.
  for (const char* op : {"scatter", "scatter_add"}) {
    const std::string src = std::string(R"(
DIMS = {"T": 4, "E": 8, "K": 2}
def model(x: Tensor("T,E"), i: Tensor("T,K", dtype="int32"), s: Tensor("T,K")):
    return )") + op + R"((x, i, s, dim="E", inplace=1)
)";
    const Graph g = trace_program(load_program_source(src, "t.py"), {});
    ASSERT_EQ(g.nodes.size(), 1u);
    const Node& n = g.nodes[0];
    const bool add = std::string(op) == "scatter_add";
    EXPECT_EQ(n.input_bytes, (Shape{add ? 32 : 0, 32, 32})) << op;
    EXPECT_EQ(n.bytes_written, 32) << op;
    EXPECT_EQ(n.flops.add, add ? 8 : 0) << op;
    EXPECT_TRUE(AxisAttrs::of(n).inplace) << op;
    EXPECT_EQ(g.tensors[static_cast<size_t>(n.outputs[0])].storage, n.inputs[0]) << op;
    // Fused: the index and src (64 B) and the 32 B written into x; x's reads (32 B for
    // scatter_add) less the 32 B written: 0. 96 B.
    EXPECT_EQ(fused_bytes(g), 96) << op;
  }
  testing::expect_user_error(
      [&] {
        trace_program(load_program_source(R"(
DIMS = {"T": 4, "E": 8, "K": 2}
def model(x: Tensor("T,E"), i: Tensor("T,K", dtype="int32"), s: Tensor("T,K")):
    return scatter(x, i, s, dim="E", inplace=2)
)",
                                          "t.py"),
                      {});
      },
      ErrorKind::kShape, "inplace must be 0 or 1");
}

TEST(Tracer, BuiltinsStoreTypedAttributesAndTheirViewsMoveNoBytes) {
  // x [T=4, E=8]: each builtin's attributes as the program states them, dims by position.
  const char* src = R"(
DIMS = {"T": 4, "E": 8}
def model(x: Tensor("T,E")):
    a = slice(x, dim="E", start=1, stop=7, step=2)
    b0, b1 = split(x, dim="E", sizes=[3, 5])
    c = pad(x, dim="T", before=1, after=2, value=-1.5)
    v, j = topk(x, k=3, dim="E", largest=0)
    p = permute(x, "E,T")
    q = broadcast(x, "B,T,E", B=2)
    return a, b0, b1, c, v, j, p, q
)";
  const Graph g = trace_program(load_program_source(src, "t.py"), {});
  ASSERT_EQ(g.nodes.size(), 6u);
  // slice of E (dim 1) from 1 by 2: elements 1, 3, 5.
  const SliceAttrs slice = SliceAttrs::of(g.nodes[0]);
  EXPECT_EQ(slice.axis, 1u);
  EXPECT_EQ(slice.start, 1);
  EXPECT_EQ(slice.step, 2);
  // split of E into 3 + 5: offsets 0 and 3.
  const SplitAttrs split = SplitAttrs::of(g.nodes[1]);
  EXPECT_EQ(split.axis, 1u);
  EXPECT_EQ(split.offsets, (std::vector<int64_t>{0, 3}));
  const PadAttrs pad = PadAttrs::of(g.nodes[2]);
  EXPECT_EQ(pad.axis, 0u);
  EXPECT_EQ(pad.before, 1);
  EXPECT_EQ(pad.after, 2);
  EXPECT_EQ(pad.fill, -1.5);
  const TopkAttrs topk = TopkAttrs::of(g.nodes[3]);
  EXPECT_EQ(topk.axis, 1u);
  EXPECT_EQ(topk.k, 3);
  EXPECT_FALSE(topk.largest);
  // permute "E,T": output dim 0 is input dim 1, output dim 1 is input dim 0.
  EXPECT_EQ(DimMapAttrs::of(g.nodes[4]).flat(), (Shape{1, 0}));
  // broadcast "B,T,E": B is new (-1), T and E are input dims 0 and 1.
  EXPECT_EQ(DimMapAttrs::of(g.nodes[5]).flat(), (Shape{-1, 0, 1}));
  // The registry's view column and the tracer's traffic agree: slice, split and broadcast
  // move no bytes; pad, topk and permute (not the identity here) copy.
  for (const Node& n : g.nodes) {
    EXPECT_EQ(builtin_info(n.builtin).view, n.bytes() == 0) << n.name;
  }
  // Reading a node as another builtin's attributes is an internal error naming both.
  try {
    (void)SliceAttrs::of(g.nodes[2]);
    ADD_FAILURE() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("(pad) read as another builtin's attributes"),
              std::string::npos)
        << e.what();
  }
  // A slice holds 3 attributes (axis, start, step); one with 1 is an internal error naming
  // the node and both counts.
  Node cut = g.nodes[0];
  cut.attrs = {1};
  try {
    (void)SliceAttrs::of(cut);
    ADD_FAILURE() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("holds 1 attributes, slice has 3"), std::string::npos)
        << e.what();
  }
}

TEST(Tracer, GatherByTopkIndicesFetchesTheDistinctRowsItIsTold) {
  // w [E=8, D=16] fp32 (64 B per row); j: 4 x 2 = 8 top-k indices (int64, 64 B).
  const char* src = R"(
DIMS = {"T": 4, "E": 8, "D": 16}
def model(x: Tensor("T,E"), w: Tensor("E,D", role="weight")):
    v, j = topk(x, k=2, dim="E")
    return gather(w, j, dim="E"), gather(w, j, dim="E", distinct=2)
)";
  const Graph g = trace_program(load_program_source(src, "t.py"), {});
  ASSERT_EQ(g.nodes.size(), 3u);
  // Without distinct=: 8 indices x 64 B = 512 B of w (all 8 rows); with distinct=2: 128 B.
  EXPECT_EQ(g.nodes[1].input_bytes, (Shape{512, 64}));
  EXPECT_EQ(g.nodes[2].input_bytes, (Shape{128, 64}));
  EXPECT_EQ(g.nodes[2].attrs, (Shape{0, 2}));
  const std::string bad =
      std::string(src).replace(std::string(src).find("distinct=2"), 10, "distinct=9");
  expect_user_error([&] { trace_program(load_program_source(bad, "t.py"), {}); }, ErrorKind::kShape,
                    "distinct = 9 must be between 1 and 8 (the index's elements and the table's "
                    "rows along dim 'E', the fewer)");
}

TEST(Tracer, GeneratedInputsOccupyNoDram) {
  // r: random numbers made on chip (role generated): 0 bytes; add reads x (4 x 8 fp32 =
  // 128 B) and r (0 B) and writes 128 B; the fused bound moves x in and the sum out only.
  const char* src = R"(
@kernel
def add(X: Tensor("N,D"), Y: Tensor("N,D")) -> Tensor("N,D"):
    Z = Tensor(N=X.shape[0], D=X.shape[1])
    for n in Dim("N"):
        for d in Dim("D"):
            Z[n, d] = X[n, d] + Y[n, d]
    return Z
DIMS = {"N": 4, "D": 8}
def model(x: Tensor("N,D"), r: Tensor("N,D", role="generated")):
    return add(x, r)
)";
  const Graph g = trace_program(load_program_source(src, "t.py"), {});
  EXPECT_EQ(g.tensors[1].role, Role::kGenerated);
  EXPECT_EQ(g.tensors[1].bytes(), 0);
  EXPECT_EQ(g.nodes[0].bytes_read, 128);
  EXPECT_EQ(g.nodes[0].bytes_written, 128);
  EXPECT_EQ(fused_bytes(g), 256);
}

TEST(Tracer, TopkAndScatterErrorsNameTheProblem) {
  auto trace = [](const std::string& body) {
    const std::string src =
        "DIMS = {\"T\": 4, \"E\": 8, \"K\": 2}\n"
        "def model(x: Tensor(\"T,E\"), i: Tensor(\"T,K\", dtype=\"int32\"), "
        "s: Tensor(\"T,K\"), h: Tensor(\"T,K\", dtype=\"fp16\"), f: Tensor(\"T,K\")):\n"
        "    return " +
        body + "\n";
    trace_program(load_program_source(src, "t.py"), {});
  };
  expect_user_error([&] { trace("topk(x, k=9, dim=\"E\")[0]"); }, ErrorKind::kShape,
                    "k = 9 must be between 1 and the size of dim 'E' (8)");
  expect_user_error([&] { trace("topk(x, k=2, dim=\"E\", largest=2)[0]"); }, ErrorKind::kShape,
                    "largest must be 0 or 1");
  expect_user_error([&] { trace("scatter(x, i, h, dim=\"E\")"); }, ErrorKind::kType,
                    "scatter(): src 'h' is fp16 but base 'x' is fp32");
  expect_user_error([&] { trace("scatter(x, f, s, dim=\"E\")"); }, ErrorKind::kType,
                    "scatter(): index 'f' must have an integer dtype, got fp32");
  expect_user_error([&] { trace("scatter(x, i, s, dim=\"T\")"); }, ErrorKind::kShape,
                    "must have base's shape (T=4, E=8) except along dim 'T'");
}

}  // namespace
}  // namespace solar
