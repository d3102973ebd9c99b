// Cache-aware DRAM traffic: tiling search of one einsum, residency of shared tensors across
// nests, and the traffic-versus-capacity curve (docs/sol-modes.md, "Cache-aware").
#include "solar/sol/cache_aware.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include "solar/base/error.h"

namespace solar {
namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max() / 4;

int64_t mul_sat(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > kSaturated / b) return kSaturated;
  return std::min(a * b, kSaturated);
}

int64_t add_sat(int64_t a, int64_t b) { return std::min(a + b, kSaturated); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Bytes of `elements` values of a tensor (bits per element, density), rounded up.
int64_t tensor_bytes(const TileTensor& t, int64_t elements) {
  if (elements >= kSaturated) return kSaturated;
  if (t.density >= 1.0) return add_sat(mul_sat(elements, t.bits), 7) / 8;
  const double bytes = std::ceil(static_cast<double>(elements) * t.bits * t.density / 8.0);
  return bytes >= static_cast<double>(kSaturated) ? kSaturated : static_cast<int64_t>(bytes);
}

// Elements one tile of an affine dim touches, for term lengths `lens`: the span of the
// index (sum |c| (len - 1) + 1), at most the product of the lengths (a stride larger than
// the window leaves gaps), at most the dim's extent.
int64_t dim_footprint(const std::vector<TileTerm>& terms, const std::vector<int64_t>& lens,
                      int64_t extent) {
  int64_t span = 1, product = 1;
  for (size_t i = 0; i < terms.size(); ++i) {
    span = add_sat(span, mul_sat(std::abs(terms[i].coefficient), lens[i] - 1));
    product = mul_sat(product, lens[i]);
  }
  return std::min({span, product, extent});
}

// Sum of the footprints of the distinct tiles of one tensor dim: over the 2^k combinations of
// (full tile, last tile) of its k terms, each rank having trips-1 full tiles and one last tile
// of the remainder.
int64_t dim_tile_sum(const std::vector<TileTerm>& terms, const std::vector<int64_t>& sizes,
                     const std::vector<int64_t>& tiles, int64_t extent) {
  int64_t dim_sum = 0;
  const size_t k = terms.size();
  std::vector<int64_t> lens(k);
  for (uint32_t combo = 0; combo < (1u << k); ++combo) {
    int64_t count = 1;
    for (size_t i = 0; i < k; ++i) {
      const int64_t size = sizes[static_cast<size_t>(terms[i].rank)];
      const int64_t tile = tiles[static_cast<size_t>(terms[i].rank)];
      const int64_t trips = ceil_div(size, tile);
      const int64_t last = size - (trips - 1) * tile;
      const bool take_last = combo & (1u << i);
      if (last == tile) {
        // all tiles are full: the "last" combination is folded into the full one
        if (take_last) count = 0;
        lens[i] = tile;
        count = mul_sat(count, trips);
      } else {
        lens[i] = take_last ? last : tile;
        count = mul_sat(count, take_last ? 1 : trips - 1);
      }
    }
    if (count > 0) dim_sum = add_sat(dim_sum, mul_sat(count, dim_footprint(terms, lens, extent)));
  }
  return dim_sum;
}

// What one tiling means for one tensor.
struct TensorTiling {
  int64_t tile_elements = 0;  // footprint of a full tile (the buffer it needs)
  int64_t sum_elements = 0;   // sum of the footprints of its distinct tiles
  uint32_t relevant = 0;      // bit r: rank r indexes it
};

// Footprints of tensor `t` under tile sizes `tiles` (ranks of size `sizes`). The sum over
// distinct tiles factorises over dims when no rank indexes two dims: each rank has
// trips-1 full tiles and one last tile of the remainder.
TensorTiling tile_tensor(const TileTensor& t, const std::vector<int64_t>& sizes,
                         const std::vector<int64_t>& tiles) {
  TensorTiling out;
  out.tile_elements = 1;
  int64_t sum = 1;
  bool shared_rank = false;
  for (size_t d = 0; d < t.dims.size(); ++d) {
    const auto& terms = t.dims[d];
    std::vector<int64_t> lens(terms.size());
    for (size_t i = 0; i < terms.size(); ++i) {
      const uint32_t bit = 1u << terms[i].rank;
      if (out.relevant & bit) shared_rank = true;
      lens[i] = tiles[static_cast<size_t>(terms[i].rank)];
    }
    for (const auto& term : terms) out.relevant |= 1u << term.rank;
    out.tile_elements = mul_sat(out.tile_elements, dim_footprint(terms, lens, t.extents[d]));
    sum = mul_sat(sum, dim_tile_sum(terms, sizes, tiles, t.extents[d]));
  }
  if (shared_rank) {  // a rank in two dims (a diagonal): bound by tiles x full footprint
    int64_t tiles_count = 1;
    for (size_t r = 0; r < sizes.size(); ++r)
      if (out.relevant & (1u << r))
        tiles_count = mul_sat(tiles_count, ceil_div(sizes[r], tiles[r]));
    sum = mul_sat(tiles_count, out.tile_elements);
  }
  out.sum_elements = sum;
  return out;
}

// DRAM bytes of tensor `t` when each of its distinct tiles is visited `visits` times.
int64_t tensor_traffic(const TileTensor& t, int64_t sum_elements, int64_t visits) {
  const int64_t moved = mul_sat(sum_elements, visits);
  if (!t.is_output) return tensor_bytes(t, moved);
  if (!t.accumulates) return tensor_bytes(t, moved);  // plain writes (the last one wins)
  // Read-modify-write: every visit writes; every visit but the first reads the partial sum
  // back, and the first too when the output was initialised before the nest.
  const int64_t reads = t.initialized ? moved : mul_sat(sum_elements, visits - 1);
  return add_sat(tensor_bytes(t, moved), tensor_bytes(t, reads));
}

// Everything the order search needs of one tiling.
struct TilingCosts {
  std::vector<int> loops;           // ranks with more than one trip
  std::vector<int64_t> trips;       // per loop
  std::vector<uint32_t> relevant;   // per tensor, over loop indices
  std::vector<int64_t> sum;         // per tensor
  std::vector<int64_t> irrelevant;  // per tensor: product of trips of loops not indexing it
  int64_t buffer_bytes = 0;
};

template <typename TileOf>
TilingCosts tiling_costs(const TilingProblem& p, const std::vector<int64_t>& tiles,
                         uint32_t excluded, TileOf tile_of) {
  TilingCosts c;
  std::vector<int> loop_of(p.sizes.size(), -1);
  for (size_t r = 0; r < p.sizes.size(); ++r) {
    const int64_t trips = ceil_div(p.sizes[r], tiles[r]);
    if (trips > 1) {
      loop_of[r] = static_cast<int>(c.loops.size());
      c.loops.push_back(static_cast<int>(r));
      c.trips.push_back(trips);
    }
  }
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    if (excluded & (1u << i)) {
      c.relevant.push_back(0);
      c.sum.push_back(0);
      c.irrelevant.push_back(1);
      continue;
    }
    const TensorTiling tt = tile_of(i);
    uint32_t rel = 0;
    int64_t irr = 1;
    for (size_t r = 0; r < p.sizes.size(); ++r) {
      if (loop_of[r] < 0) continue;
      if (tt.relevant & (1u << r)) {
        rel |= 1u << loop_of[r];
      } else {
        irr = mul_sat(irr, c.trips[static_cast<size_t>(loop_of[r])]);
      }
    }
    c.relevant.push_back(rel);
    c.sum.push_back(tt.sum_elements);
    c.irrelevant.push_back(irr);
    c.buffer_bytes = add_sat(c.buffer_bytes, tensor_bytes(p.tensors[i], tt.tile_elements));
  }
  return c;
}

