// Cache-aware mode: the tiling search of one einsum against hand-derived minima and against a
// brute-force enumerator, the memo, residency of intermediates (keep or spill), and the
// absence of a cache level. Every expected number is derived by hand in the comment beside it.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "solar/arch/spec.h"
#include "solar/graph/graph.h"
#include "solar/pipeline/pipeline.h"
#include "solar/sol/analysis.h"
#include "solar/sol/cache_aware.h"
#include "solar/sol/io_bound.h"
#include "solar/trace/tracer.h"
#include "test_util.h"

namespace solar {
namespace {

const std::string kArchDir = std::string(SOLAR_SOURCE_DIR) + "/configs/arch";

// A tensor of a tiling problem indexed by plain ranks (one rank per dim, coefficient 1).
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

// Z[M,N] += A[M,K] * B[K,N], fp32; ranks M=0, K=1, N=2.
TilingProblem matmul(int64_t m, int64_t k, int64_t n) {
  TilingProblem p;
  p.ranks = {"M", "K", "N"};
  p.sizes = {m, k, n};
  p.tensors = {plain({0, 1}, p.sizes), plain({1, 2}, p.sizes), plain({0, 2}, p.sizes, true)};
  return p;
}

// Y[P] += X[P+R] * W[R], fp32, X of extent P+R-1 (no padding); ranks P=0, R=1.
TilingProblem conv1d(int64_t p_size, int64_t r_size) {
  TilingProblem p;
  p.ranks = {"P", "R"};
  p.sizes = {p_size, r_size};
  TileTensor x;
  x.dims = {{TileTerm{0, 1}, TileTerm{1, 1}}};
  x.extents = {p_size + r_size - 1};
  p.tensors = {x, plain({1}, p.sizes), plain({0}, p.sizes, true)};
  return p;
}

TEST(TileCandidates, DivisorsPowersOfTwoAndTheSize) {
  // 12: divisors 1 2 3 4 6 12, powers of two below 12: 1 2 4 8 -> {1,2,3,4,6,8,12}.
  EXPECT_EQ(tile_candidates(12), (std::vector<int64_t>{1, 2, 3, 4, 6, 8, 12}));
  // 7 (prime): divisors 1 7, powers 1 2 4 -> {1,2,4,7}.
  EXPECT_EQ(tile_candidates(7), (std::vector<int64_t>{1, 2, 4, 7}));
}

TEST(Tiling, Matmul4x4x4HandDerived) {
  const TilingProblem p = matmul(4, 4, 4);
  const Frontier f = search_tilings(p);
  // Compulsory: A, B, Z once = 3 * 16 elements * 4 B = 192 B.
  EXPECT_EQ(compulsory_bytes(p), 192);
  // Buffer 96 B = 24 elements: tiles (M,K,N) = (1,4,4): A tile 4 + B tile 16 + Z tile 4 = 24;
  // one DRAM loop over M (4 trips) which indexes A and Z, not B: B (whole) is read once, A
  // and Z once per row: 16 + 16 + 16 elements = 192 B, the compulsory traffic.
  EXPECT_EQ(min_dram_bytes(f, 96), std::optional<int64_t>(192));
  // Buffer 95 B (23 elements): the best is (1,4,2) with 4 + 8 + 2 = 14 elements and loops N
  // (2 trips, outer) then M (4 trips, inner): A is indexed by M (inner) with N above it:
  // 2 visits x 16 = 32; B is indexed by N only, M below it gives reuse: 16; Z: 16 (no K
  // loop, no partial sums) -> 64 elements = 256 B.
  EXPECT_EQ(min_dram_bytes(f, 95), std::optional<int64_t>(256));
  // Buffer 32 B (8 elements): (2,1,2) with 2 + 2 + 4 = 8 elements, loops M, N (2 trips each)
  // then K (4 trips) innermost: Z is not indexed by K, so it stays while K runs: 16 with no
  // read-back; A and B are re-fetched once per trip of N resp. M: 2 x 16 each -> 80
  // elements = 320 B.
  EXPECT_EQ(min_dram_bytes(f, 32), std::optional<int64_t>(320));
  // Nothing below the compulsory traffic, and 11 B (< 3 elements) holds no tiling.
  for (const TilingPoint& point : f) EXPECT_GE(point.dram_bytes, 192);
  EXPECT_EQ(min_dram_bytes(f, 11), std::nullopt);
  // The smallest point: all tiles 1 -> 3 elements = 12 B.
  EXPECT_EQ(f.front().buffer_bytes, 12);
}

TEST(Tiling, LargeTensorsAreExactBelowTheSearchLimit) {
  // Y[N] = X[N], fp32, N = 2^57: each tensor is 2^57 x 4 = 2^59 B; the compulsory traffic
  // and every point of the frontier (no reuse: any tile moves both once) are 2^60 B. The
  // search used to form 2^57 x 32 bits = 2^62 > 2^61 - 1, saturate at 2^61 - 1 and divide by
  // 8: 2^58 B per tensor, 2^59 B in all.
  const int64_t n = int64_t{1} << 57;
  TilingProblem p;
  p.ranks = {"N"};
  p.sizes = {n};
  p.tensors = {plain({0}, p.sizes), plain({0}, p.sizes, true)};
  p.tensors[1].accumulates = false;
  EXPECT_EQ(compulsory_bytes(p), int64_t{1} << 60);
  const Frontier f = search_tilings(p);
  ASSERT_FALSE(f.empty());
  for (const TilingPoint& point : f) EXPECT_EQ(point.dram_bytes, int64_t{1} << 60);
}

TEST(Tiling, ConvHaloIsRefetched) {
  // Y[P] += X[P+R] * W[R], P=8, R=3, X has P+R-1 = 10 elements; fp32.
  const TilingProblem p = conv1d(8, 3);
  const Frontier f = search_tilings(p);
  // Compulsory: X 10 + W 3 + Y 8 = 21 elements = 84 B; the whole problem fits in 84 B.
  EXPECT_EQ(compulsory_bytes(p), 84);
  EXPECT_EQ(min_dram_bytes(f, 84), std::optional<int64_t>(84));
  // 83 B (20 elements): tiles (P,R) = (4,3): X tile 4+3-1 = 6, W 3, Y 4 = 13 elements; two
  // tiles along P each fetch 6 elements of X (the 2-element halo twice): 12 + 3 + 8 = 23
  // elements = 92 B.
  EXPECT_EQ(min_dram_bytes(f, 83), std::optional<int64_t>(92));
  // 36 B (9 elements): (2,3): X tile 4, W 3, Y 2 = 9; 4 tiles x 4 = 16 + 3 + 8 = 27 el = 108 B.
  EXPECT_EQ(min_dram_bytes(f, 36), std::optional<int64_t>(108));
}

// The dynamic program over loop orders and the thinned search give exactly the brute-force
// frontier (every tiling x every permutation of its DRAM loops) on small problems.
void expect_same_frontier(const TilingProblem& p, uint32_t excluded = 0) {
  const Frontier fast = search_tilings(p, excluded);
  const Frontier slow = brute_force_tilings(p, excluded);
  ASSERT_EQ(fast.size(), slow.size());
  for (size_t i = 0; i < fast.size(); ++i) {
    EXPECT_EQ(fast[i].buffer_bytes, slow[i].buffer_bytes) << i;
    EXPECT_EQ(fast[i].dram_bytes, slow[i].dram_bytes) << i;
  }
  for (const TilingPoint& point : fast) EXPECT_GE(point.dram_bytes, compulsory_bytes(p, excluded));
}

TEST(Tiling, SearchEqualsBruteForce) {
  expect_same_frontier(matmul(4, 6, 8));  // 6: tile 4 leaves a last tile of 2
  expect_same_frontier(matmul(5, 3, 7));
  expect_same_frontier(matmul(4, 6, 8), 0b100);  // Z on chip elsewhere
  expect_same_frontier(matmul(4, 6, 8), 0b001);  // A on chip elsewhere
  expect_same_frontier(conv1d(9, 3));
  // bmm: Z[B,M,N] += A[B,M,K] * C[B,K,N]; ranks B=0, M=1, K=2, N=3.
  TilingProblem bmm;
  bmm.ranks = {"B", "M", "K", "N"};
  bmm.sizes = {3, 4, 2, 5};
  bmm.tensors = {plain({0, 1, 2}, bmm.sizes), plain({0, 2, 3}, bmm.sizes),
                 plain({0, 1, 3}, bmm.sizes, true)};
  expect_same_frontier(bmm);
  // 2-D conv with stride 2: Y[P,Q] += X[2P+R, 2Q+S] * W[R,S], bf16 input, output initialised.
  TilingProblem conv;
  conv.ranks = {"P", "Q", "R", "S"};
  conv.sizes = {3, 4, 3, 2};
  TileTensor x;
  x.dims = {{TileTerm{0, 2}, TileTerm{2, 1}}, {TileTerm{1, 2}, TileTerm{3, 1}}};
  x.extents = {7, 8};
  x.bits = 16;
  TileTensor y = plain({0, 1}, conv.sizes, true);
  y.initialized = true;
  conv.tensors = {x, plain({2, 3}, conv.sizes), y};
  expect_same_frontier(conv);
  // Fusion-friendly constraint: M tiled by 2 with its loop outermost, the rest free.
  const TilingProblem mm = matmul(4, 6, 8);
  const OuterTiling outer{{0}, {2}};
  const Frontier fast = search_tilings(mm, 0b100, 40000, outer);
  const Frontier slow = brute_force_tilings(mm, 0b100, outer);
  ASSERT_EQ(fast.size(), slow.size());
  for (size_t i = 0; i < fast.size(); ++i) {
    EXPECT_EQ(fast[i].buffer_bytes, slow[i].buffer_bytes);
    EXPECT_EQ(fast[i].dram_bytes, slow[i].dram_bytes);
    EXPECT_EQ(fast[i].tiles[0], 2);
    EXPECT_EQ(fast[i].order.front(), 0);  // M outermost
  }
  // Thinned search: with at most 4 tilings the candidate sets shrink, so the frontier can
  // only be worse than the full one, never better.
  const Frontier full = search_tilings(matmul(8, 8, 8));
  const Frontier thin = search_tilings(matmul(8, 8, 8), 0, 4);
  for (const TilingPoint& point : thin) {
    EXPECT_GE(point.dram_bytes, *min_dram_bytes(full, static_cast<double>(point.buffer_bytes)));
  }
}

TEST(Tiling, OutputTileStaysWhileTheReductionRuns) {
  // Z[M,N] += A[M,K] * B[K,N] with M = N = 1 and K = 4, tile K = 1: buffer A 1 + B 1 + Z 1 =
  // 3 elements = 12 B. The K loop does not index Z, so Z's one tile stays on chip while K
  // runs: written once; A and B 4 each -> 4 + 4 + 1 = 9 elements = 36 B.
  const Frontier f = search_tilings(matmul(1, 4, 1));
  EXPECT_EQ(min_dram_bytes(f, 12), std::optional<int64_t>(36));
  // Already initialised (a bias written by an earlier nest): its value is read first:
  // 4 + 4 + 1 + 1 = 10 elements = 40 B.
  TilingProblem p = matmul(1, 4, 1);
  p.tensors[2].initialized = true;
  EXPECT_EQ(min_dram_bytes(search_tilings(p), 12), std::optional<int64_t>(40));
}

TEST(Tiling, ReadBacksMakeTheReductionOutsideOrderLose) {
  // Z[M] += A[M,K] * B[K], M = 8, K = 4, tiles 1, buffer 3 elements = 12 B; loops M (8
  // trips) and K (4 trips). Order K outside M: A 32; B indexed by K (outer), M below gives
  // reuse: 4; Z indexed by M (inner) under K: 4 visits of each of its 8 elements: 32
  // writes + 24 read-backs = 56 -> 92 elements. Order M outside K: A 32, B 8 x 4 = 32, Z 8
  // -> 72 elements = 288 B, the minimum.
  TilingProblem p;
  p.ranks = {"M", "K"};
  p.sizes = {8, 4};
  p.tensors = {plain({0, 1}, p.sizes), plain({1}, p.sizes), plain({0}, p.sizes, true)};
  const Frontier f = brute_force_tilings(p);
  EXPECT_EQ(min_dram_bytes(f, 12), std::optional<int64_t>(288));
  // With B on chip elsewhere (bit 1) the K-outside order loses its advantage too: M outside
  // K gives A 32 + Z 8 = 40 elements = 160 B at buffer A 1 + Z 1 = 8 B.
  EXPECT_EQ(min_dram_bytes(search_tilings(p, 0b010), 8), std::optional<int64_t>(160));
  // With A on chip elsewhere (bit 0), K outside M: B 4 + Z 56 = 60; M outside K: B 32 +
  // Z 8 = 40 elements = 160 B.
  EXPECT_EQ(min_dram_bytes(search_tilings(p, 0b001), 8), std::optional<int64_t>(160));
}

// --- graphs ----------------------------------------------------------------------------------

struct GraphBuilder {
  Graph g;

