#include <gtest/gtest.h>

#include "solar/ir/checker.h"
#include "solar/ir/parser.h"
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