// Footprints of every tensor dim for every combination of its ranks' candidate tiles, so a
// search computes each once (a dim has one to three ranks; a tensor many tilings).
class TileTables {
 public:
  TileTables(const TilingProblem& p, const std::vector<std::vector<int64_t>>& candidates) : p_(p) {
    for (const TileTensor& t : p.tensors) {
      TensorTable table;
      uint32_t seen = 0;
      for (size_t d = 0; d < t.dims.size(); ++d) {
        DimTable dim;
        int64_t entries = 1;
        for (const TileTerm& term : t.dims[d]) {
          if (seen & (1u << term.rank)) table.shared = true;
          dim.ranks.push_back(term.rank);
          dim.radix.push_back(entries);
          entries *= static_cast<int64_t>(candidates[static_cast<size_t>(term.rank)].size());
        }
        for (const TileTerm& term : t.dims[d]) seen |= 1u << term.rank;
        if (table.shared || entries > 100000) {
          table.shared = true;
          break;
        }
        std::vector<int64_t> tiles = p.sizes, lens(t.dims[d].size());
        for (int64_t e = 0; e < entries; ++e) {
          for (size_t i = 0; i < dim.ranks.size(); ++i) {
            const auto& cands = candidates[static_cast<size_t>(dim.ranks[i])];
            const int64_t at = (e / dim.radix[i]) % static_cast<int64_t>(cands.size());
            tiles[static_cast<size_t>(dim.ranks[i])] = cands[static_cast<size_t>(at)];
            lens[i] = cands[static_cast<size_t>(at)];
          }
          dim.footprint.push_back(dim_footprint(t.dims[d], lens, t.extents[d]));
          dim.sum.push_back(dim_tile_sum(t.dims[d], p.sizes, tiles, t.extents[d]));
        }
        table.dims.push_back(std::move(dim));
      }
      table.relevant = seen;
      tables_.push_back(std::move(table));
    }
  }

  // Tensor i under the tiling whose candidate index per rank is `at` (values `tiles`).
  TensorTiling tile(size_t i, const std::vector<size_t>& at,
                    const std::vector<int64_t>& tiles) const {
    const TensorTable& table = tables_[i];
    if (table.shared) return tile_tensor(p_.tensors[i], p_.sizes, tiles);
    TensorTiling out;
    out.relevant = table.relevant;
    out.tile_elements = 1;
    out.sum_elements = 1;
    for (const DimTable& dim : table.dims) {
      int64_t e = 0;
      for (size_t j = 0; j < dim.ranks.size(); ++j)
        e += static_cast<int64_t>(at[static_cast<size_t>(dim.ranks[j])]) * dim.radix[j];
      out.tile_elements = mul_sat(out.tile_elements, dim.footprint[static_cast<size_t>(e)]);
      out.sum_elements = mul_sat(out.sum_elements, dim.sum[static_cast<size_t>(e)]);
    }
    return out;
  }

 private:
  struct DimTable {
    std::vector<int> ranks;
    std::vector<int64_t> radix;
    std::vector<int64_t> footprint, sum;
  };
  struct TensorTable {
    std::vector<DimTable> dims;
    uint32_t relevant = 0;
    bool shared = false;  // a rank in two dims: computed directly
  };
  const TilingProblem& p_;
  std::vector<TensorTable> tables_;
};

