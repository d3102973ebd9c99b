// A proven lower bound on the DRAM traffic of an einsum graph when the chip holds at most C
// bytes (docs/sol-modes.md, "Cache-aware", "The bound"): the cache-aware SOL.
//
//   B_bound(C) = max(compulsory bytes, max over einsum nests of an I/O lower bound at C)
//
// The I/O lower bound of one nest is the Hong-Kung segment argument with the
// Hoelder-Brascamp-Lieb inequality for coordinate projections (Christ, Demmel, Knight,
// Scanlon, Yelick 2013; for coordinate projections Shearer / Bollobas-Thomason, the AGM
// fractional-edge-cover bound): cut any execution into segments of M bytes of DRAM I/O; one
// segment can execute at most F_max(g C + M) points, where g is the number of kinds (inputs,
// outputs) among the constrained tensors with a positive exponent; so
// Q >= M (ceil(points / F_max) - 1). Only tensors that
// must cross DRAM constrain a nest; everything this module drops only weakens the bound.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "solar/graph/graph.h"

namespace solar {

// One constrained tensor of a nest: the coordinate projection onto a set of ranks.
struct BoundTensor {
  std::string name;
  uint64_t ranks = 0;            // bit r: the projection keeps rank r (of BoundProblem::sizes)
  double bytes_per_element = 4;  // dtype bits / 8 (on chip and across DRAM)
  bool is_output = false;        // true: must be stored (or on chip at the end); else loaded
};

// The iteration space (ranks of size > 1) and the tensors that must cross DRAM.
struct BoundProblem {
  std::vector<int64_t> sizes;
  std::vector<BoundTensor> tensors;
};

struct EinsumBound {
  int64_t bytes = 0;            // the lower bound on DRAM bytes (0: none beyond the trivial)
  double points = 0.0;          // points of the ranks the constrained tensors cover
  double segment_bytes = 0;     // M of the best bound
  double max_points = 0.0;      // F_max at that M: points one segment can execute
  std::vector<double> weights;  // s, the HBL exponents of the best bound (per tensor)
};

// Candidate HBL exponent vectors s (s_j >= 0, for every covered rank i: sum of s_j over the
// tensors that keep i >= 1): the vertices of that polytope when it has few enough, else the
// all-ones vector and greedy 0/1 covers. Every vector returned is feasible.
std::vector<std::vector<double>> hbl_candidates(const BoundProblem& problem);

// The largest of the valid bounds over the candidate exponents and the segment sizes
// M = C x 2^(k/2), k = -4..12, plus each candidate's own optimum M = g C / (sigma - 1).
EinsumBound einsum_io_bound(const BoundProblem& problem, double capacity_bytes);

enum class BoundScope : uint8_t {
  kGraph,  // the whole graph runs: graph inputs/weights are loaded, graph outputs stored
  kNode,   // the node alone: every graph tensor it reads is loaded, every one it writes stored
};

// The bound problem of nest `nest` of `node`, or nullopt when the nest gives no bound: its
// points may be skipped (a guard, a sparse operand), overwritten (a plain assignment that
// writes one element from several points, or a later nest that overwrites the output) or
// not needed (graph scope: its output is not a graph output; node scope: its output is
// kernel-local). Tensors dropped: intermediates, kernel locals, sparse tensors, views that
// are not one-to-one (unfold, or a broadcast under another view), reads that may go out of
// range, every input of a body with `select` (a branch may not be read), a second operand of
// the same storage. Dims dropped from a projection: dims indexed by several ranks (sliding
// windows, strided windows) and broadcast dims.
std::optional<BoundProblem> einsum_bound_problem(const Graph& graph, const Node& node, size_t nest,
                                                 BoundScope scope);

// Bounds of one graph at any number of capacities, sharing the per-nest work.
class IoBounds {
 public:
  // `fused`: fused_bytes(graph) when the caller has it (computed here otherwise).
  explicit IoBounds(const Graph& graph, std::optional<int64_t> fused = std::nullopt);
  // Built one node at a time, for a pass that shares its walk over the nodes with others
  // (analyze's: a graph larger than the last-level cache is then fetched once, not once per
  // pass): add every node in execution order, then finish with the graph's fused bytes,
  // before any query.
  struct Incremental {};
  IoBounds(const Graph& graph, Incremental);
  ~IoBounds();
  IoBounds(IoBounds&&) noexcept;
  void add(const Node& node);
  void finish(int64_t fused);
  // max(fused bytes, max over the graph's nests in graph scope).
  int64_t graph_bytes(double capacity_bytes);
  // max(the node's unfused bytes, max over its nests in node scope).
  int64_t node_bytes(NodeId node, double capacity_bytes);

 private:
  const Graph& graph_;
  int64_t fused_ = 0;
  std::vector<BoundProblem> problems_;  // distinct problems of the graph's nests
  std::vector<std::vector<std::vector<double>>> candidates_;  // HBL exponents, per problem
  // Per node: its problems in graph and in node scope; inline (a node has one or two nests),
  // so that a 40,000-node graph does not make 80,000 heap blocks.
  std::vector<SmallVec<int, 2>> graph_nests_;
  std::vector<SmallVec<int, 2>> node_nests_;
  // Per node: its unfused bytes, kept so that the queries per node need not read the nodes
  // again (a graph larger than the last-level cache would come from memory once more).
  std::vector<int64_t> node_unfused_;
  std::vector<std::pair<double, std::vector<int64_t>>> evaluated_;  // capacity -> per problem
  struct Build;                   // what add() keeps between nodes (io_bound.cpp)
  std::unique_ptr<Build> build_;  // null once finished

  const std::vector<int64_t>& at(double capacity_bytes);
};

// One-shot forms of IoBounds.
int64_t io_bound_graph_bytes(const Graph& graph, double capacity_bytes);
int64_t io_bound_node_bytes(const Graph& graph, NodeId node, double capacity_bytes);

}  // namespace solar
