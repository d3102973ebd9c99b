// The proven lower bound on DRAM traffic at a finite on-chip capacity (docs/sol-modes.md,
// "Cache-aware", "The bound"): per nest a Hong-Kung / HBL segment bound, per graph the largest
// of those and the compulsory traffic.
#include "solar/sol/io_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "solar/base/error.h"
#include "solar/graph/attrs.h"
#include "solar/sol/analysis.h"

namespace solar {
namespace {

using Real = long double;

// Largest number of tensors and of constraint rows for which every vertex of the polytope is
// enumerated (C(rows + tensors, tensors) subsets, each an n x n solve).
constexpr size_t kMaxVertexSubsets = 20000;

// --- the polytope ---------------------------------------------------------------------------

// The rows of the HBL polytope: for each covered rank the set of tensors keeping it (bit j:
// tensor j), minimal sets only (a superset of a row is implied by it).
std::vector<uint64_t> cover_rows(const BoundProblem& p) {
  std::vector<uint64_t> rows;
  for (size_t r = 0; r < p.sizes.size() && r < 64; ++r) {
    uint64_t mask = 0;
    for (size_t j = 0; j < p.tensors.size(); ++j)
      if (p.tensors[j].ranks & (uint64_t{1} << r)) mask |= uint64_t{1} << j;
    if (mask != 0) rows.push_back(mask);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  std::vector<uint64_t> minimal;
  for (uint64_t a : rows) {
    bool implied = false;
    for (uint64_t b : rows)
      if (b != a && (b & a) == b) implied = true;  // b is a proper subset of a
    if (!implied) minimal.push_back(a);
  }
  return minimal;
}

bool feasible(const std::vector<uint64_t>& rows, const std::vector<double>& s) {
  for (double v : s)
    if (!(v >= 0.0)) return false;
  for (uint64_t row : rows) {
    double sum = 0.0;
    for (size_t j = 0; j < s.size(); ++j)
      if (row & (uint64_t{1} << j)) sum += s[j];
    if (!(sum >= 1.0)) return false;
  }
  return true;
}

// `s` made exactly feasible: negatives (rounding) set to 0, then scaled up until every row
// sums to at least 1. Scaling up keeps a vector in the polytope (it is closed upwards).
std::vector<double> repaired(const std::vector<uint64_t>& rows, std::vector<double> s) {
  for (double& v : s) v = std::max(v, 0.0);
  double least = std::numeric_limits<double>::infinity();
  for (uint64_t row : rows) {
    double sum = 0.0;
    for (size_t j = 0; j < s.size(); ++j)
      if (row & (uint64_t{1} << j)) sum += s[j];
    least = std::min(least, sum);
  }
  if (least <= 0.0) return {};
  if (least < 1.0)
    for (double& v : s) v /= least * (1.0 - 1e-15);
  return feasible(rows, s) ? s : std::vector<double>{};
}

// Solves A s = 1 (rows of A: 0/1 masks or unit vectors) by Gaussian elimination; nullopt if
// singular.
std::optional<std::vector<double>> solve(std::vector<std::vector<double>> a,
                                         std::vector<double> b) {
  const size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (std::abs(a[pivot][col]) < 1e-12) return std::nullopt;
    std::swap(a[pivot], a[col]);
    std::swap(b[pivot], b[col]);
    for (size_t r = 0; r < n; ++r) {
      if (r == col || a[r][col] == 0.0) continue;
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c < n; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  std::vector<double> s(n);
  for (size_t i = 0; i < n; ++i) s[i] = b[i] / a[i][i];
  return s;
}

double binomial(size_t n, size_t k) {
  double out = 1.0;
  for (size_t i = 1; i <= k; ++i)
    out = out * static_cast<double>(n - k + i) / static_cast<double>(i);
  return out;
}

void add_unique(std::vector<std::vector<double>>& out, std::vector<double> s) {
  if (s.empty()) return;
  for (const auto& t : out) {
    bool same = true;
    for (size_t j = 0; j < s.size() && same; ++j) same = std::abs(s[j] - t[j]) < 1e-9;
    if (same) return;
  }
  out.push_back(std::move(s));
}

// --- one bound ------------------------------------------------------------------------------

// max prod a_j^{s_j} subject to sum a_j b_j <= budget and 0 <= a_j <= cap_j, as a logarithm
// (water-filling: a_j = min(cap_j, s_j mu / b_j), mu set by the budget). Tensors with s_j = 0
// take a_j = 0. Exact up to rounding; the caller inflates it.
Real log_max_points(const std::vector<double>& s, const std::vector<Real>& bytes,
                    const std::vector<Real>& log_cap, Real budget) {
  std::vector<size_t> order;
  Real weight = 0;
  for (size_t j = 0; j < s.size(); ++j) {
    if (s[j] > 0.0) {
      order.push_back(j);
      weight += s[j];
    }
  }
  // Saturation level of tensor j: the budget per unit weight at which a_j reaches its cap.
  auto level = [&](size_t j) { return std::exp(log_cap[j]) * bytes[j] / static_cast<Real>(s[j]); };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return level(a) < level(b); });
  Real left = budget, log_f = 0;
  size_t i = 0;
  for (; i < order.size(); ++i) {
    const size_t j = order[i];
    if (weight <= 0 || left <= 0) break;
    const Real mu = left / weight;
    if (level(j) > mu) break;
    log_f += static_cast<Real>(s[j]) * log_cap[j];
    left -= std::exp(log_cap[j]) * bytes[j];
    weight -= static_cast<Real>(s[j]);
  }
  if (i < order.size()) {
    if (left <= 0) return -std::numeric_limits<Real>::infinity();
    const Real mu = left / weight;
    for (; i < order.size(); ++i) {
      const size_t j = order[i];
      log_f += static_cast<Real>(s[j]) * std::log(static_cast<Real>(s[j]) * mu / bytes[j]);
    }
  }
  return log_f;
}

EinsumBound evaluate(const BoundProblem& p, const std::vector<std::vector<double>>& candidates,
                     double capacity) {
  EinsumBound best;
  if (!(capacity > 0.0) || p.tensors.empty() || candidates.empty()) return best;
  uint64_t covered = 0;
  for (const BoundTensor& t : p.tensors) covered |= t.ranks;
  Real log_points = 0;
  for (size_t r = 0; r < p.sizes.size() && r < 64; ++r)
    if (covered & (uint64_t{1} << r)) log_points += std::log(static_cast<Real>(p.sizes[r]));
  best.points = static_cast<double>(std::exp(log_points));
  std::vector<Real> bytes, log_cap;
  for (const BoundTensor& t : p.tensors) {
    bytes.push_back(static_cast<Real>(t.bytes_per_element));
    Real lc = 0;
    for (size_t r = 0; r < p.sizes.size() && r < 64; ++r)
      if (t.ranks & (uint64_t{1} << r)) lc += std::log(static_cast<Real>(p.sizes[r]));
    log_cap.push_back(lc);
  }
  const Real c = static_cast<Real>(capacity);
  // Rounding: F_max is inflated by this factor, so the quotient points / F_max can only be
  // rounded down (long double logs and exps are accurate to ~1e-18 relative).
  constexpr Real kSlack = 1e-9L;
  constexpr Real kMaxBytes = static_cast<Real>(std::numeric_limits<int64_t>::max() / 2);
  for (const auto& s : candidates) {
    // Only tensors with s_j > 0 enter the budget: one C per kind (inputs, outputs) among them.
    Real sigma = 0;
    bool inputs = false, outputs = false;
    for (size_t j = 0; j < s.size(); ++j) {
      sigma += static_cast<Real>(s[j]);
      if (s[j] > 0.0) (p.tensors[j].is_output ? outputs : inputs) = true;
    }
    const Real groups = static_cast<Real>(inputs) + static_cast<Real>(outputs);
    std::vector<Real> segments;
    for (int k = -4; k <= 12; ++k) segments.push_back(c * std::pow(2.0L, static_cast<Real>(k) / 2));
    if (sigma > 1) segments.push_back(std::max(groups, Real{1}) * c / (sigma - 1));
    for (Real m : segments) {
      const Real log_f = std::min(log_max_points(s, bytes, log_cap, groups * c + m), log_points);
      const Real quotient = std::exp(log_points - log_f) / (1 + kSlack);
      const Real k = std::ceil(quotient);
      if (!(k >= 2)) continue;
      const Real q = std::min(std::floor(m * (k - 1)), kMaxBytes);
      if (q > static_cast<Real>(best.bytes)) {
        best.bytes = static_cast<int64_t>(q);
        best.segment_bytes = static_cast<double>(m);
        best.max_points = static_cast<double>(std::exp(log_f));
        best.weights = s;
      }
    }
  }
  return best;
}

// --- from the graph ---------------------------------------------------------------------------

// Index terms of one nest with ranks resolved: per operand (inputs, then the output) per dim
// the terms (bound rank or -1 for a rank of size 1, coefficient, rank size) and the offset.
struct Term {
  int rank = -1;
  int64_t coefficient = 0;
  int64_t size = 1;
};
struct NestShape {
  std::vector<int64_t> sizes;  // ranks of size > 1
  std::vector<std::vector<std::vector<Term>>> operands;
  std::vector<std::vector<int64_t>> offsets;
  bool usable = true;             // unguarded, at most 64 ranks of size > 1, all ranks known
  bool selects = false;           // the body chooses with select(): an input may not be read
  bool injective_output = false;  // every rank of size > 1 is the one term of an output dim
};

NestShape nest_shape(const Einsum& e) {
  NestShape out;
  out.usable = !e.guarded;
  out.selects = e.map_expr.find("select(") != std::string::npos;
  std::vector<int> index(e.ranks.size(), -1);
  for (size_t r = 0; r < e.ranks.size(); ++r) {
    if (e.rank_sizes[r] <= 1) continue;
    index[r] = static_cast<int>(out.sizes.size());
    out.sizes.push_back(e.rank_sizes[r]);
  }
  if (out.sizes.size() > 64) out.usable = false;
  auto add = [&](const Operand& op) {
    std::vector<std::vector<Term>> dims;
    for (const auto& projection : op.projection) {
      std::vector<Term> terms;
      for (const ProjectionTerm& pt : projection) {
        if (pt.coefficient == 0) continue;
        auto it = std::find(e.ranks.begin(), e.ranks.end(), pt.rank);
        if (it == e.ranks.end()) {
          out.usable = false;
          continue;
        }
        const size_t r = static_cast<size_t>(it - e.ranks.begin());
        terms.push_back({index[r], pt.coefficient, e.rank_sizes[r]});
      }
      dims.push_back(std::move(terms));
    }
    out.operands.push_back(std::move(dims));
    std::vector<int64_t> offsets = op.offsets;
    offsets.resize(op.projection.size(), 0);
    out.offsets.push_back(std::move(offsets));
  };
  for (const Operand& op : e.inputs) add(op);
  add(e.output);
  uint64_t single = 0;
  for (const auto& terms : out.operands.back()) {
    int ranked = 0, rank = -1;
    for (const Term& t : terms)
      if (t.rank >= 0) ++ranked, rank = t.rank;
    if (ranked == 1) single |= uint64_t{1} << rank;
  }
  const uint64_t all =
      out.sizes.size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << out.sizes.size()) - 1;
  out.injective_output = (single & all) == all;
  return out;
}

// Whether nest `i` of `einsums` writes values that survive the node: every later nest that
// writes the same slot accumulates into it (a later plain assignment may overwrite them).
bool survives(const std::vector<Einsum>& einsums, size_t i) {
  for (size_t j = i + 1; j < einsums.size(); ++j)
    if (einsums[j].output.slot == einsums[i].output.slot && einsums[j].reduce == ReduceOp::kNone)
      return false;
  return true;
}

// Whether an index stays in [0, extent) over the whole iteration space (an overflow of its
// range counts as out of range).
bool in_range(const std::vector<Term>& terms, int64_t offset, int64_t extent) {
  int64_t lo = offset, hi = offset;
  for (const Term& t : terms) {
    int64_t span = 0;
    if (__builtin_mul_overflow(t.coefficient, t.size - 1, &span)) return false;
    if (__builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi)) return false;
  }
  return lo >= 0 && hi < extent;
}