// Least DRAM bytes over all orders of the loops, and that order (outermost first).
//
// A tensor's tiles are fetched once per iteration of the loops above its innermost relevant
// loop, so its traffic is sum x irrelevant / reuse, where reuse is the product of the trips of
// the innermost run of loops that do not index it. Placing loops from the innermost outwards,
// a tensor's reuse is fixed when its first relevant loop is placed and equals the product of
// the loops placed before: the cost of a set of inner loops does not depend on their order,
// so a dynamic program over the subsets is exact.
//
// With an `outer` constraint, the constrained loops (those of its ranks with more than one
// trip) are placed last, innermost first, once every free loop is placed.
std::pair<int64_t, std::vector<int>> best_order(const TilingProblem& p, const TilingCosts& c,
                                                uint32_t excluded, const OuterTiling& outer) {
  const size_t k = c.loops.size();
  const size_t subsets = size_t{1} << k;
  // The constrained loops, innermost first, and the mask of the free ones.
  std::vector<size_t> sequence;
  for (size_t j = outer.ranks.size(); j-- > 0;)
    for (size_t l = 0; l < k; ++l)
      if (c.loops[l] == outer.ranks[j]) sequence.push_back(l);
  size_t free_mask = subsets - 1;
  for (size_t l : sequence) free_mask &= ~(size_t{1} << l);
  thread_local std::vector<int64_t> cost, product;
  thread_local std::vector<int> choice;
  cost.assign(subsets, kSaturated + 1);
  product.assign(subsets, 1);
  choice.assign(subsets, -1);
  for (size_t s = 1; s < subsets; ++s) {
    const size_t low = static_cast<size_t>(__builtin_ctzll(s));
    product[s] = mul_sat(product[s & (s - 1)], c.trips[low]);
  }
  cost[0] = 0;
  const size_t n = p.tensors.size();
  thread_local std::vector<int64_t> closing;  // traffic of tensor t closed on top of subset s
  closing.assign(n, 0);
  for (size_t s = 0; s < subsets; ++s) {
    if (cost[s] > kSaturated) continue;
    for (size_t t = 0; t < n; ++t) {
      const bool open = !(excluded & (1u << t)) && (c.relevant[t] & s) == 0;
      closing[t] = open ? tensor_traffic(p.tensors[t], c.sum[t], c.irrelevant[t] / product[s]) : -1;
    }
    for (size_t l = 0; l < k; ++l) {
      if (s & (size_t{1} << l)) continue;
      if (!(free_mask & (size_t{1} << l))) {  // a constrained loop: only in its turn
        if ((s & free_mask) != free_mask) continue;
        const size_t placed = static_cast<size_t>(__builtin_popcountll(s & ~free_mask));
        if (sequence[placed] != l) continue;
      }
      int64_t add = 0;
      for (size_t t = 0; t < n; ++t)  // open tensors that loop l indexes close here
        if (closing[t] >= 0 && (c.relevant[t] & (1u << l))) add = add_sat(add, closing[t]);
      const size_t next = s | (size_t{1} << l);
      const int64_t total = add_sat(cost[s], add);
      if (total < cost[next]) {
        cost[next] = total;
        choice[next] = static_cast<int>(l);
      }
    }
  }
  int64_t total = cost[subsets - 1];
  for (size_t t = 0; t < n; ++t) {  // tensors no loop indexes: one visit of their one tile
    if (excluded & (1u << t) || c.relevant[t] != 0) continue;
    total = add_sat(total,
                    tensor_traffic(p.tensors[t], c.sum[t], c.irrelevant[t] / product[subsets - 1]));
  }
  std::vector<int> order;  // innermost first while walking back, reversed below
  for (size_t s = subsets - 1; s != 0;) {
    const int l = choice[s];
    order.push_back(c.loops[static_cast<size_t>(l)]);
    s &= ~(size_t{1} << l);
  }
  return {total, order};  // placed last = outermost: the walk back yields outermost first
}

// Keeps the points no other point beats in both buffer and traffic.
Frontier pareto(std::vector<TilingPoint> points) {
  std::sort(points.begin(), points.end(), [](const TilingPoint& a, const TilingPoint& b) {
    return a.buffer_bytes != b.buffer_bytes ? a.buffer_bytes < b.buffer_bytes
                                            : a.dram_bytes < b.dram_bytes;
  });
  Frontier out;
  for (auto& point : points) {
    if (!out.empty() && point.dram_bytes >= out.back().dram_bytes) continue;
    out.push_back(std::move(point));
  }
  return out;
}

// Calls `visit(tiles)` for every combination of the candidate lists.
template <typename Visit>
void each_tiling(const std::vector<std::vector<int64_t>>& candidates, Visit visit) {
  std::vector<size_t> at(candidates.size(), 0);
  std::vector<int64_t> tiles(candidates.size());
  for (size_t r = 0; r < candidates.size(); ++r) tiles[r] = candidates[r][0];
  while (true) {
    visit(tiles);
    size_t r = 0;
    for (; r < candidates.size(); ++r) {
      if (++at[r] < candidates[r].size()) {
        tiles[r] = candidates[r][at[r]];
        break;
      }
      at[r] = 0;
      tiles[r] = candidates[r][0];
    }
    if (r == candidates.size()) return;
  }
}

void check_problem(const TilingProblem& p) {
  SOLAR_INTERNAL_CHECK(p.sizes.size() == p.ranks.size() && p.sizes.size() <= 20,
                       "tiling problem with " + std::to_string(p.sizes.size()) + " ranks");
  SOLAR_INTERNAL_CHECK(p.tensors.size() <= 31, "tiling problem with too many tensors");
}

}  // namespace

std::vector<int64_t> tile_candidates(int64_t size) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= size; ++d) {
    if (size % d == 0) {
      out.push_back(d);
      out.push_back(size / d);
    }
  }
  for (int64_t p = 1; p < size; p *= 2) out.push_back(p);
  out.push_back(size);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

TilingProblem tiling_problem(const Graph& graph, const Node& node, const Einsum& einsum,
                             bool initialized) {
  TilingProblem p;
  std::map<std::string, int> rank_index;
  for (size_t r = 0; r < einsum.ranks.size(); ++r) {
    if (einsum.rank_sizes[r] <= 1) continue;  // a single trip never loops
    rank_index[einsum.ranks[r]] = static_cast<int>(p.ranks.size());
    p.ranks.push_back(einsum.ranks[r]);
    p.sizes.push_back(einsum.rank_sizes[r]);
  }
  std::map<std::string, int64_t> full_size;
  for (size_t r = 0; r < einsum.ranks.size(); ++r)
    full_size[einsum.ranks[r]] = einsum.rank_sizes[r];
  // Dtype of a kernel-local tensor: that of the nest of this node that writes it.
  auto local_bits = [&](const Operand& op) {
    for (const Einsum& e : *node.einsums)
      if (e.output.slot == op.slot) return dtype_bits(e.output_dtype);
    return dtype_bits(einsum.output_dtype);
  };
  auto add = [&](const Operand& op, bool is_output) {
    TileTensor t;
    t.name = op.name;
    t.is_output = is_output;
    const TensorId id = node.operand_tensor(op);
    const TensorInfo* info = id >= 0 ? &graph.tensors.at(static_cast<size_t>(id)) : nullptr;
    t.bits = info ? dtype_bits(info->dtype) : local_bits(op);
    t.density = info ? 1.0 - info->sparsity : 1.0;
    // A view made by `broadcast` (attrs: per output dim the input dim it reads, or -1).
    const Node* broadcast = nullptr;
    if (info && info->producer != kNoNode) {
      const Node& producer = graph.nodes.at(static_cast<size_t>(info->producer));
      if (producer.op == "broadcast" && producer.attrs.size() == info->shape.size())
        broadcast = &producer;
    }
    for (size_t d = 0; d < op.projection.size(); ++d) {
      std::vector<TileTerm> terms;
      int64_t span = 1;
      for (const ProjectionTerm& term : op.projection[d]) {
        auto size = full_size.find(term.rank);
        SOLAR_INTERNAL_CHECK(size != full_size.end(), "einsum '" + einsum.text + "' of node '" +
                                                          node.name + "' indexes unknown rank '" +
                                                          term.rank + "'");
        span += std::abs(term.coefficient) * (size->second - 1);
        auto it = rank_index.find(term.rank);
        if (it == rank_index.end() || term.coefficient == 0) continue;
        terms.push_back({it->second, term.coefficient});
      }
      int64_t extent = span;
      if (info && d < info->shape.size()) extent = std::min(span, info->shape[d]);
      if (broadcast && d < broadcast->attrs.size() && broadcast->attrs[d] < 0) {
        terms.clear();  // a broadcast dim of a view: every index reads the same element
        extent = 1;
      }
      t.dims.push_back(std::move(terms));
      t.extents.push_back(std::max<int64_t>(extent, 1));
    }
    if (is_output) {
      t.accumulates = einsum.reduce != ReduceOp::kNone;
      t.initialized = t.accumulates && initialized;
    }
    p.tensors.push_back(std::move(t));
  };
  for (const Operand& op : einsum.inputs) add(op, false);
  add(einsum.output, true);
  return p;
}

