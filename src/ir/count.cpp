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

// Whether a factor of a MAC whose operands `a` and `b` read nvfp4 tensors is a block scale
// the matrix unit applies itself: a plain read of an fp8_e4m3 tensor that indexes only dims
// of one operand and not all of that operand's reduction dims (one scale per block of the
// contracted dim). Blackwell's block-scaled MMA (PTX ISA, tcgen05.mma
// kind::mxf4nvf4 with scale_vec::4X: one ue4m3 scale per 16 elements of K, NVFP4) multiplies
// each block's products by the scales of both operands inside the instruction.
bool is_block_scale(const std::vector<bool>& scale_loops, const std::vector<bool>& a_loops,
                    const std::vector<bool>& b_loops, const std::vector<bool>& indexes_target) {
  for (const auto* operand : {&a_loops, &b_loops}) {
    bool inside = true, blocks = false;
    for (size_t l = 0; l < scale_loops.size(); ++l) {
      if (scale_loops[l] && !(*operand)[l]) inside = false;
      if (!indexes_target[l] && (*operand)[l] && !scale_loops[l]) blocks = true;
    }
    if (inside && blocks) return true;
  }
  return false;
}

// The MAC pattern of `u` and the FLOPs its update operator adds.
void classify_update(Update* u, const Nest& nest, const Kernel& kernel) {
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
        bool plain_read;  // the factor is one tensor read, X[..]
      };
      std::vector<Factor> tensor_factors;
      for (int f : factors) {
        std::vector<int> reads;
        loads_of(u->body, f, &reads);
        if (reads.empty()) continue;
        Factor tf{*std::min_element(reads.begin(), reads.end()), std::vector<bool>(nloops, false),
                  u->body.insts[static_cast<size_t>(f)].op == ScalarOp::kLoad};
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
      size_t mac_a = 0, mac_b = 0;
      if (has_reduction) {
        for (size_t i = 0; i < tensor_factors.size() && !u->is_mac; ++i) {
          for (size_t j = i + 1; j < tensor_factors.size(); ++j) {
            if (!contracts(tensor_factors[i], tensor_factors[j])) continue;
            u->is_mac = true;
            u->mac_operand_a = tensor_factors[i].first_read;
            u->mac_operand_b = tensor_factors[j].first_read;
            mac_a = i;
            mac_b = j;
            break;
          }
        }
      }
      if (u->is_mac) {
        // The product tree's (factors - 1) muls: one belongs to the MAC, none to a block
        // scale of nvfp4 operands (the matrix unit applies it).
        u->flops.mul -= 1;
        const auto dtype_of = [&](int read) {
          const int t = u->reads[static_cast<size_t>(read)].tensor;
          return kernel.tensors[static_cast<size_t>(t)].dtype;
        };
        if (dtype_of(u->mac_operand_a) == DType::kNvfp4 &&
            dtype_of(u->mac_operand_b) == DType::kNvfp4) {
          for (size_t i = 0; i < tensor_factors.size(); ++i) {
            const Factor& f = tensor_factors[i];
            if (i != mac_a && i != mac_b && f.plain_read &&
                dtype_of(f.first_read) == DType::kFp8E4M3 &&
                is_block_scale(f.loops, tensor_factors[mac_a].loops, tensor_factors[mac_b].loops,
                               indexes_target))
              u->flops.mul -= 1;
          }
        }
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
        classify_update(&u, nest, k);
      }
    }
  }
  return program;
}

}  // namespace solar