struct Projected {
  bool kept = false;
  uint64_t ranks = 0;
  TensorId storage = -1;
};

// The coordinate projection of operand `o` (graph tensor `t`) of a nest, or not kept.
Projected project(const Graph& g, const NestShape& shape, size_t o, TensorId t) {
  Projected out;
  const TensorInfo& info = g.tensors[static_cast<size_t>(t)];
  if (info.sparsity > 0.0) return out;
  const auto& dims = shape.operands[o];
  if (dims.size() != info.shape.size() || dims.size() > 64) return out;
  uint64_t drop = 0;  // bit d: dim d dropped (a broadcast dim)
  // Views: each step must map distinct elements to distinct elements of its input; a
  // broadcast directly under the operand is fine once its broadcast dims are dropped.
  TensorId cur = t;
  bool first = true;
  while (g.tensors[static_cast<size_t>(cur)].storage != cur) {
    const TensorInfo& v = g.tensors[static_cast<size_t>(cur)];
    if (v.producer == kNoNode) return out;
    const Node& p = g.nodes[static_cast<size_t>(v.producer)];
    if (p.inputs.empty()) return out;
    const Builtin op = p.builtin;
    if (op == Builtin::kBroadcast) {
      const std::span<const int64_t> from = DimMapAttrs::of(p).from;
      if (!first || from.size() != v.shape.size()) return out;
      const TensorInfo& in = g.tensors[static_cast<size_t>(p.inputs[0])];
      for (size_t d = 0; d < from.size(); ++d) {
        const int64_t a = from[d];
        if (a < 0 || static_cast<size_t>(a) >= in.shape.size() ||
            in.shape[static_cast<size_t>(a)] != v.shape[d])
          drop |= uint64_t{1} << d;
      }
    } else if (op != Builtin::kReshape && op != Builtin::kPermute && op != Builtin::kPermuteView &&
               op != Builtin::kSlice && op != Builtin::kSelect && op != Builtin::kSplit) {
      return out;  // unfold (overlapping windows) or anything not known to be one-to-one
    }
    first = false;
    cur = p.inputs[0];
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!in_range(dims[d], shape.offsets[o][d], info.shape[d])) return out;
    if (drop & (uint64_t{1} << d)) continue;
    int ranked = 0, rank = -1;
    for (const Term& term : dims[d])
      if (term.rank >= 0) ++ranked, rank = term.rank;
    if (ranked == 1) out.ranks |= uint64_t{1} << rank;  // several ranks: a window, dropped
  }
  out.kept = out.ranks != 0;
  out.storage = g.tensors[static_cast<size_t>(cur)].storage;
  return out;
}