std::string problem_signature(const TilingProblem& p) {
  std::string s;
  for (size_t r = 0; r < p.sizes.size(); ++r) s += std::to_string(p.sizes[r]) + ",";
  for (const TileTensor& t : p.tensors) {
    s += "|";
    s += std::to_string(t.bits) + (t.is_output ? "o" : "i") + (t.accumulates ? "a" : "") +
         (t.initialized ? "z" : "");
    if (t.density < 1.0) s += "d" + std::to_string(t.density);
    for (size_t d = 0; d < t.dims.size(); ++d) {
      s += "[";
      for (const TileTerm& term : t.dims[d])
        s += std::to_string(term.coefficient) + "*" + std::to_string(term.rank) + "+";
      s += ":" + std::to_string(t.extents[d]) + "]";
    }
  }
  return s;
}

namespace {

// Each rank's tile candidates; a rank of `outer` has only its fixed tile.
std::vector<std::vector<int64_t>> rank_candidates(const TilingProblem& problem,
                                                  const OuterTiling& outer) {
  std::vector<std::vector<int64_t>> candidates;
  for (int64_t size : problem.sizes) candidates.push_back(tile_candidates(size));
  for (size_t j = 0; j < outer.ranks.size(); ++j)
    candidates.at(static_cast<size_t>(outer.ranks[j])) = {outer.tiles.at(j)};
  return candidates;
}

}  // namespace

Frontier search_tilings(const TilingProblem& problem, uint32_t excluded, int64_t max_tilings,
                        const OuterTiling& outer) {
  check_problem(problem);
  std::vector<std::vector<int64_t>> candidates = rank_candidates(problem, outer);
  auto product = [&] {
    int64_t n = 1;
    for (const auto& c : candidates) n = mul_sat(n, static_cast<int64_t>(c.size()));
    return n;
  };
  while (product() > max_tilings) {
    auto widest =
        std::max_element(candidates.begin(), candidates.end(),
                         [](const auto& a, const auto& b) { return a.size() < b.size(); });
    if (widest->size() <= 2) break;
    std::vector<int64_t> thinned;
    for (size_t i = 0; i < widest->size(); ++i)
      if (i % 2 == 0 || i + 1 == widest->size()) thinned.push_back((*widest)[i]);
    *widest = std::move(thinned);
  }
  if (candidates.empty()) candidates.push_back({1});  // no loops: one (empty) tiling
  // Pass 1: buffer and a lower bound on the traffic (every distinct tile once) of each
  // tiling. Pass 2, by increasing buffer: the order search, skipped for a tiling whose lower
  // bound is no better than the least traffic of a smaller (or equal) buffer already found:
  // such a tiling is dominated, so the frontier is unchanged.
  struct Candidate {
    int64_t buffer_bytes = 0;
    int64_t lower_bound = 0;
    int64_t ordinal = 0;  // mixed-radix index of the tiling (rank 0 fastest)
  };
  const bool no_ranks = problem.sizes.empty();
  const TileTables tables(problem, candidates);
  std::vector<size_t> at(candidates.size(), 0);
  std::vector<int64_t> tiles(candidates.size());
  auto decode = [&](int64_t ordinal) {
    for (size_t r = 0; r < candidates.size(); ++r) {
      const auto n = static_cast<int64_t>(candidates[r].size());
      at[r] = static_cast<size_t>(ordinal % n);
      tiles[r] = candidates[r][at[r]];
      ordinal /= n;
    }
  };
  const int64_t count = product();
  std::vector<Candidate> all(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    decode(i);
    Candidate& c = all[static_cast<size_t>(i)];
    c.ordinal = i;
    for (size_t t = 0; t < problem.tensors.size(); ++t) {
      if (excluded & (1u << t)) continue;
      const TensorTiling tt = tables.tile(t, at, tiles);
      c.buffer_bytes = add_sat(c.buffer_bytes, tensor_bytes(problem.tensors[t], tt.tile_elements));
      c.lower_bound =
          add_sat(c.lower_bound, tensor_traffic(problem.tensors[t], tt.sum_elements, 1));
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    return a.buffer_bytes < b.buffer_bytes;
  });
  std::vector<TilingPoint> points;
  int64_t best = kSaturated + 1;
  for (const Candidate& c : all) {
    if (c.lower_bound >= best) continue;
    decode(c.ordinal);
    const std::vector<int64_t> used = no_ranks ? std::vector<int64_t>{} : tiles;
    const TilingCosts costs =
        tiling_costs(problem, used, excluded, [&](size_t t) { return tables.tile(t, at, used); });
    auto [dram, order] = best_order(problem, costs, excluded, outer);
    if (dram >= best) continue;  // dominated by a smaller buffer already found
    best = dram;
    points.push_back({costs.buffer_bytes, dram, used, std::move(order)});
  }
  return pareto(std::move(points));
}

