#include "solar/einsum/lift.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "guard_points.h"
#include "solar/base/checked.h"
#include "solar/ir/printer.h"
#include "solar/ir/static_eval.h"

namespace solar {
namespace {

[[noreturn]] void call_error(const Program& program, const KernelCall& call, ErrorKind kind,
                             const std::string& msg, const std::string& hint = "") {
  throw UserError(kind, program.file, call.loc,
                  "in call " + call.name + " to kernel '" + call.kernel->name + "': " + msg, hint);
}

// The error for a count of nest `nest` of `call` that does not fit in int64.
UserError nest_overflow(const Program& program, const KernelCall& call, size_t nest,
                        const std::string& quantity) {
  return count_overflow(CountSite{program.file, call.loc,
                                  "node '" + call.name + "' (kernel '" + call.kernel->name +
                                      "', loop nest " + std::to_string(nest + 1) + ")"},
                        quantity);
}

}  // namespace

StaticEnv call_env(const Program& program, const Kernel& kernel, const LiftedCall& lifted,
                   const std::vector<Scalar>& scalar_args) {
  StaticEnv env;
  env.program = &program;
  env.kernel = &kernel;
  env.scalar_args = &scalar_args;
  env.dim_sizes = &lifted.dims;
  env.tensor_shapes = &lifted.tensor_shapes;
  return env;
}

LiftedCall lift_call(const Program& program, const KernelCall& call) {
  const Kernel& k = *call.kernel;
  LiftedCall out;
  out.tensor_shapes.resize(k.tensors.size());
  // Which parameter bound each dim first, for mismatch messages.
  std::unordered_map<std::string, std::pair<std::string, size_t>> bound_by;
  for (size_t p = 0; p < k.params.size(); ++p) {
    const KernelParam& param = k.params[p];
    if (param.kind != ParamKind::kTensor) continue;
    const TensorInfo* arg = call.tensor_args[p];
    const KernelTensor& kt = k.tensors[static_cast<size_t>(param.tensor)];
    if (arg->shape.size() != kt.dims.size()) {
      std::string shape;
      for (size_t i = 0; i < arg->shape.size(); ++i)
        shape += (i ? "," : "") + std::to_string(arg->shape[i]);
      call_error(
          program, call, ErrorKind::kShape,
          "argument '" + param.name + "' has " + std::to_string(arg->shape.size()) + " dims [" +
              shape + "] but the kernel expects " + std::to_string(kt.dims.size()) + " (" +
              [&] {
                std::string s;
                for (size_t i = 0; i < kt.dims.size(); ++i) s += (i ? "," : "") + kt.dims[i];
                return s;
              }() +
              ")");
    }
    for (size_t i = 0; i < kt.dims.size(); ++i) {
      const std::string& d = kt.dims[i];
      auto [it, inserted] = out.dims.emplace(d, arg->shape[i]);
      if (!inserted && it->second != arg->shape[i]) {
        const auto& first = bound_by[d];
        call_error(program, call, ErrorKind::kDimMismatch,
                   "dim '" + d + "' is " + std::to_string(it->second) + " from '" + first.first +
                       "' (dim " + std::to_string(first.second) + ") but " +
                       std::to_string(arg->shape[i]) + " from '" + param.name + "' (dim " +
                       std::to_string(i) + ")",
                   "the same dim name must have the same size in every argument of a call");
      }
      if (inserted) bound_by[d] = {param.name, i};
    }
    out.tensor_shapes[static_cast<size_t>(param.tensor)].assign(arg->shape.begin(),
                                                                arg->shape.end());
  }

  const StaticEnv env = call_env(program, k, out, call.scalar_args);

  // Allocations, in order: each may use sizes bound before it.
  for (size_t t = 0; t < k.tensors.size(); ++t) {
    const KernelTensor& kt = k.tensors[t];
    if (kt.is_param) continue;
    std::vector<int64_t> shape;
    for (size_t i = 0; i < kt.dims.size(); ++i) {
      const int64_t n = eval_static_int(*kt.size_exprs[i], env, "a dim size");
      if (n <= 0) {
        call_error(program, call, ErrorKind::kShape,
                   "allocation '" + kt.name + "' gets size " + std::to_string(n) + " for dim '" +
                       kt.dims[i] + "' (" + print_expr(*kt.size_exprs[i]) + ")",
                   "sizes must be positive; check the arguments' shapes and scalar parameters");
      }
      auto [it, inserted] = out.dims.emplace(kt.dims[i], n);
      if (!inserted && it->second != n) {
        call_error(program, call, ErrorKind::kDimMismatch,
                   "allocation '" + kt.name + "' sizes dim '" + kt.dims[i] + "' as " +
                       std::to_string(n) + " but it is already " + std::to_string(it->second));
      }
      shape.push_back(n);
    }
    out.tensor_shapes[t] = std::move(shape);
  }

  auto sparsity_of = [&](int tensor) {
    const KernelTensor& kt = k.tensors[static_cast<size_t>(tensor)];
    if (!kt.is_param) return 0.0;
    for (size_t p = 0; p < k.params.size(); ++p)
      if (k.params[p].tensor == tensor) return call.tensor_args[p]->sparsity;
    return 0.0;
  };
  auto dtype_of = [&](int tensor) {
    const KernelTensor& kt = k.tensors[static_cast<size_t>(tensor)];
    if (!kt.is_param) return kt.dtype;
    for (size_t p = 0; p < k.params.size(); ++p)
      if (k.params[p].tensor == tensor) return call.tensor_args[p]->dtype;
    return kt.dtype;
  };

  int64_t best_macs = -1;
  auto einsums = std::make_shared<std::vector<Einsum>>();
  const CountSite call_site{program.file, call.loc, "node '" + call.name + "'"};
  for (size_t nest_index = 0; nest_index < k.nests.size(); ++nest_index) {
    const Nest& nest = k.nests[nest_index];
    auto overflow = [&](const std::string& quantity) {
      return nest_overflow(program, call, nest_index, quantity);
    };
    Einsum e;
    e.text = nest.einsum;
    e.reduce = nest.reduce;
    e.map_expr = nest.map_expr;
    e.points = 1;
    std::vector<std::string> ranks;
    for (const Loop& l : nest.loops) {
      std::string r = l.dim;
      while (std::find(ranks.begin(), ranks.end(), r) != ranks.end()) r += "'";
      ranks.push_back(r);
      const int64_t n = out.dims.at(l.dim);
      e.rank_sizes.push_back(n);
      e.points = count_mul(e.points, n, [&] {
        std::string product;
        for (size_t i = 0; i < nest.loops.size(); ++i)
          product += (i ? " x " : "") + nest.loops[i].dim + "=" +
                     std::to_string(out.dims.at(nest.loops[i].dim));
        return overflow("iteration points (" + product + ")");
      });
    }
    e.ranks = ranks;
    auto make_operand = [&](const Access& a, bool is_output) {
      Operand op;
      op.slot = a.tensor;
      op.name = k.tensors[static_cast<size_t>(a.tensor)].name;
      op.is_output = is_output;
      for (const AffineExpr& idx : a.index) {
        std::vector<ProjectionTerm> terms;
        for (const AffineTerm& t : idx.terms) {
          const int64_t c =
              t.coefficient ? eval_static_int(*t.coefficient, env, "a coefficient") : 1;
          const std::string& r = ranks[static_cast<size_t>(t.loop)];
          auto it = std::find_if(terms.begin(), terms.end(),
                                 [&](const ProjectionTerm& pt) { return pt.rank == r; });
          if (it != terms.end()) {
            it->coefficient = count_add(it->coefficient, c, [&] {
              return overflow("index coefficients of '" + op.name + "'");
            });
          } else {
            terms.push_back(ProjectionTerm{r, c});
          }
        }
        op.projection.push_back(std::move(terms));
        op.offsets.push_back(idx.constant ? eval_static_int(*idx.constant, env, "an offset") : 0);
      }
      return op;
    };
    // Every index an access can take, |offset| + sum |coefficient| x (size - 1), must fit in
    // int64 (with 1 to spare): then no stage that evaluates an index (the executors, the
    // cache-aware extents) can overflow, and a bounds check sees the true value.
    for (const Update& u : nest.updates) {
      auto reach = [&](const Access& a) {
        const std::string& name = k.tensors[static_cast<size_t>(a.tensor)].name;
        auto fail = [&] {
          return overflow("index values of '" + name + "' (line " + std::to_string(a.loc.line) +
                          ")");
        };
        for (const AffineExpr& idx : a.index) {
          auto magnitude = [&](int64_t v) {
            if (v == std::numeric_limits<int64_t>::min()) throw fail();
            return v < 0 ? -v : v;
          };
          int64_t r =
              idx.constant ? magnitude(eval_static_int(*idx.constant, env, "an offset")) : 0;
          r = count_add(r, 1, fail);
          for (const AffineTerm& t : idx.terms) {
            const int64_t c =
                t.coefficient ? eval_static_int(*t.coefficient, env, "a coefficient") : 1;
            const int64_t extent = out.dims.at(nest.loops[static_cast<size_t>(t.loop)].dim) - 1;
            r = count_add(r, count_mul(magnitude(c), extent, fail), fail);
          }
        }
      };
      reach(u.target);
      for (const Access& a : u.reads) reach(a);
    }
    std::vector<int> seen;
    for (const Update& u : nest.updates) {
      for (const Access& a : u.reads) {
        if (a.tensor == nest.output) continue;
        if (std::find(seen.begin(), seen.end(), a.tensor) != seen.end()) continue;
        seen.push_back(a.tensor);
        e.inputs.push_back(make_operand(a, false));
      }
    }
    e.output = make_operand(nest.updates.front().target, true);
    e.output_is_local = !k.tensors[static_cast<size_t>(nest.output)].returned;
    e.output_dtype = dtype_of(nest.output);
    e.guarded = std::any_of(nest.updates.begin(), nest.updates.end(),
                            [](const Update& u) { return u.guard != nullptr; });
    for (const Update& u : nest.updates) {
      // The points this statement runs: those its guard lets through (padding taps and
      // masked positions excluded), the dense space where a guard cannot be counted.
      int64_t points = e.points;
      if (u.guard) {
        if (const std::optional<int64_t> n = guarded_points(*u.guard, nest, e.rank_sizes, env))
          points = std::min(*n, e.points);
      }
      if (u.is_mac) {
        const Access& a = u.reads[static_cast<size_t>(u.mac_operand_a)];
        const Access& b = u.reads[static_cast<size_t>(u.mac_operand_b)];
        const double density = 1.0 - std::max(sparsity_of(a.tensor), sparsity_of(b.tensor));
        // points x density, at most points: below double(points) <= 2^63 the rounded
        // product fits in int64.
        const double scaled = static_cast<double>(points) * density;
        const int64_t macs = density >= 1.0 || scaled >= static_cast<double>(points)
                                 ? points
                                 : static_cast<int64_t>(std::llround(scaled));
        e.macs = count_add(e.macs, macs, [&] { return overflow("MACs"); });
        e.compute_dtype = dtype_of(a.tensor);
      }
      const FlopCounts f = scale_flops(u.flops, points, [&](const char* kind) {
        return overflow(std::string("vector FLOPs of kind '") + kind + "'");
      });
      add_flops(e.flops, f, [&](const char* kind) {
        return overflow(std::string("vector FLOPs of kind '") + kind + "'");
      });
    }
    out.macs = count_add(out.macs, e.macs, [&] { return count_overflow(call_site, "MACs"); });
    add_flops(out.flops, e.flops, [&](const char* kind) {
      return count_overflow(call_site, std::string("vector FLOPs of kind '") + kind + "'");
    });
    if (e.macs > best_macs && e.macs > 0) {
      best_macs = e.macs;
      out.matrix_dtype = e.compute_dtype;
    }
    einsums->push_back(std::move(e));
  }
  // What each operand touches of its tensor (the reads' bytes, docs/ir.md §7.4), once per
  // lifted call; identical calls share it with the einsums. Where every statement of a nest
  // is guarded, its loops take only the values the guards allow (a window over some keys
  // reads those keys): the ranks are narrowed and the offsets shifted to match.
  for (size_t i = 0; i < einsums->size(); ++i) {
    Einsum& e = (*einsums)[i];
    const Nest& nest = k.nests[i];
    Einsum narrowed = e;
    bool narrow = e.guarded && !nest.updates.empty() &&
                  std::all_of(nest.updates.begin(), nest.updates.end(),
                              [](const Update& u) { return u.guard != nullptr; });
    std::vector<std::pair<int64_t, int64_t>> hull;
    for (const Update& u : nest.updates) {
      if (!narrow) break;
      const auto r = guard_loop_ranges(*u.guard, nest, e.rank_sizes, env);
      if (hull.empty()) {
        hull = r;
        continue;
      }
      for (size_t l = 0; l < r.size(); ++l) {
        if (r[l].second < r[l].first) continue;  // this statement runs nowhere
        if (hull[l].second < hull[l].first) {
          hull[l] = r[l];
        } else {
          hull[l] = {std::min(hull[l].first, r[l].first), std::max(hull[l].second, r[l].second)};
        }
      }
    }
    if (narrow) {
      for (size_t l = 0; l < hull.size(); ++l)
        narrowed.rank_sizes[l] = std::max<int64_t>(0, hull[l].second - hull[l].first + 1);
    }
    for (Operand& op : e.inputs) {
      if (op.slot < 0 || static_cast<size_t>(op.slot) >= out.tensor_shapes.size()) continue;
      const std::vector<int64_t>& shape = out.tensor_shapes[static_cast<size_t>(op.slot)];
      if (!narrow) {
        op.touched = touched_elements(e, op, shape);
        continue;
      }
      if (std::any_of(narrowed.rank_sizes.begin(), narrowed.rank_sizes.end(),
                      [](int64_t n) { return n == 0; })) {
        op.touched = 0;  // no statement of the nest runs
        continue;
      }
      // Each index shifts by coefficient x first value of its rank (all within the index
      // range checked above: the first value is a value of the rank).
      Operand shifted = op;
      for (size_t d = 0; d < shifted.projection.size() && d < shifted.offsets.size(); ++d) {
        for (const ProjectionTerm& t : shifted.projection[d]) {
          const auto it = std::find(e.ranks.begin(), e.ranks.end(), t.rank);
          if (it == e.ranks.end()) continue;
          const int64_t first = hull[static_cast<size_t>(it - e.ranks.begin())].first;
          shifted.offsets[d] += t.coefficient * first;
        }
      }
      op.touched = touched_elements(narrowed, shifted, shape);
    }
  }
  out.einsums = std::move(einsums);
  return out;
}

namespace {

// Index arithmetic without overflow (offsets and spans of int64 ranks), in GCC's and Clang's
// 128-bit integers.
__extension__ typedef __int128 Wide;

// Combinations of rank values enumerated to count the distinct values of a gapped index
// exactly (below, about 10 ms at most).
constexpr int64_t kMaxEnumerated = int64_t{1} << 20;

// Distinct values v of `offset + sum_i c_i * k_i` (0 <= k_i < size_i) with 0 <= v < extent;
// exact when they form one range or have at most kMaxEnumerated combinations, else a lower
// bound (see touched_elements).
int64_t distinct_in_range(const std::vector<std::pair<int64_t, int64_t>>& terms, int64_t offset,
                          int64_t extent) {
  // Values of one term c * k + offset inside [0, extent).
  auto one = [&](int64_t c, int64_t size) -> int64_t {
    if (c == 0 || size <= 1) return offset >= 0 && offset < extent ? 1 : 0;
    const int64_t step = c > 0 ? c : -c;
    // k with 0 <= offset + c*k <= extent - 1; for c < 0 mirror: k' = size - 1 - k.
    const Wide lo_v =
        c > 0 ? 0 - static_cast<Wide>(offset) : static_cast<Wide>(offset) - (extent - 1);
    const Wide hi_v = c > 0 ? static_cast<Wide>(extent - 1) - offset : static_cast<Wide>(offset);
    if (hi_v < 0) return 0;
    const Wide k_lo = lo_v <= 0 ? 0 : (lo_v + step - 1) / step;
    Wide k_hi = hi_v / step;
    if (k_hi > size - 1) k_hi = size - 1;
    return k_hi < k_lo ? 0 : static_cast<int64_t>(k_hi - k_lo + 1);
  };
  std::vector<std::pair<int64_t, int64_t>> live;  // (|c|, size) of ranks that move the index
  Wide lo = offset, hi = offset;
  for (const auto& [c, size] : terms) {
    if (c == 0 || size <= 1) continue;
    const Wide reach = static_cast<Wide>(c) * (size - 1);
    (reach < 0 ? lo : hi) += reach;
    live.emplace_back(c > 0 ? c : -c, size);
  }
  if (live.empty()) return one(0, 1);
  if (live.size() == 1) {
    for (const auto& [c, size] : terms)
      if (c != 0 && size > 1) return one(c, size);
  }
  // One range when, by increasing stride, each stride is at most the span covered so far + 1.
  std::sort(live.begin(), live.end());
  bool contiguous = live.front().first == 1;
  Wide span = 0;
  for (const auto& [c, size] : live) {
    if (c > span + 1) contiguous = false;
    span += static_cast<Wide>(c) * (size - 1);
  }
  if (contiguous) {
    const Wide a = lo < 0 ? 0 : lo, b = hi > extent - 1 ? extent - 1 : hi;
    return b < a ? 0 : static_cast<int64_t>(b - a + 1);
  }
  // Gaps: count the distinct values exactly when there are few combinations to enumerate
  // (a dilated pooling window: 2o - 1 + 3k over o < 63, k < 3 covers 127 rows of 128, where
  // one rank at a time finds 63 of them: KernelBench's dilated 3-D max pooling was charged an
  // eighth of its input). Otherwise the values of one rank with the others at 0 are touched:
  // take the most, a lower bound.
  Wide combinations = 1;
  for (const auto& [c, size] : live) {
    combinations *= size;  // at most 2^20 * 2^63 before the check: no overflow
    if (combinations > kMaxEnumerated) break;
  }
  if (combinations <= kMaxEnumerated && hi - lo < kMaxEnumerated * 64) {
    std::vector<bool> seen(static_cast<size_t>(hi - lo + 1), false);
    std::vector<int64_t> k(terms.size(), 0);
    int64_t count = 0;
    while (true) {
      Wide v = offset;
      for (size_t i = 0; i < terms.size(); ++i) v += static_cast<Wide>(terms[i].first) * k[i];
      if (v >= 0 && v < extent && !seen[static_cast<size_t>(v - lo)]) {
        seen[static_cast<size_t>(v - lo)] = true;
        ++count;
      }
      size_t i = 0;  // the next combination, ranks that do not move the index held at 0
      while (i < terms.size() &&
             (terms[i].first == 0 || terms[i].second <= 1 || ++k[i] == terms[i].second)) {
        k[i] = 0;
        ++i;
      }
      if (i == terms.size()) break;
    }
    return count;
  }
  int64_t best = 0;
  for (const auto& [c, size] : terms) best = std::max(best, one(c, size));
  return best;
}

}  // namespace

int64_t touched_elements(const Einsum& einsum, const Operand& operand,
                         const std::vector<int64_t>& shape) {
  const size_t dims = shape.size();
  if (operand.projection.size() != dims) {  // not a plain access: claim nothing fewer
    int64_t all = 1;
    for (int64_t n : shape) all = saturating_mul(all, n);
    return all;
  }
  auto rank_size = [&](const std::string& rank) -> int64_t {
    for (size_t r = 0; r < einsum.ranks.size(); ++r)
      if (einsum.ranks[r] == rank) return einsum.rank_sizes[r];
    return 1;
  };
  std::vector<int64_t> counts(dims);
  std::vector<std::vector<std::string>> ranks(dims);
  for (size_t d = 0; d < dims; ++d) {
    std::vector<std::pair<int64_t, int64_t>> terms;
    for (const ProjectionTerm& t : operand.projection[d]) {
      const int64_t size = rank_size(t.rank);
      terms.emplace_back(t.coefficient, size);
      if (t.coefficient != 0 && size > 1) ranks[d].push_back(t.rank);
    }
    const int64_t offset = d < operand.offsets.size() ? operand.offsets[d] : 0;
    counts[d] = distinct_in_range(terms, offset, shape[d]);
  }
  // Dims that share ranks form one group; a group touches at least its largest dim's count.
  std::vector<int> group(dims);
  for (size_t d = 0; d < dims; ++d) group[d] = static_cast<int>(d);
  auto find = [&](int d) {
    while (group[static_cast<size_t>(d)] != d) d = group[static_cast<size_t>(d)];
    return d;
  };
  for (size_t a = 0; a < dims; ++a)
    for (size_t b = a + 1; b < dims; ++b)
      for (const std::string& r : ranks[a])
        if (std::find(ranks[b].begin(), ranks[b].end(), r) != ranks[b].end())
          group[static_cast<size_t>(find(static_cast<int>(b)))] = find(static_cast<int>(a));
  std::vector<int64_t> best(dims, 0);
  for (size_t d = 0; d < dims; ++d) {
    int64_t& b = best[static_cast<size_t>(find(static_cast<int>(d)))];
    b = std::max(b, counts[d]);
  }
  int64_t total = 1;
  for (size_t d = 0; d < dims; ++d)
    if (find(static_cast<int>(d)) == static_cast<int>(d)) total = saturating_mul(total, best[d]);
  return total;
}

}  // namespace solar