// One constrained operand of a nest.
struct Constrained {
  size_t operand = 0;  // index into the nest's inputs; inputs.size() for the output
  uint64_t ranks = 0;
  double bytes = 0.0;
  bool is_output = false;
};

// The constrained operands of nest `nest` of `node` in `scope` (into `out`, `seen` scratch);
// false when the nest gives no bound (einsum_bound_problem says when).
bool constrained(const Graph& g, const Node& node, size_t nest, BoundScope scope,
                 const NestShape& shape, const std::vector<char>& graph_output,
                 std::vector<Constrained>& out, std::vector<TensorId>& seen) {
  out.clear();
  seen.clear();
  const Einsum& e = (*node.einsums)[nest];
  if (!shape.usable) return false;
  if (e.reduce == ReduceOp::kNone && !shape.injective_output) return false;
  if (!survives(*node.einsums, nest)) return false;
  const TensorId out_t = node.operand_tensor(e.output);
  if (out_t < 0) return false;  // kernel-local: its points may not all be needed
  if (scope == BoundScope::kGraph && !graph_output[static_cast<size_t>(out_t)]) return false;
  // Every operand must be dense, or points could be skipped.
  for (const Operand& op : e.inputs) {
    const TensorId t = node.operand_tensor(op);
    if (t >= 0 && g.tensors[static_cast<size_t>(t)].sparsity > 0.0) return false;
  }
  if (g.tensors[static_cast<size_t>(out_t)].sparsity > 0.0) return false;
  auto add = [&](size_t o, TensorId t, bool is_output) {
    const Projected pr = project(g, shape, o, t);
    if (!pr.kept) return;
    if (std::find(seen.begin(), seen.end(), pr.storage) != seen.end()) return;
    seen.push_back(pr.storage);
    out.push_back(
        {o, pr.ranks, dtype_bits(g.tensors[static_cast<size_t>(t)].dtype) / 8.0, is_output});
  };
  // The output first, so that an input of the same storage (none in a checked program:
  // kernels write only their allocations) is the one dropped.
  add(e.inputs.size(), out_t, true);
  if (!shape.selects) {
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      const TensorId t = node.operand_tensor(e.inputs[i]);
      if (t < 0) continue;  // kernel-local
      const TensorId storage = g.tensors[static_cast<size_t>(t)].storage;
      if (scope == BoundScope::kGraph &&
          g.tensors[static_cast<size_t>(storage)].producer != kNoNode)
        continue;  // an intermediate: may be produced on chip
      add(i, t, false);
    }
  }
  return !out.empty();
}