  TensorId tensor(const std::string& name, DimNames dims, Shape shape, Role role) {
    TensorInfo t;
    t.id = static_cast<TensorId>(g.tensors.size());
    t.name = name;
    t.dims = SharedDims(std::move(dims));
    t.shape = std::move(shape);
    t.role = role;
    t.storage = t.id;
    g.tensors.push_back(t);
    if (role == Role::kInput || role == Role::kWeight) g.inputs.push_back(t.id);
    return t.id;
  }

  // A one-nest kernel node `out[dims] += a[..] * b[..]` over `ranks` (plain projections).
  void contraction(const std::string& name, const std::map<std::string, int64_t>& ranks, TensorId a,
                   TensorId b, TensorId out) {
    Node n;
    n.id = static_cast<NodeId>(g.nodes.size());
    n.name = name;
    n.inputs = {a, b};
    n.outputs = {out};
    n.slot_tensors = {a, b, out};
    Einsum e;
    int64_t points = 1;
    for (const auto& [rank, size] : ranks) {
      e.ranks.push_back(rank);
      e.rank_sizes.push_back(size);
      points *= size;
    }
    auto operand = [&](TensorId t, int slot) {
      Operand op;
      op.slot = slot;
      op.name = g.tensors[static_cast<size_t>(t)].name;
      for (const std::string& d : g.tensors[static_cast<size_t>(t)].dims) {
        op.projection.push_back({ProjectionTerm{d, 1}});
        op.offsets.push_back(0);
      }
      return op;
    };
    e.inputs = {operand(a, 0), operand(b, 1)};
    e.output = operand(out, 2);
    e.output.is_output = true;
    e.reduce = ReduceOp::kAdd;
    e.points = e.macs = points;
    n.macs = points;
    n.einsums = std::make_shared<const std::vector<Einsum>>(std::vector<Einsum>{e});
    for (TensorId t : n.inputs) {
      n.input_bytes.push_back(g.tensors[static_cast<size_t>(t)].bytes());
      n.bytes_read += n.input_bytes.back();
      g.tensors[static_cast<size_t>(t)].consumers.push_back(n.id);
    }
    n.bytes_written = g.tensors[static_cast<size_t>(out)].bytes();
    g.tensors[static_cast<size_t>(out)].producer = n.id;
    g.nodes.push_back(n);
  }

