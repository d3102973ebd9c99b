#include <gtest/gtest.h>

#include "solar/ir/checker.h"
#include "solar/ir/parser.h"
#include "solar/ir/printer.h"
#include "test_util.h"

namespace solar {
namespace {

using testing::expect_user_error;

Program check(const std::string& src) { return check_program(parse_source(src, "t.py")); }

TEST(Checker, PaperKernelsLiftToThePapersEinsumStrings) {
  Program p = check_program(parse_file(testing::example("linear_bias_matmul.py")));
  // Figure 2c: linear#0 BMK,NK,N->BMN; matmul#0 BMN,NP->BMP.
  EXPECT_EQ(p.find_kernel("linear")->einsum, "BMK,NK,N->BMN");
  EXPECT_EQ(p.find_kernel("matmul")->einsum, "BMN,NP->BMP");
  const Kernel& lin = *p.find_kernel("linear");
  ASSERT_EQ(lin.nests.size(), 2u);
  EXPECT_EQ(lin.nests[0].einsum, "N->BMN");       // bias broadcast, no FLOPs
  EXPECT_EQ(lin.nests[1].einsum, "BMK,NK->BMN");  // the contraction
  EXPECT_TRUE(lin.nests[1].updates[0].is_mac);
  EXPECT_EQ(lin.nests[1].updates[0].flops.total(), 0);  // a MAC has no extra FLOPs
}

const char* kConv = R"(
@kernel
def conv(X: Tensor("N,C,H,W"), K: Tensor("O,C,R,S"), stride: int, pad: int) -> Tensor("N,O,P,Q"):
    Y = Tensor(N=X.shape[0], O=K.shape[0], P=(X.shape[2] + 2*pad - K.shape[2]) // stride + 1, Q=(X.shape[3] + 2*pad - K.shape[3]) // stride + 1)
    for n in Dim("N"):
        for o in Dim("O"):
            for p in Dim("P"):
                for q in Dim("Q"):
                    for c in Dim("C"):
                        for r in Dim("R"):
                            for s in Dim("S"):
                                if 0 <= p*stride + r - pad and p*stride + r - pad < size("H") and 0 <= q*stride + s - pad and q*stride + s - pad < size("W"):
                                    Y[n, o, p, q] += X[n, c, p*stride + r - pad, q*stride + s - pad] * K[o, c, r, s]
    return Y
def model(x: Tensor("N,C,H,W"), k: Tensor("O,C,R,S", role="weight")):
    return conv(x, k, 2, 1)
DIMS = {"N": 1, "C": 3, "H": 8, "W": 8, "O": 4, "R": 3, "S": 3}
)";

TEST(Checker, SlidingWindowEinsumString) {
  Program p = check(kConv);
  EXPECT_EQ(p.find_kernel("conv")->einsum, "NC(P+R)(Q+S),OCRS->NOPQ");
}

// docs/ir.md §7.2: a MAC needs a reduction dim and a kept dim that only one of the two factors
// indexes (GEMM, GEMV, convolution); a square or a batched dot product is a vector mul + add.
const char* kProducts = R"(
@kernel
def products(X: Tensor("M,K"), Z: Tensor("M,K"), V: Tensor("K"), W: Tensor("N,K"), Mu: Tensor("M"), c: float) -> Tensor("M"):
    Sq = Tensor(M=X.shape[0])
    Dot = Tensor(M=X.shape[0])
    Gv = Tensor(M=X.shape[0])
    Gm = Tensor(M=X.shape[0], N=W.shape[0])
    Cv = Tensor(M=X.shape[0])
    Y = Tensor(M=X.shape[0])
    for m in Dim("M"):
        for k in Dim("K"):
            Sq[m] += X[m, k] * X[m, k]
    for m in Dim("M"):
        for k in Dim("K"):
            Dot[m] += X[m, k] * Z[m, k]
    for m in Dim("M"):
        for k in Dim("K"):
            Gv[m] += X[m, k] * V[k]
    for m in Dim("M"):
        for n in Dim("N"):
            for k in Dim("K"):
                Gm[m, n] += X[m, k] * W[n, k]
    for m in Dim("M"):
        for k in Dim("K"):
            Cv[m] += (X[m, k] - Mu[m]) * (X[m, k] - Mu[m])
    for m in Dim("M"):
        Y[m] = Sq[m] * (size("M") * size("K")) + Dot[m] / (size("K") - c) + Gv[m] + Cv[m] + Gm[m, 0]
    return Y
def model(x: Tensor("M,K"), z: Tensor("M,K"), v: Tensor("K"), w: Tensor("N,K", role="weight"), mu: Tensor("M")):
    return products(x, z, v, w, mu, 1.0)
DIMS = {"M": 4, "K": 8, "N": 3}
)";

TEST(Checker, MacsNeedADimOnlyOneFactorIndexes) {
  Program p = check(kProducts);
  const Kernel& k = *p.find_kernel("products");
  ASSERT_EQ(k.nests.size(), 6u);
  auto update = [&](size_t nest) -> const Update& { return k.nests[nest].updates[0]; };
  // Sq[m] += X[m, k] * X[m, k]: both factors index m: 1 mul + 1 add per point.
  EXPECT_FALSE(update(0).is_mac);
  EXPECT_EQ(update(0).flops.mul, 1);
  EXPECT_EQ(update(0).flops.add, 1);
  // Dot[m] += X[m, k] * Z[m, k]: a batched dot product, vector work as well.
  EXPECT_FALSE(update(1).is_mac);
  EXPECT_EQ(update(1).flops.total(), 2);
  // GEMV: m is indexed by X only; GEMM: m by X only, n by W only. No FLOPs beside the MAC.
  EXPECT_TRUE(update(2).is_mac);
  EXPECT_EQ(update(2).flops.total(), 0);
  EXPECT_TRUE(update(3).is_mac);
  EXPECT_EQ(update(3).flops.total(), 0);
  // (X - Mu)^2 written as a product: both factors index m (through X and Mu): 2 sub, 1 mul,
  // 1 accumulate.
  EXPECT_FALSE(update(4).is_mac);
  EXPECT_EQ(update(4).flops.add, 3);
  EXPECT_EQ(update(4).flops.mul, 1);
  // Arithmetic on values equal at every point (size() products, size("K") - c) is done once
  // per call: Sq * (..) 1 mul, Dot / (..) 1 div, 4 adds.
  EXPECT_EQ(update(5).flops.mul, 1);
  EXPECT_EQ(update(5).flops.div, 1);
  EXPECT_EQ(update(5).flops.add, 4);
  EXPECT_EQ(update(5).flops.total(), 6);
}

// The typed scalar IR of one update (ir/kernel_ir.h): instructions in evaluation order,
// loads naming their read, the point-invariant `alpha * 2.0` one static instruction.
constexpr const char* kScalarIr = R"(
DIMS = {"M": 4, "K": 8}

@kernel
def scaled(X: Tensor("M,K", dtype="bf16"), Y: Tensor("M,K"), alpha: float) -> Tensor("M,K"):
    Z = Tensor(M=X.shape[0], K=X.shape[1])
    for m in Dim("M"):
        for k in Dim("K"):
            Z[m, k] = select(X[m, k] > 0.0, exp(X[m, k]) * (alpha * 2.0), Y[m, k] - m)
    return Z

def model(X: Tensor("M,K", dtype="bf16", role="input"), Y: Tensor("M,K", role="input")):
    return scaled(X, Y, 0.5)
)";

