// The cache-aware bound (sol/io_bound.h): hand-derived values of the segment / HBL bound, the
// bound against the brute-force minimum over all tilings on small einsums, the bound against
// the fused traffic and the best schedule found on every example, which tensors a nest keeps
// or drops, and the elementwise chain that the old search reported above what fusion reaches.
// Every expected number is derived by hand in the comment beside it.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>

#include "solar/arch/spec.h"
#include "solar/graph/graph.h"
#include "solar/pipeline/pipeline.h"
#include "solar/sol/analysis.h"
#include "solar/sol/cache_aware.h"
#include "solar/sol/io_bound.h"
#include "solar/trace/tracer.h"

namespace solar {
namespace {

const std::string kRoot = SOLAR_SOURCE_DIR;

// --- problems by hand ------------------------------------------------------------------------

BoundTensor tensor(uint64_t ranks, bool output = false, double bytes = 4.0) {
  BoundTensor t;
  t.ranks = ranks;
  t.bytes_per_element = bytes;
  t.is_output = output;
  return t;
}

// Z[M,N] += A[M,K] B[K,N]: ranks M=0, K=1, N=2; A {M,K}, B {K,N}, Z {M,N}.
BoundProblem matmul_bound(int64_t m, int64_t k, int64_t n) {
  BoundProblem p;
  p.sizes = {m, k, n};
  p.tensors = {tensor(0b011), tensor(0b110), tensor(0b101, true)};
  return p;
}

bool contains(const std::vector<std::vector<double>>& all, const std::vector<double>& s) {
  for (const auto& t : all) {
    bool same = t.size() == s.size();
    for (size_t j = 0; same && j < s.size(); ++j) same = std::abs(t[j] - s[j]) < 1e-9;
    if (same) return true;
  }
  return false;
}

TEST(IoBound, MatmulCandidatesAreThePolytopeVertices) {
  // Rows: M {A,Z}, K {A,B}, N {B,Z}. The vertices of {s >= 0, s_A + s_Z >= 1, s_A + s_B >= 1,
  // s_B + s_Z >= 1}: (1/2,1/2,1/2) (all three rows tight) and the three 0/1 covers with one
  // zero, e.g. (1,1,0) (s_Z = 0, rows M and N tight).
  const auto c = hbl_candidates(matmul_bound(8, 8, 8));
  EXPECT_TRUE(contains(c, {0.5, 0.5, 0.5}));
  EXPECT_TRUE(contains(c, {1, 1, 0}));
  EXPECT_TRUE(contains(c, {1, 0, 1}));
  EXPECT_TRUE(contains(c, {0, 1, 1}));
  for (const auto& s : c) {  // every candidate is feasible
    EXPECT_GE(s[0] + s[2], 1.0 - 1e-12);
    EXPECT_GE(s[0] + s[1], 1.0 - 1e-12);
    EXPECT_GE(s[1] + s[2], 1.0 - 1e-12);
  }
}

TEST(IoBound, LargeMatmulClosedForm) {
  // n = 4096, fp32 (b = 4), C = 2^20 B. s = (1/2,1/2,1/2), sigma = 3/2, inputs and outputs
  // constrained: budget 2C + M. Water-filling with equal weights and bytes: a_j = budget / 12
  // (below the caps n^2 = 2^24). The best segment size is M = 2C / (sigma - 1) = 4C: budget 6C,
  // a_j = C / 2 = 2^19, F_max = (2^19)^{3/2} = 2^28.5. Points n^3 = 2^36, so at least
  // ceil(2^7.5) = ceil(181.02) = 182 segments and Q >= 4C x 181 = 724 x 2^20 = 759,169,024 B.
  // The neighbouring sizes give less: M = 2^1.5 C: budget 4.83C, F = (0.4024 C)^1.5 =
  // 2.741e8, 251 segments, Q = 2.83C x 250 = 707C; M = 2^2.5 C: budget 7.66C, F = 5.473e8,
  // 126 segments, Q = 5.66C x 125 = 707C. The 0/1 covers (s_Z = 0: budget C + M, F =
  // ((C + M) / 8)^2) give at most (C = M) 2^36 / 2^36 = 1 segment: nothing.
  const EinsumBound b = einsum_io_bound(matmul_bound(4096, 4096, 4096), 1 << 20);
  EXPECT_EQ(b.bytes, 759169024);
  EXPECT_DOUBLE_EQ(b.segment_bytes, 4.0 * (1 << 20));
  EXPECT_NEAR(b.max_points, std::pow(2.0, 28.5), 1.0);
  EXPECT_EQ(b.weights, (std::vector<double>{0.5, 0.5, 0.5}));
  // The best schedule found for the same matmul at the same capacity is above it.
  TilingProblem t;
  t.ranks = {"M", "K", "N"};
  t.sizes = {4096, 4096, 4096};
  for (auto [ranks, out] :
       {std::pair{std::vector<int>{0, 1}, false}, std::pair{std::vector<int>{1, 2}, false},
        std::pair{std::vector<int>{0, 2}, true}}) {
    TileTensor tt;
    for (int r : ranks) {
      tt.dims.push_back({TileTerm{r, 1}});
      tt.extents.push_back(4096);
    }
    tt.is_output = tt.accumulates = out;
    t.tensors.push_back(tt);
  }
  EXPECT_GT(*min_dram_bytes(search_tilings(t), 1 << 20), b.bytes);
}

TEST(IoBound, OneKindOfTensorHasTheTwoCBudget) {
  // One input X[I] alone (I = 2^20, fp32), no output constrained: s_X = 1, budget C + M, so
  // a segment executes at most a = (C + M) / 4 points (below the cap 2^20 for every M
  // scanned) and Q >= M (ceil(2^22 / (C + M)) - 1). With C = 4,096 over M = C 2^(k/2),
  // k = -4..12: k = 10 (M = 131,072): ceil(31.03) = 32 -> 31 M = 4,063,232; k = 11
  // (M = 185,363.8): ceil(2^22 / 189,459.8) = ceil(22.14) = 23 -> 22 M = 4,078,003.6;
  // k = 12 (M = 262,144): ceil(15.75) = 16 -> 15 M = 3,932,160. The best, 4,078,003 B, stays
  // below the compulsory 4 MiB (4,194,304 B): one read of X.
  BoundProblem p;
  p.sizes = {1 << 20};
  p.tensors = {tensor(0b1)};
  const EinsumBound b = einsum_io_bound(p, 4096);
  EXPECT_EQ(b.bytes, 4078003);
  EXPECT_EQ(einsum_io_bound(p, 0).bytes, 0);  // no capacity: no bound claimed
  EXPECT_EQ(einsum_io_bound(BoundProblem{}, 4096).bytes, 0);
}

// --- against the brute-force minimum over all tilings -----------------------------------------

TileTensor plain(const std::vector<int>& ranks, const std::vector<int64_t>& sizes,
                 bool output = false) {
  TileTensor t;
  for (int r : ranks) {
    t.dims.push_back({TileTerm{r, 1}});
    t.extents.push_back(sizes[static_cast<size_t>(r)]);
  }
  t.is_output = output;
  t.accumulates = output;
  return t;
}

// The bound problem of a tiling problem with every tensor constrained (a node alone): dims of
// one rank keep it, windows are dropped.
BoundProblem as_bound(const TilingProblem& p) {
  BoundProblem b;
  b.sizes = p.sizes;
  for (const TileTensor& t : p.tensors) {
    BoundTensor bt;
    for (const auto& dim : t.dims)
      if (dim.size() == 1) bt.ranks |= uint64_t{1} << dim[0].rank;
    bt.bytes_per_element = t.bits / 8.0;
    bt.is_output = t.is_output;
    if (bt.ranks) b.tensors.push_back(bt);
  }
  return b;
}

// At every capacity from the smallest tiling up to 4x the compulsory traffic (steps of 1.19x):
// max(compulsory, bound) <= the least traffic of any tiling that fits. Returns how many
// capacities the bound alone exceeded the compulsory traffic (so a test can insist that the
// comparison is not vacuous).
int expect_below_brute_force(const TilingProblem& p, const std::string& what) {
  const Frontier f = brute_force_tilings(p);
  const BoundProblem b = as_bound(p);
  const int64_t compulsory = compulsory_bytes(p);
  int above = 0;
  for (double c = static_cast<double>(f.front().buffer_bytes); c <= 4.0 * compulsory; c *= 1.19) {
    const int64_t least = *min_dram_bytes(f, c);
    const int64_t bound = einsum_io_bound(b, c).bytes;
    EXPECT_LE(std::max(bound, compulsory), least) << what << " at " << c << " B";
    if (bound > compulsory) ++above;
  }
  return above;
}

TEST(IoBound, NeverAboveTheBruteForceMinimum) {
  auto mm = [](int64_t m, int64_t k, int64_t n) {
    TilingProblem p;
    p.ranks = {"M", "K", "N"};
    p.sizes = {m, k, n};
    p.tensors = {plain({0, 1}, p.sizes), plain({1, 2}, p.sizes), plain({0, 2}, p.sizes, true)};
    return p;
  };
  // Matmuls: small capacities force re-fetches, where the bound exceeds compulsory.
  EXPECT_GT(expect_below_brute_force(mm(8, 8, 8), "matmul 8^3"), 0);
  EXPECT_GT(expect_below_brute_force(mm(16, 16, 16), "matmul 16^3"), 0);
  expect_below_brute_force(mm(5, 3, 7), "matmul 5x3x7");
  expect_below_brute_force(mm(12, 2, 9), "matmul 12x2x9");
  // bmm Z[B,M,N] += A[B,M,K] C[B,K,N].
  TilingProblem bmm;
  bmm.ranks = {"B", "M", "K", "N"};
  bmm.sizes = {3, 6, 4, 6};
  bmm.tensors = {plain({0, 1, 2}, bmm.sizes), plain({0, 2, 3}, bmm.sizes),
                 plain({0, 1, 3}, bmm.sizes, true)};
  EXPECT_GT(expect_below_brute_force(bmm, "bmm"), 0);
  // 1-D conv Y[P] += X[P+R] W[R]: X's window dim is dropped from its projection.
  TilingProblem conv1;
  conv1.ranks = {"P", "R"};
  conv1.sizes = {16, 3};
  TileTensor x1;
  x1.dims = {{TileTerm{0, 1}, TileTerm{1, 1}}};
  x1.extents = {18};
  conv1.tensors = {x1, plain({1}, conv1.sizes), plain({0}, conv1.sizes, true)};
  expect_below_brute_force(conv1, "conv1d");
  // 2-D conv with channels Y[O,P,Q] += X[C,P+R,Q+S] W[O,C,R,S] (O=4, C=3, P=Q=4, R=S=2).
  TilingProblem conv2;
  conv2.ranks = {"O", "C", "P", "Q", "R", "S"};
  conv2.sizes = {4, 3, 4, 4, 2, 2};
  TileTensor x2;
  x2.dims = {{TileTerm{1, 1}}, {TileTerm{2, 1}, TileTerm{4, 1}}, {TileTerm{3, 1}, TileTerm{5, 1}}};
  x2.extents = {3, 5, 5};
  conv2.tensors = {x2, plain({0, 1, 4, 5}, conv2.sizes), plain({0, 2, 3}, conv2.sizes, true)};
  expect_below_brute_force(conv2, "conv2d");
  // Elementwise Y[I,J] = X[I,J] + V[I,J] (no reduction: plain writes).
  TilingProblem ew;
  ew.ranks = {"I", "J"};
  ew.sizes = {8, 8};
  TileTensor y = plain({0, 1}, ew.sizes, true);
  y.accumulates = false;
  ew.tensors = {plain({0, 1}, ew.sizes), plain({0, 1}, ew.sizes), y};
  expect_below_brute_force(ew, "elementwise");
  // Reductions: Y[M] += X[M,K] (a row sum) and Y[M] += X[M,K] V[K] (matrix-vector).
  TilingProblem rs;
  rs.ranks = {"M", "K"};
  rs.sizes = {16, 16};
  rs.tensors = {plain({0, 1}, rs.sizes), plain({0}, rs.sizes, true)};
  expect_below_brute_force(rs, "row sum");
  TilingProblem mv = rs;
  mv.tensors = {plain({0, 1}, mv.sizes), plain({1}, mv.sizes), plain({0}, mv.sizes, true)};
  expect_below_brute_force(mv, "matvec");
}

// --- from the graph --------------------------------------------------------------------------

Graph trace_text(const std::string& text, std::vector<std::pair<std::string, int64_t>> dims = {}) {
  TraceOptions o;
  o.dims = std::move(dims);
  return trace_program(load_program_source(text, "test.py"), o);
}

const char* kChain = R"(from solar.ir import kernel, Tensor, Dim

@kernel
def relu(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for n in Dim("N", parallel=True):
        Y[n] = max(X[n], 0.0)
    return Y

@kernel
def scale(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for n in Dim("N", parallel=True):
        Y[n] = X[n] * 2.0
    return Y

@kernel
def shift(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for n in Dim("N", parallel=True):
        Y[n] = X[n] + 1.0
    return Y

DIMS = {"N": 268435456}

def model(x: Tensor("N", role="input")):
    return shift(scale(relu(x)))
)";

TEST(IoBound, ElementwiseChainBoundIsTheFusedTraffic) {
  // Three elementwise kernels over N = 2^28 fp32 elements (1 GiB each) on H100 PCIe (L2 50
  // MiB): fused = x + the output = 2 x 2^30 = 2,147,483,648 B. Each nest alone is bounded by
  // its compulsory traffic, so the bound is the fused traffic; the best schedule found fuses
  // the three tile by tile (the intermediates stay on chip one tile at a time) and reaches it.
  // Before this bound (commit 5dd0d0b) the Cache-aware row printed 4,294,967,296 B: the
  // residency rule spilled the second intermediate, above what fusion achieves.
  const Graph g = trace_text(kChain);
  const Analysis a = analyze(g, load_arch_spec(kRoot + "/configs/arch/H100_PCIe.yaml"), {});
  ASSERT_TRUE(a.cache.available);
  EXPECT_EQ(a.fused.bytes, 2147483648);
  EXPECT_EQ(a.cache_aware.bytes, 2147483648);
  ASSERT_TRUE(a.cache_schedule.found);
  EXPECT_EQ(a.cache_schedule.bytes, 2147483648);
  EXPECT_DOUBLE_EQ(a.cache_schedule.gap, 1.0);
  // Each kernel alone: its input and its output, 2 GiB.
  for (const NodeSol& n : a.nodes) {
    EXPECT_EQ(n.cache_aware_bytes, 2147483648);
    EXPECT_EQ(n.cache_schedule_bytes, std::optional<int64_t>(2147483648));
  }
}

TEST(IoBound, WhichTensorsANestKeeps) {
  // Linear with bias then matmul (the paper's example): linear#0's MAC nest
  // Y[b,m,n] += X[b,m,k] W[n,k] over B M N K. Node scope: X, W and Y (all graph tensors; Y
  // first, the output). Graph scope: Y is an intermediate, so the nest gives no bound.
  const Graph g = graph_from_file(kRoot + "/examples/ir/linear_bias_matmul.py", {});
  const Node& linear = g.nodes[0];
  const auto p = einsum_bound_problem(g, linear, 1, BoundScope::kNode);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->tensors.size(), 3u);
  EXPECT_EQ(p->sizes, (std::vector<int64_t>{2, 128, 512, 256}));  // B M N K
  EXPECT_EQ(p->tensors[0].name, "Y");
  EXPECT_TRUE(p->tensors[0].is_output);
  EXPECT_EQ(p->tensors[0].ranks, 0b0111u);  // B M N
  EXPECT_EQ(p->tensors[1].ranks, 0b1011u);  // X: B M K
  EXPECT_EQ(p->tensors[2].ranks, 0b1100u);  // W: N K
  EXPECT_FALSE(einsum_bound_problem(g, linear, 1, BoundScope::kGraph));
  // The bias nest Y = Bias[n] is overwritten? No: the MAC nest accumulates into it, so its
  // values survive; but it writes one element per point (Y's dims B M N are its ranks), so it
  // is kept: Y and the Bias.
  const auto bias = einsum_bound_problem(g, linear, 0, BoundScope::kNode);
  ASSERT_TRUE(bias);
  EXPECT_EQ(bias->tensors.size(), 2u);
  // matmul#0 Z += Y D in graph scope: Z is the graph output, Y an intermediate (dropped), D a
  // weight: Z {B,M,P} and D {N,P}.
  const auto mm = einsum_bound_problem(g, g.nodes[1], 0, BoundScope::kGraph);
  ASSERT_TRUE(mm);
  ASSERT_EQ(mm->tensors.size(), 2u);
  EXPECT_EQ(mm->tensors[1].name, "D");
}

TEST(IoBound, NestsThatGiveNoBoundAndTensorsThatAreDropped) {
  // A guard may skip points (the padded conv of examples/ir/conv2d.py): no bound.
  const Graph conv = graph_from_file(kRoot + "/examples/ir/conv2d.py", {});
  EXPECT_TRUE((*conv.nodes[0].einsums)[1].guarded);
  EXPECT_FALSE(einsum_bound_problem(conv, conv.nodes[0], 1, BoundScope::kNode));
  // Its bias nest has no guard and is bounded.
  EXPECT_TRUE(einsum_bound_problem(conv, conv.nodes[0], 0, BoundScope::kNode));

  const char* text = R"(from solar.ir import kernel, Tensor, Dim

@kernel
def rowmax(X: Tensor("M,K")) -> Tensor("M"):
    Y = Tensor(M=X.shape[0])
    for m in Dim("M"):
        for k in Dim("K"):
            Y[m] = X[m, k]
    return Y

@kernel
def pick(X: Tensor("M,K"), V: Tensor("M,K")) -> Tensor("M,K"):
    Y = Tensor(M=X.shape[0], K=X.shape[1])
    for m in Dim("M"):
        for k in Dim("K"):
            Y[m, k] = select(X[m, k] > 0.0, X[m, k], V[m, k])
    return Y

@kernel
def scale(X: Tensor("M,K"), B: Tensor("M,K")) -> Tensor("M,K"):
    Y = Tensor(M=X.shape[0], K=X.shape[1])
    for m in Dim("M"):
        for k in Dim("K"):
            Y[m, k] = X[m, k] * B[m, k]
    return Y

@kernel
def wsum(X: Tensor("M,K,W")) -> Tensor("M,K"):
    Y = Tensor(M=X.shape[0], K=X.shape[1])
    for m in Dim("M"):
        for k in Dim("K"):
            for w in Dim("W"):
                Y[m, k] += X[m, k, w]
    return Y

DIMS = {"M": 8, "K": 16}

def model(x: Tensor("M,K", role="input"), v: Tensor("M,K", role="input"),
          b: Tensor("K", role="weight"), s: Tensor("M,K", role="input", sparsity=0.5)):
    r = rowmax(x)
    p = pick(x, v)
    q = scale(x, broadcast(b, "M,K", M=8))
    t = scale(x, s)
    u = wsum(unfold(x, "K", 4, 2, window="W"))
    return r, p, q, t, u
)";
  const Graph g = trace_text(text);
  auto node = [&](const std::string& name) -> const Node& {
    for (const Node& n : g.nodes)
      if (n.name == name) return n;
    throw std::runtime_error("no node " + name);
  };
  // Y[m] = X[m,k] for every k: the last write wins, so all but one point per row may be
  // skipped: no bound.
  EXPECT_FALSE(einsum_bound_problem(g, node("rowmax#0"), 0, BoundScope::kGraph));
  // select(): a branch may not be read, so the inputs are dropped; the output stays.
  const auto pick = einsum_bound_problem(g, node("pick#0"), 0, BoundScope::kGraph);
  ASSERT_TRUE(pick);
  ASSERT_EQ(pick->tensors.size(), 1u);
  EXPECT_TRUE(pick->tensors[0].is_output);
  // A broadcast view b[K] -> [M,K]: its M dim is dropped, its K dim kept ({K} = bit 1).
  const auto q = einsum_bound_problem(g, node("scale#0"), 0, BoundScope::kGraph);
  ASSERT_TRUE(q);
  ASSERT_EQ(q->tensors.size(), 3u);
  EXPECT_EQ(q->tensors[2].ranks, 0b10u);
  // A sparse operand: points with a zero may be skipped: no bound.
  EXPECT_FALSE(einsum_bound_problem(g, node("scale#1"), 0, BoundScope::kGraph));
  // unfold: overlapping windows share elements, so the view is dropped; the output stays.
  const auto u = einsum_bound_problem(g, node("wsum#0"), 0, BoundScope::kNode);
  ASSERT_TRUE(u);
  ASSERT_EQ(u->tensors.size(), 1u);
  EXPECT_TRUE(u->tensors[0].is_output);
}

// --- bound, fused and schedule on every example ------------------------------------------------

TEST(IoBound, BoundBetweenFusedAndTheScheduleOnEveryExample) {
  int programs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kRoot + "/examples/ir")) {
    if (entry.path().extension() != ".py") continue;
    const Graph g = graph_from_file(entry.path().string(), {});
    ++programs;
    IoBounds bounds(g);
    CacheSchedules schedules(g);
    const int64_t fused = fused_bytes(g);
    for (double c : {1024.0, 65536.0, 4194304.0, 52428800.0, 1e12}) {
      const int64_t b = bounds.graph_bytes(c);
      EXPECT_GE(b, fused) << entry.path() << " at " << c;
      if (const auto s = schedules.graph_bytes(c)) {
        EXPECT_GE(*s, b) << entry.path() << " at " << c;
      }
      for (const Node& n : g.nodes) {
        const int64_t nb = bounds.node_bytes(n.id, c);
        EXPECT_GE(nb, n.bytes()) << n.name;
        if (const auto s = schedules.node_bytes(n.id, c)) {
          EXPECT_GE(*s, nb) << entry.path() << " " << n.name << " at " << c;
        }
      }
    }
  }
  EXPECT_GE(programs, 18);
}