Frontier brute_force_tilings(const TilingProblem& problem, uint32_t excluded,
                             const OuterTiling& outer) {
  check_problem(problem);
  std::vector<std::vector<int64_t>> candidates = rank_candidates(problem, outer);
  if (candidates.empty()) candidates.push_back({1});
  const bool no_ranks = problem.sizes.empty();
  std::vector<TilingPoint> points;
  each_tiling(candidates, [&](const std::vector<int64_t>& tiles_in) {
    const std::vector<int64_t> tiles = no_ranks ? std::vector<int64_t>{} : tiles_in;
    std::vector<int> loops;
    for (size_t r = 0; r < tiles.size(); ++r)
      if (ceil_div(problem.sizes[r], tiles[r]) > 1) loops.push_back(static_cast<int>(r));
    int64_t buffer = 0;
    std::vector<TensorTiling> per_tensor;
    for (size_t i = 0; i < problem.tensors.size(); ++i) {
      per_tensor.push_back(tile_tensor(problem.tensors[i], problem.sizes, tiles));
      if (!(excluded & (1u << i)))
        buffer += tensor_bytes(problem.tensors[i], per_tensor.back().tile_elements);
    }
    std::sort(loops.begin(), loops.end());
    // The constrained loops that loop, outermost first: every order must start with them.
    std::vector<int> prefix;
    for (int r : outer.ranks)
      if (std::find(loops.begin(), loops.end(), r) != loops.end()) prefix.push_back(r);
    do {  // every order of the DRAM loops, outermost first
      if (!std::equal(prefix.begin(), prefix.end(), loops.begin())) continue;
      int64_t dram = 0;
      for (size_t i = 0; i < problem.tensors.size(); ++i) {
        if (excluded & (1u << i)) continue;
        // Visits of each tile: the trips of the irrelevant loops above the innermost
        // relevant one.
        int innermost = -1;
        for (size_t j = 0; j < loops.size(); ++j)
          if (per_tensor[i].relevant & (1u << loops[j])) innermost = static_cast<int>(j);
        int64_t visits = 1;
        for (int j = 0; j < innermost; ++j) {
          const int r = loops[static_cast<size_t>(j)];
          if (!(per_tensor[i].relevant & (1u << r)))
            visits *=
                ceil_div(problem.sizes[static_cast<size_t>(r)], tiles[static_cast<size_t>(r)]);
        }
        dram += tensor_traffic(problem.tensors[i], per_tensor[i].sum_elements, visits);
      }
      points.push_back({buffer, dram, tiles, loops});
    } while (std::next_permutation(loops.begin(), loops.end()));
  });
  return pareto(std::move(points));
}

namespace {

struct Memo {
  std::mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<Frontier>> frontiers;
  MemoStats stats;
};

Memo& memo() {
  static Memo m;
  return m;
}

std::string outer_key(const OuterTiling& outer) {
  std::string s;
  for (size_t j = 0; j < outer.ranks.size(); ++j)
    s += std::to_string(outer.ranks[j]) + ":" + std::to_string(outer.tiles[j]) + ",";
  return s;
}

const Frontier& memo_frontier(const TilingProblem& problem, const std::string& signature,
                              uint32_t excluded, const OuterTiling& outer = {}) {
  const std::string key = std::to_string(excluded) + "#" + outer_key(outer) + "#" + signature;
  Memo& m = memo();
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    auto it = m.frontiers.find(key);
    if (it != m.frontiers.end()) {
      ++m.stats.hits;
      return *it->second;
    }
  }
  auto frontier = std::make_unique<Frontier>(search_tilings(problem, excluded, 40000, outer));
  std::lock_guard<std::mutex> lock(m.mutex);
  auto [it, inserted] = m.frontiers.emplace(key, std::move(frontier));
  if (inserted) ++m.stats.misses;
  return *it->second;
}

}  // namespace

const Frontier& memo_frontier(const TilingProblem& problem, uint32_t excluded,
                              const OuterTiling& outer) {
  return memo_frontier(problem, problem_signature(problem), excluded, outer);
}

MemoStats memo_stats() {
  std::lock_guard<std::mutex> lock(memo().mutex);
  return memo().stats;
}

void clear_memo() {
  std::lock_guard<std::mutex> lock(memo().mutex);
  memo().frontiers.clear();
  memo().stats = {};
}

int64_t compulsory_bytes(const TilingProblem& problem, uint32_t excluded) {
  int64_t total = 0;
  for (size_t i = 0; i < problem.tensors.size(); ++i) {
    if (excluded & (1u << i)) continue;
    const TensorTiling tt = tile_tensor(problem.tensors[i], problem.sizes, problem.sizes);
    total += tensor_traffic(problem.tensors[i], tt.sum_elements, 1);
  }
  return total;
}

std::optional<int64_t> min_dram_bytes(const Frontier& frontier, double capacity_bytes) {
  // Traffic falls as buffer grows: the last point that fits is the best.
  auto it = std::upper_bound(
      frontier.begin(), frontier.end(), capacity_bytes,
      [](double cap, const TilingPoint& p) { return cap < static_cast<double>(p.buffer_bytes); });
  if (it == frontier.begin()) return std::nullopt;
  return std::prev(it)->dram_bytes;
}

// --- residency --------------------------------------------------------------------------------

namespace {

// One tensor (a graph storage or a kernel-local) as residency sees it.
struct Key {
  int64_t bytes = 0;
  bool graph_output = false;  // must be in DRAM at the end of the graph
  bool graph_tensor = false;  // not kernel-local: must be in DRAM after its node
};

// One step of the sequence: an einsum nest, or a data-movement node with fixed traffic.
struct Step {
  NodeId node = 0;
  TilingProblem problem;
  std::string signature;
  std::vector<int> keys;  // nest: per problem tensor
  bool fixed = false;
  std::vector<std::pair<int, int64_t>> fixed_traffic;  // data movement: (key, bytes)
  size_t fixed_inputs = 0;  // fixed_traffic[0, fixed_inputs) are reads, the rest writes
  // Inputs read through a view larger than its storage (a broadcast the projection cannot
  // show, e.g. reshaped after broadcasting): held on chip whole, read once at storage size.
  uint32_t pinned = 0;
  std::vector<int64_t> pinned_bytes;  // per problem tensor (0 if not pinned)
  std::vector<std::pair<uint32_t, const Frontier*>> frontiers;  // cache per excluded mask