TEST(Checker, UpdatesLowerToTheTypedScalarIr) {
  Program p = check(kScalarIr);
  const Update& u = p.find_kernel("scaled")->nests[0].updates[0];
  ASSERT_EQ(u.reads.size(), 3u);  // X[m, k] (condition), X[m, k] (exp), Y[m, k]
  const auto& in = u.body.insts;
  // %0 load X (read 0), %1 static 0.0, %2 cmp, %3 load X (read 1), %4 call exp, %5 static
  // alpha * 2.0, %6 mul, %7 load Y (read 2), %8 index m, %9 sub, %10 select.
  ASSERT_EQ(in.size(), 11u);
  EXPECT_EQ(u.body.result, 10);
  EXPECT_EQ(in[0].op, ScalarOp::kLoad);
  EXPECT_EQ(in[0].read, 0);
  EXPECT_EQ(in[0].dtype, DType::kBf16);
  EXPECT_EQ(in[1].op, ScalarOp::kStatic);
  EXPECT_EQ(in[2].op, ScalarOp::kCompare);
  EXPECT_EQ(in[2].dtype, DType::kBool);
  EXPECT_EQ(in[3].read, 1);
  EXPECT_EQ(in[4].op, ScalarOp::kCall);
  EXPECT_EQ(in[4].fn, "exp");
  EXPECT_EQ(in[5].op, ScalarOp::kStatic);
  EXPECT_EQ(print_expr(*in[5].expr), "alpha * 2.0");
  EXPECT_EQ(in[6].op, ScalarOp::kMul);
  EXPECT_EQ(in[6].dtype, DType::kFp64);  // bf16 times a static fp64: the wider
  EXPECT_EQ(in[7].read, 2);
  EXPECT_EQ(in[7].dtype, DType::kFp32);
  EXPECT_EQ(in[8].op, ScalarOp::kLoopVar);
  EXPECT_EQ(in[9].op, ScalarOp::kSub);
  EXPECT_EQ(in[10].op, ScalarOp::kSelect);
  EXPECT_EQ(in[10].args, (std::vector<int>{2, 6, 9}));
  // The count visits it: 1 compare, 1 transcendental (exp), 1 mul, 1 add (the sub); the
  // static alpha * 2.0 counts nothing.
  EXPECT_EQ(u.flops.compare, 1);
  EXPECT_EQ(u.flops.transcendental, 1);
  EXPECT_EQ(u.flops.mul, 1);
  EXPECT_EQ(u.flops.add, 1);
  EXPECT_EQ(u.flops.total(), 4);
  const std::string text = print_kernel_ir(p);
  EXPECT_NE(text.find("%4 = call exp"), std::string::npos) << text;
  EXPECT_NE(text.find("%0 = load bf16 X[m, k]"), std::string::npos) << text;
}

