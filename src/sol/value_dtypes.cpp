#include "solar/sol/value_dtypes.h"

#include <algorithm>
#include <array>
#include <optional>

#include "solar/graph/ops.h"

namespace solar {
namespace {

// The floating dtypes, narrowest first, that may hold the values of a wider one.
constexpr std::array<DType, 7> kNarrowFirst = {DType::kFp8E4M3, DType::kFp8E5M2, DType::kFp16,
                                               DType::kBf16,    DType::kTf32,    DType::kFp32,
                                               DType::kFp64};

// Whether every value of `values` is a value of `holder` (formats: OCP FP8, IEEE binary16,
// bfloat16, TF32 with 8 exponent and 10 mantissa bits, binary32, binary64). e4m3fn (4
// exponent bits, 3 mantissa bits, smallest subnormal 2^-9, largest 448) and e5m2 (5 and 2,
// 2^-16 and 57344) fit fp16 (5 and 10, 2^-24, 65504) and bf16 (8 and 7); fp16 and bf16 fit
// TF32, which fits fp32, which fits fp64. Integers and fp4 codes (scaled blocks) hold only
// themselves.
bool holds(DType holder, DType values) {
  if (holder == values) return true;
  const auto rank = [](DType d) -> int {
    switch (d) {
      case DType::kFp8E4M3:
      case DType::kFp8E5M2:
        return 0;
      case DType::kFp16:
      case DType::kBf16:
        return 1;
      case DType::kTf32:
        return 2;
      case DType::kFp32:
        return 3;
      case DType::kFp64:
        return 4;
      default:
        return -1;
    }
  };
  const int h = rank(holder), v = rank(values);
  if (h < 0 || v < 0) return false;
  if (h == v) return false;  // e4m3 and e5m2, fp16 and bf16: neither holds the other
  return h > v;
}

// The narrowest dtype that holds the values of both (`a` itself when nothing narrower does).
DType join(DType a, DType b) {
  if (holds(a, b)) return a;
  if (holds(b, a)) return b;
  for (DType d : kNarrowFirst)
    if (holds(d, a) && holds(d, b)) return d;
  return a;
}

// Builtins whose outputs are elements of their inputs unchanged (not pad's or apply_mask's
// fill values, which may not fit a narrow format, nor a cast's).
bool passes_values(Builtin op) {
  const BuiltinInfo& info = builtin_info(op);
  return info.moves && !info.converts && op != Builtin::kPad;
}

// A kernel that only moves elements (a copy, a layout change): every nest assigns (no
// reduction), reads a tensor, and does no arithmetic at all (an in-kernel cast counts as an
// `other` FLOP; a constant written has no operand).
bool kernel_moves_values(const Node& node) {
  if (node.kind != NodeKind::kEinsum || !node.einsums || node.macs != 0 || node.flops.total() != 0)
    return false;
  return std::all_of(node.einsums->begin(), node.einsums->end(), [](const Einsum& e) {
    return e.reduce == ReduceOp::kNone && !e.inputs.empty() && e.flops.total() == 0;
  });
}

}  // namespace

bool moves_values(const Node& node) {
  return node.kind == NodeKind::kDataMovement ? passes_values(node.builtin)
                                              : kernel_moves_values(node);
}

ValueDtypes::ValueDtypes(const Graph& graph) : graph_(graph), values_(graph.tensors.size()) {
  for (size_t t = 0; t < graph.tensors.size(); ++t) values_[t] = graph.tensors[t].dtype;
}

void ValueDtypes::add(const Node& node) {
  const Graph& graph = graph_;
  std::vector<DType>& values = values_;
  if (node.inputs.empty()) return;
  if (node.kind == NodeKind::kDataMovement && node.builtin == Builtin::kCast) {
    const TensorId in = node.inputs.front();
    const TensorId out = node.outputs.front();
    const DType v = values[static_cast<size_t>(in)];
    if (holds(graph.tensors[static_cast<size_t>(out)].dtype, v))
      values[static_cast<size_t>(out)] = v;
    return;
  }
  if (!moves_values(node)) return;
  for (const TensorId out : node.outputs) {
    const DType own = graph.tensors[static_cast<size_t>(out)].dtype;
    if (!dtype_is_float(own)) continue;
    // The inputs whose elements it moves have its dtype (an index tensor has not).
    std::optional<DType> v;
    for (const TensorId in : node.inputs) {
      if (graph.tensors[static_cast<size_t>(in)].dtype != own) continue;
      const DType w = values[static_cast<size_t>(in)];
      v = v ? join(*v, w) : w;
    }
    if (v && holds(own, *v)) values[static_cast<size_t>(out)] = *v;
  }
}

std::vector<DType> value_dtypes(const Graph& graph) {
  ValueDtypes values(graph);
  for (const Node& node : graph.nodes) values.add(node);
  return std::move(values).take();
}

std::vector<DType> mac_operand_values(const Node& node, const std::vector<DType>& values) {
  if (node.macs <= 0 || !holds(DType::kFp32, node.matrix_dtype)) return {};
  // The operands of the largest-MAC nest (every input of a node without its einsums: at
  // least those).
  TensorIds operands;
  const Einsum* largest = nullptr;
  if (node.einsums)
    for (const Einsum& e : *node.einsums)
      if (e.macs > 0 && (!largest || e.macs > largest->macs)) largest = &e;
  if (largest) {
    for (const Operand& op : largest->inputs) {
      const TensorId t = node.operand_tensor(op);
      if (t < 0) return {};  // computed inside the kernel: the kernel's dtype
      operands.push_back(t);
    }
  } else {
    operands = node.inputs;
  }
  std::vector<DType> out;
  for (const TensorId t : operands) {
    const DType v = values[static_cast<size_t>(t)];
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

std::vector<DType> mac_dtype_candidates(const Node& node, const std::vector<DType>& values) {
  std::vector<DType> out = {node.matrix_dtype};
  const std::vector<DType> operands = mac_operand_values(node, values);
  if (operands.empty()) return out;
  for (DType d : kNarrowFirst) {
    if (d == node.matrix_dtype || !holds(node.matrix_dtype, d)) continue;
    if (std::all_of(operands.begin(), operands.end(), [&](DType v) { return holds(d, v); }))
      out.push_back(d);
  }
  return out;
}

}  // namespace solar
