#include "guard_points.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace solar {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::Op;

// Exact integer arithmetic for coefficients and constants (GCC's and Clang's 128-bit
// integers); anything beyond kLimit in magnitude is given up on, so no product overflows.
__extension__ typedef __int128 Wide;
constexpr Wide kLimit = Wide{1} << 100;

// sum_i coef[i] * loop_i + constant, over the nest's loops.
struct Affine {
  std::vector<Wide> coef;
  Wide constant = 0;
};

// `f op 0`.
struct Atom {
  Affine f;
  Op op = Op::kLt;
};

// and/or/not of atoms.
struct Cond {
  enum Kind : uint8_t { kAtom, kAnd, kOr, kNot } kind = kAtom;
  int atom = -1;
  std::vector<Cond> items;
};

struct Builder {
  const Nest& nest;
  const StaticEnv& env;
  std::vector<Atom> atoms;

  int loop_of(const Expr& e) const {
    if (e.kind != ExprKind::kName) return -1;
    for (size_t i = 0; i < nest.loops.size(); ++i)
      if (nest.loops[i].var == e.text) return static_cast<int>(i);
    return -1;
  }
  bool mentions_loop(const Expr& e) const {
    if (loop_of(e) >= 0) return true;
    return std::any_of(e.items.begin(), e.items.end(),
                       [&](const ast::ExprPtr& item) { return item && mentions_loop(*item); });
  }
  static bool in_range(const Affine& a) {
    auto ok = [](Wide v) { return v < kLimit && v > -kLimit; };
    return ok(a.constant) && std::all_of(a.coef.begin(), a.coef.end(), ok);
  }

  std::optional<Affine> affine(const Expr& e) const {
    Affine out;
    out.coef.assign(nest.loops.size(), 0);
    if (!mentions_loop(e)) {
      const Scalar v = eval_static(e, env);
      if (!v.is_int) return std::nullopt;
      out.constant = v.i;
      return out;
    }
    if (const int l = loop_of(e); l >= 0) {
      out.coef[static_cast<size_t>(l)] = 1;
      return out;
    }
    if (e.kind == ExprKind::kUnary && (e.op == Op::kNeg || e.op == Op::kPos)) {
      auto a = affine(*e.items[0]);
      if (!a || e.op == Op::kPos) return a;
      for (Wide& c : a->coef) c = -c;
      a->constant = -a->constant;
      return a;
    }
    if (e.kind != ExprKind::kBinary) return std::nullopt;
    auto a = affine(*e.items[0]);
    auto b = affine(*e.items[1]);
    if (!a || !b) return std::nullopt;
    switch (e.op) {
      case Op::kAdd:
      case Op::kSub: {
        const Wide sign = e.op == Op::kAdd ? 1 : -1;
        for (size_t i = 0; i < out.coef.size(); ++i) out.coef[i] = a->coef[i] + sign * b->coef[i];
        out.constant = a->constant + sign * b->constant;
        break;
      }
      case Op::kMul: {
        // One factor is static (the checker's affine rule).
        const bool a_static =
            std::all_of(a->coef.begin(), a->coef.end(), [](Wide c) { return c == 0; });
        const Affine& k = a_static ? *a : *b;
        const Affine& v = a_static ? *b : *a;
        if (!std::all_of(k.coef.begin(), k.coef.end(), [](Wide c) { return c == 0; }))
          return std::nullopt;
        for (size_t i = 0; i < out.coef.size(); ++i) out.coef[i] = k.constant * v.coef[i];
        out.constant = k.constant * v.constant;
        break;
      }
      default:
        return std::nullopt;
    }
    if (!in_range(out)) return std::nullopt;
    return out;
  }