TEST(Checker, PassesRunInOrderWithADumpAfterEach) {
  std::vector<std::string> seen;
  int flops_after_lowering = -1;
  check_program(parse_source(kScalarIr, "t.py"), [&](const std::string& pass, const Program& p) {
    seen.push_back(pass);
    const Update& u = p.kernels[0].nests[0].updates[0];
    if (pass == "lower_scalars") flops_after_lowering = static_cast<int>(u.flops.total());
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"check_and_lower", "lower_scalars", "count_flops",
                                            "derive_einsums"}));
  EXPECT_EQ(flops_after_lowering, 0);  // counted by the next pass, not before
}

// A GEMM with per-block scales (kernel mm) and one with a scale per element of K (kernel mk),
// written with operands of dtype `ab` and scales of dtype `s`.
std::string block_scaled(const std::string& ab, const std::string& s) {
  std::string src = R"(
@kernel
def mm(A: Tensor("M,KB,KI", dtype="AB"), B: Tensor("N,KB,KI", dtype="AB"), SA: Tensor("M,KB", dtype="S"), SB: Tensor("N,KB", dtype="S")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[0], fill=0)
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for kb in Dim("KB"):
                for ki in Dim("KI"):
                    C[m, n] += A[m, kb, ki] * B[n, kb, ki] * SA[m, kb] * SB[n, kb]
    return C
@kernel
def mk(A: Tensor("M,KB,KI", dtype="AB"), B: Tensor("N,KB,KI", dtype="AB"), SK: Tensor("KB,KI", dtype="S")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[0], fill=0)
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for kb in Dim("KB"):
                for ki in Dim("KI"):
                    C[m, n] += A[m, kb, ki] * B[n, kb, ki] * SK[kb, ki]
    return C
DIMS = {"M": 4, "N": 3, "KB": 2, "KI": 16}
def model(a: Tensor("M,KB,KI", dtype="AB"), b: Tensor("N,KB,KI", dtype="AB"), sa: Tensor("M,KB", dtype="S"), sb: Tensor("N,KB", dtype="S"), sk: Tensor("KB,KI", dtype="S")):
    return mm(a, b, sa, sb), mk(a, b, sk)
)";
  for (const auto& [token, dtype] : {std::pair{"\"AB\"", ab}, std::pair{"\"S\"", s}})
    for (size_t at = src.find(token); at != std::string::npos; at = src.find(token, at))
      src.replace(at, std::string(token).size(), "\"" + dtype + "\"");
  return src;
}