BoundProblem make_problem(const Einsum& e, const NestShape& shape,
                          const std::vector<Constrained>& tensors) {
  BoundProblem p;
  p.sizes = shape.sizes;
  for (const Constrained& c : tensors) {
    BoundTensor t;
    t.name = c.operand < e.inputs.size() ? e.inputs[c.operand].name : e.output.name;
    t.ranks = c.ranks;
    t.bytes_per_element = c.bytes;
    t.is_output = c.is_output;
    p.tensors.push_back(std::move(t));
  }
  return p;
}

std::vector<char> graph_outputs(const Graph& g) {
  std::vector<char> out(g.tensors.size(), 0);
  for (TensorId t : g.outputs) out.at(static_cast<size_t>(t)) = 1;
  return out;
}

}  // namespace

std::vector<std::vector<double>> hbl_candidates(const BoundProblem& p) {
  const size_t n = p.tensors.size();
  std::vector<std::vector<double>> out;
  if (n == 0 || n > 64) return out;
  const std::vector<uint64_t> rows = cover_rows(p);
  if (rows.empty()) return out;
  const size_t m = rows.size();
  if (n <= 12 && binomial(m + n, n) <= static_cast<double>(kMaxVertexSubsets)) {
    // Every choice of n tight constraints among the m rows and the n bounds s_j >= 0.
    std::vector<size_t> pick(n);
    std::iota(pick.begin(), pick.end(), 0);
    while (true) {
      std::vector<std::vector<double>> a;
      std::vector<double> b;
      for (size_t c : pick) {
        std::vector<double> row(n, 0.0);
        if (c < m) {
          for (size_t j = 0; j < n; ++j)
            if (rows[c] & (uint64_t{1} << j)) row[j] = 1.0;
          b.push_back(1.0);
        } else {
          row[c - m] = 1.0;
          b.push_back(0.0);
        }
        a.push_back(std::move(row));
      }
      if (auto s = solve(std::move(a), std::move(b))) {
        bool near = true;
        for (double v : *s) near = near && v > -1e-9;
        if (near) add_unique(out, repaired(rows, *s));
      }
      // next combination of n out of m + n
      size_t i = n;
      while (i > 0 && pick[i - 1] == m + i - 1) --i;
      if (i == 0) break;
      ++pick[i - 1];
      for (size_t j = i; j < n; ++j) pick[j] = pick[j - 1] + 1;
    }
  }
  // The all-ones vector and greedy 0/1 covers (one per starting tensor): always feasible.
  add_unique(out, std::vector<double>(n, 1.0));
  for (size_t start = 0; start < n && start < 16; ++start) {
    std::vector<double> s(n, 1.0);
    for (size_t k = 0; k < n; ++k) {
      const size_t j = (start + k) % n;
      s[j] = 0.0;
      if (!feasible(rows, s)) s[j] = 1.0;
    }
    add_unique(out, s);
  }
  return out;
}