  std::optional<Cond> build(const Expr& e) {
    Cond c;
    switch (e.kind) {
      case ExprKind::kBoolOp:
        c.kind = e.op == Op::kAnd ? Cond::kAnd : Cond::kOr;
        for (const auto& item : e.items) {
          auto sub = build(*item);
          if (!sub) return std::nullopt;
          c.items.push_back(std::move(*sub));
        }
        return c;
      case ExprKind::kUnary:
        if (e.op != Op::kNot) return std::nullopt;
        if (auto sub = build(*e.items[0])) {
          c.kind = Cond::kNot;
          c.items.push_back(std::move(*sub));
          return c;
        }
        return std::nullopt;
      case ExprKind::kCompare: {
        // a < b <= c: (a - b < 0) and (b - c <= 0).
        c.kind = Cond::kAnd;
        for (size_t i = 0; i + 1 < e.items.size(); ++i) {
          auto l = affine(*e.items[i]);
          auto r = affine(*e.items[i + 1]);
          if (!l || !r || i >= e.cmp_ops.size()) return std::nullopt;
          Atom atom;
          atom.op = e.cmp_ops[i];
          atom.f.coef.resize(l->coef.size());
          for (size_t j = 0; j < l->coef.size(); ++j) atom.f.coef[j] = l->coef[j] - r->coef[j];
          atom.f.constant = l->constant - r->constant;
          Cond leaf;
          leaf.atom = static_cast<int>(atoms.size());
          atoms.push_back(std::move(atom));
          c.items.push_back(std::move(leaf));
        }
        return c;
      }
      default:
        return std::nullopt;
    }
  }
};

bool holds(Op op, Wide v) {
  switch (op) {
    case Op::kLt:
      return v < 0;
    case Op::kLe:
      return v <= 0;
    case Op::kGt:
      return v > 0;
    case Op::kGe:
      return v >= 0;
    case Op::kEq:
      return v == 0;
    case Op::kNe:
      return v != 0;
    default:
      return false;
  }
}

bool eval(const Cond& c, const std::vector<char>& truth) {
  switch (c.kind) {
    case Cond::kAtom:
      return truth[static_cast<size_t>(c.atom)] != 0;
    case Cond::kAnd:
      return std::all_of(c.items.begin(), c.items.end(),
                         [&](const Cond& i) { return eval(i, truth); });
    case Cond::kOr:
      return std::any_of(c.items.begin(), c.items.end(),
                         [&](const Cond& i) { return eval(i, truth); });
    case Cond::kNot:
      return !eval(c.items.front(), truth);
  }
  return false;
}

void atoms_of(const Cond& c, std::vector<int>* out) {
  if (c.kind == Cond::kAtom) out->push_back(c.atom);
  for (const Cond& i : c.items) atoms_of(i, out);
}