TEST(Checker, BlockScalesOfNvfp4OperandsAreTheMatrixUnits) {
  // C[m, n] += A * B * SA[m, kb] * SB[n, kb]: 3 muls in the product tree, 1 of them the MAC's.
  // With nvfp4 A, B and fp8_e4m3 scales constant over each block of KI (NVFP4, tcgen05.mma
  // kind::mxf4nvf4 applies them): 0 vector FLOPs. Any other dtypes: 2 muls per point.
  // D[m, n] += A * B * SK[kb, ki] scales every element of K (no block): 1 mul per point either
  // way.
  const Program nv = check(block_scaled("nvfp4", "fp8_e4m3"));
  EXPECT_TRUE(nv.find_kernel("mm")->nests[0].updates[0].is_mac);
  EXPECT_EQ(nv.find_kernel("mm")->nests[0].updates[0].flops.total(), 0);
  EXPECT_EQ(nv.find_kernel("mk")->nests[0].updates[0].flops.mul, 1);
  for (const auto& [ab, s] : std::vector<std::pair<std::string, std::string>>{
           {"fp32", "fp8_e4m3"}, {"nvfp4", "fp32"}, {"fp8_e4m3", "fp8_e4m3"}}) {
    const Program p = check(block_scaled(ab, s));
    EXPECT_TRUE(p.find_kernel("mm")->nests[0].updates[0].is_mac) << ab << " " << s;
    EXPECT_EQ(p.find_kernel("mm")->nests[0].updates[0].flops.mul, 2) << ab << " " << s;
  }
}

TEST(Checker, ConvolutionIsAMac) {
  Program p = check(kConv);
  const Update& u = p.find_kernel("conv")->nests[0].updates[0];
  EXPECT_TRUE(u.is_mac);
  EXPECT_EQ(u.flops.total(), 0);
}

TEST(Checker, ReportsAllProblemsAtOnce) {
  const char* src = R"(
@kernel
def bad(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i*i] = X[i]
    for j in Dim("Z"):
        Y[j] = 0
    return Y
def model(x: Tensor("N")):
    return bad(x)
)";
  try {
    check(src);
    FAIL();
  } catch (const UserError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].kind, ErrorKind::kNonAffine);
    EXPECT_EQ(e.diagnostics()[0].loc.line, 6u);
    EXPECT_EQ(e.diagnostics()[1].kind, ErrorKind::kUnknownDim);
    EXPECT_NE(e.diagnostics()[1].hint.find("known dims here: N"), std::string::npos);
  }
}

TEST(Checker, DataDependentIfAndImperfectNest) {
  expect_user_error(
      [] {
        check(
            "@kernel\ndef f(X: Tensor(\"N\")) -> Tensor(\"N\"):\n    Y = Tensor(N=X.shape[0])\n"
            "    for i in Dim(\"N\"):\n        if X[i] > 0:\n            Y[i] = X[i]\n    return "
            "Y\n"
            "def model(x: Tensor(\"N\")):\n    return f(x)\n");
      },
      ErrorKind::kDataDependent, "condition reads tensor values");
  expect_user_error(
      [] {
        check(
            "@kernel\ndef f(X: Tensor(\"N,M\")) -> Tensor(\"N\"):\n    Y = Tensor(N=X.shape[0])\n"
            "    for i in Dim(\"N\"):\n        Y[i] = 0\n        for j in Dim(\"M\"):\n"
            "            Y[i] += X[i, j]\n    return Y\ndef model(x: Tensor(\"N,M\")):\n"
            "    return f(x)\n");
      },
      ErrorKind::kImperfectNest, "imperfect loop nest");
}

// docs/ir.md §1: an IR program is never Python with side effects. Each refusal below was
// accepted before (imports were ignored, defaults unchecked, any `X.kernel` a decorator); the
// position is where the refused construct starts, counted by hand in each source.
const char* kRelu = R"(@kernel
def relu(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = max(X[i], 0.0)
    return Y
def model(x: Tensor("N")):
    return relu(x)
DIMS = {"N": 4}
)";

// The checker's first diagnostic for `src` (with `only`: its one diagnostic).
Diagnostic only_error(const std::string& src, bool only = true) {
  try {
    check(src);
  } catch (const UserError& e) {
    if (only) {
      EXPECT_EQ(e.diagnostics().size(), 1u) << e.what();
    }
    return e.diagnostics().at(0);
  }
  ADD_FAILURE() << "accepted:\n" << src;
  return {};
}

