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
#include <span>
#include <unordered_map>

#include "solar/base/error.h"
#include "solar/graph/attrs.h"
#include "solar/sol/analysis.h"
#include "solar/sol/io_bound.h"

namespace solar {
namespace {

// The search carries bytes and counts exactly below kSaturated (2^61 - 1) and saturates at
// it, so that sums of saturated terms never wrap; a schedule whose traffic reaches it is
// refused (kind `overflow`), never printed (docs/sol-modes.md).
constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max() / 4;

int64_t mul_sat(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > kSaturated / b) return kSaturated;
  return std::min(a * b, kSaturated);
}

int64_t add_sat(int64_t a, int64_t b) { return std::min(a + b, kSaturated); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The refusal of a quantity the search cannot carry exactly (`what` reaches kSaturated).
UserError search_overflow(const std::string& file, Loc loc, const std::string& what) {
  return UserError(ErrorKind::kOverflow, file, loc,
                   what + " reach 2^61 - 1 = " + std::to_string(kSaturated) +
                       ", the most the best-schedule search carries exactly",
                   "the cache-aware search refuses sizes it cannot represent; lower the sizes "
                   "(--dim NAME=N) or leave the cache-aware mode out (--no-cache-aware)");
}

// Bytes of `elements` values of a tensor (bits per element, density), rounded up; kSaturated
// when they reach it. Dense: (8q + r) elements are q * bits + ceil(r * bits / 8) bytes, so
// elements * bits (8x the bytes) is never formed and a saturated product is never divided.
int64_t tensor_bytes(const TileTensor& t, int64_t elements) {
  if (elements >= kSaturated) return kSaturated;
  if (t.density >= 1.0)
    return add_sat(mul_sat(elements / 8, t.bits), (elements % 8 * t.bits + 7) / 8);
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
  int64_t persistent_bytes = 0;  // tensors no loop indexes: held while the whole nest runs
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
    const int64_t tile_bytes = tensor_bytes(p.tensors[i], tt.tile_elements);
    c.buffer_bytes = add_sat(c.buffer_bytes, tile_bytes);
    if (rel == 0) c.persistent_bytes = add_sat(c.persistent_bytes, tile_bytes);
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
// best_order's tables, reused between its calls (one search's).
struct OrderScratch {
  std::vector<int64_t> cost, product, closing;
  std::vector<int> choice;
};

std::pair<int64_t, std::vector<int>> best_order(const TilingProblem& p, const TilingCosts& c,
                                                uint32_t excluded, const OuterTiling& outer,
                                                OrderScratch& scratch) {
  const size_t k = c.loops.size();
  const size_t subsets = size_t{1} << k;
  // The constrained loops, innermost first, and the mask of the free ones.
  std::vector<size_t> sequence;
  for (size_t j = outer.ranks.size(); j-- > 0;)
    for (size_t l = 0; l < k; ++l)
      if (c.loops[l] == outer.ranks[j]) sequence.push_back(l);
  size_t free_mask = subsets - 1;
  for (size_t l : sequence) free_mask &= ~(size_t{1} << l);
  std::vector<int64_t>& cost = scratch.cost;
  std::vector<int64_t>& product = scratch.product;
  std::vector<int>& choice = scratch.choice;
  cost.assign(subsets, kSaturated + 1);
  product.assign(subsets, 1);
  choice.assign(subsets, -1);
  for (size_t s = 1; s < subsets; ++s) {
    const size_t low = static_cast<size_t>(__builtin_ctzll(s));
    product[s] = mul_sat(product[s & (s - 1)], c.trips[low]);
  }
  cost[0] = 0;
  const size_t n = p.tensors.size();
  std::vector<int64_t>& closing = scratch.closing;  // traffic of tensor t closed on top of s
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
  if (size <= 1) return {1};
  // Divisors of small sizes (O(sqrt size) <= 256 steps); above, only those up to 64.
  constexpr int64_t kAllDivisorsUpTo = int64_t{1} << 16;
  const int64_t divisor_limit = size <= kAllDivisorsUpTo ? size : 64;
  for (int64_t d = 1; d <= divisor_limit && d <= size / d; ++d) {
    if (size % d == 0) {
      out.push_back(d);
      out.push_back(size / d);
    }
  }
  // Powers of two below the size and ceil(size / 2^k): 2 x 63 values at most, no overflow.
  for (int k = 0; k < 63; ++k) {
    const int64_t p = int64_t{1} << k;
    if (p >= size) break;
    out.push_back(p);
    out.push_back(size / p + (size % p != 0 ? 1 : 0));
  }
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
  // Trip counts are products of sizes, and divided by one another: all of them exact.
  int64_t points = 1;
  for (int64_t size : p.sizes) points = mul_sat(points, size);
  if (points >= kSaturated)
    throw search_overflow(
        graph.source, node.loc,
        "node '" + node.name + "': the iterations of einsum '" + einsum.text + "'");
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
    // A view made by `broadcast`: per output dim the input dim it reads, or -1 (empty when
    // the operand is no broadcast).
    std::span<const int64_t> broadcast;
    if (info && info->producer != kNoNode) {
      const Node& producer = graph.nodes.at(static_cast<size_t>(info->producer));
      if (producer.builtin == Builtin::kBroadcast) {
        broadcast = DimMapAttrs::of(producer).from;
        if (broadcast.size() != info->shape.size()) broadcast = {};
      }
    }
    for (size_t d = 0; d < op.projection.size(); ++d) {
      std::vector<TileTerm> terms;
      int64_t span = 1;
      for (const ProjectionTerm& term : op.projection[d]) {
        auto size = full_size.find(term.rank);
        SOLAR_INTERNAL_CHECK(size != full_size.end(), "einsum '" + einsum.text + "' of node '" +
                                                          node.name + "' indexes unknown rank '" +
                                                          term.rank + "'");
        span = add_sat(span, mul_sat(std::abs(term.coefficient), size->second - 1));
        auto it = rank_index.find(term.rank);
        if (it == rank_index.end() || term.coefficient == 0) continue;
        terms.push_back({it->second, term.coefficient});
      }
      int64_t extent = span;
      if (info && d < info->shape.size()) extent = std::min(span, info->shape[d]);
      if (d < broadcast.size() && broadcast[d] < 0) {
        terms.clear();  // a broadcast dim of a view: every index reads the same element
        extent = 1;
      }
      t.dims.push_back(std::move(terms));
      t.extents.push_back(std::max<int64_t>(extent, 1));
      t.offsets.push_back(d < op.offsets.size() ? op.offsets[d] : 0);
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
  OrderScratch scratch;
  for (const Candidate& c : all) {
    if (c.lower_bound >= best) continue;
    decode(c.ordinal);
    const std::vector<int64_t> used = no_ranks ? std::vector<int64_t>{} : tiles;
    const TilingCosts costs =
        tiling_costs(problem, used, excluded, [&](size_t t) { return tables.tile(t, at, used); });
    auto [dram, order] = best_order(problem, costs, excluded, outer, scratch);
    if (dram >= best) continue;  // dominated by a smaller buffer already found
    best = dram;
    points.push_back({costs.buffer_bytes, dram, used, std::move(order), costs.persistent_bytes});
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
    int64_t buffer = 0, persistent = 0;
    std::vector<TensorTiling> per_tensor;
    uint32_t looping = 0;
    for (int r : loops) looping |= 1u << r;
    for (size_t i = 0; i < problem.tensors.size(); ++i) {
      per_tensor.push_back(tile_tensor(problem.tensors[i], problem.sizes, tiles));
      if (excluded & (1u << i)) continue;
      const int64_t bytes = tensor_bytes(problem.tensors[i], per_tensor.back().tile_elements);
      buffer += bytes;
      if ((per_tensor.back().relevant & looping) == 0) persistent += bytes;
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
      points.push_back({buffer, dram, tiles, loops, persistent});
    } while (std::next_permutation(loops.begin(), loops.end()));
  });
  return pareto(std::move(points));
}

namespace {

std::string outer_key(const OuterTiling& outer) {
  std::string s;
  for (size_t j = 0; j < outer.ranks.size(); ++j)
    s += std::to_string(outer.ranks[j]) + ":" + std::to_string(outer.tiles[j]) + ",";
  return s;
}

}  // namespace

struct TilingMemo::Impl {
  mutable std::mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<Frontier>> frontiers;
  MemoStats stats;
};

TilingMemo::TilingMemo() : impl_(std::make_unique<Impl>()) {}
TilingMemo::~TilingMemo() = default;

const Frontier& TilingMemo::frontier(const TilingProblem& problem, const std::string& signature,
                                     uint32_t excluded, const OuterTiling& outer) {
  const std::string key = std::to_string(excluded) + "#" + outer_key(outer) + "#" + signature;
  Impl& m = *impl_;
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

const Frontier& TilingMemo::frontier(const TilingProblem& problem, uint32_t excluded,
                                     const OuterTiling& outer) {
  return frontier(problem, problem_signature(problem), excluded, outer);
}

MemoStats TilingMemo::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

void TilingMemo::clear() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->frontiers.clear();
  impl_->stats = {};
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

const TilingPoint* best_point(const Frontier& frontier, double capacity_bytes) {
  auto it = std::upper_bound(
      frontier.begin(), frontier.end(), capacity_bytes,
      [](double cap, const TilingPoint& p) { return cap < static_cast<double>(p.buffer_bytes); });
  return it == frontier.begin() ? nullptr : &*std::prev(it);
}

// --- the best schedule found ------------------------------------------------------------------

namespace {

// Longest span (in steps) of a tensor kept whole, and longest run of fused steps: both keep
// the graph pass linear in the number of steps.
constexpr size_t kWholeWindow = 64;
constexpr size_t kMaxGroup = 16;
// Tile sizes tried for the dim a fused run tiles.
constexpr size_t kGroupTiles = 4;
// A schedule is also sought at C / 2 and C / 4 (CacheSchedules::graph_bytes).
constexpr int kSmallerCapacities = 3;

// One tensor (a graph storage or a kernel-local) as residency sees it.
struct Key {
  int64_t bytes = 0;
  bool graph_output = false;  // must be in DRAM at the end of the graph
  bool graph_tensor = false;  // not kernel-local: must be in DRAM after its node
};

// The rank of each dim of tensor `t` (-1 for a dim no rank of size > 1 indexes) when every
// dim is one rank with coefficient 1 and offset 0 that covers the dim's extent; nullopt
// otherwise.
std::optional<std::vector<int>> plain_dims(const TilingProblem& p, const TileTensor& t) {
  std::vector<int> out;
  for (size_t d = 0; d < t.dims.size(); ++d) {
    if (d < t.offsets.size() && t.offsets[d] != 0) return std::nullopt;
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

// One einsum problem shared by the steps whose nests are equal (the same lifted nest, operand
// dtypes, densities, views and initialisation): its frontiers are looked up once.
struct ProblemClass {
  TilingProblem problem;
  std::string signature;
  std::vector<std::optional<std::vector<int>>> plain;  // per tensor: plain_dims
  std::vector<int64_t> full_bytes;                     // per tensor: its whole footprint
  // (mask, rank, tile) -> frontier of the process-wide memo.
  struct Lookup {
    uint32_t mask;
    int rank;
    int64_t tile;
    bool operator==(const Lookup&) const = default;
  };
  struct LookupHash {
    size_t operator()(const Lookup& l) const {
      return std::hash<uint64_t>()((uint64_t{l.mask} << 32) ^ static_cast<uint64_t>(l.rank + 1) ^
                                   (static_cast<uint64_t>(l.tile) * 0x9E3779B97F4A7C15ull));
    }
  };
  std::unordered_map<Lookup, const Frontier*, LookupHash> frontiers;
  TilingMemo& memo;

  ProblemClass(TilingProblem p, TilingMemo& m) : problem(std::move(p)), memo(m) {
    signature = problem_signature(problem);
    for (const TileTensor& t : problem.tensors) {
      plain.push_back(plain_dims(problem, t));
      full_bytes.push_back(
          tensor_bytes(t, tile_tensor(t, problem.sizes, problem.sizes).tile_elements));
    }
  }
  // Tensors `mask` on chip elsewhere; rank >= 0: that rank tiled by `tile`, its loop outermost.
  const Frontier& frontier(uint32_t mask, int rank = -1, int64_t tile = 0) {
    const Lookup key{mask, rank, tile};
    if (auto it = frontiers.find(key); it != frontiers.end()) return *it->second;
    const OuterTiling outer = rank >= 0 ? OuterTiling{{rank}, {tile}} : OuterTiling{};
    const Frontier& f = memo.frontier(problem, signature, mask, outer);
    frontiers.emplace(key, &f);
    return f;
  }
};

// One step of the sequence: an einsum nest, or a data-movement node with fixed traffic.
struct Step {
  NodeId node = 0;
  ProblemClass* cls = nullptr;  // einsum nests
  // Inline, as are fixed_traffic's: a graph has about a step per node, and building the
  // steps made 3.8 heap blocks a node before (0.2 after, with the reused per-node scratch of
  // build_steps), a third of the time of CacheSchedules' constructor.
  SmallVec<int, 4> keys;  // nest: per problem tensor
  bool fixed = false;
  SmallVec<std::pair<int, int64_t>, 3> fixed_traffic;  // data movement: (key, bytes)
  size_t fixed_inputs = 0;  // fixed_traffic[0, fixed_inputs) are reads, the rest writes
  // Inputs read through a view larger than its storage (a broadcast the projection cannot
  // show, e.g. reshaped after broadcasting): held on chip whole, read once at storage size.
  uint32_t pinned = 0;
  std::vector<int64_t> pinned_bytes;  // per problem tensor (0 if not pinned)

  const TilingProblem& problem() const { return cls->problem; }
  // Whether the first thing this step does with key k is a read.
  bool reads_first(int k) const {
    if (fixed) {
      for (size_t j = 0; j < fixed_traffic.size(); ++j)
        if (fixed_traffic[j].first == k) return j < fixed_inputs;  // reads are listed first
      return false;
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] != k) continue;
      const TileTensor& t = problem().tensors[i];
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
  // Bytes of the pinned inputs that `mask` does not already keep on chip.
  int64_t pinned_read(uint32_t mask) const {
    int64_t total = 0;
    for (size_t i = 0; i < pinned_bytes.size(); ++i)
      if ((pinned & (1u << i)) && !(mask & (1u << i))) total += pinned_bytes[i];
    return total;
  }
};

struct Steps {
  std::vector<Key> keys;
  std::vector<Step> steps;
  // Per key: the steps touching it, ascending, and whether any writes it.
  // Per key: the steps touching it, ascending (CSR: touch_steps[touch_start[k], ...[k + 1])),
  // and whether any writes it.
  std::vector<size_t> touch_start, touch_steps;
  std::vector<char> written;
  std::span<const size_t> touches(size_t k) const {
    return {touch_steps.data() + touch_start[k], touch_start[k + 1] - touch_start[k]};
  }
  std::vector<std::pair<size_t, size_t>> node_steps;  // per node: its steps [first, last)
};

// Fills the touch lists and Steps::written from the steps.
void index_steps(Steps& out) {
  const size_t nk = out.keys.size();
  out.written.assign(nk, 0);
  std::vector<size_t> count(nk, 0), last(nk, SIZE_MAX);
  auto each_key = [&](const Step& s, auto fn) {
    for (int k : s.keys) fn(static_cast<size_t>(k));
    for (const auto& kb : s.fixed_traffic) fn(static_cast<size_t>(kb.first));
  };
  for (size_t i = 0; i < out.steps.size(); ++i) {
    each_key(out.steps[i], [&](size_t k) {
      if (last[k] != i) ++count[k], last[k] = i;
    });
  }
  out.touch_start.assign(out.keys.size() + 1, 0);
  for (size_t k = 0; k < nk; ++k) out.touch_start[k + 1] = out.touch_start[k] + count[k];
  out.touch_steps.assign(out.touch_start[nk], 0);
  std::fill(last.begin(), last.end(), SIZE_MAX);
  std::vector<size_t> at(nk);
  for (size_t k = 0; k < nk; ++k) at[k] = out.touch_start[k];
  for (size_t i = 0; i < out.steps.size(); ++i) {
    const Step& s = out.steps[i];
    each_key(s, [&](size_t k) {
      if (last[k] != i) out.touch_steps[at[k]++] = i, last[k] = i;
    });
    if (!s.fixed) out.written[static_cast<size_t>(s.keys.back())] = 1;
    for (size_t j = s.fixed_inputs; s.fixed && j < s.fixed_traffic.size(); ++j)
      out.written[static_cast<size_t>(s.fixed_traffic[j].first)] = 1;
  }
}

// sub_key's working vectors, reused between its calls (a schedule's): a hit allocates nothing.
struct SubKeyScratch {
  std::vector<std::pair<int, int>> remap;
  std::vector<char> written;
};

// A text that identifies the schedule of the steps [first, last) of `all` taken alone (one
// node): their classes, pinned inputs and keys renumbered in order of first use, and the
// keys' bytes, kinds and whether the steps write them.
void sub_key(const Steps& all, size_t first, size_t last, SubKeyScratch& scratch,
             std::string* memo) {
  std::vector<std::pair<int, int>>& remap = scratch.remap;
  remap.clear();
  std::vector<char>& written = scratch.written;
  written.clear();
  auto key = [&](int k) {
    for (const auto& [from, to] : remap)
      if (from == k) return to;
    remap.emplace_back(k, static_cast<int>(remap.size()));
    written.push_back(0);
    return static_cast<int>(remap.size()) - 1;
  };
  auto put = [&](const auto& v) { memo->append(reinterpret_cast<const char*>(&v), sizeof v); };
  for (size_t i = first; i < last; ++i) {
    const Step& s = all.steps[i];
    put(s.cls);
    put(s.pinned);
    for (int k : s.keys) put(key(k));
    for (const auto& [k, b] : s.fixed_traffic) put(key(k)), put(b);
    if (!s.fixed) written[static_cast<size_t>(key(s.keys.back()))] = 1;
    for (size_t j = s.fixed_inputs; s.fixed && j < s.fixed_traffic.size(); ++j)
      written[static_cast<size_t>(key(s.fixed_traffic[j].first))] = 1;
    memo->push_back(';');
  }
  for (size_t k = 0; k < remap.size(); ++k) {
    const Key& kk = all.keys[static_cast<size_t>(remap[k].first)];
    put(kk.bytes);
    memo->push_back(kk.graph_tensor ? 'g' : 'l');
    memo->push_back(written[k] ? 'w' : '-');
  }
}

// The steps [first, last) of `all` as a sequence of their own (one node alone), keys
// renumbered in order of first use.
Steps sub_steps(const Steps& all, size_t first, size_t last) {
  Steps out;
  std::vector<std::pair<int, int>> remap;
  auto key = [&](int k) {
    for (const auto& [from, to] : remap)
      if (from == k) return to;
    remap.emplace_back(k, static_cast<int>(out.keys.size()));
    out.keys.push_back(all.keys[static_cast<size_t>(k)]);
    return static_cast<int>(out.keys.size()) - 1;
  };
  for (size_t i = first; i < last; ++i) {
    Step s = all.steps[i];
    for (int& k : s.keys) k = key(k);
    for (auto& kb : s.fixed_traffic) kb.first = key(kb.first);
    out.steps.push_back(std::move(s));
  }
  index_steps(out);
  return out;
}

// --- building the steps ------------------------------------------------------------------------

// Interns problem classes: the key is what tiling_problem reads of the graph for one nest.
// Calls that share lifted einsums have equal shapes, dtypes and sparsities (the tracer's lift
// key), so the nest, its initialisation and the broadcast views among its operands suffice.
class ClassTable {
 public:
  explicit ClassTable(TilingMemo& memo) : memo_(memo) {}
  ProblemClass* get(const Graph& graph, const Node& node, const Einsum& e, bool initialized) {
    key_.clear();
    auto put = [&](const auto& v) { key_.append(reinterpret_cast<const char*>(&v), sizeof v); };
    const Einsum* ptr = &e;
    put(ptr);
    key_.push_back(initialized ? 'z' : '-');
    auto operand = [&](const Operand& op) {
      const TensorId id = node.operand_tensor(op);
      if (id < 0) return;
      const TensorInfo& info = graph.tensors[static_cast<size_t>(id)];
      if (info.producer == kNoNode) return;
      const Node& producer = graph.nodes[static_cast<size_t>(info.producer)];
      if (producer.builtin != Builtin::kBroadcast) return;
      put(op.slot);
      for (int64_t a : producer.attrs) put(a);
    };
    for (const Operand& op : e.inputs) operand(op);
    operand(e.output);
    auto it = index_.find(key_);
    if (it != index_.end()) return it->second;
    classes_.push_back(
        std::make_unique<ProblemClass>(tiling_problem(graph, node, e, initialized), memo_));
    index_.emplace(key_, classes_.back().get());
    return classes_.back().get();
  }

 private:
  TilingMemo& memo_;
  std::string key_;  // reused: a hit allocates nothing
  std::unordered_map<std::string, ProblemClass*> index_;
  std::vector<std::unique_ptr<ProblemClass>> classes_;
};

// The nests of `graph` in execution order, one node at a time: add every node in execution
// order, then take the steps.
class StepsBuilder {
 public:
  StepsBuilder(const Graph& graph, ClassTable& classes, std::vector<char> is_output)
      : graph_(graph),
        classes_(classes),
        is_output_(std::move(is_output)),
        graph_key_(graph.tensors.size(), -1) {
    // About a step and two keys per node: reserved, so that the arrays do not grow by
    // copying (a 40,000-node graph's steps are megabytes, copied from memory rather than the
    // cache).
    out_.steps.reserve(graph.nodes.size());
    out_.node_steps.reserve(graph.nodes.size());
    out_.keys.reserve(graph.tensors.size());
  }

  void add(const Node& node) {
    // node_steps is indexed by node id: the nodes come in order, each once.
    SOLAR_INTERNAL_CHECK(static_cast<size_t>(node.id) == out_.node_steps.size(),
                         "node '" + node.name + "' added to the schedules out of order");
    const size_t first = out_.steps.size();
    add_steps(node);
    out_.node_steps.emplace_back(first, out_.steps.size());
  }

  Steps take() && {
    index_steps(out_);
    return std::move(out_);
  }

 private:
  // The key of graph tensor `t`'s storage, made on first use.
  int storage(TensorId t) {
    const TensorId id = graph_.tensors.at(static_cast<size_t>(t)).storage;
    int& key = graph_key_[static_cast<size_t>(id)];
    if (key < 0) {
      key = static_cast<int>(out_.keys.size());
      Key k;
      k.bytes = graph_.tensors[static_cast<size_t>(id)].bytes();
      k.graph_tensor = true;
      k.graph_output = is_output_[static_cast<size_t>(id)] != 0;
      out_.keys.push_back(k);
    }
    return key;
  }

  void add_steps(const Node& node) {
    const Graph& graph = graph_;
    if (node.kind == NodeKind::kDataMovement || !node.einsums) {
      if (node.bytes() == 0) return;  // a view moves nothing
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
      out_.steps.push_back(std::move(s));
      return;
    }
    local_key_.clear();
    written_slots_.clear();
    for (const Einsum& e : *node.einsums) {
      auto key_of = [&](const Operand& op) {
        const TensorId id = node.operand_tensor(op);
        if (id >= 0) return storage(id);
        for (const auto& [slot, k] : local_key_)
          if (slot == op.slot) return k;
        const int k = static_cast<int>(out_.keys.size());
        out_.keys.push_back(Key{});
        local_key_.emplace_back(op.slot, k);
        return k;
      };
      const bool initialized = std::find(written_slots_.begin(), written_slots_.end(),
                                         e.output.slot) != written_slots_.end();
      if (!initialized) written_slots_.push_back(e.output.slot);
      Step s;
      s.node = node.id;
      s.cls = classes_.get(graph, node, e, initialized);
      for (const Operand& op : e.inputs) s.keys.push_back(key_of(op));
      s.keys.push_back(key_of(e.output));
      // A local's size: its full footprint in the nest that touches it. An input whose
      // footprint exceeds its storage is pinned.
      for (size_t i = 0; i < s.keys.size(); ++i) {
        Key& k = out_.keys[static_cast<size_t>(s.keys[i])];
        const int64_t full = s.cls->full_bytes[i];
        if (k.graph_tensor) {
          if (s.problem().tensors[i].is_output || s.keys.size() > 31) continue;
          if (full > k.bytes) {
            s.pinned |= 1u << i;
            s.pinned_bytes.resize(s.keys.size(), 0);
            s.pinned_bytes[i] = k.bytes;
          }
          continue;
        }
        k.bytes = std::max(k.bytes, full);
      }
      out_.steps.push_back(std::move(s));
    }
    add_unnested(node);
  }

  // The tensors a kernel node reads or writes outside its nests (the scales a quantisation
  // recipe adds, sol/quantize.h): one fixed step after its nests, as data movement is.
  void add_unnested(const Node& node) {
    auto nested = [&](TensorId t) {
      return std::find(node.slot_tensors.begin(), node.slot_tensors.end(), t) !=
             node.slot_tensors.end();
    };
    Step s;
    s.node = node.id;
    s.fixed = true;
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (!nested(node.inputs[i]) && node.input_bytes[i] > 0)
        s.fixed_traffic.emplace_back(storage(node.inputs[i]), node.input_bytes[i]);
    s.fixed_inputs = s.fixed_traffic.size();
    for (TensorId t : node.outputs)
      if (!nested(t)) s.fixed_traffic.emplace_back(storage(t), graph_.tensors[t].bytes());
    if (!s.fixed_traffic.empty()) out_.steps.push_back(std::move(s));
  }

  const Graph& graph_;
  ClassTable& classes_;
  const std::vector<char> is_output_;
  Steps out_;
  std::vector<int> graph_key_;  // storage -> key, -1 until made
  // Per node: kernel slot -> key, and the slots its nests have written (reused: one heap
  // block for the whole graph).
  std::vector<std::pair<int, int>> local_key_;
  std::vector<int> written_slots_;
};

// --- one schedule ------------------------------------------------------------------------------

// A run of consecutive einsum steps fused tile by tile: one rank per step (the same dim of
// every tensor they share), tiled by `tile` with its loop outermost; each outer tile runs the
// steps one after another. `internal` keys stay on chip one tile at a time.
struct Group {
  size_t first = 0, last = 0;  // steps [first, last]
  std::vector<int> rank;       // per step of the run
  int64_t tile = 0;
  struct Internal {
    int key;
    int64_t rest_elements;     // elements of one tile per unit of the tiled dim
    const TileTensor* layout;  // the first operand touching it (its bits, density)
    bool read_once;            // its first touch in the run reads it: one read of the whole tensor
    bool write_once;           // written in the run and needed after it: one write
  };
  std::vector<Internal> internal;
  std::vector<uint32_t> masks;  // per step: the operands of internal keys
  int64_t cost = 0;             // traffic of its steps and internal keys
};

class Schedule {
 public:
  Schedule(Steps& st, double capacity, bool graph_scope)
      : st_(st), cap_(capacity), graph_scope_(graph_scope), n_(st.steps.size()) {}

  std::optional<int64_t> run() {
    mask_.assign(n_, 0);
    reserved_.assign(n_, 0.0);
    starts_.assign(n_, 0.0);
    cost_.assign(n_, 0);
    dropped_.assign(n_, {});
    current_.assign(n_, {0, nullptr});
    for (size_t i = 0; i < n_; ++i) {
      auto c = cost_with(i, 0, -1, cap_);
      if (!c) return std::nullopt;  // this nest has no tiling that fits at all
      cost_[i] = *c;
    }
    whole();
    fuse();
    int64_t total = extra_;
    for (int64_t c : cost_) total = add_sat(total, c);
    return total;
  }

 private:
  Steps& st_;
  double cap_;
  bool graph_scope_;
  size_t n_;
  std::vector<uint32_t> mask_;    // per step: tensors kept whole elsewhere (no traffic here)
  std::vector<double> reserved_;  // per step: bytes of the tensors kept whole over it
  std::vector<double> starts_;    // per step: bytes of the whole tensors whose span starts here
  std::vector<int64_t> cost_;     // per step (a fused run: its cost on its first step)
  int64_t extra_ = 0;             // reads and writes of the tensors kept on chip
  std::vector<std::vector<int>> dropped_;  // data-movement steps: keys kept whole over them

  // Whether key k must be in DRAM after its last touch.
  bool write_out(int k) const {
    const Key& key = st_.keys[static_cast<size_t>(k)];
    return graph_scope_ ? key.graph_output
                        : (key.graph_tensor && st_.written[static_cast<size_t>(k)]);
  }

  // Traffic of einsum step i alone with the tensors `mask` kept elsewhere and `capacity` for
  // its tiles and pinned inputs; nullopt if no tiling fits. A pinned input that does not fit
  // is read through its view instead (more bytes, but it fits).
  std::optional<int64_t> single(size_t i, uint32_t mask, double capacity) {
    Step& s = st_.steps[i];
    const int64_t pinned = s.pinned_read(mask);
    if (const TilingPoint* p =
            best_point(s.cls->frontier(mask | s.pinned), capacity - static_cast<double>(pinned)))
      return p->dram_bytes + pinned;
    if (s.pinned & ~mask)
      if (const TilingPoint* p = best_point(s.cls->frontier(mask), capacity)) return p->dram_bytes;
    return std::nullopt;
  }

  // Step i with its current mask at a smaller `capacity` (its frontier looked up once).
  std::optional<int64_t> same_mask(size_t i, double capacity) {
    Step& s = st_.steps[i];
    if (s.fixed) return cost_[i];
    if (current_[i].first != mask_[i] || !current_[i].second)
      current_[i] = {mask_[i], &s.cls->frontier(mask_[i] | s.pinned)};
    const int64_t pinned = s.pinned_read(mask_[i]);
    if (const TilingPoint* p =
            best_point(*current_[i].second, capacity - static_cast<double>(pinned)))
      return p->dram_bytes + pinned;
    return single(i, mask_[i], capacity);
  }
  std::vector<std::pair<uint32_t, const Frontier*>> current_;  // per step: its mask's frontier

  // Step i (einsum or data movement) with key k kept whole too (k = -1: none).
  std::optional<int64_t> cost_with(size_t i, uint32_t mask, int k, double capacity) {
    Step& s = st_.steps[i];
    if (!s.fixed) return single(i, mask, capacity);
    int64_t total = 0;
    const auto& gone = dropped_[i];
    for (const auto& [key, bytes] : s.fixed_traffic)
      if (key != k && std::find(gone.begin(), gone.end(), key) == gone.end()) total += bytes;
    return total;
  }

  // --- tensors kept whole --------------------------------------------------------------------

  void whole() {
    std::vector<int> candidates;
    for (size_t k = 0; k < st_.keys.size(); ++k) {
      const auto at = st_.touches(k);
      if (at.size() >= 2 && at.back() - at.front() < kWholeWindow)
        candidates.push_back(static_cast<int>(k));
    }
    std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
      return st_.touches(static_cast<size_t>(a)).front() <
             st_.touches(static_cast<size_t>(b)).front();
    });
    std::vector<int64_t> next(kWholeWindow + 1);
    for (int k : candidates) {
      const Key& key = st_.keys[static_cast<size_t>(k)];
      const auto at = st_.touches(static_cast<size_t>(k));
      const size_t first = at.front(), last = at.back();
      const double size = static_cast<double>(key.bytes);
      if (size > cap_) continue;
      const int64_t own =
          (st_.steps[first].reads_first(k) ? key.bytes : 0) + (write_out(k) ? key.bytes : 0);
      // The steps touching k first (only they can gain), then the others (they only lose
      // capacity), stopping as soon as keeping k cannot pay.
      int64_t delta = own;
      bool fits = true;
      for (size_t i : at) {
        const auto c =
            cost_with(i, mask_[i] | st_.steps[i].mask_of(k), k, cap_ - reserved_[i] - size);
        if (!c) {
          fits = false;
          break;
        }
        next[i - first] = *c;
        delta += *c - cost_[i];
      }
      for (size_t i = first, t = 0; i <= last && fits && delta < 0; ++i) {
        if (t < at.size() && at[t] == i) {
          ++t;
          continue;
        }
        const auto c = same_mask(i, cap_ - reserved_[i] - size);
        if (!c) fits = false;
        if (fits) {
          next[i - first] = *c;
          delta += *c - cost_[i];
        }
      }
      if (!fits || delta >= 0) continue;
      for (size_t i = first; i <= last; ++i) {
        cost_[i] = next[i - first];
        mask_[i] |= st_.steps[i].mask_of(k);
        if (st_.steps[i].fixed) dropped_[i].push_back(k);
        reserved_[i] += size;
      }
      starts_[first] += size;
      extra_ = add_sat(extra_, own);
    }
  }

  // --- fused runs ----------------------------------------------------------------------------

  // The dim of the operand (tensor j of step i) that the step's group rank `rank` indexes
  // alone, when the operand is plain; -1 otherwise.
  int tiled_dim(size_t i, size_t j, int rank) const {
    const auto& plain = st_.steps[i].cls->plain[j];
    if (!plain) return -1;
    int found = -1;
    for (size_t d = 0; d < plain->size(); ++d) {
      if ((*plain)[d] != rank) continue;
      if (found >= 0) return -1;  // the rank indexes two dims (a diagonal)
      found = static_cast<int>(d);
    }
    return found;
  }

  // Internal keys and per-step masks of a run, or nullopt when a value produced in the run is
  // read in it by an operand that is not tiled alike (it would need a later tile).
  bool analyse(Group& g) const {
    g.internal.clear();
    g.masks.assign(g.last - g.first + 1, 0);
    std::vector<int> keys;
    for (size_t i = g.first; i <= g.last; ++i)
      for (int k : st_.steps[i].keys) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (int k : keys) {
      int dim = -2;  // -2: not seen yet; -1: not aligned
      std::vector<int64_t> extents;
      int touching = 0;
      size_t writer = g.last + 1, first_touch = g.last + 1;
      bool read_after_write = false;
      for (size_t i = g.first; i <= g.last; ++i) {
        const Step& s = st_.steps[i];
        bool touched = false;
        for (size_t j = 0; j < s.keys.size(); ++j) {
          if (s.keys[j] != k) continue;
          touched = true;
          const TileTensor& t = s.problem().tensors[j];
          const int d = tiled_dim(i, j, g.rank[i - g.first]);
          if (dim == -2) {
            dim = d;
            extents = t.extents;
          } else if (d != dim || t.extents != extents) {
            dim = -1;
          }
          const bool reads = !t.is_output || t.initialized;
          if (reads && writer < i) read_after_write = true;
        }
        if (!touched) continue;
        ++touching;
        first_touch = std::min(first_touch, i);
        if (s.writes(k) && writer > g.last) writer = i;
      }
      if (read_after_write && dim < 0) return false;
      if (touching < 2 || dim < 0) continue;
      const bool kept = (mask_[first_touch] & st_.steps[first_touch].mask_of(k)) != 0;
      if (kept) continue;  // already on chip whole
      Group::Internal in;
      in.key = k;
      in.rest_elements = 1;
      for (size_t e = 0; e < extents.size(); ++e)
        if (static_cast<int>(e) != dim) in.rest_elements = mul_sat(in.rest_elements, extents[e]);
      const Step& s0 = st_.steps[first_touch];
      in.layout = nullptr;
      for (size_t j = 0; j < s0.keys.size() && !in.layout; ++j)
        if (s0.keys[j] == k) in.layout = &s0.problem().tensors[j];
      in.read_once = st_.steps[first_touch].reads_first(k);
      const auto at = st_.touches(static_cast<size_t>(k));
      const bool later = at.back() > g.last;
      in.write_once = writer <= g.last && (later || write_out(k));
      g.internal.push_back(in);
      for (size_t i = g.first; i <= g.last; ++i) g.masks[i - g.first] |= st_.steps[i].mask_of(k);
    }
    return true;
  }

  // Traffic of run `g` with its tile (analyse first); nullopt if it does not fit. Every step's
  // tiles fit beside the whole tensors over the run, the internal tiles and the other steps'
  // persistent tiles (which stay on chip across outer tiles).
  std::optional<int64_t> group_cost(const Group& g) {
    const size_t len = g.last - g.first + 1;
    double reserved = reserved_[g.first];
    for (size_t i = g.first + 1; i <= g.last; ++i) reserved += starts_[i];
    for (const auto& in : g.internal)
      reserved += static_cast<double>(tensor_bytes(*in.layout, mul_sat(g.tile, in.rest_elements)));
    if (reserved >= cap_) return std::nullopt;
    std::vector<const Frontier*> f(len);
    std::vector<int64_t> pin(len), persist(len, 0);
    std::vector<const TilingPoint*> pt(len, nullptr);
    for (size_t j = 0; j < len; ++j) {
      Step& s = st_.steps[g.first + j];
      const uint32_t mask = mask_[g.first + j] | g.masks[j];
      f[j] = &s.cls->frontier(mask | s.pinned, g.rank[j], g.tile);
      pin[j] = s.pinned_read(mask);
    }
    auto choose = [&](auto cap_of) {
      for (size_t j = 0; j < len; ++j) {
        pt[j] = best_point(*f[j], cap_of(j));
        if (!pt[j]) return false;
      }
      return true;
    };
    bool ok = false;
    for (int round = 0; round < 3; ++round) {
      int64_t total = 0;
      for (size_t j = 0; j < len; ++j) total += persist[j];
      if (!choose([&](size_t j) {
            return cap_ - reserved - static_cast<double>(pin[j] + total - persist[j]);
          }))
        break;
      bool same = true;
      for (size_t j = 0; j < len; ++j) {
        const int64_t p = pt[j]->persistent_bytes + pin[j];
        same = same && p == persist[j];
        persist[j] = p;
      }
      int64_t sum = 0;
      for (size_t j = 0; j < len; ++j) sum += persist[j];
      ok = true;
      for (size_t j = 0; j < len && ok; ++j)
        ok =
            reserved + static_cast<double>(pt[j]->buffer_bytes + pin[j] + sum - persist[j]) <= cap_;
      if (ok || same) break;
    }
    if (!ok) {  // an equal share each: the steps' tiles fit side by side
      int64_t pins = 0;
      for (int64_t p : pin) pins += p;
      const double share = (cap_ - reserved - static_cast<double>(pins)) / static_cast<double>(len);
      if (share <= 0 || !choose([&](size_t) { return share; })) return std::nullopt;
    }
    int64_t total = 0;
    for (size_t j = 0; j < len; ++j) total = add_sat(total, add_sat(pt[j]->dram_bytes, pin[j]));
    for (const auto& in : g.internal) {
      const int64_t bytes = st_.keys[static_cast<size_t>(in.key)].bytes;
      if (in.read_once) total = add_sat(total, bytes);
      if (in.write_once) total = add_sat(total, bytes);
    }
    return total;
  }

  // The best tile for run `g` (its ranks set); false if no tile makes a valid run that fits.
  // Tile sizes tried for a fused run over a dim of `extent`: its candidates without the whole
  // dim (that is keeping the tensors whole), thinned to kGroupTiles (every other one, 1 kept).
  const std::vector<int64_t>& group_tiles(int64_t extent) {
    for (const auto& [e, tiles] : tiles_)
      if (e == extent) return tiles;
    std::vector<int64_t> tiles = tile_candidates(extent);
    tiles.pop_back();
    while (tiles.size() > kGroupTiles) {
      std::vector<int64_t> thinned;
      for (size_t i = 0; i < tiles.size(); i += 2) thinned.push_back(tiles[i]);
      tiles = std::move(thinned);
    }
    tiles_.emplace_back(extent, std::move(tiles));
    return tiles_.back().second;
  }
  std::vector<std::pair<int64_t, std::vector<int64_t>>> tiles_;

  bool best_tile(Group& g, int64_t extent) {
    if (!analyse(g)) return false;
    bool found = false;
    Group best;
    for (int64_t tile : group_tiles(extent)) {
      g.tile = tile;
      const auto c = group_cost(g);
      if (c && (!found || *c < best.cost)) {
        best = g;
        best.cost = *c;
        found = true;
      }
    }
    if (found) g = std::move(best);
    return found;
  }

  // Candidate ranks for step j joining run g: for a key it shares with the run, the rank of j
  // that indexes the dim the run tiles. For a run of one step, every dim both index plainly.
  std::vector<std::pair<int, int>> join_ranks(const Group& g, size_t j) const {
    std::vector<std::pair<int, int>> out;  // (rank of the run's first step, rank of j)
    const Step& s = st_.steps[j];
    for (size_t b = 0; b < s.keys.size(); ++b) {
      const int k = s.keys[b];
      const auto& pj = s.cls->plain[b];
      // A key kept whole already moves nothing: fusing over it cannot lower the traffic.
      if (!pj || (mask_[j] & (1u << b))) continue;
      for (size_t i = g.first; i <= g.last; ++i) {
        const Step& r = st_.steps[i];
        for (size_t a = 0; a < r.keys.size(); ++a) {
          if (r.keys[a] != k) continue;
          const auto& pi = r.cls->plain[a];
          if (!pi || pi->size() != pj->size()) continue;
          if (r.problem().tensors[a].extents != s.problem().tensors[b].extents) continue;
          for (size_t d = 0; d < pi->size(); ++d) {
            if ((*pi)[d] < 0 || (*pj)[d] < 0) continue;
            if (g.first == g.last) {
              out.emplace_back((*pi)[d], (*pj)[d]);
            } else if ((*pi)[d] == g.rank[i - g.first]) {
              out.emplace_back(g.rank[0], (*pj)[d]);
            }
          }
        }
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  void fuse() {
    size_t i = 0;
    while (i < n_) {
      if (st_.steps[i].fixed) {
        ++i;
        continue;
      }
      Group g;
      g.first = g.last = i;
      g.cost = cost_[i];
      size_t j = i + 1;
      for (; j < n_ && j - i < kMaxGroup && !st_.steps[j].fixed; ++j) {
        const int64_t apart = add_sat(g.cost, cost_[j]);
        bool joined = false;
        Group best;
        for (const auto& [rank0, rank_j] : join_ranks(g, j)) {
          Group c = g;
          c.last = j;
          if (g.first == g.last) c.rank = {rank0};
          c.rank.push_back(rank_j);
          const int64_t extent = st_.steps[j].problem().sizes[static_cast<size_t>(rank_j)];
          if (extent != st_.steps[g.first].problem().sizes[static_cast<size_t>(c.rank[0])])
            continue;
          if (!best_tile(c, extent) || c.cost >= apart) continue;
          if (!joined || c.cost < best.cost) {
            best = std::move(c);
            joined = true;
          }
        }
        if (!joined) break;
        g = std::move(best);
      }
      if (g.last > g.first) {
        for (size_t s = g.first; s <= g.last; ++s) cost_[s] = 0;
        cost_[g.first] = g.cost;
      }
      i = g.last + 1;
    }
  }
};

std::vector<char> output_storages(const Graph& graph) {
  std::vector<char> out(graph.tensors.size(), 0);
  for (TensorId t : graph.outputs)
    out[static_cast<size_t>(graph.tensors[static_cast<size_t>(t)].storage)] = 1;
  return out;
}

}  // namespace

struct CacheSchedules::State {
  std::optional<TilingMemo> own_memo;  // without the caller's
  ClassTable classes;
  Steps steps;
  // Nodes alone: equal sequences of nests (most nodes of a model repeat) are scheduled once.
  std::unordered_map<std::string, std::optional<int64_t>> node_memo;
  std::string memo_key;
  int64_t fused = 0;  // the graph's compulsory traffic: no schedule moves less
  SubKeyScratch scratch;
  std::optional<StepsBuilder> building;  // until finish
  // Per node: its unfused bytes, and whether it has nests to schedule (a data-movement node
  // or a kernel without nests moves its unfused bytes); kept so that the queries per node
  // need not read the nodes again (a graph larger than the last-level cache would come
  // from memory once more).
  std::vector<int64_t> unfused;
  std::vector<char> scheduled;
  // Where a refused schedule points: the source file, each node's call site and name.
  std::string source;
  std::vector<Loc> locs;
  std::vector<std::string> names;
  State(const Graph& g, TilingMemo* memo)
      : classes(memo ? *memo : own_memo.emplace()),
        unfused(g.nodes.size(), 0),
        scheduled(g.nodes.size(), 0),
        source(g.source),
        locs(g.nodes.size()),
        names(g.nodes.size()) {
    building.emplace(g, classes, output_storages(g));
  }
  // `bytes`, or the overflow error at node `site`'s call site when the search saturated:
  // for the whole graph (`graph_scope`; `site` moves the most) or for that node alone.
  std::optional<int64_t> exact(std::optional<int64_t> bytes, size_t site, bool graph_scope) const {
    if (!bytes || *bytes < kSaturated) return bytes;
    const std::string subject = graph_scope
                                    ? "the graph (node '" + names.at(site) + "' moves the most)"
                                    : "node '" + names.at(site) + "' alone";
    throw search_overflow(source, locs.at(site),
                          subject + ": the DRAM bytes of the best schedule found");
  }
};

CacheSchedules::CacheSchedules(const Graph& graph, Incremental, TilingMemo* memo)
    : state_(std::make_unique<State>(graph, memo)) {}

CacheSchedules::CacheSchedules(const Graph& graph, std::optional<int64_t> fused, TilingMemo* memo)
    : CacheSchedules(graph, Incremental{}, memo) {
  const int64_t f = fused ? *fused : fused_bytes(graph);
  for (const Node& node : graph.nodes) add(node);
  finish(f);
}

CacheSchedules::~CacheSchedules() = default;

void CacheSchedules::add(const Node& node) {
  State& s = *state_;
  SOLAR_INTERNAL_CHECK(s.building, "CacheSchedules::add after finish");
  s.building->add(node);
  const auto i = static_cast<size_t>(node.id);
  s.unfused.at(i) = node.bytes();
  s.scheduled.at(i) = node.kind != NodeKind::kDataMovement && node.einsums;
  s.locs.at(i) = node.loc;
  s.names.at(i) = node.name;
}

void CacheSchedules::finish(int64_t fused) {
  State& s = *state_;
  SOLAR_INTERNAL_CHECK(s.building, "CacheSchedules::finish twice");
  s.fused = fused;
  s.steps = std::move(*s.building).take();
  s.building.reset();
}

// The greedy choices are not monotone in the capacity, but a schedule found for a smaller
// buffer also fits a larger one: the best of those found at C, C/2 and C/4.
// `floor`: traffic no schedule goes below (the compulsory bytes): reaching it ends the search.
static std::optional<int64_t> best_schedule(Steps& steps, double capacity, bool graph_scope,
                                            int64_t floor) {
  std::optional<int64_t> best;
  for (int k = 0; k < kSmallerCapacities && !(best && *best <= floor); ++k) {
    const auto b = Schedule(steps, std::ldexp(capacity, -k), graph_scope).run();
    if (b && (!best || *b < *best)) best = b;
  }
  return best;
}

std::optional<int64_t> CacheSchedules::graph_bytes(double capacity_bytes) {
  const State& s = *state_;
  SOLAR_INTERNAL_CHECK(!s.building, "CacheSchedules queried before finish");
  const auto bytes = best_schedule(state_->steps, capacity_bytes, true, s.fused);
  if (!bytes || *bytes < kSaturated || s.unfused.empty()) return bytes;
  // Saturated: point at the node that moves the most alone.
  const auto most =
      static_cast<size_t>(std::max_element(s.unfused.begin(), s.unfused.end()) - s.unfused.begin());
  return s.exact(bytes, most, /*graph_scope=*/true);
}

std::optional<int64_t> CacheSchedules::node_bytes(NodeId node, double capacity_bytes) {
  State& s = *state_;
  SOLAR_INTERNAL_CHECK(!s.building, "CacheSchedules queried before finish");
  const int64_t unfused = s.unfused.at(static_cast<size_t>(node));
  if (!s.scheduled.at(static_cast<size_t>(node))) return unfused;
  const auto [first, last] = s.steps.node_steps.at(static_cast<size_t>(node));
  s.memo_key.assign(reinterpret_cast<const char*>(&capacity_bytes), sizeof capacity_bytes);
  sub_key(s.steps, first, last, s.scratch, &s.memo_key);
  auto it = s.node_memo.find(s.memo_key);
  if (it != s.node_memo.end())
    return s.exact(it->second, static_cast<size_t>(node), /*graph_scope=*/false);
  Steps st = sub_steps(s.steps, first, last);
  const auto bytes = best_schedule(st, capacity_bytes, false, unfused);
  s.node_memo.emplace(s.memo_key, bytes);
  return s.exact(bytes, static_cast<size_t>(node), /*graph_scope=*/false);
}

std::optional<int64_t> schedule_graph_bytes(const Graph& graph, double capacity_bytes,
                                            TilingMemo* memo) {
  return CacheSchedules(graph, std::nullopt, memo).graph_bytes(capacity_bytes);
}

std::optional<int64_t> schedule_node_bytes(const Graph& graph, NodeId node, double capacity_bytes,
                                           TilingMemo* memo) {
  return CacheSchedules(graph, std::nullopt, memo).node_bytes(node, capacity_bytes);
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

// A schedule found for a smaller capacity fits every larger one: each point keeps the best
// schedule of the points at or below its capacity (the points are ascending).
static void keep_best_below(std::vector<CurvePoint>& points) {
  std::optional<int64_t> best;
  for (CurvePoint& p : points) {
    if (p.schedule_bytes && (!best || *p.schedule_bytes < *best)) best = p.schedule_bytes;
    p.schedule_bytes = best;
  }
}

std::vector<CurvePoint> cache_aware_curve(const Graph& graph, const std::vector<double>& capacities,
                                          TilingMemo* memo) {
  const int64_t fused = fused_bytes(graph);
  CacheSchedules schedules(graph, fused, memo);
  IoBounds bounds(graph, fused);
  std::vector<CurvePoint> out;
  for (double c : capacities) out.push_back({c, bounds.graph_bytes(c), schedules.graph_bytes(c)});
  keep_best_below(out);
  return out;
}

std::vector<std::vector<CurvePoint>> cache_aware_node_curves(const Graph& graph,
                                                             const std::vector<double>& capacities,
                                                             TilingMemo* memo) {
  const int64_t fused = fused_bytes(graph);
  CacheSchedules schedules(graph, fused, memo);
  IoBounds bounds(graph, fused);
  std::vector<std::vector<CurvePoint>> out;
  for (const Node& n : graph.nodes) {
    std::vector<CurvePoint> points;
    for (double c : capacities)
      points.push_back({c, bounds.node_bytes(n.id, c), schedules.node_bytes(n.id, c)});
    keep_best_below(points);
    out.push_back(std::move(points));
  }
  return out;
}

}  // namespace solar