Wide floor_div_wide(Wide a, Wide b) {
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Points of the loops `vars` (the others are not counted) where `cond` holds: the variable
// of largest size is solved by intervals, the rest enumerated.
// Where `ranges` is given, the smallest and largest value each loop of `vars` takes at a
// point where `cond` holds are folded into it (by loop).
std::optional<Wide> count_group(const Cond& cond, const std::vector<Atom>& atoms,
                                std::vector<int> vars, const std::vector<int64_t>& sizes,
                                std::vector<std::pair<Wide, Wide>>* ranges) {
  std::vector<int> used;
  atoms_of(cond, &used);
  if (vars.empty()) {
    std::vector<char> truth(atoms.size(), 0);
    for (int a : used)
      truth[static_cast<size_t>(a)] =
          holds(atoms[static_cast<size_t>(a)].op, atoms[static_cast<size_t>(a)].f.constant);
    return eval(cond, truth) ? 1 : 0;
  }
  const auto solved_it = std::max_element(vars.begin(), vars.end(), [&](int a, int b) {
    return sizes[static_cast<size_t>(a)] < sizes[static_cast<size_t>(b)];
  });
  const int x = *solved_it;
  vars.erase(solved_it);
  Wide assignments = 1;
  for (int v : vars) {
    assignments *= sizes[static_cast<size_t>(v)];
    if (assignments > kMaxGuardAssignments) return std::nullopt;
  }
  const Wide n = sizes[static_cast<size_t>(x)];
  std::vector<int64_t> value(vars.size(), 0);
  std::vector<char> truth(atoms.size(), 0);
  std::vector<Wide> offset(atoms.size(), 0);  // constant + the enumerated variables' terms
  std::vector<Wide> cuts;
  Wide total = 0;
  for (Wide step = 0; step < assignments; ++step) {
    cuts.assign({0, n});
    for (int a : used) {
      const Atom& atom = atoms[static_cast<size_t>(a)];
      Wide b = atom.f.constant;
      for (size_t i = 0; i < vars.size(); ++i)
        b += atom.f.coef[static_cast<size_t>(vars[i])] * value[i];
      offset[static_cast<size_t>(a)] = b;
      const Wide c = atom.f.coef[static_cast<size_t>(x)];
      if (c == 0) continue;
      // The truth of c*x + b op 0 changes only where x crosses -b/c: at floor(-b/c) + 1
      // for < and <=, and around it for the others.
      const Wide t = floor_div_wide(-b, c);
      for (Wide p : {t, t + 1, t + 2})
        if (p > 0 && p < n) cuts.push_back(p);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t s = 0; s + 1 < cuts.size(); ++s) {
      const Wide at = cuts[s];
      for (int a : used) {
        const Atom& atom = atoms[static_cast<size_t>(a)];
        truth[static_cast<size_t>(a)] = holds(
            atom.op, atom.f.coef[static_cast<size_t>(x)] * at + offset[static_cast<size_t>(a)]);
      }
      if (!eval(cond, truth)) continue;
      total += cuts[s + 1] - cuts[s];
      if (ranges) {
        auto fold = [&](int v, Wide first, Wide last) {
          auto& [lo, hi] = (*ranges)[static_cast<size_t>(v)];
          lo = std::min(lo, first);
          hi = std::max(hi, last);
        };
        fold(x, cuts[s], cuts[s + 1] - 1);
        for (size_t i = 0; i < vars.size(); ++i) fold(vars[i], value[i], value[i]);
      }
    }
    for (size_t i = 0; i < value.size(); ++i) {  // next assignment (odometer)
      if (++value[i] < sizes[static_cast<size_t>(vars[i])]) break;
      value[i] = 0;
    }
  }
  return total;
}

// The loops an atom's affine form moves.
std::vector<int> vars_of(const Cond& c, const std::vector<Atom>& atoms) {
  std::vector<int> used;
  atoms_of(c, &used);
  std::vector<int> out;
  for (int a : used) {
    const Affine& f = atoms[static_cast<size_t>(a)].f;
    for (size_t i = 0; i < f.coef.size(); ++i)
      if (f.coef[i] != 0 && std::find(out.begin(), out.end(), static_cast<int>(i)) == out.end())
        out.push_back(static_cast<int>(i));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void flatten_and(Cond c, std::vector<Cond>* out) {
  if (c.kind == Cond::kAnd) {
    for (Cond& i : c.items) flatten_and(std::move(i), out);
    return;
  }
  out->push_back(std::move(c));
}

// The points where `guard` holds (guarded_points), and with `ranges` (by loop, sized to
// the loops and preset to an empty range) the values each loop takes at them (loops the
// guard does not move: all their values).
std::optional<int64_t> analyse(const ast::Expr& guard, const Nest& nest,
                               const std::vector<int64_t>& sizes, const StaticEnv& env,
                               std::vector<std::pair<Wide, Wide>>* ranges) {
  Builder b{nest, env, {}};
  std::optional<Cond> cond = b.build(guard);
  if (!cond) return std::nullopt;
  // Conjuncts over disjoint loops count apart (union of the loops they share).
  std::vector<Cond> conjuncts;
  flatten_and(std::move(*cond), &conjuncts);
  const size_t loops = nest.loops.size();
  std::vector<int> group(loops);
  std::iota(group.begin(), group.end(), 0);
  auto find = [&](int v) {
    while (group[static_cast<size_t>(v)] != v) v = group[static_cast<size_t>(v)];
    return v;
  };
  std::vector<std::vector<int>> conjunct_vars;
  for (const Cond& c : conjuncts) {
    conjunct_vars.push_back(vars_of(c, b.atoms));
    const std::vector<int>& vs = conjunct_vars.back();
    for (size_t i = 1; i < vs.size(); ++i) group[static_cast<size_t>(find(vs[i]))] = find(vs[0]);
  }
  Wide total = 1;
  std::vector<char> counted(loops, 0);
  for (size_t root = 0; root < loops + 1; ++root) {
    // root == loops: the conjuncts that move no loop (constant truth).
    Cond part;
    part.kind = Cond::kAnd;
    std::vector<int> vars;
    for (size_t c = 0; c < conjuncts.size(); ++c) {
      const std::vector<int>& vs = conjunct_vars[c];
      const bool mine =
          root == loops ? vs.empty() : !vs.empty() && static_cast<size_t>(find(vs[0])) == root;
      if (!mine) continue;
      part.items.push_back(conjuncts[c]);
      for (int v : vs)
        if (std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
    }
    if (part.items.empty()) continue;
    std::optional<Wide> n = count_group(part, b.atoms, vars, sizes, ranges);
    if (!n) return std::nullopt;
    total *= *n;
    if (total == 0) return 0;
    for (int v : vars) counted[static_cast<size_t>(v)] = 1;
    if (total > kLimit) return std::nullopt;
  }
  for (size_t l = 0; l < loops; ++l) {
    if (!counted[l]) {
      total *= sizes[l];
      if (ranges) (*ranges)[l] = {0, sizes[l] - 1};
    }
    if (total > std::numeric_limits<int64_t>::max()) return std::nullopt;
  }
  return static_cast<int64_t>(total);
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> guard_loop_ranges(const ast::Expr& guard, const Nest& nest,
                                                           const std::vector<int64_t>& sizes,
                                                           const StaticEnv& env) {
  std::vector<std::pair<Wide, Wide>> range;
  // Exact where the guard is counted: the hull of each loop's values at its points.
  for (size_t l = 0; l < sizes.size(); ++l) range.emplace_back(sizes[l], -1);
  if (const std::optional<int64_t> n = analyse(guard, nest, sizes, env, &range)) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const auto& [a, b] : range) {
      if (*n == 0)
        out.emplace_back(0, -1);
      else
        out.emplace_back(static_cast<int64_t>(a), static_cast<int64_t>(b));
    }
    return out;
  }
  // Otherwise the bounds the guard's one-loop conjuncts set.
  range.clear();
  for (int64_t n : sizes) range.emplace_back(0, n - 1);
  auto result = [&] {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const auto& [a, b] : range)
      out.emplace_back(static_cast<int64_t>(a), static_cast<int64_t>(b));
    return out;
  };
  Builder b{nest, env, {}};
  std::optional<Cond> cond = b.build(guard);
  if (!cond) return result();
  std::vector<Cond> conjuncts;
  flatten_and(std::move(*cond), &conjuncts);
  for (const Cond& c : conjuncts) {
    if (c.kind != Cond::kAtom) continue;
    const Atom& atom = b.atoms[static_cast<size_t>(c.atom)];
    const std::vector<int> vars = vars_of(c, b.atoms);
    if (vars.size() != 1) continue;
    const size_t x = static_cast<size_t>(vars.front());
    Wide a = atom.f.coef[x], k = atom.f.constant;  // a*x + k op 0
    Op op = atom.op;
    if (a < 0) {  // -|a| x + k op 0  <=>  |a| x - k (op mirrored) 0
      a = -a;
      k = -k;
      op = op == Op::kLt   ? Op::kGt
           : op == Op::kLe ? Op::kGe
           : op == Op::kGt ? Op::kLt
           : op == Op::kGe ? Op::kLe
                           : op;
    }
    // a*x + k op 0 with a > 0: x < -k/a, x <= -k/a, x > -k/a, x >= -k/a, x == -k/a.
    const Wide fl = floor_div_wide(-k, a);  // floor(-k/a)
    const Wide ce = -floor_div_wide(k, a);  // ceil(-k/a)
    auto& [first, last] = range[x];
    switch (op) {
      case Op::kLt:
        last = std::min(last, ce - 1);
        break;
      case Op::kLe:
        last = std::min(last, fl);
        break;
      case Op::kGt:
        first = std::max(first, fl + 1);
        break;
      case Op::kGe:
        first = std::max(first, ce);
        break;
      case Op::kEq:
        if (fl != ce) {
          last = first - 1;  // no integer solution
        } else {
          first = std::max(first, fl);
          last = std::min(last, fl);
        }
        break;
      default:
        break;
    }
  }
  for (auto& [first, last] : range)
    if (last < first) last = first - 1;
  return result();
}

std::optional<int64_t> guarded_points(const ast::Expr& guard, const Nest& nest,
                                      const std::vector<int64_t>& sizes, const StaticEnv& env) {
  return analyse(guard, nest, sizes, env, nullptr);
}

}  // namespace solar
