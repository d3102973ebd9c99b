// Which values each tensor holds, and the narrowest math a node's MACs can run in.
//
// A contraction whose operands are casts of narrower values (PyTorch's
// `a.float() @ b.float().T` on bf16 a and b, the usual reference of a mixed-precision
// problem) multiplies values a bf16 tensor-core MMA takes exactly: every product of two bf16
// values is exact in fp32, and the MMA accumulates in fp32 as the reference does. Pricing
// those MACs at the fp32 rate would put the bound above a correct bf16-MMA kernel.
#pragma once

#include <utility>
#include <vector>

#include "solar/base/dtype.h"
#include "solar/graph/graph.h"

namespace solar {

// Whether `node` only moves elements of its inputs, unchanged (views, concatenations, gathers
// and layout copies; a kernel whose nests assign inputs with no arithmetic); not a cast, a
// pad's fill or a conversion.
bool moves_values(const Node& node);

// Per tensor (by TensorId), the narrowest floating dtype that holds every value it can take
// exactly: its own dtype, except where only casts up and data movement (views, gathers,
// concatenations: elements unchanged) separate it from a narrower tensor. Computed in node
// order, one pass.
std::vector<DType> value_dtypes(const Graph& graph);

// value_dtypes one node at a time, for a pass that shares its walk over the nodes with
// others (a graph larger than the last-level cache is then fetched once, not once per pass):
// add every node in execution order, then take the values.
class ValueDtypes {
 public:
  explicit ValueDtypes(const Graph& graph);
  void add(const Node& node);
  std::vector<DType> take() && { return std::move(values_); }

 private:
  const Graph& graph_;
  std::vector<DType> values_;
};

// The dtypes a node's MACs can run in with the same products and an fp32 (or narrower)
// accumulation as the node states: its own matrix dtype first, then every narrower floating
// dtype (fp8, fp16, bf16, tf32) that holds the values of all the operands of its largest-MAC
// nest exactly. Only a node whose matrix dtype is fp32 or narrower gains candidates (an fp64
// contraction accumulates in fp64); an operand computed inside the kernel holds the kernel's
// dtype. The caller picks the fastest rate among them that its platform has.
// The distinct value dtypes (value_dtypes) of the operands of a node's largest-MAC nest, in
// operand order; empty when it has no MACs, its matrix dtype is wider than fp32, or an
// operand is computed inside the kernel.
std::vector<DType> mac_operand_values(const Node& node, const std::vector<DType>& values);

std::vector<DType> mac_dtype_candidates(const Node& node, const std::vector<DType>& values);

}  // namespace solar