EinsumBound einsum_io_bound(const BoundProblem& problem, double capacity_bytes) {
  return evaluate(problem, hbl_candidates(problem), capacity_bytes);
}

std::optional<BoundProblem> einsum_bound_problem(const Graph& graph, const Node& node, size_t nest,
                                                 BoundScope scope) {
  SOLAR_INTERNAL_CHECK(node.einsums && nest < node.einsums->size(),
                       "node '" + node.name + "' has no nest " + std::to_string(nest));
  const Einsum& e = (*node.einsums)[nest];
  const NestShape shape = nest_shape(e);
  std::vector<Constrained> tensors;
  std::vector<TensorId> seen;
  if (!constrained(graph, node, nest, scope, shape, graph_outputs(graph), tensors, seen))
    return std::nullopt;
  return make_problem(e, shape, tensors);
}

// --- IoBounds ----------------------------------------------------------------------------------

// Problems are interned by the nest and its constrained operands (which fix the problem).
struct IoBounds::Build {
  std::vector<char> outputs;
  std::unordered_map<const Einsum*, NestShape> shapes;
  std::unordered_map<std::string, int> ids;
  std::string key;
  std::vector<Constrained> tensors;
  std::vector<TensorId> seen;
};

IoBounds::IoBounds(const Graph& graph, Incremental)
    : graph_(graph), build_(std::make_unique<Build>()) {
  build_->outputs = graph_outputs(graph);
  graph_nests_.resize(graph.nodes.size());
  node_nests_.resize(graph.nodes.size());
  node_unfused_.resize(graph.nodes.size());
}