  const Frontier& frontier(uint32_t excluded) {
    for (const auto& [mask, f] : frontiers)
      if (mask == excluded) return *f;
    const Frontier& f = memo_frontier(problem, signature, excluded);
    frontiers.emplace_back(excluded, &f);
    return f;
  }
  // Whether the first thing this step does with key k is a read.
  bool reads_first(int k) const {
    if (fixed) {
      for (size_t j = 0; j < fixed_traffic.size(); ++j)
        if (fixed_traffic[j].first == k) return j < fixed_inputs;  // reads are listed first
      return false;
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] != k) continue;
      const TileTensor& t = problem.tensors[i];
      if (!t.is_output || t.initialized) return true;
    }
    return false;
  }
  bool writes(int k) const {
    if (fixed) {
      for (size_t j = fixed_inputs; j < fixed_traffic.size(); ++j)
        if (fixed_traffic[j].first == k) return true;
      return false;
    }
    return !keys.empty() && keys.back() == k;
  }
  uint32_t mask_of(int k) const {
    uint32_t mask = 0;
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == k) mask |= 1u << i;
    return mask;
  }
};

struct Steps {
  std::vector<Key> keys;
  std::vector<Step> steps;
};

// The nests of `graph` in execution order (all nodes, or only `only`).
Steps build_steps(const Graph& graph, std::optional<NodeId> only) {
  Steps out;
  std::vector<char> is_output(graph.tensors.size(), 0);
  for (TensorId t : graph.outputs)
    is_output[static_cast<size_t>(graph.tensors[static_cast<size_t>(t)].storage)] = 1;
  std::unordered_map<TensorId, int> graph_key;  // storage -> key, made on first use
  auto storage = [&](TensorId t) {
    const TensorId id = graph.tensors.at(static_cast<size_t>(t)).storage;
    auto [it, inserted] = graph_key.emplace(id, static_cast<int>(out.keys.size()));
    if (inserted) {
      Key k;
      k.bytes = graph.tensors[static_cast<size_t>(id)].bytes();
      k.graph_tensor = true;
      k.graph_output = is_output[static_cast<size_t>(id)] != 0;
      out.keys.push_back(k);
    }
    return it->second;
  };
  for (const Node& node : graph.nodes) {
    if (only && node.id != *only) continue;
    if (node.kind == NodeKind::kDataMovement || !node.einsums) {
      if (node.bytes() == 0) continue;  // a view moves nothing
      Step s;
      s.node = node.id;
      s.fixed = true;
      for (size_t i = 0; i < node.inputs.size(); ++i)
        s.fixed_traffic.emplace_back(storage(node.inputs[i]), node.input_bytes[i]);
      s.fixed_inputs = s.fixed_traffic.size();
      int64_t left = node.bytes_written;
      for (TensorId t : node.outputs) {
        const int64_t b = std::min(left, graph.tensors[static_cast<size_t>(t)].bytes());
        s.fixed_traffic.emplace_back(storage(t), b);
        left -= b;
      }
      out.steps.push_back(std::move(s));
      continue;
    }
    std::map<int, int> local_key;  // kernel slot -> key
    std::vector<bool> written(node.slot_tensors.size() + 64, false);
    for (const Einsum& e : *node.einsums) {
      auto key_of = [&](const Operand& op) {
        const TensorId id = node.operand_tensor(op);
        if (id >= 0) return storage(id);
        auto it = local_key.find(op.slot);
        if (it != local_key.end()) return it->second;
        const int k = static_cast<int>(out.keys.size());
        out.keys.push_back(Key{});
        local_key[op.slot] = k;
        return k;
      };
      const size_t slot = static_cast<size_t>(std::max(e.output.slot, 0));
      if (slot >= written.size()) written.resize(slot + 1, false);
      Step s;
      s.node = node.id;
      s.problem = tiling_problem(graph, node, e, written[slot]);
      written[slot] = true;
      s.signature = problem_signature(s.problem);
      for (const Operand& op : e.inputs) s.keys.push_back(key_of(op));
      s.keys.push_back(key_of(e.output));
      // A local's size: its full footprint in the nest that touches it. An input whose
      // footprint exceeds its storage is pinned.
      s.pinned_bytes.assign(s.keys.size(), 0);
      for (size_t i = 0; i < s.keys.size(); ++i) {
        Key& k = out.keys[static_cast<size_t>(s.keys[i])];
        if (k.graph_tensor) {
          const TileTensor& t = s.problem.tensors[i];
          if (t.is_output || s.keys.size() > 31) continue;
          const TensorTiling tt = tile_tensor(t, s.problem.sizes, s.problem.sizes);
          if (tensor_bytes(t, tt.tile_elements) > k.bytes) {
            s.pinned |= 1u << i;
            s.pinned_bytes[i] = k.bytes;
          }
          continue;
        }
        const TileTensor& t = s.problem.tensors[i];
        const TensorTiling tt = tile_tensor(t, s.problem.sizes, s.problem.sizes);
        k.bytes = std::max(k.bytes, tensor_bytes(t, tt.tile_elements));
      }
      out.steps.push_back(std::move(s));
    }
  }
  return out;
}

// What residency has taken out of one step: the tensors (einsum) or traffic entries (data
// movement) that stay on chip.
struct StepState {
  uint32_t mask = 0;          // einsum: bit i = problem tensor i
  std::vector<char> dropped;  // data movement: per fixed_traffic entry
};

// `state` with key `k` dropped from step `s` (unchanged if the step does not touch it).
StepState drop_key(const Step& s, StepState state, int k) {
  if (s.fixed) {
    state.dropped.resize(s.fixed_traffic.size(), 0);
    for (size_t j = 0; j < s.fixed_traffic.size(); ++j)
      if (s.fixed_traffic[j].first == k) state.dropped[j] = 1;
  } else {
    state.mask |= s.mask_of(k);
  }
  return state;
}

// Bytes of the pinned inputs of `s` that residency has not already kept on chip (`mask`):
// each is read once and held on chip while the step runs.
int64_t pinned_read_bytes(const Step& s, uint32_t mask) {
  int64_t total = 0;
  for (size_t i = 0; i < s.pinned_bytes.size(); ++i)
    if ((s.pinned & (1u << i)) && !(mask & (1u << i))) total += s.pinned_bytes[i];
  return total;
}

