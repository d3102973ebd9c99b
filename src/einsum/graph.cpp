#include "solar/einsum/graph.h"

#include <cmath>

namespace solar {

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int64_t TensorInfo::bytes() const {
  const int64_t dense = dtype_bytes(dtype, elements());
  if (sparsity <= 0.0) return dense;
  return static_cast<int64_t>(std::ceil(static_cast<double>(dense) * (1.0 - sparsity)));
}

FlopCounts& FlopCounts::operator+=(const FlopCounts& o) {
  add += o.add;
  mul += o.mul;
  div += o.div;
  transcendental += o.transcendental;
  compare += o.compare;
  other += o.other;
  return *this;
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kNone:
      return "none";
    case ReduceOp::kAdd:
      return "+";
    case ReduceOp::kMul:
      return "*";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
  }
  return "none";
}

const char* node_kind_name(NodeKind kind) {
  return kind == NodeKind::kEinsum ? "einsum" : "data_movement";
}

int64_t Graph::total_macs() const {
  int64_t n = 0;
  for (const Node& node : nodes) n += node.macs;
  return n;
}

int64_t Graph::total_flops() const {
  int64_t n = 0;
  for (const Node& node : nodes) n += node.total_flops();
  return n;
}

}  // namespace solar