  void output(TensorId t) {
    g.tensors[static_cast<size_t>(t)].is_output = true;
    g.outputs.push_back(t);
  }
};

// Y = X W1, Z = Y W2, all 4x4 fp32 (64 B each).
Graph two_matmuls() {
  GraphBuilder b;
  const TensorId x = b.tensor("x", {"M", "K"}, {4, 4}, Role::kInput);
  const TensorId w1 = b.tensor("w1", {"K", "N"}, {4, 4}, Role::kWeight);
  const TensorId w2 = b.tensor("w2", {"N", "P"}, {4, 4}, Role::kWeight);
  const TensorId y = b.tensor("y", {"M", "N"}, {4, 4}, Role::kActivation);
  const TensorId z = b.tensor("z", {"M", "P"}, {4, 4}, Role::kActivation);
  b.contraction("mm#0", {{"M", 4}, {"K", 4}, {"N", 4}}, x, w1, y);
  b.contraction("mm#1", {{"M", 4}, {"N", 4}, {"P", 4}}, y, w2, z);
  b.output(z);
  return b.g;
}

TEST(CacheAwareGraph, IntermediateStaysOnChipOnlyIfItFits) {
  const Graph g = two_matmuls();
  // Fused: x + w1 + w2 + z = 4 x 64 = 256 B; unfused: 2 x (3 x 64) = 384 B.
  ASSERT_EQ(fused_bytes(g), 256);
  // 1 MiB: y (64 B) stays on chip, every nest at its compulsory traffic: the fused 256 B.
  EXPECT_EQ(*schedule_graph_bytes(g, 1 << 20), 256);
  // 96 B: y whole (64 B) leaves 32 B (8 elements) for each nest's other two tensors: mm#0
  // with tiles (M,K,N) = (4,1,4): x tile 4 + w1 tile 4, one K loop: x and w1 once = 128 B;
  // mm#1 likewise 128 B; 256 B < 2 x 192 B (both nests at 96 B spilling y): kept.
  EXPECT_EQ(*schedule_graph_bytes(g, 96), 256);
  // 64 B: y whole would fill the buffer. Spilled, each nest at 64 B (16 elements) moves 64
  // elements = 256 B (Tiling.Matmul4x4x4HandDerived, 14 elements): 512 B. Tiled fusion does
  // better: M tiled by 2, outermost in both nests, a 2 x 4 tile of y (32 B) on chip, 8
  // elements left per nest. mm#0: tiles (M,K,N) = (2,1,4), x tile 2 + w1 tile 4, loops M
  // then K: x once (16), w1 once per M tile (2 x 16): 48 elements = 192 B. mm#1: tiles
  // (M,N,P) = (2,2,2), w2 tile 4 + z tile 4, loops M, P, then N: z once (16, N below it),
  // w2 once per M tile (32): 192 B. 384 B in all.
  EXPECT_EQ(*schedule_graph_bytes(g, 64), 384);
  // 16 B (4 elements): no tile of y fits beside anything (its smallest, 1 x 4, is 16 B), so
  // it spills. Each nest at 4 elements: tiles 1, loops M, N, then K: Z once (16), A and B
  // 4 times (64 each): 144 elements = 576 B; 1,152 B in all.
  EXPECT_EQ(*schedule_graph_bytes(g, 16), 1152);
  // Node by node at 1 MiB: each node alone, its compulsory 192 B.
  EXPECT_EQ(*schedule_node_bytes(g, 0, 1 << 20), 192);
  EXPECT_EQ(*schedule_node_bytes(g, 1, 1 << 20), 192);
  // Never below the fused traffic at any capacity of the curve.
  for (const CurvePoint& point : cache_aware_curve(g, curve_capacities(g, 96))) {
    EXPECT_GE(point.bound_bytes, fused_bytes(g)) << point.capacity_bytes;
  }
}

TEST(CacheAwareGraph, TiledFusionWhenTheIntermediateDoesNotFitWhole) {
  // y = x W1, z = y W2 with M = 64, K = N = P = 4, fp32: x, y, z 64 x 4 x 4 B = 1,024 B;
  // W1, W2 16 x 4 = 64 B. Fused: x + W1 + W2 + z = 2,176 B.
  GraphBuilder b;
  const TensorId x = b.tensor("x", {"M", "K"}, {64, 4}, Role::kInput);
  const TensorId w1 = b.tensor("w1", {"K", "N"}, {4, 4}, Role::kWeight);
  const TensorId w2 = b.tensor("w2", {"N", "P"}, {4, 4}, Role::kWeight);
  const TensorId y = b.tensor("y", {"M", "N"}, {64, 4}, Role::kActivation);
  const TensorId z = b.tensor("z", {"M", "P"}, {64, 4}, Role::kActivation);
  b.contraction("mm#0", {{"M", 64}, {"K", 4}, {"N", 4}}, x, w1, y);
  b.contraction("mm#1", {{"M", 64}, {"N", 4}, {"P", 4}}, y, w2, z);
  b.output(z);
  ASSERT_EQ(fused_bytes(b.g), 2176);
  // 256 B: y (1,024 B) cannot stay whole. Spilled, each nest at 256 B (64 elements) tiles
  // M by 4: x 16 + W 16 + y 16 elements, one M loop: each tensor once: 1,024 + 64 + 1,024 =
  // 2,112 B per nest, 4,224 B in all. Tiled fusion with M (y's first dim) tiled by 1 and
  // outermost in both nests: a y tile of 1 x 4 = 16 B stays on chip; mm#0 keeps W1 whole (64
  // B) and a 1 x 4 tile of x (16 B) in the 240 B left: x once + W1 once = 1,088 B; mm#1
  // likewise W2 + z = 1,088 B: 2,176 B, the fused traffic.
  EXPECT_EQ(*schedule_graph_bytes(b.g, 256), 2176);
}

TEST(CacheAwareGraph, TracedConvWithPaddingAndABiasNest) {
  // examples/ir/conv2d.py, conv2d#0: X [2,16,32,32] read as X[n, c, p+r-1, q+s-1] (pad 1,
  // so the window spans P+R-1 = 34 rows, capped at H = 32), W1 [32,16,3,3], b1 [32], and Y
  // [2,32,32,32] written by the bias nest then accumulated by the MAC nest. Alone with 1 GiB:
  // Y stays on chip between its two nests and is written once: 4 x (32,768 + 4,608 + 32 +
  // 65,536) = 411,776 B, the node's unfused bytes.
  const Graph g =
      graph_from_file(std::string(SOLAR_SOURCE_DIR) + "/examples/ir/conv2d.py", TraceOptions{});
  ASSERT_EQ(g.nodes[0].name, "conv2d#0");
  EXPECT_EQ(g.nodes[0].bytes(), 411776);
  EXPECT_EQ(*schedule_node_bytes(g, 0, 1 << 30), 411776);
  // The MAC nest's problem: ranks N O P Q C R S (all > 1), X's rows capped at 32, its output
  // accumulates into the bias (initialised).
  const TilingProblem p = tiling_problem(g, g.nodes[0], (*g.nodes[0].einsums)[1], true);
  EXPECT_EQ(p.ranks, (std::vector<std::string>{"N", "O", "P", "Q", "C", "R", "S"}));
  EXPECT_EQ(p.tensors[0].extents, (std::vector<int64_t>{2, 16, 32, 32}));
  EXPECT_TRUE(p.tensors[2].accumulates && p.tensors[2].initialized);
  // Compulsory: X 131,072 + W1 18,432 + Y read (initialised) 262,144 + written 262,144.
  EXPECT_EQ(compulsory_bytes(p), 673792);
}

TEST(CacheAwareGraph, BroadcastDimsAreNotRefetched) {
  // y[M,N] = x[M,N] + bv[M,N] where bv is a broadcast view of b[N] (M = N = 4, fp32). The
  // view's M dim reads the same element of b: the nest moves x 64 + b 16 + y 64 = 144 B
  // alone with 1 MiB (not 64 B for the 16-element view).
  GraphBuilder b;
  const TensorId x = b.tensor("x", {"M", "N"}, {4, 4}, Role::kInput);
  const TensorId bias = b.tensor("b", {"N"}, {4}, Role::kWeight);
  const TensorId view = b.tensor("bv", {"M", "N"}, {4, 4}, Role::kActivation);
  const TensorId y = b.tensor("y", {"M", "N"}, {4, 4}, Role::kActivation);
  Node broadcast;
  broadcast.id = 0;
  broadcast.name = "broadcast#0";
  broadcast.op = "broadcast";
  broadcast.kind = NodeKind::kDataMovement;
  broadcast.inputs = {bias};
  broadcast.input_bytes = {0};
  broadcast.outputs = {view};
  broadcast.attrs = {-1, 0};  // output dim 0 is new, dim 1 reads b's dim 0
  b.g.nodes.push_back(broadcast);
  b.g.tensors[static_cast<size_t>(view)].producer = 0;
  b.g.tensors[static_cast<size_t>(view)].storage = bias;
  b.contraction("add#0", {{"M", 4}, {"N", 4}}, x, view, y);
  b.output(y);
  EXPECT_EQ(*schedule_node_bytes(b.g, 1, 1 << 20), 144);
  EXPECT_EQ(*schedule_graph_bytes(b.g, 1 << 20), 144);
  // The same view reshaped to [16] hides the broadcast from the projection: the 16-element
  // operand is larger than its 4-element storage, so b is pinned: read once (16 B) and held:
  // x2 64 + b 16 + y2 64 = 144 B.
  const TensorId flat = b.tensor("bv_flat", {"K"}, {16}, Role::kActivation);
  const TensorId x2 = b.tensor("x2", {"K"}, {16}, Role::kInput);
  const TensorId y2 = b.tensor("y2", {"K"}, {16}, Role::kActivation);
  b.g.tensors[static_cast<size_t>(flat)].storage = bias;
  b.contraction("add#1", {{"K", 16}}, x2, flat, y2);
  b.output(y2);
  EXPECT_EQ(*schedule_node_bytes(b.g, 2, 1 << 20), 144);
}

Graph trace_text(const std::string& text) {
  return trace_program(load_program_source(text, "test.py"), TraceOptions{});
}

TEST(CacheAwareSchedule, SaturatedTrafficIsRefusedNotPrinted) {
  // relu over N = 2^59 fp32: x and y are 2^61 B each, 2^62 B together, beyond the search's
  // 2^61 - 1. The graph's schedule and the node's alone are overflow errors at the kernel
  // call (test.py:11:12); they used to come back saturated: 0.12x the 2^62-B bound.
  const char* text = R"(from solar.ir import kernel, Tensor, Dim
@kernel
def relu(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for n in Dim("N"):
        Y[n] = max(X[n], 0.0)
    return Y

DIMS = {"N": 576460752303423488}
def model(x: Tensor("N", role="input")):
    return relu(x)
)";
  const Graph g = trace_text(text);
  ASSERT_EQ(fused_bytes(g), int64_t{1} << 62);
  testing::expect_user_error([&] { schedule_graph_bytes(g, 1 << 20); }, ErrorKind::kOverflow,
                             "test.py:11:12: error[overflow]: the graph (node 'relu#0' moves "
                             "the most): the DRAM bytes of the best schedule found reach 2^61");
  testing::expect_user_error([&] { schedule_node_bytes(g, 0, 1 << 20); }, ErrorKind::kOverflow,
                             "node 'relu#0' alone: the DRAM bytes of the best schedule found");
}

TEST(CacheAwareSchedule, ChainsFuseTileByTile) {
  // x[N] -> a -> b -> c, three elementwise kernels over N = 64 fp32 (256 B each); fused =
  // x + c = 512 B. At 64 B no intermediate can stay whole. The three nests run as one fused
  // run tiled along N (tiles tried: 1, 4, 16 of 1..32): with tile t the tiles of a and b stay
  // on chip (8t B) beside x's tile in the first nest and c's in the last (4t B each, one nest
  // at a time): 12t <= 64 for t = 4 (t = 16 does not fit). x is read once and c written once:
  // 512 B. Before (5dd0d0b) a nest took part in one tiled pair only, so b spilled: 512 + 2 x
  // 256 = 1,024 B.
  const char* text = R"(from solar.ir import kernel, Tensor, Dim

@kernel
def inc(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for n in Dim("N"):
        Y[n] = X[n] + 1.0
    return Y

DIMS = {"N": 64}

def model(x: Tensor("N", role="input")):
    return inc(inc(inc(x)))
)";
  const Graph g = trace_text(text);
  ASSERT_EQ(fused_bytes(g), 512);
  EXPECT_EQ(schedule_graph_bytes(g, 64), std::optional<int64_t>(512));
  EXPECT_EQ(io_bound_graph_bytes(g, 64), 512);
  // 8 B: the run of three needs 12 B even at t = 1, but the first two fit: a's one-element
  // tile (4 B) beside x's (4 B) in the first nest and b's in the second: x read and b written
  // once (512 B); the last nest alone, one element at a time (8 B), reads b and writes c
  // (512 B): 1,024 B.
  EXPECT_EQ(schedule_graph_bytes(g, 8), std::optional<int64_t>(1024));
  // 4 B: no nest has a tiling that fits (one element of input and output is 8 B): none.
  EXPECT_EQ(schedule_graph_bytes(g, 4), std::nullopt);
}

TEST(CacheAwareSchedule, AReductionAlongAKeptRankReadsItsRowsOnce) {
  // RMS-norm-like: R[s] += X[s,d]^2 then Y[s,d] = X[s,d] / R[s], S = 16, D = 8, fp32: X and
  // Y 512 B, R 64 B (kernel-local). The node alone moves X + Y = 1,024 B unfused. At 128 B
  // X cannot stay whole; tiled along S by t, the X tile (32t B), the R tile (4t B) and a Y
  // tile (>= 4t B) fit for t = 2 (80 B): X is read once, Y written once: 1,024 B. Without the
  // fused run X is read by both nests: 1,536 B. At 5dd0d0b: 1,152 B (X went through a tiled
  // pair, which then kept R from staying on chip: R written and read back, 2 x 64 B).
  const char* text = R"(from solar.ir import kernel, Tensor, Dim

@kernel
def norm(X: Tensor("S,D")) -> Tensor("S,D"):
    R = Tensor(S=X.shape[0])
    Y = Tensor(S=X.shape[0], D=X.shape[1])
    for s in Dim("S"):
        for d in Dim("D"):
            R[s] += X[s, d] * X[s, d]
    for s in Dim("S"):
        for d in Dim("D"):
            Y[s, d] = X[s, d] / R[s]
    return Y

DIMS = {"S": 16, "D": 8}

def model(x: Tensor("S,D", role="input")):
    return norm(x)
)";
  const Graph g = trace_text(text);
  ASSERT_EQ(g.nodes[0].bytes(), 1024);
  EXPECT_EQ(schedule_node_bytes(g, 0, 128), std::optional<int64_t>(1024));
  EXPECT_EQ(schedule_graph_bytes(g, 128), std::optional<int64_t>(1024));
}

TEST(CacheAwareGraph, CurveCapacities) {
  // Tensors 5 x 64 = 320 B: powers of two from 1 KiB while below 320 B: just 1024, plus the
  // platform's 96 B -> {96, 1024}.
  EXPECT_EQ(curve_capacities(two_matmuls(), 96), (std::vector<double>{96, 1024}));
}

TEST(CacheAwareGraph, IdenticalEinsumsAreSearchedOnce) {
  // Two independent 4x4x4 matmuls with the same shapes and dtypes: one search, one memo hit.
  GraphBuilder b;
  const TensorId x = b.tensor("x", {"M", "K"}, {4, 4}, Role::kInput);
  const TensorId w = b.tensor("w", {"K", "N"}, {4, 4}, Role::kWeight);
  const TensorId u = b.tensor("u", {"M", "K"}, {4, 4}, Role::kInput);
  const TensorId v = b.tensor("v", {"K", "N"}, {4, 4}, Role::kWeight);
  const TensorId y = b.tensor("y", {"M", "N"}, {4, 4}, Role::kActivation);
  const TensorId z = b.tensor("z", {"M", "N"}, {4, 4}, Role::kActivation);
  b.contraction("mm#0", {{"M", 4}, {"K", 4}, {"N", 4}}, x, w, y);
  b.contraction("mm#1", {{"M", 4}, {"K", 4}, {"N", 4}}, u, v, z);
  b.output(y);
  b.output(z);
  TilingMemo memo;
  // No tensor is shared, so nothing to keep: 2 x 192 B.
  EXPECT_EQ(*schedule_graph_bytes(b.g, 1 << 20, &memo), 384);
  EXPECT_EQ(memo.stats().misses, 1);
  EXPECT_EQ(memo.stats().hits, 1);
  // A second analysis given the memo searches nothing again: two more hits.
  EXPECT_EQ(*schedule_graph_bytes(b.g, 1 << 20, &memo), 384);
  EXPECT_EQ(memo.stats().misses, 1);
  EXPECT_EQ(memo.stats().hits, 3);
  // Without one, a schedule searches with a memo of its own: the caller's is untouched.
  EXPECT_EQ(*schedule_graph_bytes(b.g, 1 << 20), 384);
  EXPECT_EQ(memo.stats().hits, 3);
  memo.clear();
  EXPECT_EQ(memo.stats().misses, 0);
}

TEST(CacheAwareAnalysis, LevelAndBoundOnH100) {
  const Graph g = two_matmuls();
  const Analysis a = analyze(g, load_arch_spec(kArchDir + "/H100_PCIe.yaml"), {});
  // H100 PCIe: cache_level L2 of 50 x 2^20 = 52,428,800 B; everything fits: 256 B = fused.
  ASSERT_TRUE(a.cache.available);
  EXPECT_EQ(a.cache.level, "L2");
  EXPECT_DOUBLE_EQ(a.cache.capacity_bytes, 52428800.0);
  EXPECT_EQ(a.cache_aware.mode, "cache_aware");
  EXPECT_EQ(a.cache_aware.bytes, 256);
  // 256 B / 2.0e12 B/s = 1.28e-10 s; MACs 2 x 64 -> 256 FLOP / 378e12 (tf32) = 6.8e-13 s.
  EXPECT_DOUBLE_EQ(a.cache_aware.seconds, 256 / 2.0e12);
  EXPECT_EQ(a.cache_aware.bottleneck.kind, "memory");
  EXPECT_EQ(a.nodes[0].cache_aware_bytes, 192);  // node alone: x + w1 + y
  EXPECT_DOUBLE_EQ(a.nodes[0].cache_aware_seconds, 192 / 2.0e12);
}

TEST(CacheAwareAnalysis, NoOnChipLevelMeansNoBound) {
  // B200's spec with its on-chip levels dropped (every shipped spec lists some): no
  // cache-aware bound, and the reason says so.
  ArchSpec spec = load_arch_spec(kArchDir + "/B200.yaml");
  spec.on_chip.clear();
  spec.cache_level.clear();
  const Analysis a = analyze(two_matmuls(), spec, {});
  EXPECT_FALSE(a.cache.available);
  EXPECT_NE(a.cache.reason.find("has no on-chip memory level"), std::string::npos)
      << a.cache.reason;
  EXPECT_EQ(a.cache_aware.bytes, 0);
}

// analyze feeds the value dtypes, the fused bytes, the bounds and the schedules from one walk
// over the nodes (IoBounds and CacheSchedules built a node at a time, interleaved); each
// one-shot function walks the graph alone. Every number must agree: the walk is shared, the
// passes are not changed by it. Transformer block example: 2 x 64 tokens, 4 heads, fp32.
TEST(CacheAwareAnalysis, OneSharedWalkGivesWhatEachPassGivesAlone) {
  const Graph g = graph_from_file(
      std::string(SOLAR_SOURCE_DIR) + "/examples/ir/transformer_block.py", TraceOptions{});
  const ArchSpec arch = load_arch_spec(kArchDir + "/H100_PCIe.yaml");
  const Analysis a = analyze(g, arch, {});
  ASSERT_TRUE(a.cache.available);
  ASSERT_GT(g.nodes.size(), 5u);
  const double bound_c = a.cache.bound_capacity_bytes, schedule_c = a.cache.capacity_bytes;
  EXPECT_EQ(a.fused.bytes, fused_bytes(g));
  EXPECT_EQ(a.cache_aware.bytes, io_bound_graph_bytes(g, bound_c));
  const auto schedule = schedule_graph_bytes(g, schedule_c);
  ASSERT_TRUE(schedule.has_value());
  EXPECT_EQ(a.cache_schedule.bytes, *schedule);
  for (const Node& n : g.nodes) {
    const NodeSol& sol = a.nodes.at(static_cast<size_t>(n.id));
    EXPECT_EQ(sol.cache_aware_bytes, io_bound_node_bytes(g, n.id, bound_c)) << n.name;
    EXPECT_EQ(sol.cache_schedule_bytes, schedule_node_bytes(g, n.id, schedule_c)) << n.name;
  }
}

// Built a node at a time, the bounds and the schedules answer only once finished.
TEST(CacheAwareAnalysis, AQueryBeforeFinishIsAnInternalError) {
  const Graph g = two_matmuls();
  IoBounds bounds(g, IoBounds::Incremental{});
  CacheSchedules schedules(g, CacheSchedules::Incremental{});
  for (const Node& n : g.nodes) {
    bounds.add(n);
    schedules.add(n);
  }
  try {
    bounds.graph_bytes(1 << 20);
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("IoBounds queried before finish"), std::string::npos);
  }
  try {
    schedules.node_bytes(0, 1 << 20);
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("CacheSchedules queried before finish"),
              std::string::npos);
  }
  bounds.finish(256);
  schedules.finish(256);
  EXPECT_EQ(bounds.graph_bytes(1 << 20), 256);  // everything fits: the fused bytes (above)
  EXPECT_EQ(*schedules.graph_bytes(1 << 20), 256);
}

// The schedules index their steps by node id, so the nodes must come in order, each once.
TEST(CacheAwareAnalysis, NodesAddedOutOfOrderAreAnInternalError) {
  const Graph g = two_matmuls();
  ASSERT_EQ(g.nodes.size(), 2u);
  CacheSchedules schedules(g, CacheSchedules::Incremental{});
  try {
    schedules.add(g.nodes[1]);  // node 0 not yet added
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("node '" + g.nodes[1].name +
                                         "' added to the schedules out of order"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace solar
