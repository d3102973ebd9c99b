// The best schedule found for an einsum graph with a finite on-chip buffer: an achievable
// DRAM traffic, reported beside the cache-aware bound (sol/io_bound.h) and never called a
// bound (docs/sol-modes.md, "Cache-aware"). Three layers, each usable alone:
//
//   tiling:    one einsum on a two-level hierarchy (DRAM + one buffer of capacity C): every
//              tile size per rank and every order of the DRAM loops; the Pareto frontier of
//              (buffer bytes, DRAM bytes). Memoised by the problem's signature.
//   schedule:  a sequence of nests (a node, or the whole graph): tensors touched by two or
//              more nests kept on chip whole between their first and last touch if they fit,
//              and runs of consecutive nests fused tile by tile along a shared dim (greedy
//              along the topological order, linear in the number of nests).
//   curve:     the bound and the schedule versus capacity, for the graph and per node.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "solar/graph/graph.h"

namespace solar {

// --- tiling: one einsum ----------------------------------------------------------------------

// One term `coefficient * rank` of a tensor dim's affine index.
struct TileTerm {
  int rank = 0;  // index into TilingProblem::sizes
  int64_t coefficient = 1;
};

// One tensor of an einsum as the tiling search sees it.
struct TileTensor {
  std::string name;
  std::vector<std::vector<TileTerm>> dims;  // one affine index per tensor dim
  std::vector<int64_t> extents;             // per dim: the tensor's size (footprints are capped)
  std::vector<int64_t> offsets;             // per dim: the index's constant term (e.g. -pad)
  int bits = 32;                            // storage bits per element
  double density = 1.0;                     // 1 - sparsity: bytes scale by it
  bool is_output = false;
  bool accumulates = false;  // output of a reduction (+= *= max min): partial sums exist
  bool initialized = false;  // output already holds values the reduction starts from
};

// A single einsum: ranks (loop dims) with sizes > 1 and the tensors it reads and writes
// (inputs first, the output last). Ranks of size 1 are dropped when it is built.
struct TilingProblem {
  std::vector<std::string> ranks;
  std::vector<int64_t> sizes;
  std::vector<TileTensor> tensors;
};

// One two-level mapping: a tile size per rank and the order of the DRAM loops (ranks with
// more than one trip, outermost first), with its buffer occupancy and DRAM traffic.
struct TilingPoint {
  int64_t buffer_bytes = 0;  // one tile of every (non-excluded) tensor
  int64_t dram_bytes = 0;    // reads + writes of every (non-excluded) tensor
  std::vector<int64_t> tiles;
  std::vector<int> order;
  // Bytes of the tiles of tensors that no loop with more than one trip indexes: loaded once
  // and held for the whole nest (the rest of the buffer is re-filled as the loops run).
  int64_t persistent_bytes = 0;
};

// Sorted by buffer_bytes ascending with dram_bytes strictly descending: the minimum DRAM
// traffic attainable with each buffer size.
using Frontier = std::vector<TilingPoint>;

// A fusion-friendly constraint: these ranks have fixed tiles and their DRAM loops sit above
// all others, in this order (outermost first). Empty: no constraint.
struct OuterTiling {
  std::vector<int> ranks;
  std::vector<int64_t> tiles;
  bool empty() const { return ranks.empty(); }
};

// Tile sizes searched for a rank of `size`, ascending: the powers of two below it,
// ceil(size / 2^k), the size itself and its divisors (all of them up to size 2^16, those up to
// 64 and their cofactors above). At most 255 values for any size; no overflow.
std::vector<int64_t> tile_candidates(int64_t size);

// The problem of one einsum of `node` (operand dtypes, sparsities and extents from the graph;
// kernel-local tensors take the dtype of the nest that writes them). `initialized` marks an
// output that an earlier nest of the same node wrote.
TilingProblem tiling_problem(const Graph& graph, const Node& node, const Einsum& einsum,
                             bool initialized);

// A text that identifies the problem: equal problems have equal signatures.
std::string problem_signature(const TilingProblem& problem);

// Bit i of `excluded` set: tensor i stays on chip elsewhere (no buffer, no traffic here).
// The Pareto frontier over tilings x loop orders. Each rank's candidates are
// tile_candidates(size), thinned (largest set first, every other interior value dropped)
// while the product of the set sizes exceeds `max_tilings`. The best order of each tiling is
// found exactly by a dynamic program over the sets of inner loops.
// `outer` restricts the search to the mappings with that fusion-friendly prefix.
Frontier search_tilings(const TilingProblem& problem, uint32_t excluded = 0,
                        int64_t max_tilings = 40000, const OuterTiling& outer = {});
// The same frontier by enumerating every tiling and every permutation of its DRAM loops (for
// tests: exponential).
Frontier brute_force_tilings(const TilingProblem& problem, uint32_t excluded = 0,
                             const OuterTiling& outer = {});
struct MemoStats {
  int64_t hits = 0;
  int64_t misses = 0;  // = searches run = distinct (signature, excluded, outer) keys seen
};

// The tiling searches done so far, keyed by (signature, excluded, outer): search_tilings run
// once per key. Owned by the caller (no process-wide state): one analysis, or many that share
// it (the Python layer keeps one per process, a benchmark one per run); thread-safe. A
// frontier it returns lives as long as the memo (until clear()).
class TilingMemo {
 public:
  TilingMemo();
  ~TilingMemo();
  TilingMemo(const TilingMemo&) = delete;
  TilingMemo& operator=(const TilingMemo&) = delete;

