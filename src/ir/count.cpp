// Pass count_flops (ir/passes.h): the FLOPs of one point of every update, by kind, and its
// MAC pattern (docs/ir.md §7.2-7.3). Runs on a program check_and_lower accepted.
#include <algorithm>
#include <functional>

#include "scalar_functions.h"
#include "solar/ir/passes.h"

namespace solar {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::Op;

// Whether `e` has the same value at every point of `nest`: no tensor read and no loop
// variable (literals, scalar parameters, module constants, size(), shapes).
bool point_invariant(const Expr& e, const Kernel& k, const Nest& nest) {
  if (e.kind == ExprKind::kName)
    for (const Loop& l : nest.loops)
      if (l.var == e.text) return false;
  if (e.kind == ExprKind::kSubscript && e.items[0]->kind == ExprKind::kName &&
      k.find_tensor(e.items[0]->text) >= 0)
    return false;
  for (const auto& item : e.items)
    if (item && !point_invariant(*item, k, nest)) return false;
  return true;
}

// Adds the FLOPs of one evaluation of `e` at a point to `f`. Arithmetic on values that are the
// same at every point (`size("N") * size("S")`, `1.0 / p`, `alpha * scale`) is computed once
// per call, not per point: it counts nothing (docs/ir.md §7.3). A tensor read counts nothing
// (its index arithmetic is address computation).
void count(const Expr& e, const Kernel& k, const Nest& nest, FlopCounts* f) {
  if (point_invariant(e, k, nest)) return;
  switch (e.kind) {
    case ExprKind::kBinary:
      count(*e.items[0], k, nest, f);
      count(*e.items[1], k, nest, f);
      switch (e.op) {
        case Op::kAdd:
        case Op::kSub:
          ++f->add;
          break;
        case Op::kMul:
          ++f->mul;
          break;
        case Op::kDiv:
        case Op::kFloorDiv:
        case Op::kMod:
          ++f->div;
          break;
        case Op::kPow:
          ++f->transcendental;
          break;
        default:
          break;
      }
      return;
    case ExprKind::kUnary:
      count(*e.items[0], k, nest, f);
      return;
    case ExprKind::kCompare:
    case ExprKind::kBoolOp:
      for (const auto& item : e.items) count(*item, k, nest, f);
      if (e.kind == ExprKind::kCompare) f->compare += static_cast<int64_t>(e.cmp_ops.size());
      return;
    case ExprKind::kCall: {
      const std::string fn = e.items[0]->kind == ExprKind::kName ? e.items[0]->text : std::string();
      const auto it = detail::scalar_functions().find(fn);
      if (it == detail::scalar_functions().end()) return;  // size(): static
      const size_t nargs = e.items.size() - 1;
      switch (it->second) {
        case detail::FnClass::kSelect:
          break;
        case detail::FnClass::kCast:
          count(*e.items[1], k, nest, f);
          ++f->other;
          return;
        case detail::FnClass::kCompare:
          f->compare += static_cast<int64_t>(nargs - 1);
          break;
        case detail::FnClass::kTranscendental:
          ++f->transcendental;
          break;
        case detail::FnClass::kOther:
          ++f->other;
          break;
      }
      for (size_t i = 1; i < e.items.size(); ++i) count(*e.items[i], k, nest, f);
      return;
    }
    default:
      return;  // literals, names, tensor reads, shapes
  }
}

// Collects the factors of a product tree.
void product_factors(const Expr& e, std::vector<const Expr*>* out) {
  if (e.kind == ExprKind::kBinary && e.op == Op::kMul) {
    product_factors(*e.items[0], out);
    product_factors(*e.items[1], out);
    return;
  }
  out->push_back(&e);
}

// The MAC pattern of `u` and the FLOPs its update operator adds.
void classify_update(Update* u, const Nest& nest) {
  switch (u->kind) {
    case UpdateKind::kAdd: {
      // MAC (docs/ir.md §7.2): += of a product of two tensor-reading factors in a nest with
      // a reduction dim, where some dim the target keeps is indexed by only one of the two
      // factors (GEMM, GEMV, convolution, attention scores). A square X[i,k] * X[i,k] or a
      // batched dot product A[b,k] * B[b,k] (both factors index every kept dim) is a vector
      // mul + add.
      const size_t nloops = nest.loops.size();
      std::vector<bool> indexes_target(nloops, false);
      for (const auto& idx : u->target.index)
        for (const auto& t : idx.terms) indexes_target[static_cast<size_t>(t.loop)] = true;
      const bool has_reduction =
          std::find(indexes_target.begin(), indexes_target.end(), false) != indexes_target.end();
      std::vector<const Expr*> factors;
      product_factors(*u->value, &factors);
      std::function<int(const Expr&)> count_reads = [&](const Expr& x) -> int {
        int n = (x.kind == ExprKind::kSubscript && x.items[0]->kind == ExprKind::kName) ? 1 : 0;
        for (const auto& item : x.items) n += count_reads(*item);
        return n;
      };
      // A factor takes part in a MAC if it reads a tensor (X[..] or an expression of reads
      // such as (W[..] - Z[..])); its first read is the MAC operand, and the dims it
      // indexes are those of all its reads (reads are in source order).
      struct Factor {
        int first_read;
        std::vector<bool> loops;
      };
      std::vector<Factor> tensor_factors;
      int read_cursor = 0;
      for (const Expr* f : factors) {
        const int reads = count_reads(*f);
        if (reads > 0) {
          Factor tf{read_cursor, std::vector<bool>(nloops, false)};
          for (int r = read_cursor;
               r < read_cursor + reads && r < static_cast<int>(u->reads.size()); ++r)
            for (const auto& idx : u->reads[static_cast<size_t>(r)].index)
              for (const auto& t : idx.terms) tf.loops[static_cast<size_t>(t.loop)] = true;
          tensor_factors.push_back(std::move(tf));
        }
        read_cursor += reads;
      }
      auto contracts = [&](const Factor& a, const Factor& b) {
        for (size_t l = 0; l < nloops; ++l)
          if (indexes_target[l] && a.loops[l] != b.loops[l]) return true;
        return false;
      };
      if (has_reduction) {
        for (size_t i = 0; i < tensor_factors.size() && !u->is_mac; ++i) {
          for (size_t j = i + 1; j < tensor_factors.size(); ++j) {
            if (!contracts(tensor_factors[i], tensor_factors[j])) continue;
            u->is_mac = true;
            u->mac_operand_a = tensor_factors[i].first_read;
            u->mac_operand_b = tensor_factors[j].first_read;
            break;
          }
        }
      }
      if (u->is_mac) {
        // The product tree's (factors - 1) muls: one belongs to the MAC.
        u->flops.mul -= 1;
      } else {
        ++u->flops.add;
      }
      return;
    }
    case UpdateKind::kMul:
      ++u->flops.mul;
      return;
    case UpdateKind::kMax:
    case UpdateKind::kMin:
      ++u->flops.compare;
      return;
    case UpdateKind::kAssign:
      return;
  }
}

}  // namespace

Program count_flops(Program program) {
  for (Kernel& k : program.kernels) {
    for (Nest& nest : k.nests) {
      for (Update& u : nest.updates) {
        u.flops = FlopCounts{};
        u.is_mac = false;
        u.mac_operand_a = u.mac_operand_b = -1;
        count(*u.value, k, nest, &u.flops);
        classify_update(&u, nest);
      }
    }
  }
  return program;
}

}  // namespace solar