IoBounds::IoBounds(const Graph& graph, std::optional<int64_t> fused)
    : IoBounds(graph, Incremental{}) {
  const int64_t f = fused ? *fused : fused_bytes(graph);
  for (const Node& node : graph.nodes) add(node);
  finish(f);
}

IoBounds::~IoBounds() = default;
IoBounds::IoBounds(IoBounds&&) noexcept = default;

void IoBounds::add(const Node& node) {
  SOLAR_INTERNAL_CHECK(build_, "IoBounds::add after finish");
  node_unfused_.at(static_cast<size_t>(node.id)) = node.bytes();
  if (!node.einsums) return;
  Build& b = *build_;
  auto intern = [&](const Einsum* e, const NestShape& shape, BoundScope scope, size_t nest) {
    if (!constrained(graph_, node, nest, scope, shape, b.outputs, b.tensors, b.seen)) return -1;
    b.key.assign(reinterpret_cast<const char*>(&e), sizeof e);
    for (const Constrained& c : b.tensors) {
      b.key.append(reinterpret_cast<const char*>(&c.operand), sizeof c.operand);
      b.key.append(reinterpret_cast<const char*>(&c.ranks), sizeof c.ranks);
      b.key.append(reinterpret_cast<const char*>(&c.bytes), sizeof c.bytes);
      b.key.push_back(c.is_output ? 'o' : 'i');
    }
    // Looked up before inserting: emplace makes (allocates) the entry and its key first,
    // and most nests of a model repeat an interned problem.
    if (auto it = b.ids.find(b.key); it != b.ids.end()) return it->second;
    const int id = static_cast<int>(problems_.size());
    b.ids.emplace(b.key, id);
    problems_.push_back(make_problem(*e, shape, b.tensors));
    candidates_.push_back(hbl_candidates(problems_.back()));
    return id;
  };
  for (size_t i = 0; i < node.einsums->size(); ++i) {
    const Einsum* e = &(*node.einsums)[i];
    auto it = b.shapes.find(e);
    if (it == b.shapes.end()) it = b.shapes.emplace(e, nest_shape(*e)).first;
    const int gid = intern(e, it->second, BoundScope::kGraph, i);
    const int nid = intern(e, it->second, BoundScope::kNode, i);
    auto& gl = graph_nests_[static_cast<size_t>(node.id)];
    auto& nl = node_nests_[static_cast<size_t>(node.id)];
    if (gid >= 0 && std::find(gl.begin(), gl.end(), gid) == gl.end()) gl.push_back(gid);
    if (nid >= 0 && std::find(nl.begin(), nl.end(), nid) == nl.end()) nl.push_back(nid);
  }
}

void IoBounds::finish(int64_t fused) {
  SOLAR_INTERNAL_CHECK(build_, "IoBounds::finish twice");
  fused_ = fused;
  build_.reset();
}

const std::vector<int64_t>& IoBounds::at(double capacity_bytes) {
  SOLAR_INTERNAL_CHECK(!build_, "IoBounds queried before finish");
  for (const auto& [c, v] : evaluated_)
    if (c == capacity_bytes) return v;
  std::vector<int64_t> v;
  v.reserve(problems_.size());
  for (size_t i = 0; i < problems_.size(); ++i)
    v.push_back(evaluate(problems_[i], candidates_[i], capacity_bytes).bytes);
  evaluated_.emplace_back(capacity_bytes, std::move(v));
  return evaluated_.back().second;
}

int64_t IoBounds::graph_bytes(double capacity_bytes) {
  const std::vector<int64_t>& v = at(capacity_bytes);
  int64_t best = fused_;
  for (const auto& ids : graph_nests_)
    for (int id : ids) best = std::max(best, v[static_cast<size_t>(id)]);
  return best;
}

int64_t IoBounds::node_bytes(NodeId node, double capacity_bytes) {
  int64_t best = node_unfused_.at(static_cast<size_t>(node));
  const std::vector<int64_t>& v = at(capacity_bytes);
  for (int id : node_nests_.at(static_cast<size_t>(node)))
    best = std::max(best, v[static_cast<size_t>(id)]);
  return best;
}

int64_t io_bound_graph_bytes(const Graph& graph, double capacity_bytes) {
  return IoBounds(graph).graph_bytes(capacity_bytes);
}

int64_t io_bound_node_bytes(const Graph& graph, NodeId node, double capacity_bytes) {
  return IoBounds(graph).node_bytes(node, capacity_bytes);
}

}  // namespace solar