  const Frontier& frontier(const TilingProblem& problem, uint32_t excluded = 0,
                           const OuterTiling& outer = {});
  // The same, with `signature` = problem_signature(problem) computed by the caller.
  const Frontier& frontier(const TilingProblem& problem, const std::string& signature,
                           uint32_t excluded, const OuterTiling& outer);
  MemoStats stats() const;
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Each non-excluded tensor once at its full accessed size: no mapping moves less.
int64_t compulsory_bytes(const TilingProblem& problem, uint32_t excluded = 0);
// The least dram_bytes of a point with buffer_bytes <= capacity; nullopt if none fits.
std::optional<int64_t> min_dram_bytes(const Frontier& frontier, double capacity_bytes);

// The least-traffic point with buffer_bytes <= capacity (nullptr if none fits).
const TilingPoint* best_point(const Frontier& frontier, double capacity_bytes);

// --- the best schedule found: residency and fusion over the graph ------------------------------
//
// An achievable DRAM traffic, not a bound (the bound is sol/io_bound.h): every nest at a
// tiling that fits, tensors shared by several nests kept on chip whole between their first
// and last touch, and runs of consecutive nests fused tile by tile (docs/sol-modes.md,
// "Cache-aware", "The best schedule found"). nullopt: at this capacity some nest has no
// tiling that fits (a few hundred bytes at most).

// Schedules of one graph at any number of capacities, sharing the tiling searches.
class CacheSchedules {
 public:
  // `fused`: fused_bytes(graph) when the caller has it (computed here otherwise). `memo`: the
  // caller's tiling memo (null: one of these schedules' own).
  explicit CacheSchedules(const Graph& graph, std::optional<int64_t> fused = std::nullopt,
                          TilingMemo* memo = nullptr);
  // Built one node at a time, for a pass that shares its walk over the nodes with others
  // (analyze's: a graph larger than the last-level cache is then fetched once, not once per
  // pass): add every node in execution order, then finish with the graph's fused bytes,
  // before any query.
  struct Incremental {};
  CacheSchedules(const Graph& graph, Incremental, TilingMemo* memo = nullptr);
  void add(const Node& node);
  void finish(int64_t fused);
  ~CacheSchedules();
  CacheSchedules(const CacheSchedules&) = delete;
  CacheSchedules& operator=(const CacheSchedules&) = delete;
  // The whole graph: graph inputs are read from DRAM, graph outputs written to it.
  std::optional<int64_t> graph_bytes(double capacity_bytes);
  // One node alone: its inputs come from DRAM, its outputs go to DRAM; the tensors its nests
  // share (kernel locals, an output initialised then accumulated) stay on chip only if they
  // fit. Data-movement nodes: their unfused bytes.
  std::optional<int64_t> node_bytes(NodeId node, double capacity_bytes);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

std::optional<int64_t> schedule_graph_bytes(const Graph& graph, double capacity_bytes,
                                            TilingMemo* memo = nullptr);
std::optional<int64_t> schedule_node_bytes(const Graph& graph, NodeId node, double capacity_bytes,
                                           TilingMemo* memo = nullptr);

// --- the curve --------------------------------------------------------------------------------

struct CurvePoint {
  double capacity_bytes = 0.0;
  int64_t bound_bytes = 0;                // the proven lower bound (sol/io_bound.h)
  std::optional<int64_t> schedule_bytes;  // the best schedule found (achievable)
};

// Capacities of a curve: powers of two from 1 KiB up to the first one at or above the sum of
// all tensor bytes of the graph (at least 1 KiB), plus `platform_capacity_bytes` if > 0;
// ascending, without duplicates.
std::vector<double> curve_capacities(const Graph& graph, double platform_capacity_bytes);
// The bound and the best schedule of the graph, and of every node alone (`per_node`: one
// curve per node, indexed like graph.nodes), at each capacity.
std::vector<CurvePoint> cache_aware_curve(const Graph& graph, const std::vector<double>& capacities,
                                          TilingMemo* memo = nullptr);
std::vector<std::vector<CurvePoint>> cache_aware_node_curves(const Graph& graph,
                                                             const std::vector<double>& capacities,
                                                             TilingMemo* memo = nullptr);

}  // namespace solar