// --- tile candidates ------------------------------------------------------------------------

TEST(IoBound, TileCandidatesOfHugeRanksAreFewAndFast) {
  // Before (5dd0d0b) 2^63 - 1 looped forever (p *= 2 overflowed) and 2^62 + 1 took
  // O(sqrt N) = 2^31 divisions. Now: divisors up to 64 only, 62 powers of two below N and as
  // many ceil(N / 2^k): at most 2 x 64 + 2 x 63 + 1 values.
  for (int64_t n : {std::numeric_limits<int64_t>::max(), (int64_t{1} << 62) + 1}) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int64_t> c = tile_candidates(n);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(s, 0.5);
    EXPECT_LE(c.size(), 255u);
    EXPECT_EQ(c.front(), 1);
    EXPECT_EQ(c.back(), n);
    EXPECT_TRUE(std::is_sorted(c.begin(), c.end()));
    // ceil(n / 2) is there: 2^62 for 2^63 - 1, 2^61 + 1 for 2^62 + 1.
    EXPECT_TRUE(std::binary_search(c.begin(), c.end(), n / 2 + 1));
  }
  // 2^62 + 1 = 5 x 5581 x 8681 x 49477 x 384773: its divisor 5 (<= 64) and
  // (2^62 + 1) / 5 = 922,337,203,685,477,581.
  const auto c = tile_candidates((int64_t{1} << 62) + 1);
  EXPECT_TRUE(std::binary_search(c.begin(), c.end(), 5));
  EXPECT_TRUE(std::binary_search(c.begin(), c.end(), int64_t{922337203685477581}));
  EXPECT_EQ(tile_candidates(1), (std::vector<int64_t>{1}));
}

}  // namespace
}  // namespace solar
