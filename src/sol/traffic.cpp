#include "solar/sol/traffic.h"

#include <algorithm>
#include <cmath>

namespace solar {

int64_t view_read_bytes(const Graph& graph, TensorId t) {
  const TensorInfo& info = graph.tensors[static_cast<size_t>(t)];
  return std::min(info.bytes(), graph.tensors[static_cast<size_t>(info.storage)].bytes());
}

namespace {

// Bytes of `tensor` that `n` touches through kernel tensor `slot`.
int64_t touched_bytes(const Node& n, int slot, const TensorInfo& tensor) {
  int64_t elements = 0;
  bool accessed = false;
  if (!n.einsums || tensor.role == Role::kGenerated) return tensor.bytes();
  for (const Einsum& e : *n.einsums) {
    for (const Operand& op : e.inputs) {
      if (op.slot != slot) continue;
      accessed = true;
      elements = std::max(elements, op.touched >= 0 ? op.touched : tensor.elements());
    }
  }
  if (!accessed || elements >= tensor.elements()) return tensor.bytes();
  const int64_t dense = dtype_bytes(tensor.dtype, elements);
  if (tensor.sparsity <= 0.0) return dense;
  return static_cast<int64_t>(std::ceil(static_cast<double>(dense) * (1.0 - tensor.sparsity)));
}

}  // namespace

int64_t kernel_read_bytes(const Graph& graph, const Node& node, int slot, TensorId t) {
  return std::min(view_read_bytes(graph, t),
                  touched_bytes(node, slot, graph.tensors[static_cast<size_t>(t)]));
}

}  // namespace solar