// Traffic of one step in `state` with `capacity` left for its tiles; nullopt if no tiling
// fits. `fallback`: a nest whose tiles never fit is charged its smallest-buffer tiling.
std::optional<int64_t> step_bytes(Step& s, const StepState& state, double capacity, bool fallback) {
  if (s.fixed) {
    int64_t total = 0;
    for (size_t j = 0; j < s.fixed_traffic.size(); ++j)
      if (j >= state.dropped.size() || !state.dropped[j]) total += s.fixed_traffic[j].second;
    return total;
  }
  const Frontier& f = s.frontier(state.mask | s.pinned);
  if (f.empty()) return std::nullopt;
  const int64_t pinned = pinned_read_bytes(s, state.mask);
  auto best = min_dram_bytes(f, capacity - static_cast<double>(pinned));
  if (!best && fallback) best = f.front().dram_bytes;
  if (!best) return std::nullopt;
  return *best + pinned;
}

// The rank of each dim of tensor `t` (-1 for a dim no rank of size > 1 indexes) when every
// dim is one rank with coefficient 1 that covers the dim's extent; nullopt otherwise.
std::optional<std::vector<int>> plain_dims(const TilingProblem& p, const TileTensor& t) {
  std::vector<int> out;
  for (size_t d = 0; d < t.dims.size(); ++d) {
    if (t.dims[d].empty()) {
      if (t.extents[d] != 1) return std::nullopt;
      out.push_back(-1);
      continue;
    }
    if (t.dims[d].size() != 1 || t.dims[d][0].coefficient != 1) return std::nullopt;
    const int r = t.dims[d][0].rank;
    if (p.sizes[static_cast<size_t>(r)] != t.extents[d]) return std::nullopt;
    out.push_back(r);
  }
  return out;
}

// The tensor index of key `k` in an einsum step (-1 if absent).
int tensor_of(const Step& s, int k) {
  for (size_t i = 0; i < s.keys.size(); ++i)
    if (s.keys[i] == k) return static_cast<int>(i);
  return -1;
}

// Keeping `k` one tile at a time through a run of steps that touch it (fusion-friendly: one
// dim of `k` tiled, its rank's loop outermost in every step of the run, the other dims
// whole). Returns each step's traffic and the tile's bytes for the best such tiling that
// fits, or nullopt.
struct TiledRun {
  std::vector<int64_t> costs;
  double tile_bytes = 0.0;
};

// The rank per dim of every operand of step `s` that is key `k` (all must agree), or nullopt.
std::optional<std::vector<int>> shared_dims(const Step& s, int k,
                                            const std::vector<int64_t>& extents) {
  std::optional<std::vector<int>> dims;
  for (size_t i = 0; i < s.keys.size(); ++i) {
    if (s.keys[i] != k) continue;
    const TileTensor& t = s.problem.tensors[i];
    auto d = plain_dims(s.problem, t);
    if (!d || t.extents != extents || (dims && *dims != *d)) return std::nullopt;
    dims = d;
  }
  return dims;
}

std::optional<TiledRun> tiled_run(const std::vector<Step*>& run, int k,
                                  const std::vector<uint32_t>& masks_before,
                                  const std::vector<double>& capacities) {
  const int t0 = tensor_of(*run[0], k);
  if (t0 < 0) return std::nullopt;
  const TileTensor& first = run[0]->problem.tensors[static_cast<size_t>(t0)];
  const std::vector<int64_t> extents = first.extents;
  std::vector<std::vector<int>> dims;
  std::vector<uint32_t> masks;
  std::vector<int64_t> pinned;
  for (size_t j = 0; j < run.size(); ++j) {
    if (run[j]->fixed) return std::nullopt;
    auto d = shared_dims(*run[j], k, extents);
    if (!d) return std::nullopt;
    dims.push_back(*d);
    masks.push_back(masks_before[j] | run[j]->mask_of(k));
    pinned.push_back(pinned_read_bytes(*run[j], masks.back()));
  }
  std::optional<TiledRun> best;
  int64_t best_total = 0;
  for (size_t d = 0; d < extents.size(); ++d) {
    if (std::any_of(dims.begin(), dims.end(), [&](const auto& v) { return v[d] < 0; })) continue;
    std::vector<int64_t> tiles = tile_candidates(extents[d]);
    tiles.pop_back();           // the whole dim: that is keeping the tensor whole
    while (tiles.size() > 4) {  // at most 4 tile sizes per dim: every other one, 1 kept
      std::vector<int64_t> thinned;
      for (size_t i = 0; i < tiles.size(); i += 2) thinned.push_back(tiles[i]);
      tiles = std::move(thinned);
    }
    for (int64_t tile : tiles) {
      int64_t elements = tile;
      for (size_t e = 0; e < extents.size(); ++e)
        if (e != d) elements = mul_sat(elements, extents[e]);
      TiledRun candidate;
      candidate.tile_bytes = static_cast<double>(tensor_bytes(first, elements));
      int64_t total = 0;
      bool fits = true;
      for (size_t j = 0; j < run.size() && fits; ++j) {
        const Frontier& f =
            memo_frontier(run[j]->problem, run[j]->signature, masks[j] | run[j]->pinned,
                          OuterTiling{{dims[j][d]}, {tile}});
        const auto c = min_dram_bytes(
            f, capacities[j] - static_cast<double>(pinned[j]) - candidate.tile_bytes);
        if (!c) fits = false;
        if (fits) {
          candidate.costs.push_back(*c + pinned[j]);
          total += *c + pinned[j];
        }
      }
      if (fits && (!best || total < best_total)) {
        best = std::move(candidate);
        best_total = total;
      }
    }
  }
  return best;
}

