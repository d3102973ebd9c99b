// Chain reordering: the classic matrix chain (CLRS 15.2 dims plus a fourth matrix) costed
// directly, as one 4-operand nest and as a chain of mm kernels; the MLA example; what breaks
// a chain. Every expected number is derived by hand in the comment beside it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "solar/pipeline/pipeline.h"
#include "solar/sol/chains.h"
#include "test_util.h"

namespace solar {
namespace {

using solar::testing::example;

// A1 10x100, A2 100x5, A3 5x50 (CLRS 15.2) and A4 50x20: ranks i=10 j=100 k=5 l=50 m=20.
// Scalar multiplications (MACs) of the five orders:
//   ((A1 A2) A3) A4 = 10*100*5 + 10*5*50 + 10*50*20     = 5,000 + 2,500 + 10,000  = 17,500
//   (A1 (A2 A3)) A4 = 100*5*50 + 10*100*50 + 10*50*20   = 25,000 + 50,000 + 10,000 = 85,000
//   (A1 A2)(A3 A4)  = 10*100*5 + 5*50*20 + 10*5*20      = 5,000 + 5,000 + 1,000    = 11,000
//   A1 ((A2 A3) A4) = 100*5*50 + 100*50*20 + 10*100*20  = 25,000 + 100,000 + 20,000 = 145,000
//   A1 (A2 (A3 A4)) = 5*50*20 + 100*5*20 + 10*100*20    = 5,000 + 10,000 + 20,000  = 35,000
// Best (A1 A2)(A3 A4), 17,500 / 11,000 = 1.59x fewer than left to right; worst 145,000:
// range 145,000 / 11,000 = 13.2x.
const std::map<std::string, int64_t> kClrs = {
    {"i", 10}, {"j", 100}, {"k", 5}, {"l", 50}, {"m", 20}};

std::vector<ChainTensor> clrs_operands() {
  return {{"A1", {"i", "j"}, DType::kFp32},
          {"A2", {"j", "k"}, DType::kFp32},
          {"A3", {"k", "l"}, DType::kFp32},
          {"A4", {"l", "m"}, DType::kFp32}};
}

void expect_clrs_orders(const Chain& c, const std::string& a, const std::string& b,
                        const std::string& cc, const std::string& d) {
  ASSERT_EQ(c.orders.size(), 5u);  // Catalan(3)
  EXPECT_EQ(c.orders[0].expression, "((" + a + "*" + b + ")*" + cc + ")*" + d);
  EXPECT_EQ(c.orders[0].macs, 17500);
  EXPECT_EQ(c.orders[0].flops, 35000);  // 2 FLOPs per MAC: every step sums a rank
  EXPECT_EQ(c.left_to_right, 0u);
  EXPECT_EQ(c.orders[c.best].expression, "(" + a + "*" + b + ")*(" + cc + "*" + d + ")");
  EXPECT_EQ(c.orders[c.best].macs, 11000);
  EXPECT_EQ(c.orders[c.worst].expression, a + "*((" + b + "*" + cc + ")*" + d + ")");
  EXPECT_EQ(c.orders[c.worst].macs, 145000);
  int64_t macs[5];
  for (size_t i = 0; i < 5; ++i) macs[i] = c.orders[i].macs;
  std::sort(macs, macs + 5);
  EXPECT_EQ(macs[0], 11000);
  EXPECT_EQ(macs[1], 17500);
  EXPECT_EQ(macs[2], 35000);
  EXPECT_EQ(macs[3], 85000);
  EXPECT_EQ(macs[4], 145000);
}

TEST(ChainOrders, ClrsFourMatrixChain) {
  const Chain c = chain_orders(clrs_operands(), {"Y", {"i", "m"}, DType::kFp32}, kClrs);
  EXPECT_EQ(c.einsum, "ij,jk,kl,lm->im");
  expect_clrs_orders(c, "A1", "A2", "A3", "A4");
  // Bytes, fp32: operands 1,000 + 500 + 250 + 1,000 = 2,750 elements, output 10*20 = 200:
  // 2,950 * 4 = 11,800 B in every order. Left to right writes and reads back A1A2 (10x5 = 50)
  // and A1A2A3 (10x50 = 500): 550 * 4 = 2,200 B, twice: 11,800 + 4,400 = 16,200 B.
  EXPECT_EQ(c.orders[0].intermediate_bytes, 2200);
  EXPECT_EQ(c.orders[0].bytes, 16200);
  // Best: A1A2 (10x5 = 50) and A3A4 (5x20 = 100): 150 * 4 = 600 B; 11,800 + 1,200 = 13,000 B.
  EXPECT_EQ(c.orders[c.best].bytes, 13000);
}

TEST(ChainOrders, ProductWithoutSumCostsOneFlopPerPoint) {
  // Mamba's dBu = delta[b,l,d] * B[b,l,n] * u[b,l,d] -> [b,l,d,n], b=2 l=3 d=4 n=5 (120
  // points). (delta*B) keeps b,l,d,n (u and the output need them): 120 multiplies, then 120
  // more: 240 FLOPs, 0 MACs. delta*(B*u): B*u is also [b,l,d,n]: 240 FLOPs. Range 1.
  const Chain c = chain_orders({{"delta", {"b", "l", "d"}, DType::kFp32},
                                {"B", {"b", "l", "n"}, DType::kFp32},
                                {"u", {"b", "l", "d"}, DType::kFp32}},
                               {"dBu", {"b", "l", "d", "n"}, DType::kFp32},
                               {{"b", 2}, {"l", 3}, {"d", 4}, {"n", 5}});
  ASSERT_EQ(c.orders.size(), 2u);
  for (const auto& o : c.orders) {
    EXPECT_EQ(o.macs, 0);
    EXPECT_EQ(o.flops, 240);
  }
  EXPECT_EQ(c.best, 0u);  // ties keep the first (left to right)
}

const char* kNest = R"(
from solar.ir import kernel, Tensor, Dim

@kernel
def chain4(A: Tensor("I,J"), B: Tensor("J,K"), C: Tensor("K,L"), D: Tensor("L,M")) -> Tensor("I,M"):
    Y = Tensor(I=A.shape[0], M=D.shape[1], fill=0)
    for i in Dim("I", parallel=True):
        for m in Dim("M", parallel=True):
            for j in Dim("J"):
                for k in Dim("K"):
                    for l in Dim("L"):
                        Y[i, m] += A[i, j] * B[j, k] * C[k, l] * D[l, m]
    return Y

DIMS = {"I": 10, "J": 100, "K": 5, "L": 50, "M": 20}

def model(a: Tensor("I,J", role="input"), b: Tensor("J,K", role="input"),
          c: Tensor("K,L", role="input"), d: Tensor("L,M", role="input")):
    return chain4(a, b, c, d)
)";

TEST(FindChains, FourOperandNest) {
  const Graph g = trace_program(load_program_source(kNest, "nest.py"), {});
  const auto chains = find_chains(g);
  ASSERT_EQ(chains.size(), 1u);
  const Chain& c = chains[0];
  EXPECT_EQ(c.kind, "nest");
  EXPECT_EQ(c.nodes, std::vector<std::string>{"chain4#0"});
  EXPECT_EQ(c.as_written, -1);
  // The kernel's ranks are I J K L M; the einsum string uses them.
  EXPECT_EQ(c.einsum, "IJ,JK,KL,LM->IM");
  ASSERT_EQ(c.orders.size(), 5u);
  EXPECT_EQ(c.orders[0].macs, 17500);
  EXPECT_EQ(c.orders[c.best].macs, 11000);
  EXPECT_EQ(c.orders[c.best].expression, "(A*B)*(C*D)");
  // As written, one nest over all 10*100*5*50*20 = 5,000,000 points: 5,000,000 MACs and two
  // more multiplies per point: 2 * 5,000,000 + 10,000,000 = 20,000,000 FLOPs.
  EXPECT_EQ(c.direct.macs, 5000000);
  EXPECT_EQ(c.direct.flops, 20000000);
  // Its bytes: the four operands and the output once: 11,800 B (above).
  EXPECT_EQ(c.direct.bytes, 11800);
}

std::string mm_chain(const std::string& body) {
  return R"(
from solar.ir import kernel, Tensor, Dim

@kernel
def mm(X: Tensor("M,K"), W: Tensor("K,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=W.shape[1], fill=0)
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                Y[m, n] += X[m, k] * W[k, n]
    return Y

@kernel
def relu(X: Tensor("M,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            Y[m, n] = max(X[m, n], 0.0)
    return Y

DIMS = {"I": 10, "J": 100, "K": 5, "L": 50, "M": 20}

def model(a1: Tensor("I,J", role="input"), a2: Tensor("J,K", role="weight"),
          a3: Tensor("K,L", role="weight"), a4: Tensor("L,M", role="weight")):
)" + body;
}

TEST(FindChains, ChainOfMatmulKernelsLeftToRight) {
  const Graph g = trace_program(
      load_program_source(mm_chain("    return mm(mm(mm(a1, a2), a3), a4)\n"), "mm.py"), {});
  const auto chains = find_chains(g);
  ASSERT_EQ(chains.size(), 1u);
  const Chain& c = chains[0];
  EXPECT_EQ(c.kind, "graph");
  EXPECT_EQ(c.nodes, (std::vector<std::string>{"mm#0", "mm#1", "mm#2"}));
  // Graph ranks get letters in order of first appearance.
  EXPECT_EQ(c.einsum, "ab,bc,cd,de->ae");
  expect_clrs_orders(c, "a1", "a2", "a3", "a4");
  EXPECT_EQ(c.as_written, 0);  // the program computes left to right: 17,500 MACs
}

TEST(FindChains, ChainOfMatmulKernelsAsWrittenPairs) {
  const Graph g = trace_program(
      load_program_source(mm_chain("    return mm(mm(a1, a2), mm(a3, a4))\n"), "mm.py"), {});
  const auto chains = find_chains(g);
  ASSERT_EQ(chains.size(), 1u);
  const Chain& c = chains[0];
  // The program already computes (a1 a2)(a3 a4), the best order (11,000 MACs).
  ASSERT_GE(c.as_written, 0);
  EXPECT_EQ(c.orders[static_cast<size_t>(c.as_written)].expression, "(a1*a2)*(a3*a4)");
  EXPECT_EQ(static_cast<size_t>(c.as_written), c.best);
}

TEST(FindChains, NonContractionOrSecondReaderBreaksTheChain) {
  // relu between the second and third mm: mm(mm(a1,a2),a3) is a 3-operand chain (i j k l:
  // (a1 a2) a3 = 5,000 + 2,500 = 7,500 MACs, CLRS's best; a1 (a2 a3) = 25,000 + 50,000 =
  // 75,000), and the last mm has a single contraction input.
  Graph g = trace_program(
      load_program_source(mm_chain("    return mm(relu(mm(mm(a1, a2), a3)), a4)\n"), "mm.py"), {});
  auto chains = find_chains(g);
  ASSERT_EQ(chains.size(), 1u);
  ASSERT_EQ(chains[0].orders.size(), 2u);
  EXPECT_EQ(chains[0].orders[0].macs, 7500);
  EXPECT_EQ(chains[0].orders[1].macs, 75000);
  EXPECT_EQ(chains[0].best, 0u);
  // mm(a1, a2) read twice (by mm and by the output): no chain.
  g = trace_program(
      load_program_source(mm_chain("    p = mm(a1, a2)\n    return mm(p, a3), p\n"), "mm.py"), {});
  EXPECT_TRUE(find_chains(g).empty());
}

TEST(FindChains, MlaAbsorbedAttentionExample) {
  const Graph g = trace_program(load_program(example("mla_absorbed_attention.py")), {});
  const auto chains = find_chains(g);
  ASSERT_EQ(chains.size(), 2u);
  // Score chain q_nope (S,H,N) w_uk (H,N,C) c_kv (T,C), B = 1 dropped: (q_nope w_uk) c_kv =
  // S*H*N*C + H*S*T*C = 4096*128*128*512 + 128*4096*4096*512 = 34,359,738,368 +
  // 1,099,511,627,776 = 1,133,871,366,144 MACs, as written; q_nope (w_uk c_kv) = T*H*N*C +
  // H*S*T*N = 34,359,738,368 + 274,877,906,944 = 309,237,645,312: 3.67x fewer.
  const Chain& s = chains[0];
  EXPECT_EQ(s.nodes, (std::vector<std::string>{"absorb_q#0", "latent_scores#0"}));
  EXPECT_EQ(s.as_written, 0);
  EXPECT_EQ(s.orders[0].macs, 1133871366144);
  EXPECT_EQ(s.orders[s.best].macs, 309237645312);
  // Value chain (the paper's Figure 4b), in units of 2^30 = 1,073,741,824 MACs: left to right
  // 1024 + 32 + 448 = 1504; best (P (c_kv w_uv)) w_o = 32 + 256 + 448 = 736 -> 2.04x; worst
  // P (c_kv (w_uv w_o)) = 56 + 1792 + 14336 = 16184 -> range 22.0x.
  const Chain& v = chains[1];
  EXPECT_EQ(v.nodes, (std::vector<std::string>{"latent_attend#0", "up_v#0", "out_proj#0"}));
  ASSERT_EQ(v.orders.size(), 5u);
  EXPECT_EQ(v.as_written, 0);
  const int64_t g30 = int64_t{1} << 30;
  EXPECT_EQ(v.orders[0].macs, 1504 * g30);
  EXPECT_EQ(v.orders[v.best].macs, 736 * g30);
  EXPECT_EQ(v.orders[v.best].expression, "(softmax#0.Y*(c_kv*w_uv))*w_o");
  EXPECT_EQ(v.orders[v.worst].macs, 16184 * g30);
  EXPECT_NEAR(static_cast<double>(v.orders[0].flops) / static_cast<double>(v.orders[v.best].flops),
              2.0435, 5e-5);  // 1504 / 736
  EXPECT_NEAR(
      static_cast<double>(v.orders[v.worst].flops) / static_cast<double>(v.orders[v.best].flops),
      21.989, 5e-4);  // 16184 / 736
}

}  // namespace
}  // namespace solar
