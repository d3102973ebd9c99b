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