// Greedy residency over `steps` at `capacity` (docs/sol-modes.md). `graph_scope`: tensors
// must reach DRAM at the end only if they are graph outputs; otherwise (one node) every graph
// tensor the steps write must.
int64_t residency_bytes(Steps& st, double capacity, bool graph_scope) {
  const size_t n = st.steps.size();
  std::vector<StepState> state(n);
  std::vector<char> locked(n, 0);  // in a tiled pair: takes part in nothing else
  std::vector<double> reserved(n, 0.0);
  std::vector<int64_t> cost(n, 0);
  for (size_t i = 0; i < n; ++i) cost[i] = *step_bytes(st.steps[i], state[i], capacity, true);
  // The steps touching each key, in order, and whether any writes it.
  std::vector<std::vector<size_t>> touches(st.keys.size());
  std::vector<char> written(st.keys.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    const Step& s = st.steps[i];
    std::vector<int> keys = s.keys;
    if (s.fixed)
      for (const auto& kb : s.fixed_traffic) keys.push_back(kb.first);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (int k : keys) touches[static_cast<size_t>(k)].push_back(i);
    if (!s.fixed) written[static_cast<size_t>(s.keys.back())] = 1;
    for (size_t j = s.fixed_inputs; s.fixed && j < s.fixed_traffic.size(); ++j)
      written[static_cast<size_t>(s.fixed_traffic[j].first)] = 1;
  }
  std::vector<int> candidates;
  for (size_t k = 0; k < st.keys.size(); ++k)
    if (touches[k].size() >= 2) candidates.push_back(static_cast<int>(k));
  std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
    return touches[static_cast<size_t>(a)].front() < touches[static_cast<size_t>(b)].front();
  });
  int64_t residency = 0;
  std::vector<StepState> next_state;
  std::vector<int64_t> next_cost;
  for (int k : candidates) {
    const Key& key = st.keys[static_cast<size_t>(k)];
    const std::vector<size_t>& at = touches[static_cast<size_t>(k)];
    const size_t first = at.front(), last = at.back();
    const bool read_in = st.steps[first].reads_first(k);
    const bool write_out =
        graph_scope ? key.graph_output : (key.graph_tensor && written[static_cast<size_t>(k)]);
    const int64_t read_cost = read_in ? key.bytes : 0;
    const double size = static_cast<double>(key.bytes);
    auto is_locked = [&](size_t from, size_t to) {
      for (size_t i = from; i <= to; ++i)
        if (locked[i]) return true;
      return false;
    };
    // Option 1: the whole tensor on chip from its first to its last touch.
    std::optional<int64_t> whole;
    if (size <= capacity && !is_locked(first, last)) {
      int64_t delta = read_cost + (write_out ? key.bytes : 0);
      next_state.assign(state.begin() + static_cast<std::ptrdiff_t>(first),
                        state.begin() + static_cast<std::ptrdiff_t>(last) + 1);
      next_cost.assign(last - first + 1, 0);
      bool fits = true;
      for (size_t i = first; i <= last && fits; ++i) {
        next_state[i - first] = drop_key(st.steps[i], state[i], k);
        auto b =
            step_bytes(st.steps[i], next_state[i - first], capacity - reserved[i] - size, false);
        if (!b) {
          fits = false;
          break;
        }
        next_cost[i - first] = *b;
        delta += *b - cost[i];
      }
      if (fits) whole = delta;
    }
    if (whole && *whole < 0) {
      for (size_t i = first; i <= last; ++i) {
        cost[i] = next_cost[i - first];
        state[i] = std::move(next_state[i - first]);
        reserved[i] += size;
      }
      residency += read_cost + (write_out ? key.bytes : 0);
      continue;
    }
    if (whole) continue;  // it could stay whole but that does not pay
    // Option 2, only when it cannot stay whole: one tile at a time through the run of its
    // first touches (einsum steps, not in another tiled run; steps between that do not
    // touch it are taken to run before or after the run); later touches use DRAM.
    size_t m = 0;
    while (m < at.size() && !locked[at[m]] && !st.steps[at[m]].fixed) ++m;
    if (m < 2) continue;
    std::vector<size_t> lengths = {m};  // the longest run, then a pair
    if (m > 2) lengths.push_back(2);
    for (size_t length : lengths) {
      std::vector<Step*> run;
      std::vector<uint32_t> masks;
      std::vector<double> caps;
      for (size_t j = 0; j < length; ++j) {
        run.push_back(&st.steps[at[j]]);
        masks.push_back(state[at[j]].mask);
        caps.push_back(capacity - reserved[at[j]]);
      }
      const auto tiled = tiled_run(run, k, masks, caps);
      if (!tiled) continue;
      int64_t delta = 0;
      bool run_writes = false;
      for (size_t j = 0; j < length; ++j) {
        delta += tiled->costs[j] - cost[at[j]];
        run_writes = run_writes || st.steps[at[j]].writes(k);
      }
      const int64_t own =
          read_cost + (run_writes && (write_out || at.size() > length) ? key.bytes : 0);
      if (own + delta >= 0) continue;
      for (size_t j = 0; j < length; ++j) {
        const size_t i = at[j];
        cost[i] = tiled->costs[j];
        state[i] = drop_key(st.steps[i], state[i], k);
        reserved[i] += tiled->tile_bytes;
        locked[i] = 1;
      }
      residency += own;
      break;
    }
  }
  int64_t total = residency;
  for (int64_t c : cost) total = add_sat(total, c);
  return total;
}

}  // namespace

int64_t cache_aware_graph_bytes(const Graph& graph, double capacity_bytes) {
  Steps st = build_steps(graph, std::nullopt);
  return residency_bytes(st, capacity_bytes, true);
}

int64_t cache_aware_node_bytes(const Graph& graph, NodeId node, double capacity_bytes) {
  const Node& n = graph.nodes.at(static_cast<size_t>(node));
  if (n.kind == NodeKind::kDataMovement || !n.einsums) return n.bytes();
  Steps st = build_steps(graph, node);
  return residency_bytes(st, capacity_bytes, false);
}

std::vector<double> curve_capacities(const Graph& graph, double platform_capacity_bytes) {
  int64_t total = 0;
  for (const TensorInfo& t : graph.tensors) total = add_sat(total, t.bytes());
  std::vector<double> out;
  double c = 1024.0;
  out.push_back(c);
  while (c < static_cast<double>(total)) {
    c *= 2.0;
    out.push_back(c);
  }
  if (platform_capacity_bytes > 0) out.push_back(platform_capacity_bytes);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<CurvePoint> cache_aware_curve(const Graph& graph,
                                          const std::vector<double>& capacities) {
  Steps st = build_steps(graph, std::nullopt);
  std::vector<CurvePoint> out;
  for (double c : capacities) out.push_back({c, residency_bytes(st, c, true)});
  return out;
}

std::vector<CurvePoint> cache_aware_node_curve(const Graph& graph, NodeId node,
                                               const std::vector<double>& capacities) {
  const Node& n = graph.nodes.at(static_cast<size_t>(node));
  std::vector<CurvePoint> out;
  if (n.kind == NodeKind::kDataMovement || !n.einsums) {
    for (double c : capacities) out.push_back({c, n.bytes()});
    return out;
  }
  Steps st = build_steps(graph, node);
  for (double c : capacities) out.push_back({c, residency_bytes(st, c, false)});
  return out;
}

}  // namespace solar
