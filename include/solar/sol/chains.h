// Chain reordering (docs/sol-modes.md, "Chain reordering"): products of three or more
// tensors whose association order changes their cost.
//
// Two sources in an einsum graph:
//   - one nest whose body multiplies n >= 3 tensors ("bld,bln,bld->bldn", "ij,jk,kl->il");
//   - a chain of contraction nodes: a contraction whose output (directly or through
//     reshape/permute) is read only by another contraction, e.g. mm(mm(A, B), C).
// For each, every association order of the n operands in their order (Catalan(n-1) binary
// trees) is costed. Contracting two partial products keeps every rank that the remaining
// operands or the output still need; the others are summed. A step over the union U of its
// operands' ranks costs prod(U) points: MACs (2 FLOPs each) when it sums a rank, else one
// multiply (1 FLOP) per point. Bytes: each operand read once, each intermediate written and
// read back once (unfused), the output written once, all at full size.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "solar/base/dtype.h"
#include "solar/graph/graph.h"

namespace solar {

// One operand (or the output) of a chain: its ranks, named consistently across the chain.
struct ChainTensor {
  std::string name;
  std::vector<std::string> ranks;
  DType dtype = DType::kFp32;
};

// One association order, e.g. "((A*B)*C)*D" with its cost.
struct ChainOrder {
  std::string expression;
  int64_t macs = 0;
  int64_t flops = 0;               // 2 * MACs of summing steps + points of pure products
  int64_t bytes = 0;               // operands + 2 * intermediates + output
  int64_t intermediate_bytes = 0;  // sum of the intermediates' sizes (each once)
};

struct Chain {
  std::string kind;                // "nest" (one loop nest) | "graph" (contraction nodes)
  std::vector<std::string> nodes;  // the node(s) it comes from; a repeated chain lists all
  std::string einsum;              // the whole product as one einsum, "ij,jk,kl,lm->im"
  std::vector<ChainTensor> operands;
  ChainTensor output;
  std::map<std::string, int64_t> rank_sizes;
  std::vector<ChainOrder> orders;  // every order; orders[0] is left to right
  size_t left_to_right = 0;        // index into orders
  size_t best = 0;                 // fewest FLOPs (ties: fewest bytes, then first)
  size_t worst = 0;                // most FLOPs (ties: most bytes, then first)
  // The program's own evaluation: for "graph" the index of the order the nodes compute;
  // for "nest" -1 (one nest computes the whole product at once, costed below).
  int64_t as_written = -1;
  ChainOrder direct;  // "nest": the nest as written (its MACs and FLOPs)
};

// Longest chain enumerated (Catalan(11) = 58,786 orders); longer chains are not reported.
constexpr size_t kMaxChainOperands = 12;

// Every association order of `operands` (in their order) producing `output`. A rank of an
// operand or of the output without a size, or fewer than two operands, is an
// InternalError; more than kMaxChainOperands a UserError (kArgument).
Chain chain_orders(const std::vector<ChainTensor>& operands, const ChainTensor& output,
                   const std::map<std::string, int64_t>& rank_sizes);

// Every chain of `graph`: multi-operand product nests and chains of contraction nodes.
// Chains with the same einsum, sizes and dtypes (a kernel called once per layer) are
// reported once, listing every node.
std::vector<Chain> find_chains(const Graph& graph);

}  // namespace solar