TEST(Checker, ImportsOnlyTheIrsOwnNamesFromSolarIr) {
  // Accepted: the import every IR file in the repository writes, in any order, and none.
  check(std::string("from solar.ir import kernel, Tensor, Dim\n") + kRelu);
  check(std::string("from solar.ir import Dim, Tensor, kernel\nimport solar.ir\n") + kRelu);
  check(kRelu);
  // A continuation line joins `from \` and `os import system` into one statement at 1:1.
  Diagnostic d = only_error(std::string("from \\\n    os import system\n") + kRelu);
  EXPECT_EQ(d.kind, ErrorKind::kUnsupported);
  EXPECT_EQ(d.loc.line, 1u);
  EXPECT_EQ(d.loc.col, 1u);
  EXPECT_NE(d.message.find("'from os import system': an IR program imports nothing but solar.ir"),
            std::string::npos);
  EXPECT_NE(d.hint.find("from solar.ir import kernel, Tensor, Dim"), std::string::npos);
  // An alias, even of solar.ir's own name, on line 2 (after the accepted line 1).
  d = only_error(std::string("from solar.ir import kernel\nfrom solar.ir import kernel as k\n") +
                 kRelu);
  EXPECT_EQ(d.loc.line, 2u);
  EXPECT_NE(d.message.find("'from solar.ir import kernel as k'"), std::string::npos);
  d = only_error(std::string("import atexit\n") + kRelu);
  EXPECT_NE(d.message.find("'import atexit'"), std::string::npos);
  d = only_error(std::string("from solar.ir import system\n") + kRelu);
  EXPECT_NE(d.message.find("'from solar.ir import system'"), std::string::npos);
}

TEST(Checker, DefaultValuesAreLiteralsNeverCalls) {
  // Accepted: numbers, strings, a negative number, a tuple of them.
  check(std::string(kRelu) +
        "def helper(t, a=1, b=-2.5, c=\"x\", d=(1, 2), e=None):\n"
        "    return t\n");
  // `def helper(t, s=system("id")):` on line 10: the call starts at column 17.
  Diagnostic d =
      only_error(std::string(kRelu) + "def helper(t, s=system(\"id\")):\n    return t\n");
  EXPECT_EQ(d.kind, ErrorKind::kUnsupported);
  EXPECT_EQ(d.loc.line, 10u);
  EXPECT_EQ(d.loc.col, 17u);
  EXPECT_NE(d.message.find("a default value must not call 'system'"), std::string::npos);
  // A call inside a tuple default, and an attribute, are refused too.
  d = only_error(std::string(kRelu) + "def helper(t, s=(1, run())):\n    return t\n");
  EXPECT_NE(d.message.find("must not call 'run'"), std::string::npos);
  d = only_error(std::string(kRelu) + "def helper(t, s=os.environ):\n    return t\n");
  EXPECT_NE(d.message.find("must be a literal, not 'os.environ'"), std::string::npos);
}

TEST(Checker, OnlyTheBareKernelNameIsADecorator) {
  // `@atexit.kernel` on line 1, column 2 (after the '@'): not the IR's decorator (the
  // function is then checked as a helper, whose kernel statements add diagnostics after it).
  std::string src = kRelu;
  src.replace(0, 7, "@atexit.kernel");
  Diagnostic d = only_error(src, false);
  EXPECT_EQ(d.kind, ErrorKind::kUnsupported);
  EXPECT_EQ(d.loc.line, 1u);
  EXPECT_EQ(d.loc.col, 2u);
  EXPECT_NE(d.message.find("unknown decorator 'atexit.kernel'"), std::string::npos);
  // A function named kernel would rebind the decorator's name when read as Python.
  d = only_error(std::string(kRelu) + "def kernel(f):\n    return f\n");
  EXPECT_NE(d.message.find("function 'kernel' shadows the @kernel decorator"), std::string::npos);
  // So would a constant (`kernel = 3` at line 1, column 1).
  d = only_error(std::string("kernel = 3\n") + kRelu);
  EXPECT_EQ(d.loc.line, 1u);
  EXPECT_EQ(d.loc.col, 1u);
  EXPECT_NE(d.message.find("constant 'kernel' shadows the @kernel decorator"), std::string::npos);
}

TEST(Checker, RecursionInHelpers) {
  expect_user_error(
      [] {
        check(
            "def a(x):\n    return b(x)\ndef b(x):\n    return a(x)\n"
            "def model(x: Tensor(\"N\")):\n    return a(x)\n");
      },
      ErrorKind::kRecursion, "a -> b -> a");
}

}  // namespace
}  // namespace solar
