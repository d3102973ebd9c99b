#include "solar/graph/graph.h"

#include <cmath>

namespace solar {

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t s : shape) n = invariant_mul(n, s, "tensor elements");
  return n;
}

int64_t TensorInfo::bytes() const {
  if (role == Role::kGenerated) return 0;  // made on chip where it is read
  const int64_t dense = dtype_bytes(dtype, elements());
  if (sparsity <= 0.0) return dense;
  return static_cast<int64_t>(std::ceil(static_cast<double>(dense) * (1.0 - sparsity)));
}

const char* node_kind_name(NodeKind kind) {
  return kind == NodeKind::kEinsum ? "einsum" : "data_movement";
}

UserError total_overflow(const Graph& graph, const Node& node, const std::string& quantity) {
  return count_overflow(CountSite{graph.source, node.loc, ""},
                        quantity + " (the sum overflows at node '" + node.name + "')");
}

int64_t Graph::total_macs() const {
  int64_t n = 0;
  for (const Node& node : nodes)
    n = count_add(n, node.macs, [&] { return total_overflow(*this, node, "MACs"); });
  return n;
}

int64_t Graph::total_flops() const {
  int64_t n = 0;
  for (const Node& node : nodes)
    n = count_add(n, node.total_flops(), [&] { return total_overflow(*this, node, "FLOPs"); });
  return n;
}

}  // namespace solar
