// Pass count_flops (ir/passes.h): the FLOPs of one point of every update, by kind (a visitor
// over its typed scalar IR, ir/kernel_ir.h), and its MAC pattern (docs/ir.md §7.2-7.3).
#include <algorithm>

#include "scalar_functions.h"
#include "solar/ir/passes.h"

namespace solar {
namespace {

// The FLOPs of one point of `body` (docs/ir.md §7.3), by kind: a visit of its instructions.
// A static value (the same at every point) is computed once per call and counts nothing; a
// load, a loop index, a select, a negation and the logical operators count nothing.
FlopCounts count(const ScalarBody& body) {
  FlopCounts f;
  for (const ScalarInst& inst : body.insts) {
    switch (inst.op) {
      case ScalarOp::kAdd:
      case ScalarOp::kSub:
        ++f.add;
        break;
      case ScalarOp::kMul:
        ++f.mul;
        break;
      case ScalarOp::kDiv:
      case ScalarOp::kFloorDiv:
      case ScalarOp::kMod:
        ++f.div;
        break;
      case ScalarOp::kPow:
        ++f.transcendental;
        break;
      case ScalarOp::kCompare:
        ++f.compare;
        break;
      case ScalarOp::kCast:
        ++f.other;
        break;
      case ScalarOp::kCall:
        switch (detail::scalar_functions().at(inst.fn)) {
          case detail::FnClass::kCompare:  // max/min of n values: n - 1 comparisons
            f.compare += static_cast<int64_t>(inst.args.size()) - 1;
            break;
          case detail::FnClass::kTranscendental:
            ++f.transcendental;
            break;
          default:  // abs floor ceil round
            ++f.other;
            break;
        }
        break;
      case ScalarOp::kStatic:
      case ScalarOp::kLoopVar:
      case ScalarOp::kLoad:
      case ScalarOp::kNeg:
      case ScalarOp::kNot:
      case ScalarOp::kAnd:
      case ScalarOp::kOr:
      case ScalarOp::kSelect:
        break;
    }
  }
  return f;
}

// The factors of the product tree rooted at instruction `i` (indices into body.insts).
void product_factors(const ScalarBody& body, int i, std::vector<int>* out) {
  const ScalarInst& inst = body.insts[static_cast<size_t>(i)];
  if (inst.op == ScalarOp::kMul) {
    product_factors(body, inst.args[0], out);
    product_factors(body, inst.args[1], out);
    return;
  }
  out->push_back(i);
}

// The reads (indices into Update::reads) the value of instruction `i` loads.
void loads_of(const ScalarBody& body, int i, std::vector<int>* out) {
  const ScalarInst& inst = body.insts[static_cast<size_t>(i)];
  if (inst.op == ScalarOp::kLoad && std::find(out->begin(), out->end(), inst.read) == out->end())
    out->push_back(inst.read);
  for (int a : inst.args) loads_of(body, a, out);
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
      std::vector<int> factors;
      product_factors(u->body, u->body.result, &factors);
      // A factor takes part in a MAC if it reads a tensor (X[..] or an expression of reads
      // such as (W[..] - Z[..])); its first read (in source order) is the MAC operand, and
      // the dims it indexes are those of all its reads.
      struct Factor {
        int first_read;
        std::vector<bool> loops;
      };
      std::vector<Factor> tensor_factors;
      for (int f : factors) {
        std::vector<int> reads;
        loads_of(u->body, f, &reads);
        if (reads.empty()) continue;
        Factor tf{*std::min_element(reads.begin(), reads.end()), std::vector<bool>(nloops, false)};
        for (int r : reads)
          for (const auto& idx : u->reads[static_cast<size_t>(r)].index)
            for (const auto& t : idx.terms) tf.loops[static_cast<size_t>(t.loop)] = true;
        tensor_factors.push_back(std::move(tf));
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
        u.flops = count(u.body);
        u.is_mac = false;
        u.mac_operand_a = u.mac_operand_b = -1;
        classify_update(&u, nest);
      }
    }
  }
  return program;
}

}  // namespace solar
