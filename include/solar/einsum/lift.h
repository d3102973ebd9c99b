// Einsum lifting: one kernel call (a kernel plus the shapes and scalar values of its
// arguments) becomes one extended einsum per loop nest, with MACs, FLOPs by kind and
// projections evaluated at the call's sizes (docs/ir.md §5). Shape-only: no loop body runs.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "solar/graph/graph.h"
#include "solar/ir/program.h"
#include "solar/ir/static_eval.h"

namespace solar {

struct KernelCall {
  const Kernel* kernel = nullptr;
  std::string name;                            // node name, e.g. "linear#3"
  Loc loc;                                     // call site
  std::vector<const TensorInfo*> tensor_args;  // by kernel parameter (null for scalars)
  std::vector<Scalar> scalar_args;             // by kernel parameter
};

// The shape-dependent facts of one call. Operand::slot is the kernel's tensor index
// (Kernel::tensors); Node::slot_tensors maps it to graph tensor ids.
struct LiftedCall {
  std::unordered_map<std::string, int64_t> dims;       // every dim bound in the kernel
  std::vector<std::vector<int64_t>> tensor_shapes;     // by kernel tensor index
  std::shared_ptr<const std::vector<Einsum>> einsums;  // one per nest
  int64_t macs = 0;
  FlopCounts flops;
  DType matrix_dtype = DType::kFp32;
};

// The environment for static expressions of `kernel` at a lifted call (sizes, shapes,
// scalar arguments); `lifted` and `scalar_args` must outlive it.
StaticEnv call_env(const Program& program, const Kernel& kernel, const LiftedCall& lifted,
                   const std::vector<Scalar>& scalar_args);

// A lower bound on the distinct elements of a tensor of `shape` that `operand` of `einsum`
// touches over its iteration space, counting only indices inside the tensor (padding guards
// skip the others). Exact when each tensor dim's index is one rank or a sum whose values form
// a contiguous range (`p*stride + r` with the window at least the stride) and the dims use
// disjoint ranks: a strided 1x1 convolution `X[n, c, 2p, 2q]` touches a quarter of X. Where
// the values have gaps and several ranks, or dims share ranks (`X[i, i]`), it counts fewer
// (one rank at a time, one dim per group of dims sharing ranks), never more, so the bytes a
// kernel is charged for reading stay a lower bound (docs/ir.md §7.4).
int64_t touched_elements(const Einsum& einsum, const Operand& operand,
                         const std::vector<int64_t>& shape);

// Binds dims from argument shapes (a mismatch is a UserError naming the call, the dim and
// both sizes), sizes the allocations, and lifts every nest.
LiftedCall lift_call(const Program& program, const KernelCall& call);

}  // namespace solar
